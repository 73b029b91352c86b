--
-- gpu_hash_join: join types, key widths, methods, NULLs, duplicates,
-- extreme keys, empty inputs, carried columns and errors.
--

-- Small batches, so that the probe side is streamed in many batches and
-- large results are handed out in many chunks.
SET gpuhash.batch_rows = 1024;

-- a small star join
CREATE TABLE dim (id int, region text);
CREATE TABLE fact (dim_id int, amount int);
INSERT INTO dim SELECT g, 'region ' || (g % 3) FROM generate_series(1, 100) g;
INSERT INTO fact SELECT g % 120, g FROM generate_series(1, 5000) g;
SELECT region, sum(amount)
FROM gpu_hash_join('SELECT id, region FROM dim', 'SELECT dim_id, amount FROM fact')
     AS j(id int, region text, dim_id int, amount int)
GROUP BY region ORDER BY region;
SELECT region, sum(amount) FROM dim JOIN fact ON fact.dim_id = dim.id
GROUP BY region ORDER BY region;

-- every join type with a small listing
CREATE TABLE l (k int, a text);
CREATE TABLE r (k int, b text);
INSERT INTO l VALUES (1, 'l1'), (2, 'l2a'), (2, 'l2b'), (3, 'l3'), (NULL, 'lnull');
INSERT INTO r VALUES (2, 'r2a'), (2, 'r2b'), (3, 'r3'), (4, 'r4'), (NULL, 'rnull');
SELECT * FROM gpu_hash_join('SELECT k, a FROM l', 'SELECT k, b FROM r')
    AS j(lk int, a text, rk int, b text) ORDER BY a, b;
SELECT * FROM gpu_hash_join('SELECT k, a FROM l', 'SELECT k, b FROM r', 'semi')
    AS j(k int, b text) ORDER BY b;
SELECT * FROM gpu_hash_join('SELECT k, a FROM l', 'SELECT k, b FROM r', 'anti')
    AS j(k int, b text) ORDER BY b;
-- named arguments, any case
SELECT * FROM gpu_hash_join(probe_query => 'SELECT k, b FROM r', build_query => 'SELECT k FROM l',
                            join_type => 'ANTI', method => 'Linear')
    AS j(k int, b text) ORDER BY b;

--
-- Keys of every width against every width, with duplicates, NULLs and the
-- extreme values of each type, compared with PostgreSQL's own joins.
-- Truncating a bigint key to 32 bits would make 4294967295 match -1 and
-- 2147483648 match -2147483648; both are in the data.
--
CREATE TABLE keyset (k int8, bmult int, pmult int);
INSERT INTO keyset VALUES
    (NULL, 2, 3), (0, 1, 2), (-1, 2, 1), (1, 1, 1), (2, 0, 1), (3, 1, 0),
    (42, 3, 2), (7, 1, 0), (8, 0, 2),
    (-32768, 1, 1), (32767, 2, 2), (32768, 1, 1), (-32769, 1, 1), (65536, 0, 1),
    (-2147483648, 2, 1), (2147483647, 1, 2), (2147483648, 1, 1), (-2147483649, 1, 1),
    (4294967295, 1, 1), (4294967296, 1, 1),
    (-9223372036854775808, 1, 1), (9223372036854775807, 1, 2);

CREATE FUNCTION fits(k int8, t text) RETURNS bool LANGUAGE sql IMMUTABLE AS $$
    SELECT k IS NULL
        OR (t = 'smallint' AND k BETWEEN -32768 AND 32767)
        OR (t = 'integer' AND k BETWEEN -2147483648 AND 2147483647)
        OR t = 'bigint'
