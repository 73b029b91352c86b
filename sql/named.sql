--
-- Named hash tables: create, contains, lookup, insert, delete, tables, drop.
--
SET gpuhash.batch_rows = 1024;

CREATE TABLE src (k int4, v int8);
INSERT INTO src VALUES
    (1, 10), (2, 20), (2, 21), (NULL, 99), (-2147483648, -1),
    (2147483647, 9223372036854775807), (0, -9223372036854775808), (-1, 0);

-- Keys only: the values are row numbers, counted over every row of the
-- query (NULL keys too), so they equal row_number() over its output.
SELECT gpu_hash_create('rn', 'SELECT k FROM src ORDER BY v');
SELECT k, row_number() OVER (ORDER BY v) FROM src ORDER BY 2;
SELECT * FROM gpu_hash_lookup('rn', ARRAY[0, -2147483648, -1, 1, 2, 3, NULL, 2147483647])
ORDER BY key, value;
SELECT gpu_hash_contains('rn', ARRAY[0, -2147483648, -1, 1, 2, 3, NULL, 2147483647]);
-- bigint keys that do not fit a 4-byte table are simply not there
SELECT gpu_hash_contains('rn', ARRAY[4294967295, -1, 2147483648, -2147483648, NULL]::int8[]);
SELECT * FROM gpu_hash_lookup('rn', ARRAY[4294967295, -1, -4294967297]::int8[]) ORDER BY key, value;
-- empty arrays, and arrays that do not start at 1
SELECT gpu_hash_contains('rn', '{}'::int4[]);
SELECT * FROM gpu_hash_lookup('rn', '{}'::int8[]);
SELECT gpu_hash_contains('rn', '[5:7]={1,3,2}'::int4[]);
SELECT * FROM gpu_hash_lookup('rn', '[5:7]={1,3,2}'::int4[]) ORDER BY key, value;
SELECT gpu_hash_contains('rn', ARRAY[NULL, NULL]::int4[]);
SELECT * FROM gpu_hash_lookup('rn', ARRAY[NULL]::int4[]);
-- repeated probe keys give repeated answers
SELECT * FROM gpu_hash_lookup('rn', ARRAY[2, 2, 1]) ORDER BY key, value;

-- values from the second column come back exactly
SELECT gpu_hash_create('kv', 'SELECT k, v FROM src WHERE k IS NOT NULL', 'cuckoo');
SELECT * FROM gpu_hash_lookup('kv', ARRAY[2, 2147483647, 0, -2147483648, -1]) ORDER BY key, value;

-- smallint and bigint keys, smallint values
SELECT gpu_hash_create('i2', 'SELECT k::int2, v::int2 FROM (VALUES (-32768, -32768), (32767, 32767), (0, 3)) t(k, v)');
SELECT gpu_hash_contains('i2', ARRAY[-32768, 32767, 32768, -32769, 0]);
SELECT * FROM gpu_hash_lookup('i2', ARRAY[-32768, 32767, 65535]) ORDER BY key;
SELECT gpu_hash_create('i8', $$SELECT k FROM (VALUES (4294967295), (-1), (-9223372036854775808),
                                                 (9223372036854775807), (NULL), (NULL)) t(k)$$,
                       'linear');
SELECT gpu_hash_contains('i8', ARRAY[4294967295, -1, 1, -9223372036854775808, 9223372036854775807, 4294967296]);
SELECT gpu_hash_contains('i8', ARRAY[-1, 1]);
SELECT * FROM gpu_hash_lookup('i8', ARRAY[-1, 4294967295, -9223372036854775808]::int8[]) ORDER BY key;

-- many duplicates of one key
SELECT gpu_hash_create('dups', 'SELECT CASE WHEN g % 10 = 0 THEN g ELSE 7 END FROM generate_series(1, 20000) g');
SELECT count(*), sum(value), min(value), max(value) FROM gpu_hash_lookup('dups', ARRAY[7]);
SELECT count(*) FROM gpu_hash_lookup('dups', ARRAY[7, 10, 11, 7]);
SELECT count(*) FROM gpu_hash_lookup('dups', ARRAY(SELECT g FROM generate_series(1, 20000) g));

-- auto resolves by device and size (ght_choose_method), so show only that it resolved
SELECT name, CASE WHEN name IN ('dups', 'i2', 'rn') AND method IN ('cuckoo', 'linear') THEN 'auto'
                  ELSE method END AS method, key_type, rows, null_keys, distinct_keys, query
FROM gpu_hash_tables() ORDER BY name;
SELECT count(*) FILTER (WHERE capacity < distinct_keys OR load_factor < 0 OR load_factor > 1
                        OR bytes <= 0 OR build_ms < 0 OR device NOT IN ('gpu', 'cpu'))
    AS bad_stats
FROM gpu_hash_tables();

