//! Open MPI 4.1's default algorithm choice: the `coll/tuned` component's fixed decision rules,
//! transcribed, and each Open MPI algorithm mapped to the nearest one this crate builds.
//!
//! # Source
//!
//! `ompi/mca/coll/tuned/coll_tuned_decision_fixed.c` as rewritten for Open MPI 4.1 (the tables
//! "generated based off of results that were gathered using the ompi-collectives-tuning
//! package … averaged to generate the algorithm switch points"), functions
//! `ompi_coll_tuned_{barrier,bcast,reduce,allreduce,gather,scatter,allgather,alltoall,
//! reduce_scatter}_intra_dec_fixed`. Transcribed from the copy in
//! `nadavhalahmi/ompi` at commit `a6fbf4c48d62c7d9408430e670d75c9a5b4c58f5` (a fork at the
//! 4.1 code: `int` counts, `OPAL_OUTPUT`; its one local change, a forced `alg = 10` at the top
//! of the bcast function, is ignored) and checked table by table against
//! `jtronge/ompi` at `0f02736fb5bdc7277980e603e071ad784324900e` (the same tables on the
//! later big-count signatures) and `kunpengcompute/hmpi` at
//! `0e41238cd4c2487059f12c1ad420c9b47704d8c8` (Huawei's 4.1-based fork, which differs only in
//! vendor changes for `P ≥ 4096`/`8192`: allreduce, alltoall, bcast, reduce_scatter — not
//! used here). The 2007 rules (Grig/MX cluster, a handful of thresholds) are older and not
//! these.
//!
//! Every table is a chain of `communicator_size < P_k` branches, each a chain of
//! `total_dsize < S_j` branches (`==` only for the `P == 2` rows), first match wins; the
//! constants below keep that shape, threshold for threshold. Only the commutative branches are
//! transcribed: **every reduction is assumed commutative** (MPI's predefined operations are);
//! Open MPI's separate non-commutative tables for reduce, allreduce and reduce_scatter are not
//! used.
//!
//! # Message size
//!
//! `total_dsize` as each function computes it, from this crate's [`Spec::bytes`](super::Spec):
//!
//! | operation | Open MPI's `total_dsize` | from `Spec::bytes` |
//! |---|---|---|
//! | barrier | — (communicator size only) | — |
//! | bcast | `dsize * count` (the message) | `bytes` |
//! | reduce, allreduce | `dsize * count` (the vector) | `bytes` |
//! | gather | `dsize * rcount` at the root, `dsize * scount` elsewhere (one block) | `bytes` |
//! | scatter | `dsize * scount` at the root, `dsize * rcount` elsewhere (one block) | `bytes` |
//! | allgather | `dsize * scount` (one block) | `bytes` |
//! | alltoall | `dsize * scount` (one pair's block; 4.1 does not multiply by `P`) | `bytes` |
//! | reduce_scatter | `dsize * Σ rcounts` (the whole vector) | `bytes * P` |
//!
//! # Segment size
//!
//! The 4.1 fixed rules call every `*_intra_do_this` with `faninout = 0, segsize = 0`, so no
//! algorithm is segmented: a bcast chain or pipeline sends the whole message down a chain
//! (`ompi_coll_base_bcast_intra_generic` with one segment), and the segmented ring allreduce
//! with `segcount = count` falls back to the plain ring. Where a rule maps to this crate's
//! `pipeline` bcast the segment returned is therefore the whole message.
//!
//! # Mapping
//!
//! | operation | Open MPI algorithm (number) | here | note |
//! |---|---|---|---|
//! | barrier | linear (1), double_ring (2), recursive_doubling (3), bruck (4), two_proc (5), tree (6) | `dissemination` | the only barrier built; Bruck's barrier *is* dissemination, recursive doubling has the same ⌈log₂P⌉ rounds; linear (P 4–7) and tree (P 256–511, 1024–4095) are approximated |
//! | bcast | basic_linear (1) | `pipeline`, one segment | no linear bcast is built; the unsegmented chain has the same `(P−1)·m` bytes leaving one rank in turn, with `P−1` latencies instead of one |
//! | bcast | chain (2), pipeline (3) | `pipeline`, one segment | `segsize = 0`: the whole message down a chain (fan-out 0 → a single chain) |
//! | bcast | split_binary_tree (4), binary_tree (5), binomial (6), knomial (7) | `binomial` | log-depth trees; the split binary tree's halving of the message is not modeled |
//! | bcast | scatter_allgather (8), scatter_allgather_ring (9) | `scatter-allgather` | |
//! | reduce | linear (1) | `linear` | |
//! | reduce | chain (2), pipeline (3) | `linear` | unsegmented chain: `P−1` transfers and reductions in sequence, like the root's serial receives |
//! | reduce | binary (4), binomial (5), in-order_binary (6) | `binomial` | |
//! | reduce | rabenseifner (7) | `rabenseifner` | |
//! | allreduce | basic_linear (1), nonoverlapping (2) | `binomial` | reduce then bcast (non-overlapping uses the reduce and bcast of the communicator: here both binomial) |
//! | allreduce | recursive_doubling (3) | `recursive-doubling` | |
//! | allreduce | ring (4), segmented_ring (5) | `ring` | `segsize = 0` makes the segmented ring the plain ring |
//! | allreduce | rabenseifner (6) | `rabenseifner` | |
//! | gather | basic_linear (1), linear_sync (3) | `linear` | |
//! | gather | binomial (2) | `binomial` | |
//! | scatter | basic_linear (1), linear_nb (3) | `linear` | |
//! | scatter | binomial (2) | `binomial` | |
//! | allgather | linear (1) | `ring` | not chosen by the 4.1 rules |
//! | allgather | bruck (2) | `bruck` | |
//! | allgather | recursive_doubling (3) | `recursive-doubling` | Open MPI falls back to Bruck when `P` is not a power of two; so does this mapping |
//! | allgather | ring (4), neighbor (5) | `ring` | neighbour exchange: `P/2` steps of two blocks, the ring's bytes in half the rounds |
//! | allgather | two_proc (6) | `recursive-doubling` | one exchange, as for any `P = 2` algorithm |
//! | alltoall | linear (1), linear_sync (4) | `linear` | |
//! | alltoall | pairwise (2), two_proc (5) | `pairwise` | |
//! | alltoall | modified_bruck (3) | `bruck` | |
//! | reduce_scatter | non-overlapping (1) | `pairwise` | reduce to rank 0 then a linear scatterv: `O(P)` messages, as pairwise; not built as such |
//! | reduce_scatter | recursive_halving (2), butterfly (4) | `recursive-halving` | the butterfly is a log-round halving too |
//! | reduce_scatter | ring (3) | `ring` | |
//! | scan, exscan | — (no fixed rules in 4.1) | `linear` | `coll/tuned` has no fixed rule for them; with no dynamic rule its scan falls back to `ompi_coll_base_scan_intra_linear` (exscan taken to do the same), a chain like ours |
//!
//! Not distinguished, because the traced routine reaches here as its [`Op`]: the v-variants
//! (Open MPI 4.1 has its own allgatherv and alltoallv tables and no gatherv/scatterv rules —
//! those run linear — while here they take the regular operation's table on their largest
//! block) and `MPI_Reduce_scatter_block` (Open MPI's own table over `dsize * rcount`; here the
//! reduce_scatter table over `bytes * P`).

