/*
 * named_access.c - probing and changing named tables with key arrays:
 * gpu_hash_contains, gpu_hash_lookup, gpu_hash_insert, gpu_hash_delete.
 *
 * Each call turns the array into one dense batch of keys of the table's
 * width (skipping NULLs and keys that cannot be in the table) and makes one
 * core call for the whole batch.  Batches live in pinned memory on a GPU.
 */
#include "gpuhash_pg.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

/* Where an array element went in the batch. */
#define ELEM_NULL			(-1)	/* a NULL element */
#define ELEM_OUT_OF_RANGE	(-2)	/* a bigint beyond a 4-byte table */

typedef struct KeyBatch
{
	int			nitems;			/* array elements */
	int			lbound;			/* lower bound of the array */
	uint64		n;				/* keys in the batch */
	GpuhashRes *keys;			/* n keys of the table's width */
	int32	   *slot;			/* per element: batch index or ELEM_* */
} KeyBatch;

static void
check_one_dimensional(ArrayType *arr, const char *argname)
{
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array", argname),
				 errdetail("The array has %d dimensions.", ARR_NDIM(arr))));
}

/*
 * Read a smallint, integer or bigint array into a batch.  With for_insert,
 * a NULL or a key that does not fit the table is an error; otherwise such
 * elements are left out (a lookup of them finds nothing).
 */
static void
read_keys(ArrayType *arr, GpuhashNamedTable *nt, MemoryContext cxt,
		  bool for_insert, KeyBatch *kb)
{
	Oid			elemtype = ARR_ELEMTYPE(arr);
	bits8	   *bitmap = ARR_NULLBITMAP(arr);
	char	   *p = ARR_DATA_PTR(arr);
	int			elemsize;
	void	   *keys;

	check_one_dimensional(arr, "keys");
	if (elemtype != INT4OID && elemtype != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("elements of keys must be integer or bigint, not %s",
						format_type_be(elemtype))));
	elemsize = elemtype == INT4OID ? sizeof(int32) : sizeof(int64);

	memset(kb, 0, sizeof(*kb));
	kb->nitems = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	kb->lbound = ARR_NDIM(arr) == 1 ? ARR_LBOUND(arr)[0] : 1;
	kb->slot = MemoryContextAllocHuge(cxt, Max(kb->nitems, 1) * sizeof(int32));
	kb->keys = gpuhash_res_new(cxt, nt->ctx, GPUHASH_RES_HOST);
	keys = gpuhash_res_host_alloc(kb->keys, (size_t) Max(kb->nitems, 1) * nt->key_width);

	for (int i = 0; i < kb->nitems; i++)
	{
		int64		v;

		if ((i & 0xFFFFF) == 0xFFFFF)
			CHECK_FOR_INTERRUPTS();
		if (bitmap && (bitmap[i >> 3] & (1 << (i & 7))) == 0)
		{
			if (for_insert)
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("keys must not contain nulls"),
						 errdetail("Element %d is null.", kb->lbound + i)));
			kb->slot[i] = ELEM_NULL;
			continue;
		}
		if (elemtype == INT4OID)
			v = *(int32 *) p;
		else
			v = *(int64 *) p;
		p += elemsize;

		if (nt->key_width == 4 && (v < PG_INT32_MIN || v > PG_INT32_MAX))
		{
			if (for_insert)
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("key " INT64_FORMAT " is out of range for gpu hash table \"%s\"",
								v, nt->name),
						 errdetail("The table has %s keys.", format_type_be(nt->key_type))));
			kb->slot[i] = ELEM_OUT_OF_RANGE;
			continue;
		}
		if (nt->key_width == 4)
			((int32 *) keys)[kb->n] = (int32) v;
		else
			((int64 *) keys)[kb->n] = v;
		kb->slot[i] = (int32) kb->n;
		kb->n++;
	}
}

static void
check_mutable(GpuhashNamedTable *nt, const char *action)
{
	if (nt->is_mutable)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot %s gpu hash table \"%s\"", action, nt->name),
			 errdetail("It is a static table; only tables created with method \"linear\" or \"hopscotch\" take inserts and deletes."),
			 errhint("Rebuild it with gpu_hash_drop and gpu_hash_create(..., method => 'linear').")));
}

