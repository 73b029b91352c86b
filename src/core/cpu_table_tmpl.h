/*
 * cpu_table_tmpl.h - the CPU tables for one key width.  Included twice by
 * cpu_table.c, with
 *   KT      key type (uint32_t or uint64_t)
 *   ST      slot type (ght_slot32 or ght_slot64)
 *   EMPTYK  the empty-slot key
 *   HASHK   seeded hash of a key (ght_hash_k32 / ght_hash_k64)
 *   SFX     suffix of the function names (_32 / _64)
 * The algorithms mirror gpu_*.cu; see ght_layout.h for the layout.
 * Mutable-table operations use atomics so that they stay correct if a caller
 * ever runs them from several threads.
 */

#define F(name) GHT_CAT(name, SFX)
#define SPG ((int) (GHT_GROUP_BYTES / sizeof(ST)))

static inline uint64_t
F(load_ref) (const ST *s)
{
	return __atomic_load_n(&s->ref, __ATOMIC_ACQUIRE);
}

/*
 * The slot holding key k, or NULL.  For the key equal to the empty marker it
 * is the spare slot, whether or not that key is stored.  For cuckoo, a group
 * with a free slot ends the search: groups only ever fill, and a key moves
 * past a sub-table only when its group there was full.
 */
static ST  *
F(find_slot) (const ght_index *ix, KT k)
{
	ST		   *s = (ST *) ix->slots;

	if (k == EMPTYK)
		return &s[ix->nslots];
	if (ix->method == GHT_CUCKOO)
	{
		uint64_t	desc = ix->buckets[ght_range(HASHK(k, ix->seed), ix->nbuckets)];
		uint32_t	seedno = ght_desc_seedno(desc);

		for (uint32_t j = 0; j < GHT_SUBTABLES; j++)
		{
			uint32_t	hj = HASHK(k, ght_cuckoo_subseed(ix->seed, seedno, j));
			ST		   *grp = s + ght_cuckoo_group(desc, ix->shared_groups, j, hj) * SPG;
			int			free_slot = 0;

			for (int i = 0; i < SPG; i++)
			{
				if (grp[i].key == k)
					return &grp[i];
				free_slot |= grp[i].key == EMPTYK;
			}
			if (free_slot)
				return NULL;
		}
		return NULL;
	}
	else
	{
		uint64_t	pos = ght_linear_start(HASHK(k, ix->seed), ix->mask, ix->group);

		for (uint64_t step = 0; step <= ix->mask; step++)
		{
			ST		   *sl = &s[(pos + step) & ix->mask];
			KT			sk = __atomic_load_n(&sl->key, __ATOMIC_ACQUIRE);

			if (sk == k)
				return sl;
			if (sk == EMPTYK)
				return NULL;
		}
		return NULL;
	}
}

/*
 * Start loading the first cache line a lookup of k will read.  A probe loop
 * calls it a few keys ahead, so that the misses of several lookups overlap
 * instead of each waiting its turn (bench/NOTES.md).  Always inlined: GCC
 * 12 takes an out-of-line function whose only effect is a prefetch for one
 * without effects, and deletes the calls.
 */
static inline __attribute__((always_inline)) void
F(prefetch) (const ght_index *ix, KT k)
{
	if (ix->method == GHT_CUCKOO)
		__builtin_prefetch(&ix->buckets[ght_range(HASHK(k, ix->seed), ix->nbuckets)]);
	else
		__builtin_prefetch((const ST *) ix->slots +
						   ght_linear_start(HASHK(k, ix->seed), ix->mask, ix->group));
}

/* Find key k: 1 and its slot's ref when it has rows, else 0. */
static int
F(find) (const ght_index *ix, KT k, uint64_t *ref)
{
	const ST   *sl = F(find_slot) (ix, k);
	uint64_t	r;

	if (sl == NULL)
		return 0;
	r = F(load_ref) (sl);
	if (ix->mode == GHT_MODE_LIST ? r == GHT_NIL : (k == EMPTYK && !ix->special_present))
		return 0;
	*ref = r;
	return 1;
}

