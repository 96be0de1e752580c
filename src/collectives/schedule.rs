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

/// Per rank, the ordered steps of one collective call, stored as [`Packed`] steps, rank after
/// rank.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schedule {
    /// Where each rank's steps start in `steps`, and their total at the end.
    first: Vec<usize>,
    steps: Vec<Packed>,
    /// Byte counts of [`BIG`] or more, which steps name by their place here.
    big: Vec<u64>,
}

/// A schedule being built: steps in the order they are added, each with its rank, put rank
/// after rank by [`Log::finish`]. One vector, where a vector a rank grown by doubling held 512
/// bytes for a barrier rank's 18 steps of 16 (134 MB on 262,144 ranks).
#[derive(Debug, Default)]
pub struct Log {
    p: usize,
    added: Vec<(u32, Packed)>,
    big: Vec<u64>,
}

impl Log {
    /// An empty schedule for `p` ranks, with room for `steps` steps (reserved, as a vector grown
    /// by doubling would hold both its copies at once; pages never written take no memory).
    pub fn with_capacity(p: usize, steps: usize) -> Log {
        Log {
            p,
            added: Vec::with_capacity(steps),
            big: Vec::new(),
        }
    }

    /// Appends `step` to rank `r`'s steps.
    pub fn push(&mut self, r: usize, step: Step) {
        assert!(r < self.p, "rank {r} of {}", self.p);
        let mut bytes = |b: u64| match u32::try_from(b) {
            Ok(b) if b < BIG => b,
            _ => {
                self.big.push(b);
                BIG | u32::try_from(self.big.len() - 1).expect("under 2^31 large counts")
            }
        };
        let packed = match step {
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
        };
        self.added.push((r as u32, packed));
    }

