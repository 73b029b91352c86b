#!/bin/bash
# run52: one call on a fresh H100 machine at the GROUP BY code: build; installcheck and the fuzzer
# on the GPU (together, before any timing); W1-W7 full; the planning test (star join).
set -uo pipefail
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show shared_buffers' 2>/dev/null)/$(psql -Atc 'show jit' 2>/dev/null)" != "16GB/off" ]; then
  gpuhost_restart >/dev/null 2>&1 || { echo "restart failed"; exit 1; }
fi
echo "server: $(psql -Atc "select string_agg(name || '=' || setting, ' ') from pg_settings where name in ('shared_buffers','max_parallel_workers','jit')")"
o=$OUT; L=/tmp/t52logs; mkdir -p $L
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee $L/gpu.txt
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; el built
( PGOPTIONS="-c gpuhash.device=gpu" make installcheck > $L/installcheck.log 2>&1; cp regression.diffs $L/ 2>/dev/null ) &
ic=$!
timeout 130 test/fuzz/run --device gpu --time-budget 90 --max-rows 200000 > $L/fuzz-gpu.log 2>&1; echo "fuzz exit $?"
tail -2 $L/fuzz-gpu.log; el fuzz
wait $ic; grep -E "^test|tests" $L/installcheck.log | grep -v "\.\.\. ok"; el installcheck
timeout 380 bench/run --scale full --cores 16 --timeout 150 --out /tmp/wfull > $L/wfull.log 2>&1; echo "W bench rc=$?"
grep -E '^\| W|^Failures|skipped' $L/wfull.log | cut -c1-170
(cd /tmp/wfull && tar czf $o/wfull.tgz results.json results.md *.png); el "W done"
timeout 30 test/planning/run --sessions 21 > $L/planning.log 2>&1; echo "planning rc=$?"; tail -4 $L/planning.log; el planning
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
cp /tmp/pg.log $L/pg.log 2>/dev/null
tar czf $o/logs.tgz -C $L . ; el done
