//! What a ping-pong cannot show: two ranks that send and receive at once, as a halo does.
//!
//! The sweep's round trips have one message in flight; their parameters say how long a message
//! takes, not which part of it holds each rank's CPU. Two messages in opposite directions
//! overlap their latencies and not their ranks' CPU work (the model's §14), so an exchange
//! costs what the set says only where its overheads are the ranks' CPU time and its latency is
//! `L`. The round-trip program's `--exchange` (tracer/calibrate/rtt.c) makes, at each size,
//! exchanges of one and of two messages each way (`MPI_Irecv`s, `MPI_Isend`s, `MPI_Waitall`)
//! under the tracer; [`check`] replays that trace with the fitted set and compares, per size and
//! count, the median exchange measured and predicted: from rank 0's first `MPI_Irecv` to its
//! `MPI_Waitall`'s return.

use crate::error::Error;
use crate::model::{BySize, Model, Params, SizeParam};
use crate::trace::{FLAG_CLEAN, Routine, Trace};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The sizes exchanged: a message of each of a shared-memory library's paths (Open MPI's fast
/// boxes, its copies below the eager limit, its rendezvous at its smallest, where the overheads
/// are most of a message's cost, one it still copies through its own buffers on both sides
/// (up to 32 KiB), and by single copy, a large one), those up to the sweep's largest, as
/// `--exchange` takes them.
pub fn sizes(max_bytes: u64) -> String {
    let each: Vec<String> = [8u64, 1024, 4096, 16384, 65536, 262144]
        .iter()
        .filter(|&&k| k <= max_bytes.max(8))
        .map(|k| k.to_string())
        .collect();
    each.join(",")
}

/// Exchanges of `n` messages of `k` bytes each way: the median measured and predicted, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exchange {
    pub k: u64,
    pub n: u32,
    /// Its rank 0's sends flagged `clean` by the tracer (the bounce probe's exchanges from a
    /// buffer written once, the model's §13): kept apart from those of buffers written before
    /// each exchange.
    pub clean: bool,
    pub measured_ns: f64,
    pub predicted_ns: f64,
}

impl Exchange {
    /// The prediction's error, relative to the measurement.
    pub fn error(&self) -> f64 {
        self.predicted_ns / self.measured_ns.max(1e-9) - 1.0
    }
}

/// The exchanges of one traced launch, replayed with the set nearest its placement.
#[derive(Clone, Debug, PartialEq)]
pub struct Exchanges {
    pub each: Vec<Exchange>,
    /// A cache line's round trip between the ranks' cores in that launch (the larger of its
    /// figures at `MPI_Init` and `MPI_Finalize`), and the set's `cores`.
    pub cores_ns: Option<f64>,
    pub set_cores_ns: Option<f64>,
    /// Where some exchange goes by rendezvous: the share of a payload's `T1` on its sender's
    /// CPU fitted to them (the model's §14); `each` is predicted with it.
    pub rendezvous: Option<Rendezvous>,
    /// Some exchange went by rendezvous, but the launch ran at another placement than the
    /// set's: the share was not fitted (the sets keep theirs: 0, the receiver's CPU alone).
    pub share_elsewhere: bool,
    /// Each exchange measured untraced, predicted with the tracer's time taken out
    /// ([`measured_untraced`]); else as traced, the tracer's time kept.
    pub untraced: bool,
    /// The launches at the set's placement this one was chosen from (the median share's), and
    /// how many of them fitted a share ([`Rendezvous::fits`]; the median is of theirs).
    pub launches: usize,
    pub fitted: usize,
    /// The launch's own round trips above `S` over the set's at those sizes (the median ratio;
    /// 1 where it timed none): its minute's speed against the sweep's, which the share is
    /// fitted without.
    pub speed: f64,
}

/// The share of a rendezvous payload's `T1` that holds its sender's CPU, fitted to the
/// exchanges above `S`, size by size: `sender`, and those exchanges' error with it and at both
/// ends (0: the receiver's CPU alone, 1: both sides copying), each the mean of
/// |ln(predicted / measured)| over them all.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rendezvous {
    pub sender: BySize,
    pub error: f64,
    pub receiver_error: f64,
    pub both_error: f64,
}

/// A share that leaves its launch's exchanges more than this off on average (the mean of
/// |ln(predicted / measured)|) stands for no sender's CPU: the exchanges disagree with each
/// other (a launch's 16 KiB ones 30% slower than the set, its 256 KiB ones 30% faster), and
/// the share where their errors cancel is whatever their balance makes it (0.72 in two
/// calibrations off by 44% and 63%, where the launches that fitted gave 0.10–0.26).
pub const SHARE_MISS: f64 = 0.15;

