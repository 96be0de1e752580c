//! What a replay that cannot go on reports: the ranks, routines and sizes of the cycle that
//! blocks them.

use super::rank::RankState;
use super::schedule::Waiters;
use super::{Shared, link_of};
use crate::graph::HbGraph;
use crate::model::Model;
use crate::trace::{Shape, Trace};
use petgraph::graph::DiGraph;
use std::collections::HashMap;
use std::sync::Mutex;

/// `reasons`, each once, in the order first given, with how many times where more than one.
pub(super) fn counted(reasons: Vec<String>) -> Vec<String> {
    let mut seen: Vec<(String, usize)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for why in reasons {
        match at.get(&why) {
            Some(&k) => seen[k].1 += 1,
            None => {
                at.insert(why.clone(), seen.len());
                seen.push((why, 1));
            }
        }
    }
    seen.into_iter()
        .map(|(why, n)| match n {
            1 => why,
            n => format!("{why} ({n} calls)"),
        })
        .collect()
}

/// What names a deadlock, of the ranks a process replayed: who waits on whom, and each stuck
/// rank's call in words. One process's own ranks' [`Waits`] joined make the whole replay's
/// (a split replay gathers them).
#[derive(Debug, Default)]
pub(super) struct Waits {
    /// `(waiting rank, rank whose call time it waits for)`.
    pub(super) on_rank: Vec<(u32, u32)>,
    /// `(instance, waiting rank)`.
    pub(super) on_instance: Vec<(u32, u32)>,
    /// `(rank, instance)` of each rank waiting inside a collective it has called.
    pub(super) inside: Vec<(u32, u32)>,
    /// Each rank that stopped before its last event, with its call in words where they were
    /// asked for (to be sent to other processes; else empty).
    pub(super) stopped: Vec<(u32, String)>,
    /// `(rank, bytes)` of each rank stopped in a send the rendezvous protocol holds.
    pub(super) rendezvous: Vec<(u32, u64)>,
}

impl Waits {
    /// Rank `r`'s call in words, as [`waits`] gave it.
    pub(super) fn said(&self, r: u32) -> String {
        let k = self.stopped.binary_search_by_key(&r, |s| s.0);
        k.map(|k| self.stopped[k].1.clone()).unwrap_or_default()
    }
}

/// The [`Waits`] of `ranks` once no rank can go on; with each stopped rank's call in words
/// where `say` ([`describe`] names only the cycle's ranks where all are at hand).
pub(super) fn waits(
    sh: &Shared<'_>,
    states: &[Mutex<RankState>],
    waiting_on_event: &Waiters,
    waiting_on_instance: &HashMap<u32, Vec<u32>>,
    ranks: std::ops::Range<usize>,
    say: bool,
) -> Waits {
    let mut w = Waits::default();
    for q in 0..states.len() as u32 {
        w.on_rank.extend(waiting_on_event.on(q).map(|r| (r, q)));
    }
    for (&x, list) in waiting_on_instance {
        w.on_instance.extend(list.iter().map(|&r| (x, r)));
    }
    for r in ranks {
        let st = states[r].lock().expect("rank state");
        let (i, ev) = (st.pos as usize, sh.trace.rank(r));
        if i >= ev.len() {
            continue;
        }
        // It waits inside the instance it called (it cannot have left it).
        if st.published && ev.routine(i).is_collective() {
            w.inside
                .push((r as u32, link_of(sh, r, i, ev.routine(i), st.colls)));
        }
        drop(st);
        let shape = ev.routine(i).shape();
        if matches!(shape, Shape::Send | Shape::Isend) && sh.rendezvous(r, i) {
            w.rendezvous.push((r as u32, ev.bytes(i)));
        }
        let said = if say {
            describe(sh, r, i)
        } else {
            String::new()
        };
        w.stopped.push((r as u32, said));
    }
    w
}

