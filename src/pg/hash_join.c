/*
 * hash_join.c - gpu_hash_join(build_query, probe_query, join_type, method).
 *
 * The build query's rows are collected whole and turned into one static
 * table whose payloads are build row numbers.  The probe query's rows are
 * streamed through in batches of gpuhash.batch_rows; each full batch is
 * probed at once and its result rows go to the function's tuplestore, so
 * memory stays bounded by one batch (plus the build side).
 *
 * Key columns are not stored as datums: a matching build key equals its
 * probe key, and a probe key can be rebuilt from the key batch, so both are
 * produced from the key batch when rows are emitted.
 */
#include "gpuhash_pg.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

typedef enum JoinKind
{
	JOIN_KIND_INNER,
	JOIN_KIND_SEMI,
	JOIN_KIND_ANTI
} JoinKind;

typedef struct GpuJoinState
{
	JoinKind	kind;
	ght_ctx    *ctx;
	MemoryContext cxt;			/* everything of this call */
	MemoryContext row_cxt;		/* one directly emitted row */
	Tuplestorestate *tupstore;
	TupleDesc	outdesc;
	Datum	   *values;			/* one output row */
	bool	   *nulls;
	GpuhashQueryInput build;
	GpuhashQueryInput probe;
	GpuhashRes *table;
	GpuhashRes *probe_res;		/* inner: the running ght_probe */
	GpuhashRes *selected;		/* semi/anti: probe indices from ght_select */
	uint64		max_pairs;
} GpuJoinState;

static JoinKind
parse_join_kind(const char *s)
{
	if (pg_strcasecmp(s, "inner") == 0)
		return JOIN_KIND_INNER;
	if (pg_strcasecmp(s, "semi") == 0)
		return JOIN_KIND_SEMI;
	if (pg_strcasecmp(s, "anti") == 0)
		return JOIN_KIND_ANTI;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown join type \"%s\"", s),
			 errhint("Valid join types are \"inner\", \"semi\" and \"anti\".")));
	pg_unreachable();
}

/*
 * The column definition list must describe exactly what the join returns:
 * for inner joins every build column and then every probe column, for semi
 * and anti joins the probe columns.
 */
static void
check_output_desc(GpuJoinState *st)
{
	TupleDesc	out = st->outdesc;
	int			nbuild = st->kind == JOIN_KIND_INNER ? st->build.desc->natts : 0;
	int			nprobe = st->probe.desc->natts;

	if (out->natts != nbuild + nprobe)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column definition list of gpu_hash_join has %d columns, but the join returns %d",
						out->natts, nbuild + nprobe),
				 st->kind == JOIN_KIND_INNER ?
				 errdetail("An inner join returns the %d columns of the build query followed by the %d columns of the probe query.",
						   nbuild, nprobe) :
				 errdetail("A semi or anti join returns the %d columns of the probe query.",
						   nprobe)));

	for (int c = 0; c < out->natts; c++)
	{
		GpuhashQueryInput *in = c < nbuild ? &st->build : &st->probe;
		int			qc = c < nbuild ? c : c - nbuild;
		Oid			declared = TupleDescAttr(out, c)->atttypid;
		Oid			actual = TupleDescAttr(in->desc, qc)->atttypid;

		if (declared != actual)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of the column definition list has type %s, but column %d of the %s has type %s",
							c + 1, format_type_be(declared), qc + 1, in->what,
							format_type_be(actual))));
	}
}

/* Fill st->values from columns 2.. of a row of a batch, starting at off. */
static inline void
fill_columns(GpuJoinState *st, GpuhashQueryInput *in, uint64 row, int off)
{
	for (int c = 1; c < in->desc->natts; c++)
	{
		st->values[off + c] = in->values[c][row];
		st->nulls[off + c] = in->isnull[c][row];
	}
}

static void
emit_inner(GpuJoinState *st)
{
	GpuhashQueryInput *probe = &st->probe;
	GpuhashQueryInput *build = &st->build;
	int			nbuild = build->desc->natts;
	ght_probe  *p;

	gpuhash_check(st->ctx,
				  ght_probe_begin((ght_table *) st->table->ptr, probe->keys->ptr,
								  probe->n, (ght_probe **) &st->probe_res->ptr),
				  "probe the hash table");
	p = (ght_probe *) st->probe_res->ptr;

	for (;;)
	{
		const uint32 *pidx;
		const uint64 *brow;
		uint64		m;

		CHECK_FOR_INTERRUPTS();
		gpuhash_check(st->ctx, ght_probe_next(p, st->max_pairs, &pidx, &brow, &m),
					  "probe the hash table");
		if (m == 0)
			break;
		for (uint64 j = 0; j < m; j++)
		{
			int64		key = gpuhash_key_at(probe->keys->ptr, probe->key_width, pidx[j]);

			if ((j & 0xFFFF) == 0xFFFF)
				CHECK_FOR_INTERRUPTS();
			st->values[0] = gpuhash_key_datum(build->key_type, key);
			st->nulls[0] = false;
			fill_columns(st, build, brow[j], 0);
			st->values[nbuild] = gpuhash_key_datum(probe->key_type, key);
			st->nulls[nbuild] = false;
			fill_columns(st, probe, pidx[j], nbuild);
			tuplestore_putvalues(st->tupstore, st->outdesc, st->values, st->nulls);
		}
	}
	gpuhash_res_release(st->probe_res);
}

