/*
 * read_cost.c - what the direct heap reader (exec/heap_reader.c) saves a
 * join against PostgreSQL's Seq Scan, for the join's costs.
 *
 * PostgreSQL charges a Seq Scan cpu_tuple_cost and its filter's cost for
 * every row it reads.  The node reads a plain heap scan itself: it tests
 * the filter's quals compiled to integer comparisons where they all
 * compile (exec/scan_filter.c), and forms no tuple for a row they refuse;
 * a key filter tested before the row is taken apart drops rows without a
 * match before either.  Such a row costs the reader about one comparison.
 * Measured on the H200 host at TPC-H SF 10 (bench/NOTES.md section 32),
 * with PostgreSQL's joins off so that the node read those scans: q14 2.35x
 * and q12 1.97x of PostgreSQL's plan, both of whose time goes to reading
 * lineitem through a filter.
 *
 * The readers also set how many workers a parallel plan of ours takes
 * (gpuhash_plan_workers): as many as share the machine's processors with
 * the helper threads the readers will start.
 */
#include "gpuhash_pg.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "helper_thread.h"
#include "join_node.h"
#include "read_cost.h"
#include "scan_filter.h"

/*
 * What this planning found of each base relation's filter: compiling takes
 * a relation's descriptor and the operators' lookups, and the joins of a
 * many-way query ask for the same relations many times.
 */
typedef struct CompiledRel
{
	RelOptInfo *rel;
	bool		compiles;		/* every qual compiles */
	bool		subplan;		/* a qual has a subplan */
	bool		threadless;		/* its reader takes no helper thread */
} CompiledRel;

static List *compiled_rels = NIL;

static const CompiledRel *filter_of(PlannerInfo *root, RelOptInfo *rel);

List *
gpuhash_read_cost_begin(void)
{
	List	   *saved = compiled_rels;

	compiled_rels = NIL;
	return saved;
}

void
gpuhash_read_cost_end(List *saved)
{
	compiled_rels = saved;
}

/* As the planner's own: workers plus what the leader is expected to add. */
double
gpuhash_parallel_divisor(int workers)
{
	double		divisor = workers;

	if (parallel_leader_participation)
	{
		double		leader = 1.0 - 0.3 * workers;

		if (leader > 0)
			divisor += leader;
	}
	return divisor;
}

/*
 * The workers of a parallel path of ours whose inputs were planned for
 * planned workers: gpuhash.parallel_workers, where it asks for more.  Its
 * default, -1, sizes the plan by the machine's processors, since the node's
 * time is its participants' reading and more readers share it: a process
 * each, or one for every two where kept, the share of rows its direct reads
 * hand on, is small enough for each reader to take its pages apart in a
 * helper thread (exec/read_ahead.c).  On the H200 host, W1-W3, W5, W7 and
 * W8 ran 24-47 % faster on the GPU with 16 workers than with PostgreSQL's
 * 6 (the CPU twin gained on five of them too), and TPC-H q06 40 % slower
 * with 8 than 7, as the eighth cost every reader its thread
 * (bench/NOTES.md section 49).  A count that a table's parallel_workers
 * option fixed (fixed) is the user's, and the default leaves it alone.
 */
int
gpuhash_plan_workers(int planned, double kept, bool fixed)
{
	int			wanted;

	if (planned <= 0)
		return planned;
	if (gpuhash_parallel_workers >= 0)
		wanted = gpuhash_parallel_workers;
	else if (fixed)
		return planned;
	else
	{
		int			per_reader = gpuhash_read_thread &&
			kept * GPUHASH_READ_THREAD_PASS_DIV <= 1.0 ? 2 : 1;

		wanted = Min(gpuhash_online_cpus() / per_reader - (parallel_leader_participation ? 1 : 0),
					 max_parallel_workers);
	}
	return Max(planned, Min(wanted, max_parallel_workers_per_gather));
}

/* Was p planned for the workers that its table's parallel_workers option names? */
bool
gpuhash_workers_fixed(Path *p)
{
	return p->parent->reloptkind == RELOPT_BASEREL && p->parent->rel_parallel_workers >= 0;
}

/*
 * The share of p's table that its reader hands on: what its filter keeps,
 * times key_share, what a key filter tested on the rows keeps (1 without
 * one), where p is a Seq Scan the node reads directly and takes apart.  A
 * node of ours below was sized by its own reads already, and
 * gpuhash_plan_workers never plans fewer than it has: 0, so that its
 * readers' threads are not crowded out from above.  An input that no
 * reader's thread takes apart (read in place, filtered by a qual the
 * executor evaluates, or not read directly): 1.  W2 and W3, read in place,
 * had been planned 7 workers for threads they never took, and ran slower
 * than with 16 (bench/NOTES.md section 49).
 */
double
gpuhash_read_kept(PlannerInfo *root, Path *p, double key_share)
{
	RelOptInfo *rel = p->parent;

	if (IsA(p, CustomPath))
		return 0.0;
	if (!gpuhash_direct_scan || !gpuhash_plain_heap_scan(root, p) || rel->tuples <= 0 ||
		filter_of(root, rel)->threadless)
		return 1.0;
	return Min(1.0, rel->rows / rel->tuples) * Min(key_share, 1.0);
}

/*
 * rel's table, which the planner has opened and locked already: its
 * relcache entry answers without the catalog lookups that a new session's
 * cold caches would make.
 */
