--
-- Parts of a join's other clauses that depend on the build row alone and
-- run a subplan (TPC-H q17's l_quantity < (SELECT 0.2 * avg(...) WHERE
-- l_partkey = p_partkey)) are computed once per build row, when a pair
-- first needs them, and kept (EXPLAIN: "Once per Build Row").  Each query
-- is compared, as a multiset, with PostgreSQL's own plan; the plans show
-- which parts are kept, and EXPLAIN ANALYZE how many build rows ran them.
--
\i sql/fold_setup.psql

\i sql/compare.psql

-- the kept parts of q's plan, with PostgreSQL's joins off
CREATE FUNCTION pg_temp.kept(q text, with_analyze boolean DEFAULT false) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF, TIMING OFF, SUMMARY OFF, ANALYZE ' || with_analyze || ') ' || q LOOP
    IF l ~ '(Once per Build Row|Build Rows Evaluated|Join Filter):' THEN RETURN NEXT btrim(l); END IF;
  END LOOP;
  PERFORM set_config('enable_hashjoin', 'on', true);
  PERFORM set_config('enable_mergejoin', 'on', true);
  PERFORM set_config('enable_nestloop', 'on', true);
END $$;

-- a fact table whose keys repeat (many pairs per build row), with NULLs;
-- a dimension with keys no fact row has, and a divisor that is 0 only there
CREATE TABLE mf (k int4, q numeric(8,2), v int4);
INSERT INTO mf SELECT CASE WHEN i % 31 = 0 THEN NULL ELSE i % 300 END,
                      CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7) % 53 END,
                      i
               FROM generate_series(1, 30000) i;
CREATE TABLE md (k int4, brand int4, z int4);
INSERT INTO md SELECT i, i % 7, CASE WHEN i >= 300 THEN 0 ELSE 1 + i % 3 END
               FROM generate_series(0, 399) i;
CREATE INDEX ON mf (k);
ANALYZE mf; ANALYZE md;

SET max_parallel_workers_per_gather = 0;

-- q17's shape: each build row's subplan runs once, not once per pair
SELECT * FROM pg_temp.kept($$SELECT sum(v) FROM mf JOIN md ON mf.k = md.k
  WHERE md.brand = 3 AND mf.q < (SELECT 0.5 * avg(q) FROM mf f2 WHERE f2.k = md.k)$$, true);
SELECT pg_temp.same($$SELECT sum(v), count(*) FROM mf JOIN md ON mf.k = md.k
  WHERE md.brand = 3 AND mf.q < (SELECT 0.5 * avg(q) FROM mf f2 WHERE f2.k = md.k)$$);
SELECT pg_temp.same($$SELECT mf.v, md.k FROM mf JOIN md ON mf.k = md.k
  WHERE mf.q < (SELECT 0.5 * avg(q) FROM mf f2 WHERE f2.k = md.k)$$);
-- grouped: the folded values' columns come after the kept ones
SELECT pg_temp.same($$SELECT md.brand, count(*), sum(mf.q), avg(mf.v) FROM mf JOIN md ON mf.k = md.k
  WHERE mf.q < (SELECT 0.5 * avg(q) FROM mf f2 WHERE f2.k = md.k) GROUP BY md.brand$$);

-- a build row that no pair reaches never runs it: md's rows from 300 on
-- divide by zero, and no fact row has their keys
SELECT * FROM pg_temp.kept($$SELECT count(*) FROM mf JOIN md ON mf.k = md.k
  WHERE mf.v > (SELECT 10 / md.z)$$, true);
SELECT pg_temp.same($$SELECT count(*), sum(mf.v) FROM mf JOIN md ON mf.k = md.k
  WHERE mf.v > (SELECT 10 / md.z)$$);

-- a subplan reading both sides, or running something volatile, is not kept
SELECT * FROM pg_temp.kept($$SELECT count(*) FROM mf JOIN md ON mf.k = md.k
  WHERE mf.q < (SELECT avg(q) FROM mf f2 WHERE f2.k = md.k AND f2.v < mf.v)$$);
SELECT pg_temp.same($$SELECT count(*) FROM mf JOIN md ON mf.k = md.k
  WHERE mf.q < (SELECT avg(q) FROM mf f2 WHERE f2.k = md.k AND f2.v < mf.v)$$);
SELECT * FROM pg_temp.kept($$SELECT count(*) FROM mf JOIN md ON mf.k = md.k
  WHERE mf.q < (SELECT avg(q) + random() * 0 FROM mf f2 WHERE f2.k = md.k)$$);

-- a left join's ON clause, and a semi and an anti join's
SELECT * FROM pg_temp.kept($$SELECT count(*), count(md.k) FROM mf LEFT JOIN md
  ON mf.k = md.k AND mf.q < (SELECT avg(q) FROM mf f2 WHERE f2.k = md.k)$$);
SELECT pg_temp.same($$SELECT mf.v, md.k FROM mf LEFT JOIN md
  ON mf.k = md.k AND mf.q < (SELECT avg(q) FROM mf f2 WHERE f2.k = md.k)$$);
SELECT pg_temp.same($$SELECT mf.v FROM mf WHERE EXISTS (SELECT 1 FROM md WHERE md.k = mf.k
  AND mf.q > (SELECT max(q) - 20 FROM mf f2 WHERE f2.k = md.k))$$);
SELECT pg_temp.same($$SELECT mf.v FROM mf WHERE NOT EXISTS (SELECT 1 FROM md WHERE md.k = mf.k
  AND mf.q > (SELECT max(q) - 20 FROM mf f2 WHERE f2.k = md.k))$$);

-- kept values are forgotten when a rescan changes what they read: the
-- join runs once per value of o.x, which its subplan adds
SELECT pg_temp.same($$SELECT o.x, (SELECT count(*) FROM mf JOIN md ON mf.k = md.k
    WHERE mf.q < (SELECT avg(q) FROM mf f2 WHERE f2.k = md.k) + o.x)
  FROM generate_series(0, 20, 5) o(x)$$);

-- a subplan in a join clause keeps the join out of parallel plans (PostgreSQL
-- 15 runs it in one process); its sides may still be read in parallel
RESET max_parallel_workers_per_gather;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT pg_temp.same($$SELECT sum(v), count(*) FROM mf JOIN md ON mf.k = md.k
  WHERE mf.q < (SELECT 0.5 * avg(q) FROM mf f2 WHERE f2.k = md.k)$$);
