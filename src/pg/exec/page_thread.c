/*
 * page_thread.c - a helper thread that works through numbered slots that
 * the backend fills.
 *
 * The direct heap reader (heap_reader.c) pins pages in the backend and
 * hands them to this thread to deform and filter, a slot per page, while
 * it goes on pinning the next ones and copying out the rows already done.
 * A page takes tens of microseconds, so waking a thread for each one would
 * cost as much as the work: the two sides publish progress through atomic
 * counters and spin briefly before the thread sleeps on a condition
 * variable.  The backend does not wait idle for a slot: it takes the next
 * unclaimed one itself, so where a filter removes most rows the backend and
 * its thread take pages apart side by side (a slot is claimed by whichever
 * side gets it first, and each marks the slots it finishes).
 *
 * The thread runs with every signal blocked and calls only the work
 * function it was given, which must not call into PostgreSQL.  The backend
 * stops it (gpuhash_page_thread_stop) before it lets go of what the slots
 * point at: at a rescan, at the end of the scan, from a memory context
 * callback when a query fails, and before shared memory is detached at
 * exit (helper_thread.c), since the slots point into shared buffers.
 */
#include "gpuhash_pg.h"

#include <pthread.h>
#include <sched.h>

#include "helper_thread.h"
#include "page_thread.h"

/* how long either side spins before it sleeps or yields */
#define THREAD_SPINS	4000
#define WAIT_SPINS		1000

struct GpuhashPageThread
{
	pthread_t	thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	GpuhashPageWork work;
	void	   *arg;

	/*
	 * Read and written with __atomic builtins, each writer's on a cache line
	 * of its own: one side spins on what the other writes.
	 */
	uint64		posted pg_attribute_aligned(64);	/* slots the backend has filled */
	int			stopped;		/* the thread must not start a slot */
	int			quit;
	uint64		claimed pg_attribute_aligned(64);	/* slots either side has started */
	int			working;		/* the thread may be in work() */
	int			sleeping pg_attribute_aligned(64);	/* the thread waits on cv */
	int			ring;			/* slots in flight at most */

	/* finished[seq % ring] is seq + 1 once slot seq is done */
	uint64		finished[GPUHASH_PAGE_THREAD_MAX_RING] pg_attribute_aligned(64);

	GpuhashExitStop exit_stop;
};

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static inline bool
has_work(GpuhashPageThread *t)
{
	return !__atomic_load_n(&t->stopped, __ATOMIC_SEQ_CST) &&
		__atomic_load_n(&t->claimed, __ATOMIC_ACQUIRE) < __atomic_load_n(&t->posted, __ATOMIC_ACQUIRE);
}

/* Take the next posted slot no one has started into *seq; false if there is none. */
static inline bool
claim(GpuhashPageThread *t, uint64 *seq)
{
	uint64		c = __atomic_load_n(&t->claimed, __ATOMIC_ACQUIRE);

	while (c < __atomic_load_n(&t->posted, __ATOMIC_ACQUIRE))
		if (__atomic_compare_exchange_n(&t->claimed, &c, c + 1, false, __ATOMIC_ACQ_REL,
										__ATOMIC_ACQUIRE))
		{
			*seq = c;
			return true;
		}
	return false;
}

static inline void
run_slot(GpuhashPageThread *t, uint64 seq)
{
	t->work(t->arg, seq);
	__atomic_store_n(&t->finished[seq % t->ring], seq + 1, __ATOMIC_RELEASE);
}

