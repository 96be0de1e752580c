//! What each LogGPS parameter is worth to a trace's predicted runtime, found by replays of the
//! trace (matched once) at other values:
//! - the **derivative** of the runtime by each parameter (`L o Os Or Gs Gl` of the paper's form,
//!   or `o L Os Or G` of each band, and `gamma`): a central difference over a small step (one
//!   step forward where the parameter may not go below 0). The replay is a longest path over
//!   costs linear in the parameters, so the runtime is piecewise linear in each: the difference
//!   is the derivative wherever the step does not cross a change of the critical path;
//! - the **tolerance** of `L`, `o` and `G` (added in every band, `G` as `Gs` and `Gl` in the
//!   paper's form): how much each can grow before the runtime rises by 1% and by 5%. The
//!   runtime grows with them and is convex in them (a maximum of linear functions), so a secant
//!   from the derivative's guess brackets the answer, and Newton's steps from above (the slope
//!   just below the bracket's top) close on it;
//! - the **best `S`** in a range: the runtime changes with `S` only where `S` crosses a message
//!   size of the trace, so the candidates are those sizes; up to [`S_CANDIDATES`] spread over
//!   them are replayed, then the sizes between the best one's neighbours, the same again.
//!
//! Where several parameter sets combine by link (the model's §12), each set's parameters are
//! their own: derivatives and tolerances are found for each set's (named after its class,
//! [`set_prefix`]), the others held; the best `S` sets it in every set at once.

use crate::collectives::traced::Choice;
use crate::critical::{CriticalPath, Record};
use crate::error::Error;
use crate::graph::HbGraph;
use crate::model::{BAND_NAMES, Model, Params};
pub use crate::model::{Knob, PAPER};
use crate::replay::{Links, replay_linked};
use crate::trace::{Shape, Trace};
use serde::Serialize;

/// What a replay of the trace predicts: runtime, ns, or why it could not. Its parameters are
/// a list of sets: one, or where `links` combines several (the model's §12) one a set, in the
/// links' order (the first the main set).
pub struct Replayer<'a> {
    pub trace: &'a Trace,
    pub graph: &'a HbGraph,
    pub coll: &'a Choice,
    pub file: &'a str,
    /// Each pair's set, where several combine.
    pub links: Option<&'a Links>,
    /// Told each replay as it starts (what it varies).
    pub progress: &'a (dyn Fn(&str) + Sync),
    /// Replays made so far.
    pub replays: std::cell::Cell<u32>,
}

impl Replayer<'_> {
    /// The model and links of `sets`.
    fn linked(&self, sets: &[Params]) -> (Model, Option<Links>) {
        (
            Model::LogGps(sets[0]),
            self.links.map(|l| l.with_sets(sets)),
        )
    }

    /// The predicted runtime under `sets`, ns, and its critical path.
    pub fn critical(&self, sets: &[Params]) -> Result<(f64, CriticalPath), Error> {
        (self.progress)("the parameters as given");
        self.replays.set(self.replays.get() + 1);
        let record = Record::new(self.trace);
        let (model, links) = self.linked(sets);
        let observe = |steps: &[crate::replay::Step]| record.observe(steps);
        let pred = replay_linked(
            self.trace,
            self.graph,
            &model,
            links.as_ref(),
            self.coll,
            self.file,
            &|_| {},
            Some(&observe),
        )?;
        let path = CriticalPath::find(
            self.trace,
            self.graph,
            &record,
            &pred,
            &model,
            links.as_ref(),
            self.coll,
        );
        Ok((pred.predicted_ns, path))
    }

    /// The predicted runtime under `sets`, ns.
    pub fn runtime(&self, sets: &[Params], what: &str) -> Result<f64, Error> {
        if let Some(why) = sets.iter().find_map(Params::invalid) {
            return Err(Error::Usage(format!("{what}: {why}")));
        }
        (self.progress)(what);
        self.replays.set(self.replays.get() + 1);
        let (model, links) = self.linked(sets);
        let pred = replay_linked(
            self.trace,
            self.graph,
            &model,
            links.as_ref(),
            self.coll,
            self.file,
            &|_| {},
            None,
        )?;
        Ok(pred.predicted_ns)
    }
}

