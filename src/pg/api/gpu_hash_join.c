/*
 * gpu_hash_join.c - gpu_hash_join(build_query, probe_query, join_type, method).
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
 *
 * When the table would not fit under gpuhash.max_device_memory (the build
 * fails with GHT_ERR_MEM_LIMIT), the join is done grace-style: both sides
 * are split by a hash of the key value into P partitions, P being the
 * smallest power of two whose largest build partition can be built; the
 * probe side's rows are spilled into one tuplestore per partition (which
 * go to disk beyond work_mem), and then each partition's table is built and
 * its probe rows are streamed through it.  A key's rows all fall into one
 * partition on both sides, so inner, semi and anti joins give exactly the
 * rows of the unpartitioned join; rows whose key can match nothing are
 * handled while the probe side is read, as without partitions.
 */
#include "gpuhash_pg.h"

#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

/* More partitions than this, and the build side is too skewed to split. */
#define GRACE_MAX_PARTITIONS 1024

/*
 * Device bytes a probe may need per probe row of a batch (and per result
 * pair), with room to spare: on the CPU 16 per probe key and 12 per pair,
 * on the GPU the keys, positions and result arrays.  Under a memory limit,
 * tables are built to leave this much free for probing, and batches shrink
 * so that it stays at most a quarter of the limit.
 */
#define PROBE_BYTES_PER_ROW 64

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
	ght_method	method;
	uint64		limit;			/* the call's memory limit, 0 = none */
	uint64		build_limit;	/* ... less what probing needs */

	/* partitioned (grace) join; nparts == 0 without partitions */
	int			nparts;
	uint32	   *part_start;		/* build rows of partition p: */
	uint32	   *part_rows;		/* part_rows[part_start[p] .. part_start[p + 1]) */
	const uint32 *build_map;	/* table payload -> build row, while probing a partition */
	GpuhashRes *part_keys;		/* keys of one build partition */
	Tuplestorestate **spill;	/* probe rows of each partition */
} GpuJoinState;

/*
 * The partition of a key value.  Its own mixing, unrelated to the tables'
 * hash functions, so that a partition's keys still spread over its table.
 */
static inline int
partition_of(int64 key, int nparts)
{
	uint64		h = (uint64) key;

	h ^= h >> 31;
	h *= UINT64CONST(0x7FB5D329728EA185);
	h ^= h >> 27;
	h *= UINT64CONST(0x81DADEF4BC2DD44D);
	h ^= h >> 33;
	return (int) (((h >> 32) * (uint64) nparts) >> 32);
}

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
			fill_columns(st, build, st->build_map ? st->build_map[brow[j]] : brow[j], 0);
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

/*
 * Build the table of n keys (payload i is i) under the build limit;
 * GHT_ERR_MEM_LIMIT is returned, every other failure raised.
 */
static ght_status
try_build(GpuJoinState *st, const void *keys, uint64 n)
{
	ght_build_opts opts;
	ght_status	s;

	/* payload i is build row i; row numbers stay below GHT_MAX_ROWS */
	ght_build_opts_init(&opts, st->build.key_width, 4);
	opts.method = st->method;
	opts.flags = GHT_BUILD_ROWNUM_PAYLOAD;
	if (st->table == NULL)
		st->table = gpuhash_res_new(st->cxt, st->ctx, GPUHASH_RES_TABLE);
	gpuhash_res_release(st->table);
	ght_ctx_set_device_limit(st->ctx, st->build_limit);
	s = ght_build(st->ctx, &opts, keys, NULL, n, 0, (ght_table **) &st->table->ptr);
	ght_ctx_set_device_limit(st->ctx, st->limit);
	if (s != GHT_OK && s != GHT_ERR_MEM_LIMIT)
		gpuhash_report(st->ctx, s, "build the hash table");
	return s;
}

/* Gather the keys of build partition p into st->part_keys. */
static void *
partition_keys(GpuJoinState *st, int p, uint64 *n)
{
	GpuhashQueryInput *b = &st->build;
	uint32		first = st->part_start[p];
	uint64		m = st->part_start[p + 1] - first;
	char	   *dst;

	dst = gpuhash_res_host_grow(st->part_keys, 0, Max(m, 1) * b->key_width);
	for (uint64 i = 0; i < m; i++)
		memcpy(dst + i * b->key_width,
			   (char *) b->keys->ptr + (uint64) st->part_rows[first + i] * b->key_width,
			   b->key_width);
	*n = m;
	return dst;
}

