//! `synth`: synthetic traces of a communication pattern.

mod common;

use common::run;
use std::path::Path;

/// `synth` refuses what it cannot write before it writes anything: ranks outside 1..=2^20, and
/// more than 10^12 events (a linear all-to-all on 2^20 ranks: 3p(p − 1) + 2p events, by hand).
#[test]
fn synth_refuses_sizes_out_of_range_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.bin");
    let f = f.to_str().unwrap();
    let p: u64 = 1 << 20;
    let events = 3 * p * (p - 1) + 2 * p;
    for (ranks, pattern, why) in [
        (
            "0",
            "ring",
            "--ranks must be from 1 to 2^20 (1048576), found 0".to_string(),
        ),
        (
            "1048577",
            "ring",
            "--ranks must be from 1 to 2^20 (1048576), found 1048577".into(),
        ),
        (
            "1048576",
            "alltoall",
            format!("that is {events} events; at most 10^12"),
        ),
    ] {
        let out = run(&["synth", "--pattern", pattern, "--ranks", ranks, "-o", f]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{ranks}: {err}");
        assert_eq!(err.trim(), format!("error: {why}"));
        assert!(!Path::new(f).exists(), "{ranks}: a file was written");
    }
}
