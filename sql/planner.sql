--
-- The planner's GpuHashJoin: plans, and the same rows with the path on and off.
--
-- The path is offered on the GPU when there is one, and on the CPU twin when
-- gpuhash.device = cpu; this file uses whichever this host has.  EXPLAIN
-- lines naming the device and method are left out so that one expected
-- output fits both.
--
LOAD 'gpuhash';
SELECT set_config('gpuhash.device',
                  CASE WHEN gpuhash_backend() = 'gpu' THEN 'gpu' ELSE 'cpu' END, false) IS NOT NULL AS device_set;

CREATE FUNCTION pg_temp.plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l !~ '(Device|Hash Method): ' THEN RETURN NEXT l; END IF;
  END LOOP;
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

-- Runs q with native joins disabled (so the GPU path is taken when offered)
-- and with gpuhash.enable_join off, and compares the results as multisets.
CREATE FUNCTION pg_temp.same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  used boolean; n bigint; only_on bigint; only_off bigint; plan text;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR plan IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    used := coalesce(used, false) OR plan ~ 'GpuHash(Join|Aggregate)';
  END LOOP;
  EXECUTE 'CREATE TEMP TABLE r_on AS SELECT s::text AS r FROM (' || q || ') s';
  PERFORM set_config('enable_hashjoin', 'on', true);
  PERFORM set_config('enable_mergejoin', 'on', true);
  PERFORM set_config('enable_nestloop', 'on', true);
  PERFORM set_config('gpuhash.enable_join', 'off', true);
  EXECUTE 'CREATE TEMP TABLE r_off AS SELECT s::text AS r FROM (' || q || ') s';
  PERFORM set_config('gpuhash.enable_join', 'on', true);
  SELECT count(*) INTO n FROM r_off;
  SELECT count(*) INTO only_on FROM (SELECT * FROM r_on EXCEPT ALL SELECT * FROM r_off) x;
  SELECT count(*) INTO only_off FROM (SELECT * FROM r_off EXCEPT ALL SELECT * FROM r_on) x;
  DROP TABLE r_on; DROP TABLE r_off;
  RETURN CASE WHEN NOT used THEN 'GpuHashJoin not used'
              WHEN only_on + only_off = 0 THEN format('same %s rows', n)
              ELSE format('DIFFERENT: %s rows only with the path, %s only without', only_on, only_off) END;
END $$;

-- data: duplicates, NULL keys, the 4-byte table's empty marker and extremes
CREATE TABLE pf (k int4, k2 int2, k8 int8, v int4, t text);
CREATE TABLE pd (k int4, k2 int2, k8 int8, v int4, t text);
INSERT INTO pf SELECT CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7919) % 1500 END,
                      ((i * 31) % 700)::int2, ((i * 7919) % 1500)::int8 * 3000000000, i % 100,
                      'f' || i
               FROM generate_series(1, 6000) i;
INSERT INTO pd SELECT CASE WHEN i % 23 = 0 THEN NULL ELSE (i * 104729) % 1200 END,
                      ((i * 13) % 500)::int2, ((i * 104729) % 1200)::int8 * 3000000000, i % 50,
                      repeat('d', i % 40) || i
               FROM generate_series(1, 2000) i;
INSERT INTO pf VALUES (-2147483648, -32768, -9223372036854775808, 1, 'min'),
                      (2147483647, 32767, 9223372036854775807, 2, 'max'),
                      (0, 0, 0, 3, 'zero'), (-1, -1, -1, 4, 'minus one'),
                      (-2147483648, -32768, -9223372036854775808, 5, 'min again');
INSERT INTO pd VALUES (-2147483648, -32768, -9223372036854775808, 1, 'min'),
                      (2147483647, 32767, 9223372036854775807, 2, 'max'),
                      (-1, -1, -1, 4, 'minus one'), (NULL, NULL, NULL, 9, 'null');
