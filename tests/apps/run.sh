#!/usr/bin/env bash
# Real applications from Debian's packages, traced on 2 ranks under Open MPI and predicted with
# this machine's parameters: HPCC (small N), LAMMPS (an LJ melt of 4,000 atoms), NetPIPE (sizes
# up to 64 KiB, 50 repetitions each), Quantum ESPRESSO's pw.x (Fortran: silicon, 2 atoms) and
# an mpi4py script at mpi4py's default settings; and the communication-bound suite of
# tracer/bench/commbound.c (cb-pingpong 8 B-512 KiB, cb-halo with Isend/Irecv/Waitall and
# overlapping computation, cb-halo-packed the same with its boundary written before each
# exchange, cb-collectives, cb-cg). Each runs RUNS times (3 unless set). A run
# fails the script if its trace does not load, a message has no partner or a request is never
# completed, or (first run) its GOAL schedule (`convert`) predicts more than 0.5% off the trace
# under LogGP with every parameter 0; the accuracy is printed, as the median error over the runs (async_%: under
# --progress async, the paper's model) and the spread of the measured runtimes (2 ranks on this
# 2-core machine vary from launch to launch), never asserted. Each prediction is set against
# the run it predicts: a traced run against its trace replayed with the tracer's own time kept
# in the gaps (`--keep-tracer-time`: predicted_s, error_%, async_%, same_cores_%), an untraced
# run against the default prediction, which takes that time out (untraced_%). The tracer times a cache line's
# round trip between the two ranks' cores at MPI_Init and MPI_Finalize (as calibrate does), and
# line_ns prints the range over the runs: where it differs from the calibration's by 2x or more,
# the ranks ran on cores nearer or farther apart (a hypervisor moves them here), shared-memory
# messages cost another price, and the predictor warns. same_cores_% is the median error over
# the runs that did not (n/RUNS); the calibration's figure is the `cores` of its file's set
# nearest the run's (the set the replay picks; one a placement the calibration saw), else the
# fastest run's. The communication-bound programs also run untraced after each traced run (they
# print the span a trace measures, MPI_Init's return to MPI_Finalize's call): untraced_% is the
# median error of the prediction against those runs (the tracer's own time per record, timed at
# MPI_Init, is taken out of the traced gaps), against the untraced median runtime untraced_s;
# untraced_same_% the same over the untraced runs at the calibration's cores alone (each times
# a cache line between the ranks' cores as it starts, as the tracer does), with how many.
# The tracer also times a message's round trip through MPI at MPI_Init and MPI_Finalize, and
# the predictor reports its ratio to the set's (message_speed) and warns where it lies 15% or
# more off (one placement of the cores runs launches at speeds 25% apart here): same_speed_% is
# same_cores_% over the runs within 15%, with how many; run_speed_% the median error of each
# traced run predicted at its own message speed (`--at-run-speed`: the machine's speed of the
# moment divided out), over the runs the figure judged, with how many.
#
# The parameters are calibrated once at the start (`calibrate`, about 20 s: a machine's speed
# drifts over hours, and CI runs on another machine than the one traces/params.toml came from).
#
#   tests/apps/run.sh                  # every application
#   PARAMS=traces/params.toml tests/apps/run.sh   # with stored parameters instead
#   APPS="hpcc" RUNS=7 tests/apps/run.sh
#   CALIBRATE=1 RUNS=7 tests/apps/run.sh   # each run predicted with a calibration taken just
#                                          # before it (this machine's speed drifts by minutes)
#   PREDICT_ARGS="--coll measured" tests/apps/run.sh   # predictor flags for every run
#   VERBOSE=1 tests/apps/run.sh        # every run's figures too
#   KEEP=/tmp/apps tests/apps/run.sh   # and keep each app's traces and runs.tsv there
#   README=1 RUNS=5 tests/apps/run.sh  # and write the table of README.md's "Real applications"
#                                      # from this run (its date, machine and settings with it)
set -euo pipefail
PARAMS_GIVEN=${PARAMS:-}
PARAMS=${PARAMS:+$(realpath "$PARAMS")}   # the caller's path, before the cd
cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN=${LOGGPS_PREDICT:-$ROOT/target/release/loggps-predict}
TRACER=${TRACER:-$ROOT/tracer/build-openmpi/libloggps-trace.so}
RUNS=${RUNS:-3}
APPS=${APPS:-"hpcc lammps netpipe qe mpi4py cb-pingpong cb-halo cb-halo-packed cb-collectives cb-cg"}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# KEEP=DIR keeps the runs (each app's traces, runs.tsv) in DIR.
W=${KEEP:-$(mktemp -d)}
mkdir -p "$W"
[[ -n ${KEEP:-} ]] || trap 'rm -rf "$W"' EXIT
make -s -C "$ROOT/tracer" MPI=openmpi all bench
if [[ -z $PARAMS && ${CALIBRATE:-0} != 1 ]]; then
  PARAMS=$W/params.toml
  "$BIN" calibrate --mpirun mpirun.openmpi -o "$PARAMS" > "$W/calibrate.txt" 2>&1 ||
    { cat "$W/calibrate.txt"; echo "FAIL: the calibration failed"; exit 1; }
  # (its bands, their Od and Op, departs_upto, oc, bounce and clean too: what a surprising figure rests on)
  grep -E '^(fit|again|cores|second set|WARNING|band |[0-9]+ +[0-9]+ …|split|departs|oc |clean |bounce |detours )' \
    "$W/calibrate.txt" | sed 's/^/calibrated: /'