static void
emit_selected(GpuJoinState *st)
{
	GpuhashQueryInput *probe = &st->probe;
	uint32	   *idx;
	uint64		nsel;

	idx = gpuhash_res_host_grow(st->selected, 0, probe->cap * sizeof(uint32));
	gpuhash_check(st->ctx,
				  ght_select((ght_table *) st->table->ptr, probe->keys->ptr, probe->n,
							 st->kind == JOIN_KIND_ANTI, idx, &nsel),
				  "probe the hash table");

	for (uint64 j = 0; j < nsel; j++)
	{
		int64		key = gpuhash_key_at(probe->keys->ptr, probe->key_width, idx[j]);

		if ((j & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
		st->values[0] = gpuhash_key_datum(probe->key_type, key);
		st->nulls[0] = false;
		fill_columns(st, probe, idx[j], 0);
		tuplestore_putvalues(st->tupstore, st->outdesc, st->values, st->nulls);
	}
}

static void
probe_flush(GpuhashQueryInput *in)
{
	GpuJoinState *st = (GpuJoinState *) in->arg;

	if (st->kind == JOIN_KIND_INNER)
		emit_inner(st);
	else
		emit_selected(st);
	gpuhash_input_reset_batch(in);
}

/*
 * Anti join: a probe row whose key can match nothing (NULL, or a bigint
 * beyond a 4-byte table's range) is in the result, as with NOT EXISTS.
 */
static void
emit_unmatchable(GpuhashQueryInput *in, TupleTableSlot *slot)
{
	GpuJoinState *st = (GpuJoinState *) in->arg;
	MemoryContext old = MemoryContextSwitchTo(st->row_cxt);

	slot_getallattrs(slot);
	for (int c = 0; c < in->desc->natts; c++)
		st->values[c] = gpuhash_input_value(in, slot, c + 1, &st->nulls[c], false);
	tuplestore_putvalues(st->tupstore, st->outdesc, st->values, st->nulls);
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->row_cxt);
}

static void
build_table(GpuJoinState *st, ght_method method)
{
	ght_build_opts opts;

	/* payload i is build row i; row numbers stay below GHT_MAX_ROWS */
	ght_build_opts_init(&opts, st->build.key_width, 4);
	opts.method = method;
	opts.flags = GHT_BUILD_ROWNUM_PAYLOAD;
	st->table = gpuhash_res_new(st->cxt, st->ctx, GPUHASH_RES_TABLE);
	gpuhash_check(st->ctx,
				  ght_build(st->ctx, &opts, st->build.keys->ptr, NULL, st->build.n, 0,
							(ght_table **) &st->table->ptr),
				  "build the hash table");
}

PG_FUNCTION_INFO_V1(gpu_hash_join);

Datum
gpu_hash_join(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpuJoinState st;
	char	   *build_query;
	char	   *probe_query;
	ght_method	method;

	gpuhash_arg_not_null(fcinfo, 0, "build_query");
	gpuhash_arg_not_null(fcinfo, 1, "probe_query");
	gpuhash_arg_not_null(fcinfo, 2, "join_type");
	gpuhash_arg_not_null(fcinfo, 3, "method");

	memset(&st, 0, sizeof(st));
	build_query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	probe_query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	st.kind = parse_join_kind(text_to_cstring(PG_GETARG_TEXT_PP(2)));
	method = gpuhash_parse_method(text_to_cstring(PG_GETARG_TEXT_PP(3)));
	st.ctx = gpuhash_current_ctx();

	/*
	 * InitMaterializedSRF would report a call without a column definition
	 * list (e.g. in the select list) as an internal error.
	 */
	if (get_call_result_type(fcinfo, NULL, NULL) != TYPEFUNC_COMPOSITE)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpu_hash_join must be called in the FROM clause with a column definition list"),
				 errhint("Write SELECT * FROM gpu_hash_join(...) AS j(column type, ...).")));
	InitMaterializedSRF(fcinfo, 0);
	st.tupstore = rsinfo->setResult;
	st.outdesc = rsinfo->setDesc;

	st.cxt = AllocSetContextCreate(CurrentMemoryContext, "gpu_hash_join",
								   ALLOCSET_DEFAULT_SIZES);
	st.row_cxt = AllocSetContextCreate(st.cxt, "gpu_hash_join row",
									   ALLOCSET_SMALL_SIZES);
	st.values = MemoryContextAlloc(st.cxt, Max(st.outdesc->natts, 1) * sizeof(Datum));
	st.nulls = MemoryContextAlloc(st.cxt, Max(st.outdesc->natts, 1) * sizeof(bool));
	st.probe_res = gpuhash_res_new(st.cxt, st.ctx, GPUHASH_RES_PROBE);
	st.selected = gpuhash_res_new(st.cxt, st.ctx, GPUHASH_RES_HOST);
	st.max_pairs = (uint64) gpuhash_batch_rows;

	st.build.what = "build query";
	st.build.ctx = st.ctx;
	st.build.cxt = st.cxt;
	/* semi and anti joins return probe rows only */
	st.build.keep_columns = st.kind == JOIN_KIND_INNER;

	st.probe.what = "probe query";
	st.probe.ctx = st.ctx;
	st.probe.cxt = st.cxt;
	st.probe.keep_columns = true;
	st.probe.batch_rows = (uint64) gpuhash_batch_rows;
	st.probe.flush = probe_flush;
	st.probe.unmatchable = st.kind == JOIN_KIND_ANTI ? emit_unmatchable : NULL;
	st.probe.arg = &st;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* check both queries and the column list before doing any work */
	gpuhash_input_prepare(&st.build, build_query);
	st.probe.key_width = st.build.key_width;
	gpuhash_input_prepare(&st.probe, probe_query);
	check_output_desc(&st);

	gpuhash_input_run(&st.build);
	build_table(&st, method);
	/* the table has its own copy of the keys */
	gpuhash_res_release(st.build.keys);

	gpuhash_input_run(&st.probe);
	gpuhash_res_release(st.table);

	SPI_finish();
	MemoryContextDelete(st.cxt);
	return (Datum) 0;
}
