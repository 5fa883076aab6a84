#!/usr/bin/env bash
# CPU per request of two mcp-chaos builds (or two JVM settings), both up at once and measured in
# turn with nginx as a proxy, the order of the two swapped every round. One number per run is
# not enough on a shared machine: rounds there differ by 10 % or more, and a trend in the
# machine's load favours whichever is measured first. Prints each round's total and user CPU per
# request (user time is where the proxies differ: the system calls per request are the same)
# and the medians.
#
#   bench/cpu-side-by-side.sh "OLD.jar JVM_OPTS..." "NEW.jar JVM_OPTS..."
#   bench/cpu-side-by-side.sh "A.jar JVM_OPTS..." "A.jar JVM_OPTS... -- --io epoll"   (options of `http`)
#
# In place of a jar, "floor-raw", "floor-http" or "floor-frame" (then JVM_OPTS...) runs
# dev.mcpchaos.bench.floor.FloorRelay from benchmarks/target/benchmarks.jar: a Netty relay that
# copies bytes (raw), decodes and encodes HTTP (http) or frames each message in place (frame),
# and does nothing else: the floors a JVM proxy on Netty starts from (build the jar with
# mvn -pl benchmarks -am package -DskipTests). Its transport is the proxy's default (io_uring
# where this machine allows it, else epoll) unless the JVM options name one, as
# -Dfloor.io=epoll (the floor of `-- --io epoll`).
#   ROUNDS=8 DURATION=6s WARMUP=10s; needs nginx-light and wrk (as bench/http-throughput.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib/nginx.sh"
. "$root/bench/lib/wrk.sh"
[ $# -eq 2 ] || { echo "usage: $0 \"A.jar [JVM options]\" \"B.jar [JVM options]\"" >&2; exit 2; }
rounds=${ROUNDS:-8}; duration=${DURATION:-6s}; warmup=${WARMUP:-10s}
for tool in nginx wrk python3; do
  command -v "$tool" > /dev/null || [ -x "/usr/sbin/$tool" ] || { echo "$0: needs $tool" >&2; exit 2; }
done
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2> /dev/null || true; done
  for f in "$work/nginx.pid" "$work/nginx-proxy.pid"; do [ -f "$f" ] && kill "$(cat "$f")" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

body='{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"pong"}],"isError":false}}'
nginx_upstream_conf "$work" "$work/nginx.pid" 19190 "$body" > "$work/nginx.conf"
nginx_proxy_conf 2 "$work" 19191 19190 > "$work/nginx-proxy.conf"
"$nginx_bin" -c "$work/nginx.conf"
"$nginx_bin" -c "$work/nginx-proxy.conf"
sleep 0.5
write_tools_call_lua "$work/post.lua"

# Clock ticks (1/100 s) of PIDs: fields 14 (user) and 15 (system) of /proc/PID/stat.
ticks() { local field=$1 t=0 p; shift; for p in "$@"; do t=$((t + $(awk -v f="$field" '{print $f}' "/proc/$p/stat"))); done; echo $t; }
# measure PORT PIDS...: prints TOTAL/USER µs per request for one round against PORT.
measure() {
  local port=$1; shift
  local u0 s0 u1 s1 out reqs
  u0=$(ticks 14 "$@"); s0=$(ticks 15 "$@")
  out=$(wrk -t2 -c32 -d"$duration" -s "$work/post.lua" "http://127.0.0.1:$port/mcp")
  u1=$(ticks 14 "$@"); s1=$(ticks 15 "$@")
  reqs=$(echo "$out" | awk '/requests in/ {print $1}')
  python3 -c "print(f'{($u1-$u0+$s1-$s0)/100*1e6/$reqs:.1f}/{($u1-$u0)/100*1e6/$reqs:.1f}')"
}

start_proxy() { # start_proxy NAME LISTEN CONTROL "JAR OPTS... [-- PROXY OPTIONS...]"
  local jar opts main args=""
  read -r jar opts <<< "${4%% -- *}"
  [[ "$4" == *" -- "* ]] && args=${4#* -- }
  case $jar in
    floor-raw|floor-http|floor-frame) main=(-cp "$root/benchmarks/target/benchmarks.jar" dev.mcpchaos.bench.floor.FloorRelay "${jar#floor-}") ;;
    *) main=(-jar "$jar" http) ;;
  esac
  # shellcheck disable=SC2086 # the options are words on purpose
  java $opts -Dio.netty.eventLoopThreads=2 "${main[@]}" $args --control "127.0.0.1:$3" --listen "127.0.0.1:$2" \
    --upstream http://127.0.0.1:19190/mcp 2> "$work/$1.log" &
  pids+=($!)
  for _ in $(seq 1 150); do grep -q "listening on" "$work/$1.log" 2> /dev/null && return; sleep 0.1; done
  echo "$0: proxy $1 did not start:" >&2; cat "$work/$1.log" >&2; exit 1
}
start_proxy a 19192 19193 "$1"; pa=${pids[-1]}
start_proxy b 19194 19195 "$2"; pb=${pids[-1]}
nginx_workers=$(pgrep -P "$(cat "$work/nginx-proxy.pid")" | tr '\n' ' ')

# Warm both JITs the same way, in turn.
for port in 19192 19194 19192 19194; do wrk -t2 -c32 -d"$warmup" -s "$work/post.lua" "http://127.0.0.1:$port/mcp" > /dev/null; done

A=""; B=""; N=""
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then
    A="$A $(measure 19192 "$pa")"; B="$B $(measure 19194 "$pb")"
  else
    B="$B $(measure 19194 "$pb")"; A="$A $(measure 19192 "$pa")"
  fi
  # shellcheck disable=SC2086 # one PID per word
  N="$N $(measure 19191 $nginx_workers)"
done
echo "rounds (total/user µs per request), $rounds of $duration, order swapped every round:"
echo "  A [$1]:$A"
echo "  B [$2]:$B"
echo "  nginx:$N"
# What a JVM option buys in CPU it may cost in memory: the resident size each ended with.
rss() { awk '/^VmRSS/ {printf "%.0f MiB", $2 / 1024}' "/proc/$1/status"; }
echo "resident at the end: A $(rss "$pa"), B $(rss "$pb"), nginx workers and master $(for p in $nginx_workers $(cat "$work/nginx-proxy.pid"); do awk '/^VmRSS/ {print $2}' "/proc/$p/status"; done | awk '{s += $1} END {printf "%.0f MiB", s / 1024}')"
python3 - "$A" "$B" "$N" <<'PY'
import statistics, sys
a, b, n = (s.split() for s in sys.argv[1:4])
for i, what in ((0, "total"), (1, "user")):
    ma, mb, mn = (statistics.median(float(x.split("/")[i]) for x in xs) for xs in (a, b, n))
    wins = sum(float(y.split("/")[i]) < float(x.split("/")[i]) for x, y in zip(a, b))
    print(f"{what:5}: median A {ma:.1f}  B {mb:.1f}  nginx {mn:.1f}  A/nginx {ma/mn:.2f}  B/nginx {mb/mn:.2f}"
          f"  B/A {mb/ma:.3f}  (B lower in {wins} of {len(a)} rounds)")
PY
