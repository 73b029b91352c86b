/*
 * join_parallel.c - one build shared by the participants of a parallel
 * GpuHashJoin.
 *
 * Every participant (the leader and each worker) probes with its share of
 * the outer side, so each needs the whole table and the inner rows.  They
 * are built once and put into the query's dynamic shared memory area as one
 * flat block: the inner rows (join_store.c) followed by the table's image
 * (ght_table_attach_image).  A CPU participant probes that image where it
 * lies; a GPU participant copies it to the device through its own CUDA
 * context, because device memory cannot be shared between processes'
 * contexts without CUDA IPC, which the stream-ordered allocator's pools do
 * not offer by default.  A worker is a fresh process, and a GPU context
 * costs it about a second and half a gigabyte (measured, bench/NOTES.md),
 * so by default workers probe on the CPU and only the leader, whose context
 * lives as long as its session, uses the GPU (gpuhash.parallel_worker_gpu).
 *
 * A barrier orders the work in three phases:
 *   COLLECT: each participant attached in this phase reads its share of the
 *            inner side (all of it for one participant when the inner plan
 *            is not split) and publishes its rows as a part;
 *   BUILD:   the leader, if it took part in COLLECT, else the worker the
 *            barrier elects, merges the parts, builds the table and writes
 *            the block;
 *   PROBE:   everyone attaches the block and probes.
 * A participant that arrives late skips the phases that are over.  No one
 * waits after PROBE begins, so a worker blocked on a full tuple queue can
 * never hold up the leader at a barrier.
 */
#include "gpuhash_pg.h"

#include "access/parallel.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "port/atomics.h"
#include "portability/instr_time.h"
#include "storage/barrier.h"
#include "utils/dsa.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "ght_keyfilter.h"
#include "helper_thread.h"
#include "join_state.h"

#define PHASE_COLLECT 0
#define PHASE_BUILD 1
#define PHASE_PROBE 2
#define PHASE_DONE 3			/* a right join's: every participant probed */

struct GpuJoinShared
{
	Barrier		barrier;
	pg_atomic_uint32 inner_claimed; /* non-split inner side: who reads it */
	pg_atomic_uint32 leader_builds; /* the leader takes part in COLLECT */
	pg_atomic_uint32 block_ready;	/* the builder has shared the table */
	bool		inner_in_table; /* the block has no rows: values in the table */
	dsa_pointer block;			/* merged rows + table image */
	dsa_pointer match;			/* a right join's byte per build row */
	uint64		kf_nwords;		/* the key filter's words (0: none) */
	int			nslots;			/* participants: leader, then workers */
	dsa_pointer parts[FLEXIBLE_ARRAY_MEMBER];	/* [nslots], then stats, then
												 * the key filter */
};

static GpuJoinStats *
shared_stats(GpuJoinShared *sh)
{
	return (GpuJoinStats *) MAXALIGN(&sh->parts[sh->nslots]);
}

/*
 * The Bloom filter of the build keys, to which each participant adds the
 * keys it reads; sized by the planner's estimate of the build rows, as it
 * is made before they are read.
 */
static uint64 *
shared_key_filter(GpuJoinShared *sh)
{
	return (uint64 *) MAXALIGN(shared_stats(sh) + sh->nslots);
}

/* The key filter's words in shared memory: sized by the planner's estimate of the build rows. */
static uint64
shared_key_filter_words(GpuJoinState *gj)
{
	return gpuhash_join_key_filter_words(gj, gj->est_build_rows);
}

Size
gpuhash_join_shared_size(GpuJoinState *gj, int nslots)
{
	return MAXALIGN(MAXALIGN(offsetof(GpuJoinShared, parts) + nslots * sizeof(dsa_pointer)) +
					nslots * sizeof(GpuJoinStats)) + shared_key_filter_words(gj) * sizeof(uint64);
}

static int
my_slot(void)
{
	return IsParallelWorker() ? ParallelWorkerNumber + 1 : 0;
}

