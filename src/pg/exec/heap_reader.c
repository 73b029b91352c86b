/*
 * heap_reader.c - reading a join's input straight from the heap pages of a
 * plain Seq Scan below it.
 *
 * A GpuHashJoin reads its sides in batches of a million rows, and asking the
 * Seq Scan for them one at a time costs more than everything else the join
 * does to a row: a call down the executor, a buffer pin taken and dropped
 * for each tuple, and a general-purpose deform (bench/NOTES.md section 12).
 * When the child is a Seq Scan of a heap table whose output is its table's
 * columns, the reader does the Seq Scan's work itself, a page at a time,
 * through the Seq Scan's own scan descriptor: the same page order
 * (synchronised and parallel scans included), the same visibility decisions
 * (heapgetpage, under the scan's snapshot), the same statistics.  A tuple
 * without NULLs whose wanted columns are by-value and at fixed offsets is
 * read in place; any other tuple goes through the Seq Scan's slot as usual.
 * The Seq Scan's filter is applied as the rows are read: the quals that
 * scan_filter.c compiles straight on the row's values, the others through
 * ExecQual on the Seq Scan's slot, and the rows it removes are counted as
 * the Seq Scan counts them (Rows Removed by Filter).
 *
 * Where its filter removes most rows, a helper thread may take the pages
 * apart while the backend pins the next ones (read_ahead.c).
 *
 * Without the thread, where the reader stands between calls lives in the
 * scan descriptor, so a rescan of the Seq Scan (table_rescan) restarts it
 * as it restarts the Seq Scan; the thread's ring of pages is emptied before
 * each rescan (gpuhash_heap_reader_rescan).  Servers from PostgreSQL 17 on changed the page-at-a-time
 * interface; there the reader is not used.
 */
#include "gpuhash_pg.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/syncscan.h"
#include "access/tableam.h"
#include "access/tupmacs.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "heap_reader_int.h"
#include "join_node.h"

/*
 * The key filter is kept if it removed at least 1 in this many rows it
 * tested: a test costs a few nanoseconds, a row it spares tens.
 */
#define KEY_FILTER_KEEP_DIV 2

#if PG_VERSION_NUM < 170000

/*
 * The Seq Scan's quals: those scan_filter.c compiles, the rest for ExecQual
 * on the Seq Scan's slot (made here: the Seq Scan's own ExprState holds
 * all of them).
 */
static void
compile_filter(GpuhashHeapReader *r, PlanState *child, TupleDesc rdesc)
{
	List	   *rest;

	r->filter = gpuhash_scan_filter_compile(child->plan->qual, rdesc, &rest);
	if (rest != NIL)
	{
		r->rest = ExecInitQual(rest, child);
		r->nrest = list_length(rest);
	}
	if (r->filter == NULL)
		return;
	r->filter_calls = gpuhash_scan_filter_calls(r->filter);
	r->nfatts = gpuhash_scan_filter_attrs(r->filter, &r->fatts);
	r->natts_needed = Max(r->natts_needed, r->fatts[r->nfatts - 1] + 1);
	r->foff = palloc0(r->nfatts * sizeof(uint32));
	r->flen = palloc0(r->nfatts * sizeof(int16));
}

#endif

