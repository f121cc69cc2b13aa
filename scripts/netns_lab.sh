#!/usr/bin/env bash
# The multi-host fault scenarios (test/integration/netns/): each builds hosts with addresses of their own on this
# machine (network namespaces on a bridge, test/helpers/netns/), runs NATS, Redis, gateways and engines on them,
# breaks one host's link or process while mail flows, and tears everything down after.
#
# usage: scripts/netns_lab.sh list            the scenarios
#        scripts/netns_lab.sh run <scenario>  build (npx tsc -p .) first; runs one scenario file (needs root)
#        scripts/netns_lab.sh clean           removes namespaces and bridges a killed test run left behind
#                                             (names obl<pid>…, only those whose test process is gone)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=dist/test/integration/netns
IP=$(command -v ip || echo /usr/sbin/ip)

case "${1:-}" in
  list)
    for f in test/integration/netns/*.test.ts; do basename "$f" .test.ts; done
    ;;
  run)
    [ -n "${2:-}" ] || { echo "usage: $0 run <scenario> (see $0 list)" >&2; exit 2; }
    file="$DIR/${2%.test.ts}.test.js"
    [ -e "$file" ] || { echo "$file not found: build with npx tsc -p . first (scenarios: $0 list)" >&2; exit 2; }
    [ "$(id -u)" = 0 ] || echo "outbox: not root; the scenario will be skipped (network namespaces need root)" >&2
    exec node --test --test-timeout=600000 "$file"
    ;;
  clean)
    # namespaces are obl<pid>-<host>, bridges obl<pid>; a pid still running is another run's, left alone
    for ns in $("$IP" netns list | awk '{print $1}' | grep -E '^obl[0-9]+-' || true); do
      pid=${ns#obl}; pid=${pid%%-*}
      if kill -0 "$pid" 2>/dev/null; then continue; fi
      for p in $("$IP" netns pids "$ns" 2>/dev/null || true); do kill -KILL "$p" 2>/dev/null || true; done
      "$IP" netns del "$ns" && echo "removed namespace $ns"
    done
    for br in $("$IP" -o link show type bridge | awk -F': ' '{print $2}' | grep -E '^obl[0-9]+$' || true); do
      if kill -0 "${br#obl}" 2>/dev/null; then continue; fi
      "$IP" link del "$br" && echo "removed bridge $br"
    done
    ;;
  *)
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
