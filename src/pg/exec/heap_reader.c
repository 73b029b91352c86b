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
 * Everything the reader knows between calls lives in the scan descriptor,
 * so a rescan of the Seq Scan (table_rescan) restarts it as it restarts the
 * Seq Scan.  Servers from PostgreSQL 17 on changed the page-at-a-time
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

#include "heap_reader.h"
#include "join_node.h"
#include "numeric_fixed.h"
#include "page_thread.h"
#include "scan_filter.h"

/* what walk_tuple needs of each attribute, packed */
typedef struct WalkAtt
{
	int16		len;
	char		align;
	bool		byval;
} WalkAtt;

/*
 * With a helper thread, the backend pins pages ahead into a ring of slots
 * and the thread deforms and filters each one (page_thread.c); the backend
 * then hands on its rows: those the thread passed as they are, those whose
 * compiled quals need a function call after testing them itself, and those
 * the thread could not take apart (fewer attributes than wanted) through
 * the Seq Scan's slot.
 */
#define READ_SLOTS 16

/* the thread is started after this many pages, if at most 1 row in 4 passed */
#define READ_THREAD_SAMPLE_PAGES 64
#define READ_THREAD_PASS_DIV 4

#define ROW_PASS	0
#define ROW_CHECK	1
#define ROW_SLOT	2

typedef struct ReadSlot
{
	Buffer		buf;			/* the backend's own pin on the page */
	Page		page;
	BlockNumber block;
	int			ntup;
	OffsetNumber offs[MaxHeapTuplesPerPage];	/* its visible tuples */

	/* written by the thread */
	int			nout;
	uint32		filtered;
	uint8		kind[MaxHeapTuplesPerPage];
	OffsetNumber out_off[MaxHeapTuplesPerPage];
	Datum	   *values;			/* nout rows of natts_needed attributes */
	bool	   *isnull;
} ReadSlot;

typedef struct ReadPipe
{
	GpuhashPageThread *thread;
	ReadSlot   *slots;			/* READ_SLOTS of them */
	uint64		posted;			/* slots filled so far */
	uint64		head;			/* the next to hand on */
	bool		head_ready;		/* the thread is done with the head slot */
	int			cursor;			/* the head slot's next row */
	bool		scan_done;		/* no page is left to pin */

	/* what the thread reads (set up once; the filter is the reader's) */
	int			natts_needed;
	const struct WalkAtt *watt;
	const GpuhashScanFilter *filter;
} ReadPipe;

struct GpuhashHeapReader
{
	ScanState  *node;			/* the Seq Scan */
	int			ncols;			/* its output columns */
	int		   *attno;			/* the heap attribute (0-based) of each */
	int			natts_needed;	/* a tuple read in place has at least these */
	bool		in_place;		/* wanted attributes by-value at fixed offsets */
	uint32	   *off;			/* each output column's offset past t_hoff */
	int16	   *len;
	bool		walk;			/* else, tuples are deformed here, not in a slot */
	struct WalkAtt *watt;		/* attributes 0 .. natts_needed - 1 */

	/* the Seq Scan's filter, when it has one */
	GpuhashScanFilter *filter;	/* its compiled quals, or NULL */
	ExprState  *rest;			/* the others, or NULL */
	int			nfatts;			/* the heap attributes the filter reads */
	const int  *fatts;
	uint32	   *foff;			/* their offsets past t_hoff, in place */
	int16	   *flen;
	Datum	   *hvalues;		/* a row's attributes read in place or walked, */
	bool	   *hisnull;		/* indexed by heap attribute */
	int			nrest;			/* quals left to the executor */
	bool		filter_calls;	/* the compiled quals call functions */

	/* pages deformed by a helper thread (gpuhash.read_thread), or NULL */
	struct ReadPipe *pipe;
	bool		pipe_tried;
	bool		pipe_used;		/* it was started, for EXPLAIN ANALYZE */
	int			participants;	/* processes of the plan reading alike */
	uint32		sample_pages;	/* read before deciding on the thread */
	uint64		sample_rows;	/* their rows, */
	uint64		sample_passed;	/* and those that passed the filter */

	/* while reading (between begin and pause) */
	HeapScanDesc scan;
	bool		generic;		/* not page-at-a-time: ExecProcNode instead */
	Page		page;			/* NULL: no current page */
	int			index;			/* next entry of scan->rs_vistuples */
	uint64		returned;		/* rows that passed the filter */
	uint64		filtered;		/* rows it removed */
	HeapTupleData tuple;
};

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
	 * Other tuples are deformed here when no qual needs the executor's slot:
	 * storing each tuple in the slot takes and drops a buffer pin, which
	 * cost as much as the deform itself (bench/NOTES.md section 29).
	 */
	r->walk = r->rest == NULL;
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
static bool
next_page(GpuhashHeapReader *r)
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
 * Does a row pass the compiled quals?  Comparison functions run in the Seq
 * Scan's per-tuple memory, reset for each row, as ExecQual's do.
 */
