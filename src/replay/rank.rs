//! One rank's replay: its state, and the walk over its events ([`advance`]) that keeps the
//! measured computation, publishes each call time and adds each event's cost.

use super::collective::{Local, STARTS_BATCH, STEPS_BATCH, wait_slot};
use super::cost::cost_event;
use super::cost::{Inbound, Queued};
use super::schedule::{PREFETCH_AHEAD, prefetch_partner};
use super::{Outcome, RankBreakdown, Shared, Step, link_of, read_by_partners, sends};
use crate::collectives::traced::op_of;
use crate::graph::NONE;
use crate::model::{CostModel, Model, Port, SavedFold, Wait};
use crate::trace::{PEER_NULL, Routine};
use std::sync::atomic::Ordering;

/// A rank's replay so far: 120 bytes with its lock, what a replay of many short ranks holds a
/// rank: the fold kept without its call time (the clock), the last request without an
/// `Option`, what only some ranks have in one box ([`Rare`]).
pub(super) struct RankState {
    pub(super) pos: u32,
    /// Collective calls made so far: the instance of the next where the graph implies it
    /// ([`HbGraph::implicit`]).
    pub(super) colls: u32,
    /// How many requests the completion call at `pos` had costed when it blocked (0: none),
    /// what they gave in `fold`: a Waitall on P requests that waits for them one by one costs
    /// O(P), not O(P²).
    pub(super) resume_at: u32,
    /// Whether the call of `pos` is published.
    pub(super) published: bool,
    /// The last request a completion call costed, and the event that created it (the event
    /// [`NO_EVENT`]: none yet).
    pub(super) last_request: (u32, u32),
    /// Predicted time reached so far: the call of `pos` once published, else the last return.
    pub(super) clock: f64,
    /// The fold of the completion call at `pos` when `resume_at` > 0, but its call time, the
    /// clock; and whether its critical operation is a send.
    pub(super) fold: SavedFold,
    pub(super) fold_send_side: bool,
    pub(super) parts: Parts,
    /// Time in collectives, and the routine of the first collective call: all of that time is
    /// its routine's until the rank calls another, when the time per routine goes to `rare`
    /// (on a loop of one collective, no rank needs a box: 64 bytes a rank with it).
    pub(super) collective: f64,
    pub(super) first_collective: Option<Routine>,
    /// What only some ranks have (boxed: 8 bytes for a rank that has none of it).
    pub(super) rare: Option<Box<Rare>>,
    /// Where it last waited inside a call: what that call may have taken in of a message a
    /// later receive finds there (the model's §14, "Messages taken in while waiting").
    pub(super) wait: Wait,
}

/// No event (no rank has `u32::MAX` events: see [`crate::graph::NONE`]).
pub(super) const NO_EVENT: u32 = u32::MAX;

/// The sums a rank's [`RankBreakdown`] is made of (its collectives' in [`Rare`]).
#[derive(Clone, Copy, Default)]
pub(super) struct Parts {
    pub(super) computation: f64,
    pub(super) communication: f64,
    pub(super) sender_sync: f64,
    pub(super) receiver_sync: f64,
}

/// A rank state's parts that only ranks calling collectives of several routines, or replayed
/// under LogGP, have.
#[derive(Default)]
pub(super) struct Rare {
    /// Time in collectives per routine, for the routines this rank called (empty while it
    /// called one only: [`RankState::first_collective`]).
    pub(super) kinds: Vec<(Routine, f64)>,
    /// LogGP only (boxed apart: most ranks of a trace of collectives have none).
    pub(super) loggp: Option<Box<LogGpState>>,
    /// Where messages move only inside calls: the receives the completion call it is blocked
    /// in had costed, to be taken one at a time with the rest ([`Queued::serial`]).
    pub(super) queued: Vec<Queued>,
    /// Whether a receive it had costed there took its message in itself: the call polls (the
    /// model's §14).
    pub(super) polled: bool,
    /// Blocking eager sends to this rank that its library held while it computed, and their
    /// time held beyond their `T1` ([`crate::model::Params::held`]; not costed).
    pub(super) held: (u64, f64),
}

impl Rare {
    /// The LogGP state in a rank state's `rare` (a field's borrow, where the state's other
    /// fields are borrowed too).
    #[inline]
    pub(super) fn loggp(rare: &mut Option<Box<Rare>>) -> Option<&mut LogGpState> {
        rare.as_deref_mut().and_then(|x| x.loggp.as_deref_mut())
    }
}

/// A rank's network port under LogGP, and the messages the completion call it is blocked in
/// has yet to take through it.
#[derive(Default)]
pub(super) struct LogGpState {
    pub(super) port: Port,
    pub(super) inbound: Vec<Inbound>,
}

