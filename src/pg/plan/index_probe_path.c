/*
 * index_probe_path.c - the planner's IndexProbeJoin paths (index_probe.h):
 * a semi or anti join on one equality of integer keys, whose inner side is a
 * table with a B-tree led by its key column and a filter the direct reader
 * compiles.
 *
 * Its cost is PostgreSQL's own for the nested loop over the parameterized
 * index scan that does the same probes, with the probes' part scaled by
 * gpuhash.index_probe_cost_share: the same index pages and heap rows are
 * read, without the executor's calls per outer row and the descent per key
 * (on the GPU host, TPC-H q04's probes took 0.37 s a participant against
 * the nested loop's 0.74 s; NOTES section 53).  So it is chosen only where
 * PostgreSQL would itself consider the nested loop close to its best plan.
 * Where an index-only scan could do the probes, PostgreSQL's nested loop
 * reads no heap rows and this node would: no path is made.
 */
#include "gpuhash_pg.h"

#include "access/table.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type_d.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "index_probe.h"
#include "join_node.h"
#include "read_cost.h"
#include "scan_filter.h"

static Plan *plan_index_probe(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							  List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods index_probe_path_methods = {
	.CustomName = GPUHASH_INDEX_PROBE_NAME,
	.PlanCustomPath = plan_index_probe,
};

static const CustomScanMethods index_probe_scan_methods = {
	.CustomName = GPUHASH_INDEX_PROBE_NAME,
	.CreateCustomScanState = gpuhash_index_probe_create_state,
};

bool
gpuhash_is_index_probe_path(const Path *path)
{
	return IsA(path, CustomPath) &&
		((const CustomPath *) path)->methods == &index_probe_path_methods;
}

/* The path's custom_private, in this order. */
enum
{
	IPP_OUTER_KEY,				/* Expr over the outer side */
	IPP_INDEX,					/* Integer: the B-tree's OID */
	IPP_JOINTYPE,
	IPP_INNER_RELID,			/* Integer: the inner table's range table index */
	IPP_QUALS					/* List: its filter, as inner_filter found it */
};

/*
 * The B-tree of innerrel that can find the rows of inner_key = (a value of
 * the key's type) with opno: led by that column, ascending with NULLs last
 * (the walk's order), no predicate; the smallest when several can.
 */
static IndexOptInfo *
probe_index(RelOptInfo *innerrel, Var *inner_key, Oid opno)
{
	IndexOptInfo *best = NULL;
	ListCell   *lc;

	foreach(lc, innerrel->indexlist)
	{
		IndexOptInfo *ix = lfirst(lc);

		if (ix->relam != BTREE_AM_OID || ix->indpred != NIL || ix->nkeycolumns < 1 ||
			ix->indexkeys[0] != inner_key->varattno || ix->reverse_sort[0] ||
			ix->nulls_first[0] || ix->opcintype[0] != inner_key->vartype ||
			get_op_opfamily_strategy(opno, ix->opfamily[0]) != BTEqualStrategyNumber)
			continue;
		if (best == NULL || ix->pages < best->pages)
			best = ix;
	}
	return best;
}

/*
 * The join's one clause, outer expression = inner column, of one integer
 * type on both sides: the outer expression into *outer_key and the index
 * that probes the inner column into *index; false when the join is not one.
 */
static bool
probe_clause(RelOptInfo *joinrel, JoinType jointype, RelOptInfo *outerrel, RelOptInfo *innerrel,
			 List *restrictlist, Expr **outer_key, IndexOptInfo **index)
{
	RestrictInfo *ri;
	OpExpr	   *op;
	Expr	   *o;
	Expr	   *i;

	if (list_length(restrictlist) != 1)
		return false;
	ri = linitial_node(RestrictInfo, restrictlist);
	/* a semi join's clauses all decide matches; an anti join's pushed-down ones filter */
	if (ri->pseudoconstant ||
		(jointype == JOIN_ANTI && RINFO_IS_PUSHED_DOWN(ri, joinrel->relids)) ||
		!IsA(ri->clause, OpExpr) || list_length(((OpExpr *) ri->clause)->args) != 2 ||
		bms_is_empty(ri->left_relids) || bms_is_empty(ri->right_relids))
		return false;
	op = (OpExpr *) ri->clause;
	if (bms_is_subset(ri->left_relids, outerrel->relids) &&
		bms_is_subset(ri->right_relids, innerrel->relids))
	{
		o = linitial(op->args);
		i = lsecond(op->args);
	}
	else if (bms_is_subset(ri->left_relids, innerrel->relids) &&
			 bms_is_subset(ri->right_relids, outerrel->relids))
	{
		o = lsecond(op->args);
		i = linitial(op->args);
	}
	else
		return false;
	if (!IsA(i, Var) || ((Var *) i)->varno != innerrel->relid || ((Var *) i)->varattno <= 0 ||
		!gpuhash_is_key_type(exprType((Node *) i)) || exprType((Node *) o) != exprType((Node *) i) ||
		contain_volatile_functions((Node *) o))
		return false;
	*outer_key = o;
	*index = probe_index(innerrel, (Var *) i, op->opno);
	return *index != NULL;
}

/* The inner table's filter, when the direct reader compiles all of it; else false. */
static bool
inner_filter(PlannerInfo *root, RelOptInfo *innerrel, List **quals)
{
	RangeTblEntry *rte = planner_rt_fetch(innerrel->relid, root);
	Relation	rel;
	List	   *rest = NIL;
	ListCell   *lc;

	*quals = NIL;
	foreach(lc, innerrel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		if (ri->pseudoconstant)
			return false;
		*quals = lappend(*quals, ri->clause);
	}
	if (*quals == NIL)
		return true;
	rel = table_open(rte->relid, NoLock);
	(void) gpuhash_scan_filter_compile(*quals, RelationGetDescr(rel), &rest);
	table_close(rel, NoLock);
	return rest == NIL;
}

/*
 * PostgreSQL's own probe of index for the nested loop: its plain index scan
 * parameterized by the outer side, or NULL when there is none, or when an
 * index-only scan of it is there too (it would read no heap rows).
 */
static Path *
reference_probe(RelOptInfo *outerrel, RelOptInfo *innerrel, IndexOptInfo *index)
{
	Path	   *best = NULL;
	ListCell   *lc;

	foreach(lc, innerrel->pathlist)
	{
		Path	   *p = lfirst(lc);
		Relids		req = PATH_REQ_OUTER(p);

		if (!IsA(p, IndexPath) || ((IndexPath *) p)->indexinfo != index ||
			bms_is_empty(req) || !bms_is_subset(req, outerrel->relids))
			continue;
		if (p->pathtype == T_IndexOnlyScan)
			return NULL;
		if (best == NULL || p->total_cost < best->total_cost)
			best = p;
	}
	return best;
}

static void
add_probe_path(PlannerInfo *root, RelOptInfo *joinrel, JoinType jointype,
			   JoinPathExtraData *extra, Path *outer, Path *probe, Expr *outer_key,
			   IndexOptInfo *index, List *quals, bool partial)
{
	JoinCostWorkspace ws;
	NestPath   *nest;
	CustomPath *cp;

	if (PATH_REQ_OUTER(outer) != NULL)
		return;
	initial_cost_nestloop(root, &ws, jointype, outer, probe, extra);
	nest = create_nestloop_path(root, joinrel, jointype, &ws, extra, outer, probe,
								extra->restrictlist, NIL, NULL);

	cp = makeNode(CustomPath);
	cp->path.pathtype = T_CustomScan;
	cp->path.parent = joinrel;
	cp->path.pathtarget = joinrel->reltarget;
	cp->path.param_info = NULL;
	cp->path.parallel_aware = false;
	cp->path.parallel_safe = nest->jpath.path.parallel_safe;
	cp->path.parallel_workers = outer->parallel_workers;
	cp->path.rows = nest->jpath.path.rows;
	/*
	 * Each participant probes for its own outer rows in the backend, so the
	 * plan takes as many as the machine's processors allow (the reader's
	 * helper threads work only while the outer rows are read); PostgreSQL
	 * sized the outer scan alone.
	 */
	if (partial)
	{
		int			workers = gpuhash_plan_workers(outer->parallel_workers, 1.0,
												   gpuhash_workers_fixed(outer));

		if (workers > cp->path.parallel_workers)
		{
			cp->path.rows = clamp_row_est(cp->path.rows *
										  gpuhash_parallel_divisor(cp->path.parallel_workers) /
										  gpuhash_parallel_divisor(workers));
			cp->path.parallel_workers = workers;
		}
	}
	cp->path.startup_cost = nest->jpath.path.startup_cost;
	cp->path.total_cost = outer->total_cost +
		gpuhash_index_probe_cost_share * (nest->jpath.path.total_cost - outer->total_cost);
	cp->path.total_cost = Max(cp->path.total_cost, cp->path.startup_cost);
	/* the outer rows come out in their order, fewer */
	cp->path.pathkeys = outer->pathkeys;
	cp->flags = 0;
	cp->custom_paths = list_make1(outer);
	cp->custom_private = list_make5(outer_key, makeInteger((int) index->indexoid),
									makeInteger(jointype), makeInteger(index->rel->relid), quals);
	cp->methods = &index_probe_path_methods;
	if (partial)
		add_partial_path(joinrel, &cp->path);
	else
		add_path(joinrel, &cp->path);
}

void
gpuhash_index_probe_paths(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
						  RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	RangeTblEntry *rte;
	Expr	   *outer_key;
	IndexOptInfo *index;
	List	   *quals;
	Path	   *probe;

	if (!gpuhash_enable_index_probe || (jointype != JOIN_SEMI && jointype != JOIN_ANTI))
		return;
	if (innerrel->reloptkind != RELOPT_BASEREL || innerrel->rtekind != RTE_RELATION ||
		!bms_is_empty(joinrel->lateral_relids) || !bms_is_empty(innerrel->lateral_relids))
		return;
	rte = planner_rt_fetch(innerrel->relid, root);
	if (rte->inh || (rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW))
		return;
	/* the node returns the outer side's columns alone */
	if (bms_overlap(pull_varnos(root, (Node *) joinrel->reltarget->exprs), innerrel->relids))
		return;
	if (!probe_clause(joinrel, jointype, outerrel, innerrel, extra->restrictlist, &outer_key, &index) ||
		!inner_filter(root, innerrel, &quals) ||
		(probe = reference_probe(outerrel, innerrel, index)) == NULL)
		return;

	if (outerrel->cheapest_total_path != NULL)
		add_probe_path(root, joinrel, jointype, extra, outerrel->cheapest_total_path, probe,
					   outer_key, index, quals, false);
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL && probe->parallel_safe)
	{
		Path	   *pouter = linitial(outerrel->partial_pathlist);

		if (pouter->parallel_safe)
			add_probe_path(root, joinrel, jointype, extra, pouter, probe, outer_key, index, quals,
						   true);
	}
}