static void
shared_reset(GpuJoinShared *sh, int nslots, uint64 kf_nwords)
{
	BarrierInit(&sh->barrier, 0);
	pg_atomic_init_u32(&sh->inner_claimed, 0);
	pg_atomic_init_u32(&sh->leader_builds, 0);
	pg_atomic_init_u32(&sh->block_ready, 0);
	sh->inner_in_table = false;
	sh->block = InvalidDsaPointer;
	sh->match = InvalidDsaPointer;
	sh->nslots = nslots;
	for (int i = 0; i < nslots; i++)
		sh->parts[i] = InvalidDsaPointer;
	memset(shared_stats(sh), 0, nslots * sizeof(GpuJoinStats));
	sh->kf_nwords = kf_nwords;
	memset(shared_key_filter(sh), 0, kf_nwords * sizeof(uint64));
}


Size
gpuhash_join_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return gpuhash_join_shared_size((GpuJoinState *) node, pcxt->nworkers + 1);
}

void
gpuhash_join_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuJoinState *gj = (GpuJoinState *) node;

	shared_reset((GpuJoinShared *) coordinate, pcxt->nworkers + 1, shared_key_filter_words(gj));
	gj->shared = coordinate;
	gj->nparticipants = pcxt->nworkers + 1;

	/*
	 * The leader's GPU context is started now, before the workers are, and
	 * made by a helper thread while everyone reads the build side.  Made on
	 * the leader's first call instead, a session's first use of the GPU
	 * (0.2 s or more) could make the leader miss the build, which a worker
	 * would then do on the CPU while everyone waited (1.4 s for W1's 10 M
	 * rows; bench/NOTES.md, section 13); made here but in this process, it
	 * held back the workers' launch by as long (section 27).
	 */
	if (parallel_leader_participation)
		gpuhash_gpu_context_begin();
}

void
gpuhash_join_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuJoinShared *sh = coordinate;
	dsa_area   *area = node->ss.ps.state->es_query_dsa;

	/*
	 * The previous round's workers are gone; only the leader is here.  Its
	 * own rescan may not have run yet (it runs lazily when parameters
	 * changed), so it lets go of the old build and barrier now, before both
	 * are freed and reset.
	 */
	gpuhash_join_drop_build((GpuJoinState *) node);
	if (area != NULL)
	{
		if (DsaPointerIsValid(sh->block))
			dsa_free(area, sh->block);
		if (DsaPointerIsValid(sh->match))
			dsa_free(area, sh->match);
		for (int i = 0; i < sh->nslots; i++)
			if (DsaPointerIsValid(sh->parts[i]))
				dsa_free(area, sh->parts[i]);
	}
	shared_reset(sh, sh->nslots, sh->kf_nwords);
}

void
gpuhash_join_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuJoinState *gj = (GpuJoinState *) node;

	gj->shared = coordinate;
	gj->nparticipants = gj->shared->nslots;
}

/*
 * The last call that may touch the query's shared memory: a Gather unmaps it
 * right after its children's shutdown, which comes before their End when a
 * LIMIT or the executor stops early.  So everything that points into it goes
 * here (the build, the barrier), the leader keeps every participant's
 * figures for EXPLAIN ANALYZE, and until a rescan the node returns no more
 * rows.  It may be called again; only the first call does anything.
 */
void
gpuhash_join_shutdown(CustomScanState *node)
{
	GpuJoinState *gj = (GpuJoinState *) node;

	if (gj->shared == NULL)
		return;
	gpuhash_join_publish_stats(gj);
	gpuhash_join_drop_build(gj);
	if (!IsParallelWorker())
	{
		Size		bytes = gj->shared->nslots * sizeof(GpuJoinStats);

		gj->all_stats = MemoryContextAlloc(node->ss.ps.state->es_query_cxt, bytes);
		memcpy(gj->all_stats, shared_stats(gj->shared), bytes);
	}
	gj->shared = NULL;
	gj->shut_down = true;
}

void
gpuhash_join_publish_stats(GpuJoinState *gj)
{
	int			slot = my_slot();

	gpuhash_join_note_key_filter(gj);
	if (gj->shared != NULL && slot < gj->shared->nslots && gj->stats.ran)
		shared_stats(gj->shared)[slot] = gj->stats;
}

