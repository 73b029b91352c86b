/*
 * gpu_internal.cuh - what the GPU half's files share: error handling,
 * device memory that frees itself, the device context, and the device-side
 * probe functions (one per method and key width).  C++; never included by C.
 */
#ifndef GHT_GPU_INTERNAL_CUH
#define GHT_GPU_INTERNAL_CUH

#include "ght_internal.h"

#include <cuda_runtime.h>
#include <stdio.h>

/* ---- errors ------------------------------------------------------------- */

/* Record a CUDA failure in the context; out-of-memory is its own status. */
static inline ght_status
gpu_fail(ght_ctx *ctx, cudaError_t e, const char *what)
{
	snprintf(ctx->cuda_err, sizeof(ctx->cuda_err), "%s", cudaGetErrorName(e));
	ght_fail(ctx, e == cudaErrorMemoryAllocation ? GHT_ERR_DEVICE_NOMEM : GHT_ERR_CUDA,
			 "%s: %s", what, cudaGetErrorString(e));
	return e == cudaErrorMemoryAllocation ? GHT_ERR_DEVICE_NOMEM : GHT_ERR_CUDA;
}

/* Evaluate a CUDA call; on failure record it and return from the caller. */
#define GCHECK(ctx, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) \
		return gpu_fail((ctx), e_, #call); \
	} while (0)

/* Check a kernel launch (configuration errors surface here). */
#define GLAUNCH(ctx, what) GCHECK(ctx, cudaPeekAtLastError())

/* Propagate a ght_status. */
#define GTRY(expr) do { ght_status s_ = (expr); if (s_ != GHT_OK) return s_; } while (0)

/* ---- the device context ------------------------------------------------- */

/* A timed copy (gpu_copy_async): events around it, read once both have passed. */
#define GPU_COPY_TIMERS 32
struct gpu_copy_timer
{
	cudaEvent_t start;
	cudaEvent_t stop;
	size_t		bytes;
	int			to_device;
	int			busy;
};

struct ght_gpu_ctx
{
	cudaStream_t stream[2];		/* two, so a copy overlaps the other's kernel */
	cudaEvent_t ev[2];
	gpu_copy_timer timer[GPU_COPY_TIMERS];
	ght_transfer_stats xfer;
	cudaMemPool_t pool;			/* the device's pool, keeping freed memory */
	int			sm_count;
	size_t		max_shared;		/* dynamic shared memory a block may opt into */
	char	   *stage;			/* pinned chunks for gpu_download, made on first use */
	cudaEvent_t stage_ev[2];
};

static inline ght_gpu_ctx *
gctx(ght_ctx *ctx)
{
	return (ght_gpu_ctx *) ctx->gpu;
}

/* Device allocation through the context: counted, limited, injectable. */
ght_status	gpu_alloc(ght_ctx *ctx, void **p, size_t bytes);
void		gpu_free(ght_ctx *ctx, void *p, size_t bytes);

/* Device memory that gives itself back when it goes out of scope. */
struct dmem
{
	ght_ctx    *ctx;
	void	   *p;
	size_t		bytes;

	bool		owned;

	dmem(ght_ctx *c) : ctx(c), p(nullptr), bytes(0), owned(true) {}
	~dmem() { reset(); }
	dmem(const dmem &) = delete;
	dmem &operator=(const dmem &) = delete;

	ght_status alloc(size_t n)
	{
		reset();
		ght_status	s = gpu_alloc(ctx, &p, n);

		if (s == GHT_OK)
			bytes = n;
		return s;
	}
	/* use someone else's device memory, read-only, without owning it */
	void borrow(const void *q, size_t n)
	{
		reset();
		p = (void *) q;
		bytes = n;
		owned = false;
	}
	void reset()
	{
		if (p && owned)
			gpu_free(ctx, p, bytes);
		p = nullptr;
		bytes = 0;
		owned = true;
	}
	/* hand the memory to a table */
	void *release(size_t *n)
	{
		void	   *r = p;

		*n = bytes;
		p = nullptr;
		bytes = 0;
		return r;
	}
	template <typename T> T *as() const { return (T *) p; }
};

