"""Benchmark data: sizes per scale, deterministic generators, parallel load.

Every column is a fixed formula of the generate_series row number (integer
multiplicative hashing, no random()), so a rerun, or a load split into other
ranges, produces identical tables.  Tables are UNLOGGED with autovacuum off;
after loading, each is VACUUM ANALYZEd (hint bits, visibility map, stats) so
that the first timed query does not pay for them.

A marker table records the data version and the parameters; existing data is
reused when the marker matches and every table has its expected row count.
"""
import json
import math
import time
from concurrent.futures import ThreadPoolExecutor

DATA_VERSION = "gpuhash-bench-data-2"

# Sizes.  fact/dim: W1-W3.  lk_build/lk_probe: W4 (1 % of probe keys hit).
# dup_*: W5 (build keys of multiplicity 1..64 plus one hot key of
# multiplicity dup_hot; one probe row in dup_hot_every carries the hot key).
# star_*: W8 (a fact table with three dimension keys; dimensions of star_d1,
# star_d2 and star_d3 rows).
SCALES = {
    "tiny": dict(dim=20_000, fact=200_000, lk_build=1_000_000, lk_probe=100_000,
                 dup_keys=10_000, dup_probe=20_000, dup_hot=2_000, dup_hot_every=2_000,
                 star_fact=200_000, star_d1=20_000, star_d2=1_000, star_d3=100),
    "small": dict(dim=1_000_000, fact=10_000_000, lk_build=10_000_000, lk_probe=1_000_000,
                  dup_keys=100_000, dup_probe=300_000, dup_hot=20_000, dup_hot_every=10_000,
                  star_fact=10_000_000, star_d1=1_000_000, star_d2=10_000, star_d3=100),
    "full": dict(dim=10_000_000, fact=100_000_000, lk_build=100_000_000, lk_probe=10_000_000,
                 dup_keys=500_000, dup_probe=1_000_000, dup_hot=100_000, dup_hot_every=20_000,
                 star_fact=100_000_000, star_d1=1_000_000, star_d2=10_000, star_d3=100),
}

# Multipliers of the hashing formulas (odd, so i -> i*A mod 2^k is a bijection).
A = 2654435761      # Knuth's multiplicative hash constant
B = 2246822519      # xxhash prime 2
K8 = 4294967311     # first prime above 2^32: W5 keys need all 64 bits


def dup_multiplicity(d):
    return 1 + (d * A) % 64


class Table:
    def __init__(self, name, ddl, rows, insert, range_n):
        self.name = name
        self.ddl = ddl              # column list
        self.rows = rows            # expected row count
        self.insert = insert        # format with lo, hi: INSERT ... over generate_series(lo, hi)
        self.range_n = range_n      # generate_series runs over 1..range_n


def tables(p):
    dim_span = p["dim"] + p["dim"] // 50            # ~2 % of fact rows name no dim row
    dup_rows = sum(dup_multiplicity(d) for d in range(1, p["dup_keys"] + 1)) + p["dup_hot"]
    return [
        Table("dim", "id int4, payload int4", p["dim"],
              "INSERT INTO dim SELECT i::int4, ((i * %d) %% 1000003)::int4 "
              "FROM generate_series({lo}::int8, {hi}) i" % A, p["dim"]),
        Table("fact", "dim_id int4, amount int4", p["fact"],
              ("INSERT INTO fact SELECT CASE WHEN i %% 1009 = 0 THEN NULL "
               "ELSE (1 + (i * %d) %% %d)::int4 END, ((i * %d) %% 1000)::int4 "
               "FROM generate_series({lo}::int8, {hi}) i") % (A, dim_span, B), p["fact"]),
        Table("lk_build", "k int8, v int8", p["lk_build"],
              "INSERT INTO lk_build SELECT i * %d, i %% 1000 "
              "FROM generate_series({lo}::int8, {hi}) i" % A, p["lk_build"]),
        # every 100th probe key is a build key, the others are = 1..7 mod A: misses
        Table("lk_probe", "k int8, v int8", p["lk_probe"],
              ("INSERT INTO lk_probe SELECT CASE WHEN j %% 100 = 0 THEN (1 + (j * 7919) %% %d) * %d "
               "ELSE j * %d + 1 + j %% 7 END, j %% 1000 "
               "FROM generate_series({lo}::int8, {hi}) j") % (p["lk_build"], A, A), p["lk_probe"]),
        # key d * K8 repeated 1 + (d * A) % 64 times; the hot key -1 comes with the first range
        Table("dup_build", "k int8, v int4", dup_rows,
              ("INSERT INTO dup_build SELECT d * %d, ((d * 31 + r) %% 1000)::int4 "
               "FROM generate_series({lo}::int8, {hi}) d, generate_series(1, 1 + (d * %d) %% 64) r; "
               "INSERT INTO dup_build SELECT -1, (r %% 1000)::int4 "
               "FROM generate_series(1, %d) r WHERE {lo} = 1") % (K8, A, p["dup_hot"]),
              p["dup_keys"]),
        # 1 probe row in dup_hot_every has the hot key, 1 in 10 misses, the rest hit
        Table("dup_probe", "k int8, v int4", p["dup_probe"],
              ("INSERT INTO dup_probe SELECT CASE WHEN j %% %d = 0 THEN -1 "
               "WHEN j %% 10 = 0 THEN j * %d + 1 ELSE (1 + (j * 7919) %% %d) * %d END, "
               "(j %% 1000)::int4 FROM generate_series({lo}::int8, {hi}) j")
              % (p["dup_hot_every"], K8, p["dup_keys"], K8), p["dup_probe"]),
        # W8: three dimensions (75 % of star_d1 flagged, 40 % of star_d2 in
        # regions 0-7) and a fact row naming one row of each, its first key
        # NULL in one row of 997
        Table("star_d1", "id int4, grp int4, flag bool", p["star_d1"],
              "INSERT INTO star_d1 SELECT i::int4, ((i * %d) %% 100)::int4, (i * %d) %% 4 <> 0 "
              "FROM generate_series({lo}::int8, {hi}) i" % (A, B), p["star_d1"]),
        Table("star_d2", "id int4, region int4", p["star_d2"],
              "INSERT INTO star_d2 SELECT i::int4, ((i * %d) %% 20)::int4 "
              "FROM generate_series({lo}::int8, {hi}) i" % A, p["star_d2"]),
        Table("star_d3", "id int4, cat int4", p["star_d3"],
              "INSERT INTO star_d3 SELECT i::int4, (i % 10)::int4 "
              "FROM generate_series({lo}::int8, {hi}) i", p["star_d3"]),
        Table("star_fact", "d1 int4, d2 int4, d3 int4, qty int4", p["star_fact"],
              ("INSERT INTO star_fact SELECT CASE WHEN i %% 997 = 0 THEN NULL "
               "ELSE (1 + (i * %d) %% %d)::int4 END, (1 + (i * %d / 7) %% %d)::int4, "
               "(1 + (i * 7919 / 13) %% %d)::int4, ((i * 104729) %% 100)::int4 "
               "FROM generate_series({lo}::int8, {hi}) i")
              % (A, p["star_d1"], B, p["star_d2"], p["star_d3"]), p["star_fact"]),
    ]


