/* gpuhash--0.1.0.sql */

\echo Use "CREATE EXTENSION gpuhash" to load this file. \quit

/*
 * Labels.  Every function here is VOLATILE: results depend on backend-local
 * state (the GPU context, the registry of named tables, gpuhash.device) and
 * some functions change that state.  Functions that run queries or use hash
 * tables are PARALLEL UNSAFE: a parallel worker would create its own CUDA
 * context (costly, and its device memory would be charged again) and cannot
 * see the leader's named tables.  gpuhash_devices and gpuhash_backend only
 * report on this backend, so they are PARALLEL RESTRICTED: a worker would
 * answer for itself, not for the leader.
 *
 * The functions are not STRICT: a NULL argument raises an error that names
 * it.  Only gpu_hash_insert's vals may be NULL (it means "number the rows").
 */

CREATE FUNCTION gpuhash_devices(
    OUT id int,
    OUT name text,
    OUT total_bytes bigint,
    OUT free_bytes bigint,
    OUT compute_capability text,
    OUT multiprocessors int)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuhash_devices'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuhash_devices() IS
'GPUs this backend can use (none without a GPU or driver)';

CREATE FUNCTION gpuhash_backend()
RETURNS text
AS 'MODULE_PATHNAME', 'gpuhash_backend'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuhash_backend() IS
'Device the current settings resolve to: gpu or cpu';

CREATE FUNCTION gpuhash_memory()
RETURNS bigint
AS 'MODULE_PATHNAME', 'gpuhash_memory'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuhash_memory() IS
'Bytes of hash-table memory (device, or host on the CPU) this session holds now';

-- Joins -----------------------------------------------------------------------

CREATE FUNCTION gpu_hash_join(
    build_query text,
    probe_query text,
    join_type text DEFAULT 'inner',
    method text DEFAULT 'auto')
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_hash_join'
LANGUAGE C VOLATILE PARALLEL UNSAFE
ROWS 1000;

COMMENT ON FUNCTION gpu_hash_join(text, text, text, text) IS
'Hash join of two queries on their first columns (inner, semi or anti)';

-- Named tables ----------------------------------------------------------------

CREATE FUNCTION gpu_hash_create(
    name text,
    query text,
    method text DEFAULT 'auto')
RETURNS bigint
AS 'MODULE_PATHNAME', 'gpu_hash_create'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION gpu_hash_create(text, text, text) IS
'Keep a hash table of a query''s (key[, value]) rows for the session';

CREATE FUNCTION gpu_hash_drop(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'gpu_hash_drop'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION gpu_hash_tables(
    OUT name text,
    OUT method text,
    OUT key_type text,
    OUT rows bigint,
    OUT null_keys bigint,
    OUT distinct_keys bigint,
    OUT capacity bigint,
    OUT load_factor float8,
    OUT device text,
    OUT bytes bigint,
    OUT build_ms float8,
    OUT query text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_hash_tables'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION gpu_hash_contains(name text, keys int4[])
RETURNS bool[]
AS 'MODULE_PATHNAME', 'gpu_hash_contains'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION gpu_hash_contains(name text, keys int8[])
RETURNS bool[]
AS 'MODULE_PATHNAME', 'gpu_hash_contains'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION gpu_hash_lookup(name text, keys int4[],
    OUT key bigint, OUT value bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_hash_lookup'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION gpu_hash_lookup(name text, keys int8[],
    OUT key bigint, OUT value bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_hash_lookup'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION gpu_hash_insert(name text, keys int4[], vals int8[] DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'gpu_hash_insert'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION gpu_hash_insert(name text, keys int8[], vals int8[] DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'gpu_hash_insert'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION gpu_hash_delete(name text, keys int4[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'gpu_hash_delete'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION gpu_hash_delete(name text, keys int8[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'gpu_hash_delete'
LANGUAGE C VOLATILE PARALLEL UNSAFE;
