//! The critical path of a prediction: the chain of events that sets the predicted runtime.
//!
//! Walked back from the rank that ends last, from its `MPI_Finalize` call. At each call the
//! model's rule for it ([`Rule`]), applied to the recorded times of what it depends on, must
//! give its return again, and tells which instant the return came from:
//! - its own call: the path takes the call's whole duration and the computation before it,
//!   back to the event before;
//! - another event's call: the send a receive waited for, the receive a rendezvous send waited
//!   for (where messages move only inside calls, the call that moved it,
//!   [`crate::model::Model::progress_at_calls`]); for a Wait, what its last completion came
//!   from (a partner, or the call that started the request); for a collective, the
//!   instance's last call. The stretch from there to the return is the call's communication,
//!   and the path goes on before that call.
//!
//! Where no rule gives the return again (LogGP), a call that waited goes to the partner that
//! called last. So synchronization lies on the path only where a wait has no partner to name.
//! The path's segments add up to the predicted runtime; each keeps its rule, held to the
//! branch that bound it, so that the runtime's derivative by any parameter can be read off
//! the path ([`CriticalPath::derivative`]).

use crate::callsites::Cost;
use crate::collectives::traced::{Choice, Recorded, op_of};
use crate::collectives::{Op, Spec};
use crate::graph::{HbGraph, NONE, rendezvous_at, rendezvous_in};
use crate::model::{Knob, Model, Params, Wait, aliases};
use crate::replay::{Links, Prediction, Step};
use crate::trace::sites::UNKNOWN;
use crate::trace::{FLAG_BOUNCED, FLAG_CLEAN, FLAG_FOUND, PEER_NULL, Routine, Shape, Trace};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// What the walk reads: the trace, its graph, the model, the collective instances'
/// participants and each collective call's instance, and the recorded call times.
struct Context<'a> {
    trace: &'a Trace,
    g: &'a HbGraph,
    model: &'a Model,
    /// The sets messages are costed with (the first the run's main one): each pair's, where
    /// `links` combines several (the model's §12), else the model's one.
    sets: &'a [Params],
    links: Option<&'a Links>,
    participants: &'a [Vec<(u32, u32)>],
    instances: &'a HashMap<(u32, u32), u32>,
    coll: &'a Choice,
    call: &'a dyn Fn(usize, usize) -> Option<f64>,
    /// Where rank `r` last waited before its event `i`, as the replay kept it (the model's
    /// §14, "Messages taken in while waiting").
    wait: &'a dyn Fn(usize, usize) -> Wait,
    /// Time 0 of the replay ([`Trace::measured_t0`]).
    t0: f64,
}

impl Context<'_> {
    /// The set (index into `sets`) of a message between ranks `a` and `b`.
    fn set_of(&self, a: usize, b: usize) -> u8 {
        self.links.map_or(0, |l| l.set_of(a, b) as u8)
    }

    /// The set of rank `r`'s call naming `peer` (the main one where it names no rank).
    fn set_to(&self, r: usize, peer: i32) -> u8 {
        match usize::try_from(peer) {
            Ok(q) if q < self.trace.nranks() => self.set_of(r, q),
            _ => 0,
        }
    }
}

/// What the replay costed, per global event: call, return, communication, sender and receiver
/// synchronization, and when its rank's library last polled after it, ns (a call of NaN: not
/// costed). Filled by [`Record::observe`], 48 bytes an event.
pub struct Record {
    times: Mutex<Vec<[f64; 6]>>,
    offsets: Vec<usize>,
}

impl Record {
    /// Room for every event of `trace`.
    pub fn new(trace: &Trace) -> Record {
        let offsets = trace.events.offsets().to_vec();
        let n = offsets[trace.nranks()];
        Record {
            times: Mutex::new(vec![[f64::NAN, 0.0, 0.0, 0.0, 0.0, f64::NEG_INFINITY]; n]),
            offsets,
        }
    }

    /// Keeps a batch of costed events (a replay's observer).
    pub fn observe(&self, steps: &[Step]) {
        let mut t = self.times.lock().expect("record");
        for s in steps {
            t[self.offsets[s.rank as usize] + s.event as usize] = [
                s.call_ns,
                s.return_ns,
                s.communication_ns,
                s.sender_sync_ns,
                s.receiver_sync_ns,
                s.polled_ns,
            ];
        }
    }
}

/// Which of the four parts a stretch of the path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    Computation,
    Communication,
    SenderSync,
    ReceiverSync,
}

/// A stretch of the path on one rank: the computation before event `event`, or part of its
/// call, with the model's rule that gave its cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    pub rank: u32,
    pub event: u32,
    pub part: Part,
    pub rule: Rule,
    pub from_ns: f64,
    pub to_ns: f64,
}

/// The model's rule that gave a segment's end, with its inputs: what the end would be under
/// other parameters, the inputs held (`Rule::ret`).
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// A cost that no parameter moves: computation, a call kept at its traced duration.
    Const,
    /// `o` of set `.1` (an index into the path's sets) after the instant `.0`: a nonblocking
    /// call, a Wait with nothing left to wait for.
    O(f64, u8),
    /// A receive's post (`MPI_Irecv`) after the instant `.0`: `post` of set `.1`, `o` where
    /// it has none.
    Post(f64, u8),
    /// A completion call with nothing left to wait for, after the instant `.0`: `wait` of set
    /// `.1`, `o` where it has none (the model's §4 Wait rule).
    Wait(f64, u8),
    /// A `k`-byte message's send, receive or probe ([`Side`]), sent at `ts` and received (or
    /// probed for) at `tr`, costed with set `set` (its pair's).
    Message {
        side: Side,
        k: u64,
        rdv: bool,
        ts: f64,
        tr: f64,
        set: u8,
    },
    /// A modeled collective: its instance's schedule costed again from its participants'
    /// calls.
    Collective(Arc<Modeled>),
    /// Receives taken one at a time in one completion call (the model's §14): the first that
    /// did not wait for another (`.0`, a [`Rule::Message`]), then each `(k, rendezvous, ts,
    /// tr, set)` of those after it, each started at the end of the one before.
    Queue(Box<Rule>, Arc<[Queued]>),
    /// A cost no rule here tells (any under LogGP).
    Unknown,
}

