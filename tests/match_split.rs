//! Messages matched across the processes of a split replay (`graph::split::match_messages`),
//! its processes as threads ([`Threads`]), each holding its own ranks' events alone: for
//! K = 1…4, every point-to-point event's link and every Sendrecv's receive link is the one the
//! whole trace's graph has, and every process warns of what matched nothing as the whole graph
//! does; every synthetic pattern, the fixtures, a recorded trace, an unfinished trace and random
//! traces.

mod common;

use loggps_predict::graph::{self, split::match_messages};
use loggps_predict::replay::split::{Exchange, Threads, owned};
use loggps_predict::synth::{Pattern, Spec};
use loggps_predict::trace::{self, Trace};
use proptest::prelude::*;

/// The warning of messages that matched nothing, where there is one.
fn unmatched(w: &[String]) -> Option<&String> {
    w.iter().find(|w| w.contains("with no matching"))
}

fn same_links(what: &str, whole: &Trace) {
    let g = graph::build(whole, "t").unwrap();
    let p = whole.nranks();
    for k in 1..=4 {
        let parts: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = Threads::group(k)
                .into_iter()
                .map(|ex| {
                    s.spawn(move || {
                        let mut part = whole.clone();
                        part.keep(owned(ex.process(), k, p));
                        let pool = rayon::ThreadPoolBuilder::new().num_threads(2);
                        let gp = pool.build().unwrap().install(|| {
                            match_messages(&part, "t", &ex, whole.events.offsets()).unwrap()
                        });
                        (part, gp)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (me, (part, gp)) in parts.iter().enumerate() {
            let what = format!("{what}, process {me} of {k}");
            for r in owned(me, k, p) {
                let ev = whole.rank(r);
                assert_eq!(part.rank(r).len(), ev.len(), "{what}");
                for i in (0..ev.len()).filter(|&i| !ev.routine(i).is_collective()) {
                    let at = format!("{what}: rank {r} event {i} {:?}", ev.routine(i));
                    assert_eq!(gp.link_plain(r, i), g.link_plain(r, i), "{at}");
                    assert_eq!(gp.link2(r, i), g.link2(r, i), "{at}'s receive half");
                }
            }
            assert_eq!(
                unmatched(&gp.warnings),
                unmatched(&g.warnings),
                "{what}: messages that matched nothing"
            );
        }
    }
}

#[test]
fn every_synthetic_pattern() {
    for &pattern in <Pattern as clap::ValueEnum>::value_variants() {
        let spec = Spec {
            pattern,
            ranks: 11,
            iterations: 3,
            bytes: 100,
            compute_ns: 10,
        };
        let mut buf = Vec::new();
        loggps_predict::synth::write(&spec, &mut buf, &|_| {}).unwrap();
        same_links(
            &format!("{pattern:?}"),
            &trace::parse("synth", &buf).unwrap(),
        );
    }
}

#[test]
fn the_fixtures_and_a_recorded_trace() {
    for f in ["all-routines.txt", "sites.txt"] {
        let t = trace::load(&common::fixture(f), &mut |_| {}).unwrap();
        same_links(f, &t);
    }
    let recorded = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces/gauss-n1024-p4-s4096-original-r1.bin");
    same_links("gauss p4", &trace::load(&recorded, &mut |_| {}).unwrap());
}

#[test]
fn an_unfinished_trace_warns_alike() {
    // Ranks 0 and 1 each send a message the other never receives, and rank 2 waits for one
    // never sent.
    let (_dir, path) = common::text_trace(
        "unfinished",
        "loggps-trace 1\nranks 3\n\
         0 MPI_Init 0 10\n0 MPI_Send 20 30 bytes=8 peer=2 tag=1\n0 MPI_Send 40 50 bytes=8 peer=1 tag=5\n\
         1 MPI_Init 0 10\n1 MPI_Send 20 30 bytes=8 peer=0 tag=7\n\
         2 MPI_Init 0 10\n2 MPI_Recv 20 90 bytes=8 peer=0 tag=1\n2 MPI_Recv 100 190 bytes=8 peer=1 tag=3\n",
    );
    let t = trace::load(std::path::Path::new(&path), &mut |_| {}).unwrap();
    let g = graph::build(&t, "t").unwrap();
    assert!(unmatched(&g.warnings).is_some(), "{:?}", g.warnings);
    same_links("unfinished", &t);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_traces(seed: u64) {
        same_links(&format!("seed {seed}"), &common::random_trace(seed, 12, 120));
    }
}
