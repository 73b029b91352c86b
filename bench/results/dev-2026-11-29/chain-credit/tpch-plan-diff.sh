#!/bin/bash
# plans of the 22 TPC-H queries under gpuhash and gpuhash_prev, per worker count
export PGHOST=/tmp/devpg PGPORT=5499 PGUSER=postgres
for w in 0 2 8; do for lib in gpuhash gpuhash_prev; do for q in /work/main/bench/tpch/queries/q*.sql; do n=$(basename $q .sql)
 psql -X -At -c "SET search_path = gpuhash_tpch_10" -c "SET max_parallel_workers_per_gather = $w" -c "SET work_mem='256MB'" -c "LOAD '$lib'" -c "SET gpuhash.device = cpu" -c "EXPLAIN (COSTS OFF) $(grep -v '^--' $q | tr '\n' ' ' | sed 's/;\s*$//')" > /tmp/pd/$lib-w$w-$n.txt 2>&1
done; done
for q in /work/main/bench/tpch/queries/q*.sql; do n=$(basename $q .sql); cmp -s /tmp/pd/gpuhash-w$w-$n.txt /tmp/pd/gpuhash_prev-w$w-$n.txt || echo "workers $w: $n differs"; done; done
echo plan-diff done
