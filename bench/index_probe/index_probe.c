/*
 * index_probe.c: times ways of probing a B-tree for a sorted batch of int4 keys, for the
 * question of NOTES section 53: could a node of ours run TPC-H q04's semi join (each order of a
 * quarter probing lineitem_pkey, the first line whose l_commitdate < l_receiptdate deciding)
 * twice as fast as PostgreSQL's nested loop?  A measurement tool, not part of the extension.
 *
 * index_probe_time(heap, index, keys int4[], method, lo_att, hi_att) returns the number of keys
 * with a visible heap row whose date column lo_att is below its date column hi_att, and reports
 * its time in a NOTICE.  Methods:
 *   0  one index AM scan per key (index_rescan, index_getnext_slot), as the nested loop's inner
 *      index scan does, without the executor around it
 *   1  as 0, the descents only (the first TID of each key, no heap fetch)
 *   2  one walk of the leaf level in key order, collecting each key's TIDs (descending again
 *      only when a key is more than three pages to the right), then the heap fetches in order
 *   3  as 2, the walk only
 * Keys must be sorted; the index's first column must be the int4 key.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/table.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(index_probe_time);

typedef struct ProbeRun
{
	Relation	heap;
	Relation	index;
	Snapshot	snapshot;
	TupleTableSlot *slot;
	AttrNumber	lo_att;
	AttrNumber	hi_att;
	int64		fetched;
} ProbeRun;

/* a leaf item's first key column; pivot tuples keep it at the same place */
static inline int32
leaf_key(Page page, OffsetNumber off)
{
	IndexTuple	it = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

	return *(int32 *) ((char *) it + MAXALIGN(sizeof(IndexTupleData)));
}

static bool
row_passes(ProbeRun *run)
{
	bool		lo_null,
				hi_null;
	Datum		lo = slot_getattr(run->slot, run->lo_att, &lo_null);
	Datum		hi = slot_getattr(run->slot, run->hi_att, &hi_null);

	return !lo_null && !hi_null && DatumGetDateADT(lo) < DatumGetDateADT(hi);
}

static int64
probe_per_key(ProbeRun *run, const int32 *keys, int nkeys, bool fetch)
{
	IndexScanDesc scan = index_beginscan(run->heap, run->index, run->snapshot, 1, 0);
	ScanKeyData key;
	int64		found = 0;

	for (int i = 0; i < nkeys; i++)
	{
		ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(keys[i]));
		index_rescan(scan, &key, 1, NULL, 0);
		if (!fetch)
			found += index_getnext_tid(scan, ForwardScanDirection) != NULL;
		else
			while (index_getnext_slot(scan, ForwardScanDirection, run->slot))
			{
				run->fetched++;
				if (row_passes(run))
				{
					found++;
					break;
				}
			}
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	index_endscan(scan);
	return found;
}

static void
step_right(Relation index, Buffer *buf, Page *page, BTPageOpaque *opaque)
{
	BlockNumber next = (*opaque)->btpo_next;

	_bt_relbuf(index, *buf);
	*buf = _bt_getbuf(index, next, BT_READ);
	*page = BufferGetPage(*buf);
	*opaque = BTPageGetOpaque(*page);
}

/* append the live TIDs of key k from offset off on; returns the offset after them */
static OffsetNumber
collect(Page page, OffsetNumber off, int32 k, int owner,
		ItemPointerData *tids, int *owners, int *ntids, int cap)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	for (; off <= maxoff && leaf_key(page, off) == k; off++)
	{
		ItemId		iid = PageGetItemId(page, off);
		IndexTuple	it = (IndexTuple) PageGetItem(page, iid);
		int			n = BTreeTupleIsPosting(it) ? BTreeTupleGetNPosting(it) : 1;

		if (ItemIdIsDead(iid))
			continue;
		for (int p = 0; p < n && *ntids < cap; p++)
		{
			tids[*ntids] = BTreeTupleIsPosting(it) ? *BTreeTupleGetPostingN(it, p) : it->t_tid;
			owners[(*ntids)++] = owner;
		}
	}
	return off;
}

