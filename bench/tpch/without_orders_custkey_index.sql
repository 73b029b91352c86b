-- TPC-H q22 without the index its NOT EXISTS probes: PostgreSQL's plan is
-- then a parallel hash anti join that builds all of orders' o_custkey
-- (15 M rows at SF 10), and gpuhash's may be the right anti join that builds
-- the selected customers instead (bench/NOTES.md, section 38).
-- Run by bench/host/tpch-piece AFTER_SQL=; the schema is the search path.
DROP INDEX orders_o_custkey_idx;
