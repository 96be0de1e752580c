//! A collective as point-to-point messages: per rank, an ordered list of steps. The n-th send
//! from `a` to `b` matches the n-th receive at `b` from `a` (no tags), as MPI's non-overtaking
//! rule orders messages within one communicator.

use crate::error::Error;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// One step of one rank, in program order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Step {
    /// A blocking send of `bytes` to rank `to`.
    Send { to: u32, bytes: u64 },
    /// A blocking receive of `bytes` from rank `from`.
    Recv { from: u32, bytes: u64 },
    /// `MPI_Sendrecv`: both halves issued at the call, returning when both complete.
    SendRecv {
        to: u32,
        send_bytes: u64,
        from: u32,
        recv_bytes: u64,
    },
    /// Local reduction of `bytes` (costs `bytes · gamma`).
    Reduce { bytes: u64 },
}

impl Step {
    /// `(peer, bytes)` of the send half, if any.
    pub fn send_half(&self) -> Option<(u32, u64)> {
        match *self {
            Step::Send { to, bytes } => Some((to, bytes)),
            Step::SendRecv { to, send_bytes, .. } => Some((to, send_bytes)),
            _ => None,
        }
    }

    /// `(peer, bytes)` of the receive half, if any.
    pub fn recv_half(&self) -> Option<(u32, u64)> {
        match *self {
            Step::Recv { from, bytes } => Some((from, bytes)),
            Step::SendRecv {
                from, recv_bytes, ..
            } => Some((from, recv_bytes)),
            _ => None,
        }
    }
}

/// Per rank, the ordered steps of one collective call, stored as `Packed` steps, rank after
/// rank.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schedule {
    /// Where each rank's steps start in `steps`, and their total at the end.
    first: Vec<usize>,
    steps: Vec<Packed>,
    /// Byte counts of [`BIG`] or more, which steps name by their place here.
    big: Vec<u64>,
}

/// A schedule being built: steps in the order they are added, put rank after rank by
/// [`Log::finish`] (as they are where they were added so). One vector, where a vector a rank
/// grown by doubling would hold 512 bytes for a barrier rank's 18 steps of 16.
#[derive(Debug, Default)]
pub struct Log {
    added: Vec<Packed>,
    /// Each rank's steps.
    counts: Vec<u32>,
    /// Each step's rank, once one was added to a rank before the last one's (4 bytes a step
    /// that a schedule added rank after rank does without).
    ranks: Option<Vec<u32>>,
    last: u32,
    big: Vec<u64>,
    /// The steps `added` has room for once one is added.
    room: usize,
}

impl Log {
    /// An empty schedule for `p` ranks, with room for `steps` steps once one is added (reserved,
    /// as a vector grown by doubling would hold both its copies at once; pages never written
    /// take no memory, but a reservation [`Log::each_rank`] does not use still costs some: see
    /// the bytes/event of the `mix` case of tests/bench/run.sh).
    pub fn with_capacity(p: usize, steps: usize) -> Log {
        Log {
            added: Vec::new(),
            counts: vec![0; p],
            ranks: None,
            last: 0,
            big: Vec::new(),
            room: steps,
        }
    }

    /// Appends `step` to rank `r`'s steps.
    pub fn push(&mut self, r: usize, step: Step) {
        assert!(r < self.counts.len(), "rank {r} of {}", self.counts.len());
        let packed = Packed::of(step, &mut self.big);
        if self.added.capacity() == 0 {
            self.added.reserve_exact(self.room);
        }
        let r32 = r as u32;
        if self.ranks.is_none() && r32 < self.last {
            // The steps so far, rank after rank.
            let mut ranks = Vec::with_capacity(self.added.capacity());
            for (q, &n) in self.counts.iter().enumerate() {
                ranks.extend(std::iter::repeat_n(q as u32, n as usize));
            }
            self.ranks = Some(ranks);
        }
        match &mut self.ranks {
            Some(ranks) => ranks.push(r32),
            None => self.last = r32,
        }
        self.counts[r] += 1;
        self.added.push(packed);
    }

    /// Every rank's steps, where none were added before: `steps(r, sink)` puts rank `r`'s in
    /// `sink`, rank after rank; with threads to share them, in blocks of ranks on the pool's
    /// threads, counted first, then written in place (counting costs a thread about as much
    /// again, so one thread builds rank after rank; see the `mix` case of tests/bench/run.sh).
    pub fn each_rank(&mut self, steps: impl Fn(usize, &mut RankSink) + Sync) {
        assert!(self.added.is_empty(), "steps added before");
        let p = self.counts.len();
        if super::eval::threads() < 2 {
            self.added.reserve_exact(self.room);
            let mut sink = RankSink {
                to: Sink::Push(&mut self.added),
                n: 0,
                big: std::mem::take(&mut self.big),
            };
            for r in 0..p {
                let before = sink.n;
                steps(r, &mut sink);
                self.counts[r] = u32::try_from(sink.n - before).expect("under 2^32 steps a rank");
            }
            self.big = sink.big;
            self.last = p.saturating_sub(1) as u32;
            return;
        }
        self.counts = (0..p)
            .into_par_iter()
            .map(|r| {
                let mut sink = RankSink {
                    to: Sink::Count,
                    n: 0,
                    big: Vec::new(),
                };
                steps(r, &mut sink);
                u32::try_from(sink.n).expect("under 2^32 steps a rank")
            })
            .collect();
        let first = starts(self.counts.iter().map(|&n| n as usize));
        // Zeroed memory, whose pages the threads that write them touch first.
        let mut added = crate::memory::zeroed_slice::<Packed>(first[p]);
        let blocks = block_ends(p);
        let bigs: Vec<Vec<u64>> = cut(&mut added, blocks.iter().map(|&(_, hi)| first[hi]))
            .into_par_iter()
            .zip(&blocks)
            .map(|(out, &(lo, hi))| {
                let mut sink = RankSink {
                    to: Sink::Write(out),
                    n: 0,
                    big: Vec::new(),
                };
                for r in lo..hi {
                    steps(r, &mut sink);
                    assert_eq!(
                        sink.n,
                        first[r + 1] - first[lo],
                        "rank {r}'s steps as counted"
                    );
                }
                // The block's large counts, numbered from where the blocks before it end below.
                sink.big
            })
            .collect();
        if bigs.iter().any(|b| !b.is_empty()) {
            let (mut before, mut step) = (0, 0);
            for (big, &(_, hi)) in bigs.iter().zip(&blocks) {
                for s in &mut added[step..first[hi]] {
                    for b in [&mut s.send, &mut s.recv] {
                        if *b & BIG != 0 {
                            *b += before;
                        }
                    }
                }
                before += big.len() as u32;
                step = first[hi];
            }
            self.big = bigs.concat();
        }
        self.added = added.into_vec();
        self.last = p.saturating_sub(1) as u32;
    }

    /// The schedule: the steps sorted by rank (counting them), in the order added per rank;
    /// where they were added rank after rank, as they are (not copied).
    pub fn finish(self) -> Schedule {
        let first = starts(self.counts.iter().map(|&n| n as usize));
        let steps = match self.ranks {
            None => self.added,
            Some(ranks) => {
                let mut next = first.clone();
                // Each place written below.
                let mut steps = self.added.clone();
                for (&r, &step) in ranks.iter().zip(&self.added) {
                    steps[next[r as usize]] = step;
                    next[r as usize] += 1;
                }
                steps
            }
        };
        Schedule {
            first,
            steps,
            big: self.big,
        }
    }
}

