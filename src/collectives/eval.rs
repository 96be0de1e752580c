//! Costing a schedule: one evaluator for every algorithm, two cost models behind
//! [`CostModel`]. A rank's next step starts when its previous one returned; a receive needs
//! what its matching send published at its call, a rendezvous send the receive's call time.
//! Each step's synchronization follows the replay's point-to-point rules (MODEL.md §5), so a
//! modeled collective splits into communication, sender and receiver synchronization too.

#![allow(non_snake_case)] // the papers' parameter names: L, o, g, G

use super::schedule::{Levels, Matching, NONE, Schedule, wake};
use crate::error::Error;
pub use crate::model::LogGp;
use crate::model::{Cost, Params, WaitFold};
use rayon::prelude::*;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a send makes known at its call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SendCall {
    /// What the matching receive needs (LogGPS: the call time `ts`; LogGP: the last byte's arrival).
    pub to_receiver: f64,
    /// Whether the send returns only once the receive is called (rendezvous).
    pub needs_tr: bool,
    /// The send's return when it does not need `tr`.
    pub ret: f64,
}

/// A step's return and the synchronization inside its duration (MODEL.md §5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepCost {
    pub ret: f64,
    pub sender_sync: f64,
    pub receiver_sync: f64,
}

/// A point-to-point cost model: how a rank's blocking sends and receives return, and how long
/// they wait for their partner (a [`Cost`]'s `sync`: the sender's for a send, the receiver's
/// for a receive).
pub trait CostModel: Sync {
    /// Per-rank state the model keeps between steps (LogGP's network ports).
    type Port: Clone + Default + Send;

    /// A send of `bytes` called at `t`.
    fn send_call(&self, port: &mut Self::Port, t: f64, bytes: u64) -> SendCall;
    /// The return of a send that waited for its receive's call time `tr`.
    fn send_return(&self, bytes: u64, call: &SendCall, t: f64, tr: f64) -> Cost;
    /// A receive of `bytes` called at `t` whose send published `from_sender`.
    fn recv_return(&self, port: &mut Self::Port, t: f64, bytes: u64, from_sender: f64) -> Cost;
    /// A send-receive called at `t`; `send` is its send half's cost.
    fn sendrecv_return(
        &self,
        port: &mut Self::Port,
        t: f64,
        send: Cost,
        recv_bytes: u64,
        from_sender: f64,
    ) -> StepCost;
    /// When a rank whose last step returned at `t` is done communicating.
    fn rank_end(&self, port: &Self::Port, t: f64) -> f64;
    /// `(sender busy, receiver ready)` for one `bytes` message sent at 0: how long before the
    /// sender can start its next message and when the receiver can forward it. Tree algorithms
    /// (optimal scatter, postal-model broadcast) pick their shape from these.
    fn split_costs(&self, bytes: u64) -> (f64, f64);
}

/// LogGPS (shared/MODEL.md §4): the replay's own cost table.
impl CostModel for Params {
    type Port = ();

    fn send_call(&self, _: &mut (), t: f64, bytes: u64) -> SendCall {
        let rdv = self.rendezvous(bytes, false);
        SendCall {
            to_receiver: t,
            needs_tr: rdv,
            ret: if rdv { f64::NAN } else { t + self.t1(bytes) },
        }
    }

    fn send_return(&self, bytes: u64, _: &SendCall, t: f64, tr: f64) -> Cost {
        self.send(bytes, self.rendezvous(bytes, false), t, tr)
    }

    fn recv_return(&self, _: &mut (), t: f64, bytes: u64, ts: f64) -> Cost {
        self.recv(bytes, self.rendezvous(bytes, false), ts, t)
    }

    fn sendrecv_return(&self, _: &mut (), t: f64, send: Cost, rb: u64, ts: f64) -> StepCost {
        // MODEL.md §4: an Isend and an Irecv at the call, then a Waitall.
        let recv = self.recv_return(&mut (), t, rb, ts);
        let mut w = WaitFold::new(t, self.o);
        w.add(send.ret, send.unblock, true);
        w.add(recv.ret, recv.unblock, false);
        let (ret, _, sender_sync, receiver_sync) = w.finish();
        StepCost {
            ret,
            sender_sync,
            receiver_sync,
        }
    }

    fn rank_end(&self, _: &(), t: f64) -> f64 {
        t
    }

    fn split_costs(&self, bytes: u64) -> (f64, f64) {
        let rdv = self.rendezvous(bytes, false);
        (
            self.send(bytes, rdv, 0.0, 0.0).ret,
            self.recv(bytes, rdv, 0.0, 0.0).ret,
        )
    }
}