impl Rendezvous {
    /// Whether the share fits its exchanges within [`SHARE_MISS`].
    pub fn fits(&self) -> bool {
        self.error <= SHARE_MISS
    }

    /// The mean of its shares over the sizes fitted (which launch's is the median).
    pub fn mean(&self) -> f64 {
        let p = self.sender.points();
        p.iter().map(|x| x.1).sum::<f64>() / p.len() as f64
    }
}

/// Per size above `eager_limit` bytes, the sum of ln(predicted / measured) over the exchanges
/// of `each` of that size, each measurement divided by the launch's `speed` first, the sum of
/// its magnitude, and their number (empty: none is above).
fn rendezvous_errors(
    each: &[Exchange],
    eager_limit: u64,
    speed: f64,
) -> BTreeMap<u64, (f64, f64, usize)> {
    let mut by_size: BTreeMap<u64, (f64, f64, usize)> = BTreeMap::new();
    for e in each.iter().filter(|e| e.k > eager_limit) {
        let ln = (e.predicted_ns.max(1e-9) * speed / e.measured_ns.max(1e-9)).ln();
        let s = by_size.entry(e.k).or_default();
        *s = (s.0 + ln, s.1 + ln.abs(), s.2 + 1);
    }
    by_size
}

/// The mean |ln(predicted / measured)| over every size of [`rendezvous_errors`].
fn mean_error(by_size: &BTreeMap<u64, (f64, f64, usize)>) -> f64 {
    let (sum, n) = (by_size.values()).fold((0.0, 0), |(s, n), e| (s + e.1, n + e.2));
    sum / n.max(1) as f64
}

/// The same exchanges timed untraced by the round-trip program (`exchange K N MIDDLE_NS REPS`
/// lines: rank 0's mean of the middle half, from before its first `MPI_Irecv` to after its
/// `MPI_Waitall`): per size and count each way, the median over the launches' outputs, ns.
pub type Untraced = BTreeMap<(u64, u32), f64>;

/// [`Untraced`] read from the outputs of the round-trip program's launches (lines it does not
/// know passed over).
pub fn untraced(outputs: &[String]) -> Untraced {
    let mut each: BTreeMap<(u64, u32), Vec<f64>> = BTreeMap::new();
    for line in outputs.iter().flat_map(|o| o.lines()) {
        if let ["exchange", k, n, ns, ..] = line.split_whitespace().collect::<Vec<_>>()[..]
            && let (Ok(k), Ok(n), Ok(ns)) = (k.parse(), n.parse(), ns.parse::<f64>())
            && ns > 0.0
        {
            each.entry((k, n)).or_default().push(ns);
        }
    }
    (each.into_iter())
        .map(|(key, v)| (key, super::fit::median(&v)))
        .collect()
}

/// `each` measured untraced: each exchange's measured time the untraced one of its size and
/// count, those with none (and those sent `clean`, which the untraced launches do not make)
/// left out. The exchanges are then to be predicted with the tracer's time taken out of the
/// replay (the model's §16): the tracer's records between the calls (an eager `MPI_Isend`'s of
/// 4 KiB 410–460 ns here) overlap what a second message costs its ranks rather than add to it
/// (4 KiB eager under Open MPI's shared memory: two each way 2.7–3.0 µs traced, 2.5–2.8 µs
/// untraced, where the calls' own durations sum to 1.8), so a split fitted to the traced ones
/// with the tracer's time kept leaves the second message nearly free (MODEL.md §9).
pub fn measured_untraced(each: Vec<Exchange>, untraced: &Untraced) -> Vec<Exchange> {
    (each.into_iter())
        .filter(|e| !e.clean)
        .filter_map(|e| {
            Some(Exchange {
                measured_ns: *untraced.get(&(e.k, e.n))?,
                ..e
            })
        })
        .collect()
}

