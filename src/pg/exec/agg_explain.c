/*
 * agg_explain.c - EXPLAIN of a GpuHashAggregate: its group keys and
 * aggregates, and with ANALYZE what writing its groups out and combining
 * them again cost, for each participant where they combined them.
 *
 * GpuHashJoin's EXPLAIN (join_explain.c) calls this through the state's
 * explain_more, so the node's lines come among the join's.
 */
#include "gpuhash_pg.h"

#include "utils/ruleutils.h"

#include "agg_exec.h"
#include "agg_spill.h"
#include "join_agg.h"
#include "join_state.h"

/* One participant's writing and combining of groups (EXPLAIN ANALYZE). */
static void
explain_spill_participant(GpuJoinState *gj, int i, const GpuAggSpillStats *s, ExplainState *es)
{
	const char *who = i == 0 ? "Leader" : psprintf("Worker %d", i - 1);

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		StringInfo	str = es->str;

		appendStringInfoSpaces(str, es->indent * 2);
		appendStringInfo(str, "%s: ", who);
		if (gj->scan_only)
			appendStringInfo(str, "%llu rows folded (read %.3f ms, fold %.3f ms), ",
							 (unsigned long long) s->rows, s->read_ms, s->fold_ms);
		appendStringInfo(str, "%llu groups", (unsigned long long) s->written);
		if (s->pairs_written > 0)
			appendStringInfo(str, " and %llu distinct pairs",
							 (unsigned long long) s->pairs_written);
		appendStringInfo(str, " written in %.3f ms, waited %.3f ms, "
						 "%d partitions combined (%llu records read) in %.3f ms",
						 s->write_ms, s->wait_ms,
						 s->partitions, (unsigned long long) s->combined, s->combine_ms);
		if (s->rewritten > 0)
			appendStringInfo(str, ", %llu written again (partitions past hash_mem)",
							 (unsigned long long) s->rewritten);
		appendStringInfo(str, ", %llu groups emitted\n", (unsigned long long) s->emitted);
		return;
	}
	ExplainOpenGroup("Combine Participant", NULL, true, es);
	ExplainPropertyText("Participant", who, es);
	if (gj->scan_only)
	{
		ExplainPropertyUInteger("Rows Folded", NULL, s->rows, es);
		ExplainPropertyFloat("Read Time", "ms", s->read_ms, 3, es);
		ExplainPropertyFloat("Fold Time", "ms", s->fold_ms, 3, es);
	}
	ExplainPropertyUInteger("Groups Written", NULL, s->written, es);
	ExplainPropertyUInteger("Distinct Pairs Written", NULL, s->pairs_written, es);
	ExplainPropertyFloat("Write Time", "ms", s->write_ms, 3, es);
	ExplainPropertyFloat("Combine Wait Time", "ms", s->wait_ms, 3, es);
	ExplainPropertyInteger("Partitions Combined", NULL, s->partitions, es);
	ExplainPropertyUInteger("Records Read", NULL, s->combined, es);
	ExplainPropertyFloat("Combine Time", "ms", s->combine_ms, 3, es);
	ExplainPropertyUInteger("Groups Written Again", NULL, s->rewritten, es);
	ExplainPropertyUInteger("Groups Emitted", NULL, s->emitted, es);
	ExplainCloseGroup("Combine Participant", NULL, true, es);
}

/*
 * EXPLAIN ANALYZE of groups written out: each participant's figures when
 * they combined them, or this process's when its groups outgrew hash_mem.
 */
static void
explain_spill(GpuJoinState *gj, ExplainState *es)
{
	if (gj->all_spill_stats != NULL)
	{
		ExplainPropertyInteger("Group Partitions", NULL, gj->spill_partitions, es);
		if (es->format != EXPLAIN_FORMAT_TEXT)
			ExplainOpenGroup("Combine Participants", "Combine Participants", false, es);
		for (int i = 0; i < gj->nparticipants; i++)
			if (gj->all_spill_stats[i].ran)
				explain_spill_participant(gj, i, &gj->all_spill_stats[i], es);
		if (es->format != EXPLAIN_FORMAT_TEXT)
			ExplainCloseGroup("Combine Participants", "Combine Participants", false, es);
		return;
	}
	if (gj->spill_stats.written > 0)
	{
		ExplainPropertyUInteger("Groups Written Out", NULL, gj->spill_stats.written, es);
		if (gj->spill_stats.pairs_written > 0)
			ExplainPropertyUInteger("Distinct Pairs Written Out", NULL,
									gj->spill_stats.pairs_written, es);
		ExplainPropertyInteger("Group Partitions", NULL, gj->spill_stats.partitions, es);
		if (gj->spill_stats.rewritten > 0)
			ExplainPropertyUInteger("Groups Written Again", NULL, gj->spill_stats.rewritten, es);
		ExplainPropertyFloat("Write Time", "ms", gj->spill_stats.write_ms, 3, es);
		ExplainPropertyFloat("Combine Time", "ms", gj->spill_stats.combine_ms, 3, es);
	}
}

/* EXPLAIN: the aggregates, as the scan tuple's last columns hold them. */
void
gpuhash_agg_explain(GpuJoinState *gj, List *context, bool useprefix, ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) gj->css.ss.ps.plan;
	List	   *aggs = list_copy_tail(cscan->custom_scan_tlist, gpuhash_join_scan_columns(gj));
	StringInfoData buf;
	ListCell   *lc;

	if (gj->ngroupkeys > 0)
	{
		List	   *keys = NIL;

		for (int k = 0; k < gj->ngroupkeys; k++)
		{
			TargetEntry *te = list_nth(cscan->custom_scan_tlist, gj->group_keys[k].out);

			keys = lappend(keys, deparse_expression((Node *) te->expr, context, useprefix,
													false));
		}
		ExplainPropertyList("Group Key", keys, es);
	}
	initStringInfo(&buf);
	/* after the aggregates come the expression keys' columns */
	foreach(lc, aggs)
	{
		if (foreach_current_index(lc) >= gj->naggs)
			break;
		appendStringInfo(&buf, "%s%s", buf.len > 0 ? ", " : "",
						 deparse_expression((Node *) lfirst_node(TargetEntry, lc)->expr,
											context, useprefix, false));
	}
	ExplainPropertyText("Aggregates", buf.data, es);
	if (gj->agg_combine)
		ExplainPropertyText("Group Combine", "by the participants", es);
	if (es->analyze)
		explain_spill(gj, es);
}
