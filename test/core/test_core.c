/*
 * test_core.c - tests of the core hash tables, without PostgreSQL.
 *
 * Every case runs on the CPU, and on the GPU too when one is usable.  Answers
 * are compared with a plain reference (sorting and binary search) and, for
 * the large case, GPU against CPU pair for pair.  Prints one line per case
 * and ends with "N passed, N failed"; exit status 1 if anything failed.
 *
 * Usage: test_core [--quick] [--cpu-only] [--filter SUBSTRING[,SUBSTRING...]]
 *
 * A case runs when its name ("random gpu cuckoo k32 p32") contains any of
 * the filter's comma-separated substrings, so that one run (e.g. under
 * compute-sanitizer) can pick a few cases of different kinds.
 */
#include "ght.h"
#include "ght_keyfilter.h"
#include "ght_layout.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int	n_pass,
			n_fail;
static int	quick;
static const char *filter;
static char case_name[256];
static char fail_msg[1024];

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		snprintf(fail_msg, sizeof(fail_msg), __VA_ARGS__); \
		return 0; \
	} } while (0)

#define CHECK_OK(ctx, st, what) do { \
	ght_status s_ = (st); \
	if (s_ != GHT_OK) { \
		snprintf(fail_msg, sizeof(fail_msg), "%s: %s (%s %s)", what, ght_status_name(s_), \
				 ght_ctx_error_detail(ctx), ght_ctx_cuda_error_name(ctx)); \
		return 0; \
	} } while (0)

/* Put "where: " in front of the failure message. */
static void
prefix_fail(const char *where)
{
	char		old[sizeof(fail_msg)];

	memcpy(old, fail_msg, sizeof(old));
	snprintf(fail_msg, sizeof(fail_msg), "%.31s: %.960s", where, old);
}

/* ---- random data -------------------------------------------------------- */

static uint64_t rng_state;

/* the contexts of the run: the CPU's always, the GPU's when there is one */
static ght_ctx *cpu_ctx,
		   *gpu_ctx;

