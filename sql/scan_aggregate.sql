--
-- GpuHashAggregate with no join: a query that aggregates one table's Seq
-- Scan, with at least one sum or avg of numeric arithmetic (which costs
-- PostgreSQL a numeric addition per row), reads the scan's rows in batches
-- and folds them as the join's aggregation does (fixed-point numeric sums,
-- text and integer group keys).  Each query is compared, as a multiset,
-- with PostgreSQL's own plan, serially and in parallel, and says if it was
-- not folded.
--
LOAD 'gpuhash';
SELECT set_config('gpuhash.device',
                  CASE WHEN gpuhash_backend() = 'gpu' THEN 'gpu' ELSE 'cpu' END, false) IS NOT NULL AS device_set;
SET gpuhash.batch_rows = 1024;

\i sql/compare.psql
\i sql/compare_fold.psql

CREATE TABLE sa (id int4, flag char(1), status text, d date, qty numeric(15,2),
                 price numeric(15,2), disc numeric(4,2), tax numeric(4,2), n int4, big numeric(40,2));
INSERT INTO sa SELECT i, CASE WHEN i % 3 = 0 THEN 'A' WHEN i % 3 = 1 THEN 'N' ELSE 'R' END,
                      CASE WHEN i % 10 = 0 THEN NULL ELSE 's' || (i % 4) END,
                      CASE WHEN i % 4999 = 0 THEN NULL WHEN i = 5000 THEN 'infinity'::date WHEN i = 5001 THEN '-infinity'::date ELSE date '1995-01-01' + i % 1000 END,
                      CASE WHEN i % 23 = 0 THEN NULL ELSE i % 50 + 1 END,
                      CASE WHEN i = 777 THEN 'NaN' ELSE (i * 7919 % 100000) / 100.0 END,
                      (i % 11) / 100.0, (i % 9) / 100.0,
                      CASE WHEN i % 7 = 0 THEN NULL ELSE i % 100 - 50 END,
                      CASE WHEN i % 1000 = 0 THEN 9.9e37 ELSE i END
               FROM generate_series(1, 20000) i;
CREATE TABLE sa_empty (g int4, v numeric(10,2));
ANALYZE sa; ANALYZE sa_empty;

-- serial
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.plan('SELECT flag, status, sum(qty), avg(price * (1 - disc)), count(*) FROM sa WHERE d <= date ''1997-06-01'' GROUP BY flag, status');
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT flag, status, sum(qty), sum(price), sum(price * (1 - disc)), sum(price * (1 - disc) * (1 + tax)), avg(qty), avg(price), avg(disc), count(*) FROM sa WHERE d <= date ''1997-06-01'' GROUP BY flag, status'),
  ('SELECT sum(price * disc) FROM sa WHERE d >= date ''1995-06-01'' AND d < date ''1996-06-01'' AND disc BETWEEN 0.02 AND 0.05 AND qty < 24'),
  ('SELECT n, sum(qty), min(n), max(id), count(status), min(d), max(d) FROM sa GROUP BY n'),
  ('SELECT d, sum(big), avg(big * disc) FROM sa GROUP BY d'),
  ('SELECT status, sum(qty) FROM sa GROUP BY status HAVING sum(qty) > 1000'),
  ('SELECT flag, sum(qty) FROM sa WHERE price IS NULL GROUP BY flag'),
  ('SELECT g, sum(v), avg(v) FROM sa_empty GROUP BY g'),
  ('SELECT sum(v), avg(v), count(*) FROM sa_empty'),
  ('SELECT * FROM (SELECT flag, sum(price) AS s FROM sa GROUP BY flag ORDER BY 2 DESC LIMIT 2) x')
) AS c(q);
-- gpuhash.enable_scan_aggregate = off leaves them to PostgreSQL
SET gpuhash.enable_scan_aggregate = off;
SELECT pg_temp.folded('SELECT flag, sum(qty) FROM sa GROUP BY flag') AS folded_when_off;
RESET gpuhash.enable_scan_aggregate;
-- aggregates of integers alone stay PostgreSQL's, as do scans with a qual
-- the direct reader would leave to the executor (a text function, a
-- parameter), as in TPC-H q22's InitPlan (other inputs than a Seq Scan are
-- sql/input_aggregate.sql's)
SELECT count(*) AS folded FROM (VALUES
  ('SELECT flag, count(*), sum(n) FROM sa GROUP BY flag'),
  ('SELECT flag, sum(price / 2) FROM sa GROUP BY flag'),
  ('SELECT avg(price) FROM sa WHERE price > 0.00 AND substring(status from 1 for 2) IN (''s1'', ''s3'')'),
  ('SELECT x, (SELECT sum(qty) FROM sa WHERE n = x) FROM generate_series(-3, 3) x')
) AS c(q) WHERE pg_temp.folded(q);
SELECT pg_temp.same_folded('SELECT avg(price) FROM sa WHERE d <= date ''1997-06-01'' AND n > 0') AS all_compiled_folds;

