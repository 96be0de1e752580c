//! Overheads split around the message (the model's §9: `Od`, `Op`) and one CPU per rank (§10:
//! a completion call's receives pay their overheads one after another), costed by hand from
//! Myrinet's parameters (the paper's Table 5): for 1,000 B, `T1 = 6,550 + 1,000·6.86 =
//! 13,410`, `T2 = 1,000·15.48 + 1,160 = 16,640`, `T3 = 6,550 + 1,000·2.57 = 9,120`.

mod common;

use common::{assert_close, json, rank_ns, run, text_trace};

const MYRINET: &str = "params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383";

/// Rank 0 sends `k` bytes at 0; rank 1 computes `tr` ns, then receives.
fn one_message(k: u64, tr: u64) -> String {
    format!(
        "loggps-trace 1\nranks 2\n{MYRINET}\n\
         0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes={k} peer=1 tag=0\n0 MPI_Finalize 10 20\n\
         1 MPI_Init 0 0\n1 MPI_Recv {tr} {} bytes={k} peer=0 tag=0\n1 MPI_Finalize {} {}\n",
        tr + 10,
        tr + 10,
        tr + 20
    )
}

/// The JSON report of `trace` predicted with `args`.
fn predict(trace: &str, args: &[&str]) -> serde_json::Value {
    let (_d, f) = text_trace("t.txt", trace);
    json(&[&[f.as_str(), "--format", "json"], args].concat())
}

/// `trace` converted to `e.txt` and `e.bin` in the folder `path` names, with the set of file
/// `params` there embedded, each predicted without flags at `ns`; the text trace's contents.
fn embedded(trace: &str, path: &dyn Fn(&str) -> String, params: &str, ns: f64) -> String {
    for (to, name) in [("text", "e.txt"), ("binary", "e.bin")] {
        let out = run(&[
            "convert",
            trace,
            &path(name),
            "--to",
            to,
            "--params",
            &path(params),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        let v = json(&[&path(name), "--format", "json"]);
        assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, ns, name);
    }
    std::fs::read_to_string(path("e.txt")).unwrap()
}

/// Parameter `name` of a `sensitivity` JSON report.
fn parameter<'a>(s: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    (s["parameters"].as_array().unwrap().iter())
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {s}"))
}

/// `Od = 2,000`, `Op = 3,000`: the message leaves 2,000 ns before the send returns and arrives
/// at 13,410 − 2,000 + 16,640 = 28,050.
/// - Posted at 0 (long before): the receive has done `Op` by then and ends at 28,050 − 3,000 +
///   9,120 = 34,170 (39,170 without the split: the model's §6 vector), its wait for the message
///   28,050 receiver synchronization, the rest (`T3 − Op` = 6,120) communication. The send still
///   returns at `T1` = 13,410.
/// - Posted at 50,000 (the message there): its whole `T3`, 59,120.
/// - Posted at 26,000 (less than `Op` before the arrival): it starts its overhead at its call,
///   26,000 + 9,120 = 35,120, of which 2,050 waits for the message.
#[test]
fn od_moves_the_arrival_and_op_shortens_a_receive_posted_early() {
    let split = ["--Od", "2000", "--Op", "3000"];
    let v = predict(&one_message(1000, 0), &split);
    assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, 34_170.0, "early");
    let r1 = rank_ns(&v, 1);
    assert_close(r1[4], 28_050.0, "early: receiver sync up to the arrival");
    assert_close(r1[2], 6_120.0, "early: T3 − Op");
    assert_close(rank_ns(&v, 0)[0], 13_410.0, "the send returns at T1");
    // Both 0: the paper's vector, whether given or not.
    let none = predict(&one_message(1000, 0), &[]);
    assert_close(
        none["predicted_s"].as_f64().unwrap() * 1e9,
        39_170.0,
        "none",
    );
    let zero = predict(&one_message(1000, 0), &["--Od", "0", "--Op", "0"]);
    assert_close(
        zero["predicted_s"].as_f64().unwrap() * 1e9,
        39_170.0,
        "zero",
    );

    let late = predict(&one_message(1000, 50_000), &split);
    assert_close(
        late["predicted_s"].as_f64().unwrap() * 1e9,
        59_120.0,
        "late",
    );
    assert_close(rank_ns(&late, 1)[4], 0.0, "late: no wait");

    let between = predict(&one_message(1000, 26_000), &split);
    assert_close(
        between["predicted_s"].as_f64().unwrap() * 1e9,
        35_120.0,
        "between",
    );
    let r1 = rank_ns(&between, 1);
    assert_close(r1[4], 2_050.0, "between: the wait for the arrival");
    assert_close(r1[2], 7_070.0, "between: the rest of T3");
}

/// A send that departs (`departs_upto`, the model's §13): with `Od = 2,000`, `Op = 3,000` and
/// sends of up to 1,000 B departing, the send of 1,000 B returns when its message leaves,
/// 13,410 − 2,000 = 11,410; the message arrives at 28,050 as before and its receive carries
/// the `Od` (`T3` 9,120 + 2,000, of which `Op` + `Od` = 5,000 done when posted that early):
/// - posted at 0: 28,050 − 5,000 + 11,120 = 34,170, as before;
/// - posted at 26,000 (2,050 before the arrival): 26,000 + 11,120 = 37,120, 2,050 of it the
///   wait, 9,070 communication;
/// - posted at 50,000: 61,120.
///
/// A ping-pong at `w = 0` (rank 1 sends the message back when its receive returns) ends at
/// 2 × 34,170 = 68,340 either way: rank 0's receive, posted at 11,410 where it was 13,410, does
/// its 5,000 before the reply arrives at 34,170 + 28,050 = 62,220. Sends of more than
/// `departs_upto` bytes return at their end. The value comes from a parameter file, the
/// trace's own parameters (text and binary) or the flag, and is reported.
#[test]
fn a_send_that_departs_returns_when_its_message_has_left() {
    let split = ["--Od", "2000", "--Op", "3000"];
    let departs = ["--Od", "2000", "--Op", "3000", "--departs-upto", "1000"];
    let early = predict(&one_message(1000, 0), &departs);
    assert_close(
        early["predicted_s"].as_f64().unwrap() * 1e9,
        34_170.0,
        "early",
    );
    assert_close(
        rank_ns(&early, 0)[0],
        11_410.0,
        "the send returns at T1 − Od",
    );
    assert_eq!(early["params"]["departs_upto"]["value"], 1000.0, "{early}");
    assert_eq!(early["params"]["departs_upto"]["source"], "flag", "{early}");
    let between = predict(&one_message(1000, 26_000), &departs);
    assert_close(
        between["predicted_s"].as_f64().unwrap() * 1e9,
        37_120.0,
        "between",
    );
    let r1 = rank_ns(&between, 1);
    assert_close(r1[4], 2_050.0, "between: the wait for the arrival");
    assert_close(r1[2], 9_070.0, "between: T3 and the send's Od");
    let late = predict(&one_message(1000, 50_000), &departs);
    assert_close(
        late["predicted_s"].as_f64().unwrap() * 1e9,
        61_120.0,
        "late",
    );
    // Above departs_upto: as with the split alone.
    let above = ["--Od", "2000", "--Op", "3000", "--departs-upto", "999"];
    let v = predict(&one_message(1000, 26_000), &above);
    assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, 35_120.0, "above");
    assert_close(rank_ns(&v, 0)[0], 13_410.0, "above: the send returns at T1");

    let pingpong = format!(
        "loggps-trace 1\nranks 2\n{MYRINET}\n\
         0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes=1000 peer=1 tag=0\n\
         0 MPI_Recv 10 20 bytes=1000 peer=1 tag=0\n0 MPI_Finalize 20 30\n\
         1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=1000 peer=0 tag=0\n\
         1 MPI_Send 10 20 bytes=1000 peer=0 tag=0\n1 MPI_Finalize 20 30\n"
    );
    for args in [&split[..], &departs[..]] {
        let v = predict(&pingpong, args);
        assert_close(rank_ns(&v, 0)[0], 68_340.0, "the round trip");
    }

    // From the trace's parameters, text and binary, and from a file.
    let text = one_message(1000, 26_000).replace(
        MYRINET,
        "params bands=8191:6550:1160:6.86:2.57:15.48:2000:3000;18446744073709551615:6550:1160:6.86:2.57:-0.74:2000:3000 S=16383 departs_upto=1000",
    );
    let (d, f) = text_trace("departs.txt", &text);
    let b = d.path().join("departs.bin");
    let out = run(&["convert", &f, b.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for t in [f.as_str(), b.to_str().unwrap()] {
        let v = json(&[t, "--format", "json"]);
        assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, 37_120.0, t);
        assert_eq!(v["params"]["departs_upto"]["value"], 1000.0, "{v}");
    }
    let toml = d.path().join("departs.toml");
    std::fs::write(
        &toml,
        "S = 16383\ndeparts_upto = 1000\n\n[[bands]]\nhi = 8191\no = 6550.0\nL = 1160.0\nOs = 6.86\nOr = 2.57\nG = 15.48\nOd = 2000.0\nOp = 3000.0\n\n[[bands]]\no = 6550.0\nL = 1160.0\nOs = 6.86\nOr = 2.57\nG = -0.74\nOd = 2000.0\nOp = 3000.0\n",
    )
    .unwrap();
    let v = predict(
        &one_message(1000, 26_000),
        &["--params", toml.to_str().unwrap()],
    );
    assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, 37_120.0, "file");
    let bad = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("departs_upto = 1000", "departs_upto = -1");
    std::fs::write(&toml, bad).unwrap();
    let out = run(&[&f, "--params", toml.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("departs_upto must be a non-negative integer"),
        "{err}"
    );
}

