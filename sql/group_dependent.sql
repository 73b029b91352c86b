--
-- GpuHashAggregate with columns that GROUP BY determines through a primary
-- key (TPC-H q10's c_name, c_address, c_acctbal beside c_custkey).
-- PostgreSQL lets a query name such a column outside GROUP BY, and drops it
-- from GROUP BY when the key is there; the node hashes it as one more key
-- by its bytes (or bits), since every row of a group comes from one row of
-- its table.  Each query is compared, as a multiset of rows printed as
-- text (so 1.0 and 1.00, or 0 and -0, differ), with PostgreSQL's own plan,
-- serially, in parallel with the participants combining the groups, and in
-- parallel under a Finalize Aggregate.
--
\i sql/fold_setup.psql

\i sql/compare.psql
-- the participants combine the groups however few the planner expects
SET gpuhash.group_combine_min_groups = 0;
\i sql/compare_fold.psql

-- a dimension whose columns are every kind the node may carry: text,
-- varchar, bpchar with trailing spaces, numerics equal in value but not in
-- scale, NaN, floats with -0 and NaN, timestamps, booleans, int2, long
-- text stored compressed or out of line, NULLs; and a uuid, which it
-- cannot carry
CREATE TABLE dd (id int4 PRIMARY KEY, name text, vname varchar(20), tag char(6),
                 bal numeric(12,2), raw numeric, f8 float8, f4 float4, ts timestamp,
                 flag bool, small int2, long text, u uuid);
ALTER TABLE dd ALTER COLUMN long SET STORAGE EXTERNAL;
INSERT INTO dd SELECT i,
       CASE WHEN i % 9 = 0 THEN NULL ELSE 'name ' || (i % 7) END,
       'v' || (i % 3),
       CASE WHEN i % 4 = 0 THEN 'ab' ELSE 'ab  ' || (i % 2) END,
       CASE WHEN i % 11 = 0 THEN NULL ELSE ((i * 7919) % 100000) / 100.0 - 300 END,
       CASE WHEN i % 13 = 0 THEN 'NaN' WHEN i % 2 = 0 THEN 1.0 ELSE 1.00 END,
       CASE WHEN i % 5 = 0 THEN '-0'::float8 WHEN i % 5 = 1 THEN 0 WHEN i % 5 = 2 THEN 'NaN'
            ELSE i / 3.0 END,
       i / 7.0,
       timestamp '2020-01-01' + i * interval '37 minutes',
       CASE WHEN i % 6 = 0 THEN NULL ELSE i % 2 = 0 END,
       (i % 300)::int2,
       CASE WHEN i % 25 = 0 THEN repeat('long ' || i, 900)
            WHEN i % 25 = 1 THEN (SELECT string_agg(md5((i * 1000 + g)::text), '') FROM generate_series(1, 80) g)
            ELSE 'short ' || i END,
       md5(i::text)::uuid
FROM generate_series(1, 400) i;
-- a dimension keyed by two columns
CREATE TABLE dp (a int4, b int4, label text, amount numeric(8,3), PRIMARY KEY (a, b));
INSERT INTO dp SELECT i % 20, i / 20, 'p' || (i % 17), i * 0.125 FROM generate_series(0, 299) i;
-- a fact side: keys that match nothing or are NULL, numeric measures
CREATE TABLE ff (id int4 PRIMARY KEY, d int4, a int4, b int4, price numeric(10,2), q int4);
INSERT INTO ff SELECT i, CASE WHEN i % 31 = 0 THEN NULL ELSE (i * 13) % 430 END,
                      i % 20, (i * 7) % 16, ((i * 104729) % 10000) / 100.0, i % 50
               FROM generate_series(1, 6000) i;
-- no primary key: its columns are not determined by id
CREATE TABLE dn (id int4, name text);
INSERT INTO dn SELECT i % 200, 'n' || i FROM generate_series(1, 400) i;
ANALYZE dd; ANALYZE dp; ANALYZE ff; ANALYZE dn;

CREATE TEMP TABLE dependent_queries (n int, q text);
INSERT INTO dependent_queries VALUES
  (1, 'SELECT dd.id, dd.name, dd.vname, dd.tag, sum(ff.price), count(*) FROM ff JOIN dd ON ff.d = dd.id GROUP BY dd.id'),
  (2, 'SELECT dd.id, dd.bal, dd.raw, dd.f8, dd.f4, sum(ff.price * 2), avg(ff.q) FROM ff JOIN dd ON ff.d = dd.id GROUP BY dd.id'),
  (3, 'SELECT dd.id, dd.ts, dd.flag, dd.small, dd.long, max(ff.q) FROM ff JOIN dd ON ff.d = dd.id GROUP BY dd.id'),
  -- columns PostgreSQL drops from GROUP BY, and one it keeps (ff.q)
  (4, 'SELECT dd.name, dd.id, dd.bal, ff.q, sum(ff.price) FROM ff JOIN dd ON ff.d = dd.id GROUP BY dd.name, dd.id, dd.bal, ff.q'),
  -- expressions over them, and HAVING on one
  (5, 'SELECT dd.id, upper(dd.name), dd.bal * 2, length(dd.long), sum(ff.price) FROM ff JOIN dd ON ff.d = dd.id GROUP BY dd.id HAVING dd.bal > 0 OR dd.bal IS NULL'),
  -- the fact side''s own key, and a key of two columns
  (6, 'SELECT ff.id, ff.price, dd.name, sum(ff.q), count(*) FROM ff JOIN dd ON ff.d = dd.id GROUP BY ff.id, dd.name'),
  (7, 'SELECT dp.a, dp.b, dp.label, dp.amount, sum(ff.price), count(*) FROM ff JOIN dp ON ff.a = dp.a AND ff.b = dp.b GROUP BY dp.a, dp.b'),
  -- a left join: the determined columns of unmatched rows are NULL
  (8, 'SELECT dd.id, dd.name, dd.bal, count(*), sum(ff.price) FROM ff LEFT JOIN dd ON ff.d = dd.id GROUP BY dd.id'),
  -- a semi join
  (9, 'SELECT ff.id, ff.price, sum(ff.q) FROM ff WHERE ff.d IN (SELECT id FROM dd WHERE dd.flag) GROUP BY ff.id');

-- serial
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.plan('SELECT dd.id, dd.name, dd.bal, sum(ff.price) FROM ff JOIN dd ON ff.d = dd.id GROUP BY dd.id');
SELECT n, pg_temp.same_folded(q) FROM dependent_queries ORDER BY n;
-- not folded: a uuid (a fixed-width type passed by reference), more keys
-- than the node holds
SELECT count(*) AS folded FROM (VALUES
  ('SELECT dd.id, dd.u, sum(ff.price) FROM ff JOIN dd ON ff.d = dd.id GROUP BY dd.id'),
  ('SELECT dd.id, dd.name, dd.vname, dd.tag, dd.bal, dd.raw, dd.f8, dd.f4, dd.ts, sum(ff.price) FROM ff JOIN dd ON ff.d = dd.id GROUP BY dd.id')
) AS c(q) WHERE pg_temp.folded(q);
-- a table without a primary key: its other columns stay in GROUP BY
SELECT pg_temp.same_folded('SELECT dn.id, dn.name, sum(ff.price) FROM ff JOIN dn ON ff.d = dn.id GROUP BY dn.id, dn.name');

-- parallel, with folding dear enough that the participants combine the groups
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET cpu_operator_cost = 0.05;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT * FROM pg_temp.plan('SELECT dd.id, dd.name, dd.bal, sum(ff.price) FROM ff JOIN dd ON ff.d = dd.id GROUP BY dd.id');
SELECT n, pg_temp.same_folded(q) FROM dependent_queries ORDER BY n;
RESET cpu_operator_cost;
-- parallel, under PostgreSQL's Finalize Aggregate
SET gpuhash.enable_group_combine = off;
SELECT * FROM pg_temp.plan('SELECT dd.id, dd.name, dd.bal, sum(ff.price) FROM ff JOIN dd ON ff.d = dd.id GROUP BY dd.id');
SELECT n, pg_temp.same_folded(q) FROM dependent_queries ORDER BY n;
RESET gpuhash.enable_group_combine;

RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;

-- no join: one table's scan, grouped by its key
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.plan('SELECT dd.id, dd.name, dd.long, dd.f8, sum(dd.bal) FROM dd WHERE dd.small > 10 GROUP BY dd.id');
SELECT pg_temp.same('SELECT dd.id, dd.name, dd.long, dd.f8, sum(dd.bal) FROM dd WHERE dd.small > 10 GROUP BY dd.id');
RESET max_parallel_workers_per_gather;
