#!/usr/bin/env bash
# What-if on the eager limit, measured (the paper's Table 7 method on code where `S` matters):
# the communication-bound programs of tracer/bench/commbound.c traced RUNS times (5 unless set)
# under Open MPI's default shared-memory eager limit and under `btl_vader_eager_limit` 65536,
# each calibrated at its own limit first. A trace taken at the default is predicted with its
# calibration and `--S 65536` against the runs made at 65536, and the reverse (`--S` the
# default calibration's measured limit); beside them, each trace with its own calibration. It
# prints the median errors, the measured runtimes' medians and ranges, and the runs' cache-line
# figures (runs at another placement than the calibrations' are predicted at other costs: see
# tests/apps/run.sh); nothing is asserted. Figures go to tests/bench/RESULTS.md by hand.
#
#   tests/bench/whatif.sh                       # about 3 minutes
#   RUNS=7 PROGRAMS="pingpong halo" KEEP=/tmp/whatif tests/bench/whatif.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN=${LOGGPS_PREDICT:-$ROOT/target/release/loggps-predict}
RUNS=${RUNS:-5}
PROGRAMS=${PROGRAMS:-"pingpong halo collectives cg"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
W=${KEEP:-$(mktemp -d)}
mkdir -p "$W"
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$W"' EXIT
make -s -C tracer MPI=openmpi all bench
B=$ROOT/tracer/build-openmpi
BIG=65536
DEFAULT=(mpirun.openmpi)
EAGER=(mpirun.openmpi --mca btl_vader_eager_limit "$BIG")

echo "== calibrating at the default eager limit and at $BIG"
"$BIN" calibrate --mpirun "${DEFAULT[*]}" -o "$W/default.toml" > "$W/default.log" 2>&1 ||
  { cat "$W/default.log"; exit 1; }
"$BIN" calibrate --mpirun "${EAGER[*]}" -o "$W/eager.toml" > "$W/eager.log" 2>&1 ||
  { cat "$W/eager.log"; exit 1; }
grep -E '^(fit|cores|eager limit|WARNING)' "$W/default.log" "$W/eager.log" | sed 's/^/  /'
S_DEFAULT=$(sed -n 's/^S = //p' "$W/default.toml")

# trace LAUNCHER... -- NAME PROGRAM: one traced run into $W/NAME.bin.
trace() {
  local launcher=() name
  while [[ $1 != -- ]]; do launcher+=("$1"); shift; done
  name=$2
  rm -f "$W/$name.bin"
  LOGGPS_TRACE=$W/$name.bin "${launcher[@]}" -np 2 -x LOGGPS_TRACE \
    -x LD_PRELOAD="$B/libloggps-trace.so" "$B/bench/commbound" "$3" > /dev/null 2>&1
}
# predicted TRACE ARGS...: the predicted runtime, s.
predicted() {
  local t=$1
  shift
  "$BIN" "$t" "$@" --format json 2>/dev/null |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["predicted_s"])'
}
# measured, cores, median, range
source "$ROOT/tests/bench/common.sh"
# err PREDICTED MEASURED: the error, %.
err() { awk -v p="$1" -v m="$2" 'BEGIN {printf "%+.1f", 100 * (p - m) / m}'; }

printf '\n%-12s %-8s %10s %16s %8s %9s %14s %s\n' program limit measured_s measured_min..max own_% what_if_% what_if_vs_s "cores ns"
for prog in $PROGRAMS; do
  : > "$W/$prog.tsv"
  for i in $(seq "$RUNS"); do
    trace "${DEFAULT[@]}" -- "d-$prog-$i" "$prog"
    trace "${EAGER[@]}" -- "e-$prog-$i" "$prog"
    d=$W/d-$prog-$i.bin e=$W/e-$prog-$i.bin
    # measured, own prediction, what-if prediction, cores: a line a trace
    echo "d $(measured "$d") $(predicted "$d" --params "$W/default.toml") $(predicted "$d" --params "$W/default.toml" --S "$BIG") $(cores "$d")" >> "$W/$prog.tsv"
    echo "e $(measured "$e") $(predicted "$e" --params "$W/eager.toml") $(predicted "$e" --params "$W/eager.toml" --S "$S_DEFAULT") $(cores "$e")" >> "$W/$prog.tsv"
  done
  col() { awk -v k="$1" -v c="$2" '$1 == k {print $c}' "$W/$prog.tsv"; }
  for k in d e; do
    other=$([[ $k == d ]] && echo e || echo d)
    m=$(col $k 2 | median) mo=$(col $other 2 | median)
    own=$(col $k 3 | median) what=$(col $k 4 | median)
    printf '%-12s %-8s %10.4f %16s %8s %9s %14s %s\n' "$prog" "$([[ $k == d ]] && echo default || echo "$BIG")" \
      "$m" "$(col $k 2 | range)" "$(err "$own" "$m")" "$(err "$what" "$mo")" \
      "$([[ $k == d ]] && echo "--S $BIG" || echo "--S $S_DEFAULT")" "$(col $k 5 | paste -sd' ')"
  done
done
echo "own_%: each limit's traces with their own calibration; what_if_%: the same traces predicted with"
echo "the other limit as --S, against the medians of the runs made at that limit (medians of predictions)"
