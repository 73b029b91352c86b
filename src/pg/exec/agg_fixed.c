/*
 * agg_fixed.c - sum and avg of numeric arguments in a GpuHashAggregate, as
 * 128-bit fixed-point integers (agg_acc.h, numeric_fixed.h).
 *
 * An argument's program runs on integers scaled by 10^scale, each operator
 * at the display scale PostgreSQL's numeric operator gives its result (the
 * larger operand scale for + and -, their sum for *), so every value equals
 * PostgreSQL's exactly.  A row the integers cannot carry (a NaN or an
 * infinity, a value of another display scale, an overflow of 128 bits) is
 * computed by PostgreSQL's own numeric functions and added to a numeric
 * sum kept beside the integer one; the two are added when the group is
 * emitted.  The result therefore never depends on which path a row took.
 */
#include "postgres.h"

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "agg_acc.h"
#include "numeric_fixed.h"

#ifdef HAVE_INT128

static inline const Datum *
side_values(const GpuAggRow *r, const GpuAggInstr *ins, const bool **nulls, const char **arena)
{
	if (ins->op == GO_OUTER)
	{
		*nulls = r->on;
		*arena = r->oarena;
		return r->ov;
	}
	*nulls = r->in;
	*arena = r->iarena;
	return r->iv;
}

static inline int64
int_datum(Datum d, int width)
{
	return width == 2 ? DatumGetInt16(d) : width == 4 ? DatumGetInt32(d) : DatumGetInt64(d);
}

/*
 * The argument by PostgreSQL's numeric functions, in the order its
 * executor calls them (every one is strict); false if it is NULL.
 */
static bool
eval_numeric(const GpuAggSpec *a, const GpuAggRow *r, Datum *out)
{
	Datum		st[GPUHASH_AGG_MAX_DEPTH];
	bool		nl[GPUHASH_AGG_MAX_DEPTH];
	int			sp = 0;

	for (int i = 0; i < a->ninstr; i++)
	{
		const GpuAggInstr *ins = &a->prog[i];
		const bool *nulls;
		const char *arena;
		const Datum *vals;
		PGFunction fn;

		switch (ins->op)
		{
			case GO_OUTER:
			case GO_INNER:
				vals = side_values(r, ins, &nulls, &arena);
				nl[sp] = nulls[ins->col];
				if (!nl[sp])
					st[sp] = ins->width == GPUHASH_NUMERIC ?
						PointerGetDatum(arena + vals[ins->col]) :
						NumericGetDatum(int64_to_numeric(int_datum(vals[ins->col], ins->width)));
				sp++;
				continue;
			case GO_CONST:
				nl[sp] = false;
				st[sp++] = gpuhash_fixed_numeric(ins->value, ins->scale);
				continue;
			case GO_NEG:
				if (!nl[sp - 1])
					st[sp - 1] = DirectFunctionCall1(numeric_uminus, st[sp - 1]);
				continue;
		}
		sp--;
		if (nl[sp - 1] || nl[sp])
		{
			nl[sp - 1] = true;
			continue;
		}
		fn = ins->op == GO_ADD ? numeric_add : ins->op == GO_SUB ? numeric_sub : numeric_mul;
		st[sp - 1] = DirectFunctionCall2(fn, st[sp - 1], st[sp]);
	}
	*out = st[0];
	return !nl[0];
}

/* Add the numeric v to acc's numeric sum, which lives in acc_cxt. */
static void
spill_add(GpuAggAcc *acc, Datum v, MemoryContext acc_cxt)
{
	MemoryContext old = MemoryContextSwitchTo(acc_cxt);
	Datum		prev = acc->spill;

	acc->spill = prev ? DirectFunctionCall2(numeric_add, prev, v) :
		PointerGetDatum(PG_DETOAST_DATUM_COPY(v));
	MemoryContextSwitchTo(old);
	if (prev)
		pfree(DatumGetPointer(prev));
}

/*
 * acc's integer sum as a numeric of the largest display scale among the
 * values it added: a CASE's branches may have smaller scales than a's,
 * their values scaled up to a's, and PostgreSQL's sum has the largest
 * scale of its inputs.  Every value added is a multiple of the power of ten
 * dropped, so the division is exact.
 */
static Datum
fixed_part(const GpuAggSpec *a, const GpuAggAcc *acc)
{
	int128		v = acc->wide_sum;

	if (acc->seen_scale < a->scale)
		v /= gpuhash_fixed_pow10(a->scale - acc->seen_scale);
	return gpuhash_fixed_numeric(v, Min(acc->seen_scale, a->scale));
}

