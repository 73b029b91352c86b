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

/* The end of the stretch of a loop over [i, n) between two looks for an interrupt. */
static uint64_t
stretch_end(uint64_t i, uint64_t n)
{
	return n - i < CPU_CHECK_EVERY ? n : i + CPU_CHECK_EVERY;
}

/*
 * Free the sort's scratch.  Between and during passes, r and r2 are the
 * caller's buffer and the scratch one in either order: the caller gets r,
 * the sorted rows when the sort is done, and frees it in every case.
 */
static ght_status
sort_end(ght_ctx *ctx, uint64_t *k, uint64_t *k2, uint32_t *r, uint32_t *r2, uint32_t **rows_io,
		 ght_status s)
{
	cpu_mem_free(ctx, k);
	cpu_mem_free(ctx, k2);
	cpu_mem_free(ctx, r2);
	*rows_io = r;
	return s;
}

/*
 * Sort rows[0..n) by the bits of keys[rows[i]], stably.  k/k2 scratch.
 * Each pass over 10 M keys takes about 0.1 s, so an interrupt is looked
 * for every CPU_CHECK_EVERY keys, not once a pass (test/cancel/run's build
 * case waited 0.55 s for its cancel).
 */
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
	for (uint64_t i = 0; i < n;)
	{
		uint64_t	end = stretch_end(i, n);

		if (ght_interrupted(ctx))
			goto interrupted;
		for (; i < end; i++)
		{
			k[i] = key_at(keys, width, i);
			r[i] = (uint32_t) i;
		}
	}
	for (int shift = 0; shift < width * 8; shift += 8)
	{
		uint64_t	sum = 0;
		int			skip = 0;

		memset(count, 0, sizeof(count));
		for (uint64_t i = 0; i < n;)
		{
			uint64_t	end = stretch_end(i, n);

			if (ght_interrupted(ctx))
				goto interrupted;
			for (; i < end; i++)
				count[(k[i] >> shift) & 0xFF]++;
		}
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
		for (uint64_t i = 0; i < n;)
		{
			uint64_t	end = stretch_end(i, n);

			if (ght_interrupted(ctx))
				goto interrupted;
			for (; i < end; i++)
			{
				uint64_t	dst = count[(k[i] >> shift) & 0xFF]++;

				k2[dst] = k[i];
				r2[dst] = r[i];
			}
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
	return sort_end(ctx, k, k2, r, r2, rows_io, GHT_OK);

interrupted:
	return sort_end(ctx, k, k2, r, r2, rows_io, GHT_ERR_INTERRUPTED);
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

		if ((i % CPU_CHECK_EVERY) == 0 && ght_interrupted(ctx))
		{
			cpu_dedupe_free(ctx, d);
			return GHT_ERR_INTERRUPTED;
		}

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
