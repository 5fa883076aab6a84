#!/usr/bin/env bash
# Start-up cost of `mcp-chaos stdio`: the time from launching a stdio MCP server command to the
# first line of its answer to an `initialize` request written at once, for the server alone and
# for `./mcp-chaos stdio -- <server>`, and the same through the proxy with a class-data-sharing
# archive of the proxy's classes (JDK 17: made once with -XX:ArchiveClassesAtExit, used with
# -XX:SharedArchiveFile through MCP_CHAOS_JAVA_OPTS). The launcher's own check for a stale jar is
# included, as a user pays it. Servers: the built-in demo server, and
# @modelcontextprotocol/server-everything when test-peers/node_modules holds it.
# Cases run round-robin, RUNS times each (default 10); each run is killed after 30 s.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/proxy-server/target/mcp-chaos.jar"
bench_jar="$root/benchmarks/target/benchmarks.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl proxy-server -am)
[ -f "$bench_jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl benchmarks -am)
RUNS=${RUNS:-10}
everything="${TEST_PEERS:-$root/test-peers}/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcp-chaos-bench","version":"0"}}}'

# The archive: one proxy run that relays an initialize and exits when its input ends.
archive() { # $1 archive file, $2... server command
  local jsa=$1; shift
  echo "$init" | java -XX:ArchiveClassesAtExit="$jsa" -jar "$jar" stdio -- "$@" >/dev/null 2>"$work/cds.log" || true
  [ -s "$jsa" ] || { echo "no CDS archive was written:" >&2; cat "$work/cds.log" >&2; exit 1; }
}

measure() { # $1 title, $2 server command (a shell command line)
  local server=$2 jsa="$work/$(echo "$1" | tr -c 'a-z0-9\n' '-').jsa"
  # shellcheck disable=SC2086
  archive "$jsa" $server
  echo "== $1: $server"
  java -cp "$bench_jar" dev.mcpchaos.bench.startup.FirstResponseTime --runs "$RUNS" \
    "server alone=$server" \
    "through mcp-chaos=$root/mcp-chaos stdio -- $server" \
    "through mcp-chaos, CDS archive=env MCP_CHAOS_JAVA_OPTS=-XX:SharedArchiveFile=$jsa $root/mcp-chaos stdio -- $server"
  echo "CDS archive of the proxy's classes: $(( $(stat -c %s "$jsa") / 1024 / 1024 )) MiB"
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(java -version 2>&1 | head -1), node $(node --version 2>/dev/null || echo none)"
measure "demo server" "java -jar $jar demo-server"
if [ -f "$everything" ]; then
  measure "server-everything" "node $everything stdio"
else
  echo "== server-everything: skipped, $everything is missing (cd test-peers && npm ci)"
fi
