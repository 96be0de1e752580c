//! Collectives modeled as point-to-point messages: a named algorithm expands a collective into
//! a [`Schedule`] (per rank, ordered sends and receives with peers and byte counts, plus local
//! reductions), and one evaluator costs any schedule under a [`CostModel`] — LogGPS as the
//! replay uses it, or LogGP as in Alexandrov et al. (1995).

pub mod binomial;
pub mod copies;
pub mod eval;
pub mod exchange;
pub mod lockstep;
pub mod openmpi;
pub mod schedule;
pub mod traced;
pub mod trees;

pub use crate::model::{CostModel, LogGp};
pub use binomial::Binomial;
pub use eval::{Completion, evaluate};
pub use lockstep::Lockstep;
pub use schedule::{Schedule, Step};

use crate::error::Error;

/// An MPI collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Gather,
    Scatter,
    Allgather,
    Alltoall,
    ReduceScatter,
    Scan,
    Exscan,
}

/// Each operation's name and its algorithms (the first is the calculator's `default`; traced
/// calls modeled without a choice follow Open MPI 4.1, see [`openmpi`]).
pub const OPS: [(Op, &str, &[&str]); 11] = [
    (Op::Barrier, "barrier", &["dissemination"]),
    (
        Op::Bcast,
        "bcast",
        &["binomial", "scatter-allgather", "pipeline", "postal"],
    ),
    (
        Op::Reduce,
        "reduce",
        &["binomial", "linear", "rabenseifner"],
    ),
    (
        Op::Allreduce,
        "allreduce",
        &["recursive-doubling", "binomial", "rabenseifner", "ring"],
    ),
    (Op::Gather, "gather", &["binomial", "linear"]),
    (
        Op::Scatter,
        "scatter",
        &["binomial", "linear", "short-message", "optimal"],
    ),
    (
        Op::Allgather,
        "allgather",
        &["recursive-doubling", "ring", "bruck"],
    ),
    (Op::Alltoall, "alltoall", &["pairwise", "linear", "bruck"]),
    (
        Op::ReduceScatter,
        "reduce_scatter",
        &["recursive-halving", "ring", "pairwise"],
    ),
    (Op::Scan, "scan", &["recursive-doubling", "linear"]),
    (Op::Exscan, "exscan", &["recursive-doubling", "linear"]),
];

impl Op {
    /// The operation named `name` (`allreduce`, `MPI_Allreduce`, `reduce-scatter`, …).
    pub fn parse(name: &str) -> Result<Op, Error> {
        let n = name.to_ascii_lowercase().replace('-', "_");
        let n = n.strip_prefix("mpi_").unwrap_or(&n);
        let n = if n == "reduce_scatter_block" {
            "reduce_scatter"
        } else {
            n
        };
        OPS.iter()
            .find(|(_, s, _)| *s == n)
            .map(|(o, _, _)| *o)
            .ok_or_else(|| {
                Error::Usage(format!(
                    "unknown collective '{name}': expected one of {}",
                    OPS.map(|(_, s, _)| s).join(", ")
                ))
            })
    }

    /// The operation's name.
    pub fn name(self) -> &'static str {
        OPS.iter()
            .find(|(o, _, _)| *o == self)
            .expect("every op is listed")
            .1
    }

    /// The algorithms for this operation, the default first.
    pub fn algorithms(self) -> &'static [&'static str] {
        OPS.iter()
            .find(|(o, _, _)| *o == self)
            .expect("every op is listed")
            .2
    }

    /// `name` if it is one of this operation's algorithms (`default` picks the first).
    pub fn algorithm(self, name: &str) -> Result<&'static str, Error> {
        let algos = self.algorithms();
        let n = name.to_ascii_lowercase().replace('_', "-");
        let n = match n.as_str() {
            "default" => algos[0],
            "simple-long-message" | "long-message" => "linear",
            "h-tree" | "postal-tree" => "postal",
            "chain" => "pipeline",
            "recursive-halving-doubling" => "rabenseifner",
            other => other,
        };
        algos.iter().find(|a| **a == n).copied().ok_or_else(|| {
            Error::Usage(format!(
                "unknown algorithm '{name}' for {}: expected one of {}",
                self.name(),
                algos.join(", ")
            ))
        })
    }
}

/// What a collective call moves. `bytes` is MPI's per-call count in bytes: the message
/// (bcast), the vector (reduce, allreduce, scan), the block per rank (gather, scatter,
/// allgather, reduce-scatter) or per pair of ranks (alltoall).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    pub ranks: usize,
    pub bytes: u64,
    pub root: usize,
    /// Pipeline segment size, bytes.
    pub segment: u64,
    /// Postal-model latency in units of one send (`None`: from the cost model).
    pub postal_h: Option<f64>,
}

