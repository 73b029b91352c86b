/*
 * join_path.c - the planner side of GpuHashJoin: a custom join path for
 * inner, left, semi and anti equijoins on an integer or date key, or two 4-byte
 * keys packed into one (HashKeys), offered through set_join_pathlist_hook
 * and turned into a CustomScan plan.  A key is a column of its side, or an
 * expression over that side's columns, which the side's plan is then asked
 * to return as one more column.
 *
 * The path reads the inner relation whole and hashes it (on the GPU, or the
 * CPU twin), then streams the outer relation through it in batches.  In a
 * parallel plan the outer side is split among the workers and all of them
 * share one build (join_parallel.c).  Its cost is its inputs' costs, a
 * fixed startup cost, a cost per build and per probe row, a correction per
 * input row for how the node gets it (input_row_cost), and
 * a session's first GPU context, so that it loses to an index nested loop
 * when few outer rows need few lookups and to PostgreSQL's hash join over
 * rows the node would only copy (bench/NOTES.md, sections 14 and 15).
 */
#include "gpuhash_pg.h"

#include <float.h>

#include "catalog/pg_opfamily_d.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "optimizer/planner.h"
#include "optimizer/restrictinfo.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "utils/rel.h"
#include "utils/selfuncs.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class.h"
#include "parser/parsetree.h"

#include "ght_keyfilter.h"
#include "index_probe.h"
#include "join_node.h"
#include "late_quals.h"
#include "pair_memo.h"
#include "read_cost.h"
#include "semi_estimate.h"

static set_join_pathlist_hook_type prev_join_pathlist_hook = NULL;
static planner_hook_type prev_planner_hook = NULL;

/*
 * Copies of the GpuHashJoin paths made while planning the current query.
 * add_path keeps a join path only when it is the cheapest join there, and
 * frees it otherwise; but a join that PostgreSQL's hash join beats may
 * still win once GpuHashAggregate folds the aggregation above it, which
 * only create_upper_paths_hook can tell.  The copies let it see them.
 */
static List *made_join_paths = NIL;

/*
 * The cheapest GPU path among them of each relation, serial and partial,
 * for gpu_join_aside: scanning made_join_paths for it on each join was
 * 3 % of planning TPC-H q08, whose 8 relations make hundreds of paths.
 */
typedef struct GpuPathsOfRel
{
	RelOptInfo *rel;			/* the key */
	Path	   *cheapest_gpu[2];	/* [parallel_aware] */
} GpuPathsOfRel;

static HTAB *gpu_paths_by_rel = NULL;

/*
 * Joins whose outer scan's subquery filter is left to the join above them
 * (late_quals.c): not paths of their relation, which they do not filter
 * fully, but inner sides that a join above may take, testing the filter
 * on its own pairs.  Made in this planning, like made_join_paths.
 */
static List *deferred_paths = NIL;

/*
 * The clauses a join path tests for an outer scan's filter, or for the
 * join below it on its inner side (late_quals.c).
 */
typedef struct LateQuals
{
	List	   *outer;			/* RestrictInfos taken out of the outer scan's filter */
	bool		here;			/* tested by this join; else left to the join above */
	List	   *inner;			/* clauses the inner side left to this join */
} LateQuals;

/* The device a GpuHashJoin path was made for (the fifth of its custom_private). */
static inline ght_device
path_device(const CustomPath *cp)
{
	return intVal(list_nth(cp->custom_private, 4));
}