-- parallel: partial states under a Finalize Aggregate
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT * FROM pg_temp.plan('SELECT flag, status, sum(qty), avg(price * (1 - disc)), count(*) FROM sa WHERE d <= date ''1997-06-01'' GROUP BY flag, status');
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT flag, status, sum(qty), sum(price), sum(price * (1 - disc)), sum(price * (1 - disc) * (1 + tax)), avg(qty), avg(price), avg(disc), count(*) FROM sa WHERE d <= date ''1997-06-01'' GROUP BY flag, status'),
  ('SELECT sum(price * disc) FROM sa WHERE d >= date ''1995-06-01'' AND d < date ''1996-06-01'' AND disc BETWEEN 0.02 AND 0.05 AND qty < 24'),
  ('SELECT d, sum(big), avg(big * disc) FROM sa GROUP BY d'),
  ('SELECT status, sum(qty) FROM sa GROUP BY status HAVING sum(qty) > 1000'),
  ('SELECT flag, sum(price), min(d), max(d) FROM sa GROUP BY flag'),
  ('SELECT sum(v), avg(v), count(*) FROM sa_empty')
) AS c(q);
-- groups past hash_mem (the planner's estimate far too low): each participant
-- emits its partial groups early and starts them again, with no join and
-- with one
CREATE TABLE sa_grow (g int4, k int4, t text, v numeric(10,2)) WITH (autovacuum_enabled = false);
INSERT INTO sa_grow SELECT i % 10, i % 10, 'x' || (i % 10), i FROM generate_series(1, 1000) i;
ANALYZE sa_grow;
INSERT INTO sa_grow SELECT i, i % 100, 'y' || i, i % 1000 FROM generate_series(1, 30000) i;
CREATE TABLE sa_dim (k int4, w int4);
INSERT INTO sa_dim SELECT i, i % 7 FROM generate_series(0, 99) i;
ANALYZE sa_dim;
SET work_mem = '64kB';
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT g, t, sum(v), count(*) FROM sa_grow GROUP BY g, t'),
  ('SELECT sa_grow.t, sa_dim.w, count(*), sum(sa_grow.v) FROM sa_grow JOIN sa_dim ON sa_grow.k = sa_dim.k GROUP BY sa_grow.t, sa_dim.w')
) AS c(q);
RESET work_mem;
-- each of them ran with its fold under a Gather
SELECT count(*) AS gathered FROM (VALUES
  ('SELECT flag, status, sum(qty), avg(price) FROM sa WHERE d <= date ''1997-06-01'' GROUP BY flag, status'),
  ('SELECT sum(price * disc) FROM sa WHERE d >= date ''1995-06-01'' AND disc BETWEEN 0.02 AND 0.05'),
  ('SELECT d, sum(big), avg(big * disc) FROM sa GROUP BY d'),
  ('SELECT status, sum(qty) FROM sa GROUP BY status HAVING sum(qty) > 1000'),
  ('SELECT n, sum(qty), count(status) FROM sa GROUP BY n')
) AS c(q) WHERE (SELECT string_agg(l, E'\n') FROM pg_temp.plan(q) l) ~ 'Gather(.|\n)*GpuHashAggregate(.|\n)*Parallel Seq Scan';
-- Each parallel worker took its leader's gpuhash.* settings when its node
-- started (settings.c): here gpuhash.device and gpuhash.batch_rows, which
-- this session set, and gpuhash.parallel_workers, which installcheck sets for
-- the whole suite (Makefile): one line from each of the two workers.
SET gpuhash.device = cpu;
SET client_min_messages = debug1;
SELECT sum(price * disc) FROM sa WHERE d >= date '1995-06-01' AND disc BETWEEN 0.02 AND 0.05;
RESET client_min_messages;
RESET gpuhash.device;
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;
