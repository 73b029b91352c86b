/*
 * numeric_fixed.h - numeric values as exact fixed-point integers, for the
 * aggregates of a GpuHashAggregate (numeric_fixed.c).
 *
 * A numeric column declared with a scale holds values whose display scale
 * is that scale, so a sum of such values, or of sums and products of them,
 * is an integer count of 10^-scale units with a scale known when the plan
 * is made.  The node adds those integers in 128 bits and makes a numeric of
 * the total only when it emits a group; a value that does not fit (NaN, an
 * infinity, more digits than 128 bits hold) is added as a numeric instead,
 * so the result is PostgreSQL's to the last digit.
 */
#ifndef GPUHASH_NUMERIC_FIXED_H
#define GPUHASH_NUMERIC_FIXED_H

#include "lib/stringinfo.h"

#pragma GCC visibility push(hidden)

/* largest scale the fixed-point path works at: 10^36 still fits 127 bits */
#define GPUHASH_FIXED_MAX_SCALE 36

#ifdef HAVE_INT128
typedef enum FixedStatus
{
	FIXED_OK,					/* *out holds the value */
	FIXED_SPECIAL,				/* NaN or an infinity */
	FIXED_TOO_WIDE				/* a finer scale, or more digits than fit */
} FixedStatus;

extern FixedStatus gpuhash_numeric_fixed(Datum value, int scale, int128 *out);
extern bool gpuhash_numeric_compare(Datum value, int64 c, int cs, int *cmp);
extern bool gpuhash_fixed_rescale(int128 v, int from, int to, int128 *out);
extern int128 gpuhash_fixed_pow10(int e);
extern Datum gpuhash_fixed_numeric(int128 v, int scale);
#endif

extern bool gpuhash_numeric_small(Datum value, int64 *v, int *scale);

extern void gpuhash_numeric_send_var(StringInfo buf, Datum value);

#pragma GCC visibility pop

#endif
