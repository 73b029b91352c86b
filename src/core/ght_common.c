/*
 * ght_common.c - the public API: argument checks, contexts and dispatch to
 * the CPU half (cpu_*.c) or the GPU half (gpu_*.cu; in the extension reached
 * through gpu_loader.c).
 */
#include "ght_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *
ght_status_name(ght_status s)
{
	switch (s)
	{
		case GHT_OK: return "ok";
		case GHT_ERR_INVALID: return "invalid argument";
		case GHT_ERR_HOST_NOMEM: return "out of host memory";
		case GHT_ERR_DEVICE_NOMEM: return "out of device memory";
		case GHT_ERR_MEM_LIMIT: return "device memory limit reached";
		case GHT_ERR_NO_DEVICE: return "no usable GPU";
		case GHT_ERR_CUDA: return "CUDA error";
		case GHT_ERR_BUILD_FAILED: return "hash table build failed";
		case GHT_ERR_TOO_LARGE: return "too large";
		case GHT_ERR_UNSUPPORTED: return "not supported";
		case GHT_ERR_INTERRUPTED: return "interrupted";
		case GHT_ERR_INTERNAL: return "internal error";
	}
	return "unknown status";
}

const char *
ght_method_name(ght_method m)
{
	switch (m)
	{
		case GHT_AUTO: return "auto";
		case GHT_CUCKOO: return "cuckoo";
		case GHT_LINEAR: return "linear";
		case GHT_HOPSCOTCH: return "hopscotch";
	}
	return "unknown";
}

/* Groups per sub-table for a bucket of count keys at the given load. */
uint32_t
ght_cuckoo_groups_for(uint32_t count, int key_width, double load)
{
	return ght_groups_for(count, GHT_GROUP_BYTES / ght_slot_bytes(key_width), load);
}

/* ---- contexts ----------------------------------------------------------- */

int
ght_gpu_count(char *why, size_t whylen)
{
	return ght_gpu_available(why, whylen);
}

ght_status
ght_gpu_info(int id, ght_device_info *info, char *why, size_t whylen)
{
	return ght_gpu_device_info(id, info, why, whylen);
}

ght_status
ght_ctx_create(ght_device dev, int gpu_id, ght_ctx **out, char *why, size_t whylen)
{
	ght_ctx    *ctx;
	ght_status	s;

	*out = NULL;
	if (dev != GHT_CPU && dev != GHT_GPU)
		return GHT_ERR_INVALID;
	ctx = calloc(1, sizeof(ght_ctx));
	if (ctx == NULL)
		return GHT_ERR_HOST_NOMEM;
	ctx->dev = dev;
	ctx->gpu_id = gpu_id;
	if (dev == GHT_GPU)
	{
		s = ght_gpu_ctx_init(ctx);
		if (s != GHT_OK)
		{
			if (why)
				snprintf(why, whylen, "%s", ctx->err);
			ght_gpu_ctx_fini(ctx);
			free(ctx);
			return s;
		}
	}
	*out = ctx;
	return GHT_OK;
}

void
ght_ctx_transfer_stats(ght_ctx *ctx, ght_transfer_stats *out)
{
	if (ctx->dev == GHT_GPU)
		ght_gpu_transfer_stats(ctx, out);
	else
		memset(out, 0, sizeof(*out));
}

void
ght_ctx_destroy(ght_ctx *ctx)
{
	if (ctx == NULL)
		return;
	if (ctx->dev == GHT_GPU)
		ght_gpu_ctx_fini(ctx);
	free(ctx);
}

ght_device
ght_ctx_device(const ght_ctx *ctx)
{
	return ctx->dev;
}

const char *
ght_ctx_error_detail(const ght_ctx *ctx)
{
	return ctx ? ctx->err : "";
}

const char *
ght_ctx_cuda_error_name(const ght_ctx *ctx)
{
	return ctx ? ctx->cuda_err : "";
}

void
ght_ctx_set_interrupt(ght_ctx *ctx, int (*cb) (void *), void *arg)
{
	ctx->interrupt_cb = cb;
	ctx->interrupt_arg = arg;
}

