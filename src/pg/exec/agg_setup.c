/*
 * agg_setup.c - a GpuHashAggregate's aggregates and group keys, read from
 * its plan into the programs and buffers that the fold (agg_exec.c) runs.
 */
#include "gpuhash_pg.h"

#include "executor/executor.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "agg_acc.h"
#include "agg_exec.h"
#include "agg_groups.h"
#include "join_agg.h"
#include "join_state.h"
#include "scan_filter.h"

static int	add_leaf(GpuJoinState *gj, const GpuAggInstr *in);

static inline bool
is_column(const GpuAggInstr *in)
{
	return in->op == GO_OUTER || in->op == GO_INNER;
}

/*
 * A numeric argument's program as the planner wrote it: alone, or for a
 * CASE the program that picks a row's branch followed by each branch's
 * (join_agg.h).  Each branch becomes a numeric argument of its own, which
 * the fixed-point fold and PostgreSQL's functions run alike; a's scale is
 * its largest branch's, as the sum's display scale can be at most that.
 */
static void
split_branches(GpuAggSpec *a)
{
	int			first = -1;
	int			b = -1;

	for (int k = 0; k < a->ninstr && first < 0; k++)
		if (a->prog[k].op == GO_BRANCH)
			first = k;
	if (first < 0)
	{
		a->scale = a->ninstr > 0 ? a->prog[a->ninstr - 1].scale : 0;
		return;
	}
	for (int k = first; k < a->ninstr; k++)
		a->nbranches += a->prog[k].op == GO_BRANCH;
	a->branches = palloc0(a->nbranches * sizeof(GpuAggSpec));
	a->scale = 0;
	for (int k = first; k < a->ninstr; k++)
	{
		GpuAggSpec *n;

		if (a->prog[k].op == GO_BRANCH)
		{
			n = &a->branches[++b];
			n->kind = a->kind;
			n->restype = a->restype;
			n->argwidth = GPUHASH_NUMERIC;
			n->partial = a->partial;
			n->shape = GS_PROGRAM;
			n->scale = a->prog[k].scale;
			n->prog = &a->prog[k + 1];
			a->scale = Max(a->scale, n->scale);
			continue;
		}
		a->branches[b].ninstr++;
	}
	a->ninstr = first;
}

/*
 * Read the node's aggregates (specs) and group keys (keys), as the planner
 * wrote them (join_agg.h), into gj: each argument's program and its shape,
 * conditions compiled against the scan tuple, numeric columns as shared
 * leaves, and the buffers a chunk of the fold uses.
 */
