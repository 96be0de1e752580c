//! A real 2-rank calibration on this machine with Open MPI (short sweep): the fit finds the
//! shared-memory eager limit (`btl_vader_eager_limit`, 4096 bytes including its header) and the
//! raised one under `OMPI_MCA_btl_vader_eager_limit=65536`, agrees with what the library
//! reports through the MPI tool interface, and writes a valid set in bands (no parameter
//! negative).
//!
//! Needs `make -C tracer MPI=openmpi` first; `tests/ci.sh` does that and sets
//! `LOGGPS_MPI_TESTS=1`, under which a missing build is a failure, not a skip.

use std::path::{Path, PathBuf};
use std::process::Command;

fn build_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tracer/build-openmpi");
    let ready = dir.join("loggps-rtt").exists() && dir.join("libloggps-trace.so").exists();
    if !ready && std::env::var_os("LOGGPS_MPI_TESTS").is_some() {
        panic!(
            "{} lacks loggps-rtt or libloggps-trace.so: run `make -C tracer MPI=openmpi`",
            dir.display()
        );
    }
    ready.then_some(dir)
}

/// Calibrates with `extra_env` (and `--eager-mpirun` where `eager` names a launcher) and
/// returns (S from the TOML, the command's stdout, the higher limit its eager bands above S
/// end at, if any).
fn calibrate(
    dir: &Path,
    max_bytes: u64,
    extra_env: &[(&str, &str)],
    eager: Option<&str>,
) -> (u64, String, Option<u64>) {
    let out_dir = tempfile::tempdir().unwrap();
    let toml = out_dir.path().join("p.toml");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_loggps-predict"));
    cmd.args([
        "calibrate",
        "--mpirun",
        "mpirun.openmpi",
        "--reps",
        "15",
        "--per-octave",
        "2",
    ])
    .args([
        "--max-bytes",
        &max_bytes.to_string(),
        "-o",
        toml.to_str().unwrap(),
        "--samples",
        out_dir.path().join("s.tsv").to_str().unwrap(),
    ])
    .arg("--rtt")
    .arg(dir.join("loggps-rtt"))
    .arg("--tracer")
    .arg(dir.join("libloggps-trace.so"))
    .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
    .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    if let Some(m) = eager {
        cmd.args(["--eager-mpirun", m]);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Two sets where the launches held two placements of the cores (the model's §12): each is
    // checked alike, the first (the majority's) is the one returned.
    let sets = loggps_predict::model::read_param_sets(&toml).unwrap();
    for q in &sets[1..] {
        assert_eq!(q.invalid(), None, "{stdout}");
        assert!(q.bands.is_some() && q.cores.is_some(), "{q:?}\n{stdout}");
    }
    // The samples: the first set's round trips and calls, a second set's beside them.
    let rows = |f: &str| {
        let text = std::fs::read_to_string(out_dir.path().join(f)).unwrap_or_default();
        let kinds: Vec<String> = (text.lines().skip(1))
            .map(|l| l.split('\t').next().unwrap_or("").to_string())
            .collect();
        ["rtt", "send", "recv"].map(|k| kinds.iter().filter(|x| *x == k).count())
    };
    let [rtt, send, recv] = rows("s.tsv");
    assert!(
        rtt > 0 && send > 0 && send == recv,
        "{rtt} {send} {recv}\n{stdout}"
    );
    match sets.len() {
        1 => assert!(!out_dir.path().join("s-second.tsv").exists()),
        _ => {
            let [rtt2, send2, recv2] = rows("s-second.tsv");
            assert!(rtt2 > 0 && send2 > 0 && send2 == recv2, "{stdout}");
        }
    }
    // Under --eager-mpirun a second set has eager bands above S where a launch ran at its
    // placement (its log says which), as the first: the file's and the log's agree.
    if let (Some(q), Some(_)) = (sets.get(1), eager) {
        let log = String::from_utf8_lossy(&out.stderr);
        let unmeasured = log.contains("ran at the second set's placement");
        let has = q.bands.as_ref().is_some_and(|b| b.eager_above().is_some());
        assert_eq!(has, !unmeasured, "{stdout}\n{log}");
        let file = std::fs::read_to_string(&toml).unwrap();
        assert_eq!(
            has,
            file.contains("# eager_bands of the second set"),
            "{file}"
        );
    }
    let p = sets[0];
    assert!(toml.with_extension("svg").exists());
    // MPI put the two ranks on one node: the set is a node's, with where its cores ran.
    assert_eq!(
        p.class,
        Some(loggps_predict::model::Class::Node),
        "{stdout}"
    );
    assert!(p.cores.is_some_and(|c| c > 0.0), "{stdout}");
    let bands = p
        .bands
        .unwrap_or_else(|| panic!("bands in {}", toml.display()));
    assert_eq!(p.invalid(), None, "{stdout}");
    for b in bands.as_slice() {
        assert!(
            b.o >= 0.0 && b.L >= 0.0 && b.Os >= 0.0 && b.Or >= 0.0,
            "{b:?}\n{stdout}"
        );
    }
    assert!(stdout.contains("RTT error rms/max"), "{stdout}");
    // The failed poll is measured and written, commented out (traced durations are the
    // default): a real call of Open MPI's on shared memory, tens of nanoseconds.
    let text = std::fs::read_to_string(&toml).unwrap();
    let poll: f64 = text
        .lines()
        .find_map(|l| l.strip_prefix("# poll = "))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("a `# poll = NS` line in:\n{text}"));
    assert!(poll > 1.0 && poll < 10_000.0, "poll = {poll}\n{text}");
    assert_eq!(p.poll, None, "{text}");
    // A posted receive (an MPI_Irecv of a message not yet sent), measured and written into
    // the set: a real call, tens of nanoseconds, far below the message's `o` in the paper's
    // Myrinet (6.55 µs).
    let post = p.post.unwrap_or_else(|| panic!("post in:\n{text}"));
    assert!(post > 1.0 && post < 5_000.0, "post = {post}\n{text}");
    assert!(stdout.contains("post        "), "{stdout}");
    // gamma, from the library's own reduction of doubles: no core adds faster than 1 TB/s of
    // them, and none this slow (100 MB/s) runs MPI programs.
    // By size (the model's §15): the probe's seven sizes, one double (8 B: the call's fixed
    // cost, under 5 µs however slow the core) and 1 KiB to 1 MiB, each its time a byte.
    let sizes = [8, 1024, 4096, 16384, 65536, 262_144, 1_048_576];
    let sane = |k: u64, rate: f64| match k {
        8 => rate > 0.0 && rate * 8.0 < 5_000.0,
        _ => rate > 0.001 && rate < 10.0,
    };
    let gamma = p.gamma.unwrap_or_else(|| panic!("gamma in:\n{text}"));
    let at: Vec<u64> = gamma.points().iter().map(|x| x.0).collect();
    assert_eq!(at, sizes, "gamma's sizes\n{text}");
    for &(k, g) in gamma.points() {
        assert!(sane(k, g), "gamma = {g} at {k} B\n{text}");
    }
    assert!(text.contains("gamma = [[8, "), "{text}");
    assert!(
        stdout.contains("gamma ") && stdout.contains(" at 1048576 B"),
        "{stdout}"
    );
    // copy, memcpy over 8 B–1 MiB: no core copies faster than 1 TB/s or slower than 100 MB/s
    // from its own cache and memory (0.001–10 ns/B), at each size.
    let copy = p.copy.unwrap_or_else(|| panic!("copy in:\n{text}"));
    let at: Vec<u64> = copy.points().iter().map(|x| x.0).collect();
    assert_eq!(at, sizes, "copy's sizes\n{text}");
    for &(k, c) in copy.points() {
        assert!(sane(k, c), "copy = {c} at {k} B\n{text}");
    }
    assert!(stdout.contains("copy "), "{stdout}");
    // alloc, a malloc and free of a collective's temporary: a real call, under 10 µs.
    let alloc = p.alloc.unwrap_or_else(|| panic!("alloc in:\n{text}"));
    assert!(alloc > 0.0 && alloc < 10_000.0, "alloc = {alloc}\n{text}");
    assert!(
        stdout.contains("alloc       ") && stdout.contains("clock's own"),
        "{stdout}"
    );
    // Open MPI 4.1 on shared memory has no progress thread: a posted receive's message waits
    // for its rank's next MPI call, which the probe sees and the file says.
    assert!(p.progress_at_calls, "{stdout}\n{text}");
    assert!(text.contains("progress = \"calls\""), "{text}");
    assert!(stdout.contains("progress    calls: "), "{stdout}");
    // The machine's detours, measured by both ranks of each launch spinning on the clock: a
    // rate, said on the screen (a warning where a 20 µs repetition catches one more than 10% of
    // the time) and in the file; 2 ranks in each of the set's launches.
    let line = (stdout.lines())
        .find(|l| l.starts_with("detours     ") || l.starts_with("WARNING     detours: "))
        .unwrap_or_else(|| panic!("no detours line in:\n{stdout}"));
    let rate: f64 = (line.split(" times a millisecond").next())
        .and_then(|x| x.rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!((0.0..1000.0).contains(&rate), "{line}");
    assert!(line.contains(" ranks' 20 ms over the launches"), "{line}");
    assert!(text.contains("# detours: "), "{text}");
    // oc, fitted to the loop of collectives run untraced after its traced run: never
    // negative, and no library on one machine spends 100 µs of its own on a 2-rank collective
    // call; said on the screen and in the file, with a round of the loop's 9 calls measured
    // untraced (above nothing: a 2-rank 8-byte collective takes 50 ns at least, and no round 1
    // ms) and the traced loop's own fit beside it.
    let oc = p.oc.unwrap_or_else(|| panic!("oc in:\n{text}"));
    assert!((0.0..100_000.0).contains(&oc), "oc = {oc}\n{text}");
    assert!(
        text.contains("# oc: a loop of 8-byte collectives of every kind on 2 ranks, run untraced"),
        "{text}"
    );
    let round: f64 = (stdout.split("a round of its 9 calls took ").nth(1))
        .and_then(|x| x.split(" ns untraced").next()?.parse().ok())
        .unwrap_or_else(|| panic!("no untraced round in:\n{stdout}"));
    assert!((450.0..1e6).contains(&round), "{round}\n{stdout}");
    assert!(
        stdout.contains("; traced, its calls but each kind's first"),
        "{stdout}"
    );
    // The exchanges (the round-trip program's --exchange, traced, replayed with the set): a
    // line for each size up to the sweep's largest, measured and predicted, and two messages
    // each way take more than half as long as one. Not necessarily longer: at far cores two
    // 256 KiB messages each way took 51 µs against one's 57 µs in one launch (the model's §14:
    // there two messages at once cost less than one in flight).
    assert!(stdout.contains("exchange    traced at cores "), "{stdout}");
    // ... against the same exchanges untraced where a launch right after ran at its placement
    // (the tracer's records between the calls overlap a second message's cost)
    assert!(
        stdout.contains("against the same exchanges untraced")
            || stdout.contains("against the traced ones (the tracer's time kept)"),
        "{stdout}"
    );
    let sizes = loggps_predict::calibrate::exchange::sizes(max_bytes);
    for k in sizes.split(',') {
        let head = format!("exchange    {k} B: 1 each way ");
        let line = (stdout.lines().find(|l| l.starts_with(&head)))
            .unwrap_or_else(|| panic!("no exchange of {k} B in:\n{stdout}"));
        let measured: Vec<f64> = (line.split(" µs measured").map(|x| x.rsplit(' ').next()))
            .filter_map(|x| x?.parse().ok())
            .collect();
        assert!(
            measured.len() == 2 && measured[1] > 0.5 * measured[0] && measured[0] > 0.0,
            "{line}"
        );
    }
    // The bounce probe ran in the same launches: where one ran at its set's placement (its
    // cores within 2× of the set's) and a size lies above S, both ways' round trips said and
    // the set's `bounce` (≥ 0, the model's §13) written; how much a bounced buffer costs is the
    // placement's (about 0 on cores sharing a cache).
    // ("traced at cores A ns …, predicted with the set of B ns (of N launches …")
    let at_its_set = stdout.lines().any(|l| {
        let ns: Vec<f64> = (l.strip_prefix("exchange    traced at cores ").into_iter())
            .flat_map(|rest| rest.split(' ').filter_map(|w| w.parse().ok()))
            .take(2)
            .collect();
        matches!(ns[..], [a, b] if a.max(b) < 2.0 * a.min(b))
    });
    if at_its_set && sizes.split(',').any(|k| k.parse::<u64>().unwrap() > p.S) {
        let line = report_line(&stdout, "bounce      ");
        assert!(line.contains("µs bounced"), "{line}");
        // and the third way, from a buffer written once, against the sweep's (how much less
        // it takes is the machine's), the set's `clean` the ratio the line names
        let clean = report_line(&stdout, "clean       ");
        assert!(
            clean.contains("against one from a buffer written before each send"),
            "{clean}"
        );
        // the set's `clean` the shares the line names, one a size above S it timed
        let set = p.clean.unwrap_or_else(|| panic!("no clean in:\n{text}"));
        assert!(clean.starts_with(&set.to_string()), "{set} {clean}");
        let probed = loggps_predict::calibrate::bounce::sizes(max_bytes);
        let above: Vec<u64> = (probed.split(',').map(|k| k.parse().unwrap()))
            .filter(|&k| k > p.S)
            .collect();
        assert!(
            !set.points().is_empty() && set.points().iter().all(|x| above.contains(&x.0)),
            "{set} {above:?}"
        );
        // and, the exchanges timed, its `clean_oneway` the round trips' shares at the same
        // sizes, as its line names them
        let oneway = p
            .clean_oneway
            .unwrap_or_else(|| panic!("no clean_oneway in:\n{text}"));
        let oneway_line = report_line(&stdout, "clean_oneway ");
        assert!(
            oneway_line.starts_with(&format!("{oneway}: a round trip")),
            "{oneway} {oneway_line}"
        );
        assert!(
            (oneway.points().iter().map(|x| x.0)).eq(set.points().iter().map(|x| x.0)),
            "{oneway} {set}"
        );
        // and its `bounce` a rate at each of those sizes (≥ 0), as the line says them
        let bounce = p.bounce.unwrap_or_else(|| panic!("no bounce in:\n{text}"));
        assert!(
            line.contains(&format!("same peer costs more, ns a byte: {bounce}")),
            "{bounce} {line}"
        );
        assert!(
            (bounce.points().iter().map(|x| x.0)).eq(above.iter().copied()),
            "{bounce} {above:?}"
        );
        // and its `bounce_clean` (a message from a buffer written once into one its receiver
        // has just sent from, against one into its own) a rate at the same sizes, as its line
        // says them
        let bounce_clean =
            (p.bounce_clean).unwrap_or_else(|| panic!("no bounce_clean in:\n{text}"));
        let clean_line = report_line(&stdout, "bounce_clean ");
        assert!(
            clean_line.starts_with(&format!("{bounce_clean} ns a byte more")),
            "{bounce_clean} {clean_line}"
        );
        assert!(
            (bounce_clean.points().iter().map(|x| x.0)).eq(above.iter().copied()),
            "{bounce_clean} {above:?}"
        );
    }
    // (a bounce's values are checked where it is read: each finite and ≥ 0)
    assert!(
        (p.bounce.iter()).all(|b| b.points().iter().all(|x| x.1 >= 0.0)),
        "{text}"
    );
    // The copy probe ran: whether this CPU slows copies at 4 KiB aliasing is the CPU's, so
    // only that it was measured and said, on the screen and in the file.
    assert!(
        stdout.contains("copies: a 16384-byte memcpy takes")
            || stdout.contains("copies      a 16384-byte memcpy takes"),
        "{stdout}"
    );
    assert!(
        text.contains("# copies: a 16384-byte memcpy takes"),
        "{text}"
    );
    let above = bands.eager_above().map(|(lo, list)| {
        assert_eq!(lo, p.S, "{text}");
        assert!(text.contains("eager_bands]]"), "{text}");
        list.last().unwrap().hi
    });
    (p.S, stdout, above)
}

/// `calibrate`'s report line that starts with `name` (its padded label), the label taken off.
fn report_line<'a>(stdout: &'a str, name: &str) -> &'a str {
    (stdout.lines())
        .find_map(|l| l.strip_prefix(name))
        .unwrap_or_else(|| panic!("no `{}` line in:\n{stdout}", name.trim()))
}

