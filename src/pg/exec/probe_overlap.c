/*
 * probe_overlap.c - probing a batch's keys on the CPU in a helper thread
 * while the backend reads the rest of the batch.
 *
 * A parallel worker of a GpuHashJoin probes the shared table on the CPU
 * (join_parallel.c), and with its input read straight from the heap
 * (heap_reader.c) the probes became the larger part of its time: one cache
 * miss per key, which reading the next rows does not need the result of.
 * So the keys are handed, a sixteenth of a batch at a time as it fills, to a thread
 * that probes them while the backend goes on reading; at the end of the
 * batch the backend waits only for the last handful (bench/NOTES.md
 * section 12).
 *
 * The thread calls only the core library (which knows nothing of
 * PostgreSQL), pthreads and the C library, through a core context and a
 * table handle of its own over the shared image, and runs with every signal
 * blocked.  It touches the batch's keys, its found flags and the image only
 * between gpuhash_overlap_start and the end of the batch; a backend that
 * leaves a batch early abandons it first: on ERROR (the caller's PG_CATCH),
 * and on FATAL or exit (a before_shmem_exit callback, which runs before
 * shared memory is detached).  Otherwise it waits on a condition variable,
 * touching nothing, and is joined when the build it serves is freed.
 */
#include "gpuhash_pg.h"

#include <pthread.h>
#include <time.h>

#include "miscadmin.h"

#include "helper_thread.h"
#include "probe_overlap.h"

struct GpuhashOverlap
{
	pthread_t	thread;
	pthread_mutex_t mu;
	pthread_cond_t work;		/* backend -> thread */
	pthread_cond_t idle;		/* thread -> backend */
	ght_ctx    *ctx;			/* the thread's own core context */
	ght_table  *table;			/* its handle on the image */
	bool		pairs;
	int			key_width;

	/* the batch: set by the backend under mu */
	const void *keys;
	uint8	   *found;
	uint64		posted;			/* keys[0..posted) may be probed */
	bool		last;			/* posted is the batch's final count */
	bool		abandon;
	bool		busy;			/* the thread may touch the batch */
	bool		quit;

	/* results: written by the thread */
	uint64		done;			/* keys probed */
	ght_status	status;
	char		detail[256];
	uint32	   *pidx;			/* pairs: max_keys of each */
	uint64	   *brow;
	uint64		npairs;
	uint64		max_keys;
	double		probe_ms;

	GpuhashExitStop exit_stop;
};

/* The same test as the backend's own (device.c): only cancel and terminate. */
static int
helper_interrupted(void *arg)
{
	return InterruptPending && (QueryCancelPending || ProcDiePending);
}

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/* Probe keys [start, end): in the thread, without the lock. */
static ght_status
probe_range(GpuhashOverlap *o, uint64 start, uint64 end)
{
	int			w = o->key_width;
	const char *keys = (const char *) o->keys + start * w;
	ght_probe  *p = NULL;
	ght_status	s;

	if (!o->pairs)
		return ght_contains(o->table, keys, end - start, o->found + start);
	s = ght_probe_begin(o->table, keys, end - start, &p);
	while (s == GHT_OK)
	{
		const uint32 *pi;
		const uint64 *br;
		uint64		m;

		s = ght_probe_next(p, end - start, &pi, &br, &m);
		if (s != GHT_OK || m == 0)
			break;
		if (o->npairs + m > o->max_keys)
		{
			s = GHT_ERR_INTERNAL;
			snprintf(o->detail, sizeof(o->detail), "more matches than keys in a table of unique keys");
			break;
		}
		for (uint64 j = 0; j < m; j++)
		{
			o->pidx[o->npairs + j] = (uint32) (pi[j] + start);
			o->brow[o->npairs + j] = br[j];
		}
		o->npairs += m;
	}
	if (p)
		ght_probe_end(p);
	return s;
}

static void *
helper_main(void *arg)
{
	GpuhashOverlap *o = arg;

	pthread_mutex_lock(&o->mu);
	for (;;)
	{
		uint64		start,
					end;
		ght_status	s;
		double		t0;

		while (!o->quit && !(o->busy && (o->abandon || o->done < o->posted || o->last)))
			pthread_cond_wait(&o->work, &o->mu);
		if (o->quit)
			break;
		if (o->abandon || o->status != GHT_OK || (o->done == o->posted && o->last))
		{
			o->busy = false;
			pthread_cond_broadcast(&o->idle);
			continue;
		}
		start = o->done;
		end = o->posted;
		pthread_mutex_unlock(&o->mu);

		t0 = now_ms();
		s = probe_range(o, start, end);

		pthread_mutex_lock(&o->mu);
		o->probe_ms += now_ms() - t0;
		o->done = end;
		if (s != GHT_OK)
		{
			o->status = s;
			if (o->detail[0] == '\0')
				snprintf(o->detail, sizeof(o->detail), "%s", ght_ctx_error_detail(o->ctx));
		}
	}
	pthread_mutex_unlock(&o->mu);
	return NULL;
}

