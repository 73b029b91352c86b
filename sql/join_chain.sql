--
-- Chains of GpuHashJoins: a GpuHashJoin whose outer side is a plain inner,
-- left, semi or anti GpuHashJoin reads that join's pairs (or kept rows) in batches, copying their columns
-- from the lower join's batch and build rows, and no tuple is formed
-- between the two (EXPLAIN VERBOSE: "Outer Side: pairs of the GpuHashJoin
-- below").  Each query runs with PostgreSQL's joins off (so the nodes are
-- used) and is compared, as a multiset, with PostgreSQL's own plan,
-- serially and in parallel; each says how many joins read the one below in
-- batches, so that the test cannot pass without taking the path it tests.
--
\i sql/fold_setup.psql

\i sql/compare.psql

\i sql/plan_lines.psql

-- how many nodes of q's plan read the join below in batches
CREATE FUNCTION pg_temp.chained(q text) RETURNS int LANGUAGE sql AS $$
  SELECT count(*)::int FROM pg_temp.plan_lines(q) l WHERE l ~ 'Outer Side: pairs of the GpuHashJoin below'
$$;

CREATE FUNCTION pg_temp.same_chained(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN pg_temp.chained(q) || ' chained: ' || pg_temp.same(q);
END $$;

-- the GpuHashJoin and GpuHashAggregate nodes of q's plan and their join types, top first
CREATE FUNCTION pg_temp.join_types(q text) RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(trim(l), ' ') FROM pg_temp.plan_lines(q) l WHERE l ~ '(Custom Scan|Join Type)'
$$;

-- a fact table with NULL and missing keys, text and numeric columns that
-- pass through the levels; dimensions with unique keys (values kept in the
-- table), duplicate keys (several matches a level), NULL attributes, and a
-- snowflake level keyed by a dimension's column
CREATE TABLE cf (id int4, k1 int4, k2 int8, k3 int2, amount int4, note text, price numeric(10,2));
INSERT INTO cf SELECT i,
                      CASE WHEN i % 23 = 0 THEN NULL ELSE (i * 7919) % 1300 END,
                      CASE WHEN i % 29 = 0 THEN NULL ELSE ((i * 104729) % 700)::int8 END,
                      (i % 60)::int2,
                      (i * 37) % 1000 - 500,
                      CASE WHEN i % 5 = 0 THEN NULL ELSE 'n' || (i % 97) END,
                      (i % 1000) / 7.0
               FROM generate_series(1, 20000) i;
CREATE TABLE c1 (k int4, v int4);                      -- unique keys
INSERT INTO c1 SELECT i, i % 17 FROM generate_series(0, 1199) i;
CREATE TABLE c2 (k int8, grp int4, label text);        -- duplicate keys, NULLs
INSERT INTO c2 SELECT (i * 31) % 650, CASE WHEN i % 9 = 0 THEN NULL ELSE i % 6 END, 'g' || (i % 11)
               FROM generate_series(1, 900) i;
CREATE TABLE c3 (k int2, region int4);
INSERT INTO c3 SELECT i, i % 4 FROM generate_series(0, 49) i;
CREATE TABLE c4 (v int4, zone text);                   -- keyed by c1.v
INSERT INTO c4 SELECT i, 'z' || (i % 3) FROM generate_series(0, 15) i;
CREATE TABLE cempty (k int4, w int4);
ANALYZE cf; ANALYZE c1; ANALYZE c2; ANALYZE c3; ANALYZE c4; ANALYZE cempty;

-- serial
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.plan('SELECT cf.id, c1.v, c3.region FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k');
SELECT q, pg_temp.same_chained(q) FROM (VALUES
  ('SELECT cf.id, cf.note, c1.v, c3.region FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k'),
  ('SELECT cf.id, cf.price, c1.v, c2.grp, c2.label FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c2 ON cf.k2 = c2.k'),
  ('SELECT cf.id, c1.v, c2.label, c3.region FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c2 ON cf.k2 = c2.k JOIN c3 ON cf.k3 = c3.k'),
  ('SELECT cf.id, c1.v, c4.zone FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c4 ON c1.v = c4.v'),
  ('SELECT cf.id, c2.grp, c3.region FROM cf JOIN c2 ON cf.k2 = c2.k JOIN c3 ON c2.grp = c3.k'),
  ('SELECT c3.region, count(*), sum(cf.amount) FROM cf JOIN c2 ON cf.k2 = c2.k JOIN c3 ON c2.grp = c3.k GROUP BY c3.region'),
  ('SELECT cf.id, c2.grp, c3.region FROM cf JOIN c2 ON cf.k2 = c2.k JOIN c3 ON cf.k3 = c3.k WHERE c2.grp IS NOT NULL AND cf.amount > 0'),
  ('SELECT count(*), sum(cf.amount), min(c1.v), max(c3.region) FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k'),
  ('SELECT c3.region, c1.v, count(*), sum(cf.amount), avg(c1.v) FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k GROUP BY c3.region, c1.v'),
  ('SELECT c2.grp, count(*), sum(cf.amount) FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c2 ON cf.k2 = c2.k JOIN c3 ON cf.k3 = c3.k GROUP BY c2.grp'),
  ('SELECT count(*) FROM (SELECT cf.id, c1.v, c3.region FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k LIMIT 7) s'),
  ('SELECT x, (SELECT count(*) FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k WHERE c3.region = x AND c1.v < x * 5) FROM generate_series(0, 3) x')
) AS c(q);
-- an empty top level, over a chain (the join order as written)
SET join_collapse_limit = 1;
SELECT pg_temp.same_chained('SELECT cf.id FROM cf JOIN c1 ON cf.k1 = c1.k JOIN cempty ON cf.k3 = cempty.k') AS empty_top_level;
RESET join_collapse_limit;
-- not read in batches: a lower join with another join clause filters its pairs
SELECT pg_temp.same_chained('SELECT cf.id, c1.v, c3.region FROM cf JOIN c1 ON cf.k1 = c1.k AND cf.amount > c1.v JOIN c3 ON cf.k3 = c3.k AND cf.amount < c3.region * 200') AS with_join_filters;
-- semi and anti joins below an inner join or an aggregate hand up the rows
-- they keep, with and without other join clauses (these decide which rows
-- are kept, when the lower level probes), anti with NULL keys kept, and in
-- a chain of three
SELECT q, pg_temp.same_chained(q) FROM (VALUES
  ('SELECT cf.id, c2.label FROM cf JOIN c2 ON cf.k2 = c2.k WHERE EXISTS (SELECT 1 FROM c3 WHERE c3.k = cf.k3 AND c3.region = 1)'),
  ('SELECT cf.id, cf.note, c2.label FROM cf JOIN c2 ON cf.k2 = c2.k WHERE EXISTS (SELECT 1 FROM c1 WHERE c1.k = cf.k1 AND c1.v <> cf.k3)'),
  ('SELECT cf.id, cf.note, c2.label FROM cf JOIN c2 ON cf.k2 = c2.k WHERE NOT EXISTS (SELECT 1 FROM c1 WHERE c1.k = cf.k1 AND c1.v <> cf.k3)'),
  ('SELECT cf.id, cf.price, c1.v FROM cf JOIN c1 ON cf.k1 = c1.k WHERE NOT EXISTS (SELECT 1 FROM c2 WHERE c2.k = cf.k2)'),
  ('SELECT c2.grp, count(*), sum(cf.amount) FROM cf JOIN c2 ON cf.k2 = c2.k JOIN c3 ON cf.k3 = c3.k WHERE NOT EXISTS (SELECT 1 FROM c1 WHERE c1.k = cf.k1 AND c1.v < 3) GROUP BY c2.grp'),
  ('SELECT count(*) FROM cf JOIN c1 ON cf.k1 = c1.k WHERE NOT EXISTS (SELECT 1 FROM cempty WHERE cempty.k = cf.k3)'),
  ('SELECT count(*) FROM (SELECT cf.id, c2.label FROM cf JOIN c2 ON cf.k2 = c2.k WHERE EXISTS (SELECT 1 FROM c3 WHERE c3.k = cf.k3 AND c3.region = 1) LIMIT 7) s'),
  ('SELECT x, (SELECT count(*) FROM cf JOIN c2 ON cf.k2 = c2.k WHERE NOT EXISTS (SELECT 1 FROM c1 WHERE c1.k = cf.k1 AND c1.v < x)) FROM generate_series(0, 3) x')
) AS c(q);
-- left joins below hand up their pairs, then their rows that no pair
-- matched with the inner columns NULL: a left join above keyed by a NULL
-- inner column, a group key that is one, two left levels, inner columns kept in
-- the table (c1's unique keys) and in the store (c2's duplicates); one with
-- another join clause is not read as batches (it tests it as it emits);
-- the join order as written, else the left joins go on top
SET join_collapse_limit = 1;
SELECT q, pg_temp.same_chained(q) FROM (VALUES
  ('SELECT cf.id, cf.note, c1.v, c3.region FROM cf LEFT JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k'),
  ('SELECT cf.id, c2.grp, c2.label, c3.region FROM cf LEFT JOIN c2 ON cf.k2 = c2.k JOIN c3 ON cf.k3 = c3.k'),
  ('SELECT cf.id, c1.v, c4.zone FROM cf LEFT JOIN c1 ON cf.k1 = c1.k LEFT JOIN c4 ON c1.v = c4.v'),
  ('SELECT cf.id, c1.v, c2.label FROM cf LEFT JOIN c1 ON cf.k1 = c1.k LEFT JOIN c2 ON cf.k2 = c2.k'),
  ('SELECT c1.v, count(*), sum(cf.amount), count(c1.k) FROM cf LEFT JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k GROUP BY c1.v'),
  ('SELECT cf.id, c1.v, c3.region FROM cf LEFT JOIN c1 ON cf.k1 = c1.k AND c1.v < cf.k3 JOIN c3 ON cf.k3 = c3.k'),
  ('SELECT count(*) FROM (SELECT cf.id, c1.v, c3.region FROM cf LEFT JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k LIMIT 7) s'),
  ('SELECT x, (SELECT count(c1.v) FROM cf LEFT JOIN c1 ON cf.k1 = c1.k AND c1.k < x * 400 JOIN c3 ON cf.k3 = c3.k) FROM generate_series(0, 3) x')
) AS c(q);
RESET join_collapse_limit;
-- and with gpuhash.chain_batches off
SET gpuhash.chain_batches = off;
SELECT pg_temp.same_chained('SELECT cf.id, c1.v, c3.region FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k') AS chain_batches_off;
RESET gpuhash.chain_batches;
-- the planner counts a semi, anti or left level read in batches as it counts
-- an inner lookup, its rows not formed as tuples: this anti join goes below
-- the inner join (before that count, on top of it)
SELECT pg_temp.join_types('SELECT count(*), sum(c1.v) FROM cf JOIN c1 ON cf.k1 = c1.k WHERE NOT EXISTS (SELECT 1 FROM c3 WHERE c3.k = cf.k3 AND c3.region < 2)') AS anti_below;
SELECT pg_temp.same_chained('SELECT count(*), sum(c1.v) FROM cf JOIN c1 ON cf.k1 = c1.k WHERE NOT EXISTS (SELECT 1 FROM c3 WHERE c3.k = cf.k3 AND c3.region < 2)') AS anti_below_answer;
-- parallel: each participant's lower join hands its share's pairs up
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT q, pg_temp.same_chained(q) FROM (VALUES
  ('SELECT cf.id, cf.note, c1.v, c3.region FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k'),
  ('SELECT cf.id, c1.v, c2.label, c3.region FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c2 ON cf.k2 = c2.k JOIN c3 ON cf.k3 = c3.k'),
  ('SELECT count(*), sum(cf.amount), min(c1.v), max(c3.region) FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k'),
  ('SELECT c3.region, c1.v, count(*), sum(cf.amount), avg(c1.v) FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k GROUP BY c3.region, c1.v'),
  ('SELECT c2.grp, count(*), sum(cf.amount) FROM cf JOIN c1 ON cf.k1 = c1.k JOIN c2 ON cf.k2 = c2.k JOIN c3 ON cf.k3 = c3.k GROUP BY c2.grp'),
  ('SELECT cf.id, cf.note, c2.label FROM cf JOIN c2 ON cf.k2 = c2.k WHERE NOT EXISTS (SELECT 1 FROM c1 WHERE c1.k = cf.k1 AND c1.v <> cf.k3)'),
  ('SELECT c2.grp, count(*), sum(cf.amount) FROM cf JOIN c2 ON cf.k2 = c2.k JOIN c3 ON cf.k3 = c3.k WHERE NOT EXISTS (SELECT 1 FROM c1 WHERE c1.k = cf.k1 AND c1.v < 3) GROUP BY c2.grp')
) AS c(q);
-- (with the build rows costed, so that the small c3 is built, not the left join)
SET join_collapse_limit = 1; RESET gpuhash.join_build_row_cost;
SELECT q, pg_temp.same_chained(q) FROM (VALUES
  ('SELECT cf.id, c2.grp, c2.label, c3.region FROM cf LEFT JOIN c2 ON cf.k2 = c2.k JOIN c3 ON cf.k3 = c3.k'),
  ('SELECT c1.v, count(*), sum(cf.amount), count(c1.k) FROM cf LEFT JOIN c1 ON cf.k1 = c1.k JOIN c3 ON cf.k3 = c3.k GROUP BY c1.v')
) AS c(q);
RESET join_collapse_limit; SET gpuhash.join_build_row_cost = 0;
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;
