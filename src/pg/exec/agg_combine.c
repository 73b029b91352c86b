/*
 * agg_combine.c - a GpuHashAggregate's groups as records, written out by
 * partition and combined again (agg_spill.h).
 *
 * A record holds one group: its key values and the accumulators of its
 * aggregates, each with only the fields its kind uses.  Text keys travel
 * as their bytes, since a value's number is its process's own, and a
 * numeric sum kept beside the integer one travels as a numeric.  A group's
 * partition comes from a hash that every process computes alike (integer
 * values, text bytes), so that all of a group's records meet in one
 * partition, and from other bits than the group table's slots use.  The
 * record keeps that hash, so that a partition too large to combine in
 * hash_mem can be split again by other bits of it (spill levels below).
 *
 * Layout (no alignment; read with memcpy): uint32 length, uint64 hash,
 * uint8 NULL mask, an int64 per integer key, each aggregate's fields, then a
 * uint32 length and the bytes of each non-NULL text key and of each numeric
 * sum.
 *
 * The end of the file is the node's side of it, called from agg_exec.c's
 * loop: where the participants combine the groups, each joins the others
 * at the spill's barrier before reading a row, writes the rest of its
 * groups once every row is folded and waits for the others; then, as
 * serially over private files, partitions are claimed and combined until
 * none is left.
 */
#include "gpuhash_pg.h"

#include "access/parallel.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "agg_acc.h"
#include "agg_combine.h"
#include "agg_exec.h"
#include "agg_groups.h"
#include "agg_spill.h"
#include "join_state.h"

/* A group's hash, from its keys (text keys: their bytes' hashes). */
static uint64
group_hash(const GpuJoinState *gj, const int64 *keys, uint8 nulls)
{
	/* a seed of its own: the group table's hash starts from the NULL mask alone */
	uint64		h = UINT64CONST(0x243f6a8885a308d3) ^ nulls;

	for (int k = 0; k < gj->ngroupkeys; k++)
	{
		uint64		v = 0;

		if (!(nulls & (1 << k)))
			v = gpuhash_text_key(&gj->group_keys[k]) ?
				gpuhash_dict_hash(&gj->dicts[k], (uint32) keys[k]) : (uint64) keys[k];
		h = gpuhash_mix64(h ^ v) + k;
	}
	return h;
}

/*
 * The partition of a group of hash h at spill level level: the high bits,
 * since the group table's slots take the low ones; below the first level,
 * of the hash mixed again, so that a partition's groups spread anew.
 */
static int
partition_of(uint64 h, int level, int npartitions)
{
	if (level > 0)
		h = gpuhash_mix64(h + level);
	return (int) ((h >> 40) & (uint64) (npartitions - 1));
}

/* a record's key hash, which follows its length */
static inline uint64
record_hash(const char *rec)
{
	uint64		h;

	memcpy(&h, rec + sizeof(uint32), sizeof(h));
	return h;
}

static inline void
put(StringInfo b, const void *p, int n)
{
	appendBinaryStringInfo(b, p, n);
}

static void
put_blob(StringInfo b, Datum v)
{
	uint32		n = VARSIZE_ANY(DatumGetPointer(v));

	put(b, &n, sizeof(n));
	put(b, DatumGetPointer(v), n);
}

/* the fields of one aggregate's accumulator that its kind uses */
static void
put_acc(StringInfo b, const GpuAggSpec *a, const GpuAggAcc *acc)
{
	/* count(DISTINCT) is counted again from its pairs' records */
	if (a->kind == GA_COUNT_DISTINCT)
		return;
	put(b, &acc->count, sizeof(acc->count));
	if (a->kind == GA_COUNT_STAR || a->kind == GA_COUNT)
		return;
	put(b, &acc->have, sizeof(acc->have));
	if (a->kind == GA_MIN || a->kind == GA_MAX)
	{
		put(b, &acc->best, sizeof(acc->best));
		return;
	}
#ifdef HAVE_INT128
	if (a->argwidth == GPUHASH_NUMERIC || a->argwidth == 8)
	{
		bool		spilled = acc->spill != (Datum) 0;

		put(b, &acc->wide_sum, sizeof(acc->wide_sum));
		if (a->argwidth == GPUHASH_NUMERIC)
		{
			put(b, &spilled, sizeof(spilled));
			put(b, &acc->seen_scale, sizeof(acc->seen_scale));
		}
		return;
	}
#endif
	put(b, &acc->sum, sizeof(acc->sum));
}

