#!/usr/bin/env bash
# The whole test suite: lint, the alert rules (promtool), typecheck + build, then unit, integration and end-to-end tests against real servers.
# With --coverage (`npm run test:coverage`) it ends with a coverage summary (c8, mapped back to the TypeScript sources; reported,
# never a failure). Without it by default: coverage costs about a fifth more CPU in every process, and the suite runs
# near its time limit on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
coverage=0
if [ "${1:-}" = --coverage ]; then coverage=1; fi
npx eslint .
# the OpenAPI document is valid OpenAPI 3.1 (redocly.yaml says which rules do not apply and why); an error fails the run
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx redocly lint --format=summary docs/openapi.json
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
# every dist/test/**/*.test.js in its group (scripts/test_groups.sh, test/README.md). Under c8 every group inherits its
# NODE_V8_COVERAGE; --merge-async merges the per-process reports one at a time: the multi-host scenarios alone start
# hundreds of processes, and holding every report in memory at once exhausts the heap.
if [ "$coverage" = 1 ]; then
  exec npx c8 --merge-async --reporter=text-summary --exclude 'dist/test/**' --exclude 'test/**' bash scripts/test_groups.sh
fi
exec bash scripts/test_groups.sh
