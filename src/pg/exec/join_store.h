/*
 * join_store.h - rows of one side of a GpuHashJoin, addressed by number
 * (join_store.c).
 */
#ifndef GPUHASH_JOIN_STORE_H
#define GPUHASH_JOIN_STORE_H

#pragma GCC visibility push(hidden)

typedef struct GpuhashStore
{
	MemoryContext cxt;			/* NULL: read-only, over a flat form */
	int			ncols;
	uint64		nrows;
	uint64		cap;
	Size		stride;			/* bytes per row: ncols datums, ncols flags */
	char	   *rows;			/* by-reference datums hold arena offsets */
	bool	   *byval;
	int16	   *typlen;
	bool		any_byref;
	char	   *arena;
	Size		arena_used;
	Size		arena_cap;
} GpuhashStore;

/* keep_columns = false keeps row counts only (a side whose columns no one reads) */
extern void gpuhash_store_init(GpuhashStore *st, MemoryContext cxt, TupleDesc desc,
							   bool keep_columns);
extern void gpuhash_store_reset(GpuhashStore *st);
extern uint64 gpuhash_store_append(GpuhashStore *st, const Datum *values, const bool *isnull);
extern void gpuhash_store_grow(GpuhashStore *st);

/*
 * The place of the row after the last, to be written in place and then
 * counted by gpuhash_store_commit, or left uncounted; only for a store of
 * by-value columns (nothing goes to the arena).
 */
static inline Datum *
gpuhash_store_slot(GpuhashStore *st)
{
	if (st->nrows >= st->cap)
		gpuhash_store_grow(st);
	return (Datum *) (st->rows + st->nrows * st->stride);
}

static inline uint64
gpuhash_store_commit(GpuhashStore *st)
{
	return st->nrows++;
}

/*
 * Row's columns into values/isnull (by-reference values point into the
 * arena, valid while the store is).
 */
static inline void
gpuhash_store_get(const GpuhashStore *st, uint64 row, Datum *values, bool *isnull)
{
	const Datum *v = (const Datum *) (st->rows + row * st->stride);
	const bool *n = (const bool *) (v + st->ncols);

	/* a few columns: a loop beats a call of memcpy */
	for (int c = 0; c < st->ncols; c++)
	{
		values[c] = v[c];
		isnull[c] = n[c];
	}
	if (st->any_byref)
		for (int c = 0; c < st->ncols; c++)
			if (!st->byval[c] && !isnull[c])
				values[c] = PointerGetDatum(st->arena + v[c]);
}

extern void gpuhash_store_drop_columns(GpuhashStore *st);
extern bool gpuhash_store_payloads(const GpuhashStore *st, int col, int width, void *dst);

/* A by-value Datum kept as a table payload of width bytes (see join_store.c). */
static inline Datum
gpuhash_payload_datum(uint64 payload, int width)
{
	return width == 4 ? (Datum) (int64) (int32) (uint32) payload : (Datum) payload;
}

extern Size gpuhash_store_flat_size(const GpuhashStore *st, int key_width, int payload_width);
extern void gpuhash_store_flatten(const GpuhashStore *st, const void *keys, int key_width,
								  int payload_col, int payload_width, char *dst);
extern uint64 gpuhash_flat_rows(const char *flat);
extern bool gpuhash_flat_payloads(const char *flat, int col, int width, void *dst);
extern const void *gpuhash_flat_keys(const char *flat);
extern Size gpuhash_flat_merged_size(char *const *parts, int nparts, Size image_bytes);

/* Where each part of a parallel build goes in the merged form (gpuhash_flat_merge_plan). */
typedef struct GpuhashFlatMerge
{
	char	   *dst;
	char	   *const *parts;
	int			nparts;
	const bool *byval;
	bool		any_byref;
	int			ncols;
	Size		stride;
	Size		rows_off;
	Size		arena_off;
	uint64	   *row0;			/* [nparts]: each part's first row */
	Size	   *arena0;			/* [nparts]: where each part's arena goes */
} GpuhashFlatMerge;

extern char *gpuhash_flat_merge_plan(GpuhashFlatMerge *m, char *const *parts, int nparts,
									 const bool *byval, Size image_bytes, char *dst);
extern void gpuhash_flat_merge_part(const GpuhashFlatMerge *m, int i);
extern void gpuhash_prefault_for_write(void *addr, Size bytes);
extern void gpuhash_store_attach(GpuhashStore *st, MemoryContext cxt, TupleDesc desc,
								 bool keep_columns, char *flat, const char **image,
								 Size *image_bytes);

#pragma GCC visibility pop

#endif
