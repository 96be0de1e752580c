//! LogGPS replay (MODEL.md §3–5): the measured computation is kept, every MPI routine's
//! duration becomes the model's cost. A longest-path computation over the happens-before
//! graph. On several threads each takes a block of ranks and runs them round and round, each
//! as far as its partners' predicted call times are known, reading what the other threads
//! publish as they go ([`run_owned`]; one thread takes every rank as one block when there are
//! many, [`ONE_BLOCK_MIN_RANKS`]). Then, or from the start on one thread with fewer ranks,
//! waves: each wave advances every runnable rank until it needs a partner's call time that is
//! not known yet; the ranks whose partners moved run in the next wave, and a wave that leaves
//! ranks waiting on each other names the deadlock. Every predicted time is a pure function of
//! the times it depends on, so the result is the same bit for bit whatever the thread count or
//! the order of the ranks.
//!
//! Under LogGP ([`Model::LogGp`], Alexandrov et al. 1995) each rank keeps one network [`Port`],
//! advanced by its own events in program order, with the rule of LogGP's [`CostModel`] so that a
//! traced collective replays like its modeled schedule:
//! - a send of `k` bytes (`MPI_Send`, `MPI_Isend`, the send half of `MPI_Sendrecv`, any mode)
//!   called at `ts` sends its first byte at `first_out = max(ts + o, send_ready)`, its last at
//!   `last_out = first_out + (k−1)G` (a 0-byte message counts as one byte), which arrives at
//!   `last_out + L`; the port's next send starts no earlier than `last_out + g` and its next
//!   receive no earlier than `last_out`. A blocking send returns at `first_out`; an `MPI_Isend`
//!   costs `o` and its Wait's blocking twin returns at `first_out`;
//! - a receive called at `tr` (its blocking twin, for a request) returns at `max(tr, last_in) + o`,
//!   `last_in = max(arrival, recv_ready + (k−1)G)`; the port's next receive starts no earlier
//!   than `last_in + g` and its next send no earlier than `last_in`. Receives go through the port
//!   when the call that completes them is costed; a Wait or Test completing several takes them in
//!   the order their last bytes arrive. `MPI_Irecv` costs `o`;
//! - `MPI_Sendrecv` is its send half, then its receive called at the send's `first_out`;
//! - Wait, Waitall and Test follow MODEL.md §4's Wait rule with these completions; `MPI_Probe`
//!   returns at `max(tp, arrival) + o`; nothing ever goes by rendezvous, so sender
//!   synchronization is 0 and waiting for an arrival is receiver synchronization;
//! - a modeled collective is costed on fresh ports (what a rank's port still has to do when it
//!   calls one is not carried into the schedule, nor the schedule's traffic out of it).
//!
//! A send event publishes its `first_out` where other events publish their call time: the
//! receiver computes the arrival from it, and no reader needs a send's call time.

use crate::collectives::eval;
use crate::collectives::schedule::Matching;
use crate::collectives::traced::{self, Choice, op_of};
use crate::collectives::{Op, Spec};
use crate::error::TraceError;
use crate::graph::{HbGraph, NONE, rendezvous_at, rendezvous_in};
use crate::memory::with_kept;
use crate::model::{Cost, CostModel, Model, Params, Port, SavedFold, WaitFold};
use crate::pages::Pages;
use crate::trace::{PEER_NULL, Rank, Routine, Shape, Trace, list_some, prefetch, prefetch_ptr};
use petgraph::graph::DiGraph;
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, TryLockError};
use std::time::{Duration, Instant};

/// One rank's predicted timeline, split as in the paper's Fig. 6. The four parts add up to
/// `end_ns`; the rank's start offset counts as computation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RankBreakdown {
    pub rank: u32,
    pub end_ns: f64,
    pub computation_ns: f64,
    pub communication_ns: f64,
    pub sender_sync_ns: f64,
    pub receiver_sync_ns: f64,
    /// The rank's end read from the trace (clock-corrected, from time 0).
    pub measured_end_ns: f64,
    /// Events replayed (fewer than the rank's events when an unfinished trace cuts it short).
    pub events: u64,
    /// Time inside collectives (measured mode), also counted in the parts above.
    pub collective_ns: f64,
    /// The routine of the rank's collective calls, where it called one only: all of that time
    /// is its (a vector of one a rank was 1 MB on 65,536 ranks, made at the replay's end).
    pub collective_routine: Option<Routine>,
    /// That time per collective routine, where the rank called several (else empty): see
    /// [`RankBreakdown::by_routine`].
    pub collective_kinds: Vec<(Routine, f64)>,
}

impl RankBreakdown {
    /// The rank's time in collectives per routine, for the routines it called.
    pub fn by_routine(&self) -> impl Iterator<Item = (Routine, f64)> + '_ {
        let one = self.collective_routine.map(|k| (k, self.collective_ns));
        one.into_iter().chain(self.collective_kinds.iter().copied())
    }
}

/// The replay's result.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    pub ranks: Vec<RankBreakdown>,
    pub predicted_ns: f64,
    pub measured_ns: f64,
    pub warnings: Vec<String>,
}

impl Prediction {
    /// `100·(Tpred − Tmeas)/Tmeas`.
    pub fn error_pct(&self) -> f64 {
        if self.measured_ns > 0.0 {
            100.0 * (self.predicted_ns - self.measured_ns) / self.measured_ns
        } else {
            0.0
        }
    }
}

/// What [`Shared::calls`] holds for a call time not yet known: they hold a time's bits
/// complemented, so that memory the system hands over zeroed needs no pass to mark them all
/// unknown (no time has all bits set: that is a NaN).
const UNKNOWN: u64 = 0;
/// Waves with fewer runnable ranks than this run on the calling thread.
const PARALLEL_MIN_RANKS: usize = 4;
/// From this many ranks, one thread runs them as one block, round and round, before waves: a
/// block lets a rank go past a partner run earlier in the same pass, and a pass only looks at
/// what its ranks wait on, where a wave files every stopped rank under its partner (random
/// accesses over every rank). Replay at one thread, waves -> block: the 1,048,576-rank
/// dissemination 16.3 -> 7.3 s (9.2 M runs of a rank -> 2.1 M), the 262,144-rank one 694 -> 506
/// ms. With fewer ranks waves won: the 64-rank ring 138 -> 161 ms, where a wave, running a rank
/// whose partner was ahead when it began, took half the runs (0.64 M, not 1.26 M).
const ONE_BLOCK_MIN_RANKS: usize = 1 << 17;

/// What a rank needs before it can go on.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Dep {
    /// The predicted call time of event `.1` of rank `.0`.
    Event(u32, u32),
    /// Every participant's arrival at collective instance `.0`.
    Instance(u32),
}

#[derive(Clone, Copy, Default)]
enum Outcome {
    #[default]
    Done,
    Blocked(Dep),
}

/// What one run of a rank in a wave did.
#[derive(Clone, Copy, Default)]
struct Ran {
    rank: u32,
    out: Outcome,
    /// Events it replayed.
    events: u32,
    /// Where it stopped.
    pos: u32,
}

/// Arrivals at modeled collectives a thread batches before it writes their call times.
const STARTS_BATCH: usize = 4096;

/// Ranks a wave's parallel pieces hold.
const WAVE_CHUNK: usize = 256;
/// How long a thread of [`run_owned`] waits while no thread moves before it ends its round.
/// Both blocks stop moving for good only on a deadlock or an unfinished trace; a shorter
/// stall is the host taking a core away (this machine's vCPUs: pauses of 1-10 ms a few times a
/// second in slow hours), and a thread that gave up there left its ranks until the other
/// gave up too: the Gaussian elimination's 2-thread replay took two or three rounds in 2 of 15
/// runs of a noisy hour with 5 ms, none with 50.
const OWNED_PATIENCE: Duration = Duration::from_millis(50);
/// The most spin-loop hints between two looks of an idle thread of [`run_owned`], before it
/// yields its core at each look. Short: a thread of the Gaussian elimination waits on the
/// other a thousand times, a few microseconds each; on this machine's AMD EPYC a hint is 25 ns,
/// and 256 of them (looks of 1, 2, 4 up to 256 hints: 12.6 us before the first yield) left a
/// waiter asleep in its hints for microseconds after the partner had published.
const OWNED_MAX_BACKOFF: u32 = 16;
/// The spin-loop hints a thread waiting for another's costing of a collective makes, one a
/// look, before it yields its core at each look (a costing takes long: it need not look often).
const COSTING_MAX_SPINS: u32 = 256;
/// Events replayed by the threads of [`run_owned`] between two progress reports.
const OWNED_REPORT_EVENTS: u64 = 1 << 16;
/// Events a thread of [`run_owned`] replays before it adds them to the count all threads see.
const OWNED_SHARE_EVENTS: u32 = 1 << 10;
/// How many ranks ahead a wave prefetches.
const PREFETCH_RANKS_AHEAD: usize = 4;

/// Asks for the cache lines rank `r`'s next run starts with: its state, and its columns at
/// event `pos`.
fn prefetch_run(sh: &Shared<'_>, states: &[Mutex<RankState>], r: usize, pos: usize) {
    let st: *const Mutex<RankState> = &states[r];
    for off in (0..std::mem::size_of::<Mutex<RankState>>()).step_by(64) {
        prefetch_ptr(st.cast::<u8>().wrapping_add(off));
    }
    let e = sh.offsets[r] + pos;
    if e < sh.calls.len() {
        prefetch(&sh.calls[e]);
        sh.g.prefetch(e);
        sh.trace.events.prefetch_run(r, e);
    }
}

/// A rank's replay so far: 104 bytes with its lock (on 65,536 ranks, 1.5 MB less than the 128
/// it took with the fold's call time, an `Option` of the last request and two boxes; 96 until
/// its collective time came out of a box that every rank of a collective loop had, 64 bytes).
struct RankState {
    pos: u32,
    /// Collective calls made so far: the instance of the next where the graph implies it
    /// ([`HbGraph::implicit`]).
    colls: u32,
    /// How many requests the completion call at `pos` had costed when it blocked (0: none),
    /// what they gave in `fold`: a Waitall on P requests that waits for them one by one costs
    /// O(P), not O(P²).
    resume_at: u32,
    /// Whether the call of `pos` is published.
    published: bool,
    /// The last request a completion call costed, and the event that created it (the event
    /// [`NO_EVENT`]: none yet).
    last_request: (u32, u32),
    /// Predicted time reached so far: the call of `pos` once published, else the last return.
    clock: f64,
    /// The fold of the completion call at `pos` when `resume_at` > 0, but its call time, the
    /// clock; and whether its critical operation is a send.
    fold: SavedFold,
    fold_send_side: bool,
    parts: Parts,
    /// Time in collectives, and the routine of the first collective call: all of that time is
    /// its routine's until the rank calls another, when the time per routine goes to `rare`
    /// (on a loop of one collective, no rank needs a box: 64 bytes a rank with it).
    collective: f64,
    first_collective: Option<Routine>,
    /// What only some ranks have (boxed: 8 bytes for a rank that has none of it).
    rare: Option<Box<Rare>>,
}

