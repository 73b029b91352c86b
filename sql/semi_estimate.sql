--
-- A semi join above a GpuHashJoin whose equality could be written with the
-- outer side's copy of the very column it compares (TPC-H q21's
-- EXISTS (... l2.l_orderkey = l1.l_orderkey ...) above l1's join with
-- orders) is also estimated through that copy (gpuhash.semi_estimate).
-- With the column's distinct count underestimated, as ANALYZE's sample
-- does for lineitem.l_orderkey, PostgreSQL expects the semi join above the
-- join to match few rows and puts it below; estimated through the column
-- itself it expects every row to match, and the semi join probes the index
-- after the join has dropped rows.  Each query is compared, as a multiset,
-- with PostgreSQL's own plan.
--
\i sql/fold_setup.psql
-- PostgreSQL's own hash and merge joins off, its nested loops on, and the
-- node's rows free but for those it builds: the join with se_ord is the
-- node's, and the semi join a nested loop over se_line's index or the node
-- building all of se_line
SET enable_hashjoin = off;
SET enable_mergejoin = off;
RESET gpuhash.join_build_row_cost;
RESET gpuhash.batch_rows;
-- the semi join built from its inner side, as this test compares (sql/right_semi has the other)
SET gpuhash.build_outer = off;

\i sql/compare.psql

-- the plan's join lines, from the top: which join is above which
CREATE FUNCTION pg_temp.joins(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l ~ '(Nested Loop|Hash Join|Merge Join|GpuHash|Join Type|Index Cond|Gather)' THEN
      RETURN NEXT regexp_replace(l, '\s+$', '');
    END IF;
  END LOOP;
END $$;

-- lines: 4 of each order, clustered by order, a supplier each, some late
-- and some with a NULL order; orders: every other one wanted
CREATE TABLE se_line (ok int4, supp int4, late bool);
INSERT INTO se_line SELECT CASE WHEN i % 101 = 0 THEN NULL ELSE i / 4 END,
                           (i * 7) % 13 + CASE WHEN i % 9 = 0 THEN 0 ELSE i % 4 END, i % 3 = 0
                    FROM generate_series(0, 99999) i;
CREATE INDEX ON se_line (ok);
CREATE TABLE se_ord (ok int4 PRIMARY KEY, status char(1));
INSERT INTO se_ord SELECT i, CASE WHEN i % 2 = 0 THEN 'F' ELSE 'O' END FROM generate_series(0, 24999) i;
-- the distinct count ANALYZE's sample would find in a large table stored in
-- ok's order: 200 of 25 000
ALTER TABLE se_line ALTER COLUMN ok SET (n_distinct = 200);
ANALYZE se_line; ANALYZE se_ord;

-- q21's shape: lines of wanted orders that another supplier's line shares
\set shape 'SELECT l1.ok, l1.supp FROM se_line l1 JOIN se_ord ON se_ord.ok = l1.ok WHERE se_ord.status = ''F'' AND l1.late AND l1.supp = 2 AND EXISTS (SELECT 1 FROM se_line l2 WHERE l2.ok = l1.ok AND l2.supp <> l1.supp)'

SET max_parallel_workers_per_gather = 0;
SET gpuhash.key_filter = off;
-- the same plans on the GPU, whose context a new session would pay for
SET gpuhash.device_setup_cost = 0;

-- on, the semi join probes the index above the join with
-- se_ord (its condition on se_ord's key, the class's first member); off,
-- the nested loop there is expected to read 500 lines in vain for 98 % of
-- the rows, and the node builds all of se_line instead
SELECT * FROM pg_temp.joins(:'shape');
SELECT pg_temp.same(:'shape', false);
SET gpuhash.semi_estimate = off;
SELECT * FROM pg_temp.joins(:'shape');
RESET gpuhash.semi_estimate;

-- with q21's anti join too, and grouped above
SELECT pg_temp.same($$SELECT l1.ok % 7, count(*) FROM se_line l1 JOIN se_ord ON se_ord.ok = l1.ok
  WHERE se_ord.status = 'F' AND l1.late AND l1.supp = 2
    AND EXISTS (SELECT 1 FROM se_line l2 WHERE l2.ok = l1.ok AND l2.supp <> l1.supp)
    AND NOT EXISTS (SELECT 1 FROM se_line l3 WHERE l3.ok = l1.ok AND l3.supp <> l1.supp AND l3.late)
  GROUP BY l1.ok % 7$$, false);

-- the semi join's column is no column of the outer side's tables: no other
-- estimate is offered, so the plan is the same with the setting off
CREATE TABLE se_ret (ok int4, n int4);
INSERT INTO se_ret SELECT i % 20000, i % 5 FROM generate_series(0, 59999) i;
CREATE INDEX ON se_ret (ok);
ANALYZE se_ret;
CREATE TEMP TABLE plan_on AS SELECT * FROM pg_temp.joins($$SELECT l1.ok FROM se_line l1 JOIN se_ord ON se_ord.ok = l1.ok
  WHERE se_ord.status = 'F' AND EXISTS (SELECT 1 FROM se_ret WHERE se_ret.ok = l1.ok AND se_ret.n <> l1.supp)$$) WITH ORDINALITY p;
SET gpuhash.semi_estimate = off;
SELECT count(*) AS plan_lines_differing FROM
  (SELECT * FROM pg_temp.joins($$SELECT l1.ok FROM se_line l1 JOIN se_ord ON se_ord.ok = l1.ok
     WHERE se_ord.status = 'F' AND EXISTS (SELECT 1 FROM se_ret WHERE se_ret.ok = l1.ok AND se_ret.n <> l1.supp)$$) WITH ORDINALITY p
   EXCEPT ALL SELECT * FROM plan_on) d;
RESET gpuhash.semi_estimate;

-- no GpuHashJoin below: PostgreSQL's plan, its semi join below the join
SET gpuhash.enable_join = off;
SELECT * FROM pg_temp.joins(:'shape');
RESET gpuhash.enable_join;

-- parallel: the semi join probes in each participant above the shared join
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT * FROM pg_temp.joins(:'shape');
SELECT pg_temp.same(:'shape', false);

-- a join above a semi join that compares the semi join's inner column (an
-- equivalence class's member, here x.ok): the node emits a semi join's rows
-- without the inner side's columns, so it makes no such semi join, and the
-- answer is PostgreSQL's (fuzzer seed s27d, case 83: no row at all)
SET max_parallel_workers_per_gather = 0;
SELECT pg_temp.same($$SELECT o.ok FROM se_ord o WHERE EXISTS (SELECT FROM se_line b WHERE b.ok = o.ok AND b.late
  AND EXISTS (SELECT 1 FROM se_line x WHERE x.ok = b.ok AND x.supp <> b.supp))$$);