/// Calibrates until S falls in `range` (and the eager bands above it end in `above`, where
/// given), at most three times: each attempt is a real measurement on a shared machine, and
/// Open MPI picks its paths per launch, so one attempt in a few can miss with this short sweep.
/// A calibration that is wrong every time still fails. Returns the last S, output and end of
/// the eager bands above S.
fn calibrate_until(
    dir: &Path,
    max_bytes: u64,
    env: &[(&str, &str)],
    range: std::ops::RangeInclusive<u64>,
    above: Option<(&str, std::ops::RangeInclusive<u64>)>,
) -> (u64, String, Option<u64>) {
    let mut last = (0, String::new(), None);
    for attempt in 1..=3 {
        last = calibrate(dir, max_bytes, env, above.as_ref().map(|a| a.0));
        let above_ok = above
            .as_ref()
            .is_none_or(|(_, r)| last.2.is_some_and(|e| r.contains(&e)));
        if range.contains(&last.0) && above_ok {
            return last;
        }
        eprintln!(
            "attempt {attempt}: S = {} outside {range:?}; measuring again",
            last.0
        );
    }
    last
}

#[test]
fn finds_open_mpi_shared_memory_eager_limits() {
    let Some(dir) = build_dir() else {
        eprintln!("skipped: tracer/build-openmpi is not built (make -C tracer MPI=openmpi)");
        return;
    };
    // The default limit, with the sizes up to the raised one measured eager too (the model's
    // §10, "both protocols"): the set's eager bands above S end at the raised limit.
    let raised = "mpirun.openmpi --mca btl_vader_eager_limit 65536";
    let (s, out, above) = calibrate_until(
        &dir,
        1 << 18,
        &[],
        4096 - 256..=4096,
        Some((raised, 65536 - 256..=65536)),
    );
    assert!(
        (4096 - 256..=4096).contains(&s),
        "default limit: S = {s}\n{out}"
    );
    let e = above.unwrap_or_else(|| panic!("no eager bands above S:\n{out}"));
    assert!(
        (65536 - 256..=65536).contains(&e),
        "eager above S to {e}\n{out}"
    );
    assert!(
        out.contains(&format!("predicted at it (as with --S {e})")),
        "{out}"
    );
    // Exchanges of 16 KiB (between S and the raised limit) traced under the raised launcher
    // and predicted with the set at that limit, one and two messages each way: measured and
    // predicted said, not judged here (the machine's spells move them by tens of percent).
    let line = (out.lines())
        .find(|l| l.starts_with("eager exchange 16384 B: 1 each way "))
        .unwrap_or_else(|| panic!("no eager exchange of 16384 B:\n{out}"));
    assert!(
        line.contains("2 each way") && line.contains("predicted"),
        "{line}"
    );
    // ... as a program runs them, untraced (the tracer's records between the calls overlap what
    // a second message costs), unless no untraced launch ran at the set's placement.
    assert!(
        out.contains("against the same exchanges untraced")
            || out.contains("untraced exchange launches under"),
        "{out}"
    );
    assert!(
        out.contains("agrees with btl_vader_eager_limit = 4096"),
        "{out}"
    );
    let (s, out, _) = calibrate_until(
        &dir,
        1 << 19,
        &[("OMPI_MCA_btl_vader_eager_limit", "65536")],
        65536 - 256..=65536,
        None,
    );
    assert!(
        (65536 - 256..=65536).contains(&s),
        "raised limit: S = {s}\n{out}"
    );
    assert!(
        out.contains("agrees with btl_vader_eager_limit = 65536"),
        "{out}"
    );
}

