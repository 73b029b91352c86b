--
-- The direct reader's helper thread (gpuhash.read_thread): where a table's
-- wanted columns come after a variable-length one and its filter removed
-- most of the first 64 pages' rows, a thread deforms and filters the pages
-- the backend pins ahead.  Each query runs with the node forced on and is
-- compared, as a multiset, with PostgreSQL's own plan, serially and in
-- parallel; EXPLAIN ANALYZE says when the thread took the pages apart, so
-- that the test cannot pass without it.
--
LOAD 'gpuhash';
SET gpuhash.device = cpu;
SET gpuhash.join_startup_cost = 0;
SET gpuhash.join_build_row_cost = 0;
SET gpuhash.join_probe_row_cost = 0;
SET gpuhash.batch_rows = 4096;

\i sql/compare.psql

-- The Direct Scan lines of EXPLAIN ANALYZE of q (PostgreSQL's joins off).
CREATE FUNCTION pg_temp.direct_analyze(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'Direct Scan: ' THEN RETURN NEXT substring(l from 'Direct Scan: (.*)$'); END IF;
  END LOOP;
END $$;

-- 60000 rows, a text column first (nothing after it is at a fixed offset),
-- NULLs in every column, numerics of several scales and a few special ones
SELECT setseed(0.4141);
CREATE TABLE rt (id int, t text, k int, d date, n numeric(10,2), x numeric, b bool, v int);
INSERT INTO rt
SELECT g,
       CASE WHEN random() < 0.05 THEN NULL ELSE repeat('z', (random() * 30)::int) || (g % 50) END,
       CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 2000)::int END,
       CASE WHEN random() < 0.05 THEN NULL ELSE date '2020-01-01' + (random() * 1000)::int END,
       CASE WHEN random() < 0.05 THEN NULL ELSE round((random() * 100)::numeric, 2) END,
       CASE WHEN random() < 0.05 THEN NULL WHEN random() < 0.01 THEN 'NaN'
            ELSE round((random() * 100 - 50)::numeric, (random() * 5)::int) END,
       CASE WHEN random() < 0.05 THEN NULL ELSE random() < 0.5 END,
       CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 1000)::int END
FROM generate_series(1, 60000) g;
-- a column added later: the older rows lack it and take its default
ALTER TABLE rt ADD COLUMN extra int DEFAULT 3;
INSERT INTO rt (id, t, k, d, n, v, extra)
SELECT 60000 + g, 'w' || g, g % 2000, date '2021-01-01' + g % 300, g % 100, g % 1000, g % 5
FROM generate_series(1, 5000) g;
CREATE TABLE rd (id int, k int, w int);
INSERT INTO rd SELECT g, g % 2000, g % 7 FROM generate_series(1, 4000) g;
ANALYZE rt, rd;

CREATE TABLE corpus (ord int, q text);
INSERT INTO corpus VALUES
  -- integers, dates, a date against a timestamp, booleans
  (1, 'SELECT r.id, d.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.v < 100'),
  (2, 'SELECT r.id, d.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.d >= date ''2021-03-01'' AND r.d < date ''2021-03-01'' + interval ''2 months'''),
  (3, 'SELECT r.id, d.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.b AND r.v IN (1, 2, 3, 500, 999) OR r.v IS NULL'),
  -- numeric against constants, NaN in the column
  (4, 'SELECT r.id, d.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.n BETWEEN 10 AND 15.5 AND r.x < 0'),
  (5, 'SELECT r.id, r.x, d.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.x > 45 OR r.x = ''NaN'''),
  -- quals that need a function call: tested by the backend after the thread
  (6, 'SELECT r.id, r.t, d.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.t = ''zz7'' OR (r.v < 50 AND r.t < ''zzzzz'')'),
  (7, 'SELECT r.id, d.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.t LIKE ''%z1'' AND r.v < 500'),
  -- the column added later: older rows through the Seq Scan's slot
  (8, 'SELECT r.id, r.extra, d.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.extra = 3 AND r.v < 80 OR r.extra = 1'),
  -- folded aggregates over one scan and over a join
  (9, 'SELECT count(*), sum(r.n * (1 - r.n)), min(r.d), max(r.v) FROM rt r WHERE r.v < 120 AND r.d > date ''2020-06-01'''),
  (10, 'SELECT d.w, count(*), sum(r.x) FROM rt r JOIN rd d ON r.k = d.k WHERE r.v < 200 GROUP BY d.w'),
  -- semi and anti joins
  (11, 'SELECT r.id FROM rt r WHERE r.v < 90 AND r.k IN (SELECT k FROM rd WHERE w < 3)'),
  (12, 'SELECT r.id FROM rt r WHERE r.v < 90 AND NOT EXISTS (SELECT 1 FROM rd WHERE rd.k = r.k AND rd.w = 1)');

-- serially: each query uses the thread, as EXPLAIN ANALYZE says
SELECT ord, pg_temp.direct_analyze(q) FROM corpus WHERE ord IN (1, 6, 8, 9) ORDER BY ord;
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;