/// [`check`] with whichever of `sets` has the `cores` nearest the launch's own (by ratio; the
/// first where either is not known). Without `untraced`, the tracer's own time kept in the
/// replay (the model's §16): the measured exchanges are the traced ones; with it, taken out,
/// each exchange measured untraced ([`measured_untraced`]). Where some exchange goes by rendezvous,
/// the set's `rendezvous_sender` is fitted to them ([`Rendezvous`]): the share, 0 to 1, at
/// which their mean error crosses 0 (a larger share only delays a completion, so the error
/// grows with it), found by bisection to 1/1024; 0 or 1 where it does not cross. Not where the
/// launch ran at another placement than the nearest set's (their `cores` 2× apart): a far
/// set's payloads cost 2–3× a near launch's, and a share fitted across them would stand for
/// that difference, not for the sender's CPU ([`Exchanges::share_elsewhere`]). The launch's
/// own round trips (`rounds`, timed for `bounce` from buffers written before each send, as the
/// sweep's are) above `S` tell its minute's speed against the sweep's: each exchange is
/// compared at the sweep's speed ([`Exchanges::speed`]), so that the share does not take up a
/// launch run in a slower or faster minute than the set (shares of 0.06 to 0.89 in six
/// calibrations within 40 minutes without it).
pub fn check_nearest(
    mut trace: Trace,
    sets: &[&Params],
    rounds: &[super::bounce::RoundTrips],
    untraced: Option<&Untraced>,
) -> Result<Exchanges, Error> {
    if untraced.is_none() {
        trace.meta.ranks.keep_tracer_time();
    }
    let cores = super::probe_cores(&trace);
    let p = (sets.get(super::nearest_set(&trace, sets)))
        .ok_or_else(|| Error::Io("no set to check the exchanges with".into()))?;
    let ratios: Vec<f64> = (rounds.iter())
        .filter(|x| x.k > p.S && x.written_ns > 0.0)
        .map(|x| x.written_ns / super::fit::model_rtt(p, x.k, 0.0))
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    let speed = match ratios.is_empty() {
        true => 1.0,
        false => super::fit::median(&ratios),
    };
    // The exchanges predicted with a share at each size above S (`shares`: size, share).
    let with = |shares: &[(u64, f64)]| {
        let q = Params {
            rendezvous_sender: Some(
                BySize::new(SizeParam::RendezvousSender, shares).expect("shares in 0–1"),
            ),
            ..**p
        };
        check(&trace, &q).map(|mut each| {
            each.retain(|e| !e.clean);
            if let Some(u) = untraced {
                each = measured_untraced(each, u);
            }
            let errors = rendezvous_errors(&each, p.S, speed);
            (each, errors)
        })
    };
    // One share for every size first: its sizes above S are those measured.
    let (mut each, receiver) = with(&[(0, 0.0)])?;
    let sizes: Vec<u64> = receiver.keys().copied().collect();
    let mut rendezvous = None;
    let elsewhere = match (cores, p.cores) {
        (Some(a), Some(b)) => super::placements_apart(a, b),
        _ => false,
    };
    let share_elsewhere = elsewhere && !receiver.is_empty();
    if !receiver.is_empty() && !elsewhere {
        let (_, both) = with(&[(0, 1.0)])?;
        // Each size's share where its exchanges' mean error crosses 0 (a larger share only
        // delays a completion, so it grows with the share): 0 or 1 where it does not cross,
        // else found by bisection to 1/1024, every size at once (an exchange of one size
        // costs by its own size's share alone).
        let mut bounds: Vec<(f64, f64)> = (sizes.iter())
            .map(|k| match (receiver[k].0 >= 0.0, both[k].0 <= 0.0) {
                (true, _) => (0.0, 0.0),
                (false, true) => (1.0, 1.0),
                (false, false) => (0.0, 1.0),
            })
            .collect();
        while bounds.iter().any(|(lo, hi)| hi - lo > 1.0 / 1024.0) {
            let mids: Vec<(u64, f64)> = (sizes.iter().zip(&bounds))
                .map(|(&k, (lo, hi))| (k, 0.5 * (lo + hi)))
                .collect();
            let (_, errors) = with(&mids)?;
            for ((k, mid), b) in mids.iter().zip(bounds.iter_mut()) {
                if b.1 - b.0 > 1.0 / 1024.0 {
                    *b = match errors[k].0 < 0.0 {
                        true => (*mid, b.1),
                        false => (b.0, *mid),
                    };
                }
            }
        }
        let shares: Vec<(u64, f64)> = sizes.iter().zip(&bounds).map(|(&k, b)| (k, b.1)).collect();
        let (fitted, errors) = with(&shares)?;
        each = fitted;
        rendezvous = Some(Rendezvous {
            sender: BySize::new(SizeParam::RendezvousSender, &shares).expect("shares in 0–1"),
            error: mean_error(&errors),
            receiver_error: mean_error(&receiver),
            both_error: mean_error(&both),
        });
    }
    Ok(Exchanges {
        each,
        cores_ns: cores,
        set_cores_ns: p.cores,
        rendezvous,
        share_elsewhere,
        untraced: untraced.is_some(),
        launches: 1,
        fitted: usize::from(rendezvous.is_some_and(|r| r.fits())),
        speed,
    })
}

