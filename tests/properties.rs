//! Invariants of the pipeline on random valid traces: parallel replay equals sequential bit for
//! bit (LogGPS and LogGP), raising S never makes a prediction slower, text ↔ binary round trips
//! exactly, and the four parts of every event and every rank add up to its time. The model
//! clamps a wait at 0 where the partner was early; that clamp is in the synchronization parts,
//! so they are not asserted ≥ 0 here (they cannot be otherwise): the communication, what is left
//! of a call once they are taken out, is, and both sides of the clamp are met.

mod common;

use loggps_predict::model::{BySize, LogGp, Model, Params, SizeParam};
use loggps_predict::replay::{Prediction, Step};
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

/// The replay's steps (each event's call, return and parts), in rank and event order.
fn steps(t: &Trace, p: &Params) -> Vec<Step> {
    let g = graph::build(t, "random").expect("random traces are valid");
    let all = std::sync::Mutex::new(Vec::new());
    let observe = |s: &[Step]| all.lock().unwrap().extend_from_slice(s);
    let coll = loggps_predict::collectives::traced::Choice::tuned();
    let model = Model::LogGps(*p);
    replay::replay_observed(t, &g, &model, &coll, "random", &|_| {}, Some(&observe))
        .expect("random traces do not deadlock");
    let mut all = all.into_inner().unwrap();
    all.sort_by_key(|s| (s.rank, s.event));
    all
}

/// Why step `s`'s parts do not add up to its call's duration, or its communication is
/// negative, if they do not or it is.
fn broken(s: &Step) -> Option<String> {
    let eps = 1e-9 * s.return_ns.abs().max(1.0);
    let sum = s.call_ns + s.communication_ns + s.sender_sync_ns + s.receiver_sync_ns;
    ((sum - s.return_ns).abs() > eps || s.communication_ns < -eps).then(|| format!("{s:?}"))
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
            // LogGP has no sender synchronization.
            prop_assert!(r.sender_sync_ns == 0.0 && r.communication_ns >= 0.0);
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
        let drained = BySize::new(SizeParam::Drained, &[(8, 40.0 + (seed % 7) as f64), (4096, 70.5)]).ok();
        t.meta.params = Some(Params { Gl: -0.1 + seed as f64 * 1e-9, alias: Some(0.25), drained, wait: Some(12.5), ..myrinet() });
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

    /// A rendezvous payload on its sender's CPU too (the model's §14), with `Od` so that a send's
    /// payload and its rank's receives overlap: the replay is the same on any number of
    /// threads, its parts add up, and it is never faster than with the receiver's CPU alone
    /// (a queue only delays a completion, and every cost grows with its inputs).
    #[test]
    fn a_rendezvous_payload_on_both_cpus_is_deterministic_and_never_faster(seed: u64) {
        let t = common::random_trace(seed, 8, 80);
        let receiver = Params { S: 1024, ..myrinet() }
            .in_bands()
            .with_bands(|b| b.set("Od", 4000.0))
            .unwrap();
        let share = BySize::one(SizeParam::RendezvousSender, 1.0).ok();
        let both = Params { rendezvous_sender: share, ..receiver };
        let one = with_threads(1, || predict(&t, &both));
        prop_assert_eq!(&one, &with_threads(4, || predict(&t, &both)));
        let alone = predict(&t, &receiver);
        prop_assert!(one.predicted_ns >= alone.predicted_ns, "{} < {}", one.predicted_ns, alone.predicted_ns);
        let broken: Vec<_> = steps(&t, &both).iter().filter_map(broken).collect();
        prop_assert!(broken.is_empty(), "{:?}", broken);
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
        }
        let broken: Vec<_> = steps(&t, &calls).iter().filter_map(broken).collect();
        prop_assert!(broken.is_empty(), "{:?}", broken);
    }

    #[test]
    fn parts_add_up_to_end(seed: u64) {
        let t = common::random_trace(seed, 8, 80);
        for r in predict(&t, &myrinet()).ranks {
            let sum = r.computation_ns + r.communication_ns + r.sender_sync_ns + r.receiver_sync_ns;
            prop_assert!((sum - r.end_ns).abs() <= 1e-9 * r.end_ns.max(1.0), "rank {}: {} != {}", r.rank, sum, r.end_ns);
        }
        // Each event's too, and what is left as communication is never negative.
        let broken: Vec<_> = steps(&t, &myrinet()).iter().filter_map(broken).collect();
        prop_assert!(broken.is_empty(), "{:?}", broken);
    }
}

/// Both sides of the clamp are met on the random traces: calls that waited (a synchronization
/// part above 0) and calls whose partner was early (clamped to 0): rendezvous `MPI_Send`s on
/// the sender's side, `MPI_Recv`s on the receiver's; counted over 50 traces.
#[test]
fn the_random_traces_meet_both_sides_of_the_wait_clamp() {
    use loggps_predict::trace::Routine;
    let (mut waited, mut early) = ([0u32; 2], [0u32; 2]);
    for seed in 0..50 {
        let t = common::random_trace(seed, 8, 80);
        let p = Params {
            S: 1024,
            ..myrinet()
        };
        for s in steps(&t, &p) {
            assert_eq!(broken(&s), None);
            let ev = t.rank(s.rank as usize);
            let i = s.event as usize;
            let (k, sync) = match ev.routine(i) {
                Routine::Send if ev.bytes(i) > p.S => (0, s.sender_sync_ns),
                Routine::Recv => (1, s.receiver_sync_ns),
                _ => continue,
            };
            match sync > 0.0 {
                true => waited[k] += 1,
                false => early[k] += 1,
            }
        }
    }
    assert!(
        waited.iter().chain(&early).all(|&n| n > 0),
        "waited {waited:?}, early {early:?}"
    );
}
