/*
 * index_probe_group.c - a hashed partial GROUP BY over IndexProbeJoin's
 * partial paths, which PostgreSQL makes and then drops.
 *
 * For a parallel GROUP BY PostgreSQL builds a partial step that sorts its
 * participant's rows and groups them, and one that hashes them, and keeps
 * one through add_partial_path, which holds costs within 1 % equal and then
 * prefers the sorted rows.  Both costs include the whole input's, so where
 * the input is dear and its rows few by the estimate, the difference
 * between sorting and hashing them falls inside that margin and the sort
 * stays.  TPC-H q04 is such a plan: the semi join is estimated at 2 000
 * rows a participant, returns 58 000, and they are sorted by a text column
 * for five groups (bench/NOTES.md section 54).
 *
 * Over the input's cheapest partial path, when it is an IndexProbeJoin, the
 * chain PostgreSQL would have made from the hashed step (a Sort of its
 * groups, Gather Merge, Finalize GroupAggregate) is offered to the grouped
 * relation, where add_path sets it against PostgreSQL's own chain by their
 * costs alone.  The nodes are PostgreSQL's; only the choice is made again.
 */
#include "gpuhash_pg.h"

#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/tlist.h"
#include "utils/selfuncs.h"

#include "index_probe.h"

void
gpuhash_index_probe_group_paths(PlannerInfo *root, RelOptInfo *input_rel,
								RelOptInfo *grouped_rel, GroupPathExtraData *gx)
{
	Query	   *parse = root->parse;
	const int	needed = GROUPING_CAN_USE_SORT | GROUPING_CAN_USE_HASH |
		GROUPING_CAN_PARTIAL_AGG;
	RelOptInfo *partial_rel;
	Path	   *probe;
	Path	   *path;
	List	   *group_exprs;
	double		partial_groups;
	double		groups;
	double		gathered;

	if (!gpuhash_enable_index_probe || gx == NULL || parse->groupClause == NIL ||
		parse->groupingSets != NIL || parse->hasTargetSRFs ||
		gx->patype != PARTITIONWISE_AGGREGATE_NONE || (gx->flags & needed) != needed ||
		!gx->partial_costs_set || !grouped_rel->consider_parallel ||
		input_rel->partial_pathlist == NIL || input_rel->cheapest_total_path == NULL ||
		root->group_pathkeys == NIL)
		return;
	probe = linitial(input_rel->partial_pathlist);
	if (!gpuhash_is_index_probe_path(probe) || !probe->parallel_safe ||
		probe->parallel_workers < 1)
		return;
	partial_rel = fetch_upper_rel(root, UPPERREL_PARTIAL_GROUP_AGG, grouped_rel->relids);
	if (partial_rel->reltarget == NULL || !partial_rel->consider_parallel)
		return;

	/* the estimates PostgreSQL's own chains carry, so that only costs differ */
	group_exprs = get_sortgrouplist_exprs(parse->groupClause, gx->targetList);
	partial_groups = estimate_num_groups(root, group_exprs, probe->rows, NULL, NULL);
	groups = estimate_num_groups(root, group_exprs, input_rel->cheapest_total_path->rows,
								 NULL, NULL);

	path = (Path *) create_agg_path(root, partial_rel, probe, partial_rel->reltarget,
									AGG_HASHED, AGGSPLIT_INITIAL_SERIAL, parse->groupClause,
									NIL, &gx->agg_partial_costs, partial_groups);
	gathered = path->rows * path->parallel_workers;
	path = (Path *) create_sort_path(root, partial_rel, path, root->group_pathkeys, -1.0);
	path = (Path *) create_gather_merge_path(root, partial_rel, path, partial_rel->reltarget,
											 root->group_pathkeys, NULL, &gathered);
	add_path(grouped_rel, (Path *)
			 create_agg_path(root, grouped_rel, path, grouped_rel->reltarget, AGG_SORTED,
							 AGGSPLIT_FINAL_DESERIAL, parse->groupClause,
							 (List *) gx->havingQual, &gx->agg_final_costs, groups));
}
