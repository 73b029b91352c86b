--
-- Semi and anti joins built from their outer side (gpuhash.build_outer):
-- EXISTS over a large table whose outer side is small, as TPC-H q04's orders of one
-- quarter against lineitem.  The node hashes the outer rows, the inner
-- side's rows probe them as they are read, and each outer row that a probe
-- matched comes out once, after the last probe; in a parallel plan every
-- participant marks the shared build rows and the last one to finish
-- returns them.  Each query is compared, as a multiset, with PostgreSQL's
-- own plan: NULL keys on both sides, duplicate outer keys, extreme values,
-- mixed widths, other join clauses, empty sides, folded GROUP BY, rescans,
-- LIMIT, serial and parallel, with and without the leader.
--
\i sql/fold_setup.psql
-- builds cost what they cost: the small side is the one worth hashing
RESET gpuhash.join_build_row_cost;
\i sql/compare.psql
\i sql/compare_fold.psql

-- the plan's join lines with PostgreSQL's joins off: which join the node makes
CREATE FUNCTION pg_temp.joins(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN SELECT * FROM pg_temp.plan(q) LOOP
    IF l ~ '(GpuHash|Join Type|Hash Cond|Gather)' THEN
      RETURN NEXT regexp_replace(l, '\s+$', '');
    END IF;
  END LOOP;
END $$;

-- The count of rows the key filter removed from the probe side, as
-- 'removed some' or not, and the rows the node returned (PostgreSQL's joins
-- off for the statement, as pg_temp.plan turns them off).
CREATE FUNCTION pg_temp.analyzed(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'Key Filter' THEN
      RETURN NEXT CASE WHEN substring(l from 'removed (\d+) outer')::bigint > 0
                       THEN 'key filter removed some probe rows' ELSE 'key filter removed none' END;
    ELSIF l ~ 'Custom Scan \(GpuHash' THEN
      RETURN NEXT regexp_replace(regexp_replace(l, '^\s*(->\s*)?', ''), '\(actual rows=(\d+) loops=(\d+)\)',
                                 'rows=\1 loops=\2');
    END IF;
  END LOOP;
END $$;

-- orders: a date each, a priority, some NULL keys and some keys twice;
-- lines: 4 an order on average, clustered by order, some NULL keys, and
-- keys at the ends of bigint's range
SELECT setseed(0.4142);
CREATE TABLE rs_ord (ok int8, pri char(15), odate date, cust int4, v numeric(12,2));
INSERT INTO rs_ord
SELECT CASE WHEN g % 211 = 0 THEN NULL ELSE g END,
       (ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'])[1 + g % 5],
       date '1993-01-01' + (g * 37) % 720, g % 97, (g % 1000) / 7.0
FROM generate_series(1, 30000) g;
-- duplicate outer keys: each such row matches on its own
INSERT INTO rs_ord SELECT ok, pri, odate, cust + 1, v FROM rs_ord WHERE ok % 50 = 7;
INSERT INTO rs_ord VALUES
  (-9223372036854775808, '1-URGENT', '1993-02-01', 1, 1.5),
  (9223372036854775807, '2-HIGH', '1993-02-01', 2, 2.5),
  (0, '3-MEDIUM', '1993-02-01', 3, 3.5),
  (-1, '4-NOT SPECIFIED', '1993-02-01', 4, 4.5),
  (4294967296 + 5, '5-LOW', '1993-02-01', 5, 5.5);
CREATE TABLE rs_line (ok int8, ok4 int4, cdate date, rdate date, qty int4);
INSERT INTO rs_line
SELECT CASE WHEN g % 157 = 0 THEN NULL ELSE g / 4 END, (g / 4)::int4,
       date '1993-01-01' + (g * 13) % 750, date '1993-01-01' + (g * 13) % 750 + (g % 61) - 20, g % 50
FROM generate_series(1, 200000) g;
INSERT INTO rs_line VALUES
  (-9223372036854775808, NULL, '1993-01-01', '1993-02-01', 1),
  (9223372036854775807, NULL, '1993-01-01', '1993-02-01', 2),
  (-1, -1, '1993-01-01', '1993-02-01', 3),
  (5, 5, '1993-01-01', '1993-02-01', 4);
ANALYZE rs_ord, rs_line;

-- TPC-H q04's shape: the orders of a quarter with a late line, by priority
\set q04 'SELECT pri, count(*) FROM rs_ord o WHERE o.odate >= date ''1993-07-01'' AND o.odate < date ''1993-10-01'' AND EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok AND l.cdate < l.rdate) GROUP BY pri'
-- the same rows, not aggregated
\set rows 'SELECT o.* FROM rs_ord o WHERE o.odate >= date ''1993-07-01'' AND o.odate < date ''1993-10-01'' AND EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok AND l.cdate < l.rdate)'

CREATE TABLE corpus (ord int, q text);
INSERT INTO corpus VALUES
  (1, :'q04'),
  (2, :'rows'),
  -- IN, with the outer side's NULL and duplicate keys and the extreme values
  (3, 'SELECT o.ok, o.cust FROM rs_ord o WHERE o.ok IN (SELECT l.ok FROM rs_line l WHERE l.qty < 10) AND o.cust < 40'),
  (4, 'SELECT o.ok, o.cust FROM rs_ord o WHERE o.ok IN (SELECT l.ok FROM rs_line l) AND (o.ok < 100 OR o.ok > 1000000)'),
  -- mixed widths: a 4-byte probe key against 8-byte build keys
  (5, 'SELECT o.ok FROM rs_ord o WHERE EXISTS (SELECT 1 FROM rs_line l WHERE l.ok4 = o.ok AND l.qty = 3) AND o.cust = 5'),
  -- another join clause, tested on each pair
  (6, 'SELECT o.ok, o.v FROM rs_ord o WHERE EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok AND l.qty > o.cust) AND o.cust < 20'),
  -- nothing passes the outer filter, or the inner one
  (7, 'SELECT o.ok FROM rs_ord o WHERE EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok) AND o.cust > 1000'),
  (8, 'SELECT o.ok FROM rs_ord o WHERE EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok AND l.qty > 1000) AND o.cust < 10'),
  -- folded: sums and text keys of the build side, min and max of its dates
  (9, 'SELECT pri, count(*), sum(v), min(odate), max(ok) FROM rs_ord o WHERE EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok AND l.qty < 5) AND o.cust < 30 GROUP BY pri'),
  (10, 'SELECT count(*), sum(v), avg(cust) FROM rs_ord o WHERE EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok AND l.qty < 5) AND o.cust < 30');

-- serially
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.joins(:'q04');
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;
SELECT * FROM pg_temp.analyzed(:'rows');
-- off: the node builds the inner side instead
SET gpuhash.build_outer = off;
SELECT * FROM pg_temp.joins(:'q04');
SELECT pg_temp.same(:'q04');
RESET gpuhash.build_outer;

-- in parallel: the orders read by all participants for one shared build,
-- the lines probed by each; the last to finish returns the marked rows
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT * FROM pg_temp.joins(:'rows');
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;
SELECT pg_temp.folded(:'q04') AS q04_folded;
SELECT * FROM pg_temp.analyzed(:'rows');
-- without the leader
SET parallel_leader_participation = off;
SELECT ord, pg_temp.same(q) FROM corpus WHERE ord IN (1, 2, 6) ORDER BY ord;
RESET parallel_leader_participation;
-- planned in parallel, but no worker starts: the leader alone marks and returns
SET max_parallel_workers = 0;
SELECT ord, pg_temp.same(q) FROM corpus WHERE ord IN (1, 2) ORDER BY ord;
RESET max_parallel_workers;

-- stopping early: a LIMIT over the rows, and a cursor read in part
SELECT pg_temp.same('SELECT count(*) FROM (SELECT o.ok FROM rs_ord o WHERE EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok) LIMIT 7) s');
BEGIN;
SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; SET LOCAL enable_nestloop = off;
DECLARE c CURSOR FOR SELECT o.ok FROM rs_ord o WHERE EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok) AND o.cust = 3;
MOVE 2 IN c;
CLOSE c;
COMMIT;

-- rescans: the join under a nested loop, its build kept between scans; in
-- a subquery whose parameter changes the probe side only (the build kept,
-- its marks started afresh each time) or both sides (built again)
SET max_parallel_workers_per_gather = 0;
SET enable_material = off;
\set kept 'SELECT t.p, s.ok FROM generate_series(1, 3) t(p), LATERAL (SELECT o.ok, t.p AS pp FROM rs_ord o WHERE EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok AND l.qty = 7) AND o.cust = 11 OFFSET 0) s'
\set rebuilt 'SELECT t.p, (SELECT count(*) FROM rs_ord o WHERE EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok AND l.qty = t.p) AND o.cust = t.p) FROM generate_series(1, 4) t(p)'
SELECT * FROM pg_temp.analyzed(:'kept');
SELECT pg_temp.same(:'kept', false);
\set probed 'SELECT t.p, (SELECT count(*) FROM rs_ord o WHERE EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok AND l.qty = t.p) AND o.cust = 11) FROM generate_series(1, 6) t(p)'
SELECT * FROM pg_temp.analyzed(:'probed');
SELECT pg_temp.same(:'probed', false);
SELECT * FROM pg_temp.analyzed(:'rebuilt');
SELECT pg_temp.same(:'rebuilt', false);
RESET enable_material;


-- anti joins built from their outer side (Right Anti): the build rows that
-- no probe marked.  Only where the outer keys are NOT NULL columns, since
-- the table leaves out rows with a NULL key, which NOT EXISTS returns
CREATE TABLE rs_cust (ck int8 NOT NULL, grp char(15), x int4, v numeric(12,2));
INSERT INTO rs_cust SELECT g * 3, (ARRAY['AUTOMOBILE', 'BUILDING', 'MACHINERY'])[1 + g % 3], g % 40,
                           (g % 700) / 3.0
                    FROM generate_series(1, 20000) g;
INSERT INTO rs_cust VALUES (-9223372036854775808, 'BUILDING', 1, 1.0), (9223372036854775807, 'BUILDING', 2, 2.0),
                           (-1, 'AUTOMOBILE', 3, 3.0), (5, 'MACHINERY', 4, 4.0);
ANALYZE rs_cust;
CREATE TABLE corpus_anti (ord int, q text);
INSERT INTO corpus_anti VALUES
  (1, 'SELECT c.ck, c.grp FROM rs_cust c WHERE NOT EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = c.ck)'),
  (2, 'SELECT grp, count(*), sum(v), min(ck) FROM rs_cust c WHERE NOT EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = c.ck AND l.cdate < l.rdate) GROUP BY grp'),
  -- another join clause: a row is returned unless a pair passes it
  (3, 'SELECT c.ck FROM rs_cust c WHERE NOT EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = c.ck AND l.qty > c.x)'),
  -- nothing probes: every row comes back
  (4, 'SELECT count(*), sum(v) FROM rs_cust c WHERE NOT EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = c.ck AND l.qty > 1000)'),
  -- a 4-byte probe key against 8-byte build keys
  (5, 'SELECT c.ck FROM rs_cust c WHERE NOT EXISTS (SELECT 1 FROM rs_line l WHERE l.ok4 = c.ck) AND c.x < 10');
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.joins('SELECT c.ck FROM rs_cust c WHERE NOT EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = c.ck)');
SELECT ord, pg_temp.same(q) FROM corpus_anti ORDER BY ord;
SELECT pg_temp.folded(q) AS aggregate_folded FROM corpus_anti WHERE ord = 4;
-- a nullable outer key: the anti join builds its inner side, as before
SELECT * FROM pg_temp.joins('SELECT o.ok FROM rs_ord o WHERE NOT EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok) AND o.cust < 5');
SELECT pg_temp.same('SELECT o.ok FROM rs_ord o WHERE NOT EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = o.ok) AND o.cust < 5');
-- the probe side's parameter changes between scans; the build is kept
SET enable_material = off;
SELECT pg_temp.same($$SELECT t.p, (SELECT count(*) FROM rs_cust c WHERE NOT EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = c.ck AND l.qty = t.p) AND c.x = 7) FROM generate_series(1, 6) t(p)$$, false);
RESET enable_material;
SET max_parallel_workers_per_gather = 2;
SELECT * FROM pg_temp.joins('SELECT grp, count(*) FROM rs_cust c WHERE NOT EXISTS (SELECT 1 FROM rs_line l WHERE l.ok = c.ck) GROUP BY grp');
SELECT ord, pg_temp.same(q) FROM corpus_anti ORDER BY ord;
SET parallel_leader_participation = off;
SELECT ord, pg_temp.same(q) FROM corpus_anti WHERE ord IN (1, 2) ORDER BY ord;
RESET parallel_leader_participation;

-- one key on half the rows of both sides: each probe of it would mark the
-- same 10 000 build rows again, 10 000 000 000 pairs in all; a key probed
-- lately is left out of the batch, so this takes well under a second (the
-- statement timeout catches the pairs), serially and in parallel
CREATE TABLE rs_skew_o (k int4, id int4);
INSERT INTO rs_skew_o SELECT CASE WHEN i % 2 = 0 THEN 1 ELSE i END, i FROM generate_series(1, 20000) i;
CREATE TABLE rs_skew_i (k int4);
INSERT INTO rs_skew_i SELECT CASE WHEN i % 2 = 0 THEN 1 ELSE i * 3 END FROM generate_series(1, 2000000) i;
ANALYZE rs_skew_o; ANALYZE rs_skew_i;
SET statement_timeout = '60s';
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.joins('SELECT count(*), sum(id) FROM rs_skew_o o WHERE EXISTS (SELECT 1 FROM rs_skew_i i WHERE i.k = o.k)');
-- PostgreSQL's answer, from its hash join (its nested loop, which it
-- prefers here, scans the inner side for each unmatched row: minutes)
SET gpuhash.enable_join = off; SET enable_nestloop = off;
SELECT count(*), sum(id) FROM rs_skew_o o WHERE EXISTS (SELECT 1 FROM rs_skew_i i WHERE i.k = o.k);
CREATE TEMP TABLE rs_skew_ref AS SELECT id FROM rs_skew_o o WHERE EXISTS (SELECT 1 FROM rs_skew_i i WHERE i.k = o.k) AND o.id % 7 = 0;
RESET gpuhash.enable_join;
-- the node's, serially and in parallel, folded and as rows
SET enable_hashjoin = off; SET enable_mergejoin = off;
SELECT count(*), sum(id) FROM rs_skew_o o WHERE EXISTS (SELECT 1 FROM rs_skew_i i WHERE i.k = o.k);
SELECT (SELECT count(*) FROM rs_skew_ref) AS rows,
       (SELECT count(*) FROM ((SELECT id FROM rs_skew_o o WHERE EXISTS (SELECT 1 FROM rs_skew_i i WHERE i.k = o.k) AND o.id % 7 = 0)
                              EXCEPT ALL TABLE rs_skew_ref) d) AS only_node,
       (SELECT count(*) FROM (TABLE rs_skew_ref EXCEPT ALL
                              (SELECT id FROM rs_skew_o o WHERE EXISTS (SELECT 1 FROM rs_skew_i i WHERE i.k = o.k) AND o.id % 7 = 0)) d) AS only_pg;
SET max_parallel_workers_per_gather = 2;
SELECT * FROM pg_temp.joins('SELECT count(*), sum(id) FROM rs_skew_o o WHERE EXISTS (SELECT 1 FROM rs_skew_i i WHERE i.k = o.k)');
SELECT count(*), sum(id) FROM rs_skew_o o WHERE EXISTS (SELECT 1 FROM rs_skew_i i WHERE i.k = o.k);
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
RESET statement_timeout;
DROP TABLE rs_skew_o, rs_skew_i, rs_skew_ref;

RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
DROP TABLE rs_ord, rs_line, rs_cust, corpus, corpus_anti;
