#!/bin/bash
# run62: a short call on a fresh H100 machine at the final code (partial groups emitted early past
# hash_mem): build; make installcheck with gpuhash.device=gpu; the GPU fuzzer.
set -uo pipefail
export PYTHONUNBUFFERED=1
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
L=/tmp/t62; mkdir -p $L
exec > >(tee -a $OUT/output.txt) 2>&1
echo "run62 on $(hostname), commit ${GPUHASH_COMMIT:-?}"
source .gpuhost/up >/dev/null 2>&1
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; el built
PGOPTIONS="-c gpuhash.device=gpu" make installcheck > $L/installcheck.log 2>&1; cp regression.diffs $L/ 2>/dev/null
grep -E "^test|tests" $L/installcheck.log | grep -v "\.\.\. ok"; el installcheck
timeout 130 test/fuzz/run --device gpu --time-budget 100 --max-rows 100000 > $L/fuzz-gpu.log 2>&1; echo "fuzz exit $?"
tail -2 $L/fuzz-gpu.log; el fuzz
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"; cp /tmp/pg.log $L/
tar czf $OUT/logs.tgz -C $L . ; el done
