#!/usr/bin/env bash
# Requests/s and latency of MCP-style JSON-RPC POSTs, direct to an upstream, through
# `mcp-chaos http` (no rules) and through nginx as a reverse proxy (upstream keep-alive), side by
# side in one run; mcp-chaos also as the CLI runs by default (control endpoint on, so metrics
# count and time every request and response, which are framed and sniffed). The upstream is nginx answering every POST /mcp with a fixed JSON-RPC result,
# so the proxies, not the upstream, are what is measured. HAProxy (Debian's haproxy, installed with
# apt-get when missing and running as root) is a second anchor beside nginx, its upstream kept
# alive too (bench/lib/haproxy.sh); its rows are left out when it cannot be had. Every proxy gets
# THREADS threads (default: the cores): event loops for mcp-chaos, worker_processes for nginx,
# nbthread for haproxy. Besides wrk's
# figures, the CPU time each proxy used per request is printed (from /proc), which the load of
# other processes on the machine changes less than the rates. A second round sends
# "Connection: close" (a new client connection per request), as clients without keep-alive do.
# The load generator is wrk (Debian package). Everything on 127.0.0.1; each case runs DURATION
# after WARMUP (mcp-chaos: its JIT compiler is still at work for the first seconds).
# Needs: nginx, wrk (apt-get install nginx-light wrk), a JDK and Maven; haproxy for its rows.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib/nginx.sh
. "$root/bench/lib/nginx.sh"
# shellcheck source=bench/lib/wrk.sh
. "$root/bench/lib/wrk.sh"
# shellcheck source=bench/lib/haproxy.sh
. "$root/bench/lib/haproxy.sh"
jar="$root/mcp-chaos-cli/target/mcp-chaos.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl mcp-chaos-cli -am)
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 1; }
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "nginx is needed: apt-get install nginx-light" >&2; exit 1; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-10s}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-$(nproc)}
# Below the ephemeral range (32768+): a client socket of an earlier run that took one of these
# ports as its own stays in TIME_WAIT for a minute, and nginx could not listen on it.
UPSTREAM_PORT=${UPSTREAM_PORT:-19180}
PROXY_PORT=${PROXY_PORT:-19181}
NGINX_PROXY_PORT=${NGINX_PROXY_PORT:-19182}
METRICS_PROXY_PORT=${METRICS_PROXY_PORT:-19183}
CONTROL_PORT=${CONTROL_PORT:-19184}
SIDECAR_PROXY_PORT=${SIDECAR_PROXY_PORT:-19185}
SIDECAR_CONTROL_PORT=${SIDECAR_CONTROL_PORT:-19186}
# The JVM of the sidecar in deploy/kubernetes: its 256Mi memory limit is below the 1792 MB of a
# "server-class machine", so the JVM picks the Serial collector, the image's
# -XX:MaxRAMPercentage=75 gives a 192 MiB heap, and the manifest's JAVA_TOOL_OPTIONS=-Xmn64m its
# young generation. G1, which the other rows get here (24 GiB, 2 cores), costs more per request:
# its write barriers and concurrent work.
SIDECAR_JVM_OPTS=${SIDECAR_JVM_OPTS:--XX:+UseSerialGC -XX:MaxRAM=256m -XX:MaxRAMPercentage=75 -Xmn64m}
# The same sidecar on epoll (--io epoll): what a container whose seccomp profile refuses io_uring
# runs. The other rows run the default, io_uring where this machine allows it, else epoll (#36).
# Each row's transport is printed with it, and why io_uring was passed over where it was.
SIDECAR_EPOLL_PROXY_PORT=${SIDECAR_EPOLL_PROXY_PORT:-19187}
SIDECAR_EPOLL_CONTROL_PORT=${SIDECAR_EPOLL_CONTROL_PORT:-19188}
HAPROXY_PORT=${HAPROXY_PORT:-19189}

