//! Traced collective calls as schedules: which operation a recorded routine is, how many bytes
//! the schedule moves, and which algorithm a user chose (`--coll`).

use super::{Op, Spec, openmpi};
use crate::error::Error;
use crate::trace::Routine;

/// The algorithm Open MPI 4.1's tuned rules pick for each call's size, as a choice of `--coll`
/// and `--sweep`.
pub const TUNED: &str = "tuned";

/// How the replay costs collectives.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Choice {
    /// Modeled (expanded into point-to-point schedules) rather than measured.
    pub modeled: bool,
    /// Algorithms chosen per operation; the others take Open MPI 4.1's default
    /// ([`openmpi::tuned_algorithm`]).
    pub overrides: Vec<(Op, &'static str)>,
}

impl Choice {
    /// Traced durations kept.
    pub fn measured() -> Choice {
        Choice {
            modeled: false,
            overrides: Vec::new(),
        }
    }

    /// Every call by the algorithm Open MPI 4.1's tuned rules pick for its size: the default.
    pub fn tuned() -> Choice {
        Choice {
            modeled: true,
            overrides: Vec::new(),
        }
    }

    /// Parses `--coll`: `measured` (traced durations), `modeled` (every call by the algorithm
    /// Open MPI 4.1's tuned rules pick for its size), or `op=algorithm,…` (modeled, with these
    /// choices; `op=`[`TUNED`] is Open MPI's for that operation).
    pub fn parse(spec: &str) -> Result<Choice, Error> {
        match spec.trim() {
            "measured" => return Ok(Choice::measured()),
            "modeled" | "default" => return Ok(Choice::tuned()),
            _ => {}
        }
        let mut choice = Choice::tuned();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (op, algo) = item.split_once('=').ok_or_else(|| {
                Error::Usage(format!(
                    "--coll: expected measured, modeled or OP=ALGORITHM,…, found `{item}`"
                ))
            })?;
            let op = Op::parse(op)?;
            choice = choice.with(op, algorithm_or_tuned(op, algo)?);
        }
        Ok(choice)
    }

    /// This choice with `op` by `algorithm` ([`TUNED`]: Open MPI's rules), whatever it said of
    /// `op` before.
    pub fn with(mut self, op: Op, algorithm: &'static str) -> Choice {
        self.overrides.retain(|(o, _)| *o != op);
        if algorithm != TUNED {
            self.overrides.push((op, algorithm));
        }
        self
    }

    /// The algorithm for one `op` call on `comm_size` ranks moving `bytes` (as
    /// [`Spec::bytes`]), and the pipeline segment it needs (`None`: [`Spec`]'s default): the
    /// chosen one, else Open MPI 4.1's tuned choice for that size (reductions commutative).
    pub fn algorithm(&self, op: Op, comm_size: usize, bytes: u64) -> (&'static str, Option<u64>) {
        match self.overrides.iter().find(|(o, _)| *o == op) {
            Some((_, a)) => (a, None),
            None => openmpi::tuned_algorithm(op, comm_size, bytes),
        }
    }
}

/// `name` as one of `op`'s algorithms ([`crate::collectives::Op::algorithm`]), or [`TUNED`].
pub fn algorithm_or_tuned(op: Op, name: &str) -> Result<&'static str, Error> {
    match name.trim() {
        TUNED => Ok(TUNED),
        name => op.algorithm(name),
    }
}

/// The operation a recorded routine performs (None: not a collective the schedules model).
pub fn op_of(routine: Routine) -> Option<Op> {
    Some(match routine.blocking() {
        Routine::Barrier => Op::Barrier,
        Routine::Bcast => Op::Bcast,
        Routine::Reduce => Op::Reduce,
        Routine::Allreduce => Op::Allreduce,
        Routine::Gather | Routine::Gatherv => Op::Gather,
        Routine::Scatter | Routine::Scatterv => Op::Scatter,
        Routine::Allgather | Routine::Allgatherv => Op::Allgather,
        Routine::Alltoall | Routine::Alltoallv | Routine::Alltoallw => Op::Alltoall,
        Routine::ReduceScatter | Routine::ReduceScatterBlock => Op::ReduceScatter,
        Routine::Scan => Op::Scan,
        Routine::Exscan => Op::Exscan,
        _ => return None,
    })
}

