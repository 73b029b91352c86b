/*
 * gpu_hopscotch.cu - lock-free hopscotch tables on the GPU (GHT_HOPSCOTCH):
 * batched inserts, deletes and lookups that may all run at once, growth by
 * rehashing, and the whole-table passes (export, probe lengths).
 *
 * One thread per operation, with the protocol of the CPU twin
 * (cpu_hopscotch.c, which explains it) step for step.  Rows that find no
 * room (no free slot near their home, or none that keys can be moved out of
 * into their neighbourhood) are set aside by the kernel; the host then
 * doubles the table and adds them, so a batch never fails for lack of room.
 */
#include "gpu_hopscotch.cuh"

#include <cub/device/device_scan.cuh>

struct hop_counters
{
	unsigned long long new_slots;	/* slots published */
	unsigned long long keys_born;	/* heads that went from NIL to a node */
	unsigned long long keys_gone;	/* heads swapped for NIL */
	unsigned long long removed;		/* nodes unlinked */
	unsigned long long failed;		/* rows set aside for a larger table */
};

/* ---- atomics on either slot width --------------------------------------- */

__device__ __forceinline__ uint32_t hcas(uint32_t *p, uint32_t e, uint32_t v) { return atomicCAS(p, e, v); }
__device__ __forceinline__ uint64_t hcas(uint64_t *p, uint64_t e, uint64_t v)
{
	return atomicCAS((unsigned long long *) p, (unsigned long long) e, (unsigned long long) v);
}
__device__ __forceinline__ void st_volatile(uint32_t *p, uint32_t v) { *(volatile uint32_t *) p = v; }
__device__ __forceinline__ void st_volatile(uint64_t *p, uint64_t v) { *(volatile uint64_t *) p = v; }

/* ---- the operations ------------------------------------------------------ */

__device__ __forceinline__ void
hop_push(const ght_index &ix, uint64_t rec, uint32_t node, hop_counters *c)
{
	uint32_t	head = ld_volatile(&ix.heads[rec]);

	for (;;)
	{
		uint32_t	old;

		ix.next[node] = head;
		__threadfence();		/* the node is complete before anyone can reach it */
		old = atomicCAS(&ix.heads[rec], head, node);
		if (old == head)
			break;
		head = old;
	}
	if (head == GHT_NIL)
		atomicAdd(&c->keys_born, 1ull);
}

template <typename KT>
__device__ __forceinline__ bool
hop_claim_free(const ght_index &ix, uint64_t h, uint64_t *f)
{
	typedef typename ktraits<KT>::slot ST;
	ST		   *s = (ST *) ix.slots;
	uint64_t	lim = ix.nslots < GHT_HOP_MAX_SEARCH ? ix.nslots : GHT_HOP_MAX_SEARCH;

	for (uint64_t d = 0; d < lim; d++)
	{
		uint64_t	at = (h + d) & ix.mask;

		if (ld_volatile(&s[at].ref) == GHT_HOP_FREE &&
			hcas(&s[at].ref, (decltype(s[at].ref)) GHT_HOP_FREE, (decltype(s[at].ref)) GHT_HOP_BUSY) == GHT_HOP_FREE)
		{
			*f = at;
			return true;
		}
	}
	return false;
}

