//! Collectives where every rank both sends and receives: barrier, allreduce, allgather,
//! alltoall, reduce-scatter, scan (MPICH's algorithms, P not a power of two included). Each
//! rank's steps are built apart from the others' (`Builder::each_rank`), on the threads.

use super::{Builder, RankBuilder, chunks, ring_next, ring_prev};

/// Dissemination barrier: in round `k` rank `r` signals `r + 2^k` and hears from `r − 2^k`.
pub fn barrier_dissemination(b: &mut Builder) {
    let p = b.p;
    // Peers below 2P, which the builder takes modulo P without a division.
    b.each_rank(|s, r| {
        for d in std::iter::successors(Some(1), |d| Some(d << 1)).take_while(|&d| d < p) {
            s.sendrecv(r + d, 0, r + p - d, 0);
        }
    });
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

/// Rank `r`'s part in handing in: an even rank below `2·rem` hands its `bytes` to the next odd
/// rank, which reduces them if `reduce`.
fn fold_in(s: &mut RankBuilder, r: usize, rem: usize, bytes: u64, reduce: bool) {
    match r {
        r if r >= 2 * rem => {}
        r if r % 2 == 0 => s.send(r + 1, bytes),
        r => {
            s.recv(r - 1, bytes);
            if reduce {
                s.reduce(bytes);
            }
        }
    }
}

/// Rank `r`'s part in handing back: an odd rank below `2·rem` gives its partner its result.
fn fold_out(s: &mut RankBuilder, r: usize, rem: usize, bytes: u64) {
    match r {
        r if r >= 2 * rem => {}
        r if r % 2 == 0 => s.recv(r + 1, bytes),
        r => s.send(r - 1, bytes),
    }
}

/// The bytes of chunks `a..b` of `c`, in constant time (prefix sums): summing each range as a
/// step needs it would make building Rabenseifner's schedule O(P²).
fn sums(c: &[u64]) -> impl Fn(usize, usize) -> u64 + Sync + use<> {
    let mut prefix = Vec::with_capacity(c.len() + 1);
    prefix.push(0u64);
    for &x in c {
        prefix.push(prefix.last().expect("pushed") + x);
    }
    move |a, b| prefix[b] - prefix[a]
}

/// Core rank `nr`'s recursive halving over the core of `p2` ranks, chunk sizes `sum`: it ends
/// with the reduced chunk of its own index.
fn halving(
    s: &mut RankBuilder,
    nr: usize,
    p2: usize,
    rem: usize,
    sum: &impl Fn(usize, usize) -> u64,
    reduce: bool,
) {
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
        s.sendrecv(partner, given, partner, kept);
        if reduce {
            s.reduce(kept);
        }
        (lo, hi) = keep;
        mask >>= 1;
    }
}

/// Core rank `nr`'s recursive doubling over the core of `p2` ranks, chunk sizes `sum`: it
/// starts with chunk `nr` and ends with all.
fn doubling(
    s: &mut RankBuilder,
    nr: usize,
    p2: usize,
    rem: usize,
    sum: &impl Fn(usize, usize) -> u64,
) {
    let mut mask = 1;
    while mask < p2 {
        let mine = nr & !(mask - 1);
        let theirs = (nr ^ mask) & !(mask - 1);
        let partner = real_rank(nr ^ mask, rem);
        s.sendrecv(
            partner,
            sum(mine, mine + mask),
            partner,
            sum(theirs, theirs + mask),
        );
        mask <<= 1;
    }
}

/// Recursive-doubling allreduce: exchange and reduce whole vectors with `r XOR 2^k`.
pub fn allreduce_recursive_doubling(b: &mut Builder, bytes: u64) {
    let (p2, rem) = fold(b.p);
    b.each_rank(|s, r| {
        fold_in(s, r, rem, bytes, true);
        if let Some(nr) = core_rank(r, rem) {
            let mut mask = 1;
            while mask < p2 {
                let partner = real_rank(nr ^ mask, rem);
                s.sendrecv(partner, bytes, partner, bytes);
                s.reduce(bytes);
                mask <<= 1;
            }
        }
        fold_out(s, r, rem, bytes);
    });
}

