#!/usr/bin/env bash
# Records the Gaussian-elimination traces of the LogGPS case study (Ino et al., PPoPP 2001,
# §4.4-4.5: Table 7) into traces/, with calibrated LogGPS parameters embedded, and writes
# traces/MANIFEST.tsv. Run it on a quiet machine: the P = 2 runs are timing-grade.
#
#   traces/record.sh                              # everything (takes minutes)
#   RUNS=1 NS="256 512" OUT=/tmp/t traces/record.sh   # a quick functional check
#
# What it records, for every n in NS (default 256 512 1024 2048), all with Open MPI:
#   P = 2 (timing-grade, RUNS runs each, default 5), blocking:
#     original code, default eager limit (4096 bytes)    paper: original code, small S
#     original code, eager limit raised to 64 KiB        paper: method M1
#     fragmented code (pieces <= 4000 bytes), default    paper: method M2
#   P = 2, nonblocking original code, default limit, 1 run (an extra)
#   P = 4 (functional: 4 ranks oversubscribe the 2-core machine), the three blocking
#     configurations, P4_RUNS runs each (default 1)
# The runs of one n are interleaved (run 1 of every configuration, then run 2, ...), so that a
# slow phase of the machine does not fall on one configuration only.
#
# Environment:
#   NS       matrix sizes (default "256 512 1024 2048")
#   RUNS     runs per P = 2 blocking configuration (default 5)
#   P4_RUNS  runs per P = 4 configuration (default 1)
#   OUT      output directory (default traces/ next to this script); its gauss-*.bin and
#            MANIFEST.tsv are replaced
#   PARAMS   LogGPS parameters to embed (default traces/params.toml)
#   SEED     matrix seed (default 1)
#
# Trace names: gauss-n1024-p2-s4096-original-r3.bin (n, ranks, eager limit asked for, variant,
# "-nonblocking" for that mode, run). MANIFEST.tsv, one line per trace after a header:
#   file n P library eager_limit variant mode run measured_s residual size_bytes cpus
# eager_limit is the limit the trace itself reports (read by the tracer through MPI_T), so a
# launcher option that did not take effect shows; measured_s is gauss's own time_s; cpus is the
# machine's (nproc): table7 labels runs of more ranks than that as oversubscribed.
#
# Size: ~10 bytes per event and ~85 bytes of trace per matrix row per blocking P = 2 run
# (functional runs, Open MPI 4.1.4: n = 2048 gives 187 KB original, 277 KB fragmented, 370 KB
# nonblocking at P = 2; 532 KB / 780 KB at P = 4), so the default set (76 traces) is about
# 10 MB, well under the 40 MiB budget; nothing is left out for size. It runs for a few
# minutes (n = 2048 takes ~3-4 s per run at P = 2).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NS=${NS:-256 512 1024 2048}
RUNS=${RUNS:-5}
P4_RUNS=${P4_RUNS:-1}
OUT=${OUT:-$ROOT/traces}
PARAMS=${PARAMS:-$ROOT/traces/params.toml}
SEED=${SEED:-1}
PREDICT=${LOGGPS_PREDICT:-$ROOT/target/release/loggps-predict}
MPIRUN=mpirun.openmpi
LIBRARY=openmpi
TRACER=$ROOT/tracer/build-openmpi/libloggps-trace.so
GAUSS=$ROOT/tracer/gauss/build-openmpi/gauss

DEFAULT_LIMIT=4096   # Open MPI 4.1's btl_vader_eager_limit (shared memory, one host)
RAISED_LIMIT=65536   # above the longest message at n = 2048 ((2048+1)*8 = 16392 bytes)
# The fragment size of method M2. Open MPI's eager limit counts the ob1 match header
# (~16 bytes) as well as the data, so a 4096-byte piece would still go by rendezvous; 4000
# bytes (500 doubles) stays under the default limit with room to spare.
FRAGMENT=4000

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

if [[ ! -f $PARAMS ]]; then
    cat >&2 <<EOF
record.sh: $PARAMS does not exist: the traces need calibrated LogGPS parameters.
Produce them on the same (quiet) machine, at Open MPI's default eager limit, with
    make -C tracer MPI=openmpi
    $PREDICT calibrate --mpirun $MPIRUN --rtt tracer/build-openmpi/loggps-rtt \\
        --tracer tracer/build-openmpi/libloggps-trace.so -o traces/params.toml