/// Run from any directory, `calibrate` finds its round-trip program and the tracer in the
/// source tree it was built from (here: the build of tracer/build-openmpi for mpirun.openmpi).
#[test]
fn calibrate_runs_from_any_directory() {
    if build_dir().is_none() {
        eprintln!("skipped: tracer/build-openmpi is not built (make -C tracer MPI=openmpi)");
        return;
    }
    let cwd = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_loggps-predict"))
        .current_dir(cwd.path())
        .args([
            "calibrate",
            "--mpirun",
            "mpirun.openmpi",
            "--max-bytes",
            "8192",
        ])
        .args(["--reps", "5", "--per-octave", "1", "--time-ms", "1"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("not found"), "{err}");
    let toml = cwd.path().join("loggps-params.toml");
    loggps_predict::model::read_param_sets(&toml).unwrap();
}

/// Where the program ran the loop once more untraced (through PMPI_, in the same launch), `oc`
/// is fitted to that loop's round: the Barrier loop above (each call 20 µs traced, back to back:
/// predicted 14,260 + oc ns a round, the tracer's time taken out) run untraced at 17,000 ns a
/// round (the ranks' 16,990 and 17,010, as the program prints them) gives oc = 17,000 − 14,260
/// = 2,740 ns, where the traced fit (kept beside it) gives 5,740; untraced at 12,000 ns, below
/// the model's 14,260 at 0: 0. With 1,000 ns of the tracer's own time between the calls (`own
/// 1000`, measured gaps of 1,000 ns), the untraced fit takes it out as a prediction does (its
/// rounds 14,260 + oc again: 2,740) where the traced fit keeps it in the gaps (5,740). Without
/// the program's line, or with fewer than four rounds at a rank, the traced fit.
#[test]
fn oc_is_fitted_to_the_loop_run_untraced() {
    let load = |t: String| {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("loop.txt");
        std::fs::write(&f, t).unwrap();
        loggps_predict::trace::load(&f, &mut |_| {}).unwrap()
    };
    let trace_of = |gap: u64, own: bool| {
        let mut t = String::from(
            "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n",
        );
        for r in 0..2 {
            if own {
                t += &format!("rank {r} host \"n\" offset 0 0 own {gap}\n");
            }
        }
        for r in 0..2 {
            t += &format!("{r} MPI_Init 0 0\n");
            for i in 0..10 {
                let at = i * (20_000 + gap);
                t += &format!("{r} MPI_Barrier {at} {}\n", at + 20_000);
            }
            t += &format!("{r} MPI_Finalize 300000 300001\n");
        }
        load(t)
    };
    let p = loggps_predict::model::Params::preset("myrinet").unwrap();
    let printed = "rtt 8 0 1 1\ncoll_untraced 0 16990.0 500\ncoll_untraced 1 17010.0 500\nend\n";
    for own in [false, true] {
        let gap = if own { 1_000 } else { 0 };
        let l = loggps_predict::calibrate::CollLoop::new(trace_of(gap, own), printed);
        assert_eq!(l.untraced_round_ns, Some(17_000.0));
        let (oc, fit) = loggps_predict::calibrate::fit_oc(&l, &p).unwrap();
        assert!((oc - 2_740.0).abs() < 0.02, "{own}: {oc} {fit:?}");
        assert!((fit.traced_oc - 5_740.0).abs() < 0.02, "{own}: {fit:?}");
        let u = fit.untraced.unwrap();
        assert_eq!(u.measured_ns, 17_000.0);
        assert!((u.without_ns - 14_260.0).abs() < 1e-6, "{u:?}");
        assert!((u.with_ns - 17_000.0).abs() < 0.05, "{u:?}");
        assert_eq!(fit.launches_oc, vec![oc]);
    }
    let fast = "coll_untraced 0 12000 500\ncoll_untraced 1 12000 500\n";
    let l = loggps_predict::calibrate::CollLoop::new(trace_of(0, false), fast);
    let (oc, fit) = loggps_predict::calibrate::fit_oc(&l, &p).unwrap();
    assert_eq!(oc, 0.0, "{fit:?}");
    // Without the program's line, the traced fit as before; so with fewer than four rounds
    // (three Barriers of 20 µs: two steady calls, oc 5,740 traced).
    let l = loggps_predict::calibrate::CollLoop::new(trace_of(0, false), "end\n");
    assert_eq!(l.untraced_round_ns, None);
    let (oc, fit) = loggps_predict::calibrate::fit_oc(&l, &p).unwrap();
    assert!(
        (oc - 5_740.0).abs() < 0.02 && fit.untraced.is_none(),
        "{oc} {fit:?}"
    );
    let mut t = String::from(
        "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n",
    );
    for r in 0..2 {
        t += &format!("{r} MPI_Init 0 0\n");
        for i in 0..3 {
            t += &format!("{r} MPI_Barrier {} {}\n", i * 20_000, (i + 1) * 20_000);
        }
        t += &format!("{r} MPI_Finalize 60000 60001\n");
    }
    let l = loggps_predict::calibrate::CollLoop::new(load(t), printed);
    let (oc, fit) = loggps_predict::calibrate::fit_oc(&l, &p).unwrap();
    assert!(
        (oc - 5_740.0).abs() < 0.02 && fit.untraced.is_none(),
        "{oc} {fit:?}"
    );
}

/// `oc` is fitted so that the replay predicts the traced loop's steady calls as long as they
/// were measured. Two ranks call `MPI_Barrier` ten times, back to back, each call measured at
/// 20 µs (Myrinet): on 2 ranks the barrier is one exchange of empty messages, each rank's send
/// costing `o` and its receive returning at `o + L + o` = 14,260 ns after the calls, so each
/// steady call (all but the first) is predicted at 14,260 + oc ns against 20,000 measured: oc
/// = 5,740 ns, the 9 calls a rank 180 µs measured, 128.34 µs predicted without it. A loop the
/// model already makes too slow gets 0. A first call 50 µs longer (the library's one-off
/// setup) leaves `oc` as it was: the first call is left out (70 µs a rank). So is a fifth call
/// 100 µs longer on both ranks (an interruption: beyond the far fence of calls all 20 µs, 20 +
/// 3 × 0). With calls of 20 and 22 µs in turn (quartiles 20 and 22 µs, the far fence 28), a
/// fifth call of 36 µs is left out: the other eight 170 µs, 21,250 ns a call (oc 21,250 −
/// 14,260 = 6,990 ns); one of 27 µs stays: nine calls of 197 µs (oc 7,628.89). A first call that
/// waited 100 µs for its partner (rank 0 working before the loop) is left out on both sides:
/// `oc` 5,740 again (its measured time alone taken out, its predicted wait left in: 740).
#[test]
fn oc_makes_the_replay_reproduce_the_traced_loop() {
    let trace_of = |each: u64, first_extra: u64| {
        let mut t = String::from(
            "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n",
        );
        for r in 0..2 {
            t += &format!("{r} MPI_Init 0 0\n");
            for i in 0..10 {
                let (call, ret) = (i * each, (i + 1) * each + first_extra);
                let call = if i == 0 { call } else { call + first_extra };
                t += &format!("{r} MPI_Barrier {call} {ret}\n");
            }
            let end = 10 * each + first_extra;
            t += &format!("{r} MPI_Finalize {end} {}\n", end + 1);
        }
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("loop.txt");
        std::fs::write(&f, t).unwrap();
        loggps_predict::trace::load(&f, &mut |_| {}).unwrap()
    };
    let p = loggps_predict::model::Params::preset("myrinet").unwrap();
    let loop_of = |each: u64, first_extra: u64| {
        loggps_predict::calibrate::fit_oc(&trace_of(each, first_extra).into(), &p).unwrap()
    };
    let (oc, fit) = loop_of(20_000, 0);
    assert!((oc - 5_740.0).abs() < 0.02, "{oc}");
    assert_eq!(fit.calls, 10);
    assert!((fit.without_ns - 128_340.0).abs() < 1e-6, "{fit:?}");
    assert!((fit.measured_ns - 180_000.0).abs() < 1e-6, "{fit:?}");
    assert!((fit.with_ns - 180_000.0).abs() < 0.2, "{fit:?}");
    assert_eq!(fit.first_calls_ns, 20_000.0);
    // The loop is all Barrier: its time predicted with the fitted oc is its time measured.
    assert!(
        fit.by_kind.len() == 1 && (fit.by_kind[0].1 - 1.0).abs() < 1e-6,
        "{:?}",
        fit.by_kind
    );
    assert!(fit.kinds_finding().is_none());
    let (oc, fit) = loop_of(20_000, 50_000);
    assert!((oc - 5_740.0).abs() < 0.02, "{oc}");
    assert!((fit.measured_ns - 180_000.0).abs() < 1e-6, "{fit:?}");
    assert_eq!(fit.first_calls_ns, 70_000.0);
    assert!((fit.by_kind[0].1 - 1.0).abs() < 1e-6, "{:?}", fit.by_kind);
    let (oc, _) = loop_of(10_000, 0);
    assert_eq!(oc, 0.0);
    for (each, fifth, left_out, want) in [
        ([20_000, 20_000], 120_000, 120_000.0, 5_740.0),
        ([20_000, 22_000], 36_000, 36_000.0, 6_990.0),
        ([20_000, 22_000], 27_000, 0.0, 7_628.89),
    ] {
        let mut t = String::from(
            "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n",
        );
        for r in 0..2 {
            t += &format!("{r} MPI_Init 0 0\n");
            let mut at = 0;
            for i in 0..10 {
                let d = if i == 4 { fifth } else { each[i % 2] };
                t += &format!("{r} MPI_Barrier {at} {}\n", at + d);
                at += d;
            }
            t += &format!("{r} MPI_Finalize {at} {}\n", at + 1);
        }
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("interrupted.txt");
        std::fs::write(&f, t).unwrap();
        let l = loggps_predict::trace::load(&f, &mut |_| {}).unwrap();
        let (oc, fit) = loggps_predict::calibrate::fit_oc(&l.into(), &p).unwrap();
        assert!((fit.interrupted_ns - left_out).abs() < 1e-6, "{fit:?}");
        assert_eq!(fit.first_calls_ns, 20_000.0);
        assert!((oc - want).abs() < 0.02, "{oc} {fit:?}");
    }
    let mut t = String::from(
        "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n",
    );
    for r in 0..2 {
        t += &format!("{r} MPI_Init 0 0\n");
        t += &format!("{r} MPI_Barrier {} 120000\n", [100_000, 0][r]);
        for i in 1..10 {
            let at = 100_000 + i * 20_000;
            t += &format!("{r} MPI_Barrier {at} {}\n", at + 20_000);
        }
        t += &format!("{r} MPI_Finalize 300000 300001\n");
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("late.txt");
    std::fs::write(&f, t).unwrap();
    let late = loggps_predict::trace::load(&f, &mut |_| {}).unwrap();
    let (oc, fit) = loggps_predict::calibrate::fit_oc(&late.into(), &p).unwrap();
    assert!((oc - 5_740.0).abs() < 0.02, "{oc} {fit:?}");
    assert!((fit.first_calls_ns - 70_000.0).abs() < 1e-6, "{fit:?}");
    // The tracer's own time is no call's: 1,000 ns between the calls, all the tracer's (`own
    // 1000`), and 500 ns of each call's 20,500 (`inside 500`, taken out of each call measured):
    // oc = 5,740 again (with the tracer's time inside the calls in it, 6,240).
    let mut t = String::from(
        "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n",
    );
    for r in 0..2 {
        t += &format!("rank {r} host \"n\" offset 0 0 own 1000 inside 500\n");
    }
    for r in 0..2 {
        t += &format!("{r} MPI_Init 0 0\n");
        for i in 0..10 {
            t += &format!("{r} MPI_Barrier {} {}\n", i * 21_500, i * 21_500 + 20_500);
        }
        t += &format!("{r} MPI_Finalize 214000 214001\n");
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("gaps.txt");
    std::fs::write(&f, t).unwrap();
    let gaps = loggps_predict::trace::load(&f, &mut |_| {}).unwrap();
    assert_eq!(gaps.meta.ranks.get(0).own_ns, Some(1000.0));
    let (oc, fit) = loggps_predict::calibrate::fit_oc(&gaps.clone().into(), &p).unwrap();
    assert!((oc - 5_740.0).abs() < 0.02, "{oc} {fit:?}");
    assert!((fit.measured_ns - 180_000.0).abs() < 1e-6, "{fit:?}");
    assert_eq!(gaps.meta.ranks.get(0).in_call_ns, Some(500.0));
    // Three launches, their calls 20, 30 and 10 µs: oc 5,740, 15,740 and 0 ns; the median
    // launch's is kept, with its own figures (its steady calls 180 µs).
    let launches = [20_000, 30_000, 10_000].map(|each| trace_of(each, 0).into());
    let (oc, fit) = loggps_predict::calibrate::fit_oc_launches(&launches, &p).unwrap();
    assert!((oc - 5_740.0).abs() < 0.02, "{oc}");
    assert!((fit.measured_ns - 180_000.0).abs() < 1e-6, "{fit:?}");
    let l = &fit.launches_oc;
    assert!(
        l.len() == 3 && l[0] == 0.0 && (l[2] - 15_740.0).abs() < 0.02,
        "{l:?}"
    );
}

/// `oc` is a set's at its own speed: a launch whose messages ran slower than the set models
/// them (the tracer's round trips through MPI at `MPI_Init` and `MPI_Finalize`, 1.25× the
/// set's at 64, 1,024 and 65,536 B) has its loop replayed with the set scaled by 1.25 and the
/// `oc` found there divided by it. The 20 µs Barriers above (14,260 ns each from the set):
/// 20,000 = 1.25 × 14,260 + oc there, oc there 2,175 ns, the set's 1,740 (5,740 where the
/// launch ran at the set's speed). With no message figure the loop is fitted as it ran.
#[test]
fn oc_is_fitted_at_the_sets_speed() {
    let p = loggps_predict::model::Params::preset("myrinet").unwrap();
    let trace_of = |speed: Option<f64>| {
        let mut t = String::from("loggps-trace 1\nranks 2\n");
        t += "rank 0 host \"a\" offset 0 0\nrank 1 host \"a\" offset 0 0\n";
        if let Some(f) = speed {
            let m: Vec<String> = [64u64, 1024, 65536]
                .iter()
                .map(|&k| {
                    let ns = f * p.round_trip(k, 0.0);
                    format!("message {k} {ns} {ns}")
                })
                .collect();
            t += &format!(
                "place 0 node 0 cpu 0 0 socket 0 0 llc 0 0 link cache 0 1 60 60 {}\n",
                m.join(" ")
            );
            t += "place 1 node 0 cpu 1 1 socket 0 0 llc 0 0\n";
        }
        for r in 0..2 {
            t += &format!("{r} MPI_Init 0 0\n");
            for i in 0..10 {
                t += &format!("{r} MPI_Barrier {} {}\n", i * 20_000, (i + 1) * 20_000);
            }
            t += &format!("{r} MPI_Finalize 200000 200001\n");
        }
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("loop.txt");
        std::fs::write(&f, t).unwrap();
        loggps_predict::trace::load(&f, &mut |_| {}).unwrap()
    };
    for (speed, want) in [(Some(1.25), 1_740.0), (Some(1.0), 5_740.0), (None, 5_740.0)] {
        let (oc, fit) = loggps_predict::calibrate::fit_oc(&trace_of(speed).into(), &p).unwrap();
        assert!((oc - want).abs() < 0.05, "{speed:?}: {oc} {fit:?}");
        assert!(
            speed
                .zip(fit.speed)
                .is_none_or(|(a, b)| (a - b).abs() < 1e-9),
            "{speed:?}: {fit:?}"
        );
        assert_eq!(fit.speed.is_some(), speed.is_some(), "{fit:?}");
        // Predicted at the launch's speed with oc there: the steady calls as measured.
        assert!((fit.with_ns - 180_000.0).abs() < 0.5, "{fit:?}");
    }
}

/// A calibration's two placements each get the `oc` of the launches that ran there: the loop
/// above with each rank's cores written in (a cache line's round trip at `MPI_Init` and at
/// `MPI_Finalize`), the sets those of the Myrinet preset with `cores` 150 and 450 ns. Near
/// launches' calls 20, 10 and 20 µs (oc 5,740, 0, 5,740 ns, by hand as above), far ones' 30
/// and 40 µs (15,740 and 25,740 ns): the near set 5,740, the far set 15,740 (the median of
/// each, of two the lower; its launch's nine steady calls 270 µs). A third set at 1,500 ns, where no launch ran, takes the median of
/// all five (0, 5,740, 5,740, 15,740, 25,740: 5,740) and says so.
#[test]
fn each_placement_gets_the_oc_of_its_own_launches() {
    let trace_of = |each: u64, cores: (f64, f64)| -> loggps_predict::calibrate::CollLoop {
        let mut t = String::from(
            "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n",
        );
        t += &format!(
            "rank 0 host \"a\" offset 0 0 cores 1 {} {}\n",
            cores.0, cores.1
        );
        for r in 0..2 {
            t += &format!("{r} MPI_Init 0 0\n");
            for i in 0..10 {
                t += &format!("{r} MPI_Barrier {} {}\n", i * each, (i + 1) * each);
            }
            t += &format!("{r} MPI_Finalize {} {}\n", 10 * each, 10 * each + 1);
        }
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("loop.txt");
        std::fs::write(&f, t).unwrap();
        loggps_predict::trace::load(&f, &mut |_| {}).unwrap().into()
    };
    let p = loggps_predict::model::Params::preset("myrinet").unwrap();
    let at = |ns: f64| loggps_predict::model::Params {
        cores: Some(ns),
        ..p
    };
    let (near, far, nowhere) = (at(150.0), at(450.0), at(1500.0));
    let launches = [
        trace_of(20_000, (140.0, 160.0)),
        trace_of(30_000, (430.0, 470.0)),
        trace_of(10_000, (150.0, 130.0)),
        trace_of(40_000, (480.0, 420.0)),
        trace_of(20_000, (160.0, 150.0)),
    ];
    let sets = loggps_predict::calibrate::fit_oc_sets(&launches, &[&near, &far, &nowhere]).unwrap();
    let ocs: Vec<f64> = sets.iter().map(|(oc, _)| *oc).collect();
    for (oc, hand) in ocs.iter().zip([5_740.0, 15_740.0, 5_740.0]) {
        assert!((oc - hand).abs() < 0.02, "{ocs:?}");
    }
    let counts: Vec<(usize, bool)> = (sets.iter())
        .map(|(_, f)| (f.launches_oc.len(), f.elsewhere))
        .collect();
    assert_eq!(counts, [(3, false), (2, false), (5, true)]);
    assert!(
        (sets[1].1.measured_ns - 270_000.0).abs() < 1e-6,
        "{:?}",
        sets[1].1
    );
    // A launch at 2,000 ns, 4.4× from the far set's cores (its nearest), ran at neither
    // placement: its calls of 50 µs (oc 35,740 with the far set) count for no set, which keep
    // 5,740 and 15,740 (counted, the far set's median would be 25,740).
    let mut more = launches.to_vec();
    more.push(trace_of(50_000, (2_000.0, 1_900.0)));
    let sets = loggps_predict::calibrate::fit_oc_sets(&more, &[&near, &far]).unwrap();
    let ocs: Vec<f64> = sets.iter().map(|(oc, _)| *oc).collect();
    for (oc, hand) in ocs.iter().zip([5_740.0, 15_740.0]) {
        assert!((oc - hand).abs() < 0.02, "{ocs:?}");
    }
    assert_eq!(sets[1].1.launches_oc.len(), 2, "{:?}", sets[1].1);
    // The near set alone with the far launches only: each fitted with the near set takes up
    // the placements' difference (15,740 and 35,740), none the calls': not fitted, 0.
    let far_only = [launches[1].clone(), launches[3].clone()];
    let sets = loggps_predict::calibrate::fit_oc_sets(&far_only, &[&near]).unwrap();
    let (oc, fit) = &sets[0];
    assert_eq!(*oc, 0.0, "{fit:?}");
    assert!(
        fit.elsewhere && fit.unplaced && fit.by_kind.is_empty(),
        "{fit:?}"
    );
    assert_eq!(fit.with_ns, fit.without_ns);
    assert_eq!(fit.launches_oc.len(), 2, "{fit:?}");
}

/// Between two of MPICH's "nodes" on this machine (`-launcher fork -hosts nodeA:1,nodeB:1`,
/// TCP through UCX), MPI puts the two ranks on different nodes: the set is the network's
/// (`class = "network"`), with no cores figure (the ranks share no memory), and its small
/// messages cost microseconds where shared memory's cost hundreds of nanoseconds. MPICH 4.0.2
/// hangs at times in its own MPI_Finalize on such launches: calibrate ends those after the
/// measurement, so this also checks that it does not hang.
#[test]
fn calibrates_the_network_between_two_mpich_nodes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tracer/build-mpich");
    let ready = dir.join("loggps-rtt").exists() && dir.join("libloggps-trace.so").exists();
    if !ready {
        assert!(
            std::env::var_os("LOGGPS_MPI_TESTS").is_none(),
            "{} lacks loggps-rtt or libloggps-trace.so: run `make -C tracer MPI=mpich`",
            dir.display()
        );
        eprintln!("skipped: tracer/build-mpich is not built (make -C tracer MPI=mpich)");
        return;
    }
    let out_dir = tempfile::tempdir().unwrap();
    let toml = out_dir.path().join("net.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_loggps-predict"))
        .args([
            "calibrate",
            "--mpirun",
            "mpirun.mpich -launcher fork -hosts nodeA:1,nodeB:1 -genv UCX_TLS tcp,self",
            "--max-bytes",
            "65536",
            "--launches",
            "2",
        ])
        .args(["--reps", "5", "--per-octave", "1", "--time-ms", "1", "-o"])
        .arg(&toml)
        .arg("--rtt")
        .arg(dir.join("loggps-rtt"))
        .arg("--tracer")
        .arg(dir.join("libloggps-trace.so"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p = loggps_predict::model::read_params_file(&toml).unwrap();
    assert_eq!(
        p.class,
        Some(loggps_predict::model::Class::Network),
        "{stdout}"
    );
    assert_eq!(p.cores, None, "{stdout}");
    assert!(stdout.contains("class       network"), "{stdout}");
    // A TCP round trip of a small message on one machine takes microseconds.
    assert!(p.o + p.L > 1000.0, "{p:?}\n{stdout}");
}
