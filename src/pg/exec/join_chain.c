/*
 * join_chain.c - a GpuHashJoin reading the pairs of the GpuHashJoin below
 * it as its outer rows.
 *
 * In a chain of joins each level would otherwise take the level below's
 * result tuples one at a time through ExecProcNode; here the level above
 * runs the one below's batches itself and takes each pair's columns from
 * that join's batch and build rows (join_chain.h), so that no joined row
 * is formed between two levels.
 */
#include "gpuhash_pg.h"

#include "executor/executor.h"

#include "join_chain.h"

/*
 * Can the outer side be read as the pairs of the GpuHashJoin below?  Only
 * a plain inner join whose pairs all come out (no other join clauses, no
 * filter), and whose output columns are its scan tuple's, unprojected: then
 * a pair's columns are copied straight from the child's batch and build
 * rows into this node's batch, and no tuple is formed between the two.
 */
void
gpuhash_join_link_child(GpuJoinState *gj, PlanState *outer)
{
	GpuJoinState *child;
	List	   *tlist = outer->plan->targetlist;
	ListCell   *lc;
	int			c = 0;

	if (!gpuhash_join_is_plain_join(outer))
		return;
	child = (GpuJoinState *) outer;
	if (child->jointype != JOIN_INNER || child->join_qual != NULL ||
		child->css.ss.ps.qual != NULL || list_length(tlist) != gj->n_outer)
		return;
	gj->child_col = palloc(Max(gj->n_outer, 1) * sizeof(int));
	foreach(lc, tlist)
	{
		Var		   *v = (Var *) lfirst_node(TargetEntry, lc)->expr;

		if (!IsA(v, Var) || v->varno != INDEX_VAR || v->varattno < 1 ||
			v->varattno > child->n_outer + child->n_inner)
		{
			pfree(gj->child_col);
			gj->child_col = NULL;
			return;
		}
		gj->child_col[c++] = v->varattno - 1;
	}
	gj->outer_child = child;
}

/*
 * Have the GpuHashJoin below make its next pairs, until it has some to hand
 * over; false at its end.  The child runs as it would under ExecProcNode
 * (its batches, probes and shared build), but hands over its pairs to this
 * node.
 */
bool
gpuhash_join_child_has_pairs(GpuJoinState *gj)
{
	GpuJoinState *child = gj->outer_child;

	for (;;)
	{
		if (child->emit == EMIT_PAIRS && child->pos < child->npairs)
			return true;
		if (child->emit == EMIT_PAIRS)
		{
			if (!gpuhash_join_next_pairs(child))
				child->emit = EMIT_NONE;
			continue;
		}
		gpuhash_join_ensure_built(child);
		if (child->outer_done)
		{
			/* done: no longer hold up the child's other participants */
			gpuhash_join_detach(child);
			return false;
		}
		gpuhash_join_load_batch(child);
		if (child->outer.nrows > 0)
			gpuhash_join_start_batch(child);
	}
}

/*
 * The next pair of the GpuHashJoin below as this node's outer row, its
 * columns in gj->row_values, taken from where the child's batch and build
 * rows hold them; false at the end.
 */
bool
gpuhash_join_next_child_pair(GpuJoinState *gj, Datum **values, bool **isnull)
{
	GpuJoinState *child = gj->outer_child;
	ChildPair	p;

	*values = gj->row_values;
	*isnull = gj->row_isnull;
	if (!gpuhash_join_child_has_pairs(gj))
		return false;
	gpuhash_child_pair_at(child, child->pos++, &p);
	for (int c = 0; c < gj->n_outer; c++)
		gj->row_values[c] = gpuhash_child_pair_column(child, &p, gj->child_col[c],
													   &gj->row_isnull[c]);
	return true;
}

/*
 * Can the child's pairs be written straight into this node's batch
 * (join_exec.c's fill_from_child_pairs)?  Where all of this node's outer
 * columns are by value, so that nothing goes to its arena, and the child
 * keeps the columns of both its sides.
 */
bool
gpuhash_join_pair_copy_ok(GpuJoinState *gj)
{
	GpuJoinState *child = gj->outer_child;

	return !gj->scan_only && !gj->outer.any_byref && gj->outer.ncols == gj->n_outer &&
		child->outer.ncols == child->n_outer &&
		(child->inner_in_table || child->inner.ncols == child->n_inner);
}
