//! Modeled collectives as the replay reaches them: one entry point ([`Shared::modeled_return`])
//! that owns the batching of arrivals, the costing of an instance once all its participants
//! arrived (by the algorithm chosen for it, its schedule built and matched once for all
//! instances of the same shape and cached), and the hand-back of returns once read.

use super::Shared;
use crate::collectives::schedule::{Matching, NONE};
use crate::collectives::{Op, Spec};
use crate::collectives::{copies, eval};
use crate::model::{CostModel, Model, Wait};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, RwLock, TryLockError};

/// Arrivals at modeled collectives a thread batches before it writes their call times.
pub(super) const STARTS_BATCH: usize = 4096;
/// The spin-loop hints a thread waiting for another's costing of a collective makes, one a
/// look, before it yields its core at each look (a costing takes long: it need not look often).
pub(super) const COSTING_MAX_SPINS: u32 = 256;

/// One participant's part of a modeled instance: its predicted return and the sender and
/// receiver synchronization inside its schedule.
#[derive(Clone, Copy, Debug)]
pub(super) struct ModeledReturn {
    pub(super) ret: f64,
    pub(super) sender_sync: f64,
    pub(super) receiver_sync: f64,
    /// When the participant's library last polled by its end (the model's §14).
    pub(super) polled: f64,
}

/// A modeled instance's returns, held from its costing to its last participant's read: 32
/// bytes a participant, which would pile up over a loop's instances if all stayed.
#[derive(Default)]
pub(super) struct Modeled {
    pub(super) returns: RwLock<Returns>,
    /// Participants yet to read theirs.
    pub(super) unread: AtomicU32,
}

#[derive(Default)]
pub(super) enum Returns {
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
    /// The costing's own vectors, in communicator rank order (not copied into a vector of
    /// returns by world rank, sorted: 32 bytes a participant more, twice where two are held).
    Ready(Arc<eval::Completion>),
    /// Every participant has read its own.
    Read,
}

thread_local! {
    /// The thread's batches, kept from wave to wave and round to round (flushed after each;
    /// [`with_kept`]).
    pub(super) static LOCAL: RefCell<Local> = RefCell::default();
}

/// What a thread's runs tell the collective instances, batched until [`Shared::flush`]:
/// unbatched, every participant writes atomically to the instance's few cache lines, which
/// bounce between the threads (see the `coll` case of tests/bench/run.sh).
#[derive(Default)]
pub(super) struct Local {
    /// `(instance, arrivals, latest call time's bits)`.
    pub(super) arrivals: Vec<(u32, u32, u64)>,
    /// `(instance, participants that read their return)`.
    pub(super) reads: Vec<(u32, u32)>,
    /// The returns of the instance read last.
    pub(super) returns: Option<(u32, Arc<eval::Completion>)>,
    /// `(instance, world rank, call time)` of arrivals at modeled collectives; where some set
    /// has `drained`, each followed by where the rank last waited (its rank in
    /// [`wait_slot`]s 1 and 2: [`Wait`]'s `until` and `polled`).
    pub(super) starts: Vec<(u32, u32, f64)>,
    /// Costed events for the observer (at most [`STEPS_BATCH`]).
    pub(super) steps: Vec<super::Step>,
    /// The receives of the completion call being costed, taken one at a time
    /// ([`super::cost::Queued::serial`]); kept in the rank's state only while it is blocked.
    pub(super) queued: Vec<super::cost::Queued>,
}

/// The ranks a [`Local::starts`] entry may name: below 2^29, the bits above naming its slot.
const WAIT_SLOT_SHIFT: u32 = 29;

/// World rank `r` in a [`Local::starts`] entry of slot `slot`: 0 its call time, 1 when its
/// last call that waited stopped waiting, 2 when its library last polled (the model's §14,
/// "Messages taken in while waiting").
#[inline]
pub(super) fn wait_slot(r: u32, slot: u32) -> u32 {
    debug_assert!(r < 1 << WAIT_SLOT_SHIFT, "a rank below 2^29");
    r | slot << WAIT_SLOT_SHIFT
}

/// Steps a thread batches before it hands them to the observer.
pub(super) const STEPS_BATCH: usize = 4096;

/// A modeled instance's schedule's bytes and root, and its operation (None: not one a schedule
/// costs).
pub(super) type Shaped = (u64, u32, Option<Op>);

