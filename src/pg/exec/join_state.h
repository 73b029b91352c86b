/*
 * join_state.h - the executor state of a GpuHashJoin, shared by
 * join_exec.c (one process), join_parallel.c (one build shared by the
 * participants of a parallel query), join_chain.c (a join reading the
 * pairs of the join below), join_right.c (a semi or anti join built from
 * its outer side) and join_explain.c (EXPLAIN).
 */
#ifndef GPUHASH_JOIN_STATE_H
#define GPUHASH_JOIN_STATE_H

#include "commands/explain.h"
#include "nodes/execnodes.h"
#include "port/atomics.h"
#include "portability/instr_time.h"

#include "lib/stringinfo.h"

#include "agg_spill.h"
#include "heap_reader.h"
#include "join_node.h"
#include "join_store.h"
#include "probe_overlap.h"

#pragma GCC visibility push(hidden)

/* What one process did, for EXPLAIN ANALYZE. */
typedef struct GpuJoinStats
{
	bool		ran;			/* this participant executed the node */
	bool		built;			/* ... and built the table */
	int			device;			/* ght_device */
	int			method;			/* ght_method of the table */
	double		setup_ms;		/* getting the device context */
	double		collect_ms;		/* reading the build side */
	double		build_ms;		/* hashing it */
	double		share_ms;		/* writing a shared build for the others, */
	double		share_alloc_ms; /* ... of which allocating the block */
	double		share_image_ms; /* ... and writing the table's image into it */
	double		build_wait_ms;	/* waiting for the others' reads and the build */
	double		attach_ms;		/* attaching a shared build */
	double		read_ms;		/* reading the outer side into batches */
	double		early_ms;		/* ... of which while the table was built */
	uint64		early_rows;		/* ... the rows of that first batch */
	double		probe_ms;		/* core probe calls, transfers included */
	bool		overlapped;		/* ... made by a helper thread */
	double		probe_wait_ms;	/* ... of which the backend waited for */
	double		fold_ms;		/* folding aggregates (GpuHashAggregate) */
	uint64		flushes;		/* ... its partial groups emitted early, past hash_mem */
	ght_transfer_stats xfer;	/* the probes' copies to and from the GPU */
	bool		inner_in_table; /* inner values are the table's payloads */
	uint64		build_rows;
	uint64		outer_rows;
	uint64		batches;
	uint64		table_bytes;	/* hash table memory on its device */
	uint64		peak_device_bytes;	/* context's device memory, at most */
	uint64		kf_bytes;		/* the outer rows' key filter: its size, */
	uint64		kf_removed;		/* ... the rows it removed, */
	bool		kf_dropped;		/* ... switched off after its first rows */
	uint64		repeat_keys;	/* right semi or anti: probe rows whose key was probed already */
	uint64		semi_rekeys;	/* semi or anti with other clauses: keys probed again for more pairs */
	uint64		dense_group_rows;	/* GROUP BY: rows whose group the dense front found */
} GpuJoinStats;

typedef enum GpuJoinEmit
{
	EMIT_NONE,					/* load the next outer batch */
	EMIT_PAIRS,					/* inner/left: pairs of the current batch */
	EMIT_ROWS,					/* semi/anti, and left after its pairs: rows of
								 * the current batch */
	EMIT_BUILD					/* right semi or anti, after the last batch: the
								 * build rows that matched (anti: did not) */
} GpuJoinEmit;

/* Where a right semi or anti join (GPUHASH_JOIN_IS_RIGHT) stands in a process. */
typedef enum GpuRightSemiPhase
{
	RS_PROBING,					/* marking the build rows that probes match */
	RS_EMITTING,				/* this process returns the marked rows */
	RS_DONE						/* returned, or left to another participant */
} GpuRightSemiPhase;

typedef struct GpuJoinShared GpuJoinShared;

/* Inner columns kept in the table at most: two key columns and a value. */
#define GJ_INLINE_MAX_COLS 3

