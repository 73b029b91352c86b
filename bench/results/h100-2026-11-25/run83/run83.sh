#!/bin/bash
# run83: W7 and W1 A/B, b36fe74 against 1cb04ba, builds swapped in one server, alternating, 3 runs
# each a round, a new session per run. Builds 1cb04ba and the W data first (a fresh machine).
set -uo pipefail
exec > >(tee -a $OUT/output.txt) 2>&1
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=8GB -c checkpoint_timeout=30min"
source .gpuhost/up >/dev/null 2>&1
if [ "$(psql -Atc 'show shared_buffers' 2>/dev/null)/$(psql -Atc 'show jit' 2>/dev/null)" != "16GB/off" ]; then
  gpuhost_restart >/dev/null 2>&1 || gpuhost_start >/dev/null 2>&1 || { echo "server start failed"; exit 1; }
fi
make -j16 GPUHASH_CUDA_ARCHS="90" > /tmp/newbuild.log 2>&1 || { tail -30 /tmp/newbuild.log; exit 1; }
make -s install >/dev/null && chown -R pgrun . 2>/dev/null
timeout 200 bench/run --scale full --cores 16 --timeout 150 --engines native_parallel,planner_gpu --workloads W5 --keep-data \
  --out /tmp/w83 > /tmp/w83.log 2>&1; echo "W data rc=$?"; grep -E 'W5_duplicates +(native|planner)' /tmp/w83.log
lib=$(pg_config --pkglibdir); cp $lib/gpuhash.so /tmp/new.so
mkdir -p /tmp/old && tar xf bench/results/h100-2026-11-25/run83/b36fe74.tar -C /tmp/old
(cd /tmp/old && make -j16 GPUHASH_CUDA_ARCHS="90" >/tmp/oldbuild.log 2>&1) || { tail -5 /tmp/oldbuild.log; exit 1; }
cp /tmp/old/gpuhash.so /tmp/old.so
for w in W7_grouped W1_star_aggregate; do
  q=$(python3 -c "import sys; sys.path.insert(0, 'bench/lib'); import workloads; print([x for x in workloads.WORKLOADS if x.name == '$w'][0].sql['native'])")
  for round in 1 2; do for b in old new; do
    cp /tmp/$b.so $lib/gpuhash.so
    t=""; for i in 1 2 3; do
      t="$t $(psql -X -q -c "SET search_path = gpuhash_bench_full" -c "SET max_parallel_workers_per_gather = 16" -c "SET work_mem = '256MB'" -c "LOAD 'gpuhash'" -c "SET gpuhash.device = gpu" -c '\timing on' -c "$q" 2>&1 | awk '/^Time:/ {print $2}')"
    done; echo "$w round $round $b:$t"
  done; done
  for b in old new; do cp /tmp/$b.so $lib/gpuhash.so
    psql -X -q -c "SET search_path = gpuhash_bench_full" -c "SET max_parallel_workers_per_gather = 16" -c "SET work_mem = '256MB'" -c "LOAD 'gpuhash'" -c "SET gpuhash.device = gpu" -c "EXPLAIN (ANALYZE, VERBOSE) $q" > /tmp/$w-$b.txt 2>&1
    echo "$w $b: $(grep 'Execution Time' /tmp/$w-$b.txt)"; grep -E 'Leader|Worker 0: (gpu|cpu)' /tmp/$w-$b.txt | cut -c1-250
  done
done
cp /tmp/new.so $lib/gpuhash.so; tar czf $OUT/explain.tgz -C /tmp W*-old.txt W*-new.txt