fi

# The command of application $1, run in $W/$1.
command_of() {
  case $1 in
    hpcc) sed -e 's/^1000 *Ns/1200         Ns/' -e 's/^2 *Ps/1            Ps/' \
            /usr/share/doc/hpcc/examples/_hpccinf.txt > hpccinf.txt
          echo hpcc ;;
    lammps) echo "lmp -in $ROOT/tests/apps/in.lj -log none -screen none" ;;
    netpipe) echo "NPopenmpi -u 65536 -n 50 -p 0 -o /dev/null" ;;
    qe) echo "pw.x -in $ROOT/tests/apps/si.in" ;;
    mpi4py) echo "/usr/bin/python3 $ROOT/tracer/tests/mpi4py_pingpong.py" ;;
    cb-*) echo "$ROOT/tracer/build-openmpi/bench/commbound ${1#cb-}" ;;
    *) echo "unknown application $1" >&2; exit 2 ;;
  esac
}

# README.md's name of application $1.
title_of() {
  case $1 in
    hpcc) echo "HPCC, N = 1200" ;;
    lammps) echo "LAMMPS, LJ melt, 4,000 atoms" ;;
    netpipe) echo "NetPIPE, up to 64 KiB" ;;
    qe) echo "Quantum ESPRESSO \`pw.x\` (Fortran), Si" ;;
    mpi4py) echo "mpi4py ping-pong, default settings" ;;
    cb-pingpong) echo "ping-pong, 8 B – 512 KiB" ;;
    cb-halo) echo "Isend/Irecv halo, 1 and 16 KiB" ;;
    cb-halo-packed) echo "the halo, its boundary packed before each exchange" ;;
    cb-collectives) echo "collectives loop, 1 KiB" ;;
    cb-cg) echo "CG-like loop" ;;
  esac
}
: > "$W/table.md"

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
# The median of the numbers read with how many of ALL they are, as "+1.2 (2/3)"; "none (0/3)".
median_or_none() { sort -g | awk -v all="$1" '{v[NR] = $1} END {if (NR == 0) {printf "none (0/%d)", all; exit}
  printf "%+.1f (%d/%d)", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), NR, all}'; }

printf '%-14s %8s %11s %11s %8s %8s %20s %11s %13s %13s %13s %10s %10s %15s %s\n' app events measured_s predicted_s error_% async_% \
  measured_min..max_s line_ns same_cores_% same_speed_% run_speed_% untraced_s untraced_% untraced_same_% "comp/comm/ssync/rsync_% (last run)"
