/*
 * scan_filter.c - a Seq Scan's filter compiled for the direct heap reader.
 *
 * The heap reader (heap_reader.c) reads a join's input a page at a time,
 * bypassing the Seq Scan node; when that scan has a filter, handing every
 * row to ExecQual would give back much of what the bypass saves.  Most
 * analytical filters are comparisons of a column with a constant, IN lists,
 * NULL tests and AND/OR/NOT over those (and a comparison of two columns,
 * as TPC-H's l_commitdate < l_receiptdate).  This file turns such quals into a
 * small tree evaluated straight on the row's datums: integers, dates and
 * booleans are compared as 64-bit integers, and other types through their
 * btree comparison function, called directly.  A text column's LIKE or NOT
 * LIKE with a constant pattern of literals and % (TPC-H's o_comment NOT LIKE
 * '%special%requests%') is matched by searching for the literals in turn,
 * and a text or bpchar column's = or <> with constants (TPC-H's l_shipmode
 * IN ('MAIL', 'SHIP')) bytewise, as those types compare under a
 * deterministic collation.
 * Quals of any other form stay with the executor (ExecQual on the scan's
 * slot), after these.
 *
 * Evaluation follows SQL's three-valued logic exactly: a comparison with a
 * NULL column is NULL, AND and OR treat NULL as PostgreSQL does, and a row
 * passes only when every qual is true.  Only btree comparison operators are
 * compiled: they cannot fail on non-NULL input, so evaluating them before
 * the executor's quals cannot raise an error PostgreSQL would not; nor can
 * such a LIKE (no escape, a deterministic collation).
 */
#include "gpuhash_pg.h"

#include "access/stratnum.h"
#include "catalog/pg_collation_d.h"
#include "catalog/pg_opfamily_d.h"
#include "mb/pg_wchar.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/date.h"
#include "utils/timestamp.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "numeric_fixed.h"
#include "scan_filter.h"

/* three-valued results */
#define SF_FALSE	0
#define SF_TRUE		1
#define SF_NULL		2
#define SF_UNKNOWN	3			/* pure evaluation: only a function call can tell */

/* BTLessStrategyNumber .. BTGreaterStrategyNumber, and <> */
#define SF_NE		GPUHASH_STRATEGY_NE

typedef enum FilterKind
{
	FK_INT_CMP,					/* column op constant (or column), as int64 */
	FK_INT_IN,					/* column = ANY / <> ALL (constants), as int64 */
	FK_FN_CMP,					/* column op constant (or column), by the operator's function */
	FK_NUM_CMP,					/* numeric column op constant, as fixed-point, else as FK_FN_CMP */
	FK_FN_IN,					/* column op ANY / ALL (constants), likewise */
	FK_BOOL_COL,				/* a boolean column */
	FK_NULL_TEST,				/* column IS [NOT] NULL */
	FK_LIKE,					/* text column [NOT] LIKE a pattern of literals and % */
	FK_STR_IN,					/* text/bpchar column = ANY / <> ALL constants (one: = or <>), bytewise */
	FK_AND,
	FK_OR,
	FK_NOT
} FilterKind;

typedef struct FilterNode
{
	FilterKind	kind;
	int			att;			/* leaves: heap attribute, 0-based */
	Oid			type;			/* leaves: the column's type */
	int			att2;			/* FK_*_CMP: the other column, or -1 */
	Oid			type2;
	int			cmp;			/* FK_*_CMP: strategy, column on the left */
	bool		flag;			/* IN: ANY (true) or ALL; NULL test: IS NULL; LIKE: NOT */
	bool		has_null;		/* IN: the list holds a NULL */
	int64		value;			/* FK_INT_CMP; FK_NUM_CMP: the constant * 10^scale */
	int			scale;			/* FK_NUM_CMP */
	int64	   *set;			/* FK_INT_IN: sorted; FK_FN_IN: see datums */
	Datum	   *datums;			/* FK_FN_CMP (one) and FK_FN_IN */
	int			nset;
	bool		var_left;		/* FK_FN_*: the column is the first argument */
	FmgrInfo	fn;
	Oid			collation;
	struct FilterNode **kids;	/* AND, OR, NOT */
	int			nkids;
	struct LikePattern *like;	/* FK_LIKE */
	const char **strs;			/* FK_STR_IN: the constants (bpchar's without */
	int		   *lens;			/* trailing spaces), nset of them */
	bool		bpchar;			/* FK_STR_IN: trailing spaces do not count */
} FilterNode;

/*
 * A LIKE pattern without _ or escapes: its literals, split at each %, and
 * whether the first and last are anchored to the value's ends (no % before
 * the first, none after the last).
 */