/// Why a rendezvous payload's single copy takes longer, as a [`Side`] holds it: bits
/// [`SLOW_BOUNCED`] (into a buffer last sent to the same peer, [`Params::bounced`], the model's
/// §13) and [`SLOW_ALIASED`] (its buffers alias, [`Params::slowed`], §13); its receive and its
/// send, which waits for the copy, end as much later.
pub type Slow = u8;
pub const SLOW_BOUNCED: Slow = 1;
pub const SLOW_ALIASED: Slow = 2;

/// The [`Slow`] of a copy into a bounced buffer, of one whose buffers alias.
fn slow_of(bounced: bool, aliased: bool) -> Slow {
    match (bounced, aliased) {
        (false, false) => 0,
        (true, false) => SLOW_BOUNCED,
        (false, true) => SLOW_ALIASED,
        (true, true) => SLOW_BOUNCED | SLOW_ALIASED,
    }
}

/// `c` longer by what `slow` says of a `k`-byte payload's copy ([`Params::slowed`]).
fn slowed(p: &Params, k: u64, rdv: bool, slow: Slow, c: crate::model::Cost) -> crate::model::Cost {
    p.slowed(
        k,
        rdv,
        slow & SLOW_BOUNCED != 0,
        slow & SLOW_ALIASED != 0,
        c,
    )
}

/// Which end of a message a [`Rule::Message`] costs: the model's rule for it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Side {
    /// [`Params::send`]: it waits for the receive's call `tr` (rendezvous), and for its copy
    /// where that is slowed ([`Slow`]).
    Send(Slow),
    /// [`Params::recv`]: it waits for the message sent at `ts`; its copy slowed as [`Slow`]
    /// says.
    Recv(Slow),
    /// [`Params::drained_recv`]: its eager message taken in while its rank waited in an
    /// earlier call, it costs `drained` after its call, waiting for nothing.
    Drained,
    /// [`Params::probe`]: as a receive.
    Probe,
    /// [`Params::isend_at_calls`]: an `MPI_Isend` where messages move only inside calls, which
    /// waits for nothing.
    Isend,
}

impl Side {
    fn cost(self, p: &Params, k: u64, rdv: bool, ts: f64, tr: f64) -> crate::model::Cost {
        match self {
            Side::Send(s) => slowed(p, k, rdv, s, p.send(k, rdv, ts, tr)),
            Side::Recv(s) => slowed(p, k, rdv, s, p.recv(k, rdv, ts, tr)),
            Side::Drained => crate::model::Cost {
                ret: tr + p.drained.map_or(0.0, |d| d.at(k as f64)),
                sync: 0.0,
                unblock: tr,
            },
            Side::Probe => p.probe(k, rdv, ts, tr),
            Side::Isend => crate::model::Cost {
                ret: ts + p.isend_at_calls(k, rdv),
                sync: 0.0,
                unblock: ts,
            },
        }
    }

    /// When the end's call holds its rank's CPU where a completion call takes its operations
    /// one at a time (the model's §14): `(start, cost)`. A send holds it only where its set's
    /// rendezvous payload holds its sender's CPU ([`Params::send_span`]); otherwise from its
    /// end.
    fn span(self, p: &Params, k: u64, rdv: bool, ts: f64, tr: f64) -> (f64, crate::model::Cost) {
        match self {
            Side::Isend => {
                let c = self.cost(p, k, rdv, ts, tr);
                (c.ret, c)
            }
            Side::Drained => (tr, self.cost(p, k, rdv, ts, tr)),
            // (the replay queues the slowed send: its start as much later)
            Side::Send(s) => {
                let (start, c) = p.send_span(k, rdv, ts, tr).unwrap_or_else(|| {
                    let c = p.send(k, rdv, ts, tr);
                    (c.ret, c)
                });
                let slow = slowed(p, k, rdv, s, c);
                (start + (slow.ret - c.ret), slow)
            }
            Side::Probe => p.recv_span(k, rdv, (ts, tr), p.progress_at_calls, &mut { Wait::NONE }),
            Side::Recv(s) => {
                let (start, c) =
                    p.recv_span(k, rdv, (ts, tr), p.progress_at_calls, &mut { Wait::NONE });
                (start, slowed(p, k, rdv, s, c))
            }
        }
    }
}

/// A modeled collective instance as a participant's return came from it: the operation, its
/// algorithm and shape, every participant's call (in communicator rank order), the
/// participant's place among them, its own call and the instance's set.
#[derive(Debug, PartialEq)]
pub struct Modeled {
    op: Op,
    algorithm: &'static str,
    spec: Spec,
    starts: Vec<f64>,
    /// Where each participant last waited before its call (the model's §14); empty where no
    /// set has `drained`.
    waits: Vec<Wait>,
    place: usize,
    call: f64,
    set: u8,
    /// The tracer flagged the participant's receive buffer `bounced` (the model's §13).
    bounced: bool,
    /// ... or `reduced` (likewise).
    into_result: bool,
    /// Where `bounced`, the places whose send buffer the tracer flagged `clean` (rising; the
    /// model's §13).
    clean: Vec<u32>,
}

