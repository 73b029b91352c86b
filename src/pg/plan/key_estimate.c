/*
 * key_estimate.c - a join on every column of a multi-column unique key,
 * estimated as PostgreSQL estimates a join on a declared foreign key.
 *
 * PostgreSQL multiplies the selectivities of a join's equalities as if the
 * columns were independent.  TPC-H q09 joins lineitem to partsupp on
 * (partkey, suppkey), partsupp's primary key: every line has exactly one
 * match, 60 M rows at SF 10, but the product of the two columns'
 * selectivities predicts a few thousand.  With so few rows expected, index
 * lookups into orders and supplier for each of them look cheapest, and
 * the query runs 9 s on the GPU host.  With the join estimated right (a
 * declared foreign key) PostgreSQL's own hash joins run it in 3.9 s, and
 * the GpuHashJoin chain, forced, takes 3.6 s (bench/NOTES.md sections 36
 * and 45).  The TPC-H schema, like many, declares no foreign keys.
 *
 * A unique index says that each row of the other side matches at most one
 * row of the indexed table.  Where every column of such an index is equated
 * with a column of one other table, the pair is handed to PostgreSQL's own
 * foreign-key estimate (root->fkey_list): the join is expected to keep each
 * row of the other side once.  That is the containment PostgreSQL already
 * assumes for a single column (eqjoinsel takes 1 / the larger distinct
 * count); here it is assumed of the combination, and only where no column
 * of the other side has more distinct values than the indexed table has
 * rows, nor, where extended ndistinct statistics cover its columns, more
 * than twice as many combinations.  Where the other side's combinations are
 * mostly absent from the index and no such statistics say so, the join is
 * overestimated, which favours hash joins over nested loops.  A foreign key
 * already declared between the two is left alone.
 *
 * This changes the estimate of the join relation, which every path of it
 * shares, so PostgreSQL's own plans over such joins change too, toward the
 * plans a declared key gives.  gpuhash.unique_key_estimates off restores
 * PostgreSQL's estimate.
 */
#include "postgres.h"

#include "access/stratnum.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_statistic_ext_d.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/geqo.h"
#include "optimizer/paths.h"
#include "optimizer/planmain.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

#include "join_node.h"
#include "key_estimate.h"

bool		gpuhash_unique_key_estimates = true;

static join_search_hook_type prev_join_search_hook = NULL;

