/*
 * agg_compile.c - a GpuHashAggregate's aggregates and group keys as the
 * plan carries them (join_agg.h): each aggregate's argument compiled into a
 * small stack program over the joined row's columns (integer and numeric
 * arithmetic, CASE and its conditions, a numeric CASE's branches), each
 * GROUP BY column (or a date column's year) located in its side's target
 * list.  What cannot be compiled leaves the aggregation to PostgreSQL
 * (agg_path.c offers no path).
 */
#include "gpuhash_pg.h"

#include "access/stratnum.h"
#include "catalog/pg_aggregate_d.h"
#include "nodes/makefuncs.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "join_agg.h"
#include "join_node.h"
#include "numeric_fixed.h"
#include "scan_filter.h"

static int
int_width(Oid type)
{
	return type == INT2OID ? 2 : type == INT4OID ? 4 : type == INT8OID ? 8 : 0;
}

/* An operator's or cast's function, as an instruction; false if not ours. */
static bool
function_op(Oid fn, int *op)
{
	switch (fn)
	{
		case F_INT2PL:
		case F_INT4PL:
		case F_INT8PL:
		case F_INT24PL:
		case F_INT42PL:
		case F_INT48PL:
		case F_INT84PL:
		case F_INT28PL:
		case F_INT82PL:
			*op = GO_ADD;
			return true;
		case F_INT2MI:
		case F_INT4MI:
		case F_INT8MI:
		case F_INT24MI:
		case F_INT42MI:
		case F_INT48MI:
		case F_INT84MI:
		case F_INT28MI:
		case F_INT82MI:
			*op = GO_SUB;
			return true;
		case F_INT2MUL:
		case F_INT4MUL:
		case F_INT8MUL:
		case F_INT24MUL:
		case F_INT42MUL:
		case F_INT48MUL:
		case F_INT84MUL:
		case F_INT28MUL:
		case F_INT82MUL:
			*op = GO_MUL;
			return true;
		case F_INT2UM:
		case F_INT4UM:
		case F_INT8UM:
			*op = GO_NEG;
			return true;
		case F_INT2_INT4:
		case F_INT2_INT8:
		case F_INT4_INT2:
		case F_INT4_INT8:
		case F_INT8_INT2:
		case F_INT8_INT4:
			*op = GO_CAST;
			return true;
	}
	return false;
}

/* Compiling an argument: each column is found in its child's target list. */
typedef struct Compile
{
	List	   *outer_tlist;
	List	   *inner_tlist;
	List	   *prog;			/* the plan's encoding (join_agg.h) */
	int			depth;
	int			max_depth;
	List	   *conds;			/* GO_COND's conditions, over the joined row's columns */
	TupleDesc	joined;			/* the joined row's columns, made when a condition needs them */
} Compile;

static void
emit(Compile *c, int op, int width, int col, int64 value, int scale, int push)
{
	c->prog = lappend(lappend(lappend(lappend(lappend(c->prog, makeInteger(op)),
											  makeInteger(width)),
									  makeInteger(col)),
							  makeString(psprintf(INT64_FORMAT, value))),
					  makeInteger(scale));
	c->depth += push;
	c->max_depth = Max(c->max_depth, c->depth);
}

static int
column_of(List *tlist, Var *v)
{
	ListCell   *lc;

	foreach(lc, tlist)
		if (equal(lfirst_node(TargetEntry, lc)->expr, v))
			return lfirst_node(TargetEntry, lc)->resno - 1;
	return -1;
}

/* An operator's or a plain function's call: its function and arguments. */
static bool
call_of(Expr *e, Oid *fn, List **args)
{
	if (IsA(e, OpExpr))
	{
		*fn = get_opcode(((OpExpr *) e)->opno);
		*args = ((OpExpr *) e)->args;
		return true;
	}
	if (IsA(e, FuncExpr) && !((FuncExpr *) e)->funcretset)
	{
		*fn = ((FuncExpr *) e)->funcid;
		*args = ((FuncExpr *) e)->args;
		return true;
	}
	return false;
}

