//! The critical path of a prediction: the chain of events that sets the predicted runtime.
//!
//! Walked back from the rank that ends last, from its last event's return. On each rank the
//! path takes an event's whole duration and the computation before it, back to the event
//! before; where an event waited (its sender or receiver synchronization is not 0), the path
//! leaves it for the partner it waited for, at the partner's call: the stretch from that call
//! to the waiting event's return (the message's way and the rest of the call) is that event's
//! communication, and the path goes on before the partner's call on the partner's rank. So
//! synchronization lies on the path only where a wait has no partner to name. The partner a
//! call waited for is the one of its partners that called last:
//! - a receive (or probe): its message's send; a send: its message's receive (where messages
//!   move only inside calls and the receive was posted without blocking: the call of its rank
//!   that moved it, [`crate::model::Model::progress_at_calls`]); a Sendrecv: both;
//! - a Wait or Test: those of every request it completed (a nonblocking collective's: the
//!   instance's participants);
//! - a collective: the instance's other participants.
//!
//! The path's segments add up to the predicted runtime. Each is told by rank, by routine (a
//! call's communication and synchronization are its routine's) and as the four parts.

use crate::graph::{HbGraph, NONE};
use crate::replay::{Prediction, Step};
use crate::trace::{Routine, Shape, Trace};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

/// The collective instances' participants, and each collective call's instance.
struct Collectives<'a> {
    participants: &'a [Vec<(u32, u32)>],
    instances: &'a HashMap<(u32, u32), u32>,
}

/// What the replay costed, per global event: call, return, communication, sender and receiver
/// synchronization, ns (a call of NaN: not costed). Filled by [`Record::observe`], 40 bytes an
/// event.
pub struct Record {
    times: Mutex<Vec<[f64; 5]>>,
    offsets: Vec<usize>,
}