/// No event (no rank has `u32::MAX` events: see [`crate::graph::NONE`]).
const NO_EVENT: u32 = u32::MAX;

/// The sums a rank's [`RankBreakdown`] is made of (its collectives' in [`Rare`]).
#[derive(Clone, Copy, Default)]
struct Parts {
    computation: f64,
    communication: f64,
    sender_sync: f64,
    receiver_sync: f64,
}

/// A rank state's parts that only ranks calling collectives of several routines, or replayed
/// under LogGP, have.
#[derive(Default)]
struct Rare {
    /// Time in collectives per routine, for the routines this rank called (empty while it
    /// called one only: [`RankState::first_collective`]).
    kinds: Vec<(Routine, f64)>,
    /// LogGP only (boxed apart: most ranks of a trace of collectives have none).
    loggp: Option<Box<LogGpState>>,
}

impl Rare {
    /// The LogGP state in a rank state's `rare` (a field's borrow, where the state's other
    /// fields are borrowed too).
    #[inline]
    fn loggp(rare: &mut Option<Box<Rare>>) -> Option<&mut LogGpState> {
        rare.as_deref_mut().and_then(|x| x.loggp.as_deref_mut())
    }
}

/// A rank's network port under LogGP, and the messages the completion call it is blocked in
/// has yet to take through it.
#[derive(Default)]
struct LogGpState {
    port: Port,
    inbound: Vec<Inbound>,
}

impl RankState {
    fn new(model: &Model) -> RankState {
        RankState {
            pos: 0,
            colls: 0,
            resume_at: 0,
            published: false,
            last_request: (0, NO_EVENT),
            clock: 0.0,
            fold: SavedFold::default(),
            fold_send_side: false,
            parts: Parts::default(),
            collective: 0.0,
            first_collective: None,
            rare: matches!(model, Model::LogGp(_)).then(|| {
                Box::new(Rare {
                    loggp: Some(Box::default()),
                    ..Rare::default()
                })
            }),
        }
    }

    /// The rank's LogGP state (under LogGP).
    #[inline]
    fn loggp(&mut self) -> Option<&mut LogGpState> {
        Rare::loggp(&mut self.rare)
    }

    /// Adds `t` spent in a collective `routine`.
    #[cold]
    fn add_collective(&mut self, routine: Routine, t: f64) {
        let first = *self.first_collective.get_or_insert(routine);
        let several = self.rare.as_ref().is_some_and(|x| !x.kinds.is_empty());
        if first == routine && !several {
            self.collective += t;
            return;
        }
        let rare = self.rare.get_or_insert_with(Box::default);
        if rare.kinds.is_empty() {
            // All the time so far was the first routine's; room for it and this one.
            rare.kinds.reserve_exact(2);
            rare.kinds.push((first, self.collective));
        }
        self.collective += t;
        match rare.kinds.iter_mut().find(|(k, _)| *k == routine) {
            Some((_, s)) => *s += t,
            // One routine more, room for it alone: a vector's first growth, room for four, put
            // the Allreduce trace's peak 4.5 bytes/event higher at 1 thread.
            None => {
                rare.kinds.reserve_exact(1);
                rare.kinds.push((routine, t));
            }
        }
    }

    /// Where rank `r` (of `len` events) got to: its last event replayed is the one it is
    /// blocked in or finalized at.
    fn breakdown(self, r: usize, len: usize, measured_end_ns: f64) -> RankBreakdown {
        let p = self.parts;
        RankBreakdown {
            rank: r as u32,
            end_ns: self.clock,
            computation_ns: p.computation,
            communication_ns: p.communication,
            sender_sync_ns: p.sender_sync,
            receiver_sync_ns: p.receiver_sync,
            measured_end_ns,
            events: (self.pos as usize + 1).min(len) as u64,
            collective_ns: self.collective,
            collective_routine: match &self.rare {
                Some(x) if !x.kinds.is_empty() => None,
                _ => self.first_collective,
            },
            collective_kinds: self.rare.map_or_else(Vec::new, |x| x.kinds),
        }
    }
}

/// One participant's part of a modeled instance: its predicted return and the sender and
/// receiver synchronization inside its schedule.
#[derive(Clone, Copy, Debug)]
struct ModeledReturn {
    ret: f64,
    sender_sync: f64,
    receiver_sync: f64,
}

/// A modeled instance's returns, held from its costing to its last participant's read: 24
/// bytes a participant (a 65,536-rank Allreduce in a loop of 1,000 kept 2 GB when all stayed).
#[derive(Default)]
struct Modeled {
    returns: RwLock<Returns>,
    /// Participants yet to read theirs.
    unread: AtomicU32,
}

#[derive(Default)]
enum Returns {
    /// No participant's call time flushed yet (and none ever, for an instance that is not
    /// costed by a schedule).
    #[default]
    Unknown,
    /// The participants' call times so far, in communicator rank order (NaN: not yet): kept
    /// here from the first arrival to the costing, not in [`Shared::calls`], which then holds
    /// no collective call (8 bytes an event, the whole array for a trace of collectives alone).
    Arriving(Vec<f64>),
    /// Replayed as measured.
    Measured,
    /// The costing's own vectors, in communicator rank order (they were copied into a vector
    /// of returns by world rank, sorted: 32 bytes a participant more, twice where two were
    /// held).
    Ready(Arc<eval::Completion>),
    /// Every participant has read its own.
    Read,
}

thread_local! {
    /// The thread's batches, kept from wave to wave and round to round (flushed after each;
    /// [`with_kept`]).
    static LOCAL: RefCell<Local> = RefCell::default();
}

/// What a thread's runs tell the collective instances, batched until [`Shared::flush`]: the
/// participants of a 65,536-rank Allreduce made five atomic writes each to the instance's few
/// cache lines, which bounced between the threads (two threads replayed it slower than one).
#[derive(Default)]
struct Local {
    /// `(instance, arrivals, latest call time's bits)`.
    arrivals: Vec<(u32, u32, u64)>,
    /// `(instance, participants that read their return)`.
    reads: Vec<(u32, u32)>,
    /// The returns of the instance read last.
    returns: Option<(u32, Arc<eval::Completion>)>,
    /// `(instance, world rank, call time)` of arrivals at modeled collectives.
    starts: Vec<(u32, u32, f64)>,
}

/// The data every rank reads while replaying.
struct Shared<'a> {
    trace: &'a Trace,
    g: &'a HbGraph,
    /// Bytes above which a message goes by rendezvous (never under LogGP).
    eager_limit: u64,
    model: &'a Model,
    /// Predicted call times (f64 bits complemented, [`UNKNOWN`] until known), all ranks in one
    /// array: rank `r`'s event `i` at `offsets[r] + i`, for the point-to-point events only
    /// ([`read_by_partners`]; other entries stay unknown, and the array is empty where there
    /// are none). Under LogGP a send's entry is its `first_out` instead.
    calls: Pages<AtomicU64>,
    /// Whether [`advance`] asks ahead for what events will read of their partners
    /// ([`PARTNER_PREFETCH_MIN_RANKS`]).
    prefetch_partners: bool,
    offsets: &'a [usize],
    arrived: Vec<AtomicU32>,
    max_call: Vec<AtomicU64>,
    measured_last_arrival: Vec<f64>,
    /// Per instance of a modeled collective (empty where collectives replay as measured).
    shapes: Vec<Shaped>,
    /// Per communicator but the world, its `(world rank, communicator rank)` pairs by world
    /// rank: where an arrival's call time goes in [`Returns::Arriving`].
    places: HashMap<u32, Vec<(u32, u32)>>,
    /// Time 0 ([`Trace::measured_t0`]): each rank starts at its measured begin from there.
    t0: f64,
    coll: &'a Choice,
    /// Per instance, once every participant has arrived (modeled collectives): each
    /// participant's predicted return and synchronization, until all have read theirs.
    modeled: Vec<Modeled>,
    /// Instances that could not be modeled, with why (they replay as measured).
    unmodeled: Mutex<Vec<String>>,
    /// Schedules of modeled instances, built and matched once for all instances of one shape.
    schedules: Mutex<ScheduleCache>,
    /// Instances whose last participant arrived since the waves last looked.
    completed: Mutex<Vec<u32>>,
    /// The arrays a modeled instance's costing fills, kept from one to the next: made afresh
    /// (8 MB a call of a 65,536-rank Allreduce) by whichever thread costed the call, they
    /// stayed in each thread's heap once freed (the Allreduce trace peaked at 84-100
    /// bytes/event at 2 threads, 73 at 1; 80-82 since). One costing at a time holds them;
    /// another costed meanwhile makes its own.
    scratch: Mutex<eval::Scratch>,
    /// What costings hand on, under a lock of its own: taken with the scratch's, a flush
    /// that held it briefly made a costing on the other thread allocate its own arrays
    /// (6 MB more at 2 threads on the 65,536-rank Allreduce loop).
    spare: Mutex<Spare>,
}

/// A modeled instance's schedule's bytes and root, and its operation (None: not one a schedule
/// costs).
type Shaped = (u64, u32, Option<Op>);

/// The vectors one instance's costing hands to the next.
#[derive(Default)]
struct Spare {
    /// The participants' call times of the instance costed last, for the next instance's
    /// arrivals ([`Returns::Arriving`]).
    starts: Vec<f64>,
    /// Returns every participant has read, held nowhere else, for the next costing to fill
    /// again (the vectors and the shared block: no allocation a call).
    returns: Option<Arc<eval::Completion>>,
}

/// What a collective's schedule depends on (the cost model is the replay's).
#[derive(Clone, Copy, PartialEq)]
struct ScheduleKey {
    op: Op,
    algorithm: &'static str,
    ranks: usize,
    bytes: u64,
    root: usize,
    segment: u64,
    postal_h: Option<u64>,
}

