-- pgbench script of test/gpuhost/concurrency: one gpu_hash_join of a random
-- join type and method, its count and sum checked against the native answer.
\set jt random(1, 3)
\set m random(1, 3)
\if :jt = 1
SELECT gpuhash_conc.expect('inner', count(*), sum(x))
FROM gpu_hash_join('SELECT id, v FROM gpuhash_conc.dim', 'SELECT k, x FROM gpuhash_conc.fact',
                   'inner', (ARRAY['auto', 'cuckoo', 'linear'])[:m]) AS j(id int, v int8, k int, x int);
\elif :jt = 2
SELECT gpuhash_conc.expect('semi', count(*), sum(x))
FROM gpu_hash_join('SELECT id FROM gpuhash_conc.dim', 'SELECT k, x FROM gpuhash_conc.fact',
                   'semi', (ARRAY['auto', 'cuckoo', 'linear'])[:m]) AS j(k int, x int);
\else
SELECT gpuhash_conc.expect('anti', count(*), sum(x))
FROM gpu_hash_join('SELECT id FROM gpuhash_conc.dim', 'SELECT k, x FROM gpuhash_conc.fact',
                   'anti', (ARRAY['auto', 'cuckoo', 'linear'])[:m]) AS j(k int, x int);
\endif
