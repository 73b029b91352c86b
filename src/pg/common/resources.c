/*
 * resources.c - core objects (tables, probes, pinned buffers) whose lifetime
 * is tied to a memory context.
 *
 * The core allocates with malloc, cudaMalloc and cudaHostAlloc, which
 * PostgreSQL's abort processing knows nothing about.  Each object therefore
 * hangs off a memory context reset callback: an ERROR anywhere deletes the
 * statement's memory contexts, and with them the device and pinned memory.
 * The success path releases objects explicitly as soon as they are done.
 *
 * The handle is allocated, and its callback registered, before the core
 * object exists, so there is no window in which an object has no owner.
 */
#include "gpuhash_pg.h"

#include "utils/memutils.h"

static void
res_reset_callback(void *arg)
{
	gpuhash_res_release((GpuhashRes *) arg);
}

GpuhashRes *
gpuhash_res_new(MemoryContext cxt, ght_ctx *ctx, GpuhashResKind kind)
{
	GpuhashRes *res;

	res = MemoryContextAllocZero(cxt, sizeof(GpuhashRes));
	res->kind = kind;
	res->ctx = ctx;
	res->cb.func = res_reset_callback;
	res->cb.arg = res;
	MemoryContextRegisterResetCallback(cxt, &res->cb);
	return res;
}

/* Free the object now; the handle stays usable for a new object. */
void
gpuhash_res_release(GpuhashRes *res)
{
	void	   *ptr = res->ptr;

	if (ptr == NULL)
		return;
	/* cleared first, so that a second release (e.g. from abort) is harmless */
	res->ptr = NULL;
	res->bytes = 0;
	switch (res->kind)
	{
		case GPUHASH_RES_TABLE:
			ght_table_free((ght_table *) ptr);
			break;
		case GPUHASH_RES_PROBE:
			ght_probe_end((ght_probe *) ptr);
			break;
		case GPUHASH_RES_HOST:
			ght_host_free(res->ctx, ptr);
			break;
	}
}

static void *
host_alloc_or_error(ght_ctx *ctx, size_t bytes)
{
	void	   *p = ght_host_alloc(ctx, bytes);

	if (p == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Failed on request of size %zu in gpuhash %s host memory.",
						   bytes,
						   ght_ctx_device(ctx) == GHT_GPU ? "pinned" : "batch")));
	return p;
}

/* Replace whatever the handle holds with a new buffer of the given size. */
void *
gpuhash_res_host_alloc(GpuhashRes *res, size_t bytes)
{
	Assert(res->kind == GPUHASH_RES_HOST);
	gpuhash_res_release(res);
	res->ptr = host_alloc_or_error(res->ctx, bytes);
	res->bytes = bytes;
	return res->ptr;
}

/* Grow the buffer to bytes, keeping its first keep_bytes. */
void *
gpuhash_res_host_grow(GpuhashRes *res, size_t keep_bytes, size_t bytes)
{
	void	   *p;

	Assert(res->kind == GPUHASH_RES_HOST);
	if (res->ptr != NULL && res->bytes >= bytes)
		return res->ptr;
	p = host_alloc_or_error(res->ctx, bytes);
	if (res->ptr != NULL && keep_bytes > 0)
		memcpy(p, res->ptr, Min(keep_bytes, res->bytes));
	gpuhash_res_release(res);
	res->ptr = p;
	res->bytes = bytes;
	return p;
}