$$;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['smallint', 'integer', 'bigint'] LOOP
        EXECUTE format($q$
            CREATE TABLE build_%1$s AS
            SELECT k::%1$s AS k, 'b' || coalesce(k::text, 'null') || '#' || i AS tag,
                   CASE WHEN i = 2 THEN NULL ELSE round(k / 7.0, 3) END AS num
            FROM keyset, generate_series(1, bmult) i WHERE fits(k, %1$L)$q$, t);
        EXECUTE format($q$
            CREATE TABLE probe_%1$s AS
            SELECT k::%1$s AS k, 'p' || coalesce(k::text, 'null') || '#' || i AS tag,
                   CASE WHEN i = 1 THEN round(k / 3.0, 2) END AS num
            FROM keyset, generate_series(1, pmult) i WHERE fits(k, %1$L)$q$, t);
    END LOOP;
END
$$;

-- gpu_hash_join against the native join: rows of each and rows that differ
CREATE FUNCTION check_join(bt text, pt text, jt text, meth text,
                           OUT gpu bigint, OUT native bigint, OUT differ bigint)
LANGUAGE plpgsql AS $$
DECLARE
    g text;
    n text;
BEGIN
    IF jt = 'inner' THEN
        g := format('SELECT * FROM gpu_hash_join(%L, %L, %L, %L) AS j(bk %s, btag text, bnum numeric, pk %s, ptag text, pnum numeric)',
                    format('SELECT k, tag, num FROM build_%s', bt),
                    format('SELECT k, tag, num FROM probe_%s', pt), jt, meth, bt, pt);
        n := format('SELECT b.k, b.tag, b.num, p.k, p.tag, p.num FROM build_%s b JOIN probe_%s p ON b.k = p.k',
                    bt, pt);
    ELSE
        g := format('SELECT * FROM gpu_hash_join(%L, %L, %L, %L) AS j(pk %s, ptag text, pnum numeric)',
                    format('SELECT k FROM build_%s', bt),
                    format('SELECT k, tag, num FROM probe_%s', pt), jt, meth, pt);
        n := format('SELECT p.k, p.tag, p.num FROM probe_%s p WHERE %s EXISTS (SELECT FROM build_%s b WHERE b.k = p.k)',
                    pt, CASE WHEN jt = 'anti' THEN 'NOT' ELSE '' END, bt);
    END IF;
    EXECUTE format('SELECT (SELECT count(*) FROM (%1$s) g), (SELECT count(*) FROM (%2$s) n),
                           (SELECT count(*) FROM (((%1$s) EXCEPT ALL (%2$s)) UNION ALL ((%2$s) EXCEPT ALL (%1$s))) d)',
                   g, n)
        INTO gpu, native, differ;
END
$$;

SELECT bt, pt, jt, c.*
FROM unnest(ARRAY['smallint', 'integer', 'bigint']) WITH ORDINALITY AS b(bt, bo),
     unnest(ARRAY['smallint', 'integer', 'bigint']) WITH ORDINALITY AS p(pt, po),
     unnest(ARRAY['inner', 'semi', 'anti']) WITH ORDINALITY AS j(jt, jo),
     LATERAL check_join(bt, pt, jt, 'auto') c
ORDER BY bo, po, jo;

-- the other methods give the same answers
SELECT meth, count(*) AS combinations,
       count(*) FILTER (WHERE c.gpu = c.native AND c.differ = 0) AS matching
FROM unnest(ARRAY['smallint', 'integer', 'bigint']) AS b(bt),
     unnest(ARRAY['smallint', 'integer', 'bigint']) AS p(pt),
     unnest(ARRAY['inner', 'semi', 'anti']) AS j(jt),
     unnest(ARRAY['cuckoo', 'linear']) AS m(meth),
     LATERAL check_join(bt, pt, jt, meth) c
GROUP BY meth ORDER BY meth;

-- the extreme keys themselves, inner join across widths
SELECT bk, pk, btag, ptag
FROM gpu_hash_join('SELECT k, tag FROM build_bigint', 'SELECT k, tag FROM probe_integer')
    AS j(bk bigint, btag text, pk integer, ptag text)