static void *
thread_main(void *p)
{
	GpuhashPageThread *t = p;
	int			spins = 0;

	while (!__atomic_load_n(&t->quit, __ATOMIC_SEQ_CST))
	{
		if (has_work(t))
		{
			uint64		seq;

			/*
			 * Announce the work before checking for a stop, and the stopper
			 * sets stopped before it looks at working: one of the two sees the
			 * other.  The counters are read again, since a restart may have
			 * reset them.
			 */
			__atomic_store_n(&t->working, 1, __ATOMIC_SEQ_CST);
			if (!__atomic_load_n(&t->stopped, __ATOMIC_SEQ_CST) && claim(t, &seq))
				run_slot(t, seq);
			__atomic_store_n(&t->working, 0, __ATOMIC_SEQ_CST);
			spins = 0;
			continue;
		}
		if (++spins < THREAD_SPINS)
		{
			cpu_relax();
			continue;
		}
		pthread_mutex_lock(&t->mu);
		__atomic_store_n(&t->sleeping, 1, __ATOMIC_SEQ_CST);
		while (!__atomic_load_n(&t->quit, __ATOMIC_SEQ_CST) && !has_work(t))
			pthread_cond_wait(&t->cv, &t->mu);
		__atomic_store_n(&t->sleeping, 0, __ATOMIC_SEQ_CST);
		pthread_mutex_unlock(&t->mu);
		spins = 0;
	}
	return NULL;
}

static void
wake(GpuhashPageThread *t)
{
	if (__atomic_load_n(&t->sleeping, __ATOMIC_SEQ_CST))
	{
		pthread_mutex_lock(&t->mu);
		pthread_cond_signal(&t->cv);
		pthread_mutex_unlock(&t->mu);
	}
}

static void
stop_at_exit(void *arg)
{
	gpuhash_page_thread_stop(arg);
}

GpuhashPageThread *
gpuhash_page_thread_create(GpuhashPageWork work, void *arg, int ring, const char **why)
{
	GpuhashPageThread *t = NULL;

	Assert(ring > 0 && ring <= GPUHASH_PAGE_THREAD_MAX_RING);
	*why = NULL;
	if (posix_memalign((void **) &t, 64, sizeof(GpuhashPageThread)) != 0)
	{
		*why = "out of memory";
		return NULL;
	}
	memset(t, 0, sizeof(GpuhashPageThread));
	t->work = work;
	t->arg = arg;
	t->ring = ring;
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->cv, NULL);
	if (gpuhash_helper_thread_start(&t->thread, thread_main, t) != 0)
	{
		*why = "no thread could be started";
		pthread_cond_destroy(&t->cv);
		pthread_mutex_destroy(&t->mu);
		free(t);
		return NULL;
	}
	gpuhash_helper_stop_at_exit(&t->exit_stop, stop_at_exit, t);
	return t;
}

void
gpuhash_page_thread_post(GpuhashPageThread *t, uint64 posted)
{
	__atomic_store_n(&t->posted, posted, __ATOMIC_SEQ_CST);
	wake(t);
}

void
gpuhash_page_thread_wait(GpuhashPageThread *t, uint64 seq)
{
	int			spins = 0;
	uint64		mine;

	/* a slot is bounded work, so the wait is short and not interruptible */
	while (__atomic_load_n(&t->finished[seq % t->ring], __ATOMIC_ACQUIRE) != seq + 1)
	{
		if (claim(t, &mine))
		{
			run_slot(t, mine);
			spins = 0;
		}
		else if (++spins % WAIT_SPINS == 0)
			sched_yield();
		else
			cpu_relax();
	}
}

void
gpuhash_page_thread_stop(GpuhashPageThread *t)
{
	__atomic_store_n(&t->stopped, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&t->working, __ATOMIC_SEQ_CST))
		cpu_relax();
}

void
gpuhash_page_thread_restart(GpuhashPageThread *t)
{
	for (int i = 0; i < t->ring; i++)
		__atomic_store_n(&t->finished[i], 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&t->claimed, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&t->posted, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&t->stopped, 0, __ATOMIC_SEQ_CST);
}

void
gpuhash_page_thread_destroy(GpuhashPageThread *t)
{
	gpuhash_page_thread_stop(t);
	pthread_mutex_lock(&t->mu);
	__atomic_store_n(&t->quit, 1, __ATOMIC_SEQ_CST);
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->thread, NULL);
	gpuhash_helper_forget(&t->exit_stop);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}