(or point PARAMS at another parameter file), then run this script again.
EOF
    exit 1
fi
[[ -x $PREDICT ]] || { echo "record.sh: $PREDICT not found: cargo build --release" >&2; exit 1; }

make -s -C "$ROOT/tracer" MPI=openmpi
make -s -C "$ROOT/tracer/gauss" MPI=openmpi

mkdir -p "$OUT"
rm -f "$OUT"/gauss-*.bin "$OUT/MANIFEST.tsv"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
MANIFEST=$TMP/MANIFEST.tsv
printf 'file\tn\tP\tlibrary\teager_limit\tvariant\tmode\trun\tmeasured_s\tresidual\tsize_bytes\tcpus\n' >"$MANIFEST"

# record N P LIMIT VARIANT MODE RUN: one traced run of gauss, its trace converted into OUT with
# the parameters embedded, and its manifest line.
record() {
    local n=$1 p=$2 limit=$3 variant=$4 mode=$5 run=$6
    local name="gauss-n$n-p$p-s$limit-$variant" args=("$n" --seed "$SEED") launch=(-n "$p")
    [[ $mode == nonblocking ]] && { name+=-nonblocking; args+=(--nonblocking); }
    [[ $variant == fragmented ]] && args+=(--fragment "$FRAGMENT")
    [[ $limit != "$DEFAULT_LIMIT" ]] && launch+=(--mca btl_vader_eager_limit "$limit")
    ((p > 2)) && launch+=(--oversubscribe)
    name+=-r$run.bin
    local raw=$TMP/raw.bin out
    rm -f "$raw"
    out=$("$MPIRUN" "${launch[@]}" -x LOGGPS_TRACE="$raw" -x LD_PRELOAD="$TRACER" \
        "$GAUSS" "${args[@]}") || { echo "record.sh: $name: gauss failed:" >&2; echo "$out" >&2; exit 1; }
    local line
    line=$(grep '^gauss n=' <<<"$out") || { echo "record.sh: $name: no result line in: $out" >&2; exit 1; }
    [[ -f $raw ]] || { echo "record.sh: $name: the tracer wrote no trace" >&2; exit 1; }
    local time_s residual
    time_s=$(sed -n 's/.* time_s=\([^ ]*\).*/\1/p' <<<"$line")
    residual=$(sed -n 's/.* residual=\([^ ]*\).*/\1/p' <<<"$line")
    "$PREDICT" convert --force "$raw" "$OUT/$name" --params "$PARAMS" >/dev/null
    local info got lib
    info=$("$PREDICT" info "$OUT/$name" --format json)
    got=$(jq -r '.eager_limit.bytes // "unknown"' <<<"$info")
    lib=$(jq -r '.library' <<<"$info")
    [[ $lib == "Open MPI"* ]] || { echo "record.sh: $name: traced library is '$lib', not Open MPI" >&2; exit 1; }
    [[ $got == "$limit" ]] || echo "record.sh: warning: $name: asked for eager limit $limit, the trace reports $got" >&2
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$n" "$p" "$LIBRARY" "$got" \
        "$variant" "$mode" "$run" "$time_s" "$residual" "$(stat -c %s "$OUT/$name")" "$(nproc)" >>"$MANIFEST"
    echo "$name  time_s=$time_s residual=$residual"
}

for n in $NS; do
    for ((r = 1; r <= RUNS; r++)); do
        record "$n" 2 $DEFAULT_LIMIT original blocking "$r"
        record "$n" 2 $RAISED_LIMIT original blocking "$r"
        record "$n" 2 $DEFAULT_LIMIT fragmented blocking "$r"
    done
    record "$n" 2 $DEFAULT_LIMIT original nonblocking 1
    for ((r = 1; r <= P4_RUNS; r++)); do
        record "$n" 4 $DEFAULT_LIMIT original blocking "$r"
        record "$n" 4 $RAISED_LIMIT original blocking "$r"
        record "$n" 4 $DEFAULT_LIMIT fragmented blocking "$r"
    done
done

cp "$MANIFEST" "$OUT/MANIFEST.tsv"
total=$(du -cb "$OUT"/gauss-*.bin | tail -1 | cut -f1)
echo "record.sh: $(($(wc -l <"$OUT/MANIFEST.tsv") - 1)) traces, $total bytes in $OUT"
((total <= 40 * 1024 * 1024)) || echo "record.sh: warning: the traces exceed 40 MiB" >&2
