/*
 * join_agg.h - aggregates computed inside a GpuHashJoin (the node is then
 * called GpuHashAggregate): what the planner (agg_path.c, agg_compile.c) hands the executor
 * (agg_exec.c).
 *
 * A query such as SELECT d.g, count(*), sum(f.a + d.b) FROM f JOIN d ON ...
 * GROUP BY d.g would make the join emit every joined row for an Aggregate
 * node above to fold; for simple aggregates of integer and numeric columns,
 * grouped by integer, date, bool or text columns of either side (or not
 * grouped), the join folds them itself, as it matches, and emits one row
 * per group: the group keys and the aggregates' values, or in a parallel
 * plan each participant's partial states for a Finalize Aggregate to
 * combine.  An argument is a small program over the joined row's columns,
 * run with PostgreSQL's overflow errors and NULL rules.
 */
#ifndef GPUHASH_JOIN_AGG_H
#define GPUHASH_JOIN_AGG_H

#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

#pragma GCC visibility push(hidden)

#define GPUHASH_AGG_NAME "GpuHashAggregate"

/* deepest evaluation stack an argument may need */
#define GPUHASH_AGG_MAX_DEPTH 16

/* conditions an aggregate's CASE may leave to the direct reader's filter, at most */
#define GPUHASH_AGG_MAX_CONDS 64

/* group key columns at most: their NULL flags fit one byte */
#define GPUHASH_AGG_MAX_KEYS 8

/* bytes of one aggregate's accumulator at most (agg_exec.c), for estimates */
#define GPUHASH_AGG_ACC_BYTES 64

typedef enum GpuAggKind
{
	GA_COUNT_STAR,
	GA_COUNT,
	GA_SUM,
	GA_MIN,
	GA_MAX,
	GA_AVG,
	GA_COUNT_DISTINCT			/* count(DISTINCT column): grouped, never partial (agg_exec.c) */
} GpuAggKind;

/*
 * A node with count(DISTINCT) marks the records of its (group, value)
 * pairs written out past hash_mem with this bit of the NULL mask, so its
 * group keys are one fewer at most (agg_combine.c).
 */
#define GPUHASH_DISTINCT_MAX_KEYS (GPUHASH_AGG_MAX_KEYS - 1)

typedef enum GpuAggOp
{
	GO_OUTER,					/* push outer column col */
	GO_INNER,					/* push inner column col */
	GO_CONST,					/* push value */
	GO_ADD,						/* pop two, push their sum */
	GO_SUB,
	GO_MUL,
	GO_NEG,						/* negate the top */
	GO_CAST,					/* check the top fits width */
	/* integer arguments only: CASE and its conditions (NULL is false there) */
	GO_NULL,					/* push NULL */
	GO_CMP,						/* pop two, push their comparison (value: GpuAggCmp) */
	GO_AND,						/* pop two truth values, push AND in three-valued logic */
	GO_OR,
	GO_NOT,
	GO_ISNULL,					/* the top becomes whether it is NULL (value 0) or not (1) */
	GO_JUMPF,					/* pop; unless it is true, go on at instruction col */
	GO_JUMP,					/* go on at instruction col */
	GO_COND,					/* push the truth of the aggregate's condition col */
	GO_BRANCH					/* a numeric CASE: branch col's program follows */
} GpuAggOp;

typedef enum GpuAggCmp
{
	GC_EQ,
	GC_NE,
	GC_LT,
	GC_LE,
	GC_GT,
	GC_GE
} GpuAggCmp;

/*
 * One instruction; width is the byte width of its result's type (2, 4, 8),
 * or GPUHASH_NUMERIC for a numeric; scale is a numeric result's display
 * scale (its value is an integer count of 10^-scale), else 0.
 */
typedef struct GpuAggInstr
{
	int			op;
	int			width;
	int			col;
	int64		value;
	int			scale;
	int			leaf;			/* executor: a numeric column's slot in the chunk's decoded columns, or -1 */
	int			form;			/* a group key: GpuAggKeyForm */
	int			out;			/* a group key: its column of the scan tuple */
} GpuAggInstr;

