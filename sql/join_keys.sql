--
-- The keys GpuHashJoin hashes on: date keys, integer keys of mixed widths,
-- and composite keys of two columns (packed into one 8-byte key when both
-- are 4 bytes wide, else mixed into one and tested again on each pair),
-- each run with the node forced on and compared, as multisets, with
-- PostgreSQL's own plan, serially and in parallel.  Each query's plan is
-- checked to use the node (and, in parallel, a Parallel Custom Scan), so that
-- the test cannot pass without testing it.
--
LOAD 'gpuhash';
SET gpuhash.device = cpu;
SET gpuhash.join_startup_cost = 0;
SET gpuhash.join_build_row_cost = 0;
SET gpuhash.join_probe_row_cost = 0;
-- many batches
SET gpuhash.batch_rows = 1024;

\i sql/compare.psql

-- random data: NULLs, duplicates, the extremes of each type, bigint values
-- whose low 32 bits equal an integer key, dates far apart and infinite
SELECT setseed(0.1919);
CREATE TABLE kl (id int, i2 int2, i4 int4, j4 int4, i8 int8, d date, d2 date);
CREATE TABLE kr (id int, i2 int2, i4 int4, j4 int4, i8 int8, d date, d2 date);
CREATE FUNCTION pg_temp.fill(tab text, n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($f$
    INSERT INTO %I
    SELECT g,
           CASE WHEN random() < 0.06 THEN NULL ELSE (random() * 40 - 20)::int2 END,
           CASE WHEN random() < 0.06 THEN NULL ELSE (random() * 40 - 20)::int END,
           CASE WHEN random() < 0.06 THEN NULL ELSE (random() * 10 - 5)::int END,
           CASE WHEN random() < 0.06 THEN NULL
                ELSE (random() * 40 - 20)::int8 +
                     (ARRAY[0, 0, 0, 4294967296, -4294967296, 1099511627776])[1 + (random() * 5)::int] END,
           CASE WHEN random() < 0.06 THEN NULL ELSE date '2000-01-01' + (random() * 60)::int END,
           CASE WHEN random() < 0.06 THEN NULL ELSE date '1999-12-30' + (random() * 4)::int END
    FROM generate_series(1, %s) g$f$, tab, n);
END $$;
SELECT pg_temp.fill('kl', 3000), pg_temp.fill('kr', 800);
INSERT INTO kl VALUES
  (-1, -32768, -2147483648, -2147483648, -9223372036854775808, '-infinity', '4713-01-01 BC'),
  (-2, 32767, 2147483647, 2147483647, 9223372036854775807, 'infinity', '5874897-12-31'),
  (-3, -1, -1, -1, 4294967295, '4713-01-01 BC', 'infinity'),
  (-4, 0, 0, 0, 4294967296, '5874897-12-31', '-infinity'),
  (-5, -32768, -2147483648, 2147483647, 2147483648, '-infinity', 'infinity'),
  (-6, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO kr VALUES
  (-1, -32768, -2147483648, -2147483648, -9223372036854775808, '-infinity', '4713-01-01 BC'),
  (-2, 32767, 2147483647, 2147483647, 9223372036854775807, 'infinity', '5874897-12-31'),
  (-3, -1, -1, -1, -1, '4713-01-01 BC', 'infinity'),
  (-4, 0, 0, 0, 0, '5874897-12-31', '-infinity'),
  (-5, 32767, 2147483647, -2147483648, -2147483649, 'infinity', '-infinity'),
  (-6, NULL, NULL, NULL, NULL, NULL, NULL),
  (-7, -32768, -2147483648, -2147483648, -9223372036854775808, '-infinity', '4713-01-01 BC');
CREATE TABLE kempty (LIKE kl);
ANALYZE kl, kr, kempty;

-- enough matches to mean something, and the bigint values beyond integer's range
SELECT count(*) > 4000 AS many_pairs FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4;
SELECT count(*) FILTER (WHERE i8 NOT BETWEEN -2147483648 AND 2147483647) > 500 AS wide_int8 FROM kl;

CREATE TABLE corpus (ord int, q text);
INSERT INTO corpus VALUES
  -- date keys
  (1, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.d = kr.d'),
  (2, 'SELECT kl.id FROM kl WHERE EXISTS (SELECT FROM kr WHERE kr.d = kl.d)'),
  (3, 'SELECT kl.id FROM kl WHERE kl.d2 IN (SELECT d2 FROM kr)'),
  (4, 'SELECT kl.id FROM kl WHERE NOT EXISTS (SELECT FROM kr WHERE kr.d = kl.d)'),
  (5, 'SELECT kl.id, kr.id, kr.d FROM kl JOIN kr ON kl.d2 = kr.d2 AND kl.i4 < kr.i4'),
  -- the inner key's value rebuilt from the probe key (the table holds the inner values)
  (6, 'SELECT kl.id, kr.d, kr.id FROM kl JOIN kr ON kl.d = kr.d'),
  -- integer keys of mixed widths: bigint values outside integer's range match nothing
  (10, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i4 = kr.i8'),
  (11, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i8 = kr.i4'),
  (12, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i2 = kr.i8'),
  (13, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i8 = kr.i2'),
  (14, 'SELECT kl.id FROM kl WHERE EXISTS (SELECT FROM kr WHERE kr.i8 = kl.i4)'),
  (15, 'SELECT kl.id FROM kl WHERE NOT EXISTS (SELECT FROM kr WHERE kr.i8 = kl.i4)'),
  (16, 'SELECT kl.id FROM kl WHERE NOT EXISTS (SELECT FROM kr WHERE kr.i2 = kl.i8)'),
  (17, 'SELECT kl.id, kl.i8, kr.i2 FROM kl JOIN kr ON kl.i8 = kr.i2'),
  (18, 'SELECT kl.id, kl.i2, kr.i8, kr.id FROM kl JOIN kr ON kl.i2 = kr.i8'),
  -- composite keys: two 4-byte keys packed into one
  (20, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4'),
  (21, 'SELECT kl.id FROM kl WHERE EXISTS (SELECT FROM kr WHERE kr.i4 = kl.i4 AND kr.j4 = kl.j4)'),
  (22, 'SELECT kl.id FROM kl WHERE (kl.i4, kl.j4) IN (SELECT i4, j4 FROM kr)'),
  (23, 'SELECT kl.id, kl.i4, kl.j4 FROM kl WHERE NOT EXISTS (SELECT FROM kr WHERE kr.i4 = kl.i4 AND kr.j4 = kl.j4)'),
  (24, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i2 = kr.i4 AND kl.d = kr.d'),
  (25, 'SELECT kl.id FROM kl WHERE NOT EXISTS (SELECT FROM kr WHERE kr.j4 = kl.i2 AND kr.d2 = kl.d2)'),
  (26, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.j4 = kr.j4 AND kl.d2 = kr.d2 AND kl.i4 = kr.i4'),
  (27, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4 AND kl.id < kr.id'),
  (28, 'SELECT kl.id FROM kl WHERE NOT EXISTS (SELECT FROM kr WHERE kr.i4 = kl.i4 AND kr.j4 = kl.j4 AND kr.id > kl.id)'),
  (29, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i2 + 1 = kr.i2 + 1 AND kl.j4 = kr.j4'),
  (30, 'SELECT count(*), sum(kl.i4), min(kr.id), max(kl.j4) FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4'),
  -- the inner key columns rebuilt from the halves of the packed probe key
  (31, 'SELECT kl.id, kr.i4, kr.j4 FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4'),
  (32, 'SELECT kl.id, kr.j4, kr.id, kr.i4 FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4'),
  (33, 'SELECT kr.i2, kr.d, kr.i8, kl.id FROM kl JOIN kr ON kl.i4 = kr.i2 AND kl.d = kr.d'),
  (34, 'SELECT count(*), sum(kr.i4), min(kr.j4), max(kr.i4::int8 + kr.j4), sum(kr.id) FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4'),
  (35, 'SELECT max(kr.i2), min(kr.j4), sum(kr.i2 - kr.j4), count(*) FROM kl JOIN kr ON kl.i4 = kr.i2 AND kl.j4 = kr.j4'),
  -- ... and from the build rows, with two more inner columns
  (36, 'SELECT kl.id, kr.i4, kr.j4, kr.d, kr.id FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4'),
  -- rescanned with a parameter changing on the inner side, then the outer side
  (37, 'SELECT x, (SELECT count(*) FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4 WHERE kr.id % 3 = x) FROM generate_series(0, 2) x'),
  (38, 'SELECT x, (SELECT count(*) FROM kl WHERE kl.id % 3 = x AND NOT EXISTS (SELECT FROM kr WHERE kr.d = kl.d AND kr.i2 = kl.i4)) FROM generate_series(0, 2) x'),
  -- a bigint among two keys: both mixed into one key, and tested again on each pair
  (40, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i8 = kr.i8 AND kl.i4 = kr.i4'),
  (41, 'SELECT kl.id FROM kl WHERE NOT EXISTS (SELECT FROM kr WHERE kr.i4 = kl.i4 AND kr.i8 = kl.i8)'),
  (42, 'SELECT kl.id FROM kl WHERE EXISTS (SELECT FROM kr WHERE kr.i8 = kl.i4 AND kr.j4 = kl.j4)'),
  -- ... the inner key columns from the build rows (a mixed key holds neither)
  (43, 'SELECT kl.id, kr.i8, kr.j4 FROM kl JOIN kr ON kl.i8 = kr.i8 AND kl.j4 = kr.j4'),
  (44, 'SELECT count(*), sum(kr.i8), min(kr.j4), max(kl.i2) FROM kl JOIN kr ON kl.i8 = kr.i8 AND kl.j4 = kr.j4'),
  (45, 'SELECT kl.id, kr.id, kr.i2 FROM kl LEFT JOIN kr ON kl.i2 = kr.i8 AND kl.i8 = kr.i2'),
  (46, 'SELECT kl.id FROM kl WHERE (kl.i8, kl.d) IN (SELECT i8, d FROM kr)'),
  -- ... and a third clause tested on each pair
  (47, 'SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i8 = kr.i8 AND kl.i4 = kr.i4 AND kl.j4 = kr.j4'),
  -- empty inputs
  (50, 'SELECT kl.id FROM kl JOIN kempty e ON kl.i4 = e.i4 AND kl.j4 = e.j4'),
  (51, 'SELECT kl.id FROM kl WHERE NOT EXISTS (SELECT FROM kempty e WHERE e.i4 = kl.i4 AND e.j4 = kl.j4)'),
  (52, 'SELECT e.id FROM kempty e WHERE NOT EXISTS (SELECT FROM kr WHERE kr.d = e.d)'),
  (53, 'SELECT kl.id FROM kl WHERE EXISTS (SELECT FROM kempty e WHERE e.d = kl.d)');

-- the plans, serial
SELECT * FROM pg_temp.plan('SELECT kl.id, kr.id FROM kl JOIN kr ON kl.d = kr.d');
SELECT * FROM pg_temp.plan('SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i4 = kr.i8');
SELECT * FROM pg_temp.plan('SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4');
SELECT * FROM pg_temp.plan('SELECT kl.id FROM kl WHERE (kl.i4, kl.j4) IN (SELECT i4, j4 FROM kr)');
SELECT * FROM pg_temp.plan('SELECT kl.id FROM kl WHERE NOT EXISTS (SELECT FROM kr WHERE kr.i4 = kl.i4 AND kr.j4 = kl.j4)');
SELECT * FROM pg_temp.plan('SELECT kl.id, kr.id FROM kl JOIN kr ON kl.j4 = kr.j4 AND kl.d2 = kr.d2 AND kl.i4 = kr.i4');
SELECT * FROM pg_temp.plan('SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i8 = kr.i8 AND kl.i4 = kr.i4');
SELECT * FROM pg_temp.plan('SELECT kl.id FROM kl WHERE EXISTS (SELECT FROM kr WHERE kr.i8 = kl.i4 AND kr.j4 = kl.j4)');
-- two plain columns of plain Seq Scans are read from the heap directly
CREATE FUNCTION pg_temp.verbose_lines(q text, pattern text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
    IF l ~ pattern THEN RETURN NEXT l; END IF;
  END LOOP;
END $$;
SELECT * FROM pg_temp.verbose_lines('SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4',
                                    'GpuHash|Hash Cond|Direct Scan');

-- the table holds the inner values (the key columns come from the probe key)
CREATE FUNCTION pg_temp.analyze_lines(q text, pattern text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ pattern THEN RETURN NEXT l; END IF;
  END LOOP;
END $$;
SELECT * FROM pg_temp.analyze_lines('SELECT kl.id, kr.j4, kr.id, kr.i4 FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4',
                                    'GpuHash|Inner Values');
SELECT * FROM pg_temp.analyze_lines('SELECT max(kr.i2), min(kr.j4), sum(kr.i2 - kr.j4), count(*) FROM kl JOIN kr ON kl.i4 = kr.i2 AND kl.j4 = kr.j4',
                                    'GpuHash|Inner Values');
SELECT * FROM pg_temp.analyze_lines('SELECT kl.id, kr.i4, kr.j4, kr.d, kr.id FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4',
                                    'GpuHash|Inner Values');

-- an integer key never matches a bigint beyond integer's range by its low 32 bits
CREATE TABLE tr4 (k int4);
CREATE TABLE tr8 (k int8);
INSERT INTO tr4 VALUES (-1), (0), (1), (-2147483648), (2147483647);
INSERT INTO tr8 VALUES (4294967295), (4294967296), (4294967297), (2147483648), (-2147483649),
                       (-9223372036854775808), (9223372036854775807), (-4294967296), (1);
ANALYZE tr4, tr8;
SELECT * FROM pg_temp.same('SELECT tr4.k, tr8.k FROM tr4 JOIN tr8 ON tr4.k = tr8.k');
SELECT * FROM pg_temp.same('SELECT tr8.k, tr4.k FROM tr8 JOIN tr4 ON tr4.k = tr8.k');
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT tr4.k, tr8.k FROM tr4 JOIN tr8 ON tr4.k = tr8.k;
SELECT tr8.k FROM tr8 WHERE NOT EXISTS (SELECT FROM tr4 WHERE tr4.k = tr8.k) ORDER BY 1;
-- two bigint pairs whose mixed keys are equal though their values are not:
-- the clauses tested again on each pair tell them apart (the values solve
-- gpuhash_mix_keys for (1, 0)'s key)
-- (each row 20 times: the planner mixes two keys only where either alone
-- would leave more than 16 build rows a value)
CREATE TABLE tm1 (a int8, b int8);
CREATE TABLE tm2 (a int8, b int8);
INSERT INTO tm1 SELECT a, b FROM (VALUES (1, 0), (3, 3)) v(a, b), generate_series(1, 20);
INSERT INTO tm2 SELECT a, b FROM (VALUES (1::int8, 0::int8), (2, 3223796032733173694), (-5, -7622501665040842466),
                                         (7, 8937710677365440219), (3, 3)) v(a, b), generate_series(1, 20);
ANALYZE tm1, tm2;
SELECT tm1.a, tm1.b, tm2.a, tm2.b, count(*) FROM tm1 JOIN tm2 ON tm1.a = tm2.a AND tm1.b = tm2.b
GROUP BY 1, 2, 3, 4 ORDER BY 1;
SELECT tm2.a, tm2.b, count(*) FROM tm2 WHERE EXISTS (SELECT FROM tm1 WHERE tm1.a = tm2.a AND tm1.b = tm2.b)
GROUP BY 1, 2 ORDER BY 1;
SELECT tm2.a, count(*) FROM tm2 WHERE NOT EXISTS (SELECT FROM tm1 WHERE tm1.a = tm2.a AND tm1.b = tm2.b)
GROUP BY 1 ORDER BY 1;
SELECT * FROM pg_temp.plan('SELECT tm2.a FROM tm2 WHERE NOT EXISTS (SELECT FROM tm1 WHERE tm1.a = tm2.a AND tm1.b = tm2.b)');
-- a date never meets a timestamp through the node
SELECT count(*) AS gpu_nodes
FROM pg_temp.plan('SELECT * FROM kl JOIN kr ON kl.d = kr.d::timestamp') p WHERE p ~ 'GpuHash';
-- an anti join keeps every outer row with a NULL in either key, as NOT EXISTS does
SELECT count(*) AS kept_null_keys FROM kl
WHERE NOT EXISTS (SELECT FROM kr WHERE kr.i4 = kl.i4 AND kr.j4 = kl.j4) AND (kl.i4 IS NULL OR kl.j4 IS NULL);
SELECT count(*) AS null_key_rows FROM kl WHERE kl.i4 IS NULL OR kl.j4 IS NULL;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;

-- the corpus, serial
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;
-- ... without direct heap reads
SET gpuhash.direct_scan = off;
SELECT ord, pg_temp.same(q) FROM corpus WHERE ord >= 20 AND ord < 40 ORDER BY ord;
RESET gpuhash.direct_scan;

-- parallel
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT * FROM pg_temp.plan('SELECT kl.id, kr.id FROM kl JOIN kr ON kl.i4 = kr.i4 AND kl.j4 = kr.j4');
SELECT * FROM pg_temp.plan('SELECT kl.id FROM kl WHERE NOT EXISTS (SELECT FROM kr WHERE kr.d = kl.d)');
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP TABLE kl, kr, kempty, corpus, tr4, tr8, tm1, tm2;