/* Add one fixed-point value v (at a's scale, of display scale scale) to acc. */
void
gpuhash_fixed_add(const GpuAggSpec *a, GpuAggAcc *acc, int128 v, int scale,
				  MemoryContext acc_cxt, MemoryContext tmp_cxt)
{
	int128		sum;

	acc->count++;
	if (unlikely(__builtin_add_overflow(acc->wide_sum, v, &sum)))
	{
		/* the integer sum is full: carry its old value over as a numeric */
		MemoryContext old = MemoryContextSwitchTo(tmp_cxt);

		spill_add(acc, fixed_part(a, acc), acc_cxt);
		MemoryContextSwitchTo(old);
		MemoryContextReset(tmp_cxt);
		sum = v;
	}
	acc->wide_sum = sum;
	acc->have = true;
	acc->seen_scale = Max(acc->seen_scale, scale);
}

/*
 * Combine src, the same aggregate's accumulator from another table (a
 * group written out and read back, agg_combine.c), into dst; src_spill is
 * src's numeric sum, or 0.  An integer sum that fills up is carried over
 * into the numeric one, as gpuhash_fixed_add does.
 */
void
gpuhash_fixed_combine(const GpuAggSpec *a, GpuAggAcc *dst, const GpuAggAcc *src,
					  Datum src_spill, MemoryContext acc_cxt, MemoryContext tmp_cxt)
{
	dst->count += src->count;
	if (src->have)
	{
		int128		sum;

		if (unlikely(__builtin_add_overflow(dst->wide_sum, src->wide_sum, &sum)))
		{
			MemoryContext old = MemoryContextSwitchTo(tmp_cxt);

			spill_add(dst, fixed_part(a, dst), acc_cxt);
			MemoryContextSwitchTo(old);
			MemoryContextReset(tmp_cxt);
			sum = src->wide_sum;
		}
		dst->wide_sum = sum;
		dst->have = true;
		dst->seen_scale = Max(dst->seen_scale, src->seen_scale);
	}
	if (src_spill != (Datum) 0)
		spill_add(dst, src_spill, acc_cxt);
}

/*
 * The argument of a on the m rows of a chunk whose columns are decoded in
 * leaves: each instruction runs over every row in a loop of its own, so
 * that what the interpreter decides per row is decided once a chunk.
 * *out and *state point at the result (state: FixedLeafState); a row whose
 * state is LEAF_SLOW is left to gpuhash_fixed_fold_slow.
 */
void
gpuhash_fixed_chunk(const GpuAggSpec *a, const GpuAggLeaf *leaves, int m, GpuAggScratch *s,
					const int128 **out, const uint8 **state)
{
	const int128 *sv[GPUHASH_AGG_MAX_DEPTH];
	const uint8 *ss[GPUHASH_AGG_MAX_DEPTH];
	int			sc[GPUHASH_AGG_MAX_DEPTH];
	int			sp = 0;

	for (int i = 0; i < a->ninstr; i++)
	{
		const GpuAggInstr *ins = &a->prog[i];
		int128	   *r;
		uint8	   *rs;
		const int128 *x;
		const int128 *y;
		const uint8 *xs;
		const uint8 *ys;
		int128		fx,
					fy;

		switch (ins->op)
		{
			case GO_OUTER:
			case GO_INNER:
				sv[sp] = leaves[ins->leaf].val;
				ss[sp] = leaves[ins->leaf].state;
				sc[sp++] = ins->scale;
				continue;
			case GO_CONST:
				r = s->val[sp];
				rs = s->state[sp];
				for (int j = 0; j < m; j++)
					r[j] = ins->value;
				memset(rs, LEAF_OK, m);
				sv[sp] = r;
				ss[sp] = rs;
				sc[sp++] = ins->scale;
				continue;
			case GO_NEG:
				r = s->val[sp - 1];
				rs = s->state[sp - 1];
				x = sv[sp - 1];
				xs = ss[sp - 1];
				for (int j = 0; j < m; j++)
				{
					rs[j] = xs[j];
					if (__builtin_sub_overflow((int128) 0, x[j], &r[j]))
						rs[j] = LEAF_SLOW;
				}
				sv[sp - 1] = r;
				ss[sp - 1] = rs;
				continue;
		}
		/* a binary operator: its result goes to the lower operand's level */
		sp--;
		r = s->val[sp - 1];
		rs = s->state[sp - 1];
		x = sv[sp - 1];
		xs = ss[sp - 1];
		y = sv[sp];
		ys = ss[sp];
		fx = sc[sp - 1] == ins->scale || ins->op == GO_MUL ? 1 : gpuhash_fixed_pow10(ins->scale - sc[sp - 1]);
		fy = sc[sp] == ins->scale || ins->op == GO_MUL ? 1 : gpuhash_fixed_pow10(ins->scale - sc[sp]);
		for (int j = 0; j < m; j++)
		{
			/* a row not fixed-point on one side is computed again the slow way */
			uint8		st = Max(xs[j], ys[j]);
			int128		xv = x[j],
						yv = y[j];

			rs[j] = st;
			if (st != LEAF_OK)
				continue;
			if (xv == (int64) xv && yv == (int64) yv && fx == 1 && fy == 1)
				r[j] = ins->op == GO_MUL ? (int128) (int64) xv * (int64) yv :
					ins->op == GO_ADD ? xv + yv : xv - yv;
			else if ((fx != 1 && __builtin_mul_overflow(xv, fx, &xv)) ||
					 (fy != 1 && __builtin_mul_overflow(yv, fy, &yv)) ||
					 (ins->op == GO_MUL ? __builtin_mul_overflow(xv, yv, &r[j]) :
					  ins->op == GO_ADD ? __builtin_add_overflow(xv, yv, &r[j]) :
					  __builtin_sub_overflow(xv, yv, &r[j])))
				rs[j] = LEAF_SLOW;
		}
		sv[sp - 1] = r;
		ss[sp - 1] = rs;
		sc[sp - 1] = ins->scale;
	}
	*out = sv[0];
	*state = ss[0];
}

