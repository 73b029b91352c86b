--
-- Hopscotch tables: created, probed, changed through growth and checked
-- against plain SQL tables kept in step, with int4 and int8 keys.
--
SET gpuhash.batch_rows = 1024;

CREATE TABLE hop_src (k int8, v int8);
-- duplicates, NULL keys, and the edge values of both widths (the most
-- negative value of a width is the empty-slot marker of other methods)
INSERT INTO hop_src VALUES
    (1, 10), (2, 20), (2, 21), (2, 22), (NULL, 99), (NULL, 98),
    (0, 0), (-1, -1), (-9223372036854775808, 5), (9223372036854775807, 6),
    (-2147483648, 7), (2147483647, 8), (4294967295, 9), (-4294967296, 11);

-- mirrors: what each hash table should hold
CREATE TABLE hop_m8 AS SELECT k, v FROM hop_src WHERE k IS NOT NULL;
CREATE TABLE hop_m4 AS SELECT k::int4 AS k, v FROM hop_src
    WHERE k BETWEEN -2147483648 AND 2147483647;

SELECT gpu_hash_create('h8', 'SELECT k, v FROM hop_src', 'hopscotch');
SELECT gpu_hash_create('h4', $$SELECT k::int4, v FROM hop_src
                               WHERE k IS NULL OR k BETWEEN -2147483648 AND 2147483647$$, 'hopscotch');
SELECT name, method, key_type, rows, null_keys, distinct_keys
FROM gpu_hash_tables() ORDER BY name;

-- Every probe way at once: lookups as multisets, contains, and the stats.
CREATE FUNCTION hop_check(tab text, mirror regclass, extra int8[] DEFAULT '{}',
                          OUT stored bigint, OUT native bigint, OUT differ bigint,
                          OUT contains_wrong bigint, OUT stats_ok bool)
LANGUAGE plpgsql AS $$
DECLARE
    probe int8[];
BEGIN
    EXECUTE format($q$SELECT array_agg(k) FROM (SELECT DISTINCT k::int8 FROM %s
                      UNION ALL SELECT unnest($1)) s$q$, mirror)
        INTO probe USING extra;
    probe := coalesce(probe, '{}');
    SELECT count(*) INTO stored FROM gpu_hash_lookup(tab, probe);
    EXECUTE format('SELECT count(*) FROM %s', mirror) INTO native;
    EXECUTE format($q$SELECT count(*)
        FROM ((SELECT key, value FROM gpu_hash_lookup($1, $2) EXCEPT ALL SELECT k, v FROM %1$s)
              UNION ALL
              (SELECT k, v FROM %1$s EXCEPT ALL SELECT key, value FROM gpu_hash_lookup($1, $2))) d$q$,
        mirror) INTO differ USING tab, probe;
    EXECUTE format($q$SELECT count(*) FROM unnest($2, gpu_hash_contains($1, $2)) AS u(k, hit)
        WHERE hit IS DISTINCT FROM EXISTS (SELECT FROM %s m WHERE m.k = u.k)$q$, mirror)
        INTO contains_wrong USING tab, probe;
    EXECUTE format($q$SELECT t.rows = $2 AND t.distinct_keys = (SELECT count(DISTINCT k) FROM %s)
        FROM gpu_hash_tables() t WHERE t.name = $1$q$, mirror) INTO stats_ok USING tab, native;
END
$$;

SELECT * FROM hop_check('h8', 'hop_m8', ARRAY[3, -2, 4294967296, -9223372036854775807]);
SELECT * FROM hop_check('h4', 'hop_m4', ARRAY[3, -2, -2147483647]);
-- the edge keys one by one
SELECT * FROM gpu_hash_lookup('h8', ARRAY[-9223372036854775808, 9223372036854775807, 0, -1,
                                          -2147483648, 2147483647, 2, NULL]::int8[])
ORDER BY key, value;
SELECT gpu_hash_contains('h4', ARRAY[-2147483648, 2147483647, 0, -1, 3, NULL]);
-- int8 probes of an int4 table: keys that do not fit are simply not there
SELECT gpu_hash_contains('h4', ARRAY[4294967295, -1, -9223372036854775808]::int8[]);