typedef struct GpuJoinState
{
	CustomScanState css;

	/* from the plan */
	JoinType	jointype;
	AttrNumber	outer_key;
	AttrNumber	inner_key;
	Oid			outer_type;
	Oid			inner_type;
	/*
	 * A second key, packed with the first into 8 bytes (join_path.c), or 0;
	 * mixed when one of them is a bigint (gpuhash_mix_keys), and then the
	 * key holds neither value.
	 */
	AttrNumber	outer_key2;
	AttrNumber	inner_key2;
	Oid			outer_type2;
	Oid			inner_type2;
	bool		key_mixed;
	int			key_width;
	ght_method	plan_method;
	ght_device	plan_device;
	bool		inner_partial;
	double		est_build_rows;
	bool		key_filter;		/* planned: see kf_words */
	ExprState  *join_qual;		/* the join clauses besides the hash clause */
	int			n_join_quals;
	int			n_memo;			/* their parts kept per build row (pair_memo_exec.h), */
	struct GpuPairMemo *memo;	/* ... scan tuple columns after the inner ones */
	int			n_outer;		/* columns of the outer plan */
	int			n_inner;
	bool		keep_inner;		/* inner columns are read after the match */

	/*
	 * Inner columns kept in the table: when the inner side is its key (or
	 * the two columns of a packed key) and at most one other by-value
	 * column (inner_val, or -1), the table's payload can be that column's
	 * value instead of a row number, and a match costs no random fetch of a
	 * build row.  inline_ok says the columns allow it;
	 * inner_in_table that the build's values did (no NULLs, and each fits
	 * payload_width bytes).
	 */
	bool		inline_ok;		/* then the inner side has GJ_INLINE_MAX_COLS columns at most */
	int			inner_val;
	int			payload_width;
	bool		inner_in_table;

	/* the sides read from heap pages directly (heap_reader.c), or NULL */
	GpuhashHeapReader *outer_reader;
	GpuhashHeapReader *inner_reader;

	/*
	 * An outer side that is a GpuHashJoin of the same process, read as its
	 * batches' pairs instead of its tuples (join_exec.c), or NULL; outer
	 * column c is the child's scan tuple column child_col[c].  A semi,
	 * anti or left join read so hands over the batch rows it keeps (a left
	 * join's after its pairs) as pairs without build rows (rows_as_pairs),
	 * their numbers in fold_rows and their inner columns null_inner's.
	 */
	struct GpuJoinState *outer_child;
	int		   *child_col;
	bool		rows_as_pairs;
	Datum	   *row_values;		/* a row from a reader */
	bool	   *row_isnull;

	/* run */
	ght_ctx    *ctx;
	MemoryContext run_cxt;		/* build side; reset when rebuilt */
	MemoryContext batch_cxt;	/* outer batch */
	bool		built;
	bool		build_on_cpu;	/* join_parallel.c's choose_build_device */
	GpuhashStore inner;
	GpuhashRes *table;
	GpuhashRes *build_keys;
	GpuhashStore outer;
	GpuhashRes *outer_keys;
	uint64		batch_rows;		/* gpuhash.batch_rows, capped on the CPU */
	uint64		nkeys;
	uint32	   *key_row;		/* anti and left: batch row of each key */
	bool		outer_done;
	bool		table_empty;	/* the build holds no row */
	bool		outer_ready;	/* the outer batch's store and arrays are made */

	/*
	 * A worker of a shared build may fill its first outer batch while the
	 * table is built (gpuhash.read_during_build): read_stop is the shared
	 * flag the builder sets once the table is shared, early_kf says the key
	 * filter was set on the reader then, held_batch that the batch waits to
	 * be probed, and held_done that the outer side ended in it.
	 */
	pg_atomic_uint32 *read_stop;
	bool		early_kf;
	bool		held_batch;
	bool		held_done;

	/*
	 * A Bloom filter of the table's keys that the outer reader tests its
	 * rows' keys against (ght_keyfilter.h), or NULL.
	 */
	uint64	   *kf_words;
	uint64		kf_nwords;

	GpuJoinEmit emit;
	GpuhashRes *probe;
	const uint32 *pidx;
	const uint64 *brow;
	uint64		npairs;
	uint64		pos;
	GpuhashRes *found;			/* ght_contains output, a byte per key */
	uint8	   *row_match;		/* semi/anti/left: per batch row */
	uint32	   *fold_rows;		/* semi/anti/left: batch rows to fold, or to hand up a chain */
	uint32	   *row_key;		/* left aggregates: key of each batch row (key_row's inverse) */

	/*
	 * A right semi or anti join: a byte per build row, set once a probe
	 * matched it (in the shared block when parallel, where every participant
	 * marks).
	 */
	uint8	   *build_match;

	/*
	 * ... and, without other join clauses, the keys it probed lately
	 * (RECENT_KEYS of them, by hash): a probe row whose key is among them
	 * would only mark the same build rows again.
	 */
	struct RecentKeys *recent_keys;
	GpuRightSemiPhase rs_phase;
	uint64		rs_pos;			/* the next build row to look at */
	const Datum *null_inner;	/* left joins: a null-extended row's inner columns */
	const bool *null_inner_flags;
	uint64		row_pos;

	/*
	 * A helper thread probing each batch's keys while the batch is read
	 * (probe_overlap.c), or NULL; its results for the current batch.
	 */
	GpuhashOverlap *overlap;
	uint64		overlap_chunk;	/* keys handed to it at a time */
	bool		overlapped_batch;
	bool		overlap_pairs_left;
	const uint32 *ov_pidx;
	const uint64 *ov_brow;
	uint64		ov_npairs;

	/* GpuHashAggregate (agg_exec.c): aggregates folded as rows match */
	int			n_row_quals;	/* custom_exprs filtering rows before folding */
	/* EXPLAIN lines of the node's own, after the join's clauses */
	void		(*explain_more) (struct GpuJoinState *gj, List *context, bool useprefix,
								 ExplainState *es);
	int			naggs;			/* 0: a plain GpuHashJoin */
	struct GpuAggSpec *aggs;
	struct GpuAggAcc *acc;
	ExprState  *row_qual;		/* anti join's filter on the rows folded */
	Datum	   *cond_values;	/* the joined row's columns that aggregates' conditions read */
	bool	   *cond_isnull;
	int			ngroupkeys;		/* 0: no GROUP BY, one row */
	struct GpuAggInstr *group_keys;
	struct GpuAggGroups *groups;
	/*
	 * Per aggregate, count(DISTINCT)'s set of (group number, value) pairs,
	 * in the groups' memory; NULL without such an aggregate.
	 */
	struct GpuAggGroups *distinct;
	int64	   *group_key_buf;	/* each key's values over a chunk of rows */
	struct GpuAggDict *dicts;	/* per key: text values' numbers (agg_groups.h) */
	int64	  **inner_key_numbers;	/* per text key of the inner side: by build row, or -1 */
	MemoryContext agg_tmp_cxt;	/* a numeric value computed the slow way */
	int			nleaves;		/* columns the numeric arguments read (agg_acc.h) */
	struct GpuAggLeaf *leaves;
	struct GpuAggScratch *fixed_scratch;	/* their evaluation over a chunk */
	bool		agg_folded;		/* the join is folded; rows are emitted */
	uint64		agg_next;		/* the next group to emit */

	/*
	 * Groups written out by partition and combined again (agg_combine.c):
	 * in a parallel plan whose participants combine the groups themselves
	 * and emit final values (agg_combine), and in any node emitting final
	 * values whose groups outgrew hash_mem.
	 */
	bool		agg_combine;	/* the plan's: combined by the participants */
	double		agg_est_groups; /* the planner's estimate of all the groups */
	int			spill_partitions;	/* of the shared files, for this query */
	GpuAggSpillShared *spill_shared;	/* parallel: in the query's shared memory */
	struct GpuAggSpill *spill;	/* this process's handle, or NULL */
	bool		spill_attached; /* to spill_shared's barrier */
	/* partitions too large to combine, split again: one private spill a level below spill */
	struct GpuAggSpill *splits[GPUHASH_SPILL_MAX_LEVELS];
	int			nsplits;
	bool		combining;		/* groups are emitted a partition at a time */
	StringInfoData spill_rec;	/* the record being written */
	GpuAggSpillStats spill_stats;
	GpuAggSpillStats *all_spill_stats;	/* copied out at shutdown (leader) */

	/* parallel */
	GpuJoinShared *shared;		/* NULL when serial, and after shutdown */
	bool		shut_down;		/* shared build let go of until a rescan */
	bool		scan_only;		/* no join: a GpuHashAggregate over its one child's rows */
	bool		attached;
	int			nparticipants;
	GpuJoinStats *all_stats;	/* copied out at shutdown (leader) */

	GpuJoinStats stats;
} GpuJoinState;

