/*
 * agg_path.c - the planner side of GpuHashAggregate: a GpuHashJoin that
 * folds the query's aggregates itself (join_agg.h).
 *
 * Offered through create_upper_paths_hook for a query whose top join (the
 * whole of its FROM) has a GpuHashJoin path, when every aggregate is count,
 * sum, avg, min or max of integer arithmetic on the joined columns, or sum
 * or avg of numeric arithmetic over columns of a declared scale, and the
 * GROUP BY (if any) lists plain int2, int4, int8, date, bool or text
 * columns of either side, or years of date columns (agg_compile.c
 * compiles them).  In a parallel plan
 * each participant emits its partial states per group, combined by
 * PostgreSQL's Finalize Aggregate above a Gather, or the participants
 * combine the groups themselves; a serial plan emits the results and
 * applies HAVING itself.
 */
#include "gpuhash_pg.h"

#include <float.h>
#include <math.h>

#include "access/table.h"
#include "catalog/pg_aggregate_d.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_statistic.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planner.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "miscadmin.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/date.h"
#include "utils/selfuncs.h"

#include "index_probe.h"
#include "join_agg.h"
#include "join_node.h"
#include "read_cost.h"
#include "scan_filter.h"

static create_upper_paths_hook_type prev_upper_paths_hook = NULL;

