//! Mutation test: 100 000+ random flips, truncations and splices of valid traces of both
//! encodings. Each must give an error or a valid trace (then matched and replayed), never a
//! panic or a hang.

mod common;

use loggps_predict::model::Params;
use loggps_predict::trace::{self, binary, text};
use loggps_predict::{graph, replay};
use std::panic;

fn corpus() -> Vec<Vec<u8>> {
    let mut traces = Vec::new();
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures");
    let mut files = vec![
        format!("{dir}/all-routines.txt"),
        format!("{dir}/sites.txt"),
        format!("{dir}/links.txt"),
        format!("{dir}/named-sites.txt"),
    ];
    for e in std::fs::read_dir(format!("{dir}/rtt")).unwrap() {
        files.push(e.unwrap().path().display().to_string());
    }
    for f in files {
        let t = trace::parse(&f, &std::fs::read(&f).unwrap()).unwrap();
        traces.push(t);
    }
    traces.extend((0..6).map(|s| common::random_trace(s, 5, 30)));
    let mut out = Vec::new();
    for t in &traces {
        let mut b = Vec::new();
        binary::write(t, &mut b, true).unwrap();
        out.push(b);
        let mut b = Vec::new();
        binary::write(t, &mut b, false).unwrap();
        out.push(b);
        let mut x = Vec::new();
        text::write(t, &mut x).unwrap();
        out.push(x);
    }
    out
}

fn mutate(rng: &mut common::Rng, base: &[u8], other: &[u8]) -> Vec<u8> {
    let mut d = base.to_vec();
    let pos = |rng: &mut common::Rng, len: usize| rng.below(len as u64 + 1) as usize;
    match rng.below(6) {
        0 => {
            for _ in 0..1 + rng.below(4) {
                if !d.is_empty() {
                    let i = pos(rng, d.len() - 1);
                    d[i] ^= 1 << rng.below(8);
                }
            }
        }
        1 => d.truncate(pos(rng, d.len())),
        2 => {
            // splice a slice of another trace in
            let (a, b) = (pos(rng, other.len()), pos(rng, other.len()));
            let at = pos(rng, d.len());
            d.splice(at..at, other[a.min(b)..a.max(b)].iter().copied());
        }
        3 => {
            // cut a region out
            let (a, b) = (pos(rng, d.len()), pos(rng, d.len()));
            d.drain(a.min(b)..a.max(b));
        }
        4 => {
            // overwrite with random bytes, often ones that look like big LEB128 values
            let at = pos(rng, d.len());
            for k in 0..1 + rng.below(8) as usize {
                if at + k < d.len() {
                    d[at + k] = if rng.below(2) == 0 {
                        0xff
                    } else {
                        rng.below(256) as u8
                    };
                }
            }
        }
        _ => {
            // a random digit changed in a text trace, or a byte set in a binary one
            let at = pos(rng, d.len());
            if at < d.len() {
                d[at] = b"0123456789-,=|"[rng.below(14) as usize];
            }
        }
    }
    d
}

#[test]
fn mutated_traces_never_panic() {
    let corpus = corpus();
    let params = Params::preset("myrinet").unwrap();
    let mut rng = common::Rng::new(0x5eed);
    let iterations = 120_000;
    let (mut valid, mut replayed) = (0, 0);
    panic::set_hook(Box::new(|_| {}));
    for n in 0..iterations {
        let base = &corpus[rng.below(corpus.len() as u64) as usize];
        let other = &corpus[rng.below(corpus.len() as u64) as usize];
        let data = mutate(&mut rng, base, other);
        let outcome = panic::catch_unwind(|| {
            let Ok(t) = trace::parse("mutant", &data) else {
                return (false, false);
            };
            let Ok(g) = graph::build(&t, "mutant") else {
                return (true, false);
            };
            let p = Params {
                S: if n % 2 == 0 { params.S } else { 1 << 20 },
                ..params
            };
            (true, replay::replay(&t, &g, &p, "mutant", &|_| {}).is_ok())
        });
        match outcome {
            Ok((v, r)) => {
                valid += v as u32;
                replayed += r as u32;
            }
            Err(_) => {
                let _ = panic::take_hook();
                let path = std::env::temp_dir().join("loggps-mutant-panic");
                std::fs::write(&path, &data).unwrap();
                panic!("iteration {n} panicked; input saved to {}", path.display());
            }
        }
    }
    let _ = panic::take_hook();
    println!(
        "{iterations} mutants: {valid} parsed as valid traces, {replayed} replayed, the rest rejected with an error"
    );
    assert!(
        valid > 0 && valid < iterations,
        "the mutations should produce both valid and invalid traces"
    );
}
