/*
 * device.c - which device gpuhash uses, the per-backend core contexts, and
 * the mapping of core failures to ereport.
 *
 * CUDA is initialised on first use in each backend, never in _PG_init or the
 * postmaster: a CUDA context does not survive fork.  Whether a GPU is usable
 * is found out once per backend, when something first runs on it, and
 * remembered, with the reason when it is not, since asking again costs a
 * driver round trip and gives the same answer.  Planning never asks the
 * driver (gpuhash_gpu_usable).
 * Each backend keeps one core context per device for its whole life: a GPU
 * context costs device memory and tenths of a second to create.
 */
#include "gpuhash_pg.h"

#include <glob.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#define GPU_ID 0

static bool gpu_probed = false;
static int	gpu_count = 0;
static bool gpu_usable = false;
static char gpu_why[512];

static ght_ctx *cpu_ctx = NULL;
static ght_ctx *gpu_ctx = NULL;
static bool trim_registered = false;

/*
 * A GPU context being made by a helper thread (gpuhash_gpu_context_begin),
 * and what the thread found.  The thread calls only the core, never
 * PostgreSQL; the backend reads its results after joining it.
 */
typedef struct PendingGpu
{
	bool		running;		/* thread started and not yet joined */
	int			done;			/* set by the thread as it ends (atomic) */
	instr_time	started;
	pthread_t	thread;
	double		made_ms;		/* the thread's time */
	int			count;			/* ght_gpu_count */
	char		count_why[512];
	ght_status	status;			/* ght_ctx_create, when count > 0 */
	ght_ctx    *ctx;
	char		why[512];
} PendingGpu;

static PendingGpu pending;
static bool pending_exit_hook = false;

static void report_status(ght_status status, const char *what,
						  const char *detail, const char *cuda_name) pg_attribute_noreturn();
static void report_no_gpu(const char *why) pg_attribute_noreturn();

/*
 * The core polls this between batches and in long loops.  It must not
 * longjmp, so it only says whether to stop; the caller then runs
 * CHECK_FOR_INTERRUPTS.  Only a cancel or a termination request stops the
 * core: other interrupts (barriers, notifications, ...) can wait until the
 * core returns, and stopping for them would turn them into a failed query.
 */
static int
interrupt_requested(void *arg)
{
	return InterruptPending && (QueryCancelPending || ProcDiePending);
}

/*
 * A GPU context keeps freed device memory in a pool, so that the next batch
 * need not allocate again.  Give it back when the transaction ends, so that
 * an idle session does not sit on device memory other backends could use.
 */
static void
trim_at_xact_end(XactEvent event, void *arg)
{
	if (gpu_ctx == NULL)
		return;
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE)
		ght_ctx_trim(gpu_ctx);
}

const char *
gpuhash_device_name(ght_device dev)
{
	return dev == GHT_GPU ? "gpu" : "cpu";
}

static bool join_pending(void);

static void
probe_gpus(void)
{
	if (join_pending())
	{
		/* what the helper thread found */
		gpu_count = pending.count;
		strlcpy(gpu_why, pending.count_why, sizeof(gpu_why));
		elog(DEBUG1, "gpuhash: the helper thread found %d GPUs and made a context (%s) in %.3f ms",
			 pending.count, pending.ctx ? "yes" : "no", pending.made_ms);
	}
	else if (!gpu_probed)
	{
		gpu_why[0] = '\0';
		gpu_count = ght_gpu_count(gpu_why, sizeof(gpu_why));
	}
	else
		return;
	gpu_probed = true;
	gpu_usable = gpu_count > 0;
	if (!gpu_usable && gpu_why[0] == '\0')
		strlcpy(gpu_why, "no GPU was found", sizeof(gpu_why));
}

static ght_ctx *
cpu_context(void)
{
	if (cpu_ctx == NULL)
	{
		char		why[512] = "";
		ght_ctx    *ctx;
		ght_status	s;

		s = ght_ctx_create(GHT_CPU, 0, &ctx, why, sizeof(why));
		if (s != GHT_OK)
			report_status(s, "create a CPU context", why, "");
		ght_ctx_set_interrupt(ctx, interrupt_requested, NULL);
		cpu_ctx = ctx;
	}
	return cpu_ctx;
}

