/*
 * gpu_loader.c - the GPU half as the extension sees it: the CUDA module
 * (gpuhash_cuda.so beside the extension's own library) is opened on the
 * first call that needs a GPU, and each entry point forwards to it.
 *
 * The module carries the kernels for every architecture, the static CUDA
 * runtime and libstdc++: several megabytes that every backend and every
 * parallel worker would otherwise map and relocate when the extension is
 * loaded, whether or not anything runs on the GPU.  Planning asks only
 * whether the module is there (ght_have_cuda), never opens it.
 *
 * When the module cannot be opened, the GPU half behaves as the stub does
 * (no usable GPU, with dlerror's reason), so the CPU takes over as on a
 * build without CUDA.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* dladdr */
#endif
#include "gpu_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t module_once = PTHREAD_ONCE_INIT;
static ght_gpu_api api;
static int	api_ready = 0;
static char module_path[4096];
static char module_why[512];

/*
 * The module is named after the library this file is linked into:
 * gpuhash.so opens gpuhash_cuda.so, and a copy installed under another name
 * (bench/host's gpuhash_prev.so) opens its own.
 */
static int
find_module_path(void)
{
	Dl_info		info;
	const char *base;
	size_t		len;

	if (module_path[0] != '\0')
		return 1;
	if (dladdr((void *) find_module_path, &info) == 0 || info.dli_fname == NULL)
	{
		snprintf(module_why, sizeof(module_why),
				 "could not find the path of gpuhash's library");
		return 0;
	}
	base = info.dli_fname;
	len = strlen(base);
	if (len > 3 && strcmp(base + len - 3, ".so") == 0)
		len -= 3;
	if (snprintf(module_path, sizeof(module_path), "%.*s_cuda.so", (int) len, base) >=
		(int) sizeof(module_path))
	{
		module_path[0] = '\0';
		snprintf(module_why, sizeof(module_why), "the library's path is too long");
		return 0;
	}
	return 1;
}

static void
open_module(void)
{
	void	   *handle;
	ght_gpu_module_init_fn init;
	const char *err;

	if (!find_module_path())
		return;
	handle = dlopen(module_path, RTLD_NOW | RTLD_LOCAL);
	if (handle == NULL)
	{
		err = dlerror();
		snprintf(module_why, sizeof(module_why), "could not load gpuhash's CUDA module: %s",
				 err ? err : module_path);
		return;
	}
	*(void **) &init = dlsym(handle, GHT_GPU_MODULE_ENTRY);
	if (init == NULL)
	{
		snprintf(module_why, sizeof(module_why), "%s has no entry point %s",
				 module_path, GHT_GPU_MODULE_ENTRY);
		dlclose(handle);
		return;
	}
	if (init(GHT_GPU_ABI, sizeof(ght_ctx), sizeof(ght_table), sizeof(ght_probe),
			 &api, module_why, sizeof(module_why)) != 0)
	{
		dlclose(handle);
		return;
	}
	/* never closed: the CUDA runtime keeps threads and state in it */
	api_ready = 1;
}

static int
module(void)
{
	pthread_once(&module_once, open_module);
	return api_ready;
}

#define NO_MODULE(ctx) ght_fail((ctx), GHT_ERR_NO_DEVICE, "%s", module_why)

/* Whether this build can use a GPU at all: the module is installed. */
int
ght_have_cuda(void)
{
	static int	have = -1;

	if (have < 0)
		have = api_ready || (find_module_path() && access(module_path, R_OK) == 0);
	return have;
}

int
ght_gpu_available(char *why, size_t whylen)
{
	if (!module())
	{
		if (why)
			snprintf(why, whylen, "%s", module_why);
		return 0;
	}
	return api.available(why, whylen);
}

ght_status
ght_gpu_device_info(int id, ght_device_info *info, char *why, size_t whylen)
{
	if (!module())
	{
		if (why)
			snprintf(why, whylen, "%s", module_why);
		return GHT_ERR_NO_DEVICE;
	}
	return api.device_info(id, info, why, whylen);
}

