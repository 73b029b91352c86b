/*
 * semi_estimate.c - a semi join above GpuHashJoins estimated through the
 * outer column that is the inner column itself.
 *
 * PostgreSQL writes a semi join's equality from an equivalence class with
 * the first of the class's members that the outer side holds, and
 * estimates the fraction of outer rows that find a match from that
 * member's statistics against the inner column's.  TPC-H q21 asks whether
 * another line of the same order exists:
 *
 *     l1 JOIN orders ON o_orderkey = l1.l_orderkey
 *        WHERE EXISTS (SELECT * FROM lineitem l2 WHERE l2.l_orderkey = l1.l_orderkey ...)
 *
 * Above the join with orders the class offers o_orderkey and
 * l1.l_orderkey, and PostgreSQL takes o_orderkey.  ANALYZE's sample
 * finds 442 000 distinct l_orderkey values of 15 M at SF 10 (lineitem is
 * stored in its order), so the semi join is expected to match 3 % of its
 * rows and to read every line of the other 97 % in vain.  Below the join
 * with orders the same semi join compares l_orderkey with itself and is
 * expected to match every row; so PostgreSQL probes lineitem's index for
 * 1.5 M rows before the join with orders instead of 0.7 M after it
 * (bench/NOTES.md section 37).
 *
 * A column compared with itself is estimated from one set of statistics,
 * so their errors cancel.  When the class holds, on the outer side, the
 * very column of the very table that the inner side compares, and the
 * semi join's outer path has a GpuHashJoin in it, the nested loops over
 * the inner side's index are offered again, costed with the match fraction
 * that comparison gives, where it is higher.  Plans without the node stay
 * PostgreSQL's; the joined rows and the clauses executed are the same.
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"

#include "join_node.h"
#include "semi_estimate.h"

/* The table's OID and the column of expr, when it is a plain column. */
static bool
table_column(PlannerInfo *root, Expr *expr, Oid *relid, AttrNumber *attno)
{
	RangeTblEntry *rte;
	Var		   *var;

	while (expr && IsA(expr, RelabelType))
		expr = ((RelabelType *) expr)->arg;
	if (expr == NULL || !IsA(expr, Var) || ((Var *) expr)->varlevelsup != 0 ||
		((Var *) expr)->varattno <= 0)
		return false;
	var = (Var *) expr;
	rte = planner_rt_fetch(var->varno, root);
	if (rte->rtekind != RTE_RELATION)
		return false;
	*relid = rte->relid;
	*attno = var->varattno;
	return true;
}

/*
 * The equality rinfo rewritten with the outer member of its class that is
 * the inner side's own column, or NULL when there is none other than the
 * one it uses.
 */
static RestrictInfo *
same_column_clause(PlannerInfo *root, RestrictInfo *rinfo, RelOptInfo *outerrel,
				   RelOptInfo *innerrel)
{
	EquivalenceClass *ec = rinfo->parent_ec;
	OpExpr	   *op = (OpExpr *) rinfo->clause;
	bool		inner_right;
	Expr	   *inner_e,
			   *outer_e;
	Oid			relid,
				orelid;
	AttrNumber	attno,
				oattno;
	ListCell   *lc;

	if (ec == NULL || !IsA(op, OpExpr) || list_length(op->args) != 2)
		return NULL;
	if (bms_is_subset(rinfo->right_relids, innerrel->relids) &&
		bms_is_subset(rinfo->left_relids, outerrel->relids))
		inner_right = true;
	else if (bms_is_subset(rinfo->left_relids, innerrel->relids) &&
			 bms_is_subset(rinfo->right_relids, outerrel->relids))
		inner_right = false;
	else
		return NULL;
	inner_e = inner_right ? lsecond(op->args) : linitial(op->args);
	outer_e = inner_right ? linitial(op->args) : lsecond(op->args);
	if (!table_column(root, inner_e, &relid, &attno))
		return NULL;
	if (table_column(root, outer_e, &orelid, &oattno) && orelid == relid && oattno == attno)
		return NULL;

	foreach(lc, ec->ec_members)
	{
		EquivalenceMember *em = lfirst(lc);

		if (em->em_is_const || em->em_is_child ||
			!bms_is_subset(em->em_relids, outerrel->relids) ||
			exprType((Node *) em->em_expr) != exprType((Node *) outer_e) ||
			!table_column(root, em->em_expr, &orelid, &oattno) ||
			orelid != relid || oattno != attno)
			continue;
		return build_implied_join_equality(root, op->opno, op->inputcollid,
										   inner_right ? em->em_expr : inner_e,
										   inner_right ? inner_e : em->em_expr,
										   bms_union(em->em_relids, innerrel->relids),
										   NULL, rinfo->security_level);
	}
	return NULL;
}

