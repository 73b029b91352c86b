--
-- The outer side's key filter (gpuhash.key_filter): where the planner
-- expects an inner or semi join to drop most outer rows, the directly read
-- outer side tests each row's key against a Bloom filter of the table's
-- keys and drops the rows it refuses before they are copied and probed.
-- Every query is compared, as a multiset, with PostgreSQL's own plan
-- (keys of each width and of mixed widths, dates, packed pairs, NULLs and
-- extreme values, semi joins, and the anti and left joins that must not use
-- it), serially and in parallel; EXPLAIN ANALYZE says the filter ran, so
-- that the test cannot pass without it.
--
LOAD 'gpuhash';
SET gpuhash.device = cpu;
SET gpuhash.join_startup_cost = 0;
SET gpuhash.join_build_row_cost = 0;
SET gpuhash.join_probe_row_cost = 0;
SET gpuhash.batch_rows = 4096;
-- the joins here build their inner side; right semi joins' filter is in sql/right_semi
SET gpuhash.build_outer = off;

\i sql/compare.psql

-- What the lines of EXPLAIN ANALYZE of q (PostgreSQL's joins off) that
-- start with label say.
CREATE FUNCTION pg_temp.analyzed(q text, label text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ ('^\s*' || label || ': ') THEN RETURN NEXT substring(l from label || ': (.*)$'); END IF;
  END LOOP;
END $$;

-- The key filter's line, with the count of rows it removed replaced by
-- whether it removed any; 'no key filter' without one.
CREATE FUNCTION pg_temp.kf(q text) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce((SELECT regexp_replace(l, '^\d+ kB, removed (\d+) outer rows',
                                         CASE WHEN substring(l from 'removed (\d+) outer')::bigint > 0
                                              THEN 'removed some outer rows' ELSE 'removed no outer row' END)
                   FROM pg_temp.analyzed(q, 'Key Filter') l LIMIT 1), 'no key filter')
$$;

-- The rows the key filter removed from q's outer side.
CREATE FUNCTION pg_temp.kf_removed(q text) RETURNS bigint LANGUAGE sql AS $$
  SELECT coalesce((SELECT substring(l from 'removed (\d+) outer')::bigint
                   FROM pg_temp.analyzed(q, 'Key Filter') l LIMIT 1), 0)
$$;

-- 60000 fact rows: a text column first (the reader walks each tuple), keys
-- of every width with NULLs, duplicates and extreme values, and 8-byte keys
-- beyond the 4-byte range whose low halves equal small keys
SELECT setseed(0.2718);
CREATE TABLE kf_fact (pad text, id int, k4 int, k8 bigint, k2 smallint, d date, a int, b int, v int);
INSERT INTO kf_fact
SELECT repeat('p', g % 13),
       g,
       CASE WHEN random() < 0.03 THEN NULL ELSE (random() * 20000)::int END,
       CASE WHEN random() < 0.03 THEN NULL WHEN random() < 0.1 THEN (g % 400)::bigint + 4294967296
            ELSE (random() * 20000)::bigint END,
       CASE WHEN random() < 0.03 THEN NULL ELSE (random() * 20000)::int::smallint END,
       CASE WHEN random() < 0.03 THEN NULL ELSE date '2000-01-01' + (random() * 20000)::int END,
       (random() * 100)::int,
       CASE WHEN random() < 0.03 THEN NULL ELSE (random() * 200)::int END,
       (random() * 1000)::int
FROM generate_series(1, 60000) g;
INSERT INTO kf_fact VALUES
  ('x', -1, -2147483648, -9223372036854775808, -32768, '4713-01-01 BC', -2147483648, 2147483647, 1),
  ('x', -2, 2147483647, 9223372036854775807, 32767, '5874897-12-31', 2147483647, -2147483648, 2),
  ('x', -3, 0, 0, 0, 'infinity', 0, 0, 3),
  ('x', -4, -1, -1, -1, '-infinity', -1, -1, 4);
-- 400 dimension rows (some keys twice), so that about 2 % of the fact rows match
CREATE TABLE kf_dim (k4 int, k8 bigint, k2 smallint, d date, a int, b int, w int);
INSERT INTO kf_dim
SELECT g * 50, g * 50, (g * 50)::smallint, date '2000-01-01' + g * 50, g % 100, g % 200, g % 7
FROM generate_series(0, 399) g;
INSERT INTO kf_dim SELECT k4, k8, k2, d, a, b, w + 1 FROM kf_dim WHERE w = 3;
INSERT INTO kf_dim VALUES
  (-2147483648, -9223372036854775808, -32768, '4713-01-01 BC', -2147483648, 2147483647, 0),
  (2147483647, 9223372036854775807, 32767, 'infinity', 2147483647, -2147483648, 1),
  (NULL, NULL, NULL, NULL, NULL, NULL, 2),
  (-1, 4294967296 + 50, -1, '-infinity', -1, -1, 3);
ANALYZE kf_fact, kf_dim;
CREATE TABLE kf_few (k4 int, k8 bigint, a int, b int, w int);
INSERT INTO kf_few SELECT g % 3 * 50, CASE WHEN g % 3 = 2 THEN 4294967296 + 50 ELSE g % 3 * 50 END,
                          g % 5, g % 5 * 40, g % 7
FROM generate_series(1, 600) g;
ANALYZE kf_few;

CREATE TABLE corpus (ord int, q text);
INSERT INTO corpus VALUES
  (1, 'SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k4'),
  (2, 'SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k4 WHERE f.v < 500'),
  (3, 'SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k8 = d.k8'),
  -- mixed widths: an 8-byte outer key against 4-byte build keys, and the reverse
  (4, 'SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k8 = d.k4'),
  (5, 'SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k8'),
  (6, 'SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k2 = d.k4'),
  (7, 'SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.d = d.d'),
  -- two 4-byte keys packed into one
  (8, 'SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.a = d.a AND f.b = d.b AND f.k4 % 2 = 0'),
  -- semi joins
  (9, 'SELECT f.id FROM kf_fact f WHERE f.k4 IN (SELECT k4 FROM kf_dim WHERE w < 5)'),
  (10, 'SELECT f.id FROM kf_fact f WHERE EXISTS (SELECT 1 FROM kf_dim d WHERE d.k8 = f.k8 AND d.w <> 2)'),
  -- other join clauses on the pairs
  (11, 'SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k4 AND f.v > d.w * 100'),
  -- folded: grouped, and over one table's rows with a filter
  (12, 'SELECT d.w, count(*), sum(f.v), min(f.d) FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k4 GROUP BY d.w'),
  (13, 'SELECT count(*), sum(f.v) FROM kf_fact f JOIN kf_dim d ON f.k8 = d.k8 WHERE f.v BETWEEN 100 AND 900'),
  -- anti and left joins keep the rows without a match: no filter
  (14, 'SELECT f.id FROM kf_fact f WHERE NOT EXISTS (SELECT 1 FROM kf_dim d WHERE d.k4 = f.k4)'),
  (15, 'SELECT f.id, d.w FROM kf_fact f LEFT JOIN kf_dim d ON f.k4 = d.k4'),
  -- an empty build: the outer side is not read
  (16, 'SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k4 AND d.w > 100'),
  -- a bigint and a 4-byte key, few rows a value: the first hashed alone
  (17, 'SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k8 = d.k8 AND f.b = d.b'),
  (18, 'SELECT f.id FROM kf_fact f WHERE EXISTS (SELECT 1 FROM kf_dim d WHERE d.k4 = f.k8 AND d.a = f.a)');

-- serially
SELECT ord, pg_temp.kf(q) FROM corpus ORDER BY ord;
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;

-- it removes nearly every row without a match, and never one with a match
-- (which the answers above would show): one with 2 % matching
SELECT removed <= unmatched AS none_with_a_match, removed >= 0.95 * unmatched AS most_without
FROM (SELECT pg_temp.kf_removed('SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k4') AS removed,
             (SELECT count(*) FROM kf_fact f WHERE NOT EXISTS (SELECT 1 FROM kf_dim d WHERE d.k4 = f.k4)) AS unmatched) s;

-- its rows are taken apart by the read thread, which sees only the rows the filter keeps
SELECT pg_temp.analyzed('SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k4 WHERE f.v < 900', 'Direct Scan');
-- with no filter of its own: the key filter alone removes most rows
SELECT pg_temp.analyzed('SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k4', 'Direct Scan');

-- keys at fixed offsets (only fixed-length columns before them): tested
-- before the row is taken apart or its quals are, except in rows with a
-- NULL and in the rows older than a key column added later
CREATE TABLE kf_early (k4 int, k8 bigint, d date, a int, b int, pad text, v int);
INSERT INTO kf_early SELECT k4, k8, d, a, b, pad, v FROM kf_fact;
ALTER TABLE kf_early ADD COLUMN k2 int DEFAULT 7;
INSERT INTO kf_early SELECT k4, k8, d, a, b, pad, v, k4 FROM kf_fact WHERE id % 10 = 0;
ANALYZE kf_early;
CREATE TABLE corpus_early (ord int, q text);
INSERT INTO corpus_early VALUES
  (1, 'SELECT e.v, d.w FROM kf_early e JOIN kf_dim d ON e.k4 = d.k4'),
  (2, 'SELECT e.v, d.w FROM kf_early e JOIN kf_dim d ON e.k4 = d.k4 WHERE e.v < 500 AND e.pad <> ''p'''),
  (3, 'SELECT e.v, d.w FROM kf_early e JOIN kf_dim d ON e.k8 = d.k8'),
  (4, 'SELECT e.v, d.w FROM kf_early e JOIN kf_dim d ON e.k8 = d.k4'),
  (5, 'SELECT e.v, d.w FROM kf_early e JOIN kf_dim d ON e.d = d.d'),
  (6, 'SELECT e.v, d.w FROM kf_early e JOIN kf_dim d ON e.a = d.a AND e.b = d.b'),
  (7, 'SELECT e.v FROM kf_early e WHERE e.k4 IN (SELECT k4 FROM kf_dim WHERE w < 5)'),
  (8, 'SELECT e.v, d.w FROM kf_early e JOIN kf_dim d ON e.k2 = d.k4'),
  (9, 'SELECT d.w, count(*), sum(e.v) FROM kf_early e JOIN kf_dim d ON e.k4 = d.k4 GROUP BY d.w'),
  (10, 'SELECT e.v, d.w FROM kf_early e JOIN kf_dim d ON e.k8 = d.k8 AND e.a = d.a');
SELECT ord, pg_temp.kf(q) FROM corpus_early ORDER BY ord;
SELECT ord, pg_temp.same(q) FROM corpus_early ORDER BY ord;
SELECT removed <= unmatched AS none_with_a_match, removed >= 0.95 * unmatched AS most_without
FROM (SELECT pg_temp.kf_removed('SELECT e.v, d.w FROM kf_early e JOIN kf_dim d ON e.k4 = d.k4') AS removed,
             (SELECT count(*) FROM kf_early e WHERE NOT EXISTS (SELECT 1 FROM kf_dim d WHERE d.k4 = e.k4)) AS unmatched) s;

-- a bigint and a 4-byte key mixed into one (kf_few has more than 16 rows a
-- value of each, so neither is hashed alone), the reader mixing as the join
-- does; building costs again, so that kf_few is the side built
SET gpuhash.join_build_row_cost = 0.01;
SELECT pg_temp.kf('SELECT f.id, d.w FROM kf_fact f JOIN kf_few d ON f.k8 = d.k8 AND f.b = d.b'),
       pg_temp.same('SELECT f.id, d.w FROM kf_fact f JOIN kf_few d ON f.k8 = d.k8 AND f.b = d.b');
SELECT pg_temp.kf('SELECT f.id FROM kf_fact f WHERE EXISTS (SELECT 1 FROM kf_few d WHERE d.k4 = f.k8 AND d.a = f.a)'),
       pg_temp.same('SELECT f.id FROM kf_fact f WHERE EXISTS (SELECT 1 FROM kf_few d WHERE d.k4 = f.k8 AND d.a = f.a)');
SELECT pg_temp.kf('SELECT e.v, d.w FROM kf_early e JOIN kf_few d ON e.k8 = d.k8 AND e.a = d.a'),
       pg_temp.same('SELECT e.v, d.w FROM kf_early e JOIN kf_few d ON e.k8 = d.k8 AND e.a = d.a');
SELECT count(*) AS mixed_plans FROM (VALUES
  ('SELECT f.id, d.w FROM kf_fact f JOIN kf_few d ON f.k8 = d.k8 AND f.b = d.b'),
  ('SELECT f.id FROM kf_fact f WHERE EXISTS (SELECT 1 FROM kf_few d WHERE d.k4 = f.k8 AND d.a = f.a)')) q(q),
  LATERAL pg_temp.analyzed(q.q, 'Hash Cond') l WHERE l ~ ' AND ';
RESET gpuhash.join_build_row_cost;

-- a join the planner expects to be selective but is not (the statistics
-- are stale): the reader switches the filter off after its first rows
CREATE TABLE kf_stale (k4 int, w int);
INSERT INTO kf_stale SELECT g * 1000, g FROM generate_series(1, 20) g;
ANALYZE kf_stale;
INSERT INTO kf_stale SELECT g, g % 7 FROM generate_series(0, 20000) g;
SELECT pg_temp.kf('SELECT f.id, s.w FROM kf_fact f JOIN kf_stale s ON f.k4 = s.k4');
SELECT pg_temp.same('SELECT f.id, s.w FROM kf_fact f JOIN kf_stale s ON f.k4 = s.k4');

-- not when turned off, nor where most rows match
SET gpuhash.key_filter = off;
SELECT pg_temp.kf(q) FROM corpus WHERE ord = 1;
SELECT ord, pg_temp.same(q) FROM corpus WHERE ord IN (1, 4, 8) ORDER BY ord;
RESET gpuhash.key_filter;
ANALYZE kf_stale;
SELECT pg_temp.kf('SELECT f.id, s.w FROM kf_fact f JOIN kf_stale s ON f.k4 = s.k4');

-- an error while the read thread has pages in flight, with a filter of
-- 256 kB (freed with the query's memory only after the thread stops), then
-- the same join again
CREATE TABLE kf_wide (k4 int, pad text, v int);
INSERT INTO kf_wide SELECT g, repeat('w', g % 7), g % 1000 FROM generate_series(1, 400000) g;
CREATE TABLE kf_big (k4 int);
INSERT INTO kf_big SELECT g * 7 FROM generate_series(1, 70000) g;
ANALYZE kf_wide, kf_big;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT pg_temp.kf('SELECT w.v FROM kf_wide w JOIN kf_big b ON w.k4 = b.k4');
SELECT pg_temp.analyzed('SELECT w.v FROM kf_wide w JOIN kf_big b ON w.k4 = b.k4', 'Direct Scan');
SELECT sum(w.v / (w.v - w.v)) FROM kf_wide w JOIN kf_big b ON w.k4 = b.k4;
SELECT count(*), sum(w.v) FROM kf_wide w JOIN kf_big b ON w.k4 = b.k4;
-- a limit that lets go of the build (and the filter) with pages in flight
SELECT count(*) FROM (SELECT w.v FROM kf_wide w JOIN kf_big b ON w.k4 = b.k4 LIMIT 10) s;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
SET gpuhash.enable_join = off;
SET gpuhash.enable_aggregate = off;
SELECT count(*), sum(w.v) FROM kf_wide w JOIN kf_big b ON w.k4 = b.k4;
RESET gpuhash.enable_join;
RESET gpuhash.enable_aggregate;

-- rebuilt with new parameter values, in a generic plan and below a loop
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SET plan_cache_mode = force_generic_plan;
PREPARE pr(int) AS SELECT count(*), sum(f.v) FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k4 WHERE d.w = $1;
EXECUTE pr(1);
EXECUTE pr(4);
EXECUTE pr(9);
EXECUTE pr(2);
SELECT p, (SELECT count(*) FROM kf_fact f JOIN kf_dim d ON f.k8 = d.k8 WHERE d.w = p) FROM generate_series(0, 6, 3) p;
-- a limit that stops the read early
SELECT count(*) FROM (SELECT f.id FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k4 LIMIT 10) s;
RESET plan_cache_mode;
DEALLOCATE pr;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
SET gpuhash.enable_join = off;
SET gpuhash.enable_aggregate = off;
SELECT w, count(*), sum(f.v) FROM kf_fact f JOIN kf_dim d ON f.k4 = d.k4 WHERE d.w IN (1, 4, 9, 2) GROUP BY w ORDER BY w;
SELECT p, (SELECT count(*) FROM kf_fact f JOIN kf_dim d ON f.k8 = d.k8 WHERE d.w = p) FROM generate_series(0, 6, 3) p;
RESET gpuhash.enable_join;
RESET gpuhash.enable_aggregate;

-- parallel: the participants add their build rows' keys to one filter
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT ord, pg_temp.kf(q) FROM corpus WHERE ord IN (1, 3, 8, 9, 12) ORDER BY ord;
-- query 8's two sides tie on cost in parallel, and it plans the other way
-- round; a join on the same packed pair, with fewer dimension rows and no
-- filter on the fact side, checks the pair's filter in parallel
SELECT pg_temp.kf('SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.a = d.a AND f.b = d.b AND d.w < 5'),
       pg_temp.same('SELECT f.id, d.w FROM kf_fact f JOIN kf_dim d ON f.a = d.a AND f.b = d.b AND d.w < 5');
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;
SELECT ord, pg_temp.same(q) FROM corpus_early ORDER BY ord;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP TABLE kf_fact, kf_dim, kf_few, kf_stale, kf_early, kf_wide, kf_big, corpus, corpus_early;
