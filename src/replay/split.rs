//! The replay split over processes (`mpirun -np K loggps-predict TRACE`, the `mpi` feature):
//! process `k` of `K` holds a contiguous block of the trace's ranks ([`owned`]; their events
//! alone, numbered from 0, and after them the other processes' events its links name: see
//! [`crate::graph::split::divide`]) and replays them with its threads, as one process replays
//! them all; the processes exchange in rounds what their ranks published that another process's
//! ranks read:
//! - the predicted call time of each point-to-point event whose partner another process holds
//!   (a send's, a receive's; under `progress = calls` also the call that moves a receive's
//!   message), sent to that process;
//! - arrivals at collective instances (their number and latest call) and, where collectives are
//!   modeled, each participant's call time, sent to the processes that own a member of the
//!   instance's communicator.
//!
//! A round: each process runs its ranks until none can go on without a time it does not know
//! (`schedule::run`), then all exchange ([`Exchange::all_to_all`]) what was published since
//! the last round, and write what they received where their ranks read it. When a round moves
//! nothing between processes, no rank anywhere can go on: every rank ended, or the trace
//! deadlocks (or is unfinished). Every predicted time is a pure function of the times it
//! depends on, so the prediction is the one a single process makes, bit for bit.
//!
//! At the end process 0 gathers every rank's breakdown, the warnings and the ranks that could
//! not end; it alone holds the whole [`Prediction`](super::Prediction) (the others hold their own ranks'). A
//! deadlock is named from every process's waits of its own ranks, gathered to all
//! (`gather_waits`): who waits on whom, who waits inside which collective, each stuck
//! call in words; each process then names the cycle as one process replaying alone does.

use super::deadlock::Waits;
use super::rank::RankState;
use super::schedule::{self, Waiting};
use super::{Dep, RankBreakdown, Recorded, Shared};
use crate::error::Error;
use crate::graph::{HbGraph, NONE};
use crate::trace::{Routine, Trace};
use rayon::prelude::*;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub use crate::graph::split::Exchange;
pub use crate::trace::owned;
use crate::trace::owner_of;

/// What a split replay measured of its exchanges, on one process.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SplitStats {
    pub process: usize,
    pub processes: usize,
    /// The ranks it replayed.
    pub ranks: usize,
    /// Rounds of replay and exchange, the last (which moved nothing) included.
    pub rounds: u64,
    /// Bytes and messages (non-empty vectors) it sent to the others, the final gather's
    /// included.
    pub bytes_sent: u64,
    pub messages_sent: u64,
    /// Time spent making the records to send and writing those received, and in the
    /// exchanges themselves (waiting for the slowest process included).
    pub recording: Duration,
    pub exchanging: Duration,
}

/// What a split replay's [`Shared`] holds: the process's ranks, and what its runs published of
/// collectives since the last round (batched there by the threads' flushes).
pub(super) struct Part<'x> {
    pub(super) ex: &'x dyn Exchange,
    pub(super) ranks: Range<usize>,
    /// `(instance, arrivals, latest call's bits)`.
    pub(super) arrivals: Mutex<Vec<(u32, u32, u64)>>,
    /// `(instance, world rank, call time)` at modeled instances.
    pub(super) starts: Mutex<Vec<(u32, u32, f64)>>,
    /// The communicators all of whose members are this process's (the world's id where it
    /// holds every rank).
    whole: Vec<u32>,
    /// What this process's ranks recorded of each instance, until [`share_recorded`].
    recorded: Recorded,
}

