/*
 * join_explain.c - EXPLAIN of a GpuHashJoin: its join type and clauses,
 * how it reads its sides, and with ANALYZE what each participant spent on
 * reading, building, sharing and probing.
 *
 * GpuHashAggregate shares this callback (agg_exec.c) and adds its own
 * lines through the state's explain_more (agg_explain.c).
 */
#include "gpuhash_pg.h"

#include "commands/explain.h"
#include "nodes/makefuncs.h"
#include "utils/ruleutils.h"

#include "join_state.h"
#include "pair_memo_exec.h"

static const char *
join_type_name(JoinType t)
{
	if (t == GPUHASH_JOIN_RIGHT_SEMI)
		return "Right Semi";
	if (t == GPUHASH_JOIN_RIGHT_ANTI)
		return "Right Anti";
	switch (t)
	{
		case JOIN_INNER:
			return "Inner";
		case JOIN_LEFT:
			return "Left";
		case JOIN_SEMI:
			return "Semi";
		default:
			return "Anti";
	}
}

static void
explain_build_mode(GpuJoinState *gj, ExplainState *es)
{
	ExplainPropertyText("Build", gj->inner_partial ?
						"shared, inner side read by all participants" :
						"shared, inner side read by one participant", es);
}

/* The probes' copies to and from the GPU (part of their probe time). */
static void
explain_transfers(const GpuJoinStats *s, ExplainState *es)
{
	if (es->format == EXPLAIN_FORMAT_TEXT)
		ExplainPropertyText("Probe Transfers",
							psprintf("to device %.3f ms (%llu kB), from device %.3f ms (%llu kB)",
									 s->xfer.to_device_ms,
									 (unsigned long long) ((s->xfer.to_device_bytes + 1023) / 1024),
									 s->xfer.from_device_ms,
									 (unsigned long long) ((s->xfer.from_device_bytes + 1023) / 1024)),
							es);
	else
	{
		ExplainPropertyFloat("Transfer Time To Device", "ms", s->xfer.to_device_ms, 3, es);
		ExplainPropertyUInteger("Transfer Bytes To Device", NULL, s->xfer.to_device_bytes, es);
		ExplainPropertyFloat("Transfer Time From Device", "ms", s->xfer.from_device_ms, 3, es);
		ExplainPropertyUInteger("Transfer Bytes From Device", NULL, s->xfer.from_device_bytes, es);
	}
}

static void
explain_stats(const GpuJoinStats *s, ExplainState *es)
{
	ExplainPropertyText("Participant Device", gpuhash_device_name(s->device), es);
	ExplainPropertyFloat("Device Setup Time", "ms", s->setup_ms, 3, es);
	if (s->collect_ms > 0)
		ExplainPropertyFloat("Build Input Time", "ms", s->collect_ms, 3, es);
	if (s->built)
		ExplainPropertyFloat("Build Time", "ms", s->build_ms, 3, es);
	if (s->share_ms > 0)
	{
		ExplainPropertyFloat("Share Time", "ms", s->share_ms, 3, es);
		ExplainPropertyFloat("Share Allocation Time", "ms", s->share_alloc_ms, 3, es);
		ExplainPropertyFloat("Share Image Time", "ms", s->share_image_ms, 3, es);
	}
	if (s->build_wait_ms > 0)
		ExplainPropertyFloat("Build Wait Time", "ms", s->build_wait_ms, 3, es);
	if (s->attach_ms > 0)
		ExplainPropertyFloat("Attach Time", "ms", s->attach_ms, 3, es);
	ExplainPropertyFloat("Outer Read Time", "ms", s->read_ms, 3, es);
	if (s->early_ms > 0)
	{
		ExplainPropertyFloat("Outer Read Time During Build", "ms", s->early_ms, 3, es);
		ExplainPropertyUInteger("Outer Rows Read During Build", NULL, s->early_rows, es);
	}
	ExplainPropertyFloat("Probe Time", "ms", s->probe_ms, 3, es);
	if (s->overlapped)
		ExplainPropertyFloat("Probe Wait Time", "ms", s->probe_wait_ms, 3, es);
	if (s->device == GHT_GPU)
		explain_transfers(s, es);
	if (s->fold_ms > 0)
		ExplainPropertyFloat("Fold Time", "ms", s->fold_ms, 3, es);
	ExplainPropertyUInteger("Probe Rows", NULL, s->outer_rows, es);
	ExplainPropertyUInteger("Batches", NULL, s->batches, es);
	ExplainPropertyUInteger("Peak Device Memory", "kB", (s->peak_device_bytes + 1023) / 1024, es);
}

/* A count of GpuJoinStats at offset off, over all the participants. */
static uint64
sum_stat(const GpuJoinState *gj, size_t off)
{
	uint64		sum = 0;

	for (int i = 0; i < (gj->all_stats ? gj->nparticipants : 1); i++)
		sum += *(const uint64 *) ((const char *) (gj->all_stats ? &gj->all_stats[i] : &gj->stats) + off);
	return sum;
}

