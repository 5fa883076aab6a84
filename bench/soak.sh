#!/usr/bin/env bash
# The long soak: tool calls through an in-process mcp-chaos proxy with drop (2 %), duplicate
# (2 %) and latency (5 %, 20 ms +- 10) rules on the answers, in front of the built-in demo server
# in a process of its own: STDIO_CALLS calls over stdio (each a request and its answer through
# the proxy: 500,000 calls are a million messages and more), then HTTP_CALLS calls over
# Streamable HTTP (SSE answers). Each transport sends for at most its cap, then waits for what
# is on its way. It is mcp-chaos-cli's SoakIT with bigger numbers, run by failsafe, so Netty's
# paranoid leak detection is on and any leak fails it, and it asserts what the CI run asserts:
# per request id, 0 answers for a logged drop, 2 for a logged duplicate, 1 otherwise; the heap
# after a full GC at the end within SOAK_HEAP_GROWTH_MB of the sample a tenth of the way in.
# Prints each transport's figures: calls, messages, answers, fault events, heap after GC and
# the JVM's RSS at start, a tenth, the half and the end, and the time taken.
# Everything on 127.0.0.1. Needs a JDK and Maven (MVN_ARGS=-o to build offline).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
STDIO_CALLS=${STDIO_CALLS:-500000}
HTTP_CALLS=${HTTP_CALLS:-200000}
STDIO_CAP=${STDIO_CAP:-240}    # seconds of sending over stdio, at most
HTTP_CAP=${HTTP_CAP:-240}      # seconds of sending over HTTP, at most
STDIO_IN_FLIGHT=${STDIO_IN_FLIGHT:-256}
HTTP_IN_FLIGHT=${HTTP_IN_FLIGHT:-32}
SOAK_HEAP_GROWTH_MB=${SOAK_HEAP_GROWTH_MB:-16}
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg);" \
  "stdio $STDIO_CALLS calls in at most ${STDIO_CAP}s ($STDIO_IN_FLIGHT in flight)," \
  "HTTP $HTTP_CALLS calls in at most ${HTTP_CAP}s ($HTTP_IN_FLIGHT in flight)"
start=$(date +%s)
status=0
# shellcheck disable=SC2086 # MVN_ARGS is a list of options
(cd "$root" && mvn -B ${MVN_ARGS:-} -pl mcp-chaos-cli -am verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
    -Dit.test=SoakIT -Dsoak.stdio.calls="$STDIO_CALLS" -Dsoak.http.calls="$HTTP_CALLS" \
    -Dsoak.stdio.cap.seconds="$STDIO_CAP" -Dsoak.http.cap.seconds="$HTTP_CAP" \
    -Dsoak.stdio.in.flight="$STDIO_IN_FLIGHT" -Dsoak.http.in.flight="$HTTP_IN_FLIGHT" \
    -Dsoak.heap.growth.mb="$SOAK_HEAP_GROWTH_MB") > "$work/mvn.log" 2>&1 || status=$?
end=$(date +%s)

grep -E '^(stdio|http) soak:' "$work/mvn.log" | sed 's/; heap after GC: /\n  heap after GC: /' || true
grep -E 'Tests run:.*SoakIT|<<< FAIL|Netty leak' "$work/mvn.log" || true
for report in "$root"/mcp-chaos-cli/target/failsafe-reports/*SoakIT.txt; do
  [ -f "$report" ] && grep -A12 '<<< FAIL' "$report" | head -40 || true
done
echo "wall time $((end - start)) s (build included); load average after $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$status" -ne 0 ]; then
  echo "soak FAILED (mvn exit $status); the whole log: tail of it below" >&2
  tail -40 "$work/mvn.log" >&2
  exit "$status"
fi
echo "soak passed: accounting exact, heap flat, no leak reported"