static Plan *plan_gpu_agg(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						  List *tlist, List *clauses, List *custom_plans);
static Plan *plan_scan_agg(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						   List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods gpu_agg_path_methods = {
	.CustomName = GPUHASH_AGG_NAME,
	.PlanCustomPath = plan_gpu_agg,
};

static const CustomPathMethods scan_agg_path_methods = {
	.CustomName = GPUHASH_AGG_NAME,
	.PlanCustomPath = plan_scan_agg,
};

static const CustomScanMethods gpu_agg_scan_methods = {
	.CustomName = GPUHASH_AGG_NAME,
	.CreateCustomScanState = gpuhash_agg_create_state,
};

/* The path's custom_private: the join path's, then these. */
#define AGG_PRIV_JOINREL GJ_PATH_PRIV_COUNT
#define AGG_PRIV_PARTIAL (GJ_PATH_PRIV_COUNT + 1)
#define AGG_PRIV_GROUP_EXPRS (GJ_PATH_PRIV_COUNT + 2)	/* GROUP BY's columns */
#define AGG_PRIV_HAVING (GJ_PATH_PRIV_COUNT + 3)	/* HAVING, when the node emits final values */
#define AGG_PRIV_COMBINE (GJ_PATH_PRIV_COUNT + 4)	/* the participants combine the groups */
#define AGG_PRIV_GROUPS (GJ_PATH_PRIV_COUNT + 5)	/* String: all the groups, estimated */
#define AGG_PRIV_NGROUP (GJ_PATH_PRIV_COUNT + 6)	/* how many of the keys GROUP BY lists */

/* a scan's path: these, in a list of their own */
#define SCAN_PRIV_INPUT 0
#define SCAN_PRIV_GROUP_EXPRS 1
#define SCAN_PRIV_HAVING 2
#define SCAN_PRIV_PARTIAL 3
#define SCAN_PRIV_COMBINE 4
#define SCAN_PRIV_GROUPS 5
#define SCAN_PRIV_NGROUP 6

/* a String: a Float of integral value would come back from a worker's copy of the plan as an Integer */
static Node *
groups_string(double groups)
{
	return (Node *) makeString(psprintf("%.0f", groups));
}

/*
 * Is v, a column outside GROUP BY, one that PostgreSQL let the query name
 * because GROUP BY holds its table's primary key (or held it, before
 * remove_useless_groupby_columns took the rest of that table's columns
 * out)?  All of a group's rows then come from one row of that table, so the
 * node may hash its bytes as one more group key without splitting a group:
 * TPC-H q10's c_name, c_address and c_acctbal beside c_custkey.
 */
static bool
dependent_column(PlannerInfo *root, Var *v, List *group_exprs)
{
	RangeTblEntry *rte;
	List	   *deps = NIL;
	bool		keyed = false;
	ListCell   *lc;

	if (v->varlevelsup != 0 || v->varno < 1 || v->varno >= root->simple_rel_array_size)
		return false;
	/* without a column of v's table in GROUP BY, pg_constraint is not read */
	foreach(lc, group_exprs)
		keyed |= IsA(lfirst(lc), Var) && ((Var *) lfirst(lc))->varno == v->varno &&
			((Var *) lfirst(lc))->varlevelsup == 0;
	if (!keyed)
		return false;
	rte = planner_rt_fetch(v->varno, root);
	return rte->rtekind == RTE_RELATION &&
		check_functional_grouping(rte->relid, v->varno, 0, group_exprs, &deps);
}

/*
 * The columns found dependent in this call of the hook: the serial and the
 * partial shapes name the same ones, and each check reads pg_constraint.
 */
static List *dependent_memo;

/*
 * What the node's output expressions read, outside its GROUP BY
 * expressions (a year of a date column is emitted as a key, and the column
 * it reads need not be): pull_var_clause's Vars, Aggrefs, window functions
 * and placeholders.
 */
typedef struct TargetWalk
{
	List	   *group_exprs;
	List	   *found;
} TargetWalk;

static bool
target_walker(Node *n, TargetWalk *w)
{
	if (n == NULL)
		return false;
	if (IsA(n, Var) || IsA(n, Aggref) || IsA(n, WindowFunc) || IsA(n, PlaceHolderVar))
	{
		w->found = lappend(w->found, n);
		return false;
	}
	if (list_member(w->group_exprs, n))
		return false;
	return expression_tree_walker(n, target_walker, w);
}

/*
 * The distinct aggregates of exprs, or NIL when they hold none, or anything
 * else outside them but the GROUP BY expressions group_exprs (another column, a
 * placeholder, a window function).  With dependents, a column that GROUP BY
 * determines through its table's primary key is added there instead.
 */
static List *
target_aggrefs(PlannerInfo *root, List *exprs, List *group_exprs, List **dependents)
{
	TargetWalk	w = {group_exprs, NIL};
	List	   *aggs = NIL;
	ListCell   *lc;

	(void) target_walker((Node *) exprs, &w);
	foreach(lc, w.found)
	{
		Node	   *n = lfirst(lc);

		if (IsA(n, Var) && list_member(group_exprs, n))
			continue;
		if (IsA(n, Var) && dependents != NULL &&
			(list_member(dependent_memo, n) || dependent_column(root, (Var *) n, group_exprs)))
		{
			dependent_memo = list_append_unique(dependent_memo, n);
			*dependents = list_append_unique(*dependents, n);
			continue;
		}
		if (!IsA(n, Aggref))
			return NIL;
		aggs = list_append_unique(aggs, n);
	}
	return aggs;
}

/* What the node computes: the shape of the query's aggregation. */
typedef struct AggShape
{
	List	   *aggs;			/* distinct Aggrefs of the target (and HAVING) */
	List	   *group_exprs;	/* GROUP BY's columns, or NIL */
	List	   *keys;			/* the node's keys: group_exprs, then the dependent columns */
	List	   *having;			/* HAVING, applied by a serial node */
} AggShape;

/*
 * PostgreSQL's own partial input as a fold runs it (pg_input): its workers
 * (*workers) sized by the processors, and the share of the rows and run
 * cost PostgreSQL planned for one participant that each then has (a
 * table's parallel_workers option still fixes the count).  TPC-H
 * q11's nested loop over partsupp's index, planned for the one worker that
 * supplier's size allows, read 160 000 rows in each of two processes in
 * 340 ms (run 256, bench/NOTES.md section 61).  Other inputs: 1, and their
 * own workers.
 */
static double
pg_input_share(const Path *input, int *workers)
{
	*workers = input->parallel_workers;
	if (input->parallel_workers <= 0 || input->pathtype == T_SeqScan || IsA(input, CustomPath))
		return 1.0;
	*workers = gpuhash_plan_workers(input->parallel_workers, 1.0,
									gpuhash_workers_fixed((Path *) input));
	return gpuhash_parallel_divisor(input->parallel_workers) / gpuhash_parallel_divisor(*workers);
}

/*
 * A GpuHashAggregate path over input (a join's path, or a scan's), at
 * input_cost plus folding its rows (finding each row's group, then its
 * aggregates) and emitting groups.
 */
static CustomPath *
new_agg_path(PlannerInfo *root, RelOptInfo *upper, Path *input, PathTarget *target,
			 const AggShape *shape, double groups, Cost input_cost)
{
	CustomPath *cp = makeNode(CustomPath);
	double		per_row = list_length(shape->aggs) * 0.25 +
		list_length(shape->keys) * 0.5;
	double		rows = input->rows;
	double		share;

	cp->path.pathtype = T_CustomScan;
	cp->path.parent = upper;
	cp->path.pathtarget = target;
	cp->path.param_info = NULL;
	cp->path.parallel_aware = false;
	cp->path.parallel_safe = input->parallel_safe &&
		is_parallel_safe(root, (Node *) target->exprs) &&
		is_parallel_safe(root, (Node *) shape->having);
	/*
	 * A join's path has them already (make_path); a Seq Scan's has
	 * PostgreSQL's count, none where serial, and is sized by its reads;
	 * PostgreSQL's other partial inputs are sized by the processors, their
	 * run cost and rows shared anew (groups, the caller's, are so already).
	 */
	share = pg_input_share(input, &cp->path.parallel_workers);
	input_cost = input->startup_cost + (input_cost - input->startup_cost) * share;
	rows *= share;
	if (input->parallel_workers > 0 && input->pathtype == T_SeqScan)
		cp->path.parallel_workers =
			gpuhash_plan_workers(input->parallel_workers, gpuhash_read_kept(root, input, 1.0),
								 gpuhash_workers_fixed(input));
	cp->path.rows = groups;
	cp->path.total_cost = input_cost + rows * per_row * cpu_operator_cost +
		groups * (cpu_tuple_cost + list_length(shape->having) * cpu_operator_cost);
	cp->path.startup_cost = cp->path.total_cost;
	cp->path.pathkeys = NIL;
	cp->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	return cp;
}

/*
 * The join's cost without emitting its rows, plus folding them: cheaper
 * than the join under an Aggregate node by what that node would cost.
 */
static CustomPath *
make_agg_path(PlannerInfo *root, RelOptInfo *upper, CustomPath *join, PathTarget *target,
			  const AggShape *shape, double groups, bool partial)
{
	CustomPath *cp = new_agg_path(root, upper, &join->path, target, shape, groups,
								  join->path.total_cost - join->path.rows * cpu_tuple_cost);

	cp->path.parallel_aware = join->path.parallel_aware;
	cp->custom_paths = join->custom_paths;
	cp->custom_private = lappend(lappend(list_copy(join->custom_private), join->path.parent),
								 makeInteger(partial));
	cp->custom_private = lappend(lappend(cp->custom_private, shape->keys), shape->having);
	cp->custom_private = lappend(lappend(cp->custom_private, makeInteger(false)),
								 groups_string(groups));
	cp->custom_private = lappend(cp->custom_private,
								 makeInteger(list_length(shape->group_exprs)));
	cp->methods = &gpu_agg_path_methods;
	return cp;
}

/*
 * One planning of a grouped query offers a fold over every GpuHashJoin path
 * made for the top join (join_paths_of), in up to three variants each, and
 * those paths share a few row counts and a few pairs of children's targets:
 * TPC-H q05 asked for 37 compiles and 19 group estimates, most of them
 * repeats, and they were most of what gpuhash added to its planning
 * (bench/NOTES.md section 28).  What they found is kept for the rest of one
 * call of the hook.
 */
#define AGG_MEMO_SIZE 32

typedef struct GroupsMemo
{
	List	   *exprs;
	double		rows;
	double		groups;
} GroupsMemo;

/*
 * A shape that compiled over one join compiles over any other whose two
 * sides return every column it reads: the compiler looks a column up in
 * either side's target list and decides nothing else by the side it is on.
 * By the same token, a shape that failed although both sides returned only
 * plain columns, every one it reads among them, fails over any such pair:
 * its own form is what the compiler declined (a year key with
 * gpuhash.fold_year_keys off), and TPC-H q07 asked for 142 compiles that
 * way, one per GpuHashJoin path of its top join.
 */
typedef struct ShapeMemo
{
	const List *aggs;
	List	   *vars;			/* the Vars it reads */
	bool		compiles;
} ShapeMemo;

static GroupsMemo groups_memo[AGG_MEMO_SIZE];
static int	n_groups_memo;
static ShapeMemo shape_memo[AGG_MEMO_SIZE];
static int	n_shape_memo;
static RelOptInfo *quals_memo_rel;	/* scan_quals_compile's rel, or NULL */
static bool quals_memo;

/*
 * The years a date column v spans, by its statistics: at most its distinct
 * values, and the years between its histogram's ends; -1 without them.
 * estimate_num_groups takes EXTRACT(YEAR FROM v) to have as many values as
 * v, TPC-H q08's 2 406 dates for its 2 years.
 */
static double
years_of(PlannerInfo *root, Var *v)
{
	VariableStatData vd;
	AttStatsSlot sslot;
	bool		isdefault;
	double		nd;
	double		years = -1;

	examine_variable(root, (Node *) v, 0, &vd);
	nd = get_variable_numdistinct(&vd, &isdefault);
	if (!isdefault && HeapTupleIsValid(vd.statsTuple) &&
		get_attstatsslot(&sslot, vd.statsTuple, STATISTIC_KIND_HISTOGRAM, InvalidOid,
						 ATTSTATSSLOT_VALUES))
	{
		if (sslot.nvalues >= 2)
		{
			DateADT		lo = DatumGetDateADT(sslot.values[0]);
			DateADT		hi = DatumGetDateADT(sslot.values[sslot.nvalues - 1]);

			if (!DATE_NOT_FINITE(lo) && !DATE_NOT_FINITE(hi))
				years = Min(nd, floor((double) (hi - lo) / 365.25) + 2);
		}
		free_attstatsslot(&sslot);
	}
	ReleaseVariableStats(vd);
	return years;
}

/*
 * estimate_num_groups, with a year of a date column (a group key of the
 * node's own) counted as the years the column spans.  A year whose column
 * is itself among the other keys adds no groups: GROUP BY EXTRACT(YEAR FROM
 * d), d has d's groups, and counting the years again overestimated them
 * past hash_mem, so the fold was declined (the fuzzer, seed 20261129, case
 * 57).
 */
static double
estimate_groups(PlannerInfo *root, List *exprs, double rows)
{
	List	   *rest = NIL;
	List	   *year_vars = NIL;
	double	   *year_spans = palloc(list_length(exprs) * sizeof(double));
	List	   *rest_vars;
	double		years = 1;
	ListCell   *lc;

	foreach(lc, exprs)
	{
		Var		   *v = IsA(lfirst(lc), Var) ? NULL : gpuhash_agg_year_of_date(lfirst(lc));
		double		y = v != NULL ? years_of(root, v) : -1;

		if (y > 0)
		{
			year_spans[list_length(year_vars)] = y;
			year_vars = lappend(year_vars, v);
		}
		else
			rest = lappend(rest, lfirst(lc));
	}
	if (year_vars == NIL)
		return estimate_num_groups(root, exprs, rows, NULL, NULL);
	rest_vars = pull_var_clause((Node *) rest, PVC_RECURSE_AGGREGATES | PVC_RECURSE_WINDOWFUNCS |
								PVC_RECURSE_PLACEHOLDERS);
	foreach(lc, year_vars)
		if (!list_member(rest_vars, lfirst(lc)))
			years *= year_spans[foreach_current_index(lc)];
	return clamp_row_est(Min(rows, years * (rest == NIL ? 1.0 :
											estimate_num_groups(root, rest, rows, NULL, NULL))));
}

/* estimate_groups, remembered for this call of the hook */
static double
num_groups(PlannerInfo *root, List *exprs, double rows)
{
	double		groups;

	for (int i = 0; i < n_groups_memo; i++)
		if (groups_memo[i].exprs == exprs && groups_memo[i].rows == rows)
			return groups_memo[i].groups;
	groups = estimate_groups(root, exprs, rows);
	if (n_groups_memo < AGG_MEMO_SIZE)
		groups_memo[n_groups_memo++] = (GroupsMemo) {exprs, rows, groups};
	return groups;
}

/* Does the target hold plain columns only (no placeholder, no expression)? */
static bool
plain_columns(const PathTarget *target)
{
	ListCell   *lc;

	foreach(lc, target->exprs)
		if (!IsA(lfirst(lc), Var))
			return false;
	return true;
}

/* Does one of the two targets return each of vars? */
static bool
sides_return(const List *vars, const PathTarget *outer, const PathTarget *inner)
{
	ListCell   *lc;

	foreach(lc, vars)
		if (!list_member(outer->exprs, lfirst(lc)) && !list_member(inner->exprs, lfirst(lc)))
			return false;
	return true;
}

/*
 * Can the aggregates and group keys be compiled against the columns join's
 * children will return?  (Their plans return exactly their paths' targets.)
 * Checked when the path is made, so that making the plan cannot fail.
 */
static bool
aggs_compile_for(const AggShape *shape, CustomPath *join)
{
	PathTarget *outer_target = ((Path *) linitial(join->custom_paths))->pathtarget;
	PathTarget *inner_target = ((Path *) lsecond(join->custom_paths))->pathtarget;
	List	   *outer;
	List	   *inner;
	List	   *specs;
	List	   *keys;
	List	   *vars;
	bool		compiles;
	ListCell   *lc;

	for (int i = 0; i < n_shape_memo; i++)
		if (shape_memo[i].aggs == shape->aggs &&
			(shape_memo[i].compiles ? sides_return(shape_memo[i].vars, outer_target, inner_target) :
			 plain_columns(outer_target) && plain_columns(inner_target)))
			return shape_memo[i].compiles;
	outer = make_tlist_from_pathtarget(outer_target);
	inner = make_tlist_from_pathtarget(inner_target);
	compiles = gpuhash_agg_plan_aggs(shape->aggs, outer, inner, &specs) &&
		gpuhash_agg_plan_group_keys(shape->keys, list_length(shape->group_exprs), outer, inner,
									&keys);
	if (n_shape_memo == AGG_MEMO_SIZE ||
		(!compiles && !(plain_columns(outer_target) && plain_columns(inner_target))))
		return compiles;
	vars = pull_var_clause((Node *) list_make2(shape->aggs, shape->keys),
						   PVC_RECURSE_AGGREGATES | PVC_INCLUDE_PLACEHOLDERS);
	/* a placeholder is found by the compiler's own lookup only */
	foreach(lc, vars)
		if (!IsA(lfirst(lc), Var))
			return compiles;
	/* failing for want of a column says nothing of other joins */
	if (!compiles && !sides_return(vars, outer_target, inner_target))
		return false;
	shape_memo[n_shape_memo++] = (ShapeMemo) {shape->aggs, vars, compiles};
	return compiles;
}

/* the groups of rows, or 1 without GROUP BY */
static double
all_groups(PlannerInfo *root, const AggShape *shape, double rows)
{
	return shape->group_exprs == NIL ? 1 : num_groups(root, shape->group_exprs, rows);
}

/* Does a table of groups fit hash_mem?  Its slots and entries grow by doubling: twice the entries. */
static bool
groups_fit(const AggShape *shape, double groups)
{
	return 2.0 * groups * (sizeof(uint64) * (2 + list_length(shape->keys)) +
						   list_length(shape->aggs) * GPUHASH_AGG_ACC_BYTES) <=
		(double) get_hash_memory_limit();
}

/*
 * The groups of one participant that reads rows of the join, or 1 without
 * GROUP BY; -1 when their table would not fit the hash tables' memory
 * (hash_mem): unlike PostgreSQL's hash aggregation, the node cannot spill.
 */
static double
groups_of(PlannerInfo *root, const AggShape *shape, double rows)
{
	double		groups = all_groups(root, shape, rows);

	return groups_fit(shape, groups) ? groups : -1;
}

/* rel's GpuHashJoin paths that add_path kept, partial ones or the others */
static List *
kept_join_paths(RelOptInfo *rel, bool partial)
{
	List	   *kept = NIL;
	ListCell   *lc;

	foreach(lc, partial ? rel->partial_pathlist : rel->pathlist)
	{
		Path	   *p = lfirst(lc);

		/* the joined columns are read from the join, not its projection */
		if (IsA(p, ProjectionPath))
			p = ((ProjectionPath *) p)->subpath;
		if (gpuhash_is_join_path(p) && p->parent == rel && p->parallel_aware == partial)
			kept = lappend(kept, p);
	}
	return kept;
}

/*
 * The partial GpuHashJoin paths made for rel that add_partial_path did not
 * keep, those of as many workers as the rel's best partial path: a fold over
 * fewer workers costs less than it runs (W5, run 69).
 */
static List *
partial_paths_aside(RelOptInfo *rel)
{
	List	   *paths = NIL;
	int			workers = 0;
	ListCell   *lc;

	foreach(lc, rel->partial_pathlist)
		workers = Max(workers, ((Path *) lfirst(lc))->parallel_workers);
	foreach(lc, gpuhash_join_paths_of(rel, true))
	{
		Path	   *p = lfirst(lc);

		if (p->parallel_workers >= workers)
			paths = lappend(paths, p);
	}
	return paths;
}

/*
 * The GpuHashJoin paths of rel to fold over, partial ones or the others:
 * those add_path kept in its path lists; or, when PostgreSQL's own joins
 * displaced every one of them from both lists, all that were made for rel
 * in this planning (join_path.c keeps them aside; none under GEQO).  Only
 * then: where one of ours won a list, the others lost to it on the same
 * terms, and a loser's fold was seen to win on a cost that did not hold (W5,
 * run 69: a partial path of two workers chosen over the kept one of five,
 * 0.30 s becoming 1.02 s).
 */
static List *
join_paths_of(RelOptInfo *rel, bool partial)
{
	List	   *serial = kept_join_paths(rel, false);
	List	   *parallel = kept_join_paths(rel, true);

	if (serial != NIL || parallel != NIL)
	{
		if (!partial || parallel != NIL)
			return partial ? parallel : serial;
		return partial_paths_aside(rel);
	}
	return gpuhash_join_paths_of(rel, partial);
}

/*
 * The cost of PostgreSQL's best path for the grouped query, before any
 * fold was added (this call of the hook).
 */
static Cost pg_best_cost;

/*
 * A fold whose join has one of PostgreSQL's joins for a side saves only the
 * aggregation of that side's rows, which the costs put within add_path's
 * 1 % of PostgreSQL's own plan; its plan's shape decides instead, and
 * TPC-H q08's two such folds ran 11 % and 20 % slower than PostgreSQL's
 * aggregation over the same GPU joins (runs 166-167).  Such a fold is kept
 * only where it costs clearly less than PostgreSQL's best path, as is a
 * fold over PostgreSQL's own input (pg_input), where only the aggregation
 * differs.
 */
#define UNSURE_FOLD_MARGIN 1.01

static bool
unsure_fold(const CustomPath *fold)
{
	ListCell   *lc;

	foreach(lc, fold->custom_paths)
	{
		Path	   *p = lfirst(lc);

		if (IsA(p, ProjectionPath))
			p = ((ProjectionPath *) p)->subpath;
		if (IsA(p, HashPath) || IsA(p, NestPath) || IsA(p, MergePath) ||
			(fold->methods == &scan_agg_path_methods && p->pathtype != T_SeqScan))
			return true;
	}
	return false;
}

/*
 * A join fold grouped by a year of a date is kept only where it costs
 * clearly less than the best path without it.  The year fold can choose a
 * join order of its own: TPC-H q07's fold, which the costs put 0.5 % under
 * the GPU joins below PostgreSQL's aggregation, took the nations' cross
 * product to the bottom of the chain and ran 10 % slower (runs 168 and
 * 200), while q09's, on PostgreSQL's own join order and 7 % cheaper, ran
 * 1.10-1.46x faster (runs 198 and 200).  The margin sits between the two,
 * not at q09's: q09's cost is mostly the nested loop into lineitem that
 * both plans share, and ANALYZE's samples put its fold 4.9-5.9 % under
 * PostgreSQL's plan, so a margin of 5 % lost it on one of two hosts (run
 * 214; bench/NOTES.md section 50).
 */
#define YEAR_FOLD_MARGIN 1.03

/* whether this call of the hook groups by a year of a date the fold may take */
static bool year_grouping;

static bool
groups_by_year(List *group_exprs)
{
	ListCell   *lc;

	if (!gpuhash_fold_year_keys)
		return false;
	foreach(lc, group_exprs)
		if (gpuhash_agg_year_of_date(lfirst(lc)) != NULL)
			return true;
	return false;
}

/* add_path of path, a join fold's (fold: its node's path), unless it is an unsure one */
static void
add_fold_path(RelOptInfo *rel, Path *path, const CustomPath *fold)
{
	if (year_grouping && path->total_cost * YEAR_FOLD_MARGIN >= pg_best_cost)
		return;
	if (unsure_fold(fold) && path->total_cost * UNSURE_FOLD_MARGIN >= pg_best_cost)
		return;
	add_path(rel, path);
}

/*
 * Finalize Aggregate over Gather: plain without GROUP BY; with it hashed,
 * or sorted above a Sort, as the grouping allows (the node's groups come in
 * no order).
 */
static void
add_final_aggs(PlannerInfo *root, RelOptInfo *grouped_rel, Path *gather,
			   GroupPathExtraData *gx, double groups, const CustomPath *fold)
{
	Query	   *parse = root->parse;

	if (parse->groupClause == NIL)
	{
		add_fold_path(grouped_rel, (Path *)
					  create_agg_path(root, grouped_rel, gather, grouped_rel->reltarget,
									  AGG_PLAIN, AGGSPLIT_FINAL_DESERIAL, NIL,
									  (List *) gx->havingQual, &gx->agg_final_costs, 1), fold);
		return;
	}
	if (gx->flags & GROUPING_CAN_USE_HASH)
		add_fold_path(grouped_rel, (Path *)
					  create_agg_path(root, grouped_rel, gather, grouped_rel->reltarget,
									  AGG_HASHED, AGGSPLIT_FINAL_DESERIAL, parse->groupClause,
									  (List *) gx->havingQual, &gx->agg_final_costs, groups),
					  fold);
	if (gx->flags & GROUPING_CAN_USE_SORT)
		add_fold_path(grouped_rel, (Path *)
					  create_agg_path(root, grouped_rel,
									  (Path *) create_sort_path(root, grouped_rel, gather,
																root->group_pathkeys, -1.0),
									  grouped_rel->reltarget,
									  AGG_SORTED, AGGSPLIT_FINAL_DESERIAL, parse->groupClause,
									  (List *) gx->havingQual, &gx->agg_final_costs, groups),
					  fold);
}

/*
 * With no join, the fold pays where PostgreSQL's aggregation is dear: a
 * numeric sum or average costs PostgreSQL a numeric addition per row, the
 * fold an integer one.  Aggregates of integers alone stay PostgreSQL's,
 * whose hash aggregation of them is as quick as the fold.
 */
static bool
has_numeric_sum(List *aggs)
{
	ListCell   *lc;

	foreach(lc, aggs)
	{
		Aggref	   *a = lfirst_node(Aggref, lc);

		if (a->aggfnoid == F_SUM_NUMERIC || a->aggfnoid == F_AVG_NUMERIC)
			return true;
	}
	return false;
}

/* Is one of the aggregates count(DISTINCT ...)? */
static bool
has_distinct(List *aggs)
{
	ListCell   *lc;

	foreach(lc, aggs)
		if (lfirst_node(Aggref, lc)->aggdistinct != NIL)
			return true;
	return false;
}

/*
 * The (group, value) pairs that rows of input leave in count(DISTINCT)'s
 * tables, all its aggregates together: each a record of its own when the
 * groups are written out, so that TPC-H q16's 18 000 groups carry 1.2 M
 * pairs into the participants' combine.
 */
static double
distinct_pairs(PlannerInfo *root, const AggShape *shape, double rows)
{
	double		pairs = 0;
	ListCell   *lc;

	foreach(lc, shape->aggs)
	{
		Aggref	   *agg = lfirst_node(Aggref, lc);

		if (agg->aggdistinct != NIL)
			pairs += estimate_groups(root,
									 lappend(list_copy(shape->group_exprs),
											 linitial_node(TargetEntry, agg->args)->expr),
									 rows);
	}
	return pairs;
}

/* rel's plain (or, partial, its parallel) Seq Scan path, if it has one */
static Path *
seq_scan_of(List *paths, bool partial)
{
	ListCell   *lc;

	foreach(lc, paths)
	{
		Path	   *p = lfirst(lc);

		/* the scan's columns are read, not the projection onto GROUP BY's expressions */
		if (IsA(p, ProjectionPath))
			p = ((ProjectionPath *) p)->subpath;
		if (p->pathtype == T_SeqScan && p->param_info == NULL && p->parallel_aware == partial)
			return p;
	}
	return NULL;
}

/* Can the aggregates and group keys be compiled against the scan's columns? */
static bool
aggs_compile_for_scan(const AggShape *shape, Path *scan)
{
	List	   *outer = make_tlist_from_pathtarget(scan->pathtarget);
	List	   *specs;
	List	   *keys;

	return gpuhash_agg_plan_aggs(shape->aggs, outer, NIL, &specs) &&
		gpuhash_agg_plan_group_keys(shape->keys, list_length(shape->group_exprs), outer, NIL, &keys);
}

/*
 * A GpuHashAggregate with no join: the rows of scan (a Seq Scan, or
 * PostgreSQL's own input, pg_input) read in batches and folded, at scan's
 * cost plus the fold's (as make_agg_path charges it) and a row per group.
 */
static CustomPath *
make_scan_agg_path(PlannerInfo *root, RelOptInfo *upper, RelOptInfo *input_rel, Path *scan,
				   PathTarget *target, const AggShape *shape, double groups, bool partial)
{
	CustomPath *cp = new_agg_path(root, upper, scan, target, shape, groups, scan->total_cost);

	cp->custom_paths = list_make1(scan);
	cp->custom_private = list_make4(input_rel, shape->keys, shape->having, makeInteger(partial));
	cp->custom_private = lappend(lappend(cp->custom_private, makeInteger(false)),
								 groups_string(groups));
	cp->custom_private = lappend(cp->custom_private,
								 makeInteger(list_length(shape->group_exprs)));
	cp->methods = &scan_agg_path_methods;
	return cp;
}

/*
 * Does the direct heap reader compile every one of rel's scan quals?  A qual
 * it cannot compile is evaluated by the executor row by row over values the
 * reader formed, as PostgreSQL's own scan would: TPC-H q22's InitPlan, whose
 * SUBSTRING test was such a qual, folded 0.76-0.89x against PostgreSQL's
 * Partial Aggregate (bench/NOTES.md, section 27).
 */
static bool
scan_quals_compile(PlannerInfo *root, RelOptInfo *rel)
{
	List	   *quals;
	List	   *rest = NIL;
	Relation	r;

	/* asked for the serial, parallel and combined folds alike */
	if (quals_memo_rel == rel)
		return quals_memo;
	quals_memo_rel = rel;
	quals_memo = true;
	if ((quals = extract_actual_clauses(rel->baserestrictinfo, false)) == NIL)
		return true;
	r = table_open(planner_rt_fetch(rel->relid, root)->relid, NoLock);
	(void) gpuhash_scan_filter_compile(quals, RelationGetDescr(r), &rest);
	table_close(r, NoLock);
	quals_memo = rest == NIL;
	return quals_memo;
}

/*
 * The query reads one table, with no join: the fold over its Seq Scan, when
 * its filter is all compiled.
 */
static bool
scan_agg_allowed(PlannerInfo *root, RelOptInfo *input_rel, const AggShape *shape)
{
	return gpuhash_enable_scan_aggregate &&
		input_rel->reloptkind == RELOPT_BASEREL && input_rel->rtekind == RTE_RELATION &&
		has_numeric_sum(shape->aggs) && scan_quals_compile(root, input_rel);
}

/*
 * partial, a fold in each participant of a parallel plan, under a Gather
 * and PostgreSQL's Finalize Aggregate.
 */
static void
add_gathered_fold(PlannerInfo *root, RelOptInfo *grouped_rel, RelOptInfo *partial_rel,
				  GroupPathExtraData *gx, const AggShape *shape, CustomPath *partial)
{
	double		rows;
	Path	   *gather;

	if (!partial->path.parallel_safe || partial->path.parallel_workers < 1)
		return;
	rows = partial->path.rows * partial->path.parallel_workers;
	gather = (Path *) create_gather_path(root, partial_rel, &partial->path,
										 partial_rel->reltarget, NULL, &rows);
	add_final_aggs(root, grouped_rel, gather, gx,
				   shape->group_exprs == NIL ? 1 :
				   num_groups(root, shape->group_exprs, rows), partial);
}

static void
add_parallel_scan_agg(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *grouped_rel,
					  RelOptInfo *partial_rel, GroupPathExtraData *gx, const AggShape *shape)
{
	Path	   *scan = seq_scan_of(input_rel->partial_pathlist, true);
	double		groups;

	if (scan == NULL || !scan_agg_allowed(root, input_rel, shape) ||
		!aggs_compile_for_scan(shape, scan) || (groups = groups_of(root, shape, scan->rows)) < 0)
		return;
	add_gathered_fold(root, grouped_rel, partial_rel, gx, shape,
					  make_scan_agg_path(root, partial_rel, input_rel, scan, partial_rel->reltarget,
										 shape, groups, true));
}

/*
 * Is input, the path PostgreSQL chose to aggregate, one for the fold over
 * PostgreSQL's own input: none of gpuhash's paths and no plain Seq Scan
 * (those have folds of their own), but a nested loop over an index, a hash
 * or merge join on keys gpuhash does not hash, an index scan.  Only the
 * aggregation then differs from PostgreSQL's plan over the same path: the
 * input's rows copied into batches and folded in integers, against
 * PostgreSQL's numeric additions and hash table (TPC-H q11's 320 000 joined
 * rows into 300 000 groups of numeric sums, bench/NOTES.md section 59; or
 * count(DISTINCT) hashed, where PostgreSQL sorts), so
 * add_fold_path keeps it only where it costs clearly less.  Not over a
 * Gather: the leader would fold every participant's rows alone, where
 * PostgreSQL's partial aggregation splits them.  The path the fold reads, or
 * NULL: below a projection onto GROUP BY's expressions, as seq_scan_of
 * reads the scan, since the node computes an expression key itself and
 * emits it in a column of its own, not in the input's (a year of a date
 * read from the projection's column came out NULL).
 */
static Path *
pg_input(Path *input, const AggShape *shape)
{
	if (!gpuhash_enable_input_aggregate || input == NULL ||
		!(has_numeric_sum(shape->aggs) || has_distinct(shape->aggs)))
		return NULL;
	if (IsA(input, ProjectionPath))
		input = ((ProjectionPath *) input)->subpath;
	/*
	 * Not over a Gather even for count(DISTINCT), which PostgreSQL too
	 * counts above one: TPC-H q16's leader alone took 797 ms to read the
	 * 1.19 M rows and 586 ms to fold them, slower than PostgreSQL's sorts
	 * in each participant and merge (run 254, bench/NOTES.md section 60).
	 */
	if (input->param_info != NULL || IsA(input, CustomPath) || input->pathtype == T_SeqScan ||
		IsA(input, GatherPath) || IsA(input, GatherMergePath) ||
		!aggs_compile_for_scan(shape, input))
		return NULL;
	return input;
}

/*
 * PostgreSQL's partial input to fold in each participant (pg_input), or
 * NULL.  Not a hash or merge join where gpuhash has a parallel join of the
 * same relations: TPC-H q16's count(DISTINCT) folded over PostgreSQL's
 * Parallel Hash Join ran 0.87 s against 0.72 s over gpuhash's own (run
 * 256), which the costs had put the other way round.
 */
static Path *
pg_partial_input(RelOptInfo *input_rel, const AggShape *shape)
{
	Path	   *input = pg_input(input_rel->partial_pathlist ?
								 linitial(input_rel->partial_pathlist) : NULL, shape);

	if (input != NULL && (IsA(input, HashPath) || IsA(input, MergePath)) &&
		join_paths_of(input_rel, true) != NIL)
		return NULL;
	return input;
}

/*
 * In parallel, the fold over PostgreSQL's own partial input in each
 * participant (new_agg_path sizes its workers); its partial states go to
 * PostgreSQL's Finalize Aggregate above the Gather.
 */
static void
add_parallel_input_agg(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *grouped_rel,
					   RelOptInfo *partial_rel, GroupPathExtraData *gx, const AggShape *shape)
{
	Path	   *input = pg_partial_input(input_rel, shape);
	double		groups;
	int			workers;

	if (input == NULL ||
		(groups = groups_of(root, shape, input->rows * pg_input_share(input, &workers))) < 0)
		return;
	add_gathered_fold(root, grouped_rel, partial_rel, gx, shape,
					  make_scan_agg_path(root, partial_rel, input_rel, input, partial_rel->reltarget,
										 shape, groups, true));
}

/*
 * A participant's groups when every group key is a column of the outer
 * side: no more than the distinct keys of its share of the outer rows, which
 * is split among the participants (the inner side is joined whole).  Group
 * keys unique per outer row, such as q13's c_custkey, would otherwise be
 * counted once per participant, a Gather that many times too large.  -1
 * when the keys are not all the outer side's.
 */
static double
outer_share_groups(PlannerInfo *root, const AggShape *shape, CustomPath *join)
{
	Path	   *outer = linitial(join->custom_paths);

	if (shape->group_exprs == NIL ||
		!bms_is_subset(pull_varnos(root, (Node *) shape->group_exprs), outer->parent->relids))
		return -1;
	return num_groups(root, shape->group_exprs, outer->rows);
}

/*
 * Parallel: Finalize Aggregate over Gather over a partial path per
 * participant.  PostgreSQL 15 offers extensions no hook for partial
 * aggregation paths, so the chain is made here, as PostgreSQL makes its
 * own, over the partial grouping target it prepared.
 */
static void
add_parallel_agg(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *grouped_rel,
				 GroupPathExtraData *gx, List *group_exprs)
{
	RelOptInfo *partial_rel;
	AggShape	shape = {NIL, group_exprs, NIL, NIL};
	List	   *dependents = NIL;
	ListCell   *lc;

	if ((gx->flags & GROUPING_CAN_PARTIAL_AGG) == 0 || !gx->partial_costs_set ||
		!grouped_rel->consider_parallel || input_rel->partial_pathlist == NIL)
		return;
	partial_rel = fetch_upper_rel(root, UPPERREL_PARTIAL_GROUP_AGG, grouped_rel->relids);
	if (partial_rel->reltarget == NULL ||
		(shape.aggs = target_aggrefs(root, partial_rel->reltarget->exprs, group_exprs,
									 &dependents)) == NIL)
		return;
	shape.keys = list_concat_copy(group_exprs, dependents);
	foreach(lc, join_paths_of(input_rel, true))
	{
		CustomPath *join = lfirst(lc);
		double		groups;
		double		share;

		if (!aggs_compile_for(&shape, join) ||
			(groups = groups_of(root, &shape, join->path.rows)) < 0)
			continue;
		share = outer_share_groups(root, &shape, join);
		if (share >= 0)
			groups = Min(groups, share);
		add_gathered_fold(root, grouped_rel, partial_rel, gx, &shape,
						  make_agg_path(root, partial_rel, join, partial_rel->reltarget, &shape,
										groups, true));
	}
	add_parallel_scan_agg(root, input_rel, grouped_rel, partial_rel, gx, &shape);
	add_parallel_input_agg(root, input_rel, grouped_rel, partial_rel, gx, &shape);
}

/* how many participants share a parallel path's rows: PostgreSQL's parallel divisor */
static double
participants_of(const Path *path)
{
	return Max(gpuhash_parallel_divisor(path->parallel_workers), 1.0);
}

/*
 * Writing out one participant's groups and combining them again: each
 * group's record written and read back (their pages at seq_page_cost each
 * way, a tuple's CPU each way), and found again in the combining table;
 * plus a fixed charge for the files and the barrier, so that a handful of
 * groups stays with PostgreSQL's Finalize Aggregate, where passing them
 * through the Gather costs nothing to speak of.
 */
static Cost
combine_cost(const AggShape *shape, double groups)
{
	double		record_bytes = 16 + 8 * list_length(shape->keys) +
		24 * list_length(shape->aggs);
	double		pages = ceil(groups * record_bytes / BLCKSZ);

	return 1000 * cpu_tuple_cost + 2 * pages * seq_page_cost +
		groups * (2 * cpu_tuple_cost +
				  (0.5 * list_length(shape->keys) + list_length(shape->aggs)) *
				  cpu_operator_cost);
}

static void
set_private(List *l, int n, Node *v)
{
	lfirst(list_nth_cell(l, n)) = v;
}

/*
 * cp, a fold of a parallel path emitting final values, made the
 * participants' combined one: each folds its share, writes its groups out
 * by partition, and after a barrier emits the final values of the
 * partitions it combines, HAVING applied (agg_exec.c).  Its rows are one
 * participant's share of the groups left by HAVING; its cost the fold's
 * plus writing out and combining mine, the records of one participant's
 * rows (its groups, and count(DISTINCT)'s pairs).  It is a partial path
 * of grouped_rel, which an outer query level may use as one, and a Gather
 * over it is a path (add_combined_aggs): no Finalize Aggregate, and only
 * final groups pass the Gather.
 */
static void
add_combined(PlannerInfo *root, RelOptInfo *grouped_rel, CustomPath *cp, const AggShape *shape,
			 double total, double mine, int combine_at, int groups_at)
{
	cp->path.parallel_aware = true;
	cp->path.total_cost += combine_cost(shape, mine);
	cp->path.startup_cost = cp->path.total_cost;
	set_private(cp->custom_private, combine_at, (Node *) makeInteger(true));
	set_private(cp->custom_private, groups_at, groups_string(total));
	if (cp->path.parallel_safe)
		add_partial_path(grouped_rel, &cp->path);
}

/*
 * The groups of a parallel input (its rows are one participant's): all of
 * them (*total), one participant's (*mine), and one participant's share of
 * those that HAVING leaves (the result).
 */
static double
combined_groups(PlannerInfo *root, const AggShape *shape, const Path *input, double *total,
				double *mine)
{
	int			workers;
	double		rows = input->rows * pg_input_share(input, &workers);
	double		share = Max(gpuhash_parallel_divisor(workers), 1.0);
	double		sel = shape->having == NIL ? 1.0 :
		clauselist_selectivity(root, shape->having, 0, JOIN_INNER, NULL);

	*total = num_groups(root, shape->group_exprs, rows * share);
	*mine = Min(*total, num_groups(root, shape->group_exprs, rows));
	return clamp_row_est(*total * sel / share);
}

/* The participants' combined fold with no join of its own, over input's rows. */
static void
add_combined_scan_agg(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *grouped_rel,
					  const AggShape *shape, Path *input)
{
	double		total,
				mine,
				out = combined_groups(root, shape, input, &total, &mine);
	int			workers;

	if (total < gpuhash_group_combine_min_groups)
		return;
	add_combined(root, grouped_rel,
				 make_scan_agg_path(root, grouped_rel, input_rel, input, grouped_rel->reltarget,
									shape, out, false),
				 shape, total,
				 mine + distinct_pairs(root, shape, input->rows * pg_input_share(input, &workers)),
				 SCAN_PRIV_COMBINE, SCAN_PRIV_GROUPS);
}

/*
 * Parallel plans whose participants combine the groups themselves, over
 * each parallel GpuHashJoin path of the top join, the table's Parallel Seq
 * Scan and PostgreSQL's own partial input: with GROUP BY only (one group
 * per participant passes a Gather for nothing).
 */
static void
add_combined_aggs(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *grouped_rel,
				  const AggShape *shape)
{
	ListCell   *lc;
	Path	   *scan;
	double		total,
				mine,
				out;

	if (!gpuhash_enable_group_combine || shape->group_exprs == NIL ||
		!grouped_rel->consider_parallel || input_rel->partial_pathlist == NIL)
		return;
	foreach(lc, join_paths_of(input_rel, true))
	{
		CustomPath *join = lfirst(lc);

		if (!join->path.parallel_aware || !aggs_compile_for(shape, join))
			continue;
		out = combined_groups(root, shape, &join->path, &total, &mine);
		/*
		 * Fewer groups stay with a Finalize Aggregate: a partition's file a
		 * participant, made and removed, took 50-80 ms in all for TPC-H q08's
		 * handful of groups (run 164), more than passing their partial states
		 * through the Gather, and within the 1 % that add_path takes for a tie.
		 */
		if (total < gpuhash_group_combine_min_groups)
			continue;
		add_combined(root, grouped_rel,
					 make_agg_path(root, grouped_rel, join, grouped_rel->reltarget, shape, out,
								   false),
					 shape, total, mine + distinct_pairs(root, shape, join->path.rows),
					 AGG_PRIV_COMBINE, AGG_PRIV_GROUPS);
	}
	scan = seq_scan_of(input_rel->partial_pathlist, true);
	if (scan != NULL && scan_agg_allowed(root, input_rel, shape) && aggs_compile_for_scan(shape, scan))
		add_combined_scan_agg(root, input_rel, grouped_rel, shape, scan);
	/* PostgreSQL's own partial input (pg_input), such as TPC-H q11's nested loop over an index */
	scan = pg_partial_input(input_rel, shape);
	if (scan != NULL)
		add_combined_scan_agg(root, input_rel, grouped_rel, shape, scan);

	/*
	 * A Gather over each that add_partial_path kept, made only now: it frees
	 * the partial paths it rejects, and those a later one displaces.
	 */
	foreach(lc, grouped_rel->partial_pathlist)
	{
		Path	   *p = lfirst(lc);
		double		rows = p->rows * participants_of(p);

		if (!IsA(p, CustomPath) || (((CustomPath *) p)->methods != &gpu_agg_path_methods &&
									((CustomPath *) p)->methods != &scan_agg_path_methods))
			continue;
		add_fold_path(grouped_rel, (Path *) create_gather_path(root, grouped_rel, p,
															   grouped_rel->reltarget, NULL,
															   &rows),
					  (CustomPath *) p);
	}
}

/*
 * Serially, the fold over PostgreSQL's own input (pg_input).  Unlike the
 * folds over gpuhash's joins it is planned past hash_mem too, where
 * PostgreSQL's hash aggregation would spill as well: the node writes its
 * groups out by partition and combines them again, at combine_cost.
 */
static void
add_input_agg(PlannerInfo *root, RelOptInfo *input_rel, RelOptInfo *grouped_rel,
			  const AggShape *shape)
{
	Path	   *input = pg_input(input_rel->cheapest_total_path, shape);
	CustomPath *cp;
	double		groups;

	if (input == NULL)
		return;
	groups = all_groups(root, shape, input->rows);
	cp = make_scan_agg_path(root, grouped_rel, input_rel, input, grouped_rel->reltarget, shape,
							groups, false);
	if (!groups_fit(shape, groups))
	{
		cp->path.total_cost += combine_cost(shape, groups);
		cp->path.startup_cost = cp->path.total_cost;
	}
	add_fold_path(grouped_rel, &cp->path, cp);
}

static void
gpu_agg_upper_paths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
					RelOptInfo *output_rel, void *extra)
{
	Query	   *parse = root->parse;
	GroupPathExtraData *gx = extra;
	AggShape	shape;
	List	   *dependents = NIL;
	ListCell   *lc;

	if (prev_upper_paths_hook)
		prev_upper_paths_hook(root, stage, input_rel, output_rel, extra);

	gpuhash_settings_ready();
	if (stage == UPPERREL_GROUP_AGG)
		gpuhash_index_probe_group_paths(root, input_rel, output_rel, gx);
	if (!gpuhash_enable_join || !gpuhash_enable_aggregate || stage != UPPERREL_GROUP_AGG)
		return;
	n_groups_memo = n_shape_memo = 0;
	dependent_memo = NIL;
	quals_memo_rel = NULL;
	pg_best_cost = DBL_MAX;
	foreach(lc, output_rel->pathlist)
		pg_best_cost = Min(pg_best_cost, ((Path *) lfirst(lc))->total_cost);
	if (parse->groupingSets != NIL || parse->hasTargetSRFs ||
		!parse->hasAggs || gx == NULL || gx->patype != PARTITIONWISE_AGGREGATE_NONE)
		return;
	shape.group_exprs = get_sortgrouplist_exprs(parse->groupClause, gx->targetList);
	year_grouping = groups_by_year(shape.group_exprs);

	add_parallel_agg(root, input_rel, output_rel, gx, shape.group_exprs);

	/* serial: the node emits the result, and filters it by HAVING */
	shape.having = (List *) gx->havingQual;
	shape.aggs = target_aggrefs(root, list_make2(output_rel->reltarget->exprs, shape.having),
								shape.group_exprs, &dependents);
	if (shape.aggs == NIL)
		return;
	shape.keys = list_concat_copy(shape.group_exprs, dependents);
	/*
	 * count(DISTINCT) is folded grouped, one key short of the most (its
	 * pairs' records take a bit of the NULL mask); in parallel only where
	 * the participants combine the groups, since PostgreSQL's Finalize
	 * Aggregate has no partial state of it.
	 */
	if (has_distinct(shape.aggs) &&
		(shape.group_exprs == NIL || list_length(shape.keys) > GPUHASH_DISTINCT_MAX_KEYS))
		return;
	add_combined_aggs(root, input_rel, output_rel, &shape);
	foreach(lc, join_paths_of(input_rel, false))
	{
		CustomPath *join = lfirst(lc);
		double		groups;

		if (aggs_compile_for(&shape, join) &&
			(groups = groups_of(root, &shape, join->path.rows)) >= 0)
		{
			CustomPath *cp = make_agg_path(root, output_rel, join, output_rel->reltarget,
										   &shape, groups, false);

			add_fold_path(output_rel, &cp->path, cp);
		}
	}
	if (scan_agg_allowed(root, input_rel, &shape))
	{
		Path	   *scan = seq_scan_of(input_rel->pathlist, false);
		double		groups;

		if (scan != NULL && aggs_compile_for_scan(&shape, scan) &&
			(groups = groups_of(root, &shape, scan->rows)) >= 0)
			add_path(output_rel, &make_scan_agg_path(root, output_rel, input_rel, scan,
													 output_rel->reltarget, &shape, groups,
													 false)->path);
	}
	add_input_agg(root, input_rel, output_rel, &shape);
}

