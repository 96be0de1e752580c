//! `oc`, what a modeled collective call costs beyond its schedule's messages (the model's §8),
//! fitted to a loop of small collectives so that the replay of its trace reproduces the same
//! loop run untraced (in the same launch), else the loop's traced steady time.

use super::Error;

/// One launch of the collectives probe (the round-trip program's `--coll`): the loop's trace,
/// and the same loop run once more through `PMPI_` in that launch, which the tracer does not
/// see, as timed by the program.
#[derive(Clone, Debug)]
pub struct CollLoop {
    pub trace: crate::trace::Trace,
    /// A round of the untraced loop, ns: each rank's mean of the middle half of its rounds, the
    /// mean over the ranks; None where the program did not print it.
    pub untraced_round_ns: Option<f64>,
}

impl From<crate::trace::Trace> for CollLoop {
    fn from(trace: crate::trace::Trace) -> CollLoop {
        CollLoop {
            trace,
            untraced_round_ns: None,
        }
    }
}

impl CollLoop {
    /// A launch's trace with what the program printed: its `coll_untraced RANK ROUND_NS
    /// ROUNDS` lines, one a rank.
    pub fn new(trace: crate::trace::Trace, printed: &str) -> CollLoop {
        let rounds: Vec<f64> = (printed.lines())
            .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
                ["coll_untraced", _, ns, _] => ns.parse().ok().filter(|&x: &f64| x > 0.0),
                _ => None,
            })
            .collect();
        let untraced_round_ns =
            (!rounds.is_empty()).then(|| rounds.iter().sum::<f64>() / rounds.len() as f64);
        CollLoop {
            trace,
            untraced_round_ns,
        }
    }
}

/// The loop run untraced, against the replay of its trace (the tracer's time taken out of the
/// gaps, as a prediction does): a round, a rank, ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UntracedRound {
    pub measured_ns: f64,
    /// Predicted with `oc` = 0, and with the fitted `oc`, at the launch's speed.
    pub without_ns: f64,
    pub with_ns: f64,
}

/// `oc` fitted to a loop of 8-byte collectives of every kind on 2 ranks (the round-trip
/// program's `--coll`): the value with which the replay of the loop's trace predicts the same
/// loop run untraced ([`fit_oc`]).
#[derive(Clone, Debug, PartialEq)]
pub struct OcFit {
    /// Collective calls of rank 0.
    pub calls: usize,
    /// The steady calls' time ([`fit_oc`]) measured (less the tracer's time inside them), a
    /// rank (the mean over the ranks).
    pub measured_ns: f64,
    /// The same calls predicted with `oc` = 0, and with the fitted `oc`.
    pub without_ns: f64,
    pub with_ns: f64,
    /// The first call of each kind, a rank (the mean over the ranks), as measured: the library
    /// setting the operation up once, 5–25 µs a kind on Open MPI 4.1 where a call takes
    /// 0.1–1 µs. Left out of what `oc` is fitted to, a steady call's cost.
    pub first_calls_ns: f64,
    /// The other calls beyond their kind's far fence on a rank (the upper quartile plus three
    /// times the spread between the quartiles: Tukey's far-out values), as measured, the mean
    /// over the ranks: the operating system or the hypervisor taking a rank's CPU away in the
    /// call (or its partner's, which it waits for), 3–7% of a loop here. Left out as the set's
    /// round trips leave them out (the model's §17): `oc` is a typical call's.
    pub interrupted_ns: f64,
    /// How much slower (> 1) or faster the launch's messages ran than the set models them: the
    /// tracer's round trips through MPI at `MPI_Init` and `MPI_Finalize` against the set's
    /// (`replay::links::speed_factors`; None where the trace holds none the set judges). The
    /// loop is replayed with the set scaled by it, and the `oc` fitted there divided by it.
    pub speed: Option<f64>,
    /// `oc` fitted to each launch's loop at the set's placement, each at the set's speed, in
    /// increasing order: the one kept is their median (of an even count, the lower of the two
    /// in the middle; [`fit_oc_sets`]), and the fields above are its launch's.
    pub launches_oc: Vec<f64>,
    /// No launch ran at the set's placement: its `oc` is the median of every launch's, each
    /// fitted with the set nearest its cores.
    pub elsewhere: bool,
    /// No launch ran at any set's placement: fitted with another placement's parameters each
    /// `oc` takes up their difference (`launches_oc` shows them), and the set's is 0, as
    /// predicted (`with_ns` is `without_ns`, `by_kind` empty).
    pub unplaced: bool,
    /// Each collective routine of the loop with its steady calls' time predicted (with
    /// [`OcFit::traced_oc`]) over their time measured traced, both summed over the ranks: one
    /// `oc` a call (the model's §11) is every kind's, fitted to their sum.
    pub by_kind: Vec<(crate::trace::Routine, f64)>,
    /// The `oc` with which the replay (the tracer's time kept in the gaps) reproduces the
    /// traced loop's steady calls, at the set's speed (the fields from `calls` to `with_ns` are
    /// that fit's): more than the kept `oc` by what the tracer slows the calls beyond its own
    /// time, where the untraced loop was timed.
    pub traced_oc: f64,
    /// The loop run untraced in the same launch, which the kept `oc` is fitted to (None: not
    /// timed, and the kept `oc` is `traced_oc`).
    pub untraced: Option<UntracedRound>,
}

