#!/usr/bin/env bash
# JMH throughput of the codecs on realistic MCP messages (benchmarks/ module): the stdio line
# framer and decoder, the SSE framer and decoder, and the envelope sniffer, each on a ~100 B
# request, ~1 KiB and ~64 KiB tools/call results and a ~30 KB tools/list result. One benchmark
# thread: the MB/s are per core. Prints one table: benchmark, message, MB/s, msgs/s.
# Bounded: 20 benchmarks x (2 warm-up + 3 measured iterations of 1 s) in one fork each, about
# 2.5 minutes. JMH_OPTS replaces those settings; arguments are passed to JMH (a regex to pick
# benchmarks, -p message=small, -p buffer=heap, ...). PROF="" drops the GC profiler.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/benchmarks/target/benchmarks.jar"
stale() {
  [ ! -f "$jar" ] && return 0
  [ -n "$(find "$root/pom.xml" "$root/proxy-core" "$root/benchmarks" \
      \( -name pom.xml -o -path '*/src/main/*' \) -newer "$jar" -print -quit 2>/dev/null)" ]
}
if stale; then
  echo "building $jar ..." >&2
  (cd "$root" && mvn -B -q -DskipTests package -pl benchmarks -am) >&2
fi
JMH_OPTS=${JMH_OPTS:--f 1 -wi 2 -i 3 -w 1s -r 1s}
# JMH's GC profiler gives the bytes allocated per op, which, unlike the rates, load on the
# machine does not change: printed per message.
PROF=${PROF:--prof gc}
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run, $(java -version 2>&1 | head -1)"
# shellcheck disable=SC2086
timeout 900 java -jar "$jar" $JMH_OPTS $PROF -rf json -rff "$work/result.json" "$@" >"$work/jmh.log" 2>&1 \
  || { tail -40 "$work/jmh.log" >&2; exit 1; }
python3 - "$work/result.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
order = {"small": 0, "call1k": 1, "call64k": 2, "toolsList": 3}
def key(r):
    return (r["benchmark"].rsplit(".", 1)[0], r["benchmark"], r.get("params", {}).get("buffer", ""),
            order.get(r.get("params", {}).get("message"), 9))
print(f"{'benchmark':<36} {'buffer':<7} {'message':<10} {'B/msg':>7} {'MB/s':>9} {'± MB/s':>8} {'msgs/s':>12} {'alloc B/msg':>12}")
for r in sorted(rows, key=key):
    name = r["benchmark"].replace("dev.mcpchaos.bench.codec.", "")
    p = r.get("params", {})
    sec = r["secondaryMetrics"]
    mb = sec["bytes"]["score"] / 1e6
    err = sec["bytes"]["scoreError"]
    err = "" if err != err else f"{err / 1e6:.1f}"  # NaN with fewer than 2 iterations
    msgs = sec["messages"]["score"]
    size = sec["bytes"]["score"] / msgs if msgs else 0
    norm = next((v["score"] for k, v in sec.items() if k.endswith("gc.alloc.rate.norm")), None)
    ops = r["primaryMetric"]["score"]
    alloc = "" if norm is None or not msgs else f"{norm * ops / msgs:,.1f}"
    print(f"{name:<36} {p.get('buffer', 'heap'):<7} {p.get('message', ''):<10} {size:>7,.0f} {mb:>9.1f} {err:>8} {msgs:>12,.0f} {alloc:>12}")
PY
