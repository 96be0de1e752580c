//! Against numbers nobody here computed: the LogGP paper's Table 3 and Lemma 2, the postal
//! model's `N_h(t)` and its n = 8 example, the lecture notes' LogP binomial broadcast, and
//! the LogGPS paper's round trips (the model's §6, src/model/MODEL.md).

#![allow(non_snake_case)] // the papers' L

use super::*;
use crate::model::Params;
use proptest::prelude::*;

/// The paper's simplified LogGP (§4.1): o = 0, G = 1 per item, items of one byte.
fn simplified(g: f64, L: f64) -> LogGp {
    LogGp {
        L,
        o: 0.0,
        g,
        G: 1.0,
        gamma: 0.0,
    }
}

fn time<M: CostModel>(op: Op, algo: &str, spec: &Spec, m: &M) -> f64 {
    predict(op, algo, spec, m, 0.0).unwrap().time_ns
}

/// Table 3 columns: (k, g, L).
const COLUMNS: [(u64, f64, f64); 6] = [
    (1, 10.0, 30.0),
    (1, 100.0, 300.0),
    (10, 10.0, 30.0),
    (10, 100.0, 300.0),
    (100, 10.0, 30.0),
    (100, 100.0, 300.0),
];

fn table3_row(algo: &str, expected: [f64; 6]) {
    for ((k, g, L), want) in COLUMNS.into_iter().zip(expected) {
        let got = time(Op::Scatter, algo, &Spec::new(1024, k), &simplified(g, L));
        assert_eq!(got, want, "{algo}, k = {k}, g = {g}, L = {L}");
    }
}

#[test]
fn table3_short_message() {
    table3_row(
        "short-message",
        [
            10_250.0,
            102_500.0,
            102_320.0,
            1_023_200.0,
            1_023_020.0,
            10_230_200.0,
        ],
    );
}

#[test]
fn table3_simple_long_message() {
    table3_row(
        "linear",
        [
            10_250.0, 102_500.0, 19_457.0, 111_707.0, 111_527.0, 203_777.0,
        ],
    );
}

#[test]
fn table3_binomial_tree() {
    table3_row(
        "binomial",
        [1_313.0, 4_013.0, 10_520.0, 13_220.0, 102_590.0, 105_290.0],
    );
}

#[test]
fn table3_optimal() {
    table3_row(
        "optimal",
        [1_171.0, 2_860.0, 10_358.0, 11_819.0, 102_419.0, 103_688.0],
    );
}

#[test]
fn optimal_schedule_costs_what_its_recurrence_says() {
    for (k, g, L) in COLUMNS {
        let m = simplified(g, L);
        for p in [2, 3, 5, 6, 17, 100] {
            let (_, t) = trees::optimal_splits(p, k, &|b| m.split_costs(b));
            assert_eq!(time(Op::Scatter, "optimal", &Spec::new(p, k), &m), t[p]);
        }
    }
}

#[test]
fn optimal_split_examples_from_section_4_6() {
    // L = 30, g = 10: with 5 items send exactly 1; with 320 items send exactly 150.
    let m = simplified(10.0, 30.0);
    let (split, _) = trees::optimal_splits(320, 1, &|b| m.split_costs(b));
    assert_eq!(split[5], 1);
    assert_eq!(split[320], 150);
}

#[test]
fn figure9_k_item_schedule_finishes_at_63() {
    // Full LogGP, L = 4, o = 1, g = 4, G = 1, P = 6, k = 10: Algorithm A_t^k finishes at t = 63.
    let m = LogGp {
        L: 4.0,
        o: 1.0,
        g: 4.0,
        G: 1.0,
        gamma: 0.0,
    };
    assert_eq!(time(Op::Scatter, "optimal", &Spec::new(6, 10), &m), 63.0);
}