CREATE TABLE pe (k int4, w int4);
INSERT INTO pe SELECT i, i % 7 FROM generate_series(0, 1499, 3) i;
CREATE TABLE pempty (k int4, v int4);
ANALYZE pf; ANALYZE pd; ANALYZE pe; ANALYZE pempty;

-- plans
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT * FROM pg_temp.plan('SELECT pf.t, pd.t FROM pf JOIN pd ON pf.k = pd.k');
SELECT * FROM pg_temp.plan('SELECT pf.t FROM pf JOIN pd ON pf.k = pd.k AND pf.v > pd.v');
SELECT * FROM pg_temp.plan('SELECT pf.t FROM pf WHERE EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k)');
SELECT * FROM pg_temp.plan('SELECT pf.t FROM pf WHERE pf.k IN (SELECT k FROM pd WHERE v < 10)');
SELECT * FROM pg_temp.plan('SELECT pf.t FROM pf WHERE NOT EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k AND pd.v < pf.v)');
SELECT * FROM pg_temp.plan('SELECT pf.t FROM pf JOIN pd ON pf.k8 = pd.k');
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;

-- few outer rows and an index on the inner side: an index nested loop wins
CREATE INDEX pd_k ON pd (k);
ANALYZE pd;
SELECT * FROM pg_temp.plan('SELECT pd.t FROM pf JOIN pd ON pf.k = pd.k WHERE pf.t = ''f42''');
DROP INDEX pd_k;
-- gpuhash.enable_join = off never offers the path
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SET gpuhash.enable_join = off;
SELECT count(*) AS gpu_nodes FROM pg_temp.plan('SELECT pf.t FROM pf JOIN pd ON pf.k = pd.k') p
WHERE p ~ 'GpuHashJoin';
RESET gpuhash.enable_join;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;

-- the corpus: same rows with the path on and off
SELECT q, pg_temp.same(q) FROM (VALUES
  ('SELECT pf.*, pd.* FROM pf JOIN pd ON pf.k = pd.k'),
  ('SELECT pf.t, pd.t FROM pf JOIN pd ON pd.k = pf.k AND pf.v > pd.v'),
  ('SELECT pf.t, pd.t FROM pf JOIN pd ON pf.k = pd.k WHERE pd.t LIKE ''%1%'' OR pf.v + pd.v = 7'),
  ('SELECT pf.t, pd.k8 FROM pf JOIN pd ON pf.k8 = pd.k8'),
  ('SELECT pf.t, pd.k FROM pf JOIN pd ON pf.k8 = pd.k'),
  ('SELECT pf.k2, pd.k FROM pf JOIN pd ON pf.k2 = pd.k'),
  ('SELECT pf.k2, pd.k2 FROM pf JOIN pd ON pf.k2 = pd.k2'),
  ('SELECT pf.t FROM pf WHERE EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k)'),
  ('SELECT pf.t FROM pf WHERE pf.k IN (SELECT k FROM pd WHERE v < 10)'),
  ('SELECT pf.t FROM pf WHERE EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k AND pd.v > pf.v)'),
  ('SELECT pf.t FROM pf WHERE pf.k8 IN (SELECT k8 FROM pd)'),
  ('SELECT pf.t FROM pf WHERE NOT EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k)'),
  ('SELECT pf.t FROM pf WHERE NOT EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k AND pd.v < pf.v)'),
  ('SELECT pf.t FROM pf WHERE NOT EXISTS (SELECT 1 FROM pd WHERE pd.k2 = pf.k2) AND pf.v < 50'),
  ('SELECT pf.t, pd.t, pe.w FROM pf JOIN pd ON pf.k = pd.k JOIN pe ON pe.k = pd.k'),
  ('SELECT pe.w, count(*), sum(pf.v) FROM pf JOIN pe ON pf.k = pe.k GROUP BY pe.w'),
  ('SELECT pf.t FROM pf JOIN pempty ON pf.k = pempty.k'),
  ('SELECT pf.t FROM pempty JOIN pf ON pf.k = pempty.k'),
  ('SELECT pf.t FROM pf WHERE NOT EXISTS (SELECT 1 FROM pempty WHERE pempty.k = pf.k)'),
  ('SELECT x, (SELECT count(*) FROM pf JOIN pd ON pf.k = pd.k WHERE pf.v < x) FROM generate_series(1, 4) x'),
  ('SELECT x, (SELECT count(*) FROM pf JOIN pd ON pf.k = pd.k WHERE pd.v < x) FROM generate_series(1, 4) x'),
  ('SELECT x, (SELECT count(*) FROM pf WHERE NOT EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k AND pd.v < x)) FROM generate_series(1, 3) x'),
  ('SELECT x, s.t FROM generate_series(1, 3) x, LATERAL (SELECT pf.t FROM pf JOIN pd ON pf.k = pd.k WHERE pd.v < x) s')
) AS c(q);

