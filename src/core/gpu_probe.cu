/*
 * gpu_probe.cu - probing a table on the GPU: membership, semi/anti joins
 * and inner joins (every matching pair).
 *
 * Keys go up in chunks on two streams, so one chunk's copy overlaps the
 * other's lookups.  Inner joins count first (each probe's ref and number of
 * rows), scan the counts, and then write exactly the pairs asked for: one
 * thread per output pair finds its probe by binary search over the scanned
 * counts, so a key with 100000 rows spreads over 100000 threads.  Mutable
 * tables keep a key's rows in a list, so there one thread walks one probe's
 * list and windows end on probe boundaries.
 */
#include "gpu_hopscotch.cuh"

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <cooperative_groups.h>
#include <new>

namespace cg = cooperative_groups;

#define CHUNK_KEYS ((uint64_t) 1 << 22)

enum
{
	M_CUCKOO,
	M_LINEAR,
	M_LIST,
	M_HOP
};

template <typename KT, int M>
__device__ __forceinline__ bool
find_m(const ght_index &ix, KT k, uint64_t *ref)
{
	if (M == M_CUCKOO)
		return cuckoo_find<KT>(ix, k, ref);
	if (M == M_LINEAR)
		return linear_find<KT>(ix, k, ref);
	if (M == M_HOP)
		return hop_find<KT>(ix, k, ref);
	return list_find<KT>(ix, k, ref);
}

/* flags[i] = found(keys[i]) xor anti, for i in [lo, hi). */
template <typename KT, int M>
__global__ void
flag_kernel(ght_index ix, const KT *keys, uint64_t lo, uint64_t hi, uint8_t anti, uint8_t *flags)
{
	for (uint64_t i = lo + blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < hi;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint64_t	ref;

		flags[i] = (uint8_t) (find_m<KT, M>(ix, keys[i], &ref) ^ anti);
	}
}

/* refs[i] and cnt[i] (rows behind the key, 0 if absent), for i in [lo, hi). */
template <typename KT, int M>
__global__ void
count_kernel(ght_index ix, const KT *keys, uint64_t lo, uint64_t hi, uint64_t *refs, uint64_t *cnt)
{
	for (uint64_t i = lo + blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < hi;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint64_t	ref = 0;
		bool		f = find_m<KT, M>(ix, keys[i], &ref);

		refs[i] = ref;
		cnt[i] = f ? ref_rows(ix, ref) : 0;
	}
}

/* Pairs [o0, o0 + w) of a static table: binary search for each pair's probe. */
__global__ void
write_pairs(ght_index ix, const uint64_t *pos, const uint64_t *refs, uint64_t n, uint64_t o0,
			uint64_t w, uint32_t *out_idx, uint64_t *out_pay)
{
	for (uint64_t o = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; o < w;
		 o += (uint64_t) gridDim.x * blockDim.x)
	{
		uint64_t	g = o0 + o,
					lo = 0,
					hi = n;

		/* the last probe i with pos[i] <= g */
		while (hi - lo > 1)
		{
			uint64_t	mid = (lo + hi) / 2;

			if (pos[mid] <= g)
				lo = mid;
			else
				hi = mid;
		}
		uint64_t	ref = refs[lo];

		out_idx[o] = (uint32_t) lo;
		out_pay[o] = ix.mode == GHT_MODE_INLINE ? ref : payload_at(ix, ix.offsets[ref] + (g - pos[lo]));
	}
}

/* Pairs of probes [i0, i1) of a mutable table: one thread walks one list. */
__global__ void
write_list_pairs(ght_index ix, const uint64_t *pos, const uint64_t *refs, const uint64_t *cnt,
				 uint64_t i0, uint64_t i1, uint32_t *out_idx, uint64_t *out_pay)
{
	uint64_t	base = pos[i0];

	for (uint64_t i = i0 + blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < i1;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint64_t	at = pos[i] - base,
					left = cnt[i];

		for (uint64_t nd = refs[i]; nd != GHT_NIL && left > 0; nd = ix.next[nd], at++, left--)
		{
			out_idx[at] = (uint32_t) i;
			out_pay[at] = payload_at(ix, nd);
		}
	}
}

/*
 * Benchmark hook: out[i] = the ref of keys[i] (its inline payload), or
 * GHT_NIL, for keys already on the device.  Linear tables built with a probe
 * window of G > 1 slots are probed by G cooperating threads: each reads one
 * slot of the window and one ballot finds the key or a free slot.
 */
