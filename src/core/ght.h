/*
 * ght.h - gpuhash core hash tables: the public C API.
 *
 * This library has no PostgreSQL headers, so it can be unit-tested and
 * benchmarked alone.  Every function returns a ght_status; on failure the
 * context keeps a human-readable detail (ght_ctx_error_detail) and, for CUDA
 * failures, the CUDA error's name (ght_ctx_cuda_error_name).  Nothing here
 * prints, aborts or longjmps.
 *
 * Model
 * -----
 * A table is built once from n (key, payload) rows.  Keys are 32- or 64-bit
 * integers compared bit for bit; every bit pattern is a valid key.  Payloads
 * are 32- or 64-bit unsigned integers (row numbers or user values).  Keys
 * may repeat: the table keeps the distinct keys in a hash index and lays the
 * payloads of each key out contiguously (sort, run-length encode, scan), so a
 * probe finds a key once and then reads its payloads in order.  When every key
 * is unique and the payload fits the slot, the payload is stored inline in the
 * slot and no second read is needed.
 *
 * Three index methods:
 *   GHT_CUCKOO  hybrid cuckoo hashing (Alcantara et al.): keys are split into
 *               buckets of at most 512; each bucket is a three-sub-table cuckoo
 *               table whose sub-tables are made of 32-byte groups of slots.  A
 *               lookup reads one bucket descriptor and at most three groups.
 *               Static: no insert or delete after the build.
 *   GHT_LINEAR  open addressing with linear probing; one CAS claims a slot.
 *               Tables built with GHT_BUILD_MUTABLE accept concurrent batched
 *               inserts and deletes (ght_insert, ght_delete), grow by rehashing
 *               when they fill, and reclaim deleted keys when they rehash.
 *   GHT_HOPSCOTCH  lock-free hopscotch hashing (after GLHT, Zhang and Sun): a
 *               key lives within GHT_HOP_H slots of its home slot, whose
 *               bitmap says which of them hold its keys, so a lookup reads one
 *               neighbourhood; an insert whose free slot is too far moves keys
 *               closer hop by hop.  Always mutable, with the same operations,
 *               duplicates, growth and reclaiming as mutable linear tables,
 *               and also grows when a neighbourhood is full.
 *   GHT_AUTO    chooses by measured speed, each method at its default load:
 *               linear on the CPU, on the GPU cuckoo below 2^21 keys and
 *               linear from there; mutable tables linear for now (see
 *               ght_choose_method).
 *
 * The same layouts and algorithms exist on the CPU (C) and the GPU (CUDA).
 * Given the same input, both give the same answers in the same order, except
 * for lookups in mutable tables, whose per-key payload order is unspecified.
 *
 * Memory: host pointers passed in may be ordinary or pinned (ght_host_alloc).
 * Results are written to memory the caller supplies or that the call owns and
 * documents.  Nothing is kept after ght_table_free / ght_ctx_destroy.
 */
#ifndef GHT_H
#define GHT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ght_status
{
	GHT_OK = 0,
	GHT_ERR_INVALID,			/* bad argument: width, method, NULL pointer, ... */
	GHT_ERR_HOST_NOMEM,			/* malloc or pinned allocation failed */
	GHT_ERR_DEVICE_NOMEM,		/* cudaMalloc failed: the device is full */
	GHT_ERR_MEM_LIMIT,			/* the context's device-memory limit would be exceeded */
	GHT_ERR_NO_DEVICE,			/* no usable GPU (or built without CUDA) */
	GHT_ERR_CUDA,				/* any other CUDA failure */
	GHT_ERR_BUILD_FAILED,		/* could not place the keys even after reseeding and growing */
	GHT_ERR_TOO_LARGE,			/* more than GHT_MAX_ROWS rows, or a result that cannot be addressed */
	GHT_ERR_UNSUPPORTED,		/* operation not supported by this table (e.g. insert into cuckoo) */
	GHT_ERR_INTERRUPTED,		/* the interrupt callback asked us to stop */
	GHT_ERR_INTERNAL			/* a bug: an invariant did not hold */
} ght_status;

typedef enum ght_method
{
	GHT_AUTO = 0,
	GHT_CUCKOO = 1,
	GHT_LINEAR = 2,
	GHT_HOPSCOTCH = 3
} ght_method;