/// The vectors one instance's costing hands to the next.
#[derive(Default)]
pub(super) struct Spare {
    /// The participants' call times of the instance costed last, for the next instance's
    /// arrivals ([`Returns::Arriving`]).
    pub(super) starts: Vec<f64>,
    /// Returns every participant has read, held nowhere else, for the next costing to fill
    /// again (the vectors and the shared block: no allocation a call).
    pub(super) returns: Option<Arc<eval::Completion>>,
}

/// What a collective's schedule depends on (the cost model is the replay's).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct ScheduleKey {
    pub(super) op: Op,
    pub(super) algorithm: &'static str,
    pub(super) ranks: usize,
    pub(super) bytes: u64,
    pub(super) root: usize,
    pub(super) segment: u64,
    pub(super) postal_h: Option<u64>,
    /// The parameter set it was built with, where several combine (tree shapes follow costs).
    pub(super) set: u8,
}

/// Schedules of fewer steps are not leveled: finding the passes the threads can share costs
/// about an evaluation, which only a large schedule wins back.
pub(super) const LEVELED_MIN_STEPS: usize = 1 << 16;
/// The fewest steps of a schedule whose memory is handed back to the system once it is matched:
/// the `mi_collect` that does it costs little against the peak it lowers on schedules this
/// large (see the `coll` case of tests/bench/run.sh).
pub(super) const RELEASE_SCHEDULE_MIN_STEPS: usize = 1 << 18;

/// The fewest runs a pass of a leveled schedule holds on average: as many as a pass needs to
/// be shared by the threads at all, each pass costing them a meeting (narrower ones run on
/// one; a ring Allreduce on 1,024 ranks, 2,046 passes of 1,024 runs, goes faster by blocks).
pub(super) const LEVELED_MIN_WIDTH: usize = 1 << 12;

/// The fewest ranks of a collective costed from its rule ([`crate::collectives::Ruled`]) where
/// one gives its steps: a lockstep's pass over fewer is too short to share among the threads,
/// where a built schedule's blocks, which every thread waiting for the costing takes part in,
/// are shared at any size (see the `allr` case of tests/bench/run.sh).
pub(super) const RULED_MIN_RANKS: usize = 1 << 12;

/// Each message's parameter set of a schedule on a communicator; None: one set costs them all.
pub(super) type MessageSets = Option<Arc<[u8]>>;

/// A built schedule, matched: all its evaluation reads.
pub(super) type Built = Arc<Matching>;

/// The schedules built most recently, at most its budget of steps in all, or the newest alone
/// if it has more: a trace repeats a few collectives (a loop's Allreduce) many times.
pub(super) struct ScheduleCache {
    /// Oldest first.
    pub(super) entries: Vec<(ScheduleKey, Built, usize)>,
    pub(super) steps: usize,
    pub(super) budget: usize,
}

/// Steps (over all ranks) the schedule cache keeps beyond the newest schedule: their matchings
/// take at most 16 bytes a step, about 67 MB; or as many as the trace has events, so that a
/// loop of several collectives on many ranks keeps all their schedules, not building and
/// matching each again at every turn (see the `mix` case of tests/bench/run.sh).
pub(super) const SCHEDULE_CACHE_STEPS: usize = 1 << 22;

impl ScheduleCache {
    /// A cache for a replay of `events` events.
    pub(super) fn for_events(events: usize) -> ScheduleCache {
        ScheduleCache {
            entries: Vec::new(),
            steps: 0,
            budget: SCHEDULE_CACHE_STEPS.max(events),
        }
    }

    pub(super) fn get(&self, key: &ScheduleKey) -> Option<Built> {
        self.entries
            .iter()
            .find(|(k, ..)| k == key)
            .map(|(_, b, _)| Arc::clone(b))
    }