void
ght_ctx_set_device_limit(ght_ctx *ctx, uint64_t bytes)
{
	ctx->dev_limit = bytes;
}

uint64_t
ght_ctx_device_bytes(const ght_ctx *ctx)
{
	return ctx->dev_bytes;
}

uint64_t
ght_ctx_limit_need(const ght_ctx *ctx)
{
	return ctx->limit_need;
}

void
ght_ctx_trim(ght_ctx *ctx)
{
	if (ctx != NULL && ctx->dev == GHT_GPU)
		ght_gpu_ctx_trim(ctx);
}

void
ght_ctx_fail_alloc_after(ght_ctx *ctx, uint64_t n)
{
	ctx->fail_after = n;
}

void *
ght_host_alloc(ght_ctx *ctx, size_t bytes)
{
	if (ctx->dev == GHT_GPU)
		return ght_gpu_host_alloc(ctx, bytes);
	return malloc(bytes ? bytes : 1);
}

void
ght_host_free(ght_ctx *ctx, void *p)
{
	if (p == NULL)
		return;
	if (ctx->dev == GHT_GPU)
		ght_gpu_host_free(ctx, p);
	else
		free(p);
}

/* ---- building ----------------------------------------------------------- */

void
ght_build_opts_init(ght_build_opts *o, int key_width, int payload_width)
{
	memset(o, 0, sizeof(*o));
	o->method = GHT_AUTO;
	o->key_width = key_width;
	o->payload_width = payload_width;
}

/*
 * Each method at its default load, measured (bench/NOTES.md, section 8):
 * on the CPU linear probing builds 1.1-1.7x and probes 1.6-3x faster than
 * cuckoo at every size; on the GPU linear builds faster at every size and probes
 * faster once the table outgrows the L2 cache, while cuckoo probes faster
 * below that and uses about half the memory.  Mutable tables are linear or
 * hopscotch; AUTO takes GHT_AUTO_MUTABLE_METHOD for them until hopscotch has
 * been measured against linear on a GPU (bench/NOTES.md, hopscotch section).
 */
#define GHT_AUTO_GPU_CUCKOO_BELOW ((uint64_t) 1 << 21)
#define GHT_AUTO_MUTABLE_METHOD GHT_LINEAR

ght_method
ght_choose_method(ght_device dev, uint64_t n, int key_width, int flags)
{
	(void) key_width;
	if (flags & GHT_BUILD_MUTABLE)
		return GHT_AUTO_MUTABLE_METHOD;
	if (dev == GHT_GPU && n < GHT_AUTO_GPU_CUCKOO_BELOW)
		return GHT_CUCKOO;
	return GHT_LINEAR;
}