/* Bring the claimed slot *f one hop closer (see cpu_hopscotch.c: displace). */
template <typename KT>
__device__ bool
hop_displace(const ght_index &ix, uint64_t *f)
{
	typedef typename ktraits<KT>::slot ST;
	ST		   *s = (ST *) ix.slots;

	for (uint32_t d = GHT_HOP_H - 1; d >= 1; d--)
	{
		uint64_t	h2 = (*f - d) & ix.mask;

		for (;;)
		{
			unsigned long long w = ld_volatile(&ix.hop[h2]);
			uint32_t	bits = ght_hop_bits(w);
			uint32_t	below = bits & ((1u << d) - 1);

			if (below == 0)
				break;
			__threadfence();
			int			i = __ffs(below) - 1;
			uint64_t	at = (h2 + (uint64_t) i) & ix.mask;
			uint64_t	r = ld_volatile(&s[at].ref);

			if (!hop_rec_valid(r))
				continue;		/* at changed under w: read w again */
			st_volatile(&s[*f].key, ld_volatile(&s[at].key));
			__threadfence();
			st_volatile(&s[*f].ref, (decltype(s[at].ref)) r);
			__threadfence();
			if (atomicCAS((unsigned long long *) &ix.hop[h2], w,
						  ght_hop_next(w, (bits | (1u << d)) & ~(1u << i))) == w)
			{
				st_volatile(&s[at].ref, (decltype(s[at].ref)) GHT_HOP_BUSY);
				*f = at;
				return true;
			}
			st_volatile(&s[*f].ref, (decltype(s[at].ref)) GHT_HOP_BUSY);	/* h2 changed: retry */
		}
	}
	return false;
}

/*
 * No room for k near its home: but when many threads insert one new key at
 * once, each claims a slot of its own until one of them publishes the key,
 * and the claims may have used up the room; so look once more before the
 * row is set aside for a larger table.
 */
template <typename KT>
__device__ bool
hop_add_late(const ght_index &ix, KT k, uint64_t h, uint32_t node, hop_counters *c)
{
	uint64_t	w,
				rec = hop_find_rec<KT>(ix, k, h, &w);

	if (rec == GHT_HOP_FREE)
		return false;
	hop_push(ix, rec, node, c);
	return true;
}

/* Insert row `node` (payload written) under k; false when it found no room. */
template <typename KT>
__device__ bool
hop_insert_one(const ght_index &ix, KT k, uint32_t node, hop_counters *c)
{
	typedef typename ktraits<KT>::slot ST;
	ST		   *s = (ST *) ix.slots;
	uint64_t	h = hop_home<KT>(ix, k),
				w,
				f,
				rec = hop_find_rec<KT>(ix, k, h, &w);

	if (rec != GHT_HOP_FREE)
	{
		hop_push(ix, rec, node, c);
		return true;
	}
	if (!hop_claim_free<KT>(ix, h, &f))
		return hop_add_late<KT>(ix, k, h, node, c);
	while (((f - h) & ix.mask) >= GHT_HOP_H)
	{
		if (!hop_displace<KT>(ix, &f))
		{
			st_volatile(&s[f].ref, (decltype(s[f].ref)) GHT_HOP_FREE);
			return hop_add_late<KT>(ix, k, h, node, c);
		}
	}
	ix.next[node] = GHT_NIL;
	ix.heads[node] = node;
	st_volatile(&s[f].key, k);
	__threadfence();
	st_volatile(&s[f].ref, (decltype(s[f].ref)) node);
	__threadfence();			/* the slot is complete before its bit is set */
	for (;;)
	{
		uint32_t	bits = ght_hop_bits(w) | (1u << ((f - h) & ix.mask));
		unsigned long long old = atomicCAS((unsigned long long *) &ix.hop[h], w, ght_hop_next(w, bits));

		if (old == w)
		{
			atomicAdd(&c->new_slots, 1ull);
			atomicAdd(&c->keys_born, 1ull);
			return true;
		}
		/* h's keys changed: maybe another insert stored k meanwhile */
		rec = hop_find_rec<KT>(ix, k, h, &w);
		if (rec != GHT_HOP_FREE)
		{
			st_volatile(&s[f].ref, (decltype(s[f].ref)) GHT_HOP_FREE);
			hop_push(ix, rec, node, c);
			return true;
		}
	}
}

