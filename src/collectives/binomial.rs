//! MPICH's binomial trees given by their rule, never built: a reduce up the tree, a broadcast
//! down it, or both (Open MPI's Allreduce of small vectors from 4,096 ranks on: on 65,536 ranks a
//! schedule of 327,675 steps built, matched and costed as a queue of messages). Costed by
//! [`super::eval::evaluate_binomial`] the same, bit for bit.

use super::{Op, Spec};

/// A binomial tree over P ranks rooted at `root`, `bytes` on each edge: first a reduce if
/// `reduce`, then a broadcast if `bcast`. Rank `v` relative to the root has the children
/// `v + m` for the powers of two `m` below its lowest set bit (below P for the root).
#[derive(Clone, Debug, PartialEq)]
pub struct Binomial {
    pub p: usize,
    pub root: usize,
    pub bytes: u64,
    pub reduce: bool,
    pub bcast: bool,
}

impl Binomial {
    /// `op` by `algorithm` on `spec`, if it is a binomial tree (or two).
    pub fn of(op: Op, algorithm: &str, spec: &Spec) -> Option<Binomial> {
        let (reduce, bcast) = match (op, algorithm) {
            (Op::Bcast, "binomial") => (false, true),
            (Op::Reduce, "binomial") => (true, false),
            (Op::Allreduce, "binomial") => (true, true),
            _ => return None,
        };
        Some(Binomial {
            p: spec.ranks,
            root: spec.root,
            bytes: spec.bytes,
            reduce,
            bcast,
        })
    }

    /// The messages of one costing (one an edge and tree) and their bytes.
    pub fn messages(&self) -> (u64, u64) {
        let n = (u64::from(self.reduce) + u64::from(self.bcast)) * (self.p as u64 - 1);
        (n, n * self.bytes)
    }
}
