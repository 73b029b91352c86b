/*
 * agg_spill.c - a GpuHashAggregate's groups written out by partition and
 * read back a partition at a time (agg_spill.h).
 *
 * Shared: one SharedTuplestore per partition, in a SharedFileSet that the
 * query's dynamic shared memory holds, so that every participant writes
 * each partition and any one of them can read it whole.  Local: one
 * temporary BufFile per partition, deleted when closed or when the
 * transaction ends.  Either way the files count against temp_file_limit
 * like PostgreSQL's own spills.
 */
#include "postgres.h"

#include <math.h>

#include "access/htup.h"
#include "access/parallel.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/memutils.h"
#include "utils/sharedtuplestore.h"

#include "agg_spill.h"

struct GpuAggSpill
{
	MemoryContext cxt;
	int			npartitions;
	/* shared: the tuplestores' accessors, one a partition */
	GpuAggSpillShared *sh;
	SharedTuplestoreAccessor **acc;
	/* local: the files, one a partition, made when first written */
	BufFile   **files;
	int			next_local;
	/* the partition being read, or -1, and its record buffer (local) */
	int			reading;
	char	   *buf;
	Size		buf_bytes;
};

/*
 * How many partitions for groups of group_bytes each, so that one
 * partition's groups take a quarter of hash_mem at most; at least four a
 * participant, so that the combining is shared evenly among them.
 */
int
gpuhash_spill_partitions(double groups, Size group_bytes, int nparticipants)
{
	double		want = Max(ceil(4.0 * groups * group_bytes / (double) get_hash_memory_limit()),
						   4.0 * Max(nparticipants, 2));
	int			n = 1;

	while (n < want && n < GPUHASH_SPILL_MAX_PARTITIONS)
		n *= 2;
	return n;
}

static Size
header_size(void)
{
	return MAXALIGN(sizeof(GpuAggSpillShared));
}

static SharedTuplestore *
shared_sts(GpuAggSpillShared *sh, int partition)
{
	return (SharedTuplestore *) ((char *) sh + header_size() + partition * sh->sts_bytes);
}

GpuAggSpillStats *
gpuhash_spill_stats(GpuAggSpillShared *sh)
{
	return (GpuAggSpillStats *) ((char *) sh + header_size() + sh->npartitions * sh->sts_bytes);
}

Size
gpuhash_spill_shared_size(int nparticipants, int npartitions)
{
	return header_size() + npartitions * MAXALIGN(sts_estimate(nparticipants)) +
		nparticipants * sizeof(GpuAggSpillStats);
}

/* The tuplestores and counters, empty (the leader; files already deleted). */
static void
init_tuplestores(GpuAggSpillShared *sh)
{
	BarrierInit(&sh->barrier, 0);
	pg_atomic_init_u32(&sh->next_partition, 0);
	for (int p = 0; p < sh->npartitions; p++)
	{
		char		name[NAMEDATALEN];

		snprintf(name, sizeof(name), "gpuhash_groups.%d", p);
		/* the leader's accessor is made again when it opens its handle */
		pfree(sts_initialize(shared_sts(sh, p), sh->nparticipants, 0, 0,
							 SHARED_TUPLESTORE_SINGLE_PASS, &sh->fileset, name));
	}
	memset(gpuhash_spill_stats(sh), 0, sh->nparticipants * sizeof(GpuAggSpillStats));
}

void
gpuhash_spill_shared_init(GpuAggSpillShared *sh, int nparticipants, int npartitions,
						  dsm_segment *seg)
{
	sh->segment = dsm_segment_handle(seg);
	sh->nparticipants = nparticipants;
	sh->npartitions = npartitions;
	sh->sts_bytes = MAXALIGN(sts_estimate(nparticipants));
	SharedFileSetInit(&sh->fileset, seg);
	init_tuplestores(sh);
}

/* A rescan: the files of the last round go, the state starts again. */
void
gpuhash_spill_shared_reinit(GpuAggSpillShared *sh)
{
	SharedFileSetDeleteAll(&sh->fileset);
	init_tuplestores(sh);
}

GpuAggSpill *
gpuhash_spill_open_shared(GpuAggSpillShared *sh, int participant, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	GpuAggSpill *sp = palloc0(sizeof(GpuAggSpill));

	if (participant >= sh->nparticipants)
		elog(ERROR, "gpuhash: parallel participant %d beyond the %d planned",
			 participant, sh->nparticipants);
	if (IsParallelWorker())
	{
		dsm_segment *seg = dsm_find_mapping(sh->segment);

		if (seg == NULL)
			elog(ERROR, "gpuhash: the parallel query's shared memory is not mapped");
		SharedFileSetAttach(&sh->fileset, seg);
	}
	sp->cxt = cxt;
	sp->sh = sh;
	sp->npartitions = sh->npartitions;
	sp->reading = -1;
	sp->acc = palloc(sh->npartitions * sizeof(SharedTuplestoreAccessor *));
	for (int p = 0; p < sh->npartitions; p++)
		sp->acc[p] = sts_attach(shared_sts(sh, p), participant, &sh->fileset);
	MemoryContextSwitchTo(old);
	return sp;
}