/// One rank's steps as [`Log::each_rank`] puts them, `n` so far.
pub struct RankSink<'a> {
    to: Sink<'a>,
    n: usize,
    big: Vec<u64>,
}

/// Where a [`RankSink`] puts the steps.
enum Sink<'a> {
    /// Nowhere: they are counted.
    Count,
    /// In place, from the first of the block of ranks whose steps this slice holds.
    Write(&'a mut [Packed]),
    /// At the end.
    Push(&'a mut Vec<Packed>),
}

impl RankSink<'_> {
    /// Appends `step` to the rank's steps.
    #[inline]
    pub fn push(&mut self, step: Step) {
        match &mut self.to {
            Sink::Count => {}
            Sink::Write(out) => out[self.n] = Packed::of(step, &mut self.big),
            Sink::Push(out) => out.push(Packed::of(step, &mut self.big)),
        }
        self.n += 1;
    }
}

impl Packed {
    /// `step` as stored, its byte counts of [`BIG`] or more put in `big`.
    #[inline(always)]
    fn of(step: Step, big: &mut Vec<u64>) -> Packed {
        let mut bytes = |b: u64| match u32::try_from(b) {
            Ok(b) if b < BIG => b,
            _ => {
                big.push(b);
                BIG | u32::try_from(big.len() - 1).expect("under 2^31 large counts")
            }
        };
        match step {
            Step::Send { to, bytes: b } => Packed {
                to,
                from: NONE,
                send: bytes(b),
                recv: 0,
            },
            Step::Recv { from, bytes: b } => Packed {
                to: NONE,
                from,
                send: 0,
                recv: bytes(b),
            },
            Step::SendRecv {
                to,
                send_bytes,
                from,
                recv_bytes,
            } => Packed {
                to,
                from,
                send: bytes(send_bytes),
                recv: bytes(recv_bytes),
            },
            Step::Reduce { bytes: b } => Packed {
                to: NONE,
                from: NONE,
                send: bytes(b),
                recv: 0,
            },
        }
    }
}

/// A step as stored: 16 bytes where a [`Step`] takes 32 (a 65,536-rank recursive-doubling
/// Allreduce has 2 M steps). A half that is absent has peer [`NONE`]; a reduction has neither,
/// its bytes in `send`. A byte count under [`BIG`] is itself, else `BIG |` its place in
/// [`Schedule::big`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Packed {
    to: u32,
    from: u32,
    send: u32,
    recv: u32,
}

crate::memory::zeroable!(Packed {
    to: u32,
    from: u32,
    send: u32,
    recv: u32
});

/// The byte counts a step keeps in place are below this.
const BIG: u32 = 1 << 31;

/// No message on this half of a step.
pub const NONE: u32 = u32::MAX;

/// A schedule as its evaluation reads it: which message each step's send and receive halves
/// carry (ids index [`Matching::bytes`]), and the bytes of its reductions. 8 bytes a step and
/// 8 a message: a replay keeps this, not the schedule, for the collectives it costs again.
#[derive(Clone, Debug, Default)]
pub struct Matching {
    /// Where each rank's steps start in `ids`, and their total at the end.
    first: Vec<u32>,
    /// Per step, in rank then step order (or, where `by_step` says so, step then rank order):
    /// `(send message, receive message)`, [`NONE`] where the half is absent; a reduction's is
    /// `(NONE, REDUCTION | its place in reductions)`. Messages are numbered in rank and step
    /// order, or by [`Levels`] once leveled.
    ids: Vec<(u32, u32)>,
    /// The steps every rank has, where `ids` holds them step after step (rank `r`'s step `k` at
    /// `k · P + r`): a leveled schedule whose ranks all have as many steps, whose passes then
    /// read the steps they take one after the other, where by rank each would take a cache
    /// line (see the `mix` case of tests/bench/run.sh).
    by_step: Option<u32>,
    /// Bytes of each message.
    pub bytes: MessageBytes,
    /// Bytes of the reductions (consecutive equal ones share an entry).
    reductions: Vec<u64>,
    /// The order in which threads can share its evaluation, where [`Matching::leveled`] found
    /// one.
    pub levels: Option<Levels>,
}

/// The bytes of a matching's messages: one count for them all where they are the same (a
/// barrier's, a recursive-doubling Allreduce's: 8 bytes a message less, 38 MB for a barrier on
/// 262,144 ranks), else one a message.
#[derive(Clone, Debug, Default)]
pub struct MessageBytes {
    /// Each message's, or the one count of all at 0.
    each: Vec<u64>,
    /// Masks a message's id into `each`: 0 where one count stands for all (read without a
    /// branch, in the evaluation's inner loop).
    mask: u32,
    n: usize,
}

impl MessageBytes {
    /// Number of messages.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Message `id`'s bytes.
    #[inline(always)]
    pub fn get(&self, id: u32) -> u64 {
        self.each[(id & self.mask) as usize]
    }

    /// All the messages' bytes.
    pub fn total(&self) -> u64 {
        match self.mask {
            0 => self.each.first().map_or(0, |&b| b * self.n as u64),
            _ => self.each.iter().sum(),
        }
    }
}

/// The passes in which a matched schedule's steps can be costed by many threads at once. In
/// pass `l`, a run `(rank, end)` takes its rank's steps up to `end` (then calls the next):
/// what they wait for, their partners published in earlier passes. Pass 0 calls every rank's
/// first step. A send is taken to wait for its receive's call, as a rendezvous send does,
/// whatever its size: one order serves every model and eager limit.
#[derive(Clone, Debug, Default)]
pub struct Levels {
    /// Pass `l`'s runs are `runs[start[l]..start[l + 1]]`, by rank; `[(NONE, end)]` where every
    /// rank runs to `end`.
    start: Vec<u32>,
    runs: Vec<(u32, u32)>,
}

/// One pass of [`Levels`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pass<'a> {
    /// Every rank takes its steps up to this one: the rounds of a barrier or of a recursive
    /// doubling, kept without a run a rank (40 MB for a barrier on 262,144 ranks).
    Every(u32),
    /// `(rank, end)`, by rank.
    Runs(&'a [(u32, u32)]),
}

impl Levels {
    /// Each pass.
    pub fn passes(&self) -> impl Iterator<Item = Pass<'_>> {
        self.start
            .windows(2)
            .map(|w| match &self.runs[w[0] as usize..w[1] as usize] {
                &[(NONE, end)] => Pass::Every(end),
                runs => Pass::Runs(runs),
            })
    }
}

/// Steps of every rank that [`Matching::held_by_step`] moves at a time, reading each rank's
/// steps of the tile together.
const TILE: usize = 8;

/// Ranks ahead that finding and numbering passes fetch the step of: each rank's steps lie a
/// cache line or more from the next one's.
const AHEAD: usize = 16;

/// Looks at ranks that cannot go on that [`Matching::leveled`] takes whatever the steps.
const IDLE_LOOKS: usize = 1 << 16;

