"""results.md (the same text is printed at the end) and the PNG plots."""
import os

from pgutil import short_error


def fmt_s(x):
    if x is None:
        return "-"
    if x >= 100:
        return "%.1f" % x
    if x >= 1:
        return "%.3f" % x
    return "%.4f" % x


def fmt_x(x):
    return "-" if x is None else "%.2fx" % x


def plan_text(r):
    plan = r.get("plan") or {}
    p = ", ".join(plan.get("joins") or []) or (plan.get("nodes") or [""])[-1]
    if r.get("query_kind") == "native" and plan and "workers_planned" in plan:
        p += "; workers %s/%s" % (plan["workers_planned"], plan["workers_launched"])
    if plan.get("jit"):
        p += "; JIT"
    return p


def sql_results(doc):
    return [r for r in doc["results"] if not r["workload"].startswith("K")]


def results_table(doc):
    lines = ["| workload | engine | seconds (median) | runs (s) | rows | correct | vs native_serial "
             "| vs native_parallel | plan (workers planned/launched) | note |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sql_results(doc):
        note = r.get("error") or r.get("reason") or ""
        if r.get("skipped"):
            note = "skipped: " + short_error(note)
        correct = "-" if r.get("correct") is None else ("yes" if r["correct"] else "**NO**")
        runs = " ".join(fmt_s(t) for t in r.get("runs_seconds") or [])
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["workload"], r["engine"], fmt_s(r.get("seconds")), runs or "-",
            "-" if r.get("rows") is None else "{:,}".format(r["rows"]), correct,
            fmt_x(r.get("speedup_vs_native_serial")), fmt_x(r.get("speedup_vs_native_parallel")),
            plan_text(r).replace("|", "/"), note.replace("|", "/").replace("\n", " ")))
    return "\n".join(lines)


def skipped_text(doc):
    seen = {}
    for r in sql_results(doc):
        if r.get("skipped"):
            seen.setdefault(r["engine"], r.get("reason"))
    return ["- %s skipped: %s" % kv for kv in seen.items()]


def kernel_table(k):
    if k is None:
        return "K (kernel benchmark): not requested."
    s = k.get("summary")
    if not s:
        return "K (kernel benchmark): %s: %s" % (k["status"], k["reason"] or "no rows")
    lines = [] if k["status"] == "ok" else ["K (kernel benchmark): %s: %s" % (
        k["status"], k["reason"]), ""]
    lines += ["K (kernel benchmark, `build/kbench %s`, %s): G keys/s in tables of 2^%d slots, by load factor; "
             "all %d rows are in kbench.csv" % (
                 " ".join(k["args"] + ["--csv", "kbench.csv"]), k.get("device") or "?",
                 s["log2_slots"], len(k["rows"])), "",
             "| method | op | " + " | ".join("load %.2f" % l for l in s["loads"]) + " |",
             "|---|---|" + "---|" * len(s["loads"])]
    for t in s["table"]:
        opname = "lookup hit %d%%" % t["hit_pct"] if t["op"] == "lookup" else t["op"]
        by = t["gkeys_per_s_by_load"]
        lines.append("| %s | %s | %s |" % (t["method"], opname, " | ".join(
            "%.2f" % by[l] if l in by else "-" for l in s["loads"])))
    return "\n".join(lines)


def markdown(doc):
    h = doc["host"]
    run = doc["run"]
    gpus = ", ".join(g["name"] for g in h.get("gpus") or [])
    out = ["# gpuhash SQL benchmark: scale %s" % run["scale"], "",
           "- started %s, took %.1f s; data %s in schema %s" % (
               run["started"], run["wall_seconds"], run["data"].get("status"),
               run["data"].get("schema")),
           "- host: %s; %s cores; %.1f GiB RAM; GPU: %s" % (
               h.get("cpu_model"), h.get("cores"), (h.get("memory_bytes") or 0) / 2**30,
               gpus or "none (%s)" % short_error(h.get("gpu_reason") or "no devices")),
           "- server: %s; %s" % (h.get("postgresql_version", "").split(",")[0], h.get("server")),
           "- server settings: " + ", ".join("%s=%s" % kv for kv in sorted(
               (h.get("settings") or {}).items())),
           "- every engine's session: " + (", ".join(
               "%s=%s" % kv for kv in sorted(run.get("common_settings", {}).items())) or "-"),
           "- seconds: median of %d runs after one warm-up (EXPLAIN (ANALYZE, TIMING OFF) of the "
           "query), timed by psql \\timing on the client; speedup = that native engine's seconds / "
           "this engine's seconds" % run["runs"],
           "", results_table(doc), ""]
    out += skipped_text(doc)
    out += ["", kernel_table(doc.get("kernels")), ""]
    if doc.get("plots"):
        out.append("Plots: " + ", ".join(doc["plots"]))
    if doc.get("plot_error"):
        out.append("Plots: not written (%s)" % doc["plot_error"])
    fails = doc.get("failures") or []
    out.append("")
    out.append("Failures: " + ("; ".join(fails) if fails else "none"))
    return "\n".join(out) + "\n"