template <typename KT>
__device__ __forceinline__ void
hop_delete_one(const ght_index &ix, KT k, hop_counters *c)
{
	uint64_t	w,
				rec = hop_find_rec<KT>(ix, k, hop_home<KT>(ix, k), &w);

	if (rec == GHT_HOP_FREE)
		return;
	uint32_t	head = atomicExch(&ix.heads[rec], GHT_NIL);

	if (head == GHT_NIL)
		return;
	__threadfence();
	atomicAdd(&c->keys_gone, 1ull);
	atomicAdd(&c->removed, (unsigned long long) ref_rows(ix, head));
}

__device__ __forceinline__ uint64_t
hop_in_payload(const void *p, int width, uint64_t i, int rownum, uint64_t node)
{
	if (rownum)
		return node;
	return width == 4 ? (uint64_t) ((const uint32_t *) p)[i] : ((const uint64_t *) p)[i];
}

__device__ __forceinline__ void
hop_set_payload(const ght_index &ix, uint64_t node, uint64_t v)
{
	if (ix.payload_width == 4)
		((uint32_t *) ix.payload)[node] = (uint32_t) v;
	else
		((uint64_t *) ix.payload)[node] = v;
}

/* Insert k with payload v as `node`, or set it aside in the spill arrays. */
template <typename KT>
__device__ __forceinline__ void
hop_insert_or_spill(const ght_index &ix, KT k, uint64_t node, uint64_t v, hop_counters *c,
					KT *spill_keys, uint64_t *spill_vals)
{
	hop_set_payload(ix, node, v);
	if (!hop_insert_one<KT>(ix, k, (uint32_t) node, c))
	{
		unsigned long long at = atomicAdd(&c->failed, 1ull);

		spill_keys[at] = k;
		spill_vals[at] = v;
	}
}

template <typename KT>
__global__ void
hop_insert_kernel(ght_index ix, const KT *keys, const void *payloads, int in_width, int rownum,
				  uint64_t n, uint64_t node_base, hop_counters *c, KT *spill_keys, uint64_t *spill_vals)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		hop_insert_or_spill<KT>(ix, keys[i], node_base + i,
								hop_in_payload(payloads, in_width, i, rownum, node_base + i),
								c, spill_keys, spill_vals);
}

template <typename KT>
__global__ void
hop_delete_kernel(ght_index ix, const KT *keys, uint64_t n, hop_counters *c)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		hop_delete_one<KT>(ix, keys[i], c);
}

template <typename KT>
__global__ void
hop_mixed_kernel(ght_index ix, const uint8_t *ops, const KT *keys, const uint64_t *payloads,
				 uint64_t n, uint64_t node_base, uint8_t *found, hop_counters *c,
				 KT *spill_keys, uint64_t *spill_vals)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint64_t	ref;

		if (ops[i] == 0)
			hop_insert_or_spill<KT>(ix, keys[i], node_base + i, payloads[i], c, spill_keys, spill_vals);
		else if (ops[i] == 1)
			hop_delete_one<KT>(ix, keys[i], c);
		else
			found[i] = hop_find<KT>(ix, keys[i], &ref);
	}
}

template <typename KT>
__global__ void
hop_fill_kernel(typename ktraits<KT>::slot *s, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		s[i].key = ktraits<KT>::empty;
		s[i].ref = GHT_HOP_FREE;
	}
}

/* ---- whole-table passes -------------------------------------------------- */

template <typename KT>
__global__ void
hop_count_rows(ght_index ix, uint64_t *cnt)
{
	typedef typename ktraits<KT>::slot ST;
	const ST   *s = (const ST *) ix.slots;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < ix.nslots;
		 i += (uint64_t) gridDim.x * blockDim.x)
		cnt[i] = hop_rec_valid(s[i].ref) ? ref_rows(ix, ix.heads[s[i].ref]) : 0;
}

