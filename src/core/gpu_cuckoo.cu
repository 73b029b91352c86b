/*
 * gpu_cuckoo.cu - building the hybrid cuckoo index (Alcantara et al.) on the
 * GPU from distinct keys.
 *
 * Phase 1 hashes every key to a bucket, counting with atomics (each key keeps
 * its rank in its bucket), finds the fullest bucket (a new first-level seed
 * if it has more than GHT_BUCKET_MAX keys), scans the counts into bucket
 * starts and scatters the keys into bucket order.  Each bucket gets groups
 * for its own count at the target load, so the table is as full as asked
 * whatever the spread of the first-level hash.
 *
 * Phase 2 runs one block per bucket.  Each thread holds one key; in rounds,
 * every unplaced key claims a free slot in its sub-table groups (a per-group
 * fill counter), then, if all three were full, swaps itself into a slot of
 * the first with an atomic exchange and carries on with the key it displaced,
 * from that key's choice after the one that led it to this group.
 * A bucket still unplaced after the round limit is retried with its next
 * seed; one that fails every seed makes the whole table roomier.
 */
#include "gpu_internal.cuh"

#include <cub/device/device_scan.cuh>

#define CUCKOO_BLOCK GHT_BUCKET_MAX
#define NO_ITEM 0xFFFFFFFFu

template <typename KT>
__global__ void
distribute(const KT *keys, uint64_t d, uint32_t seed, uint32_t nb, uint32_t *count,
		   uint32_t *bucket, uint32_t *rank)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < d;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		KT			k = keys[i];

		if (k == ktraits<KT>::empty)
		{
			bucket[i] = UINT32_MAX;
			continue;
		}
		uint32_t	b = ght_range(ktraits<KT>::hash(k, seed), nb);

		bucket[i] = b;
		rank[i] = atomicAdd(&count[b], 1u);
	}
}

__global__ void
max_count(const uint32_t *count, uint32_t nb, uint32_t *out)
{
	uint32_t	m = 0;

	for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x)
		m = max(m, count[b]);
	atomicMax(out, m);
}

/* Groups of each bucket (all three sub-tables) at the target load. */
__global__ void
bucket_groups(const uint32_t *count, uint32_t nb, uint32_t spg, double load, uint32_t *groups)
{
	for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x)
		groups[b] = GHT_SUBTABLES * ght_groups_for(count[b], spg, load);
}

__global__ void
make_descs(const uint32_t *first, const uint32_t *count, uint32_t nb, uint32_t spg, double load, uint64_t *descs)
{
	for (uint32_t b = blockIdx.x * blockDim.x + threadIdx.x; b < nb; b += gridDim.x * blockDim.x)
		descs[b] = ght_desc_make(first[b], ght_groups_for(count[b], spg, load), 0);
}

template <typename KT>
__global__ void
scatter_to_buckets(const KT *keys, const uint64_t *refs, uint64_t d, const uint32_t *bucket,
				   const uint32_t *rank, const uint32_t *start, KT *bkeys, uint64_t *brefs,
				   ght_index ix, uint32_t *special)
{
	typedef typename ktraits<KT>::slot ST;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < d;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint32_t	b = bucket[i];

		if (b == UINT32_MAX)
		{
			/* the key equal to the empty marker: the spare slot */
			ST		   *spare = (ST *) ix.slots + ix.nslots;

			spare->key = keys[i];
			spare->ref = refs[i];
			*special = 1;
			continue;
		}
		bkeys[start[b] + rank[i]] = keys[i];
		brefs[start[b] + rank[i]] = refs[i];
	}
}

template <typename ST>
__global__ void
fill_empty(ST *s, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		s[i].key = (decltype(s[i].key)) (sizeof(s[i].key) == 4 ? GHT_EMPTY32 : GHT_EMPTY64);
		s[i].ref = GHT_NIL;
	}
}

/*
 * One block per bucket (todo[] lists them, or all buckets when todo is NULL).
 * Shared memory: the bucket's keys and refs, the item in each slot, and a
 * fill counter per group.
 */
