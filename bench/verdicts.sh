#!/usr/bin/env bash
# The referee's verdicts under faults (issue #33): for each client (the TypeScript SDK's, the
# official Java SDK's), transport (stdio, Streamable HTTP) and rule file (examples/bad-network.yaml,
# examples/flaky-tool.yaml), run a fixed workload against @modelcontextprotocol/server-everything
# through `mcp-chaos --check`, and print one row per run: the calls as the client saw them, the
# faults that fired (from the proxy's event log), and the check report's errors, warnings and
# every check that fired with its count; then the sums. Nothing is asserted: the counts are the
# output, to compare before and after a change to the referee.
#
# The workload (bench/verdicts/ts-client.mjs, bench/verdicts/JavaSdkClient.java): initialize,
# tools/list, CALLS sequential tools/call of `echo`, each bounded by CALL_TIMEOUT_MS (a failed call
# is counted and the next goes on), then the SDK's own clean close.
#
#   bench/verdicts.sh                                  # this checkout's ./mcp-chaos
#   MCP_CHAOS=/path/to/other/checkout/mcp-chaos bench/verdicts.sh   # the same runs on other code
#
# Environment (defaults in brackets):
#   MCP_CHAOS        the launcher or any command taking mcp-chaos's arguments [./mcp-chaos here]
#   TEST_PEERS       the directory holding node_modules of test-peers/ [test-peers here]
#   CALLS [40], CALL_TIMEOUT_MS [5000], INIT_TIMEOUT_MS [30000]
#   JOURNAL [10000]  --journal for the proxy: the client.* checks run on the journal only (off: not run)
#   CLIENTS ["ts-sdk java-sdk"], TRANSPORTS ["stdio http"],
#   RULES ["examples/bad-network.yaml examples/flaky-tool.yaml"]   to run a subset
#   MCP_CHAOS_CDS [off]  the launcher's class-data archive, off so that nothing but the proxy runs
#   KEEP=1           keep the temporary directory (client output, proxy logs, reports) and print it
#
# Needs: node >= 20 with `cd test-peers && npm ci`, java + javac 17, mvn (the Java client's
# classpath is proxy-server's test classpath; the first time, Maven may fetch its dependency
# plugin), jq, setsid, ss and ps. Everything talks on 127.0.0.1 only; every process runs in a
# process group of its own, bounded in time, and is ended by that group's id when its run is over
# or the script exits. Exit code: 0 when every run completed, 1 when one broke (each named on
# stderr), 2 when something it needs is missing.
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
here="$root/bench/verdicts"

MCP_CHAOS="${MCP_CHAOS:-$root/mcp-chaos}"
TEST_PEERS="${TEST_PEERS:-$root/test-peers}"
CALLS="${CALLS:-40}"
CALL_TIMEOUT_MS="${CALL_TIMEOUT_MS:-5000}"
INIT_TIMEOUT_MS="${INIT_TIMEOUT_MS:-30000}"
JOURNAL="${JOURNAL:-10000}"
CLIENTS="${CLIENTS:-ts-sdk java-sdk}"
TRANSPORTS="${TRANSPORTS:-stdio http}"
RULES="${RULES:-examples/bad-network.yaml examples/flaky-tool.yaml}"
export MCP_CHAOS_CDS="${MCP_CHAOS_CDS:-off}"
export CALLS CALL_TIMEOUT_MS INIT_TIMEOUT_MS TEST_PEERS
# A client run may take its start, every call up to its timeout, and its close; no more.
client_limit=$(( INIT_TIMEOUT_MS / 1000 + CALLS * CALL_TIMEOUT_MS / 1000 + 30 ))
# The proxy's own end after the client's: a stdio server gets --exit-timeout (5 s) plus
# --terminate-timeout (5 s) before SIGKILL; an HTTP proxy drains for 2 s (--drain-timeout below).
proxy_limit=30

die() { echo "verdicts.sh: $*" >&2; exit 2; }

