# Shell helpers of the benchmarks that compare a program traced with its runs untraced at the
# same placement (sourced by queue.sh and gaps.sh from the repository's root). Sourcing it sets
# BIN (the predictor: $LOGGPS_PREDICT), PARAMS (the set, traces/params.toml unless given) and MPI
# (openmpi unless given), builds the tracer and its benchmarks for $MPI, and makes $tmp, a
# directory removed at exit.
BIN=${LOGGPS_PREDICT:-target/release/loggps-predict}
PARAMS=${PARAMS:-traces/params.toml}
MPI=${MPI:-openmpi}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
make -s -C tracer MPI="$MPI" all bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# launch PROG TRACE|- [ARGS...]: one 2-rank launch of PROG, traced into TRACE or untraced.
launch() {
  local prog=$1 out=$2 lib=$PWD/tracer/build-$MPI/libloggps-trace.so
  shift 2
  if [ "$MPI" = mpich ]; then
    if [ "$out" = - ]; then mpirun.mpich -np 2 "$prog" "$@"; else
      mpirun.mpich -np 2 -genv LOGGPS_TRACE "$out" -genv LD_PRELOAD "$lib" "$prog" "$@"; fi
  elif [ "$out" = - ]; then mpirun.openmpi -np 2 "$prog" "$@"
  else LOGGPS_TRACE=$out mpirun.openmpi -np 2 -x LOGGPS_TRACE -x LD_PRELOAD="$lib" "$prog" "$@"; fi
}
# near NS: whether a cache line's round trip of NS lies within 2x of a `cores` of $PARAMS' sets
# (true where the sets have none).
near() {
  awk -v c="$1" -v s="$(sed -n 's/^cores = //p' "$PARAMS" | paste -sd' ')" \
    'BEGIN {n = split(s, a, " "); for (i = 1; i <= n; i++) if (c < 2 * a[i] && a[i] < 2 * c) exit 0; exit n > 0}'
}
# placed_runs DIR RUNS PROG [ARGS...]: RUNS untraced launches into DIR/u*.txt, then one traced
# into DIR/t.bin (its output DIR/t.txt), retried up to 5 times until at a set's placement (the
# program's `cores BEFORE AFTER` line).
placed_runs() {
  local dir=$1 runs=$2 prog=$3
  shift 3
  for i in $(seq "$runs"); do launch "$prog" - "$@" > "$dir/u$i.txt" 2>/dev/null; done
  for try in 1 2 3 4 5; do
    rm -f "$dir/t.bin"
    launch "$prog" "$dir/t.bin" "$@" > "$dir/t.txt" 2>/dev/null
    near "$(awk '/^cores/ {print ($2 > $3) ? $2 : $3}' "$dir/t.txt")" && break
  done
}
