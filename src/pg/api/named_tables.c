/*
 * named_tables.c - hash tables kept for the session under a name:
 * gpu_hash_create, gpu_hash_drop, gpu_hash_tables.
 *
 * The registry is a backend-local hash table in TopMemoryContext.  A table
 * is a snapshot of its query's result: it does not follow later changes of
 * the tables the query read.  It stays on the device it was built on even if
 * gpuhash.device changes later.
 *
 * While a table is being created it is owned by a reset callback on its own
 * memory context, a child of the call's context, so a failure anywhere frees
 * it.  Only once everything that can fail has been done is the entry added
 * to the registry and the context moved under TopMemoryContext.
 */
#include "gpuhash_pg.h"

#include <ctype.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

typedef struct RegistryEntry
{
	char		name[NAMEDATALEN];	/* hash key */
	GpuhashNamedTable *table;
} RegistryEntry;

static HTAB *registry = NULL;

static HTAB *
get_registry(void)
{
	if (registry == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = NAMEDATALEN;
		ctl.entrysize = sizeof(RegistryEntry);
		registry = hash_create("gpuhash named tables", 16, &ctl,
							   HASH_ELEM | HASH_STRINGS);
	}
	return registry;
}

/*
 * Names are taken as given (case-sensitive, no quoting rules), but must be
 * visible and fit a NAMEDATALEN key; truncating would let two different
 * names meet.
 */
static void
check_name(const char *name, char *key)
{
	const char *p;

	for (p = name; *p != '\0'; p++)
		if (!isspace((unsigned char) *p))
			break;
	if (*p == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_NAME),
				 errmsg("gpu hash table name must not be empty")));
	if (strlen(name) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("gpu hash table name \"%s\" is too long", name),
				 errdetail("Names may be at most %d bytes long.", NAMEDATALEN - 1)));
	memset(key, 0, NAMEDATALEN);
	strlcpy(key, name, NAMEDATALEN);
}

static RegistryEntry *
find_entry(const char *name, bool missing_ok)
{
	char		key[NAMEDATALEN];
	RegistryEntry *entry;

	check_name(name, key);
	entry = hash_search(get_registry(), key, HASH_FIND, NULL);
	if (entry == NULL && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("gpu hash table \"%s\" does not exist", name)));
	return entry;
}

GpuhashNamedTable *
gpuhash_named_table(text *name)
{
	GpuhashNamedTable *nt = find_entry(text_to_cstring(name), false)->table;

	gpuhash_apply_settings(nt->ctx);
	return nt;
}

static void
report_duplicate(const char *name)
{
	ereport(ERROR,
			(errcode(ERRCODE_DUPLICATE_OBJECT),
			 errmsg("gpu hash table \"%s\" already exists", name)));
}

/* The query's second column, if any, holds the values. */
static void
check_create_query(GpuhashQueryInput *in)
{
	Oid			type;

	if (in->desc->natts > 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("query of a gpu hash table must return one or two columns"),
				 errdetail("It returns %d columns: a key and optionally a value.",
						   in->desc->natts)));
	in->payload_column = in->desc->natts == 2;
	if (!in->payload_column)
		return;
	type = getBaseType(TupleDescAttr(in->desc, 1)->atttypid);
	if (!gpuhash_is_key_type(type))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("second column of query must be smallint, integer or bigint, not %s",
						format_type_be(TupleDescAttr(in->desc, 1)->atttypid))));
	in->payload_type = type;
}

PG_FUNCTION_INFO_V1(gpu_hash_create);
PG_FUNCTION_INFO_V1(gpu_hash_drop);
PG_FUNCTION_INFO_V1(gpu_hash_tables);