static int64
probe_leaf_walk(ProbeRun *run, const int32 *keys, int nkeys, bool fetch,
				int *descents, int *pages, int *ntids)
{
	int			cap = nkeys * 16;
	ItemPointerData *tids = palloc(sizeof(ItemPointerData) * cap);
	int		   *owners = palloc(sizeof(int) * cap);
	BTScanInsert insert = _bt_mkscankey(run->index, NULL);
	Buffer		buf = InvalidBuffer;
	Page		page = NULL;
	BTPageOpaque opaque = NULL;
	int64		found = 0;
	int			done = -1;

	insert->keysz = 1;
	insert->scankeys[0].sk_flags = 0;
	*descents = *pages = *ntids = 0;
	for (int i = 0; i < nkeys; i++)
	{
		int32		k = keys[i];
		int			moves = 0;
		OffsetNumber lo,
					hi;

		for (;;)
		{
			if (!BufferIsValid(buf) || moves > 3)
			{
				if (BufferIsValid(buf))
					_bt_relbuf(run->index, buf);
				insert->scankeys[0].sk_argument = Int32GetDatum(k);
				_bt_freestack(_bt_search(run->index, insert, &buf, BT_READ, run->snapshot));
				page = BufferGetPage(buf);
				opaque = BTPageGetOpaque(page);
				(*descents)++;
				(*pages)++;
				moves = 0;
			}
			if (P_RIGHTMOST(opaque) || leaf_key(page, P_HIKEY) >= k)
				break;
			step_right(run->index, &buf, &page, &opaque);
			moves++;
			(*pages)++;
		}
		lo = P_FIRSTDATAKEY(opaque);
		hi = PageGetMaxOffsetNumber(page) + 1;
		while (lo < hi)
		{
			OffsetNumber mid = lo + (hi - lo) / 2;

			if (leaf_key(page, mid) < k)
				lo = mid + 1;
			else
				hi = mid;
		}
		lo = collect(page, lo, k, i, tids, owners, ntids, cap);
		/* a key's items may go on in the right sibling */
		while (lo > PageGetMaxOffsetNumber(page) && !P_RIGHTMOST(opaque) &&
			   leaf_key(page, P_HIKEY) >= k)
		{
			step_right(run->index, &buf, &page, &opaque);
			(*pages)++;
			lo = collect(page, P_FIRSTDATAKEY(opaque), k, i, tids, owners, ntids, cap);
		}
		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	if (BufferIsValid(buf))
		_bt_relbuf(run->index, buf);

	if (fetch)
	{
		IndexFetchTableData *scan = table_index_fetch_begin(run->heap);

		for (int t = 0; t < *ntids; t++)
		{
			bool		call_again = false,
						all_dead = false;

			if (owners[t] == done)
				continue;
			if (!table_index_fetch_tuple(scan, &tids[t], run->snapshot, run->slot,
										 &call_again, &all_dead))
				continue;
			run->fetched++;
			if (row_passes(run))
			{
				found++;
				done = owners[t];
			}
			if ((t & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
		}
		table_index_fetch_end(scan);
	}
	pfree(tids);
	pfree(owners);
	return found;
}

Datum
index_probe_time(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(2);
	int			method = PG_GETARG_INT32(3);
	int			nkeys = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	const int32 *keys = (const int32 *) ARR_DATA_PTR(arr);
	ProbeRun	run;
	int64		found;
	int			descents = 0,
				pages = 0,
				ntids = 0;
	instr_time	start,
				elapsed;

	if (ARR_ELEMTYPE(arr) != INT4OID || ARR_HASNULL(arr) || method < 0 || method > 3)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("index_probe_time takes an int4[] without NULLs and a method from 0 to 3")));
	for (int i = 1; i < nkeys; i++)
		if (keys[i] < keys[i - 1])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("index_probe_time needs its keys sorted")));

	run.heap = table_open(PG_GETARG_OID(0), AccessShareLock);
	run.index = index_open(PG_GETARG_OID(1), AccessShareLock);
	if (run.index->rd_rel->relam != BTREE_AM_OID ||
		TupleDescAttr(RelationGetDescr(run.index), 0)->atttypid != INT4OID)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("index \"%s\" is not a B-tree led by an int4 column",
						RelationGetRelationName(run.index))));
	run.snapshot = GetActiveSnapshot();
	run.slot = table_slot_create(run.heap, NULL);
	run.lo_att = PG_GETARG_INT16(4);
	run.hi_att = PG_GETARG_INT16(5);
	run.fetched = 0;

	INSTR_TIME_SET_CURRENT(start);
	if (method <= 1)
		found = probe_per_key(&run, keys, nkeys, method == 0);
	else
		found = probe_leaf_walk(&run, keys, nkeys, method == 2, &descents, &pages, &ntids);
	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, start);

	ereport(NOTICE,
			(errmsg("method %d: %d keys, %lld found, %lld heap rows fetched, %d TIDs, %d descents, %d leaf pages, %.1f ms",
					method, nkeys, (long long) found, (long long) run.fetched, ntids,
					descents, pages, INSTR_TIME_GET_MILLISEC(elapsed))));
	ExecDropSingleTupleTableSlot(run.slot);
	index_close(run.index, AccessShareLock);
	table_close(run.heap, AccessShareLock);
	PG_RETURN_INT64(found);
}
