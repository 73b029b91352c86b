-- TPC-H q04 without the index it probes: PostgreSQL's plan for EXISTS over
-- lineitem is then a hash semi join that builds lineitem's late lines
-- (38 M rows at SF 10), and gpuhash's may be the right semi join that
-- builds the quarter's orders instead (bench/NOTES.md, section 38).
-- Run by bench/host/tpch-piece AFTER_SQL=; the schema is the search path.
ALTER TABLE lineitem DROP CONSTRAINT lineitem_pkey;
