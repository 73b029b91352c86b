/*
 * scan_filter.h - a Seq Scan's filter, compiled for the direct heap reader
 * (scan_filter.c, used by heap_reader.c).
 */
#ifndef GPUHASH_SCAN_FILTER_H
#define GPUHASH_SCAN_FILTER_H

#include "access/tupdesc.h"
#include "nodes/pg_list.h"

#pragma GCC visibility push(hidden)

typedef struct GpuhashScanFilter GpuhashScanFilter;

/*
 * Compiles the quals (a Seq Scan's implicitly ANDed qual list over its
 * relation's columns, desc) that it can; the others are returned in *rest,
 * in their order, for the executor.  NULL when none could be compiled.
 */
extern GpuhashScanFilter *gpuhash_scan_filter_compile(List *quals, TupleDesc desc, List **rest);

/* <>, beside the btree strategies BTLessStrategyNumber .. BTGreaterStrategyNumber */
#define GPUHASH_STRATEGY_NE 6

/*
 * The comparison opno makes between two int-like values (integers, date,
 * bool) of ltype and rtype: a btree strategy or GPUHASH_STRATEGY_NE; 0 when
 * it is not one of those types' own comparisons.
 */
extern int	gpuhash_int_strategy(Oid opno, Oid ltype, Oid rtype);

/* How many of the quals were compiled. */
extern int	gpuhash_scan_filter_nquals(const GpuhashScanFilter *f);

/*
 * Does it call comparison functions?  They may allocate (detoasting a
 * value), so the caller runs it in a memory context it resets.
 */
extern bool gpuhash_scan_filter_calls(const GpuhashScanFilter *f);

/*
 * The heap attributes (0-based) the filter reads, in ascending order;
 * returns their number.
 */
extern int	gpuhash_scan_filter_attrs(const GpuhashScanFilter *f, const int **atts);

/*
 * Does a row pass?  values/isnull are indexed by heap attribute (0-based)
 * and hold at least the filter's attributes.  A row passes when every
 * compiled qual is true, as PostgreSQL decides it: false and NULL fail.
 */
extern bool gpuhash_scan_filter_pass(const GpuhashScanFilter *f, const Datum *values,
									 const bool *isnull);

/*
 * The same, callable from a thread other than the backend's: it calls no
 * function that might allocate or raise an error.  1 when the row passes,
 * 0 when it does not, -1 when only gpuhash_scan_filter_pass can tell.
 */
extern int	gpuhash_scan_filter_pass_pure(const GpuhashScanFilter *f, const Datum *values,
										  const bool *isnull);

#pragma GCC visibility pop

#endif
