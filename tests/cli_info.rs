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

/// The sends flagged `clean` and the receives flagged `bounced` (the model's §13), counted by
/// hand: rank 0's 5,000 B Send and its Sendrecv's 3,000 B send half clean (8,000 bytes), rank 1's
/// Recv and rank 0's Sendrecv's receive bounced; of the collectives, rank 0's Bcast `clean`,
/// rank 1's `bounced` and `reduced`, both Allreduces `reduced`; none of them: no line.
#[test]
fn info_counts_clean_sends_and_bounced_receives() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("b.txt");
    std::fs::write(
        &f,
        "loggps-trace 1\nranks 2\n\
         0 MPI_Send 0 1 bytes=5000 peer=1 tag=0 flags=clean\n\
         1 MPI_Recv 0 2 bytes=5000 peer=0 tag=0 flags=bounced\n\
         0 MPI_Send 3 4 bytes=2000 peer=1 tag=0\n1 MPI_Recv 3 5 bytes=2000 peer=0 tag=0\n\
         0 MPI_Sendrecv 9 10 bytes=3000 peer=1 tag=1 recv_bytes=3000 source=1 recv_tag=2 \
         flags=bounced|clean\n\
         1 MPI_Sendrecv 9 10 bytes=3000 peer=0 tag=2 recv_bytes=3000 source=0 recv_tag=1\n\
         0 MPI_Bcast 11 12 root=0 bytes=8 recv_bytes=0 flags=clean\n\
         1 MPI_Bcast 11 12 root=0 bytes=0 recv_bytes=8 flags=bounced|reduced\n\
         0 MPI_Allreduce 13 14 bytes=8 recv_bytes=8 flags=reduced\n\
         1 MPI_Allreduce 13 14 bytes=8 recv_bytes=8 flags=reduced\n",
    )
    .unwrap();
    let v = json(&["info", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(
        (&v["clean_sends"], &v["clean_bytes"], &v["bounced_receives"]),
        (&2.into(), &8000.into(), &2.into())
    );
    let colls = [
        "clean_collectives",
        "bounced_collectives",
        "reduced_collectives",
    ];
    assert_eq!(colls.map(|k| v[k].as_u64()), [Some(1), Some(1), Some(3)]);
    let out = common::run(&["info", f.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("buffers        2 send(s) from a buffer unchanged since its last send (`clean`, 8000 bytes), 2 receive(s)")
            && text.contains("collective calls: 1 from an unchanged send buffer (`clean`), 1 into a buffer the rank sent from (`bounced`), 3 into a reduction's result (`reduced`)"),
        "{text}"
    );
    let plain = fixture("all-routines.txt");
    let out = common::run(&["info", plain.to_str().unwrap()]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("buffers "));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("pages "));
    // The records that say where their buffers lie: a send's, a receive's, a Sendrecv's (one
    // record for both halves).
    let placed = std::fs::read_to_string(&f)
        .unwrap()
        .replace("tag=0 flags=clean", "tag=0 flags=clean send_page=0")
        .replace("tag=0 flags=bounced", "tag=0 flags=bounced recv_page=16")
        .replace(
            "recv_tag=2 flags",
            "recv_tag=2 recv_page=8 send_page=4000 flags",
        );
    std::fs::write(&f, placed).unwrap();
    let v = json(&["info", f.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v["placed_records"], 3);
    let out = common::run(&["info", f.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("pages          3 point-to-point record(s)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