/* Split the build rows into nparts partitions (a counting sort by partition). */
static void
split_build(GpuJoinState *st, int nparts)
{
	GpuhashQueryInput *b = &st->build;
	uint32	   *fill;

	st->nparts = nparts;
	if (st->part_start != NULL)
		pfree(st->part_start);
	st->part_start = MemoryContextAllocZero(st->cxt, (nparts + 1) * sizeof(uint32));
	if (st->part_rows == NULL)
		st->part_rows = MemoryContextAllocHuge(st->cxt, Max(b->n, 1) * sizeof(uint32));
	for (uint64 i = 0; i < b->n; i++)
		st->part_start[partition_of(gpuhash_key_at(b->keys->ptr, b->key_width, i), nparts) + 1]++;
	for (int p = 0; p < nparts; p++)
		st->part_start[p + 1] += st->part_start[p];
	fill = palloc(nparts * sizeof(uint32));
	memcpy(fill, st->part_start, nparts * sizeof(uint32));
	for (uint64 i = 0; i < b->n; i++)
	{
		int			p = partition_of(gpuhash_key_at(b->keys->ptr, b->key_width, i), nparts);

		if ((i & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
		st->part_rows[fill[p]++] = (uint32) i;
	}
	pfree(fill);
}

/* Whether every build row of partition p has the same key. */
static bool
partition_one_key(GpuJoinState *st, int p)
{
	GpuhashQueryInput *b = &st->build;
	int64		first = gpuhash_key_at(b->keys->ptr, b->key_width, st->part_rows[st->part_start[p]]);

	for (uint32 i = st->part_start[p] + 1; i < st->part_start[p + 1]; i++)
		if (gpuhash_key_at(b->keys->ptr, b->key_width, st->part_rows[i]) != first)
			return false;
	return true;
}

static void
report_too_skewed(GpuJoinState *st, int p)
{
	GpuhashQueryInput *b = &st->build;
	uint64		rows = st->part_start[p + 1] - st->part_start[p];
	int64		key = gpuhash_key_at(b->keys->ptr, b->key_width, st->part_rows[st->part_start[p]]);
	/* what the failed build asked for, plus what probing it would need */
	uint64		need = ght_ctx_limit_need(st->ctx) + (st->limit - st->build_limit);

	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("build side of gpu_hash_join does not fit in gpuhash.max_device_memory"),
			 errdetail("The limit is " UINT64_FORMAT " bytes. Split into %d partitions, one "
					   "partition still has " UINT64_FORMAT " rows (key " INT64_FORMAT
					   " among them) and needs at least " UINT64_FORMAT " bytes.",
					   st->limit, st->nparts, rows, key, need),
			 errhint("Raise gpuhash.max_device_memory to at least " UINT64_FORMAT
					 " kB, or reduce the rows per key of the build query.",
					 (need + 1023) / 1024)));
}

/*
 * Find the fewest partitions (a power of two) whose largest build partition
 * can be built, by building that partition; ERROR when splitting further
 * cannot help (one key's rows alone do not fit) or would need too many.
 */
static void
choose_partitions(GpuJoinState *st)
{
	GpuhashQueryInput *b = &st->build;

	st->part_keys = gpuhash_res_new(st->cxt, st->ctx, GPUHASH_RES_HOST);
	for (int nparts = 2;; nparts *= 2)
	{
		int			failed = -1;

		split_build(st, nparts);

		/*
		 * Every partition is built once: a table's memory depends on its
		 * distinct keys and method as well as its rows (and on the GPU on
		 * scratch space), so the partition with the most rows need not be
		 * the one that does not fit.
		 */
		for (int p = 0; p < nparts && failed < 0; p++)
		{
			uint64		n;
			void	   *keys = partition_keys(st, p, &n);

			CHECK_FOR_INTERRUPTS();
			if (try_build(st, keys, n) != GHT_OK)
				failed = p;
			gpuhash_res_release(st->table);
		}
		if (failed < 0)
		{
			elog(DEBUG1, "gpu_hash_join: %d partitions for " UINT64_FORMAT " build rows",
				 nparts, b->n);
			return;
		}
		if (partition_one_key(st, failed) || nparts >= GRACE_MAX_PARTITIONS)
			report_too_skewed(st, failed);
	}
}