/* A column of either child, found in its target list. */
static bool
compile_column(Var *v, Compile *c, int width, int scale)
{
	int			col;

	if (v->varlevelsup != 0)
		return false;
	if ((col = column_of(c->outer_tlist, v)) >= 0)
		emit(c, GO_OUTER, width, col, 0, scale, 1);
	else if ((col = column_of(c->inner_tlist, v)) >= 0)
		emit(c, GO_INNER, width, col, 0, scale, 1);
	else
		return false;
	return true;
}

/* a constant's value at the width it is read at (1: a bool) */
static int64
datum_value(Datum d, int width)
{
	return width == 1 ? (int64) DatumGetBool(d) : width == 2 ? DatumGetInt16(d) :
		width == 4 ? DatumGetInt32(d) : DatumGetInt64(d);
}

/* a non-NULL constant (a numeric argument's programs have no NULL) */
static bool
compile_int_const(Const *k, Compile *c, int width)
{
	if (k->constisnull)
		return false;
	emit(c, GO_CONST, width, 0, datum_value(k->constvalue, width), 0, 1);
	return true;
}

/* any constant of an integer program, NULL included */
static void
compile_int_or_null(Const *k, Compile *c, int width)
{
	if (k->constisnull)
		emit(c, GO_NULL, width, 0, 0, 0, 1);
	else
		compile_int_const(k, c, width);
}

static bool compile_case(CaseExpr *ce, Compile *c, int width, bool numbered);

static bool
compile_expr(Expr *e, Compile *c)
{
	int			width = int_width(exprType((Node *) e));
	List	   *args;
	Oid			fn;
	int			op;
	ListCell   *lc;

	if (width == 0)
		return false;
	if (IsA(e, Var))
		return compile_column((Var *) e, c, width, 0);
	if (IsA(e, Const))
	{
		compile_int_or_null((Const *) e, c, width);
		return true;
	}
	if (IsA(e, CaseExpr))
		return compile_case((CaseExpr *) e, c, width, false);
	if (!call_of(e, &fn, &args))
		return false;
	if (!function_op(fn, &op) || list_length(args) != (op == GO_NEG || op == GO_CAST ? 1 : 2))
		return false;
	foreach(lc, args)
		if (!compile_expr(lfirst(lc), c))
			return false;
	emit(c, op, width, 0, 0, 0, op == GO_NEG || op == GO_CAST ? 0 : -1);
	return true;
}

/*
 * CASE over integer results, and the conditions it tests.  A condition
 * compares integer, date or bool columns and constants (so that it can
 * raise no error: both sides of AND and OR are evaluated, where PostgreSQL
 * may stop at the first), combines such comparisons with AND, OR and NOT,
 * or tests a column for NULL; three-valued, as PostgreSQL's.  The results
 * are evaluated lazily, only the branch taken, so that an overflow in a
 * branch not taken raises nothing, as in PostgreSQL.
 */

/* the instruction that comes next */
static int
next_instr(const Compile *c)
{
	return list_length(c->prog) / 5;
}

/* make the jump at instruction at go on at instruction target */
static void
patch_jump(Compile *c, int at, int target)
{
	lfirst(list_nth_cell(c->prog, at * 5 + 2)) = makeInteger(target);
}

/* an operand of a comparison: a column or a constant, the width it is read at */
static bool
compile_operand(Expr *e, Compile *c)
{
	Oid			type = exprType((Node *) e);
	int			width = type == BOOLOID ? 1 : type == DATEOID ? 4 : int_width(type);

	if (width == 0)
		return false;
	if (IsA(e, Var))
		return compile_column((Var *) e, c, width, 0);
	if (!IsA(e, Const))
		return false;
	compile_int_or_null((Const *) e, c, width);
	return true;
}

/*
 * The comparison an operator makes between two operands' types, or -1: the
 * direct reader's (scan_filter.c) over integers and dates, and over bools
 * only = and <>.
 */
static int
comparison_of(Oid opno, Oid left, Oid right)
{
	int			s;

	if (left != DATEOID && left != BOOLOID && (int_width(left) == 0 || int_width(right) == 0))
		return -1;
	s = gpuhash_int_strategy(opno, left, right);
	if (left == BOOLOID && s != BTEqualStrategyNumber && s != GPUHASH_STRATEGY_NE)
		return -1;
	switch (s)
	{
		case BTLessStrategyNumber:
			return GC_LT;
		case BTLessEqualStrategyNumber:
			return GC_LE;
		case BTEqualStrategyNumber:
			return GC_EQ;
		case BTGreaterEqualStrategyNumber:
			return GC_GE;
		case BTGreaterStrategyNumber:
			return GC_GT;
		case GPUHASH_STRATEGY_NE:
			return GC_NE;
	}
	return -1;
}