work="$(mktemp -d)"
cleanup() {
  [ -n "${proxy_pid:-}" ] && kill "$proxy_pid" 2>/dev/null || true
  [ -n "${metrics_proxy_pid:-}" ] && kill "$metrics_proxy_pid" 2>/dev/null || true
  [ -n "${sidecar_proxy_pid:-}" ] && kill "$sidecar_proxy_pid" 2>/dev/null || true
  [ -n "${sidecar_epoll_proxy_pid:-}" ] && kill "$sidecar_epoll_proxy_pid" 2>/dev/null || true
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  [ -f "$work/nginx-proxy.pid" ] && kill "$(cat "$work/nginx-proxy.pid")" 2>/dev/null || true
  [ -f "$work/haproxy.pid" ] && kill "$(cat "$work/haproxy.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

body='{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"pong"}],"isError":false}}'
nginx_upstream_conf "$work" "$work/nginx.pid" "$UPSTREAM_PORT" "$body" > "$work/nginx.conf"
nginx_proxy_conf "$THREADS" "$work" "$NGINX_PROXY_PORT" "$UPSTREAM_PORT" > "$work/nginx-proxy.conf"
"$NGINX" -c "$work/nginx.conf"
"$NGINX" -c "$work/nginx-proxy.conf"
HAPROXY=$(haproxy_bin)
if [ -n "$HAPROXY" ]; then
  haproxy_conf "$THREADS" "$work" "$HAPROXY_PORT" "$UPSTREAM_PORT" > "$work/haproxy.cfg"
  "$HAPROXY" -f "$work/haproxy.cfg" -D
else
  echo "haproxy: not installed and could not be installed; its rows are left out"
fi

java ${MCP_CHAOS_JAVA_OPTS:-} -Dio.netty.eventLoopThreads="$THREADS" -jar "$jar" http --control off \
  --listen 127.0.0.1:$PROXY_PORT \
  --upstream http://127.0.0.1:$UPSTREAM_PORT/mcp 2> "$work/proxy.log" &
proxy_pid=$!
java ${MCP_CHAOS_JAVA_OPTS:-} -Dio.netty.eventLoopThreads="$THREADS" -jar "$jar" http --control 127.0.0.1:$CONTROL_PORT \
  --listen 127.0.0.1:$METRICS_PROXY_PORT \
  --upstream http://127.0.0.1:$UPSTREAM_PORT/mcp 2> "$work/metrics-proxy.log" &
metrics_proxy_pid=$!
# shellcheck disable=SC2086
java ${MCP_CHAOS_JAVA_OPTS:-} $SIDECAR_JVM_OPTS -Dio.netty.eventLoopThreads="$THREADS" -jar "$jar" http \
  --control 127.0.0.1:$SIDECAR_CONTROL_PORT --listen 127.0.0.1:$SIDECAR_PROXY_PORT \
  --upstream http://127.0.0.1:$UPSTREAM_PORT/mcp 2> "$work/sidecar-proxy.log" &
sidecar_proxy_pid=$!
# shellcheck disable=SC2086
java ${MCP_CHAOS_JAVA_OPTS:-} $SIDECAR_JVM_OPTS -Dio.netty.eventLoopThreads="$THREADS" -jar "$jar" http --io epoll \
  --control 127.0.0.1:$SIDECAR_EPOLL_CONTROL_PORT --listen 127.0.0.1:$SIDECAR_EPOLL_PROXY_PORT \
  --upstream http://127.0.0.1:$UPSTREAM_PORT/mcp 2> "$work/sidecar-epoll-proxy.log" &
sidecar_epoll_proxy_pid=$!
for log in proxy metrics-proxy sidecar-proxy sidecar-epoll-proxy; do
  for _ in $(seq 1 100); do
    grep -q "listening on" "$work/$log.log" 2>/dev/null && break
    sleep 0.1
  done
done
# Not Linux (no epoll): that row is left out, and the reason printed.
if ! grep -q "listening on" "$work/sidecar-epoll-proxy.log"; then
  echo "sidecar-epoll: not measured: $(grep -m1 -o 'io transport epoll is not available[^;]*' "$work/sidecar-epoll-proxy.log" || tail -n 1 "$work/sidecar-epoll-proxy.log")"
  sidecar_epoll_proxy_pid=""
fi

write_tools_call_lua "$work/post.lua"
sed 's/^wrk.body/wrk.headers["Connection"] = "close"\nwrk.body/' "$work/post.lua" > "$work/post-close.lua"

cpu_ticks() { # total user+system clock ticks of the given processes
  local t=0 p
  for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat"))); done
  echo "$t"
}

run() { # $1 label, $2 url, $3... pids whose CPU time is counted; SCRIPT: the wrk script
  local label=$1 url=$2 out t0 t1
  shift 2
  t0=$(cpu_ticks "$@")
  out=$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s "${SCRIPT:-$work/post.lua}" "$url")
  t1=$(cpu_ticks "$@")
  local rps p50 p99 reqs cpu=""
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  p50=$(echo "$out" | awk '$1=="50%" {print $2}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  [ $# -gt 0 ] && cpu=$(python3 -c "print(f'{($t1 - $t0) / $(getconf CLK_TCK) * 1e6 / $reqs:.1f} us CPU/request')")
  printf '%-18s %12s req/s   p50 %8s   p99 %8s   %s   load %s\n' "$label" "$rps" "$p50" "$p99" "$cpu" \
    "$(cut -d' ' -f1 /proc/loadavg)"
  echo "$rps" > "$work/$label.rps"
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $CONNECTIONS connections," \
  "$DURATION per case, wrk -t2; $THREADS threads per proxy"
for log in proxy metrics-proxy sidecar-proxy sidecar-epoll-proxy; do
  echo "$log: transport $(sed -n 's/.*(transport \(.*\)), relaying to .*/\1/p' "$work/$log.log" | head -n 1)"
done
nginx_workers=$(pgrep -P "$(cat "$work/nginx-proxy.pid")" | tr '\n' ' ')
run warmup "http://127.0.0.1:$PROXY_PORT/mcp" > /dev/null
wrk -t2 -c"$CONNECTIONS" -d"$WARMUP" -s "$work/post.lua" "http://127.0.0.1:$PROXY_PORT/mcp" > /dev/null
run direct "http://127.0.0.1:$UPSTREAM_PORT/mcp"
run mcp-chaos "http://127.0.0.1:$PROXY_PORT/mcp" "$proxy_pid"
# Warmed as the proxy without metrics was (a full run, then WARMUP): with less, its row carries
# the JIT compiler's work, which is most of the difference on a loaded machine (docs/benchmarks.md).
run warmup-metrics "http://127.0.0.1:$METRICS_PROXY_PORT/mcp" > /dev/null
wrk -t2 -c"$CONNECTIONS" -d"$WARMUP" -s "$work/post.lua" "http://127.0.0.1:$METRICS_PROXY_PORT/mcp" > /dev/null
run mcp-chaos+metrics "http://127.0.0.1:$METRICS_PROXY_PORT/mcp" "$metrics_proxy_pid"
run warmup-sidecar "http://127.0.0.1:$SIDECAR_PROXY_PORT/mcp" > /dev/null
wrk -t2 -c"$CONNECTIONS" -d"$WARMUP" -s "$work/post.lua" "http://127.0.0.1:$SIDECAR_PROXY_PORT/mcp" > /dev/null
run sidecar-jvm "http://127.0.0.1:$SIDECAR_PROXY_PORT/mcp" "$sidecar_proxy_pid"
if [ -n "$sidecar_epoll_proxy_pid" ]; then
  run warmup-sidecar-epoll "http://127.0.0.1:$SIDECAR_EPOLL_PROXY_PORT/mcp" > /dev/null
  wrk -t2 -c"$CONNECTIONS" -d"$WARMUP" -s "$work/post.lua" "http://127.0.0.1:$SIDECAR_EPOLL_PROXY_PORT/mcp" > /dev/null
  run sidecar-epoll "http://127.0.0.1:$SIDECAR_EPOLL_PROXY_PORT/mcp" "$sidecar_epoll_proxy_pid"
fi
# shellcheck disable=SC2086
run nginx-proxy "http://127.0.0.1:$NGINX_PROXY_PORT/mcp" $nginx_workers
# One process with nbthread threads: its own CPU time is all of haproxy's.
[ -n "$HAPROXY" ] && run haproxy "http://127.0.0.1:$HAPROXY_PORT/mcp" "$(cat "$work/haproxy.pid")"
python3 - "$work" <<'PY'
import sys
rps = lambda label: float(open(f"{sys.argv[1]}/{label}.rps").read())
d, p, m, n = rps("direct"), rps("mcp-chaos"), rps("mcp-chaos+metrics"), rps("nginx-proxy")
import os
s = rps("sidecar-jvm")
u = f"   sidecar-epoll/nginx-proxy: {rps('sidecar-epoll') / n:.2f}" if os.path.exists(f"{sys.argv[1]}/sidecar-epoll.rps") else ""
u += f"   haproxy/nginx-proxy: {rps('haproxy') / n:.2f}" if os.path.exists(f"{sys.argv[1]}/haproxy.rps") else ""
print(f"ratio mcp-chaos/direct: {p / d:.2f}   nginx-proxy/direct: {n / d:.2f}   mcp-chaos/nginx-proxy: {p / n:.2f}"
      f"   mcp-chaos+metrics/nginx-proxy: {m / n:.2f}   sidecar-jvm/nginx-proxy: {s / n:.2f}{u}")
PY
echo "with Connection: close (a new client connection per request):"
# Warmed on its own path first: accepting, setting up and closing a connection is code the
# keep-alive rounds hardly ran, and cold it took 272 us per request against 101 us warm (12-03).
wrk -t2 -c"$CONNECTIONS" -d"$WARMUP" -s "$work/post-close.lua" "http://127.0.0.1:$PROXY_PORT/mcp" > /dev/null
SCRIPT="$work/post-close.lua" run mcp-chaos-close "http://127.0.0.1:$PROXY_PORT/mcp" "$proxy_pid"
# shellcheck disable=SC2086
SCRIPT="$work/post-close.lua" run nginx-close "http://127.0.0.1:$NGINX_PROXY_PORT/mcp" $nginx_workers
if [ -n "$HAPROXY" ]; then
  SCRIPT="$work/post-close.lua" run haproxy-close "http://127.0.0.1:$HAPROXY_PORT/mcp" "$(cat "$work/haproxy.pid")"
fi