/// Schedules of fewer steps are not leveled (finding the passes its threads can share took
/// about one evaluation when done on one thread; on two, a 262,144-rank barrier's take 45 ms, an
/// evaluation by them 70-100).
const LEVELED_MIN_STEPS: usize = 1 << 16;
/// The fewest steps of a schedule whose memory is handed back to the system once it is matched:
/// on the 65,536-rank Allreduce loop (binomial, 327,675 steps), peak 71.5 -> 65.8 bytes/event
/// at 1 thread, 74.2 -> 68.5 at 2, for 1.2 ms of `mi_collect` (medians of 6 alternating runs;
/// the 2-thread replay 1-3% longer over 12); by recursive doubling, whose levels were found at 2
/// threads, 126.4 -> 111.8 (one run).
const RELEASE_SCHEDULE_MIN_STEPS: usize = 1 << 18;

/// The fewest runs a pass of a leveled schedule holds on average: as many as a pass needs to
/// be shared by the threads at all (narrower ones run on one; a ring Allreduce on 1,024 ranks,
/// 2,046 passes of 1,024 runs, replayed in 0.87-0.88 s at 2 threads by its passes, 0.48-0.51
/// by blocks, where 1,024 was the least).
const LEVELED_MIN_WIDTH: usize = 1 << 12;

/// The fewest ranks of a collective costed from its rule ([`crate::collectives::Ruled`]) where
/// one gives its steps: a lockstep's pass over fewer is too short to share among the threads,
/// where a built schedule's blocks, which every thread waiting for the costing takes part in,
/// are shared at any size (the 1,024-rank Allreduce loop, 10,000 calls by recursive doubling:
/// replay at 2 threads 0.71-0.74 s built, 0.77-1.07 s in lockstep; at 1 thread 1.17-1.23 s and
/// 1.29 s).
const RULED_MIN_RANKS: usize = 1 << 12;

/// A built schedule, matched: all its evaluation reads.
type Built = Arc<Matching>;

/// The schedules built most recently, at most its budget of steps in all, or the newest alone
/// if it has more: a trace repeats a few collectives (a loop's Allreduce) many times.
struct ScheduleCache {
    /// Oldest first.
    entries: Vec<(ScheduleKey, Built, usize)>,
    steps: usize,
    budget: usize,
}

/// Steps (over all ranks) the schedule cache keeps beyond the newest schedule: their matchings
/// take at most 16 bytes a step, about 67 MB; or as many as the trace has events. A loop of an
/// Allreduce, a Barrier and a Bcast on 262,144 ranks (6.5 M steps, the Barrier's 4.7 M; 8.4 M
/// events in 10 turns) built and matched all three again at every turn: replay 9.4 -> 3.9 s at
/// 1 thread, 12.0 -> 2.6 s at 2, and its peak fell, 110 -> 98 bytes/event (one run each).
const SCHEDULE_CACHE_STEPS: usize = 1 << 22;

impl ScheduleCache {
    /// A cache for a replay of `events` events.
    fn for_events(events: usize) -> ScheduleCache {
        ScheduleCache {
            entries: Vec::new(),
            steps: 0,
            budget: SCHEDULE_CACHE_STEPS.max(events),
        }
    }

    fn get(&self, key: &ScheduleKey) -> Option<Built> {
        self.entries
            .iter()
            .find(|(k, ..)| k == key)
            .map(|(_, b, _)| Arc::clone(b))
    }

    /// Keeps `built`, forgetting the oldest to make room: all of them for one over the budget
    /// alone (a loop's collective on 2^20 ranks, 5.2 M steps, was built and matched again at
    /// every call: 20 calls replayed in 11.2 s at 1 thread).
    fn put(&mut self, key: ScheduleKey, built: &Built) {
        let steps = built.steps();
        if self.get(&key).is_some() {
            return;
        }
        while !self.entries.is_empty() && self.steps + steps > self.budget {
            let (_, _, s) = self.entries.remove(0);
            self.steps -= s;
        }
        self.entries.push((key, Arc::clone(built), steps));
        self.steps += steps;
    }
}

/// A request's predicted completion and what it waited for.
struct Completion {
    done: f64,
    /// The synchronization inside the blocking twin's duration.
    sync: f64,
    unblock: f64,
    send_side: bool,
}

impl Completion {
    fn of(c: Cost, send_side: bool) -> Completion {
        Completion {
            done: c.ret,
            sync: c.sync,
            unblock: c.unblock,
            send_side,
        }
    }
}

/// A LogGP message its receiver has yet to take through its port: the receive (or its blocking
/// twin) called at `t`, the last of `bytes` bytes arriving at `arrival`.
#[derive(Clone, Copy)]
struct Inbound {
    t: f64,
    arrival: f64,
    bytes: u64,
}

/// A completion, or under LogGP a receive whose completion depends on the port.
enum Pending {
    Done(Completion),
    Inbound(Inbound),
}

