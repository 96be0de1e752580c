//! `predict --timeline`: the Chrome trace-event JSON of a prediction, each slice checked
//! against hand calculations from the model documentation (src/model/MODEL.md), its cuts, what
//! it writes when the replay cannot finish, and its bounded memory: on the 262,144-rank
//! dissemination (14.7 M events) a timeline far larger than the bound costs the replay's peak
//! no more than the bound, each peak its own process's (wait4), whatever other tests run beside.

mod common;

use common::{bin, fixture, run, synthesized, text_trace};
use serde_json::Value;
use std::process::Stdio;

/// Runs a prediction with `--timeline` (and `args`) and returns the timeline, checked to be
/// the format's JSON: an object whose `traceEvents` are objects with a name, a phase and a
/// process; complete slices (`X`) with a time and a duration, flow ends (`s`, `f`) with an id.
fn timeline(trace: &str, args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.json");
    let out = run(&[&[trace, "--timeline", f.to_str().unwrap()], args].concat());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).expect("JSON");
    for e in v["traceEvents"].as_array().expect("traceEvents") {
        assert!(e["name"].is_string() && e["pid"].is_i64(), "{e}");
        match e["ph"].as_str().unwrap() {
            "M" => assert!(e["args"].is_object(), "{e}"),
            "X" => assert!(e["ts"].is_f64() || e["ts"].is_u64(), "{e}"),
            "s" | "f" => assert!(e["id"].is_u64() && e["ts"].is_number(), "{e}"),
            ph => panic!("phase {ph}: {e}"),
        }
        if e["ph"] == "X" {
            assert!(e["dur"].as_f64().unwrap() >= 0.0, "{e}");
        }
    }
    assert_eq!(v["displayTimeUnit"], "ns");
    v
}

/// The slices of `pid`'s thread `tid`, as (name, ts µs, dur µs), in the file's order: a rank's
/// in program order, a call's slice before the synchronization inside it.
fn slices(v: &Value, pid: i64, tid: i64) -> Vec<(String, f64, f64)> {
    v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["tid"] == tid)
        .map(|e| {
            let name = e["name"].as_str().unwrap().to_string();
            (name, e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap())
        })
        .collect()
}

fn assert_slices(got: &[(String, f64, f64)], want: &[(&str, f64, f64)], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {got:?}");
    for (g, w) in got.iter().zip(want) {
        // Written to the nanosecond: within half of one.
        assert!(
            g.0 == w.0 && (g.1 - w.1).abs() < 5e-4 && (g.2 - w.2).abs() < 5e-4,
            "{what}: {g:?} != {w:?}\n{got:?}"
        );
    }
}

/// The round trip of the model's §6 with k = 12000, w = 500 µs (Myrinet, eager; hand-costed
/// in tests/cli_predict.rs's `svg_draws_each_ranks_breakdown`): T1 = 88,870, T1 + T2' =
/// 214,008.02, T3 = 37,390 ns.
/// - rank 0: Send at 0 for T1; computes 500 µs from 88,870; Recv at 588,870, its message there
///   since 465,406.04, for T3: returns at 626,260.
/// - rank 1: Recv at 0 waits 214,008.02 (receiver sync) and pays T3: returns at 251,398.02;
///   Send there for T1: returns at 340,268.02.
///
/// Each rank ends at its MPI_Finalize's call, a slice of no duration.
///
/// Measured: each call as the fixture times it. Two messages: rank 0's Send (event 1) to rank
/// 1's Recv, rank 1's Send (event 6: rank 1's events start at 4) to rank 0's Recv.
/// The slices of the round trip below, by hand, as (name, ts µs, dur µs): rank `r`'s `predicted`
/// track (tid 0) or `measured` (tid 1).
fn rtt_by_hand(r: i64, tid: i64) -> Vec<(&'static str, f64, f64)> {
    match (r, tid) {
        (0, 0) => vec![
            ("MPI_Init", 0.0, 0.0),
            ("MPI_Send", 0.0, 88.870),
            ("computation", 88.870, 500.0),
            ("MPI_Recv", 588.870, 37.390),
            ("MPI_Finalize", 626.260, 0.0),
        ],
        (1, 0) => vec![
            ("MPI_Init", 0.0, 0.0),
            ("MPI_Recv", 0.0, 251.39802),
            ("receiver sync", 0.0, 214.00802),
            ("MPI_Send", 251.39802, 88.870),
            ("MPI_Finalize", 340.26802, 0.0),
        ],
        (0, 1) => vec![
            ("MPI_Init", 0.0, 0.0),
            ("MPI_Send", 0.0, 1.0),
            ("MPI_Recv", 501.0, 4.0),
            ("MPI_Finalize", 505.0, 0.1),
        ],
        _ => vec![
            ("MPI_Init", 0.0, 0.0),
            ("MPI_Recv", 0.0, 2.0),
            ("MPI_Send", 2.0, 1.0),
            ("MPI_Finalize", 3.0, 0.1),
        ],
    }
}