/// How the parameters of set `j` of `sets` are named: bare where there is one set, else after
/// the set's class (`network.L`), numbered as the report numbers the sets where two share a
/// class (`node1.L`, `node3.L`).
pub fn set_prefix(sets: &[Params], j: usize) -> String {
    if sets.len() == 1 {
        return String::new();
    }
    let class = |p: &Params| p.class.map_or("any", |c| c.name());
    match sets.iter().filter(|p| class(p) == class(&sets[j])).count() {
        1 => format!("{}.", class(&sets[j])),
        _ => format!("{}{}.", class(&sets[j]), j + 1),
    }
}

/// `sets` with set `j` replaced by `p`.
fn replaced(sets: &[Params], j: usize, p: Params) -> Vec<Params> {
    let mut v = sets.to_vec();
    v[j] = p;
    v
}

/// A parameter's derivative.
#[derive(Clone, Debug, Serialize)]
pub struct Derivative {
    pub name: String,
    pub unit: &'static str,
    pub value: f64,
    /// d runtime / d parameter: ns per unit of the parameter.
    pub ns_per_unit: f64,
    /// (d runtime / runtime) / (d parameter / parameter): how many percent the runtime moves for
    /// 1% of the parameter (0 where the parameter is 0).
    pub elasticity: f64,
    /// `central`, `forward` where the parameter may not go below 0, `backward` where it is
    /// at its upper bound (`Od` at `T1`), or `pinned` where its bounds meet (`Op` in a band
    /// whose `T3` is 0): neither step is a valid set, and its derivative is given as 0.
    pub difference: &'static str,
    /// The one-sided differences, by the step up and by the step down (None: not taken). They
    /// differ where the critical path changes within the step (a kink of the runtime).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub right_ns_per_unit: Option<f64>,
    pub left_ns_per_unit: Option<f64>,
    /// The same read off the critical path ([`CriticalPath::derivative`]): each of its
    /// segments' costs by the model's rule that made it (a modeled collective's: its schedule
    /// costed again), the inputs held.
    pub from_critical_path: f64,
}

/// Every parameter's derivative at `sets` (each set's, where there are several), whose
/// runtime is `t0` ns and critical path `path`.
pub fn derivatives(
    rp: &Replayer<'_>,
    sets: &[Params],
    t0: f64,
    path: &CriticalPath,
) -> Result<Vec<Derivative>, Error> {
    let knobs = (0..sets.len()).flat_map(|j| Knob::all(&sets[j]).into_iter().map(move |k| (j, k)));
    knobs
        .map(|(j, k)| {
            let p = &sets[j];
            let v = k.get(p);
            let h = k.step(v);
            let name = set_prefix(sets, j) + &k.name();
            let at = |x: f64| replaced(sets, j, k.set(p, x));
            let valid = |sets: &[Params]| sets.iter().all(|p| p.invalid().is_none());
            let (at_up, at_down) = (at(v + h), at(v - h));
            let down_ok = !(k.nonnegative() && v - h < 0.0) && valid(&at_down);
            let down = match down_ok {
                true => Some(rp.runtime(&at_down, &format!("{name} − {h:e}"))?),
                false => None,
            };
            let left = down.map(|down| (t0 - down) / h);
            // A parameter at its upper bound (`Od` at `T1`) is taken from below alone; one whose
            // bounds meet (`Op` where `T3` is 0, `Od` where `T1` is) cannot move either way.
            let (d, right, difference) = match (valid(&at_up), left) {
                (false, Some(left)) => (left, None, "backward"),
                (false, None) => (0.0, None, "pinned"),
                _ => {
                    let up = rp.runtime(&at_up, &format!("{name} + {h:e}"))?;
                    let right = (up - t0) / h;
                    match down {
                        Some(down) => ((up - down) / (2.0 * h), Some(right), "central"),
                        None => (right, Some(right), "forward"),
                    }
                }
            };
            Ok(Derivative {
                elasticity: match t0 > 0.0 {
                    true => d * v / t0,
                    false => 0.0,
                },
                name,
                unit: k.unit(),
                value: v,
                ns_per_unit: d,
                difference,
                right_ns_per_unit: right,
                left_ns_per_unit: left,
                from_critical_path: path.derivative_in(sets, k, Some(j)).0,
            })
        })
        .collect()
}

/// A quantity added to every band (to both of `Gs` and `Gl` for `G` in the paper's form).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Added {
    L,
    O,
    G,
}

impl Added {
    pub const ALL: [Added; 3] = [Added::L, Added::O, Added::G];