/*
 * x IN (constants) as x = c1 OR x = c2 ..., and x NOT IN (...) (or any
 * other ALL) as x <> c1 AND ...: the same three-valued answer, a NULL
 * among the constants included.
 */
#define GPUHASH_MAX_IN_LIST 64

static bool
compile_in_list(ScalarArrayOpExpr *sa, Compile *c)
{
	Expr	   *x = linitial(sa->args);
	Const	   *arr = lsecond(sa->args);
	Oid			elemtype;
	int			cmp;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	if (!IsA(arr, Const) || arr->constisnull ||
		!OidIsValid(elemtype = get_element_type(arr->consttype)) ||
		(cmp = comparison_of(sa->opno, exprType((Node *) x), elemtype)) < 0)
		return false;
	get_typlenbyvalalign(elemtype, &elmlen, &elmbyval, &elmalign);
	deconstruct_array(DatumGetArrayTypeP(arr->constvalue), elemtype, elmlen, elmbyval, elmalign,
					  &elems, &nulls, &n);
	if (n == 0 || n > GPUHASH_MAX_IN_LIST)
		return false;
	for (int i = 0; i < n; i++)
	{
		Const	   *k = makeConst(elemtype, -1, InvalidOid, elmlen, elems[i], nulls[i], elmbyval);

		if (!compile_operand(x, c) || !compile_operand((Expr *) k, c))
			return false;
		emit(c, GO_CMP, 1, 0, cmp, 0, -1);
		if (i > 0)
			emit(c, sa->useOr ? GO_OR : GO_AND, 1, 0, 0, 0, -1);
	}
	return true;
}

static bool
compile_condition(Expr *e, Compile *c)
{
	if (exprType((Node *) e) != BOOLOID)
		return false;
	if (IsA(e, Var) || IsA(e, Const))
		return compile_operand(e, c);
	if (IsA(e, OpExpr) && list_length(((OpExpr *) e)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) e;
		Expr	   *l = linitial(op->args);
		Expr	   *r = lsecond(op->args);
		int			cmp = comparison_of(op->opno, exprType((Node *) l), exprType((Node *) r));

		if (cmp < 0 || !compile_operand(l, c) || !compile_operand(r, c))
			return false;
		emit(c, GO_CMP, 1, 0, cmp, 0, -1);
		return true;
	}
	if (IsA(e, ScalarArrayOpExpr))
		return compile_in_list((ScalarArrayOpExpr *) e, c);
	if (IsA(e, BoolExpr))
	{
		BoolExpr   *b = (BoolExpr *) e;
		ListCell   *lc;

		foreach(lc, b->args)
		{
			if (!compile_condition(lfirst(lc), c))
				return false;
			if (b->boolop == NOT_EXPR)
				emit(c, GO_NOT, 1, 0, 0, 0, 0);
			else if (foreach_current_index(lc) > 0)
				emit(c, b->boolop == AND_EXPR ? GO_AND : GO_OR, 1, 0, 0, 0, -1);
		}
		return true;
	}
	if (IsA(e, NullTest) && !((NullTest *) e)->argisrow)
	{
		NullTest   *t = (NullTest *) e;

		if (!compile_operand(t->arg, c))
			return false;
		emit(c, GO_ISNULL, 1, 0, t->nulltesttype == IS_NULL ? 0 : 1, 0, 0);
		return true;
	}
	return false;
}

/* A Var of the joined row: outer columns first, then inner ones. */
typedef struct JoinedVars
{
	Compile    *c;
	bool		ok;
} JoinedVars;

