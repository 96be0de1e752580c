//! The happens-before graph: messages matched by MPI's rules (per communicator, source and tag,
//! FIFO; wildcards resolved by the recorded status), requests tied to the calls that complete
//! them, collective calls tied into instances. Program order is implicit in the per-rank
//! columns; the cross-rank edges are compact per-rank arrays, and [`HbView`] exposes the whole
//! graph to petgraph's algorithms without materializing it.

use crate::error::{Error, TraceError};
use crate::memory::with_kept;
use crate::memory::{self, Pages, Shortfall};
use crate::trace::{
    CommMembers, FLAG_ANY_SOURCE, FLAG_ANY_TAG, PEER_ANY, PEER_NULL, RankRequests, Routine, Shape,
    TAG_ANY, Trace, list_some, par_ranges,
};
use rayon::prelude::*;
use std::cell::RefCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

mod instances;
pub mod split;
mod view;

use instances::*;

pub use view::HbView;

/// "No partner" in the link columns.
pub const NONE: u32 = u32::MAX;

/// The most events a trace may have: a link (a global event index) leaves its top bit free.
pub const MAX_EVENTS: usize = (1 << 31) - 1;

/// A receive's link bit: its message comes from a plain send
/// ([`crate::trace::Rank::plain_send`]), whose byte count alone tells its size and protocol,
/// so that the replay need not read the send's routine too, a cache line far away (see the
/// `diss` case of tests/bench/run.sh). Also a send's [`Side::at`] bit, which the matching
/// passes on.
const PLAIN: u32 = 1 << 31;
// A request's completing event comes from the trace's request check, whose "none" is this one.
const _: () = assert!(NONE == crate::trace::NOT_DONE);

/// A collective call as all its participants made it: every member of communicator `comm`
/// (`size` of them) made it, its call linked to the instance (or implied:
/// [`HbGraph::implicit`]). The graph keeps no list of participants (4 bytes a call): the replay
/// needs none, and [`HbGraph::participants`] makes one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instance {
    pub comm: u32,
    pub size: u32,
}

/// The matched trace.
#[derive(Debug, Default)]
pub struct HbGraph {
    /// The trace's event offsets: rank `r`'s events at `start[r]..start[r + 1]`.
    start: Vec<usize>,
    /// Per event (global index), complemented: the matching event, by its global index
    /// (point-to-point), the instance (collectives, unless [`HbGraph::implicit`]), or [`NONE`].
    /// Stored as `!link`, so that [`NONE`] is 0 and the array comes zeroed from the system, its
    /// pages touched first by the matching's writes (setting every entry to [`NONE`] first
    /// would touch them all; a trace of collectives alone touches none). Links are below
    /// [`MAX_EVENTS`], so a stored link has its top bit set; a receive's has it clear where its
    /// message is [`PLAIN`].
    link: Vec<u32>,
    /// Every collective call is on the world communicator and every rank makes as many: the
    /// instance of a call is the number of collective calls its rank made before it, and is not
    /// linked (4 bytes a call; see [`HbGraph::instance`]).
    pub implicit: bool,
    /// Per rank: `(event, partner's global index)` for the receive half of each Sendrecv,
    /// sorted by event (no ranks at all where no rank calls Sendrecv).
    pub link2: Vec<Vec<(u32, u32)>>,
    pub instances: Vec<Instance>,
    /// What an unfinalized trace lacks (unmatched messages, unfinished collectives).
    pub warnings: Vec<String>,
    /// In one process of a split replay, the events of other processes its links name
    /// ([`split::divide`]); empty otherwise.
    pub ghosts: split::Ghosts,
}

/// One side of a message as a matching key; its destination is implied by where it is kept.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Side {
    comm: u32,
    src: u32,
    tag: i32,
    /// The event on this side's own rank (the sender's for sends, the receiver's for
    /// receives), below 2^31 ([`MAX_EVENTS`]), with [`PLAIN`] set on a plain send's: read by
    /// [`Side::event`] and [`Side::plain`].
    at: u32,
}

memory::zeroable!(Side {
    comm: u32,
    src: u32,
    tag: i32,
    at: u32
});

impl Side {
    fn new(comm: u32, src: u32, tag: i32, event: u32) -> Side {
        Side {
            comm,
            src,
            tag,
            at: event,
        }
    }

    /// The event on this side's own rank.
    #[inline]
    fn event(&self) -> u32 {
        self.at & !PLAIN
    }

    /// Whether this is a plain send's side, known where the sender's columns are read in order,
    /// so that the matching need not read each message's send routine and word at random.
    #[inline]
    fn plain(&self) -> bool {
        self.at & PLAIN != 0
    }

    /// `(channel, event)` as one number, to sort by: a 128-bit comparison where the tuple takes
    /// four.
    #[inline]
    fn order(&self) -> u128 {
        let tag = (self.tag as u32 ^ 1 << 31) as u128; // i32 order as u32 order
        (self.comm as u128) << 96 | (self.src as u128) << 64 | tag << 32 | self.event() as u128
    }

    /// Sorts by [`Side::order`]. Receives posted from the farthest source down, as a
    /// dissemination's are, come in strictly descending runs (one, or two where the sources
    /// wrap around the ranks): each run reversed, they are sorted, and no sort runs (a few
    /// elements sort by insertion, in n^2 / 2 moves on such input).
    ///
    /// Many messages between few ranks (a Gaussian elimination's: thousands a destination, 64
    /// sources, tags alternating) are put by source first, then each source's in tag order
    /// ([`Side::tags_in_order`]): a bucket of sends comes by source already; receives are put so
    /// by a counting sort where the sources are few for the receives (below 4 a receive) and on
    /// one communicator. Both keep each source's sides in program order.
    fn sort(v: &mut [Side]) {
        if v.is_sorted_by_key(Side::order) {
            return;
        }
        // By source, each source's sides in program order (a bucket of sends; receives from a
        // few sources after the counting sort below): each source's sides are put in tag order.
        let by_source =
            |a: &Side, b: &Side| (a.comm, a.src, a.event()) <= (b.comm, b.src, b.event());
        if v.is_sorted_by(by_source) {
            Side::tags_in_order(v);
            return;
        }
        if Side::runs_reversed_sort(v) {
            let mut i = 0;
            while i < v.len() {
                let j = Side::run_end(v, i);
                v[i..j].reverse();
                i = j;
            }
            return;
        }
        let pair = |s: &Side| (s.comm, s.src);
        if !v.is_sorted_by_key(pair) {
            let comm = v[0].comm;
            let sources = v.iter().map(|s| s.src as usize + 1).max().unwrap_or(0);
            if sources > 4 * v.len() || v.iter().any(|s| s.comm != comm) {
                v.sort_unstable_by_key(Side::order);
                return;
            }
            let mut at = vec![0usize; sources + 1];
            for s in v.iter() {
                at[s.src as usize + 1] += 1;
            }
            for k in 1..at.len() {
                at[k] += at[k - 1];
            }
            let unsorted = v.to_vec();
            for &s in &unsorted {
                v[at[s.src as usize]] = s;
                at[s.src as usize] += 1;
            }
        }
        Side::tags_in_order(v);
    }

