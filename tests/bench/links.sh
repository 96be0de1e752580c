#!/usr/bin/env bash
# Link classes measured (src/model/MODEL.md §12): parameters per class of link, on this one
# machine's two kinds of link. MPICH's launcher makes two "nodes" of one machine
# (`-launcher fork -hosts nodeA:1,nodeB:1`, the network being TCP loopback through UCX), and the
# hypervisor runs the two vCPUs near together or far apart in spells (two placements of one
# node's cores). It calibrates the network (two nodes) and the node (one node; where the
# launches held both placements the file has a set for each), then traces the communication-
# bound ping-pong and halo of tracer/bench/commbound.c RUNS times (5 unless set) on two nodes and
# on one, and a 4-rank job over two nodes of two ranks, and predicts each with the sets combined
# and with one set alone. It prints the median error and the spread of the measured runtimes;
# nothing is asserted. Figures go to tests/bench/RESULTS.md by hand, with the date.
# This machine's TCP loopback varies up to 3× from launch to launch: NETCAL=each calibrates the
# network again just before each two-node run (about a minute each), as a cluster user would
# calibrate at the job's start; NETCAL=once (the default) calibrates it once at the start.
#
#   tests/bench/links.sh                 # about 5 minutes
#   NETCAL=each tests/bench/links.sh     # about 17 minutes
#   RUNS=7 KEEP=/tmp/links tests/bench/links.sh   # keep the traces and calibrations there
#   NODES=one tests/bench/links.sh       # the one-node runs alone (about 3 minutes)
#   EACH=1 NODES=one tests/bench/links.sh   # one-node runs go on (up to MAX, 4 × RUNS unless
#                                        # set) until each placement the node calibration holds
#                                        # a set for has RUNS runs nearest it: the machine picks
#                                        # the placement
#   PROGRAMS=pingpong NODE_PARAMS=/tmp/links/node.toml EACH=1 MAX=100 NODES=one tests/bench/links.sh
#                                        # an earlier node calibration again (a rare placement's
#                                        # runs gathered over several sittings against one set;
#                                        # PROGRAMS: pingpong and halo unless set)
#
# Each one-node run's message speed (`predict`'s `message_speed`: the tracer's round trips
# through MPI at MPI_Init and MPI_Finalize over its set's) is listed with its error: the runs
# within 15% of their set's speed are those a calibration taken in the same conditions stands for.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN=${LOGGPS_PREDICT:-$ROOT/target/release/loggps-predict}
RUNS=${RUNS:-5}
EACH=${EACH:-0}
MAX=${MAX:-$((4 * RUNS))}
NODE_PARAMS=${NODE_PARAMS:-}
NETCAL=${NETCAL:-once}
[[ $NETCAL == once || $NETCAL == each ]] || { echo "NETCAL: expected once or each, found $NETCAL" >&2; exit 2; }
NODES=${NODES:-both}
[[ $NODES == both || $NODES == one ]] || { echo "NODES: expected both or one, found $NODES" >&2; exit 2; }
B=$ROOT/tracer/build-mpich
W=${KEEP:-$(mktemp -d)}
mkdir -p "$W"
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$W"' EXIT
make -s -C tracer MPI=mpich all bench 2>/dev/null
TWO=(mpirun.mpich -launcher fork -hosts nodeA:1,nodeB:1 -genv UCX_TLS tcp,self)
FOUR=(mpirun.mpich -launcher fork -hosts nodeA:2,nodeB:2 -genv UCX_TLS tcp,self)
ONE=(mpirun.mpich)

if [[ $NODES == both ]]; then
  echo "== calibrating: network (two MPICH nodes over TCP), node (one node)"
  "$BIN" calibrate --rtt "$B/loggps-rtt" --tracer "$B/libloggps-trace.so" --mpirun "${TWO[*]}" -o "$W/net.toml" > "$W/net.log" 2>&1 ||
    { cat "$W/net.log"; exit 1; }
fi
if [[ -n $NODE_PARAMS ]]; then
  [[ $NODE_PARAMS -ef $W/node.toml ]] || cp "$NODE_PARAMS" "$W/node.toml"
  echo "class       node: $NODE_PARAMS, calibrated before" > "$W/node.log"
else
  [[ $NODES == both ]] || echo "== calibrating: node (one node)"
  "$BIN" calibrate --rtt "$B/loggps-rtt" --tracer "$B/libloggps-trace.so" --mpirun "${ONE[*]}" -o "$W/node.toml" > "$W/node.log" 2>&1 ||
    { cat "$W/node.log"; exit 1; }
