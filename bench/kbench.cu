/*
 * kbench.cu - kernel benchmark of the core hash tables on the GPU.
 *
 * For each method, key width, table size (2^s slots, load x 2^s keys) and
 * load factor: build throughput
 * (distinct keys already on the device; "build" assumes unique keys as
 * Alcantara's hash table does, "build_multi" adds the sort that groups
 * duplicate keys) and lookup throughput at hit rates of 100, 50 and 0 %.
 * Each lookup writes the key's value (the inline payload) to device memory.
 * The baseline row is the seed's naive linear-probing kernel (one thread per
 * key, 32-bit keys and values, 0xffffffff as the empty key), run in the same
 * process.  Bandwidth is given as the lookups' minimum traffic (key read,
 * value written, one 32-byte sector of table per lookup) over their time, as
 * a fraction of a device-to-device copy measured at the start.
 *
 * Usage: kbench [--quick] [--trace] [--hopscotch] [--csv FILE] [--min-log2 N] [--max-log2 N]
 *   --trace: phase times of single builds (GHT_TRACE) instead of the sweep
 *   --hopscotch: the mutable tables instead (bench_mutable below): hopscotch
 *     beside mutable linear probing, at 2^--max-log2 slots (2^24 unless given)
 */
#include "gpu_internal.cuh"

#include <algorithm>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

#define CK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); exit(1); } } while (0)

static FILE *csv;
static double copy_gbs;

/* Distinct keys: a bijective mix of 0..n-1 (salted), misses from n..2n-1. */
template <typename KT>
__global__ void
gen_keys(KT *k, uint64_t n, uint64_t first, int hit_pct, uint64_t table_n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n; i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint64_t	x = first + i;

		/* with hit_pct < 100, every (100/(100-hit)) -th probe is a miss */
		if (hit_pct < 100 && (hit_pct == 0 || (i * 7919) % 100 >= (uint64_t) hit_pct))
			x = table_n + i;
		else if (hit_pct <= 100 && table_n)
			x = (i * 2654435761ull) % table_n;	/* hits in scattered order */
		if (sizeof(KT) == 4)
			k[i] = (KT) ght_fmix32((uint32_t) x ^ 0x9E3779B9u);
		else
			k[i] = (KT) ght_fmix64(x ^ 0x9E3779B97F4A7C15ull);
	}
}

template <typename KT>
__global__ void
gen_vals(KT *v, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n; i += (uint64_t) gridDim.x * blockDim.x)
		v[i] = (KT) (i * 3 + 1);
}

/* ---- the naive baseline (seed 000): one thread per key, 32-bit -------- */

struct naive_slot
{
	uint32_t	key;
	uint32_t	value;
};

#define NAIVE_EMPTY 0xffffffffu

__device__ __forceinline__ uint32_t
naive_hash(uint32_t k)
{
	return ght_fmix32(k);
}

__global__ void
naive_insert(naive_slot *t, uint32_t mask, const uint32_t *keys, const uint32_t *vals, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n; i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint32_t	k = keys[i];
		uint32_t	slot = naive_hash(k) & mask;

		if (k == NAIVE_EMPTY)
			continue;			/* the one key this table cannot hold */
		for (;;)
		{
			uint32_t	prev = atomicCAS(&t[slot].key, NAIVE_EMPTY, k);

			if (prev == NAIVE_EMPTY || prev == k)
			{
				t[slot].value = vals[i];
				break;
			}
			slot = (slot + 1) & mask;
		}
	}
}

__global__ void
naive_lookup(const naive_slot *t, uint32_t mask, const uint32_t *keys, uint32_t *out, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n; i += (uint64_t) gridDim.x * blockDim.x)
	{
		uint32_t	k = keys[i];
		uint32_t	slot = naive_hash(k) & mask;

		for (;;)
		{
			naive_slot	s = t[slot];

			if (s.key == k)
			{
				out[i] = s.value;
				break;
			}
			if (s.key == NAIVE_EMPTY)
			{
				out[i] = NAIVE_EMPTY;
				break;
			}
			slot = (slot + 1) & mask;
		}
	}
}

