--
-- GROUP BY folded into GpuHashAggregate: the join finds each matching row's
-- group (int2, int4, int8, date and bool columns of either side, NULLs
-- grouped together) and folds count, sum, avg, min and max into it, then
-- emits one row per group; HAVING is applied by a serial node, by
-- PostgreSQL's Finalize Aggregate in a parallel plan.  Each query runs with
-- the node forced on and is compared, as a multiset, with PostgreSQL's own
-- plan, serially and in parallel, and says if it was not folded.
--
\i sql/fold_setup.psql

\i sql/compare.psql
\i sql/compare_fold.psql

-- a fact side with NULL keys, NULL group columns of every type, and int8
-- values whose sum passes the int8 range; dimensions with unique keys (the
-- value kept in the hash table), duplicate keys and NULL attributes
CREATE TABLE gf (k int4, k8 int8, a int4, b int2, c int8, g2 int2, g4 int4, g8 int8,
                 dt date, flag bool);
INSERT INTO gf SELECT CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7919) % 1000 END,
                      ((i * 7919) % 1000)::int8 * 3000000000,
                      CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37) % 1000 - 500 END,
                      (i % 200 - 100)::int2, 9000000000000000000 - i,
                      (i % 7)::int2,
                      CASE WHEN i % 9 = 0 THEN NULL ELSE i % 23 - 11 END,
                      (i % 5000)::int8 * -1000000007,
                      CASE WHEN i % 17 = 0 THEN NULL ELSE date '2024-02-27' + i % 5 END,
                      CASE WHEN i % 4 = 0 THEN NULL ELSE i % 3 = 0 END
               FROM generate_series(1, 12000) i;
CREATE TABLE gd (k int4, v int4);              -- unique keys
INSERT INTO gd SELECT i, i % 6 - 2 FROM generate_series(0, 998, 2) i;
CREATE TABLE gdd (k int4, cat int4, day date, hot bool);   -- duplicate keys, NULLs
INSERT INTO gdd SELECT (i * 104729) % 1200,
                       CASE WHEN i % 10 = 0 THEN NULL ELSE i % 4 END,
                       date '1999-12-30' + i % 4,
                       CASE WHEN i % 7 = 0 THEN NULL ELSE i % 2 = 0 END
                FROM generate_series(1, 1500) i;
CREATE TABLE g8d (k8 int8, w int8);
INSERT INTO g8d SELECT i::int8 * 3000000000, i % 3 FROM generate_series(0, 999, 2) i;
CREATE TABLE gempty (k int4, v int4);
ANALYZE gf; ANALYZE gd; ANALYZE gdd; ANALYZE g8d; ANALYZE gempty;

