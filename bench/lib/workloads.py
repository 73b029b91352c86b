"""Workloads (the same question asked natively and through gpu_hash_join) and
engines (how a workload's SQL is run).

Each workload has a native query and a gpuhash query that return one row,
count and sum, so that answers compare cheaply; the joins themselves still
produce every row.  An engine names which of the two queries it runs and the
settings it runs them under; the planner engines run the native SQL in a session
that has loaded gpuhash, so that the planner may pick its GpuHashJoin.
"""


class Workload:
    def __init__(self, name, title, tables, native, gpuhash):
        self.name = name
        self.title = title
        self.tables = tables
        self.sql = {"native": native, "gpuhash": gpuhash}


# W9's first level, star_fact LEFT JOIN star_d2 ON d2 = id AND region < 8, as (d3, region, qty)
W9_LEVEL1 = (
    "SELECT d3, region, qty FROM gpu_hash_join($b2$SELECT id, region FROM star_d2 WHERE region < 8$b2$, "
    "$q$SELECT d2, d3, qty FROM star_fact$q$) AS j2(id int4, region int4, d2 int4, d3 int4, qty int4) "
    "UNION ALL SELECT d3, NULL::int4, qty FROM gpu_hash_join("
    "$b2$SELECT id FROM star_d2 WHERE region < 8$b2$, $q$SELECT d2, d3, qty FROM star_fact$q$, 'anti') "
    "AS j2(d2 int4, d3 int4, qty int4)")

