/*
 * gpuhash.c - module entry: the magic block, the settings (settings.c), the
 * planner's hooks and the nodes' methods.
 *
 * _PG_init must not touch CUDA: the module may be loaded in the postmaster
 * (shared_preload_libraries), and a CUDA context does not survive fork.
 * Each backend initialises CUDA on first use.
 */
#include "gpuhash_pg.h"

#include "index_probe.h"
#include "join_agg.h"
#include "join_node.h"
#include "key_estimate.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	gpuhash_settings_init();

	/* the planner's hooks and the nodes' methods */
	gpuhash_join_init();
	gpuhash_agg_init();
	gpuhash_index_probe_init();
	gpuhash_key_estimate_init();
}