fi
grep -E '^(class|fit|cores|second set)' $([[ $NODES == both ]] && echo "$W/net.log") "$W/node.log" | sed 's/^/  /'
# The node file's first set alone (where it holds two).
python3 - "$W/node.toml" "$W/node1.toml" <<'EOF'
import sys
text = open(sys.argv[1]).read()
if "[[set]]" in text:
    first = text.split("[[set]]")[1]
    text = first.replace("[[set.bands]]", "[[bands]]")
open(sys.argv[2], "w").write(text)
EOF

# run LAUNCHER... -- NAME ARGS: traces one run into $W/NAME.bin. MPICH 4.0.2 at times hangs in
# its own MPI_Finalize on these launches, after the trace is written: a run is ended after 30 s
# and its trace used where it is finalized; else run again (3 tries).
run() {
  local launcher=() name
  while [[ $1 != -- ]]; do launcher+=("$1"); shift; done
  shift
  name=$1
  shift
  for _ in 1 2 3; do
    rm -f "$W/$name.bin"
    timeout 30 "${launcher[@]}" -genv LD_PRELOAD "$B/libloggps-trace.so" \
      -genv LOGGPS_TRACE "$W/$name.bin" "$@" > /dev/null 2>&1 || true
    if [[ -f $W/$name.bin ]] && grep -q 'finalized *yes' <<<"$("$BIN" info "$W/$name.bin")"; then
      return 0
    fi
  done
  echo "FAIL: $name: no finalized trace in 3 launches" >&2
  return 1
}
# err TRACE PARAMS...: the prediction's error, %.
err() {
  local t=$1 args=()
  shift
  for p in "$@"; do args+=(--params "$p"); done
  "$BIN" "$t" "${args[@]}" --format json 2>/dev/null |
    python3 -c 'import json, sys; print("%.2f" % json.load(sys.stdin)["error_pct"])'
}
# speed TRACE PARAMS: the run's message speed against the set of its node pair (nan: none judged)
speed() {
  "$BIN" "$1" --params "$2" --format json 2>/dev/null | python3 -c 'import json, sys
m = [x for x in json.load(sys.stdin).get("message_speed", []) if x["between"] == "node"]
print("%.3f" % m[0]["ratio"] if m else "nan")'
}
# measured, cores, moments, median, range
source "$ROOT/tests/bench/common.sh"
# short TSV: whether some placement the node file holds a set for has fewer than RUNS of the
# one-node runs so far (their cores figure, the fourth column, nearest its set's by ratio).
short() {
  python3 - "$W/node.toml" "$1" "$RUNS" <<'PY'
import math, re, sys
sets = [float(c) for c in re.findall(r"^cores = ([0-9.]+)", open(sys.argv[1]).read(), re.M)]
runs = [l.split() for l in open(sys.argv[2]) if l.strip()]
at = lambda x: min(sets, key=lambda s: abs(math.log(float(x) / s)))
near = [at(r[5]) for r in runs if r[3] != "-" and at(r[5]) == at(r[6])]
sys.exit(0 if any(near.count(c) < int(sys.argv[3]) for c in sets) else 1)
PY
}

