/*
 * join_chain.c - a GpuHashJoin reading the pairs of the GpuHashJoin below
 * it as its outer rows.
 *
 * In a chain of joins each level would otherwise take the level below's
 * result tuples one at a time through ExecProcNode; here the level above
 * runs the one below's batches itself and takes each pair's columns from
 * that join's batch and build rows (join_chain.h), so that no joined row
 * is formed between two levels.  A semi or anti join below hands over the
 * rows of its batch that it keeps, as pairs with no build row, and a left
 * join its pairs and then its rows that no pair matched, with the inner
 * columns NULL, so that a chain stays one pass whichever each level is.
 */
#include "gpuhash_pg.h"

#include "executor/executor.h"

#include "join_chain.h"

/*
 * Can the outer side be read as the pairs of the GpuHashJoin below?  Only
 * a join whose output rows are all of its pairs or kept rows, with no
 * filter above them, and whose output columns are its scan tuple's,
 * unprojected: then a pair's columns are copied straight from the child's
 * batch and build rows into this node's batch, and no tuple is formed
 * between the two.  An inner or left join's pairs must all come out (no
 * other join clauses, which a left join tests as it emits); a semi or anti
 * join's other join clauses only decide which rows it keeps, when it
 * probes, so they may stay.  A right semi or anti join emits build rows,
 * which this reading has no place for.
 */
void
gpuhash_join_link_child(GpuJoinState *gj, PlanState *outer)
{
	GpuJoinState *child;
	List	   *tlist = outer->plan->targetlist;
	ListCell   *lc;
	int			ncols;
	int			c = 0;

	if (!gpuhash_join_is_plain_join(outer))
		return;
	child = (GpuJoinState *) outer;
	if (child->css.ss.ps.qual != NULL || list_length(tlist) != gj->n_outer)
		return;
	if ((child->jointype == JOIN_INNER || child->jointype == JOIN_LEFT) && child->join_qual == NULL)
		ncols = child->n_outer + child->n_inner;
	else if (child->jointype == JOIN_SEMI || child->jointype == JOIN_ANTI)
		ncols = child->n_outer;	/* its rows have no inner columns */
	else
		return;
	gj->child_col = palloc(Max(gj->n_outer, 1) * sizeof(int));
	foreach(lc, tlist)
	{
		Var		   *v = (Var *) lfirst_node(TargetEntry, lc)->expr;

		if (!IsA(v, Var) || v->varno != INDEX_VAR || v->varattno < 1 || v->varattno > ncols)
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
 * A semi, anti or left join's batch, probed (and a left join's pairs
 * handed over): the rows it keeps (those a match was found for, or not)
 * become its pairs, as the level above reads them.
 */
static void
kept_rows_as_pairs(GpuJoinState *child)
{
	/* a left join's unmatched rows: the level above may read their inner columns, all NULL */
	if (child->jointype == JOIN_LEFT)
		gpuhash_join_make_null_inner(child);
	child->npairs = gpuhash_join_flagged_rows(child, child->jointype == JOIN_SEMI);
	child->pidx = child->fold_rows;
	child->brow = NULL;
	child->pos = 0;
	child->emit = EMIT_PAIRS;
	child->rows_as_pairs = true;
}

/* A left join's next pairs: their outer rows are matched, not null-extended later. */
static void
mark_left_pairs(GpuJoinState *child)
{
	for (uint64 j = 0; j < child->npairs; j++)
		child->row_match[child->key_row[child->pidx[j]]] = 1;
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
			if (child->rows_as_pairs)
				child->emit = EMIT_NONE;
			else if (gpuhash_join_next_pairs(child))
			{
				if (child->jointype == JOIN_LEFT)
					mark_left_pairs(child);
			}
			else if (child->jointype == JOIN_LEFT)
				kept_rows_as_pairs(child);	/* then the rows no pair matched */
			else
				child->emit = EMIT_NONE;
			continue;
		}
		if (child->emit == EMIT_ROWS)
		{
			kept_rows_as_pairs(child);
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
		{
			gpuhash_join_start_batch(child);
			child->rows_as_pairs = false;
		}
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
		(child->jointype == JOIN_SEMI || child->jointype == JOIN_ANTI ||
		 child->inner_in_table || child->inner.ncols == child->n_inner);
}
