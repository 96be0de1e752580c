#!/usr/bin/env bash
# The calibration's fit on recorded measurements (issue 64, item 2): each `calibrate --samples`
# file given (default: the ones kept in fixtures/calibration/ and traces/) fitted in bands by
# this build, and the round trips it misses by more than 5% listed. No MPI run: the same files
# fitted by two builds compare their fits exactly.
#
#   tests/bench/fit.sh                         # the kept samples
#   tests/bench/fit.sh /tmp/a.tsv /tmp/b.tsv:8255   # any others (`:S`: the eager limit, bytes,
#                                              # else S is below the strongest jump)
#   LOGGPS_CROSS=1 tests/bench/fit.sh A.tsv B.tsv C.tsv   # and each one's fit on the others'
#                                              # round trips (calibrations of one placement)
set -euo pipefail
cd "$(dirname "$0")/../.."
files=("$@")
# The kept samples with the eager limit each calibration measured (fixtures/calibration/README.md)
K=fixtures/calibration
[ ${#files[@]} -gt 0 ] || files=(traces/calibration.tsv:4040 $K/openmpi-4.1-vader.tsv:4040
  $K/openmpi-4.1-vader-far.tsv:4040 $K/openmpi-4.1-vader-mixed.tsv:4040
  $K/openmpi-4.1-vader-65k.tsv:65480 $K/openmpi-4.1-tcp.tsv:65480 $K/mpich-4.0-ucx.tsv:8255
  $K/mpich-4.0-ucx-near.tsv:8255 $K/openmpi-4.1-vader-far-step.tsv:4040
  $K/openmpi-4.1-vader-2026-12-02.tsv:4040 $K/openmpi-4.1-vader-65k-2026-12-02.tsv:65481
  $K/mpich-4.0-ucx-2026-12-02.tsv:8255 $K/openmpi-4.1-tcp-2026-12-02.tsv:65480)
abs=()
for f in "${files[@]}"; do
  case $f in *:*) abs+=("$(realpath "${f%:*}"):${f##*:}") ;; *) abs+=("$(realpath "$f")") ;; esac
done
LOGGPS_SAMPLES="${abs[*]}" cargo test --profile ci --quiet --lib refit_recorded_samples -- \
  --ignored --nocapture 2>/dev/null | grep -E ': S = |: no fit|^all: |^cross'