impl Spec {
    /// `ranks` ranks, `bytes` bytes, root 0, 8 KiB segments, `h` from the model.
    pub fn new(ranks: usize, bytes: u64) -> Spec {
        Spec {
            ranks,
            bytes,
            root: 0,
            segment: 8192,
            postal_h: None,
        }
    }
}

/// The most ranks a schedule is built for.
/// What a modeled collective allocates per step of its schedule's estimate (built, matched and
/// evaluated): a schedule takes at most 42 bytes a step, with a margin for the estimate.
pub const BYTES_PER_STEP: u64 = 64;

pub const MAX_RANKS: usize = 1 << 22;
/// The most steps (over all ranks) a schedule may have, as estimated, to bound a calculator
/// call's time and memory: Rabenseifner's Allreduce on 2^20 ranks (63 M steps), not a ring on
/// 8,192 (201 M).
pub const MAX_STEPS: u64 = 1 << 26;
/// The least memory a schedule's estimate needs for it to be checked against what is available
/// (reading what is available costs more than building a small schedule).
const CHECKED_SCHEDULE_BYTES: u64 = 64 << 20;
/// The most ranks the optimal scatter's `O(P²)` split table is computed for.
pub const MAX_OPTIMAL_RANKS: usize = 8192;

/// The most rounds times ranks a [`Lockstep`] is costed for, to bound a call's time: a pairwise
/// all-to-all on 32,768 ranks (2^30).
pub const MAX_LOCKSTEP_STEPS: u64 = 1 << 30;

/// A collective whose steps a rule gives, costed from it without being built.
#[derive(Clone, Debug, PartialEq)]
pub enum Ruled {
    Lockstep(Lockstep),
    Binomial(Binomial),
    /// The scatter-allgather broadcast: a binomial scatter, then a ring allgather.
    ScatterAllgather(Binomial, Lockstep),
}

/// `op` by `algorithm` on `spec` as a [`Ruled`] collective if a rule gives its steps (`None`:
/// it must be built), refused as [`build`] refuses it but for its size: it takes no memory a
/// step.
pub fn ruled(op: Op, algorithm: &str, spec: &Spec) -> Result<Option<Ruled>, Error> {
    let algo = checked(op, algorithm, spec)?;
    if let Some(tree) = Binomial::of(op, algo, spec) {
        return Ok(Some(Ruled::Binomial(tree)));
    }
    let (tree, ls) = match (op, algo) {
        (Op::Bcast, "scatter-allgather") => (
            Some(Binomial::scatter(spec)),
            Lockstep::allgather_of_chunks(spec),
        ),
        _ => match Lockstep::of(op, algo, spec) {
            Some(ls) => (None, ls),
            None => return Ok(None),
        },
    };
    let steps = (spec.ranks * ls.len()) as u64;
    if steps > MAX_LOCKSTEP_STEPS {
        return Err(Error::Usage(format!(
            "{} by {algo} on {} ranks takes {steps} exchanges (ranks × rounds), more than {MAX_LOCKSTEP_STEPS}",
            op.name(),
            spec.ranks
        )));
    }
    Ok(Some(match tree {
        Some(tree) => Ruled::ScatterAllgather(tree, ls),
        None => Ruled::Lockstep(ls),
    }))
}

/// `algorithm`'s name for `op`, if a collective of `spec` can be modeled at all.
fn checked(op: Op, algorithm: &str, spec: &Spec) -> Result<&'static str, Error> {
    let algo = op.algorithm(algorithm)?;
    let (p, k) = (spec.ranks, spec.bytes);
    if p == 0 {
        return Err(Error::Usage("--ranks must be at least 1".into()));
    }
    if p > MAX_RANKS {
        return Err(Error::Usage(format!(
            "--ranks {p} is more than this calculator builds schedules for ({MAX_RANKS})"
        )));
    }
    if spec.root >= p {
        return Err(Error::Usage(format!(
            "--root {} is not a rank of {p}",
            spec.root
        )));
    }
    if k.checked_mul(2 * p as u64).is_none_or(|t| t > 1 << 60) {
        return Err(Error::Usage(format!(
            "{k} bytes on {p} ranks is more data than the model is meant for (at most 2^60 bytes in all)"
        )));
    }
    if algo == "optimal" && p > MAX_OPTIMAL_RANKS {
        return Err(Error::Usage(format!(
            "the optimal scatter's split table is O(P²): at most {MAX_OPTIMAL_RANKS} ranks"
        )));
    }
    Ok(algo)
}

