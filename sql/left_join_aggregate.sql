--
-- GpuHashAggregate over a left join (TPC-H q13's shape): the pairs are
-- folded, then each outer row that no pair matched, once, with every inner
-- column NULL.  The other join clauses decide what matches; a filter above
-- the join (a pushed-down clause) sees the null-extended rows too.  Each
-- query is compared, as a multiset, with PostgreSQL's own plan, serially
-- and in parallel, and says if it was not folded.
--
\i sql/fold_setup.psql

\i sql/compare.psql
\i sql/compare_fold.psql

-- the kept side: NULL keys, duplicates, keys nothing matches, NULL measures
CREATE TABLE lf (id int4, k int4, k2 int4, v int8, price numeric(12,2), label text);
INSERT INTO lf SELECT i, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37) % 900 END, i % 3,
                      CASE WHEN i % 13 = 0 THEN NULL ELSE i % 100 - 20 END,
                      CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 1000) / 8.0 END,
                      'l' || (i % 4)
               FROM generate_series(1, 6000) i;
-- the null-extended side: duplicate keys (half the outer keys match), NULL
-- attributes, numeric and date columns
CREATE TABLE ld (id int4, k int4, k2 int4, name text, rate numeric(5,3), day date);
INSERT INTO ld SELECT i, (i * 7) % 450 * 2, i % 3,
                      CASE WHEN i % 9 = 0 THEN NULL ELSE 'n' || (i % 5) END,
                      CASE WHEN i % 10 = 0 THEN NULL ELSE (i % 7) * 0.125 END,
                      date '2020-01-01' + i % 400
               FROM generate_series(1, 1500) i;
-- unique keys and two columns: the table can keep the inner values itself
CREATE TABLE lu (k int4, w int4);
INSERT INTO lu SELECT i * 3, i % 50 FROM generate_series(0, 299) i;
CREATE TABLE lempty (k int4, id int4, name text);
ANALYZE lf; ANALYZE ld; ANALYZE lu; ANALYZE lempty;

CREATE TABLE left_cases (ord int, q text);
INSERT INTO left_cases VALUES
  (1, 'SELECT lf.k, count(ld.id), count(*) FROM lf LEFT JOIN ld ON lf.k = ld.k GROUP BY lf.k'),
  (2, 'SELECT ld.name, count(*), count(ld.id), sum(lf.v), avg(ld.rate), min(ld.day), max(ld.id) FROM lf LEFT JOIN ld ON lf.k = ld.k GROUP BY ld.name'),
  (3, 'SELECT lf.label, sum(lf.price * ld.rate), sum(ld.rate), avg(ld.id), count(ld.rate) FROM lf LEFT JOIN ld ON lf.k = ld.k GROUP BY lf.label'),
  (4, 'SELECT count(*), count(ld.id), sum(ld.id), sum(ld.id + lf.v), min(ld.day), max(ld.day) FROM lf LEFT JOIN ld ON lf.k = ld.k'),
  (5, 'SELECT lf.label, ld.k2, count(*), sum(ld.id) FROM lf LEFT JOIN ld ON lf.k = ld.k AND ld.id % 4 <> lf.id % 3 GROUP BY lf.label, ld.k2'),
  (6, 'SELECT lf.label, count(*), sum(lf.v) FROM lf LEFT JOIN ld ON lf.k = ld.k WHERE ld.name IS NULL GROUP BY lf.label'),
  (7, 'SELECT lf.k2, count(*), sum(lf.price) FROM lf LEFT JOIN ld ON lf.k = ld.k AND ld.rate > 0.2 WHERE coalesce(ld.id, 0) % 5 < 3 GROUP BY lf.k2'),
  (8, 'SELECT lu.k, lu.w, count(*), sum(lu.w), count(lu.k) FROM lf LEFT JOIN lu ON lf.k = lu.k GROUP BY lu.k, lu.w'),
  (9, 'SELECT lf.label, count(lempty.id), count(*), sum(lempty.k) FROM lf LEFT JOIN lempty ON lf.k = lempty.k GROUP BY lf.label'),
  (10, 'SELECT c, count(*) FROM (SELECT lf.id, count(ld.id) AS c FROM lf LEFT JOIN ld ON lf.k = ld.k GROUP BY lf.id) s GROUP BY c'),
  (11, 'SELECT ld.name, count(*) FROM lf LEFT JOIN ld ON lf.k = ld.k AND lf.k2 = ld.k2 GROUP BY ld.name'),
  (12, 'SELECT lf.k, count(ld.id) FROM lf LEFT JOIN ld ON lf.k = ld.k GROUP BY lf.k HAVING count(ld.id) > 2');

-- serial
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.plan((SELECT q FROM left_cases WHERE ord = 2));
SELECT ord, pg_temp.same_folded(q) FROM left_cases ORDER BY ord;

-- parallel: partial states per participant, each folding its own outer rows
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT * FROM pg_temp.plan((SELECT q FROM left_cases WHERE ord = 1));
SELECT ord, pg_temp.same_folded(q) FROM left_cases ORDER BY ord;
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;

-- under GEQO, which frees its join relations between tries, no paths are
-- kept aside: the fold is offered over the join paths left in the path list
SET geqo_threshold = 2;
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.plan((SELECT q FROM left_cases WHERE ord = 1));
SELECT ord, pg_temp.same_folded(q) FROM left_cases WHERE ord IN (1, 2, 7) ORDER BY ord;
RESET geqo_threshold;
RESET max_parallel_workers_per_gather;

-- the unmatched rows counted by EXPLAIN ANALYZE's fold, by hand: every lf
-- row comes out once at least
SET max_parallel_workers_per_gather = 0;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT count(*) = (SELECT count(*) FROM lf) AS every_outer_row,
       sum(n) = (SELECT count(*) FROM lf LEFT JOIN ld ON lf.k = ld.k) AS every_pair
FROM (SELECT lf.id, count(*) AS n FROM lf LEFT JOIN ld ON lf.k = ld.k GROUP BY lf.id) s;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
RESET max_parallel_workers_per_gather;

DROP TABLE lf, ld, lu, lempty, left_cases;
