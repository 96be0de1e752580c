//! MPICH's binomial trees given by their rule, never built: a reduce up the tree, a broadcast
//! down it, or both (Open MPI's Allreduce of small vectors from 4,096 ranks on, whose schedule
//! built would be 5 P steps to match and cost as a queue of messages). Costed by
//! [`super::eval::evaluate_ruled`] the same, bit for bit.

use super::{Op, Spec};

/// A binomial tree over P ranks rooted at `root`, `bytes` on each edge (or, where `span` is
/// `(base, rem)`, the chunks of a child's subtree of a vector cut into P, as a scatter sends
/// them): first a reduce if `reduce`, then a broadcast if `bcast`. Rank `v` relative to the
/// root has the children `v + m` for the powers of two `m` below its lowest set bit (below P
/// for the root).
#[derive(Clone, Debug, PartialEq)]
pub struct Binomial {
    pub p: usize,
    pub root: usize,
    pub bytes: u64,
    pub span: Option<(u64, usize)>,
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
            span: None,
            reduce,
            bcast,
        })
    }

    /// The scatter of the scatter-allgather broadcast: rank `v` gets chunks `v..v + m` (its
    /// subtree) of the message cut into P.
    pub fn scatter(spec: &Spec) -> Binomial {
        let (p, n) = (spec.ranks, spec.ranks.max(1) as u64);
        Binomial {
            p,
            root: spec.root,
            bytes: spec.bytes,
            span: Some((spec.bytes / n, (spec.bytes % n) as usize)),
            reduce: false,
            bcast: true,
        }
    }

    /// The bytes on the edge to child `c`, whose subtree is bounded by `m`.
    #[inline(always)]
    pub fn edge(&self, c: usize, m: usize) -> u64 {
        match self.span {
            None => self.bytes,
            Some((base, rem)) => {
                let len = m.min(self.p - c);
                len as u64 * base + rem.saturating_sub(c).min(len) as u64
            }
        }
    }

    /// The messages of one costing (one an edge and tree) and their bytes.
    pub fn messages(&self) -> (u64, u64) {
        let trees = u64::from(self.reduce) + u64::from(self.bcast);
        let n = trees * (self.p as u64 - 1);
        let bytes = match self.span {
            None => n * self.bytes,
            Some(_) => {
                let edges = (1..self.p).map(|c| self.edge(c, super::trees::subtree(c, self.p)));
                trees * edges.sum::<u64>()
            }
        };
        (n, bytes)
    }
}
