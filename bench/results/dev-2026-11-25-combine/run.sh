#!/bin/bash
# dev machine, TPC-H SF 10, CPU twin: q01 q13 q15 q18, PostgreSQL / combine off / combine on
cd /work/main
runs=${RUNS:-2}
for q in ${QUERIES:-18 13 01 15}; do
  for mode in native off on; do
    case $mode in
      native) pre="";;
      off) pre="LOAD 'gpuhash'; SET gpuhash.device=cpu; SET gpuhash.enable_group_combine=off;";;
      on) pre="LOAD 'gpuhash'; SET gpuhash.device=cpu;";;
    esac
    for r in $(seq 1 $runs); do
      t=$( { echo "SET search_path=gpuhash_tpch_10; SET max_parallel_workers_per_gather=2; SET jit=off; SET work_mem='256MB'; $pre"; echo '\timing on'; cat bench/tpch/queries/q$q.sql; } | psql -h /tmp/devpg -p 5499 -U postgres -At 2>&1 | grep -E '^Time|ERROR' | tail -1)
      echo "q$q $mode $r $t"
    done
  done
done
