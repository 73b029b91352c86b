#!/bin/bash
# run46: gpuhash with filtered scans read directly (scan_filter.c), on one H100 lease, in calls of
# < 570 s that each run this same script on the warm machine; phases done are skipped (markers in /tmp):
#   build+install -> installcheck on the GPU -> W1-W6 full -> TPC-H SF10 load (GPU fuzzer beside it)
#   -> EXPLAIN of the 22 queries under both engines -> TPC-H pieces (native_parallel vs planner_gpu,
#   median of 3 after a warm-up, every query but q18) -> [RERUN_Q=..] 7 runs -> [PLANNING=1] planning test
# usage (device): source .gpuhost/up; .devrun/run46.sh     (DEADLINE=seconds for this call, default 565)
set -uo pipefail
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=20GB -c checkpoint_timeout=30min"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-565} - ($(date +%s) - t0) )); }
source .gpuhost/up >/dev/null 2>&1
psql -Atc 'select 1' >/dev/null || { echo "no server"; exit 1; }
if [ "$(psql -Atc 'show shared_buffers')/$(psql -Atc 'show jit')" != "16GB/off" ]; then
  gpuhost_restart >/dev/null || { echo "restart failed"; exit 1; }
fi
echo "server: $(psql -Atc "select string_agg(name || '=' || setting, ' ') from pg_settings where name in ('shared_buffers','max_parallel_workers','jit')")"
o=$OUT; L=/tmp/t46logs; mkdir -p $L /tmp/tpch-data /tmp/t46 && chmod 777 /tmp/tpch-data
call=$(( $(cat /tmp/t46.calls 2>/dev/null || echo 0) + 1 )); echo $call > /tmp/t46.calls; el "call $call"
if [ ! -f /tmp/t46.built ]; then
  nvidia-smi > $L/nvidia-smi.txt 2>&1
  make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
  make -s install >/dev/null && chown -R pgrun . 2>/dev/null && touch /tmp/t46.built; el built
fi
if [ ! -f /tmp/t46.ic ]; then
  PGOPTIONS="-c gpuhash.device=gpu" make installcheck > $L/installcheck.log 2>&1
  grep -E "^test|tests" $L/installcheck.log | grep -vE "\.\.\. ok" ; tail -2 $L/installcheck.log
  cp regression.diffs $L/ 2>/dev/null; touch /tmp/t46.ic; el installcheck
fi
if [ ! -f /tmp/t46.wdone ] && [ $(left) -gt 330 ]; then
  bench/run --scale full --cores 16 --timeout 150 --out /tmp/wfull > $L/wfull.log 2>&1; echo "W bench rc=$?"
  grep -E '^\| W|^Failures|skipped' $L/wfull.log | cut -c1-160
  (cd /tmp/wfull && tar czf $o/wfull.tgz results.json results.md *.png) && touch /tmp/t46.wdone; el "W done"