impl<'x> Part<'x> {
    pub(super) fn new(
        ex: &'x dyn Exchange,
        trace: &Trace,
        g: &HbGraph,
        recorded: Recorded,
    ) -> Part<'x> {
        let ranks = owned(ex.process(), ex.processes(), trace.nranks());
        let whole = g.instances.iter().map(|x| x.comm).filter(|&c| {
            match trace.comms.iter().find(|m| m.id == c) {
                Some(m) => m.members.iter().all(|&r| ranks.contains(&(r as usize))),
                None => ranks.len() == trace.nranks(),
            }
        });
        let mut whole: Vec<u32> = whole.collect();
        whole.sort_unstable();
        whole.dedup();
        Part {
            ex,
            ranks,
            arrivals: Mutex::default(),
            starts: Mutex::default(),
            whole,
            recorded,
        }
    }

    /// Whether `dep` may be met by this process's ranks within a round (else it waits for
    /// the exchange).
    pub(super) fn may_come(&self, sh: &Shared<'_>, dep: Dep) -> bool {
        match dep {
            Dep::Event(q, _) => self.ranks.contains(&(q as usize)),
            Dep::Instance(x) => {
                let comm = sh.g.instances[x as usize].comm;
                self.whole.binary_search(&comm).is_ok()
            }
        }
    }
}

/// A record's kinds, the top two bits of its first word (two words each). The rest of the
/// word is a global event (below 2^31), or an instance and a count or a world rank (each
/// below 2^31: [`KIND`] is clear of them).
const CALL: u64 = 0;
const ARRIVAL: u64 = 1 << 62;
const START: u64 = 2 << 62;
const KIND: u64 = 3 << 62;
/// An instance's bits in a collective record's first word.
const LOW: u64 = (1 << 31) - 1;

/// Where a process's records go: per owned rank, which of its events' call times another
/// process reads, and which process (`(event, process)`, by event); per communicator but the
/// world, the processes that own a member.
struct Routes {
    reads: Vec<Vec<(u32, u32)>>,
    comms: HashMap<u32, Vec<u32>>,
    /// Every other process: the world's.
    others: Vec<u32>,
}

impl Routes {
    fn new(trace: &Trace, sh: &Shared<'_>, part: &Part<'_>) -> Routes {
        let (n, me) = (part.ex.processes(), part.ex.process());
        let ghosts = &sh.g.ghosts;
        let owner = owner_of(n, trace.nranks());
        // An event whose partner another process holds (a ghost) is read there: a receive
        // reads its send's call time, a rendezvous send its receive's, or where messages move
        // only inside calls the call that moves the receive's message.
        let reads = part
            .ranks
            .clone()
            .into_par_iter()
            .map(|r| {
                let ev = trace.rank(r);
                let mut to: Vec<(u32, u32)> = Vec::new();
                let mut add = |i: usize, e: u32| {
                    if e != NONE && e as usize >= sh.held {
                        let k = owner(ghosts.locate(e as usize).0) as u32;
                        to.push((i as u32, k));
                        let moves = sh.moves_at((sh.offsets[r] + i) as u32) as usize;
                        to.push(((moves - sh.offsets[r]) as u32, k));
                    }
                };
                for i in 0..ev.len() {
                    if !ev.routine(i).is_collective() {
                        add(i, sh.g.link(r, i));
                    }
                }
                for &(i, e) in sh.g.link2.get(r).into_iter().flatten() {
                    add(i as usize, e);
                }
                to.sort_unstable();
                to.dedup();
                to
            })
            .collect();
        Routes {
            reads,
            comms: comm_owners(trace, n, me),
            others: (0..n as u32).filter(|&k| k as usize != me).collect(),
        }
    }

    /// The other processes that own a member of instance `x`'s communicator.
    fn of_instance(&self, sh: &Shared<'_>, x: u32) -> &[u32] {
        let comm = sh.g.instances[x as usize].comm;
        self.comms.get(&comm).unwrap_or(&self.others)
    }
}

/// Per communicator but the world, the other processes than `me` that own a member.
fn comm_owners(trace: &Trace, n: usize, me: usize) -> HashMap<u32, Vec<u32>> {
    let owner = owner_of(n, trace.nranks());
    let of = |c: &crate::trace::Comm| {
        let mut to: Vec<u32> = c
            .members
            .iter()
            .map(|&m| owner(m as usize) as u32)
            .collect();
        to.sort_unstable();
        to.dedup();
        to.retain(|&k| k as usize != me);
        (c.id, to)
    };
    trace.comms.iter().map(of).collect()
}