/*
 * Let go of the barrier.  A right semi or anti join's participants arrive
 * as they leave, so that the last one to go ends the probe phase: one that
 * comes later finds it over and reads nothing (gpuhash_join_build_shared).
 */
void
gpuhash_join_detach(GpuJoinState *gj)
{
	(void) gpuhash_join_last_to_probe(gj);
}

/*
 * Leave the barrier, and say whether this process was the last attached to
 * it.  For a right semi or anti join that is the participant whose probes
 * were the last: every mark is made, and it returns the build rows.  Others
 * still to come attach after the phase is over and do nothing, so no one
 * waits for anyone here (a worker blocked on its tuple queue could not come).
 */
bool
gpuhash_join_last_to_probe(GpuJoinState *gj)
{
	bool		last;

	if (!gj->attached)
		return false;
	gpuhash_join_publish_stats(gj);
	if (GPUHASH_JOIN_IS_RIGHT(gj->jointype))
		last = BarrierArriveAndDetach(&gj->shared->barrier);
	else
		last = BarrierDetach(&gj->shared->barrier);
	gj->attached = false;
	return last;
}

static dsa_area *
query_area(GpuJoinState *gj)
{
	dsa_area   *area = gj->css.ss.ps.state->es_query_dsa;

	if (area == NULL)
		elog(ERROR, "gpuhash: parallel join without a shared memory area");
	return area;
}

/*
 * Filling the shared block: a task for each part's rows, and the table
 * image's pages mapped in pieces of IMAGE_TASK_BYTES, run on up to
 * FILL_THREADS helper threads beside the builder when the block is at least
 * FILL_THREADS_MIN_BYTES.  Mapping fresh shared pages is most of the work
 * (the first writes fault them in; TPC-H q21's 1.5 M-row build spent 63 ms
 * allocating and mapping its block and 29 ms copying its rows on the H100
 * host, run 187), and the workers wait for it: with the threads, a 3 M-row
 * build's sharing took 133 ms instead of 238 ms there (run 188).
 */
#define IMAGE_TASK_BYTES ((Size) 8 << 20)
#define FILL_THREADS 4
#define FILL_THREADS_MIN_BYTES ((Size) 8 << 20)

typedef struct BlockFill
{
	GpuhashFlatMerge merge;
	char	   *image;
	Size		image_bytes;
} BlockFill;

static void
fill_block_task(void *arg, int task)
{
	BlockFill  *f = arg;
	Size		off;

	if (task < f->merge.nparts)
	{
		gpuhash_flat_merge_part(&f->merge, task);
		return;
	}
	off = (Size) (task - f->merge.nparts) * IMAGE_TASK_BYTES;
	gpuhash_prefault_for_write(f->image + off, Min(IMAGE_TASK_BYTES, f->image_bytes - off));
}

/* Copy the parts into the block at addr and map its pages; returns where the image goes. */
static char *
fill_block(char **parts, int nparts, const bool *byval, Size image_bytes, char *addr,
		   Size block_bytes)
{
	BlockFill	f;

	f.image = gpuhash_flat_merge_plan(&f.merge, parts, nparts, byval, image_bytes, addr);
	f.image_bytes = image_bytes;
	gpuhash_helper_run_tasks(nparts + (int) ((image_bytes + IMAGE_TASK_BYTES - 1) / IMAGE_TASK_BYTES),
							 block_bytes >= FILL_THREADS_MIN_BYTES ? FILL_THREADS : 0,
							 fill_block_task, &f);
	pfree(f.merge.row0);
	pfree(f.merge.arena0);
	return f.image;
}

static dsa_pointer
shared_alloc(dsa_area *area, Size bytes, char **addr)
{
	dsa_pointer dp = dsa_allocate_extended(area, bytes, DSA_ALLOC_HUGE | DSA_ALLOC_NO_OOM);

	if (!DsaPointerIsValid(dp))
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of shared memory for a parallel GPU hash join"),
				 errdetail("Failed on request of size %zu in dynamic shared memory.", bytes),
				 errhint("Disable parallel query, or set gpuhash.enable_join to off.")));
	*addr = dsa_get_address(area, dp);
	return dp;
}