-- inner values kept in the table: when the inner side is its key and at most
-- one other by-value column, with no NULL and each value fitting the table's
-- payload (as wide as the key), a match carries the value itself
CREATE FUNCTION pg_temp.inner_values(q text) RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(max(substring(l from 'Inner Values: (.*)$')), 'no line')
  FROM pg_temp.analyze_lines(q, 'Inner Values: ') l
$$;
CREATE TABLE iv (k int4, k8 int8, v int4, w int8, b bool, s int2, t text);
INSERT INTO iv SELECT CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7) % 1300 END, ((i * 7) % 1300)::int8 * 3000000000,
                      -i, i::int8 * 1000, i % 3 = 0, (-i)::int2, 'iv' || i
               FROM generate_series(1, 2000) i;
CREATE TABLE iv_null AS SELECT k, CASE WHEN v = -500 THEN NULL ELSE v END AS v FROM iv;
CREATE TABLE iv_wide AS SELECT k, CASE WHEN v = -500 THEN 5000000000 ELSE w END AS w FROM iv;
ANALYZE iv; ANALYZE iv_null; ANALYZE iv_wide;
SELECT q, pg_temp.inner_values(q), pg_temp.same(q) FROM (VALUES
  ('SELECT pf.t, iv.v FROM pf JOIN iv ON pf.k = iv.k'),
  ('SELECT pf.t, iv.k, iv.v FROM pf JOIN iv ON iv.k = pf.k'),
  ('SELECT pf.t, iv.k FROM pf JOIN iv ON pf.k = iv.k'),
  ('SELECT pf.k8, iv.k FROM pf JOIN iv ON pf.k8 = iv.k'),
  ('SELECT pf.t, iv.s FROM pf JOIN iv ON pf.k2 = iv.k'),
  ('SELECT pf.t, iv.b FROM pf JOIN iv ON pf.k = iv.k'),
  ('SELECT pf.t, iv.w FROM pf JOIN iv ON pf.k = iv.k'),
  ('SELECT pf.t, iv.w FROM pf JOIN iv ON pf.k8 = iv.k8'),
  ('SELECT pf.t, iv_wide.w FROM pf JOIN iv_wide ON pf.k = iv_wide.k'),
  ('SELECT pf.t, iv_null.v FROM pf JOIN iv_null ON pf.k = iv_null.k'),
  ('SELECT pf.t, iv.v, iv.s FROM pf JOIN iv ON pf.k = iv.k'),
  ('SELECT pf.t, iv.t FROM pf JOIN iv ON pf.k = iv.k'),
  ('SELECT pf.t FROM pf JOIN iv ON pf.k = iv.k AND iv.v < -pf.v * 10'),
  ('SELECT pf.t FROM pf WHERE EXISTS (SELECT 1 FROM iv WHERE iv.k = pf.k AND iv.v > -pf.v * 10)'),
  ('SELECT pf.t FROM pf WHERE NOT EXISTS (SELECT 1 FROM iv WHERE iv.k = pf.k AND iv.v > -pf.v * 10)')
) AS c(q);

