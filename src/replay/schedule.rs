//! The replay's scheduler: which rank runs when, on which thread, and what a rank that cannot go
//! on waits for. It knows nothing of the model: a rank's run is [`advance`], which stops where a
//! partner's time is not known yet.

use super::collective::{LOCAL, Local};
use super::rank::{RankState, advance};
use super::{Dep, Outcome, Shared};
use crate::collectives::eval;
use crate::graph::NONE;
use crate::memory::{prefetch, prefetch_all, with_kept};
use crate::trace::{Rank, Shape};
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Waves with fewer runnable ranks than this run on the calling thread.
pub(super) const PARALLEL_MIN_RANKS: usize = 4;
/// From this many ranks, one thread runs them as one block, round and round, before waves: a
/// block lets a rank go past a partner run earlier in the same pass, and a pass only looks at
/// what its ranks wait on, where a wave files every stopped rank under its partner (random
/// accesses over every rank). With fewer ranks waves win: a wave runs a rank whose partner was
/// ahead when it began, and needs about half the runs (see the `big`, `diss` and `ring` cases
/// of tests/bench/run.sh).
pub(super) const ONE_BLOCK_MIN_RANKS: usize = 1 << 17;

/// What one run of a rank in a wave did.
#[derive(Clone, Copy, Default)]
pub(super) struct Ran {
    pub(super) rank: u32,
    pub(super) out: Outcome,
    /// Events it replayed.
    pub(super) events: u32,
    /// Where it stopped.
    pub(super) pos: u32,
}

/// Ranks a wave's parallel pieces hold.
pub(super) const WAVE_CHUNK: usize = 256;
/// How long a thread of [`run_owned`] waits while no thread moves before it ends its round.
/// Both blocks stop moving for good only on a deadlock or an unfinished trace; a shorter
/// stall is the host taking a core away for a few milliseconds, and a thread that gives up
/// there leaves its ranks until the other gives up too, for rounds more (see the `gauss` case
/// of tests/bench/run.sh at 2 threads on a busy machine).
pub(super) const OWNED_PATIENCE: Duration = Duration::from_millis(50);
/// How long the threads of [`run_owned`] all wait, none going on, before they end their round:
/// then none can publish what another waits for (a deadlock, or in a split replay a time
/// another process computes). Not at once: a thread that has just seen its partner's time
/// is counted among the waiting until it leaves, and the others would give up under it.
pub(super) const ALL_WAITING_PATIENCE: Duration = Duration::from_micros(500);
/// The most spin-loop hints between two looks of an idle thread of [`run_owned`], before it
/// yields its core at each look. Short: a thread of the Gaussian elimination waits on the
/// other a thousand times, a few microseconds each, and a longer backoff leaves a waiter in
/// its hints well after the partner has published (see the `gauss` case of tests/bench/run.sh).
pub(super) const OWNED_MAX_BACKOFF: u32 = 16;
/// Events replayed by the threads of [`run_owned`] between two progress reports.
pub(super) const OWNED_REPORT_EVENTS: u64 = 1 << 16;
/// Events a thread of [`run_owned`] replays before it adds them to the count all threads see.
pub(super) const OWNED_SHARE_EVENTS: u32 = 1 << 10;
/// How many ranks ahead a wave prefetches.
pub(super) const PREFETCH_RANKS_AHEAD: usize = 4;

/// Asks for the cache lines rank `r`'s next run starts with: its state, and its columns at
/// event `pos`.
pub(super) fn prefetch_run(sh: &Shared<'_>, states: &[Mutex<RankState>], r: usize, pos: usize) {
    prefetch_all(&states[r]);
    let e = sh.offsets[r] + pos;
    if e < sh.held && e < sh.calls.len() {
        prefetch(&sh.calls[e]);
        sh.g.prefetch(e);
        sh.trace.events.prefetch_run(r, e);
    }
}

/// How many events ahead [`advance`] asks for what an event will read of its partner.
pub(super) const PREFETCH_AHEAD: usize = 8;

