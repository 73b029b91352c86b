/*
 * join_right.c - a semi or anti join built from its outer side.
 *
 * PostgreSQL 15 has no right semi join, so a GpuHashJoin of its own join
 * type (GPUHASH_JOIN_RIGHT_SEMI or _ANTI) hashes the semi join's outer
 * side and probes it with the inner side's rows as they are read: each
 * build row that a pair reaches is marked, and after the last probe the
 * marked (anti: unmarked) build rows are returned, by one participant
 * when the build is shared.
 */
#include "gpuhash_pg.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "join_right.h"

/*
 * The build is done: a byte a build row for its mark (a shared build's are
 * in the query's shared memory, join_parallel.c), and the keys probed
 * lately where no other clause decides a pair.
 */
void
gpuhash_join_right_begin(GpuJoinState *gj)
{
	if (gj->shared == NULL)
		gj->build_match = MemoryContextAllocExtended(gj->run_cxt, Max(gj->inner.nrows, 1),
													 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	if (gj->join_qual == NULL && gj->row_qual == NULL)
		gj->recent_keys = MemoryContextAllocZero(gj->run_cxt, sizeof(RecentKeys));
}

/* A rescan keeping the build: no marks, and every key probed again. */
void
gpuhash_join_right_reset(GpuJoinState *gj)
{
	gj->rs_phase = RS_PROBING;
	gj->rs_pos = 0;
	if (gj->build_match != NULL && gj->shared == NULL)
		memset(gj->build_match, 0, Max(gj->inner.nrows, 1));
	if (gj->recent_keys != NULL)
		memset(gj->recent_keys, 0, sizeof(RecentKeys));
}

/*
 * The scan tuple of build row brow alone, as a right semi or anti join
 * returns it: the outer (probe) columns and the memo's are NULL, and nothing
 * above reads them (such a join's output is its build side's columns).
 */
TupleTableSlot *
gpuhash_join_build_row_tuple(GpuJoinState *gj, uint64 brow)
{
	TupleTableSlot *slot = gj->css.ss.ss_ScanTupleSlot;
	int			first_memo = gj->n_outer + gj->n_inner;

	ExecClearTuple(slot);
	for (int c = 0; c < gj->n_outer; c++)
	{
		slot->tts_values[c] = (Datum) 0;
		slot->tts_isnull[c] = true;
	}
	gpuhash_store_get(&gj->inner, brow, slot->tts_values + gj->n_outer,
					  slot->tts_isnull + gj->n_outer);
	for (int c = first_memo; c < first_memo + gj->n_memo; c++)
	{
		slot->tts_values[c] = (Datum) 0;
		slot->tts_isnull[c] = true;
	}
	return ExecStoreVirtualTuple(slot);
}

/*
 * A right semi or anti join has read its last probe row: does this process
 * return the marked (anti: unmarked) build rows?  When parallel, only the
 * last participant to finish does, once every mark is made
 * (gpuhash_join_last_to_probe).
 */
bool
gpuhash_join_right_emits(GpuJoinState *gj)
{
	if (gj->rs_phase != RS_PROBING)
		return gj->rs_phase == RS_EMITTING;
	gj->rs_pos = 0;
	gj->rs_phase = gj->table_empty || gj->build_match == NULL ? RS_DONE :
		gj->shared == NULL || gpuhash_join_last_to_probe(gj) ? RS_EMITTING : RS_DONE;
	/* a participant that does not return them lets go of the barrier all the same */
	if (gj->rs_phase == RS_DONE)
		gpuhash_join_detach(gj);
	return gj->rs_phase == RS_EMITTING;
}

/*
 * The next build row a right semi join returns (marked) or a right anti
 * join (not marked), from gj->rs_pos on, in *brow; false after the last.
 */
bool
gpuhash_join_next_build_row(GpuJoinState *gj, uint64 *brow)
{
	bool		want = gj->jointype == GPUHASH_JOIN_RIGHT_SEMI;

	while (gj->rs_pos < gj->inner.nrows)
	{
		uint64		b = gj->rs_pos++;

		if ((b & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
		if ((gj->build_match[b] != 0) == want)
		{
			*brow = b;
			return true;
		}
	}
	return false;
}

/*
 * A right semi or anti join's batch: mark the build rows its pairs reach,
 * where the other join clauses hold.  Participants mark the shared bytes side by
 * side; a byte is only ever set to 1, and read for the result only after
 * every participant has finished (the barrier orders it).
 */
void
gpuhash_join_mark_build_rows(GpuJoinState *gj)
{
	ExprContext *econtext = gj->css.ss.ps.ps_ExprContext;
	uint8	   *match = gj->build_match;

	while (gpuhash_join_next_pairs(gj))
	{
		for (uint64 j = 0; j < gj->npairs; j++)
		{
			uint64		b = gj->brow[j];
			bool		ok;

			if (match[b])
				continue;
			if (gj->join_qual != NULL)
			{
				if ((j & 0xFFFF) == 0xFFFF)
					CHECK_FOR_INTERRUPTS();
				econtext->ecxt_scantuple = gpuhash_join_scan_tuple(gj, gj->pidx[j], true,
																   gj->pidx[j], b);
				ok = ExecQual(gj->join_qual, econtext);
				ResetExprContext(econtext);
				if (!ok)
					continue;
			}
			match[b] = 1;
		}
	}
}