static void
F(fill_empty) (ST *s, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
	{
		s[i].key = EMPTYK;
		s[i].ref = GHT_NIL;
	}
}

/*
 * The same over a whole table, looking for an interrupt between stretches:
 * first writes fault the pages in, so 10 M keys' slots take about 0.1 s.
 */
static ght_status
F(fill_empty_polled) (ght_ctx *ctx, ST *s, uint64_t n)
{
	for (uint64_t i = 0; i < n; i += CPU_CHECK_EVERY)
	{
		if (ght_interrupted(ctx))
			return GHT_ERR_INTERRUPTED;
		F(fill_empty) (s + i, n - i < CPU_CHECK_EVERY ? n - i : CPU_CHECK_EVERY);
	}
	return GHT_OK;
}

/* ---- cuckoo ------------------------------------------------------------- */

/*
 * Place (k, r) into the bucket described by desc.  A key tries sub-tables
 * entry, entry+1, entry+2 for a free slot; failing that it evicts a slot of
 * sub-table `entry` and the evicted key continues from the next sub-table.
 * Returns 0 after max_steps evictions (the bucket is then rebuilt).
 */
static int
F(cuckoo_place) (ST *slots, uint64_t desc, uint32_t seed, uint32_t shared, KT k, uint64_t r,
				 uint32_t *rng, int max_steps)
{
	uint32_t	seedno = ght_desc_seedno(desc);
	uint32_t	entry = 0;

	for (int step = 0; step <= max_steps; step++)
	{
		ST		   *first_grp = NULL;

		for (uint32_t t = 0; t < GHT_SUBTABLES; t++)
		{
			uint32_t	j = (entry + t) % GHT_SUBTABLES;
			uint32_t	hj = HASHK(k, ght_cuckoo_subseed(seed, seedno, j));
			ST		   *grp = slots + ght_cuckoo_group(desc, shared, j, hj) * SPG;

			if (t == 0)
				first_grp = grp;
			for (int i = 0; i < SPG; i++)
			{
				if (grp[i].key == EMPTYK)
				{
					grp[i].key = k;
					grp[i].ref = r;
					return 1;
				}
			}
		}
		/*
		 * All three groups full: evict a pseudo-random slot of the first.
		 * The evicted key goes on from the choice after the first of its
		 * own choices that is this group.
		 */
		{
			int			v;
			KT			vk;
			uint64_t	vr;

			*rng = *rng * 1664525u + 1013904223u;
			v = (int) ((*rng >> 16) % SPG);
			vk = first_grp[v].key;
			vr = first_grp[v].ref;
			first_grp[v].key = k;
			first_grp[v].ref = r;
			k = vk;
			r = vr;
			for (uint32_t i = 0; i < GHT_SUBTABLES; i++)
				if (slots + ght_cuckoo_group(desc, shared, i, HASHK(k, ght_cuckoo_subseed(seed, seedno, i))) * SPG == first_grp)
				{
					entry = (i + 1) % GHT_SUBTABLES;
					break;
				}
		}
	}
	return 0;
}

/*
 * Build the cuckoo index of D distinct keys with refs.  Phase 1 spreads the
 * keys over buckets of at most GHT_BUCKET_MAX (count, scan, scatter; a new
 * first-level seed if one overflows); each bucket gets groups for its own
 * count at the target load.  Phase 2 fills each bucket, reseeding a bucket
 * that fails; if one fails every reseed, the whole table is rebuilt roomier.
 */