def plots(doc, outdir):
    """Writes the PNGs and returns their names.  ImportError without matplotlib."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, NullLocator

    written = []
    res = sql_results(doc)
    workloads = list(dict.fromkeys(r["workload"] for r in res))
    all_engines = list(dict.fromkeys(r["engine"] for r in res))
    colour = {e: "C%d" % i for i, e in enumerate(all_engines)}
    title = "gpuhash SQL benchmark, scale %s (%s, %s cores; GPU: %s)" % (
        doc["run"]["scale"], doc["host"].get("cpu_model"), doc["host"].get("cores"),
        ", ".join(g["name"] for g in doc["host"].get("gpus") or []) or "none")

    def rec(w, e):
        return next((r for r in res if r["workload"] == w and r["engine"] == e), None)

    def bars(ax, engines, value, label_fmt):
        width = 0.8 / max(1, len(engines))
        ys_all = []
        for i, e in enumerate(engines):
            xs, ys = [], []
            for j, w in enumerate(workloads):
                r = rec(w, e)
                v = value(r) if r else None
                if v:
                    xs.append(j + (i - (len(engines) - 1) / 2) * width)
                    ys.append(v)
            skipped = all(not rec(w, e) or rec(w, e).get("skipped") for w in workloads)
            if xs:
                b = ax.bar(xs, ys, width, label=e, color=colour[e])
                ax.bar_label(b, labels=[label_fmt % y for y in ys], fontsize=7)
                ys_all += ys
            else:
                ax.bar([0], [0], 0, label="%s (%s)" % (e, "skipped" if skipped else "no result"),
                       color="none", edgecolor=colour[e], hatch="//")
        ax.set_xticks(range(len(workloads)))
        ax.set_xticklabels([w.replace("_", "\n", 1) for w in workloads], fontsize=8)
        ax.set_yscale("log")
        if ys_all:
            ax.set_ylim(min(ys_all + [1.0]) / 2, max(ys_all + [1.0]) * 2)
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.legend(fontsize=7)
        ax.grid(axis="y", alpha=0.3)

    # speedup against each native plan
    refs = [b for b in ("native_serial", "native_parallel") if b in all_engines]
    fig, axes = plt.subplots(1, len(refs), figsize=(6.5 * len(refs), 4.8), squeeze=False)
    for ax, ref in zip(axes[0], refs):
        shown = [e for e in all_engines if e not in ("native_serial", ref)]
        bars(ax, shown, lambda r, ref=ref: r.get("speedup_vs_" + ref), "%.2f")
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: "%gx" % y))
        ax.set_ylabel("speedup (%s seconds / engine seconds)" % ref, fontsize=8)
        ax.set_title("speedup against %s" % ref, fontsize=10)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "speedup.png"), dpi=120)
    plt.close(fig)
    written.append("speedup.png")

    # median seconds of every engine
    fig, ax = plt.subplots(figsize=(9, 4.8))
    bars(ax, all_engines, lambda r: r.get("seconds") if r.get("correct") else None, "%.3g")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: "%g" % y))
    ax.set_ylabel("seconds (median, client side)")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "seconds.png"), dpi=120)
    plt.close(fig)
    written.append("seconds.png")

    if kernel_plot(doc.get("kernels"), outdir):
        written.append("kernel_throughput.png")
    return written


def kernel_plot(k, outdir):
    """kernel_throughput.png: lookup G keys/s against load factor for each
    method at the largest table size, one panel per hit rate.  False when
    there are no lookup rows.  ImportError without matplotlib."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if k and k.get("rows") and any(r["op"] == "lookup" for r in k["rows"]):
        rows = [r for r in k["rows"] if r["op"] == "lookup"]
        big = max(r["log2_slots"] for r in rows)
        hits = sorted({r["hit_pct"] for r in rows}, reverse=True)
        series = sorted({(r["method"], r["key_bits"]) for r in rows})
        fig, axes = plt.subplots(1, len(hits), figsize=(5 * len(hits), 4.2), squeeze=False,
                                 sharey=True)
        for ax, hit in zip(axes[0], hits):
            for i, (m, kb) in enumerate(series):
                pts = sorted((r["load"], r["gkeys_per_s"]) for r in rows
                             if r["method"] == m and r["key_bits"] == kb and r["hit_pct"] == hit
                             and r["log2_slots"] == big)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                            color="C%d" % i, ls="-" if kb == 32 else "--",
                            label="%s k%d" % (m, kb))
            ax.set_xlabel("load factor (as built)")
            ax.set_title("lookup, hit %d %%, 2^%d slots" % (hit, big), fontsize=10)
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("G keys/s")
        axes[0][-1].legend(fontsize=7)
        fig.suptitle("build/kbench %s on %s" % (" ".join(k["args"]), k.get("device") or "?"),
                     fontsize=9)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "kernel_throughput.png"), dpi=120)
        plt.close(fig)
        return True
    return False
