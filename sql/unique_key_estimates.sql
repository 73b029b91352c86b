--
-- gpuhash.unique_key_estimates: a join on every column of a multi-column
-- unique index is estimated as a join on a declared foreign key (each row
-- of the other side keeps one match), where PostgreSQL multiplies the
-- columns' selectivities.  TPC-H q09's lineitem-partsupp join is the case.
-- The estimates are compared with the true counts, never with fixed
-- numbers, and the answers with the setting off.
--
LOAD 'gpuhash';
SET max_parallel_workers_per_gather = 0;

-- uk_dim: 4000 (a, b) pairs, unique, each a with four of b's 400 values (as a
-- part with four of the suppliers); uk_fact: 40000 rows, each of its pairs among them
CREATE TABLE uk_dim AS
  SELECT a, 1 + (a * 7 + j * 101) % 400 AS b, (a * 7 + j) % 100 AS price
  FROM generate_series(1, 1000) a, generate_series(0, 3) j;
ALTER TABLE uk_dim ADD PRIMARY KEY (a, b);
CREATE TABLE uk_fact AS
  SELECT id, fa, fb, fb::int8 AS fb8
  FROM (SELECT g AS id, 1 + g % 1000 AS fa, 1 + ((1 + g % 1000) * 7 + (g / 1000) % 4 * 101) % 400 AS fb
        FROM generate_series(0, 39999) g) s;
-- a side whose pairs are mostly not in uk_dim: more values of wa than uk_dim has rows
CREATE TABLE uk_wide AS
  SELECT g AS id, 1 + g % 20000 AS wa, 1 + (g * 7) % 400 AS wb FROM generate_series(0, 39999) g;
CREATE TABLE uk_part AS SELECT a AS pa, a % 3 = 0 AS green FROM generate_series(1, 1000) a;
ANALYZE uk_dim, uk_fact, uk_wide, uk_part;

