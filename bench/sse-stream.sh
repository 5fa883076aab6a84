#!/usr/bin/env bash
# SSE streaming throughput: one GET whose text/event-stream response carries many
# `event: message` / `data: <JSON-RPC notification>` events, read by curl as fast as it can,
# directly from the upstream and through `mcp-chaos http` (no rules), with nginx as a reverse
# proxy (proxy_buffering off) beside them for reference. The upstream is
# dev.mcpchaos.bench.sse.SseUpstream (benchmarks module), which writes the events as fast as the
# connection takes them. Two sizes: SMALL_EVENTS events of about 120 B (default 5,000,000) and
# LARGE_EVENTS of 64 KiB (default 20,000); RUNS runs of each (default 5), the median is printed.
# mcp-chaos runs twice: with --control off (no metrics: with no rules, events are relayed without
# being framed) and as the CLI runs by default (control endpoint and metrics on: every event is
# framed, sniffed and counted).
# Needs curl and nginx (apt-get install nginx-light). 127.0.0.1 only; every run is capped at 120 s.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/mcp-chaos-cli/target/mcp-chaos.jar"
bench_jar="$root/benchmarks/target/benchmarks.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl mcp-chaos-cli -am)
[ -f "$bench_jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl benchmarks -am)
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
SMALL_EVENTS=${SMALL_EVENTS:-5000000}
LARGE_EVENTS=${LARGE_EVENTS:-20000}
RUNS=${RUNS:-5}
THREADS=${THREADS:-$(nproc)}
BASE_PORT=${BASE_PORT:-19480}  # below the ephemeral range (32768+), which client sockets take
UPSTREAM_PORT=$BASE_PORT; PROXY_PORT=$((BASE_PORT + 1)); NGINX_PROXY_PORT=$((BASE_PORT + 2))
METRICS_PROXY_PORT=$((BASE_PORT + 3)); CONTROL_PORT=$((BASE_PORT + 4))
work="$(mktemp -d)"
cleanup() {
  for p in ${upstream_pid:-} ${proxy_pid:-} ${metrics_proxy_pid:-}; do kill "$p" 2>/dev/null || true; done
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  sleep 0.2; rm -rf "$work"
}
trap cleanup EXIT

wait_for() { # $1 log file, $2 pattern
  for _ in $(seq 1 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "not started:" >&2; cat "$1" >&2; exit 1
}
java -cp "$bench_jar" dev.mcpchaos.bench.sse.SseUpstream "$UPSTREAM_PORT" 1 2> "$work/upstream.log" &
upstream_pid=$!
wait_for "$work/upstream.log" "listening on"
java ${MCP_CHAOS_JAVA_OPTS:-} -Dio.netty.eventLoopThreads="$THREADS" -jar "$jar" http --control off \
  --listen 127.0.0.1:$PROXY_PORT --upstream http://127.0.0.1:$UPSTREAM_PORT/mcp 2> "$work/proxy.log" &
proxy_pid=$!
wait_for "$work/proxy.log" "listening on"
# As the CLI runs by default: the control endpoint on, so metrics count every message, and every
# event is framed and sniffed (with --control off and no rules, events are relayed unframed).
java ${MCP_CHAOS_JAVA_OPTS:-} -Dio.netty.eventLoopThreads="$THREADS" -jar "$jar" http --control 127.0.0.1:$CONTROL_PORT \
  --listen 127.0.0.1:$METRICS_PROXY_PORT --upstream http://127.0.0.1:$UPSTREAM_PORT/mcp 2> "$work/metrics-proxy.log" &
metrics_proxy_pid=$!
wait_for "$work/metrics-proxy.log" "listening on"
targets="direct:$UPSTREAM_PORT mcp-chaos:$PROXY_PORT mcp-chaos+metrics:$METRICS_PROXY_PORT"
if [ -x "$NGINX" ]; then
  cat > "$work/nginx.conf" <<CONF
worker_processes $THREADS;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work;
  proxy_temp_path $work;
  server {
    listen 127.0.0.1:$NGINX_PROXY_PORT;
    location / {
      proxy_pass http://127.0.0.1:$UPSTREAM_PORT;
      proxy_http_version 1.1;
      proxy_buffering off;
    }
  }
}
CONF
  "$NGINX" -c "$work/nginx.conf"
  targets="$targets nginx-proxy:$NGINX_PROXY_PORT"
else
  echo "nginx not installed: its reference case is skipped"
fi

fetch() { # $1 port, $2 events, $3 size -> "seconds bytes"
  curl -s --max-time 120 -o /dev/null -w '%{time_total} %{size_download}\n' \
    "http://127.0.0.1:$1/mcp/stream?events=$2&size=$3"
}
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $THREADS threads per proxy"
# Warm-up: let the JVMs compile their hot paths (200,000 events were not enough: the measured
# runs still got faster one after the other).
for t in $targets; do
  for _ in 1 2; do fetch "${t##*:}" 2000000 120 > /dev/null; fetch "${t##*:}" 3000 65536 > /dev/null; done
done
for spec in "$SMALL_EVENTS 120" "$LARGE_EVENTS 65536"; do
  set -- $spec
  for t in $targets; do
    for _ in $(seq 1 "$RUNS"); do echo "${t%%:*} $1 $2 $(fetch "${t##*:}" "$1" "$2")"; done
  done
done > "$work/runs.txt"
python3 - "$work/runs.txt" <<'PY'
import sys, statistics
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    label, events, size, secs, nbytes = line.split()
    runs[(int(size), label)].append((float(secs), int(events), int(nbytes)))
print(f"{'event size':>10} {'target':<18} {'events/s':>12} {'MB/s':>9} {'ratio':>6}   runs (s)")
for size in sorted({k[0] for k in runs}):
    base = None
    for label in ("direct", "mcp-chaos", "mcp-chaos+metrics", "nginx-proxy"):
        r = runs.get((size, label))
        if not r:
            continue
        secs = statistics.median(x[0] for x in r)
        events, nbytes = r[0][1], r[0][2]
        eps = events / secs
        base = base or eps
        print(f"{size:>10} {label:<18} {eps:>12,.0f} {nbytes / secs / 1e6:>9.1f} {eps / base:>6.3f}   "
              + ", ".join(f"{x[0]:.2f}" for x in r))
PY
# The runs share the cores with whatever else runs: the load at the end says whether anything did.
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