/// Adds to what this process's ranks recorded of each collective instance what the other
/// processes' recorded ([`super::Recorded`]: the last measured call, the schedule's bytes, root
/// and routine), and sets the replay's from the whole: each process sends its own to the
/// others that own a member of the instance's communicator. Every process calls it alike,
/// before the replay.
pub(super) fn share_recorded(sh: &mut Shared<'_>) -> Result<(), Error> {
    let part = sh.part.as_mut().expect("a split replay");
    let (n, me) = (part.ex.processes(), part.ex.process());
    let comms = comm_owners(sh.trace, n, me);
    let others: Vec<u32> = (0..n as u32).filter(|&k| k as usize != me).collect();
    let mut rec = std::mem::take(&mut part.recorded);
    let modeled = !rec.code.is_empty();
    let mut out: Vec<Vec<u64>> = vec![Vec::new(); n];
    for (x, &last) in rec.last.iter().enumerate().filter(|(_, l)| **l != 0) {
        let comm = sh.g.instances[x].comm;
        for &k in comms.get(&comm).unwrap_or(&others) {
            let o = &mut out[k as usize];
            o.extend([x as u64, last]);
            if modeled {
                o.extend([rec.sent[x], rec.received[x], rec.root[x], rec.code[x]]);
            }
        }
    }
    let got = part.ex.all_to_all(out)?;
    let width = if modeled { 6 } else { 2 };
    for w in got.iter().flat_map(|v| v.chunks_exact(width)) {
        let x = w[0] as usize;
        let Some(last) = rec.last.get_mut(x) else {
            return Err(Error::Io(format!(
                "a record of collective instance {x}, not in the graph"
            )));
        };
        *last = (*last).max(w[1]);
        if modeled {
            for (a, &v) in [
                &mut rec.sent,
                &mut rec.received,
                &mut rec.root,
                &mut rec.code,
            ]
            .into_iter()
            .zip(&w[2..])
            {
                a[x] = a[x].max(v);
            }
        }
    }
    // The participants flagged `clean`, `bounced` and `reduced` (the model's §13), each
    // process's own to the others that own a member, as `(instance, place)` pairs.
    let owners = (&comms, &others[..]);
    sh.clean = share_flagged(part.ex, sh.g, owners, &rec.clean, "clean")?;
    sh.bounced = share_flagged(part.ex, sh.g, owners, &rec.bounced, "bounced")?;
    sh.into_result = share_flagged(part.ex, sh.g, owners, &rec.into_result, "reduced")?;
    (sh.measured_last_arrival, sh.shapes) = rec.finish(sh.g);
    Ok(())
}

/// This process's participants flagged `what` (`clean`, `bounced`, `reduced`: the model's
/// §13), `own`, sent to the other processes that own a member of each instance's communicator
/// (`owners`: by communicator, else every other process), and the whole returned, by instance.
fn share_flagged(
    ex: &dyn Exchange,
    g: &HbGraph,
    (comms, others): (&HashMap<u32, Vec<u32>>, &[u32]),
    own: &HashMap<u32, Box<[u32]>>,
    what: &str,
) -> Result<HashMap<u32, Box<[u32]>>, Error> {
    let mut out: Vec<Vec<u64>> = vec![Vec::new(); ex.processes()];
    for (&x, places) in own {
        let comm = g.instances[x as usize].comm;
        for &k in comms.get(&comm).map_or(others, |v| &v[..]) {
            (out[k as usize]).extend(places.iter().flat_map(|&p| [x as u64, p as u64]));
        }
    }
    let got = ex.all_to_all(out)?;
    let mut pairs: Vec<(u32, u32)> = (own.iter())
        .flat_map(|(&x, places)| places.iter().map(move |&p| (x, p)))
        .collect();
    for w in got.iter().flat_map(|v| v.chunks_exact(2)) {
        match (u32::try_from(w[0]), u32::try_from(w[1])) {
            (Ok(x), Ok(p)) if g.instances.get(x as usize).is_some_and(|i| p < i.size) => {
                pairs.push((x, p))
            }
            _ => {
                return Err(Error::Io(format!(
                    "a {what} participant {} of collective instance {}, not in the graph",
                    w[1], w[0]
                )));
            }
        }
    }
    Ok(super::Recorded::clean_by_instance(pairs))
}

