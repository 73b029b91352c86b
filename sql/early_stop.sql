--
-- Plans that stop early or start over: LIMIT, EXISTS, cursors, timeouts,
-- errors caught in a loop, rescans with changing parameters, generic plans,
-- and gpuhash's SQL functions called many times in one query.  Each case
-- runs with the GpuHash node and again without it (gpuhash.enable_join
-- off), and the two answers are printed side by side; the cases run
-- serially, in parallel, in parallel without the leader, and as a parallel
-- plan whose workers could not start (sql/early_stop_cases.psql).  A crash here
-- ends the test; scripts/test also fails when the server's log shows one.
--
LOAD 'gpuhash';
SELECT set_config('gpuhash.device',
                  CASE WHEN gpuhash_backend() = 'gpu' THEN 'gpu' ELSE 'cpu' END, false) IS NOT NULL AS device_set;

CREATE TABLE es_f AS
  SELECT g AS id, CASE WHEN g % 97 = 0 THEN NULL ELSE g % 5000 + 1 END AS dim_id, g % 13 AS amount
  FROM generate_series(1, 200000) g;
CREATE TABLE es_d AS SELECT g AS id, g % 7 AS attr FROM generate_series(1, 4000) g;
CREATE TABLE es_small AS SELECT g AS id, g % 500 + 1 AS dim_id FROM generate_series(1, 20000) g;
ANALYZE es_f, es_d, es_small;

