/*
 * settings.c - the gpuhash.* settings: their variables, their definitions,
 * and how a parallel worker takes its leader's values.
 *
 * PostgreSQL 15 re-sorts its whole table of settings each time a module
 * defines one: on the development machine a module defining eighteen
 * settings named like these loaded in 1.04 ms, one defining none in 0.35 ms
 * (bench/NOTES.md, section 30).  A
 * parallel worker loads every library its leader loaded, for every parallel
 * query, whether or not the plan has a gpuhash node.  So a worker defines
 * none of them: the leader's values arrive as placeholders (RestoreGUCState),
 * and the first gpuhash code that runs in the worker (a node's state, or the
 * planner) reads them into the variables (gpuhash_settings_ready).  Defining
 * them there instead would apply the values through set_config_option,
 * which refuses in parallel mode.
 */
#include "gpuhash_pg.h"

#include <float.h>
#include <limits.h>

#include "access/parallel.h"
#include "postmaster/bgworker_internals.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "index_probe.h"
#include "join_node.h"
#include "key_estimate.h"
#include "semi_estimate.h"

int			gpuhash_device_setting = GPUHASH_DEVICE_AUTO;
int			gpuhash_batch_rows = 1048576;
int			gpuhash_debug_fail_alloc_after = 0;
int			gpuhash_max_device_memory = 0;
int			gpuhash_staging_memory = 262144;	/* kB */

bool		gpuhash_enable_join = true;
double		gpuhash_join_startup_cost = 1000.0;
double		gpuhash_device_setup_cost = 30000.0;
double		gpuhash_join_build_row_cost = 0.01;
double		gpuhash_join_probe_row_cost = 0.002;
bool		gpuhash_parallel_worker_gpu = false;
int			gpuhash_parallel_workers = -1;
bool		gpuhash_direct_scan = true;
bool		gpuhash_read_thread = true;
bool		gpuhash_chain_batches = true;
bool		gpuhash_key_filter = true;
bool		gpuhash_late_filter = true;
bool		gpuhash_build_outer = true;
bool		gpuhash_enable_index_probe = true;
double		gpuhash_index_probe_cost_share = 0.6;
bool		gpuhash_semi_estimate_enabled = true;
bool		gpuhash_overlap_probes = true;
bool		gpuhash_read_during_build = true;

bool		gpuhash_enable_aggregate = true;
bool		gpuhash_enable_scan_aggregate = true;
bool		gpuhash_enable_input_aggregate = true;
bool		gpuhash_enable_group_combine = true;
int			gpuhash_group_combine_min_groups = 10000;
bool		gpuhash_fold_year_keys = true;

static const struct config_enum_entry device_options[] = {
	{"auto", GPUHASH_DEVICE_AUTO, false},
	{"gpu", GPUHASH_DEVICE_GPU, false},
	{"cpu", GPUHASH_DEVICE_CPU, false},
	{NULL, 0, false}
};

typedef enum SettingKind
{
	SETTING_BOOL,
	SETTING_INT,
	SETTING_REAL,
	SETTING_ENUM
} SettingKind;

typedef struct Setting
{
	const char *name;
	SettingKind kind;
	const char *short_desc;
	const char *long_desc;
	void	   *variable;		/* bool, int or double as kind says */
	double		boot;
	double		min;
	double		max;
	GucContext	context;
	int			flags;
	const struct config_enum_entry *options;
} Setting;

