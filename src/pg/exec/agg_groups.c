/*
 * agg_groups.c - the group table of a GpuHashAggregate with GROUP BY.
 *
 * Open addressing over group numbers: a slot holds a group's number (plus
 * one), the entries themselves lie in one array in the order the groups
 * were first seen, so that they can be emitted by walking it.  Each entry
 * keeps its hash, so growing the slots never rehashes keys.  Memory comes
 * from the node's build context and goes with it.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "agg_groups.h"

#define GROUPS_FIRST_SLOTS 1024

Size
gpuhash_groups_entry_bytes(int nkeys, Size acc_bytes)
{
	return MAXALIGN(sizeof(uint64) + nkeys * sizeof(int64) + 1) + MAXALIGN(acc_bytes);
}

void
gpuhash_groups_init(GpuAggGroups *g, MemoryContext cxt, int nkeys, Size acc_bytes)
{
	Assert(nkeys > 0 && nkeys <= GPUHASH_AGG_MAX_KEYS);
	memset(g, 0, sizeof(*g));
	g->cxt = cxt;
	g->nkeys = nkeys;
	g->acc_bytes = MAXALIGN(acc_bytes);
	g->entry_size = gpuhash_groups_entry_bytes(nkeys, acc_bytes);
}

/* Forget every group; the memory goes with the context. */
void
gpuhash_groups_reset(GpuAggGroups *g)
{
	g->entries = NULL;
	g->slots = NULL;
	g->cells = NULL;
	g->ngroups = g->entries_cap = 0;
	g->mask = 0;
}

static inline uint64
hash_keys(int nkeys, const int64 *keys, uint8 nullmask)
{
	uint64		h = nullmask;

	for (int k = 0; k < nkeys; k++)
		h = gpuhash_mix64(h ^ (uint64) keys[k]) + k;
	return h;
}

/*
 * Empty slots for an open-addressing table of nslots (a power of two);
 * numbers are 32 bits, so 2^32 slots at most.
 */
static uint32 *
new_slots(MemoryContext cxt, uint64 nslots, const char *what)
{
	uint32	   *slots;

	if (nslots > ((uint64) 1 << 32))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many %s for a GpuHashAggregate", what),
				 errhint("Set gpuhash.enable_aggregate to off for this query.")));
	slots = MemoryContextAllocHuge(cxt, nslots * sizeof(uint32));
	memset(slots, 0, nslots * sizeof(uint32));
	return slots;
}

static void
grow_slots(GpuAggGroups *g)
{
	uint64		nslots = g->slots ? (g->mask + 1) * 2 : GROUPS_FIRST_SLOTS;
	uint32	   *slots = new_slots(g->cxt, nslots, "groups");

	for (uint64 i = 0; i < g->ngroups; i++)
	{
		uint64		s = *(uint64 *) gpuhash_group_entry(g, (uint32) i) & (nslots - 1);

		while (slots[s] != 0)
			s = (s + 1) & (nslots - 1);
		slots[s] = (uint32) i + 1;
	}
	if (g->slots)
		pfree(g->slots);
	g->slots = slots;
	g->mask = nslots - 1;
}

static uint32
add_group(GpuAggGroups *g, uint64 slot, uint64 h, const int64 *keys, uint8 nullmask)
{
	char	   *e;
	int64	   *ek;

	if (g->ngroups == g->entries_cap)
	{
		uint64		cap = g->entries_cap ? g->entries_cap * 2 : 256;

		g->entries = g->entries ?
			repalloc_huge(g->entries, cap * g->entry_size) :
			MemoryContextAllocHuge(g->cxt, cap * g->entry_size);
		g->entries_cap = cap;
	}
	e = gpuhash_group_entry(g, (uint32) g->ngroups);
	memset(e, 0, g->entry_size);
	*(uint64 *) e = h;
	ek = (int64 *) (e + sizeof(uint64));
	memcpy(ek, keys, g->nkeys * sizeof(int64));
	*(uint8 *) (ek + g->nkeys) = nullmask;
	g->slots[slot] = (uint32) g->ngroups + 1;
	return (uint32) g->ngroups++;
}

/*
 * The group of keys, made if new (make), else GPUHASH_NO_GROUP; a NULL
 * key's value is 0 in keys (its bit is set in nullmask), so keys compare
 * whole.
 */
