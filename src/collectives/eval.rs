//! Costing a schedule: one evaluator for every algorithm, two cost models behind
//! [`CostModel`]. A rank's next step starts when its previous one returned; a receive needs
//! what its matching send published at its call, a rendezvous send the receive's call time.
//! Each step's synchronization follows the replay's point-to-point rules (the model's §5), so a
//! modeled collective splits into communication, sender and receiver synchronization too.

#![allow(non_snake_case)] // the papers' parameter names: L, o, g, G

use super::Ruled;
use super::binomial::Binomial;
use super::lockstep::{Fold, Halves, Lockstep, Round};
use super::schedule::{Levels, Matching, NONE, Pass, Schedule, cut};
use crate::error::Error;
use crate::memory::with_kept;
use crate::model::{CostModel, SendCall, StepCost, Wait};
use rayon::prelude::*;
use serde::Serialize;
use std::any::Any;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A costed schedule.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Completion {
    /// The collective's completion time: the latest rank end, all ranks calling at 0.
    pub time_ns: f64,
    /// Each rank's end.
    pub rank_end_ns: Vec<f64>,
    /// Each rank's sender synchronization over its steps (rendezvous sends waiting for their
    /// receive's call).
    pub sender_sync_ns: Vec<f64>,
    /// Each rank's receiver synchronization over its steps (receives waiting for their data).
    /// The rest of a rank's time from its start to its end is communication.
    pub receiver_sync_ns: Vec<f64>,
    /// When each rank's library last polled for messages by its end (its model's port; −∞:
    /// not in this collective, nor before it as far as the evaluation was told: the model's
    /// §14, "Small messages taken in at a poll").
    pub polled_ns: Vec<f64>,
    pub messages: u64,
    pub bytes: u64,
}

mod ruled;
const UNKNOWN: f64 = f64::NAN;

/// Costs `schedule` with every rank calling at time 0; reductions cost `gamma_ns_per_byte`.
pub fn evaluate<M: CostModel>(
    schedule: &Schedule,
    model: &M,
    gamma_ns_per_byte: f64,
) -> Result<Completion, Error> {
    evaluate_from(
        schedule,
        model,
        gamma_ns_per_byte,
        &vec![0.0; schedule.ranks()],
    )
}

/// Costs `schedule` with rank `r` calling at `start[r]`.
pub fn evaluate_from<M: CostModel>(
    schedule: &Schedule,
    model: &M,
    gamma_ns_per_byte: f64,
    start: &[f64],
) -> Result<Completion, Error> {
    evaluate_matched(&schedule.matching()?, model, gamma_ns_per_byte, start)
}

/// [`evaluate_from`] with the schedule already matched (`m`, its [`Schedule::matching`], all
/// the evaluation reads of it): a schedule costed many times is matched once.
pub fn evaluate_matched<M: CostModel>(
    m: &Matching,
    model: &M,
    gamma_ns_per_byte: f64,
    start: &[f64],
) -> Result<Completion, Error> {
    evaluate_in(m, model, gamma_ns_per_byte, start, &mut Scratch::default())
}

/// The arrays of an evaluation, kept to be reused: a replay costing a 65,536-rank collective
/// again and again needs 20 MB of per-message arrays and 5 MB of per-rank ones each time, and
/// the heap of each thread that costed one would keep a copy.
#[derive(Default)]
pub struct Scratch {
    /// What each message's send published at its call (f64 bits; NaN: not yet).
    from_sender: Vec<AtomicU64>,
    /// Each message's receive call time (likewise).
    tr: Vec<AtomicU64>,
    /// The rank waiting on each message, or [`NONE`].
    waiter: Vec<u32>,
    /// The rank states of the last evaluation, a `Vec<RankState<_>>` of its model's port
    /// (taken again by an evaluation under the same model).
    ranks: Option<Box<dyn Any + Send>>,
    /// The per-rank vectors of a [`Completion`] handed back by [`Scratch::recycle`].
    ends: [Vec<f64>; 4],
    /// Where each rank last waited before its call (the model's §14, "Messages taken in while
    /// waiting"), for the next evaluation alone ([`Scratch::set_waits`]); empty: nowhere.
    waits: Vec<Wait>,
}

/// The parts of a [`Scratch`] a ruled costing takes: `from_sender` and `tr` of `n` values each,
/// its rank states and its completion's vectors.
type RuledArrays<'a> = (
    &'a [AtomicU64],
    &'a [AtomicU64],
    &'a mut Option<Box<dyn Any + Send>>,
    &'a mut [Vec<f64>; 4],
    Vec<Wait>,
);

