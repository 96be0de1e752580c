#!/usr/bin/env bash
# Traces tracer/bench/collectives.c on 2 and 4 ranks (Open MPI) and prints, per collective, the
# time per call the trace measured and the time `loggps-predict` predicts with collectives
# modeled (Open MPI 4.1's algorithms) and the calibrated parameters of traces/params.toml (or
# of the file PARAMS names).
# 4 ranks oversubscribe a machine of fewer cores: there the measured times include time-slicing.
# NPS="2" chooses the rank counts; SIZES="1024 16384" traces each block size (bytes) on its own
# and prints a table for each (else one table over 8 B, 1 KiB and 16 KiB together); EACH=1 gives
# every kind its own buffers (collectives.c's --each); GROUPED=1 times each kind in a loop of its
# own, kind after kind (--grouped, as OSU's and IMB's benchmarks do: its buffers stay cached). PER_RANK=1 adds, from the prediction's
# timeline, each rank's median call measured and predicted, and when each rank enters and leaves
# a call against rank 0 (medians over the calls, ns; the tracer's clock ticks 10 ns here): a
# model that leaves the ranks out of step after one call misprices the next (a receiver that
# came early waits), which the table over ranks cannot show; with UNTRACED=1, the same of one
# untraced run beside (collectives.c --timed: each rank times its calls; one node's clock).
# BASE_PARAMS=FILE adds the
# prediction with another parameter file of the same trace (a calibration written another way,
# the previous build's), and its ratio to the mean call. RUNS=N (N > 1) traces each size N
# times and prints, per collective, the median over the runs of predicted over the mean call,
# among the runs at a set's placement (a cache line's round trip between the ranks' cores
# within 2x of a set's `cores`, as tests/apps/run.sh judges; each run predicted with the set
# nearest it), how many, and the range over them (the table of one run and PER_RANK are then
# left out; with BASE_PARAMS, the median of its predictions over the same runs beside; with
# UNTRACED=1, each run made again untraced, timing its own calls and its placement
# (collectives.c --timed), and the median over the traced runs of the predicted call over the
# median mean call of the untraced runs at the traced run's placement: the prediction against
# what the calls take without the tracer, which slows them beyond its own time, as
# tests/apps/run.sh judges programs against their untraced runs; with several sets, also per
# set, over the runs nearest its placement). PREDICT_ARGS adds flags to the RUNS predictions
# (e.g. "--keep-tracer-time --at-run-speed").
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${LOGGPS_PREDICT:-target/release/loggps-predict}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
make -s -C tracer MPI=openmpi
mkdir -p tracer/build-openmpi/bench
mpicc.openmpi -O2 -o tracer/build-openmpi/bench/collectives tracer/bench/collectives.c
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PARAMS=${PARAMS:-traces/params.toml}
# cores TRACE (tests/bench/common.sh): the trace's placement, ns
source tests/bench/common.sh
set_cores=$(sed -n 's/^cores = //p' "$PARAMS" | paste -sd,)
for np in ${NPS:-2 4}; do
for size in ${SIZES:-all}; do
  args="$([ -z "${EACH:-}" ] || echo --each) $([ -z "${GROUPED:-}" ] || echo --grouped)"
  args="$args $([ "$size" = all ] || echo "$size")"
  if (( ${RUNS:-1} > 1 )); then
    runs=()
    for run in $(seq "$RUNS"); do
      t=$tmp/c$np-$size-$run
      # shellcheck disable=SC2086 # $args: none to three words
      LOGGPS_TRACE=$t.bin mpirun.openmpi --oversubscribe -np $np \
        -x LD_PRELOAD=$PWD/tracer/build-openmpi/libloggps-trace.so -x LOGGPS_TRACE \
        tracer/build-openmpi/bench/collectives $args 2>/dev/null
      "$BIN" convert "$t.bin" "$t.txt" >/dev/null
      # shellcheck disable=SC2086 # PREDICT_ARGS: any number of words
      "$BIN" "$t.bin" --params "$PARAMS" --coll modeled ${PREDICT_ARGS:-} --format json 2>/dev/null > "$t.json"
      [ -z "${BASE_PARAMS:-}" ] ||
        "$BIN" "$t.bin" --params "$BASE_PARAMS" --coll modeled --format json 2>/dev/null > "$t.base.json"
      runs+=("$t.txt" "$t.json" "$(cores "$t.bin")")
      # UNTRACED=1: the same run untraced, timing its own calls (`kind BYTES NAME NS` lines)
      if [ -n "${UNTRACED:-}" ]; then
        # shellcheck disable=SC2086 # $args: none to three words
        mpirun.openmpi --oversubscribe -np $np tracer/build-openmpi/bench/collectives --timed $args \
          2>/dev/null | awk '/^kind /{k[++n]=$0} /^cores /{c=($2>$3)?$2:$3}
            END{for(i=1;i<=n;i++) print c, k[i]}' >> "$tmp/untraced-$np-$size.txt"
      fi
    done
    echo "== $np ranks, block $size B, $RUNS runs: predicted over the mean call, the median over the runs at a set's placement (cores within 2x of ${set_cores:-?} ns), how many, and their range"
    python3 - "${set_cores:--}" "$tmp/untraced-$np-$size.txt" "${runs[@]}" <<'PY'
