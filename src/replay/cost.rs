//! The costing of one event: the model's rule for its routine (the model's §4–5), from its call
//! time and its partners' predicted times as they published them. Every rule is the model's
//! ([`crate::model`]); here are only the reads of the partners' times and which rule applies.

use super::collective::Local;
use super::rank::{NO_EVENT, RankState, Rare};
use super::{Dep, Shared, UNKNOWN, link_of};
use crate::graph::{NONE, rendezvous_at, rendezvous_by, rendezvous_in};
use crate::model::{Cost, CostModel, Model, Port, Wait, WaitFold, aliases};
use crate::trace::{FLAG_BOUNCED, FLAG_CLEAN, FLAG_FOUND, PEER_NULL, PageOffsets, Routine, Shape};
use std::sync::atomic::Ordering;

/// What a receive's buffer tells of its single copy: made into a buffer its rank last sent
/// from to the same peer (`bounced`, the model's §13), and the receive (event `i` of rank `r`),
/// whose buffer's place in its page is read only where a set costs aliasing (§13).
#[derive(Clone, Copy)]
pub(super) struct RecvBuf {
    pub(super) bounced: bool,
    pub(super) r: usize,
    pub(super) i: usize,
}

impl RecvBuf {
    /// Receive event `i` of rank `r`'s (a Sendrecv's receive half's), `ev` its events.
    #[inline(always)]
    fn of(ev: &crate::trace::Rank<'_>, r: usize, i: usize) -> RecvBuf {
        RecvBuf {
            bounced: ev.flags(i) & FLAG_BOUNCED != 0,
            r,
            i,
        }
    }
}

/// A request's predicted completion and what it waited for.
#[derive(Clone, Copy)]
pub(super) struct Completion {
    pub(super) done: f64,
    /// The synchronization inside the blocking twin's duration.
    pub(super) sync: f64,
    pub(super) unblock: f64,
    pub(super) send_side: bool,
    /// A receive that took its message in itself: its call polled (the model's §14, "Small
    /// messages taken in at a poll").
    pub(super) polled: bool,
}

impl Completion {
    pub(super) fn of(c: Cost, send_side: bool) -> Completion {
        Completion {
            done: c.ret,
            sync: c.sync,
            unblock: c.unblock,
            send_side,
            polled: false,
        }
    }

    /// A receive's completion, costed `c` where its rank's last wait was `before` and is `after`
    /// ([`crate::model::Params::recv_polled`]): polled where that moved.
    fn received(c: Cost, before: Wait, after: Wait) -> Completion {
        Completion {
            polled: after != before,
            ..Completion::of(c, false)
        }
    }
}

/// A LogGP message its receiver has yet to take through its port: the receive (or its blocking
/// twin) called at `t`, the last of `bytes` bytes arriving at `arrival`.
#[derive(Clone, Copy)]
pub(super) struct Inbound {
    pub(super) t: f64,
    pub(super) arrival: f64,
    pub(super) bytes: u64,
}

/// A receive (or, where a set gives a rendezvous payload's sender a share of it, a nonblocking
/// send) its rank's CPU takes once it can start (`start`), busy for `done − start`, one at a
/// time ([`Queued::serial`], the model's §14); `behind`: how long where it waits for the one
/// before it ([`crate::model::Params::queued_busy`]).
#[derive(Clone, Copy)]
pub(super) struct Queued {
    pub(super) start: f64,
    pub(super) c: Completion,
    pub(super) behind: f64,
}

impl Queued {
    /// The completions of one call's receives `q` taken one at a time, in the order they can
    /// start (the requests' order at a tie): each from its start or the previous one's end,
    /// whichever is later, for its own duration, or where it waited for the one before, its
    /// `behind`. A receive that need not wait keeps its completion as it is, bit for bit.
    pub(super) fn serial(q: &mut [Queued]) -> impl Iterator<Item = Completion> + '_ {
        if !q.is_sorted_by(|a, b| a.start <= b.start) {
            q.sort_by(|a, b| a.start.total_cmp(&b.start));
        }
        let mut free = f64::NEG_INFINITY;
        q.iter().map(move |x| {
            let mut c = x.c;
            if free > x.start {
                c.done = free + x.behind;
            }
            free = c.done;
            c
        })
    }
}

/// A completion, under LogGP a receive whose completion depends on the port, or where messages
/// move only inside calls a receive that waits for the rank's other receives.
pub(super) enum Pending {
    Done(Completion),
    Inbound(Inbound),
    Queued(Queued),
}

