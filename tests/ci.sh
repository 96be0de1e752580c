#!/usr/bin/env bash
# Runs every test of the project: the Rust suite, the tracer's real MPI jobs (Open MPI and
# MPICH) and real applications traced and predicted. Installs what it needs when run as root; otherwise says the exact command to run.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v cargo >/dev/null || { echo "cargo not found: install Rust from https://rustup.rs (curl https://sh.rustup.rs -sSf | sh)"; exit 1; }
command -v mpicc.openmpi >/dev/null || need+=(openmpi-bin libopenmpi-dev)
command -v mpicc.mpich >/dev/null || need+=(mpich libmpich-dev)
command -v make >/dev/null || need+=(make)
command -v gfortran >/dev/null || need+=(gfortran)   # the tracer's Fortran tests
# the mpi feature's build (tests/split/run.sh): rsmpi's bindings are generated with libclang
compgen -G '/usr/lib/llvm-*/lib/libclang*.so*' >/dev/null || need+=(libclang-dev)
# the tracer's mpi4py test (Debian's mpi4py, for the system python3, built against Open MPI)
/usr/bin/python3 -c 'import mpi4py, numpy' 2>/dev/null || need+=(python3-mpi4py python3-numpy)
# the real applications of tests/apps/run.sh
command -v hpcc >/dev/null || need+=(hpcc)
command -v lmp >/dev/null || need+=(lammps)
command -v NPopenmpi >/dev/null || need+=(netpipe-openmpi)
command -v pw.x >/dev/null || need+=(quantum-espresso)
# Perfetto timelines decoded by a decoder not ours (tests/cli_timeline.rs)
command -v protoc >/dev/null || need+=(protobuf-compiler)
# Score-P's OTF2 (tests/cli_import.rs): the library the reader opens, otf2-print to count a
# sample's events, the Python binding to write archives
compgen -G '/usr/lib/*/libopen-trace-format2.so.*' >/dev/null || need+=(libopen-trace-format2-10)
command -v otf2-print >/dev/null || need+=(otf2-tools)
/usr/bin/python3 -c 'import otf2' 2>/dev/null || need+=(python3-otf2)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "== installing ${need[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "missing packages; run:  sudo apt-get install -y ${need[*]}"
    exit 1
  fi
fi

# Each stage says when it starts (seconds since the script's start): where a run's time goes.
stage() { echo "== $* (at ${SECONDS} s)"; }
stage "build: the tracer and its programs (Open MPI, MPICH)"
make -s -C tracer MPI=openmpi
make -s -C tracer MPI=mpich   # the network calibration of tests/calibration.rs

stage "cargo test (unit, properties, mutation, CLI, calibration on real MPI, case study)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The `ci` profile (Cargo.toml): the release build's optimization without its whole-program
# link. Its binary (target/ci/loggps-predict, the same predictions as the release build's) runs
# every stage below: a fat-LTO release build would cost this run minutes more.
LOGGPS_MPI_TESTS=1 cargo test --profile ci --quiet
cargo build --profile ci --quiet

export LOGGPS_PREDICT="$PWD/target/ci/loggps-predict"
for lib in openmpi mpich; do
  stage "tracer tests ($lib)"
  TRACER_TESTS_STRICT=1 bash tracer/tests/run.sh "$lib"   # every check must run: a skip fails
done
stage "the replay split over MPI processes (the mpi feature): Open MPI, MPICH"
bash tests/split/run.sh openmpi
bash tests/split/run.sh mpich quick
stage "real applications (Open MPI, 2 ranks): HPCC, LAMMPS, NetPIPE, Quantum ESPRESSO, mpi4py, the communication-bound suite"
bash tests/apps/run.sh
stage "all tests passed"
