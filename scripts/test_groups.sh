#!/usr/bin/env bash
# Runs the compiled test files (dist/test, after `npx tsc -p .`) as two `node --test` processes started together:
#   main       every test file not marked otherwise, two at a time (the CPU-bound bulk of the suite);
#   long-wait  files whose source has a line `// test-group: long-wait` (scenarios that sleep through real
#              minute-scale retry and schedule timings and use little CPU), OB_TEST_LONG_CONCURRENCY at a time (3);
#   multi-host files with a line `// test-group: multi-host` (several hosts in network namespaces, each a whole
#              cluster of processes: CPU-heavy), one at a time, after the long-wait run in the same background slot,
#              so that beside the main run there is only ever one of them;
#   main-late  every OB_TEST_LATE_EVERY-th file of the main group in sorted order (5: about a fifth; 0: none), one
#              at a time after the multi-host run in the background slot, which is otherwise done long before the main
#              run: the two runs then end at about the same time, with never more than three files running at once.
# The main run reports as it goes; the other runs' reports follow it as one block each. When a test failed, the
# last lines repeat each failure's name, place and error, so that the end of a long log says what failed. Exits
# non-zero when either run fails. `scripts/test.sh --coverage` runs this under c8: every group inherits NODE_V8_COVERAGE, so the
# coverage summary covers them all. `bash scripts/test_groups.sh --list` prints each file with its group and runs nothing;
# `bash scripts/test_groups.sh dist/test/a.test.js …` runs only the files given, grouped the same way.
set -euo pipefail
cd "$(dirname "$0")/.."

MARKER='^// test-group: long-wait'
MULTI_HOST_MARKER='^// test-group: multi-host'
long_concurrency="${OB_TEST_LONG_CONCURRENCY:-3}"
late_every="${OB_TEST_LATE_EVERY:-5}"
node_test=(node --test --test-timeout=600000)

