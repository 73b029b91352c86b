/*
 * query_input.c - run a SQL query and collect its rows as column batches.
 *
 * The query runs through SPI, but its rows never go through SPI_tuptable:
 * our own DestReceiver appends each row's key to a key array of the table's
 * width (pinned host memory on a GPU context, so it can be copied to the
 * device at full speed) and keeps other columns as Datum/isnull arrays.
 * When a batch is full the caller's flush callback consumes it.
 *
 * The query runs read-only in the caller's snapshot, with the caller's
 * privileges, so row-level security and permissions apply as if the caller
 * had run it; it is planned like a top-level query so that it may run in
 * parallel.
 */
#include "gpuhash_pg.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/dest.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"

#define INITIAL_BATCH_ROWS 4096

typedef struct InputReceiver
{
	DestReceiver pub;
	GpuhashQueryInput *in;
} InputReceiver;

/*
 * Parse and analyse the query, check that it is one read-only SELECT and
 * that its first column can be a key, and remember its result type.  Must be
 * called between SPI_connect and SPI_finish.
 */
void
gpuhash_input_prepare(GpuhashQueryInput *in, const char *query)
{
	SPIPrepareOptions opts;
	SPIPlanPtr	plan;
	List	   *sources;
	CachedPlanSource *src;
	Query	   *parse;
	Oid			keytype;
	MemoryContext old;

	memset(&opts, 0, sizeof(opts));
	opts.parseMode = RAW_PARSE_DEFAULT;
	opts.cursorOptions = CURSOR_OPT_PARALLEL_OK;
	plan = SPI_prepare_extended(query, &opts);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare_extended failed for %s: %s",
			 in->what, SPI_result_code_string(SPI_result));

	/*
	 * SPI would run every statement of a multi-statement string; only one
	 * can feed the batches.
	 */
	sources = SPI_plan_get_plan_sources(plan);
	if (list_length(sources) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("%s must be a single SQL statement", in->what),
				 errdetail("It contains %d statements.", list_length(sources))));
	src = linitial(sources);
	if (src->commandTag != CMDTAG_SELECT || src->resultDesc == NULL ||
		list_length(src->query_list) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a SELECT statement, not %s",
						in->what, GetCommandTagName(src->commandTag))));

	/* read-only SPI would reject these too, with a confusing message */
	parse = linitial_node(Query, src->query_list);
	if (parse->hasModifyingCTE || parse->rowMarks != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s must not modify data or lock rows", in->what),
				 errdetail("It runs read-only in the snapshot of the calling statement.")));

	if (src->resultDesc->natts < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s returns no columns", in->what),
				 errdetail("Its first column must be the key.")));

	keytype = getBaseType(TupleDescAttr(src->resultDesc, 0)->atttypid);
	if (!gpuhash_is_key_type(keytype))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("first column of %s must be smallint, integer or bigint, not %s",
						in->what,
						format_type_be(TupleDescAttr(src->resultDesc, 0)->atttypid))));

	old = MemoryContextSwitchTo(in->cxt);
	in->desc = CreateTupleDescCopy(src->resultDesc);
	MemoryContextSwitchTo(old);
	in->key_type = keytype;
	if (in->key_width == 0)
		in->key_width = gpuhash_key_width_for(keytype);
	in->plan = plan;
}

/* ---- batches ------------------------------------------------------------- */

/* Host memory the current batch holds: its arrays' rows and its values. */
static uint64
batch_bytes(GpuhashQueryInput *in)
{
	uint64		row = in->key_width + (in->want_payloads ? sizeof(int64) : 0);

	if (in->keep_columns)
		row += (in->desc->natts - 1) * (sizeof(Datum) + sizeof(bool));
	return in->n * row +
		(in->keep_columns && in->batch_cxt ? MemoryContextMemAllocated(in->batch_cxt, true) : 0);
}

