--
-- gpuhash.parallel_workers: a parallel plan with a GpuHash node asks for at
-- least that many workers, capped by max_parallel_workers_per_gather, where
-- PostgreSQL planned fewer for the node's scans; 0 keeps PostgreSQL's count.
-- The default, -1, sizes a plan by the machine's online processors: a
-- process each, or one for every two where the node's reads keep at most a
-- quarter of their rows and take their pages apart (each reader then does so
-- in a helper thread; a table of fixed-width columns is read in place).
-- Plans without the node keep PostgreSQL's count. The answers are compared,
-- as multisets, with PostgreSQL's own plans.
--
\i sql/parallel_node.psql
\i sql/compare.psql
SET max_parallel_workers_per_gather = 3;
-- the built-in default (installcheck runs the suite with 0, so that its
-- other plans do not depend on the machine)
SELECT boot_val FROM pg_settings WHERE name = 'gpuhash.parallel_workers';
SET gpuhash.parallel_workers = 0;

SELECT setseed(0.1234);
-- one worker planned for each table, whatever its size
CREATE TABLE pw_fact (k int, v int, g int, amt numeric(12,2)) WITH (parallel_workers = 1);
INSERT INTO pw_fact
SELECT CASE WHEN random() < 0.02 THEN NULL ELSE (random() * 30000)::int END, g % 1000, g % 5,
       CASE WHEN g % 101 = 0 THEN NULL ELSE (g % 9973) / 100.0 END
FROM generate_series(1, 200000) g;
CREATE TABLE pw_dim (id int, d int) WITH (parallel_workers = 1);
INSERT INTO pw_dim SELECT g % 20000, g % 9 FROM generate_series(1, 40000) g;
INSERT INTO pw_dim VALUES (NULL, 1), (2147483647, 2), (-2147483648, 3);
-- three workers planned
CREATE TABLE pw_wide (k int, v int) WITH (parallel_workers = 3);
INSERT INTO pw_wide SELECT g % 30000, g FROM generate_series(1, 100000) g;
ANALYZE pw_fact, pw_dim, pw_wide;

-- the workers planned for q, with PostgreSQL's own joins off when joins_off
CREATE FUNCTION pg_temp.workers(q text, joins_off boolean DEFAULT true) RETURNS text LANGUAGE plpgsql AS $$
DECLARE l text; w text := 'none'; node boolean := false;
BEGIN
  IF joins_off THEN
    PERFORM set_config('enable_hashjoin', 'off', true);
    PERFORM set_config('enable_mergejoin', 'off', true);
    PERFORM set_config('enable_nestloop', 'off', true);
  END IF;
  FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF l ~ 'Workers Planned: ' THEN w := substring(l from 'Workers Planned: (\d+)'); END IF;
    node := node OR l ~ 'GpuHash';
  END LOOP;
  PERFORM set_config('enable_hashjoin', 'on', true);
  PERFORM set_config('enable_mergejoin', 'on', true);
  PERFORM set_config('enable_nestloop', 'on', true);
  RETURN 'workers planned: ' || w || CASE WHEN node THEN ', GpuHash node' ELSE ', no GpuHash node' END;
END $$;

-- 0: PostgreSQL's count
SELECT pg_temp.workers($$SELECT f.k, d.d FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$);
SELECT pg_temp.workers($$SELECT count(*), sum(f.v) FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$);
SELECT pg_temp.workers($$SELECT g, count(*), sum(amt), avg(amt) FROM pw_fact WHERE v < 500 GROUP BY g$$, false);