static Relation
planned_relation(PlannerInfo *root, RelOptInfo *rel)
{
	return table_open(planner_rt_fetch(rel->relid, root)->relid, NoLock);
}

/*
 * A Seq Scan of a heap table without parameters, its filter included
 * (heap_reader.c applies it as it reads).
 */
bool
gpuhash_plain_heap_scan(PlannerInfo *root, Path *p)
{
	RelOptInfo *rel = p->parent;
	Relation	r;
	bool		heap;

	if (p->pathtype != T_SeqScan ||
		rel->reloptkind != RELOPT_BASEREL || rel->rtekind != RTE_RELATION ||
		p->param_info != NULL)
		return false;
	r = planned_relation(root, rel);
	heap = r->rd_rel->relam == HEAP_TABLE_AM_OID;
	table_close(r, NoLock);
	return heap;
}

/*
 * Can the direct reader test the key (key_vars, columns of p's relation)
 * before it takes a row apart?  Where every column up to the key's has a
 * fixed length and the key is passed by value, so that it lies at a fixed
 * offset (heap_reader.c).
 */
bool
gpuhash_key_leads_row(PlannerInfo *root, Path *p, List *key_vars)
{
	AttrNumber	last = 0;
	Relation	r;
	TupleDesc	desc;
	bool		fixed = true;
	ListCell   *lc;

	foreach(lc, key_vars)
	{
		Var		   *v = lfirst_node(Var, lc);

		if (v->varattno <= 0)
			return false;
		last = Max(last, v->varattno);
	}
	r = planned_relation(root, p->parent);
	desc = RelationGetDescr(r);
	for (AttrNumber a = 1; a <= last && fixed; a++)
	{
		Form_pg_attribute att;

		if (a > desc->natts)
		{
			fixed = false;
			break;
		}
		att = TupleDescAttr(desc, a - 1);
		fixed = att->attlen > 0;
		foreach(lc, key_vars)
			if (lfirst_node(Var, lc)->varattno == a && !att->attbyval)
				fixed = false;
	}
	table_close(r, NoLock);
	return fixed;
}

/*
 * Is every column of desc of fixed length and passed by value?  Then the
 * direct reader, given a filter it compiles whole, reads its rows in place
 * whichever columns it wants, and starts no helper thread
 * (exec/heap_reader.c, exec/read_ahead.c).
 */
static bool
reads_in_place(TupleDesc desc)
{
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);

		if (att->attlen <= 0 || !att->attbyval)
			return false;
	}
	return true;
}

/* What this planning knows of rel's filter (scan_filter.c), found on first asking. */
static const CompiledRel *
filter_of(PlannerInfo *root, RelOptInfo *rel)
{
	CompiledRel *c;
	MemoryContext old;
	Relation	r;
	List	   *quals = NIL;
	List	   *rest;
	ListCell   *lc;

	foreach(lc, compiled_rels)
	{
		c = lfirst(lc);
		if (c->rel == rel)
			return c;
	}
	/*
	 * Kept where rel is: GEQO plans each try of its join order in a memory
	 * context of its own, which it then deletes.
	 */
	old = MemoryContextSwitchTo(GetMemoryChunkContext(rel));
	c = palloc0(sizeof(CompiledRel));
	c->rel = rel;
	foreach(lc, rel->baserestrictinfo)
	{
		Expr	   *clause = lfirst_node(RestrictInfo, lc)->clause;

		quals = lappend(quals, clause);
		c->subplan |= contain_subplans((Node *) clause);
	}
	r = planned_relation(root, rel);
	c->compiles = gpuhash_scan_filter_compile(quals, RelationGetDescr(r), &rest) != NULL &&
		rest == NIL;
	/* a qual left to the executor keeps the reader's rows in the backend too */
	c->threadless = rest != NIL || reads_in_place(RelationGetDescr(r));
	table_close(r, NoLock);
	compiled_rels = lappend(compiled_rels, c);
	MemoryContextSwitchTo(old);
	return c;
}

/*
 * What the direct reader of p saves against a Seq Scan, for all the rows
 * one participant reads: a filter that compiles whole costs a comparison a
 * row instead of PostgreSQL's per-row charges, and a key filter tested
 * first (miss_early, the share of rows it drops) drops its rows for a
 * comparison whatever the filter.  A filter with a subplan is not counted
 * either way: the reader switches a key filter off when it removes less
 * than the estimate promised, and would then run the subplan on every row.
 */
Cost
gpuhash_read_credit(PlannerInfo *root, Path *p, double miss_early)
{
	RelOptInfo *rel = p->parent;
	Cost		qual = 0.0;
	bool		compiled = false;
	double		read;
	Cost		scan;
	Cost		after;

	if (!gpuhash_direct_scan || (rel->baserestrictinfo == NIL && miss_early <= 0.0) ||
		!gpuhash_plain_heap_scan(root, p))
		return 0.0;
	if (rel->baserestrictinfo != NIL)
	{
		const CompiledRel *f = filter_of(root, rel);

		/* a subplan never compiles */
		compiled = f->compiles;
		if (!f->subplan)
			qual = rel->baserestrictcost.per_tuple;
	}
	read = rel->tuples;
	if (p->parallel_workers > 0)
		read /= gpuhash_parallel_divisor(p->parallel_workers);
	scan = cpu_tuple_cost + qual;
	after = miss_early * cpu_operator_cost +
		(1.0 - miss_early) * (compiled ? cpu_operator_cost : scan);
	return Max(read * (scan - after), 0.0);
}