static void
grow_batch(GpuhashQueryInput *in)
{
	uint64		newcap;
	int			natts = in->desc->natts;

	if (in->cap == 0)
		newcap = INITIAL_BATCH_ROWS;
	else
		newcap = in->cap * 2;
	if (in->batch_rows > 0 && newcap > in->batch_rows)
		newcap = in->batch_rows;
	Assert(newcap > in->n);

	if (in->keys == NULL)
		in->keys = gpuhash_res_new(in->cxt, in->ctx, GPUHASH_RES_HOST);
	gpuhash_res_host_grow(in->keys, in->n * in->key_width, newcap * in->key_width);

	if (in->want_payloads)
	{
		if (in->payloads == NULL)
			in->payloads = gpuhash_res_new(in->cxt, in->ctx, GPUHASH_RES_HOST);
		gpuhash_res_host_grow(in->payloads, in->n * sizeof(int64), newcap * sizeof(int64));
	}

	if (in->keep_columns)
	{
		if (in->values == NULL)
		{
			in->values = MemoryContextAllocZero(in->cxt, natts * sizeof(Datum *));
			in->isnull = MemoryContextAllocZero(in->cxt, natts * sizeof(bool *));
			in->batch_cxt = AllocSetContextCreate(in->cxt, "gpuhash batch values",
												  ALLOCSET_DEFAULT_SIZES);
		}
		for (int c = 1; c < natts; c++)
		{
			if (in->values[c] == NULL)
			{
				in->values[c] = MemoryContextAllocHuge(in->cxt, newcap * sizeof(Datum));
				in->isnull[c] = MemoryContextAllocHuge(in->cxt, newcap * sizeof(bool));
			}
			else
			{
				in->values[c] = repalloc_huge(in->values[c], newcap * sizeof(Datum));
				in->isnull[c] = repalloc_huge(in->isnull[c], newcap * sizeof(bool));
			}
		}
	}
	in->cap = newcap;
}

void
gpuhash_input_reset_batch(GpuhashQueryInput *in)
{
	in->n = 0;
	if (in->batch_cxt != NULL)
		MemoryContextReset(in->batch_cxt);
}

/* Give back the batch buffers early (they are freed with cxt anyway). */
void
gpuhash_input_free(GpuhashQueryInput *in)
{
	if (in->keys != NULL)
		gpuhash_res_release(in->keys);
	if (in->payloads != NULL)
		gpuhash_res_release(in->payloads);
	in->n = 0;
	in->cap = 0;
}

/*
 * Column attno of the slot (after slot_getallattrs).  With copy, a
 * by-reference value is copied into the batch context so it outlives the
 * slot; without, only values stored out of line are fetched, into the
 * current memory context, so that whatever stores the row gets the data and
 * not a pointer into a TOAST table.
 */
Datum
gpuhash_input_value(GpuhashQueryInput *in, TupleTableSlot *slot, int attno,
					bool *isnull, bool copy)
{
	Form_pg_attribute att = TupleDescAttr(in->desc, attno - 1);
	Datum		d = slot->tts_values[attno - 1];
	MemoryContext old;

	*isnull = slot->tts_isnull[attno - 1];
	if (*isnull)
		return (Datum) 0;
	if (att->attbyval)
		return d;
	if (att->attlen == -1 && VARATT_IS_EXTERNAL(DatumGetPointer(d)))
	{
		old = MemoryContextSwitchTo(copy ? in->batch_cxt : CurrentMemoryContext);
		d = PointerGetDatum(detoast_external_attr((struct varlena *) DatumGetPointer(d)));
		MemoryContextSwitchTo(old);
		return d;
	}
	if (!copy)
		return d;
	old = MemoryContextSwitchTo(in->batch_cxt);
	d = datumCopy(d, false, att->attlen);
	MemoryContextSwitchTo(old);
	return d;
}

/* ---- the receiver ---------------------------------------------------------- */

static void
input_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	GpuhashQueryInput *in = ((InputReceiver *) self)->in;

	/* the plan was analysed before running; make sure it still fits */
	if (typeinfo->natts != in->desc->natts)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("result type of %s changed while it was planned", in->what)));
	for (int c = 0; c < typeinfo->natts; c++)
		if (TupleDescAttr(typeinfo, c)->atttypid != TupleDescAttr(in->desc, c)->atttypid)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("result type of %s changed while it was planned", in->what)));
}