    /// Where the strictly descending run of `v` that starts at `i` ends.
    fn run_end(v: &[Side], i: usize) -> usize {
        let mut j = i + 1;
        while j < v.len() && v[j - 1].order() > v[j].order() {
            j += 1;
        }
        j
    }

    /// Whether reversing each strictly descending run of `v` would sort it: each run's least
    /// side (its last) above the greatest (the first) of the run before.
    fn runs_reversed_sort(v: &[Side]) -> bool {
        let (mut i, mut greatest) = (0, None);
        while i < v.len() {
            let j = Side::run_end(v, i);
            if greatest.is_some_and(|g| g > v[j - 1].order()) {
                return false;
            }
            greatest = Some(v[i].order());
            i = j;
        }
        true
    }

    /// Sorts sides that are in `(comm, src)` order, each source's in program order: a source's
    /// sides with a few tags (a Gaussian elimination's three) are put in tag order by counts,
    /// in program order still; with more, they are sorted. Counting beats a pass a tag into a
    /// growing vector (see the `gauss` case of tests/bench/run.sh).
    fn tags_in_order(v: &mut [Side]) {
        const FEW_TAGS: usize = 8;
        let mut out = Vec::new();
        for group in v.chunk_by_mut(|a, b| (a.comm, a.src) == (b.comm, b.src)) {
            if group.is_sorted_by_key(Side::order) {
                continue;
            }
            // The tags and how many sides each has, in one pass; then each side put at its
            // tag's next place. Only a group in program order with a few tags goes so.
            let mut tags = [(0i32, 0usize); FEW_TAGS];
            let (mut n, mut by_counts, mut last) = (0, true, 0);
            for s in group.iter() {
                by_counts &= s.event() >= last;
                last = s.event();
                match tags[..n].iter_mut().find(|t| t.0 == s.tag) {
                    Some(t) => t.1 += 1,
                    None if n < FEW_TAGS => {
                        tags[n] = (s.tag, 1);
                        n += 1;
                    }
                    None => {
                        by_counts = false;
                        break;
                    }
                }
            }
            if !by_counts {
                group.sort_unstable_by_key(Side::order);
                continue;
            }
            // Each tag's count becomes its first place, the tags in order.
            let tags = &mut tags[..n];
            tags.sort_unstable();
            let mut at = 0;
            for t in tags.iter_mut() {
                (at, t.1) = (at + t.1, at);
            }
            out.clear();
            out.resize(group.len(), Side::new(0, 0, 0, 0));
            for s in group.iter() {
                let t = tags.iter_mut().find(|t| t.0 == s.tag).expect("counted");
                out[t.1] = *s;
                t.1 += 1;
            }
            group.copy_from_slice(&out);
        }
    }
}

impl HbGraph {
    /// What event `i` of rank `r` is linked to: its message's partner event (a global index,
    /// see [`crate::trace::Events::locate`]), its collective instance, or [`NONE`].
    #[inline]
    pub fn link(&self, r: usize, i: usize) -> u32 {
        self.link_plain(r, i).0
    }

    /// [`HbGraph::link`], and whether it is a receive's whose message comes from a plain send
    /// (see `PLAIN`).
    #[inline]
    pub fn link_plain(&self, r: usize, i: usize) -> (u32, bool) {
        match self.link[self.start[r] + i] {
            0 => (NONE, false),
            s => (!(s | PLAIN), s & PLAIN == 0),
        }
    }

    /// Renumbers the point-to-point links (the Sendrecv halves' too) by `f`: in one process of
    /// a split replay, from the whole trace's events to its own ([`split::divide`]).
    pub(crate) fn renumber(&mut self, trace: &Trace, f: impl Fn(u32) -> u32 + Sync) {
        let routines = trace.events.routines();
        self.link
            .par_iter_mut()
            .zip(routines.par_iter())
            .filter(|(s, r)| **s != 0 && !r.is_collective())
            .for_each(|(s, _)| {
                let to = !*s;
                *s = !(f(to & !PLAIN) | (to & PLAIN));
            });
        for l in &mut self.link2 {
            for (_, e) in l.iter_mut() {
                *e = f(*e);
            }
        }
    }

    /// Asks for the cache line of global event `e`'s link.
    #[inline]
    pub fn prefetch(&self, e: usize) {
        crate::memory::prefetch(&self.link[e]);
    }

    /// The partner (global index) of the receive half of Sendrecv event `i` of rank `r`.
    pub fn link2(&self, r: usize, i: usize) -> u32 {
        let Some(l) = self.link2.get(r) else {
            return NONE;
        };
        l.binary_search_by_key(&(i as u32), |&(e, _)| e)
            .map_or(NONE, |k| l[k].1)
    }

    /// The instance of collective call `i` of rank `r` (`NONE`: not a collective call, or one
    /// an unfinished trace left out): its link, or where [`HbGraph::implicit`] the rank's
    /// collective calls before it (counted: for views and checks; `trace` is the graph's).
    pub fn instance(&self, trace: &Trace, r: usize, i: usize) -> u32 {
        let ev = trace.rank(r);
        match (ev.routine(i).is_collective(), self.implicit) {
            (false, _) => NONE,
            (true, false) => self.link(r, i),
            (true, true) => ev.routines()[..i]
                .iter()
                .filter(|x| x.is_collective())
                .count() as u32,
        }
    }

    /// Each instance's participants, `(world rank, event)` in communicator rank order, found
    /// from the links (every event read: for views and checks; `trace` is the graph's).
    pub fn participants(&self, trace: &Trace) -> Vec<Vec<(u32, u32)>> {
        let mut lists: Vec<Vec<(u32, u32)>> = self
            .instances
            .iter()
            .map(|x| Vec::with_capacity(x.size as usize))
            .collect();
        for r in 0..trace.nranks() {
            let ev = trace.rank(r);
            let calls = (0..ev.len()).filter(|&i| ev.routine(i).is_collective());
            for (s, i) in calls.enumerate() {
                let x = if self.implicit {
                    s as u32
                } else {
                    self.link(r, i)
                };
                if let Some(list) = lists.get_mut(x as usize) {
                    list.push((r as u32, i as u32));
                }
            }
        }
        // Found in world rank order; put in communicator rank order.
        for (list, x) in lists.iter_mut().zip(&self.instances) {
            let of = ranks_of(trace, x.comm);
            list.sort_by_key(|&(r, _)| rank_in(&of, r));
        }
        lists
    }
}