typedef enum ght_device
{
	GHT_CPU = 0,
	GHT_GPU = 1
} ght_device;

/* A table holds at most this many rows (payload indices are 32-bit). */
#define GHT_MAX_ROWS ((uint64_t) 0xFFFFFFF0u)

/* Build flags. */
#define GHT_BUILD_MUTABLE		0x1 /* linear or hopscotch: allow ght_insert/ght_delete
									 * (hopscotch tables are always mutable) */
#define GHT_BUILD_ASSUME_UNIQUE 0x2 /* caller promises distinct keys: skip the
									 * sort; a repeated key keeps one payload */
#define GHT_BUILD_ROWNUM_PAYLOAD 0x4	/* ignore payloads: payload i is i */

typedef struct ght_ctx ght_ctx;
typedef struct ght_table ght_table;
typedef struct ght_probe ght_probe;

const char *ght_status_name(ght_status s);
const char *ght_method_name(ght_method m);

/* ---------------------------------------------------------------------------
 * Contexts: one per device (and per thread).  A GPU context owns a device,
 * its streams, pinned staging buffers and scratch memory; a CPU context owns
 * nothing but its error text.  Either counts the table and scratch memory
 * its tables, builds and probes hold ("device bytes": host memory on the
 * CPU), applies its limit to it, and can be told to fail an allocation.
 * ------------------------------------------------------------------------- */

/* Is the library compiled with CUDA support? */
int			ght_have_cuda(void);

/*
 * Number of usable GPUs.  Returns 0 and fills why (if not NULL) with the
 * reason when there is none: built without CUDA, no driver, no device...
 * Safe to call on a host without any NVIDIA software.  Initialises the CUDA
 * runtime on first call (never call it in a process that will fork and use
 * CUDA in the child).
 */
int			ght_gpu_count(char *why, size_t whylen);

typedef struct ght_device_info
{
	int			id;
	char		name[256];
	uint64_t	total_bytes;
	uint64_t	free_bytes;
	int			cc_major;
	int			cc_minor;
	int			multiprocessors;
} ght_device_info;

ght_status	ght_gpu_info(int id, ght_device_info *info, char *why, size_t whylen);

ght_status	ght_ctx_create(ght_device dev, int gpu_id, ght_ctx **out, char *why, size_t whylen);
void		ght_ctx_destroy(ght_ctx *ctx);
ght_device	ght_ctx_device(const ght_ctx *ctx);

/* Detail of the last failure in this context ("" if none). */
const char *ght_ctx_error_detail(const ght_ctx *ctx);
/* Name of the CUDA error behind the last failure ("" if none). */
const char *ght_ctx_cuda_error_name(const ght_ctx *ctx);

/*
 * Called between batches and in long CPU loops; a nonzero return stops the
 * operation, which frees what it allocated and returns GHT_ERR_INTERRUPTED.
 * The callback must not longjmp.
 */
void		ght_ctx_set_interrupt(ght_ctx *ctx, int (*cb) (void *), void *arg);

/*
 * Upper bound on device bytes (host bytes on a CPU context) this context's
 * tables and scratch may hold at once (0 = none); an allocation beyond it
 * fails with GHT_ERR_MEM_LIMIT.
 */
void		ght_ctx_set_device_limit(ght_ctx *ctx, uint64_t bytes);
/* Device bytes held now by tables and scratch of this context. */
uint64_t	ght_ctx_device_bytes(const ght_ctx *ctx);
/*
 * After GHT_ERR_MEM_LIMIT: the bytes the context would have held had the
 * refused allocation been made, a lower bound of what the call needed.
 */
uint64_t	ght_ctx_limit_need(const ght_ctx *ctx);
/*
 * Give device memory that the context keeps for reuse back to the driver.
 * A GPU context keeps freed device memory in a pool so that the next build
 * or batch need not allocate again; call this at the end of a statement.
 */
void		ght_ctx_trim(ght_ctx *ctx);

/*
 * Copies between host memory and the device made by probes (lookups,
 * contains, select, probe pairs), each timed on the GPU from its start to its
 * end, summed since the context was made.  All zero on a CPU context.
 */
