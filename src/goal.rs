//! A trace written as a GOAL schedule for LogGOPSim (`convert --to goal`; the format:
//! `src/trace/import/IMPORT.md`). Each rank's calls become a chain: every operation requires the
//! rank's last blocking point (a blocking call, a completion, a computation), nonblocking sends
//! and receives are not blocking points, and a `Wait` or `Test` that completes requests is a
//! `calc 0` requiring them, a `Test` that completes none a `calc` of its traced duration (a
//! failed poll). The computation is written as the replay takes it: a rank whose `MPI_Init` returned
//! after the first rank's begins with that time as a `calc`, and each gap between calls is a
//! `calc` of its nanoseconds without the tracer's own time (MODEL.md §16), its fraction of a
//! nanosecond carried to the next `calc`.
//! Collectives are expanded into the point-to-point messages of the algorithm Open MPI 4.1's
//! rules pick (as the replay models them), on tags of their own; a call that makes a
//! communicator into a barrier of its parent's, then a `calc` of its own time after the last of
//! them called (the replay synchronizes it as a measured collective). A cancelled receive, which
//! the replay matches with nothing, is left out with its cancel. What GOAL cannot say (probes,
//! one-sided calls, `MPI_Comm_free`, a send's cancel) is left out and counted, its traced
//! duration a `calc` (a probe that found its message: none, its receive waits for it).

use crate::collectives::traced::{Recorded, op_of};
use crate::collectives::{self, Step};
use crate::trace::{
    Event, FLAG_ANY_SOURCE, FLAG_ANY_TAG, FLAG_FOUND, PEER_ANY, PEER_NULL, Rank, RecvHalf, Routine,
    Shape, TAG_ANY, Trace,
};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// Tags of collective messages start here (user tags are below 2^30 in practice: MPI
/// guarantees 32767).
const COLL_TAG: i64 = 1 << 30;

/// Writes `trace` as a GOAL schedule to `out`; returns what was left out, by routine name.
pub fn write(
    trace: &Trace,
    mut out: impl std::io::Write,
) -> std::io::Result<BTreeMap<&'static str, u64>> {
    let p = trace.nranks();
    let instances = instances(trace);
    let mut left_out = BTreeMap::new();
    writeln!(out, "num_ranks {p}")?;
    let t0 = trace.measured_t0();
    for r in 0..p {
        let mut w = Writer {
            s: String::new(),
            next: 0,
            last: None,
            owed: 0.0,
        };
        // A rank that started later than the first (its MPI_Init returned later) starts with
        // that time as computation, as the replay starts it.
        w.calc(trace.measured_begin_ns(r).map_or(0.0, |b| b - t0));
        rank(trace, r, &instances, &mut w, &mut left_out);
        writeln!(out, "\nrank {r} {{")?;
        out.write_all(w.s.as_bytes())?;
        writeln!(out, "}}")?;
    }
    Ok(left_out)
}

/// One rank's GOAL text under construction: labels `l0, l1, …`, and the last blocking point.
struct Writer {
    s: String,
    next: u64,
    last: Option<u64>,
    /// Computation taken but not yet written: GOAL's `calc` counts whole nanoseconds, and a
    /// gap's fraction (the tracer's own time taken out is a fraction, the same for every gap
    /// after a routine) would otherwise be rounded away the same way thousands of times.
    owed: f64,
}

impl Writer {
    /// An operation requiring the last blocking point and `also`; its label.
    fn op(&mut self, what: std::fmt::Arguments<'_>, also: &[u64]) -> u64 {
        let l = self.next;
        self.next += 1;
        let _ = writeln!(self.s, "l{l}: {what}");
        for d in self.last.iter().chain(also) {
            let _ = writeln!(self.s, "l{l} requires l{d}");
        }
        l
    }

    /// An operation that is the rank's new blocking point.
    fn point(&mut self, what: std::fmt::Arguments<'_>, also: &[u64]) {
        self.last = Some(self.op(what, also));
    }