WORKLOADS = [
    Workload(
        "W1_star_aggregate", "fact JOIN dim (int4), count + sum", ("fact", "dim"),
        "SELECT count(*), sum(f.amount + d.payload) FROM fact f JOIN dim d ON f.dim_id = d.id",
        "SELECT count(*), sum(amount + payload) FROM gpu_hash_join("
        "'SELECT id, payload FROM dim', 'SELECT dim_id, amount FROM fact') "
        "AS j(id int4, payload int4, dim_id int4, amount int4)"),
    Workload(
        "W2_semi_join", "fact rows whose dim_id is in a 10 % subset of dim", ("fact", "dim"),
        "SELECT count(*), sum(amount) FROM fact "
        "WHERE dim_id IN (SELECT id FROM dim WHERE payload % 10 = 0)",
        "SELECT count(*), sum(amount) FROM gpu_hash_join("
        "'SELECT id FROM dim WHERE payload % 10 = 0', 'SELECT dim_id, amount FROM fact', 'semi') "
        "AS j(dim_id int4, amount int4)"),
    Workload(
        "W3_anti_join", "complement of W2 (NOT EXISTS; NULL dim_id counts)", ("fact", "dim"),
        "SELECT count(*), sum(amount) FROM fact f "
        "WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.id = f.dim_id AND d.payload % 10 = 0)",
        "SELECT count(*), sum(amount) FROM gpu_hash_join("
        "'SELECT id FROM dim WHERE payload % 10 = 0', 'SELECT dim_id, amount FROM fact', 'anti') "
        "AS j(dim_id int4, amount int4)"),
    Workload(
        "W6_selective_inner", "fact probe (100 M at full) against all of dim (10 M), ~1 % of probe keys hit",
        ("fact", "dim"),
        "SELECT count(*), sum(f.amount + d.payload) FROM fact f JOIN dim d "
        "ON d.id = f.dim_id + CASE WHEN f.amount % 100 = 0 THEN 0 ELSE 100000000 END",
        "SELECT count(*), sum(amount + payload) FROM gpu_hash_join("
        "'SELECT id, payload FROM dim', "
        "'SELECT dim_id + CASE WHEN amount % 100 = 0 THEN 0 ELSE 100000000 END, amount FROM fact') "
        "AS j(id int4, payload int4, k int4, amount int4)"),
    Workload(
        "W4_selective_lookup", "int8 probe keys against a 10x larger int8 build side, 1 % hit",
        ("lk_build", "lk_probe"),
        "SELECT count(*), sum(bv + pv) FROM "
        "(SELECT b.v AS bv, p.v AS pv FROM lk_probe p JOIN lk_build b ON b.k = p.k) s",
        "SELECT count(*), sum(bv + pv) FROM "
        "(SELECT bv, pv FROM gpu_hash_join('SELECT k, v FROM lk_build', 'SELECT k, v FROM lk_probe') "
        "AS j(bk int8, bv int8, pk int8, pv int8)) s"),
    Workload(
        "W5_duplicates", "int8 build keys of multiplicity 1..64 and one hot key, inner join",
        ("dup_build", "dup_probe"),
        "SELECT count(*), sum(b.v + p.v) FROM dup_build b JOIN dup_probe p ON b.k = p.k",
        "SELECT count(*), sum(bv + pv) FROM gpu_hash_join("
        "'SELECT k, v FROM dup_build', 'SELECT k, v FROM dup_probe') "
        "AS j(bk int8, bv int4, pk int8, pv int4)"),
    Workload(
        "W7_grouped", "W1 grouped by a fact column (1000 groups): count, sum and avg per group",
        ("fact", "dim"),
        "SELECT count(*), sum(n), sum(s), sum(a) FROM (SELECT f.amount, count(*) AS n, "
        "sum(d.payload) AS s, avg(d.payload) AS a FROM fact f JOIN dim d ON f.dim_id = d.id "
        "GROUP BY f.amount) g",
        "SELECT count(*), sum(n), sum(s), sum(a) FROM (SELECT amount, count(*) AS n, "
        "sum(payload) AS s, avg(payload) AS a FROM gpu_hash_join("
        "'SELECT id, payload FROM dim', 'SELECT dim_id, amount FROM fact') "
        "AS j(id int4, payload int4, dim_id int4, amount int4) GROUP BY amount) g"),
    Workload(
        "W8_star", "star_fact (100 M at full) joined to three filtered dimensions, "
        "grouped by two dimension attributes (80 groups)",
        ("star_fact", "star_d1", "star_d2", "star_d3"),
        "SELECT count(*), sum(n), sum(q) FROM (SELECT d2.region, d3.cat, count(*) AS n, "
        "sum(f.qty) AS q FROM star_fact f JOIN star_d1 d1 ON f.d1 = d1.id "
        "JOIN star_d2 d2 ON f.d2 = d2.id JOIN star_d3 d3 ON f.d3 = d3.id "
        "WHERE d1.flag AND d2.region < 8 GROUP BY d2.region, d3.cat) g",
        # three nested gpu_hash_join calls: d1 (a filter only: semi), d2, d3
        "SELECT count(*), sum(n), sum(q) FROM (SELECT region, cat, count(*) AS n, sum(qty) AS q "
        "FROM gpu_hash_join($b3$SELECT id, cat FROM star_d3$b3$, "
        "$p3$SELECT d3, region, qty FROM gpu_hash_join("
        "$b2$SELECT id, region FROM star_d2 WHERE region < 8$b2$, "
        "$p2$SELECT d2, d3, qty FROM gpu_hash_join($b1$SELECT id FROM star_d1 WHERE flag$b1$, "
        "$q1$SELECT d1, d2, d3, qty FROM star_fact$q1$, 'semi') "
        "AS j1(d1 int4, d2 int4, d3 int4, qty int4)$p2$) "
        "AS j2(id int4, region int4, d2 int4, d3 int4, qty int4)$p3$) "
        "AS j3(id int4, cat int4, d3 int4, region int4, qty int4) GROUP BY region, cat) g"),
    # W8's star as BI tools write it: LEFT JOINs, the dimension's filter in the ON clause, so a fact
    # row whose star_d2 is outside regions 0-7 (60 %) is kept with a NULL region
    Workload(
        "W9_left_star", "star_fact (100 M at full) LEFT JOIN two dimensions, one filtered in ON, "
        "grouped by their attributes (90 groups, a NULL region among them)",
        ("star_fact", "star_d2", "star_d3"),
        "SELECT count(*), sum(n), sum(q) FROM (SELECT d2.region, d3.cat, count(*) AS n, "
        "sum(f.qty) AS q FROM star_fact f LEFT JOIN star_d2 d2 ON f.d2 = d2.id AND d2.region < 8 "
        "LEFT JOIN star_d3 d3 ON f.d3 = d3.id GROUP BY d2.region, d3.cat) g",
        # gpu_hash_join has no left join: each LEFT JOIN is its inner join's rows and its anti
        # join's with NULL columns, so the first level is read twice
        "SELECT count(*), sum(n), sum(q) FROM (SELECT region, cat, count(*) AS n, sum(qty) AS q "
        "FROM (SELECT region, cat, qty FROM gpu_hash_join($b3$SELECT id, cat FROM star_d3$b3$, "
        "$p3$" + W9_LEVEL1 + "$p3$) AS j3(id int4, cat int4, d3 int4, region int4, qty int4) "
        "UNION ALL SELECT region, NULL::int4, qty FROM gpu_hash_join($b3$SELECT id FROM star_d3$b3$, "
        "$p3$" + W9_LEVEL1 + "$p3$, 'anti') AS j3(d3 int4, region int4, qty int4)) s "
        "GROUP BY region, cat) g"),
]