/* ---- timing ------------------------------------------------------------- */

template <typename F>
static double
time_ms(F f, int reps, cudaStream_t st = 0)
{
	cudaEvent_t a,
				b;
	std::vector<float> v;

	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	f();						/* warm-up */
	CK(cudaDeviceSynchronize());
	for (int r = 0; r < reps; r++)
	{
		float		ms;

		CK(cudaEventRecord(a, st));
		f();
		CK(cudaEventRecord(b, st));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&ms, a, b));
		v.push_back(ms);
	}
	CK(cudaEventDestroy(a));
	CK(cudaEventDestroy(b));
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

static double
measure_copy(void)
{
	size_t		bytes = (size_t) 2 << 30;
	void	   *a,
			   *b;
	double		ms;

	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMemset(a, 1, bytes));
	ms = time_ms([&] { CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice)); }, 10);
	CK(cudaFree(a));
	CK(cudaFree(b));
	return 2.0 * bytes / (ms * 1e6);	/* read + write, GB/s */
}

static void
row(const char *method, int kbits, int log2n, double load, const char *op, int hit, double gkeys,
	double bw_frac, double bytes_per_key, double mean_probes, unsigned attempts)
{
	printf("%-12s k%-2d 2^%-2d load %.2f %-11s hit %3d%%  %7.2f Gkeys/s  bw %5.1f%%  %5.2f B/key  probes %.2f\n",
		   method, kbits, log2n, load, op, hit, gkeys, bw_frac * 100, bytes_per_key, mean_probes);
	fflush(stdout);
	if (csv)
		fprintf(csv, "%s,%d,%d,%.2f,%s,%d,%.4f,%.4f,%.3f,%.3f,%u\n", method, kbits, log2n, load, op, hit,
				gkeys, bw_frac, bytes_per_key, mean_probes, attempts);
	if (csv)
		fflush(csv);
}

/* ---- one configuration of a gpuhash table ------------------------------- */

template <typename KT>
static void
bench_table(ght_ctx *ctx, const char *name, ght_method m, int group, int layout, int log2n, double load, int reps)
{
	uint64_t	n = (uint64_t) (load * ((uint64_t) 1 << log2n));
	KT		   *keys,
			   *vals,
			   *probe,
			   *out;
	ght_build_opts o;
	ght_table  *t = NULL;
	ght_stats	st;
	double		ms;
	cudaStream_t s0 = gctx(ctx)->stream[0];

	CK(cudaMalloc(&keys, n * sizeof(KT)));
	CK(cudaMalloc(&vals, n * sizeof(KT)));
	CK(cudaMalloc(&probe, n * sizeof(KT)));
	CK(cudaMalloc(&out, n * sizeof(KT)));
	gen_keys<KT><<<grid_for(n, 256), 256>>>(keys, n, 0, 101, 0);
	gen_vals<KT><<<grid_for(n, 256), 256>>>(vals, n);
	CK(cudaDeviceSynchronize());

	ght_build_opts_init(&o, sizeof(KT), sizeof(KT));
	o.method = m;
	o.load_factor = load;
	o.linear_group = group;
	o.cuckoo_layout = layout;
	for (int multi = 0; multi <= 1; multi++)
	{
		o.flags = multi ? 0 : GHT_BUILD_ASSUME_UNIQUE;
		ms = time_ms([&] {
			if (t)
				ght_table_free(t);
			t = NULL;
			if (ght_build(ctx, &o, keys, vals, n, 1, &t) != GHT_OK)
			{
				fprintf(stderr, "build failed: %s\n", ght_ctx_error_detail(ctx));
				exit(1);
			}
		}, reps > 3 ? 3 : reps);
		if (ght_table_stats(t, &st) != GHT_OK)
			exit(1);
		row(name, sizeof(KT) * 8, log2n, st.load_factor, multi ? "build_multi" : "build", 100, n / (ms * 1e6),
			n * 2.0 * sizeof(KT) / (ms * 1e6) / copy_gbs, (double) st.bytes / n, st.mean_probes, st.build_attempts);
	}
	for (int hit = 100; hit >= 0; hit -= 50)
	{
		gen_keys<KT><<<grid_for(n, 256), 256>>>(probe, n, 0, hit, n);
		CK(cudaDeviceSynchronize());
		ms = time_ms([&] {
			if (ght_gpu_lookup_device(t, probe, n, out, s0) != GHT_OK)
				exit(1);
		}, reps, s0);
		row(name, sizeof(KT) * 8, log2n, st.load_factor, "lookup", hit, n / (ms * 1e6),
			n * (2.0 * sizeof(KT) + 32) / (ms * 1e6) / copy_gbs, (double) st.bytes / n, st.mean_probes,
			st.build_attempts);
	}
	ght_table_free(t);
	CK(cudaFree(keys));
	CK(cudaFree(vals));
	CK(cudaFree(probe));
	CK(cudaFree(out));
}

