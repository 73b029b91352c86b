/*
 * gpu_mutable.cu - mutable linear-probing tables on the GPU: batched,
 * lock-free inserts, deletes and lookups that may all run at once.
 *
 * A slot holds a key and the head of that key's list of payload nodes.
 * Insert: find the key's slot or claim the first free one with one CAS on
 * the key, write the node (payload, link), fence, and push it with a CAS on
 * the head.  Delete: swap the head for NIL; the key stays as a tombstone that
 * later inserts of the same key reuse.  Lookup: find the slot, read the head.
 * Every intermediate state is safe for the others.  A table that would pass
 * GHT_LINEAR_MUTABLE_MAX_LOAD (or run out of nodes) is first rehashed into a
 * larger one, which also drops tombstones and dead nodes.
 */
#include "gpu_internal.cuh"

struct list_counters
{
	unsigned long long new_slots;	/* slots claimed */
	unsigned long long keys_born;	/* heads that went from NIL to a node */
	unsigned long long keys_gone;	/* heads swapped for NIL */
	unsigned long long removed;		/* nodes unlinked */
	unsigned int failed;		/* a probe sequence found no room */
};

__device__ __forceinline__ uint32_t cas_key(uint32_t *p, uint32_t e, uint32_t v) { return atomicCAS(p, e, v); }
__device__ __forceinline__ uint64_t cas_key(uint64_t *p, uint64_t e, uint64_t v)
{
	return atomicCAS((unsigned long long *) p, (unsigned long long) e, (unsigned long long) v);
}
__device__ __forceinline__ uint32_t exch_ref(uint32_t *p, uint32_t v) { return atomicExch(p, v); }
__device__ __forceinline__ uint64_t exch_ref(uint64_t *p, uint64_t v)
{
	return atomicExch((unsigned long long *) p, (unsigned long long) v);
}

/* The slot of k, claiming a free one if k is new. */
template <typename KT>
__device__ typename ktraits<KT>::slot *
list_slot_for_insert(const ght_index &ix, KT k, bool *is_new)
{
	typedef typename ktraits<KT>::slot ST;
	ST		   *s = (ST *) ix.slots;

	*is_new = false;
	if (k == ktraits<KT>::empty)
		return &s[ix.nslots];
	uint64_t	pos = ght_linear_start(ktraits<KT>::hash(k, ix.seed), ix.mask, ix.group);

	for (uint64_t step = 0; step <= ix.mask; step++)
	{
		ST		   *sl = &s[(pos + step) & ix.mask];
		KT			sk = ld_volatile(&sl->key);

		if (sk == ktraits<KT>::empty)
		{
			sk = cas_key(&sl->key, ktraits<KT>::empty, k);
			if (sk == ktraits<KT>::empty)
			{
				*is_new = true;
				return sl;
			}
		}
		if (sk == k)
			return sl;
	}
	return nullptr;
}

template <typename KT>
__device__ __forceinline__ void
list_push(const ght_index &ix, typename ktraits<KT>::slot *sl, uint32_t node, uint64_t payload,
		  list_counters *c)
{
	typedef decltype(sl->ref) RT;
	RT			head = ld_volatile(&sl->ref);

	if (ix.payload_width == 4)
		((uint32_t *) ix.payload)[node] = (uint32_t) payload;
	else
		((uint64_t *) ix.payload)[node] = payload;
	for (;;)
	{
		RT			old;

		ix.next[node] = (uint32_t) head;
		__threadfence();		/* the node is complete before anyone can reach it */
		old = cas_key(&sl->ref, head, (RT) node);
		if (old == head)
			break;
		head = old;
	}
	if (head == GHT_NIL)
		atomicAdd(&c->keys_born, 1ull);
}

__device__ __forceinline__ uint64_t
in_payload(const void *p, int width, uint64_t i, int rownum, uint64_t node)
{
	if (rownum)
		return node;
	return width == 4 ? (uint64_t) ((const uint32_t *) p)[i] : ((const uint64_t *) p)[i];
}

template <typename KT>
__device__ __forceinline__ void
list_insert_one(const ght_index &ix, KT k, uint32_t node, uint64_t payload, list_counters *c)
{
	bool		is_new;
	typename ktraits<KT>::slot *sl = list_slot_for_insert<KT>(ix, k, &is_new);

	if (sl == nullptr)
	{
		atomicAdd(&c->failed, 1u);
		return;
	}
	if (is_new)
		atomicAdd(&c->new_slots, 1ull);
	list_push<KT>(ix, sl, node, payload, c);
}

template <typename KT>
__device__ __forceinline__ void
list_delete_one(const ght_index &ix, KT k, list_counters *c)
{
	typename ktraits<KT>::slot *sl = list_find_slot<KT>(ix, k);

	if (sl == nullptr)
		return;
	uint64_t	head = exch_ref(&sl->ref, (decltype(sl->ref)) GHT_NIL);

	if (head == GHT_NIL)
		return;
	__threadfence();
	atomicAdd(&c->keys_gone, 1ull);
	atomicAdd(&c->removed, (unsigned long long) ref_rows(ix, head));
}

