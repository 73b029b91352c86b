/*
 * cpu_table.c - the CPU half of the core: builds, probes and updates tables
 * in host memory with the same layouts and algorithms as the GPU half.
 */
#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>

#define GHT_CAT_(a, b) a##b
#define GHT_CAT(a, b) GHT_CAT_(a, b)

#define KT uint32_t
#define ST ght_slot32
#define EMPTYK GHT_EMPTY32
#define HASHK ght_hash_k32
#define SFX _32
#include "cpu_table_tmpl.h"
#undef KT
#undef ST
#undef EMPTYK
#undef HASHK
#undef SFX

#define KT uint64_t
#define ST ght_slot64
#define EMPTYK GHT_EMPTY64
#define HASHK ght_hash_k64
#define SFX _64
#include "cpu_table_tmpl.h"
#undef KT
#undef ST
#undef EMPTYK
#undef HASHK
#undef SFX

#define W32(t) ((t)->opts.key_width == 4)

/* Each block starts with its size, so that frees need not be told it. */
typedef struct cpu_mem_hdr
{
	uint64_t	bytes;
	uint64_t	pad;			/* keeps the block 16-byte aligned */
} cpu_mem_hdr;

void *
cpu_mem_alloc(ght_ctx *ctx, uint64_t bytes, int zero)
{
	cpu_mem_hdr *h;

	if (ctx->fail_after > 0 && --ctx->fail_after == 0)
	{
		ctx->alloc_status = GHT_ERR_HOST_NOMEM;
		ght_fail(ctx, GHT_ERR_HOST_NOMEM, "injected failure of a %llu-byte allocation",
				 (unsigned long long) bytes);
		return NULL;
	}
	if (ctx->dev_limit > 0 && ctx->dev_bytes + bytes > ctx->dev_limit)
	{
		ctx->alloc_status = GHT_ERR_MEM_LIMIT;
		ctx->limit_need = ctx->dev_bytes + bytes;
		ght_fail(ctx, GHT_ERR_MEM_LIMIT,
				 "%llu more bytes of table memory would exceed the limit of %llu bytes (%llu in use)",
				 (unsigned long long) bytes, (unsigned long long) ctx->dev_limit,
				 (unsigned long long) ctx->dev_bytes);
		return NULL;
	}
	if (bytes > SIZE_MAX - sizeof(cpu_mem_hdr))
		h = NULL;
	else if (zero)
		h = calloc(1, sizeof(cpu_mem_hdr) + (size_t) bytes);
	else
		h = malloc(sizeof(cpu_mem_hdr) + (size_t) bytes);
	if (h == NULL)
	{
		ctx->alloc_status = GHT_ERR_HOST_NOMEM;
		ght_fail(ctx, GHT_ERR_HOST_NOMEM, "could not allocate %llu bytes of host memory",
				 (unsigned long long) bytes);
		return NULL;
	}
	h->bytes = bytes;
	ctx->dev_bytes += bytes;
	return h + 1;
}

void
cpu_mem_free(ght_ctx *ctx, void *p)
{
	cpu_mem_hdr *h;

	if (p == NULL)
		return;
	h = (cpu_mem_hdr *) p - 1;
	ctx->dev_bytes -= h->bytes;
	free(h);
}

ght_status
cpu_mem_failure(ght_ctx *ctx)
{
	return ctx->alloc_status != GHT_OK ? ctx->alloc_status : GHT_ERR_HOST_NOMEM;
}

void *
cpu_table_alloc(ght_table *t, int which, uint64_t bytes)
{
	void	   *p = cpu_mem_alloc(t->ctx, bytes, 0);

	if (p != NULL)
	{
		t->mem[which] = p;
		t->mem_bytes[which] = bytes;
		t->bytes += bytes;
	}
	return p;
}

void
cpu_table_release(ght_table *t, int which)
{
	cpu_mem_free(t->ctx, t->mem[which]);
	t->bytes -= t->mem_bytes[which];
	t->mem[which] = NULL;
	t->mem_bytes[which] = 0;
}

void
ght_cpu_free(ght_table *t)
{
	for (int i = 0; i < GHT_MEM_COUNT; i++)
		cpu_table_release(t, i);
}