typedef struct LikePattern
{
	int			nlits;
	const char **lits;
	int		   *lens;
	bool		anchored_start;
	bool		anchored_end;
} LikePattern;

struct GpuhashScanFilter
{
	FilterNode **quals;			/* cheapest first (qual_cost) */
	int			nquals;
	int		   *atts;
	int			natts;
	bool		calls;			/* some qual calls a comparison function */
};

/* Types compared as int64: the integer family, date and bool. */
static bool
int_like(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID ||
		type == DATEOID || type == BOOLOID;
}

static int64
int_value(Oid type, Datum d)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		case DATEOID:
			return DatumGetDateADT(d);
		case BOOLOID:
			return DatumGetBool(d) ? 1 : 0;
		default:
			return DatumGetInt64(d);
	}
}

/* A column of the scanned relation, possibly relabelled; its 0-based attribute or -1. */
static int
column_of(Node *n, TupleDesc desc)
{
	Var		   *v;

	while (n && IsA(n, RelabelType))
		n = (Node *) ((RelabelType *) n)->arg;
	if (n == NULL || !IsA(n, Var))
		return -1;
	v = (Var *) n;
	if (v->varlevelsup != 0 || v->varattno <= 0 || v->varattno > desc->natts ||
		TupleDescAttr(desc, v->varattno - 1)->attisdropped)
		return -1;
	return v->varattno - 1;
}

static int
commute(int cmp)
{
	switch (cmp)
	{
		case BTLessStrategyNumber:
			return BTGreaterStrategyNumber;
		case BTLessEqualStrategyNumber:
			return BTGreaterEqualStrategyNumber;
		case BTGreaterEqualStrategyNumber:
			return BTLessEqualStrategyNumber;
		case BTGreaterStrategyNumber:
			return BTLessStrategyNumber;
		default:
			return cmp;
	}
}

/*
 * A type's comparison functions in strategy order: <, <=, =, >=, >, and
 * <> last (SF_NE).
 */
static const Oid date_cmp_fns[6] = {F_DATE_LT, F_DATE_LE, F_DATE_EQ, F_DATE_GE, F_DATE_GT, F_DATE_NE};
static const Oid bool_cmp_fns[6] = {F_BOOLLT, F_BOOLLE, F_BOOLEQ, F_BOOLGE, F_BOOLGT, F_BOOLNE};
static const Oid numeric_cmp_fns[6] = {F_NUMERIC_LT, F_NUMERIC_LE, F_NUMERIC_EQ, F_NUMERIC_GE,
	F_NUMERIC_GT, F_NUMERIC_NE};
static const Oid date_timestamp_cmp_fns[6] = {F_DATE_LT_TIMESTAMP, F_DATE_LE_TIMESTAMP,
	F_DATE_EQ_TIMESTAMP, F_DATE_GE_TIMESTAMP, F_DATE_GT_TIMESTAMP, F_DATE_NE_TIMESTAMP};
static const Oid timestamp_date_cmp_fns[6] = {F_TIMESTAMP_LT_DATE, F_TIMESTAMP_LE_DATE,
	F_TIMESTAMP_EQ_DATE, F_TIMESTAMP_GE_DATE, F_TIMESTAMP_GT_DATE, F_TIMESTAMP_NE_DATE};

/* fn's strategy number (or SF_NE) among fns, 0 when it is none of them */
static int
strategy_of(Oid fn, const Oid fns[6])
{
	for (int i = 0; i < 5; i++)
		if (fn == fns[i])
			return BTLessStrategyNumber + i;
	return fn == fns[5] ? SF_NE : 0;
}

/*
 * The comparison opno makes between two int-like values of ltype and
 * rtype, as a strategy number (or SF_NE), or 0 when it is not one of the
 * integer family's, date's or bool's own comparisons.
 */
int
gpuhash_int_strategy(Oid opno, Oid ltype, Oid rtype)
{
	if (ltype == DATEOID || rtype == DATEOID)
		return ltype == rtype ? strategy_of(get_opcode(opno), date_cmp_fns) : 0;
	if (ltype == BOOLOID || rtype == BOOLOID)
		return ltype == rtype ? strategy_of(get_opcode(opno), bool_cmp_fns) : 0;
	{
		int			s = get_op_opfamily_strategy(opno, INTEGER_BTREE_FAM_OID);
		Oid			neg;

		if (s != 0)
			return s;
		neg = get_negator(opno);
		if (OidIsValid(neg) &&
			get_op_opfamily_strategy(neg, INTEGER_BTREE_FAM_OID) == BTEqualStrategyNumber)
			return SF_NE;
	}
	return 0;
}

/* A btree comparison (or the negation of a btree equality): it cannot fail. */
static bool
is_btree_comparison(Oid opno)
{
	return get_op_btree_interpretation(opno) != NIL;
}

