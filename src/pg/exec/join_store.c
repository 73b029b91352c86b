/*
 * join_store.c - rows of one side of a GpuHashJoin, addressed by number.
 *
 * The join finds matches as (probe row, build row) numbers, and forms output
 * tuples from them only at the end.  Rows are therefore kept in arrays
 * addressed by row number: each row's datums and null flags side by side,
 * so that a build row fetched at random costs one cache miss, not one per
 * column.  By-reference values are copied into one arena and recorded as
 * offsets into it rather than as pointers, so that a store can be flattened
 * into shared memory and used by another process of a parallel query at
 * whatever address it maps there.
 */
#include "gpuhash_pg.h"

#include <sys/mman.h>
#include <unistd.h>

#include "join_store.h"

#include "utils/datum.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"

void
gpuhash_store_init(GpuhashStore *st, MemoryContext cxt, TupleDesc desc, bool keep_columns)
{
	memset(st, 0, sizeof(*st));
	st->cxt = cxt;
	st->ncols = keep_columns ? desc->natts : 0;
	st->stride = MAXALIGN(st->ncols * (sizeof(Datum) + sizeof(bool)));
	st->byval = MemoryContextAllocZero(cxt, Max(st->ncols, 1) * sizeof(bool));
	st->typlen = MemoryContextAllocZero(cxt, Max(st->ncols, 1) * sizeof(int16));
	for (int c = 0; c < st->ncols; c++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, c);

		st->byval[c] = att->attbyval;
		st->typlen[c] = att->attlen;
		st->any_byref |= !att->attbyval;
	}
}

void
gpuhash_store_reset(GpuhashStore *st)
{
	st->nrows = 0;
	st->arena_used = 0;
}

void
gpuhash_store_grow(GpuhashStore *st)
{
	uint64		cap = Max(st->cap * 2, 1024);

	if (st->stride > 0)
		st->rows = st->rows ? repalloc_huge(st->rows, cap * st->stride)
			: MemoryContextAllocHuge(st->cxt, cap * st->stride);
	st->cap = cap;
}

/* Copy a by-reference value into the arena; returns its offset. */
static Size
arena_put(GpuhashStore *st, Datum d, int16 typlen)
{
	Pointer		p = DatumGetPointer(d);
	bool		expanded = typlen == -1 && VARATT_IS_EXTERNAL_EXPANDED(p);
	Size		len = expanded ? EOH_get_flat_size(DatumGetEOHP(d))
		: datumGetSize(d, false, typlen);
	Size		off = MAXALIGN(st->arena_used);

	if (off + len > st->arena_cap)
	{
		Size		cap = Max(st->arena_cap * 2, Max(off + len, 65536));

		st->arena = st->arena ? repalloc_huge(st->arena, cap)
			: MemoryContextAllocHuge(st->cxt, cap);
		st->arena_cap = cap;
	}
	if (expanded)
		EOH_flatten_into(DatumGetEOHP(d), st->arena + off, len);
	else
		memcpy(st->arena + off, p, len);
	st->arena_used = off + len;
	return off;
}

uint64
gpuhash_store_append(GpuhashStore *st, const Datum *values, const bool *isnull)
{
	uint64		row = st->nrows;
	Datum	   *v;
	bool	   *n;

	if (row >= st->cap)
		gpuhash_store_grow(st);
	st->nrows = row + 1;
	if (st->ncols == 0)
		return row;
	v = (Datum *) (st->rows + row * st->stride);
	n = (bool *) (v + st->ncols);
	for (int c = 0; c < st->ncols; c++)
	{
		v[c] = values[c];
		n[c] = isnull[c];
	}
	if (st->any_byref)
		for (int c = 0; c < st->ncols; c++)
		{
			if (n[c])
				v[c] = (Datum) 0;
			else if (!st->byval[c])
				v[c] = (Datum) arena_put(st, values[c], st->typlen[c]);
		}
	return row;
}

/* Free the columns (the row count stays); the store no longer gives rows. */
void
gpuhash_store_drop_columns(GpuhashStore *st)
{
	if (st->cxt != NULL)
	{
		if (st->rows)
			pfree(st->rows);
		if (st->arena)
			pfree(st->arena);
	}
	st->rows = st->arena = NULL;
	st->ncols = 0;
	st->stride = 0;
	st->any_byref = false;
	st->arena_used = st->arena_cap = 0;
}

/*
 * Column col of rows[0..nrows) as hash-table payloads of width bytes into
 * dst, so that a probe returns the value itself instead of a row number to
 * fetch at random.  The column must be by value.  False, with dst partly
 * written, when some value cannot be a payload: a NULL, or (width 4) a Datum
 * that gpuhash_payload_datum would not give back bit for bit.
 */
