#!/usr/bin/env python3
"""Per-query cost of gpuhash being loaded when the plan is PostgreSQL's own:
a parallel count(*) over 2M rows with 8 workers (each worker loads every library
the leader has loaded), in new sessions, alternating with and without LOAD."""
import subprocess, statistics, sys, json
def once(load):
    s = ("SET max_parallel_workers_per_gather = 8; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;"
         "SET min_parallel_table_scan_size = 0;\n" + ("LOAD 'gpuhash';\n" if load else "") +
         "\\timing on\nSELECT count(*) FROM loadcost_t;\n")
    out = subprocess.run(["psql", "-X", "-q"], input=s, capture_output=True, text=True).stdout
    return [float(l.split()[1]) for l in out.splitlines() if l.startswith("Time:")][-1]
subprocess.run(["psql", "-X", "-q", "-c", "DROP TABLE IF EXISTS loadcost_t", "-c", "CREATE TABLE loadcost_t AS "
                "SELECT g FROM generate_series(1, 2000000) g", "-c", "VACUUM ANALYZE loadcost_t"], check=True)
ld = subprocess.run(["psql", "-X", "-q"], input="\\timing on\nLOAD 'gpuhash';\n", capture_output=True, text=True).stdout
for _ in range(5):
    once(False); once(True)
a, b = [], []
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 40):
    a.append(once(False)); b.append(once(True))
r = {"native_ms": statistics.median(a), "loaded_ms": statistics.median(b), "n": len(a),
     "native_all": a, "loaded_all": b, "load_stmt": ld.strip()}
print("parallel count(*) 8 workers: median %.2f ms without gpuhash, %.2f ms with it loaded (n=%d); LOAD alone: %s"
      % (r["native_ms"], r["loaded_ms"], r["n"], ld.strip()))
json.dump(r, open(sys.argv[2] if len(sys.argv) > 2 else "/dev/null", "w"), indent=1)
