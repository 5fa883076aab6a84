#!/usr/bin/env bash
# Requests/s and latency of MCP-style JSON-RPC POSTs, direct to an upstream and through
# `mcp-chaos http` (no rules), side by side in one run. The upstream is nginx answering every
# POST /mcp with a fixed JSON-RPC result, so the proxy, not the upstream, is what is measured.
# The load generator is wrk (Debian package). Everything on 127.0.0.1; each case runs DURATION.
# Needs: nginx, wrk (apt-get install nginx-light wrk), a JDK and Maven.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
jar="$root/proxy-server/target/mcp-chaos.jar"
[ -f "$jar" ] || (cd "$root" && mvn -B -q -DskipTests package -pl proxy-server -am)
command -v wrk >/dev/null || { echo "wrk is needed: apt-get install wrk" >&2; exit 1; }
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || { echo "nginx is needed: apt-get install nginx-light" >&2; exit 1; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-32}
UPSTREAM_PORT=${UPSTREAM_PORT:-39180}
PROXY_PORT=${PROXY_PORT:-39181}
work="$(mktemp -d)"
cleanup() {
  [ -n "${proxy_pid:-}" ] && kill "$proxy_pid" 2>/dev/null || true
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work;
  server {
    listen 127.0.0.1:$UPSTREAM_PORT;
    location /mcp {
      default_type application/json;
      return 200 '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"pong"}],"isError":false}}';
    }
  }
}
CONF
"$NGINX" -c "$work/nginx.conf"

java ${MCP_CHAOS_JAVA_OPTS:-} -jar "$jar" http --control off --listen 127.0.0.1:$PROXY_PORT \
  --upstream http://127.0.0.1:$UPSTREAM_PORT/mcp 2> "$work/proxy.log" &
proxy_pid=$!
for _ in $(seq 1 100); do
  grep -q "listening on" "$work/proxy.log" 2>/dev/null && break
  sleep 0.1
done

cat > "$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}}}'
LUA

run() { # $1 label, $2 url
  local out
  out=$(wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$work/post.lua" "$2")
  local rps p50 p99
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1=="50%" {print $2}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  printf '%-10s %12s req/s   p50 %8s   p99 %8s\n' "$1" "$rps" "$p50" "$p99"
  echo "$rps" > "$work/$1.rps"
}

echo "machine: $(nproc) cores; $CONNECTIONS connections, $DURATION per case, wrk -t2"
run warmup "http://127.0.0.1:$PROXY_PORT/mcp" > /dev/null
run direct "http://127.0.0.1:$UPSTREAM_PORT/mcp"
run mcp-chaos "http://127.0.0.1:$PROXY_PORT/mcp"
python3 -c "import sys; d=float(open('$work/direct.rps').read()); p=float(open('$work/mcp-chaos.rps').read()); print(f'ratio mcp-chaos/direct: {p/d:.2f}')"