/*
 * Nested loops of outer over each of innerrel's parameterized paths that
 * outer's relations satisfy, costed with extra's factors.
 */
static void
add_nestloops(PlannerInfo *root, RelOptInfo *joinrel, Path *outer, RelOptInfo *innerrel,
			  JoinType jointype, JoinPathExtraData *extra, bool partial)
{
	ListCell   *lc;

	foreach(lc, innerrel->cheapest_parameterized_paths)
	{
		Path	   *inner = lfirst(lc);
		Relids		req = PATH_REQ_OUTER(inner);
		JoinCostWorkspace ws;
		NestPath   *np;

		/* as PostgreSQL's own nested loops: no placeholder the inner side cannot compute */
		if (req == NULL || !bms_is_subset(req, outer->parent->relids) ||
			(partial && !inner->parallel_safe) ||
			have_dangerous_phv(root, outer->parent->relids, req))
			continue;
		initial_cost_nestloop(root, &ws, jointype, outer, inner, extra);
		if (partial ? !add_partial_path_precheck(joinrel, ws.total_cost, NIL) :
			!add_path_precheck(joinrel, ws.startup_cost, ws.total_cost, NIL, NULL))
			continue;
		np = create_nestloop_path(root, joinrel, jointype, &ws, extra, outer, inner,
								  extra->restrictlist, NIL, NULL);
		if (partial)
			add_partial_path(joinrel, (Path *) np);
		else
			add_path(joinrel, (Path *) np);
	}
}

void
gpuhash_semi_estimate(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
					  RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	List	   *restrictlist = NIL;
	bool		changed = false;
	JoinPathExtraData ex;
	Path	   *outer = outerrel->cheapest_total_path;
	ListCell   *lc;

	if (!gpuhash_semi_estimate_enabled || jointype != JOIN_SEMI ||
		!bms_is_empty(joinrel->lateral_relids))
		return;
	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *rinfo = lfirst(lc);
		RestrictInfo *same = same_column_clause(root, rinfo, outerrel, innerrel);

		restrictlist = lappend(restrictlist, same ? same : rinfo);
		changed |= same != NULL;
	}
	if (!changed)
		return;
	ex = *extra;
	compute_semi_anti_join_factors(root, joinrel, outerrel, innerrel, jointype,
								   extra->sjinfo, restrictlist, &ex.semifactors);
	if (ex.semifactors.outer_match_frac <= extra->semifactors.outer_match_frac)
		return;

	if (outer != NULL && PATH_REQ_OUTER(outer) == NULL && gpuhash_join_below(outer, true))
		add_nestloops(root, joinrel, outer, innerrel, jointype, &ex, false);
	if (!joinrel->consider_parallel)
		return;
	foreach(lc, outerrel->partial_pathlist)
	{
		Path	   *p = lfirst(lc);

		if (p->parallel_safe && PATH_REQ_OUTER(p) == NULL && gpuhash_join_below(p, true))
			add_nestloops(root, joinrel, p, innerrel, jointype, &ex, true);
	}
}
