//! Collectives where every rank both sends and receives: barrier, allreduce, allgather,
//! alltoall, reduce-scatter, scan (MPICH's algorithms, P not a power of two included).

use super::{Builder, chunks};

/// Dissemination barrier: in round `k` rank `r` signals `r + 2^k` and hears from `r − 2^k`.
pub fn barrier_dissemination(b: &mut Builder) {
    let p = b.p;
    // Modulo P without a division (both below 2P).
    let wrap = |x: usize| if x < p { x } else { x - p };
    // Rank after rank, as the schedule keeps them (putting them in place took most of a
    // 262,144-rank barrier's build when round after round).
    for r in 0..p {
        for d in std::iter::successors(Some(1), |d| Some(d << 1)).take_while(|&d| d < p) {
            b.sendrecv(r, wrap(r + d), 0, wrap(r + p - d), 0);
        }
    }
}

/// The largest power of two `≤ p` and the ranks left over.
fn fold(p: usize) -> (usize, usize) {
    let p2 = if p.is_power_of_two() {
        p
    } else {
        p.next_power_of_two() >> 1
    };
    (p2, p - p2)
}

/// MPICH's rank in the power-of-two core, `None` for ranks folded away.
fn core_rank(r: usize, rem: usize) -> Option<usize> {
    if r < 2 * rem {
        (r % 2 == 1).then_some(r / 2)
    } else {
        Some(r - rem)
    }
}

fn real_rank(nr: usize, rem: usize) -> usize {
    if nr < rem { 2 * nr + 1 } else { nr + rem }
}

/// Even ranks below `2·rem` hand their `bytes` to the next odd rank (reduced there if `reduce`).
fn fold_in(b: &mut Builder, rem: usize, bytes: impl Fn(usize) -> u64, reduce: bool) {
    for r in (0..2 * rem).step_by(2) {
        b.send(r, r + 1, bytes(r));
        b.recv(r + 1, r, bytes(r));
        if reduce {
            b.reduce(r + 1, bytes(r));
        }
    }
}

/// Odd ranks below `2·rem` give their partner its result.
fn fold_out(b: &mut Builder, rem: usize, bytes: impl Fn(usize) -> u64) {
    for r in (0..2 * rem).step_by(2) {
        b.send(r + 1, r, bytes(r));
        b.recv(r, r + 1, bytes(r));
    }
}

/// The bytes of chunks `a..b` of `c`, in constant time (prefix sums): summing each range as a
/// step needs it made building Rabenseifner's schedule O(P²), 10 s on 131,072 ranks.
fn sums(c: &[u64]) -> impl Fn(usize, usize) -> u64 {
    let mut prefix = Vec::with_capacity(c.len() + 1);
    prefix.push(0u64);
    for &x in c {
        prefix.push(prefix.last().expect("pushed") + x);
    }
    move |a, b| prefix[b] - prefix[a]
}

/// Recursive halving over the core: a core rank ends with the reduced chunk of its own index.
fn halving(b: &mut Builder, p2: usize, rem: usize, c: &[u64], reduce: bool) {
    let sum = sums(c);
    for nr in 0..p2 {
        let (mut lo, mut hi) = (0, p2);
        let mut mask = p2 >> 1;
        while mask > 0 {
            let mid = lo + (hi - lo) / 2;
            let (keep, give) = if nr & mask == 0 {
                ((lo, mid), (mid, hi))
            } else {
                ((mid, hi), (lo, mid))
            };
            let (kept, given) = (sum(keep.0, keep.1), sum(give.0, give.1));
            let partner = real_rank(nr ^ mask, rem);
            b.sendrecv(real_rank(nr, rem), partner, given, partner, kept);
            if reduce {
                b.reduce(real_rank(nr, rem), kept);
            }
            (lo, hi) = keep;
            mask >>= 1;
        }
    }
}

/// Recursive doubling over the core: a core rank starts with chunk `nr` and ends with all.
fn doubling(b: &mut Builder, p2: usize, rem: usize, c: &[u64]) {
    let sum = sums(c);
    for nr in 0..p2 {
        let mut mask = 1;
        while mask < p2 {
            let mine = nr & !(mask - 1);
            let theirs = (nr ^ mask) & !(mask - 1);
            let partner = real_rank(nr ^ mask, rem);
            b.sendrecv(
                real_rank(nr, rem),
                partner,
                sum(mine, mine + mask),
                partner,
                sum(theirs, theirs + mask),
            );
            mask <<= 1;
        }
    }
}

