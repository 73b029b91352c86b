/*
 * cpu_hopscotch.c - the CPU twin of gpu_hopscotch.cu: lock-free hopscotch
 * tables in host memory (layout in ght_layout.h, "hopscotch").
 *
 * Every step that the GPU takes with an atomic is taken here with the same
 * atomic, so the operations are as safe from several threads as the GPU's
 * are from several warps; ght_mixed_batch runs them from several threads to
 * prove it.  The protocol, shared by both halves:
 *
 *   lookup  read hop[home] (v, bitmap); read the slots the bitmap names;
 *           read hop[home] again and start over if it changed, since a key of
 *           this home may have moved out of a slot we read.  No writes.
 *   insert  look the key up; if it has a record, push the row onto the
 *           record's list.  Else claim the nearest free slot (CAS on its ref),
 *           move keys into it while it is too far from home, write the key and
 *           record, and publish it with a CAS on hop[home] from the version
 *           under which the key was seen absent.  Two inserts of one new key
 *           both CAS that word: the loser looks again, finds the winner's
 *           record, gives its slot back and pushes onto the winner's list.
 *   move    a key of home h2 at slot s goes to the claimed slot f, within
 *           h2's neighbourhood: copy key and record to f, then CAS hop[h2]
 *           from the version under which s was read to one with f's bit for
 *           s's; only then is s ours (as the new claimed slot).  The CAS
 *           fails if anything else changed h2's keys meanwhile, and then f is
 *           cleared again and the move retried.
 *   delete  look the key up; swap its record's head for NIL.  The key stays
 *           (a tombstone that a later insert of it reuses) until a rehash.
 */
#include "cpu_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define W32(ix) ((ix)->key_width == 4)
#define S32(ix) ((ght_slot32 *) (ix)->slots)
#define S64(ix) ((ght_slot64 *) (ix)->slots)

typedef struct hop_counters
{
	uint64_t	new_slots;
	uint64_t	keys_born;
	uint64_t	keys_gone;
	uint64_t	removed;
	uint64_t	failed;			/* rows spilled for after a regrow */
} hop_counters;

#define ADD(field, v) __atomic_fetch_add(&(field), (v), __ATOMIC_RELAXED)

/* ---- slot access (a key and its ref are two words on either width) ------ */

static inline uint64_t
ref_load(const ght_index *ix, uint64_t s)
{
	return W32(ix) ? (uint64_t) __atomic_load_n(&S32(ix)[s].ref, __ATOMIC_ACQUIRE)
		: __atomic_load_n(&S64(ix)[s].ref, __ATOMIC_ACQUIRE);
}

static inline void
ref_store(const ght_index *ix, uint64_t s, uint64_t v)
{
	if (W32(ix))
		__atomic_store_n(&S32(ix)[s].ref, (uint32_t) v, __ATOMIC_RELEASE);
	else
		__atomic_store_n(&S64(ix)[s].ref, v, __ATOMIC_RELEASE);
}