template <typename KT>
__global__ void
hop_write_rows(ght_index ix, const uint64_t *pos, KT *keys, uint64_t *payloads)
{
	typedef typename ktraits<KT>::slot ST;
	const ST   *s = (const ST *) ix.slots;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < ix.nslots;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		ST			sl = s[i];
		uint64_t	at = pos[i];

		if (!hop_rec_valid(sl.ref))
			continue;
		for (uint64_t nd = ix.heads[sl.ref]; nd != GHT_NIL; nd = ix.next[nd], at++)
		{
			keys[at] = sl.key;
			payloads[at] = payload_at(ix, nd);
		}
	}
}

struct hop_sums
{
	unsigned long long keys;
	unsigned long long sum;
	unsigned int max;
};

template <typename KT>
__global__ void
hop_lengths(ght_index ix, hop_sums *out)
{
	typedef typename ktraits<KT>::slot ST;
	const ST   *s = (const ST *) ix.slots;
	unsigned long long keys = 0,
				sum = 0;
	unsigned int mx = 0;

	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < ix.nslots;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		if (!hop_rec_valid(s[i].ref))
			continue;
		uint64_t	d = ((i - hop_home<KT>(ix, s[i].key)) & ix.mask) + 1;

		keys++;
		sum += d;
		mx = max(mx, (unsigned int) d);
	}
	atomicAdd(&out->keys, keys);
	atomicAdd(&out->sum, sum);
	atomicMax(&out->max, mx);
}

template <typename KT>
static ght_status
hop_export_t(ght_table *t, dmem &keys, dmem &payloads, uint64_t *n_out)
{
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	uint64_t	ns = t->ix.nslots;
	dmem		cnt(ctx),
				pos(ctx);
	uint64_t	last_pos = 0,
				last_cnt = 0;

	GTRY(cnt.alloc(ns * sizeof(uint64_t)));
	GTRY(pos.alloc(ns * sizeof(uint64_t)));
	hop_count_rows<KT><<<grid_for(ns, 256), 256, 0, st>>>(t->ix, cnt.as<uint64_t>());
	GLAUNCH(ctx, "hop_count_rows");
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
	hop_write_rows<KT><<<grid_for(ns, 256), 256, 0, st>>>(t->ix, pos.as<uint64_t>(), keys.as<KT>(),
														  payloads.as<uint64_t>());
	GLAUNCH(ctx, "hop_write_rows");
	GCHECK(ctx, cudaStreamSynchronize(st));
	return GHT_OK;
}

ght_status
gpu_hop_export_device(ght_table *t, dmem &keys, dmem &payloads, uint64_t *n_out)
{
	if (t->opts.key_width == 4)
		return hop_export_t<uint32_t>(t, keys, payloads, n_out);
	return hop_export_t<uint64_t>(t, keys, payloads, n_out);
}

ght_status
gpu_hop_probe_stats(ght_table *t, double *mean, uint32_t *max)
{
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	dmem		d(ctx);
	hop_sums	h;
	unsigned	grid = grid_for(t->ix.nslots, 256);

	if (grid > 4096)
		grid = 4096;
	GTRY(d.alloc(sizeof(hop_sums)));
	GCHECK(ctx, cudaMemsetAsync(d.p, 0, sizeof(hop_sums), st));
	if (t->opts.key_width == 4)
		hop_lengths<uint32_t><<<grid, 256, 0, st>>>(t->ix, d.as<hop_sums>());
	else
		hop_lengths<uint64_t><<<grid, 256, 0, st>>>(t->ix, d.as<hop_sums>());
	GLAUNCH(ctx, "hop_lengths");
	GCHECK(ctx, cudaMemcpyAsync(&h, d.p, sizeof(h), cudaMemcpyDeviceToHost, st));
	GCHECK(ctx, cudaStreamSynchronize(st));
	*mean = h.keys ? (double) h.sum / (double) h.keys : 0;
	*max = h.max;
	return GHT_OK;
}

/* ---- tables -------------------------------------------------------------- */

