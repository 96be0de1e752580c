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
