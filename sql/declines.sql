--
-- Where PostgreSQL's own plan is faster, the planner keeps it with
-- gpuhash's default costs: tiny joins, joins
-- that an index answers, and joins under a LIMIT that needs few rows.  A
-- large anti join beside them still takes the GpuHash node, so that the test
-- can tell the two apart.
--
LOAD 'gpuhash';
SELECT set_config('gpuhash.device',
                  CASE WHEN gpuhash_backend() = 'gpu' THEN 'gpu' ELSE 'cpu' END, false) IS NOT NULL AS device_set;

CREATE TABLE dc_big AS SELECT g AS id, g % 500000 AS v FROM generate_series(1, 2000000) g;
ALTER TABLE dc_big ADD PRIMARY KEY (id);
CREATE TABLE dc_dim AS SELECT g AS id, g % 7 AS attr FROM generate_series(1, 400000) g;
ALTER TABLE dc_dim ADD PRIMARY KEY (id);
CREATE TABLE dc_tiny1 AS SELECT g AS id FROM generate_series(1, 10) g;
CREATE TABLE dc_tiny2 AS SELECT g AS id FROM generate_series(1, 20) g;
ANALYZE dc_big, dc_dim, dc_tiny1, dc_tiny2;

CREATE FUNCTION pg_temp.chosen(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text; gpu bool := false; top text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    top := coalesce(top, l);
    gpu := gpu OR l ~ 'GpuHash';
  END LOOP;
  RETURN CASE WHEN gpu THEN 'gpuhash' ELSE 'PostgreSQL: ' || top END;
END $$;

-- a tiny join
SELECT pg_temp.chosen('SELECT * FROM dc_tiny1 t JOIN dc_tiny2 u ON t.id = u.id');
-- a few keys looked up through an index
SELECT pg_temp.chosen('SELECT * FROM dc_tiny1 t JOIN dc_big b ON b.id = t.id');
SELECT pg_temp.chosen('SELECT b.v FROM dc_big b WHERE b.id IN (SELECT id FROM dc_tiny2)');
-- a LIMIT that needs only the first rows of a large join, which an index finds
SELECT pg_temp.chosen('SELECT * FROM dc_big b JOIN dc_dim d ON b.v = d.id LIMIT 1');
SELECT pg_temp.chosen('SELECT * FROM dc_big b WHERE EXISTS (SELECT FROM dc_dim d WHERE d.id = b.v) LIMIT 10');
-- a semi join whose hashed key has three values and whose other clause
-- (text, which the node does not hash) is left to each pair: every probe
-- row would walk a third of the build rows, where PostgreSQL's hash join
-- hashes both clauses
CREATE TABLE dc_skew AS SELECT g AS id, g % 3 AS k, 't' || (g % 40) AS t FROM generate_series(1, 300000) g;
CREATE TABLE dc_probe AS SELECT g AS id, g % 4 AS k, 't' || (g % 45) AS t FROM generate_series(1, 1000000) g;
ANALYZE dc_skew, dc_probe;
SELECT pg_temp.chosen('SELECT count(*) FROM dc_probe p WHERE EXISTS (SELECT FROM dc_skew s WHERE s.k = p.k AND s.t = p.t)');
-- the whole of a large anti join: the node
SELECT pg_temp.chosen('SELECT count(*) FROM dc_big b WHERE NOT EXISTS (SELECT FROM dc_dim d WHERE d.id = b.v)');

DROP TABLE dc_big, dc_dim, dc_tiny1, dc_tiny2, dc_skew, dc_probe;