/*
 * The outer rows' key filter, over all the participants: its size, the rows
 * it removed, and in how many participants it was switched off.
 */
static void
explain_key_filter(GpuJoinState *gj, ExplainState *es)
{
	int			n = gj->all_stats ? gj->nparticipants : 1;
	uint64		bytes = 0,
				removed = 0;
	int			used = 0,
				dropped = 0;

	gpuhash_join_note_key_filter(gj);
	for (int i = 0; i < n; i++)
	{
		const GpuJoinStats *s = gj->all_stats ? &gj->all_stats[i] : &gj->stats;

		if (!s->ran || s->kf_bytes == 0)
			continue;
		used++;
		bytes = Max(bytes, s->kf_bytes);
		removed += s->kf_removed;
		dropped += s->kf_dropped;
	}
	if (used == 0)
		return;
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfo(&buf, "%llu kB, removed %llu outer rows",
						 (unsigned long long) ((bytes + 1023) / 1024), (unsigned long long) removed);
		if (dropped > 0)
			appendStringInfo(&buf, ", switched off after its first rows in %d of %d participants",
							 dropped, used);
		ExplainPropertyText("Key Filter", buf.data, es);
		return;
	}
	ExplainPropertyUInteger("Key Filter Memory", "kB", (bytes + 1023) / 1024, es);
	ExplainPropertyUInteger("Key Filter Rows Removed", NULL, removed, es);
	ExplainPropertyInteger("Key Filter Switched Off", NULL, dropped, es);
}

/* EXPLAIN of a node with no join: what it folds, how it reads, and its times. */
static void
explain_scan_only(GpuJoinState *gj, List *context, bool useprefix, ExplainState *es)
{
	if (gj->explain_more)
		gj->explain_more(gj, context, useprefix, es);
	if ((es->verbose || es->analyze) && gj->outer_reader)
	{
		StringInfoData buf;

		initStringInfo(&buf);
		gpuhash_heap_reader_describe(&buf, "input", gj->outer_reader);
		ExplainPropertyText("Direct Scan", buf.data, es);
	}
	/* combined by the participants: each one's figures are on its line */
	if (es->analyze && gj->stats.ran && gj->all_spill_stats == NULL)
	{
		ExplainPropertyUInteger("Rows Folded", NULL, gj->stats.outer_rows, es);
		ExplainPropertyFloat("Read Time", "ms", gj->stats.read_ms, 3, es);
		ExplainPropertyFloat("Fold Time", "ms", gj->stats.fold_ms, 3, es);
		if (gj->stats.dense_group_rows > 0)
			ExplainPropertyUInteger("Groups Found By Array", "rows", gj->stats.dense_group_rows, es);
		if (gj->stats.flushes > 0)
			ExplainPropertyUInteger("Groups Emitted Early", "times", gj->stats.flushes, es);
	}
}