/// Expands `op` by `algorithm` into a schedule. `costs` is the model's
/// [`CostModel::split_costs`], which shapes the optimal scatter and the postal tree.
pub fn build(
    op: Op,
    algorithm: &str,
    spec: &Spec,
    costs: &dyn Fn(u64) -> (f64, f64),
) -> Result<Schedule, Error> {
    let algo = checked(op, algorithm, spec)?;
    let (p, k) = (spec.ranks, spec.bytes);
    let steps = estimated_steps(op, algo, spec);
    if steps > MAX_STEPS {
        return Err(Error::Usage(format!(
            "{} by {algo} on {p} ranks with {k} bytes needs about {steps} point-to-point steps, more than {MAX_STEPS}",
            op.name()
        )));
    }
    let need = steps * BYTES_PER_STEP;
    if need >= CHECKED_SCHEDULE_BYTES {
        let what = format!("{} by {algo} on {p} ranks", op.name());
        crate::memory::ensure(&what, need)?;
    }
    let mut b = Builder::new(p, spec.root, steps as usize);
    match (op, algo) {
        (Op::Barrier, _) => exchange::barrier_dissemination(&mut b),
        (Op::Bcast, "binomial") => trees::bcast_binomial(&mut b, k),
        (Op::Bcast, "scatter-allgather") => trees::bcast_scatter_allgather(&mut b, k),
        (Op::Bcast, "pipeline") => trees::bcast_pipeline(&mut b, k, spec.segment),
        (Op::Bcast, "postal") => {
            let (busy, ready) = match spec.postal_h {
                Some(h) => (1.0, h),
                None => costs(k),
            };
            trees::bcast_postal(&mut b, k, busy, ready)
        }
        (Op::Reduce, "binomial") => trees::reduce_binomial(&mut b, k),
        (Op::Reduce, "linear") => trees::reduce_linear(&mut b, k),
        (Op::Reduce, "rabenseifner") => exchange::reduce_rabenseifner(&mut b, k),
        (Op::Allreduce, "recursive-doubling") => exchange::allreduce_recursive_doubling(&mut b, k),
        (Op::Allreduce, "binomial") => {
            trees::reduce_binomial(&mut b, k);
            trees::bcast_binomial(&mut b, k);
        }
        (Op::Allreduce, "rabenseifner") => exchange::allreduce_rabenseifner(&mut b, k),
        (Op::Allreduce, "ring") => exchange::allreduce_ring(&mut b, k),
        (Op::Gather, "binomial") => {
            trees::scatter_split(&mut b, k, |n| n / 2);
            b.reverse();
        }
        (Op::Gather, "linear") => trees::gather_linear(&mut b, k),
        (Op::Scatter, "binomial") => trees::scatter_split(&mut b, k, |n| n / 2),
        (Op::Scatter, "linear") => trees::scatter_linear(&mut b, k),
        (Op::Scatter, "short-message") => trees::scatter_short(&mut b, k),
        (Op::Scatter, "optimal") => {
            let (split, _) = trees::optimal_splits(p, k, costs);
            trees::scatter_split(&mut b, k, |n| split[n])
        }
        (Op::Allgather, "recursive-doubling") => exchange::allgather_recursive_doubling(&mut b, k),
        (Op::Allgather, "ring") => exchange::allgather_ring(&mut b, k),
        (Op::Allgather, "bruck") => exchange::allgather_bruck(&mut b, k),
        (Op::Alltoall, "pairwise" | "linear") => exchange::alltoall_pairwise(&mut b, k),
        (Op::Alltoall, "bruck") => exchange::alltoall_bruck(&mut b, k),
        (Op::ReduceScatter, "recursive-halving") => {
            exchange::reduce_scatter_recursive_halving(&mut b, k)
        }
        (Op::ReduceScatter, "ring") => exchange::reduce_scatter_ring(&mut b, k),
        (Op::ReduceScatter, "pairwise") => exchange::reduce_scatter_pairwise(&mut b, k),
        (Op::Scan | Op::Exscan, "recursive-doubling") => {
            exchange::scan_recursive_doubling(&mut b, k)
        }
        (Op::Scan | Op::Exscan, "linear") => exchange::scan_linear(&mut b, k),
        (op, algo) => unreachable!("{algo} is listed for {op:?} but not built"),
    }
    Ok(b.finish())
}

