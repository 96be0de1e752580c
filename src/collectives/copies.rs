//! A modeled collective's local copies (the model's §15 `copy`): the bytes each rank copies in
//! its own memory, as Open MPI 4.1's `coll/base` implementations copy them — a rank's own block
//! into the result, an algorithm's temporary before its first message and back after its last.
//! They cost `copy` ns a byte, before the rank's first step or after its last; copies between
//! steps (none in the algorithms below but Bruck's rotations, taken at the ends) are not
//! placed among them.

use super::{Op, Spec};

/// The bytes rank `place` (its rank in the communicator) copies before its first step and after
/// its last, for `op` by `algorithm` on `spec` (`spec.bytes` as [`Spec::bytes`]: a rank's
/// block for the gather, scatter, all-gather and all-to-all families and reduce-scatter, the
/// whole vector for reductions and broadcasts).
pub fn copies(op: Op, algorithm: &str, spec: &Spec, place: usize) -> (u64, u64) {
    let (p, k) = (spec.ranks as u64, spec.bytes);
    if p < 2 {
        // One rank: its own block, and nothing to exchange.
        return match op {
            Op::Barrier | Op::Bcast => (0, 0),
            _ => (k, 0),
        };
    }
    // The rank's place counted from the root, for rooted operations.
    let v = (place + spec.ranks - spec.root % spec.ranks) % spec.ranks;
    match (op, algorithm) {
        (Op::Barrier | Op::Bcast | Op::Reduce, _) => (0, 0),
        // Into its temporary at the start; on a power of two, its result is left in the
        // temporary where it was the lower partner (which swaps its buffers) in an even number
        // of rounds, and copied back then.
        (Op::Allreduce, "recursive-doubling") if spec.ranks.is_power_of_two() => (
            k,
            if lower_rounds(spec.ranks, place).is_multiple_of(2) {
                k
            } else {
                0
            },
        ),
        // Else (ranks folded away first): after an even number of rounds of the core.
        (Op::Allreduce, "recursive-doubling") => {
            let rounds = (spec.ranks.next_power_of_two()
                >> usize::from(!spec.ranks.is_power_of_two()))
            .trailing_zeros();
            (k, if rounds.is_multiple_of(2) { k } else { 0 })
        }
        // Its send buffer into its receive buffer, where the ring and the halving work.
        (Op::Allreduce, "ring" | "rabenseifner") => (k, 0),
        // A reduce then a broadcast: none of their own.
        (Op::Allreduce, _) => (0, 0),
        // The root's own block; a binomial gather's ranks of even place from the root (its
        // inner ranks, and the last where P is odd) gather theirs into a temporary.
        (Op::Gather, "binomial") if v.is_multiple_of(2) => (k, 0),
        (Op::Gather | Op::Scatter, _) if v == 0 => (k, 0),
        (Op::Gather | Op::Scatter, _) => (0, 0),
        // Its own block into place; Bruck's rotation of the whole result at the end (not at
        // rank 0, whose blocks are in order).
        (Op::Allgather, "bruck") => (k, if place == 0 { 0 } else { p * k }),
        (Op::Allgather, _) => (k, 0),
        // Its own block (the pairwise exchange's step with itself); Bruck rotates the whole
        // send buffer into a temporary and the result back.
        (Op::Alltoall, "bruck") => (p * k, p * k),
        (Op::Alltoall, _) => (k, 0),
        // The whole send vector into the accumulator; a rank of the power-of-two core copies
        // its block out of it at the end (`ompi_coll_base_reduce_scatter_intra_basic_
        // recursivehalving`), a rank folded away receives its block into place.
        (Op::ReduceScatter, "recursive-halving") => {
            let rem = spec.ranks - (1 << spec.ranks.ilog2());
            let folded = place < 2 * rem && place.is_multiple_of(2);
            (p * k, if folded { 0 } else { k })
        }
        (Op::ReduceScatter, "ring") => (p * k, k),
        (Op::ReduceScatter, _) => (0, 0),
        // Its send buffer into its receive buffer.
        (Op::Scan | Op::Exscan, _) => (k, 0),
    }
}

