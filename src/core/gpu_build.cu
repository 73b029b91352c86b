/*
 * gpu_build.cu - building a static table on the GPU: upload, the distinct
 * keys with their payloads laid out contiguously (CUB radix sort of (key,
 * row), run-length encode, scan), then the cuckoo or linear index.
 *
 * The sort is stable, so each key's payloads stay in input order and the
 * distinct keys come out in ascending bit order: the same layout the CPU
 * half builds, hence the same answers in the same order.
 */
#include "gpu_internal.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>

/* CUB's run-length encoding counts items in an int. */
#define GPU_MAX_BUILD_ROWS ((uint64_t) INT32_MAX)

__global__ void
iota_u32(uint32_t *a, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		a[i] = (uint32_t) i;
}

__global__ void
iota_u64(uint64_t *a, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		a[i] = i;
}

__device__ __forceinline__ uint64_t
input_payload(const void *p, int width, const uint32_t *rows, uint64_t i)
{
	uint64_t	r = rows ? rows[i] : i;

	if (p == nullptr)
		return r;				/* row-number payloads */
	return width == 4 ? (uint64_t) ((const uint32_t *) p)[r] : ((const uint64_t *) p)[r];
}

/* refs[i] = payload of sorted row i (inline payloads). */
__global__ void
gather_refs(uint64_t *refs, const void *payloads, int width, const uint32_t *rows, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		refs[i] = input_payload(payloads, width, rows, i);
}

/* out[i] = payload of sorted row i, at the table's payload width. */
__global__ void
gather_payloads(void *out, int width, const void *payloads, const uint32_t *rows, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint64_t	v = input_payload(payloads, width, rows, i);

		if (width == 4)
			((uint32_t *) out)[i] = (uint32_t) v;
		else
			((uint64_t *) out)[i] = v;
	}
}

__global__ void
set_last_offset(uint32_t *offsets, uint64_t d, uint64_t n)
{
	offsets[d] = (uint32_t) n;
}

static int
payload_fits_inline(const ght_table *t)
{
	return t->opts.key_width == 8 || t->opts.payload_width == 4 ||
		(t->opts.flags & GHT_BUILD_ROWNUM_PAYLOAD);
}

