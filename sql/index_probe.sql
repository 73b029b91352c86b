--
-- IndexProbeJoin: a semi or anti join that walks a B-tree of its inner table
-- for each batch of outer keys, sorted, and fetches each key's heap rows
-- until one passes the inner table's filter.  Each query runs with the node
-- (its cost share at 0, so that the planner takes it wherever it may) and
-- with it off, and the answers are compared as multisets: NULL and
-- duplicate keys on both sides, keys whose items fill several leaf pages,
-- dead and updated inner rows, rows of this transaction, int2/int4/int8
-- keys, empty sides, rescans, LIMIT, serial and parallel.  Then the joins
-- it must leave to others.
--
LOAD 'gpuhash';
SET gpuhash.enable_join = off;
SET gpuhash.index_probe_cost_share = 0;

-- q with the node and without it, compared as multisets
CREATE FUNCTION pg_temp.probe_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE used boolean := false; par boolean := false; n bigint; n_on bigint;
        only_on bigint; only_off bigint; l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    used := used OR l ~ 'Custom Scan \(IndexProbeJoin\)';
    par := par OR l ~ 'Gather';
  END LOOP;
  EXECUTE 'CREATE TEMP TABLE r_on AS SELECT s::text AS r FROM (' || q || ') s';
  PERFORM set_config('gpuhash.enable_index_probe', 'off', true);
  EXECUTE 'CREATE TEMP TABLE r_off AS SELECT s::text AS r FROM (' || q || ') s';
  PERFORM set_config('gpuhash.enable_index_probe', 'on', true);
  SELECT count(*) INTO n FROM r_off;
  SELECT count(*) INTO n_on FROM r_on;
  SELECT count(*) INTO only_on FROM (SELECT * FROM r_on EXCEPT ALL SELECT * FROM r_off) x;
  SELECT count(*) INTO only_off FROM (SELECT * FROM r_off EXCEPT ALL SELECT * FROM r_on) x;
  DROP TABLE r_on; DROP TABLE r_off;
  RETURN CASE WHEN NOT used THEN 'IndexProbeJoin not used'
              WHEN only_on + only_off = 0 AND n = n_on
                THEN format('same %s rows%s', n, CASE WHEN par THEN ', parallel' ELSE '' END)
              ELSE format('DIFFERENT: %s rows only with the node, %s only without', only_on, only_off) END;
END $$;

-- the node's lines of a plan
CREATE FUNCTION pg_temp.probe_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l ~ '(IndexProbeJoin|Join Type|Index|Inner Filter|Direct Scan|Gather|Seq Scan|Aggregate)' THEN
      RETURN NEXT regexp_replace(l, '\s+$', '');
    END IF;
  END LOOP;
END $$;

-- outer: keys 0..2999 with repeats, NULLs, and keys no inner row has
CREATE TABLE po (id int, k int, k8 bigint, k2 smallint, g int);
INSERT INTO po SELECT i, CASE WHEN i % 97 = 0 THEN NULL ELSE (i * 7) % 3000 END,
                         CASE WHEN i % 89 = 0 THEN NULL ELSE ((i * 7) % 3000)::bigint * 1000000007 END,
                         CASE WHEN i % 83 = 0 THEN NULL ELSE ((i * 7) % 3000)::smallint END,
                         i % 5
  FROM generate_series(1, 6000) i;
INSERT INTO po VALUES (-1, -2147483648, -9223372036854775808, -32768, 1),
                      (-2, 2147483647, 9223372036854775807, 32767, 2);
-- inner: four rows a key for keys below 2000 (one in three late), key 7
-- 5000 times (only its last row late: its items fill several leaf pages),
-- NULL keys, the extreme keys, and a non-unique index (posting lists)
CREATE TABLE pi (k int, k8 bigint, k2 smallint, d1 date, d2 date, note text);
INSERT INTO pi SELECT i % 2000, (i % 2000)::bigint * 1000000007, (i % 2000)::smallint,
                      date '2020-01-01' + i % 11, date '2020-01-01' + i % 7, 'x' || i
  FROM generate_series(1, 8000) i;
INSERT INTO pi SELECT 7, 7::bigint * 1000000007, 7, date '2020-02-01', date '2020-01-01', 'many'
  FROM generate_series(1, 5000);
INSERT INTO pi VALUES (7, 7::bigint * 1000000007, 7, date '2019-01-01', date '2020-01-01', 'zlast');
INSERT INTO pi VALUES (NULL, NULL, NULL, date '2019-01-01', date '2020-01-01', 'null key'),
                      (-2147483648, -9223372036854775808, -32768, date '2019-01-01', date '2020-01-01', 'min'),
                      (2147483647, 9223372036854775807, 32767, date '2020-01-01', date '2020-01-01', 'max');
CREATE INDEX pi_k ON pi (k);
CREATE INDEX pi_k8 ON pi (k8, note);
CREATE INDEX pi_k2 ON pi (k2);
-- dead rows left in the indexes, and rows updated in place and not
DELETE FROM pi WHERE k BETWEEN 100 AND 199;
UPDATE pi SET note = note || '!' WHERE k BETWEEN 200 AND 299;
UPDATE pi SET k = k + 1000000 WHERE k BETWEEN 300 AND 309;
ANALYZE po;
ANALYZE pi;

SELECT * FROM pg_temp.probe_plan('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2)');
SELECT * FROM pg_temp.probe_plan('SELECT * FROM po WHERE NOT EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2)');