/// Kinds of collectives whose loop time one `oc` misses by more than this: `calibrate` says so.
pub const KIND_WARNING: f64 = 0.15;

impl OcFit {
    /// The kinds of collectives the fitted `oc` predicts more than [`KIND_WARNING`] off, in
    /// words (None where every kind is within).
    pub fn kinds_finding(&self) -> Option<String> {
        let off = |r: f64| (r - 1.0).abs() > KIND_WARNING;
        if !self.by_kind.iter().any(|&(_, r)| off(r)) {
            return None;
        }
        let each: Vec<String> = (self.by_kind.iter())
            .map(|(k, r)| format!("{} {r:.2}", k.mpi_name()))
            .collect();
        Some(format!(
            "one oc a call (the model's §11, at the ranks that receive) costs every kind of \
             collective alike, fitted to the loop of all: predicted over measured per kind {}; a \
             program whose time goes to the kinds more than {:.0}% off is predicted as far off \
             (--coll measured keeps the traced durations of its collectives)",
            each.join(", "),
            100.0 * KIND_WARNING
        ))
    }
}

/// `oc` ≥ 0 for one launch of the probe: with which the replay of its trace (collectives
/// modeled, parameters `p` otherwise, the tracer's time taken out of the gaps as a prediction
/// takes it) predicts a round of the loop as long as the same loop took run untraced in that
/// launch ([`CollLoop::untraced_round_ns`]; a round at each rank from one call of its first
/// collective routine to the next, the mean of the middle half of its rounds but the first and
/// the last, the mean over the ranks, as the program times its own rounds). Each round grows by
/// `oc` at least where `oc` grows (a rank receives in it), so the root lies between 0 and the
/// shortfall at 0, found by bisection to 0.01 ns; 0 where the model is not short. At the
/// launch's speed, as the traced fit ([`OcFit::speed`]). The traced loop's own fit
/// ([`OcFit::traced_oc`], below) is kept beside it: traced, the calls run longer than untraced
/// by more than the tracer's own time (on an AMD EPYC VM the traced loop gave 34 ns where the
/// same loop untraced in the same launches gave 12–26; in a slower spell 53 and 50), and a
/// prediction, which takes the tracer's time out, is of the program untraced. Where the program
/// did not time the untraced loop, or the trace holds fewer than four rounds at a rank, `oc`
/// is the traced fit's.
pub fn fit_oc(launch: &CollLoop, p: &crate::model::Params) -> Result<(f64, OcFit), Error> {
    let (traced_oc, mut fit) = fit_traced(&launch.trace, p)?;
    let Some(measured) = launch.untraced_round_ns else {
        return Ok((traced_oc, fit));
    };
    let Some((oc, round)) = fit_untraced(&launch.trace, p, fit.speed, measured)? else {
        return Ok((traced_oc, fit));
    };
    fit.launches_oc = vec![oc];
    fit.untraced = Some(round);
    Ok((oc, fit))
}