static void *
make_gpu_context(void *arg)
{
	PendingGpu *p = arg;
	instr_time	start;
	instr_time	end;

	INSTR_TIME_SET_CURRENT(start);
	p->count_why[0] = p->why[0] = '\0';
	p->ctx = NULL;
	p->status = GHT_ERR_NO_DEVICE;
	p->count = ght_gpu_count(p->count_why, sizeof(p->count_why));
	if (p->count > 0)
		p->status = ght_ctx_create(GHT_GPU, GPU_ID, &p->ctx, p->why, sizeof(p->why));
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);
	p->made_ms = INSTR_TIME_GET_MILLISEC(end);
	__atomic_store_n(&p->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Wait for the helper thread, if one runs; its results are then in pending. */
static bool
join_pending(void)
{
	if (!pending.running)
		return false;
	pthread_join(pending.thread, NULL);
	pending.running = false;
	return true;
}

/*
 * A process must not exit under a thread inside the CUDA driver; a context
 * the thread made and no one took goes with the process, as the backend's
 * own does.
 */
static void
join_pending_at_exit(int code, Datum arg)
{
	(void) join_pending();
}

/*
 * Start making this backend's GPU context in a helper thread, if it will be
 * wanted and is not there yet: a parallel plan's leader calls this before
 * its workers start, so that the tenths of a second a first context costs
 * pass while everyone reads the build side, instead of before the workers
 * are even launched (bench/NOTES.md, section 27).  The context is taken
 * (and the thread joined) by the first call that needs it; nothing here can
 * fail, and a thread that cannot start leaves that call to do the work.
 */
void
gpuhash_gpu_context_begin(void)
{
	sigset_t	all,
				old;
	int			rc;

	if (gpu_ctx != NULL || pending.running || gpu_probed ||
		gpuhash_device_setting == GPUHASH_DEVICE_CPU || !gpuhash_gpu_usable())
		return;
	if (!pending_exit_hook)
	{
		on_proc_exit(join_pending_at_exit, (Datum) 0);
		pending_exit_hook = true;
	}
	/* the thread must never run one of PostgreSQL's signal handlers */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pending.done = 0;
	INSTR_TIME_SET_CURRENT(pending.started);
	rc = pthread_create(&pending.thread, NULL, make_gpu_context, &pending);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pending.running = rc == 0;
}

/*
 * Whether a GPU is usable, and if so a fresh context in *ctx: what the
 * helper thread found when one was started, else found here.
 */
static ght_status
create_gpu_context(ght_ctx **ctx, char *why, size_t whylen)
{
	probe_gpus();
	if (!gpu_usable)
		return GHT_ERR_NO_DEVICE;
	if (pending.status == GHT_OK && pending.ctx != NULL)
	{
		*ctx = pending.ctx;
		pending.ctx = NULL;
		pending.status = GHT_ERR_NO_DEVICE;
		return GHT_OK;
	}
	if (pending.why[0] != '\0')
	{
		/* the thread's attempt failed: report its reason, not a second try's */
		strlcpy(why, pending.why, whylen);
		pending.why[0] = '\0';
		return pending.status;
	}
	return ght_ctx_create(GHT_GPU, GPU_ID, ctx, why, whylen);
}

/*
 * The GPU context, created on first use.  NULL when there is no usable GPU
 * and the caller can do without one; ERROR when it cannot.
 */
static ght_ctx *
gpu_context(bool required)
{
	char		why[512] = "";
	ght_ctx    *ctx;
	ght_status	s;

	if (gpu_ctx != NULL)
		return gpu_ctx;

	/* registered first: creating may fail, and then no context is orphaned */
	if (!trim_registered)
	{
		RegisterXactCallback(trim_at_xact_end, NULL);
		trim_registered = true;
	}
	s = create_gpu_context(&ctx, why, sizeof(why));
	if (s == GHT_OK)
	{
		ght_ctx_set_interrupt(ctx, interrupt_requested, NULL);
		gpu_ctx = ctx;
		return gpu_ctx;
	}
	if (gpu_usable)
	{
		/*
		 * A device that cannot give us a context will not give one on the
		 * next call either; a lack of memory may pass, so it is not
		 * remembered.
		 */
		if (s == GHT_ERR_NO_DEVICE || s == GHT_ERR_CUDA)
		{
			gpu_usable = false;
			strlcpy(gpu_why, why[0] ? why : ght_status_name(s), sizeof(gpu_why));
		}
		else if (required)
			report_status(s, "create a GPU context", why, "");
		else
		{
			elog(DEBUG1, "gpuhash: could not create a GPU context (%s), using the CPU",
				 why[0] ? why : ght_status_name(s));
			return NULL;
		}
	}

	if (required)
		report_no_gpu(gpu_why);
	elog(DEBUG1, "gpuhash: no usable GPU (%s), using the CPU", gpu_why);
	return NULL;
}

/*
 * Whether CUDA_VISIBLE_DEVICES leaves no device to the process: set but
 * empty, or naming a device number below zero first (CUDA then stops
 * reading the list).
 */
static bool
devices_hidden(void)
{
	const char *v = getenv("CUDA_VISIBLE_DEVICES");

	if (v == NULL)
		return false;
	while (*v == ' ')
		v++;
	return *v == '\0' || *v == '-' || *v == ',';
}

/*
 * Whether the NVIDIA driver's device nodes are there: what the driver needs
 * before it can show CUDA a GPU.  A stat of a few files, with no CUDA call.
 */
static bool
device_nodes_present(void)
{
	glob_t		g;
	bool		found;

	if (access("/dev/nvidiactl", F_OK) != 0)
		return false;
	found = glob("/dev/nvidia[0-9]*", GLOB_NOSORT, NULL, &g) == 0 && g.gl_pathc > 0;
	globfree(&g);
	return found;
}

/*
 * Whether a GPU is worth planning for, without the CUDA driver.  The planner
 * asks this of every join it considers, and initialising the driver to find
 * out cost every new backend about 190 ms of planning on the H100 host
 * (bench/NOTES.md, section 14), whether or not its plans ever used the GPU.
 * So planning looks only at what costs nothing: the build, the device nodes
 * and CUDA_VISIBLE_DEVICES, the same for every backend of the server.  The
 * driver is asked when a plan first runs on the GPU (its time shows as the
 * node's device setup); a backend that then found no usable GPU plans with
 * that knowledge from then on, and its plans already made run on the CPU.
 */
bool
gpuhash_gpu_usable(void)
{
	static int	likely = -1;

	if (gpu_probed)
		return gpu_usable;
	if (likely < 0)
		likely = ght_have_cuda() && !devices_hidden() && device_nodes_present();
	return likely;
}

/*
 * How long ago the helper thread started making this backend's GPU context,
 * if it is still at it; -1 when it is not (there is a context already, or
 * none is being made).
 */
double
gpuhash_gpu_context_pending_ms(void)
{
	instr_time	now;

	if (!pending.running || __atomic_load_n(&pending.done, __ATOMIC_ACQUIRE))
		return -1.0;
	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, pending.started);
	return INSTR_TIME_GET_MILLISEC(now);
}