#[test]
fn binomial_scatter_lemma2() {
    // L ≥ g: t^k(P) = L⌈log2 P⌉ + (P − 1)k − ⌈log2 P⌉. Exact for powers of two; for other P the
    // lemma's recurrence charges ⌊P/2⌋k for the transfer but t(⌈P/2⌉) for the subtree, which
    // no split achieves, so there it bounds the algorithm (that sends ⌊P/2⌋, §4.4) from above.
    let m = simplified(10.0, 30.0);
    for p in [2usize, 3, 5, 7, 12, 64, 100, 1000, 1023, 1024] {
        for k in [1u64, 3, 10] {
            let lg = p.next_power_of_two().trailing_zeros() as f64;
            let lemma = 30.0 * lg + ((p - 1) as u64 * k) as f64 - lg;
            let got = time(Op::Scatter, "binomial", &Spec::new(p, k), &m);
            if p.is_power_of_two() {
                assert_eq!(got, lemma, "P = {p}, k = {k}");
            } else {
                assert!(got <= lemma, "P = {p}, k = {k}: {got} > {lemma}");
            }
            // The fixed-split recurrence t(n) = (⌊n/2⌋k − 1) + max(L + t(⌊n/2⌋), g + t(⌈n/2⌉)).
            let mut t = vec![0.0f64; p + 1];
            for n in 2..=p {
                let s = n / 2;
                t[n] = (s as u64 * k) as f64 - 1.0 + (30.0 + t[s]).max(10.0 + t[n - s]);
            }
            assert_eq!(got, t[p], "P = {p}, k = {k}");
        }
    }
}

#[test]
fn binomial_bcast_of_a_short_message_is_log_p_hops() {
    // LogP (lecture notes): log2(P)·(L + 2o) when g ≤ L + 2o.
    for (L, o, g) in [(10.0, 2.0, 4.0), (1000.0, 300.0, 500.0), (5.0, 5.0, 10.0)] {
        let m = LogGp {
            L,
            o,
            g,
            G: 0.0,
            gamma: 0.0,
        };
        for lg in 1..=10 {
            let got = time(Op::Bcast, "binomial", &Spec::new(1 << lg, 8), &m);
            assert_eq!(
                got,
                lg as f64 * (L + 2.0 * o),
                "P = 2^{lg}, L = {L}, o = {o}, g = {g}"
            );
        }
    }
}

#[test]
fn postal_reach_is_fibonacci_for_h2() {
    let n: Vec<u64> = (0..10).map(|t| trees::postal_reach(2, t)).collect();
    assert_eq!(n, [1, 1, 2, 3, 5, 8, 13, 21, 34, 55]);
    assert_eq!(
        (0..6)
            .map(|t| trees::postal_reach(1, t))
            .collect::<Vec<_>>(),
        [1, 2, 4, 8, 16, 32]
    );
}

/// The postal model as LogGP: one step per send (g = 1), latency h, no overhead.
fn postal(h: u64) -> (LogGp, Spec) {
    let mut s = Spec::new(1, 1);
    s.postal_h = Some(h as f64);
    (simplified(1.0, h as f64), s)
}

#[test]
fn h_tree_reaches_n_h_t_ranks_in_t_steps() {
    for h in 1..=4u64 {
        let (m, spec) = postal(h);
        for t in h..=14 {
            let n = trees::postal_reach(h, t) as usize;
            let at = |p| time(Op::Bcast, "postal", &Spec { ranks: p, ..spec }, &m);
            assert_eq!(at(n), t as f64, "h = {h}: N({t}) = {n} ranks in {t} steps");
            assert_eq!(
                at(n + 1),
                (t + 1) as f64,
                "h = {h}: {} ranks need one step more",
                n + 1
            );
        }
    }
}

#[test]
fn h_tree_beats_binomial_on_the_n8_example() {
    let (m, spec) = postal(2);
    let spec = Spec { ranks: 8, ..spec };
    assert_eq!(time(Op::Bcast, "postal", &spec, &m), 5.0);
    assert_eq!(time(Op::Bcast, "binomial", &spec, &m), 6.0);
}

fn round_trip(p: &Params, k: u64) -> f64 {
    let s = Schedule::from_steps(vec![
        vec![
            Step::Send { to: 1, bytes: k },
            Step::Recv { from: 1, bytes: k },
        ],
        vec![
            Step::Recv { from: 0, bytes: k },
            Step::Send { to: 0, bytes: k },
        ],
    ]);
    evaluate(&s, p, 0.0).unwrap().rank_end_ns[0]
}

