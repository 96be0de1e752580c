//! The tracer's own time per record (the model's §16): a trace that timed it has it taken out of
//! every measured gap between calls, at most the gap; `--keep-tracer-time` keeps it, and adds
//! the tracer's time inside each call to each gap where the trace timed it. Costed by hand.

mod common;

use common::{json, run, text_trace};

/// Rank 0 computes 1000 ns, sends 8 bytes, computes 50 ns; rank 1 receives from its start and
/// computes 20 ns after. `o` 50, `L` 100, nothing per byte.
fn trace(own: &str) -> String {
    format!(
        "loggps-trace 1\nranks 2\n\
         rank 0 host \"a\" offset 0 0{own}\nrank 1 host \"a\" offset 0 0{own}\n\
         0 MPI_Init 0 0\n0 MPI_Send 1000 1010 bytes=8 peer=1 tag=0\n0 MPI_Finalize 1060 1070\n\
         1 MPI_Init 0 0\n1 MPI_Recv 0 1100 bytes=8 peer=0 tag=0\n1 MPI_Finalize 1120 1130\n"
    )
}

const PARAMS: &str = "L = 100\no = 50\nOs = 0\nOr = 0\nGs = 0\nGl = 0\ns = 1000000\nS = 100000\n";

/// The prediction of `text` (its JSON), with `extra` flags.
fn predict(text: &str, extra: &[&str]) -> serde_json::Value {
    let (dir, t) = text_trace("own.txt", text);
    let p = dir.path().join("p.toml");
    std::fs::write(&p, PARAMS).unwrap();
    let args = [
        &[
            t.as_str(),
            "--params",
            p.to_str().unwrap(),
            "--format",
            "json",
        ],
        extra,
    ];
    json(&args.concat())
}

fn ns(v: &serde_json::Value) -> f64 {
    (v.as_f64().unwrap() * 1e12).round() / 1e3
}

/// Without the tracer's time: rank 0 sends at 1000, returns at 1050, ends at 1100; rank 1's
/// message arrives at 1150, its receive ends at 1200, it ends at 1220. With 100 ns a record
/// taken out: rank 0 sends at 900 (1000 − 100), its 50 ns gap goes (ends 950); rank 1's first
/// gap is 0, its 20 ns gap goes: the message arrives at 1050, it ends at 1100. Taken out:
/// rank 0 100 + 50, rank 1 0 + 20: 85 ns a rank.
#[test]
fn the_tracers_time_comes_out_of_each_gap_at_most_the_gap() {
    let kept = predict(&trace(""), &[]);
    assert_eq!(ns(&kept["predicted_s"]), 1220.0);
    assert!(kept.get("tracer_removed_s").is_none(), "{kept}");
    let v = predict(&trace(" own 100"), &[]);
    assert_eq!(ns(&v["predicted_s"]), 1100.0);
    assert_eq!(ns(&v["ranks"][0]["end_s"]), 950.0);
    assert_eq!(ns(&v["ranks"][0]["computation_s"]), 900.0);
    assert_eq!(ns(&v["tracer_removed_s"]), 85.0);
    // The measured runtime is the traced run's, as recorded.
    assert_eq!(ns(&v["measured_s"]), 1120.0);
    let k = predict(&trace(" own 100"), &["--keep-tracer-time"]);
    assert_eq!(ns(&k["predicted_s"]), 1220.0);
    assert!(k.get("tracer_removed_s").is_none(), "{k}");
    // The time inside the calls changes nothing where the tracer's time is taken out.
    let v = predict(&trace(" own 100 inside 30"), &[]);
    assert_eq!(ns(&v["predicted_s"]), 1100.0);
    assert_eq!(ns(&v["tracer_removed_s"]), 85.0);
}