# The cache-line round trip a parameters file states (calibrate's `cores`) nearest NS (the ratio;
# a file holds a set for each placement its calibration saw), if it states any: cores_of FILE NS.
cores_of() {
  sed -n 's/^cores = \([0-9.]*\).*/\1/p' "$1" | awk -v ns="$2" '
    { d = ns > 0 ? log($1 / ns) : 0; if (d < 0) d = -d
      if (best == "" || d < bd) { best = $1; bd = d } }
    END { if (best != "") print best }'
}
# The cache-line round trips between the two ranks' cores that trace $1 timed at MPI_Init and at
# MPI_Finalize, ns ("-1 -1" if none).
cores() {
  "$BIN" info "$1" --format json | python3 -c 'import json, sys
c = json.load(sys.stdin)["cores"]
print("%.0f %.0f" % (c[0]["init_ns"], c[0]["final_ns"]) if c else "-1 -1")'
}
all_same=0 all_runs=0
for app in $APPS; do
  mkdir -p "$W/$app"
  cd "$W/$app"
  cmd=$(command_of "$app")
  : > runs.tsv
  for i in $(seq "$RUNS"); do
    t="$W/$app/run$i.bin"
    if [[ ${CALIBRATE:-0} == 1 ]]; then
      PARAMS=$W/$app/params$i.toml
      "$BIN" calibrate --mpirun mpirun.openmpi --launches 1 -o "$PARAMS" > calibrate.txt 2>&1 ||
        { cat calibrate.txt; echo "FAIL $app: calibration failed"; exit 1; }
    fi
    # shellcheck disable=SC2086
    LOGGPS_TRACE=$t mpirun.openmpi -np 2 -x LOGGPS_TRACE -x LD_PRELOAD="$TRACER" $cmd \
      > out.txt 2> err.txt || { cat out.txt err.txt; echo "FAIL $app: the job failed"; exit 1; }
    read -r line after < <(cores "$t")
    # shellcheck disable=SC2086
    "$BIN" "$t" --params "$PARAMS" ${PREDICT_ARGS:-} --format json > pred.json 2> warn.txt ||
      { cat warn.txt; echo "FAIL $app: its trace was refused"; exit 1; }
    if grep -E "no matching|never completed|not finalized" warn.txt; then
      echo "FAIL $app: run $i's trace lacks partners or completions"; exit 1
    fi
    if [[ $i == 1 ]]; then
      # Ours -> GOAL -> ours predicts the same (issue 62): a real trace's calls GOAL has no word
      # for (failed polls, probes, cancels, communicator calls) keep their time. With every
      # LogGP parameter 0 the replay's collectives and GOAL's expansion of them cost alike (with
      # g and G they differ: MODEL.md §7); the check is there, the LogGP figure printed.
      "$BIN" convert "$t" "$W/$app/run1.goal" --force 2> goal-warn.txt ||
        { cat goal-warn.txt; echo "FAIL $app: its trace was not written as GOAL"; exit 1; }
      loggp() {
        "$BIN" "$1" --model loggp "${@:2}" --format json 2>/dev/null |
          grep -o '"predicted_s": *[0-9.e+-]*' | grep -o '[0-9.e+-]*$'
      }
      zero=(--L 0 --o 0 --g 0 --G 0) some=(--L 1000 --o 200 --g 100 --G 0.1)
      awk -v a="$(loggp "$t" "${zero[@]}")" -v b="$(loggp "$W/$app/run1.goal" "${zero[@]}")" \
        -v c="$(loggp "$t" "${some[@]}")" -v d="$(loggp "$W/$app/run1.goal" "${some[@]}")" -v app="$app" 'BEGIN {
        z = (b - a) / a * 100; l = (d - c) / c * 100
        printf "%s: through GOAL %+.4f%% with every LogGP parameter 0, %+.3f%% with L 1000 o 200 g 100 G 0.1\n", app, z, l
        exit (z > 0.5 || z < -0.5) }' ||
        { echo "FAIL $app: its GOAL schedule predicts more than 0.5% off its trace"; exit 1; }
    fi
    events=$("$BIN" info "$t" --format json | grep -o '"events": *[0-9]*' | grep -o '[0-9]*$')
    pred=$(grep -o '"predicted_s": *[0-9.e+-]*' pred.json | grep -o '[0-9.e+-]*$')
    meas=$(grep -o '"measured_s": *[0-9.e+-]*' pred.json | grep -o '[0-9.e+-]*$')
    # The traced run's own prediction (the tracer's time kept), and the same under the paper's
    # model, messages moving in the background.
    predicted() {
      # shellcheck disable=SC2086
      "$BIN" "$t" --params "$PARAMS" ${PREDICT_ARGS:-} --keep-tracer-time "$@" --format json 2>/dev/null |
        grep -o '"predicted_s": *[0-9.e+-]*' | grep -o '[0-9.e+-]*$'
    }
    traced=$(predicted)
    async=$(predicted --progress async)
    # ... and at the run's own message speed (the machine's speed of the moment divided out)
    at_speed=$(predicted --at-run-speed)
    # (the larger of the run's two figures, as the replay picks its set)
    cal=$(cores_of "$PARAMS" "$(awk -v a="${line:--1}" -v b="${after:--1}" 'BEGIN {print (a + 0 > b + 0 ? a : b)}')")
    # The same program untraced, right after (the same placement, most often).
    plain=nan plain_line=-1
    if [[ $app == cb-* ]]; then
      # shellcheck disable=SC2086
      COMMBOUND_TIMES=1 mpirun.openmpi -np 2 -x COMMBOUND_TIMES $cmd > plain.txt 2>&1 ||
        { cat plain.txt; echo "FAIL $app: the untraced job failed"; exit 1; }
      plain=$(awk '/^commbound span/ {if (b == "" || $4 < b) b = $4; if ($5 > e) e = $5}
        END {if (b == "") print "nan"; else printf "%.9f", e - b}' plain.txt)
      plain_line=$(awk '/^commbound cores/ {print $3}' plain.txt)
    fi
    # The messages' speed against the set's (the report's message_speed: the node's first pair's
    # ratio, 1.25 for 25% slower), else nan.
    speed=$( (grep -o '"ratio": *[0-9.e+-]*' pred.json || true) | head -1 | grep -o '[0-9.e+-]*$' || true)
    echo "$events $meas $pred $async ${line:--1} ${cal:--1} ${after:--1} $plain ${plain_line:--1} $traced ${speed:-nan} ${at_speed:-nan}" >> runs.tsv
  done
  # VERBOSE=1: every run (events, measured s, predicted s, under async, line ns at its Init, the
  # calibration's line ns or -1, line ns at its Finalize, the untraced run's span s or nan, the
  # untraced run's line ns at its start or -1, predicted s with the tracer's time kept, the
  # messages' speed against the set's or nan, predicted s at that speed).
  [[ ${VERBOSE:-0} == 1 ]] && sed "s/^/  $app run: /" runs.tsv
  # The average rank's four parts, as shares of its end.
  parts=$(sed -n '/"average"/,/}/p' pred.json | grep -o '[a-z_]*_s": *[0-9.e+-]*' | tr -d '"' |
    awk -F': *' '{v[$1] = $2} END {e = v["end_s"]; if (e <= 0) e = 1;
      printf "%.0f/%.0f/%.0f/%.0f", 100 * v["computation_s"] / e, 100 * v["communication_s"] / e,
        100 * v["sender_sync_s"] / e, 100 * v["receiver_sync_s"] / e}')
  ev=$(cut -d' ' -f1 runs.tsv | median)
  me=$(cut -d' ' -f2 runs.tsv | median)
  pr=$(cut -d' ' -f10 runs.tsv | median)
  er=$(awk '{print 100 * ($10 - $2) / $2}' runs.tsv | median)
  ers=$(awk '$12 != "nan" {print 100 * ($12 - $2) / $2}' runs.tsv | median_or_none "$(grep -c . runs.tsv)")
  ea=$(awk '{print 100 * ($4 - $2) / $2}' runs.tsv | median)
  un=nan eu=nan
  if [[ $(cut -d' ' -f8 runs.tsv | head -1) != nan ]]; then
    un=$(cut -d' ' -f8 runs.tsv | median)
    eu=$(awk '{print 100 * ($3 - $8) / $8}' runs.tsv | median)
  fi
  lo=$(cut -d' ' -f2 runs.tsv | sort -g | head -1)
  hi=$(cut -d' ' -f2 runs.tsv | sort -g | tail -1)
  lines=$(awk '{print $5; print $7}' runs.tsv | sort -g | sed -n '1p;$p' | paste -sd' ' | awk '{print $1 ".." $2}')
  # Runs on cores as near as the calibration's (within 2x, before and after), and their median
  # error.
  fastest=$(awk '{print $5; print $7}' runs.tsv | sort -g | head -1)
  same=$(awk -v f="$fastest" '{ref = $6 > 0 ? $6 : f
    if ($5 > 0 && $7 > 0 && $5 < 2 * ref && ref < 2 * $5 && $7 < 2 * ref && ref < 2 * $7) print}' runs.tsv)
  n_same=$(printf '%s' "$same" | grep -c . || true)
  se=$( ((n_same > 0)) && printf '%s\n' "$same" | awk '{print 100 * ($10 - $2) / $2}' | median || echo nan)
  same_cores=$(printf '%+.1f (%d/%d)' "$se" "$n_same" "$(grep -c . runs.tsv)")
  ((n_same > 0)) || same_cores="none (0/$(grep -c . runs.tsv))"
  all_same=$((all_same + n_same)) all_runs=$((all_runs + $(grep -c . runs.tsv)))
  same_speed=$(printf '%s\n' "$same" |
    awk 'NF && $11 != "nan" && $11 < 1.15 && 1.15 * $11 > 1 {print 100 * ($10 - $2) / $2}' |
    median_or_none "$(grep -c . runs.tsv)")
  # The untraced runs at the calibration's cores (their own line within 2x of it): the error
  # of each traced run's prediction against its untraced run, median.
  plain_same="–"
  if [[ $un != nan ]]; then
    plain_same=$(awk -v f="$fastest" '{ref = $6 > 0 ? $6 : f
      if ($9 > 0 && $9 < 2 * ref && ref < 2 * $9) print 100 * ($3 - $8) / $8}' runs.tsv |
      median_or_none "$(grep -c . runs.tsv)")
  fi
  printf '%-14s %8s %11.4f %11.4f %+8.1f %+8.1f %9.4f..%-9.4f %11s %13s %13s %13s %10.4f %+10.1f %15s %s\n' "$app" "$ev" "$me" "$pr" "$er" "$ea" \
    "$lo" "$hi" "$lines" "$same_cores" "$same_speed" "$ers" "$un" "$eu" "$plain_same" "$parts"
  untraced="–"
  [[ $eu != nan ]] && untraced=$(printf '%+.1f%% (%.4g s)' "$eu" "$un")
  printf '| %s | %s | %.4g (%.4g–%.4g) | %.4g | %+.1f%% | %s | %s | %s%% |\n' "$(title_of "$app")" "$ev" "$me" "$lo" "$hi" "$pr" \
    "$er" "$(echo "$same_cores" | sed 's/^\([-+][0-9.]*\)/\1%/')" "$untraced" "$(echo "$parts" | sed 's|/| / |g')" |
    sed 's/-\([0-9.]*%\)/−\1/g' >> "$W/table.md"
  cd "$ROOT"