    /// Keeps `built`, forgetting the oldest to make room: all of them for one over the budget
    /// alone, kept so that a loop's collective on 2^20 ranks is not built and matched again at
    /// every call.
    pub(super) fn put(&mut self, key: ScheduleKey, built: &Built) {
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

impl Shared<'_> {
    /// Participant `r`'s modeled return from instance `x` (all participants arrived), None when
    /// the instance replays as measured. Each participant reads its own once; the last read
    /// flushed frees them.
    #[inline(never)]
    pub(super) fn modeled_return(
        &self,
        x: u32,
        r: u32,
        local: &mut Local,
    ) -> Option<ModeledReturn> {
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
            polled: c.polled_ns[k],
        })
    }

    /// World rank `r`'s communicator rank in instance `x`.
    #[inline]
    pub(super) fn place(&self, x: u32, r: u32) -> usize {
        place(&self.places, self.g.instances[x as usize].comm, r)
    }

    /// Publishes what `local` batched: arrivals (an instance whose last participant arrived is
    /// listed as completed) and reads (an instance all of whose participants read their returns
    /// lets them go).
    pub(super) fn flush(&self, local: &mut Local) {
        self.flush_steps(local);
        // The call times first: an instance is costed once its arrivals are all counted.
        self.flush_starts(local);
        // The reads before the arrivals, the returns read last let go: the returns all
        // participants have read are then there for the costing that arrivals may let another
        // thread start (else a loop of three collectives can hold three instances' returns at
        // once, 32 bytes a rank each).
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
        if let Some(part) = &self.part {
            part.arrivals
                .lock()
                .expect("arrivals")
                .extend_from_slice(&local.arrivals);
        }
        for (x, n, latest) in local.arrivals.drain(..) {
            self.arrive(x, n, latest);
        }
    }

    /// Counts `n` arrivals at instance `x`, the latest called at `latest` (its bits): an
    /// instance whose last participant arrived is listed as completed.
    pub(super) fn arrive(&self, x: u32, n: u32, latest: u64) {
        self.max_call[x as usize].fetch_max(latest, Ordering::AcqRel);
        if self.arrived[x as usize].fetch_add(n, Ordering::AcqRel) + n
            == self.g.instances[x as usize].size
        {
            self.completed.lock().expect("completed").push(x);
        }
    }

    /// Hands the steps `local` batched to the observer.
    pub(super) fn flush_steps(&self, local: &mut Local) {
        if let Some(observe) = self.observer
            && !local.steps.is_empty()
        {
            observe(&local.steps);
            local.steps.clear();
        }
    }

    /// Writes the call times `local` batched into their instances (at most [`STARTS_BATCH`]:
    /// a thread's block of 32,768 ranks would batch 512 kB of them).
    pub(super) fn flush_starts(&self, local: &mut Local) {
        if let Some(part) = &self.part {
            part.starts
                .lock()
                .expect("starts")
                .extend_from_slice(&local.starts);
        }
        self.write_starts(&local.starts);
        local.starts.clear();
    }

    /// Writes `(instance, world rank, call time)` arrivals at modeled instances into them.
    pub(super) fn write_starts(&self, starts: &[(u32, u32, f64)]) {
        for run in starts.chunk_by(|a, b| a.0 == b.0) {
            let x = run[0].0 as usize;
            let mut rs = self.modeled[x].returns.write().expect("returns");
            if matches!(*rs, Returns::Unknown) {
                *rs = Returns::Arriving(self.fresh_starts(self.g.instances[x].size as usize));
            }
            let Returns::Arriving(starts) = &mut *rs else {
                unreachable!("an instance is costed once all its participants arrived")
            };
            // Call times, then (where draining) the ends of the participants' last waits and
            // their last polls, a vector a slot.
            let n = self.g.instances[x].size as usize;
            for &(x, r, t) in run {
                let (slot, r) = (r >> WAIT_SLOT_SHIFT, r & ((1 << WAIT_SLOT_SHIFT) - 1));
                starts[slot as usize * n + self.place(x, r)] = t;
            }
        }
    }

    /// An instance's vector of `n` call times, unknown (and, where draining, as many ends of
    /// the participants' last waits and their last polls): the one the last costing left, if
    /// any.
    pub(super) fn fresh_starts(&self, n: usize) -> Vec<f64> {
        let mut starts = std::mem::take(&mut self.spare.lock().expect("spare").starts);
        starts.clear();
        starts.resize(if self.draining { 3 * n } else { n }, f64::NAN);
        starts
    }

    /// Gives an instance's returns, if this was their last holder, to the next costing to fill
    /// again: a thread's runs keep the last they read, and dropped there they would go back to
    /// that thread's heap, where the costing thread cannot reuse them (2 MB on 65,536 ranks).
    pub(super) fn recycle_returns(&self, mut returns: Arc<eval::Completion>) {
        if Arc::get_mut(&mut returns).is_some() {
            self.spare.lock().expect("spare").returns = Some(returns);
        }
    }

    /// The returns of instance `x`: its schedule, by the chosen algorithm, costed from its
    /// participants' predicted call times (`starts`, in communicator rank order). Kept out of
    /// [`advance`]'s code, with [`Shared::modeled_return`] and [`RankState::add_collective`]:
    /// inlined there, they slow its point-to-point events (see the `gauss` case of
    /// tests/bench/run.sh).
    #[inline(never)]
    pub(super) fn cost_instance(&self, x: u32, mut starts: Vec<f64>) -> Returns {
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
        // Where each participant last waited (the model's §14), for the evaluation.
        if self.draining && starts.len() == 3 * size {
            let (untils, polls) = starts[size..].split_at(size);
            let waits = untils.iter().zip(polls);
            eval.set_waits(waits.map(|(&until, &polled)| Wait { until, polled }));
            starts.truncate(size);
        }
        debug_assert!(starts.len() == size && !starts.iter().any(|t| t.is_nan()));
        let (model, set) = self.instance_model(x);
        // Each participant's part starts its copies after its call; its copies after its last
        // step and, where it receives, `oc` end it later (the model's §8, §15).
        let work = copies::Work::of(model);
        let mut after = copies::own_work((op, algorithm, &spec), work, &mut starts);
        // Participants whose receive buffer the tracer flagged `bounced` or `reduced` (the
        // model's §13).
        fn flagged(m: &HashMap<u32, Box<[u32]>>, x: u32) -> &[u32] {
            m.get(&x).map_or(&[], |k| k)
        }
        let (bounced, into_result) = (flagged(&self.bounced, x), flagged(&self.into_result, x));
        if !bounced.is_empty() || !into_result.is_empty() {
            let places = copies::Bounced {
                bounced,
                into_result,
                clean: flagged(&self.clean, x),
            };
            copies::bounced_after((op, algorithm, &spec), &work, places, &mut after);
        }
        let comm = self.g.instances[x as usize].comm;
        let costed = match model {
            Model::LogGps(p) => {
                let pairs = self.links.map(|l| (l.sets.as_slice(), comm));
                // The participants the tracer flagged `clean`, where the algorithm sends their
                // own data from their buffer and some set has a `clean` (at most 85 sets: a
                // message's set and its two clean variants are numbered in a byte).
                let direct = copies::sends_from_user_buffer(op, algorithm, spec.ranks);
                let sets = &self.sets_then_cleans[..];
                let clean = (self.clean.get(&x).map(|k| &k[..]))
                    .filter(|_| direct && !sets.is_empty() && sets.len() < 256)
                    .map(|k| (k, sets));
                let m = (p, set);
                self.cost_modeled(op, algorithm, &spec, m, pairs, clean, &starts, eval)
            }
            Model::LogGp(m) => {
                self.cost_modeled(op, algorithm, &spec, (m, 0), None, None, &starts, eval)
            }
        };
        eval.set_waits([]);
        self.spare.lock().expect("spare").starts = starts;
        let costed = costed.map(|mut c| {
            if let Some(after) = &after {
                copies::add_after(&mut c, after);
            }
            c
        });
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
                self.unmodeled.lock().expect("warnings").push((x, why));
                Returns::Measured
            }
        }
    }

    /// The model instance `x` is costed with, and its set's index: where several sets combine
    /// (the model's §12), the network's where its members span nodes, else the set of its
    /// first two members' pair; else the run's one. Its `oc` and the shape of its trees follow
    /// this set; its messages, their pairs' ([`Shared::message_sets`]).
    fn instance_model(&self, x: u32) -> (&Model, u8) {
        let Some(links) = self.links else {
            return (self.model, 0);
        };
        let comm = self.g.instances[x as usize].comm;
        let set = match comm {
            0 => links.set_of_group(0..self.trace.nranks()),
            c => match self.trace.comms.iter().find(|m| m.id == c) {
                Some(m) => links.set_of_group(m.members.iter().map(|&r| r as usize)),
                None => 0,
            },
        };
        (&self.models[set], set as u8)
    }

    pub(super) fn instance_done(&self, x: u32) -> bool {
        self.arrived[x as usize].load(Ordering::Acquire) == self.g.instances[x as usize].size
    }

    /// Each message's set of schedule `key` on communicator `comm` (`built`, its matching),
    /// its pair's where several sets combine; None where one set costs them all.
    fn message_sets(&self, key: ScheduleKey, comm: u32, built: &Matching) -> MessageSets {
        let links = self.links?;
        let cached = self
            .message_sets
            .lock()
            .expect("sets")
            .get(&(key, comm))
            .cloned();
        if let Some(sets) = cached {
            return sets;
        }
        let members = match comm {
            0 => None,
            c => self
                .trace
                .comms
                .iter()
                .find(|m| m.id == c)
                .map(|m| &m.members),
        };
        let world = |r: u32| members.map_or(r as usize, |m| m[r as usize] as usize);
        let sets: Vec<u8> = (built.ends().into_iter())
            .map(|(a, b)| match a == NONE || b == NONE {
                true => key.set,
                false => links.set_of(world(a), world(b)) as u8,
            })
            .collect();
        let sets: MessageSets = match sets.iter().all(|&s| s == key.set) {
            true => None,
            false => Some(sets.into()),
        };
        let mut cache = self.message_sets.lock().expect("sets");
        // Bounded as the schedules are: a byte a message, at most their budget of steps in all
        // (emptied, then refilled by the shapes still in use).
        let held: usize = cache.values().flatten().map(|a| a.len()).sum();
        if held + sets.as_ref().map_or(0, |a| a.len()) > SCHEDULE_CACHE_STEPS {
            cache.clear();
        }
        cache.insert((key, comm), sets.clone());
        sets
    }

    /// `op` by `algorithm` on `spec`, costed with the participants calling at `starts`; the
    /// schedule is built and matched once for all instances of the same shape. `pairs`: the
    /// sets that combine and the instance's communicator, where each message takes its pair's
    /// set (the model's §12). `clean`: the participants whose send buffer the tracer flagged
    /// `clean`, and the sets then their clean variants in the same order (the run's one and its
    /// variant where no sets combine): their messages of their own data
    /// ([`Matching::own_sends`]) are costed with their pair's clean variant (the model's §13).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cost_modeled<M: CostModel>(
        &self,
        op: Op,
        algorithm: &'static str,
        spec: &Spec,
        (model, set): (&M, u8),
        pairs: Option<(&[M], u32)>,
        clean: Option<(&[u32], &[M])>,
        starts: &[f64],
        scratch: &mut eval::Scratch,
    ) -> Result<eval::Completion, crate::error::Error> {
        let gamma = self
            .model
            .gamma(crate::collectives::copies::reduced(op, spec));
        // Costed from the rule that gives its steps, never built (a few per call to compute);
        // built where its pairs may take different sets. A rule's messages take no clean
        // variant: building a schedule of that many ranks for it would cost far more.
        if spec.ranks >= RULED_MIN_RANKS
            && pairs.is_none()
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
            set,
        };
        let cached = self.schedules.lock().expect("schedules").get(&key);
        let built = match cached {
            Some(b) => b,
            None => {
                let schedule =
                    crate::collectives::build(op, algorithm, spec, &|b| model.split_costs(b))?;
                let mut matching = schedule.matching()?;
                // Not a ring or a chain: a block of their ranks waits on its two ends only, where
                // each of a ring's 2P passes costs the threads a meeting, and one thread's queue
                // follows a ring's ranks in order. Other schedules go by passes on one thread
                // too, which stream through the ranks where the queue jumps from partner to
                // partner (see the `mix` case of tests/bench/run.sh).
                let level = matching.steps() >= LEVELED_MIN_STEPS
                    && matching.even()
                    && !schedule.neighbours_only();
                drop(schedule);
                if level {
                    matching = matching.leveled(LEVELED_MIN_WIDTH);
                }
                // The schedule and what matching and leveling it used on the way, freed, the
                // allocator keeps for reuse, where the evaluations' arrays do not fit: handed
                // back (see the peak of the `mix` case of tests/bench/run.sh).
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
        let sets = pairs.and_then(|(_, comm)| self.message_sets(key, comm, &built));
        if let Some((places, models)) = clean {
            // A clean sender's own messages take the variant of their pair's set.
            let mut of: Vec<u8> = match sets.as_deref() {
                Some(s) => s.to_vec(),
                None => vec![if pairs.is_some() { set } else { 0 }; built.bytes.len()],
            };
            // (the sets, their clean variants, then their one-way clean variants)
            let n = (models.len() / 3) as u8;
            for &k in places {
                for (id, exchanged) in built.own_sends(k as usize) {
                    of[id as usize] += if exchanged { n } else { 2 * n };
                }
            }
            let each = Some(eval::Each { models, of: &of });
            return eval::evaluate_each(&built, model, each, gamma, starts, scratch, order);
        }
        let each = (pairs.zip(sets.as_deref())).map(|((models, _), of)| eval::Each { models, of });
        eval::evaluate_each(&built, model, each, gamma, starts, scratch, order)
    }
}

/// World rank `r`'s rank in communicator `comm`, given `places` (see [`Shared::places`]).
#[inline]
pub(super) fn place(places: &HashMap<u32, Vec<(u32, u32)>>, comm: u32, r: u32) -> usize {
    match places.get(&comm) {
        None => r as usize,
        Some(pairs) => {
            let k = pairs.binary_search_by_key(&r, |&(w, _)| w);
            pairs[k.expect("a member")].1 as usize
        }
    }
}