GpuAggSpill *
gpuhash_spill_open_local(int npartitions, MemoryContext cxt)
{
	GpuAggSpill *sp = MemoryContextAllocZero(cxt, sizeof(GpuAggSpill));

	sp->cxt = cxt;
	sp->npartitions = npartitions;
	sp->reading = -1;
	sp->files = MemoryContextAllocZero(cxt, npartitions * sizeof(BufFile *));
	return sp;
}

int
gpuhash_spill_npartitions(const GpuAggSpill *sp)
{
	return sp->npartitions;
}

void
gpuhash_spill_put(GpuAggSpill *sp, int partition, void *record)
{
	Assert(partition >= 0 && partition < sp->npartitions);
	if (sp->sh)
	{
		/* the record's length leads it, where a MinimalTuple's does */
		sts_puttuple(sp->acc[partition], NULL, (MinimalTuple) record);
		return;
	}
	if (sp->files[partition] == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(sp->cxt);

		sp->files[partition] = BufFileCreateTemp(false);
		MemoryContextSwitchTo(old);
	}
	BufFileWrite(sp->files[partition], record, *(uint32 *) record);
}

/* Done writing: the others may read what this process wrote. */
void
gpuhash_spill_end_write(GpuAggSpill *sp)
{
	if (sp->sh)
		for (int p = 0; p < sp->npartitions; p++)
			sts_end_write(sp->acc[p]);
}

/* The next partition to combine, or -1 when none is left. */
int
gpuhash_spill_claim(GpuAggSpill *sp)
{
	uint32		p;

	if (sp->sh)
		p = pg_atomic_fetch_add_u32(&sp->sh->next_partition, 1);
	else
		p = sp->next_local++;
	return p < (uint32) sp->npartitions ? (int) p : -1;
}

void
gpuhash_spill_begin_read(GpuAggSpill *sp, int partition)
{
	sp->reading = partition;
	if (sp->sh)
		sts_begin_parallel_scan(sp->acc[partition]);
	else if (sp->files[partition] != NULL &&
			 BufFileSeek(sp->files[partition], 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind a temporary file of a GpuHashAggregate: %m")));
}

/* The next record of the partition being read (valid until the next call), or NULL. */
const void *
gpuhash_spill_next(GpuAggSpill *sp)
{
	BufFile    *f;
	uint32		len;
	size_t		got;

	Assert(sp->reading >= 0);
	if (sp->sh)
		return sts_parallel_scan_next(sp->acc[sp->reading], NULL);
	f = sp->files[sp->reading];
	if (f == NULL || (got = BufFileRead(f, &len, sizeof(len))) == 0)
		return NULL;
	if (got != sizeof(len) || len < sizeof(len))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of a GpuHashAggregate: read only %zu of %zu bytes",
						got, sizeof(len))));
	if (len > sp->buf_bytes)
	{
		Size		want = Max(len, 2 * sp->buf_bytes);

		sp->buf = sp->buf ? repalloc(sp->buf, want) : MemoryContextAlloc(sp->cxt, want);
		sp->buf_bytes = want;
	}
	*(uint32 *) sp->buf = len;
	got = BufFileRead(f, sp->buf + sizeof(len), len - sizeof(len));
	if (got != len - sizeof(len))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read a temporary file of a GpuHashAggregate: read only %zu of %zu bytes",
						got, (size_t) (len - sizeof(len)))));
	return sp->buf;
}

/* Done with the partition being read: its local file goes now. */
void
gpuhash_spill_end_read(GpuAggSpill *sp)
{
	if (sp->reading < 0)
		return;
	if (sp->sh)
		sts_end_parallel_scan(sp->acc[sp->reading]);
	else if (sp->files[sp->reading] != NULL)
	{
		BufFileClose(sp->files[sp->reading]);
		sp->files[sp->reading] = NULL;
	}
	sp->reading = -1;
}

/*
 * Let go of everything: the local files are deleted; the shared ones stay
 * with their file set, which the query's shared memory takes with it.
 */
void
gpuhash_spill_close(GpuAggSpill *sp)
{
	gpuhash_spill_end_read(sp);
	if (sp->files)
		for (int p = 0; p < sp->npartitions; p++)
			if (sp->files[p] != NULL)
				BufFileClose(sp->files[p]);
	if (sp->acc)
		pfree(sp->acc);
	if (sp->files)
		pfree(sp->files);
	if (sp->buf)
		pfree(sp->buf);
	pfree(sp);
}