/*
 * What a group key holds: its column's value, or for EXTRACT(YEAR FROM a
 * date column) the first day of that date's year (an infinite date stays
 * itself), emitted as PostgreSQL's extract gives it for that day.
 */
typedef enum GpuAggKeyForm
{
	GK_COLUMN,
	GK_YEAR
} GpuAggKeyForm;

/* the width of a numeric value, and of text, varchar and bpchar group keys */
#define GPUHASH_NUMERIC (-1)
#define GPUHASH_TEXT_KEY (-2)
#define GPUHASH_BPCHAR_KEY (-3)

static inline bool
gpuhash_text_key(const GpuAggInstr *key)
{
	return key->width == GPUHASH_TEXT_KEY || key->width == GPUHASH_BPCHAR_KEY;
}

/* Arguments of the commonest shapes skip the interpreter (agg_eval.h). */
typedef enum GpuAggShape
{
	GS_PROGRAM,					/* anything: run prog */
	GS_COLUMN,					/* one column */
	GS_ADD2						/* one column plus another */
} GpuAggShape;

typedef struct GpuAggSpec
{
	GpuAggKind	kind;
	GpuAggShape shape;
	Oid			restype;		/* type of the value the node emits */
	int			argwidth;		/* byte width of the argument's type, or GPUHASH_NUMERIC */
	int			scale;			/* a numeric argument's display scale */
	bool		partial;		/* emit the transition state, not the result */
	int			ninstr;
	GpuAggInstr *prog;
	int			nconds;			/* GO_COND's conditions, compiled (scan_filter.h) */
	struct GpuhashScanFilter **conds;
	bool		cond_calls;		/* ... some of which call functions that may allocate */
	int			nbranches;		/* a numeric CASE: prog picks one of these (ninstr 0: NULL) */
	struct GpuAggSpec *branches;
} GpuAggSpec;

/*
 * A group key is one instruction, GO_OUTER or GO_INNER, whose width is 1
 * (bool), 2, 4 (int4, date) or 8; the plan stores the keys as one List of
 * five Integers each: op, width, col, form (GpuAggKeyForm) and the scan
 * tuple's column the key is emitted in.  A column key is emitted in its own
 * column; an expression key in a column of its own after the aggregates',
 * so that the expression above the node reads the key, not the column it
 * was computed from.
 *
 * The plan stores each aggregate as a List: kind, restype, argwidth,
 * partial, the number of its conditions, the conditions, then five nodes per
 * instruction (op, width, col as Integers, the value as a String, since an
 * Integer holds only 32 bits, and the scale).  A condition (GO_COND) is a
 * boolean expression whose Vars number the joined row's columns, the outer
 * side's and then the inner side's, as the node's scan tuple begins; the
 * direct reader's filter compiles it (scan_filter.c), and it is evaluated
 * on each row the aggregate folds.
 *
 * A numeric argument is a program of its own kind: its columns are numeric
 * ones of a declared scale, or integer ones cast to numeric (width 2, 4, 8,
 * scale 0), and its constants are fixed-point values; it runs in 128-bit
 * integers (agg_fixed.c).  A numeric argument that is a CASE is an integer
 * program giving the number of the branch a row takes (its WHEN conditions,
 * then the branch numbers as constants), then per branch GO_BRANCH (col:
 * its number, scale: its display scale, or -1 for a NULL result) and the
 * branch's numeric program.
 */

/* agg_path.c */
extern void gpuhash_agg_init(void);
extern Node *gpuhash_agg_create_state(CustomScan *cscan);
extern Node *gpuhash_scan_agg_create_state(CustomScan *cscan);

/* agg_compile.c */
extern bool gpuhash_agg_plan_aggs(List *aggrefs, List *outer_tlist, List *inner_tlist,
								  List **specs);
extern bool gpuhash_agg_plan_group_keys(List *key_exprs, int ngroup, List *outer_tlist,
										List *inner_tlist, List **keys);
extern Var *gpuhash_agg_year_of_date(Expr *e);
extern List *gpuhash_agg_plan_key_columns(List *keys, List *key_exprs, int n_outer,
										  List *scan_tlist);

#pragma GCC visibility pop

#endif
