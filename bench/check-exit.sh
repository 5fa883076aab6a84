#!/usr/bin/env bash
# What --check costs at exit: the time from the client closing the proxy's stdin to the proxy's
# exit, for `mcp-chaos stdio -- <server>` without and with --check (and with --check-report and
# --check-junit, which write files at exit). The server is a small sh script that answers
# initialize, tools/list (one tool with an input schema, so the schema checks run) and tools/call,
# and exits when its stdin ends. The client (python) does that conversation, waiting for each
# answer, then closes stdin at once (a session as short as it gets: the proxy's start-up work may
# still be going on) or, in the "2 s session" case, 2 s after the last answer; and waits for the
# proxy to exit. Also printed: the time from start to the answer to initialize.
#
# Every case runs RUNS times (default 7), round-robin with the others, and the median and every
# run are printed. Each run is killed after 40 s. Traffic is on pipes only.
#
# By default the proxy is the launcher ./mcp-chaos, as a user runs it (with its class-data
# archive). COMPARE="before=/path/a.jar after=/path/b.jar" runs each jar with `java $JAVA_OPTS -jar`
# instead (or, for a path that is not a .jar, runs it as a launcher), interleaved run by run, so
# that a busy machine weighs on both alike.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
RUNS=${RUNS:-7}
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT

proxies=()
if [ -n "${COMPARE:-}" ]; then
  for pair in $COMPARE; do
    case "${pair#*=}" in
      *.jar) proxies+=("${pair%%=*}=java ${JAVA_OPTS:-} -Xlog:disable -Xlog:all=warning:stderr -jar ${pair#*=}") ;;
      *) proxies+=("$pair") ;; # a launcher, such as ./mcp-chaos of another checkout
    esac
  done
else
  proxies+=("mcp-chaos=$root/mcp-chaos")
  # One run first, so that the launcher has built the jar and made its archive before anything is timed.
  echo '{}' | "$root/mcp-chaos" stdio --quiet -- cat >/dev/null 2>&1 || true
fi

cat >"$work/server.sh" <<'SH'
# A stdio MCP server in sh: one answer per request, in order; exits when its stdin ends.
while IFS= read -r line; do
  case "$line" in
    *'"method":"initialize"'*)
      printf '%s\n' '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}' ;;
    *'"method":"tools/list"'*)
      printf '%s\n' '{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"m":{"type":"string"}},"required":["m"]}}]}}' ;;
    *'"method":"tools/call"'*)
      printf '%s\n' '{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}' ;;
  esac
done
SH

python3 - "$RUNS" "$work" "${proxies[@]}" <<'PY'
import os, shlex, statistics, subprocess, sys, time

runs, work, proxies = int(sys.argv[1]), sys.argv[2], [p.split("=", 1) for p in sys.argv[3:]]
server = ["sh", os.path.join(work, "server.sh")]
LINES = [
    ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},'
     '"clientInfo":{"name":"bench","version":"0"}}}', '"id":1'),
    ('{"jsonrpc":"2.0","method":"notifications/initialized"}', None),
    ('{"jsonrpc":"2.0","id":2,"method":"tools/list"}', '"id":2'),
    ('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"m":"hi"}}}', '"id":3'),
]
reports = ["--check-report", os.path.join(work, "r.json"), "--check-junit", os.path.join(work, "r.xml")]
CASES = [("plain", [], 0), ("--check", ["--check"], 0), ("--check + report files", ["--check"] + reports, 0),
         ("--check, 2 s session", ["--check"], 2)]


def once(command, idle):
    """(ms from closing stdin to exit, ms from start to the answer to initialize)"""
    started = time.monotonic()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        first = None
        for line, answer in LINES:
            proc.stdin.write((line + "\n").encode())
            proc.stdin.flush()
            if answer:
                got = proc.stdout.readline().decode()
                if answer not in got:
                    sys.exit("%s: expected an answer with %s, got %r" % (command, answer, got))
                first = first or time.monotonic()
        time.sleep(idle)
        closed = time.monotonic()
        proc.stdin.close()
        code = proc.wait(timeout=40)
        exited = time.monotonic()
        if code != 0:
            sys.exit("%s: exited with code %d" % (command, code))
        return (exited - closed) * 1000, (first - started) * 1000
    finally:
        if proc.poll() is None:
            proc.kill()


results = {}
for _ in range(runs):
    for label, proxy in proxies:
        for name, options, idle in CASES:
            command = shlex.split(proxy) + ["stdio", "--quiet"] + options + ["--"] + server
            results.setdefault((label, name), []).append(once(command, idle))

with open("/proc/loadavg") as f:
    load = " ".join(f.read().split()[:3])
java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
print(f"machine: {os.cpu_count()} cores, load average {load} (at the end), {java}; {runs} runs of each case")
for label, proxy in proxies:
    print(f"{label}: {proxy}")
    for name, _, _ in CASES:
        exits = [e for e, _ in results[(label, name)]]
        starts = [s for _, s in results[(label, name)]]
        print(f"  {name:<24} stdin closed -> exit: median {statistics.median(exits):5.0f} ms "
              f"(runs {', '.join(f'{x:.0f}' for x in exits)});  start -> initialize answered: median "
              f"{statistics.median(starts):5.0f} ms")
PY
