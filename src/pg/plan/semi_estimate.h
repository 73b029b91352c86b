/*
 * semi_estimate.h - a semi join above GpuHashJoins estimated through the
 * outer column that is the inner column itself (semi_estimate.c), for
 * join_path.c's join hook.
 */
#ifndef GPUHASH_SEMI_ESTIMATE_H
#define GPUHASH_SEMI_ESTIMATE_H

#include "nodes/pathnodes.h"

#pragma GCC visibility push(hidden)

extern bool gpuhash_semi_estimate_enabled;	/* gpuhash.semi_estimate */

extern void gpuhash_semi_estimate(PlannerInfo *root, RelOptInfo *joinrel,
								  RelOptInfo *outerrel, RelOptInfo *innerrel,
								  JoinType jointype, JoinPathExtraData *extra);

#pragma GCC visibility pop

#endif
