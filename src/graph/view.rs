//! The happens-before graph as petgraph sees it ([`HbView`]): its edges found from the
//! trace and the graph's links at a given eager limit.

use super::*;

/// The happens-before graph as petgraph sees it, for a given eager limit: nodes are each
/// event's call and return (`2·e` and `2·e + 1` for global event `e`) and one node per
/// collective instance; an edge `u → v` means `u` happens before `v` in the replay. petgraph's
/// algorithms take it by reference.
pub struct HbView<'a> {
    pub trace: &'a Trace,
    pub graph: &'a HbGraph,
    /// Bytes above which a message goes by rendezvous.
    pub eager_limit: u64,
    offsets: &'a [usize],
    reqs: Requests,
    /// Each instance's participants ([`HbGraph::participants`]).
    participants: Vec<Vec<(u32, u32)>>,
    /// The instance of each collective call, by global event.
    instance: std::collections::HashMap<usize, u32>,
}

impl<'a> HbView<'a> {
    /// The view of `graph`, which [`build`] made from `trace` (and so checked its requests).
    pub fn new(trace: &'a Trace, graph: &'a HbGraph, eager_limit: u64) -> HbView<'a> {
        let offsets = trace.events.offsets();
        let participants = graph.participants(trace);
        let instance = (participants.iter().zip(0..))
            .flat_map(|(list, x)| list.iter().map(move |&(r, i)| (r, i, x)))
            .map(|(r, i, x)| (offsets[r as usize] + i as usize, x))
            .collect();
        HbView {
            trace,
            graph,
            eager_limit,
            offsets,
            reqs: Requests::of(trace, "").expect("requests checked when the graph was built"),
            participants,
            instance,
        }
    }

    fn total(&self) -> usize {
        *self.offsets.last().unwrap_or(&0)
    }

    /// `(rank, event, is_return)` of an event node, `None` for an instance node.
    pub fn locate(&self, node: usize) -> Option<(usize, usize, bool)> {
        let e = node / 2;
        if e >= self.total() {
            return None;
        }
        let (r, i) = self.trace.events.locate(e);
        Some((r, i, node % 2 == 1))
    }

    fn call(&self, r: usize, i: usize) -> usize {
        2 * (self.offsets[r] + i)
    }

    /// Whether the message sent by event `i` of rank `r` goes by rendezvous (never one to
    /// itself: a local copy).
    pub fn rendezvous(&self, r: usize, i: usize) -> bool {
        let ev = self.trace.rank(r);
        rendezvous_in(&ev, self.eager_limit, i) && ev.peer(i) != r as i32
    }

    /// The event whose return waits for a message or collective event: the Wait that
    /// completes a nonblocking operation, else the event itself.
    fn completer(&self, r: usize, i: usize) -> usize {
        let ev = self.trace.rank(r);
        match ev.routine(i).creates_request() {
            true => self.reqs.done(r, ev.id(i) as u32) as usize,
            false => i,
        }
    }

    fn successors(&self, node: usize) -> Vec<usize> {
        let Some((r, i, is_ret)) = self.locate(node) else {
            let x = node - 2 * self.total();
            // A nonblocking collective's completes at its Wait (none: at no event).
            return self.participants[x]
                .iter()
                .map(|&(r, i)| (r as usize, self.completer(r as usize, i as usize)))
                .filter(|&(_, done)| done != NONE as usize)
                .map(|(r, done)| self.call(r, done) + 1)
                .collect();
        };
        let ev = self.trace.rank(r);
        if is_ret {
            return if i + 1 < ev.len() {
                vec![node + 1]
            } else {
                vec![]
            };
        }
        let mut out = vec![node + 1];
        let e = ev.event(i);
        if let Some(&x) = self.instance.get(&(self.offsets[r] + i)) {
            out.push(2 * self.total() + x as usize);
            return out;
        }
        let link = self.graph.link(r, i);
        // A send's call lets its receive (or the receive's Wait, or a Probe) return.
        if matches!(
            e.routine.shape(),
            Shape::Send | Shape::Isend | Shape::Sendrecv
        ) && link != NONE
        {
            let (q, j) = self.trace.events.locate(link as usize);
            let done = self.completer(q, j);
            if done != NONE as usize {
                out.push(self.call(q, done) + 1);
            }
        }
        // A receive's call lets a rendezvous send (or its Wait) return.
        let recv_from = match e.routine.shape() {
            Shape::Recv if e.routine.receives() => link,
            Shape::Irecv => link,
            Shape::Sendrecv => self.graph.link2(r, i),
            _ => NONE,
        };
        if recv_from != NONE {
            let (src, j) = self.trace.events.locate(recv_from as usize);
            if self.rendezvous(src, j) {
                let done = self.completer(src, j);
                if done != NONE as usize {
                    out.push(self.call(src, done) + 1);
                }
            }
        }
        // A Probe's dependency on the send it sees is left out: it is never part of a
        // deadlock cycle (the receive that follows it depends on the same send).
        out
    }
}

mod petgraph_impls {
    use super::HbView;
    use petgraph::visit::{
        GraphBase, GraphRef, IntoNeighbors, IntoNodeIdentifiers, NodeCount, NodeIndexable,
        Visitable,
    };

    impl GraphBase for &HbView<'_> {
        type NodeId = usize;
        type EdgeId = (usize, usize);
    }
    impl GraphRef for &HbView<'_> {}
    impl NodeCount for &HbView<'_> {
        fn node_count(&self) -> usize {
            2 * self.total() + self.graph.instances.len()
        }
    }
    impl NodeIndexable for &HbView<'_> {
        fn node_bound(&self) -> usize {
            self.node_count()
        }
        fn to_index(&self, a: usize) -> usize {
            a
        }
        fn from_index(&self, i: usize) -> usize {
            i
        }
    }
    impl IntoNodeIdentifiers for &HbView<'_> {
        type NodeIdentifiers = std::ops::Range<usize>;
        fn node_identifiers(self) -> Self::NodeIdentifiers {
            0..self.node_count()
        }
    }
    impl IntoNeighbors for &HbView<'_> {
        type Neighbors = std::vec::IntoIter<usize>;
        fn neighbors(self, a: usize) -> Self::Neighbors {
            self.successors(a).into_iter()
        }
    }
    impl Visitable for &HbView<'_> {
        type Map = fixedbitset::FixedBitSet;
        fn visit_map(&self) -> Self::Map {
            fixedbitset::FixedBitSet::with_capacity(self.node_count())
        }
        fn reset_map(&self, map: &mut Self::Map) {
            map.clear();
            map.grow(self.node_count());
        }
    }
}
