//! What-if questions: parameters from a file, a platform or the trace, overridden by their own
//! flags, and `--sweep` over a parameter's values or a collective's algorithms.

mod common;

use common::{
    HEAD_TO_HEAD, UNMODELED_RING, assert_close, bcast4, fixture, json, myrinet, predicted_ns, run,
    synthesized, text_trace,
};
use serde_json::Value;

#[test]
fn parameter_precedence_and_overrides() {
    let f = fixture("rtt/k1000-w0.txt");
    let f = f.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("p.toml");
    std::fs::write(&toml, "[params]\nL = 640\no = 7820\nOs = 7.63\nOr = 12.77\nGs = 0.57\nGl = -12.74\ns = 1028\nS = 1028\n").unwrap();
    let v = json(&[
        f,
        "--format",
        "json",
        "--platform",
        "fast-ethernet",
        "--params",
        toml.to_str().unwrap(),
        "--S",
        "5",
    ]);
    assert_eq!(v["params"]["L"]["value"], 640.0);
    assert!(
        v["params"]["L"]["source"]
            .as_str()
            .unwrap()
            .starts_with("file ")
    );
    assert_eq!(v["params"]["S"]["value"], 5.0);
    assert_eq!(v["params"]["S"]["source"], "flag");
    let v = json(&[f, "--format", "json", "--platform", "cenju4"]);
    assert_eq!(v["params"]["o"]["value"], 7820.0);
    // cenju4 by hand: one-way k=1000 = T1+T2+T3 = (7820+7630) + (570+640) + (7820+12770) = 37250; RTT twice that.
    assert!((v["predicted_s"].as_f64().unwrap() * 1e9 - 74_500.0).abs() < 1e-6);
}

/// One 10,000-byte Send/Recv between two ranks, 10 ns of computation before and after.
const ONE_MESSAGE: &str = "loggps-trace 1\nranks 2\n\
    0 MPI_Init 0 0\n0 MPI_Send 10 20 bytes=10000 peer=1\n0 MPI_Finalize 30 40\n\
    1 MPI_Init 0 0\n1 MPI_Recv 10 20 bytes=10000 peer=0\n1 MPI_Finalize 30 40\n";