/// 20,000 B by rendezvous, both called at 0, `Od = 2,000`, `Op = 3,000` (the control
/// messages' from the first band, the same here): the request arrives at 6,550 − 2,000 + 1,160
/// = 5,710; the receive, posted early, confirms at 5,710 − 3,000 + 6,550 = 9,260; the ACK
/// costs `o − Od + L + o − Op` = 9,260; the send returns after its `T1` = 6,550 + 20,000·6.86 =
/// 143,750: 162,270. The payload leaves 2,000 before that, takes `T2'` = 8,191·15.48 +
/// 11,809·(−0.74) + 1,160 = 119,218.02 and the receive ends `T3 − Op` = 57,950 − 3,000 after
/// its arrival: 334,438.02 (349,438.02 without the split: 15,000 more, 5,000 from each
/// message).
#[test]
fn rendezvous_splits_each_message_of_the_protocol() {
    let v = predict(&one_message(20_000, 0), &["--Od", "2000", "--Op", "3000"]);
    assert_close(rank_ns(&v, 0)[0], 162_270.0, "send");
    assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, 334_438.02, "recv");
    let paper = predict(&one_message(20_000, 0), &[]);
    assert_close(
        paper["predicted_s"].as_f64().unwrap() * 1e9,
        349_438.02,
        "paper",
    );
}

/// Rank 0 posts three Irecvs of 1,000 B (from ranks 1, 2, 3) and calls `MPI_Waitall`; each
/// other rank sends at 0 (Myrinet's set).
fn three_senders() -> String {
    let mut t = format!(
        "loggps-trace 1\nranks 4\n{MYRINET}\n0 MPI_Init 0 0\n\
         0 MPI_Irecv 0 10 bytes=1000 peer=1 tag=0 req=0\n\
         0 MPI_Irecv 10 20 bytes=1000 peer=2 tag=0 req=1\n\
         0 MPI_Irecv 20 30 bytes=1000 peer=3 tag=0 req=2\n\
         0 MPI_Waitall 30 40 done=0:1:0,1:2:0,2:3:0\n0 MPI_Finalize 40 50\n"
    );
    for r in 1..4 {
        t += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Send 0 10 bytes=1000 peer=0 tag=0\n\
             {r} MPI_Finalize 10 20\n"
        );
    }
    t
}

/// Rank 0 posts three Irecvs (from ranks 1, 2, 3) and calls Waitall at once (its calls at 0,
/// 6,550, 13,100; the Waitall at 19,650); each other rank sends 1,000 B at 0. All three arrive
/// at 30,050; one CPU takes their `T3` one after another (the model's §10): 39,170, 48,290,
/// 57,410, the Waitall's return and the runtime (39,170 if they overlapped). With `Op =
/// 3,000` each pays `T3 − Op` = 6,120 after the first's 36,170: 48,410. Under `--progress
/// calls` as before (each from the Waitall's call or the previous end): the same 57,410.
#[test]
fn a_waitall_pays_its_receive_overheads_one_after_another() {
    let t = three_senders();
    let v = predict(&t, &[]);
    assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, 57_410.0, "serial");
    let r0 = rank_ns(&v, 0);
    // Communication: three Irecvs' o, the three T3; the rest waits for the first arrival.
    assert_close(r0[2], 3.0 * 6550.0 + 3.0 * 9120.0, "communication");
    assert_close(r0[4], 30_050.0 - 19_650.0, "receiver sync");
    let op = predict(&t, &["--Op", "3000"]);
    assert_close(op["predicted_s"].as_f64().unwrap() * 1e9, 48_410.0, "Op");
    let calls = predict(&t, &["--progress", "calls"]);
    assert_close(
        calls["predicted_s"].as_f64().unwrap() * 1e9,
        57_410.0,
        "calls",
    );
}

/// The Waitall above where the set has `drained` (the model's §14, "Receives in a queue"): the
/// second and third receives wait for the one before them, and each pays its `T3` (9,120) less
/// what a receive at `drained`'s least size pays beyond `drained` there, `drained` at least.
/// `--drained 500` (every size: its least size 0, where a receive costs `T3(0)` = 6,550): each
/// pays 9,120 − 6,050 = 3,070 after the first's 39,170: 42,240, 45,310. A set's
/// `drained=8:100,1000:500`: `T3(8)` = 6,570.56, the saving 6,470.56, each 2,649.44: 44,468.88.
/// With `Op` = 3,000 each pays `T3 − Op` = 6,120 alone, less the saving 6,050: 70, so `drained`,
/// 500: 36,170 + 1,000 = 37,170. Rendezvous messages (`S` 999) keep their spans.
#[test]
fn a_receive_behind_another_in_a_waitall_pays_less_of_its_overhead() {
    let t = three_senders();
    let end = |t: &str, args: &[&str]| predict(t, args)["predicted_s"].as_f64().unwrap() * 1e9;
    let v = predict(&t, &["--drained", "500"]);
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        45_310.0,
        "drained 500",
    );
    let r0 = rank_ns(&v, 0);
    assert_close(r0[2], 3.0 * 6550.0 + 9120.0 + 2.0 * 3070.0, "communication");
    assert_close(r0[4], 30_050.0 - 19_650.0, "receiver sync");
    let by_size = t.replace("S=16383", "S=16383 drained=8:100,1000:500");
    assert_close(end(&by_size, &[]), 44_468.88, "the trace's drained");
    assert_close(
        end(&t, &["--drained", "500", "--Op", "3000"]),
        37_170.0,
        "Op",
    );
    // By rendezvous each pays its whole span, with `drained` or without.
    let rdv = t.replace("S=16383", "S=999");
    assert_close(
        end(&rdv, &["--drained", "500"]),
        end(&rdv, &[]),
        "rendezvous",
    );
}