list=''
if [ "${1:-}" = --list ]; then list=1; shift; fi
if [ $# -gt 0 ]; then all=("${@#./}"); else mapfile -t all < <(find dist/test -name '*.test.js' | sort); fi
declare -A is_long=() is_multi=()
while IFS= read -r src; do
  [ -n "$src" ] && is_long["dist/${src%.ts}.js"]=1
done < <(grep -rlE --include='*.test.ts' "$MARKER" test || true)
while IFS= read -r src; do
  [ -n "$src" ] && is_multi["dist/${src%.ts}.js"]=1
done < <(grep -rlE --include='*.test.ts' "$MULTI_HOST_MARKER" test || true)
main=() long=() multi=() late=()
n_main=0
for f in "${all[@]}"; do
  if [ -n "${is_long[$f]:-}" ]; then long+=("$f")
  elif [ -n "${is_multi[$f]:-}" ]; then multi+=("$f")
  else
    n_main=$((n_main + 1))
    if [ "$late_every" -gt 0 ] && [ $((n_main % late_every)) -eq 0 ]; then late+=("$f"); else main+=("$f"); fi
  fi
done
if [ $# -eq 0 ]; then
  for f in "${!is_long[@]}" "${!is_multi[@]}"; do
    [ -e "$f" ] || { echo "outbox: $f is marked for a test group but was not built (run npx tsc -p . first)" >&2; exit 2; }
  done
fi

if [ -n "$list" ]; then
  for f in "${main[@]}"; do echo "main       $f"; done
  for f in "${long[@]}"; do echo "long-wait  $f"; done
  for f in "${multi[@]}"; do echo "multi-host $f"; done
  for f in "${late[@]}"; do echo "main-late  $f"; done
  exit 0
fi

main_log="$(mktemp -t outbox-main.XXXXXX)"
long_log="$(mktemp -t outbox-long-wait.XXXXXX)"
multi_log="$(mktemp -t outbox-multi-host.XXXXXX)"
late_log="$(mktemp -t outbox-main-late.XXXXXX)"
long_rc_file="$(mktemp -t outbox-long-rc.XXXXXX)"
main_rc_file="$(mktemp -t outbox-main-rc.XXXXXX)"
main_pid_file="$(mktemp -t outbox-main-pid.XXXXXX)"
long_pid='' main_pid=''
logs=("$main_log" "$long_log" "$multi_log" "$late_log" "$long_rc_file" "$main_rc_file" "$main_pid_file")
stop () {
  for p in $(cat "$main_pid_file" 2>/dev/null) $main_pid $long_pid; do kill -TERM "$p" 2>/dev/null || true; done
}
trap 'stop; rm -f "${logs[@]}"; exit 130' INT TERM
trap 'rm -f "${logs[@]}"' EXIT

# Each failed test of a TAP report: its `not ok` line, where it is, and its error (up to 12 lines of it). A parent
# whose subtests failed is named without its error, which only counts them.
failures () {
  awk '
    function flush () { if (name != "") { print name; if (where != "") print "    at " where; for (i = 1; i <= n && i <= 12; i++) print "    " err[i]; if (n > 12) print "    …" } name = ""; where = ""; n = 0; inerr = 0; parent = 0 }
    /^ *not ok [0-9]+ - / { flush(); name = $0; sub(/^ */, "", name); ind = match($0, /[^ ]/) + 2; next }
    name != "" && /^ *\.\.\.$/ { flush(); next }
    name != "" {
      line = substr($0, ind)
      if (inerr && match($0, /[^ ]/) > ind) { err[++n] = substr($0, ind + 2); next }
      inerr = 0
      if (line ~ /^location: /) { where = substr(line, 11); gsub(/^\x27|\x27$/, "", where) }
      else if (line ~ /^failureType: .subtestsFailed./) { parent = 1 }
      else if (line ~ /^error: / && !parent) { v = substr(line, 8); if (v ~ /^\|/) inerr = 1; else { gsub(/^\x27|\x27$/, "", v); err[++n] = v } }
    }
    END { flush() }
  ' "$@"
}

echo "outbox: ${#main[@]} test files two at a time; beside them ${#long[@]} long-wait files ${long_concurrency} at a time," \
  "then ${#multi[@]} multi-host files one at a time, then ${#late[@]} more main files one at a time (their reports follow)"
if [ $(( ${#long[@]} + ${#multi[@]} + ${#late[@]} )) -gt 0 ]; then
  # one background slot: the long-wait run, the multi-host run, then the late main files; each exit code is kept apart
  (
    lrc=0 mrc=0 trc=0
    if [ ${#long[@]} -gt 0 ]; then "${node_test[@]}" --test-concurrency="$long_concurrency" "${long[@]}" >"$long_log" 2>&1 || lrc=$?; fi
    if [ ${#multi[@]} -gt 0 ]; then "${node_test[@]}" --test-concurrency=1 "${multi[@]}" >"$multi_log" 2>&1 || mrc=$?; fi
    if [ ${#late[@]} -gt 0 ]; then "${node_test[@]}" --test-concurrency=1 "${late[@]}" >"$late_log" 2>&1 || trc=$?; fi
    echo "$lrc $mrc $trc" >"$long_rc_file"
  ) &
  long_pid=$!
fi
main_rc=0 long_rc=0 late_rc=0
if [ ${#main[@]} -gt 0 ]; then
  # reported as it runs and kept for the summary of failures at the end
  {
    "${node_test[@]}" --test-concurrency=2 "${main[@]}" &
    echo $! >"$main_pid_file"
    rc=0; wait $! || rc=$?; echo "$rc" >"$main_rc_file"
  } | tee "$main_log" &
  main_pid=$!
  wait "$main_pid" || true
  read -r main_rc <"$main_rc_file" || main_rc=1
fi
multi_rc=0
if [ -n "$long_pid" ]; then
  wait "$long_pid" || true
  read -r long_rc multi_rc late_rc <"$long_rc_file" || { long_rc=1; multi_rc=1; late_rc=1; }
  if [ ${#long[@]} -gt 0 ]; then
    echo
    echo "──── long-wait group: ${#long[@]} files, run beside the main group (exit ${long_rc}) ────"
    cat "$long_log"
    echo "──── end of long-wait group ────"
  fi
  if [ ${#multi[@]} -gt 0 ]; then
    echo
    echo "──── multi-host group: ${#multi[@]} files, one at a time after the long-wait group (exit ${multi_rc}) ────"
    cat "$multi_log"
    echo "──── end of multi-host group ────"
  fi
  if [ ${#late[@]} -gt 0 ]; then
    echo
    echo "──── main-late group: ${#late[@]} files of the main group, one at a time after the multi-host group (exit ${late_rc}) ────"
    cat "$late_log"
    echo "──── end of main-late group ────"
  fi
fi
if [ "$main_rc" -ne 0 ] || [ "$long_rc" -ne 0 ] || [ "$multi_rc" -ne 0 ] || [ "$late_rc" -ne 0 ]; then
  echo
  echo "──── failures ────"
  for g in main:"$main_log" long-wait:"$long_log" multi-host:"$multi_log" main-late:"$late_log"; do
    found="$(failures "${g#*:}")"
    if [ -n "$found" ]; then echo "${g%%:*} group:"; echo "$found"; fi
  done
  echo "──── end of failures ────"
fi
echo "outbox: main group exit ${main_rc}, long-wait group exit ${long_rc}, multi-host group exit ${multi_rc}, main-late group exit ${late_rc}"
[ "$main_rc" -eq 0 ] && [ "$long_rc" -eq 0 ] && [ "$multi_rc" -eq 0 ] && [ "$late_rc" -eq 0 ]
