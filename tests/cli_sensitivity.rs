//! `sensitivity`: derivatives against hand calculation and against predictions at nearby
//! values, tolerances, the best eager limit.

mod common;

use common::{fixture, json, predicted_ns, run, synthesized};
use serde_json::Value;

fn sensitivity(args: &[&str]) -> Value {
    json(&[&["sensitivity"], args, &["--format", "json"]].concat())
}

/// The derivative of parameter `name` in a sensitivity report.
fn derivative(v: &Value, name: &str) -> f64 {
    v["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {v}"))["ns_per_unit"]
        .as_f64()
        .unwrap()
}

/// Field `key` of parameter `name`'s derivative.
fn field(v: &Value, name: &str, key: &str) -> f64 {
    v["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {v}"))[key]
        .as_f64()
        .unwrap()
}

fn tolerance(v: &Value, name: &str, rise: f64) -> Option<f64> {
    v["tolerances"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name && t["rise_pct"] == rise)
        .unwrap_or_else(|| panic!("{name} {rise}% in {v}"))["added"]
        .as_f64()
}

fn close(got: f64, want: f64, rel: f64, what: &str) {
    assert!(
        (got - want).abs() <= rel * want.abs().max(1.0),
        "{what}: {got} != {want}"
    );
}

/// The round trip of the model's §6 with k = 12000, w = 0 (Myrinet, eager, s = 8191): the
/// runtime is 2(T1 + T2' + T3) = 2(2o + L + k·Os + s·Gs + (k − s)·Gl + k·Or) = 502,796.04 ns,
/// so its derivatives are 2 by L, 4 by o, 2k = 24,000 by Os and by Or, 2s = 16,382 by Gs,
/// 2(k − s) = 7,618 by Gl, and 0 by gamma (no reduction). It rises by 1% (5,027.9604 ns) when
/// L grows by 2,513.9802, o by 1,256.9901 or G (Gs and Gl) by 5,027.9604 / 24,000, and five
/// times as much for 5%. Every S from 12,000 on keeps the message eager: the best.
#[test]
fn derivatives_and_tolerances_are_the_hand_calculation() {
    let f = fixture("rtt/k12000-w0.txt");
    let v = sensitivity(&[f.to_str().unwrap()]);
    close(
        v["predicted_s"].as_f64().unwrap() * 1e9,
        502_796.04,
        1e-12,
        "runtime",
    );
    for (name, want) in [
        ("L", 2.0),
        ("o", 4.0),
        ("Os", 24_000.0),
        ("Or", 24_000.0),
        ("Gs", 16_382.0),
        ("Gl", 7_618.0),
        ("gamma", 0.0),
    ] {
        close(derivative(&v, name), want, 1e-6, name);
        close(field(&v, name, "from_critical_path"), want, 1e-6, name);
    }
    let rise = 5_027.960_4;
    for (name, per) in [("L", 2.0), ("o", 4.0), ("G", 24_000.0)] {
        close(tolerance(&v, name, 1.0).unwrap(), rise / per, 1e-6, name);
        close(
            tolerance(&v, name, 5.0).unwrap(),
            5.0 * rise / per,
            1e-6,
            name,
        );
    }
    // The runtime with L grown so is 1% more, as a prediction says.
    let l = 1160.0 + tolerance(&v, "L", 1.0).unwrap();
    let t = predicted_ns(&[f.to_str().unwrap(), "--L", &l.to_string()]);
    close(t, 1.01 * 502_796.04, 1e-9, "L at its tolerance");
    assert_eq!(v["best_s"]["best"], 12000);
    close(
        v["best_s"]["best_ns"].as_f64().unwrap(),
        502_796.04,
        1e-12,
        "best",
    );
    // S = 0 sends it by rendezvous: slower.
    let at0 = &v["best_s"]["tried"][0];
    assert_eq!(at0[0], 0);
    assert!(at0[1].as_f64().unwrap() > 502_796.04, "{v}");
}

