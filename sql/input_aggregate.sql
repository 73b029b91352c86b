--
-- GpuHashAggregate over an input PostgreSQL chose for itself: a nested loop
-- over an index, a hash or merge join on keys gpuhash does not hash (text),
-- an index scan, a sample scan.  Only the aggregation changes: the input's
-- rows are copied into batches and folded (fixed-point numeric sums, text
-- and date group keys), serially or in each participant of a parallel plan,
-- and written out by partition past hash_mem.  Each query
-- names the node the fold reads and is compared, as a multiset, with
-- PostgreSQL's own plan (gpuhash.enable_join off).
--
LOAD 'gpuhash';
SELECT set_config('gpuhash.device',
                  CASE WHEN gpuhash_backend() = 'gpu' THEN 'gpu' ELSE 'cpu' END, false) IS NOT NULL AS device_set;
SET gpuhash.batch_rows = 1024;
SET max_parallel_workers_per_gather = 0;

\i sql/compare.psql
\i sql/fold_input.psql

CREATE TABLE ia_dim (id int4 PRIMARY KEY, code text, region int4, label text);
INSERT INTO ia_dim SELECT i, 'c' || i, i % 10, CASE WHEN i % 13 = 0 THEN NULL ELSE 'l' || (i % 7) END
               FROM generate_series(1, 2000) i;
CREATE TABLE ia_fact (id int4 PRIMARY KEY, dk int4, code text, g int4, d date, price numeric(12,2),
                      qty int4);
INSERT INTO ia_fact SELECT i, CASE WHEN i % 97 = 0 THEN NULL ELSE i % 2000 + 1 END,
                           'c' || (i % 2100 + 1), CASE WHEN i % 11 = 0 THEN NULL ELSE i % 500 END,
                           date '2020-01-01' + i % 400,
                           CASE WHEN i = 4321 THEN 'NaN' WHEN i % 17 = 0 THEN NULL
                                ELSE (i * 7919 % 100000) / 100.0 END,
                           i % 50
               FROM generate_series(1, 40000) i;
CREATE INDEX ia_fact_dk ON ia_fact (dk);
CREATE TABLE ia_gone WITH (autovacuum_enabled = off) AS SELECT * FROM ia_fact;
ANALYZE ia_dim; ANALYZE ia_fact; ANALYZE ia_gone;
DELETE FROM ia_gone;