impl Scratch {
    /// The arrays of a ruled costing with `n` message values. What earlier costings left in
    /// them stays: a ruled costing reads each value after writing it.
    fn ruled(&mut self, n: usize) -> RuledArrays<'_> {
        for v in [&mut self.from_sender, &mut self.tr] {
            v.resize_with(n, || AtomicU64::new(UNKNOWN.to_bits()));
        }
        let waits = std::mem::take(&mut self.waits);
        (
            &self.from_sender,
            &self.tr,
            &mut self.ranks,
            &mut self.ends,
            waits,
        )
    }

    /// Where each rank last waited before its call, in rank order, for the next evaluation in
    /// these arrays (the model's §14): what those waits took in of the messages it receives.
    pub fn set_waits(&mut self, waits: impl IntoIterator<Item = Wait>) {
        self.waits.clear();
        self.waits.extend(waits);
    }

    /// Keeps `c`'s per-rank vectors for the next evaluation's [`Completion`].
    pub fn recycle(&mut self, c: Completion) {
        self.ends = [
            c.rank_end_ns,
            c.sender_sync_ns,
            c.receiver_sync_ns,
            c.polled_ns,
        ];
    }
}

/// A message's value, NaN while unknown. Relaxed: the threads of a leveled evaluation read
/// only what passes before published, and a pass ends when all its threads have; a block
/// reads another's values, which guard nothing else.
#[inline(always)]
fn get(v: &[AtomicU64], id: u32) -> f64 {
    f64::from_bits(v[id as usize].load(Ordering::Relaxed))
}

#[inline(always)]
fn set(v: &[AtomicU64], id: u32, x: f64) {
    v[id as usize].store(x.to_bits(), Ordering::Relaxed);
}

/// Passes of a leveled evaluation with fewer runs are taken by one thread (in tests, all but
/// the smallest are shared, in small pieces).
const PARALLEL_MIN_RUNS: usize = if cfg!(test) { 2 } else { 1 << 12 };
/// Runs a thread takes at a time in a pass.
const RUNS_PER_PIECE: usize = if cfg!(test) { 3 } else { 1 << 10 };

/// How many runs ahead a pass fetches the step a run starts with: a pass reads each rank's
/// steps at one place, a cache line a rank, which the core's own prefetching does not foresee
/// (see the `mix` case of tests/bench/run.sh, whose 262,144-rank Barrier goes by passes).
const PREFETCH_AHEAD: usize = 16;

/// The fewest ranks a thread takes in the per-rank work before and after an evaluation, mostly
/// faulting in the pages of fresh arrays (see the `coll` case of tests/bench/run.sh).
const PARALLEL_MIN_RANKS: usize = 1 << 12;
/// The fewest ranks a block of [`Evaluation::by_blocks`] holds (in tests, a few).
const BLOCK_MIN_RANKS: usize = if cfg!(test) { 2 } else { 1 << 11 };
/// The fewest ranks a block of [`Order::HelpedBlocks`] holds. The other threads wait for the
/// evaluation and take a block at once, so that even small blocks beat one thread's queue (see
/// the `allr` case of tests/bench/run.sh). Where no thread waits to help, such small blocks
/// are slower: a block wants its partner block started, and waits for it.
const HELPED_BLOCK_MIN_RANKS: usize = if cfg!(test) { 2 } else { 1 << 6 };
/// How long a block of [`Evaluation::by_blocks`] with no rank that can go on waits while no
/// other block moves, before it stops.
const BLOCK_PATIENCE: Duration = Duration::from_millis(5);
/// How long a block of [`Evaluation::by_blocks`] with no rank that can go on waits for a block
/// that no thread took up yet: it may be queued behind this one on this thread.
const BLOCK_START_PATIENCE: Duration = Duration::from_micros(100);
/// The most spin-loop hints between two looks of a waiting block of [`Evaluation::by_blocks`].
const BLOCK_MAX_BACKOFF: u32 = 64;
/// Steps a block of [`Evaluation::by_blocks`] costs between two reports of its moves.
const BLOCK_REPORT_STEPS: u64 = 1 << 12;

/// In which order an evaluation takes the steps: all give the same costs, bit for bit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Order {
    /// One thread, ranks from a queue of those that can go on (`Evaluation::by_queue`).
    Queue,
    /// The passes of the matching's [`Levels`] on the pool's threads
    /// (`Evaluation::by_passes`); a matching without levels goes by the queue.
    Passes,
    /// Contiguous blocks of ranks, each by a queue of its own on one of the pool's threads
    /// (`Evaluation::by_blocks`), the queue taking what they leave (all of a matching with
    /// levels: its messages are not numbered by rank).
    Blocks,
    /// [`Order::Blocks`] of fewer ranks each, for an evaluation every thread waits for.
    HelpedBlocks,
}

