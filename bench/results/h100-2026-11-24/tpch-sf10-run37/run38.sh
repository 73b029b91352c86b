#!/bin/bash
# run38: q18 at SF10, EXPLAIN ANALYZE with gpuhash (GPU) and without, on a machine loaded by run37's script
set -uo pipefail
STOP_MARGIN=9999 GPUHASH_COMMIT=a8f800d bash .devrun/run37.sh 1 native_parallel >/dev/null 2>&1   # build+load only (stop-after negative)
source .gpuhost/up >/dev/null 2>&1
q="$(grep -v '^--' bench/tpch/queries/q18.sql | tr '\n' ' ' | sed 's/;\s*$//')"
for e in gpu native; do
  pre="SELECT 1"; [ $e = gpu ] && pre="LOAD 'gpuhash'; SET gpuhash.device = gpu"
  psql -X -c "SET search_path = gpuhash_tpch_10" -c "SET max_parallel_workers_per_gather = 8" -c "SET work_mem = '256MB'" -c "SET jit=off" -c "SET statement_timeout='${1:-200}s'" -c "$pre" -c "EXPLAIN (ANALYZE) $q" > $OUT/q18-$e-explain.txt 2>&1
  grep -E "Execution Time|ERROR|GpuHash|Build|Leader|Worker" $OUT/q18-$e-explain.txt | head -20
done
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
