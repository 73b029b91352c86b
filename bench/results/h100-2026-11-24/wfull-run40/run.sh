#!/bin/bash
# W1-W6 at full scale after this session's planner changes (default full run).
set -uo pipefail
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32"
source .gpuhost/up
o=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null
el built
bench/run --scale full --cores 16 --timeout 150 --out /tmp/wfull > $o/wfull.log 2>&1; echo "bench rc=$?"
grep -E '^\| W|^Failures|skipped' $o/wfull.log | cut -c1-220
cd /tmp/wfull && tar czf $o/wfull.tgz results.json results.md *.png 2>/dev/null
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
el done
