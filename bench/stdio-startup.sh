#!/usr/bin/env bash
# Start-up cost of `mcp-chaos stdio`: the time from launching a stdio MCP server command to the
# first line of its answer to an `initialize` request written at once, for the server alone,
# through `./mcp-chaos stdio -- <server>` as a user runs it (the launcher's stale-jar check and its
# class-data-sharing archive included), and the same with the archive turned off
# (MCP_CHAOS_CDS=off). Servers: the built-in demo server, and @modelcontextprotocol/server-everything
# when test-peers/node_modules holds it.
# Cases run round-robin, RUNS times each (default 10); each run is killed after 30 s.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/mcp-chaos-cli/target/mcp-chaos.jar"
bench_jar="$root/benchmarks/target/benchmarks.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl mcp-chaos-cli -am)
[ -f "$bench_jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl benchmarks -am)
RUNS=${RUNS:-10}
everything="${TEST_PEERS:-$root/test-peers}/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcp-chaos-bench","version":"0"}}}'

# One run first, so that the launcher has made its archive before anything is timed.
echo "$init" | "$root/mcp-chaos" stdio --quiet -- cat >/dev/null

measure() { # $1 title, $2 server command (a shell command line)
  local server=$2
  echo "== $1: $server"
  java -cp "$bench_jar" dev.mcpchaos.bench.startup.FirstResponseTime --runs "$RUNS" \
    "server alone=$server" \
    "through mcp-chaos=$root/mcp-chaos stdio -- $server" \
    "through mcp-chaos, no CDS archive=env MCP_CHAOS_CDS=off $root/mcp-chaos stdio -- $server"
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(java -version 2>&1 | head -1), node $(node --version 2>/dev/null || echo none)"
measure "demo server" "java -jar $jar demo-server"
if [ -f "$everything" ]; then
  measure "server-everything" "node $everything stdio"
else
  echo "== server-everything: skipped, $everything is missing (cd test-peers && npm ci)"
fi
