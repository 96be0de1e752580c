//! `--model loggp`: expected values by hand from LogGP's rules, its parameters in the report,
//! and the flags it refuses.

mod common;

use common::{assert_close, fixture, json, rank_ns, run, text_trace};

/// A ping-pong of k = 101 bytes under L = 1000, o = 200, g = 50, G = 2, no computation:
/// (k−1)G = 200. Rank 0's Send at 0: first byte out at 0 + o = 200, last at 400, arrives
/// 1400; the Send returns at 200. Rank 1's Recv (called at 0) returns at 1400 + o = 1600; its
/// Send: first byte out 1800, last 2000, arrives 3000, returns 1800. Rank 0's Recv (called at
/// 200) returns 3000 + o = 3200 = 2·(o + (k−1)G + L + o). g never enters: each rank sends one
/// message and receives one. Breakdown: rank 0 communication 200 (Send) + 200 (Recv's o),
/// receiver sync 3000 − 200 = 2800; rank 1 receiver sync 1400, communication 200 + 200.
#[test]
fn loggp_ping_pong_by_hand() {
    let (_d, f) = text_trace(
        "pingpong.txt",
        "loggps-trace 1\nranks 2\n\
         0 MPI_Init 0 0\n0 MPI_Send 0 50 bytes=101 peer=1\n0 MPI_Recv 50 900 bytes=101 peer=1\n0 MPI_Finalize 900 950\n\
         1 MPI_Init 0 0\n1 MPI_Recv 0 500 bytes=101 peer=0\n1 MPI_Send 500 600 bytes=101 peer=0\n1 MPI_Finalize 600 650\n",
    );
    let v = json(&[
        &f, "--model", "loggp", "--L", "1000", "--o", "200", "--g", "50", "--G", "2", "--format",
        "json",
    ]);
    assert_eq!(v["model"], "loggp");
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        3200.0,
        "predicted",
    );
    let [end, comp, comm, ssync, rsync] = rank_ns(&v, 0);
    for (got, want, what) in [
        (end, 3200.0, "rank 0 end"),
        (comp, 0.0, "rank 0 computation"),
        (comm, 400.0, "rank 0 communication"),
        (ssync, 0.0, "rank 0 sender sync"),
        (rsync, 2800.0, "rank 0 receiver sync"),
    ] {
        assert_close(got, want, what);
    }
    let [end, _, comm, ssync, rsync] = rank_ns(&v, 1);
    assert_close(end, 1800.0, "rank 1 end");
    assert_close(comm, 400.0, "rank 1 communication");
    assert_close(ssync, 0.0, "rank 1 sender sync");
    assert_close(rsync, 1400.0, "rank 1 receiver sync");
    // No rendezvous under LogGP: the same trace with 1 MB messages (way above any S) costs
    // (k−1)G more per hop, 2·(o + (10^6 − 1)·2 + L + o) = 2·(200 + 1 999 998 + 1000 + 200).
    let (_d2, big) = text_trace(
        "big.txt",
        &std::fs::read_to_string(&f)
            .unwrap()
            .replace("bytes=101", "bytes=1000000"),
    );
    let v = json(&[
        &big, "--model", "loggp", "--L", "1000", "--o", "200", "--G", "2", "--format", "json",
    ]);
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        2.0 * 2_001_398.0,
        "1 MB ping-pong",
    );
    assert_close(rank_ns(&v, 0)[3], 0.0, "no sender sync");
}

