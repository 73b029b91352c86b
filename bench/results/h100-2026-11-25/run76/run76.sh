#!/bin/bash
# run76: EXPLAIN (ANALYZE, VERBOSE) of TPC-H SF 10 q03 and q13 without and with gpuhash, and of q18 with
# it (PostgreSQL's q18 takes 80-110 s; its plan and time are in runs 68 and 70), on one fresh machine.
set -uo pipefail
export PYTHONUNBUFFERED=1
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=8GB -c checkpoint_timeout=30min"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
W=/tmp/t76; L=$W/logs; mkdir -p $L /tmp/tpch-data && chmod 777 /tmp/tpch-data
exec > >(tee -a $OUT/output.txt) 2>&1
echo "run76 on $(hostname), commit ${GPUHASH_COMMIT:-?}"
source .gpuhost/up >/dev/null 2>&1
[ "$(psql -Atc 'show jit' 2>/dev/null)" = off ] || gpuhost_restart >/dev/null 2>&1 || gpuhost_start >/dev/null 2>&1
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; el built
bench/run --suite tpch --sf 10 --engines native_parallel --queries 6 --runs 1 --warmup 0 \
  --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out $W/load > $L/tpch-load.log 2>&1
grep "data ready" $L/tpch-load.log || { tail -20 $L/tpch-load.log; exit 1; }; el loaded
ea() {  # query, label, prelude SQL
  psql -X -c "SET search_path = gpuhash_tpch_10; SET max_parallel_workers_per_gather = 8; SET work_mem = '256MB'; $3" \
    -c "EXPLAIN (ANALYZE, VERBOSE) $(grep -v '^--' bench/tpch/queries/$1.sql | tr '\n' ' ' | sed 's/;\s*$//')" > $L/$1-$2.txt 2>&1
  echo "$1 $2: $(grep -E 'Execution Time' $L/$1-$2.txt)"
}
G="LOAD 'gpuhash'; SET gpuhash.device = gpu"
for q in q03 q13; do
  ea $q postgres "SELECT 1"   # the first run of each warms the page cache for both
  ea $q postgres "SELECT 1"
  ea $q gpuhash "$G"
  ea $q gpuhash2 "$G"
done
ea q18 gpuhash "$G"
ea q18 gpuhash2 "$G"
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
tar czf $OUT/logs.tgz -C $L . ; el done
