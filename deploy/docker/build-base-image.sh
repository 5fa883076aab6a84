#!/usr/bin/env bash
# Builds a small local Java 17 base image for the mcp-chaos image, for machines that can pull no
# image from any registry: a jlink runtime of the local JDK, the shared libraries it needs, a
# non-root user, then `docker import`. No shell unless --with-busybox.
#
#   deploy/docker/build-base-image.sh [--tag NAME:TAG] [--with-busybox]
#
# Default tag: mcp-chaos-base:17-jlink. Needs: a JDK 17 with jlink, docker, ldd, tar.
set -euo pipefail

tag="mcp-chaos-base:17-jlink"
busybox=no
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="${2:?--tag needs NAME:TAG}"; shift 2 ;;
    --with-busybox) busybox=yes; shift ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-base-image.sh: unknown argument '$1' (expected: --tag NAME:TAG or --with-busybox)" >&2; exit 2 ;;
  esac
done

command -v jlink >/dev/null || { echo "build-base-image.sh: jlink not found (expected: a JDK 17 on PATH)" >&2; exit 1; }
release="$(jlink --version)"
case "$release" in
  17*) ;;
  *) echo "build-base-image.sh: jlink is version $release (expected: 17, the proxy's Java release)" >&2; exit 1 ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
mkdir -p "$root"

# The modules the proxy uses: jdeps --print-module-deps of mcp-chaos.jar, less what only unused
# optional code paths name (java.desktop: java.beans for Jackson, jdk.sctp and jdk.jfr for Netty),
# plus jdk.crypto.ec for https upstreams and jdk.management for the JVM metrics.
modules=java.base,java.logging,java.management,java.naming,java.net.http,java.sql,java.xml,jdk.crypto.ec,jdk.httpserver,jdk.management,jdk.unsupported
jlink --add-modules "$modules" --strip-debug --no-man-pages --no-header-files --compress=2 \
  --output "$root/opt/java"

# Debian's usr-merged layout: /lib, /lib64 and /bin are links into /usr.
mkdir -p "$root/usr/lib" "$root/usr/bin" "$root/etc" "$root/tmp" "$root/home/mcp-chaos"
ln -s usr/lib "$root/lib"
ln -s usr/bin "$root/bin"
[ -d /usr/lib64 ] && { mkdir -p "$root/usr/lib64"; ln -s usr/lib64 "$root/lib64"; }
copy_lib() {
  local lib="$1"
  local real
  real="$(readlink -f "$lib")"
  mkdir -p "$root$(dirname "$lib")" "$root$(dirname "$real")"
  cp -n "$real" "$root$real"
  # A path through a link (/lib64/ld-linux...) that the usr-merged tree does not already resolve.
  [ -e "$root$lib" ] || ln -s "$real" "$root$lib"
}
# Every library any binary or shared object of the runtime names, and the loader.
find "$root/opt/java" -type f \( -name '*.so' -o -path '*/bin/*' -o -name jspawnhelper \) -print0 \
  | xargs -0 ldd 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// && $1 !~ /:$/ {print $1}' \
  | grep -v "^$root/" | sort -u \
  | while read -r lib; do copy_lib "$lib"; done
# glibc loads these by name at run time (DNS, users), not through ldd.
for lib in /usr/lib/*-linux-gnu/libnss_files.so.2 /usr/lib/*-linux-gnu/libnss_dns.so.2 /usr/lib/*-linux-gnu/libresolv.so.2; do
  [ -e "$lib" ] && copy_lib "$lib"
done

if [ "$busybox" = yes ]; then
  command -v busybox >/dev/null || { echo "build-base-image.sh: --with-busybox needs busybox-static (apt-get install busybox-static)" >&2; exit 1; }
  cp "$(readlink -f "$(command -v busybox)")" "$root/usr/bin/busybox"
  ln -s busybox "$root/usr/bin/sh"
fi

ln -s ../opt/java/bin/java "$root/usr/bin/java"
cat > "$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/sbin/nologin
mcp-chaos:x:10001:10001:mcp-chaos:/home/mcp-chaos:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
PASSWD
cat > "$root/etc/group" <<'GROUP'
root:x:0:
mcp-chaos:x:10001:
nogroup:x:65534:
GROUP
printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
# The CA certificates the JDK trusts, for https upstreams.
cacerts="$(readlink -f "$(dirname "$(readlink -f "$(command -v java)")")/../lib/security/cacerts")"
[ -f "$cacerts" ] && cp -L "$cacerts" "$root/opt/java/lib/security/cacerts"
chmod 1777 "$root/tmp"
chown -R 10001:10001 "$root/home/mcp-chaos"

tar --numeric-owner -C "$root" -cf "$work/rootfs.tar" .
docker import \
  -c 'ENV JAVA_HOME=/opt/java' \
  -c 'ENV PATH=/opt/java/bin:/usr/bin' \
  -c 'ENV LANG=C.UTF-8' \
  -c 'CMD ["java", "-version"]' \
  "$work/rootfs.tar" "$tag" >/dev/null
echo "built $tag ($(docker image inspect --format '{{.Size}}' "$tag" | awk '{printf "%.1f MB", $1/1e6}'))"