/*
 * The NULL mask's bit that marks a record of count(DISTINCT)'s pair, not
 * of a group (GPUHASH_DISTINCT_MAX_KEYS leaves it free).  Such a record has
 * its group's keys, so that it meets the group's record in a partition,
 * and in place of accumulators the aggregate's number and the value.
 */
#define PAIR_RECORD 0x80

/*
 * Group g of the table as a record in b; with pair_agg >= 0, the record of
 * that count(DISTINCT)'s value of the group instead.
 */
static void
group_record(GpuJoinState *gj, uint32 g, int pair_agg, int64 value, StringInfo b)
{
	const int64 *keys = gpuhash_group_keys(gj->groups, g);
	uint8		nulls = gpuhash_group_nulls(gj->groups, g);
	const GpuAggAcc *accs = gpuhash_group_acc(gj->groups, g);
	uint32		len = 0;
	uint64		h = group_hash(gj, keys, nulls);
	uint8		mask = pair_agg >= 0 ? nulls | PAIR_RECORD : nulls;

	resetStringInfo(b);
	put(b, &len, sizeof(len));
	put(b, &h, sizeof(h));
	put(b, &mask, sizeof(mask));
	for (int k = 0; k < gj->ngroupkeys; k++)
		if (!gpuhash_text_key(&gj->group_keys[k]))
			put(b, &keys[k], sizeof(int64));
	if (pair_agg >= 0)
	{
		uint16		i = (uint16) pair_agg;

		put(b, &i, sizeof(i));
		put(b, &value, sizeof(value));
	}
	else
		for (int i = 0; i < gj->naggs; i++)
			put_acc(b, &gj->aggs[i], &accs[i]);
	for (int k = 0; k < gj->ngroupkeys; k++)
		if (gpuhash_text_key(&gj->group_keys[k]) && !(nulls & (1 << k)))
			put_blob(b, gpuhash_dict_value(&gj->dicts[k], (uint32) keys[k]));
	if (pair_agg < 0)
		for (int i = 0; i < gj->naggs; i++)
			if (accs[i].spill != (Datum) 0)
				put_blob(b, accs[i].spill);
	len = (uint32) b->len;
	memcpy(b->data, &len, sizeof(len));
}

/*
 * Write every group of the table into the partitions of gj->spill; the
 * table is then the caller's to start again.
 */
void
gpuhash_agg_write_groups(GpuJoinState *gj)
{
	int			npartitions = gpuhash_spill_npartitions(gj->spill);
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	if (gj->spill_rec.data == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(gj->css.ss.ps.state->es_query_cxt);

		initStringInfo(&gj->spill_rec);
		MemoryContextSwitchTo(old);
	}
	for (uint64 g = 0; g < gj->groups->ngroups; g++)
	{
		if ((g & 0xFFFF) == 0xFFFF)
			CHECK_FOR_INTERRUPTS();
		group_record(gj, (uint32) g, -1, 0, &gj->spill_rec);
		gpuhash_spill_put(gj->spill,
						  partition_of(record_hash(gj->spill_rec.data), 0, npartitions),
						  gj->spill_rec.data);
	}
	/* count(DISTINCT)'s pairs, each beside its group */
	for (int i = 0; gj->distinct != NULL && i < gj->naggs; i++)
	{
		const GpuAggGroups *seen = &gj->distinct[i];

		if (gj->aggs[i].kind != GA_COUNT_DISTINCT)
			continue;
		for (uint64 e = 0; e < seen->ngroups; e++)
		{
			const int64 *pair = gpuhash_group_keys(seen, (uint32) e);

			if ((e & 0xFFFF) == 0xFFFF)
				CHECK_FOR_INTERRUPTS();
			group_record(gj, (uint32) pair[0], i, pair[1], &gj->spill_rec);
			gpuhash_spill_put(gj->spill,
							  partition_of(record_hash(gj->spill_rec.data), 0, npartitions),
							  gj->spill_rec.data);
		}
		gj->spill_stats.pairs_written += seen->ngroups;
	}
	gj->spill_stats.written += gj->groups->ngroups;
	gj->spill_stats.write_ms += elapsed_ms_since(start);
}

