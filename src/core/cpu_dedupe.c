/*
 * cpu_dedupe.c - turn n (key, payload) rows into distinct keys with their
 * payloads laid out contiguously, exactly as the GPU half does with CUB:
 * a stable LSD radix sort of (key, row) by the key's bits, a run-length
 * encoding of the sorted keys and an exclusive scan of the run lengths.
 * Stability keeps each key's payloads in input order, so CPU and GPU tables
 * hand out the same pairs in the same order.
 */
#include "cpu_internal.h"

#include <stdlib.h>
#include <string.h>

static uint64_t
key_at(const void *keys, int width, uint64_t i)
{
	return width == 4 ? ((const uint32_t *) keys)[i] : ((const uint64_t *) keys)[i];
}

/* Sort rows[0..n) by the bits of keys[rows[i]], stably.  k/k2 scratch. */
static ght_status
radix_sort(ght_ctx *ctx, const void *keys, int width, uint64_t n, uint32_t **rows_io)
{
	uint64_t	m = n ? n : 1;
	uint64_t   *k = cpu_mem_alloc(ctx, m * sizeof(uint64_t), 0);
	uint64_t   *k2 = cpu_mem_alloc(ctx, m * sizeof(uint64_t), 0);
	uint32_t   *r = *rows_io;
	uint32_t   *r2 = cpu_mem_alloc(ctx, m * sizeof(uint32_t), 0);
	uint64_t	count[256];

	if (k == NULL || k2 == NULL || r2 == NULL)
	{
		cpu_mem_free(ctx, k);
		cpu_mem_free(ctx, k2);
		cpu_mem_free(ctx, r2);
		return cpu_mem_failure(ctx);
	}
	for (uint64_t i = 0; i < n; i++)
	{
		k[i] = key_at(keys, width, i);
		r[i] = (uint32_t) i;
	}
	for (int shift = 0; shift < width * 8; shift += 8)
	{
		uint64_t	sum = 0;
		int			skip = 0;

		if (ght_interrupted(ctx))
		{
			/* after a pass r2 may be the caller's buffer: keep r, as below */
			cpu_mem_free(ctx, k);
			cpu_mem_free(ctx, k2);
			cpu_mem_free(ctx, r2);
			*rows_io = r;
			return GHT_ERR_INTERRUPTED;
		}
		memset(count, 0, sizeof(count));
		for (uint64_t i = 0; i < n; i++)
			count[(k[i] >> shift) & 0xFF]++;
		/* a digit every key shares orders nothing */
		for (int d = 0; d < 256; d++)
			if (count[d] == n)
				skip = 1;
		if (skip)
			continue;
		for (int d = 0; d < 256; d++)
		{
			uint64_t	c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (uint64_t i = 0; i < n; i++)
		{
			uint64_t	dst = count[(k[i] >> shift) & 0xFF]++;

			k2[dst] = k[i];
			r2[dst] = r[i];
		}
		{
			uint64_t   *tk = k;
			uint32_t   *tr = r;

			k = k2;
			k2 = tk;
			r = r2;
			r2 = tr;
		}
	}
	cpu_mem_free(ctx, k);
	cpu_mem_free(ctx, k2);
	/* r may now be the scratch buffer: hand back whichever holds the result */
	cpu_mem_free(ctx, r2);
	*rows_io = r;
	return GHT_OK;
}

/*
 * Distinct keys of keys[0..n) in ascending order of their bits.  Fills
 * d->ukeys (width bytes each), d->counts, d->nunique and d->rows (the input
 * row of each sorted position).  The caller frees with cpu_dedupe_free.
 */
ght_status
cpu_dedupe(ght_ctx *ctx, const void *keys, int width, uint64_t n, cpu_dedupe_t *d)
{
	ght_status	s;
	uint64_t	u = 0;

	memset(d, 0, sizeof(*d));
	d->rows = cpu_mem_alloc(ctx, (n ? n : 1) * sizeof(uint32_t), 0);
	d->ukeys = cpu_mem_alloc(ctx, (n ? n : 1) * (uint64_t) width, 0);
	d->counts = cpu_mem_alloc(ctx, (n ? n : 1) * sizeof(uint32_t), 0);
	if (d->rows == NULL || d->ukeys == NULL || d->counts == NULL)
	{
		cpu_dedupe_free(ctx, d);
		return cpu_mem_failure(ctx);
	}
	s = radix_sort(ctx, keys, width, n, &d->rows);
	if (s != GHT_OK)
	{
		cpu_dedupe_free(ctx, d);
		return s;
	}
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	k = key_at(keys, width, d->rows[i]);

		if (i == 0 || k != key_at(keys, width, d->rows[i - 1]))
		{
			if (width == 4)
				((uint32_t *) d->ukeys)[u] = (uint32_t) k;
			else
				((uint64_t *) d->ukeys)[u] = k;
			d->counts[u++] = 1;
		}
		else
			d->counts[u - 1]++;
	}
	d->nunique = u;
	return GHT_OK;
}

void
cpu_dedupe_free(ght_ctx *ctx, cpu_dedupe_t *d)
{
	cpu_mem_free(ctx, d->rows);
	cpu_mem_free(ctx, d->ukeys);
	cpu_mem_free(ctx, d->counts);
	memset(d, 0, sizeof(*d));
}