/// Marks a reduction in [`Matching`]'s ids; messages are numbered below it.
pub const REDUCTION: u32 = 1 << 31;

impl Matching {
    /// `(send message, receive message)` of each of rank `r`'s steps, held by rank (not yet
    /// leveled).
    fn ids(&self, r: usize) -> &[(u32, u32)] {
        debug_assert!(self.by_step.is_none(), "steps held by rank");
        &self.ids[self.first[r] as usize..self.first[r + 1] as usize]
    }

    /// `(send message, receive message)` of rank `r`'s step `k`, if it has one.
    #[inline(always)]
    pub fn step(&self, r: usize, k: usize) -> Option<(u32, u32)> {
        match self.by_step {
            Some(steps) => (k < steps as usize).then(|| self.ids[k * self.ranks() + r]),
            None => self.ids(r).get(k).copied(),
        }
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.first.len() - 1
    }

    /// Has the core fetch rank `r`'s step `pos` (any `pos`: nothing is read).
    #[inline(always)]
    pub fn prefetch(&self, r: usize, pos: usize) {
        if self.by_step.is_some() {
            // Taken step after step: the core fetches them ahead itself.
            return;
        }
        let at = self.ids.as_ptr().wrapping_add(self.first[r] as usize + pos);
        crate::memory::prefetch_ptr(at.cast());
    }

    /// The first message rank `r` sends, or any rank after it (messages are numbered in rank
    /// and step order: the messages ranks `a..b` send are `first_message(a)..first_message(b)`;
    /// not so once leveled).
    pub fn first_message(&self, r: usize) -> u32 {
        debug_assert!(self.by_step.is_none(), "steps held by rank");
        let after = &self.ids[self.first[r] as usize..];
        after
            .iter()
            .find(|h| h.0 != NONE)
            .map_or(self.bytes.len() as u32, |h| h.0)
    }

    /// The messages rank `r` sends before it has received any (at its steps up to and with
    /// the first that receives): those of its own data, read from its send buffer, where a
    /// later one may forward what it received (the model's §13, a collective's `clean` sends);
    /// each with whether its step receives too (an exchange, not a message one way).
    pub fn own_sends(&self, r: usize) -> impl Iterator<Item = (u32, bool)> + '_ {
        let mut received = false;
        (0..)
            .map_while(move |k| self.step(r, k))
            .map_while(move |h| {
                let (sid, rid, _) = self.halves(h);
                let before = !received;
                received |= rid != NONE;
                before.then_some((sid, rid != NONE))
            })
            .filter(|&(sid, _)| sid != NONE)
    }

    /// Each message's `(sender, receiver)`, by its id.
    pub fn ends(&self) -> Vec<(u32, u32)> {
        let mut ends = vec![(NONE, NONE); self.bytes.len()];
        for r in 0..self.ranks() {
            let mut k = 0;
            while let Some(h) = self.step(r, k) {
                let (sid, rid, _) = self.halves(h);
                if sid != NONE {
                    ends[sid as usize].0 = r as u32;
                }
                if rid != NONE {
                    ends[rid as usize].1 = r as u32;
                }
                k += 1;
            }
        }
        ends
    }

    /// Number of steps over all ranks.
    pub fn steps(&self) -> usize {
        self.ids.len()
    }

    /// Whether no rank has more than 4 times the mean number of steps: a schedule whose ranks
    /// move together, each in most passes (recursive doubling, rings), not a tree whose passes
    /// narrow to a few ranks near its root.
    pub fn even(&self) -> bool {
        let p = self.ranks();
        (0..p).all(|r| p * self.ids(r).len() <= 4 * self.steps())
    }

    /// This matching with its [`Levels`] where its passes hold `min_width` runs or more on
    /// average (a narrow pass gives threads little to share), no step waits, even rendezvous,
    /// on one after it, and finding them looks at ranks that cannot go on no more often than
    /// the steps or `IDLE_LOOKS` times (a pipeline whose ranks wait in most passes).
    pub fn leveled(self, min_width: usize) -> Matching {
        let levels = self.levels(min_width, self.steps().max(IDLE_LOOKS));
        self.numbered_by(levels)
    }

    /// [`Matching::leveled`] whatever the looks.
    #[cfg(test)]
    pub fn leveled_at_any_cost(self) -> Matching {
        let levels = self.levels(0, usize::MAX);
        self.numbered_by(levels)
    }

    /// This matching with `levels`, its messages numbered again in the order the passes call
    /// their send halves (by pass, rank and step), where they were in rank and step order: a
    /// pass then writes and reads the evaluation's arrays message after message, where a
    /// barrier's would take a cache line a message (by rank, the messages of one round lie 18 apart
    /// on 262,144 ranks).
    fn numbered_by(mut self, levels: Option<Levels>) -> Matching {
        let Some(levels) = levels else {
            return self;
        };
        let (p, n) = (self.ranks(), self.bytes.len());
        let mut new = vec![NONE; n];
        let (mut next, mut called) = (0u32, vec![0u32; p]);
        // Calls rank `r`'s steps up to `end`, fetching ahead the next step of rank `ahead`.
        let mut call = |r: usize, end: u32, ahead: Option<usize>| {
            if let Some(a) = ahead.filter(|&a| a < p) {
                self.prefetch(a, called[a] as usize);
            }
            let ids = self.ids(r);
            let to = (end as usize + 1).min(ids.len());
            for &(sid, _) in ids.get(called[r] as usize..to).unwrap_or_default() {
                if sid != NONE {
                    new[sid as usize] = next;
                    next += 1;
                }
            }
            called[r] = called[r].max(to as u32);
        };
        for pass in levels.passes() {
            match pass {
                Pass::Every(end) => (0..p).for_each(|r| call(r, end, Some(r + AHEAD))),
                Pass::Runs(runs) => runs.iter().enumerate().for_each(|(k, &(r, end))| {
                    call(r as usize, end, runs.get(k + AHEAD).map(|x| x.0 as usize))
                }),
            }
        }
        debug_assert_eq!(next as usize, n, "every send called once");
        self.ids.par_iter_mut().for_each(|(sid, rid)| {
            if *sid != NONE {
                *sid = new[*sid as usize];
            }
            if *rid != NONE && *rid < REDUCTION {
                *rid = new[*rid as usize];
            }
        });
        if self.bytes.mask != 0 {
            let mut each = vec![0; n];
            for (old, &b) in self.bytes.each.iter().enumerate() {
                each[new[old] as usize] = b;
            }
            self.bytes.each = each;
        }
        self.levels = Some(levels);
        self.held_by_step()
    }

    /// This matching with its steps held step after step where every rank has as many (see
    /// `by_step`), transposed in tiles of [`TILE`] steps of every rank on the pool's threads: a
    /// rank's steps in a tile lie together.
    fn held_by_step(mut self) -> Matching {
        let p = self.ranks();
        let steps = self.ids.len() / p.max(1);
        if p < 2 || steps < 2 || !(0..p).all(|r| self.ids(r).len() == steps) {
            return self;
        }
        let Ok(by_step) = u32::try_from(steps) else {
            return self;
        };
        // Every place written below, in zeroed memory the threads touch first.
        let mut t = vec![(0, 0); self.ids.len()];
        t.par_chunks_mut(TILE * p)
            .enumerate()
            .for_each(|(j, rows)| {
                let k0 = j * TILE;
                for r in 0..p {
                    let mine = &self.ids[r * steps + k0..][..rows.len() / p];
                    for (kk, &h) in mine.iter().enumerate() {
                        rows[kk * p + r] = h;
                    }
                }
            });
        self.ids = t;
        self.by_step = Some(by_step);
        self
    }

    /// Each step's pass: the latest of its rank's step before it and one past the passes in
    /// which its message's other half was called. Found pass by pass, each on the pool's
    /// threads: in pass `l` every rank not done goes on while the halves its step waits for
    /// were called in passes before `l`, and calls its next step in `l` (a call made in `l` by
    /// another thread reads as not yet made, whichever thread is first: the passes do not
    /// depend on the threads). None also after `max_idle` looks at ranks that cannot go on.
    fn levels(&self, min_width: usize, max_idle: usize) -> Option<Levels> {
        let (p, n, steps) = (self.ranks(), self.bytes.len(), self.steps());
        let unknown = || (0..n).map(|_| AtomicU32::new(NONE)).collect::<Vec<_>>();
        // The pass in which each message's send half was called, and its receive half.
        let (sent, received) = (unknown(), unknown());
        let call = |r: usize, k: usize, l: u32| {
            if let Some(&ids) = self.ids(r).get(k) {
                let (sid, rid, _) = self.halves(ids);
                for (id, at) in [(sid, &sent), (rid, &received)] {
                    if id != NONE {
                        at[id as usize].store(l, Relaxed);
                    }
                }
            }
        };
        // Whether a step can complete in pass `l`: a send waits for its receive's call, a
        // receive for its send's.
        let ready = |ids: (u32, u32), l: u32| {
            let (sid, rid, _) = self.halves(ids);
            [(sid, &received), (rid, &sent)]
                .into_iter()
                .all(|(id, other)| id == NONE || other[id as usize].load(Relaxed) < l)
        };
        (0..p).into_par_iter().for_each(|r| call(r, 0, 0));
        let mut start = vec![0, 1];
        // At most a run a step after pass 0's: reserved, as a vector grown by doubling would
        // hold both its copies at once (pages never written take no memory).
        let mut runs: Vec<(u32, u32)> = Vec::with_capacity(1 + steps);
        runs.push((NONE, 0));
        // The ranks not done: each with its next step before this pass and after.
        let mut active: Vec<(u32, u32, u32)> = (0..p as u32)
            .filter(|&r| !self.ids(r as usize).is_empty())
            .map(|r| (r, 0, 0))
            .collect();
        let (mut l, mut idle) = (0u32, 0usize);
        while !active.is_empty() {
            l += 1;
            if steps < min_width.saturating_mul(l as usize) || idle > max_idle {
                return None;
            }
            active.par_chunks_mut(256).for_each(|ranks| {
                for i in 0..ranks.len() {
                    if let Some(&(a, _, at)) = ranks.get(i + AHEAD) {
                        self.prefetch(a as usize, at as usize);
                    }
                    let (r, _, k) = &mut ranks[i];
                    let ids = self.ids(*r as usize);
                    while (*k as usize) < ids.len() && ready(ids[*k as usize], l) {
                        *k += 1;
                        call(*r as usize, *k as usize, l);
                    }
                }
            });
            let (before, mut kept) = (runs.len(), 0);
            let end = active[0].2;
            let every = active.len() == p && active.iter().all(|&(_, k0, k)| k0 < k && k == end);
            if every {
                runs.push((NONE, end));
            }
            for i in 0..active.len() {
                let (r, k0, k) = active[i];
                match k > k0 {
                    true if !every => runs.push((r, k)),
                    true => {}
                    false => idle += 1,
                }
                if (k as usize) < self.ids(r as usize).len() {
                    active[kept] = (r, k, k);
                    kept += 1;
                }
            }
            active.truncate(kept);
            if runs.len() == before {
                return None;
            }
            start.push(runs.len() as u32);
        }
        runs.shrink_to_fit();
        Some(Levels { start, runs })
    }

    /// A step's `(send message, receive message, reduction bytes)` from its ids: a reduction
    /// has no halves, its bytes named where a receive's message is.
    #[inline(always)]
    pub fn halves(&self, (sid, rid): (u32, u32)) -> (u32, u32, Option<u64>) {
        match rid {
            NONE => (sid, NONE, None),
            id if id >= REDUCTION => (sid, NONE, Some(self.reduction(id))),
            id => (sid, id, None),
        }
    }

    /// The bytes of the reduction whose ids are `(NONE, id)`.
    #[inline]
    pub fn reduction(&self, id: u32) -> u64 {
        self.reductions[(id & !REDUCTION) as usize]
    }
}