/// Replays this process's ranks in rounds with the others until no rank anywhere can go on
/// (the module's doc). `progress` is told the events this process replayed so far.
pub(super) fn run(
    sh: &Shared<'_>,
    states: &[Mutex<RankState>],
    progress: &(dyn Fn(u64) + Sync),
) -> Result<(SplitStats, Waiting), Error> {
    let part = sh.part.as_ref().expect("a split replay");
    let (ex, trace) = (part.ex, sh.trace);
    let (me, n) = (ex.process(), ex.processes());
    let routes = Routes::new(trace, sh, part);
    let own = part.ranks.clone();
    let mut stats = SplitStats {
        process: me,
        processes: n,
        ranks: own.len(),
        ..SplitStats::default()
    };
    // Per owned rank: its events before this one have had their call times sent.
    let mut sent: Vec<u32> = vec![0; own.len()];
    let mut ranks: Vec<u32> = own.clone().map(|r| r as u32).collect();
    let mut done = 0u64;
    loop {
        stats.rounds += 1;
        let before = done;
        let waiting = schedule::run(sh, states, std::mem::take(&mut ranks), &|e| {
            progress(before + e)
        });
        sh.completed.lock().expect("completed").clear();
        let clock = Instant::now();
        let (mut out, replayed) = outgoing(sh, states, &routes, &mut sent, &mut ranks);
        done = replayed;
        let sending: u64 = out.iter().map(|v| v.len() as u64).sum();
        count(&mut stats, &out);
        // Each vector ends with what this process sent in all: every process learns whether
        // anything moved.
        for v in &mut out {
            v.push(sending);
        }
        stats.recording += clock.elapsed();
        let clock = Instant::now();
        let got = ex.all_to_all(out)?;
        stats.exchanging += clock.elapsed();
        let moved: u64 = got.iter().map(|v| v.last().copied().unwrap_or(0)).sum();
        if moved == 0 {
            // The last round's waits are where the ranks stopped.
            return Ok((stats, waiting));
        }
        let clock = Instant::now();
        incoming(sh, got);
        stats.recording += clock.elapsed();
    }
}

