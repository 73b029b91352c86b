/*
 * ght_keyfilter.c - making a Bloom filter of a hash table's keys
 * (ght_keyfilter.h).
 */
#include "ght_keyfilter.h"

uint64_t
ght_keyfilter_words(double nkeys)
{
	double		want = nkeys * GHT_KEYFILTER_BITS_PER_KEY / 64.0;
	uint64_t	w = 1;

	while (w < GHT_KEYFILTER_MAX_WORDS && (double) w < want)
		w <<= 1;
	return w;
}

void
ght_keyfilter_add(uint64_t *words, uint64_t nwords, const void *keys, int key_width,
				  uint64_t n, bool concurrent)
{
	uint64_t	mask = nwords - 1;

	for (uint64_t i = 0; i < n; i++)
	{
		int64_t		k = key_width == 4 ? (int64_t) ((const int32_t *) keys)[i]
			: ((const int64_t *) keys)[i];
		uint64_t	h = ght_keyfilter_hash(k);
		uint64_t	b = ght_keyfilter_bits(h);
		uint64_t   *w = &words[h & mask];

		/* a repeated key's bits are set already: no write, and no cache line taken */
		if (((concurrent ? __atomic_load_n(w, __ATOMIC_RELAXED) : *w) & b) == b)
			continue;
		if (concurrent)
			__atomic_fetch_or(w, b, __ATOMIC_RELAXED);
		else
			*w |= b;
	}
}
