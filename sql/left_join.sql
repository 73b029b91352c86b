--
-- LEFT joins that keep the outer (probe) side: every outer row comes out,
-- an outer row that no inner row matches (with the join's other clauses
-- holding) once, null-extended; a NULL outer key matches nothing.  Each
-- query is run with the node forced on and compared, as multisets, with
-- PostgreSQL's own plan, serially and in parallel, and each plan is checked
-- to use the node, so that the test cannot pass without testing it.
--
LOAD 'gpuhash';
SET gpuhash.device = cpu;
SET gpuhash.join_startup_cost = 0;
SET gpuhash.join_build_row_cost = 0;
SET gpuhash.join_probe_row_cost = 0;
-- many batches
SET gpuhash.batch_rows = 1024;

\i sql/compare.psql

-- random data: NULL keys on both sides, duplicates, keys that miss
SELECT setseed(0.4242);
CREATE TABLE lo (id int, k int4, j int4, k8 int8, d date, v int);
CREATE TABLE li (id int, k int4, j int4, k8 int8, d date, v int);
CREATE FUNCTION pg_temp.fill(tab text, n int, spread int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($f$
    INSERT INTO %I
    SELECT g,
           CASE WHEN random() < 0.08 THEN NULL ELSE (random() * %s)::int END,
           CASE WHEN random() < 0.08 THEN NULL ELSE (random() * 4)::int END,
           CASE WHEN random() < 0.08 THEN NULL ELSE (random() * %s)::int8 +
                (ARRAY[0, 0, 0, 4294967296])[1 + (random() * 3)::int] END,
           CASE WHEN random() < 0.08 THEN NULL ELSE date '2020-01-01' + (random() * %s)::int END,
           CASE WHEN random() < 0.08 THEN NULL ELSE (random() * 100)::int END
    FROM generate_series(1, %s) g$f$, tab, spread, spread, spread, n);
END $$;
-- the outer keys spread twice as far as the inner ones: many miss
SELECT pg_temp.fill('lo', 4000, 600), pg_temp.fill('li', 1500, 300);
CREATE TABLE lempty (LIKE lo);
ANALYZE lo, li, lempty;

-- enough of each kind of outer row to mean something
SELECT count(*) FILTER (WHERE li.id IS NULL) > 1000 AS many_unmatched,
       count(*) FILTER (WHERE li.id IS NOT NULL) > 3000 AS many_matched,
       count(*) FILTER (WHERE lo.k IS NULL) > 200 AS many_null_keys
FROM lo LEFT JOIN li ON lo.k = li.k;

CREATE TABLE corpus (ord int, q text);
INSERT INTO corpus VALUES
  (1, 'SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k'),
  (2, 'SELECT lo.*, li.* FROM lo LEFT JOIN li ON lo.k = li.k'),
  -- the inner key only: its value comes from the probe key
  (3, 'SELECT lo.id, li.k FROM lo LEFT JOIN li ON lo.k = li.k'),
  -- another join clause decides the match: a row whose pairs all fail it is null-extended
  (4, 'SELECT lo.id, li.id, li.v FROM lo LEFT JOIN li ON lo.k = li.k AND li.v > lo.v'),
  (5, 'SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k AND lo.v < 50'),
  -- a filter above the join sees the null-extended rows
  (6, 'SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k WHERE coalesce(li.v, -1) < lo.v'),
  (7, 'SELECT lo.id, li.v FROM lo LEFT JOIN li ON lo.k = li.k AND li.j = 1 WHERE coalesce(li.v, 0) + lo.v > 60'),
  -- the anti-join idiom (PostgreSQL may make it an anti join)
  (8, 'SELECT lo.id FROM lo LEFT JOIN li ON lo.k = li.k WHERE li.v IS NULL'),
  (9, 'SELECT lo.id FROM lo LEFT JOIN li ON lo.k = li.k WHERE li.id IS NULL'),
  (17, 'SELECT lo.id, lo.k FROM lo LEFT JOIN li ON lo.k = li.k WHERE li.k IS NULL'),
  -- composite, date and mixed-width keys
  (10, 'SELECT lo.id, li.id, li.j FROM lo LEFT JOIN li ON lo.k = li.k AND lo.j = li.j'),
  (11, 'SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k AND lo.j = li.j AND li.id > lo.id'),
  (12, 'SELECT lo.id, li.id, li.d FROM lo LEFT JOIN li ON lo.d = li.d'),
  (13, 'SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k8'),
  (14, 'SELECT lo.id, li.id, li.k FROM lo LEFT JOIN li ON lo.k8 = li.k'),
  (15, 'SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k8 = li.k8 AND lo.k = li.k'),
  -- a key expression
  (16, 'SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k + 1 = li.k * 2'),
  -- empty sides
  (20, 'SELECT lo.id, e.id FROM lo LEFT JOIN lempty e ON lo.k = e.k'),
  (21, 'SELECT lo.id, e.id FROM lo LEFT JOIN lempty e ON lo.k = e.k AND lo.j = e.j'),
  (22, 'SELECT e.id, li.id FROM lempty e LEFT JOIN li ON e.k = li.k'),
  -- aggregates over a left join (not folded by GpuHashAggregate)
  (30, 'SELECT count(*), count(li.id), sum(li.v), max(lo.v) FROM lo LEFT JOIN li ON lo.k = li.k'),
  -- rescanned with a parameter changing on the inner side, then the outer side
  (40, 'SELECT x, (SELECT count(li.id) FROM lo LEFT JOIN (SELECT * FROM li WHERE li.id % 3 = x) li ON lo.k = li.k) FROM generate_series(0, 2) x'),
  (41, 'SELECT x, (SELECT count(*) + count(li.id) FROM lo LEFT JOIN li ON lo.k = li.k WHERE lo.id % 3 = x) FROM generate_series(0, 2) x'),
  (42, 'SELECT x, c FROM generate_series(0, 2) x, LATERAL (SELECT count(li.id) c FROM lo LEFT JOIN li ON lo.k = li.k AND li.j = x) s');

-- the plans, serial
SELECT * FROM pg_temp.plan('SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k');
SELECT * FROM pg_temp.plan('SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k AND li.v > lo.v');
SELECT * FROM pg_temp.plan('SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k WHERE coalesce(li.v, -1) < lo.v');
SELECT * FROM pg_temp.plan('SELECT lo.id FROM lo LEFT JOIN li ON lo.k = li.k WHERE li.v IS NULL');
SELECT * FROM pg_temp.plan('SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k AND lo.j = li.j');
SELECT * FROM pg_temp.plan('SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.d = li.d');
SELECT * FROM pg_temp.plan('SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k8');
SELECT * FROM pg_temp.plan('SELECT count(*), count(li.id) FROM lo LEFT JOIN li ON lo.k = li.k');
SELECT * FROM pg_temp.plan('SELECT x, (SELECT count(li.id) FROM lo LEFT JOIN (SELECT * FROM li WHERE li.id % 3 = x) li ON lo.k = li.k) FROM generate_series(0, 2) x');

-- small cases by hand: duplicates, NULL keys, a join clause that fails
CREATE TABLE ta (k int, v int);
CREATE TABLE tb (k int, v int);
INSERT INTO ta VALUES (1, 1), (2, 2), (NULL, 3), (4, 4), (4, 5), (1, 6);
INSERT INTO tb VALUES (1, 0), (1, 5), (2, 9), (NULL, 1), (5, 5), (2, 1);
ANALYZE ta, tb;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT * FROM ta LEFT JOIN tb ON ta.k = tb.k ORDER BY 1, 2, 3, 4;
SELECT * FROM ta LEFT JOIN tb ON ta.k = tb.k AND tb.v > ta.v ORDER BY 1, 2, 3, 4;
SELECT * FROM ta LEFT JOIN tb ON ta.k = tb.k WHERE coalesce(tb.v, 0) < 6 ORDER BY 1, 2, 3, 4;
-- a cursor scrolling back and forth over the node
BEGIN;
DECLARE c SCROLL CURSOR FOR
  SELECT (tb.k IS NULL) = (tb.v IS NULL) AS ok FROM ta LEFT JOIN tb ON ta.k = tb.k;
FETCH 3 FROM c;
FETCH BACKWARD 2 FROM c;
MOVE LAST IN c;
FETCH BACKWARD 1 FROM c;
CLOSE c;
COMMIT;
-- a prepared statement's generic plan, with a parameter in the join clause
SET plan_cache_mode = force_generic_plan;
PREPARE lp(int) AS SELECT count(*), count(tb.v) FROM ta LEFT JOIN tb ON ta.k = tb.k AND tb.v > $1;
EXECUTE lp(0);
EXECUTE lp(4);
EXECUTE lp(100);
DEALLOCATE lp;
RESET plan_cache_mode;
-- LIMIT stops early
SELECT count(*) FROM (SELECT * FROM lo LEFT JOIN li ON lo.k = li.k LIMIT 7) s;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;

-- TPC-H q13's shape: the customers per number of their orders, a filter on
-- orders in the join clause
CREATE TABLE customer (c_custkey int, c_name text);
CREATE TABLE orders (o_orderkey int, o_custkey int, o_comment text);
INSERT INTO customer SELECT g, 'Customer#' || g FROM generate_series(1, 1500) g;
INSERT INTO orders
SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE 1 + (g * 7919) % 1000 END,
       CASE WHEN g % 13 = 0 THEN 'fast special requests' ELSE 'regular deposits' END
FROM generate_series(1, 9000) g;
ANALYZE customer, orders;
INSERT INTO corpus VALUES
  (50, $q$SELECT c_count, count(*) AS custdist
FROM (SELECT c_custkey, count(o_orderkey) AS c_count
      FROM customer LEFT OUTER JOIN orders
        ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%'
      GROUP BY c_custkey) AS c_orders
GROUP BY c_count$q$),
  -- unique inner keys (a match per probe key at most)
  (51, 'SELECT o_orderkey, c_custkey, c_name FROM orders LEFT JOIN customer ON o_custkey = c_custkey'),
  (52, $q$SELECT o_orderkey, c_name FROM orders LEFT JOIN customer ON o_custkey = c_custkey AND c_name LIKE '%1%'$q$);
SELECT * FROM pg_temp.plan((SELECT q FROM corpus WHERE ord = 50));
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT c_count, count(*) AS custdist
FROM (SELECT c_custkey, count(o_orderkey) AS c_count
      FROM customer LEFT OUTER JOIN orders
        ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%'
      GROUP BY c_custkey) AS c_orders
GROUP BY c_count
ORDER BY custdist DESC, c_count DESC;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;

-- the corpus, serial
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;
-- ... without direct heap reads, and in one batch
SET gpuhash.direct_scan = off;
SELECT ord, pg_temp.same(q) FROM corpus WHERE ord < 20 ORDER BY ord;
RESET gpuhash.direct_scan;
SET gpuhash.batch_rows = 1000000;
SELECT ord, pg_temp.same(q) FROM corpus WHERE ord < 20 ORDER BY ord;
SET gpuhash.batch_rows = 1024;

-- parallel
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT * FROM pg_temp.plan('SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k AND li.v > lo.v');
SELECT * FROM pg_temp.plan('SELECT lo.id, li.id FROM lo LEFT JOIN li ON lo.k = li.k WHERE coalesce(li.v, -1) < lo.v');
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP TABLE lo, li, lempty, ta, tb, customer, orders, corpus;
