#!/bin/bash
# run53: one call on a fresh H100 machine: W1 and W2 at 54147c8 (the code of run 51, before GROUP BY;
# its source in .devrun/old) and at HEAD, alternating old, new, old, new in one lease, each set
# bench/run --scale full --workloads W1,W2 --engines native_parallel,planner_gpu (data loaded once).
set -uo pipefail
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show shared_buffers' 2>/dev/null)/$(psql -Atc 'show jit' 2>/dev/null)" != "16GB/off" ]; then
  gpuhost_restart >/dev/null 2>&1 || { echo "restart failed"; exit 1; }
fi
o=$OUT; L=/tmp/t53logs; mkdir -p $L
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee $L/gpu.txt
here=$PWD
cp -r .devrun/old /tmp/old && chown -R pgrun /tmp/old 2>/dev/null
( cd /tmp/old && make -j8 GPUHASH_CUDA_ARCHS="90" > $L/build-old.log 2>&1 ) &
make -j8 GPUHASH_CUDA_ARCHS="90" > $L/build-new.log 2>&1 || { tail -30 $L/build-new.log; exit 1; }
wait; [ -f /tmp/old/gpuhash.so ] || { tail -30 $L/build-old.log; exit 1; }
chown -R pgrun . 2>/dev/null; el built
for set in old1 new1 old2 new2; do
  case $set in old*) (cd /tmp/old && make -s install >/dev/null) ;; new*) make -s install >/dev/null ;; esac
  timeout 200 bench/run --scale full --cores 16 --timeout 150 --keep-data --workloads W1,W2 \
    --engines native_parallel,planner_gpu --out /tmp/w$set > $L/w$set.log 2>&1; echo "$set rc=$?"
  grep -E '^\| W' $L/w$set.log | cut -c1-120
  cp /tmp/w$set/results.json $L/results-$set.json 2>/dev/null
  el "$set done"
done
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
cp /tmp/pg.log $L/pg.log 2>/dev/null
tar czf $o/logs.tgz -C $L . ; el done