-- a key may be an expression over its side's columns, which that side's plan
-- then returns as one more column
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT * FROM pg_temp.plan('SELECT pf.t, pd.t FROM pf JOIN pd ON pd.k = pf.k / 2');
SELECT * FROM pg_temp.plan('SELECT count(*), sum(pf.v + pd.v) FROM pf JOIN pd ON pd.k / 3 = pf.k2 + pf.v');
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
SELECT q, pg_temp.same(q) FROM (VALUES
  ('SELECT pf.t, pd.t FROM pf JOIN pd ON pd.k = pf.k / 2'),
  ('SELECT pf.t, pd.t FROM pf JOIN pd ON pd.k / 3 = pf.k2 + pf.v'),
  ('SELECT pf.t, pd.t FROM pf JOIN pd ON pd.k8 = pf.k % 1000 * 3000000000::int8'),
  ('SELECT pf.t, pd.k FROM pf JOIN pd ON pd.k2 + 0 = pf.k2 - 0'),
  ('SELECT pf.t, pd.v FROM pf JOIN pd ON pd.k = CASE WHEN pf.v % 2 = 0 THEN pf.k END'),
  ('SELECT pf.t, pd.t FROM pf JOIN pd ON pd.k / 2 = pf.k / 2 AND pf.v > pd.v'),
  ('SELECT pf.t FROM pf WHERE EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k / 2)'),
  ('SELECT pf.t FROM pf WHERE pf.k2 + 1 IN (SELECT pd.k2 * 2 FROM pd)'),
  ('SELECT pf.t FROM pf WHERE NOT EXISTS (SELECT 1 FROM pd WHERE pd.k = CASE WHEN pf.v % 2 = 0 THEN pf.k END)'),
  ('SELECT pf.t FROM pf WHERE NOT EXISTS (SELECT 1 FROM pd WHERE pd.k + 0 = pf.k AND pd.v < pf.v)'),
  ('SELECT count(*), sum(pf.v + pd.v), min(pd.k) FROM pf JOIN pd ON pd.k / 3 = pf.k2 + pf.v'),
  ('SELECT pf.t FROM pf JOIN pempty ON pempty.k = pf.k / 2'),
  ('SELECT pf.t FROM pf JOIN pd ON pd.k = pf.k + (random() * 0)::int4')
) AS c(q);
-- a key expression that overflows raises PostgreSQL's error, as without the path
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT * FROM pg_temp.plan('SELECT count(*) FROM pf JOIN pd ON pd.k = pf.k + 1');
SELECT count(*) FROM pf JOIN pd ON pd.k = pf.k + 1;
SELECT count(*) FROM pf JOIN pd ON pd.k * 2 = pf.k;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
SET gpuhash.enable_join = off;
SELECT count(*) FROM pf JOIN pd ON pd.k = pf.k + 1;
SELECT count(*) FROM pf JOIN pd ON pd.k * 2 = pf.k;
RESET gpuhash.enable_join;
-- with an empty build side an inner or semi join reads nothing of its outer
-- side, as PostgreSQL's hash join does, so the same key expression fails
-- only in the anti join, which returns every outer row
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT * FROM pg_temp.plan('SELECT count(*) FROM pf WHERE pf.k + 1 IN (SELECT k FROM pempty)');
SELECT count(*) FROM pf JOIN pempty ON pempty.k = pf.k + 1;
SELECT count(*) FROM pf WHERE pf.k + 1 IN (SELECT k FROM pempty);
SELECT count(*) FROM pf WHERE NOT EXISTS (SELECT 1 FROM pempty WHERE pempty.k = pf.k + 1);
SET enable_hashjoin = on; SET gpuhash.enable_join = off;
SELECT count(*) FROM pf JOIN pempty ON pempty.k = pf.k + 1;
SELECT count(*) FROM pf WHERE pf.k + 1 IN (SELECT k FROM pempty);
SELECT count(*) FROM pf WHERE NOT EXISTS (SELECT 1 FROM pempty WHERE pempty.k = pf.k + 1);
RESET gpuhash.enable_join;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;