/* Whether this backend has made its GPU context already. */
bool
gpuhash_gpu_context_ready(void)
{
	return gpu_ctx != NULL;
}

ght_ctx *
gpuhash_current_ctx(void)
{
	ght_ctx    *ctx = NULL;

	if (gpuhash_device_setting != GPUHASH_DEVICE_CPU)
		ctx = gpu_context(gpuhash_device_setting == GPUHASH_DEVICE_GPU);
	if (ctx == NULL)
		ctx = cpu_context();
	gpuhash_apply_settings(ctx);
	return ctx;
}

/* The CPU context whatever gpuhash.device says, with its settings applied. */
ght_ctx *
gpuhash_cpu_ctx(void)
{
	ght_ctx    *ctx = cpu_context();

	gpuhash_apply_settings(ctx);
	return ctx;
}

/*
 * Armed again at every call, so that an injected failure hits the n-th
 * allocation of each call, whatever earlier calls allocated.
 */
void
gpuhash_apply_settings(ght_ctx *ctx)
{
	ght_ctx_fail_alloc_after(ctx, (uint64) gpuhash_debug_fail_alloc_after);
	ght_ctx_set_device_limit(ctx, gpuhash_device_limit(ctx));
}

/*
 * The limit gpuhash.max_device_memory sets, in bytes; 0 for none.  Its
 * default leaves a tenth of the GPU's free memory to other users of the
 * device (other backends, the driver's own needs); the host's memory is
 * left to the operating system.
 */
uint64
gpuhash_device_limit(ght_ctx *ctx)
{
	ght_device_info info;
	char		why[256];

	if (gpuhash_max_device_memory > 0)
		return (uint64) gpuhash_max_device_memory * 1024 * 1024;
	if (ght_ctx_device(ctx) != GHT_GPU ||
		ght_gpu_info(GPU_ID, &info, why, sizeof(why)) != GHT_OK)
		return 0;
	return ght_ctx_device_bytes(ctx) + info.free_bytes / 10 * 9;
}

/* ---- errors -------------------------------------------------------------- */

static void
report_no_gpu(const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("no usable GPU for gpuhash"),
			 why[0] ? errdetail_internal("%s", why) : 0,
			 errhint("Set gpuhash.device to \"auto\" or \"cpu\" to use the CPU.")));
}

