--
-- Semi and anti joins with other join clauses over keys of many rows: the
-- node tests each key's first 16 pairs, then 256 of the keys that had 16 and
-- whose rows none of them satisfied, and so on.  Rows that only a
-- late pair satisfies, rows that no pair does, keys of fewer and of more
-- than 16 rows, NULL keys, serially and in parallel, grouped and not; each
-- query compared, as a multiset, with PostgreSQL's own plan.
--
LOAD 'gpuhash';
SELECT set_config('gpuhash.device',
                  CASE WHEN gpuhash_backend() = 'gpu' THEN 'gpu' ELSE 'cpu' END, false) IS NOT NULL AS device_set;
SET gpuhash.join_startup_cost = 0;
SET gpuhash.join_build_row_cost = 0;
SET gpuhash.join_probe_row_cost = 0;
SET gpuhash.batch_rows = 4096;
-- the joins here build their inner side (right semi joins: sql/right_semi)
SET gpuhash.build_outer = off;

\i sql/compare.psql

-- key k (0 .. 30) has 3 * k rows, their ids rising in build order
SELECT setseed(0.3030);
CREATE TABLE sp_b (k int, id int, v int, k8 bigint);
INSERT INTO sp_b
SELECT k, row_number() OVER (), (random() * 1000)::int, k::bigint * 4294967296
FROM generate_series(0, 30) k, generate_series(1, 3 * k) r;
INSERT INTO sp_b VALUES (NULL, 0, 5, NULL), (NULL, -1, 999, 0);
-- and key 40 has 70 000 rows, more than the last capped round takes (65 536)
INSERT INTO sp_b SELECT 40, 1395 + r, (random() * 1000)::int, 40::bigint * 4294967296
FROM generate_series(1, 70000) r;
CREATE TABLE sp_p AS
SELECT g AS id,
       CASE WHEN g % 17 = 0 THEN NULL ELSE g % 34 END AS k,
       (random() * 1200)::int AS t,
       (g % 34)::bigint * 4294967296 AS k8
FROM generate_series(1, 5000) g;
-- its probe rows: b.id > p.t * 60 first holds after 65 536 of its pairs for
-- t = 1120 and 1160, and never for t = 1200
INSERT INTO sp_p SELECT 5000 + i, 40, 40 * i, 40::bigint * 4294967296 FROM generate_series(1, 30) i;
ANALYZE sp_b, sp_p;
-- the largest id of each key, so that a threshold near it passes only its last pairs
SELECT count(*) FILTER (WHERE n > 16) AS keys_over_16, count(*) FILTER (WHERE n BETWEEN 1 AND 16) AS keys_up_to_16
FROM (SELECT k, count(*) AS n FROM sp_b WHERE k IS NOT NULL GROUP BY k) s;

CREATE TABLE corpus (ord int, q text);
INSERT INTO corpus VALUES
  -- a random clause: most rows decided by their first pairs
  (1, 'SELECT p.id FROM sp_p p WHERE EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.v > p.t)'),
  (2, 'SELECT p.id FROM sp_p p WHERE NOT EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.v > p.t)'),
  -- only the last rows of a key pass: decided after the first 16 pairs
  (3, 'SELECT p.id, p.k FROM sp_p p WHERE EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.id * 3 > p.t * 4)'),
  (4, 'SELECT p.id FROM sp_p p WHERE NOT EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.id * 3 > p.t * 4)'),
  -- no pair passes
  (5, 'SELECT p.id FROM sp_p p WHERE NOT EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.v < 0)'),
  -- a mixed key (bigint) with a clause on the pairs
  (6, 'SELECT p.id FROM sp_p p WHERE EXISTS (SELECT FROM sp_b b WHERE b.k8 = p.k8 AND b.k = p.k AND b.id > p.t / 2)'),
  -- folded
  (7, 'SELECT count(*), sum(p.t), min(p.id) FROM sp_p p WHERE EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.id * 3 > p.t * 4)'),
  (8, 'SELECT p.k, count(*) FROM sp_p p WHERE NOT EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.id * 3 > p.t * 4) GROUP BY p.k'),
  -- rows that each round decides, the last (all pairs) included
  (9, 'SELECT p.id, p.t FROM sp_p p WHERE EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.id > p.t * 60)'),
  (10, 'SELECT p.id, p.t FROM sp_p p WHERE NOT EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.id > p.t * 60)');

SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;

-- the keys probed again for more pairs, and the rows that only those decided
CREATE FUNCTION pg_temp.probed_again(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE l text; n bigint := 0;
BEGIN
  PERFORM set_config('enable_hashjoin', 'off', true);
  PERFORM set_config('enable_mergejoin', 'off', true);
  PERFORM set_config('enable_nestloop', 'off', true);
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'Keys Probed Again: ' THEN n := n + substring(l from ': (\d+)')::bigint; END IF;
  END LOOP;
  RETURN n;
END $$;
SELECT pg_temp.probed_again('SELECT p.id FROM sp_p p WHERE EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.id * 3 > p.t * 4)') > 0
       AS probed_again;
SET gpuhash.enable_join = off;
CREATE INDEX sp_b_k_id ON sp_b (k, id);
SELECT count(*) AS decided_after_16 FROM sp_p p
WHERE EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.id * 3 > p.t * 4)
  AND NOT EXISTS (SELECT FROM (SELECT id FROM sp_b b WHERE b.k = p.k ORDER BY id LIMIT 16) f WHERE f.id * 3 > p.t * 4);
SELECT p.t AS decided_by_all_pairs FROM sp_p p
WHERE p.k = 40 AND p.t >= 1100 AND EXISTS (SELECT FROM sp_b b WHERE b.k = p.k AND b.id > p.t * 60) ORDER BY 1;
DROP INDEX sp_b_k_id;
RESET gpuhash.enable_join;

-- parallel
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT ord, pg_temp.same(q) FROM corpus ORDER BY ord;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP TABLE sp_b, sp_p, corpus;
