/*
 * pair_memo.h - subexpressions of a join's other clauses that depend on
 * the build row alone and run a subplan (TPC-H q17's
 * l_quantity < (SELECT 0.2 * avg(l_quantity) ... WHERE l_partkey = p_partkey)).
 * PostgreSQL's hash join runs such a subplan once per matching pair; the
 * node runs it once per build row, when a pair first needs it, and keeps
 * the value (pair_memo.c here, exec/pair_memo_exec.c there).
 */
#ifndef GPUHASH_PAIR_MEMO_H
#define GPUHASH_PAIR_MEMO_H

#include "nodes/pathnodes.h"

#pragma GCC visibility push(hidden)

/*
 * The distinct subexpressions of clauses that can be kept per build row:
 * they contain a subplan, read columns of inner_relids and of no other
 * relation, and nothing in them (subqueries included) is volatile.
 */
extern bool gpuhash_runs_volatile(Node *node, PlannerInfo *root);
extern List *gpuhash_pair_memo_exprs(PlannerInfo *root, List *clauses, Relids inner_relids);

/*
 * The scan tuple's column of each of memo, and clauses with each of memo
 * replaced by it (set_customscan_references then reads it from there).
 */
extern List *gpuhash_pair_memo_columns(PlannerInfo *root, List *memo);
extern List *gpuhash_pair_memo_replace(List *clauses, List *memo, List *columns);

#pragma GCC visibility pop

#endif