impl Order {
    /// The order for `m` on the pool's threads (no more than cores): a schedule with
    /// [`Levels`] (the replay levels those of 2^16 steps or more whose ranks move together,
    /// each in most passes: [`Matching::even`], but for rings and chains), by its passes, which
    /// stream through the ranks where a queue jumps from partner to partner and back (on one
    /// thread too); on one thread, any other by the queue; of 2 `BLOCK_MIN_RANKS` ranks or
    /// more (trees, whose passes would narrow to a few ranks near the root), by blocks; smaller
    /// ones, the queue.
    pub fn for_matching(m: &Matching) -> Order {
        match &m.levels {
            Some(_) => Order::Passes,
            _ if threads() < 2 => Order::Queue,
            None if m.ranks() >= 2 * BLOCK_MIN_RANKS => Order::Blocks,
            None => Order::Queue,
        }
    }

    /// [`Order::for_matching`] for an evaluation that every thread of the pool waits for (the
    /// replay's collective over all its ranks), and so takes a block of at once: by blocks from
    /// 2 `HELPED_BLOCK_MIN_RANKS` ranks.
    pub fn for_helped(m: &Matching) -> Order {
        match Order::for_matching(m) {
            Order::Queue if threads() > 1 && m.ranks() >= 2 * HELPED_BLOCK_MIN_RANKS => {
                Order::HelpedBlocks
            }
            o => o,
        }
    }
}

thread_local! {
    /// Tests: how many blocks [`Evaluation::by_blocks`] makes, whatever the threads (0: as
    /// [`threads`] and [`BLOCK_MIN_RANKS`] say). More blocks than threads stop part way (they
    /// wait on blocks not started) and leave the rest to the queue.
    pub(crate) static FORCED_BLOCKS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };

    /// The queues of [`Evaluation::by_queue`] and [`Evaluation::run_block`], kept from call to
    /// call ([`with_kept`]): else a loop of many small collectives allocates them at every
    /// costing (see the `allr` case of tests/bench/run.sh).
    static QUEUES: std::cell::RefCell<(Vec<u32>, VecDeque<u32>)> = std::cell::RefCell::default();
}

/// One pause of a thread looking again and again for what others publish: `spins` spin-loop
/// hints, twice as many at each pause up to `max`, then letting the core go (the thread waited
/// on may be off its core). Looking again at once would pull the cache lines the others are
/// writing.
pub(crate) fn back_off(spins: &mut u32, max: u32) {
    if *spins < max {
        for _ in 0..*spins {
            std::hint::spin_loop();
        }
        *spins *= 2;
    } else {
        std::thread::yield_now();
    }
}

/// The pool's threads, no more than cores (a block whose thread is off its core stalls the
/// others); the cores are asked once (the call reads the affinity mask and cgroup files).
pub(crate) fn threads() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    rayon::current_num_threads().min(cores)
}

/// [`evaluate_matched`] in `scratch`'s arrays, in the [`Order::for_matching`].
pub fn evaluate_in<M: CostModel>(
    m: &Matching,
    model: &M,
    gamma_ns_per_byte: f64,
    start: &[f64],
    scratch: &mut Scratch,
) -> Result<Completion, Error> {
    evaluate_by(
        m,
        model,
        gamma_ns_per_byte,
        start,
        scratch,
        Order::for_matching(m),
    )
}

/// [`evaluate_in`] in `order`.
pub fn evaluate_by<M: CostModel>(
    m: &Matching,
    model: &M,
    gamma_ns_per_byte: f64,
    start: &[f64],
    scratch: &mut Scratch,
    order: Order,
) -> Result<Completion, Error> {
    evaluate_each(m, model, None, gamma_ns_per_byte, start, scratch, order)
}

/// The model of each message where a schedule's pairs of ranks take different parameter sets
/// (the model's §12): message `id` is costed by `models[of[id]]`, at both its ends.
pub struct Each<'a, M> {
    pub models: &'a [M],
    /// A set for each message of the matching, by its id.
    pub of: &'a [u8],
}

impl<M> Clone for Each<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for Each<'_, M> {}