static FilterNode *
new_leaf(FilterKind kind, int att, TupleDesc desc)
{
	FilterNode *f = palloc0(sizeof(FilterNode));

	f->kind = kind;
	f->att = att;
	f->type = TupleDescAttr(desc, att)->atttypid;
	f->att2 = -1;
	return f;
}

/* A leaf that calls the operator's function, opno, with the column first or second. */
static FilterNode *
fn_leaf(FilterKind kind, int att, TupleDesc desc, Oid opno, Oid collation, bool var_left)
{
	FilterNode *f = new_leaf(kind, att, desc);

	f->var_left = var_left;
	f->collation = collation;
	fmgr_info(get_opcode(opno), &f->fn);
	return f;
}

/* column op column */
static FilterNode *
compile_columns(OpExpr *op, TupleDesc desc, int att, int att2)
{
	Oid			lt = TupleDescAttr(desc, att)->atttypid;
	Oid			rt = TupleDescAttr(desc, att2)->atttypid;
	FilterNode *f;
	int			s;

	if (!is_btree_comparison(op->opno))
		return NULL;
	if (int_like(lt) && int_like(rt) &&
		lt == exprType(linitial(op->args)) && rt == exprType(lsecond(op->args)) &&
		(s = gpuhash_int_strategy(op->opno, lt, rt)) != 0)
		f = new_leaf(FK_INT_CMP, att, desc);
	else
	{
		f = fn_leaf(FK_FN_CMP, att, desc, op->opno, op->inputcollid, true);
		s = 0;
	}
	f->cmp = s;
	f->att2 = att2;
	f->type2 = rt;
	return f;
}

/*
 * The pattern's literals when it has no _ and no backslash (LIKE's default
 * escape), so that % is its only wildcard; NULL otherwise.
 */
static LikePattern *
like_pattern(text *pat)
{
	const char *p = VARDATA_ANY(pat);
	int			len = VARSIZE_ANY_EXHDR(pat);
	LikePattern *lp = palloc0(sizeof(LikePattern));
	int			start = 0;

	lp->lits = palloc((len + 1) * sizeof(char *));
	lp->lens = palloc((len + 1) * sizeof(int));
	for (int i = 0; i <= len; i++)
	{
		if (i < len && (p[i] == '_' || p[i] == '\\'))
			return NULL;
		if (i < len && p[i] != '%')
			continue;
		if (i > start)
		{
			lp->lits[lp->nlits] = pnstrdup(p + start, i - start);
			lp->lens[lp->nlits++] = i - start;
		}
		start = i + 1;
	}
	lp->anchored_start = len == 0 || p[0] != '%';
	lp->anchored_end = len == 0 || p[len - 1] != '%';
	return lp;
}

/*
 * Does the collation compare strings bytewise for equality?  The database's
 * default and C are, in PostgreSQL 15, and need no catalog lookup: the
 * planner compiles a scan's quals for its read credit in every new session,
 * whose catalog caches are cold.
 */
static bool
deterministic(Oid collation)
{
	if (collation == DEFAULT_COLLATION_OID || collation == C_COLLATION_OID ||
		collation == POSIX_COLLATION_OID)
		return true;
	return OidIsValid(collation) && get_collation_isdeterministic(collation);
}

/*
 * text LIKE / NOT LIKE a constant (a varchar column is relabelled text):
 * matched bytewise, which is LIKE's answer under a deterministic collation
 * when every character is one byte or the encoding is UTF-8 (whose
 * characters cannot match starting inside another).
 */
static FilterNode *
compile_like(OpExpr *op, TupleDesc desc)
{
	Oid			fn = get_opcode(op->opno);
	Node	   *r = lsecond(op->args);
	int			att = column_of(linitial(op->args), desc);
	Oid			type;
	LikePattern *lp;
	FilterNode *f;

	if ((fn != F_TEXTLIKE && fn != F_TEXTNLIKE) || att < 0 || !IsA(r, Const) ||
		((Const *) r)->constisnull || ((Const *) r)->consttype != TEXTOID)
		return NULL;
	type = TupleDescAttr(desc, att)->atttypid;
	if ((type != TEXTOID && type != VARCHAROID) || !deterministic(op->inputcollid) ||
		(GetDatabaseEncoding() != PG_UTF8 && pg_database_encoding_max_length() != 1) ||
		(lp = like_pattern(DatumGetTextPP(((Const *) r)->constvalue))) == NULL)
		return NULL;
	f = new_leaf(FK_LIKE, att, desc);
	f->flag = fn == F_TEXTNLIKE;
	f->like = lp;
	return f;
}