/* Give table allocation slot `which` the memory in m. */
static inline void
gpu_table_adopt(ght_table *t, int which, dmem &m)
{
	size_t		n;

	if (t->mem[which])
	{
		gpu_free(t->ctx, t->mem[which], t->mem_bytes[which]);
		t->bytes -= t->mem_bytes[which];
	}
	t->mem[which] = m.release(&n);
	t->mem_bytes[which] = n;
	t->bytes += n;
}

/*
 * cudaMemcpyAsync between host and device, timed for ght_ctx_transfer_stats.
 * gpu_copy_settle adds up the timed copies that have finished.
 */
ght_status	gpu_copy_async(ght_ctx *ctx, void *dst, const void *src, size_t bytes,
						   cudaMemcpyKind kind, cudaStream_t st);
void		gpu_copy_settle(ght_ctx *ctx);

/*
 * Device to pageable host memory, through pinned chunks: each chunk's copy
 * out of the GPU overlaps the host's copy of the one before.
 */
ght_status	gpu_download(ght_ctx *ctx, void *dst, const void *src, size_t bytes);

/* Wait for both streams; report an asynchronous failure. */
static inline ght_status
gpu_sync(ght_ctx *ctx)
{
	GCHECK(ctx, cudaStreamSynchronize(gctx(ctx)->stream[0]));
	GCHECK(ctx, cudaStreamSynchronize(gctx(ctx)->stream[1]));
	return GHT_OK;
}

/* Host wrapper of a C++ entry point: no exception may cross into C. */
#define GPU_ENTRY(ctx, ...) \
	try { __VA_ARGS__ } \
	catch (...) { return ght_fail((ctx), GHT_ERR_INTERNAL, "unexpected C++ exception in %s", __func__); }

static inline unsigned
grid_for(uint64_t n, unsigned block)
{
	uint64_t	g = (n + block - 1) / block;

	return (unsigned) (g > 65535u * 32u ? 65535u * 32u : (g ? g : 1));
}

/* Run a CUB device-wide algorithm: ask its temporary size, allocate, run. */
#define CUB_RUN(ctx, stream, call_with_tmp) do { \
	void *tmp_ = nullptr; size_t tmpb_ = 0; \
	{ void *d_temp_storage = nullptr; size_t temp_storage_bytes = 0; \
	  GCHECK(ctx, (call_with_tmp)); tmpb_ = temp_storage_bytes; } \
	dmem tm_(ctx); GTRY(tm_.alloc(tmpb_ ? tmpb_ : 1)); tmp_ = tm_.p; \
	{ void *d_temp_storage = tmp_; size_t temp_storage_bytes = tmpb_; \
	  GCHECK(ctx, (call_with_tmp)); } \
	GCHECK(ctx, cudaStreamSynchronize(stream)); \
	} while (0)

/* ---- key types ---------------------------------------------------------- */

template <typename KT> struct ktraits;

template <> struct ktraits<uint32_t>
{
	typedef ght_slot32 slot;
	static constexpr uint32_t empty = GHT_EMPTY32;
	static constexpr int spg = GHT_GROUP_BYTES / sizeof(ght_slot32);
	__host__ __device__ static uint32_t hash(uint32_t k, uint32_t seed) { return ght_hash_k32(k, seed); }
};

template <> struct ktraits<uint64_t>
{
	typedef ght_slot64 slot;
	static constexpr uint64_t empty = GHT_EMPTY64;
	static constexpr int spg = GHT_GROUP_BYTES / sizeof(ght_slot64);
	__host__ __device__ static uint32_t hash(uint64_t k, uint32_t seed) { return ght_hash_k64(k, seed); }
};

/* Read-only loads through the non-coherent cache (tables are immutable
 * while static probes run). */
__device__ __forceinline__ ght_slot32
ld_slot(const ght_slot32 *p)
{
	uint2		v = __ldg((const uint2 *) p);

	return ght_slot32{v.x, v.y};
}

__device__ __forceinline__ ght_slot64
ld_slot(const ght_slot64 *p)
{
	uint4		v = __ldg((const uint4 *) p);

	return ght_slot64{(uint64_t) v.x | ((uint64_t) v.y << 32), (uint64_t) v.z | ((uint64_t) v.w << 32)};
}

/* A whole 32-byte cuckoo group in two 16-byte loads. */
template <typename ST>
__device__ __forceinline__ void
ld_group(const ST *g, ST *out)
{
	const uint4 *p = (const uint4 *) g;
	uint4		a = __ldg(p),
				b = __ldg(p + 1);
	uint32_t	w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};

	memcpy(out, w, sizeof(w));
}

