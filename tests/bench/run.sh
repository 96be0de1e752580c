#!/usr/bin/env bash
# The scale benchmark (issue 7): generates a fixed set of synthetic traces (cached in $BENCH_DIR)
# and prints, for each, the figures of `loggps-predict bench` at 1 thread and at all threads:
# parse GB/s and events/s, graph-build events/s, replay events/s, end-to-end events/s, peak RSS
# and bytes per event, heap allocations per event (the three phases'), and at all threads the
# speedup over 1 thread (end to end, same run).
# Figures, not assertions: machines are shared and noisy; compare ratios measured in one run.
#
#   tests/bench/run.sh                 # the whole set
#   CASES="diss a2a" REPEAT=5 tests/bench/run.sh
#   THREADS="1 2 4 8 16" tests/bench/run.sh   # the scaling on a machine with more cores
#
# Each row is the fastest end to end of REPEAT runs (3 unless set), the thread counts (1 and
# all, unless THREADS lists others) taking turns: on a shared machine a single run's speed
# drifts by tens of percent, and the fastest is the one least disturbed. A case whose rounds
# took less than MIN_SECONDS (5 unless set; their end-to-end times summed) runs more rounds, up
# to MAX_REPEAT (60): a short case needs many draws for one to be undisturbed in every phase,
# and a longer one a few more than 3, so that one slow spell does not set its speedup. The
# speedup is of the row's time over the first thread count's. Last, the run's figures against
# issue 7's targets (met or MISSED: a summary to read, never a test's verdict).
#
# `diss` and `a2a` are the two LogGOPSim reference cases: the 262,144-rank dissemination and
# the 1,024-rank linear all-to-all (LogGOPSim's own figures for them: tests/bench/RESULTS.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${LOGGPS_PREDICT:-target/release/loggps-predict}
BENCH_DIR=${BENCH_DIR:-/tmp/loggps-bench}
CASES=${CASES:-"diss a2a ring halo3d gauss bcast coll allr cg mix big"}
REPEAT=${REPEAT:-3}
MIN_SECONDS=${MIN_SECONDS:-5}
MAX_REPEAT=${MAX_REPEAT:-60}
THREADS=${THREADS:-$(echo 1 "$(nproc)" | tr ' ' '\n' | sort -nu | tr '\n' ' ')}
FIRST=${THREADS%% *}
[ -x "$BIN" ] || cargo build --release --quiet
mkdir -p "$BENCH_DIR"
ROWS=$(mktemp)
trap 'rm -f "$ROWS"' EXIT

spec() {
  case $1 in
    diss)   echo "--pattern dissemination --ranks 262144" ;;              # LogGOPSim case 1
    a2a)    echo "--pattern alltoall --ranks 1024" ;;                     # LogGOPSim case 2
    ring)   echo "--pattern ring --ranks 64 --iterations 20000 --bytes 20000 --compute 5000" ;;
    halo3d) echo "--pattern halo3d --ranks 4096 --iterations 50 --bytes 65536 --compute 100000" ;;
    gauss)  echo "--pattern gauss --ranks 64 --iterations 2048 --bytes 16392 --compute 20000" ;;
    bcast)  echo "--pattern bcast --ranks 65536 --iterations 20" ;;      # binomial Send/Recv loop
    coll)   echo "--pattern allreduce --ranks 65536 --iterations 20 --bytes 8" ;;  # modeled collectives
    allr)   echo "--pattern allreduce --ranks 1024 --iterations 10000 --bytes 8" ;;  # many small ones
    cg)     echo "--pattern cg --ranks 1024 --iterations 500 --bytes 8192 --compute 50000" ;;  # both
    mix)    echo "--pattern collectives --ranks 262144 --iterations 10 --bytes 8" ;;  # 3 schedules
    big)    echo "--pattern dissemination --ranks 1048576 --iterations 2" ;;  # ~10^8 events
    *) echo "unknown case $1" >&2; exit 2 ;;
  esac
}

printf '%-7s %7s %11s %8s | %9s %11s %11s %11s %11s | %9s %8s %9s %8s\n' case threads events GB \
  parse_GB/s parse_ev/s graph_ev/s replay_ev/s total_ev/s total_s B/event allocs/ev speedup