impl Shared<'_> {
    #[inline(always)]
    fn call(&self, r: usize, i: usize) -> Result<f64, Dep> {
        self.call_at(self.offsets[r] + i, r as i32)
    }

    /// The predicted call time of global event `e`, most likely an event of rank `hint`
    /// (the peer a message names; any value will do).
    #[inline(always)]
    fn call_at(&self, e: usize, hint: i32) -> Result<f64, Dep> {
        match self.calls[e].load(Ordering::Acquire) {
            UNKNOWN => {
                // Not a binary search over all ranks for every blocked receive when the hint
                // is right (it is, but for wildcards).
                let (q, j) = match usize::try_from(hint) {
                    Ok(q)
                        if q < self.trace.nranks()
                            && (self.offsets[q]..self.offsets[q + 1]).contains(&e) =>
                    {
                        (q, e - self.offsets[q])
                    }
                    _ => self.trace.events.locate(e),
                };
                Err(Dep::Event(q as u32, j as u32))
            }
            bits => Ok(f64::from_bits(!bits)),
        }
    }

    /// Participant `r`'s modeled return from instance `x` (all participants arrived), None when
    /// the instance replays as measured. Each participant reads its own once; the last read
    /// flushed frees them.
    #[inline(never)]
    fn modeled_return(&self, x: u32, r: u32, local: &mut Local) -> Option<ModeledReturn> {
        match local.reads.iter_mut().find(|(y, _)| *y == x) {
            Some((_, n)) => *n += 1,
            None => local.reads.push((x, 1)),
        }
        if !matches!(&local.returns, Some((y, _)) if *y == x) {
            let slot = &self.modeled[x as usize];
            let ready = |rs: &Returns| match rs {
                Returns::Unknown | Returns::Arriving(_) => None,
                Returns::Measured => Some(None),
                Returns::Ready(ends) => Some(Some(Arc::clone(ends))),
                Returns::Read => unreachable!("a participant reads its return once"),
            };
            let mut idle = 0u32;
            let got = loop {
                match slot.returns.try_read() {
                    Ok(rs) if let Some(got) = ready(&rs) => break got,
                    Err(TryLockError::Poisoned(_)) => panic!("a thread costing returns panicked"),
                    _ => {}
                }
                if let Ok(mut rs) = slot.returns.try_write() {
                    let starts = match &mut *rs {
                        Returns::Arriving(starts) => Some(std::mem::take(starts)),
                        Returns::Unknown => Some(Vec::new()),
                        _ => None,
                    };
                    if let Some(starts) = starts {
                        *rs = self.cost_instance(x, starts);
                    }
                    break ready(&rs).expect("costed");
                }
                // Another thread costs it, perhaps by passes its threads can share: this one
                // takes a part, where blocking on the lock would leave them all to the other.
                // With nothing to take for a while, it lets its core go (more threads than
                // cores: the one costing may need it).
                match rayon::yield_now() {
                    Some(rayon::Yield::Executed) => idle = 0,
                    _ if idle < COSTING_MAX_SPINS => {
                        idle += 1;
                        std::hint::spin_loop();
                    }
                    _ => std::thread::yield_now(),
                }
            };
            if let Some((_, read)) = local.returns.replace((x, got?)) {
                self.recycle_returns(read);
            }
        }
        let c = &local.returns.as_ref().expect("set above").1;
        let k = self.place(x, r);
        Some(ModeledReturn {
            ret: c.rank_end_ns[k],
            sender_sync: c.sender_sync_ns[k],
            receiver_sync: c.receiver_sync_ns[k],
        })
    }

    /// World rank `r`'s communicator rank in instance `x`.
    #[inline]
    fn place(&self, x: u32, r: u32) -> usize {
        place(&self.places, self.g.instances[x as usize].comm, r)
    }

    /// Publishes what `local` batched: arrivals (an instance whose last participant arrived is
    /// listed as completed) and reads (an instance all of whose participants read their returns
    /// lets them go).
    fn flush(&self, local: &mut Local) {
        // The call times first: an instance is costed once its arrivals are all counted.
        self.flush_starts(local);
        // The reads before the arrivals, the returns read last let go: the returns all
        // participants have read are then there for the costing that arrivals may let another
        // thread start (the 262,144-rank trace of three collectives held three instances'
        // returns at 1 thread, 24 bytes a rank each).
        if let Some((_, held)) = local.returns.take() {
            self.recycle_returns(held);
        }
        for (x, n) in local.reads.drain(..) {
            let slot = &self.modeled[x as usize];
            if slot.unread.fetch_sub(n, Ordering::AcqRel) == n {
                let read =
                    std::mem::replace(&mut *slot.returns.write().expect("returns"), Returns::Read);
                if let Returns::Ready(returns) = read {
                    self.recycle_returns(returns);
                }
            }
        }
        for (x, n, latest) in local.arrivals.drain(..) {
            self.max_call[x as usize].fetch_max(latest, Ordering::AcqRel);
            if self.arrived[x as usize].fetch_add(n, Ordering::AcqRel) + n
                == self.g.instances[x as usize].size
            {
                self.completed.lock().expect("completed").push(x);
            }
        }
    }

    /// Writes the call times `local` batched into their instances (at most [`STARTS_BATCH`]:
    /// a thread's block of 32,768 ranks batched 512 kB of them).
    fn flush_starts(&self, local: &mut Local) {
        for run in local.starts.chunk_by(|a, b| a.0 == b.0) {
            let x = run[0].0 as usize;
            let mut rs = self.modeled[x].returns.write().expect("returns");
            if matches!(*rs, Returns::Unknown) {
                *rs = Returns::Arriving(self.fresh_starts(self.g.instances[x].size as usize));
            }
            let Returns::Arriving(starts) = &mut *rs else {
                unreachable!("an instance is costed once all its participants arrived")
            };
            for &(x, r, t) in run {
                starts[self.place(x, r)] = t;
            }
        }
        local.starts.clear();
    }

    /// An instance's vector of `n` call times, unknown: the one the last costing left, if any.
    fn fresh_starts(&self, n: usize) -> Vec<f64> {
        let mut starts = std::mem::take(&mut self.spare.lock().expect("spare").starts);
        starts.clear();
        starts.resize(n, f64::NAN);
        starts
    }

    /// Gives an instance's returns, if this was their last holder, to the next costing to fill
    /// again: a thread's runs keep the last they read, and dropped there they were 2 MB (on
    /// 65,536 ranks) freed by one thread that the costing one could not reuse.
    fn recycle_returns(&self, mut returns: Arc<eval::Completion>) {
        if Arc::get_mut(&mut returns).is_some() {
            self.spare.lock().expect("spare").returns = Some(returns);
        }
    }

    /// The returns of instance `x`: its schedule, by the chosen algorithm, costed from its
    /// participants' predicted call times (`starts`, in communicator rank order). Kept out of
    /// [`advance`]'s code, with [`Shared::modeled_return`] and [`RankState::add_collective`]:
    /// inlined there, they slowed its point-to-point events (gauss at 1 thread: replay median
    /// 27.7 -> 25.9 ms out of it).
    #[inline(never)]
    fn cost_instance(&self, x: u32, starts: Vec<f64>) -> Returns {
        let (bytes, root, op) = self.shapes[x as usize];
        let Some(op) = op else {
            return Returns::Measured;
        };
        let size = self.g.instances[x as usize].size as usize;
        let mut spec = Spec {
            root: root as usize,
            ..Spec::new(size, bytes)
        };
        let (algorithm, segment) = self.coll.algorithm(op, spec.ranks, spec.bytes);
        spec.segment = segment.unwrap_or(spec.segment);
        let mut kept = self.scratch.try_lock().ok();
        let mut own = eval::Scratch::default();
        let eval = kept.as_deref_mut().unwrap_or(&mut own);
        let mut shell = self.spare.lock().expect("spare").returns.take();
        if let Some(read) = shell.as_mut().and_then(Arc::get_mut) {
            eval.recycle(std::mem::take(read));
        }
        debug_assert!(starts.len() == size && !starts.iter().any(|t| t.is_nan()));
        let costed = match self.model {
            Model::LogGps(p) => self.cost_modeled(op, algorithm, &spec, p, &starts, eval),
            Model::LogGp(m) => self.cost_modeled(op, algorithm, &spec, m, &starts, eval),
        };
        self.spare.lock().expect("spare").starts = starts;
        match costed {
            Ok(c) => Returns::Ready(match shell {
                // Held nowhere else (`recycle_returns`): filled in place, never cloned.
                Some(mut a) => {
                    *Arc::make_mut(&mut a) = c;
                    a
                }
                None => Arc::new(c),
            }),
            Err(e) => {
                let what = format!("{} by {algorithm} on {size} ranks", op.name());
                let e = e.to_string();
                let why = match e.starts_with(&what) {
                    true => e,
                    false => format!("{what}: {e}"),
                };
                self.unmodeled.lock().expect("warnings").push(why);
                Returns::Measured
            }
        }
    }

    fn instance_done(&self, x: u32) -> bool {
        self.arrived[x as usize].load(Ordering::Acquire) == self.g.instances[x as usize].size
    }

    /// `op` by `algorithm` on `spec`, costed with the participants calling at `starts`; the
    /// schedule is built and matched once for all instances of the same shape.
    fn cost_modeled<M: CostModel>(
        &self,
        op: Op,
        algorithm: &'static str,
        spec: &Spec,
        model: &M,
        starts: &[f64],
        scratch: &mut eval::Scratch,
    ) -> Result<eval::Completion, crate::error::Error> {
        let gamma = self.coll.gamma_ns_per_byte;
        // Costed from the rule that gives its steps, never built (a few per call to compute).
        if spec.ranks >= RULED_MIN_RANKS
            && let Some(ruled) = crate::collectives::ruled(op, algorithm, spec)?
        {
            return Ok(eval::evaluate_ruled(&ruled, model, gamma, starts, scratch));
        }
        let key = ScheduleKey {
            op,
            algorithm,
            ranks: spec.ranks,
            bytes: spec.bytes,
            root: spec.root,
            segment: spec.segment,
            postal_h: spec.postal_h.map(f64::to_bits),
        };
        let cached = self.schedules.lock().expect("schedules").get(&key);
        let built = match cached {
            Some(b) => b,
            None => {
                let schedule =
                    crate::collectives::build(op, algorithm, spec, &|b| model.split_costs(b))?;
                let mut matching = schedule.matching()?;
                // Not a ring or a chain: a block of their ranks waits on its two ends only, where
                // each of a ring's 2P passes costs the threads a meeting (a ring Allreduce on 4,096
                // ranks, 8,191 passes: leveled in 1.26 s, then 0.33-0.45 s an evaluation by
                // passes, 0.27 by blocks; pairwise all-to-all, 4,096 passes as wide, 0.14 by
                // passes, 0.32 by blocks), and one thread's queue follows a ring's ranks in
                // order (on 1,024 ranks 0.82-0.86 s, by passes 0.94-1.18). Other schedules go by
                // passes on one thread too, which stream through the ranks where the queue jumps
                // from partner to partner: replay at 1 thread, pairwise all-to-all on 4,096 ranks
                // 4.5 -> 2.5 s, Rabenseifner's Allreduce on 8,192 0.215 -> 0.107 s (leveled only
                // from 16,384 ranks before; on 262,144, mix 3.99 -> 3.22 s end to end).
                let level = matching.steps() >= LEVELED_MIN_STEPS
                    && matching.even()
                    && !schedule.neighbours_only();
                drop(schedule);
                if level {
                    matching = matching.leveled(LEVELED_MIN_WIDTH);
                }
                // The schedule and what matching and leveling it used on the way, freed, the
                // allocator keeps for reuse, where the evaluations' arrays do not fit: handed
                // back (mix at 2 threads: peak 81 bytes/event with, 94 without).
                if matching.steps() >= RELEASE_SCHEDULE_MIN_STEPS {
                    crate::memory::release_freed_here();
                }
                let built = Arc::new(matching);
                self.schedules.lock().expect("schedules").put(key, &built);
                built
            }
        };
        // Every rank takes part: every thread waits for this cost, and takes a part.
        let order = match spec.ranks == self.trace.nranks() {
            true => eval::Order::for_helped(&built),
            false => eval::Order::for_matching(&built),
        };
        eval::evaluate_by(&built, model, gamma, starts, scratch, order)
    }

    /// Whether a rank blocked on `dep` can go on.
    fn ready(&self, dep: Dep) -> bool {
        match dep {
            Dep::Event(q, j) => self.call(q as usize, j as usize).is_ok(),
            Dep::Instance(x) => self.instance_done(x),
        }
    }

    /// The send half of an operation started at `ti` on rank `r` (event `i`): its Send cost.
    #[inline(always)]
    fn send_completion(&self, r: usize, i: usize, ti: f64) -> Result<Completion, Dep> {
        let ev = self.trace.rank(r);
        let (peer, bytes) = (ev.peer(i), ev.bytes(i));
        if peer == PEER_NULL {
            return Ok(Completion {
                done: ti + self.model.o(),
                sync: 0.0,
                unblock: ti,
                send_side: true,
            });
        }
        let p = match self.model {
            Model::LogGps(p) => p,
            // Done once its first byte is out, which it published at its call; nothing unblocks
            // it, it never waits for its receiver.
            Model::LogGp(_) => {
                return Ok(Completion {
                    done: self.call(r, i).expect("a send publishes at its call"),
                    sync: 0.0,
                    unblock: f64::NEG_INFINITY,
                    send_side: true,
                });
            }
        };
        // An unfinished trace may lack the receive: then the send can only be costed eagerly.
        // Its link read only by rendezvous (most sends are eager): replay at 2 threads, the
        // Gaussian elimination 12.0 -> 11.5 ms, the dissemination 0.253 -> 0.244 s (fastest of
        // 20 and 6 alternating runs); at 1 thread within noise.
        let link = match self.rendezvous(r, i) {
            true => self.g.link(r, i),
            false => NONE,
        };
        let rdv = link != NONE;
        let tr = if rdv {
            self.call_at(link as usize, peer)?
        } else {
            ti
        };
        Ok(Completion::of(p.send(bytes, rdv, ti, tr), true))
    }

    /// A receive started at `ti` whose message comes from global event `from` (NONE: none),
    /// most likely an event of rank `source` (see [`Shared::call_at`]); `plain`: a plain
    /// send's ([`HbGraph::link_plain`]).
    #[inline(always)]
    fn recv_completion(
        &self,
        from: u32,
        plain: bool,
        source: i32,
        ti: f64,
    ) -> Result<Pending, Dep> {
        if from == NONE {
            return Ok(Pending::Done(Completion {
                done: ti + self.model.o(),
                sync: 0.0,
                unblock: ti,
                send_side: false,
            }));
        }
        let from = from as usize;
        let ts = self.call_at(from, source)?;
        let (bytes, rdv) = self.message(from, plain);
        let c = match self.model {
            Model::LogGps(p) => p.recv(bytes, rdv, ts, ti),
            Model::LogGp(m) => {
                return Ok(Pending::Inbound(Inbound {
                    t: ti,
                    arrival: m.arrival(ts, bytes),
                    bytes,
                }));
            }
        };
        Ok(Pending::Done(Completion::of(c, false)))
    }

    /// A LogGP receive taken through the rank's `port`; waiting for the last byte to arrive is
    /// receiver synchronization, waiting for the port is communication.
    fn receive(&self, port: &mut Port, m: Inbound) -> Cost {
        let Model::LogGp(lg) = self.model else {
            unreachable!("only LogGP receives wait for a port")
        };
        lg.recv_return(port, m.t, m.bytes, m.arrival)
    }

    /// The bytes of the message sent by global event `from`, and whether it goes by
    /// rendezvous; from its byte count alone where it is `plain` (the graph tells).
    #[inline(always)]
    fn message(&self, from: usize, plain: bool) -> (u64, bool) {
        match plain {
            true => {
                let k = self.trace.events.plain_bytes_at(from);
                (k, k > self.eager_limit)
            }
            false => (self.trace.events.bytes_at(from), self.rendezvous_at(from)),
        }
    }

    /// Whether the message sent by event `i` of rank `r` goes by rendezvous (never under LogGP).
    /// Inlined, as is the search for a completed request's creator: the compiler kept both as
    /// calls (the dissemination's replay at 2 threads 0.271 -> 0.262 s, fastest of 8).
    #[inline(always)]
    fn rendezvous(&self, r: usize, i: usize) -> bool {
        matches!(self.model, Model::LogGps(_))
            && rendezvous_in(&self.trace.rank(r), self.eager_limit, i)
    }

    /// Whether the message sent by global event `e` goes by rendezvous.
    #[inline]
    fn rendezvous_at(&self, e: usize) -> bool {
        rendezvous_at(&self.trace.events, self.eager_limit, e)
    }

    /// The completion of the request rank `r` created at its event `oi` (at a known call time).
    #[inline(always)]
    fn request(&self, r: usize, oi: usize) -> Result<Pending, Dep> {
        let ti = self
            .call(r, oi)
            .expect("a request's creator precedes its completion");
        match self.trace.rank(r).routine(oi).shape() {
            Shape::Isend => self.send_completion(r, oi, ti).map(Pending::Done),
            _ => {
                let (from, plain) = self.g.link_plain(r, oi);
                self.recv_completion(from, plain, self.trace.rank(r).peer(oi), ti)
            }
        }
    }
}

