/*
 * agg_exec.c - executing a GpuHashAggregate: the join of join_exec.c, with
 * each matching row folded into the aggregates instead of emitted
 * (join_agg.h).
 *
 * The outer side is read and probed in batches as for a join; the matches
 * of a batch (pairs of row numbers, or a flag per row) are then folded in
 * one loop that reads the rows' integer columns where the batch stores
 * them, and the inner value from the table's payload when it is kept there.
 * When the join has clauses beyond the hash clause, each row is formed and
 * checked first, as the join would.  At the end the node emits one row, or
 * with GROUP BY one row per group (agg_groups.c), each checked against the
 * query's HAVING clause when the node has it.
 *
 * The node is a GpuHashJoin's state with exec methods of its own: this
 * file calls join_exec.c's and join_parallel.c's functions, never the
 * reverse.  Its other parts are files of their own, kept out of the fold's
 * way: the aggregates read from the plan (agg_setup.c), an argument's
 * interpreter (agg_eval.c), the groups written out and combined again
 * (agg_combine.c), the parallel callbacks (agg_parallel.c) and EXPLAIN
 * (agg_explain.c).
 */
#include "gpuhash_pg.h"

#include "catalog/pg_type_d.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "agg_acc.h"
#include "agg_combine.h"
#include "agg_eval.h"
#include "agg_exec.h"
#include "agg_groups.h"
#include "numeric_fixed.h"
#include "join_agg.h"
#include "join_right.h"
#include "join_state.h"
#include "scan_filter.h"

/* The text keys' numbers start again (their memory is the groups'). */
static void
reset_text_keys(GpuJoinState *gj)
{
	for (int k = 0; k < gj->ngroupkeys; k++)
	{
		gpuhash_dict_init(&gj->dicts[k], gj->groups->cxt,
						  gj->group_keys[k].width == GPUHASH_BPCHAR_KEY);
		gj->inner_key_numbers[k] = NULL;
	}
}

/* where a group's accumulators live, and a numeric sum beside them */
static inline MemoryContext
acc_context(GpuJoinState *gj)
{
	return gj->ngroupkeys > 0 ? gj->groups->cxt : gj->css.ss.ps.state->es_query_cxt;
}

static void
rescan_gpu_agg(CustomScanState *node)
{
	GpuJoinState *gj = (GpuJoinState *) node;

	gpuhash_join_rescan(node);
	for (int i = 0; i < gj->naggs; i++)
		if (gj->acc[i].spill != (Datum) 0)
			pfree(DatumGetPointer(gj->acc[i].spill));
	memset(gj->acc, 0, gj->naggs * sizeof(GpuAggAcc));
	if (gj->groups && gj->groups->cxt)
		gpuhash_agg_restart_groups(gj);
	gj->agg_folded = false;
	gj->agg_next = 0;
	/* a shared spill's state is set up again by the leader's reinit_dsm */
	gpuhash_agg_close_splits(gj);
	if (gj->spill != NULL && gj->spill_shared == NULL)
	{
		gpuhash_spill_close(gj->spill);
		gj->spill = NULL;
	}
	gj->combining = false;
	memset(&gj->spill_stats, 0, sizeof(gj->spill_stats));
}

/*
 * Add one non-NULL argument value v to acc (count, sum, avg, min, max);
 * the row-at-a-time fold and the grouped one share it.
 */
static pg_attribute_always_inline void
add_value(const GpuAggSpec *a, GpuAggAcc *acc, int64 v)
{
	acc->count++;
	switch (a->kind)
	{
		case GA_SUM:
		case GA_AVG:
#ifdef HAVE_INT128
			if (a->argwidth == 8)
			{
				acc->wide_sum += v;
				break;
			}
#endif
			/* PostgreSQL's int8 state wraps (-fwrapv); so does this */
			acc->sum = (int64) ((uint64) acc->sum + (uint64) v);
			break;
		case GA_MIN:
		case GA_MAX:
			if (!acc->have || (a->kind == GA_MIN ? v < acc->best : v > acc->best))
				acc->best = v;
			break;
		default:
			break;
	}
	acc->have = true;
}

/*
 * count(DISTINCT) i's value v in group: counted when the pair is new.  The
 * pairs are a group table of their own whose keys are the group's number
 * and the value; a group's number holds until the groups start again, and
 * the pairs start again with them (gpuhash_agg_restart_groups).
 */
void
gpuhash_agg_add_distinct(GpuJoinState *gj, int i, uint32 group, int64 v)
{
	GpuAggGroups *seen = &gj->distinct[i];
	int64		pair[2] = {(int64) group, v};
	uint64		before = seen->ngroups;

	(void) gpuhash_groups_find(seen, pair, 0, true);
	if (seen->ngroups > before)
		((GpuAggAcc *) gpuhash_group_acc(gj->groups, group))[i].count++;
}

/*
 * The accumulators of one joined row's group (outer columns ov/on, inner
 * columns iv/in), or the node's only ones without GROUP BY.
 */
static GpuAggAcc *
row_accumulators(GpuJoinState *gj, const Datum *ov, const bool *on, const Datum *iv,
				 const bool *in)
{
	int64		keys[GPUHASH_AGG_MAX_KEYS];
	uint8		nulls = 0;

	if (gj->ngroupkeys == 0)
		return gj->acc;
	for (int k = 0; k < gj->ngroupkeys; k++)
	{
		const GpuAggInstr *key = &gj->group_keys[k];

		if (!gpuhash_text_key(key))
		{
			if (!gpuhash_agg_column_value(key, ov, on, iv, in, &keys[k]))
				nulls |= 1 << k;
			else if (key->form == GK_YEAR)
				keys[k] = gpuhash_agg_year_start(keys[k]);
		}
		else if ((key->op == GO_OUTER ? on : in)[key->col])
			nulls |= 1 << k;
		else
			keys[k] = gpuhash_dict_number(&gj->dicts[k], PointerGetDatum(
					(key->op == GO_OUTER ? gj->outer.arena : gj->inner.arena) +
					(key->op == GO_OUTER ? ov : iv)[key->col]), true);
	}
	return gpuhash_group_acc(gj->groups, gpuhash_groups_find(gj->groups, keys, nulls, true));
}

/*
 * The numeric columns the arguments read, for one joined row, into row 0
 * of the leaves (the row-at-a-time fold's chunk of one).
 */
static void
decode_row_leaves(GpuJoinState *gj, const GpuAggRow *row)
{
#ifdef HAVE_INT128
	for (int i = 0; i < gj->nleaves; i++)
	{
		GpuAggLeaf *lf = &gj->leaves[i];
		const Datum *vals = lf->op == GO_OUTER ? row->ov : row->iv;
		const bool *nulls = lf->op == GO_OUTER ? row->on : row->in;
		const char *arena = lf->op == GO_OUTER ? row->oarena : row->iarena;

		if (nulls[lf->col])
			lf->state[0] = LEAF_NULL;
		else if (lf->width != GPUHASH_NUMERIC)
		{
			lf->val[0] = gpuhash_agg_datum_int(vals[lf->col], lf->width);
			lf->state[0] = LEAF_OK;
		}
		else
			lf->state[0] = gpuhash_numeric_fixed(PointerGetDatum(arena + vals[lf->col]),
												 lf->scale, &lf->val[0]) == FIXED_OK ?
				LEAF_OK : LEAF_SLOW;
	}
#endif
}