/// Where messages move only inside calls an eager `MPI_Isend` returns once its message has
/// left: at `T1 − Od` (the model's §4 and §13). Rank 0 Isends 1,000 B at 0 and waits for it at
/// once; rank 1 receives at 0. With `Od = 2,000` the Isend returns at 13,410 − 2,000 = 11,410,
/// its Wait at `max(ti + T1, tw + o)` = max(13,410, 11,410 + 6,550) = 17,960 (19,960 without
/// the split: the Isend at `T1`); the message arrives at 28,050 and rank 1's receive ends at
/// 37,170 either way less the 2,000 its early departure gives (39,170 without it).
#[test]
fn an_isend_returns_once_its_message_has_left() {
    let t = format!(
        "loggps-trace 1\nranks 2\n{MYRINET}\n0 MPI_Init 0 0\n\
         0 MPI_Isend 0 10 bytes=1000 peer=1 tag=0 req=0\n0 MPI_Wait 10 20 done=0:-1:-1\n\
         0 MPI_Finalize 20 30\n1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=1000 peer=0 tag=0\n\
         1 MPI_Finalize 10 20\n"
    );
    for (args, r0, r1) in [
        (&["--progress", "calls"][..], 19_960.0, 39_170.0),
        (
            &["--progress", "calls", "--Od", "2000"][..],
            17_960.0,
            37_170.0,
        ),
        // The paper's rule: the Isend costs `o`, its Wait ends at `ti + T1` = 13,410.
        (&["--Od", "2000"][..], 13_410.0, 37_170.0),
    ] {
        let v = predict(&t, args);
        assert_close(rank_ns(&v, 0)[0], r0, &format!("rank 0, {args:?}"));
        assert_close(rank_ns(&v, 1)[0], r1, &format!("rank 1, {args:?}"));
    }
    // By rendezvous (20,000 B, above `S`), once its request has left: `o − Od` = 4,550 (`o`,
    // 6,550, without the split).
    let rdv = t.replace("bytes=1000", "bytes=20000");
    for (args, isend) in [
        (&["--progress", "calls"][..], 6_550.0),
        (&["--progress", "calls", "--Od", "2000"][..], 4_550.0),
    ] {
        let v = predict(&rdv, &[args, &["--calls"]].concat());
        let calls = v["calls"].as_array().unwrap();
        let row = (calls.iter())
            .find(|c| c["routine"] == "MPI_Isend")
            .unwrap_or_else(|| panic!("{v}"));
        let got = row["predicted_s"].as_f64().unwrap() * 1e9;
        assert_close(got, isend, &format!("rendezvous Isend, {args:?}"));
    }
}

/// The split in files, traces and the sensitivity report: a `[[bands]]` file with `Od` and
/// `Op` costs as the flags do; the paper's form takes them too; an `Od` above the band's `T1`
/// is refused naming the band; embedded by `convert --params` into text and binary traces it
/// predicts the same without flags; `sensitivity` reads `b1.Od` and `b1.Op` off the replays
/// and the critical path: −1 each (the runtime is `arrival − Op + T3`).
#[test]
fn the_split_in_files_traces_and_sensitivity() {
    let dir = tempfile::tempdir().unwrap();
    let path = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    // Myrinet's two bands (the paper's form as bands, the model's §8) with the split.
    let bands = "S = 16383\n\
        [[bands]]\nhi = 8191\no = 6550\nL = 1160\nOs = 6.86\nOr = 2.57\nG = 15.48\nOd = 2000\nOp = 3000\n\
        [[bands]]\no = 6550\nL = 134018.02\nOs = 6.86\nOr = 2.57\nG = -0.74\nOd = 2000\nOp = 3000\n";
    std::fs::write(path("split.toml"), bands).unwrap();
    let paper = "L = 1160\no = 6550\nOs = 6.86\nOr = 2.57\nGs = 15.48\nGl = -0.74\ns = 8191\n\
        S = 16383\nOd = 2000\nOp = 3000\n";
    std::fs::write(path("paper.toml"), paper).unwrap();
    let trace = one_message(1000, 0);
    std::fs::write(path("t.txt"), &trace).unwrap();
    for file in ["split.toml", "paper.toml"] {
        let v = predict(&trace, &["--params", &path(file)]);
        assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, 34_170.0, file);
    }
    let bad = bands.replacen("Od = 2000", "Od = 7000", 1);
    std::fs::write(path("bad.toml"), bad).unwrap();
    let out = run(&[&path("t.txt"), "--params", &path("bad.toml")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("band 1 (0–8191 B): Od = 7000"), "{err}");
    let out = run(&[&path("t.txt"), "--Op", "-1"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("Op = -1 must be ≥ 0"));

    let text = embedded(&path("t.txt"), &path, "split.toml", 34_170.0);
    assert!(text.contains(":2000:3000;"), "{text}");

    let s = json(&["sensitivity", &path("e.bin"), "--format", "json"]);
    for name in ["b1.Od", "b1.Op"] {
        let d = parameter(&s, name);
        for key in ["ns_per_unit", "from_critical_path"] {
            let got = d[key].as_f64().unwrap();
            assert!((got + 1.0).abs() < 1e-5, "{name} {key}: {got}");
        }
    }
}

/// `Od` growing with the size (`Osd`, the model's §13): `Od = 2,000` and `Osd = 1` make a
/// 1,000-byte message's `Od` 3,000 (and a 4,000-byte one's 6,000).
/// - Its blocking send returns at `T1` = 13,410; the message leaves 3,000 before, arriving at
///   13,410 − 3,000 + 16,640 = 27,050; a receive posted at 0 with `Op = 3,000` ends at 27,050 −
///   3,000 + 9,120 = 33,170 (34,170 with `Od` alone).
/// - Its `MPI_Isend` under `--progress calls` returns at `T1 − Od − Osd·k` = 10,410, its Wait at
///   `max(ti + T1, tw + o)` = max(13,410, 10,410 + 6,550) = 16,960; the receive posted at 0
///   (`Op` 0) ends at 27,050 + 9,120 = 36,170.
/// - In a file's `[[bands]]` and embedded in text (`HI:o:L:Os:Or:G:Od:Op:Osd`) and binary traces
///   alike; `sensitivity` reads `b1.Osd` at −1,000 ns a unit (the runtime is `T1 − Od − Osd·k + T2
///   + T3 − Op`); an `Osd` above the band's `Os` is refused naming both.
#[test]
fn od_grows_with_the_size_by_osd() {
    let split = ["--Od", "2000", "--Osd", "1", "--Op", "3000"];
    let v = predict(&one_message(1000, 0), &split);
    assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, 33_170.0, "Osd");
    assert_close(rank_ns(&v, 1)[4], 27_050.0, "the arrival");
    assert_close(rank_ns(&v, 0)[0], 13_410.0, "the send returns at T1");

    let isend = format!(
        "loggps-trace 1\nranks 2\n{MYRINET}\n0 MPI_Init 0 0\n\
         0 MPI_Isend 0 10 bytes=1000 peer=1 tag=0 req=0\n0 MPI_Wait 10 20 done=0:-1:-1\n\
         0 MPI_Finalize 20 30\n1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=1000 peer=0 tag=0\n\
         1 MPI_Finalize 10 20\n"
    );
    let v = predict(
        &isend,
        &["--progress", "calls", "--Od", "2000", "--Osd", "1"],
    );
    assert_close(rank_ns(&v, 0)[0], 16_960.0, "the Isend's Wait");
    assert_close(rank_ns(&v, 1)[0], 36_170.0, "its receive");

    let dir = tempfile::tempdir().unwrap();
    let path = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let bands = "S = 16383\n\
        [[bands]]\nhi = 8191\no = 6550\nL = 1160\nOs = 6.86\nOr = 2.57\nG = 15.48\nOd = 2000\nOp = 3000\nOsd = 1\n\
        [[bands]]\no = 6550\nL = 134018.02\nOs = 6.86\nOr = 2.57\nG = -0.74\nOd = 2000\nOp = 3000\n";
    std::fs::write(path("osd.toml"), bands).unwrap();
    std::fs::write(path("t.txt"), one_message(1000, 0)).unwrap();
    let v = json(&[
        &path("t.txt"),
        "--params",
        &path("osd.toml"),
        "--format",
        "json",
    ]);
    assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, 33_170.0, "file");
    let text = embedded(&path("t.txt"), &path, "osd.toml", 33_170.0);
    assert!(text.contains(":2000:3000:1;"), "{text}");
    let s = json(&["sensitivity", &path("e.bin"), "--format", "json"]);
    let got = parameter(&s, "b1.Osd")["ns_per_unit"].as_f64().unwrap();
    assert!((got + 1000.0).abs() < 1e-2, "b1.Osd: {got}");

    let bad = bands.replacen("Osd = 1", "Osd = 7", 1);
    std::fs::write(path("bad.toml"), bad).unwrap();
    let out = run(&[&path("t.txt"), "--params", &path("bad.toml")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("band 1 (0–8191 B): Osd = 7 is more than Os = 6.86"),
        "{err}"
    );
}