/* COLLECT: read this participant's share and publish it as a part. */
static void
collect_part(GpuJoinState *gj)
{
	GpuJoinShared *sh = gj->shared;
	int			slot = my_slot();
	GpuhashStore store;
	GpuhashRes *keys;
	uint64		nkeys;
	char	   *addr;
	dsa_pointer dp;
	int			payload_width = 0;

	if (!gj->inner_partial &&
		pg_atomic_fetch_add_u32(&sh->inner_claimed, 1) != 0)
		return;
	if (slot >= sh->nslots)
		elog(ERROR, "gpuhash: parallel participant %d beyond the %d planned", slot, sh->nslots);
	keys = gpuhash_join_collect(gj, &store, &nkeys);
	if (sh->kf_nwords > 0)
		ght_keyfilter_add(shared_key_filter(sh), sh->kf_nwords, keys->ptr, gj->key_width, nkeys,
						  true);
	/* the inner values as payloads too, converted here and not by the builder */
	if (gj->inline_ok && gj->inner_val >= 0)
		payload_width = gj->payload_width;
	dp = shared_alloc(query_area(gj), gpuhash_store_flat_size(&store, gj->key_width, payload_width),
					  &addr);
	gpuhash_store_flatten(&store, keys->ptr, gj->key_width, gj->inner_val, payload_width, addr);
	sh->parts[slot] = dp;
	/* the part is published: this process's copy can go */
	gpuhash_join_reset_build_memory(gj);
}

/*
 * The parts' inner values as payloads, in part order, when they can all be
 * (gj->inner_in_table); NULL when they cannot or there is no value column.
 */
static void *
inner_payloads(GpuJoinState *gj, char **parts, int nparts, uint64 nkeys)
{
	char	   *payloads;
	uint64		off = 0;

	gj->inner_in_table = gj->inline_ok;
	if (!gj->inline_ok || gj->inner_val < 0)
		return NULL;
	payloads = gpuhash_join_payload_array(gj, nkeys);
	for (int i = 0; i < nparts && gj->inner_in_table; i++)
	{
		gj->inner_in_table = gpuhash_flat_payloads(parts[i], gj->inner_val, gj->payload_width,
												   payloads + off * gj->payload_width);
		off += gpuhash_flat_rows(parts[i]);
	}
	if (!gj->inner_in_table)
	{
		pfree(payloads);
		return NULL;
	}
	return payloads;
}

/*
 * About what the CPU takes to build a table, per key (W1's 10 M keys in
 * 1.4 s on the H100 host, bench/NOTES.md section 13), and what a backend's
 * first GPU context takes to make (160-250 ms there, sections 14 and 31).
 */
#define CPU_BUILD_NS_PER_KEY 150.0
#define GPU_CONTEXT_MS 200.0

/*
 * The device this process builds nkeys keys on, before gpuhash_join_ctx
 * first runs: the CPU where the GPU context is still being made and a CPU
 * build would be done well before it is.  A small table built first in a
 * fresh session (a dimension below another GPU join) otherwise waited for
 * the context, and every participant with it: 252 ms of TPC-H q03's 1.5 s
 * with every join the node's (run 101).  The leader then probes its share
 * on the CPU, as the workers do; a serial node, which probes everything
 * itself (build_local in join_exec.c), waits for the GPU instead.
 */
static void
choose_build_device(GpuJoinState *gj, uint64 nkeys)
{
	double		pending_ms;

	if (gj->ctx != NULL || IsParallelWorker())
		return;
	pending_ms = gpuhash_gpu_context_pending_ms();
	if (pending_ms < 0 || 2.0 * nkeys * CPU_BUILD_NS_PER_KEY / 1e6 > GPU_CONTEXT_MS - pending_ms)
		return;
	gj->build_on_cpu = true;
	elog(DEBUG1, "gpuhash: " UINT64_FORMAT " keys built on the CPU while the GPU context is made (%.1f ms so far)",
		 nkeys, pending_ms);
}