impl Schedule {
    /// The schedule of these steps.
    pub fn from_steps(ranks: Vec<Vec<Step>>) -> Schedule {
        let mut log = Log::with_capacity(ranks.len(), ranks.iter().map(Vec::len).sum());
        for (r, steps) in ranks.into_iter().enumerate() {
            for step in steps {
                log.push(r, step);
            }
        }
        log.finish()
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.first.len() - 1
    }

    /// Rank `r`'s steps as stored.
    fn of(&self, r: usize) -> &[Packed] {
        &self.steps[self.first[r]..self.first[r + 1]]
    }

    /// Number of rank `r`'s steps.
    pub fn len(&self, r: usize) -> usize {
        self.of(r).len()
    }

    /// Rank `r`'s step `i`.
    #[inline]
    pub fn step(&self, r: usize, i: usize) -> Step {
        let p = self.of(r)[i];
        let bytes = |b| self.bytes(b);
        match (p.to, p.from) {
            (NONE, NONE) => Step::Reduce {
                bytes: bytes(p.send),
            },
            (to, NONE) => Step::Send {
                to,
                bytes: bytes(p.send),
            },
            (NONE, from) => Step::Recv {
                from,
                bytes: bytes(p.recv),
            },
            (to, from) => Step::SendRecv {
                to,
                send_bytes: bytes(p.send),
                from,
                recv_bytes: bytes(p.recv),
            },
        }
    }