impl RankState {
    pub(super) fn new(model: &Model) -> RankState {
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
            wait: Wait::NONE,
        }
    }

    /// The rank's LogGP state (under LogGP).
    #[inline]
    pub(super) fn loggp(&mut self) -> Option<&mut LogGpState> {
        Rare::loggp(&mut self.rare)
    }

    /// Counts a send to this rank held `ns` beyond its `T1` while this rank computed.
    #[cold]
    pub(super) fn hold(&mut self, ns: f64) {
        let rare = self.rare.get_or_insert_with(Box::default);
        rare.held.0 += 1;
        rare.held.1 += ns;
    }

    /// Adds `t` spent in a collective `routine`.
    #[cold]
    pub(super) fn add_collective(&mut self, routine: Routine, t: f64) {
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
            // One routine more, room for it alone: a vector's first growth, room for four,
            // would hold room for routines never called on every rank that calls several.
            None => {
                rare.kinds.reserve_exact(1);
                rare.kinds.push((routine, t));
            }
        }
    }

    /// Where rank `r` (of `len` events) got to: its last event replayed is the one it is
    /// blocked in or finalized at.
    pub(super) fn breakdown(self, r: usize, len: usize, measured_end_ns: f64) -> RankBreakdown {
        let p = self.parts;
        let held = self.rare.as_ref().map_or((0, 0.0), |x| x.held);
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
            tracer_ns: 0.0,
            held_sends: held.0,
            held_ns: held.1,
            aliased: 0,
            aliased_bytes: 0,
        }
    }
}

/// The tracer's own time [`advance`] took out of rank `r`'s measured gaps before its events up
/// to `last` ([`RankBreakdown::tracer_ns`]; found once the replay is done, so that a rank's state
/// holds no sum for it).
pub(super) fn tracer_removed(trace: &crate::trace::Trace, r: usize, last: usize) -> f64 {
    let change = trace.meta.ranks.gap_change(r);
    if change.is_none() {
        return 0.0;
    }
    let ev = trace.rank(r);
    let last = last.min(ev.len().saturating_sub(1));
    (1..=last)
        .map(|i| {
            let gap = (ev.t_call(i) - ev.t_return(i - 1)) as f64;
            gap - (gap + change.between(ev.routine(i - 1), ev.routine(i))).max(0.0)
        })
        .sum()
}

/// Advances rank `r` as far as its dependencies allow: each event's call time, from the
/// computation measured before it, published for its partners, then its cost
/// ([`cost_event`]) added to the rank's parts.
pub(super) fn advance(sh: &Shared<'_>, r: usize, st: &mut RankState, local: &mut Local) -> Outcome {
    let ev = sh.trace.rank(r);
    // The tracer's own time in each measured gap taken out, or its time inside the calls put
    // in (the model's §16; 0: none).
    let change = sh.trace.meta.ranks.gap_change(r);
    // The measured return of the event before, once this run has read it: not read twice.
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
                st.clock + computed(&ev, &change, i, before)
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
            // Where messages move only inside calls, a partner may read any call's time.
            if read_by_partners(routine) || !sh.progress_at.is_empty() {
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
                    if sh.draining {
                        let w = st.wait;
                        local.starts.push((x, wait_slot(r as u32, 1), w.until));
                        local.starts.push((x, wait_slot(r as u32, 2), w.polled));
                    }
                    if local.starts.len() >= STARTS_BATCH {
                        sh.flush_starts(local);
                    }
                }
            }
        }
        let tc = st.clock;
        if routine == Routine::Finalize {
            // Not costed: the rank ends at its call. The observer sees it there.
            observe(sh, local, (r, i, tc), (tc, 0.0, 0.0, 0.0), st.wait.polled);
            break;
        }
        // The port as this event leaves it; kept only if the event can be costed now.
        let mut port = st.loggp().map_or_else(Port::default, |l| l.port);
        let (ret, comm, ssync, rsync) =
            match cost_event(sh, r, i, routine, tc, st, &mut port, local) {
                Ok(step) => step,
                Err(dep) => return Outcome::Blocked(dep),
            };
        if let Some(l) = st.loggp() {
            l.port = port;
        }
        if routine.is_collective() {
            st.add_collective(routine, ret - tc);
            st.colls += 1;
        }
        st.wait = Wait::after(st.wait, tc, ssync + rsync);
        observe(
            sh,
            local,
            (r, i, tc),
            (ret, comm, ssync, rsync),
            st.wait.polled,
        );
        st.parts.communication += comm;
        st.parts.sender_sync += ssync;
        st.parts.receiver_sync += rsync;
        st.clock = ret;
        st.pos += 1;
        st.published = false;
    }
    Outcome::Done
}

/// The computation the replay puts before event `i > 0` of a rank (`ev`, its gap `change`), the
/// event before it returned at `before` when traced: the measured gap between them, less the
/// tracer's own time (the model's §16).
#[inline(always)]
pub(super) fn computed(
    ev: &crate::trace::Rank<'_>,
    change: &crate::trace::GapChange,
    i: usize,
    before: u64,
) -> f64 {
    let gap = (ev.t_call(i) - before) as f64;
    match change.is_none() {
        true => gap,
        false => (gap + change.between(ev.routine(i - 1), ev.routine(i))).max(0.0),
    }
}

/// Batches event `i` of rank `r`, called at `tc` and costed `(return, communication, sender
/// sync, receiver sync)`, its rank's library having polled last at `polled`, for the replay's
/// observer where there is one.
#[inline(always)]
fn observe(
    sh: &Shared<'_>,
    local: &mut Local,
    (r, i, tc): (usize, usize, f64),
    cost: (f64, f64, f64, f64),
    polled: f64,
) {
    if sh.observer.is_none() {
        return;
    }
    let (ret, comm, ssync, rsync) = cost;
    local.steps.push(Step {
        rank: r as u32,
        event: i as u32,
        call_ns: tc,
        return_ns: ret,
        communication_ns: comm,
        sender_sync_ns: ssync,
        receiver_sync_ns: rsync,
        polled_ns: polled,
    });
    if local.steps.len() == STEPS_BATCH {
        sh.flush_steps(local);
    }
}
