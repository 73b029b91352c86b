--
-- GpuHashAggregate with numeric sums and text group keys.  sum and avg of
-- numeric arithmetic (+ - * and unary minus over numeric columns of a
-- declared scale, numeric constants, integers cast to numeric) run as
-- 128-bit fixed-point integers; a row they cannot carry (NaN, more digits
-- than 128 bits hold) is added by PostgreSQL's numeric functions instead.
-- text, varchar and bpchar group keys become numbers per distinct value.
-- Each query is compared, as a multiset, with PostgreSQL's own plan,
-- serially and in parallel (where partial states are serialized as
-- PostgreSQL's own), and says if it was not folded.
--
\i sql/fold_setup.psql

\i sql/compare.psql
\i sql/compare_fold.psql

-- a fact side with NULL keys, NULL and NaN measures, values whose products
-- pass 128 bits and sums that pass them, text labels; dimensions with
-- text, varchar and bpchar attributes (some NULL), unique and duplicate keys
CREATE TABLE nf (k int4, price numeric(15,2), disc numeric(4,2), q int4, i8 int8,
                 big numeric(40,2), label text);
INSERT INTO nf SELECT CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7919) % 600 END,
                      CASE WHEN i % 17 = 0 THEN NULL WHEN i = 4242 THEN 'NaN'
                           ELSE ((i * 104729) % 100000) / 100.0 - 100 END,
                      (i % 11) / 100.0,
                      CASE WHEN i % 19 = 0 THEN NULL ELSE i % 50 - 10 END,
                      i::int8 * 1000000000000000,
                      CASE WHEN i % 500 = 0 THEN 9.9e37 * (1 - 2 * (i % 1000 / 500))
                           ELSE i * 1.25 END,
                      CASE WHEN i % 7 = 0 THEN NULL ELSE 'label ' || (i % 5) END
               FROM generate_series(1, 8000) i;
CREATE TABLE nd (k int4, name text, vname varchar(12), tag char(4), rate numeric(6,3));
INSERT INTO nd SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE 'name ' || (i % 6) END,
                      'v' || (i % 3), CASE WHEN i % 4 = 0 THEN 'ab' ELSE 'xyz' END,
                      (i % 9) * 0.125
               FROM generate_series(0, 598, 2) i;
CREATE TABLE ndd (k int4, grp text COLLATE "C", padded bpchar);   -- duplicate keys
INSERT INTO ndd SELECT (i * 31) % 700, 'g' || (i % 4),
                       CASE WHEN i % 2 = 0 THEN 'p' || (i % 3) ELSE 'p' || (i % 3) || '   ' END
                FROM generate_series(1, 900) i;
CREATE TABLE nempty (k int4, name text);
ANALYZE nf; ANALYZE nd; ANALYZE ndd; ANALYZE nempty;

-- serial
SET max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.plan('SELECT nd.name, sum(nf.price * (1 - nf.disc)), avg(nf.price) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.name');
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT nd.name, sum(nf.price * (1 - nf.disc)), avg(nf.price), count(*) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.name'),
  ('SELECT nd.tag, nd.vname, sum(nf.price * nd.rate * (1 + nf.disc)), avg(nf.disc), min(nf.q), count(nd.name) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.tag, nd.vname'),
  ('SELECT nf.label, nd.name, count(*), sum(nf.q * nf.price), sum(nf.price + nf.q), avg(-nf.price) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nf.label, nd.name'),
  ('SELECT sum(nf.price * (1 - nf.disc)), avg(nf.big), sum(nf.i8), avg(nf.i8), count(nf.price) FROM nf JOIN nd ON nf.k = nd.k'),
  ('SELECT nd.vname, sum(nf.big), sum(nf.big * nf.big), avg(nf.big * nd.rate) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.vname'),
  ('SELECT nd.name, sum(nf.price * 1.5 - 0.25), avg(nf.price * 2.125 + nf.disc) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.name'),
  ('SELECT ndd.grp, rtrim(ndd.padded), count(*), sum(nf.price) FROM nf JOIN ndd ON nf.k = ndd.k GROUP BY ndd.grp, ndd.padded'),
  ('SELECT nf.label, sum(nf.price), avg(nf.price) FROM nf WHERE nf.k IN (SELECT k FROM nd WHERE rate > 0.5) GROUP BY nf.label'),
  ('SELECT nf.label, count(*), sum(nf.price) FROM nf WHERE NOT EXISTS (SELECT 1 FROM nd WHERE nd.k = nf.k) GROUP BY nf.label'),
  ('SELECT nd.name, sum(nf.price) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.name HAVING sum(nf.price) > 1000'),
  ('SELECT nd.name, sum(nf.price), avg(nf.price) FROM nf JOIN nd ON nf.k = nd.k WHERE nf.price IS NULL GROUP BY nd.name'),
  ('SELECT nd.name, sum(nf.price) FROM nf JOIN nd ON nf.k = nd.k AND nf.q > nd.rate GROUP BY nd.name'),
  ('SELECT nempty.name, sum(nf.price) FROM nf JOIN nempty ON nf.k = nempty.k GROUP BY nempty.name'),
  ('SELECT sum(nf.price), avg(nf.price) FROM nf JOIN nempty ON nf.k = nempty.k')
) AS c(q);
-- not folded: a numeric of no declared scale, division, a numeric group key
SELECT count(*) AS folded FROM (VALUES
  ('SELECT nd.name, sum(nf.price::numeric) FROM nf JOIN nd ON nf.k = nd.k GROUP BY 1'),
  ('SELECT nd.name, sum(nf.price / 2) FROM nf JOIN nd ON nf.k = nd.k GROUP BY 1'),
  ('SELECT nf.price, count(*) FROM nf JOIN nd ON nf.k = nd.k GROUP BY 1')
) AS c(q) WHERE pg_temp.folded(q);