-- semi and anti, each key width
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2)');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE NOT EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2)');
SELECT pg_temp.probe_same('SELECT id, k8 FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k8 = po.k8 AND pi.d1 >= pi.d2)');
SELECT pg_temp.probe_same('SELECT id, k8 FROM po WHERE NOT EXISTS (SELECT 1 FROM pi WHERE pi.k8 = po.k8 AND pi.d1 >= pi.d2)');
SELECT pg_temp.probe_same('SELECT id, k2 FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k2 = po.k2 AND pi.d2 = date ''2020-01-03'')');
SELECT pg_temp.probe_same('SELECT id, k2 FROM po WHERE NOT EXISTS (SELECT 1 FROM pi WHERE pi.k2 = po.k2 AND pi.d2 = date ''2020-01-03'')');
-- IN is a semi join too; the outer key an expression
SELECT pg_temp.probe_same('SELECT id FROM po WHERE k % 1000 + 1 IN (SELECT k FROM pi WHERE d1 < d2)');
-- key 7: only the last of its 5001 rows passes (in (k8, note) order too,
-- across some twenty leaf pages); of the extreme keys, only the minimum
SELECT id, k FROM po WHERE k IN (7, -2147483648, 2147483647)
   AND EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2) ORDER BY id;
SELECT id, k8 FROM po WHERE k8 IN (7000000049, -9223372036854775808, 9223372036854775807)
   AND EXISTS (SELECT 1 FROM pi WHERE pi.k8 = po.k8 AND pi.d1 < pi.d2) ORDER BY id;
-- grouped above the node
SELECT pg_temp.probe_same('SELECT g, count(*) FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2) GROUP BY g');

-- rows this transaction inserted and deleted, seen as its snapshot sees them
BEGIN;
INSERT INTO pi VALUES (2500, 2500::bigint * 1000000007, 2500, date '2019-01-01', date '2020-01-01', 'new');
DELETE FROM pi WHERE k = 1500;
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2)');
SELECT count(*) FILTER (WHERE k = 2500) AS new_key, count(*) FILTER (WHERE k = 1500) AS deleted_key
  FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2);
ROLLBACK;

-- empty sides: an index with no root page (its table emptied after ANALYZE), and no outer rows
CREATE TABLE pe (k int, d1 date, d2 date);
INSERT INTO pe SELECT i, date '2020-01-01', date '2020-01-02' FROM generate_series(1, 5000) i;
CREATE INDEX pe_k ON pe (k);
ANALYZE pe;
TRUNCATE pe;
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pe WHERE pe.k = po.k AND pe.d1 < pe.d2)');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE NOT EXISTS (SELECT 1 FROM pe WHERE pe.k = po.k AND pe.d1 < pe.d2)');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE id + 0 > 100000 AND EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2)');

-- rescans: the node under a lateral subquery, once per outer row, its scan's filter a parameter
SELECT pg_temp.probe_same('SELECT s.g, c FROM generate_series(0, 4) s(g),
  LATERAL (SELECT count(*) AS c FROM po WHERE po.g = s.g AND EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2)) x');
-- LIMIT: the first batch's rows
SELECT count(*) FROM (SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k) LIMIT 10) x;

-- parallel: each participant walks the index for its own batches
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
-- a share above 0, so that the probes split among the participants cost less
SET gpuhash.index_probe_cost_share = 0.01;
SELECT * FROM pg_temp.probe_plan('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2)');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2)');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE NOT EXISTS (SELECT 1 FROM pi WHERE pi.k8 = po.k8 AND pi.d1 < pi.d2)');
-- a GROUP BY above: each participant's rows hashed into its groups, not sorted
-- (index_probe_group.c), with PostgreSQL's answers, HAVING included
SELECT * FROM pg_temp.probe_plan('SELECT g, count(*) FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2) GROUP BY g ORDER BY g');
SELECT pg_temp.probe_same('SELECT g, count(*), sum(id) FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2) GROUP BY g ORDER BY g');
SELECT pg_temp.probe_same('SELECT g, count(*) FROM po WHERE NOT EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2) GROUP BY g HAVING count(*) % 2 = 0');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SET gpuhash.index_probe_cost_share = 0;

-- EXPLAIN ANALYZE counts what the node did
CREATE FUNCTION pg_temp.probes(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF, SUMMARY OFF) ' || q LOOP
    -- heap rows vary with what pruning did since the updates
    IF l ~ 'Probes:' THEN RETURN regexp_replace(btrim(l), '\d+ heap rows', 'N heap rows'); END IF;
  END LOOP;
  RETURN NULL;
END $$;
SELECT pg_temp.probes('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.d1 < pi.d2)');

-- joins left to others: a descending or a partial index, a filter it does
-- not compile, two clauses, mixed key types, and probes that an index-only
-- scan makes without reading the heap
CREATE TABLE pn (k int, k8 bigint, note text, d1 date, d2 date);
INSERT INTO pn SELECT i, i, 'n' || i, date '2020-01-01', date '2020-01-02' FROM generate_series(1, 1000) i;
CREATE INDEX pn_k_desc ON pn (k DESC);
CREATE INDEX pn_k8_part ON pn (k8) WHERE k8 > 10;
ANALYZE pn;
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pn WHERE pn.k = po.k)');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pn WHERE pn.k8 = po.k8)');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND length(pi.note) > 3)');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.k2 <> po.k2)');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k8 = po.k)');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k)');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE NOT EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k)');
-- text equality and LIKE prefixes are compiled
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.note = ''many'')');
SELECT pg_temp.probe_same('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k AND pi.note LIKE ''x1%'')');
-- the node's own setting
SET gpuhash.enable_index_probe = off;
SELECT count(*) FROM pg_temp.probe_plan('SELECT * FROM po WHERE EXISTS (SELECT 1 FROM pi WHERE pi.k = po.k)') l
 WHERE l ~ 'IndexProbeJoin';
RESET gpuhash.enable_index_probe;

DROP TABLE po, pi, pe, pn;
