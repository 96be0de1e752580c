#!/usr/bin/env bash
# Reading other tools' traces (issue 62, item 7): each reader on a large synthetic input of its
# format, against our binary trace of the same calls: `info` end to end (read, check, count),
# events a second and peak bytes an event. Figures, not assertions.
#
#   tests/bench/import.sh              # 500,000 ping-pong round trips (2,000,004 events)
#   ROUNDS=100000 RUNS=3 tests/bench/import.sh   # the median of RUNS runs each (default 5)
#   BASE=HEAD~3 tests/bench/import.sh  # against a previous build, run by run in turn
#
# BASE: a previous build to compare with in the same run (the machine's speed moves by tens of
# percent between minutes: only runs taken in turn compare): a binary, or a git revision built
# here (a worktree and target directory under BENCH_DIR, kept for the next run). Its median
# seconds and the ratio new / base are added to each line. Last, each reader against the
# target of 10 M events a second (issue 62, item 7; OTF2, read through its library, is allowed
# slower): a summary to read, at the machine's speed of the moment.
#
# The inputs: a time-independent trace written here (a 2-rank ping-pong, 1 KiB, compute between),
# our binary and a GOAL schedule converted from it (`convert`), liballprof's per-rank files, a
# DUMPI trace (its .meta and a binary file a rank), an Extrae Paraver trace and an OTF2 archive
# (through the OTF2 library, opened at run time) of the same calls written here.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${LOGGPS_PREDICT:-target/release/loggps-predict}
ROUNDS=${ROUNDS:-500000}
RUNS=${RUNS:-5}
DIR=${BENCH_DIR:-/tmp/loggps-bench}/import-$ROUNDS
[ -x "$BIN" ] || cargo build --release --quiet
mkdir -p "$DIR"
BASE=${BASE:-}
if [ -n "$BASE" ] && [ ! -x "$BASE" ]; then
  rev=$(git rev-parse --verify --quiet "$BASE^{commit}") || { echo "BASE=$BASE: neither a binary nor a git revision" >&2; exit 2; }
  tree=${BENCH_DIR:-/tmp/loggps-bench}/base
  [ -d "$tree/src" ] || git worktree add --detach --force "$tree" "$rev" >/dev/null
  git -C "$tree" checkout --quiet --detach "$rev"
  echo "building $BASE ($rev) in $tree" >&2
  (cd "$tree" && cargo build --release --quiet)
  BASE=$tree/target/release/loggps-predict
fi
# (the marker names the inputs' set: a directory of an older set is written anew)
if [ ! -f "$DIR/done-dumpi" ]; then
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
  # The same calls as Extrae's Paraver trace: each call an MPI event (50000001, Extrae's value:
  # 1 MPI_Send, 2 MPI_Recv) and its end (value 0), each message a `3:` record; the .pcf names them
  python3 - "$DIR" "$ROUNDS" <<'EOF'
import sys
d, n = sys.argv[1], int(sys.argv[2])
end = 1000 + 6 * n + 10
with open(f"{d}/pingpong.prv", "w") as f:
    f.write(f"#Paraver (30/11/26 at 00:00):{end}:2:1:2(1:1,1:2),1\nc:1:1:2:1:2\n")
    t = 1000
    for _ in range(n):
        for src, dst in ((1, 2), (2, 1)):
            f.write(f"2:{src}:1:{src}:1:{t}:50000001:1\n2:{dst}:1:{dst}:1:{t}:50000001:2\n"
                    f"3:{src}:1:{src}:1:{t}:{t + 1}:{dst}:1:{dst}:1:{t + 1}:{t + 2}:1024:{0 if src == 1 else 1}\n"
                    f"2:{src}:1:{src}:1:{t + 2}:50000001:0\n2:{dst}:1:{dst}:1:{t + 2}:50000001:0\n")
            t += 3
with open(f"{d}/pingpong.pcf", "w") as f:
    f.write("EVENT_TYPE\n9   50000001    MPI Point-to-point\nVALUES\n2   MPI_Recv\n1   MPI_Send\n0   End\n")