/*
 * A mutable table (mutable linear probing or hopscotch) of 2^log2n slots at
 * a load: "insert" is a build from keys on the device into an empty table of
 * that size (allocation included), "delete" deletes every key of a freshly
 * built table (keys on the device), "lookup" looks up every key (hit 100 %)
 * or as many keys that are not there (hit 0 %).  Median of reps; a rebuild
 * before each timed delete is not timed.  load and attempts are the table's
 * own after the build: a hopscotch table that doubled shows it there.
 */
template <typename KT>
static void
bench_mutable(ght_ctx *ctx, const char *name, ght_method m, int log2n, double load, int reps)
{
	uint64_t	n = (uint64_t) (load * ((uint64_t) 1 << log2n));
	KT		   *keys,
			   *vals,
			   *probe,
			   *out;
	ght_build_opts o;
	ght_table  *t = NULL;
	ght_stats	st;
	double		ms;
	cudaStream_t s0 = gctx(ctx)->stream[0];
	std::vector<float> del;

	CK(cudaMalloc(&keys, n * sizeof(KT)));
	CK(cudaMalloc(&vals, n * sizeof(KT)));
	CK(cudaMalloc(&probe, n * sizeof(KT)));
	CK(cudaMalloc(&out, n * sizeof(KT)));
	gen_keys<KT><<<grid_for(n, 256), 256>>>(keys, n, 0, 101, 0);
	gen_vals<KT><<<grid_for(n, 256), 256>>>(vals, n);
	CK(cudaDeviceSynchronize());

	ght_build_opts_init(&o, sizeof(KT), sizeof(KT));
	o.method = m;
	o.load_factor = load;
	o.flags = GHT_BUILD_MUTABLE;
	auto		build = [&] {
		if (t)
			ght_table_free(t);
		t = NULL;
		if (ght_build(ctx, &o, keys, vals, n, 1, &t) != GHT_OK)
		{
			fprintf(stderr, "build failed: %s\n", ght_ctx_error_detail(ctx));
			exit(1);
		}
	};
	ms = time_ms(build, reps > 3 ? 3 : reps);
	if (ght_table_stats(t, &st) != GHT_OK)
		exit(1);
	row(name, sizeof(KT) * 8, log2n, st.load_factor, "insert", 100, n / (ms * 1e6),
		n * 2.0 * sizeof(KT) / (ms * 1e6) / copy_gbs, (double) st.bytes / n, st.mean_probes, st.build_attempts);
	for (int hit = 100; hit >= 0; hit -= 100)
	{
		gen_keys<KT><<<grid_for(n, 256), 256>>>(probe, n, 0, hit, n);
		CK(cudaDeviceSynchronize());
		ms = time_ms([&] {
			if (ght_gpu_lookup_device(t, probe, n, out, s0) != GHT_OK)
				exit(1);
		}, reps, s0);
		row(name, sizeof(KT) * 8, log2n, st.load_factor, "lookup", hit, n / (ms * 1e6),
			n * (2.0 * sizeof(KT) + 32) / (ms * 1e6) / copy_gbs, (double) st.bytes / n, st.mean_probes,
			st.build_attempts);
	}
	for (int r = 0; r < (reps > 3 ? 3 : reps); r++)
	{
		cudaEvent_t a,
					b;
		float		dms;
		uint64_t	removed = 0;

		build();
		CK(cudaDeviceSynchronize());
		CK(cudaEventCreate(&a));
		CK(cudaEventCreate(&b));
		CK(cudaEventRecord(a, s0));
		if (ght_gpu_delete_device(t, keys, n, &removed) != GHT_OK || removed != n)
		{
			fprintf(stderr, "delete failed (%llu of %llu removed): %s\n", (unsigned long long) removed,
					(unsigned long long) n, ght_ctx_error_detail(ctx));
			exit(1);
		}
		CK(cudaEventRecord(b, s0));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&dms, a, b));
		CK(cudaEventDestroy(a));
		CK(cudaEventDestroy(b));
		del.push_back(dms);
	}
	std::sort(del.begin(), del.end());
	ms = del[del.size() / 2];
	row(name, sizeof(KT) * 8, log2n, st.load_factor, "delete", 100, n / (ms * 1e6),
		n * (sizeof(KT) + 32.0) / (ms * 1e6) / copy_gbs, (double) st.bytes / n, st.mean_probes, st.build_attempts);
	ght_table_free(t);
	CK(cudaFree(keys));
	CK(cudaFree(vals));
	CK(cudaFree(probe));
	CK(cudaFree(out));
}