/// Recursive-doubling allreduce: exchange and reduce whole vectors with `r XOR 2^k`.
pub fn allreduce_recursive_doubling(b: &mut Builder, bytes: u64) {
    let (p2, rem) = fold(b.p);
    fold_in(b, rem, |_| bytes, true);
    for r in 0..b.p {
        let Some(nr) = core_rank(r, rem) else {
            continue;
        };
        let mut mask = 1;
        while mask < p2 {
            let partner = real_rank(nr ^ mask, rem);
            b.sendrecv(r, partner, bytes, partner, bytes);
            b.reduce(r, bytes);
            mask <<= 1;
        }
    }
    fold_out(b, rem, |_| bytes);
}

/// Rabenseifner: reduce-scatter by recursive halving, then allgather by recursive doubling.
pub fn allreduce_rabenseifner(b: &mut Builder, bytes: u64) {
    let (p2, rem) = fold(b.p);
    let c = chunks(bytes, p2);
    fold_in(b, rem, |_| bytes, true);
    halving(b, p2, rem, &c, true);
    doubling(b, p2, rem, &c);
    fold_out(b, rem, |_| bytes);
}

/// Rabenseifner's reduce: reduce-scatter by recursive halving, then a binomial gather of the
/// chunks to core rank 0 (and on to the root when that rank was folded away).
pub fn reduce_rabenseifner(b: &mut Builder, bytes: u64) {
    let (p2, rem) = fold(b.p);
    let c = chunks(bytes, p2);
    fold_in(b, rem, |_| bytes, true);
    halving(b, p2, rem, &c, true);
    // Children before parents, so that a rank's receives precede its send to its parent.
    for nr in (0..p2).rev() {
        let lsb = if nr == 0 {
            p2
        } else {
            1 << nr.trailing_zeros()
        };
        let mut m = 1;
        while m < lsb {
            let from = real_rank(nr + m, rem);
            let got: u64 = c[nr + m..nr + 2 * m].iter().sum();
            b.send(from, real_rank(nr, rem), got);
            b.recv(real_rank(nr, rem), from, got);
            m <<= 1;
        }
    }
    let head = real_rank(0, rem);
    if head != 0 {
        b.send(head, 0, bytes);
        b.recv(0, head, bytes);
    }
}

/// Ring reduce-scatter then ring allgather of `P` chunks, rank after rank (a schedule built so
/// is kept as built, not sorted by rank: 0.8 GB copied on 4,096 ranks).
pub fn allreduce_ring(b: &mut Builder, bytes: u64) {
    let c = chunks(bytes, b.p);
    for r in 0..b.p {
        ring_reduce_scatter(b, &c, r);
        ring_allgather(b, &c, r);
    }
}

/// Rank `vr`'s steps of a ring reduce-scatter of chunks `c`: in step `i` it passes chunk
/// `vr − i − 1` on to `vr + 1` and reduces chunk `vr − i − 2` from `vr − 1` into its own.
fn ring_reduce_scatter(b: &mut Builder, c: &[u64], vr: usize) {
    let (p, next, prev) = (b.p, b.next(vr), b.prev(vr));
    let (mut out, mut inn) = (prev, b.prev(prev));
    for _ in 1..p {
        b.sendrecv(vr, next, c[out], prev, c[inn]);
        b.reduce(vr, c[inn]);
        (out, inn) = (inn, b.prev(inn));
    }
}

/// Rank `vr`'s steps of a ring allgather of chunks `c`: in step `i` it passes chunk `vr − i`
/// on to `vr + 1` and takes chunk `vr − i − 1` from `vr − 1`.
pub(super) fn ring_allgather(b: &mut Builder, c: &[u64], vr: usize) {
    let (p, next, prev) = (b.p, b.next(vr), b.prev(vr));
    let (mut out, mut inn) = (vr, prev);
    for _ in 1..p {
        b.sendrecv(vr, next, c[out], prev, c[inn]);
        (out, inn) = (inn, b.prev(inn));
    }
}