/// What this process sends the others after a round (a vector a process): the call times its
/// ranks' events newly know that another process reads (from `sent`, each owned rank's first
/// event not sent yet, on), and the arrivals at and starts of collective instances published
/// since. Also how many events its ranks have replayed, and (into `ranks`) those not ended.
fn outgoing(
    sh: &Shared<'_>,
    states: &[Mutex<RankState>],
    routes: &Routes,
    sent: &mut [u32],
    ranks: &mut Vec<u32>,
) -> (Vec<Vec<u64>>, u64) {
    let part = sh.part.as_ref().expect("a split replay");
    let (trace, n, own) = (sh.trace, part.ex.processes(), part.ranks.clone());
    // The call times newly known, made by the threads in parallel, a piece of owned ranks
    // per task (a round's records are up to 2 words an event).
    let piece = own.len().div_ceil(4 * rayon::current_num_threads()).max(1);
    let pieces: Vec<Piece> = sent
        .par_chunks_mut(piece)
        .enumerate()
        .map(|(c, sent)| {
            let first = own.start + c * piece;
            let mut p = Piece {
                out: vec![Vec::new(); n],
                done: 0,
                going: Vec::new(),
            };
            for (j, sent) in sent.iter_mut().enumerate() {
                let r = first + j;
                let st = states[r].lock().expect("rank state");
                let len = trace.rank(r).len() as u32;
                p.done += (st.pos + 1).min(len) as u64;
                let upto = (st.pos + st.published as u32).min(len);
                let reads = &routes.reads[r - own.start];
                let from = reads.partition_point(|&(i, _)| i < *sent);
                for &(i, to) in reads[from..].iter().take_while(|&&(i, _)| i < upto) {
                    let e = sh.offsets[r] + i as usize;
                    let bits = sh.calls[e].load(Ordering::Acquire);
                    if bits != super::UNKNOWN {
                        let global = (sh.g.ghosts.base + e) as u64;
                        p.out[to as usize].extend([CALL | global, bits]);
                    }
                }
                *sent = upto;
                if !super::ended(trace, r, st.pos) {
                    p.going.push(r as u32);
                }
            }
            p
        })
        .collect();
    // Joined in rank order, each piece's vectors freed as they are copied.
    let mut out: Vec<Vec<u64>> = (0..n)
        .map(|k| Vec::with_capacity(pieces.iter().map(|p| p.out[k].len()).sum::<usize>() + 1))
        .collect();
    let mut done = 0;
    for p in pieces {
        done += p.done;
        ranks.extend(p.going);
        for (o, v) in out.iter_mut().zip(p.out) {
            o.extend(v);
        }
    }
    for (x, m, latest) in std::mem::take(&mut *part.arrivals.lock().expect("arrivals")) {
        for &to in routes.of_instance(sh, x) {
            out[to as usize].extend([ARRIVAL | x as u64 | (m as u64) << 31, latest]);
        }
    }
    for (x, r, t) in std::mem::take(&mut *part.starts.lock().expect("starts")) {
        for &to in routes.of_instance(sh, x) {
            out[to as usize].extend([START | x as u64 | (r as u64) << 31, t.to_bits()]);
        }
    }
    (out, done)
}

/// Takes in what the other processes sent after a round (`got`, the count of all they sent
/// last in each vector): call times of ghosts, arrivals at and starts of collective instances.
fn incoming(sh: &Shared<'_>, got: Vec<Vec<u64>>) {
    // Call times written in parallel (each to its own slot); the few collective records
    // gathered.
    let (mut arrivals, mut starts) = got
        .par_iter()
        .flat_map(|v| v[..v.len() - 1].par_chunks(2 * 4096))
        .map(|words| {
            let (mut arrivals, mut starts) = (Vec::new(), Vec::new());
            for w in words.chunks_exact(2) {
                let (x, other) = ((w[0] & LOW) as u32, ((w[0] & !KIND) >> 31) as u32);
                match w[0] & KIND {
                    // Read here where it is a ghost.
                    CALL => {
                        if let Some(e) = sh.g.ghosts.local((w[0] & !KIND) as usize) {
                            sh.calls[e].store(w[1], Ordering::Release);
                        }
                    }
                    ARRIVAL => arrivals.push((x, other, w[1])),
                    _ => starts.push((x, other, f64::from_bits(w[1]))),
                }
            }
            (arrivals, starts)
        })
        .reduce(
            || (Vec::new(), Vec::new()),
            |(mut a, mut s), (b, t)| {
                a.extend(b);
                s.extend(t);
                (a, s)
            },
        );
    drop(got);
    // The call times first: an instance is costed once its arrivals are all counted.
    starts.sort_unstable_by_key(|s| s.0);
    sh.write_starts(&starts);
    for (x, m, latest) in arrivals.drain(..) {
        sh.arrive(x, m, latest);
    }
    sh.completed.lock().expect("completed").clear();
}

/// What one task found of a piece of owned ranks at the end of a round: its records by
/// destination process, its events replayed, and its ranks that have not ended.
struct Piece {
    out: Vec<Vec<u64>>,
    done: u64,
    going: Vec<u32>,
}

/// Adds to `stats` the vectors of `out` about to be sent.
fn count(stats: &mut SplitStats, out: &[Vec<u64>]) {
    for v in out.iter().filter(|v| !v.is_empty()) {
        stats.bytes_sent += 8 * v.len() as u64;
        stats.messages_sent += 1;
    }
}

