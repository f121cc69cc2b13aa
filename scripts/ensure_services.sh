#!/usr/bin/env bash
# Makes sure nats-server, redis-server and redis-sentinel (the Sentinel failover test) are installed (tests spawn their own on free ports), chromium for the
# dashboard's browser tests, prometheus (with promtool) for the metrics test and the alert-rule check, and nftables
# (nft) for the packet-loss scenario of the multi-host tests (test/integration/netns/).
# Installs the Debian package when missing and apt-get is usable, and says so; never silently. Without chromium
# or prometheus (and no way to install them) the tests that need them are skipped, not failed.
set -euo pipefail
missing=()
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || missing+=(nats-server)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v redis-sentinel >/dev/null 2>&1 || missing+=(redis-sentinel)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v nft >/dev/null 2>&1 || [ -x /usr/sbin/nft ] || missing+=(nftables)
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
optional=(chromium prometheus nftables)
required=()
for p in "${missing[@]}"; do [[ " ${optional[*]} " == *" $p "* ]] || required+=("$p"); done
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "outbox: installing ${missing[*]} with apt-get (not found on PATH)"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
elif [ ${#required[@]} -eq 0 ]; then
  echo "outbox: ${missing[*]} not found; the tests that need them will be skipped (apt-get install -y ${missing[*]})" >&2
else
  echo "outbox: ${missing[*]} not found; install the Debian package(s): apt-get install -y ${missing[*]}" >&2
  exit 1
fi
