//! The Gaussian-elimination case study as a regression (issue 5): every committed trace in
//! traces/ is replayed; the predictions must match the golden JSON under fixtures/golden/ to
//! 1e-9 relative, and the accuracy bands of the paper's Table 7 comparison must hold.
//!
//! The golden files change only by the explicit commands in fixtures/golden/README.md, and are
//! reviewed in the diff.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_loggps-predict"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

fn table7() -> Vec<Value> {
    let out = run(&["table7", "traces", "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["rows"].as_array().unwrap().clone()
}

#[test]
fn predictions_match_the_golden_table() {
    let golden: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("fixtures/golden/table7.json")).unwrap(),
    )
    .unwrap();
    let golden = golden["rows"].as_array().unwrap();
    let now = table7();
    assert_eq!(now.len(), golden.len(), "the number of rows changed");
    for (a, b) in now.iter().zip(golden) {
        for key in [
            "trace",
            "n",
            "ranks",
            "eager_limit",
            "variant",
            "mode",
            "whatif_from",
            "oversubscribed",
        ] {
            assert_eq!(a.get(key), b.get(key), "{key} of {a}");
        }
        for key in [
            "measured_s",
            "predicted_s",
            "error_pct",
            "computation",
            "communication",
            "sender_sync",
            "receiver_sync",
        ] {
            let (x, y) = (a[key].as_f64().unwrap(), b[key].as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-9 * y.abs().max(1e-12),
                "{key} of {}: {x} vs golden {y}",
                a["trace"]
            );
        }
    }
}

