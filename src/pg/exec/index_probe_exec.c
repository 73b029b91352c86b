/*
 * index_probe_exec.c - the executor of IndexProbeJoin (plan/index_probe.h):
 * a semi or anti join that reads its outer side in batches and probes the
 * inner table through one walk of its B-tree per batch.
 *
 * A batch's rows are kept (join_store.c) with their keys; the keys are
 * sorted and each distinct key is looked up once: its index items collected
 * by the walk (btree_walk.c), whose leaf lock is then let go, and its heap
 * rows fetched in index order under the query's snapshot until one passes
 * the inner table's filter (compiled by scan_filter.c).  Then the batch's
 * rows come out in their order: those whose key matched (semi), or not
 * (anti; a NULL key matches nothing).  No device is used.
 */
#include "gpuhash_pg.h"

#include <sys/resource.h>

#include "access/genam.h"
#include "access/parallel.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_type_d.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "portability/instr_time.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/ruleutils.h"

#include "btree_walk.h"
#include "heap_reader.h"
#include "index_probe.h"
#include "join_store.h"
#include "scan_filter.h"

/*
 * Outer rows a batch holds: enough that a walk along the leaves, one
 * descent, serves thousands of keys; few enough that the first rows come
 * out soon (a LIMIT above), that a batch stays in the core's caches, and
 * that the participants of a parallel plan finish close together (with
 * 16384, TPC-H q04's six workers ended 513 to 580 ms into the query).
 */
#define PROBE_BATCH_ROWS 4096

typedef struct IndexProbeState
{
	CustomScanState css;
	JoinType	jointype;
	int			key_col;		/* 0-based, in the outer rows */
	Oid			key_type;
	Relation	heap;
	Relation	index;
	GpuhashScanFilter *filter;	/* the inner table's, or NULL */
	int			filter_natts;	/* heap attributes it needs deformed */
	bool		filter_calls;	/* ... and it may allocate (detoasting) */
	GpuhashHeapReader *reader;	/* the outer Seq Scan's, or NULL */
	GpuhashBtreeWalk walk;
	IndexFetchTableData *fetch;
	TupleTableSlot *heap_slot;
	MemoryContext batch_cxt;

	/* the batch */
	GpuhashStore rows;
	Datum	   *row_values;
	bool	   *row_isnull;
	int64	   *keys;			/* [PROBE_BATCH_ROWS] */
	bool	   *keynull;
	uint32	   *order;			/* rows with a key, sorted by it */
	bool	   *matched;
	ItemPointerData *tids;		/* one key's index items at a time */
	uint32		tid_cap;
	uint64		next_row;
	bool		outer_done;

	/* for EXPLAIN ANALYZE, this process's */
	uint64		outer_rows;
	uint64		batches;
	uint64		keys_probed;	/* distinct keys of each batch */
	uint64		keys_matched;
	uint64		heap_fetched;
	double		read_ms;
	double		probe_ms;
	int64		read_faults;	/* page faults of the node's thread, when */
	int64		probe_faults;	/* instrumented and the system tells them */
} IndexProbeState;