/// The bytes of the vector `op` on `spec` reduces, at whose size its reductions cost `gamma`
/// a byte (the model's §15: a reduction's chunks stream through the vector's whole working set):
/// a reduce-scatter's `P` blocks, else `spec.bytes`.
pub fn reduced(op: Op, spec: &Spec) -> u64 {
    match op {
        Op::ReduceScatter => spec.bytes.saturating_mul(spec.ranks as u64),
        _ => spec.bytes,
    }
}

/// Whether `op` by `algorithm` on `ranks` ranks sends a rank's own data from its send buffer
/// (the user's), as Open MPI 4.1's `coll/base` does: not where it first copies them into its
/// receive buffer or a temporary and sends from there (the reductions that copy, the scans,
/// reduce-scatter, an all-gather's ring, Bruck and recursive doubling but on 2 ranks, where
/// Open MPI's `two_procs` sends from the send buffer, Bruck's all-to-all). A rank whose send
/// buffer the tracer flagged `clean` sends its own data's messages clean only where this holds
/// (the model's §13).
pub fn sends_from_user_buffer(op: Op, algorithm: &str, ranks: usize) -> bool {
    match (op, algorithm) {
        (Op::Allreduce, "recursive-doubling" | "ring" | "rabenseifner") => false,
        (Op::Scan | Op::Exscan | Op::ReduceScatter, _) => false,
        (Op::Allgather, "recursive-doubling") => ranks == 2,
        (Op::Allgather, "ring" | "bruck") | (Op::Alltoall, "bruck") => false,
        _ => true,
    }
}

/// The bytes of rank `place`'s own writes (copies, reductions) before its first step and after
/// its last that land in lines a peer's core holds: a buffer the algorithm sends from by
/// rendezvous, whose lines the peer's single copy read (in this call, or in the call before on
/// the same buffers), so that each written line must first be taken back (the model's §15,
/// "Writes into lines a peer holds"). Counted where the algorithm's messages exceed `eager_limit`
/// (below it, the library copies into its own shared buffers and no peer reads the rank's): the
/// recursive doubling's copy into the buffer it exchanges and its result written back after the
/// exchange, a ring or Rabenseifner's copy into the buffer it sends segments of, a scan's
/// result sent on, a reduce-scatter's blocks for its peers in the accumulator.
pub fn held(op: Op, algorithm: &str, spec: &Spec, place: usize, eager_limit: u64) -> (u64, u64) {
    let (p, k) = (spec.ranks as u64, spec.bytes);
    if p < 2 {
        return (0, 0);
    }
    let message = match (op, algorithm) {
        (Op::Allreduce, "ring" | "rabenseifner") => k / p,
        _ => k,
    };
    if message <= eager_limit {
        return (0, 0);
    }
    match (op, algorithm) {
        // On a power of two, the reductions into the buffer just sent are
        // [`held_reduced`]'s.
        (Op::Allreduce, "recursive-doubling") if spec.ranks.is_power_of_two() => (k, 0),
        (Op::Allreduce, "recursive-doubling") => (k, k),
        (Op::Allreduce, "ring" | "rabenseifner") => (k, 0),
        (Op::Scan | Op::Exscan, _) if place + 1 < spec.ranks => (k, 0),
        (Op::ReduceScatter, "recursive-halving" | "ring") => ((p - 1) * k, 0),
        _ => (0, 0),
    }
}

/// The rounds of a recursive doubling on `ranks` (a power of two) in which rank `place` is the
/// lower partner (Open MPI's `rank < remote`: it reduces into the buffer it received into,
/// then swaps its buffers; the upper one reduces into the buffer it has just sent).
fn lower_rounds(ranks: usize, place: usize) -> u32 {
    ranks.trailing_zeros() - (place as u32).count_ones()
}

/// The bytes of rank `place`'s reductions into lines a peer's single copy has just read
/// (the model's §15, `held_reduce`): a recursive doubling's upper partner of each round on a
/// power of two reduces into the buffer it has just sent, `k` a round, counted after its last
/// step where the messages exceed `eager_limit`.
pub fn held_reduced(op: Op, algorithm: &str, spec: &Spec, place: usize, eager_limit: u64) -> u64 {
    let p = spec.ranks;
    match (op, algorithm) {
        (Op::Allreduce, "recursive-doubling")
            if p >= 2 && p.is_power_of_two() && spec.bytes > eager_limit =>
        {
            (place as u64).count_ones() as u64 * spec.bytes
        }
        _ => 0,
    }
}

