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
void		cpu_dedupe_free(cpu_dedupe_t *d);

/* Allocate table memory slot `which` (host), tracked in t->mem / t->bytes. */
void	   *cpu_table_alloc(ght_table *t, int which, uint64_t bytes);
void		cpu_table_release(ght_table *t, int which);

/* Check for interrupts every this many loop iterations. */
#define CPU_CHECK_EVERY 65536

#endif