EOF
  # The same calls as an OTF2 archive, written by the OTF2 library's Python binding
  # (python3-otf2, the system python's; 3 OTF2 records a call: Enter, the message, Leave).
  /usr/bin/python3 - "$DIR" "$ROUNDS" <<'EOF' || echo "no OTF2 archive (apt-get install python3-otf2)"
import sys, otf2
from otf2.enums import Paradigm, GroupType
d_, n = sys.argv[1], int(sys.argv[2])
with otf2.writer.open(d_ + "/pingpong-otf2", timer_resolution=1_000_000_000) as trace:
    d = trace.definitions
    node = d.system_tree_node("node")
    locs = [d.location("Master thread", group=d.location_group("MPI Rank %d" % r,
            system_tree_parent=node)) for r in (0, 1)]
    d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
    world = d.comm("MPI_COMM_WORLD", group=d.group("", group_type=GroupType.COMM_GROUP,
                   paradigm=Paradigm.MPI, members=[0, 1]))
    reg = {k: d.region("MPI_" + k, paradigm=Paradigm.MPI) for k in ("Init", "Send", "Recv", "Finalize")}
    for r in (0, 1):
        w = trace.event_writer_from_location(locs[r])
        S, R = reg["Send"], reg["Recv"]
        w.enter(0, reg["Init"]); w.leave(1000, reg["Init"])
        t = 1000
        for i in range(n):
            for k in (0, 1):
                if (k == 0) == (r == 0):
                    w.enter(t, S); w.mpi_send(t, 1 - r, world, k, 1024); w.leave(t + 2, S)
                else:
                    w.enter(t, R); w.mpi_recv(t + 1, 1 - r, world, k, 1024); w.leave(t + 2, R)
                t += 3
        w.enter(t, reg["Finalize"]); w.leave(t + 1, reg["Finalize"])
EOF
  # The same calls as SST's DUMPI trace: a .meta and one big-endian file a rank (io.c: magic, the
  # stream, its end label, the header, the footer's call counts, datatype sizes, the index)
  python3 - "$DIR" "$ROUNDS" <<'EOF'
import struct, sys
d, n = sys.argv[1], int(sys.argv[2])
bias = 1700000000  # the wall clock's seconds at the start (records keep seconds since it)
with open(f"{d}/pingpong-dumpi.meta", "w") as f:
    f.write(f"hostname=localhost\nnumprocs=2\nusername=bench\nstartime={bias}\n"
            "fileprefix=pingpong-dumpi\nversion=1\nsubversion=1\nsubsubversion=0\n")