/* The plan of a GpuHashAggregate with no join: its child is the Seq Scan, or PostgreSQL's input. */
static Plan *
plan_scan_agg(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			  List *tlist, List *clauses, List *custom_plans)
{
	RelOptInfo *input_rel = list_nth(best_path->custom_private, SCAN_PRIV_INPUT);
	List	   *group_exprs = list_nth(best_path->custom_private, SCAN_PRIV_GROUP_EXPRS);
	int			ngroup = intVal(list_nth(best_path->custom_private, SCAN_PRIV_NGROUP));
	List	   *having = list_nth(best_path->custom_private, SCAN_PRIV_HAVING);
	Plan	   *outer = linitial(custom_plans);
	CustomScan *cscan = makeNode(CustomScan);
	List	   *aggs = target_aggrefs(root, list_make2(tlist, having), group_exprs, NULL);
	List	   *scan_tlist = NIL;
	List	   *specs;
	List	   *keys;
	AttrNumber	resno = 1;
	ListCell   *lc;

	if (aggs == NIL || !gpuhash_agg_plan_aggs(aggs, outer->targetlist, NIL, &specs) ||
		!gpuhash_agg_plan_group_keys(group_exprs, ngroup, outer->targetlist, NIL, &keys))
		elog(ERROR, "gpuhash: aggregates of a GpuHashAggregate path cannot be planned");
	/* the scan tuple: the scan's columns, then the aggregates' values */
	foreach(lc, outer->targetlist)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(copyObject(lfirst_node(TargetEntry, lc)->expr),
											 resno++, NULL, false));
	foreach(lc, aggs)
		scan_tlist = lappend(scan_tlist, makeTargetEntry(copyObject(lfirst(lc)), resno++,
														 NULL, false));
	scan_tlist = gpuhash_agg_plan_key_columns(keys, group_exprs, list_length(outer->targetlist),
											  scan_tlist);
	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = copyObject(having);
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = NIL;
	cscan->custom_private = list_make4(specs, keys,
									   list_nth(best_path->custom_private, SCAN_PRIV_COMBINE),
									   list_nth(best_path->custom_private, SCAN_PRIV_GROUPS));
	/* the workers planned: the node is not parallel-aware, so nothing else tells them */
	cscan->custom_private = lappend(cscan->custom_private,
									makeInteger(best_path->path.parallel_workers));
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = bms_copy(input_rel->relids);
	cscan->methods = &gpu_agg_scan_methods;
	return &cscan->scan.plan;
}

