//! Schedules whose ranks all take the same steps, each round one exchange with peers that a
//! rule names (`r + d`, `r XOR m`) and as many bytes on every rank: the dissemination barrier,
//! pairwise and Bruck exchanges, rings, and recursive doubling and halving on a power of two.
//! They are costed round after round ([`super::eval::evaluate_lockstep`]) without their
//! P · rounds steps being built, matched and leveled: on 262,144 ranks a recursive-doubling
//! Allreduce's schedule and matching held 4.7 M steps, about 140 MB.

use super::schedule::{Schedule, Step};
use super::{Op, Spec, real};

/// Whom a rank exchanges with in a round, as a rule of its rank `v` relative to the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// `v + d` modulo P (`d < P`).
    Shift(usize),
    /// `v XOR m` (P a power of two, `m < P`).
    Xor(usize),
}

/// One round of every rank: a send-receive, then a local reduction if `reduce`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    pub to: Peer,
    pub send_bytes: u64,
    pub from: Peer,
    pub recv_bytes: u64,
    pub reduce: Option<u64>,
}

/// A collective whose ranks go in lockstep: P ranks, root `root`, the same rounds on all.
#[derive(Clone, Debug, PartialEq)]
pub struct Lockstep {
    p: usize,
    root: usize,
    rounds: Vec<Round>,
}

/// `1, 2, 4, …` below `p`.
fn powers(p: usize) -> impl DoubleEndedIterator<Item = usize> {
    (0..p.next_power_of_two().trailing_zeros()).map(|i| 1usize << i)
}

impl Lockstep {
    /// `op` by `algorithm` (one of [`Op::algorithms`]) on `spec`, if its ranks go in lockstep:
    /// the same rounds as [`super::build`] gives each rank, step for step.
    pub fn of(op: Op, algorithm: &str, spec: &Spec) -> Option<Lockstep> {
        let (p, k) = (spec.ranks, spec.bytes);
        let pow2 = p.is_power_of_two();
        let exchange = |to, send_bytes, from, recv_bytes, reduce| Round {
            to,
            send_bytes,
            from,
            recv_bytes,
            reduce,
        };
        // In round d, to v + d and from v − d, `bytes` each way.
        let shifts =
            |ds: &mut dyn Iterator<Item = usize>, bytes: &dyn Fn(usize) -> u64, reduce: bool| {
                ds.map(|d| {
                    let b = bytes(d);
                    exchange(
                        Peer::Shift(d),
                        b,
                        Peer::Shift(p - d),
                        b,
                        reduce.then_some(b),
                    )
                })
                .collect::<Vec<_>>()
            };
        // With v XOR m, `bytes(m)` each way.
        let xors =
            |ms: &mut dyn Iterator<Item = usize>, bytes: &dyn Fn(usize) -> u64, reduce: bool| {
                ms.map(|m| {
                    let b = bytes(m);
                    exchange(Peer::Xor(m), b, Peer::Xor(m), b, reduce.then_some(b))
                })
                .collect::<Vec<_>>()
            };
        // A ring: p − 1 rounds to v + 1 and from v − 1.
        let ring =
            |bytes: u64, reduce| shifts(&mut std::iter::repeat_n(1, p - 1), &|_| bytes, reduce);
        let rounds = match (op, algorithm) {
            (Op::Barrier, _) => shifts(&mut powers(p), &|_| 0, false),
            (Op::Allreduce, "recursive-doubling") if pow2 => xors(&mut powers(p), &|_| k, true),
            // Chunks of one size: P divides the vector.
            (Op::Allreduce, "ring") if k % p as u64 == 0 => {
                let c = k / p as u64;
                let mut r = ring(c, true);
                r.extend(ring(c, false));
                r
            }
            (Op::Allreduce, "rabenseifner") if pow2 && k % p as u64 == 0 => {
                let c = k / p as u64;
                let mut r = xors(&mut powers(p).rev(), &|m| m as u64 * c, true);
                r.extend(xors(&mut powers(p), &|m| m as u64 * c, false));
                r
            }
            (Op::Allgather, "recursive-doubling") if pow2 => {
                xors(&mut powers(p), &|m| m as u64 * k, false)
            }
            (Op::Allgather, "ring") => ring(k, false),
            // To v − d and from v + d.
            (Op::Allgather, "bruck") => powers(p)
                .map(|d| {
                    let n = d.min(p - d) as u64 * k;
                    exchange(Peer::Shift(p - d), n, Peer::Shift(d), n, None)
                })
                .collect(),
            (Op::Alltoall, "pairwise" | "linear") => shifts(&mut (1..p), &|_| k, false),
            (Op::Alltoall, "bruck") => {
                let blocks = |d: usize| (0..p).filter(|j| j & d != 0).count() as u64 * k;
                shifts(&mut powers(p), &blocks, false)
            }
            (Op::ReduceScatter, "ring") => ring(k, true),
            (Op::ReduceScatter, "pairwise") => shifts(&mut (1..p), &|_| k, true),
            (Op::ReduceScatter, "recursive-halving") if pow2 => {
                xors(&mut powers(p).rev(), &|m| m as u64 * k, true)
            }
            _ => return None,
        };
        Some(Lockstep {
            p,
            root: spec.root,
            rounds,
        })
    }

    pub fn ranks(&self) -> usize {
        self.p
    }

    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }

    /// Rank `r`'s `peer`.
    #[inline(always)]
    pub fn peer(&self, r: usize, peer: Peer) -> usize {
        match peer {
            // Relative to the root or not, the same rank.
            Peer::Shift(d) => match r + d {
                x if x >= self.p => x - self.p,
                x => x,
            },
            Peer::Xor(m) => {
                let v = real(self.p, self.p - self.root, r);
                real(self.p, self.root, v ^ m)
            }
        }
    }

    /// The messages of one costing (a send-receive a rank and round) and their bytes.
    pub fn messages(&self) -> (u64, u64) {
        let p = self.p as u64;
        let bytes = self.rounds.iter().map(|x| x.send_bytes).sum::<u64>();
        (p * self.rounds.len() as u64, p * bytes)
    }

    /// The steps [`super::build`] would make of it, rank after rank.
    pub fn schedule(&self) -> Schedule {
        let steps = |r: usize| {
            let mut s = Vec::new();
            for x in &self.rounds {
                s.push(Step::SendRecv {
                    to: self.peer(r, x.to) as u32,
                    send_bytes: x.send_bytes,
                    from: self.peer(r, x.from) as u32,
                    recv_bytes: x.recv_bytes,
                });
                if let Some(bytes) = x.reduce {
                    s.push(Step::Reduce { bytes });
                }
            }
            s
        };
        Schedule::from_steps((0..self.p).map(steps).collect())
    }
}
