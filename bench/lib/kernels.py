"""K: the core benchmark binary (build/kbench, `make bench-kernels`), GPU only.
Its CSV rows go into results.json; a summary into results.md; lookup
throughput against load factor into a plot."""
import csv
import glob
import os
import shutil
import subprocess
import time


def gpu_on_this_host():
    """(True, None) or (False, reason) without running CUDA."""
    if glob.glob("/dev/nvidia[0-9]*") or shutil.which("nvidia-smi"):
        return True, None
    return False, "no GPU on this host (no /dev/nvidia* device, no nvidia-smi)"


def run_kbench(repo, outdir, args, log, timeout):
    """Returns a dict: status ('ok', 'skipped', 'failed'), reason, csv, rows,
    device line, seconds."""
    out = {"status": None, "reason": None, "args": args, "csv": None, "rows": [],
           "device": None, "seconds": None}
    ok, why = gpu_on_this_host()
    if not ok:
        out.update(status="skipped", reason=why)
        return out
    log("K: make bench-kernels")
    blog = os.path.join(outdir, "kbench-build.log")
    with open(blog, "w") as f:
        p = subprocess.run(["make", "-C", repo, "bench-kernels"], stdout=f, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        with open(blog) as f:
            tail = [l.strip() for l in f.readlines() if l.strip()][-1:]
        out.update(status="skipped",
                   reason="make bench-kernels failed (%s; see kbench-build.log)" % " ".join(tail))
        return out
    csv_path = os.path.join(outdir, "kbench.csv")
    cmd = [os.path.join(repo, "build", "kbench")] + args + ["--csv", csv_path]
    log("K: " + " ".join(cmd))
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        out.update(status="failed", reason="kbench timed out after %d s" % timeout,
                   seconds=round(time.time() - t0, 3))
        keep_partial(out, csv_path)
        return out
    out["seconds"] = round(time.time() - t0, 3)
    with open(os.path.join(outdir, "kbench.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
        if p.returncode == 1 and "no GPU" in p.stderr:
            out.update(status="skipped", reason=msg)
        else:
            out.update(status="failed", reason="kbench exited %d: %s" % (p.returncode, msg))
            keep_partial(out, csv_path)
        return out
    for line in p.stdout.splitlines():
        if line.startswith("device:"):
            out["device"] = line[len("device:"):].strip()
    out["csv"] = "kbench.csv"
    out["rows"] = read_csv(csv_path)
    out["status"] = "ok" if out["rows"] else "failed"
    if not out["rows"]:
        out["reason"] = "kbench wrote no rows"
    return out


def keep_partial(out, csv_path):
    """A failed run keeps the rows it wrote (kbench flushes each row)."""
    try:
        out["rows"] = read_csv(csv_path)
    except (OSError, ValueError, KeyError):
        out["rows"] = []
    if out["rows"]:
        out["csv"] = "kbench.csv"
        out["reason"] += " (%d rows written before that are kept)" % len(out["rows"])


def read_csv(path):
    with open(path) as f:
        return parse_csv(f.read())


def parse_csv(text):
    rows = []
    lines = [l for l in text.splitlines() if l.strip() and not l.startswith("#")]
    for r in csv.DictReader(lines):
        for k in ("key_bits", "log2_slots", "hit_pct", "build_attempts"):
            r[k] = int(r[k])
        for k in ("load", "gkeys_per_s", "bw_fraction", "bytes_per_key", "mean_probes"):
            r[k] = float(r[k])
        rows.append(r)
    return rows


def summary(rows):
    """Build and lookup (hit 100 %) G keys/s per method and key width at the
    largest table size measured, by load factor (as built)."""
    if not rows:
        return None
    big = max(r["log2_slots"] for r in rows)
    loads = sorted({r["load"] for r in rows if r["log2_slots"] == big})
    table = {}
    for r in rows:
        if r["log2_slots"] != big or (r["op"] == "lookup" and r["hit_pct"] != 100):
            continue
        key = ("%s k%d" % (r["method"], r["key_bits"]), r["op"], r["hit_pct"])
        table.setdefault(key, {})[r["load"]] = r["gkeys_per_s"]
    return {"log2_slots": big, "loads": loads,
            "table": [{"method": m, "op": op, "hit_pct": hit, "gkeys_per_s_by_load": v}
                      for (m, op, hit), v in sorted(table.items())]}
