#!/usr/bin/env bash
# A loopback Outbox cluster for trying scale-out on one machine:
#   3 NATS nodes with JetStream (clients 14222-14224, routes 16222-16224), one Redis (16379),
#   2 gateways (HTTP 18080, 18081) and 3 engines, all background processes.
# Data, logs and pid files live under ./var/cluster/. `stop` ends only the processes whose pid files it wrote.
# Settings: config/cluster.example.env, or the file OB_CLUSTER_ENV names. Build first: npx tsc -p .
#
# usage: scripts/cluster.sh start|stop|status
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=./var/cluster
ENV_FILE=${OB_CLUSTER_ENV:-config/cluster.example.env}
NATS_BIN=$(command -v nats-server || echo /usr/sbin/nats-server)
REDIS_BIN=$(command -v redis-server || echo /usr/bin/redis-server)
NODES=(1 2 3)
GATEWAYS=(1 2)
ENGINES=(1 2 3)

# Running, and still the program this script started under that pid (a pid may be reused after a reboot).
alive () {
  [ -f "$DIR/$1.pid" ] || return 1
  local pid; pid=$(cat "$DIR/$1.pid")
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qE 'nats-server|redis-server|dist/cli/main.js'
}

launch () { # name, command...
  local name=$1; shift
  if alive "$name"; then echo "$name already running (pid $(cat "$DIR/$name.pid"))"; return; fi
  nohup "$@" >"$DIR/$name.log" 2>&1 &
  echo $! >"$DIR/$name.pid"
  echo "$name started (pid $!, log $DIR/$name.log)"
}

wait_port () {
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "nothing listens on port $1; see the logs under $DIR" >&2
  return 1
}

nats_conf () { # node number
  local i=$1
  cat <<CONF
server_name: n$i
listen: 127.0.0.1:$((14221 + i))
http: 127.0.0.1:$((18221 + i))
jetstream { store_dir: "$DIR/n$i" }
cluster {
  name: outbox
  listen: 127.0.0.1:$((16221 + i))
  routes: [nats://127.0.0.1:16222, nats://127.0.0.1:16223, nats://127.0.0.1:16224]
}
CONF
}

wait_meta_leader () { # R3 streams can only be created once the JetStream meta group elected a leader
  for _ in $(seq 1 200); do
    if curl -sf http://127.0.0.1:18222/jsz | grep -q '"leader"'; then return 0; fi
    sleep 0.1
  done
  echo "the NATS cluster elected no JetStream meta leader; see $DIR/nats-n*.log" >&2
  return 1
}

# After a restart on existing data every stream and KV bucket elects its own leader; until then requests to it
# time out, so Outbox processes start only once all of them have one.
streams_led () {
  curl -sf 'http://127.0.0.1:18222/jsz?accounts=true&streams=true' | node -e '
    let s = ""; process.stdin.on("data", (d) => { s += d }).on("end", () => {
      const streams = (JSON.parse(s).account_details ?? []).flatMap((a) => a.stream_detail ?? [])
      process.exit(streams.every((x) => x.cluster?.leader) ? 0 : 1)
    })'
}

wait_streams_led () {
  for _ in $(seq 1 300); do streams_led && return 0; sleep 0.1; done
  echo "some streams elected no leader within 30 s; see $DIR/nats-n*.log" >&2
  return 1
}

outbox () { # name, role, extra env...
  local name=$1 role=$2; shift 2
  launch "$name" env $(grep -Ev '^\s*(#|$)' "$ENV_FILE" | xargs) OB_ROLE="$role" "$@" node dist/cli/main.js start
}

start () {
  [ -f dist/cli/main.js ] || { echo "build first: npx tsc -p ." >&2; exit 1; }
  mkdir -p "$DIR/redis"
  for i in "${NODES[@]}"; do
    mkdir -p "$DIR/n$i"
    nats_conf "$i" >"$DIR/nats-n$i.conf"
    launch "nats-n$i" "$NATS_BIN" -c "$DIR/nats-n$i.conf"
  done
  launch redis "$REDIS_BIN" --port 16379 --bind 127.0.0.1 --dir "$DIR/redis" --appendonly yes --save ''
  for p in 14222 14223 14224 16379; do wait_port "$p"; done
  wait_meta_leader
  wait_streams_led
  for i in "${GATEWAYS[@]}"; do outbox "gateway-$i" gateway OB_HTTP_PORT=$((18079 + i)) OB_SMTP_SUBMISSION_PORT=$((2586 + i)); done
  for i in "${ENGINES[@]}"; do outbox "engine-$i" engine OB_METRICS_PORT=$((19463 + i)); done
  for i in "${GATEWAYS[@]}"; do wait_port $((18079 + i)); done
  echo "gateways: http://127.0.0.1:18080 http://127.0.0.1:18081 (readiness at /readyz; put a load balancer in front)"
  echo "metrics: /metrics on each gateway port, and on 127.0.0.1:19464-19466 for the engines"
}

stop () {
  # Outbox processes first (they drain), NATS and Redis last.
  local order=()
  for i in "${GATEWAYS[@]}"; do order+=("gateway-$i"); done
  for i in "${ENGINES[@]}"; do order+=("engine-$i"); done
  for i in "${NODES[@]}"; do order+=("nats-n$i"); done
  order+=(redis)
  for name in "${order[@]}"; do
    if alive "$name"; then
      local pid; pid=$(cat "$DIR/$name.pid")
      kill -TERM "$pid"
      for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; echo "$name killed after 20 s"; else echo "$name stopped"; fi
    fi
    rm -f "$DIR/$name.pid"
  done
}

status () {
  for name in nats-n1 nats-n2 nats-n3 redis gateway-1 gateway-2 engine-1 engine-2 engine-3; do
    if alive "$name"; then echo "$name running (pid $(cat "$DIR/$name.pid"))"; else echo "$name stopped"; fi
  done
}

mkdir -p "$DIR"
case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