/// Two ranks exchange one 1,000-byte message each way by rendezvous (`S = 0`): each posts its
/// `MPI_Irecv` at 0, its `MPI_Isend` at 1,000, its `MPI_Waitall` at 2,000; the set `L = 0`,
/// `o = 1,000`, `Os = Or = 1`, no `G`, `Od = 1,000` (`T1 = T3 = 2,000`, `T2 = 0`, `T5 = o − Od +
/// L + o = 1,000`; the model's §13). The REQ arrives at 1,000 + 1,000 − 1,000 = 1,000, its
/// receive posted: the send returns at 1,000 + `o` + `T5` + `T1` = 5,000, its payload leaving at
/// 4,000 and arriving at once; the receive's `T3` runs 4,000–6,000. With the payload on the
/// receiver's CPU alone that is the runtime. With all its `T1` on the sender's too
/// (`rendezvous_sender = 1`, the model's §14) the send holds its rank's CPU 3,000–5,000, so the
/// receive starts at 5,000: 7,000. With a quarter (500 ns, ready at 4,500) the send waits for
/// the receive: 6,000 + 500 = 6,500. The same from a file's set, embedded in text and binary
/// traces, on the critical path and in `sensitivity`; a share outside 0–1 is refused.
#[test]
fn a_rendezvous_payload_holds_its_senders_cpu_for_the_sets_share() {
    let mut t =
        String::from("loggps-trace 1\nranks 2\nparams L=0 o=1000 Os=1 Or=1 Gs=0 Gl=0 s=0 S=0\n");
    for r in 0..2 {
        let q = 1 - r;
        t += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Irecv 0 10 bytes=1000 peer={q} tag=0 req=0\n\
             {r} MPI_Isend 10 20 bytes=1000 peer={q} tag=0 req=1\n\
             {r} MPI_Waitall 20 30 done=0:{q}:0,1:-1:-1\n{r} MPI_Finalize 30 40\n"
        );
    }
    let (_d, f) = text_trace("x.txt", &t);
    let ns = |args: &[&str]| {
        let v = json(&[&[f.as_str(), "--critical-path", "--format", "json"], args].concat());
        let length = v["critical_path"]["length_s"].as_f64().unwrap();
        let predicted = v["predicted_s"].as_f64().unwrap();
        assert!((length - predicted).abs() < 1e-15, "{v}");
        predicted * 1e9
    };
    assert_close(ns(&["--Od", "1000"]), 6_000.0, "receiver");
    let both = ["--Od", "1000", "--rendezvous-sender", "1"];
    assert_close(ns(&both), 7_000.0, "both");
    let quarter = ["--Od", "1000", "--rendezvous-sender", "0.25"];
    assert_close(ns(&quarter), 6_500.0, "a quarter");
    let v = json(&[&[f.as_str(), "--format", "json"], &quarter[..]].concat());
    assert_eq!(v["rendezvous_sender"], 0.25);
    // A sweep over the share: the three above in one run.
    let sweep = ["--Od", "1000", "--sweep", "rendezvous_sender=0,0.25,1"];
    let v = json(&[&[f.as_str(), "--format", "json"], &sweep[..]].concat());
    let got: Vec<f64> = (v["points"].as_array().unwrap().iter())
        .map(|x| x["predicted_s"].as_f64().unwrap() * 1e9)
        .collect();
    for (g, want) in got.iter().zip([6_000.0, 6_500.0, 7_000.0]) {
        assert_close(*g, want, "sweep");
    }
    assert_eq!(got.len(), 3);
    // Without `Od` the payload leaves at the send's end (REQ at 2,000, the send's end 7,000):
    // the receive's `T3` starts there, 9,000, whatever the sender's share.
    assert_close(ns(&[]), 9_000.0, "no Od");
    assert_close(ns(&["--rendezvous-sender", "1"]), 9_000.0, "no Od, both");
    let out = run(&[&f, "--rendezvous-sender", "2"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rendezvous_sender = 2 must lie in 0–1"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    let set = "L = 0\no = 1000\nOs = 1\nOr = 1\nGs = 0\nGl = 0\ns = 0\nS = 0\nOd = 1000\n";
    std::fs::write(path("q.toml"), format!("{set}rendezvous_sender = 0.25\n")).unwrap();
    assert_close(ns(&["--params", &path("q.toml")]), 6_500.0, "file");
    let text = embedded(&f, &path, "q.toml", 6_500.0);
    assert!(text.contains(" rendezvous_sender=0.25"), "{text}");
    // Its worth: the runtime 6,000 + 2,000·F below F = 0.5, 2,000 ns a unit of share, read
    // off the replays and the critical path alike.
    let s = json(&["sensitivity", &path("e.bin"), "--format", "json"]);
    let d = parameter(&s, "rendezvous_sender");
    assert_eq!(d["unit"], "share");
    // `Od` at its bound (`T1` of band 1, 0 B) is taken from below alone (it failed before).
    let od = parameter(&s, "b1.Od");
    assert_eq!(od["difference"], "backward", "{od}");
    for key in ["ns_per_unit", "from_critical_path"] {
        let got = d[key].as_f64().unwrap();
        assert!((got - 2000.0).abs() < 1e-3, "{key}: {got}");
    }
    std::fs::write(path("bad.toml"), format!("{set}rendezvous_sender = -0.5\n")).unwrap();
    let out = run(&[&f, "--params", &path("bad.toml")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rendezvous_sender = -0.5 must lie in 0–1"),
        "{err}"
    );
}

/// A modeled collective's step that sends and receives at once (Open MPI's `sendrecv`: on 2
/// ranks an all-gather's one step) holds the send's share as a program's `MPI_Isend` does (the
/// model's §14). Both ranks call `MPI_Allgather` of 1,000 B at 0 under the set above (`S = 0`,
/// `Od = 1,000`, no `copy`, `oc`, `alloc`): the request arrives at 0 and is confirmed at 1,000,
/// the ACK reaches the sender at 2,000, the payload leaves at 2,000 + `T1` − `Od` = 3,000 and
/// the send returns at 4,000; the receive's `T3` (2,000) runs 3,000–5,000: 5,000 with the
/// receiver's CPU alone. With a quarter of `T1` (500 ns, 3,500–4,000) the send's share starts
/// after the receive's and waits for it: 5,500. With all of it (2,000–4,000) the receive waits
/// for the send: 4,000 + 2,000 = 6,000. A share by size takes the size's (0.25 at 1,000 B).
#[test]
fn a_collectives_exchange_step_holds_its_senders_share() {
    let mut t =
        String::from("loggps-trace 1\nranks 2\nparams L=0 o=1000 Os=1 Or=1 Gs=0 Gl=0 s=0 S=0\n");
    for r in 0..2 {
        t += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Allgather 0 10 bytes=1000 recv_bytes=2000\n\
             {r} MPI_Finalize 10 20\n"
        );
    }
    let (_d, f) = text_trace("x.txt", &t);
    let ns = |args: &[&str]| {
        let v = json(&[&[f.as_str(), "--Od", "1000", "--format", "json"], args].concat());
        v["predicted_s"].as_f64().unwrap() * 1e9
    };
    assert_close(ns(&[]), 5_000.0, "receiver");
    assert_close(ns(&["--rendezvous-sender", "0.25"]), 5_500.0, "a quarter");
    assert_close(ns(&["--rendezvous-sender", "1"]), 6_000.0, "both");
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.toml");
    let set = "L = 0\no = 1000\nOs = 1\nOr = 1\nGs = 0\nGl = 0\ns = 0\nS = 0\nOd = 1000\n";
    let by_size = "rendezvous_sender = [[100, 1.0], [1000, 0.25], [10000, 0.0]]\n";
    std::fs::write(&q, format!("{set}{by_size}")).unwrap();
    assert_close(ns(&["--params", q.to_str().unwrap()]), 5_500.0, "by size");
}

/// A receive into a buffer last sent to the same peer (`flags=bounced`, the model's §13) costs
/// `bounce` ns a byte more of a rendezvous payload, at its end: Myrinet's 16,384-byte message
/// (above `S` = 16,383) received by a call at 0 returns at 318,014.98 (the model's §6 vector),
/// with `--bounce 2` at 318,014.98 + 2·16,384 = 350,782.98; an unflagged receive, or an eager
/// message (1,000 B: 39,170), costs as before; through an `MPI_Irecv` completed by a Wait and in
/// an `MPI_Sendrecv` the end moves by the same 32,768.
#[test]
fn a_bounced_rendezvous_receive_costs_bounce_a_byte_more() {
    let flagged = |t: String| {
        t.replace(
            "tag=0\n1 MPI_Finalize",
            "tag=0 flags=bounced\n1 MPI_Finalize",
        )
    };
    let end = |t: &str, args: &[&str]| predict(t, args)["predicted_s"].as_f64().unwrap() * 1e9;
    let bounce = ["--bounce", "2"];
    assert_close(
        end(&flagged(one_message(16384, 0)), &bounce),
        350_782.98,
        "bounced",
    );
    assert_close(
        end(&flagged(one_message(16384, 0)), &[]),
        318_014.98,
        "no bounce",
    );
    assert_close(
        end(&one_message(16384, 0), &bounce),
        318_014.98,
        "not flagged",
    );
    assert_close(
        end(&flagged(one_message(1000, 0)), &bounce),
        39_170.0,
        "eager",
    );

    let irecv = |flags: &str| {
        format!(
            "loggps-trace 1\nranks 2\n{MYRINET}\n\
             0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes=16384 peer=1 tag=0\n0 MPI_Finalize 10 20\n\
             1 MPI_Init 0 0\n1 MPI_Irecv 0 1 bytes=16384 peer=0 tag=0{flags} req=0\n\
             1 MPI_Wait 1 20 done=0:0:0\n1 MPI_Finalize 20 30\n"
        )
    };
    let moved = end(&irecv(" flags=bounced"), &bounce) - end(&irecv(""), &bounce);
    assert_close(moved, 32_768.0, "Irecv");
    let sendrecv = |flags: &str| {
        format!(
            "loggps-trace 1\nranks 2\n{MYRINET}\n\
             0 MPI_Init 0 0\n0 MPI_Sendrecv 0 10 bytes=8 peer=1 tag=0 recv_bytes=16384 source=1 \
             recv_tag=1{flags}\n0 MPI_Finalize 10 20\n\
             1 MPI_Init 0 0\n1 MPI_Sendrecv 0 10 bytes=16384 peer=0 tag=1 recv_bytes=8 source=0 \
             recv_tag=0\n1 MPI_Finalize 10 20\n"
        )
    };
    let moved = end(&sendrecv(" flags=bounced"), &bounce) - end(&sendrecv(""), &bounce);
    assert_close(moved, 32_768.0, "Sendrecv");

    // By size: 1 at 8,192 B and 3 at 32,768 B give 2 at 16,384 B (halfway in log k), the same
    // 350,782.98, from the trace's `params` line, its binary conversion and a parameter file;
    // 0 at 8,192 B and 4 at 32,768 B the same; 1,000 B below both points, eager: as before; one
    // point, 2 at 16,384 B, every size's, from its binary conversion too.
    let by_size = |points: &str, k: u64| {
        flagged(one_message(k, 0)).replace(MYRINET, &format!("{MYRINET} bounce={points}"))
    };
    for points in ["8192:1,32768:3", "8192:0,32768:4"] {
        assert_close(end(&by_size(points, 16384), &[]), 350_782.98, points);
    }
    assert_close(
        end(&by_size("8192:1,32768:3", 1000), &[]),
        39_170.0,
        "eager",
    );
    let (d, traced) = text_trace("bounce.txt", &by_size("8192:1,32768:3", 16384));
    let bin = d.path().join("bounce.bin");
    let out = run(&["convert", &traced, bin.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let from_binary = json(&[bin.to_str().unwrap(), "--format", "json"]);
    assert_close(
        from_binary["predicted_s"].as_f64().unwrap() * 1e9,
        350_782.98,
        "binary",
    );
    assert_eq!(from_binary["params"]["bounce@32768"]["value"], 3.0);
    // One point at a size (every size's value) keeps through the binary too.
    let (_d1, one) = text_trace("one.txt", &by_size("16384:2", 16384));
    let one_bin = d.path().join("one.bin");
    assert!(
        run(&["convert", &one, one_bin.to_str().unwrap()])
            .status
            .success()
    );
    let v = json(&[one_bin.to_str().unwrap(), "--format", "json"]);
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        350_782.98,
        "one point",
    );
    let toml = d.path().join("bounce.toml");
    let set = loggps_predict::model::Params {
        bounce: Some(
            loggps_predict::model::BySize::new(
                loggps_predict::model::SizeParam::Bounce,
                &[(8192, 1.0), (32768, 3.0)],
            )
            .unwrap(),
        ),
        ..loggps_predict::model::Params::preset("myrinet").unwrap()
    };
    std::fs::write(&toml, loggps_predict::model::params_toml(&set)).unwrap();
    let file = ["--params", toml.to_str().unwrap()];
    assert_close(
        end(&flagged(one_message(16384, 0)), &file),
        350_782.98,
        "file",
    );
    // a negative rate refused, naming it
    let out = run(&[&traced, "--bounce=-1"]);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--bounce: bounce = -1 must be a finite number ≥ 0"),
        "{out:?}"
    );
}

/// A bounced receive of a message its sender flagged `clean` costs `bounce_clean` a byte more
/// where the set has it (the model's §13: the source read at once, the receiver's writes into
/// lines its peer holds are what its copy waits for), else `bounce`: Myrinet's 16,384-byte
/// message flagged clean, `--clean 0.5`, returns at 173,267.49 (see the next test), bounced
/// with `--bounce 2 --bounce-clean 5` at 173,267.49 + 5·16,384 = 255,187.49, with `--bounce 2`
/// alone at + 2·16,384 = 206,035.49; not flagged clean, `bounce` as before (350,782.98). The
/// trace's own `bounce_clean` by size (4 at 8,192 B, 6 at 32,768 B: 5 at 16,384 B halfway in
/// log k, as `bounce`) the same, through its binary conversion too.
#[test]
fn a_bounced_receive_of_a_clean_send_costs_bounce_clean() {
    let both = |t: String, send: &str| {
        t.replace("peer=1 tag=0\n", &format!("peer=1 tag=0{send}\n"))
            .replace(
                "tag=0\n1 MPI_Finalize",
                "tag=0 flags=bounced\n1 MPI_Finalize",
            )
    };
    let end = |t: &str, args: &[&str]| predict(t, args)["predicted_s"].as_f64().unwrap() * 1e9;
    let clean = both(one_message(16384, 0), " flags=clean");
    let args = ["--clean", "0.5", "--bounce", "2", "--bounce-clean", "5"];
    assert_close(end(&clean, &args), 255_187.49, "bounce_clean");
    assert_close(end(&clean, &args[..4]), 206_035.49, "bounce alone");
    let plain = both(one_message(16384, 0), "");
    assert_close(end(&plain, &args), 350_782.98, "not clean");
    let own = clean.replace(
        MYRINET,
        &format!("{MYRINET} bounce=2 bounce_clean=8192:4,32768:6"),
    );
    assert_close(end(&own, &args[..2]), 255_187.49, "the trace's");
    let (d, traced) = text_trace("bounce_clean.txt", &own);
    let bin = d.path().join("bounce_clean.bin");
    assert!(
        run(&["convert", &traced, bin.to_str().unwrap()])
            .status
            .success()
    );
    let v = json(&[bin.to_str().unwrap(), "--clean", "0.5", "--format", "json"]);
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        255_187.49,
        "binary",
    );
    assert_eq!(v["params"]["bounce_clean@32768"]["value"], 6.0);
    let out = run(&[&traced, "--bounce-clean=-1"]);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--bounce-clean: bounce_clean = -1 must be a finite number ≥ 0"),
        "{out:?}"
    );
}

