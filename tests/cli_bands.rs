//! Parameters in bands of message size (the model's §10) through the command line: costing,
//! the report, what-if flags, the validity rule, and bands embedded in traces.

mod common;

use common::{fixture, json, run};

/// Three bands, eager up to 4096 bytes.
const BANDS: &str = "# three protocols\nS = 4096\n\
    [[bands]]\nhi = 256\no = 300\nL = 200\nOs = 0.1\nOr = 0.1\nG = 0.3\n\
    [[bands]]\nhi = 32768\no = 500\nL = 600\nOs = 0.05\nOr = 0.05\nG = 0.1\n\
    [[bands]]\no = 900\nL = 2000\nOs = 0.02\nOr = 0.02\nG = 0.05\n";

/// `text` written as `name` in a fresh directory (kept alive with it).
fn file(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join(name);
    std::fs::write(&f, text).unwrap();
    let f = f.to_str().unwrap().to_string();
    (dir, f)
}

/// The 1000-byte ping-pong of the model's §6 (no computation) with `args`.
fn rtt_ns(args: &[&str]) -> f64 {
    let f = fixture("rtt/k1000-w0.txt");
    let v = json(&[&[f.to_str().unwrap(), "--format", "json"], args].concat());
    v["predicted_s"].as_f64().unwrap() * 1e9
}

