#!/usr/bin/env bash
# The whole test suite: typecheck + build, then unit, integration and end-to-end tests against real servers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure_services.sh
rm -rf dist
npx tsc -p .
npm run --silent build:dashboard
mapfile -t files < <(find dist/test -name '*.test.js' | sort)
exec node --test --test-concurrency=2 --test-timeout=600000 "${files[@]}"