/* Does the value s (len bytes) match the pattern? */
static bool
like_match(const LikePattern *lp, const char *s, int len)
{
	int			first = 0,
				last = lp->nlits;
	int			pos = 0;

	if (lp->nlits == 0)			/* '' or only % */
		return !lp->anchored_start || len == 0;
	if (lp->anchored_start && lp->anchored_end && lp->nlits == 1)
		return len == lp->lens[0] && memcmp(s, lp->lits[0], len) == 0;
	if (lp->anchored_start)
	{
		if (len < lp->lens[0] || memcmp(s, lp->lits[0], lp->lens[0]) != 0)
			return false;
		pos = lp->lens[first++];
	}
	if (lp->anchored_end)
	{
		int			n = lp->lens[--last];

		if (len - pos < n || memcmp(s + len - n, lp->lits[last], n) != 0)
			return false;
		len -= n;
	}
	/* the middle literals leftmost first, each after the one before */
	for (int i = first; i < last; i++)
	{
		const char *at = memmem(s + pos, len - pos, lp->lits[i], lp->lens[i]);

		if (at == NULL)
			return false;
		pos = (at - s) + lp->lens[i];
	}
	return true;
}

/*
 * The functions that compare text and bpchar bytewise under a
 * deterministic collation (bpchar after dropping trailing spaces): for
 * equality, PostgreSQL 15's texteq and bpchareq then compare lengths and
 * bytes, whatever the collation's locale.  true in *eq for = and false for
 * <>; false when fn is neither, or the column's type is not the function's.
 */
static bool
str_equality(Oid fn, Oid coltype, Oid collation, bool *eq, bool *bpchar)
{
	*bpchar = fn == F_BPCHAREQ || fn == F_BPCHARNE;
	*eq = fn == F_BPCHAREQ || fn == F_TEXTEQ;
	if (*bpchar ? coltype != BPCHAROID :
		((fn != F_TEXTEQ && fn != F_TEXTNE) || (coltype != TEXTOID && coltype != VARCHAROID)))
		return false;
	return deterministic(collation);
}

/* bpchar's length without its trailing spaces */
static inline int
bpchar_len(const char *s, int len)
{
	while (len > 0 && s[len - 1] == ' ')
		len--;
	return len;
}

/*
 * A string leaf over att with the constants elems (nulls marks the NULL
 * ones); eq: = ANY (or =), else <> ALL (or <>).
 */
static FilterNode *
str_leaf(int att, TupleDesc desc, bool bpchar, bool eq, const Datum *elems, const bool *nulls,
		 int n)
{
	FilterNode *f = new_leaf(FK_STR_IN, att, desc);

	f->bpchar = bpchar;
	f->flag = eq;
	f->strs = palloc(Max(n, 1) * sizeof(char *));
	f->lens = palloc(Max(n, 1) * sizeof(int));
	for (int i = 0; i < n; i++)
	{
		text	   *t;
		int			len;

		if (nulls != NULL && nulls[i])
		{
			f->has_null = true;
			continue;
		}
		t = DatumGetTextPP(elems[i]);
		len = VARSIZE_ANY_EXHDR(t);
		if (bpchar)
			len = bpchar_len(VARDATA_ANY(t), len);
		f->strs[f->nset] = pnstrdup(VARDATA_ANY(t), len);
		f->lens[f->nset++] = len;
	}
	return f;
}

/* Does the value s (len bytes) equal one of the leaf's constants? */
static inline bool
str_found(const FilterNode *f, const char *s, int len)
{
	if (f->bpchar)
		len = bpchar_len(s, len);
	for (int i = 0; i < f->nset; i++)
		if (f->lens[i] == len && memcmp(f->strs[i], s, len) == 0)
			return true;
	return false;
}

/* x / y rounded down, for y > 0 */
static int64
floor_div(int64 x, int64 y)
{
	int64		q = x / y;

	return (x % y != 0 && x < 0) ? q - 1 : q;
}

/*
 * A date column compared with a finite timestamp constant, as an integer
 * comparison of the date: PostgreSQL compares the date's midnight, d days
 * times a day's microseconds, with the timestamp t (a date past the
 * timestamps' range as later than all of them, which the date's own
 * ordering keeps), so d < t holds exactly when d <= floor((t - 1) / day),
 * and so on.  TPC-H's date + interval bounds are such constants.
 */
