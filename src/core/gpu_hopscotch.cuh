/*
 * gpu_hopscotch.cuh - device-side access to hopscotch tables, shared by the
 * probes (gpu_probe.cu) and the updates (gpu_hopscotch.cu).  The protocol is
 * described in cpu_hopscotch.c, the CPU twin, and the layout in ght_layout.h.
 *
 * Tables change under running lookups, so everything here reads with
 * volatile loads, and __threadfence() orders the reads of the slots between
 * the two reads of a home's word that validate them.
 */
#ifndef GHT_GPU_HOPSCOTCH_CUH
#define GHT_GPU_HOPSCOTCH_CUH

#include "gpu_internal.cuh"

__device__ __forceinline__ bool
hop_rec_valid(uint64_t r)
{
	return r < GHT_HOP_BUSY;
}

template <typename KT>
__device__ __forceinline__ uint64_t
hop_home(const ght_index &ix, KT k)
{
	return ght_hop_home(ktraits<KT>::hash(k, ix.seed), ix.mask);
}

/*
 * The record of k (GHT_HOP_FREE when absent) and the version of hop[h] under
 * which that held: the slots named by the bitmap are read, and the word read
 * again; a changed word means a key of this home may have moved out of a slot
 * already read, so the lookup starts over.
 */
template <typename KT>
__device__ __forceinline__ uint64_t
hop_find_rec(const ght_index &ix, KT k, uint64_t h, uint64_t *wout)
{
	typedef typename ktraits<KT>::slot ST;
	const ST   *s = (const ST *) ix.slots;

	for (;;)
	{
		uint64_t	w = ld_volatile(&ix.hop[h]);
		uint32_t	bits = ght_hop_bits(w);
		uint64_t	found = GHT_HOP_FREE;

		__threadfence();
		while (bits)
		{
			int			i = __ffs(bits) - 1;
			uint64_t	at = (h + (uint64_t) i) & ix.mask;
			uint64_t	r = ld_volatile(&s[at].ref);

			bits &= bits - 1;
			if (hop_rec_valid(r) && ld_volatile(&s[at].key) == k)
			{
				found = r;
				break;
			}
		}
		__threadfence();
		if (ld_volatile(&ix.hop[h]) == w)
		{
			*wout = w;
			return found;
		}
	}
}

/* Lookup: true and the key's list head when it has rows. */
template <typename KT>
__device__ __forceinline__ bool
hop_find(const ght_index &ix, KT k, uint64_t *ref)
{
	uint64_t	w,
				rec = hop_find_rec<KT>(ix, k, hop_home<KT>(ix, k), &w);

	if (rec == GHT_HOP_FREE)
		return false;
	*ref = ld_volatile(&ix.heads[rec]);
	__threadfence();			/* see the node's contents once we see its index */
	return *ref != GHT_NIL;
}

#endif