/// The value of a `Result<_, Dep>`, or from [`advance`]: blocked on the `Dep`.
macro_rules! or_block {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(dep) => return Outcome::Blocked(dep),
        }
    };
}

/// Advances rank `r` as far as its dependencies allow.
fn advance(sh: &Shared<'_>, r: usize, st: &mut RankState, local: &mut Local) -> Outcome {
    let ev = sh.trace.rank(r);
    let o = sh.model.o();
    // The measured return of the event before, once this run has read it (read again at each
    // event, it took the Gaussian elimination's replay 18.0 ms at 1 thread, 16.8 since: fastest
    // of 20 alternating runs).
    let mut returned = None;
    while (st.pos as usize) < ev.len() {
        let i = st.pos as usize;
        let routine = ev.routine(i);
        if sh.prefetch_partners {
            prefetch_partner(sh, &ev, r, i + PREFETCH_AHEAD);
        }
        if !st.published {
            let tc = if i == 0 {
                sh.trace.measured_begin_ns(r).map_or(0.0, |b| b - sh.t0)
            } else {
                let before = returned.unwrap_or_else(|| ev.t_return(i - 1));
                st.clock + (ev.t_call(i) - before) as f64
            };
            returned = Some(ev.t_return(i));
            st.parts.computation += tc - st.clock;
            st.clock = tc;
            let published = match sh.model {
                Model::LogGp(m) if sends(routine) && ev.peer(i) != PEER_NULL => {
                    let port = &mut st.loggp().expect("a LogGP state").port;
                    m.send_call(port, tc, ev.bytes(i)).ret
                }
                _ => tc,
            };
            if read_by_partners(routine) {
                sh.calls[sh.offsets[r] + i].store(!published.to_bits(), Ordering::Release);
            }
            st.published = true;
            let x = match routine.is_collective() {
                true => link_of(sh, r, i, routine, st.colls),
                false => NONE,
            };
            if x != NONE {
                // Call times are positive: their bits order as they do.
                let bits = tc.to_bits();
                match local.arrivals.iter_mut().find(|a| a.0 == x) {
                    Some((_, n, latest)) => (*n, *latest) = (*n + 1, bits.max(*latest)),
                    None => local.arrivals.push((x, 1, bits)),
                }
                if sh.coll.modeled && op_of(routine).is_some() {
                    local.starts.push((x, r as u32, tc));
                    if local.starts.len() == STARTS_BATCH {
                        sh.flush_starts(local);
                    }
                }
            }
        }
        let tc = st.clock;
        if routine == Routine::Finalize {
            break;
        }
        // The port as this event leaves it; kept only if the event can be costed now.
        let mut port = st.loggp().map_or_else(Port::default, |l| l.port);
        let (resume_at, fold, last) = (&mut st.resume_at, &mut st.fold, &mut st.last_request);
        let fold_send_side = &mut st.fold_send_side;
        let mut inbound = Rare::loggp(&mut st.rare).map(|l| &mut l.inbound);
        // Computed in place, not by a closure, and the completions it asks for inlined: their
        // results went through memory, read back by 16-byte loads of two 8-byte stores, which
        // the core cannot forward. The dissemination's replay stalled there for half of its
        // time in the closure.
        let (ret, comm, ssync, rsync) = 'cost: {
            match routine.shape() {
                Shape::None => (tc, 0.0, 0.0, 0.0),
                Shape::Isend | Shape::Irecv | Shape::Cancel => (tc + o, o, 0.0, 0.0),
                Shape::Send => {
                    let c = or_block!(sh.send_completion(r, i, tc));
                    (c.done, c.done - tc - c.sync, c.sync, 0.0)
                }
                Shape::Recv => {
                    // Its link read here, not for every event as it was, though most have no
                    // use for it: replay at 1 thread, dissemination 0.486 -> 0.424 s, Gaussian
                    // elimination 19.3 -> 18.0 ms; at 2, 0.261 -> 0.245 s and 13.5 -> 12.9 ms
                    // (fastest of 4-12 alternating runs); ring, all-to-all, halo3d, broadcast
                    // loop, CG-like 2-9% at 1 thread.
                    let (link, plain) = sh.g.link_plain(r, i);
                    if routine == Routine::Iprobe || link == NONE {
                        break 'cost (tc + o, o, 0.0, 0.0);
                    }
                    let from = link as usize;
                    let ts = or_block!(sh.call_at(from, ev.peer(i)));
                    let (k, rdv) = sh.message(from, plain);
                    let c = match sh.model {
                        Model::LogGps(p) if routine == Routine::Probe => p.probe(k, rdv, ts, tc),
                        Model::LogGps(p) => p.recv(k, rdv, ts, tc),
                        Model::LogGp(m) if routine == Routine::Probe => m.probe(k, ts, tc),
                        Model::LogGp(m) => sh.receive(
                            &mut port,
                            Inbound {
                                t: tc,
                                arrival: m.arrival(ts, k),
                                bytes: k,
                            },
                        ),
                    };
                    (c.ret, c.ret - tc - c.sync, 0.0, c.sync)
                }
                Shape::Sendrecv => {
                    let send = or_block!(sh.send_completion(r, i, tc));
                    match or_block!(sh.recv_completion(sh.g.link2(r, i), false, -1, tc)) {
                        Pending::Done(recv) => {
                            let mut w = WaitFold::new(tc, o);
                            w.add(send.done, send.unblock, send.send_side);
                            w.add(recv.done, recv.unblock, recv.send_side);
                            w.finish()
                        }
                        // LogGP: the receive is called once the send's first byte is out.
                        Pending::Inbound(m) => {
                            let c = sh.receive(&mut port, Inbound { t: send.done, ..m });
                            (c.ret, c.ret - tc - c.sync, 0.0, c.sync)
                        }
                    }
                }
                Shape::Complete => {
                    // Resumed where it blocked last time.
                    let from = std::mem::take(resume_at) as usize;
                    let mut w = if from > 0 {
                        WaitFold::resume(tc, *fold, *fold_send_side)
                    } else {
                        if let Some(m) = inbound.as_deref_mut() {
                            m.clear();
                        }
                        WaitFold::new(tc, o)
                    };
                    let hint = (last.1 != NO_EVENT).then_some(*last);
                    for (k, (req, oi)) in (from..).zip(ev.completed_origins(i, from, hint)) {
                        match sh.request(r, oi as usize) {
                            Ok(Pending::Done(c)) => w.add(c.done, c.unblock, c.send_side),
                            Ok(Pending::Inbound(m)) => {
                                inbound.as_deref_mut().expect("a LogGP state").push(m);
                            }
                            Err(dep) => {
                                if k > 0 {
                                    *resume_at = k as u32;
                                    (*fold, *fold_send_side) = w.save();
                                }
                                return Outcome::Blocked(dep);
                            }
                        }
                        *last = (req, oi);
                    }
                    // LogGP: the port takes the messages in the order their last bytes arrive.
                    if let Some(m) = inbound {
                        m.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
                        for m in m.drain(..) {
                            let c = sh.receive(&mut port, m);
                            w.add(c.ret, c.unblock, false);
                        }
                    }
                    w.finish()
                }
                Shape::Coll | Shape::CommOp => {
                    let link = link_of(sh, r, i, routine, st.colls);
                    // Comm_free, and collectives an unfinished trace never completed: measured.
                    if link == NONE {
                        let d = (ev.t_return(i) - ev.t_call(i)) as f64;
                        break 'cost (tc + d, d, 0.0, 0.0);
                    }
                    if !sh.instance_done(link) {
                        return Outcome::Blocked(Dep::Instance(link));
                    }
                    // Modeled: the schedule's end for this rank, with the synchronization its
                    // steps had by the point-to-point rules; the rest is communication.
                    if sh.coll.modeled
                        && let Some(e) = sh.modeled_return(link, r as u32, local)
                    {
                        let ret = e.ret.max(tc);
                        let comm = ret - tc - e.sender_sync - e.receiver_sync;
                        break 'cost (ret, comm, e.sender_sync, e.receiver_sync);
                    }
                    let last_call =
                        f64::from_bits(sh.max_call[link as usize].load(Ordering::Acquire));
                    let after = (sh.trace.corrected_ns(r, ev.t_return(i))
                        - sh.t0
                        - sh.measured_last_arrival[link as usize])
                        .max(0.0);
                    (last_call + after, after, 0.0, last_call - tc)
                }
            }
        };
        if let Some(l) = st.loggp() {
            l.port = port;
        }
        if routine.is_collective() {
            st.add_collective(routine, ret - tc);
            st.colls += 1;
        }
        st.parts.communication += comm;
        st.parts.sender_sync += ssync;
        st.parts.receiver_sync += rsync;
        st.clock = ret;
        st.pos += 1;
        st.published = false;
    }
    Outcome::Done
}

/// How many events ahead [`advance`] asks for what an event will read of its partner.
const PREFETCH_AHEAD: usize = 8;

/// The fewest ranks with which [`advance`] asks ahead for partners' lines
/// ([`prefetch_partner`]). A pass over a block touches, a rank, its 104-byte state and a line
/// of each column where it stands, about 700 bytes: on 131,072 ranks 90 MB, far past this
/// machine's 32 MB L3, so a partner's lines are cold when a rank reads them. With fewer ranks
/// the partners were mostly touched a moment before, and asking cost more than it saved.
/// Replay at 1 thread, asking / not (fastest of 5-6 alternating runs): dissemination on
/// 262,144 ranks 0.517 / 0.604 s, on 131,072 0.213 / 0.238, on 65,536 0.125 / 0.129, on
/// 16,384 0.024 / 0.023; binomial broadcast loop on 65,536 ranks 0.070 / 0.062; Gaussian
/// elimination on 64 ranks 20.8 / 19.2 ms (at 2 threads 14.5 / 13.0, likely also as lines the
/// other thread is still writing, asked for too early, must be fetched again); ring on 64
/// ranks 0.139 / 0.130 s; all-to-all on 1,024 0.126 / 0.117; halo3d on 4,096 0.189 / 0.169;
/// CG-like on 1,024 0.340 / 0.306. (The broadcast loop on 262,144 ranks, whose ranks each run
/// all their events at once, a parent's lines read long after it ran: 0.301 / 0.268, left
/// asking.)
const PARTNER_PREFETCH_MIN_RANKS: usize = 1 << 17;