static void
remember_join_path(CustomPath *cp)
{
	Path	   *p = &cp->path;
	GpuPathsOfRel *e;
	bool		found;

	made_join_paths = lappend(made_join_paths, cp);
	if (path_device(cp) != GHT_GPU)
		return;
	if (gpu_paths_by_rel == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(RelOptInfo *);
		ctl.entrysize = sizeof(GpuPathsOfRel);
		ctl.hcxt = CurrentMemoryContext;
		gpu_paths_by_rel = hash_create("gpuhash paths by relation", 64, &ctl,
									   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	e = hash_search(gpu_paths_by_rel, &p->parent, HASH_ENTER, &found);
	if (!found)
		e->cheapest_gpu[0] = e->cheapest_gpu[1] = NULL;
	if (e->cheapest_gpu[p->parallel_aware] == NULL ||
		p->total_cost < e->cheapest_gpu[p->parallel_aware]->total_cost)
		e->cheapest_gpu[p->parallel_aware] = p;
}

static Plan *plan_gpu_join(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
						   List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods gpu_join_path_methods = {
	.CustomName = GPUHASH_JOIN_NAME,
	.PlanCustomPath = plan_gpu_join,
};

static const CustomScanMethods gpu_join_scan_methods = {
	.CustomName = GPUHASH_JOIN_NAME,
	.CreateCustomScanState = gpuhash_join_create_state,
};

/* One equality the node hashes on: its clause and the key of each side. */
typedef struct HashClause
{
	RestrictInfo *rinfo;
	Expr	   *outer_expr;
	Expr	   *inner_expr;
} HashClause;

/*
 * What the node hashes on: one clause, or two.  Two whose keys are 4 bytes
 * wide on both sides (integer, smallint or date) are packed into one 8-byte
 * key that two rows share exactly when both values are equal.  Two of which
 * one is a bigint would need 12 bytes or more: one of them is hashed alone
 * where it has few rows a value, and otherwise their values are mixed into
 * an 8-byte key (gpuhash_mix_keys), which equal values share but unequal
 * ones may too, so both clauses are tested again on each pair.  Hashing a
 * column of few values alone would leave a probe row to walk every build
 * row of its value (a semi join over a key of three values ran for
 * minutes).  Clauses beyond the second are tested on each pair like any
 * other join clause.
 */
#define GPUHASH_MAX_HASH_CLAUSES 2

/* a pair a semi or anti join walks, in operators (cost_gpu_join) */
#define SEMI_PAIR_COST_SHARE 0.1

/*
 * A key filter is planned where the join is expected to keep under this
 * share of its outer rows, and its table to have at most so many keys (the
 * filter then fits GHT_KEYFILTER_MAX_WORDS at full precision).  Where the
 * key is tested before the row is taken apart (early_miss) a dropped row
 * saves more, and a filter that keeps up to half its rows still paid: W8's
 * bottom join, keeping 40 %, read 15 % faster with it (bench/NOTES.md
 * section 41).
 */
#define KEY_FILTER_MAX_MATCH 0.25
#define KEY_FILTER_EARLY_MAX_MATCH 0.5
#define KEY_FILTER_MAX_BUILD_ROWS (GHT_KEYFILTER_MAX_WORDS * 64 / GHT_KEYFILTER_BITS_PER_KEY)

typedef struct HashKeys
{
	int			n;
	HashClause	c[GPUHASH_MAX_HASH_CLAUSES];
	bool		mixed;			/* two clauses, not both narrow: tested again */
} HashKeys;

static bool
is_key_expr(Expr *e, RelOptInfo *rel)
{
	if (!gpuhash_is_join_key_type(exprType((Node *) e)))
		return false;
	/* a column the child will return, so that its value is at hand */
	if (IsA(e, Var))
		return list_member(rel->reltarget->exprs, e);

	/*
	 * An expression the child can compute as one more output column: over
	 * that side's columns only (the caller checked its relids), and, like
	 * PostgreSQL's own hash keys, without volatile functions.  Subplans and
	 * placeholders are left to PostgreSQL's joins.
	 */
	return !contain_volatile_functions((Node *) e) && !contain_subplans((Node *) e) &&
		!gpuhash_has_placeholder((Node *) e, NULL) && contain_var_clause((Node *) e);
}

/* The cost of computing a key that is not a plain column, per row. */
static Cost
key_cost(PlannerInfo *root, Expr *e)
{
	QualCost	qc;

	if (IsA(e, Var))
		return 0;
	cost_qual_eval_node(&qc, (Node *) e, root);
	return qc.per_tuple;
}

/*
 * The cost per row of getting a side's hash key: its expressions', plus,
 * for a key packed from two columns, what PostgreSQL's hash join charges
 * for hashing one more clause (cpu_operator_cost a row on either side, in
 * cost_hashjoin): the node reads and packs one more value a row, and
 * charging alike keeps the two comparable where only that work differs.
 */
static Cost
keys_cost(PlannerInfo *root, const HashKeys *keys, bool outer)
{
	Cost		c = (keys->n - 1) * cpu_operator_cost;

	for (int i = 0; i < keys->n; i++)
		c += key_cost(root, outer ? keys->c[i].outer_expr : keys->c[i].inner_expr);
	return c;
}

/* Are all of a side's keys plain columns? */
static bool
keys_are_columns(const HashKeys *keys, bool outer)
{
	for (int i = 0; i < keys->n; i++)
		if (!IsA(outer ? keys->c[i].outer_expr : keys->c[i].inner_expr, Var))
			return false;
	return true;
}

static List *
hash_rinfos(const HashKeys *keys)
{
	List	   *l = NIL;

	for (int i = 0; i < keys->n; i++)
		l = lappend(l, keys->c[i].rinfo);
	return l;
}

/*
 * Is op an equality whose operands hash by their integer values?  Any
 * equality of the integer operator family (int2, int4 and int8 in any mix,
 * compared by value), and date = date.  The date family's cross-type
 * equalities (date = timestamp) convert their operands and are not.
 */
static bool
is_hashable_op(OpExpr *op)
{
	if (list_length(op->args) != 2)
		return false;
	if (get_op_opfamily_strategy(op->opno, INTEGER_BTREE_FAM_OID) == BTEqualStrategyNumber)
		return true;
	return get_opcode(op->opno) == F_DATE_EQ &&
		exprType(linitial(op->args)) == DATEOID && exprType(lsecond(op->args)) == DATEOID;
}

static bool
is_narrow_clause(const HashClause *hc)
{
	return gpuhash_key_width_for(exprType((Node *) hc->outer_expr)) == 4 &&
		gpuhash_key_width_for(exprType((Node *) hc->inner_expr)) == 4;
}

/*
 * Are a plan's two keys mixed rather than packed (HashKeys)?  As the
 * executor tells it from the keys' types (join_exec.c).
 */
static bool
keys_mixed(List *outer_exprs, List *inner_exprs)
{
	ListCell   *lc;

	if (list_length(outer_exprs) < 2)
		return false;
	foreach(lc, list_concat_copy(outer_exprs, inner_exprs))
		if (exprType(lfirst(lc)) == INT8OID)
			return true;
	return false;
}

/*
 * Whether a join clause filters the join's output rows rather than
 * deciding which pairs match: a left or anti join's pushed-down clause.
 */
static bool
filters_output(JoinType jointype, RestrictInfo *ri, Relids joinrelids)
{
	return (jointype == JOIN_ANTI || jointype == JOIN_LEFT) &&
		RINFO_IS_PUSHED_DOWN(ri, joinrelids);
}

/*
 * Two clauses are mixed only where hashing one alone would leave a probe
 * row more build rows a key than this to test the other on: mixing builds a
 * table of the pairs and tests both clauses on each match, which cost a
 * bigint-and-integer join of 4 rows a first key 20 % more on the
 * development machine (bench/NOTES.md section 40), where a first key of
 * three values had cost minutes.
 */
#define MIX_MIN_ROWS_PER_VALUE 16

/* The inner side's rows per distinct value of e, as PostgreSQL estimates them. */
static double
rows_per_value(PlannerInfo *root, Expr *e, RelOptInfo *innerrel)
{
	double		nd = estimate_num_groups(root, list_make1(e), innerrel->rows, NULL, NULL);

	return innerrel->rows / Max(nd, 1.0);
}

/*
 * The clauses to hash on (HashKeys): the first two narrow ones of the
 * restriction list when it has two; else, of its first two hashable ones,
 * the first whose inner key has at most MIX_MIN_ROWS_PER_VALUE rows a
 * value, or both mixed where neither has; else its one hashable clause.  A
 * hashable clause is an integer (or date) equality between a key of each
 * side.  For left and anti joins only join clauses count: pushed-down ones
 * filter the result instead, null-extended rows included.  (A semi join,
 * like an inner join, treats all its clauses alike.)
 */
static bool
find_hash_clauses(PlannerInfo *root, List *restrictlist, RelOptInfo *joinrel, RelOptInfo *outerrel,
				  RelOptInfo *innerrel, JoinType jointype, HashKeys *keys)
{
	ListCell   *lc;
	HashClause	first = {0};
	HashClause	second = {0};
	HashClause	hc;

	keys->n = 0;
	keys->mixed = false;
	foreach(lc, restrictlist)
	{
		RestrictInfo *rinfo = lfirst_node(RestrictInfo, lc);
		OpExpr	   *op;
		Expr	   *l,
				   *r;

		if (filters_output(jointype, rinfo, joinrel->relids))
			continue;
		if (!rinfo->can_join || !is_opclause(rinfo->clause))
			continue;
		op = (OpExpr *) rinfo->clause;
		if (!is_hashable_op(op))
			continue;
		l = linitial(op->args);
		r = lsecond(op->args);
		if (bms_is_subset(rinfo->left_relids, outerrel->relids) &&
			bms_is_subset(rinfo->right_relids, innerrel->relids))
		{
			hc.outer_expr = l;
			hc.inner_expr = r;
		}
		else if (bms_is_subset(rinfo->left_relids, innerrel->relids) &&
				 bms_is_subset(rinfo->right_relids, outerrel->relids))
		{
			hc.outer_expr = r;
			hc.inner_expr = l;
		}
		else
			continue;
		if (!is_key_expr(hc.outer_expr, outerrel) || !is_key_expr(hc.inner_expr, innerrel))
			continue;
		hc.rinfo = rinfo;
		if (first.rinfo == NULL)
			first = hc;
		else if (second.rinfo == NULL)
			second = hc;
		if (is_narrow_clause(&hc))
		{
			keys->c[keys->n++] = hc;
			if (keys->n == GPUHASH_MAX_HASH_CLAUSES)
				return true;
		}
	}
	/*
	 * Fewer than two narrow clauses: hash the one, or of two the first
	 * whose inner key has few rows a value, or else mix the two.
	 */
	keys->n = first.rinfo == NULL ? 0 : 1;
	keys->c[0] = first;
	if (second.rinfo != NULL &&
		rows_per_value(root, first.inner_expr, innerrel) > MIX_MIN_ROWS_PER_VALUE)
	{
		if (rows_per_value(root, second.inner_expr, innerrel) <= MIX_MIN_ROWS_PER_VALUE)
			keys->c[0] = second;
		else
		{
			keys->c[1] = second;
			keys->n = 2;
			keys->mixed = true;
		}
	}
	return keys->n > 0;
}

/*
 * An outer side that is a GpuHashJoin the node reads as batches of pairs or
 * kept rows (join_chain.c): an inner or left join with no other join
 * clauses, or a semi or anti join whose other clauses are its own (they
 * decide what it keeps as it probes), not filters pushed down to it.  Its
 * rows are not formed as tuples, so what that join was charged for emitting
 * them is given back, and a copy into the batch charged instead; *cost is
 * the sum, per row.  What it was charged per row is cpu_tuple_cost, or less
 * when its inner side is split (cost_gpu_join): giving back the full amount
 * there made such a join look cheaper the more rows it made, and the planner
 * put the least selective dimension of a star first (run 55).  Only where
 * that join makes no more rows than its own outer side reads, as a lookup of
 * a dimension by its key does, and a semi or anti join always does:
 * crediting an expanding join (TPC-H q05's customer by nation against
 * supplier, billions of pairs) made intermediate results of that size look
 * free, and the plans were disasters (bench/NOTES.md section 22).
 */
static bool
chained_lookup(Path *p, double *cost)
{
	CustomPath *cp = (CustomPath *) p;
	Path	   *inner;
	List	   *priv;
	ListCell   *lc;
	JoinType	jointype;

	if (!gpuhash_chain_batches || !gpuhash_is_join_path(p))
		return false;
	priv = cp->custom_private;
	inner = lsecond(cp->custom_paths);
	jointype = intVal(lfourth(priv));
	if (jointype == JOIN_SEMI || jointype == JOIN_ANTI)
	{
		foreach(lc, (List *) list_nth(priv, 5))
			if (RINFO_IS_PUSHED_DOWN(lfirst_node(RestrictInfo, lc), p->parent->relids))
				return false;
	}
	else if (jointype == JOIN_INNER || jointype == JOIN_LEFT)
	{
		if (p->rows > ((Path *) linitial(cp->custom_paths))->rows)
			return false;
		foreach(lc, (List *) list_nth(priv, 5))
			if (!list_member_ptr(linitial(priv), lfirst(lc)))
				return false;
	}
	else
		return false;
	*cost = cpu_operator_cost - cpu_tuple_cost /
		(intVal(list_nth(priv, 6)) ? gpuhash_parallel_divisor(inner->parallel_workers) : 1.0);
	return true;
}

/*
 * The node reads a plain heap scan whose key is a column straight from the
 * heap (heap_reader.c): its rows never pass through the Seq Scan node, so
 * the executor's cost per row, which the scan's path counts, is not paid.
 * Any other input's rows are copied into the node's batches as they arrive,
 * which costs what PostgreSQL charges a Material node for keeping a row.
 * A filtered scan is read directly too, and pays no copy here: what its
 * reader saves depends on its filter (gpuhash_read_credit).  Credited per
 * row like an unfiltered one, the plans that won (TPC-H q03 and q21) ran
 * 0.95x-1.05x and 1.00x of PostgreSQL's on the H100 host, before filters
 * were compiled (bench/NOTES.md section 20).
 */
static double
input_row_cost(PlannerInfo *root, Path *p, bool key_columns, bool outer)
{
	double		chained;

	if (outer && key_columns && chained_lookup(p, &chained))
		return chained;
	if (!gpuhash_plain_heap_scan(root, p))
		return 2.0 * cpu_operator_cost;
	if (gpuhash_direct_scan && key_columns && p->parent->baserestrictinfo == NIL)
		return -cpu_tuple_cost;
	return 0.0;				/* filtered, or the scan projects the key */
}

/*
 * The selectivity of the hashed clauses, as PostgreSQL's hash join costs it
 * (per clause, with inner-join semantics between the two sides), but on
 * copies of their RestrictInfos: clause_selectivity caches its answer in the
 * RestrictInfo, and PostgreSQL's own costing of other paths would then read
 * a value made here first.  A copy still reads what PostgreSQL cached before.
 * Loading gpuhash must not change the estimates of plans that do not use it.
 */
static Selectivity
hash_selectivity(PlannerInfo *root, const HashKeys *keys, Path *outer, Path *inner)
{
	SpecialJoinInfo *sjinfo = makeNode(SpecialJoinInfo);
	Selectivity sel = 1.0;

	sjinfo->min_lefthand = sjinfo->syn_lefthand = outer->parent->relids;
	sjinfo->min_righthand = sjinfo->syn_righthand = inner->parent->relids;
	sjinfo->jointype = JOIN_INNER;
	for (int i = 0; i < keys->n; i++)
	{
		RestrictInfo *copy = makeNode(RestrictInfo);

		memcpy(copy, keys->c[i].rinfo, sizeof(RestrictInfo));
		sel *= clause_selectivity(root, (Node *) copy, 0, JOIN_INNER, sjinfo);
	}
	return sel;
}

/*
 * The share of the outer side's rows (of its relation as a whole, so that a
 * partial path's shares do not matter) that find a match: the planner's
 * estimate of the join's rows against its outer side's.  A right semi or
 * anti join's rows are its build side's, so there it is the share of probe
 * keys among the build side's, by the hashed clauses' selectivity.
 */
static double
outer_match_share(RelOptInfo *joinrel, JoinType jointype, Path *outer, Path *inner,
				  Selectivity hash_sel)
{
	if (joinrel == NULL || outer->parent->rows <= 0)
		return 1.0;
	if (GPUHASH_JOIN_IS_RIGHT(jointype))
		return Min(1.0, inner->parent->rows * hash_sel);
	return joinrel->rows / outer->parent->rows;
}

/*
 * Should the outer side's rows be tested against a Bloom filter of the
 * table's keys as they are read (heap_reader.c)?  Only an inner or semi join
 * drops the rows it refuses, and the test pays only where most rows have no
 * match (outer_match_share), and where the filter stays in the caches: a
 * small table.  The reader also switches it off when its first rows say
 * otherwise.  max_match is KEY_FILTER_EARLY_MAX_MATCH where the key is tested
 * before the row is taken apart (early_miss), as a miss then saves the most.
 */
static bool
key_filter_fits(JoinType jointype, double match_share, double build_rows, double max_match)
{
	if (!gpuhash_key_filter ||
		(jointype != JOIN_INNER && jointype != JOIN_SEMI && !GPUHASH_JOIN_IS_RIGHT(jointype)) ||
		build_rows > KEY_FILTER_MAX_BUILD_ROWS)
		return false;
	return match_share < max_match;
}

/*
 * The rows of the table the join builds: a split inner side's path gives
 * one participant's share of them.
 */
static double
table_rows(Path *inner, bool inner_split)
{
	return inner_split ? inner->rows * gpuhash_parallel_divisor(inner->parallel_workers) :
		inner->rows;
}

/* What the join charges an outer row for copying it into a batch and probing. */
static Cost
outer_row_cost(PlannerInfo *root, const HashKeys *keys, Path *outer)
{
	return gpuhash_join_probe_row_cost + keys_cost(root, keys, true) +
		input_row_cost(root, outer, keys_are_columns(keys, true), true);
}

/*
 * The share of the outer side's rows that a planned key filter drops before
 * they are taken apart (gpuhash_read_credit), by the planner's estimates of
 * the join's rows against its outer side's: where the outer side is read
 * directly and its key can be tested first; else 0.  A test after the
 * scan's filter saves what a copy and a probe cost, about what the test
 * costs by PostgreSQL's measures, and is not counted.  Measured on TPC-H
 * q03 at SF 10 (bench/NOTES.md section 31): reading lineitem took 960 ms
 * without the filter, 760 ms testing after the scan's filter and 412 ms
 * testing first.
 */
static double
early_miss(PlannerInfo *root, JoinType jointype, Path *outer, const HashKeys *keys,
		   double match_share, double build_rows)
{
	List	   *vars = NIL;

	if (!gpuhash_direct_scan || !keys_are_columns(keys, true) ||
		!key_filter_fits(jointype, match_share, build_rows, KEY_FILTER_EARLY_MAX_MATCH) ||
		!gpuhash_plain_heap_scan(root, outer))
		return 0.0;
	for (int i = 0; i < keys->n; i++)
		vars = lappend(vars, keys->c[i].outer_expr);
	if (!gpuhash_key_leads_row(root, outer, vars))
		return 0.0;
	return 1.0 - match_share;
}

/*
 * What reading the inputs directly saves (gpuhash_read_credit): the rows a
 * key filter drops are not copied into a batch or probed either
 * (row_cost, what the join charges an outer row for those).
 */
static Cost
outer_read_credit(PlannerInfo *root, Path *outer, double miss, Cost row_cost)
{
	/*
	 * An unfiltered side read directly is already charged less than a
	 * tuple a row (input_row_cost), so row_cost may be negative; the sum
	 * then says that dropping a row saves about what testing it costs.
	 */
	return Max(gpuhash_read_credit(root, outer, miss) + outer->rows * miss * row_cost, 0.0);
}

/*
 * Whether a GpuHashJoin (on the GPU, or with any_device on either) lies in
 * path's tree.  Only the shapes a join's input takes are walked: a join, a
 * Gather, or a node over one input.
 */
bool
gpuhash_join_below(Path *path, bool any_device)
{
	check_stack_depth();
	if (path == NULL)
		return false;
	if (gpuhash_is_join_path(path))
	{
		CustomPath *cp = (CustomPath *) path;
		ListCell   *lc;

		if (any_device || path_device(cp) == GHT_GPU)
			return true;
		foreach(lc, cp->custom_paths)
			if (gpuhash_join_below(lfirst(lc), any_device))
				return true;
		return false;
	}
	switch (nodeTag(path))
	{
		case T_NestPath:
		case T_MergePath:
		case T_HashPath:
			return gpuhash_join_below(((JoinPath *) path)->outerjoinpath, any_device) ||
				gpuhash_join_below(((JoinPath *) path)->innerjoinpath, any_device);
		case T_GatherPath:
			return gpuhash_join_below(((GatherPath *) path)->subpath, any_device);
		case T_GatherMergePath:
			return gpuhash_join_below(((GatherMergePath *) path)->subpath, any_device);
		case T_ProjectionPath:
			return gpuhash_join_below(((ProjectionPath *) path)->subpath, any_device);
		case T_MaterialPath:
			return gpuhash_join_below(((MaterialPath *) path)->subpath, any_device);
		case T_MemoizePath:
			return gpuhash_join_below(((MemoizePath *) path)->subpath, any_device);
		case T_UniquePath:
			return gpuhash_join_below(((UniquePath *) path)->subpath, any_device);
		case T_SortPath:
		case T_IncrementalSortPath:
			return gpuhash_join_below(((SortPath *) path)->subpath, any_device);
		default:
			return false;
	}
}

static inline bool
gpu_join_below(Path *path)
{
	return gpuhash_join_below(path, false);
}

/*
 * A session's first GPU join makes its device context (160-200 ms on the
 * H100 host, bench/NOTES.md section 14), which PostgreSQL's own plan would
 * not pay: until this backend has one, a plan with GPU joins carries it
 * once, on its lowest GPU join.  A GPU join over another shares that
 * join's context, so a chain of them is not charged once a join.
 */
static Cost
device_setup(ght_device dev, Path *outer, Path *inner)
{
	if (dev != GHT_GPU || gpuhash_gpu_context_ready() ||
		gpu_join_below(outer) || gpu_join_below(inner))
		return 0.0;
	return gpuhash_device_setup_cost;
}

/*
 * What a path over outer and inner costs for its inputs, the same for the
 * precheck (may_survive) and the path (cost_gpu_join), so reckoned once
 * (try_join_path): the device setup walks both sides' paths for a GPU join,
 * and the read credit looks at the outer side's scan and filter.
 */
typedef struct InputCosts
{
	double		setup;			/* device_setup */
	Cost		row_cost;		/* outer_row_cost */
	Cost		read_credit;	/* outer_read_credit */
	bool		key_filter;		/* key_filter_fits */
	double		match_share;	/* outer_match_share */
	Selectivity hash_sel;		/* hash_selectivity, where reckoned already (a
								 * right join's), else -1 */
} InputCosts;

static void
input_costs(PlannerInfo *root, RelOptInfo *joinrel, JoinType jointype, const HashKeys *keys,
			Path *outer, Path *inner, ght_device dev, bool inner_split, InputCosts *in)
{
	double		build_rows = table_rows(inner, inner_split);
	double		share;
	double		miss;

	in->hash_sel = GPUHASH_JOIN_IS_RIGHT(jointype) ?
		hash_selectivity(root, keys, outer, inner) : -1.0;
	share = outer_match_share(joinrel, jointype, outer, inner, in->hash_sel);
	in->match_share = share;

	in->setup = device_setup(dev, outer, inner);
	in->row_cost = outer_row_cost(root, keys, outer);
	miss = early_miss(root, jointype, outer, keys, share, build_rows);
	in->read_credit = outer_read_credit(root, outer, miss, in->row_cost);
	in->key_filter = miss > 0 ||
		key_filter_fits(jointype, share, build_rows, KEY_FILTER_MAX_MATCH);
}

/*
 * Emitting a row costs what it costs PostgreSQL's hash join.  When both
 * sides are split among the participants, PostgreSQL counts the rows a
 * parallel hash join emits from the per-participant sizes of both sides,
 * which divides them once more by the participants; doing the same keeps
 * the two comparable, so that the choice between them rests on the costs
 * that do differ, building and probing.
 */
static void
cost_gpu_join(PlannerInfo *root, CustomPath *cp, JoinType jointype, Path *outer, Path *inner,
			  const HashKeys *keys, List *quals, List *memo, double out_rows, bool inner_split,
			  const InputCosts *in)
{
	QualCost	qc;
	QualCost	mc;
	double		emitted = out_rows;
	double		build_rows = table_rows(inner, inner_split);
	double		pairs;
	double		matches;
	double		walked = 0;

	if (inner_split)
		emitted = out_rows / gpuhash_parallel_divisor(inner->parallel_workers);

	/*
	 * The other join clauses are tested on every pair the hash key matches,
	 * not only on the rows they let through (a subplan in them runs once a
	 * pair); a semi or anti join stops at an outer row's first match.  A
	 * left join tests every pair, as an inner join does.
	 */
	cost_qual_eval(&qc, quals, root);
	pairs = outer->rows * build_rows *
		(in->hash_sel >= 0 ? in->hash_sel : hash_selectivity(root, keys, outer, inner));
	matches = pairs;
	if (jointype == JOIN_SEMI || jointype == JOIN_ANTI)
		matches = Min(matches, outer->rows);
	matches = Max(matches, out_rows);

	/*
	 * A right join's probes make every pair and mark its build row; without
	 * other clauses a key is probed about once (join_exec.c's recent keys),
	 * so its pairs are about the build rows its keys reach, once a batch.
	 */
	if (GPUHASH_JOIN_IS_RIGHT(jointype))
		walked = quals == NIL ? Min(pairs, outer->rows + build_rows) : pairs;

	/*
	 * A semi or anti join with other clauses is handed its keys' pairs in
	 * rounds of 16, 256, ... a key until one passes (join_exec.c's
	 * match_with_quals): where they seldom pass, every pair, at about 2 ns
	 * a pair on the development machine, a tenth of an operator's cost.
	 * Over a skewed key that walk is the whole query, and PostgreSQL's hash
	 * join, which also hashes clauses the node does not (text), walks less.
	 */
	else if ((jointype == JOIN_SEMI || jointype == JOIN_ANTI) && quals != NIL)
		walked = pairs * SEMI_PAIR_COST_SHARE;

	/* what is kept per build row runs once a build row, not once a pair */
	cost_qual_eval(&mc, memo, root);
	qc.per_tuple -= mc.per_tuple;

	cp->path.rows = out_rows;
	cp->path.startup_cost = gpuhash_join_startup_cost + in->setup + inner->total_cost -
		gpuhash_read_credit(root, inner, 0.0) +
		inner->rows * (gpuhash_join_build_row_cost + keys_cost(root, keys, false) +
					   input_row_cost(root, inner, keys_are_columns(keys, false), false)) + qc.startup;
	cp->path.total_cost = cp->path.startup_cost + outer->total_cost +
		outer->rows * in->row_cost + matches * qc.per_tuple + emitted * cpu_tuple_cost +
		Min(matches, build_rows) * mc.per_tuple + walked * cpu_operator_cost -
		in->read_credit;
	/* a right join's rows come only once every probe row is read */
	if (GPUHASH_JOIN_IS_RIGHT(jointype))
		cp->path.startup_cost = cp->path.total_cost - emitted * cpu_tuple_cost;
}

/*
 * A partial path makes one participant's share of its rows, whether or not
 * its top node is parallel-aware: a Nested Loop over a Parallel Seq Scan is
 * split as much as the scan.  When partial, the inner side is split like the
 * outer one when inner_split, and every participant reads its share of it
 * for the shared build; else one participant reads all of it.
 */
static CustomPath *
make_path(PlannerInfo *root, RelOptInfo *joinrel, JoinType jointype, JoinPathExtraData *extra,
		  const HashKeys *keys, Path *outer, Path *inner, ght_device dev, bool partial,
		  bool inner_split, const LateQuals *late, const InputCosts *in)
{
	CustomPath *cp = makeNode(CustomPath);
	double		rows = joinrel->rows;
	List	   *quals = NIL;
	List	   *join_clauses = NIL;
	List	   *rinfos = hash_rinfos(keys);
	List	   *outer_exprs = NIL;
	List	   *inner_exprs = NIL;
	List	   *late_clauses = NIL;
	int			workers;
	double		kept;
	ListCell   *lc;

	cp->path.pathtype = T_CustomScan;
	cp->path.parent = joinrel;
	cp->path.pathtarget = joinrel->reltarget;
	cp->path.param_info = NULL;
	cp->path.parallel_aware = partial;
	cp->path.parallel_safe = joinrel->consider_parallel && outer->parallel_safe &&
		inner->parallel_safe;
	cp->path.parallel_workers = partial ? outer->parallel_workers : 0;
	cp->path.pathkeys = NIL;
	cp->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cp->custom_paths = list_make2(outer, inner);
	cp->methods = &gpu_join_path_methods;

	foreach(lc, extra->restrictlist)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		/* a mixed key's clauses are tested on each pair too */
		if (list_member_ptr(rinfos, ri) && !keys->mixed)
			continue;
		quals = lappend(quals, ri->clause);
		if (!filters_output(jointype, ri, joinrel->relids))
			join_clauses = lappend(join_clauses, ri->clause);
	}
	/*
	 * An outer scan's late filter runs on the pairs, like a join clause, or
	 * is left to the join above, which then finds more rows here; an inner
	 * side's is a join clause of this join's (late_quals.c).
	 */
	if (late != NULL)
	{
		foreach(lc, late->outer)
			late_clauses = lappend(late_clauses, lfirst_node(RestrictInfo, lc)->clause);
		if (late->here)
			quals = list_concat(quals, late_clauses);
		else if (late->outer != NIL)
			rows = clamp_row_est(rows / Max(clauselist_selectivity(root, late->outer, 0,
																	 JOIN_INNER, NULL), 1e-10));
		quals = list_concat(quals, late->inner);
		join_clauses = list_concat(join_clauses, late->inner);
	}
	if (partial)
		rows = clamp_row_est(rows / gpuhash_parallel_divisor(cp->path.parallel_workers));
	cost_gpu_join(root, cp, jointype, outer, inner, keys, quals,
				  gpuhash_pair_memo_exprs(root, join_clauses, inner->parent->relids),
				  rows, partial && inner_split, in);

	/*
	 * A split inner side is read by every participant before the outer one
	 * is: run as many workers as either side was planned for.  PostgreSQL's
	 * parallel hash join takes its outer side's, which left TPC-H q10's
	 * lineitem read by 5 participants under a customer scan of 4 workers.
	 * The cost stays that of the outer side's workers, so that the choice
	 * between paths does not turn on it; only the rows are shared anew.
	 */
	if (partial && inner_split && inner->parallel_workers > outer->parallel_workers)
	{
		cp->path.parallel_workers = inner->parallel_workers;
		cp->path.rows = clamp_row_est(joinrel->rows / gpuhash_parallel_divisor(inner->parallel_workers));
	}
	/*
	 * Likewise for gpuhash.parallel_workers, by the share of its rows that
	 * the outer side's reader hands on (its key filter's too), or the inner
	 * side's where that keeps fewer: each side is read by every participant;
	 * and not where a table's own option set either side's count.  A serial
	 * path has no workers to size, and its inputs are not looked at.
	 */
	if (partial)
	{
		kept = Min(gpuhash_read_kept(root, outer, in->key_filter ? in->match_share : 1.0),
				   gpuhash_read_kept(root, inner, 1.0));
		workers = gpuhash_plan_workers(cp->path.parallel_workers, kept,
									   gpuhash_workers_fixed(outer) || gpuhash_workers_fixed(inner));
		if (workers > cp->path.parallel_workers)
		{
			cp->path.rows = clamp_row_est(cp->path.rows * gpuhash_parallel_divisor(cp->path.parallel_workers) /
										  gpuhash_parallel_divisor(workers));
			cp->path.parallel_workers = workers;
		}
	}

	for (int i = 0; i < keys->n; i++)
	{
		outer_exprs = lappend(outer_exprs, keys->c[i].outer_expr);
		inner_exprs = lappend(inner_exprs, keys->c[i].inner_expr);
	}
	cp->custom_private = list_make5(rinfos, outer_exprs, inner_exprs,
									makeInteger(jointype), makeInteger(dev));
	cp->custom_private = lappend(cp->custom_private, extra->restrictlist);
	cp->custom_private = lappend(cp->custom_private, makeInteger(partial && inner_split));
	cp->custom_private = lappend(cp->custom_private, late_clauses);
	cp->custom_private = lappend(cp->custom_private, makeInteger(late == NULL || late->here));
	cp->custom_private = lappend(cp->custom_private, late ? late->inner : NIL);
	cp->custom_private = lappend(cp->custom_private, makeInteger(in->key_filter));
	return cp;
}

/*
 * Offer cp to joinrel, keeping a copy for GpuHashAggregate.  Not under
 * GEQO, which frees its join relations between tries.
 */
static void
add_join_path(PlannerInfo *root, RelOptInfo *joinrel, CustomPath *cp)
{
	if (root->join_search_private == NULL)
	{
		CustomPath *copy = makeNode(CustomPath);

		memcpy(copy, cp, sizeof(CustomPath));
		remember_join_path(copy);
	}
	if (cp->path.parallel_aware)
		add_partial_path(joinrel, &cp->path);
	else
		add_path(joinrel, &cp->path);
}

/*
 * The GpuHashJoin paths made for rel in this planning, partial ones or the
 * others, whether or not add_path kept them.
 */
List *
gpuhash_join_paths_of(RelOptInfo *rel, bool partial)
{
	List	   *paths = NIL;
	ListCell   *lc;

	foreach(lc, made_join_paths)
	{
		Path	   *p = lfirst(lc);

		if (p->parent == rel && p->parallel_aware == partial)
			paths = lappend(paths, p);
	}
	return paths;
}

/* Each planning, nested ones too, keeps its own made_join_paths. */
static PlannedStmt *
gpuhash_planner(Query *parse, const char *query_string, int cursor_options,
				ParamListInfo bound_params)
{
	List	   *outer_paths = made_join_paths;
	List	   *outer_deferred = deferred_paths;
	HTAB	   *outer_by_rel = gpu_paths_by_rel;
	List	   *outer_reads;
	PlannedStmt *result;

	gpuhash_settings_ready();
	made_join_paths = NIL;
	deferred_paths = NIL;
	gpu_paths_by_rel = NULL;
	outer_reads = gpuhash_read_cost_begin();
	PG_TRY();
	{
		if (prev_planner_hook)
			result = prev_planner_hook(parse, query_string, cursor_options, bound_params);
		else
			result = standard_planner(parse, query_string, cursor_options, bound_params);
	}
	PG_FINALLY();
	{
		made_join_paths = outer_paths;
		deferred_paths = outer_deferred;
		gpu_paths_by_rel = outer_by_rel;
		gpuhash_read_cost_end(outer_reads);
	}
	PG_END_TRY();
	return result;
}

/*
 * Whether a path over outer and inner might survive add_path, judged on a
 * lower bound of cost_gpu_join's costs (every per-row term at its least: a
 * credited input row gives back at most cpu_tuple_cost), as PostgreSQL's own
 * join costing skips paths with add_path_precheck.  Most join relations of
 * a many-way join are small or end up beside a cheaper PostgreSQL path, and
 * making, costing and offering a path for each of them was about a third of
 * what loading gpuhash added to planning TPC-H q05 (bench/NOTES.md section
 * 28).  The relation of every base relation keeps all its paths:
 * GpuHashAggregate may fold over one that add_path turned away.  Without
 * charge_setup, the bound leaves out the device setup, which a GPU join
 * above this one would otherwise pay.
 */
static bool
may_survive(PlannerInfo *root, RelOptInfo *joinrel, Path *outer, Path *inner, bool partial,
			const InputCosts *in, bool charge_setup)
{
	Cost		startup;
	Cost		total;

	if (bms_equal(joinrel->relids, root->all_baserels))
		return true;
	startup = gpuhash_join_startup_cost + inner->total_cost - gpuhash_read_credit(root, inner, 0.0) +
		inner->rows * Min(0.0, gpuhash_join_build_row_cost - cpu_tuple_cost);
	if (charge_setup)
		startup += in->setup;
	total = startup + outer->total_cost +
		outer->rows * Min(0.0, gpuhash_join_probe_row_cost - cpu_tuple_cost) - in->read_credit;
	if (partial)
		return add_partial_path_precheck(joinrel, total, NIL);
	return add_path_precheck(joinrel, startup, total, NIL, NULL);
}

/*
 * Offer a path over outer and inner to joinrel.  One that would lose there
 * only for the device setup it carries is still made and kept aside:
 * a GPU join above it may take it as an input and pay the setup once for
 * both (TPC-H q03: orders by customer under lineitem's join, run 106).
 */
static void
try_join_path(PlannerInfo *root, RelOptInfo *joinrel, JoinType jointype,
			  JoinPathExtraData *extra, const HashKeys *keys, Path *outer, Path *inner,
			  ght_device dev, bool partial, bool inner_split, const LateQuals *late)
{
	InputCosts	in;

	input_costs(root, joinrel, jointype, keys, outer, inner, dev, partial && inner_split, &in);
	if (may_survive(root, joinrel, outer, inner, partial, &in, true))
		add_join_path(root, joinrel, make_path(root, joinrel, jointype, extra, keys,
											   outer, inner, dev, partial, inner_split, late, &in));
	else if (root->join_search_private == NULL && in.setup > 0.0 &&
			 may_survive(root, joinrel, outer, inner, partial, &in, false))
	{
		CustomPath *cp = make_path(root, joinrel, jointype, extra, keys, outer, inner, dev,
								   partial, inner_split, late, &in);

		remember_join_path(cp);
	}
}

/*
 * Offer the join once more with the outer scan's subquery filter tested on
 * the pairs instead of the rows read (late_quals.c), when it has one.
 */
static void
try_late_filter(PlannerInfo *root, RelOptInfo *joinrel, JoinType jointype,
				JoinPathExtraData *extra, const HashKeys *keys, Path *outer, Path *inner,
				ght_device dev, bool partial, bool inner_split)
{
	LateQuals	late = {gpuhash_late_quals(root, outer), true, NIL};
	Path	   *without;

	if (late.outer == NIL)
		return;
	without = gpuhash_outer_without(root, outer, late.outer);
	try_join_path(root, joinrel, jointype, extra, keys, without, inner, dev, partial,
				  inner_split, &late);

	/*
	 * The same join leaving the filter to a join above, where this one is
	 * the inner side: TPC-H q20's partsupp joined to part is then the build
	 * side of a semi join with Canada's suppliers, which tests the filter on
	 * the pairs it reaches (4 % of them), once a build row (pair_memo.c).
	 * The filter reads only this join's outer columns, which an inner, semi
	 * or anti join passes up unchanged, so that testing it above drops the
	 * same rows.  (A left join would too; no query has needed it.)
	 */
	if (!partial && root->join_search_private == NULL &&
		(jointype == JOIN_INNER || jointype == JOIN_SEMI || jointype == JOIN_ANTI))
	{
		InputCosts	in;

		late.here = false;
		input_costs(root, joinrel, jointype, keys, without, inner, dev, false, &in);
		deferred_paths = lappend(deferred_paths,
								 make_path(root, joinrel, jointype, extra, keys, without, inner,
										   dev, false, false, &late, &in));
	}
}

/*
 * Offer the join once more over innerrel's join that left its outer scan's
 * filter to this one (try_late_filter), its cheapest, testing that filter
 * as a join clause: each build row's value kept (pair_memo.c).
 */
static void
try_deferred_inner(PlannerInfo *root, RelOptInfo *joinrel, JoinType jointype,
				   JoinPathExtraData *extra, const HashKeys *keys, Path *outer,
				   RelOptInfo *innerrel, ght_device dev)
{
	CustomPath *best = NULL;
	LateQuals	late = {NIL, true, NIL};
	ListCell   *lc;

	if (jointype != JOIN_INNER && jointype != JOIN_SEMI && jointype != JOIN_ANTI &&
		jointype != JOIN_LEFT)
		return;
	foreach(lc, deferred_paths)
	{
		CustomPath *cp = lfirst(lc);

		if (cp->path.parent == innerrel && path_device(cp) == dev &&
			(best == NULL || cp->path.total_cost < best->path.total_cost))
			best = cp;
	}
	if (best == NULL)
		return;
	late.inner = list_nth(best->custom_private, 7);
	try_join_path(root, joinrel, jointype, extra, keys, outer, &best->path, dev, false, false,
				  &late);
}

/*
 * The cheapest GPU join path made for rel, partial or not, when rel's own
 * best path has no GPU join in it: a join above may take it instead, its
 * device setup then shared (try_join_path).  NULL when there is none, or
 * when the context is made already and no setup is left to share.
 */
static Path *
gpu_join_aside(RelOptInfo *rel, Path *best, bool partial)
{
	GpuPathsOfRel *e;

	if (gpu_paths_by_rel == NULL || gpuhash_gpu_context_ready() || best == NULL)
		return NULL;
	e = hash_search(gpu_paths_by_rel, &rel, HASH_FIND, NULL);
	if (e == NULL || e->cheapest_gpu[partial] == NULL || gpu_join_below(best))
		return NULL;
	return e->cheapest_gpu[partial];
}

/*
 * PostgreSQL runs a Parallel Hash Join with as many workers as its outer
 * side was planned for, though every participant shares the building of
 * its inner side.  Where that inner side holds GpuHashJoins planned for more
 * workers, the join gets theirs: TPC-H q08 put its whole GPU chain (orders
 * and lineitem read directly) under the Parallel Hash of a join whose outer
 * side, supplier, has one worker, so two processes did the work costed for
 * seven.  The cost stays as PostgreSQL computed it; any number of
 * participants gives the same rows.
 */
static void
widen_parallel_hash_joins(RelOptInfo *joinrel)
{
	ListCell   *lc;

	foreach(lc, joinrel->partial_pathlist)
	{
		Path	   *p = lfirst(lc);
		Path	   *inner;

		if (!IsA(p, HashPath) || !p->parallel_aware)
			continue;
		inner = ((JoinPath *) p)->innerjoinpath;
		if (inner->parallel_workers > p->parallel_workers && gpuhash_join_below(inner, true))
			p->parallel_workers = inner->parallel_workers;
	}
}

/*
 * Can an anti join's outer rows all be built?  The table leaves out rows
 * with a NULL key, which an anti join must still return: so its keys must
 * be NOT NULL columns of a base relation (no outer join below can make
 * them NULL).  And every clause must decide the match: a pushed-down clause
 * would filter the returned rows, which the node does not do for a join
 * built from its outer side.
 */
static bool
anti_buildable(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
			   const HashKeys *keys, List *restrictlist)
{
	ListCell   *lc;

	if (outerrel->reloptkind != RELOPT_BASEREL)
		return false;
	foreach(lc, restrictlist)
		if (filters_output(JOIN_ANTI, lfirst_node(RestrictInfo, lc), joinrel->relids))
			return false;
	for (int i = 0; i < keys->n; i++)
	{
		Var		   *v = (Var *) keys->c[i].outer_expr;
		RangeTblEntry *rte;
		Relation	r;
		bool		notnull;

		if (!IsA(v, Var) || v->varattno <= 0)
			return false;
		rte = planner_rt_fetch(v->varno, root);
		if (rte->rtekind != RTE_RELATION)
			return false;
		/* opened and locked by the planner already: its relcache entry answers */
		r = table_open(rte->relid, NoLock);
		notnull = TupleDescAttr(RelationGetDescr(r), v->varattno - 1)->attnotnull;
		table_close(r, NoLock);
		if (!notnull)
			return false;
	}
	return true;
}

/*
 * A semi or anti join the other way round (GPUHASH_JOIN_RIGHT_SEMI and
 * _ANTI): its outer side hashed, and probed by its inner side's rows as they
 * are read, each outer row that a probe matches (semi) or that none matches
 * (anti) returned once at the end.  PostgreSQL 15 either hashes the inner
 * side, or makes it unique for an inner join, or probes an index of it once
 * per outer row: for EXISTS over a large table and a selective outer side
 * (TPC-H q04: an orders quarter against lineitem) that builds tens of
 * millions of rows, or makes 0.57 M index probes (1.15 s on the H100 host).
 * Here the few outer rows are the table, and the large side is read once,
 * its rows dropped by the key filter before they are taken apart where its
 * key leads the row.  The same restriction clauses apply, evaluated on each
 * pair.
 */
static void
try_build_outer(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra,
				const HashKeys *keys, ght_device dev)
{
	JoinType	right = jointype == JOIN_SEMI ? GPUHASH_JOIN_RIGHT_SEMI : GPUHASH_JOIN_RIGHT_ANTI;
	HashKeys	swapped = *keys;
	Path	   *probe = innerrel->cheapest_total_path;
	Path	   *build = outerrel->cheapest_total_path;

	/*
	 * An outer side larger than the inner one would build more rows than the
	 * join that hashes the inner side, offered anyway: not costed.
	 */
	if (!gpuhash_build_outer || outerrel->rows > innerrel->rows)
		return;
	if (right == GPUHASH_JOIN_RIGHT_ANTI &&
		!anti_buildable(root, joinrel, outerrel, keys, extra->restrictlist))
		return;
	for (int i = 0; i < keys->n; i++)
	{
		swapped.c[i].outer_expr = keys->c[i].inner_expr;
		swapped.c[i].inner_expr = keys->c[i].outer_expr;
	}
	try_join_path(root, joinrel, right, extra, &swapped, probe, build, dev, false, false, NULL);

	/* parallel: the probe side split among the participants, the build side too if it can be */
	if (joinrel->consider_parallel && innerrel->partial_pathlist != NIL)
	{
		Path	   *pprobe = linitial(innerrel->partial_pathlist);
		bool		split = outerrel->partial_pathlist != NIL;
		Path	   *pbuild = split ? linitial(outerrel->partial_pathlist) : build;

		if (!pprobe->parallel_safe || !pbuild->parallel_safe ||
			PATH_REQ_OUTER(pprobe) != NULL || PATH_REQ_OUTER(pbuild) != NULL)
			return;
		try_join_path(root, joinrel, right, extra, &swapped, pprobe, pbuild, dev, true, split,
					  NULL);
	}
}

static void
gpu_join_pathlist(PlannerInfo *root, RelOptInfo *joinrel, RelOptInfo *outerrel,
				  RelOptInfo *innerrel, JoinType jointype, JoinPathExtraData *extra)
{
	HashKeys	keys;
	Path	   *outer = outerrel->cheapest_total_path;
	Path	   *inner = innerrel->cheapest_total_path;
	Path	   *alt;
	ght_device	dev;

	if (prev_join_pathlist_hook)
		prev_join_pathlist_hook(root, joinrel, outerrel, innerrel, jointype, extra);

	gpuhash_settings_ready();
	gpuhash_index_probe_paths(root, joinrel, outerrel, innerrel, jointype, extra);
	if (!gpuhash_enable_join)
		return;
	widen_parallel_hash_joins(joinrel);
	gpuhash_semi_estimate(root, joinrel, outerrel, innerrel, jointype, extra);
	/*
	 * JOIN_LEFT keeps outerrel's rows and hashes innerrel's, the side that
	 * is null-extended.  JOIN_RIGHT and JOIN_FULL would have to return the
	 * build side's unmatched rows, which the node does not track.
	 */
	if (jointype != JOIN_INNER && jointype != JOIN_LEFT &&
		jointype != JOIN_SEMI && jointype != JOIN_ANTI)
		return;
	/*
	 * The node emits a semi join's rows with the inner side's columns NULL,
	 * where PostgreSQL's give the first match's: a join above may compare
	 * one of them, an equivalence class's member (x.k of EXISTS (... x.k =
	 * b.k ...) under a join on p.k = x.k).
	 */
	if (jointype == JOIN_SEMI &&
		bms_overlap(pull_varnos(root, (Node *) joinrel->reltarget->exprs), innerrel->relids))
		return;
	/*
	 * Only unparameterized paths are made, so none for a join that refers
	 * to a relation outside it (LATERAL): its paths must be parameterized.
	 */
	if (outer == NULL || inner == NULL ||
		PATH_REQ_OUTER(outer) != NULL || PATH_REQ_OUTER(inner) != NULL ||
		!bms_is_empty(joinrel->lateral_relids))
		return;
	if (!find_hash_clauses(root, extra->restrictlist, joinrel, outerrel, innerrel, jointype, &keys))
		return;

	/*
	 * With auto and no GPU the CPU twin would only stand in for PostgreSQL's
	 * own hash join; offer it only when asked for by name.
	 */
	if (gpuhash_device_setting == GPUHASH_DEVICE_CPU)
		dev = GHT_CPU;
	else if (gpuhash_device_setting == GPUHASH_DEVICE_GPU || gpuhash_gpu_usable())
		dev = GHT_GPU;
	else
		return;

	try_join_path(root, joinrel, jointype, extra, &keys, outer, inner, dev, false, false, NULL);
	try_late_filter(root, joinrel, jointype, extra, &keys, outer, inner, dev, false, false);
	try_deferred_inner(root, joinrel, jointype, extra, &keys, outer, innerrel, dev);
	if (jointype == JOIN_SEMI || jointype == JOIN_ANTI)
		try_build_outer(root, joinrel, outerrel, innerrel, jointype, extra, &keys, dev);
	if (dev == GHT_GPU)
	{
		if ((alt = gpu_join_aside(innerrel, inner, false)) != NULL)
			try_join_path(root, joinrel, jointype, extra, &keys, outer, alt, dev, false, false, NULL);
		if ((alt = gpu_join_aside(outerrel, outer, false)) != NULL)
			try_join_path(root, joinrel, jointype, extra, &keys, alt, inner, dev, false, false, NULL);
	}

	/*
	 * Parallel: the outer side split among the participants; the inner side
	 * too when it can be, else read by one of them.  Either way one table
	 * is built and shared.
	 */
	if (joinrel->consider_parallel && outerrel->partial_pathlist != NIL)
	{
		Path	   *pouter = linitial(outerrel->partial_pathlist);
		Path	   *pinner = innerrel->partial_pathlist != NIL ?
			linitial(innerrel->partial_pathlist) : inner;
		bool		split = innerrel->partial_pathlist != NIL;

		if (!pouter->parallel_safe || !pinner->parallel_safe ||
			PATH_REQ_OUTER(pouter) != NULL || PATH_REQ_OUTER(pinner) != NULL)
			return;
		try_join_path(root, joinrel, jointype, extra, &keys, pouter, pinner, dev, true, split, NULL);
		try_late_filter(root, joinrel, jointype, extra, &keys, pouter, pinner, dev, true, split);
		if (dev != GHT_GPU)
			return;
		if (split && (alt = gpu_join_aside(innerrel, pinner, true)) != NULL && alt->parallel_safe)
			try_join_path(root, joinrel, jointype, extra, &keys, pouter, alt, dev, true, true, NULL);
		if ((alt = gpu_join_aside(outerrel, pouter, true)) != NULL && alt->parallel_safe)
			try_join_path(root, joinrel, jointype, extra, &keys, alt, pinner, dev, true, split, NULL);
	}
}

/* Attribute number of expr in a target list, 0 when it is not there. */
static int
tlist_find(List *tlist, Expr *expr)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (equal(tle->expr, expr))
			return tle->resno;
	}
	return 0;
}

