#!/usr/bin/env bash
# Many idle MCP GET SSE streams held through `mcp-chaos http` at once, and what the proxy's
# process holds for them: resident memory (VmRSS), Java heap used after a full GC
# (jcmd GC.heap_info), threads and file descriptors, before the streams, while all are held, and
# after they closed. The upstream is dev.mcpchaos.bench.sse.SseUpstream's GET /hold (a stream
# that sends one comment and then stays silent); the client is dev.mcpchaos.bench.sse.HeldStreams.
# At the end of the hold the upstream writes one event to every stream it holds (its /broadcast),
# and the client says how many of the held streams it reached through the proxy, and how fast.
# SESSIONS streams (default 10,000) opened at CONNECT_RATE per second (default 500) and held
# HOLD seconds (default 20). The proxy needs two descriptors per stream (client and upstream
# side): the script raises `ulimit -n` as far as the hard limit lets it and lowers SESSIONS to
# fit when it cannot, and says so. 127.0.0.1 only; bounded in count and time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/mcp-chaos-cli/target/mcp-chaos.jar"
bench_jar="$root/benchmarks/target/benchmarks.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl mcp-chaos-cli -am)
[ -f "$bench_jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl benchmarks -am)
SESSIONS=${SESSIONS:-10000}
CONNECT_RATE=${CONNECT_RATE:-500}
HOLD=${HOLD:-20}
[ "$HOLD" -ge 10 ] || { echo "HOLD must be at least 10 s: the measurement runs while the streams are held" >&2; exit 2; }
THREADS=${THREADS:-$(nproc)}
BASE_PORT=${BASE_PORT:-19580}  # below the ephemeral range (32768+), which client sockets take
UPSTREAM_PORT=$BASE_PORT; PROXY_PORT=$((BASE_PORT + 1))

want=$((2 * SESSIONS + 1000))
ulimit -n "$want" 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
limit=$(ulimit -n)
if [ "$limit" != unlimited ] && [ $((2 * SESSIONS + 500)) -gt "$limit" ]; then
  fit=$(( (limit - 500) / 2 ))
  echo "note: open files limited to $limit here (hard limit $(ulimit -Hn)); $SESSIONS streams need" \
       "$want through the proxy, so $fit are opened instead"
  SESSIONS=$fit
fi

# Sockets of an earlier run still in TIME-WAIT on these ports take local ports the new run needs
# (and showed up as connect timeouts): wait for them to go, at most 70 s.
for _ in $(seq 1 70); do
  [ "$(ss -tan state time-wait 2>/dev/null | grep -c -E ":($UPSTREAM_PORT|$PROXY_PORT)\b" || true)" -lt 1000 ] && break
  [ "${said_wait:-}" ] || { echo "waiting for the TIME-WAIT sockets of an earlier run to clear ..."; said_wait=1; }
  sleep 1
done

work="$(mktemp -d)"
cleanup() {
  for p in ${client_pid:-} ${upstream_pid:-} ${proxy_pid:-}; do kill "$p" 2>/dev/null || true; done
  sleep 0.2; rm -rf "$work"
}
trap cleanup EXIT
wait_for() { # $1 file, $2 pattern, $3 tenths of a second
  for _ in $(seq 1 "$3"); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "timed out waiting for '$2' in $1:" >&2; tail -20 "$1" >&2; exit 1
}
java -cp "$bench_jar" dev.mcpchaos.bench.sse.SseUpstream "$UPSTREAM_PORT" 1 2> "$work/upstream.log" &
upstream_pid=$!
wait_for "$work/upstream.log" "listening on" 100
java ${MCP_CHAOS_JAVA_OPTS:-} -Dio.netty.eventLoopThreads="$THREADS" -jar "$jar" http --control off \
  --listen 127.0.0.1:$PROXY_PORT --upstream http://127.0.0.1:$UPSTREAM_PORT/mcp \
  --max-connections $((SESSIONS + 100)) 2> "$work/proxy.log" &
proxy_pid=$!
wait_for "$work/proxy.log" "listening on" 100

measure() { # $1 label: one line of what the proxy's process holds
  jcmd "$proxy_pid" GC.run > /dev/null
  local heap rss threads fds
  heap=$(jcmd "$proxy_pid" GC.heap_info | awk '/used/ { for (i = 1; i <= NF; i++) if ($i == "used") { v = $(i + 1); gsub(/[^0-9]/, "", v); print int(v / 1024); exit } }')
  rss=$(awk '/^VmRSS/ { print int($2 / 1024) }' /proc/"$proxy_pid"/status)
  threads=$(awk '/^Threads/ { print $2 }' /proc/"$proxy_pid"/status)
  fds=$(ls /proc/"$proxy_pid"/fd | wc -l)
  printf '%-28s RSS %6s MiB   heap used after GC %6s MiB   threads %4s   fds %6s\n' "$1" "$rss" "$heap" "$threads" "$fds"
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $THREADS event loops;" \
  "$SESSIONS streams at $CONNECT_RATE/s, held ${HOLD} s; JVM defaults otherwise ($(java -version 2>&1 | head -1))"
# A few requests first, so the idle figure is that of a proxy that has served traffic.
for _ in 1 2 3; do curl -s --max-time 5 -o /dev/null -X POST -H 'Content-Type: application/json' \
  -d '{"jsonrpc":"2.0","id":1,"method":"ping"}' "http://127.0.0.1:$PROXY_PORT/mcp" || true; done
measure "idle"
java -cp "$bench_jar" dev.mcpchaos.bench.sse.HeldStreams --url "http://127.0.0.1:$PROXY_PORT/mcp/hold" \
  --streams "$SESSIONS" --connect-rate "$CONNECT_RATE" --hold "$HOLD" \
  --broadcast "http://127.0.0.1:$UPSTREAM_PORT/broadcast" > "$work/client.log" 2>&1 &
client_pid=$!
wait_for "$work/client.log" "^holding" $(( (SESSIONS / CONNECT_RATE + 70) * 10 ))
grep "^opened" "$work/client.log"
measure "$(grep -o 'holding [0-9]* streams' "$work/client.log")"
wait "$client_pid" || true
client_pid=
grep "^message reached" "$work/client.log" || echo "no message was broadcast to the streams"
grep "^closing" "$work/client.log" || true
sleep 2
measure "after they closed"
warnings=$(grep -c -E "WARN|ERROR" "$work/proxy.log" || true)
if [ "${warnings:-0}" -gt 0 ]; then
  echo "proxy log: $warnings warnings or errors; the first kinds:"
  grep -E "WARN|ERROR" "$work/proxy.log" | sed -E 's/[0-9]+/N/g' | sort | uniq -c | sort -rn | head -5 | cut -c1-220
fi