typedef struct ght_transfer_stats
{
	uint64_t	to_device_bytes;
	uint64_t	from_device_bytes;
	double		to_device_ms;
	double		from_device_ms;
} ght_transfer_stats;

void		ght_ctx_transfer_stats(ght_ctx *ctx, ght_transfer_stats *out);
/*
 * Testing aid: make the n-th table or scratch allocation from now on fail
 * (0 = off), with GHT_ERR_DEVICE_NOMEM on a GPU context (device memory) and
 * GHT_ERR_HOST_NOMEM on a CPU context.
 */
void		ght_ctx_fail_alloc_after(ght_ctx *ctx, uint64_t n);

/*
 * Host memory for key batches and results.  On a GPU context it is pinned
 * (page-locked), so copies to and from the device run at full speed and
 * overlap kernels; on a CPU context it is ordinary memory.  NULL on failure.
 */
void	   *ght_host_alloc(ght_ctx *ctx, size_t bytes);
void		ght_host_free(ght_ctx *ctx, void *p);

/* ---------------------------------------------------------------------------
 * Building
 * ------------------------------------------------------------------------- */

typedef struct ght_build_opts
{
	ght_method	method;			/* GHT_AUTO, GHT_CUCKOO or GHT_LINEAR */
	int			key_width;		/* 4 or 8 (bytes) */
	int			payload_width;	/* 4 or 8 (bytes) */
	double		load_factor;	/* target slots in use / slots; 0 = method default */
	uint32_t	seed;			/* 0 = default seed */
	int			flags;			/* GHT_BUILD_* */
	int			linear_group;	/* linear probing: probe window in slots, probed
								 * by that many threads on the GPU (1, 2, 4, 8,
								 * 16 or 32); 0 = default */
	int			cuckoo_layout;	/* 0 = default; 1 = each of the three hashes
								 * picks a group in its own third of the bucket
								 * (Alcantara's sub-tables); 2 = all three pick
								 * among all of the bucket's groups */
} ght_build_opts;

void		ght_build_opts_init(ght_build_opts *o, int key_width, int payload_width);

/*
 * Build a table from n rows: keys[i] (key_width bytes each) and payloads[i]
 * (payload_width bytes each; ignored with GHT_BUILD_ROWNUM_PAYLOAD, when
 * payload i is i).  The arrays are host memory, or device memory of this
 * context's GPU when keys_on_device is set.  n may be 0.
 */
ght_status	ght_build(ght_ctx *ctx, const ght_build_opts *opts,
					  const void *keys, const void *payloads, uint64_t n,
					  int keys_on_device, ght_table **out);

void		ght_table_free(ght_table *t);

/*
 * Table images: a static table written into one flat, position-independent
 * buffer, so that other processes can use it (e.g. through shared memory).
 * ght_table_image_size gives the bytes needed; ght_table_image_write fills
 * buf (8-byte aligned) with them.  ght_table_attach_image makes a read-only
 * table of ctx from an image: a CPU context reads the image in place (it
 * must outlive the table), a GPU context copies it to its device.  Mutable
 * tables have no image (GHT_ERR_UNSUPPORTED).
 */
ght_status	ght_table_image_size(ght_table *t, uint64_t *bytes);
ght_status	ght_table_image_write(ght_table *t, void *buf, uint64_t bytes);
ght_status	ght_table_attach_image(ght_ctx *ctx, const void *buf, uint64_t bytes,
								   ght_table **out);

/* The method GHT_AUTO resolves to for a build of n rows on dev. */
ght_method	ght_choose_method(ght_device dev, uint64_t n, int key_width, int flags);

typedef struct ght_stats
{
	ght_method	method;
	ght_device	device;
	int			key_width;
	int			payload_width;
	int			mutable_;		/* built with GHT_BUILD_MUTABLE */
	int			inline_payload; /* payloads stored in the slots */
	uint64_t	rows;			/* live (key, payload) rows */
	uint64_t	distinct_keys;	/* distinct keys holding at least one row */
	uint64_t	capacity;		/* key slots */
	double		load_factor;	/* slots in use / capacity (dead keys count as used) */
	uint64_t	bytes;			/* bytes of table memory (device or host) */
	uint32_t	build_attempts; /* 1 + every re-distribution, bucket reseed and regrow */
	double		mean_probes;	/* slots (linear) or groups (cuckoo) read to find a stored key, mean */
	uint32_t	max_probes;		/* ... and worst case */
	double		build_ms;		/* wall time of the build */
} ght_stats;