/// Which event completed each request, for [`HbView`]. The replay does not need it (a
/// completion call names its requests, the trace names their creators), and the graph build
/// makes it one rank at a time (for the checks, and a wildcard receive's status): it is not
/// kept with the graph (4 bytes a request).
struct Requests {
    /// Rank `r`'s requests at `start[r]..start[r + 1]`, by id.
    start: Vec<usize>,
    /// Per request: the event that completed it, or NONE.
    done: Vec<u32>,
}

impl Requests {
    /// Every rank's requests, checked: created in sequence, completed exactly once (all of
    /// them when the trace is complete), cancelled only once created.
    fn of(trace: &Trace, file: &str) -> Result<Requests, TraceError> {
        let mut start = Vec::with_capacity(trace.nranks() + 1);
        start.push(0);
        for ev in trace.events.ranks() {
            start.push(start.last().unwrap() + ev.requests());
        }
        // Every slot is written below.
        let mut done = vec![0; *start.last().unwrap()];
        par_ranges(&mut done[..], &start, &|r, reqs: &mut [u32]| {
            let mut checked = RankRequests::default();
            trace.rank_requests(file, r, &mut checked)?;
            reqs.copy_from_slice(&checked.done);
            Ok(())
        })?;
        Ok(Requests { start, done })
    }

    /// The event that completed request `req` of rank `r` ([`NONE`]: never, or no such
    /// request).
    fn done(&self, r: usize, req: u32) -> u32 {
        self.done[self.start[r]..self.start[r + 1]]
            .get(req as usize)
            .copied()
            .unwrap_or(NONE)
    }
}

/// The actual `(source, tag)` a receive-side event matched, if known. `done(req)` is the
/// event that completed request `req` of rank `r` (asked for wildcard receives only).
fn recv_key(
    trace: &Trace,
    done: &mut impl FnMut(u32) -> u32,
    r: usize,
    i: usize,
) -> Option<(i32, i32)> {
    let ev = trace.rank(r);
    match ev.routine(i).shape() {
        Shape::Recv => Some((ev.peer(i), ev.tag(i))),
        Shape::Sendrecv => ev.recv_half(i).map(|h| (h.source, h.tag)),
        Shape::Irecv => {
            let (peer, tag, flags) = (ev.peer(i), ev.tag(i), ev.flags(i));
            if peer != PEER_ANY && tag != TAG_ANY && flags & (FLAG_ANY_SOURCE | FLAG_ANY_TAG) == 0 {
                return Some((peer, tag));
            }
            let e = ev.event(i);
            let done = done(e.id as u32);
            if done == NONE {
                return None;
            }
            let st = ev
                .completions(done as usize)
                .find(|c| c.req as i64 == e.id)?;
            let source = if e.peer == PEER_ANY || e.flags & FLAG_ANY_SOURCE != 0 {
                st.source
            } else {
                e.peer
            };
            let tag = if e.tag == TAG_ANY || e.flags & FLAG_ANY_TAG != 0 {
                st.tag
            } else {
                e.tag
            };
            Some((source, tag))
        }
        _ => None,
    }
}

/// What matching allocates beside the trace: an event's link, kept for the replay.
pub const LINK_BYTES_PER_EVENT: u64 = 4;
/// What matching allocates for a while: an event's bucketed send (at most one an event).
const SEND_BYTES_PER_EVENT: u64 = 16;

/// Builds the graph of a loaded trace (whose loading checked its events and requests) and
/// checks it: every message matched, every collective called by all members of its
/// communicator with the same routine and root.
pub fn build(trace: &Trace, file: &str) -> Result<HbGraph, Error> {
    let p = trace.nranks();
    let start = trace.events.offsets().to_vec();
    if start[p] > MAX_EVENTS {
        return Err(TraceError::at(
            file,
            format!(
                "the trace has {} events; this build handles at most {MAX_EVENTS}",
                start[p]
            ),
        )
        .into());
    }

    // The links, and the sends bucketed by destination (at most one an event).
    let events = trace.events.len();
    let what = format!("matching the messages of {events} events");
    let need = (LINK_BYTES_PER_EVENT + SEND_BYTES_PER_EVENT) * events as u64;
    memory::ensure(&what, need).map_err(|e| e.in_file(file))?;
    let mut g = HbGraph {
        link: vec![!NONE; trace.events.len()],
        start,
        ..HbGraph::default()
    };

    match_messages(trace, file, &mut g)?;
    match_collectives(trace, file, &mut g)?;
    if !trace.pending.is_empty() {
        g.warnings.push(pending_requests(trace));
    }
    if let Some(w) = kept_measured(trace) {
        g.warnings.push(w);
    }
    Ok(g)
}

/// The warning for calls the model does not cost (one-sided communication, neighborhood
/// collectives), counted by routine; None where the trace has none.
fn kept_measured(trace: &Trace) -> Option<String> {
    let kept = routine_table(Routine::kept_measured);
    if !any_routine(trace, &kept) {
        return None;
    }
    let mut counts = [0u64; 256];
    for &r in trace.events.routines() {
        counts[r as usize] += kept[r as usize] as u64;
    }
    let by_routine: Vec<String> = Routine::ALL
        .iter()
        .filter(|&&r| counts[r as usize] > 0)
        .map(|&r| format!("{} {}", r.mpi_name(), counts[r as usize]))
        .collect();
    Some(format!(
        "{} call(s) the model does not cost (one-sided communication, neighborhood collectives) \
         replay at their traced durations: {}",
        counts.iter().sum::<u64>(),
        by_routine.join(", ")
    ))
}

/// The warning for requests no call completed: legal where a program leaves them pending at
/// `MPI_Finalize` (or frees them where the tracer did not see it); their operations replay as
/// completed without a waiter.
fn pending_requests(trace: &Trace) -> String {
    let named: Vec<String> = trace
        .pending
        .iter()
        .map(|&(r, i)| {
            let routine = trace.rank(r as usize).routine(i as usize).mpi_name();
            format!("rank {r} event {i} {routine}")
        })
        .collect();
    format!(
        "{} request(s) never completed by a Wait, Test or MPI_Request_free: their operations \
         complete without a waiter{}",
        named.len(),
        list_some(&named)
    )
}