/* An empty table for `keys` keys (at least min_slots slots) and `rows` rows. */
static ght_status
hop_init(ght_table *t, uint64_t keys, uint64_t rows, uint64_t min_slots)
{
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	uint64_t	cap = ght_linear_capacity(keys, t->opts.load_factor);
	dmem		slots(ctx),
				hop(ctx),
				payload(ctx),
				next(ctx),
				heads(ctx);

	if (cap == 0 || min_slots > ((uint64_t) 1 << 32))
		return ght_fail(ctx, GHT_ERR_TOO_LARGE, "%llu keys at load %.2f need more than 2^32 slots",
						(unsigned long long) keys, t->opts.load_factor);
	while (cap < GHT_HOP_MIN_SLOTS || cap < min_slots)
		cap *= 2;
	if (rows < 1024)
		rows = 1024;
	if (rows > GHT_MAX_ROWS)
		rows = GHT_MAX_ROWS;
	GTRY(slots.alloc((cap + 1) * (size_t) ght_slot_bytes(t->opts.key_width)));
	GTRY(hop.alloc(cap * sizeof(uint64_t)));
	GTRY(payload.alloc(rows * (size_t) t->opts.payload_width));
	GTRY(next.alloc(rows * sizeof(uint32_t)));
	GTRY(heads.alloc(rows * sizeof(uint32_t)));
	if (t->opts.key_width == 4)
		hop_fill_kernel<uint32_t><<<grid_for(cap + 1, 256), 256, 0, st>>>(slots.as<ght_slot32>(), cap + 1);
	else
		hop_fill_kernel<uint64_t><<<grid_for(cap + 1, 256), 256, 0, st>>>(slots.as<ght_slot64>(), cap + 1);
	GLAUNCH(ctx, "hop_fill_kernel");
	GCHECK(ctx, cudaMemsetAsync(hop.p, 0, cap * sizeof(uint64_t), st));
	t->ix.mode = GHT_MODE_LIST;
	t->ix.slots = slots.p;
	t->ix.nslots = cap;
	t->ix.mask = cap - 1;
	t->ix.hop = hop.as<uint64_t>();
	t->ix.payload = payload.p;
	t->ix.next = next.as<uint32_t>();
	t->ix.heads = heads.as<uint32_t>();
	t->ix.buckets = nullptr;
	t->ix.offsets = nullptr;
	gpu_table_adopt(t, GHT_MEM_SLOTS, slots);
	gpu_table_adopt(t, GHT_MEM_HOP, hop);
	gpu_table_adopt(t, GHT_MEM_PAYLOAD, payload);
	gpu_table_adopt(t, GHT_MEM_NEXT, next);
	gpu_table_adopt(t, GHT_MEM_HEADS, heads);
	t->pool_cap = rows;
	t->pool_used = t->rows = t->distinct = t->used_slots = 0;
	return GHT_OK;
}

/* The spill arrays of a batch of n rows and its counters, zeroed. */
struct hop_batch
{
	dmem		cnt;
	dmem		spill_keys;
	dmem		spill_vals;
	hop_batch(ght_ctx *ctx) : cnt(ctx), spill_keys(ctx), spill_vals(ctx) {}

	ght_status	init(ght_ctx *ctx, uint64_t n, int kw)
	{
		GTRY(cnt.alloc(sizeof(hop_counters)));
		GTRY(spill_keys.alloc((n ? n : 1) * (size_t) kw));
		GTRY(spill_vals.alloc((n ? n : 1) * sizeof(uint64_t)));
		GCHECK(ctx, cudaMemsetAsync(cnt.p, 0, sizeof(hop_counters), gctx(ctx)->stream[0]));
		return GHT_OK;
	}
};

static ght_status hop_add(ght_table *t, const void *dkeys, const void *dpay, int in_width, int rownum,
						  uint64_t n, int depth);

/* Rehash into a fresh table for the live rows plus `extra`; twice the slots
 * when `grow` (a neighbourhood was full). */