/// A rendezvous message its sender flagged `clean` (sent from a buffer unchanged since its
/// last send from it, the model's §13) is costed with the bands holding sizes above `S` scaled
/// by the set's `clean`. Myrinet's 16,384-byte message received by a call at 0 returns at
/// 318,014.98 (§6): `o` 6,550 + `T5` 14,260 + 7,710 (`o + L` of the first band, which no
/// scaling touches) = 28,520, then `T1` 118,944.24 + `T2'` 121,893.86 + `T3` 48,656.88 =
/// 289,494.98, all of the second band (its `o`, `L + s(Gs − Gl)`, `Os`, `Or`, `Gl`), which
/// `--clean 0.5` halves: 28,520 + 144,747.49 = 173,267.49. Not flagged, or no `clean`, or an
/// eager message (1,000 B: 39,170): as before; a parameter file's and the trace's own `clean`
/// as the flag, and a share by size; through an Isend completed by a Wait the end moves by the
/// same 144,747.49;
/// `clean = 0` refused.
/// A bounced receive's sender waits for it (the model's §13): its receiver pulls the payload
/// and the send completes on its word. Myrinet's 16,384-byte rendezvous send, its receive
/// called at 0, returns at `T4 + T5 + T1` = 147,464.24 (the model's §6); into a bounced buffer,
/// with `--bounce 2`, 2·16,384 later, at 180,232.24. So a ping-pong whose two receives are
/// bounced takes exactly 2·32,768 ns longer than one whose are not, as `calibrate` measures
/// `bounce` (a bounced round trip against a written one): also where the sender returns after
/// its receiver (`Or` = 0, `Od` = `Op` = 1,000 ns: the send's end `Od + Op − T2* − T3` =
/// 2,000 + 10,963 − 6,550 = 6,413 ns after the receive's, later than the reply's request less
/// `Op`, 5,710 ns after it), where a sender that did not wait let its rank's next receive start
/// before the peer's bounced copy had ended and hid 703 ns of that copy.
#[test]
fn a_bounced_receives_sender_waits_for_it() {
    let one_way = one_message(16384, 0).replace(
        "tag=0\n1 MPI_Finalize",
        "tag=0 flags=bounced\n1 MPI_Finalize",
    );
    let v = predict(&one_way, &["--bounce", "2"]);
    assert_close(
        v["ranks"][0]["end_s"].as_f64().unwrap() * 1e9,
        180_232.24,
        "the sender",
    );
    let v = predict(&one_way, &[]);
    assert_close(
        v["ranks"][0]["end_s"].as_f64().unwrap() * 1e9,
        147_464.24,
        "no bounce",
    );
    let ping_pong = |flags: &str| {
        format!(
            "loggps-trace 1\nranks 2\n{MYRINET}\n\
             0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes=16384 peer=1 tag=0\n\
             0 MPI_Recv 10 20 bytes=16384 peer=1 tag=0{flags}\n0 MPI_Finalize 20 30\n\
             1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=16384 peer=0 tag=0{flags}\n\
             1 MPI_Send 10 20 bytes=16384 peer=0 tag=0\n1 MPI_Finalize 20 30\n"
        )
    };
    for split in [&[][..], &["--Or", "0", "--Od", "1000", "--Op", "1000"][..]] {
        let end = |flags: &str| {
            let args = [split, &["--bounce", "2"][..]].concat();
            predict(&ping_pong(flags), &args)["predicted_s"]
                .as_f64()
                .unwrap()
                * 1e9
        };
        let moved = end(" flags=bounced") - end("");
        assert_close(moved, 65_536.0, &format!("round trip {split:?}"));
    }
}