/// One rank's receive-side events and their channels, in program order, into `v` (emptied
/// first: a buffer the thread keeps from rank to rank).
fn receives(
    trace: &Trace,
    file: &str,
    r: usize,
    seen: Seen,
    v: &mut Vec<Side>,
) -> Result<(), TraceError> {
    let ev = trace.rank(r);
    let mut cancelled: Vec<i64> = match seen.cancels {
        true => (0..ev.len())
            .filter(|&j| ev.routine(j) == Routine::Cancel)
            .map(|j| ev.id(j))
            .collect(),
        false => Vec::new(),
    };
    cancelled.sort_unstable();
    // The rank's request table, made at the first wildcard receive (checked already).
    let mut reqs: Option<RankRequests> = None;
    let mut done = |req: u32| {
        let reqs = reqs.get_or_insert_with(|| {
            let mut reqs = RankRequests::default();
            trace
                .rank_requests(file, r, &mut reqs)
                .expect("checked when the trace loaded");
            reqs
        });
        reqs.done.get(req as usize).copied().unwrap_or(NONE)
    };
    let is_recv = |routine: Routine| routine.receives();
    // Room for them all at once: grown by doubling, the vector of a rank of many receives would
    // take up to twice its room at its last growth, and the threads each hold one (see the
    // bytes/event of the `gauss` case of tests/bench/run.sh).
    v.clear();
    v.reserve_exact((0..ev.len()).filter(|&i| is_recv(ev.routine(i))).count());
    for i in 0..ev.len() {
        let routine = ev.routine(i);
        let shape = routine.shape();
        // A cancelled receive matches nothing (the trace cannot say whether the cancel won).
        if !is_recv(routine)
            || (shape == Shape::Irecv
                && !cancelled.is_empty()
                && cancelled.binary_search(&ev.id(i)).is_ok())
        {
            continue;
        }
        if let Some((src, tag)) = recv_key(trace, &mut done, r, i)
            && src != PEER_NULL
        {
            if src < 0 || src as usize >= trace.nranks() {
                return Err(TraceError::event(
                    file,
                    r,
                    i,
                    routine.mpi_name(),
                    format!("received from source {src}, which is not a world rank"),
                ));
            }
            v.push(Side::new(ev.comm(i), src as u32, tag, i as u32));
        }
    }
    Ok(())
}

/// The sends bucketed by destination, straight from the columns: a counting sort run in
/// parallel. The ranks are cut into one range per thread; each range counts its sends per
/// destination, the counts give every (range, destination) its own slots, and each range
/// writes its sends there. Returns the buckets' offsets (destination `d` at
/// `start[d]..start[d + 1]`, sources in rank order) and the sends.
fn bucket_sends(trace: &Trace) -> Result<(Vec<usize>, Pages<Side>, Seen), Shortfall> {
    let p = trace.nranks();
    let is_send = |ev: &crate::trace::Rank<'_>, i: usize| {
        matches!(
            ev.routine(i).shape(),
            Shape::Send | Shape::Isend | Shape::Sendrecv
        ) && ev.peer(i) != PEER_NULL
    };
    // One range per thread: the counts take ranges × ranks × 4 bytes.
    let k = rayon::current_num_threads().clamp(1, p.max(1));
    let ranges: Vec<std::ops::Range<usize>> = (0..k).map(|c| p * c / k..p * (c + 1) / k).collect();
    let (mut counts, seen): (Vec<Vec<u32>>, Vec<Seen>) = ranges
        .par_iter()
        .map(|ranks| {
            let (mut h, mut seen) = (vec![0u32; p], Seen::default());
            for r in ranks.clone() {
                let ev = trace.rank(r);
                for i in 0..ev.len() {
                    let routine = ev.routine(i);
                    seen.probes |= routine.is_probe();
                    seen.cancels |= routine == Routine::Cancel;
                    if is_send(&ev, i) {
                        h[ev.peer(i) as usize] += 1;
                    }
                }
            }
            (h, seen)
        })
        .unzip();
    let seen = seen.into_iter().fold(Seen::default(), |a, b| Seen {
        probes: a.probes | b.probes,
        cancels: a.cancels | b.cancels,
    });
    // Counts become each range's first slot per destination.
    let mut start = Vec::with_capacity(p + 1);
    let mut at = 0usize;
    for d in 0..p {
        start.push(at);
        for h in counts.iter_mut() {
            let n = h[d] as usize;
            h[d] = at as u32;
            at += n;
        }
    }
    start.push(at);
    let total = at;

    let mut bucketed = Pages::<Side>::zeroed(total)?;
    let bucket_end: Vec<u32> = start[1..].iter().map(|&e| e as u32).collect();
    let fill = |ranks: &std::ops::Range<usize>, slots: &mut memory::Scatter<'_, Side>| {
        for r in ranks.clone() {
            let ev = trace.rank(r);
            for i in (0..ev.len()).filter(|&i| is_send(&ev, i)) {
                let side = Side {
                    comm: ev.comm(i),
                    src: r as u32,
                    tag: ev.tag(i),
                    at: i as u32 | (PLAIN * ev.plain_send(i) as u32),
                };
                slots.put(ev.peer(i) as usize, side);
            }
        }
    };
    let overflow = memory::scatter(&mut bucketed, &ranges, &mut counts, &bucket_end, fill);
    debug_assert_eq!(
        overflow,
        Ok(0),
        "the second pass sends what the first counted"
    );
    Ok((start, bucketed, seen))
}

/// Whether a trace has routines that matching looks for in each destination's events, so that
/// traces without them (the `diss` case of tests/bench/run.sh) skip the look. Found while the
/// sends are counted.
#[derive(Clone, Copy, Default)]
struct Seen {
    probes: bool,
    cancels: bool,
}