static FilterNode *
compile_date_timestamp(OpExpr *op, TupleDesc desc, int att, Const *c, bool var_left)
{
	Oid			fn = get_opcode(op->opno);
	Timestamp	t;
	int			s;
	int64		below,			/* the last date whose midnight is before t */
				upto;			/* the last date whose midnight is at or before t */
	FilterNode *f;

	if (TupleDescAttr(desc, att)->atttypid != DATEOID || c->consttype != TIMESTAMPOID)
		return NULL;
	s = strategy_of(fn, date_timestamp_cmp_fns);
	if (s == 0)
		s = strategy_of(fn, timestamp_date_cmp_fns);
	t = DatumGetTimestamp(c->constvalue);
	if (s == 0 || TIMESTAMP_NOT_FINITE(t))
		return NULL;
	if (!var_left)
		s = commute(s);
	below = floor_div(t - 1, USECS_PER_DAY);
	upto = floor_div(t, USECS_PER_DAY);
	f = new_leaf(FK_INT_CMP, att, desc);
	switch (s)
	{
		case BTLessStrategyNumber:
			f->cmp = BTLessEqualStrategyNumber;
			f->value = below;
			break;
		case BTLessEqualStrategyNumber:
			f->cmp = BTLessEqualStrategyNumber;
			f->value = upto;
			break;
		case BTGreaterStrategyNumber:
			f->cmp = BTGreaterStrategyNumber;
			f->value = upto;
			break;
		case BTGreaterEqualStrategyNumber:
			f->cmp = BTGreaterStrategyNumber;
			f->value = below;
			break;
		default:
			/* a t that is not a midnight equals no date: a value no date has */
			f->cmp = s;
			f->value = below == upto ? PG_INT64_MIN : upto;
			break;
	}
	return f;
}

static FilterNode *
compile_opexpr(OpExpr *op, TupleDesc desc)
{
	Node	   *l,
			   *r;
	Const	   *c;
	int			att,
				att2;
	bool		var_left;
	FilterNode *f;
	int			s;

	if (list_length(op->args) != 2)
		return NULL;
	if ((f = compile_like(op, desc)) != NULL)
		return f;
	l = linitial(op->args);
	r = lsecond(op->args);
	if ((att = column_of(l, desc)) >= 0 && (att2 = column_of(r, desc)) >= 0)
		return compile_columns(op, desc, att, att2);
	if ((att = column_of(l, desc)) >= 0 && IsA(r, Const))
		var_left = true;
	else if ((att = column_of(r, desc)) >= 0 && IsA(l, Const))
		var_left = false;
	else
		return NULL;
	c = (Const *) (var_left ? r : l);
	if (c->constisnull || !is_btree_comparison(op->opno))
		return NULL;
	{
		bool		eq,
					bpchar;

		if (str_equality(get_opcode(op->opno), TupleDescAttr(desc, att)->atttypid,
						 op->inputcollid, &eq, &bpchar))
			return str_leaf(att, desc, bpchar, eq, &c->constvalue, NULL, 1);
	}

	if (int_like(exprType(l)) && int_like(exprType(r)) &&
		int_like(TupleDescAttr(desc, att)->atttypid) &&
		(s = gpuhash_int_strategy(op->opno, exprType(l), exprType(r))) != 0)
	{
		f = new_leaf(FK_INT_CMP, att, desc);
		f->cmp = var_left ? s : commute(s);
		f->value = int_value(c->consttype, c->constvalue);
		return f;
	}
	if ((f = compile_date_timestamp(op, desc, att, c, var_left)) != NULL)
		return f;
	f = fn_leaf(FK_FN_CMP, att, desc, op->opno, op->inputcollid, var_left);
	f->datums = palloc(sizeof(Datum));
	f->datums[0] = c->constvalue;
	if (TupleDescAttr(desc, att)->atttypid == NUMERICOID &&
		(s = strategy_of(get_opcode(op->opno), numeric_cmp_fns)) != 0 &&
		gpuhash_numeric_small(c->constvalue, &f->value, &f->scale))
	{
		f->kind = FK_NUM_CMP;
		f->cmp = var_left ? s : commute(s);
	}
	return f;
}

static int
cmp_int64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y;
}