thread_local! {
    /// Tests: partner prefetching on or off whatever the ranks, for the replays this thread
    /// starts ([`PARTNER_PREFETCH_MIN_RANKS`]).
    static FORCED_PREFETCH: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Asks for the cache lines that event `i` of rank `r`, if it is a point-to-point operation
/// with a known partner, will read of that partner: a receive, its send's predicted call
/// time, routine and byte count (the byte count alone of a plain send); a send (a Sendrecv's
/// too), its receive's call time, where it goes by rendezvous. An eager send reads nothing of
/// its receive: asking for those three lines for each send too took the dissemination's
/// replay from 0.511 to 0.534 s at 1 thread, 0.285 to 0.299 at 2 (fastest of 5 and 10).
/// Partners are mostly far away in memory; a few events ahead, the reads are in flight while
/// the events before are costed. Only on many ranks ([`PARTNER_PREFETCH_MIN_RANKS`]).
#[inline]
fn prefetch_partner(sh: &Shared<'_>, ev: &Rank<'_>, r: usize, i: usize) {
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
        if whole {
            sh.trace.events.prefetch(e as usize, plain);
        }
    }
}

/// World rank `r`'s rank in communicator `comm`, given `places` (see [`Shared::places`]).
#[inline]
fn place(places: &HashMap<u32, Vec<(u32, u32)>>, comm: u32, r: u32) -> usize {
    match places.get(&comm) {
        None => r as usize,
        Some(pairs) => {
            let k = pairs.binary_search_by_key(&r, |&(w, _)| w);
            pairs[k.expect("a member")].1 as usize
        }
    }
}

/// `x`'s bits, in the order of the values (an atomic maximum of times that may be negative).
fn ordered(x: f64) -> u64 {
    let b = x.to_bits();
    match b >> 63 {
        1 => !b,
        _ => b | 1 << 63,
    }
}

/// The time of [`ordered`] bits.
fn from_ordered(b: u64) -> f64 {
    f64::from_bits(match b >> 63 {
        1 => b & !(1 << 63),
        _ => !b,
    })
}

/// Per collective instance, from its participants' records: its last measured call, after `t0`,
/// and where `modeled` its schedule's bytes, root and operation ([`Shared::shapes`]). Gathered
/// rank by rank in parallel, each value raised to what a participant recorded (a participant
/// mostly records what the one before did: mostly no write). Read when an instance was costed,
/// these took 14 µs an instance of 1,024 ranks while the other threads waited (a loop of
/// 10,000 Allreduces at 2 threads: replay 0.70 -> 0.65 s, minimum of 5); read over each
/// instance's list of participants, they needed the graph to keep one (4 bytes a call).
fn recorded(
    trace: &Trace,
    g: &HbGraph,
    modeled: bool,
    t0: f64,
    places: &HashMap<u32, Vec<(u32, u32)>>,
) -> (Vec<f64>, Vec<Shaped>) {
    let n = g.instances.len();
    let atomics = |n: usize| -> Vec<AtomicU64> { (0..n).map(|_| AtomicU64::new(0)).collect() };
    let last = atomics(n);
    let m = if modeled { n } else { 0 };
    let (sent, received, root, code) = (atomics(m), atomics(m), atomics(m), atomics(m));
    let raise = |a: &AtomicU64, v: u64| {
        if a.load(Ordering::Relaxed) < v {
            a.fetch_max(v, Ordering::Relaxed);
        }
    };
    if n > 0 {
        (0..trace.nranks()).into_par_iter().for_each(|r| {
            let ev = trace.rank(r);
            let mut colls = 0;
            for i in 0..ev.len() {
                let routine = ev.routine(i);
                let x = match (routine.is_collective(), g.implicit) {
                    (false, _) => NONE,
                    (true, false) => g.link(r, i),
                    (true, true) => colls,
                };
                colls += routine.is_collective() as u32;
                if x == NONE {
                    continue;
                }
                let x = x as usize;
                raise(&last[x], ordered(trace.corrected_ns(r, ev.t_call(i)) - t0));
                if modeled {
                    raise(&sent[x], ev.bytes(i));
                    raise(&received[x], ev.coll_recv(i).0);
                    if ev.peer(i) == r as i32 {
                        let k = place(places, g.instances[x].comm, r as u32);
                        raise(&root[x], k as u64);
                    }
                    raise(&code[x], routine as u64);
                }
            }
        });
    }
    let shapes = (0..m)
        .map(|x| {
            let get = |a: &[AtomicU64]| a[x].load(Ordering::Relaxed);
            match Routine::from_code(get(&code) as u8).and_then(op_of) {
                Some(op) => {
                    let rec = traced::Recorded {
                        sent: get(&sent),
                        received: get(&received),
                        root: get(&root) as usize,
                    };
                    let spec = rec.spec(op, g.instances[x].size as usize);
                    (spec.bytes, spec.root as u32, Some(op))
                }
                None => (0, 0, None),
            }
        })
        .collect();
    let last = last.into_iter().map(|a| from_ordered(a.into_inner()));
    (last.collect(), shapes)
}

/// The link of event `i` (a `routine` call) of rank `r`, or the instance of a collective call
/// that the graph implies ([`HbGraph::implicit`]: the rank's `colls` collective calls before it).
#[inline(always)]
fn link_of(sh: &Shared<'_>, r: usize, i: usize, routine: Routine, colls: u32) -> u32 {
    match sh.g.implicit && routine.is_collective() {
        true => colls,
        false => sh.g.link(r, i),
    }
}

/// Whether other events read the predicted call time of a `routine` event: a point-to-point
/// operation's (its partner's, its request's completion). Only those are kept in
/// [`Shared::calls`].
#[inline(always)]
fn read_by_partners(routine: Routine) -> bool {
    matches!(
        routine.shape(),
        Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv | Shape::Sendrecv
    )
}

/// Whether `routine` sends a message when it is called (a send of any mode, or a send-receive).
fn sends(routine: Routine) -> bool {
    matches!(
        routine.shape(),
        Shape::Send | Shape::Isend | Shape::Sendrecv
    )
}

/// Replays `trace` under LogGPS `params`, collectives modeled by the algorithms Open MPI 4.1
/// would pick. `progress` is told the number of events replayed so far.
pub fn replay(
    trace: &Trace,
    g: &HbGraph,
    params: &Params,
    file: &str,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Prediction, TraceError> {
    replay_with(
        trace,
        g,
        &Model::LogGps(*params),
        &Choice::tuned(),
        file,
        progress,
    )
}

/// [`replay`] under `model` (LogGPS or LogGP), collectives costed as `coll` says (measured, or
/// by their algorithms).
pub fn replay_with(
    trace: &Trace,
    g: &HbGraph,
    model: &Model,
    coll: &Choice,
    file: &str,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Prediction, TraceError> {
    let p = trace.nranks();
    let offsets = trace.events.offsets();
    use crate::memory::{REPLAY_PER_EVENT, REPLAY_PER_RANK, ensure};
    let what = format!("replaying {} events of {p} ranks", offsets[p]);
    let need = REPLAY_PER_EVENT * offsets[p] as u64 + REPLAY_PER_RANK * p as u64;
    ensure(&what, need).map_err(|e| TraceError::at(file, e))?;
    let eager_limit = match model {
        Model::LogGps(params) => params.S,
        Model::LogGp(_) => u64::MAX,
    };

    // Time 0 is the earliest MPI_Init return; each rank starts at its own.
    let t0 = trace.measured_t0();
    let places: HashMap<u32, Vec<(u32, u32)>> = match coll.modeled {
        true => trace
            .comms
            .iter()
            .map(|c| {
                let mut pairs: Vec<(u32, u32)> = c.members.iter().copied().zip(0..).collect();
                pairs.sort_unstable();
                (c.id, pairs)
            })
            .collect(),
        false => HashMap::new(),
    };
    let (measured_last_arrival, shapes) = recorded(trace, g, coll.modeled, t0, &places);
    // The replay's peak is the run's: what the load and the graph freed goes back first
    // (65,536-rank broadcast at 2 threads: 41.5 -> 39.8 bytes/event; 262,144-rank
    // dissemination: 38.1 -> 36.9).
    crate::memory::release_freed();
    // A trace of collectives alone keeps no call time by event.
    let mut point_to_point = [false; 256];
    for &r in Routine::ALL {
        point_to_point[r as usize] = read_by_partners(r);
    }
    let any = |r: &[Routine]| r.iter().fold(false, |a, &r| a | point_to_point[r as usize]);
    let calls = match trace.events.routines().par_chunks(1 << 16).any(any) {
        true => zeroed_atomics(offsets[p]),
        false => Pages::zeroed(0),
    };
    let sh = Shared {
        trace,
        g,
        eager_limit,
        model,
        calls,
        prefetch_partners: FORCED_PREFETCH
            .get()
            .unwrap_or(p >= PARTNER_PREFETCH_MIN_RANKS),
        offsets,
        arrived: (0..g.instances.len()).map(|_| AtomicU32::new(0)).collect(),
        max_call: (0..g.instances.len()).map(|_| AtomicU64::new(0)).collect(),
        measured_last_arrival,
        shapes,
        places,
        t0,
        coll,
        modeled: g
            .instances
            .iter()
            .map(|x| Modeled {
                returns: RwLock::default(),
                unread: AtomicU32::new(x.size),
            })
            .collect(),
        unmodeled: Mutex::new(Vec::new()),
        schedules: Mutex::new(ScheduleCache::for_events(offsets[p])),
        completed: Mutex::new(Vec::new()),
        scratch: Mutex::default(),
        spare: Mutex::default(),
    };
    let mut states: Vec<Mutex<RankState>> = (0..p)
        .into_par_iter()
        .map(|_| Mutex::new(RankState::new(model)))
        .collect();

    let mut wave: Vec<u32> = (0..p as u32).collect();
    // Where each rank stopped last (read only to prefetch what its next run starts with).
    let mut stopped_at: Vec<u32> = Vec::new();
    let mut waiting_on_event = Waiters::new(p);
    let mut waiting_on_instance: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut done_events = 0u64;
    let run = |local: &mut Local, &r: &u32| {
        let mut st = states[r as usize].lock().expect("rank state");
        let before = st.pos;
        let out = advance(&sh, r as usize, &mut st, local);
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
            run_owned(&sh, &states, &mut pending, blocks, &run, &|n| {
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
    // What a wave makes is kept for the next (a wave per collective call on 1,024 ranks made
    // a hundred allocations at 1 thread): its outcomes, the next wave, each thread's batches
    // (LOCAL), the lists of ranks waiting on an instance.
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
                                prefetch_run(&sh, &states, n as usize, at);
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
                        waiting_on_event.add(q, j, o.rank);
                    }
                }
                Outcome::Blocked(dep @ Dep::Instance(x)) => {
                    if sh.ready(dep) {
                        next.push(o.rank);
                    } else {
                        let list = waiting_on_instance.entry(x);
                        let list = list.or_insert_with(|| spare_lists.pop().unwrap_or_default());
                        list.push(o.rank);
                    }
                }
            }
        }
        for o in outcomes() {
            let q = o.rank;
            waiting_on_event.wake(q, |j| sh.call(q as usize, j as usize).is_ok(), &mut next);
        }
        for x in sh.completed.lock().expect("completed").drain(..) {
            if let Some(mut list) = waiting_on_instance.remove(&x) {
                next.append(&mut list);
                spare_lists.push(list);
            }
        }
        std::mem::swap(&mut wave, &mut next);
        next.clear();
    }

    let mut warnings = g.warnings.clone();
    let unmodeled = std::mem::take(&mut *sh.unmodeled.lock().expect("warnings"));
    if !unmodeled.is_empty() {
        warnings.push(format!(
            "{} collective call(s) replayed as measured, not modeled{}",
            unmodeled.len(),
            list_some(&counted(unmodeled))
        ));
    }
    // Read without locking, as no thread runs now: on 262,144 ranks (25 MB of states) 8.2 -> 3.8
    // ms at 1 thread, 4.3 -> 2.0 at 2.
    let blocked: Vec<usize> = states
        .par_iter_mut()
        .enumerate()
        .filter_map(|(r, st)| {
            let pos = st.get_mut().expect("rank state").pos as usize;
            let ev = trace.rank(r);
            (pos < ev.len() && ev.routine(pos) != Routine::Finalize).then_some(r)
        })
        .collect();
    if !blocked.is_empty() {
        if trace.complete {
            return Err(TraceError::at(
                file,
                deadlock_message(&sh, &states, &waiting_on_event, &waiting_on_instance),
            ));
        }
        warnings.push(format!(
            "the unfinished trace cuts {} rank(s) short at an operation whose partner was never recorded{}",
            blocked.len(),
            list_some(&blocked)
        ));
    }

    // The predicted call times and the costings' arrays go before the breakdowns are made,
    // handed back to the system: freed by whichever thread had costed last, they were not
    // reused for the breakdowns another thread made (the 65,536-rank Allreduce loop at 2
    // threads peaked there, 53.7 -> 50.5 bytes/event).
    drop(sh);
    crate::memory::release_freed();
    let ranks: Vec<RankBreakdown> = states
        .into_par_iter()
        .enumerate()
        .map(|(r, st)| {
            let st = st.into_inner().expect("rank state");
            // Its MPI_Finalize not looked for from its first event: the 262,144-rank
            // dissemination's breakdowns 31 -> 22 ms at 1 thread, 17 -> 11.5 ms at 2 (minimum
            // of 5 alternating runs).
            let measured_end = trace.measured_end_ns_from(r, st.pos as usize);
            let measured_end = measured_end.map_or(0.0, |e| e - t0);
            st.breakdown(r, trace.rank(r).len(), measured_end)
        })
        .collect();
    let predicted_ns = ranks.iter().map(|b| b.end_ns).fold(0.0, f64::max);
    let measured_ns = ranks.iter().map(|b| b.measured_end_ns).fold(0.0, f64::max);
    Ok(Prediction {
        ranks,
        predicted_ns,
        measured_ns,
        warnings,
    })
}