template <typename KT>
__global__ void
list_insert_kernel(ght_index ix, const KT *keys, const void *payloads, int in_width, int rownum,
				   uint64_t n, uint64_t node_base, list_counters *c)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		list_insert_one<KT>(ix, keys[i], (uint32_t) (node_base + i),
							in_payload(payloads, in_width, i, rownum, node_base + i), c);
}

template <typename KT>
__global__ void
list_delete_kernel(ght_index ix, const KT *keys, uint64_t n, list_counters *c)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
		list_delete_one<KT>(ix, keys[i], c);
}

template <typename KT>
__global__ void
list_mixed_kernel(ght_index ix, const uint8_t *ops, const KT *keys, const uint64_t *payloads,
				  uint64_t n, uint64_t node_base, uint8_t *found, list_counters *c)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n;
		 i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint64_t	ref;

		if (ops[i] == 0)
			list_insert_one<KT>(ix, keys[i], (uint32_t) (node_base + i), payloads[i], c);
		else if (ops[i] == 1)
			list_delete_one<KT>(ix, keys[i], c);
		else
			found[i] = list_find<KT>(ix, keys[i], &ref);
	}
}

/* Apply a finished batch's counters to the table. */
static ght_status
take_counters(ght_table *t, dmem &cd, uint64_t inserted, uint64_t *removed)
{
	list_counters c;

	GCHECK(t->ctx, cudaMemcpy(&c, cd.p, sizeof(c), cudaMemcpyDeviceToHost));
	if (c.failed)
		return ght_fail(t->ctx, GHT_ERR_INTERNAL, "%u inserts found no free slot", c.failed);
	t->used_slots += c.new_slots;
	t->distinct += c.keys_born;
	t->distinct -= c.keys_gone;
	t->rows += inserted;
	t->rows -= c.removed;
	if (removed)
		*removed = c.removed;
	return GHT_OK;
}

/* An empty mutable table with room for `keys` keys and `nodes` rows. */
static ght_status
list_init(ght_table *t, uint64_t keys, uint64_t nodes)
{
	ght_ctx    *ctx = t->ctx;
	dmem		slots(ctx),
				payload(ctx),
				next(ctx);

	if (nodes < 1024)
		nodes = 1024;
	if (nodes > GHT_MAX_ROWS)
		nodes = GHT_MAX_ROWS;
	GTRY(gpu_linear_alloc(t, slots, keys));
	GTRY(payload.alloc(nodes * (size_t) t->opts.payload_width));
	GTRY(next.alloc(nodes * sizeof(uint32_t)));
	t->ix.mode = GHT_MODE_LIST;
	t->ix.payload = payload.p;
	t->ix.next = next.as<uint32_t>();
	gpu_table_adopt(t, GHT_MEM_SLOTS, slots);
	gpu_table_adopt(t, GHT_MEM_PAYLOAD, payload);
	gpu_table_adopt(t, GHT_MEM_NEXT, next);
	t->pool_cap = nodes;
	t->pool_used = t->rows = t->distinct = t->used_slots = 0;
	return GHT_OK;
}

/* Insert n device rows (payloads at in_width bytes, or row numbers). */
static ght_status
list_add(ght_table *t, const void *dkeys, const void *dpay, int in_width, int rownum, uint64_t n)
{
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	dmem		cd(ctx);

	GTRY(cd.alloc(sizeof(list_counters)));
	GCHECK(ctx, cudaMemsetAsync(cd.p, 0, sizeof(list_counters), st));
	if (t->opts.key_width == 4)
		list_insert_kernel<uint32_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, (const uint32_t *) dkeys, dpay, in_width,
																	   rownum, n, t->pool_used, cd.as<list_counters>());
	else
		list_insert_kernel<uint64_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, (const uint64_t *) dkeys, dpay, in_width,
																	   rownum, n, t->pool_used, cd.as<list_counters>());
	GLAUNCH(ctx, "list_insert_kernel");
	GCHECK(ctx, cudaStreamSynchronize(st));
	t->pool_used += n;
	return take_counters(t, cd, n, NULL);
}

ght_status
gpu_list_build(ght_table *t, const void *dkeys, const void *dpayloads, int rownum, uint64_t n)
{
	GTRY(list_init(t, n, n));
	return list_add(t, dkeys, dpayloads, t->opts.payload_width, rownum, n);
}

/* Rehash into a table sized for the live rows plus `extra`: growth, and the
 * reclaiming of tombstones and dead nodes. */