static Plan *
plan_index_probe(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
				 List *tlist, List *clauses, List *custom_plans)
{
	CustomScan *cscan = makeNode(CustomScan);
	Expr	   *outer_key = list_nth(best_path->custom_private, IPP_OUTER_KEY);
	Oid			indexoid = (Oid) intVal(list_nth(best_path->custom_private, IPP_INDEX));
	JoinType	jointype = intVal(list_nth(best_path->custom_private, IPP_JOINTYPE));
	Index		inner_relid = intVal(list_nth(best_path->custom_private, IPP_INNER_RELID));
	List	   *quals = copyObject(list_nth(best_path->custom_private, IPP_QUALS));
	Plan	   *outer_plan = linitial(custom_plans);
	List	   *scan_tlist = NIL;
	ListCell   *lc;
	AttrNumber	resno = 1;

	ChangeVarNodes((Node *) quals, inner_relid, 1, 0);

	outer_plan = gpuhash_plan_with_column(outer_plan, outer_key);
	foreach(lc, outer_plan->targetlist)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(copyObject(lfirst_node(TargetEntry, lc)->expr),
											 resno++, NULL, false));

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = list_make1(outer_plan);
	cscan->custom_exprs = list_make1(copyObject(outer_key));
	cscan->custom_private = list_make5(makeInteger(jointype),
									   makeInteger((int) planner_rt_fetch(inner_relid, root)->relid),
									   makeInteger((int) indexoid),
									   makeInteger(gpuhash_tlist_position(outer_plan->targetlist, outer_key)),
									   quals);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = rel->relids;
	cscan->methods = &index_probe_scan_methods;
	return &cscan->scan.plan;
}

void
gpuhash_index_probe_init(void)
{
	RegisterCustomScanMethods(&index_probe_scan_methods);
}
