/*
 * gpuhash_pg.h - what the PostgreSQL glue files share.
 *
 * The glue turns SQL calls into calls of the core (ght.h): it picks the
 * device, feeds key batches from queries or arrays, turns results into
 * tuples, maps core failures to ereport, and makes sure that device and
 * pinned memory are given back when a statement fails.
 */
#ifndef GPUHASH_PG_H
#define GPUHASH_PG_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "catalog/pg_type_d.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/palloc.h"

#include "ght.h"

/*
 * Nothing declared here is called from outside the module; hidden symbols
 * also make the calls direct.  Only PG_FUNCTION_INFO_V1 entry points and
 * _PG_init are exported.
 */
#pragma GCC visibility push(hidden)

/* ---- settings (settings.c; the planner's and nodes' own in join_node.h) - */

typedef enum GpuhashDeviceSetting
{
	GPUHASH_DEVICE_AUTO,
	GPUHASH_DEVICE_GPU,
	GPUHASH_DEVICE_CPU
} GpuhashDeviceSetting;

extern int	gpuhash_device_setting;
extern int	gpuhash_batch_rows;
extern int	gpuhash_debug_fail_alloc_after;
extern int	gpuhash_max_device_memory;
extern int	gpuhash_staging_memory;	/* kB */

extern bool gpuhash_settings_from_leader;
extern void gpuhash_settings_init(void);
extern void gpuhash_settings_read_leader(void);

/* Before gpuhash code reads a setting in a process: see settings.c. */
static inline void
gpuhash_settings_ready(void)
{
	if (unlikely(gpuhash_settings_from_leader))
		gpuhash_settings_read_leader();
}

static inline uint64
gpuhash_staging_bytes(void)
{
	return (uint64) gpuhash_staging_memory * 1024;
}

/* How often (rows) a batch checks its size against gpuhash.staging_memory. */
#define GPUHASH_STAGING_CHECK_ROWS 1024

/* ---- devices and errors (device.c) --------------------------------------- */

/*
 * The context the current settings resolve to, with the per-call settings
 * applied (gpuhash_apply_settings); ERROR if there is none.
 */
extern ght_ctx *gpuhash_current_ctx(void);
extern ght_ctx *gpuhash_cpu_ctx(void);
/* Whether a GPU is worth planning for (no CUDA call; see device.c). */
extern bool gpuhash_gpu_usable(void);
/* Whether this backend has made its GPU context. */
extern bool gpuhash_gpu_context_ready(void);
extern double gpuhash_gpu_context_pending_ms(void);
extern void gpuhash_gpu_context_begin(void);
/* Arm a context's per-call settings; each SQL call that uses one does so. */
extern void gpuhash_apply_settings(ght_ctx *ctx);
/* Bytes of hash-table memory a call may hold on ctx's device; 0 = no limit. */
extern uint64 gpuhash_device_limit(ght_ctx *ctx);

/* ereport(ERROR) for a failed core call; "what" completes "could not %s". */
extern void gpuhash_report(ght_ctx *ctx, ght_status status,
						   const char *what) pg_attribute_noreturn();

extern void gpuhash_report_detail(ght_status status, const char *what,
								  const char *detail) pg_attribute_noreturn();

static inline void
gpuhash_check(ght_ctx *ctx, ght_status status, const char *what)
{
	if (unlikely(status != GHT_OK))
		gpuhash_report(ctx, status, what);
}

extern const char *gpuhash_device_name(ght_device dev);

/* ---- core objects owned by a memory context (resources.c) ----------------- */

typedef enum GpuhashResKind
{
	GPUHASH_RES_TABLE,			/* ght_table */
	GPUHASH_RES_PROBE,			/* ght_probe */
	GPUHASH_RES_HOST			/* ght_host_alloc buffer */
} GpuhashResKind;

/*
 * One core object whose lifetime is tied to a memory context: when the
 * context is reset or deleted (normally, or because of an ERROR) the object
 * is freed.  ptr is NULL while nothing is held.
 */
typedef struct GpuhashRes
{
	MemoryContextCallback cb;
	GpuhashResKind kind;
	ght_ctx    *ctx;
	void	   *ptr;
	size_t		bytes;			/* GPUHASH_RES_HOST: size of ptr */
} GpuhashRes;

extern GpuhashRes *gpuhash_res_new(MemoryContext cxt, ght_ctx *ctx, GpuhashResKind kind);
extern void gpuhash_res_release(GpuhashRes *res);
extern void *gpuhash_res_host_alloc(GpuhashRes *res, size_t bytes);
extern void *gpuhash_res_host_grow(GpuhashRes *res, size_t keep_bytes, size_t bytes);

/* ---- query input (query_input.c) ------------------------------------------ */

typedef struct GpuhashQueryInput GpuhashQueryInput;

struct GpuhashQueryInput
{
	/* set by the caller before gpuhash_input_prepare */
	const char *what;			/* "build query", for messages */
	ght_ctx    *ctx;
	MemoryContext cxt;			/* owns the batch arrays */
	int			key_width;		/* 4 or 8; 0 = follow the key column type */
	bool		keep_columns;	/* keep every column's values for output */
	bool		want_payloads;	/* fill payloads[] (named tables) */
	bool		payload_column; /* ... from column 2, else row numbers */
	Oid			payload_type;	/* base type of column 2 (an integer type) */
	uint64		batch_rows;		/* call flush at this many rows; 0 = never */
	uint64		batch_bytes;	/* ... or at about this many bytes; 0 = never */
	void		(*flush) (GpuhashQueryInput *in);
	/* rows whose key can match nothing (NULL, or out of the table's range) */
	void		(*unmatchable) (GpuhashQueryInput *in, TupleTableSlot *slot);
	/* when set, rows whose key can match go here instead of into batches */
	void		(*spill) (GpuhashQueryInput *in, TupleTableSlot *slot, int64 key);
	void	   *arg;

