--
-- The shared block of a parallel build, filled on helper threads: in a
-- block of 8 MB or more, each participant's rows are copied by the builder
-- or by one of up to four threads, their by-reference values moved by where
-- that participant's arena lands (join_parallel.c's fill_block).  The build
-- side here has 300 K rows with text and numeric columns and is read by
-- every participant, so that the block holds several parts.  Every query is
-- compared, as a multiset, with PostgreSQL's own plan.
--
\i sql/parallel_node.psql
\i sql/compare.psql

SELECT setseed(0.1618);
CREATE TABLE sf_dim (id int, t text, n numeric, g int);
INSERT INTO sf_dim
SELECT g, CASE WHEN g % 13 = 0 THEN NULL ELSE repeat(chr(97 + g % 26), 1 + g % 40) || g END,
       CASE WHEN g % 17 = 0 THEN NULL ELSE g * 1.25 END, g % 5
FROM generate_series(1, 300000) g;
CREATE TABLE sf_fact (k int, v int);
INSERT INTO sf_fact SELECT (random() * 320000)::int, g FROM generate_series(1, 600000) g;
ANALYZE sf_dim, sf_fact;

-- Did a worker read part of the build side, so that the block has more
-- than one part?
\i sql/explain_shows.psql
SELECT pg_temp.explain_shows($$SELECT count(*), sum(length(d.t)) FROM sf_fact f JOIN sf_dim d ON f.k = d.id$$,
                             '^\s*Worker \d+: \w+, setup [0-9.]+ ms, input ') AS parts;

-- the build rows' text and numeric values, as rows, folded and grouped
SELECT pg_temp.same($$SELECT f.k, f.v, d.t, d.n FROM sf_fact f JOIN sf_dim d ON f.k = d.id$$);
SELECT pg_temp.same($$SELECT count(*), count(d.t), sum(length(d.t)), sum(d.n) FROM sf_fact f JOIN sf_dim d ON f.k = d.id$$);
SELECT pg_temp.same($$SELECT d.g, count(*), max(d.t), sum(d.n) FROM sf_fact f JOIN sf_dim d ON f.k = d.id GROUP BY d.g$$);
-- a left join keeps the outer rows without a match
SELECT pg_temp.same($$SELECT f.k, d.t FROM sf_fact f LEFT JOIN sf_dim d ON f.k = d.id$$);