/* Reading a record: a cursor over its bytes. */
typedef struct RecordReader
{
	const char *p;
} RecordReader;

static inline void
get(RecordReader *r, void *dst, int n)
{
	memcpy(dst, r->p, n);
	r->p += n;
}

/* The next blob, copied to aligned memory of cxt. */
static Datum
get_blob(RecordReader *r, MemoryContext cxt)
{
	uint32		n;
	char	   *v;

	get(r, &n, sizeof(n));
	v = MemoryContextAlloc(cxt, n);
	get(r, v, n);
	return PointerGetDatum(v);
}

static void
get_acc(RecordReader *r, const GpuAggSpec *a, GpuAggAcc *acc, bool *spilled)
{
	memset(acc, 0, sizeof(*acc));
	*spilled = false;
	if (a->kind == GA_COUNT_DISTINCT)
		return;
	get(r, &acc->count, sizeof(acc->count));
	if (a->kind == GA_COUNT_STAR || a->kind == GA_COUNT)
		return;
	get(r, &acc->have, sizeof(acc->have));
	if (a->kind == GA_MIN || a->kind == GA_MAX)
	{
		get(r, &acc->best, sizeof(acc->best));
		return;
	}
#ifdef HAVE_INT128
	if (a->argwidth == GPUHASH_NUMERIC || a->argwidth == 8)
	{
		get(r, &acc->wide_sum, sizeof(acc->wide_sum));
		if (a->argwidth == GPUHASH_NUMERIC)
		{
			get(r, spilled, sizeof(*spilled));
			get(r, &acc->seen_scale, sizeof(acc->seen_scale));
		}
		return;
	}
#endif
	get(r, &acc->sum, sizeof(acc->sum));
}

/*
 * Combine src, an accumulator read back, into dst: what PostgreSQL's
 * combine functions do with partial states.  Integer sums wrap, as the
 * serial transition functions' int8 state does.
 */
static void
combine_acc(GpuJoinState *gj, const GpuAggSpec *a, GpuAggAcc *dst, const GpuAggAcc *src,
			Datum src_spill)
{
#ifdef HAVE_INT128
	if (a->argwidth == GPUHASH_NUMERIC && a->kind != GA_COUNT)
	{
		gpuhash_fixed_combine(a, dst, src, src_spill, gj->groups->cxt, gj->agg_tmp_cxt);
		return;
	}
#endif
	dst->count += src->count;
	switch (a->kind)
	{
		case GA_SUM:
		case GA_AVG:
#ifdef HAVE_INT128
			if (a->argwidth == 8)
				dst->wide_sum += src->wide_sum;
			else
#endif
				dst->sum = (int64) ((uint64) dst->sum + (uint64) src->sum);
			dst->have |= src->have;
			break;
		case GA_MIN:
		case GA_MAX:
			if (src->have &&
				(!dst->have || (a->kind == GA_MIN ? src->best < dst->best : src->best > dst->best)))
				dst->best = src->best;
			dst->have |= src->have;
			break;
		default:
			break;
	}
}

/*
 * Fold one record into its group of gj->groups, made if new unless full is
 * set; false when it was not there to fold into.  src and spilled have
 * room for each aggregate's accumulator read back.
 */