GpuhashHeapReader *
gpuhash_heap_reader_create(PlanState *child)
{
#if PG_VERSION_NUM >= 170000
	return NULL;
#else
	ScanState  *ss = (ScanState *) child;
	Relation	rel;
	TupleDesc	rdesc;
	TupleDesc	odesc;
	GpuhashHeapReader *r;
	uint32		off = 0;

	if (!gpuhash_direct_scan || !IsA(child, SeqScanState) ||
		child->state->es_epq_active != NULL ||
		!IsMVCCSnapshot(child->state->es_snapshot))
		return NULL;
	rel = ss->ss_currentRelation;
	if (rel->rd_tableam != GetHeapamTableAmRoutine())
		return NULL;
	rdesc = RelationGetDescr(rel);
	odesc = ExecGetResultType(child);

	r = palloc0(sizeof(GpuhashHeapReader));
	r->node = ss;
	r->participants = 1;
	r->ncols = odesc->natts;
	r->attno = palloc0(Max(r->ncols, 1) * sizeof(int));
	r->off = palloc0(Max(r->ncols, 1) * sizeof(uint32));
	r->len = palloc0(Max(r->ncols, 1) * sizeof(int16));

	/* which table column each output column is: all of them, or plain Vars */
	if (child->ps_ProjInfo == NULL)
	{
		if (r->ncols > rdesc->natts)
			return NULL;
		for (int c = 0; c < r->ncols; c++)
			r->attno[c] = c;
	}
	else
	{
		List	   *tlist = child->plan->targetlist;
		ListCell   *lc;
		int			c = 0;

		if (list_length(tlist) != r->ncols)
			return NULL;
		foreach(lc, tlist)
		{
			Var		   *v = (Var *) lfirst_node(TargetEntry, lc)->expr;

			if (!IsA(v, Var) || v->varattno <= 0 || v->varattno > rdesc->natts ||
				v->varlevelsup != 0 ||
				v->vartype != TupleDescAttr(rdesc, v->varattno - 1)->atttypid)
				return NULL;
			r->attno[c++] = v->varattno - 1;
		}
	}
	for (int c = 0; c < r->ncols; c++)
		r->natts_needed = Max(r->natts_needed, r->attno[c] + 1);
	if (child->plan->qual != NIL)
		compile_filter(r, child, rdesc);

	/*
	 * In a tuple without NULLs, an attribute after fixed-length ones only is
	 * at a fixed offset; the wanted ones must also be by value to be read in
	 * place.
	 */
	r->hvalues = palloc0(Max(rdesc->natts, 1) * sizeof(Datum));
	r->hisnull = palloc0(Max(rdesc->natts, 1) * sizeof(bool));
	r->wvalues = palloc0(Max(rdesc->natts, 1) * sizeof(Datum));
	r->wisnull = palloc0(Max(rdesc->natts, 1) * sizeof(bool));
	r->in_place = r->rest == NULL;
	for (int a = 0; a < r->natts_needed && r->in_place; a++)
	{
		Form_pg_attribute att = TupleDescAttr(rdesc, a);

		if (att->attlen <= 0)
		{
			r->in_place = false;
			break;
		}
		off = att_align_nominal(off, att->attalign);
		for (int c = 0; c < r->ncols; c++)
			if (r->attno[c] == a)
			{
				if (!att->attbyval)
					r->in_place = false;
				r->off[c] = off;
				r->len[c] = att->attlen;
			}
		for (int k = 0; k < r->nfatts; k++)
			if (r->fatts[k] == a)
			{
				if (!att->attbyval)
					r->in_place = false;
				r->foff[k] = off;
				r->flen[k] = att->attlen;
			}
		off += att->attlen;
	}

	/*
	 * Other tuples are deformed here (walked) when no qual needs the
	 * executor's slot: storing each tuple in the slot takes and drops a
	 * buffer pin, which cost as much as the deform itself (bench/NOTES.md
	 * section 29).
	 */
	r->watt = palloc0(Max(r->natts_needed, 1) * sizeof(WalkAtt));
	for (int a = 0; a < r->natts_needed; a++)
	{
		Form_pg_attribute att = TupleDescAttr(rdesc, a);

		r->watt[a].len = att->attlen;
		r->watt[a].align = att->attalign;
		r->watt[a].byval = att->attbyval;
	}
	return r;
#endif
}

#if PG_VERSION_NUM < 170000

/*
 * Move to the scan's next page, as the heap's page-at-a-time scan does;
 * false at the end of the scan.
 */
