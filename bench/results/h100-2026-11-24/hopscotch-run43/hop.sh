#!/bin/bash
# GPU-host check of the hopscotch tables (issue 20).  Run from the repository
# root on a machine with an NVIDIA GPU and the CUDA toolkit (no network
# needed):   OUT=/some/dir bash .devrun/hop.sh
# Builds the core tests and the kernel benchmark, runs the hopscotch core
# tests, the core suite (--quick), compute-sanitizer memcheck, racecheck and
# synccheck over the GPU hopscotch cases, and kbench --hopscotch.  Logs go to
# $OUT (default /tmp/hop-out) and are tarred into $OUT/hop.tgz.  Each step has
# a time limit (build 120 s, hopscotch tests 90 s, core suite and sanitizers
# side by side 180 s, kbench 80 s): under 8 minutes in all.
set -uo pipefail
out=${OUT:-/tmp/hop-out}; mkdir -p "$out"
t_start=$(date +%s)
declare -a results
record() { results+=("$1: $2"); echo "== $1: $2"; }
elapsed() { echo $(( $(date +%s) - t_start )); }

cs=
for c in "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" /usr/local/cuda*/bin/compute-sanitizer \
         "$(command -v compute-sanitizer 2>/dev/null)"; do
  [ -n "$c" ] && [ -x "$c" ] && { cs=$c; break; }
done

{ nvidia-smi -L; nvcc --version 2>/dev/null | tail -2; git log --oneline -1; } 2>&1 | tee "$out/env.log"

echo "== build ($(elapsed) s)"
if timeout 120 make -j16 build/test_core build/kbench >"$out/build.log" 2>&1; then
  record build "ok ($(grep -ciE 'warning' "$out/build.log") warning lines)"
else
  record build "FAILED"; tail -30 "$out/build.log"
  tar -C "$out" -czf "$out/hop.tgz" --exclude=hop.tgz . ; exit 1
fi

echo "== test_core --filter hopscotch ($(elapsed) s)"
timeout 90 build/test_core --filter hopscotch >"$out/test-hopscotch.log" 2>&1
rc=$?; grep -E '^FAIL|^GPU' "$out/test-hopscotch.log"
grep -q '^GPU cases skipped' "$out/test-hopscotch.log" && record "GPU" "NOT USABLE: the GPU cases were skipped"
record "test_core --filter hopscotch" "$(tail -1 "$out/test-hopscotch.log") (exit $rc)"

# The core suite and memcheck run side by side (correctness only; nothing
# here is timed), then racecheck and synccheck side by side.
echo "== make check-core (--quick) and compute-sanitizer ($(elapsed) s)"
( timeout 170 make -s check-core CHECK_CORE_ARGS=--quick >"$out/check-core.log" 2>&1; echo $? >"$out/check-core.rc" ) &
core_pid=$!
san_filter=${SAN_FILTER:-mutable gpu hopscotch k32 p32,mutable gpu hopscotch k64 p64,concurrent gpu hopscotch k32 p64,concurrent gpu hopscotch k64 p32,hop_race gpu hopscotch k32 p32,hop_race gpu hopscotch k64 p64,hop_crowd gpu hopscotch,sentinels gpu hopscotch k64,duplicates gpu hopscotch k32 p64,empty gpu hopscotch k32,device_memory gpu hopscotch k64 p64}
san() {
  local tool=$1 limit=$2 extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  timeout -k 10 "$limit" "$cs" --tool "$tool" "${extra[@]}" --error-exitcode 3 \
    build/test_core --quick --filter "$san_filter" >"$out/sanitizer-$tool.log" 2>&1
  echo $? >"$out/sanitizer-$tool.rc"
}
if [ -z "$cs" ]; then
  record compute-sanitizer "NOT FOUND, skipped"
else
  san memcheck 90
  san racecheck 70 & p1=$!
  san synccheck 70 & p2=$!
  wait $p1 $p2
  for tool in memcheck racecheck synccheck; do
    f="$out/sanitizer-$tool.log"
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' "$f" | sed 's/^=* *//' | tr '\n' ' ')
    tests=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$f" | tail -1)
    grep -E '^FAIL|Invalid|Race|Hazard|hazard|Barrier|ERROR:' "$f" | grep -v 'ERROR SUMMARY' | head -10
    record "compute-sanitizer $tool" "${summary:-no summary} -- tests: ${tests:-none} -- exit $(cat "$out/sanitizer-$tool.rc")"
  done
fi
wait $core_pid
record "make check-core --quick" "$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out/check-core.log" | tail -1) (exit $(cat "$out/check-core.rc"))"
grep -E '^FAIL' "$out/check-core.log" | head -20

echo "== kbench --hopscotch ($(elapsed) s)"
timeout 80 build/kbench --hopscotch --csv "$out/kbench-hop.csv" 2>&1 | tee "$out/kbench-hop.log"
record "kbench --hopscotch" "exit ${PIPESTATUS[0]}, $(grep -vcE '^#|^method' "$out/kbench-hop.csv" 2>/dev/null || echo 0) rows"

echo
echo "== summary ($(elapsed) s in all)"
printf '%s\n' "${results[@]}" | tee "$out/summary.log"
tar -C "$out" -czf /tmp/hop.tgz . && mv /tmp/hop.tgz "$out/hop.tgz"