static ght_status
hop_rehash(ght_table *t, uint64_t extra, int grow, int depth)
{
	ght_ctx    *ctx = t->ctx;
	dmem		keys(ctx),
				pays(ctx);
	uint64_t	n = 0;
	ght_table	fresh;
	ght_status	s;
	uint32_t	attempts = t->build_attempts;
	double		ms = t->build_ms;

	if (depth > GHT_HOPSCOTCH_GROW_TRIES)
		return ght_fail(ctx, GHT_ERR_BUILD_FAILED, "hopscotch table still full after %d doublings",
						GHT_HOPSCOTCH_GROW_TRIES);
	GTRY(gpu_hop_export_device(t, keys, pays, &n));
	memset(&fresh, 0, sizeof(fresh));
	fresh.ctx = ctx;
	fresh.opts = t->opts;
	fresh.ix = t->ix;
	s = hop_init(&fresh, t->distinct + extra, n + extra + (n + extra) / 2, grow ? t->ix.nslots * 2 : 0);
	if (s == GHT_OK && n > 0)
		s = hop_add(&fresh, keys.p, pays.p, 8, 0, n, depth + 1);
	if (s != GHT_OK)
	{
		ght_gpu_free(&fresh);
		return s;
	}
	ght_gpu_free(t);
	*t = fresh;
	t->build_attempts = attempts + 1;
	t->build_ms = ms;
	return GHT_OK;
}

/* Apply a finished batch's counters; add its set-aside rows to a doubled table. */
static ght_status
hop_finish(ght_table *t, hop_batch &b, uint64_t inserted, uint64_t *removed, int depth)
{
	ght_ctx    *ctx = t->ctx;
	hop_counters c;

	GCHECK(ctx, cudaMemcpy(&c, b.cnt.p, sizeof(c), cudaMemcpyDeviceToHost));
	t->used_slots += c.new_slots;
	t->distinct += c.keys_born;
	t->distinct -= c.keys_gone;
	t->rows += inserted - c.failed;
	t->rows -= c.removed;
	if (removed)
		*removed = c.removed;
	if (c.failed == 0)
		return GHT_OK;
	GTRY(hop_rehash(t, c.failed, 1, depth));
	return hop_add(t, b.spill_keys.p, b.spill_vals.p, 8, 0, c.failed, depth + 1);
}

/* Insert n device rows (payloads in_width bytes wide, or row numbers). */
static ght_status
hop_add(ght_table *t, const void *dkeys, const void *dpay, int in_width, int rownum, uint64_t n,
		int depth)
{
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	hop_batch	b(ctx);

	/* a batch is one kernel: stop before it (not in the regrowth after it,
	 * which would lose the rows it set aside) */
	if (depth == 0 && ght_interrupted(ctx))
		return GHT_ERR_INTERRUPTED;
	GTRY(b.init(ctx, n, t->opts.key_width));
	if (t->opts.key_width == 4)
		hop_insert_kernel<uint32_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, (const uint32_t *) dkeys, dpay, in_width,
																	  rownum, n, t->pool_used, b.cnt.as<hop_counters>(),
																	  b.spill_keys.as<uint32_t>(), b.spill_vals.as<uint64_t>());
	else
		hop_insert_kernel<uint64_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, (const uint64_t *) dkeys, dpay, in_width,
																	  rownum, n, t->pool_used, b.cnt.as<hop_counters>(),
																	  b.spill_keys.as<uint64_t>(), b.spill_vals.as<uint64_t>());
	GLAUNCH(ctx, "hop_insert_kernel");
	GCHECK(ctx, cudaStreamSynchronize(st));
	t->pool_used += n;
	return hop_finish(t, b, n, NULL, depth);
}

ght_status
gpu_hop_build(ght_table *t, const void *dkeys, const void *dpayloads, int rownum, uint64_t n)
{
	GTRY(hop_init(t, n, n, 0));
	return hop_add(t, dkeys, dpayloads, t->opts.payload_width, rownum, n, 0);
}

