/*
 * agg_eval.c - an aggregate's integer argument on one joined row of a
 * GpuHashAggregate: the program the planner compiled (agg_compile.c,
 * join_agg.h) run by a small stack interpreter, and the conditions a CASE
 * tests, run through the scan filter's compiled expressions.
 *
 * The fold (agg_exec.c) calls these out of line, as it did when they were
 * in its file: the interpreter is kept from inlining, and a condition runs
 * PostgreSQL's expressions.  What it runs on every row of the commonest
 * shapes (a column, the sum of two) is inline in agg_eval.h instead.
 * Numeric arguments run as fixed-point programs in agg_fixed.c.
 */
#include "gpuhash_pg.h"

#include "utils/memutils.h"

#include "agg_eval.h"
#include "join_state.h"
#include "scan_filter.h"

/* PostgreSQL's errors for integer results that do not fit their type */
void
gpuhash_agg_out_of_range(int width)
{
	if (width == 2)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("smallint out of range")));
	if (width == 4)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("integer out of range")));
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("bigint out of range")));
}

/* a comparison's truth (join_agg.h) */
static inline bool
compare(int cmp, int64 x, int64 y)
{
	switch (cmp)
	{
		case GC_EQ:
			return x == y;
		case GC_NE:
			return x != y;
		case GC_LT:
			return x < y;
		case GC_LE:
			return x <= y;
		case GC_GT:
			return x > y;
	}
	return x >= y;
}

/*
 * Run an argument's program on one joined row.  Every arithmetic operator
 * is strict, so a NULL operand makes its result NULL without evaluating it,
 * in the order PostgreSQL evaluates them; AND, OR, NOT and NULL tests are
 * three-valued, and CASE evaluates only the branch it takes (agg_compile.c).
 * False means the argument is NULL.
 */
pg_noinline bool
gpuhash_agg_eval_program(const GpuAggSpec *a, const Datum *ov, const bool *on, const Datum *iv,
						 const bool *in, const bool *truth, int64 *out)
{
	int64		st[GPUHASH_AGG_MAX_DEPTH];
	bool		nl[GPUHASH_AGG_MAX_DEPTH];
	int			sp = 0;

	for (int i = 0; i < a->ninstr; i++)
	{
		const GpuAggInstr *ins = &a->prog[i];
		int64		x,
					y,
					r;

		switch (ins->op)
		{
			case GO_OUTER:
				nl[sp] = on[ins->col];
				st[sp] = nl[sp] ? 0 : gpuhash_agg_datum_int(ov[ins->col], ins->width);
				sp++;
				continue;
			case GO_INNER:
				nl[sp] = in[ins->col];
				st[sp] = nl[sp] ? 0 : gpuhash_agg_datum_int(iv[ins->col], ins->width);
				sp++;
				continue;
			case GO_CONST:
				nl[sp] = false;
				st[sp++] = ins->value;
				continue;
			case GO_NULL:
				nl[sp] = true;
				st[sp++] = 0;
				continue;
			case GO_COND:
				nl[sp] = false;
				st[sp++] = truth[ins->col];
				continue;
			case GO_CMP:
				sp--;
				if (nl[sp - 1] || nl[sp])
					nl[sp - 1] = true;
				else
					st[sp - 1] = compare((int) ins->value, st[sp - 1], st[sp]);
				continue;
			case GO_AND:
			case GO_OR:
				{
					/* AND: false wins over NULL; OR: true wins over NULL */
					int64		decisive = ins->op == GO_AND ? 0 : 1;

					sp--;
					if ((!nl[sp - 1] && st[sp - 1] == decisive) || (!nl[sp] && st[sp] == decisive))
					{
						nl[sp - 1] = false;
						st[sp - 1] = decisive;
					}
					else if (nl[sp - 1] || nl[sp])
						nl[sp - 1] = true;
					else
						st[sp - 1] = 1 - decisive;
					continue;
				}
			case GO_NOT:
				if (!nl[sp - 1])
					st[sp - 1] = !st[sp - 1];
				continue;
			case GO_ISNULL:
				st[sp - 1] = ins->value == 0 ? nl[sp - 1] : !nl[sp - 1];
				nl[sp - 1] = false;
				continue;
			case GO_JUMPF:
				sp--;
				if (nl[sp] || st[sp] == 0)
					i = ins->col - 1;
				continue;
			case GO_JUMP:
				i = ins->col - 1;
				continue;
			case GO_NEG:
			case GO_CAST:
				if (nl[sp - 1])
					continue;
				x = st[sp - 1];
				if (ins->op == GO_NEG)
				{
					if (x == PG_INT64_MIN)
						gpuhash_agg_out_of_range(8);
					x = -x;
				}
				st[sp - 1] = gpuhash_agg_fit(x, ins->width);
				continue;
		}
		/* the binary operators */
		sp--;
		if (nl[sp - 1] || nl[sp])
		{
			nl[sp - 1] = true;
			continue;
		}
		x = st[sp - 1];
		y = st[sp];
		if (ins->op == GO_ADD ? __builtin_add_overflow(x, y, &r) :
			ins->op == GO_SUB ? __builtin_sub_overflow(x, y, &r) :
			__builtin_mul_overflow(x, y, &r))
			gpuhash_agg_out_of_range(8);
		st[sp - 1] = gpuhash_agg_fit(r, ins->width);
	}
	*out = st[0];
	return !nl[0];
}

/*
 * gpuhash_agg_year_start of n dates; the last one's kept, as the rows of a
 * chunk come in runs of a day.
 */
void
gpuhash_agg_year_starts(int64 *v, const bool *isnull, int n)
{
	int64		last = 0;
	int64		start = gpuhash_agg_year_start(0);

	for (int j = 0; j < n; j++)
	{
		if (isnull[j])
			continue;
		if (v[j] != last)
		{
			last = v[j];
			start = gpuhash_agg_year_start(last);
		}
		v[j] = start;
	}
}

/*
 * The truths of a's conditions (GO_COND) on one joined row, outer columns
 * ov/on, inner ones iv/in: its columns as the scan tuple begins, a
 * by-reference value made a pointer into its store's arena.  A condition
 * can raise no error and has no effect, so all are evaluated whichever the
 * row's CASE reaches.
 */
void
gpuhash_agg_cond_truths(GpuJoinState *gj, const GpuAggSpec *a, const Datum *ov, const bool *on,
						const Datum *iv, const bool *in, bool *truth)
{
	MemoryContext old = a->cond_calls ? MemoryContextSwitchTo(gj->agg_tmp_cxt) : NULL;

	for (int k = 0; k < a->nconds; k++)
	{
		const int  *atts;
		int			n = gpuhash_scan_filter_attrs(a->conds[k], &atts);

		for (int i = 0; i < n; i++)
		{
			int			att = atts[i];
			bool		outer = gj->scan_only || att < gj->n_outer;
			int			col = outer ? att : att - gj->n_outer;
			const GpuhashStore *st = outer ? &gj->outer : &gj->inner;
			Datum		v = outer ? ov[col] : iv[col];
			bool		null = outer ? on[col] : in[col];

			if (!null && (outer || !gj->inner_in_table) && !st->byval[col])
				v = PointerGetDatum(st->arena + v);
			gj->cond_values[att] = v;
			gj->cond_isnull[att] = null;
		}
		truth[k] = gpuhash_scan_filter_pass(a->conds[k], gj->cond_values, gj->cond_isnull);
	}
	if (old != NULL)
	{
		MemoryContextSwitchTo(old);
		MemoryContextReset(gj->agg_tmp_cxt);
	}
}
