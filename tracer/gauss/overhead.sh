#!/usr/bin/env bash
# The tracer's overhead on gauss (issue target: <= 3%): P = 2, blocking, Open MPI's default
# eager limit, each n run REPS times with and without the tracer preloaded, alternately, so
# that a slow phase of the machine hits both sides alike. Compares gauss's own time_s (the
# timed region: barrier after setup to the end of back substitution); the tracer's work in
# MPI_Init and MPI_Finalize is outside it.
#
#   tracer/gauss/overhead.sh               # NS="1024 2048" REPS=5
#   NS=2048 REPS=9 tracer/gauss/overhead.sh
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NS=${NS:-1024 2048}
REPS=${REPS:-5}
MPIRUN=mpirun.openmpi
TRACER=$ROOT/tracer/build-openmpi/libloggps-trace.so
GAUSS=$ROOT/tracer/gauss/build-openmpi/gauss
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

make -s -C "$ROOT/tracer" MPI=openmpi
make -s -C "$ROOT/tracer/gauss" MPI=openmpi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# one run; prints its time_s
run() {
    local n=$1 traced=$2 out
    if [[ $traced == 1 ]]; then
        rm -f "$TMP/t.bin"
        out=$("$MPIRUN" -n 2 -x LOGGPS_TRACE="$TMP/t.bin" -x LD_PRELOAD="$TRACER" "$GAUSS" "$n" 2>/dev/null)
        [[ -f $TMP/t.bin ]] || { echo "overhead.sh: the tracer wrote no trace" >&2; exit 1; }
    else
        out=$("$MPIRUN" -n 2 "$GAUSS" "$n")
    fi
    sed -n 's/^gauss n=.* time_s=\([^ ]*\) .*/\1/p' <<<"$out"
}

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

printf '%6s %6s %14s %14s %10s\n' n reps untraced_s traced_s overhead
for n in $NS; do
    : >"$TMP/plain" && : >"$TMP/traced"
    for ((i = 1; i <= REPS; i++)); do
        # alternate which side goes first, so neither always follows the other
        if ((i % 2)); then
            run "$n" 0 >>"$TMP/plain"
            run "$n" 1 >>"$TMP/traced"
        else
            run "$n" 1 >>"$TMP/traced"
            run "$n" 0 >>"$TMP/plain"
        fi
    done
    a=$(median <"$TMP/plain") b=$(median <"$TMP/traced")
    printf '%6s %6s %14.6f %14.6f %9.2f%%\n' "$n" "$REPS" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {print 100 * (b - a) / a}')"
    echo "  untraced: $(tr '\n' ' ' <"$TMP/plain")"
    echo "  traced:   $(tr '\n' ' ' <"$TMP/traced")"
done