impl Record {
    /// Room for every event of `trace`.
    pub fn new(trace: &Trace) -> Record {
        let offsets = trace.events.offsets().to_vec();
        let n = offsets[trace.nranks()];
        Record {
            times: Mutex::new(vec![[f64::NAN, 0.0, 0.0, 0.0, 0.0]; n]),
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
/// call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Segment {
    pub rank: u32,
    pub event: u32,
    pub part: Part,
    pub from_ns: f64,
    pub to_ns: f64,
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
}

impl CriticalPath {
    /// Walks the path back from the last-ending rank's return (see the top).
    pub fn find(
        trace: &Trace,
        g: &HbGraph,
        record: &Record,
        pred: &Prediction,
        progress_at_calls: bool,
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
        let colls = Collectives {
            participants: &participants,
            instances: &instances,
        };
        let mut path = CriticalPath::default();
        let seg = |path: &mut CriticalPath, r: usize, i: usize, part, from: f64, to: f64| {
            if to > from {
                path.segments.push(Segment {
                    rank: r as u32,
                    event: i as u32,
                    part,
                    from_ns: from,
                    to_ns: to,
                });
            }
        };
        // The rank ends at its MPI_Finalize's call: the computation before it first.
        if i + 1 < ev.len() {
            seg(
                &mut path,
                r,
                i + 1,
                Part::Computation,
                at(r, i)[1],
                last.end_ns,
            );
        }
        // Entered at an event's return (its call's whole duration on the path) or, after a
        // jump, at its call (only the computation before it).
        let mut at_call = false;
        // Each turn moves back by an event or a jump: no path is longer than this.
        let mut budget = 2 * record.offsets[trace.nranks()] + 2;
        loop {
            budget -= 1;
            let [call, ret, comm, ss, rs] = at(r, i);
            if !at_call {
                let partner = match ss + rs > 0.0 {
                    true => waited_for(trace, g, &colls, progress_at_calls, r, i)
                        .into_iter()
                        .filter(|&(q, j)| (q, j) != (r, i) && known(q, j) && at(q, j)[0] <= ret)
                        .max_by(|a, b| at(a.0, a.1)[0].total_cmp(&at(b.0, b.1)[0])),
                    false => None,
                };
                match partner {
                    Some((q, j)) if budget > 0 => {
                        seg(&mut path, r, i, Part::Communication, at(q, j)[0], ret);
                        path.jumps.push(Jump {
                            partner_rank: q as u32,
                            partner_event: j as u32,
                            rank: r as u32,
                            event: i as u32,
                            at_ns: at(q, j)[0],
                        });
                        (r, i, at_call) = (q, j, true);
                        continue;
                    }
                    _ => {
                        seg(&mut path, r, i, Part::Communication, call + ss + rs, ret);
                        seg(
                            &mut path,
                            r,
                            i,
                            Part::ReceiverSync,
                            call + ss,
                            call + ss + rs,
                        );
                        seg(&mut path, r, i, Part::SenderSync, call, call + ss);
                        debug_assert!(
                            (call + ss + rs + comm - ret).abs() <= 1e-6 * ret.abs().max(1.0)
                        );
                    }
                }
            }
            let before = match i {
                0 => 0.0,
                _ if known(r, i - 1) => at(r, i - 1)[1],
                _ => 0.0,
            };
            seg(&mut path, r, i, Part::Computation, before, call);
            if i == 0 || !known(r, i - 1) || budget == 0 {
                break;
            }
            (i, at_call) = (i - 1, false);
        }
        path.segments.reverse();
        path.jumps.reverse();
        path
    }

    /// The path's composition.
    pub fn composition(&self, trace: &Trace) -> Composition {
        let mut c = Composition {
            jumps: self.jumps.len(),
            ..Composition::default()
        };
        let mut ranks: BTreeMap<u32, f64> = BTreeMap::new();
        let mut routines: Vec<(String, f64)> = Vec::new();
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
        }
        c.by_rank = ranks.into_iter().collect();
        routines.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        c.by_routine = routines;
        c
    }
}

/// The partners event `i` of rank `r` may have waited for, as `(rank, event)` (see the top).
fn waited_for(
    trace: &Trace,
    g: &HbGraph,
    colls: &Collectives<'_>,
    progress_at_calls: bool,
    r: usize,
    i: usize,
) -> Vec<(usize, usize)> {
    let ev = trace.rank(r);
    let mut out = Vec::new();
    let linked = |e: u32, out: &mut Vec<(usize, usize)>| {
        if e == NONE {
            return;
        }
        let (q, j) = trace.events.locate(e as usize);
        out.push(moved_at(trace, progress_at_calls, q, j));
    };
    let instance = |j: usize, out: &mut Vec<(usize, usize)>| {
        let x = colls.instances.get(&(r as u32, j as u32));
        if let Some(list) = x.and_then(|&x| colls.participants.get(x as usize)) {
            out.extend(list.iter().map(|&(q, j)| (q as usize, j as usize)));
        }
    };
    match ev.routine(i).shape() {
        Shape::Send | Shape::Recv => linked(g.link(r, i), &mut out),
        Shape::Sendrecv => {
            linked(g.link(r, i), &mut out);
            linked(g.link2(r, i), &mut out);
        }
        Shape::Complete => {
            for (_, oi) in ev.completed_origins(i, 0, None) {
                let oi = oi as usize;
                match ev.routine(oi).shape() {
                    Shape::Coll => instance(oi, &mut out),
                    _ => linked(g.link(r, oi), &mut out),
                }
            }
        }
        Shape::Coll | Shape::CommOp => instance(i, &mut out),
        _ => {}
    }
    out
}

/// Where a partner's operation at event `j` of rank `q` moved: there, or where messages move
/// only inside calls and it was posted without blocking, at its rank's next call that starts
/// no request.
fn moved_at(trace: &Trace, progress_at_calls: bool, q: usize, j: usize) -> (usize, usize) {
    let ev = trace.rank(q);
    if !progress_at_calls || !matches!(ev.routine(j).shape(), Shape::Irecv | Shape::Isend) {
        return (q, j);
    }
    let next = (j..ev.len())
        .find(|&k| !ev.routine(k).creates_request() && ev.routine(k) != Routine::Finalize);
    (q, next.unwrap_or(j))
}
