//! LogGPS replay (the model's §3–5): the measured computation is kept, every MPI routine's
//! duration becomes the model's cost. A longest-path computation over the happens-before
//! graph. On several threads each takes a block of ranks and runs them round and round, each
//! as far as its partners' predicted call times are known, reading what the other threads
//! publish as they go (`run_owned`; one thread takes every rank as one block when there are
//! many, `ONE_BLOCK_MIN_RANKS`). Then, or from the start on one thread with fewer ranks,
//! waves: each wave advances every runnable rank until it needs a partner's call time that is
//! not known yet; the ranks whose partners moved run in the next wave, and a wave that leaves
//! ranks waiting on each other names the deadlock. Every predicted time is a pure function of
//! the times it depends on, so the result is the same bit for bit whatever the thread count or
//! the order of the ranks.
//!
//! Under LogGP ([`Model::LogGp`], Alexandrov et al. 1995) each rank keeps one network `Port`,
//! advanced by its own events in program order, with the rule of LogGP's `CostModel` so that a
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
//! - Wait, Waitall and Test follow the model's §4 Wait rule with these completions; `MPI_Probe`
//!   returns at `max(tp, arrival) + o`; nothing ever goes by rendezvous, so sender
//!   synchronization is 0 and waiting for an arrival is receiver synchronization;
//! - a modeled collective is costed on fresh ports (what a rank's port still has to do when it
//!   calls one is not carried into the schedule, nor the schedule's traffic out of it).
//!
//! A send event publishes its `first_out` where other events publish their call time: the
//! receiver computes the arrival from it, and no reader needs a send's call time.

mod collective;
mod cost;
mod deadlock;
pub mod links;
#[cfg(feature = "mpi")]
#[allow(unsafe_code)] // the MPI binding's handles shared between threads
pub mod mpi;
mod rank;
mod schedule;
pub mod split;

pub use links::{Links, Remap, Traffic};

use crate::collectives::eval;
use crate::collectives::traced::{self, Choice, op_of};
use crate::error::{Error, TraceError};
use crate::graph::{HbGraph, NONE};
use crate::memory::Pages;
use crate::model::{Model, Params};
use crate::trace::{Routine, Shape, Trace, list_some};
use collective::{MessageSets, Modeled, ScheduleCache, ScheduleKey, Shaped, Spare, place};
use deadlock::{Waits, counted, deadlock_message, waits};
use rank::RankState;
use rayon::prelude::*;
use schedule::{FORCED_PREFETCH, PARTNER_PREFETCH_MIN_RANKS, Waiting};
use split::{Exchange, Gathered, Part, SplitStats};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

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
    /// is its (a vector of one a rank would be 1 MB on 65,536 ranks, made at the replay's end).
    pub collective_routine: Option<Routine>,
    /// That time per collective routine, where the rank called several (else empty): see
    /// [`RankBreakdown::by_routine`].
    pub collective_kinds: Vec<(Routine, f64)>,
    /// The tracer's own time taken out of the rank's measured gaps between calls
    /// ([`crate::trace::RankMeta::own_ns`] a gap, at most the gap), not in `computation_ns`;
    /// negative where a replay keeping the tracer's time added its time inside the calls
    /// ([`crate::trace::RankMeta::in_call_ns`] a gap), which `computation_ns` holds.
    pub tracer_ns: f64,
    /// Blocking eager sends to this rank that its library held while it computed, beyond their
    /// `T1`, and that time in all (not costed: [`crate::model::Params::held`], the model's §13).
    pub held_sends: u64,
    pub held_ns: f64,
    /// Rendezvous messages this rank received whose single copies alias (the model's §9:
    /// counted where the set has no `alias` to cost them), and their bytes.
    pub aliased: u64,
    pub aliased_bytes: u64,
}

impl RankBreakdown {
    /// The rank's time in collectives per routine, for the routines it called.
    pub fn by_routine(&self) -> impl Iterator<Item = (Routine, f64)> + '_ {
        let one = self.collective_routine.map(|k| (k, self.collective_ns));
        one.into_iter().chain(self.collective_kinds.iter().copied())
    }
}

/// One event as the replay costed it, handed to an observer ([`replay_observed`]: the
/// timeline): its predicted call and return, ns from time 0, and its return's parts. A rank's
/// steps come in its program order; different ranks' interleave in any order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub rank: u32,
    pub event: u32,
    pub call_ns: f64,
    pub return_ns: f64,
    pub communication_ns: f64,
    pub sender_sync_ns: f64,
    pub receiver_sync_ns: f64,
    /// When the rank's library last polled for messages after the event, ns (−∞: not yet;
    /// the model's §14, "Small messages taken in at a poll"): what a later receive of its rank
    /// reads, which the critical path reads back.
    pub polled_ns: f64,
}

