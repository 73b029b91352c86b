--
-- Bad input: every SQL function and setting of the extension given wrong
-- arguments.  Each case must raise an ERROR with a SQLSTATE that fits (never
-- XX000, internal_error) and a message naming the problem, and the session
-- must go on working.  try() runs one statement and returns its SQLSTATE and
-- message, so that the codes are part of the expected output.
--
SET gpuhash.batch_rows = 1024;

CREATE FUNCTION try(stmt text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- the device setting as the session had it (PGOPTIONS may set it), to
-- check below that no case changed it
LOAD 'gpuhash';
SELECT current_setting('gpuhash.device') AS device_before \gset
-- the cases, run in order; stmt is shown with its result
CREATE TEMP TABLE cases (id serial, stmt text);
CREATE TABLE bi (k int4, v int8, t text, f float8, n numeric, b bool);
INSERT INTO bi SELECT g, g * 10, 't' || g, g, g, g % 2 = 0 FROM generate_series(1, 100) g;
INSERT INTO bi VALUES (NULL, 0, 'null key', NULL, NULL, NULL);
SELECT gpu_hash_create('bi', 'SELECT k, v FROM bi');
SELECT gpu_hash_create('bl', 'SELECT k FROM bi', 'linear');

-- NULL arguments, for every argument of every function
INSERT INTO cases (stmt) VALUES
  ($$SELECT * FROM gpu_hash_join(NULL, 'SELECT 1') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', NULL) AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1', NULL) AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1', 'inner', NULL) AS j(a int, b int)$$),
  ($$SELECT gpu_hash_create(NULL, 'SELECT 1')$$),
  ($$SELECT gpu_hash_create('x', NULL)$$),
  ($$SELECT gpu_hash_create('x', 'SELECT 1', NULL)$$),
  ($$SELECT gpu_hash_drop(NULL)$$),
  ($$SELECT gpu_hash_contains(NULL, ARRAY[1])$$),
  ($$SELECT gpu_hash_contains('bi', NULL::int4[])$$),
  ($$SELECT gpu_hash_contains('bi', NULL::int8[])$$),
  ($$SELECT * FROM gpu_hash_lookup(NULL, ARRAY[1])$$),
  ($$SELECT * FROM gpu_hash_lookup('bi', NULL::int4[])$$),
  ($$SELECT * FROM gpu_hash_lookup('bi', NULL::int8[])$$),
  ($$SELECT gpu_hash_insert(NULL, ARRAY[1])$$),
  ($$SELECT gpu_hash_insert('bl', NULL::int4[])$$),
  ($$SELECT gpu_hash_insert('bl', NULL::int8[], ARRAY[1]::int8[])$$),
  ($$SELECT gpu_hash_delete(NULL, ARRAY[1])$$),
  ($$SELECT gpu_hash_delete('bl', NULL::int4[])$$),
  ($$SELECT gpu_hash_delete('bl', NULL::int8[])$$);

-- names: empty, whitespace, too long (63 bytes is the most), duplicate, unknown
INSERT INTO cases (stmt) VALUES
  ($$SELECT gpu_hash_create('', 'SELECT 1')$$),
  ($$SELECT gpu_hash_create(E' \t\n ', 'SELECT 1')$$),
  ($$SELECT gpu_hash_create(repeat('n', 64), 'SELECT 1')$$),
  ($$SELECT gpu_hash_create(repeat('é', 32), 'SELECT 1')$$),
  ($$SELECT gpu_hash_contains(repeat('n', 64), ARRAY[1])$$),
  ($$SELECT gpu_hash_drop(repeat('n', 100))$$),
  ($$SELECT gpu_hash_drop('')$$),
  ($$SELECT gpu_hash_drop(' ')$$),
  ($$SELECT * FROM gpu_hash_lookup('', ARRAY[1])$$),
  ($$SELECT gpu_hash_insert(' ', ARRAY[1])$$),
  ($$SELECT gpu_hash_delete('', ARRAY[1])$$),
  ($$SELECT gpu_hash_create('bi', 'SELECT 1')$$),
  ($$SELECT gpu_hash_create('dup', 'SELECT 1 FROM (SELECT gpu_hash_create(''dup'', ''SELECT 2'')) s')$$),
  ($$SELECT gpu_hash_drop('nosuch')$$),
  ($$SELECT gpu_hash_drop('BI')$$),
  ($$SELECT gpu_hash_drop('bi ')$$),
  ($$SELECT gpu_hash_contains('nosuch', ARRAY[1])$$),
  ($$SELECT * FROM gpu_hash_lookup('nosuch', ARRAY[1]::int8[])$$),
  ($$SELECT gpu_hash_insert('nosuch', ARRAY[1])$$),
  ($$SELECT gpu_hash_delete('nosuch', ARRAY[1])$$);

-- join types and methods
INSERT INTO cases (stmt) VALUES
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1', 'outer') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1', '') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1', 'inner ') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1', 'inner', 'chained') AS j(a int, b int)$$),
  ($$SELECT gpu_hash_create('x', 'SELECT 1', 'robin hood')$$),
  ($$SELECT gpu_hash_create('x', 'SELECT 1', '')$$);

