#!/usr/bin/env bash
# Throughput of `mcp-chaos stdio` with no rules, beside a plain `cat` pipe, on this machine.
# Three cases per message size:
#   c->s : a file piped into the proxy's stdin, the server drains it (`cat > /dev/null`)
#   s->c : the server writes the file (`cat FILE`), the proxy relays it to its stdout
#   both : the server is `cat`, which echoes every message back, so each message crosses the
#          proxy twice, both directions at once
# The baseline replaces the proxy with a second `cat`: the same pipe hops, no framing.
# The proxy's time includes its JVM start (about 0.3 s here). Bounded: a fixed message count.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/proxy-server/target/mcp-chaos.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl proxy-server -am)
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

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

run_case() { # $1 count, $2 size
  make_messages "$1" "$2"
  local file="$work/msgs-$2.jsonl" bytes
  bytes=$(stat -c %s "$file")
  local t0 t1 t2 t3 t4 t5 t6 t7
  t0=$(date +%s.%N); cat "$file" | cat > "$work/out-cat"; t1=$(date +%s.%N)
  t2=$(date +%s.%N); java ${MCP_CHAOS_JAVA_OPTS:-} -jar "$jar" stdio -- sh -c 'cat > /dev/null' < "$file"; t3=$(date +%s.%N)
  t4=$(date +%s.%N); java ${MCP_CHAOS_JAVA_OPTS:-} -jar "$jar" stdio -- cat "$file" < /dev/null > "$work/out-s2c"; t5=$(date +%s.%N)
  t6=$(date +%s.%N); java ${MCP_CHAOS_JAVA_OPTS:-} -jar "$jar" stdio -- cat < "$file" > "$work/out-both"; t7=$(date +%s.%N)
  cmp -s "$file" "$work/out-s2c" || { echo "s->c output differs from input for size $2" >&2; exit 1; }
  cmp -s "$file" "$work/out-both" || { echo "echoed output differs from input for size $2" >&2; exit 1; }
  python3 - "$1" "$2" "$bytes" "$idle" "$t0" "$t1" "$t2" "$t3" "$t4" "$t5" "$t6" "$t7" <<'PY'
import sys
n, size, b, idle = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
t = [float(x) for x in sys.argv[5:]]
cat = t[1] - t[0]
for label, d in (("c->s", t[3] - t[2]), ("s->c", t[5] - t[4]), ("both", t[7] - t[6])):
    # Without the start-up and exit of an idle run: an estimate of the steady rate.
    steady = n / (d - idle) if d > idle else float("nan")
    print(f"{size:>5} B x {n:>8} {label}: mcp-chaos {n/d:>10,.0f} msg/s {b/d/1e6:>7.1f} MB/s "
          f"(per direction; ~{steady:,.0f} msg/s {steady*b/n/1e6:,.1f} MB/s without start-up) "
          f"| cat pipe {n/cat:>12,.0f} msg/s {b/cat/1e6:>8.1f} MB/s | ratio {cat/d:.3f}")
PY
}

echo "machine: $(nproc) cores, $(java -version 2>&1 | head -1)"
# A run with no traffic (the server exits at once): the JVM's start-up and the proxy's exit,
# which the timed runs include; subtracted for the "without start-up" estimate.
i0=$(date +%s.%N); java ${MCP_CHAOS_JAVA_OPTS:-} -jar "$jar" stdio -- true < /dev/null > /dev/null 2>&1; i1=$(date +%s.%N)
idle=$(python3 -c "print($i1 - $i0)")
echo "start-up and exit with no traffic: ${idle:0:5} s"
run_case "${COUNT_100:-1000000}" 100
run_case "${COUNT_1K:-300000}" 1024