/*
 * Fold numeric argument a of one joined row, evaluated to v with state
 * (FixedLeafState), into acc; row is needed only where the state is
 * LEAF_SLOW.
 */
static inline void
fold_fixed_value(GpuJoinState *gj, const GpuAggSpec *a, GpuAggAcc *acc, uint8 state, int128 v,
				 const GpuAggRow *row, MemoryContext acc_cxt)
{
#ifdef HAVE_INT128
	if (likely(state == LEAF_OK))
		gpuhash_fixed_add(a, acc, v, a->scale, acc_cxt, gj->agg_tmp_cxt);
	else if (state == LEAF_SLOW)
		gpuhash_fixed_fold_slow(a, acc, row, acc_cxt, gj->agg_tmp_cxt);
#endif
}

#ifdef HAVE_INT128
/*
 * Fold the value v (state: FixedLeafState) of CASE branch n of a, the
 * branch a row took, into acc: raised to a's scale, or by PostgreSQL's
 * functions from that branch where the integers cannot carry it.
 */
static inline void
fold_branch_value(GpuJoinState *gj, const GpuAggSpec *a, const GpuAggSpec *n, GpuAggAcc *acc,
				  uint8 state, int128 v, const GpuAggRow *row, MemoryContext acc_cxt)
{
	if (state == LEAF_OK && n->scale < a->scale &&
		__builtin_mul_overflow(v, gpuhash_fixed_pow10(a->scale - n->scale), &v))
		state = LEAF_SLOW;
	if (likely(state == LEAF_OK))
		gpuhash_fixed_add(a, acc, v, n->scale, acc_cxt, gj->agg_tmp_cxt);
	else if (state == LEAF_SLOW)
		gpuhash_fixed_fold_slow(n, acc, row, acc_cxt, gj->agg_tmp_cxt);
}

/*
 * The branch of a numeric CASE (a->nbranches) that one joined row takes,
 * or NULL where it is the NULL one.
 */
static inline const GpuAggSpec *
row_branch(GpuJoinState *gj, const GpuAggSpec *a, const Datum *ov, const bool *on,
		   const Datum *iv, const bool *in)
{
	bool		truth[GPUHASH_AGG_MAX_CONDS];
	int64		b;

	if (a->nconds > 0)
		gpuhash_agg_cond_truths(gj, a, ov, on, iv, in, truth);
	if (!gpuhash_agg_eval_program(a, ov, on, iv, in, truth, &b) || b < 0 || b >= a->nbranches ||
		a->branches[b].ninstr == 0)
		return NULL;
	return &a->branches[b];
}
#endif

/* Fold one joined row into its accumulators accs. */
static pg_attribute_always_inline void
fold(GpuJoinState *gj, GpuAggAcc *accs, const Datum *ov, const bool *on, const Datum *iv,
	 const bool *in)
{
	GpuAggRow	row = {ov, on, gj->outer.arena, iv, in, gj->inner.arena};
	bool		truth[GPUHASH_AGG_MAX_CONDS];

	if (gj->nleaves > 0)
		decode_row_leaves(gj, &row);
	for (int i = 0; i < gj->naggs; i++)
	{
		const GpuAggSpec *a = &gj->aggs[i];
		GpuAggAcc  *acc = &accs[i];
		int64		v;

		if (a->kind == GA_COUNT_STAR)
		{
			acc->count++;
			continue;
		}
#ifdef HAVE_INT128
		if (a->argwidth == GPUHASH_NUMERIC)
		{
			const int128 *fv;
			const uint8 *fs;

			if (a->nbranches > 0)
			{
				const GpuAggSpec *n = row_branch(gj, a, ov, on, iv, in);

				if (n != NULL)
				{
					gpuhash_fixed_chunk(n, gj->leaves, 1, gj->fixed_scratch, &fv, &fs);
					fold_branch_value(gj, a, n, acc, fs[0], fv[0], &row, acc_context(gj));
				}
				continue;
			}
			gpuhash_fixed_chunk(a, gj->leaves, 1, gj->fixed_scratch, &fv, &fs);
			fold_fixed_value(gj, a, acc, fs[0], fv[0], &row, acc_context(gj));
			continue;
		}
#endif
		if (a->nconds > 0)
			gpuhash_agg_cond_truths(gj, a, ov, on, iv, in, truth);
		if (!gpuhash_agg_eval_arg(a, ov, on, iv, in, truth, &v))
			continue;
		if (a->kind == GA_COUNT_DISTINCT)
			gpuhash_agg_add_distinct(gj, i, gpuhash_group_of_acc(gj->groups, accs), v);
		else
			add_value(a, acc, v);
	}
}

/*
 * The join's clauses beyond the hash clause, and an anti join's filter, on
 * one joined row (semi and anti joins applied their join clauses when they
 * matched).
 */
static bool
row_passes(GpuJoinState *gj, uint64 orow, bool matched, uint64 kidx, uint64 ref)
{
	ExprContext *econtext = gj->css.ss.ps.ps_ExprContext;
	bool		ok;

	econtext->ecxt_scantuple = gpuhash_join_scan_tuple(gj, orow, matched, kidx, ref);
	ok = (gj->jointype != JOIN_INNER || gj->join_qual == NULL ||
		  ExecQual(gj->join_qual, econtext)) &&
		(gj->row_qual == NULL || ExecQual(gj->row_qual, econtext));
	ResetExprContext(econtext);
	return ok;
}

static inline const Datum *
store_row(const GpuhashStore *st, uint64 row)
{
	return (const Datum *) (st->rows + row * st->stride);
}

/* The key of batch row orow (a left join's rows with NULL keys have none). */
static inline uint64
key_index(const GpuJoinState *gj, uint64 orow)
{
	return gj->row_key ? gj->row_key[orow] : orow;
}

/*
 * The inner columns of a joined row: from the table when it keeps them (the
 * key equals the probe key; the other column is the payload), else from
 * the build row; all NULL for a left join's row that matched nothing.
 */
static inline void
inner_columns(GpuJoinState *gj, uint64 orow, uint64 brow, bool matched, Datum *iv, bool *in,
			  const Datum **ivp, const bool **inp)
{
	if (!matched)
	{
		*ivp = gj->null_inner;
		*inp = gj->null_inner_flags;
	}
	else if (gj->inner_in_table)
	{
		for (int c = 0; c < gj->n_inner; c++)
		{
			iv[c] = c == gj->inner_val ?
				gpuhash_payload_datum(brow, gj->payload_width) :
				gpuhash_inner_key_datum(gj, c,
										gpuhash_key_at(gj->outer_keys->ptr, gj->key_width,
													   key_index(gj, orow)));
			in[c] = false;
		}
		*ivp = iv;
		*inp = in;
	}
	else if (gj->inner.ncols > 0)
	{
		*ivp = store_row(&gj->inner, brow);
		*inp = (const bool *) (*ivp + gj->inner.ncols);
	}
	else
	{
		*ivp = NULL;
		*inp = NULL;
	}
}

/*
 * Joined row j of a chunk (outer row orow[j], build row brow[j] or none)
 * as the stores hold it; iv/in: room for inner columns kept in the table.
 */
