/*
 * probe_overlap.h - probing a batch's keys on the CPU in a helper thread
 * while the backend reads the rest of the batch (probe_overlap.c).
 */
#ifndef GPUHASH_PROBE_OVERLAP_H
#define GPUHASH_PROBE_OVERLAP_H

#include "ght.h"

#pragma GCC visibility push(hidden)

typedef struct GpuhashOverlap GpuhashOverlap;

/*
 * A helper probing the table image (read in place, as ght_table_attach_image
 * does on the CPU) with up to max_keys keys a batch: ght_contains when pairs
 * is false, else ght_probe for a table whose keys are unique (a match per key
 * at most).  NULL, with *why set, when it cannot be had; the caller then
 * probes itself.
 */
extern GpuhashOverlap *gpuhash_overlap_create(const void *image, uint64 image_bytes,
											  uint64 max_keys, bool pairs, const char **why);
extern void gpuhash_overlap_destroy(GpuhashOverlap *o);

/*
 * One batch: start, then post(n) each time keys[0..n) are written, then
 * finish with the batch's key count, which waits for the probes and returns
 * their status (and, for pairs, the pairs, valid until the next start).
 * found (contains) must hold the batch's keys.  Between start and finish
 * the helper reads keys and writes found; abandon, which calls nothing of
 * PostgreSQL, stops it, and must be called before an error leaves the batch.
 */
extern void gpuhash_overlap_start(GpuhashOverlap *o, const void *keys, uint8 *found);
extern void gpuhash_overlap_post(GpuhashOverlap *o, uint64 n);
extern ght_status gpuhash_overlap_finish(GpuhashOverlap *o, uint64 n, const uint32 **pidx,
										 const uint64 **brow, uint64 *npairs,
										 double *probe_ms, const char **detail);
extern void gpuhash_overlap_abandon(GpuhashOverlap *o);

#pragma GCC visibility pop

#endif
