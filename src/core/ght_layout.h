/*
 * ght_layout.h - the table layouts and hash functions, shared word for word
 * by the CPU (C) and GPU (CUDA) implementations so that both place and find
 * keys the same way.  Everything here is inline and header-only.
 *
 * Slots.  A slot is (key, ref): 8 bytes for 32-bit keys (uint32 key, uint32
 * ref), 16 bytes for 64-bit keys (uint64 key, uint64 ref).  ref is the
 * inline payload (unique keys whose payload fits), the distinct-key number d
 * (payloads in payload[offsets[d] .. offsets[d+1])), or, in mutable tables,
 * the head of the key's list of payload nodes.
 *
 * Reserved values.  An empty slot holds the key GHT_EMPTY (the most negative
 * value of the width: far rarer in real data than 0 or -1).  A user key equal
 * to GHT_EMPTY is still stored: in the spare slot at index nslots, one past
 * the table, and found there by a comparison every probe makes anyway.
 */
#ifndef GHT_LAYOUT_H
#define GHT_LAYOUT_H

#include <stdint.h>

#if defined(__CUDACC__)
#define GHT_HD static inline __host__ __device__
#else
#define GHT_HD static inline
#endif

#define GHT_EMPTY32 ((uint32_t) 0x80000000u)
#define GHT_EMPTY64 ((uint64_t) 0x8000000000000000ull)
#define GHT_NIL		((uint32_t) 0xFFFFFFFFu)	/* no payload node / no ref */

typedef struct ght_slot32
{
	uint32_t	key;
	uint32_t	ref;
} ght_slot32;

typedef struct ght_slot64
{
	uint64_t	key;
	uint64_t	ref;
} ght_slot64;

/* How the payloads of a key are reached from its slot's ref. */
#define GHT_MODE_INLINE 0		/* ref is the payload */
#define GHT_MODE_RANGE	1		/* ref is d: payload[offsets[d] .. offsets[d+1]) */
#define GHT_MODE_LIST	2		/* ref is the first node: payload[node], next[node] */

/* Cuckoo geometry. */
#define GHT_GROUP_BYTES		32	/* one DRAM sector: a probe reads one group */
#define GHT_BUCKET_MAX		512 /* keys per first-level bucket, at most */
#define GHT_BUCKET_AVG		409 /* keys per bucket aimed at (80% of the max) */
#define GHT_SUBTABLES		3

/*
 * Everything a probe needs, passed by value to kernels.  Pointers are device
 * pointers in GPU tables and host pointers in CPU tables.
 */
typedef struct ght_index
{
	int32_t		method;			/* GHT_CUCKOO, GHT_LINEAR or GHT_HOPSCOTCH */
	int32_t		key_width;		/* 4 or 8 */
	int32_t		payload_width;	/* 4 or 8 */
	int32_t		mode;			/* GHT_MODE_* */
	uint32_t	seed;			/* mixed table seed */
	uint32_t	group;			/* linear: probe window in slots (1..32) */
	uint32_t	special_present;	/* static modes: the key GHT_EMPTY is stored */
	uint32_t	nbuckets;		/* cuckoo */
	uint32_t	shared_groups;	/* cuckoo: the three hashes range over all of a
								 * bucket's groups instead of a third each */
	uint64_t	nslots;			/* slots, not counting the spare one */
	uint64_t	mask;			/* linear: nslots - 1 */
	void	   *slots;			/* nslots + 1 slots (the last is the spare) */
	uint64_t   *buckets;		/* cuckoo bucket descriptors */
	uint32_t   *offsets;		/* RANGE: distinct + 1 offsets */
	void	   *payload;		/* RANGE: payloads by offset; LIST: by node */
	uint32_t   *next;			/* LIST: next node */
	uint64_t   *hop;			/* hopscotch: per home slot, version << 32 | bitmap */
	uint32_t   *heads;			/* hopscotch: per key record, its list's first node */
} ght_index;

/* ---- hashing ------------------------------------------------------------ */

GHT_HD uint32_t
ght_fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

GHT_HD uint64_t
ght_fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

/* A seeded 32-bit hash of a key; seeds are pre-mixed by ght_subseed. */
GHT_HD uint32_t
ght_hash_k32(uint32_t k, uint32_t seed)
{
	return ght_fmix32(k ^ seed);
}

GHT_HD uint32_t
ght_hash_k64(uint64_t k, uint32_t seed)
{
	return (uint32_t) (ght_fmix64(k ^ ((uint64_t) seed * 0x9E3779B97F4A7C15ull)) >> 32);
}

/* Seed number i of a family derived from a table seed. */
GHT_HD uint32_t
ght_subseed(uint32_t seed, uint32_t i)
{
	return ght_fmix32(seed + 0x9E3779B9u * (i + 1));
}

