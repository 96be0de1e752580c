//! Other tools' traces (fixtures/imported/, public samples nobody here wrote): detected without
//! a flag, loaded with one warning for what each format lacks, predicted, and written as GOAL.

mod common;

use common::{fixture, json, run};

fn imported(p: &str) -> String {
    fixture(&format!("imported/{p}"))
        .to_str()
        .unwrap()
        .to_string()
}

fn stderr(args: &[&str]) -> String {
    let out = run(args);
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Each rank's predicted end, ns.
fn ends_ns(args: &[&str]) -> Vec<i64> {
    let v = json(&[args, &["--format", "json"]].concat());
    let ranks = v["ranks"].as_array().unwrap();
    ranks
        .iter()
        .map(|r| (r["end_s"].as_f64().unwrap() * 1e9).round() as i64)
        .collect()
}

/// LogGOPSim's README: `schedgen --ptrn binomialtreereduce --datasize 1024` on 8 hosts
/// (fixtures/imported/goal/binomialtreereduce-8.goal, written by schedgen's algorithm) under its
/// defaults L=2500 o=1500 g=1000 G=6 ends hosts 0–7 at 34914, 24776, 13138, 13138 and 1500 ns.
/// Our LogGP is the same model there: o + (k−1)G + L + o a message, receives taken as they
/// arrive.
#[test]
fn a_goal_schedule_predicts_what_loggopsim_documents() {
    let f = imported("goal/binomialtreereduce-8.goal");
    let loggp = [
        "--model", "loggp", "--L", "2500", "--o", "1500", "--g", "1000", "--G", "6",
    ];
    let ends = ends_ns(&[&[f.as_str()], &loggp[..]].concat());
    assert_eq!(ends, [34914, 24776, 13138, 13138, 1500, 1500, 1500, 1500]);
    // Detected from the file; forcing the format gives the same; the warning says what it lacks.
    let forced = ends_ns(&[&[f.as_str(), "--from", "goal"], &loggp[..]].concat());
    assert_eq!(forced, ends);
    assert!(stderr(&[&f, "--platform", "myrinet"]).contains("records no times"));
    // --calc-ns scales a `calc`: LogGOPSim2's schedgen output of a sphot trace.
    let sphot = imported("goal/schedule.goal");
    let at = |ns: &str| {
        json(&[
            &sphot,
            "--platform",
            "myrinet",
            "--calc-ns",
            ns,
            "--format",
            "json",
        ])["measured_s"]
            .as_f64()
            .unwrap()
    };
    let (one, two) = (at("1"), at("2"));
    assert!(
        one > 0.0 && (two - 2.0 * one).abs() < 1e-9 * one,
        "{one} {two}"
    );
}

/// SimGrid's replay example `actions0.txt`/`actions1.txt` (named by `split_traces`), hand-costed
/// under LogGP L=1000 o=100 G=0 at 1 Gflop/s: rank 0 sends at 0 (returns 100, arrives 1100);
/// rank 1's receive returns 1200, it computes 1e9 flops (1 s) to T = 1e9 + 1200, Isends (T+100,
/// arrives T+1100) and Irecvs (T+200); rank 0's receive returns T+1200, its send returns T+1300
/// and arrives T+2300; rank 1's Wait returns T+2300+100.
#[test]
fn a_time_independent_trace_is_costed_by_hand() {
    let f = imported("tit/split_traces");
    let ends = ends_ns(&[&f, "--model", "loggp", "--L", "1000", "--o", "100"]);
    assert_eq!(ends, [1_000_002_500, 1_000_003_600]);
    // Half the rate: the computation takes twice as long, the messages the same.
    let ends = ends_ns(&[
        &f, "--model", "loggp", "--L", "1000", "--o", "100", "--flops", "5e8",
    ]);
    assert_eq!(ends, [2_000_002_500, 2_000_003_600]);
    let err = stderr(&[&f, "--flops", "0", "--platform", "myrinet"]);
    assert!(err.contains("--flops must be"), "{err}");
}

/// Every SimGrid example trace loads with each message matched (SMPI's replay.tesh runs them
/// all), and its collectives' sizes follow SMPI's argument order.
#[test]
fn simgrids_example_traces_match_every_message() {
    for name in [
        "actions_with_isend.txt",
        "actions_waitall.txt",
        "actions_bcast.txt",
        "actions_alltoall.txt",
        "actions_alltoallv.txt",
        "actions_allreduce.txt",
        "actions_reducescatter.txt",
        "actions_allgatherv.txt",
        "actions_barrier.txt",
        "actions_gather.txt",
        "actions_bcast_reduce_datatypes.txt",
    ] {
        let f = imported(&format!("tit/{name}"));
        let out = run(&[&f, "--platform", "myrinet", "--format", "json"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: {err}");
        assert!(!err.contains("no matching"), "{name}: {err}");
    }
    // `3 alltoallv 1000 100 30 1 1000 30 40 1`: rank 2 sends 100 + 30 + 1 elements and receives
    // 30 + 40 + 1, MPI_BYTE each (`init` has no argument).
    let v = json(&[
        "info",
        &imported("tit/actions_alltoallv.txt"),
        "--format",
        "json",
    ]);
    assert_eq!(
        v["collective_bytes"],
        1 + 40 + 30 + 80 + 1 + 40 + 100 + 30 + 1
    );
    // With `init 1` the default type is MPI_DOUBLE, and `bcast 5e4 0 3` names MPI_SHORT (2 B).
    let v = json(&[
        "info",
        &imported("tit/actions_bcast_reduce_datatypes.txt"),
        "--format",
        "json",
    ]);
    assert_eq!(v["events_by_routine"]["MPI_Bcast"], 6);
}

/// liballprof's samples in LogGOPSim2: every MPI line of the files is an event or a counted
/// skip, a directory or rank 0's file reads the same, and the wildcard receives of sphot get
/// sources.
#[test]
fn liballprof_traces_keep_every_call() {
    let dir = imported("allprof/vladimir");
    // Counted here from the files' lines, independently of the reader.
    let mut lines = std::collections::BTreeMap::<String, u64>::new();
    for r in 0..4 {
        let text = std::fs::read_to_string(format!("{dir}/pmpi-trace-rank-{r}.txt")).unwrap();
        for l in text.lines().filter(|l| l.starts_with("MPI_")) {
            *lines
                .entry(l.split(':').next().unwrap().to_string())
                .or_default() += 1;
        }
    }
    let v = json(&["info", &dir, "--format", "json"]);
    for (routine, n) in &lines {
        match routine.as_str() {
            "MPI_Comm_rank" | "MPI_Comm_size" => {}
            _ => assert_eq!(v["events_by_routine"][routine], *n, "{routine}"),
        }
    }
    let err = stderr(&["info", &dir]);
    assert!(err.contains("MPI_Comm_rank ×4, MPI_Comm_size ×4"), "{err}");
    let file = format!("{dir}/pmpi-trace-rank-0.txt");
    assert_eq!(
        json(&["info", &file, "--format", "json"])["events"],
        v["events"]
    );
    // Times are µs: the measured span of rank 0 runs 1298365588610809 → …621191.
    let m = json(&[&dir, "--platform", "myrinet", "--format", "json"])["measured_s"]
        .as_f64()
        .unwrap();
    assert!((0.0100..0.0200).contains(&m), "{m}");
    let err = stderr(&[&imported("allprof/sphot"), "--platform", "myrinet"]);
    assert!(
        err.contains("6 wildcard receives had no recorded source"),
        "{err}"
    );
    // Every rank's MPI_Init returns at 1.0 µs (its last field: the fields before it are
    // argc's and argv's addresses) and MPI_Finalize is called at 13.0: 12 µs measured.
    let simple = imported("allprof/simple/trace_bcast-0.dat");
    let v = json(&[&simple, "--platform", "myrinet", "--format", "json"]);
    assert!(
        (v["measured_s"].as_f64().unwrap() - 12e-6).abs() < 1e-12,
        "{v}"
    );
}

/// Ours → GOAL → ours: a point-to-point trace (the case study's nonblocking Gaussian
/// elimination, with its two collectives) predicts the same under LogGP, to 10^-6.
#[test]
fn a_trace_through_goal_predicts_the_same() {
    let t = fixture("../traces/gauss-n1024-p2-s4096-original-nonblocking-r1.bin");
    let t = t.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("t.goal");
    let g = g.to_str().unwrap();
    let out = run(&["convert", t, g]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(g).unwrap();
    assert!(text.starts_with("num_ranks 2\n"));
    let loggp = [
        "--model", "loggp", "--L", "2500", "--o", "1500", "--g", "1000", "--G", "6",
    ];
    let a = ends_ns(&[&[t], &loggp[..]].concat());
    let b = ends_ns(&[&[g], &loggp[..]].concat());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert!(((x - y) as f64).abs() <= 1e-5 * *x as f64, "{a:?} {b:?}");
    }
}

/// Ours → GOAL → ours where GOAL has no word for a call: a cancelled wildcard receive (which
/// matches nothing) is left out, lest it take the message of rank 0's `MPI_Recv` (a deadlock
/// before, on a real HPCC trace); a `Test` that completed nothing and an `MPI_Iprobe` that
/// found nothing become `calc`s of their traced 20,000 and 5,000 ns, which the replay keeps as
/// failed polls (lost before); a receive of any source that never completed (a job that died)
/// is left out, matching nothing as in the replay (its `o` then hidden by rank 0's wait). The
/// computation is the replay's: rank 1, whose `MPI_Init`
/// returned 3,000 ns after rank 0's, starts with that; the tracer's own 300 and 200 ns a record
/// are out of each gap. Rank 1's polls are on the critical path. Both ends the same, exactly
/// with every parameter 0 and to 10^-5 under LogGP. An `MPI_Comm_split` (rank 0 calls it
/// 9,000 ns after rank 1, which leaves 100 ns after rank 0's call) synchronizes both ranks as a
/// GOAL barrier: the same ends with every parameter 0 (its messages then cost nothing, as the
/// replay's synchronization does).
#[test]
fn calls_goal_cannot_say_keep_the_prediction() {
    let rank0 = "0 MPI_Init 0 0\n0 MPI_Irecv 10 20 bytes=1000 peer=-2 tag=8 req=0\n\
        0 MPI_Cancel 30 40 req=0\n0 MPI_Wait 50 60 done=0:-1:-1\n\
        0 MPI_Send 6000 6100 bytes=1000 peer=1 tag=7\n0 MPI_Irecv 6200 6210 bytes=8 peer=-1 tag=9 req=1\n\
        0 MPI_Recv 7000 7100 bytes=1000 peer=1 tag=8\n";
    let rank1 = "1 MPI_Init 0 3000\n1 MPI_Irecv 3010 3020 bytes=1000 peer=0 tag=7 req=0\n\
        1 MPI_Test 3030 23030\n1 MPI_Iprobe 23040 28040 peer=0 tag=5\n\
        1 MPI_Wait 28050 28060 done=0:0:7\n1 MPI_Send 28100 28200 bytes=1000 peer=0 tag=8\n";
    let head = "loggps-trace 1\nranks 2\n\
        rank 0 host \"vm\" offset 0 0 own 300 inside 0 requests 300 0\n\
        rank 1 host \"vm\" offset 0 0 own 200 inside 0 requests 200 0\n";
    let end = |r: u32| format!("{r} MPI_Finalize 50000 50010\n");
    let plain = format!("{head}{rank0}{}{rank1}{}", end(0), end(1));
    let split = format!(
        "{head}{rank0}0 MPI_Comm_split 40000 40500 comm=0 newcomm=1\n{}\
         {rank1}1 MPI_Comm_split 31000 40600 comm=0 newcomm=1\n{}",
        end(0),
        end(1)
    );
    let zero = [
        "--model", "loggp", "--L", "0", "--o", "0", "--g", "0", "--G", "0",
    ];
    let loggp = [
        "--model", "loggp", "--L", "2500", "--o", "1500", "--g", "1000", "--G", "6",
    ];
    for (name, t, cases) in [
        ("plain", &plain, vec![(&zero, 0.0), (&loggp, 1e-5)]),
        ("split", &split, vec![(&zero, 0.0)]),
    ] {
        let (dir, f) = common::text_trace(&format!("{name}.txt"), t);
        let g = dir.path().join(format!("{name}.goal"));
        let g = g.to_str().unwrap();
        let out = run(&["convert", &f, g]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(g).unwrap();
        assert!(
            text.contains("calc 20000\n") && text.contains("calc 5000\n"),
            "{text}"
        );
        // Rank 1 starts 3,000 ns late; its gap of 10 ns before its Irecv loses the tracer's.
        let rank1 = text.split("rank 1 {").nth(1).unwrap();
        assert!(rank1.starts_with("\nl0: calc 3000\nl1: recv "), "{rank1}");
        for (params, within) in cases {
            let a = ends_ns(&[&[f.as_str()], &params[..]].concat());
            let b = ends_ns(&[&[g], &params[..]].concat());
            assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(&b) {
                let off = ((x - y) as f64).abs();
                assert!(off <= within * *x as f64, "{name} {params:?}: {a:?} {b:?}");
            }
            // Rank 1's Send leaves after its 20,000 + 5,000 ns of polls; rank 0 waits for it.
            assert!(a[0] > 28_000, "{a:?}");
        }
        // Nor a receive of any source the trace never completed (a job that died): no match
        // in the replay, none in GOAL (it was `recv 8b from -1`, which no reader takes).
        assert!(!text.contains("from -1"), "{text}");
        if name == "plain" {
            assert_eq!(text.matches(": recv ").count(), 2, "{text}");
        }
    }
}

/// A gap's fraction of a nanosecond is carried, not rounded away: rank 0's 1,000 sends to
/// `MPI_PROC_NULL` (nothing in GOAL) lie 10 ns apart, and the tracer's own 0.4 ns a record
/// comes out of each gap, so the replay ends rank 0 after 1,002 gaps of 9.6 ns, at 9,619 ns
/// (rank 1, which takes its message, at 9,620). Rounding each gap to 10 ns ended them at
/// 10,020 through GOAL (a real collectives trace 0.6% long); carried, they agree to 1 ns.
#[test]
fn goal_carries_the_fractions_of_gaps() {
    let mut rank0 = String::from("0 MPI_Init 0 100\n");
    for i in 0..1000 {
        let t = 110 + 10 * i;
        rank0 += &format!("0 MPI_Send {t} {t} bytes=8 peer=-2 tag=1\n");
    }
    let t = "loggps-trace 1\nranks 2\n\
        rank 0 host \"vm\" offset 0 0 own 0.4 inside 0\n\
        rank 1 host \"vm\" offset 0 0 own 0 inside 0\n";
    let t = format!(
        "{t}{rank0}0 MPI_Send 10110 10110 bytes=8 peer=1 tag=2\n0 MPI_Finalize 10120 10120\n\
         1 MPI_Init 0 100\n1 MPI_Recv 110 10200 bytes=8 peer=0 tag=2\n1 MPI_Finalize 10210 10210\n"
    );
    let (dir, f) = common::text_trace("fractions.txt", &t);
    let g = dir.path().join("fractions.goal");
    let g = g.to_str().unwrap();
    let out = run(&["convert", &f, g]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let zero = [
        "--model", "loggp", "--L", "0", "--o", "0", "--g", "0", "--G", "0",
    ];
    let a = ends_ns(&[&[f.as_str()], &zero[..]].concat());
    let b = ends_ns(&[&[g], &zero[..]].concat());
    assert_eq!(a, [9619, 9620]);
    assert!(
        a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1),
        "{a:?} {b:?}"
    );
}

/// Every public sample of every format (fixtures/imported/) written as GOAL and read back
/// predicts what it predicts itself under LogGP with every parameter 0, where the replay's
/// collectives and their GOAL messages cost alike (nothing) and the computation, polls and
/// probes are all that remain: Score-P's sample was 3.6% off when a Wait that completed nothing
/// was written as a failed poll's time.
#[test]
fn every_sample_through_goal_keeps_its_computation() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("sample.goal");
    let g = g.to_str().unwrap();
    let zero = [
        "--model", "loggp", "--L", "0", "--o", "0", "--g", "0", "--G", "0",
    ];
    let samples = [
        "dumpi/testbgp",
        "dumpi/testtrace",
        "otf2/scorep-10",
        "paraver/qsort_beo3.prv",
        "allprof/simple",
        "allprof/sphot",
        "allprof/vladimir",
        "tit/actions_with_isend.txt",
        "tit/actions_waitall.txt",
        "tit/actions_reducescatter.txt",
        "goal/schedule.goal",
    ];
    for sample in samples {
        let f = imported(sample);
        let out = run(&["convert", &f, g, "--force"]);
        assert!(
            out.status.success(),
            "{sample}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let a = ends_ns(&[&[f.as_str()], &zero[..]].concat());
        let b = ends_ns(&[&[g], &zero[..]].concat());
        assert_eq!(a, b, "{sample}");
    }
}

#[test]
fn what_is_not_a_trace_is_refused_saying_where() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let err = stderr(&[d, "--platform", "myrinet"]);
    assert!(
        err.contains("is a directory") || err.contains("directory that holds no trace"),
        "{err}"
    );
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "0 init\n1 init\n0 frobnicate 3\n").unwrap();
    let err = stderr(&[bad.to_str().unwrap(), "--platform", "myrinet"]);
    assert!(
        err.contains("line 3") && err.contains("frobnicate"),
        "{err}"
    );
    let goal = dir.path().join("bad.goal");
    std::fs::write(
        &goal,
        "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\nl1 requires l9\n}\n",
    )
    .unwrap();
    let err = stderr(&[goal.to_str().unwrap(), "--platform", "myrinet"]);
    assert!(err.contains("line 4") && err.contains("l9"), "{err}");
    // Our trace read as another format is refused by that format's reader.
    let ours = fixture("sites.txt");
    let out = run(&[
        ours.to_str().unwrap(),
        "--from",
        "goal",
        "--platform",
        "myrinet",
    ]);
    assert!(!out.status.success());
    let out = run(&[ours.to_str().unwrap(), "--from", "nope"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("allprof"));
}

/// SST's DUMPI sample (sst-dumpi tests/traces, 4 ranks) against its own `dumpi2ascii` text of
/// rank 0 (testtrace-0000.txt): the same calls, wall times to the ns from rank 0's `MPI_Init`,
/// bytes from the file's datatype table (`MPI_INT` 4 B), peers and tags; found from the
/// `.meta`, rank 0's file or the directory alike.
#[test]
fn a_dumpi_trace_reads_as_dumpi2ascii_prints_it() {
    let dir = imported("dumpi/testtrace");
    let ascii = std::fs::read_to_string(format!("{dir}/testtrace-0000.txt")).unwrap();
    let walltime = |routine: &str, what: &str| -> u64 {
        let line = ascii
            .lines()
            .find(|l| l.starts_with(&format!("{routine} {what} at walltime")))
            .unwrap();
        let t = line
            .split_whitespace()
            .nth(4)
            .unwrap()
            .trim_end_matches(',');
        let (s, ns) = t.split_once('.').unwrap();
        s.parse::<u64>().unwrap() * 1_000_000_000 + ns.parse::<u64>().unwrap()
    };
    let t0 = walltime("MPI_Init", "entering");
    let tmp = tempfile::tempdir().unwrap();
    let text = tmp.path().join("t.txt");
    for from in [
        format!("{dir}/testtrace.meta"),
        format!("{dir}/testtrace-0000.bin"),
        dir.clone(),
    ] {
        let out = run(&["convert", &from, text.to_str().unwrap(), "--force"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ours = std::fs::read_to_string(&text).unwrap();
        let rank0: Vec<&str> = ours.lines().filter(|l| l.starts_with("0 MPI_")).collect();
        let names: Vec<&str> = rank0.iter().map(|l| l.split(' ').nth(1).unwrap()).collect();
        // dumpi2ascii's calls but MPI_Comm_rank and MPI_Comm_size, which the model does not cost.
        let theirs: Vec<&str> = ascii
            .lines()
            .filter(|l| l.contains(" entering at walltime"))
            .map(|l| l.split(' ').next().unwrap())
            .filter(|n| !n.starts_with("MPI_Comm_"))
            .collect();
        assert_eq!(names, theirs);
        for l in &rank0 {
            let w: Vec<&str> = l.split(' ').collect();
            assert_eq!(
                w[2].parse::<u64>().unwrap(),
                walltime(w[1], "entering") - t0,
                "{l}"
            );
            assert_eq!(
                w[3].parse::<u64>().unwrap(),
                walltime(w[1], "returning") - t0,
                "{l}"
            );
        }
        let isend = rank0.iter().find(|l| l.contains("MPI_Isend")).unwrap();
        assert!(
            isend.ends_with("bytes=4 peer=1 tag=1337 comm=0 req=0"),
            "{isend}"
        );
        let recv = rank0.iter().find(|l| l.contains("MPI_Recv")).unwrap();
        assert!(recv.ends_with("bytes=4 peer=3 tag=1337 comm=0"), "{recv}");
    }
    assert!(run(&[&dir, "--platform", "myrinet"]).status.success());
}

/// sst-macro's DUMPI sample (7 ranks, most traffic on a communicator made by MPI_Comm_create of
/// an MPI_Group_incl): every call the files' own footers count (read here from each file's
/// index) is an event or a counted skip, and every message finds its receive.
#[test]
fn a_dumpi_trace_keeps_every_call_its_footer_counts() {
    let dir = imported("dumpi/testbgp");
    let mut footer = std::collections::BTreeMap::<usize, u64>::new();
    for r in 0..7 {
        let d = std::fs::read(format!("{dir}/testbgp-000{r}.bin")).unwrap();
        let u64_at = |i: usize| u64::from_be_bytes(d[i..i + 8].try_into().unwrap());
        // The index's 8 offsets end the file; the footer's is the 7th.
        let f = u64_at(d.len() - 64 + 48) as usize;
        assert_eq!(u64_at(f), 0xf007_fee7);
        for id in 0..290 {
            let at = f + 8 + 4 * id;
            let n = u32::from_be_bytes(d[at..at + 4].try_into().unwrap()) as u64;
            if n > 0 {
                *footer.entry(id).or_default() += n;
            }
        }
    }
    // DUMPI's function ids (sst-dumpi funclabels.h).
    let modeled = [
        (8, "MPI_Isend"),
        (12, "MPI_Irecv"),
        (18, "MPI_Waitall"),
        (52, "MPI_Barrier"),
        (60, "MPI_Alltoall"),
        (124, "MPI_Init"),
        (125, "MPI_Finalize"),
    ];
    let v = json(&["info", &dir, "--format", "json"]);
    for (id, name) in modeled {
        assert_eq!(v["events_by_routine"][name], footer[&id], "{name}");
    }
    let err = stderr(&[&dir, "--platform", "myrinet"]);
    let skipped = [
        (72, "MPI_Comm_group"),
        (76, "MPI_Group_incl"),
        (81, "MPI_Comm_size"),
        (82, "MPI_Comm_rank"),
        (85, "MPI_Comm_create"),
    ];
    for (id, name) in skipped {
        assert!(
            err.contains(&format!("{name} ×{}", footer[&id])),
            "{name}: {err}"
        );
    }
    assert_eq!(footer.len(), modeled.len() + skipped.len());
    assert!(!err.contains("no matching"), "{err}");
    assert_eq!(v["messages"], 588);
    // `info`'s size is the trace's files': the .meta and every rank's.
    let all: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert_eq!(v["file_bytes"], all);
}

/// The same sample with each file's footer saying that no call creates a communicator (a
/// footer the reader would skip the first pass for): the calls that do are met in the second
/// pass, and the trace is read again whole, as it reads with its own footers.
#[test]
fn a_dumpi_footer_that_misses_a_communicator_costs_nothing() {
    let dir = imported("dumpi/testbgp");
    let copy = std::env::temp_dir().join(format!("loggps-dumpi-footer-{}", std::process::id()));
    std::fs::create_dir_all(&copy).unwrap();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let mut d = std::fs::read(&path).unwrap();
        if path.extension().is_some_and(|x| x == "bin") {
            let f = u64::from_be_bytes(d[d.len() - 16..d.len() - 8].try_into().unwrap()) as usize;
            // MPI_Comm_group, MPI_Group_incl, MPI_Group_excl, MPI_Comm_dup, _create, _split.
            for id in [72, 76, 77, 84, 85, 86] {
                d[f + 8 + 4 * id..f + 12 + 4 * id].fill(0);
            }
        }
        std::fs::write(copy.join(path.file_name().unwrap()), d).unwrap();
    }
    let copy = copy.to_str().unwrap();
    let (theirs, ours) = (
        json(&["info", &dir, "--format", "json"]),
        json(&["info", copy, "--format", "json"]),
    );
    std::fs::remove_dir_all(copy).unwrap();
    assert_eq!(ours["events_by_routine"], theirs["events_by_routine"]);
    assert_eq!(ours["messages"], 588);
}

/// paraver-kernel's `qsort_beo3.prv` (MPItrace, 2004; 4 tasks): an old MPICH built its
/// collectives from sends it traced, nested inside them, and wrote no end between a Reduce and
/// the Bcast after it. Counted here from the file's lines, independently of the reader: each
/// task has a Reduce, a Bcast and an Allreduce on each communicator it belongs to (`c:` lines:
/// task 1 on 91; task 2 on 91, 94; tasks 3, 4 on 91, 94, 96: 9 each); the program's own
/// messages are the communication records of tags 0 and 1 (tags 2 and 11 are MPICH's
/// collectives'), each a Send and a Recv. Measured: from MPI_Init's return (11583 µs) to the
/// last MPI_Finalize's call (251007 µs).
#[test]
fn a_paraver_trace_keeps_every_call_and_message() {
    let prv = imported("paraver/qsort_beo3.prv");
    let text = std::fs::read_to_string(&prv).unwrap();
    let own: Vec<u64> = text
        .lines()
        .filter(|l| l.starts_with("3:"))
        .map(|l| {
            l.split(':')
                .map(|f| f.parse::<u64>().unwrap())
                .collect::<Vec<_>>()
        })
        .filter(|f| f[14] <= 1)
        .map(|f| f[13])
        .collect();
    assert_eq!(own.len(), 9);
    let v = json(&["info", &prv, "--format", "json"]);
    for (routine, n) in [
        ("MPI_Init", 4),
        ("MPI_Finalize", 4),
        ("MPI_Reduce", 9),
        ("MPI_Bcast", 9),
        ("MPI_Allreduce", 9),
        ("MPI_Send", own.len()),
        ("MPI_Recv", own.len()),
    ] {
        assert_eq!(v["events_by_routine"][routine], n as u64, "{routine}: {v}");
    }
    assert_eq!(v["events"], 53);
    assert_eq!(v["messages"], 9, "{v}");
    assert_eq!(v["message_bytes"], own.iter().sum::<u64>(), "{v}");
    let err = stderr(&["info", &prv]);
    assert!(
        err.contains("75 MPI calls made inside another") && err.contains("24 messages"),
        "{err}"
    );
    // Tasks 3 and 4 send each other 116,776 and 99,596 bytes before either receives: the
    // program relied on MPICH's buffering; under rendezvous it deadlocks.
    let err = stderr(&[&prv, "--platform", "myrinet"]);
    assert!(
        err.contains("deadlock") && err.contains("116776 bytes to rank 3"),
        "{err}"
    );
    let v = json(&[
        &prv,
        "--platform",
        "myrinet",
        "--S",
        "1000000",
        "--format",
        "json",
    ]);
    assert!(
        (v["measured_s"].as_f64().unwrap() - 0.239424).abs() < 1e-9,
        "{v}"
    );
    assert_eq!(v["ranks"].as_array().unwrap().len(), 4);
}

/// A `.prv` as today's Extrae writes one (ns, each call's end a 0, a collective's sizes, root
/// and communicator as events 50100001–4, the root flagged at the root alone), with and without
/// its `.pcf`, predicts exactly what the same program written by hand in our format does:
/// rank 0 Isends 4096 B (tag 7) and Irecvs 100 B (tag 8), then Waitall; rank 1 Recvs, then
/// Sends; a 1024-B Bcast from rank 1; each rank's calls at the same times in both.
#[test]
fn an_extrae_trace_predicts_as_the_same_program_in_our_format() {
    let prv = "#Paraver (29/11/26 at 21:00):20000_ns:1(2):1:2(1:1,1:1),1
c:1:1:2:1:2
2:1:1:1:1:0:50000003:31
2:2:1:2:1:0:50000003:31
2:1:1:1:1:1000:50000003:0
2:2:1:2:1:1000:50000003:0
2:1:1:1:1:2000:50000001:3
2:2:1:2:1:2000:50000001:2
3:1:1:1:1:2000:2000:2:1:2:1:2000:6000:4096:7
2:1:1:1:1:2100:50000001:0
1:1:1:1:1:2100:2200:1
2:1:1:1:1:2200:50000001:4
2:1:1:1:1:2300:50000001:0
2:1:1:1:1:5000:50000001:6
2:2:1:2:1:6000:50000001:0
2:2:1:2:1:6100:50000001:1
3:2:1:2:1:6100:6100:1:1:1:1:2200:8900:100:8
2:2:1:2:1:6500:50000001:0
2:1:1:1:1:9000:50000001:0
2:1:1:1:1:10000:50000002:7:50100001:0:50100002:1024:50100004:1
2:2:1:2:1:10000:50000002:7:50100001:1024:50100002:0:50100003:1:50100004:1:70000001:3
2:2:1:2:1:11000:50000002:0
2:1:1:1:1:12000:50000002:0
2:1:1:1:1:13000:50000003:32
2:2:1:2:1:13000:50000003:32
2:1:1:1:1:13500:50000003:0
2:2:1:2:1:13500:50000003:0
";
    let pcf = "EVENT_TYPE\n9   50000001    MPI Point-to-point\nVALUES\n1   MPI_Send\n2   MPI_Recv\n\
               3   MPI_Isend\n4   MPI_Irecv\n6   MPI_Waitall\n0   End\n\n\
               EVENT_TYPE\n9   50000002    MPI Collective Comm\nVALUES\n7   MPI_Bcast\n0   End\n\n\
               EVENT_TYPE\n9   50000003    MPI Other\nVALUES\n31   MPI_Init\n32   MPI_Finalize\n0   End\n";
    let ours = "loggps-trace 1
ranks 2
0 MPI_Init 0 1000
0 MPI_Isend 2000 2100 bytes=4096 peer=1 tag=7 req=0
0 MPI_Irecv 2200 2300 bytes=100 peer=1 tag=8 req=1
0 MPI_Waitall 5000 9000 done=0:-1:-1,1:1:8
0 MPI_Bcast 10000 12000 root=1 bytes=0 recv_bytes=1024
0 MPI_Finalize 13000 13500
1 MPI_Init 0 1000
1 MPI_Recv 2000 6000 bytes=4096 peer=0 tag=7
1 MPI_Send 6100 6500 bytes=100 peer=0 tag=8
1 MPI_Bcast 10000 11000 root=1 bytes=1024
1 MPI_Finalize 13000 13500
";
    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    std::fs::write(path("ours.txt"), ours).unwrap();
    std::fs::write(path("bare.prv"), prv).unwrap();
    std::fs::write(path("named.prv"), prv).unwrap();
    std::fs::write(path("named.pcf"), pcf).unwrap();
    let want = ends_ns(&[&path("ours.txt"), "--platform", "myrinet"]);
    assert!(want[0] > 13000, "{want:?}");
    for f in ["bare.prv", "named.prv"] {
        assert_eq!(ends_ns(&[&path(f), "--platform", "myrinet"]), want, "{f}");
        let v = json(&["info", &path(f), "--format", "json"]);
        assert_eq!(v["events"], 11, "{f}: {v}");
    }
    assert!(stderr(&["info", &path("bare.prv")]).contains("no .pcf beside it"));
    assert!(!stderr(&["info", &path("named.prv")]).contains("no .pcf"));
}

/// Extrae's caller events (70000001 the function, 80000001 the line, valued by the `.pcf`'s
/// labels, shortened ones with the whole in brackets, `Unresolved` no name) name each call's site:
/// `callsites` of fixtures/extrae/callers.prv gives what the same program written by hand in our
/// text format with those sites (fixtures/named-sites.txt) gives, and so do its conversions to
/// our binary and text.
#[test]
fn extraes_caller_events_name_the_call_sites() {
    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    std::fs::copy(fixture("named-sites.txt"), path("ours.txt")).unwrap();
    std::fs::copy(fixture("extrae/callers.prv"), path("calls.prv")).unwrap();
    std::fs::copy(fixture("extrae/callers.pcf"), path("calls.pcf")).unwrap();
    let sites = |f: &str| {
        let v = json(&[
            "callsites",
            &path(f),
            "--platform",
            "myrinet",
            "--format",
            "json",
        ]);
        assert_eq!(
            v["unknown_calls"], 4,
            "{f}: Init and Finalize have no site: {v}"
        );
        v["sites"].clone()
    };
    let want = sites("ours.txt");
    let names: Vec<&str> = (want.as_array().unwrap().iter())
        .map(|s| s["site"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 4, "{want}");
    for n in [
        "main ping.c:10",
        "main ping.c:11",
        "pong_reply_loop pong.c:20",
        "pong_reply_loop pong_long_name.c:21",
    ] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    assert_eq!(sites("calls.prv"), want);
    for to in ["calls.bin", "calls.txt"] {
        run(&["convert", &path("calls.prv"), &path(to)]);
        assert_eq!(sites(to), want, "{to}");
    }
}

/// Extrae's nonblocking collectives (values 154–171 of its encoding, named without a `.pcf`)
/// are read as the blocking twin's sizes and root with a request, completed as an MPI_Isend is
/// (the next Wait that completes no receive): an MPI_Ibcast of 1024 B from rank 0 and an
/// MPI_Iallreduce of 64 B, each waited for, predict what the same program written by hand in
/// our format does.
#[test]
fn extraes_nonblocking_collectives_complete_in_their_waits() {
    let prv = "#Paraver (30/11/26 at 10:00):20000_ns:1(2):1:2(1:1,1:1),1
c:1:1:2:1:2
2:1:1:1:1:0:50000003:31
2:2:1:2:1:0:50000003:31
2:1:1:1:1:1000:50000003:0
2:2:1:2:1:1000:50000003:0
2:1:1:1:1:2000:50000002:157:50100001:1024:50100002:0:50100003:1:50100004:1
2:2:1:2:1:2000:50000002:157:50100001:0:50100002:1024:50100004:1
2:1:1:1:1:2100:50000002:0
2:2:1:2:1:2050:50000002:0
2:1:1:1:1:3000:50000001:5
2:2:1:2:1:2500:50000001:5
2:1:1:1:1:5000:50000001:0
2:2:1:2:1:6000:50000001:0
2:1:1:1:1:7000:50000002:155:50100001:64:50100002:64:50100004:1
2:2:1:2:1:7000:50000002:155:50100001:64:50100002:64:50100004:1
2:1:1:1:1:7100:50000002:0
2:2:1:2:1:7100:50000002:0
2:1:1:1:1:8000:50000001:5
2:2:1:2:1:8000:50000001:5
2:1:1:1:1:9000:50000001:0
2:2:1:2:1:9000:50000001:0
2:1:1:1:1:13000:50000003:32
2:2:1:2:1:13000:50000003:32
2:1:1:1:1:13500:50000003:0
2:2:1:2:1:13500:50000003:0
";
    let ours = "loggps-trace 1
ranks 2
0 MPI_Init 0 1000
0 MPI_Ibcast 2000 2100 root=0 bytes=1024 req=0
0 MPI_Wait 3000 5000 done=0:-1:-1
0 MPI_Iallreduce 7000 7100 bytes=64 recv_bytes=64 req=1
0 MPI_Wait 8000 9000 done=1:-1:-1
0 MPI_Finalize 13000 13500
1 MPI_Init 0 1000
1 MPI_Ibcast 2000 2050 root=0 recv_bytes=1024 req=0
1 MPI_Wait 2500 6000 done=0:-1:-1
1 MPI_Iallreduce 7000 7100 bytes=64 recv_bytes=64 req=1
1 MPI_Wait 8000 9000 done=1:-1:-1
1 MPI_Finalize 13000 13500
";
    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    std::fs::write(path("ours.txt"), ours).unwrap();
    std::fs::write(path("nbc.prv"), prv).unwrap();
    for platform in ["myrinet", "fast-ethernet"] {
        let want = ends_ns(&[&path("ours.txt"), "--platform", platform]);
        assert!(want[0] > 13000, "{want:?}");
        assert_eq!(
            ends_ns(&[&path("nbc.prv"), "--platform", platform]),
            want,
            "{platform}"
        );
    }
    let v = json(&["info", &path("nbc.prv"), "--format", "json"]);
    assert_eq!(v["events"], 12, "{v}");
}

/// `otf2-print`'s lines (Debian's otf2-tools: the OTF2 library's own printer) of the archive
/// at `anchor`, `-G` for its global definitions.
fn otf2_print(args: &[&str]) -> String {
    let out = std::process::Command::new("otf2-print")
        .args(args)
        .output()
        .expect("otf2-print runs (apt-get install otf2-tools)");
    assert!(out.status.success(), "{args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Score-P's 10-rank sample (sst-macro's tests/otf2_test_traces): every call and message the
/// library's own printer shows, counted from its lines, not by our reader.
#[test]
fn an_otf2_archive_keeps_every_call_otf2_print_shows() {
    let anchor = imported("otf2/scorep-10/traces.otf2");
    let events = otf2_print(&[&anchor]);
    let rows: Vec<Vec<&str>> = (events.lines())
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|f| f.len() > 3)
        .collect();
    let mut entered: std::collections::BTreeMap<String, u64> = Default::default();
    for f in rows.iter().filter(|f| f[0] == "ENTER") {
        *entered
            .entry(f[4].trim_matches('"').to_string())
            .or_default() += 1;
    }
    let field = |f: &Vec<&str>, key: &str| -> u64 {
        let i = f.iter().position(|w| *w == key).unwrap();
        f[i + 1].trim_end_matches(',').parse().unwrap()
    };
    let isends: Vec<u64> = (rows.iter())
        .filter(|f| f[0] == "MPI_ISEND")
        .map(|f| field(f, "Length:"))
        .collect();
    assert_eq!((entered["MPI_Isend"], isends.len()), (1440, 1440));
    let v = json(&["info", &anchor, "--format", "json"]);
    let modeled = [
        "MPI_Init",
        "MPI_Finalize",
        "MPI_Isend",
        "MPI_Irecv",
        "MPI_Wait",
        "MPI_Waitall",
        "MPI_Bcast",
        "MPI_Reduce",
        "MPI_Gather",
        "MPI_Scatter",
        "MPI_Allgather",
        "MPI_Alltoall",
        "MPI_Allreduce",
    ];
    for r in modeled {
        assert_eq!(v["events_by_routine"][r], entered[r], "{r}: {v}");
    }
    assert_eq!(v["messages"], 1440);
    assert_eq!(v["message_bytes"], isends.iter().sum::<u64>(), "{v}");
    // Every other routine left out, by its count in the printer's lines (Score-P 2 recorded
    // no sizes for nonblocking collectives).
    let err = stderr(&["info", &anchor]);
    for (r, n) in &entered {
        if !modeled.contains(&r.as_str()) {
            // `MPI_Comm_rank ×110`, `MPI_Iallgather with no message record ×360`
            let at = err.find(&format!("{r} ")).expect(r);
            let count = err[at..].split('×').nth(1).unwrap();
            assert!(
                count.starts_with(&format!("{n},")) || count.starts_with(&format!("{n}\n")),
                "{r} ×{n}: {err}"
            );
        }
    }
    // Measured: the first return from MPI_Init to the last MPI_Finalize call, in the clock's
    // ticks a second (`otf2-print -G`).
    let defs = otf2_print(&["-G", &anchor]);
    let ticks: f64 = (defs.lines())
        .find_map(|l| l.split("Ticks per Seconds: ").nth(1))
        .and_then(|t| t.split(',').next())
        .unwrap()
        .parse()
        .unwrap();
    let time = |kind: &str, region: &str| -> Vec<u64> {
        (rows.iter())
            .filter(|f| f[0] == kind && f[4] == region)
            .map(|f| f[2].parse::<u64>().unwrap())
            .collect()
    };
    let begin = *time("LEAVE", "\"MPI_Init\"").iter().min().unwrap();
    let end = *time("ENTER", "\"MPI_Finalize\"").iter().max().unwrap();
    let v = json(&[&anchor, "--platform", "myrinet", "--format", "json"]);
    let measured = (end - begin) as f64 / ticks;
    assert!(
        (v["measured_s"].as_f64().unwrap() - measured).abs() < 1e-9,
        "{measured} {v}"
    );
    // The archive's directory reads as its anchor does.
    let dir = imported("otf2/scorep-10");
    let same = json(&[&dir, "--platform", "myrinet", "--format", "json"]);
    assert_eq!(same["predicted_s"], v["predicted_s"]);
    // Without the library, the error says how to have it.
    let out = common::bin()
        .args(["info", &anchor])
        .env("LOGGPS_OTF2_LIB", "/nonexistent/libotf2.so")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("apt-get install"),
        "{err}"
    );
}

/// A python3 that has the OTF2 binding (Debian's python3-otf2 is the system python's).
fn python_with_otf2() -> &'static str {
    ["python3", "/usr/bin/python3"]
        .into_iter()
        .find(|p| {
            std::process::Command::new(p)
                .args(["-c", "import otf2"])
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .expect("a python3 with the OTF2 binding (apt-get install python3-otf2)")
}

/// The anchor of the archive that `script` (OTF2's Python binding) writes at `dir`.
fn otf2_archive(script: &str, dir: &str) -> String {
    let py = format!("{dir}.py");
    std::fs::write(&py, script).unwrap();
    let st = std::process::Command::new(python_with_otf2())
        .args([&py, dir])
        .status()
        .unwrap();
    assert!(st.success(), "{py}");
    format!("{dir}/traces.otf2")
}

/// An archive written by OTF2's own Python binding predicts exactly what the same program
/// written by hand in our format does: rank 0 Isends 4096 B (tag 7) and Irecvs 100 B (tag 8),
/// then Waitall; rank 1 Recvs, then Sends; a 1024-B Bcast on a communicator whose ranks are the
/// world's reversed, rooted at its rank 0 (world rank 1); a 64-B Allreduce. Rank 1's location is
/// defined first (ranks come from the MPI locations group), the hosts are two nodes, and the
/// byte totals are Score-P's (a Bcast's root sent 2 × 1024, an Allreduce 2 × 64 each way).
#[test]
fn an_otf2_archive_written_by_its_python_binding_predicts_as_our_format() {
    let script = r#"
import sys, otf2
from otf2.enums import Paradigm, GroupType, CollectiveOp
with otf2.writer.open(sys.argv[1], timer_resolution=1_000_000_000) as trace:
    d = trace.definitions
    machine = d.system_tree_node("machine")
    hosts = [d.system_tree_node(n, parent=machine) for n in ("nodeA", "nodeB")]
    groups = [d.location_group("MPI Rank %d" % r, system_tree_parent=hosts[r]) for r in (1, 0)][::-1]
    locs = [d.location("Master thread", group=groups[r]) for r in (1, 0)][::-1]
    d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
    group = lambda m: d.group("", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=m)
    world = d.comm("MPI_COMM_WORLD", group=group([0, 1]))
    rev = d.comm("reversed", group=group([1, 0]), parent=world)
    reg = {n: d.region("MPI_" + n, paradigm=Paradigm.MPI) for n in
           "Init Isend Irecv Waitall Recv Send Bcast Allreduce Comm_rank Finalize".split()}
    def call(w, name, t0, t1, *inner):
        w.enter(t0, reg[name])
        for f, args in inner:
            getattr(w, f)(t0, *args)
        w.leave(t1, reg[name])
    none = 0xFFFFFFFF
    w0, w1 = (trace.event_writer_from_location(l) for l in locs)
    call(w0, "Init", 0, 1000)
    call(w0, "Comm_rank", 1500, 1600)
    call(w0, "Isend", 2000, 2100, ("mpi_isend", (1, world, 7, 4096, 1)))
    call(w0, "Irecv", 2200, 2300, ("mpi_irecv_request", (2,)))
    call(w0, "Waitall", 5000, 9000, ("mpi_isend_complete", (1,)), ("mpi_irecv", (1, world, 8, 100, 2)))
    call(w0, "Bcast", 10000, 12000, ("mpi_collective_begin", ()),
         ("mpi_collective_end", (CollectiveOp.BCAST, rev, 0, 0, 1024)))
    call(w0, "Allreduce", 12100, 12600, ("mpi_collective_begin", ()),
         ("mpi_collective_end", (CollectiveOp.ALLREDUCE, world, none, 128, 128)))
    call(w0, "Finalize", 13000, 13500)
    call(w1, "Init", 0, 1000)
    call(w1, "Recv", 2000, 6000, ("mpi_recv", (0, world, 7, 4096)))
    call(w1, "Send", 6100, 6500, ("mpi_send", (0, world, 8, 100)))
    call(w1, "Bcast", 10000, 11000, ("mpi_collective_begin", ()),
         ("mpi_collective_end", (CollectiveOp.BCAST, rev, 0, 2048, 1024)))
    call(w1, "Allreduce", 12100, 12600, ("mpi_collective_begin", ()),
         ("mpi_collective_end", (CollectiveOp.ALLREDUCE, world, none, 128, 128)))
    call(w1, "Finalize", 13000, 13500)
"#;
    let ours = "loggps-trace 1
ranks 2
comm 1 members 1,0
0 MPI_Init 0 1000
0 MPI_Isend 2000 2100 bytes=4096 peer=1 tag=7 req=0
0 MPI_Irecv 2200 2300 bytes=100 peer=1 tag=8 req=1
0 MPI_Waitall 5000 9000 done=0:-1:-1,1:1:8
0 MPI_Bcast 10000 12000 root=1 comm=1 bytes=0 recv_bytes=1024
0 MPI_Allreduce 12100 12600 bytes=64 recv_bytes=64
0 MPI_Finalize 13000 13500
1 MPI_Init 0 1000
1 MPI_Recv 2000 6000 bytes=4096 peer=0 tag=7
1 MPI_Send 6100 6500 bytes=100 peer=0 tag=8
1 MPI_Bcast 10000 11000 root=1 comm=1 bytes=1024
1 MPI_Allreduce 12100 12600 bytes=64 recv_bytes=64
1 MPI_Finalize 13000 13500
";
    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    std::fs::write(path("ours.txt"), ours).unwrap();
    let anchor = otf2_archive(script, &path("archive"));
    for platform in ["myrinet", "fast-ethernet"] {
        let want = ends_ns(&[&path("ours.txt"), "--platform", platform]);
        assert!(want[0] > 13000, "{want:?}");
        assert_eq!(
            ends_ns(&[&anchor, "--platform", platform]),
            want,
            "{platform}"
        );
    }
    let v = json(&["info", &anchor, "--format", "json"]);
    assert_eq!(v["events"], 13, "{v}");
    let table = String::from_utf8(run(&["info", &anchor]).stdout).unwrap();
    assert!(table.contains("nodeA, nodeB"), "{table}");
    assert!(stderr(&["info", &anchor]).contains("MPI_Comm_rank ×1"));
    // Converted to our binary trace, it predicts the same again.
    let bin = path("archive.lgt");
    assert!(run(&["convert", &anchor, &bin]).status.success());
    assert_eq!(
        ends_ns(&[&bin, "--platform", "myrinet"]),
        ends_ns(&[&path("ours.txt"), "--platform", "myrinet"])
    );
}

/// Score-P names where a call was made in two ways, both read: the program's region entered
/// around it (compiler instrumentation: the function and its first line), and with unwinding
/// a calling context whose parent is the function and the line it called from. An archive
/// written by OTF2's Python binding with one of each gives, in `callsites`, what the same
/// program written by hand in our text format with those sites gives, and so does its
/// conversion to our binary.
#[test]
fn score_ps_regions_and_calling_contexts_name_the_call_sites() {
    let script = r#"
import sys, otf2
from otf2.enums import Paradigm, GroupType
with otf2.writer.open(sys.argv[1], timer_resolution=1_000_000_000) as trace:
    d = trace.definitions
    node = d.system_tree_node("node")
    locs = [d.location("Master thread", group=d.location_group("MPI Rank %d" % r,
            system_tree_parent=node)) for r in (0, 1)]
    d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
    world = d.comm("MPI_COMM_WORLD", group=d.group("", group_type=GroupType.COMM_GROUP,
                   paradigm=Paradigm.MPI, members=[0, 1]))
    reg = {n: d.region("MPI_" + n, paradigm=Paradigm.MPI) for n in "Init Send Recv Finalize".split()}
    exchange = d.region("exchange", source_file="halo.c", begin_line_number=40, paradigm=Paradigm.USER)
    main = d.region("main", source_file="main.c", begin_line_number=3, paradigm=Paradigm.USER)
    cc_main = d.calling_context(main, d.source_code_location("main.c", 12), parent=None)
    cc_recv = d.calling_context(reg["Recv"], d.source_code_location("mpi", 0), parent=cc_main)
    w0, w1 = (trace.event_writer_from_location(l) for l in locs)
    for w in (w0, w1):
        w.enter(0, reg["Init"]); w.leave(1000, reg["Init"])
    w0.enter(1500, exchange)
    w0.enter(2000, reg["Send"]); w0.mpi_send(2000, 1, world, 7, 4096); w0.leave(2100, reg["Send"])
    w0.leave(2500, exchange)
    w1.calling_context_enter(2000, cc_recv, 2)
    w1.mpi_recv(5000, 0, world, 7, 4096)
    w1.calling_context_leave(6000, cc_recv)
    for w in (w0, w1):
        w.enter(13000, reg["Finalize"]); w.leave(13500, reg["Finalize"])
"#;
    let ours = r#"loggps-trace 1
ranks 2
named 0 40 "exchange" "halo.c"
sites 0 0x0
named 1 12 "main" "main.c"
sites 1 0x0
0 MPI_Init 0 1000
0 MPI_Send 2000 2100 bytes=4096 peer=1 tag=7 site=0
0 MPI_Finalize 13000 13500
1 MPI_Init 0 1000
1 MPI_Recv 2000 6000 bytes=4096 peer=0 tag=7 site=0
1 MPI_Finalize 13000 13500
"#;
    let dir = tempfile::tempdir().unwrap();
    let path = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    std::fs::write(path("ours.txt"), ours).unwrap();
    let anchor = otf2_archive(script, &path("archive"));
    let sites = |f: &str| {
        let v = json(&["callsites", f, "--platform", "myrinet", "--format", "json"]);
        assert_eq!(
            v["unknown_calls"], 4,
            "{f}: Init and Finalize have no site: {v}"
        );
        v["sites"].clone()
    };
    let want = sites(&path("ours.txt"));
    let names: Vec<&str> = (want.as_array().unwrap().iter())
        .map(|s| s["site"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["main main.c:12", "exchange halo.c:40"], "{want}");
    assert_eq!(sites(&anchor), want);
    assert!(
        run(&["convert", &anchor, &path("archive.bin")])
            .status
            .success()
    );
    assert_eq!(sites(&path("archive.bin")), want);
}