template <typename KT, int M>
__global__ void
lookup_kernel(ght_index ix, const KT *keys, uint64_t n, uint32_t *out32,
			  uint64_t *out64)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint64_t	ref = GHT_NIL;

		if (!find_m<KT, M>(ix, keys[i], &ref))
			ref = GHT_NIL;
		if (out32)
			out32[i] = (uint32_t) ref;
		else
			out64[i] = ref;
	}
}

template <typename KT, int G>
__global__ void
lookup_coop_kernel(ght_index ix, const KT *keys, uint64_t n, uint32_t *out32, uint64_t *out64)
{
	typedef typename ktraits<KT>::slot ST;
	cg::thread_block_tile<G> tile = cg::tiled_partition<G>(cg::this_thread_block());
	const ST   *s = (const ST *) ix.slots;
	uint64_t	tiles = (uint64_t) gridDim.x * (blockDim.x / G);

	for (uint64_t i = blockIdx.x * (uint64_t) (blockDim.x / G) + threadIdx.x / G; i < n; i += tiles)
	{
		KT			k = keys[i];
		uint64_t	ref = GHT_NIL;

		if (k == ktraits<KT>::empty)
		{
			if (ix.special_present)
				ref = ld_slot(&s[ix.nslots]).ref;
		}
		else
		{
			uint64_t	pos = ght_linear_start(ktraits<KT>::hash(k, ix.seed), ix.mask, G);

			for (uint64_t w = 0; w * G <= ix.mask; w++)
			{
				ST			sl = ld_slot(&s[(pos + w * G + tile.thread_rank()) & ix.mask]);
				unsigned	hit = tile.ballot(sl.key == k);

				if (hit)
				{
					ref = tile.shfl(sl.ref, __ffs(hit) - 1);
					break;
				}
				if (tile.ballot(sl.key == ktraits<KT>::empty))
					break;
			}
		}
		if (tile.thread_rank() == 0)
		{
			if (out32)
				out32[i] = (uint32_t) ref;
			else
				out64[i] = ref;
		}
	}
}

template <typename KT>
static ght_status
lookup_device(ght_table *t, const KT *keys, uint64_t n, void *out, cudaStream_t st)
{
	uint32_t   *o32 = sizeof(KT) == 4 ? (uint32_t *) out : nullptr;
	uint64_t   *o64 = sizeof(KT) == 8 ? (uint64_t *) out : nullptr;
	unsigned	grid = grid_for(n, 256);

	if (t->ix.method == GHT_HOPSCOTCH)
		lookup_kernel<KT, M_HOP><<<grid, 256, 0, st>>>(t->ix, keys, n, o32, o64);
	else if (t->ix.mode == GHT_MODE_LIST)
		lookup_kernel<KT, M_LIST><<<grid, 256, 0, st>>>(t->ix, keys, n, o32, o64);
	else if (t->ix.method == GHT_CUCKOO)
		lookup_kernel<KT, M_CUCKOO><<<grid, 256, 0, st>>>(t->ix, keys, n, o32, o64);
	else
	{
		uint64_t	tg = grid_for(n * t->ix.group, 256);

		switch (t->ix.group)
		{
			case 1:
				lookup_kernel<KT, M_LINEAR><<<grid, 256, 0, st>>>(t->ix, keys, n, o32, o64);
				break;
			case 2:
				lookup_coop_kernel<KT, 2><<<tg, 256, 0, st>>>(t->ix, keys, n, o32, o64);
				break;
			case 4:
				lookup_coop_kernel<KT, 4><<<tg, 256, 0, st>>>(t->ix, keys, n, o32, o64);
				break;
			case 8:
				lookup_coop_kernel<KT, 8><<<tg, 256, 0, st>>>(t->ix, keys, n, o32, o64);
				break;
			case 16:
				lookup_coop_kernel<KT, 16><<<tg, 256, 0, st>>>(t->ix, keys, n, o32, o64);
				break;
			default:
				lookup_coop_kernel<KT, 32><<<tg, 256, 0, st>>>(t->ix, keys, n, o32, o64);
				break;
		}
	}
	GLAUNCH(t->ctx, "lookup");
	return GHT_OK;
}

