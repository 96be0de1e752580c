#!/usr/bin/env bash
# Receives in a queue (MODEL.md §14): runs tracer/bench/queue.c (n = 1, 2, 4, 6 messages of 8,
# 1,024 and 4,000 bytes each way at once, a Waitall completing them) RUNS times untraced (3 by
# default) and once traced, at the placement of the cores of the set PARAMS names (retried up to
# 5 times), and prints per size and count the median exchange of the untraced runs at the
# traced run's placement (cores within 2x; none: it says so), the traced run's,
# and the replay's of the traced run (the tracer's time taken out) with PARAMS, and the
# prediction over the untraced median. WORK=NS spins NS ns between the Isends and the Waitall
# (the messages arrive while the ranks compute). MPI=mpich runs MPICH's build.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tracer/bench/placed.sh
prog=tracer/build-$MPI/bench/queue
# shellcheck disable=SC2086
placed_runs "$tmp" "${RUNS:-3}" "$prog" ${WORK:-}
"$BIN" "$tmp/t.bin" --params "$PARAMS" --timeline "$tmp/tl.json" > /dev/null 2>&1
traced_cores=$(awk '/^cores/ {print ($2 > $3) ? $2 : $3}' "$tmp/t.txt")
python3 - "$tmp/tl.json" "$traced_cores" "$tmp"/u*.txt <<'PY'
import json, sys, statistics
d = json.load(open(sys.argv[1])); ev = d["traceEvents"] if isinstance(d, dict) else d
# The untraced runs at the traced run's placement (cores within 2x) only.
sys.path.insert(0, "tracer/bench")
from placed import untraced_at
traced_cores = float(sys.argv[2])
untraced, placed = untraced_at(sys.argv[3:], traced_cores, "queue")
keys = list(untraced)
# Rank 0's exchanges as the timeline gives them: first Irecv to Waitall's return, per block.
def exchanges(tid):
    calls = sorted((e["ts"], e["name"], e["ts"] + e["dur"]) for e in ev
                   if e.get("ph") == "X" and e.get("pid") == 0 and e.get("tid") == tid and e.get("cat") == "mpi")
    out, start = [], None
    for t0, name, t1 in calls:
        if name == "MPI_Irecv" and start is None: start = t0
        elif name == "MPI_Waitall" and start is not None: out.append((t1 - start) * 1e3); start = None
        elif name not in ("MPI_Irecv", "MPI_Isend", "MPI_Waitall", "computation"): start = None
    per = len(out) // len(keys)
    return [statistics.median(out[b * per + 20:(b + 1) * per]) for b in range(len(keys))]
pred, traced = exchanges(0), exchanges(1)
print(f"{'bytes':>6} {'n':>2} {'untraced':>9} {'traced':>8} {'predicted':>9} {'pred/untraced':>13}   (cores: traced {traced_cores:.0f} ns, untraced {' '.join(placed)} ns)")
for (k, n), p, t in zip(keys, pred, traced):
    u = statistics.median(untraced[(k, n)])
    print(f"{k:>6} {n:>2} {u:>9.0f} {t:>8.0f} {p:>9.0f} {p / u:>13.2f}")
PY
