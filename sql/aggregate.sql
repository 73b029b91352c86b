--
-- GpuHashAggregate: a GpuHashJoin that folds count, sum, min and max of
-- integer arithmetic itself.  Plans, the same answers (and the same errors)
-- with the path on and off, serially and in parallel.
--
LOAD 'gpuhash';
SELECT set_config('gpuhash.device',
                  CASE WHEN gpuhash_backend() = 'gpu' THEN 'gpu' ELSE 'cpu' END, false) IS NOT NULL AS device_set;

CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l !~ '(Device|Hash Method): ' THEN RETURN NEXT l; END IF;
  END LOOP;
END $$;

CREATE FUNCTION pg_temp.folded(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE l text; used boolean := false;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    used := used OR l ~ 'GpuHashAggregate';
  END LOOP;
  PERFORM set_config('enable_hashjoin', 'on', true);
  PERFORM set_config('enable_mergejoin', 'on', true);
  PERFORM set_config('enable_nestloop', 'on', true);
  RETURN used;
END $$;

-- q's rows, joined into one string, with native joins off (so the path is
-- taken when offered), or with gpuhash.enable_join off
CREATE FUNCTION pg_temp.answer(q text, gpu boolean) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  PERFORM set_config('enable_hashjoin', (NOT gpu)::text, true);
  PERFORM set_config('enable_mergejoin', (NOT gpu)::text, true);
  PERFORM set_config('enable_nestloop', (NOT gpu)::text, true);
  PERFORM set_config('gpuhash.enable_join', gpu::text, true);
  EXECUTE 'SELECT string_agg(s::text, '';'' ORDER BY s::text) FROM (' || q || ') s' INTO r;
  PERFORM set_config('enable_hashjoin', 'on', true);
  PERFORM set_config('enable_mergejoin', 'on', true);
  PERFORM set_config('enable_nestloop', 'on', true);
  PERFORM set_config('gpuhash.enable_join', 'on', true);
  RETURN coalesce(r, '(no rows)');
END $$;

CREATE FUNCTION pg_temp.same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a_on text; a_off text;
BEGIN
  a_on := pg_temp.answer(q, true);
  a_off := pg_temp.answer(q, false);
  RETURN CASE WHEN NOT pg_temp.folded(q) THEN 'not folded: ' ELSE '' END ||
         CASE WHEN a_on = a_off THEN 'same ' || a_on
              ELSE 'DIFFERENT: ' || a_on || ' with the path, ' || a_off || ' without' END;
END $$;

-- the error q raises (or 'no error') with the path on and off
CREATE FUNCTION pg_temp.same_error(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE e_on text := 'no error'; e_off text := 'no error';
BEGIN
  BEGIN
    PERFORM pg_temp.answer(q, true);
  EXCEPTION WHEN OTHERS THEN e_on := SQLSTATE || ' ' || SQLERRM;
  END;
  BEGIN
    PERFORM pg_temp.answer(q, false);
  EXCEPTION WHEN OTHERS THEN e_off := SQLSTATE || ' ' || SQLERRM;
  END;
  RETURN CASE WHEN NOT pg_temp.folded(q) THEN 'not folded: ' ELSE '' END ||
         CASE WHEN e_on = e_off THEN 'same ' || e_on
              ELSE 'DIFFERENT: ' || e_on || ' with the path, ' || e_off || ' without' END;
END $$;

-- data: NULL keys and values, duplicate inner keys, int2/int8 columns, values
-- whose int8 sum passes the int8 range
CREATE TABLE af (k int4, k2 int2, k8 int8, a int4, b int2, c int8);
INSERT INTO af SELECT CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7919) % 1000 END,
                      ((i * 31) % 300)::int2, ((i * 7919) % 1000)::int8 * 3000000000,
                      CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37) % 1000 - 500 END,
                      (i % 200 - 100)::int2, 9000000000000000000 - i
               FROM generate_series(1, 5000) i;