/* BUILD (the elected participant): merge the parts, hash, write the block. */
static void
build_block(GpuJoinState *gj)
{
	GpuJoinShared *sh = gj->shared;
	dsa_area   *area = query_area(gj);
	char	  **parts = palloc(sh->nslots * sizeof(char *));
	int			nparts = 0;
	uint64		nkeys = 0,
				off = 0;
	char	   *keys;
	char	   *addr;
	char	   *image;
	uint64		image_bytes;
	void	   *payloads;
	GpuhashStore proto;
	instr_time	start;
	double		keys_ms,
				inputs_ms,
				table_ms,
				alloc_ms,
				merge_ms,
				image_ms;
	Size		block_bytes;

	INSTR_TIME_SET_CURRENT(start);
	for (int i = 0; i < sh->nslots; i++)
		if (DsaPointerIsValid(sh->parts[i]))
		{
			parts[nparts] = dsa_get_address(area, sh->parts[i]);
			nkeys += gpuhash_flat_rows(parts[nparts]);
			nparts++;
		}
	choose_build_device(gj, nkeys);
	gpuhash_join_ctx(gj);

	/* the keys, in part order, so that row numbers follow the merge */
	keys = gpuhash_res_host_alloc(gj->build_keys, Max(nkeys, 1) * gj->key_width);
	for (int i = 0; i < nparts; i++)
	{
		uint64		n = gpuhash_flat_rows(parts[i]);

		memcpy(keys + off * gj->key_width, gpuhash_flat_keys(parts[i]), n * gj->key_width);
		off += n;
	}
	keys_ms = elapsed_ms_since(start);
	payloads = inner_payloads(gj, parts, nparts, nkeys);
	inputs_ms = elapsed_ms_since(start);
	gj->stats.collect_ms += inputs_ms;
	INSTR_TIME_SET_CURRENT(start);
	gpuhash_join_build_table(gj, keys, payloads, nkeys);
	table_ms = elapsed_ms_since(start);
	INSTR_TIME_SET_CURRENT(start);
	gpuhash_res_release(gj->build_keys);
	if (payloads)
		pfree(payloads);
	/* with the inner values in the table, no one needs the rows */
	if (gj->inner_in_table)
		nparts = 0;
	sh->inner_in_table = gj->inner_in_table;

	gpuhash_check(gj->ctx, ght_table_image_size(gj->table->ptr, &image_bytes),
				  "write the table's image");
	block_bytes = gpuhash_flat_merged_size(parts, nparts, image_bytes);
	sh->block = shared_alloc(area, block_bytes, &addr);
	alloc_ms = elapsed_ms_since(start);
	gpuhash_store_init(&proto, gj->run_cxt, ExecGetResultType(lsecond(gj->css.custom_ps)),
					   gj->keep_inner && !gj->inner_in_table);
	image = fill_block(parts, nparts, proto.byval, image_bytes, addr, block_bytes);
	merge_ms = elapsed_ms_since(start) - alloc_ms;
	gpuhash_check(gj->ctx, ght_table_image_write(gj->table->ptr, image, image_bytes),
				  "write the table's image");
	image_ms = elapsed_ms_since(start) - alloc_ms - merge_ms;
	gj->stats.share_alloc_ms += alloc_ms;
	gj->stats.share_image_ms += image_ms;
	elog(DEBUG1, "GpuHashJoin: " UINT64_FORMAT " keys gathered in %.3f ms and their values in %.3f ms, table built in %.3f ms; shared block of %zu bytes: allocated in %.3f ms, rows merged in %.3f ms, table image of " UINT64_FORMAT " bytes written in %.3f ms",
		 nkeys, keys_ms, inputs_ms - keys_ms, table_ms, block_bytes, alloc_ms, merge_ms,
		 image_bytes, image_ms);
	for (int i = 0; i < sh->nslots; i++)
		if (DsaPointerIsValid(sh->parts[i]))
		{
			dsa_free(area, sh->parts[i]);
			sh->parts[i] = InvalidDsaPointer;
		}
	if (GPUHASH_JOIN_IS_RIGHT(gj->jointype))
	{
		char	   *match;

		sh->match = shared_alloc(area, Max(nkeys, 1), &match);
		memset(match, 0, Max(nkeys, 1));
	}
	gj->stats.share_ms += elapsed_ms_since(start);
}