/// A rendezvous message whose receive buffer starts 1–31 bytes further into its 4 KiB page than
/// its send buffer (the trace's `send_page` and `recv_page`) has its single copy cost `alias`
/// ns a byte more (the model's §9, "Where buffers lie"), and its sender waits for it as for a
/// bounced copy. Myrinet's 16,384-byte message sent at 0 and received by a call at 0 (the
/// sender returns at 147,464.24, §6): with `--alias 0.5` both ends 8,192 ns later, where the
/// receive buffer starts 16 bytes past the send buffer's offset, and 12 past across a page's
/// end (4,090 → 6). Not at 0, 32 or 4,080 (16 before), not without both offsets, nor without
/// `alias`, nor for an eager message (8,000 B). The trace's own `alias` as the flag. An
/// exchange (each rank's `Irecv`, `Send`, `Wait`) of two aliased messages takes 8,192 ns
/// longer, not twice that: the two copies run at once, one on each rank, as `calibrate`
/// measures `alias`.
#[test]
fn an_aliased_single_copy_costs_alias_a_byte() {
    let placed = |k: u64, send: &str, recv: &str| {
        one_message(k, 0)
            .replace(
                "tag=0\n0 MPI_Finalize",
                &format!("tag=0{send}\n0 MPI_Finalize"),
            )
            .replace(
                "tag=0\n1 MPI_Finalize",
                &format!("tag=0{recv}\n1 MPI_Finalize"),
            )
    };
    let ends = |t: &str, args: &[&str]| -> Vec<f64> {
        let v = predict(t, args);
        (0..2)
            .map(|r| v["ranks"][r]["end_s"].as_f64().unwrap() * 1e9)
            .collect()
    };
    let alias = ["--alias", "0.5"];
    let base = ends(&one_message(16384, 0), &alias);
    assert_close(base[0], 147_464.24, "the sender");
    for (send, recv, moved) in [
        (" send_page=0", " recv_page=16", 8192.0),
        (" send_page=4090", " recv_page=6", 8192.0),
        (" send_page=100", " recv_page=131", 8192.0),
        (" send_page=0", " recv_page=0", 0.0),
        (" send_page=0", " recv_page=32", 0.0),
        (" send_page=16", " recv_page=0", 0.0),
        ("", " recv_page=16", 0.0),
        (" send_page=0", "", 0.0),
    ] {
        let e = ends(&placed(16384, send, recv), &alias);
        for r in 0..2 {
            assert_close(e[r] - base[r], moved, &format!("rank {r}{send}{recv}"));
        }
    }
    let aliased = placed(16384, " send_page=0", " recv_page=16");
    assert_eq!(ends(&aliased, &[]), ends(&one_message(16384, 0), &[]));
    // Without `alias` the prediction says what it leaves out; with it, nothing.
    let said = |t: &str, args: &[&str]| predict(t, args)["warnings"].to_string();
    assert!(
        said(&aliased, &[]).contains("1 rendezvous message(s) (16384 bytes) were received"),
        "{}",
        said(&aliased, &[])
    );
    assert!(!said(&aliased, &alias).contains("rendezvous message(s)"));
    assert!(!said(&one_message(16384, 0), &[]).contains("rendezvous message(s)"));
    let eager = placed(8000, " send_page=0", " recv_page=16");
    assert_eq!(ends(&eager, &alias), ends(&one_message(8000, 0), &alias));
    let embedded = aliased.replace("S=16383", "S=16383 alias=0.5");
    assert_eq!(ends(&embedded, &[]), ends(&aliased, &alias));

    let exchange = |recv: &str, send: &str| {
        let rank = |r: u32| {
            format!(
                "{r} MPI_Init 0 0\n{r} MPI_Irecv 0 10 bytes=16384 peer={q} tag=0 req=0{recv}\n\
                 {r} MPI_Send 10 20 bytes=16384 peer={q} tag=0{send}\n\
                 {r} MPI_Wait 20 30 done=0:{q}:0\n{r} MPI_Finalize 30 40\n",
                q = 1 - r
            )
        };
        format!("loggps-trace 1\nranks 2\n{MYRINET}\n{}{}", rank(0), rank(1))
    };
    let plain = ends(&exchange("", ""), &alias);
    let both = ends(&exchange(" recv_page=16", " send_page=0"), &alias);
    for r in 0..2 {
        assert_close(
            both[r] - plain[r],
            8192.0,
            &format!("the exchange, rank {r}"),
        );
    }
}