#[test]
fn check_command_agrees_with_its_baseline() {
    let mut args = vec!["check".to_string()];
    let mut traces: Vec<String> = std::fs::read_dir(root().join("traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "bin"))
        .map(|p| format!("traces/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    traces.sort();
    args.extend(traces);
    args.extend(
        [
            "--baseline",
            "fixtures/golden/gauss-check.json",
            "--tolerance",
            "1e-7",
        ]
        .map(String::from),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // And it does report drift: a different eager limit moves the predictions.
    let mut drifted = args.clone();
    drifted.extend(["--S", "100"]);
    let out = run(&drifted);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("drifted"));
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// The 4-rank runs were recorded on the manifest's 2-CPU machine: their ranks took turns, which
/// the model does not cost (they are predicted 55–75% short), and the table says so rather than
/// pin them silently; the 2-rank runs are not.
#[test]
fn four_ranks_on_two_cpus_are_labeled_oversubscribed() {
    let rows = table7();
    for r in &rows {
        let over = r["ranks"].as_u64().unwrap() > 2;
        assert_eq!(r["oversubscribed"], over, "{r}");
    }
    let out = run(&["table7", "traces"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let labeled: Vec<&str> = text
        .split("Table 7: ")
        .skip(1)
        .filter(|t| {
            t.lines()
                .nth(1)
                .is_some_and(|l| l.contains("OVERSUBSCRIBED"))
        })
        .map(|t| t.lines().next().unwrap())
        .collect();
    assert_eq!(
        labeled,
        ["4 ranks, blocking — measured and predicted times (s, medians over runs), error (%)"],
        "{text}"
    );
}

/// The paper's bands (Table 7 reached 7%, 7.5%, 9.6%): on 2 ranks, the median prediction of
/// each configuration's runs with the eager limit they ran with within 5% of their median
/// measured time, fragmented runs within 10%, what-ifs (the median of the predictions from the
/// other limit's traces) within 8% of the target's median measured time. Medians, as the
/// paper's table and the issue state them: one run on this shared machine can be 15% slower
/// than the next. At n = 256 a run lasts milliseconds, and two configurations that are the same
/// program (2 KiB messages, eager under either limit) differ by up to 7% in the committed
/// traces' medians: there the bands are 10% and 12%.
#[test]
fn accuracy_bands_hold_on_two_ranks() {
    let rows = table7();
    let p2: Vec<&Value> = rows
        .iter()
        .filter(|r| r["ranks"] == 2 && r["mode"] == "blocking")
        .collect();
    assert!(
        p2.len() >= 60,
        "expected the full set of 2-rank traces, found {}",
        p2.len()
    );
    let key = |r: &Value| {
        (
            r["n"].as_u64().unwrap(),
            r["eager_limit"].as_u64().unwrap(),
            r["variant"].as_str().unwrap().to_string(),
        )
    };
    let own: Vec<&&Value> = p2.iter().filter(|r| r["whatif_from"].is_null()).collect();
    let mut configs: Vec<_> = own.iter().map(|r| key(r)).collect();
    configs.sort();
    configs.dedup();
    for (n, limit, variant) in configs {
        let runs: Vec<&&&Value> = own
            .iter()
            .filter(|r| key(r) == (n, limit, variant.clone()))
            .collect();
        let of = |name: &str| median(runs.iter().map(|r| r[name].as_f64().unwrap()).collect());
        let (predicted, measured) = (of("predicted_s"), of("measured_s"));
        let e = 100.0 * (predicted - measured).abs() / measured;
        let band = match (variant.as_str(), n <= 256) {
            ("fragmented", _) | (_, true) => 10.0,
            _ => 5.0,
        };
        assert!(
            e <= band,
            "n={n} S={limit} {variant}: |error| of the medians {e:.2}% > {band}% ({} runs)",
            runs.len()
        );
    }
    let mut groups: Vec<(u64, u64)> = p2
        .iter()
        .filter(|r| !r["whatif_from"].is_null())
        .map(|r| (r["n"].as_u64().unwrap(), r["eager_limit"].as_u64().unwrap()))
        .collect();
    groups.sort();
    groups.dedup();
    assert!(!groups.is_empty(), "no what-if rows");
    for (n, limit) in groups {
        let rows: Vec<&&Value> = p2
            .iter()
            .filter(|r| !r["whatif_from"].is_null() && r["n"] == n && r["eager_limit"] == limit)
            .collect();
        let predicted = median(
            rows.iter()
                .map(|r| r["predicted_s"].as_f64().unwrap())
                .collect(),
        );
        let target = rows[0]["measured_s"].as_f64().unwrap();
        let e = 100.0 * (predicted - target).abs() / target;
        let band = if n <= 256 { 12.0 } else { 8.0 };
        assert!(
            e <= band,
            "what-if n={n} S={limit}: |error| {e:.2}% > {band}%"
        );
    }
}

/// The paper's eight parameters are the two-band case of the model's §10: every recorded trace
/// (the golden files' own) predicts the same with each preset (and its own parameters where
/// they are of the paper's form), whether the set is given in the paper's form or as its bands. Equal to 1e-12 relative, not bit for
/// bit: above `s` the bands compute `T2` as `(L + s·(Gs − Gl)) + k·Gl` where the paper's form
/// computes `s·Gs + (k − s)·Gl + L`, the same line rounded in another order (a last-digit
/// difference, 1e-16 of a time).
#[test]
fn the_paper_form_and_its_bands_predict_alike() {
    use loggps_predict::model::{Bands, Params};
    use loggps_predict::{graph, replay, trace};
    let mut files: Vec<_> = std::fs::read_dir(root().join("traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    files.sort();
    assert!(files.len() >= 70, "{} traces", files.len());
    let presets = ["myrinet", "cenju4", "fast-ethernet"].map(|n| Params::preset(n).unwrap());
    for f in &files {
        let t = trace::load(f, &mut |_| {}).unwrap();
        let g = graph::build(&t, "t").unwrap();
        // A trace's own set in bands has no paper form to compare with.
        let own = t.meta.params.iter().filter(|p| p.bands.is_none());
        for p in own.chain(&presets) {
            let banded = Params::banded(Bands::of_paper(p), p.S, p.poll);
            let a = replay::replay(&t, &g, p, "t", &|_| {}).unwrap();
            let b = replay::replay(&t, &g, &banded, "t", &|_| {}).unwrap();
            let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(1.0);
            assert!(
                close(a.predicted_ns, b.predicted_ns),
                "{}: {} vs {}",
                f.display(),
                a.predicted_ns,
                b.predicted_ns
            );
            for (x, y) in a.ranks.iter().zip(&b.ranks) {
                let parts = |r: &replay::RankBreakdown| {
                    [
                        r.end_ns,
                        r.communication_ns,
                        r.sender_sync_ns,
                        r.receiver_sync_ns,
                    ]
                };
                for (u, v) in parts(x).into_iter().zip(parts(y)) {
                    assert!(close(u, v), "{} rank {}: {u} vs {v}", f.display(), x.rank);
                }
            }
        }
    }
}

/// README.md's case-study table is `table7 --format markdown` of the committed traces, never
/// copied by hand: it is checked against the command's output here.
#[test]
fn the_readmes_case_study_table_is_the_commands_output() {
    let out = run(&["table7", "traces", "--format", "markdown"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8(out.stdout).unwrap();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find("<!-- table7:")
        .expect("README.md has the table7 markers");
    let body = &readme[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    let end = body.find("<!-- /table7 -->").expect("the closing marker");
    assert_eq!(
        &body[..end],
        table,
        "README.md's table is stale: regenerate it with `loggps-predict table7 traces --format markdown`"
    );
    // The medians of the rows: the 2-rank blocking configurations at every size.
    assert_eq!(table.lines().count(), 2 + 4, "{table}");
}
