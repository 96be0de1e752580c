//! Messages matched across the processes of a split replay (src/replay/SPLIT.md, "What each
//! process holds"): each process holds its own ranks' events alone
//! ([`crate::trace::load_block`]), and learns every rank's event count from the others
//! ([`census`]). It buckets its ranks' sends by destination as one process does
//! (`bucket_sends`), keeps those to its own destinations and sends the others to the process
//! that owns their destination, pairs its own destinations' receives with all their sends
//! (`pair`, unchanged: a channel's sends all come from one rank, its receives all go to one),
//! and tells each remote send's owner the receive it matched. The links are the ones
//! [`super::build`] makes of the whole trace, as global event indices (`global`: every rank's
//! first event in the whole trace). Collectives ([`match_collectives`]): every rank's tally of
//! calls per communicator goes to every process, which numbers the instances as one process
//! does; each links its own ranks' calls, and the checks read the calls other processes hold
//! from what they sent. [`divide`] does all of it and renumbers the links to the process's own
//! events and its ghosts ([`Ghosts`]), what the replay reads.

use super::{
    Buckets, CallOf, HbGraph, NONE, RanksIn, Side, Tally, Unmatched, bucket_sends, call_in,
    link_uniform, pair, receives, same_call, tally, tie_instances, uniform, uniform_mismatch,
    unmatched_warning,
};
use crate::error::{Error, TraceError};
use crate::memory::Pages;
use crate::trace::{Routine, Trace};
use crate::trace::{owned, owner_of};
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// The processes a replay is split over, as one of them sees them.
pub trait Exchange: Sync {
    /// This process's place, from 0.
    fn process(&self) -> usize;
    /// How many processes there are.
    fn processes(&self) -> usize;
    /// Sends `out[k]` to process `k` (every process calls it alike, `out` with one vector a
    /// process) and gives what each process sent this one, by process.
    fn all_to_all(&self, out: Vec<Vec<u64>>) -> Result<Vec<Vec<u64>>, Error>;
}

/// A routed send: its destination and side, and its routine (for the warning of what matched
/// nothing), in three words.
fn put_send(out: &mut Vec<u64>, d: usize, s: &Side, routine: Routine) {
    out.extend([
        d as u64 | (s.comm as u64) << 32,
        s.src as u64 | (s.tag as u32 as u64) << 32,
        s.at as u64 | (routine as u8 as u64) << 32,
    ]);
}

fn get_send(w: &[u64]) -> Result<(usize, Side, Routine), Error> {
    let routine = Routine::from_code((w[2] >> 32) as u8)
        .ok_or_else(|| Error::Io(format!("a routed send names no routine ({})", w[2] >> 32)))?;
    let side = Side {
        comm: (w[0] >> 32) as u32,
        src: w[1] as u32,
        tag: (w[1] >> 32) as u32 as i32,
        at: w[2] as u32,
    };
    Ok((w[0] as u32 as usize, side, routine))
}

