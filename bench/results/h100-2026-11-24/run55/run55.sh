#!/bin/bash
# run55: one call on a fresh H100 machine: build; W1-W8 full (native_parallel, planner_gpu);
# EXPLAIN ANALYZE of W8 under both engines.
set -uo pipefail
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show shared_buffers' 2>/dev/null)/$(psql -Atc 'show jit' 2>/dev/null)" != "16GB/off" ]; then
  gpuhost_restart >/dev/null 2>&1 || { echo "restart failed"; exit 1; }
fi
o=$OUT; L=/tmp/t55logs; mkdir -p $L
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee $L/gpu.txt
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; el built
timeout 470 bench/run --scale full --cores 16 --timeout 150 --keep-data --out /tmp/wfull > $L/wfull.log 2>&1; echo "W bench rc=$?"
grep -E '^\| W|^Failures|skipped|loading|data' $L/wfull.log | cut -c1-190
(cd /tmp/wfull && tar czf $o/wfull.tgz results.json results.md *.png); el "W done"
q=$(python3 -c "import sys; sys.path.insert(0, 'bench/lib'); import workloads; print([w for w in workloads.WORKLOADS if w.name == 'W8_star'][0].sql['native'])")
for e in native gpu; do
  pre="SELECT 1"; [ $e = gpu ] && pre="LOAD 'gpuhash'; SET gpuhash.device = gpu"
  timeout 60 psql -X -c "SET search_path = gpuhash_bench_full" -c "SET max_parallel_workers_per_gather = 16" \
    -c "SET work_mem = '256MB'" -c "$pre" -c "EXPLAIN (ANALYZE, VERBOSE) $q" > $L/w8-explain-$e.txt 2>&1
  grep -E "Execution Time" $L/w8-explain-$e.txt
done; el explained
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
cp /tmp/pg.log $L/pg.log 2>/dev/null
tar czf $o/logs.tgz -C $L . ; el done