static inline bool
filter_pass(GpuhashHeapReader *r, const Datum *values, const bool *isnull)
{
	ExprContext *econtext = r->node->ps.ps_ExprContext;
	MemoryContext old;
	bool		pass;

	if (!r->filter_calls)
		return gpuhash_scan_filter_pass(r->filter, values, isnull);
	ResetExprContext(econtext);
	old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	pass = gpuhash_scan_filter_pass(r->filter, values, isnull);
	MemoryContextSwitchTo(old);
	return pass;
}

/*
 * A tuple that cannot be read in place: deformed through the Seq Scan's
 * slot and filtered there, as the Seq Scan would; false when filtered out.
 */
static pg_noinline bool
read_through_slot(GpuhashHeapReader *r, HeapTupleHeader td, ItemId lpp, OffsetNumber lineoff,
				  Buffer buf, BlockNumber block, Datum *values, bool *isnull)
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
 * Deform the first natts attributes of a tuple of len bytes that has them
 * all into hv and hn, as the slot's deform would (by-reference values point
 * into the page, which stays pinned); false when they would run past the
 * tuple's end, which a valid tuple never does.  It reads nothing but the
 * tuple, so the read thread may call it.
 */
static inline bool
walk_atts(const WalkAtt *watt, int natts, HeapTupleHeader td, uint32 len, Datum *hv, bool *hn)
{
	const char *tp = (const char *) td + td->t_hoff;
	const bits8 *bp = td->t_bits;
	bool		hasnull = (td->t_infomask & HEAP_HASNULL) != 0;
	uint32		end = len > td->t_hoff ? len - td->t_hoff : 0;
	uint32		off = 0;

	for (int a = 0; a < natts; a++)
	{
		const WalkAtt *wa = &watt[a];

		if (hasnull && att_isnull(a, bp))
		{
			hv[a] = (Datum) 0;
			hn[a] = true;
			continue;
		}
		hn[a] = false;
		if (off >= end)
			return false;
		if (wa->len == -1)
			off = att_align_pointer(off, wa->align, -1, tp + off);
		else
			off = att_align_nominal(off, wa->align);
		hv[a] = fetch_att(tp + off, wa->byval, wa->len);
		off = att_addlength_pointer(off, wa->len, tp + off);
		if (off > end)
			return false;
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
	Datum	   *hv = r->hvalues;
	bool	   *hn = r->hisnull;

	if (!walk_atts(r->watt, r->natts_needed, td, ItemIdGetLength(lpp), hv, hn))
		return read_through_slot(r, td, lpp, lineoff, r->scan->rs_cbuf, r->scan->rs_cblock,
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

/* Does a tuple read in place pass the compiled filter? */
static inline bool
pass_in_place(GpuhashHeapReader *r, const char *tp)
{
	for (int k = 0; k < r->nfatts; k++)
	{
		r->hvalues[r->fatts[k]] = fetch_att(tp + r->foff[k], true, r->flen[k]);
		/* a walked tuple may have left it set */
		r->hisnull[r->fatts[k]] = false;
	}
	return filter_pass(r, r->hvalues, r->hisnull);
}

/* ---- pages deformed by a helper thread ---------------------------------- */

/* In the thread: deform and filter the rows of slot seq. */
static void
pipe_work(void *arg, uint64 seq)
{
	ReadPipe   *p = arg;
	ReadSlot   *sl = &p->slots[seq % READ_SLOTS];
	int			nn = p->natts_needed;
	int			nout = 0;
	uint32		filtered = 0;

	for (int i = 0; i < sl->ntup; i++)
	{
		OffsetNumber lineoff = sl->offs[i];
		ItemId		lpp = PageGetItemId(sl->page, lineoff);
		HeapTupleHeader td = (HeapTupleHeader) PageGetItem(sl->page, lpp);
		Datum	   *hv = sl->values + (size_t) nout * nn;
		bool	   *hn = sl->isnull + (size_t) nout * nn;

		sl->out_off[nout] = lineoff;
		if (HeapTupleHeaderGetNatts(td) < nn ||
			!walk_atts(p->watt, nn, td, ItemIdGetLength(lpp), hv, hn))
			sl->kind[nout++] = ROW_SLOT;
		else if (p->filter == NULL)
			sl->kind[nout++] = ROW_PASS;
		else
			switch (gpuhash_scan_filter_pass_pure(p->filter, hv, hn))
			{
				case 1:
					sl->kind[nout++] = ROW_PASS;
					break;
				case 0:
					filtered++;
					break;
				default:
					sl->kind[nout++] = ROW_CHECK;
					break;
			}
	}
	sl->nout = nout;
	sl->filtered = filtered;
}

/* Let go of the pinned slots and start numbering them again; the thread is stopped. */
static void
pipe_release(ReadPipe *p)
{
	for (uint64 q = p->head; q < p->posted; q++)
		ReleaseBuffer(p->slots[q % READ_SLOTS].buf);
	p->head = p->posted = 0;
	p->head_ready = false;
	p->cursor = 0;
	p->scan_done = false;
}

static void
pipe_free(ReadPipe *p)
{
	if (p->thread)
		gpuhash_page_thread_destroy(p->thread);
	if (p->slots)
		for (int i = 0; i < READ_SLOTS; i++)
		{
			free(p->slots[i].values);
			free(p->slots[i].isnull);
		}
	free(p->slots);
	free(p);
}

/*
 * The query's memory is going (it failed, or ended without the node's End):
 * the thread reads the reader's filter, so it stops first.  The pins are
 * not released here: a failed query's resource owner has released them.
 */
static void
pipe_memory_gone(void *arg)
{
	GpuhashHeapReader *r = arg;

	if (r->pipe)
	{
		pipe_free(r->pipe);
		r->pipe = NULL;
	}
}

/* The machine's processors, once. */
static int
online_cpus(void)
{
	static int	ncpus = 0;

	if (ncpus == 0)
	{
		long		n = sysconf(_SC_NPROCESSORS_ONLN);

		ncpus = n > 0 ? (int) n : 1;
	}
	return ncpus;
}

/*
 * Start the thread, when the reader deforms its tuples and its filter
 * removes most of them: then the thread does most of the work and the
 * backend little more than pin pages.  Where most rows pass, the backend's
 * own work on each (copying it into the batch, probing, folding) is the
 * larger part, and a thread only adds the cost of handing rows across cores:
 * on the H100 host, TPC-H q06 (2 % pass) and q15 (4 %) ran 30 % faster with
 * it, q01 (98 %) 5 % slower and the joins of q03 and q05 13-27 % slower
 * (bench/NOTES.md section 29).  Nor where the plan's processes and their
 * threads would outnumber the processors: a thread that has to share a
 * core with another process slows both.  Otherwise (or if it cannot be
 * started) the backend reads alone.
 */
static void
pipe_setup(GpuhashHeapReader *r)
{
	ReadPipe   *p;
	MemoryContextCallback *cb;
	const char *why = NULL;
	int			nn = r->natts_needed;

	r->pipe_tried = true;
	if (!gpuhash_read_thread || r->generic || r->in_place || !r->walk || nn == 0 ||
		r->filter == NULL ||
		r->sample_passed * READ_THREAD_PASS_DIV > r->sample_rows ||
		2 * r->participants > online_cpus())
		return;
	for (int a = 0; a < nn; a++)
		if (r->watt[a].len < -1)
			return;				/* a cstring, which heap tables do not have */
#ifdef HAVE_INT128
	/* the powers of ten are filled in on first use: here, not in the thread */
	(void) gpuhash_fixed_pow10(0);
#endif
	p = calloc(1, sizeof(ReadPipe));
	if (p == NULL || (p->slots = calloc(READ_SLOTS, sizeof(ReadSlot))) == NULL)
		why = "out of memory";
	for (int i = 0; why == NULL && i < READ_SLOTS; i++)
	{
		p->slots[i].buf = InvalidBuffer;
		p->slots[i].values = malloc((size_t) MaxHeapTuplesPerPage * nn * sizeof(Datum));
		p->slots[i].isnull = malloc((size_t) MaxHeapTuplesPerPage * nn * sizeof(bool));
		if (p->slots[i].values == NULL || p->slots[i].isnull == NULL)
			why = "out of memory";
	}
	if (why == NULL)
	{
		p->natts_needed = nn;
		p->watt = r->watt;
		p->filter = r->filter;
		p->thread = gpuhash_page_thread_create(pipe_work, p, &why);
	}
	if (why != NULL)
	{
		elog(DEBUG1, "gpuhash: the direct read goes on without a helper thread: %s", why);
		if (p)
			pipe_free(p);
		return;
	}
	cb = MemoryContextAlloc(GetMemoryChunkContext(r), sizeof(MemoryContextCallback));
	cb->func = pipe_memory_gone;
	cb->arg = r;
	MemoryContextRegisterResetCallback(GetMemoryChunkContext(r), cb);
	r->pipe = p;
	r->pipe_used = true;
}

/* Pin pages ahead until the ring is full or the scan has none left. */
static void
pipe_fill(GpuhashHeapReader *r)
{
	ReadPipe   *p = r->pipe;

	while (!p->scan_done && p->posted - p->head < READ_SLOTS)
	{
		ReadSlot   *sl;

		if (!next_page(r))
		{
			p->scan_done = true;
			break;
		}
		sl = &p->slots[p->posted % READ_SLOTS];
		IncrBufferRefCount(r->scan->rs_cbuf);
		sl->buf = r->scan->rs_cbuf;
		sl->page = r->page;
		sl->block = r->scan->rs_cblock;
		sl->ntup = r->scan->rs_ntuples;
		memcpy(sl->offs, r->scan->rs_vistuples, sl->ntup * sizeof(OffsetNumber));
		gpuhash_page_thread_post(p->thread, ++p->posted);
	}
}

/* gpuhash_heap_reader_next with a thread: the rows of the slots it has done. */
static bool
pipe_next(GpuhashHeapReader *r, Datum *values, bool *isnull)
{
	ReadPipe   *p = r->pipe;
	int			nn = p->natts_needed;

	for (;;)
	{
		if (p->head_ready)
		{
			ReadSlot   *sl = &p->slots[p->head % READ_SLOTS];

			while (p->cursor < sl->nout)
			{
				int			k = p->cursor++;
				Datum	   *hv = sl->values + (size_t) k * nn;
				bool	   *hn = sl->isnull + (size_t) k * nn;

				if (sl->kind[k] == ROW_SLOT)
				{
					ItemId		lpp = PageGetItemId(sl->page, sl->out_off[k]);

					if (!read_through_slot(r, (HeapTupleHeader) PageGetItem(sl->page, lpp), lpp,
										   sl->out_off[k], sl->buf, sl->block, values, isnull))
					{
						r->filtered++;
						continue;
					}
					r->returned++;
					return true;
				}
				if (sl->kind[k] == ROW_CHECK && !filter_pass(r, hv, hn))
				{
					r->filtered++;
					continue;
				}
				for (int c = 0; c < r->ncols; c++)
				{
					values[c] = hv[r->attno[c]];
					isnull[c] = hn[r->attno[c]];
				}
				r->returned++;
				return true;
			}
			/* the head slot is spent: its page may go */
			ReleaseBuffer(sl->buf);
			sl->buf = InvalidBuffer;
			p->head++;
			p->head_ready = false;
			p->cursor = 0;
		}
		pipe_fill(r);
		if (p->head == p->posted)
			return false;
		gpuhash_page_thread_wait(p->thread, p->head);
		p->head_ready = true;
		r->filtered += p->slots[p->head % READ_SLOTS].filtered;
	}
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
	{
		gpuhash_page_thread_stop(r->pipe->thread);
		pipe_release(r->pipe);
		gpuhash_page_thread_restart(r->pipe->thread);
	}
#endif
}

/* The node ends: the thread stops and the pages it had are let go. */
void
gpuhash_heap_reader_end(GpuhashHeapReader *r)
{
#if PG_VERSION_NUM < 170000
	if (r->pipe)
	{
		gpuhash_page_thread_stop(r->pipe->thread);
		pipe_release(r->pipe);
		pipe_free(r->pipe);
		r->pipe = NULL;
	}
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
		return pipe_next(r, values, isnull);
	for (;;)
	{
		if (likely(r->page != NULL) && r->index < r->scan->rs_ntuples)
		{
			OffsetNumber lineoff = r->scan->rs_vistuples[r->index++];
			ItemId		lpp = PageGetItemId(r->page, lineoff);
			HeapTupleHeader td = (HeapTupleHeader) PageGetItem(r->page, lpp);

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
			else if (likely(r->walk) && HeapTupleHeaderGetNatts(td) >= r->natts_needed)
			{
				if (!walk_tuple(r, td, lpp, lineoff, values, isnull))
				{
					r->filtered++;
					continue;
				}
			}
			else if (!read_through_slot(r, td, lpp, lineoff, r->scan->rs_cbuf,
										r->scan->rs_cblock, values, isnull))
			{
				r->filtered++;
				continue;
			}
			r->returned++;
			return true;
		}
		if (unlikely(!r->pipe_tried) && r->page != NULL)
		{
			/* a page is done: count it, and after enough of them decide on the thread */
			r->sample_rows += r->scan->rs_ntuples;
			if (++r->sample_pages >= READ_THREAD_SAMPLE_PAGES)
			{
				r->sample_passed += r->returned;
				pipe_setup(r);
				if (r->pipe)
					return pipe_next(r, values, isnull);
			}
		}
		if (!next_page(r))
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
	if (pgstat_should_count_relation(rel))
		rel->pgstat_info->t_counts.t_tuples_returned += r->returned + r->filtered;
	if (child->instrument)
	{
		InstrStopNode(child->instrument, (double) r->returned);
		InstrCountFiltered1(child, r->filtered);
	}
	r->returned = 0;
	r->filtered = 0;
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
