/*
 * page_thread.h - a helper thread that works through numbered slots that
 * the backend fills (page_thread.c, used by heap_reader.c).
 */
#ifndef GPUHASH_PAGE_THREAD_H
#define GPUHASH_PAGE_THREAD_H

#include "c.h"

#pragma GCC visibility push(hidden)

typedef struct GpuhashPageThread GpuhashPageThread;

/* the most slots that may be posted and not yet waited for */
#define GPUHASH_PAGE_THREAD_MAX_RING 64

/*
 * Called for slot seq in the thread, or in the backend while it waits (two
 * slots may be worked on at once): it must not call anything of
 * PostgreSQL's that allocates, raises an error or takes a lock.
 */
typedef void (*GpuhashPageWork) (void *arg, uint64 seq);

/*
 * A thread that runs work(arg, seq) for each posted seq, started in order;
 * at most ring slots are posted and not yet waited for.  NULL and *why on
 * failure.
 */
extern GpuhashPageThread *gpuhash_page_thread_create(GpuhashPageWork work, void *arg, int ring,
													 const char **why);

/* Slots 0 .. posted - 1 are ready for the thread. */
extern void gpuhash_page_thread_post(GpuhashPageThread *t, uint64 posted);

/* Wait until slot seq is finished, working on the slots no one has started meanwhile. */
extern void gpuhash_page_thread_wait(GpuhashPageThread *t, uint64 seq);

/*
 * Stop: on return the thread touches no slot until gpuhash_page_thread_restart,
 * which numbers the slots from 0 again.
 */
extern void gpuhash_page_thread_stop(GpuhashPageThread *t);
extern void gpuhash_page_thread_restart(GpuhashPageThread *t);

/* Stop the thread and free it. */
extern void gpuhash_page_thread_destroy(GpuhashPageThread *t);

#pragma GCC visibility pop

#endif
