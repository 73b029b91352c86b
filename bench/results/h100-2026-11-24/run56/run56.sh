#!/bin/bash
# run56: run47.sh at the GROUP BY and chained-batches code; QUERIES defaults to the queries whose
# EXPLAIN shows a GpuHash node with gpuhash loaded (q18 left out: its runs do not fit), then q03, q21.
# (run47's header, from its second line:)
# and 46): build; installcheck and the fuzzer on the GPU beside the TPC-H SF10 load; EXPLAIN of the
# 22 queries under both engines; then TPC-H medians of 3 after a warm-up, native_parallel against
# planner_gpu, for the queries in $QUERIES (in that order) until the deadline.
# usage (device): bash .devrun/run47.sh      QUERIES=21,3,7,2,5,... DEADLINE=570 PLANNING=1 FUZZ=0
set -uo pipefail
export PYTHONUNBUFFERED=1
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=8GB -c checkpoint_timeout=30min"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-570} - ($(date +%s) - t0) )); }
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show shared_buffers' 2>/dev/null)/$(psql -Atc 'show jit' 2>/dev/null)" != "16GB/off" ]; then
  gpuhost_restart >/dev/null 2>&1 || { echo "restart failed"; exit 1; }
fi
echo "server: $(psql -Atc "select string_agg(name || '=' || setting, ' ') from pg_settings where name in ('shared_buffers','max_parallel_workers','jit','max_wal_size')")"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')  disk: $(df -h /tmp | tail -1)"
o=$OUT; L=/tmp/t56logs; mkdir -p $L $L/plans /tmp/tpch-data /tmp/t56 && chmod 777 /tmp/tpch-data
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $L/gpu.txt
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; el built
( PGOPTIONS="-c gpuhash.device=gpu" make installcheck > $L/installcheck.log 2>&1; cp regression.diffs $L/ 2>/dev/null ) &
ic=$!
fz=""
if [ "${FUZZ:-1}" = 1 ]; then
  ( timeout 200 test/fuzz/run --device gpu --time-budget 120 --max-rows 100000 --verbose > $L/fuzz-gpu.log 2>&1; echo "exit $?" >> $L/fuzz-gpu.log ) &
  fz=$!
fi
bench/run --suite tpch --sf 10 --engines native_parallel --queries 6 --runs 1 --warmup 0 \
  --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t56load > $L/tpch-load.log 2>&1
grep "data ready" $L/tpch-load.log; rm -rf /tmp/tpch-data/*; el "tpch loaded; disk: $(df -h /tmp | tail -1)"
wait $ic; grep -E "^test|tests" $L/installcheck.log | grep -v "\.\.\. ok"; el installcheck
[ -n "$fz" ] && { wait $fz; tail -2 $L/fuzz-gpu.log; el fuzz; }
used=""
for q in bench/tpch/queries/q*.sql; do n=$(basename $q .sql)
  for e in native "LOAD 'gpuhash'; SET gpuhash.device = gpu;"; do
    psql -X -c "SET search_path = gpuhash_tpch_10" -c "SET max_parallel_workers_per_gather = 8" -c "SET work_mem = '256MB'" \
      -c "SET jit = off" -c "${e/native/SELECT 1}" -c "EXPLAIN (VERBOSE, COSTS OFF) $(grep -v '^--' $q | tr '\n' ' ' | sed 's/;\s*$//')"
  done > $L/plans/$n.txt 2>&1
  grep -q GpuHash $L/plans/$n.txt && used="$used ${n#q}"
done
echo "GpuHash node in:$used"; el planned
for n in $used; do grep -q "Outer Side: pairs" $L/plans/q$n.txt && echo "chained batches in q$n"; done
auto=$(for n in $used; do [ "$n" != 18 ] && echo -n "$((10#$n)),"; done)
QUERIES=${QUERIES:-${auto}3,21}
if [ -n "${PLANNING:-}" ]; then
  timeout ${PLANNING_SECONDS:-60} test/planning/run --tpch gpuhash_tpch_10 --sessions ${PLANNING_SESSIONS:-11} > $L/planning.log 2>&1
  echo "planning rc=$?"; grep -E "passed|FAIL|over" $L/planning.log | tail -12; el planning
fi
timeout $(( $(left) - 10 )) bench/run --suite tpch --sf 10 --engines native_parallel,planner_gpu --queries "${QUERIES:-21,3,7,2,5}" \
  --runs 3 --warmup 1 --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t56 \
  --stop-after $(( $(left) - 45 )) 2>&1 | tee $L/tpch.log | grep -vE "UserWarning|ax.legend"
el "tpch done"
cp /tmp/t56/results.json /tmp/t56/results.md /tmp/t56/speedup.png $o/ 2>/dev/null
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
cp /tmp/pg.log $L/pg.log 2>/dev/null
tar czf $o/logs.tgz -C $L . ; el "done; disk: $(df -h /tmp | tail -1)"