/// What an observer of the replay is: called with batches of steps, from any thread.
pub type Observer<'a> = &'a (dyn Fn(&[Step]) + Sync);

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

/// What a replay allocates: an event's predicted call time, and a rank's state and bookkeeping.
pub const BYTES_PER_EVENT: u64 = 8;
pub const BYTES_PER_RANK: u64 = 256;

impl crate::trace::Then {
    /// A prediction, at its least: the graph's links and the replay's call times beside the
    /// events, and each rank's replay state and bookkeeping.
    pub const PREDICT: crate::trace::Then = crate::trace::Then {
        what: "predicting on",
        bytes_per_event: crate::graph::LINK_BYTES_PER_EVENT + BYTES_PER_EVENT,
        bytes_per_rank: BYTES_PER_RANK,
    };
}

/// What [`Shared::calls`] holds for a call time not yet known: they hold a time's bits
/// complemented, so that memory the system hands over zeroed needs no pass to mark them all
/// unknown (no time has all bits set: that is a NaN).
const UNKNOWN: u64 = 0;

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

/// The data every rank reads while replaying.
struct Shared<'a> {
    trace: &'a Trace,
    g: &'a HbGraph,
    /// Bytes above which a message goes by rendezvous (never under LogGP).
    eager_limit: u64,
    model: &'a Model,
    /// The set of each pair of ranks where several combine (the model's §12), and their
    /// models; None: `model` costs every pair.
    links: Option<&'a Links>,
    models: Vec<Model>,
    /// The `clean` set of the run's set (one) or of each of `models` (the set itself where it
    /// has none), and whether any set has one (the model's §13: a rendezvous message its
    /// sender flagged `clean` is costed with it).
    cleans: Vec<Model>,
    clean_any: bool,
    /// Whether some set costs a receive of a message taken in while its rank waited
    /// (`drained`, the model's §14): each participant of a modeled collective then hands on
    /// where it last waited with its call time ([`collective::wait_slot`]).
    draining: bool,
    /// The sets (the run's one where none combine), then their `clean` sets in the same order,
    /// then their one-way `clean` sets, where some set has one (else empty): what a
    /// collective's `clean` messages are costed with ([`Shared::cost_modeled`]).
    sets_then_cleans: Vec<crate::model::Params>,
    /// Whether some set's rendezvous payload holds its sender's CPU (the model's §14): only
    /// then is a rendezvous `MPI_Isend` looked at as a queued one.
    rendezvous_sender: bool,
    /// Predicted call times (f64 bits complemented, [`UNKNOWN`] until known), all ranks in one
    /// array: rank `r`'s event `i` at `offsets[r] + i`, for the point-to-point events only
    /// ([`read_by_partners`]; other entries stay unknown, and the array is empty where there
    /// are none), then the ghosts' ([`Shared::held`]). Under LogGP a send's entry is its
    /// `first_out` instead.
    calls: Pages<AtomicU64>,
    /// Whether [`advance`] asks ahead for what events will read of their partners
    /// ([`PARTNER_PREFETCH_MIN_RANKS`]).
    prefetch_partners: bool,
    offsets: &'a [usize],
    /// This process's own events (all of them in one process): the events from here on in
    /// [`Shared::calls`] and [`Shared::progress_at`] are ghosts ([`HbGraph::ghosts`]).
    held: usize,
    arrived: Vec<AtomicU32>,
    max_call: Vec<AtomicU64>,
    measured_last_arrival: Vec<f64>,
    /// Per instance of a modeled collective (empty where collectives replay as measured).
    shapes: Vec<Shaped>,
    /// By instance of a modeled collective, the participants (communicator ranks, rising)
    /// whose send buffer the tracer flagged `clean` (unchanged since their last send from it;
    /// the model's §13): their own data's messages are costed with their set's `clean_set`.
    clean: HashMap<u32, Box<[u32]>>,
    /// Likewise those whose receive buffer the tracer flagged `bounced` (lines the rank last
    /// sent from, which its peers' copies read: the model's §13): what their schedule receives
    /// into it costs `bounce` more.
    bounced: HashMap<u32, Box<[u32]>>,
    /// Likewise those flagged `reduced` (their receive buffer overlaps the result buffer of an
    /// Allreduce, a Scan or an Exscan: the model's §13): `bounce` more, never `bounce_clean`.
    into_result: HashMap<u32, Box<[u32]>>,
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
    unmodeled: Mutex<Vec<(u32, String)>>,
    /// Schedules of modeled instances, built and matched once for all instances of one shape.
    schedules: Mutex<ScheduleCache>,
    /// Where several sets combine: per schedule and communicator, each message's set (None:
    /// one set costs them all), found once (the model's §12).
    message_sets: Mutex<HashMap<(ScheduleKey, u32), MessageSets>>,
    /// Instances whose last participant arrived since the waves last looked.
    completed: Mutex<Vec<u32>>,
    /// The arrays a modeled instance's costing fills, kept from one to the next: made afresh
    /// (8 MB a call of a 65,536-rank Allreduce) by whichever thread costed the call, they
    /// would stay in each thread's heap once freed and raise the peak (see the `coll` case of
    /// tests/bench/run.sh). One costing at a time holds them; another costed meanwhile makes
    /// its own.
    scratch: Mutex<eval::Scratch>,
    /// What costings hand on, under a lock of its own: taken with the scratch's, a flush
    /// that held it briefly would make a costing on the other thread allocate its own arrays.
    spare: Mutex<Spare>,
    /// Where messages move only inside MPI calls ([`Model::progress_at_calls`]): per event, the
    /// event of its rank's first call at or after it that starts no request (NONE: none
    /// follows), then the ghosts' ([`crate::graph::split::Ghosts::moves`]); empty otherwise.
    progress_at: Vec<u32>,
    /// Told every costed event, in batches ([`replay_observed`]).
    observer: Option<Observer<'a>>,
    /// Where the replay is split over processes ([`replay_split`]): this one's ranks, and what
    /// they published of collectives since the last exchange.
    part: Option<Part<'a>>,
}