ght_status
ght_gpu_lookup_device(ght_table *t, const void *dkeys, uint64_t n, void *dout, void *stream)
{
	if (t->opts.key_width == 4)
		return lookup_device<uint32_t>(t, (const uint32_t *) dkeys, n, dout, (cudaStream_t) stream);
	return lookup_device<uint64_t>(t, (const uint64_t *) dkeys, n, dout, (cudaStream_t) stream);
}

static int
method_of(const ght_table *t)
{
	if (t->ix.method == GHT_HOPSCOTCH)
		return M_HOP;
	if (t->ix.mode == GHT_MODE_LIST)
		return M_LIST;
	return t->ix.method == GHT_CUCKOO ? M_CUCKOO : M_LINEAR;
}

/*
 * Upload keys chunk by chunk and run flag_kernel (refs == NULL) or
 * count_kernel on each chunk as it lands; with flags_out, copy each chunk's
 * flags back as soon as they are ready.
 */
template <typename KT, int M>
static ght_status
upload_and_find_m(ght_table *t, const KT *keys, uint64_t n, dmem &dk, uint8_t anti, uint8_t *dflags,
				  uint8_t *flags_out, uint64_t *refs, uint64_t *cnt)
{
	ght_ctx    *ctx = t->ctx;
	ght_gpu_ctx *g = gctx(ctx);

	for (uint64_t lo = 0, c = 0; lo < n; lo += CHUNK_KEYS, c++)
	{
		uint64_t	hi = lo + CHUNK_KEYS < n ? lo + CHUNK_KEYS : n;
		cudaStream_t st = g->stream[c % 2];
		unsigned	grid = grid_for(hi - lo, 256);

		GTRY(gpu_copy_async(ctx, dk.as<KT>() + lo, keys + lo, (hi - lo) * sizeof(KT), cudaMemcpyHostToDevice, st));
		if (refs == nullptr)
			flag_kernel<KT, M><<<grid, 256, 0, st>>>(t->ix, dk.as<KT>(), lo, hi, anti, dflags);
		else
			count_kernel<KT, M><<<grid, 256, 0, st>>>(t->ix, dk.as<KT>(), lo, hi, refs, cnt);
		GLAUNCH(ctx, "probe kernel");
		if (flags_out)
			GTRY(gpu_copy_async(ctx, flags_out + lo, dflags + lo, hi - lo, cudaMemcpyDeviceToHost, st));
	}
	return gpu_sync(ctx);
}

template <typename KT>
static ght_status
upload_and_find(ght_table *t, const void *keys, uint64_t n, dmem &dk, uint8_t anti, uint8_t *dflags,
				uint8_t *flags_out, uint64_t *refs, uint64_t *cnt)
{
	const KT   *k = (const KT *) keys;

	GTRY(dk.alloc(n * sizeof(KT)));
	switch (method_of(t))
	{
		case M_CUCKOO:
			return upload_and_find_m<KT, M_CUCKOO>(t, k, n, dk, anti, dflags, flags_out, refs, cnt);
		case M_LINEAR:
			return upload_and_find_m<KT, M_LINEAR>(t, k, n, dk, anti, dflags, flags_out, refs, cnt);
		case M_HOP:
			return upload_and_find_m<KT, M_HOP>(t, k, n, dk, anti, dflags, flags_out, refs, cnt);
		default:
			return upload_and_find_m<KT, M_LIST>(t, k, n, dk, anti, dflags, flags_out, refs, cnt);
	}
}

static ght_status
find_all(ght_table *t, const void *keys, uint64_t n, dmem &dk, uint8_t anti, uint8_t *dflags,
		 uint8_t *flags_out, uint64_t *refs, uint64_t *cnt)
{
	GCHECK(t->ctx, cudaSetDevice(t->ctx->gpu_id));
	if (t->opts.key_width == 4)
		return upload_and_find<uint32_t>(t, keys, n, dk, anti, dflags, flags_out, refs, cnt);
	return upload_and_find<uint64_t>(t, keys, n, dk, anti, dflags, flags_out, refs, cnt);
}

extern "C" ght_status
ght_gpu_contains(ght_table *t, const void *keys, uint64_t n, uint8_t *out)
{
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		dmem		dk(ctx),
					df(ctx);

		GTRY(df.alloc(n));
		return find_all(t, keys, n, dk, 0, df.as<uint8_t>(), out, nullptr, nullptr);
	})
}

