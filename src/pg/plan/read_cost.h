/*
 * read_cost.h - what reading a join's input directly (exec/heap_reader.c)
 * saves against PostgreSQL's Seq Scan, for the join's costs (join_path.c),
 * and the workers that such reads are planned for.
 */
#ifndef GPUHASH_READ_COST_H
#define GPUHASH_READ_COST_H

#include "nodes/pathnodes.h"

#pragma GCC visibility push(hidden)

extern double gpuhash_parallel_divisor(int workers);
extern int	gpuhash_plan_workers(int planned, double kept, bool fixed);
extern bool gpuhash_workers_fixed(Path *p);
extern double gpuhash_read_kept(PlannerInfo *root, Path *p, double key_share);
extern bool gpuhash_plain_heap_scan(PlannerInfo *root, Path *p);
extern bool gpuhash_key_leads_row(PlannerInfo *root, Path *p, List *key_vars);
extern Cost gpuhash_read_credit(PlannerInfo *root, Path *p, double miss_early);

/*
 * Each planning, nested ones too, keeps its own answers: begin returns the
 * planning's that it interrupts, for end to put back.
 */
extern List *gpuhash_read_cost_begin(void);
extern void gpuhash_read_cost_end(List *saved);

#pragma GCC visibility pop

#endif
