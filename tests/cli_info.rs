//! `info`: a trace's summary.

mod common;

use common::{fixture, json};

#[test]
fn info_counts_routines() {
    let f = fixture("all-routines.txt");
    let v = json(&["info", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v["ranks"], 2);
    assert_eq!(v["events"], 92);
    assert_eq!(v["events_by_routine"]["MPI_Send"], 4); // rank 0: 1 + to PROC_NULL; rank 1: 2
    assert_eq!(v["events_by_routine"]["MPI_Barrier"], 4);
    assert_eq!(v["eager_limit"]["bytes"], 4096);
    assert_eq!(v["params"]["S"], 16383);
    let by_routine: u64 = v["events_by_routine"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(by_routine, 92);
}

/// The embedded parameters' optional values are shown with them.
#[test]
fn info_shows_gamma_and_progress() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p.txt");
    let params = "L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383";
    std::fs::write(
        &f,
        format!("loggps-trace 1\nranks 1\nparams {params} gamma=0.5 progress=calls\n0 MPI_Init 0 1\n0 MPI_Finalize 2 3\n"),
    )
    .unwrap();
    let out = common::run(&["info", f.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("S=16383; gamma=0.5000; progress=calls"),
        "{text}"
    );
}
