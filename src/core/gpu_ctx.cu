/*
 * gpu_ctx.cu - devices, contexts and device memory for the GPU half.
 *
 * The CUDA runtime is linked statically and loads the driver itself, so on a
 * host without one the first call here fails cleanly (cudaErrorInsufficient-
 * Driver or cudaErrorNoDevice) and the caller falls back to the CPU.
 */
#include "gpu_internal.cuh"

#include <stdlib.h>
#include <string.h>

extern "C" int
ght_have_cuda(void)
{
	return 1;
}

extern "C" int
ght_gpu_available(char *why, size_t whylen)
{
	int			n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess)
	{
		if (why)
			snprintf(why, whylen, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
		return 0;
	}
	if (n == 0 && why)
		snprintf(why, whylen, "the CUDA driver reports no devices");
	return n;
}

extern "C" ght_status
ght_gpu_device_info(int id, ght_device_info *info, char *why, size_t whylen)
{
	cudaDeviceProp p;
	cudaError_t e;
	size_t		fr = 0,
				tot = 0;
	int			prev = 0;

	memset(info, 0, sizeof(*info));
	e = cudaGetDeviceProperties(&p, id);
	if (e == cudaSuccess)
		e = cudaGetDevice(&prev);
	if (e == cudaSuccess)
		e = cudaSetDevice(id);
	if (e == cudaSuccess)
		e = cudaMemGetInfo(&fr, &tot);
	if (e == cudaSuccess)
		e = cudaSetDevice(prev);
	if (e != cudaSuccess)
	{
		if (why)
			snprintf(why, whylen, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
		return e == cudaErrorInvalidDevice ? GHT_ERR_INVALID : GHT_ERR_CUDA;
	}
	info->id = id;
	snprintf(info->name, sizeof(info->name), "%s", p.name);
	info->total_bytes = tot;
	info->free_bytes = fr;
	info->cc_major = p.major;
	info->cc_minor = p.minor;
	info->multiprocessors = p.multiProcessorCount;
	return GHT_OK;
}

extern "C" ght_status
ght_gpu_ctx_init(ght_ctx *ctx)
{
	ght_gpu_ctx *g;
	char		why[256];
	int			v = 0;

	if (ght_gpu_available(why, sizeof(why)) <= ctx->gpu_id)
		return ght_fail(ctx, GHT_ERR_NO_DEVICE, "no GPU %d: %s", ctx->gpu_id, why);
	g = (ght_gpu_ctx *) calloc(1, sizeof(ght_gpu_ctx));
	if (g == NULL)
		return ght_fail(ctx, GHT_ERR_HOST_NOMEM, "could not allocate a GPU context");
	ctx->gpu = g;
	GCHECK(ctx, cudaSetDevice(ctx->gpu_id));
	GCHECK(ctx, cudaFree(0));	/* create the CUDA context now, not mid-query */
	for (int i = 0; i < 2; i++)
	{
		GCHECK(ctx, cudaStreamCreateWithFlags(&g->stream[i], cudaStreamNonBlocking));
		GCHECK(ctx, cudaEventCreateWithFlags(&g->ev[i], cudaEventDisableTiming));
	}
	/* Keep freed device memory in the stream-ordered pool: a build or a probe
	 * batch allocates a dozen buffers, and plain cudaMalloc of large ones
	 * costs milliseconds each.  ght_ctx_trim gives the memory back. */
	{
		cudaMemPool_t pool;
		uint64_t	keep = UINT64_MAX;

		GCHECK(ctx, cudaDeviceGetDefaultMemPool(&pool, ctx->gpu_id));
		GCHECK(ctx, cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
		g->pool = pool;
	}
	GCHECK(ctx, cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, ctx->gpu_id));
	g->sm_count = v;
	GCHECK(ctx, cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx->gpu_id));
	g->max_shared = (size_t) v;
	return GHT_OK;
}

extern "C" void
ght_gpu_ctx_trim(ght_ctx *ctx)
{
	ght_gpu_ctx *g = gctx(ctx);

	if (g == NULL || g->pool == NULL)
		return;
	cudaStreamSynchronize(g->stream[0]);
	cudaStreamSynchronize(g->stream[1]);
	cudaMemPoolTrimTo(g->pool, 0);
}

void
gpu_copy_settle(ght_ctx *ctx)
{
	ght_gpu_ctx *g = gctx(ctx);

	for (int i = 0; i < GPU_COPY_TIMERS; i++)
	{
		gpu_copy_timer *tm = &g->timer[i];
		float		ms = 0;

		/* cudaErrorNotReady (not finished) is not an error and is not kept */
		if (!tm->busy || cudaEventQuery(tm->stop) != cudaSuccess)
			continue;
		if (cudaEventElapsedTime(&ms, tm->start, tm->stop) != cudaSuccess)
			ms = 0;
		if (tm->to_device)
		{
			g->xfer.to_device_bytes += tm->bytes;
			g->xfer.to_device_ms += ms;
		}
		else
		{
			g->xfer.from_device_bytes += tm->bytes;
			g->xfer.from_device_ms += ms;
		}
		tm->busy = 0;
	}
}