/*
 * The child plan, returning expr as a column: as it is when it does
 * already, else with expr added to its target list (through a Result node
 * when it cannot project).
 */
Plan *
gpuhash_plan_with_column(Plan *plan, Expr *expr)
{
	List	   *tlist;

	if (tlist_find(plan->targetlist, expr) > 0)
		return plan;
	tlist = list_copy(plan->targetlist);
	tlist = lappend(tlist, makeTargetEntry(copyObject(expr), list_length(tlist) + 1, NULL, false));
	return change_plan_targetlist(plan, tlist, plan->parallel_safe);
}

/* Attribute number of expr in a child plan's target list. */
int
gpuhash_tlist_position(List *tlist, Expr *expr)
{
	int			resno = tlist_find(tlist, expr);

	if (resno == 0)
		elog(ERROR, "gpuhash: join key not found in the child plan's target list");
	return resno;
}

bool
gpuhash_is_join_path(Path *path)
{
	return IsA(path, CustomPath) && ((CustomPath *) path)->methods == &gpu_join_path_methods;
}

static Plan *
plan_gpu_join(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			  List *tlist, List *clauses, List *custom_plans)
{
	List	   *otherquals;
	CustomScan *cscan = gpuhash_join_plan_scan(root, rel->relids, best_path, tlist,
											   custom_plans, &otherquals);

	cscan->scan.plan.qual = otherquals;
	return &cscan->scan.plan;
}

