/*
 * arguments.c - checks of SQL arguments shared by the entry points.
 *
 * The functions are not STRICT: a NULL argument is a mistake worth an error
 * that names it, not a silently empty result.
 */
#include "gpuhash_pg.h"

void
gpuhash_arg_not_null(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("argument \"%s\" must not be null", argname)));
}

ght_method
gpuhash_parse_method(const char *method)
{
	if (pg_strcasecmp(method, "auto") == 0)
		return GHT_AUTO;
	if (pg_strcasecmp(method, "cuckoo") == 0)
		return GHT_CUCKOO;
	if (pg_strcasecmp(method, "linear") == 0)
		return GHT_LINEAR;
	if (pg_strcasecmp(method, "hopscotch") == 0)
		return GHT_HOPSCOTCH;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown hash table method \"%s\"", method),
			 errhint("Valid methods are \"auto\", \"cuckoo\", \"linear\" and \"hopscotch\".")));
	pg_unreachable();
}