static Plan *
plan_gpu_agg(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			 List *tlist, List *clauses, List *custom_plans)
{
	RelOptInfo *joinrel = list_nth(best_path->custom_private, AGG_PRIV_JOINREL);
	List	   *group_exprs = list_nth(best_path->custom_private, AGG_PRIV_GROUP_EXPRS);
	int			ngroup = intVal(list_nth(best_path->custom_private, AGG_PRIV_NGROUP));
	List	   *having = list_nth(best_path->custom_private, AGG_PRIV_HAVING);
	List	   *otherquals;
	CustomScan *cscan;
	List	   *aggs = target_aggrefs(root, list_make2(tlist, having), group_exprs, NULL);
	List	   *specs;
	List	   *keys;
	List	   *outer_tlist;
	List	   *inner_tlist;
	AttrNumber	resno;
	ListCell   *lc;

	cscan = gpuhash_join_plan_scan(root, joinrel->relids, best_path, tlist, custom_plans,
								   &otherquals);
	outer_tlist = ((Plan *) linitial(custom_plans))->targetlist;
	inner_tlist = ((Plan *) lsecond(custom_plans))->targetlist;
	if (aggs == NIL ||
		!gpuhash_agg_plan_aggs(aggs, outer_tlist, inner_tlist, &specs) ||
		!gpuhash_agg_plan_group_keys(group_exprs, ngroup, outer_tlist, inner_tlist, &keys))
		elog(ERROR, "gpuhash: aggregates of a GpuHashAggregate path cannot be planned");

	/* the scan tuple: the joined columns, then the aggregates' values */
	resno = list_length(cscan->custom_scan_tlist) + 1;
	foreach(lc, aggs)
		cscan->custom_scan_tlist = lappend(cscan->custom_scan_tlist,
										   makeTargetEntry(copyObject(lfirst(lc)), resno++,
														   NULL, false));
	cscan->custom_scan_tlist = gpuhash_agg_plan_key_columns(keys, group_exprs,
															list_length(outer_tlist),
															cscan->custom_scan_tlist);
	/* an anti join's filter applies to each row before it is folded */
	cscan->custom_exprs = list_concat(cscan->custom_exprs, otherquals);
	cscan->custom_private = lappend(lappend(cscan->custom_private, specs),
									makeInteger(list_length(otherquals)));
	cscan->custom_private = lappend(cscan->custom_private, keys);
	cscan->custom_private = lappend(lappend(cscan->custom_private,
											list_nth(best_path->custom_private, AGG_PRIV_COMBINE)),
									list_nth(best_path->custom_private, AGG_PRIV_GROUPS));
	/* HAVING, on each group the node emits */
	cscan->scan.plan.qual = copyObject(having);
	cscan->methods = &gpu_agg_scan_methods;
	return &cscan->scan.plan;
}

void
gpuhash_agg_init(void)
{
	RegisterCustomScanMethods(&gpu_agg_scan_methods);
	prev_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = gpu_agg_upper_paths;
}
