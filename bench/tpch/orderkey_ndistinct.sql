-- lineitem.l_orderkey's true number of distinct values (a quarter of the rows: each order has 1-7
-- lines), for a measurement of what PostgreSQL's sampled estimate costs a plan: bench/host/tpch-piece
-- AFTER_SQL=bench/tpch/orderkey_ndistinct.sql AFTER_QUERIES=21. ANALYZE samples 30 000 rows and,
-- lineitem being stored in l_orderkey's order, finds about 440 000 distinct values of 15 M at SF 10;
-- the semi joins of q21 and q04 are estimated from it.
ALTER TABLE lineitem ALTER COLUMN l_orderkey SET (n_distinct = -0.25);
ANALYZE lineitem (l_orderkey);
