--
-- A GpuHashJoin reading a plain Seq Scan's heap pages itself
-- (gpuhash.direct_scan): the same rows as with the Seq Scan asked for each
-- row, and as PostgreSQL's own joins, whatever the table's rows look like.
--
LOAD 'gpuhash';
SELECT set_config('gpuhash.device',
                  CASE WHEN gpuhash_backend() = 'gpu' THEN 'gpu' ELSE 'cpu' END, false) IS NOT NULL AS device_set;

-- Runs q with native joins disabled, with gpuhash.direct_scan on and off,
-- and with PostgreSQL's joins alone; compares the three as multisets.
CREATE FUNCTION pg_temp.same3(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  used boolean; n bigint; d1 bigint; d2 bigint; plan text;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    used := coalesce(used, false) OR plan ~ 'GpuHash(Join|Aggregate)';
  END LOOP;
  EXECUTE 'CREATE TEMP TABLE r_direct AS SELECT s::text AS r FROM (' || q || ') s';
  PERFORM set_config('gpuhash.direct_scan', 'off', true);
  EXECUTE 'CREATE TEMP TABLE r_rows AS SELECT s::text AS r FROM (' || q || ') s';
  PERFORM set_config('gpuhash.direct_scan', 'on', true);
  PERFORM set_config('enable_hashjoin', 'on', true);
  PERFORM set_config('enable_mergejoin', 'on', true);
  PERFORM set_config('enable_nestloop', 'on', true);
  PERFORM set_config('gpuhash.enable_join', 'off', true);
  EXECUTE 'CREATE TEMP TABLE r_native AS SELECT s::text AS r FROM (' || q || ') s';
  PERFORM set_config('gpuhash.enable_join', 'on', true);
  SELECT count(*) INTO n FROM r_native;
  SELECT count(*) INTO d1 FROM ((SELECT * FROM r_direct EXCEPT ALL SELECT * FROM r_native)
                                UNION ALL (SELECT * FROM r_native EXCEPT ALL SELECT * FROM r_direct)) x;
  SELECT count(*) INTO d2 FROM ((SELECT * FROM r_rows EXCEPT ALL SELECT * FROM r_native)
                                UNION ALL (SELECT * FROM r_native EXCEPT ALL SELECT * FROM r_rows)) x;
  DROP TABLE r_direct; DROP TABLE r_rows; DROP TABLE r_native;
  RETURN CASE WHEN NOT used THEN 'GpuHashJoin not used'
              WHEN d1 + d2 = 0 THEN format('same %s rows', n)
              ELSE format('DIFFERENT: %s rows differ with direct_scan, %s without', d1, d2) END;
END $$;

-- The lines of EXPLAIN ANALYZE of q, with native joins disabled, that match pattern.
CREATE FUNCTION pg_temp.analyze_lines(q text, pattern text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ pattern THEN RETURN NEXT l; END IF;
  END LOOP;
END $$;

-- Rows the Seq Scan below the join returned, from EXPLAIN ANALYZE.
CREATE FUNCTION pg_temp.scan_rows(q text, tab text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text; r text := 'no scan';
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ ('Seq Scan on ' || tab || ' ') THEN r := substring(l from 'rows=\d+ loops=\d+'); END IF;
  END LOOP;
  RETURN r;
END $$;

-- the build side
CREATE TABLE ds_dim (id int4, payload int4, name text);
INSERT INTO ds_dim SELECT CASE WHEN i % 97 = 0 THEN NULL ELSE i END, i * 3, 'dim' || i
  FROM generate_series(1, 3000) i;
INSERT INTO ds_dim VALUES (-2147483648, 1, 'min'), (2147483647, 2, 'max'), (0, 3, 'zero');

-- probe sides of several shapes: by-value columns only; NULLs in front of
-- the key; a text column in front of the key; mixed alignment; a dropped
-- column; a column added later with a default (older rows lack it)
CREATE TABLE ds_plain (dim_id int4, amount int4);
INSERT INTO ds_plain SELECT (i * 7919) % 3200, i % 1000 FROM generate_series(1, 20000) i;
INSERT INTO ds_plain VALUES (NULL, 5), (-2147483648, 6), (2147483647, 7), (0, 8);

CREATE TABLE ds_nulls (a int4, dim_id int4, amount int8);
INSERT INTO ds_nulls SELECT CASE WHEN i % 5 = 0 THEN NULL ELSE i END,
                            CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 31) % 3100 END,
                            CASE WHEN i % 13 = 0 THEN NULL ELSE i::int8 * 1000000 END
  FROM generate_series(1, 20000) i;

CREATE TABLE ds_text (label text, dim_id int4, amount int2);
INSERT INTO ds_text SELECT repeat('x', i % 30), (i * 17) % 3050, (i % 300)::int2
  FROM generate_series(1, 20000) i;

CREATE TABLE ds_align (flag bool, small int2, big int8, dim_id int4, tiny "char", amount int4);
INSERT INTO ds_align SELECT i % 2 = 0, (i % 100)::int2, i::int8 << 33, (i * 13) % 3000,
                            chr(65 + i % 26)::"char", i
  FROM generate_series(1, 20000) i;

CREATE TABLE ds_dropped (junk text, dim_id int4, gone int8, amount int4);
INSERT INTO ds_dropped SELECT 'j' || i, (i * 7) % 3000, i, i % 77 FROM generate_series(1, 10000) i;
ALTER TABLE ds_dropped DROP COLUMN gone;
INSERT INTO ds_dropped SELECT 'k' || i, (i * 11) % 3000, i % 55 FROM generate_series(1, 10000) i;

CREATE TABLE ds_added (dim_id int4);
INSERT INTO ds_added SELECT (i * 3) % 3000 FROM generate_series(1, 10000) i;
ALTER TABLE ds_added ADD COLUMN amount int4 DEFAULT 42;
INSERT INTO ds_added SELECT (i * 5) % 3000, i FROM generate_series(1, 10000) i;

-- rows deleted and updated (dead versions on the pages), and a table
-- emptied by DELETE
CREATE TABLE ds_churn (dim_id int4, amount int4);
INSERT INTO ds_churn SELECT i % 3000, i FROM generate_series(1, 30000) i;
DELETE FROM ds_churn WHERE amount % 3 = 0;
UPDATE ds_churn SET amount = -amount WHERE amount % 7 = 0;
CREATE TABLE ds_gone (dim_id int4, amount int4);
INSERT INTO ds_gone SELECT i, i FROM generate_series(1, 1000) i;
DELETE FROM ds_gone;
CREATE TABLE ds_empty (dim_id int4, amount int4);

ANALYZE ds_dim; ANALYZE ds_plain; ANALYZE ds_nulls; ANALYZE ds_text; ANALYZE ds_align;
ANALYZE ds_dropped; ANALYZE ds_added; ANALYZE ds_churn; ANALYZE ds_gone; ANALYZE ds_empty;

SELECT q, pg_temp.same3(q) FROM (VALUES
  ('SELECT count(*), sum(p.amount + d.payload) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id'),
  ('SELECT p.dim_id, p.amount, d.name FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id'),
  ('SELECT * FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id'),
  ('SELECT count(*), sum(amount) FROM ds_plain WHERE dim_id IN (SELECT id FROM ds_dim WHERE payload % 10 = 0)'),
  ('SELECT count(*), sum(amount) FROM ds_plain p WHERE NOT EXISTS (SELECT 1 FROM ds_dim d WHERE d.id = p.dim_id)'),
  ('SELECT n.a, n.amount, d.payload FROM ds_nulls n JOIN ds_dim d ON n.dim_id = d.id'),
  ('SELECT count(*), sum(n.amount), count(n.a) FROM ds_nulls n JOIN ds_dim d ON n.dim_id = d.id'),
  ('SELECT n.a, n.amount FROM ds_nulls n WHERE NOT EXISTS (SELECT 1 FROM ds_dim d WHERE d.id = n.dim_id)'),
  ('SELECT t.label, t.amount, d.payload FROM ds_text t JOIN ds_dim d ON t.dim_id = d.id'),
  ('SELECT count(*), sum(t.amount) FROM ds_text t JOIN ds_dim d ON t.dim_id = d.id'),
  ('SELECT a.flag, a.small, a.big, a.tiny, a.amount, d.payload FROM ds_align a JOIN ds_dim d ON a.dim_id = d.id'),
  ('SELECT count(*), sum(a.amount), sum(a.small), min(a.big) FROM ds_align a JOIN ds_dim d ON a.dim_id = d.id'),
  ('SELECT x.junk, x.amount, d.payload FROM ds_dropped x JOIN ds_dim d ON x.dim_id = d.id'),
  ('SELECT * FROM ds_dropped x JOIN ds_dim d ON x.dim_id = d.id'),
  ('SELECT x.amount, d.payload FROM ds_added x JOIN ds_dim d ON x.dim_id = d.id'),
  ('SELECT count(*), sum(x.amount) FROM ds_added x JOIN ds_dim d ON x.dim_id = d.id'),
  ('SELECT c.amount, d.payload FROM ds_churn c JOIN ds_dim d ON c.dim_id = d.id'),
  ('SELECT count(*), sum(c.amount) FROM ds_churn c WHERE NOT EXISTS (SELECT 1 FROM ds_dim d WHERE d.id = c.dim_id)'),
  ('SELECT count(*), sum(g.amount) FROM ds_gone g JOIN ds_dim d ON g.dim_id = d.id'),
  ('SELECT count(*) FROM ds_empty e WHERE NOT EXISTS (SELECT 1 FROM ds_dim d WHERE d.id = e.dim_id)'),
  -- the build side read directly too
  ('SELECT count(*), sum(d.payload) FROM ds_dim d JOIN ds_plain p ON p.dim_id = d.id'),
  -- a Seq Scan with a filter is asked row by row
  ('SELECT count(*), sum(p.amount) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id WHERE p.amount > 500'),
  -- rescans: a new parameter each time, and the join under a nested loop
  ('SELECT x, (SELECT count(*) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id WHERE d.payload < x) FROM generate_series(1, 9000, 3000) x'),
  ('SELECT x, (SELECT count(*) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id AND p.amount < x) FROM generate_series(1, 1000, 400) x'),
  ('SELECT x, s.amount FROM generate_series(1, 3) x, LATERAL (SELECT p.amount FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id WHERE d.payload = x * 3) s')
) AS c(q);

-- rows this transaction inserted, updated and deleted, read by later
-- commands of the same transaction
BEGIN;
INSERT INTO ds_churn SELECT i % 3000, 100000 + i FROM generate_series(1, 5000) i;
DELETE FROM ds_churn WHERE amount % 5 = 0;
UPDATE ds_churn SET dim_id = dim_id + 1 WHERE amount % 11 = 0;
SELECT pg_temp.same3('SELECT c.amount, d.payload FROM ds_churn c JOIN ds_dim d ON c.dim_id = d.id');
ROLLBACK;

-- a cursor fetched in steps, and scrolled back to the start
BEGIN;
SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; SET LOCAL enable_nestloop = off;
DECLARE ds_cur SCROLL CURSOR FOR
  SELECT count(*), sum(p.amount) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id;
FETCH 1 FROM ds_cur;
FETCH ABSOLUTE 0 FROM ds_cur;
FETCH 1 FROM ds_cur;
COMMIT;

-- EXPLAIN ANALYZE says which sides are read directly (a filtered side too,
-- with how many of its quals are compiled), and still counts the Seq Scan's
-- rows (live rows only)
SELECT q, l FROM (VALUES
  ('SELECT count(*) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id'),
  ('SELECT count(*) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id AND d.payload > 3'),
  ('SELECT count(*) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id AND d.payload > 3 WHERE p.amount > 3')
) AS c(q), LATERAL (SELECT coalesce(max(x), 'no line') AS l
                    FROM pg_temp.analyze_lines(q, 'Direct Scan: ') x) a;
SET gpuhash.direct_scan = off;
SELECT count(*) AS direct_lines_when_off
  FROM pg_temp.analyze_lines('SELECT count(*) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id', 'Direct Scan: ');
RESET gpuhash.direct_scan;
SELECT pg_temp.scan_rows('SELECT count(*) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id', 'ds_plain') AS plain,
       pg_temp.scan_rows('SELECT count(*) FROM ds_churn c JOIN ds_dim d ON c.dim_id = d.id', 'ds_churn') AS churn,
       pg_temp.scan_rows('SELECT count(*) FROM ds_empty e JOIN ds_dim d ON e.dim_id = d.id', 'ds_empty') AS empty;

-- parallel: workers split the pages of both sides
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT q, pg_temp.same3(q) FROM (VALUES
  ('SELECT count(*), sum(p.amount + d.payload) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id'),
  ('SELECT count(*), sum(amount) FROM ds_plain WHERE dim_id IN (SELECT id FROM ds_dim WHERE payload % 10 = 0)'),
  ('SELECT count(*), sum(c.amount) FROM ds_churn c WHERE NOT EXISTS (SELECT 1 FROM ds_dim d WHERE d.id = c.dim_id)'),
  ('SELECT count(*), sum(n.amount), count(n.a) FROM ds_nulls n JOIN ds_dim d ON n.dim_id = d.id'),
  ('SELECT count(*), sum(x.amount) FROM ds_added x JOIN ds_dim d ON x.dim_id = d.id'),
  ('SELECT x, (SELECT count(*) FROM ds_plain p JOIN ds_dim d ON p.dim_id = d.id WHERE d.payload < x) FROM generate_series(1, 9000, 3000) x')
) AS c(q);
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;