impl Modeled {
    /// The participant's return under `p` (its `gamma` charging reductions, each part started
    /// its copies after its call, its copies after it and, where it receives, `oc` ending it
    /// later: the model's §8, §15): the schedule's end for it, never before its call.
    fn end(&self, p: &Params) -> Option<f64> {
        use crate::collectives::copies;
        let reduced = copies::reduced(self.op, &self.spec);
        let gamma = p.gamma.map_or(0.0, |g| g.at(reduced as f64));
        let work = copies::Work::of_params(p);
        let mut starts = self.starts.clone();
        let shape = (self.op, self.algorithm, &self.spec);
        let mut after = copies::own_work(shape, work, &mut starts);
        if self.bounced || self.into_result {
            let place = [self.place as u32];
            let flagged = copies::Bounced {
                bounced: if self.bounced { &place } else { &[] },
                into_result: if self.into_result { &place } else { &[] },
                clean: &self.clean,
            };
            copies::bounced_after(shape, &work, flagged, &mut after);
        }
        let mut c = crate::collectives::predict_waiting(
            self.op,
            self.algorithm,
            &self.spec,
            p,
            (gamma, &starts),
            &self.waits,
        )
        .ok()?;
        if let Some(after) = &after {
            copies::add_after(&mut c, after);
        }
        Some(c.rank_end_ns.get(self.place)?.max(self.call))
    }
}

impl Rule {
    /// The segment's end under `sets` (the path's, or each moved by a knob; 0 for a constant
    /// one: only its change is read, see [`CriticalPath::derivative`]); None where no rule
    /// tells.
    fn ret(&self, sets: &[Params]) -> Option<f64> {
        match *self {
            Rule::Const => Some(0.0),
            Rule::O(t, s) => Some(t + sets[s as usize].o),
            Rule::Post(t, s) => Some(t + sets[s as usize].post.unwrap_or(sets[s as usize].o)),
            Rule::Wait(t, s) => Some(t + sets[s as usize].wait_floor()),
            Rule::Message {
                side,
                k,
                rdv,
                ts,
                tr,
                set,
            } => Some(side.cost(&message_set(sets, set), k, rdv, ts, tr).ret),
            Rule::Collective(ref m) => m.end(&sets[m.set as usize]),
            Rule::Queue(ref head, ref after) => {
                Some(head.ret(sets)? + after.iter().map(|q| behind(sets, q)).sum::<f64>())
            }
            Rule::Unknown => None,
        }
    }

    /// The rule held to the branch of its maximum that bound it under `base`: the input that
    /// did not bind set to −∞, so that other parameters move the end only as that branch
    /// does (at a tie, the one the walk followed: the call's own).
    fn held(&self, base: &[Params]) -> Rule {
        if let Rule::Queue(head, after) = self {
            return Rule::Queue(Box::new(head.held(base)), after.clone());
        }
        let Rule::Message {
            side,
            k,
            rdv,
            mut ts,
            mut tr,
            set,
        } = *self
        else {
            return self.clone();
        };
        // A send waits for its receive's call, a receive or a probe for its message.
        let p = &message_set(base, set);
        match (side, side.cost(p, k, rdv, ts, tr).sync > 0.0) {
            (Side::Send(_), true) | (Side::Recv(_) | Side::Probe | Side::Drained, false) => {
                ts = f64::NEG_INFINITY
            }
            _ => tr = f64::NEG_INFINITY,
        }
        Rule::Message {
            side,
            k,
            rdv,
            ts,
            tr,
            set,
        }
    }
}

/// Where a call's return came from: its own call, or another event's call (a partner's, a
/// request's creator, the call where a posted receive moved).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Binder {
    Own,
    Event(usize, usize),
}

/// Where the path leaves a waiting call for the partner it waited for: at the partner's call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jump {
    pub partner_rank: u32,
    pub partner_event: u32,
    pub rank: u32,
    pub event: u32,
    pub at_ns: f64,
}

/// The critical path: its segments and its jumps, in time order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CriticalPath {
    pub segments: Vec<Segment>,
    pub jumps: Vec<Jump>,
}

/// The path's time as the four parts, per rank and per routine, ns.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Composition {
    pub length_ns: f64,
    pub computation_ns: f64,
    pub communication_ns: f64,
    pub sender_sync_ns: f64,
    pub receiver_sync_ns: f64,
    /// `(rank, time on the path)`, by rank, for the ranks the path crosses.
    pub by_rank: Vec<(u32, f64)>,
    /// `(routine, time on the path)`, most first; computation is `computation`.
    pub by_routine: Vec<(String, f64)>,
    /// How many times the path moves to another rank's call.
    pub jumps: usize,
    /// `(rank, site index, its calls' time on the path)` of the calls on the path with a
    /// recorded site (none where the trace has no sites): to be named and summed by place
    /// ([`crate::callsites::rows`]).
    #[serde(skip)]
    pub by_site: Vec<(usize, usize, Cost)>,
}

