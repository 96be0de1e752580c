//! End-to-end predictions through the command line: the round trips of the model
//! documentation (src/model/MODEL.md) §6 from fixtures/, the JSON report, point-to-point costs
//! by hand, deadlocks, threads, and a reader that stops early.

mod common;

use common::{
    HEAD_TO_HEAD, assert_close, bin, fixture, json, rank_ns, run, synthesized, text_trace,
};

/// The round-trip table of the model documentation (src/model/MODEL.md) §6: replaying each
/// fixture gives eqs. (12)–(14) exactly.
#[test]
fn round_trips_reproduce_model_table() {
    let rows = [
        (1000, 0, 78_340.000),
        (1000, 500_000, 522_530.000),
        (12000, 0, 502_796.040),
        (12000, 500_000, 626_260.000),
        (65536, 0, 1_490_291.720),
        (65536, 500_000, 1_722_082.820),
    ];
    for (k, w, rtt_ns) in rows {
        let f = fixture(&format!("rtt/k{k}-w{w}.txt"));
        let v = json(&[f.to_str().unwrap(), "--format", "json"]);
        let predicted_ns = v["predicted_s"].as_f64().unwrap() * 1e9;
        assert!(
            (predicted_ns - rtt_ns).abs() < 1e-6,
            "k={k} w={w}: {predicted_ns} != {rtt_ns}"
        );
        // The same trace in the binary encoding, through convert, gives the same figure.
        let dir = tempfile::tempdir().unwrap();
        let b = dir.path().join("t.bin");
        assert!(
            run(&["convert", f.to_str().unwrap(), b.to_str().unwrap()])
                .status
                .success()
        );
        let v2 = json(&[b.to_str().unwrap(), "--format", "json"]);
        assert_eq!(v["predicted_s"], v2["predicted_s"]);
    }
}

