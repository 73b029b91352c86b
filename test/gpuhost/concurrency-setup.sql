-- Tables and expected answers for test/gpuhost/concurrency (run by psql with
-- -v dim_rows=N -v fact_rows=N).  The data is a fixed formula, so the
-- expected counts are computed once here, natively, and every pgbench
-- transaction checks its answer against them: a wrong answer under load is
-- an error, not just a slow transaction.
CREATE EXTENSION IF NOT EXISTS gpuhash;
DROP SCHEMA IF EXISTS gpuhash_conc CASCADE;
CREATE SCHEMA gpuhash_conc;
SET search_path = gpuhash_conc;

-- every tenth id missing, so that anti joins and misses return rows
CREATE TABLE dim AS
    SELECT id, id::int8 * 3 AS v
    FROM generate_series(1, :dim_rows) id WHERE id % 10 <> 0;
-- keys over 1.2 x the dimension's range, each hitting about fact/dim times, a NULL in 97
CREATE TABLE fact AS
    SELECT CASE WHEN g % 97 = 0 THEN NULL
                ELSE ((g::int8 * 7919) % (:dim_rows * 6 / 5))::int END AS k,
           g AS x
    FROM generate_series(1, :fact_rows) g;
-- probe keys for the named tables, and keys no table holds until inserted
CREATE TABLE probe AS
    SELECT ARRAY(SELECT ((g::int8 * 31) % (:dim_rows * 2))::int FROM generate_series(1, 100000) g) AS keys,
           ARRAY(SELECT -g FROM generate_series(1, 5000) g) AS ins;
ANALYZE dim, fact, probe;

CREATE TABLE expected (what text PRIMARY KEY, n bigint, s numeric);
INSERT INTO expected
SELECT 'inner', count(*), sum(f.x) FROM dim d JOIN fact f ON d.id = f.k;
INSERT INTO expected
SELECT 'semi', count(*), sum(f.x) FROM fact f WHERE EXISTS (SELECT FROM dim d WHERE d.id = f.k);
INSERT INTO expected
SELECT 'anti', count(*), sum(f.x) FROM fact f WHERE NOT EXISTS (SELECT FROM dim d WHERE d.id = f.k);
INSERT INTO expected
SELECT 'contains', count(*), NULL FROM probe p, unnest(p.keys) k WHERE EXISTS (SELECT FROM dim d WHERE d.id = k);
INSERT INTO expected
SELECT 'lookup', count(*), sum(d.v) FROM probe p, unnest(p.keys) k JOIN dim d ON d.id = k;
INSERT INTO expected SELECT 'insert', 5000, NULL;
INSERT INTO expected SELECT 'lookup after insert', 5000, NULL;
INSERT INTO expected SELECT 'delete', 5000, NULL;
INSERT INTO expected SELECT 'lookup after delete', 0, NULL;

-- got_n (and got_s unless NULL) must be what the native query gave
CREATE FUNCTION expect(what text, got_n bigint, got_s numeric) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    e gpuhash_conc.expected;
BEGIN
    SELECT * INTO e FROM gpuhash_conc.expected x WHERE x.what = expect.what;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no expected answer for "%"', what;
    END IF;
    IF got_n IS DISTINCT FROM e.n OR (got_s IS NOT NULL AND got_s IS DISTINCT FROM e.s) THEN
        RAISE EXCEPTION 'wrong answer for %: % rows (sum %), expected % (sum %)',
            what, got_n, got_s, e.n, e.s;
    END IF;
    RETURN got_n;
END
$$;

SELECT what, n, s FROM expected ORDER BY what;