void
gpuhash_agg_setup(GpuJoinState *gj, List *specs, List *keys, CustomScan *cscan)
{
	TupleDesc	scan_desc = NULL;
	ListCell   *lc;
	int			i = 0;
	int			max_depth;

	gj->ngroupkeys = list_length(keys) / 5;
	gj->group_keys = palloc0(Max(gj->ngroupkeys, 1) * sizeof(GpuAggInstr));
	for (int k = 0; k < gj->ngroupkeys; k++)
	{
		gj->group_keys[k].op = intVal(list_nth(keys, 5 * k));
		gj->group_keys[k].width = intVal(list_nth(keys, 5 * k + 1));
		gj->group_keys[k].col = intVal(list_nth(keys, 5 * k + 2));
		gj->group_keys[k].form = intVal(list_nth(keys, 5 * k + 3));
		gj->group_keys[k].out = intVal(list_nth(keys, 5 * k + 4));
	}
	if (gj->ngroupkeys > 0)
	{
		gj->groups = palloc0(sizeof(GpuAggGroups));
		gj->group_key_buf = palloc(gj->ngroupkeys * FOLD_CHUNK * sizeof(int64));
		gj->dicts = palloc0(gj->ngroupkeys * sizeof(GpuAggDict));
		gj->inner_key_numbers = palloc0(gj->ngroupkeys * sizeof(int64 *));
	}
	gj->agg_tmp_cxt = AllocSetContextCreate(CurrentMemoryContext, "GpuHashAggregate numeric",
											ALLOCSET_SMALL_SIZES);

	gj->naggs = list_length(specs);
	gj->aggs = palloc0(gj->naggs * sizeof(GpuAggSpec));
	max_depth = 0;
	gj->acc = palloc0(gj->naggs * sizeof(GpuAggAcc));
	foreach(lc, specs)
	{
		List	   *l = lfirst(lc);
		GpuAggSpec *a = &gj->aggs[i++];
		int			depth = 0;

		int			first;

		a->kind = intVal(linitial(l));
		a->restype = intVal(lsecond(l));
		a->argwidth = intVal(lthird(l));
		a->partial = intVal(lfourth(l)) != 0;
		a->nconds = intVal(list_nth(l, 4));
		first = 5 + a->nconds;
		a->ninstr = (list_length(l) - first) / 5;
		if (a->nconds > 0)
		{
			/* the joined row's columns begin the scan tuple */
			if (scan_desc == NULL)
			{
				scan_desc = ExecTypeFromTL(cscan->custom_scan_tlist);
				gj->cond_values = palloc0(scan_desc->natts * sizeof(Datum));
				gj->cond_isnull = palloc0(scan_desc->natts * sizeof(bool));
			}
			a->conds = palloc(a->nconds * sizeof(GpuhashScanFilter *));
			for (int k = 0; k < a->nconds; k++)
			{
				List	   *rest;

				a->conds[k] = gpuhash_scan_filter_compile(list_make1(list_nth(l, 5 + k)),
														  scan_desc, &rest);
				if (a->conds[k] == NULL || rest != NIL)
					elog(ERROR, "gpuhash: an aggregate's condition cannot be compiled");
				a->cond_calls |= gpuhash_scan_filter_calls(a->conds[k]);
			}
		}
		a->prog = palloc0(Max(a->ninstr, 1) * sizeof(GpuAggInstr));
		for (int k = 0; k < a->ninstr; k++)
		{
			GpuAggInstr *in = &a->prog[k];

			in->op = intVal(list_nth(l, first + 5 * k));
			in->width = intVal(list_nth(l, first + 1 + 5 * k));
			in->col = intVal(list_nth(l, first + 2 + 5 * k));
			in->value = pg_strtoint64(strVal(list_nth(l, first + 3 + 5 * k)));
			in->scale = intVal(list_nth(l, first + 4 + 5 * k));
			in->leaf = -1;
		}
		a->shape = GS_PROGRAM;
		if (a->argwidth == GPUHASH_NUMERIC)
		{
			split_branches(a);
			for (int b = 0; b < Max(a->nbranches, 1); b++)
			{
				GpuAggSpec *n = a->nbranches > 0 ? &a->branches[b] : a;

				depth = 0;
				for (int k = 0; k < n->ninstr; k++)
				{
					GpuAggInstr *in = &n->prog[k];

					if (in->op == GO_OUTER || in->op == GO_INNER)
						in->leaf = add_leaf(gj, in);
					depth += in->op == GO_OUTER || in->op == GO_INNER || in->op == GO_CONST ? 1 :
						in->op == GO_NEG ? 0 : -1;
					max_depth = Max(max_depth, depth);
				}
			}
			continue;
		}
		a->scale = 0;
		if (a->ninstr == 1 && is_column(&a->prog[0]))
			a->shape = GS_COLUMN;
		else if (a->ninstr == 3 && is_column(&a->prog[0]) && is_column(&a->prog[1]) &&
				 a->prog[2].op == GO_ADD)
			a->shape = GS_ADD2;
		if (a->kind == GA_COUNT_DISTINCT)
		{
			/*
			 * The planner makes it only grouped and never partial: serial, or
			 * combined by the participants (agg_compile.c, agg_path.c).
			 */
			if (gj->ngroupkeys == 0 || gj->ngroupkeys > GPUHASH_DISTINCT_MAX_KEYS || a->partial)
				elog(ERROR, "gpuhash: count(DISTINCT) needs from 1 to %d group keys and no partial state",
					 GPUHASH_DISTINCT_MAX_KEYS);
			if (gj->distinct == NULL)
				gj->distinct = palloc0(gj->naggs * sizeof(GpuAggGroups));
		}
	}
#ifdef HAVE_INT128
	if (max_depth > 0)
	{
		gj->fixed_scratch = palloc0(sizeof(GpuAggScratch));
		for (int l = 0; l < max_depth; l++)
		{
			gj->fixed_scratch->val[l] = palloc(FOLD_CHUNK * sizeof(int128));
			gj->fixed_scratch->state[l] = palloc(FOLD_CHUNK);
		}
	}
#endif
}

/*
 * The slot of a numeric column in the chunk's decoded columns, shared by
 * every argument that reads it at the same scale.
 */
static int
add_leaf(GpuJoinState *gj, const GpuAggInstr *in)
{
#ifdef HAVE_INT128
	GpuAggLeaf *lf;

	for (int i = 0; i < gj->nleaves; i++)
		if (gj->leaves[i].op == in->op && gj->leaves[i].col == in->col &&
			gj->leaves[i].width == in->width && gj->leaves[i].scale == in->scale)
			return i;
	gj->leaves = gj->leaves ? repalloc(gj->leaves, (gj->nleaves + 1) * sizeof(GpuAggLeaf)) :
		palloc(sizeof(GpuAggLeaf));
	lf = &gj->leaves[gj->nleaves];
	lf->op = in->op;
	lf->col = in->col;
	lf->width = in->width;
	lf->scale = in->scale;
	lf->val = palloc(FOLD_CHUNK * sizeof(int128));
	lf->state = palloc(FOLD_CHUNK);
	lf->memo = in->width == GPUHASH_NUMERIC ?
		palloc0(LEAF_MEMO_SLOTS * sizeof(GpuAggLeafMemo)) : NULL;
	return gj->nleaves++;
#else
	return -1;
#endif
}