/*
 * The CustomScan of a GpuHashJoin path, or of a GpuHashAggregate path made
 * from one (agg_path.c), for the join of joinrelids.  A left or anti
 * join's pushed-down clauses, which filter the joined rows, are returned in
 * *otherquals for the caller to place.
 */
CustomScan *
gpuhash_join_plan_scan(PlannerInfo *root, Relids joinrelids, CustomPath *best_path,
					   List *tlist, List *custom_plans, List **otherquals)
{
	CustomScan *cscan = makeNode(CustomScan);
	List	   *hash_rinfos = linitial(best_path->custom_private);
	List	   *outer_exprs = lsecond(best_path->custom_private);
	List	   *inner_exprs = lthird(best_path->custom_private);
	JoinType	jointype = intVal(lfourth(best_path->custom_private));
	ght_device	dev = path_device(best_path);
	List	   *restrictlist = list_nth(best_path->custom_private, 5);
	bool		inner_split = intVal(list_nth(best_path->custom_private, 6)) != 0;
	List	   *late = list_nth(best_path->custom_private, 7);
	bool		late_here = intVal(list_nth(best_path->custom_private, 8)) != 0;
	List	   *inner_late = list_nth(best_path->custom_private, 9);
	Plan	   *outer_plan = linitial(custom_plans);
	Plan	   *inner_plan = lsecond(custom_plans);
	Path	   *inner_path = lsecond(best_path->custom_paths);
	List	   *scan_tlist = NIL;
	List	   *joinquals = NIL;
	List	   *hash_clauses = NIL;
	List	   *memo;
	List	   *private;
	ListCell   *lc;
	AttrNumber	resno = 1;
	int			key_width = 4;
	double		build_rows;
	bool		mixed;

	foreach(lc, hash_rinfos)
		hash_clauses = lappend(hash_clauses, lfirst_node(RestrictInfo, lc)->clause);
	mixed = keys_mixed(outer_exprs, inner_exprs);
	/*
	 * The outer scan's late filter moves here (or on to the join above),
	 * with the columns it reads; the inner side's is a join clause here,
	 * with the columns it reads from that side.
	 */
	if (late != NIL)
	{
		gpuhash_strip_late_quals(outer_plan, late);
		foreach(lc, pull_var_clause((Node *) late, 0))
			outer_plan = gpuhash_plan_with_column(outer_plan, lfirst(lc));
	}
	foreach(lc, pull_var_clause((Node *) inner_late, 0))
		inner_plan = gpuhash_plan_with_column(inner_plan, lfirst(lc));
	foreach(lc, outer_exprs)
	{
		outer_plan = gpuhash_plan_with_column(outer_plan, lfirst(lc));
		if (exprType(lfirst(lc)) == INT8OID)
			key_width = 8;
	}
	foreach(lc, inner_exprs)
	{
		inner_plan = gpuhash_plan_with_column(inner_plan, lfirst(lc));
		if (exprType(lfirst(lc)) == INT8OID)
			key_width = 8;
	}
	/* two keys are packed into one 8-byte key (HashKeys) */
	if (list_length(hash_rinfos) > 1)
		key_width = 8;
	linitial(custom_plans) = outer_plan;
	lsecond(custom_plans) = inner_plan;

	/* the scan tuple: every outer column, then every inner column */
	foreach(lc, outer_plan->targetlist)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(copyObject(lfirst_node(TargetEntry, lc)->expr),
											 resno++, NULL, false));
	foreach(lc, inner_plan->targetlist)
		scan_tlist = lappend(scan_tlist,
							 makeTargetEntry(copyObject(lfirst_node(TargetEntry, lc)->expr),
											 resno++, NULL, false));

	/*
	 * The other join clauses are evaluated on each matching pair: an inner
	 * join drops the pairs that fail them, and a left, semi or anti join
	 * counts a pair as a match only when they hold.  A left or anti join's
	 * pushed-down clauses filter what comes out.  Pseudoconstant clauses are evaluated
	 * like the others: no gating Result node is made for a custom join.
	 */
	*otherquals = NIL;
	foreach(lc, restrictlist)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		if (list_member_ptr(hash_rinfos, ri) && !mixed)
			continue;
		if (filters_output(jointype, ri, joinrelids))
			*otherquals = lappend(*otherquals, ri->clause);
		else
			joinquals = lappend(joinquals, ri->clause);
	}
	if (late_here)
		*otherquals = list_concat(*otherquals, late);
	joinquals = list_concat(joinquals, inner_late);

	/* the join clauses' parts kept per build row, as columns after the inner ones */
	memo = gpuhash_pair_memo_exprs(root, joinquals, inner_path->parent->relids);
	if (memo != NIL)
	{
		List	   *columns = gpuhash_pair_memo_columns(root, memo);

		joinquals = gpuhash_pair_memo_replace(joinquals, memo, columns);
		foreach(lc, columns)
			scan_tlist = lappend(scan_tlist, makeTargetEntry(lfirst(lc), resno++, NULL, false));
	}

	build_rows = table_rows(inner_path, inner_split);

	private = NIL;
	private = lappend(private, makeInteger(jointype));
	for (int i = 0; i < GPUHASH_MAX_HASH_CLAUSES; i++)
	{
		Expr	   *oe = i < list_length(outer_exprs) ? list_nth(outer_exprs, i) : NULL;
		Expr	   *ie = i < list_length(inner_exprs) ? list_nth(inner_exprs, i) : NULL;

		/* GJ_PRIV_OUTER_KEY .. GJ_PRIV_INNER_TYPE, then the second key's (or 0s) */
		private = lappend(private, makeInteger(oe ? gpuhash_tlist_position(outer_plan->targetlist, oe) : 0));
		private = lappend(private, makeInteger(ie ? gpuhash_tlist_position(inner_plan->targetlist, ie) : 0));
		private = lappend(private, makeInteger(oe ? exprType((Node *) oe) : InvalidOid));
		private = lappend(private, makeInteger(ie ? exprType((Node *) ie) : InvalidOid));
	}
	private = lappend(private, makeInteger(ght_choose_method(dev, (uint64) build_rows, key_width, 0)));
	private = lappend(private, makeInteger(dev));
	private = lappend(private, makeInteger(inner_split));
	/* "%.1f": a Float printed without a point would be read back as an Integer */
	private = lappend(private, makeFloat(psprintf("%.1f", build_rows)));
	private = lappend(private, list_nth(best_path->custom_private, 10));
	private = lappend(private, makeInteger(list_length(memo)));

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = custom_plans;
	cscan->custom_exprs = list_concat(lcons(make_ands_explicit(hash_clauses), joinquals), memo);
	cscan->custom_private = private;
	cscan->custom_scan_tlist = scan_tlist;
	cscan->custom_relids = joinrelids;
	cscan->methods = &gpu_join_scan_methods;
	return cscan;
}

void
gpuhash_join_init(void)
{
	RegisterCustomScanMethods(&gpu_join_scan_methods);
	prev_join_pathlist_hook = set_join_pathlist_hook;
	set_join_pathlist_hook = gpu_join_pathlist;
	prev_planner_hook = planner_hook;
	planner_hook = gpuhash_planner;
}