/// For every event, the first event of its rank at or after it that starts no request: where a
/// request started there can first move, when messages move only inside MPI calls. Then the
/// ghosts' (`moves`, [`crate::graph::split::Ghosts::moves`]).
fn progress_points(trace: &Trace, moves: &[u32]) -> Vec<u32> {
    let offsets = trace.events.offsets();
    let mut at = vec![NONE; offsets[trace.nranks()]];
    at.reserve_exact(moves.len());
    for r in 0..trace.nranks() {
        let ev = trace.rank(r);
        let mut next = NONE;
        for i in (0..ev.len()).rev() {
            if !ev.routine(i).creates_request() {
                next = (offsets[r] + i) as u32;
            }
            at[offsets[r] + i] = next;
        }
    }
    at.extend_from_slice(moves);
    at
}

impl<'a> Shared<'a> {
    /// What every rank reads while replaying `trace` under `model`, its call times all unknown.
    fn new(
        trace: &'a Trace,
        g: &'a HbGraph,
        model: &'a Model,
        coll: &'a Choice,
        observer: Option<Observer<'a>>,
        ex: Option<&'a dyn Exchange>,
        links: Option<&'a Links>,
    ) -> Result<Shared<'a>, Error> {
        let p = trace.nranks();
        let links = links.filter(|l| !l.uniform() && matches!(model, Model::LogGps(_)));
        let offsets = trace.events.offsets();
        let eager_limit = match model {
            Model::LogGps(params) => params.S,
            Model::LogGp(_) => u64::MAX,
        };

