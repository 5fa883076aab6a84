#!/usr/bin/env bash
# Every benchmark of docs/benchmarks.md in one run, then the table of issue #6's targets: what
# each measured, against what, and whether it is met. Builds the proxy and the benchmarks jar
# from this checkout first, so the numbers are this checkout's.
#
#   bench/all.sh                      # all cases, about 15 min
#   bench/all.sh stdio-startup http-throughput
#
# Cases (run in this order): stdio-throughput stdio-rules-overhead stdio-startup http-throughput
# http-latency sse-stream sse-held codecs. Each script's own variables (COUNT_100, RATES,
# SESSIONS, ...) pass through. Each case's whole output is kept in RESULTS (default
# bench/results/<date-time>/<case>.txt); the targets table is printed at the end and kept as
# targets.md. A case that fails is reported and the others still run. Needs what the scripts
# need: nginx-light and wrk (and haproxy for its latency case), curl, node for server-everything.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
all_cases="stdio-throughput stdio-rules-overhead stdio-startup http-throughput http-latency sse-stream sse-held codecs"
cases="${*:-$all_cases}"
for c in $cases; do
  [ -f "$root/bench/$c.sh" ] && [[ " $all_cases " == *" $c "* ]] \
    || { echo "unknown case: $c (cases: $all_cases)" >&2; exit 2; }
done
RESULTS=${RESULTS:-$root/bench/results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$RESULTS"

echo "building the proxy and the benchmarks from this checkout ..." >&2
(cd "$root" && mvn -B -q -DskipTests package -pl mcp-chaos-cli,benchmarks -am) >&2 || exit 1

failed=()
for c in $cases; do
  echo "== $c ($(date +%H:%M:%S), load average $(cut -d' ' -f1-3 /proc/loadavg))"
  if ! "$root/bench/$c.sh" 2>&1 | tee "$RESULTS/$c.txt"; then
    failed+=("$c")
    echo "!! $c failed; its output is in $RESULTS/$c.txt"
  fi
done

echo
python3 "$root/bench/lib/targets.py" "$RESULTS" | tee "$RESULTS/targets.md"
echo
echo "all output: $RESULTS"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}"
  exit 1
fi
