/*
 * pair_memo_exec.h - the executor side of plan/pair_memo.h: values of the
 * join clauses' parts that depend on the build row alone, computed when a
 * pair first needs them and kept per build row (pair_memo_exec.c).
 */
#ifndef GPUHASH_PAIR_MEMO_EXEC_H
#define GPUHASH_PAIR_MEMO_EXEC_H

#include "join_state.h"

#pragma GCC visibility push(hidden)

/* Set up gj->memo for exprs (the plan's memo expressions), or leave it NULL. */
extern void gpuhash_pair_memo_begin(GpuJoinState *gj, List *exprs);

/*
 * Fill the memo columns of the scan tuple slot (stored, its inner columns
 * those of build row ref when matched): NULL when not matched.
 */
extern void gpuhash_pair_memo_fill(GpuJoinState *gj, TupleTableSlot *slot, bool matched,
								   uint64 ref);

/* Forget the kept values: the node is rescanned, or its table rebuilt. */
extern void gpuhash_pair_memo_reset(GpuJoinState *gj);

/* EXPLAIN: the expressions, and with ANALYZE how often they ran here. */
extern void gpuhash_pair_memo_explain(GpuJoinState *gj, List *exprs, List *context,
									  bool useprefix, ExplainState *es);

#pragma GCC visibility pop

#endif