-- 40 more drawn at random: an atom that keeps about a tenth of the rows,
-- ANDed with one or two others of every compiled form (and one left to the
-- executor), NOT and OR among them; how many started the thread, and
-- whether each gave PostgreSQL's answer
SELECT setseed(0.777);
CREATE TABLE drawn (ord int, q text);
CREATE FUNCTION pg_temp.atom() RETURNS text LANGUAGE sql AS $$
  SELECT (ARRAY[
    format('r.v %s %s', (ARRAY['<', '<=', '>', '>=', '<>', '='])[1 + floor(random() * 6)::int], floor(random() * 1000)::int),
    format('r.n %s %s', (ARRAY['<', '>=', '='])[1 + floor(random() * 3)::int], round((random() * 100)::numeric, 1 + floor(random() * 2)::int)),
    format('r.x %s %s', (ARRAY['<', '>', '<>'])[1 + floor(random() * 3)::int], round((random() * 100 - 50)::numeric, floor(random() * 4)::int)),
    format('r.d %s date ''2020-01-01'' + %s', (ARRAY['<', '>=', '='])[1 + floor(random() * 3)::int], floor(random() * 1000)::int),
    format('r.d < timestamp ''2020-06-01 12:00'' + interval ''%s days''', floor(random() * 900)::int),
    format('r.t %sLIKE ''%s''', (ARRAY['', 'NOT '])[1 + floor(random() * 2)::int], (ARRAY['z%', '%7', '%z1%', 'zz%3', '%'])[1 + floor(random() * 5)::int]),
    format('r.k IN (%s, %s, %s)', floor(random() * 2000)::int, floor(random() * 2000)::int, floor(random() * 2000)::int),
    'r.b', 'NOT r.b', 'r.x IS NULL', 'r.t IS NOT NULL',
    format('r.t < ''%s''', repeat('z', floor(random() * 20)::int)),
    format('r.v %% 3 = %s', floor(random() * 3)::int)])[1 + floor(random() * 13)::int]
$$;
INSERT INTO drawn
SELECT g, format('SELECT r.id, d.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.v < %s AND %s',
                 50 + floor(random() * 100)::int,
                 CASE floor(random() * 3)::int WHEN 0 THEN pg_temp.atom()
                      WHEN 1 THEN format('(%s OR %s)', pg_temp.atom(), pg_temp.atom())
                      ELSE format('NOT (%s) AND %s', pg_temp.atom(), pg_temp.atom()) END)
FROM generate_series(1, 40) g;
SELECT count(*) FILTER (WHERE l ~ 'helper thread') AS with_thread, count(*) AS queries
FROM drawn, LATERAL pg_temp.direct_analyze(q) l;
SELECT ord, pg_temp.same(q) FROM drawn ORDER BY ord;

-- not where most rows pass, nor when turned off
SELECT * FROM pg_temp.direct_analyze('SELECT r.id, d.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.v > 100');
SET gpuhash.read_thread = off;
SELECT * FROM pg_temp.direct_analyze('SELECT r.id, d.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.v < 100');
SELECT ord, pg_temp.same(q) FROM corpus WHERE ord IN (1, 4, 6, 8) ORDER BY ord;
RESET gpuhash.read_thread;

-- rescanned with new parameter values, in a generic plan and below a loop
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SET plan_cache_mode = force_generic_plan;
PREPARE pr(int) AS SELECT count(*), sum(r.v) FROM rt r JOIN rd d ON r.k = d.k WHERE r.v < $1 AND r.n > 1;
EXECUTE pr(100);
EXECUTE pr(30);
SELECT p, (SELECT count(*) FROM rt r JOIN rd d ON r.k = d.k WHERE r.v < p AND d.w < 4) FROM generate_series(10, 70, 30) p;
RESET plan_cache_mode;
DEALLOCATE pr;
-- an error while the thread reads, then the same scan again
SELECT sum(r.v / (r.k - r.k)) FROM rt r WHERE r.v < 100;
SELECT count(*) FROM rt r WHERE r.v < 100;
-- a limit that stops the read early
SELECT count(*) FROM (SELECT r.id FROM rt r JOIN rd d ON r.k = d.k WHERE r.v < 100 LIMIT 10) s;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
-- the same answers without the node
SET gpuhash.enable_join = off;
SET gpuhash.enable_aggregate = off;
SELECT count(*), sum(r.v) FROM rt r JOIN rd d ON r.k = d.k WHERE r.v < 100 AND r.n > 1;
SELECT count(*), sum(r.v) FROM rt r JOIN rd d ON r.k = d.k WHERE r.v < 30 AND r.n > 1;
SELECT p, (SELECT count(*) FROM rt r JOIN rd d ON r.k = d.k WHERE r.v < p AND d.w < 4) FROM generate_series(10, 70, 30) p;
SELECT count(*) FROM rt r WHERE r.v < 100;
RESET gpuhash.enable_join;
RESET gpuhash.enable_aggregate;

-- parallel
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP TABLE rt, rd, corpus, drawn;
