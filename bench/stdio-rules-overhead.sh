#!/usr/bin/env bash
# What 20 rules that match nothing cost the stdio relay: 100 B messages client -> server,
# alternating runs without rules and with bench/twenty-non-matching-rules.yaml, and the median
# of each. Bounded: COUNT messages per run, RUNS runs of each.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/mcp-chaos-cli/target/mcp-chaos.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl mcp-chaos-cli -am)
COUNT=${COUNT:-1000000}
RUNS=${RUNS:-5}
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
python3 - "$COUNT" "$work/msgs.jsonl" <<'PY'
import sys
count, path = int(sys.argv[1]), sys.argv[2]
head = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'
with open(path, "w") as f:
    for i in range(count):
        f.write(head + str(i).rjust(8, "0") + "x" * 6 + '"}}\n')
PY
one() { # $@ extra args -> seconds
  local t0 t1
  t0=$(date +%s.%N)
  java ${MCP_CHAOS_JAVA_OPTS:-} -jar "$jar" stdio "$@" -- sh -c 'cat > /dev/null' < "$work/msgs.jsonl" 2>/dev/null
  t1=$(date +%s.%N)
  python3 -c "print($t1 - $t0)"
}
none=(); rules=()
for _ in $(seq 1 "$RUNS"); do
  none+=("$(one)")
  rules+=("$(one --rules "$root/bench/twenty-non-matching-rules.yaml")")
done
python3 - "$COUNT" "${none[*]}" "${rules[*]}" <<'PY'
import sys, statistics
n = int(sys.argv[1])
none = [float(x) for x in sys.argv[2].split()]
rules = [float(x) for x in sys.argv[3].split()]
a, b = statistics.median(none), statistics.median(rules)
print(f"no rules:                median {a:.2f} s  {n/a:>10,.0f} msg/s  runs {', '.join(f'{x:.2f}' for x in none)}")
print(f"20 non-matching rules:   median {b:.2f} s  {n/b:>10,.0f} msg/s  runs {', '.join(f'{x:.2f}' for x in rules)}")
print(f"throughput with rules / without: {a/b:.3f}")
PY