        // Time 0 is the earliest MPI_Init return; each rank starts at its own. One process of a
        // split replay holds its own ranks' events, and the others' that its links name after
        // them (ghosts).
        let ghosts = &g.ghosts;
        let t0 = match ghosts.firsts.is_empty() {
            true => trace.measured_t0(),
            false => ghosts.t0,
        };
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
        // The LogGPS sets: each pair's where several combine, else the run's one.
        let sets: &[crate::model::Params] = match (links, model) {
            (Some(l), _) => &l.sets,
            (None, Model::LogGps(p)) => std::slice::from_ref(p),
            (None, Model::LogGp(_)) => &[],
        };
        let clean_any = (sets.iter()).any(|p| p.clean.is_some() || p.clean_oneway.is_some());
        let draining = sets.iter().any(|p| p.drained.is_some());
        let mut recorded = Recorded::of(trace, g, coll.modeled, t0, &places);
        let (measured_last_arrival, shapes) = recorded.finish(g);
        // (a process of a distributed replay sees its own ranks' flags alone: the others' come
        // with their records, `split::share_recorded`)
        let (clean, bounced, into_result) = match ex {
            Some(_) => Default::default(),
            None => (
                std::mem::take(&mut recorded.clean),
                std::mem::take(&mut recorded.bounced),
                std::mem::take(&mut recorded.into_result),
            ),
        };
        // The replay's peak is the run's: what the load and the graph freed goes back first
        // (see the peaks of the `bcast` and `diss` cases of tests/bench/run.sh).
        crate::memory::release_freed();
        // A trace of collectives alone keeps no call time by event.
        let mut point_to_point = [false; 256];
        for &r in Routine::ALL {
            point_to_point[r as usize] = read_by_partners(r);
        }
        let any = |r: &[Routine]| r.iter().fold(false, |a, &r| a | point_to_point[r as usize]);
        let published =
            model.progress_at_calls() || trace.events.routines().par_chunks(1 << 16).any(any);
        let calls = match published {
            true => crate::memory::zeroed_atomics(offsets[p] + ghosts.len())?,
            false => Pages::zeroed(0)?,
        };
        let sh = Shared {
            trace,
            g,
            eager_limit,
            model,
            links,
            models: (links.iter())
                .flat_map(|l| l.sets.iter().map(|p| Model::LogGps(*p)))
                .collect(),
            cleans: (sets.iter())
                .map(|p| Model::LogGps(p.clean_set().unwrap_or(*p)))
                .collect(),
            clean_any,
            draining,
            sets_then_cleans: match clean_any {
                true => (sets.iter().copied())
                    .chain(sets.iter().map(|p| p.clean_set().unwrap_or(*p)))
                    .chain(sets.iter().map(|p| p.clean_oneway_set().unwrap_or(*p)))
                    .collect(),
                false => Vec::new(),
            },
            rendezvous_sender: match links {
                Some(l) => l.sets.iter().any(|p| p.has_sender_share()),
                None => matches!(model, Model::LogGps(p) if p.has_sender_share()),
            },
            calls,
            prefetch_partners: FORCED_PREFETCH
                .get()
                .unwrap_or(p >= PARTNER_PREFETCH_MIN_RANKS),
            offsets,
            held: offsets[p],
            arrived: (0..g.instances.len()).map(|_| AtomicU32::new(0)).collect(),
            max_call: (0..g.instances.len()).map(|_| AtomicU64::new(0)).collect(),
            measured_last_arrival,
            shapes,
            clean,
            bounced,
            into_result,
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
            message_sets: Mutex::new(HashMap::new()),
            completed: Mutex::new(Vec::new()),
            scratch: Mutex::default(),
            spare: Mutex::default(),
            progress_at: match model.progress_at_calls() {
                true => progress_points(trace, &ghosts.moves),
                false => Vec::new(),
            },
            observer,
            part: ex.map(|ex| Part::new(ex, trace, g, recorded)),
        };