/// The exchanges of `trace` (the round-trip program's `--exchange`, under the tracer) replayed
/// with `p` (collectives as Open MPI 4.1 picks them): per size and count of messages each way,
/// rank 0's median exchange measured and predicted, by size, then count.
pub fn check(trace: &Trace, p: &Params) -> Result<Vec<Exchange>, Error> {
    let g = crate::graph::build(trace, "the exchanges")?;
    let steps = Mutex::new(Vec::new());
    let keep = |batch: &[crate::replay::Step]| {
        let mut s = steps.lock().expect("no replay thread panics");
        s.extend(batch.iter().filter(|x| x.rank == 0).copied());
    };
    let coll = crate::collectives::traced::Choice::tuned();
    let model = Model::LogGps(*p);
    crate::replay::replay_observed(trace, &g, &model, &coll, "exchanges", &|_| {}, Some(&keep))?;
    let mut predicted = vec![(f64::NAN, f64::NAN); trace.rank(0).len()];
    for s in steps.into_inner().expect("no replay thread panics") {
        predicted[s.event as usize] = (s.call_ns, s.return_ns);
    }
    let ev = trace.rank(0);
    // Per size, count and cleanness: the exchanges measured and predicted.
    type Both = (Vec<f64>, Vec<f64>);
    let mut each: BTreeMap<(u64, u32, bool), Both> = BTreeMap::new();
    // The exchange being read: its first receive's event and bytes, its receives, and whether
    // its sends so far are flagged clean.
    let mut open: Option<(usize, u64, u32, bool)> = None;
    for i in 0..ev.len() {
        match (ev.routine(i), open) {
            (Routine::Irecv, None) => open = Some((i, ev.bytes(i), 1, true)),
            (Routine::Irecv, Some((first, k, n, c))) => open = Some((first, k, n + 1, c)),
            (Routine::Isend, Some((first, k, n, c))) => {
                open = Some((first, k, n, c && ev.flags(i) & FLAG_CLEAN != 0))
            }
            (Routine::Isend, None) => {}
            (Routine::Waitall, Some((first, k, n, clean))) => {
                let measured = ev.t_return(i).saturating_sub(ev.t_call(first)) as f64;
                let at = predicted[i].1 - predicted[first].0;
                let (m, q) = each.entry((k, n, clean)).or_default();
                m.push(measured);
                q.push(at);
                open = None;
            }
            _ => open = None,
        }
    }
    Ok(each
        .into_iter()
        .map(|((k, n, clean), (m, q))| Exchange {
            k,
            n,
            clean,
            measured_ns: super::fit::median(&m),
            predicted_ns: super::fit::median(&q),
        })
        .collect())
}

/// The report's line on a set that no exchange launch ran at the placement of, where the other
/// set's did (`own`, `other`: each set's exchanges): its `rendezvous_sender` (`share`) was not
/// fitted at its own placement.
pub fn borrowed(
    own: Option<&Exchanges>,
    other: Option<&Exchanges>,
    share: Option<BySize>,
) -> Option<String> {
    (own.is_none() && other.is_some()).then(|| {
        let share = share.map_or("0".into(), |b| b.to_string());
        format!(
            "none of the exchange launches ran at this set's placement: its rendezvous_sender \
             ({share}) is not fitted here (the other set's where that one fitted, else 0: the \
             receiver's CPU alone), and no exchange was checked against it"
        )
    })
}