impl CriticalPath {
    /// Walks the path back from the last-ending rank's return (see the top): each message's
    /// rule with its pair's set where `links` combines several.
    pub fn find(
        trace: &Trace,
        g: &HbGraph,
        record: &Record,
        pred: &Prediction,
        model: &Model,
        links: Option<&Links>,
        coll: &Choice,
    ) -> CriticalPath {
        let times = record.times.lock().expect("record");
        let at = |r: usize, i: usize| times[record.offsets[r] + i];
        let known = |r: usize, i: usize| !at(r, i)[0].is_nan();
        let last = pred
            .ranks
            .iter()
            .max_by(|a, b| a.end_ns.total_cmp(&b.end_ns).then(b.rank.cmp(&a.rank)));
        let Some(last) = last else {
            return CriticalPath::default();
        };
        let mut r = last.rank as usize;
        let ev = trace.rank(r);
        let Some(mut i) = (0..ev.len()).rev().find(|&i| known(r, i)) else {
            return CriticalPath::default();
        };
        let participants = match g.instances.is_empty() {
            true => Vec::new(),
            false => g.participants(trace),
        };
        // Each collective call's instance (found once: where the graph implies instances,
        // one call's is the count of its rank's collective calls before it).
        let instances: HashMap<(u32, u32), u32> = participants
            .iter()
            .enumerate()
            .flat_map(|(x, list)| list.iter().map(move |&p| (p, x as u32)))
            .collect();
        let sets = match (links, model) {
            (Some(l), _) => l.sets.clone(),
            (None, Model::LogGps(p)) => vec![*p],
            (None, _) => Vec::new(),
        };
        let ctx = Context {
            trace,
            g,
            model,
            sets: &sets,
            links,
            participants: &participants,
            instances: &instances,
            coll,
            call: &|q: usize, j: usize| {
                let t = at(q, j)[0];
                (!t.is_nan()).then_some(t)
            },
            // As the replay keeps it: its last call before `j` that waited, and its library's
            // last poll after the call before `j`.
            wait: &|q: usize, j: usize| {
                let waited = (0..j)
                    .rev()
                    .map(|e| at(q, e))
                    .find(|t| t[3] + t[4] > 0.0)
                    .map_or(Wait::NONE, |t| Wait::after(Wait::NONE, t[0], t[3] + t[4]));
                let polled = match j {
                    0 => f64::NEG_INFINITY,
                    _ => at(q, j - 1)[5],
                };
                Wait { polled, ..waited }
            },
            t0: trace.measured_t0(),
        };
        let mut path = CriticalPath::default();
        // Entered at an event's return (its call's whole duration on the path) or, after a
        // jump, at its call (only the computation before it).
        let mut at_call = false;
        // Each turn moves back by an event or a jump: no path is longer than this.
        let mut budget = 2 * record.offsets[trace.nranks()] + 2;
        loop {
            budget -= 1;
            let [call, ret, comm, ss, rs, _] = at(r, i);
            if !at_call {
                let (rule, from) = match explain(&ctx, r, i, call, ret) {
                    Some(x) => x,
                    None => (Rule::Unknown, waited(&ctx, r, i, ret, ss + rs)),
                };
                match from {
                    Binder::Event(q, j) if (q, j) != (r, i) && budget > 0 => {
                        let t = at(q, j)[0];
                        path.push(r, i, Part::Communication, rule, t, ret);
                        path.jumps.push(Jump {
                            partner_rank: q as u32,
                            partner_event: j as u32,
                            rank: r as u32,
                            event: i as u32,
                            at_ns: t,
                        });
                        (r, i, at_call) = (q, j, true);
                        continue;
                    }
                    _ => path.push_call(r, i, rule, [call, ret, comm, ss, rs]),
                }
            }
            let before = match i {
                0 => 0.0,
                _ if known(r, i - 1) => at(r, i - 1)[1],
                _ => 0.0,
            };
            path.push(r, i, Part::Computation, Rule::Const, before, call);
            if i == 0 || !known(r, i - 1) || budget == 0 {
                break;
            }
            (i, at_call) = (i - 1, false);
        }
        path.segments.reverse();
        path.jumps.reverse();
        path
    }

    /// Adds the segment of event `i` of rank `r` from `from` to `to`, where it is not empty.
    fn push(&mut self, r: usize, i: usize, part: Part, rule: Rule, from: f64, to: f64) {
        if to > from {
            self.segments.push(Segment {
                rank: r as u32,
                event: i as u32,
                part,
                rule,
                from_ns: from,
                to_ns: to,
            });
        }
    }

    /// Adds the whole call of event `i` of rank `r` (its recorded times: call, return,
    /// communication, sender and receiver synchronization), its parts as drawn, latest first
    /// (the walk goes back); `rule`, which gives the whole call's end, goes with the first that
    /// is there.
    fn push_call(&mut self, r: usize, i: usize, rule: Rule, times: [f64; 5]) {
        let [call, ret, comm, ss, rs] = times;
        let parts = [
            (Part::Communication, call + ss + rs, ret),
            (Part::ReceiverSync, call + ss, call + ss + rs),
            (Part::SenderSync, call, call + ss),
        ];
        let mut rule = Some(rule);
        for (part, from, to) in parts {
            if to > from {
                let r_ = rule.take().unwrap_or(Rule::Const);
                self.push(r, i, part, r_, from, to);
            }
        }
        debug_assert!((call + ss + rs + comm - ret).abs() <= 1e-6 * ret.abs().max(1.0));
    }

    /// The runtime's derivative by `knob`, read off the path: each segment's cost under the
    /// model's rule that made it, held to the branch that bound it (`Rule::held`) and so
    /// linear in the parameters, at `sets` (the path's: one, or each class's) and with the
    /// knob a step up in every set, its inputs (the instants it started from) held. Also the
    /// path's time whose cost no rule gave again (LogGP's): the derivative leaves it out.
    pub fn derivative(&self, sets: &[Params], knob: Knob) -> (f64, f64) {
        self.derivative_in(sets, knob, None)
    }

    /// [`CriticalPath::derivative`], the knob moved in set `which` alone (`None`: in every
    /// set).
    pub fn derivative_in(&self, sets: &[Params], knob: Knob, which: Option<usize>) -> (f64, f64) {
        let Some(first) = which.map_or(sets.first(), |j| sets.get(j)) else {
            return (0.0, self.segments.iter().map(|s| s.to_ns - s.from_ns).sum());
        };
        let h = knob.step(knob.get(first));
        let moved = |j: usize| which.is_none_or(|w| w == j);
        let up: Vec<Params> = (sets.iter().enumerate())
            .map(|(j, p)| match moved(j) {
                true => knob.set(p, knob.get(p) + h),
                false => *p,
            })
            .collect();
        let (mut d, mut unread) = (0.0, 0.0);
        for s in &self.segments {
            let rule = s.rule.held(sets);
            match (rule.ret(sets), rule.ret(&up)) {
                (Some(a), Some(b)) => d += (b - a) / h,
                _ => unread += s.to_ns - s.from_ns,
            }
        }
        (d, unread)
    }

