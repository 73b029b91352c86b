"""bench/run: the SQL-level benchmark of gpuhash.  See bench/README.md."""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time

import data
import kernels
import report
import runner
from pgutil import Psql, SQLError, ThrowawayCluster, find_pg_config, pg_bindir
from workloads import ENGINES, FULL_SCALE_OPT_IN, NAMED_ONLY, REFERENCE, WORKLOADS

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
T0 = time.time()


def log(msg):
    print("[%6.1fs] %s" % (time.time() - T0, msg), flush=True)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="bench/run",
        description="SQL-level benchmark of gpuhash: every workload natively and through "
                    "gpu_hash_join, answers checked, results.json/results.md/PNGs written.")
    ap.add_argument("--scale", choices=sorted(data.SCALES), required=True)
    ap.add_argument("--out", required=True, help="output directory (created)")
    ap.add_argument("--keep-data", action="store_true",
                    help="leave the generated tables (schema gpuhash_bench_SCALE) in the server "
                         "afterwards; a later run reuses them when marker and row counts match")
    ap.add_argument("--require-plots", action="store_true",
                    help="exit non-zero when the plots cannot be written (no matplotlib)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs after the warm-up (>= 3)")
    ap.add_argument("--engines", default="",
                    help="comma list of engines (default all: %s)" % ",".join(e.name for e in ENGINES))
    ap.add_argument("--workloads", default="",
                    help="comma list of workload names or tags (W1,...,W9,K); default all")
    ap.add_argument("--cores", type=int, default=0,
                    help="cores for native_parallel and the data load (default: this host's)")
    ap.add_argument("--loaders", type=int, default=0,
                    help="concurrent psql sessions loading data (default: cores, at most 16)")
    ap.add_argument("--work-mem", default="256MB",
                    help="work_mem SET in every engine's session ('' keeps the server's)")
    ap.add_argument("--set", action="append", default=[], metavar="[ENGINE:]NAME=VALUE",
                    help="extra setting for every engine's session, or for one engine's "
                         "(repeatable), e.g. gpuhash.batch_rows=4194304 or "
                         "native_parallel:min_parallel_table_scan_size=0")
    ap.add_argument("--kbench-args", default=None,
                    help="arguments of build/kbench (default: --quick; at full scale "
                         "--quick --min-log2 20 --max-log2 26)")
    ap.add_argument("--timeout", type=int, default=0,
                    help="seconds allowed per workload/engine session (default by scale)")
    ap.add_argument("--build", action="store_true",
                    help="run make and make install in the repository first")
    a = ap.parse_args(argv)
    if a.runs < 3:
        ap.error("--runs must be at least 3")
    return a


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def mem_bytes():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def nvidia_smi():
    if not shutil.which("nvidia-smi"):
        return None
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        return [l.strip() for l in p.stdout.splitlines() if l.strip()] or None
    except (OSError, subprocess.TimeoutExpired):
        return None


def git_state():
    try:
        head = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        st = subprocess.run(["git", "-C", REPO, "status", "--porcelain"], capture_output=True,
                            text=True).stdout.splitlines()
        return {"commit": head or None, "changed_files": len(st),
                "note": "the working tree differs from the commit" if st else "clean"}
    except OSError:
        return None