/// A bound on a schedule's steps, checked before building it, within a few times of them
/// (`estimates_bound_the_steps_closely`).
fn estimated_steps(op: Op, algo: &str, spec: &Spec) -> u64 {
    let p = spec.ranks as u64;
    match (op, algo) {
        (Op::Scatter, "short-message") => 2 * (p - 1) * spec.bytes.max(1),
        (Op::Bcast, "pipeline") => 2 * p * spec.bytes.div_ceil(spec.segment.max(1)).max(1),
        // A message to each rank but one (one to each of two trees for a binomial Allreduce),
        // a send, a receive and a reduction each: 6 · P (8 · P log P would put a binomial
        // Allreduce on 262,144 ranks, 1.3 M steps, over the cap).
        (_, "binomial" | "postal" | "optimal")
        | (Op::Reduce | Op::Gather | Op::Scatter | Op::Scan | Op::Exscan, "linear") => 6 * p,
        // P − 1 exchanges a rank, a step each (allgather, all-to-all), two (reduce-scatter: its
        // reduction) or three (allreduce: both): an allgather or all-to-all on 8,192 ranks takes
        // 67.1 M steps, under the cap, which 3 P² would refuse.
        (Op::Allreduce, "ring") => 3 * p * (p - 1),
        (Op::ReduceScatter, _) if algo != "recursive-halving" => 2 * p * (p - 1),
        (Op::Bcast, "scatter-allgather") => p * (p - 1) + 2 * p,
        (_, "ring" | "pairwise" | "linear") => p * (p - 1),
        // ⌈log2 P⌉ rounds of a step or two a rank, and the extra ones of a P not a power of 2:
        // a barrier on 2^20 ranks takes 21 M steps, where 8 · P log P would say 185 M.
        _ => {
            let rounds = p.next_power_of_two().trailing_zeros() as u64;
            let per_round = match (op, algo) {
                (_, "dissemination" | "bruck") | (Op::Allgather, "recursive-doubling") => 1,
                (Op::Allreduce, "recursive-doubling") | (_, "recursive-halving") => 2,
                _ => 3,
            };
            per_round * p * rounds + 4 * p
        }
    }
}

/// Schedule under construction, addressed by rank relative to the root.
pub struct Builder {
    pub p: usize,
    root: usize,
    s: schedule::Log,
    /// Whether [`Builder::finish`] reverses it.
    reversed: bool,
}

impl Builder {
    /// A builder with room for `steps` steps.
    fn new(p: usize, root: usize, steps: usize) -> Builder {
        Builder {
            p,
            root,
            s: schedule::Log::with_capacity(p, steps),
            reversed: false,
        }
    }

    fn real(&self, vr: usize) -> usize {
        real(self.p, self.root, vr)
    }

    /// Every rank's steps, the first added: `rank(s, vr)` adds rank `vr`'s (relative to the
    /// root) through `s`, each rank apart from the others, on the pool's threads
    /// ([`schedule::Log::each_rank`]).
    fn each_rank(&mut self, rank: impl Fn(&mut RankBuilder, usize) + Sync) {
        let (p, root) = (self.p, self.root);
        self.s.each_rank(|r, sink| {
            let vr = if r >= root { r - root } else { r + p - root };
            rank(&mut RankBuilder { p, root, sink }, vr);
        });
    }

    fn push(&mut self, vr: usize, step: Step) {
        debug_assert!(!self.reversed, "a step added after reverse()");
        let r = self.real(vr);
        self.s.push(r, step);
    }

    /// `vr` sends `bytes` to `to`.
    pub fn send(&mut self, vr: usize, to: usize, bytes: u64) {
        let to = self.real(to) as u32;
        self.push(vr, Step::Send { to, bytes });
    }

    /// `vr` receives `bytes` from `from`.
    pub fn recv(&mut self, vr: usize, from: usize, bytes: u64) {
        let from = self.real(from) as u32;
        self.push(vr, Step::Recv { from, bytes });
    }

    /// `vr` sends to `to` and receives from `from` in one call.
    pub fn sendrecv(
        &mut self,
        vr: usize,
        to: usize,
        send_bytes: u64,
        from: usize,
        recv_bytes: u64,
    ) {
        let (to, from) = (self.real(to) as u32, self.real(from) as u32);
        self.push(
            vr,
            Step::SendRecv {
                to,
                send_bytes,
                from,
                recv_bytes,
            },
        );
    }

    /// `vr` reduces `bytes` locally.
    pub fn reduce(&mut self, vr: usize, bytes: u64) {
        self.push(vr, Step::Reduce { bytes });
    }