/// The temporary buffers rank `place` allocates and frees in one call of `op` by `algorithm`
/// on `spec`, as Open MPI 4.1's `coll/base` implementations do (v4.1.x; each freed before the
/// call returns; the communicator's cached request arrays and trees not counted): a buffer of
/// the vector, of a block, or a small array of displacements alike, each costing `alloc`
/// (the model's §15).
pub fn temporaries(op: Op, algorithm: &str, spec: &Spec, place: usize) -> u32 {
    let p = spec.ranks;
    if p < 2 {
        return 0;
    }
    let v = (place + p - spec.root % p) % p;
    // A binomial reduction's (`ompi_coll_base_reduce_generic`, one segment): a rank with
    // children allocates a buffer to receive into, a second with two or more, and one to
    // accumulate into where it is not the root; a leaf none.
    let reducing_tree = |v: usize| {
        let children = binomial_children(v, p);
        match (children, v) {
            (0, _) => 0,
            (c, 0) => 1 + u32::from(c >= 2),
            (c, _) => 2 + u32::from(c >= 2),
        }
    };
    match (op, algorithm) {
        (Op::Allreduce, "recursive-doubling") => 1,
        // A block to receive into, a second on more than 2 ranks.
        (Op::Allreduce, "ring") => 1 + u32::from(p > 2),
        // The vector and four arrays of the steps' counts and displacements.
        (Op::Allreduce, "rabenseifner") => 5,
        // A reduce to rank 0, then a broadcast (which allocates none).
        (Op::Allreduce, _) => reducing_tree(place),
        (Op::Reduce, "binomial") => reducing_tree(v),
        // The root's buffer for the others' vectors.
        (Op::Reduce, "linear") => u32::from(v == 0),
        (Op::Reduce, _) => 4 + if v == 0 { 1 } else { 2 },
        // The root's receive buffer where it is not rank 0, an even place's temporary.
        (Op::Gather, "binomial") => u32::from(if v == 0 {
            !spec.root.is_multiple_of(p)
        } else {
            v.is_multiple_of(2)
        }),
        (Op::Scatter, "binomial") => u32::from(if v == 0 {
            !spec.root.is_multiple_of(p)
        } else {
            binomial_children(v, p) > 0
        }),
        (Op::Allgather, "bruck") => u32::from(place != 0),
        // The rotated vector and two arrays of the steps' blocks.
        (Op::Alltoall, "bruck") => 3,
        // Its displacements, two vectors, two arrays of the core's counts (a rank folded away
        // takes no part in the core).
        (Op::ReduceScatter, "recursive-halving") => {
            let rem = p - (1 << p.ilog2());
            if place < 2 * rem && place.is_multiple_of(2) {
                3
            } else {
                5
            }
        }
        // Its displacements, the accumulator, a block to receive into (two on more than 2).
        (Op::ReduceScatter, "ring") => 3 + u32::from(p > 2),
        // Its displacements; rank 0's reduce target.
        (Op::ReduceScatter, _) => 1 + u32::from(place == 0),
        (Op::Scan, "linear") => u32::from(place > 0),
        (Op::Exscan, "linear") => u32::from(place > 0 && place + 1 < p),
        (Op::Scan | Op::Exscan, _) => 2,
        _ => 0,
    }
}

/// The children of place `v` in a binomial tree of `p` places rooted at 0: `v + m` for each
/// power of two `m` below its subtree's bound ([`super::trees::subtree`]), within `p`.
fn binomial_children(v: usize, p: usize) -> u32 {
    let bound = super::trees::subtree(v, p);
    (0..usize::BITS)
        .map(|i| 1usize << i)
        .take_while(|&m| m < bound)
        .filter(|&m| v + m < p)
        .count() as u32
}

