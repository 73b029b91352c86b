#!/bin/bash
# run60: one call on a fresh H100 machine at the scan fold (GpuHashAggregate with no join): build;
# installcheck and the GPU fuzzer beside the TPC-H SF10 load; EXPLAIN of the 22 queries; median of 3
# after a warm-up of q01, q06, q15 (the scan folds), then of as many of q10-q22 (but q18) as fit.
set -uo pipefail
export PYTHONUNBUFFERED=1
export GPUHASH_COMMIT=${GPUHASH_COMMIT:-?}
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=8GB -c checkpoint_timeout=30min"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-570} - ($(date +%s) - t0) )); }
S=/tmp/t60; L=$S/logs; mkdir -p $L $L/plans /tmp/tpch-data && chmod 777 /tmp/tpch-data
exec > >(tee -a $OUT/output.txt) 2>&1
echo "run60 on $(hostname), commit $GPUHASH_COMMIT"
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show shared_buffers' 2>/dev/null)/$(psql -Atc 'show jit' 2>/dev/null)" != "16GB/off" ]; then
  gpuhost_restart >/dev/null 2>&1 || gpuhost_start >/dev/null 2>&1 || { echo "server start failed"; exit 1; }
fi
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; el built
( PGOPTIONS="-c gpuhash.device=gpu" make installcheck > $L/installcheck.log 2>&1; cp regression.diffs $L/ 2>/dev/null ) &
ic=$!
( timeout 150 test/fuzz/run --device gpu --time-budget 100 --max-rows 100000 > $L/fuzz-gpu.log 2>&1; echo "exit $?" >> $L/fuzz-gpu.log ) &
fz=$!
bench/run --suite tpch --sf 10 --engines native_parallel --queries 6 --runs 1 --warmup 0 \
  --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out $S/load > $L/tpch-load.log 2>&1
grep "data ready" $L/tpch-load.log; rm -rf /tmp/tpch-data/*; el "tpch loaded"
wait $ic; grep -E "^test|tests" $L/installcheck.log | grep -v "\.\.\. ok"; el installcheck
wait $fz; tail -2 $L/fuzz-gpu.log; el fuzz
for q in bench/tpch/queries/q*.sql; do n=$(basename $q .sql); n=${n#q}
  psql -X -c "SET search_path = gpuhash_tpch_10" -c "SET max_parallel_workers_per_gather = 8" -c "SET work_mem = '256MB'" \
    -c "SET jit = off" -c "LOAD 'gpuhash'" -c "SET gpuhash.device = gpu" \
    -c "EXPLAIN (VERBOSE, COSTS OFF) $(grep -v '^--' $q | tr '\n' ' ' | sed 's/;\s*$//')" > $L/plans/q$n.txt 2>&1
  echo "q$n: $(grep -cE 'GpuHashJoin' $L/plans/q$n.txt) GpuHashJoin, $(grep -cE 'GpuHashAggregate' $L/plans/q$n.txt) GpuHashAggregate"
done | grep -v ": 0 GpuHashJoin, 0 GpuHashAggregate"
timeout $(( $(left) - 10 )) bench/run --suite tpch --sf 10 --engines native_parallel,planner_gpu \
  --queries 1,6,15,10,11,12,14,16,19,20,21,22,13,17 --runs 3 --warmup 1 --timeout 200 --jobs 16 \
  --data-dir /tmp/tpch-data --out $S/tpch --stop-after $(( $(left) - 70 )) > $L/tpch.log 2>&1
echo "tpch rc=$?"; grep -E "s \(median|FAILED|^\||stopped" $L/tpch.log
cp $S/tpch/results.json $S/tpch/results.md $OUT/ 2>/dev/null
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"; cp /tmp/pg.log $L/
tar czf $OUT/logs.tgz -C $L . ; el done