-- key columns of other types, in either query and in named tables
INSERT INTO cases (stmt) VALUES
  ($$SELECT * FROM gpu_hash_join('SELECT t FROM bi', 'SELECT k FROM bi') AS j(a text, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT f FROM bi', 'SELECT k FROM bi') AS j(a float8, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT k FROM bi', 'SELECT n FROM bi', 'semi') AS j(b numeric)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT k FROM bi', 'SELECT b FROM bi', 'anti') AS j(b bool)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT k::oid FROM bi', 'SELECT k FROM bi') AS j(a oid, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT ARRAY[k] FROM bi', 'SELECT k FROM bi') AS j(a int[], b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT NULL', 'SELECT k FROM bi') AS j(a text, b int)$$),
  ($$SELECT gpu_hash_create('x', 'SELECT t FROM bi')$$),
  ($$SELECT gpu_hash_create('x', 'SELECT f FROM bi')$$),
  ($$SELECT gpu_hash_create('x', 'SELECT n FROM bi')$$),
  ($$SELECT gpu_hash_create('x', 'SELECT b FROM bi')$$),
  ($$SELECT gpu_hash_create('x', 'SELECT k, t FROM bi')$$),
  ($$SELECT gpu_hash_create('x', 'SELECT k, f FROM bi')$$),
  ($$SELECT gpu_hash_create('x', 'SELECT k, v, v FROM bi')$$),
  ($$SELECT gpu_hash_create('x', 'SELECT k, NULL::int8 FROM bi')$$);

-- queries that are wrong: syntax, zero columns, not one SELECT, parameters
INSERT INTO cases (stmt) VALUES
  ($$SELECT * FROM gpu_hash_join('SELEC 1', 'SELECT 1') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1 FROM') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT k FROM nosuchtable', 'SELECT 1') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT nosuchcolumn FROM bi') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('', 'SELECT 1') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('   ', 'SELECT 1') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', '-- only a comment') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1; SELECT 2', 'SELECT 1') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT FROM bi', 'SELECT 1') AS j(b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT FROM bi', 'semi') AS j(b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT $1', 'SELECT 1') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'DELETE FROM bi RETURNING k') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT k FROM bi FOR SHARE', 'SELECT 1') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('BEGIN', 'SELECT 1') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('COPY bi TO STDOUT', 'SELECT 1') AS j(a int, b int)$$),
  ($$SELECT gpu_hash_create('x', 'SELEC 1')$$),
  ($$SELECT gpu_hash_create('x', '')$$),
  ($$SELECT gpu_hash_create('x', 'SELECT FROM bi')$$),
  ($$SELECT gpu_hash_create('x', 'SELECT 1; SELECT 2')$$),
  ($$SELECT gpu_hash_create('x', 'UPDATE bi SET v = 0 RETURNING k')$$);