#[test]
fn every_slice_is_the_hand_calculation() {
    let f = fixture("rtt/k12000-w500000.txt");
    let v = timeline(f.to_str().unwrap(), &[]);
    for (r, tid) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let what = format!("rank {r} tid {tid}");
        assert_slices(&slices(&v, r, tid), &rtt_by_hand(r, tid), &what);
    }
    let mut flows: Vec<(String, u64, i64, f64)> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "s" || e["ph"] == "f")
        .map(|e| {
            let ph = e["ph"].as_str().unwrap().to_string();
            (
                ph,
                e["id"].as_u64().unwrap(),
                e["pid"].as_i64().unwrap(),
                e["ts"].as_f64().unwrap(),
            )
        })
        .collect();
    flows.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    let want = [
        ("f", 1, 1, 0.0),
        ("s", 1, 0, 0.0),
        ("f", 6, 0, 588.870),
        ("s", 6, 1, 251.39802),
    ];
    assert_eq!(flows.len(), 4, "{flows:?}");
    for (g, w) in flows.iter().zip(want) {
        assert!(
            g.0 == w.0 && g.1 == w.1 && g.2 == w.2 && (g.3 - w.3).abs() < 5e-4,
            "{flows:?}"
        );
    }
    // The ranks and their tracks are named; the model and the prediction are in otherData.
    let names: Vec<String> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] != "process_sort_index")
        .map(|e| format!("{} {}", e["pid"], e["args"]["name"].as_str().unwrap()))
        .collect();
    for n in [
        "0 rank 0",
        "1 rank 1",
        "0 predicted",
        "0 measured",
        "1 measured",
    ] {
        assert!(names.contains(&n.to_string()), "{names:?}");
    }
    let other = &v["otherData"];
    assert_eq!(other["model"], "loggps");
    assert_eq!(other["parameters"]["o"]["value"], 6550.0);
    assert!((other["predicted_s"].as_f64().unwrap() - 626_260e-9).abs() < 1e-12);
}

/// A rendezvous send's sender synchronization is a slice of its own at the start of the call
/// (tests/cli_predict.rs's `progress_at_calls_moves_a_posted_receive_at_the_next_call`, by
/// hand: Myrinet, k = 20,000 > S; messages move only inside calls). Rank 0 posts an Irecv at 0
/// (o = 6,550), computes 100 µs, waits from 106,550 to 448,278.02. Rank 1's Send at 0 returns
/// at 271,110, 98,840 of it sender synchronization (106,550 − o − L).
#[test]
fn sender_synchronization_is_its_own_slice() {
    let t = "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
        0 MPI_Init 0 0\n0 MPI_Irecv 0 10 bytes=20000 peer=1 tag=0 req=0\n0 MPI_Wait 100010 100020 done=0:1:0\n0 MPI_Finalize 100020 100030\n\
        1 MPI_Init 0 0\n1 MPI_Send 0 10 bytes=20000 peer=0 tag=0\n1 MPI_Finalize 10 20\n";
    let (_d, f) = text_trace("irecv.txt", t);
    let v = timeline(&f, &["--progress", "calls"]);
    assert_slices(
        &slices(&v, 1, 0),
        &[
            ("MPI_Init", 0.0, 0.0),
            ("MPI_Send", 0.0, 271.110),
            ("sender sync", 0.0, 98.840),
            ("MPI_Finalize", 271.110, 0.0),
        ],
        "rank 1 predicted",
    );
    let rank0 = slices(&v, 0, 0);
    let names: Vec<&str> = rank0.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(
        names[..4],
        ["MPI_Init", "MPI_Irecv", "computation", "MPI_Wait"],
        "{rank0:?}"
    );
    assert_slices(
        &rank0[1..4],
        &[
            ("MPI_Irecv", 0.0, 6.550),
            ("computation", 6.550, 100.0),
            ("MPI_Wait", 106.550, 341.72802),
        ],
        "rank 0 predicted",
    );
}