/// [`fit_oc`]'s untraced fit: `oc` at the set's speed, and the rounds measured and predicted
/// (None where a rank has fewer than four rounds).
fn fit_untraced(
    trace: &crate::trace::Trace,
    p: &crate::model::Params,
    speed: Option<f64>,
    measured: f64,
) -> Result<Option<(f64, UntracedRound)>, Error> {
    let g = crate::graph::build(trace, "the collectives probe")?;
    let coll = crate::collectives::traced::Choice::tuned();
    let at_speed = match speed {
        Some(f) => crate::model::scale(*p, "all", f).map_err(|e| Error::Io(e.to_string()))?,
        None => *p,
    };
    // Each rank's rounds: the calls of its first collective routine, in order.
    let starts: Vec<Vec<u32>> = (0..trace.nranks())
        .map(|r| {
            let ev = trace.rank(r);
            let colls = (0..ev.len()).filter(|&i| ev.routine(i).is_collective());
            let first = colls.clone().next().map(|i| ev.routine(i));
            colls
                .filter(|&i| Some(ev.routine(i)) == first)
                .map(|i| i as u32)
                .collect()
        })
        .collect();
    if starts.iter().any(|s| s.len() < 4) {
        return Ok(None);
    }
    let round = |oc: f64| -> Result<f64, Error> {
        let model = crate::model::Model::LogGps(crate::model::Params {
            oc: Some(oc),
            ..at_speed
        });
        let at = std::sync::Mutex::new(
            starts
                .iter()
                .map(|s| vec![0.0; s.len()])
                .collect::<Vec<_>>(),
        );
        let keep = |batch: &[crate::replay::Step]| {
            let mut at = at.lock().expect("no replay thread panics");
            for x in batch {
                let s = &starts[x.rank as usize];
                if let Ok(k) = s.binary_search(&x.event) {
                    at[x.rank as usize][k] = x.call_ns;
                }
            }
        };
        crate::replay::replay_observed(trace, &g, &model, &coll, "probe", &|_| {}, Some(&keep))?;
        let at = at.into_inner().expect("no replay thread panics");
        // A rank's rounds but its first (each kind's first call: the library's set-up) and its
        // last (no next round's call ends it).
        let each: Vec<f64> = (at.iter())
            .map(|t| middle_mean(t[1..].windows(2).map(|w| w[1] - w[0]).collect()))
            .collect();
        Ok(each.iter().sum::<f64>() / each.len() as f64)
    };
    let without = round(0.0)?;
    let (mut lo, mut hi) = (0.0, (measured - without).max(0.0));
    while hi > 0.0 && round(hi)? < measured && hi < 1e9 {
        (lo, hi) = (hi, 2.0 * hi);
    }
    while hi - lo > 0.01 {
        let mid = 0.5 * (lo + hi);
        match round(mid)? < measured {
            true => lo = mid,
            false => hi = mid,
        }
    }
    let fit = UntracedRound {
        measured_ns: measured,
        without_ns: without,
        with_ns: round(hi)?,
    };
    Ok(Some((hi / speed.unwrap_or(1.0), fit)))
}

/// The mean of the middle half of `v` (the values between its quartiles), as the round-trip
/// program takes its repetitions'.
fn middle_mean(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let (lo, hi) = (v.len() / 4, v.len() - v.len() / 4);
    v[lo..hi].iter().sum::<f64>() / (hi - lo).max(1) as f64
}