done

# README=1: the table of README.md's "Real applications" section, between its markers, from this
# run (never copied by hand); not where most runs ran at another placement of the cores than the
# calibration's (its set then prices their messages at another machine's speed).
if [[ ${README:-0} == 1 ]] && ((2 * all_same < all_runs)); then
  echo "README.md left as it was: $all_same of $all_runs runs ran at the calibration's placement of the cores; run again"
elif [[ ${README:-0} == 1 ]]; then
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
  how="each predicted with a calibration taken at the start"
  [[ ${CALIBRATE:-0} == 1 ]] && how="each run predicted with a calibration taken just before it"
  [[ -n ${PARAMS_GIVEN:-} ]] && how="predicted with $PARAMS_GIVEN"
  {
    echo "<!-- apps: written by tests/apps/run.sh README=1; do not edit by hand -->"
    echo "$(date -u +%Y-%m-%d), $(nproc) × $cpu, $RUNS runs of each, $how; medians (the measured range in brackets). A traced run is predicted with the tracer's own time kept (\`--keep-tracer-time\`), an untraced one with it taken out (the default):"
    echo
    echo "| application | events | measured (s) | predicted (s) | error | error, runs at the calibration's cores | error against untraced runs (their runtime) | comp / comm / sender / receiver sync |"
    echo "|---|---|---|---|---|---|---|---|"
    cat "$W/table.md"
    echo "<!-- /apps -->"
  } > "$W/block.md"
  python3 - "$ROOT/README.md" "$W/block.md" <<'PY'
import sys
readme, block = sys.argv[1], open(sys.argv[2]).read()
text = open(readme).read()
start, end = text.index("<!-- apps:"), text.index("<!-- /apps -->") + len("<!-- /apps -->\n")
open(readme, "w").write(text[:start] + block + text[end:])
PY
  echo "README.md: the applications table written from this run"
fi