/// Matches every message: sends are bucketed by destination (a counting sort), then each
/// destination, in parallel, sorts its bucket by channel `(comm, src, tag)` and pairs it with
/// its own receives in program order (MPI's non-overtaking rule: within one channel the n-th
/// send matches the n-th receive). Each destination writes its pairs' links itself: a send is
/// in one bucket only, so no two destinations write the same slot.
fn match_messages(trace: &Trace, file: &str, g: &mut HbGraph) -> Result<(), Error> {
    let (start, mut bucketed, seen) = bucket_sends(trace).map_err(|e| e.in_file(file))?;

    let mut link: Vec<AtomicU32> = std::mem::take(&mut g.link)
        .into_iter()
        .map(AtomicU32::new)
        .collect();
    // Where messages are an eighth of the events or more, the matching writes most pages of
    // the links, at random: made present first, in parallel, not a fault at each write (see
    // the `diss` case of tests/bench/run.sh). Not where messages are few: a
    // trace of collectives writes none of its links, which would then be resident for nothing.
    if 8 * bucketed.len() >= link.len() {
        crate::memory::populate_writes_in_parallel(&mut link);
    }
    let set =
        |r: usize, i: u32, to: u32| link[g.start[r] + i as usize].store(!to, Ordering::Relaxed);

    // What only some destinations have: Sendrecv halves, and what did not match.
    let halves = Mutex::new(Vec::<(usize, Vec<(u32, u32)>)>::new());
    let unmatched: Mutex<Vec<Unmatched>> = Mutex::new(Vec::new());
    thread_local! {
        /// A destination's receives, kept from destination to destination (up to
        /// `KEEP_RECEIVES` of them: 1 MiB).
        static RECEIVES: RefCell<Vec<Side>> = const { RefCell::new(Vec::new()) };
    }
    const KEEP_RECEIVES: usize = 1 << 16;
    par_ranges(&mut bucketed[..], &start, &|d,
                                            sends: &mut [Side]|
     -> Result<(), TraceError> {
        // The senders' links this destination will write, mostly far apart: asked for before
        // its receives are gathered and sorted, so that the writes find them (a write that
        // misses holds up the writes behind it; see the `diss` case of tests/bench/run.sh).
        for s in sends.iter().take(32) {
            crate::memory::prefetch(&link[g.start[s.src as usize] + s.event() as usize]);
        }
        Side::sort(sends);
        with_kept(&RECEIVES, |recvs| {
            receives(trace, file, d, seen, recvs)?;
            Side::sort(recvs);
            let (mine, lost) = pair(trace, d, &g.start, seen.probes, sends, recvs, &set);
            if !mine.is_empty() {
                halves.lock().expect("halves").push((d, mine));
            }
            if !lost.is_empty() {
                unmatched.lock().expect("unmatched").extend(lost);
            }
            // A destination of many receives does not leave its vector to the thread, which
            // would keep it through the replay (16 bytes a receive).
            if recvs.capacity() > KEEP_RECEIVES {
                *recvs = Vec::new();
            }
            // Cleared while in cache, for the replay's call times to take over as they are.
            sends.fill(Side::new(0, 0, 0, 0));
            Ok(())
        })
    })?;
    // Its pages become the replay's call times (8 bytes an event, where these are 16 a send),
    // cleared already, each destination's while in cache, not in a pass of their own.
    bucketed.recycle(true);
    g.link = link.into_iter().map(AtomicU32::into_inner).collect();
    let halves = halves.into_inner().expect("halves");
    if !halves.is_empty() {
        g.link2 = vec![Vec::new(); trace.nranks()];
    }
    for (d, h) in halves {
        g.link2[d] = h;
    }
    let unmatched = unmatched.into_inner().expect("unmatched");
    unmatched_messages(trace, unmatched, g);
    Ok(())
}

/// A side that matched nothing: `(is_send, destination, side)`.
type Unmatched = (bool, usize, Side);

/// Pairs destination `d`'s sends (sorted by [`Side::sort`]) with its receives (sorted alike),
/// the n-th send of a channel with its n-th receive, writing both links through `set`; and a
/// probe's link to the message the next receive on its channel takes. Returns the Sendrecv
/// receive halves' links `(event, send)`, sorted, and what matched nothing (`(is_send, d, side)`).
fn pair(
    trace: &Trace,
    d: usize,
    start: &[usize],
    probes_seen: bool,
    sends: &[Side],
    recvs: &[Side],
    set: &impl Fn(usize, u32, u32),
) -> (Vec<(u32, u32)>, Vec<Unmatched>) {
    let channel = |x: &Side| (x.comm, x.src, x.tag);
    let ev = trace.rank(d);
    let probes = probes_seen && (0..ev.len()).any(|i| ev.routine(i).is_probe());
    let (mut mine, mut lost, mut by_recv) = (Vec::new(), Vec::new(), Vec::new());
    let (mut a, mut b) = (0, 0);
    while a < sends.len() || b < recvs.len() {
        let order = match (sends.get(a), recvs.get(b)) {
            (Some(s), Some(v)) => channel(s).cmp(&channel(v)),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => lost.push((true, d, sends[a])),
            std::cmp::Ordering::Greater => lost.push((false, d, recvs[b])),
            std::cmp::Ordering::Equal => {
                let (s, v) = (sends[a], recvs[b]);
                let send = (start[s.src as usize] + s.event() as usize) as u32;
                let recv = v.event();
                set(s.src as usize, s.event(), (start[d] + recv as usize) as u32);
                if ev.routine(recv as usize).shape() == Shape::Sendrecv {
                    mine.push((recv, send));
                } else {
                    set(d, recv, send | (PLAIN * s.plain() as u32));
                }
                if probes {
                    by_recv.push((recv, send));
                }
            }
        }
        a += (order != std::cmp::Ordering::Greater) as usize;
        b += (order != std::cmp::Ordering::Less) as usize;
    }
    // A probe sees the message that the next receive on its channel takes.
    by_recv.sort_unstable();
    for i in (0..ev.len()).filter(|&i| probes && ev.routine(i).is_probe()) {
        let e = ev.event(i);
        if e.peer == PEER_NULL {
            continue;
        }
        let key = (e.comm, e.peer as u32, e.tag);
        let at = recvs.partition_point(|v| (channel(v), v.event()) <= (key, i as u32));
        if let Some(v) = recvs.get(at).filter(|v| channel(v) == key)
            && let Ok(k) = by_recv.binary_search_by_key(&v.event(), |&(recv, _)| recv)
        {
            set(d, i as u32, by_recv[k].1);
        }
    }
    mine.sort_unstable();
    (mine, lost)
}

/// What matched nothing, as a warning: the trace of a job that ended with messages nobody
/// received (or, unfinished, whose other sides were never recorded).
fn unmatched_messages(trace: &Trace, unmatched: Vec<Unmatched>, g: &mut HbGraph) {
    let routine = |&(send, d, x): &Unmatched| {
        let rank = if send { x.src as usize } else { d };
        trace.rank(rank).routine(x.event() as usize)
    };
    let unmatched = unmatched.into_iter().map(|u| (u, routine(&u))).collect();
    if let Some(w) = unmatched_warning(unmatched) {
        g.warnings.push(w);
    }
}