static inline void
chunk_row(GpuJoinState *gj, const uint32 *orow, const uint64 *brow, int j, GpuAggRow *row,
		  Datum *iv, bool *in)
{
	const GpuhashStore *os = &gj->outer;

	row->ov = store_row(os, orow[j]);
	row->on = (const bool *) (row->ov + os->ncols);
	row->oarena = os->arena;
	row->iarena = gj->inner.arena;
	inner_columns(gj, orow[j], brow ? brow[j] : 0, brow != NULL, iv, in, &row->iv, &row->in);
}

/* d's low width bytes as a signed integer, without a branch on width */
static inline int64
sign_extend(uint64 d, int width)
{
	int			shift = 64 - 8 * width;

	return (int64) (d << shift) >> shift;
}

/*
 * The values of one column (ins) on n joined rows, and whether each is
 * NULL.  Each source gets its own loop: where the column lies does not
 * change from row to row.
 */
static void
gather_column(GpuJoinState *gj, const GpuAggInstr *ins, const uint32 *orows,
			  const uint64 *brows, int n, int64 *v, bool *isnull)
{
	int			w = ins->width;

	if (ins->op == GO_OUTER)
	{
		const GpuhashStore *st = &gj->outer;

		for (int j = 0; j < n; j++)
		{
			const Datum *row = store_row(st, orows[j]);

			isnull[j] = ((const bool *) (row + st->ncols))[ins->col];
			v[j] = sign_extend(row[ins->col], w);
		}
	}
	else if (brows == NULL)
	{
		/* a left join's rows that matched nothing */
		memset(v, 0, n * sizeof(int64));
		memset(isnull, 1, n);
	}
	else if (!gj->inner_in_table)
	{
		const GpuhashStore *st = &gj->inner;

		for (int j = 0; j < n; j++)
		{
			const Datum *row = store_row(st, brows[j]);

			isnull[j] = ((const bool *) (row + st->ncols))[ins->col];
			v[j] = sign_extend(row[ins->col], w);
		}
	}
	else if (ins->col == gj->inner_val)
	{
		/* the payload: the inner value, as wide as the table keeps it */
		int			pw = Min(w, gj->payload_width);

		for (int j = 0; j < n; j++)
			v[j] = sign_extend(brows[j], pw);
		memset(isnull, 0, n);
	}
	else
	{
		/* an inner key column: equal to the probe key, or its half */
		for (int j = 0; j < n; j++)
			v[j] = gpuhash_inner_key_value(gj, ins->col,
										   gpuhash_key_at(gj->outer_keys->ptr, gj->key_width,
														  key_index(gj, orows[j])));
		memset(isnull, 0, n);
	}
}

/*
 * The argument of a on m joined rows (outer row orow[j], build row brow[j]
 * when there is an inner side) into v, and whether each is NULL: gather
 * each column the argument reads, then combine them, each in a loop of its
 * own, so that what the row-at-a-time fold (fold()) decides again for every
 * row is decided once a chunk (bench/NOTES.md, section 13).
 */
static void
arg_values(GpuJoinState *gj, const GpuAggSpec *a, const uint32 *orow, const uint64 *brow,
		   int m, int64 *v, bool *vnull)
{
	int64		y[FOLD_CHUNK];
	bool		ynull[FOLD_CHUNK];
	bool		truth[GPUHASH_AGG_MAX_CONDS];

	if (a->shape == GS_PROGRAM)
	{
		for (int j = 0; j < m; j++)
		{
			GpuAggRow	r;
			Datum		iv[GJ_INLINE_MAX_COLS];
			bool		in[GJ_INLINE_MAX_COLS];

			chunk_row(gj, orow, brow, j, &r, iv, in);
			if (a->nconds > 0)
				gpuhash_agg_cond_truths(gj, a, r.ov, r.on, r.iv, r.in, truth);
			vnull[j] = !gpuhash_agg_eval_program(a, r.ov, r.on, r.iv, r.in, truth, &v[j]);
		}
		return;
	}
	gather_column(gj, &a->prog[0], orow, brow, m, v, vnull);
	if (a->shape == GS_ADD2)
	{
		int			w = a->prog[2].width;
		bool		bad = false;

		gather_column(gj, &a->prog[1], orow, brow, m, y, ynull);
		for (int j = 0; j < m; j++)
		{
			int64		r;
			bool		ovf = __builtin_add_overflow(v[j], y[j], &r);

			vnull[j] |= ynull[j];
			bad |= (!vnull[j]) & (ovf | (r != sign_extend((uint64) r, w)));
		}
		/* PostgreSQL's error, for the first row that overflows */
		for (int j = 0; bad && j < m; j++)
		{
			int64		r;

			if (vnull[j])
				continue;
			if (__builtin_add_overflow(v[j], y[j], &r))
				gpuhash_agg_out_of_range(8);
			(void) gpuhash_agg_fit(r, w);
		}
		for (int j = 0; j < m; j++)
			v[j] = (int64) ((uint64) v[j] + (uint64) y[j]);
	}
}

/* Accumulate m argument values of a into acc, one loop per kind. */
static void
accumulate(const GpuAggSpec *a, GpuAggAcc *acc, const int64 *v, const bool *vnull, int m)
{
	int64		count = 0;

	switch (a->kind)
	{
		case GA_COUNT:
			for (int j = 0; j < m; j++)
				count += !vnull[j];
			break;
		case GA_SUM:
		case GA_AVG:
#ifdef HAVE_INT128
			if (a->argwidth == 8)
			{
				int128		s = 0;

				for (int j = 0; j < m; j++)
				{
					count += !vnull[j];
					s += vnull[j] ? 0 : v[j];
				}
				acc->wide_sum += s;
				break;
			}
#endif
			{
				/* PostgreSQL's int8 state wraps (-fwrapv); so does this */
				uint64		s = 0;

				for (int j = 0; j < m; j++)
				{
					count += !vnull[j];
					s += vnull[j] ? 0 : (uint64) v[j];
				}
				acc->sum = (int64) ((uint64) acc->sum + s);
			}
			break;
		case GA_MIN:
		case GA_MAX:
			for (int j = 0; j < m; j++)
			{
				if (vnull[j])
					continue;
				count++;
				if (!acc->have ||
					(a->kind == GA_MIN ? v[j] < acc->best : v[j] > acc->best))
					acc->best = v[j];
				acc->have = true;
			}
			break;
		default:
			break;
	}
	acc->count += count;
	acc->have |= count > 0;
}

/* The same for rows of many groups: row j's accumulator is aggregate i of group[j]. */
static void
accumulate_grouped(GpuJoinState *gj, int i, const uint32 *group, const int64 *v,
				   const bool *vnull, int m)
{
	const GpuAggSpec *a = &gj->aggs[i];
	const GpuAggGroups *g = gj->groups;

	for (int j = 0; j < m; j++)
	{
		GpuAggAcc  *acc = (GpuAggAcc *) gpuhash_group_acc(g, group[j]) + i;

		if (a->kind == GA_COUNT_STAR)
			acc->count++;
		else if (!vnull[j])
			add_value(a, acc, v[j]);
	}
}

/*
 * A varlena in short form of at most 8 bytes, header included, as one
 * integer (its unused high bytes 0): the header byte holds the length, so
 * two values have the same integer only when they have the same bytes.
 */
