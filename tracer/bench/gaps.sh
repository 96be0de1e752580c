#!/usr/bin/env bash
# Collectives with computation between (MODEL.md §11, `oc`): runs tracer/bench/gaps.c (loops of
# Bcast, Allreduce, Allgather, Alltoall and Reduce of 8 and 1,024 bytes, 0, 50 and 200 ns spun
# after each call) RUNS times untraced (3 by default) and once traced, at the placement of the
# cores of the set PARAMS names (retried up to 5 times), and prints per size and gap a round of
# the loop: the median of the untraced runs at the traced run's placement (cores within 2x;
# none: it says so), the traced run's, and the replay's of the traced run (the tracer's time
# taken out) with PARAMS, and the prediction over the untraced median. PREDICT_ARGS adds flags
# to the prediction (e.g. "--oc 0"). MPI=mpich runs MPICH's build.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tracer/bench/placed.sh
prog=tracer/build-$MPI/bench/gaps
# shellcheck disable=SC2086
placed_runs "$tmp" "${RUNS:-3}" "$prog"
# shellcheck disable=SC2086
"$BIN" "$tmp/t.bin" --params "$PARAMS" ${PREDICT_ARGS:-} --timeline "$tmp/tl.json" > /dev/null 2>&1
traced_cores=$(awk '/^cores/ {print ($2 > $3) ? $2 : $3}' "$tmp/t.txt")
python3 - "$tmp/tl.json" "$traced_cores" "$tmp"/u*.txt <<'PY'
import json, sys, statistics
d = json.load(open(sys.argv[1])); ev = d["traceEvents"] if isinstance(d, dict) else d
ROUNDS, CALLS = 2000, 5
sys.path.insert(0, "tracer/bench")
from placed import untraced_at
traced_cores = float(sys.argv[2])
untraced, placed = untraced_at(sys.argv[3:], traced_cores, "gaps")
keys = list(untraced)
# Rank 0's rounds as the timeline gives them: each loop from its first call after its Barrier
# to the call after its last (the Reduce that gathers the time).
def rounds(tid):
    calls = sorted((e["ts"], e["name"]) for e in ev
                   if e.get("ph") == "X" and e.get("pid") == 0 and e.get("tid") == tid and e.get("cat") == "mpi")
    bars = [i for i, (_, name) in enumerate(calls) if name == "MPI_Barrier"]
    return [(calls[b + 1 + CALLS * ROUNDS][0] - calls[b + 1][0]) * 1e3 / ROUNDS for b in bars[:len(keys)]]
pred, traced = rounds(0), rounds(1)
print(f"{'bytes':>6} {'gap':>4} {'untraced':>9} {'traced':>8} {'predicted':>9} {'pred/untraced':>13}   (a round of five calls, ns; cores: traced {traced_cores:.0f} ns, untraced {' '.join(placed)} ns)")
for (k, g), p, t in zip(keys, pred, traced):
    u = statistics.median(untraced[(k, g)])
    print(f"{k:>6} {g:>4} {u:>9.0f} {t:>8.0f} {p:>9.0f} {p / u:>13.2f}")
PY