import json, math, os, sys, collections, statistics
set_cores, untraced_file, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
ratios, placed, all_cores = collections.defaultdict(list), 0, []
base = collections.defaultdict(list)
# The untraced runs' mean call of each kind (UNTRACED=1), the median over the runs; each traced
# run's prediction a call over it.
untraced, over_untraced = collections.defaultdict(list), collections.defaultdict(list)
# ... and per set, the runs nearest each set's placement (where the file has several).
sets = [] if set_cores == "-" else [float(c) for c in set_cores.split(",")]
nearest = lambda c: 0 if c == "-" or not sets else min(range(len(sets)), key=lambda i: abs(math.log(float(c) / sets[i])))
by_set = collections.defaultdict(list)
# Two placements within 2x of each other are one (as tests/apps/run.sh judges); "-": unknown.
near = lambda a, b: a == "-" or b == "-" or (float(a) < 2 * float(b) and float(b) < 2 * float(a))
# Each untraced run's placement and mean calls: a traced run is compared with the untraced runs
# at its own placement only (this machine's placements differ by up to 2x in a call's time).
untraced_cores = []
if os.path.exists(untraced_file):
    for line in open(untraced_file):
        c, _, _, name, ns = line.split()
        untraced[name].append((c, float(ns)))
        untraced_cores.append(c)
for txt, js, cores in zip(rest[0::3], rest[1::3], rest[2::3]):
    all_cores.append(cores)
    held = set_cores == "-" or any(near(cores, s) for s in set_cores.split(","))
    if not held: continue
    placed += 1
    took, ranks = collections.defaultdict(list), set()
    for line in open(txt):
        f = line.split()
        if len(f) >= 4 and f[1].startswith("MPI_") and f[0].isdigit():
            ranks.add(f[0]); took[f[1]].append(int(f[3]) - int(f[2]))
    pred = json.load(open(js))["collectives_s"]
    other = js.replace(".json", ".base.json")
    pred_base = json.load(open(other))["collectives_s"] if os.path.exists(other) else {}
    for k, v in pred.items():
        if k == "MPI_Barrier" or not took[k]: continue
        per_call = len(took[k]) / len(ranks)
        ratios[k].append(v / per_call * 1e9 / statistics.mean(took[k]))
        same = [ns for c, ns in untraced[k] if near(c, cores)]
        if same:
            over_untraced[k].append(v / per_call * 1e9 / statistics.median(same))
            by_set[(k, nearest(cores))].append(over_untraced[k][-1])
        if k in pred_base:
            base[k].append(pred_base[k] / per_call * 1e9 / statistics.mean(took[k]))
