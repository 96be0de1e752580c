//! `convert`: a trace in the other encoding.

mod common;

use common::{fixture, run};

#[test]
fn convert_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.bin");
    std::fs::write(&out, "keep").unwrap();
    let r = run(&[
        "convert",
        fixture("all-routines.txt").to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");
}
