/*
 * agg_exec.h - what the files of a GpuHashAggregate's node call of each
 * other beyond the join's functions (join_state.h): the aggregates read
 * from the plan (agg_setup.c), the group table started again
 * (agg_exec.c), the node's parallel callbacks
 * (agg_parallel.c) and its lines of EXPLAIN (agg_explain.c).
 */
#ifndef GPUHASH_AGG_EXEC_H
#define GPUHASH_AGG_EXEC_H

#include "access/parallel.h"
#include "commands/explain.h"
#include "nodes/execnodes.h"

#pragma GCC visibility push(hidden)

struct GpuJoinState;

/* agg_setup.c */
extern void gpuhash_agg_setup(struct GpuJoinState *gj, List *specs, List *keys,
							  CustomScan *cscan);

/* agg_exec.c */
extern void gpuhash_agg_restart_groups(struct GpuJoinState *gj);
extern Size gpuhash_agg_group_bytes(const struct GpuJoinState *gj);
extern bool gpuhash_agg_tables_full(const struct GpuJoinState *gj);
extern void gpuhash_agg_add_distinct(struct GpuJoinState *gj, int i, uint32 group, int64 v);

/* agg_parallel.c */
extern Size gpuhash_agg_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
extern void gpuhash_agg_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void gpuhash_agg_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void gpuhash_agg_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate);
extern void gpuhash_agg_shutdown(CustomScanState *node);

/* agg_explain.c: the state's explain_more */
extern void gpuhash_agg_explain(struct GpuJoinState *gj, List *context, bool useprefix,
								ExplainState *es);

#pragma GCC visibility pop

#endif
