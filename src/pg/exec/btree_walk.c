/*
 * btree_walk.c - the TIDs of a sorted run of keys, from one walk along a
 * B-tree's leaves.
 *
 * PostgreSQL's nested loop probes an index once per outer row: a descent
 * from the root, a binary search on each level.  For TPC-H q04 at SF 10,
 * 0.57 M sorted keys of lineitem_pkey, the descents alone took 1.32 s on
 * the GPU host, a walk along the leaf level in key order 0.68 s, visiting
 * each of the 164 k leaves once (bench/index_probe, NOTES section 53).  The
 * walk moves right while the page's high key is below the key, and descends
 * again instead when the key is more than a few pages on, so that sparse
 * keys cost no more than descents.
 *
 * Concurrency follows nbtree's own readers: a leaf is read under its share
 * lock, the walk moves right by the right-link (a page split since only
 * moves keys further right; deleted and half-dead pages are stepped over),
 * and the TIDs are used after the lock is gone, which an MVCC snapshot
 * allows (a TID that VACUUM freed and a later insert reused holds a row
 * the snapshot does not see).  Items marked dead are skipped.
 */
#include "gpuhash_pg.h"

#include "access/nbtree.h"
#include "utils/rel.h"

#include "btree_walk.h"

/* more pages right than this and the walk descends again */
#define WALK_MAX_MOVES 3

/* An item's first column, NULL sorting above every key (ASC NULLS LAST). */
static inline bool
item_below(const GpuhashBtreeWalk *w, Page page, OffsetNumber off, int64 key, bool *equal)
{
	IndexTuple	it = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));
	bool		isnull;
	Datum		d = index_getattr(it, 1, RelationGetDescr(w->index), &isnull);
	int64		v;

	*equal = false;
	if (isnull)
		return false;
	v = gpuhash_key_value(w->key_type, d);
	*equal = v == key;
	return v < key;
}

/* Is the page's high key below key?  (A rightmost page has none: no.) */
static inline bool
high_key_below(const GpuhashBtreeWalk *w, Page page, BTPageOpaque opaque, int64 key, bool *equal)
{
	*equal = false;
	if (P_RIGHTMOST(opaque))
		return false;
	return item_below(w, page, P_HIKEY, key, equal);
}

/* To key's leaf from the root; false when the index is empty. */
static bool
descend(GpuhashBtreeWalk *w, int64 key)
{
	gpuhash_btree_walk_stop(w);
	w->insert->scankeys[0].sk_argument = w->key_type == INT2OID ? Int16GetDatum((int16) key) :
		w->key_type == INT4OID ? Int32GetDatum((int32) key) : Int64GetDatum(key);
	_bt_freestack(_bt_search(w->index, w->insert, &w->buf, BT_READ, w->snapshot));
	w->locked = BufferIsValid(w->buf);
	w->descents++;
	w->pages++;
	return w->locked;
}

static void
step_right(GpuhashBtreeWalk *w)
{
	BTPageOpaque opaque = BTPageGetOpaque(BufferGetPage(w->buf));

	w->buf = _bt_relandgetbuf(w->index, w->buf, opaque->btpo_next, BT_READ);
	w->pages++;
}

void
gpuhash_btree_walk_init(GpuhashBtreeWalk *w, Relation index, Snapshot snapshot)
{
	w->index = index;
	w->key_type = TupleDescAttr(RelationGetDescr(index), 0)->atttypid;
	w->snapshot = snapshot;
	/* an insertion key of all columns, cut to the first, set per descent */
	w->insert = _bt_mkscankey(index, NULL);
	w->insert->keysz = 1;
	w->insert->scankeys[0].sk_flags = 0;
	w->insert->scantid = NULL;
	w->insert->nextkey = false;
	w->insert->pivotsearch = false;
	w->buf = InvalidBuffer;
	w->locked = false;
	w->descents = 0;
	w->pages = 0;
}