/// `--ranks` keeps the ranks listed, `--window` the slices that overlap it (rank 1's
/// MPI_Finalize at 340.268 µs, a point, too); a rank the trace
/// does not have, a bad window and a sweep are errors that say so.
#[test]
fn ranks_and_window_cut_the_timeline() {
    let f = fixture("rtt/k12000-w500000.txt");
    let f = f.to_str().unwrap();
    let v = timeline(f, &["--ranks", "1"]);
    let pids: std::collections::BTreeSet<i64> = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] != "M")
        .map(|e| e["pid"].as_i64().unwrap())
        .collect();
    assert_eq!(pids.into_iter().collect::<Vec<_>>(), [1]);
    // 300–400 µs: rank 0's computation (88.87–588.87) and rank 1's Send (251.398–340.268).
    let v = timeline(f, &["--window", "300us:400us"]);
    assert_eq!(
        slices(&v, 0, 0)
            .iter()
            .map(|s| s.0.as_str())
            .collect::<Vec<_>>(),
        ["computation"]
    );
    assert_eq!(
        slices(&v, 1, 0)
            .iter()
            .map(|s| s.0.as_str())
            .collect::<Vec<_>>(),
        ["MPI_Send", "MPI_Finalize"]
    );
    assert!(slices(&v, 0, 1).is_empty() && slices(&v, 1, 1).is_empty());
    let err = |args: &[&str]| {
        let out = run(&[&[f, "--timeline", "/dev/null"], args].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    assert!(err(&["--ranks", "0-2"]).contains("rank 2 is not in the trace (ranks 0–1)"));
    assert!(err(&["--window", "2ms:1ms"]).contains("T0 must come before T1"));
    assert!(
        err(&["--sweep", "o=1,2"])
            .contains("--timeline, --critical-path and --calls follow one prediction")
    );
    let out = run(&[f, "--ranks", "0"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--timeline"));
}

/// A deadlock is still an error, and its timeline is complete JSON: the calls up to where the
/// ranks stopped, and why in otherData.
#[test]
fn a_deadlocks_timeline_ends_with_why() {
    let t = "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
        0 MPI_Init 0 0\n0 MPI_Send 10 20 bytes=20000 peer=1 tag=0\n0 MPI_Recv 20 30 bytes=20000 peer=1 tag=0\n0 MPI_Finalize 30 40\n\
        1 MPI_Init 0 0\n1 MPI_Send 10 20 bytes=20000 peer=0 tag=0\n1 MPI_Recv 20 30 bytes=20000 peer=0 tag=0\n1 MPI_Finalize 30 40\n";
    let (d, f) = text_trace("dead.txt", t);
    let tl = d.path().join("t.json");
    let out = bin()
        .args([&f, "--timeline", tl.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let v: Value = serde_json::from_slice(&std::fs::read(&tl).unwrap()).expect("JSON");
    assert!(
        v["otherData"]["error"]
            .as_str()
            .unwrap()
            .contains("deadlock"),
        "{}",
        v["otherData"]
    );
    // Each rank's MPI_Init was costed before the sends that never return.
    assert_eq!(slices(&v, 0, 0).len(), 1, "{v}");
}

/// Runs the predictor with `args` to its end and returns its peak resident memory, bytes.
#[allow(clippy::zombie_processes)] // waited for by wait4, which gives its own peak
fn peak(args: &[&str]) -> u64 {
    let child = bin()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: wait4 on our own child, with pointers to locals; the Child is not waited again.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let pid = libc::wait4(child.id() as i32, &mut status, 0, &mut usage);
        assert_eq!(pid, child.id() as i32);
        usage
    };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?}"
    );
    usage.ru_maxrss as u64 * 1024
}

#[test]
fn a_timeline_of_a_262144_rank_trace_is_written_with_bounded_memory() {
    const BOUND: u64 = 16 << 20;
    let dir = tempfile::tempdir().unwrap();
    let f = synthesized(
        dir.path(),
        &["--pattern", "dissemination", "--ranks", "262144"],
    );
    let without = peak(&[&f, "--platform", "myrinet"]);
    // JSON, and Perfetto's protobuf (whose ranks' events wait for those before them).
    for name in ["t.json", "t.perfetto-trace"] {
        let tl = dir.path().join(name);
        let with = peak(&[
            &f,
            "--platform",
            "myrinet",
            "--timeline",
            tl.to_str().unwrap(),
            "--ranks",
            "0-2047",
        ]);
        let written = std::fs::metadata(&tl).unwrap().len();
        eprintln!(
            "{name}: peak {without} B without the timeline, {with} B with it ({written} B written)"
        );
        // More than the bound (the protobuf is 3× smaller than the JSON).
        assert!(written > BOUND, "{name}: {written} bytes written");
        assert!(
            with <= without + BOUND,
            "{name}: peak {with} B with the timeline, {without} B without"
        );
    }
}

/// Perfetto's published trace proto (google/perfetto `protos/perfetto/trace/perfetto_trace.proto`
/// at ec5d16b, gzipped), which `protoc` decodes a `.perfetto-trace` against: a decoder that is
/// not ours. None where `protoc` is missing (a failure under `LOGGPS_MPI_TESTS`, as in CI).
fn decoded(file: &std::path::Path) -> Option<Vec<Vec<(String, String)>>> {
    let dir = tempfile::tempdir().unwrap();
    let gz = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(fixture("perfetto/perfetto_trace.proto.gz"))
        .output()
        .expect("gzip");
    std::fs::write(dir.path().join("perfetto_trace.proto"), gz.stdout).unwrap();
    let out = std::process::Command::new("protoc")
        .args(["--decode=perfetto.protos.Trace", "--proto_path"])
        .arg(dir.path())
        .arg(dir.path().join("perfetto_trace.proto"))
        .stdin(std::fs::File::open(file).unwrap())
        .output();
    let out = match out {
        Ok(o) => o,
        Err(_) if std::env::var_os("LOGGPS_MPI_TESTS").is_none() => {
            eprintln!("SKIP: protoc not found (apt-get install protobuf-compiler)");
            return None;
        }
        Err(e) => panic!("protoc: {e}"),
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(packets(&String::from_utf8(out.stdout).unwrap()))
}

/// protoc's text format as packets, each its fields as (path, value): `track_event.type`,
/// `interned_data.event_names.name`, … in the text's order.
fn packets(text: &str) -> Vec<Vec<(String, String)>> {
    let mut all = Vec::new();
    let mut path: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(block) = line.strip_suffix(" {") {
            if path.is_empty() {
                all.push(Vec::new());
            }
            path.push(block);
        } else if line == "}" {
            path.pop();
        } else if let Some((k, v)) = line.split_once(": ") {
            let key = [&path[1..], &[k]].concat().join(".");
            all.last_mut()
                .unwrap()
                .push((key, v.trim_matches('"').to_string()));
        }
    }
    all
}

/// The slices of a decoded Perfetto timeline, per (process name, thread name), as (name, ts
/// µs, dur µs) in the order they begin, each slice's begin and end matched on its track; the
/// flows as (id, process, thread, slice name, out or in).
type Tracks = std::collections::BTreeMap<(String, String), Vec<(String, f64, f64)>>;
fn perfetto_slices(
    p: &[Vec<(String, String)>],
) -> (Tracks, Vec<(u64, String, String, &'static str)>) {
    use std::collections::HashMap;
    let get = |pk: &[(String, String)], k: &str| {
        pk.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone())
    };
    let mut names: HashMap<String, String> = HashMap::new();
    let mut processes: HashMap<String, String> = HashMap::new();
    let mut threads: HashMap<String, (String, String)> = HashMap::new();
    for pk in p {
        let iids = pk
            .iter()
            .filter(|(k, _)| k == "interned_data.event_names.iid");
        let ns = pk
            .iter()
            .filter(|(k, _)| k == "interned_data.event_names.name");
        for ((_, i), (_, n)) in iids.zip(ns) {
            names.insert(i.clone(), n.clone());
        }
        if let Some(uuid) = get(pk, "track_descriptor.uuid") {
            if let Some(n) = get(pk, "track_descriptor.process.process_name") {
                processes.insert(uuid.clone(), n);
            }
            if let Some(n) = get(pk, "track_descriptor.thread.thread_name") {
                let parent = get(pk, "track_descriptor.parent_uuid").unwrap();
                threads.insert(uuid, (parent, n));
            }
        }
    }
    let mut tracks = Tracks::new();
    let mut open: HashMap<String, Vec<usize>> = HashMap::new();
    let mut flows = Vec::new();
    for pk in p {
        let Some(kind) = get(pk, "track_event.type") else {
            continue;
        };
        let track = get(pk, "track_event.track_uuid").unwrap();
        let ts = get(pk, "timestamp").unwrap().parse::<f64>().unwrap() / 1e3;
        let Some((parent, thread)) = threads.get(&track) else {
            continue;
        };
        let key = (processes[parent].clone(), thread.clone());
        let list = tracks.entry(key.clone()).or_default();
        match kind.as_str() {
            "TYPE_SLICE_BEGIN" => {
                let name = names[&get(pk, "track_event.name_iid").unwrap()].clone();
                for (field, way) in [("flow_ids", "out"), ("terminating_flow_ids", "in")] {
                    if let Some(id) = get(pk, &format!("track_event.{field}")) {
                        flows.push((id.parse().unwrap(), key.0.clone(), name.clone(), way));
                    }
                }
                open.entry(track.clone()).or_default().push(list.len());
                list.push((name, ts, -1.0));
            }
            "TYPE_SLICE_END" => {
                let i = open
                    .get_mut(&track)
                    .and_then(Vec::pop)
                    .expect("an end after its begin");
                list[i].2 = ts - list[i].1;
            }
            k => panic!("{k}"),
        }
    }
    assert!(
        open.values().all(Vec::is_empty),
        "slices left open: {open:?}"
    );
    (tracks, flows)
}

/// `--timeline FILE.perfetto-trace`: Perfetto's protobuf, decoded by `protoc` against
/// Perfetto's own proto, holds the slices the JSON does, each the hand calculation above (to
/// the ns: the format's times are whole ns), the two messages as flows from each send to its
/// receive, and the prediction in an instant's argument.
#[test]
fn a_perfetto_timeline_decodes_to_the_hand_calculation() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.perfetto-trace");
    let trace = fixture("rtt/k12000-w500000.txt");
    let out = run(&[trace.to_str().unwrap(), "--timeline", f.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let Some(p) = decoded(&f) else { return };
    let (tracks, mut flows) = perfetto_slices(&p);
    for (r, tid) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let key = (
            format!("rank {r}"),
            ["predicted", "measured"][tid as usize].to_string(),
        );
        let what = format!("{key:?}");
        assert_slices(&tracks[&key], &rtt_by_hand(r, tid), &what);
    }
    flows.sort();
    let ids: Vec<u64> = flows.iter().map(|f| f.0).collect();
    let ends: Vec<(String, String, &str)> = flows.into_iter().map(|f| (f.1, f.2, f.3)).collect();
    assert_eq!(ids[0], ids[1]);
    assert_eq!(ids[2], ids[3]);
    assert_ne!(ids[0], ids[2]);
    for want in [
        ("rank 0", "MPI_Send", "out"),
        ("rank 1", "MPI_Recv", "in"),
        ("rank 1", "MPI_Send", "out"),
        ("rank 0", "MPI_Recv", "in"),
    ] {
        let want = (want.0.to_string(), want.1.to_string(), want.2);
        assert!(ends.contains(&want), "{ends:?}");
    }
    let other = p
        .iter()
        .flatten()
        .find(|(k, _)| k == "track_event.debug_annotations.string_value")
        .map(|(_, v)| v.replace("\\\"", "\""))
        .expect("the prediction");
    let other: Value = serde_json::from_str(&other).expect("its JSON");
    assert!((other["predicted_s"].as_f64().unwrap() - 626_260e-9).abs() < 1e-12);
}

/// A JSON timeline larger than Perfetto's UI opens (`LOGGPS_TIMELINE_JSON_MAX` lowered here to
/// 1,000 bytes) is written in Perfetto's format beside it, and the warning says so and why.
#[test]
fn a_json_timeline_too_large_for_the_ui_is_written_as_perfetto() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.json");
    let trace = fixture("rtt/k12000-w500000.txt");
    let out = bin()
        .env("LOGGPS_TIMELINE_JSON_MAX", "1000")
        .args([trace.to_str().unwrap(), "--timeline", f.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!f.exists(), "{err}");
    let pf = dir.path().join("t.perfetto-trace");
    assert!(
        pf.exists() && err.contains("t.perfetto-trace") && err.contains("Perfetto's UI"),
        "{err}"
    );
    if let Some(p) = decoded(&pf) {
        let (tracks, _) = perfetto_slices(&p);
        assert_slices(
            &tracks[&("rank 1".into(), "predicted".into())],
            &rtt_by_hand(1, 0),
            "rank 1",
        );
    }
}
