//! Rooted collectives as trees: broadcast, reduce, scatter, gather (LogGP paper §4, the
//! postal-model h-tree, MPICH's binomial trees).

use super::{Builder, chunks};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The size bound of `vr`'s subtree in a binomial tree rooted at 0: its lowest set bit (for
/// the root, the power of two covering all `p` ranks).
pub(super) fn subtree(vr: usize, p: usize) -> usize {
    if vr == 0 {
        p.next_power_of_two()
    } else {
        1 << vr.trailing_zeros()
    }
}

/// MPICH's binomial broadcast: a rank receives from the rank its lowest set bit away and
/// forwards to `vr + m` for each smaller power of two `m`, largest subtree first.
pub fn bcast_binomial(b: &mut Builder, bytes: u64) {
    let p = b.p;
    for vr in 0..p {
        let lsb = subtree(vr, p);
        if vr != 0 {
            b.recv(vr, vr - lsb, bytes);
        }
        let mut m = lsb >> 1;
        while m > 0 {
            if vr + m < p {
                b.send(vr, vr + m, bytes);
            }
            m >>= 1;
        }
    }
}

/// MPICH's binomial reduce: the mirror of [`bcast_binomial`], reducing each child's vector.
pub fn reduce_binomial(b: &mut Builder, bytes: u64) {
    let p = b.p;
    for vr in 0..p {
        let mut mask = 1;
        while mask < p {
            if vr & mask != 0 {
                b.send(vr, vr - mask, bytes);
                break;
            }
            if vr + mask < p {
                b.recv(vr, vr + mask, bytes);
                b.reduce(vr, bytes);
            }
            mask <<= 1;
        }
    }
}

/// The root receives every rank's vector in turn and reduces it.
pub fn reduce_linear(b: &mut Builder, bytes: u64) {
    for vr in 1..b.p {
        b.send(vr, 0, bytes);
        b.recv(0, vr, bytes);
        b.reduce(0, bytes);
    }
}

/// Van de Geijn: binomial scatter of `P` chunks, then a ring allgather of them.
pub fn bcast_scatter_allgather(b: &mut Builder, bytes: u64) {
    let p = b.p;
    let c = chunks(bytes, p);
    let span = |lo: usize, hi: usize| c[lo..hi.min(p)].iter().sum::<u64>();
    b.each_rank(|s, vr| {
        let lsb = subtree(vr, p);
        if vr != 0 {
            s.recv(vr - lsb, span(vr, vr + lsb));
        }
        let mut m = lsb >> 1;
        while m > 0 {
            if vr + m < p {
                s.send(vr + m, span(vr + m, vr + 2 * m));
            }
            m >>= 1;
        }
        super::exchange::ring_allgather(s, &c, vr);
    });
}

/// A chain 0 → 1 → … → P−1 carrying the message in `segment`-byte pieces.
pub fn bcast_pipeline(b: &mut Builder, bytes: u64, segment: u64) {
    let p = b.p;
    let segs = segments(bytes, segment);
    for vr in 0..p {
        for &s in &segs {
            if vr > 0 {
                b.recv(vr, vr - 1, s);
            }
            if vr + 1 < p {
                b.send(vr, vr + 1, s);
            }
        }
    }
}

/// The sizes of the pieces of a `bytes` message cut every `segment` bytes (at least one piece).
pub fn segments(bytes: u64, segment: u64) -> Vec<u64> {
    let segment = segment.max(1);
    let n = bytes.div_ceil(segment).max(1);
    (0..n)
        .map(|i| segment.min(bytes - (i * segment).min(bytes)))
        .collect()
}

/// The postal-model h-tree: every informed rank sends to a new rank as soon as it can, the
/// earliest arrival first. Sending occupies a rank `send_busy`; a message is forwardable
/// `recv_ready` after its send starts (postal model: 1 and h). Returns, per rank, the parent
/// and the children in sending order.
pub fn greedy_tree(p: usize, send_busy: f64, recv_ready: f64) -> (Vec<usize>, Vec<Vec<usize>>) {
    let mut parent = vec![0; p];
    let mut children = vec![Vec::new(); p];
    // (arrival of this rank's next message, rank, when it can next send)
    let mut heap = BinaryHeap::new();
    let key = |t: f64| Reverse(t.max(0.0).to_bits());
    heap.push((key(recv_ready), Reverse(0usize), 0.0f64.to_bits()));
    for (new, parent_of_new) in parent.iter_mut().enumerate().skip(1) {
        let (Reverse(arr), Reverse(u), next) = heap.pop().expect("the root is always there");
        let arrival = f64::from_bits(arr);
        *parent_of_new = u;
        children[u].push(new);
        let next = f64::from_bits(next) + send_busy;
        heap.push((key(next + recv_ready), Reverse(u), next.to_bits()));
        heap.push((key(arrival + recv_ready), Reverse(new), arrival.to_bits()));
    }
    (parent, children)
}

