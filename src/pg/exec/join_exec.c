/*
 * join_exec.c - executing a GpuHashJoin in one process.
 *
 * The inner plan is read once into a column store and its keys hashed into
 * one table (join_parallel.c shares that work in a parallel query).  The
 * outer plan is then read in batches of gpuhash.batch_rows rows: the keys
 * of a batch go to the table in one call, and what comes back is compact
 * (pairs of row numbers, or a byte per row), from which result tuples are
 * formed one at a time as the parent asks for them.
 */
#include "gpuhash_pg.h"

#include "access/parallel.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "ght_keyfilter.h"
#include "join_chain.h"
#include "join_right.h"
#include "join_state.h"
#include "pair_memo_exec.h"

static TupleTableSlot *exec_gpu_join(CustomScanState *node);
static void build(GpuJoinState *gj);
static void fill_batch(GpuJoinState *gj, GpuhashOverlap *ov);

static const CustomExecMethods gpu_join_exec_methods = {
	.CustomName = GPUHASH_JOIN_NAME,
	.BeginCustomScan = gpuhash_join_begin,
	.ExecCustomScan = exec_gpu_join,
	.EndCustomScan = gpuhash_join_end,
	.ReScanCustomScan = gpuhash_join_rescan,
	.EstimateDSMCustomScan = gpuhash_join_estimate_dsm,
	.InitializeDSMCustomScan = gpuhash_join_init_dsm,
	.ReInitializeDSMCustomScan = gpuhash_join_reinit_dsm,
	.InitializeWorkerCustomScan = gpuhash_join_init_worker,
	.ShutdownCustomScan = gpuhash_join_shutdown,
	.ExplainCustomScan = gpuhash_join_explain,
};

/*
 * Fill a new node's state from its plan; methods are the node's own
 * (GpuHashAggregate runs through these, with its own exec methods).
 */
void
gpuhash_join_init_state(GpuJoinState *gj, CustomScan *cscan, const CustomExecMethods *methods)
{
	List	   *priv = cscan->custom_private;

	NodeSetTag(gj, T_CustomScanState);
	gj->css.flags = cscan->flags;
	gj->css.methods = methods;
	gj->jointype = intVal(list_nth(priv, GJ_PRIV_JOINTYPE));
	gj->outer_key = intVal(list_nth(priv, GJ_PRIV_OUTER_KEY));
	gj->inner_key = intVal(list_nth(priv, GJ_PRIV_INNER_KEY));
	gj->outer_type = intVal(list_nth(priv, GJ_PRIV_OUTER_TYPE));
	gj->inner_type = intVal(list_nth(priv, GJ_PRIV_INNER_TYPE));
	gj->outer_key2 = intVal(list_nth(priv, GJ_PRIV_OUTER_KEY2));
	gj->inner_key2 = intVal(list_nth(priv, GJ_PRIV_INNER_KEY2));
	gj->outer_type2 = intVal(list_nth(priv, GJ_PRIV_OUTER_TYPE2));
	gj->inner_type2 = intVal(list_nth(priv, GJ_PRIV_INNER_TYPE2));
	gj->plan_method = intVal(list_nth(priv, GJ_PRIV_METHOD));
	gj->plan_device = intVal(list_nth(priv, GJ_PRIV_DEVICE));
	gj->inner_partial = intVal(list_nth(priv, GJ_PRIV_INNER_PARTIAL)) != 0;
	gj->est_build_rows = floatVal(list_nth(priv, GJ_PRIV_BUILD_ROWS));
	gj->key_filter = intVal(list_nth(priv, GJ_PRIV_KEY_FILTER)) != 0;
	gj->n_memo = intVal(list_nth(priv, GJ_PRIV_MEMO));
	gj->key_mixed = gj->inner_key2 != 0 &&
		(gj->outer_type == INT8OID || gj->inner_type == INT8OID ||
		 gj->outer_type2 == INT8OID || gj->inner_type2 == INT8OID);
	gj->key_width = (gj->outer_type == INT8OID || gj->inner_type == INT8OID ||
					 gj->inner_key2 != 0) ? 8 : 4;
}

Node *
gpuhash_join_create_state(CustomScan *cscan)
{
	GpuJoinState *gj;

	/* the first of the node's callbacks in a parallel worker */
	gpuhash_settings_ready();
	gj = palloc0(sizeof(GpuJoinState));
	gpuhash_join_init_state(gj, cscan, &gpu_join_exec_methods);
	return (Node *) gj;
}

/* Is ps a GpuHashJoin's own node (not GpuHashAggregate's)? */
bool
gpuhash_join_is_plain_join(const PlanState *ps)
{
	return IsA(ps, CustomScanState) &&
		((const CustomScanState *) ps)->methods == &gpu_join_exec_methods;
}

/* Can the inner columns be kept in the table (join_state.h)? */
static void
set_inline_ok(GpuJoinState *gj, TupleDesc desc)
{
	/*
	 * A memo is kept by build row number, which a payload in the table is
	 * not; a mixed key gives back neither of its columns.
	 */
	gj->inline_ok = gj->keep_inner && gj->memo == NULL && desc->natts <= GJ_INLINE_MAX_COLS &&
		!GPUHASH_JOIN_IS_RIGHT(gj->jointype) && !gj->key_mixed;
	gj->inner_val = -1;
	gj->payload_width = gj->key_width;
	for (int c = 0; c < desc->natts && gj->inline_ok; c++)
	{
		if (c == gj->inner_key - 1 || c == gj->inner_key2 - 1)
			continue;
		if (gj->inner_val >= 0 || !TupleDescAttr(desc, c)->attbyval)
			gj->inline_ok = false;
		else
			gj->inner_val = c;
	}
}

/* The join clauses other than the hash clause (join_node.h). */
List *
gpuhash_join_quals(CustomScan *cscan, GpuJoinState *gj)
{
	return list_copy_head(list_copy_tail(cscan->custom_exprs, 1), gj->n_join_quals);
}

/* Their parts kept per build row, which follow them. */
List *
gpuhash_join_memo_exprs(CustomScan *cscan, GpuJoinState *gj)
{
	return list_copy_head(list_copy_tail(cscan->custom_exprs, 1 + gj->n_join_quals), gj->n_memo);
}

/* A GpuHashAggregate's filter of the joined rows, last (a plain join's is its plan's qual). */
List *
gpuhash_join_row_quals(CustomScan *cscan, GpuJoinState *gj)
{
	return list_copy_tail(cscan->custom_exprs, 1 + gj->n_join_quals + gj->n_memo);
}