/* column op ANY/ALL (array constant) */
static FilterNode *
compile_saop(ScalarArrayOpExpr *sa, TupleDesc desc)
{
	Node	   *l,
			   *r;
	Const	   *c;
	int			att;
	ArrayType  *arr;
	Oid			elemtype;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			s = 0;
	FilterNode *f;

	if (list_length(sa->args) != 2)
		return NULL;
	l = linitial(sa->args);
	r = lsecond(sa->args);
	if ((att = column_of(l, desc)) < 0 || !IsA(r, Const) || ((Const *) r)->constisnull ||
		!is_btree_comparison(sa->opno))
		return NULL;
	c = (Const *) r;
	arr = DatumGetArrayTypeP(c->constvalue);
	elemtype = ARR_ELEMTYPE(arr);
	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign, &elems, &nulls, &n);

	if (int_like(exprType(l)) && int_like(elemtype) &&
		int_like(TupleDescAttr(desc, att)->atttypid))
		s = gpuhash_int_strategy(sa->opno, exprType(l), elemtype);
	{
		bool		eq,
					bpchar;

		/* strings: likewise only = ANY and <> ALL */
		if (str_equality(get_opcode(sa->opno), TupleDescAttr(desc, att)->atttypid,
						 sa->inputcollid, &eq, &bpchar) && eq == sa->useOr)
			return str_leaf(att, desc, bpchar, eq, elems, nulls, n);
	}
	/* ints: only = ANY and <> ALL, which a sorted set answers */
	if ((s == BTEqualStrategyNumber && sa->useOr) || (s == SF_NE && !sa->useOr))
	{
		f = new_leaf(FK_INT_IN, att, desc);
		f->set = palloc(Max(n, 1) * sizeof(int64));
		for (int i = 0; i < n; i++)
		{
			if (nulls[i])
				f->has_null = true;
			else
				f->set[f->nset++] = int_value(elemtype, elems[i]);
		}
		qsort(f->set, f->nset, sizeof(int64), cmp_int64);
	}
	else
	{
		f = fn_leaf(FK_FN_IN, att, desc, sa->opno, sa->inputcollid, true);
		f->datums = palloc(Max(n, 1) * sizeof(Datum));
		for (int i = 0; i < n; i++)
		{
			if (nulls[i])
				f->has_null = true;
			else
				f->datums[f->nset++] = elems[i];
		}
	}
	f->flag = sa->useOr;
	return f;
}

static FilterNode *compile_node(Node *n, TupleDesc desc);

static FilterNode *
compile_bool(BoolExpr *b, TupleDesc desc)
{
	FilterNode *f = palloc0(sizeof(FilterNode));
	ListCell   *lc;

	f->kind = b->boolop == AND_EXPR ? FK_AND : b->boolop == OR_EXPR ? FK_OR : FK_NOT;
	f->att = f->att2 = -1;		/* only its arguments read columns */
	f->kids = palloc(list_length(b->args) * sizeof(FilterNode *));
	foreach(lc, b->args)
	{
		FilterNode *k = compile_node(lfirst(lc), desc);

		if (k == NULL)
			return NULL;
		f->kids[f->nkids++] = k;
	}
	return f;
}

static FilterNode *
compile_node(Node *n, TupleDesc desc)
{
	int			att;

	switch (nodeTag(n))
	{
		case T_OpExpr:
			return compile_opexpr((OpExpr *) n, desc);
		case T_ScalarArrayOpExpr:
			return compile_saop((ScalarArrayOpExpr *) n, desc);
		case T_BoolExpr:
			return compile_bool((BoolExpr *) n, desc);
		case T_NullTest:
			{
				NullTest   *nt = (NullTest *) n;
				FilterNode *f;

				if (nt->argisrow || (att = column_of((Node *) nt->arg, desc)) < 0)
					return NULL;
				f = new_leaf(FK_NULL_TEST, att, desc);
				f->flag = nt->nulltesttype == IS_NULL;
				return f;
			}
		case T_Var:
			if ((att = column_of(n, desc)) < 0 || TupleDescAttr(desc, att)->atttypid != BOOLOID)
				return NULL;
			return new_leaf(FK_BOOL_COL, att, desc);
		default:
			return NULL;
	}
}

/* The attributes a qual reads; *calls is set when it calls a function. */
static void
collect_atts(const FilterNode *f, Bitmapset **atts, bool *calls)
{
	if (f->kind == FK_AND || f->kind == FK_OR || f->kind == FK_NOT)
		for (int i = 0; i < f->nkids; i++)
			collect_atts(f->kids[i], atts, calls);
	else
		*atts = bms_add_member(*atts, f->att);
	if (f->att2 >= 0)
		*atts = bms_add_member(*atts, f->att2);
	/* a LIKE or string comparison may detoast its value */
	if (f->kind == FK_FN_CMP || f->kind == FK_NUM_CMP || f->kind == FK_FN_IN ||
		f->kind == FK_LIKE || f->kind == FK_STR_IN)
		*calls = true;
}

/*
 * A qual's cost class, for the order in which they are tested: integer
 * comparisons first, then those that compare bytes or fixed-point numerics
 * in place, then those that call a function.  PostgreSQL orders a scan's
 * quals by its own cost estimates, in which TPC-H q12's l_shipmode IN
 * ('MAIL', 'SHIP') costs as much as a date comparison and comes first; here
 * the dates, which refuse most rows, now come first.
 */