static uint32
probe(GpuAggGroups *g, const int64 *keys, uint8 nullmask, bool make)
{
	uint64		h;

	if (!make && g->slots == NULL)
		return GPUHASH_NO_GROUP;
	if (g->slots == NULL || g->ngroups * 2 >= g->mask + 1)
		grow_slots(g);
	h = hash_keys(g->nkeys, keys, nullmask);
	for (uint64 s = h & g->mask;; s = (s + 1) & g->mask)
	{
		uint32		v = g->slots[s];
		const int64 *ek;

		if (v == 0)
			return make ? add_group(g, s, h, keys, nullmask) : GPUHASH_NO_GROUP;
		ek = gpuhash_group_keys(g, v - 1);
		if (*(uint64 *) gpuhash_group_entry(g, v - 1) == h &&
			*(const uint8 *) (ek + g->nkeys) == nullmask &&
			memcmp(ek, keys, g->nkeys * sizeof(int64)) == 0)
			return v - 1;
	}
}

/*
 * The number of the group of keys (NULL where nullmask's bit is set), made
 * if new (make), else GPUHASH_NO_GROUP.
 */
uint32
gpuhash_groups_find(GpuAggGroups *g, const int64 *keys, uint8 nullmask, bool make)
{
	int64		clean[GPUHASH_AGG_MAX_KEYS];

	/* a NULL key's value is not part of the group */
	for (int k = 0; k < g->nkeys; k++)
		clean[k] = (nullmask & (1 << k)) ? 0 : keys[k];
	return probe(g, clean, nullmask, make);
}

/* a key as an unsigned number of the same order: offsets in the cells cannot overflow */
static inline uint64
key_order(int64 v)
{
	return (uint64) v ^ (UINT64CONST(1) << 63);
}

/*
 * Do the cells of the dense front cover the n rows' keys?  Where they do
 * not, a box around both the keys the cells covered and these is tried,
 * its cells empty (they fill again as groups are looked up); past
 * GPUHASH_DENSE_MAX_CELLS the front is switched off for good.  A key's
 * span is a power of two, so that keys that keep growing (dates) remake
 * the cells only each time their range doubles.
 */
static bool
dense_covers(GpuAggGroups *g, int n, int64 *const *keys, const uint8 *nullmask)
{
	uint64		lo[GPUHASH_AGG_MAX_KEYS];
	uint64		span[GPUHASH_AGG_MAX_KEYS];
	bool		inside = g->cells != NULL;
	uint64		ncells = 1;

	for (int k = 0; k < g->nkeys; k++)
	{
		uint64		min = PG_UINT64_MAX;
		uint64		max = 0;
		uint64		width;

		for (int j = 0; j < n; j++)
		{
			uint64		v = key_order(keys[k][j]);

			if (nullmask[j] & (1 << k))
				continue;
			min = Min(min, v);
			max = Max(max, v);
		}
		if (g->cells != NULL)
		{
			if (min > max || (min >= g->lo[k] && max - g->lo[k] < g->span[k]))
			{
				lo[k] = g->lo[k];
				span[k] = g->span[k];
				ncells *= span[k] + 1;
				continue;
			}
			/* a box around the old one and these keys */
			inside = false;
			max = Max(max, g->lo[k] > PG_UINT64_MAX - (g->span[k] - 1) ?
					  PG_UINT64_MAX : g->lo[k] + (g->span[k] - 1));
			min = Min(min, g->lo[k]);
		}
		if (min > max)
			min = max = key_order(0);	/* only NULLs so far */
		/* the whole range's width wraps to 0 */
		width = max - min + 1;
		if (width == 0 || width > GPUHASH_DENSE_MAX_CELLS)
		{
			g->dense_off = true;
			return false;
		}
		lo[k] = min;
		span[k] = pg_nextpower2_64(width);
		ncells *= span[k] + 1;
		if (ncells > GPUHASH_DENSE_MAX_CELLS)
		{
			g->dense_off = true;
			return false;
		}
	}
	if (inside)
		return true;
	if (g->cells)
		pfree(g->cells);
	g->cells = MemoryContextAllocZero(g->cxt, ncells * sizeof(uint32));
	g->ncells = ncells;
	memcpy(g->lo, lo, sizeof(lo));
	memcpy(g->span, span, sizeof(span));
	return true;
}

/* The group of row j of a batch (keys as in gpuhash_groups_find_batch), made if new. */
static inline uint32
probe_row(GpuAggGroups *g, int64 *const *keys, int j, uint8 nullmask)
{
	int64		row[GPUHASH_AGG_MAX_KEYS];

	/* a NULL key's value is not part of the group */
	for (int k = 0; k < g->nkeys; k++)
		row[k] = (nullmask & (1 << k)) ? 0 : keys[k][j];
	return probe(g, row, nullmask, true);
}

/*
 * The groups of n rows whose key k is keys[k][j], NULL where nullmask[j]'s
 * bit k is set; true when the dense front's cells found them.  A small
 * group space is looked up in the cells, by the keys' offsets, and a row
 * goes to the hash table only the first time its group is seen there: a
 * star's few dozen groups cost a hash and a probe a row otherwise (4.5 % of
 * a serial W8, bench/NOTES.md section 55).
 */
