#!/usr/bin/env bash
# The whole test suite: lint, the alert rules (promtool), typecheck + build, then unit, integration and end-to-end tests against real servers,
# ending with a coverage summary (c8, mapped back to the TypeScript sources; reported, never a failure).
set -euo pipefail
cd "$(dirname "$0")/.."
npx eslint .
bash scripts/ensure_services.sh
# the alert rules operators load (docs/operations.md#alerts)
if command -v promtool >/dev/null 2>&1; then
  promtool check rules ops/prometheus/alerts.yml
else
  echo "outbox: promtool not found; alert rules not checked (apt-get install -y prometheus)" >&2
fi
rm -rf dist
npx tsc -p .
npm run --silent build:dashboard
# every dist/test/**/*.test.js: the long-wait files in a second node --test process beside the main one
# (scripts/test_groups.sh, test/README.md); c8 covers both, as both inherit its NODE_V8_COVERAGE. --merge-async merges
# the per-process reports one at a time: the multi-host scenarios alone start hundreds of processes, and holding
# every report in memory at once exhausts the heap.
exec npx c8 --merge-async --reporter=text-summary --exclude 'dist/test/**' --exclude 'test/**' bash scripts/test_groups.sh