fi
if [ ! -f /tmp/t46.loaded ] && [ $(left) -gt 200 ]; then
  ( timeout 190 test/fuzz/run --device gpu --time-budget 150 --max-rows 200000 > $L/fuzz-gpu.log 2>&1; echo "exit $?" >> $L/fuzz-gpu.log ) &
  timeout $(( $(left) - 10 )) bench/run --suite tpch --sf 10 --engines native_parallel --queries 6 --runs 1 --warmup 0 \
    --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t46load > $L/tpch-load.log 2>&1
  grep -q "data ready" $L/tpch-load.log && touch /tmp/t46.loaded; grep "data ready" $L/tpch-load.log
  rm -rf /tmp/tpch-data/*; wait; tail -2 $L/fuzz-gpu.log; el "tpch loaded"
fi
if [ -f /tmp/t46.loaded ] && [ ! -f /tmp/t46.planned ]; then
  mkdir -p $L/plans; used=""
  for q in bench/tpch/queries/q*.sql; do n=$(basename $q .sql)
    for e in native "LOAD 'gpuhash'; SET gpuhash.device = gpu;"; do
      psql -X -c "SET search_path = gpuhash_tpch_10" -c "SET max_parallel_workers_per_gather = 8" -c "SET work_mem = '256MB'" \
        -c "SET jit = off" -c "${e/native/SELECT 1}" -c "EXPLAIN (COSTS OFF) $(grep -v '^--' $q | tr '\n' ' ' | sed 's/;\s*$//')"
    done > $L/plans/$n.txt 2>&1
    grep -q GpuHash $L/plans/$n.txt && used="$used ${n#q}"
  done
  echo "GpuHash node in:$used"; touch /tmp/t46.planned; el planned
fi
ALL=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,19,20,21,22
if [ -f /tmp/t46.loaded ] && [ $(left) -gt 90 ]; then
  # the queries not yet measured that fit: 4 runs x (native + gpu) of run 41's medians, x1.2, + 6 s
  pick=$(python3 - $(( $(left) - 30 )) <<'PY'
import json, os, sys
est = {1:25.6,2:8.1,3:6.4,4:2.0,5:6.0,6:3.6,7:6.1,8:6.0,9:15.0,10:10.7,11:4.5,12:4.7,13:45.5,14:5.4,15:5.9,
       16:3.9,17:32.1,19:0.65,20:8.4,21:9.5,22:0.9}
done = set()
if os.path.exists("/tmp/t46/results.json"):
    for r in json.load(open("/tmp/t46/results.json"))["results"]:
        if "median_s" in r: done.add((r["engine"], r["query"]))
budget, pick = float(sys.argv[1]), []
for q in sorted(est, key=lambda q: -est[q]):
    todo = [e for e in ("native_parallel", "planner_gpu") if (e, "q%02d" % q) not in done]
    if not todo: continue
    c = 4 * est[q] * (len(todo) / 2) * 1.2 + 6
    if c <= budget: pick.append(q); budget -= c
print(",".join(str(q) for q in sorted(pick)))
PY
)
  echo "tpch piece: queries ${pick:-none} (left $(left) s)"
  if [ -n "$pick" ]; then
    merge=""; [ -f /tmp/t46/results.json ] && merge="--merge /tmp/t46/results.json"
    timeout $(( $(left) - 15 )) bench/run --suite tpch --sf 10 --engines native_parallel,planner_gpu --queries "$pick" \
      --runs 3 --warmup 1 --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t46 $merge \
      --stop-after $(( $(left) - 60 )) 2>&1 | tee -a $L/tpch.log | grep -vE "^\| |UserWarning|ax.legend"
    el "tpch piece done"
  fi
  cp /tmp/t46/results.json /tmp/t46/results.md /tmp/t46/speedup.png $o/ 2>/dev/null
fi
if [ -n "${RERUN_Q:-}" ] && [ -f /tmp/t46.loaded ]; then
  timeout $(( $(left) - 15 )) bench/run --suite tpch --sf 10 --engines native_parallel,planner_gpu --queries "$RERUN_Q" \
    --runs 7 --warmup 1 --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t46r7 2>&1 \
    | tee -a $L/tpch-r7.log | grep -vE "UserWarning|ax.legend"
  (cd /tmp/t46r7 && tar czf $o/rerun7.tgz results.json results.md speedup.png 2>/dev/null); el "rerun done"
fi
if [ -n "${PLANNING:-}" ] && [ -f /tmp/t46.loaded ] && [ $(left) -gt 60 ]; then
  timeout $(( $(left) - 10 )) test/planning/run --tpch gpuhash_tpch_10 > $L/planning.log 2>&1; echo "planning rc=$?"
  grep -E "passed|FAIL" $L/planning.log | tail -5; el "planning done"
fi
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
cp /tmp/pg.log $L/pg.log 2>/dev/null
tar czf $o/logs-call$call.tgz -C $L . ; el done
