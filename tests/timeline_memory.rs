//! `--timeline` is written as the replay goes: on the 262,144-rank dissemination (14.7 M
//! events) a timeline far larger than the bound costs the replay's peak no more than the
//! bound. Each peak is its own process's (wait4), whatever other tests run beside.

mod common;

use common::{bin, synthesized};
use std::process::Stdio;

/// Runs the predictor with `args` to its end and returns its peak resident memory, bytes.
#[allow(clippy::zombie_processes)] // waited for by wait4, which gives its own peak
fn peak(args: &[&str]) -> u64 {
    let child = bin()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: wait4 on our own child, with pointers to locals; the Child is not waited again.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let pid = libc::wait4(child.id() as i32, &mut status, 0, &mut usage);
        assert_eq!(pid, child.id() as i32);
        usage
    };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{args:?}"
    );
    usage.ru_maxrss as u64 * 1024
}

#[test]
fn a_timeline_of_a_262144_rank_trace_is_written_with_bounded_memory() {
    const BOUND: u64 = 16 << 20;
    let dir = tempfile::tempdir().unwrap();
    let f = synthesized(
        dir.path(),
        &["--pattern", "dissemination", "--ranks", "262144"],
    );
    let tl = dir.path().join("t.json");
    let without = peak(&[&f, "--platform", "myrinet"]);
    let with = peak(&[
        &f,
        "--platform",
        "myrinet",
        "--timeline",
        tl.to_str().unwrap(),
        "--ranks",
        "0-2047",
    ]);
    let written = std::fs::metadata(&tl).unwrap().len();
    eprintln!("peak {without} B without the timeline, {with} B with it ({written} B written)");
    assert!(written > 2 * BOUND, "{written} bytes written");
    assert!(
        with <= without + BOUND,
        "peak {with} B with the timeline, {without} B without"
    );
}
