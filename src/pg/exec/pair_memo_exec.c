/*
 * pair_memo_exec.c - values kept per build row (pair_memo_exec.h).
 *
 * A build row's values are computed the first time one of its pairs
 * reaches the join clauses, with the pair's scan tuple (whose inner columns
 * are the build row's), and copied into the memo's own memory.  The arrays
 * grow with the largest build row number seen, so they cost nothing for
 * build rows no pair reaches.  In a parallel plan each participant keeps
 * its own.
 */
#include "gpuhash_pg.h"

#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "pair_memo_exec.h"

typedef struct GpuPairMemo
{
	int			n;				/* expressions */
	ExprState **exprs;
	int16	   *typlen;
	bool	   *typbyval;
	MemoryContext cxt;			/* the arrays and by-reference values */
	uint64		cap;			/* build rows the arrays have room for */
	uint8	   *done;			/* per build row: its values are kept */
	Datum	   *values;			/* cap * n */
	bool	   *isnull;
	uint64		evals;			/* build rows computed */
} GpuPairMemo;

void
gpuhash_pair_memo_begin(GpuJoinState *gj, List *exprs)
{
	GpuPairMemo *m;
	ListCell   *lc;
	int			i = 0;

	gj->memo = NULL;
	if (exprs == NIL)
		return;
	m = palloc0(sizeof(GpuPairMemo));
	m->n = list_length(exprs);
	m->exprs = palloc(m->n * sizeof(ExprState *));
	m->typlen = palloc(m->n * sizeof(int16));
	m->typbyval = palloc(m->n * sizeof(bool));
	foreach(lc, exprs)
	{
		m->exprs[i] = ExecInitExpr(lfirst(lc), &gj->css.ss.ps);
		get_typlenbyval(exprType(lfirst(lc)), &m->typlen[i], &m->typbyval[i]);
		i++;
	}
	m->cxt = AllocSetContextCreate(gj->css.ss.ps.state->es_query_cxt, "GpuHashJoin per build row",
								   ALLOCSET_DEFAULT_SIZES);
	gj->memo = m;
}

void
gpuhash_pair_memo_reset(GpuJoinState *gj)
{
	GpuPairMemo *m = gj->memo;

	if (m == NULL)
		return;
	MemoryContextReset(m->cxt);
	m->cap = 0;
	m->done = NULL;
	m->values = NULL;
	m->isnull = NULL;
}

static void
grow(GpuPairMemo *m, uint64 rows)
{
	uint64		cap = Max(Max(m->cap * 2, rows), 1024);
	MemoryContext old = MemoryContextSwitchTo(m->cxt);

	if (m->cap == 0)
	{
		m->done = palloc_extended(cap, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		m->values = palloc_extended(cap * m->n * sizeof(Datum), MCXT_ALLOC_HUGE);
		m->isnull = palloc_extended(cap * m->n * sizeof(bool), MCXT_ALLOC_HUGE);
	}
	else
	{
		m->done = repalloc_huge(m->done, cap);
		memset(m->done + m->cap, 0, cap - m->cap);
		m->values = repalloc_huge(m->values, cap * m->n * sizeof(Datum));
		m->isnull = repalloc_huge(m->isnull, cap * m->n * sizeof(bool));
	}
	m->cap = cap;
	MemoryContextSwitchTo(old);
}

void
gpuhash_pair_memo_fill(GpuJoinState *gj, TupleTableSlot *slot, bool matched, uint64 ref)
{
	GpuPairMemo *m = gj->memo;
	Datum	   *values = slot->tts_values + gj->n_outer + gj->n_inner;
	bool	   *isnull = slot->tts_isnull + gj->n_outer + gj->n_inner;

	if (!matched)
	{
		for (int i = 0; i < m->n; i++)
		{
			values[i] = (Datum) 0;
			isnull[i] = true;
		}
		return;
	}
	if (ref >= m->cap)
		grow(m, ref + 1);
	if (!m->done[ref])
	{
		ExprContext *econtext = gj->css.ss.ps.ps_ExprContext;
		TupleTableSlot *save = econtext->ecxt_scantuple;

		econtext->ecxt_scantuple = slot;
		for (int i = 0; i < m->n; i++)
		{
			bool		null;
			Datum		d = ExecEvalExprSwitchContext(m->exprs[i], econtext, &null);
			MemoryContext old = MemoryContextSwitchTo(m->cxt);

			m->isnull[ref * m->n + i] = null;
			m->values[ref * m->n + i] = null ? (Datum) 0 :
				datumCopy(d, m->typbyval[i], m->typlen[i]);
			MemoryContextSwitchTo(old);
		}
		econtext->ecxt_scantuple = save;
		m->done[ref] = 1;
		m->evals++;
	}
	for (int i = 0; i < m->n; i++)
	{
		values[i] = m->values[ref * m->n + i];
		isnull[i] = m->isnull[ref * m->n + i];
	}
}

void
gpuhash_pair_memo_explain(GpuJoinState *gj, List *exprs, List *context, bool useprefix,
						  ExplainState *es)
{
	List	   *shown = NIL;
	ListCell   *lc;

	if (gj->memo == NULL)
		return;
	foreach(lc, exprs)
		shown = lappend(shown, deparse_expression(lfirst(lc), context, useprefix, false));
	ExplainPropertyList("Once per Build Row", shown, es);
	if (es->analyze && !gj->css.ss.ps.plan->parallel_aware)
		ExplainPropertyUInteger("Build Rows Evaluated", NULL, gj->memo->evals, es);
}
