--
-- gpu_hash_join against PostgreSQL's own joins on random data with NULLs,
-- skewed duplicates and keys of every width, compared as multisets.
--
SELECT setseed(0.4242);
-- build keys are skewed towards -1000, so some keys repeat 100 times
CREATE TABLE rb AS
    SELECT CASE WHEN random() < 0.05 THEN NULL
                ELSE floor(power(random(), 2) * 3000)::int - 1000 END AS k,
           (random() * 1000)::int AS x,
           CASE WHEN random() < 0.1 THEN NULL ELSE md5(random()::text) END AS s
    FROM generate_series(1, 6000);
CREATE TABLE rp AS
    SELECT CASE WHEN random() < 0.05 THEN NULL
                ELSE floor(random() * 4000)::int - 1500 END AS k,
           g AS id,
           CASE WHEN random() < 0.1 THEN NULL ELSE round(random()::numeric, 4) END AS y
    FROM generate_series(1, 20000) g;

-- enough matches to mean something
SELECT count(*) > 20000 AS many_pairs, count(DISTINCT k) > 1000 AS many_keys
FROM rb JOIN rp USING (k);

-- b and p are SQL expressions of the key column k, t their types
CREATE FUNCTION diff_join(b text, bt text, p text, pt text, jt text, meth text,
                          OUT same_count bool, OUT differ bigint)
LANGUAGE plpgsql AS $$
DECLARE
    g text;
    n text;
    gn bigint;
    nn bigint;
BEGIN
    IF jt = 'inner' THEN
        g := format('SELECT * FROM gpu_hash_join(%L, %L, %L, %L) AS j(bk %s, x int, s text, pk %s, id int, y numeric)',
                    format('SELECT %s, x, s FROM rb', b), format('SELECT %s, id, y FROM rp', p),
                    jt, meth, bt, pt);
        n := format('SELECT b.bk, b.x, b.s, p.pk, p.id, p.y
                     FROM (SELECT %s AS bk, x, s FROM rb) b JOIN (SELECT %s AS pk, id, y FROM rp) p ON b.bk = p.pk',
                    b, p);
    ELSE
        g := format('SELECT * FROM gpu_hash_join(%L, %L, %L, %L) AS j(pk %s, id int, y numeric)',
                    format('SELECT %s FROM rb', b), format('SELECT %s, id, y FROM rp', p),
                    jt, meth, pt);
        n := format('SELECT p.pk, p.id, p.y FROM (SELECT %s AS pk, id, y FROM rp) p
                     WHERE %s EXISTS (SELECT FROM rb WHERE %s = p.pk)',
                    p, CASE WHEN jt = 'anti' THEN 'NOT' ELSE '' END, b);
    END IF;
    EXECUTE format('SELECT (SELECT count(*) FROM (%1$s) g), (SELECT count(*) FROM (%2$s) n),
                           (SELECT count(*) FROM (((%1$s) EXCEPT ALL (%2$s)) UNION ALL ((%2$s) EXCEPT ALL (%1$s))) d)',
                   g, n)
        INTO gn, nn, differ;
    same_count := gn = nn;
END
$$;

CREATE TABLE variants (ord int, b text, bt text, p text, pt text);
INSERT INTO variants VALUES
    (1, 'k', 'int', 'k', 'int'),
    (2, 'k::int8', 'int8', 'k', 'int'),
    (3, 'k', 'int', 'k::int8', 'int8'),
    (4, 'k::int2', 'int2', 'k::int8', 'int8'),
    (5, 'k::int2', 'int2', 'k::int2', 'int2'),
    -- the same keys with high bits set
    (6, 'k::int8 * 4294967296 + 1', 'int8', 'k::int8 * 4294967296 + 1', 'int8'),
    -- no probe key fits a 4-byte table
    (7, 'k', 'int', 'k::int8 + 4294967296', 'int8');

-- many small batches
SET gpuhash.batch_rows = 1024;
SELECT v.ord, v.bt, v.pt, j.jt, m.meth, d.*
FROM variants v,
     unnest(ARRAY['inner', 'semi', 'anti']) WITH ORDINALITY AS j(jt, jo),
     unnest(ARRAY['auto', 'cuckoo', 'linear']) WITH ORDINALITY AS m(meth, mo),
     LATERAL diff_join(v.b, v.bt, v.p, v.pt, j.jt, m.meth) d
ORDER BY v.ord, j.jo, m.mo;

-- one batch
RESET gpuhash.batch_rows;
SELECT v.ord, j.jt, d.*
FROM variants v,
     unnest(ARRAY['inner', 'semi', 'anti']) WITH ORDINALITY AS j(jt, jo),
     LATERAL diff_join(v.b, v.bt, v.p, v.pt, j.jt, 'auto') d
WHERE v.ord IN (1, 6)
ORDER BY v.ord, j.jo;
