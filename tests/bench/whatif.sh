#!/usr/bin/env bash
# What-if on the eager limit, measured (the paper's Table 7 method on code where `S` matters):
# the communication-bound programs of tracer/bench/commbound.c traced RUNS times (5 unless set)
# under Open MPI's default shared-memory eager limit and under `btl_vader_eager_limit` 65536.
# One calibration measures both protocols between the two limits (`calibrate --eager-mpirun`:
# its set's S is the default's, its eager bands above S reach the higher limit E). Each trace
# is predicted at its own limit (`own`: S, or --S E for the traces at 65536) and at the other
# (`what-if`: --S E for the default traces, against the runs made at 65536, and --S S the
# reverse); `one protocol`: the default traces' what-if with the eager bands above S taken out
# of the set (each size costed by the protocol it was measured under, as before them). It
# prints the median errors, the measured runtimes' medians and ranges, and the runs'
# cache-line figures (runs at another placement than the calibration's are predicted at other
# costs: see tests/apps/run.sh), the own and what-if medians with each trace predicted at its
# run's message speed (`--at-run-speed`), and the same medians over the runs at each placement the
# calibration kept a set for (each run is predicted with the set nearest it). Each traced run
# is followed by an untraced one at the same limit (the program prints the span a trace
# measures, MPI_Init's return to MPI_Finalize's call): `own_u` and `what_if_u` are the same
# medians against the untraced runs, which a prediction targets (it takes the tracer's own time
# out, MODEL.md §16). Nothing is asserted.
# Figures go to tests/bench/RESULTS.md by hand.
#
#   tests/bench/whatif.sh                       # about 2 minutes
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

echo "== calibrating at the default eager limit, the sizes up to $BIG eager too"
"$BIN" calibrate --mpirun "${DEFAULT[*]}" --eager-mpirun "${EAGER[*]}" -o "$W/both.toml" \
  > "$W/both.log" 2>&1 || { cat "$W/both.log"; exit 1; }