    /// The path's composition.
    pub fn composition(&self, trace: &Trace) -> Composition {
        let mut c = Composition {
            jumps: self.jumps.len(),
            ..Composition::default()
        };
        let mut ranks: BTreeMap<u32, f64> = BTreeMap::new();
        let mut routines: Vec<(String, f64)> = Vec::new();
        let mut sites: BTreeMap<(usize, usize), Cost> = BTreeMap::new();
        let mut last = None;
        for s in &self.segments {
            let d = s.to_ns - s.from_ns;
            c.length_ns += d;
            match s.part {
                Part::Computation => c.computation_ns += d,
                Part::Communication => c.communication_ns += d,
                Part::SenderSync => c.sender_sync_ns += d,
                Part::ReceiverSync => c.receiver_sync_ns += d,
            }
            *ranks.entry(s.rank).or_default() += d;
            let name = match s.part {
                Part::Computation => "computation",
                _ => trace
                    .rank(s.rank as usize)
                    .routine(s.event as usize)
                    .mpi_name(),
            };
            match routines.iter_mut().find(|(n, _)| n == name) {
                Some((_, t)) => *t += d,
                None => routines.push((name.to_string(), d)),
            }
            let (r, e) = (s.rank as usize, s.event as usize);
            let site = trace.sites.as_ref().filter(|_| s.part != Part::Computation);
            if let Some(i) = site.map(|x| x.of_event[trace.events.offsets()[r] + e])
                && i != UNKNOWN
            {
                let c = sites.entry((r, i as usize)).or_default();
                match s.part {
                    Part::Communication => c.communication_ns += d,
                    Part::SenderSync => c.sender_sync_ns += d,
                    Part::ReceiverSync => c.receiver_sync_ns += d,
                    Part::Computation => unreachable!("left out above"),
                }
                if last != Some((r, e)) {
                    c.calls += 1;
                    c.routines |= 1 << (trace.rank(r).routine(e) as u8);
                }
                last = Some((r, e));
            }
        }
        c.by_site = sites.into_iter().map(|((r, i), c)| (r, i, c)).collect();
        c.by_rank = ranks.into_iter().collect();
        routines.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        c.by_routine = routines;
        c
    }
}

/// How event `i` of rank `r` (called at `call`, returning at `ret`) was costed, where the
/// model's rule for it, from the recorded times of what it depends on, gives `ret` again: the
/// rule and what its return came from. None where no rule does (LogGP).
fn explain(ctx: &Context<'_>, r: usize, i: usize, call: f64, ret: f64) -> Option<(Rule, Binder)> {
    let Model::LogGps(p) = ctx.model else {
        return None;
    };
    let ev = ctx.trace.rank(r);
    let routine = ev.routine(i);
    let same = |x: f64| (x - ret).abs() <= 1e-9 * ret.abs().max(1.0);
    let found = match routine.shape() {
        Shape::None => Some((Rule::Const, Binder::Own)),
        // Where messages move only inside calls an eager Isend costs its message's `T1`.
        Shape::Isend if p.progress_at_calls && ev.peer(i) != PEER_NULL => {
            let set = ctx.set_to(r, ev.peer(i));
            let rdv = ev.peer(i) != r as i32 && rendezvous_in(&ev, ctx.sets[set as usize].S, i);
            let rule = Rule::Message {
                side: Side::Isend,
                k: ev.bytes(i),
                rdv,
                ts: call,
                tr: call,
                set,
            };
            Some((rule, Binder::Own))
        }
        Shape::Isend => Some((Rule::O(call, ctx.set_to(r, ev.peer(i))), Binder::Own)),
        Shape::Irecv => Some((Rule::Post(call, ctx.set_to(r, ev.peer(i))), Binder::Own)),
        Shape::Cancel => Some((Rule::O(call, 0), Binder::Own)),
        Shape::Coll if routine.nonblocking() => Some((Rule::O(call, 0), Binder::Own)),
        Shape::Send => send_of(ctx, r, i, call),
        Shape::Recv => {
            if routine.is_iprobe() && ev.flags(i) & FLAG_FOUND == 0 {
                return Some((Rule::Const, Binder::Own));
            }
            let link = ctx.g.link(r, i);
            if routine.is_iprobe() || link == NONE {
                return Some((Rule::O(call, 0), Binder::Own)).filter(|_| same(call + p.o));
            }
            let side = match routine.is_probe() {
                true => Side::Probe,
                false => recv_side(ctx, r, i, link),
            };
            recv_of(ctx, (r, i), side, link, call, Binder::Own)
        }
        Shape::Sendrecv => {
            let send = send_of(ctx, r, i, call)?;
            let recv = match ctx.g.link2(r, i) {
                NONE => (Rule::O(call, 0), Binder::Own),
                e => recv_of(ctx, (r, i), recv_side(ctx, r, i, e), e, call, Binder::Own)?,
            };
            Some(fold(ctx.sets, call, vec![send, recv]))
        }
        Shape::Complete => {
            if routine == Routine::RequestFree {
                return Some((Rule::O(call, 0), Binder::Own)).filter(|_| same(call + p.o));
            }
            if routine.polls() && ev.completed_reqs(i).next().is_none() {
                return Some((Rule::Const, Binder::Own));
            }
            let mut done = Vec::new();
            // The receives (and rendezvous sends whose payload holds their CPU too), taken one at
            // a time (the model's §14).
            let mut queue = Vec::new();
            for (_, oi) in ev.completed_origins(i, 0, None) {
                let oi = oi as usize;
                let t = (ctx.call)(r, oi)?;
                done.push(match ev.routine(oi).shape() {
                    Shape::Isend => {
                        let send = send_of(ctx, r, oi, t)?;
                        if let Rule::Message { rdv: true, set, .. } = send.0
                            && ctx.sets[(set & !CLEAN_SET) as usize].sender_share(ev.bytes(oi))
                                > 0.0
                        {
                            queue.push(send);
                            continue;
                        }
                        send
                    }
                    Shape::Irecv => {
                        // Its message moves at its rank's call that moved it.
                        let (mr, mi) = moved_at(ctx, r, oi);
                        let tr = (ctx.call)(mr, mi)?;
                        let moved = if (mr, mi) == (r, i) {
                            Binder::Own
                        } else {
                            Binder::Event(mr, mi)
                        };
                        match ctx.g.link(r, oi) {
                            NONE => (Rule::O(tr, 0), moved),
                            e => {
                                let side = recv_side(ctx, r, oi, e);
                                queue.push(recv_of(ctx, (r, i), side, e, tr, moved)?);
                                continue;
                            }
                        }
                    }
                    _ => return None,
                });
            }
            done.extend(serial(ctx.sets, queue));
            Some(fold(ctx.sets, call, done))
        }
        Shape::Coll | Shape::CommOp => {
            measured_collective(ctx, r, i, ret).or_else(|| modeled_collective(ctx, r, i, call))
        }
    };
    found.filter(|(rule, _)| match rule {
        Rule::Const => true,
        rule => rule.ret(ctx.sets).is_some_and(same),
    })
}