ght_status
ght_build(ght_ctx *ctx, const ght_build_opts *opts, const void *keys,
		  const void *payloads, uint64_t n, int keys_on_device, ght_table **out)
{
	ght_table  *t;
	ght_status	s;
	double		t0 = ght_now_ms();

	*out = NULL;
	if (ctx == NULL || opts == NULL)
		return GHT_ERR_INVALID;
	ctx->err[0] = '\0';
	ctx->cuda_err[0] = '\0';
	if (opts->key_width != 4 && opts->key_width != 8)
		return ght_fail(ctx, GHT_ERR_INVALID, "key width must be 4 or 8 bytes, not %d", opts->key_width);
	if (opts->payload_width != 4 && opts->payload_width != 8)
		return ght_fail(ctx, GHT_ERR_INVALID, "payload width must be 4 or 8 bytes, not %d", opts->payload_width);
	if (opts->method != GHT_AUTO && opts->method != GHT_CUCKOO && opts->method != GHT_LINEAR &&
		opts->method != GHT_HOPSCOTCH)
		return ght_fail(ctx, GHT_ERR_INVALID, "unknown method %d", (int) opts->method);
	if ((opts->flags & GHT_BUILD_MUTABLE) && opts->method == GHT_CUCKOO)
		return ght_fail(ctx, GHT_ERR_UNSUPPORTED, "cuckoo tables are static; mutable tables must use linear probing or hopscotch");
	if (opts->load_factor != 0 && (opts->load_factor < GHT_MIN_LOAD || opts->load_factor > GHT_MAX_LOAD))
		return ght_fail(ctx, GHT_ERR_INVALID, "load factor %.3f is outside [%.2f, %.2f]",
						opts->load_factor, GHT_MIN_LOAD, GHT_MAX_LOAD);
	if (opts->cuckoo_layout < 0 || opts->cuckoo_layout > 2)
		return ght_fail(ctx, GHT_ERR_INVALID, "unknown cuckoo layout %d", opts->cuckoo_layout);
	if (opts->linear_group != 0 &&
		(opts->linear_group < 1 || opts->linear_group > 32 ||
		 (opts->linear_group & (opts->linear_group - 1)) != 0))
		return ght_fail(ctx, GHT_ERR_INVALID, "probe group must be a power of two from 1 to 32");
	if (n > GHT_MAX_ROWS)
		return ght_fail(ctx, GHT_ERR_TOO_LARGE, "%llu rows exceed the limit of %llu rows per table",
						(unsigned long long) n, (unsigned long long) GHT_MAX_ROWS);
	if (n > 0 && keys == NULL)
		return ght_fail(ctx, GHT_ERR_INVALID, "keys is NULL");
	if (n > 0 && payloads == NULL && !(opts->flags & GHT_BUILD_ROWNUM_PAYLOAD))
		return ght_fail(ctx, GHT_ERR_INVALID, "payloads is NULL");
	if (keys_on_device && ctx->dev != GHT_GPU)
		return ght_fail(ctx, GHT_ERR_INVALID, "device keys given to a CPU context");

	t = calloc(1, sizeof(ght_table));
	if (t == NULL)
		return ght_fail(ctx, GHT_ERR_HOST_NOMEM, "could not allocate a table header");
	t->ctx = ctx;
	t->opts = *opts;
	if (t->opts.method == GHT_AUTO)
		t->opts.method = ght_choose_method(ctx->dev, n, opts->key_width, opts->flags);
	/* a hopscotch table keeps its keys' rows in lists: it is always mutable */
	if (t->opts.method == GHT_HOPSCOTCH)
		t->opts.flags |= GHT_BUILD_MUTABLE;
	if (t->opts.load_factor == 0)
		t->opts.load_factor = t->opts.method == GHT_CUCKOO ? GHT_CUCKOO_DEFAULT_LOAD
			: t->opts.method == GHT_HOPSCOTCH ? GHT_HOPSCOTCH_DEFAULT_LOAD
			: GHT_LINEAR_DEFAULT_LOAD;
	if (t->opts.seed == 0)
		t->opts.seed = GHT_DEFAULT_SEED;
	if (t->opts.linear_group == 0)
		t->opts.linear_group = ctx->dev == GHT_GPU ? 1 : 1;
	if (t->opts.method != GHT_LINEAR)
		t->opts.linear_group = 1;
	if (t->opts.cuckoo_layout == 0)
		t->opts.cuckoo_layout = GHT_CUCKOO_DEFAULT_LAYOUT;

	/* what both halves' probes need to know of the options */
	t->ix.method = t->opts.method;
	t->ix.key_width = t->opts.key_width;
	t->ix.payload_width = t->opts.payload_width;
	t->ix.seed = ght_subseed(t->opts.seed, 0);
	t->ix.group = (uint32_t) t->opts.linear_group;
	t->ix.shared_groups = t->opts.cuckoo_layout == 2;
	t->build_attempts = 1;

	if (ctx->dev == GHT_GPU)
		s = ght_gpu_build(t, keys, payloads, n, keys_on_device);
	else
		s = ght_cpu_build(t, keys, payloads, n);
	if (s != GHT_OK)
	{
		ght_table_free(t);
		return s;
	}
	t->build_ms = ght_now_ms() - t0;
	*out = t;
	return GHT_OK;
}

void
ght_table_free(ght_table *t)
{
	if (t == NULL)
		return;
	if (t->borrowed)
		;						/* the image's owner frees it */
	else if (t->ctx->dev == GHT_GPU)
		ght_gpu_free(t);
	else
		ght_cpu_free(t);
	free(t);
}