/// What process 0 learns of each process at the end: its ranks' breakdowns, its ranks that
/// could not end, and the instances it could not model.
#[derive(Default)]
pub(super) struct Gathered {
    pub(super) ranks: Vec<RankBreakdown>,
    pub(super) stuck: Vec<usize>,
    pub(super) unmodeled: Vec<(u32, String)>,
}

/// Sends `own` (this process's ranks' breakdowns, stuck ranks and unmodeled instances) to
/// process 0, which gets every process's, in rank order; the others get their own back. Every
/// process learns how many ranks could not end, anywhere.
pub(super) fn gather(
    ex: &dyn Exchange,
    own: Gathered,
    stats: &mut SplitStats,
) -> Result<(Gathered, usize), Error> {
    let n = ex.processes();
    let mut words = Vec::new();
    words.push(own.ranks.len() as u64);
    for b in &own.ranks {
        encode_breakdown(b, &mut words);
    }
    words.push(own.stuck.len() as u64);
    words.extend(own.stuck.iter().map(|&r| r as u64));
    words.push(own.unmodeled.len() as u64);
    for (x, why) in &own.unmodeled {
        words.push(*x as u64);
        encode_str(why, &mut words);
    }
    let mut out: Vec<Vec<u64>> = vec![vec![own.stuck.len() as u64]; n];
    out[0] = words;
    count(stats, &out[1..]);
    if ex.process() != 0 {
        count(stats, &out[..1]);
    }
    let got = ex.all_to_all(out)?;
    if ex.process() != 0 {
        let stuck = got.iter().map(|v| v[0] as usize).sum();
        return Ok((own, stuck));
    }
    let mut all = Gathered::default();
    for v in &got {
        let mut w = v.iter().copied();
        let bad = || Error::Io("a split replay's gather was cut short".into());
        let mut next = || w.next().ok_or_else(bad);
        for _ in 0..next()? {
            all.ranks.push(decode_breakdown(&mut next)?);
        }
        for _ in 0..next()? {
            all.stuck.push(next()? as usize);
        }
        for _ in 0..next()? {
            let x = next()? as u32;
            all.unmodeled.push((x, decode_str(&mut next)?));
        }
    }
    // An instance another process costed too is listed once.
    all.unmodeled.sort_by_key(|u| u.0);
    all.unmodeled.dedup_by_key(|u| u.0);
    let stuck = all.stuck.len();
    Ok((all, stuck))
}

fn encode_breakdown(b: &RankBreakdown, w: &mut Vec<u64>) {
    w.push(b.rank as u64);
    for x in [
        b.end_ns,
        b.computation_ns,
        b.communication_ns,
        b.sender_sync_ns,
        b.receiver_sync_ns,
        b.measured_end_ns,
        b.collective_ns,
        b.tracer_ns,
        b.held_ns,
    ] {
        w.push(x.to_bits());
    }
    w.push(b.held_sends);
    w.extend([b.aliased, b.aliased_bytes]);
    w.push(b.events);
    w.push(b.collective_routine.map_or(u64::MAX, |k| k as u64));
    w.push(b.collective_kinds.len() as u64);
    for &(k, t) in &b.collective_kinds {
        w.extend([k as u64, t.to_bits()]);
    }
}

fn decode_breakdown(next: &mut impl FnMut() -> Result<u64, Error>) -> Result<RankBreakdown, Error> {
    let rank = next()? as u32;
    let mut f = [0.0; 9];
    for x in &mut f {
        *x = f64::from_bits(next()?);
    }
    let held_sends = next()?;
    let (aliased, aliased_bytes) = (next()?, next()?);
    let events = next()?;
    let routine = |c: u64| {
        Routine::from_code(c as u8).ok_or_else(|| Error::Io(format!("no routine of code {c}")))
    };
    let collective_routine = match next()? {
        u64::MAX => None,
        c => Some(routine(c)?),
    };
    let mut collective_kinds = Vec::new();
    for _ in 0..next()? {
        let k = routine(next()?)?;
        collective_kinds.push((k, f64::from_bits(next()?)));
    }
    let [
        end_ns,
        computation_ns,
        communication_ns,
        sender_sync_ns,
        receiver_sync_ns,
        measured_end_ns,
        collective_ns,
        tracer_ns,
        held_ns,
    ] = f;
    Ok(RankBreakdown {
        rank,
        end_ns,
        computation_ns,
        communication_ns,
        sender_sync_ns,
        receiver_sync_ns,
        measured_end_ns,
        events,
        collective_ns,
        collective_routine,
        collective_kinds,
        tracer_ns,
        held_sends,
        held_ns,
        aliased,
        aliased_bytes,
    })
}