# A record: function id, mask (thread, CPU and wall times, statuses), thread, CPU and wall times
# (start, end: u16 s since the bias, u32 ns; both clocks µs from the start), then its arguments
head = struct.Struct(">HBHHIHIHIHI").pack
def rec(fid, a, b):
    ts = (a // 10**6, a % 10**6 * 1000, b // 10**6, b % 10**6 * 1000)
    return head(fid, 0x4f, 0, *ts, *ts)
for r in (0, 1):
    # count, datatype (5: MPI_BYTE), peer, tag, comm (2: world); a Recv's one status after
    args = [struct.pack(">iHiiH", 1024, 5, 1 - r, k, 2) for k in (0, 1)]
    calls = [(0, args[k]) if (k == 0) == (r == 0) else
             (1, args[k] + struct.pack(">iiiBBi", 1, 1024, 1 - r, 0, 0, k)) for k in (0, 1)]
    with open(f"{d}/pingpong-dumpi-{r:04}.bin", "wb") as f:
        f.write(b"\xff\xaa\xddDUMPI" + struct.pack(">II", 0, bias))
        f.write(rec(124, 0, 1000) + struct.pack(">ii", 1, 10) + b"./pingpong")
        t = 1000
        for i in range(n):
            for fid, a in calls:
                f.write(rec(fid, t, t + 2) + a)
                t += 3
        f.write(rec(125, t, t + 1) + struct.pack(">H", 293))  # MPI_Finalize, END_OF_STREAM
        header = f.tell()  # version 1.1.0, start, host, user, no mesh
        f.write(struct.pack(">BBBQ", 1, 1, 0, bias) + b"\0\x09localhost\0\x05bench" + bytes(8))
        footer = f.tell()  # its magic, calls and ignored calls of ids 0..290; no keyvals
        counts = [0] * 291
        counts[0] = counts[1] = n; counts[124] = counts[125] = 1
        f.write(struct.pack(">Q582ii", 0xf007fee7, *counts, *[0] * 291, 0))
        perf = f.tell()  # no counters, the datatype sizes (sst-macro's testbgp's), no addresses
        f.write(bytes(4))
        sizes = f.tell()
        f.write(struct.pack(">29i", 28, 0, 0, 1, 1, 1, 1, 4, 2, 2, 4, 4, 4, 4, 4, 8, 16, 0, 8, 8, 1,
                            0, 0, 8, 12, 8, 6, 8, 20))
        addr = f.tell()
        f.write(bytes(4))
        f.write(struct.pack(">8Q", 0xffaadd44554d5049, sizes, addr, perf, header, 8, footer, 0))
EOF
  "$BIN" convert "$DIR/pingpong.tit" "$DIR/pingpong.bin" --force 2>/dev/null
  "$BIN" convert "$DIR/pingpong.tit" "$DIR/pingpong.goal" --force 2>/dev/null
  touch "$DIR/done-dumpi"
fi
printf '%-8s %12s %10s %12s %14s %10s' format events seconds events/s bytes/event x_ours
[ -n "$BASE" ] && printf ' %10s %10s' base_s new/base
echo
verdicts=
for f in bin tit goal allprof dumpi paraver otf2; do
  case $f in
    allprof) input=$DIR/pmpi-trace-rank-0.txt ;;
    dumpi) input=$DIR/pingpong-dumpi.meta ;;
    otf2) input=$DIR/pingpong-otf2; [ -d "$input" ] || continue ;;
    paraver) input=$DIR/pingpong.prv ;;
    *) input=$DIR/pingpong.$f ;;
  esac
  # the median of RUNS runs (the machine's speed varies from one second to the next), each
  # run of BASE beside one of ours, first and second in turn (the second of two runs in a row
  # tends to be the faster)
  : > "$DIR/times"
  : > "$DIR/base-times"
  base_run() {
    /usr/bin/time -o "$DIR/time" -f '%e %M' "$BASE" info "$input" >/dev/null 2>&1
    cat "$DIR/time" >> "$DIR/base-times"
  }
  for i in $(seq "$RUNS"); do
    [ -n "$BASE" ] && [ $((i % 2)) = 0 ] && base_run
    events=$(/usr/bin/time -o "$DIR/time" -f '%e %M' "$BIN" info "$input" 2>/dev/null | awk '/^events / {print $2}')
    cat "$DIR/time" >> "$DIR/times"
    [ -n "$BASE" ] && [ $((i % 2)) = 1 ] && base_run
  done
  middle() { sort -n "$1" | awk -v n="$RUNS" 'NR == int((n + 1) / 2)'; }
  read -r secs kb < <(middle "$DIR/times")
  [ "$f" = bin ] && ours=$secs
  awk -v f="$f" -v e="$events" -v s="$secs" -v kb="$kb" -v ours="$ours" \
    'BEGIN { printf "%-8s %12d %10.2f %12.0f %14.0f %10.1f", f, e, s, e / (s > 0 ? s : 0.01), kb * 1024 / e, s / (ours > 0 ? ours : 0.01) }'
  if [ -n "$BASE" ]; then
    read -r base _ < <(middle "$DIR/base-times")
    awk -v s="$secs" -v b="$base" 'BEGIN { printf " %10.2f %10.2f", b, s / (b > 0 ? b : 0.01) }'
  fi
  echo
  [ "$f" = bin ] || verdicts+=$(awk -v f="$f" -v e="$events" -v s="$secs" 'BEGIN {
    r = e / (s > 0 ? s : 0.01); ok = r >= 1e7 || f == "otf2"
    printf "%s %.1f M events/s: %s\n", f, r / 1e6, ok ? (r >= 1e7 ? "met" : "slower (read through the OTF2 library)") : "MISSED" }')$'\n'
done
echo
echo "against 10 M events a second, at this machine's speed now (our binary: $ours s):"
printf '%s' "$verdicts"
