/*
 * ght_internal.h - what the CPU and GPU halves of the core share: the context
 * and table structures and the entry points of each half.  Not installed.
 */
#ifndef GHT_INTERNAL_H
#define GHT_INTERNAL_H

#include "ght.h"
#include "ght_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults, chosen by measurement (bench/NOTES.md). */
#define GHT_CUCKOO_DEFAULT_LOAD 0.90
#define GHT_LINEAR_DEFAULT_LOAD 0.50
#define GHT_CUCKOO_DEFAULT_LAYOUT 2	/* hashes over the whole bucket */
#define GHT_LINEAR_MUTABLE_MAX_LOAD 0.80	/* grow before passing this */
#define GHT_HOPSCOTCH_DEFAULT_LOAD 0.50
#define GHT_HOPSCOTCH_MAX_LOAD 0.95	/* grow before passing this (or when a
										 * neighbourhood fills) */
#define GHT_HOPSCOTCH_GROW_TRIES 8	/* doublings of a batch's table, at most */
#define GHT_MAX_LOAD 0.95
#define GHT_MIN_LOAD 0.10
#define GHT_DEFAULT_SEED 0x5eed1234u
#define GHT_CUCKOO_BUCKET_RESEEDS 64	/* per bucket, before the table grows */
#define GHT_CUCKOO_REDISTRIBUTIONS 8	/* first-level reseeds before more buckets */
#define GHT_CUCKOO_EVICTION_ROUNDS 200	/* per bucket attempt */

struct ght_ctx
{
	ght_device	dev;
	int			gpu_id;
	char		err[512];
	char		cuda_err[64];
	int			(*interrupt_cb) (void *);
	void	   *interrupt_arg;
	uint64_t	dev_limit;
	uint64_t	dev_bytes;
	uint64_t	limit_need;		/* dev_bytes + request of the last allocation the limit refused */
	uint64_t	fail_after;		/* 0 = off; else allocations left before one fails */
	ght_status	alloc_status;	/* CPU: why the last cpu_mem_alloc failed */
	void	   *gpu;			/* struct ght_gpu_ctx (streams, scratch), GPU half only */
};

/* Allocation slots in ght_table.mem. */
#define GHT_MEM_SLOTS	0
#define GHT_MEM_BUCKETS 1
#define GHT_MEM_OFFSETS 2
#define GHT_MEM_PAYLOAD 3
#define GHT_MEM_NEXT	4
#define GHT_MEM_COUNT	5
/* Hopscotch tables have no buckets or offsets; their arrays take those slots. */
#define GHT_MEM_HOP		GHT_MEM_BUCKETS
#define GHT_MEM_HEADS	GHT_MEM_OFFSETS

struct ght_table
{
	ght_ctx    *ctx;
	ght_build_opts opts;		/* method resolved, load factor filled in */
	ght_index	ix;
	uint64_t	rows;			/* live rows */
	uint64_t	distinct;		/* distinct keys with rows (static tables) */
	uint64_t	used_slots;		/* key slots in use, dead keys included */
	uint64_t	pool_cap;		/* LIST: payload nodes allocated */
	uint64_t	pool_used;		/* LIST: payload nodes handed out */
	uint32_t	build_attempts;
	double		build_ms;
	uint64_t	bytes;			/* table memory */
	int			borrowed;		/* mem[] lies in someone else's image: never freed */
	/* allocations owned (device pointers on the GPU) */
	void	   *mem[GHT_MEM_COUNT];
	uint64_t	mem_bytes[GHT_MEM_COUNT];
};

/* Errors: record a detail in the context and return the status. */
ght_status	ght_fail(ght_ctx *ctx, ght_status s, const char *fmt,...)
#if defined(__GNUC__)
			__attribute__((format(printf, 3, 4)))
#endif
			;
int			ght_interrupted(ght_ctx *ctx);
double		ght_now_ms(void);

/* Geometry shared by both halves. */
uint64_t	ght_linear_capacity(uint64_t keys, double load);
uint32_t	ght_cuckoo_nbuckets(uint64_t keys, uint32_t avg);
uint32_t	ght_cuckoo_groups_for(uint32_t count, int key_width, double load);
int			ght_slot_bytes(int key_width);

/* The probe state both halves fill (host arrays owned by the probe). */
struct ght_probe
{
	ght_table  *t;
	ght_ctx    *ctx;			/* t->ctx; ending a probe reads only this */
	uint64_t	n;				/* probe keys */
	uint64_t	cap;			/* most pairs a key (0: all) */
	uint64_t	total;			/* matching pairs */
	uint64_t	emitted;		/* pairs handed out so far */
	uint32_t   *out_idx;		/* host (pinned on the GPU) */
	uint64_t   *out_payload;
	uint64_t	out_cap;
	void	   *priv;			/* half-specific state */
};