/// Each derivative agrees with predictions at nearby values made by the prediction's own flags:
/// on the synthetic patterns under Myrinet's parameters (a central difference of `--L`, `--o`,
/// `--Os`, `--Gs`), and on the recorded Gaussian-elimination traces, whose parameters come in
/// bands: there `--scale NAME=1±ε` moves every band's NAME at once, so the runtime moves by
/// the sum over bands of each band's value times its derivative. The derivative read off the
/// critical path is the one the replays give by a step up (the path's own side, where the
/// path changes within the step), for every parameter, collectives modeled (their schedules
/// costed again) and measured.
#[test]
fn derivatives_agree_with_predictions_at_nearby_values() {
    let dir = tempfile::tempdir().unwrap();
    for pattern in ["ring", "halo2d", "bcast", "gauss", "cg"] {
        let f = synthesized(
            dir.path(),
            &[
                "--pattern",
                pattern,
                "--ranks",
                "8",
                "--iterations",
                "3",
                "--bytes",
                "20000",
            ],
        );
        let v = sensitivity(&[&f, "--platform", "myrinet"]);
        for (name, value, h) in [
            ("L", 1160.0, 1.0),
            ("o", 6550.0, 1.0),
            ("Os", 6.86, 1e-3),
            ("Gs", 15.48, 1e-3),
        ] {
            let at = |x: f64| {
                predicted_ns(&[
                    &f,
                    "--platform",
                    "myrinet",
                    &format!("--{name}"),
                    &x.to_string(),
                ])
            };
            let fd = (at(value + h) - at(value - h)) / (2.0 * h);
            close(
                derivative(&v, name),
                fd,
                1e-6,
                &format!("{pattern}: {name}"),
            );
        }
        for coll in ["modeled", "measured"] {
            let v = sensitivity(&[
                &f,
                "--platform",
                "myrinet",
                "--coll",
                coll,
                "--gamma",
                "0.5",
            ]);
            assert_eq!(v["critical_path_unread_s"], 0.0, "{pattern}");
            path_is_the_right_derivative(&v, pattern);
        }
    }
    for t in [
        "traces/gauss-n512-p2-s4096-original-r1.bin",
        "traces/gauss-n1024-p2-s4096-fragmented-r1.bin",
    ] {
        let v = sensitivity(&[t]);
        let t0 = v["predicted_s"].as_f64().unwrap() * 1e9;
        for name in ["o", "Os", "Or"] {
            let eps = 1e-4;
            let at = |f: f64| predicted_ns(&[t, "--scale", &format!("{name}={f}")]);
            // As along the path (`path_is_the_right_derivative`): the derivative lies between
            // the slopes by a step down and by a step up.
            let here = at(1.0);
            let (right, left) = ((at(1.0 + eps) - here) / eps, (here - at(1.0 - eps)) / eps);
            let by_bands: f64 = v["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["name"].as_str().unwrap().ends_with(&format!(".{name}")))
                .map(|d| d["value"].as_f64().unwrap() * d["ns_per_unit"].as_f64().unwrap())
                .sum();
            let tol = 1e-4 * by_bands.abs().max(1.0);
            assert!(
                left - tol <= by_bands && by_bands <= right + tol,
                "{t}: {name}: {by_bands} not within the slopes {left} … {right}"
            );
            assert!(t0 > 0.0);
        }
        path_is_the_right_derivative(&v, t);
        path_is_the_right_derivative(&sensitivity(&[t, "--coll", "measured"]), t);
    }
    // 64 ranks' Allreduces of 100 kB, modeled: gamma's derivative is read off the path too.
    // Open MPI's choice here is recursive doubling (`collective allreduce --ranks 64 --bytes
    // 100000 --algorithm tuned`): log2 64 = 6 steps each reducing the whole vector, 600 kB a
    // call, so by hand 3 × 600,000 = 1,800,000 ns per ns/B on the path.
    let other = tempfile::tempdir().unwrap();
    let f = synthesized(
        other.path(),
        &[
            "--pattern",
            "allreduce",
            "--ranks",
            "64",
            "--iterations",
            "3",
            "--bytes",
            "100000",
        ],
    );
    let v = sensitivity(&[&f, "--platform", "myrinet", "--gamma", "0.5"]);
    path_is_the_right_derivative(&v, "allreduce");
    close(
        field(&v, "gamma", "from_critical_path"),
        1_800_000.0,
        1e-6,
        "gamma",
    );
}

/// Every parameter's derivative read off the critical path lies between the replays' slopes by
/// a step down and by a step up: the runtime is a maximum over paths of sums linear in the
/// parameter, convex, and the path's slope is one of its subgradients (the slopes are equal,
/// and so the path's, where no path changes within the step). With no step down (a parameter
/// at 0), it is at most the step up's.
fn path_is_the_right_derivative(v: &Value, what: &str) {
    for d in v["parameters"].as_array().unwrap() {
        let name = d["name"].as_str().unwrap();
        let (path, right) = (
            d["from_critical_path"].as_f64().unwrap(),
            d["right_ns_per_unit"].as_f64().unwrap(),
        );
        match d["left_ns_per_unit"].as_f64() {
            Some(left) => {
                // (Rounding makes the two slopes of a straight stretch differ in the 7th digit,
                // either way.)
                let (lo, hi) = (left.min(right), left.max(right));
                let tol = 1e-6 * path.abs().max(1.0);
                assert!(
                    lo - tol <= path && path <= hi + tol,
                    "{what}: {name}: {path} not within the slopes {left} … {right}"
                );
            }
            None => assert!(
                path <= right + 1e-6 * path.abs().max(1.0),
                "{what}: {name}: {path} above the slope {right}"
            ),
        }
    }
}

/// A rendezvous message whose copy is slowed (bounced, its buffers aliased: the model's §13) is
/// read off the critical path by the rule the replay costed it with, at its receiver's end and
/// at its sender's, which waits for the copy: Myrinet's 16,384 B message sent at 0 into offset
/// 16 from offset 0, with `--alias 0.5` (and the receive flagged bounced, `--bounce 2`), the
/// receiver ending last, then the sender (which computes 400,000 ns after its Send): every
/// derivative read off the path lies within the slopes of the replays at nearby values, and
/// none of the path is left unread (before, the slowed calls had no rule).
#[test]
fn a_slowed_copy_is_read_off_the_path() {
    let trace = |recv_flags: &str, after: u64| {
        format!(
            "loggps-trace 1\nranks 2\n\
             params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
             0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes=16384 peer=1 tag=0 send_page=0\n\
             0 MPI_Finalize {after} {after}\n\
             1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=16384 peer=0 tag=0 recv_page=16{recv_flags}\n\
             1 MPI_Finalize 20 30\n",
            after = after
        )
    };
    for (what, t, args) in [
        ("aliased", trace("", 20), &["--alias", "0.5"][..]),
        (
            "aliased and bounced",
            trace(" flags=bounced", 20),
            &["--alias", "0.5", "--bounce", "2"][..],
        ),
        (
            "the sender last",
            trace(" flags=bounced", 400_000),
            &["--alias", "0.5", "--bounce", "2"][..],
        ),
    ] {
        let (_d, f) = common::text_trace("slowed.txt", &t);
        let v = sensitivity(&[&[f.as_str()], args].concat());
        assert_eq!(v["critical_path_unread_s"], 0.0, "{what}: {v}");
        path_is_the_right_derivative(&v, what);
        close(derivative(&v, "Os"), 16384.0, 1e-6, what);
    }
}

/// A receive of a message taken in while its rank waited (the model's §14, `drained`) is read
/// off the path by its rule: rank 0 waits for rank 1's 1,000 B until 130,050, then receives
/// rank 2's, there since 30,050, at `drained` (500 ns); rank 0 ends last.
#[test]
fn a_drained_receive_is_read_off_the_path() {
    let t = "loggps-trace 1\nranks 3\n\
        params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
        0 MPI_Init 0 0\n0 MPI_Recv 0 10 bytes=1000 peer=1 tag=1\n\
        0 MPI_Recv 10 20 bytes=1000 peer=2 tag=2\n0 MPI_Finalize 20 30\n\
        1 MPI_Init 0 0\n1 MPI_Send 100000 100010 bytes=1000 peer=0 tag=1\n\
        1 MPI_Finalize 100010 100020\n\
        2 MPI_Init 0 0\n2 MPI_Send 0 10 bytes=1000 peer=0 tag=2\n2 MPI_Finalize 10 20\n";
    let (_d, f) = common::text_trace("drained.txt", t);
    let v = sensitivity(&[&f, "--drained", "500", "--wait", "10"]);
    assert_eq!(v["critical_path_unread_s"], 0.0, "{v}");
    path_is_the_right_derivative(&v, "drained");
    // Rank 0's receives end it, no Wait: `wait` moves nothing.
    close(derivative(&v, "wait"), 0.0, 1e-9, "wait");
    // The path holds rank 1's message (T1 + T2 + T3 of 1,000 B) and not rank 2's: by `Os`,
    // its 1,000 bytes once.
    close(derivative(&v, "Os"), 1000.0, 1e-6, "drained");
}

/// Small messages taken in at an earlier receive's poll (the model's §14) are read off the path
/// by their rule: tests/cli_overheads.rs's three 8-byte messages, received after 100 µs of
/// computation, the second and third at `drained`: the runtime moves by the first receive's
/// `T3 + Od` alone (the sends end before the receives start; `--Od` makes the set banded, its
/// first band `b1`): by `o` and `Od` once and by `Or` 8 times (three times as much were each
/// receive to take its message in itself).
#[test]
fn small_messages_taken_in_at_a_poll_are_read_off_the_path() {
    let t = common::three_small_messages();
    let (_d, f) = common::text_trace("polled.txt", &t);
    // Its first six: no Wait's floor, messages moving whatever the rank does.
    let v = sensitivity(&[&[f.as_str()][..], &common::poll_flags("1000")[..6]].concat());
    assert_eq!(v["critical_path_unread_s"], 0.0, "{v}");
    path_is_the_right_derivative(&v, "polled");
    close(derivative(&v, "b1.o"), 1.0, 1e-6, "o");
    close(derivative(&v, "b1.Od"), 1.0, 1e-6, "Od");
    close(derivative(&v, "b1.Or"), 8.0, 1e-6, "Or");
}

/// So are messages taken in at a Wait's poll and at a failed probe's (tests/cli_overheads.rs's
/// `a_wait_and_a_failed_probe_poll_too`): the runtime moves by the first Wait's `T3 + Od`, `Or`
/// 8 times, where each Wait taking its own message in would move it 24 times; after a failed
/// `MPI_Iprobe`, by no receive's `Or` (each takes its message from the probe's poll).
#[test]
fn messages_taken_in_at_a_waits_or_a_probes_poll_are_read_off_the_path() {
    let flags = common::poll_flags("1000");
    let traces = [
        (common::three_small_messages_waited(100_000), 8.0),
        (common::three_small_messages_probed(), 0.0),
    ];
    for (t, or) in traces {
        let (_d, f) = common::text_trace("polled.txt", &t);
        let v = sensitivity(&[&[f.as_str()][..], &flags].concat());
        assert_eq!(v["critical_path_unread_s"], 0.0, "{v}");
        path_is_the_right_derivative(&v, "polled");
        close(derivative(&v, "b1.Or"), or, 1e-6, "Or");
    }
}

/// Receives behind another in one Waitall (the model's §14, "Receives in a queue") are read off
/// the path by their rule: three 1,000-byte messages arrive at once at a rank in `MPI_Waitall`;
/// with `--drained 500` the second and third each pay `T3(1000) − (T3(0) − drained)`, `Or`
/// times 1,000 B and no `o`: the runtime moves by `o` twice (the send's `T1` and the first
/// receive's `T3`; four times without `drained`) and by `Or` 3,000 times either way.
#[test]
fn receives_in_a_queue_are_read_off_the_path() {
    let mut t = String::from(
        "loggps-trace 1\nranks 4\n\
         params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
         0 MPI_Init 0 0\n0 MPI_Irecv 0 10 bytes=1000 peer=1 tag=0 req=0\n\
         0 MPI_Irecv 10 20 bytes=1000 peer=2 tag=0 req=1\n\
         0 MPI_Irecv 20 30 bytes=1000 peer=3 tag=0 req=2\n\
         0 MPI_Waitall 30 40 done=0:1:0,1:2:0,2:3:0\n0 MPI_Finalize 40 50\n",
    );
    for r in 1..4 {
        t += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Send 0 10 bytes=1000 peer=0 tag=0\n{r} MPI_Finalize 10 20\n"
        );
    }
    let (_d, f) = common::text_trace("queue.txt", &t);
    let v = sensitivity(&[&f, "--drained", "500"]);
    assert_eq!(v["critical_path_unread_s"], 0.0, "{v}");
    path_is_the_right_derivative(&v, "queue");
    close(derivative(&v, "o"), 2.0, 1e-6, "o");
    close(derivative(&v, "Or"), 3000.0, 1e-6, "Or");
    let v = sensitivity(&[&f]);
    path_is_the_right_derivative(&v, "queue without drained");
    close(derivative(&v, "o"), 4.0, 1e-6, "o without drained");
}