/// `oc` ≥ 0 with which the replay of `trace` (collectives modeled, parameters `p` otherwise,
/// the tracer's own time kept in the gaps: the model's §16, as the loop was measured traced)
/// predicts the loop's steady calls as long as they were measured: each rank's calls of each
/// kind but its first (the library setting the operation up once,
/// [`OcFit::first_calls_ns`]) and those beyond their kind's far fence (interrupted,
/// [`OcFit::interrupted_ns`]), the same calls on both sides, each measured less the tracer's
/// time inside it. What a left-out call's partners waited for stays on both sides: a first
/// call that found its partner late (the probe's first Barrier waits for rank 0's work before
/// the loop) is predicted waiting as it was measured, where taking only its measured time out
/// would have left its predicted wait in and `oc` at 0. The kept calls' predicted time does
/// not fall as `oc` grows and grows by at least `oc` a call (each call has a rank that
/// receives, which pays it), so the root lies between 0 and the shortfall at 0 over the
/// calls, found by bisection to 0.01 ns. 0 where the model is not short. The launch's loop
/// runs at its minute's speed, which moves by a fifth here between launches of one placement
/// (the model's §12, "A run's messages at another speed"): replayed with the set scaled to the
/// speed its messages ran at ([`OcFit::speed`]), the `oc` found is divided by that factor, the
/// set's at its own speed.
fn fit_traced(
    trace: &crate::trace::Trace,
    p: &crate::model::Params,
) -> Result<(f64, OcFit), Error> {
    use crate::collectives::traced::Choice;
    // Taken out of the gaps, the tracer's time would be put back by `oc` (a prediction that
    // keeps it would count it twice, one that takes it out would still hold it in `oc`); kept,
    // its time inside each call goes into the gaps too, so that `oc` holds none of it.
    let mut kept = trace.clone();
    kept.meta.ranks.keep_tracer_time();
    let trace = &kept;
    let g = crate::graph::build(trace, "the collectives probe")?;
    let coll = Choice::tuned();
    let links = crate::replay::links::message_speeds(trace, std::slice::from_ref(p));
    let speed = crate::replay::links::speed_factors(&links, 1)[0];
    let at_speed = match speed {
        Some(f) => crate::model::scale(*p, "all", f).map_err(|e| Error::Io(e.to_string()))?,
        None => *p,
    };
    let steady = steady_calls(trace);
    let per_rank = |ns: f64| ns / trace.nranks().max(1) as f64;
    // Each kind's kept calls predicted with `oc`, summed over the ranks.
    let predicted = |oc: f64| -> Result<Vec<f64>, Error> {
        let model = crate::model::Model::LogGps(crate::model::Params {
            oc: Some(oc),
            ..at_speed
        });
        let took = std::sync::Mutex::new(vec![0.0; steady.kinds.len()]);
        let keep = |batch: &[crate::replay::Step]| {
            let mut t = took.lock().expect("no replay thread panics");
            for x in batch {
                if let Some(&Some(k)) = steady.kind_of[x.rank as usize].get(x.event as usize) {
                    t[k] += x.return_ns - x.call_ns;
                }
            }
        };
        crate::replay::replay_observed(trace, &g, &model, &coll, "probe", &|_| {}, Some(&keep))?;
        Ok(took.into_inner().expect("no replay thread panics"))
    };
    let measured: f64 = steady.kinds.iter().map(|(_, ns)| ns).sum();
    let sum = |v: &[f64]| v.iter().sum::<f64>();
    let without = sum(&predicted(0.0)?);
    let (mut lo, mut hi) = (
        0.0,
        (measured - without).max(0.0) / steady.calls.max(1) as f64,
    );
    // The bound holds where each call grows by `oc`; widened where the model grows it less.
    while hi > 0.0 && sum(&predicted(hi)?) < measured && hi < 1e9 {
        (lo, hi) = (hi, 2.0 * hi);
    }
    while hi - lo > 0.01 {
        let mid = 0.5 * (lo + hi);
        match sum(&predicted(mid)?) < measured {
            true => lo = mid,
            false => hi = mid,
        }
    }
    let at_run = hi;
    let oc = at_run / speed.unwrap_or(1.0);
    let calls = (trace.rank(0).routines().iter())
        .filter(|r| matches!(r.shape(), crate::trace::Shape::Coll))
        .count();
    let with = predicted(at_run)?;
    // Each kind's kept calls predicted with `oc` over their measured.
    let by_kind = (steady.kinds.iter().zip(&with))
        .map(|(&(kind, m), q)| (kind, q / m.max(1.0)))
        .collect();
    let fit = OcFit {
        calls,
        measured_ns: per_rank(measured),
        without_ns: per_rank(without),
        with_ns: per_rank(sum(&with)),
        first_calls_ns: per_rank(steady.first_ns),
        interrupted_ns: per_rank(steady.interrupted_ns),
        speed,
        launches_oc: vec![oc],
        elsewhere: false,
        unplaced: false,
        by_kind,
        traced_oc: oc,
        untraced: None,
    };
    Ok((oc, fit))
}

