/*
 * agg_spill.h - a GpuHashAggregate's groups written out in partitions, by
 * a hash of their keys, and read back one partition at a time
 * (agg_spill.c).
 *
 * Two uses, one shape.  In a parallel plan whose node combines the groups
 * itself (agg_combine.c), every participant writes all its groups into
 * files shared through the query's dynamic shared memory, and after a
 * barrier each partition is read by the one participant that claims it;
 * a group's partial states then meet in one process, which emits the
 * group's final values.  In a serial plan, a group table that outgrows
 * hash_mem is written to private temporary files and started again, and
 * each partition is combined in memory at the end.
 *
 * A record is opaque here: its first four bytes hold its whole length.
 */
#ifndef GPUHASH_AGG_SPILL_H
#define GPUHASH_AGG_SPILL_H

#include "storage/barrier.h"
#include "storage/dsm.h"
#include "storage/sharedfileset.h"
#include "port/atomics.h"

#pragma GCC visibility push(hidden)

/* partitions at most; a power of two */
#define GPUHASH_SPILL_MAX_PARTITIONS 1024

/* partitions of a partition too large to combine in hash_mem, split again */
#define GPUHASH_SPILL_SPLIT 32

/* levels of such splits at most (32^8 times the groups of the first level) */
#define GPUHASH_SPILL_MAX_LEVELS 8

/* What one participant did, for EXPLAIN ANALYZE. */
typedef struct GpuAggSpillStats
{
	bool		ran;
	uint64		rows;			/* folded */
	double		read_ms;		/* reading its input (no join) */
	double		fold_ms;
	uint64		written;		/* groups written out */
	uint64		pairs_written;	/* count(DISTINCT)'s pairs written beside them */
	double		write_ms;
	double		wait_ms;		/* for the others to finish writing */
	int			partitions;		/* combined by this participant */
	uint64		combined;		/* records (groups and pairs) read back */
	uint64		rewritten;		/* ... and written again, their partition too large */
	double		combine_ms;
	uint64		emitted;		/* groups it emitted */
} GpuAggSpillStats;

/*
 * The participants' common state, in the query's dynamic shared memory:
 * the barrier between writing and combining, the next partition to claim,
 * the file set, one SharedTuplestore per partition, then the stats.
 */
typedef struct GpuAggSpillShared
{
	Barrier		barrier;
	pg_atomic_uint32 next_partition;
	dsm_handle	segment;		/* for the workers' SharedFileSetAttach */
	int			nparticipants;
	int			npartitions;
	Size		sts_bytes;		/* one SharedTuplestore's */
	SharedFileSet fileset;
	/* then the tuplestores and the stats (agg_spill.c) */
} GpuAggSpillShared;

typedef struct GpuAggSpill GpuAggSpill;

/* the phases of the barrier */
#define SPILL_PHASE_WRITE 0
#define SPILL_PHASE_COMBINE 1

extern int	gpuhash_spill_partitions(double groups, Size group_bytes, int nparticipants);
extern Size gpuhash_spill_shared_size(int nparticipants, int npartitions);
extern void gpuhash_spill_shared_init(GpuAggSpillShared *sh, int nparticipants, int npartitions,
									  dsm_segment *seg);
extern void gpuhash_spill_shared_reinit(GpuAggSpillShared *sh);
extern GpuAggSpillStats *gpuhash_spill_stats(GpuAggSpillShared *sh);

extern GpuAggSpill *gpuhash_spill_open_shared(GpuAggSpillShared *sh, int participant,
											  MemoryContext cxt);
extern GpuAggSpill *gpuhash_spill_open_local(int npartitions, MemoryContext cxt);
extern int	gpuhash_spill_npartitions(const GpuAggSpill *sp);
extern void gpuhash_spill_put(GpuAggSpill *sp, int partition, void *record);
extern void gpuhash_spill_end_write(GpuAggSpill *sp);
extern int	gpuhash_spill_claim(GpuAggSpill *sp);
extern void gpuhash_spill_begin_read(GpuAggSpill *sp, int partition);
extern const void *gpuhash_spill_next(GpuAggSpill *sp);
extern void gpuhash_spill_end_read(GpuAggSpill *sp);
extern void gpuhash_spill_close(GpuAggSpill *sp);

#pragma GCC visibility pop

#endif
