"""What queue.sh and gaps.sh share: the untraced runs at the traced run's placement."""
import collections
import sys


def untraced_at(files, traced_cores, tag):
    """From the untraced runs' outputs `files`, those whose `cores BEFORE AFTER` line lies within
    2x of `traced_cores`: each `TAG A B NS` line's NS by (A, B), and the runs' cores; exits
    saying so where none ran there."""
    near = lambda a, b: a < 2 * b and b < 2 * a
    by, placed = collections.defaultdict(list), []
    for f in files:
        lines = [line.split() for line in open(f)]
        cores = [max(float(w[1]), float(w[2])) for w in lines if w[0] == "cores"]
        if not cores or not near(cores[0], traced_cores):
            continue
        placed.append("%.0f" % cores[0])
        for w in lines:
            if w[0] == tag:
                by[(int(w[1]), int(w[2]))].append(float(w[3]))
    if not by:
        sys.exit(f"no untraced run at the traced run's placement ({traced_cores:.0f} ns): run again (RUNS=N for more)")
    return by, placed