static inline double
elapsed_ms_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/*
 * The value of inner key column c (0-based) of a row matched by probe key
 * key: the key itself, or for a packed key the half of column c (the first
 * key's in the high half).  Both halves are 4-byte values, sign-extended.
 */
static inline int64
gpuhash_inner_key_value(const GpuJoinState *gj, int c, int64 key)
{
	Assert(!gj->key_mixed);
	if (gj->inner_key2 == 0)
		return key;
	if (c == gj->inner_key - 1)
		return (int32) ((uint64) key >> 32);
	return (int32) (uint32) key;
}

/* The same as a datum of the column's type (c is a key column). */
static inline Datum
gpuhash_inner_key_datum(const GpuJoinState *gj, int c, int64 key)
{
	Oid			type = c == gj->inner_key - 1 ? gj->inner_type : gj->inner_type2;

	return gpuhash_key_datum(type, gpuhash_inner_key_value(gj, c, key));
}

/* The scan tuple's columns before a GpuHashAggregate's values. */
static inline int
gpuhash_join_scan_columns(const GpuJoinState *gj)
{
	return gj->n_outer + gj->n_inner + gj->n_memo;
}

/* join_exec.c */
extern List *gpuhash_join_quals(CustomScan *cscan, GpuJoinState *gj);
extern List *gpuhash_join_memo_exprs(CustomScan *cscan, GpuJoinState *gj);
extern List *gpuhash_join_row_quals(CustomScan *cscan, GpuJoinState *gj);
extern void gpuhash_join_ensure_built(GpuJoinState *gj);
extern void gpuhash_join_load_batch(GpuJoinState *gj);
extern void gpuhash_join_start_batch(GpuJoinState *gj);
extern bool gpuhash_join_next_pairs(GpuJoinState *gj);
extern uint32 *gpuhash_join_row_buffer(GpuJoinState *gj);
extern uint64 gpuhash_join_flagged_rows(GpuJoinState *gj, bool want);
extern void gpuhash_join_make_null_inner(GpuJoinState *gj);
extern TupleTableSlot *gpuhash_join_scan_tuple(GpuJoinState *gj, uint64 orow, bool matched,
											   uint64 kidx, uint64 ref);