/// The gap g: rank 0 posts two 1-byte Isends back to back (calls at 0 and 100), then a
/// Waitall; rank 1 receives them in turn. L = 1000, o = 100, g = 500, G = 1 ((k−1)G = 0).
/// First message: out at 0 + o = 100, arrives 1100. Second: its overhead ends at 100 + o = 200
/// but the port is free only at 100 + g = 600, so it leaves g after the first and arrives 1600.
/// Rank 0's Waitall (called at 200) returns when the second is out: max(200 + o, 100, 600) = 600.
/// Rank 1: first Recv returns 1100 + o = 1200; the second message arrived at 1600 (and the
/// receive port is free at 1100 + g = 1600 too), so the second Recv returns 1700 = predicted.
/// With g = 0 the second leaves at 200, arrives 1200, and rank 1 ends at 1200 + o = 1300.
#[test]
fn loggp_gap_between_consecutive_sends() {
    let (_d, f) = text_trace(
        "gap.txt",
        "loggps-trace 1\nranks 2\n\
         0 MPI_Init 0 0\n0 MPI_Isend 0 10 bytes=1 peer=1 req=0\n0 MPI_Isend 10 20 bytes=1 peer=1 req=1\n\
         0 MPI_Waitall 20 30 done=0:-1:-1,1:-1:-1\n0 MPI_Finalize 30 40\n\
         1 MPI_Init 0 0\n1 MPI_Recv 0 100 bytes=1 peer=0\n1 MPI_Recv 100 200 bytes=1 peer=0\n1 MPI_Finalize 200 210\n",
    );
    let run_g = |g: &str| {
        json(&[
            &f, "--model", "loggp", "--L", "1000", "--o", "100", "--g", g, "--G", "1", "--format",
            "json",
        ])
    };
    let v = run_g("500");
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        1700.0,
        "predicted, g = 500",
    );
    assert_close(rank_ns(&v, 0)[0], 600.0, "rank 0 end, g = 500");
    assert_close(rank_ns(&v, 0)[3], 0.0, "a LogGP send never synchronizes");
    let v = run_g("0");
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        1300.0,
        "predicted, g = 0",
    );
    assert_close(
        rank_ns(&v, 0)[0],
        300.0,
        "rank 0 end, g = 0: the Waitall's own o",
    );
}

/// A traced 4-rank MPI_Bcast of K = 51 bytes, modeled by the binomial tree, equals the
/// calculator's figure for the same parameters (L = 1000, o = 100, g = 300, G = 2, so
/// (K−1)G = 100). By hand: rank 0 sends to 2 (out 100, last byte 200, arrives 1200), then to 1
/// (overhead ends 200, port free at 200 + g = 500: out 500, last 600, arrives 1600) and ends
/// when its port is done, 600 + g = 900. Rank 2 receives at 1200 + o = 1300 and forwards to 3
/// (out 1400, last 1500, arrives 2500; ends 1500 + g = 1800); rank 1 ends 1600 + o = 1700;
/// rank 3 ends 2500 + o = 2600, the completion time. The same broadcast written out as
/// MPI_Send/MPI_Recv replays to the same 2600; there rank 0 ends at 500, its second Send's
/// return (a blocking send returns once its first byte is out; a schedule's rank end waits
/// for its port).
#[test]
fn loggp_traced_bcast_matches_calculator() {
    let params = [
        "--model", "loggp", "--L", "1000", "--o", "100", "--g", "300", "--G", "2",
    ];
    let calc = json(
        &[
            &[
                "collective",
                "bcast",
                "--algorithm",
                "binomial",
                "--ranks",
                "4",
                "--bytes",
                "51",
            ][..],
            &params[..],
            &["--format", "json"][..],
        ]
        .concat(),
    );
    let calc_ns = calc["predicted_ns"].as_f64().unwrap();
    assert_close(calc_ns, 2600.0, "calculator");

    let mut t = String::from("loggps-trace 1\nranks 4\n");
    for r in 0..4 {
        let (sent, got) = if r == 0 { (51, 0) } else { (0, 51) };
        t += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Bcast 0 10 root=0 bytes={sent} recv_bytes={got}\n{r} MPI_Finalize 10 20\n"
        );
    }
    let (_d, f) = text_trace("bcast.txt", &t);
    let v = json(
        &[
            &[f.as_str(), "--coll", "bcast=binomial"][..],
            &params[..],
            &["--format", "json"][..],
        ]
        .concat(),
    );
    assert_eq!(v["predicted_s"].as_f64().unwrap() * 1e9, calc_ns);
    for (r, end) in [(0, 900.0), (1, 1700.0), (2, 1800.0), (3, 2600.0)] {
        assert_close(rank_ns(&v, r)[0], end, &format!("rank {r} end"));
    }

    let p2p = "loggps-trace 1\nranks 4\n\
        0 MPI_Init 0 0\n0 MPI_Send 0 1 bytes=51 peer=2\n0 MPI_Send 1 2 bytes=51 peer=1\n0 MPI_Finalize 2 3\n\
        1 MPI_Init 0 0\n1 MPI_Recv 0 1 bytes=51 peer=0\n1 MPI_Finalize 1 2\n\
        2 MPI_Init 0 0\n2 MPI_Recv 0 1 bytes=51 peer=0\n2 MPI_Send 1 2 bytes=51 peer=3\n2 MPI_Finalize 2 3\n\
        3 MPI_Init 0 0\n3 MPI_Recv 0 1 bytes=51 peer=2\n3 MPI_Finalize 1 2\n";
    let (_d2, f2) = text_trace("p2p.txt", p2p);
    let v = json(&[&[f2.as_str()][..], &params[..], &["--format", "json"][..]].concat());
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        2600.0,
        "point-to-point bcast",
    );
    for (r, end) in [(0, 500.0), (1, 1700.0), (2, 1400.0), (3, 2600.0)] {
        assert_close(rank_ns(&v, r)[0], end, &format!("p2p rank {r} end"));
    }
}

