//! Invariants of the pipeline on random valid traces: parallel replay equals sequential bit for
//! bit (LogGPS and LogGP), raising S never makes a prediction slower, text ↔ binary round trips
//! exactly, and the four parts of every rank add up to its end.

mod common;

use loggps_predict::model::{LogGp, Model, Params};
use loggps_predict::replay::Prediction;
use loggps_predict::trace::{self, Trace, binary, text};
use loggps_predict::{graph, replay};
use proptest::prelude::*;

fn myrinet() -> Params {
    Params::preset("myrinet").unwrap()
}

fn predict(t: &Trace, p: &Params) -> Prediction {
    let g = graph::build(t, "random").expect("random traces are valid");
    replay::replay(t, &g, p, "random", &|_| {}).expect("random traces do not deadlock")
}

fn with_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .unwrap()
        .install(f)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn parallel_equals_sequential(seed: u64) {
        let t = common::random_trace(seed, 12, 120);
        let p = myrinet();
        let one = with_threads(1, || predict(&t, &p));
        let four = with_threads(4, || predict(&t, &p));
        prop_assert_eq!(one, four);
    }

    #[test]
    fn parallel_equals_sequential_with_measured_collectives(seed: u64) {
        let t = common::random_trace(seed, 12, 120);
        let p = myrinet();
        let coll = loggps_predict::collectives::traced::Choice::measured();
        let run = || {
            let g = graph::build(&t, "random").unwrap();
            replay::replay_with(&t, &g, &Model::LogGps(p), &coll, "random", &|_| {}).unwrap()
        };
        prop_assert_eq!(with_threads(1, run), with_threads(4, run));
    }

    #[test]
    fn parallel_equals_sequential_under_loggp(seed: u64) {
        let t = common::random_trace(seed, 12, 120);
        let m = Model::LogGp(LogGp { L: 1160.0, o: 6550.0, g: 9000.0, G: 15.48, gamma: 0.0 });
        let coll = loggps_predict::collectives::traced::Choice::tuned();
        let run = || {
            let g = graph::build(&t, "random").unwrap();
            replay::replay_with(&t, &g, &m, &coll, "random", &|_| {}).unwrap()
        };
        let one = with_threads(1, run);
        prop_assert_eq!(&one, &with_threads(4, run));
        for r in one.ranks {
            let sum = r.computation_ns + r.communication_ns + r.sender_sync_ns + r.receiver_sync_ns;
            prop_assert!((sum - r.end_ns).abs() <= 1e-9 * r.end_ns.max(1.0), "rank {}: {} != {}", r.rank, sum, r.end_ns);
            prop_assert!(r.sender_sync_ns == 0.0 && r.receiver_sync_ns >= 0.0 && r.communication_ns >= 0.0);
        }
    }

    #[test]
    fn raising_s_never_slows(seed: u64, s1 in 0u64..80_000, extra in 0u64..80_000) {
        let t = common::random_trace(seed, 6, 60);
        let low = predict(&t, &Params { S: s1, ..myrinet() });
        let high = predict(&t, &Params { S: s1 + extra, ..myrinet() });
        prop_assert!(high.predicted_ns <= low.predicted_ns * (1.0 + 1e-12), "S {} → {}: {} > {}", s1, s1 + extra, high.predicted_ns, low.predicted_ns);
    }

    #[test]
    fn text_binary_round_trip(seed: u64, finalize: bool) {
        let mut t = common::random_trace(seed, 6, 60);
        t.meta.params = Some(Params { Gl: -0.1 + seed as f64 * 1e-9, ..myrinet() });
        t.complete = finalize;
        let mut bin = Vec::new();
        binary::write(&t, &mut bin, finalize).unwrap();
        let from_bin = trace::parse("t.bin", &bin).unwrap();
        prop_assert_eq!(&from_bin, &t);
        let mut txt = Vec::new();
        text::write(&from_bin, &mut txt).unwrap();
        let mut from_txt = trace::parse("t.txt", &txt).unwrap();
        from_txt.complete = finalize; // the text encoding has no index: completeness is the binary's
        prop_assert_eq!(&from_txt, &t);
    }

    /// Messages that move only inside calls: the replay is still the same on any number of
    /// threads, its parts still add up, and it is never faster than the paper's model (every
    /// receive's `tr` only moves later, and every cost grows with `tr`).
    #[test]
    fn progress_at_calls_is_deterministic_and_never_faster(seed: u64) {
        let t = common::random_trace(seed, 8, 80);
        let calls = Params { progress_at_calls: true, ..myrinet() };
        let one = with_threads(1, || predict(&t, &calls));
        prop_assert_eq!(&one, &with_threads(4, || predict(&t, &calls)));
        let paper = predict(&t, &myrinet());
        prop_assert!(one.predicted_ns >= paper.predicted_ns, "{} < {}", one.predicted_ns, paper.predicted_ns);
        for r in one.ranks {
            let sum = r.computation_ns + r.communication_ns + r.sender_sync_ns + r.receiver_sync_ns;
            prop_assert!((sum - r.end_ns).abs() <= 1e-9 * r.end_ns.max(1.0), "rank {}: {} != {}", r.rank, sum, r.end_ns);
            prop_assert!(r.sender_sync_ns >= 0.0 && r.receiver_sync_ns >= 0.0 && r.communication_ns >= 0.0);
        }
    }

    #[test]
    fn parts_add_up_to_end(seed: u64) {
        let t = common::random_trace(seed, 8, 80);
        for r in predict(&t, &myrinet()).ranks {
            let sum = r.computation_ns + r.communication_ns + r.sender_sync_ns + r.receiver_sync_ns;
            prop_assert!((sum - r.end_ns).abs() <= 1e-9 * r.end_ns.max(1.0), "rank {}: {} != {}", r.rank, sum, r.end_ns);
            prop_assert!(r.sender_sync_ns >= 0.0 && r.receiver_sync_ns >= 0.0 && r.communication_ns >= 0.0);
        }
    }
}