    /// `ns` of computation as a `calc` of the whole nanoseconds owed so far, the rest carried
    /// to the next: each point in the rank's chain lies within half a nanosecond of its time.
    fn calc(&mut self, ns: f64) {
        self.owed += ns.max(0.0);
        let whole = self.owed.round();
        if whole > 0.0 {
            self.owed -= whole;
            self.point(format_args!("calc {whole}"), &[]);
        }
    }
}

/// Per collective call (rank, event): its tag, its schedule's steps for that rank (world
/// ranks), and its instance's last call (the latest of its members' calls, on rank 0's clock).
type Expanded = HashMap<(usize, usize), (i64, Vec<Step>, f64)>;

/// The operation a call is expanded as: a collective's own; a call that makes a communicator
/// synchronizes its parent's members (MODEL.md: like a measured collective), as a barrier.
fn expanded_op(routine: Routine) -> Option<collectives::Op> {
    match routine {
        Routine::CommDup | Routine::CommSplit | Routine::CommCreate => {
            Some(collectives::Op::Barrier)
        }
        _ if routine.shape() == Shape::Coll => op_of(routine),
        _ => None,
    }
}

/// Every collective call's steps: the k-th call on a communicator at each member is one
/// instance (MPI's order), expanded once by Open MPI 4.1's choice for its size.
fn instances(trace: &Trace) -> Expanded {
    let p = trace.nranks();
    // (comm, k) → each member's (rank, event).
    let mut calls: BTreeMap<(u32, u64), Vec<(usize, usize)>> = BTreeMap::new();
    for r in 0..p {
        let ev = trace.rank(r);
        let mut k: HashMap<u32, u64> = HashMap::new();
        for i in 0..ev.len() {
            if expanded_op(ev.routine(i)).is_some() {
                let n = k.entry(ev.comm(i)).or_default();
                calls.entry((ev.comm(i), *n)).or_default().push((r, i));
                *n += 1;
            }
        }
    }
    let mut out = Expanded::new();
    for (seq, ((comm, _), members)) in calls.into_iter().enumerate() {
        let world: Vec<u32> = match trace.comm_members(comm) {
            Some(m) => m.iter().collect(),
            None => (0..p as u32).collect(),
        };
        let index = |w: i32| world.iter().position(|&m| m as i32 == w);
        let (r0, i0) = members[0];
        let op = expanded_op(trace.rank(r0).routine(i0)).expect("kept above");
        let mut rec = Recorded::default();
        let mut last_call = f64::NEG_INFINITY;
        for &(r, i) in &members {
            let ev = trace.rank(r);
            last_call = last_call.max(trace.corrected_ns(r, ev.t_call(i)));
            rec.sent = rec.sent.max(ev.bytes(i));
            rec.received = rec.received.max(ev.coll_recv(i).0);
            if let Some(root) = index(ev.peer(i)) {
                rec.root = root;
            }
        }
        let n = world.len();
        let mut spec = rec.spec(op, n);
        let (algo, segment) = collectives::openmpi::tuned_algorithm(op, n, spec.bytes);
        if let Some(s) = segment {
            spec.segment = s;
        }
        let Ok(schedule) = collectives::build(op, algo, &spec, &|_| (1.0, 1.0)) else {
            continue;
        };
        let tag = COLL_TAG + (seq as i64 % COLL_TAG);
        for &(r, i) in &members {
            let Some(me) = index(r as i32) else { continue };
            let steps = schedule
                .steps_of(me)
                .map(|s| match s {
                    Step::Send { to, bytes } => Step::Send {
                        to: world[to as usize],
                        bytes,
                    },
                    Step::Recv { from, bytes } => Step::Recv {
                        from: world[from as usize],
                        bytes,
                    },
                    Step::SendRecv {
                        to,
                        send_bytes,
                        from,
                        recv_bytes,
                    } => Step::SendRecv {
                        to: world[to as usize],
                        send_bytes,
                        from: world[from as usize],
                        recv_bytes,
                    },
                    s => s,
                })
                .collect();
            out.insert((r, i), (tag, steps, last_call));
        }
    }
    out
}

