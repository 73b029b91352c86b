--
-- The dense front of GpuHashAggregate's groups: where the group keys seen
-- so far fit a box of at most 65536 cells (each key's range, rounded up to
-- a power of two, plus one cell for NULL), a row's group is found by its
-- keys' offsets in an array; the box grows as keys outside it come, and is
-- given up for the hash table past that size (EXPLAIN ANALYZE: "Groups
-- Found By Array").  Each query is compared, as a multiset, with
-- PostgreSQL's own plan, and says how many rows were found by the array:
-- all of them, none, or some (when the box was given up part way).  Batches
-- are 1024 rows, so the box grows over many of them.
--
\i sql/fold_setup.psql

\i sql/compare.psql
\i sql/analyze_lines.psql

-- rows of q whose group the array found: all, some or none of those folded
CREATE FUNCTION pg_temp.by_array(q text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN n = 0 THEN 'none' WHEN n >= folded THEN 'all' ELSE 'some' END
  FROM (SELECT coalesce(sum(substring(l from 'Groups Found By Array: (\d+) rows')::bigint), 0) AS n,
               coalesce(sum(substring(l from '(?:Probe Rows|Rows Folded): (\d+)')::bigint), 0) AS folded
        FROM pg_temp.analyze_lines(q) l) s
$$;

CREATE FUNCTION pg_temp.same_by_array(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN pg_temp.by_array(q) || ' by array: ' || pg_temp.same(q);
END $$;

-- group keys of every kind: small ranges with NULLs and negatives, a date
-- that keeps growing, int8 values at both ends of the range, values near
-- the top of the range only, a key whose range passes the box part way
-- through the table, text and bool
CREATE TABLE dnf (id int4, k int4, small int2, neg int4, day date, huge int8, top int8,
                 late int4, word text, flag bool, amount int4, price numeric(10,2));
INSERT INTO dnf SELECT i, (i * 7919) % 1000,
                      CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 9)::int2 END,
                      CASE WHEN i % 11 = 0 THEN NULL ELSE i % 13 - 20 END,
                      date '2020-01-01' + i / 40,
                      CASE WHEN i % 2 = 0 THEN -9223372036854775807 - 1 + i % 5
                           ELSE 9223372036854775807 - i % 5 END,
                      9223372036854775807 - i % 6,
                      CASE WHEN i < 15000 THEN i % 100 ELSE i * 10 END,
                      CASE WHEN i % 5 = 0 THEN NULL ELSE 'w' || (i % 30) END,
                      CASE WHEN i % 4 = 0 THEN NULL ELSE i % 3 = 0 END,
                      (i * 37) % 1000 - 500,
                      (i % 1000) / 8.0
               FROM generate_series(1, 20000) i;
CREATE TABLE dnd (k int4, cat int4);
INSERT INTO dnd SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE i % 6 END FROM generate_series(0, 999) i;
ANALYZE dnf; ANALYZE dnd;

SET max_parallel_workers_per_gather = 0;
SELECT q, pg_temp.same_by_array(q) FROM (VALUES
  ('SELECT dnf.small, dnd.cat, count(*), sum(dnf.amount) FROM dnf JOIN dnd ON dnf.k = dnd.k GROUP BY dnf.small, dnd.cat'),
  ('SELECT dnf.neg, dnf.flag, count(*), min(dnf.amount) FROM dnf JOIN dnd ON dnf.k = dnd.k GROUP BY dnf.neg, dnf.flag'),
  ('SELECT dnf.day, count(*), avg(dnf.amount) FROM dnf JOIN dnd ON dnf.k = dnd.k GROUP BY dnf.day'),
  ('SELECT dnf.top, dnd.cat, count(*) FROM dnf JOIN dnd ON dnf.k = dnd.k GROUP BY dnf.top, dnd.cat'),
  ('SELECT dnf.word, dnf.small, count(*), sum(dnf.amount) FROM dnf JOIN dnd ON dnf.k = dnd.k GROUP BY dnf.word, dnf.small'),
  ('SELECT dnf.huge, count(*), sum(dnf.amount) FROM dnf JOIN dnd ON dnf.k = dnd.k GROUP BY dnf.huge'),
  ('SELECT dnf.id, count(*) FROM dnf JOIN dnd ON dnf.k = dnd.k GROUP BY dnf.id'),
  ('SELECT dnf.late, count(*), max(dnf.amount) FROM dnf JOIN dnd ON dnf.k = dnd.k GROUP BY dnf.late'),
  ('SELECT dnf.small, dnf.neg, dnf.day, count(*) FROM dnf JOIN dnd ON dnf.k = dnd.k GROUP BY dnf.small, dnf.neg, dnf.day'),
  -- a fold with no join
  ('SELECT dnf.small, dnf.word, count(*), sum(dnf.price), avg(dnf.price) FROM dnf WHERE dnf.day < date ''2021-01-01'' GROUP BY dnf.small, dnf.word'),
  ('SELECT x, (SELECT string_agg(s::text, '','' ORDER BY s::text) FROM (SELECT dnd.cat, count(*) FROM dnf JOIN dnd ON dnf.k = dnd.k WHERE dnf.small < x GROUP BY dnd.cat) s) FROM generate_series(0, 3) x')
) AS c(q);

-- parallel: each participant keeps its own array (a worker's rows are not known
-- in advance, so only keys all in the box or none)
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT q, pg_temp.same_by_array(q) FROM (VALUES
  ('SELECT dnf.small, dnd.cat, count(*), sum(dnf.amount) FROM dnf JOIN dnd ON dnf.k = dnd.k GROUP BY dnf.small, dnd.cat'),
  ('SELECT dnf.huge, count(*), sum(dnf.amount) FROM dnf JOIN dnd ON dnf.k = dnd.k GROUP BY dnf.huge')
) AS c(q);
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;
