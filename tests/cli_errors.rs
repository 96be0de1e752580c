//! Input the command line refuses, each with exit status 2 and an error that says where and
//! what was expected: every malformed-input case of issue 2, a trace without parameters, and
//! traces or schedules too large for the memory available; and a job that died, which loads
//! with a warning.

mod common;

use common::{bin, fixture, json, run, synthesized};
use loggps_predict::model::Params;
use loggps_predict::trace::{self, Trace, binary};
use serde_json::Value;

/// A trace too large for the memory available (as `LOGGPS_MEMORY_AVAILABLE` sets it) is an
/// error before anything is allocated for it: loading takes 19 bytes an event and 250 a rank,
/// a prediction at least 12 and 256 more (links, call times, rank states).
#[test]
fn too_little_memory_is_an_error_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let ring = ["--pattern", "ring", "--ranks", "4", "--iterations", "500"];
    let t = &synthesized(dir.path(), &ring);
    let events = json(&["info", t, "--format", "json"])["events"]
        .as_u64()
        .unwrap();
    let with = |args: &[&str], available: u64| {
        bin()
            .args(args)
            .env("LOGGPS_MEMORY_AVAILABLE", available.to_string())
            .output()
            .unwrap()
    };
    let fails = |args: &[&str], available: u64, what: &str| {
        let out = with(args, available);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        expect_err(
            &err,
            &[t, &format!("{what} {events} events of 4 ranks needs about")],
        );
    };
    let (load, predict) = (19 * events + 250 * 4, 31 * events + 506 * 4);
    fails(&["info", t], load - 1, "loading");
    assert!(with(&["info", t], load).status.success());
    let prediction = [t, "--platform", "myrinet"];
    fails(&prediction, predict - 1, "predicting on");
    assert!(with(&prediction, predict).status.success());
    let out = bin()
        .args(["info", t])
        .env("LOGGPS_MEMORY_AVAILABLE", "8G")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    expect_err(
        &err,
        &["LOGGPS_MEMORY_AVAILABLE is \"8G\", not a number of bytes"],
    );
}

/// A collective's schedule too large for the memory available is an error before it is built:
/// a binomial scatter on 262,144 ranks is bounded by 6 · 262144 = 1,572,864 steps, at 64
/// bytes a step 100,663,296 bytes (96 MB). Smaller schedules are not checked, nor collectives
/// that a rule gives (a barrier in lockstep, a binomial broadcast), which are never built.
#[test]
fn a_schedule_too_large_for_the_memory_is_an_error_before_building() {
    let with = |op: &str, ranks: &str, available: u64| {
        bin()
            .args(["collective", op, "--ranks", ranks, "--platform", "myrinet"])
            .env("LOGGPS_MEMORY_AVAILABLE", available.to_string())
            .output()
            .unwrap()
    };
    let out = with("scatter", "262144", 100_663_295);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    expect_err(
        &err,
        &[
            "scatter by binomial on 262144 ranks needs about 96 MB of memory and 96 MB is \
             available; run it on a machine with more memory",
        ],
    );
    assert!(with("scatter", "262144", 100_663_296).status.success());
    assert!(with("scatter", "4096", 1).status.success());
    assert!(with("barrier", "262144", 1).status.success());
    assert!(with("bcast", "262144", 1).status.success());
}