fn rank(
    trace: &Trace,
    r: usize,
    coll: &Expanded,
    w: &mut Writer,
    left_out: &mut BTreeMap<&'static str, u64>,
) {
    let ev: Rank<'_> = trace.rank(r);
    // Each request's operation (its last step for a collective), and a wildcard Irecv's actual source.
    let mut req_op: HashMap<u32, u64> = HashMap::new();
    let actual = actual_sources(&ev);
    // A cancelled receive matches nothing (as the replay takes it: the trace cannot say whether
    // the cancel won); GOAL has no cancel, so it is left out with its cancel, lest it take
    // another receive's message.
    let cancelled: std::collections::HashSet<u32> = (0..ev.len())
        .map(|i| ev.event(i))
        .filter(|e| e.routine.shape() == Shape::Cancel)
        .map(|e| e.id as u32)
        .collect();
    let mut cancelled_recvs = std::collections::HashSet::new();
    // Each gap between calls as the replay takes it: the tracer's own time out (MODEL.md §16).
    let change = trace.meta.ranks.gap_change(r);
    // A call kept as traced: its time less the tracer's inside it, as the replay keeps it.
    let kept = |e: &Event| {
        let took = e.t_return.saturating_sub(e.t_call) as f64;
        (took - trace.meta.ranks.inside_call(r, e.routine)).max(0.0)
    };
    let mut prev: Option<(u64, Routine)> = None;
    let mut next_req = 0u32;
    for i in 0..ev.len() {
        let e = ev.event(i);
        if let Some((t, before)) = prev {
            let gap = e.t_call.saturating_sub(t) as f64;
            w.calc(gap + change.between(before, e.routine));
        }
        prev = Some((e.t_return, e.routine));
        let req = e.routine.creates_request().then(|| {
            next_req += 1;
            next_req - 1
        });
        let tag = |t: i32| t as i64;
        match e.routine.shape() {
            Shape::Send if e.peer != PEER_NULL => w.point(
                format_args!("send {}b to {} tag {}", e.bytes, e.peer, tag(e.tag)),
                &[],
            ),
            Shape::Isend if e.peer != PEER_NULL => {
                let l = w.op(
                    format_args!("send {}b to {} tag {}", e.bytes, e.peer, tag(e.tag)),
                    &[],
                );
                req_op.insert(req.expect("an Isend's request"), l);
            }
            Shape::Recv if e.routine.receives() && e.peer != PEER_NULL => w.point(
                format_args!("recv {}b from {} tag {}", e.bytes, e.peer, tag(e.tag)),
                &[],
            ),
            Shape::Irecv if req.is_some_and(|id| cancelled.contains(&id)) => {
                cancelled_recvs.extend(req);
            }
            Shape::Cancel if cancelled_recvs.contains(&(e.id as u32)) => {}
            Shape::Irecv if e.peer != PEER_NULL => {
                let id = req.expect("an Irecv's request");
                let wild = e.peer == PEER_ANY
                    || e.tag == TAG_ANY
                    || e.flags & (FLAG_ANY_SOURCE | FLAG_ANY_TAG) != 0;
                let (from, t) = match actual.get(&id) {
                    Some(&(s, t)) if s >= 0 => (s, t),
                    // A wildcard receive the trace never completed (a job that died) matches
                    // nothing, as the replay takes it.
                    _ if wild => {
                        *left_out
                            .entry("MPI_Irecv of any source or tag never completed")
                            .or_default() += 1;
                        continue;
                    }
                    _ => (e.peer, e.tag),
                };
                let l = w.op(
                    format_args!("recv {}b from {} tag {}", e.bytes, from, tag(t)),
                    &[],
                );
                req_op.insert(id, l);
            }
            Shape::Sendrecv => {
                let h = ev.recv_half(i).expect("a Sendrecv's half");
                sendrecv(w, &e, &h);
            }
            Shape::Complete => {
                let done: Vec<u64> = ev
                    .completed_reqs(i)
                    .filter_map(|q| req_op.remove(&q))
                    .collect();
                match done.is_empty() {
                    false => w.point(format_args!("calc 0"), &done),
                    // A failed poll: its traced time, as the replay costs it without `poll`.
                    true if e.routine.polls() => w.calc(kept(&e)),
                    true => {}
                }
            }
            Shape::Coll if coll.contains_key(&(r, i)) => {
                let (t, steps, _) = &coll[&(r, i)];
                collective(w, *t, steps, req, &mut req_op);
            }
            // Its members synchronized, then its own time after the last of them called.
            Shape::CommOp if coll.contains_key(&(r, i)) => {
                let (t, steps, last_call) = &coll[&(r, i)];
                collective(w, *t, steps, None, &mut req_op);
                w.calc(trace.corrected_ns(r, e.t_return) - last_call);
            }
            Shape::None
                if matches!(
                    e.routine,
                    Routine::Init | Routine::InitThread | Routine::Finalize
                ) => {}
            _ if e.peer == PEER_NULL => {}
            _ => {
                // Its traced time kept as computation, as the replay keeps an uncosted call's
                // and a failed poll's; a probe that found its message none (its wait is the
                // receive's after it, the replay's cost of it the model's).
                let found =
                    e.routine.is_probe() && !(e.routine.is_iprobe() && e.flags & FLAG_FOUND == 0);
                if !found {
                    w.calc(kept(&e));
                }
                *left_out.entry(e.routine.mpi_name()).or_default() += 1
            }
        }
    }
}