-- Deletes (with NULLs, absent keys and repeats), then the same keys again.
SELECT gpu_hash_delete('h8', ARRAY[2, -9223372036854775808, 0, NULL, 12345, 2]::int8[]);
DELETE FROM hop_m8 WHERE k IN (2, -9223372036854775808, 0);
SELECT gpu_hash_delete('h4', ARRAY[-2147483648, 2, 2147483647]);
DELETE FROM hop_m4 WHERE k IN (-2147483648, 2, 2147483647);
SELECT * FROM hop_check('h8', 'hop_m8', ARRAY[2, -9223372036854775808, 0]);
SELECT * FROM hop_check('h4', 'hop_m4', ARRAY[-2147483648, 2, 2147483647]);
SELECT gpu_hash_delete('h8', ARRAY[2]::int8[]);
SELECT gpu_hash_insert('h8', ARRAY[2, 2, -9223372036854775808, 0]::int8[], ARRAY[200, 201, 202, 203]::int8[]);
INSERT INTO hop_m8 VALUES (2, 200), (2, 201), (-9223372036854775808, 202), (0, 203);
SELECT gpu_hash_insert('h4', ARRAY[-2147483648, 2147483647], ARRAY[-5, -6]::int8[]);
INSERT INTO hop_m4 VALUES (-2147483648, -5), (2147483647, -6);
SELECT * FROM hop_check('h8', 'hop_m8');
SELECT * FROM hop_check('h4', 'hop_m4');
-- values left out are row numbers, continuing after the creating query's
SELECT gpu_hash_insert('h4', ARRAY[77, 77]);
SELECT * FROM gpu_hash_lookup('h4', ARRAY[77]) ORDER BY value;
SELECT gpu_hash_delete('h4', ARRAY[77]);

-- Growth: from empty, 200000 rows in batches (many duplicates, several
-- rehashes), deletes of most keys, reinserts into the holes.
CREATE TABLE hop_big (k int8, v int8);
SELECT gpu_hash_create('hb', 'SELECT k, v FROM hop_big', 'hopscotch');
DO $$
DECLARE
    ks int8[];
    vs int8[];
BEGIN
    FOR i IN 1..20 LOOP
        SELECT array_agg(k ORDER BY g), array_agg(v ORDER BY g) INTO ks, vs
        FROM (SELECT g, ((g::int8 * 7919 + i * 104729) % 150001) - 75000 AS k, i * 100000 + g AS v
              FROM generate_series(1, 10000) g) s;
        IF gpu_hash_insert('hb', ks, vs) <> 10000 THEN
            RAISE EXCEPTION 'short insert';
        END IF;
        INSERT INTO hop_big SELECT * FROM unnest(ks, vs);
    END LOOP;
END
$$;
SELECT * FROM hop_check('hb', 'hop_big', ARRAY[200001, -200001]);
SELECT capacity >= distinct_keys AS fits, load_factor <= 0.95 AS load_ok
FROM gpu_hash_tables() WHERE name = 'hb';
SELECT gpu_hash_delete('hb', ARRAY(SELECT DISTINCT k FROM hop_big WHERE k % 3 <> 0))
    = (SELECT count(*) FROM hop_big WHERE k % 3 <> 0) AS removed_all;
DELETE FROM hop_big WHERE k % 3 <> 0;
SELECT * FROM hop_check('hb', 'hop_big', ARRAY[1, 2, 4]);
DO $$
DECLARE
    ks int8[];
    vs int8[];
BEGIN
    SELECT array_agg(k ORDER BY g), array_agg(v ORDER BY g) INTO ks, vs
    FROM (SELECT g, (g::int8 * 31) % 90001 AS k, -g AS v FROM generate_series(1, 50000) g) s;
    PERFORM gpu_hash_insert('hb', ks, vs);
    INSERT INTO hop_big SELECT * FROM unnest(ks, vs);
END
$$;
SELECT * FROM hop_check('hb', 'hop_big');
SELECT gpu_hash_delete('hb', ARRAY(SELECT DISTINCT k FROM hop_big)) = (SELECT count(*) FROM hop_big)
    AS removed_all;
TRUNCATE hop_big;
SELECT * FROM hop_check('hb', 'hop_big', ARRAY[0, 1]);

-- gpu_hash_join can build a hopscotch table too
SELECT count(*), sum(v) FROM gpu_hash_join('SELECT k, v FROM hop_src', 'SELECT k FROM hop_m8', 'inner',
                                           'hopscotch') AS j(k int8, v int8, pk int8);
SELECT count(*), sum(s.v) FROM hop_src s JOIN hop_m8 m ON s.k = m.k;
SELECT count(*) FROM gpu_hash_join('SELECT k FROM hop_src', 'SELECT k FROM hop_m8', 'anti', 'hopscotch')
    AS j(k int8);
SELECT count(*) FROM hop_m8 m WHERE NOT EXISTS (SELECT FROM hop_src s WHERE s.k = m.k);

SELECT gpu_hash_drop('h8');
SELECT gpu_hash_drop('h4');
SELECT gpu_hash_drop('hb');
SELECT count(*) FROM gpu_hash_tables();
DROP FUNCTION hop_check(text, regclass, int8[]);
DROP TABLE hop_src, hop_m8, hop_m4, hop_big;