template <typename KT>
__global__ void __launch_bounds__(CUCKOO_BLOCK)
cuckoo_buckets(ght_index ix, const KT *bkeys, const uint64_t *brefs, const uint32_t *start,
			   const uint32_t *count, const uint32_t *todo, uint32_t seedno,
			   uint32_t *failed, uint32_t *nfailed, int max_rounds)
{
	typedef typename ktraits<KT>::slot ST;
	constexpr int SPG = ktraits<KT>::spg;
	extern __shared__ uint64_t smem[];
	uint32_t	b = todo ? todo[blockIdx.x] : blockIdx.x;
	uint32_t	c = count[b];
	uint32_t	base = start[b];
	uint64_t	desc = ix.buckets[b];
	uint32_t	G = ght_desc_groups(desc);
	uint32_t	nslots = GHT_SUBTABLES * G * SPG;
	uint64_t   *srefs = smem;
	KT		   *skeys = (KT *) (srefs + CUCKOO_BLOCK);
	uint32_t   *sitem = (uint32_t *) (skeys + CUCKOO_BLOCK);
	uint32_t   *fill = sitem + nslots;
	uint32_t	tid = threadIdx.x;
	uint32_t	seeds[GHT_SUBTABLES];

	for (uint32_t j = 0; j < GHT_SUBTABLES; j++)
		seeds[j] = ght_cuckoo_subseed(ix.seed, seedno, j);
	if (tid < c)
	{
		skeys[tid] = bkeys[base + tid];
		srefs[tid] = brefs[base + tid];
	}
	for (uint32_t s = tid; s < nslots; s += blockDim.x)
		sitem[s] = NO_ITEM;
	for (uint32_t g = tid; g < GHT_SUBTABLES * G; g += blockDim.x)
		fill[g] = 0;
	__syncthreads();

	uint32_t	cur = tid < c ? tid : NO_ITEM;
	uint32_t	entry = 0;

	for (int round = 0; round < max_rounds; round++)
	{
		if (!__syncthreads_or(cur != NO_ITEM))
			break;
		/* claim: a free slot in choice entry, entry+1 or entry+2 */
		if (cur != NO_ITEM)
		{
			KT			k = skeys[cur];

			for (uint32_t t = 0; t < GHT_SUBTABLES; t++)
			{
				uint32_t	j = (entry + t) % GHT_SUBTABLES;
				uint32_t	g = ght_cuckoo_local_group(G, ix.shared_groups, j, ktraits<KT>::hash(k, seeds[j]));
				uint32_t	pos = atomicAdd(&fill[g], 1u);

				if (pos < SPG)
				{
					sitem[g * SPG + pos] = cur;
					cur = NO_ITEM;
					break;
				}
			}
		}
		__syncthreads();
		/* evict: all three groups were full, so every slot of them is written */
		if (cur != NO_ITEM)
		{
			KT			k = skeys[cur];
			uint32_t	g = ght_cuckoo_local_group(G, ix.shared_groups, entry, ktraits<KT>::hash(k, seeds[entry]));
			uint32_t	v = ght_fmix32(round * CUCKOO_BLOCK + tid + seeds[0]) % SPG;

			cur = atomicExch(&sitem[g * SPG + v], cur);
			/* the evicted key goes on after the first of its choices that is g */
			k = skeys[cur];
			for (uint32_t i = 0; i < GHT_SUBTABLES; i++)
				if (ght_cuckoo_local_group(G, ix.shared_groups, i, ktraits<KT>::hash(k, seeds[i])) == g)
				{
					entry = (i + 1) % GHT_SUBTABLES;
					break;
				}
		}
	}
	if (__syncthreads_or(cur != NO_ITEM))
	{
		if (tid == 0)
			failed[atomicAdd(nfailed, 1u)] = b;
		return;
	}
	ST		   *out = (ST *) ix.slots + (uint64_t) ght_desc_first(desc) * SPG;

	for (uint32_t s = tid; s < nslots; s += blockDim.x)
	{
		uint32_t	it = sitem[s];
		ST			v;

		v.key = it == NO_ITEM ? ktraits<KT>::empty : skeys[it];
		v.ref = it == NO_ITEM ? GHT_NIL : srefs[it];
		out[s] = v;
	}
	if (tid == 0)
		ix.buckets[b] = ght_desc_make(ght_desc_first(desc), G, seedno);
}

static size_t
bucket_smem(int key_width, uint32_t max_groups)
{
	int			spg = GHT_GROUP_BYTES / ght_slot_bytes(key_width);

	return CUCKOO_BLOCK * (sizeof(uint64_t) + key_width)
		+ (size_t) GHT_SUBTABLES * max_groups * spg * sizeof(uint32_t)
		+ (size_t) GHT_SUBTABLES * max_groups * sizeof(uint32_t);
}

