//! `oc`, what a modeled collective call costs beyond its schedule's messages (the model's §8),
//! fitted to a traced loop of small collectives so that the replay reproduces the loop's
//! steady time.

use super::Error;

/// `oc` fitted to a traced loop of 8-byte collectives of every kind on 2 ranks (the round-trip
/// program's `--coll`): the value with which the replay predicts the run's measured time.
#[derive(Clone, Debug, PartialEq)]
pub struct OcFit {
    /// Collective calls of rank 0.
    pub calls: usize,
    pub measured_ns: f64,
    /// Predicted with `oc` = 0, and with the fitted `oc`.
    pub without_ns: f64,
    pub with_ns: f64,
    /// What the first call of each kind took beyond that kind's median call, on a rank (the
    /// mean over the ranks): the library setting the operation up once, 5–25 µs a kind on Open
    /// MPI 4.1 where a call takes 0.1–1 µs. Left out of what `oc` is fitted to, a steady
    /// call's cost.
    pub first_calls_ns: f64,
    /// `oc` fitted to each launch's loop at the set's placement, in increasing order: the one
    /// kept is their median, and the fields above are its launch's.
    pub launches_oc: Vec<f64>,
    /// No launch ran at the set's placement: its `oc` is the median of every launch's, each
    /// fitted with the set nearest its cores.
    pub elsewhere: bool,
}

/// `oc` ≥ 0 with which the replay of `trace` (collectives modeled, parameters `p` otherwise)
/// predicts its measured runtime less the first calls' setup ([`OcFit::first_calls_ns`]):
/// the runtime does not fall as `oc` grows, and grows by at least `oc` where a collective
/// call lies on the critical path, so the root lies between 0 and the shortfall at 0, found
/// by bisection to 0.01 ns. 0 where the model is not short.
pub fn fit_oc(
    trace: &crate::trace::Trace,
    p: &crate::model::Params,
) -> Result<(f64, OcFit), Error> {
    use crate::collectives::traced::Choice;
    let g = crate::graph::build(trace, "the collectives probe")?;
    let coll = Choice::tuned();
    let runtime = |oc: f64| -> Result<(f64, f64), Error> {
        let model = crate::model::Model::LogGps(crate::model::Params { oc: Some(oc), ..*p });
        let pred = crate::replay::replay_with(trace, &g, &model, &coll, "probe", &|_| {})?;
        Ok((pred.predicted_ns, pred.measured_ns))
    };
    let (without, measured) = runtime(0.0)?;
    let first_calls = first_call_excess(trace);
    let steady = measured - first_calls;
    let (mut lo, mut hi) = (0.0, (steady - without).max(0.0));
    while hi - lo > 0.01 {
        let mid = 0.5 * (lo + hi);
        match runtime(mid)?.0 < steady {
            true => lo = mid,
            false => hi = mid,
        }
    }
    let oc = hi;
    let calls = (trace.rank(0).routines().iter())
        .filter(|r| matches!(r.shape(), crate::trace::Shape::Coll))
        .count();
    let fit = OcFit {
        calls,
        measured_ns: measured,
        without_ns: without,
        with_ns: runtime(oc)?.0,
        first_calls_ns: first_calls,
        launches_oc: vec![oc],
        elsewhere: false,
    };
    Ok((oc, fit))
}

/// [`fit_oc`] on each launch's trace: the median launch's `oc` and fit, with every launch's
/// `oc` ([`OcFit::launches_oc`]).
pub fn fit_oc_launches(
    traces: &[crate::trace::Trace],
    p: &crate::model::Params,
) -> Result<(f64, OcFit), Error> {
    let mut sets = fit_oc_sets(traces, &[p])?;
    Ok(sets.swap_remove(0))
}

/// `oc` for each of `sets`, a calibration's placements of the ranks' cores (the model's §12).
/// Each launch's loop is fitted with the set nearest its cores' figure (by ratio, as a replay
/// picks a pair's set): fitted with another placement's parameters, its `oc` would take up
/// their difference (on this project's 2-vCPU machine, near launches fitted with a far set gave
/// 35–90 ns, with their own 240–330 ns). Each set's `oc` is the median of its own launches',
/// and a set no launch ran at takes the median of all ([`OcFit::elsewhere`]).
pub fn fit_oc_sets(
    traces: &[crate::trace::Trace],
    sets: &[&crate::model::Params],
) -> Result<Vec<(f64, OcFit)>, Error> {
    if traces.is_empty() || sets.is_empty() {
        return Err(Error::Io("the collectives probe left no trace".into()));
    }
    let nearest = |t: &crate::trace::Trace| {
        let ns = (t.meta.ranks.get(0).cores).map(|c| c.init_ns.max(c.final_ns));
        let distance = |p: &crate::model::Params| match (ns, p.cores) {
            (Some(a), Some(b)) => (a / b).ln().abs(),
            _ => f64::INFINITY,
        };
        (0..sets.len())
            .min_by(|&a, &b| distance(sets[a]).total_cmp(&distance(sets[b])))
            .expect("a set")
    };
    let mut by_set: Vec<Vec<(f64, OcFit)>> = sets.iter().map(|_| Vec::new()).collect();
    for t in traces {
        let s = nearest(t);
        by_set[s].push(fit_oc(t, sets[s])?);
    }
    let median = |mut fits: Vec<(f64, OcFit)>| {
        fits.sort_by(|a, b| a.0.total_cmp(&b.0));
        let all: Vec<f64> = fits.iter().map(|(oc, _)| *oc).collect();
        let (oc, mut fit) = fits.swap_remove(fits.len() / 2);
        fit.launches_oc = all;
        (oc, fit)
    };
    let anywhere = median(by_set.iter().flatten().cloned().collect());
    Ok((by_set.into_iter())
        .map(|fits| match fits.is_empty() {
            true => {
                let (oc, fit) = anywhere.clone();
                (
                    oc,
                    OcFit {
                        elsewhere: true,
                        ..fit
                    },
                )
            }
            false => median(fits),
        })
        .collect())
}

/// [`OcFit::first_calls_ns`] of `trace`: per rank, the first collective call of each routine
/// beyond the median of that routine's calls there (routines called twice or more), summed;
/// the mean over the ranks.
fn first_call_excess(trace: &crate::trace::Trace) -> f64 {
    let mut sum = 0.0;
    for r in 0..trace.nranks() {
        let ev = trace.rank(r);
        let mut took: std::collections::BTreeMap<u8, Vec<u64>> = Default::default();
        for i in (0..ev.len()).filter(|&i| ev.routine(i).is_collective()) {
            let d = ev.t_return(i).saturating_sub(ev.t_call(i));
            took.entry(ev.routine(i) as u8).or_default().push(d);
        }
        for v in took.values_mut().filter(|v| v.len() >= 2) {
            let first = v[0];
            v.sort_unstable();
            sum += first.saturating_sub(v[v.len() / 2]) as f64;
        }
    }
    sum / trace.nranks().max(1) as f64
}
