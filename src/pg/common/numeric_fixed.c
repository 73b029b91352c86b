/*
 * numeric_fixed.c - reading numeric values as fixed-point integers, and
 * making numerics and PostgreSQL's serialized aggregate states of them
 * (numeric_fixed.h).
 *
 * The on-disk numeric is read here directly: a header word (short form:
 * sign, display scale and weight in one word; long form: sign and display
 * scale, then a 16-bit weight; or a NaN/infinity marker), then base-10000
 * digits, the first worth 10000^weight.  This layout is stable across
 * releases, since pg_upgrade keeps numeric columns as they are on disk.
 */
#include "postgres.h"

#include "fmgr.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "numeric_fixed.h"

/* the header word, as numeric.c defines it privately */
#define NHDR_FLAGS			0xC000
#define NHDR_NEG			0x4000
#define NHDR_SHORT			0x8000
#define NHDR_SPECIAL		0xC000
#define NHDR_SHORT_NEG		0x2000
#define NHDR_SHORT_DSCALE	0x1F80
#define NHDR_SHORT_DSCALE_SHIFT 7
#define NHDR_SHORT_WNEG		0x0040
#define NHDR_SHORT_WEIGHT	0x003F
#define NHDR_LONG_DSCALE	0x3FFF

/* base-10000 digits a value may have and still fit 128 bits at some scale */
#define FIXED_MAX_DIGITS	10

typedef struct NumParts
{
	bool		special;		/* NaN or an infinity: nothing else is set */
	bool		neg;
	int			weight;
	int			dscale;
	int			ndigits;
	const char *digits;			/* unaligned int16s */
	struct varlena *detoasted;	/* to free, when the value had to be */
} NumParts;

static inline void
numeric_parts(Datum value, NumParts *p)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);
	const char *data;
	uint16		hdr;
	int			off;

	p->detoasted = NULL;
	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		v = p->detoasted = pg_detoast_datum_packed(v);
	data = VARDATA_ANY(v);
	memcpy(&hdr, data, sizeof(hdr));
	p->special = (hdr & NHDR_FLAGS) == NHDR_SPECIAL;
	if (p->special)
	{
		p->neg = false;
		p->weight = p->dscale = p->ndigits = 0;
		p->digits = NULL;
		return;
	}
	if ((hdr & NHDR_FLAGS) == NHDR_SHORT)
	{
		p->neg = (hdr & NHDR_SHORT_NEG) != 0;
		p->dscale = (hdr & NHDR_SHORT_DSCALE) >> NHDR_SHORT_DSCALE_SHIFT;
		p->weight = ((hdr & NHDR_SHORT_WNEG) ? ~NHDR_SHORT_WEIGHT : 0) | (hdr & NHDR_SHORT_WEIGHT);
		off = sizeof(uint16);
	}
	else
	{
		int16		w;

		memcpy(&w, data + sizeof(uint16), sizeof(w));
		p->neg = (hdr & NHDR_FLAGS) == NHDR_NEG;
		p->dscale = hdr & NHDR_LONG_DSCALE;
		p->weight = w;
		off = sizeof(uint16) + sizeof(int16);
	}
	p->digits = data + off;
	p->ndigits = (VARSIZE_ANY_EXHDR(v) - off) / sizeof(int16);
}

#ifdef HAVE_INT128

/* 10^e for e in 0..38, the powers that fit 127 bits */
static int128 pow10_table[39];

static inline int128
pow10_128(int e)
{
	if (unlikely(pow10_table[0] == 0))
	{
		int128		r = 1;

		for (int i = 0; i <= 38; i++, r *= 10)
			pow10_table[i] = r;
	}
	return pow10_table[e];
}


/*
 * A finite value's parts as value * 10^scale, an integer, when it fits and
 * no digit lies below the scale.  The digits are read as one integer N
 * (Horner's rule), worth N * 10^e at the scale; a negative e drops zeros
 * the last digit holds below the scale.
 */
static pg_attribute_always_inline FixedStatus
parts_fixed(const NumParts *p, int scale, int128 *out)
{
	int128		n = 0;
	int			e;
	FixedStatus st = FIXED_OK;

	if (p->ndigits > FIXED_MAX_DIGITS)
		return FIXED_TOO_WIDE;
	if (p->ndigits <= 4)
	{
		/* at most 16 decimal digits: 64 bits hold N, and its zeros are dropped in them */
		static const int64 unit64[4] = {1, 10, 100, 1000};
		int64		n64 = 0;

		for (int i = 0; i < p->ndigits; i++)
		{
			int16		d;

			memcpy(&d, p->digits + i * sizeof(int16), sizeof(d));
			n64 = n64 * 10000 + d;
		}
		e = 4 * (p->weight - p->ndigits + 1) + scale;
		if (e < 0 && e > -4)
		{
			if (n64 % unit64[-e] != 0)
				st = FIXED_TOO_WIDE;
			n64 /= unit64[-e];
			e = 0;
		}
		n = n64;
		if (p->ndigits > 0 && e == 0)
		{
			*out = p->neg ? -n : n;
			return st;
		}
	}
	else
	{
		for (int i = 0; st == FIXED_OK && i < p->ndigits; i++)
		{
			int16		d;

			memcpy(&d, p->digits + i * sizeof(int16), sizeof(d));
			if (__builtin_mul_overflow(n, (int128) 10000, &n) ||
				__builtin_add_overflow(n, (int128) d, &n))
				st = FIXED_TOO_WIDE;
		}
	}
	e = 4 * (p->weight - p->ndigits + 1) + scale;
	if (st == FIXED_OK && p->ndigits > 0)
	{
		if (e < 0)
		{
			int128		unit;

			if (-e > 38)
				st = FIXED_TOO_WIDE;
			else if (n % (unit = pow10_128(-e)) != 0)
				st = FIXED_TOO_WIDE;
			else
				n /= unit;
		}
		else if (e > 38 || __builtin_mul_overflow(n, pow10_128(e), &n))
			st = FIXED_TOO_WIDE;
	}
	*out = p->neg ? -n : n;
	return st;
}

