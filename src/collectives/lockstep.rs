//! Schedules whose ranks all take the same steps, each round one exchange with peers that a
//! rule names (`v + d`, `v XOR m`) and bytes that a rule gives (as many on every rank, a chunk
//! of the vector, or a run of chunks): the dissemination barrier, pairwise and Bruck exchanges,
//! rings, and recursive doubling and halving (where P is not a power of two, the ranks folded
//! into a core of one hand in and get back in rounds of their own, the others sitting out).
//! They are costed round after round ([`super::eval::evaluate_ruled`]) without their
//! P · rounds steps being built, matched and leveled: on 262,144 ranks a recursive-doubling
//! Allreduce's schedule and matching would hold 4.7 M steps.

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

/// How many bytes a rank sends or receives in a round, as a rule of its rank `v` relative to
/// the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bytes {
    /// As many on every rank.
    Each(u64),
    /// Chunk `(v + at) mod P` of a vector cut as [`super::chunks`] cuts it, `base` bytes and
    /// one more for the first `rem` (a ring's; `at < P`).
    Chunk { base: u64, rem: usize, at: usize },
    /// Chunks `a..a + m` of a vector of chunks of `base` bytes, `extra` more for the first
    /// `rem`, `a` being `v XOR flip` with its bits below `m` cleared (recursive halving's and
    /// doubling's; `m` a power of two; `v` a core rank where ranks fold in).
    Chunks {
        base: u64,
        extra: u64,
        rem: usize,
        m: usize,
        flip: usize,
    },
}

impl Bytes {
    /// On rank `v` of `p`.
    #[inline(always)]
    fn on(self, v: usize, p: usize) -> u64 {
        match self {
            Bytes::Each(b) => b,
            Bytes::Chunk { base, rem, at } => {
                let i = match v + at {
                    i if i >= p => i - p,
                    i => i,
                };
                base + u64::from(i < rem)
            }
            Bytes::Chunks {
                base,
                extra,
                rem,
                m,
                flip,
            } => {
                let a = (v ^ flip) & !(m - 1);
                m as u64 * base + extra * rem.saturating_sub(a).min(m) as u64
            }
        }
    }

    /// On all `p` ranks together: each chunk is some rank's (a ring's), or each `m` ranks'.
    fn total(self, p: usize) -> u64 {
        match self {
            Bytes::Each(b) => p as u64 * b,
            Bytes::Chunk { base, rem, .. } => p as u64 * base + rem as u64,
            Bytes::Chunks {
                base,
                extra,
                rem,
                m,
                ..
            } => (p as u64 * base + extra * rem as u64) * m as u64,
        }
    }
}

/// Which ranks take part in a round where P is not a power of two and `rem` ranks fold in
/// (MPICH): the even ranks below `2·rem` hand their vector to the odd one after them, which
/// stands for both in a core of a power of two, and get the result back at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    /// Every rank.
    No,
    /// The core ranks, as their place in the core (`v / 2` below `2·rem`, else `v − rem`).
    Core(usize),
    /// The handing in: the even ranks below `2·rem` send to `v + 1`, the odd ones receive.
    In(usize),
    /// The handing back: the odd ranks below `2·rem` send to `v − 1`, the even ones receive.
    Out(usize),
}

/// One round of every rank: a send-receive, then a reduction of what it received if `reduce`
/// (of the ranks `fold` names, a send or a receive alone while ranks fold in or out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Round {
    pub to: Peer,
    pub send: Bytes,
    pub from: Peer,
    pub recv: Bytes,
    pub reduce: bool,
    pub fold: Fold,
}

/// A rank's halves in a round: to whom and how many bytes it sends, from whom it receives.
pub type Halves = (Option<(usize, u64)>, Option<(usize, u64)>);

/// Core rank `nr`'s rank, `rem` ranks folded in.
fn unfolded(nr: usize, rem: usize) -> usize {
    if nr < rem { 2 * nr + 1 } else { nr + rem }
}

/// A collective whose ranks go in lockstep: P ranks, root `root`, the same rounds on all.
#[derive(Clone, Debug, PartialEq)]
pub struct Lockstep {
    p: usize,
    root: usize,
    rounds: Rounds,
}

