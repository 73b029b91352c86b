--
-- CASE in folded aggregates beyond integer comparisons: WHEN conditions that
-- the direct reader's filter compiles over the joined row (text, varchar and
-- bpchar equality, IN lists and LIKE, numeric comparisons), as TPC-H q12's
-- o_orderpriority = '1-URGENT' OR ...; and CASE with numeric results, as
-- q08's and q14's sum(CASE WHEN ... THEN l_extendedprice * (1 - l_discount)
-- ELSE 0 END): each row's branch is folded alone, raised to the largest
-- branch's scale, and the sum carries the largest display scale among the
-- values it added, as PostgreSQL's does (a group whose rows all took ELSE 0
-- sums to 0, not 0.0000).  Each query is compared, as a multiset, with
-- PostgreSQL's own plan, serially, in parallel, and with the groups combined
-- by the participants, and says if it was not folded.
--
\i sql/fold_setup.psql

\i sql/compare.psql
\i sql/compare_fold.psql
-- q08's shape groups by a year
SET gpuhash.fold_year_keys = on;

-- a fact side: NULLs, a NaN, values whose products pass 128 bits, labels;
-- a dimension: types with a text prefix, priorities, nations (some NULL)
CREATE TABLE nf (k int4, price numeric(15,2), disc numeric(4,2), big numeric(40,2),
                 mode char(10), d date, note varchar(20));
INSERT INTO nf SELECT CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7919) % 500 END,
                      CASE WHEN i % 17 = 0 THEN NULL WHEN i = 4242 THEN 'NaN'
                           ELSE ((i * 104729) % 100000) / 100.0 END,
                      (i % 11) / 100.0,
                      CASE WHEN i % 400 = 0 THEN 9.9e37 ELSE i * 1.25 END,
                      (ARRAY['MAIL', 'SHIP', 'AIR', 'TRUCK '])[1 + i % 4],
                      CASE WHEN i % 29 = 0 THEN NULL ELSE date '1994-01-01' + (i * 13) % 1500 END,
                      CASE WHEN i % 7 = 0 THEN NULL ELSE 'n' || (i % 9) END
               FROM generate_series(1, 9000) i;