static bool
rows_to_payloads(const char *rows, Size stride, int ncols, uint64 nrows, int col, int width,
				 void *dst)
{
	for (uint64 r = 0; r < nrows; r++)
	{
		const Datum *v = (const Datum *) (rows + r * stride);
		const bool *n = (const bool *) (v + ncols);
		Datum		d = v[col];

		if (n[col])
			return false;
		if (width == 4)
		{
			if (gpuhash_payload_datum((uint32) d, 4) != d)
				return false;
			((uint32 *) dst)[r] = (uint32) d;
		}
		else
			((uint64 *) dst)[r] = (uint64) d;
	}
	return true;
}

bool
gpuhash_store_payloads(const GpuhashStore *st, int col, int width, void *dst)
{
	Assert(col < st->ncols && st->byval[col]);
	return rows_to_payloads(st->rows, st->stride, st->ncols, st->nrows, col, width, dst);
}

/* ---- flat form, for shared memory ---------------------------------------- */

/*
 * Layout: the header, then the keys (optional), one column as payloads
 * (optional), the rows, the arena, and a table image (optional), each at a
 * MAXALIGN'ed offset from the header.  A part of a parallel build carries
 * its payloads so that each participant converts its own rows, not the
 * builder all of them (bench/NOTES.md, section 13).
 */
typedef struct FlatStore
{
	uint64		nrows;
	int32		ncols;
	int32		key_width;		/* 0: no keys */
	int32		payload_col;	/* the column held as payloads, if any */
	int32		payload_width;	/* 0: no payloads */
	bool		payloads_ok;	/* false: the column has a value no payload holds */
	Size		stride;
	Size		keys_off;
	Size		payloads_off;
	Size		rows_off;
	Size		arena_off;
	Size		arena_bytes;
	Size		image_off;
	Size		image_bytes;
	Size		total;
} FlatStore;

static Size
flat_layout(FlatStore *h, uint64 nrows, int ncols, Size stride, int key_width,
			int payload_width, Size arena_bytes, Size image_bytes)
{
	Size		off = MAXALIGN(sizeof(FlatStore));

	memset(h, 0, sizeof(*h));
	h->nrows = nrows;
	h->ncols = ncols;
	h->stride = stride;
	h->key_width = key_width;
	h->payload_col = -1;
	h->payload_width = payload_width;
	h->keys_off = off;
	off = MAXALIGN(off + nrows * key_width);
	h->payloads_off = off;
	off = MAXALIGN(off + nrows * payload_width);
	h->rows_off = off;
	off = MAXALIGN(off + nrows * stride);
	h->arena_off = off;
	h->arena_bytes = arena_bytes;
	off = TYPEALIGN(64, off + arena_bytes);
	h->image_off = off;
	h->image_bytes = image_bytes;
	h->total = off + image_bytes;
	return h->total;
}

/* payload_width 0: no payloads; else column payload_col as payloads too */
Size
gpuhash_store_flat_size(const GpuhashStore *st, int key_width, int payload_width)
{
	FlatStore	h;

	return flat_layout(&h, st->nrows, st->ncols, st->stride, key_width, payload_width,
					   st->arena_used, 0);
}

void
gpuhash_store_flatten(const GpuhashStore *st, const void *keys, int key_width,
					  int payload_col, int payload_width, char *dst)
{
	FlatStore	h;

	flat_layout(&h, st->nrows, st->ncols, st->stride, key_width, payload_width,
				st->arena_used, 0);
	if (payload_width > 0)
	{
		h.payload_col = payload_col;
		h.payloads_ok = gpuhash_store_payloads(st, payload_col, payload_width,
											   dst + h.payloads_off);
	}
	memcpy(dst, &h, sizeof(h));
	if (key_width > 0 && st->nrows > 0)
		memcpy(dst + h.keys_off, keys, st->nrows * key_width);
	if (st->stride > 0 && st->nrows > 0)
		memcpy(dst + h.rows_off, st->rows, st->nrows * st->stride);
	if (st->arena_used > 0)
		memcpy(dst + h.arena_off, st->arena, st->arena_used);
}

uint64
gpuhash_flat_rows(const char *flat)
{
	return ((const FlatStore *) flat)->nrows;
}

/* gpuhash_store_payloads of a part's flat form */
bool
gpuhash_flat_payloads(const char *flat, int col, int width, void *dst)
{
	const FlatStore *h = (const FlatStore *) flat;

	Assert(col < h->ncols);
	if (h->payload_width == width && h->payload_col == col)
	{
		if (h->payloads_ok && h->nrows > 0)
			memcpy(dst, flat + h->payloads_off, h->nrows * width);
		return h->payloads_ok;
	}
	return rows_to_payloads(flat + h->rows_off, h->stride, h->ncols, h->nrows, col, width, dst);
}

const void *
gpuhash_flat_keys(const char *flat)
{
	return flat + ((const FlatStore *) flat)->keys_off;
}

static void
merged_layout(FlatStore *h, char *const *parts, int nparts, Size image_bytes)
{
	uint64		nrows = 0;
	Size		arena = 0;
	const FlatStore *p0 = nparts > 0 ? (const FlatStore *) parts[0] : NULL;

	for (int i = 0; i < nparts; i++)
	{
		nrows += ((FlatStore *) parts[i])->nrows;
		arena = MAXALIGN(arena) + ((FlatStore *) parts[i])->arena_bytes;
	}
	flat_layout(h, nrows, p0 ? p0->ncols : 0, p0 ? p0->stride : 0, 0, 0, arena, image_bytes);
}