#[test]
fn a_clean_rendezvous_message_costs_the_sets_share() {
    let flagged =
        |t: String| t.replace("tag=0\n0 MPI_Finalize", "tag=0 flags=clean\n0 MPI_Finalize");
    let end = |t: &str, args: &[&str]| predict(t, args)["predicted_s"].as_f64().unwrap() * 1e9;
    let clean = ["--clean", "0.5"];
    assert_close(
        end(&flagged(one_message(16384, 0)), &clean),
        173_267.49,
        "clean",
    );
    assert_close(
        end(&flagged(one_message(16384, 0)), &[]),
        318_014.98,
        "no clean",
    );
    assert_close(
        end(&one_message(16384, 0), &clean),
        318_014.98,
        "not flagged",
    );
    assert_close(
        end(&flagged(one_message(1000, 0)), &clean),
        39_170.0,
        "eager",
    );
    let embedded = flagged(one_message(16384, 0)).replace("S=16383", "S=16383 clean=0.5");
    assert_close(end(&embedded, &[]), 173_267.49, "the trace's own");

    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("p.toml");
    std::fs::write(
        &file,
        "L = 1160\no = 6550\nOs = 6.86\nOr = 2.57\nGs = 15.48\nGl = -0.74\ns = 8191\n\
         S = 16383\nclean = 0.5\n",
    )
    .unwrap();
    let from_file = ["--params", file.to_str().unwrap()];
    assert_close(
        end(&flagged(one_message(16384, 0)), &from_file),
        173_267.49,
        "file",
    );
    // By size: the second band's sizes above S, 16,384 B to twice that, at their middle in log
    // k, √(16,384 · 32,768) ≈ 23,170.5 B, which lies 3/4 of the way from 8,192 B (0.25) to
    // 32,768 B (0.75) in log k: 0.625, so 28,520 + 0.625 · 289,494.98 = 209,454.3625.
    std::fs::write(
        &file,
        "L = 1160\no = 6550\nOs = 6.86\nOr = 2.57\nGs = 15.48\nGl = -0.74\ns = 8191\n\
         S = 16383\nclean = [[8192, 0.25], [32768, 0.75]]\n",
    )
    .unwrap();
    assert_close(
        end(&flagged(one_message(16384, 0)), &from_file),
        209_454.362_5,
        "by size",
    );
    let embedded = embedded.replace("clean=0.5", "clean=8192:0.25,32768:0.75");
    assert_close(
        end(&embedded, &[]),
        209_454.362_5,
        "by size, the trace's own",
    );

    let isend = |flags: &str| {
        format!(
            "loggps-trace 1\nranks 2\n{MYRINET}\n\
             0 MPI_Init 0 0\n0 MPI_Isend 0 1 bytes=16384 peer=1 tag=0 req=0{flags}\n\
             0 MPI_Wait 1 10 done=0:-1:-1\n0 MPI_Finalize 10 20\n\
             1 MPI_Init 0 0\n1 MPI_Recv 0 20 bytes=16384 peer=0 tag=0\n1 MPI_Finalize 20 30\n"
        )
    };
    let moved = end(&isend(""), &clean) - end(&isend(" flags=clean"), &clean);
    assert_close(moved, 144_747.49, "Isend");

    let (_d, f) = text_trace("t.txt", &flagged(one_message(16384, 0)));
    let out = run(&[&f, "--clean", "0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("clean = 0 must be a finite number > 0"),
        "{err}"
    );
    // Without `clean` the flagged message is named, with its bytes.
    let out = run(&[&f]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("1 send(s) above the eager limit (16384 bytes, 100% of the bytes sent"),
        "{err}"
    );
}

/// A blocking eager send above `departs_upto` that reaches its receiver while it computes is
/// counted, with the time its library holds it beyond `T1` (not costed; the model's §13, "Sends
/// held by a computing receiver"). By hand (myrinet, messages moving only inside calls,
/// `departs_upto` 256, so 8 B departs and 1,000 B does not): rank 1's Send of 1,000 B at 0
/// returns at T1 = 6,550 + 6,860 = 13,410, its message there at T1 + T2 = 13,410 + 16,640 =
/// 30,050. Rank 0's 8-byte Send at 0 returns at T1 − Od = 6,604.88 (no `Od`: its T1), then it
/// computes 100,000 ns: its Recv is called at 106,604.88, so the message came while it
/// computed, and the send is held until 106,604.88 + Od − T2 = 89,964.88, 76,554.88 beyond its
/// T1. Nothing is counted where rank 0 waits in its Recv, where the message is 200 B (it
/// departs), without `departs_upto`, or where messages move asynchronously.
#[test]
fn sends_held_by_a_computing_receiver_are_counted_not_costed() {
    let trace = |bytes: u64, recv_at: u64, extra: &str| {
        format!(
            "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 \
             s=8191 S=16383{extra}\n0 MPI_Send 0 1 bytes=8 peer=1 tag=1\n\
             0 MPI_Recv {recv_at} {} bytes={bytes} peer=1 tag=0\n\
             1 MPI_Send 0 1 bytes={bytes} peer=0 tag=0\n1 MPI_Recv 2 3 bytes=8 peer=0 tag=1\n",
            recv_at + 1
        )
    };
    let held = |t: &str| {
        let (_d, f) = text_trace("held.txt", t);
        let v = json(&[&f, "--format", "json"]);
        let said: Vec<String> = (v["warnings"].as_array().unwrap().iter())
            .filter_map(|w| w.as_str())
            .filter(|w| w.contains("blocking MPI_Send"))
            .map(str::to_string)
            .collect();
        (said, rank_ns(&v, 0)[0])
    };
    let calls = " progress=calls departs_upto=256";
    let (said, end) = held(&trace(1000, 100_001, calls));
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].starts_with("1 blocking MPI_Send(s)"), "{said:?}");
    assert!(said[0].contains("up to 0.000077 s short"), "{said:?}");
    // Not costed: rank 0 ends at its Recv's call + T3 = 106,604.88 + 6,550 + 2,570.
    assert_close(end, 115_724.88, "rank 0's end");
    for (t, why) in [
        (trace(1000, 2, calls), "a receiver waiting"),
        (trace(200, 100_001, calls), "a send that departs"),
        (trace(1000, 100_001, " progress=calls"), "no departs_upto"),
        (
            trace(1000, 100_001, " departs_upto=256"),
            "asynchronous progress",
        ),
    ] {
        assert!(held(&t).0.is_empty(), "{why}: {:?}", held(&t).0);
    }
}

/// A receive of an eager message taken in while its rank waited inside an earlier call costs
/// `drained` (the model's §14, "Messages taken in while waiting"). Three ranks, 1,000 B each
/// (`T1 + T2` = 30,050, `T3` = 9,120): rank 2 sends to rank 0 at `s2`, rank 1 at 100,000, and
/// rank 0 receives rank 1's message (called at `c`), then rank 2's at once. `--drained 500`.
/// - `c` = 0, `s2` = 0: the first receive waits until 130,050 and returns at 139,170; rank 2's
///   message, there since 30,050, was taken in during that wait: the second receive ends at
///   139,670 (148,290 costing `T3`).
/// - `c` = 200,000: rank 1's message is there, nothing waited: 218,240 either way.
/// - `c` = 125,000: it waits 5,050 ns, less than the 8,620 that taking the message in saves
///   the receive: taken in all the same (the rule charges no wait for it), 139,670.
/// - `s2` = 120,000: it arrives at 150,050, after the wait: the receive waits for it, 159,170.
/// - `s2` = 102,000: it arrives at 132,050, after the first receive's wait ended (130,050) but
///   before that receive returns (139,170): the wait did not take it in, and the second receive
///   finds it there at its call and costs `T3`, 148,290.
/// - Rank 2's message received by an `MPI_Irecv` after that receive (it costs `o`, 6,550:
///   139,170 to 145,720) and an `MPI_Wait`, messages moving only inside calls (`--progress
///   calls`: it moves at the Wait's call): the Wait's `o`, 152,270, where it costs `drained`,
///   its `T3` after its call, 154,840, where it does not.
#[test]
fn a_message_taken_in_while_its_rank_waited_costs_drained() {
    let trace = |c: u64, s2: u64, irecv: bool| {
        let rank0 = match irecv {
            false => format!(
                "0 MPI_Init 0 0\n0 MPI_Recv {c} {} bytes=1000 peer=1 tag=1\n\
                 0 MPI_Recv {} {} bytes=1000 peer=2 tag=2\n0 MPI_Finalize {} {}\n",
                c + 10,
                c + 10,
                c + 20,
                c + 20,
                c + 30
            ),
            true => "0 MPI_Init 0 0\n0 MPI_Recv 0 10 bytes=1000 peer=1 tag=1\n\
                     0 MPI_Irecv 10 10 bytes=1000 peer=2 tag=2 req=0\n0 MPI_Wait 10 20 done=0:2:2\n\
                     0 MPI_Finalize 20 30\n"
                .to_string(),
        };
        format!(
            "loggps-trace 1\nranks 3\n{MYRINET}\n{rank0}\
             1 MPI_Init 0 0\n1 MPI_Send 100000 100010 bytes=1000 peer=0 tag=1\n\
             1 MPI_Finalize 100010 100020\n\
             2 MPI_Init 0 0\n2 MPI_Send {s2} {} bytes=1000 peer=0 tag=2\n2 MPI_Finalize {} {}\n",
            s2 + 10,
            s2 + 10,
            s2 + 20
        )
    };
    let end = |t: &str, args: &[&str]| rank_ns(&predict(t, args), 0)[0];
    let drained = ["--drained", "500"];
    for (c, s2, irecv, with, without) in [
        (0, 0, false, 139_670.0, 148_290.0),
        (200_000, 0, false, 218_240.0, 218_240.0),
        (125_000, 0, false, 139_670.0, 148_290.0),
        (0, 120_000, false, 159_170.0, 159_170.0),
        (0, 102_000, false, 148_290.0, 148_290.0),
        (0, 0, true, 152_270.0, 154_840.0),
    ] {
        let t = trace(c, s2, irecv);
        let what = format!("c = {c}, s2 = {s2}, irecv {irecv}");
        let calls: &[&str] = if irecv { &["--progress", "calls"] } else { &[] };
        assert_close(end(&t, &[&drained[..], calls].concat()), with, &what);
        assert_close(end(&t, calls), without, &format!("{what}, no drained"));
    }
    // A set's own `drained`, by size: 500 at 1,000 B.
    let t = trace(0, 0, false).replace("S=16383", "S=16383 drained=8:100,1000:500");
    assert_close(end(&t, &[]), 139_670.0, "the trace's drained");
}