bool
gpuhash_heap_reader_next_page(GpuhashHeapReader *r)
{
	HeapScanDesc scan = r->scan;
	Relation	rel = scan->rs_base.rs_rd;
	ParallelBlockTableScanDesc pscan = (ParallelBlockTableScanDesc) scan->rs_base.rs_parallel;
	BlockNumber page;

	if (!scan->rs_inited)
	{
		if (scan->rs_nblocks == 0 || scan->rs_numblocks == 0)
			return false;
		if (pscan != NULL)
		{
			table_block_parallelscan_startblock_init(rel, scan->rs_parallelworkerdata, pscan);
			page = table_block_parallelscan_nextpage(rel, scan->rs_parallelworkerdata, pscan);
			if (page == InvalidBlockNumber)
				return false;
		}
		else
			page = scan->rs_startblock;
		scan->rs_inited = true;
	}
	else
	{
		bool		finished;

		if (pscan != NULL)
		{
			page = table_block_parallelscan_nextpage(rel, scan->rs_parallelworkerdata, pscan);
			finished = page == InvalidBlockNumber;
		}
		else
		{
			page = scan->rs_cblock + 1;
			if (page >= scan->rs_nblocks)
				page = 0;
			finished = page == scan->rs_startblock ||
				(scan->rs_numblocks != InvalidBlockNumber && --scan->rs_numblocks == 0);
			if (scan->rs_base.rs_flags & SO_ALLOW_SYNC)
				ss_report_location(rel, page);
		}
		if (finished)
		{
			if (BufferIsValid(scan->rs_cbuf))
				ReleaseBuffer(scan->rs_cbuf);
			scan->rs_cbuf = InvalidBuffer;
			scan->rs_cblock = InvalidBlockNumber;
			scan->rs_inited = false;
			r->page = NULL;
			return false;
		}
	}
	CHECK_FOR_INTERRUPTS();
	heapgetpage(&scan->rs_base, page);
	r->page = BufferGetPage(scan->rs_cbuf);
	TestForOldSnapshot(scan->rs_base.rs_snapshot, rel, r->page);
	r->index = 0;
	return true;
}

/*
 * A tuple that cannot be read in place: deformed through the Seq Scan's
 * slot and filtered there, as the Seq Scan would; false when filtered out.
 */
pg_noinline bool
gpuhash_heap_reader_through_slot(GpuhashHeapReader *r, HeapTupleHeader td, ItemId lpp,
								 OffsetNumber lineoff, Buffer buf, BlockNumber block,
								 Datum *values, bool *isnull)
{
	TupleTableSlot *slot = r->node->ss_ScanTupleSlot;

	r->tuple.t_data = td;
	r->tuple.t_len = ItemIdGetLength(lpp);
	r->tuple.t_tableOid = RelationGetRelid(r->scan->rs_base.rs_rd);
	ItemPointerSet(&r->tuple.t_self, block, lineoff);
	ExecStoreBufferHeapTuple(&r->tuple, slot, buf);
	slot_getsomeattrs(slot, r->natts_needed);
	if (r->filter && !filter_pass(r, slot->tts_values, slot->tts_isnull))
		return false;
	if (r->rest)
	{
		ExprContext *econtext = r->node->ps.ps_ExprContext;

		ResetExprContext(econtext);
		econtext->ecxt_scantuple = slot;
		if (!ExecQual(r->rest, econtext))
			return false;
	}
	for (int c = 0; c < r->ncols; c++)
	{
		values[c] = slot->tts_values[r->attno[c]];
		isnull[c] = slot->tts_isnull[r->attno[c]];
	}
	return true;
}

/*
 * A tuple with all the wanted attributes, deformed here and filtered; false
 * when filtered out.
 */
static inline bool
walk_tuple(GpuhashHeapReader *r, HeapTupleHeader td, ItemId lpp, OffsetNumber lineoff,
		   Datum *values, bool *isnull)
{
	Datum	   *hv = r->wvalues;
	bool	   *hn = r->wisnull;

	if (!walk_atts(r->watt, r->natts_needed, td, ItemIdGetLength(lpp), hv, hn))
		return gpuhash_heap_reader_through_slot(r, td, lpp, lineoff, r->scan->rs_cbuf, r->scan->rs_cblock,
								 values, isnull);
	if (r->filter && !filter_pass(r, hv, hn))
		return false;
	for (int c = 0; c < r->ncols; c++)
	{
		values[c] = hv[r->attno[c]];
		isnull[c] = hn[r->attno[c]];
	}
	return true;
}

