/*
 * gpu_stub.c - the GPU half when gpuhash is built without CUDA: every entry
 * point reports that there is no usable GPU, so callers fall back to the CPU
 * or raise a clear error.
 */
#include <string.h>
#include "ght_internal.h"

#include <stdio.h>

#define NO_CUDA "gpuhash was built without CUDA support (no nvcc at build time)"

int
ght_have_cuda(void)
{
	return 0;
}

int
ght_gpu_available(char *why, size_t whylen)
{
	if (why)
		snprintf(why, whylen, "%s", NO_CUDA);
	return 0;
}

ght_status
ght_gpu_device_info(int id, ght_device_info *info, char *why, size_t whylen)
{
	if (why)
		snprintf(why, whylen, "%s", NO_CUDA);
	return GHT_ERR_NO_DEVICE;
}

ght_status
ght_gpu_ctx_init(ght_ctx *ctx)
{
	return ght_fail(ctx, GHT_ERR_NO_DEVICE, "%s", NO_CUDA);
}

void ght_gpu_ctx_fini(ght_ctx *ctx) {}
void ght_gpu_ctx_trim(ght_ctx *ctx) {}
void ght_gpu_transfer_stats(ght_ctx *ctx, ght_transfer_stats *out) { memset(out, 0, sizeof(*out)); }
void *ght_gpu_host_alloc(ght_ctx *ctx, size_t bytes) { return NULL; }
void ght_gpu_host_free(ght_ctx *ctx, void *p) {}
void ght_gpu_free(ght_table *t) {}
void ght_gpu_probe_end(ght_probe *p) {}

#define UNREACHABLE(ctx) ght_fail((ctx), GHT_ERR_NO_DEVICE, "%s", NO_CUDA)

ght_status ght_gpu_build(ght_table *t, const void *k, const void *p, uint64_t n, int d) { return UNREACHABLE(t->ctx); }
ght_status ght_gpu_contains(ght_table *t, const void *k, uint64_t n, uint8_t *o) { return UNREACHABLE(t->ctx); }
ght_status ght_gpu_select(ght_table *t, const void *k, uint64_t n, int a, uint32_t *o, uint64_t *m) { return UNREACHABLE(t->ctx); }
ght_status ght_gpu_probe_begin(ght_probe *p, const void *k) { return UNREACHABLE(p->t->ctx); }
ght_status ght_gpu_probe_next(ght_probe *p, uint64_t m, uint64_t *n) { return UNREACHABLE(p->t->ctx); }
ght_status ght_gpu_insert(ght_table *t, const void *k, const void *p, uint64_t n) { return UNREACHABLE(t->ctx); }
ght_status ght_gpu_delete(ght_table *t, const void *k, uint64_t n, uint64_t *r) { return UNREACHABLE(t->ctx); }
ght_status ght_gpu_export(ght_table *t, void *k, uint64_t *p, uint64_t *n) { return UNREACHABLE(t->ctx); }
ght_status ght_gpu_probe_stats(ght_table *t, double *m, uint32_t *x) { return UNREACHABLE(t->ctx); }
ght_status ght_gpu_mixed_batch(ght_table *t, const uint8_t *o, const void *k, const uint64_t *p, uint64_t n, uint8_t *f) { return UNREACHABLE(t->ctx); }
ght_status ght_gpu_image_arrays(ght_table *t, void *const d[GHT_MEM_COUNT]) { return UNREACHABLE(t->ctx); }
ght_status ght_gpu_attach_arrays(ght_table *t, const void *const s[GHT_MEM_COUNT]) { return UNREACHABLE(t->ctx); }
