/*
 * heap_reader.h - reading a join's input straight from the heap pages of a
 * plain Seq Scan below it (heap_reader.c).
 */
#ifndef GPUHASH_HEAP_READER_H
#define GPUHASH_HEAP_READER_H

#include "lib/stringinfo.h"
#include "nodes/execnodes.h"

#pragma GCC visibility push(hidden)

typedef struct GpuhashHeapReader GpuhashHeapReader;

/*
 * A reader of child's rows, filtered as child filters them, or NULL when
 * child is not a Seq Scan it can read (see heap_reader.c); the caller then
 * uses ExecProcNode.
 */
extern GpuhashHeapReader *gpuhash_heap_reader_create(PlanState *child);

/* Start or continue reading (call before a run of _next calls). */
extern void gpuhash_heap_reader_begin(GpuhashHeapReader *r);

/*
 * The next row's columns, as child would return them, into values/isnull
 * (by-reference values are valid until the next call); false at the end.
 */
extern bool gpuhash_heap_reader_next(GpuhashHeapReader *r, Datum *values, bool *isnull);

/* Stop reading for now (after a run of _next calls). */
extern void gpuhash_heap_reader_pause(GpuhashHeapReader *r);

/* The Seq Scan is about to be rescanned (before each ExecReScan of it). */
extern void gpuhash_heap_reader_rescan(GpuhashHeapReader *r);

/* The node ends (before ExecEndNode of the Seq Scan). */
extern void gpuhash_heap_reader_end(GpuhashHeapReader *r);

/* Its Seq Scan's quals: how many it compiled, how many ExecQual tests. */
extern void gpuhash_heap_reader_filter(const GpuhashHeapReader *r, int *compiled, int *executor);

/* How many processes of a parallel plan read alike (before the first _begin). */
extern void gpuhash_heap_reader_set_participants(GpuhashHeapReader *r, int n);

/* Did a helper thread deform and filter its pages (gpuhash.read_thread)? */
extern bool gpuhash_heap_reader_threaded(const GpuhashHeapReader *r);

/*
 * A join's Bloom filter of its table's keys, tested on each row's key (the
 * output columns col and col2, < 0 for none) as the row is read; rows it
 * refuses are not handed on.  See heap_reader.c.
 */
extern void gpuhash_heap_reader_set_key_filter(GpuhashHeapReader *r, const uint64 *words,
											   uint64 nwords, int col, Oid type, int col2,
											   Oid type2, bool mixed);
extern void gpuhash_heap_reader_key_filter_stats(const GpuhashHeapReader *r, uint64 *removed,
												 bool *dropped);

/*
 * EXPLAIN's words for a side the reader reads, appended to buf after a
 * comma when buf holds another's: side, and how it filters its rows.
 */
extern void gpuhash_heap_reader_describe(StringInfo buf, const char *side,
										 const GpuhashHeapReader *r);

#pragma GCC visibility pop

#endif