#[test]
fn no_parameters_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.txt");
    let text = std::fs::read_to_string(fixture("rtt/k1000-w0.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("params"))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&f, text).unwrap();
    let out = run(&[f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no LogGPS parameters")
            && err.contains("--platform")
            && err.contains("--params"),
        "{err}"
    );
}

// ---- malformed input: every case of issue 2 point 4 ----

/// The fixture of every routine in the binary encoding, with or without its index.
fn valid_binary(finalize: bool) -> Vec<u8> {
    let t = trace::parse("f", &std::fs::read(fixture("all-routines.txt")).unwrap()).unwrap();
    let mut b = Vec::new();
    binary::write(&t, &mut b, finalize).unwrap();
    b
}

/// Runs `predict` on `data` written as file `name`: its exit status and stderr.
fn predict(name: &str, data: &[u8]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join(name);
    std::fs::write(&f, data).unwrap();
    let out = run(&[f.to_str().unwrap(), "--platform", "myrinet"]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Runs `predict` on `data` and returns stderr, asserting exit status 2.
fn rejected(name: &str, data: &[u8]) -> String {
    let (code, err) = predict(name, data);
    assert_eq!(code, Some(2), "{name}: {err}");
    assert!(
        err.contains(name),
        "{name}: the error names the file: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn expect_err(err: &str, parts: &[&str]) {
    for p in parts {
        assert!(err.contains(p), "expected {p:?} in: {err}");
    }
}

/// The binary header's length: a file cut before it is no trace.
const HEADER_LEN_FOR_TESTS: usize = 16;

/// The byte offset of the first E chunk of a binary trace.
fn first_event_chunk(b: &[u8]) -> usize {
    let mut at = 16;
    while b[at] != b'E' {
        at += 9 + u32::from_le_bytes(b[at + 5..at + 9].try_into().unwrap()) as usize;
    }
    at
}

#[test]
fn empty_file() {
    expect_err(&rejected("empty.bin", b""), &["empty"]);
}

#[test]
fn bad_magic() {
    expect_err(
        &rejected("magic.bin", b"ELF\x7f not a trace at all"),
        &["byte 0", "bad magic", "LGPSTRC"],
    );
}

#[test]
fn unsupported_version() {
    let mut b = valid_binary(true);
    b[8] = 2;
    expect_err(
        &rejected("version.bin", &b),
        &["byte 8", "version 1", "found 2"],
    );
    expect_err(
        &rejected("version.txt", b"loggps-trace 7\nranks 1\n"),
        &["line 1", "version 1", "found 7"],
    );
}

#[test]
fn truncated_header() {
    expect_err(
        &rejected("header.bin", &valid_binary(true)[..13]),
        &["byte 12", "number of ranks", "truncated"],
    );
}

#[test]
fn truncated_index() {
    let b = valid_binary(true);
    // Cut inside the X chunk: the trailer is gone and the last chunk runs past the end.
    let cut = b.len() - 16 - 5;
    let x_at = u64::from_le_bytes(b[b.len() - 16..b.len() - 8].try_into().unwrap());
    expect_err(
        &loaded("index.bin", &b[..cut]),
        &[
            &format!("the file ends inside the chunk at byte {x_at}"),
            "loaded what comes before it",
            "not finalized (no index: its end is missing), though every rank reached MPI_Finalize",
        ],
    );
    // Cut anywhere past its job chunk, a trace without its trailer loads what it holds;
    // cut inside the job chunk, it holds nothing to load.
    for cut in (first_event_chunk(&b)..b.len() - 16).step_by(7) {
        loaded("cut.bin", &b[..cut]);
    }
    expect_err(
        &rejected("job.bin", &b[..HEADER_LEN_FOR_TESTS + 12]),
        &["the file ends inside its first chunks", "nothing to load"],
    );
    // An index entry that points elsewhere.
    let mut b2 = b.clone();
    let entry = x_at as usize + 9 + 4 + 4;
    b2[entry] ^= 0x40;
    expect_err(&rejected("index2.bin", &b2), &["expected index entry"]);
}

#[test]
fn truncated_record() {
    let mut b = valid_binary(false);
    let e = first_event_chunk(&b);
    let len = u32::from_le_bytes(b[e + 5..e + 9].try_into().unwrap());
    // Shorten the first E chunk by one byte: its last record loses its last field.
    b[e + 5..e + 9].copy_from_slice(&(len - 1).to_le_bytes());
    b.remove(e + 9 + len as usize - 1);
    expect_err(
        &rejected("record.bin", &b),
        &["rank 0, event 51", "duration", "truncated"],
    );
}

#[test]
fn counts_larger_than_the_file() {
    let mut b = valid_binary(true);
    let e = first_event_chunk(&b);
    b[e + 9..e + 13].copy_from_slice(&1_000_000u32.to_le_bytes());
    expect_err(
        &rejected("count.bin", &b),
        &[&format!("byte {}", e + 9), "found a count of 1000000"],
    );
    let mut b = valid_binary(true);
    b[12..16].copy_from_slice(&(1u32 << 20).to_le_bytes());
    expect_err(&rejected("ranks.bin", &b), &["byte 12", "found 1048576"]);
    expect_err(
        &rejected("ranks.txt", b"loggps-trace 1\nranks 999999\n"),
        &["line 2", "found 999999"],
    );
    let mut b = valid_binary(true);
    let len_at = first_event_chunk(&b) + 5;
    b[len_at..len_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    expect_err(
        &rejected("chunk.bin", &b),
        &[&format!("byte {}", len_at - 5), "chunk of at most"],
    );
}

#[test]
fn unknown_routine_code() {
    let mut b = valid_binary(true);
    let e = first_event_chunk(&b);
    b[e + 13] = 99;
    expect_err(
        &rejected("code.bin", &b),
        &[
            &format!("byte {}", e + 13),
            "rank 0, event 0",
            "routine code",
            "found 99",
        ],
    );
    expect_err(
        &rejected(
            "code.txt",
            b"loggps-trace 1\nranks 1\n0 MPI_Frobnicate 0 1\n",
        ),
        &["line 3", "rank 0, event 0", "MPI_Frobnicate"],
    );
}

#[test]
fn time_going_backwards() {
    let t =
        "loggps-trace 1\nranks 1\n0 MPI_Init 0 100\n0 MPI_Barrier 50 60\n0 MPI_Finalize 70 80\n";
    expect_err(
        &rejected("back.txt", t.as_bytes()),
        &["rank 0, event 1", "MPI_Barrier", "time goes backwards"],
    );
    let t = "loggps-trace 1\nranks 1\n0 MPI_Init 0 100\n0 MPI_Finalize 170 150\n";
    expect_err(
        &rejected("back2.txt", t.as_bytes()),
        &["rank 0, event 1", "time goes backwards"],
    );
    // The binary encoding can carry a negative gap; the reader reports it the same way.
    let tr = trace::parse("t", t.replace("170 150", "170 180").as_bytes()).unwrap();
    let mut b = Vec::new();
    binary::write(&tr, &mut b, true).unwrap();
    let e = first_event_chunk(&b);
    // Second record (Finalize): code, gap = 70 (zigzag 140 = 0x8c 0x01); make the gap −70 (zigzag 139).
    let pos = b[e + 13..]
        .windows(3)
        .position(|w| w == [2, 0x8c, 0x01])
        .unwrap()
        + e
        + 13;
    b[pos + 1] = 0x8b;
    expect_err(
        &rejected("back.bin", &b),
        &["rank 0, event 1", "time goes backwards"],
    );
}

/// Runs `predict` on `data` and returns stderr, asserting success.
fn loaded(name: &str, data: &[u8]) -> String {
    let (code, err) = predict(name, data);
    assert_eq!(code, Some(0), "{name}: {err}");
    err
}

/// A job may end with messages nobody received: a warning naming them, not a refusal.
#[test]
fn unmatched_messages() {
    let t = "loggps-trace 1\nranks 2\n0 MPI_Send 0 1 bytes=8 peer=1 tag=3\n0 MPI_Send 2 3 bytes=8 peer=1 tag=4\n1 MPI_Recv 0 5 bytes=8 peer=0 tag=4\n1 MPI_Recv 6 7 bytes=8 peer=0 tag=9 comm=0\n";
    let err = loaded("unmatched.txt", t.as_bytes());
    expect_err(
        &err,
        &[
            "1 send(s) with no matching receive",
            "rank 0 event 0 MPI_Send to rank 1 tag 3 comm 0",
        ],
    );
    expect_err(
        &err,
        &[
            "1 receive(s) with no matching send",
            "rank 1 event 1 MPI_Recv from rank 0 tag 9 comm 0",
        ],
    );
}

#[test]
fn requests_completed_twice_or_never() {
    let twice = "loggps-trace 1\nranks 2\n0 MPI_Isend 0 1 bytes=8 peer=1 req=0\n0 MPI_Wait 2 3 done=0:-1:-1\n0 MPI_Wait 4 5 done=0:-1:-1\n1 MPI_Recv 0 5 bytes=8 peer=0\n";
    expect_err(
        &rejected("twice.txt", twice.as_bytes()),
        &[
            "rank 0, event 2",
            "MPI_Wait",
            "completes request 0 a second time (event 1",
        ],
    );
    // Left pending at the end (legal): a warning naming the request's creator.
    let never = "loggps-trace 1\nranks 2\n0 MPI_Isend 0 1 bytes=8 peer=1 req=0\n1 MPI_Recv 0 5 bytes=8 peer=0\n";
    expect_err(
        &loaded("never.txt", never.as_bytes()),
        &[
            "1 request(s) never completed by a Wait, Test or MPI_Request_free",
            "rank 0 event 0 MPI_Isend",
        ],
    );
    let unknown = "loggps-trace 1\nranks 1\n0 MPI_Wait 0 1 done=3:-1:-1\n";
    expect_err(
        &rejected("unknown.txt", unknown.as_bytes()),
        &["rank 0, event 0", "request 3 which no earlier call created"],
    );
}

#[test]
fn text_syntax_errors_name_the_line() {
    expect_err(
        &rejected(
            "syntax.txt",
            b"loggps-trace 1\nranks 2\n0 MPI_Send 1 2 bytes=x peer=1\n",
        ),
        &["line 3", "rank 0, event 0", "bytes"],
    );
    expect_err(
        &rejected("syntax2.txt", b"loggps-trace 1\nranks 2\nwhat is this\n"),
        &["line 3", "expected a header line"],
    );
    expect_err(
        &rejected("syntax3.txt", b"loggps-trace 1\nranks 2\n5 MPI_Init 1 2\n"),
        &["line 3", "rank below 2"],
    );
}

#[test]
fn unfinalized_trace_loads_with_a_warning() {
    // A job that died: no index, rank 1 stopped after its receive, before sending back.
    let mut t: Trace =
        trace::parse("t", &std::fs::read(fixture("rtt/k1000-w0.txt")).unwrap()).unwrap();
    let mut cut = loggps_predict::trace::Events::new(0);
    for r in 0..2 {
        cut.push_rank();
        // rank 1 stops after its first two events
        let keep = if r == 1 { 2 } else { t.rank(r).len() };
        for i in 0..keep {
            loggps_predict::trace::Push::push_from(&mut cut, t.rank(r), i);
        }
    }
    t.events = cut;
    let mut b = Vec::new();
    binary::write(&t, &mut b, false).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("partial.bin");
    std::fs::write(&f, &b).unwrap();
    let out = run(&[f.to_str().unwrap(), "--format", "json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for threads in ["1", "4"] {
        let again = run(&[
            f.to_str().unwrap(),
            "--format",
            "json",
            "--threads",
            threads,
        ]);
        assert_eq!((&again.stdout, &again.stderr), (&out.stdout, &out.stderr));
    }
    assert!(
        err.contains("not finalized") && err.contains("1 of 2 ranks have no MPI_Finalize: 1"),
        "{err}"
    );
    assert!(
        err.contains("1 receive(s) with no matching send: rank 0 event 2 MPI_Recv from rank 1"),
        "{err}"
    );
    let p = Params::preset("myrinet").unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Rank 1 got rank 0's message (its Recv returns at T1+T2+T3) and stops at its Send.
    let one_way = p.t1(1000) + p.t2(1000) + p.t3(1000);
    assert!(
        (v["ranks"][1]["end_s"].as_f64().unwrap() * 1e9 - one_way).abs() < 1e-6,
        "{v}"
    );
}