/*
 * Keep the key filter only if it removed at least one row in
 * KEY_FILTER_KEEP_DIV of those it tested: where most rows find a match (a
 * lookup of a fact table's foreign key), a test that removes few is only a
 * cost.
 */
static void
weigh_key_filter(GpuhashHeapReader *r)
{
	if (r->kf.words == NULL || r->kf_decided)
		return;
	r->kf_decided = true;
	if (r->kf_removed * KEY_FILTER_KEEP_DIV < r->kf_tested)
	{
		r->kf.words = NULL;
		r->kf_dropped = true;
	}
}

/* Does a tuple read in place pass the compiled filter? */
static inline bool
pass_in_place(GpuhashHeapReader *r, const char *tp)
{
	for (int k = 0; k < r->nfatts; k++)
		r->hvalues[r->fatts[k]] = fetch_att(tp + r->foff[k], true, r->flen[k]);
	return filter_pass(r, r->hvalues, r->hisnull);
}
#endif

/*
 * The Seq Scan is about to be rescanned: pages pinned ahead and rows not
 * yet handed on belong to the old scan.
 */
void
gpuhash_heap_reader_rescan(GpuhashHeapReader *r)
{
#if PG_VERSION_NUM < 170000
	if (r->pipe)
		gpuhash_read_ahead_reset(r);
#endif
}

/* The node ends: the thread stops and the pages it had are let go. */
void
gpuhash_heap_reader_end(GpuhashHeapReader *r)
{
#if PG_VERSION_NUM < 170000
	if (r->pipe)
		gpuhash_read_ahead_end(r);
#endif
}

void
gpuhash_heap_reader_begin(GpuhashHeapReader *r)
{
#if PG_VERSION_NUM < 170000
	PlanState  *child = &r->node->ps;

	/* what ExecProcNode does first */
	if (child->chgParam != NULL)
	{
		gpuhash_heap_reader_rescan(r);
		ExecReScan(child);
	}
	/* what the Seq Scan does on its first call, unless it is parallel */
	if (r->node->ss_currentScanDesc == NULL)
		r->node->ss_currentScanDesc = table_beginscan(r->node->ss_currentRelation,
													  child->state->es_snapshot, 0, NULL);
	r->scan = (HeapScanDesc) r->node->ss_currentScanDesc;
	r->generic = (r->scan->rs_base.rs_flags & SO_ALLOW_PAGEMODE) == 0;
	r->returned = 0;
	r->filtered = 0;
	r->kf_removed_run = 0;
	if (r->generic)
		return;
	if (child->instrument)
		InstrStartNode(child->instrument);
	/* with a thread, where the reading stands is the ring's, kept between runs */
	if (r->pipe)
		return;
	r->page = r->scan->rs_inited ? BufferGetPage(r->scan->rs_cbuf) : NULL;
	r->index = r->scan->rs_cindex;
#endif
}

