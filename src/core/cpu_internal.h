/*
 * cpu_internal.h - pieces the CPU half's files share.
 */
#ifndef GHT_CPU_INTERNAL_H
#define GHT_CPU_INTERNAL_H

#include "ght_internal.h"

typedef struct cpu_dedupe_t
{
	uint32_t   *rows;			/* input row at each sorted position */
	void	   *ukeys;			/* distinct keys, ascending bits */
	uint32_t   *counts;			/* rows per distinct key */
	uint64_t	nunique;
} cpu_dedupe_t;

ght_status	cpu_dedupe(ght_ctx *ctx, const void *keys, int width, uint64_t n, cpu_dedupe_t *d);
void		cpu_dedupe_free(ght_ctx *ctx, cpu_dedupe_t *d);

/*
 * Every block a CPU context's tables, builds and probes use comes from
 * cpu_mem_alloc, so that the context's device-memory limit, byte count and
 * injected allocation failures work as they do on a GPU.  On failure it
 * records the detail in the context and returns NULL; the caller returns
 * cpu_mem_failure(ctx), the status of that failure.  Buffers of
 * ght_host_alloc and ght_export's results are not counted, as on a GPU.
 */
void	   *cpu_mem_alloc(ght_ctx *ctx, uint64_t bytes, int zero);
void		cpu_mem_free(ght_ctx *ctx, void *p);
ght_status	cpu_mem_failure(ght_ctx *ctx);

/* Allocate table memory slot `which` (host), tracked in t->mem / t->bytes. */
void	   *cpu_table_alloc(ght_table *t, int which, uint64_t bytes);
void		cpu_table_release(ght_table *t, int which);

/* Check for interrupts every this many loop iterations. */
#define CPU_CHECK_EVERY 65536

#endif