#define call_context(name) \
	AllocSetContextCreate(CurrentMemoryContext, name, ALLOCSET_DEFAULT_SIZES)

PG_FUNCTION_INFO_V1(gpu_hash_contains);
PG_FUNCTION_INFO_V1(gpu_hash_lookup);
PG_FUNCTION_INFO_V1(gpu_hash_insert);
PG_FUNCTION_INFO_V1(gpu_hash_delete);

Datum
gpu_hash_contains(PG_FUNCTION_ARGS)
{
	GpuhashNamedTable *nt;
	ArrayType  *arr;
	MemoryContext cxt;
	MemoryContext old;
	KeyBatch	kb;
	GpuhashRes *found_res;
	uint8	   *found;
	Datum	   *values;
	bool	   *nulls;
	ArrayType  *result;
	int			dims[1];
	int			lbs[1];

	gpuhash_arg_not_null(fcinfo, 0, "name");
	gpuhash_arg_not_null(fcinfo, 1, "keys");
	nt = gpuhash_named_table(PG_GETARG_TEXT_PP(0));
	arr = PG_GETARG_ARRAYTYPE_P(1);
	check_one_dimensional(arr, "keys");
	if (ARR_NDIM(arr) == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(BOOLOID));

	cxt = call_context("gpu_hash_contains");
	old = MemoryContextSwitchTo(cxt);
	read_keys(arr, nt, cxt, false, &kb);
	found_res = gpuhash_res_new(cxt, nt->ctx, GPUHASH_RES_HOST);
	found = gpuhash_res_host_alloc(found_res, Max(kb.n, 1));
	gpuhash_check(nt->ctx,
				  ght_contains((ght_table *) nt->table->ptr, kb.keys->ptr, kb.n, found),
				  "probe the hash table");
	MemoryContextSwitchTo(old);

	values = palloc_extended(kb.nitems * sizeof(Datum), MCXT_ALLOC_HUGE);
	nulls = palloc_extended(kb.nitems * sizeof(bool), MCXT_ALLOC_HUGE);
	for (int i = 0; i < kb.nitems; i++)
	{
		int32		s = kb.slot[i];

		nulls[i] = s == ELEM_NULL;
		values[i] = BoolGetDatum(s >= 0 && found[s] != 0);
	}
	dims[0] = kb.nitems;
	lbs[0] = kb.lbound;
	result = construct_md_array(values, nulls, 1, dims, lbs, BOOLOID, 1, true, TYPALIGN_CHAR);
	MemoryContextDelete(cxt);
	PG_RETURN_ARRAYTYPE_P(result);
}