    pub fn name(&self) -> &'static str {
        match self {
            Added::L => "L",
            Added::O => "o",
            Added::G => "G",
        }
    }

    pub fn unit(&self) -> &'static str {
        match self {
            Added::G => "ns/B",
            _ => "ns",
        }
    }

    /// `p` with `d` added.
    pub fn add(&self, p: &Params, d: f64) -> Params {
        match (&p.bands, self) {
            (None, Added::L) => Params { L: p.L + d, ..*p },
            (None, Added::O) => Params { o: p.o + d, ..*p },
            (None, Added::G) => Params {
                Gs: p.Gs + d,
                Gl: p.Gl + d,
                ..*p
            },
            (Some(_), _) => {
                let i = match self {
                    Added::O => 0,
                    Added::L => 1,
                    Added::G => 4,
                };
                p.with_bands(|b| {
                    for (j, x) in b.as_slice().to_vec().iter().enumerate() {
                        b.set_in(j, BAND_NAMES[i], x.get(i) + d)?;
                    }
                    Ok(())
                })
                .expect("a set in bands")
            }
        }
    }
}

/// How far a parameter can grow before the runtime rises by a share.
#[derive(Clone, Debug, Serialize)]
pub struct Tolerance {
    /// The quantity, after its set where there are several (`network.L`).
    pub name: String,
    pub unit: &'static str,
    /// The rise in runtime, percent.
    pub rise_pct: f64,
    /// What may be added (None: the runtime never rises so far: it does not depend on it).
    pub added: Option<f64>,
    /// Replays the search took.
    pub replays: u32,
}

/// Beyond this many replays a tolerance search stops (where it is then is within a thousandth
/// of the rise anyway: the runtime is piecewise linear).
const TOLERANCE_REPLAYS: u32 = 24;

/// How much `what` can grow in set `j` of `sets` (runtime `t0` ns, derivative `slope` ns per
/// unit) before the runtime rises by `rise_pct` percent.
#[allow(clippy::too_many_arguments)]
pub fn tolerance(
    rp: &Replayer<'_>,
    sets: &[Params],
    j: usize,
    t0: f64,
    what: Added,
    slope: f64,
    rise_pct: f64,
) -> Result<Tolerance, Error> {
    let target = t0 * (1.0 + rise_pct / 100.0);
    let before = rp.replays.get();
    let name = set_prefix(sets, j) + what.name();
    let at = |d: f64| {
        rp.runtime(
            &replaced(sets, j, what.add(&sets[j], d)),
            &format!("{name} + {d:.4e} (tolerance of {rise_pct}%)"),
        )
    };
    let done = |added| Tolerance {
        name: name.clone(),
        unit: what.unit(),
        rise_pct,
        added,
        replays: rp.replays.get() - before,
    };
    // The guess the derivative gives; convex, the runtime there is at the target or above.
    let mut hi = match slope > 0.0 {
        true => (target - t0) / slope,
        false => 1.0,
    };
    let mut t_hi = at(hi)?;
    while t_hi < target {
        if hi > 1e12 {
            return Ok(done(None));
        }
        hi *= 16.0;
        t_hi = at(hi)?;
    }
    // Newton's steps from above: the runtime is convex, so the line through `hi` with the
    // runtime's slope just below it meets the target at or above the answer, and on the answer
    // where the piece at `hi` reaches down to it (a piecewise-linear runtime: a few steps). A
    // step that lands below the target (a runtime not convex there) halves `[lo, hi]` instead.
    // Within a ten-thousandth of the rise is on it (a step onto the answer may round below).
    let close = 1e-4 * (target - t0);
    let mut lo = 0.0;
    while rp.replays.get() - before < TOLERANCE_REPLAYS && (t_hi - target) > close {
        let d = (hi - lo) * 1e-6;
        let slope = (t_hi - at(hi - d)?) / d;
        let x = match slope > 0.0 {
            true => hi - (t_hi - target) / slope,
            false => lo,
        };
        let x = match x > lo && x < hi {
            true => x,
            false => 0.5 * (lo + hi),
        };
        let t = at(x)?;
        match t >= target - close {
            true => (hi, t_hi) = (x, t),
            false => lo = x,
        }
    }
    Ok(done(Some(hi)))
}

/// Where the runtime is least with `S` in a range.
#[derive(Clone, Debug, Serialize)]
pub struct BestS {
    pub lo: u64,
    pub hi: u64,
    /// Message sizes of the trace in the range (the candidates).
    pub candidates: usize,
    /// `(S, runtime ns)` of every `S` replayed, by `S`.
    pub tried: Vec<(u64, f64)>,
    /// `(S, why)` of those that could not be replayed (a deadlock by rendezvous), by `S`.
    pub failed: Vec<(u64, String)>,
    pub best: u64,
    pub best_ns: f64,
}