static bool
input_receive(TupleTableSlot *slot, DestReceiver *self)
{
	gpuhash_input_put(((InputReceiver *) self)->in, slot);
	return true;
}

/*
 * One row of the query's result: into the batch (flushing it when full), to
 * the spill callback, or to the unmatchable callback.  Also used to feed
 * rows kept elsewhere (spilled partitions) through the same path.
 */
void
gpuhash_input_put(GpuhashQueryInput *in, TupleTableSlot *slot)
{
	Datum		d;
	bool		isnull;
	int64		key;
	uint64		i;

	in->rows_seen++;
	if ((in->rows_seen & 0xFFFF) == 0)
		CHECK_FOR_INTERRUPTS();

	d = slot_getattr(slot, 1, &isnull);
	if (isnull)
	{
		in->null_keys++;
		if (in->unmatchable)
			in->unmatchable(in, slot);
		return;
	}
	key = gpuhash_key_value(in->key_type, d);
	if (in->key_width == 4 && (key < PG_INT32_MIN || key > PG_INT32_MAX))
	{
		/* a bigint key beyond a 4-byte table's range equals none of its keys */
		if (in->unmatchable)
			in->unmatchable(in, slot);
		return;
	}

	if (in->spill)
	{
		in->spill(in, slot, key);
		return;
	}
	if (in->n == in->cap)
		grow_batch(in);
	i = in->n;
	if (in->key_width == 4)
		((int32 *) in->keys->ptr)[i] = (int32) key;
	else
		((int64 *) in->keys->ptr)[i] = key;

	if (in->want_payloads)
	{
		int64		payload;

		if (in->payload_column)
		{
			d = slot_getattr(slot, 2, &isnull);
			if (isnull)
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("second column of %s must not be null", in->what),
						 errdetail("Row " UINT64_FORMAT " has key " INT64_FORMAT " and a null value.",
								   in->rows_seen, key)));
			payload = gpuhash_key_value(in->payload_type, d);
		}
		else
			payload = (int64) in->rows_seen;
		((int64 *) in->payloads->ptr)[i] = payload;
	}

	if (in->keep_columns)
	{
		slot_getallattrs(slot);
		for (int c = 1; c < in->desc->natts; c++)
			in->values[c][i] = gpuhash_input_value(in, slot, c + 1,
												   &in->isnull[c][i], true);
	}

	in->n++;
	if (in->flush &&
		((in->batch_rows > 0 && in->n >= in->batch_rows) ||
		 (in->batch_bytes > 0 && in->n % GPUHASH_STAGING_CHECK_ROWS == 0 &&
		  batch_bytes(in) >= in->batch_bytes)))
		in->flush(in);
}

static void
input_shutdown(DestReceiver *self)
{
}

static void
input_destroy(DestReceiver *self)
{
}

/*
 * Run the prepared query, feeding the batches; the last, partial batch is
 * flushed too when there is a flush callback.
 */
void
gpuhash_input_run(GpuhashQueryInput *in)
{
	InputReceiver receiver;
	SPIExecuteOptions opts;
	int			rc;

	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = input_receive;
	receiver.pub.rStartup = input_startup;
	receiver.pub.rShutdown = input_shutdown;
	receiver.pub.rDestroy = input_destroy;
	receiver.pub.mydest = DestNone;
	receiver.in = in;

	/* the key buffer always exists, even for an empty result */
	if (in->cap == 0)
		grow_batch(in);

	memset(&opts, 0, sizeof(opts));
	opts.read_only = true;
	opts.must_return_tuples = true;
	opts.dest = &receiver.pub;
	rc = SPI_execute_plan_extended((SPIPlanPtr) in->plan, &opts);
	if (rc < 0)
		elog(ERROR, "could not run %s: %s", in->what, SPI_result_code_string(rc));

	if (in->flush && in->n > 0)
		in->flush(in);
}