static inline bool
short_varlena_bytes(const char *p, uint64 *bytes)
{
	uint64		b = 0;
	int			n;

	/* a toast pointer's header looks short too, and says 0 bytes */
	if (!VARATT_IS_SHORT(p) || VARATT_IS_EXTERNAL(p) || (n = VARSIZE_SHORT(p)) > 8)
		return false;
	for (int i = 0; i < n; i++)
		b |= (uint64) (uint8) p[i] << (8 * i);
	*bytes = b;
	return true;
}

typedef struct TextKeyMemo
{
	uint64		bytes;			/* short_varlena_bytes, 0 when empty */
	int64		number;
} TextKeyMemo;

/*
 * The numbers of text key k's values on n joined rows (agg_groups.h), and
 * whether each is NULL.  A build row's number is kept once found: the
 * inner side is read once, its rows joined many times.
 */
static void
gather_text_key(GpuJoinState *gj, int k, const uint32 *orows, const uint64 *brows, int n,
				int64 *v, bool *isnull)
{
	const GpuAggInstr *key = &gj->group_keys[k];
	GpuAggDict *d = &gj->dicts[k];
	const GpuhashStore *st = key->op == GO_OUTER ? &gj->outer : &gj->inner;
	int64	   *known = NULL;
	TextKeyMemo memo[32] = {{0}};	/* short values of this chunk and their numbers */

	if (key->op == GO_INNER && brows == NULL)
	{
		/* a left join's rows that matched nothing */
		memset(v, 0, n * sizeof(int64));
		memset(isnull, 1, n);
		return;
	}
	if (key->op == GO_INNER)
	{
		/* by-reference inner columns keep the build rows (set_inline_ok) */
		Assert(!gj->inner_in_table);
		if (gj->inner_key_numbers[k] == NULL)
		{
			gj->inner_key_numbers[k] =
				MemoryContextAllocHuge(gj->groups->cxt, Max(st->nrows, 1) * sizeof(int64));
			memset(gj->inner_key_numbers[k], 0xFF, st->nrows * sizeof(int64));
		}
		known = gj->inner_key_numbers[k];
	}
	for (int j = 0; j < n; j++)
	{
		uint64		r = known ? brows[j] : orows[j];
		const Datum *row = store_row(st, r);

		isnull[j] = ((const bool *) (row + st->ncols))[key->col];
		v[j] = 0;
		if (isnull[j])
			continue;
		if (known && known[r] >= 0)
		{
			v[j] = known[r];
			continue;
		}
		else
		{
			const char *val = st->arena + row[key->col];
			uint64		bytes;

			/*
			 * The value numbered last, or a short value seen lately, costs
			 * a compare instead of a hash and a probe of the dictionary:
			 * TPC-H q01's flags take three values and two.
			 */
			if (short_varlena_bytes(val, &bytes))
			{
				TextKeyMemo *slot = &memo[(bytes * UINT64CONST(0x9E3779B97F4A7C15)) >> 59];

				if (slot->bytes != bytes)
				{
					slot->number = gpuhash_dict_number(d, PointerGetDatum(val), true);
					slot->bytes = bytes;
				}
				v[j] = slot->number;
			}
			else
				v[j] = gpuhash_dict_number(d, PointerGetDatum(val), true);
		}
		if (known)
			known[r] = v[j];
	}
}

/* The groups of m joined rows, their keys gathered a column at a time. */
static void
find_groups(GpuJoinState *gj, const uint32 *orow, const uint64 *brow, int m, uint32 *group)
{
	int64	   *keys[GPUHASH_AGG_MAX_KEYS];
	uint8		nulls[FOLD_CHUNK];
	bool		isnull[FOLD_CHUNK];

	memset(nulls, 0, m);
	for (int k = 0; k < gj->ngroupkeys; k++)
	{
		keys[k] = gj->group_key_buf + k * FOLD_CHUNK;
		if (gpuhash_text_key(&gj->group_keys[k]))
			gather_text_key(gj, k, orow, brow, m, keys[k], isnull);
		else
		{
			gather_column(gj, &gj->group_keys[k], orow, brow, m, keys[k], isnull);
			if (gj->group_keys[k].form == GK_YEAR)
				gpuhash_agg_year_starts(keys[k], isnull, m);
		}
		for (int j = 0; j < m; j++)
			nulls[j] |= isnull[j] << k;
	}
	if (gpuhash_groups_find_batch(gj->groups, m, keys, nulls, group))
		gj->stats.dense_group_rows += m;
}

/* Decode the numeric columns the arguments read, for m joined rows. */
static void
decode_leaves(GpuJoinState *gj, const uint32 *orow, const uint64 *brow, int m)
{
#ifdef HAVE_INT128
	for (int i = 0; i < gj->nleaves; i++)
	{
		GpuAggLeaf *lf = &gj->leaves[i];
		/* a numeric inner column keeps the build rows (set_inline_ok) */
		const GpuhashStore *st = lf->op == GO_OUTER ? &gj->outer : &gj->inner;

		if (lf->width != GPUHASH_NUMERIC)
		{
			/* an integer cast to numeric: scale 0, from wherever the column lies */
			GpuAggInstr col = {lf->op, lf->width, lf->col, 0, 0, -1};
			int64		v[FOLD_CHUNK];
			bool		isnull[FOLD_CHUNK];

			gather_column(gj, &col, orow, brow, m, v, isnull);
			for (int j = 0; j < m; j++)
			{
				lf->val[j] = v[j];
				lf->state[j] = isnull[j] ? LEAF_NULL : LEAF_OK;
			}
			continue;
		}
		if (lf->op == GO_INNER && brow == NULL)
		{
			/* a left join's rows that matched nothing */
			memset(lf->state, LEAF_NULL, m);
			continue;
		}
		for (int j = 0; j < m; j++)
		{
			const Datum *row = store_row(st, lf->op == GO_OUTER ? orow[j] : brow[j]);
			const char *p = st->arena + row[lf->col];
			uint64		bytes;
			GpuAggLeafMemo *slot;

			if (((const bool *) (row + st->ncols))[lf->col])
			{
				lf->state[j] = LEAF_NULL;
				continue;
			}
			if (!short_varlena_bytes(p, &bytes))
			{
				lf->state[j] = gpuhash_numeric_fixed(PointerGetDatum(p), lf->scale,
													 &lf->val[j]) == FIXED_OK ? LEAF_OK : LEAF_SLOW;
				continue;
			}
			/* the same bytes are the same value: converted once */
			slot = &lf->memo[(bytes * UINT64CONST(0x9E3779B97F4A7C15)) >> 58];
			if (slot->bytes != bytes)
			{
				slot->state = gpuhash_numeric_fixed(PointerGetDatum(p), lf->scale,
													&slot->val) == FIXED_OK ? LEAF_OK : LEAF_SLOW;
				slot->bytes = bytes;
			}
			lf->state[j] = slot->state;
			lf->val[j] = slot->val;
		}
	}
#endif
}

#ifdef HAVE_INT128
/*
 * fold_fixed_rows for a numeric CASE: each row's branch, then each branch's
 * program over the chunk (its columns are decoded once for all branches),
 * folded for the rows that took it.
 */
