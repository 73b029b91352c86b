--
-- What the planner charges a plan of GPU joins, seen in EXPLAIN alone (no
-- query here runs, so the output is the same with or without a GPU):
--
-- * a session's GPU context (gpuhash.device_setup_cost), until it has one,
--   once a plan: a GPU join above another shares the context of the one
--   below, and a lower GPU join that loses at its own relation only for
--   that cost is still offered to the joins above it;
-- * what reading an input directly saves: a filter that compiles whole
--   costs a comparison a row, and where a key filter's key can be read
--   before the rest of the row, the outer rows it drops are not filtered,
--   handed on, copied or probed.
--
-- The session is new, so that no GPU context exists yet on a GPU host.
--
LOAD 'gpuhash';
SET gpuhash.device = gpu;
SET max_parallel_workers_per_gather = 0;

-- a small TPC-H q03: customers of one segment, their orders of some days,
-- those orders' lines of some days
CREATE TABLE pd_c (ck int4, seg int4);
INSERT INTO pd_c SELECT i, i % 5 FROM generate_series(1, 5000) i;
CREATE TABLE pd_o (ok int4, ck int4, od int4, pri int4);
INSERT INTO pd_o SELECT i, 1 + (i * 7) % 5000, i % 100, i % 3 FROM generate_series(1, 50000) i;
CREATE TABLE pd_l (ok int4, price int4, sd int4);
INSERT INTO pd_l SELECT 1 + (i * 13) % 50000, i % 1000, i % 100 FROM generate_series(1, 200000) i;
-- its key after a variable-length column: no test before the row is taken apart
CREATE TABLE pd_lt (note text, ok int4, price int4, sd int4);
INSERT INTO pd_lt SELECT 'n' || ok % 7, ok, price, sd FROM pd_l;
-- every row sampled, so that the estimates, and this file's output, are the same on every run
ALTER TABLE pd_o ALTER ok SET STATISTICS 1000, ALTER ck SET STATISTICS 1000, ALTER od SET STATISTICS 1000;
ALTER TABLE pd_l ALTER ok SET STATISTICS 1000, ALTER sd SET STATISTICS 1000;
ALTER TABLE pd_lt ALTER ok SET STATISTICS 1000, ALTER sd SET STATISTICS 1000;
ANALYZE pd_c;
ANALYZE pd_o;
ANALYZE pd_l;
ANALYZE pd_lt;