/// The messages of `trace` (this process's ranks' events, as [`Exchange::process`] owns them)
/// matched with every other process's: the graph of its own ranks, its links global event
/// indices of the whole trace, whose rank `r` starts at `global[r]`. Every process calls it
/// alike; each gets the warning of what matched nothing anywhere.
pub fn match_messages(
    trace: &Trace,
    file: &str,
    ex: &dyn Exchange,
    global: &[usize],
) -> Result<HbGraph, Error> {
    let (me, n, p) = (ex.process(), ex.processes(), trace.nranks());
    let own = owned(me, n, p);
    let start = trace.events.offsets().to_vec();
    let (buckets, bucketed, seen) = bucket_sends(trace).map_err(|e| e.in_file(file))?;
    let routine_of = |s: &Side| trace.rank(s.src as usize).routine(s.event() as usize);

    let (mut mine, mut routines) = route_sends(trace, ex, &buckets, bucketed)?;
    let link: Vec<AtomicU32> = (0..trace.events.len()).map(|_| AtomicU32::new(0)).collect();
    let set = |r: usize, i: u32, to: u32| link[start[r] + i as usize].store(!to, Ordering::Relaxed);
    // Links of remote sends, by the process that owns the send: `(rank, event, receive)`.
    let remote: Mutex<Vec<Vec<(u32, u32, u32)>>> = Mutex::new(vec![Vec::new(); n]);
    let owner = owner_of(n, p);
    let halves = Mutex::new(Vec::<(usize, Vec<(u32, u32)>)>::new());
    let unmatched: Mutex<Vec<(Unmatched, Routine)>> = Mutex::new(Vec::new());
    mine.par_iter_mut()
        .zip(routines.par_iter_mut())
        .enumerate()
        .try_for_each(|(j, (sends, routines))| -> Result<(), TraceError> {
            let d = own.start + j;
            // A send's link is set where its rank is held, else sent back to its owner.
            let later = RefCell::new(Vec::new());
            let set_any = |r: usize, i: u32, to: u32| match own.contains(&r) {
                true => set(r, i, to),
                false => later.borrow_mut().push((r as u32, i, to)),
            };
            Side::sort(sends);
            let mut recvs = Vec::new();
            receives(trace, file, d, seen, &mut recvs)?;
            Side::sort(&mut recvs);
            let (halves_d, lost) = pair(trace, d, global, seen.probes, sends, &recvs, &set_any);
            let later = later.into_inner();
            if !later.is_empty() {
                let mut remote = remote.lock().expect("remote");
                for (r, i, to) in later {
                    remote[owner(r as usize)].push((r, i, to));
                }
            }
            if !halves_d.is_empty() {
                halves.lock().expect("halves").push((d, halves_d));
            }
            if !lost.is_empty() {
                routines.sort_unstable_by_key(|&(s, _)| s);
                let routine = |&(send, _, x): &Unmatched| match send {
                    true if own.contains(&(x.src as usize)) => routine_of(&x),
                    true => {
                        let k = routines.binary_search_by_key(&x, |&(s, _)| s);
                        k.map_or(Routine::Send, |k| routines[k].1)
                    }
                    false => trace.rank(d).routine(x.event() as usize),
                };
                let lost = lost.into_iter().map(|u| (u, routine(&u)));
                unmatched.lock().expect("unmatched").extend(lost);
            }
            Ok(())
        })?;

    let remote = remote.into_inner().expect("remote");
    let unmatched = unmatched.into_inner().expect("unmatched");
    let everywhere = return_links(ex, &own, remote, &unmatched, &set)?;
    let mut g = HbGraph {
        link: link.into_iter().map(AtomicU32::into_inner).collect(),
        start,
        ..HbGraph::default()
    };
    let halves = halves.into_inner().expect("halves");
    if !halves.is_empty() {
        g.link2 = vec![Vec::new(); p];
    }
    for (d, h) in halves {
        g.link2[d] = h;
    }
    g.warnings.extend(unmatched_warning(everywhere));
    Ok(g)
}

/// Every send to a destination another process owns, routed to that process: this process's
/// sends and the others' to its own destinations (`mine`, by destination), and the others'
/// with their routines (for what matches nothing: this process's own sends' are in its trace).
/// `buckets` and `bucketed`: this process's sends by destination ([`bucket_sends`]).
#[allow(clippy::type_complexity)]
fn route_sends(
    trace: &Trace,
    ex: &dyn Exchange,
    buckets: &[usize],
    bucketed: Pages<Side>,
) -> Result<(Vec<Vec<Side>>, Vec<Vec<(Side, Routine)>>), Error> {
    let (me, n, p) = (ex.process(), ex.processes(), trace.nranks());
    let own = owned(me, n, p);
    let routine_of = |s: &Side| trace.rank(s.src as usize).routine(s.event() as usize);
    let mut out: Vec<Vec<u64>> = vec![Vec::new(); n];
    let mut mine: Vec<Vec<Side>> = vec![Vec::new(); own.len()];
    for (k, to) in out.iter_mut().enumerate() {
        for d in owned(k, n, p) {
            let sends = &bucketed[buckets[d]..buckets[d + 1]];
            if k == me {
                mine[d - own.start].extend_from_slice(sends);
                continue;
            }
            for s in sends {
                put_send(to, d, s, routine_of(s));
            }
        }
    }
    drop(bucketed);
    let got = ex.all_to_all(out)?;
    let mut routines: Vec<Vec<(Side, Routine)>> = vec![Vec::new(); own.len()];
    for v in &got {
        for w in v.chunks_exact(3) {
            let (d, s, routine) = get_send(w)?;
            let Some(slot) = d.checked_sub(own.start).filter(|&j| j < own.len()) else {
                return Err(Error::Io(format!(
                    "a routed send to rank {d}, not held here"
                )));
            };
            mine[slot].push(s);
            routines[slot].push((s, routine));
        }
    }
    Ok((mine, routines))
}