static int
qual_cost(const FilterNode *f)
{
	int			cost = 0;

	switch (f->kind)
	{
		case FK_INT_CMP:
		case FK_INT_IN:
		case FK_BOOL_COL:
		case FK_NULL_TEST:
			return 1;
		case FK_NUM_CMP:
		case FK_STR_IN:
		case FK_LIKE:
			return 2;
		case FK_FN_CMP:
		case FK_FN_IN:
			return 3;
		case FK_AND:
		case FK_OR:
		case FK_NOT:
			for (int i = 0; i < f->nkids; i++)
				cost = Max(cost, qual_cost(f->kids[i]));
			return cost;
	}
	return 3;
}

GpuhashScanFilter *
gpuhash_scan_filter_compile(List *quals, TupleDesc desc, List **rest)
{
	GpuhashScanFilter *sf = palloc0(sizeof(GpuhashScanFilter));
	Bitmapset  *atts = NULL;
	int		   *cost;			/* qual_cost of each of sf->quals, while sorting */
	ListCell   *lc;
	int			a = -1;

	*rest = NIL;
	sf->quals = palloc(Max(list_length(quals), 1) * sizeof(FilterNode *));
	cost = palloc(Max(list_length(quals), 1) * sizeof(int));
	foreach(lc, quals)
	{
		FilterNode *f = compile_node(lfirst(lc), desc);
		int			c;
		int			i;

		if (f == NULL)
		{
			*rest = lappend(*rest, lfirst(lc));
			continue;
		}
		collect_atts(f, &atts, &sf->calls);

		/*
		 * Kept cheapest first (stable): the order of compiled quals cannot
		 * change an answer, since none can raise an error.
		 */
		c = qual_cost(f);
		for (i = sf->nquals; i > 0 && cost[i - 1] > c; i--)
		{
			sf->quals[i] = sf->quals[i - 1];
			cost[i] = cost[i - 1];
		}
		sf->quals[i] = f;
		cost[i] = c;
		sf->nquals++;
	}
	pfree(cost);
	if (sf->nquals == 0)
		return NULL;
	sf->atts = palloc(bms_num_members(atts) * sizeof(int));
	while ((a = bms_next_member(atts, a)) >= 0)
		sf->atts[sf->natts++] = a;
	return sf;
}

int
gpuhash_scan_filter_nquals(const GpuhashScanFilter *f)
{
	return f->nquals;
}

bool
gpuhash_scan_filter_calls(const GpuhashScanFilter *f)
{
	return f->calls;
}

int
gpuhash_scan_filter_attrs(const GpuhashScanFilter *f, const int **atts)
{
	*atts = f->atts;
	return f->natts;
}

static inline int
int_compare(int cmp, int64 x, int64 y)
{
	switch (cmp)
	{
		case BTLessStrategyNumber:
			return x < y;
		case BTLessEqualStrategyNumber:
			return x <= y;
		case BTEqualStrategyNumber:
			return x == y;
		case BTGreaterEqualStrategyNumber:
			return x >= y;
		case BTGreaterStrategyNumber:
			return x > y;
		default:
			return x != y;
	}
}

/* The operator's function on the column's value and a constant: true, false or NULL. */
static int
fn_call(const FilterNode *f, Datum v, Datum c)
{
	LOCAL_FCINFO(fcinfo, 2);
	Datum		res;

	InitFunctionCallInfoData(*fcinfo, (FmgrInfo *) &f->fn, 2, f->collation, NULL, NULL);
	fcinfo->args[0].value = f->var_left ? v : c;
	fcinfo->args[0].isnull = false;
	fcinfo->args[1].value = f->var_left ? c : v;
	fcinfo->args[1].isnull = false;
	res = FunctionCallInvoke(fcinfo);
	if (fcinfo->isnull)
		return SF_NULL;
	return DatumGetBool(res) ? SF_TRUE : SF_FALSE;
}

/*
 * An IN list's answer from whether some element matched (ANY) or some did
 * not (ALL): SQL makes a miss over a list with a NULL in it NULL.
 */
static inline int
in_result(const FilterNode *f, bool decided)
{
	if (decided)
		return f->flag ? SF_TRUE : SF_FALSE;
	if (f->has_null)
		return SF_NULL;
	return f->flag ? SF_FALSE : SF_TRUE;
}

/*
 * A text value to compare bytewise: detoasted when stored compressed or out
 * of line, except when pure (nothing may allocate), which gives NULL.
 */
static inline struct varlena *
text_value(Datum d, bool pure)
{
	struct varlena *t = (struct varlena *) DatumGetPointer(d);

	if (VARATT_IS_EXTERNAL(t) || VARATT_IS_COMPRESSED(t))
		return pure ? NULL : (struct varlena *) DatumGetTextPP(d);
	return t;
}