/// Small messages taken in at a poll (the model's §14): rank 1 sends three 8-byte messages
/// back to back from 0 (Myrinet, `--Od 2000 --departs-upto 1000 --drained 500`: each send
/// returns at `T1 − Od` = 4,604.88 after its call, its message arrives `T2` = 1,268.36 later:
/// at 5,873.24, 10,478.12 and 15,083.00); rank 0 computes until 100,000, then receives them.
/// Its first receive finds its message there, takes it in itself (`T3 + Od` = 8,570.56: at
/// 108,570.56) and polls at its call, when the two others were there: each costs `drained`,
/// 109,070.56 and 109,570.56. Messages above `departs_upto` (`--departs-upto 4`: a send
/// returns at `T1`, 6,604.88, the three arrive by 21,083; each receive `T3` = 6,570.56) are
/// taken in one by one: 106,570.56, 113,141.12, 119,711.68. A modeled collective's receive
/// polls for the calls after it (below).
#[test]
fn small_messages_there_when_a_receive_polled_cost_drained() {
    let t = common::three_small_messages();
    // No Wait's floor, messages moving whatever the rank does: the first six.
    let flags = |d: &'static str| common::poll_flags(d)[..6].to_vec();
    let end = |args: &[&str]| rank_ns(&predict(&t, args), 0)[0];
    assert_close(
        end(&flags("1000")),
        109_570.56,
        "taken in at the first receive's poll",
    );
    assert_close(end(&flags("4")), 119_711.68, "above departs_upto");
    // A modeled collective's receive polls for the calls after it: rank 1 sends two of the
    // messages, then enters a Barrier, whose message rank 0's Barrier (at 100,000) finds there
    // and takes in, polling; rank 0's two receives after it cost `drained` each: 1,000 ns in
    // all (`T3` each above `departs_upto`: 13,141.12).
    let mut t = format!("loggps-trace 1\nranks 2\n{MYRINET}\n0 MPI_Init 0 0\n");
    t += "0 MPI_Barrier 100000 100001\n";
    t += "0 MPI_Recv 100001 100002 bytes=8 peer=1 tag=5\n";
    t += "0 MPI_Recv 100002 100003 bytes=8 peer=1 tag=5\n0 MPI_Finalize 100003 100004\n";
    t += "1 MPI_Init 0 0\n1 MPI_Send 0 1 bytes=8 peer=0 tag=5\n";
    t += "1 MPI_Send 1 2 bytes=8 peer=0 tag=5\n1 MPI_Barrier 2 100001\n";
    t += "1 MPI_Finalize 100001 100002\n";
    let recvs = |d: &'static str| {
        let v = predict(&t, &[&flags(d)[..], &["--calls"]].concat());
        let calls = v["calls"].as_array().unwrap().clone();
        let recv = calls.iter().find(|c| c["routine"] == "MPI_Recv").unwrap();
        recv["predicted_s"].as_f64().unwrap() * 1e9
    };
    assert_close(recvs("1000"), 1_000.0, "after a collective's poll");
    assert_close(
        recvs("4"),
        13_141.12,
        "after a collective, above departs_upto",
    );
}

/// A completion call that takes its receive's message in itself polls too, and so does a failed
/// poll (the model's §14, "Small messages taken in at a poll"). The three messages of
/// `common::three_small_messages` (arriving by 15,083), each received by an `MPI_Irecv` (`o`,
/// 6,550) and its `MPI_Wait` (`--progress calls`: a message moves at the Wait's call;
/// `--wait 10`: a Wait costs at least 10), rank 0's first call at 100,000: the first Wait (at
/// 106,550) takes its message in (`T3 + Od` = 8,570.56: at 115,120.56), polling at its call,
/// when the two others were there; after their Irecvs (121,670.56, 128,720.56) each of their
/// Waits costs `drained`, 500: rank 0 ends at 129,220.56. Above `departs_upto` each Wait costs
/// `T3`, 6,570.56: 139,361.68. A failed `MPI_Iprobe` at 100,000 (100 ns traced) polls: the
/// three `MPI_Recv`s after it find their messages taken in, 500 each: 101,600 (its first
/// Recv takes its own in without it: 109,670.56).
#[test]
fn a_wait_and_a_failed_probe_poll_too() {
    let waits = common::three_small_messages_waited(100_000);
    let probed = common::three_small_messages_probed();
    // The same receives without the probe before them.
    let late = probed.replace("0 MPI_Iprobe 100000 100100 peer=1 tag=9\n", "");
    let flags = common::poll_flags;
    let end = |t: &str, args: &[&str]| rank_ns(&predict(t, args), 0)[0];
    assert_close(end(&waits, &flags("1000")), 129_220.56, "a Wait's poll");
    assert_close(end(&waits, &flags("4")), 139_361.68, "above departs_upto");
    assert_close(
        end(&probed, &flags("1000")),
        101_600.0,
        "a failed probe's poll",
    );
    assert_close(end(&late, &flags("1000")), 109_670.56, "no probe");
}

/// A completion call costs `wait` at least (the model's §4 Wait rule's floor; `o` without
/// it): rank 0's `MPI_Isend` of 8 B costs `o` (0–6,550), it computes 99,990 ns, and its
/// `MPI_Wait` (at 106,540) finds the send long done: it returns at 106,540 + 6,550 = 113,090,
/// with `--wait 10` at 106,550, and so with the trace's own `wait=10`.
#[test]
fn a_wait_with_nothing_left_costs_wait() {
    let t = format!(
        "loggps-trace 1\nranks 2\n{MYRINET}\n\
         0 MPI_Init 0 0\n0 MPI_Isend 0 10 bytes=8 peer=1 tag=0 req=0\n\
         0 MPI_Wait 100000 100010 done=0:-1:-1\n0 MPI_Finalize 100010 100020\n\
         1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=8 peer=0 tag=0\n1 MPI_Finalize 10 20\n"
    );
    let end = |t: &str, args: &[&str]| rank_ns(&predict(t, args), 0)[0];
    assert_close(end(&t, &[]), 113_090.0, "o");
    assert_close(end(&t, &["--wait", "10"]), 106_550.0, "--wait 10");
    let own = t.replace("S=16383", "S=16383 wait=10");
    assert_close(end(&own, &[]), 106_550.0, "the trace's wait");
}