/// The receives this process matched to other processes' sends (`remote`: by the send's
/// owner, `(rank, event, receive)`) sent to those owners, which `set` them on their own sends;
/// and what matched nothing here (`unmatched`) sent to all, so that every process gets what
/// matched nothing anywhere.
fn return_links(
    ex: &dyn Exchange,
    own: &std::ops::Range<usize>,
    remote: Vec<Vec<(u32, u32, u32)>>,
    unmatched: &[(Unmatched, Routine)],
    set: &dyn Fn(usize, u32, u32),
) -> Result<Vec<(Unmatched, Routine)>, Error> {
    let mut out: Vec<Vec<u64>> = remote
        .into_iter()
        .map(|v| {
            let mut w = Vec::with_capacity(2 * v.len() + 1);
            w.push(v.len() as u64);
            for (r, i, to) in v {
                w.extend([r as u64 | (i as u64) << 32, to as u64]);
            }
            w
        })
        .collect();
    for w in &mut out {
        for &((send, d, x), routine) in unmatched {
            w.push(send as u64 | (d as u64) << 1);
            put_send(w, d, &x, routine);
        }
    }
    let got = ex.all_to_all(out)?;
    let mut everywhere: Vec<(Unmatched, Routine)> = Vec::new();
    for v in &got {
        let links = v.first().copied().unwrap_or(0) as usize;
        let bad = || Error::Io("a split matching's exchange was cut short".into());
        let (head, rest) = v[1..].split_at_checked(2 * links).ok_or_else(bad)?;
        for w in head.chunks_exact(2) {
            let (r, i) = (w[0] as u32 as usize, (w[0] >> 32) as u32);
            if !own.contains(&r) {
                return Err(Error::Io(format!("a send of rank {r}, not held here")));
            }
            set(r, i, w[1] as u32);
        }
        for w in rest.chunks_exact(4) {
            let (_, side, routine) = get_send(&w[1..])?;
            everywhere.push((((w[0] & 1) != 0, (w[0] >> 1) as usize, side), routine));
        }
    }
    Ok(everywhere)
}

/// A collective call as sent between processes: `(rank, event)`, and its routine and root.
type SentCall = ((u32, u32), (Routine, i32));

/// A [`SentCall`] in two words.
fn put_call(out: &mut Vec<u64>, r: u32, i: u32, (routine, root): (Routine, i32)) {
    out.extend([
        r as u64 | (i as u64) << 32,
        routine as u8 as u64 | (root as u32 as u64) << 32,
    ]);
}

fn get_call(w: &[u64]) -> Result<SentCall, Error> {
    let code = w[1] as u8;
    let routine = Routine::from_code(code)
        .ok_or_else(|| Error::Io(format!("a sent collective call names no routine ({code})")))?;
    Ok((
        (w[0] as u32, (w[0] >> 32) as u32),
        (routine, (w[1] >> 32) as u32 as i32),
    ))
}

/// Words of `v` from process `k`, or the error of an exchange cut short.
fn words(v: &[u64]) -> impl FnMut() -> Result<u64, Error> + '_ {
    let mut w = v.iter().copied();
    move || {
        w.next()
            .ok_or_else(|| Error::Io("a split matching's exchange was cut short".into()))
    }
}