# ---- what the runs need: missing pieces fail here, loudly, before anything starts ----
for tool in node java javac jq setsid ss ps mvn timeout column; do
  command -v "$tool" >/dev/null || die "'$tool' not found on PATH (see the header of $0 for what is needed)"
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "node $(node --version) is too old (expected: >= 20, the TypeScript SDK 2.4 needs it)"
everything="$TEST_PEERS/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[ -f "$everything" ] || die "server-everything missing: $everything (run: cd $TEST_PEERS && npm ci --no-audit --no-fund)"
[ -f "$TEST_PEERS/node_modules/@modelcontextprotocol/client/package.json" ] \
  || die "the TypeScript SDK client is missing in $TEST_PEERS/node_modules (run: cd $TEST_PEERS && npm ci --no-audit --no-fund)"
[ -x "$MCP_CHAOS" ] || die "MCP_CHAOS=$MCP_CHAOS is not an executable (expected: the mcp-chaos launcher of a checkout)"
for rules in $RULES; do
  [ -f "$root/$rules" ] || [ -f "$rules" ] || die "rule file $rules not found (a relative path is read from here, then from $root)"
done

tmp="$(mktemp -d "${TMPDIR:-/tmp}/mcp-chaos-verdicts.XXXXXX")"
broken=()  # "client transport rules: why" for every run that did not complete
groups=() # process-group ids this script started; each is ended by its id, never by name

end_group() { # $1 pgid: TERM, up to 5 s to go, then KILL. Returns 0 when the group was already gone.
  local pgid=$1 i rc=1 kept=() g
  if kill -0 -- "-$pgid" 2>/dev/null; then
    kill -TERM -- "-$pgid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 -- "-$pgid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$pgid" 2>/dev/null || true
  else
    rc=0
  fi
  # Forgotten once gone: a group id is its leader's pid, and the kernel may give it out again.
  for g in ${groups[@]+"${groups[@]}"}; do [ "$g" = "$pgid" ] || kept+=("$g"); done
  groups=(${kept[@]+"${kept[@]}"})
  return $rc
}