/// The fewest ranks with which [`advance`] asks ahead for partners' lines
/// ([`prefetch_partner`]). A pass over a block touches, a rank, its 104-byte state and a line
/// of each column where it stands, about 700 bytes: on 131,072 ranks 90 MB, far past a
/// last-level cache, so a partner's lines are cold when a rank reads them. With fewer ranks
/// the partners were mostly touched a moment before, and asking costs more than it saves (at
/// 2 threads also as lines the other thread is still writing, asked for too early, must be
/// fetched again): see the `diss`, `bcast`, `gauss`, `ring`, `a2a`, `halo3d` and `cg` cases of
/// tests/bench/run.sh. (A broadcast loop on as many ranks, whose ranks each run all their
/// events at once, a parent's lines read long after it ran, loses a little by asking: left
/// asking.)
pub(super) const PARTNER_PREFETCH_MIN_RANKS: usize = 1 << 17;

thread_local! {
    /// Tests: partner prefetching on or off whatever the ranks, for the replays this thread
    /// starts ([`PARTNER_PREFETCH_MIN_RANKS`]).
    pub(super) static FORCED_PREFETCH: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Asks for the cache lines that event `i` of rank `r`, if it is a point-to-point operation
/// with a known partner, will read of that partner: a receive, its send's predicted call
/// time, routine and byte count (the byte count alone of a plain send); a send (a Sendrecv's
/// too), its receive's call time, where it goes by rendezvous. An eager send reads nothing of
/// its receive, and asking for those three lines for each send too slows the replay (see the
/// `diss` case of tests/bench/run.sh).
/// Partners are mostly far away in memory; a few events ahead, the reads are in flight while
/// the events before are costed. Only on many ranks ([`PARTNER_PREFETCH_MIN_RANKS`]).
#[inline]
pub(super) fn prefetch_partner(sh: &Shared<'_>, ev: &Rank<'_>, r: usize, i: usize) {
    if i >= ev.len() {
        return;
    }
    let whole = match ev.routine(i).shape() {
        Shape::Recv | Shape::Irecv => true,
        Shape::Send | Shape::Isend | Shape::Sendrecv if sh.rendezvous(r, i) => false,
        _ => return,
    };
    let (e, plain) = sh.g.link_plain(r, i);
    if e != NONE {
        prefetch(&sh.calls[e as usize]);
        if whole && (e as usize) < sh.held {
            sh.trace.events.prefetch(e as usize, plain);
        }
    }
}

/// Ranks waiting when the replay stopped: on a partner's call time, on a collective instance.
pub(super) struct Waiting {
    pub(super) on_event: Waiters,
    pub(super) on_instance: HashMap<u32, Vec<u32>>,
}

/// Replays `ranks` (ascending) as far as they go: in rounds of blocks owned by threads while
/// they move ([`run_owned`]), then in waves ([`waves`]), which take what is stuck and leave a
/// deadlock's ranks waiting. `progress` is told the events replayed so far.
pub(super) fn run(
    sh: &Shared<'_>,
    states: &[Mutex<RankState>],
    ranks: Vec<u32>,
    progress: &(dyn Fn(u64) + Sync),
) -> Waiting {
    let p = states.len();
    let mut wave = ranks;
    // Where each rank stopped last (read only to prefetch what its next run starts with).
    let mut stopped_at: Vec<u32> = Vec::new();
    let mut done_events = 0u64;
    let run = |local: &mut Local, &r: &u32| {
        let mut st = states[r as usize].lock().expect("rank state");
        let before = st.pos;
        let out = advance(sh, r as usize, &mut st, local);
        Ran {
            rank: r,
            out,
            events: st.pos - before,
            pos: st.pos,
        }
    };
    // One block per thread, but no more than cores: a block whose thread is off its core
    // stalls the blocks that wait on it.
    let blocks = eval::threads();
    if blocks > 1 || p >= ONE_BLOCK_MIN_RANKS {
        // Rounds of blocks owned by threads while they move; waves then take what is stuck
        // (and name a deadlock). One thread with fewer ranks goes by waves alone.
        // A round runs the ranks not blocked on an unknown call time: in the first, every rank
        // (none has run yet: `Done` stands for "not blocked").
        let fresh = |&rank: &u32| Ran {
            rank,
            out: Outcome::Done,
            events: 0,
            pos: 0,
        };
        let mut pending: Vec<Ran> = std::mem::take(&mut wave).iter().map(fresh).collect();
        loop {
            run_owned(sh, states, &mut pending, blocks, &run, &|n| {
                progress(done_events + n)
            });
            let events: u64 = pending.iter().map(|o| o.events as u64).sum();
            done_events += events;
            progress(done_events);
            // Nobody is listed as waiting on an instance yet: a wave checks first.
            sh.completed.lock().expect("completed").clear();
            pending.retain(|o| matches!(o.out, Outcome::Blocked(_)));
            if events == 0 || pending.is_empty() {
                break;
            }
        }
        wave = pending.iter().map(|o| o.rank).collect();
        // Made for the waves alone (4 bytes a rank that a replay done in rounds goes without).
        if !wave.is_empty() {
            stopped_at.resize(p, 0);
            for o in &pending {
                stopped_at[o.rank as usize] = o.pos;
            }
        }
    }
    if !wave.is_empty() {
        stopped_at.resize(p, 0);
    }
    let mut waiting = Waiting {
        on_event: Waiters::new(p),
        on_instance: HashMap::new(),
    };
    waves(
        sh,
        states,
        wave,
        stopped_at,
        &run,
        &mut waiting,
        done_events,
        progress,
    );
    waiting
}

/// Waves: each advances every runnable rank of `wave` until it needs a partner's call time that
/// is not known yet; the ranks whose partners moved run in the next wave. A wave that runs no
/// rank leaves the rest in `waiting`.
#[allow(clippy::too_many_arguments)]
fn waves(
    sh: &Shared<'_>,
    states: &[Mutex<RankState>],
    mut wave: Vec<u32>,
    mut stopped_at: Vec<u32>,
    run: &(dyn Fn(&mut Local, &u32) -> Ran + Sync),
    waiting: &mut Waiting,
    mut done_events: u64,
    progress: &(dyn Fn(u64) + Sync),
) {
    // What a wave makes is kept for the next, so that a replay of many collectives, a wave
    // each, does not allocate at every wave: its outcomes, the next wave, each thread's
    // batches (LOCAL), the lists of ranks waiting on an instance.
    let mut outcomes: Vec<Ran> = Vec::new();
    let mut next = Vec::new();
    let mut spare_lists: Vec<Vec<u32>> = Vec::new();
    while !wave.is_empty() {
        outcomes.resize(wave.len(), Ran::default());
        // The ranks of a wave lie far apart in memory: each run asks for the lines of the run
        // a few ranks ahead, so that they are in flight while the runs before go.
        if wave.len() >= PARALLEL_MIN_RANKS {
            wave.par_chunks(WAVE_CHUNK)
                .zip(outcomes.par_chunks_mut(WAVE_CHUNK))
                .for_each(|(chunk, out)| {
                    with_kept(&LOCAL, |local| {
                        for (k, (r, o)) in chunk.iter().zip(out).enumerate() {
                            if let Some(&n) = chunk.get(k + PREFETCH_RANKS_AHEAD) {
                                let at = stopped_at[n as usize] as usize;
                                prefetch_run(sh, states, n as usize, at);
                            }
                            *o = run(local, r);
                        }
                        sh.flush(local);
                    })
                });
        } else {
            with_kept(&LOCAL, |local| {
                for (r, o) in wave.iter().zip(&mut outcomes) {
                    *o = run(local, r);
                }
                sh.flush(local);
            });
        }
        let outcomes = || outcomes.iter();
        // Counted here, not by every rank into one shared counter (one cache line bouncing
        // between the threads).
        done_events += outcomes().map(|o| o.events as u64).sum::<u64>();
        progress(done_events);
        for o in outcomes() {
            stopped_at[o.rank as usize] = o.pos;
            match o.out {
                Outcome::Done => {}
                Outcome::Blocked(dep @ Dep::Event(q, j)) => {
                    if sh.ready(dep) {
                        next.push(o.rank);
                    } else {
                        waiting.on_event.add(q, j, o.rank);
                    }
                }
                Outcome::Blocked(dep @ Dep::Instance(x)) => {
                    if sh.ready(dep) {
                        next.push(o.rank);
                    } else {
                        let list = waiting.on_instance.entry(x);
                        let list = list.or_insert_with(|| spare_lists.pop().unwrap_or_default());
                        list.push(o.rank);
                    }
                }
            }
        }
        for o in outcomes() {
            let q = o.rank;
            waiting
                .on_event
                .wake(q, |j| sh.call(q as usize, j as usize).is_ok(), &mut next);
        }
        for x in sh.completed.lock().expect("completed").drain(..) {
            if let Some(mut list) = waiting.on_instance.remove(&x) {
                next.append(&mut list);
                spare_lists.push(list);
            }
        }
        std::mem::swap(&mut wave, &mut next);
        next.clear();
    }
}

/// One round of the replay on several threads: the `pending` ranks (ascending, with where each
/// stopped) split into `blocks` blocks ([`eval::threads`]); each thread runs its block round and
/// round, every rank as far as it goes (at first those not blocked on an unknown call time),
/// until the block is done or it waits for others that have stopped ([`wait_outside`]: on a
/// partner another thread is slow to reach, or on a deadlock). A thread needs nobody's
/// bookkeeping to go on where waves would stop every rank at its first unknown partner: a ring
/// or a pipeline takes a wave a message, each waking the threads for a few events. Leaves in
/// `pending` where each rank stopped (in place: a copy would be 24 bytes a rank more).
pub(super) fn run_owned(
    sh: &Shared<'_>,
    states: &[Mutex<RankState>],
    pending: &mut [Ran],
    blocks: usize,
    run: &(impl Fn(&mut Local, &u32) -> Ran + Sync),
    progress: &(dyn Fn(u64) + Sync),
) {
    let size = pending.len().div_ceil(blocks).max(1);
    let moves = Moves {
        events: AtomicU64::new(0),
        running: AtomicUsize::new(pending.len().div_ceil(size)),
        waiting: AtomicUsize::new(0),
        resumed: AtomicU64::new(0),
    };
    pending.par_chunks_mut(size).for_each(|ran| {
        with_kept(&LOCAL, |local| {
            run_block(sh, states, ran, run, &moves, local, progress)
        })
    });
}

/// [`run_owned`] on one thread's block `ran`, batching into `local` (flushed after each pass
/// over the block: before anyone waits on it).
pub(super) fn run_block(
    sh: &Shared<'_>,
    states: &[Mutex<RankState>],
    ran: &mut [Ran],
    run: &(impl Fn(&mut Local, &u32) -> Ran + Sync),
    moves: &Moves,
    local: &mut Local,
    progress: &(dyn Fn(u64) + Sync),
) {
    let mut outside = Vec::new();
    let mut unshared = 0;
    for o in ran.iter_mut() {
        *o = match o.out {
            Outcome::Blocked(dep) if !sh.ready(dep) => Ran { events: 0, ..*o },
            _ => {
                let ran = run(local, &o.rank);
                moves.add(&mut unshared, ran.events, progress);
                ran
            }
        };
    }
    sh.flush(local);
    loop {
        let (mut moved, mut live) = (false, false);
        for k in 0..ran.len() {
            let Outcome::Blocked(dep) = ran[k].out else {
                continue;
            };
            live = true;
            if sh.ready(dep) {
                if let Some(n) = ran.get(k + PREFETCH_RANKS_AHEAD) {
                    prefetch_run(sh, states, n.rank as usize, n.pos as usize);
                }
                // What it waited on is known: it gets past it (a run can publish a
                // call time, a blocked send's, without finishing an event).
                moved = true;
                let o = &mut ran[k];
                let again = run(local, &o.rank);
                moves.add(&mut unshared, again.events, progress);
                *o = Ran {
                    events: o.events + again.events,
                    ..again
                };
            }
        }
        sh.flush(local);
        if !live || !moved && !wait_outside(sh, ran, moves, &mut outside) {
            break;
        }
    }
    moves.running.fetch_sub(1, Ordering::AcqRel);
}

/// What the threads of [`run_owned`] tell each other of their progress.
pub(super) struct Moves {
    /// Events replayed, each thread adding its own every [`OWNED_SHARE_EVENTS`].
    pub(super) events: AtomicU64,
    /// Blocks not yet ended.
    pub(super) running: AtomicUsize,
    /// Blocks whose threads wait in [`wait_outside`], each having published what it ran.
    pub(super) waiting: AtomicUsize,
    /// Waits in [`wait_outside`] that ended with a block going on.
    pub(super) resumed: AtomicU64,
}

impl Moves {
    /// Counts `n` more events of a thread whose `unshared` were not yet added; reports the
    /// total to `progress` every [`OWNED_REPORT_EVENTS`].
    pub(super) fn add(&self, unshared: &mut u32, n: u32, progress: &(dyn Fn(u64) + Sync)) {
        *unshared += n;
        if *unshared >= OWNED_SHARE_EVENTS {
            let before = self.events.fetch_add(*unshared as u64, Ordering::Relaxed);
            let after = before + *unshared as u64;
            if after / OWNED_REPORT_EVENTS != before / OWNED_REPORT_EVENTS {
                progress(after);
            }
            *unshared = 0;
        }
    }
}

/// After a pass over a block (`ran`, ascending ranks) in which no rank moved, waits until a rank
/// blocked on a partner outside the block can go on (true), or gives up (false) once no other
/// block is running, every running block has waited for [`ALL_WAITING_PATIENCE`] with none
/// going on, or none has moved for [`OWNED_PATIENCE`]: a thread still in a long pass may yet
/// publish what this one waits for. Looks at the ranks blocked on a partner outside
/// the block alone: the others wait on ranks of the block, which will not move before they do.
/// `outside`: where their dependencies are listed (the thread's, kept from wait to wait).
pub(super) fn wait_outside(
    sh: &Shared<'_>,
    ran: &[Ran],
    moves: &Moves,
    outside: &mut Vec<Dep>,
) -> bool {
    let (first, last) = (ran[0].rank, ran[ran.len() - 1].rank);
    outside.clear();
    for o in ran {
        let dep = match o.out {
            Outcome::Blocked(dep @ Dep::Event(q, _)) if q < first || q > last => dep,
            Outcome::Blocked(dep @ Dep::Instance(_)) => dep,
            _ => continue,
        };
        // What another process publishes comes after the round.
        if let Some(part) = &sh.part
            && !part.may_come(sh, dep)
        {
            continue;
        }
        // Once for the ranks after it waiting on the same: a collective's participants wait
        // on one instance (a block of 32,768 ranks would list it 32,768 times, 393 kB, at
        // every wait).
        if outside.last() != Some(&dep) {
            outside.push(dep);
        }
    }
    if outside.is_empty() {
        return false;
    }
    // Counted among the waiting while it waits (what it ran is published already).
    struct Waits<'m>(&'m AtomicUsize);
    impl Drop for Waits<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::AcqRel);
        }
    }
    moves.waiting.fetch_add(1, Ordering::AcqRel);
    let _waits = Waits(&moves.waiting);
    let mut since = Instant::now();
    let mut seen = moves.events.load(Ordering::Relaxed);
    // Since when every running block has waited, none going on meanwhile.
    let (mut all_since, mut resumed) = (None, moves.resumed.load(Ordering::Acquire));
    let mut backoff = 1;
    loop {
        if outside.iter().any(|&dep| sh.ready(dep)) {
            moves.resumed.fetch_add(1, Ordering::AcqRel);
            return true;
        }
        if moves.running.load(Ordering::Acquire) == 1 {
            return false;
        }
        let all = moves.waiting.load(Ordering::Acquire) >= moves.running.load(Ordering::Acquire);
        let now_resumed = moves.resumed.load(Ordering::Acquire);
        if all && now_resumed == resumed {
            if all_since.get_or_insert_with(Instant::now).elapsed() > ALL_WAITING_PATIENCE {
                return false;
            }
        } else {
            (all_since, resumed) = (None, now_resumed);
        }
        let now = moves.events.load(Ordering::Relaxed);
        if now != seen {
            (seen, since) = (now, Instant::now());
        } else if since.elapsed() > OWNED_PATIENCE {
            return false;
        }
        eval::back_off(&mut backoff, OWNED_MAX_BACKOFF);
    }
}

