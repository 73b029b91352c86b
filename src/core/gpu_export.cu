/*
 * gpu_export.cu - whole-table passes on the GPU: every live row out (for
 * ght_export and for rehashing mutable tables), and the probe-length
 * statistics.
 */
#include "gpu_internal.cuh"

#include <cub/device/device_scan.cuh>

/* Does slot s (s == nslots: the spare) hold a key with rows? */
template <typename KT>
__device__ __forceinline__ bool
slot_live(const ght_index &ix, const typename ktraits<KT>::slot &sl, uint64_t s)
{
	if (ix.mode == GHT_MODE_LIST)
		return sl.ref != GHT_NIL;
	if (s == ix.nslots)
		return ix.special_present != 0;
	return sl.key != ktraits<KT>::empty;
}

template <typename KT>
__global__ void
count_rows(ght_index ix, uint64_t *cnt)
{
	typedef typename ktraits<KT>::slot ST;
	const ST   *s = (const ST *) ix.slots;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i <= ix.nslots;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		ST			sl = s[i];

		cnt[i] = slot_live<KT>(ix, sl, i) ? ref_rows(ix, sl.ref) : 0;
	}
}

template <typename KT>
__global__ void
write_rows(ght_index ix, const uint64_t *pos, KT *keys, uint64_t *payloads)
{
	typedef typename ktraits<KT>::slot ST;
	const ST   *s = (const ST *) ix.slots;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i <= ix.nslots;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		ST			sl = s[i];
		uint64_t	at = pos[i];

		if (!slot_live<KT>(ix, sl, i))
			continue;
		if (ix.mode == GHT_MODE_INLINE)
		{
			keys[at] = sl.key;
			payloads[at] = sl.ref;
		}
		else if (ix.mode == GHT_MODE_RANGE)
		{
			for (uint64_t j = ix.offsets[sl.ref]; j < ix.offsets[sl.ref + 1]; j++, at++)
			{
				keys[at] = sl.key;
				payloads[at] = payload_at(ix, j);
			}
		}
		else
		{
			for (uint64_t nd = sl.ref; nd != GHT_NIL; nd = ix.next[nd], at++)
			{
				keys[at] = sl.key;
				payloads[at] = payload_at(ix, nd);
			}
		}
	}
}

template <typename KT>
static ght_status
export_device(ght_table *t, dmem &keys, dmem &payloads, uint64_t *n_out)
{
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	uint64_t	ns = t->ix.nslots + 1;
	dmem		cnt(ctx),
				pos(ctx);
	uint64_t	last_pos = 0,
				last_cnt = 0;

	GTRY(cnt.alloc(ns * sizeof(uint64_t)));
	GTRY(pos.alloc(ns * sizeof(uint64_t)));
	count_rows<KT><<<grid_for(ns, 256), 256, 0, st>>>(t->ix, cnt.as<uint64_t>());
	GLAUNCH(ctx, "count_rows");
	CUB_RUN(ctx, st, cub::DeviceScan::ExclusiveSum(d_temp_storage, temp_storage_bytes, cnt.as<uint64_t>(),
												   pos.as<uint64_t>(), (int64_t) ns, st));
	GCHECK(ctx, cudaMemcpy(&last_pos, pos.as<uint64_t>() + ns - 1, 8, cudaMemcpyDeviceToHost));
	GCHECK(ctx, cudaMemcpy(&last_cnt, cnt.as<uint64_t>() + ns - 1, 8, cudaMemcpyDeviceToHost));
	*n_out = last_pos + last_cnt;
	if (*n_out != t->rows)
		return ght_fail(ctx, GHT_ERR_INTERNAL, "table holds %llu rows but counted %llu",
						(unsigned long long) *n_out, (unsigned long long) t->rows);
	cnt.reset();
	GTRY(keys.alloc((*n_out ? *n_out : 1) * sizeof(KT)));
	GTRY(payloads.alloc((*n_out ? *n_out : 1) * sizeof(uint64_t)));
	write_rows<KT><<<grid_for(ns, 256), 256, 0, st>>>(t->ix, pos.as<uint64_t>(), keys.as<KT>(),
													  payloads.as<uint64_t>());
	GLAUNCH(ctx, "write_rows");
	GCHECK(ctx, cudaStreamSynchronize(st));
	return GHT_OK;
}

ght_status
gpu_export_device(ght_table *t, dmem &keys, dmem &payloads, uint64_t *n_out)
{
	if (t->opts.method == GHT_HOPSCOTCH)
		return gpu_hop_export_device(t, keys, payloads, n_out);
	if (t->opts.key_width == 4)
		return export_device<uint32_t>(t, keys, payloads, n_out);
	return export_device<uint64_t>(t, keys, payloads, n_out);
}

