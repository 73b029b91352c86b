-- pgbench script of test/gpuhost/concurrency: a named table per client
-- (conc_<client_id>) built, probed, for linear and hopscotch tables changed,
-- and dropped;
-- every answer checked against the native one.
\set m random(1, 4)
SELECT gpu_hash_create('conc_' || :client_id, 'SELECT id, v FROM gpuhash_conc.dim',
                       (ARRAY['auto', 'cuckoo', 'linear', 'hopscotch'])[:m]);
SELECT gpuhash_conc.expect('contains', count(*) FILTER (WHERE h), NULL)
FROM gpuhash_conc.probe p, unnest(gpu_hash_contains('conc_' || :client_id, p.keys)) h;
SELECT gpuhash_conc.expect('lookup', count(*), sum(l.value))
FROM gpuhash_conc.probe p, gpu_hash_lookup('conc_' || :client_id, p.keys) l;
\if :m >= 3
SELECT gpuhash_conc.expect('insert', gpu_hash_insert('conc_' || :client_id, p.ins), NULL)
FROM gpuhash_conc.probe p;
SELECT gpuhash_conc.expect('lookup after insert', count(*), NULL)
FROM gpuhash_conc.probe p, gpu_hash_lookup('conc_' || :client_id, p.ins) l;
SELECT gpuhash_conc.expect('delete', gpu_hash_delete('conc_' || :client_id, p.ins), NULL)
FROM gpuhash_conc.probe p;
SELECT gpuhash_conc.expect('lookup after delete', count(*), NULL)
FROM gpuhash_conc.probe p, gpu_hash_lookup('conc_' || :client_id, p.ins) l;
\endif
SELECT gpu_hash_drop('conc_' || :client_id);