several = len(sets) > 1 and over_untraced
extra = ("    base" if base else "") + (" untraced" if over_untraced else "")
extra += f"  by set ({'/'.join(f'{c:.0f}' for c in sets)} ns)" if several else ""
print(f"{'routine':<20} {'median':>7} {'runs':>5} {'range':>11}{extra}   (the runs' cores, ns: {' '.join(all_cores)}"
      + (f"; untraced: {' '.join(sorted(set(untraced_cores), key=untraced_cores.index))}" if untraced_cores else "") + ")")
for k in sorted(ratios):
    r = ratios[k]
    b = f" {statistics.median(base[k]):>7.2f}" if base[k] else ""
    u = f" {statistics.median(over_untraced[k]):>8.2f}" if over_untraced[k] else ""
    if several:
        u += "  " + "/".join(f"{statistics.median(by_set[(k, i)]):.2f}" if by_set[(k, i)] else "-" for i in range(len(sets)))
    print(f"{k:<20} {statistics.median(r):>7.2f} {len(r):>2}/{len(rest) // 3:<2} {min(r):>5.2f}–{max(r):.2f}{b}{u}")
PY
    continue
  fi
  # shellcheck disable=SC2086 # $args: none to three words
  LOGGPS_TRACE=$tmp/c$np-$size.bin mpirun.openmpi --oversubscribe -np $np \
    -x LD_PRELOAD=$PWD/tracer/build-openmpi/libloggps-trace.so -x LOGGPS_TRACE \
    tracer/build-openmpi/bench/collectives $args
  "$BIN" convert "$tmp/c$np-$size.bin" "$tmp/c$np-$size.txt" >/dev/null
  "$BIN" "$tmp/c$np-$size.bin" --params "$PARAMS" --coll modeled --format json 2> "$tmp/w$np-$size.txt" > "$tmp/m$np-$size.json"
  base=""
  if [ -n "${BASE_PARAMS:-}" ]; then
    base=$tmp/b$np-$size.json
    "$BIN" "$tmp/c$np-$size.bin" --params "$BASE_PARAMS" --coll modeled --format json 2>/dev/null > "$base"
  fi
  # where the ranks ran on other cores than the parameters were measured on, say so
  grep -h "ran on cores" "$tmp/w$np-$size.txt" >&2 || true
  echo "== $np ranks, block $size B: time per call, µs (measured: traced durations over ranks and calls, their mean and median; a preempted call weighs on the mean)"
  python3 - "$tmp/c$np-$size.txt" "$tmp/m$np-$size.json" $base <<'PY'
import json, sys, collections, statistics
took = collections.defaultdict(list)
ranks = set()
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 4 and f[1].startswith("MPI_") and f[0].isdigit():
        ranks.add(f[0]); took[f[1]].append(int(f[3]) - int(f[2]))
pred = json.load(open(sys.argv[2]))["collectives_s"]
base = json.load(open(sys.argv[3]))["collectives_s"] if len(sys.argv) > 3 else None
p = len(ranks)
extra = f" {'base':>8} {'base/mean':>9}" if base else ""
print(f"{'routine':<20} {'mean':>8} {'median':>8} {'predicted':>10} {'pred/mean':>9} {'pred/median':>11}{extra}")
for k in sorted(pred):
    if k == "MPI_Barrier" or not took[k]: continue
    per_call = len(took[k]) / p
    mean, med = statistics.mean(took[k]) / 1e3, statistics.median(took[k]) / 1e3
    q = pred[k] / per_call * 1e6
    b = f" {base[k] / per_call * 1e6:>8.2f} {base[k] / per_call * 1e6 / mean:>9.2f}" if base else ""
    print(f"{k:<20} {mean:>8.2f} {med:>8.2f} {q:>10.2f} {q / mean:>9.2f} {q / med:>11.2f}{b}")
