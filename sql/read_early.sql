--
-- Reading during the build (gpuhash.read_during_build): the workers of a
-- parallel GpuHashJoin whose outer side is a table read directly fill their
-- first batch while the leader builds and shares the table (through the key
-- filter, if the join has one), then probe that batch once the table is
-- there. Every query is compared, as a multiset, with PostgreSQL's own plan:
-- inner, semi, anti and left joins, as rows and folded, an empty build side,
-- an outer side that ends inside the early batch, NULL, duplicate and
-- extreme keys. EXPLAIN ANALYZE says a worker read during the build, so
-- that the test cannot pass without it.
--
\i sql/parallel_node.psql
-- on by default
SHOW gpuhash.read_during_build;
\i sql/compare.psql

SELECT setseed(0.5772);
-- a text column first, so that the reader walks each tuple
CREATE TABLE re_fact (pad text, k int, k8 bigint, v int);
INSERT INTO re_fact
SELECT repeat('r', g % 11),
       CASE WHEN random() < 0.02 THEN NULL ELSE (random() * 60000)::int END,
       CASE WHEN g % 997 = 0 THEN 9223372036854775807 WHEN g % 991 = 0 THEN -9223372036854775808
            ELSE (random() * 60000)::bigint END,
       g % 1000
FROM generate_series(1, 300000) g;
-- the build side: duplicate keys, a NULL, the extremes
CREATE TABLE re_dim (id int, id8 bigint, g int);
INSERT INTO re_dim SELECT g % 50000, (g % 50000)::bigint, g % 7 FROM generate_series(1, 120000) g;
INSERT INTO re_dim VALUES (NULL, NULL, 1), (2147483647, 9223372036854775807, 2),
                          (-2147483648, -9223372036854775808, 3);
-- a few keys: the key filter drops most outer rows
CREATE TABLE re_few (id int, g int);
INSERT INTO re_few SELECT g * 37, g FROM generate_series(1, 40) g;
CREATE TABLE re_empty (id int, g int);
-- an outer side smaller than a batch, so that it ends while the table is built
CREATE TABLE re_small (k int, v int);
INSERT INTO re_small SELECT g % 3000, g FROM generate_series(1, 5000) g;
-- a build side read by one participant (the leader, which starts first) through a filter that
-- takes a while, so that the workers start while it is still being read and wait for the build
CREATE TABLE re_slow (id int, g int) WITH (parallel_workers = 0);
INSERT INTO re_slow SELECT g % 50000, g % 7 FROM generate_series(1, 200000) g;
ANALYZE re_fact, re_dim, re_few, re_empty, re_small, re_slow;

-- inner joins: rows, folded, grouped
SELECT pg_temp.same($$SELECT f.k, f.v, d.g FROM re_fact f JOIN re_dim d ON f.k = d.id$$);
SELECT pg_temp.same($$SELECT count(*), sum(f.v), sum(d.g) FROM re_fact f JOIN re_dim d ON f.k = d.id$$);
SELECT pg_temp.same($$SELECT d.g, count(*), sum(f.v) FROM re_fact f JOIN re_dim d ON f.k = d.id GROUP BY d.g$$);
SELECT pg_temp.same($$SELECT f.k8, d.g FROM re_fact f JOIN re_dim d ON f.k8 = d.id8$$);
-- with a compiled filter on the outer side, and through the key filter
SELECT pg_temp.same($$SELECT f.k, d.g FROM re_fact f JOIN re_dim d ON f.k = d.id WHERE f.v < 300$$);
SELECT pg_temp.same($$SELECT f.k, f.v, w.g FROM re_fact f JOIN re_few w ON f.k = w.id$$);
SELECT pg_temp.same($$SELECT w.g, count(*) FROM re_fact f JOIN re_few w ON f.k = w.id GROUP BY w.g$$);
-- semi and anti joins, as rows and folded
SELECT pg_temp.same($$SELECT f.k, f.v FROM re_fact f WHERE EXISTS (SELECT 1 FROM re_few w WHERE w.id = f.k)$$);
SELECT pg_temp.same($$SELECT count(*) FROM re_fact f WHERE EXISTS (SELECT 1 FROM re_dim d WHERE d.id = f.k)$$);
SELECT pg_temp.same($$SELECT f.k, f.v FROM re_fact f WHERE NOT EXISTS (SELECT 1 FROM re_dim d WHERE d.id = f.k)$$);
SELECT pg_temp.same($$SELECT count(*), sum(f.v) FROM re_fact f WHERE NOT EXISTS (SELECT 1 FROM re_few w WHERE w.id = f.k)$$);
-- left joins, as rows and folded
SELECT pg_temp.same($$SELECT f.k, f.v, w.g FROM re_fact f LEFT JOIN re_few w ON f.k = w.id$$);
SELECT pg_temp.same($$SELECT count(*), count(d.g), sum(d.g) FROM re_fact f LEFT JOIN re_dim d ON f.k = d.id$$);
-- an empty build side: inner and semi joins return nothing, anti and left joins every row
SELECT pg_temp.same($$SELECT f.k, e.g FROM re_fact f JOIN re_empty e ON f.k = e.id$$);
SELECT pg_temp.same($$SELECT count(*) FROM re_fact f WHERE NOT EXISTS (SELECT 1 FROM re_empty e WHERE e.id = f.k)$$);
SELECT pg_temp.same($$SELECT count(*), count(e.g) FROM re_fact f LEFT JOIN re_empty e ON f.k = e.id$$);
-- the outer side ends inside the early batch
SELECT pg_temp.same($$SELECT s.k, s.v, d.g FROM re_small s JOIN re_dim d ON s.k = d.id$$);
SELECT pg_temp.same($$SELECT count(*), sum(s.v) FROM re_small s WHERE NOT EXISTS (SELECT 1 FROM re_few w WHERE w.id = s.k)$$);

-- Did a worker read during the build?  Only a worker that starts while the
-- build side is still being read does, so the query reads the slow one.
\i sql/explain_shows.psql
SELECT pg_temp.explain_shows($$SELECT count(*), sum(f.v) FROM re_fact f JOIN re_slow s ON f.k = s.id
                             WHERE md5(s.g::text) <> ''$$,
                             '^\s*Worker \d+: .* rows during the build\)') AS read_early;
SELECT pg_temp.same($$SELECT s.g, count(*), sum(f.v) FROM re_fact f JOIN re_slow s ON f.k = s.id
                      WHERE md5(s.g::text) <> '' GROUP BY s.g$$);
-- off: no worker reads early
SET gpuhash.read_during_build = off;
SELECT pg_temp.explain_shows($$SELECT count(*), sum(f.v) FROM re_fact f JOIN re_slow s ON f.k = s.id
                             WHERE md5(s.g::text) <> ''$$,
                             '^\s*Worker \d+: .* rows during the build\)') AS read_early;
SELECT pg_temp.same($$SELECT d.g, count(*), sum(f.v) FROM re_fact f JOIN re_dim d ON f.k = d.id GROUP BY d.g$$);

DROP TABLE re_fact, re_dim, re_few, re_empty, re_small, re_slow;