static const Setting settings[] = {
	{"gpuhash.device", SETTING_ENUM,
		"Where gpuhash builds and probes hash tables.",
		"auto uses the GPU when one is usable and the CPU otherwise; "
		"gpu fails when no GPU is usable; cpu never uses the GPU.",
		&gpuhash_device_setting, GPUHASH_DEVICE_AUTO, 0, 0, PGC_USERSET, 0, device_options},
	/*
	 * The upper bound keeps one batch's arrays well inside what palloc_huge
	 * and 32-bit probe indices can address.
	 */
	{"gpuhash.batch_rows", SETTING_INT,
		"Rows of the probe side that gpuhash sends to the hash table at once.",
		"Larger batches amortise transfers and kernel launches; "
		"smaller ones use less memory.",
		&gpuhash_batch_rows, 1048576, 1024, 1 << 30, PGC_USERSET, 0, NULL},
	{"gpuhash.max_device_memory", SETTING_INT,
		"Most hash-table memory one gpuhash call may hold on its device.",
		"0 means what the device can take: on the GPU the memory this "
		"session holds plus 90% of the device's free memory; on the CPU "
		"no limit.  gpu_hash_join joins in partitions when its table "
		"would not fit.",
		&gpuhash_max_device_memory, 0, 0, INT_MAX, PGC_USERSET, GUC_UNIT_MB, NULL},
	/*
	 * Like work_mem, but for the rows gpuhash holds in host memory while
	 * they wait for the hash table: a probe batch is sent when it reaches
	 * this size, even before gpuhash.batch_rows rows.
	 */
	{"gpuhash.staging_memory", SETTING_INT,
		"Most host memory one probe-side batch of gpuhash may hold.",
		"A batch is probed when its keys and rows reach this size or "
		"gpuhash.batch_rows rows, whichever comes first.",
		&gpuhash_staging_memory, 262144, 64, MAX_KILOBYTES, PGC_USERSET, GUC_UNIT_KB, NULL},
	/* A testing aid: it makes queries fail on purpose, so only a superuser may set it. */
	{"gpuhash.debug_fail_alloc_after", SETTING_INT,
		"Makes the n-th hash-table memory allocation of each gpuhash call fail (0 = off).",
		"For testing how failures are handled: the call fails as if the "
		"device (or, on the CPU, the host) were out of memory.",
		&gpuhash_debug_fail_alloc_after, 0, 0, INT_MAX, PGC_SUSET, GUC_NOT_IN_SAMPLE, NULL},
	/* the planner's GpuHashJoin */
	{"gpuhash.enable_join", SETTING_BOOL,
		"Lets the planner use GPU hash joins (Custom Scan GpuHashJoin).",
		NULL,
		&gpuhash_enable_join, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.join_startup_cost", SETTING_REAL,
		"Planner's estimate of the fixed cost of starting a GPU hash join.",
		NULL,
		&gpuhash_join_startup_cost, 1000.0, 0.0, DBL_MAX, PGC_USERSET, 0, NULL},
	{"gpuhash.device_setup_cost", SETTING_REAL,
		"Planner's estimate of the cost of making a session's GPU context, "
		"added to GPU joins until the session has one.",
		NULL,
		&gpuhash_device_setup_cost, 30000.0, 0.0, DBL_MAX, PGC_USERSET, 0, NULL},
	{"gpuhash.join_build_row_cost", SETTING_REAL,
		"Planner's estimate of the cost of hashing one build (inner) row.",
		NULL,
		&gpuhash_join_build_row_cost, 0.01, 0.0, DBL_MAX, PGC_USERSET, 0, NULL},
	{"gpuhash.join_probe_row_cost", SETTING_REAL,
		"Planner's estimate of the cost of probing with one outer row.",
		NULL,
		&gpuhash_join_probe_row_cost, 0.002, 0.0, DBL_MAX, PGC_USERSET, 0, NULL},
	/*
	 * PostgreSQL plans workers by the logarithm of a table's size, for its
	 * own per-row work; a plan of ours spends its time reading, which more
	 * readers share (bench/NOTES.md, section 48).
	 */
	{"gpuhash.parallel_workers", SETTING_INT,
		"Workers that a parallel plan with a GPU hash node asks for at least.",
		"-1 sizes the plan by the machine's processors: one process each, or each "
		"two where the node's reads keep few rows, unless a table's parallel_workers "
		"option set the count. 0 keeps the count PostgreSQL "
		"planned for the node's scans. A larger count is taken where PostgreSQL "
		"planned fewer. Either is capped by max_parallel_workers_per_gather. "
		"Reading is costed as for PostgreSQL's count.",
		&gpuhash_parallel_workers, -1, -1, MAX_PARALLEL_WORKER_LIMIT, PGC_USERSET, 0, NULL},
	{"gpuhash.parallel_worker_gpu", SETTING_BOOL,
		"Lets parallel workers of a GPU hash join use the GPU themselves.",
		"Off: the table is built on the GPU (by the leader when it takes "
		"part) and the workers probe its copy in shared memory on the CPU. "
		"On: each worker opens its own GPU context and copies the table "
		"to the device.",
		&gpuhash_parallel_worker_gpu, 0, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.direct_scan", SETTING_BOOL,
		"Lets a GPU hash join read a plain Seq Scan's heap pages itself.",
		"Applies to a Seq Scan below the join whose output is its table's "
		"columns, its filter applied as the rows are read; off: the join asks "
		"the Seq Scan for each row.",
		&gpuhash_direct_scan, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.read_thread", SETTING_BOOL,
		"Lets a direct heap read deform and filter its pages in a helper thread.",
		"Applies to tables whose wanted columns come after a variable-length "
		"one, and to filters the reader compiles: the process pins the pages "
		"and hands on the rows, the thread takes them apart.",
		&gpuhash_read_thread, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.overlap_probes", SETTING_BOOL,
		"Lets a parallel GPU hash join probing on the CPU do so in a helper thread.",
		"The thread probes a batch's keys while the process reads the rest "
		"of the batch. Applies to semi and anti joins without other join "
		"clauses and to inner joins whose build keys are unique.",
		&gpuhash_overlap_probes, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.read_during_build", SETTING_BOOL,
		"Lets the workers of a parallel GPU hash join read their first outer batch while the table is built.",
		"Applies to joins whose outer side is a table read directly: after "
		"reading the build side, a worker that does not build fills its "
		"first batch (through the key filter, if any) until the table is "
		"shared or the batch is full, instead of waiting.",
		&gpuhash_read_during_build, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.chain_batches", SETTING_BOOL,
		"Lets a GPU hash join read the GPU hash join below it as batches of pairs.",
		"Intermediate joined rows are then copied from the lower join's "
		"batches instead of being formed as tuples. Applies to inner joins "
		"without other join clauses.",
		&gpuhash_chain_batches, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.key_filter", SETTING_BOOL,
		"Lets a selective GPU hash join drop its outer rows whose keys are not in its table as they are read.",
		"A Bloom filter of the table's keys is tested as a directly read outer "
		"side's rows are read, before they are copied and probed. Applies to "
		"inner and semi joins that the planner expects to drop three in four "
		"outer rows or more, with at most about two million build rows.",
		&gpuhash_key_filter, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.late_filter", SETTING_BOOL,
		"Lets a GPU hash join test its outer scan's subquery filters on the joined rows.",
		"A filter clause of the outer side's scan that runs a subplan (a "
		"correlated subquery) is then tested once a joined row instead of once "
		"a row read, where the planner finds that cheaper.",
		&gpuhash_late_filter, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.semi_estimate", SETTING_BOOL,
		"Lets the planner estimate a semi join above GPU hash joins through the outer column that is the inner column itself.",
		"Where a semi join's equality could be written with several equal outer "
		"columns and one of them is the very column the inner side compares, "
		"nested loops over the inner side's index are also costed with the "
		"match fraction that comparison gives, when it is higher. Applies only "
		"to semi joins whose outer side holds a GPU hash join.",
		&gpuhash_semi_estimate_enabled, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.unique_key_estimates", SETTING_BOOL,
		"Lets the planner estimate a join on every column of a multi-column unique index as a join on a declared foreign key.",
		"Each row of the other table is then expected to find one match, where "
		"PostgreSQL multiplies the columns' selectivities as if they were "
		"independent.  Applies when no column of the other table has more "
		"distinct values than the indexed table has rows, its extended "
		"ndistinct statistics, if any, count at most twice as many combinations, "
		"and no foreign key links the two tables.  Changes the estimate, and so the plans, of "
		"PostgreSQL's own joins too.",
		&gpuhash_unique_key_estimates, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.build_outer", SETTING_BOOL,
		"Lets a GPU hash join build a semi or anti join's outer side and probe it with the inner side.",
		"EXISTS or NOT EXISTS over a large table with a selective outer side: "
		"the outer rows are hashed, the inner side's rows probe them as they are "
		"read, and the outer rows that some probe matched (anti: that none "
		"matched) are returned once all are read.  An anti join only over NOT "
		"NULL keys of a table.",
		&gpuhash_build_outer, 1, 0, 0, PGC_USERSET, 0, NULL},
	/* IndexProbeJoin */
	{"gpuhash.enable_index_probe", SETTING_BOOL,
		"Lets the planner run a semi or anti join by walking a B-tree of the inner table (Custom Scan IndexProbeJoin).",
		"Applies to EXISTS or NOT EXISTS on one equality of integer keys, whose "
		"inner table has a B-tree led by the key column and a filter the direct "
		"reader compiles: the outer rows are read in batches, and the index is "
		"walked once along its leaves for each batch's sorted keys.",
		&gpuhash_enable_index_probe, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.index_probe_cost_share", SETTING_REAL,
		"Share of the cost of PostgreSQL's nested loop over an index scan that an IndexProbeJoin's probes are planned at.",
		"The node does the nested loop's index and heap reads without its "
		"calls per outer row or its descent per key.",
		&gpuhash_index_probe_cost_share, 0.6, 0.0, 10.0, PGC_USERSET, 0, NULL},
	/* GpuHashAggregate */
	{"gpuhash.enable_aggregate", SETTING_BOOL,
		"Lets a GPU hash join compute the query's aggregates itself "
		"(Custom Scan GpuHashAggregate).",
		"Applies to count, sum, avg, min and max of integer arithmetic and sum "
		"and avg of numeric arithmetic over a query's top join, grouped by "
		"integer, date, bool or text columns or not.",
		&gpuhash_enable_aggregate, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.enable_scan_aggregate", SETTING_BOOL,
		"Lets the planner fold a single table's aggregates over its Seq Scan "
		"(Custom Scan GpuHashAggregate with no join).",
		"Applies when a sum or avg of numeric arithmetic is among them; "
		"gpuhash.enable_aggregate off turns this off too.",
		&gpuhash_enable_scan_aggregate, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.enable_input_aggregate", SETTING_BOOL,
		"Lets the planner fold aggregates over the input PostgreSQL chose for "
		"them when that input is none of gpuhash's (Custom Scan GpuHashAggregate "
		"over a nested loop, a merge join, an index scan ...).",
		"Applies to a GROUP BY or aggregate with a sum or avg of numeric "
		"arithmetic among its aggregates, serially or in each participant of a "
		"parallel plan; only the aggregation changes.  gpuhash.enable_aggregate "
		"off turns this off too.",
		&gpuhash_enable_input_aggregate, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.enable_group_combine", SETTING_BOOL,
		"Lets the participants of a parallel GpuHashAggregate combine its "
		"groups themselves, with no Finalize Aggregate above the Gather.",
		"Each participant writes its groups to temporary files by partition "
		"and then emits the final values of the partitions it combines.",
		&gpuhash_enable_group_combine, 1, 0, 0, PGC_USERSET, 0, NULL},
	{"gpuhash.group_combine_min_groups", SETTING_INT,
		"Fewest groups, as estimated, that the participants of a parallel "
		"GpuHashAggregate combine themselves.",
		"Fewer stay with a Finalize Aggregate above the Gather: the files and "
		"the barrier of combining cost tens of milliseconds.",
		&gpuhash_group_combine_min_groups, 10000, 0, INT_MAX, PGC_USERSET, 0, NULL},
	{"gpuhash.fold_year_keys", SETTING_BOOL,
		"Lets GpuHashAggregate group by EXTRACT(YEAR FROM a date column).",
		"A join's fold grouped by a year is taken only where it costs 3 % less "
		"than the best plan without it.",
		&gpuhash_fold_year_keys, 1, 0, 0, PGC_USERSET, 0, NULL},
};

