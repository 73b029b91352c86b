/*
 * agg_combine.h - a GpuHashAggregate's groups written out by partition and
 * combined again (agg_combine.c, over agg_spill.c's files).
 */
#ifndef GPUHASH_AGG_COMBINE_H
#define GPUHASH_AGG_COMBINE_H

#pragma GCC visibility push(hidden)

struct GpuJoinState;
struct GpuAggSpill;

extern void gpuhash_agg_write_groups(struct GpuJoinState *gj);
extern void gpuhash_agg_combine_partition(struct GpuJoinState *gj, struct GpuAggSpill *from,
										  int level, int partition,
										  struct GpuAggSpill **overflow);

/* when the node writes and combines them (a participant's part included) */
extern void gpuhash_agg_combine_attach(struct GpuJoinState *gj);
extern void gpuhash_agg_start_combining(struct GpuJoinState *gj);
extern bool gpuhash_agg_next_partition(struct GpuJoinState *gj);
extern void gpuhash_agg_close_splits(struct GpuJoinState *gj);
extern void gpuhash_agg_combine_detach(struct GpuJoinState *gj);

#pragma GCC visibility pop

#endif