/// A string as its length and its bytes, eight a word.
fn encode_str(s: &str, w: &mut Vec<u64>) {
    w.push(s.len() as u64);
    for c in s.as_bytes().chunks(8) {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        w.push(u64::from_le_bytes(b));
    }
}

fn decode_str(next: &mut impl FnMut() -> Result<u64, Error>) -> Result<String, Error> {
    let len = next()? as usize;
    let mut bytes = Vec::with_capacity(len);
    for _ in 0..len.div_ceil(8) {
        bytes.extend_from_slice(&next()?.to_le_bytes());
    }
    bytes.truncate(len);
    String::from_utf8(bytes).map_err(|_| Error::Io("a gathered message is not UTF-8".into()))
}

/// Whether every process got this far without an error: each tells the others its own, if
/// any. A process that fails alone (a trace or parameter file its node lacks, its node short
/// of memory) would otherwise leave the others waiting in their next exchange for ever. Every
/// process calls it at the same points, failed or not. Gives the first process that failed,
/// with its error.
pub fn agree(ex: &dyn Exchange, own: Option<&str>) -> Result<Option<(usize, String)>, Error> {
    let mut words = vec![own.is_some() as u64];
    if let Some(msg) = own {
        encode_str(msg, &mut words);
    }
    let got = ex.all_to_all(vec![words; ex.processes()])?;
    for (k, v) in got.iter().enumerate() {
        if v.first() == Some(&1) {
            let mut w = v[1..].iter().copied();
            let bad = || Error::Io("a split replay's agreement was cut short".into());
            return Ok(Some((k, decode_str(&mut || w.next().ok_or_else(bad))?)));
        }
    }
    Ok(None)
}

/// `r`, where every process got it; else an error on every process: its own, or the first
/// failed process's, named ([`agree`]).
pub fn agreed<T>(r: Result<T, Error>, ex: &dyn Exchange) -> Result<T, Error> {
    let own = r.as_ref().err().map(ToString::to_string);
    match agree(ex, own.as_deref())? {
        Some((k, msg)) if r.is_ok() => Err(Error::Io(format!(
            "process {k} of {}: {msg}",
            ex.processes()
        ))),
        _ => r,
    }
}

/// Every process's [`Waits`] of its own ranks, joined, on every process: each names the
/// deadlock as one process replaying alone does.
pub(super) fn gather_waits(
    ex: &dyn Exchange,
    own: Waits,
    stats: &mut SplitStats,
) -> Result<Waits, Error> {
    let mut words = Vec::new();
    for list in [&own.on_rank, &own.on_instance, &own.inside] {
        words.push(list.len() as u64);
        words.extend(list.iter().map(|&(a, b)| a as u64 | (b as u64) << 32));
    }
    words.push(own.stopped.len() as u64);
    for (r, said) in &own.stopped {
        words.push(*r as u64);
        encode_str(said, &mut words);
    }
    words.push(own.rendezvous.len() as u64);
    for &(r, k) in &own.rendezvous {
        words.extend([r as u64, k]);
    }
    let out = vec![words; ex.processes()];
    count(stats, &out);
    let mut all = Waits::default();
    for v in ex.all_to_all(out)? {
        let mut w = v.iter().copied();
        let bad = || Error::Io("a split replay's deadlock report was cut short".into());
        let mut next = || w.next().ok_or_else(bad);
        for list in [&mut all.on_rank, &mut all.on_instance, &mut all.inside] {
            for _ in 0..next()? {
                let x = next()?;
                list.push((x as u32, (x >> 32) as u32));
            }
        }
        for _ in 0..next()? {
            let r = next()? as u32;
            all.stopped.push((r, decode_str(&mut next)?));
        }
        for _ in 0..next()? {
            all.rendezvous.push((next()? as u32, next()?));
        }
    }
    Ok(all)
}

