/*
 * late_quals.c - a join's outer scan whose filter runs a subplan on every
 * row it reads, planned with that filter tested after the join instead.
 *
 * PostgreSQL always applies a relation's restriction clauses in its scan.
 * Where one of them is a correlated subquery, that is a query a row: TPC-H
 * q20 runs `ps_availqty > (SELECT sum(l_quantity) ... WHERE l_partkey =
 * ps_partkey ...)` on partsupp's rows, and its plans either run it on all
 * 8 M of them or reach partsupp through nested loops that keep the count
 * down (and run serially).  A GpuHashJoin whose outer side is that scan can
 * test the clause on the joined rows instead, once a pair, which is the
 * same answer: the clause reads only the outer row, whose columns no inner,
 * left, semi or anti join changes, so a row it refuses is refused with all
 * the pairs it would make.  The join to part, which keeps 1 % of partsupp,
 * then runs the subquery 86 k times.  Whether that wins is the planner's
 * choice: such a join is offered both ways and costed for what each runs.
 * It may also leave the clause to the join above it, whose build side it
 * is (join_path.c's try_late_filter): q20's semi join of Canada's 4 000
 * suppliers then tests it as a join clause on the 2 657 build rows its
 * pairs reach, once each (pair_memo.c).
 */
#include "gpuhash_pg.h"

#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"

#include "join_node.h"
#include "late_quals.h"
#include "pair_memo.h"
#include "read_cost.h"

/* Is there a PlaceHolderVar in node?  (An expression_tree_walker.) */
bool
gpuhash_has_placeholder(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, PlaceHolderVar))
		return true;
	return expression_tree_walker(node, gpuhash_has_placeholder, context);
}

/*
 * The restriction clauses of outer's scan that are worth testing after the
 * join: those that run a subplan.  Not a volatile one (its subquery
 * included), whose calls must not change in number, nor one with a
 * placeholder, whose value is computed below the join.  NIL when there is
 * none, or when outer is not a plain heap scan (the only input whose filter
 * the join can take over: the plan made from it is a Seq Scan carrying the
 * clauses).
 */
List *
gpuhash_late_quals(PlannerInfo *root, Path *outer)
{
	List	   *late = NIL;
	ListCell   *lc;

	/*
	 * Every join of a planning asks: the clauses are looked at first, since
	 * few scans have a subplan in their filter, and the heap test opens the
	 * table.
	 */
	if (!gpuhash_late_filter || outer->pathtype != T_SeqScan)
		return NIL;
	foreach(lc, outer->parent->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		if (ri->pseudoconstant || !contain_subplans((Node *) ri->clause) ||
			gpuhash_runs_volatile((Node *) ri->clause, root) ||
			gpuhash_has_placeholder((Node *) ri->clause, NULL))
			continue;
		late = lappend(late, ri);
	}
	if (late != NIL && !gpuhash_plain_heap_scan(root, outer))
		return NIL;
	return late;
}

/*
 * A copy of outer's path costed and counted without the clauses of late:
 * the Seq Scan then reads its rows and tests only the others.  PostgreSQL
 * charges a scan's whole filter on every row it reads (cost_seqscan), so
 * the late clauses' share comes off the same way; the rows grow by what
 * their selectivity had removed, up to the relation's (or a participant's
 * share of it).
 */
Path *
gpuhash_outer_without(PlannerInfo *root, Path *outer, List *late)
{
	Path	   *p = makeNode(Path);
	QualCost	qc;
	Selectivity sel;
	double		divisor = outer->parallel_workers > 0 ?
		gpuhash_parallel_divisor(outer->parallel_workers) : 1.0;
	double		read = outer->parent->tuples / divisor;

	memcpy(p, outer, sizeof(Path));
	cost_qual_eval(&qc, late, root);
	sel = clauselist_selectivity(root, late, 0, JOIN_INNER, NULL);
	p->startup_cost -= qc.startup;
	p->total_cost -= qc.startup + qc.per_tuple * read;
	p->rows = clamp_row_est(Min(outer->rows / Max(sel, 1e-10), Max(read, outer->rows)));
	return p;
}

/*
 * The Seq Scan made from a path of gpuhash_outer_without, with the late
 * clauses (their RestrictInfos' clauses) taken out of its filter: the join
 * tests them instead.
 */
void
gpuhash_strip_late_quals(Plan *outer_plan, List *late_clauses)
{
	List	   *kept = NIL;
	ListCell   *lc;
	int			found = 0;

	if (!IsA(outer_plan, SeqScan))
		elog(ERROR, "gpuhash: a join's late filter is not over a Seq Scan");
	foreach(lc, outer_plan->qual)
	{
		if (list_member_ptr(late_clauses, lfirst(lc)) || list_member(late_clauses, lfirst(lc)))
			found++;
		else
			kept = lappend(kept, lfirst(lc));
	}
	if (found != list_length(late_clauses))
		elog(ERROR, "gpuhash: a join's late filter is not in its Seq Scan's filter");
	outer_plan->qual = kept;
}
