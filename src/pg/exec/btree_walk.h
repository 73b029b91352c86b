/*
 * btree_walk.h - the live heap TIDs of a run of sorted keys, found by one
 * walk along a B-tree's leaf level (btree_walk.c), for IndexProbeJoin.
 */
#ifndef GPUHASH_BTREE_WALK_H
#define GPUHASH_BTREE_WALK_H

#include "access/nbtree.h"
#include "storage/itemptr.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#pragma GCC visibility push(hidden)

typedef struct GpuhashBtreeWalk
{
	Relation	index;			/* led by an int2, int4 or int8 column, ASC NULLS LAST */
	Oid			key_type;		/* ... that column's */
	Snapshot	snapshot;
	BTScanInsert insert;		/* for a descent to one key */
	Buffer		buf;			/* the leaf the walk stands on (pinned), or none */
	bool		locked;			/* ... and read-locked */
	uint64		descents;
	uint64		pages;			/* leaf pages read, descents' leaves included */
} GpuhashBtreeWalk;

extern void gpuhash_btree_walk_init(GpuhashBtreeWalk *w, Relation index, Snapshot snapshot);

/*
 * Appends the TIDs of the live index items whose first column is key to
 * (*tids)[*ntids...], growing the array (palloc'd, *cap entries) as needed.
 * Keys must come in ascending order until gpuhash_btree_walk_stop.  The walk
 * keeps its leaf's lock after the call: gpuhash_btree_walk_unlock lets go of
 * it (keeping the place) before anything that could wait, read other pages
 * or take interrupts.
 */
extern void gpuhash_btree_walk_key(GpuhashBtreeWalk *w, int64 key, ItemPointerData **tids,
								   uint32 *ntids, uint32 *cap);

extern void gpuhash_btree_walk_unlock(GpuhashBtreeWalk *w);

/* Lets go of the leaf; the next key may be any. */
extern void gpuhash_btree_walk_stop(GpuhashBtreeWalk *w);

#pragma GCC visibility pop

#endif