PY
  [ -n "${PER_RANK:-}" ] || continue
  "$BIN" "$tmp/c$np-$size.bin" --params "$PARAMS" --coll modeled \
    --timeline "$tmp/t$np-$size.json" >/dev/null 2>&1
  # UNTRACED=1: the same program run untraced once, timing each rank's calls (`rank` lines)
  untraced=$tmp/u$np-$size.txt
  : > "$untraced"
  if [ -n "${UNTRACED:-}" ]; then
    # shellcheck disable=SC2086 # $args: none to three words
    mpirun.openmpi --oversubscribe -np $np tracer/build-openmpi/bench/collectives --timed $args \
      2>/dev/null | grep -E '^(rank|cores) ' > "$untraced"
  fi
  echo "-- per rank: median call, µs, measured and predicted; entry and exit against rank 0, ns (medians)$([ -s "$untraced" ] && echo "; untraced: the same, its run at cores $(awk '/^cores/{print $2, $3}' "$untraced") ns")"
  python3 - "$tmp/t$np-$size.json" "$untraced" "$size" <<'PY'
import json, sys, collections, statistics
d = json.load(open(sys.argv[1]))
# The untraced run's `rank BYTES NAME RANK CALL_NS ENTER_NS LEAVE_NS` lines of this size.
untraced = {}
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "rank" and (sys.argv[3] == "all" or f[1] == sys.argv[3]):
        untraced[(f[2], int(f[3]))] = (float(f[4]) / 1e3, float(f[5]), float(f[6]))
# The timeline's MPI slices: process = rank, thread 0 = predicted, thread 1 = measured.
calls = collections.defaultdict(list)
for e in d["traceEvents"] if isinstance(d, dict) else d:
    if e.get("cat") == "mpi" and e.get("ph") == "X" and e["name"] not in ("MPI_Init", "MPI_Finalize"):
        calls[(e["pid"], e["tid"])].append((e["ts"], e["name"], e["ts"] + e["dur"]))
ranks = sorted({r for r, _ in calls})
for c in calls.values():
    c.sort()
took, enter, leave = (collections.defaultdict(list) for _ in range(3))
for tid in (1, 0):
    for r in ranks:
        mine, first = calls[(r, tid)], calls[(ranks[0], tid)]
        for i, (t0, name, t1) in enumerate(mine):
            took[(name, r, tid)].append(t1 - t0)
            # the i-th call of every rank is one collective (the program calls them in step)
            if r != ranks[0] and i < len(first) and first[i][1] == name:
                enter[(name, r, tid)].append((t0 - first[i][0]) * 1e3)
                leave[(name, r, tid)].append((t1 - first[i][2]) * 1e3)
med = lambda v: statistics.median(v) if v else float("nan")
extra = f" {'untraced':>9} {'ratio':>6} {'enter':>6} {'leave':>6}" if untraced else ""
print(f"{'routine':<20} {'rank':>4} {'measured':>9} {'predicted':>9} {'ratio':>6} {'enter m/p':>15} {'leave m/p':>15}{extra}")
for name in sorted({k[0] for k in took}):
    for r in ranks:
        m, p = med(took[(name, r, 1)]), med(took[(name, r, 0)])
        skew = lambda v: "" if r == ranks[0] else f"{med(v[(name, r, 1)]):7.0f}/{med(v[(name, r, 0)]):<7.0f}"
        u = untraced.get((name, r))
        # rank 0's own entry and exit are the reference: none to print
        un = "" if u is None else f" {u[0]:9.3f} {p / u[0]:6.2f}" + ("" if r == ranks[0] else f" {u[1]:6.0f} {u[2]:6.0f}")
        print(f"{name:<20} {r:>4} {m:9.3f} {p:9.3f} {p / m:6.2f} {skew(enter):>15} {skew(leave):>15}{un}")
PY
done
done