CREATE TABLE ad (k int4, v int4);             -- duplicate keys: rows fetched per match
INSERT INTO ad SELECT (i * 104729) % 1200, i % 50 - 25 FROM generate_series(1, 1500) i;
CREATE TABLE au (k int4, v int4);             -- unique keys: values kept in the table
INSERT INTO au SELECT i, i * 3 - 700 FROM generate_series(0, 998, 2) i;
CREATE TABLE an (k int4, v int4);             -- NULL values: rows fetched per match
INSERT INTO an SELECT i, CASE WHEN i % 7 = 0 THEN NULL ELSE i END FROM generate_series(0, 999, 3) i;
CREATE TABLE a8 (k8 int8, v8 int8);
INSERT INTO a8 SELECT i::int8 * 3000000000, 9000000000000000000 - i FROM generate_series(0, 999, 2) i;
CREATE TABLE aempty (k int4, v int4);
CREATE TABLE ao (k int4, v int4);             -- for overflows
INSERT INTO ao VALUES (1, 2147483600), (2, -2147483600), (3, 5);
ANALYZE af; ANALYZE ad; ANALYZE au; ANALYZE an; ANALYZE a8; ANALYZE aempty; ANALYZE ao;

-- serial plans
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.plan('SELECT count(*), sum(af.a + au.v) FROM af JOIN au ON af.k = au.k');
SELECT * FROM pg_temp.plan('SELECT count(*), sum(a) FROM af WHERE k IN (SELECT k FROM au WHERE v > 0)');
SELECT * FROM pg_temp.plan('SELECT count(*) FROM af WHERE NOT EXISTS (SELECT 1 FROM ad WHERE ad.k = af.k AND ad.v > af.a)');
-- not folded: grouping by an expression, other aggregates, DISTINCT, FILTER,
-- operators other than + - *
SELECT * FROM pg_temp.plan('SELECT au.v % 3, count(*) FROM af JOIN au ON af.k = au.k GROUP BY 1');
SELECT count(*) AS folded FROM (VALUES
  ('SELECT stddev(af.a) FROM af JOIN au ON af.k = au.k'),
  ('SELECT count(DISTINCT af.a) FROM af JOIN au ON af.k = au.k'),
  ('SELECT count(*) FILTER (WHERE af.a > 0) FROM af JOIN au ON af.k = au.k'),
  ('SELECT sum(af.a::float8) FROM af JOIN au ON af.k = au.k'),
  ('SELECT sum(af.a / 2) FROM af JOIN au ON af.k = au.k')
) AS c(q) WHERE pg_temp.folded(q);
SET gpuhash.enable_aggregate = off;
SELECT pg_temp.folded('SELECT count(*) FROM af JOIN au ON af.k = au.k') AS folded_when_off;
RESET gpuhash.enable_aggregate;

-- serial answers
SELECT q, pg_temp.same(q) FROM (VALUES
  ('SELECT count(*), sum(af.a + au.v), min(af.a - au.v), max(au.v) FROM af JOIN au ON af.k = au.k'),
  ('SELECT count(*), count(af.a), sum(af.a * 2 + ad.v), min(-af.a) FROM af JOIN ad ON af.k = ad.k'),
  ('SELECT count(an.v), sum(an.v + af.a), max(an.v) FROM af JOIN an ON af.k = an.k'),
  ('SELECT sum(af.c), sum(af.c - a8.v8), max(a8.v8), min(af.k8) FROM af JOIN a8 ON af.k8 = a8.k8'),
  ('SELECT sum(af.b), sum(af.b + af.b), min(af.b * 3), sum(af.b::int8 * 1000000000000) FROM af JOIN au ON af.k2 = au.k'),
  ('SELECT sum(af.a::int8 * au.v), sum(af.k2 + au.v::int2), count(*) + 1, sum(af.a)::float8 / nullif(count(*), 0) FROM af JOIN au ON af.k = au.k'),
  ('SELECT count(*), sum(af.a) FROM af JOIN ad ON af.k = ad.k AND af.a > ad.v'),
  ('SELECT count(*), sum(a), min(a), max(b) FROM af WHERE k IN (SELECT k FROM au WHERE v > 0)'),
  ('SELECT count(*), sum(a) FROM af WHERE EXISTS (SELECT 1 FROM ad WHERE ad.k = af.k AND ad.v > af.a)'),
  ('SELECT count(*), sum(a), count(k) FROM af WHERE NOT EXISTS (SELECT 1 FROM au WHERE au.k = af.k)'),
  ('SELECT count(*), sum(a) FROM af WHERE NOT EXISTS (SELECT 1 FROM ad WHERE ad.k = af.k AND ad.v > af.a)'),
  ('SELECT count(*), sum(a) FROM af WHERE NOT EXISTS (SELECT 1 FROM au WHERE au.k = af.k) AND af.b > 0'),
  ('SELECT count(*), sum(af.a), min(aempty.v) FROM af JOIN aempty ON af.k = aempty.k'),
  ('SELECT count(*), sum(af.a) FROM aempty JOIN af ON af.k = aempty.k'),
  ('SELECT count(*), sum(a) FROM af WHERE NOT EXISTS (SELECT 1 FROM aempty WHERE aempty.k = af.k)'),
  ('SELECT sum(af.a) FROM af JOIN au ON af.k = au.k WHERE af.a IS NULL'),
  ('SELECT count(*), sum(af.a + ad.v) FROM af JOIN au ON af.k = au.k JOIN ad ON ad.k = au.k'),
  ('SELECT x, (SELECT count(*) FROM af JOIN au ON af.k = au.k WHERE au.v < x * 100) FROM generate_series(1, 3) x'),
  ('SELECT x, (SELECT sum(af.a) FROM af JOIN au ON af.k = au.k WHERE af.b < x) FROM generate_series(1, 3) x')
) AS c(q);