static Var *
member_var(EquivalenceMember *em)
{
	Expr	   *e = em->em_expr;

	while (e && IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	return (e && IsA(e, Var) && ((Var *) e)->varlevelsup == 0) ? (Var *) e : NULL;
}

/*
 * The equivalence class that equates ref's column refattno with a column of
 * con under opfamily, with its two members; NULL when there is none.
 */
static EquivalenceClass *
find_equated_column(PlannerInfo *root, RelOptInfo *ref, AttrNumber refattno,
					RelOptInfo *con, Oid opfamily,
					EquivalenceMember **refem, EquivalenceMember **conem)
{
	Bitmapset  *common = bms_intersect(ref->eclass_indexes, con->eclass_indexes);
	int			i = -1;

	while ((i = bms_next_member(common, i)) >= 0)
	{
		EquivalenceClass *ec = list_nth(root->eq_classes, i);
		ListCell   *lc;

		if (ec->ec_has_const || ec->ec_has_volatile || ec->ec_broken ||
			!list_member_oid(ec->ec_opfamilies, opfamily))
			continue;
		*refem = *conem = NULL;
		foreach(lc, ec->ec_members)
		{
			EquivalenceMember *em = lfirst(lc);
			Var		   *v;

			if (em->em_is_child || (v = member_var(em)) == NULL)
				continue;
			if (v->varno == ref->relid && v->varattno == refattno)
				*refem = em;
			else if (v->varno == con->relid && v->varattno > 0 && *conem == NULL)
				*conem = em;
		}
		if (*refem && *conem)
			return ec;
	}
	return NULL;
}

/*
 * Whether var can have its values among ref's rows: no more distinct values
 * than ref has rows.  The indexed column's own distinct count is no bound:
 * ANALYZE samples blocks, and a key stored in its order (partsupp four rows
 * a part) shows its repeats within a block and is counted low, ps_partkey
 * at 0.44 M of 2 M at SF 10 (run 194).
 */
static bool
could_match(PlannerInfo *root, Var *var, RelOptInfo *ref)
{
	VariableStatData vd;
	bool		isdefault;
	double		nd;

	examine_variable(root, (Node *) var, 0, &vd);
	nd = get_variable_numdistinct(&vd, &isdefault);
	ReleaseVariableStats(vd);
	return !isdefault && nd <= ref->tuples;
}

/*
 * Whether extended ndistinct statistics of con (CREATE STATISTICS ...
 * (ndistinct)) count more combinations of the link's columns than twice
 * ref's rows: then most of them cannot be among the index's, whatever each
 * column alone shows.  Without such statistics PostgreSQL would multiply
 * the columns' counts, which proves nothing, so nothing is refused.
 */
static bool
too_many_combinations(PlannerInfo *root, RelOptInfo *con, ForeignKeyOptInfo *fk,
					  EquivalenceMember **conems, RelOptInfo *ref)
{
	Bitmapset  *cols = NULL;
	List	   *vars = NIL;
	ListCell   *lc;
	int			k;

	if (con->statlist == NIL)
		return false;
	for (k = 0; k < fk->nkeys; k++)
	{
		cols = bms_add_member(cols, fk->conkey[k]);
		vars = lappend(vars, member_var(conems[k]));
	}
	foreach(lc, con->statlist)
	{
		StatisticExtInfo *st = lfirst(lc);

		if (st->kind == STATS_EXT_NDISTINCT && !st->inherit && bms_is_subset(cols, st->keys))
			return estimate_num_groups(root, vars, con->tuples, NULL, NULL) > 2.0 * ref->tuples;
	}
	return false;
}

static bool
linked(PlannerInfo *root, Index con, Index ref)
{
	ListCell   *lc;

	foreach(lc, root->fkey_list)
	{
		ForeignKeyOptInfo *fk = lfirst(lc);

		if ((fk->con_relid == con && fk->ref_relid == ref) ||
			(fk->con_relid == ref && fk->ref_relid == con))
			return true;
	}
	return false;
}

static bool
plain_table(PlannerInfo *root, RelOptInfo *rel)
{
	return rel != NULL && rel->reloptkind == RELOPT_BASEREL &&
		rel->rtekind == RTE_RELATION && !root->simple_rte_array[rel->relid]->inh &&
		!bms_is_empty(rel->eclass_indexes);
}

/*
 * A link for con's join with ref on every column of ref's unique index,
 * or NULL.
 */
static ForeignKeyOptInfo *
unique_key_link(PlannerInfo *root, RelOptInfo *ref, IndexOptInfo *index,
				RelOptInfo *con)
{
	EquivalenceClass *ecs[INDEX_MAX_KEYS];
	EquivalenceMember *refems[INDEX_MAX_KEYS];
	EquivalenceMember *conems[INDEX_MAX_KEYS];
	ForeignKeyOptInfo *fk;
	int			k;

	/* the classes first: most candidates fail here, before any catalog lookup */
	for (k = 0; k < index->nkeycolumns; k++)
	{
		ecs[k] = find_equated_column(root, ref, index->indexkeys[k], con,
									 index->opfamily[k], &refems[k], &conems[k]);
		if (ecs[k] == NULL)
			return NULL;
	}
	fk = makeNode(ForeignKeyOptInfo);
	fk->con_relid = con->relid;
	fk->ref_relid = ref->relid;
	fk->nkeys = index->nkeycolumns;
	for (k = 0; k < index->nkeycolumns; k++)
	{
		fk->conkey[k] = member_var(conems[k])->varattno;
		fk->confkey[k] = index->indexkeys[k];
		fk->conpfeqop[k] = get_opfamily_member(index->opfamily[k], refems[k]->em_datatype,
											   conems[k]->em_datatype,
											   BTEqualStrategyNumber);
		/* PostgreSQL matches the link to a class through the operator's families */
		if (!OidIsValid(fk->conpfeqop[k]) ||
			!equal(get_mergejoin_opfamilies(fk->conpfeqop[k]), ecs[k]->ec_opfamilies))
			return NULL;
		if (!could_match(root, member_var(conems[k]), ref))
			return NULL;
	}
	if (too_many_combinations(root, con, fk, conems, ref))
		return NULL;
	return fk;
}

/* Whether index proves its columns' combinations unique, as a btree key of plain columns. */
static bool
usable_key(IndexOptInfo *index)
{
	int			k;

	if (!index->unique || !index->immediate || index->indpred != NIL ||
		index->nkeycolumns < 2 || index->relam != BTREE_AM_OID)
		return false;
	for (k = 0; k < index->nkeycolumns; k++)
		if (index->indexkeys[k] <= 0)
			return false;		/* an expression column */
	return true;
}

static void
add_unique_key_links(PlannerInfo *root)
{
	List	   *links = NIL;
	List	   *declared;
	Index		r;

	for (r = 1; r < root->simple_rel_array_size; r++)
	{
		RelOptInfo *ref = root->simple_rel_array[r];
		ListCell   *lc;

		if (!plain_table(root, ref))
			continue;
		foreach(lc, ref->indexlist)
		{
			IndexOptInfo *index = lfirst(lc);
			Index		c;

			if (!usable_key(index))
				continue;
			for (c = 1; c < root->simple_rel_array_size; c++)
			{
				RelOptInfo *con = root->simple_rel_array[c];
				ForeignKeyOptInfo *fk;

				if (c == r || !plain_table(root, con) || linked(root, c, r))
					continue;
				fk = unique_key_link(root, ref, index, con);
				if (fk != NULL)
					links = lappend(links, fk);
			}
		}
	}
	if (links == NIL)
		return;

	/* PostgreSQL's own matching fills in the classes and drops what fails */
	declared = root->fkey_list;
	root->fkey_list = links;
	match_foreign_keys_to_quals(root);
	root->fkey_list = list_concat(declared, root->fkey_list);
}

/*
 * The joins' estimates are made as the join relations are built, all of
 * them within the join search; the base relations' sizes come first and do
 * not use the links.
 */
static RelOptInfo *
gpuhash_join_search(PlannerInfo *root, int levels_needed, List *initial_rels)
{
	if (gpuhash_unique_key_estimates && gpuhash_enable_join)
		add_unique_key_links(root);
	if (prev_join_search_hook)
		return prev_join_search_hook(root, levels_needed, initial_rels);
	if (enable_geqo && levels_needed >= geqo_threshold)
		return geqo(root, levels_needed, initial_rels);
	return standard_join_search(root, levels_needed, initial_rels);
}

void
gpuhash_key_estimate_init(void)
{
	prev_join_search_hook = join_search_hook;
	join_search_hook = gpuhash_join_search;
}
