--
-- count(DISTINCT column) folded by GpuHashAggregate, hashed, where
-- PostgreSQL can only sort for it.  The node keeps each group's (group,
-- value) pairs in a table of their own and counts a value when its pair is
-- new; past hash_mem the pairs are written out beside their groups and
-- counted again, once each, as a partition is combined.  Integer and date
-- columns, grouped: serial folds, and parallel ones whose participants
-- combine the groups themselves (their pairs travel with the groups'
-- records), but never a fold over a Gather.  Each query
-- names the node its fold reads and is compared, as a multiset, with
-- PostgreSQL's own plan (gpuhash.enable_join off).
--
LOAD 'gpuhash';
SELECT set_config('gpuhash.device',
                  CASE WHEN gpuhash_backend() = 'gpu' THEN 'gpu' ELSE 'cpu' END, false) IS NOT NULL AS device_set;
SET gpuhash.batch_rows = 1024;
SET max_parallel_workers_per_gather = 0;

\i sql/compare.psql
\i sql/fold_input.psql

CREATE TABLE da_dim (id int4 PRIMARY KEY, code text, region int4, label text);
INSERT INTO da_dim SELECT i, 'c' || i, i % 10, CASE WHEN i % 13 = 0 THEN NULL ELSE 'l' || (i % 7) END
               FROM generate_series(1, 2000) i;
-- s: few values, NULLs; b: int8 with its extremes; d: dates with the infinities
CREATE TABLE da_fact (id int4, dk int4, code text, g int4, h int4, s int4, b int8, d date,
                      price numeric(12,2));
INSERT INTO da_fact SELECT i, CASE WHEN i % 97 = 0 THEN NULL ELSE i % 2000 + 1 END,
                           'c' || (i % 2100 + 1), CASE WHEN i % 11 = 0 THEN NULL ELSE i % 50 END,
                           i % 20000, CASE WHEN i % 19 = 0 THEN NULL ELSE (i * 7) % 300 END,
                           CASE i % 1000 WHEN 1 THEN 9223372036854775807 WHEN 2 THEN -9223372036854775808
                                         WHEN 3 THEN 0 ELSE (i::int8 * 104729) % 5000 - 2500 END,
                           CASE i % 5000 WHEN 7 THEN 'infinity'::date WHEN 8 THEN '-infinity'::date
                                         ELSE date '2020-01-01' + i % 400 END,
                           (i * 7919 % 100000) / 100.0
               FROM generate_series(1, 40000) i;
CREATE TABLE da_gone WITH (autovacuum_enabled = off) AS SELECT * FROM da_fact;
ANALYZE da_dim; ANALYZE da_fact; ANALYZE da_gone;
DELETE FROM da_gone;

CREATE TEMP TABLE da_queries (n int, q text);
INSERT INTO da_queries VALUES
  -- over PostgreSQL's hash join on text keys: text keys with NULLs, beside other aggregates
  (1, 'SELECT d.label, count(DISTINCT f.s), count(*), sum(f.price) FROM da_fact f JOIN da_dim d ON f.code = d.code GROUP BY d.label'),
  -- two of them on other columns, int8 extremes and dates with the infinities, two keys
  (2, 'SELECT d.region, f.g, count(DISTINCT f.b), count(DISTINCT f.d), max(f.s) FROM da_fact f JOIN da_dim d ON f.code = d.code GROUP BY d.region, f.g'),
  -- the same column twice, a date key, and an input with no row
  (3, 'SELECT f.d, count(DISTINCT f.s), count(DISTINCT f.s) + 1 FROM da_fact f JOIN da_dim d ON f.code = d.code WHERE d.region = 4 GROUP BY f.d'),
  (4, 'SELECT d.label, count(DISTINCT f.s) FROM da_gone f JOIN da_dim d ON f.code = d.code GROUP BY d.label'),
  -- HAVING on it, above the node
  (5, 'SELECT f.g, count(DISTINCT f.b) FROM da_fact f JOIN da_dim d ON f.code = d.code GROUP BY f.g HAVING count(DISTINCT f.b) > 700'),
  -- a subquery run once per outer row: the node, its groups and its pairs start again with each
  (6, 'SELECT x, (SELECT sum(c) FROM (SELECT d.label, count(DISTINCT f.s) AS c FROM da_fact f JOIN da_dim d ON f.code = d.code WHERE d.region = x GROUP BY d.label) s) FROM generate_series(0, 3) x');

SELECT n, pg_temp.fold_input(q), pg_temp.same(q, false) FROM da_queries ORDER BY n;

-- over gpuhash's own join on integer keys (PostgreSQL's joins off; one
-- statement each, as pg_temp.same turns them on again until its statement ends)
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT pg_temp.fold_input(q), pg_temp.same(q)
FROM (VALUES ('SELECT d.label, d.region, count(DISTINCT f.s), count(f.s) FROM da_fact f JOIN da_dim d ON f.dk = d.id GROUP BY d.label, d.region')) AS c(q);
SELECT pg_temp.fold_input(q), pg_temp.same(q)
FROM (VALUES ('SELECT f.d, count(DISTINCT f.b) FROM da_fact f JOIN da_dim d ON f.dk = d.id WHERE d.region < 3 GROUP BY f.d')) AS c(q);
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;