-- the same errors: integer arithmetic that overflows its type
SELECT q, pg_temp.same_error(q) FROM (VALUES
  ('SELECT sum(af.a + ao.v) FROM af JOIN ao ON af.k = ao.k'),
  ('SELECT sum(ao.v + ao.v) FROM af JOIN ao ON af.k = ao.k'),
  ('SELECT sum(ao.v - 2147483000 - 2147483000) FROM af JOIN ao ON af.k = ao.k'),
  ('SELECT max(af.b * 400::int2) FROM af JOIN au ON af.k = au.k'),
  ('SELECT sum(af.c * 2) FROM af JOIN au ON af.k = au.k'),
  ('SELECT sum(af.c + af.c) FROM af JOIN au ON af.k = au.k'),
  ('SELECT sum(-(af.k8 * 0 - 9223372036854775807 - 1)) FROM af JOIN au ON af.k = au.k'),
  ('SELECT sum((af.c)::int4) FROM af JOIN au ON af.k = au.k'),
  ('SELECT count(*), sum(ao.v) FROM af JOIN ao ON af.k = ao.k')
) AS c(q);

-- parallel: each participant folds its share; PostgreSQL combines them
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT * FROM pg_temp.plan('SELECT count(*), sum(af.a + au.v) FROM af JOIN au ON af.k = au.k');
SELECT * FROM pg_temp.plan('SELECT count(*), sum(a) FROM af WHERE NOT EXISTS (SELECT 1 FROM au WHERE au.k = af.k) HAVING count(*) > 1');
-- sum(int8)'s partial state is internal: each participant sends it serialized
SELECT * FROM pg_temp.plan('SELECT sum(af.c) FROM af JOIN a8 ON af.k8 = a8.k8');
SELECT q, pg_temp.same(q) FROM (VALUES
  ('SELECT count(*), sum(af.a + au.v), min(af.a - au.v), max(au.v) FROM af JOIN au ON af.k = au.k'),
  ('SELECT count(*), count(af.a), sum(af.a * 2 + ad.v), min(-af.a) FROM af JOIN ad ON af.k = ad.k'),
  ('SELECT count(an.v), sum(an.v + af.a), max(an.v) FROM af JOIN an ON af.k = an.k'),
  ('SELECT count(*), sum(af.a) FROM af JOIN ad ON af.k = ad.k AND af.a > ad.v'),
  ('SELECT count(*), sum(a), min(a), max(b) FROM af WHERE k IN (SELECT k FROM au WHERE v > 0)'),
  ('SELECT count(*), sum(a), count(k) FROM af WHERE NOT EXISTS (SELECT 1 FROM au WHERE au.k = af.k)'),
  ('SELECT count(*), sum(a) FROM af WHERE NOT EXISTS (SELECT 1 FROM au WHERE au.k = af.k) HAVING count(*) > 1'),
  ('SELECT count(*), sum(a) FROM af WHERE NOT EXISTS (SELECT 1 FROM au WHERE au.k = af.k) HAVING count(*) < 1'),
  ('SELECT count(*), sum(af.a) FROM af JOIN aempty ON af.k = aempty.k'),
  ('SELECT count(*) + 1, sum(af.a)::float8 / nullif(count(*), 0) FROM af JOIN au ON af.k = au.k'),
  ('SELECT sum(af.c), avg(af.c), sum(af.a::numeric) FROM af JOIN a8 ON af.k8 = a8.k8')
) AS c(q);
SELECT q, pg_temp.same_error(q) FROM (VALUES
  ('SELECT sum(af.a + ao.v) FROM af JOIN ao ON af.k = ao.k')
) AS c(q);
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;