void
gpuhash_overlap_abandon(GpuhashOverlap *o)
{
	pthread_mutex_lock(&o->mu);
	if (o->busy)
	{
		o->abandon = true;
		pthread_cond_signal(&o->work);
		while (o->busy)
			pthread_cond_wait(&o->idle, &o->mu);
	}
	pthread_mutex_unlock(&o->mu);
}

/* FATAL and exit skip the callers' PG_CATCH (helper_thread.c). */
static void
abandon_at_exit(void *arg)
{
	gpuhash_overlap_abandon(arg);
}

GpuhashOverlap *
gpuhash_overlap_create(const void *image, uint64 image_bytes, uint64 max_keys, bool pairs,
					   const char **why)
{
	GpuhashOverlap *o = calloc(1, sizeof(GpuhashOverlap));
	char		err[256];
	ght_stats	st;

	*why = NULL;
	if (o == NULL)
	{
		*why = "out of memory";
		return NULL;
	}
	o->pairs = pairs;
	o->max_keys = max_keys;
	if (pairs)
	{
		o->pidx = malloc(Max(max_keys, 1) * sizeof(uint32));
		o->brow = malloc(Max(max_keys, 1) * sizeof(uint64));
	}
	if ((pairs && (o->pidx == NULL || o->brow == NULL)) ||
		ght_ctx_create(GHT_CPU, 0, &o->ctx, err, sizeof(err)) != GHT_OK)
	{
		*why = "out of memory";
		goto fail;
	}
	ght_ctx_set_interrupt(o->ctx, helper_interrupted, NULL);
	if (ght_table_attach_image(o->ctx, image, image_bytes, &o->table) != GHT_OK)
	{
		*why = "the table's image could not be attached";
		goto fail;
	}
	ght_table_brief(o->table, &st);
	o->key_width = st.key_width;
	pthread_mutex_init(&o->mu, NULL);
	pthread_cond_init(&o->work, NULL);
	pthread_cond_init(&o->idle, NULL);

	if (gpuhash_helper_thread_start(&o->thread, helper_main, o) != 0)
	{
		*why = "no thread could be started";
		pthread_cond_destroy(&o->idle);
		pthread_cond_destroy(&o->work);
		pthread_mutex_destroy(&o->mu);
		goto fail;
	}
	gpuhash_helper_stop_at_exit(&o->exit_stop, abandon_at_exit, o);
	return o;

fail:
	if (o->table)
		ght_table_free(o->table);
	if (o->ctx)
		ght_ctx_destroy(o->ctx);
	free(o->pidx);
	free(o->brow);
	free(o);
	return NULL;
}

void
gpuhash_overlap_destroy(GpuhashOverlap *o)
{
	gpuhash_overlap_abandon(o);
	pthread_mutex_lock(&o->mu);
	o->quit = true;
	pthread_cond_signal(&o->work);
	pthread_mutex_unlock(&o->mu);
	pthread_join(o->thread, NULL);
	gpuhash_helper_forget(&o->exit_stop);
	pthread_cond_destroy(&o->idle);
	pthread_cond_destroy(&o->work);
	pthread_mutex_destroy(&o->mu);
	ght_table_free(o->table);
	ght_ctx_destroy(o->ctx);
	free(o->pidx);
	free(o->brow);
	free(o);
}

void
gpuhash_overlap_start(GpuhashOverlap *o, const void *keys, uint8 *found)
{
	pthread_mutex_lock(&o->mu);
	o->keys = keys;
	o->found = found;
	o->posted = o->done = o->npairs = 0;
	o->last = o->abandon = false;
	o->status = GHT_OK;
	o->detail[0] = '\0';
	o->probe_ms = 0;
	o->busy = true;
	pthread_mutex_unlock(&o->mu);
}

void
gpuhash_overlap_post(GpuhashOverlap *o, uint64 n)
{
	pthread_mutex_lock(&o->mu);
	o->posted = n;
	pthread_cond_signal(&o->work);
	pthread_mutex_unlock(&o->mu);
}

ght_status
gpuhash_overlap_finish(GpuhashOverlap *o, uint64 n, const uint32 **pidx, const uint64 **brow,
					   uint64 *npairs, double *probe_ms, const char **detail)
{
	pthread_mutex_lock(&o->mu);
	o->posted = n;
	o->last = true;
	pthread_cond_signal(&o->work);
	while (o->busy)
		pthread_cond_wait(&o->idle, &o->mu);
	pthread_mutex_unlock(&o->mu);
	*pidx = o->pidx;
	*brow = o->brow;
	*npairs = o->npairs;
	*probe_ms = o->probe_ms;
	*detail = o->detail;
	return o->status;
}
