#!/usr/bin/env bash
# Tracer overhead: bench/run.sh [openmpi|mpich] [iterations] [repeats]
# Runs bench/pingpong on 2 ranks, REPEATS times without and with the tracer preloaded, and
# prints medians over the runs. In each run, blocks of iterations alternate between PMPI_
# (untraced) and MPI_ (traced when preloaded) calls; "added" is the median paired difference.
#   per traced call (ping-pong) = added round trip / 4   (Send and Recv on each rank: four
#                                 traced calls, all on the critical path of a round trip)
#   per traced call (PROC_NULL) = added time of one MPI_Send to MPI_PROC_NULL
# and the same traced without call sites (LOGGPS_TRACE_SITES=0), in the same runs, for what
# recording the sites costs.
set -euo pipefail
MPI=${1:-openmpi}
ITERS=${2:-400000}
REPEATS=${3:-3}
TRACER=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
make -s -C "$TRACER" MPI="$MPI" all bench
BUILD=$TRACER/build-$MPI
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
run() { # run plain|traced|nosites
    local env=()
    if [[ $1 != plain ]]; then env=("LD_PRELOAD=$BUILD/libloggps-trace.so" "LOGGPS_TRACE=$TMP/t.bin"); fi
    if [[ $1 == nosites ]]; then env+=("LOGGPS_TRACE_SITES=0"); fi
    rm -f "$TMP/t.bin"
    local args=()
    for v in "${env[@]}"; do
        if [[ $MPI == openmpi ]]; then args+=(-x "$v"); else args+=(-genv "${v%%=*}" "${v#*=}"); fi
    done
    case $MPI in
    openmpi) mpirun.openmpi -n 2 "${args[@]}" "$BUILD/bench/pingpong" "$ITERS" ;;
    mpich) mpirun.mpich -n 2 "${args[@]}" "$BUILD/bench/pingpong" "$ITERS" ;;
    *) echo "usage: $0 [openmpi|mpich] [iterations] [repeats]" >&2; exit 2 ;;
    esac 2>/dev/null | sed "s/^/$1 /"
    if [[ $1 == traced ]]; then echo "trace_bytes $(stat -c %s "$TMP/t.bin")" >"$TMP/size"; fi
}
for ((i = 0; i < REPEATS; i++)); do run plain; run traced; run nosites; done >"$TMP/results"
python3 - "$TMP/results" "$MPI" "$ITERS" "$(cat "$TMP/size")" <<'PY'
import sys, statistics
rows = {"plain": [], "traced": [], "nosites": []}
for line in open(sys.argv[1]):
    w = line.split()
    rows[w[0]].append(dict(zip(w[1::2], map(float, w[2::2]))))
m = {k: {f: statistics.median(r[f] for r in v) for f in v[0]} for k, v in rows.items()}
n = len(rows["plain"])
print(f"{sys.argv[2]}: 2 ranks, {sys.argv[3]} iterations per run, medians of {n} runs; {sys.argv[4]} per traced run")
names = {"plain": "without tracer", "traced": "with tracer   ", "nosites": "without sites "}
for k in ("plain", "traced", "nosites"):
    r = m[k]
    print(f"  {names[k]}: round trip PMPI {r['roundtrip_plain_ns']:7.1f} ns,"
          f" MPI {r['roundtrip_traced_ns']:7.1f} ns, added {r['roundtrip_added_ns']:6.1f} ns;"
          f" PROC_NULL send PMPI {r['procnull_plain_ns']:5.1f} ns, MPI {r['procnull_traced_ns']:5.1f} ns;"
          f" max RSS {r['maxrss_kib']:.0f} KiB")
t, p = m["traced"], m["plain"]
print(f"  added per traced call: ping-pong {(t['roundtrip_added_ns'] - p['roundtrip_added_ns']) / 4:.1f} ns,"
      f" MPI_PROC_NULL send {t['procnull_added_ns'] - p['procnull_added_ns']:.1f} ns (target <= 150 ns)")
q = m["nosites"]
print(f"  of which call sites: ping-pong {(t['roundtrip_added_ns'] - q['roundtrip_added_ns']) / 4:.1f} ns,"
      f" MPI_PROC_NULL send {t['procnull_added_ns'] - q['procnull_added_ns']:.1f} ns")
PY