/// The collective calls of `trace` (this process's ranks) tied into instances with every other
/// process's, as [`super::build`] ties the whole trace's: `g` (of [`match_messages`]) gets its
/// ranks' calls' links, every instance, whether they are implied, and the warning of
/// unfinished ones; a call that differs from its instance's first is the same error on every
/// process. Every process calls it alike.
pub fn match_collectives(
    trace: &Trace,
    file: &str,
    ex: &dyn Exchange,
    g: &mut HbGraph,
) -> Result<(), Error> {
    let (me, n, p) = (ex.process(), ex.processes(), trace.nranks());
    let own = owned(me, n, p);
    let per_rank = exchange_tallies(trace, ex, &own)?;
    let Some(b) = Buckets::of(&per_rank) else {
        return Ok(());
    };
    if let Some(ranks_in) = uniform(trace, &per_rank, &b.comms, &b.most) {
        drop(per_rank);
        return match_uniform(trace, file, ex, g, &own, &b, &ranks_in);
    }
    drop(per_rank);
    match_general(trace, file, ex, g, &own, &b)
}

/// Every rank's [`Tally`] of collective calls per communicator, from the process that holds
/// it to every process, in rank order: every process then buckets the instances alike.
fn exchange_tallies(
    trace: &Trace,
    ex: &dyn Exchange,
    own: &std::ops::Range<usize>,
) -> Result<Vec<Tally>, Error> {
    let (n, p) = (ex.processes(), trace.nranks());
    let mut out = Vec::new();
    for r in own.clone() {
        let t = tally(trace, r);
        let pairs: Vec<(u32, u32)> = t.pairs().collect();
        out.push(pairs.len() as u64);
        out.extend(pairs.iter().map(|&(c, k)| c as u64 | (k as u64) << 32));
    }
    let got = ex.all_to_all(vec![out; n])?;
    let mut per_rank: Vec<Tally> = Vec::with_capacity(p);
    for (k, v) in got.iter().enumerate() {
        let mut next = words(v);
        for _ in owned(k, n, p) {
            let mut t = Tally::default();
            for _ in 0..next()? {
                let w = next()?;
                t.add(w as u32, (w >> 32) as u32);
            }
            per_rank.push(t);
        }
    }
    Ok(per_rank)
}

/// Every member of each communicator calls a collective on it as often ([`uniform`]): the
/// instances are linked from the tallies alone, then checked by each instance's first call,
/// exchanged, the first mismatch over all processes being the error.
fn match_uniform(
    trace: &Trace,
    file: &str,
    ex: &dyn Exchange,
    g: &mut HbGraph,
    own: &std::ops::Range<usize>,
    b: &Buckets,
    ranks_in: &RanksIn,
) -> Result<(), Error> {
    let n = ex.processes();
    let call_here = call_in(trace);
    let firsts = link_uniform(trace, g, &b.comms, &b.first, &b.size, ranks_in)?;
    // Each instance's first call, from the process that holds it, to every process.
    let mut out = Vec::new();
    for (x, &(r, i)) in firsts.iter().enumerate().filter(|(_, f)| f.0 != u32::MAX) {
        out.push(x as u64);
        put_call(&mut out, r, i, call_here(r, i));
    }
    let got = ex.all_to_all(vec![out; n])?;
    let mut first_of = vec![(u32::MAX, u32::MAX); firsts.len()];
    let mut held: HashMap<(u32, u32), (Routine, i32)> = HashMap::new();
    for v in &got {
        for w in v.chunks_exact(3) {
            let (at, c) = get_call(&w[1..])?;
            first_of[w[0] as usize] = at;
            held.insert(at, c);
        }
    }
    drop(got);
    let call = |r: u32, i: u32| match own.contains(&(r as usize)) {
        true => call_here(r, i),
        false => held[&(r, i)],
    };
    let mismatch = uniform_mismatch(trace, &b.comms, &b.first, ranks_in, &|x| first_of[x], &call);
    // Each process's first mismatch, to every process: the first of all is the error.
    let mut out = Vec::new();
    if let Some((x, at, r, i)) = mismatch {
        out.extend([x as u64, at as u64]);
        put_call(&mut out, r, i, call_here(r, i));
    }
    let got = ex.all_to_all(vec![out; n])?;
    let mut all = Vec::new();
    for w in got.iter().filter(|v| v.len() == 4) {
        let ((r, i), c) = get_call(&w[2..])?;
        all.push(((w[0] as usize, w[1] as u32, r, i), c));
    }
    let Some(((x, _, r, i), c)) = all.into_iter().min_by_key(|m| m.0) else {
        return Ok(());
    };
    held.insert((r, i), c);
    let call = |r: u32, i: u32| held[&(r, i)];
    let k = b.first.partition_point(|&f| f <= x) - 1;
    let group = [first_of[x], (r, i)].into_iter();
    Err(same_call(&call, file, b.comms[k], x - b.first[k], group)
        .expect_err("a mismatch")
        .into())
}