extern "C" ght_status
ght_gpu_select(ght_table *t, const void *keys, uint64_t n, int anti,
			   uint32_t *out_idx, uint64_t *out_n)
{
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		cudaStream_t st = gctx(ctx)->stream[0];
		dmem		dk(ctx),
					df(ctx),
					dsel(ctx),
					dnum(ctx);
		int64_t		num = 0;

		GTRY(df.alloc(n));
		GTRY(find_all(t, keys, n, dk, anti ? 1 : 0, df.as<uint8_t>(), nullptr, nullptr, nullptr));
		dk.reset();
		GTRY(dsel.alloc(n * sizeof(uint32_t)));
		GTRY(dnum.alloc(sizeof(int64_t)));
		CUB_RUN(ctx, st, cub::DeviceSelect::Flagged(d_temp_storage, temp_storage_bytes,
													thrust::counting_iterator<uint32_t>(0), df.as<uint8_t>(),
													dsel.as<uint32_t>(), dnum.as<int64_t>(), (int64_t) n, st));
		GCHECK(ctx, cudaMemcpy(&num, dnum.p, sizeof(num), cudaMemcpyDeviceToHost));
		if (num > 0)
		{
			GTRY(gpu_copy_async(ctx, out_idx, dsel.p, (size_t) num * sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
			GCHECK(ctx, cudaStreamSynchronize(st));
		}
		*out_n = (uint64_t) num;
		return GHT_OK;
	})
}

/* A capped probe (ght_probe_begin_capped) hands out at most cap rows a key. */
__global__ void
cap_counts(uint64_t *cnt, uint64_t n, uint64_t cap)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		if (cnt[i] > cap)
			cnt[i] = cap;
}

/* What a GPU probe keeps between ght_probe_begin and ght_probe_end. */
struct gpu_probe_state
{
	dmem		refs,
				cnt,
				pos,
				out_idx,
				out_pay;
	uint64_t   *host_pos;		/* mutable tables: scanned counts, for windows */
	uint64_t	next_probe;
	uint64_t	host_cap;

	gpu_probe_state(ght_ctx *c) : refs(c), cnt(c), pos(c), out_idx(c), out_pay(c),
		host_pos(nullptr), next_probe(0), host_cap(0) {}
};

extern "C" ght_status
ght_gpu_probe_begin(ght_probe *p, const void *keys)
{
	ght_table  *t = p->t;
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		cudaStream_t st = gctx(ctx)->stream[0];
		gpu_probe_state *s = new (std::nothrow) gpu_probe_state(ctx);
		dmem		dk(ctx);
		uint64_t	n = p->n;

		if (s == nullptr)
			return ght_fail(ctx, GHT_ERR_HOST_NOMEM, "could not allocate probe state");
		p->priv = s;
		GTRY(s->refs.alloc(n * sizeof(uint64_t)));
		GTRY(s->cnt.alloc((n + 1) * sizeof(uint64_t)));
		GTRY(s->pos.alloc((n + 1) * sizeof(uint64_t)));
		GCHECK(ctx, cudaMemsetAsync(s->cnt.as<uint64_t>() + n, 0, sizeof(uint64_t), st));
		GCHECK(ctx, cudaStreamSynchronize(st));
		GTRY(find_all(t, keys, n, dk, 0, nullptr, nullptr, s->refs.as<uint64_t>(), s->cnt.as<uint64_t>()));
		dk.reset();
		if (p->cap > 0)
		{
			cap_counts<<<grid_for(n, 256), 256, 0, st>>>(s->cnt.as<uint64_t>(), n, p->cap);
			GLAUNCH(ctx, "cap the pair counts");
		}
		CUB_RUN(ctx, st, cub::DeviceScan::ExclusiveSum(d_temp_storage, temp_storage_bytes, s->cnt.as<uint64_t>(),
													   s->pos.as<uint64_t>(), (int64_t) (n + 1), st));
		GCHECK(ctx, cudaMemcpy(&p->total, s->pos.as<uint64_t>() + n, sizeof(uint64_t), cudaMemcpyDeviceToHost));
		if (t->ix.mode == GHT_MODE_LIST)
		{
			s->host_pos = (uint64_t *) malloc((n + 1) * sizeof(uint64_t));
			if (s->host_pos == nullptr)
				return ght_fail(ctx, GHT_ERR_HOST_NOMEM, "could not allocate probe offsets");
			GCHECK(ctx, cudaMemcpy(s->host_pos, s->pos.p, (n + 1) * sizeof(uint64_t), cudaMemcpyDeviceToHost));
		}
		else
			s->cnt.reset();
		return GHT_OK;
	})
}

