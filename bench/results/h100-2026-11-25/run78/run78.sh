#!/bin/bash
# run78: does loading gpuhash slow a parallel query that keeps PostgreSQL's plan? A Gather of 8
# workers over a 1 M-row table, 60 runs per round, rounds alternating without and with
# LOAD 'gpuhash' (each worker then loads the module too). Run 77's version failed on mawk's asort.
set -uo pipefail
exec > >(tee -a $OUT/output.txt) 2>&1
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show jit' 2>/dev/null)" != off ]; then
  export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32"
  gpuhost_restart >/dev/null 2>&1 || gpuhost_start >/dev/null 2>&1 || { echo "server start failed"; exit 1; }
fi
ls "$(pg_config --pkglibdir)/gpuhash.so" >/dev/null 2>&1 || { make -j16 GPUHASH_CUDA_ARCHS="70 80 90" >/tmp/build.log 2>&1 && make -s install >/dev/null; }
ls -l "$(pg_config --pkglibdir)/gpuhash.so"
psql -X -q -c "DROP TABLE IF EXISTS load_probe" -c "CREATE TABLE load_probe AS SELECT g FROM generate_series(1, 1000000) g" -c "VACUUM ANALYZE load_probe" 2>&1 | grep -v NOTICE
q="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 8;"
round() {  # $1: prelude; the median and mean of 60 runs in ms
  { echo "$1"; echo "$q"; echo '\timing on'; for i in $(seq 60); do echo "SELECT count(*) FROM load_probe;"; done; } |
    psql -X -q 2>&1 | awk '/^Time:/ {print $2}' | sort -n |
    awk '{t[NR] = $1; s += $1} END {printf "median %.2f ms, mean %.2f ms, min %.2f, max %.2f, n %d\n", t[int((NR + 1) / 2)], s / NR, t[1], t[NR], NR}'
}
psql -X -c "$q EXPLAIN (COSTS OFF) SELECT count(*) FROM load_probe" | grep -E "Workers|Gather"
for r in 1 2 3 4; do
  echo "round $r without: $(round 'SELECT 1;')"
  echo "round $r with LOAD: $(round "LOAD 'gpuhash';")"
done
