#!/usr/bin/env bash
# Runs the compiled test files (dist/test, after `npx tsc -p .`) as two `node --test` processes started together:
#   main       every test file not marked otherwise, two at a time (the CPU-bound bulk of the suite);
#   long-wait  files whose source has a line `// test-group: long-wait` (scenarios that sleep through real
#              minute-scale retry and schedule timings and use little CPU), OB_TEST_LONG_CONCURRENCY at a time (3).
# The main run reports as it goes; the long-wait run's report follows it as one block. Exits non-zero when
# either run fails. `scripts/test.sh` runs this under c8: both processes inherit NODE_V8_COVERAGE, so the coverage
# summary covers both. `bash scripts/test_groups.sh --list` prints each file with its group and runs nothing;
# `bash scripts/test_groups.sh dist/test/a.test.js …` runs only the files given, grouped the same way.
set -euo pipefail
cd "$(dirname "$0")/.."

MARKER='^// test-group: long-wait'
long_concurrency="${OB_TEST_LONG_CONCURRENCY:-3}"
node_test=(node --test --test-timeout=600000)

list=''
if [ "${1:-}" = --list ]; then list=1; shift; fi
if [ $# -gt 0 ]; then all=("${@#./}"); else mapfile -t all < <(find dist/test -name '*.test.js' | sort); fi
declare -A is_long=()
while IFS= read -r src; do
  [ -n "$src" ] && is_long["dist/${src%.ts}.js"]=1
done < <(grep -rlE --include='*.test.ts' "$MARKER" test || true)
main=() long=()
for f in "${all[@]}"; do
  if [ -n "${is_long[$f]:-}" ]; then long+=("$f"); else main+=("$f"); fi
done
if [ $# -eq 0 ]; then
  for f in "${!is_long[@]}"; do
    [ -e "$f" ] || { echo "outbox: $f is marked long-wait but was not built (run npx tsc -p . first)" >&2; exit 2; }
  done
fi

if [ -n "$list" ]; then
  for f in "${main[@]}"; do echo "main       $f"; done
  for f in "${long[@]}"; do echo "long-wait  $f"; done
  exit 0
fi

long_log="$(mktemp -t outbox-long-wait.XXXXXX)"
long_pid='' main_pid=''
stop () {
  for p in $main_pid $long_pid; do kill -TERM "$p" 2>/dev/null || true; done
}
trap 'stop; rm -f "$long_log"; exit 130' INT TERM
trap 'rm -f "$long_log"' EXIT

echo "outbox: ${#main[@]} test files two at a time; beside them ${#long[@]} long-wait files ${long_concurrency} at a time (their report follows)"
if [ ${#long[@]} -gt 0 ]; then
  "${node_test[@]}" --test-concurrency="$long_concurrency" "${long[@]}" >"$long_log" 2>&1 &
  long_pid=$!
fi
main_rc=0 long_rc=0
if [ ${#main[@]} -gt 0 ]; then
  "${node_test[@]}" --test-concurrency=2 "${main[@]}" &
  main_pid=$!
  wait "$main_pid" || main_rc=$?
fi
if [ -n "$long_pid" ]; then
  wait "$long_pid" || long_rc=$?
  echo
  echo "──── long-wait group: ${#long[@]} files, run beside the main group (exit ${long_rc}) ────"
  cat "$long_log"
  echo "──── end of long-wait group ────"
fi
echo "outbox: main group exit ${main_rc}, long-wait group exit ${long_rc}"
[ "$main_rc" -eq 0 ] && [ "$long_rc" -eq 0 ]