extern GpuhashRes *gpuhash_join_collect(GpuJoinState *gj, GpuhashStore *store, uint64 *nkeys);
extern void gpuhash_join_build_table(GpuJoinState *gj, const void *keys, const void *payloads,
									 uint64 nkeys);
extern void *gpuhash_join_payload_array(GpuJoinState *gj, uint64 nkeys);
extern ght_ctx *gpuhash_join_ctx(GpuJoinState *gj);
extern void gpuhash_join_reset_build_memory(GpuJoinState *gj);
extern void gpuhash_join_drop_build(GpuJoinState *gj);
extern void gpuhash_join_start_overlap(GpuJoinState *gj, const void *image, uint64 image_bytes);
extern bool gpuhash_join_can_read_early(GpuJoinState *gj);
extern void gpuhash_join_read_early(GpuJoinState *gj, pg_atomic_uint32 *stop);

/*
 * The node's callbacks, which GpuHashAggregate's (agg_exec.c) use too; it
 * runs the join through the functions above.
 */
extern void gpuhash_join_init_state(GpuJoinState *gj, CustomScan *cscan,
									const CustomExecMethods *methods);
extern void gpuhash_join_begin(CustomScanState *node, EState *estate, int eflags);
extern void gpuhash_join_begin_scan(CustomScanState *node, EState *estate, int eflags);
extern void gpuhash_join_end(CustomScanState *node);
extern void gpuhash_join_rescan(CustomScanState *node);
extern bool gpuhash_join_is_plain_join(const PlanState *ps);

/* join_explain.c */
extern void gpuhash_join_explain(CustomScanState *node, List *ancestors, ExplainState *es);

/* join_parallel.c */
extern Size gpuhash_join_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
extern void gpuhash_join_init_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void gpuhash_join_reinit_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void gpuhash_join_init_worker(CustomScanState *node, shm_toc *toc, void *coordinate);
extern void gpuhash_join_shutdown(CustomScanState *node);
extern bool gpuhash_join_build_shared(GpuJoinState *gj);
extern void gpuhash_join_detach(GpuJoinState *gj);
extern bool gpuhash_join_last_to_probe(GpuJoinState *gj);
extern void gpuhash_join_publish_stats(GpuJoinState *gj);
extern Size gpuhash_join_shared_size(GpuJoinState *gj, int nparticipants);
extern uint64 gpuhash_join_key_filter_words(GpuJoinState *gj, double nkeys);
extern uint64 *gpuhash_join_new_key_filter(GpuJoinState *gj, uint64 nwords);
extern void gpuhash_join_note_key_filter(GpuJoinState *gj);

#pragma GCC visibility pop

#endif