/// `n` atomics at 0, in pages of their own ([`Pages`]: unmapped when the replay drops them,
/// before it makes the breakdowns; the allocator had kept the freed block while they were
/// made, which put the peak of the 65,536-rank broadcast 2.3 bytes/event higher), made present
/// and writable in parallel ([`populate_for_writes`]). They are the pages the graph's bucketed
/// sends left ([`Pages::recycle`]), as far as those go: the 262,144-rank dissemination at 2
/// threads, replay 297 -> 281 ms (minimum of 8 alternating runs), end to end 718 -> 680 ms.
/// Those are present and written already, and made present again they cost the kernel a walk
/// of their pages: the dissemination's 117 MB of call times took 8.6-9.1 ms at 2 threads, the
/// 42 MB past the 75 MB of its bucketed sends 6.9 ms.
fn zeroed_atomics(n: usize) -> Pages<AtomicU64> {
    let mut calls = Pages::zeroed(n);
    let written = calls.written();
    populate_for_writes(&mut calls[written..]);
    calls
}

/// Makes the pages of `a` present and writable before the replay reads them. A page of fresh
/// zeroed memory that a thread reads first (a partner's call time, still unknown) is mapped to
/// the shared zero page; the first write then copies it and flushes the page from every core's
/// TLB, an interrupt to each other core the process runs on. On the 64-rank ring and
/// Gaussian elimination, where ranks look at partners' times before they are written, those
/// interrupts took 7-9% of the run's CPU at 2 threads. `MADV_POPULATE_WRITE` (Linux 5.14)
/// maps the pages writable in pieces, in parallel
/// ([`crate::pages::populate_writes_in_parallel`]; `a` starts on a page, a [`Pages`]'s first or
/// the first past what of it was written, so every piece does); where the kernel has no such
/// advice, a write to each page does it.
fn populate_for_writes(a: &mut [AtomicU64]) {
    const PAGE: usize = 4096;
    if !crate::pages::populate_writes_in_parallel(a) {
        let per_page = PAGE / size_of::<AtomicU64>();
        a.par_chunks(per_page)
            .for_each(|c| c[0].store(0, Ordering::Relaxed));
    }
}

/// One round of the replay on several threads: the `pending` ranks (ascending, with where each
/// stopped) split into `blocks` blocks ([`eval::threads`]); each thread runs its block round and
/// round, every rank as far as it goes (at first those not blocked on an unknown call time),
/// until the block is done or it waits for others that have stopped ([`wait_outside`]: on a
/// partner another thread is slow to reach, or on a deadlock). A thread needs nobody's
/// bookkeeping to go on where waves would stop every rank at its first unknown partner: a ring
/// or a pipeline takes a wave a message, each waking the threads for a few events. Leaves in
/// `pending` where each rank stopped (in place: a copy was 24 bytes a rank more).
fn run_owned(
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
    };
    pending.par_chunks_mut(size).for_each(|ran| {
        with_kept(&LOCAL, |local| {
            run_block(sh, states, ran, run, &moves, local, progress)
        })
    });
}

