# Shell helpers the benchmark scripts share (sourced; $BIN is the predictor).
# measured TRACE: the trace's measured runtime, s.
measured() { "$BIN" info "$1" --format json | python3 -c 'import json, sys; print(json.load(sys.stdin)["measured_runtime_s"])'; }
# moments TRACE: the cache line's round trip at MPI_Init and at MPI_Finalize, ns (- -: none).
moments() {
  "$BIN" info "$1" --format json | python3 -c 'import json, sys
l = json.load(sys.stdin)["links"]
print("%.0f %.0f" % (l[0]["init_ns"], l[0]["final_ns"]) if l else "- -")'
}
# cores TRACE: the larger cache-line figure of a trace (its ranks' placement), ns; - for none.
cores() { moments "$1" | awk '{ print ($1 == "-") ? "-" : ($1 > $2 ? $1 : $2) }'; }
# median, range: of the numbers on stdin, a line each.
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
range() { sort -g | sed -n '1p;$p' | paste -sd' ' | awk '{printf "%.4f..%.4f", $1, $2}'; }