#[test]
fn loggps_round_trips_of_model_md_section6() {
    let p = Params::preset("myrinet").unwrap();
    for (k, want) in [
        (1000, 78_340.0),
        (12_000, 502_796.04),
        (65_536, 1_490_291.72),
    ] {
        let got = round_trip(&p, k);
        assert!((got - want).abs() < 1e-6, "k = {k}: {got} != {want}");
    }
}

/// Two ranks that each receive before they send wait forever: the evaluation names the first
/// and what it waits on (messages are numbered in rank and step order: rank 0's send is 0).
#[test]
fn a_deadlocked_schedule_is_an_error() {
    let p = Params::preset("myrinet").unwrap();
    let s = Schedule::from_steps(vec![
        vec![
            Step::Recv { from: 1, bytes: 8 },
            Step::Send { to: 1, bytes: 8 },
        ],
        vec![
            Step::Recv { from: 0, bytes: 8 },
            Step::Send { to: 0, bytes: 8 },
        ],
    ]);
    let e = evaluate(&s, &p, 0.0).unwrap_err().to_string();
    assert_eq!(
        e,
        "schedule deadlocks: rank 0 waits forever at step 0 (send message none, receive message 1)"
    );
}

/// Three blocks on one thread: the first two stop part way, waiting on blocks not started,
/// the last finds the others stopped, and the queue goes on from where they left every rank.
/// The costs are the queue's own, bit for bit, for every algorithm, rendezvous and eager.
#[test]
fn blocks_stopped_part_way_are_finished_by_the_queue() {
    let model = Params {
        S: 1000,
        ..Params::preset("fast-ethernet").unwrap()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let start: Vec<f64> = (0..13).map(|r| (r * 7919 % 13) as f64 * 1000.0).collect();
    for (op, algo) in every_algorithm() {
        let s = build(op, algo, &Spec::new(13, 3000), &|b| model.split_costs(b)).unwrap();
        let m = s.matching().unwrap();
        let by = |order| {
            pool.install(|| {
                eval::FORCED_BLOCKS.set(3);
                eval::evaluate_by(&m, &model, 1.0, &start, &mut Default::default(), order).unwrap()
            })
        };
        let queue = by(eval::Order::Queue);
        assert_eq!(by(eval::Order::Blocks), queue, "{op:?} {algo}");
        assert_eq!(by(eval::Order::HelpedBlocks), queue, "{op:?} {algo}");
    }
}

/// Costed by blocks on two threads, a schedule that deadlocks inside a block (ranks 0 and 1, 2
/// and 3 each receive from the other first) or across blocks (0 and 2, 1 and 3) is the queue's
/// error, not a hang or a panic.
#[test]
fn a_deadlock_by_blocks_is_the_queues_error() {
    let p = Params::preset("myrinet").unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    for partner in [[1, 0, 3, 2], [2, 3, 0, 1]] {
        let s = Schedule::from_steps(
            partner
                .iter()
                .map(|&q| {
                    vec![
                        Step::Recv { from: q, bytes: 8 },
                        Step::Send { to: q, bytes: 8 },
                    ]
                })
                .collect(),
        );
        let m = s.matching().unwrap();
        let by = |order| {
            pool.install(|| {
                eval::evaluate_by(&m, &p, 0.0, &[0.0; 4], &mut Default::default(), order)
            })
            .unwrap_err()
            .to_string()
        };
        let queue = by(eval::Order::Queue);
        assert!(
            queue.starts_with("schedule deadlocks: rank 0 waits forever at step 0"),
            "{queue}"
        );
        assert_eq!(by(eval::Order::Blocks), queue);
    }
}

/// The Send vectors of the model's §6 (src/model/MODEL.md; Myrinet, k = 16384 > S): a
/// rendezvous send whose receive is called 100 µs after it returns at 239 754.240 ns, and its
/// sender synchronization is the wait for that call after the REQ arrived, 100 000 − (o + L) =
/// 100 000 − 7710 = 92 290; what is left, 147 464.240, is the Send with tr = ts. The receive,
/// called after the REQ is in, does not wait: receiver synchronization 0.
#[test]
fn rendezvous_wait_is_sender_synchronization() {
    let p = Params::preset("myrinet").unwrap();
    let k = 16_384;
    let s = Schedule::from_steps(vec![
        vec![Step::Send { to: 1, bytes: k }],
        vec![Step::Recv { from: 0, bytes: k }],
    ]);
    let c = eval::evaluate_from(&s, &p, 0.0, &[0.0, 100_000.0]).unwrap();
    assert!((c.rank_end_ns[0] - 239_754.24).abs() < 1e-6);
    assert!((c.sender_sync_ns[0] - 92_290.0).abs() < 1e-9);
    assert!((c.rank_end_ns[0] - c.sender_sync_ns[0] - 147_464.24).abs() < 1e-6);
    assert_eq!(
        (
            c.receiver_sync_ns[0],
            c.sender_sync_ns[1],
            c.receiver_sync_ns[1]
        ),
        (0.0, 0.0, 0.0)
    );
}

#[test]
fn unknown_names_list_the_valid_ones() {
    let e = Op::parse("allsum").unwrap_err().to_string();
    assert!(e.contains("allreduce") && e.contains("alltoall"), "{e}");
    let e = Op::Scatter.algorithm("fast").unwrap_err().to_string();
    assert!(e.contains("short-message") && e.contains("optimal"), "{e}");
    assert_eq!(Op::parse("MPI_Reduce_scatter").unwrap(), Op::ReduceScatter);
    assert_eq!(
        Op::Scatter.algorithm("simple-long-message").unwrap(),
        "linear"
    );
}

#[test]
fn zero_ranks_and_absurd_sizes_are_errors() {
    let m = simplified(10.0, 30.0);
    let costs = |b| m.split_costs(b);
    assert!(build(Op::Bcast, "binomial", &Spec::new(0, 8), &costs).is_err());
    assert!(build(Op::Bcast, "binomial", &Spec::new(4, u64::MAX), &costs).is_err());
    assert!(build(Op::Alltoall, "pairwise", &Spec::new(1 << 20, 8), &costs).is_err());
    assert!(
        build(
            Op::Scatter,
            "short-message",
            &Spec::new(1024, 1 << 20),
            &costs
        )
        .is_err()
    );
    let one = predict(Op::Allreduce, "ring", &Spec::new(1, 8), &m, 0.0).unwrap();
    assert_eq!(one.time_ns, 0.0);
}

#[test]
fn reduction_bytes_cost_gamma() {
    let m = LogGp {
        L: 0.0,
        o: 0.0,
        g: 0.0,
        G: 0.0,
        gamma: 0.0,
    };
    let c = predict(Op::Reduce, "binomial", &Spec::new(8, 100), &m, 2.0).unwrap();
    assert_eq!(c.time_ns, 3.0 * 200.0); // root reduces three children's vectors
}

#[test]
fn rendezvous_sendrecv_rings_do_not_deadlock() {
    let p = Params {
        S: 0,
        ..Params::preset("myrinet").unwrap()
    };
    for (op, algo) in every_algorithm() {
        for ranks in [2, 7, 8] {
            predict(op, algo, &Spec::new(ranks, 100), &p, 0.0).unwrap();
        }
    }
}

/// Recursive doubling and rings move every rank in each round; a binomial tree's root takes
/// log2(P) steps where the mean rank takes about 2 (P − 1 messages, each a send step and a
/// receive step, over P ranks).
#[test]
fn even_tells_exchanges_from_trees() {
    let m = simplified(10.0, 30.0);
    let even = |op, algo, p| {
        let s = build(op, algo, &Spec::new(p, 8), &|b| m.split_costs(b)).unwrap();
        s.matching().unwrap().even()
    };
    assert!(even(Op::Allreduce, "recursive-doubling", 1024));
    assert!(even(Op::Allreduce, "ring", 64));
    assert!(even(Op::Allgather, "ring", 64));
    // Root: 10 steps; mean: 2 * 1023 / 1024 < 2; 10 > 4 * 2.
    assert!(!even(Op::Bcast, "binomial", 1024));
    assert!(!even(Op::Allreduce, "binomial", 1024));
    // Root: 1023 receives, the others 1 send each.
    assert!(!even(Op::Gather, "linear", 1024));
    // Root: 3 steps; mean 14 / 8; 3 <= 4 * 1.75: a tree this small passes for even.
    assert!(even(Op::Bcast, "binomial", 8));
}

/// Bytes each rank receives in all.
fn received(s: &Schedule) -> Vec<u64> {
    (0..s.ranks())
        .map(|r| {
            s.steps_of(r)
                .filter_map(|x| x.recv_half())
                .map(|(_, b)| b)
                .sum()
        })
        .collect()
}

fn every_algorithm() -> Vec<(Op, &'static str)> {
    OPS.iter()
        .flat_map(|(op, _, algos)| algos.iter().map(move |a| (*op, *a)))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Costed by passes or by blocks on three threads, or by the queue once leveled (its steps
    /// held step after step where every rank has as many), every schedule gives what the
    /// one-thread queue gives, bit for bit, under both models, eager and rendezvous, whatever the (random)
    /// call times; the threaded costings in the arrays that all costings before left in one
    /// scratch (rank states of either model, completions handed back), the queue's in fresh ones.
    #[test]
    fn costing_on_threads_equals_the_queue(
        p in 1usize..40, k in 0u64..3000, starts in proptest::collection::vec(0.0f64..1e5, 40),
    ) {
        let loggps = Params { S: 1000, ..Params::preset("fast-ethernet").unwrap() };
        let loggp = LogGp { L: 3000.0, o: 500.0, g: 800.0, G: 2.0, gamma: 0.0 };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let mut kept = eval::Scratch::default();
        for (op, algo) in every_algorithm() {
            let s = build(op, algo, &Spec::new(p, k), &|b| loggps.split_costs(b)).unwrap();
            let m = s.matching().unwrap();
            let leveled = m.clone().leveled_at_any_cost();
            let Some(levels) = &leveled.levels else {
                // Only schedules that a rendezvous send would deadlock have none.
                prop_assert!(eval::evaluate(&s, &Params { S: 0, ..loggps }, 0.0).is_err(),
                    "{op:?} {algo}: no passes");
                continue;
            };
            prop_assert!(p < 2 || levels.passes().count() >= 2, "{op:?} {algo}: no steps");
            let start = &starts[..p];
            let queue = (
                eval::evaluate_by(&m, &loggps, 1.0, start, &mut Default::default(),
                    eval::Order::Queue).unwrap(),
                eval::evaluate_by(&m, &loggp, 1.0, start, &mut Default::default(),
                    eval::Order::Queue).unwrap(),
            );
            let orders = [
                (eval::Order::Passes, &leveled),
                (eval::Order::Queue, &leveled),
                (eval::Order::Blocks, &m),
            ];
            for (order, m) in orders {
                let by = |scratch: &mut _| pool.install(|| (
                    eval::evaluate_by(m, &loggps, 1.0, start, scratch, order),
                    eval::evaluate_by(m, &loggp, 1.0, start, scratch, order),
                ));
                let (gps, gp) = by(&mut kept);
                let (gps, gp) = (gps.unwrap(), gp.unwrap());
                prop_assert_eq!(&gps, &queue.0, "LogGPS {:?} {} {:?}", op, algo, order);
                prop_assert_eq!(&gp, &queue.1, "LogGP {:?} {} {:?}", op, algo, order);
                kept.recycle(if order == eval::Order::Passes { gps } else { gp });
            }
        }
    }

    #[test]
    fn every_schedule_matches_and_moves_at_least_mpi_data(
        p in 1usize..40, k in 0u64..300, root in 0usize..40,
    ) {
        let root = root % p;
        let m = simplified(10.0, 30.0);
        for (op, algo) in every_algorithm() {
            let spec = Spec { root, ..Spec::new(p, k) };
            let s = build(op, algo, &spec, &|b| m.split_costs(b)).unwrap();
            let got = received(&s);
            let need = |r: usize| -> u64 {
                let pk = (p as u64 - 1) * k;
                match op {
                    Op::Bcast | Op::Scatter if r != root => k,
                    Op::Gather if r == root => pk,
                    Op::Allgather | Op::Alltoall => pk,
                    _ => 0,
                }
            };
            for (r, &bytes_in) in got.iter().enumerate() {
                prop_assert!(bytes_in >= need(r), "{op:?} {algo}: rank {r} receives {bytes_in} < {}", need(r));
            }
            if matches!((op, algo), (Op::Scatter, _) | (Op::Bcast, "binomial" | "pipeline" | "postal")) {
                prop_assert_eq!(got[root], 0);
            }
            let c = evaluate(&s, &m, 0.0);
            prop_assert!(c.is_ok(), "{op:?} {algo}: {:?}", c.err());
            let c = evaluate(&s, &Params::preset("fast-ethernet").unwrap(), 0.0);
            prop_assert!(c.is_ok(), "{op:?} {algo}: {:?}", c.err());
        }
    }

    /// Every rank's synchronization is non-negative and fits in its time in the schedule, so
    /// communication = (end − start) − sender sync − receiver sync ≥ 0, under both models and
    /// whatever the ranks' (random) call times.
    #[test]
    fn synchronization_fits_in_each_rank_time(
        p in 1usize..12, k in 0u64..3000, starts in proptest::collection::vec(0.0f64..1e6, 12),
    ) {
        let loggps = Params { S: 1000, ..Params::preset("fast-ethernet").unwrap() };
        let loggp = LogGp { L: 3000.0, o: 500.0, g: 800.0, G: 2.0, gamma: 0.0 };
        let start = &starts[..p];
        for (op, algo) in every_algorithm() {
            let s = build(op, algo, &Spec::new(p, k), &|b| loggps.split_costs(b)).unwrap();
            for (name, c) in [
                ("LogGPS", eval::evaluate_from(&s, &loggps, 1.0, start).unwrap()),
                ("LogGP", eval::evaluate_from(&s, &loggp, 1.0, start).unwrap()),
            ] {
                for (r, &t) in start.iter().enumerate() {
                    let (ss, rs) = (c.sender_sync_ns[r], c.receiver_sync_ns[r]);
                    let comm = c.rank_end_ns[r] - t - ss - rs;
                    prop_assert!(ss >= 0.0 && rs >= 0.0 && comm >= -1e-6 * c.rank_end_ns[r],
                        "{name} {op:?} {algo}, rank {r}: sender {ss}, receiver {rs}, communication {comm}");
                    if name == "LogGP" {
                        prop_assert_eq!(ss, 0.0);
                    }
                }
            }
        }
    }

    #[test]
    fn completion_never_decreases_with_bytes(
        p in 1usize..33, k in 0u64..40_000, dk in 1u64..5000,
    ) {
        let models = (Params::preset("fast-ethernet").unwrap(), LogGp { L: 3000.0, o: 500.0, g: 800.0, G: 2.0, gamma: 0.0 });
        for (op, algo) in every_algorithm() {
            if matches!(algo, "optimal" | "postal" | "short-message") {
                continue; // their shape follows the size
            }
            let a = time(op, algo, &Spec::new(p, k), &models.0);
            let b = time(op, algo, &Spec::new(p, k + dk), &models.0);
            prop_assert!(b >= a, "LogGPS {op:?} {algo}: {a} → {b}");
            let a = time(op, algo, &Spec::new(p, k), &models.1);
            let b = time(op, algo, &Spec::new(p, k + dk), &models.1);
            prop_assert!(b >= a, "LogGP {op:?} {algo}: {a} → {b}");
        }
    }
}

/// The bound checked before a schedule is built holds for every algorithm, and for the trees
/// (a message a rank) and the log P rounds stays within 4 times the steps from 64 ranks: it
/// refuses what is too big, not what fits.
#[test]
fn estimates_bound_the_steps_closely() {
    let costs = |_| (1.0, 2.0);
    for &(op, _, algos) in OPS.iter() {
        for &algo in algos {
            for p in [1, 2, 3, 5, 8, 13, 64, 100, 257, 1000, 1023, 1025, 4097] {
                for k in [0, 1, 8, 1000, 65_536] {
                    let spec = Spec::new(p, k);
                    let estimate = estimated_steps(op, algo, &spec);
                    if estimate > 4_000_000 {
                        continue;
                    }
                    let steps = build(op, algo, &spec, &costs).unwrap().steps() as u64;
                    let what = format!("{} by {algo}, P = {p}, k = {k}", op.name());
                    assert!(
                        steps <= estimate,
                        "{what}: {steps} steps, estimated {estimate}"
                    );
                    if p >= 64 {
                        assert!(
                            estimate <= 4 * steps,
                            "{what}: {steps} steps, estimated {estimate}"
                        );
                    }
                }
            }
        }
    }
}

/// Rings and the pipeline's chain send to the next rank only (and a 2-rank exchange is between
/// neighbours either way); recursive doubling's partner r ^ 2 on 7 ranks, a dissemination's
/// r + 2, a binomial tree's root to rank 4 are not neighbours.
#[test]
fn rings_and_chains_are_neighbours_only() {
    let m = simplified(10.0, 30.0);
    let costs = |b| m.split_costs(b);
    let local = |op, algo, p| {
        build(op, algo, &Spec::new(p, 100_000), &costs)
            .unwrap()
            .neighbours_only()
    };
    assert!(local(Op::Allreduce, "ring", 7));
    assert!(local(Op::Allgather, "ring", 7));
    assert!(local(Op::Bcast, "pipeline", 7));
    assert!(local(Op::Allreduce, "recursive-doubling", 2));
    assert!(!local(Op::Allreduce, "recursive-doubling", 7));
    assert!(!local(Op::Barrier, "dissemination", 7));
    assert!(!local(Op::Bcast, "binomial", 7));
}

/// Which collectives go in lockstep: every barrier, exchange and ring (the ring Allreduce's
/// chunks one byte apart or not); recursive doubling and halving, Rabenseifner's included, on
/// any P (on 7 ranks, 3 ranks fold into a core of 4 first); trees, chains and scans never.
#[test]
fn lockstep_collectives_are_the_exchanges_of_equal_ranks() {
    let is = |op, algo, p, k| Lockstep::of(op, algo, &Spec::new(p, k)).is_some();
    for p in [7, 64] {
        assert!(is(Op::Barrier, "dissemination", p, 0));
        assert!(is(Op::Allgather, "bruck", p, 8));
        assert!(is(Op::Allgather, "ring", p, 8));
        assert!(is(Op::Alltoall, "pairwise", p, 8));
        assert!(is(Op::Alltoall, "bruck", p, 8));
        assert!(is(Op::ReduceScatter, "ring", p, 8));
        assert!(is(Op::ReduceScatter, "pairwise", p, 8));
        assert!(!is(Op::Bcast, "binomial", p, 8));
        assert!(!is(Op::Reduce, "rabenseifner", p, 64 * 7));
        assert!(!is(Op::Scan, "recursive-doubling", p, 8));
        assert!(!is(Op::Bcast, "scatter-allgather", p, 64 * 7));
    }
    for p in [7, 64] {
        assert!(is(Op::Allreduce, "recursive-doubling", p, 8));
        assert!(is(Op::Allgather, "recursive-doubling", p, 8));
        assert!(is(Op::ReduceScatter, "recursive-halving", p, 8));
        assert!(is(Op::Allreduce, "ring", p, 70));
        assert!(is(Op::Allreduce, "ring", p, 71));
        assert!(is(Op::Allreduce, "rabenseifner", p, 640));
        assert!(is(Op::Allreduce, "rabenseifner", p, 8));
    }
}

/// A lockstep's rounds are, rank by rank and step by step, the schedule that the builders make,
/// whatever the ranks, bytes and root.
#[test]
fn lockstep_rounds_are_the_built_steps() {
    let costs = |_| (1.0, 2.0);
    let mut seen = 0;
    for (op, algo) in every_algorithm() {
        for p in (1..=33).chain([64, 128]) {
            for k in [0, 1, 7, 64, 100, 3000, 128 * 33] {
                for root in [0, p / 3, p - 1] {
                    let spec = Spec {
                        root,
                        ..Spec::new(p, k)
                    };
                    let Some(ls) = Lockstep::of(op, algo, &spec) else {
                        continue;
                    };
                    let built = build(op, algo, &spec, &costs).unwrap();
                    let what = format!("{op:?} by {algo}, P = {p}, k = {k}, root {root}");
                    assert_eq!(ls.schedule(), built, "{what}");
                    let m = built.matching().unwrap();
                    assert_eq!(
                        ls.messages(),
                        (m.bytes.len() as u64, m.bytes.total()),
                        "{what}"
                    );
                    seen += 1;
                }
            }
        }
    }
    assert!(seen > 2000, "{seen} lockstep cases");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Costed from its rule, round after round or down and up its tree, a collective gives
    /// what its built schedule gives by the queue, bit for bit, under both models, eager and
    /// rendezvous, whatever the (random) call times and root, on one thread and on three, in
    /// the arrays that costings of either kind left.
    #[test]
    fn ruled_collectives_cost_what_their_schedules_cost(
        p in 1usize..70, k in 0u64..3000, root in 0usize..70,
        starts in proptest::collection::vec(0.0f64..1e5, 70),
    ) {
        let loggps = Params { S: 1000, ..Params::preset("fast-ethernet").unwrap() };
        let loggp = LogGp { L: 3000.0, o: 500.0, g: 800.0, G: 2.0, gamma: 0.0 };
        let pools = [1, 3].map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap());
        let mut kept = eval::Scratch::default();
        let start = &starts[..p];
        // k a multiple of P too, for the ring and Rabenseifner Allreduce.
        for k in [k, k - k % p as u64] {
            let spec = Spec { root: root % p, ..Spec::new(p, k) };
            for (op, algo) in every_algorithm() {
                let Some(ls) = ruled(op, algo, &spec).unwrap() else { continue };
                let m = build(op, algo, &spec, &|b| loggps.split_costs(b)).unwrap().matching().unwrap();
                let want = (
                    eval::evaluate_by(&m, &loggps, 1.0, start, &mut Default::default(),
                        eval::Order::Queue).unwrap(),
                    eval::evaluate_by(&m, &loggp, 1.0, start, &mut Default::default(),
                        eval::Order::Queue).unwrap(),
                );
                for pool in &pools {
                    let threads = pool.current_num_threads();
                    let (gps, gp) = pool.install(|| (
                        eval::evaluate_ruled(&ls, &loggps, 1.0, start, &mut kept),
                        eval::evaluate_ruled(&ls, &loggp, 1.0, start, &mut kept),
                    ));
                    prop_assert_eq!(&gps, &want.0, "LogGPS {:?} {} on {} threads", op, algo, threads);
                    prop_assert_eq!(&gp, &want.1, "LogGP {:?} {} on {} threads", op, algo, threads);
                    kept.recycle(gps);
                }
                // A built schedule's costing in the same arrays.
                let by = pools[1].install(|| eval::evaluate_by(&m, &loggps, 1.0, start, &mut kept, eval::Order::Blocks).unwrap());
                prop_assert_eq!(&by, &want.0);
            }
        }
    }
}

/// A lockstep is bounded by its exchanges, not by the memory a built schedule's steps take: a
/// pairwise all-to-all on 16,384 ranks (268 M steps) is refused built but costed in lockstep;
/// one on 65,536 ranks (65,536 · 65,535 exchanges) is refused either way.
#[test]
fn lockstep_is_bounded_by_its_exchanges() {
    let spec = Spec::new(16_384, 8);
    assert!(build(Op::Alltoall, "pairwise", &spec, &|_| (1.0, 2.0)).is_err());
    assert!(ruled(Op::Alltoall, "pairwise", &spec).unwrap().is_some());
    let e = ruled(Op::Alltoall, "pairwise", &Spec::new(65_536, 8)).unwrap_err();
    assert!(e.to_string().contains("4294901760 exchanges"), "{e}");
}
