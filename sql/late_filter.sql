--
-- A join's outer scan whose filter runs a subplan (TPC-H q20's
-- ps_availqty > (SELECT ... WHERE l_partkey = ps_partkey ...)) may have that
-- filter tested on the joined rows instead of every row read
-- (gpuhash.late_filter): EXPLAIN then shows it as the GpuHashJoin's Filter,
-- and EXPLAIN ANALYZE how many times its subplan ran.  Each query is
-- compared, as a multiset, with PostgreSQL's own plan.
--
\i sql/fold_setup.psql

\i sql/compare.psql

-- where q's filters and subplans run, with PostgreSQL's joins off; with
-- analyze, how many times each subplan ran
CREATE FUNCTION pg_temp.filters(q text, with_analyze boolean DEFAULT false) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE l text; node text := '';
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF, TIMING OFF, SUMMARY OFF, ANALYZE ' || with_analyze || ') ' || q LOOP
    IF l ~ '(Custom Scan|Seq Scan)' THEN
      node := regexp_replace(btrim(l), '^-> *', '');
      node := regexp_replace(node, ' \(actual.*$', '');
    ELSIF l ~ '^ *(Filter|Join Filter|Once per Build Row):' THEN
      RETURN NEXT node || ': ' || btrim(l);
    ELSIF l ~ '^ *-> *Aggregate \(actual' THEN
      RETURN NEXT 'subplan runs: ' || substring(l from 'loops=([0-9]+)');
    END IF;
  END LOOP;
  PERFORM set_config('enable_hashjoin', 'on', true);
  PERFORM set_config('enable_mergejoin', 'on', true);
  PERFORM set_config('enable_nestloop', 'on', true);
END $$;

-- outer rows with repeated and NULL keys; an availability that the
-- subquery's sum is compared with, NULL now and then; a dimension that
-- 1 key in 20 of the outer side finds, and one with duplicate keys
CREATE TABLE lfo (k int4, s int4, avail int4, v int8);
INSERT INTO lfo SELECT CASE WHEN i % 97 = 0 THEN NULL ELSE i % 2000 END, i % 13,
                      CASE WHEN i % 41 = 0 THEN NULL ELSE (i * 7) % 90 END, i
               FROM generate_series(1, 20000) i;
CREATE TABLE lfq (k int4, s int4, qty int4);
INSERT INTO lfq SELECT i % 2100, i % 13, (i * 11) % 50 FROM generate_series(1, 30000) i;
CREATE INDEX ON lfq (k, s);
CREATE TABLE lfd (k int4 PRIMARY KEY, name text);
INSERT INTO lfd SELECT i * 20, 'd' || i FROM generate_series(0, 99) i;
CREATE TABLE lfdup (k int4, tag int4);
INSERT INTO lfdup SELECT (i % 100) * 20, i % 3 FROM generate_series(0, 299) i;
ANALYZE lfo; ANALYZE lfq; ANALYZE lfd; ANALYZE lfdup;

SET max_parallel_workers_per_gather = 0;
-- the subplan's runs then count the rows that reach its filter, not those
-- that a Bloom filter of the join's keys let through (gpuhash.key_filter)
SET gpuhash.key_filter = off;

-- q20's shape: the subquery runs once a joined row (about 1 in 20), not
-- once a row read, and gives PostgreSQL's answer
SELECT * FROM pg_temp.filters($$SELECT lfo.v, lfd.name FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$, true);
SELECT pg_temp.same($$SELECT lfo.v, lfd.name FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$);
-- the scan keeps its other quals; only the subquery's moves
SELECT * FROM pg_temp.filters($$SELECT lfo.v FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.v % 3 <> 0 AND lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k)$$);
SELECT pg_temp.same($$SELECT lfo.v FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.v % 3 <> 0 AND lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k)$$);
-- several pairs a row: tested on each, the same rows come out
SELECT pg_temp.same($$SELECT lfo.v, lfdup.tag FROM lfo JOIN lfdup ON lfo.k = lfdup.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$);
-- EXISTS, NOT EXISTS and a left join keep or drop outer rows alike
SELECT * FROM pg_temp.filters($$SELECT lfo.v FROM lfo WHERE EXISTS (SELECT 1 FROM lfdup WHERE lfdup.k = lfo.k)
  AND lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$);
SELECT pg_temp.same($$SELECT lfo.v FROM lfo WHERE EXISTS (SELECT 1 FROM lfdup WHERE lfdup.k = lfo.k)
  AND lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$);
SELECT pg_temp.same($$SELECT lfo.v FROM lfo WHERE NOT EXISTS (SELECT 1 FROM lfd WHERE lfd.k = lfo.k)
  AND lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$);
SELECT pg_temp.same($$SELECT lfo.v, lfd.name FROM lfo LEFT JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$);
-- folded into a GpuHashAggregate: the filter runs before each row is folded
-- (and EXPLAIN shows it there)
SELECT * FROM pg_temp.filters($$SELECT count(*), sum(lfo.v) FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$, true);
SELECT pg_temp.same($$SELECT lfd.name, count(*), sum(lfo.v) FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)
  GROUP BY lfd.name$$);
