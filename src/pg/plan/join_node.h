/*
 * join_node.h - what the planner (join_path.c) and the executor
 * (join_exec.c, join_parallel.c) of the GpuHashJoin custom scan share.
 */
#ifndef GPUHASH_JOIN_NODE_H
#define GPUHASH_JOIN_NODE_H

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

#pragma GCC visibility push(hidden)

#define GPUHASH_JOIN_NAME "GpuHashJoin"

/* settings (defined in common/settings.c) */
extern bool gpuhash_enable_join;
extern double gpuhash_join_startup_cost;
extern double gpuhash_device_setup_cost;
extern double gpuhash_join_build_row_cost;
extern double gpuhash_join_probe_row_cost;
extern bool gpuhash_parallel_worker_gpu;
extern int	gpuhash_parallel_workers;
extern bool gpuhash_direct_scan;
extern bool gpuhash_read_thread;
extern bool gpuhash_overlap_probes;
extern bool gpuhash_read_during_build;
extern bool gpuhash_chain_batches;
extern bool gpuhash_key_filter;
extern bool gpuhash_late_filter;
extern bool gpuhash_build_outer;

/*
 * The direct reader takes its pages apart in a helper thread where at most
 * 1 row in this many of its first pages passed its filters (exec/read_ahead.c);
 * the planner sizes parallel plans by the same share (plan/read_cost.c).
 */
#define GPUHASH_READ_THREAD_PASS_DIV 4

/*
 * A semi join built from its outer side and probed with its inner one
 * (join_path.c): the node's outer plan is then the semi join's inner side,
 * and it emits the build rows that some probe row matched, each once.  A
 * value of the node's own, past PostgreSQL's JoinType (which has no right
 * semi join before version 18, nor a right anti join before 16), so that
 * no code that handles JOIN_SEMI or JOIN_ANTI takes it for one; never
 * handed to PostgreSQL.
 */
#define GPUHASH_JOIN_RIGHT_SEMI ((JoinType) (JOIN_UNIQUE_INNER + 1))
/* ... and an anti join so built: the build rows that no probe matched */
#define GPUHASH_JOIN_RIGHT_ANTI ((JoinType) (JOIN_UNIQUE_INNER + 2))
#define GPUHASH_JOIN_IS_RIGHT(t) ((t) == GPUHASH_JOIN_RIGHT_SEMI || (t) == GPUHASH_JOIN_RIGHT_ANTI)

/*
 * The plan's custom_private, a list of Integer nodes in this order (plus the
 * estimated build rows as a Float).  custom_exprs holds the hash clause
 * first (an AND of the two when two keys are packed into one, for EXPLAIN
 * alone), then the other join clauses, evaluated on each matching pair,
 * then the GJ_PRIV_MEMO expressions kept per build row (pair_memo.h).
 * custom_plans is (outer, inner); the scan tuple is the outer plan's
 * columns followed by the inner plan's, then one per memo expression (and
 * a GpuHashAggregate's values).
 */
enum
{
	GJ_PRIV_JOINTYPE,
	GJ_PRIV_OUTER_KEY,			/* attribute number in the outer plan's tlist */
	GJ_PRIV_INNER_KEY,
	GJ_PRIV_OUTER_TYPE,
	GJ_PRIV_INNER_TYPE,
	GJ_PRIV_OUTER_KEY2,			/* a second key packed with the first, or 0 */
	GJ_PRIV_INNER_KEY2,
	GJ_PRIV_OUTER_TYPE2,
	GJ_PRIV_INNER_TYPE2,
	GJ_PRIV_METHOD,				/* ght_method the planner expects */
	GJ_PRIV_DEVICE,				/* ght_device the planner expected */
	GJ_PRIV_INNER_PARTIAL,		/* inner plan is split among workers */
	GJ_PRIV_BUILD_ROWS,			/* Float: estimated build rows */
	GJ_PRIV_KEY_FILTER,			/* the outer side's rows are tested against a
								 * Bloom filter of the table's keys */
	GJ_PRIV_MEMO,				/* subexpressions kept per build row (pair_memo.h) */
	GJ_PRIV_COUNT,
	/* GpuHashAggregate only (join_agg.h) */
	GJ_PRIV_AGGS = GJ_PRIV_COUNT,	/* List of aggregates */
	GJ_PRIV_ROW_QUALS,			/* custom_exprs after the join clauses that
								 * filter rows before they are folded */
	GJ_PRIV_GROUP_KEYS,			/* List: GROUP BY columns (join_agg.h), or NIL */
	GJ_PRIV_COMBINE,			/* the participants combine the groups */
	GJ_PRIV_EST_GROUPS			/* String: the planner's estimate of all groups */
};

/* A GpuHashJoin path's custom_private holds this many entries. */
#define GJ_PATH_PRIV_COUNT 11

/* GpuHashAggregate's settings (common/settings.c) */
extern bool gpuhash_enable_aggregate;
extern bool gpuhash_enable_scan_aggregate;
extern bool gpuhash_enable_input_aggregate;
extern bool gpuhash_enable_group_combine;
extern int	gpuhash_group_combine_min_groups;
extern bool gpuhash_fold_year_keys;

extern bool gpuhash_is_join_path(Path *path);
extern bool gpuhash_join_below(Path *path, bool any_device);
extern List *gpuhash_join_paths_of(RelOptInfo *rel, bool partial);
extern CustomScan *gpuhash_join_plan_scan(PlannerInfo *root, Relids joinrelids,
										  CustomPath *best_path, List *tlist,
										  List *custom_plans, List **otherquals);

/*
 * A child plan returning expr as a column (through a Result node when it
 * cannot project), and expr's attribute number in a target list.
 */
extern Plan *gpuhash_plan_with_column(Plan *plan, Expr *expr);
extern int	gpuhash_tlist_position(List *tlist, Expr *expr);

extern void gpuhash_join_init(void);
extern Node *gpuhash_join_create_state(CustomScan *cscan);

#pragma GCC visibility pop

#endif
