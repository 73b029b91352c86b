/*
 * ght_util.c - the core's helpers that both halves call: error details,
 * interrupt polling, the clock and table geometry.  The CUDA module
 * (gpu_module.c) links its own copy, so none of them may keep state.
 */
#include "ght_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

ght_status
ght_fail(ght_ctx *ctx, ght_status s, const char *fmt,...)
{
	va_list		ap;

	if (ctx)
	{
		va_start(ap, fmt);
		vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
		va_end(ap);
	}
	return s;
}

int
ght_interrupted(ght_ctx *ctx)
{
	return ctx->interrupt_cb != NULL && ctx->interrupt_cb(ctx->interrupt_arg) != 0;
}

double
ght_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- geometry ----------------------------------------------------------- */

int
ght_slot_bytes(int key_width)
{
	return key_width == 4 ? (int) sizeof(ght_slot32) : (int) sizeof(ght_slot64);
}

/* A power of two holding keys at the given load; 0 when over 2^32 slots. */
uint64_t
ght_linear_capacity(uint64_t keys, double load)
{
	double		want = ceil((double) keys / load);
	uint64_t	cap = 32;

	while ((double) cap < want)
		cap <<= 1;
	if (cap > ((uint64_t) 1 << 32))
		return 0;
	return cap;
}

uint32_t
ght_cuckoo_nbuckets(uint64_t keys, uint32_t avg)
{
	uint64_t	b = (keys + avg - 1) / avg;

	return b == 0 ? 1 : (uint32_t) b;
}
