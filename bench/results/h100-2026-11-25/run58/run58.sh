#!/bin/bash
# run58: issue 18's measurement at one commit, resumable over calls chained on one warm machine.
# Each call does what is left, in this order: build; TPC-H SF10 load; EXPLAIN of the 22 queries with
# gpuhash loaded; planning check at SF10; median of 3 after a warm-up of the 21 queries but q18, both
# engines (pieces merged); W1-W8 full; q18 one run per engine. State lives in /tmp/t58.
set -uo pipefail
export PYTHONUNBUFFERED=1
export GPUHASH_COMMIT=${GPUHASH_COMMIT:-1419179}
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=8GB -c checkpoint_timeout=30min"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-575} - ($(date +%s) - t0) )); }
S=/tmp/t58; L=$S/logs; mkdir -p $L $L/plans /tmp/tpch-data && chmod 777 /tmp/tpch-data
call=$(( $(cat $S/calls 2>/dev/null || echo 0) + 1 )); echo $call > $S/calls
exec > >(tee -a $OUT/output-call$call.txt) 2>&1
echo "call $call on $(hostname), commit $GPUHASH_COMMIT"
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show shared_buffers' 2>/dev/null)/$(psql -Atc 'show jit' 2>/dev/null)" != "16GB/off" ]; then
  gpuhost_restart >/dev/null 2>&1 || gpuhost_start >/dev/null 2>&1 || { echo "server start failed"; tail -5 /tmp/pg.log; exit 1; }
fi
finish() {
  cp /tmp/pg.log $L/pg.log 2>/dev/null
  echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
  tar czf $OUT/state-call$call.tgz --exclude='*.csv' -C $S . 2>/dev/null
  for f in tpch/results.md w/results.md q18/results.md; do [ -f $S/$f ] && cp $S/$f $OUT/$(dirname $f)-results.md; done
  el "call $call ends"; exit 0
}
if [ ! -f $S/built ]; then
  nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee $L/gpu.txt
  make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
  make -s install >/dev/null && chown -R pgrun . 2>/dev/null && touch $S/built; el built
fi
if [ ! -f $S/planned ]; then
  bench/run --suite tpch --sf 10 --engines native_parallel --queries 6 --runs 1 --warmup 0 \
    --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out $S/load > $L/tpch-load.log 2>&1
  grep "data ready" $L/tpch-load.log || { tail -20 $L/tpch-load.log; finish; }
  rm -rf /tmp/tpch-data/*; el "tpch loaded"
  used=""
  for q in bench/tpch/queries/q*.sql; do n=$(basename $q .sql)
    psql -X -c "SET search_path = gpuhash_tpch_10" -c "SET max_parallel_workers_per_gather = 8" -c "SET work_mem = '256MB'" \
      -c "SET jit = off" -c "LOAD 'gpuhash'" -c "SET gpuhash.device = gpu" \
      -c "EXPLAIN (VERBOSE, COSTS OFF) $(grep -v '^--' $q | tr '\n' ' ' | sed 's/;\s*$//')" > $L/plans/$n.txt 2>&1
    grep -q GpuHash $L/plans/$n.txt && used="$used ${n#q}"
  done
  echo "GpuHash node in:$used" | tee $L/node-in.txt
  for n in $used; do grep -q "Outer Side: pairs" $L/plans/q$n.txt && echo "chained batches in q$n"; done
  timeout 120 test/planning/run --tpch gpuhash_tpch_10 --sessions 7 > $L/planning-sf10.log 2>&1; echo "planning rc=$?"
  tail -3 $L/planning-sf10.log
  touch $S/planned; el planned
fi
if [ ! -f $S/tpch.done ] && [ $(left) -gt 90 ]; then
  merge=""; [ -f $S/tpch/results.json ] && merge="--merge $S/tpch/results.json"
  timeout $(( $(left) - 15 )) bench/run --suite tpch --sf 10 --engines native_parallel,planner_gpu \
    --queries 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,19,20,21,22 --runs 3 --warmup 1 --timeout 200 --jobs 16 \
    --data-dir /tmp/tpch-data --out $S/tpch $merge --stop-after $(( $(left) - 150 )) >> $L/tpch.log 2>&1
  rc=$?; echo "tpch rc=$rc"; grep -E "s \(median|FAILED|stopped after" $L/tpch.log | tail -50
  { [ $rc = 0 ] || [ $rc = 1 ]; } && touch $S/tpch.done && grep -E "^\|" $L/tpch.log | tail -30
  el "tpch piece"
fi
if [ -f $S/tpch.done ] && [ ! -f $S/w.done ] && [ $(left) -gt 390 ]; then
  timeout $(( $(left) - 10 )) bench/run --scale full --cores 16 --timeout 150 --engines native_parallel,planner_gpu \
    --out $S/w > $L/wfull.log 2>&1; rc=$?; echo "W bench rc=$rc"
  grep -E '^\| W|^Failures|skipped' $L/wfull.log | cut -c1-250
  [ $rc = 0 ] && touch $S/w.done; el "W done"
fi
if [ -f $S/tpch.done ] && [ ! -f $S/q18.done ] && [ $(left) -gt 330 ]; then
  timeout $(( $(left) - 10 )) bench/run --suite tpch --sf 10 --engines native_parallel,planner_gpu --queries 18 \
    --runs 1 --warmup 0 --timeout 300 --jobs 16 --data-dir /tmp/tpch-data --out $S/q18 > $L/q18.log 2>&1
  rc=$?; echo "q18 rc=$rc"; grep -E "s \(median|FAILED" $L/q18.log
  [ $rc = 0 ] && touch $S/q18.done; el "q18 done"
fi
[ -f $S/tpch.done ] && [ -f $S/w.done ] && [ -f $S/q18.done ] && echo "ALL DONE"
finish
