/*
 * agg_parallel.c - a GpuHashAggregate in a parallel query: its part of the
 * query's dynamic shared memory, and letting go of it.
 *
 * The join's shared state (join_parallel.c) comes first, then, when the
 * participants combine the groups themselves (agg_combine.c), the spill's
 * (agg_spill.c).  A worker finds the second part after the first, whose
 * size every process computes alike from the participants; a node with no
 * join has no first part.  What the participants do with that state is
 * join_parallel.c's (the build) and agg_combine.c's (the groups).
 */
#include "gpuhash_pg.h"

#include "access/parallel.h"

#include "agg_combine.h"
#include "agg_exec.h"
#include "agg_spill.h"
#include "join_state.h"

static Size
join_part_size(GpuJoinState *gj, int nparticipants)
{
	return gj->scan_only ? 0 : MAXALIGN(gpuhash_join_shared_size(gj, nparticipants));
}

Size
gpuhash_agg_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	GpuJoinState *gj = (GpuJoinState *) node;
	int			n = pcxt->nworkers + 1;

	if (!gj->agg_combine)
		return join_part_size(gj, n);
	gj->spill_partitions = gpuhash_spill_partitions(gj->agg_est_groups,
													gpuhash_agg_group_bytes(gj), n);
	return join_part_size(gj, n) + gpuhash_spill_shared_size(n, gj->spill_partitions);
}

void
gpuhash_agg_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuJoinState *gj = (GpuJoinState *) node;
	int			n = pcxt->nworkers + 1;

	if (!gj->scan_only)
		gpuhash_join_init_dsm(node, pcxt, coordinate);
	if (!gj->agg_combine)
		return;
	gj->nparticipants = n;
	gj->spill_shared = (GpuAggSpillShared *) ((char *) coordinate + join_part_size(gj, n));
	gpuhash_spill_shared_init(gj->spill_shared, n, gj->spill_partitions, pcxt->seg);
}

void
gpuhash_agg_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuJoinState *gj = (GpuJoinState *) node;

	if (!gj->scan_only)
		gpuhash_join_reinit_dsm(node, pcxt, coordinate);
	if (!gj->agg_combine)
		return;
	/* as for the build: the leader lets go of the last round's files first */
	gpuhash_agg_combine_detach(gj);
	gj->combining = false;
	gj->all_spill_stats = NULL;
	gj->spill_shared = (GpuAggSpillShared *) ((char *) coordinate +
											  join_part_size(gj, gj->nparticipants));
	gpuhash_spill_shared_reinit(gj->spill_shared);
}

void
gpuhash_agg_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	GpuJoinState *gj = (GpuJoinState *) node;

	if (!gj->scan_only)
		gpuhash_join_init_worker(node, toc, coordinate);
	if (!gj->agg_combine)
		return;
	/* after the join's part, which its state sized by the participants */
	gj->spill_shared = (GpuAggSpillShared *) ((char *) coordinate +
											  join_part_size(gj, gj->nparticipants));
	gj->nparticipants = gj->spill_shared->nparticipants;
}

/*
 * Before the query's shared memory goes (join_parallel.c says when): let
 * go of the files and the barrier, and keep everyone's figures (leader).
 */
void
gpuhash_agg_shutdown(CustomScanState *node)
{
	GpuJoinState *gj = (GpuJoinState *) node;

	if (gj->spill_shared != NULL)
	{
		gpuhash_agg_combine_detach(gj);
		if (!IsParallelWorker())
		{
			Size		bytes = gj->spill_shared->nparticipants * sizeof(GpuAggSpillStats);

			gj->all_spill_stats = MemoryContextAlloc(node->ss.ps.state->es_query_cxt, bytes);
			memcpy(gj->all_spill_stats, gpuhash_spill_stats(gj->spill_shared), bytes);
		}
		gj->spill_shared = NULL;
		gj->shut_down = true;
	}
	if (!gj->scan_only)
		gpuhash_join_shutdown(node);
}