/// A Wait that finds its send long done costs `wait` (the model's §4): by it, the runtime
/// moves one for one, on the path and in the replays.
#[test]
fn a_wait_floor_is_read_off_the_path() {
    let t = "loggps-trace 1\nranks 2\n\
        params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383 wait=10\n\
        0 MPI_Init 0 0\n0 MPI_Isend 0 10 bytes=8 peer=1 tag=0 req=0\n\
        0 MPI_Wait 100000 100010 done=0:-1:-1\n0 MPI_Finalize 100010 100020\n\
        1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=8 peer=0 tag=0\n1 MPI_Finalize 10 20\n";
    let (_d, f) = common::text_trace("wait.txt", t);
    let v = sensitivity(&[&f]);
    assert_eq!(v["critical_path_unread_s"], 0.0, "{v}");
    path_is_the_right_derivative(&v, "wait");
    close(derivative(&v, "wait"), 1.0, 1e-9, "wait");
}

/// A trace without messages does not depend on L: its tolerance is none; a bad range says so.
#[test]
fn what_does_not_matter_says_so() {
    let t = "loggps-trace 1\nranks 1\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
        0 MPI_Init 0 0\n0 MPI_Finalize 1000 1010\n";
    let (_d, f) = common::text_trace("alone.txt", t);
    let v = sensitivity(&[&f]);
    assert_eq!(tolerance(&v, "L", 1.0), None, "{v}");
    assert!(v["best_s"].is_null());
    let table = String::from_utf8_lossy(&run(&["sensitivity", &f]).stdout).to_string();
    assert!(table.contains("any: it does not matter"), "{table}");
    let out = run(&["sensitivity", &f, "--S-range", "9:3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected LO:HI"));
    let out = run(&["sensitivity", &f, "--model", "loggp"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Two ranks that both send 1000 bytes before they receive: any S below 1000 deadlocks. The
/// best S is 1000, the failed one is named; a range where all fail is a warning, not an end.
#[test]
fn an_s_that_deadlocks_is_no_answer() {
    let t = "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
        0 MPI_Init 0 0\n0 MPI_Send 10 20 bytes=1000 peer=1\n0 MPI_Recv 30 40 bytes=1000 peer=1\n0 MPI_Finalize 50 60\n\
        1 MPI_Init 0 0\n1 MPI_Send 10 20 bytes=1000 peer=0\n1 MPI_Recv 30 40 bytes=1000 peer=0\n1 MPI_Finalize 50 60\n";
    let (_d, f) = common::text_trace("h2h.txt", t);
    let v = sensitivity(&[&f]);
    assert_eq!(v["best_s"]["best"], 1000, "{v}");
    assert_eq!(v["best_s"]["failed"][0][0], 0, "{v}");
    assert!(
        v["best_s"]["failed"][0][1]
            .as_str()
            .unwrap()
            .contains("deadlock")
    );
    let out = run(&["sensitivity", &f, "--S-range", "0:500"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("every one failed"));
}

/// Each rank posts a 1000-byte Isend and Irecv, computes 10 ms and waits: eager or by
/// rendezvous, both messages are done long before the Waits (Myrinet's rendezvous takes under
/// 0.4 ms), so every S tried predicts the same runtime and the report says S does not matter
/// instead of naming a best. A trace of no point-to-point message says so too.
#[test]
fn where_s_does_not_matter_no_best_is_named() {
    let rank = |r: u32| {
        let q = 1 - r;
        format!(
            "{r} MPI_Init 0 0\n{r} MPI_Isend 0 10 bytes=1000 peer={q} tag=0 req=0\n\
             {r} MPI_Irecv 10 20 bytes=1000 peer={q} tag=0 req=1\n\
             {r} MPI_Waitall 10000020 10000030 done=0:-1:-1,1:{q}:0\n{r} MPI_Finalize 10000030 10000040\n"
        )
    };
    let t = format!(
        "loggps-trace 1\nranks 2\nparams L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n{}{}",
        rank(0),
        rank(1)
    );
    let (_d, f) = common::text_trace("hidden.txt", &t);
    let out = run(&["sensitivity", &f]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(
            "best S     none: S does not matter here: the 2 values of S replayed in 0–1000 B"
        ),
        "{text}"
    );
    let v = sensitivity(&[&f]);
    assert!(
        v["s_matters_not"]
            .as_str()
            .unwrap()
            .contains("does not matter")
    );
    let t = "loggps-trace 1\nranks 1\n0 MPI_Init 0 0\n0 MPI_Finalize 10 20\n";
    let (_d, f) = common::text_trace("alone.txt", t);
    let out = run(&["sensitivity", &f, "--platform", "myrinet"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("best S     none: the trace has no point-to-point message"),
        "{text}"
    );
}

/// A band whose `o` and `Or` are 0 leaves `Op` no room (0 ≤ `Op` ≤ `T3` = 0), nor `Od` with `Os`
/// 0 (`T1` = 0): neither step is a valid set, so each is reported pinned, not varied (a
/// calibration's last band, `o` = 0 at its bound, ended the whole report with an error before).
/// A message of 1000 B in that band: `T2` = 1000 + 1000·2 = 3000 ns (`L`, `k·G`); the runtime
/// moves by 1 a ns of `L`, by 1000 a ns/B of `G`.
#[test]
fn a_parameter_whose_bounds_meet_is_pinned() {
    let t = "loggps-trace 1\nranks 2\n\
        0 MPI_Init 0 0\n0 MPI_Send 10 20 bytes=1000 peer=1\n0 MPI_Finalize 30 40\n\
        1 MPI_Init 0 0\n1 MPI_Recv 10 20 bytes=1000 peer=0\n1 MPI_Finalize 30 40\n";
    let (d, f) = common::text_trace("pinned.txt", t);
    let set = d.path().join("set.toml");
    let set = set.to_str().unwrap();
    let band = |hi: &str, o: u32, od: u32| {
        format!("[[set.bands]]\n{hi}o = {o}\nL = 1000\nOs = 0\nOr = 0\nG = 2\nOd = {od}\nOp = 0\n")
    };
    let bands = [band("hi = 100\n", 50, 10), band("", 0, 0)].concat();
    std::fs::write(set, format!("[[set]]\nS = 100000\n{bands}")).unwrap();
    let v = sensitivity(&[&f, "--params", set]);
    for name in ["b2.Od", "b2.Op"] {
        let d = (v["parameters"].as_array().unwrap().iter())
            .find(|d| d["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {v}"));
        assert_eq!(d["difference"], "pinned", "{d}");
        assert_eq!(d["ns_per_unit"], 0.0, "{d}");
    }
    close(derivative(&v, "b2.L"), 1.0, 1e-6, "L");
    close(derivative(&v, "b2.G"), 1000.0, 1e-6, "G");
    let table =
        String::from_utf8_lossy(&run(&["sensitivity", &f, "--params", set]).stdout).to_string();
    assert!(table.contains("(pinned: its bounds meet"), "{table}");
}

/// Where messages move only inside calls an `MPI_Isend` returns once its message has left
/// (`T1 − Od`), and the critical path reads it so: by hand (myrinet, `Od` 2,000, 1,000 bytes)
/// rank 0's Isend returns at 13,410 − 2,000 = 11,410, it computes 100,000 ns and its Wait,
/// nothing left to wait for, returns `o` later: 117,960, all of it read off the path, and the
/// runtime falls by 1 ns a ns of the first band's `Od` (the Isend's), by replays and by the path.
#[test]
fn the_critical_path_reads_an_isend_that_returns_when_its_message_left() {
    let t = "loggps-trace 1\nranks 2\n0 MPI_Isend 0 1 bytes=1000 peer=1 tag=0 req=0\n\
             0 MPI_Wait 100001 100002 done=0:-1:-1\n1 MPI_Recv 0 1 bytes=1000 peer=0 tag=0\n";
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("isend.txt");
    std::fs::write(&f, t).unwrap();
    let f = f.to_str().unwrap();
    let v = sensitivity(&[
        f,
        "--platform",
        "myrinet",
        "--progress",
        "calls",
        "--Od",
        "2000",
    ]);
    assert!(
        (v["predicted_s"].as_f64().unwrap() - 117_960e-9).abs() < 1e-12,
        "{v}"
    );
    assert_eq!(v["critical_path_unread_s"], 0.0, "{v}");
    assert!((derivative(&v, "b1.Od") + 1.0).abs() < 1e-6, "{v}");
    assert!(
        (field(&v, "b1.Od", "from_critical_path") + 1.0).abs() < 1e-9,
        "{v}"
    );
}