/// Whether rank `place` receives anything in `op` by `algorithm` on `spec` (as
/// [`super::build`] lays the schedule out): the root of a broadcast or scatter, rank 0 of a
/// linear scan, the ranks of a reduce or gather that no other rank sends to (a linear one's
/// non-roots, a binomial tree's leaves) and the ranks a Rabenseifner reduce folds away only
/// send. They pay no `oc` (the model's §8).
pub fn receives(op: Op, algorithm: &str, spec: &Spec, place: usize) -> bool {
    let p = spec.ranks;
    if p < 2 {
        return false;
    }
    // The rank's place counted from the root, as the rooted schedules number them.
    let v = (place + p - spec.root % p) % p;
    match (op, algorithm) {
        (Op::Bcast, "scatter-allgather") => true,
        (Op::Bcast | Op::Scatter, _) => v != 0,
        (Op::Reduce | Op::Gather, "linear") => v == 0,
        // MPICH's tree: an even place's first child is the next one.
        (Op::Reduce, "binomial") => v.is_multiple_of(2) && v + 1 < p,
        // The even places below twice the ranks beyond a power of two hand their vector in
        // and take no part after (the root's place gets the result back).
        (Op::Reduce, "rabenseifner") => {
            let rem = p - (1 << p.ilog2());
            !(v.is_multiple_of(2) && v != 0 && v < 2 * rem)
        }
        // The scatter's halving tree run backwards: a place receives where it first serves a
        // range of more than itself.
        (Op::Gather, _) => {
            let (mut lo, mut hi) = (0, p);
            while v != lo {
                let head = hi - ((hi - lo) / 2).clamp(1, hi - lo - 1);
                (lo, hi) = if v >= head { (head, hi) } else { (lo, head) };
            }
            hi - lo > 1
        }
        (Op::Scan | Op::Exscan, "linear") => place != 0,
        _ => true,
    }
}

/// What a modeled call's own work costs (the model's §8 `oc`, §15 `copy` and its writes into
/// lines a peer holds at `held` a byte more, counted above `eager_limit`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Work {
    pub oc: f64,
    /// The set's `copy`, by size where measured so: `k` bytes cost its rate at `k`.
    pub copy: Option<crate::model::BySize>,
    /// The set's `held`.
    pub held: Option<f64>,
    /// The set's `held_reduce` (None: `held`'s rate costs such reductions).
    pub held_reduce: Option<f64>,
    /// The set's `alloc`, ns a temporary buffer ([`temporaries`]; 0: none).
    pub alloc: f64,
    /// The set's `bounce` where it costs anything: `held`'s where the set has none, at the
    /// bytes written.
    pub bounce: Option<crate::model::BySize>,
    /// The set's `bounce_clean`: `bounce` where the messages written came from `clean` sends.
    pub bounce_clean: Option<crate::model::BySize>,
    pub eager_limit: u64,
}

impl Work {
    /// A LogGPS set's own-work parameters.
    pub fn of_params(p: &crate::model::Params) -> Work {
        Work {
            oc: p.oc.unwrap_or(0.0),
            copy: p.copy.filter(|c| !c.is_zero()),
            held: p.held,
            held_reduce: p.held_reduce,
            alloc: p.alloc.unwrap_or(0.0),
            bounce: p.bounce_cost(),
            bounce_clean: p.bounce_clean,
            eager_limit: p.S,
        }
    }

    /// What copying `k` bytes costs, ns.
    fn copy_ns(&self, k: u64) -> f64 {
        self.copy.map_or(0.0, |c| c.cost(k))
    }

    /// What `k` bytes reduced into lines a peer holds cost more, ns: `held_reduce` a byte,
    /// else as a write ([`Work::held_ns`]).
    fn held_reduce_ns(&self, k: u64) -> f64 {
        match self.held_reduce {
            Some(rate) => k as f64 * rate,
            None => self.held_ns(k),
        }
    }

    /// What `k` bytes written into lines a peer holds cost more, ns: `held` a byte, else
    /// `bounce` at `k`.
    fn held_ns(&self, k: u64) -> f64 {
        let rate = (self.held).unwrap_or_else(|| self.bounce.map_or(0.0, |b| b.at(k as f64)));
        k as f64 * rate
    }

    /// The model's own-work parameters (none under LogGP).
    pub fn of(model: &crate::model::Model) -> Work {
        match model {
            crate::model::Model::LogGps(p) => Work::of_params(p),
            crate::model::Model::LogGp(_) => Work {
                eager_limit: u64::MAX,
                ..Work::default()
            },
        }
    }
}

