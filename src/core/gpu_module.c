/*
 * gpu_module.c - the entry point of the CUDA module (gpuhash_cuda.so): the
 * GPU half (gpu_*.cu), the static CUDA runtime and libstdc++ live there, so
 * that a backend or parallel worker that only loads the extension does not
 * map, relocate and initialise them.  The extension opens the module when a
 * plan first runs on the GPU (gpu_loader.c).
 */
#include "gpu_api.h"

#include <stdio.h>

__attribute__((visibility("default"))) int
ght_cuda_module_init(int abi, size_t ctx_size, size_t table_size, size_t probe_size,
					 ght_gpu_api *api, char *why, size_t whylen)
{
	if (abi != GHT_GPU_ABI || ctx_size != sizeof(ght_ctx) ||
		table_size != sizeof(ght_table) || probe_size != sizeof(ght_probe))
	{
		snprintf(why, whylen,
				 "the CUDA module was built from another version of gpuhash "
				 "than the extension; install both from one build");
		return -1;
	}
	api->available = ght_gpu_available;
	api->device_info = ght_gpu_device_info;
	api->ctx_init = ght_gpu_ctx_init;
	api->ctx_fini = ght_gpu_ctx_fini;
	api->ctx_trim = ght_gpu_ctx_trim;
	api->transfer_stats = ght_gpu_transfer_stats;
	api->host_alloc = ght_gpu_host_alloc;
	api->host_free = ght_gpu_host_free;
	api->build = ght_gpu_build;
	api->free_table = ght_gpu_free;
	api->contains = ght_gpu_contains;
	api->select = ght_gpu_select;
	api->probe_begin = ght_gpu_probe_begin;
	api->probe_next = ght_gpu_probe_next;
	api->probe_end = ght_gpu_probe_end;
	api->insert = ght_gpu_insert;
	api->delete_keys = ght_gpu_delete;
	api->export_table = ght_gpu_export;
	api->probe_stats = ght_gpu_probe_stats;
	api->image_arrays = ght_gpu_image_arrays;
	api->attach_arrays = ght_gpu_attach_arrays;
	api->mixed_batch = ght_gpu_mixed_batch;
	return 0;
}