#[test]
fn json_report_has_documented_keys_and_parts_add_up() {
    let f = fixture("all-routines.txt");
    let v = json(&[f.to_str().unwrap(), "--format", "json"]);
    for key in [
        "predicted_s",
        "measured_s",
        "error_pct",
        "params",
        "ranks",
        "average",
    ] {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    for name in ["L", "o", "Os", "Or", "Gs", "Gl", "s", "S"] {
        assert_eq!(v["params"][name]["source"], "trace", "{name}");
    }
    let ranks = v["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    let mut max_end: f64 = 0.0;
    for r in ranks {
        let parts: f64 = [
            "computation_s",
            "communication_s",
            "sender_sync_s",
            "receiver_sync_s",
        ]
        .iter()
        .map(|k| r[k].as_f64().unwrap())
        .sum();
        let end = r["end_s"].as_f64().unwrap();
        assert!((parts - end).abs() <= 1e-12, "{parts} != {end}");
        max_end = max_end.max(end);
    }
    assert_eq!(v["predicted_s"].as_f64().unwrap(), max_end);
    let measured = v["measured_s"].as_f64().unwrap();
    let err = v["error_pct"].as_f64().unwrap();
    assert!((err - 100.0 * (max_end - measured) / measured).abs() < 1e-9);
    // The fixture's measured span, by hand: rank 1's Init returns at 2700 on its clock, 1200 on
    // rank 0's (offset −1500), which is time 0; rank 0's Finalize call at 52 000 ends the run.
    assert!(
        (measured * 1e9 - (52_000.0 - 1_200.0)).abs() < 1e-6,
        "{measured}"
    );
}

#[test]
fn threads_flag_gives_identical_output() {
    let f = fixture("all-routines.txt");
    for model in ["loggps", "loggp"] {
        let args = [f.to_str().unwrap(), "--format", "json", "--model", model];
        let a = run(&[&args[..], &["--threads", "1"][..]].concat());
        let b = run(&[&args[..], &["--threads", "3"][..]].concat());
        assert!(a.status.success(), "{model}");
        assert_eq!(a.stdout, b.stdout, "{model}");
    }
}

#[test]
fn deadlock_only_under_rendezvous() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("h2h.txt");
    std::fs::write(&f, HEAD_TO_HEAD).unwrap();
    let f = f.to_str().unwrap();
    assert!(
        run(&[f, "--platform", "myrinet", "--S", "65536"])
            .status
            .success()
    );
    let out = run(&[f, "--platform", "myrinet"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("deadlock")
            && err.contains("rank 0 event 1 MPI_Send 65536 bytes to rank 1")
            && err.contains("rank 1 event 1 MPI_Send"),
        "{err}"
    );
    assert!(err.contains("65536 > S = 16383"), "{err}");
    // A third rank waiting on the pair is named as blocked, not as part of the cycle, however
    // many threads replay (blocks of ranks, then waves; or waves alone).
    let (_d3, three) = text_trace(
        "h2h3.txt",
        &(HEAD_TO_HEAD.replace("ranks 2", "ranks 3").replace(
            "0 MPI_Finalize 50 60\n",
            "0 MPI_Send 50 55 bytes=8 peer=2\n0 MPI_Finalize 60 70\n",
        ) + "2 MPI_Init 0 0\n2 MPI_Recv 10 60 bytes=8 peer=0\n2 MPI_Finalize 70 80\n"),
    );
    for threads in ["1", "2", "4"] {
        let out = run(&[&three, "--platform", "myrinet", "--threads", threads]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("rank(s) [0, 1] wait on each other") && !err.contains("rank 2 event"),
            "--threads {threads}: {err}"
        );
    }
    // Across a collective: rank 0 waits in a Barrier for rank 1, which waits to receive from
    // rank 0 first; rank 2, in the Barrier too, waits on them but is not in the cycle (it was,
    // when ranks in a collective were taken for not having called it).
    let (_d4, across) = text_trace(
        "barrier.txt",
        "loggps-trace 1\nranks 3\n\
         0 MPI_Init 0 0\n0 MPI_Barrier 10 20\n0 MPI_Send 30 40 bytes=8 peer=1\n0 MPI_Finalize 50 60\n\
         1 MPI_Init 0 0\n1 MPI_Recv 10 20 bytes=8 peer=0\n1 MPI_Barrier 30 40\n1 MPI_Finalize 50 60\n\
         2 MPI_Init 0 0\n2 MPI_Barrier 10 40\n2 MPI_Finalize 50 60\n",
    );
    for coll in ["measured", "modeled"] {
        let out = run(&[&across, "--platform", "myrinet", "--coll", coll]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("rank(s) [0, 1] wait on each other")
                && err.contains("rank 0 event 1 MPI_Barrier")
                && err.contains("rank 1 event 1 MPI_Recv")
                && !err.contains("rank 2 event"),
            "--coll {coll}: {err}"
        );
    }
    // LogGP has no rendezvous: the same trace replays; a real cycle (both receive first) is
    // still a deadlock.
    assert!(
        run(&[f, "--model", "loggp", "--platform", "myrinet"])
            .status
            .success()
    );
    let (_d, r2r) = text_trace(
        "r2r.txt",
        &HEAD_TO_HEAD
            .replace("MPI_Send 10 20", "MPI_Recv 10 20")
            .replace("MPI_Recv 30 40", "MPI_Send 30 40"),
    );
    let out = run(&[&r2r, "--model", "loggp", "--L", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("deadlock under LogGP"), "{err}");
}

/// A receive costs its message as sent, whatever it posted: the send's bytes, and the protocol
/// of the send's mode (the graph marks plain sends, standard-mode ones of a 32-bit byte count,
/// so that the replay reads less of them; this holds marked and unmarked messages alike to
/// the table of the model documentation (src/model/MODEL.md)). L = 1000, o = 100, Os = Or = 0,
/// Gs = Gl = 1, s = 0 (so T2 = k + L), S = 1000, no computation, every call at 0. A receive of
/// a message of k bytes sent at 0 and posted at 0 returns, eager, at max(T1 + T2, 0) + T3 =
/// k + 1200, by rendezvous at max(o + L, 0) + o + T5 + T1 + T2 + T3 = k + 3600 (T5 = o + L + o
/// = 1200); as an Irecv (returns at o) and a Wait called at 0 (the Wait rule: max(0 + Tblk,
/// 0 + o)) at the same.
#[test]
fn a_receive_costs_the_message_as_sent() {
    let cases = [
        // rank 0's send, rank 1's receive, the bytes it posted, rank 1's end.
        ("MPI_Send 0 0 bytes=10 peer=1", 10u64, 1210.0), // plain, eager
        ("MPI_Send 0 0 bytes=5000 peer=1", 5000, 8600.0), // plain, rendezvous
        (
            "MPI_Isend 0 0 bytes=5000 peer=1 req=0\n0 MPI_Wait 0 0 done=0:-1:-1",
            5000,
            8600.0,
        ),
        ("MPI_Send 0 0 bytes=10 peer=1", 5000, 1210.0), // posted more than it got
        ("MPI_Ssend 0 0 bytes=10 peer=1", 10, 3610.0),  // synchronous: rendezvous
        ("MPI_Bsend 0 0 bytes=5000 peer=1", 5000, 6200.0), // buffered: eager
        ("MPI_Rsend 0 0 bytes=5000 peer=1", 5000, 6200.0), // ready: eager
        // Beyond 32 bits, kept apart from the columns.
        (
            "MPI_Send 0 0 bytes=4294967296 peer=1",
            4294967296,
            4294970896.0,
        ),
    ];
    let params = [
        "--L", "1000", "--o", "100", "--Os", "0", "--Or", "0", "--Gs", "1", "--Gl", "1", "--s",
        "0", "--S", "1000", "--format", "json",
    ];
    for (send, posted, end) in cases {
        for recv in [
            format!("MPI_Recv 0 0 bytes={posted} peer=0"),
            format!("MPI_Irecv 0 0 bytes={posted} peer=0 req=0\n1 MPI_Wait 0 0 done=0:0:0"),
        ] {
            let (_d, f) = text_trace(
                "message.txt",
                &format!(
                    "loggps-trace 1\nranks 2\n0 MPI_Init 0 0\n0 {send}\n0 MPI_Finalize 0 0\n\
                     1 MPI_Init 0 0\n1 {recv}\n1 MPI_Finalize 0 0\n"
                ),
            );
            let v = json(&[&[f.as_str()][..], &params].concat());
            assert_close(rank_ns(&v, 1)[0], end, &format!("{send} / {recv}"));
        }
    }
    // A Sendrecv's send (5000 bytes, its word not a byte count) into an Irecv, with S = 10^5:
    // rank 1's Irecv returns at 100, its Send of 10 bytes is called there and returns at 200,
    // its Wait (called at 200) at max(0 + T1 + T2 + T3, 200 + o) = 6200. Rank 0's receive half
    // takes rank 1's message sent at 100: 100 + T1 + T2 + T3 = 1310, its send half returns at
    // T1 = 100, so the Sendrecv at 1310.
    let (_d, f) = text_trace(
        "sendrecv.txt",
        "loggps-trace 1\nranks 2\n\
         0 MPI_Init 0 0\n0 MPI_Sendrecv 0 0 bytes=5000 peer=1 recv_bytes=10 source=1\n0 MPI_Finalize 0 0\n\
         1 MPI_Init 0 0\n1 MPI_Irecv 0 0 bytes=5000 peer=0 req=0\n1 MPI_Send 0 0 bytes=10 peer=0\n\
         1 MPI_Wait 0 0 done=0:0:0\n1 MPI_Finalize 0 0\n",
    );
    let mut args = params.to_vec();
    args[15] = "100000";
    let v = json(&[&[f.as_str()][..], &args].concat());
    assert_close(rank_ns(&v, 0)[0], 1310.0, "Sendrecv");
    assert_close(rank_ns(&v, 1)[0], 6200.0, "Wait on the Sendrecv's message");
}

/// A reader that stops early (`| head`) ends a long report quietly: status 0, nothing on
/// standard error. The JSON report of 4,096 ranks is about 1 MB, far more than a pipe holds, so the
/// program is still writing when the pipe closes.
#[test]
fn a_report_cut_short_by_its_reader_is_no_error() {
    use std::io::Read;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let f = &synthesized(dir.path(), &["--pattern", "ring", "--ranks", "4096"]);
    for format in ["json", "csv", "table"] {
        let mut child = bin()
            .args([f, "--platform", "myrinet", "--format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("runs");
        let mut head = [0u8; 100];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{format}: {stderr}");
        assert!(!stderr.contains("error"), "{format}: {stderr}");
    }
}

/// From 2^17 ranks one thread replays the ranks as one block before it goes by waves (a
/// broadcast's ranks all finish in the block; an Allreduce's wait there for the collective and
/// finish by waves): the same report, bit for bit, as two threads, each with a block of its own.
#[test]
fn one_thread_on_many_ranks_predicts_as_two() {
    let dir = tempfile::tempdir().unwrap();
    for pattern in ["bcast", "allreduce"] {
        let f = &synthesized(dir.path(), &["--pattern", pattern, "--ranks", "131072"]);
        let report = |threads| {
            let out = run(&[
                f,
                "--platform",
                "myrinet",
                "--format",
                "json",
                "--threads",
                threads,
            ]);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            out.stdout
        };
        assert!(
            report("1") == report("2"),
            "{pattern}: 1 and 2 threads differ"
        );
    }
}

/// `MPI_Request_free` completes its request without a waiter: the free costs `o`, where a Wait
/// on the same rendezvous send would wait for the late receiver. By hand (myrinet, the model's
/// §2 and §4): rank 0's Isend at 0 returns at o = 6550, its free, called 1 ns later, at
/// 6551 + o = 13,101. Rank 1 starts at 1,000,000 and receives 20,000 bytes (> S) sent at 0:
/// max(0 + o + L, 10^6) + o + T5 + T1 + T2' + T3.
#[test]
fn a_freed_request_completes_without_a_waiter() {
    let trace = |completion: &str| {
        format!(
            "loggps-trace 1\nranks 2\n0 MPI_Isend 0 1 bytes=20000 peer=1 tag=0 req=0\n\
             0 {completion} 2 3 done=0:-1:-1\n1 MPI_Recv 1000000 1000005 bytes=20000 peer=0 tag=0\n"
        )
    };
    let (_d, freed) = text_trace("freed.txt", &trace("MPI_Request_free"));
    let v = json(&[&freed, "--platform", "myrinet", "--format", "json"]);
    let (o, l, os, or, gs, gl, s) = (6550.0, 1160.0, 6.86, 2.57, 15.48, -0.74, 8191.0);
    assert_close(
        rank_ns(&v, 0)[0],
        6551.0 + o,
        "rank 0 ends at its free's return",
    );
    let k = 20000.0;
    let t2 = s * gs + (k - s) * gl + l;
    let recv = 1e6 + o + (o + l + o) + (o + k * os) + t2 + (o + k * or);
    assert_close(rank_ns(&v, 1)[0], recv, "rank 1's rendezvous receive");
    // Waited on instead, the send waits for the receiver's call.
    let (_d, waited) = text_trace("waited.txt", &trace("MPI_Wait"));
    let w = json(&[&waited, "--platform", "myrinet", "--format", "json"]);
    assert!(rank_ns(&w, 0)[0] > 1e6, "{}", rank_ns(&w, 0)[0]);
}

/// A failed poll (a Test that completed nothing, an Iprobe that found nothing) costs the
/// model's `poll`, else its own traced duration, never `o`. By hand (myrinet): rank 0 calls
/// Irecv at 0 (returns at o = 6550), then after 1 ns a Test that took 100 ns when traced, then
/// after 1 ns an Iprobe that took 40 ns: ends at 6550 + 1 + 100 + 1 + 40 = 6692, or with
/// `--poll 25` at 6550 + 1 + 25 + 1 + 25 = 6602. Its request stays pending (a warning).
#[test]
fn failed_polls_cost_poll_or_their_traced_time() {
    let t = "loggps-trace 1\nranks 2\n0 MPI_Irecv 0 1 bytes=8 peer=1 tag=0 req=0\n\
             0 MPI_Test 2 102\n0 MPI_Iprobe 103 143 peer=1 tag=5\n";
    let (_d, f) = text_trace("poll.txt", t);
    let end = |extra: &[&str]| {
        let v = json(
            &[
                &[f.as_str(), "--platform", "myrinet", "--format", "json"],
                extra,
            ]
            .concat(),
        );
        rank_ns(&v, 0)[0]
    };
    assert_close(
        end(&[]),
        6550.0 + 1.0 + 100.0 + 1.0 + 40.0,
        "traced durations",
    );
    assert_close(
        end(&["--poll", "25"]),
        6550.0 + 1.0 + 25.0 + 1.0 + 25.0,
        "--poll 25",
    );
    // From a parameter file, listed in the report with its source.
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("p.toml");
    let text = loggps_predict::model::params_toml(&loggps_predict::model::Params {
        poll: Some(25.0),
        ..loggps_predict::model::Params::preset("myrinet").unwrap()
    });
    std::fs::write(&toml, &text).unwrap();
    let v = json(&[&f, "--params", toml.to_str().unwrap(), "--format", "json"]);
    assert_close(rank_ns(&v, 0)[0], 6602.0, "poll from a file");
    assert_eq!(v["params"]["poll"]["value"].as_f64(), Some(25.0), "{v}");
    std::fs::write(&toml, text.replace("poll = 25.0", "poll = -1.0")).unwrap();
    let out = run(&[&f, "--params", toml.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

/// Posting a receive costs the model's `post` where it is set, else `o` (the paper's Table 4).
/// By hand (myrinet): rank 1 sends 8 bytes at 0, there at T1 + T2 = (6550 + 8·6.86) +
/// (8·15.48 + 1160) = 7888.72, its receive's Tblk ending at 7888.72 + T3 = 7888.72 + 6550 +
/// 8·2.57 = 14,459.28. Rank 0 posts it at 0, computes 10,000 ns and waits: with `o`, its Wait is called at
/// 16,550 and returns at 16,550 + o = 23,100; with `--post 100` called at 10,100, returning at
/// max(14,459.28, 10,100 + o) = 16,650.
#[test]
fn a_posted_receive_costs_post_or_o() {
    let t = "loggps-trace 1\nranks 2\n0 MPI_Irecv 0 1 bytes=8 peer=1 tag=0 req=0\n\
             0 MPI_Wait 10001 10002 done=0:1:0\n1 MPI_Send 0 1 bytes=8 peer=0 tag=0\n";
    let (d, f) = text_trace("post.txt", t);
    let end = |trace: &str, extra: &[&str]| {
        let args = [&[trace, "--format", "json"][..], extra].concat();
        let v = json(&args);
        assert!(v["warnings"].as_array().unwrap().is_empty(), "{v}");
        (rank_ns(&v, 0)[0], v)
    };
    let myrinet = ["--platform", "myrinet"];
    assert_close(end(&f, &myrinet).0, 23_100.0, "the paper's o");
    let (ns, v) = end(&f, &[&myrinet[..], &["--post", "100"]].concat());
    assert_close(ns, 16_650.0, "--post 100");
    assert_eq!(v["params"]["post"]["value"].as_f64(), Some(100.0), "{v}");
    // What it is worth: the Wait is called `post` after the Irecv's call and returns `o` later,
    // so the runtime grows by 1 ns a ns of it, by replays and read off the critical path; a
    // set without `post` lists none.
    let sens = |extra: &[&str]| {
        let args = [
            &["sensitivity", f.as_str(), "--format", "json"][..],
            &myrinet,
            extra,
        ]
        .concat();
        json(&args)["parameters"].as_array().unwrap().clone()
    };
    let listed = sens(&["--post", "100"]);
    let post = listed.iter().find(|p| p["name"] == "post").unwrap();
    for key in ["ns_per_unit", "from_critical_path"] {
        assert_close(post[key].as_f64().unwrap(), 1.0, key);
    }
    assert!(sens(&[]).iter().all(|p| p["name"] != "post"));
    // From a parameter file, a text trace's params line and its binary conversion alike.
    let toml = d.path().join("p.toml");
    let text = loggps_predict::model::params_toml(&loggps_predict::model::Params {
        post: Some(100.0),
        ..loggps_predict::model::Params::preset("myrinet").unwrap()
    });
    std::fs::write(&toml, &text).unwrap();
    assert_close(
        end(&f, &["--params", toml.to_str().unwrap()]).0,
        16_650.0,
        "post from a file",
    );
    let with = t.replace(
        "ranks 2\n",
        "ranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383 post=100\n",
    );
    let (_d, g) = text_trace("with.txt", &with);
    assert_close(end(&g, &[]).0, 16_650.0, "post from the trace's params");
    let bin = d.path().join("with.bin");
    let out = run(&["convert", &g, bin.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert_close(
        end(bin.to_str().unwrap(), &[]).0,
        16_650.0,
        "post from the binary trace",
    );
    // A negative post is refused, from a flag, a file or a trace.
    assert_eq!(
        run(&[&f, "--platform", "myrinet", "--post", "-1"])
            .status
            .code(),
        Some(2)
    );
    std::fs::write(&toml, text.replace("post = 100.0", "post = -1.0")).unwrap();
    assert_eq!(
        run(&[&f, "--params", toml.to_str().unwrap()]).status.code(),
        Some(2)
    );
    let (_d, h) = text_trace("bad.txt", &with.replace("post=100", "post=-1"));
    assert_ne!(run(&[&h]).status.code(), Some(0));
}

/// A matched probe is a probe and its `MPI_Mrecv` the receive of the message it found. By hand
/// (myrinet, 100 bytes sent at 0): the message is there at T1 + T2 = (6550 + 686) + (1548 +
/// 1160) = 9944; the Mprobe called at 0 returns at 9944 + o = 16,494; the Mrecv, called 1 ns
/// later, at 16,495 + T3 = 16,495 + 6550 + 257 = 23,302.
#[test]
fn matched_probes_probe_and_receive() {
    let t = "loggps-trace 1\nranks 2\n0 MPI_Mprobe 0 5 bytes=100 peer=1 tag=3\n\
             0 MPI_Mrecv 6 9 bytes=100 peer=1 tag=3\n1 MPI_Send 0 1 bytes=100 peer=0 tag=3\n";
    let (_d, f) = text_trace("mprobe.txt", t);
    let v = json(&[&f, "--platform", "myrinet", "--format", "json"]);
    assert_close(
        rank_ns(&v, 0)[0],
        23_302.0,
        "rank 0 ends at its Mrecv's return",
    );
    assert!(v["warnings"].as_array().unwrap().is_empty(), "{v}");
}

/// One-sided calls and neighborhood collectives load and replay at their traced durations,
/// counted in a warning: a rank that fences (100 ns), puts (30 ns) and fences (100 ns), 1 ns
/// of computation between, ends at 100 + 1 + 30 + 1 + 100 = 232 ns whatever the platform.
#[test]
fn calls_the_model_does_not_cost_keep_their_durations() {
    let t = "loggps-trace 1\nranks 1\n0 MPI_Win_fence 0 100\n0 MPI_Put 101 131\n\
             0 MPI_Win_fence 132 232\n0 MPI_Neighbor_alltoall 233 243\n";
    let (_d, f) = text_trace("rma.txt", t);
    for platform in ["myrinet", "fast-ethernet"] {
        let v = json(&[&f, "--platform", platform, "--format", "json"]);
        assert_close(rank_ns(&v, 0)[0], 243.0, platform);
        let w = v["warnings"].to_string();
        assert!(
            w.contains("4 call(s) the model does not cost")
                && w.contains("MPI_Win_fence 2, MPI_Put 1, MPI_Neighbor_alltoall 1"),
            "{w}"
        );
    }
}

/// The JSON report of trace `f` under Myrinet, collectives measured.
fn measured(f: &str) -> serde_json::Value {
    json(&[
        f,
        "--platform",
        "myrinet",
        "--coll",
        "measured",
        "--format",
        "json",
    ])
}

/// A nonblocking collective returns after `o` and completes at its Wait, where its blocking
/// twin would have returned. By hand (myrinet, o = 6550, collectives measured: the instance
/// completes at its latest call): rank 0 calls Ibarrier at 0 (returns 6550), computes 9999 ns,
/// calls Wait at 16549, which returns when rank 1 calls at 50000; rank 1 calls at 50000
/// (returns 56550), computes 1 ns, and its Wait at 56551 finds the barrier done: it costs o,
/// ending at 63101. Rank 0's wait is synchronization, 50000 − 16549 = 33451 ns.
#[test]
fn a_nonblocking_collective_completes_at_its_wait() {
    let t = "loggps-trace 1\nranks 2\n0 MPI_Ibarrier 0 1 req=0\n0 MPI_Wait 10000 10001 done=0:-1:-1\n\
             1 MPI_Ibarrier 50000 50001 req=0\n1 MPI_Wait 50002 50003 done=0:-1:-1\n";
    let (_d, f) = text_trace("ibarrier.txt", t);
    let v = measured(&f);
    let [end0, comp0, comm0, _, rsync0] = rank_ns(&v, 0);
    assert_close(
        end0,
        50000.0,
        "rank 0 returns from its Wait at rank 1's call",
    );
    assert_close(comp0, 9999.0, "rank 0's computation");
    assert_close(comm0, 6550.0, "rank 0's Ibarrier call");
    assert_close(rsync0, 50000.0 - 16549.0, "rank 0 waits for rank 1");
    assert_close(rank_ns(&v, 1)[0], 63101.0, "rank 1's Wait costs o");
    assert_eq!(v["warnings"].as_array().unwrap().len(), 0, "{v}");
}

/// Modeled, a nonblocking collective waited for at once ends where its blocking twin does, and
/// one overlapped with 1 ms of computation costs its two calls' overheads alone (myrinet: the
/// 8-byte Iallreduce on 2 ranks ends long before the Wait): 6550 + 1 000 000 + 6550 ns.
#[test]
fn a_nonblocking_collective_overlaps_computation() {
    let trace = |wait_at: u64, blocking: bool| {
        let mut t = String::from("loggps-trace 1\nranks 2\n");
        for r in 0..2 {
            if blocking {
                t += &format!("{r} MPI_Allreduce 0 1 bytes=8 recv_bytes=8\n");
            } else {
                t += &format!("{r} MPI_Iallreduce 0 1 bytes=8 recv_bytes=8 req=0\n");
                t += &format!("{r} MPI_Wait {wait_at} {} done=0:-1:-1\n", wait_at + 1);
            }
        }
        t
    };
    let end = |text: String| {
        let (_d, f) = text_trace("t.txt", &text);
        json(&[&f, "--platform", "myrinet", "--format", "json"])["predicted_s"]
            .as_f64()
            .unwrap()
            * 1e9
    };
    let (blocking, at_once) = (end(trace(0, true)), end(trace(2, false)));
    assert!(blocking > 2.0 * 6550.0 + 1.0, "{blocking}");
    assert_close(at_once, blocking, "waited at once: the blocking twin's end");
    assert_close(
        end(trace(1_000_001, false)),
        6550.0 + 1_000_000.0 + 6550.0,
        "overlapped: the calls' overheads alone",
    );
}

/// Nonblocking collectives off the world communicator (where the graph links every call), an
/// `MPI_Comm_idup`, an `MPI_Ialltoallw` modeled as its blocking `MPI_Alltoallw` is, and one left
/// pending at the end (legal: a warning, no refusal). By hand (myrinet, collectives measured):
/// rank 1 calls Comm_idup at 1000 (ends 7550) and its Ialltoallw at 7551 (ends 14101); rank 0
/// calls them at 0 and 6551 and its Wait on both at 13102, which returns at rank 1's latest
/// call, 7551, no earlier than 13102 + o = 19652. Its Iallreduce on comm 1 at 19653 costs o
/// (26203) and is never waited for.
#[test]
fn nonblocking_collectives_on_communicators_and_left_pending() {
    let t = "loggps-trace 1\nranks 2\ncomm 1 members 0,1\n\
             0 MPI_Comm_idup 0 1 comm=0 req=0\n\
             0 MPI_Ialltoallw 2 3 bytes=16 recv_bytes=16 counts=8,8,8,8 req=1\n\
             0 MPI_Waitall 4 5 done=0:-1:-1,1:-1:-1\n\
             0 MPI_Iallreduce 6 7 comm=1 bytes=8 recv_bytes=8 req=2\n\
             1 MPI_Comm_idup 1000 1001 comm=0 req=0\n\
             1 MPI_Ialltoallw 1002 1003 bytes=16 recv_bytes=16 counts=8,8,8,8 req=1\n\
             1 MPI_Waitall 1004 1005 done=0:-1:-1,1:-1:-1\n\
             1 MPI_Iallreduce 1006 1007 comm=1 bytes=8 recv_bytes=8 req=2\n\
             1 MPI_Wait 1008 1009 done=2:-1:-1\n";
    let (_d, f) = text_trace("icolls.txt", t);
    let v = measured(&f);
    assert_close(
        rank_ns(&v, 0)[0],
        26203.0,
        "rank 0 ends at its Iallreduce's return",
    );
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("1 request(s) never completed"),
        "{warnings}"
    );
    // Modeled (each as its blocking twin: `collectives::traced::op_of`), the same loads and
    // lists the calls by routine.
    let modeled = json(&[&f, "--platform", "myrinet", "--format", "json"]);
    let by_routine = modeled["collectives_s"].as_object().unwrap();
    for r in ["MPI_Comm_idup", "MPI_Ialltoallw", "MPI_Iallreduce"] {
        assert!(by_routine.contains_key(r), "{r}: {modeled}");
    }
}

/// `--svg`: the breakdown as stacked bars, the average rank first, then each rank, each bar's
/// segments its parts' shares and its label its end. The round trip of the model's §6 with
/// k = 12000, w = 500 µs (Myrinet, eager): rank 0 computes w and ends at the RTT, 626,260 ns;
/// rank 1 waits T1 + T2' = 88,870 + 125,138.02 ns for the message (receiver sync), then pays
/// T3 + T1 = 37,390 + 88,870 ns (communication), ending at 340,268.02 ns.
#[test]
fn svg_draws_each_ranks_breakdown() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("b.svg");
    let f = fixture("rtt/k12000-w500000.txt");
    let out = run(&[f.to_str().unwrap(), "--svg", svg.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    let titles: Vec<&str> = svg
        .split("<title>")
        .skip(1)
        .map(|t| &t[..t.find('<').unwrap()])
        .collect();
    let share = |part: f64, end: f64| format!("{:.1}%", 100.0 * part / end);
    let (end0, end1) = (626_260.0, 340_268.02);
    let rank0 = [
        share(500_000.0, end0),
        share(126_260.0, end0),
        share(0.0, end0),
        share(0.0, end0),
    ];
    let rank1 = [
        share(0.0, end1),
        share(126_260.0, end1),
        share(0.0, end1),
        share(214_008.02, end1),
    ];
    assert_eq!(titles.len(), 12, "{svg}");
    for (bar, want) in [(1, rank0), (2, rank1)] {
        for (k, w) in want.iter().enumerate() {
            assert!(
                titles[4 * bar + k].ends_with(&format!(": {w}")),
                "{titles:?}"
            );
        }
    }
    assert!(
        svg.contains(">rank 1<") && svg.contains(">0.000340 s<"),
        "{svg}"
    );
    assert!(
        svg.contains(">average of 2 ranks<") && svg.contains("(the run: 0.000626 s)"),
        "{svg}"
    );
}

/// Beyond 32 ranks the chart shows the 32 that end last (in rank order) and says so.
#[test]
fn svg_of_many_ranks_shows_those_that_end_last() {
    let dir = tempfile::tempdir().unwrap();
    let f = synthesized(
        dir.path(),
        &["--pattern", "gauss", "--ranks", "40", "--iterations", "3"],
    );
    let svg = dir.path().join("m.svg");
    let v = json(&[
        &f,
        "--platform",
        "myrinet",
        "--format",
        "json",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let svg = std::fs::read_to_string(&svg).unwrap();
    let mut ends: Vec<(f64, u64)> = v["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["end_s"].as_f64().unwrap(), r["rank"].as_u64().unwrap()))
        .collect();
    ends.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut last: Vec<u64> = ends[..32].iter().map(|e| e.1).collect();
    last.sort();
    let shown: Vec<u64> = svg
        .split(">rank ")
        .skip(1)
        .map(|s| s[..s.find('<').unwrap()].parse().unwrap())
        .collect();
    assert_eq!(shown, last, "{svg}");
    assert!(svg.contains("the 32 of 40 ranks that end last"), "{svg}");
}

/// `--progress calls`: a nonblocking receive's message moves at its rank's next call that
/// starts no request. Myrinet, k = 20,000 > S (rendezvous): T5 = 14,260, T1 = 143,750,
/// T2' = 119,218.02, T3 = 57,950 ns; o + L = 7,710 ns. Rank 0 posts an Irecv at 0 (returning
/// at o = 6,550), computes 100 µs, waits at 106,550; rank 1 sends at 0.
/// - async (the paper's model): tr = 0; the Wait returns at 7,710 + o + T5 + T1 + T2' + T3 =
///   349,438.02, the Send at 7,710 + o + T5 + T1 = 172,270.
/// - calls: tr = the Wait's call, 106,550: the Wait returns at 106,550 + 6,550 + 14,260 +
///   143,750 + 119,218.02 + 57,950 = 448,278.02; the Send at 106,550 + o + T5 + T1 = 271,110,
///   98,840 of it sender synchronization (106,550 − 7,710).
#[test]
fn progress_at_calls_moves_a_posted_receive_at_the_next_call() {
    let t = "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
        0 MPI_Init 0 0\n0 MPI_Irecv 0 10 bytes=20000 peer=1 tag=0 req=0\n0 MPI_Wait 100010 100020 done=0:1:0\n0 MPI_Finalize 100020 100030\n\
        1 MPI_Init 0 0\n1 MPI_Send 0 10 bytes=20000 peer=0 tag=0\n1 MPI_Finalize 10 20\n";
    let (_d, f) = text_trace("irecv.txt", t);
    let v = json(&[&f, "--format", "json"]);
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        349_438.02,
        "async",
    );
    assert_close(rank_ns(&v, 1)[0], 172_270.0, "async send");
    assert_eq!(v["progress"], "async");
    let v = json(&[&f, "--progress", "calls", "--format", "json"]);
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        448_278.02,
        "calls",
    );
    let send = rank_ns(&v, 1);
    assert_close(send[0], 271_110.0, "calls send");
    assert_close(send[3], 98_840.0, "calls sender sync");
    assert_eq!(v["progress"], "calls");
    let table = String::from_utf8_lossy(&run(&[&f, "--progress", "calls"]).stdout).to_string();
    assert!(
        table.contains("messages move only inside MPI calls"),
        "{table}"
    );
}

/// `--progress calls`: a rank takes the receives one Waitall completes one at a time, each
/// from its start (its message, or the rendezvous request, there and the call made) or the
/// end of the one before, whichever is later. Myrinet. Rank 0 posts two Irecvs (calls at 0
/// and o = 6,550), computes 99,990 ns and calls Waitall at tw = 113,090; rank 1 sends both
/// messages at once.
/// - 1,000 B (eager; T1 = 13,410, T2 = 16,640, T3 = 9,120): both arrive (30,050 and 43,460)
///   before tw, so both start at tw: the first ends at tw + T3 = 122,210, the second at
///   131,330, the Waitall's return and the runtime (each taken at once: 122,210). The runtime
///   is 4o + 99,990 + 2·k·Or: its derivative is 4 by o, 2,000 by Or, 0 by L, Os and G.
/// - With rank 1's second send 119,990 ns later (at 133,400, arriving at 163,450, after the
///   first receive's end): it waits for its message, not for the first: 163,450 + T3 = 172,570.
/// - 20,000 B (rendezvous), Isends at 0 and 6,550: each receive costs o + T5 + T1 + T2' + T3 =
///   6,550 + 14,260 + 143,750 + 119,218.02 + 57,950 = 341,728.02 from tw (the requests arrived
///   at 7,710 and 14,260), holding the rank's CPU for its payload's part, T1 + T2' + T3 =
///   320,918.02, before its end (the confirmation and the ACK, o + T5, overlap): the first ends
///   at 454,818.02, the second's payload from there: 775,736.04. By o: 2 for the Irecvs, 5 for
///   the first receive (o, 2o in T5, T1, T3) and 2 for the second's payload (T1, T3), 9; by L:
///   2 (T5, T2') + 1 (T2') = 3; by Os and Or: 2k = 40,000; by Gs: 2s = 16,382; by Gl: 2(k − s)
///   = 23,618. The critical path's reading of each is the same.
#[test]
fn progress_at_calls_takes_a_waitalls_receives_one_at_a_time() {
    let trace = |k: u64, send: &str| {
        format!(
            "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
            0 MPI_Init 0 0\n0 MPI_Irecv 0 10 bytes={k} peer=1 tag=0 req=0\n0 MPI_Irecv 10 20 bytes={k} peer=1 tag=1 req=1\n\
            0 MPI_Waitall 100010 100020 done=0:1:0,1:1:1\n0 MPI_Finalize 100020 100030\n\
            1 MPI_Init 0 0\n{send}"
        )
    };
    let blocking = |gap: u64| {
        format!(
            "1 MPI_Send 0 10 bytes=1000 peer=0 tag=0\n1 MPI_Send {} {} bytes=1000 peer=0 tag=1\n\
            1 MPI_Finalize {} {}\n",
            10 + gap,
            20 + gap,
            20 + gap,
            30 + gap
        )
    };
    let calls = |t: &str, name: &str| {
        let (_d, f) = text_trace(name, t);
        json(&[&f, "--progress", "calls", "--format", "json"])
    };
    let v = calls(&trace(1000, &blocking(0)), "eager.txt");
    assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, 131_330.0, "eager");
    let r0 = rank_ns(&v, 0);
    assert_close(
        r0[2],
        2.0 * 6550.0 + 2.0 * 9120.0,
        "eager communication: 2 Irecvs, 2 T3",
    );
    // Each parameter's derivative, by replays and read off the critical path, is `want`.
    let derivatives = |t: &str, wants: &[(&str, f64)]| {
        let (_d, f) = text_trace("d.txt", t);
        let s = json(&["sensitivity", &f, "--progress", "calls", "--format", "json"]);
        for &(name, want) in wants {
            let d = s["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["name"] == name)
                .unwrap();
            for key in ["ns_per_unit", "from_critical_path"] {
                let got = d[key].as_f64().unwrap();
                assert!(
                    (got - want).abs() < 1e-5 * want.max(1.0),
                    "{name} {key}: {got}"
                );
            }
        }
    };
    let eager = [
        ("o", 4.0),
        ("Or", 2000.0),
        ("L", 0.0),
        ("Os", 0.0),
        ("Gs", 0.0),
    ];
    derivatives(&trace(1000, &blocking(0)), &eager);
    let v = calls(&trace(1000, &blocking(119_990)), "late.txt");
    assert_close(v["predicted_s"].as_f64().unwrap() * 1e9, 172_570.0, "late");
    let isends = "1 MPI_Isend 0 10 bytes=20000 peer=0 tag=0 req=0\n1 MPI_Isend 10 20 bytes=20000 peer=0 tag=1 req=1\n\
        1 MPI_Waitall 20 30 done=0:-1:-1,1:-1:-1\n1 MPI_Finalize 30 40\n";
    let t = trace(20000, isends);
    let v = calls(&t, "rdv.txt");
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        775_736.04,
        "rendezvous",
    );
    let rendezvous = [
        ("o", 9.0),
        ("L", 3.0),
        ("Os", 40_000.0),
        ("Or", 40_000.0),
        ("Gs", 16_382.0),
        ("Gl", 23_618.0),
    ];
    derivatives(&t, &rendezvous);
}

/// The next call after a posted receive need not be its Wait: here rank 1's blocking Recv of
/// a small message moves the large one, which rank 0's Wait needs before rank 0 sends that
/// small message. No deadlock: rank 0's Isend completes at max(o + L, 6,550) + o + T5 + T1 =
/// 172,270, its 8-byte Send returns at + 6,604.88; rank 1's Recv returns at 178,874.88 +
/// T2 (1,283.84) + T3 (6,570.56) = 186,729.28, its Wait at 7,710 + o + T5 + T1 + T2' + T3 =
/// 349,438.02 (numbers as in the test above).
#[test]
fn progress_at_calls_takes_the_first_call_not_the_wait() {
    let t = "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
        0 MPI_Init 0 0\n0 MPI_Isend 0 10 bytes=20000 peer=1 tag=0 req=0\n0 MPI_Wait 10 20 done=0:-1:-1\n\
        0 MPI_Send 20 30 bytes=8 peer=1 tag=1\n0 MPI_Finalize 30 40\n\
        1 MPI_Init 0 0\n1 MPI_Irecv 0 10 bytes=20000 peer=0 tag=0 req=0\n1 MPI_Recv 10 20 bytes=8 peer=0 tag=1\n\
        1 MPI_Wait 20 30 done=0:0:0\n1 MPI_Finalize 30 40\n";
    let (_d, f) = text_trace("first.txt", t);
    let v = json(&[&f, "--progress", "calls", "--format", "json"]);
    assert_close(rank_ns(&v, 0)[0], 178_874.88, "rank 0");
    assert_close(rank_ns(&v, 1)[0], 349_438.02, "rank 1");
}

/// A trace whose ranks ran on cores farther apart than the parameters' `cores` says is warned
/// of by predict (its sweeps too) and by sensitivity, and only then; the prediction is unchanged.
#[test]
fn ranks_on_other_cores_than_the_calibrations_are_warned_of() {
    let trace = |cores: &str| {
        format!(
            "loggps-trace 1\nranks 2\n\
             params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383 cores=92\n\
             rank 0 host \"vm\" offset 0 0 cores 1 {cores}\n\
             0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes=8 peer=1 tag=0\n0 MPI_Finalize 10 20\n\
             1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=8 peer=0 tag=0\n1 MPI_Finalize 10 20\n"
        )
    };
    let (_d, far) = text_trace("far.txt", &trace("95 338"));
    let (_e, near) = text_trace("near.txt", &trace("95 101"));
    let sweep = vec!["predict", "--sweep", "S=4096,8192"];
    for args in [vec!["predict"], sweep, vec!["sensitivity"]] {
        let warned = |f: &str| {
            let out = run(&[args.as_slice(), &[f]].concat());
            assert!(out.status.success(), "{args:?} {f}");
            String::from_utf8_lossy(&out.stderr).contains("farther apart than the parameters")
        };
        assert!(warned(&far), "{args:?}: no warning for 338 ns against 92");
        assert!(!warned(&near), "{args:?}: a warning for 101 ns against 92");
    }
    let p = |f: &str| json(&[f, "--format", "json"]);
    assert_eq!(p(&far)["predicted_s"], p(&near)["predicted_s"]);
    // In the JSON report too, for scripts.
    let warned = |v: serde_json::Value| v["warnings"].to_string().contains("farther apart");
    assert!(warned(p(&far)) && !warned(p(&near)));
}

/// Where stderr is not a terminal (a batch job's log, this test's pipe), long work writes a
/// plain progress line every `LOGGPS_PROGRESS_SECONDS` (30 by default: none in a run this
/// short), saying what it does and how far it is: the replay its events, `sensitivity` each
/// replay's parameter.
#[test]
fn a_batch_log_gets_plain_progress_lines() {
    let dir = tempfile::tempdir().unwrap();
    let f = synthesized(
        dir.path(),
        &[
            "--pattern",
            "cg",
            "--ranks",
            "64",
            "--iterations",
            "100",
            "--bytes",
            "8192",
        ],
    );
    let progress = |args: &[&str], every: Option<&str>| {
        let mut cmd = bin();
        cmd.args(args).args([&f, "--platform", "myrinet"]);
        if let Some(s) = every {
            cmd.env("LOGGPS_PROGRESS_SECONDS", s);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let lines = progress(&["predict"], Some("0"));
    assert!(
        lines
            .lines()
            .any(|l| l.starts_with("replaying: ") && l.ends_with(" so far")),
        "{lines}"
    );
    let lines = progress(&["sensitivity"], Some("0"));
    assert!(lines.contains("replaying with L + "), "{lines}");
    assert!(!progress(&["predict"], None).contains("so far"));
}
