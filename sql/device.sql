--
-- gpuhash.device and gpuhash.batch_rows, device resolution, and what
-- happens when a GPU is required but none is usable.
--
-- This is the only test that runs with a gpuhash.device of its choosing (plan_device
-- sets "gpu" too, but only plans); the others run on whatever
-- device PGOPTIONS selects.  The output differs between hosts with and
-- without a usable GPU only in the "device = gpu" section: expected/device.out
-- is the host without one, expected/device_1.out the host with one.
--

-- Until the module is loaded (on first use), gpuhash.* settings are
-- placeholders; loading checks them.
SET gpuhash.device = tpu;
SET gpuhash.no_such_setting = 1;
LOAD 'gpuhash';

-- Built with CUDA, the GPU half is a module of its own (gpuhash_cuda.so),
-- opened the first time something runs on a GPU: loading the extension and
-- planning a join leave it closed, whatever gpuhash.device says.
CREATE FUNCTION pg_temp.cuda_module_mapped() RETURNS bool LANGUAGE sql AS $$
    SELECT count(*) > 0
    FROM regexp_split_to_table(pg_read_file('/proc/self/maps'), E'\n') l
    WHERE l LIKE '%/gpuhash\_cuda.so%' $$;
CREATE TEMP TABLE module_probe AS SELECT g FROM generate_series(1, 1000) g;
ANALYZE module_probe;
DO $$
BEGIN
    SET LOCAL gpuhash.device = gpu;
    EXECUTE 'EXPLAIN SELECT count(*) FROM module_probe a JOIN module_probe b USING (g)';
    SET LOCAL gpuhash.device = auto;
    EXECUTE 'EXPLAIN SELECT count(*) FROM module_probe a JOIN module_probe b USING (g)';
END
$$;
SELECT pg_temp.cuda_module_mapped() AS mapped_after_planning;

-- the settings are enums and integers checked by the GUC machinery
SET gpuhash.device = cpu;
SHOW gpuhash.device;
SET gpuhash.device = 'GPU';
SHOW gpuhash.device;
SET gpuhash.device = auto;
SHOW gpuhash.device;
SET gpuhash.device = tpu;
SET gpuhash.device = '';
SET gpuhash.device = 1;
SET gpuhash.batch_rows = 1023;
SET gpuhash.batch_rows = 1024;
SHOW gpuhash.batch_rows;
SET gpuhash.batch_rows = 2000000000;
RESET gpuhash.batch_rows;
-- the prefix is reserved
SET gpuhash.no_such_setting = 1;

-- cpu: never the GPU
SET gpuhash.device = cpu;
SELECT gpuhash_backend();
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1') AS j(a int, b int);

-- auto: the GPU when there is a usable one, else quietly the CPU
SET gpuhash.device = auto;
SELECT gpuhash_backend() IN ('gpu', 'cpu') AS resolves;
-- asking for a device opened the module, where this build installed one
SELECT pg_temp.cuda_module_mapped() =
       ((pg_stat_file((SELECT setting FROM pg_config WHERE name = 'PKGLIBDIR')
                      || '/gpuhash_cuda.so', true)).size IS NOT NULL)
    AS opened_iff_installed;
SELECT ((SELECT count(*) FROM gpuhash_devices()) > 0) = (gpuhash_backend() = 'gpu')
    AS devices_match_backend;
SELECT count(*) FILTER (WHERE id < 0 OR name = '' OR total_bytes <= 0
                        OR free_bytes < 0 OR free_bytes > total_bytes
                        OR compute_capability !~ '^[0-9]+\.[0-9]+$'
                        OR multiprocessors <= 0) AS bad_device_rows
FROM gpuhash_devices();
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1') AS j(a int, b int);

-- a named table stays on the device it was built on
SET gpuhash.device = cpu;
SELECT gpu_hash_create('on_cpu', 'SELECT g FROM generate_series(1, 10) g');

-- gpu: an error when no GPU is usable (its detail depends on the host)
SET gpuhash.device = gpu;
DO $$
DECLARE
    d text;
    h text;
BEGIN
    PERFORM gpuhash_backend();
    RAISE NOTICE 'gpu is usable';
EXCEPTION WHEN object_not_in_prerequisite_state THEN
    GET STACKED DIAGNOSTICS d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
    RAISE NOTICE 'SQLSTATE %: %', SQLSTATE, SQLERRM;
    RAISE NOTICE 'detail given: %', d <> '';
    RAISE NOTICE 'hint: %', h;
END
$$;
\set VERBOSITY terse
SELECT gpuhash_backend();
SELECT * FROM gpu_hash_join('SELECT 1', 'SELECT 1') AS j(a int, b int);
SELECT gpu_hash_create('on_gpu', 'SELECT 1');
SELECT gpu_hash_drop('on_gpu');
\set VERBOSITY default
-- a table already built keeps working on its own device
SELECT gpu_hash_contains('on_cpu', ARRAY[0, 1, 10, 11]);
SELECT name, device, rows FROM gpu_hash_tables();
SELECT gpu_hash_drop('on_cpu');