static void
fold_case_rows(GpuJoinState *gj, int i, const uint32 *orow, const uint64 *brow, int m,
			   const uint32 *group)
{
	const GpuAggSpec *a = &gj->aggs[i];
	MemoryContext cxt = acc_context(gj);
	const GpuAggSpec *taken[FOLD_CHUNK];

	for (int j = 0; j < m; j++)
	{
		GpuAggRow	r;
		Datum		iv[GJ_INLINE_MAX_COLS];
		bool		in[GJ_INLINE_MAX_COLS];

		chunk_row(gj, orow, brow, j, &r, iv, in);
		taken[j] = row_branch(gj, a, r.ov, r.on, r.iv, r.in);
	}
	for (int b = 0; b < a->nbranches; b++)
	{
		const GpuAggSpec *n = &a->branches[b];
		const int128 *v;
		const uint8 *state;
		int			j;

		for (j = 0; j < m && taken[j] != n; j++)
			;
		if (j == m)
			continue;
		gpuhash_fixed_chunk(n, gj->leaves, m, gj->fixed_scratch, &v, &state);
		for (; j < m; j++)
		{
			GpuAggAcc  *acc;
			GpuAggRow	row = {0};
			Datum		iv[GJ_INLINE_MAX_COLS];
			bool		in[GJ_INLINE_MAX_COLS];

			if (taken[j] != n)
				continue;
			acc = group ? (GpuAggAcc *) gpuhash_group_acc(gj->groups, group[j]) + i : &gj->acc[i];
			/* a value of a smaller scale may overflow when raised to a's */
			if (unlikely(state[j] == LEAF_SLOW || (state[j] == LEAF_OK && n->scale < a->scale)))
				chunk_row(gj, orow, brow, j, &row, iv, in);
			fold_branch_value(gj, a, n, acc, state[j], v[j], &row, cxt);
		}
	}
}
#endif

/*
 * Fold the numeric argument of aggregate i on m joined rows into row j's
 * group (group[j]), or the node's one accumulator without GROUP BY.
 */
static void
fold_fixed_rows(GpuJoinState *gj, int i, const uint32 *orow, const uint64 *brow, int m,
				const uint32 *group)
{
#ifdef HAVE_INT128
	const GpuAggSpec *a = &gj->aggs[i];
	MemoryContext cxt = acc_context(gj);
	const int128 *v;
	const uint8 *state;

	if (a->nbranches > 0)
	{
		fold_case_rows(gj, i, orow, brow, m, group);
		return;
	}
	gpuhash_fixed_chunk(a, gj->leaves, m, gj->fixed_scratch, &v, &state);
	for (int j = 0; j < m; j++)
	{
		GpuAggAcc  *acc = group ? (GpuAggAcc *) gpuhash_group_acc(gj->groups, group[j]) + i :
			&gj->acc[i];

		GpuAggRow	row = {0};
		Datum		iv[GJ_INLINE_MAX_COLS];
		bool		in[GJ_INLINE_MAX_COLS];

		/* NaN, or too wide for 128 bits: the row again, by numeric functions */
		if (unlikely(state[j] == LEAF_SLOW))
			chunk_row(gj, orow, brow, j, &row, iv, in);
		fold_fixed_value(gj, a, acc, state[j], v[j], &row, cxt);
	}
#else
	elog(ERROR, "gpuhash: numeric aggregates need 128-bit integers");
#endif
}

/*
 * Fold n joined rows (outer row orows[j], build row brows[j] when there is
 * an inner side) into every aggregate, a chunk at a time.
 */
static void
fold_rows(GpuJoinState *gj, const uint32 *orows, const uint64 *brows, uint64 n)
{
	int64		v[FOLD_CHUNK];
	bool		vnull[FOLD_CHUNK];
	uint32		group[FOLD_CHUNK];

	for (uint64 start = 0; start < n; start += FOLD_CHUNK)
	{
		int			m = (int) Min(FOLD_CHUNK, n - start);
		const uint32 *orow = orows + start;
		const uint64 *brow = brows ? brows + start : NULL;

		CHECK_FOR_INTERRUPTS();
		if (gj->ngroupkeys > 0)
			find_groups(gj, orow, brow, m, group);
		if (gj->nleaves > 0)
			decode_leaves(gj, orow, brow, m);
		for (int i = 0; i < gj->naggs; i++)
		{
			const GpuAggSpec *a = &gj->aggs[i];

			if (a->argwidth == GPUHASH_NUMERIC)
			{
				fold_fixed_rows(gj, i, orow, brow, m, gj->ngroupkeys > 0 ? group : NULL);
				continue;
			}
			if (a->kind != GA_COUNT_STAR)
				arg_values(gj, a, orow, brow, m, v, vnull);
			if (a->kind == GA_COUNT_DISTINCT)
			{
				for (int j = 0; j < m; j++)
					if (!vnull[j])
						gpuhash_agg_add_distinct(gj, i, group[j], v[j]);
			}
			else if (gj->ngroupkeys > 0)
				accumulate_grouped(gj, i, group, v, vnull, m);
			else if (a->kind == GA_COUNT_STAR)
				gj->acc[i].count += m;
			else
				accumulate(a, &gj->acc[i], v, vnull, m);
		}
	}
}

/*
 * Row by row through the join's other clauses and filter (row_passes), the
 * batch's rows whose match flag is want: a semi join's matched rows, an anti
 * join's unmatched ones, or a left join's, null-extended (gj->null_inner;
 * NULL for semi and anti joins, whose aggregates read no inner column).
 */