/// Rabenseifner: reduce-scatter by recursive halving, then allgather by recursive doubling.
pub fn allreduce_rabenseifner(b: &mut Builder, bytes: u64) {
    let (p2, rem) = fold(b.p);
    let sum = sums(&chunks(bytes, p2));
    b.each_rank(|s, r| {
        fold_in(s, r, rem, bytes, true);
        if let Some(nr) = core_rank(r, rem) {
            halving(s, nr, p2, rem, &sum, true);
            doubling(s, nr, p2, rem, &sum);
        }
        fold_out(s, r, rem, bytes);
    });
}

/// Rabenseifner's reduce: reduce-scatter by recursive halving, then a binomial gather of the
/// chunks to core rank 0 (and on to the root when that rank was folded away): a core rank
/// receives its children's chunks, then sends them with its own to its parent.
pub fn reduce_rabenseifner(b: &mut Builder, bytes: u64) {
    let (p2, rem) = fold(b.p);
    let sum = sums(&chunks(bytes, p2));
    let head = real_rank(0, rem);
    b.each_rank(|s, r| {
        fold_in(s, r, rem, bytes, true);
        if let Some(nr) = core_rank(r, rem) {
            halving(s, nr, p2, rem, &sum, true);
            let lsb = if nr == 0 {
                p2
            } else {
                1 << nr.trailing_zeros()
            };
            let mut m = 1;
            while m < lsb {
                s.recv(real_rank(nr + m, rem), sum(nr + m, nr + 2 * m));
                m <<= 1;
            }
            if nr != 0 {
                s.send(real_rank(nr - lsb, rem), sum(nr, nr + lsb));
            }
        }
        match r {
            _ if head == 0 => {}
            0 => s.recv(head, bytes),
            r if r == head => s.send(0, bytes),
            _ => {}
        }
    });
}

/// Ring reduce-scatter then ring allgather of `P` chunks.
pub fn allreduce_ring(b: &mut Builder, bytes: u64) {
    let c = chunks(bytes, b.p);
    b.each_rank(|s, r| {
        ring_reduce_scatter(s, &c, r);
        ring_allgather(s, &c, r);
    });
}

/// Rank `vr`'s steps of a ring reduce-scatter of chunks `c`: in step `i` it passes chunk
/// `vr − i − 1` on to `vr + 1` and reduces chunk `vr − i − 2` from `vr − 1` into its own
/// (counted down without a division).
fn ring_reduce_scatter(s: &mut RankBuilder, c: &[u64], vr: usize) {
    let p = s.p;
    let (next, prev) = (ring_next(p, vr), ring_prev(p, vr));
    let (mut out, mut inn) = (prev, ring_prev(p, prev));
    for _ in 1..p {
        s.sendrecv(next, c[out], prev, c[inn]);
        s.reduce(c[inn]);
        (out, inn) = (inn, ring_prev(p, inn));
    }
}

/// Rank `vr`'s steps of a ring allgather of chunks `c`: in step `i` it passes chunk `vr − i`
/// on to `vr + 1` and takes chunk `vr − i − 1` from `vr − 1`.
pub(super) fn ring_allgather(s: &mut RankBuilder, c: &[u64], vr: usize) {
    let p = s.p;
    let (next, prev) = (ring_next(p, vr), ring_prev(p, vr));
    let (mut out, mut inn) = (vr, prev);
    for _ in 1..p {
        s.sendrecv(next, c[out], prev, c[inn]);
        (out, inn) = (inn, ring_prev(p, inn));
    }
}

/// Ring allgather of `bytes` per rank.
pub fn allgather_ring(b: &mut Builder, bytes: u64) {
    let c = vec![bytes; b.p];
    b.each_rank(|s, r| ring_allgather(s, &c, r));
}

/// Recursive-doubling allgather; folded ranks hand their block in and get all others back.
pub fn allgather_recursive_doubling(b: &mut Builder, bytes: u64) {
    let p = b.p as u64;
    let (p2, rem) = fold(b.p);
    let c: Vec<u64> = (0..p2)
        .map(|nr| if nr < rem { 2 * bytes } else { bytes })
        .collect();
    let sum = sums(&c);
    b.each_rank(|s, r| {
        fold_in(s, r, rem, bytes, false);
        if let Some(nr) = core_rank(r, rem) {
            doubling(s, nr, p2, rem, &sum);
        }
        fold_out(s, r, rem, (p - 1) * bytes);
    });
}

