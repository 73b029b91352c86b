/*
 * gpu_api.h - the table of the GPU half's entry points that the CUDA module
 * (gpu_module.c, built as gpuhash_cuda.so) hands to the extension's loader
 * (gpu_loader.c).  The two are built from one tree; the ABI number and the
 * sizes of the shared structures catch a module left over from another build.
 */
#ifndef GHT_GPU_API_H
#define GHT_GPU_API_H

#include "ght_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Raise when ght_gpu_api or the structures in ght_internal.h change. */
#define GHT_GPU_ABI 1
#define GHT_GPU_MODULE_ENTRY "ght_cuda_module_init"

typedef struct ght_gpu_api
{
	int			(*available) (char *why, size_t whylen);
	ght_status	(*device_info) (int id, ght_device_info *info, char *why, size_t whylen);
	ght_status	(*ctx_init) (ght_ctx *ctx);
	void		(*ctx_fini) (ght_ctx *ctx);
	void		(*ctx_trim) (ght_ctx *ctx);
	void		(*transfer_stats) (ght_ctx *ctx, ght_transfer_stats *out);
	void	   *(*host_alloc) (ght_ctx *ctx, size_t bytes);
	void		(*host_free) (ght_ctx *ctx, void *p);
	ght_status	(*build) (ght_table *t, const void *keys, const void *payloads, uint64_t n, int on_device);
	void		(*free_table) (ght_table *t);
	ght_status	(*contains) (ght_table *t, const void *keys, uint64_t n, uint8_t *out);
	ght_status	(*select) (ght_table *t, const void *keys, uint64_t n, int anti,
						   uint32_t *out_idx, uint64_t *out_n);
	ght_status	(*probe_begin) (ght_probe *p, const void *keys);
	ght_status	(*probe_next) (ght_probe *p, uint64_t max_pairs, uint64_t *n_out);
	void		(*probe_end) (ght_probe *p);
	ght_status	(*insert) (ght_table *t, const void *keys, const void *payloads, uint64_t n);
	ght_status	(*delete_keys) (ght_table *t, const void *keys, uint64_t n, uint64_t *removed);
	ght_status	(*export_table) (ght_table *t, void *keys, uint64_t *payloads, uint64_t *n_out);
	ght_status	(*probe_stats) (ght_table *t, double *mean, uint32_t *max);
	ght_status	(*image_arrays) (ght_table *t, void *const dst[GHT_MEM_COUNT]);
	ght_status	(*attach_arrays) (ght_table *t, const void *const src[GHT_MEM_COUNT]);
	ght_status	(*mixed_batch) (ght_table *t, const uint8_t *ops, const void *keys,
								const uint64_t *payloads, uint64_t n, uint8_t *found);
} ght_gpu_api;

/*
 * The module's one exported function: fills *api and returns 0, or returns
 * -1 with a reason in why when the caller was built from another tree.
 */
typedef int (*ght_gpu_module_init_fn) (int abi, size_t ctx_size, size_t table_size,
									   size_t probe_size, ght_gpu_api *api,
									   char *why, size_t whylen);

#ifdef __cplusplus
}
#endif

#endif							/* GHT_GPU_API_H */
