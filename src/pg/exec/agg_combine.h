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

#pragma GCC visibility pop

#endif