/// The warning of [`unmatched_messages`], each side with its event's routine.
fn unmatched_warning(mut unmatched: Vec<(Unmatched, Routine)>) -> Option<String> {
    unmatched.sort_unstable_by_key(|&(u, _)| u);
    let describe = |&((send, d, x), routine): &(Unmatched, Routine)| {
        let (rank, peer) = if send {
            (x.src as usize, d)
        } else {
            (d, x.src as usize)
        };
        let routine = routine.mpi_name();
        format!(
            "rank {rank} event {} {routine} {} rank {peer} tag {} comm {}",
            x.event(),
            if send { "to" } else { "from" },
            x.tag,
            x.comm
        )
    };
    if !unmatched.is_empty() {
        let split = unmatched.partition_point(|x| !x.0.0);
        let (recvs, sends) = unmatched.split_at(split);
        let list =
            |v: &[(Unmatched, Routine)]| list_some(&v.iter().map(describe).collect::<Vec<_>>());
        let mut parts = Vec::new();
        if !sends.is_empty() {
            parts.push(format!(
                "{} send(s) with no matching receive{}",
                sends.len(),
                list(sends)
            ));
        }
        if !recvs.is_empty() {
            parts.push(format!(
                "{} receive(s) with no matching send{}",
                recvs.len(),
                list(recvs)
            ));
        }
        // A job may end with messages nobody received (a freed or never-waited send): the
        // replay costs such a send eagerly and such a receive as its overhead alone.
        return Some(parts.join("; "));
    }
    None
}

/// Whether a message sent by a `routine` call of `bytes()` bytes goes by rendezvous under
/// eager limit `S`: by the send's mode, else by its size.
#[inline(always)]
pub fn rendezvous_by(routine: Routine, eager_limit: u64, bytes: impl FnOnce() -> u64) -> bool {
    match routine {
        Routine::Ssend | Routine::Issend => true,
        Routine::Bsend | Routine::Rsend | Routine::Ibsend | Routine::Irsend => false,
        _ => bytes() > eager_limit,
    }
}

/// Whether the message sent by global event `e` goes by rendezvous under eager limit `S`.
/// Inlined, as is [`rendezvous_in`]: the replay asks for each send, a few events ahead and
/// again when costing it, and a call each time shows (see the `diss` case of
/// tests/bench/run.sh).
#[inline(always)]
pub fn rendezvous_at(ev: &crate::trace::Events, eager_limit: u64, e: usize) -> bool {
    rendezvous_by(ev.routine_at(e), eager_limit, || ev.bytes_at(e))
}