/// A modeled call's own work at each rank (the model's §8 `oc`, §15 `copy` and `alloc`):
/// `starts`, each participant's call, moved to when its first step starts (its temporaries'
/// allocation and its copies before); returned, what each rank's copies after its last step
/// and, where it [`receives`], its `oc` add to its end (None: nothing). Nothing is added where
/// `oc`, `copy`, `alloc` and `held` are 0, so a costing without them is unchanged.
pub fn own_work(
    (op, algorithm, spec): (Op, &str, &Spec),
    w: Work,
    starts: &mut [f64],
) -> Option<Vec<f64>> {
    let holds = w.held.is_some_and(|h| h != 0.0)
        || w.held_reduce.is_some_and(|h| h != 0.0)
        || w.bounce.is_some();
    if w.oc == 0.0 && w.copy.is_none() && w.alloc == 0.0 && !holds {
        return None;
    }
    let mut after = vec![0.0; starts.len()];
    for (r, t) in starts.iter_mut().enumerate() {
        let (b, a) = copies(op, algorithm, spec, r);
        let (hb, ha) = held(op, algorithm, spec, r, w.eager_limit);
        let reduced = held_reduced(op, algorithm, spec, r, w.eager_limit);
        let oc = if receives(op, algorithm, spec, r) {
            w.oc
        } else {
            0.0
        };
        let temporaries = f64::from(temporaries(op, algorithm, spec, r)) * w.alloc;
        *t += temporaries + w.copy_ns(b) + w.held_ns(hb);
        after[r] = w.copy_ns(a) + w.held_ns(ha) + w.held_reduce_ns(reduced) + oc;
    }
    after.iter().any(|&a| a != 0.0).then_some(after)
}

/// The bytes rank `place` receives into its receive buffer (the user's) in `op` by
/// `algorithm` on `spec`, and the size of the messages that bring them, as Open MPI 4.1's
/// `coll/base` receives: a broadcast's or scatter's non-root its block (an inner rank of a tree
/// too), a gather's root the others' blocks, an all-gather's and all-to-all's ranks the
/// others', a linear reduce's root (but the last rank) the last rank's vector (it receives
/// that one into its result, the others into a temporary); none where the algorithm receives
/// into a temporary (the other reductions, the scans, reduce-scatter, Bruck's all-to-all).
pub fn into_user_buffer(op: Op, algorithm: &str, spec: &Spec, place: usize) -> (u64, u64) {
    let (p, k) = (spec.ranks as u64, spec.bytes);
    if p < 2 {
        return (0, 0);
    }
    let v = (place + spec.ranks - spec.root % spec.ranks) % spec.ranks;
    match (op, algorithm) {
        (Op::Bcast | Op::Scatter, _) if v != 0 => (k, k),
        (Op::Reduce, "linear") if v == 0 && place + 1 < spec.ranks => (k, k),
        (Op::Gather, _) if v == 0 => ((p - 1) * k, k),
        (Op::Alltoall, "bruck") => (0, 0),
        (Op::Allgather | Op::Alltoall, _) => ((p - 1) * k, k),
        _ => (0, 0),
    }
}

/// One collective instance's participants (communicator ranks, each list rising) the tracer
/// flagged, for [`bounced_after`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Bounced<'a> {
    /// `bounced`: their receive buffer overlaps one they sent from.
    pub bounced: &'a [u32],
    /// `reduced`: their receive buffer overlaps an Allreduce's, Scan's or Exscan's result.
    pub into_result: &'a [u32],
    /// `clean`: their send buffer is unchanged since they last sent from it.
    pub clean: &'a [u32],
}