    /// Reverses the schedule built ([`Schedule::reversed`]), the last thing done to it.
    fn reverse(&mut self) {
        self.reversed = true;
    }

    fn finish(self) -> Schedule {
        let s = self.s.finish();
        match self.reversed {
            true => s.reversed(),
            false => s,
        }
    }
}

/// One rank's steps being added by `Builder::each_rank`, peers relative to the root as for a
/// [`Builder`] (any rank below 2P taken modulo P without a division).
pub struct RankBuilder<'s, 'a> {
    pub p: usize,
    root: usize,
    sink: &'s mut schedule::RankSink<'a>,
}

impl RankBuilder<'_, '_> {
    /// Sends `bytes` to `to`.
    pub fn send(&mut self, to: usize, bytes: u64) {
        let to = real(self.p, self.root, to) as u32;
        self.sink.push(Step::Send { to, bytes });
    }

    /// Receives `bytes` from `from`.
    pub fn recv(&mut self, from: usize, bytes: u64) {
        let from = real(self.p, self.root, from) as u32;
        self.sink.push(Step::Recv { from, bytes });
    }

    /// Sends to `to` and receives from `from` in one call.
    pub fn sendrecv(&mut self, to: usize, send_bytes: u64, from: usize, recv_bytes: u64) {
        let (to, from) = (real(self.p, self.root, to), real(self.p, self.root, from));
        self.sink.push(Step::SendRecv {
            to: to as u32,
            send_bytes,
            from: from as u32,
            recv_bytes,
        });
    }

    /// Reduces `bytes` locally.
    pub fn reduce(&mut self, bytes: u64) {
        self.sink.push(Step::Reduce { bytes });
    }
}

/// The rank of `vr`, relative to `root` among `p`: without a division for a rank below P
/// (three a step: most of a barrier's build).
#[inline]
fn real(p: usize, root: usize, vr: usize) -> usize {
    match vr + root {
        r if r < p => r,
        r if r < 2 * p => r - p,
        r => r % p,
    }
}

/// The rank after `x` in a ring of `p`, and the one before it.
fn ring_next(p: usize, x: usize) -> usize {
    if x + 1 == p { 0 } else { x + 1 }
}

fn ring_prev(p: usize, x: usize) -> usize {
    if x == 0 { p - 1 } else { x - 1 }
}

/// `total` bytes cut into `n` chunks as MPI implementations do: the first `total mod n` one byte longer.
pub fn chunks(total: u64, n: usize) -> Vec<u64> {
    let n64 = n as u64;
    (0..n64)
        .map(|i| total / n64 + u64::from(i < total % n64))
        .collect()
}

/// Builds and costs `op` by `algorithm` under `model`: the calculator's one call.
pub fn predict<M: CostModel>(
    op: Op,
    algorithm: &str,
    spec: &Spec,
    model: &M,
    gamma_ns_per_byte: f64,
) -> Result<Completion, Error> {
    predict_from(
        op,
        algorithm,
        spec,
        model,
        gamma_ns_per_byte,
        &vec![0.0; spec.ranks],
    )
}

/// [`predict`] with rank `r` calling at `start[r]`.
pub fn predict_from<M: CostModel>(
    op: Op,
    algorithm: &str,
    spec: &Spec,
    model: &M,
    gamma_ns_per_byte: f64,
    start: &[f64],
) -> Result<Completion, Error> {
    predict_waiting(op, algorithm, spec, model, (gamma_ns_per_byte, start), &[])
}

/// [`predict_from`] with rank `r` having last waited over `waits[r]` before its call (the
/// model's §14, "Messages taken in while waiting"; empty: nowhere).
pub fn predict_waiting<M: CostModel>(
    op: Op,
    algorithm: &str,
    spec: &Spec,
    model: &M,
    (gamma_ns_per_byte, start): (f64, &[f64]),
    waits: &[crate::model::Wait],
) -> Result<Completion, Error> {
    let mut scratch = eval::Scratch::default();
    scratch.set_waits(waits.iter().copied());
    if let Some(ruled) = ruled(op, algorithm, spec)? {
        return Ok(eval::evaluate_ruled(
            &ruled,
            model,
            gamma_ns_per_byte,
            start,
            &mut scratch,
        ));
    }
    let schedule = build(op, algorithm, spec, &|b| model.split_costs(b))?;
    eval::evaluate_in(
        &schedule.matching()?,
        model,
        gamma_ns_per_byte,
        start,
        &mut scratch,
    )
}

#[cfg(test)]
mod tests;