static bool
combine_record(GpuJoinState *gj, const char *rec, bool full, GpuAggAcc *src, bool *spilled,
			   MemoryContext tmp)
{
	RecordReader r = {rec + sizeof(uint32) + sizeof(uint64)};
	int64		keys[GPUHASH_AGG_MAX_KEYS];
	uint32		group;
	GpuAggAcc  *accs;
	uint8		nulls;
	bool		pair;
	uint16		pair_agg = 0;
	int64		value = 0;

	get(&r, &nulls, sizeof(nulls));
	pair = gj->distinct != NULL && (nulls & PAIR_RECORD) != 0;
	if (pair)
		nulls &= ~PAIR_RECORD;
	for (int k = 0; k < gj->ngroupkeys; k++)
	{
		keys[k] = 0;
		if (!gpuhash_text_key(&gj->group_keys[k]))
			get(&r, &keys[k], sizeof(int64));
	}
	if (pair)
	{
		get(&r, &pair_agg, sizeof(pair_agg));
		get(&r, &value, sizeof(value));
	}
	else
		for (int i = 0; i < gj->naggs; i++)
			get_acc(&r, &gj->aggs[i], &src[i], &spilled[i]);
	for (int k = 0; k < gj->ngroupkeys; k++)
		if (gpuhash_text_key(&gj->group_keys[k]) && !(nulls & (1 << k)))
		{
			keys[k] = gpuhash_dict_number(&gj->dicts[k], get_blob(&r, tmp), !full);
			if (keys[k] == GPUHASH_NO_NUMBER)
				return false;	/* a value no group has yet */
		}
	group = gpuhash_groups_find(gj->groups, keys, nulls, !full);
	if (group == GPUHASH_NO_GROUP)
		return false;
	if (pair)
	{
		/* a pair written out before and after the groups started again counts once */
		gpuhash_agg_add_distinct(gj, pair_agg, group, value);
		return true;
	}
	accs = gpuhash_group_acc(gj->groups, group);
	for (int i = 0; i < gj->naggs; i++)
		combine_acc(gj, &gj->aggs[i], &accs[i], &src[i],
					spilled[i] ? get_blob(&r, tmp) : (Datum) 0);
	return true;
}

/*
 * Read partition p of from (at spill level level) back into gj->groups
 * (empty), combining each group's records into one.  Once the table passes
 * hash_mem, a record of a group it holds is still combined there, and one
 * of another group is written to *overflow (made here, a private spill of
 * level + 1), as PostgreSQL's hash aggregation spills: the groups left in
 * the table are then complete, and the others are combined later.
 */
void
gpuhash_agg_combine_partition(GpuJoinState *gj, GpuAggSpill *from, int level, int p,
							  GpuAggSpill **overflow)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "GpuHashAggregate record",
											  ALLOCSET_SMALL_SIZES);
	GpuAggAcc  *src = MemoryContextAlloc(tmp, Max(gj->naggs, 1) * sizeof(GpuAggAcc));
	bool	   *spilled = MemoryContextAlloc(tmp, Max(gj->naggs, 1) * sizeof(bool));
	MemoryContext per_record = AllocSetContextCreate(tmp, "GpuHashAggregate record values",
													 ALLOCSET_SMALL_SIZES);
	instr_time	start;
	const char *rec;
	uint64		n = 0;
	bool		full = false;

	INSTR_TIME_SET_CURRENT(start);
	*overflow = NULL;
	gpuhash_spill_begin_read(from, p);
	while ((rec = gpuhash_spill_next(from)) != NULL)
	{
		if ((++n & 0x3FF) == 0)
		{
			CHECK_FOR_INTERRUPTS();
			/* at least one group stays, so that every level makes progress */
			full = full || (gj->groups->ngroups > 0 && gpuhash_agg_tables_full(gj));
		}
		if (!combine_record(gj, rec, full, src, spilled, per_record))
		{
			if (*overflow == NULL)
				*overflow = gpuhash_spill_open_local(GPUHASH_SPILL_SPLIT,
													 gj->css.ss.ps.state->es_query_cxt);
			/* the record as read, its hash with it */
			gpuhash_spill_put(*overflow,
							  partition_of(record_hash(rec), level + 1, GPUHASH_SPILL_SPLIT),
							  (void *) rec);
			gj->spill_stats.rewritten++;
		}
		MemoryContextReset(per_record);
	}
	gpuhash_spill_end_read(from);
	MemoryContextDelete(tmp);
	gj->spill_stats.partitions++;
	gj->spill_stats.combined += n;
	gj->spill_stats.combine_ms += elapsed_ms_since(start);
}

/* ---- when the node writes its groups out and combines them --------------- */

static int
my_participant(void)
{
	return IsParallelWorker() ? ParallelWorkerNumber + 1 : 0;
}