extern "C" ght_status
ght_gpu_export(ght_table *t, void *keys, uint64_t *payloads, uint64_t *n_out)
{
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		dmem		dk(ctx),
					dp(ctx);

		GTRY(gpu_export_device(t, dk, dp, n_out));
		GCHECK(ctx, cudaMemcpy(keys, dk.p, *n_out * (size_t) t->opts.key_width, cudaMemcpyDeviceToHost));
		GCHECK(ctx, cudaMemcpy(payloads, dp.p, *n_out * sizeof(uint64_t), cudaMemcpyDeviceToHost));
		return GHT_OK;
	})
}

struct probe_sums
{
	unsigned long long keys;
	unsigned long long sum;
	unsigned int max;
};

/* Groups (cuckoo) or slots (linear) a lookup of each stored key reads. */
template <typename KT>
__global__ void
probe_lengths(ght_index ix, probe_sums *out)
{
	typedef typename ktraits<KT>::slot ST;
	constexpr int SPG = ktraits<KT>::spg;
	const ST   *s = (const ST *) ix.slots;
	unsigned long long keys = 0,
				sum = 0;
	unsigned int mx = 0;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < ix.nslots;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		KT			k = s[i].key;
		uint64_t	len;

		if (k == ktraits<KT>::empty)
			continue;
		if (ix.method == GHT_CUCKOO)
		{
			uint64_t	desc = ix.buckets[ght_range(ktraits<KT>::hash(k, ix.seed), ix.nbuckets)];

			len = 0;
			for (uint32_t j = 0; j < GHT_SUBTABLES && len == 0; j++)
				if (ght_cuckoo_group(desc, ix.shared_groups, j,
									 ktraits<KT>::hash(k, ght_cuckoo_subseed(ix.seed, ght_desc_seedno(desc), j))) == i / SPG)
					len = j + 1;
		}
		else
			len = ((i - ght_linear_start(ktraits<KT>::hash(k, ix.seed), ix.mask, ix.group)) & ix.mask) + 1;
		keys++;
		sum += len;
		mx = max(mx, (unsigned int) (len > 0xFFFFFFFFull ? 0xFFFFFFFFull : len));
	}
	atomicAdd(&out->keys, keys);
	atomicAdd(&out->sum, sum);
	atomicMax(&out->max, mx);
}

extern "C" ght_status
ght_gpu_probe_stats(ght_table *t, double *mean, uint32_t *max)
{
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		if (t->opts.method == GHT_HOPSCOTCH)
			return gpu_hop_probe_stats(t, mean, max);
		cudaStream_t st = gctx(ctx)->stream[0];
		dmem		d(ctx);
		probe_sums	h;
		unsigned	grid = grid_for(t->ix.nslots, 256);

		if (grid > 4096)
			grid = 4096;
		GTRY(d.alloc(sizeof(probe_sums)));
		GCHECK(ctx, cudaMemsetAsync(d.p, 0, sizeof(probe_sums), st));
		if (t->opts.key_width == 4)
			probe_lengths<uint32_t><<<grid, 256, 0, st>>>(t->ix, d.as<probe_sums>());
		else
			probe_lengths<uint64_t><<<grid, 256, 0, st>>>(t->ix, d.as<probe_sums>());
		GLAUNCH(ctx, "probe_lengths");
		GCHECK(ctx, cudaMemcpyAsync(&h, d.p, sizeof(h), cudaMemcpyDeviceToHost, st));
		GCHECK(ctx, cudaStreamSynchronize(st));
		*mean = h.keys ? (double) h.sum / (double) h.keys : 0;
		*max = h.max;
		return GHT_OK;
	})
}

/* ---- table images (ght_image.c) ----------------------------------------- */

extern "C" ght_status
ght_gpu_image_arrays(ght_table *t, void *const dst[GHT_MEM_COUNT])
{
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		GTRY(gpu_sync(ctx));
		for (int i = 0; i < GHT_MEM_COUNT; i++)
			if (dst[i] != NULL && t->mem[i] != NULL)
				GTRY(gpu_download(ctx, dst[i], t->mem[i], t->mem_bytes[i]));
		return GHT_OK;
	})
}

/*
 * t->mem_bytes[] holds the sizes wanted; each allocation is adopted by the
 * table as soon as it exists, so a failure part way frees what was made.
 */
extern "C" ght_status
ght_gpu_attach_arrays(ght_table *t, const void *const src[GHT_MEM_COUNT])
{
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		for (int i = 0; i < GHT_MEM_COUNT; i++)
		{
			size_t		bytes = t->mem_bytes[i];
			dmem		m(ctx);

			t->mem_bytes[i] = 0;
			if (src[i] == NULL || bytes == 0)
				continue;
			GTRY(m.alloc(bytes));
			GCHECK(ctx, cudaMemcpyAsync(m.p, src[i], bytes, cudaMemcpyHostToDevice, gctx(ctx)->stream[0]));
			gpu_table_adopt(t, i, m);
		}
		GTRY(gpu_sync(ctx));
		return GHT_OK;
	})
}
