#!/bin/bash
# run44: after merging hopscotch and the composite/date keys: installcheck on the GPU, the large
# GPU-against-CPU hopscotch case, TPC-H SF 10 plans of both engines against run 41's, and the
# queries whose plan changed timed (median of 3 after a warm-up).
set -uo pipefail
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=20GB -c checkpoint_timeout=30min"
source .gpuhost/up >/dev/null 2>&1 || source .gpuhost/up
o=$OUT; t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
make -j16 GPUHASH_CUDA_ARCHS="80 90" > $o/build.log 2>&1 || { tail -30 $o/build.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null; touch /tmp/run37.built; el built
make -j16 GPUHASH_CUDA_ARCHS="80 90" build/test_core >> $o/build.log 2>&1
( timeout 300 build/test_core --filter "large gpu hopscotch" > $o/large-hop.log 2>&1; echo "exit $?" >> $o/large-hop.log ) &
hop=$!
PGOPTIONS="-c gpuhash.device=gpu" make installcheck > $o/installcheck.log 2>&1; tail -3 $o/installcheck.log
cp regression.diffs $o/ 2>/dev/null; el installcheck
( timeout 200 test/fuzz/run --device gpu --time-budget 120 --max-rows 200000 > $o/fuzz-gpu.log 2>&1; echo "exit $?" >> $o/fuzz-gpu.log ) &
fz=$!
mkdir -p /tmp/tpch-data /tmp/t37 /tmp/old && chmod 777 /tmp/tpch-data
tar xzf bench/results/h100-2026-11-24/tpch-sf10-run41/plans-5d2153e.tgz -C /tmp/old
# load and plan: a query that is already measured in no file, with zero runs, only loads
bench/run --suite tpch --sf 10 --engines native_parallel --queries 6 --runs 1 --warmup 0 --timeout 200 \
  --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t44load > $o/tpch-load.log 2>&1; el "tpch loaded"
mkdir -p $o/plans; changed=""
for q in bench/tpch/queries/q*.sql; do n=$(basename $q .sql)
  for e in native "LOAD 'gpuhash'; SET gpuhash.device = gpu;"; do
    psql -X -c "SET search_path = gpuhash_tpch_10" -c "SET max_parallel_workers_per_gather = 8" -c "SET work_mem = '256MB'" -c "SET jit = off" \
      -c "${e/native/SELECT 1}" -c "EXPLAIN (COSTS OFF) $(grep -v '^--' $q | tr '\n' ' ' | sed 's/;\s*$//')"
  done > $o/plans/$n.txt 2>&1
  cmp -s $o/plans/$n.txt /tmp/old/plans/$n.txt || changed="$changed,${n#q}"
done
changed=${changed#,}; echo "plans changed since run 41: ${changed:-none}"; el planned
wait $hop; tail -3 $o/large-hop.log; wait $fz; tail -2 $o/fuzz-gpu.log
if [ -n "$changed" ]; then
  left=$(( 570 - ($(date +%s) - t0) ))
  timeout $left bench/run --suite tpch --sf 10 --engines native_parallel,planner_gpu --queries "$changed" --runs 3 --warmup 1 \
    --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t37 --stop-after $(( left - 120 )) 2>&1 | tee $o/tpch.log | grep -vE "^\| "
  cp /tmp/t37/results.json /tmp/t37/results.md $o/ 2>/dev/null
fi
tar czf $o/plans.tgz -C $o plans; rm -rf $o/plans
(cd $o && tar czf logs.tgz build.log tpch-load.log installcheck.log large-hop.log fuzz-gpu.log $(ls regression.diffs 2>/dev/null) && rm -f build.log tpch-load.log installcheck.log large-hop.log fuzz-gpu.log regression.diffs)
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"; el done
