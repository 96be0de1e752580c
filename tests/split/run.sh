#!/usr/bin/env bash
# The replay split over the processes of a real MPI job (the `mpi` feature): for K = 1..4
# processes, `mpirun -np K loggps-predict …` prints exactly what one process prints (JSON, CSV
# and table, byte for byte) on every synthetic pattern, the fixtures and recorded traces, under
# LogGPS (progress asynchronous and at calls) and LogGP, collectives modeled and measured,
# several parameter sets by link, sweeps included; an unfinished trace warns alike; a deadlock is named alike, printed by process 0;
# commands that do not split are
# refused once; a process that fails alone stops the job with one error.
#
#   bash tests/split/run.sh openmpi|mpich [quick]
#
# Builds the feature against that library (the `cluster` profile, in target/split; the
# library's mpi-sys rebuilt where the last build was against the other one) and compares with
# the default build ($LOGGPS_PREDICT, else target/release/loggps-predict, built first). `quick`: K = 2 and 3 on a
# few of the cases (tests/ci.sh runs MPICH so, its oversubscribed processes polling slowly).
set -euo pipefail
cd "$(dirname "$0")/../.."
lib=${1:?usage: run.sh openmpi|mpich [quick]}
quick=${2:-}
case "$lib" in
  openmpi) mpirun=(mpirun.openmpi --oversubscribe); so='libmpi\.so\.40' ;;
  mpich) mpirun=(mpirun.mpich); so='libmpich\.so' ;;
  *) echo "unknown MPI library $lib (openmpi or mpich)"; exit 2 ;;
esac
ks=(1 2 3 4)
[ "$quick" = quick ] && ks=(2 3)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

one=${LOGGPS_PREDICT:-target/release/loggps-predict}
[ -x "$one" ] || cargo build --release --quiet
# mpi-sys finds the library once (through MPICC): built against the other one, it is built anew.
build() { MPICC=mpicc.$lib CARGO_TARGET_DIR=target/split cargo build --profile cluster --features mpi --quiet; }
# ldd's output read whole first: `ldd | grep -q` under pipefail fails when grep stops early
linked() { local libs; libs=$(ldd target/split/cluster/loggps-predict); grep -q "$so" <<<"$libs"; }
build
if ! linked; then
  CARGO_TARGET_DIR=target/split cargo clean --profile cluster --quiet -p mpi-sys -p mpi -p loggps-predict
  build
fi
linked || { echo "FAIL: the mpi feature's build is not linked to $lib's library"; exit 1; }
split=target/split/loggps-predict-$lib
cp target/split/cluster/loggps-predict "$split"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0 checks=0

# same NAME ARGS…: one process's stdout, stderr and status against K = 1..4 processes'.
same() {
  local name=$1; shift
  local want_rc=0
  "$one" "$@" >"$work/one.out" 2>"$work/one.err" || want_rc=$?
  if grep -qvE '^(error|warning): ' "$work/one.err"; then
    echo "FAIL $name: a line of one process's stderr is neither an error nor a warning"; fails=$((fails + 1))
  fi
  for k in "${ks[@]}"; do
    local rc=0
    "${mpirun[@]}" -np "$k" "$split" "$@" >"$work/k.out" 2>"$work/k.err" || rc=$?
    checks=$((checks + 1))
    # The program's lines alone: the launcher adds its own notes on a status of 2.
    grep -E '^(error|warning): ' "$work/k.err" >"$work/k.err2" || true
    if [ "$rc" -ne "$want_rc" ] && ! { [ "$want_rc" -ne 0 ] && [ "$rc" -ne 0 ]; }; then
      echo "FAIL $name K=$k: status $rc, one process $want_rc"; fails=$((fails + 1))
    elif ! cmp -s "$work/one.out" "$work/k.out"; then
      echo "FAIL $name K=$k: stdout differs"; diff "$work/one.out" "$work/k.out" | head -5; fails=$((fails + 1))
    elif ! cmp -s "$work/one.err" "$work/k.err2"; then
      echo "FAIL $name K=$k: stderr differs"; diff "$work/one.err" "$work/k.err2" | head -5; fails=$((fails + 1))
    fi
  done
}

patterns=(dissemination ring halo2d halo3d bcast alltoall gauss allreduce cg collectives)
files=(fixtures/all-routines.txt fixtures/sites.txt fixtures/rtt/k65536-w0.txt
       traces/gauss-n1024-p4-s4096-fragmented-r1.bin traces/gauss-n256-p2-s4096-original-nonblocking-r1.bin)
if [ "$quick" = quick ]; then
  patterns=(halo2d cg collectives)
  files=(fixtures/all-routines.txt traces/gauss-n1024-p4-s4096-fragmented-r1.bin)
fi
for pattern in "${patterns[@]}"; do
  t="$work/$pattern.bin"
  "$one" synth --pattern "$pattern" --ranks 11 --iterations 3 --bytes 100000 --compute 5000 --output "$t" >/dev/null
  same "$pattern" "$t" --platform myrinet --format json
