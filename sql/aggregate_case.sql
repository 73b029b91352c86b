--
-- CASE in the arguments of folded aggregates: integer results; conditions
-- that compare integer, date and bool columns and constants, IN lists, AND,
-- OR, NOT and NULL tests, in three-valued logic (a WHEN whose condition is
-- NULL is not taken).  Only the branch taken is evaluated, so an overflow in
-- another raises nothing, as in PostgreSQL.  Each query runs with the node
-- forced on and is compared, as a multiset, with PostgreSQL's own plan,
-- serially and in parallel, and says if it was not folded.
--
\i sql/fold_setup.psql

\i sql/compare.psql
\i sql/compare_fold.psql

-- NULLs in every column the conditions read; values near int4's limit
CREATE TABLE cf (id int4, k int4, a int4, b int2, flag bool, d date, big int4, m numeric(10,2));
INSERT INTO cf SELECT g, g % 1000,
                      CASE WHEN g % 13 = 0 THEN NULL ELSE g % 7 END,
                      CASE WHEN g % 17 = 0 THEN NULL ELSE (g % 5)::int2 END,
                      CASE WHEN g % 19 = 0 THEN NULL ELSE g % 3 = 0 END,
                      CASE WHEN g % 23 = 0 THEN NULL ELSE date '2000-01-01' + g % 400 END,
                      CASE WHEN g % 11 = 0 THEN NULL ELSE 2147483500 + g % 100 END,
                      (g % 1000) / 4.0
               FROM generate_series(1, 30000) g;
CREATE TABLE cd (id int4, grp int4, ok bool, w int8);
INSERT INTO cd SELECT g, g % 4, CASE WHEN g % 9 = 0 THEN NULL ELSE g % 2 = 0 END, g * 1000
               FROM generate_series(0, 999) g;
ANALYZE cf; ANALYZE cd;

SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.plan('SELECT cd.grp, sum(CASE WHEN cf.a > 3 THEN 1 ELSE 0 END) FROM cf JOIN cd ON cf.k = cd.id GROUP BY cd.grp');
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT cd.grp, sum(CASE WHEN cf.a > 3 THEN 1 ELSE 0 END), count(CASE WHEN cf.a = 2 OR cf.b = 1 THEN 1 END), sum(CASE WHEN NOT (cf.a < 2 AND cf.b >= 3) THEN cf.a ELSE -cf.b END) FROM cf JOIN cd ON cf.k = cd.id GROUP BY cd.grp'),
  ('SELECT sum(CASE WHEN cf.flag THEN 1 WHEN cd.ok THEN 2 ELSE 3 END), sum(CASE WHEN cf.a IS NULL THEN 100 WHEN cf.b IS NOT NULL THEN cf.b END), min(CASE WHEN cf.d >= date ''2000-06-01'' THEN cf.id END), max(CASE WHEN cd.ok = cf.flag THEN cf.id ELSE NULL END) FROM cf JOIN cd ON cf.k = cd.id'),
  ('SELECT cf.a, sum(CASE WHEN cd.ok OR cf.a > 4 THEN 1 ELSE 0 END), sum(CASE WHEN cd.ok AND cf.a > 4 THEN 1 END), count(CASE WHEN NOT cd.ok THEN 1 END) FROM cf JOIN cd ON cf.k = cd.id GROUP BY cf.a'),
  ('SELECT cd.grp, count(CASE WHEN cf.a NOT IN (1, 2, NULL) THEN 1 END), sum(CASE WHEN cf.a IN (3, NULL) OR cf.b NOT IN (0, 4) THEN 1 ELSE 0 END), sum(CASE WHEN cf.d IN (date ''2000-01-05'', date ''2000-02-01'') THEN 7 END), sum(CASE WHEN cf.b = ANY (''{1,2}''::int8[]) THEN cf.b END) FROM cf JOIN cd ON cf.k = cd.id GROUP BY cd.grp'),
  ('SELECT cf.flag, sum(CASE WHEN cf.a > 2 THEN CASE WHEN cf.b < 2 THEN 10 ELSE 20 END WHEN cf.a IS NULL THEN -1 END), min(CASE WHEN cd.ok IS NULL THEN cf.id END), max(CASE WHEN cf.flag = false AND cd.ok <> true THEN cd.grp END) FROM cf JOIN cd ON cf.k = cd.id GROUP BY cf.flag'),
  ('SELECT sum(CASE WHEN (cf.a = 1 OR cf.b IS NULL) AND NOT cf.flag THEN cd.w ELSE 0 END), avg(CASE WHEN cf.b > cf.a THEN cf.b END) FROM cf JOIN cd ON cf.k = cd.id')
) AS c(q);
-- with no join: the fold of one table's scan (taken for its numeric sum)
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT cf.flag, sum(cf.m), sum(CASE WHEN cf.a > 3 OR cf.d IS NULL THEN 1 ELSE 0 END), count(CASE WHEN cf.b IN (1, 3) THEN 1 END) FROM cf GROUP BY cf.flag')
) AS c(q);
-- errors: raised only by a branch taken
SELECT q, pg_temp.same_error(q) FROM (VALUES
  ('SELECT sum(CASE WHEN cf.a < 0 THEN cf.big * 100 ELSE cf.a END), sum(CASE WHEN cf.a >= 5 THEN 2147483647 ELSE 0 END) FROM cf JOIN cd ON cf.k = cd.id'),
  ('SELECT cd.ok, sum(CASE WHEN cf.a <> 3 THEN cf.big + 1000 ELSE 0 END) FROM cf JOIN cd ON cf.k = cd.id GROUP BY cd.ok')
) AS c(q);
-- not folded: a condition that could raise an error (PostgreSQL may not
-- evaluate both sides of an OR), and a simple CASE
SELECT pg_temp.folded('SELECT sum(CASE WHEN cf.a + 1 > 3 OR cf.b > 0 THEN 1 ELSE 0 END) FROM cf JOIN cd ON cf.k = cd.id') AS folded_arithmetic_condition,
       pg_temp.folded('SELECT sum(CASE cf.a WHEN 1 THEN 10 ELSE 0 END) FROM cf JOIN cd ON cf.k = cd.id') AS folded_simple_case;

-- parallel
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT cd.grp, sum(CASE WHEN cf.a > 3 THEN 1 ELSE 0 END), count(CASE WHEN cf.a IN (1, 2) AND cf.flag THEN 1 END), min(CASE WHEN cf.d < date ''2000-03-01'' THEN cf.a END) FROM cf JOIN cd ON cf.k = cd.id GROUP BY cd.grp'),
  ('SELECT sum(CASE WHEN cf.flag IS NULL THEN 1 WHEN cd.ok THEN cf.b END) FROM cf JOIN cd ON cf.k = cd.id')
) AS c(q);
SELECT q, pg_temp.same_error(q) FROM (VALUES
  ('SELECT sum(CASE WHEN cf.a < 0 THEN cf.big * 100 ELSE cf.a END) FROM cf JOIN cd ON cf.k = cd.id')
) AS c(q);
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;

DROP TABLE cf, cd;
