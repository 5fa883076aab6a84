#!/usr/bin/env bash
# Latency at fixed request rates, without coordinated omission: MCP-style JSON-RPC POSTs sent at
# RATES requests/s (default 1000 5000 10000), DURATION seconds each (default 10, after 2 s of
# unrecorded warm-up, DRIVER_WARMUP; mcp-chaos is warmed up first, WARMUP s at 1,000 req/s and
# WARMUP s at 5,000, default 15 each), over CONNECTIONS keep-alive connections (default 100), by
# dev.mcpchaos.bench.load.FixedRateLoad (benchmarks module), which counts each request's latency
# from the time it was meant to be sent. The upstream is nginx answering every POST /mcp with a
# fixed JSON-RPC result; it is reached directly, through `mcp-chaos http` (no rules), through
# nginx as a reverse proxy (proxy_buffering off) and through haproxy. The three proxies get the
# same number of threads: THREADS (default: the number of cores) event loops for mcp-chaos
# (-Dio.netty.eventLoopThreads), worker_processes for nginx, nbthread for haproxy.
# Needs nginx (apt-get install nginx-light) and, for its case, haproxy (installed with apt-get
# when missing and running as root; skipped otherwise). Everything on 127.0.0.1; bounded: each
# case sends at most rate x (DURATION + 2) requests and waits at most 5 s more for answers.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=bench/lib/nginx.sh
. "$root/bench/lib/nginx.sh"
# shellcheck source=bench/lib/haproxy.sh
. "$root/bench/lib/haproxy.sh"
jar="$root/mcp-chaos-cli/target/mcp-chaos.jar"
bench_jar="$root/benchmarks/target/benchmarks.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl mcp-chaos-cli -am)
[ -f "$bench_jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl benchmarks -am)
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "nginx is needed: apt-get install nginx-light" >&2; exit 1; }
RATES=${RATES:-1000 5000 10000}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-100}
THREADS=${THREADS:-$(nproc)}
BASE_PORT=${BASE_PORT:-19380}  # below the ephemeral range (32768+), which client sockets take
UPSTREAM_PORT=$BASE_PORT; PROXY_PORT=$((BASE_PORT + 1)); NGINX_PROXY_PORT=$((BASE_PORT + 2)); HAPROXY_PORT=$((BASE_PORT + 3))
work="$(mktemp -d)"
cleanup() {
  [ -n "${proxy_pid:-}" ] && kill "$proxy_pid" 2>/dev/null || true
  for p in "$work"/*.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true; done
  sleep 0.2
  rm -rf "$work"
}
trap cleanup EXIT

HAPROXY=$(haproxy_bin)
have_haproxy=false
[ -n "$HAPROXY" ] && have_haproxy=true

body='{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"pong"}],"isError":false}}'
nginx_upstream_conf "$work" "$work/upstream.pid" "$UPSTREAM_PORT" "$body" > "$work/upstream.conf"
nginx_proxy_conf "$THREADS" "$work" "$NGINX_PROXY_PORT" "$UPSTREAM_PORT" > "$work/nginx-proxy.conf"
haproxy_conf "$THREADS" "$work" "$HAPROXY_PORT" "$UPSTREAM_PORT" > "$work/haproxy.cfg"

"$NGINX" -c "$work/upstream.conf"
"$NGINX" -c "$work/nginx-proxy.conf"
if $have_haproxy; then "$HAPROXY" -f "$work/haproxy.cfg" -D; fi
java ${MCP_CHAOS_JAVA_OPTS:-} -Dio.netty.eventLoopThreads="$THREADS" -jar "$jar" http --control off \
  --listen 127.0.0.1:$PROXY_PORT --upstream http://127.0.0.1:$UPSTREAM_PORT/mcp 2> "$work/proxy.log" &
proxy_pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on" "$work/proxy.log" 2>/dev/null && break
  sleep 0.1
done
grep -q "listening on" "$work/proxy.log" || { echo "mcp-chaos did not start:" >&2; cat "$work/proxy.log" >&2; exit 1; }

targets="direct:$UPSTREAM_PORT mcp-chaos:$PROXY_PORT nginx-proxy:$NGINX_PROXY_PORT"
$have_haproxy && targets="$targets haproxy:$HAPROXY_PORT"

load() { # $1 label, $2 port, $3 rate, $4 duration, $5 warm-up
  timeout $(( $4 + $5 + 30 )) java -cp "$bench_jar" dev.mcpchaos.bench.load.FixedRateLoad \
    --url "http://127.0.0.1:$2/mcp" --rate "$3" --duration "$4" --warmup "$5" \
    --connections "$CONNECTIONS" --label "$1" 2>/dev/null
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $CONNECTIONS connections;" \
  "$THREADS threads per proxy; ${DURATION} s per case after 2 s warm-up"
$have_haproxy || echo "haproxy: not installed and could not be installed; its case is skipped"
# Let the JVM proxy compile its hot path before anything is recorded: its JIT compiler is still
# busy 10-15 s into a run at these rates (3 s left its p50 at 5,000 req/s ten times nginx's).
# A ramp: a cold JVM at full rate falls behind by seconds, its compiler starved of CPU, and was
# still catching up when the measured case began (p99 of hundreds of ms in one run of three).
load warm-up "$PROXY_PORT" 1000 "${WARMUP:-15}" 0 > /dev/null
load warm-up "$PROXY_PORT" 5000 "${WARMUP:-15}" 0 > /dev/null
for rate in $RATES; do
  for t in $targets; do
    label=${t%%:*}; port=${t##*:}
    load "$label" "$port" "$rate" "$DURATION" "${DRIVER_WARMUP:-2}" | tee -a "$work/all.txt" | grep -v '^result:' >&2
  done
done

python3 - "$work/all.txt" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    if line.startswith("result:"):
        rows.append(dict(kv.split("=", 1) for kv in line.split()[1:]))
direct = {r["rate"]: r for r in rows if r["label"] == "direct"}
def ratio(r, k):
    d = float(direct.get(r["rate"], {}).get(k, "nan"))
    v = float(r[k])
    return f"{v / d:.1f}x" if d == d and d > 0 and r["label"] != "direct" else ""
print()
print(f"{'target':<12} {'rate':>6} {'achieved':>9} {'p50 ms':>8} {'p99 ms':>8} {'p99.9 ms':>9} {'max ms':>8} "
      f"{'errors':>6} {'timeouts':>8} {'pace p99':>8} {'p50/direct':>10} {'p99/direct':>10} {'p99.9/direct':>12}")
for r in rows:
    print(f"{r['label']:<12} {r['rate']:>6} {r['achieved']:>9} {float(r['p50']):>8.3f} {float(r['p99']):>8.3f} "
          f"{float(r['p999']):>9.3f} {float(r['max']):>8.1f} {r['errors']:>6} {r['timeouts']:>8} "
          f"{float(r['lag_p99']):>8.3f} {ratio(r, 'p50'):>10} {ratio(r, 'p99'):>10} {ratio(r, 'p999'):>12}")
PY