WHERE bk NOT BETWEEN -100 AND 100
ORDER BY bk, btag, ptag;
SELECT pk, ptag
FROM gpu_hash_join('SELECT k FROM build_integer', 'SELECT k, tag FROM probe_bigint', 'anti')
    AS j(pk bigint, ptag text)
ORDER BY pk NULLS FIRST, ptag;

--
-- Duplicates: one key 10000 times on either side, so that one probe key
-- gives results over many chunks of gpuhash.batch_rows pairs.
--
CREATE TABLE dup_build AS
    SELECT CASE WHEN g <= 10000 THEN 5 ELSE g END AS k, g AS v FROM generate_series(1, 12000) g;
CREATE TABLE dup_probe AS
    SELECT CASE WHEN g <= 3 THEN 5 WHEN g <= 10003 THEN 11000 ELSE -g END AS k, g AS w
    FROM generate_series(1, 10500) g;
SELECT count(*), count(DISTINCT (v, w)), sum(v::int8 * w), min(k), max(k)
FROM gpu_hash_join('SELECT k, v FROM dup_build', 'SELECT k, w FROM dup_probe')
    AS j(k int, v int, pk int, w int);
SELECT count(*), count(DISTINCT (v, w)), sum(v::int8 * w), min(b.k), max(b.k)
FROM dup_build b JOIN dup_probe p ON b.k = p.k;
SELECT count(*), sum(w) FROM gpu_hash_join('SELECT k FROM dup_build', 'SELECT k, w FROM dup_probe', 'semi')
    AS j(k int, w int);
SELECT count(*), sum(w) FROM gpu_hash_join('SELECT k FROM dup_build', 'SELECT k, w FROM dup_probe', 'anti')
    AS j(k int, w int);
SELECT count(*), sum(w) FROM gpu_hash_join('SELECT k FROM dup_build', 'SELECT k, w FROM dup_probe', 'semi', 'linear')
    AS j(k int, w int);

-- all keys equal, all NULL, or nothing at all
SELECT count(*) FROM gpu_hash_join('SELECT 7 FROM generate_series(1, 300)',
                                   'SELECT 7 FROM generate_series(1, 300)') AS j(a int, b int);
SELECT count(*) FROM gpu_hash_join('SELECT NULL::int FROM generate_series(1, 300)',
                                   'SELECT NULL::int FROM generate_series(1, 300)') AS j(a int, b int);
SELECT count(*) FROM gpu_hash_join('SELECT NULL::int FROM generate_series(1, 300)',
                                   'SELECT NULL::int FROM generate_series(1, 300)', 'anti') AS j(b int);

--
-- Empty inputs on either side.
--
SELECT * FROM gpu_hash_join('SELECT k, a FROM l WHERE false', 'SELECT k, b FROM r')
    AS j(lk int, a text, rk int, b text);
SELECT * FROM gpu_hash_join('SELECT k, a FROM l', 'SELECT k, b FROM r WHERE false')
    AS j(lk int, a text, rk int, b text);
SELECT * FROM gpu_hash_join('SELECT k FROM l WHERE false', 'SELECT k, b FROM r', 'semi')
    AS j(k int, b text);
SELECT * FROM gpu_hash_join('SELECT k FROM l WHERE false', 'SELECT k, b FROM r', 'anti')
    AS j(k int, b text) ORDER BY b;
SELECT * FROM gpu_hash_join('SELECT k FROM l', 'SELECT k, b FROM r WHERE false', 'anti')
    AS j(k int, b text);

