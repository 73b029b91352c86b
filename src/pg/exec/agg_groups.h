/*
 * agg_groups.h - the groups of a GpuHashAggregate with GROUP BY
 * (agg_groups.c): each distinct tuple of group key values, with the
 * accumulators of the node's aggregates.
 *
 * The keys are integers (int2, int4, int8, date, bool) held as int64, each
 * possibly NULL; PostgreSQL's grouping puts NULLs together, and so does
 * this.  A group is found by its number, which stays valid as the table
 * grows; its entry's address does not.
 */
#ifndef GPUHASH_AGG_GROUPS_H
#define GPUHASH_AGG_GROUPS_H

#include "join_agg.h"

#pragma GCC visibility push(hidden)

typedef struct GpuAggGroups
{
	MemoryContext cxt;
	int			nkeys;
	Size		acc_bytes;		/* accumulators of one group */
	Size		entry_size;		/* hash, keys, NULL mask, accumulators */
	char	   *entries;
	uint64		ngroups;
	uint64		entries_cap;
	uint32	   *slots;			/* group number + 1, or 0 when free */
	uint64		mask;			/* slots - 1 (a power of two, less 1) */

	/*
	 * A small group space is also an array (agg_groups.c's dense front):
	 * key k's values from lo[k] (in key_order's unsigned order) to lo[k] +
	 * span[k] - 1, and NULL (offset span[k]), number its ncells cells, which
	 * hold group number + 1, or 0 until that group is first looked up
	 * through them.  dense_off: the keys seen did not fit
	 * GPUHASH_DENSE_MAX_CELLS.
	 */
	uint32	   *cells;
	uint64		ncells;
	uint64		lo[GPUHASH_AGG_MAX_KEYS];
	uint64		span[GPUHASH_AGG_MAX_KEYS];
	bool		dense_off;
} GpuAggGroups;

/* cells of the dense front at most: 256 kB of group numbers */
#define GPUHASH_DENSE_MAX_CELLS 65536

extern void gpuhash_groups_init(GpuAggGroups *g, MemoryContext cxt, int nkeys, Size acc_bytes);
extern void gpuhash_groups_reset(GpuAggGroups *g);
/* what gpuhash_groups_find returns for a group that is not there and was not to be made */
#define GPUHASH_NO_GROUP PG_UINT32_MAX

extern uint32 gpuhash_groups_find(GpuAggGroups *g, const int64 *keys, uint8 nullmask, bool make);
extern bool gpuhash_groups_find_batch(GpuAggGroups *g, int n, int64 *const *keys,
									  const uint8 *nullmask, uint32 *group);

/*
 * Text group keys (text, varchar, bpchar under a deterministic collation)
 * become numbers: each distinct value gets the next, and the group table
 * compares those.  bpchar's values are equal whatever their trailing
 * spaces, as bpchareq says; a value keeps the form first seen, as a
 * PostgreSQL hash aggregate emits the first row of each group.
 */
typedef struct GpuAggDict
{
	MemoryContext cxt;
	bool		bpchar;			/* trailing spaces do not count */
	Datum	   *values;			/* by number: a copy of the first form seen */
	uint64	   *hashes;
	uint32		nvalues;
	uint32		cap;
	uint32	   *slots;			/* number + 1, or 0 when free */
	uint64		mask;
} GpuAggDict;

extern void gpuhash_dict_init(GpuAggDict *d, MemoryContext cxt, bool bpchar);
/* what gpuhash_dict_number returns for a value that is not there and was not to be numbered */
#define GPUHASH_NO_NUMBER PG_UINT32_MAX

extern uint32 gpuhash_dict_number(GpuAggDict *d, Datum value, bool make);

static inline Datum
gpuhash_dict_value(const GpuAggDict *d, uint32 number)
{
	return d->values[number];
}

/* the hash of a value's bytes (less bpchar's trailing spaces): the same in every process */
static inline uint64
gpuhash_dict_hash(const GpuAggDict *d, uint32 number)
{
	return d->hashes[number];
}

/* a 64-bit finalizer (MurmurHash3's constants): every bit of h moves every bit of the result */
static inline uint64
gpuhash_mix64(uint64 h)
{
	h ^= h >> 33;
	h *= UINT64CONST(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64CONST(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

/* memory the table's entries, slots and dense cells take */
static inline Size
gpuhash_groups_bytes(const GpuAggGroups *g)
{
	return g->entries_cap * g->entry_size + (g->slots ? (g->mask + 1) * sizeof(uint32) : 0) +
		(g->cells ? g->ncells * sizeof(uint32) : 0);
}

/* memory one group takes, for the planner's estimate */
extern Size gpuhash_groups_entry_bytes(int nkeys, Size acc_bytes);

static inline char *
gpuhash_group_entry(const GpuAggGroups *g, uint32 group)
{
	return g->entries + (Size) group * g->entry_size;
}

static inline const int64 *
gpuhash_group_keys(const GpuAggGroups *g, uint32 group)
{
	return (const int64 *) (gpuhash_group_entry(g, group) + sizeof(uint64));
}

static inline uint8
gpuhash_group_nulls(const GpuAggGroups *g, uint32 group)
{
	return *(const uint8 *) (gpuhash_group_keys(g, group) + g->nkeys);
}

/* the group's accumulators (MAXALIGNed) */
static inline void *
gpuhash_group_acc(const GpuAggGroups *g, uint32 group)
{
	return gpuhash_group_entry(g, group) + g->entry_size - g->acc_bytes;
}

/* the number of the group whose accumulators acc are (gpuhash_group_acc's inverse) */
static inline uint32
gpuhash_group_of_acc(const GpuAggGroups *g, const void *acc)
{
	return (uint32) (((const char *) acc - g->entries) / g->entry_size);
}

#pragma GCC visibility pop

#endif
