/*
 * cpubench.c - build and lookup throughput of the core tables on the CPU
 * (one thread), each method at its default load, for the sizes given; the
 * numbers behind ght_choose_method's CPU rule.  Prints a table and, with
 * --csv FILE, writes it.
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
		fprintf(csv, "method,log2_keys,build_mkeys_per_s,lookup_hit100_mkeys_per_s,lookup_hit0_mkeys_per_s,bytes_per_key\n");
	printf("%-7s %-8s %12s %14s %14s %10s\n", "method", "keys", "build Mk/s", "hit 100% Mk/s", "hit 0% Mk/s", "B/key");
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
		for (int m = GHT_CUCKOO; m <= GHT_LINEAR; m++)
		{
			ght_build_opts o;
			ght_table  *t;
			ght_stats	st;
			double		t0,
						tb,
						th,
						tm;

			ght_build_opts_init(&o, 4, 4);
			o.method = (ght_method) m;
			o.flags = GHT_BUILD_ROWNUM_PAYLOAD;
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
			printf("%-7s 2^%-6d %12.1f %14.1f %14.1f %10.2f\n", ght_method_name(m), l2,
				   n / tb / 1e6, n / th / 1e6, n / tm / 1e6, (double) st.bytes / n);
			if (csv)
				fprintf(csv, "%s,%d,%.2f,%.2f,%.2f,%.3f\n", ght_method_name(m), l2,
						n / tb / 1e6, n / th / 1e6, n / tm / 1e6, (double) st.bytes / n);
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