use super::Op;

/// One `communicator_size` branch: it applies when `lo <= P < hi`; then the first
/// `(S, alg)` with `total_dsize < S` gives the algorithm number.
type Row = (usize, usize, &'static [(u64, u8)]);

const ANY: u64 = u64::MAX;
const ALL: usize = usize::MAX;

/// `ompi_coll_tuned_barrier_intra_dec_fixed` (communicator size only).
const BARRIER: &[Row] = &[
    (0, 4, &[(ANY, 3)]),
    (0, 8, &[(ANY, 1)]),
    (0, 64, &[(ANY, 3)]),
    (0, 256, &[(ANY, 4)]),
    (0, 512, &[(ANY, 6)]),
    (0, 1024, &[(ANY, 4)]),
    (0, 4096, &[(ANY, 6)]),
    (0, ALL, &[(ANY, 4)]),
];

/// `ompi_coll_tuned_bcast_intra_dec_fixed`.
const BCAST: &[Row] = &[
    (
        0,
        4,
        &[
            (32, 3),
            (256, 5),
            (512, 3),
            (1024, 7),
            (32768, 1),
            (131072, 5),
            (262144, 2),
            (524288, 1),
            (1048576, 6),
            (ANY, 5),
        ],
    ),
    (
        0,
        8,
        &[
            (64, 5),
            (128, 6),
            (2048, 5),
            (8192, 6),
            (1048576, 1),
            (ANY, 2),
        ],
    ),
    (
        0,
        16,
        &[(8, 7), (64, 5), (4096, 7), (16384, 5), (32768, 6), (ANY, 1)],
    ),
    (0, 32, &[(4096, 7), (1048576, 6), (ANY, 8)]),
    (0, 64, &[(2048, 6), (ANY, 7)]),
    (0, 128, &[(ANY, 7)]),
    (
        0,
        256,
        &[(2, 6), (16384, 5), (32768, 1), (65536, 5), (ANY, 7)],
    ),
    (0, 1024, &[(16384, 7), (32768, 4), (ANY, 7)]),
    (0, 2048, &[(524288, 7), (ANY, 8)]),
    (0, 4096, &[(262144, 7), (ANY, 8)]),
    (0, ALL, &[(8192, 7), (16384, 5), (262144, 7), (ANY, 8)]),
];

/// `ompi_coll_tuned_reduce_intra_dec_fixed`, commutative branch.
const REDUCE: &[Row] = &[
    (
        0,
        4,
        &[
            (8, 7),
            (16, 4),
            (32, 3),
            (262144, 1),
            (524288, 3),
            (1048576, 2),
            (ANY, 3),
        ],
    ),
    (
        0,
        8,
        &[
            (4096, 4),
            (65536, 2),
            (262144, 5),
            (524288, 1),
            (1048576, 5),
            (ANY, 1),
        ],
    ),
    (0, 16, &[(8192, 4), (ANY, 5)]),
    (0, 32, &[(4096, 4), (ANY, 5)]),
    (0, 256, &[(ANY, 5)]),
    (0, 512, &[(8192, 5), (16384, 6), (ANY, 5)]),
    (0, 2048, &[(ANY, 5)]),
    (
        0,
        4096,
        &[(512, 5), (1024, 6), (8192, 5), (16384, 6), (ANY, 5)],
    ),
    (
        0,
        ALL,
        &[
            (16, 5),
            (32, 6),
            (1024, 5),
            (2048, 6),
            (8192, 5),
            (16384, 6),
            (ANY, 5),
        ],
    ),
];

/// `ompi_coll_tuned_allreduce_intra_dec_fixed`, commutative branch.
const ALLREDUCE: &[Row] = &[
    (
        0,
        4,
        &[
            (8, 4),
            (4096, 3),
            (8192, 4),
            (16384, 3),
            (65536, 4),
            (262144, 5),
            (ANY, 6),
        ],
    ),
    (0, 8, &[(16, 4), (8192, 3), (ANY, 6)]),
    (0, 16, &[(8192, 3), (ANY, 6)]),
    (0, 32, &[(64, 5), (4096, 3), (ANY, 6)]),
    (0, 64, &[(128, 5), (ANY, 6)]),
    (0, 128, &[(262144, 3), (ANY, 6)]),
    (0, 256, &[(131072, 2), (262144, 3), (ANY, 6)]),
    (0, 512, &[(4096, 2), (ANY, 6)]),
    (0, 2048, &[(2048, 2), (16384, 3), (ANY, 6)]),
    (0, 4096, &[(2048, 2), (4096, 5), (16384, 3), (ANY, 6)]),
    (0, ALL, &[(2048, 2), (16384, 5), (32768, 3), (ANY, 6)]),
];

/// `ompi_coll_tuned_gather_intra_dec_fixed`.
const GATHER: &[Row] = &[
    (
        0,
        4,
        &[
            (2, 3),
            (4, 1),
            (32768, 2),
            (65536, 1),
            (131072, 2),
            (ANY, 3),
        ],
    ),
    (
        0,
        8,
        &[(1024, 2), (8192, 1), (32768, 2), (262144, 1), (ANY, 3)],
    ),
    (0, 256, &[(ANY, 2)]),
    (0, 512, &[(2048, 2), (8192, 1), (ANY, 2)]),
    (0, ALL, &[(ANY, 2)]),
];

/// `ompi_coll_tuned_scatter_intra_dec_fixed`.
const SCATTER: &[Row] = &[
    (0, 4, &[(2, 3), (131072, 1), (262144, 3), (ANY, 1)]),
    (
        0,
        8,
        &[
            (2048, 2),
            (4096, 1),
            (8192, 2),
            (32768, 1),
            (1048576, 3),
            (ANY, 1),
        ],
    ),
    (0, 16, &[(16384, 2), (1048576, 3), (ANY, 1)]),
    (0, 32, &[(16384, 2), (32768, 1), (ANY, 3)]),
    (0, 64, &[(512, 2), (8192, 3), (16384, 2), (ANY, 3)]),
    (0, ALL, &[(512, 2), (ANY, 3)]),
];

/// `ompi_coll_tuned_allgather_intra_dec_fixed`.
const ALLGATHER: &[Row] = &[
    (2, 3, &[(ANY, 6)]),
    (0, 32, &[(ANY, 3)]),
    (0, 64, &[(1024, 3), (65536, 5), (ANY, 4)]),
    (0, 128, &[(512, 3), (65536, 5), (ANY, 4)]),
    (
        0,
        256,
        &[(512, 3), (131072, 5), (524288, 4), (1048576, 5), (ANY, 4)],
    ),
    (
        0,
        512,
        &[
            (32, 3),
            (128, 2),
            (1024, 3),
            (131072, 5),
            (524288, 4),
            (1048576, 5),
            (ANY, 4),
        ],
    ),
    (0, 1024, &[(64, 3), (256, 2), (2048, 3), (ANY, 5)]),
    (
        0,
        2048,
        &[
            (4, 3),
            (8, 2),
            (16, 3),
            (32, 2),
            (256, 3),
            (512, 2),
            (4096, 3),
            (ANY, 5),
        ],
    ),
    (0, 4096, &[(32, 2), (128, 3), (512, 2), (4096, 3), (ANY, 5)]),
    (
        0,
        ALL,
        &[(2, 3), (8, 2), (16, 3), (512, 2), (4096, 3), (ANY, 5)],
    ),
];

/// `ompi_coll_tuned_alltoall_intra_dec_fixed`.
const ALLTOALL: &[Row] = &[
    (
        2,
        3,
        &[
            (2, 2),
            (4, 5),
            (16, 2),
            (64, 5),
            (256, 2),
            (4096, 5),
            (32768, 2),
            (262144, 4),
            (1048576, 5),
            (ANY, 2),
        ],
    ),
    (
        0,
        8,
        &[
            (8192, 4),
            (16384, 1),
            (65536, 4),
            (524288, 1),
            (1048576, 2),
            (ANY, 1),
        ],
    ),
    (0, 16, &[(262144, 4), (ANY, 1)]),
    (
        0,
        32,
        &[
            (4, 4),
            (512, 3),
            (8192, 4),
            (32768, 1),
            (262144, 4),
            (524288, 1),
            (ANY, 4),
        ],
    ),
    (0, 64, &[(512, 3), (524288, 1), (ANY, 4)]),
    (
        0,
        128,
        &[(1024, 3), (2048, 1), (4096, 4), (262144, 1), (ANY, 2)],
    ),
    (0, 256, &[(1024, 3), (2048, 4), (262144, 1), (ANY, 2)]),
    (0, 512, &[(1024, 3), (8192, 4), (32768, 1), (ANY, 2)]),
    (
        0,
        1024,
        &[
            (512, 3),
            (8192, 4),
            (16384, 1),
            (131072, 4),
            (262144, 1),
            (ANY, 2),
        ],
    ),
    (
        0,
        2048,
        &[
            (512, 3),
            (1024, 4),
            (2048, 1),
            (16384, 4),
            (262144, 1),
            (ANY, 4),
        ],
    ),
    (
        0,
        4096,
        &[(1024, 3), (4096, 4), (8192, 1), (131072, 4), (ANY, 1)],
    ),
    (
        0,
        ALL,
        &[
            (2048, 3),
            (8192, 4),
            (16384, 1),
            (32768, 4),
            (65536, 1),
            (ANY, 4),
        ],
    ),
];

/// `ompi_coll_tuned_reduce_scatter_intra_dec_fixed`, commutative branch.
const REDUCE_SCATTER: &[Row] = &[
    (0, 4, &[(65536, 3), (131072, 4), (ANY, 3)]),
    (0, 8, &[(8, 1), (262144, 2), (ANY, 3)]),
    (0, 32, &[(262144, 2), (ANY, 3)]),
    (0, 64, &[(64, 1), (2048, 2), (524288, 4), (ANY, 3)]),
    (
        0,
        128,
        &[(256, 1), (512, 2), (2048, 4), (4096, 2), (ANY, 4)],
    ),
    (0, 256, &[(256, 1), (512, 2), (ANY, 4)]),
    (0, 512, &[(256, 1), (1024, 2), (ANY, 4)]),
    (
        0,
        1024,
        &[(512, 1), (2048, 2), (8192, 4), (16384, 2), (ANY, 4)],
    ),
    (
        0,
        2048,
        &[(512, 1), (4096, 2), (16384, 4), (32768, 2), (ANY, 4)],
    ),
    (0, 4096, &[(512, 1), (4096, 2), (ANY, 4)]),
    (0, ALL, &[(1024, 1), (8192, 2), (ANY, 4)]),
];

/// The first matching row's first matching size.
fn pick(rows: &[Row], p: usize, total: u64) -> u8 {
    let (_, _, sizes) = rows
        .iter()
        .find(|(lo, hi, _)| *lo <= p && p < *hi)
        .expect("the last row takes any size");
    sizes
        .iter()
        .find(|(s, _)| total < *s)
        .map_or(sizes[sizes.len() - 1].1, |(_, a)| *a)
}

/// Open MPI's algorithm names, by number, as listed in each decision function.
fn ompi_names(op: Op) -> &'static [&'static str] {
    match op {
        Op::Barrier => &[
            "linear",
            "double_ring",
            "recursive_doubling",
            "bruck",
            "two_proc",
            "tree",
        ],
        Op::Bcast => &[
            "basic_linear",
            "chain",
            "pipeline",
            "split_binary_tree",
            "binary_tree",
            "binomial",
            "knomial",
            "scatter_allgather",
            "scatter_allgather_ring",
        ],
        Op::Reduce => &[
            "linear",
            "chain",
            "pipeline",
            "binary",
            "binomial",
            "in-order_binary",
            "rabenseifner",
        ],
        Op::Allreduce => &[
            "basic_linear",
            "nonoverlapping",
            "recursive_doubling",
            "ring",
            "segmented_ring",
            "rabenseifner",
        ],
        Op::Gather => &["basic_linear", "binomial", "linear_sync"],
        Op::Scatter => &["basic_linear", "binomial", "linear_nb"],
        Op::Allgather => &[
            "linear",
            "bruck",
            "recursive_doubling",
            "ring",
            "neighbor",
            "two_proc",
        ],
        Op::Alltoall => &[
            "linear",
            "pairwise",
            "modified_bruck",
            "linear_sync",
            "two_proc",
        ],
        Op::ReduceScatter => &["non-overlapping", "recursive_halving", "ring", "butterfly"],
        Op::Scan | Op::Exscan => &["linear"],
    }
}

