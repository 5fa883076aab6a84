#!/usr/bin/env bash
# mcp-chaos as a fixture a test spawns per test (issue #34): a replay of a recorded cassette, the
# demo server, or `stdio` in front of a server, each spawned cold, with a short client timeout.
# Prints, for RUNS cold spawns each (default 7, at most 50; cases round-robin), the median time
# from spawn to the answer to `initialize` for `demo-server`, `replay` of a cassette recorded here,
# a tiny Node server (bench/fixture-server.js) alone and `stdio` in front of it; and how long
# after the server's own exit (code 70) and after the end of stdout following a `crash` rule
# (stdio and replay) the process exits, with the exit codes; each beside its target. Everything
# goes through ./mcp-chaos as a user runs it (its stale-jar check and class-data archive
# included). The harness is dev.mcpchaos.bench.startup.FixtureSpawn (benchmarks module). Pipes
# only; every spawn is bounded (TIMEOUT seconds, default 30).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bench_jar="$root/benchmarks/target/benchmarks.jar"
[ -f "$bench_jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl benchmarks -am)
RUNS=${RUNS:-7}
TIMEOUT=${TIMEOUT:-30}
launcher="${LAUNCHER:-$root/mcp-chaos}" # LAUNCHER=/other/checkout/mcp-chaos to measure another build
server="$root/bench/fixture-server.js"
command -v node >/dev/null || { echo "fixture-spawn: node is needed for the tiny server" >&2; exit 1; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

# The launcher builds the jar and its archive when they are stale: once here, before anything is timed.
echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}' | "$launcher" stdio --quiet -- cat >/dev/null

# A cassette recorded here, through mcp-chaos stdio in front of the tiny server.
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fixture-spawn","version":"0"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}' \
  | "$launcher" stdio --quiet --record "$work/fixture.ndjson" -- node "$server" >/dev/null 2>"$work/record.log" \
  || { cat "$work/record.log" >&2; exit 1; }
cat >"$work/crash.yaml" <<'RULES'
rules:
  - name: crash-on-call
    match: {direction: client_to_server, kind: request, method: tools/call}
    fault: {type: crash}
RULES

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (before), $(java -version 2>&1 | head -1), node $(node --version)"
java -cp "$bench_jar" dev.mcpchaos.bench.startup.FixtureSpawn --runs "$RUNS" --timeout "$TIMEOUT" \
  --launcher "$launcher" --node "$(command -v node)" --server "$server" \
  --cassette "$work/fixture.ndjson" --crash-rules "$work/crash.yaml"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (after); targets are for a quiet machine (issue #34)"