/// At most this many candidates are replayed in each of the two rounds of [`best_s`].
pub const S_CANDIDATES: usize = 16;

/// The distinct sizes of the trace's point-to-point messages (their send's bytes), sorted.
pub fn message_sizes(trace: &Trace) -> Vec<u64> {
    let mut sizes = std::collections::BTreeSet::new();
    for r in 0..trace.nranks() {
        let ev = trace.rank(r);
        for i in 0..ev.len() {
            if matches!(
                ev.routine(i).shape(),
                Shape::Send | Shape::Isend | Shape::Sendrecv
            ) {
                sizes.insert(ev.bytes(i));
            }
        }
    }
    sizes.into_iter().collect()
}

/// The `S` in `lo..=hi` with the least runtime (ties: the smallest), from the candidates `lo`
/// and the message sizes in the range ([`S_CANDIDATES`] spread over them, then those between
/// the best one's neighbours; and the candidate that predicts as the main set's own `S` does).
/// `S` is set in every set of `sets` at once, as `--S` sets it.
pub fn best_s(
    rp: &Replayer<'_>,
    sets: &[Params],
    sizes: &[u64],
    lo: u64,
    hi: u64,
) -> Result<BestS, Error> {
    let mut cands: Vec<u64> = std::iter::once(lo)
        .chain(sizes.iter().copied().filter(|&k| k > lo && k <= hi))
        .collect();
    cands.dedup();
    let mut tried: Vec<(u64, f64)> = Vec::new();
    let failed = std::cell::RefCell::new(Vec::new());
    // A candidate that cannot be replayed (sends that deadlock by rendezvous) is no answer.
    let run = |idx: &[usize], tried: &mut Vec<(u64, f64)>| -> Result<(), Error> {
        for &i in idx {
            let s = cands[i];
            let seen = |x: &u64| *x == s;
            if tried.iter().any(|(t, _)| seen(t)) || failed.borrow().iter().any(|(t, _)| seen(t)) {
                continue;
            }
            let at: Vec<Params> = sets.iter().map(|p| Params { S: s, ..*p }).collect();
            match rp.runtime(&at, &format!("S = {s}")) {
                Ok(t) => tried.push((s, t)),
                Err(e) => failed.borrow_mut().push((s, e.to_string())),
            }
        }
        Ok(())
    };
    // The set's own S first, where it is in the range: what the best is compared with.
    let p = &sets[0];
    if (lo..=hi).contains(&p.S) {
        let own = cands.partition_point(|&c| c <= p.S).saturating_sub(1);
        run(&[own], &mut tried)?;
    }
    let spread = |a: usize, b: usize| -> Vec<usize> {
        let n = b - a + 1;
        match n <= S_CANDIDATES {
            true => (a..=b).collect(),
            false => (0..S_CANDIDATES)
                .map(|j| a + (j * (n - 1)) / (S_CANDIDATES - 1))
                .collect(),
        }
    };
    run(&spread(0, cands.len() - 1), &mut tried)?;
    let best_at = |tried: &[(u64, f64)]| {
        let (s, _) = tried
            .iter()
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))?;
        cands.iter().position(|c| c == s)
    };
    let Some(b) = best_at(&tried) else {
        let mut failed = failed.into_inner();
        failed.sort_by_key(|x| x.0);
        let why = failed
            .first()
            .map_or(String::new(), |(s, e)| format!(" (S = {s}: {e})"));
        return Err(Error::Usage(format!(
            "no S in {lo}–{hi} tried replays: every one failed{why}; try another --S-range"
        )));
    };
    // Then between the best one's neighbours among those tried.
    let mut idx: Vec<usize> = tried
        .iter()
        .map(|(s, _)| cands.iter().position(|c| c == s).expect("a candidate"))
        .collect();
    idx.sort_unstable();
    let k = idx.iter().position(|&i| i == b).expect("tried");
    let (a, z) = (idx[k.saturating_sub(1)], idx[(k + 1).min(idx.len() - 1)]);
    run(&spread(a, z), &mut tried)?;
    tried.sort_by_key(|&(s, _)| s);
    let b = cands[best_at(&tried).expect("tried before")];
    let mut failed = failed.into_inner();
    failed.sort_by_key(|x| x.0);
    let best_ns = tried.iter().find(|(s, _)| *s == b).expect("tried").1;
    Ok(BestS {
        lo,
        hi,
        candidates: cands.len(),
        tried,
        failed,
        best: b,
        best_ns,
    })
}