/// What one collective instance's participants recorded, folded one participant at a time, in
/// any order: the largest block sent and received, and the root, the member of highest
/// communicator rank naming itself (0 if none does).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Recorded {
    pub sent: u64,
    pub received: u64,
    pub root: usize,
}

impl Recorded {
    /// The schedule's spec on `n` ranks. Bytes follow [`Spec`]'s meaning, read from what each
    /// member recorded (tracer/FORMAT-NOTES.md): the message (bcast, from the root), the vector
    /// (reduce, allreduce, scan), the block per rank (gather, allgather: sent; scatter,
    /// reduce-scatter: received) or per pair (alltoall: sent over the communicator size).
    /// Irregular (v) variants take their largest block.
    pub fn spec(&self, op: Op, n: usize) -> Spec {
        let bytes = match op {
            Op::Scatter | Op::ReduceScatter => self.received,
            Op::Alltoall => self.sent / n.max(1) as u64,
            _ => self.sent,
        };
        Spec {
            root: self.root,
            ..Spec::new(n, bytes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse() {
        assert_eq!(Choice::parse("measured").unwrap(), Choice::measured());
        assert_eq!(Choice::parse("modeled").unwrap(), Choice::tuned());
        assert!(Choice::parse("modeled").unwrap().modeled);
        let c = Choice::parse("bcast=postal,allreduce=ring").unwrap();
        assert_eq!(c.algorithm(Op::Bcast, 64, 1 << 20), ("postal", None));
        assert_eq!(c.algorithm(Op::Allreduce, 8, 8), ("ring", None));
        // `tuned` is the rules' choice, and undoes a choice before it.
        let tuned = Choice::parse("bcast=postal,allreduce=ring,bcast=tuned").unwrap();
        assert_eq!(tuned.overrides, [(Op::Allreduce, "ring")]);
        assert_eq!(Choice::parse("allreduce=tuned").unwrap(), Choice::tuned());
        assert_eq!(c.algorithm(Op::Barrier, 8, 0), ("dissemination", None));
        // Not overridden: Open MPI 4.1's rules (allreduce, 8 ≤ P < 16, < 8192 B: recursive
        // doubling; bcast, P < 4, 200000 B: the unsegmented chain).
        assert_eq!(
            c.algorithm(Op::Reduce, 300, 8192),
            openmpi::tuned_algorithm(Op::Reduce, 300, 8192)
        );
        let m = Choice::parse("modeled").unwrap();
        assert_eq!(
            m.algorithm(Op::Allreduce, 8, 8),
            ("recursive-doubling", None)
        );
        assert_eq!(
            m.algorithm(Op::Bcast, 3, 200_000),
            ("pipeline", Some(200_000))
        );
        assert!(
            Choice::parse("bcast=nope")
                .unwrap_err()
                .to_string()
                .contains("binomial")
        );
        assert!(Choice::parse("frobnicate").is_err());
        assert_eq!(op_of(Routine::Allgatherv), Some(Op::Allgather));
        assert_eq!(op_of(Routine::CommDup), None);
        // Nonblocking collectives as their blocking twins; Alltoallw as Alltoallv.
        assert_eq!(op_of(Routine::Iallgatherv), Some(Op::Allgather));
        assert_eq!(op_of(Routine::Iexscan), Some(Op::Exscan));
        assert_eq!(op_of(Routine::Alltoallw), Some(Op::Alltoall));
        assert_eq!(op_of(Routine::Ialltoallw), Some(Op::Alltoall));
        assert_eq!(op_of(Routine::CommIdup), None);
    }
}
