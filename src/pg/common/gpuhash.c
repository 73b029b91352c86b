/*
 * gpuhash.c - module entry: the magic block and the GUCs.
 *
 * _PG_init only defines settings.  It must not touch CUDA: the module may be
 * loaded in the postmaster (shared_preload_libraries), and a CUDA context
 * does not survive fork.  Each backend initialises CUDA on first use.
 */
#include "gpuhash_pg.h"

#include <limits.h>

#include "utils/guc.h"

#include "join_agg.h"
#include "join_node.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

int			gpuhash_device_setting = GPUHASH_DEVICE_AUTO;
int			gpuhash_batch_rows = 1048576;
int			gpuhash_debug_fail_alloc_after = 0;
int			gpuhash_max_device_memory = 0;
int			gpuhash_staging_memory = 262144;	/* kB */

static const struct config_enum_entry device_options[] = {
	{"auto", GPUHASH_DEVICE_AUTO, false},
	{"gpu", GPUHASH_DEVICE_GPU, false},
	{"cpu", GPUHASH_DEVICE_CPU, false},
	{NULL, 0, false}
};

void
_PG_init(void)
{
	DefineCustomEnumVariable("gpuhash.device",
							 "Where gpuhash builds and probes hash tables.",
							 "auto uses the GPU when one is usable and the CPU otherwise; "
							 "gpu fails when no GPU is usable; cpu never uses the GPU.",
							 &gpuhash_device_setting,
							 GPUHASH_DEVICE_AUTO,
							 device_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	/*
	 * The upper bound keeps one batch's arrays well inside what palloc_huge
	 * and 32-bit probe indices can address.
	 */
	DefineCustomIntVariable("gpuhash.batch_rows",
							"Rows of the probe side that gpuhash sends to the hash table at once.",
							"Larger batches amortise transfers and kernel launches; "
							"smaller ones use less memory.",
							&gpuhash_batch_rows,
							1048576,
							1024,
							1 << 30,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpuhash.max_device_memory",
							"Most hash-table memory one gpuhash call may hold on its device.",
							"0 means what the device can take: on the GPU the memory this "
							"session holds plus 90% of the device's free memory; on the CPU "
							"no limit.  gpu_hash_join joins in partitions when its table "
							"would not fit.",
							&gpuhash_max_device_memory,
							0,
							0,
							INT_MAX,
							PGC_USERSET,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	/*
	 * Like work_mem, but for the rows gpuhash holds in host memory while
	 * they wait for the hash table: a probe batch is sent when it reaches
	 * this size, even before gpuhash.batch_rows rows.
	 */
	DefineCustomIntVariable("gpuhash.staging_memory",
							"Most host memory one probe-side batch of gpuhash may hold.",
							"A batch is probed when its keys and rows reach this size or "
							"gpuhash.batch_rows rows, whichever comes first.",
							&gpuhash_staging_memory,
							262144,
							64,
							MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	/*
	 * A testing aid: it makes queries fail on purpose, so only a superuser
	 * may set it.
	 */
	DefineCustomIntVariable("gpuhash.debug_fail_alloc_after",
							"Makes the n-th hash-table memory allocation of each gpuhash call fail (0 = off).",
							"For testing how failures are handled: the call fails as if the "
							"device (or, on the CPU, the host) were out of memory.",
							&gpuhash_debug_fail_alloc_after,
							0,
							0,
							INT_MAX,
							PGC_SUSET,
							GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	/* the planner's GpuHashJoin: its GUCs, hook and node methods */
	gpuhash_join_init();
	gpuhash_agg_init();

	MarkGUCPrefixReserved("gpuhash");
}