static ght_status
hop_make_room(ght_table *t, uint64_t n)
{
	if ((double) (t->used_slots + n) > (double) t->ix.nslots * GHT_HOPSCOTCH_MAX_LOAD ||
		t->pool_used + n > t->pool_cap)
		return hop_rehash(t, n, 0, 0);
	return GHT_OK;
}

ght_status
gpu_hop_insert(ght_table *t, const void *keys, const void *payloads, uint64_t n)
{
	ght_ctx    *ctx = t->ctx;
	dmem		dk(ctx),
				dp(ctx);

	GTRY(hop_make_room(t, n));
	GTRY(gpu_upload(ctx, dk, keys, n * (size_t) t->opts.key_width, 0));
	GTRY(gpu_upload(ctx, dp, payloads, n * (size_t) t->opts.payload_width, 0));
	return hop_add(t, dk.p, dp.p, t->opts.payload_width, 0, n, 0);
}

ght_status
gpu_hop_delete(ght_table *t, const void *keys, uint64_t n, uint64_t *removed, int on_device)
{
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	dmem		dk(ctx);
	hop_batch	b(ctx);

	GTRY(gpu_upload(ctx, dk, keys, n * (size_t) t->opts.key_width, on_device));
	GTRY(b.init(ctx, 0, t->opts.key_width));
	if (t->opts.key_width == 4)
		hop_delete_kernel<uint32_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, dk.as<uint32_t>(), n,
																	  b.cnt.as<hop_counters>());
	else
		hop_delete_kernel<uint64_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, dk.as<uint64_t>(), n,
																	  b.cnt.as<hop_counters>());
	GLAUNCH(ctx, "hop_delete_kernel");
	GCHECK(ctx, cudaStreamSynchronize(st));
	return hop_finish(t, b, 0, removed, 0);
}

ght_status
gpu_hop_mixed_batch(ght_table *t, const uint8_t *ops, const void *keys,
					const uint64_t *payloads, uint64_t n, uint8_t *found)
{
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	dmem		dops(ctx),
				dk(ctx),
				dp(ctx),
				df(ctx);
	hop_batch	b(ctx);
	uint64_t	inserted = 0;

	for (uint64_t i = 0; i < n; i++)
		inserted += ops[i] == 0;
	GTRY(hop_make_room(t, n));
	GTRY(gpu_upload(ctx, dops, ops, n, 0));
	GTRY(gpu_upload(ctx, dk, keys, n * (size_t) t->opts.key_width, 0));
	GTRY(gpu_upload(ctx, dp, payloads, n * sizeof(uint64_t), 0));
	GTRY(df.alloc(n));
	GTRY(b.init(ctx, n, t->opts.key_width));
	GCHECK(ctx, cudaMemsetAsync(df.p, 0, n, st));
	if (t->opts.key_width == 4)
		hop_mixed_kernel<uint32_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, dops.as<uint8_t>(), dk.as<uint32_t>(),
																	 dp.as<uint64_t>(), n, t->pool_used, df.as<uint8_t>(),
																	 b.cnt.as<hop_counters>(), b.spill_keys.as<uint32_t>(),
																	 b.spill_vals.as<uint64_t>());
	else
		hop_mixed_kernel<uint64_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, dops.as<uint8_t>(), dk.as<uint64_t>(),
																	 dp.as<uint64_t>(), n, t->pool_used, df.as<uint8_t>(),
																	 b.cnt.as<hop_counters>(), b.spill_keys.as<uint64_t>(),
																	 b.spill_vals.as<uint64_t>());
	GLAUNCH(ctx, "hop_mixed_kernel");
	GCHECK(ctx, cudaMemcpyAsync(found, df.p, n, cudaMemcpyDeviceToHost, st));
	GCHECK(ctx, cudaStreamSynchronize(st));
	t->pool_used += n;
	return hop_finish(t, b, inserted, NULL, 0);
}