static void
bench_naive(cudaStream_t s0, int log2n, double load, int reps)
{
	uint64_t	cap = (uint64_t) 1 << log2n;
	uint64_t	n = (uint64_t) (load * cap);
	uint32_t   *keys,
			   *vals,
			   *probe,
			   *out;
	naive_slot *t;
	double		ms;

	CK(cudaMalloc(&keys, n * 4));
	CK(cudaMalloc(&vals, n * 4));
	CK(cudaMalloc(&probe, n * 4));
	CK(cudaMalloc(&out, n * 4));
	CK(cudaMalloc(&t, cap * sizeof(naive_slot)));
	gen_keys<uint32_t><<<grid_for(n, 256), 256>>>(keys, n, 0, 101, 0);
	gen_vals<uint32_t><<<grid_for(n, 256), 256>>>(vals, n);
	ms = time_ms([&] {
		CK(cudaMemsetAsync(t, 0xff, cap * sizeof(naive_slot), s0));
		naive_insert<<<grid_for(n, 256), 256, 0, s0>>>(t, (uint32_t) (cap - 1), keys, vals, n);
	}, reps > 3 ? 3 : reps, s0);
	row("naive", 32, log2n, (double) n / cap, "build", 100, n / (ms * 1e6),
		n * 8.0 / (ms * 1e6) / copy_gbs, cap * 8.0 / n, 0, 1);
	for (int hit = 100; hit >= 0; hit -= 50)
	{
		gen_keys<uint32_t><<<grid_for(n, 256), 256>>>(probe, n, 0, hit, n);
		CK(cudaDeviceSynchronize());
		ms = time_ms([&] { naive_lookup<<<grid_for(n, 256), 256, 0, s0>>>(t, (uint32_t) (cap - 1), probe, out, n); },
					 reps, s0);
		row("naive", 32, log2n, (double) n / cap, "lookup", hit, n / (ms * 1e6),
			n * 40.0 / (ms * 1e6) / copy_gbs, cap * 8.0 / n, 0, 1);
	}
	CK(cudaFree(keys));
	CK(cudaFree(vals));
	CK(cudaFree(probe));
	CK(cudaFree(out));
	CK(cudaFree(t));
}