cleanup() {
  local pgid
  for pgid in ${groups[@]+"${groups[@]}"}; do end_group "$pgid" || true; done
  # A broken run's logs are what explains it: kept whatever KEEP says.
  if [ "${KEEP:-}" = 1 ] || [ ${#broken[@]} -gt 0 ]; then
    echo "verdicts.sh: kept $tmp" >&2
  else
    rm -rf "$tmp"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start OUT ERR CMD...: CMD in a new session (so its group id is its pid and everything it starts
# stays in that group), in the background; sets $started to its pid. Returns once the group
# exists: until the child has called setsid(), a signal to the group would reach nobody.
# (setsid execs in place because a script's background job is no group leader; if it were,
# setsid would fork and $! would not be the group, which the wait below reports.)
start() {
  local out=$1 err=$2 i
  shift 2
  setsid "$@" >"$out" 2>"$err" </dev/null &
  started=$!
  groups+=("$started")
  for ((i = 0; i < 50; i++)); do
    [ "$(ps -o pgid= -p "$started" | tr -d ' ')" = "$started" ] && return 0
    kill -0 "$started" 2>/dev/null || return 0 # it ended already: its run will say so
    sleep 0.1
  done
  die "$1 did not become a process group of its own (pid $started)"
}

# wait_gone PID SECONDS: 0 when PID exited within SECONDS (its exit code in $status), else 1.
wait_gone() {
  local pid=$1 limit=$(( $2 * 10 )) i
  for ((i = 0; i < limit; i++)); do
    if ! kill -0 "$pid" 2>/dev/null; then
      status=0
      wait "$pid" 2>/dev/null || status=$?
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# listen_port PGID SECONDS: the TCP port a process of that group listens on, once it does.
# PORT=0 / --listen 127.0.0.1:0 let the kernel choose, so no port can be taken by someone else
# between a choice and its use; the port is read back from the socket table by the group's pids
# (server-everything logs the port it was given, 0, not the one it got).
listen_port() {
  local pgid=$1 limit=$(( $2 * 10 )) i pids port
  for ((i = 0; i < limit; i++)); do
    kill -0 "$pgid" 2>/dev/null || return 1 # the leader ended: nothing will listen
    pids=$(ps -e -o pid=,pgid= | awk -v g="$pgid" '$2 == g {print $1}' | paste -sd '|')
    if [ -n "$pids" ]; then
      port=$(ss -ltnpH 2>/dev/null | grep -E "pid=($pids)," | awk '{print $4}' | sed 's/.*://' | head -1)
      if [ -n "$port" ]; then echo "$port"; return 0; fi
    fi
    sleep 0.1
  done
  return 1
}

# ---- the Java client: compiled once against proxy-server's test classpath (the SDK's version) ----
echo "verdicts.sh: resolving the Java SDK client's classpath (mvn dependency:build-classpath)..." >&2
# -am so that the reactor's own modules resolve without an install; every module writes the file
# in turn and proxy-server, which depends on the others, comes last. Offline first (no network
# when the plugin is cached); online when the plugin is not there yet.
cp_file="$tmp/java-client.classpath"
dep_plugin=org.apache.maven.plugins:maven-dependency-plugin:3.6.1:build-classpath
( cd "$root" && { timeout 300 mvn -B -q -o "$dep_plugin" -pl proxy-server -am -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=test \
    || timeout 300 mvn -B -q "$dep_plugin" -pl proxy-server -am -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=test; } ) \
  >"$tmp/mvn.log" 2>&1 || { tail -20 "$tmp/mvn.log" >&2; die "mvn could not resolve proxy-server's test classpath (log above)"; }
grep -q 'io/modelcontextprotocol/sdk/mcp-core' "$cp_file" || die "proxy-server's test classpath has no MCP Java SDK (mcp-core): $cp_file"
mkdir -p "$tmp/classes"
timeout 120 javac -nowarn -d "$tmp/classes" -cp "$(cat "$cp_file")" "$here/JavaSdkClient.java" 2>"$tmp/javac.log" \
  || { cat "$tmp/javac.log" >&2; die "JavaSdkClient.java does not compile against the SDK on proxy-server's test classpath"; }
java_client=(java -Dlogback.configurationFile="$here/logback.xml" -cp "$(cat "$cp_file"):$tmp/classes" JavaSdkClient)
ts_client=(node "$here/ts-client.mjs")

# The launcher builds its jar when stale: once here, bounded, so that no run pays for a build.
timeout 600 "$MCP_CHAOS" --version >"$tmp/version.txt" 2>"$tmp/version.err" </dev/null \
  || { cat "$tmp/version.err" >&2; die "$MCP_CHAOS --version failed (log above)"; }
# Every rule of each file, by `mcp-chaos validate` (the proxy's own parser; a file it refuses stops
# here): a rule that never fired shows as 0, "not exercised", rather than missing from the row.
declare -A rule_names
for rules in $RULES; do
  file=$rules
  [ -f "$file" ] || file="$root/$rules"
  timeout 60 "$MCP_CHAOS" validate "$file" >"$tmp/validate.txt" 2>&1 </dev/null \
    || { cat "$tmp/validate.txt" >&2; die "$MCP_CHAOS validate $file refused the rule file (above)"; }
  # Lines "  NAME: FAULT-TYPE" under "FILE: N rules, seed S, valid".
  rule_names[$rules]=$(sed -n 's/^  \([^ :]*\): [a-z_]*$/\1/p' "$tmp/validate.txt" | jq -Rsc 'split("\n") | map(select(. != ""))')
  [ "${rule_names[$rules]}" != "[]" ] || die "$MCP_CHAOS validate $file listed no rules (its output: $(tr '\n' ' ' <"$tmp/validate.txt"))"
done

# A journal when asked for: the client.* checks are made on it, and the command line's default is off.
journal_opts=()
[ "$JOURNAL" != off ] && journal_opts=(--journal "$JOURNAL")

rows=() # one JSON object per run, for the table, the details and the sums

# run CLIENT TRANSPORT RULES: one run; appends to rows (and to broken when it breaks).
run() {
  local client=$1 transport=$2 rules=$3 name dir report events client_cmd pid proxy_pgid= names
  names=${rule_names[$rules]}
  name="$client-$transport-$(basename "$rules" .yaml)"
  dir="$tmp/$name"
  mkdir -p "$dir"
  report="$dir/report.json"
  events="$dir/events.ndjson"
  [ -f "$rules" ] || rules="$root/$rules"
  case $client in
    ts-sdk) client_cmd=("${ts_client[@]}") ;;
    java-sdk) client_cmd=("${java_client[@]}") ;;
    *) die "CLIENTS: '$client' (expected: ts-sdk, java-sdk)" ;;
  esac
  # Common to both transports: the rules, the referee's report, the event log (what each fault
  # did, by rule), the journal; no control API and no live view (nothing else listens or draws).
  local proxy_opts=(--quiet --no-watch --control off --rules "$rules" --check-report "$report" --events "$events" ${journal_opts[@]+"${journal_opts[@]}"})
  local why=""
  echo "verdicts.sh: $client $transport $(basename "$rules")..." >&2

  if [ "$transport" = stdio ]; then
    # The client starts the proxy, as an MCP client's config would. sh records the proxy's pid
    # and execs it, so the script can wait for the proxy to write its report and exit after the
    # client is done. The two SDKs end it differently: the TypeScript SDK closes its stdin, waits
    # 2 s, then sends SIGTERM; the Java SDK sends SIGTERM at once and waits for the exit. Either
    # way the proxy passes the end on to the server and writes the report once it has exited.
    start "$dir/client.out" "$dir/client.err" "${client_cmd[@]}" stdio -- \
      sh -c 'echo $$ >"$0"; exec "$@"' "$dir/proxy.pid" "$MCP_CHAOS" stdio "${proxy_opts[@]}" -- node "$everything" stdio
    pid=$started
    if ! wait_gone "$pid" "$client_limit"; then
      why="the client did not finish within ${client_limit}s"
    elif [ "$status" != 0 ]; then
      why="the client exited with code $status"
    fi
    if [ -s "$dir/proxy.pid" ] && ! wait_gone_foreign "$(cat "$dir/proxy.pid")" "$proxy_limit"; then
      why="${why:+$why; }the proxy was still running ${proxy_limit}s after the client"
    fi
    end_group "$pid" || why="${why:+$why; }processes outlived the run (ended by their group)"
  elif [ "$transport" = http ]; then
    local se_pgid up_port proxy_port
    start "$dir/server.out" "$dir/server.err" env PORT=0 node "$everything" streamableHttp
    se_pgid=$started
    if ! up_port=$(listen_port "$se_pgid" 20); then
      why="server-everything never listened (it ended, or 20s went by; see $dir/server.out)"
    else
      start "$dir/proxy.out" "$dir/proxy.err" "$MCP_CHAOS" http --listen 127.0.0.1:0 \
        --upstream "http://127.0.0.1:$up_port/mcp" --drain-timeout 2s "${proxy_opts[@]}"
      proxy_pgid=$started
      if ! proxy_port=$(listen_port "$proxy_pgid" 30); then
        why="the proxy never listened (it ended, or 30s went by; see $dir/proxy.err)"
      else
        start "$dir/client.out" "$dir/client.err" "${client_cmd[@]}" http "http://127.0.0.1:$proxy_port/mcp"
        pid=$started
        if ! wait_gone "$pid" "$client_limit"; then
          why="the client did not finish within ${client_limit}s"
        elif [ "$status" != 0 ]; then
          why="the client exited with code $status"
        fi
        end_group "$pid" || why="${why:+$why; }client processes outlived the run"
      fi
      # SIGTERM: the proxy drains (2 s at most), writes the report and exits 0 (docs/cli.md).
      kill -TERM -- "-$proxy_pgid" 2>/dev/null || true
      if ! wait_gone "$proxy_pgid" "$proxy_limit"; then
        why="${why:+$why; }the proxy did not exit within ${proxy_limit}s of SIGTERM"
      elif [ "$status" != 0 ]; then
        why="${why:+$why; }the proxy exited with code $status"
      fi
      end_group "$proxy_pgid" || true
    fi
    end_group "$se_pgid" || true
  else
    die "TRANSPORTS: '$transport' (expected: stdio, http)"
  fi

  # ---- what the client saw, and what the referee said ----
  local summary
  summary=$(jq -Rc 'fromjson? | select(type == "object" and has("summary")) | .summary' "$dir/client.out" 2>/dev/null | tail -1 || true)
  if [ -z "$summary" ]; then
    why="${why:+$why; }the client printed no summary"
    summary='{}'
  elif [ "$(jq -r '.initialize' <<<"$summary")" != ok ]; then
    why="${why:+$why; }initialize failed: $(jq -r '.initialize' <<<"$summary")"
  fi
  if ! jq -e '.checks | type == "array"' "$report" >/dev/null 2>&1; then
    why="${why:+$why; }no check report ($report missing or not the report's JSON)"
    echo '{"checks":[]}' >"$report" # no errors or warnings keys: the row shows "-", not 0
  fi
  [ -f "$events" ] || : >"$events"
  # Whether the client.* checks ran: a report that says it (a "skipped" entry at the top, or a
  # check with "skipped", or status "skipped" or "not_run" as reports say since #33) is believed. Otherwise it follows from --journal: the
  # report of the code this script was written on does not say, and its CLI gives the referee the
  # journal whenever both are on (InterceptorSetup: referee.judgeClientsBy).
  local client_checks
  client_checks=$(jq -r --arg journal "$JOURNAL" '
      ([.skipped // empty | if type == "array" then .[] else . end | tostring]
       + [.checks[] | select(.id | startswith("client.")) | select(has("skipped") or .status == "skipped" or .status == "not_run")
          | "\(.id): \(.not_run // .skipped // .reason // "skipped")"]) as $s
      | if ($s | length) > 0 then "skipped: " + ($s | join("; "))
        elif $journal == "off" then "not run (journal off)"
        else "ran (journal \($journal))" end' "$report")
  rows+=("$(jq -nc --arg client "$client" --arg transport "$transport" --arg rules "$(basename "$rules")" \
      --argjson summary "$summary" --slurpfile report "$report" --arg clientChecks "$client_checks" \
      --arg run "$([ -z "$why" ] && echo ok || echo BROKEN)" \
      --argjson faults "$(jq -s --argjson names "$names" '($names | map({key: ., value: 0}) | from_entries)
          + ([.[] | select(.event == "fault") | .rule] | group_by(.) | map({key: .[0], value: length}) | from_entries)' "$events")" \
      '{client: $client, transport: $transport, rules: $rules, summary: $summary, faults: $faults,
        messages: $report[0].messages, errors: ($report[0].errors // "-"), warnings: ($report[0].warnings // "-"),
        dropped: $report[0].dropped, untracked: $report[0].untracked,
        otherKeys: ($report[0] | keys - ["messages", "errors", "warnings", "dropped", "untracked", "checks"]),
        fired: [$report[0].checks[] | select(.count > 0) | {id, severity, count,
                first: ((.violations[0] // {}) | "\(.detail // "") [\(.dir // "")] \(.message // "" | .[0:160])")}],
        clientChecks: $clientChecks, run: $run}')")
  [ -z "$why" ] || broken+=("$client $transport $(basename "$rules"): $why (logs in $dir)")
}

# wait_gone_foreign PID SECONDS: like wait_gone, for a process that is not this shell's child
# (the stdio proxy is the client's), so no exit code.
wait_gone_foreign() {
  local pid=$1 limit=$(( $2 * 10 )) i
  for ((i = 0; i < limit; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  return 1
}

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); $(java -version 2>&1 | head -1); node $(node --version)"
echo "mcp-chaos: $MCP_CHAOS ($(head -1 "$tmp/version.txt")); commit $(git -C "$(dirname "$(readlink -f "$MCP_CHAOS")")" describe --always --dirty 2>/dev/null || echo unknown)"
echo "server-everything $(jq -r .version "$TEST_PEERS/node_modules/@modelcontextprotocol/server-everything/package.json"), TypeScript SDK client $(jq -r .version "$TEST_PEERS/node_modules/@modelcontextprotocol/client/package.json"), Java SDK client $(grep -o 'io/modelcontextprotocol/sdk/mcp-core/[^/]*' "$cp_file" | head -1 | cut -d/ -f5)"
echo "workload: initialize, tools/list, $CALLS x tools/call echo (each ${CALL_TIMEOUT_MS} ms at most), close; proxy: --check --journal $JOURNAL, the rule file's own seed"
echo

for rules in $RULES; do
  for transport in $TRANSPORTS; do
    for client in $CLIENTS; do
      run "$client" "$transport" "$rules"
    done
  done
done

# ---- the table ----
all=$(printf '%s\n' "${rows[@]}" | jq -s .)
echo "calls as the client saw them: ok (the right echo), isError (a tool error result), failed (an"
echo "exception: JSON-RPC error or timeout), wrong (a result with another call's text)."
echo "faults fired: fault events per rule in the proxy's event log (0: the rule never acted, so it was not"
echo "exercised). errors, warnings, checks fired: the check report (--check-report). client.*: whether the"
echo "journal-based client checks ran."
echo
jq -r '
  (["client", "transport", "rules", "ok", "isError", "failed", "wrong", "errors", "warnings", "checks fired", "faults fired", "client.*", "run"] | @tsv),
  (.[] | [.client, .transport, .rules, (.summary.ok // "-"), (.summary.isError // "-"), (.summary.failed // "-"),
          (.summary.wrong // "-"), .errors, .warnings,
          ([.fired[] | "\(.id)=\(.count)"] | join(" ") | if . == "" then "none" else . end),
          ([.faults | to_entries[] | "\(.key)=\(.value)"] | join(" ") | if . == "" then "none" else . end),
          .clientChecks, .run] | @tsv),
  (["sum", "", "", ([.[].summary.ok // 0] | add), ([.[].summary.isError // 0] | add), ([.[].summary.failed // 0] | add),
    ([.[].summary.wrong // 0] | add), ([.[].errors | numbers] | add // "-"), ([.[].warnings | numbers] | add // "-"),
    ([.[].fired[]] | group_by(.id) | map("\(.[0].id)=\(map(.count) | add)") | join(" ") | if . == "" then "none" else . end),
    ([.[].faults | to_entries[]] | group_by(.key) | map("\(.[0].key)=\(map(.value) | add)") | join(" ")), "",
    (if all(.[]; .run == "ok") then "" else "NOT ALL RUNS OK" end)] | @tsv)
' <<<"$all" | column -t -s $'\t'

echo
echo "details per run: failed calls by kind, messages the referee saw, and each fired check's first violation"
jq -r '.[] | "\(.client) \(.transport) \(.rules): failures \(.summary.failures // {} | tostring), close \(.summary.close // "-"), messages \(.messages), dropped \(.dropped), untracked \(.untracked)\(if (.otherKeys | length) > 0 then ", report also has: " + (.otherKeys | join(", ")) else "" end)",
  (.fired[] | "  \(.severity) \(.id) x\(.count): \(.first)")' <<<"$all"

if [ ${#broken[@]} -gt 0 ]; then
  echo >&2
  for b in "${broken[@]}"; do echo "verdicts.sh: BROKEN RUN: $b" >&2; done
  echo "verdicts.sh: ${#broken[@]} run(s) did not complete; their rows above are not counts to trust" >&2
  exit 1
fi