static void begin_index_probe(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_index_probe(CustomScanState *node);
static void end_index_probe(CustomScanState *node);
static void rescan_index_probe(CustomScanState *node);
static void explain_index_probe(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomExecMethods index_probe_exec_methods = {
	.CustomName = GPUHASH_INDEX_PROBE_NAME,
	.BeginCustomScan = begin_index_probe,
	.ExecCustomScan = exec_index_probe,
	.EndCustomScan = end_index_probe,
	.ReScanCustomScan = rescan_index_probe,
	.ExplainCustomScan = explain_index_probe,
};

Node *
gpuhash_index_probe_create_state(CustomScan *cscan)
{
	IndexProbeState *ip = palloc0(sizeof(IndexProbeState));

	NodeSetTag(ip, T_CustomScanState);
	ip->css.flags = cscan->flags;
	ip->css.methods = &index_probe_exec_methods;
	return (Node *) ip;
}

static void
begin_index_probe(CustomScanState *node, EState *estate, int eflags)
{
	IndexProbeState *ip = (IndexProbeState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *quals = list_nth(cscan->custom_private, IP_PRIV_QUALS);
	PlanState  *outer;
	TupleDesc	outer_desc;
	List	   *rest = NIL;

	gpuhash_settings_ready();
	ip->jointype = intVal(list_nth(cscan->custom_private, IP_PRIV_JOINTYPE));
	ip->key_col = intVal(list_nth(cscan->custom_private, IP_PRIV_OUTER_KEY)) - 1;
	outer = ExecInitNode(linitial(cscan->custom_plans), estate, eflags);
	node->custom_ps = list_make1(outer);
	outer_desc = ExecGetResultType(outer);
	ip->key_type = TupleDescAttr(outer_desc, ip->key_col)->atttypid;

	ip->heap = table_open((Oid) intVal(list_nth(cscan->custom_private, IP_PRIV_HEAP)),
						  AccessShareLock);
	ip->index = index_open((Oid) intVal(list_nth(cscan->custom_private, IP_PRIV_INDEX)),
						   AccessShareLock);
	if (quals != NIL)
	{
		const int  *atts;
		int			n;

		ip->filter = gpuhash_scan_filter_compile(quals, RelationGetDescr(ip->heap), &rest);
		if (ip->filter == NULL || rest != NIL)
			elog(ERROR, "gpuhash: an index probe join's inner filter did not compile");
		n = gpuhash_scan_filter_attrs(ip->filter, &atts);
		ip->filter_natts = n > 0 ? atts[n - 1] + 1 : 0;
		ip->filter_calls = gpuhash_scan_filter_calls(ip->filter);
	}
	ip->reader = gpuhash_heap_reader_create(outer);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	ip->heap_slot = table_slot_create(ip->heap, NULL);
	ip->fetch = table_index_fetch_begin(ip->heap);
	gpuhash_btree_walk_init(&ip->walk, ip->index, estate->es_snapshot);
	ip->batch_cxt = AllocSetContextCreate(estate->es_query_cxt, "IndexProbeJoin batch",
										  ALLOCSET_DEFAULT_SIZES);
	gpuhash_store_init(&ip->rows, estate->es_query_cxt, outer_desc, true);
	ip->row_values = palloc(Max(outer_desc->natts, 1) * sizeof(Datum));
	ip->row_isnull = palloc(Max(outer_desc->natts, 1) * sizeof(bool));
	ip->keys = palloc(PROBE_BATCH_ROWS * sizeof(int64));
	ip->keynull = palloc(PROBE_BATCH_ROWS * sizeof(bool));
	ip->order = palloc(PROBE_BATCH_ROWS * sizeof(uint32));
	ip->matched = palloc(PROBE_BATCH_ROWS * sizeof(bool));
	ip->tid_cap = 64;
	ip->tids = palloc(ip->tid_cap * sizeof(ItemPointerData));
}

/*
 * The page faults this thread has taken, or -1 where that cannot be told.
 * A parallel worker is a new process each query: the first touch of each
 * shared buffer page costs it a fault, a large share of a probe's time.
 */
static int64
thread_faults(IndexProbeState *ip)
{
#ifdef RUSAGE_THREAD
	struct rusage ru;

	if (ip->css.ss.ps.instrument != NULL && getrusage(RUSAGE_THREAD, &ru) == 0)
		return (int64) ru.ru_minflt + (int64) ru.ru_majflt;
#endif
	return -1;
}

/* The next batch of outer rows and their keys; false when there are none. */
static bool
load_batch(IndexProbeState *ip)
{
	PlanState  *outer = linitial(ip->css.custom_ps);
	instr_time	start,
				end;
	int64		faults = thread_faults(ip);

	INSTR_TIME_SET_CURRENT(start);
	gpuhash_store_reset(&ip->rows);
	if (ip->reader)
		gpuhash_heap_reader_begin(ip->reader);
	while (ip->rows.nrows < PROBE_BATCH_ROWS)
	{
		Datum	   *values = ip->row_values;
		bool	   *isnull = ip->row_isnull;
		uint64		row;

		if (ip->reader)
		{
			if (!gpuhash_heap_reader_next(ip->reader, values, isnull))
			{
				ip->outer_done = true;
				break;
			}
		}
		else
		{
			TupleTableSlot *slot = ExecProcNode(outer);

			if (TupIsNull(slot))
			{
				ip->outer_done = true;
				break;
			}
			slot_getallattrs(slot);
			values = slot->tts_values;
			isnull = slot->tts_isnull;
		}
		row = gpuhash_store_append(&ip->rows, values, isnull);
		ip->keynull[row] = isnull[ip->key_col];
		ip->keys[row] = isnull[ip->key_col] ? 0 : gpuhash_key_value(ip->key_type, values[ip->key_col]);
	}
	if (ip->reader)
		gpuhash_heap_reader_pause(ip->reader);
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	ip->read_ms += INSTR_TIME_GET_MILLISEC(end);
	if (faults >= 0)
		ip->read_faults += thread_faults(ip) - faults;
	ip->outer_rows += ip->rows.nrows;
	ip->next_row = 0;
	return ip->rows.nrows > 0;
}

static int
cmp_rows_by_key(const void *a, const void *b, void *arg)
{
	const int64 *keys = arg;
	int64		ka = keys[*(const uint32 *) a];
	int64		kb = keys[*(const uint32 *) b];

	return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/* Does one of the heap rows of ip->tids[0..ntids) pass the inner filter? */
static bool
some_row_passes(IndexProbeState *ip, uint32 ntids)
{
	Snapshot	snapshot = ip->css.ss.ps.state->es_snapshot;

	for (uint32 t = 0; t < ntids; t++)
	{
		bool		call_again = false;
		bool		all_dead = false;

		/* a key of millions of rows that fail the filter */
		if ((t & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
		do
		{
			if (!table_index_fetch_tuple(ip->fetch, &ip->tids[t], snapshot, ip->heap_slot,
										 &call_again, &all_dead))
				break;
			ip->heap_fetched++;
			if (ip->filter == NULL)
				return true;
			slot_getsomeattrs(ip->heap_slot, ip->filter_natts);
			if (gpuhash_scan_filter_pass(ip->filter, ip->heap_slot->tts_values,
										 ip->heap_slot->tts_isnull))
				return true;
		} while (call_again);
	}
	return false;
}

/*
 * Decide the batch's rows: sort those with a key by it, collect each
 * distinct key's index items along one walk, and test its heap rows.
 */
static void
probe_batch(IndexProbeState *ip)
{
	uint32		nrows = (uint32) ip->rows.nrows;
	uint32		nkeyed = 0;
	MemoryContext old = MemoryContextSwitchTo(ip->batch_cxt);
	instr_time	start,
				end;
	int64		faults = thread_faults(ip);

	INSTR_TIME_SET_CURRENT(start);
	for (uint32 r = 0; r < nrows; r++)
	{
		ip->matched[r] = false;
		if (!ip->keynull[r])
			ip->order[nkeyed++] = r;
	}
	qsort_arg(ip->order, nkeyed, sizeof(uint32), cmp_rows_by_key, ip->keys);

	for (uint32 i = 0; i < nkeyed;)
	{
		int64		key = ip->keys[ip->order[i]];
		uint32		ntids = 0;
		uint32		j;
		bool		match;

		/*
		 * The walk holds its leaf's lock while it collects; the heap rows are
		 * fetched after it lets go, as nbtree's own scans do.
		 */
		gpuhash_btree_walk_key(&ip->walk, key, &ip->tids, &ntids, &ip->tid_cap);
		if (ntids > 0)
		{
			gpuhash_btree_walk_unlock(&ip->walk);
			match = some_row_passes(ip, ntids);
		}
		else
			match = false;
		ip->keys_probed++;
		ip->keys_matched += match;
		for (j = i; j < nkeyed && ip->keys[ip->order[j]] == key; j++)
			ip->matched[ip->order[j]] = match;
		i = j;
		if ((ip->keys_probed & 255) == 0)
		{
			gpuhash_btree_walk_unlock(&ip->walk);
			CHECK_FOR_INTERRUPTS();
		}
		/* what the filter's comparisons allocated for this key's rows */
		if (ip->filter_calls)
			MemoryContextReset(ip->batch_cxt);
	}
	gpuhash_btree_walk_stop(&ip->walk);
	MemoryContextSwitchTo(old);
	MemoryContextReset(ip->batch_cxt);
	ip->batches++;
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	ip->probe_ms += INSTR_TIME_GET_MILLISEC(end);
	if (faults >= 0)
		ip->probe_faults += thread_faults(ip) - faults;
}

static TupleTableSlot *
exec_index_probe(CustomScanState *node)
{
	IndexProbeState *ip = (IndexProbeState *) node;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;
	bool		want = ip->jointype == JOIN_SEMI;

	ResetExprContext(node->ss.ps.ps_ExprContext);
	for (;;)
	{
		while (ip->next_row < ip->rows.nrows)
		{
			uint64		r = ip->next_row++;

			if (ip->matched[r] != want)
				continue;
			ExecClearTuple(slot);
			gpuhash_store_get(&ip->rows, r, slot->tts_values, slot->tts_isnull);
			ExecStoreVirtualTuple(slot);
			if (proj == NULL)
				return slot;
			node->ss.ps.ps_ExprContext->ecxt_scantuple = slot;
			return ExecProject(proj);
		}
		if (ip->outer_done || !load_batch(ip))
			return NULL;
		probe_batch(ip);
	}
}

static void
end_index_probe(CustomScanState *node)
{
	IndexProbeState *ip = (IndexProbeState *) node;

	if (ip->fetch)
	{
		gpuhash_btree_walk_stop(&ip->walk);
		table_index_fetch_end(ip->fetch);
		ExecDropSingleTupleTableSlot(ip->heap_slot);
	}
	if (ip->reader)
		gpuhash_heap_reader_end(ip->reader);
	ExecEndNode(linitial(node->custom_ps));
	index_close(ip->index, AccessShareLock);
	table_close(ip->heap, AccessShareLock);
}

static void
rescan_index_probe(CustomScanState *node)
{
	IndexProbeState *ip = (IndexProbeState *) node;
	PlanState  *outer = linitial(node->custom_ps);

	gpuhash_btree_walk_stop(&ip->walk);
	gpuhash_store_reset(&ip->rows);
	ip->next_row = 0;
	ip->outer_done = false;
	if (ip->reader)
		gpuhash_heap_reader_rescan(ip->reader);
	/* the reader does not run the child, so the child is rescanned now */
	if (node->ss.ps.chgParam != NULL)
		UpdateChangedParamSet(outer, node->ss.ps.chgParam);
	ExecReScan(outer);
}

/* "inner column = outer key", as EXPLAIN prints an index scan's condition */
static char *
index_condition(IndexProbeState *ip, List *ancestors, ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) ip->css.ss.ps.plan;
	Form_pg_index form = ip->index->rd_index;
	List	   *inner_cxt = deparse_context_for(RelationGetRelationName(ip->heap),
												RelationGetRelid(ip->heap));
	List	   *outer_cxt = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);
	Var		   *column = makeVar(1, form->indkey.values[0], ip->key_type, -1, InvalidOid, 0);

	return psprintf("(%s = %s)", deparse_expression((Node *) column, inner_cxt, true, false),
					deparse_expression(linitial(cscan->custom_exprs), outer_cxt, true, false));
}

static void
explain_index_probe(CustomScanState *node, List *ancestors, ExplainState *es)
{
	IndexProbeState *ip = (IndexProbeState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *quals = list_nth(cscan->custom_private, IP_PRIV_QUALS);

	ExplainPropertyText("Join Type", ip->jointype == JOIN_SEMI ? "Semi" : "Anti", es);
	ExplainPropertyText("Index", RelationGetRelationName(ip->index), es);
	ExplainPropertyText("Index Cond", index_condition(ip, ancestors, es), es);
	if (quals != NIL)
	{
		List	   *cxt = deparse_context_for(RelationGetRelationName(ip->heap),
											  RelationGetRelid(ip->heap));

		ExplainPropertyText("Inner Filter",
							deparse_expression((Node *) make_ands_explicit(quals), cxt, true, false),
							es);
	}
	if (ip->reader)
	{
		StringInfoData buf;

		initStringInfo(&buf);
		gpuhash_heap_reader_describe(&buf, "outer", ip->reader);
		ExplainPropertyText("Direct Scan", buf.data, es);
	}
	if (!es->analyze)
		return;
	/* a parallel plan's workers keep their own counts: these are this process's */
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		ExplainPropertyText("Probes",
							psprintf("%llu outer rows in %llu batches, %llu keys (%llu matched), "
									 "%llu descents, %llu leaf pages, %llu heap rows%s",
									 (unsigned long long) ip->outer_rows,
									 (unsigned long long) ip->batches,
									 (unsigned long long) ip->keys_probed,
									 (unsigned long long) ip->keys_matched,
									 (unsigned long long) ip->walk.descents,
									 (unsigned long long) ip->walk.pages,
									 (unsigned long long) ip->heap_fetched,
									 IsParallelWorker() || node->ss.ps.state->es_use_parallel_mode ?
									 " (this process)" : ""),
							es);
		if (es->timing)
			ExplainPropertyText("Times", psprintf("read %.3f ms, probe %.3f ms",
												  ip->read_ms, ip->probe_ms), es);
		if (es->timing && ip->read_faults + ip->probe_faults > 0)
			ExplainPropertyText("Page Faults",
								psprintf("read %lld, probe %lld (this thread)",
										 (long long) ip->read_faults,
										 (long long) ip->probe_faults), es);
	}
	else
	{
		ExplainPropertyUInteger("Outer Rows", NULL, ip->outer_rows, es);
		ExplainPropertyUInteger("Batches", NULL, ip->batches, es);
		ExplainPropertyUInteger("Keys Probed", NULL, ip->keys_probed, es);
		ExplainPropertyUInteger("Keys Matched", NULL, ip->keys_matched, es);
		ExplainPropertyUInteger("Descents", NULL, ip->walk.descents, es);
		ExplainPropertyUInteger("Leaf Pages", NULL, ip->walk.pages, es);
		ExplainPropertyUInteger("Heap Rows Fetched", NULL, ip->heap_fetched, es);
		if (es->timing)
		{
			ExplainPropertyFloat("Read Time", "ms", ip->read_ms, 3, es);
			ExplainPropertyFloat("Probe Time", "ms", ip->probe_ms, 3, es);
		}
		if (es->timing && ip->read_faults + ip->probe_faults > 0)
		{
			ExplainPropertyInteger("Read Page Faults", NULL, ip->read_faults, es);
			ExplainPropertyInteger("Probe Page Faults", NULL, ip->probe_faults, es);
		}
	}
}