static uint64_t
input_payload(const ght_table *t, const void *payloads, uint64_t row)
{
	if (t->opts.flags & GHT_BUILD_ROWNUM_PAYLOAD)
		return row;
	return t->opts.payload_width == 4 ? ((const uint32_t *) payloads)[row]
		: ((const uint64_t *) payloads)[row];
}

/* ---- mutable tables ----------------------------------------------------- */

static ght_status
list_pool_alloc(ght_table *t, uint64_t cap)
{
	t->ix.payload = cpu_table_alloc(t, GHT_MEM_PAYLOAD, cap * (uint64_t) t->opts.payload_width);
	t->ix.next = cpu_table_alloc(t, GHT_MEM_NEXT, cap * sizeof(uint32_t));
	if (t->ix.payload == NULL || t->ix.next == NULL)
		return cpu_mem_failure(t->ctx);
	t->pool_cap = cap;
	return GHT_OK;
}

/* Lay out an empty mutable table with room for `keys` keys and `rows` rows. */
static ght_status
list_init(ght_table *t, uint64_t keys, uint64_t rows)
{
	ght_status	s;

	t->ix.mode = GHT_MODE_LIST;
	t->used_slots = t->distinct = t->rows = t->pool_used = 0;
	s = W32(t) ? linear_alloc_32(t, keys) : linear_alloc_64(t, keys);
	if (s != GHT_OK)
		return s;
	return list_pool_alloc(t, rows < 1024 ? 1024 : rows);
}

static ght_status
list_add(ght_table *t, const void *keys, const void *payloads, int rownum, uint64_t n)
{
	return W32(t) ? list_add_32(t, keys, payloads, rownum, n)
		: list_add_64(t, keys, payloads, rownum, n);
}

/*
 * Rehash into a fresh table sized for the live rows plus `extra` more: this
 * is how a mutable table grows, and how deleted keys and their nodes are
 * reclaimed.
 */
static ght_status
list_rehash(ght_table *t, uint64_t extra)
{
	void	   *keys;
	uint64_t   *vals;
	uint64_t	n;
	ght_table	fresh;
	ght_status	s;

	s = ght_export(t, &keys, &vals, &n);
	if (s != GHT_OK)
		return s;
	memset(&fresh, 0, sizeof(fresh));
	fresh.ctx = t->ctx;
	fresh.opts = t->opts;
	fresh.ix = t->ix;
	fresh.ix.slots = fresh.ix.payload = NULL;
	fresh.ix.next = NULL;
	s = list_init(&fresh, t->distinct + extra, n + extra + (n + extra) / 2);
	if (s == GHT_OK && n > 0)
	{
		/* list_add reads payloads at the table's width */
		if (t->opts.payload_width == 4)
			for (uint64_t i = 0; i < n; i++)
				((uint32_t *) vals)[i] = (uint32_t) vals[i];
		s = list_add(&fresh, keys, vals, 0, n);
	}
	free(keys);
	free(vals);
	if (s != GHT_OK)
	{
		ght_cpu_free(&fresh);
		return s;
	}
	fresh.build_attempts = t->build_attempts + 1;
	fresh.build_ms = t->build_ms;
	ght_cpu_free(t);
	*t = fresh;
	return GHT_OK;
}

ght_status
ght_cpu_insert(ght_table *t, const void *keys, const void *payloads, uint64_t n)
{
	ght_status	s;

	if (t->opts.method == GHT_HOPSCOTCH)
		return cpu_hop_insert(t, keys, payloads, n);
	if ((double) (t->used_slots + n) > (double) t->ix.nslots * GHT_LINEAR_MUTABLE_MAX_LOAD ||
		t->pool_used + n > t->pool_cap)
	{
		s = list_rehash(t, n);
		if (s != GHT_OK)
			return s;
	}
	return list_add(t, keys, payloads, 0, n);
}

ght_status
ght_cpu_delete(ght_table *t, const void *keys, uint64_t n, uint64_t *removed)
{
	if (t->opts.method == GHT_HOPSCOTCH)
		return cpu_hop_delete(t, keys, n, removed);
	return W32(t) ? list_delete_32(t, keys, n, removed) : list_delete_64(t, keys, n, removed);
}