static void
append_tid(ItemPointerData **tids, uint32 *ntids, uint32 *cap, ItemPointer tid)
{
	if (*ntids >= *cap)
	{
		*cap *= 2;
		*tids = repalloc_huge(*tids, sizeof(ItemPointerData) * *cap);
	}
	(*tids)[(*ntids)++] = *tid;
}

/* The TIDs of key's items from off on; false when the page ended before them. */
static bool
collect(GpuhashBtreeWalk *w, Page page, OffsetNumber off, int64 key,
		ItemPointerData **tids, uint32 *ntids, uint32 *cap)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	bool		equal;

	for (; off <= maxoff; off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		IndexTuple	it;

		if (item_below(w, page, off, key, &equal) || !equal)
			return true;
		if (ItemIdIsDead(iid))
			continue;
		it = (IndexTuple) PageGetItem(page, iid);
		if (BTreeTupleIsPosting(it))
			for (int p = 0; p < BTreeTupleGetNPosting(it); p++)
				append_tid(tids, ntids, cap, BTreeTupleGetPostingN(it, p));
		else
			append_tid(tids, ntids, cap, &it->t_tid);
	}
	return false;
}

void
gpuhash_btree_walk_key(GpuhashBtreeWalk *w, int64 key, ItemPointerData **tids,
					   uint32 *ntids, uint32 *cap)
{
	int			moves = 0;
	Page		page;
	BTPageOpaque opaque;
	OffsetNumber lo,
				hi;
	bool		equal;

	if (!BufferIsValid(w->buf))
	{
		if (!descend(w, key))
			return;
	}
	else if (!w->locked)
	{
		/* a split meanwhile only moved items right, where the walk goes on */
		_bt_lockbuf(w->index, w->buf, BT_READ);
		w->locked = true;
	}
	for (;;)
	{
		page = BufferGetPage(w->buf);
		opaque = BTPageGetOpaque(page);
		if (P_IGNORE(opaque) && !P_RIGHTMOST(opaque))
		{
			/* deleted or half-dead: its right-link still leads on */
			step_right(w);
			continue;
		}
		if (!P_IGNORE(opaque) && !high_key_below(w, page, opaque, key, &equal))
			break;
		if (P_IGNORE(opaque) || ++moves > WALK_MAX_MOVES)
		{
			if (!descend(w, key))
				return;
			moves = 0;
			continue;
		}
		step_right(w);
	}

	/* the first item not below key */
	lo = P_FIRSTDATAKEY(opaque);
	hi = PageGetMaxOffsetNumber(page) + 1;
	while (lo < hi)
	{
		OffsetNumber mid = lo + (hi - lo) / 2;

		if (item_below(w, page, mid, key, &equal))
			lo = mid + 1;
		else
			hi = mid;
	}
	/*
	 * Items equal to key may go on in the right sibling only when the high
	 * key equals key: the items there are not below it.
	 */
	while (!collect(w, page, lo, key, tids, ntids, cap))
	{
		if (P_RIGHTMOST(opaque))
			break;
		(void) high_key_below(w, page, opaque, key, &equal);
		if (!equal)
			break;
		do
		{
			step_right(w);
			page = BufferGetPage(w->buf);
			opaque = BTPageGetOpaque(page);
		} while (P_IGNORE(opaque) && !P_RIGHTMOST(opaque));
		if (P_IGNORE(opaque))
			break;
		lo = P_FIRSTDATAKEY(opaque);
	}
}

void
gpuhash_btree_walk_unlock(GpuhashBtreeWalk *w)
{
	if (w->locked)
		_bt_unlockbuf(w->index, w->buf);
	w->locked = false;
}

void
gpuhash_btree_walk_stop(GpuhashBtreeWalk *w)
{
	gpuhash_btree_walk_unlock(w);
	if (BufferIsValid(w->buf))
		ReleaseBuffer(w->buf);
	w->buf = InvalidBuffer;
}