/// A LogGP rank's port: when the next message may start leaving / finish arriving. The
/// replay keeps one per rank across the whole trace, a schedule one per rank and call.
#[derive(Clone, Copy, Debug, Default)]
pub struct Port {
    send_ready: f64,
    recv_ready: f64,
    /// The paper's communication finishing time: the last message's last byte out plus `g`.
    comm_end: f64,
}

impl CostModel for LogGp {
    type Port = Port;

    fn send_call(&self, port: &mut Port, t: f64, bytes: u64) -> SendCall {
        // The overhead overlaps the wait for the port (the paper's Fig. 1).
        let first_out = (t + self.o).max(port.send_ready);
        let last_out = first_out + self.stream(bytes);
        port.send_ready = last_out + self.g;
        port.recv_ready = port.recv_ready.max(last_out);
        port.comm_end = port.comm_end.max(last_out + self.g);
        SendCall {
            to_receiver: self.arrival(first_out, bytes),
            needs_tr: false,
            ret: first_out,
        }
    }

    fn send_return(&self, _: u64, call: &SendCall, _: f64, _: f64) -> Cost {
        // Done once its first byte is out: nothing unblocks it, it never waits for its receiver.
        Cost {
            ret: call.ret,
            sync: 0.0,
            unblock: f64::NEG_INFINITY,
        }
    }

    /// Waiting for the last byte to arrive is receiver synchronization, waiting for the port
    /// communication.
    fn recv_return(&self, port: &mut Port, t: f64, bytes: u64, arrives: f64) -> Cost {
        let last_in = arrives.max(port.recv_ready + self.stream(bytes));
        port.recv_ready = last_in + self.g;
        port.send_ready = port.send_ready.max(last_in);
        Cost {
            ret: t.max(last_in) + self.o,
            sync: (arrives - t).max(0.0),
            unblock: arrives,
        }
    }

    /// The receive half is called once the send half's first byte is out.
    fn sendrecv_return(
        &self,
        port: &mut Port,
        _: f64,
        send: Cost,
        rb: u64,
        arrives: f64,
    ) -> StepCost {
        let recv = self.recv_return(port, send.ret, rb, arrives);
        StepCost {
            ret: recv.ret,
            sender_sync: 0.0,
            receiver_sync: recv.sync,
        }
    }

    fn rank_end(&self, port: &Port, t: f64) -> f64 {
        t.max(port.comm_end)
    }

    fn split_costs(&self, bytes: u64) -> (f64, f64) {
        let s = self.stream(bytes);
        (self.o.max(s + self.g), s + self.L + 2.0 * self.o)
    }
}

/// A costed schedule.
#[derive(Clone, Debug, PartialEq, Serialize)]
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
    pub messages: u64,
    pub bytes: u64,
}

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

/// The per-message arrays of an evaluation, kept to be reused: a replay costing a 65,536-rank
/// collective again and again needs 20 MB of them each time, and the threads' heaps each kept
/// a copy.
#[derive(Default)]
pub struct Scratch {
    /// What each message's send published at its call (f64 bits; NaN: not yet).
    from_sender: Vec<AtomicU64>,
    /// Each message's receive call time (likewise).
    tr: Vec<AtomicU64>,
    /// The rank waiting on each message, or [`NONE`].
    waiter: Vec<u32>,
}

/// A message's value, NaN while unknown. Relaxed: the threads of a leveled evaluation read
/// only what passes before published, and a pass ends when all its threads have.
fn get(v: &[AtomicU64], id: u32) -> f64 {
    f64::from_bits(v[id as usize].load(Ordering::Relaxed))
}

fn set(v: &[AtomicU64], id: u32, x: f64) {
    v[id as usize].store(x.to_bits(), Ordering::Relaxed);
}

/// Passes of a leveled evaluation with fewer runs are taken by one thread (in tests, all but
/// the smallest are shared, in small pieces).
const PARALLEL_MIN_RUNS: usize = if cfg!(test) { 2 } else { 1 << 12 };
/// Runs a thread takes at a time in a pass.
const RUNS_PER_PIECE: usize = if cfg!(test) { 3 } else { 1 << 10 };