        Ok(sh)
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

/// Per collective instance, the highest of what its participants recorded: their last
/// measured call (after time 0, as [`ordered`] bits) and, where collectives are `modeled`,
/// the bytes its schedule sends and receives, its root's place and its routine. Of this
/// process's ranks alone in a split replay, until the others' are added
/// ([`split::share_recorded`]).
#[derive(Default)]
struct Recorded {
    last: Vec<u64>,
    sent: Vec<u64>,
    received: Vec<u64>,
    root: Vec<u64>,
    code: Vec<u64>,
    /// The participants (communicator ranks, rising) whose record the tracer flagged `clean`,
    /// by instance, where any did (see [`Shared::clean`]); `bounced` ([`Shared::bounced`]) and
    /// `reduced` ([`Shared::into_result`]) likewise.
    clean: HashMap<u32, Box<[u32]>>,
    bounced: HashMap<u32, Box<[u32]>>,
    into_result: HashMap<u32, Box<[u32]>>,
}

impl Recorded {
    /// From the participants' records, gathered rank by rank in parallel, each value raised to
    /// what a participant recorded (a participant mostly records what the one before did:
    /// mostly no write). Not read when an instance is costed, where the other threads wait on
    /// it (see the `allr` case of tests/bench/run.sh), nor over each instance's list of
    /// participants, which the graph would then keep (4 bytes a call).
    fn of(
        trace: &Trace,
        g: &HbGraph,
        modeled: bool,
        t0: f64,
        places: &HashMap<u32, Vec<(u32, u32)>>,
    ) -> Recorded {
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
        let (mut clean_pairs, mut bounced_pairs, mut result_pairs) = Default::default();
        if n > 0 {
            let each = (0..trace.nranks()).into_par_iter().map(|r| {
                // (instance, place) pairs flagged clean, bounced, reduced
                let mut flagged: (Vec<_>, Vec<_>, Vec<_>) = Default::default();
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
                        let f = ev.flags(i);
                        use crate::trace::{FLAG_BOUNCED, FLAG_CLEAN, FLAG_REDUCED};
                        if f & (FLAG_CLEAN | FLAG_BOUNCED | FLAG_REDUCED) != 0 {
                            let k = place(places, g.instances[x].comm, r as u32);
                            let pair = (x as u32, k as u32);
                            let lists = [&mut flagged.0, &mut flagged.1, &mut flagged.2];
                            for (flag, list) in [FLAG_CLEAN, FLAG_BOUNCED, FLAG_REDUCED]
                                .into_iter()
                                .zip(lists)
                            {
                                if f & flag != 0 {
                                    list.push(pair);
                                }
                            }
                        }
                    }
                }
                flagged
            });
            (clean_pairs, bounced_pairs, result_pairs) =
                each.reduce(Default::default, |mut a, mut b| {
                    a.0.append(&mut b.0);
                    a.1.append(&mut b.1);
                    a.2.append(&mut b.2);
                    a
                });
        }
        let clean = Recorded::clean_by_instance(clean_pairs);
        let bounced = Recorded::clean_by_instance(bounced_pairs);
        let into_result = Recorded::clean_by_instance(result_pairs);
        let plain = |v: Vec<AtomicU64>| v.into_iter().map(AtomicU64::into_inner).collect();
        Recorded {
            last: plain(last),
            sent: plain(sent),
            received: plain(received),
            root: plain(root),
            code: plain(code),
            clean,
            bounced,
            into_result,
        }
    }

    /// `(instance, place)` pairs of participants flagged `clean` (or another flag), by instance,
    /// places rising (each once).
    fn clean_by_instance(mut pairs: Vec<(u32, u32)>) -> HashMap<u32, Box<[u32]>> {
        pairs.sort_unstable();
        pairs.dedup();
        (pairs.chunk_by(|a, b| a.0 == b.0))
            .map(|run| (run[0].0, run.iter().map(|&(_, k)| k).collect()))
            .collect()
    }

    /// Per instance, its last measured call, after time 0, and where modeled its schedule's
    /// bytes, root and operation ([`Shared::shapes`]).
    fn finish(&self, g: &HbGraph) -> (Vec<f64>, Vec<Shaped>) {
        let shapes = (0..self.code.len())
            .map(
                |x| match Routine::from_code(self.code[x] as u8).and_then(op_of) {
                    Some(op) => {
                        let rec = traced::Recorded {
                            sent: self.sent[x],
                            received: self.received[x],
                            root: self.root[x] as usize,
                        };
                        let spec = rec.spec(op, g.instances[x].size as usize);
                        (spec.bytes, spec.root as u32, Some(op))
                    }
                    None => (0, 0, None),
                },
            )
            .collect();
        let last = self.last.iter().map(|&a| from_ordered(a));
        (last.collect(), shapes)
    }
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
/// operation's (its partner's, its request's completion), a nonblocking collective's (its
/// request's completion). Only those are kept in
/// [`Shared::calls`].
#[inline(always)]
fn read_by_partners(routine: Routine) -> bool {
    matches!(
        routine.shape(),
        Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv | Shape::Sendrecv
    ) || routine.nonblocking()
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
) -> Result<Prediction, Error> {
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
) -> Result<Prediction, Error> {
    replay_observed(trace, g, model, coll, file, progress, None)
}

/// [`replay_with`], every costed event handed to `observer` as it goes (in batches, from the
/// threads that cost them); a deadlock's events up to where its ranks stopped too.
pub fn replay_observed(
    trace: &Trace,
    g: &HbGraph,
    model: &Model,
    coll: &Choice,
    file: &str,
    progress: &(dyn Fn(u64) + Sync),
    observer: Option<Observer<'_>>,
) -> Result<Prediction, Error> {
    replay_linked(trace, g, model, None, coll, file, progress, observer)
}

