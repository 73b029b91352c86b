#!/bin/bash
# run45: W1-W6 full and TPC-H SF10 (all queries but q18, native_parallel vs planner_gpu, median of 3 after
# a warm-up) on one H100 lease at d37e9a5, in calls of < 570 s. Phases are skipped once done (markers in
# /tmp), so every call runs the same script on the warm machine:
#   build+install -> W1-W6 full -> TPC-H SF10 load -> TPC-H pieces (queries packed by run 41's timings)
#   -> [RERUN=1] queries below 0.95x again, 7 runs -> [PLANNING=1] test/planning/run --tpch gpuhash_tpch_10
# usage: source .gpuhost/up; .devrun/run45.sh            (env DEADLINE=seconds for this call, default 565)
set -uo pipefail
export GPUHOST_PGOPTS="-c jit=off -c shared_buffers=16GB -c max_parallel_workers=16 -c max_worker_processes=32 -c max_wal_size=20GB -c checkpoint_timeout=30min"
export GPUHASH_COMMIT=d37e9a5
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
left() { echo $(( ${DEADLINE:-565} - ($(date +%s) - t0) )); }
psql -Atc 'select 1' >/dev/null 2>&1 || source .gpuhost/up
psql -Atc 'select 1' >/dev/null || { echo "no server"; exit 1; }
o=$OUT; L=/tmp/t45logs; mkdir -p $L /tmp/tpch-data /tmp/t45 && chmod 777 /tmp/tpch-data
call=$(( $(cat /tmp/t45.calls 2>/dev/null || echo 0) + 1 )); echo $call > /tmp/t45.calls; el "call $call"
if [ ! -f /tmp/t45.built ]; then
  nvidia-smi > $L/nvidia-smi.txt 2>&1
  make -j16 GPUHASH_CUDA_ARCHS="70 80 90" > $L/build.log 2>&1 || { tail -30 $L/build.log; exit 1; }
  make -s install >/dev/null && chown -R pgrun . 2>/dev/null && touch /tmp/t45.built; el built
fi
if [ ! -f /tmp/t45.wdone ] && [ $(left) -gt 330 ]; then
  bench/run --scale full --cores 16 --timeout 150 --out /tmp/wfull > $L/wfull.log 2>&1; echo "W bench rc=$?"
  grep -E '^\| W|^Failures|skipped' $L/wfull.log | cut -c1-200
  (cd /tmp/wfull && tar czf $o/wfull.tgz results.json results.md *.png) && touch /tmp/t45.wdone; el "W done"
fi
if [ ! -f /tmp/t45.loaded ] && [ $(left) -gt 170 ]; then
  timeout $(( $(left) - 10 )) bench/run --suite tpch --sf 10 --engines native_parallel --queries 6 --runs 1 --warmup 0 \
    --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t45load > $L/tpch-load.log 2>&1
  grep -q "data ready" $L/tpch-load.log && touch /tmp/t45.loaded; grep "data ready" $L/tpch-load.log
  rm -rf /tmp/tpch-data/*; el "tpch loaded"
fi
ALL=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,19,20,21,22
if [ -f /tmp/t45.loaded ]; then
  # pick the queries not yet measured that fit: estimated seconds = 4 runs x (native + gpu) of run 41, x1.2, + 6
  pick=$(python3 - $(( $(left) - 30 )) <<'PY'
import json, os, sys
est = {1:25.6,2:8.1,3:6.4,4:2.0,5:6.0,6:3.6,7:6.1,8:6.0,9:15.0,10:10.7,11:4.5,12:4.7,13:45.5,14:5.4,15:5.9,
       16:3.9,17:32.1,19:0.65,20:8.4,21:9.5,22:0.9}
done = set()
if os.path.exists("/tmp/t45/results.json"):
    for r in json.load(open("/tmp/t45/results.json"))["results"]:
        if "median_s" in r: done.add((r["engine"], r["query"]))
budget, pick = float(sys.argv[1]), []
for q in sorted(est, key=lambda q: -est[q]):
    todo = [e for e in ("native_parallel", "planner_gpu") if (e, "q%02d" % q) not in done]
    if not todo: continue
    c = 4 * est[q] * (len(todo) / 2) * 1.2 + 6
    if c <= budget: pick.append(q); budget -= c
print(",".join(str(q) for q in sorted(pick)))
PY
)
  echo "tpch piece: queries ${pick:-none} (left $(left) s)"
  if [ -n "$pick" ]; then
    merge=""; [ -f /tmp/t45/results.json ] && merge="--merge /tmp/t45/results.json"
    timeout $(( $(left) - 15 )) bench/run --suite tpch --sf 10 --engines native_parallel,planner_gpu --queries "$pick" \
      --runs 3 --warmup 1 --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t45 $merge \
      --stop-after $(( $(left) - 60 )) 2>&1 | tee -a $L/tpch.log | grep -vE "^\| |UserWarning|ax.legend"
    el "tpch piece done"
  fi
  cp /tmp/t45/results.json /tmp/t45/results.md /tmp/t45/speedup.png $o/ 2>/dev/null
fi
if [ "${RERUN:-}" ] && [ -n "${RERUN_Q:-}" ]; then
  timeout $(( $(left) - 15 )) bench/run --suite tpch --sf 10 --engines native_parallel,planner_gpu --queries "$RERUN_Q" \
    --runs 7 --warmup 1 --timeout 200 --jobs 16 --data-dir /tmp/tpch-data --out /tmp/t45r7 2>&1 \
    | tee -a $L/tpch-r7.log | grep -vE "UserWarning|ax.legend"
  (cd /tmp/t45r7 && tar czf $o/rerun7.tgz results.json results.md speedup.png 2>/dev/null); el "rerun done"
fi
if [ "${PLANNING:-}" ] && [ $(left) -gt 60 ]; then
  psql -Atc "LOAD 'gpuhash'; SELECT gpuhash_backend()" 2>&1 | tail -1
  timeout $(( $(left) - 10 )) test/planning/run --tpch gpuhash_tpch_10 > $L/planning.log 2>&1; echo "planning rc=$?"
  grep -E "^(ok|FAILED|over)|passed" $L/planning.log | head -40; el "planning done"
fi
echo "crash lines: $(grep -cE 'terminated by signal|PANIC:' /tmp/pg.log)"
cp /tmp/pg.log $L/pg.log 2>/dev/null
tar czf $o/logs-call$call.tgz -C $L . ; el done
