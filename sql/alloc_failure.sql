--
-- Injected allocation failures (gpuhash.debug_fail_alloc_after): whichever
-- allocation of a call fails, the call ends with an out-of-memory ERROR
-- (53200), gives back every byte it held, and the next call works.  The
-- number of allocations a call makes differs between the CPU and the GPU, so
-- the output shows counts and checks, not the individual failures.
--
SET gpuhash.batch_rows = 1024;
CREATE TABLE af_build AS SELECT g % 3000 AS k, g AS v FROM generate_series(1, 6000) g;
CREATE TABLE af_probe AS SELECT g AS k FROM generate_series(-100, 4000) g;
INSERT INTO af_build VALUES (NULL, 0);

-- a dimension with unique keys, for the planner's chains below
CREATE TABLE af_dim AS SELECT g AS k, g % 7 AS grp FROM generate_series(-100, 4000) g;
ANALYZE af_build; ANALYZE af_probe; ANALYZE af_dim;

-- the planner's chained nodes: a left level below an inner one and an
-- anti level below an inner one, each read in batches by
-- the node above, which groups
CREATE TABLE af_chains (what text, stmt text);
INSERT INTO af_chains VALUES
  ('chain_left', 'SELECT sum(n * coalesce(grp, 9)) FROM (SELECT d.grp, count(*) AS n FROM af_probe p LEFT JOIN af_dim d ON p.k = d.k AND d.grp < 3 JOIN af_build b ON p.k = b.k GROUP BY d.grp) s'),
  ('chain_anti', 'SELECT sum(n) * 1000 + count(*) FROM (SELECT d.grp, count(*) AS n FROM af_probe p JOIN af_dim d ON p.k = d.k WHERE NOT EXISTS (SELECT FROM af_dim x WHERE x.k = p.k AND x.grp <> 0) GROUP BY 1) s');

-- the answers the failing calls must give once they stop failing
CREATE TABLE af_expected AS
SELECT (SELECT count(*) FROM af_build b JOIN af_probe p USING (k)) AS inner_rows,
       (SELECT count(*) FROM af_probe p WHERE EXISTS (SELECT FROM af_build b WHERE b.k = p.k)) AS semi_rows,
       (SELECT count(*) FROM af_probe p WHERE NOT EXISTS (SELECT FROM af_build b WHERE b.k = p.k)) AS anti_rows;
CREATE TABLE af_chain_expected (what text, answer bigint);
DO $$
DECLARE r record; a bigint;
BEGIN
    FOR r IN SELECT * FROM af_chains LOOP
        EXECUTE r.stmt INTO a;
        INSERT INTO af_chain_expected VALUES (r.what, a);
    END LOOP;
END
$$;

-- from here on the planner's nodes are used where they can be
LOAD 'gpuhash';
SELECT set_config('gpuhash.device',
                  CASE WHEN gpuhash_backend() = 'gpu' THEN 'gpu' ELSE 'cpu' END, false) IS NOT NULL AS device_set;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_nestloop = off;
SET gpuhash.join_startup_cost = 0; SET gpuhash.join_build_row_cost = 0; SET gpuhash.join_probe_row_cost = 0;
-- each chain's nodes, top first, and whether the top reads the one below in batches
\i sql/plan_lines.psql
SELECT what, (SELECT string_agg(trim(l), ' ') FROM pg_temp.plan_lines(stmt) l
              WHERE l ~ '(Custom Scan|Join Type|Outer Side)') AS af_plan
FROM af_chains ORDER BY what;

CREATE FUNCTION af_try(stmt text, OUT state text, OUT message text, OUT answer bigint)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt INTO answer;
    state := '00000';
EXCEPTION WHEN OTHERS THEN
    state := SQLSTATE;
    message := SQLERRM;
END
$$;

SELECT gpuhash_memory() AS before;

-- errors show their SQLSTATE only: their messages name the device
\set VERBOSITY sqlstate

-- it is a superuser's setting
CREATE ROLE af_user;
SET ROLE af_user;
SET gpuhash.debug_fail_alloc_after = 1;
RESET ROLE;
DROP ROLE af_user;

