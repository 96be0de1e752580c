//! `predict --critical-path`: the chain that sets the predicted runtime, on hand-built traces
//! whose path is known (Myrinet preset; terms as in src/model/MODEL.md §6: for k = 12000,
//! T1 = 88,870, T2' = 125,138.02, T3 = 37,390 ns; for k = 20,000 by rendezvous, o = 6,550,
//! T5 = 14,260, T1 = 143,750 ns).

mod common;

use common::{fixture, json, text_trace};
use serde_json::Value;

const PARAMS: &str = "params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383";

/// The critical path of a prediction with `args`, checked to add up to the predicted runtime.
fn critical(args: &[&str]) -> Value {
    let v = json(&[args, &["--critical-path", "--format", "json"]].concat());
    let c = v["critical_path"].clone();
    let length = c["length_s"].as_f64().unwrap();
    assert!(
        (length - v["predicted_s"].as_f64().unwrap()).abs() < 1e-15,
        "{c}"
    );
    let parts: f64 = [
        "computation_s",
        "communication_s",
        "sender_sync_s",
        "receiver_sync_s",
    ]
    .iter()
    .map(|k| c[k].as_f64().unwrap())
    .sum();
    assert!((parts - length).abs() < 1e-15, "{c}");
    c
}

fn ns(v: &Value) -> f64 {
    v.as_f64().unwrap() * 1e9
}

fn close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() < 1e-6, "{what}: {got} != {want}");
}

/// k = 12000, w = 0: each rank's Recv waits for the other's Send, so the path crosses twice:
/// rank 0's Send at 0, the message and rank 1's Recv to 251,398.02 (T1 + T2' + T3), rank 1's
/// Send there, the message and rank 0's Recv to 502,796.04. No computation, no wait left.
#[test]
fn a_round_trip_without_computation_crosses_at_each_wait() {
    let f = fixture("rtt/k12000-w0.txt");
    let c = critical(&[f.to_str().unwrap()]);
    assert_eq!(c["jumps"], 2);
    close(ns(&c["communication_s"]), 502_796.04, "communication");
    close(ns(&c["computation_s"]), 0.0, "computation");
    close(ns(&c["by_rank"][0]["time_s"]), 251_398.02, "rank 0");
    close(ns(&c["by_rank"][1]["time_s"]), 251_398.02, "rank 1");
    close(ns(&c["by_routine"]["MPI_Recv"]), 502_796.04, "MPI_Recv");
}

/// k = 12000, w = 500 µs: rank 0's Recv finds its message there, so the path stays on rank 0:
/// its Send (T1 = 88,870), 500 µs of computation, its Recv (T3 = 37,390).
#[test]
fn a_round_trip_with_computation_stays_on_the_rank_that_computes() {
    let f = fixture("rtt/k12000-w500000.txt");
    let c = critical(&[f.to_str().unwrap()]);
    assert_eq!(c["jumps"], 0);
    assert_eq!(c["by_rank"].as_array().unwrap().len(), 1, "{c}");
    assert_eq!(c["by_rank"][0]["rank"], 0);
    close(ns(&c["computation_s"]), 500_000.0, "computation");
    close(ns(&c["by_routine"]["MPI_Send"]), 88_870.0, "MPI_Send");
    close(ns(&c["by_routine"]["MPI_Recv"]), 37_390.0, "MPI_Recv");
}