-- EXPLAIN ANALYZE shows the probes' copies to and from the device on the GPU only
CREATE FUNCTION pg_temp.transfers_shown(q text) RETURNS boolean LANGUAGE sql AS $$
  SELECT EXISTS (SELECT FROM pg_temp.analyze_lines(q,
    'Probe Transfers: to device [0-9.]+ ms \(\d+ kB\), from device [0-9.]+ ms \(\d+ kB\)'))
$$;
SELECT pg_temp.transfers_shown('SELECT pf.t, iv.v FROM pf JOIN iv ON pf.k = iv.k')
       = (current_setting('gpuhash.device') = 'gpu') AS inner_transfers_on_gpu_only,
       pg_temp.transfers_shown('SELECT pf.t FROM pf WHERE NOT EXISTS (SELECT 1 FROM iv WHERE iv.k = pf.k)')
       = (current_setting('gpuhash.device') = 'gpu') AS anti_transfers_on_gpu_only;

-- parallel: the outer side split among workers that share one build
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT * FROM pg_temp.plan('SELECT count(*), sum(pf.v + pd.v), max(pd.t) FROM pf JOIN pd ON pf.k = pd.k');
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
SELECT q, pg_temp.same(q) FROM (VALUES
  ('SELECT count(*), sum(pf.v + pd.v), max(pd.t) FROM pf JOIN pd ON pf.k = pd.k'),
  ('SELECT pf.t, pd.t FROM pf JOIN pd ON pf.k = pd.k AND pf.v > pd.v'),
  ('SELECT count(*) FROM pf WHERE EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k)'),
  ('SELECT pf.t FROM pf WHERE NOT EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k AND pd.v < pf.v)'),
  ('SELECT x, (SELECT count(*) FROM pf JOIN pd ON pf.k = pd.k WHERE pd.v < x) FROM generate_series(1, 3) x'),
  ('SELECT count(*), sum(pf.v + iv.v) FROM pf JOIN iv ON pf.k = iv.k'),
  ('SELECT count(*), sum(pf.v + iv_null.v) FROM pf JOIN iv_null ON pf.k = iv_null.k'),
  ('SELECT count(*), sum(pf.v), min(iv.w) FROM pf JOIN iv ON pf.k8 = iv.k8'),
  ('SELECT count(*), sum(pf.v + pd.v) FROM pf JOIN pd ON pd.k / 3 = pf.k2 + pf.v'),
  ('SELECT pf.t, pd.t FROM pf JOIN pd ON pd.k = pf.k / 2'),
  ('SELECT count(*) FROM pf WHERE NOT EXISTS (SELECT 1 FROM pd WHERE pd.k = CASE WHEN pf.v % 2 = 0 THEN pf.k END)'),
  ('SELECT count(*), sum(pf.v) FROM pf JOIN pempty ON pempty.k = pf.k'),
  ('SELECT pf.t FROM pf JOIN pempty ON pempty.k = pf.k')
) AS c(q);
SELECT q, pg_temp.inner_values(q) FROM (VALUES
  ('SELECT count(*), sum(pf.v + iv.v) FROM pf JOIN iv ON pf.k = iv.k'),
  ('SELECT count(*), sum(pf.v + iv_null.v) FROM pf JOIN iv_null ON pf.k = iv_null.k')
) AS c(q);
-- a split inner side planned for more workers than the outer one: the join
-- runs as many as the inner side, which every participant reads first
ALTER TABLE pf SET (parallel_workers = 1); ALTER TABLE pd SET (parallel_workers = 2);
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SELECT * FROM pg_temp.plan('SELECT count(*), sum(pf.v + pd.v) FROM pf JOIN pd ON pf.k = pd.k');
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
SELECT pg_temp.same('SELECT pf.t, pd.t FROM pf JOIN pd ON pf.k = pd.k AND pf.v > pd.v');
-- PostgreSQL's Parallel Hash Join over a GpuHashJoin planned for more
-- workers than its outer side (TPC-H q08): it runs as many as that inner side
CREATE TABLE ps (t text, w int4);
INSERT INTO ps SELECT repeat('d', i % 40) || i, i FROM generate_series(1, 3000) i;
ANALYZE ps;
ALTER TABLE ps SET (parallel_workers = 1);
SET max_parallel_workers_per_gather = 3;
SET gpuhash.join_startup_cost = 0; SET gpuhash.join_build_row_cost = 0;
SET gpuhash.join_probe_row_cost = 0; SET gpuhash.device_setup_cost = 0;
ALTER TABLE pf SET (parallel_workers = 3); ALTER TABLE pd SET (parallel_workers = 3);
SELECT * FROM pg_temp.plan('SELECT count(*), sum(ps.w + pf.v) FROM ps JOIN (pf JOIN pd ON pf.k = pd.k) ON ps.t = pd.t WHERE pf.v < 3');
SELECT pg_temp.same('SELECT ps.w, pf.v, pd.t FROM ps JOIN (pf JOIN pd ON pf.k = pd.k) ON ps.t = pd.t WHERE pf.v < 3');
SET max_parallel_workers_per_gather = 2;
RESET gpuhash.join_startup_cost; RESET gpuhash.join_build_row_cost;
RESET gpuhash.join_probe_row_cost; RESET gpuhash.device_setup_cost;
DROP TABLE ps;
ALTER TABLE pf RESET (parallel_workers); ALTER TABLE pd RESET (parallel_workers);
-- a parallel worker runs with its leader's gpuhash.* settings, which it reads
-- when its node starts instead of defining them at load (settings.c)
CREATE FUNCTION pg_temp.worker_probe_threads(q text) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_temp.analyze_lines(q, '^ *Worker \d+: .* in a helper thread') $$;
SELECT pg_temp.worker_probe_threads('SELECT count(*) FROM pf WHERE EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k)') > 0
    AS workers_probe_in_threads_by_default;