for c in $CASES; do
  f="$BENCH_DIR/$c.bin"
  [ -f "$f" ] || "$BIN" synth $(spec "$c") -o "$f" 2>/dev/null
  cat "$f" > /dev/null   # parse figures are for a file in the page cache, not for the disk
  # The thread counts take turns, so that a drift of the machine's speed hits both alike.
  declare -A best=() best_s=()
  rounds=0 spent=0
  while [ "$rounds" -lt "$REPEAT" ] || { [ "$rounds" -lt "$MAX_REPEAT" ] &&
      awk -v a="$spent" -v b="$MIN_SECONDS" 'BEGIN {exit !(a < b)}'; }; do
    for t in $THREADS; do
      out=$("$BIN" bench "$f" --platform myrinet --threads "$t" 2>/dev/null)
      s=$(echo "$out" | awk '/"total_s"/ {gsub(",", "", $2); print $2}')
      spent=$(awk -v a="$spent" -v b="$s" 'BEGIN {print a + b}')
      if [ -z "${best[$t]:-}" ] || awk -v a="$s" -v b="${best_s[$t]}" 'BEGIN {exit !(a < b)}'; then
        best[$t]=$out best_s[$t]=$s
      fi
    done
    rounds=$((rounds + 1))
  done
  for t in $THREADS; do
    echo "${best[$t]}" | awk -v c="$c" -v one="${best_s[$FIRST]}" -v rows="$ROWS" '
      /"threads"/ {th=$2} /"events"/ {ev=$2} /"file_bytes"/ {fb=$2} /"parse_gb_per_s"/ {pg=$2}
      /"parse_events_per_s"/ {pe=$2} /"graph_events_per_s"/ {ge=$2} /"replay_events_per_s"/ {re=$2}
      /"total_events_per_s"/ {te=$2} /"total_s"/ {ts=$2} /"peak_bytes_per_event"/ {be=$2}
      /"peak_rss_bytes"/ {rss=$2} /"ranks"/ {rk=$2}
      # The allocation counts of the three phases: the lines after "allocations": {.
      a > 0 { gsub(",", "", $2); al += $2; a-- } /"allocations": \{/ {a=3}
      END { gsub(",", "", th); gsub(",", "", ts); gsub(",", "", te); gsub(",", "", be)
            gsub(",", "", rss)
            printf "%-7s %7s %11d %8.2f | %9.2f %11.3g %11.3g %11.3g %11.3g | %9.2f %8.1f %9.4f %8.2f\n",
            c, th, ev, fb/1e9, pg, pe, ge, re, te, ts, be, al / ev, one / ts
            print c, th, te, ts, be, rss, one / ts, al / ev, ev / rk >> rows }'
  done
done

# Issue 7's targets (set for a 2-core machine), as this run measured them: the
# end-to-end rate and the all-to-all's time at 2 threads (else the last count), a second
# thread's speedup where 1 and 2 were run, and each case's peak (printed to a digit more than
# the rows: a speedup of 1.697 is not 1.7). No heap allocation per event: at most one per 100
# events, at any thread count, on the cases of 1,000 events a rank or more (where a rank's or
# a collective call's own allocations, which the others have, are few against its events).
TWO=$(echo " $THREADS " | grep -q ' 2 ' && echo 2 || echo "${THREADS##* }")
echo
echo "issue 7's targets in this run, rates at $TWO threads (one run's figures: compare, don't gate):"
awk -v two="$TWO" -v one="$(echo " $THREADS " | grep -q ' 1 ' && echo 1)" '
  function row(what, value, ok) { printf "  %-44s %-20s %s\n", what, value, ok ? "met" : "MISSED" }
  { c=$1; t=$2; if (t == two) { te[c]=$3; ts[c]=$4; sp[c]=$7; rss[c]=$6 }
    if (!(c in be) || $5 > be[c]) be[c]=$5; if (!(c in seen)) { seen[c]=1; order[n++]=c }
    if ($9 >= 1000 && (!(c in al) || $8 > al[c])) al[c]=$8 }
  END {
    if ("diss" in te) row("dissemination end to end >= 20 M events/s",
      sprintf("%.1f M events/s", te["diss"]/1e6), te["diss"] >= 20e6)
    if ("a2a" in ts) row("linear all-to-all end to end <= 2 s", sprintf("%.2f s", ts["a2a"]),
      ts["a2a"] <= 2)
    if ("big" in ts) row("10^8 events end to end <= 10 s within 8 GiB",
      sprintf("%.2f s, %.2f GiB", ts["big"], rss["big"]/2^30), ts["big"] <= 10 && rss["big"] <= 8 * 2^30)
    for (c in al) if (!worst || al[c] > al[worst]) worst=c
    if (worst) row("heap allocations <= 0.01 per event",
      sprintf("%.4f (%s)", al[worst], worst), al[worst] <= 0.01)
    for (k = 0; k < n; k++) { c=order[k]
      row(c " peak <= 40 bytes/event", sprintf("%.2f B/event", be[c]), be[c] <= 40)
      if (one == 1 && two == 2 && c in sp)
        row(c " 2 threads >= 1.7x 1 thread", sprintf("%.3fx", sp[c]), sp[c] >= 1.7)
    }
  }' "$ROWS"