-- What the plan of q uses with PostgreSQL's own hash and merge joins off:
-- the GpuHash node, and whether under a Gather.
CREATE FUNCTION pg_temp.uses(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text; node text := 'no GpuHash node'; par bool := false;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('gpuhash.enable_join', 'on', true);
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l ~ 'GpuHashAggregate' THEN node := 'GpuHashAggregate';
    ELSIF l ~ 'GpuHashJoin' AND node = 'no GpuHash node' THEN node := 'GpuHashJoin'; END IF;
    par := par OR l ~ 'Gather';
  END LOOP;
  RETURN node || CASE WHEN par THEN ', parallel' ELSE '' END;
END $$;

-- The memory this backend's contexts hold, for the leak checks.
CREATE FUNCTION pg_temp.backend_bytes() RETURNS bigint LANGUAGE sql AS
  $$ SELECT sum(total_bytes)::bigint FROM pg_backend_memory_contexts $$;

-- Runs q n times, each raising an error midway that the loop catches;
-- returns the errors caught and whether memory stayed put (the first 50
-- runs warm the caches and are not counted).
CREATE FUNCTION pg_temp.errors_in_loop(q text, n int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE errs int := 0; before bigint; msg text := '';
BEGIN
  FOR i IN 1 .. n + 50 LOOP
    IF i = 51 THEN before := pg_temp.backend_bytes(); END IF;
    BEGIN
      EXECUTE q;
    EXCEPTION WHEN OTHERS THEN
      IF i > 50 THEN errs := errs + 1; END IF;
      msg := SQLERRM;
    END;
  END LOOP;
  RETURN format('%s errors (%s), backend memory %s, gpuhash memory %s', errs, msg,
                CASE WHEN pg_temp.backend_bytes() - before < 1048576 THEN 'kept' ELSE
                  'GREW by ' || (pg_temp.backend_bytes() - before) END,
                gpuhash_memory());
END $$;

-- the planner takes the GpuHash node whenever it can (early_stop_cases.psql
-- turns PostgreSQL's own hash and merge joins off for the node's runs)
SET gpuhash.join_startup_cost = 0;
SET gpuhash.batch_rows = 4096;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;

\set mode serial
\set loops 1000
SET max_parallel_workers_per_gather = 0;
\i sql/early_stop_cases.psql

\set mode parallel
SET max_parallel_workers_per_gather = 2;
\i sql/early_stop_cases.psql

\set mode 'parallel, leader not participating'
\set loops 100
SET parallel_leader_participation = off;
\i sql/early_stop_cases.psql
RESET parallel_leader_participation;

\set mode 'parallel plan, no workers launched'
SET max_parallel_workers = 0;
\i sql/early_stop_cases.psql
RESET max_parallel_workers;

-- Cursors (never parallel): a few rows then CLOSE, scrolling back, WITH HOLD.
SET max_parallel_workers_per_gather = 0;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
BEGIN;
DECLARE c1 CURSOR FOR SELECT f.dim_id = d.id AS ok FROM es_f f JOIN es_d d ON f.dim_id = d.id;
SELECT pg_temp.uses('SELECT f.dim_id = d.id AS ok FROM es_f f JOIN es_d d ON f.dim_id = d.id');
FETCH 3 FROM c1;
CLOSE c1;
DECLARE c2 CURSOR FOR SELECT f.id > 0 AS ok FROM es_f f WHERE NOT EXISTS (SELECT FROM es_d d WHERE d.id = f.dim_id);
FETCH 2 FROM c2;
FETCH 2 FROM c2;
CLOSE c2;
DECLARE c3 SCROLL CURSOR FOR SELECT f.dim_id = d.id AS ok, d.attr < 7 AS small FROM es_f f JOIN es_d d ON f.dim_id = d.id;
FETCH 5 FROM c3;
FETCH BACKWARD 2 FROM c3;
FETCH ABSOLUTE 1 FROM c3;
MOVE LAST IN c3;
FETCH BACKWARD 1 FROM c3;
CLOSE c3;
DECLARE c4 CURSOR WITH HOLD FOR
  SELECT count(*), sum(f.amount) FROM es_f f WHERE EXISTS (SELECT FROM es_d d WHERE d.id = f.dim_id);
COMMIT;
FETCH ALL FROM c4;
CLOSE c4;
SET gpuhash.enable_join = off;
SELECT count(*), sum(f.amount) FROM es_f f WHERE EXISTS (SELECT FROM es_d d WHERE d.id = f.dim_id);
RESET gpuhash.enable_join;

-- statement_timeout while the table is built, and while the outer side is probed
SET statement_timeout = '300ms';
SELECT count(*) FROM es_f f JOIN (SELECT id FROM es_d WHERE pg_sleep(0.002) IS NOT NULL) d ON f.dim_id = d.id;
SELECT count(*) FROM (SELECT * FROM es_f WHERE pg_sleep(0.0005) IS NOT NULL) f JOIN es_d d ON f.dim_id = d.id;
SET max_parallel_workers_per_gather = 2;
SELECT count(*) FROM es_f f JOIN (SELECT id FROM es_d WHERE pg_sleep(0.002) IS NOT NULL) d ON f.dim_id = d.id;
SELECT count(*) FROM (SELECT * FROM es_f WHERE pg_sleep(0.0005) IS NOT NULL) f JOIN es_d d ON f.dim_id = d.id;
RESET statement_timeout;
SELECT count(*) AS after_timeouts FROM es_f f JOIN es_d d ON f.dim_id = d.id;
SELECT gpuhash_memory() AS memory_after_timeouts;

-- gpu_hash_join called many times in one query, and nested
SET max_parallel_workers_per_gather = 0;
SELECT x, (SELECT count(*) FROM gpu_hash_join('select g from generate_series(1,10) g',
                                              'select g from generate_series(1,' || x || ') g') AS j(a int, b int))
FROM generate_series(1, 3) x;
SELECT * FROM generate_series(1, 3) x, LATERAL gpu_hash_join('select ' || x, 'select 1, 2') AS j(a int, b int, c int);
SELECT count(*) AS calls, sum(n) AS rows FROM (
  SELECT (SELECT count(*) FROM gpu_hash_join('select id from es_d where attr = ' || x % 7,
                                             'select dim_id from es_small', 'semi') AS j(k int)) AS n
  FROM generate_series(1, 300) x) s;
SELECT sum(c) FROM (SELECT (SELECT count(*) FROM es_small s WHERE s.dim_id % 7 = x % 7) AS c
                    FROM generate_series(1, 300) x) n;
SELECT count(*) FROM gpu_hash_join(
  'select a from gpu_hash_join(''select id from es_d'', ''select dim_id from es_small'', ''semi'') as j(a int)',
  'select id from es_d', 'semi') AS j(k int);
SELECT count(DISTINCT s.dim_id) FROM es_small s JOIN es_d d ON s.dim_id = d.id JOIN es_d d2 ON d2.id = d.id;
SELECT gpu_hash_join.* FROM (VALUES (10), (20)) v(n),
  LATERAL gpu_hash_join('select g from generate_series(1, ' || v.n || ') g',
                        'select g from generate_series(' || v.n - 1 || ', 30) g') AS gpu_hash_join(a int, b int)
ORDER BY 1;
SELECT gpu_hash_create('es_named', 'select id, attr from es_d') IS NOT NULL AS created;
SELECT count(*) FILTER (WHERE hit) AS hits, count(*) AS probes
FROM (SELECT (gpu_hash_contains('es_named', ARRAY[x]))[1] AS hit FROM generate_series(1, 5000) x) s;
SELECT sum(l.value) FROM generate_series(1, 200) x, LATERAL gpu_hash_lookup('es_named', ARRAY[x, x + 1]) l;
SELECT gpu_hash_drop('es_named');
SELECT gpuhash_memory() AS memory_at_end;

DROP TABLE es_f, es_d, es_small;