ght_status
gpu_copy_async(ght_ctx *ctx, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
			   cudaStream_t st)
{
	ght_gpu_ctx *g = gctx(ctx);
	gpu_copy_timer *tm = NULL;

	gpu_copy_settle(ctx);
	for (int i = 0; i < GPU_COPY_TIMERS && tm == NULL; i++)
		if (!g->timer[i].busy)
			tm = &g->timer[i];
	if (tm == NULL)
	{
		/* every timer in flight: wait for their copies, then all are free */
		for (int i = 0; i < GPU_COPY_TIMERS; i++)
			GCHECK(ctx, cudaEventSynchronize(g->timer[i].stop));
		gpu_copy_settle(ctx);
		tm = &g->timer[0];
	}
	if (tm->start == NULL)
	{
		GCHECK(ctx, cudaEventCreate(&tm->start));
		GCHECK(ctx, cudaEventCreate(&tm->stop));
	}
	GCHECK(ctx, cudaEventRecord(tm->start, st));
	GCHECK(ctx, cudaMemcpyAsync(dst, src, bytes, kind, st));
	GCHECK(ctx, cudaEventRecord(tm->stop, st));
	tm->bytes = bytes;
	tm->to_device = kind == cudaMemcpyHostToDevice;
	tm->busy = 1;
	return GHT_OK;
}

extern "C" void
ght_gpu_transfer_stats(ght_ctx *ctx, ght_transfer_stats *out)
{
	gpu_copy_settle(ctx);
	*out = gctx(ctx)->xfer;
}

extern "C" void
ght_gpu_ctx_fini(ght_ctx *ctx)
{
	ght_gpu_ctx *g = gctx(ctx);

	if (g == NULL)
		return;
	ght_gpu_ctx_trim(ctx);
	for (int i = 0; i < GPU_COPY_TIMERS; i++)
	{
		if (g->timer[i].start)
			cudaEventDestroy(g->timer[i].start);
		if (g->timer[i].stop)
			cudaEventDestroy(g->timer[i].stop);
	}
	for (int i = 0; i < 2; i++)
	{
		if (g->stream[i])
			cudaStreamDestroy(g->stream[i]);
		if (g->ev[i])
			cudaEventDestroy(g->ev[i]);
		if (g->stage_ev[i])
			cudaEventDestroy(g->stage_ev[i]);
	}
	if (g->stage)
		cudaFreeHost(g->stage);
	free(g);
	ctx->gpu = NULL;
}

ght_status
gpu_alloc(ght_ctx *ctx, void **p, size_t bytes)
{
	cudaError_t e;

	*p = nullptr;
	if (ctx->fail_after > 0 && --ctx->fail_after == 0)
	{
		snprintf(ctx->cuda_err, sizeof(ctx->cuda_err), "cudaErrorMemoryAllocation");
		return ght_fail(ctx, GHT_ERR_DEVICE_NOMEM, "injected failure of a %zu-byte device allocation", bytes);
	}
	if (ctx->dev_limit > 0 && ctx->dev_bytes + bytes > ctx->dev_limit)
	{
		ctx->limit_need = ctx->dev_bytes + bytes;
		return ght_fail(ctx, GHT_ERR_MEM_LIMIT,
						"%zu more bytes of device memory would exceed the limit of %llu bytes (%llu in use)",
						bytes, (unsigned long long) ctx->dev_limit, (unsigned long long) ctx->dev_bytes);
	}
	e = cudaMallocAsync(p, bytes ? bytes : 1, gctx(ctx)->stream[0]);
	if (e != cudaSuccess)
	{
		*p = nullptr;
		cudaGetLastError();		/* an allocation failure is not sticky */
		return gpu_fail(ctx, e, "cudaMallocAsync");
	}
	/* the other stream may use it too */
	e = cudaEventRecord(gctx(ctx)->ev[0], gctx(ctx)->stream[0]);
	if (e == cudaSuccess)
		e = cudaStreamWaitEvent(gctx(ctx)->stream[1], gctx(ctx)->ev[0], 0);
	if (e != cudaSuccess)
	{
		cudaFreeAsync(*p, gctx(ctx)->stream[0]);
		*p = nullptr;
		return gpu_fail(ctx, e, "cudaStreamWaitEvent");
	}
	ctx->dev_bytes += bytes;
	return GHT_OK;
}