done
for pattern in halo2d cg collectives; do
  same "$pattern, measured collectives, CSV" "$work/$pattern.bin" --platform myrinet --coll measured --format csv
done
t="$work/halo2d.bin"
same "halo2d, LogGP" "$t" --model loggp --L 1160 --o 6550 --g 9000 --G 15.48 --format json
same "halo2d, progress at calls" "$t" --platform myrinet --progress calls --format json
same "halo2d, sweep of S" "$t" --platform myrinet --sweep S=4096,65536,262144 --format json
same "collectives, sweep of algorithms" "$work/collectives.bin" --platform myrinet --sweep allreduce=tuned,ring,recursive_doubling --format json
for f in "${files[@]}"; do
  same "$f" "$f" --format json
done
# Several parameter sets (the model's §12): ranks 3 a node, a node and a network set; the
# report's per-rank shares of bytes by set come from the traffic every process gathers.
printf 'class = "node"\nL = 1160\no = 6550\nOs = 6.86\nOr = 2.57\nGs = 15.48\nGl = -0.74\ns = 8191\nS = 16383\n' >"$work/node.toml"
printf 'class = "network"\nL = 35220\no = 20590\nOs = 10.67\nOr = 5.87\nGs = 191.89\nGl = 74.95\ns = 1023\nS = 65536\n' >"$work/network.toml"
for pattern in halo2d collectives; do
  same "$pattern, two sets" "$work/$pattern.bin" --params "$work/node.toml" --params "$work/network.toml" --ranks-per-node 3 --format json
done
same "halo2d, two sets, sweep of ranks per node" "$work/halo2d.bin" --params "$work/node.toml" --params "$work/network.toml" --sweep ranks-per-node=2,4 --format json
same "${files[1]}, table" "${files[1]}"

# A deadlock: the same error, printed once.
printf 'loggps-trace 1\nranks 2\n0 MPI_Init 0 0\n0 MPI_Send 10 20 bytes=65536 peer=1\n0 MPI_Recv 30 40 bytes=65536 peer=1\n0 MPI_Finalize 50 60\n1 MPI_Init 0 0\n1 MPI_Send 10 20 bytes=65536 peer=0\n1 MPI_Recv 30 40 bytes=65536 peer=0\n1 MPI_Finalize 50 60\n' >"$work/h2h.txt"
same "head to head (deadlock)" "$work/h2h.txt" --platform myrinet
grep -q deadlock "$work/one.err" || { echo "FAIL: no deadlock named"; fails=$((fails + 1)); }

# An unfinished trace (its file cut short, as a job that stopped leaves it): the same warnings,
# each process holding its own ranks' events of what was written.
head -c $(( $(stat -c %s "$work/cg.bin") * 3 / 5 )) "$work/cg.bin" >"$work/cut.bin"
same "cg, cut short" "$work/cut.bin" --platform myrinet --format json
grep -q "not finalized" "$work/one.err" || { echo "FAIL: the cut trace is not said unfinished"; fails=$((fails + 1)); }

# Commands that run in one process are refused once.
rc=0
"${mpirun[@]}" -np 2 "$split" info fixtures/all-routines.txt >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
if [ "$rc" -eq 0 ] || [ "$(grep -c 'runs in one process' "$work/err")" -ne 1 ]; then
  echo "FAIL: info under mpirun -np 2: status $rc"; cat "$work/err"; fails=$((fails + 1))
fi
rc=0
"${mpirun[@]}" -np 2 "$split" fixtures/all-routines.txt --critical-path >"$work/out" 2>"$work/err" || rc=$?
checks=$((checks + 1))
if [ "$rc" -eq 0 ] || [ "$(grep -c 'run them without mpirun' "$work/err")" -ne 1 ]; then
  echo "FAIL: --critical-path under mpirun -np 2: status $rc"; cat "$work/err"; fails=$((fails + 1))
fi

# A process that fails alone (its node lacks the trace) stops the job at once: one error,
# naming it, not a job waiting for ever in its first exchange.
for cmd in predict bench; do
  rc=0
  # shellcheck disable=SC2016
  timeout 120 "${mpirun[@]}" -np 3 sh -c \
    'f=$1; shift; [ "${OMPI_COMM_WORLD_RANK:-$PMI_RANK}" = 1 ] && f=/nonexistent.bin; exec "$@" "$f"' \
    sh fixtures/all-routines.txt "$split" "$cmd" >"$work/out" 2>"$work/err" || rc=$?
  checks=$((checks + 1))
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] ||
     [ "$(grep -c '^error: process 1 of 3: /nonexistent.bin: cannot open' "$work/err")" -ne 1 ] ||
     [ "$(grep -c '^error: ' "$work/err")" -ne 1 ]; then
    echo "FAIL: $cmd with no trace on process 1: status $rc"; cat "$work/err"; fails=$((fails + 1))
  fi
done

echo "split replay ($lib): $checks checks, $fails failed"
[ "$fails" -eq 0 ]
