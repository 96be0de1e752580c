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
/// launcher, which ends its ranks), said in the log, and counts as done.
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
    l
}

/// The part of launch `l` measured at the placement most of its figures show: where the cache
/// line's round trip before a size's points (the sweep's first figure, else the size before's)
/// or right after them lies 2× or more from the median of the launch's figures
/// ([`super::placements_apart`]), the ranks moved during that size, and its points are left
/// out; the launch's figures become those of the part kept. Returns the sizes left out (none
/// where the program prints no figure after each size).
pub(super) fn held_part(mut l: Launch) -> (Launch, Vec<u64>) {
    let (Some([before, after]), false) = (l.line, l.at.is_empty()) else {
        return (l, Vec::new());
    };
    let figures: Vec<f64> = std::iter::once(before)
        .chain(l.at.iter().map(|a| a.1))
        .chain([after])
        .collect();
    let reference = super::fit::median(&figures);
    let other = |f: f64| super::placements_apart(f, reference);
    let (mut out, mut prev) = (Vec::new(), before);
    for &(k, f) in &l.at {
        if other(prev) || other(f) {
            out.push(k);
        }
        prev = f;
    }
    if !out.is_empty() {
        l.samples.retain(|x| !out.contains(&x.k));
        l.calls.retain(|c| !out.contains(&c.k));
        let kept: Vec<f64> = figures.into_iter().filter(|&f| !other(f)).collect();
        l.line = Some([kept[0], kept[kept.len() - 1]]);
    }
    (l, out)
}