    /// Rank `r`'s steps in order.
    pub fn steps_of(&self, r: usize) -> impl Iterator<Item = Step> + '_ {
        (0..self.len(r)).map(move |i| self.step(r, i))
    }

    /// Number of steps over all ranks.
    pub fn steps(&self) -> usize {
        self.steps.len()
    }

    /// Whether every message goes between neighbouring ranks, `r` and `r ± 1` modulo P: a
    /// ring's or a chain's.
    pub fn neighbours_only(&self) -> bool {
        let p = self.ranks();
        let near = |r: usize, peer: u32| {
            let peer = peer as usize;
            peer == NONE as usize || peer == (r + 1) % p || (peer + 1) % p == r
        };
        (0..p)
            .into_par_iter()
            .all(|r| self.of(r).iter().all(|s| near(r, s.to) && near(r, s.from)))
    }

    /// The same messages flowing the other way, each rank's steps in reverse order: a scatter
    /// tree becomes a gather tree, a broadcast tree a reduction tree without the reductions.
    pub fn reversed(mut self) -> Schedule {
        for r in 0..self.ranks() {
            self.steps[self.first[r]..self.first[r + 1]].reverse();
        }
        for s in &mut self.steps {
            // A reduction's bytes stay where they are.
            if (s.to, s.from) != (NONE, NONE) {
                *s = Packed {
                    to: s.from,
                    from: s.to,
                    send: s.recv,
                    recv: s.send,
                };
            }
        }
        self
    }

    /// Pairs every send with its receive by order per (sender, receiver); an unmatched half,
    /// a peer out of range or a size mismatch is an error naming the rank and step (the first
    /// such receive in rank and step order; else the first pair, in rank order, with sends
    /// never received). Messages are numbered in rank and step order. Each sender's sends are
    /// sorted by receiver; each receiver's receives, sorted by sender, take the sends to it in
    /// their sender's list in order: no table of queues, no sort of all the messages, and the
    /// ranks in blocks on the pool's threads, each writing its own steps' ids.
    pub fn matching(&self) -> Result<Matching, Error> {
        let (p, n) = (self.ranks(), self.steps());
        if u32::try_from(n).is_err() {
            return Err(Error::Usage(format!("schedule: {n} steps, more than 2^32")));
        }
        let first: Vec<u32> = self.first.iter().map(|&f| f as u32).collect();
        let blocks = block_ends(p);
        // Rank r's sends are messages sent_before[r]..sent_before[r + 1].
        let sent_before = starts(
            (0..p)
                .into_par_iter()
                .map(|r| self.of(r).iter().filter(|s| s.to != NONE).count())
                .collect::<Vec<_>>(),
        );
        let messages = sent_before[p];
        if messages >= REDUCTION as usize {
            return Err(Error::Usage(format!(
                "schedule: {messages} messages, more than 2^31"
            )));
        }
        // Every step's ids written on the threads below, in zeroed memory whose pages the
        // thread that writes them first touches, where setting them all to `NONE` first would
        // take one thread (see the `mix` case of tests/bench/run.sh).
        let mut ids = vec![(0, 0); n];
        // Per sender, `(receiver, message)` sorted by receiver.
        let mut sends = vec![(0u32, 0u32); messages];
        let step_ends = || blocks.iter().map(|&(_, hi)| self.first[hi]);
        let bad_send = cut(&mut ids, step_ends())
            .into_par_iter()
            .zip(cut(
                &mut sends,
                blocks.iter().map(|&(_, hi)| sent_before[hi]),
            ))
            .zip(&blocks)
            .map(|((ids, sends), &block)| self.number_sends(block, &sent_before, ids, sends))
            .collect::<Vec<_>>();
        if let Some((r, i, to)) = bad_send.into_iter().flatten().next() {
            return Err(bad(r, i, format!("sends to rank {to} (P = {p})")));
        }
        let bytes = self.message_bytes(&sent_before, &blocks);
        let reductions = self.reductions(&mut ids)?;
        // Each receive's message: `(first bad receive, its complaint)` and the receives
        // matched, per block.
        let received = cut(&mut ids, step_ends())
            .into_par_iter()
            .zip(&blocks)
            .map(|(ids, &block)| self.receive_block(block, &sent_before, &sends, &bytes, ids))
            .collect::<Vec<_>>();
        let matched: usize = received.iter().map(|b| b.1).sum();
        if let Some((r, i, what)) = received.into_iter().find_map(|b| b.0) {
            return Err(bad(r, i, what));
        }
        if matched < messages {
            return Err(self.unreceived(&sends, &sent_before));
        }
        Ok(Matching {
            first,
            ids,
            bytes,
            reductions,
            levels: None,
            by_step: None,
        })
    }

    /// Numbers the sends of the ranks `lo..hi` of one block, in rank and step order, into
    /// their steps' `ids` and `sends` (per sender sorted by receiver); the first send to a
    /// rank out of range or to itself, as `(rank, step, peer)`, for the caller's error.
    fn number_sends(
        &self,
        (lo, hi): (usize, usize),
        sent_before: &[usize],
        ids: &mut [(u32, u32)],
        sends: &mut [(u32, u32)],
    ) -> Option<(usize, usize, u32)> {
        let p = self.ranks();
        let (mut k, mut bad) = (0, None);
        for r in lo..hi {
            let (base, mine) = (self.first[r] - self.first[lo], k);
            for (i, s) in self.of(r).iter().enumerate() {
                ids[base + i] = (NONE, NONE);
                if s.to == NONE {
                    continue;
                }
                if s.to as usize >= p || s.to as usize == r {
                    bad = bad.or(Some((r, i, s.to)));
                }
                let id = (sent_before[lo] + k) as u32;
                ids[base + i].0 = id;
                sends[k] = (s.to, id);
                k += 1;
            }
            sort_runs(&mut sends[mine..k]);
        }
        bad
    }

    /// Matches the receives of the ranks `lo..hi` of one block with the `sends` to them, in
    /// order per sender, writing each receive's message into `ids`: the first bad receive with
    /// its complaint, and how many receives matched.
    fn receive_block(
        &self,
        (lo, hi): (usize, usize),
        sent_before: &[usize],
        sends: &[(u32, u32)],
        bytes: &MessageBytes,
        ids: &mut [(u32, u32)],
    ) -> (Option<(usize, usize, String)>, usize) {
        let p = self.ranks();
        let (mut from, mut matched) = (Vec::new(), 0usize);
        let mut bad: Option<(usize, usize, String)> = None;
        let mut note = |r: usize, i: usize, what: String| {
            if bad.as_ref().is_none_or(|b| (r, i) < (b.0, b.1)) {
                bad = Some((r, i, what));
            }
        };
        for r in lo..hi {
            let base = self.first[r] - self.first[lo];
            from.clear();
            from.extend(
                (self.of(r).iter().enumerate())
                    .filter(|(_, s)| s.from != NONE)
                    .map(|(i, s)| (s.from, i as u32)),
            );
            sort_runs(&mut from);
            for group in from.chunk_by(|x, y| x.0 == y.0) {
                let a = group[0].0 as usize;
                let theirs = match a < p {
                    true => &sends[sent_before[a]..sent_before[a + 1]],
                    false => &[][..],
                };
                let to_me = &theirs[first_to(theirs, r as u32, p)..];
                let to_me = &to_me[..to_me.iter().take_while(|s| s.0 as usize == r).count()];
                for (k, &(_, i)) in group.iter().enumerate() {
                    let i = i as usize;
                    let Some(&(_, id)) = to_me.get(k) else {
                        note(
                            r,
                            i,
                            format!("receives from rank {a}, which sends no matching message"),
                        );
                        continue;
                    };
                    let (got, sent) = (self.bytes(self.of(r)[i].recv), bytes.get(id));
                    if got != sent {
                        note(
                            r,
                            i,
                            format!("receives {got} bytes from rank {a}, which sends {sent}"),
                        );
                    }
                    ids[base + i].1 = id;
                    matched += 1;
                }
            }
        }
        (bad, matched)
    }

    /// The bytes of the messages rank `r` sends from `sent_before[r]` on, found by the
    /// `blocks` of ranks on the pool's threads.
    fn message_bytes(&self, sent_before: &[usize], blocks: &[(usize, usize)]) -> MessageBytes {
        let sent = |r: usize| {
            (self.of(r).iter())
                .filter(|s| s.to != NONE)
                .map(|s| self.bytes(s.send))
        };
        let Some(b) = (0..self.ranks()).find_map(|r| sent(r).next()) else {
            return MessageBytes::default();
        };
        let n = sent_before[self.ranks()];
        if (0..self.ranks())
            .into_par_iter()
            .all(|r| sent(r).all(|x| x == b))
        {
            return MessageBytes {
                each: vec![b],
                mask: 0,
                n,
            };
        }
        let mut each = vec![0; n];
        cut(&mut each, blocks.iter().map(|&(_, hi)| sent_before[hi]))
            .into_par_iter()
            .zip(blocks)
            .for_each(|(each, &(lo, hi))| {
                for (x, b) in each.iter_mut().zip((lo..hi).flat_map(sent)) {
                    *x = b;
                }
            });
        MessageBytes {
            each,
            mask: u32::MAX,
            n,
        }
    }

    /// The bytes of the reductions, consecutive equal ones sharing an entry, each named in
    /// `ids` where a receive's message is.
    fn reductions(&self, ids: &mut [(u32, u32)]) -> Result<Vec<u64>, Error> {
        let mut reductions = Vec::new();
        for r in 0..self.ranks() {
            for (i, s) in self.of(r).iter().enumerate() {
                if (s.to, s.from) != (NONE, NONE) {
                    continue;
                }
                let bytes = self.bytes(s.send);
                if reductions.last() != Some(&bytes) {
                    reductions.push(bytes);
                }
                let k = reductions.len() - 1;
                if k as u32 >= REDUCTION {
                    return Err(bad(r, i, "more than 2^31 reductions".into()));
                }
                ids[self.first[r] + i].1 = REDUCTION | k as u32;
            }
        }
        Ok(reductions)
    }

    /// The first pair, in rank order, with sends never received, where fewer receives than
    /// sends matched.
    fn unreceived(&self, sends: &[(u32, u32)], sent_before: &[usize]) -> Error {
        for a in 0..self.ranks() {
            let theirs = &sends[sent_before[a]..sent_before[a + 1]];
            for group in theirs.chunk_by(|x, y| x.0 == y.0) {
                let to = group[0].0;
                let got = self
                    .of(to as usize)
                    .iter()
                    .filter(|s| s.from == a as u32)
                    .count();
                if group.len() > got {
                    return Error::Usage(format!(
                        "schedule: rank {a} sends {} message(s) to rank {to} that are never received",
                        group.len() - got
                    ));
                }
            }
        }
        unreachable!("fewer receives matched than sends, yet every pair received all")
    }

    /// A byte count as a step keeps it.
    #[inline]
    fn bytes(&self, b: u32) -> u64 {
        match b {
            b if b < BIG => b as u64,
            b => self.big[(b & !BIG) as usize],
        }
    }
}