def marker_params(scale):
    return json.dumps({"version": DATA_VERSION, "scale": scale, "sizes": SCALES[scale]},
                      sort_keys=True)


def existing_data_ok(psql, schema, scale, log):
    """True when schema holds this scale's data (marker and row counts match)."""
    have = psql.value("SELECT count(*) FROM pg_tables WHERE schemaname = '%s' "
                      "AND tablename = 'bench_marker'" % schema)
    if have.strip() != "1":
        return False
    params = psql.value("SELECT params FROM %s.bench_marker" % schema).strip()
    if params != marker_params(scale):
        log("existing data in schema %s has other parameters; regenerating" % schema)
        return False
    tl = tables(SCALES[scale])
    for t in tl:
        try:
            n = int(psql.value("SELECT count(*) FROM %s.%s" % (schema, t.name)).strip())
        except Exception:
            n = -1
        if n != t.rows:
            log("existing table %s.%s has %d rows, expected %d; regenerating"
                % (schema, t.name, n, t.rows))
            return False
    return True


def generate(psql, schema, scale, loaders, log):
    """(Re)create the schema and load every table with `loaders` concurrent
    psql sessions, each inserting a disjoint range; returns timings."""
    p = SCALES[scale]
    tl = tables(p)
    t0 = time.time()
    ddl = ["SET client_min_messages = warning;",
           "DROP SCHEMA IF EXISTS %s CASCADE;" % schema,
           "CREATE SCHEMA %s;" % schema]
    for t in tl:
        ddl.append("CREATE UNLOGGED TABLE %s.%s (%s) WITH (autovacuum_enabled = off);"
                   % (schema, t.name, t.ddl))
    ddl.append("CREATE TABLE %s.bench_marker (params text, loaded_at timestamptz, "
               "load_seconds float8);" % schema)
    psql.run("\n".join(ddl))

    # Split every table's range into chunks of >= 50k rows, at most `loaders`
    # chunks per table, and run all chunks on a pool of `loaders` sessions.
    tasks = []
    for t in tl:
        nchunks = max(1, min(loaders, math.ceil(t.range_n / 50_000)))
        step = math.ceil(t.range_n / nchunks)
        for lo in range(1, t.range_n + 1, step):
            hi = min(t.range_n, lo + step - 1)
            tasks.append(((hi - lo + 1) * t.rows / t.range_n, t.name, lo, hi,
                          "SET search_path = %s; SET synchronous_commit = off;\n%s;\n"
                          % (schema, t.insert.format(lo=lo, hi=hi))))
    tasks.sort(key=lambda x: -x[0])         # biggest first
    log("loading %d tables (%s rows) with %d concurrent sessions, %d ranges"
        % (len(tl), "{:,}".format(sum(t.rows for t in tl)), loaders, len(tasks)))
    with ThreadPoolExecutor(max_workers=loaders) as ex:
        list(ex.map(lambda task: psql.run(task[4]), tasks))
    t_load = time.time() - t0
    t1 = time.time()
    with ThreadPoolExecutor(max_workers=max(1, min(loaders, len(tl)))) as ex:
        list(ex.map(lambda t: psql.run("VACUUM (ANALYZE) %s.%s;" % (schema, t.name)), tl))
    t_vac = time.time() - t1
    for t in tl:
        n = int(psql.value("SELECT count(*) FROM %s.%s" % (schema, t.name)).strip())
        if n != t.rows:
            raise RuntimeError("table %s has %d rows after loading, expected %d" % (t.name, n, t.rows))
    total = time.time() - t0
    psql.run("INSERT INTO %s.bench_marker VALUES ($m$%s$m$, now(), %f);"
             % (schema, marker_params(scale), total))
    return {"load_seconds": round(t_load, 3), "vacuum_analyze_seconds": round(t_vac, 3),
            "total_seconds": round(total, 3)}


def table_info(psql, schema, scale):
    """Row counts and on-disk sizes, for the report."""
    out = []
    for t in tables(SCALES[scale]):
        size = psql.value("SELECT pg_total_relation_size('%s.%s')" % (schema, t.name)).strip()
        out.append({"table": t.name, "columns": t.ddl, "rows": t.rows, "bytes": int(size)})
    return out