/* Statistics; the probe figures are computed by a pass over the table. */
ght_status	ght_table_stats(ght_table *t, ght_stats *s);
/* The same without the probe figures (mean_probes, max_probes are 0): no pass. */
void		ght_table_brief(const ght_table *t, ght_stats *s);

/* ---------------------------------------------------------------------------
 * Probing.  keys are host memory holding n keys of the table's key width.
 * ------------------------------------------------------------------------- */

/* out[i] = 1 if keys[i] has at least one row, else 0. */
ght_status	ght_contains(ght_table *t, const void *keys, uint64_t n, uint8_t *out);

/*
 * Semi (anti = 0) or anti (anti = 1) join: writes to out_idx, in increasing
 * order, the indices i whose keys[i] has (has no) row; *out_n is their number.
 * out_idx must hold n entries.
 */
ght_status	ght_select(ght_table *t, const void *keys, uint64_t n, int anti,
					   uint32_t *out_idx, uint64_t *out_n);

/*
 * Inner join / lookup.  ght_probe_begin finds every key and counts the
 * matching rows exactly; ght_probe_total gives that count; ght_probe_next
 * then hands out the (probe index, payload) pairs in order of probe index
 * (and, for a key, in build order), at most max_pairs at a time (a mutable
 * table may exceed max_pairs when one key alone has more rows).  The arrays
 * it returns are owned by the probe and valid until the next call.  *n_out is
 * 0 at the end.  The caller's keys may be reused once ght_probe_begin returns.
 */
ght_status	ght_probe_begin(ght_table *t, const void *keys, uint64_t n, ght_probe **out);

/*
 * The same, handing out at most cap pairs of each key (its first cap rows in
 * build order; cap 0: all), and counting only those in ght_probe_total.  For
 * a caller that needs one pair of a key that passes a test of its own (a
 * semi join's other clauses) and would otherwise be handed every row of a
 * key with many: it probes again, uncapped, only the keys that got cap pairs
 * and none that passed.
 */
ght_status	ght_probe_begin_capped(ght_table *t, const void *keys, uint64_t n, uint64_t cap,
								   ght_probe **out);
uint64_t	ght_probe_total(const ght_probe *p);
ght_status	ght_probe_next(ght_probe *p, uint64_t max_pairs,
						   const uint32_t **probe_idx, const uint64_t **payload,
						   uint64_t *n_out);
/*
 * Frees the probe.  It reads only the probe and its context, not the table,
 * so cleanup code that frees a table and its probe in either order is safe.
 */
void		ght_probe_end(ght_probe *p);

/* ---------------------------------------------------------------------------
 * Updates (linear tables built with GHT_BUILD_MUTABLE, and hopscotch tables).
 * ------------------------------------------------------------------------- */

/* Add n rows; the table grows (rehashes) first when they might not fit. */
ght_status	ght_insert(ght_table *t, const void *keys, const void *payloads, uint64_t n);

/* Remove every row of each key; *removed counts the rows removed. */
ght_status	ght_delete(ght_table *t, const void *keys, uint64_t n, uint64_t *removed);

/*
 * All live rows, in unspecified order: *keys_out and *payloads_out are
 * malloc'ed host arrays (free them with free()) of *n_out entries each.
 */
ght_status	ght_export(ght_table *t, void **keys_out, uint64_t **payloads_out, uint64_t *n_out);

/*
 * Testing aid (GPU tables, and hopscotch tables on the CPU; otherwise
 * GHT_ERR_UNSUPPORTED on the CPU): run a mixed batch in one kernel launch (on
 * the CPU: over several threads) so that inserts, deletes and lookups of
 * different threads really race.  ops[i]: 0 = insert (keys[i], payloads[i]),
 * 1 = delete keys[i], 2 = look up keys[i].  found[i] is set for lookups to 1
 * when the key had at least one row when it was read.
 */
ght_status	ght_mixed_batch(ght_table *t, const uint8_t *ops, const void *keys,
							const uint64_t *payloads, uint64_t n, uint8_t *found);

#ifdef __cplusplus
}
#endif

#endif							/* GHT_H */