--
-- Inserts and deletes on a linear table, through growth and after many
-- deletes, checked against a native table kept in step.
--
CREATE TABLE mirror (k int8, v int8);
-- starts empty
SELECT gpu_hash_create('lin', 'SELECT k, v FROM mirror', 'linear');

CREATE FUNCTION check_lin(OUT stored bigint, OUT native bigint, OUT differ bigint,
                          OUT contains_wrong bigint, OUT stats_ok bool)
LANGUAGE plpgsql AS $$
DECLARE
    probe int8[];
BEGIN
    -- every key once, and keys that were never there
    SELECT array_agg(k) INTO probe
    FROM (SELECT DISTINCT k FROM mirror
          UNION ALL SELECT g FROM generate_series(200001, 201000) g) s;
    SELECT count(*) INTO stored FROM gpu_hash_lookup('lin', probe);
    SELECT count(*) INTO native FROM mirror;
    SELECT count(*) INTO differ
    FROM ((SELECT key, value FROM gpu_hash_lookup('lin', probe)
           EXCEPT ALL SELECT k, v FROM mirror)
          UNION ALL
          (SELECT k, v FROM mirror
           EXCEPT ALL SELECT key, value FROM gpu_hash_lookup('lin', probe))) d;
    SELECT count(*) INTO contains_wrong
    FROM unnest(probe, gpu_hash_contains('lin', probe)) AS u(k, hit)
    WHERE hit IS DISTINCT FROM EXISTS (SELECT FROM mirror m WHERE m.k = u.k);
    SELECT t.rows = native AND t.distinct_keys = (SELECT count(DISTINCT k) FROM mirror)
    INTO stats_ok
    FROM gpu_hash_tables() t WHERE t.name = 'lin';
END
$$;

-- 200000 rows in batches of 10000: many duplicates, several rehashes
DO $$
DECLARE
    ks int8[];
    vs int8[];
    n bigint;
BEGIN
    FOR i IN 1..20 LOOP
        SELECT array_agg(k ORDER BY g), array_agg(v ORDER BY g) INTO ks, vs
        FROM (SELECT g, ((g::int8 * 7919 + i * 104729) % 150001) AS k, i * 100000 + g AS v
              FROM generate_series(1, 10000) g) s;
        n := gpu_hash_insert('lin', ks, vs);
        IF n <> 10000 THEN
            RAISE EXCEPTION 'inserted % rows', n;
        END IF;
        INSERT INTO mirror SELECT * FROM unnest(ks, vs);
    END LOOP;
END
$$;
SELECT * FROM check_lin();

-- delete a third of the keys, then nine tenths of what is left
SELECT gpu_hash_delete('lin', ARRAY(SELECT DISTINCT k FROM mirror WHERE k % 3 = 0))
    = (SELECT count(*) FROM mirror WHERE k % 3 = 0) AS removed_all;
DELETE FROM mirror WHERE k % 3 = 0;
SELECT * FROM check_lin();
SELECT gpu_hash_delete('lin', ARRAY(SELECT DISTINCT k FROM mirror WHERE k % 10 <> 0))
    = (SELECT count(*) FROM mirror WHERE k % 10 <> 0) AS removed_all;
DELETE FROM mirror WHERE k % 10 <> 0;
SELECT * FROM check_lin();
-- deleting again removes nothing; NULLs and absent keys are ignored
SELECT gpu_hash_delete('lin', ARRAY[1, 2, 4, NULL, 300000]::int8[]);
-- insert into the holes again
DO $$
DECLARE
    ks int8[];
    vs int8[];
BEGIN
    SELECT array_agg(k ORDER BY g), array_agg(v ORDER BY g) INTO ks, vs
    FROM (SELECT g, (g::int8 * 31) % 90001 AS k, -g AS v FROM generate_series(1, 50000) g) s;
    PERFORM gpu_hash_insert('lin', ks, vs);
    INSERT INTO mirror SELECT * FROM unnest(ks, vs);
END
$$;
SELECT * FROM check_lin();
-- everything gone
SELECT gpu_hash_delete('lin', ARRAY(SELECT DISTINCT k FROM mirror)) = (SELECT count(*) FROM mirror)
    AS removed_all;
TRUNCATE mirror;
SELECT * FROM check_lin();

-- Row numbers continue after the highest one used, and are not reused.
SELECT gpu_hash_create('num', 'SELECT k FROM (VALUES (10), (NULL), (30)) t(k)', 'linear');
SELECT gpu_hash_insert('num', ARRAY[40, 10]);
SELECT gpu_hash_insert('num', ARRAY[50]::int8[], ARRAY[1000]::int8[]);
SELECT gpu_hash_insert('num', ARRAY[60], vals => NULL);
SELECT gpu_hash_delete('num', ARRAY[10]);
SELECT gpu_hash_insert('num', ARRAY[10]);
SELECT gpu_hash_insert('num', '{}'::int4[]);
SELECT * FROM gpu_hash_lookup('num', ARRAY[10, 30, 40, 50, 60]) ORDER BY key, value;

