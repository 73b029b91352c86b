/*
 * heap_reader_int.h - what the direct heap reader (heap_reader.c) and its
 * read-ahead thread (read_ahead.c) share: the reader's state, and the
 * deform and filter of a row.
 */
#ifndef GPUHASH_HEAP_READER_INT_H
#define GPUHASH_HEAP_READER_INT_H

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "executor/executor.h"

#include "ght_keyfilter.h"
#include "heap_reader.h"
#include "scan_filter.h"

#pragma GCC visibility push(hidden)

/* what walk_tuple needs of each attribute, packed */
typedef struct WalkAtt
{
	int16		len;
	char		align;
	bool		byval;
} WalkAtt;

/* a join's Bloom filter of its table's keys, and where a row's key is */
typedef struct KeyFilter
{
	const uint64 *words;		/* NULL: none, or switched off */
	uint64		nwords;
	int			col[2];			/* the key's output columns (col[1] < 0: one) */
	int			att[2];			/* ... their heap attributes */
	Oid			type[2];
	bool		mixed;			/* two columns mixed, not packed (gpuhash_two_keys) */

	/*
	 * Where the key columns lie at fixed offsets in a tuple without NULLs
	 * (only fixed-length attributes before them), the key is tested before
	 * anything else is read: early, with their offsets past t_hoff, and
	 * the bytes and attributes such a tuple must have.
	 */
	bool		early;
	uint32		off[2];
	int16		len[2];
	uint32		end;
	int			natts;
} KeyFilter;

struct GpuhashHeapReader
{
	ScanState  *node;			/* the Seq Scan */
	int			ncols;			/* its output columns */
	int		   *attno;			/* the heap attribute (0-based) of each */
	int			natts_needed;	/* a tuple read in place has at least these */
	bool		in_place;		/* wanted attributes by-value at fixed offsets */
	uint32	   *off;			/* each output column's offset past t_hoff */
	int16	   *len;
	struct WalkAtt *watt;		/* attributes 0 .. natts_needed - 1, to walk */

	/* the Seq Scan's filter, when it has one */
	GpuhashScanFilter *filter;	/* its compiled quals, or NULL */
	ExprState  *rest;			/* the others, or NULL */
	int			nfatts;			/* the heap attributes the filter reads */
	const int  *fatts;
	uint32	   *foff;			/* their offsets past t_hoff, in place */
	int16	   *flen;
	Datum	   *hvalues;		/* a row's filter attributes read in place, */
	bool	   *hisnull;		/* indexed by heap attribute (never NULL) */
	Datum	   *wvalues;		/* a walked row's attributes, likewise */
	bool	   *wisnull;
	int			nrest;			/* quals left to the executor */
	bool		filter_calls;	/* the compiled quals call functions */

	/* a join's filter of its table's keys (gpuhash_heap_reader_set_key_filter) */
	KeyFilter	kf;
	bool		kf_decided;		/* its first rows have been weighed */
	bool		kf_dropped;		/* ... and it removed too few of them to keep */
	uint64		kf_tested;		/* rows it tested before the weighing */
	uint64		kf_removed;		/* rows it removed, in all */
	uint64		kf_removed_run; /* ... since _begin (the Seq Scan's filter removed them) */

	/* pages deformed by a helper thread (gpuhash.read_thread), or NULL */
	struct GpuhashReadAhead *pipe;
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

/* the read-ahead thread is decided on after this many pages */
#define READ_AHEAD_SAMPLE_PAGES 64

#if PG_VERSION_NUM < 170000

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
 * May the key of datums first and second (when the key has two columns)
 * be in the join's table?  It reads nothing but its arguments and the
 * filter, so the read thread may call it, as the two tests below.
 */
static inline bool
key_filter_has(const KeyFilter *kf, Datum first, Datum second)
{
	int64		key = gpuhash_key_value(kf->type[0], first);

	if (kf->col[1] >= 0)
		key = gpuhash_two_keys(key, gpuhash_key_value(kf->type[1], second), kf->mixed);
	return ght_keyfilter_may_contain(kf->words, kf->nwords, key);
}

/*
 * Might the row whose key columns are at idx[0] and idx[1] (< 0: none) of
 * values match the join's table?  A NULL key matches nothing.
 */
static inline bool
key_filter_pass(const KeyFilter *kf, const int *idx, const Datum *values, const bool *isnull)
{
	if (isnull[idx[0]] || (idx[1] >= 0 && isnull[idx[1]]))
		return false;
	return key_filter_has(kf, values[idx[0]], idx[1] >= 0 ? values[idx[1]] : (Datum) 0);
}

/*
 * The early test (KeyFilter.early) of tuple td of len bytes: 1 when the
 * key may be in the table, 0 when it is not, -1 when the tuple is not one
 * the early test can read (it has NULLs, or fewer attributes).
 */
static inline int
key_filter_early(const KeyFilter *kf, HeapTupleHeader td, uint32 len)
{
	const char *tp;

	if ((td->t_infomask & HEAP_HASNULL) || HeapTupleHeaderGetNatts(td) < kf->natts ||
		td->t_hoff + kf->end > len)
		return -1;
	tp = (const char *) td + td->t_hoff;
	return key_filter_has(kf, fetch_att(tp + kf->off[0], true, kf->len[0]),
						  kf->col[1] >= 0 ? fetch_att(tp + kf->off[1], true, kf->len[1]) : (Datum) 0)
		? 1 : 0;
}

/*
 * A row is about to be handed on, its output columns in values: false when
 * the key filter removes it.
 */
static inline bool
key_filter_keeps(GpuhashHeapReader *r, const Datum *values, const bool *isnull)
{
	if (likely(r->kf.words == NULL))
		return true;
	if (!r->kf_decided)
		r->kf_tested++;
	if (key_filter_pass(&r->kf, r->kf.col, values, isnull))
		return true;
	r->kf_removed++;
	r->kf_removed_run++;
	return false;
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

/* heap_reader.c */
extern bool gpuhash_heap_reader_next_page(GpuhashHeapReader *r);
extern bool gpuhash_heap_reader_through_slot(GpuhashHeapReader *r, HeapTupleHeader td, ItemId lpp,
											 OffsetNumber lineoff, Buffer buf, BlockNumber block,
											 Datum *values, bool *isnull);

/* read_ahead.c */
extern void gpuhash_read_ahead_try(GpuhashHeapReader *r);
extern bool gpuhash_read_ahead_next(GpuhashHeapReader *r, Datum *values, bool *isnull);
extern void gpuhash_read_ahead_reset(GpuhashHeapReader *r);
extern void gpuhash_read_ahead_end(GpuhashHeapReader *r);
extern void gpuhash_read_ahead_key_filter(GpuhashHeapReader *r);

#endif

#pragma GCC visibility pop

#endif