template <typename KT>
static ght_status
build_static(ght_table *t, dmem &dk, const void *dpay, uint64_t n)
{
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	ght_index  *ix = &t->ix;
	int			pw = t->opts.payload_width;
	unsigned	grid = grid_for(n, 256);
	dmem		rows(ctx),
				ks(ctx),
				rs(ctx),
				counts(ctx),
				nruns(ctx),
				refs(ctx),
				offsets(ctx),
				payload(ctx);
	const KT   *ukeys;
	const uint32_t *sorted_rows = nullptr;
	uint64_t	d;

	gpu_trace(ctx, NULL);
	if (t->opts.flags & GHT_BUILD_ASSUME_UNIQUE)
	{
		ukeys = dk.as<KT>();
		d = n;
	}
	else
	{
		int			runs = 0;

		/* stable sort of (key, row) by the key's bits */
		GTRY(rows.alloc(n * sizeof(uint32_t)));
		GTRY(ks.alloc(n * sizeof(KT)));
		GTRY(rs.alloc(n * sizeof(uint32_t)));
		iota_u32<<<grid, 256, 0, st>>>(rows.as<uint32_t>(), n);
		GLAUNCH(ctx, "iota");
		CUB_RUN(ctx, st, cub::DeviceRadixSort::SortPairs(d_temp_storage, temp_storage_bytes,
														 dk.as<KT>(), ks.as<KT>(), rows.as<uint32_t>(),
														 rs.as<uint32_t>(), (int64_t) n, 0,
														 (int) sizeof(KT) * 8, st));
		dk.reset();
		rows.reset();
		gpu_trace(ctx, "sort");
		if (ght_interrupted(ctx))
			return GHT_ERR_INTERRUPTED;
		/* distinct keys and their row counts; ks is reused for the keys */
		GTRY(counts.alloc(n * sizeof(uint32_t)));
		GTRY(nruns.alloc(sizeof(int)));
		GTRY(dk.alloc(n * sizeof(KT)));
		CUB_RUN(ctx, st, cub::DeviceRunLengthEncode::Encode(d_temp_storage, temp_storage_bytes,
															ks.as<KT>(), dk.as<KT>(), counts.as<uint32_t>(),
															nruns.as<int>(), (int) n, st));
		GCHECK(ctx, cudaMemcpy(&runs, nruns.p, sizeof(int), cudaMemcpyDeviceToHost));
		ks.reset();
		ukeys = dk.as<KT>();
		sorted_rows = rs.as<uint32_t>();
		d = (uint64_t) runs;
	}

	GTRY(refs.alloc((d ? d : 1) * sizeof(uint64_t)));
	if (d == n && payload_fits_inline(t))
	{
		ix->mode = GHT_MODE_INLINE;
		gather_refs<<<grid, 256, 0, st>>>(refs.as<uint64_t>(), dpay, pw, sorted_rows, n);
		GLAUNCH(ctx, "gather_refs");
	}
	else
	{
		ix->mode = GHT_MODE_RANGE;
		GTRY(offsets.alloc((d + 1) * sizeof(uint32_t)));
		GTRY(payload.alloc((n ? n : 1) * (size_t) pw));
		if (counts.p)
			CUB_RUN(ctx, st, cub::DeviceScan::ExclusiveSum(d_temp_storage, temp_storage_bytes,
														   counts.as<uint32_t>(), offsets.as<uint32_t>(),
														   (int64_t) d, st));
		else
		{
			iota_u32<<<grid_for(d, 256), 256, 0, st>>>(offsets.as<uint32_t>(), d);
			GLAUNCH(ctx, "iota");
		}
		set_last_offset<<<1, 1, 0, st>>>(offsets.as<uint32_t>(), d, n);
		GLAUNCH(ctx, "set_last_offset");
		gather_payloads<<<grid, 256, 0, st>>>(payload.p, pw, dpay, sorted_rows, n);
		GLAUNCH(ctx, "gather_payloads");
		iota_u64<<<grid_for(d, 256), 256, 0, st>>>(refs.as<uint64_t>(), d);
		GLAUNCH(ctx, "iota");
	}
	GCHECK(ctx, cudaStreamSynchronize(st));
	counts.reset();
	rs.reset();
	gpu_trace(ctx, "dedupe+payloads");
	ix->offsets = offsets.as<uint32_t>();
	ix->payload = payload.p;
	gpu_table_adopt(t, GHT_MEM_OFFSETS, offsets);
	gpu_table_adopt(t, GHT_MEM_PAYLOAD, payload);
	t->rows = n;
	t->distinct = d;
	if (ght_interrupted(ctx))
		return GHT_ERR_INTERRUPTED;
	if (t->opts.method == GHT_CUCKOO)
		return gpu_cuckoo_build(t, ukeys, refs.as<uint64_t>(), d);
	return gpu_linear_build(t, ukeys, refs.as<uint64_t>(), d);
}

extern "C" ght_status
ght_gpu_build(ght_table *t, const void *keys, const void *payloads, uint64_t n, int on_device)
{
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		dmem		dk(ctx),
					dp(ctx);
		int			rownum = (t->opts.flags & GHT_BUILD_ROWNUM_PAYLOAD) != 0;

		if (n > GPU_MAX_BUILD_ROWS)
			return ght_fail(ctx, GHT_ERR_TOO_LARGE, "a GPU table holds at most %llu rows",
							(unsigned long long) GPU_MAX_BUILD_ROWS);
		GCHECK(ctx, cudaSetDevice(ctx->gpu_id));

		GTRY(gpu_upload(ctx, dk, keys, n * (size_t) t->opts.key_width, on_device));
		if (!rownum)
			GTRY(gpu_upload(ctx, dp, payloads, n * (size_t) t->opts.payload_width, on_device));
		if (t->opts.method == GHT_HOPSCOTCH)
			return gpu_hop_build(t, dk.p, dp.p, rownum, n);
		if (t->opts.flags & GHT_BUILD_MUTABLE)
			return gpu_list_build(t, dk.p, dp.p, rownum, n);
		if (t->opts.key_width == 4)
			return build_static<uint32_t>(t, dk, dp.p, n);
		return build_static<uint64_t>(t, dk, dp.p, n);
	})
}