/// A collective call replayed as measured (collectives measured, a communicator's creation,
/// an instance no algorithm models): it returns its own traced time after the instance's last
/// call, so it comes from that call, at a cost no parameter moves. None where that does not
/// give `ret` again (a modeled one).
fn measured_collective(ctx: &Context<'_>, r: usize, i: usize, ret: f64) -> Option<(Rule, Binder)> {
    let x = *ctx.instances.get(&(r as u32, i as u32))?;
    let list = ctx.participants.get(x as usize)?;
    let tr = ctx.trace;
    let (last, binder) = last_caller(ctx, list, (r, i))?;
    let measured_last = list
        .iter()
        .map(|&(q, j)| tr.corrected_ns(q as usize, tr.rank(q as usize).t_call(j as usize)))
        .fold(f64::NEG_INFINITY, f64::max)
        - ctx.t0;
    let after = (tr.corrected_ns(r, tr.rank(r).t_return(i)) - ctx.t0 - measured_last).max(0.0);
    if (last + after - ret).abs() > 1e-9 * ret.abs().max(1.0) {
        return None;
    }
    Some((Rule::Const, binder))
}

/// The latest call among a collective instance's participants `list` and where a call `me`
/// among them came from: itself where it called last, else that last caller.
fn last_caller(
    ctx: &Context<'_>,
    list: &[(u32, u32)],
    me: (usize, usize),
) -> Option<(f64, Binder)> {
    let (mut last, mut who) = (f64::NEG_INFINITY, me);
    for &(q, j) in list {
        let (q, j) = (q as usize, j as usize);
        let t = (ctx.call)(q, j)?;
        if t > last {
            (last, who) = (t, (q, j));
        }
    }
    let binder = match who == me {
        true => Binder::Own,
        false => Binder::Event(who.0, who.1),
    };
    Some((last, binder))
}

/// A collective call modeled by its algorithm's schedule: its rule, and where it came from,
/// the participant that called last (itself if it did).
fn modeled_collective(ctx: &Context<'_>, r: usize, i: usize, call: f64) -> Option<(Rule, Binder)> {
    let ev = ctx.trace.rank(r);
    let op = op_of(ev.routine(i))?;
    let x = *ctx.instances.get(&(r as u32, i as u32))?;
    let list = ctx.participants.get(x as usize)?;
    let mut rec = Recorded::default();
    let mut starts = Vec::with_capacity(list.len());
    let mut waits = Vec::new();
    let draining = ctx.sets.iter().any(|p| p.drained.is_some());
    let mut place = 0;
    for (k, &(q, j)) in list.iter().enumerate() {
        let (q, j) = (q as usize, j as usize);
        let e = ctx.trace.rank(q);
        rec.sent = rec.sent.max(e.bytes(j));
        rec.received = rec.received.max(e.coll_recv(j).0);
        if e.peer(j) == q as i32 {
            rec.root = rec.root.max(k);
        }
        if (q, j) == (r, i) {
            place = k;
        }
        starts.push((ctx.call)(q, j)?);
        if draining {
            waits.push((ctx.wait)(q, j));
        }
    }
    let (_, binder) = last_caller(ctx, list, (r, i))?;
    let mut spec = rec.spec(op, list.len());
    let (algorithm, segment) = ctx.coll.algorithm(op, spec.ranks, spec.bytes);
    spec.segment = segment.unwrap_or(spec.segment);
    let members = list.iter().map(|&(q, _)| q as usize);
    let set = ctx.links.map_or(0, |l| l.set_of_group(members) as u8);
    let bounced = ev.flags(i) & crate::trace::FLAG_BOUNCED != 0;
    let into_result = ev.flags(i) & crate::trace::FLAG_REDUCED != 0;
    let clean = match bounced {
        true => (list.iter().enumerate())
            .filter(|&(_, &(q, j))| ctx.trace.rank(q as usize).flags(j as usize) & FLAG_CLEAN != 0)
            .map(|(place, _)| place as u32)
            .collect(),
        false => Vec::new(),
    };
    let m = Modeled {
        op,
        algorithm,
        spec,
        starts,
        waits,
        place,
        call,
        set,
        bounced,
        into_result,
        clean,
    };
    Some((Rule::Collective(Arc::new(m)), binder))
}