/// An event's predicted return and its duration's parts: `(return, communication, sender
/// sync, receiver sync)`.
pub(super) type Step = (f64, f64, f64, f64);

/// The cost of event `i` of rank `r` (a `routine` called at `tc`) by the model's rule for it,
/// from its partners' predicted times as they published them: blocked on the first one not
/// known yet. A completion call blocked part way keeps what it costed so far in `st`, to go on
/// from there; under LogGP, `port` is the rank's port, moved by the event. Inlined into
/// [`super::advance`]: called through memory, its results were read back by loads the core
/// cannot forward from the stores that wrote them (see the `diss` case of tests/bench/run.sh).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn cost_event(
    sh: &Shared<'_>,
    r: usize,
    i: usize,
    routine: Routine,
    tc: f64,
    st: &mut RankState,
    port: &mut Port,
    local: &mut Local,
) -> Result<Step, Dep> {
    let ev = sh.trace.rank(r);
    let o = sh.model.o();
    let step = match routine.shape() {
        Shape::None if routine.kept_measured() => {
            let d = traced(sh, r, i);
            (tc + d, d, 0.0, 0.0)
        }
        Shape::None => (tc, 0.0, 0.0, 0.0),
        // Where messages move only inside calls, an eager Isend copies its message out before
        // it returns, as the libraries do: `T1`, not `o` (the model's §4, progress).
        Shape::Isend if sh.model.progress_at_calls() => {
            let d = sh.isend_at_calls(r, i);
            (tc + d, d, 0.0, 0.0)
        }
        // The peer read only where several sets combine (the `diss` case of tests/bench/run.sh
        // reads no more than before).
        // A receive's post costs `post` (`o` where none is set, the model's §4).
        Shape::Irecv => {
            let d = sh.post_between(r, ev.peer(i));
            (tc + d, d, 0.0, 0.0)
        }
        Shape::Isend if sh.links.is_some() => {
            let o = sh.o_between(r, ev.peer(i), o);
            (tc + o, o, 0.0, 0.0)
        }
        Shape::Isend | Shape::Cancel => (tc + o, o, 0.0, 0.0),
        Shape::Send => {
            let c = sh.send_completion(r, i, tc)?;
            (c.done, c.done - tc - c.sync, c.sync, 0.0)
        }
        Shape::Recv => {
            // Its link read here, where it is used: most events have none to read.
            let (link, plain) = sh.g.link_plain(r, i);
            if routine.is_iprobe() && ev.flags(i) & FLAG_FOUND == 0 {
                return Ok(failed_poll(sh, r, i, tc, &mut st.wait));
            }
            if routine.is_iprobe() || link == NONE {
                return Ok((tc + o, o, 0.0, 0.0));
            }
            let from = link as usize;
            let ts = sh.call_at(from, ev.peer(i))?;
            let (k, rdv) = sh.message(from, plain, r);
            let c = match sh.message_model(from, r, rdv) {
                Model::LogGps(p) if routine.is_probe() => p.probe(k, rdv, ts, tc),
                Model::LogGps(p) => {
                    if !rdv && p.departs_upto.is_some() && i > 0 {
                        note_held(sh, p, from, (k, ts, tc), (r, i), st);
                    }
                    sh.slowed(
                        p,
                        from,
                        RecvBuf::of(&ev, r, i),
                        k,
                        rdv,
                        p.recv_polled(k, rdv, ts, tc, &mut st.wait),
                    )
                }
                Model::LogGp(m) if routine.is_probe() => m.probe(k, ts, tc),
                Model::LogGp(m) => sh.receive(
                    port,
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
            let send = sh.send_completion(r, i, tc)?;
            let into = RecvBuf::of(&ev, r, i);
            let at = (r, tc, st.wait);
            match sh.recv_completion(sh.g.link2(r, i), false, -1, at, false, into)? {
                Pending::Done(recv) => {
                    if recv.polled {
                        st.wait = st.wait.polled_at(tc);
                    }
                    let mut w = WaitFold::new(tc, sh.model.wait_floor());
                    w.add(send.done, send.unblock, send.send_side);
                    w.add(recv.done, recv.unblock, recv.send_side);
                    w.finish()
                }
                // LogGP: the receive is called once the send's first byte is out.
                Pending::Inbound(m) => {
                    let c = sh.receive(port, Inbound { t: send.done, ..m });
                    (c.ret, c.ret - tc - c.sync, 0.0, c.sync)
                }
                Pending::Queued(_) => unreachable!("only a request's receive is queued"),
            }
        }
        Shape::Complete => completion(sh, r, i, routine, tc, st, port, local)?,
        // A nonblocking collective starts its part and returns; its Wait waits for the end.
        Shape::Coll if routine.nonblocking() => (tc + o, o, 0.0, 0.0),
        Shape::Coll | Shape::CommOp => {
            collective(sh, r, i, routine, tc, (st.colls, &mut st.wait), local)?
        }
    };
    Ok(step)
}

/// Counts on the receiving rank `r` a blocking `MPI_Send` of `k` bytes sent at `ts` (global
/// event `from`), received by its Recv `i > 0` called at `tr`, that its library held while the
/// receiver computed ([`crate::model::Params::held`]; the model's §13, not costed).
#[cold]
fn note_held(
    sh: &Shared<'_>,
    p: &crate::model::Params,
    from: usize,
    (k, ts, tr): (u64, f64, f64),
    (r, i): (usize, usize),
    st: &mut RankState,
) {
    if sh.routine_at(from) != Routine::Send {
        return;
    }
    // The call before returned where the computation the replay put before this one began.
    let ev = sh.trace.rank(r);
    let change = sh.trace.meta.ranks.gap_change(r);
    let returned = tr - super::rank::computed(&ev, &change, i, ev.t_return(i - 1));
    if let Some(ns) = p.held(k, ts, tr, returned) {
        st.hold(ns);
    }
}

/// A failed poll (an `MPI_Test*` that completed nothing, an `MPI_Iprobe` that found nothing)
/// called at `tc`: the model's `poll`, else what the call took when traced. All communication:
/// it waits for nobody. Its library polled at its call (`wait`).
#[inline(always)]
fn failed_poll(sh: &Shared<'_>, r: usize, i: usize, tc: f64, wait: &mut Wait) -> Step {
    // It polled (the model's §14, "Small messages taken in at a poll").
    *wait = wait.polled_at(tc);
    let d = match sh.model.poll() {
        Some(poll) => poll,
        None => traced(sh, r, i),
    };
    (tc + d, d, 0.0, 0.0)
}

/// What event `i` of rank `r` took when traced, less the tracer's time inside its span (at
/// least 0): the cost of a call the replay keeps as measured, whose span holds the tracer's
/// time as a modeled call's cost does not (the model's §16; a gap's change is the same for
/// both).
#[inline]
fn traced(sh: &Shared<'_>, r: usize, i: usize) -> f64 {
    let ev = sh.trace.rank(r);
    let d = (ev.t_return(i) - ev.t_call(i)) as f64;
    (d - sh.trace.meta.ranks.inside_call(r, ev.routine(i))).max(0.0)
}

/// A completion call's cost (`MPI_Wait*`, `MPI_Test*` that completed): the Wait rule over the
/// requests the trace says it completed, resumed where it blocked last time.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn completion(
    sh: &Shared<'_>,
    r: usize,
    i: usize,
    routine: Routine,
    tc: f64,
    st: &mut RankState,
    port: &mut Port,
    local: &mut Local,
) -> Result<Step, Dep> {
    let ev = sh.trace.rank(r);
    let o = sh.model.o();
    // A freed request's operation completes without a waiter: the free costs its overhead.
    if routine == Routine::RequestFree {
        return Ok((tc + o, o, 0.0, 0.0));
    }
    if routine.polls() && ev.completed_reqs(i).next().is_none() {
        return Ok(failed_poll(sh, r, i, tc, &mut st.wait));
    }
    let wait = st.wait;
    let (resume_at, fold, last) = (&mut st.resume_at, &mut st.fold, &mut st.last_request);
    let fold_send_side = &mut st.fold_send_side;
    let rare = &mut st.rare;
    // The receives to take one at a time: those costed before it blocked, kept in the rank's
    // state, and this pass's.
    let mut queued = std::mem::take(&mut local.queued);
    queued.clear();
    // Resumed where it blocked last time.
    let from = std::mem::take(resume_at) as usize;
    // Whether one of its receives took its message in itself: the call polled (the model's
    // §14), kept where it blocked.
    let mut polled = false;
    let mut w = if from > 0 {
        if let Some(x) = rare.as_deref_mut() {
            queued.append(&mut x.queued);
            polled = std::mem::take(&mut x.polled);
        }
        WaitFold::resume(tc, *fold, *fold_send_side)
    } else {
        if let Some(l) = Rare::loggp(rare) {
            l.inbound.clear();
        }
        WaitFold::new(tc, sh.model.wait_floor())
    };
    let hint = (last.1 != NO_EVENT).then_some(*last);
    for (k, (req, oi)) in (from..).zip(ev.completed_origins(i, from, hint)) {
        match sh.request((r, wait), oi as usize, local) {
            Ok(Pending::Done(c)) => {
                polled |= c.polled;
                w.add(c.done, c.unblock, c.send_side)
            }
            Ok(Pending::Inbound(m)) => {
                Rare::loggp(rare).expect("a LogGP state").inbound.push(m);
            }
            Ok(Pending::Queued(q)) => {
                polled |= q.c.polled;
                queued.push(q)
            }
            Err(dep) => {
                if k > 0 {
                    *resume_at = k as u32;
                    (*fold, *fold_send_side) = w.save();
                    if !queued.is_empty() || polled {
                        let x = rare.get_or_insert_with(Box::default);
                        x.queued.append(&mut queued);
                        x.polled = polled;
                    }
                }
                local.queued = queued;
                return Err(dep);
            }
        }
        *last = (req, oi);
    }
    // LogGP: the port takes the messages in the order their last bytes arrive.
    if let Some(l) = Rare::loggp(rare) {
        l.inbound.sort_by(|a, b| a.arrival.total_cmp(&b.arrival));
        for m in l.inbound.drain(..) {
            let c = sh.receive(port, m);
            w.add(c.ret, c.unblock, false);
        }
    }
    for c in Queued::serial(&mut queued) {
        w.add(c.done, c.unblock, c.send_side);
    }
    local.queued = queued;
    if polled {
        st.wait = st.wait.polled_at(tc);
    }
    Ok(w.finish())
}

/// A collective call's cost: its modeled schedule's end for this rank where it is modeled
/// (`wait` then holding its receive steps' last poll), else the measured rule (the latest call
/// of the instance plus this rank's own measured time after the last arrival). `colls`: the
/// collective calls the rank made before.
#[inline(always)]
fn collective(
    sh: &Shared<'_>,
    r: usize,
    i: usize,
    routine: Routine,
    tc: f64,
    (colls, wait): (u32, &mut Wait),
    local: &mut Local,
) -> Result<Step, Dep> {
    let ev = sh.trace.rank(r);
    let link = link_of(sh, r, i, routine, colls);
    // Comm_free, and collectives an unfinished trace never completed: measured.
    if link == NONE {
        let d = traced(sh, r, i);
        return Ok((tc + d, d, 0.0, 0.0));
    }
    if !sh.instance_done(link) {
        return Err(Dep::Instance(link));
    }
    // Modeled: the schedule's end for this rank, with the synchronization its
    // steps had by the point-to-point rules; the rest is communication.
    if sh.coll.modeled
        && let Some(e) = sh.modeled_return(link, r as u32, local)
    {
        let ret = e.ret.max(tc);
        let comm = ret - tc - e.sender_sync - e.receiver_sync;
        // Its receive steps' polls hold for the rank's calls after it (the model's §14).
        *wait = wait.polled_at(e.polled);
        return Ok((ret, comm, e.sender_sync, e.receiver_sync));
    }
    let last_call = f64::from_bits(sh.max_call[link as usize].load(Ordering::Acquire));
    let after = (sh.trace.corrected_ns(r, ev.t_return(i))
        - sh.t0
        - sh.measured_last_arrival[link as usize])
        .max(0.0);
    Ok((last_call + after, after, 0.0, last_call - tc))
}

impl Shared<'_> {
    /// A nonblocking collective's completion, rank `r`'s part of it started at `ti` (its event
    /// `oi`): where its blocking twin would have returned. Modeled: the schedule's end for this
    /// rank, its synchronization counted first (the wait for its partners comes before the
    /// transfers it lets go); measured: the latest call of the instance, all of it
    /// synchronization. An instance an unfinished trace left out completes at once.
    #[cold]
    fn collective_completion(
        &self,
        r: usize,
        oi: usize,
        ti: f64,
        local: &mut Local,
    ) -> Result<Completion, Dep> {
        // Linked even where the graph implies the other collective calls' instances.
        let x = self.g.link(r, oi);
        if x == NONE {
            return Ok(Completion {
                done: ti,
                sync: 0.0,
                unblock: ti,
                send_side: false,
                polled: false,
            });
        }
        if !self.instance_done(x) {
            return Err(Dep::Instance(x));
        }
        if self.coll.modeled
            && let Some(e) = self.modeled_return(x, r as u32, local)
        {
            let sync = e.sender_sync + e.receiver_sync;
            return Ok(Completion {
                done: e.ret,
                sync,
                unblock: ti + sync,
                send_side: e.sender_sync > e.receiver_sync,
                polled: false,
            });
        }
        let last_call = f64::from_bits(self.max_call[x as usize].load(Ordering::Acquire));
        Ok(Completion {
            done: last_call,
            sync: (last_call - ti).max(0.0),
            unblock: last_call,
            send_side: false,
            polled: false,
        })
    }

    #[inline(always)]
    pub(super) fn call(&self, r: usize, i: usize) -> Result<f64, Dep> {
        self.call_at(self.offsets[r] + i, r as i32)
    }

    /// The predicted call time of global event `e`, most likely an event of rank `hint`
    /// (the peer a message names; any value will do).
    #[inline(always)]
    pub(super) fn call_at(&self, e: usize, hint: i32) -> Result<f64, Dep> {
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
                    _ if e >= self.held => self.g.ghosts.locate(e),
                    _ => self.trace.events.locate(e),
                };
                Err(Dep::Event(q as u32, j as u32))
            }
            bits => Ok(f64::from_bits(!bits)),
        }
    }

    /// Whether the predicted call time of event `j` of rank `q` is known: in one process of a
    /// split replay, of another process's rank too (a ghost).
    fn known(&self, q: usize, j: usize) -> bool {
        let e = match self.offsets[q] + j < self.offsets[q + 1] {
            true => self.offsets[q] + j,
            false => {
                let ghosts = &self.g.ghosts;
                match ghosts.firsts.get(q).and_then(|&f| ghosts.local(f + j)) {
                    Some(e) => e,
                    None => return false,
                }
            }
        };
        self.calls[e].load(Ordering::Acquire) != UNKNOWN
    }

    /// Whether a rank blocked on `dep` can go on.
    pub(super) fn ready(&self, dep: Dep) -> bool {
        match dep {
            Dep::Event(q, j) => self.known(q as usize, j as usize),
            Dep::Instance(x) => self.instance_done(x),
        }
    }

    /// The duration of Isend `i` of rank `r` where messages move only inside calls: its pair's
    /// set's [`crate::model::Params::isend_at_calls`] (an eager message's `T1 − Od`: the call
    /// returns once its message has left, what a blocking send spends after that waits in the
    /// Wait), `o` under LogGP.
    #[inline(always)]
    pub(super) fn isend_at_calls(&self, r: usize, i: usize) -> f64 {
        let ev = self.trace.rank(r);
        let peer = ev.peer(i);
        let q = match usize::try_from(peer) {
            Ok(q) if q < self.trace.nranks() => q,
            _ => return self.model.o(),
        };
        match self.pair(r, q) {
            Model::LogGps(p) => p.isend_at_calls(ev.bytes(i), self.rendezvous(r, i)),
            m => m.o(),
        }
    }

    /// The send half of an operation started at `ti` on rank `r` (event `i`): its Send cost.
    pub(super) fn send_completion(&self, r: usize, i: usize, ti: f64) -> Result<Completion, Dep> {
        let ev = self.trace.rank(r);
        let (peer, bytes) = (ev.peer(i), ev.bytes(i));
        if peer == PEER_NULL {
            return Ok(Completion {
                done: ti + self.model.o(),
                sync: 0.0,
                unblock: ti,
                send_side: true,
                polled: false,
            });
        }
        let p = match self.pair(r, peer as usize) {
            Model::LogGps(p) => p,
            // Done once its first byte is out, which it published at its call; nothing unblocks
            // it, it never waits for its receiver.
            Model::LogGp(_) => {
                return Ok(Completion {
                    done: self.call(r, i).expect("a send publishes at its call"),
                    sync: 0.0,
                    unblock: f64::NEG_INFINITY,
                    send_side: true,
                    polled: false,
                });
            }
        };
        // An unfinished trace may lack the receive: then the send can only be costed eagerly.
        // Its link read only by rendezvous: most sends are eager, and an eager send needs
        // nothing of its receive (see the `gauss` and `diss` cases of tests/bench/run.sh).
        let link = match self.rendezvous(r, i) {
            true => self.g.link(r, i),
            false => NONE,
        };
        let rdv = link != NONE;
        let tr = if rdv {
            self.call_at(self.moves_at(link) as usize, peer)?
        } else {
            ti
        };
        let p = match rdv && self.clean_any && ev.flags(i) & FLAG_CLEAN != 0 {
            true => self.clean_of(r, peer as usize),
            false => p,
        };
        let c = p.send(bytes, rdv, ti, tr);
        // Its receiver pulls the payload and the send completes on its word that it has: a
        // receive into a bounced buffer (the model's §13) or into one its copy aliases (§9),
        // whose copy takes longer, holds the send as long.
        let bounced = rdv && self.flags_of(link as usize) & FLAG_BOUNCED != 0;
        let aliased = rdv
            && p.alias.is_some()
            && aliases(ev.pages(i).send, || self.pages_of(link as usize).recv);
        Ok(Completion::of(
            p.slowed(bytes, rdv, bounced, aliased, c),
            true,
        ))
    }

    /// `c`, a receive's cost under `p` of the `k`-byte message (by rendezvous where `rdv`) sent
    /// by global event `from` into a buffer `into` says of, its single copy longer where that
    /// buffer was bounced (the model's §13) and where it aliases the send's (§9).
    #[inline(always)]
    pub(super) fn slowed(
        &self,
        p: &crate::model::Params,
        from: usize,
        into: RecvBuf,
        k: u64,
        rdv: bool,
        c: crate::model::Cost,
    ) -> crate::model::Cost {
        let page = || self.trace.rank(into.r).pages(into.i).recv;
        let aliased = rdv && p.alias.is_some() && aliases(self.pages_of(from).send, page);
        p.slowed(k, rdv, into.bounced, aliased, c)
    }

    /// Where the buffers of global event `e` (a ghost's too) start in their pages.
    #[inline]
    pub(super) fn pages_of(&self, e: usize) -> PageOffsets {
        match e >= self.held {
            true => PageOffsets::of_word(self.g.ghosts.pages[e - self.held] as u64),
            false => {
                let (r, i) = self.trace.events.locate(e);
                self.trace.rank(r).pages(i)
            }
        }
    }

    /// A receive of rank `to` started at `ti` whose message comes from global event `from`
    /// (NONE: none), most likely an event of rank `source` (see [`Shared::call_at`]); `plain`:
    /// a plain send's ([`HbGraph::link_plain`]). `queued`: a request's, which its completion
    /// call takes one at a time with the call's other receives (the model's §14); `into`: what
    /// its buffer tells of its copy (bounced, the model's §13; aliased, §13).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn recv_completion(
        &self,
        from: u32,
        plain: bool,
        source: i32,
        (to, ti, wait): (usize, f64, Wait),
        queued: bool,
        into: RecvBuf,
    ) -> Result<Pending, Dep> {
        if from == NONE {
            return Ok(Pending::Done(Completion {
                done: ti + self.model.o(),
                sync: 0.0,
                unblock: ti,
                send_side: false,
                polled: false,
            }));
        }
        let from = from as usize;
        let ts = self.call_at(from, source)?;
        let (bytes, rdv) = self.message(from, plain, to);
        // Where the receive takes its message in itself, its call polls (`after`; the model's
        // §14, "Small messages taken in at a poll").
        let mut after = wait;
        Ok(match self.message_model(from, to, rdv) {
            Model::LogGps(p) if queued => {
                let at_calls = !self.progress_at.is_empty();
                let (start, c) = p.recv_span(bytes, rdv, (ts, ti), at_calls, &mut after);
                let c = self.slowed(p, from, into, bytes, rdv, c);
                Pending::Queued(Queued {
                    start,
                    c: Completion::received(c, wait, after),
                    behind: p.queued_busy(bytes, rdv, c.ret - start),
                })
            }
            Model::LogGps(p) => {
                let c = p.recv_polled(bytes, rdv, ts, ti, &mut after);
                let c = self.slowed(p, from, into, bytes, rdv, c);
                Pending::Done(Completion::received(c, wait, after))
            }
            Model::LogGp(m) => Pending::Inbound(Inbound {
                t: ti,
                arrival: m.arrival(ts, bytes),
                bytes,
            }),
        })
    }

    /// A LogGP receive taken through the rank's `port`; waiting for the last byte to arrive is
    /// receiver synchronization, waiting for the port is communication.
    pub(super) fn receive(&self, port: &mut Port, m: Inbound) -> Cost {
        let Model::LogGp(lg) = self.model else {
            unreachable!("only LogGP receives wait for a port")
        };
        lg.recv_return(port, m.t, m.bytes, m.arrival)
    }

    /// The bytes of the message sent by global event `from` to rank `to`, and whether it goes
    /// by rendezvous; from its byte count alone where it is `plain` (the graph tells).
    #[inline(always)]
    pub(super) fn message(&self, from: usize, plain: bool, to: usize) -> (u64, bool) {
        if from >= self.held {
            return self.ghost_message(from, to);
        }
        let eager_limit = match self.links {
            None => self.eager_limit,
            Some(_) => self.model_of(from, to).eager_limit(),
        };
        let (k, rdv) = match plain {
            true => {
                let k = self.trace.events.plain_bytes_at(from);
                (k, k > eager_limit)
            }
            false => (
                self.trace.events.bytes_at(from),
                rendezvous_at(&self.trace.events, eager_limit, from),
            ),
        };
        // A message a rank sends itself is a local copy: eager at any size (the model's §4).
        (k, rdv && self.trace.events.locate(from).0 != to)
    }

    /// The model of a message between ranks `a` and `b`: its pair's set where several combine
    /// (the model's §12), else the run's one.
    #[inline(always)]
    pub(super) fn pair(&self, a: usize, b: usize) -> &Model {
        match self.links {
            None => self.model,
            Some(l) => &self.models[l.set_of(a, b)],
        }
    }

    /// The model of the message sent by global event `from` to rank `to` (by rendezvous where
    /// `rdv`): [`Shared::model_of`], its pair's `clean` set where its sender sent it from an
    /// unchanged buffer (the model's §13).
    #[inline(always)]
    fn message_model(&self, from: usize, to: usize, rdv: bool) -> &Model {
        match rdv && self.clean_any && self.flags_of(from) & FLAG_CLEAN != 0 {
            true => {
                let sender = match from >= self.held {
                    true => self.g.ghosts.locate(from).0,
                    false => self.trace.events.locate(from).0,
                };
                self.clean_model(sender, to)
            }
            false => self.model_of(from, to),
        }
    }

    /// The flags of global event `e` (a ghost's too).
    #[inline]
    fn flags_of(&self, e: usize) -> u8 {
        match e >= self.held {
            true => self.g.ghosts.flags[e - self.held],
            false => self.trace.events.flags_at(e),
        }
    }

    /// The `clean` set ([`crate::model::Params::clean_set`]) of the pair `a`, `b`: its set's
    /// where several combine, the run's else (the set itself where it has none).
    #[cold]
    fn clean_model(&self, a: usize, b: usize) -> &Model {
        match self.links {
            None => &self.cleans[0],
            Some(l) => &self.cleans[l.set_of(a, b)],
        }
    }

    /// [`Shared::clean_model`]'s parameters, for a send of rank `r` to `peer`.
    #[cold]
    fn clean_of(&self, r: usize, peer: usize) -> &crate::model::Params {
        match self.clean_model(r, peer) {
            Model::LogGps(p) => p,
            Model::LogGp(_) => unreachable!("a clean set is a LogGPS one"),
        }
    }

    /// [`Shared::pair`] of the message sent by global event `from` to rank `to`.
    #[inline(always)]
    fn model_of(&self, from: usize, to: usize) -> &Model {
        match self.links {
            None => self.model,
            Some(_) if from >= self.held => self.pair(self.g.ghosts.locate(from).0, to),
            Some(_) => self.pair(self.trace.events.locate(from).0, to),
        }
    }

    /// The overhead `o` of rank `r`'s call naming `peer`: its pair's set's where several
    /// combine, else `o`.
    #[inline(always)]
    fn o_between(&self, r: usize, peer: i32, o: f64) -> f64 {
        match (self.links, usize::try_from(peer)) {
            (Some(_), Ok(q)) if q < self.trace.nranks() => self.pair(r, q).o(),
            _ => o,
        }
    }

    /// What posting rank `r`'s receive from `peer` costs: its pair's set's `post` where several
    /// combine, else the model's.
    #[inline(always)]
    fn post_between(&self, r: usize, peer: i32) -> f64 {
        match (self.links, usize::try_from(peer)) {
            (Some(_), Ok(q)) if q < self.trace.nranks() => self.pair(r, q).post(),
            _ => self.model.post(),
        }
    }

    /// The routine of global event `e` (a ghost's, from another process of a split replay).
    #[cold]
    fn routine_at(&self, e: usize) -> Routine {
        if e >= self.held {
            return self.g.ghosts.routine[e - self.held];
        }
        let (q, j) = self.trace.events.locate(e);
        self.trace.rank(q).routine(j)
    }

    /// [`Shared::message`] of ghost event `from` ([`crate::graph::HbGraph::ghosts`]) to rank
    /// `to`, from the routine and byte count its owner sent (never to itself: its sender is
    /// another process's rank).
    #[cold]
    fn ghost_message(&self, from: usize, to: usize) -> (u64, bool) {
        let ghosts = &self.g.ghosts;
        let s = from - self.held;
        let k = ghosts.bytes[s];
        let eager_limit = match self.links {
            None => self.eager_limit,
            Some(_) => self.model_of(from, to).eager_limit(),
        };
        (k, rendezvous_by(ghosts.routine[s], eager_limit, || k))
    }

    /// Whether the message sent by event `i` of rank `r` goes by rendezvous (never under LogGP).
    /// Inlined, as is the search for a completed request's creator: left to it, the compiler
    /// keeps both as calls (see the `diss` case of tests/bench/run.sh).
    #[inline(always)]
    pub(super) fn rendezvous(&self, r: usize, i: usize) -> bool {
        let ev = self.trace.rank(r);
        // The peer read only where several sets combine: one set's is every pair's.
        let eager_limit = match self.links {
            None => self.eager_limit,
            Some(_) => match usize::try_from(ev.peer(i)) {
                Ok(q) if q < self.trace.nranks() => self.pair(r, q).eager_limit(),
                _ => self.eager_limit,
            },
        };
        // A message to itself: eager at any size (the model's §4).
        matches!(self.model, Model::LogGps(_))
            && rendezvous_in(&ev, eager_limit, i)
            && ev.peer(i) != r as i32
    }

    /// The completion of the request rank `r` created at its event `oi` (at a known call time).
    #[inline(always)]
    pub(super) fn request(
        &self,
        (r, wait): (usize, Wait),
        oi: usize,
        local: &mut Local,
    ) -> Result<Pending, Dep> {
        let ti = self
            .call(r, oi)
            .expect("a request's creator precedes its completion");
        match self.trace.rank(r).routine(oi).shape() {
            Shape::Isend if self.rendezvous_sender => self.send_queued(r, oi, ti),
            Shape::Isend => self.send_completion(r, oi, ti).map(Pending::Done),
            Shape::Coll => self
                .collective_completion(r, oi, ti, local)
                .map(Pending::Done),
            _ => {
                let (from, plain) = self.g.link_plain(r, oi);
                let tr = match self.progress_at.is_empty() {
                    true => ti,
                    false => {
                        let e = self.moves_at((self.offsets[r] + oi) as u32) as usize;
                        self.call_at(e, r as i32)?
                    }
                };
                // One at a time, in the call that completes them.
                let ev = self.trace.rank(r);
                let into = RecvBuf::of(&ev, r, oi);
                self.recv_completion(from, plain, ev.peer(oi), (r, tr, wait), true, into)
            }
        }
    }

    /// A nonblocking send's completion (event `oi` of rank `r`, called at `ti`) where some set's
    /// rendezvous payload holds its sender's CPU: its pair's set's share of its payload's `T1`
    /// taken one at a time with the completion call's receives where it goes by rendezvous
    /// (the model's §14).
    #[cold]
    fn send_queued(&self, r: usize, oi: usize, ti: f64) -> Result<Pending, Dep> {
        let c = self.send_completion(r, oi, ti)?;
        let ev = self.trace.rank(r);
        let q = match usize::try_from(ev.peer(oi)) {
            Ok(q) if q < self.trace.nranks() && self.rendezvous(r, oi) => q,
            _ => return Ok(Pending::Done(c)),
        };
        // A clean send's share of its payload is its clean set's (the model's §13).
        let model = match self.clean_any && ev.flags(oi) & FLAG_CLEAN != 0 {
            true => self.clean_model(r, q),
            false => self.pair(r, q),
        };
        match model {
            Model::LogGps(p) => match p.sender_share(ev.bytes(oi)) {
                0.0 => Ok(Pending::Done(c)),
                share => {
                    let held = share * p.t1(ev.bytes(oi));
                    Ok(Pending::Queued(Queued {
                        start: c.done - held,
                        c,
                        behind: held,
                    }))
                }
            },
            _ => Ok(Pending::Done(c)),
        }
    }

    /// The global event at whose call a receive posted at global event `e` takes its
    /// message: `e` itself, but where messages move only inside calls and `e` starts a
    /// request, its rank's next call that starts none (`e` where none follows).
    #[inline(always)]
    pub(super) fn moves_at(&self, e: u32) -> u32 {
        match self.progress_at.get(e as usize) {
            Some(&at) if at != NONE => at,
            _ => e,
        }
    }
}