/// Processes as threads of one program, exchanging through memory: the split replay's logic
/// tested without an MPI library. A process that waits at an exchange for 20 s while
/// another has stopped (panicked) panics too, where a real MPI job would hang.
pub struct Threads {
    k: usize,
    n: usize,
    shared: Arc<ThreadsShared>,
}

struct ThreadsShared {
    slots: Mutex<Slots>,
    met: Condvar,
}

/// What the processes of [`Threads`] share.
struct Slots {
    /// `sent[from][to]`: what `from` sent `to` in the exchange under way.
    sent: Vec<Vec<Vec<u64>>>,
    /// How many processes reached the meeting under way.
    here: usize,
    /// How many meetings were held.
    held: u64,
}

impl Threads {
    /// The `n` processes of a group, one to hand to each thread.
    pub fn group(n: usize) -> Vec<Threads> {
        let shared = Arc::new(ThreadsShared {
            slots: Mutex::new(Slots {
                sent: vec![Vec::new(); n],
                here: 0,
                held: 0,
            }),
            met: Condvar::new(),
        });
        (0..n)
            .map(|k| Threads {
                k,
                n,
                shared: Arc::clone(&shared),
            })
            .collect()
    }

    /// Waits until every process has come here as often as this one.
    fn meet(&self, mut slots: std::sync::MutexGuard<'_, Slots>) {
        let held = slots.held;
        slots.here += 1;
        if slots.here == self.n {
            (slots.here, slots.held) = (0, held + 1);
            self.shared.met.notify_all();
            return;
        }
        let wait = self
            .shared
            .met
            .wait_timeout_while(slots, Duration::from_secs(20), |s| s.held == held);
        assert!(!wait.expect("slots").1.timed_out(), "a process stopped");
    }
}

impl Exchange for Threads {
    fn process(&self) -> usize {
        self.k
    }

    fn processes(&self) -> usize {
        self.n
    }

    fn all_to_all(&self, out: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, Error> {
        assert_eq!(out.len(), self.n, "a vector for each process");
        let mut slots = self.shared.slots.lock().expect("slots");
        slots.sent[self.k] = out;
        self.meet(slots);
        let mut slots = self.shared.slots.lock().expect("slots");
        let got = (slots.sent.iter_mut())
            .map(|from| std::mem::take(&mut from[self.k]))
            .collect();
        // Nobody writes the next exchange's vectors before all have taken this one's.
        self.meet(slots);
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rank's breakdown crosses between processes whole: every field, the held sends' count
    /// and time and several collective routines' times included.
    #[test]
    fn a_breakdown_is_decoded_as_it_was_encoded() {
        let b = RankBreakdown {
            rank: 7,
            end_ns: 1.5e6,
            computation_ns: 1e6,
            communication_ns: 3e5,
            sender_sync_ns: 1e5,
            receiver_sync_ns: 1e5,
            measured_end_ns: 1.4e6,
            events: 12,
            collective_ns: 2e5,
            collective_routine: None,
            collective_kinds: vec![(Routine::Bcast, 5e4), (Routine::Allreduce, 1.5e5)],
            tracer_ns: -3.0,
            held_sends: 321,
            held_ns: 6.44e6,
            aliased: 7,
            aliased_bytes: 114_688,
        };
        let mut words = Vec::new();
        encode_breakdown(&b, &mut words);
        let mut it = words.into_iter();
        let mut next = || it.next().ok_or_else(|| Error::Io("short".into()));
        assert_eq!(decode_breakdown(&mut next).unwrap(), b);
        assert!(next().is_err(), "every word read");
    }
}
