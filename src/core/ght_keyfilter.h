/*
 * ght_keyfilter.h - a Bloom filter of a hash table's keys.
 *
 * A join that drops unmatched probe rows (inner, semi) can test each row's
 * key here as soon as the key is read, and skip the rest of the row's work
 * (taking the row apart, copying it into a batch, probing) when the key is
 * certainly absent.  That is where a selective join spends its time: in
 * TPC-H q03 one `lineitem` row in a hundred finds its order, and every one
 * was copied and probed (bench/NOTES.md section 31).
 *
 * Each key sets four bits of one 64-bit word chosen by its hash, so a test
 * reads a single word.  At GHT_KEYFILTER_BITS_PER_KEY bits a key, about one
 * absent key in a hundred passes; a present key always passes.  Keys are
 * the table's keys widened to 64 bits with their sign: a 4-byte key k and
 * the 8-byte key (int64_t) k are the same key here.
 *
 * Header-only tests, so that a reader's inner loop (and a thread other than
 * the caller's) can inline them; nothing here allocates or fails.
 */
#ifndef GHT_KEYFILTER_H
#define GHT_KEYFILTER_H

#include <stdbool.h>
#include <stdint.h>

#define GHT_KEYFILTER_BITS_PER_KEY 16
/*
 * 4 MB, about 2 M keys: a filter that outgrows the processor's caches costs
 * a memory access a test, about what the probe it would spare costs (a
 * 20 MB filter made W4 13 % slower, bench/NOTES.md section 31).  Past that
 * the filter gets coarser rather than larger.
 */
#define GHT_KEYFILTER_MAX_WORDS ((uint64_t) 1 << 19)

/* the word and the four bits of a key */
static inline uint64_t
ght_keyfilter_hash(int64_t key)
{
	uint64_t	h = (uint64_t) key * UINT64_C(0x9E3779B97F4A7C15);

	h ^= h >> 29;
	h *= UINT64_C(0xBF58476D1CE4E5B9);
	h ^= h >> 32;
	return h;
}

static inline uint64_t
ght_keyfilter_bits(uint64_t h)
{
	/* bits 40..63 choose the four bits; the low bits choose the word */
	return (UINT64_C(1) << ((h >> 40) & 63)) | (UINT64_C(1) << ((h >> 46) & 63)) |
		(UINT64_C(1) << ((h >> 52) & 63)) | (UINT64_C(1) << (h >> 58));
}

/* May key be in the filter of nwords words (a power of two)?  Never false for a key added. */
static inline bool
ght_keyfilter_may_contain(const uint64_t *words, uint64_t nwords, int64_t key)
{
	uint64_t	h = ght_keyfilter_hash(key);
	uint64_t	b = ght_keyfilter_bits(h);

	return (words[h & (nwords - 1)] & b) == b;
}

/* The words of a filter for nkeys keys: a power of two, at least 1, at most GHT_KEYFILTER_MAX_WORDS. */
extern uint64_t ght_keyfilter_words(double nkeys);

/*
 * Add n keys of key_width bytes (4 or 8) to a filter of nwords words
 * (zeroed when made).  With concurrent set, the words are updated with
 * atomic ORs, so several processes may add their keys to one filter in
 * shared memory at once.
 */
extern void ght_keyfilter_add(uint64_t *words, uint64_t nwords, const void *keys, int key_width,
							  uint64_t n, bool concurrent);

#endif