SET gpuhash.parallel_workers = 3;
-- a join, a join's fold, grouped or not, and a scan's fold
SELECT pg_temp.workers($$SELECT f.k, d.d FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$);
SELECT pg_temp.workers($$SELECT count(*), sum(f.v) FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$);
SELECT pg_temp.workers($$SELECT d.d, count(*), sum(f.v) FROM pw_fact f JOIN pw_dim d ON f.k = d.id GROUP BY d.d$$);
SELECT pg_temp.workers($$SELECT g, count(*), sum(amt), avg(amt) FROM pw_fact WHERE v < 500 GROUP BY g$$, false);
-- a chain of two joins
SELECT pg_temp.workers($$SELECT count(*) FROM pw_fact f JOIN pw_dim d ON f.k = d.id JOIN pw_wide w ON w.k = d.id$$);
-- without the node, PostgreSQL's count
SET gpuhash.enable_join = off;
SET gpuhash.enable_scan_aggregate = off;
SELECT pg_temp.workers($$SELECT count(*), sum(f.v) FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$, false);
SELECT pg_temp.workers($$SELECT g, count(*), sum(amt), avg(amt) FROM pw_fact WHERE v < 500 GROUP BY g$$, false);
RESET gpuhash.enable_join;
RESET gpuhash.enable_scan_aggregate;

-- capped by max_parallel_workers_per_gather
SET gpuhash.parallel_workers = 8;
SELECT pg_temp.workers($$SELECT count(*), sum(f.v) FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$);
-- never fewer than PostgreSQL planned
SET gpuhash.parallel_workers = 2;
SELECT pg_temp.workers($$SELECT count(*), sum(w.v) FROM pw_wide w JOIN pw_dim d ON w.k = d.id$$);
SELECT pg_temp.workers($$SELECT count(*), sum(f.v) FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$);

-- -1: by the machine's processors, as many as max_parallel_workers_per_gather
-- and max_parallel_workers allow; never fewer than PostgreSQL planned
SET gpuhash.parallel_workers = -1;
SET max_parallel_workers_per_gather = 64;
SET max_parallel_workers = 64;
-- not where a table's parallel_workers option set the count: that is the user's
SELECT pg_temp.workers($$SELECT f.k, d.d FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$);
SELECT pg_temp.workers($$SELECT g, count(*), sum(amt) FROM pw_fact WHERE v < 500 GROUP BY g$$, false);
-- without the options, and with one worker planned for pw_fact by its size
ALTER TABLE pw_fact RESET (parallel_workers);
ALTER TABLE pw_dim RESET (parallel_workers);
SET min_parallel_table_scan_size = '8MB';
SELECT pg_class.relpages BETWEEN 1024 AND 3071 AS one_worker_by_size FROM pg_class WHERE relname = 'pw_fact';
CREATE FUNCTION pg_temp.cpus() RETURNS int LANGUAGE sql AS $$
  SELECT sum(CASE WHEN r ~ '-' THEN split_part(r, '-', 2)::int - split_part(r, '-', 1)::int + 1 ELSE 1 END)::int
  FROM regexp_split_to_table(btrim(pg_read_file('/sys/devices/system/cpu/online'), E' \n'), ',') r $$;
-- a join that keeps most of its outer rows, and its fold: a process a
-- processor, the leader one of them
SELECT pg_temp.workers($$SELECT f.k, d.d FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$)
       = format('workers planned: %s, GpuHash node', greatest(1, pg_temp.cpus() - 1)) AS join_by_processors;
SELECT pg_temp.workers($$SELECT d.d, count(*), sum(f.v) FROM pw_fact f JOIN pw_dim d ON f.k = d.id GROUP BY d.d$$)
       = format('workers planned: %s, GpuHash node', greatest(1, pg_temp.cpus() - 1)) AS fold_by_processors;
-- a scan's fold that keeps half its rows: a process a processor, the leader one of them
SELECT pg_temp.workers($$SELECT g, count(*), sum(amt) FROM pw_fact WHERE v < 500 GROUP BY g$$, false)
       = format('workers planned: %s, GpuHash node', greatest(1, pg_temp.cpus() - 1)) AS by_processors;
-- one that keeps a tenth: a process for every two processors
SELECT pg_temp.workers($$SELECT g, count(*), sum(amt) FROM pw_fact WHERE v < 100 GROUP BY g$$, false)
       = format('workers planned: %s, GpuHash node', greatest(1, pg_temp.cpus() / 2 - 1)) AS by_readers;
