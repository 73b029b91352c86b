#!/bin/bash
# run42: the loaded library's cost with and without shared_preload_libraries, and the planning check
# over TPC-H SF 1 with a usable GPU.
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32"
source .gpuhost/up >/dev/null 2>&1 || source .gpuhost/up
o=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; el built
python3 .devrun/loadcost.py 40 $o/loadcost-plain.json
export GPUHOST_PGOPTS="$GPUHOST_PGOPTS -c shared_preload_libraries=gpuhash"
gpuhost_restart >/dev/null; psql -Atc "show shared_preload_libraries"
python3 .devrun/loadcost.py 40 $o/loadcost-preload.json
export GPUHOST_PGOPTS="${GPUHOST_PGOPTS% -c shared_preload_libraries=gpuhash}"
gpuhost_restart >/dev/null; psql -Atc "show shared_preload_libraries"
el loadcost
mkdir -p /tmp/tpch1 && chmod 777 /tmp/tpch1
bench/run --suite tpch --sf 1 --engines native_parallel --queries 6 --runs 1 --warmup 0 --jobs 16 \
  --data-dir /tmp/tpch1 --out /tmp/t42 > $o/tpch1.log 2>&1; el "tpch sf1 loaded"
psql -Atc "LOAD 'gpuhash'; SELECT gpuhash_backend()" 2>&1 | tail -1
PGOPTIONS="-c max_parallel_workers_per_gather=8" test/planning/run --sessions 11 --tpch gpuhash_tpch_1 > $o/planning.log 2>&1
grep -E "^(ok|FAILED)|passed|alone|loaded:" $o/planning.log | paste - - - | sed 's/(all:[^)]*)//g' | head -30
tail -1 $o/planning.log
el done
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
