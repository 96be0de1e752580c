//! `predict --calls`: the calls by routine and message size, predicted against measured, on
//! hand-built traces whose costs are known (Myrinet preset; terms as in src/model/MODEL.md §6:
//! k = 1000: T1 = 13,410, T2 = 16,640, T3 = 9,120 ns; k = 12000: T1 = 88,870, T2' = 125,138.02,
//! T3 = 37,390 ns; o = 6,550 ns).

mod common;

use common::{fixture, json, run, text_trace};
use serde_json::Value;

/// The row of `routine` in a prediction's `calls`, checked to be that size class.
fn row<'a>(calls: &'a Value, routine: &str, bytes: (u64, u64)) -> &'a Value {
    let r = (calls.as_array().unwrap().iter())
        .find(|r| r["routine"] == routine)
        .unwrap_or_else(|| panic!("no {routine} in {calls}"));
    assert_eq!(
        (r["bytes_from"].as_u64(), r["bytes_to"].as_u64()),
        (Some(bytes.0), Some(bytes.1)),
        "{r}"
    );
    r
}

fn close(got: &Value, want_ns: f64, what: &str) {
    let got = got.as_f64().unwrap() * 1e9;
    assert!((got - want_ns).abs() < 1e-6, "{what}: {got} != {want_ns}");
}

/// A round trip of 1000 B (`fixtures/rtt/k1000-w0.txt`): rank 0's Send returns at T1 =
/// 13,410, its Recv at the round trip, 78,340 (64,930 long); rank 1's Recv at T1 + T2 + T3 =
/// 39,170, its Send T1 later. Measured: the Sends 1,000 ns each, the Recvs 4,000 and 2,000.
#[test]
fn a_round_trip_is_summed_per_routine_and_size() {
    let f = fixture("rtt/k1000-w0.txt");
    let v = json(&[f.to_str().unwrap(), "--calls", "--format", "json"]);
    let calls = &v["calls"];
    assert_eq!(calls.as_array().unwrap().len(), 2, "{calls}");
    // The most measured time first: the Recvs.
    assert_eq!(calls[0]["routine"], "MPI_Recv", "{calls}");
    let recv = row(calls, "MPI_Recv", (512, 1023));
    assert_eq!(recv["calls"], 2);
    close(&recv["measured_s"], 6_000.0, "Recv measured");
    close(&recv["predicted_s"], 64_930.0 + 39_170.0, "Recv predicted");
    let ratio = recv["ratio"].as_f64().unwrap();
    assert!((ratio - 104_100.0 / 6_000.0).abs() < 1e-9, "{ratio}");
    let send = row(calls, "MPI_Send", (512, 1023));
    assert_eq!(send["calls"], 2);
    close(&send["measured_s"], 2_000.0, "Send measured");
    close(&send["predicted_s"], 2.0 * 13_410.0, "Send predicted");
    // The table says the same, one line a row.
    let out = run(&[f.to_str().unwrap(), "--calls"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("calls by routine and message size"), "{text}");
    let line =
        (text.lines().find(|l| l.starts_with("MPI_Recv "))).unwrap_or_else(|| panic!("{text}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(&fields[..3], &["MPI_Recv", "512–1023", "2"], "{line}");
    assert_eq!(fields[5], "17.35", "{line}");
}

/// A Wait is counted with the largest message it completes: rank 0's Isend of 12,000 B costs
/// o = 6,550, its Wait (called at 16,550: the Isend's o and 10 µs of computation) returns at
/// T1 = 88,870; rank 1's Recv returns at T1 + T2' + T3 = 251,398.02. Each measured 10 ns; the
/// rows tie on it and come by name.
#[test]
fn a_wait_is_sized_by_what_it_completes() {
    let t = "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
        0 MPI_Init 0 0\n0 MPI_Isend 0 10 bytes=12000 peer=1 tag=0 req=0\n0 MPI_Wait 10010 10020 done=0:-1:-1\n0 MPI_Finalize 1010020 1010030\n\
        1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=12000 peer=0 tag=0\n1 MPI_Finalize 10 20\n";
    let (_d, f) = text_trace("wait.txt", t);
    let v = json(&[&f, "--calls", "--format", "json"]);
    let calls = &v["calls"];
    let names: Vec<&str> = (calls.as_array().unwrap().iter())
        .map(|r| r["routine"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["MPI_Isend", "MPI_Recv", "MPI_Wait"], "{calls}");
    let class = (8192, 16383);
    close(
        &row(calls, "MPI_Isend", class)["predicted_s"],
        6_550.0,
        "Isend",
    );
    close(
        &row(calls, "MPI_Wait", class)["predicted_s"],
        88_870.0 - 16_550.0,
        "Wait",
    );
    close(
        &row(calls, "MPI_Recv", class)["predicted_s"],
        251_398.02,
        "Recv",
    );
    for r in calls.as_array().unwrap() {
        close(&r["measured_s"], 10.0, "measured");
    }
}

/// One prediction's calls: not with a sweep, and said to be left out of CSV.
#[test]
fn the_calls_follow_one_prediction() {
    let f = fixture("rtt/k1000-w0.txt");
    let out = run(&[f.to_str().unwrap(), "--calls", "--sweep", "S=4096,16384"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--calls follow one prediction"), "{err}");
    let out = run(&[f.to_str().unwrap(), "--calls", "--format", "csv"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not CSV"), "{err}");
}