ght_status
ght_cpu_export(ght_table *t, void *keys, uint64_t *payloads, uint64_t *n_out)
{
	if (t->opts.method == GHT_HOPSCOTCH)
		return cpu_hop_export(t, keys, payloads, n_out);
	return W32(t) ? export_32(t, keys, payloads, n_out) : export_64(t, keys, payloads, n_out);
}

ght_status
ght_cpu_probe_stats(ght_table *t, double *mean, uint32_t *max)
{
	if (t->opts.method == GHT_HOPSCOTCH)
		return cpu_hop_probe_stats(t, mean, max);
	if (W32(t))
		probe_stats_32(&t->ix, mean, max);
	else
		probe_stats_64(&t->ix, mean, max);
	return GHT_OK;
}

ght_status
ght_cpu_mixed_batch(ght_table *t, const uint8_t *ops, const void *keys,
					const uint64_t *payloads, uint64_t n, uint8_t *found)
{
	if (t->opts.method == GHT_HOPSCOTCH)
		return cpu_hop_mixed_batch(t, ops, keys, payloads, n, found);
	return ght_fail(t->ctx, GHT_ERR_UNSUPPORTED, "mixed batches of %s tables run on the GPU only",
					ght_method_name(t->opts.method));
}

/* ---- building ----------------------------------------------------------- */

static ght_status
build_index(ght_table *t, const void *ukeys, const uint64_t *refs, uint64_t d)
{
	if (t->opts.method == GHT_CUCKOO)
		return W32(t) ? cuckoo_build_32(t, ukeys, refs, d) : cuckoo_build_64(t, ukeys, refs, d);
	return W32(t) ? linear_build_32(t, ukeys, refs, d) : linear_build_64(t, ukeys, refs, d);
}

/* Payloads fit in the slot when they are no wider than its ref. */
static int
payload_fits_inline(const ght_table *t)
{
	return t->opts.key_width == 8 || t->opts.payload_width == 4 ||
		(t->opts.flags & GHT_BUILD_ROWNUM_PAYLOAD);
}

/* The payload array in sorted order and the offsets of each distinct key. */
static ght_status
build_range(ght_table *t, const void *payloads, const uint32_t *rows,
			const uint32_t *counts, uint64_t n, uint64_t d)
{
	ght_index  *ix = &t->ix;
	uint64_t	off = 0;

	ix->offsets = cpu_table_alloc(t, GHT_MEM_OFFSETS, (d + 1) * sizeof(uint32_t));
	ix->payload = cpu_table_alloc(t, GHT_MEM_PAYLOAD, (n ? n : 1) * (uint64_t) t->opts.payload_width);
	if (ix->offsets == NULL || ix->payload == NULL)
		return cpu_mem_failure(t->ctx);
	for (uint64_t u = 0; u < d; u++)
	{
		ix->offsets[u] = (uint32_t) off;
		off += counts ? counts[u] : 1;
	}
	ix->offsets[d] = (uint32_t) off;
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	v = input_payload(t, payloads, rows ? rows[i] : i);

		if ((i % CPU_CHECK_EVERY) == 0 && ght_interrupted(t->ctx))
			return GHT_ERR_INTERRUPTED;

		if (t->opts.payload_width == 4)
			((uint32_t *) ix->payload)[i] = (uint32_t) v;
		else
			((uint64_t *) ix->payload)[i] = v;
	}
	return GHT_OK;
}