/*
 * Bytes of the merged form of the parts, with room for a table image of
 * image_bytes and no keys.
 */
Size
gpuhash_flat_merged_size(char *const *parts, int nparts, Size image_bytes)
{
	FlatStore	h;

	merged_layout(&h, parts, nparts, image_bytes);
	return h.total;
}

/*
 * Map the pages of [addr, addr + bytes) for writing in one call, before
 * they are first written: faulting them in one at a time during the copy
 * made a 134 MB table image take 66-83 ms to write on the H100 host, 47-67
 * ms with this (bench/NOTES.md, section 13).  Only a hint: kernels before
 * 5.14 lack it.  Calls nothing of PostgreSQL, for helper threads.
 */
void
gpuhash_prefault_for_write(void *addr, Size bytes)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t	page = (uintptr_t) sysconf(_SC_PAGESIZE);
	uintptr_t	start = (uintptr_t) addr & ~(page - 1);

	if (bytes > 0)
		(void) madvise((void *) start, bytes + ((uintptr_t) addr - start), MADV_POPULATE_WRITE);
#endif
}

/*
 * Write the merged form's header into dst and plan where each part's rows
 * and arena go (in part order, each arena at a MAXALIGN'ed offset); returns
 * where the table image goes.  The parts are then copied by
 * gpuhash_flat_merge_part, in any order and on any thread.
 */
char *
gpuhash_flat_merge_plan(GpuhashFlatMerge *m, char *const *parts, int nparts, const bool *byval,
						Size image_bytes, char *dst)
{
	FlatStore	h;
	uint64		row0 = 0;
	Size		arena0 = 0;

	merged_layout(&h, parts, nparts, image_bytes);
	memcpy(dst, &h, sizeof(h));
	m->dst = dst;
	m->parts = parts;
	m->nparts = nparts;
	m->byval = byval;
	m->any_byref = false;
	for (int c = 0; c < h.ncols; c++)
		m->any_byref |= !byval[c];
	m->ncols = h.ncols;
	m->stride = h.stride;
	m->rows_off = h.rows_off;
	m->arena_off = h.arena_off;
	m->row0 = palloc(Max(nparts, 1) * sizeof(uint64));
	m->arena0 = palloc(Max(nparts, 1) * sizeof(Size));
	for (int i = 0; i < nparts; i++)
	{
		const FlatStore *p = (const FlatStore *) parts[i];

		arena0 = MAXALIGN(arena0);
		m->row0[i] = row0;
		m->arena0[i] = arena0;
		row0 += p->nrows;
		arena0 += p->arena_bytes;
	}
	return dst + h.image_off;
}

/*
 * Copy part i into the merged form, its pages mapped first; arena offsets
 * are moved by where the part's arena lands.  Calls nothing of PostgreSQL,
 * for helper threads.
 */
void
gpuhash_flat_merge_part(const GpuhashFlatMerge *m, int i)
{
	const FlatStore *p = (const FlatStore *) m->parts[i];
	char	   *to = m->dst + m->rows_off + m->row0[i] * m->stride;
	char	   *arena_to = m->dst + m->arena_off + m->arena0[i];
	Size		arena0 = m->arena0[i];

	if (p->nrows > 0 && m->stride > 0)
	{
		gpuhash_prefault_for_write(to, p->nrows * m->stride);
		memcpy(to, m->parts[i] + p->rows_off, p->nrows * m->stride);
	}
	if (m->any_byref && arena0 > 0)
		for (uint64 r = 0; r < p->nrows; r++)
		{
			Datum	   *v = (Datum *) (to + r * m->stride);
			bool	   *n = (bool *) (v + m->ncols);

			for (int c = 0; c < m->ncols; c++)
				if (!m->byval[c] && !n[c])
					v[c] += arena0;
		}
	if (p->arena_bytes > 0)
	{
		gpuhash_prefault_for_write(arena_to, p->arena_bytes);
		memcpy(arena_to, m->parts[i] + p->arena_off, p->arena_bytes);
	}
}

/* A read-only store over a merged flat form; *image gets its table image. */
void
gpuhash_store_attach(GpuhashStore *st, MemoryContext cxt, TupleDesc desc, bool keep_columns,
					 char *flat, const char **image, Size *image_bytes)
{
	const FlatStore *h = (const FlatStore *) flat;

	gpuhash_store_init(st, cxt, desc, keep_columns);
	Assert(h->ncols == st->ncols && h->stride == st->stride);
	st->cxt = NULL;				/* read-only */
	st->nrows = st->cap = h->nrows;
	st->rows = flat + h->rows_off;
	st->arena = flat + h->arena_off;
	st->arena_used = st->arena_cap = h->arena_bytes;
	*image = flat + h->image_off;
	*image_bytes = h->image_bytes;
}