/// Keeping the tracer's time, 30 ns inside each call goes into each gap after `MPI_Init`:
/// rank 0 sends at 1030 (1000 + 30), returns at 1080, ends at 1160 (50 + 30 later); rank 1
/// receives from 30, the message arrives at 1180 (1030 + 50 + 100), its receive ends at 1230,
/// it ends at 1280 (20 + 30 later). Added: 60 ns a rank, said as a negative removal.
#[test]
fn keeping_the_tracers_time_adds_its_time_inside_the_calls() {
    let k = predict(&trace(" own 100 inside 30"), &["--keep-tracer-time"]);
    assert_eq!(ns(&k["predicted_s"]), 1280.0);
    assert_eq!(ns(&k["ranks"][0]["end_s"]), 1160.0);
    assert_eq!(ns(&k["ranks"][1]["computation_s"]), 80.0);
    assert_eq!(ns(&k["tracer_removed_s"]), -60.0);
    let (dir, t) = text_trace("own.txt", &trace(" own 100 inside 30"));
    let p = dir.path().join("p.toml");
    std::fs::write(&p, PARAMS).unwrap();
    let out = run(&[&t, "--params", p.to_str().unwrap(), "--keep-tracer-time"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("tracer     0.000000 s a rank added to the measured computation"),
        "{text}"
    );
}

/// A record of a request's routine has figures of its own (`requests OWN INSIDE`), and a gap
/// takes the mean of its two ends' figures: what is taken out depends on the gaps and the
/// routines alone, not on the model. Rank 0: `MPI_Init`, `MPI_Isend` at 1000, `MPI_Wait` at
/// 2000, `MPI_Finalize` at 3000; rank 1: `MPI_Recv` at 500, `MPI_Finalize` at 4000. Own 100 a
/// record, 200 a request's: rank 0's gaps lose (100 + 200) / 2, 200 and (200 + 100) / 2 = 500,
/// rank 1's 100 and 100 = 200: 350 ns a rank. Kept, inside 30 and 50: rank 0's gain 40, 50, 40
/// = 130, rank 1's 60: 95 ns a rank added. Without `requests`, every record is the same: own
/// 100 a gap, 250 ns a rank.
#[test]
fn a_requests_records_take_their_own_figures() {
    let trace = |figures: &str| {
        format!(
            "loggps-trace 1\nranks 2\n\
             rank 0 host \"a\" offset 0 0{figures}\nrank 1 host \"a\" offset 0 0{figures}\n\
             0 MPI_Init 0 0\n0 MPI_Isend 1000 1010 bytes=8 peer=1 tag=0 comm=0 req=0\n\
             0 MPI_Wait 2000 2010 done=0:-1:-1\n0 MPI_Finalize 3000 3010\n\
             1 MPI_Init 0 0\n1 MPI_Recv 500 2500 bytes=8 peer=0 tag=0\n1 MPI_Finalize 4000 4010\n"
        )
    };
    let both = trace(" own 100 inside 30 requests 200 50");
    assert_eq!(ns(&predict(&both, &[])["tracer_removed_s"]), 350.0);
    let kept = predict(&both, &["--keep-tracer-time"]);
    assert_eq!(ns(&kept["tracer_removed_s"]), -95.0);
    let plain = predict(&trace(" own 100 inside 30"), &[]);
    assert_eq!(ns(&plain["tracer_removed_s"]), 250.0);
}

/// Routines whose own time the tracer sampled during the run (8 samples or more) take their
/// figures, the others those timed at `MPI_Init`, a gap the mean of its two ends'. Rank 0
/// sampled `MPI_Isend` at 300 ns and `MPI_Wait` at 60: its gaps lose (100 + 300) / 2,
/// (300 + 60) / 2 and (60 + 100) / 2 = 460 (350 by the `MPI_Init` figures); rank 1 sampled
/// `MPI_Recv` 7 times only, 200 as before: 330 ns a rank.
/// Keeping the tracer's time adds the time inside the calls as before (95 ns a rank).
#[test]
fn sampled_routines_take_their_own_figures() {
    let figures = " own 100 inside 30 requests 200 50 cpus 2";
    let text = format!(
        "loggps-trace 1\nranks 2\n\
         rank 0 host \"a\" offset 0 0{figures}\n\
         sampled 0 MPI_Isend 8 300 MPI_Wait 9 60\n\
         rank 1 host \"a\" offset 0 0{figures}\n\
         sampled 1 MPI_Recv 7 900\n\
         0 MPI_Init 0 0\n0 MPI_Isend 1000 1010 bytes=8 peer=1 tag=0 comm=0 req=0\n\
         0 MPI_Wait 2000 2010 done=0:-1:-1\n0 MPI_Finalize 3000 3010\n\
         1 MPI_Init 0 0\n1 MPI_Recv 500 2500 bytes=8 peer=0 tag=0\n1 MPI_Finalize 4000 4010\n"
    );
    assert_eq!(ns(&predict(&text, &[])["tracer_removed_s"]), 330.0);
    let kept = predict(&text, &["--keep-tracer-time"]);
    assert_eq!(ns(&kept["tracer_removed_s"]), -95.0);
}

/// The sampled figures travel through the binary encoding and back to text exactly, on a rank
/// with the cores' figures and one without (the `R` chunk's length tells which); a `sampled`
/// line before its rank's `cpus`, of a name that is no routine, or of a routine twice is
/// refused with its line.
#[test]
fn sampled_figures_travel_and_are_checked() {
    let text = "loggps-trace 1\nranks 2\n\
         rank 0 host \"a\" offset 0 0 cores 1 120.5 130.25 own 50 inside 9.5 requests 80 17.75 cpus 2\n\
         sampled 0 MPI_Bcast 312 130.125 MPI_Allreduce 316 191.5\n\
         rank 1 host \"a\" offset 0 0 own 51 inside 8.25 requests 70 0 cpus 2\n\
         sampled 1 MPI_Send 1 58.75\n\
         0 MPI_Init 0 0\n0 MPI_Finalize 3000 3010\n1 MPI_Init 0 0\n1 MPI_Finalize 4000 4010\n";
    let (_dir, back, _) = through_binary(text);
    for line in [
        "sampled 0 MPI_Bcast 312 130.125 MPI_Allreduce 316 191.5\n",
        "sampled 1 MPI_Send 1 58.75\n",
        "cores 1 120.5 130.25 own 50",
    ] {
        assert!(back.contains(line), "{line}: {back}");
    }
    for (bad, why) in [
        (
            text.replace(" cpus 2\nsampled 1", "\nsampled 1"),
            "`cpus` before its `sampled` line",
        ),
        (text.replace("MPI_Send 1", "MPI_Sand 1"), "found `MPI_Sand`"),
        (
            text.replace("MPI_Send 1 58.75", "MPI_Send 1 58.75 MPI_Send 2 3"),
            "MPI_Send twice",
        ),
        (
            text.replace("MPI_Send 1 58.75", "MPI_Send 0 58.75"),
            "at least one sample",
        ),
    ] {
        let (_d, path) = text_trace("bad.txt", &bad);
        let out = run(&[&path]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("line 6") && err.contains(why),
            "{why}: {err}"
        );
    }
}

/// A text trace converted to our binary and back: its directory, the text that came back and
/// the binary's path.
fn through_binary(text: &str) -> (tempfile::TempDir, String, String) {
    let (dir, t) = text_trace("trace.txt", text);
    let bin = dir.path().join("trace.bin");
    let back = dir.path().join("back.txt");
    for (from, to) in [(t.as_str(), &bin), (bin.to_str().unwrap(), &back)] {
        let out = run(&["convert", from, to.to_str().unwrap()]);
        assert!(out.status.success(), "{out:?}");
    }
    let text = std::fs::read_to_string(&back).unwrap();
    (dir, text, bin.to_str().unwrap().to_string())
}

/// The figure travels through the binary encoding and back to text exactly; a figure that
/// cannot be one is refused with its line.
#[test]
fn the_tracers_time_travels_and_is_checked() {
    let (_dir, text, _) = through_binary(&trace(" own 61.5 inside 20.25 requests 80 12.5"));
    let line = " own 61.5 inside 20.25 requests 80 12.5\n";
    assert_eq!(text.matches(line).count(), 2, "{text}");
    let (_d, bad) = text_trace("bad.txt", &trace(" own -5"));
    let out = run(&[&bad]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 3") && err.contains("own time per record"),
        "{err}"
    );
    for bad_figures in [" own 5 inside -1", " own 5 inside 1 requests 5 -1"] {
        let (_d, bad) = text_trace("bad.txt", &trace(bad_figures));
        let out = run(&[&bad]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains("line 3") && err.contains("time inside a call"),
            "{bad_figures}: {err}"
        );
    }
}

/// The CPUs a node's ranks could run on (the tracer's affinity masks together, at `MPI_Init`)
/// travel through the binary encoding and back; a node of more ranks than CPUs (both ranks
/// on host "a", one CPU) is warned of by every command that predicts, as many or more are not;
/// a count of 0 is refused with its line.
#[test]
fn a_node_of_more_ranks_than_cpus_is_said() {
    let figures = " own 100 inside 30 requests 200 50 cpus 1";
    let (dir, text, bin) = through_binary(&trace(figures));
    assert_eq!(text.matches(&format!("{figures}\n")).count(), 2, "{text}");
    let p = dir.path().join("p.toml");
    std::fs::write(&p, PARAMS).unwrap();
    let said = "the node of rank 0 ran 2 ranks on 1 CPU (the CPUs their affinity allowed";
    let bin = bin.as_str();
    for cmd in [
        &["predict"][..],
        &["sensitivity"],
        &["predict", "--sweep", "o=50,60"],
    ] {
        let args = [cmd, &[bin, "--params", p.to_str().unwrap()]].concat();
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && err.matches(said).count() == 1,
            "{cmd:?}: {err}"
        );
    }
    let info = json(&["info", bin, "--format", "json"]);
    assert_eq!(info["node_cpus"], serde_json::json!([1.0, 1.0]), "{info}");
    let (_d, two) = text_trace(
        "two.txt",
        &trace(" own 100 inside 30 requests 200 50 cpus 2"),
    );
    let out = run(&[&two, "--params", p.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("ran 2 ranks on"));
    let (_d, bad) = text_trace(
        "bad.txt",
        &trace(" own 100 inside 30 requests 200 50 cpus 0"),
    );
    let out = run(&[&bad]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("line 3") && err.contains("the node's CPUs"),
        "{err}"
    );
}

/// A call the replay keeps as traced (a failed poll without `--poll`) costs its traced time
/// less the tracer's time inside its span, in both ways of taking the tracer's time: that span
/// holds it, as a modeled call's cost does not. Rank 0: `MPI_Init` at 0, an `MPI_Iprobe` that
/// finds nothing at 1000–1100, `MPI_Finalize` at 1200; rank 1 ends at 1300; own 10, inside 30
/// (a probe's record is not a request's). Default: rank 0 calls the probe at 990 (1000 − 10),
/// it costs 70 (100 − 30), the 100 ns gap after it less 10: ends at 1150. Kept: the probe at
/// 1030, 70 ns, the gap 100 + 30: 1230 (the traced run's 1200 and the 30 added after its
/// `MPI_Init`, whose modeled cost holds none). With `--poll 40`, the model's 40 ns, which holds
/// none of the tracer's: 1120 and 1200.
#[test]
fn a_call_kept_as_traced_holds_the_tracers_time_inside_it() {
    let text = "loggps-trace 1\nranks 2\n\
                rank 0 host \"a\" offset 0 0 own 10 inside 30\n\
                rank 1 host \"a\" offset 0 0 own 10 inside 30\n\
                0 MPI_Init 0 0\n0 MPI_Iprobe 1000 1100 peer=1 tag=0\n0 MPI_Finalize 1200 1210\n\
                1 MPI_Init 0 0\n1 MPI_Finalize 1300 1310\n";
    let end = |extra: &[&str]| ns(&predict(text, extra)["ranks"][0]["end_s"]);
    assert_eq!(end(&[]), 1150.0);
    assert_eq!(end(&["--keep-tracer-time"]), 1230.0);
    assert_eq!(end(&["--poll", "40"]), 1120.0);
    assert_eq!(end(&["--poll", "40", "--keep-tracer-time"]), 1200.0);
}