void
gpuhash_join_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuJoinState *gj = (GpuJoinState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *context;
	bool		useprefix = list_length(es->rtable) > 1 || es->verbose;
	const GpuJoinStats *built = gj->stats.built ? &gj->stats : NULL;
	uint64		repeats;
	uint64		rekeys;
	uint64		dense;

	context = set_deparse_context_plan(es->deparse_cxt, (Plan *) cscan, ancestors);
	if (gj->scan_only)
	{
		explain_scan_only(gj, context, useprefix, es);
		return;
	}
	ExplainPropertyText("Join Type", join_type_name(gj->jointype), es);
	ExplainPropertyText("Hash Cond",
						deparse_expression(linitial(cscan->custom_exprs), context,
										   useprefix, false), es);
	if (gj->n_join_quals > 0)
		ExplainPropertyText("Join Filter",
							deparse_expression((Node *) make_ands_explicit(gpuhash_join_quals(cscan, gj)),
											   context, useprefix, false), es);
	gpuhash_pair_memo_explain(gj, gpuhash_join_memo_exprs(cscan, gj), context, useprefix, es);
	if (gj->n_row_quals > 0)
		ExplainPropertyText("Filter",
							deparse_expression((Node *) make_ands_explicit(gpuhash_join_row_quals(cscan, gj)),
											   context, useprefix, false), es);
	if (gj->explain_more)
		gj->explain_more(gj, context, useprefix, es);
	if ((es->verbose || es->analyze) && (gj->outer_reader || gj->inner_reader))
	{
		StringInfoData buf;

		initStringInfo(&buf);
		gpuhash_heap_reader_describe(&buf, "outer", gj->outer_reader);
		gpuhash_heap_reader_describe(&buf, "inner", gj->inner_reader);
		ExplainPropertyText("Direct Scan", buf.data, es);
	}
	if ((es->verbose || es->analyze) && gj->outer_child)
		ExplainPropertyText("Outer Side", "pairs of the GpuHashJoin below, read in batches", es);

	for (int i = 0; built == NULL && gj->all_stats && i < gj->nparticipants; i++)
		if (gj->all_stats[i].built)
			built = &gj->all_stats[i];

	if (!es->analyze || built == NULL)
	{
		ExplainPropertyText("Device", gpuhash_device_name(gj->plan_device), es);
		ExplainPropertyText("Hash Method", ght_method_name(gj->plan_method), es);
		ExplainPropertyFloat("Build Rows (estimated)", NULL, gj->est_build_rows, 0, es);
		if (gj->shared != NULL || cscan->scan.plan.parallel_aware)
			explain_build_mode(gj, es);
		return;
	}

	ExplainPropertyText("Device", gpuhash_device_name(built->device), es);
	ExplainPropertyText("Hash Method", ght_method_name(built->method), es);
	ExplainPropertyUInteger("Build Rows", NULL, built->build_rows, es);
	ExplainPropertyUInteger("Table Memory", "kB", (built->table_bytes + 1023) / 1024, es);
	if (gj->keep_inner)
		ExplainPropertyText("Inner Values", built->inner_in_table ? "in the table" : "build rows", es);
	explain_key_filter(gj, es);
	repeats = sum_stat(gj, offsetof(GpuJoinStats, repeat_keys));
	if (repeats > 0)
		ExplainPropertyUInteger("Repeated Probe Keys", NULL, repeats, es);
	rekeys = sum_stat(gj, offsetof(GpuJoinStats, semi_rekeys));
	if (rekeys > 0)
		ExplainPropertyUInteger("Keys Probed Again", NULL, rekeys, es);
	dense = sum_stat(gj, offsetof(GpuJoinStats, dense_group_rows));
	if (dense > 0)
		ExplainPropertyUInteger("Groups Found By Array", "rows", dense, es);
	if (gj->all_stats == NULL)
	{
		explain_stats(&gj->stats, es);
		return;
	}

	/* parallel: the leader's figures, then each worker's */
	explain_build_mode(gj, es);
	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainOpenGroup("Participants", "Participants", false, es);
	for (int i = 0; i < gj->nparticipants; i++)
	{
		const GpuJoinStats *s = &gj->all_stats[i];

		if (!s->ran)
			continue;
		if (es->format == EXPLAIN_FORMAT_TEXT)
		{
			StringInfo	str = es->str;

			/* the phases in the order they ran */
			appendStringInfoSpaces(str, es->indent * 2);
			appendStringInfo(str, "%s%s: %s, setup %.3f ms",
							 i == 0 ? "Leader" : psprintf("Worker %d", i - 1),
							 s->built ? " (built)" : "", gpuhash_device_name(s->device),
							 s->setup_ms);
			if (s->built)
				appendStringInfo(str, ", input+build %.3f ms, sharing %.3f ms (block %.3f ms, image %.3f ms)",
								 s->collect_ms + s->build_ms, s->share_ms, s->share_alloc_ms,
								 s->share_image_ms);
			else if (s->collect_ms > 0)
				appendStringInfo(str, ", input %.3f ms", s->collect_ms);
			if (s->build_wait_ms > 0)
				appendStringInfo(str, ", build wait %.3f ms", s->build_wait_ms);
			if (!s->built)
				appendStringInfo(str, ", attach %.3f ms", s->attach_ms);
			appendStringInfo(str, ", read %.3f ms", s->read_ms);
			if (s->early_ms > 0)
				appendStringInfo(str, " (%.3f ms and %llu rows during the build)", s->early_ms,
								 (unsigned long long) s->early_rows);
			appendStringInfo(str, ", probe %.3f ms", s->probe_ms);
			if (s->overlapped)
				appendStringInfo(str, " in a helper thread (waited %.3f ms)", s->probe_wait_ms);
			if (s->device == GHT_GPU)
				appendStringInfo(str, " (transfers %.3f ms)",
								 s->xfer.to_device_ms + s->xfer.from_device_ms);
			if (s->fold_ms > 0)
				appendStringInfo(str, ", fold %.3f ms", s->fold_ms);
			if (s->flushes > 0)
				appendStringInfo(str, ", groups emitted early %llu times",
								 (unsigned long long) s->flushes);
			appendStringInfo(str, ", %llu rows in %llu batches, peak device memory %llu kB\n",
							 (unsigned long long) s->outer_rows,
							 (unsigned long long) s->batches,
							 (unsigned long long) ((s->peak_device_bytes + 1023) / 1024));
		}
		else
		{
			ExplainOpenGroup("Participant", NULL, true, es);
			ExplainPropertyText("Participant", i == 0 ? "leader" : psprintf("worker %d", i - 1), es);
			ExplainPropertyBool("Built", s->built, es);
			explain_stats(s, es);
			ExplainCloseGroup("Participant", NULL, true, es);
		}
	}
	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainCloseGroup("Participants", "Participants", false, es);
}