/* Probe rows of the first pass: into the tuplestore of their partition. */
static void
spill_probe_row(GpuhashQueryInput *in, TupleTableSlot *slot, int64 key)
{
	GpuJoinState *st = (GpuJoinState *) in->arg;

	tuplestore_puttupleslot(st->spill[partition_of(key, st->nparts)], slot);
}

/*
 * The grace join: spill the probe side by partition, then join partition by
 * partition.  Each tuplestore keeps work_mem / P in memory, so all of them
 * together stay near work_mem.
 */
static void
run_partitioned(GpuJoinState *st)
{
	GpuhashQueryInput *probe = &st->probe;
	int			kb = Max(64, work_mem / st->nparts);
	TupleTableSlot *slot;
	MemoryContext old;

	old = MemoryContextSwitchTo(st->cxt);
	st->spill = palloc(st->nparts * sizeof(Tuplestorestate *));
	for (int p = 0; p < st->nparts; p++)
		st->spill[p] = tuplestore_begin_heap(false, false, kb);
	MemoryContextSwitchTo(old);

	probe->spill = spill_probe_row;
	gpuhash_input_run(probe);
	probe->spill = NULL;

	slot = MakeSingleTupleTableSlot(probe->desc, &TTSOpsMinimalTuple);
	for (int p = 0; p < st->nparts; p++)
	{
		uint64		n;
		void	   *keys = partition_keys(st, p, &n);

		CHECK_FOR_INTERRUPTS();
		if (try_build(st, keys, n) != GHT_OK)
			report_too_skewed(st, p);
		st->build_map = st->part_rows + st->part_start[p];
		while (tuplestore_gettupleslot(st->spill[p], true, false, slot))
			gpuhash_input_put(probe, slot);
		if (probe->n > 0)
			probe->flush(probe);
		st->build_map = NULL;
		gpuhash_res_release(st->table);
		tuplestore_end(st->spill[p]);
		st->spill[p] = NULL;
	}
	ExecDropSingleTupleTableSlot(slot);
}

PG_FUNCTION_INFO_V1(gpu_hash_join);

Datum
gpu_hash_join(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	GpuJoinState st;
	char	   *build_query;
	char	   *probe_query;

	gpuhash_arg_not_null(fcinfo, 0, "build_query");
	gpuhash_arg_not_null(fcinfo, 1, "probe_query");
	gpuhash_arg_not_null(fcinfo, 2, "join_type");
	gpuhash_arg_not_null(fcinfo, 3, "method");

	memset(&st, 0, sizeof(st));
	build_query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	probe_query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	st.kind = parse_join_kind(text_to_cstring(PG_GETARG_TEXT_PP(2)));
	st.method = gpuhash_parse_method(text_to_cstring(PG_GETARG_TEXT_PP(3)));
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
	/*
	 * The column definition list's descriptor is the executor's, which it
	 * frees after the call: the result gets a copy of its own, or a second
	 * call of the same scan (LATERAL, a correlated subquery) would free it
	 * twice.
	 */
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
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
	st.limit = gpuhash_device_limit(st.ctx);
	if (st.limit > 0)
	{
		st.max_pairs = Min(st.max_pairs, Max(1024, st.limit / 4 / PROBE_BYTES_PER_ROW));
		st.build_limit = st.limit > st.max_pairs * PROBE_BYTES_PER_ROW ?
			st.limit - st.max_pairs * PROBE_BYTES_PER_ROW : 1;
	}

	st.build.what = "build query";
	st.build.ctx = st.ctx;
	st.build.cxt = st.cxt;
	/* semi and anti joins return probe rows only */
	st.build.keep_columns = st.kind == JOIN_KIND_INNER;

	st.probe.what = "probe query";
	st.probe.ctx = st.ctx;
	st.probe.cxt = st.cxt;
	st.probe.keep_columns = true;
	st.probe.batch_rows = st.max_pairs;
	st.probe.batch_bytes = gpuhash_staging_bytes();
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
	if (try_build(&st, st.build.keys->ptr, st.build.n) == GHT_OK)
	{
		/* the table has its own copy of the keys */
		gpuhash_res_release(st.build.keys);
		gpuhash_input_run(&st.probe);
	}
	else
	{
		choose_partitions(&st);
		run_partitioned(&st);
	}
	gpuhash_res_release(st.table);

	SPI_finish();
	MemoryContextDelete(st.cxt);
	return (Datum) 0;
}
