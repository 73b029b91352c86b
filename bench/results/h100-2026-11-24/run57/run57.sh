#!/bin/bash
# run57: one call on a fresh H100 machine at the chained-lookup cost fix: build; W1 and W8 full
# (native_parallel, planner_gpu) with EXPLAIN ANALYZE of W8's plan; then TPC-H SF10: load, EXPLAIN of the
# 22 queries with gpuhash loaded, and medians of 3 for the queries that take the node (q18 left out).
set -uo pipefail
export PYTHONUNBUFFERED=1
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=8GB -c checkpoint_timeout=30min"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-570} - ($(date +%s) - t0) )); }
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show shared_buffers' 2>/dev/null)/$(psql -Atc 'show jit' 2>/dev/null)" != "16GB/off" ]; then
  gpuhost_restart >/dev/null 2>&1 || { echo "restart failed"; exit 1; }
fi
o=$OUT; L=/tmp/t57logs; mkdir -p $L $L/plans /tmp/tpch-data /tmp/t57 && chmod 777 /tmp/tpch-data
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee $L/gpu.txt
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; el built
timeout 230 bench/run --scale full --cores 16 --timeout 120 --workloads W8,W1 --engines native_parallel,planner_gpu \
  --out /tmp/wfull > $L/wfull.log 2>&1; echo "W bench rc=$?"
grep -E '^\| W|^Failures|skipped' $L/wfull.log | cut -c1-250
(cd /tmp/wfull && tar czf $o/wfull.tgz results.json results.md *.png); el "W done"
q=$(python3 -c "import sys; sys.path.insert(0, 'bench/lib'); import workloads; print([w for w in workloads.WORKLOADS if w.name == 'W8_star'][0].sql['native'])")
psql -X -c "SET search_path = gpuhash_bench_full" -c "SET max_parallel_workers_per_gather = 16" -c "SET work_mem = '256MB'" \
  -c "LOAD 'gpuhash'" -c "SET gpuhash.device = gpu" -c "EXPLAIN (VERBOSE) $q" > $L/w8-plan.txt 2>&1
grep -E "Hash Cond" $L/w8-plan.txt
bench/run --suite tpch --sf 10 --engines native_parallel --queries 6 --runs 1 --warmup 0 \
  --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t57load > $L/tpch-load.log 2>&1
grep "data ready" $L/tpch-load.log; rm -rf /tmp/tpch-data/*; el "tpch loaded"
used=""
for q in bench/tpch/queries/q*.sql; do n=$(basename $q .sql)
  psql -X -c "SET search_path = gpuhash_tpch_10" -c "SET max_parallel_workers_per_gather = 8" -c "SET work_mem = '256MB'" \
    -c "SET jit = off" -c "LOAD 'gpuhash'" -c "SET gpuhash.device = gpu" \
    -c "EXPLAIN (VERBOSE, COSTS OFF) $(grep -v '^--' $q | tr '\n' ' ' | sed 's/;\s*$//')" > $L/plans/$n.txt 2>&1
  grep -q GpuHash $L/plans/$n.txt && used="$used ${n#q}"
done
echo "GpuHash node in:$used"; el planned
for n in $used; do grep -q "Outer Side: pairs" $L/plans/q$n.txt && echo "chained batches in q$n"; done
auto=$(for n in $used; do [ "$n" != 18 ] && echo -n "$((10#$n)),"; done)
timeout $(( $(left) - 10 )) bench/run --suite tpch --sf 10 --engines native_parallel,planner_gpu --queries "${auto%,}" \
  --runs 3 --warmup 1 --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t57 \
  --stop-after $(( $(left) - 45 )) 2>&1 | tee $L/tpch.log | grep -vE "UserWarning|ax.legend"
el "tpch done"
cp /tmp/t57/results.json /tmp/t57/results.md $o/ 2>/dev/null
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
cp /tmp/pg.log $L/pg.log 2>/dev/null
tar czf $o/logs.tgz -C $L . ; el done