SELECT pg_temp.same($$SELECT count(*), count(lfd.name), sum(lfo.v) FROM lfo LEFT JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$);
-- a chain: the filtered join is the outer side of another
SELECT pg_temp.same($$SELECT lfo.v, lfd.name, lfdup.tag FROM lfo JOIN lfd ON lfo.k = lfd.k
  JOIN lfdup ON lfdup.k = lfo.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$);

-- the filtered join as the inner side of another join: the filter is left
-- to that join, which tests it on the build rows its pairs reach, once a
-- build row (TPC-H q20's shape: Canada's suppliers IN the suppliers of
-- forest parts whose availability passes the subquery)
SELECT * FROM pg_temp.filters($$SELECT lfd.name FROM lfd WHERE lfd.k IN
  (SELECT lfo.k FROM lfo JOIN lfdup ON lfo.k = lfdup.k AND lfdup.tag = 1
   WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s))
  AND lfd.name LIKE 'd1%'$$, true);
SELECT pg_temp.same($$SELECT lfd.name FROM lfd WHERE lfd.k IN
  (SELECT lfo.k FROM lfo JOIN lfdup ON lfo.k = lfdup.k AND lfdup.tag = 1
   WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s))
  AND lfd.name LIKE 'd1%'$$);
SELECT pg_temp.same($$SELECT lfd.name, x.v FROM lfd JOIN
  (SELECT lfo.k, lfo.v FROM lfo JOIN lfdup ON lfo.k = lfdup.k AND lfdup.tag = 1
   WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)) x
  ON lfd.k = x.k WHERE lfd.name LIKE 'd1%'$$);
SELECT * FROM pg_temp.filters($$SELECT lfd.name FROM lfd WHERE NOT EXISTS
  (SELECT 1 FROM lfo JOIN lfdup ON lfo.k = lfdup.k AND lfdup.tag = 1 WHERE lfo.k = lfd.k
   AND lfo.avail > (SELECT 2.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s))$$);
SELECT pg_temp.same($$SELECT lfd.name FROM lfd WHERE NOT EXISTS
  (SELECT 1 FROM lfo JOIN lfdup ON lfo.k = lfdup.k AND lfdup.tag = 1 WHERE lfo.k = lfd.k
   AND lfo.avail > (SELECT 2.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s))$$);
SELECT * FROM pg_temp.filters($$SELECT lfd.name, x.v FROM lfd LEFT JOIN
  (SELECT lfo.k, lfo.v FROM lfo JOIN lfdup ON lfo.k = lfdup.k AND lfdup.tag = 1
   WHERE lfo.avail > (SELECT 2.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)) x
  ON lfd.k = x.k$$);
SELECT pg_temp.same($$SELECT lfd.name, x.v FROM lfd LEFT JOIN
  (SELECT lfo.k, lfo.v FROM lfo JOIN lfdup ON lfo.k = lfdup.k AND lfdup.tag = 1
   WHERE lfo.avail > (SELECT 2.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)) x
  ON lfd.k = x.k$$);
SELECT pg_temp.same($$SELECT count(*), count(x.v) FROM lfd LEFT JOIN
  (SELECT lfo.k, lfo.v FROM lfo JOIN lfdup ON lfo.k = lfdup.k AND lfdup.tag = 1
   WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)) x
  ON lfd.k = x.k$$);

-- an EXISTS subquery as the filter, NULLs in what it compares
SELECT pg_temp.same($$SELECT lfo.v FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE EXISTS (SELECT 1 FROM lfq WHERE lfq.k = lfo.k AND lfq.qty = lfo.avail)
     OR lfo.avail IS NULL$$);

-- a volatile subquery stays in the scan, run on every row read
SELECT * FROM pg_temp.filters($$SELECT lfo.v FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) + random() * 0 FROM lfq WHERE lfq.k = lfo.k)$$, true);

-- with the setting off, too
SET gpuhash.late_filter = off;
SELECT * FROM pg_temp.filters($$SELECT lfo.v, lfd.name FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$, true);
RESET gpuhash.late_filter;

-- the planner's own choice, PostgreSQL's joins allowed: the GPU join with
-- the late filter wins where the join keeps few rows
-- (without the lines that depend on the device)
CREATE FUNCTION pg_temp.chosen(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l !~ '(Device|Hash Method|Build Rows \(estimated\)): ' THEN RETURN NEXT l; END IF;
  END LOOP;
END $$;
SELECT * FROM pg_temp.chosen($$SELECT lfo.v, lfd.name FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$);

-- parallel plans: PostgreSQL 15 runs a relation filtered by a correlated
-- subquery in one process; the answers are the same
RESET max_parallel_workers_per_gather;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT pg_temp.same($$SELECT lfo.v, lfd.name FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)$$);
SELECT pg_temp.same($$SELECT lfd.name, count(*) FROM lfo JOIN lfd ON lfo.k = lfd.k
  WHERE lfo.avail > (SELECT 0.5 * sum(qty) FROM lfq WHERE lfq.k = lfo.k AND lfq.s = lfo.s)
  GROUP BY lfd.name$$);