CREATE FUNCTION pg_temp.shape(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l ~ '(Join|Aggregate|Scan on)' AND l !~ 'Join Type' THEN RETURN NEXT l; END IF;
  END LOOP;
END $$;

-- the estimated total cost of q's first GpuHash node
CREATE FUNCTION pg_temp.node_cost(q text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN ' || q LOOP
    IF l ~ 'GpuHash' THEN
      RETURN substring(l FROM 'cost=[0-9.]+\.\.([0-9.]+)')::numeric;
    END IF;
  END LOOP;
  RETURN NULL;
END $$;

-- whether q's first GpuHash node costs less with setting (on by default) than without
CREATE FUNCTION pg_temp.saves(q text, setting text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE without numeric;
BEGIN
  PERFORM set_config(setting, 'off', true);
  without := pg_temp.node_cost(q);
  PERFORM set_config(setting, 'on', true);
  RETURN without - pg_temp.node_cost(q) > 0;
END $$;

CREATE TEMP TABLE q03 AS SELECT
  'SELECT l.ok, sum(l.price), o.od FROM pd_c c, pd_o o, pd_l l
   WHERE c.seg = 1 AND c.ck = o.ck AND l.ok = o.ok AND o.od < 50 AND l.sd > 50
   GROUP BY l.ok, o.od'::text AS q;

-- The setup is charged once: with every join the node's, the plan of two
-- GPU joins costs the setup more than with none.
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
SELECT * FROM pg_temp.shape((SELECT q FROM q03));
SET gpuhash.device_setup_cost = 0;
CREATE TEMP TABLE c0 AS SELECT pg_temp.node_cost(q) AS c FROM q03;
SET gpuhash.device_setup_cost = 1000;
SELECT pg_temp.node_cost(q) - (SELECT c FROM c0) AS setup_charged FROM q03;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;

-- A lower GPU join that loses to PostgreSQL's hash join at its own relation
-- only for the setup is still offered to the join above, which then pays
-- the setup once for both; a larger setup leaves the plan PostgreSQL's.
SET gpuhash.join_startup_cost = 0;
SET gpuhash.device_setup_cost = 2000;
SELECT * FROM pg_temp.shape('SELECT o.ok, o.od FROM pd_c c, pd_o o WHERE c.seg = 1 AND c.ck = o.ck AND o.od < 50');
SELECT * FROM pg_temp.shape((SELECT q FROM q03));
SET gpuhash.device_setup_cost = 4000;
SELECT * FROM pg_temp.shape((SELECT q FROM q03));
RESET gpuhash.join_startup_cost;
RESET gpuhash.device_setup_cost;

-- What reading an input directly takes off a join's cost (its cost with
-- gpuhash.direct_scan off less its cost with it on): a filter that
-- compiles whole is tested for a comparison a row; one that does not
-- compile, or a scan without a filter (credited a tuple a row either way),
-- gains nothing more.  The key filter, which would drop rows early here too,
-- has its own test below.
SET gpuhash.device_setup_cost = 0;
SET gpuhash.key_filter = off;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
CREATE TEMP TABLE dq (name text, q text);
INSERT INTO dq VALUES
  ('compiled filters', 'SELECT count(*) FROM pd_l l JOIN pd_o o ON l.ok = o.ok WHERE l.sd > 50 AND o.od < 90'),
  ('filters not compiled', 'SELECT count(*) FROM pd_l l JOIN pd_o o ON l.ok = o.ok WHERE l.sd + 0 > 50 AND o.od + 0 < 90');
SELECT name, pg_temp.saves(q, 'gpuhash.direct_scan') AS saved FROM dq ORDER BY name;
RESET gpuhash.key_filter;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;
RESET gpuhash.device_setup_cost;

-- What the key filter takes off a join's cost (its cost without the filter
-- less its cost with it): where the key is read before the rest of the
-- row, also for a join that keeps two in five of its outer rows; nothing
-- where it lies after a text column, nor where the filter is not planned,
-- for a join that keeps most of its outer rows, or an anti join.
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_nestloop = off;
CREATE TEMP TABLE kq (name text, q text);
INSERT INTO kq VALUES
  ('key first', 'SELECT count(*) FROM pd_l l JOIN pd_o o ON l.ok = o.ok WHERE o.od < 5 AND l.sd > 50'),
  ('key after text', 'SELECT count(*) FROM pd_lt l JOIN pd_o o ON l.ok = o.ok WHERE o.od < 5 AND l.sd > 50'),
  ('keeps most', 'SELECT count(*) FROM pd_l l JOIN pd_o o ON l.ok = o.ok WHERE o.od < 90'),
  ('keeps two in five', 'SELECT count(*) FROM pd_l l JOIN pd_o o ON l.ok = o.ok WHERE o.od < 40 AND l.sd > 50'),
  ('two in five after text', 'SELECT count(*) FROM pd_lt l JOIN pd_o o ON l.ok = o.ok WHERE o.od < 40 AND l.sd > 50'),
  ('anti', 'SELECT count(*) FROM pd_l l WHERE NOT EXISTS (SELECT FROM pd_o o WHERE o.ok = l.ok AND o.od < 5)');
SELECT name, pg_temp.saves(q, 'gpuhash.key_filter') AS saved FROM kq ORDER BY name;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_nestloop;

DROP TABLE pd_c, pd_o, pd_l, pd_lt;
