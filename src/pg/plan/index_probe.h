/*
 * index_probe.h - what the planner (index_probe_path.c) and the executor
 * (index_probe_exec.c) of the IndexProbeJoin custom scan share.
 *
 * IndexProbeJoin is a semi or anti join whose inner side is not read at all:
 * the outer rows are taken in batches, their keys sorted, and a B-tree of the
 * inner table whose first column is the join key is walked once along its
 * leaves for the batch (btree_walk.c); each key's heap rows are fetched until
 * one passes the inner table's own filter.  It does the work of PostgreSQL's
 * nested loop over a parameterized index scan without the executor's calls
 * per outer row and without a descent per key (NOTES section 53).
 */
#ifndef GPUHASH_INDEX_PROBE_H
#define GPUHASH_INDEX_PROBE_H

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

#pragma GCC visibility push(hidden)

#define GPUHASH_INDEX_PROBE_NAME "IndexProbeJoin"

/* settings (common/settings.c) */
extern bool gpuhash_enable_index_probe;
extern double gpuhash_index_probe_cost_share;

/*
 * The plan's custom_private, in this order.  custom_exprs holds the outer
 * key (for EXPLAIN); the inner filter's Vars are numbered 1, for the inner
 * table alone, so that no renumbering of the plan's range table touches
 * them.
 */
enum
{
	IP_PRIV_JOINTYPE,			/* JOIN_SEMI or JOIN_ANTI */
	IP_PRIV_HEAP,				/* the inner table's OID */
	IP_PRIV_INDEX,				/* its B-tree's OID */
	IP_PRIV_OUTER_KEY,			/* the key's attribute number in the outer plan's tlist */
	IP_PRIV_QUALS,				/* List: the inner table's filter */
	IP_PRIV_COUNT
};

extern void gpuhash_index_probe_paths(PlannerInfo *root, RelOptInfo *joinrel,
									  RelOptInfo *outerrel, RelOptInfo *innerrel,
									  JoinType jointype, JoinPathExtraData *extra);
extern bool gpuhash_is_index_probe_path(const Path *path);
extern void gpuhash_index_probe_group_paths(PlannerInfo *root, RelOptInfo *input_rel,
											RelOptInfo *grouped_rel, GroupPathExtraData *gx);
extern void gpuhash_index_probe_init(void);
extern Node *gpuhash_index_probe_create_state(CustomScan *cscan);

#pragma GCC visibility pop

#endif