static uint64_t
rnd(void)
{
	uint64_t	z = (rng_state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint64_t
mask_width(uint64_t v, int w)
{
	return w == 4 ? (uint32_t) v : v;
}

/* ---- the reference: rows sorted by (key, row) and binary search --------- */

typedef struct row
{
	uint64_t	key;
	uint64_t	payload;
	uint64_t	idx;
} row;

static int
row_cmp(const void *a, const void *b)
{
	const row  *x = a,
			   *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return 0;
}

typedef struct ref_table
{
	row		   *rows;
	uint64_t	n;
} ref_table;

static void
ref_build(ref_table *r, const uint64_t *keys, const uint64_t *payloads, uint64_t n)
{
	r->rows = malloc((n ? n : 1) * sizeof(row));
	r->n = n;
	for (uint64_t i = 0; i < n; i++)
	{
		r->rows[i].key = keys[i];
		r->rows[i].payload = payloads[i];
		r->rows[i].idx = i;
	}
	qsort(r->rows, n, sizeof(row), row_cmp);
}

/* First row with key >= k, and the number of rows with key == k. */
static uint64_t
ref_find(const ref_table *r, uint64_t k, uint64_t *count)
{
	uint64_t	lo = 0,
				hi = r->n;

	while (lo < hi)
	{
		uint64_t	mid = (lo + hi) / 2;

		if (r->rows[mid].key < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	{
		uint64_t	first = lo;

		hi = r->n;
		while (lo < hi)
		{
			uint64_t	mid = (lo + hi) / 2;

			if (r->rows[mid].key <= k)
				lo = mid + 1;
			else
				hi = mid;
		}
		*count = lo - first;
		return first;
	}
}

/* ---- helpers ------------------------------------------------------------ */

static void *
pack_keys(const uint64_t *k, uint64_t n, int w)
{
	void	   *p = malloc((n ? n : 1) * (size_t) w);

	for (uint64_t i = 0; i < n; i++)
	{
		if (w == 4)
			((uint32_t *) p)[i] = (uint32_t) k[i];
		else
			((uint64_t *) p)[i] = k[i];
	}
	return p;
}

typedef struct config
{
	ght_ctx    *ctx;
	const char *dev;
	ght_method	method;
	int			kw;
	int			pw;
	int			flags;
	double		load;
	int			group;
} config;

static ght_status
build_table(const config *c, const uint64_t *keys, const uint64_t *payloads, uint64_t n,
			ght_table **t)
{
	ght_build_opts o;
	void	   *pk = pack_keys(keys, n, c->kw);
	void	   *pp = pack_keys(payloads, n, c->pw);
	ght_status	s;

	ght_build_opts_init(&o, c->kw, c->pw);
	o.method = c->method;
	o.flags = c->flags;
	o.load_factor = c->load;
	o.linear_group = c->group;
	s = ght_build(c->ctx, &o, pk, pp, n, 0, t);
	free(pk);
	free(pp);
	return s;
}

static int
pair_cmp(const void *a, const void *b)
{
	const uint64_t *x = a,
			   *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	if (x[1] != y[1])
		return x[1] < y[1] ? -1 : 1;
	return 0;
}

/*
 * A probe capped at two pairs a key: each key gets min(its rows, 2) pairs,
 * of its own rows, and for a static table its first two in build order
 * (the reference's order, which the uncapped probe was found to keep).
 */
static int
check_capped_probe(const config *c, ght_table *t, const ref_table *ref, const void *pk,
				   uint64_t np, const uint64_t *rf_at, const uint64_t *rf_cnt, uint64_t max_pairs)
{
	const uint64_t cap = 2;
	uint64_t   *seen = calloc(np ? np : 1, sizeof(uint64_t));
	uint64_t	expect_total = 0,
				got;
	ght_probe  *p = NULL;
	int			ok = 0;
	int			unordered = (c->flags & 1) != 0;

	for (uint64_t i = 0; i < np; i++)
		expect_total += rf_cnt[i] < cap ? rf_cnt[i] : cap;
	if (ght_probe_begin_capped(t, pk, np, cap, &p) != GHT_OK)
	{
		snprintf(fail_msg, sizeof(fail_msg), "capped probe_begin failed: %s", ght_ctx_error_detail(c->ctx));
		goto out;
	}
	if (ght_probe_total(p) != expect_total)
	{
		snprintf(fail_msg, sizeof(fail_msg), "capped probe total %" PRIu64 ", want %" PRIu64,
				 ght_probe_total(p), expect_total);
		goto out;
	}
	for (;;)
	{
		const uint32_t *pi;
		const uint64_t *pv;

		if (ght_probe_next(p, max_pairs, &pi, &pv, &got) != GHT_OK)
		{
			snprintf(fail_msg, sizeof(fail_msg), "capped probe_next failed: %s", ght_ctx_error_detail(c->ctx));
			goto out;
		}
		if (got == 0)
			break;
		for (uint64_t j = 0; j < got; j++)
		{
			uint64_t	i = pi[j];
			int			own = 0;

			if (i >= np || seen[i] >= cap || seen[i] >= rf_cnt[i])
			{
				snprintf(fail_msg, sizeof(fail_msg), "capped probe: too many pairs for index %" PRIu64, i);
				goto out;
			}
			if (!unordered)
				own = ref->rows[rf_at[i] + seen[i]].payload == pv[j];
			else
				for (uint64_t r = 0; r < rf_cnt[i] && !own; r++)
					own = ref->rows[rf_at[i] + r].payload == pv[j];
			if (!own)
			{
				snprintf(fail_msg, sizeof(fail_msg), "capped probe: index %" PRIu64 " pair %" PRIu64
						 " has payload %#" PRIx64 ", not %s", i, seen[i], pv[j],
						 unordered ? "one of its rows'" : "its row's in build order");
				goto out;
			}
			seen[i]++;
		}
	}
	for (uint64_t i = 0; i < np; i++)
		if (seen[i] != (rf_cnt[i] < cap ? rf_cnt[i] : cap))
		{
			snprintf(fail_msg, sizeof(fail_msg), "capped probe: index %" PRIu64 " got %" PRIu64
					 " pairs of %" PRIu64, i, seen[i], rf_cnt[i]);
			goto out;
		}
	ok = 1;
out:
	ght_probe_end(p);
	free(seen);
	return ok;
}

/*
 * Probe t with probes[] every way and compare with the reference.  For
 * mutable tables the pairs of one probe may come in any order.
 */
static int
check_probes(const config *c, ght_table *t, const ref_table *ref,
			 const uint64_t *probes, uint64_t np, uint64_t max_pairs)
{
	void	   *pk = pack_keys(probes, np, c->kw);
	uint8_t    *found = malloc(np ? np : 1);
	uint32_t   *sel = malloc((np ? np : 1) * sizeof(uint32_t));
	uint64_t	nsel,
				expect_total = 0,
				m = 0,
				got;
	uint64_t   *want,
			   *have;
	ght_probe  *p;
	int			ok = 0;
	int			unordered = (c->flags & 1) != 0;	/* GHT_BUILD_MUTABLE */

	uint64_t   *rf_at = malloc((np ? np : 1) * sizeof(uint64_t));
	uint64_t   *rf_cnt = malloc((np ? np : 1) * sizeof(uint64_t));

	for (uint64_t i = 0; i < np; i++)
	{
		rf_at[i] = ref_find(ref, probes[i], &rf_cnt[i]);
		expect_total += rf_cnt[i];
	}
	want = malloc((expect_total ? expect_total : 1) * 2 * sizeof(uint64_t));
	have = malloc((expect_total ? expect_total : 1) * 2 * sizeof(uint64_t));

	if (ght_contains(t, pk, np, found) != GHT_OK)
	{
		snprintf(fail_msg, sizeof(fail_msg), "contains failed: %s", ght_ctx_error_detail(c->ctx));
		goto out;
	}
	for (uint64_t i = 0; i < np; i++)
	{
		if (found[i] != (rf_cnt[i] > 0))
		{
			snprintf(fail_msg, sizeof(fail_msg), "contains(%#" PRIx64 ") = %d, want %d",
					 probes[i], found[i], rf_cnt[i] > 0);
			goto out;
		}
	}
	for (int anti = 0; anti <= 1; anti++)
	{
		uint64_t	j = 0;

		if (ght_select(t, pk, np, anti, sel, &nsel) != GHT_OK)
		{
			snprintf(fail_msg, sizeof(fail_msg), "select failed: %s", ght_ctx_error_detail(c->ctx));
			goto out;
		}
		for (uint64_t i = 0; i < np; i++)
		{
			if ((rf_cnt[i] > 0) != anti)
			{
				if (j >= nsel || sel[j] != i)
				{
					snprintf(fail_msg, sizeof(fail_msg), "%s: index %" PRIu64 " missing or out of order",
							 anti ? "anti" : "semi", i);
					goto out;
				}
				j++;
			}
		}
		if (j != nsel)
		{
			snprintf(fail_msg, sizeof(fail_msg), "%s returned %" PRIu64 " indices, want %" PRIu64,
					 anti ? "anti" : "semi", nsel, j);
			goto out;
		}
	}
	for (uint64_t i = 0; i < np; i++)
	{
		for (uint64_t r = 0; r < rf_cnt[i]; r++)
		{
			want[2 * m] = i;
			want[2 * m + 1] = ref->rows[rf_at[i] + r].payload;
			m++;
		}
	}
	if (ght_probe_begin(t, pk, np, &p) != GHT_OK)
	{
		snprintf(fail_msg, sizeof(fail_msg), "probe_begin failed: %s", ght_ctx_error_detail(c->ctx));
		goto out;
	}
	if (ght_probe_total(p) != expect_total)
	{
		snprintf(fail_msg, sizeof(fail_msg), "probe total %" PRIu64 ", want %" PRIu64,
				 ght_probe_total(p), expect_total);
		ght_probe_end(p);
		goto out;
	}
	m = 0;
	for (;;)
	{
		const uint32_t *pi;
		const uint64_t *pv;

		if (ght_probe_next(p, max_pairs, &pi, &pv, &got) != GHT_OK)
		{
			snprintf(fail_msg, sizeof(fail_msg), "probe_next failed: %s", ght_ctx_error_detail(c->ctx));
			ght_probe_end(p);
			goto out;
		}
		if (got == 0)
			break;
		if (m + got > expect_total || (got > max_pairs && !unordered))
		{
			snprintf(fail_msg, sizeof(fail_msg), "probe_next returned too many pairs");
			ght_probe_end(p);
			goto out;
		}
		for (uint64_t i = 0; i < got; i++)
		{
			have[2 * (m + i)] = pi[i];
			have[2 * (m + i) + 1] = pv[i];
		}
		m += got;
	}
	ght_probe_end(p);
	if (m != expect_total)
	{
		snprintf(fail_msg, sizeof(fail_msg), "probe returned %" PRIu64 " pairs, want %" PRIu64, m, expect_total);
		goto out;
	}
	if (unordered)
	{
		qsort(want, m, 2 * sizeof(uint64_t), pair_cmp);
		qsort(have, m, 2 * sizeof(uint64_t), pair_cmp);
	}
	for (uint64_t i = 0; i < m; i++)
		if (want[2 * i] != have[2 * i] || want[2 * i + 1] != have[2 * i + 1])
		{
			snprintf(fail_msg, sizeof(fail_msg),
					 "pair %" PRIu64 ": (%" PRIu64 ", %#" PRIx64 "), want (%" PRIu64 ", %#" PRIx64 ")",
					 i, have[2 * i], have[2 * i + 1], want[2 * i], want[2 * i + 1]);
			goto out;
		}
	if (!check_capped_probe(c, t, ref, pk, np, rf_at, rf_cnt, max_pairs))
		goto out;
	ok = 1;
out:
	free(rf_at);
	free(rf_cnt);
	free(pk);
	free(found);
	free(sel);
	free(want);
	free(have);
	return ok;
}

/* Export must give back exactly the reference's rows, as a multiset. */
static int
check_export(const config *c, ght_table *t, const ref_table *ref)
{
	void	   *k;
	uint64_t   *v,
				n;
	uint64_t   *a,
			   *b;
	int			ok = 1;

	CHECK_OK(c->ctx, ght_export(t, &k, &v, &n), "export");
	if (n != ref->n)
	{
		free(k);
		free(v);
		CHECK(0, "export gave %" PRIu64 " rows, want %" PRIu64, n, ref->n);
	}
	a = malloc((n ? n : 1) * 2 * sizeof(uint64_t));
	b = malloc((n ? n : 1) * 2 * sizeof(uint64_t));
	for (uint64_t i = 0; i < n; i++)
	{
		a[2 * i] = c->kw == 4 ? ((uint32_t *) k)[i] : ((uint64_t *) k)[i];
		a[2 * i + 1] = v[i];
		b[2 * i] = ref->rows[i].key;
		b[2 * i + 1] = ref->rows[i].payload;
	}
	qsort(a, n, 2 * sizeof(uint64_t), pair_cmp);
	qsort(b, n, 2 * sizeof(uint64_t), pair_cmp);
	for (uint64_t i = 0; i < n && ok; i++)
		if (a[2 * i] != b[2 * i] || a[2 * i + 1] != b[2 * i + 1])
		{
			snprintf(fail_msg, sizeof(fail_msg), "export row %" PRIu64 " differs", i);
			ok = 0;
		}
	free(a);
	free(b);
	free(k);
	free(v);
	return ok;
}

static int
check_stats(const config *c, ght_table *t, uint64_t rows, uint64_t distinct)
{
	ght_stats	st;

	CHECK_OK(c->ctx, ght_table_stats(t, &st), "stats");
	CHECK(st.rows == rows, "stats rows %" PRIu64 ", want %" PRIu64, st.rows, rows);
	CHECK(st.distinct_keys == distinct, "stats distinct %" PRIu64 ", want %" PRIu64, st.distinct_keys, distinct);
	CHECK(st.capacity >= distinct || distinct == 0, "capacity below distinct keys");
	CHECK(st.load_factor >= 0 && st.load_factor <= 1.0, "load factor %.3f", st.load_factor);
	CHECK(st.bytes > 0, "no bytes");
	CHECK(distinct == 0 || (st.mean_probes >= 1 && st.max_probes >= 1), "probe stats empty");
	if (c->method == GHT_CUCKOO)
		CHECK(st.max_probes <= 3, "cuckoo lookup needs %u probes", st.max_probes);
	return 1;
}

static uint64_t
count_distinct(const ref_table *r)
{
	uint64_t	d = 0;

	for (uint64_t i = 0; i < r->n; i++)
		d += (i == 0 || r->rows[i].key != r->rows[i - 1].key);
	return d;
}

/*
 * Build from keys/payloads, then probe with every build key plus `extra`
 * other keys, and check contains, semi, anti, inner pairs, export, stats.
 */
/*
 * The table's image, attached to the CPU context and (when there is one) to
 * the GPU context, must answer every probe as the table does: a table built
 * on either device is usable on either.
 */
static int
check_images(const config *c, ght_table *t, const ref_table *ref,
			 const uint64_t *probes, uint64_t np)
{
	uint64_t	bytes;
	void	   *img;
	int			ok = 1;

	if (c->flags & 1)			/* GHT_BUILD_MUTABLE: no image */
	{
		CHECK(ght_table_image_size(t, &bytes) == GHT_ERR_UNSUPPORTED, "mutable table gave an image");
		return 1;
	}
	CHECK(ght_table_image_size(t, &bytes) == GHT_OK, "image size: %s", ght_ctx_error_detail(c->ctx));
	img = aligned_alloc(64, (bytes + 63) & ~(uint64_t) 63);
	CHECK(img != NULL, "no memory for an image of %" PRIu64 " bytes", bytes);
	if (ght_table_image_write(t, img, bytes) != GHT_OK)
	{
		snprintf(fail_msg, sizeof(fail_msg), "image write: %s", ght_ctx_error_detail(c->ctx));
		free(img);
		return 0;
	}
	for (int d = 0; d < 2 && ok; d++)
	{
		ght_ctx    *ctx = d == 0 ? cpu_ctx : gpu_ctx;
		config		ac = *c;
		ght_table  *a;
		uint64_t	before;

		if (ctx == NULL)
			continue;
		before = ght_ctx_device_bytes(ctx);
		ac.ctx = ctx;
		if (ght_table_attach_image(ctx, img, bytes, &a) != GHT_OK)
		{
			snprintf(fail_msg, sizeof(fail_msg), "attach on %s: %s", d == 0 ? "cpu" : "gpu",
					 ght_ctx_error_detail(ctx));
			ok = 0;
			break;
		}
		ok = check_probes(&ac, a, ref, probes, np, 1 << 20);
		ght_table_free(a);
		if (ok && ght_ctx_device_bytes(ctx) != before)
		{
			snprintf(fail_msg, sizeof(fail_msg), "attached image left %" PRIu64 " device bytes",
					 ght_ctx_device_bytes(ctx) - before);
			ok = 0;
		}
	}
	/* a damaged header is refused, not trusted */
	if (ok)
	{
		ght_table  *a = NULL;

		((uint32_t *) img)[0] ^= 1;
		if (ght_table_attach_image(cpu_ctx, img, bytes, &a) != GHT_ERR_INVALID || a != NULL)
		{
			snprintf(fail_msg, sizeof(fail_msg), "a damaged image was attached");
			ght_table_free(a);
			ok = 0;
		}
	}
	free(img);
	return ok;
}

static int
check_table_passes(const config *c, const uint64_t *keys, const uint64_t *payloads, uint64_t n,
				   const uint64_t *extra, uint64_t nextra, int thorough)
{
	ref_table	ref;
	ght_table  *t;
	uint64_t   *probes = malloc((n + nextra + 1) * sizeof(uint64_t));
	int			ok;
	uint64_t	before = ght_ctx_device_bytes(c->ctx);

	uint64_t	np = 0;
	uint8_t    *take = calloc(n ? n : 1, 1);

	ref_build(&ref, keys, payloads, n);
	/* probe with the build keys in input order, each key at most 3 times */
	for (uint64_t i = 0, run = 0; i < n; i++)
	{
		run = (i > 0 && ref.rows[i].key == ref.rows[i - 1].key) ? run + 1 : 0;
		take[ref.rows[i].idx] = run < 3;
	}
	for (uint64_t i = 0; i < n; i++)
		if (take[i])
			probes[np++] = keys[i];
	free(take);
	memcpy(probes + np, extra, nextra * sizeof(uint64_t));
	np += nextra;
	if (build_table(c, keys, payloads, n, &t) != GHT_OK)
	{
		snprintf(fail_msg, sizeof(fail_msg), "build failed: %s %s", ght_ctx_error_detail(c->ctx),
				 ght_ctx_cuda_error_name(c->ctx));
		free(probes);
		free(ref.rows);
		return 0;
	}
	ok = (!thorough || check_probes(c, t, &ref, probes, np, 1000))
		&& check_probes(c, t, &ref, probes, np, thorough ? 1 << 30 : 1 << 20)
		&& check_export(c, t, &ref)
		&& check_stats(c, t, n, count_distinct(&ref))
		&& check_images(c, t, &ref, probes, np);
	ght_table_free(t);
	if (ok && ght_ctx_device_bytes(c->ctx) != before)
	{
		snprintf(fail_msg, sizeof(fail_msg), "device bytes %" PRIu64 " after free, were %" PRIu64,
				 ght_ctx_device_bytes(c->ctx), before);
		ok = 0;
	}
	free(probes);
	free(ref.rows);
	return ok;
}

static int
check_table(const config *c, const uint64_t *keys, const uint64_t *payloads, uint64_t n,
			const uint64_t *extra, uint64_t nextra)
{
	return check_table_passes(c, keys, payloads, n, extra, nextra, 1);
}

/* ---- cases -------------------------------------------------------------- */

static uint64_t *
random_keys(uint64_t n, int w, uint64_t range)
{
	uint64_t   *k = malloc((n ? n : 1) * sizeof(uint64_t));

	for (uint64_t i = 0; i < n; i++)
		k[i] = mask_width(range ? rnd() % range : rnd(), w);
	return k;
}

static uint64_t *
random_payloads(uint64_t n, int w)
{
	return random_keys(n, w, 0);
}

static int
case_random(const config *c)
{
	uint64_t	n = 20000;
	uint64_t   *k = random_keys(n, c->kw, 0);
	uint64_t   *v = random_payloads(n, c->pw);
	uint64_t   *x = random_keys(5000, c->kw, 0);
	int			ok = check_table(c, k, v, n, x, 5000);

	free(k);
	free(v);
	free(x);
	return ok;
}

/*
 * Probe transfers are counted on a GPU context (every key goes up, every
 * flag comes back) and not at all on a CPU one.
 */
static int
case_transfer_stats(const config *c)
{
	uint64_t	n = 50000;
	uint64_t   *k = random_keys(n, c->kw, 0);
	uint64_t   *v = random_payloads(n, c->pw);
	void	   *pk = pack_keys(k, n, c->kw);
	uint8_t    *found = malloc(n);
	ght_table  *t = NULL;
	ght_transfer_stats before,
				after;
	int			ok = 1;

	ght_ctx_transfer_stats(c->ctx, &before);
	if (build_table(c, k, v, n, &t) != GHT_OK || ght_contains(t, pk, n, found) != GHT_OK)
	{
		snprintf(fail_msg, sizeof(fail_msg), "build or contains failed: %s", ght_ctx_error_detail(c->ctx));
		ok = 0;
	}
	ght_ctx_transfer_stats(c->ctx, &after);
	if (ok && ght_ctx_device(c->ctx) == GHT_GPU)
	{
		uint64_t	up = after.to_device_bytes - before.to_device_bytes;
		uint64_t	down = after.from_device_bytes - before.from_device_bytes;

		if (up != n * c->kw || down != n || after.to_device_ms < before.to_device_ms ||
			after.from_device_ms < before.from_device_ms)
		{
			snprintf(fail_msg, sizeof(fail_msg), "GPU: %llu bytes up (want %llu), %llu down (want %llu)",
					 (unsigned long long) up, (unsigned long long) (n * c->kw),
					 (unsigned long long) down, (unsigned long long) n);
			ok = 0;
		}
	}
	else if (ok && (after.to_device_bytes != 0 || after.from_device_bytes != 0 ||
					after.to_device_ms != 0 || after.from_device_ms != 0))
	{
		snprintf(fail_msg, sizeof(fail_msg), "CPU context reports transfers");
		ok = 0;
	}
	for (uint64_t i = 0; ok && i < n; i++)
		if (!found[i])
		{
			snprintf(fail_msg, sizeof(fail_msg), "key %llu not found", (unsigned long long) i);
			ok = 0;
		}
	if (t)
		ght_table_free(t);
	free(found);
	free(pk);
	free(v);
	free(k);
	return ok;
}

static int
case_duplicates(const config *c)
{
	uint64_t	n = 30000;
	uint64_t   *k = random_keys(n, c->kw, 7000);	/* ~4 rows a key */
	uint64_t   *v = random_payloads(n, c->pw);
	uint64_t   *x = random_keys(2000, c->kw, 20000);
	int			ok = check_table(c, k, v, n, x, 2000);

	free(k);
	free(v);
	free(x);
	return ok;
}

static int
case_hot_key(const config *c)
{
	uint64_t	n = 110000;
	uint64_t   *k = random_keys(n, c->kw, 0);
	uint64_t   *v = random_payloads(n, c->pw);
	uint64_t	hot = mask_width(0x1234567890ull, c->kw);
	uint64_t	x[2] = {hot, hot + 1};
	int			ok;

	for (uint64_t i = 0; i < 100000; i++)
		k[i * 11 / 10] = hot;	/* spread through the input */
	ok = check_table(c, k, v, n, x, 2);
	free(k);
	free(v);
	return ok;
}

static int
case_empty(const config *c)
{
	uint64_t	x[4] = {0, 1, mask_width(~0ull, c->kw), mask_width(1ull << (c->kw * 8 - 1), c->kw)};

	return check_table(c, NULL, NULL, 0, x, 4);
}

static int
case_single(const config *c)
{
	uint64_t	k = mask_width(42, c->kw),
				v = 7;
	uint64_t	x[3] = {41, 43, mask_width(1ull << (c->kw * 8 - 1), c->kw)};

	return check_table(c, &k, &v, 1, x, 3);
}

static int
case_all_equal(const config *c)
{
	uint64_t	n = 5000;
	uint64_t   *k = malloc(n * sizeof(uint64_t));
	uint64_t   *v = random_payloads(n, c->pw);
	uint64_t	x[2] = {0, 2};
	int			ok;

	for (uint64_t i = 0; i < n; i++)
		k[i] = 1;
	ok = check_table(c, k, v, n, x, 2);
	free(k);
	free(v);
	return ok;
}

/* Every value an implementation might reserve, and its neighbours. */
static int
case_sentinels(const config *c)
{
	const uint64_t base[] = {0, ~0ull, 0x7FFFFFFFull, 0x80000000ull, 0xFFFFFFFFull,
		0xFFFFFFFEull, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull,
	0xFFFFFFFF00000000ull, 1, 0x80000001ull, 0x8000000000000001ull};
	uint64_t	nb = sizeof(base) / sizeof(base[0]);
	uint64_t	n = nb * 3 + 1000;
	uint64_t   *k = random_keys(n, c->kw, 0);
	uint64_t   *v = random_payloads(n, c->pw);
	uint64_t	x[sizeof(base) / sizeof(base[0]) * 2];
	int			ok;

	/* each sentinel 1, 2 or 3 times */
	for (uint64_t i = 0, at = 0; i < nb; i++)
		for (uint64_t r = 0; r <= i % 3; r++)
			k[at++] = mask_width(base[i], c->kw);
	for (uint64_t i = 0; i < nb; i++)
	{
		x[2 * i] = mask_width(base[i] + 2, c->kw);
		x[2 * i + 1] = mask_width(base[i] - 2, c->kw);
	}
	ok = check_table(c, k, v, n, x, 2 * nb);
	/* and a table of nothing but sentinels, all unique (inline payloads) */
	if (ok)
	{
		uint64_t	u[sizeof(base) / sizeof(base[0])];
		uint64_t	m = 0;

		for (uint64_t i = 0; i < nb; i++)
		{
			uint64_t	s = mask_width(base[i], c->kw);
			int			dup = 0;

			for (uint64_t j = 0; j < m; j++)
				dup |= u[j] == s;
			if (!dup)
				u[m++] = s;
		}
		ok = check_table(c, u, v, m, x, 2 * nb);
	}
	free(k);
	free(v);
	return ok;
}

static int
case_load_factors(const config *c)
{
	static const double loads[] = {0.5, 0.7, 0.85, 0.9, 0.95};
	uint64_t	n = quick ? 30000 : 200000;
	uint64_t   *k = random_keys(n, c->kw, 0);
	uint64_t   *v = random_payloads(n, c->pw);
	uint64_t   *x = random_keys(1000, c->kw, 0);
	int			ok = 1;

	for (int i = 0; i < 5 && ok; i++)
	{
		config		c2 = *c;

		c2.load = loads[i];
		ok = check_table(&c2, k, v, n, x, 1000);
		if (!ok)
		{
			char		where[32];

			snprintf(where, sizeof(where), "load %.2f", loads[i]);
			prefix_fail(where);
		}
	}
	free(k);
	free(v);
	free(x);
	return ok;
}

static int
case_unique_flag(const config *c)
{
	uint64_t	n = 50000;
	uint64_t   *k = malloc(n * sizeof(uint64_t));
	uint64_t   *v = random_payloads(n, c->pw);
	uint64_t   *x = random_keys(1000, c->kw, 0);
	config		c2 = *c;
	int			ok;

	for (uint64_t i = 0; i < n; i++)
		k[i] = mask_width(i * 0x9E3779B97F4A7C15ull + 3, c->kw);
	c2.flags |= GHT_BUILD_ASSUME_UNIQUE;
	ok = check_table(&c2, k, v, n, x, 1000);
	free(k);
	free(v);
	free(x);
	return ok;
}

static int
case_probe_groups(const config *c)
{
	uint64_t	n = 40000;
	uint64_t   *k = random_keys(n, c->kw, 30000);
	uint64_t   *v = random_payloads(n, c->pw);
	uint64_t   *x = random_keys(1000, c->kw, 60000);
	int			ok = 1;

	for (int g = 1; g <= 32 && ok; g *= 2)
	{
		config		c2 = *c;

		c2.group = g;
		c2.load = 0.8;
		ok = check_table(&c2, k, v, n, x, 1000);
		if (!ok)
		{
			char		where[32];

			snprintf(where, sizeof(where), "group %d", g);
			prefix_fail(where);
		}
	}
	free(k);
	free(v);
	free(x);
	return ok;
}

/* Mutable tables: batches of inserts and deletes through several rehashes,
 * checked against a model after every batch. */
static int
case_mutable(const config *c)
{
	config		cm = *c;
	uint64_t	cap = 400000,
				live = 0,
				next_payload = 1;
	uint64_t   *mk = malloc(cap * sizeof(uint64_t));
	uint64_t   *mv = malloc(cap * sizeof(uint64_t));
	uint64_t	n0 = 1000;
	uint64_t   *k = random_keys(n0, c->kw, 3000);
	uint64_t   *v = malloc(n0 * sizeof(uint64_t));
	ght_table  *t;
	int			ok = 1;
	int			rounds = quick ? 6 : 12;

	cm.flags |= GHT_BUILD_MUTABLE;
	for (uint64_t i = 0; i < n0; i++)
	{
		v[i] = next_payload++;
		mk[live] = k[i];
		mv[live++] = v[i];
	}
	if (build_table(&cm, k, v, n0, &t) != GHT_OK)
	{
		snprintf(fail_msg, sizeof(fail_msg), "build failed: %s", ght_ctx_error_detail(c->ctx));
		ok = 0;
	}
	free(k);
	free(v);
	for (int round = 0; round < rounds && ok; round++)
	{
		uint64_t	ni = 2000u << (round % 6);
		uint64_t	nd = 500u << (round % 5);
		uint64_t   *ik = random_keys(ni, c->kw, 20000 + round * 5000);
		uint64_t   *iv = malloc(ni * sizeof(uint64_t));
		uint64_t   *dk = random_keys(nd, c->kw, 20000 + round * 5000);
		void	   *pk,
				   *pv;
		uint64_t	removed,
					want_removed = 0,
					w = 0;
		ref_table	ref;
		uint64_t   *x = random_keys(3000, c->kw, 40000);

		if (round == 3)
			for (uint64_t i = 0; i < ni; i += 7)
				ik[i] = mask_width(1ull << (c->kw * 8 - 1), c->kw);	/* the empty marker */
		for (uint64_t i = 0; i < ni && live < cap; i++)
		{
			iv[i] = next_payload++;
			mk[live] = ik[i];
			mv[live++] = iv[i];
		}
		pk = pack_keys(ik, ni, c->kw);
		pv = pack_keys(iv, ni, c->pw);
		if (ght_insert(t, pk, pv, ni) != GHT_OK)
		{
			snprintf(fail_msg, sizeof(fail_msg), "insert failed: %s", ght_ctx_error_detail(c->ctx));
			ok = 0;
		}
		free(pk);
		free(pv);
		/* delete: the model drops every row whose key is in dk */
		if (ok)
		{
			ref_table	del;
			uint64_t   *zero = calloc(nd, sizeof(uint64_t));

			if (round % 4 == 3)
				for (uint64_t i = 0; i < nd; i++)
					dk[i] = mk[rnd() % live];	/* mostly hits */
			ref_build(&del, dk, zero, nd);
			for (uint64_t i = 0; i < live; i++)
			{
				uint64_t	cnt;

				ref_find(&del, mk[i], &cnt);
				if (cnt)
					want_removed++;
				else
				{
					mk[w] = mk[i];
					mv[w++] = mv[i];
				}
			}
			live = w;
			free(del.rows);
			free(zero);
			pk = pack_keys(dk, nd, c->kw);
			if (ght_delete(t, pk, nd, &removed) != GHT_OK)
			{
				snprintf(fail_msg, sizeof(fail_msg), "delete failed: %s", ght_ctx_error_detail(c->ctx));
				ok = 0;
			}
			else if (removed != want_removed)
			{
				snprintf(fail_msg, sizeof(fail_msg), "round %d: delete removed %" PRIu64 ", want %" PRIu64,
						 round, removed, want_removed);
				ok = 0;
			}
			free(pk);
		}
		if (ok)
		{
			uint64_t   *probes = malloc((live + 3000) * sizeof(uint64_t));

			ref_build(&ref, mk, mv, live);
			memcpy(probes, mk, live * sizeof(uint64_t));
			memcpy(probes + live, x, 3000 * sizeof(uint64_t));
			ok = check_probes(&cm, t, &ref, probes, live + 3000, 5000)
				&& check_export(&cm, t, &ref)
				&& check_stats(&cm, t, live, count_distinct(&ref));
			if (!ok)
			{
				char		where[32];

				snprintf(where, sizeof(where), "round %d", round);
				prefix_fail(where);
			}
			free(probes);
			free(ref.rows);
		}
		free(ik);
		free(iv);
		free(dk);
		free(x);
	}
	if (t)
		ght_table_free(t);
	free(mk);
	free(mv);
	return ok;
}

static int
case_errors(const config *c)
{
	ght_build_opts o;
	ght_table  *t = NULL;
	uint32_t	k[4] = {1, 2, 3, 4};
	uint64_t	removed;

	ght_build_opts_init(&o, 3, 4);
	CHECK(ght_build(c->ctx, &o, k, k, 4, 0, &t) == GHT_ERR_INVALID && t == NULL, "key width 3 accepted");
	ght_build_opts_init(&o, 4, 4);
	o.method = GHT_CUCKOO;
	o.flags = GHT_BUILD_MUTABLE;
	CHECK(ght_build(c->ctx, &o, k, k, 4, 0, &t) == GHT_ERR_UNSUPPORTED, "mutable cuckoo accepted");
	o.flags = 0;
	o.load_factor = 0.99;
	CHECK(ght_build(c->ctx, &o, k, k, 4, 0, &t) == GHT_ERR_INVALID, "load 0.99 accepted");
	o.load_factor = 0;
	CHECK(ght_build(c->ctx, &o, NULL, k, 4, 0, &t) == GHT_ERR_INVALID, "NULL keys accepted");
	CHECK(ght_build(c->ctx, &o, k, k, GHT_MAX_ROWS + 1, 0, &t) == GHT_ERR_TOO_LARGE, "too many rows accepted");
	CHECK_OK(c->ctx, ght_build(c->ctx, &o, k, k, 4, 0, &t), "build");
	CHECK(ght_insert(t, k, k, 4) == GHT_ERR_UNSUPPORTED, "insert into static table accepted");
	CHECK(ght_delete(t, k, 4, &removed) == GHT_ERR_UNSUPPORTED, "delete from static table accepted");
	ght_table_free(t);
	return 1;
}

/* Asks to stop at its n-th poll and at every poll after it. */
static int
stop_at_poll(void *arg)
{
	uint64_t   *left = arg;

	if (*left > 1)
	{
		(*left)--;
		return 0;
	}
	return 1;
}

/*
 * Stopping at any of a build's interrupt polls, in turn, frees everything
 * (the sort swaps its buffers between passes, so a stop after pass 1 and
 * one after pass 2 free different ones), and so does stopping a probe.
 */
static int
case_interrupt(const config *c)
{
	uint64_t	n = 300000;
	uint64_t   *k = random_keys(n, c->kw, 0);
	void	   *pk = pack_keys(k, n, c->kw);
	ght_table  *t = NULL;
	ght_probe  *p = NULL;
	ght_status	s = GHT_OK;
	uint64_t	at;
	uint64_t	left;
	int			stopped = 0;

	for (at = 1; at <= 200; at++)
	{
		left = at;
		ght_ctx_set_interrupt(c->ctx, stop_at_poll, &left);
		s = build_table(c, k, k, n, &t);
		ght_ctx_set_interrupt(c->ctx, NULL, NULL);
		if (s == GHT_OK)
			break;
		CHECK(s == GHT_ERR_INTERRUPTED, "build stopped at poll %" PRIu64 ": %s", at, ght_status_name(s));
		CHECK(t == NULL, "interrupted build returned a table");
		CHECK(ght_ctx_device_bytes(c->ctx) == 0, "device bytes left after a stop at poll %" PRIu64, at);
		stopped++;
	}
	CHECK(s == GHT_OK, "build stopped at every one of 200 polls");
	CHECK(stopped >= (ght_ctx_device(c->ctx) == GHT_CPU ? 2 : 1), "a build polled only %d times", stopped);
	left = 1;
	ght_ctx_set_interrupt(c->ctx, stop_at_poll, &left);
	s = ght_probe_begin(t, pk, n, &p);
	ght_ctx_set_interrupt(c->ctx, NULL, NULL);
	ght_probe_end(p);
	ght_table_free(t);
	free(k);
	free(pk);
	/* a GPU probe of one batch may finish without polling */
	CHECK(s == GHT_ERR_INTERRUPTED || (s == GHT_OK && ght_ctx_device(c->ctx) == GHT_GPU),
		  "probe not interrupted: %s", ght_status_name(s));
	CHECK(ght_ctx_device_bytes(c->ctx) == 0, "device bytes left after interrupted probe");
	return 1;
}

/*
 * Allocation failures and the memory limit are statuses, on the CPU as on the
 * GPU: every allocation of a build or a probe can fail, nothing leaks when
 * one does, and the context counts the bytes its tables hold.
 */
static int
case_device_memory(const config *c)
{
	uint64_t	n = 100000;
	uint64_t   *k = random_keys(n, c->kw, 0);
	void	   *pk;
	ght_status	nomem = ght_ctx_device(c->ctx) == GHT_GPU ? GHT_ERR_DEVICE_NOMEM : GHT_ERR_HOST_NOMEM;
	ght_table  *t = NULL;
	ght_probe  *p = NULL;
	ght_stats	st;
	ght_status	s = GHT_OK;
	uint64_t	after;
	uint64_t	held;

	/* keys repeat (k[i] twice) so that builds sort and lay out payload ranges */
	for (uint64_t i = n / 2; i < n; i++)
		k[i] = k[i - n / 2];
	pk = pack_keys(k, n, c->kw);
	for (after = 1; after <= 64; after++)
	{
		ght_ctx_fail_alloc_after(c->ctx, after);
		s = build_table(c, k, k, n, &t);
		ght_ctx_fail_alloc_after(c->ctx, 0);
		if (s == GHT_OK)
			break;
		CHECK(s == nomem, "failing allocation %" PRIu64 " gave %s", after, ght_status_name(s));
		CHECK(t == NULL, "failed build returned a table");
		CHECK(ght_ctx_device_bytes(c->ctx) == 0, "bytes left after failed allocation %" PRIu64, after);
		CHECK(strstr(ght_ctx_error_detail(c->ctx), "injected") != NULL,
			  "detail of failed allocation %" PRIu64 ": %s", after, ght_ctx_error_detail(c->ctx));
	}
	CHECK(s == GHT_OK, "build failed with every injected failure up to 64");
	CHECK(after > 2, "a build made only %" PRIu64 " allocations", after - 1);

	/* a live table is counted; probes fail cleanly and give back their scratch */
	CHECK_OK(c->ctx, ght_table_stats(t, &st), "stats");
	held = ght_ctx_device_bytes(c->ctx);
	CHECK(held >= st.bytes && st.bytes > 0, "context holds %" PRIu64 " bytes, table %" PRIu64, held, st.bytes);
	for (after = 1; after <= 8; after++)
	{
		uint64_t	m = 0;
		const uint32_t *pi;
		const uint64_t *pp;

		ght_ctx_fail_alloc_after(c->ctx, after);
		s = ght_probe_begin(t, pk, n, &p);
		if (s == GHT_OK)
			s = ght_probe_next(p, 2 * n, &pi, &pp, &m);
		ght_ctx_fail_alloc_after(c->ctx, 0);
		if (s == GHT_OK)
		{
			CHECK(m == 2 * n, "probe after injected failures gave %" PRIu64 " pairs", m);
			ght_probe_end(p);
			p = NULL;
			break;
		}
		CHECK(s == nomem, "failing probe allocation %" PRIu64 " gave %s", after, ght_status_name(s));
		ght_probe_end(p);
		p = NULL;
		CHECK(ght_ctx_device_bytes(c->ctx) == held, "probe left %" PRIu64 " bytes instead of %" PRIu64,
			  ght_ctx_device_bytes(c->ctx), held);
	}
	CHECK(s == GHT_OK, "probe failed with every injected failure up to 8");
	CHECK(ght_ctx_device_bytes(c->ctx) == held, "bytes after probes: %" PRIu64, ght_ctx_device_bytes(c->ctx));
	ght_table_free(t);
	t = NULL;
	CHECK(ght_ctx_device_bytes(c->ctx) == 0, "bytes left after freeing the table");

	/* the limit: too small fails with its own status, large enough does not */
	ght_ctx_set_device_limit(c->ctx, 4096);
	s = build_table(c, k, k, n, &t);
	CHECK(s == GHT_ERR_MEM_LIMIT, "limit of 4096 bytes gave %s", ght_status_name(s));
	CHECK(ght_ctx_device_bytes(c->ctx) == 0, "bytes left after limit");
	CHECK(strstr(ght_ctx_error_detail(c->ctx), "limit of 4096 bytes") != NULL,
		  "detail: %s", ght_ctx_error_detail(c->ctx));
	CHECK(ght_ctx_limit_need(c->ctx) > 4096, "limit_need %" PRIu64, ght_ctx_limit_need(c->ctx));
	ght_ctx_set_device_limit(c->ctx, (uint64_t) 1 << 30);
	s = build_table(c, k, k, n, &t);
	ght_ctx_set_device_limit(c->ctx, 0);
	CHECK(s == GHT_OK, "limit of 1 GiB gave %s", ght_status_name(s));
	ght_table_free(t);
	free(k);
	free(pk);
	CHECK(ght_ctx_device_bytes(c->ctx) == 0, "device bytes left after limit");
	return 1;
}

/* GPU only: inserts, deletes and lookups racing in one kernel. */
static int
case_concurrent(const config *c)
{
	config		cm = *c;
	uint64_t	na = 50000,
				nb = 50000,
				nc = 100000;
	uint64_t	n = na + nb + nc + na;
	uint64_t   *base = random_keys(na + nb, c->kw, 0);
	uint64_t   *payload = malloc((na + nb) * sizeof(uint64_t));
	ght_table  *t;
	uint8_t    *ops = malloc(n);
	uint64_t   *keys = malloc(n * sizeof(uint64_t));
	uint64_t   *vals = malloc(n * sizeof(uint64_t));
	uint8_t    *found = malloc(n);
	void	   *pk;
	ght_status	s;
	int			ok = 1;

	cm.flags |= GHT_BUILD_MUTABLE;
	/* A: kept; B: deleted; C: inserted.  Keys are tagged so sets are disjoint. */
	for (uint64_t i = 0; i < na + nb; i++)
	{
		base[i] = mask_width((base[i] & ~3ull) | (i < na ? 0 : 1), c->kw);
		payload[i] = i;
	}
	CHECK_OK(c->ctx, build_table(&cm, base, payload, na + nb, &t), "build");
	for (uint64_t i = 0; i < n; i++)
	{
		uint64_t	r = rnd();

		if (i < nc)
		{
			ops[i] = 0;
			keys[i] = mask_width((r & ~3ull) | 2, c->kw);
			vals[i] = 1000000 + i;
		}
		else if (i < nc + nb)
		{
			ops[i] = 1;
			keys[i] = base[na + (i - nc)];
		}
		else if (i < nc + nb + na)
		{
			ops[i] = 2;
			keys[i] = base[i - nc - nb];
		}
		else
		{
			ops[i] = 2;
			keys[i] = base[na + (r % nb)];
		}
		vals[i] = ops[i] == 0 ? vals[i] : 0;
	}
	/* shuffle so that each warp mixes operations */
	for (uint64_t i = n - 1; i > 0; i--)
	{
		uint64_t	j = rnd() % (i + 1);
		uint8_t		o = ops[i];
		uint64_t	kk = keys[i],
					vv = vals[i];

		ops[i] = ops[j];
		keys[i] = keys[j];
		vals[i] = vals[j];
		ops[j] = o;
		keys[j] = kk;
		vals[j] = vv;
	}
	pk = pack_keys(keys, n, c->kw);
	s = ght_mixed_batch(t, ops, pk, vals, n, found);
	free(pk);
	if (s != GHT_OK)
	{
		snprintf(fail_msg, sizeof(fail_msg), "mixed batch: %s %s", ght_status_name(s), ght_ctx_error_detail(c->ctx));
		ok = 0;
	}
	/* A keys must have been seen by every lookup */
	for (uint64_t i = 0; i < n && ok; i++)
		if (ops[i] == 2 && (keys[i] & 3) == 0 && !found[i])
		{
			snprintf(fail_msg, sizeof(fail_msg), "a key never deleted was not found during the batch");
			ok = 0;
		}
	/* afterwards: A and C present with their payloads, B gone */
	if (ok)
	{
		ref_table	ref;
		uint64_t	live = 0;
		uint64_t   *mk = malloc(n * sizeof(uint64_t));
		uint64_t   *mv = malloc(n * sizeof(uint64_t));
		uint64_t   *probes = malloc((na + nb + nc) * sizeof(uint64_t));
		uint64_t	np = 0;

		for (uint64_t i = 0; i < na; i++)
		{
			mk[live] = base[i];
			mv[live++] = payload[i];
		}
		for (uint64_t i = 0; i < n; i++)
			if (ops[i] == 0)
			{
				mk[live] = keys[i];
				mv[live++] = vals[i];
			}
		ref_build(&ref, mk, mv, live);
		for (uint64_t i = 0; i < na + nb; i++)
			probes[np++] = base[i];
		for (uint64_t i = 0; i < n; i++)
			if (ops[i] == 0)
				probes[np++] = keys[i];
		ok = check_probes(&cm, t, &ref, probes, np, 1 << 20) && check_export(&cm, t, &ref);
		free(ref.rows);
		free(mk);
		free(mv);
		free(probes);
	}
	ght_table_free(t);
	free(base);
	free(payload);
	free(ops);
	free(keys);
	free(vals);
	free(found);
	return ok;
}

/*
 * Hopscotch: many threads (CPU) or warps (GPU) insert the same new keys at
 * once, each key R times in one mixed batch, beside lookups of keys that
 * are there throughout.  Each key must end up in one slot with all R rows.
 * Rounds at a high load make inserts move keys while others look them up.
 */
static int
case_hop_race(const config *c)
{
	config		cm = *c;
	const int	R = 4;
	uint64_t	m = quick ? 20000 : 60000,
				nbase = 20000;
	uint64_t	n = m * R + nbase;
	uint64_t   *base = random_keys(nbase, c->kw, 0);
	uint64_t   *bv = malloc(nbase * sizeof(uint64_t));
	uint64_t   *fresh = random_keys(m, c->kw, 0);
	uint8_t    *ops = malloc(n);
	uint64_t   *keys = malloc(n * sizeof(uint64_t));
	uint64_t   *vals = malloc(n * sizeof(uint64_t));
	uint8_t    *found = malloc(n);
	ght_table  *t = NULL;
	int			ok = 1;

	cm.load = 0.9;
	/* base keys end in bit 0 = 0, fresh ones in 1: the sets are disjoint */
	for (uint64_t i = 0; i < nbase; i++)
	{
		base[i] = mask_width(base[i] & ~1ull, c->kw);
		bv[i] = i;
	}
	for (uint64_t i = 0; i < m; i++)
		fresh[i] = mask_width(fresh[i] | 1ull, c->kw);
	CHECK_OK(c->ctx, build_table(&cm, base, bv, nbase, &t), "build");
	for (uint64_t i = 0; i < n; i++)
	{
		if (i < m * R)
		{
			ops[i] = 0;
			keys[i] = fresh[i % m];
			vals[i] = 1000000 + i;
		}
		else
		{
			ops[i] = 2;
			keys[i] = base[i - m * R];
			vals[i] = 0;
		}
	}
	for (uint64_t i = n - 1; i > 0; i--)
	{
		uint64_t	j = rnd() % (i + 1);
		uint8_t		o = ops[i];
		uint64_t	kk = keys[i],
					vv = vals[i];

		ops[i] = ops[j];
		keys[i] = keys[j];
		vals[i] = vals[j];
		ops[j] = o;
		keys[j] = kk;
		vals[j] = vv;
	}
	{
		void	   *pk = pack_keys(keys, n, c->kw);
		ght_status	s = ght_mixed_batch(t, ops, pk, vals, n, found);

		free(pk);
		if (s != GHT_OK)
		{
			snprintf(fail_msg, sizeof(fail_msg), "mixed batch: %s %s", ght_status_name(s), ght_ctx_error_detail(c->ctx));
			ok = 0;
		}
	}
	for (uint64_t i = 0; i < n && ok; i++)
		if (ops[i] == 2 && !found[i])
		{
			snprintf(fail_msg, sizeof(fail_msg), "a key present throughout was not found");
			ok = 0;
		}
	if (ok)
	{
		ref_table	ref;
		uint64_t   *mk = malloc(n * sizeof(uint64_t));
		uint64_t   *mv = malloc(n * sizeof(uint64_t));
		uint64_t	live = 0,
					distinct;

		for (uint64_t i = 0; i < nbase; i++)
		{
			mk[live] = base[i];
			mv[live++] = bv[i];
		}
		for (uint64_t i = 0; i < n; i++)
			if (ops[i] == 0)
			{
				mk[live] = keys[i];
				mv[live++] = vals[i];
			}
		ref_build(&ref, mk, mv, live);
		distinct = count_distinct(&ref);
		ok = check_probes(&cm, t, &ref, mk, live, 1 << 20) && check_export(&cm, t, &ref)
			&& check_stats(&cm, t, live, distinct);
		free(ref.rows);
		free(mk);
		free(mv);
	}
	ght_table_free(t);
	free(base);
	free(bv);
	free(fresh);
	free(ops);
	free(keys);
	free(vals);
	free(found);
	return ok;
}

/*
 * Hopscotch: 40 keys that share their home in every table of up to 1024
 * slots overflow one neighbourhood, so the table must double until they
 * split; 30 of them fit without.  Answers must stay right throughout.
 */
static int
case_hop_crowd(const config *c)
{
	config		cm = *c;
	uint32_t	seed = 777;
	uint32_t	ixseed = ght_subseed(seed, 0);
	uint64_t	k[40],
				v[40],
				found = 0,
				h0 = 0;
	ght_build_opts o;
	ght_table  *t = NULL;
	ght_stats	st;
	ref_table	ref;
	void	   *pk,
			   *pv;
	int			ok;

	for (uint64_t x = 1; found < 40; x++)
	{
		uint64_t	key = mask_width(x * 0x9E3779B97F4A7C15ull, c->kw);
		uint32_t	h = c->kw == 4 ? ght_hash_k32((uint32_t) key, ixseed) : ght_hash_k64(key, ixseed);

		if (found == 0)
			h0 = h & 1023;
		if ((h & 1023) == h0)
		{
			k[found] = key;
			v[found] = found;
			found++;
		}
	}
	for (int n = 30; n <= 40; n += 10)
	{
		ght_build_opts_init(&o, c->kw, c->pw);
		o.method = GHT_HOPSCOTCH;
		o.seed = seed;
		pk = pack_keys(k, (uint64_t) n, c->kw);
		pv = pack_keys(v, (uint64_t) n, c->pw);
		CHECK_OK(c->ctx, ght_build(c->ctx, &o, pk, pv, (uint64_t) n, 0, &t), "build");
		free(pk);
		free(pv);
		ght_table_brief(t, &st);
		ref_build(&ref, k, v, (uint64_t) n);
		ok = check_probes(&cm, t, &ref, k, (uint64_t) n, 1000) && check_export(&cm, t, &ref);
		free(ref.rows);
		ght_table_free(t);
		if (!ok)
			return 0;
		CHECK(n == 30 || st.build_attempts > 1, "40 keys of one home fitted without growing");
		CHECK(n == 30 || st.capacity > 1024, "capacity %" PRIu64 " after a crowded neighbourhood",
			  st.capacity);
	}
	return 1;
}

/*
 * Large: random keys (about 10% repeated), checked against the reference
 * and, on the GPU, GPU against CPU pair for pair: 10M keys on the GPU, 2M on
 * the CPU (where the reference check alone takes a minute per configuration
 * at 10M), 1M with --quick.
 */

static int
fetch_all(ght_ctx *ctx, ght_table *t, const void *pk, uint64_t np, uint64_t **pairs, uint64_t *m)
{
	ght_probe  *p;
	uint64_t	got;

	CHECK_OK(ctx, ght_probe_begin(t, pk, np, &p), "probe_begin");
	*pairs = malloc((ght_probe_total(p) + 1) * 2 * sizeof(uint64_t));
	*m = 0;
	for (;;)
	{
		const uint32_t *pi;
		const uint64_t *pv;

		if (ght_probe_next(p, 1 << 22, &pi, &pv, &got) != GHT_OK || got == 0)
			break;
		for (uint64_t i = 0; i < got; i++)
		{
			(*pairs)[2 * (*m + i)] = pi[i];
			(*pairs)[2 * (*m + i) + 1] = pv[i];
		}
		*m += got;
	}
	got = ght_probe_total(p);
	ght_probe_end(p);
	CHECK(*m == got, "fetched %" PRIu64 " of %" PRIu64 " pairs", *m, got);
	return 1;
}

static int
case_large(const config *c)
{
	uint64_t	n = quick ? 1000000 : (c->ctx == gpu_ctx ? 10000000 : 2000000);
	uint64_t   *k = random_keys(n, c->kw, 0);
	uint64_t   *v = random_payloads(n, c->pw);
	uint64_t   *x = random_keys(n / 10, c->kw, 0);
	int			ok;

	for (uint64_t i = 0; i < n / 10; i++)
		k[rnd() % n] = k[rnd() % n];
	ok = check_table_passes(c, k, v, n, x, n / 10, 0);
	if (ok && gpu_ctx != NULL && c->ctx == gpu_ctx)
	{
		config		cc = *c;
		ght_table  *tg,
				   *tc;
		void	   *pk = pack_keys(k, n, c->kw);
		uint64_t   *pg = NULL,
				   *pc = NULL,
					mg = 0,
					mc = 0;

		cc.ctx = cpu_ctx;
		ok = build_table(c, k, v, n, &tg) == GHT_OK;
		if (ok && build_table(&cc, k, v, n, &tc) == GHT_OK)
		{
			ok = fetch_all(gpu_ctx, tg, pk, n, &pg, &mg) && fetch_all(cpu_ctx, tc, pk, n, &pc, &mc);
			/* a mutable table gives a key's rows in no particular order */
			if (ok && (c->flags & GHT_BUILD_MUTABLE))
			{
				qsort(pg, mg, 2 * sizeof(uint64_t), pair_cmp);
				qsort(pc, mc, 2 * sizeof(uint64_t), pair_cmp);
			}
			if (ok && (mg != mc || memcmp(pg, pc, mg * 2 * sizeof(uint64_t)) != 0))
			{
				snprintf(fail_msg, sizeof(fail_msg), "GPU and CPU pairs differ (%" PRIu64 " vs %" PRIu64 ")", mg, mc);
				ok = 0;
			}
			ght_table_free(tc);
		}
		else
			snprintf(fail_msg, sizeof(fail_msg), "twin build failed");
		if (tg)
			ght_table_free(tg);
		free(pg);
		free(pc);
		free(pk);
	}
	free(k);
	free(v);
	free(x);
	return ok;
}

/*
 * The keys' Bloom filter (ght_keyfilter.h): no key added is ever refused,
 * in either width and whichever way it was added, sentinels included; and
 * few absent keys pass at the designed size.
 */
static int
cmp_i64(const void *a, const void *b)
{
	int64_t		x = *(const int64_t *) a,
				y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

static int
case_key_filter(const config *c)
{
	const uint64_t n = quick ? 20000 : 200000;
	const uint64_t absent_tries = quick ? 100000 : 1000000;

	CHECK(ght_keyfilter_words(0) == 1, "words for 0 keys: %" PRIu64, ght_keyfilter_words(0));
	CHECK(ght_keyfilter_words(1e12) == GHT_KEYFILTER_MAX_WORDS, "words are not capped");
	for (double k = 1; k < 1e8; k *= 7)
	{
		uint64_t	w = ght_keyfilter_words(k);

		CHECK((w & (w - 1)) == 0 &&
			  (w * 64 >= k * GHT_KEYFILTER_BITS_PER_KEY || w == GHT_KEYFILTER_MAX_WORDS),
			  "%" PRIu64 " words for %.0f keys", w, k);
	}
	for (int kw = 4; kw <= 8; kw += 4)
	{
		uint64_t	nwords = ght_keyfilter_words((double) n);
		uint64_t   *words = calloc(nwords, sizeof(uint64_t));
		void	   *keys = malloc(n * kw);
		int64_t    *wide = malloc(n * sizeof(int64_t));
		uint64_t	passed = 0,
					tried = 0;
		const int64_t sentinels[] = {0, -1, 1, INT32_MIN, INT32_MAX, INT64_MIN, INT64_MAX};

		CHECK(words && keys && wide, "out of memory");
		for (uint64_t i = 0; i < n; i++)
		{
			int64_t		k = i < 7 ? sentinels[i] : (int64_t) rnd();

			if (kw == 4)
				k = (int32_t) k;
			if (kw == 4)
				((int32_t *) keys)[i] = (int32_t) k;
			else
				((int64_t *) keys)[i] = k;
			wide[i] = k;
		}
		/* half added as one process would, half with atomic ORs */
		ght_keyfilter_add(words, nwords, keys, kw, n / 2, false);
		ght_keyfilter_add(words, nwords, (char *) keys + (n / 2) * kw, kw, n - n / 2, true);
		for (uint64_t i = 0; i < n; i++)
			CHECK(ght_keyfilter_may_contain(words, nwords, wide[i]),
				  "k%d: key %" PRId64 " (row %" PRIu64 ") refused", kw * 8, wide[i], i);
		qsort(wide, n, sizeof(int64_t), cmp_i64);
		while (tried < absent_tries)
		{
			int64_t		k = (int64_t) rnd();

			if (kw == 4)
				k = (int32_t) k;
			if (bsearch(&k, wide, n, sizeof(int64_t), cmp_i64))
				continue;
			tried++;
			passed += ght_keyfilter_may_contain(words, nwords, k);
		}
		/* 16 to 32 bits a key, four bits in one word: about 0.2-1 % */
		CHECK(passed * 100 < tried * 2, "k%d: %" PRIu64 " of %" PRIu64 " absent keys passed",
			  kw * 8, passed, tried);
		free(words);
		free(keys);
		free(wide);
	}
	return 1;
}

/* ---- runner ------------------------------------------------------------- */

typedef int (*case_fn) (const config *c);

typedef struct test_case
{
	const char *name;
	case_fn		fn;
	int			needs_gpu;
	int			linear_only;	/* 1: not cuckoo; 2: linear only; 3: hopscotch only */
	int			once;			/* not per width/method */
} test_case;

static const test_case cases[] = {
	{"random", case_random, 0, 0, 0},
	{"duplicates", case_duplicates, 0, 0, 0},
	{"transfer_stats", case_transfer_stats, 0, 0, 0},
	{"hot_key_100000", case_hot_key, 0, 0, 0},
	{"empty", case_empty, 0, 0, 0},
	{"single", case_single, 0, 0, 0},
	{"all_equal", case_all_equal, 0, 0, 0},
	{"sentinels", case_sentinels, 0, 0, 0},
	{"load_factors", case_load_factors, 0, 0, 0},
	{"assume_unique", case_unique_flag, 0, 0, 0},
	{"probe_groups", case_probe_groups, 0, 2, 0},
	{"mutable", case_mutable, 0, 1, 0},
	{"concurrent", case_concurrent, 1, 1, 0},
	{"hop_race", case_hop_race, 0, 3, 0},
	{"hop_crowd", case_hop_crowd, 0, 3, 0},
	{"errors", case_errors, 0, 0, 1},
	{"interrupt", case_interrupt, 0, 0, 0},
	{"device_memory", case_device_memory, 0, 0, 0},
	{"large", case_large, 0, 0, 0},
	{"key_filter", case_key_filter, 0, 0, 1},
};

static int
filter_matches(const char *name)
{
	const char *f = filter;

	for (;;)
	{
		const char *comma = strchr(f, ',');
		size_t		len = comma ? (size_t) (comma - f) : strlen(f);

		for (const char *p = name; len > 0 && *p; p++)
			if (strncmp(p, f, len) == 0)
				return 1;
		if (comma == NULL)
			return 0;
		f = comma + 1;
	}
}

static void
run_case(const test_case *tc, const config *c)
{
	double		t0;
	int			ok;
	struct timespec ts;

	if (c->method == GHT_CUCKOO && tc->linear_only)
		return;
	if ((tc->linear_only == 2 && c->method != GHT_LINEAR) ||
		(tc->linear_only == 3 && c->method != GHT_HOPSCOTCH))
		return;
	snprintf(case_name, sizeof(case_name), "%s %s %s k%d p%d", tc->name, c->dev,
			 ght_method_name(c->method), c->kw * 8, c->pw * 8);
	if (filter && !filter_matches(case_name))
		return;
	rng_state = 12345;
	fail_msg[0] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec + ts.tv_nsec / 1e9;
	ok = tc->fn(c);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ok)
		n_pass++;
	else
		n_fail++;
	printf("%s  %-44s %6.2fs%s%s\n", ok ? "ok  " : "FAIL", case_name,
		   ts.tv_sec + ts.tv_nsec / 1e9 - t0, ok ? "" : "  ", ok ? "" : fail_msg);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	int			cpu_only = 0;
	char		why[512];
	int			ngpu;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--quick") == 0)
			quick = 1;
		else if (strcmp(argv[i], "--cpu-only") == 0)
			cpu_only = 1;
		else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
			filter = argv[++i];
		else
		{
			fprintf(stderr, "usage: %s [--quick] [--cpu-only] [--filter SUBSTRING[,SUBSTRING...]]\n", argv[0]);
			return 2;
		}
	}
	if (ght_ctx_create(GHT_CPU, 0, &cpu_ctx, why, sizeof(why)) != GHT_OK)
	{
		fprintf(stderr, "cannot create a CPU context\n");
		return 1;
	}
	ngpu = cpu_only ? 0 : ght_gpu_count(why, sizeof(why));
	if (ngpu > 0)
	{
		ght_device_info info;

		if (ght_ctx_create(GHT_GPU, 0, &gpu_ctx, why, sizeof(why)) != GHT_OK)
		{
			printf("FAIL  GPU context: %s\n", why);
			n_fail++;
			gpu_ctx = NULL;
		}
		else if (ght_gpu_info(0, &info, why, sizeof(why)) == GHT_OK)
			printf("GPU 0: %s, compute capability %d.%d, %d multiprocessors\n",
				   info.name, info.cc_major, info.cc_minor, info.multiprocessors);
	}
	else
		printf("GPU cases skipped: %s\n", cpu_only ? "--cpu-only" : why);

	for (int d = 0; d < 2; d++)
	{
		ght_ctx    *ctx = d == 0 ? cpu_ctx : gpu_ctx;

		if (ctx == NULL)
			continue;
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		{
			const test_case *tc = &cases[i];

			for (int m = GHT_CUCKOO; m <= GHT_HOPSCOTCH; m++)
				for (int kw = 4; kw <= 8; kw += 4)
					for (int pw = 4; pw <= 8; pw += 4)
					{
						/* hopscotch tables are always mutable */
						config		c = {ctx, d == 0 ? "cpu" : "gpu", (ght_method) m, kw, pw,
							m == GHT_HOPSCOTCH ? GHT_BUILD_MUTABLE : 0, 0, 0};

						/* on the CPU only hopscotch runs mixed batches (in threads) */
						if (tc->needs_gpu && d == 0 && m != GHT_HOPSCOTCH)
							continue;
						if (tc->once && (m != GHT_CUCKOO || kw != 4 || pw != 4))
							continue;
						run_case(tc, &c);
					}
		}
	}
	ght_ctx_destroy(gpu_ctx);
	ght_ctx_destroy(cpu_ctx);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