/// Ring allgather of `bytes` per rank.
pub fn allgather_ring(b: &mut Builder, bytes: u64) {
    let c = vec![bytes; b.p];
    for r in 0..b.p {
        ring_allgather(b, &c, r);
    }
}

/// Recursive-doubling allgather; folded ranks hand their block in and get all others back.
pub fn allgather_recursive_doubling(b: &mut Builder, bytes: u64) {
    let p = b.p as u64;
    let (p2, rem) = fold(b.p);
    let c: Vec<u64> = (0..p2)
        .map(|nr| if nr < rem { 2 * bytes } else { bytes })
        .collect();
    fold_in(b, rem, |_| bytes, false);
    doubling(b, p2, rem, &c);
    fold_out(b, rem, |_| (p - 1) * bytes);
}

/// Bruck's allgather: `⌈log2 P⌉` rounds, round `k` passing `min(2^k, P − 2^k)` blocks.
pub fn allgather_bruck(b: &mut Builder, bytes: u64) {
    let p = b.p;
    let mut d = 1;
    while d < p {
        let n = d.min(p - d) as u64 * bytes;
        for r in 0..p {
            b.sendrecv(r, (r + p - d) % p, n, (r + d) % p, n);
        }
        d <<= 1;
    }
}

/// Pairwise exchange: in step `i` rank `r` sends to `r + i` and receives from `r − i`.
pub fn alltoall_pairwise(b: &mut Builder, bytes: u64) {
    let p = b.p;
    for r in 0..p {
        for i in 1..p {
            b.sendrecv(r, (r + i) % p, bytes, (r + p - i) % p, bytes);
        }
    }
}

/// Bruck's alltoall: round `k` sends the blocks whose index has bit `k` set to `r + 2^k`.
pub fn alltoall_bruck(b: &mut Builder, bytes: u64) {
    let p = b.p;
    let mut d = 1;
    while d < p {
        let n = (0..p).filter(|j| j & d != 0).count() as u64 * bytes;
        for r in 0..p {
            b.sendrecv(r, (r + d) % p, n, (r + p - d) % p, n);
        }
        d <<= 1;
    }
}

/// Ring reduce-scatter of `bytes` per rank.
pub fn reduce_scatter_ring(b: &mut Builder, bytes: u64) {
    let c = vec![bytes; b.p];
    for r in 0..b.p {
        ring_reduce_scatter(b, &c, r);
    }
}

/// Pairwise reduce-scatter: step `i` sends `r + i` its block and reduces the one from `r − i`.
pub fn reduce_scatter_pairwise(b: &mut Builder, bytes: u64) {
    let p = b.p;
    for r in 0..p {
        for i in 1..p {
            b.sendrecv(r, (r + i) % p, bytes, (r + p - i) % p, bytes);
            b.reduce(r, bytes);
        }
    }
}

/// Recursive-halving reduce-scatter; folded ranks hand in the whole vector, get their block back.
pub fn reduce_scatter_recursive_halving(b: &mut Builder, bytes: u64) {
    let p = b.p as u64;
    let (p2, rem) = fold(b.p);
    let c: Vec<u64> = (0..p2)
        .map(|nr| if nr < rem { 2 * bytes } else { bytes })
        .collect();
    fold_in(b, rem, |_| p * bytes, true);
    halving(b, p2, rem, &c, true);
    fold_out(b, rem, |_| bytes);
}

/// MPICH's recursive-doubling scan: exchange partial sums with `r XOR 2^k`; a partner below
/// `r` also folds into the result.
pub fn scan_recursive_doubling(b: &mut Builder, bytes: u64) {
    let p = b.p;
    for r in 0..p {
        let mut mask = 1;
        while mask < p {
            let partner = r ^ mask;
            if partner < p {
                b.sendrecv(r, partner, bytes, partner, bytes);
                b.reduce(r, bytes);
                if partner < r {
                    b.reduce(r, bytes);
                }
            }
            mask <<= 1;
        }
    }
}

/// A chain: rank `r` receives the prefix of `0..r`, reduces, and passes it on.
pub fn scan_linear(b: &mut Builder, bytes: u64) {
    let p = b.p;
    for r in 0..p {
        if r > 0 {
            b.recv(r, r - 1, bytes);
            b.reduce(r, bytes);
        }
        if r + 1 < p {
            b.send(r, r + 1, bytes);
        }
    }
}