/// A lockstep's rounds: listed (⌈log2 P⌉ of them, or twice that), or, for the P − 1 or
/// 2(P − 1) of a pairwise exchange or a ring, given by their index: a list would take 5 MB a
/// call of a pairwise all-to-all on 32,768 ranks.
#[derive(Clone, Debug, PartialEq)]
enum Rounds {
    Listed(Vec<Round>),
    /// Round `i` to `v + i + 1` and from `v − i − 1`, `bytes` each way.
    Pairwise {
        bytes: u64,
        reduce: bool,
    },
    /// `reducing` rounds of a ring reduce-scatter (round `i` passing on chunk `v − i − 1` to
    /// `v + 1`, reducing chunk `v − i − 2` from `v − 1`), then `gathering` of a ring allgather
    /// (passing on chunk `v − i`): each chunk `bytes`, or of a vector cut into P `chunks`.
    Ring {
        bytes: u64,
        chunks: Option<(u64, usize)>,
        reducing: usize,
        gathering: usize,
    },
}

/// `1, 2, 4, …` below `p`.
fn powers(p: usize) -> impl DoubleEndedIterator<Item = usize> {
    (0..p.next_power_of_two().trailing_zeros()).map(|i| 1usize << i)
}

/// What the rounds of a lockstep algorithm on `p` ranks are made of: a core of a power of two
/// ranks, and the ranks folded into it.
struct Makings {
    p: usize,
    p2: usize,
    folded: usize,
    core: Fold,
}

impl Makings {
    fn new(p: usize, _k: u64) -> Makings {
        let p2 = if p.is_power_of_two() {
            p
        } else {
            p.next_power_of_two() >> 1
        };
        let folded = p - p2;
        let core = if folded == 0 {
            Fold::No
        } else {
            Fold::Core(folded)
        };
        Makings {
            p,
            p2,
            folded,
            core,
        }
    }

    /// In round d, to v + d and from v − d, `bytes(d)` each way.
    fn shifts(&self, ds: impl Iterator<Item = usize>, bytes: impl Fn(usize) -> u64) -> Rounds {
        let rounds = ds.map(|d| {
            let b = Bytes::Each(bytes(d));
            Round {
                to: Peer::Shift(d),
                send: b,
                from: Peer::Shift(self.p - d),
                recv: b,
                reduce: false,
                fold: Fold::No,
            }
        });
        Rounds::Listed(rounds.collect())
    }

    /// With core rank nr XOR m, `bytes(m)` out and in.
    fn xors(
        &self,
        ms: impl Iterator<Item = usize>,
        bytes: impl Fn(usize) -> (Bytes, Bytes),
        reduce: bool,
    ) -> Vec<Round> {
        ms.map(|m| {
            let (send, recv) = bytes(m);
            Round {
                to: Peer::Xor(m),
                send,
                from: Peer::Xor(m),
                recv,
                reduce,
                fold: self.core,
            }
        })
        .collect()
    }

    /// The handing in of `bytes` (reduced if `reduce`) and the handing back of `back` around
    /// the core's rounds.
    fn around_core(&self, bytes: u64, reduce: bool, rounds: Vec<Round>, back: u64) -> Rounds {
        let fold = |fold, bytes, reduce| Round {
            to: Peer::Shift(0),
            send: Bytes::Each(bytes),
            from: Peer::Shift(0),
            recv: Bytes::Each(bytes),
            reduce,
            fold,
        };
        let (hand_in, hand_back) = match self.folded {
            0 => (None, None),
            n => (
                Some(fold(Fold::In(n), bytes, reduce)),
                Some(fold(Fold::Out(n), back, false)),
            ),
        };
        Rounds::Listed(hand_in.into_iter().chain(rounds).chain(hand_back).collect())
    }
}

/// A ring's rounds.
fn ring(bytes: u64, chunks: Option<(u64, usize)>, reducing: usize, gathering: usize) -> Rounds {
    Rounds::Ring {
        bytes,
        chunks,
        reducing,
        gathering,
    }
}

/// Chunks of the halves kept and given, or held and taken: of a vector cut into the core's
/// ranks (`extra` 1), or of blocks twice as large for the ranks folded in.
fn halves(
    (base, extra, rem): (u64, u64, usize),
    m: usize,
    flip_out: usize,
    flip_in: usize,
) -> (Bytes, Bytes) {
    let chunks = |flip| Bytes::Chunks {
        base,
        extra,
        rem,
        m,
        flip,
    };
    (chunks(flip_out), chunks(flip_in))
}