int
main(int argc, char **argv)
{
	int			quick = 0,
				trace = 0,
				hop = 0,
				hi_given = 0,
				lo = 20,
				hi = 27;
	const char *csv_path = NULL;
	ght_ctx    *ctx;
	char		why[256];
	cudaDeviceProp p;
	std::vector<double> loads = {0.5, 0.7, 0.8, 0.85, 0.9, 0.95};

	for (int i = 1; i < argc; i++)
	{
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--trace"))
			trace = 1;
		else if (!strcmp(argv[i], "--hopscotch"))
			hop = 1;
		else if (!strcmp(argv[i], "--csv") && i + 1 < argc)
			csv_path = argv[++i];
		else if (!strcmp(argv[i], "--min-log2") && i + 1 < argc)
			lo = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--max-log2") && i + 1 < argc)
		{
			hi = atoi(argv[++i]);
			hi_given = 1;
		}
		else
		{
			fprintf(stderr, "usage: %s [--quick] [--trace] [--hopscotch] [--csv FILE] [--min-log2 N] [--max-log2 N]\n",
					argv[0]);
			return 2;
		}
	}
	if (ght_ctx_create(GHT_GPU, 0, &ctx, why, sizeof(why)) != GHT_OK)
	{
		fprintf(stderr, "no GPU: %s\n", why);
		return 1;
	}
	CK(cudaGetDeviceProperties(&p, 0));
	copy_gbs = measure_copy();
	printf("device: %s, %d SMs, %.1f GB; device-to-device copy %.0f GB/s (read + write)\n", p.name,
		   p.multiProcessorCount, p.totalGlobalMem / 1e9, copy_gbs);
	if (csv_path)
	{
		csv = fopen(csv_path, "w");
		fprintf(csv, "# device=%s copy_gbs=%.1f\n", p.name, copy_gbs);
		fprintf(csv, "method,key_bits,log2_slots,load,op,hit_pct,gkeys_per_s,bw_fraction,bytes_per_key,mean_probes,build_attempts\n");
	}
	if (trace)
	{
		/* phase times of one build of each kind at 2^26 slots, load 0.9 */
		setenv("GHT_TRACE", "1", 1);
		bench_table<uint32_t>(ctx, "cuckoo", GHT_CUCKOO, 1, 2, 26, 0.9, 1);
		bench_table<uint64_t>(ctx, "cuckoo", GHT_CUCKOO, 1, 2, 26, 0.9, 1);
		bench_table<uint32_t>(ctx, "linear", GHT_LINEAR, 1, 0, 26, 0.9, 1);
		return 0;
	}
	if (hop)
	{
		int			l2 = hi_given ? hi : 24;

		for (int kb = 32; kb <= 64; kb += 32)
			for (double load : {0.5, 0.6, 0.7, 0.8, 0.9, 0.95})
			{
				if (kb == 32)
				{
					bench_mutable<uint32_t>(ctx, "linear_mut", GHT_LINEAR, l2, load, quick ? 3 : 5);
					bench_mutable<uint32_t>(ctx, "hopscotch", GHT_HOPSCOTCH, l2, load, quick ? 3 : 5);
				}
				else
				{
					bench_mutable<uint64_t>(ctx, "linear_mut", GHT_LINEAR, l2, load, quick ? 3 : 5);
					bench_mutable<uint64_t>(ctx, "hopscotch", GHT_HOPSCOTCH, l2, load, quick ? 3 : 5);
				}
			}
		if (csv)
			fclose(csv);
		ght_ctx_destroy(ctx);
		return 0;
	}
	if (quick)
		loads = {0.5, 0.8, 0.9};
	for (int l2 = lo; l2 <= hi; l2 += (quick ? 3 : 1))
	{
		int			reps = l2 >= 25 ? 5 : 10;

		for (double load : loads)
		{
			bench_naive(gctx(ctx)->stream[0], l2, load, reps);
			bench_table<uint32_t>(ctx, "cuckoo", GHT_CUCKOO, 1, 2, l2, load, reps);
			bench_table<uint32_t>(ctx, "cuckoo_3rds", GHT_CUCKOO, 1, 1, l2, load, reps);
			bench_table<uint32_t>(ctx, "linear", GHT_LINEAR, 1, 0, l2, load, reps);
			bench_table<uint32_t>(ctx, "linear_g4", GHT_LINEAR, 4, 0, l2, load, reps);
			bench_table<uint64_t>(ctx, "cuckoo", GHT_CUCKOO, 1, 2, l2, load, reps);
			bench_table<uint64_t>(ctx, "linear", GHT_LINEAR, 1, 0, l2, load, reps);
		}
	}
	if (csv)
		fclose(csv);
	ght_ctx_destroy(ctx);
	return 0;
}