static ght_status
F(cuckoo_build) (ght_table *t, const KT *ukeys, const uint64_t *refs, uint64_t D)
{
	ght_ctx    *ctx = t->ctx;
	ght_index  *ix = &t->ix;
	double		load = t->opts.load_factor;
	uint32_t	avg = GHT_BUCKET_AVG;
	uint32_t   *bucket = cpu_mem_alloc(ctx, (D ? D : 1) * sizeof(uint32_t), 0);
	uint32_t   *order = cpu_mem_alloc(ctx, (D ? D : 1) * sizeof(uint32_t), 0);
	uint32_t   *count = NULL;
	uint64_t   *start = NULL;
	ght_status	s = GHT_OK;
	uint32_t	nb = 0;
	uint32_t	attempt_seed = 0;
	int			special = 0;

	if (bucket == NULL || order == NULL)
	{
		s = cpu_mem_failure(ctx);
		goto done;
	}
	t->build_attempts = 1;
	for (int grow = 0;; grow++)
	{
		uint32_t	maxc;
		uint64_t	total_groups = 0;
		ST		   *slots;
		int			failed = 0;

		/* phase 1: distribute */
		for (int redist = 0;; redist++)
		{
			if (redist > 0 && redist % GHT_CUCKOO_REDISTRIBUTIONS == 0)
				avg = avg * 7 / 8;
			if (redist > 0)
				t->build_attempts++;
			if (avg < 32)
			{
				s = ght_fail(ctx, GHT_ERR_BUILD_FAILED,
							 "could not spread %llu keys over buckets of at most %d (are keys repeated?)",
							 (unsigned long long) D, GHT_BUCKET_MAX);
				goto done;
			}
			ix->seed = ght_subseed(t->opts.seed, attempt_seed++);
			nb = ght_cuckoo_nbuckets(D, avg);
			cpu_mem_free(ctx, count);
			cpu_mem_free(ctx, start);
			count = cpu_mem_alloc(ctx, (uint64_t) nb * sizeof(uint32_t), 1);
			start = cpu_mem_alloc(ctx, ((uint64_t) nb + 1) * sizeof(uint64_t), 0);
			if (count == NULL || start == NULL)
			{
				s = cpu_mem_failure(ctx);
				goto done;
			}
			maxc = 0;
			special = 0;
			for (uint64_t i = 0; i < D; i++)
			{
				if (ukeys[i] == EMPTYK)
				{
					special = 1;
					bucket[i] = UINT32_MAX;
					continue;
				}
				bucket[i] = ght_range(HASHK(ukeys[i], ix->seed), nb);
				if (++count[bucket[i]] > maxc)
					maxc = count[bucket[i]];
			}
			if (maxc <= GHT_BUCKET_MAX)
				break;
		}
		if (ght_interrupted(ctx))
		{
			s = GHT_ERR_INTERRUPTED;
			goto done;
		}

		/* scatter keys into bucket order */
		start[0] = 0;
		for (uint32_t b = 0; b < nb; b++)
			start[b + 1] = start[b] + count[b];
		for (uint64_t i = 0; i < D; i++)
			if (bucket[i] != UINT32_MAX)
				order[start[bucket[i]]++] = (uint32_t) i;
		for (uint32_t b = nb; b > 0; b--)
			start[b] = start[b - 1];
		start[0] = 0;

		/* per-bucket geometry */
		cpu_table_release(t, GHT_MEM_BUCKETS);
		ix->buckets = cpu_table_alloc(t, GHT_MEM_BUCKETS, (uint64_t) nb * sizeof(uint64_t));
		if (ix->buckets == NULL)
		{
			s = cpu_mem_failure(ctx);
			goto done;
		}
		for (uint32_t b = 0; b < nb; b++)
		{
			uint32_t	g = ght_cuckoo_groups_for(count[b], sizeof(KT), load);

			ix->buckets[b] = ght_desc_make((uint32_t) total_groups, g, 0);
			total_groups += (uint64_t) g * GHT_SUBTABLES;
		}
		if (total_groups > UINT32_MAX)
		{
			s = ght_fail(ctx, GHT_ERR_TOO_LARGE, "%llu keys need more than 2^32 groups",
						 (unsigned long long) D);
			goto done;
		}
		cpu_table_release(t, GHT_MEM_SLOTS);
		ix->nslots = total_groups * SPG;
		ix->nbuckets = nb;
		slots = cpu_table_alloc(t, GHT_MEM_SLOTS, (ix->nslots + 1) * sizeof(ST));
		ix->slots = slots;
		if (slots == NULL)
		{
			s = cpu_mem_failure(ctx);
			goto done;
		}
		s = F(fill_empty_polled) (ctx, slots, ix->nslots + 1);
		if (s != GHT_OK)
			goto done;

		/* phase 2: cuckoo each bucket */
		for (uint32_t b = 0; b < nb && !failed; b++)
		{
			uint64_t	desc = ix->buckets[b];
			uint32_t	g = ght_desc_groups(desc);
			uint32_t	rng = b * 2654435761u + 1;
			int			ok = 0;

			if ((b & 1023) == 0 && ght_interrupted(ctx))
			{
				s = GHT_ERR_INTERRUPTED;
				goto done;
			}
			for (uint32_t seedno = 0; seedno < GHT_CUCKOO_BUCKET_RESEEDS && !ok; seedno++)
			{
				desc = ght_desc_make(ght_desc_first(desc), g, seedno);
				ok = 1;
				for (uint64_t i = start[b]; i < start[b + 1] && ok; i++)
					ok = F(cuckoo_place) (slots, desc, ix->seed, ix->shared_groups, ukeys[order[i]],
										  refs[order[i]], &rng, GHT_CUCKOO_EVICTION_ROUNDS);
				if (!ok)
				{
					t->build_attempts++;
					F(fill_empty) (slots + (uint64_t) ght_desc_first(desc) * SPG,
								   (uint64_t) g * GHT_SUBTABLES * SPG);
				}
			}
			ix->buckets[b] = desc;
			failed = !ok;
		}
		if (!failed)
			break;
		if (grow >= 4)
		{
			s = ght_fail(ctx, GHT_ERR_BUILD_FAILED,
						 "cuckoo build failed after %u attempts", t->build_attempts);
			goto done;
		}
		load *= 0.9;
		t->build_attempts++;
	}

	/* the key equal to the empty marker lives in the spare slot */
	ix->special_present = special;
	if (special)
	{
		for (uint64_t i = 0; i < D; i++)
			if (ukeys[i] == EMPTYK)
				((ST *) ix->slots)[ix->nslots].ref = refs[i];
	}
	t->used_slots = D - special;
	t->opts.load_factor = load;

done:
	cpu_mem_free(ctx, bucket);
	cpu_mem_free(ctx, order);
	cpu_mem_free(ctx, count);
	cpu_mem_free(ctx, start);
	return s;
}