static void
fold_flagged_filtered(GpuJoinState *gj, bool want)
{
	const GpuhashStore *os = &gj->outer;

	for (uint64 r = 0; r < os->nrows; r++)
	{
		const Datum *ov;

		if ((gj->row_match[r] != 0) != want)
			continue;
		if ((r & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
		if (!row_passes(gj, r, false, 0, 0))
			continue;
		ov = store_row(os, r);
		fold(gj, row_accumulators(gj, ov, (const bool *) (ov + os->ncols), gj->null_inner,
								  gj->null_inner_flags),
			 ov, (const bool *) (ov + os->ncols), gj->null_inner, gj->null_inner_flags);
	}
}

/*
 * A left join's batch: the key of each row, through which an inner column
 * kept in the table is read (rows with a NULL key have none and match
 * nothing).
 */
static void
left_row_keys(GpuJoinState *gj)
{
	if (gj->row_key == NULL)
		gj->row_key = MemoryContextAllocHuge(gj->batch_cxt, gj->batch_rows * sizeof(uint32));
	for (uint64 k = 0; k < gj->nkeys; k++)
		gj->row_key[gj->key_row[k]] = (uint32) k;
}

/*
 * A left join's batch, row by row: a pair counts as a match when the other
 * join clauses hold, and is folded when the filter above the join passes
 * it; then the outer rows that nothing matched, null-extended.
 */
static void
fold_left_filtered(GpuJoinState *gj)
{
	const GpuhashStore *os = &gj->outer;
	ExprContext *econtext = gj->css.ss.ps.ps_ExprContext;

	left_row_keys(gj);
	while (gpuhash_join_next_pairs(gj))
	{
		for (uint64 j = 0; j < gj->npairs; j++)
		{
			uint64		orow = gj->key_row[gj->pidx[j]];
			const Datum *ov = store_row(os, orow);
			Datum		iv[GJ_INLINE_MAX_COLS];
			bool		in[GJ_INLINE_MAX_COLS];
			const Datum *ivp;
			const bool *inp;
			bool		ok;

			if ((j & 0xFFFF) == 0xFFFF)
				CHECK_FOR_INTERRUPTS();
			econtext->ecxt_scantuple = gpuhash_join_scan_tuple(gj, orow, true, gj->pidx[j],
															   gj->brow[j]);
			if (gj->join_qual != NULL && !ExecQual(gj->join_qual, econtext))
			{
				ResetExprContext(econtext);
				continue;
			}
			gj->row_match[orow] = 1;
			ok = gj->row_qual == NULL || ExecQual(gj->row_qual, econtext);
			ResetExprContext(econtext);
			if (!ok)
				continue;
			inner_columns(gj, orow, gj->brow[j], true, iv, in, &ivp, &inp);
			fold(gj, row_accumulators(gj, ov, (const bool *) (ov + os->ncols), ivp, inp),
				 ov, (const bool *) (ov + os->ncols), ivp, inp);
		}
	}
	fold_flagged_filtered(gj, false);
}

/*
 * A left join's batch with no other clauses: its pairs, a chunk at a time,
 * then the outer rows that no pair matched, null-extended.
 */
static void
fold_left(GpuJoinState *gj)
{
	uint32	   *rows = gpuhash_join_row_buffer(gj);
	uint64		n;

	left_row_keys(gj);
	while (gpuhash_join_next_pairs(gj))
	{
		for (uint64 j = 0; j < gj->npairs; j++)
		{
			rows[j] = gj->key_row[gj->pidx[j]];
			gj->row_match[rows[j]] = 1;
		}
		fold_rows(gj, rows, gj->brow, gj->npairs);
	}
	n = gpuhash_join_flagged_rows(gj, false);
	fold_rows(gj, rows, NULL, n);
}

/* Fold the matches of the current batch, row by row through the join's clauses. */
static void
fold_filtered(GpuJoinState *gj)
{
	const GpuhashStore *os = &gj->outer;

	if (gj->jointype == JOIN_INNER)
	{
		while (gpuhash_join_next_pairs(gj))
		{
			for (uint64 j = 0; j < gj->npairs; j++)
			{
				uint64		orow = gj->pidx[j];
				const Datum *ov = store_row(os, orow);
				Datum		iv[GJ_INLINE_MAX_COLS];
				bool		in[GJ_INLINE_MAX_COLS];
				const Datum *ivp;
				const bool *inp;

				if ((j & 0xFFFF) == 0xFFFF)
					CHECK_FOR_INTERRUPTS();
				if (!row_passes(gj, orow, true, orow, gj->brow[j]))
					continue;
				inner_columns(gj, orow, gj->brow[j], true, iv, in, &ivp, &inp);
				fold(gj, row_accumulators(gj, ov, (const bool *) (ov + os->ncols), ivp, inp),
					 ov, (const bool *) (ov + os->ncols), ivp, inp);
			}
		}
	}
	else
		fold_flagged_filtered(gj, gj->jointype == JOIN_SEMI);
}

/* Fold the matches of the current batch. */
static void
fold_batch(GpuJoinState *gj)
{
	uint64		n;

	/* a right semi or anti join's batch only marks build rows (join_exec.c) */
	if (GPUHASH_JOIN_IS_RIGHT(gj->jointype))
		return;

	if (gj->jointype == JOIN_LEFT)
	{
		if (gj->join_qual != NULL || gj->row_qual != NULL)
			fold_left_filtered(gj);
		else
			fold_left(gj);
		return;
	}
	if ((gj->jointype == JOIN_INNER && gj->join_qual != NULL) || gj->row_qual != NULL)
	{
		fold_filtered(gj);
		return;
	}
	if (gj->jointype == JOIN_INNER)
	{
		while (gpuhash_join_next_pairs(gj))
			fold_rows(gj, gj->pidx, gj->brow, gj->npairs);
		return;
	}
	/* semi and anti joins: the rows whose match flag says so, listed */
	n = gpuhash_join_flagged_rows(gj, gj->jointype == JOIN_SEMI);
	fold_rows(gj, gj->fold_rows, NULL, n);
}


#ifdef HAVE_INT128
static Datum
sum_numeric(const GpuAggSpec *a, const GpuAggAcc *acc)
{
	return a->argwidth == 8 ? gpuhash_fixed_numeric(acc->wide_sum, 0) :
		NumericGetDatum(int64_to_numeric(acc->sum));
}
#else
static Datum
sum_numeric(const GpuAggSpec *a, const GpuAggAcc *acc)
{
	return NumericGetDatum(int64_to_numeric(acc->sum));
}
#endif

/*
 * The value (or partial state) of aggregate a from its accumulator, as
 * PostgreSQL's would be: avg is the numeric quotient of the numeric sum and
 * count that PostgreSQL's final functions divide, and its partial state
 * for int2 and int4 arguments is their int8[] {count, sum}.
 */
static Datum
agg_value(const GpuAggSpec *a, const GpuAggAcc *acc, bool *isnull)
{
	*isnull = false;
#ifdef HAVE_INT128
	if (a->argwidth == GPUHASH_NUMERIC && a->kind != GA_COUNT)
		return gpuhash_fixed_value(a, acc, isnull);
	if ((a->kind == GA_SUM || a->kind == GA_AVG) && a->argwidth == 8 && a->partial)
		return gpuhash_int8_sum_state(acc->count, acc->wide_sum);
#endif
	switch (a->kind)
	{
		case GA_COUNT_STAR:
		case GA_COUNT:
		case GA_COUNT_DISTINCT:
			return Int64GetDatum(acc->count);
		case GA_SUM:
			*isnull = !acc->have;
			if (!acc->have)
				return (Datum) 0;
			if (a->argwidth == 8)
				return sum_numeric(a, acc);
			return Int64GetDatum(acc->sum);
		case GA_AVG:
			if (a->partial)
			{
				Datum		state[2] = {Int64GetDatum(acc->count), Int64GetDatum(acc->sum)};

				return PointerGetDatum(construct_array(state, 2, INT8OID, sizeof(int64),
													   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
			}
			*isnull = acc->count == 0;
			if (acc->count == 0)
				return (Datum) 0;
			return DirectFunctionCall2(numeric_div, sum_numeric(a, acc),
									   NumericGetDatum(int64_to_numeric(acc->count)));
		case GA_MIN:
		case GA_MAX:
			*isnull = !acc->have;
			return a->argwidth == 2 ? Int16GetDatum((int16) acc->best) :
				a->argwidth == 4 ? Int32GetDatum((int32) acc->best) : Int64GetDatum(acc->best);
	}
	return (Datum) 0;
}

static Datum
key_datum(int64 v, int width)
{
	return width == 1 ? BoolGetDatum(v != 0) : width == 2 ? Int16GetDatum((int16) v) :
		width == 4 ? Int32GetDatum((int32) v) : Int64GetDatum(v);
}

/* memory the groups and count(DISTINCT)'s pairs take */
static Size
tables_bytes(const GpuJoinState *gj)
{
	Size		bytes = gpuhash_groups_bytes(gj->groups);

	if (gj->distinct != NULL)
		for (int i = 0; i < gj->naggs; i++)
			if (gj->aggs[i].kind == GA_COUNT_DISTINCT)
				bytes += gpuhash_groups_bytes(&gj->distinct[i]);
	return bytes;
}

/*
 * Are the groups (with their distinct values) past hash_mem?  They do not
 * grow on past it: relieve_groups writes them out.
 */
bool
gpuhash_agg_tables_full(const GpuJoinState *gj)
{
	return tables_bytes(gj) > (Size) get_hash_memory_limit();
}

/* Are the groups past hash_mem? */
static bool
groups_full(GpuJoinState *gj)
{
	return gj->ngroupkeys > 0 && gj->naggs > 0 && gpuhash_agg_tables_full(gj);
}

/*
 * What one group takes when the table is full, for sizing the partitions
 * its groups are written to: its entry, and as much again for the slots
 * and the doubling of the entries.
 */
Size
gpuhash_agg_group_bytes(const GpuJoinState *gj)
{
	return 2 * gpuhash_groups_entry_bytes(gj->ngroupkeys, gj->naggs * sizeof(GpuAggAcc));
}

/* Every group is forgotten, to be made again by the rows to come. */
void
gpuhash_agg_restart_groups(GpuJoinState *gj)
{
	MemoryContextReset(gj->groups->cxt);
	gpuhash_groups_reset(gj->groups);
	if (gj->distinct != NULL)
		for (int i = 0; i < gj->naggs; i++)
			gpuhash_groups_reset(&gj->distinct[i]);
	reset_text_keys(gj);
	gj->agg_next = 0;
}

/*
 * The groups passed hash_mem, so they cannot grow in memory.  A partial
 * node's are partial states, which the Finalize Aggregate above combines
 * however many times a group comes: it emits them (true: return to do
 * so), so that a group count the planner underestimated costs rows, not
 * memory.  A node emitting final values writes them out by partition
 * (agg_combine.c), combined again once every row is folded.
 */
static bool
relieve_groups(GpuJoinState *gj)
{
	if (!groups_full(gj))
		return false;
	if (gj->aggs[0].partial)
		return true;
	if (gj->spill == NULL)
	{
		double		seen = (double) gj->groups->ngroups;

		gj->spill = gpuhash_spill_open_local(
			gpuhash_spill_partitions(Max(gj->agg_est_groups, 4.0 * seen),
									 gpuhash_agg_group_bytes(gj), 1),
			gj->css.ss.ps.state->es_query_cxt);
	}
	gpuhash_agg_write_groups(gj);
	gpuhash_agg_restart_groups(gj);
	return false;
}

/* With no join: fold the child's rows, a batch at a time, to the end or until the groups are full. */
static void
fold_scan(GpuJoinState *gj)
{
	instr_time	start;

	gj->stats.ran = true;
	if (gj->fold_rows == NULL)
	{
		(void) gpuhash_join_row_buffer(gj);
		for (uint64 r = 0; r < gj->batch_rows; r++)
			gj->fold_rows[r] = (uint32) r;
	}
	while (!gj->outer_done)
	{
		gpuhash_join_load_batch(gj);
		if (gj->outer.nrows == 0)
			continue;
		gj->stats.batches++;
		INSTR_TIME_SET_CURRENT(start);
		fold_rows(gj, gj->fold_rows, NULL, gj->outer.nrows);
		gj->stats.fold_ms += elapsed_ms_since(start);
		if (relieve_groups(gj))
			return;
	}
}

/*
 * The build rows a right semi or anti join returns, once every probe is
 * made, a chunk at a time through the filter of the rows folded; true when
 * a partial node's groups are full and go out first (it resumes at
 * gj->rs_pos).  Its aggregates and keys read only build columns: a semi or
 * anti join returns no others.
 */
static bool
fold_build_matches(GpuJoinState *gj)
{
	static const uint32 no_outer_row[FOLD_CHUNK];
	uint64		brows[FOLD_CHUNK];
	bool		more = true;

	while (more)
	{
		instr_time	start;
		int			n = 0;
		uint64		b;

		INSTR_TIME_SET_CURRENT(start);
		while (n < FOLD_CHUNK && (more = gpuhash_join_next_build_row(gj, &b)))
		{
			if (gj->row_qual != NULL)
			{
				ExprContext *econtext = gj->css.ss.ps.ps_ExprContext;
				bool		ok;

				econtext->ecxt_scantuple = gpuhash_join_build_row_tuple(gj, b);
				ok = ExecQual(gj->row_qual, econtext);
				ResetExprContext(econtext);
				if (!ok)
					continue;
			}
			brows[n++] = b;
		}
		fold_rows(gj, no_outer_row, brows, n);
		gj->stats.fold_ms += elapsed_ms_since(start);
		if (relieve_groups(gj))
			return true;
	}
	gj->rs_phase = RS_DONE;
	return false;
}

/*
 * Run the join, folding it into the accumulators: to its end (agg_folded),
 * or until a partial node's groups are full.
 */
static void
fold_join(GpuJoinState *gj)
{
	instr_time	start;
	double		probe_ms;

	if (gj->scan_only)
	{
		fold_scan(gj);
		gj->agg_folded = gj->outer_done;
		return;
	}
	gpuhash_join_ensure_built(gj);
	if (gj->jointype == JOIN_LEFT)
		gpuhash_join_make_null_inner(gj);
	while (!gj->outer_done)
	{
		gpuhash_join_load_batch(gj);
		if (gj->outer.nrows == 0)
			continue;
		gpuhash_join_start_batch(gj);
		INSTR_TIME_SET_CURRENT(start);
		probe_ms = gj->stats.probe_ms;
		fold_batch(gj);
		/* without a helper, the fold fetches the pairs: not its own time */
		gj->stats.fold_ms += elapsed_ms_since(start) - (gj->stats.probe_ms - probe_ms);
		if (relieve_groups(gj))
			return;
	}
	if (GPUHASH_JOIN_IS_RIGHT(gj->jointype) && gpuhash_join_right_emits(gj) &&
		fold_build_matches(gj))
		return;
	/* done: no longer hold up the other participants' barrier */
	gpuhash_join_detach(gj);
	gj->agg_folded = true;
}

static void
make_groups(GpuJoinState *gj)
{
	if (gj->ngroupkeys > 0 && gj->groups->cxt == NULL)
	{
		gpuhash_groups_init(gj->groups,
							AllocSetContextCreate(gj->css.ss.ps.state->es_query_cxt,
												  "GpuHashAggregate groups",
												  ALLOCSET_DEFAULT_SIZES),
							gj->ngroupkeys, gj->naggs * sizeof(GpuAggAcc));
		if (gj->distinct != NULL)
			for (int i = 0; i < gj->naggs; i++)
				if (gj->aggs[i].kind == GA_COUNT_DISTINCT)
					gpuhash_groups_init(&gj->distinct[i], gj->groups->cxt, 2, 0);
		reset_text_keys(gj);
	}
}

/*
 * The next row: the one row of the aggregates, or with GROUP BY the next
 * group's keys in their columns and its aggregates; NULL after the last.
 */
static TupleTableSlot *
next_row(GpuJoinState *gj)
{
	TupleTableSlot *slot = gj->css.ss.ss_ScanTupleSlot;
	int			first = gpuhash_join_scan_columns(gj);
	GpuAggAcc  *accs = gj->acc;
	MemoryContext old;

	make_groups(gj);
	if (gj->spill_shared != NULL && !gj->spill_attached && !gj->combining)
		gpuhash_agg_combine_attach(gj);
	for (;;)
	{
		if (!gj->agg_folded && gj->agg_next == 0)
			fold_join(gj);
		if (gj->ngroupkeys == 0)
		{
			if (gj->agg_next > 0)
				return NULL;
			break;
		}
		if (gj->agg_folded && !gj->combining && gj->spill != NULL)
			gpuhash_agg_start_combining(gj);
		if (gj->agg_next < gj->groups->ngroups)
			break;
		if (gj->combining)
		{
			if (!gpuhash_agg_next_partition(gj))
				return NULL;
			continue;
		}
		if (gj->agg_folded)
			return NULL;
		/* the groups emitted early are out: start them again, and fold on */
		gpuhash_agg_restart_groups(gj);
		gj->stats.flushes++;
	}
	ExecClearTuple(slot);
	for (int c = 0; c < first; c++)
		slot->tts_isnull[c] = true;
	/* numeric and array values live as long as the row */
	old = MemoryContextSwitchTo(gj->css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory);
	if (gj->ngroupkeys > 0)
	{
		uint32		g = (uint32) gj->agg_next;
		const int64 *keys = gpuhash_group_keys(gj->groups, g);
		uint8		nulls = gpuhash_group_nulls(gj->groups, g);

		for (int k = 0; k < gj->ngroupkeys; k++)
		{
			const GpuAggInstr *key = &gj->group_keys[k];
			int			c = key->out;

			slot->tts_isnull[c] = (nulls & (1 << k)) != 0;
			if (slot->tts_isnull[c])
				slot->tts_values[c] = (Datum) 0;
			else if (gpuhash_text_key(key))
				slot->tts_values[c] = gpuhash_dict_value(&gj->dicts[k], (uint32) keys[k]);
			else if (key->form == GK_YEAR)
				slot->tts_values[c] = DirectFunctionCall2(extract_date,
														  CStringGetTextDatum("year"),
														  DateADTGetDatum((DateADT) keys[k]));
			else
				slot->tts_values[c] = key_datum(keys[k], key->width);
		}
		accs = gpuhash_group_acc(gj->groups, g);
	}
	gj->agg_next++;
	if (gj->combining)
		gj->spill_stats.emitted++;
	for (int i = 0; i < gj->naggs; i++)
		slot->tts_values[first + i] = agg_value(&gj->aggs[i], &accs[i],
												&slot->tts_isnull[first + i]);
	MemoryContextSwitchTo(old);
	return ExecStoreVirtualTuple(slot);
}

static TupleTableSlot *
exec_gpu_agg(CustomScanState *node)
{
	GpuJoinState *gj = (GpuJoinState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;
	ExprState  *having = node->ss.ps.qual;

	for (;;)
	{
		TupleTableSlot *slot;

		ResetExprContext(econtext);
		/* a shut-down parallel node has let go of its build (join_parallel.c) */
		if (gj->shut_down)
			return NULL;
		slot = next_row(gj);
		if (slot == NULL)
			return NULL;
		econtext->ecxt_scantuple = slot;
		if (having != NULL && !ExecQual(having, econtext))
		{
			InstrCountFiltered1(node, 1);
			continue;
		}
		return proj ? ExecProject(proj) : slot;
	}
}

static void
end_agg(CustomScanState *node)
{
	GpuJoinState *gj = (GpuJoinState *) node;

	gpuhash_agg_close_splits(gj);
	if (gj->spill != NULL)
	{
		gpuhash_spill_close(gj->spill);
		gj->spill = NULL;
	}
	gpuhash_join_end(node);
}

static const CustomExecMethods gpu_agg_exec_methods = {
	.CustomName = GPUHASH_AGG_NAME,
	.BeginCustomScan = gpuhash_join_begin,
	.ExecCustomScan = exec_gpu_agg,
	.EndCustomScan = end_agg,
	.ReScanCustomScan = rescan_gpu_agg,
	.EstimateDSMCustomScan = gpuhash_agg_estimate_dsm,
	.InitializeDSMCustomScan = gpuhash_agg_init_dsm,
	.ReInitializeDSMCustomScan = gpuhash_agg_reinit_dsm,
	.InitializeWorkerCustomScan = gpuhash_agg_init_worker,
	.ShutdownCustomScan = gpuhash_agg_shutdown,
	.ExplainCustomScan = gpuhash_join_explain,
};

static const CustomExecMethods scan_agg_exec_methods = {
	.CustomName = GPUHASH_AGG_NAME,
	.BeginCustomScan = gpuhash_join_begin_scan,
	.ExecCustomScan = exec_gpu_agg,
	.EndCustomScan = end_agg,
	.ReScanCustomScan = rescan_gpu_agg,
	.EstimateDSMCustomScan = gpuhash_agg_estimate_dsm,
	.InitializeDSMCustomScan = gpuhash_agg_init_dsm,
	.ReInitializeDSMCustomScan = gpuhash_agg_reinit_dsm,
	.InitializeWorkerCustomScan = gpuhash_agg_init_worker,
	.ShutdownCustomScan = gpuhash_agg_shutdown,
	.ExplainCustomScan = gpuhash_join_explain,
};

/*
 * A GpuHashAggregate with no join (agg_path.c): custom_private holds the
 * aggregates and the group keys only.
 */
Node *
gpuhash_scan_agg_create_state(CustomScan *cscan)
{
	GpuJoinState *gj = palloc0(sizeof(GpuJoinState));

	NodeSetTag(gj, T_CustomScanState);
	gj->css.flags = cscan->flags;
	gj->css.methods = &scan_agg_exec_methods;
	gj->jointype = JOIN_INNER;
	gj->scan_only = true;
	gpuhash_agg_setup(gj, linitial(cscan->custom_private), lsecond(cscan->custom_private), cscan);
	gj->agg_combine = intVal(lthird(cscan->custom_private)) != 0;
	gj->agg_est_groups = strtod(strVal(lfourth(cscan->custom_private)), NULL);
	/* a partial plan's participants: its workers and the leader (set again by a combine's DSM) */
	if (intVal(list_nth(cscan->custom_private, 4)) > 0)
		gj->nparticipants = intVal(list_nth(cscan->custom_private, 4)) + 1;
	gj->explain_more = gpuhash_agg_explain;
	return (Node *) gj;
}

Node *
gpuhash_agg_create_state(CustomScan *cscan)
{
	GpuJoinState *gj;

	/* the first of the node's callbacks in a parallel worker */
	gpuhash_settings_ready();
	if (list_length(cscan->custom_plans) == 1)
		return gpuhash_scan_agg_create_state(cscan);
	gj = palloc0(sizeof(GpuJoinState));

	gpuhash_join_init_state(gj, cscan, &gpu_agg_exec_methods);
	gpuhash_agg_setup(gj, list_nth(cscan->custom_private, GJ_PRIV_AGGS),
					  list_nth(cscan->custom_private, GJ_PRIV_GROUP_KEYS), cscan);
	gj->n_row_quals = intVal(list_nth(cscan->custom_private, GJ_PRIV_ROW_QUALS));
	gj->agg_combine = intVal(list_nth(cscan->custom_private, GJ_PRIV_COMBINE)) != 0;
	gj->agg_est_groups = strtod(strVal(list_nth(cscan->custom_private, GJ_PRIV_EST_GROUPS)), NULL);
	gj->explain_more = gpuhash_agg_explain;
	return (Node *) gj;
}
