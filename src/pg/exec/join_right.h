/*
 * join_right.h - a semi or anti join built from its outer side
 * (GPUHASH_JOIN_IS_RIGHT): the probe rows mark the build rows their keys
 * reach, and the marked (anti: unmarked) build rows are returned once
 * after the last probe (join_right.c).
 */
#ifndef GPUHASH_JOIN_RIGHT_H
#define GPUHASH_JOIN_RIGHT_H

#include "join_state.h"

#pragma GCC visibility push(hidden)

/*
 * A right semi or anti join's probe marks every build row of its key, so
 * a key probed once needs no second probe: with a key repeated on both
 * sides, the probes' pairs would otherwise be the product of the two
 * counts (a fuzzer case: a key on 200 712 build rows and 331 628 probe
 * rows, 66 billion pairs, 133 s).  The keys probed lately are kept by
 * hash, one a slot; a key found in its slot is left out of the batch.
 * The marks of a batch are made before the next batch is read, and those
 * of a shared build are every participant's, so a key left out was marked
 * for.
 */
#define RECENT_KEYS 65536

typedef struct RecentKeys
{
	int64		key[RECENT_KEYS];
	bool		used[RECENT_KEYS];
} RecentKeys;

/* Was key probed lately?  Remembered from now on if not. */
static inline bool
gpuhash_recent_key(RecentKeys *rk, int64 key)
{
	uint32		slot = (uint32) (((uint64) key * UINT64CONST(0x9E3779B97F4A7C15)) >> 48);

	if (rk->used[slot] && rk->key[slot] == key)
		return true;
	rk->used[slot] = true;
	rk->key[slot] = key;
	return false;
}

/* join_right.c */
extern void gpuhash_join_right_begin(GpuJoinState *gj);
extern void gpuhash_join_right_reset(GpuJoinState *gj);
extern void gpuhash_join_mark_build_rows(GpuJoinState *gj);
extern bool gpuhash_join_right_emits(GpuJoinState *gj);
extern bool gpuhash_join_next_build_row(GpuJoinState *gj, uint64 *brow);
extern TupleTableSlot *gpuhash_join_build_row_tuple(GpuJoinState *gj, uint64 brow);

#pragma GCC visibility pop

#endif