/* ---- linear ------------------------------------------------------------- */

static ght_status
F(linear_alloc) (ght_table *t, uint64_t keys)
{
	ght_index  *ix = &t->ix;
	uint64_t	cap = ght_linear_capacity(keys, t->opts.load_factor);
	ST		   *slots;

	if (cap == 0)
		return ght_fail(t->ctx, GHT_ERR_TOO_LARGE, "%llu keys at load %.2f need more than 2^32 slots",
						(unsigned long long) keys, t->opts.load_factor);
	cpu_table_release(t, GHT_MEM_SLOTS);
	slots = cpu_table_alloc(t, GHT_MEM_SLOTS, (cap + 1) * sizeof(ST));
	if (slots == NULL)
		return cpu_mem_failure(t->ctx);
	ix->slots = slots;
	ix->nslots = cap;
	ix->mask = cap - 1;
	return F(fill_empty_polled) (t->ctx, slots, cap + 1);
}

/*
 * The slot holding k, claiming the first free slot of its probe sequence if
 * k is not there yet (*is_new = 1).  One CAS claims a slot; a lost race for
 * the same key finds the winner's slot.
 */
static ST  *
F(linear_slot) (const ght_index *ix, KT k, int *is_new)
{
	ST		   *s = (ST *) ix->slots;
	uint64_t	pos;

	*is_new = 0;
	if (k == EMPTYK)
		return &s[ix->nslots];
	pos = ght_linear_start(HASHK(k, ix->seed), ix->mask, ix->group);
	for (uint64_t step = 0; step <= ix->mask; step++)
	{
		ST		   *sl = &s[(pos + step) & ix->mask];
		KT			sk = __atomic_load_n(&sl->key, __ATOMIC_ACQUIRE);

		if (sk == EMPTYK)
		{
			KT			expected = EMPTYK;

			if (__atomic_compare_exchange_n(&sl->key, &expected, k, 0,
											__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			{
				*is_new = 1;
				return sl;
			}
			sk = expected;
		}
		if (sk == k)
			return sl;
	}
	return NULL;				/* full: the callers keep the load below 1 */
}

static ght_status
F(linear_build) (ght_table *t, const KT *ukeys, const uint64_t *refs, uint64_t D)
{
	ght_index  *ix = &t->ix;
	int			is_new;
	ght_status	s = F(linear_alloc) (t, D);

	if (s != GHT_OK)
		return s;
	t->build_attempts = 1;
	for (uint64_t i = 0; i < D; i++)
	{
		ST		   *sl;

		if ((i % CPU_CHECK_EVERY) == 0 && ght_interrupted(t->ctx))
			return GHT_ERR_INTERRUPTED;
		sl = F(linear_slot) (ix, ukeys[i], &is_new);
		if (sl == NULL)
			return ght_fail(t->ctx, GHT_ERR_INTERNAL, "linear table full during build");
		if (ukeys[i] == EMPTYK)
			ix->special_present = 1;
		else if (!is_new)
			continue;			/* repeated key under GHT_BUILD_ASSUME_UNIQUE */
		sl->ref = refs[i];
		t->used_slots += is_new;
	}
	return GHT_OK;
}

/* ---- mutable (LIST) tables ---------------------------------------------- */

static inline uint64_t
F(payload_get) (const ght_index *ix, uint64_t i)
{
	return ix->payload_width == 4 ? ((const uint32_t *) ix->payload)[i]
		: ((const uint64_t *) ix->payload)[i];
}

static inline void
F(payload_set) (ght_index *ix, uint64_t i, uint64_t v)
{
	if (ix->payload_width == 4)
		((uint32_t *) ix->payload)[i] = (uint32_t) v;
	else
		((uint64_t *) ix->payload)[i] = v;
}

/*
 * Add rows: node i of the pool holds row i's payload; it is pushed onto its
 * key's list with a CAS on the slot's ref, after its link is written.
 */
static ght_status
F(list_add) (ght_table *t, const KT *keys, const void *payloads, int rownum,
			 uint64_t n)
{
	ght_index  *ix = &t->ix;

	for (uint64_t i = 0; i < n; i++)
	{
		int			is_new;
		ST		   *sl;
		uint64_t	node = t->pool_used + i;
		__typeof__(sl->ref) head;

		if ((i % CPU_CHECK_EVERY) == 0 && ght_interrupted(t->ctx))
			return GHT_ERR_INTERRUPTED;
		sl = F(linear_slot) (ix, keys[i], &is_new);
		if (sl == NULL)
			return ght_fail(t->ctx, GHT_ERR_INTERNAL, "mutable table full");
		t->used_slots += is_new;
		F(payload_set) (ix, node, rownum ? node : (ix->payload_width == 4
												   ? ((const uint32_t *) payloads)[i]
												   : ((const uint64_t *) payloads)[i]));
		head = __atomic_load_n(&sl->ref, __ATOMIC_ACQUIRE);
		do
		{
			ix->next[node] = (uint32_t) head;
		} while (!__atomic_compare_exchange_n(&sl->ref, &head, (__typeof__(head)) node, 0,
											  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
		if (head == GHT_NIL)
			t->distinct++;
	}
	t->pool_used += n;
	t->rows += n;
	return GHT_OK;
}

/* Remove every row of each key by swapping its list head for NIL. */
static ght_status
F(list_delete) (ght_table *t, const KT *keys, uint64_t n, uint64_t *removed)
{
	ght_index  *ix = &t->ix;

	for (uint64_t i = 0; i < n; i++)
	{
		ST		   *sl;
		uint64_t	head;

		if ((i % CPU_CHECK_EVERY) == 0 && ght_interrupted(t->ctx))
			return GHT_ERR_INTERRUPTED;
		sl = F(find_slot) (ix, keys[i]);
		if (sl == NULL)
			continue;
		head = __atomic_exchange_n(&sl->ref, (__typeof__(sl->ref)) GHT_NIL, __ATOMIC_ACQ_REL);
		if (head == GHT_NIL)
			continue;
		t->distinct--;
		for (uint64_t nd = head; nd != GHT_NIL; nd = ix->next[nd])
		{
			(*removed)++;
			t->rows--;
		}
	}
	return GHT_OK;
}

/* ---- whole-table passes ------------------------------------------------- */

/* Number of rows behind a stored key's ref. */
static inline uint64_t
F(ref_rows) (const ght_index *ix, uint64_t ref)
{
	uint64_t	c = 0;

	if (ix->mode == GHT_MODE_INLINE)
		return 1;
	if (ix->mode == GHT_MODE_RANGE)
		return (uint64_t) ix->offsets[ref + 1] - ix->offsets[ref];
	for (uint64_t nd = ref; nd != GHT_NIL; nd = ix->next[nd])
		c++;
	return c;
}

/* The j-th payload behind ref (j < ref_rows); *cursor speeds up list walks. */
static inline uint64_t
F(ref_payload) (const ght_index *ix, uint64_t ref, uint64_t j, uint64_t *cursor)
{
	if (ix->mode == GHT_MODE_INLINE)
		return ref;
	if (ix->mode == GHT_MODE_RANGE)
		return F(payload_get) (ix, (uint64_t) ix->offsets[ref] + j);
	if (j == 0)
		*cursor = ref;
	else
		*cursor = ix->next[*cursor];
	return F(payload_get) (ix, *cursor);
}

static ght_status
F(export) (ght_table *t, KT *keys, uint64_t *payloads, uint64_t *n_out)
{
	const ght_index *ix = &t->ix;
	const ST   *s = (const ST *) ix->slots;
	uint64_t	m = 0;

	for (uint64_t i = 0; i <= ix->nslots; i++)
	{
		uint64_t	c,
					cursor = 0;

		if (i == ix->nslots)
		{
			if (ix->mode == GHT_MODE_LIST ? s[i].ref == GHT_NIL : !ix->special_present)
				continue;
		}
		else if (s[i].key == EMPTYK || (ix->mode == GHT_MODE_LIST && s[i].ref == GHT_NIL))
			continue;
		c = F(ref_rows) (ix, s[i].ref);
		if (m + c > t->rows)
			return ght_fail(t->ctx, GHT_ERR_INTERNAL, "table holds more rows than it counted");
		for (uint64_t j = 0; j < c; j++)
		{
			keys[m] = s[i].key;
			payloads[m++] = F(ref_payload) (ix, s[i].ref, j, &cursor);
		}
	}
	*n_out = m;
	return GHT_OK;
}

/* Slots (linear) or groups (cuckoo) read to find each stored key. */
static void
F(probe_stats) (const ght_index *ix, double *mean, uint32_t *max)
{
	const ST   *s = (const ST *) ix->slots;
	uint64_t	keys = 0,
				sum = 0;
	uint32_t	mx = 0;

	if (ix->method == GHT_CUCKOO)
	{
		/* a stored key is found at the first of its groups that holds it */
		for (uint64_t p = 0; p < ix->nslots; p++)
		{
			KT			k = s[p].key;
			uint64_t	desc;
			uint32_t	len = 0;

			if (k == EMPTYK)
				continue;
			desc = ix->buckets[ght_range(HASHK(k, ix->seed), ix->nbuckets)];
			for (uint32_t j = 0; j < GHT_SUBTABLES && len == 0; j++)
				if (ght_cuckoo_group(desc, ix->shared_groups, j,
									 HASHK(k, ght_cuckoo_subseed(ix->seed, ght_desc_seedno(desc), j))) == p / SPG)
					len = j + 1;
			keys++;
			sum += len;
			if (len > mx)
				mx = len;
		}
	}
	else
	{
		for (uint64_t p = 0; p < ix->nslots; p++)
		{
			uint64_t	d;

			if (s[p].key == EMPTYK)
				continue;
			d = ((p - ght_linear_start(HASHK(s[p].key, ix->seed), ix->mask, ix->group)) & ix->mask) + 1;
			keys++;
			sum += d;
			if (d > mx)
				mx = (uint32_t) (d > UINT32_MAX ? UINT32_MAX : d);
		}
	}
	*mean = keys ? (double) sum / (double) keys : 0;
	*max = mx;
}

#undef F
#undef SPG