ght_status
ght_gpu_ctx_init(ght_ctx *ctx)
{
	return module() ? api.ctx_init(ctx) : NO_MODULE(ctx);
}

/* The rest run only on a context ght_gpu_ctx_init made, so the module is open. */

void
ght_gpu_ctx_fini(ght_ctx *ctx)
{
	if (api_ready)
		api.ctx_fini(ctx);
}

void
ght_gpu_ctx_trim(ght_ctx *ctx)
{
	if (api_ready)
		api.ctx_trim(ctx);
}

void
ght_gpu_transfer_stats(ght_ctx *ctx, ght_transfer_stats *out)
{
	if (api_ready)
		api.transfer_stats(ctx, out);
	else
		memset(out, 0, sizeof(*out));
}

void *
ght_gpu_host_alloc(ght_ctx *ctx, size_t bytes)
{
	return api_ready ? api.host_alloc(ctx, bytes) : NULL;
}

void
ght_gpu_host_free(ght_ctx *ctx, void *p)
{
	if (api_ready)
		api.host_free(ctx, p);
}

void
ght_gpu_free(ght_table *t)
{
	if (api_ready)
		api.free_table(t);
}

void
ght_gpu_probe_end(ght_probe *p)
{
	if (api_ready)
		api.probe_end(p);
}

ght_status
ght_gpu_build(ght_table *t, const void *k, const void *p, uint64_t n, int d)
{
	return api_ready ? api.build(t, k, p, n, d) : NO_MODULE(t->ctx);
}

ght_status
ght_gpu_contains(ght_table *t, const void *k, uint64_t n, uint8_t *o)
{
	return api_ready ? api.contains(t, k, n, o) : NO_MODULE(t->ctx);
}

ght_status
ght_gpu_select(ght_table *t, const void *k, uint64_t n, int a, uint32_t *o, uint64_t *m)
{
	return api_ready ? api.select(t, k, n, a, o, m) : NO_MODULE(t->ctx);
}

ght_status
ght_gpu_probe_begin(ght_probe *p, const void *k)
{
	return api_ready ? api.probe_begin(p, k) : NO_MODULE(p->t->ctx);
}

ght_status
ght_gpu_probe_next(ght_probe *p, uint64_t m, uint64_t *n)
{
	return api_ready ? api.probe_next(p, m, n) : NO_MODULE(p->t->ctx);
}

ght_status
ght_gpu_insert(ght_table *t, const void *k, const void *p, uint64_t n)
{
	return api_ready ? api.insert(t, k, p, n) : NO_MODULE(t->ctx);
}

ght_status
ght_gpu_delete(ght_table *t, const void *k, uint64_t n, uint64_t *r)
{
	return api_ready ? api.delete_keys(t, k, n, r) : NO_MODULE(t->ctx);
}

ght_status
ght_gpu_export(ght_table *t, void *k, uint64_t *p, uint64_t *n)
{
	return api_ready ? api.export_table(t, k, p, n) : NO_MODULE(t->ctx);
}

ght_status
ght_gpu_probe_stats(ght_table *t, double *m, uint32_t *x)
{
	return api_ready ? api.probe_stats(t, m, x) : NO_MODULE(t->ctx);
}

ght_status
ght_gpu_mixed_batch(ght_table *t, const uint8_t *o, const void *k, const uint64_t *p,
					uint64_t n, uint8_t *f)
{
	return api_ready ? api.mixed_batch(t, o, k, p, n, f) : NO_MODULE(t->ctx);
}

ght_status
ght_gpu_image_arrays(ght_table *t, void *const d[GHT_MEM_COUNT])
{
	return api_ready ? api.image_arrays(t, d) : NO_MODULE(t->ctx);
}

ght_status
ght_gpu_attach_arrays(ght_table *t, const void *const s[GHT_MEM_COUNT])
{
	return api_ready ? api.attach_arrays(t, s) : NO_MODULE(t->ctx);
}
