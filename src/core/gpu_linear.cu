/*
 * gpu_linear.cu - building the linear-probing index of distinct keys on the
 * GPU: one thread per key walks its probe sequence from the home slot
 * (rounded down to the table's probe window) and claims the first free slot
 * with one compare-and-swap.  32-bit slots are claimed whole, key and ref in
 * one 64-bit CAS, so no reader can see a key without its ref.
 */
#include "gpu_internal.cuh"

__device__ __forceinline__ unsigned long long
pack32(uint32_t key, uint32_t ref)
{
	return (unsigned long long) key | ((unsigned long long) ref << 32);
}

template <typename KT>
__global__ void
fill_empty_slots(typename ktraits<KT>::slot *s, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		s[i].key = ktraits<KT>::empty;
		s[i].ref = GHT_NIL;
	}
}

/* Claim a slot for (k, r); returns 1 if the key was new. */
__device__ __forceinline__ int
claim(ght_slot32 *sl, uint32_t k, uint64_t r, bool *done)
{
	unsigned long long want = pack32(GHT_EMPTY32, GHT_NIL);
	unsigned long long old = atomicCAS((unsigned long long *) sl, want, pack32(k, (uint32_t) r));

	*done = old == want || (uint32_t) old == k;
	return old == want;
}

__device__ __forceinline__ int
claim(ght_slot64 *sl, uint64_t k, uint64_t r, bool *done)
{
	unsigned long long old = atomicCAS((unsigned long long *) &sl->key, (unsigned long long) GHT_EMPTY64,
									   (unsigned long long) k);

	if (old == GHT_EMPTY64)
		sl->ref = r;
	*done = old == GHT_EMPTY64 || old == k;
	return old == GHT_EMPTY64;
}

template <typename KT>
__global__ void
linear_insert_static(ght_index ix, const KT *keys, const uint64_t *refs, uint64_t d,
					 unsigned long long *repeated, uint32_t *special)
{
	typedef typename ktraits<KT>::slot ST;
	ST		   *s = (ST *) ix.slots;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < d;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		KT			k = keys[i];
		uint64_t	pos;

		if (k == ktraits<KT>::empty)
		{
			s[ix.nslots].key = k;
			s[ix.nslots].ref = refs[i];
			*special = 1;
			continue;
		}
		pos = ght_linear_start(ktraits<KT>::hash(k, ix.seed), ix.mask, ix.group);
		for (uint64_t step = 0; step <= ix.mask; step++)
		{
			bool		done;
			int			fresh = claim(&s[(pos + step) & ix.mask], k, refs[i], &done);

			if (done)
			{
				if (!fresh)
					atomicAdd(repeated, 1ull);	/* only under GHT_BUILD_ASSUME_UNIQUE */
				break;
			}
		}
	}
}

/* Allocate and clear nslots + 1 slots for `keys` keys at the table's load. */
ght_status
gpu_linear_alloc(ght_table *t, dmem &slots, uint64_t keys)
{
	ght_ctx    *ctx = t->ctx;
	uint64_t	cap = ght_linear_capacity(keys, t->opts.load_factor);
	size_t		sb = ght_slot_bytes(t->opts.key_width);
	cudaStream_t st = gctx(ctx)->stream[0];

	if (cap == 0)
		return ght_fail(ctx, GHT_ERR_TOO_LARGE, "%llu keys at load %.2f need more than 2^32 slots",
						(unsigned long long) keys, t->opts.load_factor);
	GTRY(slots.alloc((cap + 1) * sb));
	if (t->opts.key_width == 4)
		fill_empty_slots<uint32_t><<<grid_for(cap + 1, 256), 256, 0, st>>>(slots.as<ght_slot32>(), cap + 1);
	else
		fill_empty_slots<uint64_t><<<grid_for(cap + 1, 256), 256, 0, st>>>(slots.as<ght_slot64>(), cap + 1);
	GLAUNCH(ctx, "fill_empty_slots");
	t->ix.slots = slots.p;
	t->ix.nslots = cap;
	t->ix.mask = cap - 1;
	return GHT_OK;
}

ght_status
gpu_linear_build(ght_table *t, const void *ukeys, const uint64_t *refs, uint64_t d)
{
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	dmem		slots(ctx),
				counters(ctx);
	unsigned long long repeated = 0;
	uint32_t	special = 0;

	GTRY(gpu_linear_alloc(t, slots, d));
	GTRY(counters.alloc(16));
	GCHECK(ctx, cudaMemsetAsync(counters.p, 0, 16, st));
	if (t->opts.key_width == 4)
		linear_insert_static<uint32_t><<<grid_for(d, 256), 256, 0, st>>>(t->ix, (const uint32_t *) ukeys, refs, d,
																		 counters.as<unsigned long long>(),
																		 (uint32_t *) (counters.as<char>() + 8));
	else
		linear_insert_static<uint64_t><<<grid_for(d, 256), 256, 0, st>>>(t->ix, (const uint64_t *) ukeys, refs, d,
																		 counters.as<unsigned long long>(),
																		 (uint32_t *) (counters.as<char>() + 8));
	GLAUNCH(ctx, "linear_insert_static");
	GCHECK(ctx, cudaMemcpyAsync(&repeated, counters.p, 8, cudaMemcpyDeviceToHost, st));
	GCHECK(ctx, cudaMemcpyAsync(&special, counters.as<char>() + 8, 4, cudaMemcpyDeviceToHost, st));
	GCHECK(ctx, cudaStreamSynchronize(st));
	t->ix.special_present = special;
	t->used_slots = d - repeated - special;
	gpu_table_adopt(t, GHT_MEM_SLOTS, slots);
	gpu_trace(ctx, "linear insert");
	return GHT_OK;
}