printf '\n%-10s %-9s %5s %12s %18s %11s %11s %s\n' program placement runs measured_s measured_min..max combined_% one_set_% "cores ns (one node)"
for prog in ${PROGRAMS:-pingpong halo}; do
  # two nodes: the network set and the node sets, against the node sets alone
  : > "$W/two-$prog.tsv"
  for i in $(seq "$RUNS"); do
    [[ $NODES == both ]] || break
    net=$W/net.toml
    if [[ $NETCAL == each ]]; then
      net=$W/net-$prog-$i.toml
      "$BIN" calibrate --rtt "$B/loggps-rtt" --tracer "$B/libloggps-trace.so" --mpirun "${TWO[*]}" -o "$net" > "$net.log" 2>&1 || { cat "$net.log"; exit 1; }
    fi
    run "${TWO[@]}" -n 2 -- "two-$prog-$i" "$B/bench/commbound" "$prog"
    t=$W/two-$prog-$i.bin
    echo "$(measured "$t") $(err "$t" "$net" "$W/node.toml") $(err "$t" "$W/node.toml")" >> "$W/two-$prog.tsv"
  done
  [[ $NODES == both ]] && printf '%-10s %-9s %5s %12.4f %18s %+11.1f %+11.1f %s\n' "$prog" "two nodes" "$RUNS" \
    "$(cut -d' ' -f1 "$W/two-$prog.tsv" | median)" "$(cut -d' ' -f1 "$W/two-$prog.tsv" | range)" \
    "$(cut -d' ' -f2 "$W/two-$prog.tsv" | median)" "$(cut -d' ' -f3 "$W/two-$prog.tsv" | median)" "-"
  # one node: the node file's sets (both placements, where it holds two), against its first
  # set alone
  : > "$W/one-$prog.tsv"
  i=0
  while ((i < RUNS)) || { ((EACH)) && ((i < MAX)) && short "$W/one-$prog.tsv"; }; do
    i=$((i + 1))
    run "${ONE[@]}" -n 2 -- "one-$prog-$i" "$B/bench/commbound" "$prog"
    t=$W/one-$prog-$i.bin
    echo "$(measured "$t") $(err "$t" "$W/node.toml") $(err "$t" "$W/node1.toml") $(cores "$t") $(speed "$t" "$W/node.toml") $(moments "$t")" >> "$W/one-$prog.tsv"
  done
  printf '%-10s %-9s %5s %12.4f %18s %+11.1f %+11.1f %s\n' "$prog" "one node" "$i" \
    "$(cut -d' ' -f1 "$W/one-$prog.tsv" | median)" "$(cut -d' ' -f1 "$W/one-$prog.tsv" | range)" \
    "$(cut -d' ' -f2 "$W/one-$prog.tsv" | median)" "$(cut -d' ' -f3 "$W/one-$prog.tsv" | median)" \
    "$(cut -d' ' -f4 "$W/one-$prog.tsv" | paste -sd' ')"
  # Each placement the node file holds a set for: the runs whose cores lie nearest its (ratio),
  # their errors with the sets combined.
  python3 - "$W/node.toml" "$W/one-$prog.tsv" <<'PY'
import math, re, statistics, sys
sets = [float(c) for c in re.findall(r"^cores = ([0-9.]+)", open(sys.argv[1]).read(), re.M)]
runs = [l.split() for l in open(sys.argv[2]) if l.strip()]
at = lambda x: min(sets, key=lambda s: abs(math.log(float(x) / s)))
for c in sets:
    # a run whose cores lay nearest another set at MPI_Finalize than at MPI_Init moved: left out
    near = lambda r: r[3] != "-" and at(r[5]) == c and at(r[6]) == c
    errs = [float(r[1]) for r in runs if near(r)]
    each = ", ".join("%+.1f" % e for e in errs)
    mid = "%+.1f%%" % statistics.median(errs) if errs else "none"
    print("  %-18s runs nearest the %.0f ns set: %d, median %s (%s)" % ("", c, len(errs), mid, each))
    # of those, the runs whose messages ran within 15% of the set's speed
    same = [float(r[1]) for r in runs if near(r) and r[4] != "nan"
            and abs(math.log(float(r[4]))) < math.log(1.15)]
    speeds = ", ".join(r[4] for r in runs if near(r))
    if errs:
        mid = "%+.1f%%" % statistics.median(same) if same else "none"
        print("  %-18s   at the set's message speed (within 15%%): %d, median %s; speeds %s" % ("", len(same), mid, speeds))
moved = [r for r in runs if r[3] != "-" and at(r[5]) != at(r[6])]
if moved:
    print("  %-18s runs that moved between MPI_Init and MPI_Finalize (left out above): %d (%s)" % (
        "", len(moved), ", ".join("%s→%s ns %+.1f%%" % (r[5], r[6], float(r[1])) for r in moved)))
PY
done

# Four ranks over two nodes of two, 200 exchanges of 1 KiB: both classes in one prediction (4 ranks on 2 cores take
# turns: its accuracy says little here).
[[ $NODES == both ]] || exit 0
run "${FOUR[@]}" -n 4 -- four-halo "$B/bench/commbound" halo 1024 200
"$BIN" "$W/four-halo.bin" --params "$W/net.toml" --params "$W/node.toml" --format json 2>/dev/null |
  python3 -c 'import json, sys
v = json.load(sys.stdin)
share = ["/".join("%.0f" % p for p in r) for r in v["links"]["bytes_pct_by_rank"]]
print("\nfour ranks, two nodes of two (halo): predicted %.4f s, measured %.4f s (%+.1f%%, oversubscribed); bytes by set (%s) per rank: %s" % (
  v["predicted_s"], v["measured_s"], v["error_pct"], " / ".join(s["class"] for s in v["links"]["sets"]), "  ".join(share)))'
