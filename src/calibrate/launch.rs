//! One launch of an MPI job for `calibrate`, its output read as it goes, ended where the MPI
//! library hangs in `MPI_Finalize` after the measurement; and what the round-trip program
//! printed, read as the launch's measurements.

use super::fit::{Calls, Sample};
use super::noise;
use std::process::Command;

/// What the round-trip program prints when its measurement is over, before `MPI_Finalize`.
pub(super) const RTT_DONE: &str = "\nend\n";
/// What the tracer prints at `MPI_Finalize` once the trace is written.
pub(super) const TRACE_DONE: &str = "loggps-trace: wrote";
/// How long a launch may stay in `MPI_Finalize` once its program is done before it is ended:
/// MPICH 4.0.2 over two of its "nodes" on one machine hangs there at times (its ranks in PMI's
/// `read` and UCX's progress), untraced too.
const FINALIZE_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// One launch's output.
pub(super) struct Ran {
    pub(super) stdout: String,
    pub(super) stderr: String,
    /// It exited with success, or was ended in `MPI_Finalize` after its program was done.
    pub(super) ok: bool,
    pub(super) status: String,
}

/// Runs one launch of an MPI job to its end, its output read as it goes. A launch whose output
/// shows `done` and that has not exited [`FINALIZE_GRACE`] later is ended (SIGTERM to the
/// launcher, which ends its ranks), said in the log, and counts as done; one that shows `done`
/// and then exits with a failure counts as done too, said in the log.
pub(super) fn launch(
    cmd: &mut Command,
    done: &str,
    log: &mut dyn FnMut(String),
) -> std::io::Result<Ran> {
    use std::io::Read;
    use std::process::Stdio;
    use std::sync::{Arc, Mutex};
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let gather = |from: Option<Box<dyn Read + Send>>| {
        let into = Arc::new(Mutex::new(Vec::new()));
        let to = Arc::clone(&into);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            let Some(mut from) = from else { return };
            while let Ok(n @ 1..) = from.read(&mut buf) {
                to.lock().expect("output").extend_from_slice(&buf[..n]);
            }
        });
        into
    };
    let out = gather(
        child
            .stdout
            .take()
            .map(|x| Box::new(x) as Box<dyn Read + Send>),
    );
    let err = gather(
        child
            .stderr
            .take()
            .map(|x| Box::new(x) as Box<dyn Read + Send>),
    );
    let text =
        |b: &Arc<Mutex<Vec<u8>>>| String::from_utf8_lossy(&b.lock().expect("output")).into_owned();
    let mut seen_done: Option<std::time::Instant> = None;
    let (ok, status) = loop {
        if let Some(status) = child.try_wait()? {
            // What the readers still hold arrives once the pipes close.
            std::thread::sleep(std::time::Duration::from_millis(20));
            let done_seen = text(&out).contains(done) || text(&err).contains(done);
            if !status.success() && done_seen {
                // Open MPI 4.1 has exited so at times after the trace was written: what was
                // measured is whole.
                log(format!(
                    "the launch failed ({status}) once its measurement was over: its \
                     measurement kept"
                ));
                break (true, format!("{status} once its measurement was over"));
            }
            break (status.success(), status.to_string());
        }
        if seen_done.is_none() && (text(&out).contains(done) || text(&err).contains(done)) {
            seen_done = Some(std::time::Instant::now());
        }
        if seen_done.is_some_and(|t| t.elapsed() > FINALIZE_GRACE) {
            log(format!(
                "the launch hung in MPI_Finalize after its measurement ended: ended it ({}s later)",
                FINALIZE_GRACE.as_secs()
            ));
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            for _ in 0..50 {
                if child.try_wait()?.is_some() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
            break (true, "ended in MPI_Finalize".into());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    Ok(Ran {
        stdout: text(&out),
        stderr: text(&err),
        ok,
        status,
    })
}

/// One launch of the round-trip program: what it measured and where its ranks ran.
#[derive(Clone, Debug, Default)]
pub(super) struct Launch {
    pub(super) samples: Vec<Sample>,
    /// Rank 0's calls timed at each size's hiding point.
    pub(super) calls: Vec<Calls>,
    /// A cache line's round trip between the ranks' cores before and after the sweep, ns
    /// (None: they share no memory).
    pub(super) line: Option<[f64; 2]>,
    /// Whether MPI put the two ranks on different nodes (the program's `nodes 2`).
    pub(super) apart: bool,
    /// The round trips' time: their middle halves' and all of it ([`noise`]).
    pub(super) spent: noise::Spent,
    /// The same cache line's round trip right after each size's points: (size, ns).
    pub(super) at: Vec<(u64, f64)>,
    /// Round trips from a bounced buffer, timed right after the sweep (`--bounce`; the
    /// model's §13): at the placement of the cache line's second figure.
    pub(super) bounced: Vec<super::bounce::RoundTrips>,
    /// Each rank's detours while it spun on the clock before the sweep (`--detours`).
    pub(super) detours: Vec<noise::Detours>,
}

/// What one launch of the round-trip program printed (`text`), read as a [`Launch`]: lines it
/// does not know are passed over (the caller checks that every point is there).
pub(super) fn read_launch(text: &str) -> Launch {
    let mut l = Launch::default();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
        match (f.first().copied().unwrap_or(""), num(1), num(2)) {
            ("nodes", Some(n), _) => l.apart = n > 1.0,
            ("line", Some(before), Some(after)) => {
                l.line = (before > 0.0 && after > 0.0).then_some([before, after]);
            }
            ("line_at", Some(k), Some(ns)) if ns > 0.0 => l.at.push((k as u64, ns)),
            ("detours", Some(_), _) => l.detours.extend(noise::Detours::parse(&f[2..])),
            ("isend", Some(k), _) => {
                // The same size's hiding point, timed with MPI_Isend: printed right after it.
                if let (Some(c), Some(isend)) = (
                    l.calls.last_mut().filter(|c: &&mut Calls| c.k == k as u64),
                    num(3),
                ) {
                    c.isend_ns = Some(isend);
                }
            }
            (kind @ ("rtt" | "hide"), Some(k), Some(w)) => {
                let Some(rtt) = num(3) else { continue };
                let sample = Sample {
                    k: k as u64,
                    w_ns: w,
                    rtt_ns: rtt,
                };
                match (kind, num(6), num(7)) {
                    ("rtt", ..) => {
                        if let (Some(reps), Some(mean)) = (num(5), num(8)) {
                            l.spent.add(rtt, mean, reps);
                        }
                        l.samples.push(sample);
                    }
                    (_, Some(send), Some(recv)) => {
                        l.samples.push(sample);
                        l.calls.push(Calls {
                            k: k as u64,
                            w_ns: w,
                            send_ns: send,
                            recv_ns: recv,
                            isend_ns: None,
                        });
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    l.bounced = super::bounce::parse(text);
    l
}

/// Launch `l` split by where its ranks ran: the part measured at the placement most of its
/// figures show, and the part measured wholly at another (None where none was). Where the
/// cache line's round trip before a size's points (the sweep's first figure, else the size
/// before's) or right after them lies 2× or more from the median of the launch's figures
/// ([`super::placements_apart`]), the size is out of the first part; where both lie within 2×
/// of the median of those other figures, it is in the second. Each part's figures are its
/// sizes'. Also the sizes out of the first part (none where the program prints no figure after
/// each size).
pub(super) fn split_by_placement(mut l: Launch) -> (Launch, Option<Launch>, Vec<u64>) {
    let (Some([before, after]), false) = (l.line, l.at.is_empty()) else {
        return (l, None, Vec::new());
    };
    let figures: Vec<f64> = std::iter::once(before)
        .chain(l.at.iter().map(|a| a.1))
        .chain([after])
        .collect();
    let near = |f: f64, reference: f64| !super::placements_apart(f, reference);
    let main = super::fit::median(&figures);
    let others: Vec<f64> = figures
        .iter()
        .copied()
        .filter(|&f| !near(f, main))
        .collect();
    let second = super::fit::median(&others);
    // Each size with the figures before and after it.
    let around: Vec<(u64, f64, f64)> = (l.at.iter().enumerate())
        .map(|(i, &(k, f))| (k, figures[i], f))
        .collect();
    let at = |reference: f64| -> Vec<(u64, f64, f64)> {
        (around.iter().copied())
            .filter(|&(_, a, b)| near(a, reference) && near(b, reference))
            .collect()
    };
    let (first, other) = (at(main), at(second));
    let out: Vec<u64> = (l.at.iter())
        .map(|a| a.0)
        .filter(|k| !first.iter().any(|s| s.0 == *k))
        .collect();
    if out.is_empty() {
        return (l, None, out);
    }
    let part = |l: &Launch, sizes: &[(u64, f64, f64)]| -> Option<Launch> {
        let (f, z) = (sizes.first()?, sizes.last()?);
        let has = |k: u64| sizes.iter().any(|s| s.0 == k);
        Some(Launch {
            samples: l.samples.iter().filter(|x| has(x.k)).copied().collect(),
            calls: l.calls.iter().filter(|c| has(c.k)).copied().collect(),
            line: Some([f.1, z.2]),
            at: l.at.iter().filter(|a| has(a.0)).copied().collect(),
            ..l.clone()
        })
    };
    let second = match others.is_empty() {
        true => None,
        false => part(&l, &other),
    };
    match part(&l, &first) {
        Some(kept) => l = kept,
        // No size held the main placement throughout: the launch keeps nothing.
        None => {
            l.samples.clear();
            l.calls.clear();
            l.at.clear();
        }
    }
    (l, second, out)
}

/// The parts of launches measured at another placement than most of their sweep's (`parts`),
/// put with the launches of the set whose placement they ran at (`kept`'s, returned) or with
/// `other`'s launches (those at its placement; a part at a third is in no set): where those make
/// a set by themselves ([`super::MIN_OTHER_LAUNCHES`]),
/// or with the parts make one that measures every size of `sizes` at least once (a set made
/// by parts that leave sizes out would cost those from nothing); also how many went to
/// `other`, or the sizes they and `other` left unmeasured where they made no set.
pub(super) fn with_parts(
    kept: &[Launch],
    other: &mut Vec<Launch>,
    parts: Vec<Launch>,
    sizes: &[u64],
) -> (Vec<Launch>, Result<usize, Vec<u64>>) {
    let figure =
        |runs: &[Launch]| super::cores_ns(&runs.iter().filter_map(|r| r.line).collect::<Vec<_>>());
    let Some(main) = figure(kept) else {
        return (Vec::new(), Ok(0));
    };
    let (mut same, mut elsewhere) = (Vec::new(), Vec::new());
    for p in parts {
        match figure(std::slice::from_ref(&p)) {
            Some(f) if super::placements_apart(f, main) => elsewhere.push(p),
            Some(_) => same.push(p),
            None => {}
        }
    }
    // Parts at a third placement, 2× from the second set's (or, where it has no launch, from
    // the parts' own median), are in no set.
    if let Some(second) = figure(other).or_else(|| figure(&elsewhere)) {
        elsewhere.retain(|p| {
            figure(std::slice::from_ref(p)).is_some_and(|f| !super::placements_apart(f, second))
        });
    }
    let measured =
        |k: &u64| (other.iter().chain(&elsewhere)).any(|r| r.samples.iter().any(|x| x.k == *k));
    let missing: Vec<u64> = sizes.iter().copied().filter(|k| !measured(k)).collect();
    let far = elsewhere.len();
    let (alone, with) = (other.len(), other.len() + far);
    let min = super::MIN_OTHER_LAUNCHES;
    if far > 0 && (alone >= min || (with >= min && missing.is_empty())) {
        other.extend(elsewhere);
        return (same, Ok(far));
    }
    (same, if far > 0 { Err(missing) } else { Ok(0) })
}

/// Whether `parts` make a second set ([`with_parts`]) with the launches of `runs` that `p`
/// places at another placement than the majority's.
pub(super) fn parts_make_a_set(
    runs: &[Launch],
    p: &[Option<bool>],
    parts: &[Launch],
    sizes: &[u64],
) -> bool {
    let at = |k: Option<bool>| -> Vec<Launch> {
        (runs.iter().zip(p))
            .filter(|(_, x)| **x == k)
            .map(|(r, _)| r.clone())
            .collect()
    };
    let (main, mut other) = (at(Some(true)), at(Some(false)));
    matches!(
        with_parts(&main, &mut other, parts.to_vec(), sizes).1,
        Ok(1..)
    )
}

/// The launches that [`super::placements`] leaves out of the majority's set, in words: their cache
/// line's round trips against the others'.
pub(super) fn odd_launches(runs: &[Launch], p: &[Option<bool>]) -> String {
    let figures = |at: Option<bool>| -> Vec<[f64; 2]> {
        (runs.iter().zip(p))
            .filter(|(_, k)| **k == at)
            .filter_map(|(r, _)| r.line)
            .collect()
    };
    let (odd, kept, none) = (figures(Some(false)), figures(Some(true)), figures(None));
    let (moved, third): (Vec<[f64; 2]>, Vec<[f64; 2]>) =
        (none.iter()).partition(|&&[a, b]| super::placements_apart(a, b));
    let median =
        |v: &[[f64; 2]]| super::fit::median(&v.iter().flatten().copied().collect::<Vec<_>>());
    let list = |v: &[[f64; 2]]| {
        (v.iter().map(|[a, b]| format!("{a:.0}/{b:.0}")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut said = Vec::new();
    if !odd.is_empty() {
        said.push(format!(
            "{} launch(es) on cores {} than the others' (a cache line's round trip {} ns before/after, against {:.0} ns)",
            odd.len(),
            match median(&odd) > median(&kept) {
                true => "farther apart",
                false => "nearer together",
            },
            list(&odd),
            median(&kept)
        ));
    }
    if !third.is_empty() {
        said.push(format!(
            "{} launch(es) at a third placement of the cores, in no set ({} ns before/after)",
            third.len(),
            list(&third)
        ));
    }
    if !moved.is_empty() {
        said.push(format!(
            "{} launch(es) whose ranks moved between cores near and far apart within the sweep ({} ns before/after)",
            moved.len(),
            list(&moved)
        ));
    }
    said.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch that printed its end and then exited with a failure (as Open MPI 4.1 has, at
    /// times, after the trace was written) counts as done, said in the log; one that failed
    /// before its end is a failure.
    #[test]
    fn a_failure_after_the_measurement_keeps_it() {
        let mut said = Vec::new();
        let ran = launch(
            Command::new("sh").args(["-c", "printf 'rtt 8\\nend\\n'; exit 3"]),
            RTT_DONE,
            &mut |m| said.push(m),
        )
        .unwrap();
        assert!(ran.ok && ran.stdout.contains("rtt 8"), "{}", ran.status);
        assert!(
            said.iter()
                .any(|m| m.contains("failed (exit status: 3) once its measurement was over")),
            "{said:?}"
        );
        let ran = launch(
            Command::new("sh").args(["-c", "printf 'rtt 8\\n'; exit 3"]),
            RTT_DONE,
            &mut |_| {},
        )
        .unwrap();
        assert!(
            !ran.ok && ran.status.contains("exit status: 3"),
            "{}",
            ran.status
        );
    }
}