--
-- Carried columns of other types, NULLs and values stored out of line.
--
CREATE TABLE wide_b (k int8, t text, n numeric, d date, j jsonb, a int[], f float8, bo bool);
CREATE TABLE wide_p (k int2, t text, big text);
ALTER TABLE wide_p ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO wide_b VALUES
    (1, 'one', 1.5, '2024-01-01', '{"a": 1}', '{1,2}', 0.25, true),
    (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (2, 'two', 12345678901234567890.123, 'infinity', '[1, "x"]', '{}', 'NaN', false),
    (NULL, 'null key', 0, '2000-02-29', 'null', '{NULL}', -0.0, NULL);
INSERT INTO wide_p VALUES
    (1, 'p1', repeat('x', 10)),
    (2, 'p2', (SELECT string_agg(md5(g::text), '') FROM generate_series(1, 2000) g)),
    (3, 'p3', NULL),
    (NULL, 'pnull', repeat('y', 100000));
SELECT pg_column_size(big) > 50000 AS stored_out_of_line FROM wide_p WHERE k = 2;
SELECT k, t, n, d, j, a, f, bo, pk, pt, length(big), md5(big)
FROM gpu_hash_join('SELECT * FROM wide_b', 'SELECT * FROM wide_p')
    AS x(k int8, t text, n numeric, d date, j jsonb, a int[], f float8, bo bool,
         pk int2, pt text, big text)
ORDER BY k, t NULLS FIRST;
SELECT k, t, length(big), md5(big)
FROM gpu_hash_join('SELECT k FROM wide_b', 'SELECT * FROM wide_p', 'anti')
    AS x(k int2, t text, big text)
ORDER BY k NULLS FIRST;
SELECT k, t, length(big)
FROM gpu_hash_join('SELECT k FROM wide_b', 'SELECT * FROM wide_p', 'semi')
    AS x(k int2, t text, big text)
ORDER BY k;
-- a domain over an integer type is a key too
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
SELECT * FROM gpu_hash_join('SELECT k::posint FROM r WHERE k > 0', 'SELECT k::posint, a FROM l WHERE k > 0')
    AS j(rk posint, lk posint, a text) ORDER BY a, rk;

--
-- The queries run with the caller's rights, in the caller's snapshot.
--
CREATE ROLE regress_gpuhash_user;
CREATE TABLE secret (k int, owner text);
INSERT INTO secret VALUES (1, 'regress_gpuhash_user'), (2, 'someone else'), (3, 'regress_gpuhash_user');
ALTER TABLE secret ENABLE ROW LEVEL SECURITY;
CREATE POLICY mine ON secret USING (owner = current_user);
GRANT SELECT ON secret TO regress_gpuhash_user;
SET ROLE regress_gpuhash_user;
SELECT * FROM gpu_hash_join('SELECT k FROM secret', 'SELECT g FROM generate_series(1, 5) g', 'semi')
    AS j(k int) ORDER BY k;
SELECT * FROM gpu_hash_join('SELECT g FROM generate_series(1, 5) g', 'SELECT k, owner FROM secret')
    AS j(g int, k int, owner text) ORDER BY k;
-- no rights on l
SELECT * FROM gpu_hash_join('SELECT k FROM secret', 'SELECT k FROM l')
    AS j(sk int, lk int);
RESET ROLE;
DROP TABLE secret;
DROP ROLE regress_gpuhash_user;

BEGIN;
INSERT INTO r VALUES (1, 'r1 uncommitted');
SELECT * FROM gpu_hash_join('SELECT k FROM l', 'SELECT k, b FROM r', 'semi')
    AS j(k int, b text) ORDER BY b;
ROLLBACK;
SELECT * FROM gpu_hash_join('SELECT k FROM l', 'SELECT k, b FROM r', 'semi')
    AS j(k int, b text) ORDER BY b;

-- from PL/pgSQL, and twice in one statement
DO $$
DECLARE
    n bigint;
BEGIN
    SELECT count(*) INTO n
    FROM gpu_hash_join('SELECT k FROM l', 'SELECT k FROM r') AS j(a int, b int);
    RAISE NOTICE 'pairs: %', n;
END
$$;
SELECT (SELECT count(*) FROM gpu_hash_join('SELECT k FROM l', 'SELECT k FROM r') AS j(a int, b int)),
       (SELECT count(*) FROM gpu_hash_join('SELECT k FROM r', 'SELECT k FROM l') AS j(a int, b int));

--
-- Errors.
--
-- arguments
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1', 'outer') AS j(a int, b int);
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1', 'inner', 'chained') AS j(a int, b int);
SELECT * FROM gpu_hash_join(NULL, 'SELECT 1') AS j(a int, b int);
SELECT * FROM gpu_hash_join('SELECT 1', NULL) AS j(a int, b int);
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1', NULL) AS j(a int, b int);
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1', 'inner', NULL) AS j(a int, b int);
-- key columns
SELECT * FROM gpu_hash_join('SELECT ''a''::text', 'SELECT 1') AS j(a text, b int);
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1.5') AS j(a int, b numeric);
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT true', 'semi') AS j(b bool);
SELECT * FROM gpu_hash_join('SELECT FROM l', 'SELECT 1') AS j(b int);
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT FROM l', 'semi') AS j(b int);
-- queries that are not one SELECT
SELECT * FROM gpu_hash_join('SELECT 1; SELECT 2', 'SELECT 1') AS j(a int, b int);
SELECT * FROM gpu_hash_join('', 'SELECT 1') AS j(a int, b int);
SELECT * FROM gpu_hash_join('SELECT 1', 'INSERT INTO l VALUES (9) RETURNING k') AS j(a int, b int);
SELECT * FROM gpu_hash_join('CREATE TABLE never (k int)', 'SELECT 1') AS j(a int, b int);
SELECT * FROM gpu_hash_join('SHOW work_mem', 'SELECT 1') AS j(a text, b int);
SELECT * FROM gpu_hash_join('EXPLAIN SELECT 1', 'SELECT 1') AS j(a text, b int);
SELECT * FROM gpu_hash_join('WITH d AS (DELETE FROM l RETURNING k) SELECT k FROM d', 'SELECT 1')
    AS j(a int, b int);
SELECT * FROM gpu_hash_join('SELECT k FROM l FOR UPDATE', 'SELECT 1') AS j(a int, b int);
SELECT * FROM gpu_hash_join('SELEC 1', 'SELECT 1') AS j(a int, b int);
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT nosuchcolumn FROM l') AS j(a int, b int);
SELECT * FROM gpu_hash_join('SELECT $1', 'SELECT 1') AS j(a int, b int);
SELECT count(*) FROM l;
-- column definition lists
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1');
SELECT * FROM gpu_hash_join('SELECT k, a FROM l', 'SELECT k, b FROM r') AS j(lk int, a text, rk int);
SELECT * FROM gpu_hash_join('SELECT k, a FROM l', 'SELECT k, b FROM r', 'semi') AS j(lk int, a text, rk int, b text);
SELECT * FROM gpu_hash_join('SELECT k, a FROM l', 'SELECT k, b FROM r') AS j(lk int, a text, rk int8, b text);
SELECT * FROM gpu_hash_join('SELECT k, a FROM l', 'SELECT k, b FROM r') AS j(lk int, a varchar, rk int, b text);
-- errors while the probe side streams, after batches were already probed
SELECT count(*) FROM gpu_hash_join('SELECT g FROM generate_series(1, 5000) g',
                                   'SELECT g, 1 / (g - 4000) FROM generate_series(1, 5000) g')
    AS j(a int, b int, c int);
-- cancellation
SET statement_timeout = '200ms';
SELECT count(*) FROM gpu_hash_join('SELECT g FROM generate_series(1, 1000) g',
                                   'SELECT a FROM generate_series(1, 100000) a, generate_series(1, 100000) b',
                                   'anti')
    AS j(b int);
RESET statement_timeout;
-- and everything still works afterwards
SELECT * FROM gpu_hash_join('SELECT k, a FROM l', 'SELECT k, b FROM r', 'semi', 'cuckoo')
    AS j(k int, b text) ORDER BY b;