/// The ranks of the waves that wait on a call time another rank has yet to publish, listed by
/// that rank: a list threaded through arrays of one entry a rank (a rank waits on one event at a
/// time), 12 bytes a rank where a `Vec` a rank would take 24 and its first 32 on the heap.
pub(super) struct Waiters {
    /// The ranks: the lists below are made for them at the first wait (12 bytes a rank, which
    /// a replay whose waves never wait on an event, as one of collectives alone, goes without).
    pub(super) p: usize,
    /// Per rank `q`: the first rank waiting on one of `q`'s events, or [`NONE`].
    pub(super) first: Vec<u32>,
    /// Per waiting rank: the next rank waiting on the same rank, or [`NONE`].
    pub(super) next: Vec<u32>,
    /// Per waiting rank: the event it waits on, of the rank it waits on.
    pub(super) event: Vec<u32>,
}

impl Waiters {
    pub(super) fn new(p: usize) -> Waiters {
        Waiters {
            p,
            first: Vec::new(),
            next: Vec::new(),
            event: Vec::new(),
        }
    }

    /// Lists `waiter` as waiting on event `j` of rank `q`.
    pub(super) fn add(&mut self, q: u32, j: u32, waiter: u32) {
        if self.first.is_empty() {
            (self.first, self.next, self.event) =
                (vec![NONE; self.p], vec![NONE; self.p], vec![0; self.p]);
        }
        let w = waiter as usize;
        self.event[w] = j;
        self.next[w] = self.first[q as usize];
        self.first[q as usize] = waiter;
    }

    /// Moves into `woken` the ranks waiting on an event of `q` that is `known`, in the order
    /// they were listed in.
    pub(super) fn wake(&mut self, q: u32, known: impl Fn(u32) -> bool, woken: &mut Vec<u32>) {
        // Newest first: the ranks woken go out in reverse, so that they keep the order they
        // came in.
        let from = woken.len();
        // The last rank left listed, whose `next` skips those woken after it.
        let mut kept: Option<usize> = None;
        let mut w = self.first.get(q as usize).copied().unwrap_or(NONE);
        while w != NONE {
            let after = self.next[w as usize];
            if known(self.event[w as usize]) {
                woken.push(w);
                match kept {
                    None => self.first[q as usize] = after,
                    Some(k) => self.next[k] = after,
                }
            } else {
                kept = Some(w as usize);
            }
            w = after;
        }
        woken[from..].reverse();
    }

    /// The ranks waiting on an event of `q`.
    pub(super) fn on(&self, q: u32) -> impl Iterator<Item = u32> + '_ {
        let mut w = self.first.get(q as usize).copied().unwrap_or(NONE);
        std::iter::from_fn(move || {
            let r = w;
            (r != NONE).then(|| {
                w = self.next[r as usize];
                r
            })
        })
    }
}
