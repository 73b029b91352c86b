/*
 * helper_thread.c - starting the backend's helper threads, and stopping
 * them before the process's shared memory goes.
 *
 * A helper thread (probe_overlap.c, page_thread.c) must never run one of
 * PostgreSQL's signal handlers, which assume the backend's own thread, so
 * it starts with every signal blocked.  And it may be reading shared
 * memory (a table image, pinned buffers) when a FATAL error or exit skips
 * its owner's cleanup, so a before_shmem_exit callback stops every live
 * helper first.
 */
#include "gpuhash_pg.h"

#include <signal.h>
#include <unistd.h>

#include "storage/ipc.h"

#include "helper_thread.h"

static GpuhashExitStop *live;
static bool hook_set;

int
gpuhash_helper_thread_start(pthread_t *thread, void *(*fn) (void *), void *arg)
{
	sigset_t	all,
				old;
	int			rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(thread, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static void
stop_all_at_exit(int code, Datum arg)
{
	for (GpuhashExitStop *e = live; e != NULL; e = e->next)
		e->stop(e->arg);
}

void
gpuhash_helper_stop_at_exit(GpuhashExitStop *e, void (*stop) (void *), void *arg)
{
	if (!hook_set)
	{
		before_shmem_exit(stop_all_at_exit, (Datum) 0);
		hook_set = true;
	}
	e->stop = stop;
	e->arg = arg;
	e->next = live;
	live = e;
}

void
gpuhash_helper_forget(GpuhashExitStop *e)
{
	for (GpuhashExitStop **pp = &live; *pp != NULL; pp = &(*pp)->next)
		if (*pp == e)
		{
			*pp = e->next;
			break;
		}
}

/* The threads of gpuhash_helper_run_tasks take the next task until none is left. */
typedef struct TaskSet
{
	void		(*fn) (void *arg, int task);
	void	   *arg;
	int			ntasks;
	int			next;			/* taken with __atomic_fetch_add */
} TaskSet;

static void *
take_tasks(void *p)
{
	TaskSet    *ts = p;
	int			i;

	while ((i = __atomic_fetch_add(&ts->next, 1, __ATOMIC_RELAXED)) < ts->ntasks)
		ts->fn(ts->arg, i);
	return NULL;
}

/*
 * Run fn(arg, 0 .. ntasks - 1) on the calling process and up to nthreads
 * helper threads, and return when every task is done; with no thread
 * started, the caller runs them all.  fn must call nothing of PostgreSQL:
 * it runs on threads, and the caller neither checks for interrupts nor
 * raises an error before all of them are joined, so nothing here needs
 * stopping at exit.
 */
void
gpuhash_helper_run_tasks(int ntasks, int nthreads, void (*fn) (void *arg, int task), void *arg)
{
	TaskSet		ts = {fn, arg, ntasks, 0};
	pthread_t	threads[GPUHASH_MAX_TASK_THREADS];
	int			started = 0;

	nthreads = Min(Min(nthreads, ntasks - 1), GPUHASH_MAX_TASK_THREADS);
	while (started < nthreads &&
		   gpuhash_helper_thread_start(&threads[started], take_tasks, &ts) == 0)
		started++;
	take_tasks(&ts);
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
}

int
gpuhash_online_cpus(void)
{
	static int	ncpus = 0;

	if (ncpus == 0)
	{
		long		n = sysconf(_SC_NPROCESSORS_ONLN);

		ncpus = n > 0 ? (int) n : 1;
	}
	return ncpus;
}