/// [`evaluate_matched`] in `scratch`'s arrays; by the passes of `m`'s [`Levels`], where it has
/// them, on the pool's threads.
pub fn evaluate_in<M: CostModel>(
    m: &Matching,
    model: &M,
    gamma_ns_per_byte: f64,
    start: &[f64],
    scratch: &mut Scratch,
) -> Result<Completion, Error> {
    let p = m.ranks();
    let n = m.bytes.len();
    let Scratch {
        from_sender,
        tr,
        waiter,
    } = scratch;
    for v in [&mut *from_sender, &mut *tr] {
        v.clear();
        v.resize_with(n, || AtomicU64::new(UNKNOWN.to_bits()));
    }
    let mut ranks: Vec<RankState<M::Port>> = (0..p)
        .map(|r| RankState {
            pos: 0,
            clock: start[r],
            sender_sync: 0.0,
            receiver_sync: 0.0,
            call: None,
            port: M::Port::default(),
        })
        .collect();
    let ev = Evaluation {
        m,
        model,
        gamma_ns_per_byte,
        from_sender,
        tr,
    };
    match &m.levels {
        Some(levels) if rayon::current_num_threads() > 1 => ev.by_passes(levels, &mut ranks),
        _ => ev.by_queue(&mut ranks, waiter)?,
    }
    let rank_end_ns: Vec<f64> = ranks
        .iter()
        .map(|s| model.rank_end(&s.port, s.clock))
        .collect();
    Ok(Completion {
        time_ns: rank_end_ns
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max),
        rank_end_ns,
        sender_sync_ns: ranks.iter().map(|s| s.sender_sync).collect(),
        receiver_sync_ns: ranks.iter().map(|s| s.receiver_sync).collect(),
        messages: n as u64,
        bytes: m.bytes.iter().sum(),
    })
}

/// One evaluation's schedule, model and message values.
struct Evaluation<'a, M> {
    m: &'a Matching,
    model: &'a M,
    gamma_ns_per_byte: f64,
    from_sender: &'a [AtomicU64],
    tr: &'a [AtomicU64],
}

impl<M: CostModel> Evaluation<'_, M> {
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
        let mut queue: Vec<u32> = (0..ranks.len() as u32).rev().collect();
        while let Some(r) = queue.pop() {
            let st = &mut ranks[r as usize];
            let ids = m.ids(r as usize);
            while st.pos < ids.len() {
                let (sid, rid, reduction) = m.halves(ids[st.pos]);
                if st.call.is_none() {
                    self.call(st, sid, rid);
                    for id in [sid, rid] {
                        if id != NONE {
                            wake(waiter, id, &mut queue);
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
        for (r, st) in ranks.iter().enumerate() {
            if st.pos < m.ids(r).len() {
                let (send, recv) = m.ids(r)[st.pos];
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

    /// Pass after pass of `levels`, each pass's runs split among the pool's threads: all a
    /// run waits for, passes before published.
    fn by_passes(&self, levels: &Levels, ranks: &mut [RankState<M::Port>]) {
        let run = |st: &mut RankState<M::Port>, r: u32, end: u32| {
            let ids = self.m.ids(r as usize);
            while let Some(&h) = ids.get(st.pos) {
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
        for runs in levels.passes() {
            if runs.len() < PARALLEL_MIN_RUNS {
                for &(r, end) in runs {
                    run(&mut ranks[r as usize], r, end);
                }
                continue;
            }
            // Runs are by rank: each piece's ranks lie apart from the others'.
            let mut pieces = Vec::with_capacity(runs.len().div_ceil(RUNS_PER_PIECE));
            let (mut rest, mut base) = (&mut *ranks, 0);
            for piece in runs.chunks(RUNS_PER_PIECE) {
                let end = piece[piece.len() - 1].0 as usize + 1;
                let (mine, after) = std::mem::take(&mut rest).split_at_mut(end - base);
                pieces.push((piece, mine, base));
                (rest, base) = (after, end);
            }
            pieces.into_par_iter().for_each(|(piece, states, base)| {
                for &(r, end) in piece {
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
            let c = self
                .model
                .send_call(&mut st.port, st.clock, self.m.bytes[sid as usize]);
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
        let (m, model, t) = (self.m, self.model, st.clock);
        let send = st.call.expect("called").map(|c| {
            // An eager send's return does not depend on `tr`.
            let tr = if c.needs_tr { get(self.tr, sid) } else { t };
            model.send_return(m.bytes[sid as usize], &c, t, tr)
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
                let (bytes, ts) = (m.bytes[rid as usize], get(self.from_sender, rid));
                let c = model.recv_return(&mut st.port, t, bytes, ts);
                StepCost {
                    ret: c.ret,
                    sender_sync: 0.0,
                    receiver_sync: c.sync,
                }
            }
            (Some(c), rid) => {
                let (bytes, ts) = (m.bytes[rid as usize], get(self.from_sender, rid));
                model.sendrecv_return(&mut st.port, t, c, bytes, ts)
            }
        };
        st.clock = step.ret;
        st.sender_sync += step.sender_sync;
        st.receiver_sync += step.receiver_sync;
        st.call = None;
        st.pos += 1;
    }
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