ght_status
ght_cpu_build(ght_table *t, const void *keys, const void *payloads, uint64_t n)
{
	ght_index  *ix = &t->ix;
	cpu_dedupe_t dd;
	uint64_t   *refs = NULL;
	const void *ukeys;
	uint64_t	d;
	ght_status	s;

	memset(&dd, 0, sizeof(dd));

	if (t->opts.method == GHT_HOPSCOTCH)
		return cpu_hop_build(t, keys, payloads, n);
	if (t->opts.flags & GHT_BUILD_MUTABLE)
	{
		s = list_init(t, n, n);
		if (s == GHT_OK)
			s = list_add(t, keys, payloads, (t->opts.flags & GHT_BUILD_ROWNUM_PAYLOAD) != 0, n);
		return s;
	}

	if (t->opts.flags & GHT_BUILD_ASSUME_UNIQUE)
	{
		ukeys = keys;
		d = n;
	}
	else
	{
		s = cpu_dedupe(t->ctx, keys, t->opts.key_width, n, &dd);
		if (s != GHT_OK)
			return s;
		ukeys = dd.ukeys;
		d = dd.nunique;
	}
	refs = cpu_mem_alloc(t->ctx, (d ? d : 1) * sizeof(uint64_t), 0);
	if (refs == NULL)
	{
		s = cpu_mem_failure(t->ctx);
		goto done;
	}
	if (d == n && payload_fits_inline(t))
	{
		ix->mode = GHT_MODE_INLINE;
		for (uint64_t u = 0; u < d; u++)
		{
			if ((u % CPU_CHECK_EVERY) == 0 && ght_interrupted(t->ctx))
			{
				s = GHT_ERR_INTERRUPTED;
				goto done;
			}
			refs[u] = input_payload(t, payloads, dd.rows ? dd.rows[u] : u);
		}
	}
	else
	{
		ix->mode = GHT_MODE_RANGE;
		s = build_range(t, payloads, dd.rows, dd.counts, n, d);
		if (s != GHT_OK)
			goto done;
		for (uint64_t u = 0; u < d; u++)
			refs[u] = u;
	}
	t->rows = n;
	t->distinct = d;
	s = build_index(t, ukeys, refs, d);

done:
	cpu_mem_free(t->ctx, refs);
	cpu_dedupe_free(t->ctx, &dd);
	return s;
}

/* ---- probing ------------------------------------------------------------ */

/* keys between prefetching a lookup's slot and doing the lookup */
#define PROBE_PREFETCH_AHEAD 16

/*
 * Look up keys[i] of keys[0..n), first starting the load for the key
 * PROBE_PREFETCH_AHEAD places on: tables larger than the caches cost a
 * miss per lookup, and this overlaps them.
 */
static inline int
find_any(const ght_table *t, const void *keys, uint64_t i, uint64_t n, uint64_t *ref)
{
	if (t->ix.method == GHT_HOPSCOTCH)
	{
		/* the home word is the first of the lookup's dependent misses */
		if (i + PROBE_PREFETCH_AHEAD < n)
		{
			uint64_t	a = i + PROBE_PREFETCH_AHEAD;
			uint32_t	h = W32(t) ? ght_hash_k32(((const uint32_t *) keys)[a], t->ix.seed)
				: ght_hash_k64(((const uint64_t *) keys)[a], t->ix.seed);

			__builtin_prefetch(&t->ix.hop[ght_hop_home(h, t->ix.mask)]);
		}
		return cpu_hop_find(&t->ix, W32(t) ? ((const uint32_t *) keys)[i] : ((const uint64_t *) keys)[i], ref);
	}
	if (W32(t))
	{
		const uint32_t *k = keys;

		if (i + PROBE_PREFETCH_AHEAD < n)
			prefetch_32(&t->ix, k[i + PROBE_PREFETCH_AHEAD]);
		return find_32(&t->ix, k[i], ref);
	}
	else
	{
		const uint64_t *k = keys;

		if (i + PROBE_PREFETCH_AHEAD < n)
			prefetch_64(&t->ix, k[i + PROBE_PREFETCH_AHEAD]);
		return find_64(&t->ix, k[i], ref);
	}
}

ght_status
ght_cpu_contains(ght_table *t, const void *keys, uint64_t n, uint8_t *out)
{
	uint64_t	ref;

	for (uint64_t i = 0; i < n; i++)
	{
		if ((i % CPU_CHECK_EVERY) == 0 && ght_interrupted(t->ctx))
			return GHT_ERR_INTERRUPTED;
		out[i] = (uint8_t) find_any(t, keys, i, n, &ref);
	}
	return GHT_OK;
}