/* whether this process has yet to read its leader's values */
bool		gpuhash_settings_from_leader = false;

static void
define_setting(const Setting *s)
{
	switch (s->kind)
	{
		case SETTING_BOOL:
			DefineCustomBoolVariable(s->name, s->short_desc, s->long_desc, (bool *) s->variable,
									 s->boot != 0, s->context, s->flags, NULL, NULL, NULL);
			break;
		case SETTING_INT:
			DefineCustomIntVariable(s->name, s->short_desc, s->long_desc, (int *) s->variable,
									(int) s->boot, (int) s->min, (int) s->max,
									s->context, s->flags, NULL, NULL, NULL);
			break;
		case SETTING_REAL:
			DefineCustomRealVariable(s->name, s->short_desc, s->long_desc, (double *) s->variable,
									 s->boot, s->min, s->max, s->context, s->flags,
									 NULL, NULL, NULL);
			break;
		case SETTING_ENUM:
			DefineCustomEnumVariable(s->name, s->short_desc, s->long_desc, (int *) s->variable,
									 (int) s->boot, s->options, s->context, s->flags,
									 NULL, NULL, NULL);
			break;
	}
}

/*
 * A value as the leader serialized it (SerializeGUCState writes the
 * variable's own form: a plain number, true or false, an enum's name).
 */
