/*
 * join_chain.h - a GpuHashJoin whose outer rows are the pairs of the
 * GpuHashJoin below it (gpuhash.chain_batches), read from that join's batch
 * and build rows without forming the pair as a tuple (join_chain.c).
 *
 * The accessors are inline: join_exec.c's batch filling reads every pair of
 * a chain through them.
 */
#ifndef GPUHASH_JOIN_CHAIN_H
#define GPUHASH_JOIN_CHAIN_H

#include "join_state.h"

#pragma GCC visibility push(hidden)

/* pairs between prefetching a build row and using it */
#define PAIR_PREFETCH_AHEAD 8

/*
 * Inner column c of a match kept in the table: the key column is the probe
 * key (equal, so the same value in the inner column's type), the other
 * column the payload.
 */
static inline Datum
gpuhash_inner_table_datum(const GpuJoinState *gj, int c, uint64 payload, int64 key)
{
	return c == gj->inner_val ? gpuhash_payload_datum(payload, gj->payload_width) :
		gpuhash_inner_key_datum(gj, c, key);
}

/* Where a pair of the join below keeps its columns (gpuhash_child_pair_at). */
typedef struct ChildPair
{
	const Datum *ov;			/* the child's batch row */
	const bool *on;
	const Datum *iv;			/* its build row; NULL where its table holds */
	const bool *in;				/* the inner values (inner_in_table) */
	uint64		payload;		/* the table's payload, then */
	int64		key;			/* and the pair's key */
} ChildPair;

/* The rows of the child's pair j, fetching the build row of a later pair ahead. */
static inline void
gpuhash_child_pair_at(GpuJoinState *child, uint64 j, ChildPair *p)
{
	uint64		k = child->pidx[j];
	const GpuhashStore *co = &child->outer;
	const GpuhashStore *ci = &child->inner;
	/* a pair's outer row by its key's number: a left join's batch keeps rows without a key */
	uint64		orow = child->rows_as_pairs || child->key_row == NULL ? k : child->key_row[k];

	p->ov = (const Datum *) (co->rows + orow * co->stride);
	p->on = (const bool *) (p->ov + co->ncols);
	if (child->rows_as_pairs)
	{
		/* a kept row without a build row: its inner columns NULL (none for semi and anti joins) */
		p->iv = child->null_inner;
		p->in = child->null_inner_flags;
		p->payload = 0;
		p->key = 0;
		return;
	}
	if (j + PAIR_PREFETCH_AHEAD < child->npairs && !child->inner_in_table)
		__builtin_prefetch(ci->rows + child->brow[j + PAIR_PREFETCH_AHEAD] * ci->stride);
	p->payload = child->brow[j];
	if (child->inner_in_table)
	{
		p->iv = NULL;
		p->in = NULL;
		p->key = gpuhash_key_at(child->outer_keys->ptr, child->key_width, k);
	}
	else
	{
		p->iv = (const Datum *) (ci->rows + p->payload * ci->stride);
		p->in = (const bool *) (p->iv + ci->ncols);
		p->key = 0;
	}
}

/*
 * Column k of the child's scan tuple for pair p, as the child would emit
 * it; a by-reference value points into the child's stores, valid until its
 * next batch.
 */
static inline Datum
gpuhash_child_pair_column(const GpuJoinState *child, const ChildPair *p, int k, bool *isnull)
{
	const GpuhashStore *st = &child->outer;
	const Datum *v = p->ov;
	const bool *n = p->on;

	if (k >= child->n_outer)
	{
		k -= child->n_outer;
		if (p->iv == NULL)
		{
			*isnull = false;
			return gpuhash_inner_table_datum(child, k, p->payload, p->key);
		}
		st = &child->inner;
		v = p->iv;
		n = p->in;
	}
	*isnull = n[k];
	if (!n[k] && !st->byval[k])
		return PointerGetDatum(st->arena + v[k]);
	return v[k];
}

/* join_chain.c */
extern void gpuhash_join_link_child(GpuJoinState *gj, PlanState *outer);
extern bool gpuhash_join_child_has_pairs(GpuJoinState *gj);
extern bool gpuhash_join_next_child_pair(GpuJoinState *gj, Datum **values, bool **isnull);
extern bool gpuhash_join_pair_copy_ok(GpuJoinState *gj);

#pragma GCC visibility pop

#endif