-- serial
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.plan('SELECT gdd.cat, gf.flag, count(*), avg(gf.a) FROM gf JOIN gdd ON gf.k = gdd.k GROUP BY gdd.cat, gf.flag HAVING count(*) > 10 ORDER BY 1, 2');
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT g2, count(*), count(gf.a), sum(gf.a), avg(gf.a), min(gd.v), max(gf.b) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g2'),
  ('SELECT gd.v, count(*), sum(gf.a + gd.v), avg(gf.b) FROM gf JOIN gd ON gf.k = gd.k GROUP BY gd.v'),
  ('SELECT gf.k, count(*), sum(gf.a) FROM gf JOIN gd ON gf.k = gd.k GROUP BY gf.k'),
  ('SELECT gd.k, count(*), max(gf.a) FROM gf JOIN gd ON gf.k = gd.k GROUP BY gd.k'),
  ('SELECT gdd.cat, gf.flag, gf.dt, count(*), sum(gf.a), avg(gf.a * 2 - gdd.cat) FROM gf JOIN gdd ON gf.k = gdd.k GROUP BY gdd.cat, gf.flag, gf.dt'),
  ('SELECT gdd.day, gdd.hot, g4, min(gf.a), max(gdd.cat), count(gdd.cat) FROM gf JOIN gdd ON gf.k = gdd.k GROUP BY 1, 2, 3'),
  ('SELECT g8, count(*), sum(gf.c), avg(gf.c), sum(gf.a) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g8'),
  ('SELECT g8d.w, sum(gf.c - g8d.k8), avg(gf.k8), min(gf.c) FROM gf JOIN g8d ON gf.k8 = g8d.k8 GROUP BY g8d.w'),
  ('SELECT g2, count(*), sum(a), avg(a) FROM gf WHERE k IN (SELECT k FROM gd WHERE v > 0) GROUP BY g2'),
  ('SELECT dt, flag, count(*), avg(b) FROM gf WHERE NOT EXISTS (SELECT 1 FROM gd WHERE gd.k = gf.k) GROUP BY dt, flag'),
  ('SELECT dt, count(*) FROM gf WHERE NOT EXISTS (SELECT 1 FROM gdd WHERE gdd.k = gf.k AND gdd.cat > gf.g2) AND gf.b > 0 GROUP BY dt'),
  ('SELECT gdd.day, count(*), sum(gf.a) FROM gf JOIN gdd ON gf.k = gdd.k AND gf.a > gdd.cat GROUP BY gdd.day'),
  ('SELECT g4, avg(gf.a) FROM gf JOIN gd ON gf.k = gd.k WHERE gf.a IS NULL OR g4 = 3 GROUP BY g4'),
  ('SELECT g4 + 1, count(*) * 2, sum(gf.a)::float8 / count(*) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g4'),
  ('SELECT g2, count(*) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g2 HAVING count(*) > 800'),
  ('SELECT g2 FROM gf JOIN gd ON gf.k = gd.k GROUP BY g2 HAVING sum(gf.a) > 0 AND min(gd.v) < 0'),
  ('SELECT g4, count(*) FROM gf JOIN gd ON gf.k = gd.k WHERE gd.v + 0 > 100 GROUP BY g4'),
  ('SELECT count(*) FROM gf JOIN gd ON gf.k = gd.k HAVING count(*) > 0'),
  ('SELECT g2, g2, count(*) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g2, g2'),
  ('SELECT x, (SELECT string_agg(s::text, '','' ORDER BY s::text) FROM (SELECT g2, sum(gf.a) FROM gf JOIN gd ON gf.k = gd.k WHERE gd.v < x GROUP BY g2) s) FROM generate_series(-1, 2) x'),
  ('SELECT * FROM (SELECT g4, count(*) AS n FROM gf JOIN gdd ON gf.k = gdd.k GROUP BY g4 ORDER BY 2 DESC, 1 LIMIT 3) s')
) AS c(q);
-- not folded: a group key that is an expression, or of another type
SELECT count(*) AS folded FROM (VALUES
  ('SELECT gd.v % 3, count(*) FROM gf JOIN gd ON gf.k = gd.k GROUP BY 1'),
  ('SELECT gd.v::text, count(*) FROM gf JOIN gd ON gf.k = gd.k GROUP BY 1'),
  ('SELECT gf.a::numeric, count(*) FROM gf JOIN gd ON gf.k = gd.k GROUP BY 1'),
  ('SELECT gf.g2, count(*) FROM gf JOIN gd ON gf.k = gd.k GROUP BY ROLLUP (gf.g2)')
) AS c(q) WHERE pg_temp.folded(q);
-- groups that would not fit hash_mem stay PostgreSQL's (the node cannot spill)
SET work_mem = '64kB';
SELECT pg_temp.folded('SELECT gf.g8, count(*), sum(gf.a), min(gf.b) FROM gf JOIN gd ON gf.k = gd.k GROUP BY gf.g8') AS folded_beyond_hash_mem;
RESET work_mem;
-- errors: PostgreSQL's, in a group as without one
SELECT q, pg_temp.same_error(q) FROM (VALUES
  ('SELECT g2, sum(gf.c + gf.c) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g2'),
  ('SELECT g2, max(gf.b * 400::int2) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g2')
) AS c(q);

-- parallel: each participant emits its groups' partial states
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT * FROM pg_temp.plan('SELECT g2, count(*), avg(gf.a) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g2 HAVING count(*) > 10');
SET enable_hashagg = off;
SELECT * FROM pg_temp.plan('SELECT g2, count(*), avg(gf.a) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g2');
RESET enable_hashagg;
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT g2, count(*), count(gf.a), sum(gf.a), avg(gf.a), min(gd.v), max(gf.b) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g2'),
  ('SELECT gdd.cat, gf.flag, gf.dt, count(*), sum(gf.a), avg(gf.a * 2 - gdd.cat) FROM gf JOIN gdd ON gf.k = gdd.k GROUP BY gdd.cat, gf.flag, gf.dt'),
  ('SELECT gd.k, count(*), max(gf.a) FROM gf JOIN gd ON gf.k = gd.k GROUP BY gd.k'),
  ('SELECT g8, count(*), sum(gf.a), avg(gf.b) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g8'),
  ('SELECT g2, count(*), sum(a), avg(a) FROM gf WHERE k IN (SELECT k FROM gd WHERE v > 0) GROUP BY g2'),
  ('SELECT dt, flag, count(*), avg(b) FROM gf WHERE NOT EXISTS (SELECT 1 FROM gd WHERE gd.k = gf.k) GROUP BY dt, flag'),
  ('SELECT gdd.day, count(*), sum(gf.a) FROM gf JOIN gdd ON gf.k = gdd.k AND gf.a > gdd.cat GROUP BY gdd.day'),
  ('SELECT g2 FROM gf JOIN gd ON gf.k = gd.k GROUP BY g2 HAVING sum(gf.a) > 0 AND min(gd.v) < 0'),
  ('SELECT g4, count(*) FROM gf JOIN gempty ON gf.k = gempty.k GROUP BY g4')
) AS c(q);
SELECT q, pg_temp.same_error(q) FROM (VALUES
  ('SELECT g2, max(gf.b * 400::int2) FROM gf JOIN gd ON gf.k = gd.k GROUP BY g2')
) AS c(q);
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;
