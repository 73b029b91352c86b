#!/bin/bash
# run37: TPC-H SF10, median of 3 after a warm-up, engines interleaved, in pieces of one call each.
# usage: .devrun/run37.sh QUERIES ENGINES [explain]
#   first call on a bare machine builds, installs and loads; later calls on the warm machine reuse
#   the cluster and the data; every call merges into /tmp/t37/results.json (or .devrun/t37-results.json
#   carried from here when the machine went bare).
set -uo pipefail
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=20GB -c checkpoint_timeout=30min"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
source .gpuhost/up >/dev/null 2>&1 || true
psql -Atc 'select 1' >/dev/null 2>&1 || { source .gpuhost/up; }
psql -Atc 'select 1' >/dev/null || { echo "no server"; exit 1; }
o=$OUT
if [ ! -f /tmp/run37.built ]; then
  make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
  make -s install >/dev/null && chown -R pgrun . 2>/dev/null && touch /tmp/run37.built
  el built
fi
mkdir -p /tmp/tpch-data /tmp/t37 && chmod 777 /tmp/tpch-data
[ -f /tmp/t37/results.json ] || { [ -f .devrun/t37-results.json ] && cp .devrun/t37-results.json /tmp/t37/results.json; }
merge=""; [ -f /tmp/t37/results.json ] && merge="--merge /tmp/t37/results.json"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > $o/gpu.txt
left=$(( 560 - ($(date +%s) - t0) ))
timeout $left bench/run --suite tpch --sf 10 --engines "$2" --queries "$1" --runs ${RUNS:-3} --warmup ${WARMUP:-1} --timeout 200 \
  --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t37 $merge --stop-after $(( left - ${STOP_MARGIN:-200} )) 2>&1 \
  | tee -a $o/tpch.log | grep -vE "^\| "
rm -rf /tmp/tpch-data/* 2>/dev/null
el "suite piece done"
if [ "${3:-}" = explain ]; then
  mkdir -p $o/plans
  for q in bench/tpch/queries/q*.sql; do n=$(basename $q .sql)
    for e in native "LOAD 'gpuhash'; SET gpuhash.device = gpu;"; do
      psql -X -c "SET search_path = gpuhash_tpch_10" -c "SET max_parallel_workers_per_gather = 8" -c "SET work_mem = '256MB'" -c "SET jit = off" \
        -c "${e/native/SELECT 1}" -c "EXPLAIN (COSTS OFF) $(grep -v '^--' $q | tr '\n' ' ' | sed 's/;\s*$//')"
    done > $o/plans/$n.txt 2>&1
  done
  el explained
fi
cp /tmp/t37/results.json /tmp/t37/results.md /tmp/t37/speedup.png $o/ 2>/dev/null
tar czf $o/plans.tgz -C $o plans 2>/dev/null; rm -rf $o/plans
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
el done
