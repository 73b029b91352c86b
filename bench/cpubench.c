/*
 * cpubench.c - build and lookup throughput of the core tables on the CPU
 * (one thread), each method at its default load, for the sizes given; the
 * numbers behind ght_choose_method's CPU rule.  The mutable tables (linear
 * probing and hopscotch) also delete every key of a second build.  Prints a
 * table and, with --csv FILE, writes it.
 *
 * Usage: cpubench [--csv FILE] [--min-log2 N] [--max-log2 N]
 */
#include "ght.h"
#include "ght_layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	int			lo = 14,
				hi = 23;
	FILE	   *csv = NULL;
	ght_ctx    *ctx;
	char		why[256];

	for (int i = 1; i < argc; i++)
	{
		if (!strcmp(argv[i], "--csv") && i + 1 < argc)
			csv = fopen(argv[++i], "w");
		else if (!strcmp(argv[i], "--min-log2") && i + 1 < argc)
			lo = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--max-log2") && i + 1 < argc)
			hi = atoi(argv[++i]);
		else
		{
			fprintf(stderr, "usage: %s [--csv FILE] [--min-log2 N] [--max-log2 N]\n", argv[0]);
			return 2;
		}
	}
	if (ght_ctx_create(GHT_CPU, 0, &ctx, why, sizeof(why)) != GHT_OK)
		return 1;
	if (csv)
		fprintf(csv, "method,log2_keys,build_mkeys_per_s,lookup_hit100_mkeys_per_s,lookup_hit0_mkeys_per_s,bytes_per_key,"
				"delete_mkeys_per_s\n");
	printf("%-11s %-8s %12s %14s %14s %10s %12s\n", "method", "keys", "build Mk/s", "hit 100% Mk/s", "hit 0% Mk/s",
		   "B/key", "delete Mk/s");
	for (int l2 = lo; l2 <= hi; l2++)
	{
		uint64_t	n = (uint64_t) 1 << l2;
		uint32_t   *keys = malloc(n * 4),
				   *miss = malloc(n * 4);
		uint8_t    *out = malloc(n);

		for (uint64_t i = 0; i < n; i++)
		{
			keys[i] = ght_fmix32((uint32_t) i);
			miss[i] = ght_fmix32((uint32_t) (i + n));
		}
		/* cuckoo, linear, mutable linear, hopscotch (always mutable) */
		for (int v = 0; v < 4; v++)
		{
			ght_method	m = v == 0 ? GHT_CUCKOO : v == 3 ? GHT_HOPSCOTCH : GHT_LINEAR;
			int			mut = v >= 2;
			const char *name = v == 2 ? "linear_mut" : ght_method_name(m);
			ght_build_opts o;
			ght_table  *t;
			ght_stats	st;
			uint64_t	removed = 0;
			double		t0,
						tb,
						th,
						tm,
						td = 0;

			ght_build_opts_init(&o, 4, 4);
			o.method = m;
			o.flags = GHT_BUILD_ROWNUM_PAYLOAD | (mut ? GHT_BUILD_MUTABLE : 0);
			t0 = now();
			if (ght_build(ctx, &o, keys, NULL, n, 0, &t) != GHT_OK)
				return 1;
			tb = now() - t0;
			t0 = now();
			ght_contains(t, keys, n, out);
			th = now() - t0;
			t0 = now();
			ght_contains(t, miss, n, out);
			tm = now() - t0;
			ght_table_stats(t, &st);
			if (mut)
			{
				ght_table_free(t);
				if (ght_build(ctx, &o, keys, NULL, n, 0, &t) != GHT_OK)
					return 1;
				t0 = now();
				if (ght_delete(t, keys, n, &removed) != GHT_OK || removed != n)
					return 1;
				td = now() - t0;
			}
			printf("%-11s 2^%-6d %12.1f %14.1f %14.1f %10.2f %12.1f\n", name, l2,
				   n / tb / 1e6, n / th / 1e6, n / tm / 1e6, (double) st.bytes / n, td > 0 ? n / td / 1e6 : 0);
			if (csv)
				fprintf(csv, "%s,%d,%.2f,%.2f,%.2f,%.3f,%.2f\n", name, l2,
						n / tb / 1e6, n / th / 1e6, n / tm / 1e6, (double) st.bytes / n,
						td > 0 ? n / td / 1e6 : 0);
			ght_table_free(t);
		}
		free(keys);
		free(miss);
		free(out);
	}
	if (csv)
		fclose(csv);
	ght_ctx_destroy(ctx);
	return 0;
}