/// [`evaluate_by`], each message costed by its pair's model where `each` says (else `model`,
/// which also ends the ranks).
pub fn evaluate_each<M: CostModel>(
    m: &Matching,
    model: &M,
    each: Option<Each<'_, M>>,
    gamma_ns_per_byte: f64,
    start: &[f64],
    scratch: &mut Scratch,
    order: Order,
) -> Result<Completion, Error> {
    debug_assert!(
        each.is_none_or(|e| e.of.len() == m.bytes.len()),
        "a set a message"
    );
    let p = m.ranks();
    debug_assert_eq!(start.len(), p, "a call time a rank");
    let n = m.bytes.len();
    let Scratch {
        from_sender,
        tr,
        waiter,
        ranks: kept_ranks,
        ends: kept_ends,
        waits,
    } = scratch;
    let waits = std::mem::take(waits);
    // By passes, every value is read in a pass after the one that wrote it (the levels' rule):
    // what earlier costings left can stay, where setting it unknown would take one thread a
    // pass over the arrays (a 262,144-rank barrier's 75 MB a costing).
    let passes = order == Order::Passes && m.levels.is_some();
    for v in [&mut *from_sender, &mut *tr] {
        if !passes {
            v.clear();
        }
        v.resize_with(n, || AtomicU64::new(UNKNOWN.to_bits()));
    }
    let mut ranks = RankState::<M::Port>::starting(kept_ranks, start, &waits, model);
    // One model for every message is its own instance of the evaluation, which reads no set.
    match each {
        None => {
            let ev = Evaluation {
                m,
                pick: One(model),
                gamma_ns_per_byte,
                from_sender,
                tr,
                _model: std::marker::PhantomData,
            };
            ev.run(&mut ranks, waiter, order)?
        }
        Some(e) => {
            let ev = Evaluation {
                m,
                pick: e,
                gamma_ns_per_byte,
                from_sender,
                tr,
                _model: std::marker::PhantomData,
            };
            ev.run(&mut ranks, waiter, order)?
        }
    }
    Ok(completion(
        model,
        ranks,
        kept_ranks,
        kept_ends,
        (n as u64, m.bytes.total()),
    ))
}

/// Which model costs a message of an evaluation: one for all ([`One`]), or each its set's
/// ([`Each`]).
trait Pick<M>: Sync {
    fn model(&self, id: u32) -> &M;
}

/// One model for every message.
struct One<'a, M>(&'a M);

impl<M: Sync> Pick<M> for One<'_, M> {
    #[inline(always)]
    fn model(&self, _: u32) -> &M {
        self.0
    }
}

impl<M: Sync> Pick<M> for Each<'_, M> {
    #[inline(always)]
    fn model(&self, id: u32) -> &M {
        &self.models[self.of[id as usize] as usize]
    }
}

impl<M: CostModel, S: Pick<M>> Evaluation<'_, M, S> {
    /// Every rank as far as it goes, in `order`.
    fn run(
        &self,
        ranks: &mut [RankState<M::Port>],
        waiter: &mut Vec<u32>,
        order: Order,
    ) -> Result<(), Error> {
        let (m, p) = (self.m, self.m.ranks());
        let blocks = |min_ranks| match FORCED_BLOCKS.get() {
            0 => threads().min(p / min_ranks),
            n => n,
        };
        let blocks = match order {
            Order::Blocks => blocks(BLOCK_MIN_RANKS),
            Order::HelpedBlocks => blocks(HELPED_BLOCK_MIN_RANKS),
            _ => 1,
        };
        match (order, &m.levels) {
            (Order::Passes, Some(levels)) => self.by_passes(levels, ranks),
            // Blocks need messages numbered by rank, which a leveled matching's are not.
            _ if blocks > 1 && m.levels.is_none() && self.by_blocks(ranks, waiter, blocks) => {}
            _ => self.by_queue(ranks, waiter)?,
        }
        Ok(())
    }
}

