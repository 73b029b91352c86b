--
-- GpuHashAggregate whose groups are written out by partition and combined
-- again: in a parallel plan whose participants combine the groups
-- themselves (Gather over a Parallel GpuHashAggregate emitting final values,
-- HAVING applied, no Finalize Aggregate), and in a serial node whose groups
-- outgrow hash_mem.  Each query is compared, as a multiset, with
-- PostgreSQL's own plan.
--
LOAD 'gpuhash';
SELECT set_config('gpuhash.device',
                  CASE WHEN gpuhash_backend() = 'gpu' THEN 'gpu' ELSE 'cpu' END, false) IS NOT NULL AS device_set;
SET gpuhash.batch_rows = 4096;

\i sql/compare.psql

-- does EXPLAIN (opts) of q have a line matching pattern?
CREATE FUNCTION pg_temp.explain_has(q text, opts text, pattern text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE l text; found boolean := false;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (' || opts || ') ' || q LOOP
    found := found OR l ~ pattern;
  END LOOP;
  RETURN found;
END $$;
-- does q's plan combine the groups in the participants?
CREATE FUNCTION pg_temp.combined(q text) RETURNS boolean LANGUAGE sql AS $$
  SELECT pg_temp.explain_has(q, 'COSTS OFF', 'Group Combine: by the participants')
$$;

CREATE TABLE cb_fact (k int8, t text, b char(4), q numeric(15,2), big numeric(40,2), n int4, s int2, d date);
INSERT INTO cb_fact SELECT CASE WHEN i % 97 = 0 THEN NULL ELSE i % 20000 END,
                      CASE WHEN i % 13 = 0 THEN NULL ELSE 't' || (i % 37) END,
                      CASE WHEN i % 3 = 0 THEN 'ab' ELSE 'ab  ' END,
                      CASE WHEN i = 777 THEN 'NaN' WHEN i % 11 = 0 THEN NULL ELSE (i % 5000) / 100.0 END,
                      CASE WHEN i % 1000 = 0 THEN 9.9e37 ELSE i END,
                      CASE WHEN i % 7 = 0 THEN NULL ELSE i % 1000 - 500 END,
                      (i % 300)::int2, date '2000-01-01' + i % 700
               FROM generate_series(1, 200000) i;
CREATE TABLE cb_dim (id int4, name text, w numeric(10,3));
INSERT INTO cb_dim SELECT i, 'n' || (i % 97), i / 7.0 FROM generate_series(0, 19999) i;
ANALYZE cb_fact; ANALYZE cb_dim;

-- parallel, with folding dear enough that the participants share it, and
-- however few groups the planner expects (gpuhash.group_combine_min_groups)
SET gpuhash.group_combine_min_groups = 0;
SET parallel_setup_cost = 0; SET cpu_operator_cost = 0.05;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT * FROM pg_temp.plan('SELECT k, sum(q), count(*) FROM cb_fact GROUP BY k HAVING sum(q) > 10');
SELECT * FROM pg_temp.plan('SELECT g.k, sum(g.q * d.w) FROM cb_fact g JOIN cb_dim d ON g.k = d.id GROUP BY g.k');

-- each participant's table passes hash_mem many times, then the partitions are combined
SET work_mem = '256kB';
SELECT q, pg_temp.combined(q) AS combined, pg_temp.same(q) FROM (VALUES
  ('SELECT k, sum(q), avg(q), count(*), count(t), min(n), max(n), sum(n), avg(n), sum(s), min(d), max(d), sum(big) FROM cb_fact GROUP BY k'),
  ('SELECT t, b, sum(q), count(*), sum(big * 3) FROM cb_fact GROUP BY t, b'),
  ('SELECT k, t, sum(q) FROM cb_fact GROUP BY k, t HAVING sum(q) > 10 AND count(*) > 1'),
  ('SELECT d, b, avg(q), min(k) FROM cb_fact WHERE n > 0 GROUP BY d, b'),
  ('SELECT g.k, sum(g.q * d.w), max(d.id), count(*) FROM cb_fact g JOIN cb_dim d ON g.k = d.id GROUP BY g.k HAVING sum(g.q) > 100'),
  ('SELECT d.name, g.t, sum(g.q * d.w), count(*) FROM cb_fact g JOIN cb_dim d ON g.k = d.id GROUP BY d.name, g.t'),
  ('SELECT d.id, count(g.k), sum(g.q) FROM cb_dim d LEFT JOIN cb_fact g ON g.k = d.id GROUP BY d.id'),
  ('SELECT g.k, count(*) FROM cb_fact g WHERE EXISTS (SELECT 1 FROM cb_dim d WHERE d.id = g.k AND d.w > 100) GROUP BY g.k')
) AS c(q);
RESET work_mem;
SELECT q, pg_temp.combined(q) AS combined, pg_temp.same(q) FROM (VALUES
  ('SELECT k, sum(q) FROM cb_fact GROUP BY k HAVING sum(q) > 50'),
  -- an outer query reading the combined groups as a partial path
  ('SELECT count(*), sum(q) FROM cb_fact WHERE k IN (SELECT k FROM cb_fact GROUP BY k HAVING sum(q) > 80)')
) AS c(q);
-- stopped early: the participants let go of their files at shutdown
SELECT pg_temp.combined('SELECT k, sum(q) FROM cb_fact GROUP BY k LIMIT 7') AS combined;
SELECT count(*) FROM (SELECT k, sum(q) FROM cb_fact GROUP BY k LIMIT 7) x;

-- rescanned: the Gather below a nested loop (its outer side parallel
-- restricted) starts again each time
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off;
SELECT pg_temp.combined('SELECT x, count(*) FROM (SELECT x FROM generate_series(1, 3) x WHERE random() >= 0) x,
  (SELECT k, sum(q) AS s FROM cb_fact GROUP BY k) y WHERE y.s > x * 20 GROUP BY x') AS combined;
SELECT x, count(*) FROM (SELECT x FROM generate_series(1, 3) x WHERE random() >= 0) x,
  (SELECT k, sum(q) AS s FROM cb_fact GROUP BY k) y
WHERE y.s > x * 20 GROUP BY x ORDER BY x;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_material;
SET gpuhash.enable_aggregate = off;
SELECT x, count(*) FROM (SELECT x FROM generate_series(1, 3) x WHERE random() >= 0) x,
  (SELECT k, sum(q) AS s FROM cb_fact GROUP BY k) y
WHERE y.s > x * 20 GROUP BY x ORDER BY x;
RESET gpuhash.enable_aggregate;

-- gpuhash.enable_group_combine = off leaves the groups to a Finalize Aggregate
SET gpuhash.enable_group_combine = off;
SELECT pg_temp.combined('SELECT k, sum(q), count(*) FROM cb_fact GROUP BY k') AS combined_when_off;
RESET gpuhash.enable_group_combine;

-- a handful of groups stays with the Finalize Aggregate
SELECT pg_temp.combined('SELECT b, sum(q) FROM cb_fact GROUP BY b') AS combined_few_groups;
-- and so do fewer groups than gpuhash.group_combine_min_groups: t's 37 by b's 2
SELECT pg_temp.combined('SELECT t, b, sum(q), count(*) FROM cb_fact GROUP BY t, b') AS combined_any_groups;
RESET gpuhash.group_combine_min_groups;
SELECT pg_temp.combined('SELECT t, b, sum(q), count(*) FROM cb_fact GROUP BY t, b') AS combined_below_min_groups;
SET gpuhash.group_combine_min_groups = 0;

-- combined by the participants where the planner saw ten groups and a
-- partition holds thousands: a partition past hash_mem is split again (its
-- groups not in the table written to files of their own) until each fits
CREATE TABLE cb_split (k int8, t text, q numeric(15,2)) WITH (autovacuum_enabled = off);
INSERT INTO cb_split SELECT i % 10, 'x' || (i % 10), i / 100.0 FROM generate_series(1, 20000) i;
ANALYZE cb_split;
INSERT INTO cb_split SELECT i % 50000, 'y' || (i % 997), i / 100.0 FROM generate_series(1, 150000) i;
SET parallel_tuple_cost = 1; SET work_mem = '64kB';
SELECT pg_temp.explain_has('SELECT count(*), sum(s), sum(c) FROM (SELECT k, t, sum(q) s, count(*) c FROM cb_split GROUP BY k, t) x',
                           'ANALYZE, COSTS OFF, TIMING OFF', 'written again \(partitions past hash_mem\)') AS split_again;
SELECT count(*), sum(s), sum(c) FROM (SELECT k, t, sum(q) s, count(*) c FROM cb_split GROUP BY k, t) x;
SET gpuhash.enable_aggregate = off;
SELECT count(*), sum(s), sum(c) FROM (SELECT k, t, sum(q) s, count(*) c FROM cb_split GROUP BY k, t) x;
RESET gpuhash.enable_aggregate; RESET parallel_tuple_cost; RESET work_mem;
DROP TABLE cb_split;

-- serial: the planner saw ten groups, the table holds 100 010; it is
-- written out past hash_mem and combined by partition
SET max_parallel_workers_per_gather = 0;
CREATE TABLE cb_serial (k int8, t text, q numeric(15,2)) WITH (autovacuum_enabled = off);
INSERT INTO cb_serial SELECT i % 10, 'x' || (i % 10), i / 100.0 FROM generate_series(1, 10000) i;
ANALYZE cb_serial;
INSERT INTO cb_serial SELECT i, 'y' || (i % 1000), CASE WHEN i = 5 THEN 'NaN' ELSE i / 100.0 END
               FROM generate_series(1, 100000) i;
SET work_mem = '256kB';
-- did q's node write its 100 010 groups out?
CREATE FUNCTION pg_temp.written_out(q text) RETURNS boolean LANGUAGE sql AS $$
  SELECT pg_temp.explain_has(q, 'ANALYZE, COSTS OFF, TIMING OFF', 'Groups Written Out: 100010')
$$;
SELECT q, pg_temp.written_out(q) AS written_out, pg_temp.same(q) FROM (VALUES
  ('SELECT k, t, sum(q), count(*) FROM cb_serial GROUP BY k, t'),
  ('SELECT k, t, sum(q) FROM cb_serial GROUP BY k, t HAVING sum(q) > 900')
) AS c(q);
RESET work_mem;

DROP TABLE cb_fact, cb_dim, cb_serial;