/// [`run_owned`] on one thread's block `ran`, batching into `local` (flushed after each pass
/// over the block: before anyone waits on it).
fn run_block(
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
struct Moves {
    /// Events replayed, each thread adding its own every [`OWNED_SHARE_EVENTS`].
    events: AtomicU64,
    /// Blocks not yet ended.
    running: AtomicUsize,
}

impl Moves {
    /// Counts `n` more events of a thread whose `unshared` were not yet added; reports the
    /// total to `progress` every [`OWNED_REPORT_EVENTS`].
    fn add(&self, unshared: &mut u32, n: u32, progress: &(dyn Fn(u64) + Sync)) {
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
/// block is running or none has moved for [`OWNED_PATIENCE`]: a thread still in a long pass
/// may yet publish what this one waits for. Looks at the ranks blocked on a partner outside
/// the block alone: the others wait on ranks of the block, which will not move before they do.
/// `outside`: where their dependencies are listed (the thread's, kept from wait to wait).
fn wait_outside(sh: &Shared<'_>, ran: &[Ran], moves: &Moves, outside: &mut Vec<Dep>) -> bool {
    let (first, last) = (ran[0].rank, ran[ran.len() - 1].rank);
    outside.clear();
    for o in ran {
        let dep = match o.out {
            Outcome::Blocked(dep @ Dep::Event(q, _)) if q < first || q > last => dep,
            Outcome::Blocked(dep @ Dep::Instance(_)) => dep,
            _ => continue,
        };
        // Once for the ranks after it waiting on the same: a collective's participants wait
        // on one instance (a block of 32,768 ranks listed it 32,768 times, 393 kB, at every
        // wait).
        if outside.last() != Some(&dep) {
            outside.push(dep);
        }
    }
    if outside.is_empty() {
        return false;
    }
    let mut since = Instant::now();
    let mut seen = moves.events.load(Ordering::Relaxed);
    let mut backoff = 1;
    loop {
        if outside.iter().any(|&dep| sh.ready(dep)) {
            return true;
        }
        if moves.running.load(Ordering::Acquire) == 1 {
            return false;
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

/// `reasons`, each once, in the order first given, with how many times where more than one.
fn counted(reasons: Vec<String>) -> Vec<String> {
    let mut seen: Vec<(String, usize)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for why in reasons {
        match at.get(&why) {
            Some(&k) => seen[k].1 += 1,
            None => {
                at.insert(why.clone(), seen.len());
                seen.push((why, 1));
            }
        }
    }
    seen.into_iter()
        .map(|(why, n)| match n {
            1 => why,
            n => format!("{why} ({n} calls)"),
        })
        .collect()
}

/// The ranks of the waves that wait on a call time another rank has yet to publish, listed by
/// that rank: a list threaded through arrays of one entry a rank (a rank waits on one event at a
/// time), 12 bytes a rank where a `Vec` a rank took 24 and its first 32 on the heap.
struct Waiters {
    /// The ranks: the lists below are made for them at the first wait (12 bytes a rank, which
    /// a replay whose waves never wait on an event, as one of collectives alone, goes without).
    p: usize,
    /// Per rank `q`: the first rank waiting on one of `q`'s events, or [`NONE`].
    first: Vec<u32>,
    /// Per waiting rank: the next rank waiting on the same rank, or [`NONE`].
    next: Vec<u32>,
    /// Per waiting rank: the event it waits on, of the rank it waits on.
    event: Vec<u32>,
}

impl Waiters {
    fn new(p: usize) -> Waiters {
        Waiters {
            p,
            first: Vec::new(),
            next: Vec::new(),
            event: Vec::new(),
        }
    }

    /// Lists `waiter` as waiting on event `j` of rank `q`.
    fn add(&mut self, q: u32, j: u32, waiter: u32) {
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
    fn wake(&mut self, q: u32, known: impl Fn(u32) -> bool, woken: &mut Vec<u32>) {
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
    fn on(&self, q: u32) -> impl Iterator<Item = u32> + '_ {
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

/// Names the ranks that wait on each other in a cycle, with what each is blocked in.
fn deadlock_message(
    sh: &Shared<'_>,
    states: &[Mutex<RankState>],
    waiting_on_event: &Waiters,
    waiting_on_instance: &HashMap<u32, Vec<u32>>,
) -> String {
    let p = states.len();
    let mut wait_for: DiGraph<u32, ()> = DiGraph::with_capacity(p, p);
    let nodes: Vec<_> = (0..p as u32).map(|r| wait_for.add_node(r)).collect();
    for q in 0..p as u32 {
        for r in waiting_on_event.on(q) {
            wait_for.add_edge(nodes[r as usize], nodes[q as usize], ());
        }
    }
    // Whether rank `m` has called instance `x`: it waits in it (it cannot have left it).
    let called = |m: u32, x: u32| {
        let st = states[m as usize].lock().expect("rank state");
        let (i, ev) = (st.pos as usize, sh.trace.rank(m as usize));
        i < ev.len() && st.published && link_of(sh, m as usize, i, ev.routine(i), st.colls) == x
    };
    for (&x, list) in waiting_on_instance {
        let comm = sh.g.instances[x as usize].comm;
        let members = sh.trace.comm_members(comm).expect("validated communicator");
        for m in (0..members.len()).map(|k| members.get(k)) {
            if !called(m, x) {
                for &r in list {
                    wait_for.add_edge(nodes[r as usize], nodes[m as usize], ());
                }
            }
        }
    }
    let cycle = petgraph::algo::tarjan_scc(&wait_for)
        .into_iter()
        .find(|scc| scc.len() > 1 || wait_for.contains_edge(scc[0], scc[0]))
        .map(|scc| {
            let mut v: Vec<usize> = scc.into_iter().map(|n| wait_for[n] as usize).collect();
            v.sort_unstable();
            v
        })
        .unwrap_or_else(|| {
            (0..p)
                .filter(|&r| {
                    (states[r].lock().expect("rank state").pos as usize) < sh.trace.rank(r).len()
                })
                .collect()
        });
    let describe = |r: usize| {
        let i = states[r].lock().expect("rank state").pos as usize;
        let e = sh.trace.rank(r).event(i);
        let what = match e.routine.shape() {
            Shape::Send | Shape::Isend => {
                let why = match sh.model {
                    Model::LogGps(p) if sh.rendezvous(r, i) => {
                        format!("rendezvous: {} > S = {}", e.bytes, p.S)
                    }
                    _ => "eager".into(),
                };
                format!(
                    "{} bytes to rank {} tag {} comm {} ({why})",
                    e.bytes, e.peer, e.tag, e.comm
                )
            }
            Shape::Recv | Shape::Irecv => {
                format!("from rank {} tag {} comm {}", e.peer, e.tag, e.comm)
            }
            Shape::Sendrecv => format!(
                "{} bytes to rank {} and from rank {}",
                e.bytes,
                e.peer,
                sh.trace.rank(r).recv_half(i).map_or(-1, |h| h.source)
            ),
            Shape::Coll | Shape::CommOp => format!("on comm {}", e.comm),
            _ => String::new(),
        };
        format!("rank {r} event {i} {} {what}", e.routine.mpi_name())
    };
    let parts: Vec<String> = cycle.iter().map(|&r| describe(r)).collect();
    let under = match sh.model {
        Model::LogGps(p) => format!("S = {} bytes", p.S),
        Model::LogGp(_) => "LogGP (no rendezvous)".into(),
    };
    format!(
        "deadlock under {under}: rank(s) {:?} wait on each other: {}",
        cycle,
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::{Schedule, Step};

    /// [`ordered`] keeps the order of times, negative ones and both zeros included, and
    /// [`from_ordered`] gives each back bit for bit.
    #[test]
    fn ordered_bits_keep_the_order_of_times_and_give_them_back() {
        let times = [f64::MIN, -1e9, -1.5, -0.0, 0.0, 1e-300, 2.0, 3e9, f64::MAX];
        let bits: Vec<u64> = times.iter().map(|&t| ordered(t)).collect();
        assert!(bits.windows(2).all(|w| w[0] < w[1]), "{bits:x?}");
        for (&t, &b) in times.iter().zip(&bits) {
            assert_eq!(from_ordered(b).to_bits(), t.to_bits());
        }
        // An instance with no participant yet (0) is below any time.
        assert!(bits.iter().all(|&b| b > 0));
    }

    /// Asking ahead for partners' lines changes no prediction: every synthetic pattern (eager
    /// and by rendezvous), every recorded routine, under LogGPS and LogGP, at 1 and 2 threads,
    /// the same with prefetching forced on as off (on few ranks it is off unless forced).
    #[test]
    fn partner_prefetching_changes_no_prediction() {
        use crate::model::{LogGp, Params};
        use crate::synth::{Pattern, Spec};
        let mut traces = vec![(
            "all-routines".to_string(),
            crate::trace::parse(
                "all-routines",
                include_bytes!("../../fixtures/all-routines.txt"),
            )
            .unwrap(),
        )];
        for &pattern in <Pattern as clap::ValueEnum>::value_variants() {
            for bytes in [100, 100_000] {
                let spec = Spec {
                    pattern,
                    ranks: 12,
                    iterations: 3,
                    bytes,
                    compute_ns: 5000,
                };
                let mut buf = Vec::new();
                crate::synth::write(&spec, &mut buf, &|_| {}).unwrap();
                let name = format!("{pattern:?} of {bytes} bytes");
                traces.push((name, crate::trace::parse("synth", &buf).unwrap()));
            }
        }
        let models = [
            Model::LogGps(Params::preset("myrinet").unwrap()),
            Model::LogGp(LogGp {
                L: 1160.0,
                o: 6550.0,
                g: 9000.0,
                G: 15.48,
            }),
        ];
        let coll = Choice::tuned();
        for (name, t) in &traces {
            let g = crate::graph::build(t, name).unwrap();
            for model in &models {
                for threads in [1, 2] {
                    let run = |forced| {
                        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads);
                        pool.build().unwrap().install(|| {
                            FORCED_PREFETCH.set(Some(forced));
                            let p = replay_with(t, &g, model, &coll, name, &|_| {});
                            FORCED_PREFETCH.set(None);
                            p.unwrap()
                        })
                    };
                    assert_eq!(run(true), run(false), "{name}, {threads} thread(s)");
                }
            }
        }
    }

    /// A rank's state is what a replay of many short ranks holds per rank: 104 bytes.
    #[test]
    fn a_rank_state_takes_104_bytes() {
        let size = std::mem::size_of::<Mutex<RankState>>();
        assert!(size <= 104, "{size} bytes");
    }

    /// Waiters on one rank are woken in the order they were listed, only those whose event is
    /// known, and the rest stay listed, whichever place in the list they held.
    #[test]
    fn waiters_wake_in_order_and_the_rest_stay() {
        let mut w = Waiters::new(8);
        // Ranks 1, 4, 2, 6 wait on events 3, 5, 3, 7 of rank 0; rank 5 on event 1 of rank 3.
        for (q, j, r) in [(0, 3, 1), (0, 5, 4), (0, 3, 2), (3, 1, 5), (0, 7, 6)] {
            w.add(q, j, r);
        }
        assert_eq!(w.on(0).collect::<Vec<_>>(), [6, 2, 4, 1]);
        let mut woken = vec![9];
        // Rank 0 has published its events up to 4.
        w.wake(0, |j| j <= 4, &mut woken);
        assert_eq!(woken, [9, 1, 2]);
        assert_eq!(w.on(0).collect::<Vec<_>>(), [6, 4]);
        assert_eq!(w.on(3).collect::<Vec<_>>(), [5]);
        w.wake(1, |_| true, &mut woken);
        assert_eq!(woken, [9, 1, 2]);
        // The first listed (newest) is woken, then the last.
        w.wake(0, |j| j == 7, &mut woken);
        assert_eq!((woken.len(), w.on(0).collect::<Vec<_>>()), (4, vec![4]));
        w.wake(0, |_| true, &mut woken);
        assert_eq!(woken, [9, 1, 2, 6, 4]);
        assert_eq!(w.on(0).count(), 0);
        // A woken rank can wait again.
        w.add(3, 2, 1);
        w.wake(3, |j| j == 1, &mut woken);
        assert_eq!(
            (&woken[5..], w.on(3).collect::<Vec<_>>()),
            (&[5][..], vec![1])
        );
    }

    /// The schedule cache keeps the newest schedules within its budget of steps, or the newest
    /// alone; the budget grows with the trace.
    #[test]
    fn schedule_cache_forgets_the_oldest_to_stay_within_its_steps() {
        let key = |bytes| ScheduleKey {
            op: Op::Allreduce,
            algorithm: "ring",
            ranks: 1,
            bytes,
            root: 0,
            segment: 8192,
            postal_h: None,
        };
        let built = |steps| -> Built {
            let ranks = vec![vec![Step::Reduce { bytes: 0 }; steps]];
            Arc::new(Schedule::from_steps(ranks).matching().unwrap())
        };
        let third = SCHEDULE_CACHE_STEPS / 3;
        let mut c = ScheduleCache::for_events(0);
        for b in 0..3 {
            c.put(key(b), &built(third));
        }
        assert!((0..3).all(|b| c.get(&key(b)).is_some()));
        c.put(key(3), &built(third)); // over the budget: the oldest goes
        assert!(c.get(&key(0)).is_none() && (1..4).all(|b| c.get(&key(b)).is_some()));
        assert_eq!(c.steps, 3 * third);
        // Alone over the budget: kept alone, until the next comes.
        c.put(key(4), &built(SCHEDULE_CACHE_STEPS + 1));
        assert!(c.get(&key(4)).is_some() && (0..4).all(|b| c.get(&key(b)).is_none()));
        assert_eq!(c.steps, SCHEDULE_CACHE_STEPS + 1);
        c.put(key(5), &built(third));
        assert!(c.get(&key(4)).is_none() && c.get(&key(5)).is_some());
        assert_eq!(c.steps, third);
        // A trace of twice as many events keeps twice as many steps.
        let mut c = ScheduleCache::for_events(2 * SCHEDULE_CACHE_STEPS);
        c.put(key(6), &built(SCHEDULE_CACHE_STEPS));
        c.put(key(7), &built(SCHEDULE_CACHE_STEPS));
        assert!(c.get(&key(6)).is_some() && c.get(&key(7)).is_some());
        c.put(key(8), &built(1));
        assert!(c.get(&key(6)).is_none() && c.get(&key(7)).is_some());
    }
}