ght_status
ght_table_stats(ght_table *t, ght_stats *st)
{
	ght_table_brief(t, st);
	if (t->ctx->dev == GHT_GPU)
		return ght_gpu_probe_stats(t, &st->mean_probes, &st->max_probes);
	return ght_cpu_probe_stats(t, &st->mean_probes, &st->max_probes);
}

void
ght_table_brief(const ght_table *t, ght_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->method = t->opts.method;
	st->device = t->ctx->dev;
	st->key_width = t->opts.key_width;
	st->payload_width = t->opts.payload_width;
	st->mutable_ = (t->opts.flags & GHT_BUILD_MUTABLE) != 0;
	st->inline_payload = t->ix.mode == GHT_MODE_INLINE;
	st->rows = t->rows;
	st->distinct_keys = t->distinct;
	st->capacity = t->ix.nslots;
	st->load_factor = t->ix.nslots ? (double) t->used_slots / (double) t->ix.nslots : 0;
	st->bytes = t->bytes;
	st->build_attempts = t->build_attempts;
	st->build_ms = t->build_ms;
}

/* ---- probing ------------------------------------------------------------ */

static ght_status
check_probe(ght_table *t, const void *keys, uint64_t n)
{
	if (t == NULL)
		return GHT_ERR_INVALID;
	t->ctx->err[0] = '\0';
	t->ctx->cuda_err[0] = '\0';
	if (n > 0 && keys == NULL)
		return ght_fail(t->ctx, GHT_ERR_INVALID, "keys is NULL");
	if (n > (uint64_t) UINT32_MAX)
		return ght_fail(t->ctx, GHT_ERR_TOO_LARGE, "a probe batch holds at most %u keys", UINT32_MAX);
	return GHT_OK;
}

ght_status
ght_contains(ght_table *t, const void *keys, uint64_t n, uint8_t *out)
{
	ght_status	s = check_probe(t, keys, n);

	if (s != GHT_OK || n == 0)
		return s;
	if (t->ctx->dev == GHT_GPU)
		return ght_gpu_contains(t, keys, n, out);
	return ght_cpu_contains(t, keys, n, out);
}

ght_status
ght_select(ght_table *t, const void *keys, uint64_t n, int anti,
		   uint32_t *out_idx, uint64_t *out_n)
{
	ght_status	s = check_probe(t, keys, n);

	*out_n = 0;
	if (s != GHT_OK || n == 0)
		return s;
	if (t->ctx->dev == GHT_GPU)
		return ght_gpu_select(t, keys, n, anti, out_idx, out_n);
	return ght_cpu_select(t, keys, n, anti, out_idx, out_n);
}

ght_status
ght_probe_begin(ght_table *t, const void *keys, uint64_t n, ght_probe **out)
{
	return ght_probe_begin_capped(t, keys, n, 0, out);
}

ght_status
ght_probe_begin_capped(ght_table *t, const void *keys, uint64_t n, uint64_t cap, ght_probe **out)
{
	ght_probe  *p;
	ght_status	s = check_probe(t, keys, n);

	*out = NULL;
	if (s != GHT_OK)
		return s;
	p = calloc(1, sizeof(ght_probe));
	if (p == NULL)
		return ght_fail(t->ctx, GHT_ERR_HOST_NOMEM, "could not allocate a probe");
	p->t = t;
	p->ctx = t->ctx;
	p->n = n;
	p->cap = cap;
	if (n > 0)
	{
		s = t->ctx->dev == GHT_GPU ? ght_gpu_probe_begin(p, keys) : ght_cpu_probe_begin(p, keys);
		if (s != GHT_OK)
		{
			ght_probe_end(p);
			return s;
		}
	}
	*out = p;
	return GHT_OK;
}

uint64_t
ght_probe_total(const ght_probe *p)
{
	return p->total;
}