/*
 * Fold one joined row's numeric argument, which the fixed-point evaluation
 * could not carry (LEAF_SLOW), into acc: computed by PostgreSQL's numeric
 * functions and added to the numeric sum.
 */
void
gpuhash_fixed_fold_slow(const GpuAggSpec *a, GpuAggAcc *acc, const GpuAggRow *row,
						MemoryContext acc_cxt, MemoryContext tmp_cxt)
{
	MemoryContext old = MemoryContextSwitchTo(tmp_cxt);
	Datum		d;

	if (eval_numeric(a, row, &d))
	{
		acc->count++;
		spill_add(acc, d, acc_cxt);
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(tmp_cxt);
}

/* The exact sum of what acc holds (count > 0). */
static Datum
fixed_total(const GpuAggSpec *a, const GpuAggAcc *acc)
{
	Datum		fixed = acc->have ? fixed_part(a, acc) : (Datum) 0;

	if (acc->spill == (Datum) 0)
		return fixed;
	if (!acc->have)
		return acc->spill;
	return DirectFunctionCall2(numeric_add, acc->spill, fixed);
}

/*
 * PostgreSQL 15's serialized state of sum(numeric) and avg(numeric)
 * (numeric_avg_serialize): N, the sum of the finite values, the largest
 * input scale and how many had it, then the counts of NaNs and of positive
 * and negative infinities.
 */
static Datum
numeric_sum_state(const GpuAggSpec *a, const GpuAggAcc *acc)
{
	StringInfoData buf;
	Datum		total = acc->count > 0 ? fixed_total(a, acc) : (Datum) 0;
	int64		nan = 0,
				pinf = 0,
				ninf = 0;

	if (total != (Datum) 0 && numeric_is_nan(DatumGetNumeric(total)))
		nan = 1;
	else if (total != (Datum) 0 && numeric_is_inf(DatumGetNumeric(total)))
	{
		if (DatumGetBool(DirectFunctionCall2(numeric_gt, total,
											 NumericGetDatum(int64_to_numeric(0)))))
			pinf = 1;
		else
			ninf = 1;
	}
	/* no finite value: PostgreSQL's zero, of scale 0 */
	if (total == (Datum) 0 || nan || pinf || ninf)
		total = NumericGetDatum(int64_to_numeric(0));
	pq_begintypsend(&buf);
	pq_sendint64(&buf, acc->count);
	gpuhash_numeric_send_var(&buf, total);
	pq_sendint32(&buf, acc->have ? acc->seen_scale : a->scale);
	pq_sendint64(&buf, acc->have ? acc->count : 0);
	pq_sendint64(&buf, nan);
	pq_sendint64(&buf, pinf);
	pq_sendint64(&buf, ninf);
	return PointerGetDatum(pq_endtypsend(&buf));
}

/* sum, avg or a partial state of a numeric argument, as PostgreSQL's */
Datum
gpuhash_fixed_value(const GpuAggSpec *a, const GpuAggAcc *acc, bool *isnull)
{
	*isnull = false;
	if (a->partial)
		return numeric_sum_state(a, acc);
	*isnull = acc->count == 0;
	if (acc->count == 0)
		return (Datum) 0;
	if (a->kind == GA_SUM)
		return fixed_total(a, acc);
	return DirectFunctionCall2(numeric_div, fixed_total(a, acc),
							   NumericGetDatum(int64_to_numeric(acc->count)));
}

/*
 * PostgreSQL 15's serialized state of sum(int8) and avg(int8) where it has
 * 128-bit integers (int8_avg_serialize): N, then the sum as a numeric.
 */
Datum
gpuhash_int8_sum_state(int64 count, int128 sum)
{
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendint64(&buf, count);
	gpuhash_numeric_send_var(&buf, gpuhash_fixed_numeric(sum, 0));
	return PointerGetDatum(pq_endtypsend(&buf));
}

#endif							/* HAVE_INT128 */