/// Each request's source and tag as its completion reports them: a wildcard Irecv's actual
/// peer, which its GOAL receive names.
fn actual_sources(ev: &Rank<'_>) -> HashMap<u32, (i32, i32)> {
    let mut actual: HashMap<u32, (i32, i32)> = HashMap::new();
    for i in 0..ev.len() {
        for c in ev.completions(i) {
            actual.insert(c.req, (c.source, c.tag));
        }
    }
    actual
}

/// A Sendrecv `e` with its receive half `h`: both halves as operations (a null peer's left
/// out), and a blocking point requiring them, where the call returns.
fn sendrecv(w: &mut Writer, e: &Event, h: &RecvHalf) {
    let tag = |t: i32| t as i64;
    let mut both = Vec::new();
    if e.peer != PEER_NULL {
        both.push(w.op(
            format_args!("send {}b to {} tag {}", e.bytes, e.peer, tag(e.tag)),
            &[],
        ));
    }
    if h.source != PEER_NULL {
        both.push(w.op(
            format_args!("recv {}b from {} tag {}", h.bytes, h.source, tag(h.tag)),
            &[],
        ));
    }
    w.point(format_args!("calc 0"), &both);
}

/// A collective's point-to-point `steps`, all with tag `t`; for a nonblocking one (`req`,
/// its request) its last step becomes the request's operation in `req_op` and the steps run
/// beside the calls after it.
fn collective(
    w: &mut Writer,
    t: i64,
    steps: &[Step],
    req: Option<u32>,
    req_op: &mut HashMap<u32, u64>,
) {
    let start = w.last;
    for s in steps {
        match *s {
            Step::Send { to, bytes } => w.point(format_args!("send {bytes}b to {to} tag {t}"), &[]),
            Step::Recv { from, bytes } => {
                w.point(format_args!("recv {bytes}b from {from} tag {t}"), &[])
            }
            Step::SendRecv {
                to,
                send_bytes,
                from,
                recv_bytes,
            } => {
                let a = w.op(format_args!("send {send_bytes}b to {to} tag {t}"), &[]);
                let b = w.op(format_args!("recv {recv_bytes}b from {from} tag {t}"), &[]);
                w.point(format_args!("calc 0"), &[a, b]);
            }
            Step::Reduce { .. } => {}
        }
    }
    // A nonblocking collective's steps run beside the calls after it.
    if let Some(id) = req {
        if let Some(end) = w.last.filter(|_| w.last != start) {
            req_op.insert(id, end);
        }
        w.last = start;
    }
}