/// `--sweep` replays once per value, as many runs with that flag would, and says so per value.
/// By hand (the model documentation (src/model/MODEL.md) §2 and §4; myrinet, k = 10,000 >
/// s = 8,191), ts = tr = 10:
/// T1 = 6550 + 10000·6.86 = 75150, T2' = 8191·15.48 + 1809·(−0.74) + 1160 = 126618.02,
/// T3 = 6550 + 10000·2.57 = 32250, T5 = 6550 + 1160 + 6550 = 14260.
/// Eager (S = 10,000): the Send returns at 10 + T1 = 75160, the Recv at 10 + T1 + T2' + T3 =
/// 234028.02; each rank ends 10 ns later. Rendezvous (S = 1,000): the Send returns at
/// max(10 + 6550 + 1160, 10) + 6550 + T5 + T1 = 103680, the Recv at 7720 + 6550 + T5 + T1 + T2'
/// + T3 = 262548.02.
#[test]
fn sweep_replays_each_value_as_its_own_run_would() {
    let (_d, f) = text_trace("one.txt", ONE_MESSAGE);
    let v = json(&myrinet(
        &f,
        &["--sweep", "S=1000,10000", "--format", "json"],
    ));
    assert_eq!(v["parameter"], "S");
    assert!(v["params"].get("S").is_none() && v["params"]["L"]["value"] == 1160.0);
    assert_eq!(
        (v["ranks"].as_u64(), v["events"].as_u64()),
        (Some(2), Some(6))
    );
    assert!((v["measured_s"].as_f64().unwrap() - 30e-9).abs() < 1e-15);
    let p = &v["points"];
    let close = |x: &Value, ns: f64| (x.as_f64().unwrap() * 1e9 - ns).abs() < 1e-6;
    assert!(close(&p[0]["predicted_s"], 262558.02), "{}", p[0]);
    assert!(close(&p[1]["predicted_s"], 234038.02), "{}", p[1]);
    assert!(close(
        &p[0]["average"]["end_s"],
        (103690.0 + 262558.02) / 2.0
    ));
    assert!(close(
        &p[1]["average"]["end_s"],
        (75170.0 + 234038.02) / 2.0
    ));
    let ratio = p[1]["vs_first"].as_f64().unwrap();
    assert!((ratio - 234038.02 / 262558.02).abs() < 1e-12 && p[0]["vs_first"] == 1.0);

    // Each value as its own run: the same prediction to the last digit, on a trace of many
    // ranks and messages (20,000 bytes: rendezvous, then eager), and under LogGP.
    let dir = tempfile::tempdir().unwrap();
    let halo = ["--pattern", "halo2d", "--ranks", "16", "--iterations", "5"];
    let halo = &synthesized(dir.path(), &[&halo[..], &["--bytes", "20000"]].concat());
    for (args, name, values) in [
        (
            vec![halo.as_str(), "--platform", "myrinet"],
            "S",
            &["16383", "65536"][..],
        ),
        (
            vec![halo, "--platform", "myrinet", "--model", "loggp"],
            "g",
            &["0", "5000", "50000"],
        ),
        (vec![&f, "--platform", "cenju4"], "L", &["0", "640", "1e5"]),
    ] {
        let sweep = format!("{name}={}", values.join(","));
        let v = json(&[&args[..], &["--sweep", &sweep, "--format", "json"]].concat());
        let mut seen = Vec::new();
        for (k, value) in values.iter().enumerate() {
            let flag = format!("--{name}");
            let one = json(&[&args[..], &[&flag, value, "--format", "json"]].concat());
            let point = &v["points"][k];
            assert_eq!(
                point["value"].as_f64(),
                value.parse::<f64>().ok(),
                "{sweep}"
            );
            assert_eq!(point["predicted_s"], one["predicted_s"], "{sweep}: {value}");
            assert_eq!(point["average"], one["average"], "{sweep}: {value}");
            seen.push(one["predicted_s"].as_f64().unwrap());
        }
        // The values change the prediction (the sweep does vary the parameter).
        assert!(seen.windows(2).all(|w| w[0] != w[1]), "{sweep}: {seen:?}");
    }
}

