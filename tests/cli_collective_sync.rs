//! Modeled collectives: synchronization inside the schedule, by hand, under LogGPS and LogGP.

mod common;

use common::{assert_close, coll_trace, json, rank_ns};
use serde_json::Value;

/// LogGPS parameters for the hand computations below: o + L = 1100, T5 = o + L + o = 1200, and
/// for k ≤ s = 1000 bytes T1 = T3 = o + k, T2 = k + L; S = 100.
const LOGGPS_BY_HAND: [&str; 16] = [
    "--L", "1000", "--o", "100", "--Os", "1", "--Or", "1", "--Gs", "1", "--Gl", "1", "--s", "1000",
    "--S", "100",
];

/// Asserts rank `r`'s `[end, computation, communication, sender sync, receiver sync]` (ns).
fn assert_parts(v: &Value, r: usize, want: [f64; 5], case: &str) {
    let names = [
        "end",
        "computation",
        "communication",
        "sender sync",
        "receiver sync",
    ];
    for ((got, want), name) in rank_ns(v, r).into_iter().zip(want).zip(names) {
        assert_close(got, want, &format!("{case}, rank {r} {name}"));
    }
}

/// A 2-rank MPI_Bcast (binomial: the root sends, rank 1 receives) under LogGPS, each order of
/// arrival, on both sides of S = 100. One rank calls at 0, the other at 10 000.
///
/// k = 200 > S, rendezvous (send returns max(ts + o + L, tr) + o + T5 + T1 = max(..) + 1600;
/// receive max(ts + o + L, tr) + o + T5 + T1 + T2 + T3 = max(..) + 3100, T1 = T3 = 300, T2 = 1200):
/// - root at 0, rank 1 at 10 000: the REQ is in at 1100, confirmed at tr = 10 000; the root
///   returns 11 600 with sender sync 10 000 − 1100 = 8900, communication 2700; rank 1 returns
///   13 100, no wait (communication 3100, computation 10 000).
/// - root at 10 000, rank 1 at 0: confirmed at 11 100; the root returns 12 700, no sender sync
///   (communication 2700); rank 1 returns 14 200 with receiver sync 11 100 − 0 (communication
///   3100).
///
/// k = 50 ≤ S, eager (send returns ts + T1 = ts + 150; the data is in at ts + T1 + T2 =
/// ts + 1200, the receive returns max(that, tr) + T3 = max(..) + 150):
/// - root at 10 000, rank 1 at 0: the root returns 10 150 (communication 150); the data is in at
///   11 200, rank 1 returns 11 350 with receiver sync 11 200 (communication 150).
/// - root at 0, rank 1 at 10 000: the root returns 150; the data was in at 1200, rank 1
///   returns 10 150 without waiting (communication 150).
///
/// (The old approximation counted the wait for the last arrival as receiver sync: 10 000 at the
/// early rank in every case.)
#[test]
fn modeled_bcast_synchronization_by_hand() {
    // (k, root's call, rank 1's call, root's parts, rank 1's parts)
    type Case = (u64, u64, u64, [f64; 5], [f64; 5]);
    let cases: [Case; 4] = [
        (
            200,
            0,
            10_000,
            [11_600.0, 0.0, 2700.0, 8900.0, 0.0],
            [13_100.0, 10_000.0, 3100.0, 0.0, 0.0],
        ),
        (
            200,
            10_000,
            0,
            [12_700.0, 10_000.0, 2700.0, 0.0, 0.0],
            [14_200.0, 0.0, 3100.0, 0.0, 11_100.0],
        ),
        (
            50,
            10_000,
            0,
            [10_150.0, 10_000.0, 150.0, 0.0, 0.0],
            [11_350.0, 0.0, 150.0, 0.0, 11_200.0],
        ),
        (
            50,
            0,
            10_000,
            [150.0, 0.0, 150.0, 0.0, 0.0],
            [10_150.0, 10_000.0, 150.0, 0.0, 0.0],
        ),
    ];
    for (k, root_call, other_call, root, other) in cases {
        let (_d, f) = coll_trace(
            "MPI_Bcast",
            &[
                (root_call, format!("root=0 bytes={k}")),
                (other_call, format!("root=0 recv_bytes={k}")),
            ],
        );
        let args = [
            &[f.as_str(), "--coll", "bcast=binomial", "--format", "json"][..],
            &LOGGPS_BY_HAND[..],
        ]
        .concat();
        let v = json(&args);
        let case = format!("k = {k}, root at {root_call}");
        assert_parts(&v, 0, root, &case);
        assert_parts(&v, 1, other, &case);
        // The per-kind time is the whole time in the call, as before.
        let per_rank = ((root[0] - root_call as f64) + (other[0] - other_call as f64)) / 2.0;
        assert_close(
            v["collectives_s"]["MPI_Bcast"].as_f64().unwrap() * 1e9,
            per_rank,
            &case,
        );
    }
}