/// [`replay_observed`], each message costed with its pair's set where `links` combines
/// several (the model's §12; LogGPS only). `model` is the main set: collectives' schedules and
/// what names no pair cost with it.
#[allow(clippy::too_many_arguments)]
pub fn replay_linked(
    trace: &Trace,
    g: &HbGraph,
    model: &Model,
    links: Option<&Links>,
    coll: &Choice,
    file: &str,
    progress: &(dyn Fn(u64) + Sync),
    observer: Option<Observer<'_>>,
) -> Result<Prediction, Error> {
    check_memory(trace, file)?;
    let sh = Shared::new(trace, g, model, coll, observer, None, links)?;
    let states = fresh_states(trace.nranks(), model);
    let waiting = schedule::run(&sh, &states, (0..trace.nranks() as u32).collect(), progress);
    finish(sh, states, &waiting, file)
}

/// Refuses a replay of `trace` that would take more memory than is left.
fn check_memory(trace: &Trace, file: &str) -> Result<(), Error> {
    let p = trace.nranks();
    let events = trace.events.offsets()[p];
    let what = format!("replaying {events} events of {p} ranks");
    let need = BYTES_PER_EVENT * events as u64 + BYTES_PER_RANK * p as u64;
    crate::memory::ensure(&what, need).map_err(|e| e.in_file(file))?;
    Ok(())
}

/// Every rank's state before the replay.
fn fresh_states(p: usize, model: &Model) -> Vec<Mutex<RankState>> {
    (0..p)
        .into_par_iter()
        .map(|_| Mutex::new(RankState::new(model)))
        .collect()
}

/// Whether rank `r`, replayed up to event `pos`, has ended: at its last event or its
/// MPI_Finalize (else it is blocked).
fn ended(trace: &Trace, r: usize, pos: u32) -> bool {
    let ev = trace.rank(r);
    let pos = pos as usize;
    pos >= ev.len() || ev.routine(pos) == Routine::Finalize
}

/// [`replay_linked`] split over the processes `ex` joins ([`split`]): this one replays its
/// block of ranks (`trace` holds them, [`crate::trace::load_ranks`]; `g` is their graph,
/// [`crate::graph::split::divide`]), exchanging call times with the others in rounds. Every process calls it
/// alike. Process 0 gets the whole prediction, the one [`replay_with`] gives bit for bit; the
/// others get their own ranks' breakdowns (and the same error, if there is one). `progress`
/// is told the events this process replayed.
#[allow(clippy::too_many_arguments)]
pub fn replay_split(
    trace: &Trace,
    g: &HbGraph,
    model: &Model,
    links: Option<&Links>,
    coll: &Choice,
    file: &str,
    progress: &(dyn Fn(u64) + Sync),
    ex: &dyn Exchange,
) -> Result<(Prediction, SplitStats), Error> {
    if g.ghosts.firsts.is_empty() {
        return Err(Error::Io(
            "a split replay takes the graph of its own ranks (graph::split::divide)".into(),
        ));
    }
    // A node short of memory stops every process, not only its own.
    let ready = check_memory(trace, file)
        .and_then(|()| Shared::new(trace, g, model, coll, None, Some(ex), links));
    let mut sh = split::agreed(ready, ex)?;
    split::share_recorded(&mut sh)?;
    let states = fresh_states(trace.nranks(), model);
    let (mut stats, waiting) = split::run(&sh, &states, progress)?;
    let own = sh.part.as_ref().expect("split").ranks.clone();
    let stuck: Vec<usize> = (own.clone())
        .filter(|&r| !ended(trace, r, states[r].lock().expect("rank state").pos))
        .collect();
    // What names a deadlock, of its own ranks (gathered below if a rank anywhere is stuck).
    let own_waits = match stuck.is_empty() {
        true => Waits::default(),
        false => waits(
            &sh,
            &states,
            &waiting.on_event,
            &waiting.on_instance,
            own.clone(),
            true,
        ),
    };
    let (t0, mut warnings) = (sh.t0, g.warnings.clone());
    let unmodeled = std::mem::take(&mut *sh.unmodeled.lock().expect("warnings"));
    let aliased = aliased_received(&sh, own.clone());
    drop(sh);
    let first = own.start;
    let mine = Gathered {
        stuck,
        ranks: own
            .map(|r| {
                let st = std::mem::replace(
                    &mut *states[r].lock().expect("rank state"),
                    RankState::new(model),
                );
                let (pos, measured_end) = (
                    st.pos as usize,
                    trace.measured_end_ns_from(r, st.pos as usize),
                );
                let mut b =
                    st.breakdown(r, trace.rank(r).len(), measured_end.map_or(0.0, |e| e - t0));
                b.tracer_ns = rank::tracer_removed(trace, r, pos);
                (b.aliased, b.aliased_bytes) = aliased[r - first];
                b
            })
            .collect(),
        unmodeled,
    };
    let (all, stuck) = split::gather(ex, mine, &mut stats)?;
    if stuck > 0 && trace.complete {
        let w = split::gather_waits(ex, own_waits, &mut stats)?;
        let cycle = deadlock_message(trace, g, model, &w, &|r| w.said(r));
        return Err(TraceError::at(file, cycle).into());
    }
    warnings.extend(unmodeled_warning(all.unmodeled));
    if stuck > 0 {
        warnings.push(format!(
            "the unfinished trace cuts {} rank(s) short at an operation whose partner was never recorded{}",
            stuck,
            list_some(&all.stuck)
        ));
    }
    let ranks = all.ranks;
    warnings.extend(held_warning(&ranks));
    warnings.extend(alias_warning(&ranks));
    let predicted_ns = ranks.iter().map(|b| b.end_ns).fold(0.0, f64::max);
    let measured_ns = ranks.iter().map(|b| b.measured_end_ns).fold(0.0, f64::max);
    let prediction = Prediction {
        ranks,
        predicted_ns,
        measured_ns,
        warnings,
    };
    Ok((prediction, stats))
}