-- one table with no join, beside a numeric sum (the scan's own fold)
SELECT pg_temp.fold_input(q), pg_temp.same(q, false)
FROM (VALUES ('SELECT g, count(DISTINCT s), count(DISTINCT d), sum(price) FROM da_fact WHERE id > 100 GROUP BY g')) AS c(q);

-- 20 000 groups and 40 000 pairs past a hash_mem of 64 kB: written out by
-- partition with their groups, and each pair counted once when combined;
-- a value seen before and after the groups started again is one value
SET work_mem = '64kB';
SELECT pg_temp.fold_input(q), pg_temp.same(q, false), pg_temp.written_out(q)
FROM (VALUES ('SELECT f.h, count(DISTINCT f.s), count(DISTINCT f.b), sum(f.price) FROM da_fact f JOIN da_dim d ON f.code = d.code GROUP BY f.h'),
             ('SELECT d.label, count(DISTINCT f.id), count(*) FROM da_fact f JOIN da_dim d ON f.code = d.code GROUP BY d.label')) AS c(q);
RESET work_mem;

-- in parallel, folded by each participant over gpuhash's join or the
-- table's scan, its groups and pairs written out by partition (several
-- times, past a hash_mem of 256 kB) and combined by the participants: a
-- value two participants saw is one value.  dk's 2 000 values in 20 000
-- groups of h are in nearly every participant's share.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET cpu_operator_cost = 0.05; SET gpuhash.group_combine_min_groups = 0; SET work_mem = '256kB';
SELECT pg_temp.same(q),
       (SELECT bool_or(l ~ 'Group Combine: by the participants') FROM pg_temp.plan(q) l) AS combined
FROM (VALUES ('SELECT f.g, d.region, count(DISTINCT f.s), count(DISTINCT f.d), count(*), sum(f.price) FROM da_fact f JOIN da_dim d ON f.dk = d.id GROUP BY f.g, d.region'),
             ('SELECT d.label, count(DISTINCT f.b), max(f.s) FROM da_fact f JOIN da_dim d ON f.dk = d.id GROUP BY d.label HAVING count(DISTINCT f.b) > 10'),
             ('SELECT f.g, count(DISTINCT f.dk), count(DISTINCT f.id) FROM da_fact f JOIN da_dim d ON f.dk = d.id GROUP BY f.g'),
             ('SELECT f.h, count(DISTINCT f.dk) FROM da_fact f JOIN da_dim d ON f.dk = d.id GROUP BY f.h'),
             ('SELECT d.label, count(DISTINCT f.s) FROM da_gone f JOIN da_dim d ON f.dk = d.id GROUP BY d.label')) AS c(q);
SELECT pg_temp.same(q, false), pg_temp.plan_has(q, 'Group Combine: by the participants') AS combined
FROM (VALUES ('SELECT g, count(DISTINCT s), count(DISTINCT d), sum(price) FROM da_fact WHERE id > 100 GROUP BY g')) AS c(q);
RESET cpu_operator_cost; RESET gpuhash.group_combine_min_groups; RESET work_mem;

-- never over a Gather: PostgreSQL has no partial count(DISTINCT) and
-- counts it above one, but a leader folding every participant's rows alone
-- was slower than its participants' sorts (TPC-H q16 on the GPU host)
SELECT count(*) AS folds_over_a_gather FROM da_queries WHERE pg_temp.fold_input(q) ~ 'Gather';
RESET max_parallel_workers_per_gather; RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- what stays PostgreSQL's: no GROUP BY, a text column, DISTINCT on an
-- expression, other DISTINCT aggregates, and the setting off
SELECT pg_temp.fold_input(q) FROM (VALUES
  ('SELECT count(DISTINCT f.s) FROM da_fact f JOIN da_dim d ON f.code = d.code'),
  ('SELECT d.region, count(DISTINCT f.code) FROM da_fact f JOIN da_dim d ON f.code = d.code GROUP BY d.region'),
  ('SELECT d.region, count(DISTINCT f.s + 1) FROM da_fact f JOIN da_dim d ON f.code = d.code GROUP BY d.region'),
  ('SELECT d.region, sum(DISTINCT f.s) FROM da_fact f JOIN da_dim d ON f.code = d.code GROUP BY d.region')) AS c(q);
SET gpuhash.enable_input_aggregate = off;
SELECT pg_temp.fold_input(q) FROM da_queries WHERE n = 1;
RESET gpuhash.enable_input_aggregate;

DROP TABLE da_gone; DROP TABLE da_fact; DROP TABLE da_dim;