/// The completion of ranks at `ranks` (their states kept in `kept_ranks`, its vectors made of
/// `kept_ends`), which moved `(messages, bytes)`.
fn completion<M: CostModel>(
    model: &M,
    ranks: Vec<RankState<M::Port>>,
    kept_ranks: &mut Option<Box<dyn Any + Send>>,
    kept_ends: &mut [Vec<f64>; 4],
    (messages, bytes): (u64, u64),
) -> Completion {
    let p = ranks.len();
    let [
        mut rank_end_ns,
        mut sender_sync_ns,
        mut receiver_sync_ns,
        mut polled_ns,
    ] = std::mem::take(kept_ends);
    for v in [
        &mut rank_end_ns,
        &mut sender_sync_ns,
        &mut receiver_sync_ns,
        &mut polled_ns,
    ] {
        v.clear();
        v.resize(p, 0.0);
    }
    rank_end_ns
        .par_iter_mut()
        .zip(&mut sender_sync_ns)
        .zip(&mut receiver_sync_ns)
        .zip(&mut polled_ns)
        .zip(&ranks)
        .with_min_len(PARALLEL_MIN_RANKS)
        .for_each(|((((end, ss), rs), polled), st)| {
            *end = model.rank_end(&st.port, st.clock);
            (*ss, *rs) = (st.sender_sync, st.receiver_sync);
            *polled = model.polled(&st.port);
        });
    match kept_ranks.as_mut().and_then(|k| k.downcast_mut()) {
        Some(kept) => *kept = ranks,
        None => *kept_ranks = Some(Box::new(ranks)),
    }
    Completion {
        time_ns: rank_end_ns
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max),
        rank_end_ns,
        sender_sync_ns,
        receiver_sync_ns,
        polled_ns,
        messages,
        bytes,
    }
}

/// Costs `ruled` with rank `r` calling at `start[r]` in `scratch`'s arrays, as
/// [`evaluate_matched`] costs its built schedule, bit for bit: a binomial tree's phases, then
/// a lockstep's rounds, on the same rank states.
pub fn evaluate_ruled<M: CostModel>(
    ruled: &Ruled,
    model: &M,
    gamma_ns_per_byte: f64,
    start: &[f64],
    scratch: &mut Scratch,
) -> Completion {
    let p = start.len();
    let (tree, ls) = match ruled {
        Ruled::Lockstep(ls) => (None, Some(ls)),
        Ruled::Binomial(tree) => (Some(tree), None),
        Ruled::ScatterAllgather(tree, ls) => (Some(tree), Some(ls)),
    };
    // A value a rank; a lockstep's rounds take two (see [`ruled::lockstep`]).
    let slots = if ls.is_some() { 2 * p } else { p };
    let (from_sender, tr, kept_ranks, kept_ends, waits) = scratch.ruled(slots);
    let mut ranks = RankState::<M::Port>::starting(kept_ranks, start, &waits, model);
    let (mut messages, mut bytes) = (0, 0);
    for (n, b) in [
        tree.map(|t| ruled::binomial(t, model, gamma_ns_per_byte, &mut ranks, from_sender, tr)),
        ls.map(|ls| ruled::lockstep(ls, model, gamma_ns_per_byte, &mut ranks, from_sender, tr)),
    ]
    .into_iter()
    .flatten()
    {
        (messages, bytes) = (messages + n, bytes + b);
    }
    completion(model, ranks, kept_ranks, kept_ends, (messages, bytes))
}

/// Queues the rank waiting on message `id`, if one is, and forgets that it waited.
fn wake(waiter: &mut [u32], id: u32, queue: &mut Vec<u32>) {
    let w = std::mem::replace(&mut waiter[id as usize], NONE);
    if w != NONE {
        queue.push(w);
    }
}

/// One evaluation's schedule, the model(s) of its messages and their values.
struct Evaluation<'a, M, S> {
    m: &'a Matching,
    pick: S,
    gamma_ns_per_byte: f64,
    from_sender: &'a [AtomicU64],
    tr: &'a [AtomicU64],
    _model: std::marker::PhantomData<&'a M>,
}

