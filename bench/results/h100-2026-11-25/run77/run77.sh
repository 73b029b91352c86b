#!/bin/bash
# run77: one call on a fresh H100 machine. (1) Does loading gpuhash slow a parallel query that keeps
# PostgreSQL's plan? A Gather of 8 workers over a 1 M-row table, 60 runs per round, rounds alternating
# without and with LOAD 'gpuhash' (every worker then loads the module too). (2) W1-W8 at full scale
# under native_parallel, planner_gpu and planner_cpu: the W figures and #19's GPU/CPU split, one run.
set -uo pipefail
export PYTHONUNBUFFERED=1
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=8GB -c checkpoint_timeout=30min"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
S=/tmp/t77; L=$S/logs; mkdir -p $L
exec > >(tee -a $OUT/output.txt) 2>&1
echo "run77 on $(hostname), commit ${GPUHASH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show shared_buffers' 2>/dev/null)/$(psql -Atc 'show jit' 2>/dev/null)" != "16GB/off" ]; then
  gpuhost_restart >/dev/null 2>&1 || gpuhost_start >/dev/null 2>&1 || { echo "server start failed"; exit 1; }
fi
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; el built
ls -l "$(pg_config --pkglibdir)/gpuhash.so"
# (1) worker start with and without the module
psql -X -q -c "DROP TABLE IF EXISTS load_probe" -c "CREATE TABLE load_probe AS SELECT g FROM generate_series(1, 1000000) g" -c "VACUUM ANALYZE load_probe"
q="SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 8;"
round() {  # $1: prelude; prints the median and mean of 60 runs in ms
  { echo "$1"; echo "$q"; echo '\timing on'; for i in $(seq 60); do echo "SELECT count(*) FROM load_probe;"; done; } |
    psql -X -q 2>&1 | awk '/^Time:/ {t[n++] = $2} END {asort(t); s = 0; for (i = 1; i <= n; i++) s += t[i]; printf "median %.2f ms, mean %.2f ms, n %d\n", t[int((n + 1) / 2)], s / n, n}'
}
psql -X -c "$q EXPLAIN (COSTS OFF) SELECT count(*) FROM load_probe" | grep -E "Workers|Gather"
for r in 1 2 3; do
  echo "round $r without: $(round 'SELECT 1;')"
  echo "round $r with LOAD: $(round "LOAD 'gpuhash';")"
done
el "load probe done"
# (2) W suite, three engines
timeout 545 bench/run --scale full --cores 16 --timeout 150 --engines native_parallel,planner_gpu,planner_cpu --workloads W1,W2,W3,W4,W5,W6,W7,W8 \
  --out $S/w > $L/wfull.log 2>&1; echo "W bench rc=$?"
grep -E '^\| W|^Failures|skipped' $L/wfull.log | cut -c1-250
grep -E 'W[0-9]_[a-z_]+ +(native|planner)' $L/wfull.log | cut -c1-200
(cd $S/w && tar czf $OUT/wfull.tgz results*.json results.md 2>/dev/null); el "W done"
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"; cp /tmp/pg.log $L/
tar czf $OUT/logs.tgz -C $L . ; el done