template <typename KT>
static ght_status
cuckoo_build(ght_table *t, const KT *ukeys, const uint64_t *refs, uint64_t d)
{
	typedef typename ktraits<KT>::slot ST;
	constexpr int SPG = ktraits<KT>::spg;
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	ght_index  *ix = &t->ix;
	double		load = t->opts.load_factor;
	uint32_t	avg = GHT_BUCKET_AVG;
	uint32_t	attempt_seed = 0;
	uint32_t	nb = 0,
				maxc = 0;
	dmem		count(ctx),
				bucket(ctx),
				rank(ctx),
				start(ctx),
				scratch(ctx),
				bkeys(ctx),
				brefs(ctx),
				groups(ctx),
				first(ctx),
				descs(ctx),
				slots(ctx),
				todo(ctx),
				failed(ctx),
				nfailed(ctx);
	unsigned	gridd = grid_for(d, 256);

	gpu_trace(ctx, NULL);
	GTRY(bucket.alloc((d ? d : 1) * sizeof(uint32_t)));
	GTRY(rank.alloc((d ? d : 1) * sizeof(uint32_t)));
	GTRY(scratch.alloc(2 * sizeof(uint32_t)));

	/* phase 1: distribute until no bucket overflows */
	for (int redist = 0;; redist++)
	{
		if (redist > 0 && redist % GHT_CUCKOO_REDISTRIBUTIONS == 0)
			avg = avg * 7 / 8;
		if (redist > 0)
			t->build_attempts++;
		if (avg < 32)
			return ght_fail(ctx, GHT_ERR_BUILD_FAILED,
							"could not spread %llu keys over buckets of at most %d (are keys repeated?)",
							(unsigned long long) d, GHT_BUCKET_MAX);
		if (ght_interrupted(ctx))
			return GHT_ERR_INTERRUPTED;
		ix->seed = ght_subseed(t->opts.seed, attempt_seed++);
		nb = ght_cuckoo_nbuckets(d, avg);
		GTRY(count.alloc((size_t) nb * sizeof(uint32_t)));
		GCHECK(ctx, cudaMemsetAsync(count.p, 0, (size_t) nb * sizeof(uint32_t), st));
		GCHECK(ctx, cudaMemsetAsync(scratch.p, 0, 2 * sizeof(uint32_t), st));
		distribute<KT><<<gridd, 256, 0, st>>>(ukeys, d, ix->seed, nb, count.as<uint32_t>(),
											  bucket.as<uint32_t>(), rank.as<uint32_t>());
		GLAUNCH(ctx, "distribute");
		max_count<<<grid_for(nb, 256) > 1024 ? 1024 : grid_for(nb, 256), 256, 0, st>>>(count.as<uint32_t>(), nb,
																					  scratch.as<uint32_t>());
		GLAUNCH(ctx, "max_count");
		GCHECK(ctx, cudaMemcpyAsync(&maxc, scratch.p, sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
		GCHECK(ctx, cudaStreamSynchronize(st));
		if (maxc <= GHT_BUCKET_MAX)
			break;
	}
	gpu_trace(ctx, "cuckoo distribute");

	/* bucket starts, and the keys scattered into bucket order */
	GTRY(start.alloc(((size_t) nb + 1) * sizeof(uint32_t)));
	CUB_RUN(ctx, st, cub::DeviceScan::ExclusiveSum(d_temp_storage, temp_storage_bytes, count.as<uint32_t>(),
												   start.as<uint32_t>(), (int64_t) nb, st));
	GTRY(bkeys.alloc((d ? d : 1) * sizeof(KT)));
	GTRY(brefs.alloc((d ? d : 1) * sizeof(uint64_t)));
	GTRY(groups.alloc((size_t) nb * sizeof(uint32_t)));
	GTRY(first.alloc((size_t) nb * sizeof(uint32_t)));
	GTRY(descs.alloc((size_t) nb * sizeof(uint64_t)));
	GTRY(todo.alloc((size_t) nb * sizeof(uint32_t)));
	GTRY(failed.alloc((size_t) nb * sizeof(uint32_t)));
	GTRY(nfailed.alloc(sizeof(uint32_t)));
	gpu_trace(ctx, "cuckoo scan+alloc");

	for (int grow = 0;; grow++)
	{
		uint32_t	last_first = 0,
					last_groups = 0,
					nf = 0;
		uint64_t	total;
		size_t		smem = bucket_smem(sizeof(KT), ght_groups_for(maxc, SPG, load));
		const uint32_t *list = nullptr;
		uint32_t	nlist = nb;

		bucket_groups<<<grid_for(nb, 256), 256, 0, st>>>(count.as<uint32_t>(), nb, SPG, load, groups.as<uint32_t>());
		GLAUNCH(ctx, "bucket_groups");
		CUB_RUN(ctx, st, cub::DeviceScan::ExclusiveSum(d_temp_storage, temp_storage_bytes, groups.as<uint32_t>(),
													   first.as<uint32_t>(), (int64_t) nb, st));
		GCHECK(ctx, cudaMemcpy(&last_first, first.as<uint32_t>() + nb - 1, sizeof(uint32_t), cudaMemcpyDeviceToHost));
		GCHECK(ctx, cudaMemcpy(&last_groups, groups.as<uint32_t>() + nb - 1, sizeof(uint32_t), cudaMemcpyDeviceToHost));
		total = (uint64_t) last_first + last_groups;
		if (total >= UINT32_MAX)
			return ght_fail(ctx, GHT_ERR_TOO_LARGE, "%llu keys need more than 2^32 groups", (unsigned long long) d);
		make_descs<<<grid_for(nb, 256), 256, 0, st>>>(first.as<uint32_t>(), count.as<uint32_t>(), nb, SPG, load,
													  descs.as<uint64_t>());
		GLAUNCH(ctx, "make_descs");

		ix->nslots = total * SPG;
		ix->nbuckets = nb;
		slots.reset();
		GTRY(slots.alloc((ix->nslots + 1) * sizeof(ST)));
		fill_empty<ST><<<grid_for(ix->nslots + 1, 256), 256, 0, st>>>(slots.as<ST>(), ix->nslots + 1);
		GLAUNCH(ctx, "fill_empty");
		ix->slots = slots.p;
		ix->buckets = descs.as<uint64_t>();

		GCHECK(ctx, cudaMemsetAsync(scratch.p, 0, sizeof(uint32_t), st));
		scatter_to_buckets<KT><<<gridd, 256, 0, st>>>(ukeys, refs, d, bucket.as<uint32_t>(), rank.as<uint32_t>(),
													  start.as<uint32_t>(), bkeys.as<KT>(), brefs.as<uint64_t>(),
													  *ix, scratch.as<uint32_t>());
		GLAUNCH(ctx, "scatter_to_buckets");
		GCHECK(ctx, cudaMemcpyAsync(&ix->special_present, scratch.p, sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
		gpu_trace(ctx, "cuckoo groups+scatter");

		if (smem > 48 * 1024)
		{
			if (smem > gctx(ctx)->max_shared)
				return ght_fail(ctx, GHT_ERR_BUILD_FAILED, "a bucket needs %zu bytes of shared memory", smem);
			GCHECK(ctx, cudaFuncSetAttribute(cuckoo_buckets<KT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
											 (int) smem));
		}
		/* phase 2: every bucket, then the failed ones with their next seed */
		for (uint32_t seedno = 0; seedno < GHT_CUCKOO_BUCKET_RESEEDS && nlist > 0; seedno++)
		{
			if (ght_interrupted(ctx))
				return GHT_ERR_INTERRUPTED;
			GCHECK(ctx, cudaMemsetAsync(nfailed.p, 0, sizeof(uint32_t), st));
			cuckoo_buckets<KT><<<nlist, CUCKOO_BLOCK, smem, st>>>(*ix, bkeys.as<KT>(), brefs.as<uint64_t>(),
																  start.as<uint32_t>(), count.as<uint32_t>(), list,
																  seedno, failed.as<uint32_t>(), nfailed.as<uint32_t>(),
																  GHT_CUCKOO_EVICTION_ROUNDS);
			GLAUNCH(ctx, "cuckoo_buckets");
			GCHECK(ctx, cudaMemcpyAsync(&nf, nfailed.p, sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
			GCHECK(ctx, cudaStreamSynchronize(st));
			t->build_attempts += nf;
			nlist = nf;
			if (nf > 0)
			{
				GCHECK(ctx, cudaMemcpyAsync(todo.p, failed.p, nf * sizeof(uint32_t), cudaMemcpyDeviceToDevice, st));
				list = todo.as<uint32_t>();
			}
		}
		gpu_trace(ctx, "cuckoo buckets");
		if (nlist == 0)
			break;
		if (grow >= 4)
			return ght_fail(ctx, GHT_ERR_BUILD_FAILED, "cuckoo build failed after %u attempts", t->build_attempts);
		load *= 0.9;
		t->build_attempts++;
	}
	gpu_table_adopt(t, GHT_MEM_SLOTS, slots);
	gpu_table_adopt(t, GHT_MEM_BUCKETS, descs);
	t->used_slots = d - ix->special_present;
	t->opts.load_factor = load;
	return GHT_OK;
}

ght_status
gpu_cuckoo_build(ght_table *t, const void *ukeys, const uint64_t *refs, uint64_t d)
{
	if (t->opts.key_width == 4)
		return cuckoo_build<uint32_t>(t, (const uint32_t *) ukeys, refs, d);
	return cuckoo_build<uint64_t>(t, (const uint64_t *) ukeys, refs, d);
}