impl Lockstep {
    /// `op` by `algorithm` (one of [`Op::algorithms`]) on `spec`, if its ranks go in lockstep:
    /// the same rounds as [`super::build`] gives each rank, step for step.
    pub fn of(op: Op, algorithm: &str, spec: &Spec) -> Option<Lockstep> {
        let (p, k) = (spec.ranks, spec.bytes);
        if p == 0 {
            return None;
        }
        let m = Makings::new(p, k);
        let folded = m.folded;
        // The vector cut into P chunks.
        let (base, rem) = (k / p as u64, (k % p as u64) as usize);
        let each = |b| (Bytes::Each(b), Bytes::Each(b));
        let around = p.saturating_sub(1);
        let cut = (k / m.p2 as u64, 1, (k % m.p2 as u64) as usize);
        let blocks = (k, k, folded);
        let rounds = match (op, algorithm) {
            (Op::Barrier, _) => m.shifts(powers(p), |_| 0),
            (Op::Allreduce, "recursive-doubling") => {
                m.around_core(k, true, m.xors(powers(m.p2), |_| each(k), true), k)
            }
            (Op::Allreduce, "ring") => ring(0, Some((base, rem)), around, around),
            // Halving gives the half without v's chunk and keeps the other; doubling sends
            // the chunks it holds and takes its partner's.
            (Op::Allreduce, "rabenseifner") => {
                let mut r = m.xors(powers(m.p2).rev(), |x| halves(cut, x, x, 0), true);
                r.extend(m.xors(powers(m.p2), |x| halves(cut, x, 0, x), false));
                m.around_core(k, true, r, k)
            }
            (Op::Allgather, "recursive-doubling") => {
                let r = m.xors(powers(m.p2), |x| halves(blocks, x, 0, x), false);
                m.around_core(k, false, r, (p as u64 - 1) * k)
            }
            (Op::Allgather, "ring") => ring(k, None, 0, around),
            // To v − d and from v + d.
            (Op::Allgather, "bruck") => Rounds::Listed(
                powers(p)
                    .map(|d| {
                        let n = Bytes::Each(d.min(p - d) as u64 * k);
                        Round {
                            to: Peer::Shift(p - d),
                            send: n,
                            from: Peer::Shift(d),
                            recv: n,
                            reduce: false,
                            fold: Fold::No,
                        }
                    })
                    .collect(),
            ),
            (Op::Alltoall, "pairwise" | "linear") => Rounds::Pairwise {
                bytes: k,
                reduce: false,
            },
            // The blocks whose index has bit d set.
            (Op::Alltoall, "bruck") => m.shifts(powers(p), |d| {
                ((p / (2 * d)) * d + (p % (2 * d)).saturating_sub(d)) as u64 * k
            }),
            (Op::ReduceScatter, "ring") => ring(k, None, around, 0),
            (Op::ReduceScatter, "pairwise") => Rounds::Pairwise {
                bytes: k,
                reduce: true,
            },
            (Op::ReduceScatter, "recursive-halving") => {
                let r = m.xors(powers(m.p2).rev(), |x| halves(blocks, x, x, 0), true);
                m.around_core(p as u64 * k, true, r, k)
            }
            _ => return None,
        };
        Some(Lockstep {
            p,
            root: spec.root,
            rounds,
        })
    }

    /// The ring allgather of the scatter-allgather broadcast: of chunks of the message cut into P.
    pub fn allgather_of_chunks(spec: &Spec) -> Lockstep {
        let (p, k, n) = (spec.ranks, spec.bytes, spec.ranks.max(1) as u64);
        Lockstep {
            p,
            root: spec.root,
            rounds: Rounds::Ring {
                bytes: 0,
                chunks: Some((k / n, (k % n) as usize)),
                reducing: 0,
                gathering: p.saturating_sub(1),
            },
        }
    }

    pub fn ranks(&self) -> usize {
        self.p
    }

    /// How many rounds.
    pub fn len(&self) -> usize {
        match &self.rounds {
            Rounds::Listed(v) => v.len(),
            Rounds::Pairwise { .. } => self.p.saturating_sub(1),
            Rounds::Ring {
                reducing,
                gathering,
                ..
            } => reducing + gathering,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Round `i` (below [`Lockstep::len`]).
    pub fn round(&self, i: usize) -> Round {
        let p = self.p;
        match self.rounds {
            Rounds::Listed(ref v) => v[i],
            Rounds::Pairwise { bytes, reduce } => Round {
                to: Peer::Shift(i + 1),
                send: Bytes::Each(bytes),
                from: Peer::Shift(p - i - 1),
                recv: Bytes::Each(bytes),
                reduce,
                fold: Fold::No,
            },
            Rounds::Ring {
                bytes,
                chunks,
                reducing,
                ..
            } => {
                // The chunk passed on is v + at, the one taken v + at − 1.
                let at = match i.checked_sub(reducing) {
                    None => (2 * p - 1 - i) % p,
                    Some(i) => (p - i) % p,
                };
                let chunk = |at| match chunks {
                    Some((base, rem)) => Bytes::Chunk { base, rem, at },
                    None => Bytes::Each(bytes),
                };
                Round {
                    to: Peer::Shift(1),
                    send: chunk(at),
                    from: Peer::Shift(p - 1),
                    recv: chunk((at + p - 1) % p),
                    reduce: i < reducing,
                    fold: Fold::No,
                }
            }
        }
    }

    /// The rounds in order.
    fn rounds(&self) -> impl Iterator<Item = Round> + '_ {
        (0..self.len()).map(|i| self.round(i))
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
            Peer::Xor(m) => real(self.p, self.root, self.relative(r) ^ m),
        }
    }