/* Device and pinned host buffers for w pairs. */
static ght_status
window_buffers(ght_probe *p, gpu_probe_state *s, uint64_t w)
{
	ght_ctx    *ctx = p->t->ctx;

	if (s->out_idx.bytes < w * sizeof(uint32_t))
	{
		GTRY(s->out_idx.alloc(w * sizeof(uint32_t)));
		GTRY(s->out_pay.alloc(w * sizeof(uint64_t)));
	}
	if (s->host_cap < w)
	{
		ght_gpu_host_free(ctx, p->out_idx);
		ght_gpu_host_free(ctx, p->out_payload);
		p->out_idx = (uint32_t *) ght_gpu_host_alloc(ctx, w * sizeof(uint32_t));
		p->out_payload = (uint64_t *) ght_gpu_host_alloc(ctx, w * sizeof(uint64_t));
		s->host_cap = 0;
		if (p->out_idx == nullptr || p->out_payload == nullptr)
			return ght_fail(ctx, GHT_ERR_HOST_NOMEM, "could not allocate %llu pinned result pairs",
							(unsigned long long) w);
		s->host_cap = w;
	}
	return GHT_OK;
}

extern "C" ght_status
ght_gpu_probe_next(ght_probe *p, uint64_t max_pairs, uint64_t *n_out)
{
	ght_table  *t = p->t;
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		cudaStream_t st = gctx(ctx)->stream[0];
		gpu_probe_state *s = (gpu_probe_state *) p->priv;
		uint64_t	w;

		if (t->ix.mode != GHT_MODE_LIST)
		{
			w = p->total - p->emitted;
			if (w > max_pairs)
				w = max_pairs;
			GTRY(window_buffers(p, s, w));
			write_pairs<<<grid_for(w, 256), 256, 0, st>>>(t->ix, s->pos.as<uint64_t>(), s->refs.as<uint64_t>(), p->n,
														  p->emitted, w, s->out_idx.as<uint32_t>(),
														  s->out_pay.as<uint64_t>());
		}
		else
		{
			/* whole probes, as many as fit in max_pairs (at least one) */
			uint64_t	i0 = s->next_probe,
						lo,
						hi = p->n;

			while (i0 + 1 < p->n && s->host_pos[i0 + 1] == s->host_pos[i0])
				i0++;			/* skip probes without rows */
			lo = i0 + 1;
			while (lo < hi)
			{
				uint64_t	mid = (lo + hi + 1) / 2;

				if (s->host_pos[mid] - s->host_pos[i0] <= max_pairs)
					lo = mid;
				else
					hi = mid - 1;
			}
			w = s->host_pos[lo] - s->host_pos[i0];
			GTRY(window_buffers(p, s, w ? w : 1));
			write_list_pairs<<<grid_for(lo - i0, 256), 256, 0, st>>>(t->ix, s->pos.as<uint64_t>(),
																	 s->refs.as<uint64_t>(), s->cnt.as<uint64_t>(),
																	 i0, lo, s->out_idx.as<uint32_t>(),
																	 s->out_pay.as<uint64_t>());
			s->next_probe = lo;
		}
		GLAUNCH(ctx, "write pairs");
		GTRY(gpu_copy_async(ctx, p->out_idx, s->out_idx.p, w * sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
		GTRY(gpu_copy_async(ctx, p->out_payload, s->out_pay.p, w * sizeof(uint64_t), cudaMemcpyDeviceToHost, st));
		GCHECK(ctx, cudaStreamSynchronize(st));
		*n_out = w;
		return GHT_OK;
	})
}

extern "C" void
ght_gpu_probe_end(ght_probe *p)
{
	gpu_probe_state *s = (gpu_probe_state *) p->priv;

	if (s)
	{
		free(s->host_pos);
		delete s;
	}
	ght_gpu_host_free(p->ctx, p->out_idx);
	ght_gpu_host_free(p->ctx, p->out_payload);
	p->out_idx = NULL;
	p->out_payload = NULL;
}