bool
gpuhash_groups_find_batch(GpuAggGroups *g, int n, int64 *const *keys, const uint8 *nullmask,
						  uint32 *group)
{
	if (g->dense_off || !dense_covers(g, n, keys, nullmask))
	{
		for (int j = 0; j < n; j++)
			group[j] = probe_row(g, keys, j, nullmask[j]);
		return false;
	}
	for (int j = 0; j < n; j++)
	{
		uint64		cell = 0;

		for (int k = 0; k < g->nkeys; k++)
			cell = cell * (g->span[k] + 1) +
				((nullmask[j] & (1 << k)) ? g->span[k] : key_order(keys[k][j]) - g->lo[k]);
		if (g->cells[cell] == 0)
			g->cells[cell] = probe_row(g, keys, j, nullmask[j]) + 1;
		group[j] = g->cells[cell] - 1;
	}
	return true;
}

void
gpuhash_dict_init(GpuAggDict *d, MemoryContext cxt, bool bpchar)
{
	memset(d, 0, sizeof(*d));
	d->cxt = cxt;
	d->bpchar = bpchar;
}

/* the bytes that decide equality: all of them, or bpchar's less trailing spaces */
static inline int
compared_length(const GpuAggDict *d, const char *p, int len)
{
	if (d->bpchar)
		while (len > 0 && p[len - 1] == ' ')
			len--;
	return len;
}

static void
grow_dict(GpuAggDict *d)
{
	uint64		nslots = d->slots ? (d->mask + 1) * 2 : GROUPS_FIRST_SLOTS;
	uint32	   *slots = new_slots(d->cxt, nslots, "distinct group key values");

	for (uint32 i = 0; i < d->nvalues; i++)
	{
		uint64		s = d->hashes[i] & (nslots - 1);

		while (slots[s] != 0)
			s = (s + 1) & (nslots - 1);
		slots[s] = i + 1;
	}
	if (d->slots)
		pfree(d->slots);
	d->slots = slots;
	d->mask = nslots - 1;
	/* the values' arrays hold as many as half the slots */
	d->cap = (uint32) (nslots / 2);
	d->values = d->values ? repalloc_huge(d->values, d->cap * sizeof(Datum)) :
		MemoryContextAllocHuge(d->cxt, d->cap * sizeof(Datum));
	d->hashes = d->hashes ? repalloc_huge(d->hashes, d->cap * sizeof(uint64)) :
		MemoryContextAllocHuge(d->cxt, d->cap * sizeof(uint64));
}

/*
 * The number of a text value (any varlena form), given one if it is new
 * (make), else GPUHASH_NO_NUMBER when it is.
 */
uint32
gpuhash_dict_number(GpuAggDict *d, Datum value, bool make)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);
	struct varlena *flat = v;
	const char *p;
	int			len;
	uint64		h;
	uint32		found = 0;

	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		flat = pg_detoast_datum_packed(v);
	p = VARDATA_ANY(flat);
	len = compared_length(d, p, VARSIZE_ANY_EXHDR(flat));
	h = hash_bytes_extended((const unsigned char *) p, len, 0);
	if (make && (d->slots == NULL || d->nvalues >= d->cap))
		grow_dict(d);
	for (uint64 s = h & d->mask; d->slots != NULL; s = (s + 1) & d->mask)
	{
		uint32		n = d->slots[s];
		struct varlena *e;

		if (n == 0 && !make)
			break;
		if (n == 0)
		{
			MemoryContext old = MemoryContextSwitchTo(d->cxt);

			/* kept whole, with a 4-byte header, for the rows the node emits */
			e = (struct varlena *) palloc(VARHDRSZ + VARSIZE_ANY_EXHDR(flat));
			SET_VARSIZE(e, VARHDRSZ + VARSIZE_ANY_EXHDR(flat));
			memcpy(VARDATA(e), p, VARSIZE_ANY_EXHDR(flat));
			MemoryContextSwitchTo(old);
			d->values[d->nvalues] = PointerGetDatum(e);
			d->hashes[d->nvalues] = h;
			d->slots[s] = ++d->nvalues;
			found = d->nvalues;
			break;
		}
		e = (struct varlena *) DatumGetPointer(d->values[n - 1]);
		if (d->hashes[n - 1] == h &&
			compared_length(d, VARDATA(e), VARSIZE(e) - VARHDRSZ) == len &&
			memcmp(VARDATA(e), p, len) == 0)
		{
			found = n;
			break;
		}
	}
	if (flat != v)
		pfree(flat);
	return found == 0 ? GPUHASH_NO_NUMBER : found - 1;
}