def server_opts(cores, mem):
    sb_mb = max(128, min(16384, (mem or 2**31) // 4 // 2**20))
    opts = ["-c max_worker_processes=%d" % max(8, cores + 4),
            "-c max_parallel_workers=%d" % cores,
            "-c shared_buffers=%dMB" % sb_mb,
            "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off",
            "-c max_wal_size=8GB", "-c checkpoint_timeout=30min"]
    extra = os.environ.get("GPUHASH_PGOPTS", "")
    return " ".join(opts + ([extra] if extra else []))


def engine_settings(e, cores, per_engine):
    s = e.resolved_settings(cores)
    s.update(per_engine.get(e.name, {}))
    return s


def build(log_dir):
    for cmd in (["make", "-C", REPO, "-j%d" % usable_cores()], ["make", "-C", REPO, "install"]):
        log(" ".join(cmd))
        with open(os.path.join(log_dir, "build.log"), "a") as f:
            if subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode != 0:
                raise SystemExit("%s failed; see %s/build.log" % (" ".join(cmd), log_dir))


def reference_engine(engines):
    """Answers are checked against native_serial, or, when it is not run (it
    takes minutes a query at full scale), the first native engine that is."""
    natives = [e.name for e in engines if e.sql == "native" and not e.prelude]
    if not natives:
        raise SystemExit("choose at least one native engine: answers are checked against it")
    return REFERENCE if REFERENCE in natives else natives[0]


def main(argv):
    a = parse_args(argv)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    cores = a.cores or usable_cores()
    loaders = a.loaders or max(1, min(cores, 16))
    timeout = a.timeout or {"tiny": 300, "small": 1800, "full": 3600}[a.scale]
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    if a.build:
        build(out)

    want_e = [x.strip() for x in a.engines.split(",") if x.strip()]
    if not want_e and a.scale == "full":
        # one query of a single-core engine reads 100 M rows for minutes: the
        # default full run keeps to the engines that fit the 10-minute budget
        want_e = [e.name for e in ENGINES if e.name not in FULL_SCALE_OPT_IN | NAMED_ONLY]
        log("full scale: engines %s by default (%s only when named with --engines)"
            % (", ".join(want_e), ", ".join(sorted(FULL_SCALE_OPT_IN))))
    engines = [e for e in ENGINES if e.name in want_e or (not want_e and e.name not in NAMED_ONLY)]
    unknown = set(want_e) - {e.name for e in ENGINES}
    if unknown:
        raise SystemExit("unknown engine(s): %s" % ", ".join(sorted(unknown)))
    reference = reference_engine(engines)
    # the reference first, so its answer exists before the others run
    engines.sort(key=lambda e: (e.name != reference, e.sql != "native" or bool(e.prelude)))
    want_w = [x.strip() for x in a.workloads.split(",") if x.strip()]
    workloads = [w for w in WORKLOADS
                 if not want_w or any(w.name == x or w.name.startswith(x + "_") for x in want_w)]
    run_k = not want_w or "K" in want_w

    bindir = pg_bindir(find_pg_config())
    cluster = None
    if os.environ.get("PGHOST"):
        psql = Psql(bindir)
        server = "PGHOST=%s PGPORT=%s PGDATABASE=%s" % (
            os.environ["PGHOST"], os.environ.get("PGPORT", "5432"), os.environ.get("PGDATABASE", ""))
        log("using the server at " + server)
    else:
        opts = server_opts(cores, mem_bytes())
        cluster = ThrowawayCluster(bindir, opts, log)
        psql = Psql(bindir, cluster.env())
        server = "throwaway cluster (%s)" % opts
        log("throwaway cluster up: %s, port %d" % (cluster.dir, cluster.port))
        if a.keep_data:
            log("note: --keep-data has no lasting effect: the throwaway cluster is removed at exit")
    try:
        return bench(a, psql, server, cluster, out, cores, loaders, timeout, started, engines,
                     workloads, run_k)
    finally:
        if cluster:
            cluster.stop()
            log("throwaway cluster stopped and removed")


def bench(a, psql, server, cluster, out, cores, loaders, timeout, started, engines, workloads,
          run_k):
    schema = "gpuhash_bench_%s" % a.scale
    reference = reference_engine(engines)
    try:
        psql.run("SELECT 1;")
    except SQLError as e:
        raise SystemExit("cannot connect to the server: %s" % e)
    try:
        psql.run("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS gpuhash;")
    except SQLError as e:
        raise SystemExit("CREATE EXTENSION gpuhash failed: %s\n(build and install it first: "
                         "make && make install from the repository root, or bench/run --build)" % e)
    ext_schema, ext_version = psql.rows(
        "SELECT quote_ident(extnamespace::regnamespace::text), extversion "
        "FROM pg_extension WHERE extname = 'gpuhash'")[0]
    search_path = "%s, %s" % (schema, ext_schema)

    # host record
    srv = dict(r for r in psql.rows(
        "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(ARRAY[%s])"
        % ", ".join("'%s'" % s for s in runner.SETTINGS + ["server_version", "max_connections",
                                                           "dynamic_shared_memory_type"])))
    host = {
        "cpu_model": cpu_model(), "cores": cores, "logical_cpus": os.cpu_count(),
        "memory_bytes": mem_bytes(), "os": platform.platform(),
        "postgresql_version": psql.value("SELECT version()").strip(),
        "server": server, "settings": srv, "gpuhash_version": ext_version,
        "git": git_state(), "nvidia_smi": nvidia_smi(), "gpus": [], "gpu_reason": None,
    }
    for r in psql.rows("SELECT id, name, total_bytes, compute_capability, multiprocessors "
                       "FROM gpuhash_devices()"):
        host["gpus"].append({"id": int(r[0]), "name": r[1], "total_bytes": int(r[2]),
                             "compute_capability": r[3], "multiprocessors": int(r[4])})
    log("host: %s, %d cores, %.1f GiB; %s; GPUs: %s" % (
        host["cpu_model"], cores, (host["memory_bytes"] or 0) / 2**30,
        host["postgresql_version"].split(",")[0],
        ", ".join(g["name"] for g in host["gpus"]) or "none"))

    # data
    t = time.time()
    if data.existing_data_ok(psql, schema, a.scale, log):
        log("reusing the data in schema %s (marker and row counts match)" % schema)
        data_rec = {"status": "reused", "schema": schema}
    else:
        data_rec = {"status": "generated", "schema": schema}
        data_rec.update(data.generate(psql, schema, a.scale, loaders, log))
        log("data generated in %.1f s (load %.1f s, VACUUM ANALYZE %.1f s)" % (
            data_rec["total_seconds"], data_rec["load_seconds"], data_rec["vacuum_analyze_seconds"]))
    data_rec["check_or_load_seconds"] = round(time.time() - t, 3)
    data_rec["loaders"] = loaders
    data_rec["tables"] = data.table_info(psql, schema, a.scale)
    data_rec["sizes"] = data.SCALES[a.scale]

    common, per_engine = {}, {}
    if a.work_mem:
        common["work_mem"] = a.work_mem
    for kv in a.set:
        k, _, v = kv.partition("=")
        eng, _, name = k.strip().rpartition(":")
        if eng:
            per_engine.setdefault(eng, {})[name] = v.strip()
        else:
            common[name] = v.strip()

    # which engines can run here
    skip = {}
    for e in engines:
        why = runner.check_engine(psql, e, e.prelude + runner.session_prelude(
            search_path, common, engine_settings(e, cores, per_engine)))
        if why:
            skip[e.name] = why
            log("engine %s skipped: %s" % (e.name, why))
    if skip.get("gpuhash_gpu") and not host["gpus"]:
        host["gpu_reason"] = skip["gpuhash_gpu"]

    results, failures = [], []
    for w in workloads:
        ref = None
        for e in engines:
            rec = {"workload": w.name, "engine": e.name, "query_kind": e.sql, "query": w.sql[e.sql],
                   "seconds": None, "runs_seconds": None, "rows": None, "result": None,
                   "correct": None, "skipped": False, "reason": None, "error": None,
                   "engine_settings": engine_settings(e, cores, per_engine),
                   "common_settings": common,
                   "settings": None, "plan": None, "warmup": "EXPLAIN (ANALYZE, TIMING OFF)",
                   "timing": "psql \\timing, client side", "runs": a.runs}
            results.append(rec)
            if e.name in skip:
                rec.update(skipped=True, reason=skip[e.name])
                continue
            prelude = e.prelude + runner.session_prelude(search_path, common, rec["engine_settings"])
            r = runner.run_workload(psql, prelude, w.sql[e.sql], a.runs, timeout)
            rec.update(settings=r["settings"], plan=r["plan"], error=r["error"],
                       session_seconds=r["session_seconds"])
            if r["times"]:
                rec["runs_seconds"] = [round(x, 6) for x in r["times"]]
                rec["seconds"] = round(runner.median(r["times"]), 6)
            if r["results"]:
                rec["result"] = r["results"][0].split("|")
                try:
                    rec["rows"] = int(rec["result"][0])
                except ValueError:
                    pass
            consistent = len(set(r["results"])) == 1
            if r["error"]:
                rec["correct"] = False
                failures.append("%s/%s: %s" % (w.name, e.name, r["error"]))
            elif not consistent:
                rec["correct"] = False
                rec["reason"] = "runs returned different answers: %s" % r["results"]
                failures.append("%s/%s: %s" % (w.name, e.name, rec["reason"]))
            elif e.name == reference:
                ref = rec["result"]
                rec["correct"] = True
                rec["reference"] = True
            elif ref is None:
                rec["correct"] = False
                rec["reason"] = "no reference answer (%s failed)" % reference
                failures.append("%s/%s: %s" % (w.name, e.name, rec["reason"]))
            else:
                rec["reference_result"] = ref
                rec["correct"] = rec["result"] == ref
                if not rec["correct"]:
                    rec["reason"] = "answer %s differs from %s's %s" % (
                        "|".join(rec["result"] or []), reference, "|".join(ref))
                    failures.append("%s/%s: answer %s, %s says %s" % (
                        w.name, e.name, rec["result"], reference, ref))
            log("%-20s %-16s %s s (runs %s) rows %s %s" % (
                w.name, e.name, report.fmt_s(rec["seconds"]),
                " ".join(report.fmt_s(x) for x in rec["runs_seconds"] or []), rec["rows"],
                "OK" if rec["correct"] else "FAILED: %s" % (rec["error"] or rec["reason"] or
                                                           "answer differs")))
        # so that a run stopped from outside still leaves what it measured
        with open(os.path.join(out, "results.partial.json"), "w") as f:
            json.dump({"results": results, "failures": failures, "reference": reference}, f, indent=1)
        # speedups against the native plans, for every engine of this workload
        for base in ("native_serial", "native_parallel"):
            b = next((x for x in results if x["workload"] == w.name and x["engine"] == base), None)
            for x in results:
                if x["workload"] == w.name:
                    x["speedup_vs_" + base] = (round(b["seconds"] / x["seconds"], 4)
                                               if b and b["seconds"] and x["seconds"]
                                               and x["correct"] else None)

    # K: the kernel benchmark
    kern = None
    if run_k:
        kargs = a.kbench_args.split() if a.kbench_args is not None else (
            ["--quick", "--min-log2", "20", "--max-log2", "26"] if a.scale == "full"
            else ["--quick"])
        kern = kernels.run_kbench(REPO, out, kargs, log, timeout)
        kern["summary"] = kernels.summary(kern["rows"])
        krec = {"workload": "K_kernel", "engine": "kbench", "seconds": kern["seconds"],
                "rows": len(kern["rows"]) or None, "correct": None,
                "skipped": kern["status"] == "skipped", "reason": kern["reason"],
                "settings": {"args": kargs}}
        results.append(krec)
        if kern["status"] == "failed":
            failures.append("K: %s" % kern["reason"])
        log("K: %s%s" % (kern["status"], (": " + kern["reason"]) if kern["reason"] else ""))

    if not a.keep_data:
        psql.run("SET client_min_messages = warning; DROP SCHEMA IF EXISTS %s CASCADE;" % schema)
        data_rec["dropped_at_end"] = True

    doc = {
        "run": {"scale": a.scale, "started": started, "runs": a.runs, "cores": cores,
                "engines": [e.name for e in engines], "workloads": [w.name for w in workloads],
                "reference_engine": reference,
                "argv": sys.argv[1:], "common_settings": common, "data": data_rec},
        "host": host, "results": results, "kernels": kern, "failures": failures,
    }
    doc["run"]["wall_seconds"] = round(time.time() - T0, 3)
    plot_files, plot_error = [], None
    try:
        plot_files = report.plots(doc, out)
    except ImportError as e:
        plot_error = "matplotlib is not installed (%s); on Debian: apt-get install -y " \
                     "python3-matplotlib" % e
        print("bench/run: %s: no plots written" % plot_error, file=sys.stderr)
    doc["plots"] = plot_files
    doc["plot_error"] = plot_error
    if plot_error and a.require_plots:
        failures.append("plots: " + plot_error)
    doc["run"]["wall_seconds"] = round(time.time() - T0, 3)
    md = report.markdown(doc)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(md)
    print()
    print(md)
    log("wrote %s" % ", ".join(os.path.join(out, x) for x in
                                ["results.json", "results.md"] + plot_files))
    if failures:
        log("FAILED: %d problem(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main(sys.argv[1:]))