/// The warning for the blocking eager sends a library held while their receiver computed
/// ([`RankBreakdown::held_sends`]), if there were any.
fn held_warning(ranks: &[RankBreakdown]) -> Option<String> {
    let n: u64 = ranks.iter().map(|b| b.held_sends).sum();
    if n == 0 {
        return None;
    }
    let ns: f64 = ranks.iter().map(|b| b.held_ns).sum();
    let receivers = ranks.iter().filter(|b| b.held_sends > 0).count();
    Some(format!(
        "{n} blocking MPI_Send(s) above the parameters' departs_upto reached their receiver while it \
         computed ({receivers} receiving rank(s)): this library gives such a send back only once its \
         receiver has taken the message in an MPI call, which the model does not cost (MODEL.md \
         §13, \"Sends held by a computing receiver\"): their senders are predicted up to {:.6} s \
         short in all",
        ns / 1e9
    ))
}

/// Per rank of `ranks`, the rendezvous messages it received whose single copies alias (the
/// receive buffer 1 to [`crate::model::ALIAS_REACH`] bytes further into its page than the send buffer,
/// the model's §9) and their bytes, where the run's set has no `alias` to cost them (else none
/// counted).
fn aliased_received(sh: &Shared<'_>, ranks: std::ops::Range<usize>) -> Vec<(u64, u64)> {
    match sh.model {
        Model::LogGps(p) if p.alias.is_none_or(|a| a == 0.0) => {}
        _ => return vec![(0, 0); ranks.len()],
    }
    ranks
        .into_par_iter()
        .map(|r| {
            let ev = sh.trace.rank(r);
            let mut sum = (0u64, 0u64);
            for i in 0..ev.len() {
                let (routine, Some(recv)) = (ev.routine(i), ev.pages(i).recv) else {
                    continue;
                };
                let (from, plain) = match routine.shape() {
                    Shape::Sendrecv => (sh.g.link2(r, i), false),
                    Shape::Recv | Shape::Irecv if !routine.is_probe() => sh.g.link_plain(r, i),
                    _ => continue,
                };
                if from == NONE {
                    continue;
                }
                let (k, rdv) = sh.message(from as usize, plain, r);
                if rdv && crate::model::aliases(sh.pages_of(from as usize).send, || Some(recv)) {
                    sum = (sum.0 + 1, sum.1 + k);
                }
            }
            sum
        })
        .collect()
}

/// The warning for the aliased messages the ranks received ([`RankBreakdown::aliased`]), if
/// there were any.
fn alias_warning(ranks: &[RankBreakdown]) -> Option<String> {
    let n: u64 = ranks.iter().map(|b| b.aliased).sum();
    let bytes: u64 = ranks.iter().map(|b| b.aliased_bytes).sum();
    (n > 0).then(|| {
        format!(
            "{n} rendezvous message(s) ({bytes} bytes) were received into a buffer starting 1–{} \
             bytes further into its 4 KiB page than their send buffer: on CPUs with 4 KiB \
             aliasing their single copy runs several times slower, which these parameters do not \
             cost (no `alias`: `calibrate` measures it; --alias sets it) (the model's §9)",
            crate::model::ALIAS_REACH
        )
    })
}