void
gpuhash_join_begin(CustomScanState *node, EState *estate, int eflags)
{
	GpuJoinState *gj = (GpuJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *outer;
	PlanState  *inner;

	outer = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	inner = ExecInitNode(lsecond(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make2(outer, inner);
	gj->n_outer = ExecGetResultType(outer)->natts;
	gj->n_inner = ExecGetResultType(inner)->natts;
	gj->n_join_quals = list_length(cscan->custom_exprs) - 1 - gj->n_memo - gj->n_row_quals;
	gj->join_qual = ExecInitQual(gpuhash_join_quals(cscan, gj), &node->ss.ps);
	gpuhash_pair_memo_begin(gj, gpuhash_join_memo_exprs(cscan, gj));
	gj->row_qual = ExecInitQual(gpuhash_join_row_quals(cscan, gj), &node->ss.ps);
	gj->keep_inner = gj->jointype == JOIN_INNER || gj->jointype == JOIN_LEFT ||
		GPUHASH_JOIN_IS_RIGHT(gj->jointype) || gj->join_qual != NULL;
	set_inline_ok(gj, ExecGetResultType(inner));
	gj->outer_reader = gpuhash_heap_reader_create(outer);
	gj->inner_reader = gpuhash_heap_reader_create(inner);
	if (gpuhash_chain_batches)
		gpuhash_join_link_child(gj, outer);
	gj->row_values = palloc(Max(Max(gj->n_outer, gj->n_inner), 1) * sizeof(Datum));
	gj->row_isnull = palloc(Max(Max(gj->n_outer, gj->n_inner), 1) * sizeof(bool));

	gj->run_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuHashJoin build",
										ALLOCSET_DEFAULT_SIZES);
	gj->batch_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuHashJoin batch",
										  ALLOCSET_DEFAULT_SIZES);
	gj->batch_rows = (uint64) gpuhash_batch_rows;

	/*
	 * A backend's first GPU context is made meanwhile, by a helper thread,
	 * while the build side is read (device.c); not for a plain EXPLAIN, and
	 * not in a worker that will probe on the CPU.
	 */
	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0 &&
		(!IsParallelWorker() || gpuhash_parallel_worker_gpu))
		gpuhash_gpu_context_begin();
}

/*
 * Batches probed on the CPU are kept small enough to stay in the core's
 * caches between being written and being probed and folded: a batch that
 * spills to memory is read back from it (bench/NOTES.md, section 13).  On
 * the GPU a batch is also a transfer, and a larger one costs fewer round
 * trips, but its rows wait in host memory all the same: TPC-H q02's serial
 * join of 1.6 M wide outer rows ran 2.97 s in GPU batches of a million
 * against the CPU twin's 2.10 s, and level with it (2.57 s against 2.55 s)
 * in batches of a quarter million (section 27).
 */
#define GPUHASH_CPU_BATCH_ROWS 65536
#define GPUHASH_GPU_BATCH_ROWS 262144

/*
 * A node with no join (GpuHashAggregate over one scan, or over a plan of
 * PostgreSQL's): its child's rows are read in batches, as a join's outer
 * side (directly from the heap where the child is a plain Seq Scan), and
 * all of them are folded.
 * Nothing is built and no device is used, so the batches are the CPU's.
 */