/// Bruck's allgather: `⌈log2 P⌉` rounds, round `k` passing `min(2^k, P − 2^k)` blocks to
/// `r − 2^k`.
pub fn allgather_bruck(b: &mut Builder, bytes: u64) {
    let p = b.p;
    b.each_rank(|s, r| {
        for d in std::iter::successors(Some(1), |d| Some(d << 1)).take_while(|&d| d < p) {
            let n = d.min(p - d) as u64 * bytes;
            s.sendrecv(r + p - d, n, r + d, n);
        }
    });
}

/// Pairwise exchange: in step `i` rank `r` sends to `r + i` and receives from `r − i`.
pub fn alltoall_pairwise(b: &mut Builder, bytes: u64) {
    b.each_rank(|s, r| pairwise(s, r, bytes, false));
}

/// Rank `r`'s exchanges with `r + i` and `r − i` for `i` in `1..P`, each reduced if `reduce`.
fn pairwise(s: &mut RankBuilder, r: usize, bytes: u64, reduce: bool) {
    let p = s.p;
    let (mut to, mut from) = (ring_next(p, r), ring_prev(p, r));
    for _ in 1..p {
        s.sendrecv(to, bytes, from, bytes);
        if reduce {
            s.reduce(bytes);
        }
        (to, from) = (ring_next(p, to), ring_prev(p, from));
    }
}

/// Bruck's alltoall: round `k` sends the blocks whose index has bit `k` set to `r + 2^k`.
pub fn alltoall_bruck(b: &mut Builder, bytes: u64) {
    let p = b.p;
    let rounds: Vec<(usize, u64)> = std::iter::successors(Some(1), |d| Some(d << 1))
        .take_while(|&d| d < p)
        .map(|d| (d, (0..p).filter(|j| j & d != 0).count() as u64 * bytes))
        .collect();
    b.each_rank(|s, r| {
        for &(d, n) in &rounds {
            s.sendrecv(r + d, n, r + p - d, n);
        }
    });
}

/// Ring reduce-scatter of `bytes` per rank.
pub fn reduce_scatter_ring(b: &mut Builder, bytes: u64) {
    let c = vec![bytes; b.p];
    b.each_rank(|s, r| ring_reduce_scatter(s, &c, r));
}

/// Pairwise reduce-scatter: step `i` sends `r + i` its block and reduces the one from `r − i`.
pub fn reduce_scatter_pairwise(b: &mut Builder, bytes: u64) {
    b.each_rank(|s, r| pairwise(s, r, bytes, true));
}

/// Recursive-halving reduce-scatter; folded ranks hand in the whole vector, get their block back.
pub fn reduce_scatter_recursive_halving(b: &mut Builder, bytes: u64) {
    let p = b.p as u64;
    let (p2, rem) = fold(b.p);
    let c: Vec<u64> = (0..p2)
        .map(|nr| if nr < rem { 2 * bytes } else { bytes })
        .collect();
    let sum = sums(&c);
    b.each_rank(|s, r| {
        fold_in(s, r, rem, p * bytes, true);
        if let Some(nr) = core_rank(r, rem) {
            halving(s, nr, p2, rem, &sum, true);
        }
        fold_out(s, r, rem, bytes);
    });
}

/// MPICH's recursive-doubling scan: exchange partial sums with `r XOR 2^k`; a partner below
/// `r` also folds into the result.
pub fn scan_recursive_doubling(b: &mut Builder, bytes: u64) {
    let p = b.p;
    b.each_rank(|s, r| {
        let mut mask = 1;
        while mask < p {
            let partner = r ^ mask;
            if partner < p {
                s.sendrecv(partner, bytes, partner, bytes);
                s.reduce(bytes);
                if partner < r {
                    s.reduce(bytes);
                }
            }
            mask <<= 1;
        }
    });
}

/// A chain: rank `r` receives the prefix of `0..r`, reduces, and passes it on.
pub fn scan_linear(b: &mut Builder, bytes: u64) {
    let p = b.p;
    b.each_rank(|s, r| {
        if r > 0 {
            s.recv(r - 1, bytes);
            s.reduce(bytes);
        }
        if r + 1 < p {
            s.send(r + 1, bytes);
        }
    });
}