/// Rank `r`'s call `i` in words, with what it waits for.
pub(super) fn describe(sh: &Shared<'_>, r: usize, i: usize) -> String {
    let e = sh.trace.rank(r).event(i);
    let what = match e.routine.shape() {
        Shape::Send | Shape::Isend => {
            let why = match sh.model {
                Model::LogGps(p) if sh.rendezvous(r, i) => {
                    format!("rendezvous: {} > S = {}", e.bytes, p.S)
                }
                _ => "eager".into(),
            };
            format!(
                "{} bytes to rank {} tag {} comm {} ({why})",
                e.bytes, e.peer, e.tag, e.comm
            )
        }
        Shape::Recv | Shape::Irecv => {
            format!("from rank {} tag {} comm {}", e.peer, e.tag, e.comm)
        }
        Shape::Sendrecv => format!(
            "{} bytes to rank {} and from rank {}",
            e.bytes,
            e.peer,
            sh.trace.rank(r).recv_half(i).map_or(-1, |h| h.source)
        ),
        Shape::Coll | Shape::CommOp => format!("on comm {}", e.comm),
        _ => String::new(),
    };
    format!("rank {r} event {i} {} {what}", e.routine.mpi_name())
}

/// Names the ranks that wait on each other in a cycle, with what each is blocked in (`say`),
/// from the [`Waits`] of every rank: a rank waiting on an instance waits on each member that
/// has not called it.
pub(super) fn deadlock_message(
    trace: &Trace,
    g: &HbGraph,
    model: &Model,
    w: &Waits,
    say: &dyn Fn(u32) -> String,
) -> String {
    let p = trace.nranks();
    let mut wait_for: DiGraph<u32, ()> = DiGraph::with_capacity(p, p);
    let nodes: Vec<_> = (0..p as u32).map(|r| wait_for.add_node(r)).collect();
    // In one order whoever found them (one process, or each its own ranks').
    let mut on_rank = w.on_rank.clone();
    on_rank.sort_unstable_by_key(|&(r, q)| (q, r));
    for &(r, q) in &on_rank {
        wait_for.add_edge(nodes[r as usize], nodes[q as usize], ());
    }
    let mut on_instance = w.on_instance.clone();
    on_instance.sort_unstable();
    let inside: std::collections::HashSet<(u32, u32)> = w.inside.iter().copied().collect();
    for &(x, r) in &on_instance {
        let comm = g.instances[x as usize].comm;
        let members = trace.comm_members(comm).expect("validated communicator");
        for m in (0..members.len()).map(|k| members.get(k)) {
            if !inside.contains(&(m, x)) {
                wait_for.add_edge(nodes[r as usize], nodes[m as usize], ());
            }
        }
    }
    let cycle = petgraph::algo::tarjan_scc(&wait_for)
        .into_iter()
        .find(|scc| scc.len() > 1 || wait_for.contains_edge(scc[0], scc[0]))
        .map(|scc| {
            let mut v: Vec<usize> = scc.into_iter().map(|n| wait_for[n] as usize).collect();
            v.sort_unstable();
            v
        })
        .unwrap_or_else(|| w.stopped.iter().map(|s| s.0 as usize).collect());
    let parts: Vec<String> = cycle.iter().map(|&r| say(r as u32)).collect();
    let under = match model {
        Model::LogGps(p) => format!("S = {} bytes", p.S),
        Model::LogGp(_) => "LogGP (no rendezvous)".into(),
    };
    // A send the rendezvous protocol holds got past its receiver in the traced run, whose
    // library sent it eagerly: a larger S replays.
    let largest = (w.rendezvous.iter())
        .filter(|(r, _)| cycle.contains(&(*r as usize)))
        .map(|&(_, k)| k)
        .max();
    let hint = match largest {
        Some(k) => format!(
            " (the traced run got past these sends: its library sent them eagerly; --S {k} or \
             more replays them so, as --params with that library's eager limit may)"
        ),
        None => String::new(),
    };
    format!(
        "deadlock under {under}: rank(s) {:?} wait on each other: {}{hint}",
        cycle,
        parts.join("; ")
    )
}