/// By hand: 1000 bytes are in the second band, eager: `T1 = T3 = 500 + 1000·0.05 = 550`,
/// `T2 = 600 + 1000·0.1 = 700`, a round trip 2 × 1800 = 3600 ns. `--L 100` sets `L` in every
/// band: `T2 = 200`, 2600 ns; `--scale G=2` doubles every `G`: `T2 = 800`, 3800 ns;
/// `--scale all=1.5` every time and rate: `T1 = T3 = 825`, `T2 = 1050`, 5400 ns.
#[test]
fn a_message_is_costed_by_its_band() {
    let (_d, p) = file("b.toml", BANDS);
    assert!((rtt_ns(&["--params", &p]) - 3600.0).abs() < 1e-9);
    assert!((rtt_ns(&["--params", &p, "--L", "100"]) - 2600.0).abs() < 1e-9);
    assert!((rtt_ns(&["--params", &p, "--scale", "G=2"]) - 3800.0).abs() < 1e-9);
    assert!((rtt_ns(&["--params", &p, "--scale", "all=1.5"]) - 5400.0).abs() < 1e-6);
    let f = fixture("rtt/k1000-w0.txt");
    let scaled = json(&[
        f.to_str().unwrap(),
        "--params",
        &p,
        "--scale",
        "G=2",
        "--format",
        "json",
    ]);
    assert_eq!(scaled["params"]["b1.G"]["source"], "flag", "{scaled}");
    assert_eq!(
        scaled["params"]["b1.o"]["source"],
        format!("file {p}"),
        "{scaled}"
    );
    // The report lists the bands split at S, and where each value came from.
    let f = fixture("rtt/k1000-w0.txt");
    let out = run(&[f.to_str().unwrap(), "--params", &p, "--L", "100"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("band 2       256–4096 B  o=500.0 L=100.0"),
        "{table}"
    );
    assert!(table.contains("band 3     4096–32768 B"), "{table}");
    assert!(table.contains("L from flag, in every band"), "{table}");
    let v = json(&[f.to_str().unwrap(), "--params", &p, "--format", "json"]);
    assert_eq!(v["params"]["b2.hi"]["value"], 4096.0, "{v}");
    assert_eq!(v["params"]["b3.G"]["value"], 0.1);
    assert_eq!(v["params"]["b4.L"]["value"], 2000.0);
    assert!(v["params"]["b4.hi"].is_null(), "the last band has no end");
    // `--S 512` moves the split: the second band now ends there.
    let v = json(&[
        f.to_str().unwrap(),
        "--params",
        &p,
        "--S",
        "512",
        "--format",
        "json",
    ]);
    assert_eq!(v["params"]["b2.hi"]["value"], 512.0, "{v}");
    assert_eq!(v["params"]["S"]["source"], "flag");
}

/// A sweep over a band parameter sets it in every band, each row what the flag alone gives:
/// `L` = 100 and 1000 give 2 × (550 + 200 + 550) = 2600 and 2 × (550 + 1100 + 550) = 4400 ns.
#[test]
fn a_sweep_sets_every_band() {
    let (_d, p) = file("b.toml", BANDS);
    let f = fixture("rtt/k1000-w0.txt");
    let v = json(&[
        f.to_str().unwrap(),
        "--params",
        &p,
        "--sweep",
        "L=100,1000",
        "--format",
        "json",
    ]);
    let ns: Vec<f64> = (v["points"].as_array().unwrap().iter())
        .map(|x| x["predicted_s"].as_f64().unwrap() * 1e9)
        .collect();
    assert_eq!(ns.len(), 2, "{v}");
    assert!(
        (ns[0] - 2600.0).abs() < 1e-9 && (ns[1] - 4400.0).abs() < 1e-9,
        "{ns:?}"
    );
}

/// Flags of the paper's form have no meaning on bands; a `--scale` name must be a band's.
#[test]
fn paper_flags_on_bands_are_refused() {
    let (_d, p) = file("b.toml", BANDS);
    let f = fixture("rtt/k1000-w0.txt");
    for (flag, v, says) in [
        ("--Gs", "3", "--Gs is a parameter of the paper's form"),
        ("--s", "100", "--s is a parameter of the paper's form"),
        (
            "--scale",
            "Gl=2",
            "expected a band parameter among o, L, Os, Or, G",
        ),
        ("--scale", "G=-1", "the factor must be a finite number ≥ 0"),
    ] {
        let out = run(&[f.to_str().unwrap(), "--params", &p, flag, v]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag} {v}: {err}");
        assert!(err.contains(says), "{flag} {v}: {err}");
    }
}

/// A set that breaks the validity rule is refused, naming the band and the term, from a file
/// or after a flag; a file mixing the two forms, or with a malformed band, says what is wrong.
#[test]
fn invalid_sets_are_refused() {
    let f = fixture("rtt/k1000-w0.txt");
    let refused = |toml: &str, extra: &[&str], says: &str| {
        let (_d, p) = file("b.toml", toml);
        let out = run(&[&[f.to_str().unwrap(), "--params", &p], extra].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{says}: {err}");
    };
    refused(
        &BANDS.replace("L = 600", "L = -600"),
        &[],
        "band 2 (256–32768 B): L = -600 must be ≥ 0",
    );
    refused(
        BANDS,
        &["--o", "-1"],
        "band 1 (0–256 B): o = -1 must be ≥ 0",
    );
    refused(
        &BANDS.replace("G = 0.05", "G = -0.05"),
        &[],
        "band 3 (32768–∞ B): Os + Or + G",
    );
    refused(
        &format!("Gs = 1\n{BANDS}"),
        &[],
        "the paper's parameters or bands, not both",
    );
    refused(
        &BANDS.replace("hi = 32768\n", ""),
        &[],
        "band 2: hi must be a non-negative integer",
    );
    refused(
        &BANDS.replace("Or = 0.02", "R = 1"),
        &[],
        "band 3: unknown key `R`",
    );
    refused(
        &BANDS.replace("hi = 32768", "hi = 100"),
        &[],
        "band 2 ends at 100 bytes, not above band 1's 256",
    );
}

/// Bands travel with a trace (`convert --params`), in both encodings, and are its parameters
/// when no others are given.
#[test]
fn bands_travel_in_traces() {
    let (d, p) = file("b.toml", BANDS);
    let f = fixture("rtt/k1000-w0.txt");
    let bin = d.path().join("t.bin").to_str().unwrap().to_string();
    let txt = d.path().join("t.txt").to_str().unwrap().to_string();
    let ok = |args: &[&str]| assert!(run(args).status.success(), "{args:?}");
    ok(&["convert", f.to_str().unwrap(), &bin, "--params", &p]);
    ok(&["convert", &bin, &txt]);
    let text = std::fs::read_to_string(&txt).unwrap();
    assert!(
        text.contains("params bands=256:300:200:0.1:0.1:0.3;32768:500:600:0.05:0.05:0.1;inf:900:2000:0.02:0.02:0.05 S=4096"),
        "{text}"
    );
    for t in [&bin, &txt] {
        let v = json(&[t, "--format", "json"]);
        assert!((v["predicted_s"].as_f64().unwrap() * 1e9 - 3600.0).abs() < 1e-9);
        assert_eq!(v["params"]["b1.o"]["source"], "trace", "{v}");
    }
}

/// A set measured at S = 4040 with eager bands above it to 65480 (the model's §10, "both
/// protocols"; what `calibrate --eager-mpirun` writes).
const BOTH: &str = "S = 4040\n\
    [[bands]]\nhi = 4040\no = 300\nL = 200\nOs = 0.1\nOr = 0.1\nG = 0.3\n\
    [[bands]]\no = 1700\nL = 0\nOs = 0.15\nOr = 0\nG = 0.05\n\
    [[eager_bands]]\nhi = 65480\no = 400\nL = 10\nOs = 0.06\nOr = 0.07\nG = 0\n";

/// The 12,000-byte ping-pong of the model's §6 recorded at Open MPI's eager limit `limit`.
fn ping_pong_at(limit: u64) -> (tempfile::TempDir, String) {
    let text = std::fs::read_to_string(fixture("rtt/k12000-w0.txt")).unwrap();
    let text = text.replace(
        "library \"hand-written fixture\"\n",
        &format!("library \"hand-written fixture\"\neager_limit btl_vader_eager_limit {limit}\n"),
    );
    file("pp.txt", &text)
}

/// By hand: 12,000 bytes eager in the eager band above S: `T1 = 400 + 12000·0.06 = 1120`,
/// `T2 = 10`, `T3 = 400 + 12000·0.07 = 1240`, a round trip 2 × 2370 = 4740 ns. A trace
/// recorded at 65536 is predicted at the limit the set's eager bands were measured at (65480,
/// said as the source of S), as `--S 65480` predicts it, without a warning; one recorded at
/// the default limit at the set's S, the message by rendezvous.
#[test]
fn a_trace_recorded_at_the_higher_limit_takes_the_eager_bands() {
    let (_d, p) = file("both.toml", BOTH);
    let (_t, big) = ping_pong_at(65536);
    let v = json(&[&big, "--params", &p, "--format", "json"]);
    assert!(
        (v["predicted_s"].as_f64().unwrap() * 1e9 - 4740.0).abs() < 1e-6,
        "{v}"
    );
    assert_eq!(v["params"]["S"]["value"], 65480.0, "{v}");
    assert_eq!(v["params"]["S"]["source"], "the trace's eager limit", "{v}");
    assert!(
        !v["warnings"].to_string().contains("eager limit"),
        "{}",
        v["warnings"]
    );
    let flag = json(&[&big, "--params", &p, "--S", "65480", "--format", "json"]);
    assert_eq!(flag["predicted_s"], v["predicted_s"]);
    // At the set's own S the message goes by rendezvous: dearer than eager here.
    let own = json(&[&big, "--params", &p, "--S", "4040", "--format", "json"]);
    assert!(own["predicted_s"].as_f64().unwrap() > v["predicted_s"].as_f64().unwrap());
    let (_t, default) = ping_pong_at(4096);
    let d = json(&[&default, "--params", &p, "--format", "json"]);
    assert_eq!(d["params"]["S"]["value"], 4040.0, "{d}");
    assert_eq!(d["predicted_s"], own["predicted_s"]);
}

/// A what-if `--S` above the eager costs a banded set measured warns, naming the sizes costed
/// eagerly with bands fitted to rendezvous round trips: above the eager bands' top (65,480 B)
/// for a set with them, above its own `S` (4,040 B) for one without; within them, or for the
/// paper's parameters (one formula for both protocols at any size), not.
#[test]
fn an_s_above_the_measured_eager_costs_says_so() {
    let (_d, both) = file("both.toml", BOTH);
    let rendezvous_only = BOTH.split("[[eager_bands]]").next().unwrap();
    let (_e, one) = file("one.toml", rendezvous_only);
    let (_t, big) = ping_pong_at(65536);
    let stderr = |args: &[&str]| {
        let out = run(&[&[big.as_str()], args].concat());
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let w = stderr(&["--params", &both, "--S", "100000"]);
    assert!(
        w.contains("--S 100000 costs messages of 65481–100000 B eagerly")
            && w.contains("measured no eager costs above 65480 B"),
        "{w}"
    );
    let w = stderr(&["--params", &one, "--S", "65480"]);
    assert!(
        w.contains("--S 65480 costs messages of 4041–65480 B eagerly")
            && w.contains("above 4040 B"),
        "{w}"
    );
    for quiet in [
        &["--params", both.as_str(), "--S", "65480"][..],
        &["--params", one.as_str(), "--S", "4040"],
        &["--params", one.as_str(), "--S", "512"],
        &["--platform", "myrinet", "--S", "100000"],
    ] {
        assert!(!stderr(quiet).contains("eagerly, and"), "{quiet:?}");
    }
}

/// The same ping-pong with the set embedded (fixtures/both-protocols.txt): predicted at the
/// trace's limit by hand (4740 ns), through the binary encoding alike (its flag 6).
#[test]
fn an_embedded_set_with_eager_bands_travels_and_predicts() {
    let f = fixture("both-protocols.txt");
    let v = json(&[f.to_str().unwrap(), "--format", "json"]);
    assert!(
        (v["predicted_s"].as_f64().unwrap() * 1e9 - 4740.0).abs() < 1e-6,
        "{v}"
    );
    assert_eq!(v["params"]["S"]["source"], "the trace's eager limit", "{v}");
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("b.bin");
    let out = run(&["convert", f.to_str().unwrap(), bin.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let b = json(&[bin.to_str().unwrap(), "--format", "json"]);
    assert_eq!(b["predicted_s"], v["predicted_s"], "{b}");
}

/// A first band of the zero-byte messages alone (`hi = 0`, what `calibrate` fits where they
/// cost less than a byte), then the smallest messages' from 1 B.
const ZERO: &str = "S = 4096\n\
    [[bands]]\nhi = 0\no = 100\nL = 50\nOs = 0\nOr = 0\nG = 0\n\
    [[bands]]\nhi = 4096\no = 300\nL = 200\nOs = 0.1\nOr = 0.1\nG = 0.3\n\
    [[bands]]\no = 900\nL = 2000\nOs = 0.02\nOr = 0.02\nG = 0.05\n";

/// By hand: a 0-byte round trip is `2(T1 + T2 + T3)` = 2 × (100 + 50 + 100) = 500 ns in the
/// zero band; a 1-byte one falls in the second band: 2 × (300.1 + 200.3 + 300.1) = 1601 ns.
/// The report names the band `0 B`, and the set travels in a trace's text and binary.
#[test]
fn a_zero_byte_band_costs_the_zero_byte_messages_alone() {
    let (d, p) = file("z.toml", ZERO);
    let trace = |k: u64| {
        let text = format!(
            "loggps-trace 1\nranks 2\n\
             0 MPI_Init 0 0\n0 MPI_Send 0 1000 bytes={k} peer=1 tag=0\n\
             0 MPI_Recv 1000 5000 bytes={k} peer=1 tag=0\n0 MPI_Finalize 5000 5100\n\
             1 MPI_Init 0 0\n1 MPI_Recv 0 2000 bytes={k} peer=0 tag=0\n\
             1 MPI_Send 2000 3000 bytes={k} peer=0 tag=0\n1 MPI_Finalize 3000 3100\n"
        );
        let f = d.path().join(format!("k{k}.txt"));
        std::fs::write(&f, text).unwrap();
        f.to_str().unwrap().to_string()
    };
    let ns = |t: &str, params: &[&str]| {
        let v = json(&[&[t, "--format", "json"], params].concat());
        v["predicted_s"].as_f64().unwrap() * 1e9
    };
    let (zero, one) = (trace(0), trace(1));
    assert!((ns(&zero, &["--params", &p]) - 500.0).abs() < 1e-9);
    assert!((ns(&one, &["--params", &p]) - 1601.0).abs() < 1e-6);
    let out = run(&[&zero, "--params", &p]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("band 1              0 B  o=100.0 L=50.0"),
        "{table}"
    );
    assert!(
        table.contains("band 2         0–4096 B  o=300.0"),
        "{table}"
    );
    let (bin, txt) = (d.path().join("z.bin"), d.path().join("z2.txt"));
    let (bin, txt) = (bin.to_str().unwrap(), txt.to_str().unwrap());
    assert!(
        run(&["convert", &zero, bin, "--params", &p])
            .status
            .success()
    );
    assert!(run(&["convert", bin, txt]).status.success());
    let text = std::fs::read_to_string(txt).unwrap();
    assert!(
        text.contains("params bands=0:100:50:0:0:0;4096:300:"),
        "{text}"
    );
    for t in [bin, txt] {
        assert!((ns(t, &[]) - 500.0).abs() < 1e-9, "{t}");
    }
}

/// `--scale rendezvous=F` multiplies every parameter of the bands above `S` and no other: the
/// 1000-byte ping-pong (eager) costs its 3600 ns as before (by hand above), the 65,536-byte one
/// (rendezvous) what the same set costs with its band above `S` halved in the file. A band
/// across `S`, or a set not in bands, is refused with why.
#[test]
fn rendezvous_scales_the_bands_above_s_alone() {
    let set = |last: &str| {
        format!(
            "S = 4096\n[[bands]]\nhi = 4096\no = 500\nL = 600\nOs = 0.05\nOr = 0.05\nG = 0.1\n\
             [[bands]]\n{last}"
        )
    };
    let (_d, p) = file(
        "b.toml",
        &set("o = 900\nL = 2000\nOs = 0.02\nOr = 0.02\nG = 0.05\n"),
    );
    let (_e, half) = file(
        "h.toml",
        &set("o = 450\nL = 1000\nOs = 0.01\nOr = 0.01\nG = 0.025\n"),
    );
    let scaled = ["--params", p.as_str(), "--scale", "rendezvous=0.5"];
    assert!((rtt_ns(&scaled) - 3600.0).abs() < 1e-9);
    let big = |args: &[&str]| {
        let f = fixture("rtt/k65536-w0.txt");
        let v = json(&[&[f.to_str().unwrap(), "--format", "json"], args].concat());
        v["predicted_s"].as_f64().unwrap() * 1e9
    };
    let (whole, halved, by_flag) = (
        big(&["--params", &p]),
        big(&["--params", &half]),
        big(&scaled),
    );
    assert!((by_flag - halved).abs() < 1e-6, "{by_flag} {halved}");
    assert!(halved < whole - 1000.0, "{halved} {whole}");
    let (_c, across) = file("a.toml", BANDS);
    let f = fixture("rtt/k65536-w0.txt");
    let f = f.to_str().unwrap();
    let out = run(&[f, "--params", &across, "--scale", "rendezvous=0.5"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("both sides of S = 4096"),
        "{err}"
    );
    let out = run(&[f, "--platform", "myrinet", "--scale", "rendezvous=0.5"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("needs a set in bands"),
        "{err}"
    );
}
