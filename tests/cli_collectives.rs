//! Collectives: the calculator (`collective`), traced collectives costed by their algorithm
//! (`--coll`, `--gamma`), and collectives too large to model or costed by a rule.

mod common;

use common::{
    UNMODELED_RING, assert_close, bcast4, coll_trace, json, myrinet, predicted_ns, rank_ns, run,
    synthesized, text_trace,
};
use serde_json::Value;
use std::path::Path;

/// The collective calculator through the CLI reproduces the LogGP paper's Table 3 (P = 1024,
/// o = 0, G = 1): a few cells of each row.
#[test]
fn collective_calculator_reproduces_loggp_table3() {
    let cells = [
        ("short-message", 10, 10, 30, 102_320.0),
        ("linear", 10, 100, 300, 111_707.0),
        ("binomial", 100, 10, 30, 102_590.0),
        ("optimal", 1, 100, 300, 2_860.0),
        ("optimal", 100, 10, 30, 102_419.0),
    ];
    for (algo, k, g, l, expected) in cells {
        let args = [
            "collective",
            "scatter",
            "--algorithm",
            algo,
            "--ranks",
            "1024",
            "--bytes",
            &k.to_string(),
            "--model",
            "loggp",
        ];
        let extra = [
            "--o",
            "0",
            "--G",
            "1",
            "--g",
            &g.to_string(),
            "--L",
            &l.to_string(),
            "--format",
            "json",
        ];
        let v = json(&[&args[..], &extra[..]].concat());
        assert_eq!(
            v["predicted_ns"].as_f64().unwrap(),
            expected,
            "{algo} k={k} g={g} L={l}"
        );
    }
    let out = run(&[
        "collective",
        "scatter",
        "--algorithm",
        "nope",
        "--ranks",
        "4",
        "--bytes",
        "1",
        "--model",
        "loggp",
        "--L",
        "1",
        "--o",
        "0",
        "--g",
        "1",
        "--G",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("binomial"),
        "lists the valid algorithms"
    );
}

/// `--coll`: a traced Bcast costed by its algorithm. Four ranks call it at once with 1000 bytes
/// (Myrinet): binomial takes two one-way hops, 2 × (T1 + T2 + T3) = 2 × 39 170 ns; a pipelined
/// chain three; measured keeps the traced 10 ns.
#[test]
fn traced_collectives_by_algorithm() {
    let (_d, f) = text_trace("bcast.txt", &bcast4());
    let f = f.as_str();
    let predicted = |coll: &str| predicted_ns(&[f, "--platform", "myrinet", "--coll", coll]);
    assert!((predicted("measured") - 10.0).abs() < 1e-6);
    assert!((predicted("modeled") - 2.0 * 39_170.0).abs() < 1e-6);
    assert!((predicted("bcast=binomial") - 2.0 * 39_170.0).abs() < 1e-6);
    assert!((predicted("bcast=pipeline") - 3.0 * 39_170.0).abs() < 1e-6);
    // The report's time per collective kind, by hand (binomial from 0: 0→2, then 0→1; 2→3;
    // T1 = 13 410, one hop T1 + T2 + T3 = 39 170): rank 0 ends after its two sends, 2·T1;
    // rank 1 gets the second send, T1 + 39 170; rank 2 gets the first at 39 170 and forwards,
    // + T1; rank 3 two hops, 2 · 39 170.
    let v = json(&[
        f,
        "--platform",
        "myrinet",
        "--coll",
        "modeled",
        "--format",
        "json",
    ]);
    let per_rank = v["collectives_s"]["MPI_Bcast"].as_f64().unwrap() * 1e9;
    let hand =
        (2.0 * 13_410.0 + (13_410.0 + 39_170.0) + (39_170.0 + 13_410.0) + 2.0 * 39_170.0) / 4.0;
    assert!((per_rank - hand).abs() < 1e-6, "{per_rank} vs {hand}");
    let bad = run(&[f, "--platform", "myrinet", "--coll", "bcast=nope"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// A modeled Bcast on a communicator whose ranks are not in world order (comm 5: world ranks
/// 3 and 1, rank 3 its root, calling at 10 ns; rank 1 at 50) costs each rank what the same
/// Bcast on a world of two costs its rank there. By hand (Myrinet, 1000 bytes, eager): the
/// root returns T1 = 13,410 ns after its call, the message arrives at 10 + 39,170; each rank
/// then computes 40 ns to MPI_Finalize. Swapping the two ranks' call times gives 39,260.
#[test]
fn collectives_on_a_reordered_communicator_cost_by_communicator_rank() {
    let (_d, sub) = text_trace(
        "sub.txt",
        "loggps-trace 1\nranks 4\ncomm 5 members 3,1\n\
         0 MPI_Init 0 0\n0 MPI_Finalize 100 110\n\
         1 MPI_Init 0 0\n1 MPI_Bcast 50 60 root=3 bytes=0 recv_bytes=1000 comm=5\n1 MPI_Finalize 100 110\n\
         2 MPI_Init 0 0\n2 MPI_Finalize 100 110\n\
         3 MPI_Init 0 0\n3 MPI_Bcast 10 60 root=3 bytes=1000 recv_bytes=0 comm=5\n3 MPI_Finalize 100 110\n",
    );
    let (_e, two) = text_trace(
        "two.txt",
        "loggps-trace 1\nranks 2\n\
         0 MPI_Init 0 0\n0 MPI_Bcast 10 60 root=0 bytes=1000 recv_bytes=0\n0 MPI_Finalize 100 110\n\
         1 MPI_Init 0 0\n1 MPI_Bcast 50 60 root=0 bytes=0 recv_bytes=1000\n1 MPI_Finalize 100 110\n",
    );
    let v = json(&myrinet(&sub, &["--format", "json"]));
    let w = json(&myrinet(&two, &["--format", "json"]));
    let end_ns = |r: &Value| r["end_s"].as_f64().unwrap() * 1e9;
    assert!((end_ns(&v["ranks"][3]) - 13_460.0).abs() < 1e-3, "{v}");
    assert!((end_ns(&v["ranks"][1]) - 39_220.0).abs() < 1e-3, "{v}");
    assert_eq!(v["ranks"][3]["collective_s"], w["ranks"][0]["collective_s"]);
    assert_eq!(
        v["ranks"][1]["receiver_sync_s"],
        w["ranks"][1]["receiver_sync_s"]
    );
}

/// The time in collectives per routine, by hand: each of two ranks calls a Barrier of 10 ns, an
/// Allreduce of 20 and a Barrier of 30, all at once, replayed as measured: 40 ns of Barrier and
/// 20 of Allreduce a rank, 60 in all (a rank's second routine moves its time per routine out
/// of the rank state, where a loop of one routine keeps it).
#[test]
fn collective_time_is_split_by_routine() {
    let mut text = String::from("loggps-trace 1\nranks 2\n");
    for r in 0..2 {
        text += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Barrier 10 20\n{r} MPI_Allreduce 30 50 bytes=8 recv_bytes=8\n\
             {r} MPI_Barrier 60 90\n{r} MPI_Finalize 100 110\n"
        );
    }
    let (_d, f) = text_trace("kinds.txt", &text);
    let v = json(&myrinet(&f, &["--coll", "measured", "--format", "json"]));
    let ns = |v: &Value| v.as_f64().unwrap() * 1e9;
    assert!(
        (ns(&v["collectives_s"]["MPI_Barrier"]) - 40.0).abs() < 1e-6,
        "{v}"
    );
    assert!(
        (ns(&v["collectives_s"]["MPI_Allreduce"]) - 20.0).abs() < 1e-6,
        "{v}"
    );
    for r in 0..2 {
        assert!(
            (ns(&v["ranks"][r]["collective_s"]) - 60.0).abs() < 1e-6,
            "{v}"
        );
    }
}

/// A collective too big to model replays as measured, and the warning gives each reason once,
/// with how many calls it held back: here 3 Allreduces that a ring on 32,768 ranks would take
/// 2 · 32,767 rounds of 32,768 exchanges (more than the 2^30 a lockstep may have) for.
#[test]
fn unmodeled_collectives_are_counted_by_reason() {
    let dir = tempfile::tempdir().unwrap();
    let f = &synthesized(dir.path(), &UNMODELED_RING);
    let v = json(&[
        f,
        "--platform",
        "myrinet",
        "--coll",
        "allreduce=ring",
        "--format",
        "json",
    ]);
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let [w] = warnings[..] else {
        panic!("one warning expected: {warnings:?}")
    };
    assert_eq!(
        w,
        "3 collective call(s) replayed as measured, not modeled: allreduce by ring on 32768 ranks \
         takes 2147418112 exchanges (ranks × rounds), more than 1073741824 (3 calls)"
    );
    assert_eq!(w.matches("allreduce by ring").count(), 1, "{w}");
}

/// One Allreduce of 8 bytes on `ranks` ranks, all calling at once, replayed with
/// `--coll allreduce=ALGORITHM` (no warning: modeled): its slowest rank's time in it is the
/// calculator's.
fn one_allreduce_takes_the_calculators_time(dir: &Path, ranks: &str, algorithm: &str) {
    let args = [
        "--pattern",
        "allreduce",
        "--ranks",
        ranks,
        "--iterations",
        "1",
    ];
    let f = &synthesized(dir, &args);
    let coll = format!("allreduce={algorithm}");
    let v = json(&[
        f,
        "--platform",
        "myrinet",
        "--format",
        "json",
        "--coll",
        &coll,
    ]);
    assert_eq!(v["warnings"], serde_json::json!([]));
    let slowest = v["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["collective_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    let calc = json(&[
        "collective",
        "allreduce",
        "--algorithm",
        algorithm,
        "--ranks",
        ranks,
        "--bytes",
        "8",
        "--platform",
        "myrinet",
        "--format",
        "json",
    ]);
    let want = calc["predicted_ns"].as_f64().unwrap();
    assert!(want > 50_000.0, "{want}");
    assert!(
        (slowest * 1e9 - want).abs() < 1e-9 * want,
        "{slowest} s, calculator {want} ns"
    );
}

/// A tree's collective on a quarter of a million ranks is modeled, not replayed as measured: its
/// schedule (1.3 M steps) is under the cap, which an estimate of 8 · P log P steps (42 M) had
/// it over.
#[test]
fn a_binomial_allreduce_on_262144_ranks_is_modeled() {
    let dir = tempfile::tempdir().unwrap();
    one_allreduce_takes_the_calculators_time(dir.path(), "262144", "binomial");
}

/// Each rank's time in one MPI_Bcast of `fields` on 4,096 ranks all calling at 0.
fn bcast_times_on_4096_ranks(fields: &str) -> Vec<f64> {
    let (_d, f) = coll_trace("MPI_Bcast", &vec![(0, fields.to_string()); 4096]);
    let v = json(&[&f, "--platform", "myrinet", "--format", "json"]);
    assert_eq!(v["warnings"], serde_json::json!([]));
    let mut t = vec![f64::NAN; 4096];
    for r in v["ranks"].as_array().unwrap() {
        t[r["rank"].as_u64().unwrap() as usize] = r["collective_s"].as_f64().unwrap();
    }
    t
}

/// Collectives that a rule gives are costed from it from 4,096 ranks on, never built: one
/// recursive-doubling Allreduce, and one Bcast of 1,000,000 bytes (Open MPI's choice:
/// scatter-allgather, a tree then a ring) take the calculator's time (which the unit tests
/// check against the built schedule's); a binomial Bcast from rank 1234 gives each rank the time
/// of its place from the root in one from rank 0; a loop of Allreduces, Barriers and Bcasts
/// gives the same report at 1 thread and at 2.
#[test]
fn ruled_collectives_on_4096_ranks_cost_as_the_calculator() {
    let dir = tempfile::tempdir().unwrap();
    one_allreduce_takes_the_calculators_time(dir.path(), "4096", "recursive-doubling");
    let t = bcast_times_on_4096_ranks("root=0 bytes=1000000");
    let slowest = t.iter().copied().fold(0.0, f64::max);
    let calc = json(&[
        "collective",
        "bcast",
        "--algorithm",
        "scatter-allgather",
        "--ranks",
        "4096",
        "--bytes",
        "1000000",
        "--platform",
        "myrinet",
        "--format",
        "json",
    ]);
    let want = calc["predicted_ns"].as_f64().unwrap();
    assert!(
        (slowest * 1e9 - want).abs() < 1e-9 * want,
        "{slowest} s, calculator {want} ns"
    );
    let (from_0, from_1234) = (
        bcast_times_on_4096_ranks("root=0 bytes=8"),
        bcast_times_on_4096_ranks("root=1234 bytes=8"),
    );
    assert!(
        from_0[0] != from_0[4095],
        "a tree's ranks take different times"
    );
    for r in 0..4096 {
        assert_eq!(from_1234[r], from_0[(r + 4096 - 1234) % 4096], "rank {r}");
    }
    let mix = [
        "--pattern",
        "collectives",
        "--ranks",
        "4096",
        "--iterations",
        "3",
    ];
    let f = &synthesized(dir.path(), &mix);
    let at = |threads: &str| {
        let coll = [
            "--coll",
            "allreduce=recursive_doubling",
            "--threads",
            threads,
        ];
        run(&[
            &[f.as_str(), "--platform", "myrinet", "--format", "json"],
            &coll[..],
        ]
        .concat())
    };
    let (one, two) = (at("1"), at("2"));
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&one.stdout),
        String::from_utf8_lossy(&two.stdout)
    );
}

/// `--gamma`: reduction arithmetic in modeled collectives. A 2-rank recursive-doubling
/// Allreduce of 1000 bytes reduces once on each rank: 1 ns/byte adds exactly 1000 ns.
#[test]
fn reduction_cost_is_settable() {
    let mut t = String::from("loggps-trace 1\nranks 2\n");
    for r in 0..2 {
        t += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Allreduce 0 10 bytes=1000 recv_bytes=1000\n{r} MPI_Finalize 10 20\n"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("allreduce.txt");
    std::fs::write(&f, t).unwrap();
    let f = f.to_str().unwrap();
    let predicted = |gamma: &str| {
        let v = json(&[
            f,
            "--platform",
            "myrinet",
            "--coll",
            "allreduce=recursive-doubling",
            "--gamma",
            gamma,
            "--format",
            "json",
        ]);
        v["predicted_s"].as_f64().unwrap() * 1e9
    };
    assert!((predicted("1") - predicted("0") - 1000.0).abs() < 1e-6);
    // LogGP's collectives reduce at the same cost.
    let loggp = |gamma: &str| {
        let args = [
            f, "--model", "loggp", "--L", "100", "--o", "10", "--gamma", gamma,
        ];
        let coll = ["--coll", "allreduce=recursive-doubling", "--format", "json"];
        json(&[&args[..], &coll[..]].concat())["predicted_s"]
            .as_f64()
            .unwrap()
            * 1e9
    };
    assert!((loggp("1") - loggp("0") - 1000.0).abs() < 1e-6);
    assert_eq!(
        run(&[f, "--platform", "myrinet", "--gamma", "-1"])
            .status
            .code(),
        Some(2)
    );
}

/// `gamma` travels with the parameters: from a file, from the trace's own `params` line, the
/// flag overriding either, the report naming its source; and `--sweep gamma=…`. The same
/// Allreduce as above: each ns/byte adds 1000 ns.
#[test]
fn reduction_cost_travels_with_the_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let myrinet = "L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383";
    let trace = |params: &str| {
        let mut t = format!("loggps-trace 1\nranks 2\nparams {myrinet}{params}\n");
        for r in 0..2 {
            t += &format!(
                "{r} MPI_Init 0 0\n{r} MPI_Allreduce 0 10 bytes=1000 recv_bytes=1000\n{r} MPI_Finalize 10 20\n"
            );
        }
        let f = dir.path().join(format!("t{}.txt", params.len()));
        std::fs::write(&f, t).unwrap();
        f.to_str().unwrap().to_string()
    };
    let (free, embedded) = (trace(""), trace(" gamma=2"));
    let coll = ["--coll", "allreduce=recursive-doubling", "--format", "json"];
    let predicted = |args: &[&str]| {
        let v = json(&[args, &coll[..]].concat());
        (
            v["predicted_s"].as_f64().unwrap() * 1e9,
            v["params"].clone(),
        )
    };
    let (base, p) = predicted(&[&free]);
    assert!(p.get("gamma").is_none(), "no gamma, none listed: {p}");
    let (t, p) = predicted(&[&embedded]);
    assert!(
        (t - base - 2000.0).abs() < 1e-6,
        "from the trace: {t} vs {base}"
    );
    assert_eq!(p["gamma"]["value"].as_f64(), Some(2.0), "{p}");
    assert_eq!(p["gamma"]["source"], "trace", "{p}");
    let (t, p) = predicted(&[&embedded, "--gamma", "0.5"]);
    assert!((t - base - 500.0).abs() < 1e-6, "the flag wins: {t}");
    assert_eq!(p["gamma"]["source"], "flag", "{p}");
    let toml = dir.path().join("p.toml");
    let one = loggps_predict::model::BySize::one(loggps_predict::model::SizeParam::Gamma, 3.0);
    let with_gamma = loggps_predict::model::Params {
        gamma: Some(one.unwrap()),
        ..loggps_predict::model::Params::preset("myrinet").unwrap()
    };
    std::fs::write(&toml, loggps_predict::model::params_toml(&with_gamma)).unwrap();
    let (t, _) = predicted(&[&free, "--params", toml.to_str().unwrap()]);
    assert!((t - base - 3000.0).abs() < 1e-6, "from a file: {t}");
    // By size (the model's §15), at the vector's 1000 B: 1 ns/B at 100 B (100 ns) and 5 at
    // 10,000 B (50,000 ns), the time interpolated in k: 100 + 49,900 · 900 / 9,900 =
    // 4,636.36 ns, from a file, the trace's own line and its binary form.
    let sized = dir.path().join("sized.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let table = text.replace("gamma = 3.0", "gamma = [[100, 1.0], [10000, 5.0]]");
    assert_ne!(table, text);
    std::fs::write(&sized, table).unwrap();
    let (t, p) = predicted(&[&free, "--params", sized.to_str().unwrap()]);
    let by_hand = 100.0 + 49_900.0 * 900.0 / 9_900.0;
    assert!(
        (t - base - by_hand).abs() < 1e-6,
        "by size from a file: {t}"
    );
    assert_eq!(p["gamma@10000"]["value"].as_f64(), Some(5.0), "{p}");
    let by_size = trace(" gamma=100:1,10000:5");
    let (t, _) = predicted(&[&by_size]);
    assert!(
        (t - base - by_hand).abs() < 1e-6,
        "by size from the trace: {t}"
    );
    let bin = dir.path().join("sized.bin");
    assert!(
        run(&["convert", &by_size, bin.to_str().unwrap()])
            .status
            .success()
    );
    let (t, _) = predicted(&[bin.to_str().unwrap()]);
    assert!(
        (t - base - by_hand).abs() < 1e-6,
        "by size from the binary: {t}"
    );
    let v = json(&[&embedded, "--sweep", "gamma=0,4", "--format", "json"]);
    let points: Vec<f64> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["predicted_s"].as_f64().unwrap() * 1e9)
        .collect();
    assert!((points[1] - points[0] - 4000.0).abs() < 1e-6, "{v}");
    let negative = std::fs::read_to_string(&toml)
        .unwrap()
        .replace("gamma = 3.0", "gamma = -1.0");
    std::fs::write(&toml, negative).unwrap();
    let out = run(&[&free, "--params", toml.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("gamma = -1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Modeled collectives of different shapes in one trace each get their own schedule (the
/// replay builds a schedule once per shape): on 4 symmetric ranks every Allreduce ends at the
/// same time everywhere, so a second one costs what it costs alone, and
/// `P([a, b]) − P([a, a]) = P([b]) − P([a])`.
#[test]
fn collectives_of_different_shapes_keep_their_own_schedules() {
    let dir = tempfile::tempdir().unwrap();
    let predicted = |sizes: &[u64], coll: &str| {
        let mut t = String::from("loggps-trace 1\nranks 4\n");
        for r in 0..4 {
            t += &format!("{r} MPI_Init 0 0\n");
            let mut at = 0u64;
            for &b in sizes {
                let end = at + 10;
                t += &format!("{r} MPI_Allreduce {at} {end} bytes={b} recv_bytes={b}\n");
                at += 1_000_000_000;
            }
            t += &format!("{r} MPI_Finalize {at} {}\n", at + 10);
        }
        let f = dir.path().join(format!("{sizes:?}.txt"));
        std::fs::write(&f, t).unwrap();
        predicted_ns(&[f.to_str().unwrap(), "--platform", "myrinet", "--coll", coll])
    };
    // The same algorithm with more data; the algorithms Open MPI's rules pick for each size.
    for (small, large, coll) in [
        (8, 2048, "allreduce=recursive-doubling"),
        (8, 1 << 20, "modeled"),
    ] {
        let p = |sizes: &[u64]| predicted(sizes, coll);
        let alone = p(&[large]) - p(&[small]);
        assert!(
            alone > 0.0,
            "{large} bytes cost no more than {small}: {alone}"
        );
        let second = p(&[small, large]) - p(&[small, small]);
        assert!(
            (second - alone).abs() < 1e-3,
            "{large}: {second} != {alone}"
        );
        let first = p(&[large, small]) - p(&[small, small]);
        assert!((first - alone).abs() < 1e-3, "{large}: {first} != {alone}");
    }
}

/// A collective over every rank is costed by blocks of ranks at 2 threads (one a thread: the
/// other waits for the cost), by a queue at 1: the same report, bit for bit, by every Allreduce
/// algorithm, on 256 ranks.
#[test]
fn collectives_over_every_rank_cost_the_same_by_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let loop_ = [
        "--pattern",
        "allreduce",
        "--ranks",
        "256",
        "--iterations",
        "4",
    ];
    let f = &synthesized(dir.path(), &[&loop_[..], &["--bytes", "4096"]].concat());
    for algo in [
        "tuned",
        "recursive-doubling",
        "binomial",
        "rabenseifner",
        "ring",
    ] {
        let coll = format!("allreduce={algo}");
        let report = |threads| {
            let args = ["--coll", &coll, "--format", "json", "--threads", threads];
            run(&myrinet(f, &args)).stdout
        };
        assert!(report("1") == report("2"), "{algo}: 1 and 2 threads differ");
    }
}

/// `collective --algorithm tuned`: the algorithm Open MPI 4.1's fixed rules pick. Their
/// allreduce table for fewer than 4 ranks (coll_tuned_decision_fixed.c) reads < 8 bytes ring,
/// < 4096 recursive doubling, < 8192 ring, < 16384 recursive doubling, < 65536 ring: 2 ranks
/// and 16,384 bytes are ring, 1,000 bytes recursive doubling; each costs what naming it does.
#[test]
fn the_calculator_takes_open_mpis_choice() {
    for (bytes, algorithm) in [("16384", "ring"), ("1000", "recursive-doubling")] {
        let ask = |a: &str| {
            let args = ["collective", "allreduce", "--ranks", "2", "--bytes", bytes];
            let out = run(&[&args[..], &["--algorithm", a, "--platform", "myrinet"]].concat());
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8_lossy(&out.stdout).to_string()
        };
        let (tuned, named) = (ask("tuned"), ask(algorithm));
        assert!(
            tuned.contains(&format!("algorithm    {algorithm}\n")),
            "{tuned}"
        );
        assert_eq!(tuned, named);
    }
}

/// `oc`: each participant of a modeled collective that receives returns `oc` later. Two ranks
/// call one `MPI_Allreduce` of 8 bytes, rank 1 100 µs after rank 0 (Myrinet): the schedule is
/// the same with every end moved by `oc`, so the runtime grows by exactly `oc` (1,000 ns),
/// its derivative by `oc` read off the critical path and by replays is 1 (one call on the
/// path), the parameter travels through the binary format, and a negative one is refused.
#[test]
fn oc_ends_each_part_of_a_modeled_collective_later() {
    let fields = "bytes=8 recv_bytes=8";
    let (d, f) = coll_trace(
        "MPI_Allreduce",
        &[(0, fields.to_string()), (100_000, fields.to_string())],
    );
    let base = predicted_ns(&myrinet(&f, &[]));
    let with = predicted_ns(&myrinet(&f, &["--oc", "1000"]));
    assert!((with - base - 1000.0).abs() < 1e-6, "{base} {with}");
    let v = json(&myrinet(&f, &["--oc", "1000", "--format", "json"]));
    assert_eq!(v["params"]["oc"]["value"], 1000.0, "{v}");
    assert_eq!(v["params"]["oc"]["source"], "flag", "{v}");
    let s = json(&[
        "sensitivity",
        &f,
        "--platform",
        "myrinet",
        "--oc",
        "1000",
        "--format",
        "json",
    ]);
    let oc = s["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "oc")
        .unwrap_or_else(|| panic!("oc in {s}"));
    for key in ["ns_per_unit", "from_critical_path"] {
        let got = oc[key].as_f64().unwrap();
        assert!((got - 1.0).abs() < 1e-6, "{key}: {got}");
    }
    // Embedded in a binary trace, it is read back.
    let text = std::fs::read_to_string(&f).unwrap().replace(
        "ranks 2\n",
        "ranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383 oc=1000\n",
    );
    let t = d.path().join("oc.txt");
    std::fs::write(&t, text).unwrap();
    let b = d.path().join("oc.bin");
    assert!(
        run(&["convert", t.to_str().unwrap(), b.to_str().unwrap()])
            .status
            .success()
    );
    let again = predicted_ns(&[b.to_str().unwrap()]);
    assert!((again - with).abs() < 1e-6, "{again} {with}");
    let out = run(&myrinet(&f, &["--oc", "-5"]));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("oc = -5"), "{err}");
}

/// `oc` falls at the end of each rank's part that receives: a rank that only sends (a Bcast's
/// root, a Reduce's other rank on 2 ranks) returns as without it, one that receives `oc` later
/// (the model's §8). Two ranks call an 8-byte Bcast and Reduce from rank 0 at once (Myrinet).
#[test]
fn oc_falls_at_the_end_of_the_ranks_that_receive() {
    for (routine, receiver) in [("MPI_Bcast", 1), ("MPI_Reduce", 0)] {
        let fields = |r: usize| {
            let (sent, got) = match (routine, r) {
                ("MPI_Bcast", 0) | ("MPI_Reduce", 1) => (8, 0),
                _ => (0, 8),
            };
            format!("root=0 bytes={sent} recv_bytes={got}")
        };
        let (_d, f) = coll_trace(routine, &[(0, fields(0)), (0, fields(1))]);
        let (base, with) = (
            json(&myrinet(&f, &["--format", "json"])),
            json(&myrinet(&f, &["--oc", "1000", "--format", "json"])),
        );
        for r in 0..2 {
            let moved = rank_ns(&with, r)[0] - rank_ns(&base, r)[0];
            let want = if r == receiver { 1000.0 } else { 0.0 };
            assert!((moved - want).abs() < 1e-6, "{routine} rank {r}: {moved}");
        }
    }
}

/// `loggps-predict collective OP --algorithm ALG --ranks P --bytes K --platform myrinet EXTRA`'s
/// predicted time, ns.
fn myrinet_collective_ns(
    op: &str,
    algorithm: &str,
    ranks: &str,
    bytes: &str,
    extra: &[&str],
) -> f64 {
    let mut args = vec![
        "collective",
        op,
        "--algorithm",
        algorithm,
        "--ranks",
        ranks,
        "--bytes",
        bytes,
        "--platform",
        "myrinet",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    json(&args)["predicted_ns"].as_f64().unwrap()
}

/// A modeled collective's local copies (the model's §15), costed by hand. A ring Allreduce of
/// 1000 bytes on 4 ranks: each rank copies its vector before its first step, so every rank
/// starts `copy · 1000` later and the whole schedule moves by it (0.5 ns/B: 500 ns). Recursive
/// doubling on 4 ranks copies into its temporary and, after its two exchanges, back: 1000 ns.
/// A Bcast copies nothing. By size (a parameter file's `copy = [[100, 0.25], [10000, 0.75]]`:
/// 25 ns at 100 B and 7,500 at 10,000, the time interpolated in k: a copy of 1000 bytes
/// 25 + 7,475 · 900 / 9,900 = 704.55 ns, the recursive doubling's two 1,409.09); at 100 bytes
/// a copy costs 0.25 ns/B (the ring Allreduce of 100 bytes moved by 25 ns), at 100,000 (beyond
/// the last size) 0.75 (75,000 ns).
#[test]
fn a_collectives_copies_move_it_by_their_bytes() {
    let time = |op: &str, algorithm: &str, copy: &str| {
        myrinet_collective_ns(op, algorithm, "4", "1000", &["--copy", copy])
    };
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, copy: Option<f64>| {
        let copy = copy.map(|v| loggps_predict::model::BySize::one(COPY, v).unwrap());
        let sized = [(100, 0.25), (10000, 0.75)];
        let copy = copy.or(Some(
            loggps_predict::model::BySize::new(COPY, &sized).unwrap(),
        ));
        let p = loggps_predict::model::Params {
            copy,
            ..loggps_predict::model::Params::preset("myrinet").unwrap()
        };
        let f = dir.path().join(name);
        std::fs::write(&f, loggps_predict::model::params_toml(&p)).unwrap();
        f.to_str().unwrap().to_string()
    };
    let (sized, none) = (file("sized.toml", None), file("none.toml", Some(0.0)));
    assert!(
        std::fs::read_to_string(&sized)
            .unwrap()
            .contains("copy = [[100, 0.25], [10000, ")
    );
    let from = |op: &str, algorithm: &str, bytes: &str, params: &str| {
        let args = [
            "collective",
            op,
            "--algorithm",
            algorithm,
            "--ranks",
            "4",
            "--bytes",
            bytes,
            "--params",
            params,
            "--format",
            "json",
        ];
        json(&args)["predicted_ns"].as_f64().unwrap()
    };
    for (op, algorithm, moved) in [
        ("allreduce", "ring", 500.0),
        ("allreduce", "recursive-doubling", 1000.0),
        ("bcast", "binomial", 0.0),
    ] {
        let d = time(op, algorithm, "0.5") - time(op, algorithm, "0");
        assert!((d - moved).abs() < 1e-6, "{op} {algorithm}: {d}");
        let d = from(op, algorithm, "1000", &sized) - from(op, algorithm, "1000", &none);
        let by_size = moved / 500.0 * (25.0 + 7_475.0 * 900.0 / 9_900.0);
        assert!((d - by_size).abs() < 1e-6, "{op} {algorithm} by size: {d}");
    }
    for (bytes, moved) in [("100", 25.0), ("100000", 75_000.0)] {
        let d = from("allreduce", "ring", bytes, &sized) - from("allreduce", "ring", bytes, &none);
        assert!((d - moved).abs() < 1e-6, "ring at {bytes} B by size: {d}");
    }
}

const COPY: loggps_predict::model::SizeParam = loggps_predict::model::SizeParam::Copy;

/// A modeled collective's writes into lines a peer holds (the model's §15), costed by hand on 2
/// ranks, Myrinet (`S` = 16,383), `bounce` 0.5 ns a byte: where the algorithm's messages go by
/// rendezvous, a linear Scan's rank 0 copies its 40,000 bytes into the buffer it sends on
/// (+20,000 ns, rank 1 waiting for it); recursive doubling copies into the buffer it exchanges
/// and writes its result back into it after (+40,000); a ring reduce-scatter's block for its
/// peer (40,000 bytes, +20,000); a ring Allreduce copies into the buffer it sends halves of:
/// +20,000 with halves of 20,000 bytes, nothing with halves of 15,000 (eager), nothing at 1,000.
#[test]
fn a_collectives_writes_into_lines_a_peer_holds_cost_bounce() {
    let time = |op: &str, algorithm: &str, bytes: &str, bounce: &str| {
        myrinet_collective_ns(op, algorithm, "2", bytes, &["--bounce", bounce])
    };
    for (op, algorithm, bytes, moved) in [
        ("scan", "linear", "40000", 20_000.0),
        ("allreduce", "recursive-doubling", "40000", 40_000.0),
        ("reduce_scatter", "ring", "40000", 20_000.0),
        ("allreduce", "ring", "40000", 20_000.0),
        ("allreduce", "ring", "30000", 0.0),
        ("scan", "linear", "1000", 0.0),
        ("bcast", "binomial", "40000", 0.0),
    ] {
        let d = time(op, algorithm, bytes, "0.5") - time(op, algorithm, bytes, "0");
        assert!((d - moved).abs() < 1e-6, "{op} {algorithm} {bytes}: {d}");
    }
}

/// `held_reduce` (the model's §15): a recursive doubling's upper partner of each round reduces
/// into the buffer it has just sent, at `held_reduce` a byte more (none: `held`'s). Myrinet,
/// 40,000 bytes (rendezvous), `held` 0.25, `held_reduce` 0.75, `bounce` 0: on 2 ranks every rank
/// copies into its temporary first (+10,000 ns) and rank 1 reduces into it once (+30,000):
/// +40,000; without `held_reduce`, +20,000; on 4 ranks rank 3 is the upper partner twice:
/// +10,000 + 60,000 = +70,000.
#[test]
fn a_recursive_doublings_reductions_into_the_buffer_it_sent_cost_held_reduce() {
    let time = |ranks: &str, extra: &[&str]| {
        myrinet_collective_ns("allreduce", "recursive-doubling", ranks, "40000", extra)
    };
    let none = |ranks: &str| {
        time(
            ranks,
            &["--bounce", "0", "--held", "0", "--held-reduce", "0"],
        )
    };
    let held = ["--bounce", "0", "--held", "0.25"];
    let both = [&held[..], &["--held-reduce", "0.75"]].concat();
    for (ranks, extra, more) in [
        ("2", &both[..], 40_000.0),
        ("2", &held[..], 20_000.0),
        ("4", &both[..], 70_000.0),
    ] {
        let d = time(ranks, extra) - none(ranks);
        assert!((d - more).abs() < 1e-6, "{ranks} ranks {extra:?}: {d}");
    }
    // From a trace's own line, its binary conversion and a parameter file alike: a replayed
    // Allreduce of 40,000 bytes (both ranks calling at 0), `held_reduce` 0.75 against `held`
    // 0.25 alone: rank 1's reduction 20,000 ns later.
    let p = loggps_predict::model::Params {
        held: Some(0.25),
        held_reduce: Some(0.75),
        ..loggps_predict::model::Params::preset("myrinet").unwrap()
    };
    let (_d, held) = allreduce_costs_alike(
        40_000,
        (" held=0.25", " held=0.25 held_reduce=0.75"),
        &p,
        20_000.0,
    );
    let negative = run(&[&held, "--platform", "myrinet", "--held-reduce", "-1"]);
    assert_eq!(negative.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&negative.stderr);
    assert!(stderr.contains("held_reduce = -1"), "{stderr}");
}

/// `alloc` (the model's §15): each temporary buffer an algorithm allocates costs it before its
/// first step, counted from Open MPI 4.1's sources. Myrinet, 1,000 bytes, `alloc` 100 ns: a
/// recursive doubling on 4 ranks allocates one at every rank, the whole schedule 100 ns later;
/// a recursive halving reduce-scatter on 2 ranks five (its displacements, two vectors, two
/// arrays of counts), 500 ns; a binomial Bcast none. From a trace's own line, its binary
/// conversion and a parameter file alike (2 ranks calling an Allreduce at 0): 100 ns; a
/// negative value refused naming it.
#[test]
fn a_collectives_temporaries_cost_alloc() {
    for (op, algorithm, ranks, more) in [
        ("allreduce", "recursive-doubling", "4", 100.0),
        ("reduce_scatter", "recursive-halving", "2", 500.0),
        ("bcast", "binomial", "4", 0.0),
    ] {
        let time =
            |alloc: &str| myrinet_collective_ns(op, algorithm, ranks, "1000", &["--alloc", alloc]);
        let d = time("100") - time("0");
        assert!((d - more).abs() < 1e-6, "{op} {algorithm}: {d}");
    }
    let p = loggps_predict::model::Params {
        alloc: Some(100.0),
        ..loggps_predict::model::Params::preset("myrinet").unwrap()
    };
    let (_d, free) = allreduce_costs_alike(1000, ("", " alloc=100"), &p, 100.0);
    let negative = run(&[&free, "--platform", "myrinet", "--alloc", "-1"]);
    assert_eq!(negative.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&negative.stderr);
    assert!(stderr.contains("alloc = -1"), "{stderr}");
}

/// A recursive doubling Allreduce of `bytes` on 2 ranks (both calling at 0), replayed from a
/// trace whose `params` line ends with `extras.0` and from one whose line ends with
/// `extras.1`: the second from its own line, from its binary conversion, and the first with
/// `with` as a parameter file, each predicted `more` ns later than the first. The first
/// trace's path (kept for the caller's further runs).
fn allreduce_costs_alike(
    bytes: u64,
    extras: (&str, &str),
    with: &loggps_predict::model::Params,
    more: f64,
) -> (tempfile::TempDir, String) {
    let allreduce = |params: &str| {
        let line = "params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383";
        let mut t = format!("loggps-trace 1\nranks 2\n{line}{params}\n");
        for r in 0..2 {
            t += &format!(
                "{r} MPI_Init 0 0\n{r} MPI_Allreduce 0 60 bytes={bytes} recv_bytes={bytes}\n\
                 {r} MPI_Finalize 60 70\n"
            );
        }
        t
    };
    let (d, base_trace) = text_trace("base.txt", &allreduce(extras.0));
    let (_w, with_trace) = text_trace("with.txt", &allreduce(extras.1));
    let bin = d.path().join("with.bin");
    assert!(
        run(&["convert", &with_trace, bin.to_str().unwrap()])
            .status
            .success()
    );
    let toml = d.path().join("with.toml");
    std::fs::write(&toml, loggps_predict::model::params_toml(with)).unwrap();
    let coll = ["--coll", "allreduce=recursive-doubling", "--format", "json"];
    let runtime = |path: &str, extra: &[&str]| {
        let args = [&[path][..], &coll[..], extra].concat();
        json(&args)["predicted_s"].as_f64().unwrap() * 1e9
    };
    let base = runtime(&base_trace, &[]);
    let file = ["--params", toml.to_str().unwrap()];
    for (what, ns) in [
        ("the trace", runtime(&with_trace, &[])),
        ("the binary", runtime(bin.to_str().unwrap(), &[])),
        ("the file", runtime(&base_trace, &file)),
    ] {
        assert!(
            (ns - base - more).abs() < 1e-3,
            "{what}: {ns} against {base}"
        );
    }
    (d, base_trace)
}

/// A collective's receive buffer the tracer flagged `bounced` (the rank last sent from those
/// lines: the model's §13), costed by hand on 2 ranks, Myrinet (`S` = 16,383), `bounce` 0.5 ns
/// a byte: the Bcast's non-root receives its 40,000 bytes by rendezvous into it, 20,000 ns
/// more (its end, and the run's), and its root, whose send completes once the non-root has
/// pulled the payload, ends 20,000 ns later too; unflagged, or of 8,000 bytes (eager), nothing
/// more; an Allreduce flagged alike receives into a temporary: nothing more. The same from the
/// trace's binary conversion.
#[test]
fn a_collectives_bounced_receive_buffer_costs_bounce() {
    let trace = |routine: &str, bytes: u64, flags: &str| {
        let recv = |r: usize| match routine {
            "MPI_Bcast" if r == 0 => (bytes, 0),
            "MPI_Bcast" => (0, bytes),
            _ => (bytes, bytes),
        };
        let mut t = String::from("loggps-trace 1\nranks 2\n");
        for r in 0..2 {
            let (sent, got) = recv(r);
            let flag = if r == 1 { flags } else { "" };
            t += &format!(
                "{r} MPI_Init 0 0\n{r} {routine} 0 60 root=0 bytes={sent} recv_bytes={got}{flag}\n\
                 {r} MPI_Finalize 60 70\n"
            );
        }
        let name = format!("{routine}-{bytes}{}.txt", flags.len());
        text_trace(&name, &t)
    };
    let runtime = |path: &str, bounce: &str| {
        let args = [
            path,
            "--platform",
            "myrinet",
            "--bounce",
            bounce,
            "--format",
            "json",
        ];
        json(&args)["predicted_s"].as_f64().unwrap() * 1e9
    };
    // What the flag adds, at `bounce` 0.5 (0: nothing).
    let more = |routine: &str, bytes: u64, bounce: &str| {
        let ((dir, flagged), (_b, plain)) = (
            trace(routine, bytes, " flags=bounced"),
            trace(routine, bytes, ""),
        );
        (
            runtime(&flagged, bounce) - runtime(&plain, bounce),
            (dir, flagged),
        )
    };
    let (d, (_dir, bcast)) = more("MPI_Bcast", 40_000, "0.5");
    assert!((d - 20_000.0).abs() < 1e-3, "{d}");
    let root_end = |flags: &str| {
        let (_d, t) = trace("MPI_Bcast", 40_000, flags);
        let args = [
            &t,
            "--platform",
            "myrinet",
            "--bounce",
            "0.5",
            "--format",
            "json",
        ];
        json(&args)["ranks"][0]["end_s"].as_f64().unwrap() * 1e9
    };
    let d = root_end(" flags=bounced") - root_end("");
    assert!((d - 20_000.0).abs() < 1e-3, "the root: {d}");
    let bin = format!("{bcast}.bin");
    assert!(run(&["convert", &bcast, &bin]).status.success());
    assert!(
        (runtime(&bin, "0.5") - runtime(&bcast, "0.5")).abs() < 1e-3,
        "binary"
    );
    for (routine, bytes, bounce) in [
        ("MPI_Bcast", 40_000, "0"),
        ("MPI_Bcast", 8_000, "0.5"),
        ("MPI_Allreduce", 40_000, "0.5"),
    ] {
        let (d, _) = more(routine, bytes, bounce);
        assert!(d.abs() < 1e-3, "{routine} {bytes} at bounce {bounce}: {d}");
    }
    // Its root's send flagged `clean` (`--clean 1`: costed as before) and `bounce_clean` 1.25:
    // the flag adds 1.25·40,000 = 50,000 ns (the receiver's writes into lines its peer holds,
    // its source read at once); `--bounce` alone costs it as any, 20,000.
    let root_clean = |flags: &str, extra: &[&str]| {
        let (_d, t) = trace("MPI_Bcast", 40_000, flags);
        let t0 = std::fs::read_to_string(&t).unwrap().replace(
            "0 MPI_Bcast 0 60 root=0 bytes=40000 recv_bytes=0",
            "0 MPI_Bcast 0 60 root=0 bytes=40000 recv_bytes=0 flags=clean",
        );
        let (_e, t) = text_trace(&format!("clean{}.txt", flags.len()), &t0);
        let args = [
            &t,
            "--platform",
            "myrinet",
            "--clean",
            "1",
            "--format",
            "json",
        ];
        json(&[&args[..], extra].concat())["predicted_s"]
            .as_f64()
            .unwrap()
            * 1e9
    };
    for (extra, want) in [
        (&["--bounce", "0.5", "--bounce-clean", "1.25"][..], 50_000.0),
        (&["--bounce", "0.5"][..], 20_000.0),
    ] {
        let d = root_clean(" flags=bounced", extra) - root_clean("", extra);
        assert!((d - want).abs() < 1e-3, "{extra:?}: {d}");
    }
}

/// A collective's receive buffer the tracer flagged `reduced` (an Allreduce's, a Scan's or an
/// Exscan's result, a call or more before: the model's §13), costed by hand on 2 ranks, Myrinet
/// (`S` = 16,383), 40,000 bytes by rendezvous, `bounce` 0.5 and `bounce_clean` 1.25 ns a byte,
/// the senders' buffers flagged `clean`: a Bcast's non-root 0.5·40,000 = 20,000 ns more (never
/// `bounce_clean`), 50,000 where it is `bounced` too (counted once); a linear Reduce's root
/// but the last rank receives the last rank's vector into its result, 20,000 more, where its
/// root is the last rank (it receives into a temporary) nothing.
#[test]
fn a_collectives_receive_into_a_reductions_result_costs_bounce() {
    // ranks' (bytes, recv_bytes, flags) of `routine` from root `root`
    let ns = |routine: &str, root: usize, ranks: [(u64, u64, &str); 2]| {
        let mut t = String::from("loggps-trace 1\nranks 2\n");
        for (r, (sent, got, flags)) in ranks.iter().enumerate() {
            let flags = if flags.is_empty() {
                String::new()
            } else {
                format!(" flags={flags}")
            };
            t += &format!(
                "{r} MPI_Init 0 0\n{r} {routine} 0 60 root={root} bytes={sent} \
                 recv_bytes={got}{flags}\n{r} MPI_Finalize 60 70\n"
            );
        }
        let name = format!(
            "read-{routine}-{root}-{}.txt",
            t.len() ^ t.matches('|').count()
        );
        let (_dir, path) = text_trace(&name, &t);
        let args = [
            &path[..],
            "--platform",
            "myrinet",
            "--bounce",
            "0.5",
            "--bounce-clean",
            "1.25",
            "--clean",
            "1",
            "--format",
            "json",
        ];
        json(&args)["predicted_s"].as_f64().unwrap() * 1e9
    };
    let k = 40_000;
    let bcast = |flags| ns("MPI_Bcast", 0, [(k, 0, "clean"), (0, k, flags)]);
    for (flags, want) in [("reduced", 20_000.0), ("bounced|reduced", 50_000.0)] {
        let d = bcast(flags) - bcast("");
        assert!((d - want).abs() < 1e-3, "a Bcast {flags}: {d}");
    }
    let reduce = |root: usize, flags| {
        let mut ranks = [(k, 0, "clean"), (k, 0, "clean")];
        ranks[root] = (k, k, flags);
        ns("MPI_Reduce", root, ranks)
    };
    let d = reduce(0, "reduced") - reduce(0, "");
    assert!((d - 20_000.0).abs() < 1e-3, "a Reduce to rank 0: {d}");
    let d = reduce(1, "reduced") - reduce(1, "");
    assert!(d.abs() < 1e-3, "a Reduce to the last rank: {d}");
}

/// `held` (the model's §15), where a set has it, costs a collective's writes into lines a peer
/// holds in `bounce`'s place: as above (Myrinet, 2 ranks, a linear Scan of 40,000 bytes, its
/// rank 0's copy of 40,000 bytes into the buffer it sends on), `bounce` 0.5 and `held` 0.25
/// move it by 10,000 ns, `held` 0 by none; a ring Allreduce of 40,000 bytes by 10,000 too, a
/// ping-pong's bounced receive not at all (`held` is the collectives' alone). From a parameter
/// file, a trace's `params` line and its binary conversion alike, a replayed Scan of the same.
#[test]
fn held_costs_a_collectives_writes_in_bounces_place() {
    let time = |op: &str, algorithm: &str, extra: &[&str]| {
        myrinet_collective_ns(op, algorithm, "2", "40000", extra)
    };
    for (op, algorithm) in [("scan", "linear"), ("allreduce", "ring")] {
        let none = time(op, algorithm, &["--bounce", "0"]);
        let d = time(op, algorithm, &["--bounce", "0.5", "--held", "0.25"]) - none;
        assert!((d - 10_000.0).abs() < 1e-6, "{op} {algorithm}: {d}");
        let d = time(op, algorithm, &["--bounce", "0.5", "--held", "0"]) - none;
        assert!(d.abs() < 1e-6, "{op} {algorithm}: {d}");
    }
    // A bounced receive keeps `bounce`: 40,000 bytes by rendezvous, 20,000 ns at 0.5.
    let bounced = "loggps-trace 1\nranks 2\n0 MPI_Send 0 1 bytes=40000 peer=1 tag=0\n\
                   1 MPI_Recv 0 2 bytes=40000 peer=0 tag=0 flags=bounced\n";
    let (_b, b) = text_trace("bounced.txt", bounced);
    let runtime = |trace: &str, extra: &[&str]| {
        let args = [&[trace, "--format", "json"][..], extra].concat();
        json(&args)["predicted_s"].as_f64().unwrap() * 1e9
    };
    let myrinet = ["--platform", "myrinet", "--bounce"];
    let d = runtime(&b, &[&myrinet[..], &["0.5", "--held", "0.25"]].concat())
        - runtime(&b, &[&myrinet[..], &["0"]].concat());
    assert!((d - 20_000.0).abs() < 1e-3, "{d}");
    // A replayed Scan (both ranks calling at 0), its held from a file, a trace and a binary.
    let scan = |params: &str| {
        let mut t = format!("loggps-trace 1\nranks 2\n{params}");
        for r in 0..2 {
            t += &format!(
                "{r} MPI_Init 0 0\n{r} MPI_Scan 0 60 bytes=40000 recv_bytes=40000\n\
                 {r} MPI_Finalize 60 70\n"
            );
        }
        t
    };
    let line = "params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383";
    let (d, plain) = text_trace("scan.txt", &scan(&format!("{line}\n")));
    let (_h, held) = text_trace("held.txt", &scan(&format!("{line} held=0.25\n")));
    let bin = d.path().join("held.bin");
    let out = run(&["convert", &held, bin.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let toml = d.path().join("held.toml");
    std::fs::write(
        &toml,
        loggps_predict::model::params_toml(&loggps_predict::model::Params {
            held: Some(0.25),
            ..loggps_predict::model::Params::preset("myrinet").unwrap()
        }),
    )
    .unwrap();
    let base = runtime(&plain, &["--coll", "scan=linear"]);
    let file = ["--coll", "scan=linear", "--params", toml.to_str().unwrap()];
    for (what, ns) in [
        ("the trace", runtime(&held, &["--coll", "scan=linear"])),
        (
            "the binary",
            runtime(bin.to_str().unwrap(), &["--coll", "scan=linear"]),
        ),
        ("the file", runtime(&plain, &file)),
    ] {
        assert!(
            (ns - base - 10_000.0).abs() < 1e-3,
            "{what}: {ns} against {base}"
        );
    }
    // A negative one is refused.
    assert_eq!(
        run(&[&plain, "--platform", "myrinet", "--held", "-1"])
            .status
            .code(),
        Some(2)
    );
}

/// A linear Gather's root copies its own block before it receives (the model's §15), in a
/// replayed trace: 2 ranks calling at 0, blocks of 1000 bytes, o = 50, L = 100, nothing per
/// byte. Rank 1's send returns at 50, its message there at 150. With `copy` 0.1 the root posts
/// its receive at 100 and ends at 150 + 50 = 200, as with no copy (the copy hidden in its
/// wait); with 0.2 it posts at 200, the message already there, and ends at 200 + 50 = 250.
#[test]
fn a_gathers_root_copies_its_block_while_it_would_wait() {
    let mut t = String::from("loggps-trace 1\nranks 2\n");
    for (r, recv) in [(0, 2000), (1, 0)] {
        t += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Gather 0 60 root=0 bytes=1000 recv_bytes={recv}\n\
             {r} MPI_Finalize 60 70\n"
        );
    }
    let (_d, trace) = text_trace("gather.txt", &t);
    let ends = |copy: &str| -> Vec<f64> {
        let v = json(&[
            "predict",
            &trace,
            "--coll",
            "gather=linear",
            "--L",
            "100",
            "--o",
            "50",
            "--Os",
            "0",
            "--Or",
            "0",
            "--Gs",
            "0",
            "--Gl",
            "0",
            "--s",
            "1000000",
            "--S",
            "100000",
            "--copy",
            copy,
            "--format",
            "json",
        ]);
        (v["ranks"].as_array().unwrap().iter())
            .map(|r| (r["end_s"].as_f64().unwrap() * 1e12).round() / 1e3)
            .collect()
    };
    assert_eq!(ends("0"), vec![200.0, 50.0]);
    assert_eq!(ends("0.1"), vec![200.0, 50.0]);
    assert_eq!(ends("0.2"), vec![250.0, 50.0]);
}

/// Where a set says its library holds blocking sends above `departs_upto` (and messages move
/// only inside calls: Open MPI's shared memory), a modeled exchange waits once its send has
/// returned, as that library's irecv, blocking send and wait do. Two ranks' Allgather of
/// 1,000 B, Myrinet with `L` 0, `G` 0 and `Od` 6,000 (by hand: `T1` = 6,550 + 6.86 × 1,000 =
/// 13,410; the message leaves at 13,410 − 6,000 = 7,410 and arrives then; its receive, posted
/// at the call, ends at 7,410 + `T3` = 7,410 + 6,550 + 2.57 × 1,000 = 16,530): the wait called
/// at the send's return costs `o`, 13,410 + 6,550 = 19,960; with either setting alone the
/// paper's Waitall at the call, 16,530.
#[test]
fn an_exchange_whose_send_is_held_waits_after_it() {
    let predicted = |extra: &[&str]| {
        let args = [
            "collective",
            "allgather",
            "--ranks",
            "2",
            "--bytes",
            "1000",
            "--platform",
            "myrinet",
            "--L",
            "0",
            "--scale",
            "G=0",
            "--Od",
            "6000",
            "--format",
            "json",
        ];
        json(&[&args[..], extra].concat())["predicted_ns"]
            .as_f64()
            .unwrap()
    };
    let held = ["--departs-upto", "256", "--progress", "calls"];
    assert!((predicted(&held) - 19_960.0).abs() < 1e-6);
    assert!((predicted(&held[..2]) - 16_530.0).abs() < 1e-6);
    assert!((predicted(&held[2..]) - 16_530.0).abs() < 1e-6);
    // Below `departs_upto` the send returns at its departure, before its receive ends: as
    // before (200 B: the wait at 1,922 + 6,550 = 8,472, the receive at 13,064).
    let small = |extra: &[&str]| {
        let args = ["collective", "allgather", "--ranks", "2", "--bytes", "200"];
        let set = ["--platform", "myrinet", "--L", "0", "--scale", "G=0"];
        let split = ["--Od", "6000", "--format", "json"];
        json(&[&args[..], &set, &split, extra].concat())["predicted_ns"]
            .as_f64()
            .unwrap()
    };
    assert!((small(&held) - 13_064.0).abs() < 1e-6, "{}", small(&held));
}

/// A held send inside a modeled collective ([`an_exchange_whose_send_is_held_waits_after_it`]'s
/// set): a Bcast of 1,000 B from rank 0 at 0, rank 1 calling at 50,000. The message leaves at
/// `T1 − Od` = 7,410 and is there before rank 1 posts its receive; the library gives the root
/// its buffer back once rank 1 has taken it, and the root returns `Od + Op − T2` = 6,000 after
/// that call, at 56,000 (by hand): 42,590 beyond its `T1` (13,410), the sender's
/// synchronization. Rank 1's receive ends at 50,000 + `T3` 9,120 = 59,120. Without
/// `departs_upto`, or with rank 1 there first (its receive posted at 0: the message leaves at
/// 7,410, is taken on arrival, the send returns at its `T1`), the root returns at 13,410.
#[test]
fn a_held_send_in_a_collective_returns_once_its_receiver_has_taken_it() {
    let root = "root=0 bytes=1000 recv_bytes=0".to_string();
    let leaf = "root=0 bytes=0 recv_bytes=1000".to_string();
    let set = [
        "--L", "0", "--scale", "G=0", "--Od", "6000", "--format", "json",
    ];
    let held = ["--departs-upto", "256", "--progress", "calls"];
    let (_d, late) = coll_trace("MPI_Bcast", &[(0, root.clone()), (50_000, leaf.clone())]);
    let v = json(&myrinet(&late, &[&set[..], &held].concat()));
    let r0 = rank_ns(&v, 0);
    assert!((r0[2] - 13_410.0).abs() < 1e-6, "communication: {r0:?}");
    assert!((r0[3] - 42_590.0).abs() < 1e-6, "sender sync: {r0:?}");
    let r1 = rank_ns(&v, 1);
    assert!((r1[2] - 9_120.0).abs() < 1e-6, "rank 1's T3: {r1:?}");
    for (f, args) in [(&late, &held[2..]), (&late, &held[..2])] {
        let v = json(&myrinet(f, &[&set[..], args].concat()));
        let r0 = rank_ns(&v, 0);
        assert!((r0[2] - 13_410.0).abs() < 1e-6 && r0[3] == 0.0, "{r0:?}");
    }
    let (_d, early) = coll_trace("MPI_Bcast", &[(0, root), (0, leaf)]);
    let v = json(&myrinet(&early, &[&set[..], &held].concat()));
    let r0 = rank_ns(&v, 0);
    assert!((r0[2] - 13_410.0).abs() < 1e-6 && r0[3] == 0.0, "{r0:?}");
}

/// A collective whose record the tracer flagged `clean` (its send buffer unchanged since the
/// rank's last send from it, the model's §13) costs its rank's messages of its own data with
/// the set's clean variant, as a point-to-point message so flagged: Myrinet, 2 ranks, 16,384
/// bytes (above `S` = 16,383), `--clean 0.5`. One message of 16,384 B received by a call at 0
/// ends at 318,014.98 (the model's §6 vector), flagged at 173,267.49 (28,520 of `o + T5 + o + L`
/// the scaling leaves, then half of 289,494.98: tests/cli_overheads.rs). A binomial Bcast's
/// root flagged: its receiver so; its receiver flagged instead (it sends nothing): as before.
/// A Gather's leaf flagged: the root so. An Allgather (one exchange) with rank 0 flagged: rank
/// 1 receives the clean message, rank 0 the other; both flagged, both so. An Allreduce, whose
/// recursive doubling sends a copy of its vector: as unflagged. Its binary conversion keeps the
/// flag.
#[test]
fn a_clean_collectives_own_messages_cost_the_clean_set() {
    let trace = |op: &str, zero: &str, one: &str| {
        format!(
            "loggps-trace 1\nranks 2\n\
             params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
             0 MPI_Init 0 0\n0 {op} 0 60 {zero}\n0 MPI_Finalize 60 70\n\
             1 MPI_Init 0 0\n1 {op} 0 60 {one}\n1 MPI_Finalize 60 70\n"
        )
    };
    let ends = |text: &str| -> [f64; 2] {
        let (_d, f) = text_trace("coll.txt", text);
        let v = json(&[&f, "--clean", "0.5", "--format", "json"]);
        [rank_ns(&v, 0)[0], rank_ns(&v, 1)[0]]
    };
    let (plain, clean) = (318_014.98, 173_267.49);
    let bcast = |zero: &str, one: &str| {
        let root = "root=0 bytes=16384 recv_bytes=0";
        let leaf = "root=0 bytes=0 recv_bytes=16384";
        ends(&trace(
            "MPI_Bcast",
            &format!("{root}{zero}"),
            &format!("{leaf}{one}"),
        ))
    };
    assert_close(bcast("", "")[1], plain, "Bcast");
    assert_close(bcast(" flags=clean", "")[1], clean, "Bcast, root clean");
    assert_close(
        bcast("", " flags=clean")[1],
        plain,
        "Bcast, receiver flagged",
    );
    let gather = ends(&trace(
        "MPI_Gather",
        "root=0 bytes=16384 recv_bytes=32768",
        "root=0 bytes=16384 recv_bytes=0 flags=clean",
    ));
    assert_close(gather[0], clean, "Gather, leaf clean");
    let allgather = |zero: &str, one: &str| {
        let each = "bytes=16384 recv_bytes=32768";
        trace(
            "MPI_Allgather",
            &format!("{each}{zero}"),
            &format!("{each}{one}"),
        )
    };
    let one = ends(&allgather(" flags=clean", ""));
    assert_close(one[0], plain, "Allgather, rank 0's message clean: rank 0");
    assert_close(one[1], clean, "Allgather, rank 0's message clean: rank 1");
    let both = ends(&allgather(" flags=clean", " flags=clean"));
    assert_close(both[0], clean, "Allgather, both clean");
    assert_close(both[1], clean, "Allgather, both clean");
    // An Allreduce by recursive doubling copies its vector before sending it: never clean.
    let allreduce = |flags: &str| {
        let each = format!("bytes=16384 recv_bytes=16384{flags}");
        ends(&trace("MPI_Allreduce", &each, &each))
    };
    assert_eq!(allreduce(" flags=clean"), allreduce(""), "Allreduce");
    let (d, f) = text_trace("allgather.txt", &allgather(" flags=clean", ""));
    let bin = d.path().join("allgather.bin");
    let out = run(&["convert", &f, bin.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let v = json(&[bin.to_str().unwrap(), "--clean", "0.5", "--format", "json"]);
    assert_close(rank_ns(&v, 1)[0], clean, "the binary's");
}

/// A set's `clean_oneway` costs a clean collective's own messages whose step sends alone (a
/// Bcast's root, a Gather's leaf: one message one way), its `clean` those of a step that
/// receives too (an exchange): Myrinet as above, `clean` 0.5 and `clean_oneway` 0.25, in the
/// trace's own parameters. The one-way message ends at 28,520 + 0.25 · 289,494.98 =
/// 100,893.745; the Allgather's exchange at 173,267.49 still; `--clean 0.5` alone gives every
/// clean message 0.5. Its binary conversion and a parameter file keep it; a share ≤ 0 refused.
#[test]
fn a_one_way_clean_message_costs_the_one_way_share() {
    let trace = |op: &str, zero: &str, one: &str| {
        format!(
            "loggps-trace 1\nranks 2\n\
             params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383 \
             clean=0.5 clean_oneway=0.25\n\
             0 MPI_Init 0 0\n0 {op} 0 60 {zero}\n0 MPI_Finalize 60 70\n\
             1 MPI_Init 0 0\n1 {op} 0 60 {one}\n1 MPI_Finalize 60 70\n"
        )
    };
    let (oneway, exchange) = (28_520.0 + 0.25 * 289_494.98, 173_267.49);
    let ends = |text: &str, flags: &[&str]| -> [f64; 2] {
        let (_d, f) = text_trace("coll.txt", text);
        let v = json(&[&[f.as_str()], flags, &["--format", "json"]].concat());
        [rank_ns(&v, 0)[0], rank_ns(&v, 1)[0]]
    };
    let bcast = trace(
        "MPI_Bcast",
        "root=0 bytes=16384 recv_bytes=0 flags=clean",
        "root=0 bytes=0 recv_bytes=16384",
    );
    assert_close(ends(&bcast, &[])[1], oneway, "Bcast, root clean");
    assert_close(
        ends(&bcast, &["--clean", "0.5"])[1],
        exchange,
        "Bcast, --clean alone",
    );
    assert_close(
        ends(&bcast, &["--clean-oneway", "0.5"])[1],
        exchange,
        "Bcast, --clean-oneway 0.5",
    );
    let gather = trace(
        "MPI_Gather",
        "root=0 bytes=16384 recv_bytes=32768",
        "root=0 bytes=16384 recv_bytes=0 flags=clean",
    );
    assert_close(ends(&gather, &[])[0], oneway, "Gather, leaf clean");
    let each = "bytes=16384 recv_bytes=32768 flags=clean";
    let allgather = ends(&trace("MPI_Allgather", each, each), &[]);
    assert_close(allgather[0], exchange, "Allgather, an exchange");
    assert_close(allgather[1], exchange, "Allgather, an exchange");
    // The binary conversion and a parameter file carry it.
    let (d, f) = text_trace("bcast.txt", &bcast);
    let bin = d.path().join("bcast.bin");
    let out = run(&["convert", &f, bin.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let v = json(&[bin.to_str().unwrap(), "--format", "json"]);
    assert_close(rank_ns(&v, 1)[0], oneway, "the binary's");
    let toml = d.path().join("p.toml");
    std::fs::write(
        &toml,
        "L = 1160.0\no = 6550.0\nOs = 6.86\nOr = 2.57\nGs = 15.48\nGl = -0.74\ns = 8191\n\
         S = 16383\nclean = 0.5\nclean_oneway = [[4096, 0.25], [65536, 0.25]]\n",
    )
    .unwrap();
    let v = json(&[&f, "--params", toml.to_str().unwrap(), "--format", "json"]);
    assert_close(rank_ns(&v, 1)[0], oneway, "a file's");
    let out = run(&[&f, "--clean-oneway", "0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--clean-oneway") && err.contains("> 0"),
        "{err}"
    );
}