CREATE TABLE nd (k int4, ptype varchar(25), pri char(15), nation text, rate numeric(6,3));
INSERT INTO nd SELECT i,
                      CASE WHEN i % 10 = 0 THEN NULL WHEN i % 3 = 0 THEN 'PROMO BRUSHED ' || (i % 4)
                           ELSE 'STANDARD ' || (i % 5) END,
                      (ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'])[1 + i % 5],
                      CASE WHEN i % 11 = 0 THEN NULL WHEN i % 4 = 0 THEN 'BRAZIL' ELSE 'PERU' END,
                      (i % 9) * 0.125
               FROM generate_series(0, 498, 2) i;
ANALYZE nf; ANALYZE nd;

SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.plan('SELECT nf.mode, sum(CASE WHEN nd.pri = ''1-URGENT'' OR nd.pri = ''2-HIGH'' THEN 1 ELSE 0 END) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nf.mode');
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  -- q12's shape: text conditions over the build side, integer results
  ('SELECT nf.mode, sum(CASE WHEN nd.pri = ''1-URGENT'' OR nd.pri = ''2-HIGH'' THEN 1 ELSE 0 END), sum(CASE WHEN nd.pri <> ''1-URGENT'' AND nd.pri <> ''2-HIGH'' THEN 1 ELSE 0 END) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nf.mode'),
  -- q14's shape: LIKE over the build side, numeric results of two scales
  ('SELECT 100.00 * sum(CASE WHEN nd.ptype LIKE ''PROMO%'' THEN nf.price * (1 - nf.disc) ELSE 0 END) / sum(nf.price * (1 - nf.disc)) FROM nf JOIN nd ON nf.k = nd.k'),
  -- q08's shape: a year key, a nation's share
  ('SELECT extract(year FROM nf.d), sum(CASE WHEN nd.nation = ''BRAZIL'' THEN nf.price * (1 - nf.disc) ELSE 0 END) / sum(nf.price * (1 - nf.disc)) FROM nf JOIN nd ON nf.k = nd.k GROUP BY 1'),
  -- groups where no row takes THEN: the sum of ELSE 0 keeps scale 0
  ('SELECT nd.pri, sum(CASE WHEN nd.pri = ''1-URGENT'' THEN nf.price * nf.disc ELSE 0 END), avg(CASE WHEN nd.pri = ''1-URGENT'' THEN nf.price * nf.disc ELSE 0 END) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.pri'),
  -- no ELSE: NULL for the rows that take no branch; three scales
  ('SELECT nf.mode, sum(CASE WHEN nd.nation = ''PERU'' THEN nf.price END), avg(CASE WHEN nd.nation IS NULL THEN nf.disc END), sum(CASE WHEN nf.note IN (''n1'', ''n2'') THEN nf.price WHEN nf.note LIKE ''%3'' THEN nf.price * nf.disc ELSE 1.5 END) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nf.mode'),
  -- numeric conditions, NOT LIKE, bpchar with trailing spaces, NULL labels
  ('SELECT nd.nation, sum(CASE WHEN nf.price > 500.5 THEN 1 ELSE 0 END), sum(CASE WHEN nf.disc <= 0.05 AND nf.mode = ''TRUCK'' THEN nf.price ELSE -nf.price END), count(CASE WHEN nd.ptype NOT LIKE ''STANDARD%'' THEN 1 END) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.nation'),
  -- NaN and values past 128 bits in the branch taken
  ('SELECT nd.pri, sum(CASE WHEN nd.rate > 0.5 THEN nf.big * nf.big ELSE nf.price END), sum(CASE WHEN nd.nation = ''BRAZIL'' THEN nf.price ELSE 0 END) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.pri'),
  -- a text condition over both sides, with an integer condition beside it
  ('SELECT count(CASE WHEN nd.nation = ''PERU'' AND nf.k > 100 THEN 1 END), sum(CASE WHEN nf.note = ''n4'' OR nd.ptype = ''STANDARD 2'' THEN nf.price * 3 ELSE nf.disc END) FROM nf JOIN nd ON nf.k = nd.k'),
  -- semi join, and no join at all
  ('SELECT nf.mode, sum(CASE WHEN nf.note LIKE ''n%'' THEN nf.price ELSE 0 END) FROM nf WHERE EXISTS (SELECT 1 FROM nd WHERE nd.k = nf.k) GROUP BY nf.mode'),
  ('SELECT nf.mode, sum(CASE WHEN nf.mode = ''MAIL'' THEN nf.price * nf.disc ELSE 0 END), sum(nf.price) FROM nf GROUP BY nf.mode')
) AS c(q);
-- not folded: conditions the filter does not compile (a function, LIKE's _),
-- division, a simple CASE
SELECT count(*) AS folded FROM (VALUES
  ('SELECT sum(CASE WHEN length(nd.ptype) > 12 THEN nf.price ELSE 0 END) FROM nf JOIN nd ON nf.k = nd.k'),
  ('SELECT sum(CASE WHEN nf.note LIKE ''n_'' THEN nf.price ELSE 0 END) FROM nf JOIN nd ON nf.k = nd.k'),
  ('SELECT sum(CASE WHEN nd.nation = ''PERU'' THEN nf.price / 2 ELSE 0 END) FROM nf JOIN nd ON nf.k = nd.k'),
  ('SELECT sum(CASE nd.nation WHEN ''PERU'' THEN nf.price ELSE 0 END) FROM nf JOIN nd ON nf.k = nd.k')
) AS c(q) WHERE pg_temp.folded(q);

-- parallel: partial states for a Finalize Aggregate
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT nf.mode, sum(CASE WHEN nd.pri = ''1-URGENT'' OR nd.pri = ''2-HIGH'' THEN 1 ELSE 0 END) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nf.mode'),
  ('SELECT 100.00 * sum(CASE WHEN nd.ptype LIKE ''PROMO%'' THEN nf.price * (1 - nf.disc) ELSE 0 END) / sum(nf.price * (1 - nf.disc)) FROM nf JOIN nd ON nf.k = nd.k'),
  ('SELECT nd.pri, sum(CASE WHEN nd.pri = ''1-URGENT'' THEN nf.price * nf.disc ELSE 0 END), avg(CASE WHEN nd.pri = ''1-URGENT'' THEN nf.price * nf.disc ELSE 0 END) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.pri'),
  ('SELECT nd.pri, sum(CASE WHEN nd.rate > 0.5 THEN nf.big * nf.big ELSE nf.price END) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.pri')
) AS c(q);

-- parallel, the participants combining the groups (written out past hash_mem)
SET cpu_operator_cost = 0.05; SET work_mem = '256kB';
SELECT q, pg_temp.combined(q) AS combined, pg_temp.same(q) FROM (VALUES
  ('SELECT nf.price, nd.pri, sum(CASE WHEN nd.pri = ''1-URGENT'' THEN nf.price * nf.disc ELSE 0 END), sum(CASE WHEN nd.nation = ''PERU'' THEN nf.big END) FROM nf JOIN nd ON nf.k = nd.k GROUP BY 1, 2')
) AS c(q);
RESET cpu_operator_cost; RESET work_mem;
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;
DROP TABLE nf, nd;