/// The exchanges in words, a line a size after one on the placement, and whether one is
/// predicted more than `worst` off where the launch ran at the set's placement (its `cores`
/// within 2× of the set's, or either unknown: a message over shared memory costs 2–3× more on
/// cores far apart, so the check says nothing of the set at another).
pub fn finding(x: &Exchanges, worst: f64) -> (Vec<String>, bool) {
    let ns = |v: Option<f64>| v.map_or("unknown".into(), |v| format!("{v:.0} ns"));
    let apart = match (x.cores_ns, x.set_cores_ns) {
        (Some(a), Some(b)) => (a / b).max(b / a) >= 2.0,
        _ => false,
    };
    let mut lines = vec![format!(
        "traced at cores {} (a cache line's round trip), predicted with the set of {}{}{}{}",
        ns(x.cores_ns),
        ns(x.set_cores_ns),
        match (x.launches, x.rendezvous.is_some()) {
            (0 | 1, _) => String::new(),
            (n, false) => format!(
                " (of {n} launches at this placement, the middle one: none sends by rendezvous)"
            ),
            (n, true) => format!(
                " (of {n} launches at this placement, {} fitting a share within {:.0}%: the one \
                 whose share is their median{})",
                x.fitted,
                100.0 * SHARE_MISS.exp_m1(),
                match x.fitted {
                    0 => ", of all",
                    _ => "",
                }
            ),
        },
        match x.untraced {
            true => ", against the same exchanges untraced (the tracer's time taken out)",
            false => ", against the traced ones (the tracer's time kept)",
        },
        match apart {
            true => ": another placement, not judged",
            false => "",
        }
    )];
    let (rendezvous, x_share_elsewhere, speed) = (x.rendezvous, x.share_elsewhere, x.speed);
    let x = &x.each;
    let mut by_size: BTreeMap<u64, Vec<&Exchange>> = BTreeMap::new();
    for e in x {
        by_size.entry(e.k).or_default().push(e);
    }
    for (k, es) in by_size {
        let parts: Vec<String> = (es.iter())
            .map(|e| {
                format!(
                    "{} each way {:.2} µs measured, {:.2} µs predicted ({:+.0}%)",
                    e.n,
                    e.measured_ns / 1e3,
                    e.predicted_ns / 1e3,
                    100.0 * e.error()
                )
            })
            .collect();
        lines.push(format!("{k} B: {}", parts.join("; ")));
    }
    if x_share_elsewhere {
        lines.push(
            "above S the share of a rendezvous payload that holds its sender's CPU is not fitted \
             at another placement (rendezvous_sender kept: 0, the receiver's CPU alone)"
                .into(),
        );
    }
    if let Some(v) = rendezvous {
        lines.push(format!(
            "above S a rendezvous payload holds its sender's CPU for {} of its T1 \
             (rendezvous_sender, fitted to those exchanges size by size: off by {:.0}% on \
             average; {:.0}% with the receiver's CPU alone, {:.0}% with both sides copying)",
            v.sender,
            100.0 * v.error.exp_m1(),
            100.0 * v.receiver_error.exp_m1(),
            100.0 * v.both_error.exp_m1()
        ));
        if !v.fits() {
            let last = lines.last_mut().expect("the line above");
            last.push_str(&format!(
                "; no share fits them within {:.0}%: not taken (the other placement's where one \
                 fits there, else 0, the receiver's CPU alone)",
                100.0 * SHARE_MISS.exp_m1()
            ));
        }
        if (speed - 1.0).abs() > 0.05 {
            let last = lines.last_mut().expect("the line above");
            last.push_str(&format!(
                "; the launch's own round trips above S ran {:.2} of the set's, its exchanges \
                 taken at the set's speed",
                speed
            ));
        }
    }
    (lines, !apart && x.iter().any(|e| e.error().abs() > worst))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Two ranks, each: an exchange of one 1000-byte message each way, then one of two, every
    /// call 50 ns long and back to back (no computation kept), under a set of the paper's form
    /// with `o` = 100, `L` = 1000 and nothing per byte, eager, messages moving whatever the
    /// ranks do (the model's §4, §14). Hand-costed from the model's rules:
    /// - one each way: `MPI_Irecv` 0–100, `MPI_Isend` 100–200, the message leaving at 100 and
    ///   arriving at 100 + `T1` + `T2` = 1200; the `MPI_Waitall` called at 200 returns at
    ///   1200 + `T3` = 1300.
    /// - two each way: receives 0–200, sends 200–400, the messages arriving at 1300 and 1400;
    ///   their receives taken one at a time: 1300–1400, 1400–1500.
    ///
    /// Measured: 150 ns and 250 ns (three and five calls of 50 ns).
    #[test]
    fn exchanges_are_measured_and_predicted_from_the_first_receive_to_the_waitall() {
        let mut text = String::from("loggps-trace 1\nranks 2\n");
        for r in 0..2 {
            let peer = 1 - r;
            let mut t = 1_000_000u64;
            let mut call = |what: &str, args: String| {
                text.push_str(&format!("{r} {what} {t} {} {args}\n", t + 50));
                t += 50;
            };
            call("MPI_Init", String::new());
            let mut req = 0;
            for n in 1..=2u32 {
                let first = req;
                for (what, j) in
                    (0..2 * n).map(|j| (["MPI_Irecv", "MPI_Isend"][(j / n) as usize], j % n))
                {
                    call(
                        what,
                        format!("bytes=1000 peer={peer} tag={j} comm=0 req={req}"),
                    );
                    req += 1;
                }
                let done: Vec<String> = (first..req)
                    .map(|q| match q - first < n {
                        true => format!("{q}:{peer}:{}", q - first),
                        false => format!("{q}:-1:-1"),
                    })
                    .collect();
                call("MPI_Waitall", format!("done={}", done.join(",")));
            }
            call("MPI_Finalize", String::new());
        }
        let trace = crate::trace::text::parse("x.txt", text.as_bytes())
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let p = Params::paper([1000.0, 100.0, 0.0, 0.0, 0.0, 0.0], 1 << 20, 1 << 20);
        let x = check(&trace, &p).unwrap();
        let got: Vec<(u64, u32, f64, f64)> = (x.iter())
            .map(|e| (e.k, e.n, e.measured_ns, e.predicted_ns))
            .collect();
        assert_eq!(got, [(1000, 1, 150.0, 1300.0), (1000, 2, 250.0, 1500.0)]);
        let x = Exchanges {
            each: x,
            cores_ns: None,
            set_cores_ns: None,
            rendezvous: None,
            share_elsewhere: false,
            untraced: false,
            launches: 1,
            fitted: 0,
            speed: 1.0,
        };
        let (lines, off) = finding(&x, 0.10);
        assert!(off);
        assert_eq!(lines.len(), 2);
        // At another placement than the set's, the same exchanges are not judged.
        let far = Exchanges {
            cores_ns: Some(400.0),
            set_cores_ns: Some(150.0),
            ..x.clone()
        };
        let (lines, off) = finding(&far, 0.10);
        assert!(
            !off && lines[0].ends_with("another placement, not judged"),
            "{lines:?}"
        );
        assert!(
            lines[1].starts_with("1000 B: 1 each way 0.15 µs measured, 1.30 µs"),
            "{lines:?}"
        );
    }

    /// A set with no exchange launch at its placement is said to borrow its share where the
    /// other set has exchanges, and not where neither has (no tracer) or it has its own.
    #[test]
    fn a_set_without_exchanges_at_its_placement_says_its_share_is_not_its_own() {
        let x = Exchanges {
            each: Vec::new(),
            cores_ns: Some(118.0),
            set_cores_ns: Some(114.0),
            rendezvous: None,
            share_elsewhere: false,
            untraced: false,
            launches: 1,
            fitted: 0,
            speed: 1.0,
        };
        let share = BySize::one(SizeParam::RendezvousSender, 0.21).ok();
        let text = borrowed(None, Some(&x), share).expect("borrowed");
        assert!(
            text.contains("rendezvous_sender (0.210) is not fitted here"),
            "{text}"
        );
        assert_eq!(borrowed(None, None, None), None);
        assert_eq!(borrowed(Some(&x), Some(&x), share), None);
    }

    /// The set of the example of the test below: `L = 0`, `o = 1,000`, `Os = Or = 1`, `Od = 1,000`.
    pub(crate) fn example_set() -> Params {
        Params::paper([0.0, 1000.0, 1.0, 1.0, 0.0, 0.0], 0, 0)
            .in_bands()
            .with_bands(|b| b.set("Od", 1000.0))
            .unwrap()
    }

    /// The example's launch: one rendezvous exchange of 1,000 B each way, the Waitall ending
    /// at `measured`; `cores`, lines of the ranks' placement (or none).
    pub(crate) fn example_launch(measured: u64, cores: &str) -> Trace {
        let mut text = format!("loggps-trace 1\nranks 2\n{cores}");
        for r in 0..2 {
            let q = 1 - r;
            text += &format!(
                "{r} MPI_Init 0 0\n{r} MPI_Irecv 0 50 bytes=1000 peer={q} tag=0 req=0\n\
                 {r} MPI_Isend 50 100 bytes=1000 peer={q} tag=0 req=1\n\
                 {r} MPI_Waitall 100 {measured} done=0:{q}:0,1:-1:-1\n\
                 {r} MPI_Finalize {measured} {measured}\n"
            );
        }
        crate::trace::text::parse("x.txt", text.as_bytes()).unwrap()
    }

    /// The bounce probe's exchanges from a buffer written once (their sends flagged `clean`)
    /// are kept apart: the example's exchange (a share of 0.25 at 6,500) and a clean one after
    /// it measured 3,000 give the written one alone to the share's fit (0.25 still, where their
    /// median, 4,750, would give 0) and to the report, the clean one its own entry.
    #[test]
    fn clean_exchanges_are_kept_apart() {
        let mut text = String::from("loggps-trace 1\nranks 2\n");
        for r in 0..2 {
            let q = 1 - r;
            text += &format!(
                "{r} MPI_Init 0 0\n{r} MPI_Irecv 0 50 bytes=1000 peer={q} tag=0 req=0\n\
                 {r} MPI_Isend 50 100 bytes=1000 peer={q} tag=0 req=1\n\
                 {r} MPI_Waitall 100 6500 done=0:{q}:0,1:-1:-1\n\
                 {r} MPI_Irecv 6500 6550 bytes=1000 peer={q} tag=0 req=2\n\
                 {r} MPI_Isend 6550 6600 bytes=1000 peer={q} tag=0 req=3 flags=clean\n\
                 {r} MPI_Waitall 6600 9500 done=2:{q}:0,3:-1:-1\n\
                 {r} MPI_Finalize 9500 9500\n"
            );
        }
        let trace = crate::trace::text::parse("x.txt", text.as_bytes()).unwrap();
        let p = example_set();
        let all = check(&trace, &p).unwrap();
        let got: Vec<(bool, f64)> = all.iter().map(|e| (e.clean, e.measured_ns)).collect();
        assert_eq!(got, [(false, 6500.0), (true, 3000.0)]);
        let x = check_nearest(trace, &[&p], &[], None).unwrap();
        assert_eq!(x.each.len(), 1);
        assert!(!x.each[0].clean);
        let v = x.rendezvous.unwrap();
        assert!((v.sender.at(1000.0) - 0.25).abs() <= 1.0 / 1024.0, "{v:?}");
    }

    /// One exchange of 1,000 B each way by rendezvous (`S = 0`) under `L = 0`, `o = 1,000`,
    /// `Os = Or = 1`, `Od = 1,000` (the model's §13–§14, hand-costed in tests/cli_overheads.rs):
    /// the `MPI_Irecv` at 0, the `MPI_Isend` at 1,000, the `MPI_Waitall` at 2,000 returning at
    /// 6,000 with the payload on the receiver's CPU alone (`rendezvous_sender` 0), at 6,000 +
    /// 2,000·F with a share F ≤ 0.5 on the sender's (its share queued after the receive's `T3`,
    /// 4,000–6,000), at 7,000 from 0.5 on. Measured as 6,000, 6,500 and 7,000 (the calls back
    /// to back from 0, the Waitall ending there), the fit gives 0, 0.25 and 1. The same launch
    /// at cores 3× farther apart than the set's (a near launch, a far set: each payload of the
    /// set costs another price than the launch's) fits nothing and says so.
    #[test]
    fn the_sender_share_of_a_rendezvous_payload_is_fitted_to_the_exchanges() {
        let p = example_set();
        let exchanges = example_launch;
        let far = Params {
            cores: Some(450.0),
            ..p
        };
        let near = "rank 0 host \"h\" offset 0 0 cores 1 150 150\nrank 1 host \"h\" offset 0 0\n";
        let x = check_nearest(exchanges(6500, near), &[&far], &[], None).unwrap();
        assert!(x.rendezvous.is_none() && x.share_elsewhere, "{x:?}");
        let (lines, off) = finding(&x, 0.10);
        assert!(
            !off && lines.last().unwrap().contains("not fitted"),
            "{lines:?}"
        );
        for (measured, share) in [(6000, 0.0), (6500, 0.25), (7000, 1.0)] {
            let x = check_nearest(exchanges(measured, ""), &[&p], &[], None).unwrap();
            let v = x.rendezvous.unwrap();
            assert!(
                (v.sender.at(1000.0) - share).abs() <= 1.0 / 1024.0,
                "{measured}: {v:?}"
            );
            let e = &x.each[0];
            assert_eq!((e.k, e.n, e.measured_ns), (1000, 1, measured as f64));
            assert!((e.predicted_ns / e.measured_ns - 1.0).abs() < 1e-3, "{e:?}");
            assert!(v.error < 1e-3, "{v:?}");
            assert!((v.receiver_error - (measured as f64 / 6000.0).ln()).abs() < 1e-12);
            assert!((v.both_error - (7000.0 / measured as f64).ln()).abs() < 1e-12);
            let (lines, _) = finding(&x, 0.10);
            let want = format!("holds its sender's CPU for {share:.3} at 1000 B of its T1");
            assert!(lines.last().unwrap().contains(&want), "{lines:?}");
        }
    }

    /// The share is fitted at each size on its own (the model's §14). Under the example's set
    /// (`o = 1,000`, `Os = Or = 1`, `Od = 1,000`, `L = 0`, all by rendezvous) an exchange of
    /// `k` bytes each way, called as the example's, costs by hand: the request arrives at 1,000,
    /// the receive confirms at 2,000, the ACK reaches the sender at 3,000, the payload leaves at
    /// 3,000 + `T1` − `Od` = 3,000 + `k` and the receive's `T3` (1,000 + `k`) runs to 4,000 + 2`k`,
    /// where the Waitall returns with no share; a share `F` of the send's `T1` before its end
    /// (4,000 + `k`) waits for the receive where it starts after the receive's `T3` does (`F`
    /// below 1,000 / (1,000 + `k`)), and the Waitall returns at 4,000 + 2`k` + `F`(1,000 + `k`).
    /// So 1,000 B measured at 6,500 fits 0.25, and 3,000 B measured at 10,500 fits 0.125 (where
    /// one share for both would fit neither); between them the share is interpolated in log k.
    #[test]
    fn the_share_is_fitted_size_by_size() {
        let p = example_set();
        let mut text = String::from("loggps-trace 1\nranks 2\n");
        for r in 0..2 {
            let q = 1 - r;
            text += &format!("{r} MPI_Init 0 0\n");
            for (n, (t, k, end)) in [(0, 1000, 6500), (20_000, 3000, 30_500)].iter().enumerate() {
                let (a, b) = (2 * n, 2 * n + 1);
                text += &format!(
                    "{r} MPI_Irecv {t} {} bytes={k} peer={q} tag=0 req={a}\n\
                     {r} MPI_Isend {} {} bytes={k} peer={q} tag=0 req={b}\n\
                     {r} MPI_Waitall {} {end} done={a}:{q}:0,{b}:-1:-1\n",
                    t + 50,
                    t + 50,
                    t + 100,
                    t + 100
                );
            }
            text += &format!("{r} MPI_Finalize 40000 40000\n");
        }
        let trace = crate::trace::text::parse("x.txt", text.as_bytes()).unwrap();
        let x = check_nearest(trace, &[&p], &[], None).unwrap();
        let v = x.rendezvous.unwrap();
        let points = v.sender.points();
        assert_eq!(points.len(), 2, "{v:?}");
        assert_eq!((points[0].0, points[1].0), (1000, 3000));
        assert!((points[0].1 - 0.25).abs() <= 1.0 / 1024.0, "{v:?}");
        assert!((points[1].1 - 0.125).abs() <= 1.0 / 1024.0, "{v:?}");
        assert!(v.error < 1e-3, "{v:?}");
        assert_eq!(x.each.len(), 2);
        for e in &x.each {
            assert!((e.predicted_ns / e.measured_ns - 1.0).abs() < 1e-3, "{e:?}");
        }
    }

    /// The launch's own round trips tell its minute: the exchange measured at 6,500 (a share
    /// of 0.25 at the set's speed) in a launch whose 1,000 B round trips ran 6,500 / 6,000 of
    /// the set's is the set's 6,000 at the sweep's speed, a share of 0; at the set's speed, or
    /// with round trips only at sizes below `S`, 0.25 as without them.
    #[test]
    fn the_share_is_fitted_at_the_sweeps_speed() {
        let p = example_set();
        let model = crate::calibrate::fit::model_rtt(&p, 1000, 0.0);
        let rounds = |f: f64, k: u64| {
            [crate::calibrate::bounce::RoundTrips {
                k,
                written_ns: f * model,
                bounced_ns: f * model,
                clean_ns: None,
                exchanges_ns: None,
                clean_into_sent_ns: None,
            }]
        };
        let share = |r: &[crate::calibrate::bounce::RoundTrips]| {
            let x = check_nearest(example_launch(6500, ""), &[&p], r, None).unwrap();
            (x.rendezvous.unwrap().sender.at(1000.0), x.speed)
        };
        let (slow, speed) = share(&rounds(6500.0 / 6000.0, 1000));
        assert!(
            slow <= 1.0 / 1024.0 && (speed - 6500.0 / 6000.0).abs() < 1e-12,
            "{slow} {speed}"
        );
        let (same, speed) = share(&rounds(1.0, 1000));
        assert!(
            (same - 0.25).abs() <= 1.0 / 1024.0 && (speed - 1.0).abs() < 1e-12,
            "{same}"
        );
        let q = Params { S: 1000, ..p };
        let x = check_nearest(example_launch(6500, ""), &[&q], &rounds(2.0, 1000), None).unwrap();
        assert_eq!(x.speed, 1.0, "{x:?}");
    }
}
