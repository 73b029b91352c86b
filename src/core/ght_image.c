/*
 * ght_image.c - static tables as flat images that other processes can use.
 *
 * A parallel query shares one build among its workers through dynamic
 * shared memory, which each process maps at its own address.  The image
 * therefore holds no pointers: a header with the table's geometry, then each
 * allocation at an offset.  A CPU context can probe the image where it lies;
 * a GPU context needs its own device copy, since device memory of another
 * process's context is not addressable without CUDA IPC.
 */
#include "ght_internal.h"

#include <stdlib.h>
#include <string.h>

#define GHT_IMAGE_MAGIC 0x47485449u	/* "GHTI" */
#define GHT_IMAGE_VERSION 1
#define GHT_IMAGE_ALIGN 64			/* cache line: probes read 32-byte groups */

typedef struct ght_image_header
{
	uint32_t	magic;
	uint32_t	version;
	ght_build_opts opts;
	ght_index	ix;				/* pointers zeroed */
	uint64_t	rows;
	uint64_t	distinct;
	uint64_t	used_slots;
	uint32_t	build_attempts;
	double		build_ms;
	uint64_t	total_bytes;
	uint64_t	mem_off[GHT_MEM_COUNT];
	uint64_t	mem_bytes[GHT_MEM_COUNT];
} ght_image_header;

static uint64_t
align_up(uint64_t x)
{
	return (x + GHT_IMAGE_ALIGN - 1) & ~(uint64_t) (GHT_IMAGE_ALIGN - 1);
}

/* Fill the header's layout; returns the image's size. */
static uint64_t
image_layout(const ght_table *t, ght_image_header *h)
{
	uint64_t	off = align_up(sizeof(ght_image_header));

	memset(h, 0, sizeof(*h));
	h->magic = GHT_IMAGE_MAGIC;
	h->version = GHT_IMAGE_VERSION;
	h->opts = t->opts;
	h->ix = t->ix;
	h->ix.slots = NULL;
	h->ix.buckets = NULL;
	h->ix.offsets = NULL;
	h->ix.payload = NULL;
	h->ix.next = NULL;
	h->rows = t->rows;
	h->distinct = t->distinct;
	h->used_slots = t->used_slots;
	h->build_attempts = t->build_attempts;
	h->build_ms = t->build_ms;
	for (int i = 0; i < GHT_MEM_COUNT; i++)
	{
		h->mem_off[i] = t->mem[i] ? off : 0;
		h->mem_bytes[i] = t->mem[i] ? t->mem_bytes[i] : 0;
		if (t->mem[i])
			off = align_up(off + t->mem_bytes[i]);
	}
	h->total_bytes = off;
	return off;
}

/* The index's pointers are its allocations: set them from mem[]. */
static void
point_index(ght_table *t)
{
	t->ix.slots = t->mem[GHT_MEM_SLOTS];
	t->ix.buckets = (uint64_t *) t->mem[GHT_MEM_BUCKETS];
	t->ix.offsets = (uint32_t *) t->mem[GHT_MEM_OFFSETS];
	t->ix.payload = t->mem[GHT_MEM_PAYLOAD];
	t->ix.next = (uint32_t *) t->mem[GHT_MEM_NEXT];
}

ght_status
ght_table_image_size(ght_table *t, uint64_t *bytes)
{
	ght_image_header h;

	if (t->opts.flags & GHT_BUILD_MUTABLE)
		return ght_fail(t->ctx, GHT_ERR_UNSUPPORTED, "a mutable table has no image");
	*bytes = image_layout(t, &h);
	return GHT_OK;
}

ght_status
ght_table_image_write(ght_table *t, void *buf, uint64_t bytes)
{
	ght_image_header h;
	char	   *base = (char *) buf;
	void	   *dst[GHT_MEM_COUNT];

	if (t->opts.flags & GHT_BUILD_MUTABLE)
		return ght_fail(t->ctx, GHT_ERR_UNSUPPORTED, "a mutable table has no image");
	if (image_layout(t, &h) > bytes)
		return ght_fail(t->ctx, GHT_ERR_INVALID, "image buffer of %llu bytes is too small",
						(unsigned long long) bytes);
	memcpy(base, &h, sizeof(h));
	for (int i = 0; i < GHT_MEM_COUNT; i++)
		dst[i] = h.mem_bytes[i] ? base + h.mem_off[i] : NULL;
	if (t->ctx->dev == GHT_GPU)
		return ght_gpu_image_arrays(t, dst);
	for (int i = 0; i < GHT_MEM_COUNT; i++)
		if (dst[i])
			memcpy(dst[i], t->mem[i], h.mem_bytes[i]);
	return GHT_OK;
}

ght_status
ght_table_attach_image(ght_ctx *ctx, const void *buf, uint64_t bytes, ght_table **out)
{
	const char *base = (const char *) buf;
	ght_image_header h;
	const void *src[GHT_MEM_COUNT];
	ght_table  *t;
	ght_status	s = GHT_OK;

	*out = NULL;
	ctx->err[0] = '\0';
	ctx->cuda_err[0] = '\0';
	if (bytes < sizeof(h))
		return ght_fail(ctx, GHT_ERR_INVALID, "a table image of %llu bytes is truncated",
						(unsigned long long) bytes);
	memcpy(&h, base, sizeof(h));
	if (h.magic != GHT_IMAGE_MAGIC || h.version != GHT_IMAGE_VERSION)
		return ght_fail(ctx, GHT_ERR_INVALID, "not a table image of this version");
	if (h.total_bytes > bytes)
		return ght_fail(ctx, GHT_ERR_INVALID, "a table image of %llu bytes is truncated",
						(unsigned long long) bytes);
	for (int i = 0; i < GHT_MEM_COUNT; i++)
	{
		if (h.mem_bytes[i] && (h.mem_off[i] % GHT_IMAGE_ALIGN != 0 ||
							   h.mem_off[i] + h.mem_bytes[i] > h.total_bytes))
			return ght_fail(ctx, GHT_ERR_INVALID, "a table image has a bad layout");
		src[i] = h.mem_bytes[i] ? base + h.mem_off[i] : NULL;
	}

	t = calloc(1, sizeof(ght_table));
	if (t == NULL)
		return ght_fail(ctx, GHT_ERR_HOST_NOMEM, "could not allocate a table header");
	t->ctx = ctx;
	t->opts = h.opts;
	t->ix = h.ix;
	t->rows = h.rows;
	t->distinct = h.distinct;
	t->used_slots = h.used_slots;
	t->build_attempts = h.build_attempts;
	t->build_ms = h.build_ms;
	if (ctx->dev == GHT_GPU)
	{
		/* allocations are counted against the context like a build's */
		for (int i = 0; i < GHT_MEM_COUNT; i++)
			t->mem_bytes[i] = h.mem_bytes[i];
		s = ght_gpu_attach_arrays(t, src);
		if (s != GHT_OK)
			for (int i = 0; i < GHT_MEM_COUNT; i++)
				if (t->mem[i] == NULL)
					t->mem_bytes[i] = 0;
	}
	else
	{
		for (int i = 0; i < GHT_MEM_COUNT; i++)
		{
			t->mem[i] = (void *) src[i];
			t->mem_bytes[i] = h.mem_bytes[i];
			t->bytes += h.mem_bytes[i];
		}
		t->borrowed = 1;
	}
	if (s != GHT_OK)
	{
		ght_table_free(t);
		return s;
	}
	point_index(t);
	*out = t;
	return GHT_OK;
}
