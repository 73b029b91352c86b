#!/bin/bash
# run69: one call on a fresh H100 machine at the session's final code: build; installcheck on the GPU
# beside the W-suite's data generation; W1-W8 at full scale (native_parallel, planner_gpu), the data
# kept for an EXPLAIN ANALYZE of W8's plan with gpuhash.
set -uo pipefail
export PYTHONUNBUFFERED=1
export GPUHASH_COMMIT=${GPUHASH_COMMIT:-?}
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=8GB -c checkpoint_timeout=30min"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
S=/tmp/t69; L=$S/logs; mkdir -p $L
exec > >(tee -a $OUT/output.txt) 2>&1
echo "run69 on $(hostname), commit $GPUHASH_COMMIT"
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show shared_buffers' 2>/dev/null)/$(psql -Atc 'show jit' 2>/dev/null)" != "16GB/off" ]; then
  gpuhost_restart >/dev/null 2>&1 || gpuhost_start >/dev/null 2>&1 || { echo "server start failed"; exit 1; }
fi
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; el built
( PGOPTIONS="-c gpuhash.device=gpu" make installcheck > $L/installcheck.log 2>&1; cp regression.diffs $L/ 2>/dev/null ) &
ic=$!
timeout 480 bench/run --scale full --cores 16 --timeout 150 --engines native_parallel,planner_gpu --keep-data \
  --out $S/w > $L/wfull.log 2>&1; echo "W bench rc=$?"
grep -E '^\| W|^Failures|skipped' $L/wfull.log | cut -c1-250
(cd $S/w && tar czf $OUT/wfull.tgz results.json results.md *.png 2>/dev/null); el "W done"
wait $ic; grep -E "^test|tests" $L/installcheck.log | grep -v "\.\.\. ok"; el installcheck
q=$(python3 -c "import sys; sys.path.insert(0, 'bench/lib'); import workloads; print([w for w in workloads.WORKLOADS if w.name == 'W8_star'][0].sql['native'])")
timeout 60 psql -X -c "SET search_path = gpuhash_bench_full" -c "SET max_parallel_workers_per_gather = 16" -c "SET work_mem = '256MB'" \
  -c "LOAD 'gpuhash'" -c "SET gpuhash.device = gpu" -c "EXPLAIN (ANALYZE, VERBOSE) $q" > $L/w8-plan.txt 2>&1
grep -E "Hash Cond|Execution Time|Custom Scan" $L/w8-plan.txt | cut -c1-160
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"; cp /tmp/pg.log $L/
tar czf $OUT/logs.tgz -C $L . ; el done
