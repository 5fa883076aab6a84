# Sourced by the HTTP bench scripts: haproxy as a reverse proxy beside nginx, configured the way
# bench/lib/nginx.sh configures nginx for a fair comparison (upstream connections kept alive and
# reused, no request limit on them).

# haproxy_bin: prints the path of haproxy, installing Debian's package first when it is missing
# and this runs as root with apt-get; prints nothing when there is none to be had.
haproxy_bin() {
  local bin
  bin=$(command -v haproxy || echo /usr/sbin/haproxy)
  if [ ! -x "$bin" ] && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    echo "installing haproxy (apt-get install haproxy) ..." >&2
    apt-get install -y -q haproxy > /dev/null 2>&1 \
      || (apt-get update -q > /dev/null 2>&1 && apt-get install -y -q haproxy > /dev/null 2>&1) || true
  fi
  [ -x "$bin" ] && echo "$bin"
  return 0
}

# haproxy_conf THREADS WORK_DIR LISTEN_PORT UPSTREAM_PORT > haproxy.cfg
# THREADS threads (nbthread) in one process, which writes its PID to WORK_DIR/haproxy.pid once
# started with -D. "http-reuse always" keeps the upstream connections alive for any client, as
# nginx's "keepalive" pool does.
haproxy_conf() {
  local threads=$1 work=$2 listen_port=$3 upstream_port=$4
  cat <<CONF
global
  nbthread $threads
  pidfile $work/haproxy.pid
  maxconn 5000
defaults
  mode http
  option http-keep-alive
  timeout connect 5s
  timeout client 60s
  timeout server 60s
frontend mcp
  bind 127.0.0.1:$listen_port
  default_backend upstream
backend upstream
  http-reuse always
  server up 127.0.0.1:$upstream_port
CONF
}