    /// The schedule: the steps sorted by rank (counting them), in the order added per rank.
    pub fn finish(self) -> Schedule {
        let mut first = vec![0usize; self.p + 1];
        for &(r, _) in &self.added {
            first[r as usize + 1] += 1;
        }
        for r in 0..self.p {
            first[r + 1] += first[r];
        }
        let mut next = first.clone();
        let none = Packed {
            to: NONE,
            from: NONE,
            send: 0,
            recv: 0,
        };
        let mut steps = vec![none; self.added.len()];
        for (r, step) in self.added {
            steps[next[r as usize]] = step;
            next[r as usize] += 1;
        }
        Schedule {
            first,
            steps,
            big: self.big,
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
    /// Per step, in rank then step order: `(send message, receive message)`, [`NONE`] where the
    /// half is absent; a reduction's is `(NONE, REDUCTION | its place in reductions)`.
    ids: Vec<(u32, u32)>,
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
    /// Adds a message of `b` bytes: one count a message only from the first that differs.
    fn push(&mut self, b: u64) {
        match (self.n, self.mask) {
            (0, _) => self.each = vec![b],
            (_, 0) if b == self.each[0] => {}
            (n, mask) => {
                if mask == 0 {
                    self.each = vec![self.each[0]; n];
                    self.mask = u32::MAX;
                }
                self.each.push(b);
            }
        }
        self.n += 1;
    }

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
    /// Pass `l`'s runs are `runs[start[l]..start[l + 1]]`, by rank.
    start: Vec<u32>,
    runs: Vec<(u32, u32)>,
}

impl Levels {
    /// Each pass's runs, `(rank, end)` by rank.
    pub fn passes(&self) -> impl Iterator<Item = &[(u32, u32)]> {
        self.start
            .windows(2)
            .map(|w| &self.runs[w[0] as usize..w[1] as usize])
    }
}

/// Looks at ranks that cannot go on that [`Matching::leveled`] takes whatever the steps.
const IDLE_LOOKS: usize = 1 << 16;

/// Marks a reduction in [`Matching`]'s ids; messages are numbered below it.
pub const REDUCTION: u32 = 1 << 31;

impl Matching {
    /// `(send message, receive message)` of each of rank `r`'s steps.
    pub fn ids(&self, r: usize) -> &[(u32, u32)] {
        &self.ids[self.first[r] as usize..self.first[r + 1] as usize]
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.first.len() - 1
    }

    /// The first message rank `r` sends, or any rank after it (messages are numbered in rank
    /// and step order: the messages ranks `a..b` send are `first_message(a)..first_message(b)`).
    pub fn first_message(&self, r: usize) -> u32 {
        let after = &self.ids[self.first[r] as usize..];
        after
            .iter()
            .find(|h| h.0 != NONE)
            .map_or(self.bytes.len() as u32, |h| h.0)
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
    /// the steps or [`IDLE_LOOKS`] times (a pipeline whose ranks wait in most passes).
    pub fn leveled(mut self, min_width: usize) -> Matching {
        self.levels = self.levels(min_width, self.steps().max(IDLE_LOOKS));
        self
    }

    /// [`Matching::leveled`] whatever the looks.
    #[cfg(test)]
    pub fn leveled_at_any_cost(mut self) -> Matching {
        self.levels = self.levels(0, usize::MAX);
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
        let mut start = vec![0, p as u32];
        // At most a run a step after pass 0's: reserved, as a vector grown by doubling would
        // hold both its copies at once (pages never written take no memory).
        let mut runs: Vec<(u32, u32)> = Vec::with_capacity(p + steps);
        runs.extend((0..p as u32).map(|r| (r, 0)));
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
            active
                .par_iter_mut()
                .with_min_len(256)
                .for_each(|(r, _, k)| {
                    let ids = self.ids(*r as usize);
                    while (*k as usize) < ids.len() && ready(ids[*k as usize], l) {
                        *k += 1;
                        call(*r as usize, *k as usize, l);
                    }
                });
            let (before, mut kept) = (runs.len(), 0);
            for i in 0..active.len() {
                let (r, k0, k) = active[i];
                match k > k0 {
                    true => runs.push((r, k)),
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
    /// never received). Messages are numbered in rank and step order. Each sender's sends,
    /// sorted by receiver, meet the receives from it, which a counting sort on the sender
    /// leaves in rank and step order: no table of queues, no allocation per pair, no sort of
    /// all the messages.
    pub fn matching(&self) -> Result<Matching, Error> {
        let p = self.ranks();
        let n = self.steps();
        if u32::try_from(n).is_err() {
            return Err(Error::Usage(format!("schedule: {n} steps, more than 2^32")));
        }
        let first: Vec<u32> = self.first.iter().map(|&f| f as u32).collect();
        let mut m = Matching {
            ids: vec![(NONE, NONE); first[p] as usize],
            first,
            bytes: MessageBytes::default(),
            reductions: Vec::new(),
            levels: None,
        };
        let mut first_bad: Option<(u32, u32, String)> = None;
        let mut note = |r: u32, i: u32, what: String| {
            if first_bad.as_ref().is_none_or(|b| (r, i) < (b.0, b.1)) {
                first_bad = Some((r, i, what));
            }
        };
        // Per sender, `(receiver, message)` sorted; the receives from each sender counted. A
        // send a step reserved: grown by doubling, `sends` would hold both its copies at once
        // (pages never written take no memory).
        let mut sends: Vec<(u32, u32)> = Vec::with_capacity(m.ids.len());
        let mut sends_from = Vec::with_capacity(p + 1);
        sends_from.push(0usize);
        let mut recvs_from = vec![0usize; p + 1];
        for r in 0..p {
            for (i, s) in self.of(r).iter().enumerate() {
                if (s.to, s.from) == (NONE, NONE) {
                    let bytes = self.bytes(s.send);
                    if m.reductions.last() != Some(&bytes) {
                        m.reductions.push(bytes);
                    }
                    let k = m.reductions.len() - 1;
                    if k as u32 >= REDUCTION {
                        return Err(bad(r, i, "more than 2^31 reductions".into()));
                    }
                    m.ids[m.first[r] as usize + i].1 = REDUCTION | k as u32;
                }
                if s.to != NONE {
                    if s.to as usize >= p || s.to as usize == r {
                        return Err(bad(r, i, format!("sends to rank {} (P = {p})", s.to)));
                    }
                    if m.bytes.len() >= REDUCTION as usize {
                        return Err(bad(r, i, "more than 2^31 messages".into()));
                    }
                    let id = m.bytes.len() as u32;
                    m.bytes.push(self.bytes(s.send));
                    m.ids[m.first[r] as usize + i].0 = id;
                    sends.push((s.to, id));
                }
                match s.from {
                    NONE => {}
                    from if (from as usize) < p => recvs_from[from as usize + 1] += 1,
                    from => note(
                        r as u32,
                        i as u32,
                        format!("receives from rank {from}, which sends no matching message"),
                    ),
                }
            }
            let mine = *sends_from.last().expect("pushed");
            sends[mine..].sort_unstable();
            sends_from.push(sends.len());
        }
        for a in 0..p {
            recvs_from[a + 1] += recvs_from[a];
        }
        // `(receiver, its step)` of each receive, by sender.
        let mut recvs = vec![(0u32, 0u32); recvs_from[p]];
        let mut next = recvs_from.clone();
        for r in 0..p {
            for (i, s) in self.of(r).iter().enumerate() {
                if s.from != NONE && (s.from as usize) < p {
                    let at = &mut next[s.from as usize];
                    recvs[*at] = (r as u32, m.first[r] + i as u32);
                    *at += 1;
                }
            }
        }
        drop(next);
        let mut unreceived: Option<((u32, u32), usize)> = None;
        for a in 0..p {
            let sent = &sends[sends_from[a]..sends_from[a + 1]];
            let got = &recvs[recvs_from[a]..recvs_from[a + 1]];
            let (mut x, mut y) = (0, 0);
            while x < sent.len() || y < got.len() {
                let to = sent.get(x).map(|&(to, _)| to);
                let by = got.get(y).map(|&(r, _)| r);
                match (to, by) {
                    (Some(to), Some(by)) if to == by => {
                        let (id, g) = (sent[x].1, got[y].1);
                        let i = g - m.first[by as usize];
                        let got_bytes = self.bytes(self.of(by as usize)[i as usize].recv);
                        let sent_bytes = m.bytes.get(id);
                        if sent_bytes != got_bytes {
                            note(
                                by,
                                i,
                                format!(
                                    "receives {got_bytes} bytes from rank {a}, which sends {sent_bytes}"
                                ),
                            );
                        }
                        m.ids[g as usize].1 = id;
                        x += 1;
                        y += 1;
                    }
                    (Some(to), by) if by.is_none_or(|by| to < by) => {
                        let pair = (a as u32, to);
                        match &mut unreceived {
                            None => unreceived = Some((pair, 1)),
                            Some((q, n)) if *q == pair => *n += 1,
                            Some(_) => {}
                        }
                        x += 1;
                    }
                    (_, by) => {
                        let (r, g) = (by.expect("a receive left"), got[y].1);
                        note(
                            r,
                            g - m.first[r as usize],
                            format!("receives from rank {a}, which sends no matching message"),
                        );
                        y += 1;
                    }
                }
            }
        }
        if let Some((r, i, what)) = first_bad {
            return Err(bad(r as usize, i as usize, what));
        }
        if let Some(((from, to), n)) = unreceived {
            return Err(Error::Usage(format!(
                "schedule: rank {from} sends {n} message(s) to rank {to} that are never received"
            )));
        }
        Ok(m)
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
        let passes: Vec<Vec<(u32, u32)>> = m
            .levels
            .as_ref()
            .unwrap()
            .passes()
            .map(<[_]>::to_vec)
            .collect();
        assert_eq!(
            passes,
            [
                vec![(0, 0), (1, 0), (2, 0)],
                vec![(0, 1), (1, 3)],
                vec![(2, 1)]
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

    #[test]
    fn message_bytes_are_one_count_until_one_differs() {
        let mut b = MessageBytes::default();
        for x in [8, 8, 8] {
            b.push(x);
        }
        assert_eq!(b.each, [8]);
        assert_eq!((b.len(), b.get(2), b.total()), (3, 8, 24));
        b.push(5);
        b.push(8);
        assert_eq!(
            (0..5).map(|i| b.get(i)).collect::<Vec<_>>(),
            [8, 8, 8, 5, 8]
        );
        assert_eq!((b.len(), b.total()), (5, 37));
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
}
