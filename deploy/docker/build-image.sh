#!/usr/bin/env bash
# Builds the mcp-chaos image from this checkout, tagged mcp-chaos:<version of the pom> and
# mcp-chaos:latest.
#
#   deploy/docker/build-image.sh [--base IMAGE] [--no-package] [--tag NAME:TAG]
#
# --base IMAGE (or MCP_CHAOS_BASE_IMAGE): the Java 17 image to build on. Default:
#   eclipse-temurin:17-jre, which needs a registry. Without one, build a local base first with
#   deploy/docker/build-base-image.sh and pass --base mcp-chaos-base:17-jlink.
# --no-package: use mcp-chaos-cli/target/mcp-chaos.jar as it is (CI packages it just before);
#   by default the jar is built with Maven when it is missing.
# --tag NAME:TAG: tag the image NAME:TAG only (not <version> and latest), to try a change
#   without replacing the image others use.
set -euo pipefail

root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
base="${MCP_CHAOS_BASE_IMAGE:-eclipse-temurin:17-jre}"
package=yes
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base="${2:?--base needs an image}"; shift 2 ;;
    --no-package) package=no; shift ;;
    --tag) tag="${2:?--tag needs a name such as mcp-chaos:mine}"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-image.sh: unknown argument '$1' (expected: --base IMAGE, --no-package or --tag NAME:TAG)" >&2; exit 2 ;;
  esac
done

# The project's version, read from the top pom without running Maven (the first <version> after
# the parent's artifactId).
version="$(sed -n '/<artifactId>mcp-chaos-parent<\/artifactId>/,/<\/version>/s:.*<version>\(.*\)</version>.*:\1:p' "$root/pom.xml" | head -n 1)"
[ -n "$version" ] || { echo "build-image.sh: no version found in $root/pom.xml" >&2; exit 1; }

jar="$root/mcp-chaos-cli/target/mcp-chaos.jar"
if [ ! -f "$jar" ]; then
  if [ "$package" = no ]; then
    echo "build-image.sh: $jar is missing (run mvn -DskipTests package, or drop --no-package)" >&2
    exit 1
  fi
  # -DskipTests, not -Dmaven.test.skip: the modules share proxy-core's and proxy-server's test-jars, which must exist.
  (cd "$root" && mvn -B -q -DskipTests package -pl mcp-chaos-cli -am)
fi

context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
cp "$root/deploy/docker/Dockerfile" "$jar" "$context/"
# The entry point (environment variables to options, the health check) against the jar's CLI.
mkdir "$context/classes"
javac --release 17 -nowarn -cp "$jar" -d "$context/classes" \
  "$root/deploy/docker/src/dev/mcpchaos/docker/Entrypoint.java"
jar --create --file "$context/entrypoint.jar" -C "$context/classes" .
rm -rf "$context/classes"

# The legacy builder: BuildKit's client (buildx) is not on every machine, and this Dockerfile
# needs nothing of BuildKit's.
if [ -n "${tag:-}" ]; then
  tags=(-t "$tag"); names="$tag"; first="$tag"
else
  tags=(-t "mcp-chaos:$version" -t "mcp-chaos:latest"); names="mcp-chaos:$version and mcp-chaos:latest"
  first="mcp-chaos:$version"
fi
DOCKER_BUILDKIT=0 docker build --quiet \
  --build-arg "BASE_IMAGE=$base" --build-arg "VERSION=$version" \
  "${tags[@]}" "$context" >/dev/null
echo "built $names on $base ($(docker image inspect --format '{{.Size}}' "$first" | awk '{printf "%.1f MB", $1/1e6}'))"
