--
-- gpuhash.max_device_memory and partitioned (grace) joins: when the build
-- side's table does not fit under the limit, gpu_hash_join splits both sides
-- by key and joins partition by partition.  Answers are compared with
-- PostgreSQL's own joins row for row (EXCEPT ALL both ways), with duplicate
-- keys, NULL keys, and keys of mixed widths.
--
CREATE TABLE gb AS
SELECT CASE WHEN g % 97 = 0 THEN NULL ELSE (g * 7919) % 40000 END AS k, g AS v
FROM generate_series(1, 60000) g;
CREATE TABLE gp AS
SELECT CASE WHEN g % 89 = 0 THEN NULL ELSE (g::int8 * 104729) % 50000 END AS k, g AS w
FROM generate_series(1, 50000) g;
-- one key repeated often, on both sides
INSERT INTO gb SELECT 12345, -g FROM generate_series(1, 3000) g;
INSERT INTO gp SELECT 12345, -g FROM generate_series(1, 20) g;

-- the native joins compared with must stay PostgreSQL's own, not the
-- planner's GpuHashJoin (also bound by the limit)
SET gpuhash.enable_join = off;
SET gpuhash.max_device_memory = '1MB';
SHOW gpuhash.max_device_memory;

-- the limit binds: a table of the whole build side does not fit under it
\set VERBOSITY sqlstate
SELECT gpu_hash_create('whole', 'SELECT k FROM gb');
\set VERBOSITY default

-- inner join, against PostgreSQL's
CREATE TABLE g_inner AS
SELECT * FROM gpu_hash_join('SELECT k, v FROM gb', 'SELECT k, w FROM gp') AS j(bk int, v int, pk int8, w int);
SELECT count(*) AS rows, count(*) FILTER (WHERE bk <> pk) AS key_mismatches FROM g_inner;
SELECT (SELECT count(*) FROM (SELECT bk, v, pk, w FROM g_inner
                              EXCEPT ALL SELECT gb.k, v, gp.k, w FROM gb JOIN gp ON gb.k = gp.k) d) AS extra,
       (SELECT count(*) FROM (SELECT gb.k, v, gp.k, w FROM gb JOIN gp ON gb.k = gp.k
                              EXCEPT ALL SELECT bk, v, pk, w FROM g_inner) d) AS missing;

-- semi and anti joins (an anti join returns the probe rows with NULL keys)
SELECT (SELECT count(*) FROM (SELECT * FROM gpu_hash_join('SELECT k FROM gb', 'SELECT k, w FROM gp', 'semi')
                                          AS j(k int8, w int)
                              EXCEPT ALL SELECT k, w FROM gp WHERE EXISTS (SELECT FROM gb WHERE gb.k = gp.k)) d) AS semi_extra,
       (SELECT count(*) FROM (SELECT k, w FROM gp WHERE EXISTS (SELECT FROM gb WHERE gb.k = gp.k)
                              EXCEPT ALL SELECT * FROM gpu_hash_join('SELECT k FROM gb', 'SELECT k, w FROM gp', 'semi')
                                          AS j(k int8, w int)) d) AS semi_missing,
       (SELECT count(*) FROM (SELECT * FROM gpu_hash_join('SELECT k FROM gb', 'SELECT k, w FROM gp', 'anti', 'cuckoo')
                                          AS j(k int8, w int)
                              EXCEPT ALL SELECT k, w FROM gp WHERE NOT EXISTS (SELECT FROM gb WHERE gb.k = gp.k)) d) AS anti_extra,
       (SELECT count(*) FROM (SELECT k, w FROM gp WHERE NOT EXISTS (SELECT FROM gb WHERE gb.k = gp.k)
                              EXCEPT ALL SELECT * FROM gpu_hash_join('SELECT k FROM gb', 'SELECT k, w FROM gp', 'anti', 'cuckoo')
                                          AS j(k int8, w int)) d) AS anti_missing;
SELECT count(*) FILTER (WHERE k IS NULL) AS null_keys, count(*) AS rows
FROM gpu_hash_join('SELECT k FROM gb', 'SELECT k, w FROM gp', 'anti') AS j(k int8, w int);
SELECT count(*) FILTER (WHERE k IS NULL) AS null_keys, count(*) AS rows
FROM gp WHERE NOT EXISTS (SELECT FROM gb WHERE gb.k = gp.k);

-- the probe side as the larger one, with the build and probe roles swapped
SELECT (SELECT count(*) FROM gpu_hash_join('SELECT k, w FROM gp', 'SELECT k, v FROM gb') AS j(pk int8, w int, bk int, v int))
     = (SELECT count(*) FROM gb JOIN gp ON gb.k = gp.k) AS same_count;

-- a key whose rows alone do not fit cannot be split: 54000, and the message
-- names the limit and what is needed
DO $$
DECLARE
    st text;
    msg text;
    det text;
    hint text;
BEGIN
    PERFORM count(*) FROM gpu_hash_join('SELECT 7 FROM generate_series(1, 300000)', 'SELECT 7', 'semi') AS j(a int);
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
    RAISE NOTICE '%: %', st, msg;
    RAISE NOTICE 'detail names the limit: %, the need: %', det ~ 'The limit is 1048576 bytes', det ~ 'needs at least [0-9]+ bytes';
    RAISE NOTICE 'hint: %', regexp_replace(hint, '[0-9]+ kB', 'N kB');
END
$$;

-- nothing is held afterwards, and without the limit the answers are the same
SELECT gpuhash_memory() AS held;
RESET gpuhash.max_device_memory;
SELECT count(*) = (SELECT count(*) FROM g_inner) AS same_inner
FROM gpu_hash_join('SELECT k, v FROM gb', 'SELECT k, w FROM gp') AS j(bk int, v int, pk int8, w int);

DROP TABLE gb, gp, g_inner;