-- parallel: partial states serialized as PostgreSQL's numeric and int8 states
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
SELECT * FROM pg_temp.plan('SELECT nd.name, sum(nf.price), avg(nf.i8) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.name');
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT nd.name, sum(nf.price * (1 - nf.disc)), avg(nf.price), count(*) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.name'),
  ('SELECT nd.tag, nd.vname, sum(nf.price * nd.rate * (1 + nf.disc)), avg(nf.disc), min(nf.q), count(nd.name) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.tag, nd.vname'),
  ('SELECT sum(nf.price * (1 - nf.disc)), avg(nf.big), sum(nf.i8), avg(nf.i8) FROM nf JOIN nd ON nf.k = nd.k'),
  ('SELECT nd.vname, sum(nf.big), sum(nf.big * nf.big), avg(nf.big * nd.rate) FROM nf JOIN nd ON nf.k = nd.k GROUP BY nd.vname'),
  ('SELECT ndd.grp, rtrim(ndd.padded), count(*), sum(nf.price) FROM nf JOIN ndd ON nf.k = ndd.k GROUP BY ndd.grp, ndd.padded'),
  ('SELECT nf.label, sum(nf.price), avg(nf.price) FROM nf WHERE nf.k IN (SELECT k FROM nd WHERE rate > 0.5) GROUP BY nf.label'),
  ('SELECT nd.name, sum(nf.price), avg(nf.price) FROM nf JOIN nd ON nf.k = nd.k WHERE nf.price IS NULL GROUP BY nd.name'),
  ('SELECT sum(nf.price), avg(nf.price), sum(nf.i8) FROM nf JOIN nempty ON nf.k = nempty.k')
) AS c(q);
RESET parallel_setup_cost; RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size; RESET max_parallel_workers_per_gather;

-- short values that repeat, each numbered or converted once and then
-- remembered by its bytes (bpchar's trailing spaces included, so 'O' and
-- 'O ' are looked up apart and land in one group), and long values kept
-- out of line, whose toast pointers look like short values but are not
CREATE TABLE nt (k int4, flag char(2), status text, note text, qty numeric(15,2), disc numeric(15,2));
ALTER TABLE nt ALTER COLUMN note SET STORAGE EXTERNAL;
INSERT INTO nt SELECT i % 600, (ARRAY['A', 'N', 'R', 'N '])[1 + i % 4], CASE WHEN i % 5 = 0 THEN 'O' ELSE 'F' END,
                      CASE WHEN i % 9 = 0 THEN NULL ELSE repeat(chr(65 + i % 4), 3000) || (i % 2) END,
                      CASE WHEN i % 23 = 0 THEN 'NaN'::numeric ELSE (i % 50) + 1 END,
                      CASE WHEN i % 29 = 0 THEN NULL ELSE (i % 11) / 100.0 - 0.03 END
               FROM generate_series(1, 20000) i;
ANALYZE nt;
SELECT q, pg_temp.same_folded(q) FROM (VALUES
  ('SELECT flag, status, sum(qty), avg(qty), sum(qty * (1 - disc)), avg(disc), count(*) FROM nt GROUP BY flag, status'),
  ('SELECT md5(note), count(*), sum(disc), sum(qty * disc) FROM nt GROUP BY note'),
  ('SELECT nt.flag, sum(nf.price * (1 - nt.disc)), count(*) FROM nf JOIN nt ON nf.k = nt.k GROUP BY nt.flag')
) AS c(q);
DROP TABLE nt;