Datum
gpu_hash_lookup(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpuhashNamedTable *nt;
	ArrayType  *arr;
	MemoryContext cxt;
	KeyBatch	kb;
	GpuhashRes *probe_res;
	ght_probe  *p;

	gpuhash_arg_not_null(fcinfo, 0, "name");
	gpuhash_arg_not_null(fcinfo, 1, "keys");
	nt = gpuhash_named_table(PG_GETARG_TEXT_PP(0));
	arr = PG_GETARG_ARRAYTYPE_P(1);
	check_one_dimensional(arr, "keys");
	InitMaterializedSRF(fcinfo, 0);

	cxt = call_context("gpu_hash_lookup");
	read_keys(arr, nt, cxt, false, &kb);
	probe_res = gpuhash_res_new(cxt, nt->ctx, GPUHASH_RES_PROBE);
	gpuhash_check(nt->ctx,
				  ght_probe_begin((ght_table *) nt->table->ptr, kb.keys->ptr, kb.n,
								  (ght_probe **) &probe_res->ptr),
				  "probe the hash table");
	p = (ght_probe *) probe_res->ptr;

	for (;;)
	{
		const uint32 *pidx;
		const uint64 *payload;
		uint64		m;

		CHECK_FOR_INTERRUPTS();
		gpuhash_check(nt->ctx,
					  ght_probe_next(p, (uint64) gpuhash_batch_rows, &pidx, &payload, &m),
					  "probe the hash table");
		if (m == 0)
			break;
		for (uint64 j = 0; j < m; j++)
		{
			Datum		values[2];
			bool		nulls[2] = {false, false};

			if ((j & 0xFFFF) == 0xFFFF)
				CHECK_FOR_INTERRUPTS();
			values[0] = Int64GetDatum(gpuhash_key_at(kb.keys->ptr, nt->key_width, pidx[j]));
			values[1] = Int64GetDatum((int64) payload[j]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	gpuhash_res_release(probe_res);
	MemoryContextDelete(cxt);
	return (Datum) 0;
}

Datum
gpu_hash_insert(PG_FUNCTION_ARGS)
{
	GpuhashNamedTable *nt;
	ArrayType  *arr;
	MemoryContext cxt;
	KeyBatch	kb;
	GpuhashRes *payload_res;
	int64	   *payloads;

	gpuhash_arg_not_null(fcinfo, 0, "name");
	gpuhash_arg_not_null(fcinfo, 1, "keys");
	nt = gpuhash_named_table(PG_GETARG_TEXT_PP(0));
	check_mutable(nt, "insert into");
	arr = PG_GETARG_ARRAYTYPE_P(1);

	cxt = call_context("gpu_hash_insert");
	read_keys(arr, nt, cxt, true, &kb);
	payload_res = gpuhash_res_new(cxt, nt->ctx, GPUHASH_RES_HOST);
	payloads = gpuhash_res_host_alloc(payload_res, Max(kb.n, 1) * sizeof(int64));

	if (PG_ARGISNULL(2))
	{
		/* continue the row numbering where the table left it */
		for (uint64 i = 0; i < kb.n; i++)
			payloads[i] = nt->next_rownum + (int64) i;
	}
	else
	{
		ArrayType  *vals = PG_GETARG_ARRAYTYPE_P(2);
		int			nvals;

		check_one_dimensional(vals, "vals");
		nvals = ArrayGetNItems(ARR_NDIM(vals), ARR_DIMS(vals));
		if (nvals != kb.nitems)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("vals must have as many elements as keys"),
					 errdetail("keys has %d elements and vals has %d.", kb.nitems, nvals)));
		if (array_contains_nulls(vals))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("vals must not contain nulls")));
		if (ARR_ELEMTYPE(vals) != INT8OID)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("elements of vals must be bigint, not %s",
							format_type_be(ARR_ELEMTYPE(vals)))));
		/* no NULL keys with for_insert, so element i is batch key i */
		if (kb.n > 0)
			memcpy(payloads, ARR_DATA_PTR(vals), kb.n * sizeof(int64));
	}

	gpuhash_check(nt->ctx,
				  ght_insert((ght_table *) nt->table->ptr, kb.keys->ptr, payloads, kb.n),
				  "insert into the hash table");
	if (PG_ARGISNULL(2))
		nt->next_rownum += (int64) kb.n;

	MemoryContextDelete(cxt);
	PG_RETURN_INT64((int64) kb.n);
}

Datum
gpu_hash_delete(PG_FUNCTION_ARGS)
{
	GpuhashNamedTable *nt;
	ArrayType  *arr;
	MemoryContext cxt;
	KeyBatch	kb;
	uint64		removed = 0;

	gpuhash_arg_not_null(fcinfo, 0, "name");
	gpuhash_arg_not_null(fcinfo, 1, "keys");
	nt = gpuhash_named_table(PG_GETARG_TEXT_PP(0));
	check_mutable(nt, "delete from");
	arr = PG_GETARG_ARRAYTYPE_P(1);

	cxt = call_context("gpu_hash_delete");
	read_keys(arr, nt, cxt, false, &kb);
	gpuhash_check(nt->ctx,
				  ght_delete((ght_table *) nt->table->ptr, kb.keys->ptr, kb.n, &removed),
				  "delete from the hash table");
	MemoryContextDelete(cxt);
	PG_RETURN_INT64((int64) removed);
}