grep -E '^(fit|cores|eager|WARNING)' "$W/both.log" | sed 's/^/  /'
# (S and E of the first set, where the calibration kept a set for each placement it met: the
# file's [[set]] tables, each with its [[set.bands]] and [[set.eager_bands]])
S=$(sed -n 's/^S = //p' "$W/both.toml" | head -1)
E=$(awk '/^\[\[(set\.)?eager_bands\]\]/ {e = 1} e && /^\[\[set\]\]/ {exit}
  e && /^hi = / {hi = $3} END {print hi}' "$W/both.toml")
[[ -n $E ]] || { echo "the calibration found no eager limit above S = $S: no eager bands"; exit 1; }
# The same sets without their eager bands above S: each size by the protocol it was measured under.
awk '/^\[\[(set\.)?eager_bands\]\]/ {skip = 1; next} /^\[/ {skip = 0} !skip' "$W/both.toml" > "$W/one.toml"
echo "  S = $S B, eager bands above it to E = $E B"

# trace LAUNCHER... -- NAME PROGRAM: one traced run into $W/NAME.bin.
trace() {
  local launcher=() name
  while [[ $1 != -- ]]; do launcher+=("$1"); shift; done
  name=$2
  rm -f "$W/$name.bin"
  LOGGPS_TRACE=$W/$name.bin "${launcher[@]}" -np 2 -x LOGGPS_TRACE \
    -x LD_PRELOAD="$B/libloggps-trace.so" "$B/bench/commbound" "$3" > /dev/null 2>&1
}
# untraced LAUNCHER... -- PROGRAM: an untraced run's span, s (nan where it printed none).
untraced() {
  local launcher=()
  while [[ $1 != -- ]]; do launcher+=("$1"); shift; done
  COMMBOUND_TIMES=1 "${launcher[@]}" -np 2 -x COMMBOUND_TIMES "$B/bench/commbound" "$2" 2>&1 |
    awk '/^commbound span/ {if (b == "" || $4 < b) b = $4; if ($5 > e) e = $5}
      END {if (b == "") print "nan"; else printf "%.9f", e - b}'
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

# Each set's cache-line figure (its placement: each set's eager costs above S were measured at
# its own, where a launch under the higher limit ran there; a set without them costs its sizes
# above S with its rendezvous bands, and predict warns of it): a run held a set's placement where
# its own figure lies within 2x of the set's; the "at" columns are the medians over the runs at
# each set's placement alone (the other limit's runs there too), with how many of each limit.
SETS=$(sed -n 's/^cores = //p' "$W/both.toml" | paste -sd' ')
EAGER_SETS=$(grep -c '^# eager_bands' "$W/both.toml" || true)
echo "  the sets' placements: a cache line's round trip ${SETS:-unknown} ns; $EAGER_SETS of them with eager bands above S"
printf '\n%-12s %-8s %10s %16s %8s %9s %13s %8s %9s %10s %8s %11s  %s\n' program limit measured_s measured_min..max own_% what_if_% \
  one_protocol_% own@run what_if@run untraced_s own_u_% what_if_u_% "at each set's placement: own_% (runs), what_if_% (runs); the runs' cores ns"
for prog in $PROGRAMS; do
  : > "$W/$prog.tsv"
  for i in $(seq "$RUNS"); do
    trace "${DEFAULT[@]}" -- "d-$prog-$i" "$prog"
    trace "${EAGER[@]}" -- "e-$prog-$i" "$prog"
    du=$(untraced "${DEFAULT[@]}" -- "$prog") eu=$(untraced "${EAGER[@]}" -- "$prog")
    d=$W/d-$prog-$i.bin e=$W/e-$prog-$i.bin
    # measured, own prediction, what-if, what-if with one protocol a size, cores: a line a trace
    # (then the own prediction and the what-if at the run's message speed: --at-run-speed)
    echo "d $(measured "$d") $(predicted "$d" --params "$W/both.toml") $(predicted "$d" --params "$W/both.toml" --S "$E") $(predicted "$d" --params "$W/one.toml" --S "$E") $(cores "$d") $(predicted "$d" --params "$W/both.toml" --at-run-speed) $(predicted "$d" --params "$W/both.toml" --S "$E" --at-run-speed) $du" >> "$W/$prog.tsv"
    echo "e $(measured "$e") $(predicted "$e" --params "$W/both.toml" --S "$E") $(predicted "$e" --params "$W/both.toml" --S "$S") - $(cores "$e") $(predicted "$e" --params "$W/both.toml" --S "$E" --at-run-speed) $(predicted "$e" --params "$W/both.toml" --S "$S" --at-run-speed) $eu" >> "$W/$prog.tsv"
  done
  col() { awk -v k="$1" -v c="$2" '$1 == k {print $c}' "$W/$prog.tsv"; }
  # held K C F: column C of limit K's runs that held the placement of cores F ns.
  held() {
    awk -v k="$1" -v c="$2" -v f="$3" '$1 == k && $6 != "-" && $6 < 2 * f && f < 2 * $6 {print $c}' "$W/$prog.tsv"
  }
  for k in d e; do
    other=$([[ $k == d ]] && echo e || echo d)
    m=$(col $k 2 | median) mo=$(col $other 2 | median)
    own=$(col $k 3 | median) what=$(col $k 4 | median)
    one=$([[ $k == d ]] && err "$(col $k 5 | median)" "$mo" || echo -)
    at=""
    for f in $SETS; do
      n=$(held $k 2 "$f" | grep -c . || true) no=$(held $other 2 "$f" | grep -c . || true)
      held_own="none" held_what="none"
      if ((n > 0)); then
        held_own="$(err "$(held $k 3 "$f" | median)" "$(held $k 2 "$f" | median)")"
        ((no > 0)) && held_what="$(err "$(held $k 4 "$f" | median)" "$(held $other 2 "$f" | median)")"
      fi
      at+="at ${f%.*} ns: $held_own ($n/$RUNS), $held_what ($no); "
    done
    own_run=$(col $k 7 | median) what_run=$(col $k 8 | median)
    u=$(col $k 9 | grep -v nan | median) uo=$(col $other 9 | grep -v nan | median)
    printf '%-12s %-8s %10.4f %16s %8s %9s %13s %8s %9s %10.4f %8s %11s  %s\n' "$prog" "$([[ $k == d ]] && echo default || echo "$BIG")" \
      "$m" "$(col $k 2 | range)" "$(err "$own" "$m")" "$(err "$what" "$mo")" "$one" \
      "$(err "$own_run" "$m")" "$(err "$what_run" "$mo")" "$u" "$(err "$own" "$u")" "$(err "$what" "$uo")" \
      "$at$(col $k 6 | paste -sd' ')"
  done
done
echo "own_%: each limit's traces at their own limit (default: S = $S; $BIG: --S $E); what_if_%: at the other"
echo "limit, against the medians of the runs made there; one_protocol_%: the default traces' what-if"
echo "without the eager bands above S (medians of predictions); at each set's placement: the same over the"
echo "runs there (their cores within 2x of the set's), with how many of this limit's (and of the other's);"
echo "own@run, what_if@run: own_% and what_if_% with each trace predicted at its run's message speed"
echo "(--at-run-speed: the machine's speed of the moment divided out; the what-if against the other"
echo "limit's runs as measured); untraced_s: the untraced runs' median span at this limit; own_u_%,"
echo "what_if_u_%: own_% and what_if_% against the untraced runs (this limit's, the other's)"