static Node *
joined_var(Node *n, JoinedVars *jv)
{
	if (n == NULL)
		return NULL;
	if (IsA(n, Var))
	{
		Var		   *v = (Var *) n;
		int			col;

		if (v->varlevelsup != 0)
			jv->ok = false;
		else if ((col = column_of(jv->c->outer_tlist, v)) < 0 &&
				 (col = column_of(jv->c->inner_tlist, v)) >= 0)
			col += list_length(jv->c->outer_tlist);
		if (!jv->ok || col < 0)
		{
			jv->ok = false;
			return n;
		}
		return (Node *) makeVar(1, col + 1, v->vartype, v->vartypmod, v->varcollid, 0);
	}
	if (IsA(n, PlaceHolderVar) || IsA(n, Aggref) || IsA(n, SubPlan) || IsA(n, SubLink) ||
		IsA(n, Param))
	{
		jv->ok = false;
		return n;
	}
	return expression_tree_mutator(n, joined_var, jv);
}

/* the joined row's columns, as the node's scan tuple begins */
static TupleDesc
joined_desc(Compile *c)
{
	if (c->joined == NULL)
	{
		List	   *tlist = NIL;
		ListCell   *lc;
		AttrNumber	resno = 1;

		foreach(lc, list_concat_copy(c->outer_tlist, c->inner_tlist))
			tlist = lappend(tlist, makeTargetEntry(lfirst_node(TargetEntry, lc)->expr, resno++,
												   NULL, false));
		c->joined = ExecTypeFromTL(tlist);
	}
	return c->joined;
}

/*
 * A CASE's WHEN condition: an integer program (compile_condition), or else
 * one that the direct reader's filter compiles whole over the joined row's
 * columns (text equality, IN lists and LIKE, numeric comparisons; TPC-H
 * q12's o_orderpriority = '1-URGENT' OR ..., q14's p_type LIKE 'PROMO%'),
 * pushed as a truth by GO_COND.  A filter can raise no error and has no
 * effect, so its conditions may be evaluated before it is known which a
 * row reaches; NULL is false there, as a WHEN condition takes it.
 */
static bool
compile_when(Expr *e, Compile *c)
{
	int			ninstr = list_length(c->prog);
	int			depth = c->depth;
	JoinedVars	jv = {c, true};
	Node	   *cond;
	List	   *rest;

	if (compile_condition(e, c))
		return true;
	c->prog = list_truncate(c->prog, ninstr);
	c->depth = depth;
	if (list_length(c->conds) >= GPUHASH_AGG_MAX_CONDS)
		return false;
	cond = joined_var((Node *) e, &jv);
	if (!jv.ok || contain_volatile_functions(cond) ||
		gpuhash_scan_filter_compile(list_make1(cond), joined_desc(c), &rest) == NULL ||
		rest != NIL)
		return false;
	emit(c, GO_COND, 1, list_length(c->conds), 0, 0, 1);
	c->conds = lappend(c->conds, cond);
	return true;
}

/*
 * A CASE branch's result: its integer program, or with number >= 0 the
 * constant number (compile_numeric_case's branch numbers).
 */
static bool
compile_result(Expr *r, Compile *c, int width, int number)
{
	if (number >= 0)
	{
		emit(c, GO_CONST, width, 0, number, 0, 1);
		return true;
	}
	return r != NULL && int_width(exprType((Node *) r)) == width && compile_expr(r, c);
}

/*
 * CASE WHEN c1 THEN r1 ... ELSE d END as
 *   c1 JUMPF(L1) r1 JUMP(end) L1: c2 JUMPF(L2) r2 JUMP(end) L2: ... d end:
 * Each branch leaves one value, so the depth after a branch is restored
 * before the next.  numbered: each ri is i, d the number of WHENs.
 */
static bool
compile_case(CaseExpr *ce, Compile *c, int width, bool numbered)
{
	List	   *to_end = NIL;
	ListCell   *lc;
	int			depth = c->depth;

	if (ce->arg != NULL)
		return false;
	foreach(lc, ce->args)
	{
		CaseWhen   *w = lfirst_node(CaseWhen, lc);
		int			jumpf;

		if (!compile_when(w->expr, c))
			return false;
		jumpf = next_instr(c);
		emit(c, GO_JUMPF, width, 0, 0, 0, -1);
		if (!compile_result(w->result, c, width, numbered ? foreach_current_index(lc) : -1))
			return false;
		to_end = lappend_int(to_end, next_instr(c));
		emit(c, GO_JUMP, width, 0, 0, 0, 0);
		c->depth = depth;
		patch_jump(c, jumpf, next_instr(c));
	}
	if (!compile_result(ce->defresult, c, width, numbered ? list_length(ce->args) : -1))
		return false;
	foreach(lc, to_end)
		patch_jump(c, lfirst_int(lc), next_instr(c));
	return true;
}