Datum
gpu_hash_create(PG_FUNCTION_ARGS)
{
	char	   *name;
	char	   *query;
	char		key[NAMEDATALEN];
	ght_method	method;
	ght_ctx    *ctx;
	MemoryContext cxt;
	MemoryContext tcxt;
	GpuhashNamedTable *nt;
	GpuhashQueryInput in;
	ght_build_opts opts;
	RegistryEntry *entry;
	bool		found;
	uint64		rows;

	gpuhash_arg_not_null(fcinfo, 0, "name");
	gpuhash_arg_not_null(fcinfo, 1, "query");
	gpuhash_arg_not_null(fcinfo, 2, "method");
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	method = gpuhash_parse_method(text_to_cstring(PG_GETARG_TEXT_PP(2)));
	check_name(name, key);
	if (find_entry(name, true) != NULL)
		report_duplicate(name);
	ctx = gpuhash_current_ctx();

	cxt = AllocSetContextCreate(CurrentMemoryContext, "gpu_hash_create",
								ALLOCSET_DEFAULT_SIZES);
	tcxt = AllocSetContextCreate(cxt, "gpuhash named table", ALLOCSET_SMALL_SIZES);
	nt = MemoryContextAllocZero(tcxt, sizeof(GpuhashNamedTable));
	strlcpy(nt->name, key, NAMEDATALEN);
	nt->cxt = tcxt;
	nt->ctx = ctx;
	nt->query = MemoryContextStrdup(tcxt, query);
	nt->table = gpuhash_res_new(tcxt, ctx, GPUHASH_RES_TABLE);

	memset(&in, 0, sizeof(in));
	in.what = "query";
	in.ctx = ctx;
	in.cxt = cxt;
	in.want_payloads = true;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	gpuhash_input_prepare(&in, query);
	check_create_query(&in);
	gpuhash_input_run(&in);
	SPI_finish();

	rows = in.n;
	nt->key_type = in.key_type;
	nt->key_width = in.key_width;
	nt->null_keys = in.null_keys;
	/* row numbers count every row, so they equal row_number() over the query */
	nt->next_rownum = (int64) in.rows_seen + 1;

	/*
	 * Values are stored as 8-byte payloads so that every bigint comes back
	 * exactly.  Asking for linear probing or hopscotch is asking for a table
	 * that takes inserts and deletes; auto picks the fastest static table.
	 */
	ght_build_opts_init(&opts, in.key_width, 8);
	if (method == GHT_LINEAR || method == GHT_HOPSCOTCH)
		opts.flags |= GHT_BUILD_MUTABLE;
	else if (method == GHT_AUTO)
		method = ght_choose_method(ght_ctx_device(ctx), rows, in.key_width, 0);
	opts.method = method;
	nt->is_mutable = (opts.flags & GHT_BUILD_MUTABLE) != 0;
	gpuhash_check(ctx,
				  ght_build(ctx, &opts, in.keys->ptr, in.payloads->ptr, rows, 0,
							(ght_table **) &nt->table->ptr),
				  "build the hash table");
	gpuhash_input_free(&in);

	/* the query may itself have created a table of this name */
	entry = hash_search(get_registry(), key, HASH_ENTER, &found);
	if (found)
		report_duplicate(name);
	entry->table = nt;
	MemoryContextSetParent(tcxt, TopMemoryContext);

	MemoryContextDelete(cxt);
	PG_RETURN_INT64((int64) rows);
}

Datum
gpu_hash_drop(PG_FUNCTION_ARGS)
{
	RegistryEntry *entry;
	GpuhashNamedTable *nt;

	gpuhash_arg_not_null(fcinfo, 0, "name");
	entry = find_entry(text_to_cstring(PG_GETARG_TEXT_PP(0)), false);
	nt = entry->table;
	hash_search(get_registry(), nt->name, HASH_REMOVE, NULL);
	/* frees the core table through its reset callback */
	MemoryContextDelete(nt->cxt);
	PG_RETURN_VOID();
}

Datum
gpu_hash_tables(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	RegistryEntry *entry;
	List	   *tables = NIL;
	ListCell   *lc;

	InitMaterializedSRF(fcinfo, 0);

	/* collected first: reading statistics may fail, which must not leave a scan open */
	hash_seq_init(&seq, get_registry());
	while ((entry = hash_seq_search(&seq)) != NULL)
		tables = lappend(tables, entry->table);

	foreach(lc, tables)
	{
		GpuhashNamedTable *nt = lfirst(lc);
		ght_table  *t = (ght_table *) nt->table->ptr;
		ght_stats	stats;
		Datum		values[12];
		bool		nulls[12] = {false};

		gpuhash_check(nt->ctx, ght_table_stats(t, &stats), "read hash table statistics");
		values[0] = CStringGetTextDatum(nt->name);
		values[1] = CStringGetTextDatum(ght_method_name(stats.method));
		values[2] = CStringGetTextDatum(format_type_be(nt->key_type));
		values[3] = Int64GetDatum((int64) stats.rows);
		values[4] = Int64GetDatum((int64) nt->null_keys);
		values[5] = Int64GetDatum((int64) stats.distinct_keys);
		values[6] = Int64GetDatum((int64) stats.capacity);
		values[7] = Float8GetDatum(stats.load_factor);
		values[8] = CStringGetTextDatum(gpuhash_device_name(stats.device));
		values[9] = Int64GetDatum((int64) stats.bytes);
		values[10] = Float8GetDatum(stats.build_ms);
		values[11] = CStringGetTextDatum(nt->query);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