/// The warning for the instances that could not be modeled (`(instance, why)`), in the
/// order of the instances, if there are any.
fn unmodeled_warning(mut unmodeled: Vec<(u32, String)>) -> Option<String> {
    if unmodeled.is_empty() {
        return None;
    }
    unmodeled.sort_unstable_by_key(|u| u.0);
    let n = unmodeled.len();
    let reasons = counted(unmodeled.into_iter().map(|u| u.1).collect());
    Some(format!(
        "{n} collective call(s) replayed as measured, not modeled{}",
        list_some(&reasons)
    ))
}

/// The prediction from the ranks' states once no rank can go on: an error naming the deadlock
/// where a complete trace's ranks are stuck, else every rank's breakdown and the warnings.
fn finish(
    sh: Shared<'_>,
    mut states: Vec<Mutex<RankState>>,
    waiting: &Waiting,
    file: &str,
) -> Result<Prediction, Error> {
    let (trace, g, t0) = (sh.trace, sh.g, sh.t0);
    let mut warnings = g.warnings.clone();
    let unmodeled = std::mem::take(&mut *sh.unmodeled.lock().expect("warnings"));
    warnings.extend(unmodeled_warning(unmodeled));
    // Read without locking: no thread runs now.
    let blocked: Vec<usize> = states
        .par_iter_mut()
        .enumerate()
        .filter_map(|(r, st)| {
            (!ended(trace, r, st.get_mut().expect("rank state").pos)).then_some(r)
        })
        .collect();
    if !blocked.is_empty() {
        if trace.complete {
            let p = trace.nranks();
            let w = waits(
                &sh,
                &states,
                &waiting.on_event,
                &waiting.on_instance,
                0..p,
                false,
            );
            // Only the cycle's ranks put in words.
            let pos = |r: u32| states[r as usize].lock().expect("rank state").pos as usize;
            let say = |r: u32| deadlock::describe(&sh, r as usize, pos(r));
            let cycle = deadlock_message(trace, g, sh.model, &w, &say);
            return Err(TraceError::at(file, cycle).into());
        }
        warnings.push(format!(
            "the unfinished trace cuts {} rank(s) short at an operation whose partner was never recorded{}",
            blocked.len(),
            list_some(&blocked)
        ));
    }

    let aliased = aliased_received(&sh, 0..trace.nranks());
    // The predicted call times and the costings' arrays go before the breakdowns are made,
    // handed back to the system: freed by whichever thread had costed last, they would not be
    // reused for the breakdowns another thread makes (the `coll` case of tests/bench/run.sh).
    drop(sh);
    crate::memory::release_freed();
    let ranks: Vec<RankBreakdown> = states
        .into_par_iter()
        .enumerate()
        .map(|(r, st)| {
            let st = st.into_inner().expect("rank state");
            // Its MPI_Finalize looked for from where it stopped, not from its first event.
            let measured_end = trace.measured_end_ns_from(r, st.pos as usize);
            let measured_end = measured_end.map_or(0.0, |e| e - t0);
            let pos = st.pos as usize;
            let mut b = st.breakdown(r, trace.rank(r).len(), measured_end);
            b.tracer_ns = rank::tracer_removed(trace, r, pos);
            (b.aliased, b.aliased_bytes) = aliased[r];
            b
        })
        .collect();
    warnings.extend(held_warning(&ranks));
    warnings.extend(alias_warning(&ranks));
    let predicted_ns = ranks.iter().map(|b| b.end_ns).fold(0.0, f64::max);
    let measured_ns = ranks.iter().map(|b| b.measured_end_ns).fold(0.0, f64::max);
    Ok(Prediction {
        ranks,
        predicted_ns,
        measured_ns,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::collective::{Built, SCHEDULE_CACHE_STEPS, ScheduleKey};
    use super::schedule::Waiters;
    use super::*;
    use crate::collectives::{Op, Schedule, Step};
    use std::sync::Arc;

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
                gamma: 0.0,
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

    /// A rank's state is what a replay of many short ranks holds per rank: 120 bytes (104
    /// before it kept where the rank last waited, the model's §14).
    #[test]
    fn a_rank_state_takes_120_bytes() {
        let size = std::mem::size_of::<Mutex<RankState>>();
        assert!(size <= 120, "{size} bytes");
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
            set: 0,
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