/// Adds to `after` ([`own_work`]'s, made where it is None) what the participants whose
/// receive buffer the tracer flagged `bounced` or `reduced` pay more for what their schedule
/// receives into it ([`into_user_buffer`]): `bounce` a byte at its messages' size, where they
/// go by rendezvous (above `eager_limit`: the receiver's single copy writes lines its peer's
/// copies read; the model's §13). On two ranks the other rank, which sent it all of them, ends
/// that much later too: its peer pulls each payload and its send completes on the peer's word
/// that the copy is done. On more, which rank sent which block depends on the algorithm's tree,
/// and its senders keep their ends (not modeled). A `bounced` place every other participant of
/// which is `clean`, where the algorithm sends from the users' buffers
/// ([`sends_from_user_buffer`]), pays `bounce_clean` where the set has it; a place `reduced`
/// alone pays `bounce` (measured so a call after the reduction: §13).
pub fn bounced_after(
    (op, algorithm, spec): (Op, &str, &Spec),
    w: &Work,
    flagged: Bounced,
    after: &mut Option<Vec<f64>>,
) {
    let direct = spec.ranks > 1 && sends_from_user_buffer(op, algorithm, spec.ranks);
    let result_alone = flagged
        .into_result
        .iter()
        .filter(|q| flagged.bounced.binary_search(q).is_err());
    for (&place, bounced) in
        (flagged.bounced.iter().map(|q| (q, true))).chain(result_alone.map(|q| (q, false)))
    {
        let others_clean = || {
            (0..spec.ranks as u32)
                .filter(|&q| q != place)
                .all(|q| flagged.clean.binary_search(&q).is_ok())
        };
        let Some(bounce) = (w.bounce_clean)
            .filter(|_| bounced && direct && others_clean())
            .or(w.bounce)
        else {
            continue;
        };
        let (bytes, message) = into_user_buffer(op, algorithm, spec, place as usize);
        if bytes == 0 || message <= w.eager_limit {
            continue;
        }
        let ends = after.get_or_insert_with(|| vec![0.0; spec.ranks]);
        let more = bytes as f64 * bounce.at(message as f64);
        if let Some(end) = ends.get_mut(place as usize) {
            *end += more;
        }
        if spec.ranks == 2 {
            ends[1 - place as usize % 2] += more;
        }
    }
}

