//! The parameters a prediction's runtime may depend on, one at a time: what `sensitivity`
//! varies and the critical path's derivatives are taken by.

use super::{BAND_NAMES, BySize, Params, SizeParam};

/// A parameter the runtime may depend on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Knob {
    /// The paper's form: `L o Os Or Gs Gl` ([`PAPER`]).
    Paper(usize),
    /// Band `.0` (from 0): `o L Os Or G` ([`BAND_NAMES`]).
    Band(usize, usize),
    Gamma,
    /// A modeled collective call's own cost, `oc`.
    Oc,
    /// A modeled collective's local copies' cost, `copy`.
    Copy,
    /// The share of a rendezvous payload's `T1` on its sender's CPU (the model's §14).
    RendezvousSender,
    /// What posting a receive costs, `post` (the model's §4).
    Post,
    /// What a completion call costs at least, `wait` (the model's §4 Wait rule).
    Wait,
}

/// A parameter at sizes moved to `v` at its first size ([`Knob::get`]), the others in
/// proportion; one value (`v`) where it has none, or its first is 0. (`v` ≥ 0: a knob that may
/// not go negative.)
fn to(b: Option<BySize>, param: SizeParam, v: f64) -> BySize {
    let v = v.max(0.0);
    match b.filter(|b| b.first() > 0.0) {
        Some(b) => b.scaled(v / b.first()),
        None => BySize::one(param, v).expect("a value ≥ 0"),
    }
}

/// A by-size parameter's largest value.
fn peak(b: &BySize) -> f64 {
    b.points().iter().map(|p| p.1).fold(0.0, f64::max)
}

/// The paper form's parameters a derivative is taken of.
pub const PAPER: [&str; 6] = ["L", "o", "Os", "Or", "Gs", "Gl"];

impl Knob {
    /// Every parameter of `p`, in the model's order, then `gamma`, `oc` and `copy`, and
    /// `rendezvous_sender` and `post` where the set has them.
    pub fn all(p: &Params) -> Vec<Knob> {
        let mut v: Vec<Knob> = match &p.bands {
            None => (0..PAPER.len()).map(Knob::Paper).collect(),
            // Od and Op where the set splits its overheads (the model's §13).
            Some(b) => (0..b.as_slice().len())
                .flat_map(|j| (0..b.names().len()).map(move |i| Knob::Band(j, i)))
                .collect(),
        };
        v.extend([Knob::Gamma, Knob::Oc, Knob::Copy]);
        if p.has_sender_share() {
            v.push(Knob::RendezvousSender);
        }
        if p.post.is_some() {
            v.push(Knob::Post);
        }
        if p.wait.is_some() {
            v.push(Knob::Wait);
        }
        v
    }

    /// Its name as reports and flags write it (`b3.o`: band 3's).
    pub fn name(&self) -> String {
        match *self {
            Knob::Paper(i) => PAPER[i].to_string(),
            Knob::Band(j, i) => format!("b{}.{}", j + 1, BAND_NAMES[i]),
            Knob::Gamma => "gamma".to_string(),
            Knob::Oc => "oc".to_string(),
            Knob::Copy => "copy".to_string(),
            Knob::RendezvousSender => "rendezvous_sender".to_string(),
            Knob::Post => "post".to_string(),
            Knob::Wait => "wait".to_string(),
        }
    }

    /// Nanoseconds, nanoseconds per byte, or a share.
    pub fn unit(&self) -> &'static str {
        match *self {
            Knob::Paper(0 | 1)
            | Knob::Band(_, 0 | 1 | 5 | 6)
            | Knob::Oc
            | Knob::Post
            | Knob::Wait => "ns",
            Knob::RendezvousSender => "share",
            _ => "ns/B",
        }
    }

    pub fn get(&self, p: &Params) -> f64 {
        match *self {
            Knob::Paper(i) => [p.L, p.o, p.Os, p.Or, p.Gs, p.Gl][i],
            Knob::Band(j, i) => p.as_bands().as_slice()[j].get(i),
            // (by size: its smallest size's, [`Knob::set`] moving every size in proportion)
            Knob::Gamma => p.gamma.map_or(0.0, |g| g.first()),
            Knob::Oc => p.oc.unwrap_or(0.0),
            Knob::Copy => p.copy.map_or(0.0, |c| c.first()),
            // (by size: its largest share, [`Knob::set`] moving every size in proportion)
            Knob::RendezvousSender => p.rendezvous_sender.map_or(0.0, |b| peak(&b)),
            Knob::Post => p.post.unwrap_or(p.o),
            Knob::Wait => p.wait_floor(),
        }
    }

    /// `p` with this parameter set to `v`.
    pub fn set(&self, p: &Params, v: f64) -> Params {
        let mut q = *p;
        match *self {
            Knob::Paper(i) => {
                *[
                    &mut q.L, &mut q.o, &mut q.Os, &mut q.Or, &mut q.Gs, &mut q.Gl,
                ][i] = v
            }
            Knob::Band(j, i) => {
                q = p
                    .with_bands(|b| b.set_in(j, BAND_NAMES[i], v))
                    .expect("a band of the set");
            }
            Knob::Gamma => q.gamma = Some(to(p.gamma, SizeParam::Gamma, v)),
            Knob::Oc => q.oc = Some(v),
            Knob::Copy => q.copy = Some(to(p.copy, SizeParam::Copy, v)),
            Knob::RendezvousSender => {
                q.rendezvous_sender = Some(match p.rendezvous_sender.filter(|b| peak(b) > 0.0) {
                    Some(b) => b.scaled(v.max(0.0) / peak(&b)),
                    None => BySize::one(SizeParam::RendezvousSender, v.clamp(0.0, 1.0))
                        .expect("a share in 0–1"),
                })
            }
            Knob::Post => q.post = Some(v),
            Knob::Wait => q.wait = Some(v),
        }
        q
    }

    /// Whether the parameter may not go below 0 (overheads, latencies, `Od`, `Op`; `G` may,
    /// the paper's `Gl` is).
    pub(crate) fn nonnegative(&self) -> bool {
        match *self {
            Knob::Paper(i) => i < 4,
            Knob::Band(_, i) => i != 4,
            Knob::Gamma
            | Knob::Oc
            | Knob::Copy
            | Knob::RendezvousSender
            | Knob::Post
            | Knob::Wait => true,
        }
    }

    /// The step of its central difference: a thousandth of its value, at least a tenth of a
    /// nanosecond (a ten-thousandth of one per byte).
    pub(crate) fn step(&self, v: f64) -> f64 {
        let least = match self.unit() {
            "ns" => 0.1,
            _ => 1e-4,
        };
        (v.abs() * 1e-3).max(least)
    }
}