/// Not uniform (an unfinished trace; members calling unlike): every call to every process,
/// each instance's calls in world rank order, as the whole trace's counting sort places them.
fn match_general(
    trace: &Trace,
    file: &str,
    ex: &dyn Exchange,
    g: &mut HbGraph,
    own: &std::ops::Range<usize>,
    b: &Buckets,
) -> Result<(), Error> {
    let n = ex.processes();
    let call_here = call_in(trace);
    let mut out = Vec::new();
    for r in own.clone() {
        let ev = trace.rank(r);
        let mut seq = Tally::default();
        for i in (0..ev.len()).filter(|&i| ev.routine(i).is_collective()) {
            let k = b.index(ev.comm(i));
            let x = b.first[k] + seq.bump(k as u32) as usize;
            out.push(x as u64);
            put_call(&mut out, r as u32, i as u32, call_here(r as u32, i as u32));
        }
    }
    let got = ex.all_to_all(vec![out; n])?;
    let mut calls: Vec<(usize, (u32, u32))> = Vec::with_capacity(b.total);
    let mut held: HashMap<(u32, u32), (Routine, i32)> = HashMap::new();
    for v in &got {
        for w in v.chunks_exact(3) {
            let (at, c) = get_call(&w[1..])?;
            calls.push((w[0] as usize, at));
            held.insert(at, c);
        }
    }
    drop(got);
    // By instance; within one, in world rank order (the processes' blocks are in that order).
    calls.sort_by_key(|&(x, _)| x);
    let placed: Vec<(u32, u32)> = calls.into_iter().map(|(_, at)| at).collect();
    let call: &CallOf<'_> = &|r, i| held[&(r, i)];
    let is_own = |r: u32| own.contains(&(r as usize));
    tie_instances(trace, file, g, b, &placed, call, &is_own)?;
    Ok(())
}

/// What every process of a split replay learns of the whole trace once each has loaded its own
/// ranks ([`census`]).
#[derive(Clone, Debug, Default)]
pub struct Census {
    /// Every rank's first event in the whole trace (`p + 1` entries: the last is the total).
    pub firsts: Vec<usize>,
    /// Time 0 of the whole trace ([`Trace::measured_t0`]).
    pub t0: f64,
    /// The ranks without `MPI_Finalize`, where the trace is unfinished (else none).
    pub unfinished: Vec<usize>,
}

/// Every process's ranks' event counts, earliest start and ranks without `MPI_Finalize`, to
/// every process. Every process calls it alike, `trace` its own ranks' ([`crate::trace::load_ranks`]).
pub fn census(trace: &Trace, ex: &dyn Exchange) -> Result<Census, Error> {
    let (me, n, p) = (ex.process(), ex.processes(), trace.nranks());
    let own = owned(me, n, p);
    let begin = own.clone().filter_map(|r| trace.measured_begin_ns(r));
    let mut out = vec![begin.fold(f64::INFINITY, f64::min).to_bits()];
    out.extend(own.clone().map(|r| trace.rank(r).len() as u64));
    let unfinished =
        own.filter(|&r| !trace.complete && !trace.rank(r).routines().contains(&Routine::Finalize));
    let unfinished: Vec<u64> = unfinished.map(|r| r as u64).collect();
    out.push(unfinished.len() as u64);
    out.extend(unfinished);
    let got = ex.all_to_all(vec![out; n])?;
    let mut c = Census {
        firsts: vec![0],
        t0: f64::INFINITY,
        unfinished: Vec::new(),
    };
    for (k, v) in got.iter().enumerate() {
        let mut next = words(v);
        c.t0 = c.t0.min(f64::from_bits(next()?));
        for _ in owned(k, n, p) {
            let last = c.firsts[c.firsts.len() - 1];
            c.firsts.push(last + next()? as usize);
        }
        for _ in 0..next()? {
            c.unfinished.push(next()? as usize);
        }
    }
    if !c.t0.is_finite() {
        c.t0 = 0.0;
    }
    Ok(c)
}