/*
 * Every participant that read build rows has added their keys by the end of
 * COLLECT: each then takes its own copy of the filter, once (a participant
 * reading early takes it before the build).
 */
static void
take_key_filter(GpuJoinState *gj)
{
	GpuJoinShared *sh = gj->shared;

	if (sh->kf_nwords > 0 && gj->kf_words == NULL)
		memcpy(gpuhash_join_new_key_filter(gj, sh->kf_nwords), shared_key_filter(sh),
			   sh->kf_nwords * sizeof(uint64));
}

/* PROBE: use the block; the builder keeps the table it already has. */
static void
attach_block(GpuJoinState *gj)
{
	char	   *block = dsa_get_address(query_area(gj), gj->shared->block);
	const char *image;
	Size		image_bytes;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	gpuhash_join_ctx(gj);
	gj->inner_in_table = gj->shared->inner_in_table;
	gpuhash_store_attach(&gj->inner, gj->run_cxt, ExecGetResultType(lsecond(gj->css.custom_ps)),
						 gj->keep_inner && !gj->inner_in_table, block, &image, &image_bytes);
	if (DsaPointerIsValid(gj->shared->match))
		gj->build_match = dsa_get_address(query_area(gj), gj->shared->match);
	if (gj->table->ptr == NULL)
	{
		gpuhash_check(gj->ctx,
					  ght_table_attach_image(gj->ctx, image, image_bytes,
											 (ght_table **) &gj->table->ptr),
					  "attach the shared hash table");
		gj->stats.attach_ms += elapsed_ms_since(start);
	}
	take_key_filter(gj);
	gpuhash_join_start_overlap(gj, image, image_bytes);
}

/* Wait at the barrier for everyone, counting the time for EXPLAIN ANALYZE. */
static bool
wait_for_others(GpuJoinState *gj)
{
	instr_time	start;
	bool		elected;

	INSTR_TIME_SET_CURRENT(start);
	elected = BarrierArriveAndWait(&gj->shared->barrier, PG_WAIT_EXTENSION);
	gj->stats.build_wait_ms += elapsed_ms_since(start);
	return elected;
}

/* false: a right join's probes are all over, and this participant has nothing to do */
bool
gpuhash_join_build_shared(GpuJoinState *gj)
{
	GpuJoinShared *sh = gj->shared;
	int			phase;

	/* the device context is wanted only once this participant's part is read */
	phase = BarrierAttach(&sh->barrier);
	gj->attached = true;
	if (phase >= PHASE_DONE)
	{
		BarrierDetach(&sh->barrier);
		gj->attached = false;
		return false;
	}
	if (phase == PHASE_COLLECT)
	{
		bool		elected;

		/*
		 * The leader builds when it takes part: its context outlives the
		 * query, while a worker's would be made for this query alone.  It
		 * says so before it arrives, so the elected worker sees it after.
		 */
		if (!IsParallelWorker())
			pg_atomic_write_u32(&sh->leader_builds, 1);
		collect_part(gj);
		elected = wait_for_others(gj);
		if (IsParallelWorker() ? elected && pg_atomic_read_u32(&sh->leader_builds) == 0 : true)
		{
			build_block(gj);
			pg_atomic_write_u32(&sh->block_ready, 1);
		}
		else if (gpuhash_join_can_read_early(gj))
		{
			/*
			 * Read the first outer batch instead of waiting.  The builder
			 * waits at the barrier below for this participant too, so the
			 * read stops soon after it says the table is shared.
			 */
			take_key_filter(gj);
			gpuhash_join_read_early(gj, &sh->block_ready);
		}
		phase = PHASE_BUILD;
	}
	if (phase == PHASE_BUILD)
		wait_for_others(gj);
	attach_block(gj);
	return true;
}