CREATE TEMP TABLE ia_queries (n int, q text);
INSERT INTO ia_queries VALUES
  -- TPC-H q11's shape: a few dimension rows, each reaching its fact rows by an index
  (1, 'SELECT f.g, sum(f.price * f.qty), count(*) FROM ia_dim d JOIN ia_fact f ON f.dk = d.id WHERE d.region = 3 GROUP BY f.g'),
  -- and its HAVING against an InitPlan's sum
  (2, 'SELECT f.g, sum(f.price * f.qty) AS v FROM ia_dim d JOIN ia_fact f ON f.dk = d.id WHERE d.region = 3 GROUP BY f.g HAVING sum(f.price * f.qty) > (SELECT sum(price) / 2000 FROM ia_fact WHERE dk < 50)'),
  -- a hash join on text keys, text and date group keys, NULL keys and arguments, a NaN
  (3, 'SELECT d.label, sum(f.price), avg(f.price), count(f.price), count(*) FROM ia_fact f JOIN ia_dim d ON f.code = d.code GROUP BY d.label'),
  (4, 'SELECT d.label, f.d, sum(f.price), min(f.qty) FROM ia_fact f JOIN ia_dim d ON f.code = d.code WHERE f.id > 10000 GROUP BY d.label, f.d'),
  -- no GROUP BY, and inputs with no row (ia_gone's statistics say 40 000)
  (5, 'SELECT sum(f.price), avg(f.price * 2), count(*) FROM ia_fact f JOIN ia_dim d ON f.code = d.code WHERE d.region = 4'),
  (6, 'SELECT sum(f.price), avg(f.price), count(*) FROM ia_gone f JOIN ia_dim d ON f.code = d.code'),
  (7, 'SELECT d.label, sum(f.price) FROM ia_gone f JOIN ia_dim d ON f.code = d.code GROUP BY d.label'),
  -- an index scan, and a sample scan
  (8, 'SELECT g, sum(price), max(d) FROM ia_fact WHERE id BETWEEN 100 AND 2000 GROUP BY g'),
  (9, 'SELECT g, sum(price) FROM ia_fact TABLESAMPLE SYSTEM (50) REPEATABLE (1) GROUP BY g'),
  -- a subquery run once per outer row: the node starts again with each
  -- a key the node computes (the year of a date), which the input's projection computes too
  (11, 'SELECT extract(year FROM f.d), d.label, sum(f.price), count(*) FROM ia_fact f JOIN ia_dim d ON f.code = d.code GROUP BY 1, 2'),
  (10, 'SELECT x, (SELECT sum(f.price) + avg(f.price * f.qty) + sum(f.price * 2) FROM ia_fact f JOIN ia_dim d ON f.code = d.code WHERE d.region = x) FROM generate_series(0, 3) x');

SELECT n, pg_temp.fold_input(q), pg_temp.same(q, false) FROM ia_queries ORDER BY n;

-- a merge join, and a nested loop over an index (as in TPC-H q11, where
-- PostgreSQL's costs choose it; here GpuHashJoin is made dear)
-- (one statement each: pg_temp.same turns PostgreSQL's joins on again until
-- its statement ends)
SET enable_hashjoin = off;
SELECT n, pg_temp.fold_input(q), pg_temp.same(q, false) FROM ia_queries WHERE n = 3;
SELECT n, pg_temp.fold_input(q), pg_temp.same(q, false) FROM ia_queries WHERE n = 4;
SET enable_mergejoin = off; SET gpuhash.join_startup_cost = 100000;
SELECT n, pg_temp.fold_input(q), pg_temp.same(q, false) FROM ia_queries WHERE n = 1;
SELECT n, pg_temp.fold_input(q), pg_temp.same(q, false) FROM ia_queries WHERE n = 2;
RESET enable_hashjoin; RESET enable_mergejoin; RESET gpuhash.join_startup_cost;

-- 38 100 groups past a hash_mem of 64 kB: written out by partition, combined again
SET work_mem = '64kB';
SELECT pg_temp.fold_input(q), pg_temp.same(q, false),
       pg_temp.written_out(q)
FROM (VALUES ('SELECT f.id, sum(f.price) FROM ia_fact f JOIN ia_dim d ON f.code = d.code GROUP BY f.id')) AS c(q);
RESET work_mem;

-- off, and aggregates with no numeric sum or average, stay PostgreSQL's
SET gpuhash.enable_input_aggregate = off;
SELECT pg_temp.fold_input(q) FROM ia_queries WHERE n = 3;
RESET gpuhash.enable_input_aggregate;
SELECT pg_temp.fold_input('SELECT d.label, count(*), sum(f.qty) FROM ia_fact f JOIN ia_dim d ON f.code = d.code GROUP BY d.label');

-- in parallel each participant folds its share of PostgreSQL's partial input,
-- and PostgreSQL's Finalize Aggregate above the Gather combines the partial
-- states; a serial fold never reads a Gather (the leader would fold every
-- participant's rows alone)
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SELECT n, pg_temp.fold_input(q), pg_temp.same(q, false),
       (SELECT count(*) FROM pg_temp.plan_of(q) l WHERE l ~ 'Finalize') AS finalized
FROM ia_queries WHERE n IN (3, 4, 5, 9, 11) ORDER BY n;
SELECT count(*) AS folds_over_a_gather FROM ia_queries, pg_temp.plan_of(q) l
WHERE l ~ '->  Gather' AND pg_temp.fold_input(q) ~ 'Gather';
-- ... or, with many groups, the participants combine them themselves: each
-- writes its groups (and count(DISTINCT)'s pairs) out by partition past a
-- hash_mem of 256 kB and combines the partitions it claims, no Finalize
SET gpuhash.group_combine_min_groups = 0; SET cpu_operator_cost = 0.05; SET work_mem = '256kB';
SELECT pg_temp.fold_input(q), pg_temp.same(q, false),
       pg_temp.plan_has(q, 'Group Combine: by the participants') AS combined,
       pg_temp.plan_has(q, 'Finalize') AS finalized
FROM (VALUES ('SELECT f.id, sum(f.price), count(*) FROM ia_fact f JOIN ia_dim d ON f.code = d.code GROUP BY f.id'),
             ('SELECT d.label, f.d, sum(f.price), min(f.qty) FROM ia_fact f JOIN ia_dim d ON f.code = d.code GROUP BY d.label, f.d'),
             ('SELECT f.g, count(DISTINCT f.qty), count(DISTINCT f.dk), sum(f.price) FROM ia_fact f JOIN ia_dim d ON f.code = d.code GROUP BY f.g'),
             ('SELECT f.id, sum(f.price) FROM ia_gone f JOIN ia_dim d ON f.code = d.code GROUP BY f.id')) AS c(q);
RESET gpuhash.group_combine_min_groups; RESET cpu_operator_cost; RESET work_mem;
-- the fold over PostgreSQL's partial input runs with the workers the node's own
-- plans ask for (gpuhash.parallel_workers), where PostgreSQL plans fewer for a
-- small outer table; 0 keeps PostgreSQL's count
SET max_parallel_workers_per_gather = 4;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET gpuhash.join_startup_cost = 100000;
SET gpuhash.parallel_workers = 4;
SELECT pg_temp.fold_input(q), pg_temp.same(q, false),
       (SELECT substring(l from 'Workers Planned: ([0-9]+)') FROM pg_temp.plan_of(q) l
        WHERE l ~ 'Workers Planned') AS workers
FROM ia_queries WHERE n = 1;
SET gpuhash.parallel_workers = 0;
SELECT pg_temp.fold_input(q),
       (SELECT substring(l from 'Workers Planned: ([0-9]+)') FROM pg_temp.plan_of(q) l
        WHERE l ~ 'Workers Planned') AS workers
FROM ia_queries WHERE n = 1;
RESET gpuhash.parallel_workers; RESET enable_hashjoin; RESET enable_mergejoin;
-- but not over PostgreSQL's hash join on keys gpuhash joins itself in
-- parallel, even where its join costs more (TPC-H q16 ran slower so)
SET enable_nestloop = off;
SELECT pg_temp.fold_input('SELECT f.g, sum(f.price), count(*) FROM ia_fact f JOIN ia_dim d ON f.dk = d.id GROUP BY f.g');
RESET enable_nestloop; RESET gpuhash.join_startup_cost;
RESET max_parallel_workers_per_gather; RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP TABLE ia_gone; DROP TABLE ia_fact; DROP TABLE ia_dim;