--
-- Errors.
--
-- names
SELECT gpu_hash_create('rn', 'SELECT 1');
SELECT gpu_hash_create('', 'SELECT 1');
SELECT gpu_hash_create(E' \t ', 'SELECT 1');
SELECT gpu_hash_create(repeat('x', 64), 'SELECT 1');
SELECT gpu_hash_create(repeat('x', 63), 'SELECT 1');
SELECT gpu_hash_contains(repeat('x', 63), ARRAY[1]);
SELECT gpu_hash_drop(repeat('x', 63));
SELECT gpu_hash_contains('nosuch', ARRAY[1]);
SELECT * FROM gpu_hash_lookup('nosuch', ARRAY[1]);
SELECT gpu_hash_insert('nosuch', ARRAY[1]);
SELECT gpu_hash_delete('nosuch', ARRAY[1]);
SELECT gpu_hash_drop('nosuch');
SELECT gpu_hash_contains('RN', ARRAY[1]);
-- NULL arguments
SELECT gpu_hash_create(NULL, 'SELECT 1');
SELECT gpu_hash_create('n', NULL);
SELECT gpu_hash_create('n', 'SELECT 1', NULL);
SELECT gpu_hash_contains(NULL, ARRAY[1]);
SELECT gpu_hash_contains('rn', NULL::int4[]);
SELECT * FROM gpu_hash_lookup('rn', NULL::int8[]);
SELECT gpu_hash_insert('num', NULL::int4[]);
SELECT gpu_hash_delete(NULL, ARRAY[1]);
SELECT gpu_hash_drop(NULL);
-- methods and queries
SELECT gpu_hash_create('n', 'SELECT 1', 'robin hood');
SELECT gpu_hash_create('n', 'SELECT 1, 2, 3');
SELECT gpu_hash_create('n', 'SELECT 1, ''x''');
SELECT gpu_hash_create('n', 'SELECT 1.0');
SELECT gpu_hash_create('n', 'SELECT');
SELECT gpu_hash_create('n', 'DELETE FROM src');
SELECT gpu_hash_create('n', 'SELECT k, v FROM (VALUES (1, 1), (2, NULL)) t(k, v)');
SELECT count(*) FROM src;
-- static tables take no inserts or deletes
SELECT gpu_hash_insert('kv', ARRAY[5]);
SELECT gpu_hash_delete('rn', ARRAY[1]);
-- bad keys and values for inserts
SELECT gpu_hash_insert('num', ARRAY[1, NULL]);
SELECT gpu_hash_insert('num', ARRAY[4294967295]::int8[]);
SELECT gpu_hash_insert('num', ARRAY[1, 2], ARRAY[1]::int8[]);
SELECT gpu_hash_insert('num', ARRAY[1, 2], ARRAY[1, NULL]::int8[]);
SELECT gpu_hash_insert('num', ARRAY[[1], [2]]);
SELECT gpu_hash_insert('num', ARRAY[1, 2], ARRAY[[1], [2]]::int8[]);
SELECT gpu_hash_contains('num', ARRAY[[1, 2], [3, 4]]);
SELECT * FROM gpu_hash_lookup('num', ARRAY[[1, 2], [3, 4]]);
SELECT gpu_hash_delete('num', ARRAY[[1, 2], [3, 4]]);
-- failed inserts changed nothing
SELECT * FROM gpu_hash_lookup('num', ARRAY[1, 2, 10, 30, 40, 50, 60]) ORDER BY key, value;
-- deletes of keys that cannot be there remove nothing
SELECT gpu_hash_delete('num', ARRAY[4294967295, NULL]::int8[]);

-- A create that fails leaves nothing behind; the name is free afterwards.
SELECT gpu_hash_create('failing', 'SELECT g / (g - 3000) FROM generate_series(1, 5000) g');
SELECT count(*) FROM gpu_hash_tables() WHERE name = 'failing';
SELECT gpu_hash_create('failing', 'SELECT 1');
SELECT gpu_hash_drop('failing');

-- Named tables are not transactional: they outlive a rollback.
BEGIN;
SELECT gpu_hash_create('in_xact', 'SELECT 1');
ROLLBACK;
SELECT name FROM gpu_hash_tables() WHERE name = 'in_xact';
SELECT gpu_hash_drop('in_xact');
-- a query that creates the table being created
SELECT gpu_hash_create('self', $$SELECT gpu_hash_create('self', 'SELECT 1')$$);
SELECT name, rows FROM gpu_hash_tables() WHERE name = 'self';

-- Tables are snapshots of their query.
SELECT gpu_hash_create('snap', 'SELECT k FROM src');
INSERT INTO src VALUES (12345, 0);
SELECT gpu_hash_contains('snap', ARRAY[12345, 1]);

SELECT gpu_hash_drop(name) FROM gpu_hash_tables() ORDER BY name;
SELECT count(*) FROM gpu_hash_tables();
