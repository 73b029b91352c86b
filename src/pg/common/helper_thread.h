/*
 * helper_thread.h - starting the backend's helper threads, and stopping
 * them before the process's shared memory goes (helper_thread.c).
 */
#ifndef GPUHASH_HELPER_THREAD_H
#define GPUHASH_HELPER_THREAD_H

#include <pthread.h>

#pragma GCC visibility push(hidden)

/* Start fn(arg) with every signal blocked in the thread; pthread_create's result. */
extern int	gpuhash_helper_thread_start(pthread_t *thread, void *(*fn) (void *), void *arg);

/*
 * A helper's entry in the list stopped at exit: FATAL and exit skip the
 * callers' own cleanup, and a thread still reading shared memory when it
 * is detached would crash the process.  Embedded in the helper's state.
 */
typedef struct GpuhashExitStop
{
	void		(*stop) (void *arg);
	void	   *arg;
	struct GpuhashExitStop *next;
} GpuhashExitStop;

extern void gpuhash_helper_stop_at_exit(GpuhashExitStop *e, void (*stop) (void *), void *arg);
extern void gpuhash_helper_forget(GpuhashExitStop *e);

/* The machine's online processors, looked up once. */
extern int	gpuhash_online_cpus(void);

#define GPUHASH_MAX_TASK_THREADS 8
extern void gpuhash_helper_run_tasks(int ntasks, int nthreads, void (*fn) (void *arg, int task),
									 void *arg);

#pragma GCC visibility pop

#endif