void
gpuhash_join_begin_scan(CustomScanState *node, EState *estate, int eflags)
{
	GpuJoinState *gj = (GpuJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *outer;

	outer = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(outer);
	gj->scan_only = true;
	gj->n_outer = ExecGetResultType(outer)->natts;
	gj->outer_reader = gpuhash_heap_reader_create(outer);
	gj->row_values = palloc(Max(gj->n_outer, 1) * sizeof(Datum));
	gj->row_isnull = palloc(Max(gj->n_outer, 1) * sizeof(bool));
	gj->batch_cxt = AllocSetContextCreate(estate->es_query_cxt, "GpuHashAggregate batch",
										  ALLOCSET_DEFAULT_SIZES);
	gj->batch_rows = Min((uint64) gpuhash_batch_rows, GPUHASH_CPU_BATCH_ROWS);
	gpuhash_store_init(&gj->outer, gj->batch_cxt, ExecGetResultType(outer), true);
}

/*
 * The participants of a parallel plan share out the outer side by reading
 * it, a batch at a time, and each probes and folds its batches after
 * reading them: a GPU participant's batch of a million rows could be most of
 * a small outer side, left to it alone while the others wait (TPC-H q13's
 * leader folded 3.6 times a worker's rows, bench/NOTES.md section 27).  So
 * its batches are at most a sixteenth of a participant's estimated share.
 */
#define GPUHASH_SHARE_BATCHES 16

static void
fit_batch_to_device(GpuJoinState *gj)
{
	gj->batch_rows = (uint64) gpuhash_batch_rows;
	if (ght_ctx_device(gj->ctx) == GHT_CPU)
		gj->batch_rows = Min(gj->batch_rows, GPUHASH_CPU_BATCH_ROWS);
	else if (gj->shared == NULL)
		gj->batch_rows = Min(gj->batch_rows, GPUHASH_GPU_BATCH_ROWS);
	else
	{
		/*
		 * Not GPUHASH_GPU_BATCH_ROWS here: the W suite was measured with a
		 * leader's batches of a million, and with a quarter million (run
		 * 82) W7 took 2.29 s, against 1.55-1.78 s before on two hosts and
		 * 2.42 s on a slower one (runs 71, 77, 73): not separated from the
		 * host, so left as it was measured (bench/NOTES.md, section 27).
		 */
		double		share = ((PlanState *) linitial(gj->css.custom_ps))->plan->plan_rows;
		uint64		cap = Max((uint64) (share / GPUHASH_SHARE_BATCHES), GPUHASH_CPU_BATCH_ROWS);

		gj->batch_rows = Min(gj->batch_rows, cap);
	}
}

/* target load of a linear table shared with CPU workers */
#define GPUHASH_SHARED_LINEAR_LOAD 0.7

/* Handles for the core objects of a build; they live in run_cxt. */
static void
new_build_handles(GpuJoinState *gj)
{
	gj->table = gpuhash_res_new(gj->run_cxt, gj->ctx, GPUHASH_RES_TABLE);
	gj->build_keys = gpuhash_res_new(gj->run_cxt, gj->ctx, GPUHASH_RES_HOST);
}

/*
 * Free everything of the build side (rows, keys, table: the core objects go
 * with run_cxt's reset callbacks) and ready new handles for the next build.
 */
void
gpuhash_join_reset_build_memory(GpuJoinState *gj)
{
	/* the reader (and its thread) let go of the key filter before it is freed */
	if (gj->kf_words)
	{
		if (gj->outer_reader)
			gpuhash_heap_reader_set_key_filter(gj->outer_reader, NULL, 0, gj->outer_key - 1,
											   gj->outer_type, -1, InvalidOid, false);
		pfree(gj->kf_words);
	}
	gj->kf_words = NULL;
	gj->kf_nwords = 0;
	MemoryContextReset(gj->run_cxt);
	gj->table = gj->build_keys = NULL;
	if (gj->ctx)
		new_build_handles(gj);
}

static void
overlap_reset_callback(void *arg)
{
	GpuJoinState *gj = arg;

	if (gj->overlap)
	{
		gpuhash_overlap_destroy(gj->overlap);
		gj->overlap = NULL;
	}
}

/*
 * Probe with a helper thread (probe_overlap.c) when this participant probes
 * the shared image on the CPU and the probe's results per key are bounded:
 * a flag per key (semi and anti joins without other join clauses), or a
 * match per key at most (inner, left, right semi and right anti joins on
 * unique build keys).  The helper lives as long as the build: it goes with
 * run_cxt.
 */
void
gpuhash_join_start_overlap(GpuJoinState *gj, const void *image, uint64 image_bytes)
{
	ght_stats	st;
	bool		pairs = gj->jointype == JOIN_INNER || gj->jointype == JOIN_LEFT ||
		GPUHASH_JOIN_IS_RIGHT(gj->jointype);
	const char *why;
	MemoryContextCallback *cb;

	if (!gpuhash_overlap_probes || gj->overlap != NULL || ght_ctx_device(gj->ctx) != GHT_CPU)
		return;
	ght_table_brief(gj->table->ptr, &st);
	if (pairs ? st.rows != st.distinct_keys : gj->join_qual != NULL)
		return;
	cb = MemoryContextAlloc(gj->run_cxt, sizeof(MemoryContextCallback));
	gj->overlap = gpuhash_overlap_create(image, image_bytes, gj->batch_rows, pairs, &why);
	if (gj->overlap == NULL)
	{
		elog(DEBUG1, "GpuHashJoin: probing without a helper thread: %s", why);
		return;
	}
	/* a handful of chunks a batch, so that the last one is soon probed */
	gj->overlap_chunk = Max(gj->batch_rows / 16, 1024);
	cb->func = overlap_reset_callback;
	cb->arg = gj;
	MemoryContextRegisterResetCallback(gj->run_cxt, cb);
}

/* The device context, created on first use (its time is setup). */
ght_ctx *
gpuhash_join_ctx(GpuJoinState *gj)
{
	if (gj->ctx == NULL)
	{
		instr_time	start;
		MemoryContext cxt = gj->css.ss.ps.state->es_query_cxt;

		INSTR_TIME_SET_CURRENT(start);

		/*
		 * A worker is a fresh process: a GPU context would cost it about a
		 * second and half a gigabyte of device memory (bench/NOTES.md), more
		 * than probing its share on the CPU, so by default it does not.
		 */
		if ((IsParallelWorker() && !gpuhash_parallel_worker_gpu) || gj->build_on_cpu)
			gj->ctx = gpuhash_cpu_ctx();
		else
			gj->ctx = gpuhash_current_ctx();
		gj->stats.setup_ms = elapsed_ms_since(start);
		gj->stats.device = ght_ctx_device(gj->ctx);
		fit_batch_to_device(gj);
		new_build_handles(gj);
		gj->outer_keys = gpuhash_res_new(cxt, gj->ctx, GPUHASH_RES_HOST);
		gj->found = gpuhash_res_new(cxt, gj->ctx, GPUHASH_RES_HOST);
		gj->probe = gpuhash_res_new(cxt, gj->ctx, GPUHASH_RES_PROBE);
	}
	return gj->ctx;
}

/*
 * The next row of a side into values and isnull: from its heap reader when it
 * has one, from the GpuHashJoin below's pairs, else from its plan; false at
 * the end.
 */
static inline bool
next_row(GpuJoinState *gj, PlanState *side, GpuhashHeapReader *reader,
		 Datum **values, bool **isnull)
{
	TupleTableSlot *slot;

	if (gj->outer_child != NULL && side == linitial(gj->css.custom_ps))
		return gpuhash_join_next_child_pair(gj, values, isnull);

	if (reader != NULL)
	{
		*values = gj->row_values;
		*isnull = gj->row_isnull;
		return gpuhash_heap_reader_next(reader, gj->row_values, gj->row_isnull);
	}
	slot = ExecProcNode(side);
	if (TupIsNull(slot))
		return false;
	slot_getallattrs(slot);
	*values = slot->tts_values;
	*isnull = slot->tts_isnull;
	return true;
}

/*
 * The hash key of a row whose key is the column at attno of type, or, with
 * attno2, that column's and attno2's values packed or mixed
 * (gpuhash_two_keys).  false when a key column is NULL: the row can match
 * nothing.
 */
static inline bool
row_key(const Datum *values, const bool *isnull, AttrNumber attno, Oid type,
		AttrNumber attno2, Oid type2, bool mixed, int64 *key)
{
	if (isnull[attno - 1])
		return false;
	if (attno2 == 0)
	{
		*key = gpuhash_key_value(type, values[attno - 1]);
		return true;
	}
	if (isnull[attno2 - 1])
		return false;
	*key = gpuhash_two_keys(gpuhash_key_value(type, values[attno - 1]),
							gpuhash_key_value(type2, values[attno2 - 1]), mixed);
	return true;
}

static inline bool
inner_row_key(const GpuJoinState *gj, const Datum *values, const bool *isnull, int64 *key)
{
	return row_key(values, isnull, gj->inner_key, gj->inner_type,
				   gj->inner_key2, gj->inner_type2, gj->key_mixed, key);
}

static inline bool
outer_row_key(const GpuJoinState *gj, const Datum *values, const bool *isnull, int64 *key)
{
	return row_key(values, isnull, gj->outer_key, gj->outer_type,
				   gj->outer_key2, gj->outer_type2, gj->key_mixed, key);
}

static inline void
put_key(void *keys, int width, uint64 i, int64 v)
{
	if (width == 4)
		((int32 *) keys)[i] = (int32) v;
	else
		((int64 *) keys)[i] = v;
}

/*
 * Read the whole inner plan (or this participant's share of it) into store,
 * and return its keys, in plain host memory (a handle in run_cxt): the
 * device context is not needed yet, so one still being made
 * (gpuhash_gpu_context_begin) is waited for only to build.  Rows with a NULL
 * key can never match, and no join type returns unmatched inner rows, so
 * they are dropped.
 */
GpuhashRes *
gpuhash_join_collect(GpuJoinState *gj, GpuhashStore *store, uint64 *nkeys)
{
	PlanState  *inner = lsecond(gj->css.custom_ps);
	GpuhashRes *keys_res = gpuhash_res_new(gj->run_cxt, gpuhash_cpu_ctx(), GPUHASH_RES_HOST);
	int			w = gj->key_width;
	uint64		n = 0,
				cap = 0;
	void	   *keys = NULL;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	gpuhash_store_init(store, gj->run_cxt, ExecGetResultType(inner), gj->keep_inner);
	if (gj->inner_reader)
	{
		gpuhash_heap_reader_set_participants(gj->inner_reader, gj->nparticipants);
		gpuhash_heap_reader_begin(gj->inner_reader);
	}
	for (;;)
	{
		Datum	   *values;
		bool	   *isnull;
		int64		key;

		if (!next_row(gj, inner, gj->inner_reader, &values, &isnull))
			break;
		if (!inner_row_key(gj, values, isnull, &key))
			continue;
		if (n == cap)
		{
			cap = Max(cap * 2, 65536);
			keys = gpuhash_res_host_grow(keys_res, n * w, cap * w);
		}
		put_key(keys, w, n, key);
		n++;
		if (gj->keep_inner)
			gpuhash_store_append(store, values, isnull);
		else
			store->nrows++;
	}
	if (gj->inner_reader)
		gpuhash_heap_reader_pause(gj->inner_reader);
	*nkeys = n;
	gj->stats.collect_ms += elapsed_ms_since(start);
	return keys_res;
}

/* Room for nkeys payloads of the inner value column (freed by the caller). */
void *
gpuhash_join_payload_array(GpuJoinState *gj, uint64 nkeys)
{
	return MemoryContextAllocHuge(gj->run_cxt, Max(nkeys, 1) * gj->payload_width);
}

/*
 * Hash keys[0..nkeys) into gj->table.  The payloads are the inner values
 * when given (gj->inner_in_table), else the build row numbers.
 */
void
gpuhash_join_build_table(GpuJoinState *gj, const void *keys, const void *payloads, uint64 nkeys)
{
	ght_build_opts opts;
	ght_stats	st;
	ght_status	s;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	if (payloads != NULL)
		ght_build_opts_init(&opts, gj->key_width, gj->payload_width);
	else
	{
		ght_build_opts_init(&opts, gj->key_width, 4);
		opts.flags = GHT_BUILD_ROWNUM_PAYLOAD;
	}
	/*
	 * A table that CPU workers will probe gets the CPU's method, and when
	 * that is linear probing, a denser fill than the default: a table half
	 * the size takes half as long to share, and the workers' probes miss
	 * the caches less (bench/NOTES.md, section 13).
	 */
	if (gj->shared != NULL && !gpuhash_parallel_worker_gpu)
	{
		opts.method = ght_choose_method(GHT_CPU, nkeys, gj->key_width, opts.flags);
		if (opts.method == GHT_LINEAR)
			opts.load_factor = GPUHASH_SHARED_LINEAR_LOAD;
	}
	s = ght_build(gj->ctx, &opts, keys, payloads, nkeys, 0, (ght_table **) &gj->table->ptr);

	/*
	 * A table that does not fit on the GPU (gpuhash.max_device_memory, or
	 * the device's own memory) is built by the CPU twin in host memory
	 * instead: the same table, probed the same way, only slower.
	 */
	if ((s == GHT_ERR_MEM_LIMIT || s == GHT_ERR_DEVICE_NOMEM) &&
		ght_ctx_device(gj->ctx) == GHT_GPU)
	{
		elog(DEBUG1, "GpuHashJoin: table of " UINT64_FORMAT " keys built on the CPU: %s",
			 nkeys, ght_ctx_error_detail(gj->ctx));
		gj->ctx = gpuhash_cpu_ctx();
		gj->stats.device = GHT_CPU;
		fit_batch_to_device(gj);
		s = ght_build(gj->ctx, &opts, keys, payloads, nkeys, 0, (ght_table **) &gj->table->ptr);
	}
	gpuhash_check(gj->ctx, s, "build the hash table");
	gj->stats.build_ms += elapsed_ms_since(start);
	gj->stats.built = true;
	gj->stats.build_rows = nkeys;
	gj->stats.inner_in_table = gj->inner_in_table;
	ght_table_brief(gj->table->ptr, &st);
	gj->stats.method = st.method;
	gj->stats.table_bytes = st.bytes;
}

/*
 * The words of a key filter for nkeys keys, if this node tests its outer
 * rows against one: it was planned (join_path.c), the outer side is read
 * directly, and the join drops the rows without a match; else 0.
 */
uint64
gpuhash_join_key_filter_words(GpuJoinState *gj, double nkeys)
{
	if (!gj->key_filter || gj->scan_only || gj->outer_reader == NULL || gj->outer_child != NULL ||
		(gj->jointype != JOIN_INNER && gj->jointype != JOIN_SEMI &&
		 !GPUHASH_JOIN_IS_RIGHT(gj->jointype)))
		return 0;
	return ght_keyfilter_words(nkeys);
}

/*
 * A zeroed key filter of nwords words for this build.  It is freed with the
 * build (gpuhash_join_reset_build_memory), but allocated in the query's
 * context, as the reader is, not in run_cxt: when a failed query's memory
 * goes, child contexts such as run_cxt are freed before the query context's
 * callbacks stop the reader's thread, which may still be testing keys.
 */
uint64 *
gpuhash_join_new_key_filter(GpuJoinState *gj, uint64 nwords)
{
	gj->kf_nwords = nwords;
	gj->kf_words = MemoryContextAllocExtended(gj->css.ss.ps.state->es_query_cxt,
											  nwords * sizeof(uint64),
											  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	return gj->kf_words;
}

/* The outer reader tests its rows against the key filter from now on. */
static void
set_reader_key_filter(GpuJoinState *gj)
{
	gpuhash_heap_reader_set_key_filter(gj->outer_reader, gj->kf_words, gj->kf_nwords,
									   gj->outer_key - 1, gj->outer_type,
									   gj->outer_key2 - 1, gj->outer_type2, gj->key_mixed);
	gj->stats.kf_bytes = gj->kf_nwords * sizeof(uint64);
}

/*
 * The build is done: the outer reader tests its rows against the key
 * filter, if there is one, unless it has since the build began
 * (gpuhash_join_read_early): a reader's filter is not changed mid-scan.
 */
static void
use_key_filter(GpuJoinState *gj)
{
	if (gj->kf_words == NULL || gj->table_empty || gj->early_kf)
		return;
	set_reader_key_filter(gj);
}

/* The key filter's figures, from the reader, for EXPLAIN ANALYZE. */
void
gpuhash_join_note_key_filter(GpuJoinState *gj)
{
	if (gj->outer_reader && gj->stats.kf_bytes > 0)
		gpuhash_heap_reader_key_filter_stats(gj->outer_reader, &gj->stats.kf_removed,
											 &gj->stats.kf_dropped);
}

static void
build_local(GpuJoinState *gj)
{
	GpuhashRes *keys;
	uint64		nkeys;
	void	   *payloads = NULL;
	uint64		kf_nwords;

	keys = gpuhash_join_collect(gj, &gj->inner, &nkeys);
	kf_nwords = gpuhash_join_key_filter_words(gj, (double) nkeys);
	if (kf_nwords > 0)
		ght_keyfilter_add(gpuhash_join_new_key_filter(gj, kf_nwords), kf_nwords, keys->ptr,
						  gj->key_width, nkeys, false);
	gpuhash_join_ctx(gj);
	/* with no value column, row numbers serve as payloads and go unread */
	gj->inner_in_table = gj->inline_ok;
	if (gj->inline_ok && gj->inner_val >= 0)
	{
		payloads = gpuhash_join_payload_array(gj, nkeys);
		if (!gpuhash_store_payloads(&gj->inner, gj->inner_val, gj->payload_width, payloads))
		{
			gj->inner_in_table = false;
			pfree(payloads);
			payloads = NULL;
		}
	}
	gpuhash_join_build_table(gj, keys->ptr, payloads, nkeys);
	gpuhash_res_release(keys);
	if (payloads)
		pfree(payloads);
	if (gj->inner_in_table)
		gpuhash_store_drop_columns(&gj->inner);
}

void
gpuhash_join_ensure_built(GpuJoinState *gj)
{
	if (!gj->built)
		build(gj);

	/*
	 * An empty table matches nothing, so an inner or semi join returns no
	 * rows without reading its outer side, as PostgreSQL's hash join does;
	 * like it, it then computes nothing there (a key expression that would
	 * fail on some outer row does not).  Anti and left joins return every
	 * outer row then, and read them all.
	 */
	if ((gj->jointype == JOIN_INNER || gj->jointype == JOIN_SEMI ||
		 GPUHASH_JOIN_IS_RIGHT(gj->jointype)) && gj->table_empty)
	{
		gj->outer_done = true;
		gj->held_batch = false;
	}
}

/* The outer batch: columns, keys, and per-row flags (after the device context). */
static void
prepare_outer(GpuJoinState *gj)
{
	gpuhash_store_init(&gj->outer, gj->batch_cxt,
					   ExecGetResultType(linitial(gj->css.custom_ps)), true);
	gpuhash_res_host_alloc(gj->outer_keys, gj->batch_rows * gj->key_width);
	if (gj->jointype != JOIN_INNER && !GPUHASH_JOIN_IS_RIGHT(gj->jointype))
	{
		gpuhash_res_host_alloc(gj->found, gj->batch_rows);
		gj->row_match = MemoryContextAllocHuge(gj->batch_cxt, gj->batch_rows);
		if (gj->jointype == JOIN_ANTI || gj->jointype == JOIN_LEFT)
			gj->key_row = MemoryContextAllocHuge(gj->batch_cxt, gj->batch_rows * sizeof(uint32));
	}
	gj->outer_ready = true;
}

/*
 * May this participant read its first outer batch while another builds the
 * shared table?  A worker probing on the CPU whose outer side is a table it
 * reads directly: reading it waits on nothing the builder does.  Not a chain
 * (the join below has a shared build of its own, whose barrier the builder
 * of this one could be held up by), nor a right join (its outer side is the
 * build).
 */
bool
gpuhash_join_can_read_early(GpuJoinState *gj)
{
	return gpuhash_read_during_build && IsParallelWorker() && !gpuhash_parallel_worker_gpu &&
		gj->outer_reader != NULL &&
		gj->outer_child == NULL && !gj->scan_only &&
		(gj->jointype == JOIN_INNER || gj->jointype == JOIN_SEMI ||
		 gj->jointype == JOIN_ANTI || gj->jointype == JOIN_LEFT);
}

/*
 * Fill the first outer batch while the table is built elsewhere, until the
 * builder sets *stop (it has shared the table) or the batch is full; the
 * batch is then held for gpuhash_join_load_batch.  The key filter, if any,
 * is already this participant's copy of the complete shared one; the reader
 * keeps it for the whole scan.
 */
void
gpuhash_join_read_early(GpuJoinState *gj, pg_atomic_uint32 *stop)
{
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	gpuhash_join_ctx(gj);
	if (gj->kf_words != NULL)
	{
		set_reader_key_filter(gj);
		gj->early_kf = true;
	}
	if (!gj->outer_ready)
		prepare_outer(gj);
	gpuhash_store_reset(&gj->outer);
	gj->nkeys = 0;
	gj->held_done = false;
	gj->read_stop = stop;
	PG_TRY();
	{
		fill_batch(gj, NULL);
	}
	PG_FINALLY();
	{
		gj->read_stop = NULL;
	}
	PG_END_TRY();
	gj->held_batch = true;
	gj->stats.early_rows = gj->outer.nrows;
	gj->stats.early_ms = elapsed_ms_since(start);
	gj->stats.read_ms += gj->stats.early_ms;
}

static void
build(GpuJoinState *gj)
{
	ght_stats	st;

	gj->stats.ran = true;
	gj->built = true;
	if (gj->shared == NULL)
		build_local(gj);
	else if (!gpuhash_join_build_shared(gj))
	{
		/* a right join's participant that came after the others were done */
		gj->table_empty = true;
		gj->rs_phase = RS_DONE;
		return;
	}
	ght_table_brief(gj->table->ptr, &st);
	gj->table_empty = st.rows == 0;
	use_key_filter(gj);
	if (GPUHASH_JOIN_IS_RIGHT(gj->jointype))
		gpuhash_join_right_begin(gj);
	if (!gj->outer_ready)
		prepare_outer(gj);
}

static void
note_device_bytes(GpuJoinState *gj)
{
	uint64		b = ght_ctx_device_bytes(gj->ctx);

	if (b > gj->stats.peak_device_bytes)
		gj->stats.peak_device_bytes = b;
}

/*
 * Whether a row with this key stays out of the outer batch: a NULL key
 * matches nothing in an inner or semi join (anti and left joins keep the
 * row, unmatched), and a key probed lately need not be probed again
 * (recent_keys).
 */
static inline bool
batch_skips(GpuJoinState *gj, bool keynull, int64 key)
{
	if (keynull)
		return gj->jointype != JOIN_ANTI && gj->jointype != JOIN_LEFT;
	if (gj->recent_keys != NULL && gpuhash_recent_key(gj->recent_keys, key))
	{
		gj->stats.repeat_keys++;
		return true;
	}
	return false;
}

/* Has the batch, with row, its gpuhash.staging_memory (keys of key_width bytes a row)? */
static inline bool
batch_past_staging(GpuJoinState *gj, uint64 row, int key_width)
{
	return (row + 1) % GPUHASH_STAGING_CHECK_ROWS == 0 &&
		(row + 1) * (gj->outer.stride + key_width) + gj->outer.arena_used >= gpuhash_staging_bytes();
}

/*
 * Take the key of the batch's row into its keys, handing them to the
 * helper (ov) as they are written; true once the batch has its
 * gpuhash.staging_memory.
 */
static inline bool
batch_takes_key(GpuJoinState *gj, GpuhashOverlap *ov, uint64 row, bool keynull, int64 key)
{
	int			w = gj->key_width;

	if (!keynull)
	{
		if (gj->key_row)
			gj->key_row[gj->nkeys] = (uint32) row;
		put_key(gj->outer_keys->ptr, w, gj->nkeys++, key);
		if (ov && gj->nkeys % gj->overlap_chunk == 0)
			gpuhash_overlap_post(ov, gj->nkeys);
	}
	return batch_past_staging(gj, row, w);
}

/*
 * Fill the outer batch from the child's pairs, each written in place from
 * the child's batch and build rows (gpuhash_join_pair_copy_ok), with what
 * fill_batch does for a row.  A pair used to be copied whole into the
 * child's scan tuple, then into this node's row, then into its batch: a
 * quarter of a CPU-only W8 (bench/NOTES.md section 41).  Returns the pairs
 * read.
 */
static uint64
fill_from_child_pairs(GpuJoinState *gj, GpuhashOverlap *ov)
{
	GpuJoinState *child = gj->outer_child;
	uint64		nread = 0;

	while (gj->outer.nrows < gj->batch_rows)
	{
		ChildPair	p;
		Datum	   *v;
		bool	   *n;
		bool		keynull;
		int64		key = 0;

		if ((child->emit != EMIT_PAIRS || child->pos >= child->npairs) &&
			!gpuhash_join_child_has_pairs(gj))
		{
			gj->outer_done = true;
			break;
		}
		nread++;
		gpuhash_child_pair_at(child, child->pos++, &p);
		v = gpuhash_store_slot(&gj->outer);
		n = (bool *) (v + gj->outer.ncols);
		for (int c = 0; c < gj->n_outer; c++)
			v[c] = gpuhash_child_pair_column(child, &p, gj->child_col[c], &n[c]);
		keynull = !outer_row_key(gj, v, n, &key);
		if (batch_skips(gj, keynull, key))
			continue;
		if (batch_takes_key(gj, ov, gpuhash_store_commit(&gj->outer), keynull, key))
			break;
	}
	return nread;
}

/*
 * Fill the outer batch, up to gpuhash.batch_rows rows or about
 * gpuhash.staging_memory bytes (batch_skips says which rows stay out).  A
 * helper (ov) is handed the keys as they are written.
 */
static void
fill_batch(GpuJoinState *gj, GpuhashOverlap *ov)
{
	PlanState  *outer = linitial(gj->css.custom_ps);
	Instrumentation *child_instr = gj->outer_child ? outer->instrument : NULL;
	uint64		nread = 0;

	if (gj->outer_reader)
	{
		gpuhash_heap_reader_set_participants(gj->outer_reader, gj->nparticipants);
		gpuhash_heap_reader_begin(gj->outer_reader);
	}
	/*
	 * A child read as pairs is not run by ExecProcNode: do what it would,
	 * the rescan that a changed parameter asks for, and the counting.
	 */
	if (gj->outer_child && outer->chgParam != NULL)
		ExecReScan(outer);
	if (child_instr)
		InstrStartNode(child_instr);
	/* the child's stores, made by its build, say whether its pairs copy in place */
	if (gj->outer_child && !gj->scan_only)
		gpuhash_join_ensure_built(gj->outer_child);
	if (gj->outer_child && gpuhash_join_pair_copy_ok(gj))
		nread = fill_from_child_pairs(gj, ov);
	else
		while (gj->outer.nrows < gj->batch_rows)
		{
			Datum	   *values;
			bool	   *isnull;
			bool		keynull;
			uint64		row;
			int64		key = 0;

			/* read early: stop soon after the table is shared */
			if (unlikely(gj->read_stop != NULL) && (nread & 63) == 0 &&
				pg_atomic_read_u32(gj->read_stop) != 0)
				break;
			if (!next_row(gj, outer, gj->outer_reader, &values, &isnull))
			{
				if (gj->read_stop != NULL)
					gj->held_done = true;
				else
					gj->outer_done = true;
				break;
			}
			nread++;
			if (gj->scan_only)
			{
				/* no join: every row is kept, and has no key */
				row = gpuhash_store_append(&gj->outer, values, isnull);
				if (batch_past_staging(gj, row, 0))
					break;
				continue;
			}
			keynull = !outer_row_key(gj, values, isnull, &key);
			if (batch_skips(gj, keynull, key))
				continue;
			row = gpuhash_store_append(&gj->outer, values, isnull);
			if (batch_takes_key(gj, ov, row, keynull, key))
				break;
		}
	if (gj->outer_reader)
		gpuhash_heap_reader_pause(gj->outer_reader);
	if (child_instr)
		InstrStopNode(child_instr, nread);
}

/* Read the next outer batch; with a helper, its keys are probed meanwhile. */
void
gpuhash_join_load_batch(GpuJoinState *gj)
{
	GpuhashOverlap *ov = gj->overlap;
	ght_status	s;
	double		probe_ms;
	const char *detail;
	instr_time	start;

	gj->overlapped_batch = false;
	if (gj->held_batch)
	{
		/* read while the table was built: probed now, without the helper */
		gj->held_batch = false;
		if (gj->held_done)
			gj->outer_done = true;
		gj->held_done = false;
		gj->stats.outer_rows += gj->outer.nrows;
		return;
	}
	gpuhash_store_reset(&gj->outer);
	gj->nkeys = 0;
	INSTR_TIME_SET_CURRENT(start);
	if (ov == NULL)
	{
		fill_batch(gj, NULL);
		gj->stats.read_ms += elapsed_ms_since(start);
	}
	else
	{
		gpuhash_overlap_start(ov, gj->outer_keys->ptr, gj->found ? gj->found->ptr : NULL);
		PG_TRY();
		{
			fill_batch(gj, ov);
		}
		PG_CATCH();
		{
			/* the helper must let go of the batch before it is freed */
			gpuhash_overlap_abandon(ov);
			PG_RE_THROW();
		}
		PG_END_TRY();
		gj->stats.read_ms += elapsed_ms_since(start);
		INSTR_TIME_SET_CURRENT(start);
		s = gpuhash_overlap_finish(ov, gj->nkeys, &gj->ov_pidx, &gj->ov_brow, &gj->ov_npairs,
								   &probe_ms, &detail);
		gj->stats.probe_wait_ms += elapsed_ms_since(start);
		gj->stats.probe_ms += probe_ms;
		gj->stats.overlapped = true;
		if (s != GHT_OK)
			gpuhash_report_detail(s, "probe the hash table", detail);
		gj->overlapped_batch = true;
	}
	gj->stats.outer_rows += gj->outer.nrows;
}

/* The inner columns of a match kept in the table (gpuhash_inner_table_datum). */
static inline void
inner_from_table(GpuJoinState *gj, uint64 kidx, uint64 payload, Datum *values, bool *isnull)
{
	int64		key = gpuhash_key_at(gj->outer_keys->ptr, gj->key_width, kidx);

	for (int c = 0; c < gj->n_inner; c++)
	{
		isnull[c] = false;
		values[c] = gpuhash_inner_table_datum(gj, c, payload, key);
	}
}

/*
 * The scan tuple of outer row orow, with the inner row of ref (a row number,
 * or the payload when the inner values are in the table, matched by probe
 * key kidx) when matched, else with NULL inner columns.
 */
TupleTableSlot *
gpuhash_join_scan_tuple(GpuJoinState *gj, uint64 orow, bool matched, uint64 kidx, uint64 ref)
{
	TupleTableSlot *slot = gj->css.ss.ss_ScanTupleSlot;
	Datum	   *values = slot->tts_values;
	bool	   *isnull = slot->tts_isnull;
	int			c;

	ExecClearTuple(slot);
	gpuhash_store_get(&gj->outer, orow, values, isnull);
	if (matched && gj->inner_in_table)
		inner_from_table(gj, kidx, ref, values + gj->n_outer, isnull + gj->n_outer);
	else if (matched && gj->keep_inner)
		gpuhash_store_get(&gj->inner, ref, values + gj->n_outer, isnull + gj->n_outer);
	else
		for (c = 0; c < gj->n_inner; c++)
		{
			values[gj->n_outer + c] = (Datum) 0;
			isnull[gj->n_outer + c] = true;
		}
	ExecStoreVirtualTuple(slot);
	if (gj->memo != NULL)
		gpuhash_pair_memo_fill(gj, slot, matched, ref);
	return slot;
}

static inline uint64
row_of_key(GpuJoinState *gj, uint64 k)
{
	return gj->key_row ? gj->key_row[k] : k;
}

/*
 * The pairs of a semi or anti join's probe with keys[0..nkeys) of the table,
 * at most cap a key (0: all), tested against the other join clauses until
 * one of a row's passes; kidx maps a probe index to the batch's key index
 * (NULL: the same).  got, if given, counts each key index's pairs.
 */
static void
test_pairs(GpuJoinState *gj, const void *keys, uint64 nkeys, uint64 cap, const uint32 *kidx,
		   uint32 *got)
{
	ExprContext *econtext = gj->css.ss.ps.ps_ExprContext;
	ght_probe  *p;

	gpuhash_check(gj->ctx,
				  ght_probe_begin_capped(gj->table->ptr, keys, nkeys, cap,
										 (ght_probe **) &gj->probe->ptr),
				  "probe the hash table");
	p = gj->probe->ptr;
	for (;;)
	{
		const uint32 *pidx;
		const uint64 *brow;
		uint64		m;

		gpuhash_check(gj->ctx, ght_probe_next(p, gj->batch_rows, &pidx, &brow, &m),
					  "probe the hash table");
		if (m == 0)
			break;
		for (uint64 j = 0; j < m; j++)
		{
			uint64		k = kidx ? kidx[pidx[j]] : pidx[j];
			uint64		row = row_of_key(gj, k);

			if (got)
				got[k]++;
			if (gj->row_match[row])
				continue;
			if ((j & 0xFFFF) == 0xFFFF)
				CHECK_FOR_INTERRUPTS();
			econtext->ecxt_scantuple = gpuhash_join_scan_tuple(gj, row, true, k, brow[j]);
			if (ExecQual(gj->join_qual, econtext))
				gj->row_match[row] = 1;
			ResetExprContext(econtext);
		}
	}
	gpuhash_res_release(gj->probe);
}

/*
 * Semi and anti joins with other join clauses: a row matches when one of
 * its pairs satisfies them.  Each key's first SEMI_FIRST_PAIRS pairs are
 * tested first; the keys that had that many, for rows none of them
 * satisfied, are probed again for SEMI_PAIRS_GROWTH times as many, and so
 * on, and past SEMI_LAST_CAP for all their pairs.  A key of many rows (a
 * skewed column) would otherwise hand every one of its rows to each probe
 * row, where one of the first usually decides: a row tests at most about
 * SEMI_PAIRS_GROWTH times as many pairs as it needs, or all of its key's
 * (and a few more) when none passes.  A semi join of a fuzzer case with
 * 100 000 rows a key ran 100 s.
 */
#define SEMI_FIRST_PAIRS 16
#define SEMI_PAIRS_GROWTH 16
#define SEMI_LAST_CAP 65536

/* Is key k, handed cap pairs this round, still undecided (its row unmatched)? */
static inline bool
undecided(GpuJoinState *gj, const uint32 *got, uint64 k, uint64 cap)
{
	return got[k] == cap && !gj->row_match[row_of_key(gj, k)];
}

static void
match_with_quals(GpuJoinState *gj)
{
	uint64		nkeys = gj->nkeys;
	uint32	   *got = MemoryContextAllocHuge(CurrentMemoryContext, Max(nkeys, 1) * sizeof(uint32));
	const char *keys = gj->outer_keys->ptr;
	const uint32 *idx = NULL;	/* this round's probe index -> key index (NULL: the same) */
	char	   *again_keys = NULL;
	uint32	   *again = NULL;
	uint64		n = nkeys;
	int			w = gj->key_width;

	for (uint64 cap = SEMI_FIRST_PAIRS; n > 0; cap *= SEMI_PAIRS_GROWTH)
	{
		uint64		m = 0;

		if (cap > SEMI_LAST_CAP)
		{
			test_pairs(gj, keys, n, 0, idx, NULL);
			break;
		}
		for (uint64 j = 0; j < n; j++)
			got[idx ? idx[j] : j] = 0;
		test_pairs(gj, keys, n, cap, idx, got);

		/* the keys left undecided, compacted in place after the first round */
		for (uint64 j = 0; j < n; j++)
			m += undecided(gj, got, idx ? idx[j] : j, cap);
		if (m == 0)
			break;
		if (again == NULL)
		{
			again = MemoryContextAllocHuge(CurrentMemoryContext, m * sizeof(uint32));
			again_keys = MemoryContextAllocHuge(CurrentMemoryContext, m * w);
		}
		m = 0;
		for (uint64 j = 0; j < n; j++)
		{
			uint64		k = idx ? idx[j] : j;

			if (undecided(gj, got, k, cap))
			{
				memmove(again_keys + m * w, keys + j * w, w);
				again[m++] = (uint32) k;
			}
		}
		keys = again_keys;
		idx = again;
		n = m;
		gj->stats.semi_rekeys += m;
		CHECK_FOR_INTERRUPTS();
	}
	if (again != NULL)
	{
		pfree(again);
		pfree(again_keys);
	}
	pfree(got);
}

/* Count the probes' transfers since *before (the context's figures then). */
static void
add_transfers(GpuJoinState *gj, const ght_transfer_stats *before)
{
	ght_transfer_stats now;

	ght_ctx_transfer_stats(gj->ctx, &now);
	gj->stats.xfer.to_device_bytes += now.to_device_bytes - before->to_device_bytes;
	gj->stats.xfer.from_device_bytes += now.from_device_bytes - before->from_device_bytes;
	gj->stats.xfer.to_device_ms += now.to_device_ms - before->to_device_ms;
	gj->stats.xfer.from_device_ms += now.from_device_ms - before->from_device_ms;
}

/* Probe with the batch's keys and set up what it emits. */
void
gpuhash_join_start_batch(GpuJoinState *gj)
{
	instr_time	start;
	ght_transfer_stats xfer;

	INSTR_TIME_SET_CURRENT(start);
	ght_ctx_transfer_stats(gj->ctx, &xfer);
	gj->stats.batches++;
	if (gj->jointype == JOIN_INNER || gj->jointype == JOIN_LEFT ||
		GPUHASH_JOIN_IS_RIGHT(gj->jointype))
	{
		/* a left join's rows that no pair passes are emitted after its pairs */
		if (gj->jointype == JOIN_LEFT)
			memset(gj->row_match, 0, gj->outer.nrows);
		if (gj->overlapped_batch)
			gj->overlap_pairs_left = true;
		else
			gpuhash_check(gj->ctx,
						  ght_probe_begin(gj->table->ptr, gj->outer_keys->ptr, gj->nkeys,
										  (ght_probe **) &gj->probe->ptr),
						  "probe the hash table");
		gj->npairs = gj->pos = 0;
		gj->emit = EMIT_PAIRS;
	}
	else
	{
		uint8	   *found = gj->found->ptr;

		memset(gj->row_match, 0, gj->outer.nrows);
		if (gj->join_qual != NULL)
			match_with_quals(gj);
		else
		{
			if (!gj->overlapped_batch)
				gpuhash_check(gj->ctx,
							  ght_contains(gj->table->ptr, gj->outer_keys->ptr, gj->nkeys, found),
							  "probe the hash table");
			for (uint64 k = 0; k < gj->nkeys; k++)
				gj->row_match[row_of_key(gj, k)] = found[k];
		}
		gj->row_pos = 0;
		gj->emit = EMIT_ROWS;
	}
	note_device_bytes(gj);
	add_transfers(gj, &xfer);
	gj->stats.probe_ms += elapsed_ms_since(start);
	/* a right semi or anti join returns nothing per batch: it marks, and reads on */
	if (GPUHASH_JOIN_IS_RIGHT(gj->jointype))
	{
		gpuhash_join_mark_build_rows(gj);
		gj->emit = EMIT_NONE;
	}
}

/*
 * Inner and left joins: the next pairs of the batch's probe into gj->pidx,
 * gj->brow, gj->npairs; false, with the probe released, when there are no
 * more.
 */
bool
gpuhash_join_next_pairs(GpuJoinState *gj)
{
	instr_time	start;
	ght_transfer_stats xfer;

	/* a helper's pairs come all at once */
	if (gj->overlapped_batch)
	{
		gj->pos = 0;
		gj->npairs = gj->overlap_pairs_left ? gj->ov_npairs : 0;
		gj->pidx = gj->ov_pidx;
		gj->brow = gj->ov_brow;
		gj->overlap_pairs_left = false;
		return gj->npairs > 0;
	}
	INSTR_TIME_SET_CURRENT(start);
	ght_ctx_transfer_stats(gj->ctx, &xfer);
	gpuhash_check(gj->ctx,
				  ght_probe_next(gj->probe->ptr, gj->batch_rows,
								 &gj->pidx, &gj->brow, &gj->npairs),
				  "probe the hash table");
	add_transfers(gj, &xfer);
	gj->stats.probe_ms += elapsed_ms_since(start);
	gj->pos = 0;
	if (gj->npairs == 0)
	{
		gpuhash_res_release(gj->probe);
		return false;
	}
	return true;
}

/* Room for a batch's row numbers (gj->fold_rows), made once. */
uint32 *
gpuhash_join_row_buffer(GpuJoinState *gj)
{
	if (gj->fold_rows == NULL)
		gj->fold_rows = MemoryContextAllocHuge(gj->batch_cxt, gj->batch_rows * sizeof(uint32));
	return gj->fold_rows;
}

/*
 * The batch's rows whose match flag is want (a semi join's matched rows, an
 * anti or left join's others), listed in gj->fold_rows; how many.
 */
uint64
gpuhash_join_flagged_rows(GpuJoinState *gj, bool want)
{
	uint32	   *rows = gpuhash_join_row_buffer(gj);
	uint64		n = 0;

	for (uint64 r = 0; r < gj->outer.nrows; r++)
	{
		rows[n] = (uint32) r;
		n += (gj->row_match[r] != 0) == want;
	}
	return n;
}

/* A null-extended row's inner columns (gj->null_inner and its flags), made once, after the build. */
void
gpuhash_join_make_null_inner(GpuJoinState *gj)
{
	int			n = Max(Max(gj->n_inner, gj->inner.ncols), 1);
	bool	   *flags;

	if (gj->null_inner != NULL)
		return;
	flags = MemoryContextAlloc(gj->batch_cxt, n * sizeof(bool));
	memset(flags, 1, n * sizeof(bool));
	gj->null_inner = MemoryContextAllocZero(gj->batch_cxt, n * sizeof(Datum));
	gj->null_inner_flags = flags;
}

/* The next scan tuple of the join, or NULL at the end. */
static TupleTableSlot *
next_scan_tuple(GpuJoinState *gj)
{
	for (;;)
	{
		switch (gj->emit)
		{
			case EMIT_PAIRS:
				if (gj->pos < gj->npairs)
				{
					uint64		j = gj->pos++;
					uint64		row;
					TupleTableSlot *slot;

					/*
					 * Build rows are fetched at random: start loading one a
					 * few pairs ahead so that its cache miss overlaps the
					 * work on this one (bench/NOTES.md).
					 */
					if (j + PAIR_PREFETCH_AHEAD < gj->npairs && gj->keep_inner &&
						!gj->inner_in_table)
						__builtin_prefetch(gj->inner.rows +
										   gj->brow[j + PAIR_PREFETCH_AHEAD] * gj->inner.stride);
					row = row_of_key(gj, gj->pidx[j]);
					slot = gpuhash_join_scan_tuple(gj, row, true, gj->pidx[j], gj->brow[j]);
					if (gj->jointype != JOIN_LEFT)
						return slot;

					/*
					 * A left join's pair counts only when the other join
					 * clauses hold: its outer row is then matched, and is not
					 * null-extended later, whatever the filter above it says.
					 */
					if (gj->join_qual != NULL)
					{
						ExprContext *econtext = gj->css.ss.ps.ps_ExprContext;

						econtext->ecxt_scantuple = slot;
						if (!ExecQual(gj->join_qual, econtext))
						{
							InstrCountFiltered1(&gj->css, 1);
							ResetExprContext(econtext);
							continue;
						}
					}
					gj->row_match[row] = 1;
					return slot;
				}
				else if (!gpuhash_join_next_pairs(gj))
				{
					/* then a left join's outer rows without a match */
					if (gj->jointype == JOIN_LEFT)
					{
						gj->row_pos = 0;
						gj->emit = EMIT_ROWS;
					}
					else
						gj->emit = EMIT_NONE;
				}
				break;
			case EMIT_ROWS:
				{
					/* semi: the matched rows; anti and left: the others */
					bool		want = gj->jointype == JOIN_SEMI;

					while (gj->row_pos < gj->outer.nrows)
					{
						uint64		r = gj->row_pos++;

						if ((gj->row_match[r] != 0) == want)
							return gpuhash_join_scan_tuple(gj, r, false, 0, 0);
					}
					gj->emit = EMIT_NONE;
				}
				break;
			case EMIT_BUILD:
				{
					uint64		b;

					if (gpuhash_join_next_build_row(gj, &b))
						return gpuhash_join_build_row_tuple(gj, b);
					gj->rs_phase = RS_DONE;
					gj->emit = EMIT_NONE;
				}
				break;
			case EMIT_NONE:
				if (gj->outer_done)
				{
					if (GPUHASH_JOIN_IS_RIGHT(gj->jointype) && gj->rs_phase == RS_PROBING &&
						gpuhash_join_right_emits(gj))
					{
						gj->emit = EMIT_BUILD;
						break;
					}
					return NULL;
				}
				gpuhash_join_load_batch(gj);
				if (gj->outer.nrows > 0)
					gpuhash_join_start_batch(gj);
				break;
		}
	}
}

static TupleTableSlot *
exec_gpu_join(CustomScanState *node)
{
	GpuJoinState *gj = (GpuJoinState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	ExprState  *qual = node->ss.ps.qual;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;

	ResetExprContext(econtext);
	/* a shut-down parallel node has let go of its build (join_parallel.c) */
	if (gj->shut_down)
		return NULL;
	gpuhash_join_ensure_built(gj);
	for (;;)
	{
		TupleTableSlot *slot = next_scan_tuple(gj);

		if (slot == NULL)
		{
			/* done: no longer hold up the other participants' barrier */
			gpuhash_join_detach(gj);
			return NULL;
		}
		econtext->ecxt_scantuple = slot;
		/* semi, anti and left joins applied the join clauses when matching */
		if (gj->jointype == JOIN_INNER && gj->join_qual != NULL &&
			!ExecQual(gj->join_qual, econtext))
		{
			InstrCountFiltered1(node, 1);
			ResetExprContext(econtext);
			continue;
		}
		if (qual == NULL || ExecQual(qual, econtext))
			return proj ? ExecProject(proj) : slot;
		InstrCountFiltered2(node, 1);
		ResetExprContext(econtext);
	}
}

/*
 * Forget the build side (the next execution builds again).  This also lets
 * go of everything that points into a shared build's block (the table handle
 * over its image, the inner rows, the helper thread probing the image), so
 * it comes before that block is freed or unmapped.
 */
void
gpuhash_join_drop_build(GpuJoinState *gj)
{
	gpuhash_join_detach(gj);
	if (gj->probe)
		gpuhash_res_release(gj->probe);
	gpuhash_join_reset_build_memory(gj);
	memset(&gj->inner, 0, sizeof(gj->inner));
	gj->inner_in_table = false;
	gj->build_match = NULL;
	gj->recent_keys = NULL;
	gj->built = false;
	gj->outer_ready = false;
	gj->early_kf = false;
	gj->held_batch = gj->held_done = false;
}

static void
reset_outer(GpuJoinState *gj)
{
	if (gj->probe)
		gpuhash_res_release(gj->probe);
	gj->emit = EMIT_NONE;
	gj->outer_done = false;
	gj->npairs = gj->pos = gj->row_pos = 0;
	/* a build kept for the next scan is probed afresh */
	gpuhash_join_right_reset(gj);
	if (gj->outer.cxt)
		gpuhash_store_reset(&gj->outer);
	gj->held_batch = gj->held_done = false;
}

void
gpuhash_join_rescan(CustomScanState *node)
{
	GpuJoinState *gj = (GpuJoinState *) node;
	PlanState  *outer = linitial(node->custom_ps);
	PlanState  *inner;

	reset_outer(gj);
	gpuhash_pair_memo_reset(gj);
	gj->shut_down = false;
	if (gj->outer_reader)
		gpuhash_heap_reader_rescan(gj->outer_reader);
	if (gj->inner_reader)
		gpuhash_heap_reader_rescan(gj->inner_reader);
	if (gj->scan_only)
	{
		if (node->ss.ps.chgParam != NULL)
			UpdateChangedParamSet(outer, node->ss.ps.chgParam);
		if (outer->chgParam == NULL)
			ExecReScan(outer);
		return;
	}
	inner = lsecond(node->custom_ps);

	/* ExecReScan passes changed parameters to lefttree/righttree only */
	if (node->ss.ps.chgParam != NULL)
	{
		UpdateChangedParamSet(outer, node->ss.ps.chgParam);
		UpdateChangedParamSet(inner, node->ss.ps.chgParam);
	}

	/*
	 * The table can be kept when the inner side cannot have changed; a
	 * shared build is redone, since the parallel state is set up afresh.  A
	 * build already let go of (at shutdown, or when the leader's shared
	 * memory was reinitialised) is redone too, so its inner plan starts over.
	 */
	if (inner->chgParam != NULL || gj->shared != NULL)
		gpuhash_join_drop_build(gj);
	if (!gj->built && inner->chgParam == NULL)
		ExecReScan(inner);
	if (outer->chgParam == NULL)
		ExecReScan(outer);
}

void
gpuhash_join_end(CustomScanState *node)
{
	GpuJoinState *gj = (GpuJoinState *) node;

	gpuhash_join_detach(gj);
	if (gj->probe)
		gpuhash_res_release(gj->probe);
	if (gj->table)
		gpuhash_res_release(gj->table);
	if (gj->outer_reader)
		gpuhash_heap_reader_end(gj->outer_reader);
	if (gj->inner_reader)
		gpuhash_heap_reader_end(gj->inner_reader);
	ExecEndNode(linitial(node->custom_ps));
	if (!gj->scan_only)
		ExecEndNode(lsecond(node->custom_ps));
}