/// A rendezvous Send (k = 20,000 > S) at 0 waits for its receive, called at 100,000 after
/// rank 0 computed: it returns at 100,000 + o + T5 + T1 = 264,560, then rank 1 computes 1 ms.
/// The path: rank 0's 100 µs, the Send from the receive's call to its return (164,560), rank
/// 1's 1 ms. Drawn on the timeline: a `critical path` track per rank and the jump's arrow.
#[test]
fn a_rendezvous_send_waits_for_its_receivers_computation() {
    let t = format!(
        "loggps-trace 1\nranks 2\n{PARAMS}\n\
        0 MPI_Init 0 0\n0 MPI_Recv 100000 100100 bytes=20000 peer=1 tag=0\n0 MPI_Finalize 100100 100200\n\
        1 MPI_Init 0 0\n1 MPI_Send 0 10 bytes=20000 peer=0 tag=0\n1 MPI_Finalize 1000010 1000020\n"
    );
    let (d, f) = text_trace("rdv.txt", &t);
    let c = critical(&[&f]);
    assert_eq!(c["jumps"], 1);
    close(ns(&c["length_s"]), 1_264_560.0, "length");
    close(ns(&c["computation_s"]), 1_100_000.0, "computation");
    close(ns(&c["communication_s"]), 164_560.0, "communication");
    close(ns(&c["sender_sync_s"]), 0.0, "sender sync");
    close(ns(&c["by_rank"][0]["time_s"]), 100_000.0, "rank 0");
    close(ns(&c["by_rank"][1]["time_s"]), 1_164_560.0, "rank 1");
    close(ns(&c["by_routine"]["MPI_Send"]), 164_560.0, "MPI_Send");

    let tl = d.path().join("t.json");
    let v = json(&[
        &f,
        "--critical-path",
        "--timeline",
        tl.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(v["critical_path"], c);
    let tl: Value = serde_json::from_slice(&std::fs::read(&tl).unwrap()).unwrap();
    let events = tl["traceEvents"].as_array().unwrap();
    let track = |pid: i64| -> Vec<(String, f64, f64)> {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["tid"] == 2)
            .map(|e| {
                let n = e["name"].as_str().unwrap().to_string();
                (n, e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap())
            })
            .collect()
    };
    assert_eq!(track(0), [("computation".to_string(), 0.0, 100.0)]);
    assert_eq!(
        track(1),
        [
            ("MPI_Send".to_string(), 100.0, 164.56),
            ("computation".to_string(), 264.56, 1000.0)
        ]
    );
    let arrows: Vec<(String, i64, f64)> = events
        .iter()
        .filter(|e| e["cat"] == "critical" && e["ph"] != "X")
        .map(|e| {
            let ph = e["ph"].as_str().unwrap().to_string();
            (ph, e["pid"].as_i64().unwrap(), e["ts"].as_f64().unwrap())
        })
        .collect();
    assert_eq!(
        arrows,
        [("s".to_string(), 0, 100.0), ("f".to_string(), 1, 100.0)]
    );
}

/// A collective waits for the participant that calls last: rank 0 computes 50 µs before the
/// Barrier, rank 1 calls it at 0 and computes 1 ms after. The path: rank 0's 50 µs, the
/// Barrier on rank 1 from rank 0's call to its return, rank 1's 1 ms.
#[test]
fn a_collective_waits_for_the_last_to_call() {
    let t = format!(
        "loggps-trace 1\nranks 2\n{PARAMS}\n\
        0 MPI_Init 0 0\n0 MPI_Barrier 50000 50100 comm=0\n0 MPI_Finalize 50100 50200\n\
        1 MPI_Init 0 0\n1 MPI_Barrier 0 50100 comm=0\n1 MPI_Finalize 1050100 1050200\n"
    );
    let (_d, f) = text_trace("barrier.txt", &t);
    for coll in ["modeled", "measured"] {
        let c = critical(&[&f, "--coll", coll]);
        assert_eq!(c["jumps"], 1, "{coll}: {c}");
        close(ns(&c["by_rank"][0]["time_s"]), 50_000.0, coll);
        close(ns(&c["computation_s"]), 1_050_000.0, coll);
        let barrier = ns(&c["by_routine"]["MPI_Barrier"]);
        close(ns(&c["length_s"]), 1_050_000.0 + barrier, coll);
    }
}

/// A Wait whose return is its request's completion, not a wait for anyone: an eager Isend of
/// k = 12000 at 0 completes at T1 = 88,870, after the Wait's call (16,550: the Isend's o and
/// 10 µs of computation). The path goes from the Wait's return to the Isend's call: the 10 µs
/// and the Isend's o are not on it. Rank 0 then computes 1 ms: 1,088,870 in all.
#[test]
fn a_wait_comes_from_its_requests_start() {
    let t = format!(
        "loggps-trace 1\nranks 2\n{PARAMS}\n\
        0 MPI_Init 0 0\n0 MPI_Isend 0 10 bytes=12000 peer=1 tag=0 req=0\n0 MPI_Wait 10010 10020 done=0:-1:-1\n0 MPI_Finalize 1010020 1010030\n\
        1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=12000 peer=0 tag=0\n1 MPI_Finalize 10 20\n"
    );
    let (_d, f) = text_trace("wait.txt", &t);
    let c = critical(&[&f]);
    close(ns(&c["length_s"]), 1_088_870.0, "length");
    close(ns(&c["computation_s"]), 1_000_000.0, "computation");
    close(ns(&c["by_routine"]["MPI_Wait"]), 88_870.0, "MPI_Wait");
    assert!(c["by_routine"].get("MPI_Isend").is_none(), "{c}");
    assert_eq!(c["jumps"], 1);
    assert_eq!(c["by_rank"].as_array().unwrap().len(), 1, "{c}");
}

/// Where messages move only inside calls, an eager Isend copies its message out before it
/// returns, as the libraries do (MODEL.md §4, progress): k = 1,000 (T1 = o + k·Os = 6,550 +
/// 6,860 = 13,410; the message arrives at T1 + T2 = 30,050 and rank 1's Recv returns T3
/// later, at 39,170, either way). Rank 0 computes 10,000 ns between its Isend and its Wait and
/// 100,000 after it.
/// - async (the paper's): the Isend returns at o = 6,550, the Wait, called at 16,550, at
///   max(0 + T1, 16,550 + o) = 23,100; the run ends at 123,100, 13,100 of it communication.
/// - calls: the Isend returns at T1 = 13,410, the Wait (called at 23,410) at + o = 29,960;
///   the run ends at 129,960, 19,960 of it communication. The path stays on rank 0.
#[test]
fn at_calls_an_eager_isend_copies_its_message_before_it_returns() {
    let t = format!(
        "loggps-trace 1\nranks 2\n{PARAMS}\n\
         0 MPI_Init 0 0\n0 MPI_Isend 0 10 bytes=1000 peer=1 tag=0 req=0\n\
         0 MPI_Wait 10010 10020 done=0:-1:-1\n0 MPI_Finalize 110020 110030\n\
         1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=1000 peer=0 tag=0\n1 MPI_Finalize 10 20\n"
    );
    let (_d, f) = text_trace("isend.txt", &t);
    for (progress, end, comm) in [
        ("async", 123_100.0, 13_100.0),
        ("calls", 129_960.0, 19_960.0),
    ] {
        let c = critical(&[&f, "--progress", progress]);
        close(ns(&c["length_s"]), end, progress);
        close(ns(&c["communication_s"]), comm, progress);
        close(ns(&c["computation_s"]), 110_000.0, progress);
        assert_eq!(c["jumps"], 0, "{progress}: {c}");
    }
}

/// A `clean` rendezvous message (the model's §13) on the path costs what the replay costed it:
/// Myrinet's 16,384 B sent at 0 and received by a call at 0, with `--clean 0.5`, ends at
/// 173,267.49 (tests/cli_overheads.rs), all of it communication on the receiver's Recv.
#[test]
fn a_clean_message_is_costed_on_the_path_as_in_the_replay() {
    let t = format!(
        "loggps-trace 1\nranks 2\n{PARAMS}\n\
        0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes=16384 peer=1 tag=0 flags=clean\n0 MPI_Finalize 10 20\n\
        1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=16384 peer=0 tag=0\n1 MPI_Finalize 10 20\n"
    );
    let (_d, f) = text_trace("clean.txt", &t);
    let c = critical(&[&f, "--clean", "0.5"]);
    close(ns(&c["length_s"]), 173_267.49, "length");
    close(ns(&c["by_routine"]["MPI_Recv"]), 173_267.49, "MPI_Recv");
}
