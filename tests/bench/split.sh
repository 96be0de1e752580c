#!/usr/bin/env bash
# The split replay's figures at K = 1, 2, 4 processes on one machine (tests/bench/RESULTS.md):
# the scale benchmark's `diss` and `big` traces, written to $BENCH_DIR, then
# `mpirun -np K … bench --threads CORES/K`, each process's figures in bench's JSON, to OUT.
#
#   MPICC=mpicc.openmpi CARGO_TARGET_DIR=target/mpi cargo build --release --features mpi
#   bash tests/bench/split.sh OUT      # on a lent machine: source the bundle of mpi-bundle.sh first
set -euo pipefail
out=${1:?usage: split.sh OUT}
mkdir -p "$out"
cd "$(dirname "$0")/../.."
one=$PWD/target/release/loggps-predict
split=$PWD/target/mpi/release/loggps-predict
dir=${BENCH_DIR:-/tmp/loggps-bench}
mkdir -p "$dir"
cores=$(nproc)
[ -f "$dir/diss.bin" ] || "$one" synth --pattern dissemination --ranks 262144 -o "$dir/diss.bin" >/dev/null
[ -f "$dir/big.bin" ] || "$one" synth --pattern dissemination --ranks 1048576 --iterations 2 -o "$dir/big.bin" >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for t in diss big; do
  for k in 1 2 4; do
    threads=$((cores / k > 0 ? cores / k : 1))
    echo "$(date +%T) $t K=$k, $threads threads a process"
    mpirun -np "$k" --bind-to none "$split" bench "$dir/$t.bin" --platform myrinet \
      --threads "$threads" >"$out/bench-$t-$k.json"
  done
done