ght_status
ght_cpu_select(ght_table *t, const void *keys, uint64_t n, int anti,
			   uint32_t *out_idx, uint64_t *out_n)
{
	uint64_t	ref,
				m = 0;

	for (uint64_t i = 0; i < n; i++)
	{
		if ((i % CPU_CHECK_EVERY) == 0 && ght_interrupted(t->ctx))
			return GHT_ERR_INTERRUPTED;
		if (find_any(t, keys, i, n, &ref) != anti)
			out_idx[m++] = (uint32_t) i;
	}
	*out_n = m;
	return GHT_OK;
}

/* Probe state: each probe's ref (NIL-free: rows[i] == 0 means no match). */
typedef struct cpu_probe_state
{
	uint64_t   *ref;
	uint64_t   *rows;
	uint64_t	cur_i;			/* next probe to emit */
	uint64_t	cur_j;			/* next row of that probe */
	uint64_t	cursor;			/* LIST: node of row cur_j - 1 */
} cpu_probe_state;

ght_status
ght_cpu_probe_begin(ght_probe *p, const void *keys)
{
	ght_table  *t = p->t;
	cpu_probe_state *st = cpu_mem_alloc(t->ctx, sizeof(cpu_probe_state), 1);

	if (st == NULL)
		return cpu_mem_failure(t->ctx);
	p->priv = st;
	st->ref = cpu_mem_alloc(t->ctx, (p->n ? p->n : 1) * sizeof(uint64_t), 0);
	st->rows = cpu_mem_alloc(t->ctx, (p->n ? p->n : 1) * sizeof(uint64_t), 0);
	if (st->ref == NULL || st->rows == NULL)
		return cpu_mem_failure(t->ctx);
	for (uint64_t i = 0; i < p->n; i++)
	{
		uint64_t	ref;

		if ((i % CPU_CHECK_EVERY) == 0 && ght_interrupted(t->ctx))
			return GHT_ERR_INTERRUPTED;
		if (find_any(t, keys, i, p->n, &ref))
		{
			st->ref[i] = ref;
			st->rows[i] = W32(t) ? ref_rows_32(&t->ix, ref) : ref_rows_64(&t->ix, ref);
			if (p->cap > 0 && st->rows[i] > p->cap)
				st->rows[i] = p->cap;
			p->total += st->rows[i];
		}
		else
			st->rows[i] = 0;
	}
	return GHT_OK;
}

ght_status
ght_cpu_probe_next(ght_probe *p, uint64_t max_pairs, uint64_t *n_out)
{
	ght_table  *t = p->t;
	cpu_probe_state *st = p->priv;
	uint64_t	want = p->total - p->emitted;
	uint64_t	m = 0;

	if (want > max_pairs)
		want = max_pairs;
	if (p->out_cap < want)
	{
		cpu_mem_free(t->ctx, p->out_idx);
		cpu_mem_free(t->ctx, p->out_payload);
		p->out_idx = cpu_mem_alloc(t->ctx, want * sizeof(uint32_t), 0);
		p->out_payload = cpu_mem_alloc(t->ctx, want * sizeof(uint64_t), 0);
		p->out_cap = want;
		if (p->out_idx == NULL || p->out_payload == NULL)
		{
			p->out_cap = 0;
			return cpu_mem_failure(t->ctx);
		}
	}
	while (m < want && st->cur_i < p->n)
	{
		uint64_t	i = st->cur_i;

		if (st->cur_j >= st->rows[i])
		{
			st->cur_i++;
			st->cur_j = 0;
			continue;
		}
		p->out_idx[m] = (uint32_t) i;
		p->out_payload[m++] = W32(t) ? ref_payload_32(&t->ix, st->ref[i], st->cur_j, &st->cursor)
			: ref_payload_64(&t->ix, st->ref[i], st->cur_j, &st->cursor);
		st->cur_j++;
	}
	*n_out = m;
	return GHT_OK;
}

void
ght_cpu_probe_end(ght_probe *p)
{
	cpu_probe_state *st = p->priv;

	if (st)
	{
		cpu_mem_free(p->ctx, st->ref);
		cpu_mem_free(p->ctx, st->rows);
		cpu_mem_free(p->ctx, st);
	}
	cpu_mem_free(p->ctx, p->out_idx);
	cpu_mem_free(p->ctx, p->out_payload);
	p->out_idx = NULL;
	p->out_payload = NULL;
}