/// The ranks `0..p` in blocks `(first, end)` for the pool's threads: 4 a thread, of 1,024 ranks
/// or more.
fn block_ends(p: usize) -> Vec<(usize, usize)> {
    let size = p.div_ceil(4 * rayon::current_num_threads()).max(1024);
    (0..p)
        .step_by(size)
        .map(|lo| (lo, (lo + size).min(p)))
        .collect()
}

/// Where each of the parts counted in `counts` starts when they are put one after the other,
/// and their total at the end.
fn starts(counts: impl IntoIterator<Item = usize>) -> Vec<usize> {
    let counts = counts.into_iter();
    let mut at = Vec::with_capacity(counts.size_hint().0 + 1);
    at.push(0);
    at.extend(counts.scan(0, |sum, n| {
        *sum += n;
        Some(*sum)
    }));
    at
}

/// Sorts `v`, in linear time where it is a sorted run turned at one place (a pairwise
/// exchange's peers: `r + 1, r + 2, …` modulo P), or such a run reversed (`r − 1, r − 2, …`),
/// sorted as it is included: sorting them would take O(P log P) a rank, most of matching a
/// pairwise all-to-all.
fn sort_runs(v: &mut [(u32, u32)]) {
    // Where a sorted run turned at one place turns, if `v` is one.
    let turn = |v: &[(u32, u32)]| {
        let mut at = None;
        for i in 1..v.len() {
            if v[i - 1] > v[i] {
                if at.is_some() {
                    return None;
                }
                at = Some(i);
            }
        }
        match at {
            None => Some(0),
            Some(i) if v[v.len() - 1] <= v[0] => Some(i),
            Some(_) => None,
        }
    };
    if let Some(i) = turn(v) {
        return v.rotate_left(i);
    }
    v.reverse();
    match turn(v) {
        Some(i) => v.rotate_left(i),
        None => v.sort_unstable(),
    }
}

/// Where the sends to rank `r` start in a sender's `(receiver, message)` list, sorted by
/// receiver, of receivers under `p`: looked for where `r` would be among ranks spread evenly,
/// then galloping from there. A sender to every rank (a pairwise all-to-all's) has them at
/// that place, where a binary search would load a dozen cache lines (see the `a2a` and `mix`
/// cases of tests/bench/run.sh).
fn first_to(theirs: &[(u32, u32)], r: u32, p: usize) -> usize {
    let n = theirs.len();
    let below = |i: usize| theirs[i].0 < r;
    let guess = (n as u64 * u64::from(r) / p as u64) as usize;
    let (lo, hi) = if guess == n {
        (0, n)
    } else if below(guess) {
        // All before `lo` are below `r`.
        let (mut lo, mut step) = (guess + 1, 1);
        while lo + step <= n && below(lo + step - 1) {
            lo += step;
            step *= 2;
        }
        (lo, (lo + step - 1).min(n))
    } else {
        // The one at `hi` is not.
        let (mut hi, mut step) = (guess, 1);
        while hi >= step && !below(hi - step) {
            hi -= step;
            step *= 2;
        }
        ((hi + 1).saturating_sub(step), hi)
    };
    lo + theirs[lo..hi].partition_point(|s| s.0 < r)
}

/// `v` cut before each of `ends` (increasing, none past `v.len()`): a slice each, what is
/// after the last left out.
pub(super) fn cut<T>(mut v: &mut [T], ends: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let (mut out, mut at) = (Vec::new(), 0);
    for end in ends {
        let (mine, rest) = std::mem::take(&mut v).split_at_mut(end - at);
        out.push(mine);
        (v, at) = (rest, end);
    }
    out
}

