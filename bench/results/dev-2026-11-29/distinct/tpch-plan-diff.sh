#!/bin/bash
# plans of the 22 TPC-H queries with gpuhash.enable_input_aggregate on and off, per worker count
export PGHOST=/tmp/devpg PGPORT=5499 PGUSER=postgres
mkdir -p /tmp/pd3
for w in 0 2 8; do for g in on off; do for q in /work/main/bench/tpch/queries/q*.sql; do n=$(basename $q .sql)
 sql=$(grep -v '^--' $q | tr '\n' ' ' | sed 's/;\s*$//')
 [ $n = q11 ] && sql=$(echo "$sql" | sed 's/\* 0.0001 /* 0.0001 /')
 psql -X -At -c "SET search_path = gpuhash_tpch_1" -c "SET max_parallel_workers_per_gather = $w" -c "SET work_mem='256MB'" -c "LOAD 'gpuhash'" -c "SET gpuhash.device = cpu" -c "SET gpuhash.enable_input_aggregate = $g" -c "EXPLAIN (COSTS OFF) $sql" > /tmp/pd3/$g-w$w-$n.txt 2>&1
done; done
for q in /work/main/bench/tpch/queries/q*.sql; do n=$(basename $q .sql); cmp -s /tmp/pd3/on-w$w-$n.txt /tmp/pd3/off-w$w-$n.txt || echo "workers $w: $n differs"; done; done
echo plan-diff done