/* ---- CPU half (cpu_*.c) ------------------------------------------------- */
ght_status	ght_cpu_build(ght_table *t, const void *keys, const void *payloads, uint64_t n);
void		ght_cpu_free(ght_table *t);
ght_status	ght_cpu_contains(ght_table *t, const void *keys, uint64_t n, uint8_t *out);
ght_status	ght_cpu_select(ght_table *t, const void *keys, uint64_t n, int anti,
						   uint32_t *out_idx, uint64_t *out_n);
ght_status	ght_cpu_probe_begin(ght_probe *p, const void *keys);
ght_status	ght_cpu_probe_next(ght_probe *p, uint64_t max_pairs, uint64_t *n_out);
void		ght_cpu_probe_end(ght_probe *p);
ght_status	ght_cpu_insert(ght_table *t, const void *keys, const void *payloads, uint64_t n);
ght_status	ght_cpu_delete(ght_table *t, const void *keys, uint64_t n, uint64_t *removed);
ght_status	ght_cpu_export(ght_table *t, void *keys, uint64_t *payloads, uint64_t *n_out);
ght_status	ght_cpu_probe_stats(ght_table *t, double *mean, uint32_t *max);
ght_status	ght_cpu_mixed_batch(ght_table *t, const uint8_t *ops, const void *keys,
								const uint64_t *payloads, uint64_t n, uint8_t *found);

/* ---- CPU hopscotch (cpu_hopscotch.c) ------------------------------------ */
ght_status	cpu_hop_build(ght_table *t, const void *keys, const void *payloads, uint64_t n);
ght_status	cpu_hop_insert(ght_table *t, const void *keys, const void *payloads, uint64_t n);
ght_status	cpu_hop_delete(ght_table *t, const void *keys, uint64_t n, uint64_t *removed);
ght_status	cpu_hop_export(ght_table *t, void *keys, uint64_t *payloads, uint64_t *n_out);
ght_status	cpu_hop_probe_stats(ght_table *t, double *mean, uint32_t *max);
ght_status	cpu_hop_mixed_batch(ght_table *t, const uint8_t *ops, const void *keys,
								const uint64_t *payloads, uint64_t n, uint8_t *found);
/* Find key k (4- or 8-byte, as the table's width): 1 and its list head when it has rows. */
int			cpu_hop_find(const ght_index *ix, uint64_t k, uint64_t *ref);

/* ---- GPU half (gpu_*.cu, or gpu_stub.c without CUDA) -------------------- */
int			ght_gpu_available(char *why, size_t whylen);
ght_status	ght_gpu_device_info(int id, ght_device_info *info, char *why, size_t whylen);
ght_status	ght_gpu_ctx_init(ght_ctx *ctx);
void		ght_gpu_ctx_fini(ght_ctx *ctx);
void		ght_gpu_ctx_trim(ght_ctx *ctx);
void		ght_gpu_transfer_stats(ght_ctx *ctx, ght_transfer_stats *out);
void	   *ght_gpu_host_alloc(ght_ctx *ctx, size_t bytes);
void		ght_gpu_host_free(ght_ctx *ctx, void *p);
ght_status	ght_gpu_build(ght_table *t, const void *keys, const void *payloads, uint64_t n, int on_device);
void		ght_gpu_free(ght_table *t);
ght_status	ght_gpu_contains(ght_table *t, const void *keys, uint64_t n, uint8_t *out);
ght_status	ght_gpu_select(ght_table *t, const void *keys, uint64_t n, int anti,
						   uint32_t *out_idx, uint64_t *out_n);
ght_status	ght_gpu_probe_begin(ght_probe *p, const void *keys);
ght_status	ght_gpu_probe_next(ght_probe *p, uint64_t max_pairs, uint64_t *n_out);
void		ght_gpu_probe_end(ght_probe *p);
ght_status	ght_gpu_insert(ght_table *t, const void *keys, const void *payloads, uint64_t n);
ght_status	ght_gpu_delete(ght_table *t, const void *keys, uint64_t n, uint64_t *removed);
ght_status	ght_gpu_export(ght_table *t, void *keys, uint64_t *payloads, uint64_t *n_out);
ght_status	ght_gpu_probe_stats(ght_table *t, double *mean, uint32_t *max);
ght_status	ght_gpu_image_arrays(ght_table *t, void *const dst[GHT_MEM_COUNT]);
ght_status	ght_gpu_attach_arrays(ght_table *t, const void *const src[GHT_MEM_COUNT]);
ght_status	ght_gpu_mixed_batch(ght_table *t, const uint8_t *ops, const void *keys,
								const uint64_t *payloads, uint64_t n, uint8_t *found);

#ifdef __cplusplus
}
#endif

#endif							/* GHT_INTERNAL_H */