/* Map a 32-bit hash onto [0, n) without division (Lemire). */
GHT_HD uint32_t
ght_range(uint32_t h, uint32_t n)
{
	return (uint32_t) (((uint64_t) h * n) >> 32);
}

/* ---- cuckoo ------------------------------------------------------------- */

/*
 * Bucket descriptor: first group of the bucket (bits 0-31), groups per
 * sub-table (32-47), seed number of the bucket's sub-table hashes (48-63).
 * The descriptors are small (8 bytes per ~400 keys), so they stay in cache.
 */
GHT_HD uint64_t
ght_desc_make(uint32_t first_group, uint32_t groups, uint32_t seedno)
{
	return (uint64_t) first_group | ((uint64_t) groups << 32) | ((uint64_t) seedno << 48);
}
GHT_HD uint32_t ght_desc_first(uint64_t d) { return (uint32_t) d; }
GHT_HD uint32_t ght_desc_groups(uint64_t d) { return (uint32_t) (d >> 32) & 0xFFFFu; }
GHT_HD uint32_t ght_desc_seedno(uint64_t d) { return (uint32_t) (d >> 48); }

/*
 * Seed of sub-table j (0..2) for a bucket with seed number seedno.  Number 0
 * of the family is the first-level (bucket) hash, so a reseeded bucket never
 * reuses it.
 */
GHT_HD uint32_t
ght_cuckoo_subseed(uint32_t seed, uint32_t seedno, uint32_t j)
{
	return ght_subseed(seed, 1 + seedno * GHT_SUBTABLES + j);
}

/* Group of a bucket (0 .. 3 * groups - 1) that hash h_j of sub-table j picks. */
GHT_HD uint32_t
ght_cuckoo_local_group(uint32_t groups, uint32_t shared, uint32_t j, uint32_t hj)
{
	return shared ? ght_range(hj, GHT_SUBTABLES * groups) : j * groups + ght_range(hj, groups);
}

/* The same, as an absolute group number. */
GHT_HD uint64_t
ght_cuckoo_group(uint64_t desc, uint32_t shared, uint32_t j, uint32_t hj)
{
	return (uint64_t) ght_desc_first(desc) + ght_cuckoo_local_group(ght_desc_groups(desc), shared, j, hj);
}

/* Groups per sub-table for a bucket of count keys at a target load. */
GHT_HD uint32_t
ght_groups_for(uint32_t count, uint32_t slots_per_group, double load)
{
	double		want = (double) count / (GHT_SUBTABLES * slots_per_group * load);
	uint32_t	g = (uint32_t) want;

	if ((double) g < want)
		g++;
	return g < 1 ? 1 : g;
}

/* ---- linear ------------------------------------------------------------- */

/* First slot of a key's probe sequence: its home, rounded down to the
 * table's probe window so that any window size finds what any other wrote. */
GHT_HD uint64_t
ght_linear_start(uint32_t h, uint64_t mask, uint32_t group)
{
	return ((uint64_t) h & mask) & ~(uint64_t) (group - 1);
}

/* ---- hopscotch ---------------------------------------------------------- */

/*
 * A key lives in one of the GHT_HOP_H slots from its home slot on (mod
 * nslots).  hop[home] holds a bitmap of the neighbourhood's slots that hold
 * keys of this home (bit i: slot home + i) and, above it, a version that
 * every change of the bitmap bumps, so that a reader can tell whether the
 * slots it read were moved under it.
 *
 * Here a slot's ref is not a list head but a key record: the node of the
 * row that first stored the key, whose heads[] entry is the head of the
 * key's list.  Records never move, so pushes and deletes (CAS and exchange
 * on heads[]) need not care about keys being moved between slots.  Whether
 * a slot is in use is told by its ref alone, so every key value, the empty
 * marker included, is stored in the table proper (the spare slot is unused).
 */
#define GHT_HOP_H			32	/* neighbourhood, in slots: one bitmap word */
#define GHT_HOP_FREE		GHT_NIL /* ref of an unused slot */
#define GHT_HOP_BUSY		((uint32_t) 0xFFFFFFFEu)	/* claimed by an insert */
#define GHT_HOP_MAX_SEARCH	4096	/* slots an insert searches for a free one */
#define GHT_HOP_MIN_SLOTS	64	/* two neighbourhoods: they never wrap onto themselves */

GHT_HD uint64_t
ght_hop_home(uint32_t h, uint64_t mask)
{
	return (uint64_t) h & mask;
}

GHT_HD uint32_t ght_hop_bits(uint64_t w) { return (uint32_t) w; }

/* The word after a change of the bitmap to bits. */
GHT_HD uint64_t
ght_hop_next(uint64_t w, uint32_t bits)
{
	return (((w >> 32) + 1) << 32) | bits;
}

#endif							/* GHT_LAYOUT_H */