/// `c` with each rank's end moved by `after` ([`own_work`]), the completion's time with them.
pub fn add_after(c: &mut super::eval::Completion, after: &[f64]) {
    for (end, a) in c.rank_end_ns.iter_mut().zip(after) {
        *end += a;
    }
    c.time_ns = c
        .rank_end_ns
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`receives`] against the schedules [`super::super::build`] lays out: every operation and
    /// algorithm on 1 to 33 ranks, every root of a rooted one, whether the rank has a step that
    /// receives.
    #[test]
    fn receivers_are_the_ranks_the_schedules_receive_at() {
        use crate::collectives::{OPS, build};
        for (op, name, algorithms) in OPS {
            let rooted = matches!(op, Op::Bcast | Op::Reduce | Op::Gather | Op::Scatter);
            for &algorithm in algorithms.iter() {
                for p in 1..=33usize {
                    for root in 0..if rooted { p } else { 1 } {
                        let spec = Spec {
                            root,
                            ..Spec::new(p, 64)
                        };
                        let s = build(op, algorithm, &spec, &|_| (100.0, 100.0)).unwrap();
                        for r in 0..p {
                            let schedule = s.steps_of(r).any(|st| st.recv_half().is_some());
                            assert_eq!(
                                receives(op, algorithm, &spec, r),
                                schedule,
                                "{name} {algorithm}, {p} ranks, root {root}, rank {r}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Counted by hand from Open MPI 4.1's `coll/base` sources (v4.1.x: each algorithm's
    /// mallocs, freed within the call).
    #[test]
    fn temporaries_follow_open_mpis_implementations() {
        let spec = |p, root| Spec {
            root,
            ..Spec::new(p, 8)
        };
        let each = |op, algorithm, p, root| -> Vec<u32> {
            (0..p)
                .map(|r| temporaries(op, algorithm, &spec(p, root), r))
                .collect()
        };
        // Recursive halving on 2 ranks: disps, two vectors, two arrays of 2 ints; on 6 ranks
        // ranks 0 and 2 are folded away (no core arrays).
        assert_eq!(each(Op::ReduceScatter, "recursive-halving", 2, 0), [5, 5]);
        assert_eq!(
            each(Op::ReduceScatter, "recursive-halving", 6, 0),
            [3, 5, 3, 5, 5, 5]
        );
        assert_eq!(each(Op::ReduceScatter, "ring", 2, 0), [3, 3]);
        assert_eq!(each(Op::Allreduce, "recursive-doubling", 2, 0), [1, 1]);
        assert_eq!(each(Op::Allreduce, "ring", 4, 0), [2, 2, 2, 2]);
        // A linear reduce's root alone; a binomial one on 8 ranks: the root (3 children) 2,
        // place 4 (2 children, not the root) 3, places 2 and 6 (1 child) 2, the odd leaves 0.
        assert_eq!(each(Op::Reduce, "linear", 2, 0), [1, 0]);
        assert_eq!(each(Op::Reduce, "binomial", 8, 0), [2, 0, 2, 0, 3, 0, 2, 0]);
        // Rooted at 1 of 2: the root is place 0.
        assert_eq!(each(Op::Reduce, "binomial", 2, 1), [0, 1]);
        // Scan: every rank but 0; exscan: the middle ranks.
        assert_eq!(each(Op::Scan, "linear", 3, 0), [0, 1, 1]);
        assert_eq!(each(Op::Exscan, "linear", 3, 0), [0, 1, 0]);
        // A binomial gather to root 1 of 4: places 0 and 2 from the root (ranks 1, 3) and the
        // root itself, not rank 0.
        assert_eq!(each(Op::Gather, "binomial", 4, 1), [0, 1, 0, 1]);
        assert_eq!(each(Op::Gather, "binomial", 4, 0), [0, 0, 1, 0]);
        assert_eq!(each(Op::Allgather, "bruck", 3, 0), [0, 1, 1]);
        for (op, algorithm) in [(Op::Bcast, "binomial"), (Op::Barrier, "dissemination")] {
            assert_eq!(each(op, algorithm, 4, 0), [0, 0, 0, 0]);
        }
        assert_eq!(temporaries(Op::Allreduce, "ring", &spec(1, 0), 0), 0);
    }

    /// Counted by hand from Open MPI 4.1's `coll/base` sources (see each arm).
    #[test]
    fn copies_follow_open_mpis_implementations() {
        let spec = |p, root| Spec {
            root,
            ..Spec::new(p, 100)
        };
        // Recursive doubling on a power of two: the result back in the temporary where the rank
        // was the lower partner (which swaps its buffers) an even number of times. On 4 ranks,
        // rank 0 twice and rank 3 never (copied back), ranks 1 and 2 once (not).
        for (r, back) in [(0, 100), (1, 0), (2, 0), (3, 100)] {
            let c = copies(Op::Allreduce, "recursive-doubling", &spec(4, 0), r);
            assert_eq!(c, (100, back), "rank {r}");
        }
        // On 2 ranks rank 0 once, rank 1 never; on 6, the 4-rank core's two rounds.
        for (r, back) in [(0, 0), (1, 100)] {
            let c = copies(Op::Allreduce, "recursive-doubling", &spec(2, 0), r);
            assert_eq!(c, (100, back), "rank {r}");
        }
        assert_eq!(
            copies(Op::Allreduce, "recursive-doubling", &spec(6, 0), 3),
            (100, 100)
        );
        assert_eq!(copies(Op::Allreduce, "ring", &spec(4, 0), 2), (100, 0));
        // A linear gather to root 2 of 4: the root alone.
        for r in 0..4 {
            let want = if r == 2 { (100, 0) } else { (0, 0) };
            assert_eq!(copies(Op::Gather, "linear", &spec(4, 2), r), want);
        }
        // A binomial gather on 5 ranks from root 1: places 0, 2 and 4 from the root copy.
        let inner: Vec<usize> = (0..5)
            .filter(|&r| copies(Op::Gather, "binomial", &spec(5, 1), r).0 > 0)
            .collect();
        assert_eq!(inner, vec![0, 1, 3]);
        assert_eq!(copies(Op::Allgather, "bruck", &spec(4, 0), 0), (100, 0));
        assert_eq!(copies(Op::Allgather, "bruck", &spec(4, 0), 3), (100, 400));
        assert_eq!(copies(Op::Alltoall, "pairwise", &spec(8, 0), 5), (100, 0));
        assert_eq!(copies(Op::Bcast, "binomial", &spec(8, 0), 0), (0, 0));
        // Recursive halving: the whole vector in, a core rank's block out; on 6 ranks ranks 0
        // and 2 are folded away (they hand their vector to 1 and 3) and receive theirs.
        assert_eq!(
            copies(Op::ReduceScatter, "recursive-halving", &spec(2, 0), 1),
            (200, 100)
        );
        let out: Vec<u64> = (0..6)
            .map(|r| copies(Op::ReduceScatter, "recursive-halving", &spec(6, 0), r).1)
            .collect();
        assert_eq!(out, vec![0, 100, 0, 100, 100, 100]);
        assert_eq!(copies(Op::Allreduce, "binomial", &spec(1, 0), 0), (100, 0));
    }
}
