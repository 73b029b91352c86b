/*
 * late_quals.h - an outer scan's subquery filter tested after the join
 * (late_quals.c), for join_path.c.
 */
#ifndef GPUHASH_LATE_QUALS_H
#define GPUHASH_LATE_QUALS_H

#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"

#pragma GCC visibility push(hidden)

extern bool gpuhash_has_placeholder(Node *node, void *context);
extern List *gpuhash_late_quals(PlannerInfo *root, Path *outer);
extern Path *gpuhash_outer_without(PlannerInfo *root, Path *outer, List *late);
extern void gpuhash_strip_late_quals(Plan *outer_plan, List *late_clauses);

#pragma GCC visibility pop

#endif
