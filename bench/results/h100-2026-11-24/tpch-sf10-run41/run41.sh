#!/bin/bash
# run41: first piece on a bare host: build (via run37.sh), the loaded-library cost, then TPC-H pieces.
# usage: .devrun/run41.sh QUERIES ENGINES
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=20GB -c checkpoint_timeout=30min"
source .gpuhost/up >/dev/null 2>&1 || source .gpuhost/up
if [ ! -f /tmp/run37.built ]; then
  make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
  make -s install >/dev/null && chown -R pgrun . 2>/dev/null && touch /tmp/run37.built
fi
[ -f /tmp/loadcost.done ] || { python3 .devrun/loadcost.py 40 $OUT/loadcost.json && touch /tmp/loadcost.done; }
.devrun/run37.sh "$@"