class Engine:
    """sql: which query of a workload it runs ('native' or 'gpuhash').
    settings: SET name = value for its session ({cores} is replaced).
    check: a query run after the settings that must return 't' for the engine
    to be usable; when it errors or returns something else, the engine is
    skipped with that as the recorded reason."""

    def __init__(self, name, sql, settings, check=None, prelude=""):
        self.name = name
        self.sql = sql
        self.settings = settings
        self.check = check
        self.prelude = prelude

    def resolved_settings(self, cores):
        # {cores}: the machine's processors; {readers}: the workers that gpuhash.parallel_workers'
        # default plans beside a participating leader where no reader takes a helper thread
        return {k: str(v).format(cores=cores, readers=max(cores - 1, 1)) for k, v in self.settings.items()}


ENGINES = [
    Engine("native_serial", "native", {"max_parallel_workers_per_gather": 0}),
    Engine("native_parallel", "native",
           {"max_parallel_workers_per_gather": "{cores}", "max_parallel_workers": "{cores}"}),
    Engine("gpuhash_gpu", "gpuhash", {"gpuhash.device": "gpu"},
           check="SELECT gpuhash_backend() = 'gpu'"),
    Engine("gpuhash_cpu", "gpuhash", {"gpuhash.device": "cpu"},
           check="SELECT gpuhash_backend() = 'cpu'"),
    # the native SQL, parallel as native_parallel, with GpuHashJoin available
    Engine("planner_gpu", "native",
           {"max_parallel_workers_per_gather": "{cores}", "max_parallel_workers": "{cores}",
            "gpuhash.device": "gpu", "gpuhash.enable_join": "on"},
           check="SELECT gpuhash_backend() = 'gpu'", prelude="LOAD 'gpuhash';\n"),
    Engine("planner_cpu", "native",
           {"max_parallel_workers_per_gather": "{cores}", "max_parallel_workers": "{cores}",
            "gpuhash.device": "cpu", "gpuhash.enable_join": "on"},
           check="SELECT gpuhash_backend() = 'cpu'", prelude="LOAD 'gpuhash';\n"),
    # planner_gpu with the workers of shared builds waiting for the table, as before
    # gpuhash.read_during_build went on by default (bench/NOTES.md section 43)
    Engine("planner_gpu_wait", "native",
           {"max_parallel_workers_per_gather": "{cores}", "max_parallel_workers": "{cores}",
            "gpuhash.device": "gpu", "gpuhash.enable_join": "on", "gpuhash.read_during_build": "off"},
           check="SELECT gpuhash_backend() = 'gpu'", prelude="LOAD 'gpuhash';\n"),
    # planner_gpu with the node's plans asking for as many workers as native_parallel may have,
    # where PostgreSQL planned fewer for the tables' sizes (gpuhash.parallel_workers, NOTES 48)
    Engine("planner_gpu_wide", "native",
           {"max_parallel_workers_per_gather": "{cores}", "max_parallel_workers": "{cores}",
            "gpuhash.device": "gpu", "gpuhash.enable_join": "on", "gpuhash.parallel_workers": "{cores}"},
           check="SELECT gpuhash_backend() = 'gpu'", prelude="LOAD 'gpuhash';\n"),
    # planner_cpu with as many workers as gpuhash.parallel_workers' default plans where no
    # reader takes a helper thread, whatever the reads keep: run 211 timed the CPU twin so
    # beside planner_gpu under 47138d1's default (NOTES 49)
    Engine("planner_cpu_wide", "native",
           {"max_parallel_workers_per_gather": "{cores}", "max_parallel_workers": "{cores}",
            "gpuhash.device": "cpu", "gpuhash.enable_join": "on", "gpuhash.parallel_workers": "{readers}"},
           check="SELECT gpuhash_backend() = 'cpu'", prelude="LOAD 'gpuhash';\n"),
    # planner_gpu with an earlier commit's library, gpuhash_prev.so (bench/host/prev-source and
    # tpch-piece build it): two commits on one machine.  No check: the check's function would load
    # the present library beside it.
    Engine("previous_gpu", "native",
           {"max_parallel_workers_per_gather": "{cores}", "max_parallel_workers": "{cores}",
            "gpuhash.device": "gpu", "gpuhash.enable_join": "on"},
           prelude="LOAD 'gpuhash_prev';\n"),
]

# engines run only when named with --engines (previous_gpu needs gpuhash_prev.so installed)
NAMED_ONLY = {"previous_gpu", "planner_gpu_wait", "planner_gpu_wide", "planner_cpu_wide"}

REFERENCE = "native_serial"

# engines that read every row in one process: up to minutes per query at full scale
FULL_SCALE_OPT_IN = {"native_serial", "gpuhash_cpu", "gpuhash_gpu", "planner_cpu", "planner_cpu_wide"}
