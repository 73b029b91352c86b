/*
 * read_ahead.c - the direct heap reader's pages taken apart by a helper
 * thread.
 *
 * On the H100 host a process reading TPC-H's lineitem spends most of its
 * read taking rows apart (136 ns a row, the page copies a fifth of that),
 * and a parallel plan of 8 processes leaves 8 of 16 cores idle.  So, where
 * a reader deforms its rows itself and its filter removes most of them,
 * the backend pins pages ahead into a ring of slots and a thread
 * (page_thread.c) walks each page's visible tuples and applies the
 * compiled quals that need no function call; the backend then hands on
 * the rows: those the thread passed as they are, those whose quals need a
 * call after testing them itself, and those the thread could not take
 * apart (fewer attributes than wanted) through the Seq Scan's slot
 * (bench/NOTES.md section 29).  While the backend waits for a page, it
 * takes the next one apart itself (page_thread.c): where the filter keeps
 * few rows it has little else to do, and a backend spinning idle beside
 * its thread had left half of a parallel read's cores unused (TPC-H q12
 * 17 % faster on the H200 host, section 33).
 */
#include "gpuhash_pg.h"

#include "access/parallel.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

#include "heap_reader_int.h"
#include "helper_thread.h"
#include "join_node.h"
#include "numeric_fixed.h"
#include "page_thread.h"

#if PG_VERSION_NUM < 170000

/* pages in flight */
#define READ_SLOTS 16

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
	uint32		kf_removed;		/* rows the key filter removed */
	uint8		kind[MaxHeapTuplesPerPage];
	OffsetNumber out_off[MaxHeapTuplesPerPage];
	Datum	   *values;			/* nout rows of natts_needed attributes */
	bool	   *isnull;
} ReadSlot;

typedef struct GpuhashReadAhead
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

	/*
	 * The reader's key filter, copied while nothing is in flight: the
	 * backend may change its own between runs.
	 */
	KeyFilter	kf;
} ReadAhead;


/* In the thread: deform and filter the rows of slot seq. */
static void
pipe_work(void *arg, uint64 seq)
{
	ReadAhead  *p = arg;
	ReadSlot   *sl = &p->slots[seq % READ_SLOTS];
	int			nn = p->natts_needed;
	int			nout = 0;
	uint32		filtered = 0;
	uint32		kf_removed = 0;

	for (int i = 0; i < sl->ntup; i++)
	{
		OffsetNumber lineoff = sl->offs[i];
		ItemId		lpp = PageGetItemId(sl->page, lineoff);
		HeapTupleHeader td = (HeapTupleHeader) PageGetItem(sl->page, lpp);
		Datum	   *hv = sl->values + (size_t) nout * nn;
		bool	   *hn = sl->isnull + (size_t) nout * nn;
		int			pass;
		int			early;

		sl->out_off[nout] = lineoff;
		early = p->kf.words != NULL && p->kf.early ?
			key_filter_early(&p->kf, td, ItemIdGetLength(lpp)) : -1;
		if (early == 0)
		{
			kf_removed++;
			continue;
		}
		if (HeapTupleHeaderGetNatts(td) < nn ||
			!walk_atts(p->watt, nn, td, ItemIdGetLength(lpp), hv, hn))
		{
			sl->kind[nout++] = ROW_SLOT;
			continue;
		}
		pass = p->filter == NULL ? 1 : gpuhash_scan_filter_pass_pure(p->filter, hv, hn);
		if (pass == 0)
			filtered++;
		else if (pass < 0)
			sl->kind[nout++] = ROW_CHECK;
		/* the key filter comes after the quals, as in the backend */
		else if (p->kf.words != NULL && early < 0 && !key_filter_pass(&p->kf, p->kf.att, hv, hn))
			kf_removed++;
		else
			sl->kind[nout++] = ROW_PASS;
	}
	sl->nout = nout;
	sl->filtered = filtered;
	sl->kf_removed = kf_removed;
}

/* Let go of the pinned slots and start numbering them again; the thread is stopped. */
static void
pipe_release(ReadAhead *p)
{
	for (uint64 q = p->head; q < p->posted; q++)
		ReleaseBuffer(p->slots[q % READ_SLOTS].buf);
	p->head = p->posted = 0;
	p->head_ready = false;
	p->cursor = 0;
	p->scan_done = false;
}

static void
pipe_free(ReadAhead *p)
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

/* This process's place among a parallel plan's participants: the leader 0. */
static int
participant_number(void)
{
	return IsParallelWorker() ? ParallelWorkerNumber + 1 : 0;
}