static ght_status
list_rehash(ght_table *t, uint64_t extra)
{
	ght_ctx    *ctx = t->ctx;
	dmem		keys(ctx),
				pays(ctx);
	uint64_t	n = 0;
	ght_table	fresh;
	ght_status	s;
	uint32_t	attempts = t->build_attempts;
	double		ms = t->build_ms;

	GTRY(gpu_export_device(t, keys, pays, &n));
	memset(&fresh, 0, sizeof(fresh));
	fresh.ctx = ctx;
	fresh.opts = t->opts;
	fresh.ix = t->ix;
	s = list_init(&fresh, t->distinct + extra, n + extra + (n + extra) / 2);
	if (s == GHT_OK)
		s = list_add(&fresh, keys.p, pays.p, 8, 0, n);
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

static ght_status
make_room(ght_table *t, uint64_t n)
{
	if ((double) (t->used_slots + n) > (double) t->ix.nslots * GHT_LINEAR_MUTABLE_MAX_LOAD ||
		t->pool_used + n > t->pool_cap)
		return list_rehash(t, n);
	return GHT_OK;
}

extern "C" ght_status
ght_gpu_insert(ght_table *t, const void *keys, const void *payloads, uint64_t n)
{
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		dmem		dk(ctx),
					dp(ctx);

		if (t->opts.method == GHT_HOPSCOTCH)
			return gpu_hop_insert(t, keys, payloads, n);
		GTRY(make_room(t, n));
		GTRY(gpu_upload(ctx, dk, keys, n * (size_t) t->opts.key_width, 0));
		GTRY(gpu_upload(ctx, dp, payloads, n * (size_t) t->opts.payload_width, 0));
		return list_add(t, dk.p, dp.p, t->opts.payload_width, 0, n);
	})
}

/* Delete n keys already on the device (ght_gpu_delete, and the benchmark). */
ght_status
ght_gpu_delete_device(ght_table *t, const void *dkeys, uint64_t n, uint64_t *removed)
{
	ght_ctx    *ctx = t->ctx;
	cudaStream_t st = gctx(ctx)->stream[0];
	dmem		cd(ctx);

	if (t->opts.method == GHT_HOPSCOTCH)
		return gpu_hop_delete(t, dkeys, n, removed, 1);
	GTRY(cd.alloc(sizeof(list_counters)));
	GCHECK(ctx, cudaMemsetAsync(cd.p, 0, sizeof(list_counters), st));
	if (t->opts.key_width == 4)
		list_delete_kernel<uint32_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, (const uint32_t *) dkeys, n,
																	   cd.as<list_counters>());
	else
		list_delete_kernel<uint64_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, (const uint64_t *) dkeys, n,
																	   cd.as<list_counters>());
	GLAUNCH(ctx, "list_delete_kernel");
	GCHECK(ctx, cudaStreamSynchronize(st));
	return take_counters(t, cd, 0, removed);
}

extern "C" ght_status
ght_gpu_delete(ght_table *t, const void *keys, uint64_t n, uint64_t *removed)
{
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		dmem		dk(ctx);

		if (t->opts.method == GHT_HOPSCOTCH)
			return gpu_hop_delete(t, keys, n, removed, 0);
		GTRY(gpu_upload(ctx, dk, keys, n * (size_t) t->opts.key_width, 0));
		return ght_gpu_delete_device(t, dk.p, n, removed);
	})
}

extern "C" ght_status
ght_gpu_mixed_batch(ght_table *t, const uint8_t *ops, const void *keys,
					const uint64_t *payloads, uint64_t n, uint8_t *found)
{
	ght_ctx    *ctx = t->ctx;

	GPU_ENTRY(ctx, {
		cudaStream_t st = gctx(ctx)->stream[0];
		dmem		dops(ctx),
					dk(ctx),
					dp(ctx),
					df(ctx),
					cd(ctx);
		uint64_t	inserted = 0;

		if (t->opts.method == GHT_HOPSCOTCH)
			return gpu_hop_mixed_batch(t, ops, keys, payloads, n, found);
		for (uint64_t i = 0; i < n; i++)
			inserted += ops[i] == 0;
		GTRY(make_room(t, n));
		GTRY(gpu_upload(ctx, dops, ops, n, 0));
		GTRY(gpu_upload(ctx, dk, keys, n * (size_t) t->opts.key_width, 0));
		GTRY(gpu_upload(ctx, dp, payloads, n * sizeof(uint64_t), 0));
		GTRY(df.alloc(n));
		GTRY(cd.alloc(sizeof(list_counters)));
		GCHECK(ctx, cudaMemsetAsync(df.p, 0, n, st));
		GCHECK(ctx, cudaMemsetAsync(cd.p, 0, sizeof(list_counters), st));
		if (t->opts.key_width == 4)
			list_mixed_kernel<uint32_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, dops.as<uint8_t>(), dk.as<uint32_t>(),
																		  dp.as<uint64_t>(), n, t->pool_used,
																		  df.as<uint8_t>(), cd.as<list_counters>());
		else
			list_mixed_kernel<uint64_t><<<grid_for(n, 256), 256, 0, st>>>(t->ix, dops.as<uint8_t>(), dk.as<uint64_t>(),
																		  dp.as<uint64_t>(), n, t->pool_used,
																		  df.as<uint8_t>(), cd.as<list_counters>());
		GLAUNCH(ctx, "list_mixed_kernel");
		GCHECK(ctx, cudaMemcpyAsync(found, df.p, n, cudaMemcpyDeviceToHost, st));
		GCHECK(ctx, cudaStreamSynchronize(st));
		t->pool_used += n;
		return take_counters(t, cd, inserted, NULL);
	})
}
