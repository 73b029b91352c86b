#!/bin/bash
# run81: run80 again at the commit named in command.txt (GPU batches at most 262144 rows, serial plans begin the context at ExecInit, q22 scan fold declined).
# TPC-H SF 10 pieces: q02, q03, q05, q22 under PostgreSQL, planner_gpu and planner_cpu; q13 and q18
# under planner_gpu and planner_cpu (PostgreSQL's q13 and q18 take 27 s and 81 s a run); the
# unchanged CPU path is the control for the GPU/CPU ratio against run 79. Then EXPLAIN ANALYZE of
# q13 and q02 with gpuhash on the GPU, each in two new sessions.
ENGINES=native_parallel,planner_gpu,planner_cpu QUERIES=2,3,5,22 ENGINES2=planner_gpu,planner_cpu \
  QUERIES2=13,18 RUNS2=3 WARMUP2=1 DEADLINE=500 bash bench/host/tpch-piece
E=/tmp/explain81; mkdir -p $E
source .gpuhost/up >/dev/null 2>&1
for q in 13 02; do for i in 1 2; do
  timeout 60 psql -X -c "SET search_path = gpuhash_tpch_10" -c "SET max_parallel_workers_per_gather = 8" \
    -c "SET work_mem = '256MB'" -c "LOAD 'gpuhash'" -c "SET gpuhash.device = gpu" \
    -c "EXPLAIN (ANALYZE, VERBOSE) $(grep -v '^--' bench/tpch/queries/q$q.sql | tr '\n' ' ' | sed 's/;\s*$//')" > $E/q$q-gpu$i.txt 2>&1
  echo "q$q gpu $i: $(grep -E 'Execution Time' $E/q$q-gpu$i.txt)"
  grep -E 'Leader|Worker [0-9]+: (gpu|cpu)' $E/q$q-gpu$i.txt | cut -c1-230 | head -12
done; done
tar czf $OUT/explain.tgz -C $E .