SET gpuhash.overlap_probes = off;
SELECT pg_temp.worker_probe_threads('SELECT count(*) FROM pf WHERE EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k)')
    AS worker_probe_threads_when_off;
RESET gpuhash.overlap_probes;
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;

-- gpuhash.staging_memory cuts probe batches by size: more batches, same rows
CREATE FUNCTION pg_temp.batches(q text) RETURNS int LANGUAGE sql AS $$
  SELECT coalesce(sum(substring(l from 'Batches: (\d+)')::int), 0)::int
  FROM pg_temp.analyze_lines(q, 'Batches: ') l
$$;
SELECT pg_temp.batches('SELECT pf.t, pd.t FROM pf JOIN pd ON pf.k = pd.k') AS batches_256mb;
SET gpuhash.staging_memory = '64kB';
SELECT pg_temp.batches('SELECT pf.t, pd.t FROM pf JOIN pd ON pf.k = pd.k') AS batches_64kb;
SELECT q, pg_temp.same(q) FROM (VALUES
  ('SELECT pf.*, pd.* FROM pf JOIN pd ON pf.k = pd.k'),
  ('SELECT pf.t FROM pf WHERE EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k AND pd.v > pf.v)'),
  ('SELECT pf.t FROM pf WHERE NOT EXISTS (SELECT 1 FROM pd WHERE pd.k = pf.k)')
) AS c(q);
-- gpu_hash_join's probe batches too
SELECT (SELECT count(*) FROM (SELECT * FROM gpu_hash_join('SELECT k, t FROM pd', 'SELECT k, t FROM pf')
                                         AS j(a int, b text, c int, d text)
                              EXCEPT ALL SELECT pd.k, pd.t, pf.k, pf.t FROM pf JOIN pd ON pf.k = pd.k) x) AS extra,
       (SELECT count(*) FROM (SELECT pd.k, pd.t, pf.k, pf.t FROM pf JOIN pd ON pf.k = pd.k
                              EXCEPT ALL SELECT * FROM gpu_hash_join('SELECT k, t FROM pd', 'SELECT k, t FROM pf')
                                         AS j(a int, b text, c int, d text)) x) AS missing;
RESET gpuhash.staging_memory;

DROP TABLE pf, pd, pe, pempty, iv, iv_null, iv_wide;