/*
 * value * 10^scale as an integer, when value's display scale is exactly
 * scale (so that a sum of such values has PostgreSQL's display scale) and
 * the integer fits.
 */
FixedStatus
gpuhash_numeric_fixed(Datum value, int scale, int128 *out)
{
	NumParts	p;
	FixedStatus st;

	numeric_parts(value, &p);
	if (p.special)
		st = FIXED_SPECIAL;
	else if (p.dscale != scale)
		st = FIXED_TOO_WIDE;
	else
		st = parts_fixed(&p, scale, out);
	if (p.detoasted)
		pfree(p.detoasted);
	return st;
}

/* 10^e, for 0 <= e <= 38 */
int128
gpuhash_fixed_pow10(int e)
{
	Assert(e >= 0 && e <= 38);
	return pow10_128(e);
}

/*
 * Compare a numeric with the constant c * 10^-cs, both exactly, into *cmp
 * (-1, 0 or 1, as numeric_cmp orders finite values); false when the value
 * is not plain enough to do it here (NaN, an infinity, toasted, or too many
 * digits), and the caller asks numeric's own function.
 */
bool
gpuhash_numeric_compare(Datum value, int64 c, int cs, int *cmp)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);
	NumParts	p;
	int128		n;
	int128		k;
	int			s;

	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		return false;
	numeric_parts(value, &p);
	if (p.special || p.dscale > GPUHASH_FIXED_MAX_SCALE)
		return false;
	s = Max(p.dscale, cs);
	if (parts_fixed(&p, s, &n) != FIXED_OK ||
		__builtin_mul_overflow((int128) c, pow10_128(s - cs), &k))
		return false;
	*cmp = n < k ? -1 : n > k ? 1 : 0;
	return true;
}

/* v at scale from, rescaled to scale to (to >= from); false if it does not fit */
bool
gpuhash_fixed_rescale(int128 v, int from, int to, int128 *out)
{
	Assert(to >= from);
	if (to == from)
	{
		*out = v;
		return true;
	}
	return !__builtin_mul_overflow(v, pow10_128(to - from), out);
}

/* The numeric v * 10^-scale, its display scale scale. */
Datum
gpuhash_fixed_numeric(int128 v, int scale)
{
	char		buf[96];
	char	   *p = buf + sizeof(buf) - 1;
	bool		neg = v < 0;
	uint128		u = neg ? -(uint128) v : (uint128) v;
	int			n = 0;

	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return NumericGetDatum(scale == 0 ? int64_to_numeric((int64) v) :
							   int64_div_fast_to_numeric((int64) v, scale));
	*p = '\0';
	while (u != 0 || n <= scale)
	{
		if (n == scale && scale > 0)
			*--p = '.';
		*--p = '0' + (int) (u % 10);
		u /= 10;
		n++;
	}
	if (neg)
		*--p = '-';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p), ObjectIdGetDatum(InvalidOid),
							   Int32GetDatum(-1));
}
#endif							/* HAVE_INT128 */

/*
 * A finite numeric in the form PostgreSQL 15's aggregate states serialize
 * their sums: digit count, weight, sign and display scale as 32-bit
 * integers, then the base-10000 digits as 16-bit ones.
 */
void
gpuhash_numeric_send_var(StringInfo buf, Datum value)
{
	NumParts	p;

	numeric_parts(value, &p);
	Assert(!p.special);
	pq_sendint32(buf, p.ndigits);
	pq_sendint32(buf, p.ndigits == 0 ? 0 : p.weight);
	pq_sendint32(buf, p.neg ? NHDR_NEG : 0);
	pq_sendint32(buf, p.dscale);
	for (int i = 0; i < p.ndigits; i++)
	{
		int16		d;

		memcpy(&d, p.digits + i * sizeof(int16), sizeof(d));
		pq_sendint16(buf, d);
	}
	if (p.detoasted)
		pfree(p.detoasted);
}

/*
 * A finite numeric that is an int64 count of 10^-scale units at its own
 * display scale (at most GPUHASH_FIXED_MAX_SCALE): a constant the
 * fixed-point programs can carry.
 */
bool
gpuhash_numeric_small(Datum value, int64 *v, int *scale)
{
	NumParts	p;
	bool		ok;

	numeric_parts(value, &p);
	ok = !p.special && p.dscale <= GPUHASH_FIXED_MAX_SCALE;
	*scale = ok ? p.dscale : 0;
	if (p.detoasted)
		pfree(p.detoasted);
#ifdef HAVE_INT128
	if (ok)
	{
		int128		w;

		ok = gpuhash_numeric_fixed(value, *scale, &w) == FIXED_OK &&
			w >= PG_INT64_MIN && w <= PG_INT64_MAX;
		*v = ok ? (int64) w : 0;
	}
	return ok;
#else
	return false;
#endif
}