/* numeric(p, s)'s scale s, or -1 without one (or a negative one) */
static int
typmod_scale(int32 typmod)
{
	int			scale;

	if (typmod < (int32) VARHDRSZ)
		return -1;
	/* the low 11 bits hold the scale, signed */
	scale = ((((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024);
	return scale;
}

/*
 * A numeric argument (join_agg.h): + - * and unary minus over numeric
 * columns of a declared scale, numeric constants, and integer columns and
 * constants cast to numeric.  *scale is the result's display scale, as
 * PostgreSQL's operators give it.
 */
static bool
compile_numeric(Expr *e, Compile *c, int *scale)
{
	List	   *args;
	Oid			fn;
	int			op;
	int			s1,
				s2;

	if (exprType((Node *) e) != NUMERICOID)
		return false;
	if (IsA(e, Var))
	{
		*scale = typmod_scale(exprTypmod((Node *) e));
		return *scale >= 0 && *scale <= GPUHASH_FIXED_MAX_SCALE &&
			compile_column((Var *) e, c, GPUHASH_NUMERIC, *scale);
	}
	if (IsA(e, Const))
	{
		Const	   *k = (Const *) e;
		int64		v;

		if (k->constisnull || !gpuhash_numeric_small(k->constvalue, &v, scale))
			return false;
		emit(c, GO_CONST, GPUHASH_NUMERIC, 0, v, *scale, 1);
		return true;
	}
	if (!call_of(e, &fn, &args))
		return false;
	switch (fn)
	{
		case F_NUMERIC_INT2:
		case F_NUMERIC_INT4:
		case F_NUMERIC_INT8:
			{
				/* an integer column or constant, as a numeric of scale 0 */
				Expr	   *arg = linitial(args);
				int			width = int_width(exprType((Node *) arg));

				*scale = 0;
				if (width == 0)
					return false;
				if (IsA(arg, Var))
					return compile_column((Var *) arg, c, width, 0);
				if (IsA(arg, Const))
					return compile_int_const((Const *) arg, c, width);
				return false;
			}
		case F_NUMERIC_UMINUS:
			if (!compile_numeric(linitial(args), c, scale))
				return false;
			emit(c, GO_NEG, GPUHASH_NUMERIC, 0, 0, *scale, 0);
			return true;
		case F_NUMERIC_ADD:
			op = GO_ADD;
			break;
		case F_NUMERIC_SUB:
			op = GO_SUB;
			break;
		case F_NUMERIC_MUL:
			op = GO_MUL;
			break;
		default:
			return false;
	}
	if (!compile_numeric(linitial(args), c, &s1) || !compile_numeric(lsecond(args), c, &s2))
		return false;
	*scale = op == GO_MUL ? s1 + s2 : Max(s1, s2);
	if (*scale > GPUHASH_FIXED_MAX_SCALE)
		return false;
	emit(c, op, GPUHASH_NUMERIC, 0, 0, *scale, -1);
	return true;
}

/*
 * A numeric argument that is a searched CASE (TPC-H q08's and q14's
 * sum(CASE WHEN ... THEN l_extendedprice * (1 - l_discount) ELSE 0 END)):
 * the integer program that picks a row's branch, then each branch's
 * numeric program (join_agg.h); *scale is the largest branch's.  The
 * conditions are evaluated as compile_case's are; only the branch taken
 * is folded, and a row the fixed-point integers cannot carry is computed
 * by PostgreSQL's functions from that branch alone.
 */
static bool
compile_numeric_case(CaseExpr *ce, Compile *c, int *scale)
{
	List	   *results = NIL;
	int			depth = c->depth;
	int			nbranch;
	ListCell   *lc;

	if (ce->casetype != NUMERICOID || !compile_case(ce, c, 4, true))
		return false;
	foreach(lc, ce->args)
		results = lappend(results, lfirst_node(CaseWhen, lc)->result);
	results = lappend(results, ce->defresult);
	c->depth = depth;

	*scale = 0;
	nbranch = 0;
	foreach(lc, results)
	{
		Expr	   *r = lfirst(lc);
		int			at = next_instr(c);
		int			s;

		emit(c, GO_BRANCH, GPUHASH_NUMERIC, nbranch++, 0, -1, 0);
		if (r == NULL || (IsA(r, Const) && ((Const *) r)->constisnull))
			continue;
		if (!compile_numeric(r, c, &s))
			return false;
		lfirst(list_nth_cell(c->prog, at * 5 + 4)) = makeInteger(s);
		*scale = Max(*scale, s);
		c->depth = depth;
	}
	return true;
}

/*
 * count(DISTINCT column) of an integer or date column, as the plan's List:
 * the column's values are compared as integers, which is their type's
 * equality.  There is no partial form: PostgreSQL has none either.
 */
static List *
compile_count_distinct(Aggref *a, Compile *c)
{
	Expr	   *arg;
	Oid			type;
	int			width;

	if (a->aggfnoid != F_COUNT_ANY || a->aggsplit != AGGSPLIT_SIMPLE ||
		list_length(a->args) != 1 || list_length(a->aggdistinct) != 1)
		return NIL;
	arg = linitial_node(TargetEntry, a->args)->expr;
	type = exprType((Node *) arg);
	width = type == DATEOID ? 4 : int_width(type);
	if (!IsA(arg, Var) || width == 0 || !compile_column((Var *) arg, c, width, 0))
		return NIL;
	return list_concat(list_make5(makeInteger(GA_COUNT_DISTINCT), makeInteger(INT8OID),
								  makeInteger(width), makeInteger(false), makeInteger(0)),
					   c->prog);
}

/*
 * One aggregate as the plan's List (join_agg.h), or NIL when it is not one
 * the node can fold.  Partial states are emitted only for aggregates whose
 * state is a plain integer; sum(int8)'s is an internal type.
 */
static List *
compile_aggref(Aggref *a, List *outer_tlist, List *inner_tlist)
{
	Compile		c = {outer_tlist, inner_tlist, NIL, 0, 0, NIL, NULL};
	bool		partial = DO_AGGSPLIT_SKIPFINAL(a->aggsplit);
	GpuAggKind	kind;
	Oid			restype = exprType((Node *) a);
	Oid			want;
	int			argwidth = 0;
	bool		numeric = false;
	bool		date_arg = false;
	List	   *spec;

	if (a->aggorder != NIL || a->aggfilter != NULL ||
		a->agglevelsup != 0 || a->aggkind != AGGKIND_NORMAL ||
		(a->aggsplit != AGGSPLIT_SIMPLE && a->aggsplit != AGGSPLIT_INITIAL_SERIAL))
		return NIL;
	if (a->aggdistinct != NIL)
		return compile_count_distinct(a, &c);
	switch (a->aggfnoid)
	{
		case F_COUNT_:
			kind = GA_COUNT_STAR;
			break;
		case F_COUNT_ANY:
			kind = GA_COUNT;
			break;
		case F_SUM_INT2:
		case F_SUM_INT4:
			kind = GA_SUM;
			break;
		case F_SUM_INT8:
			kind = GA_SUM;
			break;
		case F_SUM_NUMERIC:
			kind = GA_SUM;
			numeric = true;
			break;
		case F_AVG_NUMERIC:
			kind = GA_AVG;
			numeric = true;
			break;
		case F_MIN_INT2:
		case F_MIN_INT4:
		case F_MIN_INT8:
			kind = GA_MIN;
			break;
		case F_MAX_INT2:
		case F_MAX_INT4:
		case F_MAX_INT8:
			kind = GA_MAX;
			break;
		case F_MIN_DATE:
		case F_MAX_DATE:
			/* a date is its day number, the infinities the int4 extremes: compared as int4 */
			kind = a->aggfnoid == F_MIN_DATE ? GA_MIN : GA_MAX;
			date_arg = true;
			break;
		case F_AVG_INT2:
		case F_AVG_INT4:
			kind = GA_AVG;
			break;
		case F_AVG_INT8:
			kind = GA_AVG;
			break;
		default:
			return NIL;
	}
	if (kind == GA_COUNT_STAR)
	{
		if (a->args != NIL)
			return NIL;
	}
	else
	{
		Expr	   *arg;

		if (list_length(a->args) != 1)
			return NIL;
		arg = linitial_node(TargetEntry, a->args)->expr;
		if (numeric)
		{
			int			scale;

			argwidth = GPUHASH_NUMERIC;
			if (IsA(arg, CaseExpr) ? !compile_numeric_case((CaseExpr *) arg, &c, &scale) :
				!compile_numeric(arg, &c, &scale))
				return NIL;
		}
		else if (date_arg)
		{
			argwidth = 4;
			if (!IsA(arg, Var) || exprType((Node *) arg) != DATEOID ||
				!compile_column((Var *) arg, &c, argwidth, 0))
				return NIL;
		}
		else if (kind == GA_COUNT && IsA(arg, Var) && int_width(exprType((Node *) arg)) == 0)
		{
			/* count(column) of another type: only whether it is NULL is read */
			argwidth = 8;
			if (!compile_column((Var *) arg, &c, argwidth, 0))
				return NIL;
		}
		else
		{
			argwidth = int_width(exprType((Node *) arg));
			if (!compile_expr(arg, &c))
				return NIL;
		}
		if (c.max_depth > GPUHASH_AGG_MAX_DEPTH)
			return NIL;
	}
#ifndef HAVE_INT128
	/* exact sums of int8 and numeric values need 128 bits */
	if ((kind == GA_SUM || kind == GA_AVG) && (argwidth == 8 || numeric))
		return NIL;
#endif
	/*
	 * What PostgreSQL's state and result types are, as the node emits them:
	 * sums and averages of int8 and numeric keep an internal state, which a
	 * partial aggregate passes on serialized.
	 */
	if (kind == GA_MIN || kind == GA_MAX)
		want = exprType((Node *) linitial_node(TargetEntry, a->args)->expr);
	else if (kind == GA_COUNT || kind == GA_COUNT_STAR)
		want = INT8OID;
	else if (numeric || argwidth == 8)
		want = partial ? BYTEAOID : NUMERICOID;
	else if (kind == GA_AVG)
		want = partial ? INT8ARRAYOID : NUMERICOID;
	else
		want = INT8OID;
	if (restype != want)
		return NIL;
	spec = list_make5(makeInteger(kind), makeInteger(restype), makeInteger(argwidth),
					  makeInteger(partial), makeInteger(list_length(c.conds)));
	return list_concat(list_concat(spec, c.conds), c.prog);
}

/*
 * The types a group key may have: by value and equal when their bits are,
 * or text whose equality is its bytes' (a deterministic collation), with
 * bpchar's trailing spaces left out.
 */
static int
group_key_width(Oid type, Oid collation)
{
	switch (type)
	{
		case TEXTOID:
		case VARCHAROID:
		case BPCHAROID:
			if (!OidIsValid(collation) || !get_collation_isdeterministic(collation))
				return 0;
			return type == BPCHAROID ? GPUHASH_BPCHAR_KEY : GPUHASH_TEXT_KEY;
		case BOOLOID:
			return 1;
		case INT2OID:
			return 2;
		case INT4OID:
		case DATEOID:
			return 4;
		case INT8OID:
			return 8;
	}
	return 0;
}

/*
 * A column that GROUP BY determines through its table's primary key
 * (agg_path.c): every row of a group holds the same bytes in it, so it is
 * hashed by its bits, or a varlena by its bytes, whatever its type's
 * equality: a numeric too, or text of a nondeterministic collation.
 */
static int
dependent_key_width(Oid type)
{
	int16		typlen;
	bool		typbyval;

	if (type == BOOLOID)
		return 1;
	get_typlenbyval(type, &typlen, &typbyval);
	if (typlen == -1)
		return GPUHASH_TEXT_KEY;
	if (typbyval && (typlen == 2 || typlen == 4 || typlen == 8))
		return typlen;
	return 0;
}

/*
 * EXTRACT(YEAR FROM v) of a date column v (a GROUP BY key of TPC-H q07,
 * q08 and q09): v, or NULL when e is not that.  Only the field name the
 * parser writes for EXTRACT(YEAR ...) is taken; others are PostgreSQL's.
 */
Var *
gpuhash_agg_year_of_date(Expr *e)
{
	FuncExpr   *f = (FuncExpr *) e;
	Const	   *field;
	Var		   *v;

	if (!IsA(e, FuncExpr) || f->funcid != F_EXTRACT_TEXT_DATE || list_length(f->args) != 2)
		return NULL;
	field = linitial(f->args);
	v = lsecond(f->args);
	if (!IsA(field, Const) || field->constisnull || field->consttype != TEXTOID ||
		!IsA(v, Var) || v->vartype != DATEOID || v->varlevelsup != 0)
		return NULL;
	return strcmp(TextDatumGetCString(field->constvalue), "year") == 0 ? v : NULL;
}

/*
 * The node's keys as the plan lists them (join_agg.h), each found in its
 * child's target list: the first ngroup those of GROUP BY, the rest columns
 * that they determine.  False if one is not a plain column of a type the
 * node groups by, or a year of a date column.
 */
bool
gpuhash_agg_plan_group_keys(List *key_exprs, int ngroup, List *outer_tlist, List *inner_tlist,
							List **keys)
{
	ListCell   *lc;

	*keys = NIL;
	if (list_length(key_exprs) > GPUHASH_AGG_MAX_KEYS)
		return false;
	foreach(lc, key_exprs)
	{
		Var		   *v = lfirst(lc);
		int			width;
		int			op = GO_OUTER;
		int			form = GK_COLUMN;
		int			col;

		if (!IsA(v, Var) && foreach_current_index(lc) < ngroup && gpuhash_fold_year_keys &&
			(v = gpuhash_agg_year_of_date(lfirst(lc))) != NULL)
			form = GK_YEAR;
		if (v == NULL || !IsA(v, Var) || v->varlevelsup != 0)
			return false;
		width = foreach_current_index(lc) < ngroup ?
			group_key_width(v->vartype, v->varcollid) : dependent_key_width(v->vartype);
		if (width == 0)
			return false;
		if ((col = column_of(outer_tlist, v)) < 0)
		{
			op = GO_INNER;
			if ((col = column_of(inner_tlist, v)) < 0)
				return false;
		}
		*keys = lappend(lappend(lappend(*keys, makeInteger(op)), makeInteger(width)),
						makeInteger(col));
		*keys = lappend(lappend(*keys, makeInteger(form)), makeInteger(-1));
	}
	return true;
}

/*
 * scan_tlist, the node's scan tuple, with a column for each expression key
 * (join_agg.h), which keys then names; n_outer of its columns are the outer
 * side's.  Column keys are emitted in their own columns.
 */
List *
gpuhash_agg_plan_key_columns(List *keys, List *key_exprs, int n_outer, List *scan_tlist)
{
	ListCell   *lc;

	foreach(lc, key_exprs)
	{
		int			k = foreach_current_index(lc);
		int			op = intVal(list_nth(keys, 5 * k));
		int			col = intVal(list_nth(keys, 5 * k + 2));
		int			out;

		if (intVal(list_nth(keys, 5 * k + 3)) == GK_COLUMN)
			out = op == GO_OUTER ? col : n_outer + col;
		else
		{
			out = list_length(scan_tlist);
			scan_tlist = lappend(scan_tlist, makeTargetEntry(copyObject(lfirst(lc)), out + 1,
															 NULL, false));
		}
		lfirst(list_nth_cell(keys, 5 * k + 4)) = makeInteger(out);
	}
	return scan_tlist;
}

/* Compile every aggregate for the plan; false if one cannot be. */
bool
gpuhash_agg_plan_aggs(List *aggrefs, List *outer_tlist, List *inner_tlist, List **specs)
{
	ListCell   *lc;

	*specs = NIL;
	foreach(lc, aggrefs)
	{
		List	   *spec = compile_aggref(lfirst_node(Aggref, lc), outer_tlist, inner_tlist);

		if (spec == NIL)
			return false;
		*specs = lappend(*specs, spec);
	}
	return true;
}