/// A send's rule at event `i` of rank `r` (a Send, an Isend's start or a Sendrecv's send half,
/// called at `ts`): eager, or by rendezvous from its receive's moving call.
fn send_of(ctx: &Context<'_>, r: usize, i: usize, ts: f64) -> Option<(Rule, Binder)> {
    let ev = ctx.trace.rank(r);
    let k = ev.bytes(i);
    if ev.peer(i) == PEER_NULL {
        return Some((Rule::O(ts, 0), Binder::Own));
    }
    let set = ctx.set_to(r, ev.peer(i));
    let p = &ctx.sets[set as usize];
    let link = match rendezvous_in(&ev, p.S, i) && ev.peer(i) != r as i32 {
        true => ctx.g.link(r, i),
        false => NONE,
    };
    let own = match ev.routine(i).shape() {
        Shape::Isend => Binder::Event(r, i),
        _ => Binder::Own,
    };
    let eager = Rule::Message {
        side: Side::Send(0),
        k,
        rdv: false,
        ts,
        tr: ts,
        set,
    };
    if link == NONE {
        return Some((eager, own));
    }
    let (q, j) = ctx.trace.events.locate(link as usize);
    let (q, j) = moved_at(ctx, q, j);
    let tr = (ctx.call)(q, j)?;
    let set = clean_set_of(ctx, set, ev.flags(i));
    let waits = message_set(ctx.sets, set).send(k, true, ts, tr).sync > 0.0;
    // It waits for its receiver's copy where that is slowed, as the replay costs it.
    let bounced = ctx.trace.events.flags_at(link as usize) & FLAG_BOUNCED != 0;
    let aliased = aliases(ev.pages(i).send, || pages_at(ctx, link).recv);
    let rule = Rule::Message {
        side: Side::Send(slow_of(bounced, aliased)),
        k,
        rdv: true,
        ts,
        tr,
        set,
    };
    Some((rule, if waits { Binder::Event(q, j) } else { own }))
}

/// A receive's (or probe's) rule on rank `r`, of the message sent by global event `e`,
/// received at `tr`: from the send where it waited for the message, else from `own` (the
/// call, or where the receive moved).
/// A rendezvous message's set in a [`Rule::Message`] with this bit: its set's `clean` one
/// ([`Params::clean_set`], the model's §13: its sender flagged it `clean`). Sets from 128 on
/// take no clean one here.
const CLEAN_SET: u8 = 0x80;

/// The parameters of a [`Rule::Message`]'s `set` among `sets` (see [`CLEAN_SET`]).
fn message_set(sets: &[Params], set: u8) -> Params {
    match set & CLEAN_SET {
        0 => sets[set as usize],
        _ => {
            let p = sets[(set & !CLEAN_SET) as usize];
            p.clean_set().unwrap_or(p)
        }
    }
}

/// `set` (a rendezvous message's), marked [`CLEAN_SET`] where its send's `flags` have
/// [`FLAG_CLEAN`] and the set has a `clean` share.
fn clean_set_of(ctx: &Context<'_>, set: u8, flags: u8) -> u8 {
    match flags & FLAG_CLEAN != 0 && set < CLEAN_SET && ctx.sets[set as usize].clean.is_some() {
        true => set | CLEAN_SET,
        false => set,
    }
}

/// The side of receive `i` of rank `r` of the message sent by global event `e`: its copy
/// slowed where the receive is flagged [`FLAG_BOUNCED`] and where its buffer aliases the send's.
fn recv_side(ctx: &Context<'_>, r: usize, i: usize, e: u32) -> Side {
    let ev = ctx.trace.rank(r);
    let bounced = ev.flags(i) & FLAG_BOUNCED != 0;
    let aliased = aliases(pages_at(ctx, e).send, || ev.pages(i).recv);
    Side::Recv(slow_of(bounced, aliased))
}

/// Where the buffers of global event `e` start in their pages.
fn pages_at(ctx: &Context<'_>, e: u32) -> crate::trace::PageOffsets {
    let (q, j) = ctx.trace.events.locate(e as usize);
    ctx.trace.rank(q).pages(j)
}

fn recv_of(
    ctx: &Context<'_>,
    (r, at): (usize, usize),
    side: Side,
    e: u32,
    tr: f64,
    own: Binder,
) -> Option<(Rule, Binder)> {
    let (q, j) = ctx.trace.events.locate(e as usize);
    let ts = (ctx.call)(q, j)?;
    let set = ctx.set_of(q, r);
    let p = &ctx.sets[set as usize];
    let (k, rdv) = message(ctx, p, e as usize);
    let rdv = rdv && q != r;
    let set = match rdv {
        true => clean_set_of(ctx, set, ctx.trace.events.flags_at(e as usize)),
        false => set,
    };
    // Taken in while its rank waited in a call before the one that completes it, as the
    // replay decides it ([`Params::recv_polled`]).
    let side = match side {
        Side::Recv(_) if !rdv && p.drained.is_some() => {
            let arrives = p.arrival(k, ts).0;
            match p.drained_recv(k, arrives, tr, (ctx.wait)(r, at)).is_some() {
                true => Side::Drained,
                false => side,
            }
        }
        side => side,
    };
    let waits = side.cost(&message_set(ctx.sets, set), k, rdv, ts, tr).sync > 0.0;
    let rule = Rule::Message {
        side,
        k,
        rdv,
        ts,
        tr,
        set,
    };
    Some((rule, if waits { Binder::Event(q, j) } else { own }))
}

