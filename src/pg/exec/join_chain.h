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

/* The rows of the child's pair j. */
static inline void
gpuhash_child_pair_rows(const GpuJoinState *child, uint64 j, ChildPair *p)
{
	uint64		orow = child->pidx[j];
	const GpuhashStore *co = &child->outer;
	const GpuhashStore *ci = &child->inner;

	p->ov = (const Datum *) (co->rows + orow * co->stride);
	p->on = (const bool *) (p->ov + co->ncols);
	p->payload = child->brow[j];
	if (child->inner_in_table)
	{
		p->iv = NULL;
		p->in = NULL;
		p->key = gpuhash_key_at(child->outer_keys->ptr, child->key_width, orow);
	}
	else
	{
		p->iv = (const Datum *) (ci->rows + p->payload * ci->stride);
		p->in = (const bool *) (p->iv + ci->ncols);
		p->key = 0;
	}
}

/* The rows of the child's pair j, fetching the build row of a later pair ahead. */
static inline void
gpuhash_child_pair_at(GpuJoinState *child, uint64 j, ChildPair *p)
{
	const GpuhashStore *ci = &child->inner;

	if (j + PAIR_PREFETCH_AHEAD < child->npairs && !child->inner_in_table)
		__builtin_prefetch(ci->rows + child->brow[j + PAIR_PREFETCH_AHEAD] * ci->stride);
	gpuhash_child_pair_rows(child, j, p);
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

/*
 * Inner column k of pair j of a middle level, which keeps no batch rows:
 * its table's payload or key, or its build row's column.
 */
static inline Datum
gpuhash_fused_inner_column(const GpuJoinState *x, uint64 j, int k, bool *isnull)
{
	const GpuhashStore *st = &x->inner;
	const Datum *v;
	const bool *n;

	if (x->inner_in_table)
	{
		*isnull = false;
		return gpuhash_inner_table_datum(x, k, x->brow[j],
										 gpuhash_key_at(x->outer_keys->ptr, x->key_width,
														x->pidx[j]));
	}
	v = (const Datum *) (st->rows + x->brow[j] * st->stride);
	n = (const bool *) (v + st->ncols);
	*isnull = n[k];
	if (!n[k] && !st->byval[k])
		return PointerGetDatum(st->arena + v[k]);
	return v[k];
}

/*
 * Column k of the scan tuple of pair j of x, a GpuHashJoin read as pairs:
 * from its batch and build rows, or, where x is a middle level that keeps
 * only keys, from the levels below it, down to the one that keeps rows.
 * Valid until the next batch of any level on the way.
 */
static inline Datum
gpuhash_chain_column(const GpuJoinState *x, uint64 j, int k, bool *isnull)
{
	ChildPair	p;

	while (x->fused)
	{
		if (k >= x->n_outer)
			return gpuhash_fused_inner_column(x, j, k - x->n_outer, isnull);
		j = x->fused_up[x->pidx[j]];
		k = x->child_col[k];
		x = x->outer_child;
	}
	gpuhash_child_pair_rows(x, j, &p);
	return gpuhash_child_pair_column(x, &p, k, isnull);
}

/* join_chain.c */
extern void gpuhash_join_fuse_child(GpuJoinState *gj);
extern void gpuhash_join_link_child(GpuJoinState *gj, PlanState *outer);
extern bool gpuhash_join_child_has_pairs(GpuJoinState *gj);
extern bool gpuhash_join_next_child_pair(GpuJoinState *gj, Datum **values, bool **isnull);
extern bool gpuhash_join_pair_copy_ok(GpuJoinState *gj);

#pragma GCC visibility pop

#endif