	/* set by gpuhash_input_prepare */
	TupleDesc	desc;
	Oid			key_type;		/* INT2OID, INT4OID or INT8OID */
	void	   *plan;			/* SPIPlanPtr */

	/* counters, kept by gpuhash_input_run */
	uint64		rows_seen;		/* every row the query returned */
	uint64		null_keys;

	/* the current batch: rows whose key can match */
	uint64		n;
	uint64		cap;
	GpuhashRes *keys;			/* key_width bytes per row */
	GpuhashRes *payloads;		/* int64 per row, with want_payloads */
	Datum	  **values;			/* with keep_columns: [column][row] (column 0 unused) */
	bool	  **isnull;
	MemoryContext batch_cxt;	/* by-reference values of this batch */
};

extern void gpuhash_input_prepare(GpuhashQueryInput *in, const char *query);
extern void gpuhash_input_run(GpuhashQueryInput *in);
extern void gpuhash_input_put(GpuhashQueryInput *in, TupleTableSlot *slot);
extern void gpuhash_input_reset_batch(GpuhashQueryInput *in);
extern void gpuhash_input_free(GpuhashQueryInput *in);
extern Datum gpuhash_input_value(GpuhashQueryInput *in, TupleTableSlot *slot,
								 int attno, bool *isnull, bool copy);

/*
 * Key columns.  smallint and integer keys share 4-byte tables (smallint
 * sign-extended), bigint keys use 8-byte tables; keys then compare by value
 * as PostgreSQL's = does across integer types.
 */
static inline bool
gpuhash_is_key_type(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID;
}

/*
 * Join keys (GpuHashJoin) may also be dates: a DateADT is an int32 count of
 * days, and date = date compares those integers (the infinities being its
 * two extremes), so a date key hashes as an integer key of 4 bytes.  Dates
 * only ever meet dates: date = timestamp converts, and is not offered.
 */
static inline bool
gpuhash_is_join_key_type(Oid type)
{
	return gpuhash_is_key_type(type) || type == DATEOID;
}

static inline int
gpuhash_key_width_for(Oid type)
{
	return type == INT8OID ? 8 : 4;
}

static inline int64
gpuhash_key_value(Oid type, Datum d)
{
	if (type == INT2OID)
		return DatumGetInt16(d);
	if (type == INT4OID || type == DATEOID)
		return DatumGetInt32(d);
	return DatumGetInt64(d);
}

/*
 * Two 4-byte key values packed into one 8-byte key, the first in the high
 * half: two packed keys are equal exactly when both pairs of values are.
 */
static inline int64
gpuhash_pack_keys(int64 first, int64 second)
{
	return (int64) (((uint64) (uint32) first << 32) | (uint32) second);
}

/*
 * Two key values of which one may be a bigint, mixed into one 8-byte key.
 * Rows whose values are equal get equal keys, so every match is found; two
 * unequal pairs may share a key, so the join tests both clauses again on
 * each pair.  Hashing the pair beats hashing one clause of it where that
 * column is skewed: a probe row would walk every build row of its value.
 */
static inline int64
gpuhash_mix_keys(int64 first, int64 second)
{
	uint64		h = (uint64) first * UINT64CONST(0x9E3779B97F4A7C15);

	h ^= (uint64) second + UINT64CONST(0x632BE59BD9B4E019) + (h << 6) + (h >> 2);
	h ^= h >> 33;
	h *= UINT64CONST(0xFF51AFD7ED558CCD);
	h ^= h >> 33;
	return (int64) h;
}

/* The key of two values: packed when both are 4 bytes wide, else mixed. */
static inline int64
gpuhash_two_keys(int64 first, int64 second, bool mixed)
{
	return mixed ? gpuhash_mix_keys(first, second) : gpuhash_pack_keys(first, second);
}

/* The datum of a key type holding value, which is known to fit the type. */
static inline Datum
gpuhash_key_datum(Oid type, int64 value)
{
	if (type == INT2OID)
		return Int16GetDatum((int16) value);
	if (type == INT4OID || type == DATEOID)
		return Int32GetDatum((int32) value);
	return Int64GetDatum(value);
}

static inline int64
gpuhash_key_at(const void *keys, int key_width, uint64 i)
{
	if (key_width == 4)
		return ((const int32 *) keys)[i];
	return ((const int64 *) keys)[i];
}

/* ---- named tables (named_tables.c) ---------------------------------------- */

/*
 * A table kept for the session under a name.  All its memory lives in cxt,
 * and the core table is owned by a reset callback on cxt, so deleting cxt
 * frees everything.
 */
typedef struct GpuhashNamedTable
{
	char		name[NAMEDATALEN];
	MemoryContext cxt;
	GpuhashRes *table;
	ght_ctx    *ctx;			/* the device it was built on */
	Oid			key_type;		/* of the creating query's key column */
	int			key_width;
	bool		is_mutable;
	uint64		null_keys;		/* rows of the query skipped for NULL keys */
	int64		next_rownum;	/* value of the next row inserted without one */
	char	   *query;
} GpuhashNamedTable;

/* The table of that name (a text datum); ERROR if there is none. */
extern GpuhashNamedTable *gpuhash_named_table(text *name);

/* ---- small helpers shared by the SQL entry points ------------------------- */

extern void gpuhash_arg_not_null(FunctionCallInfo fcinfo, int argno, const char *argname);
extern ght_method gpuhash_parse_method(const char *method);

#pragma GCC visibility pop

#endif							/* GPUHASH_PG_H */