/// A 4-rank binomial MPI_Bcast of k = 200 > S (rendezvous): rank 0 sends to 2, then to 1;
/// rank 2 forwards to 3. Calls at 0, 0, 5000, 20 000. With send = max(ts + 1100, tr) + 1600,
/// receive = max(ts + 1100, tr) + 3100:
/// - 0→2: ts = 0, tr = 5000: rank 0's send returns 6600, sender sync 5000 − 1100 = 3900;
///   rank 2's receive returns 8100, no wait.
/// - 0→1: ts = 6600, tr = 0: confirmed at 7700; rank 0 returns 9300 (no wait), rank 1 returns
///   10 800 with receiver sync 7700.
/// - 2→3: ts = 8100, tr = 20 000: rank 2 returns 21 600 with sender sync 20 000 − 9200 =
///   10 800; rank 3 returns 23 100, no wait.
///
/// Communication: rank 0 9300 − 3900 = 5400; rank 1 3100; rank 2 16 600 − 10 800 = 5800;
/// rank 3 3100.
#[test]
fn modeled_binomial_bcast_synchronization_by_hand() {
    let calls = [0, 0, 5000, 20_000];
    let fields = |r: usize| {
        if r == 0 {
            "root=0 bytes=200"
        } else {
            "root=0 recv_bytes=200"
        }
    };
    let (_d, f) = coll_trace(
        "MPI_Bcast",
        &calls
            .iter()
            .enumerate()
            .map(|(r, &c)| (c, fields(r).to_string()))
            .collect::<Vec<_>>(),
    );
    let v = json(
        &[
            &[f.as_str(), "--coll", "bcast=binomial", "--format", "json"][..],
            &LOGGPS_BY_HAND[..],
        ]
        .concat(),
    );
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        23_100.0,
        "predicted",
    );
    assert_parts(&v, 0, [9300.0, 0.0, 5400.0, 3900.0, 0.0], "binomial");
    assert_parts(&v, 1, [10_800.0, 0.0, 3100.0, 0.0, 7700.0], "binomial");
    assert_parts(&v, 2, [21_600.0, 5000.0, 5800.0, 10_800.0, 0.0], "binomial");
    assert_parts(&v, 3, [23_100.0, 20_000.0, 3100.0, 0.0, 0.0], "binomial");
}

/// A schedule's SendRecv step splits as the replay splits MPI_Sendrecv (the Wait rule of the
/// model documentation (src/model/MODEL.md)): a 2-rank recursive-doubling MPI_Allreduce of
/// k = 200 > S is one SendRecv per rank (plus a free reduction), and must equal the same
/// exchange traced as MPI_Sendrecv. Rank 0 calls at 0, rank 1 at 10 000.
/// - Rank 0: its send (tr = 10 000) completes at 10 000 + 1600 = 11 600; its receive (ts =
///   10 000, REQ in at 11 100) at 11 100 + 3100 = 14 200, the critical one: it returns 14 200
///   with receiver sync 11 100 − 0 (the REQ's arrival), communication 3100.
/// - Rank 1: its send (REQ in at 11 100) completes at 12 700; its receive (ts = 0, REQ in at
///   1100, called at 10 000) at 13 100, critical, unblocked before the call: no sync,
///   communication 3100.
#[test]
fn modeled_sendrecv_step_splits_like_mpi_sendrecv() {
    let want = [
        [14_200.0, 0.0, 3100.0, 0.0, 11_100.0],
        [13_100.0, 10_000.0, 3100.0, 0.0, 0.0],
    ];
    let coll = [
        (0, "bytes=200 recv_bytes=200".to_string()),
        (10_000, "bytes=200 recv_bytes=200".to_string()),
    ];
    let (_d, f) = coll_trace("MPI_Allreduce", &coll);
    let v = json(
        &[
            &[
                f.as_str(),
                "--coll",
                "allreduce=recursive-doubling",
                "--format",
                "json",
            ][..],
            &LOGGPS_BY_HAND[..],
        ]
        .concat(),
    );
    let p2p = [
        (0, "bytes=200 peer=1 recv_bytes=200 source=1".to_string()),
        (
            10_000,
            "bytes=200 peer=0 recv_bytes=200 source=0".to_string(),
        ),
    ];
    let (_d2, f2) = coll_trace("MPI_Sendrecv", &p2p);
    let w = json(&[&[f2.as_str(), "--format", "json"][..], &LOGGPS_BY_HAND[..]].concat());
    for (r, want) in want.into_iter().enumerate() {
        assert_parts(&v, r, want, "modeled allreduce");
        assert_parts(&w, r, want, "traced MPI_Sendrecv");
    }
}

/// LogGP has no rendezvous: a 2-rank binomial MPI_Bcast of k = 51 bytes (L = 1000, o = 100,
/// g = 50, G = 2, (k−1)G = 100), root at 5000, rank 1 at 0. The root's first byte leaves at
/// 5100, its last at 5200, arriving 6200; it ends when its port is done, 5200 + g = 5250
/// (communication 250, no sender sync). Rank 1 waits for the last byte: returns 6200 + o =
/// 6300, receiver sync 6200 − 0, communication 100.
#[test]
fn modeled_bcast_under_loggp_by_hand() {
    let (_d, f) = coll_trace(
        "MPI_Bcast",
        &[
            (5000, "root=0 bytes=51".to_string()),
            (0, "root=0 recv_bytes=51".to_string()),
        ],
    );
    let v = json(&[
        &f,
        "--coll",
        "bcast=binomial",
        "--model",
        "loggp",
        "--L",
        "1000",
        "--o",
        "100",
        "--g",
        "50",
        "--G",
        "2",
        "--format",
        "json",
    ]);
    assert_parts(&v, 0, [5250.0, 5000.0, 250.0, 0.0, 0.0], "LogGP");
    assert_parts(&v, 1, [6300.0, 0.0, 100.0, 0.0, 6200.0], "LogGP");
}
