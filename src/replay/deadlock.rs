//! What a replay that cannot go on reports: the ranks, routines and sizes of the cycle that
//! blocks them.

use super::rank::RankState;
use super::schedule::Waiters;
use super::{Shared, link_of};
use crate::model::Model;
use crate::trace::Shape;
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

/// Names the ranks that wait on each other in a cycle, with what each is blocked in.
pub(super) fn deadlock_message(
    sh: &Shared<'_>,
    states: &[Mutex<RankState>],
    waiting_on_event: &Waiters,
    waiting_on_instance: &HashMap<u32, Vec<u32>>,
) -> String {
    let p = states.len();
    let mut wait_for: DiGraph<u32, ()> = DiGraph::with_capacity(p, p);
    let nodes: Vec<_> = (0..p as u32).map(|r| wait_for.add_node(r)).collect();
    for q in 0..p as u32 {
        for r in waiting_on_event.on(q) {
            wait_for.add_edge(nodes[r as usize], nodes[q as usize], ());
        }
    }
    // Whether rank `m` has called instance `x`: it waits in it (it cannot have left it).
    let called = |m: u32, x: u32| {
        let st = states[m as usize].lock().expect("rank state");
        let (i, ev) = (st.pos as usize, sh.trace.rank(m as usize));
        i < ev.len() && st.published && link_of(sh, m as usize, i, ev.routine(i), st.colls) == x
    };
    for (&x, list) in waiting_on_instance {
        let comm = sh.g.instances[x as usize].comm;
        let members = sh.trace.comm_members(comm).expect("validated communicator");
        for m in (0..members.len()).map(|k| members.get(k)) {
            if !called(m, x) {
                for &r in list {
                    wait_for.add_edge(nodes[r as usize], nodes[m as usize], ());
                }
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
        .unwrap_or_else(|| {
            (0..p)
                .filter(|&r| {
                    (states[r].lock().expect("rank state").pos as usize) < sh.trace.rank(r).len()
                })
                .collect()
        });
    let describe = |r: usize| {
        let i = states[r].lock().expect("rank state").pos as usize;
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
    };
    let parts: Vec<String> = cycle.iter().map(|&r| describe(r)).collect();
    let under = match sh.model {
        Model::LogGps(p) => format!("S = {} bytes", p.S),
        Model::LogGp(_) => "LogGP (no rendezvous)".into(),
    };
    format!(
        "deadlock under {under}: rank(s) {:?} wait on each other: {}",
        cycle,
        parts.join("; ")
    )
}