-- set-returning and volatile expressions where they matter: the functions
-- need a context that takes a set, and a query that fails part-way fails
-- the call
INSERT INTO cases (stmt) VALUES
  ($$SELECT gpu_hash_join('SELECT 1', 'SELECT 1')$$),
  ($$SELECT * FROM bi WHERE k = (SELECT gpu_hash_join('SELECT 1', 'SELECT 1'))$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1')$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1') AS j(a int, b int, c int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1') AS j(a int8, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT generate_series(1, 3) / (2 - generate_series(1, 3))', 'SELECT 1') AS j(a int, b int)$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT k FROM bi WHERE k / (k - 50) > 0', 'semi') AS j(a int)$$),
  ($$SELECT gpu_hash_create('x', 'SELECT k, (v / (k - 70))::int8 FROM bi')$$),
  ($$SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT (random() * 0)::int / 0', 'anti') AS j(a int)$$);

-- arrays: wrong element type, NULLs where they are not allowed, more than
-- one dimension, too many elements
INSERT INTO cases (stmt) VALUES
  ($$SELECT gpu_hash_contains('bi', ARRAY['a'])$$),
  ($$SELECT gpu_hash_contains('bi', ARRAY[1.5])$$),
  ($$SELECT gpu_hash_contains('bi', ARRAY[true])$$),
  ($$SELECT * FROM gpu_hash_lookup('bi', ARRAY[1.5]::float8[])$$),
  ($$SELECT gpu_hash_contains('bi', '{1,2}')$$),
  ($$SELECT gpu_hash_contains('bi', ARRAY[[1, 2], [3, 4]])$$),
  ($$SELECT * FROM gpu_hash_lookup('bi', ARRAY[[1], [2]]::int8[])$$),
  ($$SELECT gpu_hash_insert('bl', ARRAY[[1, 2]])$$),
  ($$SELECT gpu_hash_insert('bl', ARRAY[1, 2], ARRAY[[1, 2]]::int8[])$$),
  ($$SELECT gpu_hash_delete('bl', ARRAY[[1, 2]])$$),
  ($$SELECT gpu_hash_insert('bl', ARRAY[1, NULL])$$),
  ($$SELECT gpu_hash_insert('bl', ARRAY[1, 2], ARRAY[1, NULL]::int8[])$$),
  ($$SELECT gpu_hash_insert('bl', ARRAY[1, 2], ARRAY[1]::int8[])$$),
  ($$SELECT gpu_hash_insert('bl', ARRAY[1, 2], ARRAY[1.5, 2.5])$$),
  ($$SELECT gpu_hash_insert('bl', ARRAY[4294967296])$$),
  ($$SELECT gpu_hash_insert('bi', ARRAY[1])$$),
  ($$SELECT gpu_hash_delete('bi', ARRAY[1])$$),
  ($$SELECT gpu_hash_contains('bi', array_fill(1, ARRAY[200000000]))$$),
  ($$SELECT gpu_hash_contains('bi', array_fill(1, ARRAY[20000, 20000]))$$);

-- settings
INSERT INTO cases (stmt) VALUES
  ($$SET gpuhash.device = tpu$$),
  ($$SET gpuhash.device = ''$$),
  ($$SET gpuhash.device = 1$$),
  ($$SET gpuhash.batch_rows = 1023$$),
  ($$SET gpuhash.batch_rows = -1$$),
  ($$SET gpuhash.batch_rows = 2000000000$$),
  ($$SET gpuhash.batch_rows = 'many'$$),
  ($$SET gpuhash.debug_fail_alloc_after = -1$$),
  ($$SET gpuhash.debug_fail_alloc_after = 'often'$$),
  ($$SET gpuhash.debug_fail_alloc_after = 3000000000$$),
  ($$SET gpuhash.max_device_memory = -1$$),
  ($$SET gpuhash.max_device_memory = 'lots'$$),
  ($$SET gpuhash.max_device_memory = '10 parsecs'$$),
  ($$SET gpuhash.max_device_memory = '4096PB'$$),
  ($$SET gpuhash.staging_memory = '1kB'$$),
  ($$SET gpuhash.staging_memory = 'plenty'$$),
  ($$SET gpuhash.enable_join = maybe$$),
  ($$SET gpuhash.join_probe_row_cost = -1$$),
  ($$SET gpuhash.parallel_worker_gpu = 2$$),
  ($$SET gpuhash.no_such_setting = 1$$);

SELECT id, stmt, try(stmt) AS result FROM cases ORDER BY id;

-- no case was an internal error, none succeeded, and each left the session
-- as it was: the settings, the named tables, the data
SELECT count(*) FILTER (WHERE try(stmt) LIKE 'XX%') AS internal,
       count(*) FILTER (WHERE try(stmt) = 'ok') AS succeeded
FROM cases;
SELECT current_setting('gpuhash.device') = :'device_before' AS device_unchanged;
SHOW gpuhash.batch_rows;
SELECT name, rows FROM gpu_hash_tables() ORDER BY name;
SELECT count(*), sum(v) FROM bi;

-- the same errors outside a subtransaction, followed by working queries
SELECT gpu_hash_contains('bi', ARRAY[[1, 2], [3, 4]]);
SELECT gpu_hash_contains('bi', ARRAY[1, 2, NULL, 101]);
SELECT * FROM gpu_hash_join('SELECT t FROM bi', 'SELECT k FROM bi') AS j(a text, b int);
SELECT count(*), sum(b) FROM gpu_hash_join('SELECT k FROM bi', 'SELECT k, v FROM bi') AS j(a int, b int, c int8);
SELECT count(*), sum(c) FROM gpu_hash_join('SELECT k FROM bi', 'SELECT k, v FROM bi') AS j(a int, b int, c int8);
SELECT gpu_hash_insert('bl', ARRAY[1, NULL]);
SELECT gpu_hash_insert('bl', ARRAY[101, 102]);
SELECT gpu_hash_contains('bl', ARRAY[100, 101, 102, 103]);

-- a query may be any SELECT, VALUES or TABLE; rounded setting values are taken
SELECT count(*) FROM gpu_hash_join('VALUES (1), (2)', 'TABLE bi') AS j(a int, k int4, v int8, t text, f float8, n numeric, b bool);
SET gpuhash.batch_rows = 1.5e3;
SHOW gpuhash.batch_rows;
RESET gpuhash.batch_rows;

-- the inner create of case 'dup' succeeded: named tables are not transactional
SELECT gpu_hash_drop('bi'), gpu_hash_drop('bl'), gpu_hash_drop('dup');
DROP TABLE bi;
DROP FUNCTION try(text);