/// A value that deadlocks is a row that says so, the others replay; where every value fails,
/// the sweep fails as one run would, naming the S from which the sends it blocked replay. Bad specs are usage errors that say what is wrong.
#[test]
fn sweep_reports_values_that_fail_and_refuses_bad_specs() {
    let (_d, f) = text_trace("h2h.txt", HEAD_TO_HEAD);
    let out = run(&myrinet(
        &f,
        &["--sweep", "S=1000,65536", "--format", "json"],
    ));
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: S=1000: ") && err.contains("deadlock under S = 1000"),
        "{err}"
    );
    assert!(v["points"][0]["predicted_s"].is_null());
    assert!(
        v["points"][0]["error"]
            .as_str()
            .unwrap()
            .contains("wait on each other")
    );
    let one = json(&myrinet(&f, &["--S", "65536", "--format", "json"]));
    assert_eq!(v["points"][1]["predicted_s"], one["predicted_s"]);
    // --svg: a bar per value, the one that failed without segments and saying so.
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("s.svg");
    let drawn = run(&myrinet(
        &f,
        &["--sweep", "S=1000,65536", "--svg", svg.to_str().unwrap()],
    ));
    assert!(drawn.status.success());
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(svg.matches("<title>").count(), 4, "{svg}");
    assert!(
        svg.contains(">S=1000<") && svg.contains(">S=65536<"),
        "{svg}"
    );
    assert!(
        svg.contains(">failed: ") && svg.contains("deadlock"),
        "{svg}"
    );
    let runtime = format!(">{:.6} s<", one["predicted_s"].as_f64().unwrap());
    assert!(svg.contains(&runtime), "{runtime} in {svg}");
    assert_eq!(v["points"][1]["vs_first"], 1.0);

    let table = run(&[&f, "--platform", "myrinet", "--sweep", "S=1000,65536"]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("(L o Os Or Gs Gl s from platform myrinet; S swept)"),
        "{table}"
    );
    assert!(table.contains("(stderr has the rest)"), "{table}");
    let csv = run(&myrinet(
        &f,
        &["--sweep", "S=1000,65536", "--format", "csv"],
    ));
    let csv = String::from_utf8_lossy(&csv.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("S,predicted_s,vs_first,error_pct,end_s,"));
    assert!(lines[1].starts_with("1000,,,,,,,,,\"") && lines[1].contains("deadlock"));

    let out = run(&[&f, "--platform", "myrinet", "--sweep", "S=1000,2000"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: ") && err.contains("deadlock under S = 1000"),
        "{err}"
    );
    // Both ranks' 65,536-byte sends got past each other when traced: the S that replays them.
    assert!(
        err.contains("the traced run got past these sends")
            && err.contains("--S 65536 or more replays them so"),
        "{err}"
    );

    for (spec, why) in [
        (
            "S",
            "--sweep S: expected NAME=V1,V2,… (e.g. S=4096,16384,65536 or \
             allreduce=ring,rabenseifner)",
        ),
        (
            "X=1",
            "--sweep X=1: LogGPS has no parameter \"X\"; it has L o Os Or Gs Gl s S poll gamma oc copy Od Op Osd rendezvous_sender bounce bounce_clean clean clean_oneway post held held_reduce alloc alias drained wait (and the placement ranks-per-node), and a \
             collective's algorithms are swept by its name (barrier bcast reduce allreduce gather \
             scatter allgather alltoall reduce_scatter scan exscan); one class's sets' parameter \
             is swept as --set names it (network.L, node.o)",
        ),
        (
            "g=1",
            "--sweep g=1: LogGPS has no parameter \"g\"; it has L o Os Or Gs Gl s S poll gamma oc copy Od Op Osd rendezvous_sender bounce bounce_clean clean clean_oneway post held held_reduce alloc alias drained wait (and the placement ranks-per-node), and a \
             collective's algorithms are swept by its name (barrier bcast reduce allreduce gather \
             scatter allgather alltoall reduce_scatter scan exscan); one class's sets' parameter \
             is swept as --set names it (network.L, node.o)",
        ),
        ("S=", "--sweep S=: \"\" is not a number"),
        ("L=1,,2", "--sweep L=1,,2: \"\" is not a number"),
        (
            "S=1.5",
            "--sweep S=1.5: S takes whole numbers of bytes ≥ 0, not 1.5",
        ),
        (
            "s=-1",
            "--sweep s=-1: s takes whole numbers of bytes ≥ 0, not -1",
        ),
        ("L=nan", "--sweep L=nan: nan is not a finite number"),
    ] {
        let out = run(&[&f, "--platform", "myrinet", "--sweep", spec]);
        assert_eq!(out.status.code(), Some(2), "{spec}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("error: {why}\n")
        );
    }
    let out = run(&[&f, "--platform", "myrinet", "--S", "10", "--sweep", "S=1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--S sets the parameter the sweep varies"),
        "{err}"
    );
    let out = run(&[
        &f,
        "--model",
        "loggp",
        "--platform",
        "myrinet",
        "--sweep",
        "S=1",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("LogGP has no parameter \"S\"; it has L o g G"),
        "{err}"
    );
}

/// `--sweep OP=ALG1,ALG2,…`: the algorithms of one collective in turn. On the four-rank
/// 1000-byte Bcast (Myrinet, one hop 39,170 ns, see `traced_collectives_by_algorithm`):
/// binomial, Open MPI's choice at that size, takes two hops, a pipelined chain three. Every
/// algorithm predicts what `--coll OP=ALG` alone does; bad specs and conflicts with `--coll`
/// are usage errors; an operation the trace never calls is a warning.
#[test]
fn sweep_of_a_collectives_algorithms() {
    let (_d, f) = text_trace("bcast.txt", &bcast4());
    let v = json(&myrinet(
        &f,
        &[
            "--sweep",
            "bcast=tuned,binomial,pipeline",
            "--format",
            "json",
        ],
    ));
    assert_eq!(v["parameter"], "bcast");
    let p = &v["points"];
    let ns = |k: usize| p[k]["predicted_s"].as_f64().unwrap() * 1e9;
    assert_eq!(
        (&p[0]["value"], &p[2]["value"]),
        (&"tuned".into(), &"pipeline".into())
    );
    assert!((ns(0) - 2.0 * 39_170.0).abs() < 1e-6, "{}", p[0]);
    assert!((ns(1) - 2.0 * 39_170.0).abs() < 1e-6, "{}", p[1]);
    assert!((ns(2) - 3.0 * 39_170.0).abs() < 1e-6, "{}", p[2]);
    assert!((p[2]["vs_first"].as_f64().unwrap() - 1.5).abs() < 1e-12);
    let tuned = json(&myrinet(&f, &["--coll", "bcast=tuned", "--format", "json"]));
    assert_eq!(p[0]["predicted_s"], tuned["predicted_s"]);

    let all = ["binomial", "scatter-allgather", "pipeline", "postal"];
    let v = json(&myrinet(
        &f,
        &[
            "--sweep",
            &format!("bcast={}", all.join(",")),
            "--format",
            "json",
        ],
    ));
    let mut seen = Vec::new();
    for (k, algo) in all.iter().enumerate() {
        let coll = format!("bcast={algo}");
        let one = json(&myrinet(&f, &["--coll", &coll, "--format", "json"]));
        assert_eq!(v["points"][k]["value"], *algo);
        assert_eq!(v["points"][k]["predicted_s"], one["predicted_s"], "{algo}");
        assert_eq!(v["points"][k]["average"], one["average"], "{algo}");
        seen.push(one["predicted_s"].as_f64().unwrap());
    }
    assert!(seen.windows(2).all(|w| w[0] != w[1]), "{seen:?}");
    let table = run(&myrinet(&f, &["--sweep", "bcast=postal,scatter-allgather"]));
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("(L o Os Or Gs Gl s S from platform myrinet; bcast swept)"));
    assert!(table.contains("\nscatter-allgather "), "{table}");
    assert!(table.contains("\n           postal "), "{table}");

    let out = run(&myrinet(&f, &["--sweep", "allreduce=ring,tuned"]));
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        "warning: the trace has no allreduce call: every algorithm predicts the same\n"
    );
    for (args, why) in [
        (
            &["--sweep", "bcast=binomial,nope"][..],
            "--sweep bcast=binomial,nope: \"nope\" is not an algorithm of bcast: it has binomial \
             scatter-allgather pipeline postal (and tuned: Open MPI 4.1's choice for each call's \
             size)",
        ),
        (
            &["--sweep", "bcast=postal", "--coll", "measured"],
            "--sweep bcast=postal: --coll measured keeps the traced durations; a sweep of bcast's \
             algorithms models them",
        ),
        (
            &[
                "--sweep",
                "bcast=postal",
                "--coll",
                "bcast=pipeline,allreduce=ring",
            ],
            "--sweep bcast=postal: --coll sets the algorithm of bcast the sweep varies; give one \
             or the other",
        ),
    ] {
        let out = run(&myrinet(&f, args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("error: {why}\n")
        );
    }
    // A value whose calls cannot be modeled replays them as measured: its row is marked, its
    // warning in the JSON (a ring on 32,768 ranks: more exchanges than a lockstep may have, see
    // `unmodeled_collectives_are_counted_by_reason`).
    let dir = tempfile::tempdir().unwrap();
    let big = &synthesized(dir.path(), &UNMODELED_RING);
    let sweep = ["--sweep", "allreduce=recursive-doubling,ring"];
    let v = json(&myrinet(big, &[&sweep[..], &["--format", "json"]].concat()));
    assert!(
        v["points"][0].get("warnings").is_none(),
        "{}",
        v["points"][0]
    );
    let w = v["points"][1]["warnings"][0].as_str().unwrap();
    assert!(
        w.starts_with("3 collective call(s) replayed as measured"),
        "{w}"
    );
    let table = run(&myrinet(big, &sweep));
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains(&format!("\n{:>18}  ", "ring*")), "{table}");
    assert!(
        table.contains("\n* its replay gave warnings (on stderr"),
        "{table}"
    );

    // Other collectives' choices in --coll are taken beside the sweep.
    let v = json(&myrinet(
        &f,
        &[
            "--sweep",
            "bcast=postal",
            "--coll",
            "allreduce=ring",
            "--format",
            "json",
        ],
    ));
    let one = json(&myrinet(
        &f,
        &["--coll", "bcast=postal,allreduce=ring", "--format", "json"],
    ));
    assert_eq!(v["points"][0]["predicted_s"], one["predicted_s"]);
}