/* Loads for mutable tables, which change under concurrent probes. */
__device__ __forceinline__ uint32_t ld_volatile(const uint32_t *p) { return *(const volatile uint32_t *) p; }
__device__ __forceinline__ uint64_t ld_volatile(const uint64_t *p) { return *(const volatile uint64_t *) p; }

/* ---- device-side lookups ------------------------------------------------ */

/*
 * Cuckoo: the key's bucket descriptor, then at most three groups; a group
 * with a free slot ends the search (groups only fill, and a key moves past a
 * sub-table only when its group there was full).
 */
template <typename KT>
__device__ __forceinline__ bool
cuckoo_find(const ght_index &ix, KT k, uint64_t *ref)
{
	typedef typename ktraits<KT>::slot ST;
	constexpr int SPG = ktraits<KT>::spg;
	const ST   *s = (const ST *) ix.slots;

	if (k == ktraits<KT>::empty)
	{
		*ref = ld_slot(&s[ix.nslots]).ref;
		return ix.special_present != 0;
	}
	uint64_t	desc = __ldg(&ix.buckets[ght_range(ktraits<KT>::hash(k, ix.seed), ix.nbuckets)]);
	uint32_t	seedno = ght_desc_seedno(desc);

#pragma unroll
	for (uint32_t j = 0; j < GHT_SUBTABLES; j++)
	{
		ST			grp[SPG];
		bool		free_slot = false;

		ld_group(s + ght_cuckoo_group(desc, ix.shared_groups, j, ktraits<KT>::hash(k, ght_cuckoo_subseed(ix.seed, seedno, j))) * SPG, grp);
#pragma unroll
		for (int i = 0; i < SPG; i++)
		{
			if (grp[i].key == k)
			{
				*ref = grp[i].ref;
				return true;
			}
			free_slot |= grp[i].key == ktraits<KT>::empty;
		}
		if (free_slot)
			return false;
	}
	return false;
}

/*
 * Linear, one thread per key (static tables).  The sequence is read a
 * 32-byte aligned chunk at a time (4 slots of 32-bit keys, 2 of 64-bit):
 * long sequences at high load cost a quarter (half) of the loads.
 */
template <typename KT>
__device__ __forceinline__ bool
linear_find(const ght_index &ix, KT k, uint64_t *ref)
{
	typedef typename ktraits<KT>::slot ST;
	constexpr int SPG = ktraits<KT>::spg;
	const ST   *s = (const ST *) ix.slots;

	if (k == ktraits<KT>::empty)
	{
		*ref = ld_slot(&s[ix.nslots]).ref;
		return ix.special_present != 0;
	}
	uint64_t	pos = ght_linear_start(ktraits<KT>::hash(k, ix.seed), ix.mask, ix.group);
	uint64_t	base = pos & ~(uint64_t) (SPG - 1);
	int			skip = (int) (pos - base);

	for (uint64_t step = 0; step <= ix.mask; step += SPG)
	{
		ST			grp[SPG];

		ld_group(s + ((base + step) & ix.mask), grp);
#pragma unroll
		for (int i = 0; i < SPG; i++)
		{
			if (i < skip)
				continue;
			if (grp[i].key == k)
			{
				*ref = grp[i].ref;
				return true;
			}
			if (grp[i].key == ktraits<KT>::empty)
				return false;
		}
		skip = 0;
	}
	return false;
}

/* Mutable (list) tables: the slot of k or nullptr, read with volatile loads. */
template <typename KT>
__device__ __forceinline__ typename ktraits<KT>::slot *
list_find_slot(const ght_index &ix, KT k)
{
	typedef typename ktraits<KT>::slot ST;
	ST		   *s = (ST *) ix.slots;

	if (k == ktraits<KT>::empty)
		return &s[ix.nslots];
	uint64_t	pos = ght_linear_start(ktraits<KT>::hash(k, ix.seed), ix.mask, ix.group);

	for (uint64_t step = 0; step <= ix.mask; step++)
	{
		ST		   *sl = &s[(pos + step) & ix.mask];
		KT			sk = ld_volatile(&sl->key);

		if (sk == k)
			return sl;
		if (sk == ktraits<KT>::empty)
			return nullptr;
	}
	return nullptr;
}