/// A loop's steady collective calls: those [`fit_oc`] compares.
struct Steady {
    /// Each collective routine (in the order first called) with its kept calls' measured time
    /// summed over the ranks, each less the tracer's time inside it.
    kinds: Vec<(crate::trace::Routine, f64)>,
    /// For each rank's events, the index in `kinds` of a kept call's routine (None: not kept).
    kind_of: Vec<Vec<Option<usize>>>,
    /// The kept calls of the rank that kept fewest.
    calls: usize,
    /// The left-out calls' measured time summed over the ranks: first calls, interrupted ones.
    first_ns: f64,
    interrupted_ns: f64,
}

/// Each rank's collective calls of each kind but its first and those beyond the far fence of
/// that kind's calls there (the upper quartile plus three times the spread between the
/// quartiles: Tukey's far-out values, the operating system or the hypervisor taking a rank's
/// CPU away in the call or its partner's, which it waits for).
fn steady_calls(trace: &crate::trace::Trace) -> Steady {
    use crate::trace::Routine;
    let mut s = Steady {
        kinds: Vec::new(),
        kind_of: Vec::new(),
        calls: usize::MAX,
        first_ns: 0.0,
        interrupted_ns: 0.0,
    };
    for r in 0..trace.nranks() {
        let ev = trace.rank(r);
        let mut took: Vec<(Routine, Vec<(usize, u64)>)> = Vec::new();
        for i in (0..ev.len()).filter(|&i| ev.routine(i).is_collective()) {
            let d = (i, ev.t_return(i).saturating_sub(ev.t_call(i)));
            match took.iter_mut().find(|(k, _)| *k == ev.routine(i)) {
                Some((_, v)) => v.push(d),
                None => took.push((ev.routine(i), vec![d])),
            }
        }
        let mut kind_of = vec![None; ev.len()];
        let mut kept = 0;
        for (k, v) in took {
            let mut sorted: Vec<u64> = v.iter().map(|&(_, d)| d).collect();
            sorted.sort_unstable();
            let n = sorted.len();
            let (q1, q3) = (sorted[n / 4], sorted[3 * n / 4]);
            let fence = q3 + 3 * (q3 - q1);
            let j = match s.kinds.iter().position(|(q, _)| *q == k) {
                Some(j) => j,
                None => {
                    s.kinds.push((k, 0.0));
                    s.kinds.len() - 1
                }
            };
            let inside = trace.meta.ranks.inside_call(r, k);
            for (at, &(i, d)) in v.iter().enumerate() {
                match (at, d > fence) {
                    (0, _) => s.first_ns += d as f64,
                    (_, true) => s.interrupted_ns += d as f64,
                    (_, false) => {
                        s.kinds[j].1 += (d as f64 - inside).max(0.0);
                        kind_of[i] = Some(j);
                        kept += 1;
                    }
                }
            }
        }
        s.kind_of.push(kind_of);
        s.calls = s.calls.min(kept);
    }
    if s.calls == usize::MAX {
        s.calls = 0;
    }
    s
}

/// [`fit_oc`] on each launch's trace: the median `oc` and its launch's fit, with every launch's
/// `oc` ([`OcFit::launches_oc`]).
pub fn fit_oc_launches(
    launches: &[CollLoop],
    p: &crate::model::Params,
) -> Result<(f64, OcFit), Error> {
    let mut sets = fit_oc_sets(launches, &[p])?;
    Ok(sets.swap_remove(0))
}