/// [`rendezvous_at`] for event `i` of rank `ev`: its byte count read in the rank, where a
/// global event's that is not in its columns (a Sendrecv's) first looks for its rank.
#[inline(always)]
pub fn rendezvous_in(ev: &crate::trace::Rank<'_>, eager_limit: u64, i: usize) -> bool {
    rendezvous_by(ev.routine(i), eager_limit, || ev.bytes(i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse;

    /// A tally counts each key apart, inline or past the inline pairs, and lists its pairs in
    /// the order the keys came.
    #[test]
    fn tally_counts_each_key() {
        let mut t = Tally::default();
        let keys = [7, 7, 3, 7, 9, 3, 11, 9, 9];
        let before: Vec<u32> = keys.iter().map(|&k| t.bump(k)).collect();
        assert_eq!(before, [0, 1, 0, 2, 0, 1, 0, 1, 2]);
        assert_eq!(
            t.pairs().collect::<Vec<_>>(),
            [(7, 3), (3, 2), (9, 3), (11, 1)]
        );
        assert_eq!(Tally::default().pairs().count(), 0);
    }

    /// Every event's link, as [`HbGraph::link`] gives them.
    fn links(g: &HbGraph) -> Vec<u32> {
        let p = g.start.len() - 1;
        (0..p)
            .flat_map(|r| (0..g.start[r + 1] - g.start[r]).map(move |i| g.link(r, i)))
            .collect()
    }

    fn build_text(t: &str) -> (Trace, HbGraph) {
        let trace = parse("t.txt", t.as_bytes()).unwrap();
        let g = build(&trace, "t.txt").unwrap();
        (trace, g)
    }

    #[test]
    fn fifo_per_channel_and_wildcards_by_status() {
        // Rank 0 sends tag 1, tag 2, tag 1. Rank 1 receives ANY_TAG (status says tag 2) first,
        // then tag 1 twice: non-overtaking pairs the tag-1 messages in order.
        let (t, g) = build_text(
            "loggps-trace 1\nranks 2\n\
             0 MPI_Send 0 1 bytes=1 peer=1 tag=1\n0 MPI_Send 2 3 bytes=2 peer=1 tag=2\n0 MPI_Send 4 5 bytes=3 peer=1 tag=1\n\
             1 MPI_Irecv 0 1 bytes=9 peer=0 tag=-1 flags=any_tag req=0\n1 MPI_Wait 2 3 done=0:0:2\n\
             1 MPI_Recv 4 5 bytes=9 peer=0 tag=1\n1 MPI_Recv 6 7 bytes=9 peer=0 tag=1\n",
        );
        // Rank 1's events are global 3..=6.
        assert_eq!(links(&g), vec![5, 3, 6, 1, NONE, 0, 2]);
        let reqs = Requests::of(&t, "t.txt").unwrap();
        assert_eq!((reqs.start, reqs.done), (vec![0, 0, 1], vec![1]));
    }

    #[test]
    fn communicators_separate_channels_and_collectives_group() {
        let (t, g) = build_text(
            "loggps-trace 1\nranks 3\ncomm 5 members 2,0\n\
             0 MPI_Send 0 1 bytes=1 peer=2 tag=0 comm=5\n0 MPI_Send 2 3 bytes=1 peer=2 tag=0\n0 MPI_Barrier 4 5 comm=5\n0 MPI_Barrier 6 7\n\
             1 MPI_Barrier 6 7\n\
             2 MPI_Recv 0 1 bytes=1 peer=0 tag=0\n2 MPI_Recv 2 3 bytes=1 peer=0 tag=0 comm=5\n2 MPI_Barrier 4 5 comm=5\n2 MPI_Barrier 6 7\n",
        );
        // Rank 2's events are global 5..=8.
        assert_eq!(links(&g)[..2], [6, 5]);
        assert_eq!(g.instances.len(), 2);
        // comm 5's barrier lists its members in communicator rank order: world 2, then world 0
        let x = g.link(0, 2);
        assert_eq!(g.participants(&t)[x as usize], [(2, 2), (0, 2)]);
    }

    /// An unfinished trace: world's second Barrier lacks ranks 1 and 2 and is left out; comm
    /// 5's Barrier, after it in (communicator, sequence) order, is instance 1, its members
    /// right after instance 0's, in communicator rank order.
    #[test]
    fn unfinished_collectives_are_left_out_of_the_instances() {
        let mut t = parse(
            "t.txt",
            b"loggps-trace 1\nranks 3\ncomm 5 members 2,1\n\
              0 MPI_Barrier 0 1\n0 MPI_Barrier 2 3\n\
              1 MPI_Barrier 0 1\n1 MPI_Barrier 4 5 comm=5\n\
              2 MPI_Barrier 0 1\n2 MPI_Barrier 4 5 comm=5\n",
        )
        .unwrap();
        t.complete = false;
        let g = build(&t, "t.txt").unwrap();
        assert_eq!(
            g.instances,
            [Instance { comm: 0, size: 3 }, Instance { comm: 5, size: 2 }]
        );
        let members = g.participants(&t);
        assert_eq!(members[0], [(0, 0), (1, 0), (2, 0)]);
        assert_eq!(members[1], [(2, 1), (1, 1)]);
        // Global events: rank 0 at 0..2, rank 1 at 2..4, rank 2 at 4..6.
        assert_eq!(links(&g), [0, NONE, 0, 1, 0, 1]);
        assert!(
            g.warnings[0].contains("MPI_Barrier #1 on communicator 0 is never called by rank(s)"),
            "{:?}",
            g.warnings
        );
    }

    /// Where every member of each communicator calls on it equally often, the instances are
    /// placed rank by rank in parallel; an unfinished collective at the end of one rank sends
    /// the same trace down the general path, which must find the same instances, members and
    /// links (and leave the unfinished call out).
    #[test]
    fn both_ways_of_grouping_collectives_agree() {
        // World, comm 5 (world 3, 0, 2) and comm 6 (world 1, 3), calls interleaved per rank.
        let mut text =
            String::from("loggps-trace 1\nranks 4\ncomm 5 members 3,0,2\ncomm 6 members 1,3\n");
        let calls = |r: usize| -> Vec<String> {
            let mut v = vec!["MPI_Barrier".to_string()];
            if r != 1 {
                v.extend(["MPI_Allreduce comm=5".into(), "MPI_Allreduce comm=5".into()]);
            }
            if r == 1 || r == 3 {
                v.extend(["MPI_Bcast root=1 comm=6".into()]);
            }
            v.push("MPI_Barrier".into());
            if r != 1 {
                v.push("MPI_Allreduce comm=5".into());
            }
            if r == 1 || r == 3 {
                v.push("MPI_Bcast root=3 comm=6".into());
            }
            v
        };
        for r in 0..4 {
            for (i, c) in calls(r).iter().enumerate() {
                let (name, rest) = c.split_once(' ').unwrap_or((c, ""));
                text += &format!("{r} {name} {} {} {rest}\n", 2 * i, 2 * i + 1);
            }
        }
        let (t, uniform) = build_text(&text);
        let mut t2 = parse("t.txt", format!("{text}0 MPI_Barrier 100 101\n").as_bytes()).unwrap();
        t2.complete = false;
        let general = build(&t2, "t.txt").unwrap();
        assert_eq!(uniform.instances, general.instances);
        assert_eq!(uniform.participants(&t), general.participants(&t2));
        let last = t.rank(0).len();
        assert_eq!(general.link(0, last), NONE);
        for r in 0..4 {
            for i in 0..t.rank(r).len() {
                assert_eq!(uniform.link(r, i), general.link(r, i), "rank {r} event {i}");
            }
        }
        // 2 world Barriers, 3 Allreduces on comm 5, 2 Bcasts on comm 6, each in communicator
        // rank order: comm 5's first Allreduce is world 3's event 1, 0's event 1, 2's event 1.
        assert_eq!(uniform.instances.len(), 7);
        let members = uniform.participants(&t);
        assert_eq!(members[2], [(3, 1), (0, 1), (2, 1)]);
        assert_eq!(members[5], [(1, 1), (3, 3)]);
        assert!(
            general.warnings[0].contains("MPI_Barrier #2 on communicator 0"),
            "{:?}",
            general.warnings
        );
    }

    /// A trace whose collectives are all on the world, every rank calling alike, links none of
    /// them: a call's instance is its rank's count of collective calls before it. The view
    /// still ties each call to its instance: rank 0 calls the Barrier before the Send that rank
    /// 1 must receive before it calls the Barrier, a cycle.
    #[test]
    fn world_collectives_are_implied_not_linked() {
        let (t, g) = build_text(
            "loggps-trace 1\nranks 2\n\
             0 MPI_Barrier 0 1\n0 MPI_Send 2 3 bytes=1 peer=1\n0 MPI_Allreduce 4 5\n\
             1 MPI_Recv 0 1 bytes=1 peer=0\n1 MPI_Barrier 2 3\n1 MPI_Allreduce 4 5\n",
        );
        assert!(g.implicit);
        // Global events: rank 0 at 0..3, rank 1 at 3..6; only the message is linked.
        assert_eq!(links(&g), [NONE, 3, NONE, 1, NONE, NONE]);
        let instance = |r, i| g.instance(&t, r, i);
        assert_eq!(
            [instance(0, 2), instance(1, 1), instance(1, 0)],
            [1, 0, NONE]
        );
        assert_eq!(
            g.participants(&t),
            [vec![(0, 0), (1, 1)], vec![(0, 2), (1, 2)]]
        );
        assert!(petgraph::algo::is_cyclic_directed(&HbView::new(&t, &g, 0)));
        // A communicator besides the world: links as before.
        let (_, g) = build_text(
            "loggps-trace 1\nranks 2\ncomm 5 members 1,0\n\
             0 MPI_Barrier 0 1\n0 MPI_Barrier 2 3 comm=5\n\
             1 MPI_Barrier 0 1\n1 MPI_Barrier 2 3 comm=5\n",
        );
        assert!(!g.implicit);
        assert_eq!(links(&g), [0, 1, 0, 1]);
    }

    /// The sort key orders sides as the `(comm, src, tag, event)` tuple that matching compares,
    /// negative tags and the ends of every range included, and so does [`Side::sort`].
    #[test]
    fn side_order_is_the_tuple_order() {
        let (u, t) = (
            [0, 1, 7, u32::MAX - 1, u32::MAX],
            [i32::MIN, -1, 0, 1, i32::MAX],
        );
        let mut sides = Vec::new();
        for (k, &tag) in t.iter().enumerate() {
            for (j, &a) in u.iter().enumerate() {
                let b = u[(j + k) % u.len()];
                sides.push(Side::new(a, b, tag, u[(j + 2 * k) % u.len()]));
                sides.push(Side::new(b, a, tag, a));
            }
        }
        let mut by_key = sides.clone();
        Side::sort(&mut by_key);
        let mut descending = by_key.clone();
        descending.dedup();
        descending.reverse();
        sides.sort_unstable_by_key(|x| (x.comm, x.src, x.tag, x.event()));
        assert!(by_key == sides);
        sides.dedup();
        // Strictly descending; descending but for one pair; two descending runs, the second
        // above the first (a dissemination's sources wrapping around): sorted each way.
        let mut once = descending.clone();
        once.swap(3, 4);
        let mid = descending.len() / 3;
        let (high, low) = descending.split_at(mid);
        let wrapped: Vec<Side> = low.iter().chain(high).copied().collect();
        for mut v in [descending, once, wrapped] {
            Side::sort(&mut v);
            assert!(v == sides);
        }
    }

    /// Many sides from few sources, as a Gaussian elimination's destinations have them: in
    /// program order (sources cycling), by source with tags alternating (a bucket of sends),
    /// on two communicators, shuffled, and with eight and eleven tags; [`Side::sort`] orders
    /// each as the tuple sort does.
    #[test]
    fn few_sources_sort_as_the_tuple_order() {
        let side = Side::new;
        let cycling: Vec<Side> = (0..600)
            .map(|e| side(3, e % 7, [5, -1, 0][e as usize % 3], e))
            .collect();
        let mut by_source = cycling.clone();
        by_source.sort_by_key(|s| (s.src, s.event()));
        let mut two_comms = cycling.clone();
        two_comms[17].comm = 1;
        // 241 is prime to 600: k -> 241 k mod 600 visits every side once.
        let shuffled: Vec<Side> = (0..600).map(|k| cycling[k * 241 % 600]).collect();
        // As many tags as are taken out one by one, and more.
        let eight_tags: Vec<Side> = (0..600)
            .map(|e| side(3, e % 7, 4 - (e % 8) as i32, e))
            .collect();
        let many_tags: Vec<Side> = (0..600)
            .map(|e| side(3, e % 7, (e % 11) as i32, e))
            .collect();
        for mut v in [
            cycling, by_source, two_comms, shuffled, eight_tags, many_tags,
        ] {
            let mut want = v.clone();
            want.sort_unstable_by_key(|x| (x.comm, x.src, x.tag, x.event()));
            Side::sort(&mut v);
            assert!(v == want);
        }
    }

    #[test]
    fn mismatched_collectives_are_errors() {
        let err = |text: &[u8]| {
            let t = parse("t.txt", text).unwrap();
            build(&t, "t.txt").unwrap_err().to_string()
        };
        let e = err(b"loggps-trace 1\nranks 2\n0 MPI_Barrier 0 1\n1 MPI_Allreduce 0 1\n");
        assert!(
            e.contains("collective #0 on communicator 0 is MPI_Allreduce")
                && e.contains("MPI_Barrier"),
            "{e}"
        );
        let e = err(b"loggps-trace 1\nranks 2\n0 MPI_Barrier 0 1\n");
        assert!(
            e.contains("MPI_Barrier #0 on communicator 0 is never called by rank(s): 1"),
            "{e}"
        );
        // On a communicator listed out of world order (3, 0, 2), calls are compared with its
        // rank 0's (world 3); of two mismatches, the first instance's is named.
        let e = err(b"loggps-trace 1\nranks 4\ncomm 5 members 3,0,2\n\
            0 MPI_Barrier 0 1 comm=5\n0 MPI_Allreduce 2 3 comm=5\n\
            2 MPI_Allreduce 0 1 comm=5\n2 MPI_Barrier 2 3 comm=5\n\
            3 MPI_Barrier 0 1 comm=5\n3 MPI_Barrier 2 3 comm=5\n");
        assert!(
            e.contains("rank 2, event 0 (MPI_Allreduce): collective #0 on communicator 5 is MPI_Allreduce (root -1) here but MPI_Barrier (root -1) at rank 3 event 0"),
            "{e}"
        );
        // On a communicator listed out of world order, the one member missing is named.
        let e = err(b"loggps-trace 1\nranks 4\ncomm 5 members 3,0,2\n\
            0 MPI_Barrier 0 1 comm=5\n3 MPI_Barrier 0 1 comm=5\n");
        assert!(
            e.contains("MPI_Barrier #0 on communicator 5 is never called by rank(s): 2"),
            "{e}"
        );
    }

    #[test]
    fn requests_out_of_sequence_are_named() {
        // Request ids 0, 2, 1: the second Isend is the one out of sequence, though a request
        // with the next id follows it. The text parser keeps the ids; loading checks them.
        let text = b"loggps-trace 1\nranks 2\n\
              0 MPI_Isend 0 1 bytes=1 peer=1 req=0\n0 MPI_Isend 2 3 bytes=1 peer=1 req=2\n\
              0 MPI_Isend 4 5 bytes=1 peer=1 req=1\n0 MPI_Waitall 6 7 done=0:-1:-1,1:-1:-1,2:-1:-1\n";
        let t = crate::trace::text::parse("t.txt", text).unwrap();
        assert_eq!(t.rank(0).id(1), 2);
        let e = parse("t.txt", text).unwrap_err().to_string();
        assert!(
            e.contains("rank 0, event 1")
                && e.contains("expected request id 1 (ids are per-rank sequence numbers), found 2"),
            "{e}"
        );
        let mut bin = Vec::new();
        crate::trace::binary::write(&t, &mut bin, true).unwrap();
        let e = parse("t.bin", &bin).unwrap_err().to_string();
        assert!(
            e.contains("rank 0, event 1") && e.contains("found 2"),
            "{e}"
        );
    }

    #[test]
    fn petgraph_sees_the_rendezvous_cycle() {
        let text = "loggps-trace 1\nranks 2\n\
            0 MPI_Send 10 20 bytes=65536 peer=1\n0 MPI_Recv 30 40 bytes=65536 peer=1\n\
            1 MPI_Send 10 20 bytes=65536 peer=0\n1 MPI_Recv 30 40 bytes=65536 peer=0\n";
        let (t, g) = build_text(text);
        assert!(!petgraph::algo::is_cyclic_directed(&HbView::new(
            &t, &g, 65536
        )));
        assert!(petgraph::algo::is_cyclic_directed(&HbView::new(
            &t, &g, 65535
        )));
        let sccs = petgraph::algo::tarjan_scc(&HbView::new(&t, &g, 1024));
        assert!(sccs.iter().any(|c| c.len() == 4), "{sccs:?}");
    }

    #[test]
    fn petgraph_sees_sendrecv_exchanges_as_acyclic() {
        let (t, g) = build_text(
            "loggps-trace 1\nranks 2\n\
             0 MPI_Sendrecv 0 1 bytes=99999 peer=1 recv_bytes=99999 source=1\n\
             1 MPI_Sendrecv 0 1 bytes=99999 peer=0 recv_bytes=99999 source=0\n",
        );
        assert!(!petgraph::algo::is_cyclic_directed(&HbView::new(&t, &g, 0)));
    }
}