ght_status
ght_probe_next(ght_probe *p, uint64_t max_pairs, const uint32_t **probe_idx,
			   const uint64_t **payload, uint64_t *n_out)
{
	ght_status	s;

	*n_out = 0;
	if (max_pairs == 0)
		return ght_fail(p->t->ctx, GHT_ERR_INVALID, "max_pairs must be positive");
	if (p->emitted >= p->total)
		return GHT_OK;
	if (p->t->ctx->dev == GHT_GPU)
		s = ght_gpu_probe_next(p, max_pairs, n_out);
	else
		s = ght_cpu_probe_next(p, max_pairs, n_out);
	if (s != GHT_OK)
		return s;
	*probe_idx = p->out_idx;
	*payload = p->out_payload;
	p->emitted += *n_out;
	return GHT_OK;
}

void
ght_probe_end(ght_probe *p)
{
	if (p == NULL)
		return;
	if (p->ctx->dev == GHT_GPU)
		ght_gpu_probe_end(p);
	else
		ght_cpu_probe_end(p);
	free(p);
}

/* ---- updates ------------------------------------------------------------ */

static ght_status
check_mutable(ght_table *t, const void *keys, uint64_t n)
{
	ght_status	s = check_probe(t, keys, n);

	if (s != GHT_OK)
		return s;
	if (!(t->opts.flags & GHT_BUILD_MUTABLE))
		return ght_fail(t->ctx, GHT_ERR_UNSUPPORTED, "%s table was built static",
						ght_method_name(t->opts.method));
	return GHT_OK;
}

ght_status
ght_insert(ght_table *t, const void *keys, const void *payloads, uint64_t n)
{
	ght_status	s = check_mutable(t, keys, n);

	if (s != GHT_OK || n == 0)
		return s;
	if (payloads == NULL)
		return ght_fail(t->ctx, GHT_ERR_INVALID, "payloads is NULL");
	if (t->rows + n > GHT_MAX_ROWS || t->pool_used + n > GHT_MAX_ROWS)
		return ght_fail(t->ctx, GHT_ERR_TOO_LARGE, "the table would exceed %llu rows",
						(unsigned long long) GHT_MAX_ROWS);
	if (t->ctx->dev == GHT_GPU)
		return ght_gpu_insert(t, keys, payloads, n);
	return ght_cpu_insert(t, keys, payloads, n);
}

ght_status
ght_delete(ght_table *t, const void *keys, uint64_t n, uint64_t *removed)
{
	ght_status	s = check_mutable(t, keys, n);

	*removed = 0;
	if (s != GHT_OK || n == 0)
		return s;
	if (t->ctx->dev == GHT_GPU)
		return ght_gpu_delete(t, keys, n, removed);
	return ght_cpu_delete(t, keys, n, removed);
}

ght_status
ght_export(ght_table *t, void **keys_out, uint64_t **payloads_out, uint64_t *n_out)
{
	void	   *k;
	uint64_t   *v;
	uint64_t	n = t->rows;
	ght_status	s;

	*keys_out = NULL;
	*payloads_out = NULL;
	*n_out = 0;
	k = malloc((n ? n : 1) * (size_t) t->opts.key_width);
	v = malloc((n ? n : 1) * sizeof(uint64_t));
	if (k == NULL || v == NULL)
	{
		free(k);
		free(v);
		return ght_fail(t->ctx, GHT_ERR_HOST_NOMEM, "could not allocate %llu exported rows",
						(unsigned long long) n);
	}
	if (t->ctx->dev == GHT_GPU)
		s = ght_gpu_export(t, k, v, n_out);
	else
		s = ght_cpu_export(t, k, v, n_out);
	if (s != GHT_OK)
	{
		free(k);
		free(v);
		*n_out = 0;
		return s;
	}
	*keys_out = k;
	*payloads_out = v;
	return GHT_OK;
}

ght_status
ght_mixed_batch(ght_table *t, const uint8_t *ops, const void *keys,
				const uint64_t *payloads, uint64_t n, uint8_t *found)
{
	ght_status	s = check_mutable(t, keys, n);

	if (s != GHT_OK || n == 0)
		return s;
	if (t->ctx->dev != GHT_GPU)
		return ght_cpu_mixed_batch(t, ops, keys, payloads, n, found);
	return ght_gpu_mixed_batch(t, ops, keys, payloads, n, found);
}
