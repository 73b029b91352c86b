/*
 * agg_eval.h - an aggregate's integer argument on one joined row
 * (agg_eval.c), for GpuHashAggregate's fold (agg_exec.c).
 *
 * The helpers the fold runs on every row are inline here, so that its
 * loops keep inlining them; the interpreter and the conditions are called
 * out of line.
 */
#ifndef GPUHASH_AGG_EVAL_H
#define GPUHASH_AGG_EVAL_H

#include "utils/date.h"
#include "utils/datetime.h"

#include "join_agg.h"

#pragma GCC visibility push(hidden)

struct GpuJoinState;

/* PostgreSQL's errors for integer results that do not fit their type */
extern pg_attribute_cold void gpuhash_agg_out_of_range(int width) pg_attribute_noreturn();
extern bool gpuhash_agg_eval_program(const GpuAggSpec *a, const Datum *ov, const bool *on,
									 const Datum *iv, const bool *in, const bool *truth,
									 int64 *out);
extern void gpuhash_agg_year_starts(int64 *v, const bool *isnull, int n);
extern void gpuhash_agg_cond_truths(struct GpuJoinState *gj, const GpuAggSpec *a,
									const Datum *ov, const bool *on, const Datum *iv,
									const bool *in, bool *truth);

static inline int64
gpuhash_agg_fit(int64 v, int width)
{
	if ((width == 2 && (v < PG_INT16_MIN || v > PG_INT16_MAX)) ||
		(width == 4 && (v < PG_INT32_MIN || v > PG_INT32_MAX)))
		gpuhash_agg_out_of_range(width);
	return v;
}

static inline int64
gpuhash_agg_datum_int(Datum d, int width)
{
	return width == 1 ? (int64) DatumGetBool(d) : width == 2 ? DatumGetInt16(d) :
		width == 4 ? DatumGetInt32(d) : DatumGetInt64(d);
}

/*
 * A GK_YEAR key (join_agg.h): the first day of date d's year, so that one
 * year is one key whatever the day; an infinite date is kept, extract then
 * giving its infinity.
 */
static inline int64
gpuhash_agg_year_start(int64 d)
{
	int			y,
				m,
				dd;

	if (DATE_NOT_FINITE((DateADT) d))
		return d;
	j2date((int) d + POSTGRES_EPOCH_JDATE, &y, &m, &dd);
	return date2j(y, 1, 1) - POSTGRES_EPOCH_JDATE;
}

/* Column ins of the joined row into *v; false if it is NULL. */
static inline bool
gpuhash_agg_column_value(const GpuAggInstr *ins, const Datum *ov, const bool *on,
						 const Datum *iv, const bool *in, int64 *v)
{
	const Datum *vals = ins->op == GO_OUTER ? ov : iv;
	const bool *nulls = ins->op == GO_OUTER ? on : in;

	if (nulls[ins->col])
		return false;
	*v = gpuhash_agg_datum_int(vals[ins->col], ins->width);
	return true;
}

/* The argument's value on one joined row; false if it is NULL. */
static inline bool
gpuhash_agg_eval_arg(const GpuAggSpec *a, const Datum *ov, const bool *on, const Datum *iv,
					 const bool *in, const bool *truth, int64 *out)
{
	int64		x,
				y;

	switch (a->shape)
	{
		case GS_COLUMN:
			return gpuhash_agg_column_value(&a->prog[0], ov, on, iv, in, out);
		case GS_ADD2:
			if (!gpuhash_agg_column_value(&a->prog[0], ov, on, iv, in, &x) ||
				!gpuhash_agg_column_value(&a->prog[1], ov, on, iv, in, &y))
				return false;
			if (__builtin_add_overflow(x, y, out))
				gpuhash_agg_out_of_range(8);
			*out = gpuhash_agg_fit(*out, a->prog[2].width);
			return true;
		default:
			return gpuhash_agg_eval_program(a, ov, on, iv, in, truth, out);
	}
}

#pragma GCC visibility pop

#endif