/// LogGP's parameters in every format, each with where it came from: the trace embeds the
/// Myrinet preset, so L and o come from it and G = its Gs (15.48); g is 0 by default.
#[test]
fn loggp_report_names_its_parameters_and_sources() {
    let f = fixture("all-routines.txt");
    let f = f.to_str().unwrap();
    let v = json(&[f, "--model", "loggp", "--L", "5", "--format", "json"]);
    assert_eq!(v["model"], "loggp");
    let mut names: Vec<&String> = v["params"].as_object().unwrap().keys().collect();
    names.sort();
    assert_eq!(names, ["G", "L", "g", "o"]);
    for (name, value, source) in [
        ("L", 5.0, "flag"),
        ("o", 6550.0, "trace"),
        ("g", 0.0, "default"),
        ("G", 15.48, "trace"),
    ] {
        assert_eq!(
            v["params"][name]["value"].as_f64().unwrap(),
            value,
            "{name}"
        );
        assert_eq!(v["params"][name]["source"], source, "{name}");
    }
    let v = json(&[
        f,
        "--model",
        "loggp",
        "--platform",
        "cenju4",
        "--g",
        "7",
        "--format",
        "json",
    ]);
    assert_eq!(v["params"]["L"]["source"], "platform cenju4");
    assert_eq!(v["params"]["G"]["value"].as_f64().unwrap(), 0.57);
    assert_eq!(v["params"]["g"]["source"], "flag");
    assert_eq!(json(&[f, "--format", "json"])["model"], "loggps");

    let table = run(&[f, "--model", "loggp", "--g", "7"]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("model      loggp"), "{table}");
    assert!(
        table.contains("parameters L=1160 o=6550 g=7 G=15.48"),
        "{table}"
    );
    assert!(table.contains("L o G from trace; g from flag"), "{table}");
    let csv = run(&[f, "--model", "loggp", "--format", "csv"]);
    let csv = String::from_utf8_lossy(&csv.stdout);
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",model,L,o,g,G"), "{csv}");
    assert!(
        lines.next().unwrap().ends_with(",loggp,1160,6550,0,15.48"),
        "{csv}"
    );
}