-- Fail allocation 1, 2, 3, ... of each call until the call succeeds; after
-- every failure, the session holds no hash-table memory.
CREATE TABLE af_runs (what text, n int, state text, message text, answer bigint, memory bigint);
DO $$
DECLARE
    stmts text[] := ARRAY[
        'SELECT count(*) FROM gpu_hash_join(''SELECT k, v FROM af_build'', ''SELECT k FROM af_probe'') AS j(a int, b int, c int)',
        'SELECT count(*) FROM gpu_hash_join(''SELECT k FROM af_build'', ''SELECT k FROM af_probe'', ''semi'', ''cuckoo'') AS j(a int)',
        'SELECT count(*) FROM gpu_hash_join(''SELECT k::int8 FROM af_build'', ''SELECT k FROM af_probe'', ''anti'', ''linear'') AS j(a int)',
        'SELECT gpu_hash_create(''af'', ''SELECT k, v FROM af_build'', ''linear'')'];
    whats text[] := ARRAY['inner', 'semi', 'anti', 'create'];
    r record;
BEGIN
    -- the chains before 'create', whose table is held after it succeeds
    SELECT stmts[1:3] || array_agg(stmt ORDER BY what) || stmts[4],
           whats[1:3] || array_agg(what ORDER BY what) || whats[4]
      INTO stmts, whats FROM af_chains;
    FOR i IN 1 .. array_length(stmts, 1) LOOP
        FOR n IN 1 .. 200 LOOP
            EXECUTE format('SET gpuhash.debug_fail_alloc_after = %s', n);
            r := af_try(stmts[i]);
            RESET gpuhash.debug_fail_alloc_after;
            INSERT INTO af_runs VALUES (whats[i], n, r.state, r.message, r.answer, gpuhash_memory());
            EXIT WHEN r.state = '00000';
        END LOOP;
    END LOOP;
END
$$;

-- each call failed at least twice, only with 53200, and the failures name
-- the injected failure; then it succeeded with the right answer
SELECT what,
       count(*) FILTER (WHERE state <> '00000') > 1 AS failed_first,
       array_agg(DISTINCT state ORDER BY state) AS states,
       bool_and(state = '00000' OR message ~ '^could not .*: out of (device|host) memory$') AS messages_name_it,
       bool_and(memory = 0 OR state = '00000') AS memory_given_back
FROM af_runs GROUP BY what ORDER BY what;
SELECT r.what, r.answer = CASE r.what WHEN 'inner' THEN e.inner_rows WHEN 'semi' THEN e.semi_rows
                                      WHEN 'anti' THEN e.anti_rows WHEN 'create' THEN 6000
                                      ELSE (SELECT answer FROM af_chain_expected c WHERE c.what = r.what) END
       AS right_answer
FROM af_runs r, af_expected e WHERE r.state = '00000' ORDER BY r.what;

-- probes of a named table fail the same way and leave the table as it was
SELECT gpuhash_memory() > 0 AS table_held;
CREATE TABLE af_mem AS SELECT gpuhash_memory() AS bytes;
SET gpuhash.debug_fail_alloc_after = 1;
SELECT count(*) FROM gpu_hash_lookup('af', ARRAY[1, 2, 3]);
SELECT gpu_hash_insert('af', ARRAY[5000, 5001]);
RESET gpuhash.debug_fail_alloc_after;
SELECT gpuhash_memory() = bytes AS unchanged FROM af_mem;
SELECT count(*) FROM gpu_hash_lookup('af', ARRAY[1, 2, 3, 5000]);
SELECT gpu_hash_drop('af');

-- a plain failure outside a subtransaction, and the session goes on
SET gpuhash.debug_fail_alloc_after = 1;
SELECT count(*) FROM gpu_hash_join('SELECT k FROM af_build', 'SELECT k FROM af_probe', 'semi') AS j(a int);
RESET gpuhash.debug_fail_alloc_after;
SELECT count(*) = (SELECT semi_rows FROM af_expected) AS right_answer
FROM gpu_hash_join('SELECT k FROM af_build', 'SELECT k FROM af_probe', 'semi') AS j(a int);
SELECT gpuhash_memory() AS after;

DROP TABLE af_build, af_probe, af_dim, af_chains, af_expected, af_chain_expected, af_runs, af_mem;
DROP FUNCTION af_try(text);
\set VERBOSITY default
