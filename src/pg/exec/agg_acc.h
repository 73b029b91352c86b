/*
 * agg_acc.h - one aggregate's accumulator in a GpuHashAggregate, and the
 * fixed-point fold of numeric arguments (agg_fixed.c).
 */
#ifndef GPUHASH_AGG_ACC_H
#define GPUHASH_AGG_ACC_H

#include "join_agg.h"

#pragma GCC visibility push(hidden)

typedef struct GpuAggAcc
{
	int64		count;			/* rows, or non-NULL arguments */
	int64		sum;			/* of int2/int4 arguments, as PostgreSQL's int8 state */
#ifdef HAVE_INT128
	int128		wide_sum;		/* of int8 arguments; of numeric ones at their scale */
#endif
	int64		best;			/* min or max */
	Datum		spill;			/* numeric arguments not added fixed-point: their sum, or 0 */
	bool		have;			/* a non-NULL argument was seen; numeric: a fixed-point one */
	int16		seen_scale;		/* numeric: the largest display scale added fixed-point */
} GpuAggAcc;

StaticAssertDecl(sizeof(GpuAggAcc) <= GPUHASH_AGG_ACC_BYTES,
				 "the planner's estimate of a group's size is too small");

/*
 * A numeric column that numeric arguments read, decoded once per chunk of
 * rows however many arguments read it: its fixed-point values and whether
 * each is NULL or not fixed-point (agg_exec.c).
 */
typedef enum FixedLeafState
{
	LEAF_OK,
	LEAF_NULL,
	LEAF_SLOW
} FixedLeafState;

/* rows folded per pass, their buffers on the stack */
#define FOLD_CHUNK 2048

/*
 * A numeric leaf's recent short values (a 1-byte varlena header and at most
 * 7 bytes, as the header and bytes of one uint64) and what they converted
 * to: TPC-H's quantities, discounts and taxes take a few dozen values.
 */
#define LEAF_MEMO_SLOTS 64

typedef struct GpuAggLeafMemo
{
	uint64		bytes;			/* 0: empty (a short header is never 0) */
	uint8		state;			/* FixedLeafState of the conversion */
	int128		val;
} GpuAggLeafMemo;

typedef struct GpuAggLeaf
{
	int			op;				/* GO_OUTER or GO_INNER */
	int			col;
	int			width;			/* GPUHASH_NUMERIC, or an integer's bytes (scale 0) */
	int			scale;
	int128	   *val;
	uint8	   *state;			/* FixedLeafState */
	GpuAggLeafMemo *memo;		/* [LEAF_MEMO_SLOTS], numeric leaves */
} GpuAggLeaf;

/*
 * One joined row as the stores hold it: a by-reference column's Datum is
 * an offset into its side's arena.
 */
typedef struct GpuAggRow
{
	const Datum *ov;
	const bool *on;
	const char *oarena;
	const Datum *iv;
	const bool *in;
	const char *iarena;
} GpuAggRow;

/* the stack of a chunk's evaluation: a value and a state array per level */
typedef struct GpuAggScratch
{
	int128	   *val[GPUHASH_AGG_MAX_DEPTH];
	uint8	   *state[GPUHASH_AGG_MAX_DEPTH];
} GpuAggScratch;

#ifdef HAVE_INT128
extern void gpuhash_fixed_chunk(const GpuAggSpec *a, const GpuAggLeaf *leaves, int m,
								GpuAggScratch *s, const int128 **out, const uint8 **state);
extern void gpuhash_fixed_add(const GpuAggSpec *a, GpuAggAcc *acc, int128 v, int scale,
							  MemoryContext acc_cxt, MemoryContext tmp_cxt);
extern void gpuhash_fixed_combine(const GpuAggSpec *a, GpuAggAcc *dst, const GpuAggAcc *src,
								  Datum src_spill, MemoryContext acc_cxt, MemoryContext tmp_cxt);
extern void gpuhash_fixed_fold_slow(const GpuAggSpec *a, GpuAggAcc *acc, const GpuAggRow *row,
									MemoryContext acc_cxt, MemoryContext tmp_cxt);
extern Datum gpuhash_fixed_value(const GpuAggSpec *a, const GpuAggAcc *acc, bool *isnull);
extern Datum gpuhash_int8_sum_state(int64 count, int128 sum);
#endif

#pragma GCC visibility pop

#endif