/*
 * A qual's value for a row.  Pure (for a thread other than the backend's):
 * nothing is called that might allocate or raise an error, and a leaf that
 * would need it is SF_UNKNOWN, as is an AND or OR that its other arguments
 * do not decide.
 */
static int
eval(const FilterNode *f, const Datum *values, const bool *isnull, bool pure)
{
	switch (f->kind)
	{
		case FK_INT_CMP:
			if (isnull[f->att] || (f->att2 >= 0 && isnull[f->att2]))
				return SF_NULL;
			return int_compare(f->cmp, int_value(f->type, values[f->att]),
							   f->att2 >= 0 ? int_value(f->type2, values[f->att2]) : f->value);
		case FK_INT_IN:
			{
				int64		x;

				if (isnull[f->att])
					return SF_NULL;
				x = int_value(f->type, values[f->att]);
				/* ANY: does one equal x; ALL (of <>): does one equal x, which fails it */
				return in_result(f, bsearch(&x, f->set, f->nset, sizeof(int64), cmp_int64) != NULL);
			}
		case FK_NUM_CMP:
			{
				int			c;

				if (isnull[f->att])
					return SF_NULL;
#ifdef HAVE_INT128
				if (gpuhash_numeric_compare(values[f->att], f->value, f->scale, &c))
					return int_compare(f->cmp, c, 0);
#endif
				if (pure)
					return SF_UNKNOWN;
				return fn_call(f, values[f->att], f->datums[0]);
			}
		case FK_FN_CMP:
			if (isnull[f->att] || (f->att2 >= 0 && isnull[f->att2]))
				return SF_NULL;
			if (pure)
				return SF_UNKNOWN;
			return fn_call(f, values[f->att], f->att2 >= 0 ? values[f->att2] : f->datums[0]);
		case FK_FN_IN:
			{
				bool		saw_null = false;

				if (isnull[f->att])
					return SF_NULL;
				if (pure)
					return SF_UNKNOWN;
				for (int i = 0; i < f->nset; i++)
				{
					int			r = fn_call(f, values[f->att], f->datums[i]);

					if (r == SF_NULL)
						saw_null = true;
					else if ((r == SF_TRUE) == f->flag)
						return r;
				}
				if (saw_null || f->has_null)
					return SF_NULL;
				return f->flag ? SF_FALSE : SF_TRUE;
			}
		case FK_BOOL_COL:
			if (isnull[f->att])
				return SF_NULL;
			return DatumGetBool(values[f->att]) ? SF_TRUE : SF_FALSE;
		case FK_NULL_TEST:
			return isnull[f->att] == f->flag ? SF_TRUE : SF_FALSE;
		case FK_LIKE:
		case FK_STR_IN:
			{
				struct varlena *t;

				if (isnull[f->att])
					return SF_NULL;
				if ((t = text_value(values[f->att], pure)) == NULL)
					return SF_UNKNOWN;
				if (f->kind == FK_LIKE)
					return like_match(f->like, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)) != f->flag ?
						SF_TRUE : SF_FALSE;
				return in_result(f, str_found(f, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t)));
			}
		case FK_AND:
		case FK_OR:
			{
				/* a false argument decides AND, a true one OR; else NULL wins */
				int			decides = f->kind == FK_AND ? SF_FALSE : SF_TRUE;
				int			r = f->kind == FK_AND ? SF_TRUE : SF_FALSE;
				bool		unknown = false;

				for (int i = 0; i < f->nkids; i++)
				{
					int			k = eval(f->kids[i], values, isnull, pure);

					if (k == decides)
						return k;
					if (k == SF_NULL)
						r = SF_NULL;
					else if (k == SF_UNKNOWN)
						unknown = true;
				}
				return unknown ? SF_UNKNOWN : r;
			}
		case FK_NOT:
			{
				int			k = eval(f->kids[0], values, isnull, pure);

				return k == SF_NULL || k == SF_UNKNOWN ? k : k == SF_TRUE ? SF_FALSE : SF_TRUE;
			}
	}
	return SF_NULL;
}

bool
gpuhash_scan_filter_pass(const GpuhashScanFilter *f, const Datum *values, const bool *isnull)
{
	for (int i = 0; i < f->nquals; i++)
		if (eval(f->quals[i], values, isnull, false) != SF_TRUE)
			return false;
	return true;
}

int
gpuhash_scan_filter_pass_pure(const GpuhashScanFilter *f, const Datum *values, const bool *isnull)
{
	int			r = 1;

	for (int i = 0; i < f->nquals; i++)
	{
		int			k = eval(f->quals[i], values, isnull, true);

		if (k == SF_FALSE || k == SF_NULL)
			return 0;
		if (k == SF_UNKNOWN)
			r = -1;
	}
	return r;
}