-- the planner's row estimate of a query's top node, against its true row count
CREATE FUNCTION pg_temp.est(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;
CREATE FUNCTION pg_temp.ratio(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE n float8;
BEGIN
  EXECUTE 'SELECT count(*) FROM (' || q || ') s' INTO n;
  RETURN pg_temp.est(q) / n;
END $$;

-- the join on the whole key: estimated near its 40000 rows with the setting on, far below with it off
SET gpuhash.unique_key_estimates = off;
SELECT pg_temp.ratio('SELECT * FROM uk_fact JOIN uk_dim ON a = fa AND b = fb') < 0.1 AS off_underestimates;
SET gpuhash.unique_key_estimates = on;
SELECT pg_temp.ratio('SELECT * FROM uk_fact JOIN uk_dim ON a = fa AND b = fb') BETWEEN 0.5 AND 2 AS on_near;
-- written the other way round, and with the key equated through a third table (q09's shape)
SELECT pg_temp.ratio('SELECT * FROM uk_dim, uk_fact WHERE fb = b AND fa = a') BETWEEN 0.5 AND 2 AS reversed_near;
SELECT pg_temp.ratio('SELECT * FROM uk_fact, uk_dim, uk_part
                      WHERE pa = fa AND pa = a AND fb = b AND green') BETWEEN 0.5 AND 2 AS three_way_near;
-- and where GEQO searches the joins (the hook hands the search on to it)
SET geqo_threshold = 2;
SELECT pg_temp.ratio('SELECT * FROM uk_fact, uk_dim, uk_part
                      WHERE pa = fa AND pa = a AND fb = b AND green') BETWEEN 0.5 AND 2 AS geqo_near;
RESET geqo_threshold;
-- the answers do not depend on it
SELECT count(*), sum(price) FROM uk_fact JOIN uk_dim ON a = fa AND b = fb;
SET gpuhash.unique_key_estimates = off;
SELECT count(*), sum(price) FROM uk_fact JOIN uk_dim ON a = fa AND b = fb;
SET gpuhash.unique_key_estimates = on;

-- where it does not apply, the estimate is PostgreSQL's
CREATE FUNCTION pg_temp.unchanged(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE e_on float8; e_off float8;
BEGIN
  e_on := pg_temp.est(q);
  SET LOCAL gpuhash.unique_key_estimates = off;
  e_off := pg_temp.est(q);
  RETURN e_on = e_off;
END $$;
-- one key column only
SELECT pg_temp.unchanged('SELECT * FROM uk_fact JOIN uk_dim ON a = fa') AS one_column;
-- the other side has more values than the key's table has rows: most of its pairs cannot match
SELECT pg_temp.unchanged('SELECT * FROM uk_wide JOIN uk_dim ON a = wa AND b = wb') AS not_contained;
-- a side whose pairs are all absent though each column looks contained: taken for a key's
-- other side (overestimated) until extended ndistinct statistics count its combinations
CREATE TABLE uk_stray AS
  SELECT g AS id, 1 + g % 1000 AS sa, 1 + (g / 1000 * 10 + g % 10) % 400 AS sb FROM generate_series(0, 39999) g;
DELETE FROM uk_stray s USING uk_dim d WHERE d.a = s.sa AND d.b = s.sb;
ANALYZE uk_stray;
SELECT count(*) FROM uk_stray JOIN uk_dim ON a = sa AND b = sb;
SELECT NOT pg_temp.unchanged('SELECT * FROM uk_stray JOIN uk_dim ON a = sa AND b = sb') AS stray_linked;
CREATE STATISTICS uk_stray_nd (ndistinct) ON sa, sb FROM uk_stray;
ANALYZE uk_stray;
SELECT pg_temp.unchanged('SELECT * FROM uk_stray JOIN uk_dim ON a = sa AND b = sb') AS stray_counted;
-- the same statistics on a side whose pairs are among the key's leave the link in place
CREATE STATISTICS uk_fact_nd (ndistinct) ON fa, fb FROM uk_fact;
ANALYZE uk_fact;
SELECT pg_temp.ratio('SELECT * FROM uk_fact JOIN uk_dim ON a = fa AND b = fb') BETWEEN 0.5 AND 2 AS counted_near;
DROP STATISTICS uk_fact_nd;
ANALYZE uk_fact;
-- one of the equalities is against a constant
SELECT pg_temp.unchanged('SELECT * FROM uk_fact JOIN uk_dim ON a = fa AND b = 2') AS constant;
-- with gpuhash's joins off
SET gpuhash.enable_join = off;
SELECT pg_temp.unchanged('SELECT * FROM uk_fact JOIN uk_dim ON a = fa AND b = fb') AS joins_off;
RESET gpuhash.enable_join;

-- an index that is not unique, a partial one and one over an expression prove nothing
CREATE TABLE uk_dim2 AS SELECT * FROM uk_dim;
CREATE INDEX ON uk_dim2 (a, b);
ANALYZE uk_dim2;
SELECT pg_temp.unchanged('SELECT * FROM uk_fact JOIN uk_dim2 ON a = fa AND b = fb') AS not_unique;
DROP INDEX uk_dim2_a_b_idx;
CREATE UNIQUE INDEX ON uk_dim2 (a, b) WHERE price > 10;
SELECT pg_temp.unchanged('SELECT * FROM uk_fact JOIN uk_dim2 ON a = fa AND b = fb') AS partial;
DROP INDEX uk_dim2_a_b_idx;
CREATE UNIQUE INDEX ON uk_dim2 (a, (b + 0));
SELECT pg_temp.unchanged('SELECT * FROM uk_fact JOIN uk_dim2 ON a = fa AND b + 0 = fb') AS expression;

-- a declared foreign key is PostgreSQL's own estimate, left as it is
CREATE TABLE uk_fact_fk AS SELECT * FROM uk_fact;
ALTER TABLE uk_fact_fk ADD FOREIGN KEY (fa, fb) REFERENCES uk_dim (a, b);
ANALYZE uk_fact_fk;
SELECT pg_temp.unchanged('SELECT * FROM uk_fact_fk JOIN uk_dim ON a = fa AND b = fb') AS declared_key;

-- a key column compared with a wider integer still matches through the integer family
SELECT pg_temp.ratio('SELECT * FROM uk_fact JOIN uk_dim ON a = fa AND b = fb8') BETWEEN 0.5 AND 2 AS cross_type;

-- a table joined to itself on its key: one match a row
SELECT pg_temp.ratio('SELECT * FROM uk_dim d1 JOIN uk_dim d2 ON d1.a = d2.a AND d1.b = d2.b') BETWEEN 0.5 AND 2 AS self_join;

-- a LEFT JOIN keeps PostgreSQL's estimate (its clauses are not in equivalence classes)
SELECT pg_temp.unchanged('SELECT * FROM uk_fact LEFT JOIN uk_dim ON a = fa AND b = fb') AS left_join;

DROP TABLE uk_dim, uk_fact, uk_wide, uk_stray, uk_part, uk_dim2, uk_fact_fk CASCADE;
