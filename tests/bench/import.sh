#!/usr/bin/env bash
# Reading other tools' traces (issue 62, item 7): each reader on a large synthetic input of its
# format, against our binary trace of the same calls: `info` end to end (read, check, count),
# events a second and peak bytes an event. Figures, not assertions.
#
#   tests/bench/import.sh              # 500,000 ping-pong round trips (2,000,004 events)
#   ROUNDS=100000 tests/bench/import.sh
#
# The inputs: a time-independent trace written here (a 2-rank ping-pong, 1 KiB, compute between),
# our binary and a GOAL schedule converted from it (`convert`), and liballprof's per-rank files
# of the same calls written here.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${LOGGPS_PREDICT:-target/release/loggps-predict}
ROUNDS=${ROUNDS:-500000}
DIR=${BENCH_DIR:-/tmp/loggps-bench}/import-$ROUNDS
[ -x "$BIN" ] || cargo build --release --quiet
mkdir -p "$DIR"
if [ ! -f "$DIR/done" ]; then
  python3 - "$DIR" "$ROUNDS" <<'EOF'
import sys
d, n = sys.argv[1], int(sys.argv[2])
with open(f"{d}/pingpong.tit", "w") as f:
    f.write("0 init\n1 init\n")
    for _ in range(n):
        f.write("0 send 1 0 1024\n0 compute 1000\n1 recv 0 0 1024\n1 compute 1000\n"
                "0 recv 1 1 1024\n1 send 0 1 1024\n")
    f.write("0 finalize\n1 finalize\n")
for r in (0, 1):
    with open(f"{d}/pmpi-trace-rank-{r}.txt", "w") as f:
        f.write("# htor's PMPI Tracer 0.9 Output File\n\n")
        t = 1000
        f.write(f"MPI_Init:-:0:0:{t}\n")
        first, second = ("MPI_Send", "MPI_Recv") if r == 0 else ("MPI_Recv", "MPI_Send")
        peer = 1 - r
        for i in range(n):
            for k, call in enumerate((first, second)):
                tag = k
                tail = ":0" if call == "MPI_Recv" else ""
                f.write(f"{call}:{t}:1:1024:1,1,1:{peer}:{tag}:0,{r},2{tail}:{t + 2}\n")
                t += 3
        f.write(f"MPI_Finalize:{t}:-\n")
EOF
  "$BIN" convert "$DIR/pingpong.tit" "$DIR/pingpong.bin" --force 2>/dev/null
  "$BIN" convert "$DIR/pingpong.tit" "$DIR/pingpong.goal" --force 2>/dev/null
  touch "$DIR/done"
fi
printf '%-8s %12s %10s %12s %14s\n' format events seconds events/s bytes/event
for f in bin tit goal allprof; do
  case $f in
    allprof) input=$DIR/pmpi-trace-rank-0.txt ;;
    *) input=$DIR/pingpong.$f ;;
  esac
  events=$(/usr/bin/time -o "$DIR/time" -f '%e %M' "$BIN" info "$input" 2>/dev/null | awk '/^events / {print $2}')
  read -r secs kb < "$DIR/time"
  awk -v f="$f" -v e="$events" -v s="$secs" -v kb="$kb" \
    'BEGIN { printf "%-8s %12d %10.2f %12.0f %14.0f\n", f, e, s, e / (s > 0 ? s : 0.01), kb * 1024 / e }'
done
