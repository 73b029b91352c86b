"""Running one workload on one engine: a single psql session that applies the
engine's settings, warms up with EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON)
of the query (it runs the query in full and records the plan, e.g. planned
and launched parallel workers), then runs the query N times under psql's
\\timing (client side, around each query; nothing subtracted)."""
import json
import re
import statistics
import subprocess
import time

from pgutil import SQLError, first_error

# settings recorded for every result, read inside the timed session
SETTINGS = ["work_mem", "hash_mem_multiplier", "shared_buffers", "effective_cache_size",
            "max_parallel_workers_per_gather", "max_parallel_workers", "max_worker_processes",
            "parallel_setup_cost", "parallel_tuple_cost", "min_parallel_table_scan_size", "jit",
            "enable_hashjoin", "enable_mergejoin", "enable_nestloop",
            "gpuhash.device", "gpuhash.batch_rows", "gpuhash.enable_join"]

TIME_RE = re.compile(r"^Time: ([0-9.]+) ms")


def session_prelude(search_path, common, engine_settings):
    lines = ["SET client_min_messages = warning;", "SET search_path = %s;" % search_path]
    for k, v in list(common.items()) + list(engine_settings.items()):
        lines.append("SET %s = '%s';" % (k, v))
    return "\n".join(lines) + "\n"


def check_engine(psql, engine, prelude, timeout=120):
    """None when usable, else the reason it is not."""
    if not engine.check:
        return None
    try:
        out = psql.run(prelude + engine.check + ";\n", timeout=timeout).strip()
    except SQLError as e:
        return str(e)
    except subprocess.TimeoutExpired:
        return "check timed out"
    if out != "t":
        return "%s returned %r" % (engine.check, out)
    return None


def settings_query():
    return ("SELECT json_object_agg(n, current_setting(n, true)) FROM unnest(ARRAY[%s]) n;"
            % ", ".join("'%s'" % s for s in SETTINGS))


def plan_summary(explain_json):
    """Join nodes, parallel workers and JIT use from EXPLAIN (FORMAT JSON)."""
    try:
        doc = json.loads(explain_json)[0]
    except (ValueError, IndexError, KeyError):
        return {"error": "could not parse EXPLAIN output"}
    joins, planned, launched, nodes = [], 0, 0, []

    def walk(n):
        nonlocal planned, launched
        nt = n.get("Node Type", "?")
        label = nt
        if n.get("Parallel Aware"):
            label = "Parallel " + label
        if "Join Type" in n and nt.endswith(("Join", "Loop")):
            label += " (%s)" % n["Join Type"]
            joins.append(label)
        if nt == "Custom Scan":
            label += " %s" % n.get("Custom Plan Provider", "")
            if "Join Type" in n:
                label += " (%s)" % n["Join Type"]
                joins.append(label)
        if nt in ("Function Scan",):
            label += " %s" % n.get("Function Name", "")
        if nt in ("Gather", "Gather Merge"):
            planned += n.get("Workers Planned", 0)
            launched += n.get("Workers Launched", 0)
            label += " (%s/%s workers)" % (n.get("Workers Planned"), n.get("Workers Launched"))
        nodes.append(label)
        for c in n.get("Plans", []):
            walk(c)

    walk(doc["Plan"])
    out = {"nodes": nodes, "joins": joins, "workers_planned": planned,
           "workers_launched": launched, "jit": "JIT" in doc,
           "warmup_execution_ms": doc.get("Execution Time")}
    if "JIT" in doc:
        out["jit_functions"] = doc["JIT"].get("Functions")
    return out


def run_workload(psql, prelude, query, runs, timeout):
    """Returns dict: times (s), results (list of 'count|sum'), plan, settings,
    error (None or text)."""
    script = [prelude, "\\echo @@WARMUP",
              "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) %s;" % query,
              "\\echo @@SETTINGS", settings_query(), "\\timing on"]
    for _ in range(runs):
        script += ["\\echo @@RUN", query + ";"]
    script += ["\\timing off", "\\echo @@END", ""]
    res = {"times": [], "results": [], "plan": None, "settings": None, "error": None}
    t0 = time.time()
    try:
        p = subprocess.run(psql.argv(), input="\n".join(script), capture_output=True,
                           text=True, env=psql.env, timeout=timeout)
        stdout, stderr, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr, rc = "timed out after %d s" % timeout, -1
    res["session_seconds"] = round(time.time() - t0, 3)
    section, buf = None, {"WARMUP": [], "SETTINGS": []}
    run_lines = []
    for line in stdout.splitlines():
        if line.startswith("@@"):
            section = line[2:]
            if section == "RUN":
                run_lines.append([])
            continue
        if section == "RUN":
            run_lines[-1].append(line)
        elif section in buf:
            buf[section].append(line)
    if buf["WARMUP"]:
        res["plan"] = plan_summary("\n".join(buf["WARMUP"]))
    if buf["SETTINGS"]:
        try:
            res["settings"] = json.loads("\n".join(buf["SETTINGS"]).strip())
        except ValueError:
            pass
    for lines in run_lines:
        t = [float(m.group(1)) / 1000 for m in map(TIME_RE.match, lines) if m]
        vals = [l for l in lines if l and not TIME_RE.match(l)]
        if t:
            res["times"].append(t[0])
            res["results"].append("\n".join(vals))
    if rc != 0:
        res["error"] = first_error(stderr) if rc != -1 else stderr
        if not res["error"]:
            res["error"] = "psql exited %d" % rc
    elif len(res["times"]) != runs:
        res["error"] = "expected %d timed runs, parsed %d" % (runs, len(res["times"]))
    return res


def median(xs):
    return statistics.median(xs) if xs else None