/// `N_h(t)`: the most ranks a postal-model broadcast with latency `h` reaches by step `t`
/// (`N(t) = 1` for `t < h`, else `N(t − 1) + N(t − h)`; Fibonacci for `h = 2`).
pub fn postal_reach(h: u64, t: u64) -> u64 {
    let h = h.max(1) as usize;
    let mut n = vec![1u64; (t as usize + 1).max(h)];
    for i in h..=t as usize {
        n[i] = n[i - 1].saturating_add(n[i - h]);
    }
    n[t as usize]
}

/// Broadcast along [`greedy_tree`].
pub fn bcast_postal(b: &mut Builder, bytes: u64, send_busy: f64, recv_ready: f64) {
    let (parent, children) = greedy_tree(b.p, send_busy, recv_ready);
    for vr in 0..b.p {
        if vr != 0 {
            b.recv(vr, parent[vr], bytes);
        }
        for &c in &children[vr] {
            b.send(vr, c, bytes);
        }
    }
}

/// A scatter that splits the ranks it still serves: a rank holding blocks for `n` ranks sends
/// those of the last `split(n)` ranks to the first of them and keeps the rest (LogGP paper §4).
pub fn scatter_split(b: &mut Builder, bytes: u64, split: impl Fn(usize) -> usize) {
    let mut stack = vec![(0usize, b.p)];
    while let Some((lo, mut hi)) = stack.pop() {
        while hi - lo > 1 {
            let s = split(hi - lo).clamp(1, hi - lo - 1);
            let head = hi - s;
            b.send(lo, head, s as u64 * bytes);
            b.recv(head, lo, s as u64 * bytes);
            stack.push((head, hi));
            hi = head;
        }
    }
}

/// The paper's Short-Message scatter: every byte for every rank as its own message.
pub fn scatter_short(b: &mut Builder, bytes: u64) {
    for vr in 1..b.p {
        for _ in 0..bytes.max(1) {
            b.send(0, vr, bytes.min(1));
            b.recv(vr, 0, bytes.min(1));
        }
    }
}

/// The root sends each rank its block in turn (the paper's Simple Long-Message scatter).
pub fn scatter_linear(b: &mut Builder, bytes: u64) {
    for vr in 1..b.p {
        b.send(0, vr, bytes);
        b.recv(vr, 0, bytes);
    }
}

/// Every rank sends its block to the root in turn.
pub fn gather_linear(b: &mut Builder, bytes: u64) {
    for vr in 1..b.p {
        b.send(vr, 0, bytes);
        b.recv(0, vr, bytes);
    }
}

/// The split of the paper's `A_t^k`: `t(n) = min_{0<s<n} max(ready(s·k) + t(s), busy(s·k) +
/// t(n−s))`, the smallest best `s`. Returns `(split, t)` indexed by `n` up to `p`.
pub fn optimal_splits(
    p: usize,
    bytes: u64,
    costs: &dyn Fn(u64) -> (f64, f64),
) -> (Vec<usize>, Vec<f64>) {
    let c: Vec<(f64, f64)> = (0..p).map(|s| costs(s as u64 * bytes)).collect();
    let mut t = vec![0.0f64; p + 1];
    let mut split = vec![0usize; p + 1];
    for n in 2..=p {
        let mut best = (f64::INFINITY, 0);
        for (s, &(busy, ready)) in c.iter().enumerate().take(n).skip(1) {
            let v = (ready + t[s]).max(busy + t[n - s]);
            if v < best.0 {
                best = (v, s);
            }
        }
        t[n] = best.0;
        split[n] = best.1;
    }
    (split, t)
}