/// An operation after the first of a [`Rule::Queue`]: `(side, k, rendezvous, ts, tr, set)`.
type Queued = (Side, u64, bool, f64, f64, u8);

/// How long a queued operation holds its rank's CPU behind the one before it, as the replay
/// costs it ([`Params::queued_busy`]).
fn behind(sets: &[Params], &(side, k, rdv, ts, tr, set): &Queued) -> f64 {
    let p = message_set(sets, set);
    let (start, c) = side.span(&p, k, rdv, ts, tr);
    p.queued_busy(k, rdv, c.ret - start)
}

/// Receives `queue` (each a [`Rule::Message`]) taken one at a time, as the replay takes them
/// (`replay::cost::Queued::serial`, the model's §14): in the order they can start, each from
/// its start or the previous one's end. The rule of the last one's end, and where it came
/// from: the last receive that started on its own, the ones after it adding their costs.
fn serial(sets: &[Params], mut queue: Vec<(Rule, Binder)>) -> Option<(Rule, Binder)> {
    let span =
        |side: Side, k, rdv, ts, tr, set: u8| side.span(&message_set(sets, set), k, rdv, ts, tr);
    let start = |rule: &Rule| match *rule {
        Rule::Message {
            side,
            k,
            rdv,
            ts,
            tr,
            set,
        } => span(side, k, rdv, ts, tr, set).0,
        _ => f64::NEG_INFINITY,
    };
    queue.sort_by(|a, b| start(&a.0).total_cmp(&start(&b.0)));
    let (mut free, mut last) = (f64::NEG_INFINITY, None);
    for (rule, binder) in queue {
        let Rule::Message {
            side,
            k,
            rdv,
            ts,
            tr,
            set,
        } = rule
        else {
            continue;
        };
        let (start, c) = span(side, k, rdv, ts, tr, set);
        last = match last {
            Some((Rule::Queue(head, after), b)) if free > start => {
                let next = (side, k, rdv, ts, tr, set);
                let after: Vec<_> = after.iter().copied().chain([next]).collect();
                free += behind(sets, &next);
                Some((Rule::Queue(head, after.into()), b))
            }
            _ => {
                free = c.ret;
                Some((Rule::Queue(Box::new(rule), Arc::new([])), binder))
            }
        };
    }
    last
}

/// The Wait rule over the completions `done` of a call at `tw`: the one that ends last, or `o`
/// after the call where none ends later.
fn fold(sets: &[Params], tw: f64, done: Vec<(Rule, Binder)>) -> (Rule, Binder) {
    let mut best = (Rule::Wait(tw, 0), Binder::Own);
    let mut latest = tw + sets[0].wait_floor();
    for (rule, binder) in done {
        let Some(t) = rule.ret(sets) else {
            continue;
        };
        if t > latest {
            (latest, best) = (t, (rule, binder));
        }
    }
    best
}

/// The bytes of the message sent by global event `e` and whether it goes by rendezvous.
fn message(ctx: &Context<'_>, p: &Params, e: usize) -> (u64, bool) {
    (
        ctx.trace.events.bytes_at(e),
        rendezvous_at(&ctx.trace.events, p.S, e),
    )
}

/// Where no rule tells how event `i` of rank `r` was costed: the partner it waited for, if it
/// waited (`sync` is not 0): of its partners, the one that called last.
fn waited(ctx: &Context<'_>, r: usize, i: usize, ret: f64, sync: f64) -> Binder {
    if sync <= 0.0 {
        return Binder::Own;
    }
    let ev = ctx.trace.rank(r);
    let mut out: Vec<(usize, usize)> = Vec::new();
    let linked = |e: u32, out: &mut Vec<(usize, usize)>| {
        if e != NONE {
            let (q, j) = ctx.trace.events.locate(e as usize);
            out.push(moved_at(ctx, q, j));
        }
    };
    let instance = |j: usize, out: &mut Vec<(usize, usize)>| {
        let x = ctx.instances.get(&(r as u32, j as u32));
        if let Some(list) = x.and_then(|&x| ctx.participants.get(x as usize)) {
            out.extend(list.iter().map(|&(q, j)| (q as usize, j as usize)));
        }
    };
    match ev.routine(i).shape() {
        Shape::Send | Shape::Recv => linked(ctx.g.link(r, i), &mut out),
        Shape::Sendrecv => {
            linked(ctx.g.link(r, i), &mut out);
            linked(ctx.g.link2(r, i), &mut out);
        }
        Shape::Complete => {
            for (_, oi) in ev.completed_origins(i, 0, None) {
                let oi = oi as usize;
                match ev.routine(oi).shape() {
                    Shape::Coll => instance(oi, &mut out),
                    _ => linked(ctx.g.link(r, oi), &mut out),
                }
            }
        }
        Shape::Coll | Shape::CommOp => instance(i, &mut out),
        _ => {}
    }
    out.into_iter()
        .filter(|&(q, j)| (q, j) != (r, i))
        .filter_map(|(q, j)| Some(((q, j), (ctx.call)(q, j).filter(|&t| t <= ret)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(Binder::Own, |((q, j), _)| Binder::Event(q, j))
}

/// Where a partner's operation at event `j` of rank `q` moved: there, or where messages move
/// only inside calls and it was posted without blocking, at its rank's next call that starts
/// no request (as the replay's progress points).
fn moved_at(ctx: &Context<'_>, q: usize, j: usize) -> (usize, usize) {
    let ev = ctx.trace.rank(q);
    if !ctx.model.progress_at_calls() || !ev.routine(j).creates_request() {
        return (q, j);
    }
    let next = (j..ev.len()).find(|&k| !ev.routine(k).creates_request());
    (q, next.unwrap_or(j))
}
