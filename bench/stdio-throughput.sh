#!/usr/bin/env bash
# Throughput of `mcp-chaos stdio` with no rules, beside a plain pipe, on this machine.
# Three cases per message size:
#   c->s : `cat FILE` piped into the proxy's stdin (a pipe, as from a real client); the server is
#          the timed sink
#   s->c : the server writes the file (`cat FILE`); the proxy's stdout goes to the timed sink
#   both : the server is `cat`, echoing every message back, so each message crosses the proxy
#          twice, both directions at once; the proxy's stdout goes to the timed sink
# The baseline is `cat FILE | sink`: the same pipe and the same sink, no proxy.
# The sink (dev.mcpchaos.bench.stdio.TimedSink) times from the first byte it gets to the end of
# its input, so "relay" rates leave every start-up out; "with start-up" rates divide by the time
# from launching the proxy to its exit. Every run's output is checked against the input by
# CRC-32C. Bounded: a fixed message count per size.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/mcp-chaos-cli/target/mcp-chaos.jar"
bench_jar="$root/benchmarks/target/benchmarks.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl mcp-chaos-cli -am)
[ -f "$bench_jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl benchmarks -am)
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
sink=(java -cp "$bench_jar" dev.mcpchaos.bench.stdio.TimedSink)
proxy=(java ${MCP_CHAOS_JAVA_OPTS:-} -jar "$jar" stdio --quiet --control off)

make_messages() { # $1 count, $2 approximate size in bytes -> file of JSON-RPC notifications
  python3 - "$1" "$2" "$work/msgs-$2.jsonl" <<'PY'
import sys
count, size, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
head = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'
tail = '"}}\n'
pad = max(0, size - len(head) - len(tail) - 8)
with open(path, "w") as f:
    for i in range(count):
        f.write(head + str(i).rjust(8, "0") + "x" * pad + tail)
PY
}

now() { date +%s.%N; }

run_case() { # $1 count, $2 size
  make_messages "$1" "$2"
  local file="$work/msgs-$2.jsonl" expected cat_report t0 t1 t2 t3 t4 t5
  expected=$("${sink[@]}" --crc "$file")
  cat_report=$(cat "$file" | "${sink[@]}")
  t0=$(now); cat "$file" | "${proxy[@]}" -- "${sink[@]}" --report "$work/c2s"; t1=$(now)
  # The client's input ends at once here: the server gets --exit-timeout to write it all before
  # the proxy sends SIGTERM (5 s by default, which a slow run can exceed).
  t2=$(now); "${proxy[@]}" --exit-timeout 300s -- cat "$file" < /dev/null | "${sink[@]}" > "$work/s2c"; t3=$(now)
  t4=$(now); cat "$file" | "${proxy[@]}" -- cat | "${sink[@]}" > "$work/both"; t5=$(now)
  for r in "$cat_report" "$(cat "$work/c2s")" "$(cat "$work/s2c")" "$(cat "$work/both")"; do
    [ "${r##*crc32c=}" = "${expected##*crc32c=}" ] || { echo "output differs from input (size $2): $r" >&2; exit 1; }
  done
  python3 - "$1" "$2" "$cat_report" "$(cat "$work/c2s")" "$(cat "$work/s2c")" "$(cat "$work/both")" \
      "$t0" "$t1" "$t2" "$t3" "$t4" "$t5" <<'PY'
import sys
n, size = int(sys.argv[1]), int(sys.argv[2])
def parse(report):
    fields = dict(kv.split("=") for kv in report.split())
    return int(fields["bytes"]), float(fields["seconds"])
b, cat_s = parse(sys.argv[3])
t = [float(x) for x in sys.argv[7:]]
for label, report, wall in (("c->s", sys.argv[4], t[1] - t[0]), ("s->c", sys.argv[5], t[3] - t[2]),
                            ("both", sys.argv[6], t[5] - t[4])):
    _, relay_s = parse(report)
    print(f"| {size:>7,} B | {n:>9,} | {label} | {n/relay_s:>11,.0f} | {b/relay_s/1e6:>8.1f} | "
          f"{n/wall:>11,.0f} | {b/wall/1e6:>8.1f} | {b/cat_s/1e6:>8.1f} | {cat_s/relay_s:.2f} |")
PY
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(java -version 2>&1 | head -1)"
echo "| message | messages | direction | relay msg/s | relay MB/s | with start-up msg/s | with start-up MB/s | pipe MB/s | relay / pipe |"
echo "|---:|---:|---|---:|---:|---:|---:|---:|---:|"
run_case "${COUNT_100:-3000000}" 100
run_case "${COUNT_1K:-600000}" 1024
run_case "${COUNT_1M:-200}" 1048576