/// The events of other processes that one process's links name (a split replay), numbered
/// after its own: ghost `s` is its event `held + s`. What the replay reads of them: a send's
/// routine and byte count (its size and protocol), a receive's call that moves its message
/// (`progress = calls`), and their predicted call times, which come in the exchanges.
#[derive(Clone, Debug, Default)]
pub struct Ghosts {
    /// The global index of the process's first event, and how many it holds.
    pub base: usize,
    pub held: usize,
    /// Every rank's first event in the whole trace ([`Census::firsts`]; empty in one process).
    pub firsts: Vec<usize>,
    /// Each ghost's global index, ascending.
    pub global: Vec<u32>,
    pub routine: Vec<Routine>,
    pub bytes: Vec<u64>,
    /// Each ghost's flags (a send's `clean`: the model's §13).
    pub flags: Vec<u8>,
    /// Each ghost's [`crate::trace::PageOffsets`] as a word (the model's §9).
    pub pages: Vec<u32>,
    /// The event (a ghost) at whose call a ghost receive takes its message where messages move
    /// only inside calls (`NONE`: at its own).
    pub moves: Vec<u32>,
    /// Time 0 of the whole trace.
    pub t0: f64,
}

impl Ghosts {
    pub fn len(&self) -> usize {
        self.global.len()
    }

    pub fn is_empty(&self) -> bool {
        self.global.is_empty()
    }

    /// The event this process numbers global event `e`: its own, or a ghost (`None`: neither).
    pub fn local(&self, e: usize) -> Option<usize> {
        match e.checked_sub(self.base).filter(|&j| j < self.held) {
            Some(j) => Some(j),
            None => (self.global.binary_search(&(e as u32)).ok()).map(|s| self.held + s),
        }
    }

    /// The rank and index in it of ghost event `e` (`e ≥ held`).
    pub fn locate(&self, e: usize) -> (usize, usize) {
        rank_of(&self.firsts, self.global[e - self.held] as usize)
    }
}

/// The rank and index in it of global event `g`, where rank `r`'s events start at `firsts[r]`.
fn rank_of(firsts: &[usize], g: usize) -> (usize, usize) {
    let r = firsts.partition_point(|&f| f <= g) - 1;
    (r, g - firsts[r])
}