bool
gpuhash_heap_reader_next(GpuhashHeapReader *r, Datum *values, bool *isnull)
{
#if PG_VERSION_NUM < 170000
	if (unlikely(r->generic))
	{
		TupleTableSlot *slot = ExecProcNode(&r->node->ps);

		if (TupIsNull(slot))
			return false;
		slot_getallattrs(slot);
		memcpy(values, slot->tts_values, r->ncols * sizeof(Datum));
		memcpy(isnull, slot->tts_isnull, r->ncols * sizeof(bool));
		return true;
	}
	if (r->pipe)
		return gpuhash_read_ahead_next(r, values, isnull);
	for (;;)
	{
		if (likely(r->page != NULL) && r->index < r->scan->rs_ntuples)
		{
			OffsetNumber lineoff = r->scan->rs_vistuples[r->index++];
			ItemId		lpp = PageGetItemId(r->page, lineoff);
			HeapTupleHeader td = (HeapTupleHeader) PageGetItem(r->page, lpp);
			int			early = -1;

			if (r->kf.words != NULL && r->kf.early)
			{
				early = key_filter_early(&r->kf, td, ItemIdGetLength(lpp));
				if (early >= 0 && !r->kf_decided)
					r->kf_tested++;
				if (early == 0)
				{
					r->kf_removed++;
					r->kf_removed_run++;
					continue;
				}
			}
			if (likely(r->in_place) && !(td->t_infomask & HEAP_HASNULL) &&
				HeapTupleHeaderGetNatts(td) >= r->natts_needed)
			{
				const char *tp = (const char *) td + td->t_hoff;

				if (unlikely(r->filter != NULL) && !pass_in_place(r, tp))
				{
					r->filtered++;
					continue;
				}
				for (int c = 0; c < r->ncols; c++)
				{
					values[c] = fetch_att(tp + r->off[c], true, r->len[c]);
					isnull[c] = false;
				}
			}
			else if (likely(r->rest == NULL) && HeapTupleHeaderGetNatts(td) >= r->natts_needed)
			{
				if (!walk_tuple(r, td, lpp, lineoff, values, isnull))
				{
					r->filtered++;
					continue;
				}
			}
			else if (!gpuhash_heap_reader_through_slot(r, td, lpp, lineoff, r->scan->rs_cbuf,
										r->scan->rs_cblock, values, isnull))
			{
				r->filtered++;
				continue;
			}
			if (early < 0 && !key_filter_keeps(r, values, isnull))
				continue;
			r->returned++;
			return true;
		}
		if (unlikely(!r->pipe_tried) && r->page != NULL)
		{
			/*
			 * A page is done: count it, and after enough of them decide on
			 * the key filter, then on the thread, which then sees only the
			 * rows the filter keeps.
			 */
			r->sample_rows += r->scan->rs_ntuples;
			if (++r->sample_pages >= READ_AHEAD_SAMPLE_PAGES)
			{
				weigh_key_filter(r);
				r->sample_passed += r->returned;
				gpuhash_read_ahead_try(r);
				if (r->pipe)
					return gpuhash_read_ahead_next(r, values, isnull);
			}
		}
		if (!gpuhash_heap_reader_next_page(r))
			return false;
	}
#else
	return false;
#endif
}

void
gpuhash_heap_reader_pause(GpuhashHeapReader *r)
{
#if PG_VERSION_NUM < 170000
	Relation	rel = r->node->ss_currentRelation;
	PlanState  *child = &r->node->ps;

	if (r->generic)
		return;
	if (r->pipe == NULL)
		r->scan->rs_cindex = r->index;
	if (!r->pipe_tried)
		r->sample_passed += r->returned;
	/*
	 * The rows the key filter removed count as removed by the Seq Scan's
	 * filter: some were never tested against its quals (the early test), and
	 * the scan hands on only the rows that pass both.
	 */
	if (pgstat_should_count_relation(rel))
		rel->pgstat_info->t_counts.t_tuples_returned += r->returned + r->kf_removed_run + r->filtered;
	if (child->instrument)
	{
		InstrStopNode(child->instrument, (double) r->returned);
		InstrCountFiltered1(child, r->filtered + r->kf_removed_run);
	}
	r->returned = 0;
	r->filtered = 0;
	r->kf_removed_run = 0;
#endif
}

/*
 * How the reader applies its Seq Scan's filter: how many quals it compiled
 * and how many it leaves to ExecQual (both 0 without a filter).
 */
void
gpuhash_heap_reader_filter(const GpuhashHeapReader *r, int *compiled, int *executor)
{
	*compiled = r->filter ? gpuhash_scan_filter_nquals(r->filter) : 0;
	*executor = r->nrest;
}

/* Did a helper thread take its pages apart? */
bool
gpuhash_heap_reader_threaded(const GpuhashHeapReader *r)
{
	return r->pipe_used;
}

/* How many processes read the Seq Scan's relation alike (1 unless parallel). */
void
gpuhash_heap_reader_set_participants(GpuhashHeapReader *r, int n)
{
	r->participants = Max(n, 1);
}