static inline int
ref_cas(const ght_index *ix, uint64_t s, uint64_t expect, uint64_t v)
{
	if (W32(ix))
	{
		uint32_t	e = (uint32_t) expect;

		return __atomic_compare_exchange_n(&S32(ix)[s].ref, &e, (uint32_t) v, 0,
										   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
	return __atomic_compare_exchange_n(&S64(ix)[s].ref, &expect, v, 0,
									   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static inline uint64_t
key_load(const ght_index *ix, uint64_t s)
{
	return W32(ix) ? (uint64_t) __atomic_load_n(&S32(ix)[s].key, __ATOMIC_RELAXED)
		: __atomic_load_n(&S64(ix)[s].key, __ATOMIC_RELAXED);
}

static inline void
key_store(const ght_index *ix, uint64_t s, uint64_t k)
{
	if (W32(ix))
		__atomic_store_n(&S32(ix)[s].key, (uint32_t) k, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&S64(ix)[s].key, k, __ATOMIC_RELAXED);
}

static inline uint64_t
home_of(const ght_index *ix, uint64_t k)
{
	uint32_t	h = W32(ix) ? ght_hash_k32((uint32_t) k, ix->seed) : ght_hash_k64(k, ix->seed);

	return ght_hop_home(h, ix->mask);
}

static inline int
rec_valid(uint64_t r)
{
	return r < GHT_HOP_BUSY;
}

/* ---- the operations ----------------------------------------------------- */

/*
 * The record of k (or GHT_HOP_FREE) and the version of hop[h] under which
 * that answer held.
 */
static uint64_t
find_rec(const ght_index *ix, uint64_t k, uint64_t h, uint64_t *wout)
{
	for (;;)
	{
		uint64_t	w = __atomic_load_n(&ix->hop[h], __ATOMIC_ACQUIRE);
		uint32_t	bits = ght_hop_bits(w);
		uint64_t	found = GHT_HOP_FREE;

		while (bits)
		{
			int			i = __builtin_ctz(bits);
			uint64_t	s = (h + (uint64_t) i) & ix->mask;
			uint64_t	r = ref_load(ix, s);

			bits &= bits - 1;
			if (rec_valid(r) && key_load(ix, s) == k)
			{
				found = r;
				break;
			}
		}
		/* the slot reads above happen before the check below */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&ix->hop[h], __ATOMIC_RELAXED) == w)
		{
			*wout = w;
			return found;
		}
	}
}

int
cpu_hop_find(const ght_index *ix, uint64_t k, uint64_t *ref)
{
	uint64_t	w,
				rec = find_rec(ix, k, home_of(ix, k), &w),
				head;

	if (rec == GHT_HOP_FREE)
		return 0;
	head = __atomic_load_n(&ix->heads[rec], __ATOMIC_ACQUIRE);
	if (head == GHT_NIL)
		return 0;
	*ref = head;
	return 1;
}

static void
push(const ght_index *ix, uint64_t rec, uint32_t node, hop_counters *c)
{
	uint32_t	head = __atomic_load_n(&ix->heads[rec], __ATOMIC_ACQUIRE);

	do
	{
		__atomic_store_n(&ix->next[node], head, __ATOMIC_RELAXED);
	} while (!__atomic_compare_exchange_n(&ix->heads[rec], &head, node, 0,
										  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	if (head == GHT_NIL)
		ADD(c->keys_born, 1);
}

/* Claim the nearest free slot from h on: 1 and *f, or 0 if none is near. */
static int
claim_free(const ght_index *ix, uint64_t h, uint64_t *f)
{
	uint64_t	lim = ix->nslots < GHT_HOP_MAX_SEARCH ? ix->nslots : GHT_HOP_MAX_SEARCH;

	for (uint64_t d = 0; d < lim; d++)
	{
		uint64_t	s = (h + d) & ix->mask;

		if (ref_load(ix, s) == GHT_HOP_FREE && ref_cas(ix, s, GHT_HOP_FREE, GHT_HOP_BUSY))
		{
			*f = s;
			return 1;
		}
	}
	return 0;
}

/*
 * Bring the claimed slot *f one hop closer: move into it a key that lies
 * before it and whose home is near enough, farthest home first (the longest
 * hop).  0 when no key of the H - 1 homes before *f can move.
 */
static int
displace(const ght_index *ix, uint64_t *f)
{
	for (uint32_t d = GHT_HOP_H - 1; d >= 1; d--)
	{
		uint64_t	h2 = (*f - d) & ix->mask;

		for (;;)
		{
			uint64_t	w = __atomic_load_n(&ix->hop[h2], __ATOMIC_ACQUIRE);
			uint32_t	bits = ght_hop_bits(w);
			uint32_t	below = bits & ((1u << d) - 1);
			int			i;
			uint64_t	s,
						r;

			if (below == 0)
				break;
			i = __builtin_ctz(below);
			s = (h2 + (uint64_t) i) & ix->mask;
			r = ref_load(ix, s);
			if (!rec_valid(r))
				continue;		/* s changed under w: w is stale, read it again */
			key_store(ix, *f, key_load(ix, s));
			ref_store(ix, *f, r);
			if (__atomic_compare_exchange_n(&ix->hop[h2], &w,
											ght_hop_next(w, (bits | (1u << d)) & ~(1u << i)), 0,
											__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			{
				ref_store(ix, s, GHT_HOP_BUSY);
				*f = s;
				return 1;
			}
			ref_store(ix, *f, GHT_HOP_BUSY);	/* someone changed h2's keys: retry */
		}
	}
	return 0;
}

/*
 * No room for k near its home: but inserts of one new key from several
 * threads each claim a slot until one of them publishes the key, and those
 * claims may have used up the room; so look once more before the row is set
 * aside for a larger table (1).
 */
static int
add_late(const ght_index *ix, uint64_t k, uint64_t h, uint32_t node, hop_counters *c)
{
	uint64_t	w,
				rec = find_rec(ix, k, h, &w);

	if (rec == GHT_HOP_FREE)
		return 1;
	push(ix, rec, node, c);
	return 0;
}

/* Insert row `node` (payload already written) under key k: 0, or 1 when it
 * found no room and must be retried in a larger table. */
static int
insert_one(const ght_index *ix, uint64_t k, uint32_t node, hop_counters *c)
{
	uint64_t	h = home_of(ix, k),
				w,
				f,
				rec = find_rec(ix, k, h, &w);

	if (rec != GHT_HOP_FREE)
	{
		push(ix, rec, node, c);
		return 0;
	}
	if (!claim_free(ix, h, &f))
		return add_late(ix, k, h, node, c);
	while (((f - h) & ix->mask) >= GHT_HOP_H)
	{
		if (!displace(ix, &f))
		{
			ref_store(ix, f, GHT_HOP_FREE);
			return add_late(ix, k, h, node, c);
		}
	}
	__atomic_store_n(&ix->next[node], GHT_NIL, __ATOMIC_RELAXED);
	__atomic_store_n(&ix->heads[node], node, __ATOMIC_RELAXED);
	key_store(ix, f, k);
	ref_store(ix, f, node);
	for (;;)
	{
		uint32_t	bits = ght_hop_bits(w) | (1u << ((f - h) & ix->mask));

		if (__atomic_compare_exchange_n(&ix->hop[h], &w, ght_hop_next(w, bits), 0,
										__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		{
			ADD(c->new_slots, 1);
			ADD(c->keys_born, 1);
			return 0;
		}
		/* h's keys changed: maybe another insert stored k meanwhile */
		rec = find_rec(ix, k, h, &w);
		if (rec != GHT_HOP_FREE)
		{
			ref_store(ix, f, GHT_HOP_FREE);
			push(ix, rec, node, c);
			return 0;
		}
	}
}

static void
delete_one(const ght_index *ix, uint64_t k, hop_counters *c)
{
	uint64_t	w,
				rec = find_rec(ix, k, home_of(ix, k), &w);
	uint32_t	head;
	uint64_t	n = 0;

	if (rec == GHT_HOP_FREE)
		return;
	head = __atomic_exchange_n(&ix->heads[rec], GHT_NIL, __ATOMIC_ACQ_REL);
	if (head == GHT_NIL)
		return;
	for (uint32_t nd = head; nd != GHT_NIL; nd = __atomic_load_n(&ix->next[nd], __ATOMIC_RELAXED))
		n++;
	ADD(c->keys_gone, 1);
	ADD(c->removed, n);
}

/* ---- tables ------------------------------------------------------------- */

static inline uint64_t
in_key(const ght_index *ix, const void *keys, uint64_t i)
{
	return W32(ix) ? (uint64_t) ((const uint32_t *) keys)[i] : ((const uint64_t *) keys)[i];
}

static inline void
set_payload(const ght_index *ix, uint64_t node, uint64_t v)
{
	if (ix->payload_width == 4)
		((uint32_t *) ix->payload)[node] = (uint32_t) v;
	else
		((uint64_t *) ix->payload)[node] = v;
}

static inline uint64_t
get_payload(const ght_index *ix, uint64_t node)
{
	return ix->payload_width == 4 ? ((const uint32_t *) ix->payload)[node]
		: ((const uint64_t *) ix->payload)[node];
}

/* An empty table with room for `keys` keys (and at least min_slots slots)
 * and `rows` rows. */
static ght_status
hop_init(ght_table *t, uint64_t keys, uint64_t rows, uint64_t min_slots)
{
	ght_index  *ix = &t->ix;
	uint64_t	cap = ght_linear_capacity(keys, t->opts.load_factor);

	if (cap == 0 || min_slots > ((uint64_t) 1 << 32))
		return ght_fail(t->ctx, GHT_ERR_TOO_LARGE, "%llu keys at load %.2f need more than 2^32 slots",
						(unsigned long long) keys, t->opts.load_factor);
	while (cap < GHT_HOP_MIN_SLOTS || cap < min_slots)
		cap *= 2;
	if (rows < 1024)
		rows = 1024;
	if (rows > GHT_MAX_ROWS)
		rows = GHT_MAX_ROWS;
	ix->mode = GHT_MODE_LIST;
	t->used_slots = t->distinct = t->rows = t->pool_used = 0;
	ix->slots = cpu_table_alloc(t, GHT_MEM_SLOTS, (cap + 1) * (uint64_t) ght_slot_bytes(t->opts.key_width));
	ix->hop = cpu_table_alloc(t, GHT_MEM_HOP, cap * sizeof(uint64_t));
	ix->payload = cpu_table_alloc(t, GHT_MEM_PAYLOAD, rows * (uint64_t) t->opts.payload_width);
	ix->next = cpu_table_alloc(t, GHT_MEM_NEXT, rows * sizeof(uint32_t));
	ix->heads = cpu_table_alloc(t, GHT_MEM_HEADS, rows * sizeof(uint32_t));
	if (!ix->slots || !ix->hop || !ix->payload || !ix->next || !ix->heads)
		return cpu_mem_failure(t->ctx);
	ix->nslots = cap;
	ix->mask = cap - 1;
	ix->buckets = NULL;
	ix->offsets = NULL;
	memset(ix->hop, 0, cap * sizeof(uint64_t));
	for (uint64_t s = 0; s <= cap; s++)
	{
		key_store(ix, s, W32(ix) ? GHT_EMPTY32 : GHT_EMPTY64);
		ref_store(ix, s, GHT_HOP_FREE);
	}
	t->pool_cap = rows;
	return GHT_OK;
}

static void
apply(ght_table *t, const hop_counters *c, uint64_t inserted)
{
	t->used_slots += c->new_slots;
	t->distinct += c->keys_born;
	t->distinct -= c->keys_gone;
	t->rows += inserted - c->failed;
	t->rows -= c->removed;
}

static ght_status hop_add(ght_table *t, const void *keys, const void *payloads, int pw,
						  int rownum, uint64_t n, int depth);

/*
 * Rehash into a fresh table for the live rows plus `extra` more, twice as
 * many slots when `grow` (a neighbourhood was full): growth, and the
 * reclaiming of tombstones and dead nodes.
 */
static ght_status
hop_rehash(ght_table *t, uint64_t extra, int grow, int depth)
{
	void	   *keys;
	uint64_t   *vals,
				n;
	ght_table	fresh;
	ght_status	s;

	if (depth > GHT_HOPSCOTCH_GROW_TRIES)
		return ght_fail(t->ctx, GHT_ERR_BUILD_FAILED,
						"hopscotch table still full after %d doublings", GHT_HOPSCOTCH_GROW_TRIES);
	s = ght_export(t, &keys, &vals, &n);
	if (s != GHT_OK)
		return s;
	memset(&fresh, 0, sizeof(fresh));
	fresh.ctx = t->ctx;
	fresh.opts = t->opts;
	fresh.ix = t->ix;
	s = hop_init(&fresh, t->distinct + extra, n + extra + (n + extra) / 2,
				 grow ? t->ix.nslots * 2 : 0);
	if (s == GHT_OK && n > 0)
		s = hop_add(&fresh, keys, vals, 8, 0, n, depth + 1);
	free(keys);
	free(vals);
	if (s != GHT_OK)
	{
		ght_cpu_free(&fresh);
		return s;
	}
	fresh.build_attempts = t->build_attempts + 1;
	fresh.build_ms = t->build_ms;
	ght_cpu_free(t);
	*t = fresh;
	return GHT_OK;
}

/* Rows that found no room: kept aside, then added to a doubled table. */
typedef struct hop_spill
{
	uint64_t   *keys;
	uint64_t   *vals;
} hop_spill;

static ght_status
retry_spilled(ght_table *t, hop_spill *sp, uint64_t n, int depth)
{
	ght_status	s;

	if (W32(&t->ix))			/* hop_add reads keys at the table's width */
		for (uint64_t i = 0; i < n; i++)
			((uint32_t *) sp->keys)[i] = (uint32_t) sp->keys[i];
	s = hop_rehash(t, n, 1, depth);
	if (s == GHT_OK)
		s = hop_add(t, sp->keys, sp->vals, 8, 0, n, depth + 1);
	return s;
}

/*
 * Add n rows (payloads pw bytes wide, or row numbers): node pool_used + i
 * holds row i.  Rows that find no room are retried in a doubled table.
 */
static ght_status
hop_add(ght_table *t, const void *keys, const void *payloads, int pw, int rownum, uint64_t n,
		int depth)
{
	ght_index  *ix = &t->ix;
	hop_counters c = {0};
	hop_spill	sp = {NULL, NULL};
	ght_status	s = GHT_OK;
	uint64_t	done = 0;

	for (uint64_t i = 0; i < n; i++, done++)
	{
		uint64_t	node = t->pool_used + i,
					k = in_key(ix, keys, i),
					v = rownum ? node : pw == 4 ? ((const uint32_t *) payloads)[i]
			: ((const uint64_t *) payloads)[i];

		if ((i % CPU_CHECK_EVERY) == 0 && ght_interrupted(t->ctx))
		{
			s = GHT_ERR_INTERRUPTED;
			break;
		}
		set_payload(ix, node, v);
		if (insert_one(ix, k, (uint32_t) node, &c))
		{
			if (sp.keys == NULL)
			{
				sp.keys = cpu_mem_alloc(t->ctx, (n - i) * sizeof(uint64_t), 0);
				sp.vals = cpu_mem_alloc(t->ctx, (n - i) * sizeof(uint64_t), 0);
				if (sp.keys == NULL || sp.vals == NULL)
				{
					s = cpu_mem_failure(t->ctx);
					break;
				}
			}
			sp.keys[c.failed] = k;
			sp.vals[c.failed++] = v;
		}
	}
	t->pool_used += n;
	apply(t, &c, done);
	if (s == GHT_OK && c.failed > 0)
		s = retry_spilled(t, &sp, c.failed, depth);
	cpu_mem_free(t->ctx, sp.keys);
	cpu_mem_free(t->ctx, sp.vals);
	return s;
}

ght_status
cpu_hop_build(ght_table *t, const void *keys, const void *payloads, uint64_t n)
{
	ght_status	s = hop_init(t, n, n, 0);

	if (s != GHT_OK)
		return s;
	return hop_add(t, keys, payloads, t->opts.payload_width,
				   (t->opts.flags & GHT_BUILD_ROWNUM_PAYLOAD) != 0, n, 0);
}

/* Grow first when n more rows might pass the load or the node pool. */
static ght_status
make_room(ght_table *t, uint64_t n)
{
	if ((double) (t->used_slots + n) > (double) t->ix.nslots * GHT_HOPSCOTCH_MAX_LOAD ||
		t->pool_used + n > t->pool_cap)
		return hop_rehash(t, n, 0, 0);
	return GHT_OK;
}

ght_status
cpu_hop_insert(ght_table *t, const void *keys, const void *payloads, uint64_t n)
{
	ght_status	s = make_room(t, n);

	if (s != GHT_OK)
		return s;
	return hop_add(t, keys, payloads, t->opts.payload_width, 0, n, 0);
}

ght_status
cpu_hop_delete(ght_table *t, const void *keys, uint64_t n, uint64_t *removed)
{
	hop_counters c = {0};

	for (uint64_t i = 0; i < n; i++)
	{
		if ((i % CPU_CHECK_EVERY) == 0 && ght_interrupted(t->ctx))
		{
			apply(t, &c, 0);
			*removed += c.removed;
			return GHT_ERR_INTERRUPTED;
		}
		delete_one(&t->ix, in_key(&t->ix, keys, i), &c);
	}
	apply(t, &c, 0);
	*removed += c.removed;
	return GHT_OK;
}

ght_status
cpu_hop_export(ght_table *t, void *keys, uint64_t *payloads, uint64_t *n_out)
{
	const ght_index *ix = &t->ix;
	uint64_t	m = 0;

	for (uint64_t s = 0; s < ix->nslots; s++)
	{
		uint64_t	r = ref_load(ix, s),
					k;

		if (!rec_valid(r))
			continue;
		k = key_load(ix, s);
		for (uint32_t nd = ix->heads[r]; nd != GHT_NIL; nd = ix->next[nd])
		{
			if (m >= t->rows)
				return ght_fail(t->ctx, GHT_ERR_INTERNAL, "table holds more rows than it counted");
			if (W32(ix))
				((uint32_t *) keys)[m] = (uint32_t) k;
			else
				((uint64_t *) keys)[m] = k;
			payloads[m++] = get_payload(ix, nd);
		}
	}
	*n_out = m;
	return GHT_OK;
}

/* Slots from its home to a stored key, plus one: a lookup reads one
 * neighbourhood whatever this is, but it shows how far keys were pushed. */
ght_status
cpu_hop_probe_stats(ght_table *t, double *mean, uint32_t *max)
{
	const ght_index *ix = &t->ix;
	uint64_t	keys = 0,
				sum = 0;
	uint32_t	mx = 0;

	for (uint64_t s = 0; s < ix->nslots; s++)
	{
		uint64_t	d;

		if (!rec_valid(ref_load(ix, s)))
			continue;
		d = ((s - home_of(ix, key_load(ix, s))) & ix->mask) + 1;
		keys++;
		sum += d;
		if (d > mx)
			mx = (uint32_t) d;
	}
	*mean = keys ? (double) sum / (double) keys : 0;
	*max = mx;
	return GHT_OK;
}

/* ---- mixed batches over several threads --------------------------------- */

#define MIXED_THREADS 4

typedef struct mixed_job
{
	const ght_index *ix;
	const uint8_t *ops;
	const void *keys;
	const uint64_t *payloads;
	uint64_t	n;
	uint64_t	node_base;
	uint8_t    *found;
	int			tid;
	hop_counters *c;
	hop_spill  *sp;
} mixed_job;

/* Thread tid takes ops tid, tid + T, ...: neighbours race on nearby keys. */
static void *
mixed_worker(void *arg)
{
	mixed_job  *j = arg;
	const ght_index *ix = j->ix;

	for (uint64_t i = (uint64_t) j->tid; i < j->n; i += MIXED_THREADS)
	{
		uint64_t	k = in_key(ix, j->keys, i),
					ref;

		if (j->ops[i] == 0)
		{
			uint64_t	node = j->node_base + i;

			set_payload(ix, node, j->payloads[i]);
			if (insert_one(ix, k, (uint32_t) node, j->c))
			{
				uint64_t	at = ADD(j->c->failed, 1);

				j->sp->keys[at] = k;
				j->sp->vals[at] = j->payloads[i];
			}
		}
		else if (j->ops[i] == 1)
			delete_one(ix, k, j->c);
		else
			j->found[i] = (uint8_t) cpu_hop_find(ix, k, &ref);
	}
	return NULL;
}

ght_status
cpu_hop_mixed_batch(ght_table *t, const uint8_t *ops, const void *keys,
					const uint64_t *payloads, uint64_t n, uint8_t *found)
{
	hop_counters c = {0};
	hop_spill	sp;
	mixed_job	jobs[MIXED_THREADS];
	pthread_t	th[MIXED_THREADS];
	int			started = 0;
	uint64_t	inserted = 0;
	ght_status	s = make_room(t, n);

	if (s != GHT_OK)
		return s;
	for (uint64_t i = 0; i < n; i++)
		inserted += ops[i] == 0;
	sp.keys = cpu_mem_alloc(t->ctx, (n ? n : 1) * sizeof(uint64_t), 0);
	sp.vals = cpu_mem_alloc(t->ctx, (n ? n : 1) * sizeof(uint64_t), 0);
	if (sp.keys == NULL || sp.vals == NULL)
	{
		s = cpu_mem_failure(t->ctx);
		goto done;
	}
	memset(found, 0, n);
	for (int i = 0; i < MIXED_THREADS; i++)
	{
		jobs[i] = (mixed_job) {&t->ix, ops, keys, payloads, n, t->pool_used, found, i, &c, &sp};
		if (pthread_create(&th[i], NULL, mixed_worker, &jobs[i]) != 0)
			break;
		started++;
	}
	if (started == 0)			/* no threads to be had: do it here */
	{
		mixed_worker(&jobs[0]);
		for (int i = 1; i < MIXED_THREADS; i++)
		{
			jobs[i] = jobs[0];
			jobs[i].tid = i;
			mixed_worker(&jobs[i]);
		}
	}
	else
	{
		for (int i = 0; i < started; i++)
			pthread_join(th[i], NULL);
		for (int i = started; i < MIXED_THREADS; i++)
		{
			jobs[i] = jobs[0];
			jobs[i].tid = i;
			mixed_worker(&jobs[i]);
		}
	}
	t->pool_used += n;
	apply(t, &c, inserted);
	if (c.failed > 0)
		s = retry_spilled(t, &sp, c.failed, 0);
done:
	cpu_mem_free(t->ctx, sp.keys);
	cpu_mem_free(t->ctx, sp.vals);
	return s;
}