/* this process's figures, where the leader finds them for EXPLAIN ANALYZE */
static void
publish_spill_stats(GpuJoinState *gj)
{
	int			slot = my_participant();

	if (gj->spill_shared == NULL || slot >= gj->spill_shared->nparticipants ||
		!gj->spill_stats.ran)
		return;
	gj->spill_stats.rows = gj->stats.outer_rows;
	gj->spill_stats.read_ms = gj->stats.read_ms;
	gj->spill_stats.fold_ms = gj->stats.fold_ms;
	gpuhash_spill_stats(gj->spill_shared)[slot] = gj->spill_stats;
}

/*
 * Parallel, combined by the participants: join the others before reading
 * a row.  One that comes after they have written their groups out reads
 * nothing (every row was theirs) and only helps combine.
 */
void
gpuhash_agg_combine_attach(GpuJoinState *gj)
{
	int			phase = BarrierAttach(&gj->spill_shared->barrier);

	gj->spill_attached = true;
	gj->spill_stats.ran = true;
	gj->spill = gpuhash_spill_open_shared(gj->spill_shared, my_participant(),
										  gj->css.ss.ps.state->es_query_cxt);
	if (phase != SPILL_PHASE_WRITE)
	{
		gj->agg_folded = true;
		gj->combining = true;
	}
}

/* The partitions split again, their files deleted. */
void
gpuhash_agg_close_splits(GpuJoinState *gj)
{
	while (gj->nsplits > 0)
		gpuhash_spill_close(gj->splits[--gj->nsplits]);
}

/* Done combining (or shut down): let go of the barrier and the files. */
void
gpuhash_agg_combine_detach(GpuJoinState *gj)
{
	gpuhash_agg_close_splits(gj);
	publish_spill_stats(gj);
	if (gj->spill_attached)
	{
		BarrierDetach(&gj->spill_shared->barrier);
		gj->spill_attached = false;
	}
	if (gj->spill)
	{
		gpuhash_spill_close(gj->spill);
		gj->spill = NULL;
	}
}

/*
 * Every row is folded and some groups were written out (or, combined by
 * the participants, all of them are): write the rest, wait for the other
 * participants to have written theirs, and emit the groups a partition at
 * a time from then on.
 */
void
gpuhash_agg_start_combining(GpuJoinState *gj)
{
	instr_time	start;

	gpuhash_agg_write_groups(gj);
	gpuhash_spill_end_write(gj->spill);
	gpuhash_agg_restart_groups(gj);
	if (gj->spill_attached)
	{
		INSTR_TIME_SET_CURRENT(start);
		BarrierArriveAndWait(&gj->spill_shared->barrier, PG_WAIT_EXTENSION);
		gj->spill_stats.wait_ms += elapsed_ms_since(start);
	}
	gj->combining = true;
}

/*
 * The groups of the next partition in the table; false when none is left.
 * The partitions split again (gpuhash_agg_combine_partition) come
 * first, the deepest level first, then the next of the spill's.
 */
bool
gpuhash_agg_next_partition(GpuJoinState *gj)
{
	gpuhash_agg_restart_groups(gj);
	while (gj->spill != NULL)
	{
		int			level = gj->nsplits;
		GpuAggSpill *from = level > 0 ? gj->splits[level - 1] : gj->spill;
		GpuAggSpill *overflow;
		int			p = gpuhash_spill_claim(from);

		if (p < 0)
		{
			if (level == 0)
				break;
			gpuhash_spill_close(gj->splits[--gj->nsplits]);
			continue;
		}
		gpuhash_agg_combine_partition(gj, from, level, p, &overflow);
		if (overflow != NULL)
		{
			if (gj->nsplits == GPUHASH_SPILL_MAX_LEVELS)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("too many groups for a GpuHashAggregate's hash_mem"),
						 errdetail("A partition of its groups was split %d times and still did not fit.",
								   GPUHASH_SPILL_MAX_LEVELS),
						 errhint("Raise work_mem or hash_mem_multiplier, or set gpuhash.enable_aggregate to off.")));
			gpuhash_spill_end_write(overflow);
			gj->splits[gj->nsplits++] = overflow;
		}
		if (gj->groups->ngroups > 0)
			return true;
	}
	gpuhash_agg_combine_detach(gj);
	return false;
}