template <typename KT>
__device__ __forceinline__ bool
list_find(const ght_index &ix, KT k, uint64_t *ref)
{
	typename ktraits<KT>::slot *sl = list_find_slot<KT>(ix, k);

	if (sl == nullptr)
		return false;
	*ref = ld_volatile(&sl->ref);
	__threadfence();			/* see the node's contents once we see its index */
	return *ref != GHT_NIL;
}

template <typename KT>
__device__ __forceinline__ bool
table_find(const ght_index &ix, KT k, uint64_t *ref)
{
	if (ix.mode == GHT_MODE_LIST)
		return list_find<KT>(ix, k, ref);
	if (ix.method == GHT_CUCKOO)
		return cuckoo_find<KT>(ix, k, ref);
	return linear_find<KT>(ix, k, ref);
}

/* Rows behind a found key's ref, and the j-th of them. */
__device__ __forceinline__ uint64_t
payload_at(const ght_index &ix, uint64_t i)
{
	return ix.payload_width == 4 ? (uint64_t) ((const uint32_t *) ix.payload)[i]
		: ((const uint64_t *) ix.payload)[i];
}

__device__ __forceinline__ uint64_t
ref_rows(const ght_index &ix, uint64_t ref)
{
	if (ix.mode == GHT_MODE_INLINE)
		return 1;
	if (ix.mode == GHT_MODE_RANGE)
		return (uint64_t) ix.offsets[ref + 1] - ix.offsets[ref];
	uint64_t	c = 0;

	for (uint64_t nd = ref; nd != GHT_NIL; nd = ld_volatile(&ix.next[nd]))
		c++;
	return c;
}

/* ---- functions shared between the GPU files ----------------------------- */

/* Host memory into a new device array (device memory is borrowed as is). */
ght_status	gpu_upload(ght_ctx *ctx, dmem &dst, const void *src, size_t bytes, int on_device);

/* With GHT_TRACE set in the environment: the time since the last mark. */
void		gpu_trace(ght_ctx *ctx, const char *what);

/* Build the index of d distinct device keys with refs (gpu_cuckoo.cu / gpu_linear.cu). */
ght_status	gpu_cuckoo_build(ght_table *t, const void *ukeys, const uint64_t *refs, uint64_t d);
ght_status	gpu_linear_build(ght_table *t, const void *ukeys, const uint64_t *refs, uint64_t d);
/* nslots + 1 empty slots for `keys` keys at the table's load (gpu_linear.cu). */
ght_status	gpu_linear_alloc(ght_table *t, dmem &slots, uint64_t keys);
/* Mutable tables (gpu_mutable.cu). */
ght_status	gpu_list_build(ght_table *t, const void *dkeys, const void *dpayloads, int rownum, uint64_t n);
/* Benchmark hook (gpu_probe.cu): refs of n device keys into device memory
 * (uint32 for 32-bit keys, uint64 for 64-bit), GHT_NIL when absent. */
ght_status	ght_gpu_lookup_device(ght_table *t, const void *dkeys, uint64_t n, void *dout, void *stream);
/* Hopscotch tables (gpu_hopscotch.cu). */
ght_status	gpu_hop_build(ght_table *t, const void *dkeys, const void *dpayloads, int rownum, uint64_t n);
ght_status	gpu_hop_insert(ght_table *t, const void *keys, const void *payloads, uint64_t n);
ght_status	gpu_hop_delete(ght_table *t, const void *keys, uint64_t n, uint64_t *removed, int on_device);
ght_status	gpu_hop_mixed_batch(ght_table *t, const uint8_t *ops, const void *keys,
								const uint64_t *payloads, uint64_t n, uint8_t *found);
ght_status	gpu_hop_export_device(ght_table *t, dmem &keys, dmem &payloads, uint64_t *n_out);
ght_status	gpu_hop_probe_stats(ght_table *t, double *mean, uint32_t *max);
/* Benchmark hook (gpu_mutable.cu): delete n device keys from a mutable table. */
ght_status	ght_gpu_delete_device(ght_table *t, const void *dkeys, uint64_t n, uint64_t *removed);
/* Every live row into device arrays (gpu_export.cu). */
ght_status	gpu_export_device(ght_table *t, dmem &keys, dmem &payloads, uint64_t *n_out);

#endif