/// `oc` for each of `sets`, a calibration's placements of the ranks' cores (the model's §12).
/// Each launch's loop is fitted with the set nearest its cores' figure (by ratio, as a replay
/// picks a pair's set): fitted with another placement's parameters, its `oc` would take up
/// their difference (on this project's 2-vCPU machine, near launches fitted with a far set gave
/// 35–90 ns, with their own 240–330 ns; far launches with a near set, where a calibration held
/// no far set, 211–296 ns against 40–60 near), so a launch 2× from its nearest set's cores
/// counts for no set. Each set's `oc` is the median of its own launches',
/// each fitted at the speed its messages ran and brought to the set's ([`fit_oc`]), as the
/// sweep combines its launches' round trips (each launch's speed divided out, then the
/// median); a set no launch ran at takes the median of all ([`OcFit::elsewhere`]), 0 where
/// none ran at any set's ([`OcFit::unplaced`]). A loop is
/// a millisecond or two of one launch, which a spell of the machine slows whole (their loops
/// 1.1–2.2 ms in one calibration here): as run, the fit would take the spell into `oc`. The
/// least of the launches as run (kept before the speeds were divided out) still followed a
/// spell that slowed all of them; the least at the set's speed followed the launch whose
/// speed overstated its loop's (6 ns where the others gave up to 45).
pub fn fit_oc_sets(
    launches: &[CollLoop],
    sets: &[&crate::model::Params],
) -> Result<Vec<(f64, OcFit)>, Error> {
    if launches.is_empty() || sets.is_empty() {
        return Err(Error::Io("the collectives probe left no trace".into()));
    }
    let mut by_set: Vec<Vec<(f64, OcFit)>> = sets.iter().map(|_| Vec::new()).collect();
    let mut apart = Vec::new();
    for l in launches {
        let s = super::nearest_set(&l.trace, sets);
        let fit = fit_oc(l, sets[s])?;
        // A launch 2× from its nearest set's cores ran at no set's placement.
        match (super::probe_cores(&l.trace), sets[s].cores) {
            (Some(a), Some(b)) if super::placements_apart(a, b) => apart.push(fit),
            _ => by_set[s].push(fit),
        }
    }
    let median = |mut fits: Vec<(f64, OcFit)>| {
        fits.sort_by(|a, b| a.0.total_cmp(&b.0));
        let all: Vec<f64> = fits.iter().map(|(oc, _)| *oc).collect();
        let (oc, mut fit) = fits.swap_remove((all.len() - 1) / 2);
        fit.launches_oc = all;
        (oc, fit)
    };
    let anywhere = median(by_set.iter().flatten().chain(&apart).cloned().collect());
    // Every launch 2× from every set's cores: their fits are the placements' difference (a
    // near set fitted to far launches gave 211–296 ns where its own gave 40–60), none the
    // calls': 0, said.
    let unplaced = by_set.iter().all(Vec::is_empty);
    Ok((by_set.into_iter())
        .map(|fits| match fits.is_empty() {
            true => {
                let (oc, fit) = anywhere.clone();
                match unplaced {
                    true => (
                        0.0,
                        OcFit {
                            elsewhere: true,
                            unplaced: true,
                            with_ns: fit.without_ns,
                            by_kind: Vec::new(),
                            untraced: (fit.untraced).map(|u| UntracedRound {
                                with_ns: u.without_ns,
                                ..u
                            }),
                            ..fit
                        },
                    ),
                    false => (
                        oc,
                        OcFit {
                            elsewhere: true,
                            ..fit
                        },
                    ),
                }
            }
            false => median(fits),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::OcFit;
    use crate::trace::Routine;

    /// A kind more than 15% off is named with every kind's ratio; all within, nothing said.
    #[test]
    fn kinds_one_oc_misses_are_named() {
        let fit = |by_kind| OcFit {
            calls: 4501,
            measured_ns: 0.0,
            without_ns: 0.0,
            with_ns: 0.0,
            first_calls_ns: 0.0,
            interrupted_ns: 0.0,
            speed: None,
            launches_oc: vec![250.0],
            elsewhere: false,
            unplaced: false,
            by_kind,
            traced_oc: 250.0,
            untraced: None,
        };
        let off = fit(vec![(Routine::Bcast, 1.84), (Routine::Allreduce, 1.0)]);
        let text = off.kinds_finding().unwrap();
        assert!(
            text.contains("per kind MPI_Bcast 1.84, MPI_Allreduce 1.00;"),
            "{text}"
        );
        let within = fit(vec![(Routine::Bcast, 1.14), (Routine::Allreduce, 0.86)]);
        assert_eq!(within.kinds_finding(), None);
    }
}
