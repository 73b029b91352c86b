source .gpuhost/up >/dev/null 2>&1
S=gpuhash_bench_full
psql -qc "CREATE TABLE $S.d2t AS SELECT id, region, 'region ' || region AS rname FROM $S.star_d2; ANALYZE $S.d2t;"
Q="SELECT count(*), sum(n), sum(q) FROM (SELECT d2.rname, d3.cat, count(*) AS n, sum(f.qty) AS q FROM $S.star_fact f JOIN $S.star_d1 d1 ON f.d1 = d1.id JOIN $S.d2t d2 ON f.d2 = d2.id JOIN $S.star_d3 d3 ON f.d3 = d3.id WHERE d1.flag AND d2.region < 8 GROUP BY d2.rname, d3.cat) g"
one() { { echo "LOAD '\$libdir/$1'; SET work_mem='256MB'; SET max_parallel_workers_per_gather=6; \\timing on"; [ "$2" = x ] && echo "EXPLAIN (ANALYZE, COSTS OFF) $Q;"; echo "$Q;"; echo "$Q;"; } | psql -qAt | grep -E "Time|Outer Side|Custom|^[0-9]"; }
one gpuhash x > $OUT/text-explain.txt; one gpuhash_prev x >> $OUT/text-explain.txt
for i in 1 2 3 4 5; do for l in gpuhash gpuhash_prev; do echo "$l $(one $l | grep Time | tail -1)"; done; done | tee $OUT/text-ab.txt
