//! A trace loaded for some of its ranks (`trace::load_ranks`, what a process of a split replay
//! holds): for K = 1…4 and each process's block of ranks, its ranks' events (every field, the
//! completions and the call sites) are those of the whole trace, every other rank has none,
//! and the events held are its ranks' alone; binary traces, their text twins, every synthetic
//! pattern, the fixtures and a recorded trace.

mod common;

use loggps_predict::graph;
use loggps_predict::replay::split::{Exchange, Threads, owned};
use loggps_predict::synth::{Pattern, Spec};
use loggps_predict::trace::{self, Routine, Then, Trace, binary, text};
use std::ops::Range;
use std::path::Path;

fn load(path: &Path) -> Trace {
    trace::load(path, &mut |_| {}).unwrap()
}

/// Rank `r`'s events as text lines (every field and completion of each).
fn lines(t: &Trace, r: usize) -> Vec<String> {
    let ev = t.rank(r);
    (0..ev.len())
        .map(|i| {
            let mut s = String::new();
            text::event_line(&mut s, r, ev, i);
            s
        })
        .collect()
}

/// Rank `r`'s call site of each event, and its tables.
fn sites(t: &Trace, r: usize) -> Option<(Vec<u32>, Vec<u64>, usize)> {
    let s = t.sites.as_ref()?;
    let ev = t.rank(r);
    let of: Vec<u32> = (0..ev.len()).map(|i| s.of_event[ev.global(i)]).collect();
    Some((of, s.addresses[r].clone(), s.objects[r].len()))
}

fn same_ranks(what: &str, whole: &Trace, part: &Trace, own: &Range<usize>) {
    assert_eq!(part.nranks(), whole.nranks(), "{what}");
    assert_eq!(part.comms, whole.comms, "{what}");
    assert_eq!(part.complete, whole.complete, "{what}");
    for r in 0..whole.nranks() {
        if own.contains(&r) {
            assert_eq!(lines(part, r), lines(whole, r), "{what}: rank {r}");
            assert_eq!(sites(part, r), sites(whole, r), "{what}: rank {r}'s sites");
        } else {
            assert_eq!(part.rank(r).len(), 0, "{what}: rank {r} is not held");
        }
    }
    let held: usize = own.clone().map(|r| whole.rank(r).len()).sum();
    assert_eq!(part.events.len(), held, "{what}: events held");
    let pending: Vec<(u32, u32)> = (whole.pending.iter())
        .filter(|(r, _)| own.contains(&(*r as usize)))
        .copied()
        .collect();
    assert_eq!(part.pending, pending, "{what}: pending requests");
}

/// `path` loaded for each process's ranks at K = 1…4 against the whole load.
fn every_split(what: &str, path: &Path) {
    let whole = load(path);
    let p = whole.nranks();
    for k in 1..=4 {
        for me in 0..k {
            let own = owned(me, k, p);
            let part = trace::load_ranks(path, own.clone(), &mut |_| {}, Then::LOAD).unwrap();
            same_ranks(&format!("{what}, process {me} of {k}"), &whole, &part, &own);
        }
    }
}

/// `t` written as binary and as text in `dir`, each split.
fn both_encodings(what: &str, t: &Trace, dir: &Path) {
    let bin = dir.join("t.bin");
    binary::write(t, std::fs::File::create(&bin).unwrap(), true).unwrap();
    every_split(&format!("{what} (binary)"), &bin);
    let txt = dir.join("t.txt");
    text::write(t, std::fs::File::create(&txt).unwrap()).unwrap();
    every_split(&format!("{what} (text)"), &txt);
}

#[test]
fn every_synthetic_pattern() {
    let dir = tempfile::tempdir().unwrap();
    for (pattern, bytes) in common::small_patterns() {
        let path = dir.path().join("synth.bin");
        std::fs::write(&path, bytes).unwrap();
        both_encodings(&format!("{pattern:?}"), &load(&path), dir.path());
    }
}

#[test]
fn the_fixtures_and_a_recorded_trace() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["all-routines.txt", "sites.txt"] {
        both_encodings(f, &load(&common::fixture(f)), dir.path());
    }
    let recorded =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/gauss-n1024-p4-s4096-original-r1.bin");
    every_split("gauss p4", &recorded);
}

#[test]
fn an_unfinished_trace_warns_of_the_ranks_held() {
    let dir = tempfile::tempdir().unwrap();
    let spec = Spec {
        pattern: Pattern::Ring,
        ranks: 4,
        iterations: 2,
        bytes: 100,
        compute_ns: 10,
    };
    let path = dir.path().join("ring.bin");
    loggps_predict::synth::write(&spec, std::fs::File::create(&path).unwrap(), &|_| {}).unwrap();
    let whole = load(&path);
    let cut = dir.path().join("cut.bin");
    binary::write(&whole, std::fs::File::create(&cut).unwrap(), false).unwrap();
    let mut warned = Vec::new();
    let part = trace::load_ranks(&cut, 2..4, &mut |w| warned.push(w), Then::LOAD).unwrap();
    assert!(!part.complete);
    same_ranks("unfinished", &load(&cut), &part, &(2..4));
    // Which ranks lack MPI_Finalize is the whole trace's, learnt from every process
    // (`graph::split::census`): not warned of by a load of some ranks.
    assert!(warned.is_empty(), "{warned:?}");
    let short = dir.path().join("short.bin");
    let bytes = std::fs::read(&cut).unwrap();
    std::fs::write(&short, &bytes[..bytes.len() * 3 / 5]).unwrap();
    for path in [&cut, &short] {
        let whole = load(path);
        let unfinished: Vec<usize> = (0..whole.nranks())
            .filter(|&r| !whole.rank(r).routines().contains(&Routine::Finalize))
            .collect();
        assert_eq!(
            unfinished.is_empty(),
            path == &cut,
            "{path:?}: {unfinished:?}"
        );
        for k in 1..=3 {
            for c in censuses(path, k) {
                assert_eq!(c.firsts, whole.events.offsets(), "{path:?}, K = {k}");
                assert_eq!(c.t0, whole.measured_t0(), "{path:?}, K = {k}");
                assert_eq!(c.unfinished, unfinished, "{path:?}, K = {k}");
            }
        }
    }
}

/// What each of `k` thread-processes learns of the whole trace at `path`, loading its own ranks.
fn censuses(path: &Path, k: usize) -> Vec<graph::split::Census> {
    std::thread::scope(|s| {
        let handles: Vec<_> = Threads::group(k)
            .into_iter()
            .map(|ex| {
                s.spawn(move || {
                    let part = trace::load_block(path, ex.process(), k, &mut |_| {}, Then::LOAD);
                    graph::split::census(&part.unwrap(), &ex).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}