/// LogGPS-only flags under LogGP, LogGP-only flags under LogGPS, and LogGP without any L are
/// errors (status 2) that say what to do.
#[test]
fn loggp_flag_errors() {
    let (_d, bare) = text_trace(
        "bare.txt",
        "loggps-trace 1\nranks 1\n0 MPI_Init 0 0\n0 MPI_Finalize 10 20\n",
    );
    let f = fixture("all-routines.txt");
    let f = f.to_str().unwrap();
    for (args, says) in [
        (
            vec![f, "--model", "loggp", "--Gs", "1"],
            "--Gs is a LogGPS parameter",
        ),
        (
            vec![f, "--model", "loggp", "--S", "100"],
            "--S is a LogGPS parameter",
        ),
        (vec![f, "--g", "1"], "--model loggp"),
        (vec![f, "--G", "1"], "--model loggp"),
        (vec![&bare, "--model", "loggp", "--o", "1"], "LogGP needs L"),
        (vec![f, "--model", "loggp", "--g", "-1"], "g = -1"),
        (
            vec![
                "collective",
                "bcast",
                "--ranks",
                "4",
                "--model",
                "loggp",
                "--L",
                "1",
                "--Os",
                "1",
            ],
            "--Os is a LogGPS parameter",
        ),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// MPI_Sendrecv under LogGP is its send half, then its receive called once the send's first
/// byte is out (as the collective schedules cost it). Two ranks exchange k = 101 bytes with
/// L = 1000, o = 200, G = 2: each first byte leaves at 200, the last at 400 and arrives at
/// 1400; each receive (called at 200) returns 1400 + o = 1600 = o + (k−1)G + L + o. Receiver
/// synchronization 1400 − 200 = 1200, communication the two overheads, 400.
#[test]
fn loggp_sendrecv_by_hand() {
    let mut t = String::from("loggps-trace 1\nranks 2\n");
    for r in 0..2 {
        let q = 1 - r;
        t += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Sendrecv 0 10 bytes=101 peer={q} recv_bytes=101 source={q}\n{r} MPI_Finalize 10 20\n"
        );
    }
    let (_d, f) = text_trace("sendrecv.txt", &t);
    let v = json(&[
        &f, "--model", "loggp", "--L", "1000", "--o", "200", "--G", "2", "--format", "json",
    ]);
    for r in 0..2 {
        let [end, _, comm, ssync, rsync] = rank_ns(&v, r);
        assert_close(end, 1600.0, "end");
        assert_close(comm, 400.0, "communication");
        assert_close(ssync, 0.0, "sender sync");
        assert_close(rsync, 1200.0, "receiver sync");
    }
}

/// A Waitall takes its receives through the port in the order their last bytes arrive, not
/// the order it lists them. L = 1000, o = 100, g = 0, G = 1, k = 1001 ((k−1)G = 1000). Rank 2
/// sends at 0: out 100, last byte out 1100, arrives 2100. Rank 1 computes 5000 first: arrives
/// 7100. Rank 0 posts Irecv(1) at 0 and Irecv(2) at 100, then a Waitall at 200 that lists
/// rank 1's first. Rank 2's message goes first: in by 2100, its twin returns 2200, and the
/// port streams it until 2100; rank 1's is in at max(7100, 2100 + 1000) = 7100, returns 7200.
/// (In listed order rank 2's would wait for the port until 7100 + 1000 and return at 8200.)
/// The Waitall's receiver sync is the wait for rank 1's last byte, 7100 − 200 = 6900.
#[test]
fn loggp_waitall_receives_in_arrival_order() {
    let (_d, f) = text_trace(
        "waitall.txt",
        "loggps-trace 1\nranks 3\n\
         0 MPI_Init 0 0\n0 MPI_Irecv 0 10 bytes=1001 peer=1 req=0\n0 MPI_Irecv 10 20 bytes=1001 peer=2 req=1\n\
         0 MPI_Waitall 20 30 done=0:1:0,1:2:0\n0 MPI_Finalize 30 40\n\
         1 MPI_Init 0 0\n1 MPI_Send 5000 5010 bytes=1001 peer=0\n1 MPI_Finalize 5010 5020\n\
         2 MPI_Init 0 0\n2 MPI_Send 0 10 bytes=1001 peer=0\n2 MPI_Finalize 10 20\n",
    );
    let v = json(&[
        &f, "--model", "loggp", "--L", "1000", "--o", "100", "--G", "1", "--format", "json",
    ]);
    assert_close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        7200.0,
        "predicted",
    );
    let [end, comp, comm, _, rsync] = rank_ns(&v, 0);
    assert_close(end, 7200.0, "rank 0 end");
    assert_close(comp, 0.0, "rank 0 computation");
    assert_close(rsync, 6900.0, "rank 0 receiver sync");
    assert_close(
        comm,
        300.0,
        "rank 0 communication: two Irecvs and the Waitall's o",
    );
}