fn bad(r: usize, i: usize, what: String) -> Error {
    Error::Usage(format!("schedule: rank {r}, step {i}: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(to: u32, bytes: u64) -> Step {
        Step::Send { to, bytes }
    }

    fn recv(from: u32, bytes: u64) -> Step {
        Step::Recv { from, bytes }
    }

    fn err(ranks: Vec<Vec<Step>>) -> String {
        Schedule::from_steps(ranks)
            .matching()
            .unwrap_err()
            .to_string()
    }

    /// A chain 0 → 1 → 2 (rank 1 reduces between): pass 0 calls every first step; rank 0's
    /// send and rank 1's receive wait only for those calls (pass 1), and rank 1 goes on with
    /// its reduction and its send (whose receive was called in pass 0) in the same run; rank
    /// 2's receive waits for that send's call, made in pass 1.
    #[test]
    fn levels_of_a_chain_by_hand() {
        let reduce = Step::Reduce { bytes: 8 };
        let s = Schedule::from_steps(vec![
            vec![send(1, 8)],
            vec![recv(0, 8), reduce, send(2, 8)],
            vec![recv(1, 8)],
        ]);
        let m = s.matching().unwrap().leveled(0);
        let passes: Vec<Pass> = m.levels.as_ref().unwrap().passes().collect();
        assert_eq!(
            passes,
            [
                Pass::Every(0),
                Pass::Runs(&[(0, 1), (1, 3)]),
                Pass::Runs(&[(2, 1)])
            ]
        );
        // Passes under two runs on average are not worth sharing.
        assert!(s.matching().unwrap().leveled(3).levels.is_none());
        // Two ranks that each send before receiving deadlock once sends wait for their
        // receives: no passes.
        let both_send_first = Schedule::from_steps(vec![
            vec![send(1, 8), recv(1, 8)],
            vec![send(0, 8), recv(0, 8)],
        ]);
        assert!(
            both_send_first
                .matching()
                .unwrap()
                .leveled(0)
                .levels
                .is_none()
        );
    }

    /// Three ranks, each exchanging with the next then reducing, twice: every rank runs to its
    /// second step in pass 1 and its fourth in pass 2, passes kept without a run a rank, its
    /// messages numbered by pass. One
    /// rank more, receiving what rank 0 sends last (called in pass 2, its receive in pass 0),
    /// makes them lists: it sits out passes 1 and 2 and receives in pass 3.
    #[test]
    fn passes_where_every_rank_moves_alike_take_no_list() {
        let round = |r: u32, p: u32| {
            let sr = Step::SendRecv {
                to: (r + 1) % p,
                send_bytes: 8,
                from: (r + p - 1) % p,
                recv_bytes: 8,
            };
            [sr, Step::Reduce { bytes: 8 }]
        };
        let lockstep = Schedule::from_steps(
            (0..3)
                .map(|r| [round(r, 3), round(r, 3)].concat())
                .collect(),
        );
        let m = lockstep.matching().unwrap();
        // By rank, rank 0 sends messages 0 and 1, rank 1 2 and 3, rank 2 4 and 5.
        assert_eq!(
            (m.ids(0)[0], m.ids(0)[2], m.ids(1)[2]),
            ((0, 4), (1, 5), (3, 1))
        );
        let m = m.leveled(0);
        let passes: Vec<Pass> = m.levels.as_ref().unwrap().passes().collect();
        assert_eq!(passes, [Pass::Every(0), Pass::Every(2), Pass::Every(4)]);
        // By pass: pass 0 calls every rank's first exchange (messages 0, 1, 2), pass 1 their
        // second (3, 4, 5); every rank has 4 steps: held step after step, a rank's step k at
        // 3k + r.
        let at = |r, k| m.step(r, k).unwrap();
        assert_eq!((at(0, 0), at(0, 2), at(1, 2)), ((0, 2), (3, 5), (4, 3)));
        assert_eq!(m.by_step, Some(4));
        assert_eq!(m.ids[..3], [(0, 2), (1, 0), (2, 1)]);
        assert_eq!(m.ids[6..9], [(3, 5), (4, 3), (5, 4)]);
        assert_eq!(
            (m.step(2, 3), m.step(2, 4)),
            (Some((NONE, REDUCTION)), None)
        );
        let mut ranks: Vec<Vec<Step>> = (0..3)
            .map(|r| [round(r, 3), round(r, 3)].concat())
            .collect();
        ranks[0].push(send(3, 8));
        ranks.push(vec![recv(0, 8)]);
        let levels = Schedule::from_steps(ranks)
            .matching()
            .unwrap()
            .leveled(0)
            .levels
            .unwrap();
        let passes: Vec<Pass> = levels.passes().collect();
        assert_eq!(
            passes,
            [
                Pass::Every(0),
                Pass::Runs(&[(0, 2), (1, 2), (2, 2)]),
                Pass::Runs(&[(0, 5), (1, 4), (2, 4)]),
                Pass::Runs(&[(3, 1)])
            ]
        );
    }

    /// A chain of `p` ranks each passing one message on: rank `l` receives in pass `l` (with
    /// rank 0 in pass 1) while the ranks after it wait, looked at in vain (p - 2) + (p - 3) +
    /// ... + 1 = (p - 2)(p - 1) / 2 times before the last pass: 65,341 for 363 ranks, 65,703
    /// for 364, over [`IDLE_LOOKS`] (2^16 = 65,536) and the 726 steps.
    #[test]
    fn a_chain_is_leveled_until_its_waiting_ranks_cost_more_than_its_steps() {
        let chain = |p: u32| {
            let s = Schedule::from_steps(
                (0..p)
                    .map(|r| match r {
                        0 => vec![send(1, 8)],
                        r if r == p - 1 => vec![recv(r - 1, 8)],
                        r => vec![recv(r - 1, 8), send(r + 1, 8)],
                    })
                    .collect(),
            );
            s.matching().unwrap()
        };
        let passes = |m: Matching| m.levels.map(|l| l.passes().count());
        assert_eq!(passes(chain(363).leveled(0)), Some(363));
        assert_eq!(passes(chain(364).leveled(0)), None);
        assert_eq!(passes(chain(364).leveled_at_any_cost()), Some(364));
    }

    /// A ring of 3,000 ranks, each sending rank r + 1 8 bytes then receiving from r - 1, in
    /// blocks of 1,024 ranks on 3 threads: the first bad receive in rank order is named
    /// whichever block finds it, then a send never received.
    #[test]
    fn the_first_bad_receive_is_named_whatever_block_finds_it() {
        let p = 3000u32;
        let ring = |change: &dyn Fn(u32) -> Option<Vec<Step>>| {
            let ranks = (0..p).map(|r| {
                change(r).unwrap_or_else(|| vec![send((r + 1) % p, 8), recv((r + p - 1) % p, 8)])
            });
            let s = Schedule::from_steps(ranks.collect());
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(3)
                .build()
                .unwrap();
            pool.install(|| s.matching().map(|_| ()).map_err(|e| e.to_string()))
        };
        let wrong = |r| match r {
            1500 => Some(vec![send(1501, 8), recv(7, 8)]),
            2500 => Some(vec![send(2501, 8), recv(2499, 9)]),
            _ => None,
        };
        assert_eq!(
            ring(&wrong),
            Err("schedule: rank 1500, step 1: receives from rank 7, which sends no matching message".into())
        );
        assert_eq!(
            ring(&|r| wrong(r).filter(|_| r == 2500)),
            Err(
                "schedule: rank 2500, step 1: receives 9 bytes from rank 2499, which sends 8"
                    .into()
            )
        );
        assert_eq!(
            ring(&|r| (r == 1500).then(|| vec![send(1501, 8)])),
            Err(
                "schedule: rank 1499 sends 1 message(s) to rank 1500 that are never received"
                    .into()
            )
        );
        assert_eq!(ring(&|_| None), Ok(()));
    }

    #[test]
    fn the_nth_send_of_a_pair_meets_its_nth_receive() {
        // Rank 0 sends 10 then 20 bytes to rank 1, which receives them between an exchange
        // with rank 2; rank 2 sends rank 1 5 bytes.
        let m = Schedule::from_steps(vec![
            vec![send(1, 10), send(1, 20)],
            vec![
                recv(0, 10),
                Step::SendRecv {
                    to: 2,
                    send_bytes: 7,
                    from: 2,
                    recv_bytes: 5,
                },
                recv(0, 20),
            ],
            vec![Step::SendRecv {
                to: 1,
                send_bytes: 5,
                from: 1,
                recv_bytes: 7,
            }],
        ])
        .matching()
        .unwrap();
        // Messages are numbered in rank and step order: 0→1 (10), 0→1 (20), 1→2 (7), 2→1 (5).
        assert_eq!(
            (0..4).map(|id| m.bytes.get(id)).collect::<Vec<_>>(),
            [10, 20, 7, 5]
        );
        assert_eq!((m.bytes.len(), m.bytes.total()), (4, 42));
        assert_eq!(m.ids(0), [(0, NONE), (1, NONE)]);
        assert_eq!(m.ids(1), [(NONE, 0), (2, 3), (NONE, 1)]);
        assert_eq!(m.ids(2), [(3, 2)]);
    }

    /// A ring of 3,000 ranks (blocks of 1,024 on 3 threads) whose messages all carry 8 bytes
    /// keeps one count; where rank 2000 sends 5, one a message.
    #[test]
    fn message_bytes_are_one_count_unless_one_differs() {
        let p = 3000u32;
        let ring = |odd: u64| {
            let bytes = |r| if r == 2000 { odd } else { 8 };
            let ranks = (0..p).map(|r| {
                vec![
                    send((r + 1) % p, bytes(r)),
                    recv((r + p - 1) % p, bytes((r + p - 1) % p)),
                ]
            });
            let s = Schedule::from_steps(ranks.collect());
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(3)
                .build()
                .unwrap();
            pool.install(|| s.matching()).unwrap().bytes
        };
        let same = ring(8);
        assert_eq!(same.each, [8]);
        assert_eq!((same.len(), same.get(2999), same.total()), (3000, 8, 24000));
        let one_odd = ring(5);
        assert_eq!(one_odd.each.len(), 3000);
        let all: Vec<u64> = (0..3000).map(|id| one_odd.get(id)).collect();
        assert_eq!((all[1999], all[2000], all[2001]), (8, 5, 8));
        assert_eq!((one_odd.len(), one_odd.total()), (3000, 23997));
    }

    #[test]
    fn errors_name_the_first_bad_step() {
        assert_eq!(
            err(vec![vec![send(5, 1)], vec![]]),
            "schedule: rank 0, step 0: sends to rank 5 (P = 2)"
        );
        assert_eq!(
            err(vec![vec![send(1, 10)], vec![recv(0, 20)]]),
            "schedule: rank 1, step 0: receives 20 bytes from rank 0, which sends 10"
        );
        // Two bad receives: rank 2's has no send, rank 1's second has none either; rank 1
        // comes first.
        assert_eq!(
            err(vec![
                vec![send(1, 1)],
                vec![recv(0, 1), recv(0, 1)],
                vec![recv(0, 1)]
            ]),
            "schedule: rank 1, step 1: receives from rank 0, which sends no matching message"
        );
        // A receive from a rank out of range, after one from itself.
        assert_eq!(
            err(vec![vec![recv(0, 1), recv(9, 1)], vec![]]),
            "schedule: rank 0, step 0: receives from rank 0, which sends no matching message"
        );
        assert_eq!(
            err(vec![vec![], vec![recv(9, 1)]]),
            "schedule: rank 1, step 0: receives from rank 9, which sends no matching message"
        );
        // A bad receive is reported before sends that are never received.
        assert_eq!(
            err(vec![vec![send(1, 1), send(1, 1)], vec![recv(2, 1)], vec![]]),
            "schedule: rank 1, step 0: receives from rank 2, which sends no matching message"
        );
        assert_eq!(
            err(vec![
                vec![send(1, 1), send(1, 1), send(1, 1)],
                vec![recv(0, 1), send(0, 4)],
            ]),
            "schedule: rank 0 sends 2 message(s) to rank 1 that are never received"
        );
    }

    /// Ranks built apart, on one thread or in blocks of 1,024 ranks or fewer (3,000 ranks:
    /// three) on the threads: each rank's steps as added, its byte counts of 2^31 or more, kept
    /// apart from the steps and different for every rank, found again whichever block built
    /// them.
    #[test]
    fn ranks_built_apart_keep_their_steps_and_large_counts() {
        let p = 3000usize;
        let big = |r: usize| (1u64 << 32) + r as u64;
        let build = || {
            let mut log = Log::with_capacity(p, 0);
            log.each_rank(|r, s| {
                s.push(send(((r + 1) % p) as u32, big(r)));
                if r % 2 == 0 {
                    s.push(recv(((r + p - 1) % p) as u32, 8));
                }
                s.push(Step::Reduce { bytes: big(r + 1) });
            });
            log.finish()
        };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let s = build();
        assert_eq!(one.install(build), s);
        for r in 0..p {
            let mut steps = vec![send(((r + 1) % p) as u32, big(r))];
            if r % 2 == 0 {
                steps.push(recv(((r + p - 1) % p) as u32, 8));
            }
            steps.push(Step::Reduce { bytes: big(r + 1) });
            assert_eq!(s.steps_of(r).collect::<Vec<_>>(), steps, "rank {r}");
        }
    }

    proptest::proptest! {
        /// Sorting a list that is a sorted run turned at one place, such a run reversed, or any
        /// list, gives what a sort gives.
        #[test]
        fn runs_turned_or_reversed_are_sorted_as_by_a_sort(
            mut v in proptest::collection::vec((0u32..50, 0u32..50), 0..60),
            turn in 0usize..60,
            how in 0u8..3,
        ) {
            v.sort_unstable();
            v.dedup();
            if !v.is_empty() {
                let at = turn % v.len();
                v.rotate_left(at);
            }
            match how {
                0 => {}
                1 => v.reverse(),
                _ if !v.is_empty() => {
                    let half = v.len() / 2;
                    v.swap(0, half);
                }
                _ => {}
            }
            let mut sorted = v.clone();
            sorted.sort_unstable();
            sort_runs(&mut v);
            proptest::prop_assert_eq!(v, sorted);
        }

        /// Where a sender's list starts its sends to `r`, found from a guess, is where a
        /// binary search finds it: lists of up to 300 sends among up to 64 ranks, some
        /// ranks sent many, some none.
        #[test]
        fn the_sends_to_a_rank_are_found_from_a_guess_as_by_a_binary_search(
            p in 1u32..64,
            mut to in proptest::collection::vec(0u32..64, 0..300),
            r in 0u32..64,
        ) {
            to.iter_mut().for_each(|t| *t %= p);
            to.sort_unstable();
            let theirs: Vec<(u32, u32)> = to.iter().map(|&t| (t, 0)).collect();
            let r = r % p;
            proptest::prop_assert_eq!(
                first_to(&theirs, r, p as usize),
                theirs.partition_point(|s| s.0 < r)
            );
        }
    }
}