void
gpu_free(ght_ctx *ctx, void *p, size_t bytes)
{
	ght_gpu_ctx *g = gctx(ctx);

	if (p == nullptr)
		return;
	/* freed in stream order on stream 0, after whatever stream 1 queued */
	cudaEventRecord(g->ev[1], g->stream[1]);
	cudaStreamWaitEvent(g->stream[0], g->ev[1], 0);
	cudaFreeAsync(p, g->stream[0]);
	ctx->dev_bytes -= bytes;
}

/*
 * A plain cudaMemcpy into pageable memory that the process has not touched
 * yet (a fresh shared memory segment) moved 134 MB in 93 ms on the H100
 * host, 1.4 GB/s; pinned copies run at tens of GB/s, so the page faults
 * and the host-side copy are what remains (bench/NOTES.md, section 13).
 */
#define GPU_STAGE_CHUNK ((size_t) 4 << 20)

static inline size_t
chunk_at(size_t off, size_t bytes)
{
	return bytes - off < GPU_STAGE_CHUNK ? bytes - off : GPU_STAGE_CHUNK;
}

ght_status
gpu_download(ght_ctx *ctx, void *dst, const void *src, size_t bytes)
{
	ght_gpu_ctx *g = gctx(ctx);
	cudaStream_t st = g->stream[0];
	size_t		nchunks = (bytes + GPU_STAGE_CHUNK - 1) / GPU_STAGE_CHUNK;

	if (g->stage == NULL)
	{
		void	   *p = NULL;

		for (int i = 0; i < 2; i++)
			if (g->stage_ev[i] == NULL)
				GCHECK(ctx, cudaEventCreateWithFlags(&g->stage_ev[i], cudaEventDisableTiming));
		GCHECK(ctx, cudaHostAlloc(&p, 2 * GPU_STAGE_CHUNK, cudaHostAllocDefault));
		g->stage = (char *) p;
	}
	for (size_t i = 0; i <= nchunks; i++)
	{
		/* chunk i goes out of the GPU while chunk i - 1 is copied on the host */
		if (i < nchunks)
		{
			size_t		off = i * GPU_STAGE_CHUNK;

			GCHECK(ctx, cudaMemcpyAsync(g->stage + (i % 2) * GPU_STAGE_CHUNK, (const char *) src + off,
										chunk_at(off, bytes), cudaMemcpyDeviceToHost, st));
			GCHECK(ctx, cudaEventRecord(g->stage_ev[i % 2], st));
		}
		if (i > 0)
		{
			size_t		j = i - 1;
			size_t		off = j * GPU_STAGE_CHUNK;

			GCHECK(ctx, cudaEventSynchronize(g->stage_ev[j % 2]));
			memcpy((char *) dst + off, g->stage + (j % 2) * GPU_STAGE_CHUNK,
				   chunk_at(off, bytes));
		}
	}
	return GHT_OK;
}

extern "C" void *
ght_gpu_host_alloc(ght_ctx *ctx, size_t bytes)
{
	void	   *p = NULL;
	cudaError_t e = cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocDefault);

	if (e != cudaSuccess)
	{
		cudaGetLastError();
		gpu_fail(ctx, e, "cudaHostAlloc");
		return NULL;
	}
	return p;
}

extern "C" void
ght_gpu_host_free(ght_ctx *ctx, void *p)
{
	if (p)
		cudaFreeHost(p);
}

ght_status
gpu_upload(ght_ctx *ctx, dmem &dst, const void *src, size_t bytes, int on_device)
{
	if (on_device)
	{
		dst.borrow(src, bytes);
		return GHT_OK;
	}
	GTRY(dst.alloc(bytes));
	if (bytes == 0)
		return GHT_OK;
	GCHECK(ctx, cudaMemcpyAsync(dst.p, src, bytes, cudaMemcpyHostToDevice, gctx(ctx)->stream[0]));
	GCHECK(ctx, cudaStreamSynchronize(gctx(ctx)->stream[0]));
	return GHT_OK;
}

void
gpu_trace(ght_ctx *ctx, const char *what)
{
	static int	on = -1;
	static double last;
	double		now;

	if (on < 0)
		on = getenv("GHT_TRACE") != NULL;
	if (!on)
		return;
	cudaStreamSynchronize(gctx(ctx)->stream[0]);
	cudaStreamSynchronize(gctx(ctx)->stream[1]);
	now = ght_now_ms();
	if (what)
		fprintf(stderr, "  trace %-24s %8.3f ms\n", what, now - last);
	last = now;
}

extern "C" void
ght_gpu_free(ght_table *t)
{
	for (int i = 0; i < GHT_MEM_COUNT; i++)
	{
		if (t->mem[i])
			gpu_free(t->ctx, t->mem[i], t->mem_bytes[i]);
		t->mem[i] = NULL;
		t->bytes -= t->mem_bytes[i];
		t->mem_bytes[i] = 0;
	}
}
