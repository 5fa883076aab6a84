# Sourced by the bench scripts: nginx as the HTTP benchmarks' upstream and as a reverse proxy,
# configured the way a fair comparison needs it (keep-alive without a request limit, no buffering).

# nginx_upstream_conf WORK_DIR PID_FILE LISTEN_PORT BODY > upstream.conf
# One worker answering every POST /mcp with BODY (a fixed JSON-RPC result), so that the proxy in
# front of it, not the upstream, is what is measured. nginx closes a keep-alive connection after
# 1000 requests by default, and mcp-chaos then closes the client's too: no limit here.
nginx_upstream_conf() {
  local work=$1 pid_file=$2 listen_port=$3 body=$4
  cat <<CONF
worker_processes 1;
pid $pid_file;
error_log $work/upstream-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  client_body_temp_path $work;
  server {
    listen 127.0.0.1:$listen_port;
    location /mcp {
      default_type application/json;
      return 200 '$body';
    }
  }
}
CONF
}

# nginx_proxy_conf THREADS WORK_DIR LISTEN_PORT UPSTREAM_PORT > nginx-proxy.conf
nginx_proxy_conf() {
  local threads=$1 work=$2 listen_port=$3 upstream_port=$4
  cat <<CONF
worker_processes $threads;
pid $work/nginx-proxy.pid;
error_log $work/nginx-proxy-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 100000000;
  client_body_temp_path $work;
  proxy_temp_path $work;
  upstream mcp { server 127.0.0.1:$upstream_port; keepalive 256; keepalive_requests 100000000; }
  server {
    listen 127.0.0.1:$listen_port;
    location / {
      proxy_pass http://mcp;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
CONF
}
