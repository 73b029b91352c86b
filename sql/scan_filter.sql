--
-- Filtered scans read by the join itself: a Seq Scan with a filter below a
-- GpuHashJoin is read straight from the heap, its quals compiled where they
-- are comparisons, IN lists, NULL tests, a text LIKE of literals and %, and
-- AND/OR/NOT over a column and constants (scan_filter.c), the others tested
-- by ExecQual.  Each query is
-- run with the node forced on and compared, as multisets, with PostgreSQL's
-- own plan, serially and in parallel; each says how its sides were read, so
-- that the test cannot pass without taking the path it tests.
--
LOAD 'gpuhash';
SET gpuhash.device = cpu;
SET gpuhash.join_startup_cost = 0;
SET gpuhash.join_build_row_cost = 0;
SET gpuhash.join_probe_row_cost = 0;
-- many batches
SET gpuhash.batch_rows = 1024;

\i sql/compare.psql

-- The Direct Scan line of q's plan with PostgreSQL's own joins off.
CREATE FUNCTION pg_temp.direct(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text; r text := 'not read directly';
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
    IF l ~ 'Direct Scan: ' THEN r := substring(l from 'Direct Scan: (.*)$'); END IF;
  END LOOP;
  RETURN r;
END $$;

-- The lines of EXPLAIN ANALYZE of q that match pattern, with the node on
-- (PostgreSQL's joins off) or off.
CREATE FUNCTION pg_temp.analyze_lines(q text, node boolean, pattern text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  PERFORM set_config('enable_hashjoin', (NOT node)::text, true);
  PERFORM set_config('enable_mergejoin', (NOT node)::text, true);
  PERFORM set_config('enable_nestloop', (NOT node)::text, true);
  PERFORM set_config('gpuhash.enable_join', node::text, true);
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ pattern THEN RETURN NEXT l; END IF;
  END LOOP;
  PERFORM set_config('gpuhash.enable_join', 'on', true);
END $$;

-- random data: NULLs in every column, duplicates, the extremes of each
-- type; the by-value columns first (read in place in a row without NULLs),
-- then a text column, after which nothing is at a fixed offset
SELECT setseed(0.2323);
CREATE TABLE fo (id int, k int4, i2 int2, i8 int8, d date, b bool, dropme int,
                 t text, c char(3), n numeric(8,2), v int);
CREATE TABLE fi (LIKE fo);
CREATE FUNCTION pg_temp.fill(tab text, n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($f$
    INSERT INTO %I
    SELECT g,
           CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 400)::int END,
           CASE WHEN random() < 0.05 THEN NULL WHEN random() < 0.03 THEN -32768
                WHEN random() < 0.03 THEN 32767 ELSE (random() * 8)::int END,
           CASE WHEN random() < 0.05 THEN NULL WHEN random() < 0.03 THEN -9223372036854775808
                WHEN random() < 0.03 THEN 9223372036854775807
                ELSE (random() * 4294967296 * 2)::int8 - 4294967296 END,
           CASE WHEN random() < 0.05 THEN NULL WHEN random() < 0.02 THEN 'infinity'::date
                WHEN random() < 0.02 THEN '-infinity'::date
                ELSE date '2020-01-01' + (random() * 365)::int END,
           CASE WHEN random() < 0.1 THEN NULL ELSE random() < 0.5 END,
           0,
           CASE WHEN random() < 0.05 THEN NULL ELSE 'a' || (random() * 20)::int END,
           CASE WHEN random() < 0.05 THEN NULL ELSE (ARRAY['ab', 'x', 'abc', ''])[1 + (random() * 3)::int] END,
           CASE WHEN random() < 0.05 THEN NULL ELSE round((random() * 10)::numeric, 2) END,
           CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 100)::int END
    FROM generate_series(1, %s) g$f$, tab, n);
END $$;
SELECT pg_temp.fill('fo', 3000), pg_temp.fill('fi', 1200);
-- a dropped column in front of the filtered ones, and one added later
-- whose older rows take its default
ALTER TABLE fo DROP COLUMN dropme;
ALTER TABLE fo ADD COLUMN extra int DEFAULT 7;
INSERT INTO fo (id, k, i2, v, extra) SELECT 3000 + g, g % 400, g % 5, g % 100, g % 3 FROM generate_series(1, 600) g;
CREATE TABLE fempty (LIKE fo);
-- numerics of every scale, special values and ones too wide for 128 bits
CREATE TABLE fnum (id int, k int, x numeric);
INSERT INTO fnum
SELECT g, (random() * 400)::int,
       CASE WHEN random() < 0.05 THEN NULL
            WHEN random() < 0.3 THEN (ARRAY[1, 1.5, 1.50, -2.25, 0, -0.0, 1e30, 1e-30, 'NaN',
                 'Infinity', '-Infinity', 123456789012345678901234567890123456789.5, 0.065,
                 0.06, 0.0700, 5.5, 5.5000001, -5.5])[1 + (random() * 17)::int]
            ELSE round((random() * 20 - 10)::numeric, (random() * 4)::int) END
FROM generate_series(1, 3000) g;
-- strings compared bytewise: text (where trailing spaces count), varchar
-- and char(n) (where they do not), empty and multibyte values, and long
-- ones stored compressed, which the read thread leaves to the backend;
-- enough pages for the thread to start where the filter keeps few rows
CREATE TABLE fstr (id int, k int, t text, v varchar(12), c char(5));
INSERT INTO fstr
SELECT g, (random() * 400)::int, s, s, s
FROM (SELECT g, CASE WHEN random() < 0.05 THEN NULL
                     ELSE (ARRAY['ab', 'ab ', 'AB', '', ' ', 'abc', 'abc  ', 'é', 'éa',
                                 'x' || (random() * 9000)::int])[1 + (random() * 9)::int] END AS s
      FROM generate_series(1, 20000) g) x;
UPDATE fstr SET t = repeat('ab', 3000) WHERE id % 97 = 0;
-- a collation that is not bytewise: its = stays a call of the operator's function
CREATE COLLATION fz_nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
ANALYZE fo, fi, fempty, fnum, fstr;

CREATE TABLE corpus (ord int, q text);
INSERT INTO corpus VALUES
  -- integers, compared across widths, at the extremes
  (1, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.v > 50'),
  (2, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i8 > 2147483647'),
  (3, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i2 < 100000 AND f.i2 >= -32768'),
  (4, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i8 = -9223372036854775808 OR f.i8 = 9223372036854775807'),
  (5, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.k BETWEEN 100 AND 200 AND f.i2 <> 3'),
  (6, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE 5 > f.i2'),
  -- IN lists, with and without a NULL in them, negated
  (10, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i2 IN (1, 2, 3, -32768)'),
  (11, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i2 NOT IN (1, 2, 3)'),
  (12, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i2 IN (1, NULL)'),
  (13, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE NOT (f.i2 IN (1, NULL))'),
  (14, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i2 NOT IN (1, NULL)'),
  (15, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i8 IN (-9223372036854775808, 0, 9223372036854775807)'),
  (16, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i2 = ANY (ARRAY[]::int[])'),
  -- dates and booleans
  (20, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.d >= date ''2020-03-01'' AND f.d < date ''2020-06-01'''),
  (21, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.d = ''infinity'' OR f.d < ''2020-01-05'''),
  (22, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.b'),
  (23, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE NOT f.b'),
  (24, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.b IS NULL'),
  (25, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.b IS NOT TRUE'),
  (26, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.b <> true'),
  -- AND, OR and NOT with NULLs inside
  (30, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE (f.v < 10 OR f.i2 = 3) AND NOT (f.d = date ''2020-05-05'')'),
  (31, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.v < 10 OR f.v IS NULL'),
  (32, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE NOT (f.v > 50 OR f.i2 > 4)'),
  (33, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i8 IS NOT NULL AND f.d IS NULL'),
  -- text, char(n) and numeric, through their comparison functions
  (40, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t = ''a5'''),
  (41, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t IN (''a1'', ''a2'', ''a3'')'),
  (42, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t <> ALL (ARRAY[''a1'', NULL])'),
  (43, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t < ''a3'' COLLATE "C"'),
  (44, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.c = ''ab'''),
  (45, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.c IN (''ab '', ''x'', '''')'),
  (46, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.n < 5.5'),
  (47, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.n BETWEEN 1 AND 2.25 OR f.n = 3'),
  -- two columns compared
  (48, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.k < f.v AND f.i8 >= f.k'),
  (49, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t = f.t OR f.i2 <> f.k'),
  -- quals left to the executor, alone and after compiled ones
  (50, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.v % 7 = 3'),
  (51, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.v % 7 = 3 AND f.k > 10 AND f.t LIKE ''a1%'''),
  (52, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.ctid > ''(3,0)'' AND f.i2 > 0'),
  (53, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.v > (SELECT avg(v) FROM fi)'),
  -- the column added later (older rows have its default) and rows without it
  (55, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.extra = 7'),
  (56, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.extra < 2 AND f.i2 IN (0, 1)'),
  -- filters on the inner side, on both, nothing passing, an empty table
  (60, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE i.v > 20 AND i.d < ''2020-06-01'''),
  (61, 'SELECT f.id, i.id, i.t FROM fo f JOIN fi i ON f.k = i.k WHERE i.t IN (''a1'', ''a2'') AND f.i2 < 4'),
  (62, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.v > 1000000'),
  (63, 'SELECT f.id, e.id FROM fo f JOIN fempty e ON f.k = e.k WHERE e.v > 1'),
  -- semi, anti and left joins, a packed key, a folded aggregate
  (70, 'SELECT f.id FROM fo f WHERE f.v > 30 AND f.k IN (SELECT k FROM fi WHERE fi.i2 < 5)'),
  (71, 'SELECT f.id FROM fo f WHERE f.b AND NOT EXISTS (SELECT 1 FROM fi WHERE fi.k = f.k AND fi.v > 50)'),
  (72, 'SELECT f.id, i.id FROM fo f LEFT JOIN fi i ON f.k = i.k AND i.v > 50 WHERE f.i2 > 0'),
  (73, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k AND f.i2 = i.i2 WHERE f.d > ''2020-02-01'' AND i.n > 2'),
  (74, 'SELECT count(*), sum(f.v), min(i.v) FROM fo f JOIN fi i ON f.k = i.k WHERE f.i2 > 0 AND i.t <> ''a3'''),
  -- LIKE with literals and %: a prefix, a suffix, literals in order (not
  -- overlapping), exact, empty and all-%, negated; with _, an escape, ILIKE
  -- and char(n) it stays with the executor
  (80, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t LIKE ''a1%'''),
  (81, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t NOT LIKE ''%1%'''),
  (82, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t LIKE ''%2'''),
  (83, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t LIKE ''a%1%5'' OR f.t LIKE ''%1%1%'''),
  (84, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t LIKE ''a1'' OR f.t LIKE ''a1a1%'' OR f.t LIKE ''%a%2%0'''),
  (85, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t LIKE ''%%'' AND f.t NOT LIKE '''''),
  (86, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t NOT LIKE ''a%'' OR f.t IS NULL'),
  (87, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t LIKE ''a_1'' OR f.t LIKE ''a\%'''),
  (88, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t ILIKE ''A1%'' AND f.c LIKE ''a%'''),
  (89, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.t::varchar LIKE ''%1'' AND i.t NOT LIKE ''%2%'''),
  -- a date compared with a timestamp: at midnight, within a day, before
  -- 2000 (negative), commuted, equal or not; an infinite one stays a call
  (90, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.d >= date ''2020-03-01'' AND f.d < date ''2020-03-01'' + interval ''1 month'''),
  (91, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.d <= timestamp ''2020-03-01 12:00'' OR f.d > timestamp ''2020-11-30 00:00:00.000001'''),
  (92, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.d >= timestamp ''2020-03-01 00:00:00.000001'' AND f.d < timestamp ''2020-03-10 23:59'''),
  (93, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.d = timestamp ''2020-03-01'' OR f.d = timestamp ''2020-03-02 01:00'''),
  (94, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.d <> timestamp ''2020-03-02 01:00'' AND f.d <> timestamp ''2020-03-03'''),
  (95, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE timestamp ''2020-04-01 06:00'' > f.d AND f.d > timestamp ''1000-01-01 12:00'''),
  (96, 'SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.d < ''infinity''::timestamp AND f.d >= timestamp ''1999-12-31 23:00'''),
  -- numeric against constants of other scales, NaN and infinities in the
  -- column, and constants that are special or too wide
  (97, 'SELECT x.id, i.id FROM fnum x JOIN fi i ON x.k = i.k WHERE x.x < 5.5 AND x.x >= -2.25'),
  (98, 'SELECT x.id, i.id FROM fnum x JOIN fi i ON x.k = i.k WHERE x.x = 1.50 OR x.x = 0.07 OR x.x <> 0'),
  (99, 'SELECT x.id, i.id FROM fnum x JOIN fi i ON x.k = i.k WHERE x.x > 0.065 AND 1e30 >= x.x'),
  (100, 'SELECT x.id, i.id FROM fnum x JOIN fi i ON x.k = i.k WHERE x.x < ''NaN'' AND x.x > ''-Infinity'''),
  (101, 'SELECT x.id, i.id FROM fnum x JOIN fi i ON x.k = i.k WHERE x.x <= 123456789012345678901234567890123456789.5 AND x.x > -0.00001'),
  (102, 'SELECT x.id, i.id FROM fnum x JOIN fi i ON x.k = i.k WHERE x.x = 1e-30 OR x.x = 5.5000001 OR x.x = ''Infinity'''),
  -- strings: = and <>, IN and NOT IN (with a NULL), padded constants,
  -- compressed values, an explicit collation, with a date qual before them
  (103, 'SELECT s.id, i.id FROM fstr s JOIN fi i ON s.k = i.k WHERE s.t = ''ab'''),
  (104, 'SELECT s.id, i.id FROM fstr s JOIN fi i ON s.k = i.k WHERE s.t IN (''ab '', '''', ''é'')'),
  (105, 'SELECT s.id, i.id FROM fstr s JOIN fi i ON s.k = i.k WHERE s.t <> ALL (ARRAY[''ab'', NULL]) OR s.t IS NULL'),
  (106, 'SELECT s.id, i.id FROM fstr s JOIN fi i ON s.k = i.k WHERE s.v = ''abc'' OR s.v IN (''éa'', '' '')'),
  (107, 'SELECT s.id, i.id FROM fstr s JOIN fi i ON s.k = i.k WHERE s.c = ''ab'' AND s.c <> '''''),
  (108, 'SELECT s.id, i.id FROM fstr s JOIN fi i ON s.k = i.k WHERE s.c NOT IN (''ab   '', ''abc'', '''')'),
  (109, 'SELECT s.id, i.id FROM fstr s JOIN fi i ON s.k = i.k WHERE s.t = repeat(''ab'', 3000) OR s.t = ''AB'''),
  (110, 'SELECT s.id, i.id FROM fstr s JOIN fi i ON s.k = i.k WHERE s.t COLLATE "C" IN (''abc'', ''x17'') AND s.c = ANY (ARRAY[''abc'', NULL]::char(5)[])'),
  (111, 'SELECT s.id, i.id FROM fstr s JOIN fi i ON s.k = i.k WHERE s.t <> ''ab'' AND s.id > 100 AND s.v NOT IN (''ab'', ''AB'')'),
  -- an ICU collation that is deterministic (looked up), and one that is not
  (112, 'SELECT s.id, i.id FROM fstr s JOIN fi i ON s.k = i.k WHERE s.t COLLATE "und-x-icu" IN (''ab'', ''éa'')'),
  (113, 'SELECT s.id, i.id FROM fstr s JOIN fi i ON s.k = i.k WHERE s.t COLLATE fz_nocase = ''ab'' OR s.c COLLATE fz_nocase IN (''abc'', '''')');

-- the plans: the filter stays on the Seq Scan, which the node reads
SELECT * FROM pg_temp.plan('SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.v > 50 AND i.i2 IN (1, 2)');
SELECT ord, pg_temp.direct(q) FROM corpus WHERE ord IN (1, 2, 22, 40, 48, 49, 50, 51, 53, 60, 61, 63, 72, 80, 85, 87, 88, 89, 90, 96, 97, 100, 103, 109, 110) ORDER BY ord;
-- string comparisons are tested in the read thread, the compressed values
-- there left to the backend
SELECT * FROM pg_temp.analyze_lines((SELECT q FROM corpus WHERE ord = 109), true, 'Direct Scan');

-- the corpus, serial
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;
-- ... without direct heap reads (the Seq Scan filters)
SET gpuhash.direct_scan = off;
SELECT pg_temp.direct('SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.v > 50');
SELECT ord, pg_temp.same(q) FROM corpus WHERE ord IN (1, 13, 30, 51, 72) ORDER BY ord;
RESET gpuhash.direct_scan;

-- EXPLAIN ANALYZE counts the rows the filter removed, as the Seq Scan does
SELECT * FROM pg_temp.analyze_lines('SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i2 IN (1, 2) AND f.v % 2 = 0 AND i.v > 20', true,
  'Seq Scan|Rows Removed by Filter|Direct Scan');
SELECT * FROM pg_temp.analyze_lines('SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.i2 IN (1, 2) AND f.v % 2 = 0 AND i.v > 20', false,
  'Seq Scan|Rows Removed by Filter');

-- a parameter in the filter, in a generic plan, rescanned with new values
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SET plan_cache_mode = force_generic_plan;
PREPARE pf(int, int2) AS SELECT count(*), sum(f.v) FROM fo f JOIN fi i ON f.k = i.k WHERE f.v > $1 AND f.i2 <> $2;
EXPLAIN (COSTS OFF) EXECUTE pf(10, 1);
EXECUTE pf(10, 1);
EXECUTE pf(90, 3);
SELECT x, (SELECT count(*) FROM fo f JOIN fi i ON f.k = i.k WHERE f.v > x AND i.i2 < x) FROM generate_series(0, 8, 4) x;
RESET plan_cache_mode;
DEALLOCATE pf;
-- errors in the executor's quals are raised as without the node
SELECT count(*) FROM fo f JOIN fi i ON f.k = i.k WHERE f.i2 = 1 AND 1 / (f.v - f.v) > 0;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
RESET gpuhash.enable_join;
SELECT count(*) FROM fo f JOIN fi i ON f.k = i.k WHERE f.i2 = 1 AND 1 / (f.v - f.v) > 0;
-- the same parameter values without the node
SET gpuhash.enable_join = off;
SELECT count(*), sum(f.v) FROM fo f JOIN fi i ON f.k = i.k WHERE f.v > 10 AND f.i2 <> 1;
SELECT count(*), sum(f.v) FROM fo f JOIN fi i ON f.k = i.k WHERE f.v > 90 AND f.i2 <> 3;
SELECT x, (SELECT count(*) FROM fo f JOIN fi i ON f.k = i.k WHERE f.v > x AND i.i2 < x) FROM generate_series(0, 8, 4) x;
RESET gpuhash.enable_join;

-- parallel
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT * FROM pg_temp.plan('SELECT f.id, i.id FROM fo f JOIN fi i ON f.k = i.k WHERE f.v > 50 AND i.i2 IN (1, 2)');
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP TABLE fo, fi, fempty, fnum, fstr, corpus;
DROP COLLATION fz_nocase;
