//! Messages matched across the processes of a split replay (`graph::split::match_messages`),
//! its processes as threads ([`Threads`]), each holding its own ranks' events alone: for
//! K = 1…4, every event's link (messages and collectives, `graph::split::match_collectives`),
//! every Sendrecv's receive link and every instance is the one the whole trace's graph has,
//! every process warns of what matched nothing and of unfinished collectives as the whole graph
//! does, and a collective called unlike is the same error on every process; every synthetic
//! pattern, the fixtures, a recorded trace, unfinished traces and random traces.

mod common;

use loggps_predict::graph::{self, HbGraph, split};
use loggps_predict::replay::split::{Exchange, Threads, owned};
use loggps_predict::trace::{self, Trace};
use proptest::prelude::*;

/// The warnings of messages that matched nothing and of unfinished collectives.
fn unmatched(w: &[String]) -> Vec<&String> {
    let kinds = ["with no matching", "unfinished collective"];
    w.iter()
        .filter(|w| kinds.iter().any(|k| w.contains(k)))
        .collect()
}

/// Each of `k` thread-processes' own ranks of `whole` and its graph (or error).
fn split_graphs(whole: &Trace, k: usize) -> Vec<(Trace, Result<HbGraph, String>)> {
    let p = whole.nranks();
    std::thread::scope(|s| {
        let handles: Vec<_> = Threads::group(k)
            .into_iter()
            .map(|ex| {
                s.spawn(move || {
                    let mut part = whole.clone();
                    part.keep(owned(ex.process(), k, p));
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(2);
                    let gp = pool.build().unwrap().install(|| {
                        let global = whole.events.offsets();
                        let mut g = split::match_messages(&part, "t", &ex, global)?;
                        split::match_collectives(&part, "t", &ex, &mut g)?;
                        Ok(g)
                    });
                    (
                        part,
                        gp.map_err(|e: loggps_predict::error::Error| e.to_string()),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn same_links(what: &str, whole: &Trace) {
    let g = graph::build(whole, "t");
    let p = whole.nranks();
    for k in 1..=4 {
        for (me, (part, gp)) in split_graphs(whole, k).iter().enumerate() {
            let what = format!("{what}, process {me} of {k}");
            let (g, gp) = match (&g, gp) {
                (Ok(g), Ok(gp)) => (g, gp),
                (Err(a), Err(b)) => {
                    assert_eq!(&a.to_string(), b, "{what}");
                    continue;
                }
                (a, b) => panic!("{what}: {a:?} against {b:?}"),
            };
            assert_eq!(gp.instances, g.instances, "{what}");
            assert_eq!(gp.implicit, g.implicit, "{what}");
            for r in owned(me, k, p) {
                let ev = whole.rank(r);
                assert_eq!(part.rank(r).len(), ev.len(), "{what}");
                for i in 0..ev.len() {
                    let at = format!("{what}: rank {r} event {i} {:?}", ev.routine(i));
                    assert_eq!(gp.link_plain(r, i), g.link_plain(r, i), "{at}");
                    assert_eq!(gp.link2(r, i), g.link2(r, i), "{at}'s receive half");
                }
            }
            assert_eq!(
                unmatched(&gp.warnings),
                unmatched(&g.warnings),
                "{what}: what matched nothing"
            );
        }
    }
}

#[test]
fn every_synthetic_pattern() {
    for (pattern, bytes) in common::small_patterns() {
        let t = trace::parse("synth", &bytes).unwrap();
        same_links(&format!("{pattern:?}"), &t);
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
    assert!(!unmatched(&g.warnings).is_empty(), "{:?}", g.warnings);
    same_links("unfinished", &t);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_traces(seed: u64) {
        same_links(&format!("seed {seed}"), &common::random_trace(seed, 12, 120));
    }
}

#[test]
fn collectives_unfinished_or_called_unlike() {
    // Rank 2 leaves the second Allreduce and the Bcast on communicator 1 uncalled: unfinished,
    // and not uniform.
    let (_dir, path) = common::text_trace(
        "unfinished",
        "loggps-trace 1\nranks 4\ncomm 1 members 1,2\n\
         0 MPI_Init 0 10\n0 MPI_Allreduce 20 30 bytes=8\n0 MPI_Allreduce 40 50 bytes=8\n\
         1 MPI_Init 0 10\n1 MPI_Allreduce 20 30 bytes=8\n1 MPI_Allreduce 40 50 bytes=8\n1 MPI_Bcast 60 70 bytes=8 root=0 comm=1\n\
         2 MPI_Init 0 10\n2 MPI_Allreduce 20 30 bytes=8\n\
         3 MPI_Init 0 10\n3 MPI_Allreduce 20 30 bytes=8\n3 MPI_Allreduce 40 50 bytes=8\n",
    );
    let t = trace::load(std::path::Path::new(&path), &mut |_| {}).unwrap();
    // Complete, an error; unfinished (its end cut), a warning.
    let e = graph::build(&t, "t").unwrap_err().to_string();
    assert!(e.contains("never called by rank(s): 2"), "{e}");
    same_links("collectives never called", &t);
    let cut = std::path::Path::new(&path).with_extension("bin");
    trace::binary::write(&t, std::fs::File::create(&cut).unwrap(), false).unwrap();
    let t = trace::load(&cut, &mut |_| {}).unwrap();
    let g = graph::build(&t, "t").unwrap();
    assert_eq!(unmatched(&g.warnings).len(), 1, "{:?}", g.warnings);
    same_links("unfinished collectives", &t);
    // Every rank calls alike but rank 3 names another root: uniform, and an error.
    let mut text = String::from("loggps-trace 1\nranks 4\n");
    for r in 0..4 {
        let root = if r == 3 { 1 } else { 0 };
        text += &format!(
            "{r} MPI_Init 0 10\n{r} MPI_Bcast 20 30 bytes=8 root=0\n{r} MPI_Bcast 40 50 bytes=8 root={root}\n{r} MPI_Finalize 60 70\n"
        );
    }
    let (_dir, path) = common::text_trace("unlike", &text);
    let t = trace::load(std::path::Path::new(&path), &mut |_| {}).unwrap();
    let e = graph::build(&t, "t").unwrap_err().to_string();
    assert!(e.contains("collective #1 on communicator 0"), "{e}");
    same_links("a root unlike", &t);
}
