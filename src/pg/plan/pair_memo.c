/*
 * pair_memo.c - the planner side of pair_memo.h: which parts of a join's
 * other clauses the node keeps per build row.
 *
 * Keeping a value per build row is exact only where the value is a function
 * of that row: it may read the build row's columns and parameters fixed
 * while the node runs (a rescan starts the memo afresh), but no outer
 * column, and nothing volatile may run in it, in its subqueries either
 * (contain_volatile_functions does not look inside a planned subquery, so
 * this walks them itself).  Evaluating it when a pair first needs it, not
 * while the table is built, keeps PostgreSQL's rule that a join clause runs
 * only for pairs that reach it: a subplan that would fail for a build row
 * no outer row matches still never runs.
 */
#include "gpuhash_pg.h"

#include "catalog/pg_proc.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"

#include "pair_memo.h"

static bool
volatile_func(Oid func_id, void *context)
{
	return func_volatile(func_id) == PROVOLATILE_VOLATILE;
}

/*
 * Is anything in node volatile, the subqueries its subplans run included?
 * (contain_volatile_functions does not look into a subplan's query.)
 */
bool
gpuhash_runs_volatile(Node *node, PlannerInfo *root)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, gpuhash_runs_volatile, root, 0);
	if (IsA(node, SubPlan))
	{
		SubPlan    *sp = (SubPlan *) node;
		PlannerInfo *sub;

		if (sp->plan_id < 1 || sp->plan_id > list_length(root->glob->subroots))
			return true;
		sub = list_nth(root->glob->subroots, sp->plan_id - 1);
		if (sub == NULL || gpuhash_runs_volatile((Node *) sub->parse, root))
			return true;
	}
	if (IsA(node, NextValueExpr) ||
		check_functions_in_node(node, volatile_func, NULL))
		return true;
	return expression_tree_walker(node, gpuhash_runs_volatile, root);
}

typedef struct MemoSearch
{
	PlannerInfo *root;
	Relids		inner_relids;
	List	   *found;
} MemoSearch;

/* The largest subexpressions that qualify, outermost first. */
static bool
find_memo(Node *node, MemoSearch *s)
{
	if (node == NULL || !contain_subplans(node))
		return false;
	if (!IsA(node, List))
	{
		Relids		relids = pull_varnos(s->root, node);

		if (!bms_is_empty(relids) && bms_is_subset(relids, s->inner_relids) &&
			!gpuhash_runs_volatile(node, s->root))
		{
			if (!list_member(s->found, node))
				s->found = lappend(s->found, node);
			return false;
		}
	}
	return expression_tree_walker(node, find_memo, s);
}

List *
gpuhash_pair_memo_exprs(PlannerInfo *root, List *clauses, Relids inner_relids)
{
	MemoSearch	s;
	ListCell   *lc;

	s.root = root;
	s.inner_relids = inner_relids;
	s.found = NIL;
	foreach(lc, clauses)
		find_memo(lfirst(lc), &s);
	return s.found;
}

List *
gpuhash_pair_memo_columns(PlannerInfo *root, List *memo)
{
	List	   *columns = NIL;
	ListCell   *lc;

	/*
	 * A placeholder of its own: set_customscan_references finds it in the
	 * scan tuple's list by its number, and then (fix_scan_list) leaves the
	 * expression itself there, so that EXPLAIN shows the clause as written.
	 */
	foreach(lc, memo)
	{
		PlaceHolderVar *phv = makeNode(PlaceHolderVar);

		phv->phexpr = copyObject(lfirst(lc));
		phv->phrels = pull_varnos(root, lfirst(lc));
		phv->phid = ++root->glob->lastPHId;
		phv->phlevelsup = 0;
		columns = lappend(columns, phv);
	}
	return columns;
}

typedef struct MemoReplace
{
	List	   *memo;
	List	   *columns;
} MemoReplace;

static Node *
replace_memo(Node *node, MemoReplace *r)
{
	ListCell   *m;
	ListCell   *c;

	if (node == NULL)
		return NULL;
	forboth(m, r->memo, c, r->columns)
	{
		if (equal(node, lfirst(m)))
			return copyObject(lfirst(c));
	}
	return expression_tree_mutator(node, replace_memo, r);
}

List *
gpuhash_pair_memo_replace(List *clauses, List *memo, List *columns)
{
	MemoReplace r;

	r.memo = memo;
	r.columns = columns;
	return (List *) replace_memo((Node *) clauses, &r);
}
