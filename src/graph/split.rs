//! Messages matched across the processes of a split replay (src/replay/SPLIT.md, item 3): each
//! process holds its own ranks' events alone ([`crate::trace::load_ranks`]). It buckets its
//! ranks' sends by destination as one process does ([`bucket_sends`]), sends each bucket to
//! the process that owns its destination, pairs its own destinations' receives with all their
//! sends ([`pair`], unchanged: a channel's sends all come from one rank, its receives all go to
//! one), and tells each remote send's owner the receive it matched. The links are the ones
//! [`super::build`] makes of the whole trace, as global event indices (`global`: every rank's
//! first event in the whole trace); collectives are not tied here.

use super::{HbGraph, Side, Unmatched, bucket_sends, pair, receives, unmatched_warning};
use crate::error::{Error, TraceError};
use crate::replay::split::{Exchange, owned};
use crate::trace::{Routine, Trace};
use rayon::prelude::*;
use std::cell::RefCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

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

    // Each destination's sends to its owner.
    let mut out: Vec<Vec<u64>> = vec![Vec::new(); n];
    for (k, to) in out.iter_mut().enumerate() {
        for d in owned(k, n, p) {
            for s in &bucketed[buckets[d]..buckets[d + 1]] {
                put_send(to, d, s, routine_of(s));
            }
        }
    }
    drop(bucketed);
    let got = ex.all_to_all(out)?;
    // This process's destinations' sends, and the routines of those that came from elsewhere.
    let mut mine: Vec<Vec<Side>> = vec![Vec::new(); own.len()];
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
    drop(got);

    let link: Vec<AtomicU32> = (0..trace.events.len()).map(|_| AtomicU32::new(0)).collect();
    let set = |r: usize, i: u32, to: u32| link[start[r] + i as usize].store(!to, Ordering::Relaxed);
    // Links of remote sends, by the process that owns the send: `(rank, event, receive)`.
    let remote: Mutex<Vec<Vec<(u32, u32, u32)>>> = Mutex::new(vec![Vec::new(); n]);
    let firsts: Vec<usize> = (0..n).map(|k| owned(k, n, p).start).collect();
    let owner = |r: usize| firsts.partition_point(|&f| f <= r) - 1;
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

    // The receives of remote sends to their senders' owners; and what matched nothing, to all.
    let remote = remote.into_inner().expect("remote");
    let unmatched = unmatched.into_inner().expect("unmatched");
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
        for &((send, d, x), routine) in &unmatched {
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