impl<M: CostModel, S: Pick<M>> Evaluation<'_, M, S> {
    /// The model that costs message `id`.
    #[inline(always)]
    fn of(&self, id: u32) -> &M {
        self.pick.model(id)
    }

    /// Every rank as far as it goes, from a queue of those that can go on: a rank waiting on a
    /// message is woken when its other half is called.
    fn by_queue(
        &self,
        ranks: &mut [RankState<M::Port>],
        waiter: &mut Vec<u32>,
    ) -> Result<(), Error> {
        let m = self.m;
        waiter.clear();
        waiter.resize(m.bytes.len(), NONE);
        with_kept(&QUEUES, |(queue, _)| {
            queue.clear();
            queue.extend((0..ranks.len() as u32).rev());
            while let Some(r) = queue.pop() {
                let st = &mut ranks[r as usize];
                while let Some(h) = m.step(r as usize, st.pos) {
                    let (sid, rid, reduction) = m.halves(h);
                    if st.call.is_none() {
                        self.call(st, sid, rid);
                        for id in [sid, rid] {
                            if id != NONE {
                                wake(waiter, id, queue);
                            }
                        }
                    }
                    let call = st.call.expect("set above");
                    if call.is_some_and(|c| c.needs_tr) && get(self.tr, sid).is_nan() {
                        waiter[sid as usize] = r;
                        break;
                    }
                    if rid != NONE && get(self.from_sender, rid).is_nan() {
                        waiter[rid as usize] = r;
                        break;
                    }
                    self.finish(st, sid, rid, reduction);
                }
            }
        });
        for (r, st) in ranks.iter().enumerate() {
            if let Some((send, recv)) = m.step(r, st.pos) {
                let id = |id: u32| match id {
                    NONE => "none".to_string(),
                    id => id.to_string(),
                };
                return Err(Error::Usage(format!(
                    "schedule deadlocks: rank {r} waits forever at step {} (send message {}, receive message {})",
                    st.pos,
                    id(send),
                    id(recv)
                )));
            }
        }
        Ok(())
    }

    /// Every rank as far as it goes, the ranks split into `blocks` contiguous blocks, each run
    /// by one thread from a queue of its own as [`Evaluation::by_queue`] runs them all: a rank
    /// waiting on a message from a rank of its block is woken when that rank calls; one waiting
    /// on another block, or on its receive's call (a rendezvous send), is looked at again when
    /// the block has no other rank to run. Messages are numbered in rank order: a block's own
    /// are one range of ids, and where a message's sender is, its id tells. A block stops
    /// when its ranks are done; or, none of them able to go on, when they wait on each other
    /// only (a deadlock), when no other block is running, or when no other block has moved
    /// for [`BLOCK_PATIENCE`] ([`BLOCK_START_PATIENCE`] while one has not started: it may wait
    /// behind this one on this thread). Whether all ranks are done: [`Evaluation::by_queue`]
    /// takes what is left.
    fn by_blocks(
        &self,
        ranks: &mut [RankState<M::Port>],
        waiter: &mut Vec<u32>,
        blocks: usize,
    ) -> bool {
        let (p, n) = (ranks.len(), self.m.bytes.len());
        let size = p.div_ceil(blocks);
        waiter.clear();
        waiter.resize(n, NONE);
        let mut parts = Vec::with_capacity(blocks);
        let (mut states, mut waiters, mut id) = (ranks, waiter.as_mut_slice(), 0u32);
        for lo in (0..p).step_by(size) {
            let hi = (lo + size).min(p);
            let end = self.m.first_message(hi);
            let (mine, rest) = std::mem::take(&mut states).split_at_mut(hi - lo);
            let (w, wrest) = std::mem::take(&mut waiters).split_at_mut((end - id) as usize);
            parts.push((lo, mine, w, id..end));
            (states, waiters, id) = (rest, wrest, end);
        }
        let shared = Blocks {
            moved: AtomicU64::new(0),
            running: AtomicUsize::new(parts.len()),
            unstarted: AtomicUsize::new(parts.len()),
        };
        parts
            .into_par_iter()
            .map(|(lo, states, waiter, ids)| {
                shared.unstarted.fetch_sub(1, Ordering::AcqRel);
                let done = with_kept(&QUEUES, |(queue, outside)| {
                    self.run_block(lo, states, waiter, ids, &shared, queue, outside)
                });
                shared.running.fetch_sub(1, Ordering::AcqRel);
                done
            })
            .reduce(|| true, |a, b| a && b)
    }

    /// One block of [`Evaluation::by_blocks`]: ranks `lo..`, `states`; `waiter` for the
    /// messages `ids` its ranks send; `queue` and `outside` its queues (emptied first).
    /// Whether its ranks are done.
    #[allow(clippy::too_many_arguments)]
    fn run_block(
        &self,
        lo: usize,
        states: &mut [RankState<M::Port>],
        waiter: &mut [u32],
        ids: Range<u32>,
        shared: &Blocks,
        queue: &mut Vec<u32>,
        outside: &mut VecDeque<u32>,
    ) -> bool {
        let m = self.m;
        queue.clear();
        queue.extend((lo as u32..(lo + states.len()) as u32).rev());
        outside.clear();
        let (mut left, mut steps) = (states.len(), 0u64);
        loop {
            while let Some(r) = queue.pop() {
                let st = &mut states[r as usize - lo];
                loop {
                    let Some(h) = m.step(r as usize, st.pos) else {
                        left -= 1;
                        break;
                    };
                    let (sid, rid, reduction) = m.halves(h);
                    if st.call.is_none() {
                        self.call(st, sid, rid);
                        // A send of the block's (any: `NONE` is out of range).
                        if ids.contains(&sid) {
                            wake(waiter, sid - ids.start, queue);
                        }
                    }
                    let call = st.call.expect("set above");
                    if call.is_some_and(|c| c.needs_tr) && get(self.tr, sid).is_nan() {
                        outside.push_back(r);
                        break;
                    }
                    if rid != NONE && get(self.from_sender, rid).is_nan() {
                        match ids.contains(&rid) {
                            true => waiter[(rid - ids.start) as usize] = r,
                            false => outside.push_back(r),
                        }
                        break;
                    }
                    self.finish(st, sid, rid, reduction);
                    steps += 1;
                    if steps.is_multiple_of(BLOCK_REPORT_STEPS) {
                        shared.moved.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            if left == 0 {
                return true;
            }
            // The ranks waiting outside, in turn: they were put there about in the order the
            // other blocks call their partners, so that the first looks mostly find them.
            let (mut seen, mut backoff, mut misses) = (u64::MAX, 1, 0);
            let mut since: Option<Instant> = None;
            let mut last_look = false;
            while queue.is_empty() {
                let Some(r) = outside.pop_front() else {
                    // Its ranks wait on each other: a deadlock, which the queue names.
                    return false;
                };
                let st = &states[r as usize - lo];
                let (sid, rid, _) = m.halves(m.step(r as usize, st.pos).expect("waiting"));
                let rendezvous = st.call.is_some_and(|c| c.is_some_and(|c| c.needs_tr));
                let waits = rendezvous && get(self.tr, sid).is_nan()
                    || rid != NONE && get(self.from_sender, rid).is_nan();
                if !waits {
                    queue.push(r);
                    break;
                }
                outside.push_back(r);
                misses += 1;
                if misses < outside.len() {
                    continue;
                }
                // None can go on.
                misses = 0;
                if last_look {
                    return false;
                }
                if shared.running.load(Ordering::Acquire) == 1 {
                    // The others are done: one more look sees all they published.
                    last_look = true;
                    continue;
                }
                let now = shared.moved.load(Ordering::Relaxed);
                let patience = match shared.unstarted.load(Ordering::Acquire) {
                    0 => BLOCK_PATIENCE,
                    _ => BLOCK_START_PATIENCE,
                };
                match since {
                    Some(t) if now == seen && t.elapsed() > patience => return false,
                    Some(_) if now == seen => {}
                    _ => (seen, since) = (now, Some(Instant::now())),
                }
                back_off(&mut backoff, BLOCK_MAX_BACKOFF);
            }
        }
    }

    /// Pass after pass of `levels`, each pass's runs split among the pool's threads: all a
    /// run waits for, passes before published.
    fn by_passes(&self, levels: &Levels, ranks: &mut [RankState<M::Port>]) {
        let run = |st: &mut RankState<M::Port>, r: u32, end: u32| {
            while let Some(h) = self.m.step(r as usize, st.pos) {
                let (sid, rid, reduction) = self.m.halves(h);
                if st.call.is_none() {
                    self.call(st, sid, rid);
                }
                if st.pos == end as usize {
                    break;
                }
                self.finish(st, sid, rid, reduction);
            }
        };
        for pass in levels.passes() {
            let runs = match pass {
                Pass::Every(end) if ranks.len() < PARALLEL_MIN_RUNS => {
                    for (r, st) in ranks.iter_mut().enumerate() {
                        run(st, r as u32, end);
                    }
                    continue;
                }
                Pass::Every(end) => {
                    let pieces = ranks.par_chunks_mut(RUNS_PER_PIECE).enumerate();
                    pieces.for_each(|(k, states)| {
                        let base = k * RUNS_PER_PIECE;
                        for j in 0..states.len() {
                            if let Some(ahead) = states.get(j + PREFETCH_AHEAD) {
                                self.m.prefetch(base + j + PREFETCH_AHEAD, ahead.pos);
                            }
                            run(&mut states[j], (base + j) as u32, end);
                        }
                    });
                    continue;
                }
                Pass::Runs(runs) => runs,
            };
            if runs.len() < PARALLEL_MIN_RUNS {
                for &(r, end) in runs {
                    run(&mut ranks[r as usize], r, end);
                }
                continue;
            }
            // Runs are by rank: each piece's ranks lie apart from the others'.
            let ends = runs
                .chunks(RUNS_PER_PIECE)
                .map(|piece| piece[piece.len() - 1].0 as usize + 1);
            let bases = std::iter::once(0).chain(ends.clone());
            let pieces: Vec<_> = runs
                .chunks(RUNS_PER_PIECE)
                .zip(cut(ranks, ends))
                .zip(bases)
                .collect();
            pieces.into_par_iter().for_each(|((piece, states), base)| {
                for (k, &(r, end)) in piece.iter().enumerate() {
                    if let Some(&(ahead, _)) = piece.get(k + PREFETCH_AHEAD) {
                        self.m
                            .prefetch(ahead as usize, states[ahead as usize - base].pos);
                    }
                    run(&mut states[r as usize - base], r, end);
                }
            });
        }
    }

    /// The call of `st`'s step `(sid, rid)` at its clock: what its halves publish.
    #[inline(always)]
    fn call(&self, st: &mut RankState<M::Port>, sid: u32, rid: u32) {
        let mut call = None;
        if sid != NONE {
            let c = (self.of(sid)).send_call(&mut st.port, st.clock, self.m.bytes.get(sid));
            set(self.from_sender, sid, c.to_receiver);
            call = Some(c);
        }
        if rid != NONE {
            set(self.tr, rid, st.clock);
        }
        st.call = Some(call);
    }

    /// Costs `st`'s step `(sid, rid)` (a `reduction`'s bytes), called, what it waits for
    /// published; the rank then stands at its next step.
    #[inline(always)]
    fn finish(&self, st: &mut RankState<M::Port>, sid: u32, rid: u32, reduction: Option<u64>) {
        let (m, t) = (self.m, st.clock);
        let send = st.call.expect("called").map(|c| {
            // An eager send's return does not depend on `tr`.
            let tr = if c.needs_tr { get(self.tr, sid) } else { t };
            self.of(sid).send_return(m.bytes.get(sid), &c, t, tr)
        });
        // The halves tell the step's kind: a matched schedule has an id on every half.
        let step = match (send, rid) {
            (None, NONE) => StepCost {
                ret: t + reduction.unwrap_or(0) as f64 * self.gamma_ns_per_byte,
                sender_sync: 0.0,
                receiver_sync: 0.0,
            },
            (Some(c), NONE) => StepCost {
                ret: c.ret,
                sender_sync: c.sync,
                receiver_sync: 0.0,
            },
            (None, rid) => {
                let (bytes, ts) = (m.bytes.get(rid), get(self.from_sender, rid));
                let c = self.of(rid).recv_return(&mut st.port, t, bytes, ts);
                StepCost {
                    ret: c.ret,
                    sender_sync: 0.0,
                    receiver_sync: c.sync,
                }
            }
            (Some(c), rid) => {
                let (bytes, ts) = (m.bytes.get(rid), get(self.from_sender, rid));
                let sent = m.bytes.get(sid);
                (self.of(rid)).sendrecv_return(&mut st.port, t, c, sent, bytes, ts)
            }
        };
        st.clock = step.ret;
        st.sender_sync += step.sender_sync;
        st.receiver_sync += step.receiver_sync;
        st.call = None;
        st.pos += 1;
    }
}

/// What the blocks of [`Evaluation::by_blocks`] tell each other.
struct Blocks {
    /// Grows as the blocks cost steps.
    moved: AtomicU64,
    /// Blocks not yet stopped.
    running: AtomicUsize,
    /// Blocks no thread took up yet.
    unstarted: AtomicUsize,
}

struct RankState<P> {
    pos: usize,
    clock: f64,
    sender_sync: f64,
    receiver_sync: f64,
    /// The current step's call effects are published; its send half's call, if any.
    call: Option<Option<SendCall>>,
    port: P,
}

impl<P: Default + Send + 'static> RankState<P> {
    /// Ranks calling at `start`, in the vector `kept` holds if it holds one of this port.
    fn starting<M: CostModel<Port = P>>(
        kept: &mut Option<Box<dyn Any + Send>>,
        start: &[f64],
        waits: &[Wait],
        model: &M,
    ) -> Vec<RankState<P>> {
        // Taken out of its box, which stays for [`completion`] to put them back in.
        let mut ranks: Vec<RankState<P>> = kept
            .as_mut()
            .and_then(|k| k.downcast_mut())
            .map(std::mem::take)
            .unwrap_or_default();
        ranks.clear();
        ranks.par_extend(
            (start.par_iter().enumerate())
                .with_min_len(PARALLEL_MIN_RANKS)
                .map(|(r, &clock)| RankState {
                    pos: 0,
                    clock,
                    sender_sync: 0.0,
                    receiver_sync: 0.0,
                    call: None,
                    port: match waits.get(r) {
                        Some(&w) => model.port_at(w),
                        None => P::default(),
                    },
                }),
        );
        ranks
    }
}