static void
report_status(ght_status status, const char *what, const char *detail,
			  const char *cuda_name)
{
	int			code;

	switch (status)
	{
		case GHT_ERR_INTERRUPTED:
			/* normally throws the cancel or termination error itself */
			CHECK_FOR_INTERRUPTS();
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("canceling statement due to user request")));
			break;
		case GHT_ERR_NO_DEVICE:
			report_no_gpu(detail);
			break;
		case GHT_ERR_CUDA:
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("could not %s: CUDA error", what),
					 errdetail_internal("%s%s%s",
										cuda_name[0] ? cuda_name : "unknown CUDA error",
										detail[0] ? ": " : "", detail)));
			break;
		default:
			break;
	}

	switch (status)
	{
		case GHT_ERR_HOST_NOMEM:
		case GHT_ERR_DEVICE_NOMEM:
			code = ERRCODE_OUT_OF_MEMORY;
			break;
		case GHT_ERR_MEM_LIMIT:
			ereport(ERROR,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("could not %s: it needs more than gpuhash.max_device_memory", what),
					 detail[0] ? errdetail_internal("%s", detail) : 0,
					 errhint("Raise gpuhash.max_device_memory.")));
			break;
		case GHT_ERR_BUILD_FAILED:
		case GHT_ERR_TOO_LARGE:
			code = ERRCODE_PROGRAM_LIMIT_EXCEEDED;
			break;
		case GHT_ERR_UNSUPPORTED:
			code = ERRCODE_FEATURE_NOT_SUPPORTED;
			break;
		case GHT_ERR_INVALID:
			code = ERRCODE_INVALID_PARAMETER_VALUE;
			break;
		default:
			code = ERRCODE_INTERNAL_ERROR;
			break;
	}
	ereport(ERROR,
			(errcode(code),
			 errmsg("could not %s: %s", what, ght_status_name(status)),
			 detail[0] ? errdetail_internal("%s", detail) : 0));
	pg_unreachable();
}

void
gpuhash_report(ght_ctx *ctx, ght_status status, const char *what)
{
	/* copies: the context's buffers may be overwritten while reporting */
	char		detail[512];
	char		cuda_name[64];

	strlcpy(detail, ctx ? ght_ctx_error_detail(ctx) : "", sizeof(detail));
	strlcpy(cuda_name, ctx ? ght_ctx_cuda_error_name(ctx) : "", sizeof(cuda_name));
	report_status(status, what, detail, cuda_name);
}

/* The same for a failure whose detail was kept apart from a context. */
void
gpuhash_report_detail(ght_status status, const char *what, const char *detail)
{
	char		copy[512];

	strlcpy(copy, detail ? detail : "", sizeof(copy));
	report_status(status, what, copy, "");
}

/* ---- SQL functions -------------------------------------------------------- */

PG_FUNCTION_INFO_V1(gpuhash_backend);
PG_FUNCTION_INFO_V1(gpuhash_devices);
PG_FUNCTION_INFO_V1(gpuhash_memory);

/*
 * Bytes of hash-table memory this session's contexts hold now: device memory
 * on the GPU, host memory on the CPU; named tables included, pinned staging
 * buffers not.  Creates no context.
 */
Datum
gpuhash_memory(PG_FUNCTION_ARGS)
{
	uint64		bytes = 0;

	if (cpu_ctx != NULL)
		bytes += ght_ctx_device_bytes(cpu_ctx);
	if (gpu_ctx != NULL)
		bytes += ght_ctx_device_bytes(gpu_ctx);
	PG_RETURN_INT64((int64) bytes);
}

/* What the current settings resolve to now: the device later calls will use. */
Datum
gpuhash_backend(PG_FUNCTION_ARGS)
{
	ght_ctx    *ctx = gpuhash_current_ctx();

	PG_RETURN_TEXT_P(cstring_to_text(gpuhash_device_name(ght_ctx_device(ctx))));
}

Datum
gpuhash_devices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	probe_gpus();

	for (int id = 0; id < gpu_count; id++)
	{
		ght_device_info info;
		char		why[512] = "";
		char		cc[32];
		Datum		values[6];
		bool		nulls[6] = {false};
		ght_status	s;

		s = ght_gpu_info(id, &info, why, sizeof(why));
		if (s != GHT_OK)
			report_status(s, "read GPU information", why, "");

		info.name[sizeof(info.name) - 1] = '\0';
		snprintf(cc, sizeof(cc), "%d.%d", info.cc_major, info.cc_minor);
		values[0] = Int32GetDatum(id);
		values[1] = CStringGetTextDatum(info.name);
		values[2] = Int64GetDatum((int64) info.total_bytes);
		values[3] = Int64GetDatum((int64) info.free_bytes);
		values[4] = CStringGetTextDatum(cc);
		values[5] = Int32GetDatum(info.multiprocessors);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