static bool
read_setting(const Setting *s, const char *value)
{
	switch (s->kind)
	{
		case SETTING_BOOL:
			return parse_bool(value, (bool *) s->variable);
		case SETTING_INT:
			return parse_int(value, (int *) s->variable, s->flags, NULL);
		case SETTING_REAL:
			return parse_real(value, (double *) s->variable, s->flags, NULL);
		case SETTING_ENUM:
			for (const struct config_enum_entry *e = s->options; e->name != NULL; e++)
			{
				if (pg_strcasecmp(e->name, value) == 0)
				{
					*(int *) s->variable = e->val;
					return true;
				}
			}
			return false;
	}
	return false;
}

/*
 * At load: define the settings, or in a parallel worker, which restores its
 * leader's settings next, leave them to gpuhash_settings_ready.
 */
void
gpuhash_settings_init(void)
{
	if (InitializingParallelWorker)
	{
		gpuhash_settings_from_leader = true;
		return;
	}
	for (int i = 0; i < lengthof(settings); i++)
		define_setting(&settings[i]);
	MarkGUCPrefixReserved("gpuhash");
}

/*
 * Through gpuhash_settings_ready, where gpuhash code first runs in a process
 * (a node's state, the planner hooks): in a parallel worker, the leader's values, which
 * RestoreGUCState left as placeholders, go into the variables.  A setting
 * the leader had at its default was not sent, and keeps its default here.
 */
void
gpuhash_settings_read_leader(void)
{
	int			taken = 0;

	gpuhash_settings_from_leader = false;
	for (int i = 0; i < lengthof(settings); i++)
	{
		const char *value = GetConfigOption(settings[i].name, true, false);

		if (value == NULL)
			continue;
		if (!read_setting(&settings[i], value))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not read the leader's value of \"%s\": \"%s\"",
							settings[i].name, value)));
		taken++;
	}
	elog(DEBUG1, "gpuhash: a parallel worker took %d settings from its leader", taken);
}