#if PG_VERSION_NUM < 170000
/*
 * Can the key be read before the rest of the row?  Then the filter is
 * tested first, and most rows of a selective join are never taken apart:
 * TPC-H's l_orderkey is lineitem's first column, l_shipdate, which the
 * scan's filter reads, the eleventh, after four numerics.  The Seq Scan's
 * counts take every row the key filter removed as removed by its filter.
 */
static void
key_filter_offsets(GpuhashHeapReader *r)
{
	KeyFilter  *kf = &r->kf;
	int			last = Max(kf->att[0], kf->att[1]);
	uint32		off = 0;

	kf->early = false;
	kf->natts = last + 1;
	for (int a = 0; a <= last; a++)
	{
		const WalkAtt *wa = &r->watt[a];

		if (wa->len <= 0)
			return;
		off = att_align_nominal(off, wa->align);
		for (int k = 0; k < 2; k++)
			if (a == kf->att[k])
			{
				if (!wa->byval)
					return;
				kf->off[k] = off;
				kf->len[k] = wa->len;
			}
		off += wa->len;
	}
	kf->end = off;
	kf->early = true;
}
#endif

/*
 * Test each row's key against a join's filter of its table's keys
 * (ght_keyfilter.h) as it is read, before it is handed on, and drop those
 * it refuses: for a join that returns only rows with a match.  col and
 * col2 (< 0: none) are the output columns of the key, of types type and
 * type2, packed or mixed as the join makes its keys (gpuhash_two_keys).  The filter (nwords words) must
 * outlive the reading; NULL removes it.  Call it before a run of _begin
 * and _next calls.  A read thread's pages in flight are let go when the
 * filter changes, as at a rescan: the join sets a filter before it reads
 * and removes it when it lets go of its build (a rescan, or no more rows
 * wanted), and the thread must not read a filter being freed.
 */
void
gpuhash_heap_reader_set_key_filter(GpuhashHeapReader *r, const uint64 *words, uint64 nwords,
								   int col, Oid type, int col2, Oid type2, bool mixed)
{
#if PG_VERSION_NUM < 170000
	if (r->pipe && words != r->kf.words)
		gpuhash_read_ahead_reset(r);
	/* a filter found useless is not tried again on a rescan */
	r->kf.words = r->kf_dropped ? NULL : words;
	r->kf.nwords = nwords;
	r->kf.col[0] = col;
	r->kf.col[1] = col2;
	r->kf.att[0] = r->attno[col];
	r->kf.att[1] = col2 >= 0 ? r->attno[col2] : -1;
	r->kf.type[0] = type;
	r->kf.type[1] = type2;
	r->kf.mixed = mixed;
	key_filter_offsets(r);
	if (r->pipe)
		gpuhash_read_ahead_key_filter(r);
#endif
}

/* Rows the key filter removed, and whether it was switched off after its first rows. */
void
gpuhash_heap_reader_key_filter_stats(const GpuhashHeapReader *r, uint64 *removed, bool *dropped)
{
	*removed = r->kf_removed;
	*dropped = r->kf_dropped;
}

/* A side read by a heap reader, and how it filters the rows (EXPLAIN's Direct Scan). */
void
gpuhash_heap_reader_describe(StringInfo buf, const char *side, const GpuhashHeapReader *r)
{
	int			compiled,
				executor;

	if (r == NULL)
		return;
	if (buf->len > 0)
		appendStringInfoString(buf, ", ");
	appendStringInfoString(buf, side);
	gpuhash_heap_reader_filter(r, &compiled, &executor);
	if (compiled + executor > 0)
		appendStringInfo(buf, " (filter: %d compiled, %d by the executor%s)", compiled, executor,
						 gpuhash_heap_reader_threaded(r) ? "; pages taken apart by a helper thread" : "");
	else if (gpuhash_heap_reader_threaded(r))
		appendStringInfoString(buf, " (pages taken apart by a helper thread)");
}