-- a table of fixed-width columns is read in place, without a helper thread:
-- a process a processor, however few rows the filter keeps
CREATE TABLE pw_ints (a int, b int, g int);
INSERT INTO pw_ints SELECT g, g % 1000, g % 7 FROM generate_series(1, 250000) g;
ANALYZE pw_ints;
SELECT pg_class.relpages BETWEEN 1024 AND 3071 AS one_worker_by_size FROM pg_class WHERE relname = 'pw_ints';
SELECT pg_temp.workers($$SELECT g, count(*), sum(a::numeric) FROM pw_ints WHERE b < 100 GROUP BY g$$, false)
       = format('workers planned: %s, GpuHash node', greatest(1, pg_temp.cpus() - 1)) AS in_place_by_processors;
SELECT pg_temp.same($$SELECT g, count(*), sum(a::numeric), min(b) FROM pw_ints WHERE b < 100 GROUP BY g$$, false);
-- capped by max_parallel_workers
SET max_parallel_workers = 2;
SELECT pg_temp.workers($$SELECT g, count(*), sum(amt) FROM pw_fact WHERE v < 500 GROUP BY g$$, false)
       = format('workers planned: %s, GpuHash node', greatest(1, least(2, pg_temp.cpus() - 1))) AS capped;
SET max_parallel_workers = 64;
SELECT pg_temp.same($$SELECT g, count(*), sum(amt), avg(amt) FROM pw_fact WHERE v < 500 GROUP BY g$$, false);
SELECT pg_temp.same($$SELECT g, count(*), sum(amt), min(k) FROM pw_fact WHERE v < 100 GROUP BY g$$, false);
SELECT pg_temp.same($$SELECT count(*), sum(f.v), sum(d.d) FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$);
RESET max_parallel_workers;
SET max_parallel_workers_per_gather = 3;
SET min_parallel_table_scan_size = 0;
ALTER TABLE pw_fact SET (parallel_workers = 1);
ALTER TABLE pw_dim SET (parallel_workers = 1);

-- the answers, with three workers planned
SET gpuhash.parallel_workers = 3;
SELECT pg_temp.same($$SELECT f.k, f.v, d.d FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$);
SELECT pg_temp.same($$SELECT count(*), sum(f.v), sum(d.d) FROM pw_fact f JOIN pw_dim d ON f.k = d.id$$);
SELECT pg_temp.same($$SELECT d.d, count(*), sum(f.v), min(f.k), max(f.k) FROM pw_fact f JOIN pw_dim d ON f.k = d.id GROUP BY d.d$$);
SELECT pg_temp.same($$SELECT count(*), sum(f.v) FROM pw_fact f WHERE EXISTS (SELECT 1 FROM pw_dim d WHERE d.id = f.k)$$);
SELECT pg_temp.same($$SELECT f.k, f.v FROM pw_fact f WHERE NOT EXISTS (SELECT 1 FROM pw_dim d WHERE d.id = f.k)$$);
SELECT pg_temp.same($$SELECT f.k, f.v, d.d FROM pw_fact f LEFT JOIN pw_dim d ON f.k = d.id$$);
SELECT pg_temp.same($$SELECT count(*), sum(f.v) FROM pw_fact f JOIN pw_dim d ON f.k = d.id JOIN pw_wide w ON w.k = d.id$$);
-- a scan's fold against PostgreSQL's aggregation
SELECT pg_temp.workers($$SELECT g, count(*), sum(amt), avg(amt) FROM pw_fact WHERE v < 500 GROUP BY g$$, false);
CREATE TEMP TABLE pw_on AS SELECT g, count(*) AS n, sum(amt) AS s, avg(amt) AS a FROM pw_fact WHERE v < 500 GROUP BY g;
SET gpuhash.enable_scan_aggregate = off;
SELECT count(*) AS differing FROM (
  (SELECT * FROM pw_on EXCEPT ALL SELECT g, count(*), sum(amt), avg(amt) FROM pw_fact WHERE v < 500 GROUP BY g)
  UNION ALL
  (SELECT g, count(*), sum(amt), avg(amt) FROM pw_fact WHERE v < 500 GROUP BY g EXCEPT ALL SELECT * FROM pw_on)) x;
SELECT count(*) AS groups FROM pw_on;
RESET gpuhash.enable_scan_aggregate;

RESET gpuhash.parallel_workers;
DROP TABLE pw_fact, pw_dim, pw_wide, pw_on, pw_ints;
