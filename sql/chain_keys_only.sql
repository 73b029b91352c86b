--
-- Middle levels of a chain that keep only keys (gpuhash.chain_keys_only): in
-- a chain of three or more GpuHashJoins, a level between two others copies
-- no columns into its batch, only its keys, taken through the level below;
-- the level above reads each pair's columns through the levels below it
-- (EXPLAIN ANALYZE: "Outer Side: keys of the pairs of the GpuHashJoin
-- below").  Each query is compared, as a multiset, with PostgreSQL's own
-- plan, and says how many levels kept only keys, so that the test cannot
-- pass without taking the path it tests.  Batches are 1024 rows, so a
-- level's batches end inside the chunks of pairs of the one below.
--
\i sql/fold_setup.psql

\i sql/compare.psql

-- how many levels of q's plan kept only keys, run with PostgreSQL's joins off
CREATE FUNCTION pg_temp.keys_only(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE l text; n int := 0;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'Outer Side: keys of the pairs of the GpuHashJoin below' THEN n := n + 1; END IF;
  END LOOP;
  PERFORM set_config('enable_hashjoin', 'on', true);
  PERFORM set_config('enable_mergejoin', 'on', true);
  PERFORM set_config('enable_nestloop', 'on', true);
  RETURN n;
END $$;

CREATE FUNCTION pg_temp.same_keys_only(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN pg_temp.keys_only(q) || ' keys only: ' || pg_temp.same(q);
END $$;

-- a fact table with NULL keys and keys that match nothing; dimensions with
-- unique keys and one by-value column (kept in the table), with two
-- by-value columns (kept as build rows), with duplicate keys (several
-- matches a level) and NULL attributes, and one keyed by another's column
CREATE TABLE kf (id int4, k1 int4, k2 int8, k3 int2, k4 int4, amount int4, day date, note text);
INSERT INTO kf SELECT i,
                      CASE WHEN i % 23 = 0 THEN NULL ELSE (i * 7919) % 1300 END,
                      CASE WHEN i % 29 = 0 THEN NULL ELSE ((i * 104729) % 700)::int8 END,
                      (i % 60)::int2,
                      CASE WHEN i % 31 = 0 THEN NULL ELSE (i * 13) % 450 END,
                      (i * 37) % 1000 - 500,
                      date '2020-01-01' + (i % 400),
                      'n' || (i % 97)
               FROM generate_series(1, 20000) i;
CREATE TABLE k1 (k int4, v int4);                      -- unique keys, value in the table
INSERT INTO k1 SELECT i, i % 17 FROM generate_series(0, 1199) i;
CREATE TABLE k2 (k int8, grp int4);                    -- duplicate keys, NULL attributes
INSERT INTO k2 SELECT (i * 31) % 650, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 6 END
               FROM generate_series(1, 900) i;
CREATE TABLE k3 (k int2, region int4);
INSERT INTO k3 SELECT i, i % 4 FROM generate_series(0, 49) i;
CREATE TABLE k4 (k int4, a int4, b int8, since date);  -- build rows, NULLs
INSERT INTO k4 SELECT i, i % 7, CASE WHEN i % 5 = 0 THEN NULL ELSE i * 3 END, date '2020-02-01' + i
               FROM generate_series(0, 399) i;
CREATE TABLE k5 (v int4, zone int4);                   -- keyed by k1.v
INSERT INTO k5 SELECT i, i % 3 FROM generate_series(0, 15) i;
ANALYZE kf; ANALYZE k1; ANALYZE k2; ANALYZE k3; ANALYZE k4; ANALYZE k5;

-- the join order as written, so that each chain has the shape named
SET join_collapse_limit = 1;

-- serial
SET max_parallel_workers_per_gather = 0;
SELECT q, pg_temp.same_keys_only(q) FROM (VALUES
  -- three levels: the middle one keeps keys, its value in its table
  ('SELECT kf.id, kf.amount, k1.v, k2.grp, k3.region FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k2 ON kf.k2 = k2.k JOIN k3 ON kf.k3 = k3.k'),
  -- a middle level with duplicate keys, and build rows at the middle
  ('SELECT kf.id, k2.grp, k4.a, k4.b, k4.since, k1.v FROM kf JOIN k2 ON kf.k2 = k2.k JOIN k4 ON kf.k4 = k4.k JOIN k1 ON kf.k1 = k1.k'),
  -- four levels: two middle ones, keys from the fact table
  ('SELECT kf.id, kf.day, k1.v, k2.grp, k3.region, k4.b FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k2 ON kf.k2 = k2.k JOIN k3 ON kf.k3 = k3.k JOIN k4 ON kf.k4 = k4.k'),
  -- a level keyed by the column of the level below a middle one
  ('SELECT kf.id, k1.v, k2.grp, k5.zone FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k2 ON kf.k2 = k2.k JOIN k5 ON k1.v = k5.v'),
  -- a top level keyed by a middle level's build value (NULL in some rows)
  ('SELECT kf.id, k1.v, k2.grp, k3.region FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k2 ON kf.k2 = k2.k JOIN k3 ON k2.grp = k3.k'),
  -- a middle level keyed by a build-row column of the level below
  ('SELECT kf.id, k4.a, k5.zone, k3.region FROM kf JOIN k4 ON kf.k4 = k4.k JOIN k5 ON k4.a = k5.v JOIN k3 ON kf.k3 = k3.k'),
  -- aggregates over the chain, grouped by attributes of the levels
  ('SELECT k2.grp, k3.region, count(*), sum(kf.amount), min(kf.day), max(k4.b) FROM kf JOIN k2 ON kf.k2 = k2.k JOIN k4 ON kf.k4 = k4.k JOIN k3 ON kf.k3 = k3.k GROUP BY k2.grp, k3.region'),
  ('SELECT count(*), sum(kf.amount), avg(k1.v) FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k2 ON kf.k2 = k2.k JOIN k3 ON kf.k3 = k3.k JOIN k4 ON kf.k4 = k4.k'),
  -- filters above the chain and a LIMIT that stops it early
  ('SELECT kf.id, k1.v, k3.region FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k2 ON kf.k2 = k2.k JOIN k3 ON kf.k3 = k3.k WHERE k2.grp IS NOT NULL AND kf.amount > 0'),
  ('SELECT count(*) FROM (SELECT kf.id, k1.v FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k2 ON kf.k2 = k2.k JOIN k3 ON kf.k3 = k3.k LIMIT 700) s'),
  -- rescans with a parameter
  ('SELECT x, (SELECT count(*) FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k2 ON kf.k2 = k2.k JOIN k3 ON kf.k3 = k3.k WHERE k3.region = x AND k1.v < x * 5) FROM generate_series(0, 3) x')
) AS c(q);
-- not for a level whose columns passed up are by reference: a text column
SELECT pg_temp.same_keys_only('SELECT kf.id, kf.note, k1.v, k3.region FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k2 ON kf.k2 = k2.k JOIN k3 ON kf.k3 = k3.k') AS text_column;
-- a chain of two has no middle level
SELECT pg_temp.same_keys_only('SELECT kf.id, k1.v, k3.region FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k3 ON kf.k3 = k3.k') AS two_levels;
-- and with gpuhash.chain_keys_only off
SET gpuhash.chain_keys_only = off;
SELECT pg_temp.same_keys_only('SELECT kf.id, kf.amount, k1.v, k2.grp, k3.region FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k2 ON kf.k2 = k2.k JOIN k3 ON kf.k3 = k3.k') AS keys_only_off;
RESET gpuhash.chain_keys_only;

-- parallel: each participant's chain keeps its own middle levels' keys
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT q, pg_temp.same_keys_only(q) FROM (VALUES
  ('SELECT k2.grp, k3.region, count(*), sum(kf.amount), min(kf.day), max(k4.b) FROM kf JOIN k2 ON kf.k2 = k2.k JOIN k4 ON kf.k4 = k4.k JOIN k3 ON kf.k3 = k3.k GROUP BY k2.grp, k3.region'),
  ('SELECT count(*), sum(s.amount) FROM (SELECT kf.amount, k1.v, k2.grp FROM kf JOIN k1 ON kf.k1 = k1.k JOIN k2 ON kf.k2 = k2.k JOIN k4 ON kf.k4 = k4.k WHERE kf.amount > k2.grp * 50 + k4.a) s')
) AS c(q);
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;
RESET join_collapse_limit;