/// `--sweep poll=…` replays once per cost of a failed poll, each row what `--poll V` alone
/// predicts (a Test that failed, 100 ns when traced: rank 0 ends at 6550 + 1 + V with myrinet).
#[test]
fn a_sweep_over_the_cost_of_a_failed_poll() {
    let t = "loggps-trace 1\nranks 1\n0 MPI_Irecv 0 1 bytes=8 peer=-2 tag=0 req=0\n\
             0 MPI_Test 2 102\n0 MPI_Wait 103 104 done=0:-2:-1\n";
    let (_d, f) = text_trace("sweep-poll.txt", t);
    let v = json(&[
        &f,
        "--platform",
        "myrinet",
        "--sweep",
        "poll=10,1000",
        "--format",
        "json",
    ]);
    let points = v["points"].as_array().unwrap();
    for (p, poll) in points.iter().zip([10.0, 1000.0]) {
        let alone = predicted_ns(&[&f, "--platform", "myrinet", "--poll", &poll.to_string()]);
        assert_close(
            p["predicted_s"].as_f64().unwrap() * 1e9,
            alone,
            "row = --poll alone",
        );
    }
    assert!(points[1]["predicted_s"].as_f64() > points[0]["predicted_s"].as_f64());
}

/// A trace recorded with `btl_vader_eager_limit` 65536 and a set of `S = 4040` (a calibration at
/// the default): predicting it warns, naming the sizes whose protocol changes and what to pass;
/// the same with `--S 65536` (the user's what-if) or a platform's parameters does not, nor an
/// MPICH trace's cell size; an MPICH trace's modeled collectives are warned of, not with
/// `--coll measured`.
#[test]
fn the_traces_eager_limit_and_the_sets_s_agree_or_say_so() {
    let body = "params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=4040\n\
        0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes=20000 peer=1 tag=0\n0 MPI_Barrier 10 20\n0 MPI_Finalize 20 30\n\
        1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=20000 peer=0 tag=0\n1 MPI_Barrier 10 20\n1 MPI_Finalize 20 30\n";
    let ompi = format!(
        "loggps-trace 1\nranks 2\nlibrary \"Open MPI v4.1.4\"\neager_limit btl_vader_eager_limit 65536\n{body}"
    );
    let (_d, f) = text_trace("ompi.txt", &ompi);
    let err = |args: &[&str]| {
        let out = run(&[&[f.as_str()], args].concat());
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let w = err(&[]);
    assert!(
        w.contains("btl_vader_eager_limit = 65536 B and the parameters' eager limit is S = 4040 B")
            && w.contains("4041–65536 B are costed as rendezvous")
            && w.contains("--S 65536"),
        "{w}"
    );
    assert!(!err(&["--S", "65536"]).contains("eager limit"));
    assert!(!err(&["--platform", "myrinet"]).contains("eager limit"));
    // A what-if that moves the run's messages to the other protocol says how many, and that
    // the computation it keeps as traced may move too (the model's §11); none where it moves
    // none, nor for a platform's S.
    let moved = "--S 16384: 1 send(s) of 16385–65536 B (20000 bytes) that the run, at \
                 btl_vader_eager_limit = 65536 B, sent eagerly are costed by rendezvous";
    let w = err(&["--S", "16384"]);
    assert!(w.contains(moved) && w.contains("kept as traced"), "{w}");
    for args in [
        &["--S", "65536"][..],
        &["--S", "30000"],
        &["--platform", "myrinet"],
    ] {
        assert!(!err(args).contains("kept as traced"), "{args:?}");
    }
    let default = ompi.replace("btl_vader_eager_limit 65536", "btl_vader_eager_limit 4096");
    let (_d3, h) = text_trace("default.txt", &default);
    let out = run(&[&h, "--S", "65536"]);
    let w = String::from_utf8_lossy(&out.stderr);
    assert!(
        w.contains("--S 65536: 1 send(s) of 4097–65536 B (20000 bytes)")
            && w.contains("sent by rendezvous are costed eagerly"),
        "{w}"
    );
    let mpich = format!(
        "loggps-trace 1\nranks 2\nlibrary \"MPICH Version: 4.0.2\"\n\
         eager_limit MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE 69632\n{body}"
    );
    let (_d2, g) = text_trace("mpich.txt", &mpich);
    let out = run(&[&g]);
    let w = String::from_utf8_lossy(&out.stderr);
    assert!(!w.contains("eager limit"), "{w}");
    assert!(
        w.contains("recorded under MPICH") && w.contains("--coll measured"),
        "{w}"
    );
    let out = run(&[&g, "--coll", "measured"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("MPICH"));
    let info = run(&["info", &g]);
    assert!(String::from_utf8_lossy(&info.stdout).contains("not where its messages switch"));
}

/// A message a rank sends itself is a local copy, eager at any size: a 100,000-byte Isend to
/// itself that a Test completed before its Recv was called replays at every `S`, `S = 0`
/// included (as rendezvous it would wait for a receive its rank calls only later: a what-if
/// must not turn a Test, which never blocks, into a deadlock). `o` 50, `L` 100, nothing per
/// byte: the Isend at 100 returns at 150, its message arrives at 250; the Test called at 250
/// returns at 300 (`o`); the Recv called at 400 returns at 450; Finalize at 550.
#[test]
fn a_message_to_itself_is_eager_at_any_s() {
    let t = "loggps-trace 1\nranks 1\n0 MPI_Init 0 0\n\
             0 MPI_Isend 100 200 bytes=100000 peer=0 tag=0 req=0\n\
             0 MPI_Test 300 400 done=0:-1:-1\n0 MPI_Recv 500 900 bytes=100000 peer=0 tag=0\n\
             0 MPI_Finalize 1000 1010\n";
    let (dir, trace) = common::text_trace("self.txt", t);
    let p = dir.path().join("p.toml");
    std::fs::write(
        &p,
        "L = 100\no = 50\nOs = 0\nOr = 0\nGs = 0\nGl = 0\ns = 1000000\nS = 10\n",
    )
    .unwrap();
    let p = p.to_str().unwrap();
    for s in ["0", "10", "1000000"] {
        let v = json(&[&trace, "--params", p, "--S", s, "--format", "json"]);
        let ns = v["predicted_s"].as_f64().unwrap() * 1e9;
        assert!((ns - 550.0).abs() < 1e-6, "S = {s}: {ns}");
    }
    // sensitivity replays S down to 0 and finds it does not matter
    let out = common::run(&["sensitivity", &trace, "--params", p]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("S does not matter here"), "{text}");
}