/// The graph of `trace` (this process's ranks), matched with every other process's
/// ([`match_messages`], [`match_collectives`]), its links renumbered to this process's events:
/// its own first, then the other processes' events that its links name ([`Ghosts`]), whose
/// routine, byte count and moving call their owners send. Every process calls it alike.
pub fn divide(
    trace: &Trace,
    file: &str,
    census: &Census,
    ex: &dyn Exchange,
) -> Result<HbGraph, Error> {
    let (me, n, p) = (ex.process(), ex.processes(), trace.nranks());
    let own = owned(me, n, p);
    let firsts = &census.firsts;
    let mut g = match_messages(trace, file, ex, firsts)?;
    match_collectives(trace, file, ex, &mut g)?;
    let (base, held) = (firsts[own.start], trace.events.len());
    let mine = |e: u32| (base..base + held).contains(&(e as usize));

    // The other processes' events the links name, asked of their owners.
    let gr = &g;
    let mut wanted: Vec<u32> = (own.clone())
        .into_par_iter()
        .flat_map_iter(|r| {
            let ev = trace.rank(r);
            let links = (0..ev.len()).filter(move |&i| !ev.routine(i).is_collective());
            let halves = gr.link2.get(r).into_iter().flatten().map(|&(_, e)| e);
            links.map(move |i| gr.link(r, i)).chain(halves)
        })
        .filter(|&e| e != NONE && !mine(e))
        .collect();
    wanted.par_sort_unstable();
    wanted.dedup();
    let owner_of_rank = owner_of(n, p);
    let owner = |e: u32| owner_of_rank(rank_of(firsts, e as usize).0);
    let mut out: Vec<Vec<u64>> = vec![Vec::new(); n];
    for &e in &wanted {
        out[owner(e)].push(e as u64);
    }
    let asked = ex.all_to_all(out)?;
    // Each asked event's routine, flags and moving call (its rank's first call at or after it
    // that starts no request, as global events), its byte count and its pages.
    let answer = |e: u64| -> Result<[u64; 3], Error> {
        let Some(j) = (e as usize).checked_sub(base).filter(|&j| j < held) else {
            return Err(Error::Io(format!(
                "event {e} asked of a process that does not hold it"
            )));
        };
        let (r, i) = rank_of(firsts, base + j);
        let ev = trace.rank(r);
        let moves = (i..ev.len()).find(|&k| !ev.routine(k).creates_request());
        let moves = moves.map_or(NONE, |k| (firsts[r] + k) as u32);
        Ok([
            ev.routine(i) as u8 as u64 | (ev.flags(i) as u64) << 8 | (moves as u64) << 32,
            ev.bytes(i),
            ev.pages(i).word(),
        ])
    };
    let answers: Vec<Vec<u64>> = asked
        .iter()
        .map(|v| {
            let w = v.iter().map(|&e| answer(e));
            w.collect::<Result<Vec<_>, _>>().map(|a| a.concat())
        })
        .collect::<Result<_, _>>()?;
    drop(asked);
    let got = ex.all_to_all(answers)?;
    // In the order asked: each owner's answers in the order of `wanted`.
    let mut at = vec![0; n];
    let mut info = Vec::with_capacity(wanted.len());
    for &e in &wanted {
        let k = owner(e);
        let w = got[k].get(at[k]..at[k] + 3).ok_or_else(|| {
            Error::Io("a split replay's exchange of ghost events was cut short".into())
        })?;
        at[k] += 3;
        let routine = Routine::from_code(w[0] as u8)
            .ok_or_else(|| Error::Io(format!("a ghost event names no routine ({})", w[0] as u8)))?;
        info.push((
            e,
            routine,
            w[1],
            (w[0] >> 32) as u32,
            (w[0] >> 8) as u8,
            w[2] as u32,
        ));
    }
    drop(got);
    // The moving calls not asked for are ghosts too: only their call times are read.
    let mut extra: Vec<u32> = info
        .iter()
        .map(|x| x.3)
        .filter(|&m| m != NONE && wanted.binary_search(&m).is_err())
        .collect();
    extra.sort_unstable();
    extra.dedup();
    info.extend(extra.into_iter().map(|e| (e, Routine::Init, 0, NONE, 0, 0)));
    info.sort_unstable_by_key(|x| x.0);
    let mut ghosts = Ghosts {
        base,
        held,
        firsts: firsts.clone(),
        global: info.iter().map(|x| x.0).collect(),
        routine: info.iter().map(|x| x.1).collect(),
        bytes: info.iter().map(|x| x.2).collect(),
        flags: info.iter().map(|x| x.4).collect(),
        pages: info.iter().map(|x| x.5).collect(),
        moves: Vec::new(),
        t0: census.t0,
    };
    let local = |gh: &Ghosts, e: u32| gh.local(e as usize).map_or(NONE, |l| l as u32);
    ghosts.moves = info.iter().map(|x| local(&ghosts, x.3)).collect();
    g.renumber(trace, |e| local(&ghosts, e));
    g.ghosts = ghosts;
    Ok(g)
}