/*
 * Start the thread, when the reader deforms its tuples and its filter
 * removes most of them: then the thread does most of the work and the
 * backend little more than pin pages.  Where most rows pass, the backend's
 * own work on each (copying it into the batch, probing, folding) is the
 * larger part, and a thread only adds the cost of handing rows across cores:
 * on the H100 host, TPC-H q06 (2 % pass) and q15 (4 %) ran 30 % faster with
 * it, q01 (98 %) 5 % slower and the joins of q03 and q05 13-27 % slower
 * (bench/NOTES.md section 29).  Nor where a parallel plan's processes and
 * their threads would outnumber the processors: a thread that has to share
 * a core with another process slows both.  Where the processes leave only
 * some processors free, the first participants (by worker number, the
 * leader first) take them: a plan of 9 processes on 16 processors had read
 * TPC-H q06 40 % slower than one of 8 when none of the 9 took a thread
 * (section 49).  Otherwise (or if it cannot be started) the backend reads
 * alone.
 */
void
gpuhash_read_ahead_try(GpuhashHeapReader *r)
{
	ReadAhead  *p;
	MemoryContextCallback *cb;
	const char *why = NULL;
	int			nn = r->natts_needed;

	r->pipe_tried = true;
	if (!gpuhash_read_thread || r->generic || r->in_place || r->rest != NULL || nn == 0 ||
		(r->filter == NULL && r->kf.words == NULL) ||
		r->sample_passed * GPUHASH_READ_THREAD_PASS_DIV > r->sample_rows ||
		(r->participants > 1 && participant_number() + r->participants >= gpuhash_online_cpus()))
		return;
	for (int a = 0; a < nn; a++)
		if (r->watt[a].len < -1)
			return;				/* a cstring, which heap tables do not have */
#ifdef HAVE_INT128
	/* the powers of ten are filled in on first use: here, not in the thread */
	(void) gpuhash_fixed_pow10(0);
#endif
	/* allocated first: nothing may fail once the thread runs */
	cb = MemoryContextAlloc(GetMemoryChunkContext(r), sizeof(MemoryContextCallback));
	p = calloc(1, sizeof(ReadAhead));
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
		p->kf = r->kf;
		p->thread = gpuhash_page_thread_create(pipe_work, p, READ_SLOTS, &why);
	}
	if (why != NULL)
	{
		elog(DEBUG1, "gpuhash: the direct read goes on without a helper thread: %s", why);
		if (p)
			pipe_free(p);
		return;
	}
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
	ReadAhead  *p = r->pipe;

	while (!p->scan_done && p->posted - p->head < READ_SLOTS)
	{
		ReadSlot   *sl;

		if (!gpuhash_heap_reader_next_page(r))
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

/* gpuhash_heap_reader_next with the thread: the rows of the slots it has done. */
bool
gpuhash_read_ahead_next(GpuhashHeapReader *r, Datum *values, bool *isnull)
{
	ReadAhead  *p = r->pipe;
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

					if (!gpuhash_heap_reader_through_slot(r, (HeapTupleHeader) PageGetItem(sl->page, lpp), lpp,
										   sl->out_off[k], sl->buf, sl->block, values, isnull))
					{
						r->filtered++;
						continue;
					}
					if (!key_filter_keeps(r, values, isnull))
						continue;
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
				/* the thread tested the key of the rows it passed */
				if (sl->kind[k] == ROW_CHECK && !key_filter_keeps(r, values, isnull))
					continue;
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
		r->kf_removed += p->slots[p->head % READ_SLOTS].kf_removed;
		r->kf_removed_run += p->slots[p->head % READ_SLOTS].kf_removed;
	}
}


/*
 * The Seq Scan is about to be rescanned: pages pinned ahead and rows not
 * yet handed on belong to the old scan.
 */
void
gpuhash_read_ahead_reset(GpuhashHeapReader *r)
{
	gpuhash_page_thread_stop(r->pipe->thread);
	pipe_release(r->pipe);
	gpuhash_page_thread_restart(r->pipe->thread);
}

/* The node ends: the thread stops and the pages it had are let go. */
void
gpuhash_read_ahead_end(GpuhashHeapReader *r)
{
	gpuhash_page_thread_stop(r->pipe->thread);
	pipe_release(r->pipe);
	pipe_free(r->pipe);
	r->pipe = NULL;
}

/*
 * The reader's key filter changed (between runs, with nothing in flight):
 * the thread takes the new one with the next pages.
 */
void
gpuhash_read_ahead_key_filter(GpuhashHeapReader *r)
{
	r->pipe->kf = r->kf;
}

#endif