/// Open MPI 4.1's choice for `op` on `comm_size` ranks with `bytes` as [`Spec::bytes`]
/// means it: the algorithm's number and name in Open MPI (scan and exscan: the base linear
/// algorithm, number 1, as no rule exists).
///
/// [`Spec::bytes`]: super::Spec
pub fn ompi_algorithm(op: Op, comm_size: usize, bytes: u64) -> (u8, &'static str) {
    let p = comm_size;
    let alg = match op {
        Op::Barrier => pick(BARRIER, p, 0),
        Op::Bcast => pick(BCAST, p, bytes),
        Op::Reduce => pick(REDUCE, p, bytes),
        Op::Allreduce => pick(ALLREDUCE, p, bytes),
        Op::Gather => pick(GATHER, p, bytes),
        Op::Scatter => pick(SCATTER, p, bytes),
        Op::Allgather => pick(ALLGATHER, p, bytes),
        Op::Alltoall => pick(ALLTOALL, p, bytes),
        Op::ReduceScatter => pick(REDUCE_SCATTER, p, bytes.saturating_mul(p as u64)),
        Op::Scan | Op::Exscan => 1,
    };
    (alg, ompi_names(op)[usize::from(alg) - 1])
}

/// The algorithm this crate builds for Open MPI 4.1's default choice (module docs: the
/// mapping), and the pipeline segment when it matters (`None`: the [`Spec`](super::Spec)
/// default stands). Reductions are taken as commutative.
pub fn tuned_algorithm(op: Op, comm_size: usize, bytes: u64) -> (&'static str, Option<u64>) {
    let (_, name) = ompi_algorithm(op, comm_size, bytes);
    let whole = Some(bytes.max(1));
    match (op, name) {
        (Op::Barrier, _) => ("dissemination", None),
        (Op::Bcast, "basic_linear" | "chain" | "pipeline") => ("pipeline", whole),
        (Op::Bcast, "scatter_allgather" | "scatter_allgather_ring") => ("scatter-allgather", None),
        (Op::Bcast, _) => ("binomial", None),
        (Op::Reduce, "linear" | "chain" | "pipeline") => ("linear", None),
        (Op::Reduce, "rabenseifner") => ("rabenseifner", None),
        (Op::Reduce, _) => ("binomial", None),
        (Op::Allreduce, "basic_linear" | "nonoverlapping") => ("binomial", None),
        (Op::Allreduce, "recursive_doubling") => ("recursive-doubling", None),
        (Op::Allreduce, "ring" | "segmented_ring") => ("ring", None),
        (Op::Allreduce, _) => ("rabenseifner", None),
        (Op::Gather | Op::Scatter, "binomial") => ("binomial", None),
        (Op::Gather | Op::Scatter, _) => ("linear", None),
        (Op::Allgather, "bruck") => ("bruck", None),
        (Op::Allgather, "recursive_doubling") if !comm_size.is_power_of_two() => ("bruck", None),
        (Op::Allgather, "recursive_doubling" | "two_proc") => ("recursive-doubling", None),
        (Op::Allgather, _) => ("ring", None),
        (Op::Alltoall, "linear" | "linear_sync") => ("linear", None),
        (Op::Alltoall, "modified_bruck") => ("bruck", None),
        (Op::Alltoall, _) => ("pairwise", None),
        (Op::ReduceScatter, "non-overlapping") => ("pairwise", None),
        (Op::ReduceScatter, "ring") => ("ring", None),
        (Op::ReduceScatter, _) => ("recursive-halving", None),
        (Op::Scan | Op::Exscan, _) => ("linear", None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::OPS;

    fn ompi(op: Op, p: usize, bytes: u64) -> &'static str {
        ompi_algorithm(op, p, bytes).1
    }

    #[test]
    fn barrier_by_size() {
        // P < 4: recursive_doubling; < 8: linear; < 64: recursive_doubling; < 256: bruck;
        // < 512: tree; < 1024: bruck; < 4096: tree; else bruck.
        let cases = [
            (2, "recursive_doubling"),
            (3, "recursive_doubling"),
            (4, "linear"),
            (7, "linear"),
            (8, "recursive_doubling"),
            (63, "recursive_doubling"),
            (64, "bruck"),
            (256, "tree"),
            (511, "tree"),
            (512, "bruck"),
            (1024, "tree"),
            (4095, "tree"),
            (4096, "bruck"),
            (100_000, "bruck"),
        ];
        for (p, want) in cases {
            assert_eq!(ompi(Op::Barrier, p, 0), want, "P = {p}");
            assert_eq!(tuned_algorithm(Op::Barrier, p, 0), ("dissemination", None));
        }
    }

    #[test]
    fn bcast_thresholds() {
        // P < 4: < 32 pipeline, < 256 binary_tree, < 512 pipeline, < 1024 knomial,
        // < 32768 basic_linear, < 131072 binary_tree, < 262144 chain, ..., else binary_tree.
        assert_eq!(ompi(Op::Bcast, 2, 31), "pipeline");
        assert_eq!(ompi(Op::Bcast, 2, 32), "binary_tree");
        assert_eq!(ompi(Op::Bcast, 3, 1023), "knomial");
        assert_eq!(ompi(Op::Bcast, 3, 1024), "basic_linear");
        assert_eq!(ompi(Op::Bcast, 3, 200_000), "chain");
        assert_eq!(ompi(Op::Bcast, 3, 1 << 20), "binary_tree");
        // P < 32: < 4096 knomial, < 1048576 binomial, else scatter_allgather.
        assert_eq!(ompi(Op::Bcast, 16, 4095), "knomial");
        assert_eq!(ompi(Op::Bcast, 31, 4096), "binomial");
        assert_eq!(ompi(Op::Bcast, 31, (1 << 20) - 1), "binomial");
        assert_eq!(ompi(Op::Bcast, 31, 1 << 20), "scatter_allgather");
        // P < 1024: < 16384 knomial, < 32768 split_binary_tree, else knomial.
        assert_eq!(ompi(Op::Bcast, 512, 16383), "knomial");
        assert_eq!(ompi(Op::Bcast, 512, 16384), "split_binary_tree");
        assert_eq!(ompi(Op::Bcast, 1023, 32768), "knomial");
        // P >= 4096: ..., < 262144 knomial, else scatter_allgather.
        assert_eq!(ompi(Op::Bcast, 4096, 262_143), "knomial");
        assert_eq!(ompi(Op::Bcast, 8192, 262_144), "scatter_allgather");
        // Our mapping: unsegmented chain/pipeline → our pipeline with the message as one segment.
        assert_eq!(
            tuned_algorithm(Op::Bcast, 3, 200_000),
            ("pipeline", Some(200_000))
        );
        assert_eq!(tuned_algorithm(Op::Bcast, 2, 0), ("pipeline", Some(1)));
        assert_eq!(tuned_algorithm(Op::Bcast, 64, 8), ("binomial", None));
        assert_eq!(
            tuned_algorithm(Op::Bcast, 31, 1 << 20),
            ("scatter-allgather", None)
        );
    }

    #[test]
    fn reduce_thresholds() {
        // P < 4: < 8 rabenseifner, < 16 binary, < 32 pipeline, < 262144 linear, ...
        assert_eq!(ompi(Op::Reduce, 2, 7), "rabenseifner");
        assert_eq!(ompi(Op::Reduce, 2, 8), "binary");
        assert_eq!(ompi(Op::Reduce, 3, 31), "pipeline");
        assert_eq!(ompi(Op::Reduce, 3, 32), "linear");
        // P < 8: < 4096 binary, < 65536 chain, < 262144 binomial.
        assert_eq!(ompi(Op::Reduce, 4, 4095), "binary");
        assert_eq!(ompi(Op::Reduce, 4, 4096), "chain");
        assert_eq!(ompi(Op::Reduce, 7, 65536), "binomial");
        // P < 512: < 8192 binomial, < 16384 in-order_binary, else binomial.
        assert_eq!(ompi(Op::Reduce, 300, 8191), "binomial");
        assert_eq!(ompi(Op::Reduce, 300, 8192), "in-order_binary");
        assert_eq!(ompi(Op::Reduce, 511, 16384), "binomial");
        assert_eq!(tuned_algorithm(Op::Reduce, 2, 7), ("rabenseifner", None));
        assert_eq!(tuned_algorithm(Op::Reduce, 4, 4096), ("linear", None));
        assert_eq!(tuned_algorithm(Op::Reduce, 300, 8192), ("binomial", None));
    }

    #[test]
    fn allreduce_thresholds() {
        // P < 4: < 8 ring, < 4096 recursive_doubling, ..., < 262144 segmented_ring, else
        // rabenseifner.
        assert_eq!(ompi(Op::Allreduce, 2, 7), "ring");
        assert_eq!(ompi(Op::Allreduce, 2, 8), "recursive_doubling");
        assert_eq!(ompi(Op::Allreduce, 3, 262_143), "segmented_ring");
        assert_eq!(ompi(Op::Allreduce, 3, 262_144), "rabenseifner");
        // P < 16: < 8192 recursive_doubling, else rabenseifner.
        assert_eq!(ompi(Op::Allreduce, 8, 8191), "recursive_doubling");
        assert_eq!(ompi(Op::Allreduce, 15, 8192), "rabenseifner");
        // P < 256: < 131072 nonoverlapping, < 262144 recursive_doubling, else rabenseifner.
        assert_eq!(ompi(Op::Allreduce, 128, 131_071), "nonoverlapping");
        assert_eq!(ompi(Op::Allreduce, 255, 131_072), "recursive_doubling");
        assert_eq!(ompi(Op::Allreduce, 255, 262_144), "rabenseifner");
        // P >= 4096: < 2048 nonoverlapping, < 16384 segmented_ring, < 32768
        // recursive_doubling, else rabenseifner (upstream; Huawei's fork says ring).
        assert_eq!(ompi(Op::Allreduce, 4096, 2047), "nonoverlapping");
        assert_eq!(ompi(Op::Allreduce, 4096, 2048), "segmented_ring");
        assert_eq!(ompi(Op::Allreduce, 5000, 32767), "recursive_doubling");
        assert_eq!(ompi(Op::Allreduce, 5000, 32768), "rabenseifner");
        assert_eq!(tuned_algorithm(Op::Allreduce, 2, 7), ("ring", None));
        assert_eq!(tuned_algorithm(Op::Allreduce, 3, 262_143), ("ring", None));
        assert_eq!(
            tuned_algorithm(Op::Allreduce, 128, 1000),
            ("binomial", None)
        );
        assert_eq!(
            tuned_algorithm(Op::Allreduce, 64, 1 << 20),
            ("rabenseifner", None)
        );
    }

    #[test]
    fn gather_scatter_thresholds() {
        // gather P < 4: < 2 linear_sync, < 4 basic_linear, < 32768 binomial.
        assert_eq!(ompi(Op::Gather, 2, 1), "linear_sync");
        assert_eq!(ompi(Op::Gather, 2, 3), "basic_linear");
        assert_eq!(ompi(Op::Gather, 3, 4), "binomial");
        // gather P < 512 (from 256): < 2048 binomial, < 8192 basic_linear, else binomial.
        assert_eq!(ompi(Op::Gather, 256, 2047), "binomial");
        assert_eq!(ompi(Op::Gather, 256, 2048), "basic_linear");
        assert_eq!(ompi(Op::Gather, 511, 8192), "binomial");
        // scatter P < 16: < 16384 binomial, < 1048576 linear_nb, else basic_linear.
        assert_eq!(ompi(Op::Scatter, 8, 16383), "binomial");
        assert_eq!(ompi(Op::Scatter, 15, 16384), "linear_nb");
        assert_eq!(ompi(Op::Scatter, 15, 1 << 20), "basic_linear");
        // scatter P >= 64: < 512 binomial, else linear_nb.
        assert_eq!(ompi(Op::Scatter, 64, 511), "binomial");
        assert_eq!(ompi(Op::Scatter, 64, 512), "linear_nb");
        assert_eq!(tuned_algorithm(Op::Gather, 256, 2048), ("linear", None));
        assert_eq!(tuned_algorithm(Op::Scatter, 64, 511), ("binomial", None));
        assert_eq!(tuned_algorithm(Op::Scatter, 64, 512), ("linear", None));
    }

    #[test]
    fn allgather_thresholds() {
        // P == 2: two_proc; P < 32: recursive_doubling.
        assert_eq!(ompi(Op::Allgather, 2, 1 << 20), "two_proc");
        assert_eq!(ompi(Op::Allgather, 3, 1 << 20), "recursive_doubling");
        assert_eq!(ompi(Op::Allgather, 31, 1), "recursive_doubling");
        // P < 64: < 1024 recursive_doubling, < 65536 neighbor, else ring.
        assert_eq!(ompi(Op::Allgather, 32, 1023), "recursive_doubling");
        assert_eq!(ompi(Op::Allgather, 32, 1024), "neighbor");
        assert_eq!(ompi(Op::Allgather, 63, 65536), "ring");
        // P < 512: < 32 recursive_doubling, < 128 bruck.
        assert_eq!(ompi(Op::Allgather, 256, 31), "recursive_doubling");
        assert_eq!(ompi(Op::Allgather, 256, 32), "bruck");
        assert_eq!(
            tuned_algorithm(Op::Allgather, 2, 8),
            ("recursive-doubling", None)
        );
        assert_eq!(
            tuned_algorithm(Op::Allgather, 16, 8),
            ("recursive-doubling", None)
        );
        // Open MPI's recursive doubling falls back to Bruck off powers of two.
        assert_eq!(tuned_algorithm(Op::Allgather, 12, 8), ("bruck", None));
        assert_eq!(tuned_algorithm(Op::Allgather, 32, 1024), ("ring", None));
    }

    #[test]
    fn alltoall_thresholds() {
        // P == 2: < 2 pairwise, < 4 two_proc, ..., < 262144 linear_sync, < 1048576 two_proc.
        assert_eq!(ompi(Op::Alltoall, 2, 1), "pairwise");
        assert_eq!(ompi(Op::Alltoall, 2, 2), "two_proc");
        assert_eq!(ompi(Op::Alltoall, 2, 262_143), "linear_sync");
        assert_eq!(ompi(Op::Alltoall, 2, 262_144), "two_proc");
        // P < 8 (P = 3 is not the P == 2 row): < 8192 linear_sync, < 16384 linear.
        assert_eq!(ompi(Op::Alltoall, 3, 8191), "linear_sync");
        assert_eq!(ompi(Op::Alltoall, 7, 8192), "linear");
        // P < 64: < 512 modified_bruck, < 524288 linear, else linear_sync.
        assert_eq!(ompi(Op::Alltoall, 32, 511), "modified_bruck");
        assert_eq!(ompi(Op::Alltoall, 32, 512), "linear");
        assert_eq!(ompi(Op::Alltoall, 63, 524_288), "linear_sync");
        // P < 128: ..., < 262144 linear, else pairwise.
        assert_eq!(ompi(Op::Alltoall, 64, 262_143), "linear");
        assert_eq!(ompi(Op::Alltoall, 127, 262_144), "pairwise");
        // P >= 4096 (upstream: no separate row for 8192 and beyond).
        assert_eq!(ompi(Op::Alltoall, 10_000, 2047), "modified_bruck");
        assert_eq!(ompi(Op::Alltoall, 10_000, 65536), "linear_sync");
        assert_eq!(tuned_algorithm(Op::Alltoall, 32, 511), ("bruck", None));
        assert_eq!(
            tuned_algorithm(Op::Alltoall, 127, 262_144),
            ("pairwise", None)
        );
        assert_eq!(tuned_algorithm(Op::Alltoall, 2, 2), ("pairwise", None));
        assert_eq!(tuned_algorithm(Op::Alltoall, 3, 8191), ("linear", None));
    }

    #[test]
    fn reduce_scatter_counts_the_whole_vector() {
        // P < 8: < 8 non-overlapping, < 262144 recursive_halving, else ring; the size is
        // Σ rcounts · dsize, i.e. our per-rank block times P.
        assert_eq!(ompi(Op::ReduceScatter, 4, 1), "non-overlapping");
        assert_eq!(ompi(Op::ReduceScatter, 4, 2), "recursive_halving");
        assert_eq!(ompi(Op::ReduceScatter, 4, 65_535), "recursive_halving");
        assert_eq!(ompi(Op::ReduceScatter, 4, 65_536), "ring");
        // P < 64: < 64 non-overlapping, < 2048 recursive_halving, < 524288 butterfly, else ring.
        assert_eq!(ompi(Op::ReduceScatter, 32, 1), "non-overlapping");
        assert_eq!(ompi(Op::ReduceScatter, 32, 2), "recursive_halving");
        assert_eq!(ompi(Op::ReduceScatter, 32, 64), "butterfly");
        assert_eq!(ompi(Op::ReduceScatter, 32, 16384), "ring");
        assert_eq!(tuned_algorithm(Op::ReduceScatter, 4, 1), ("pairwise", None));
        assert_eq!(
            tuned_algorithm(Op::ReduceScatter, 32, 64),
            ("recursive-halving", None)
        );
        assert_eq!(
            tuned_algorithm(Op::ReduceScatter, 4, 65_536),
            ("ring", None)
        );
    }

    #[test]
    fn scan_is_linear_and_every_choice_is_buildable() {
        assert_eq!(tuned_algorithm(Op::Scan, 64, 8), ("linear", None));
        assert_eq!(tuned_algorithm(Op::Exscan, 64, 8), ("linear", None));
        for (op, _, algos) in OPS {
            for p in [1, 2, 3, 4, 5, 8, 13, 64, 100, 1000, 5000, 10_000] {
                for bytes in [0, 1, 7, 100, 4096, 65_536, 1 << 20, 1 << 24] {
                    let (a, _) = tuned_algorithm(op, p, bytes);
                    assert!(algos.contains(&a), "{op:?} P={p} {bytes} B: {a}");
                }
            }
        }
    }
}
