#!/bin/bash
# run75: at 9d4f734's planner, W1-W8 at the small scale on the GPU (W5 plans a parallel fold there
# since 9d4f734, a serial one before), then W5 alone with the serial fold (workers 0 for gpuhash) beside
# it, and installcheck with gpuhash.device=gpu.
set -uo pipefail
export PYTHONUNBUFFERED=1
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=8GB -c checkpoint_timeout=30min"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
S=/tmp/t75; L=$S/logs; mkdir -p $L
exec > >(tee -a $OUT/output.txt) 2>&1
echo "run75 on $(hostname), commit ${GPUHASH_COMMIT:-?}"
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show shared_buffers' 2>/dev/null)/$(psql -Atc 'show jit' 2>/dev/null)" != "16GB/off" ]; then
  gpuhost_restart >/dev/null 2>&1 || gpuhost_start >/dev/null 2>&1 || { echo "server start failed"; exit 1; }
fi
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; el built
( PGOPTIONS="-c gpuhash.device=gpu" make installcheck > $L/installcheck.log 2>&1; cp regression.diffs $L/ 2>/dev/null ) &
ic=$!
timeout 200 bench/run --scale small --cores 16 --timeout 60 --engines native_parallel,planner_gpu --keep-data \
  --out $S/w > $L/wsmall.log 2>&1; echo "W small rc=$?"
grep -E '^\| W|^Failures' $L/wsmall.log | cut -c1-230
timeout 60 bench/run --scale small --cores 16 --timeout 60 --engines native_parallel,planner_gpu --workloads W5 \
  --set planner_gpu:max_parallel_workers_per_gather=0 --keep-data --out $S/w5serial > $L/w5serial.log 2>&1; echo "W5 serial rc=$?"
grep -E '^\| W|^Failures' $L/w5serial.log | cut -c1-230
(cd $S && tar czf $OUT/wsmall.tgz w/results.json w/results.md w5serial/results.json w5serial/results.md 2>/dev/null); el "W done"
wait $ic; grep -E "^test|tests" $L/installcheck.log | grep -v "\.\.\. ok"; el installcheck
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"; cp /tmp/pg.log $L/
tar czf $OUT/logs.tgz -C $L . ; el done