    /// Rank `r`'s place from the root.
    #[inline(always)]
    fn relative(&self, r: usize) -> usize {
        real(self.p, self.p - self.root, r)
    }

    /// Rank `r`'s `bytes`.
    #[inline(always)]
    pub fn bytes(&self, r: usize, bytes: Bytes) -> u64 {
        match bytes {
            Bytes::Each(b) => b,
            b => b.on(self.relative(r), self.p),
        }
    }

    /// Rank `r`'s halves in round `x`: its peers and bytes, none where it sits the round out.
    #[inline(always)]
    pub fn halves(&self, r: usize, x: &Round) -> Halves {
        let real = |v| real(self.p, self.root, v);
        match x.fold {
            Fold::No => (
                Some((self.peer(r, x.to), self.bytes(r, x.send))),
                Some((self.peer(r, x.from), self.bytes(r, x.recv))),
            ),
            Fold::Core(rem) => {
                let nr = match self.relative(r) {
                    v if v >= 2 * rem => v - rem,
                    v if v % 2 == 1 => v / 2,
                    _ => return (None, None),
                };
                let half = |peer, bytes: Bytes| {
                    let Peer::Xor(m) = peer else {
                        unreachable!("a core's peers are by XOR")
                    };
                    (real(unfolded(nr ^ m, rem)), bytes.on(nr, self.p))
                };
                (Some(half(x.to, x.send)), Some(half(x.from, x.recv)))
            }
            Fold::In(rem) | Fold::Out(rem) => {
                let v = self.relative(r);
                let bytes = |b| match b {
                    Bytes::Each(b) => b,
                    _ => unreachable!("folding moves whole vectors"),
                };
                match (v, x.fold) {
                    (v, _) if v >= 2 * rem => (None, None),
                    (v, Fold::In(_)) if v % 2 == 0 => (Some((real(v + 1), bytes(x.send))), None),
                    (v, Fold::In(_)) => (None, Some((real(v - 1), bytes(x.recv)))),
                    (v, _) if v % 2 == 1 => (Some((real(v - 1), bytes(x.send))), None),
                    (v, _) => (None, Some((real(v + 1), bytes(x.recv)))),
                }
            }
        }
    }

    /// The messages of one costing (a send a rank and round, but where ranks sit out) and their
    /// bytes.
    pub fn messages(&self) -> (u64, u64) {
        let (mut n, mut bytes) = (0, 0);
        for x in self.rounds() {
            let senders = match x.fold {
                Fold::No => self.p,
                Fold::Core(rem) => self.p - rem,
                Fold::In(rem) | Fold::Out(rem) => rem,
            };
            n += senders as u64;
            bytes += x.send.total(senders);
        }
        (n, bytes)
    }

    /// The steps [`super::build`] would make of it, rank after rank.
    pub fn schedule(&self) -> Schedule {
        let steps = |r: usize| {
            let mut s = Vec::new();
            for x in self.rounds() {
                let (send, recv) = self.halves(r, &x);
                s.extend(match (send, recv) {
                    (None, None) => None,
                    (Some((to, bytes)), None) => Some(Step::Send {
                        to: to as u32,
                        bytes,
                    }),
                    (None, Some((from, bytes))) => Some(Step::Recv {
                        from: from as u32,
                        bytes,
                    }),
                    (Some((to, send_bytes)), Some((from, recv_bytes))) => Some(Step::SendRecv {
                        to: to as u32,
                        send_bytes,
                        from: from as u32,
                        recv_bytes,
                    }),
                });
                if let (true, Some((_, bytes))) = (x.reduce, recv) {
                    s.push(Step::Reduce { bytes });
                }
            }
            s
        };
        Schedule::from_steps((0..self.p).map(steps).collect())
    }
}
