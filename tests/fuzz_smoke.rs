//! A short fuzz run in every test run: the bodies of the fuzz targets (tests/fuzz/fuzz_targets)
//! on inputs mutated from every fixture in both encodings (bytes flipped, inserted, deleted,
//! repeated, cut, and spliced from another fixture), a few seconds in all. Not coverage-guided:
//! `cargo fuzz` (tests/fuzz/README.md) searches much further; this keeps what it found from
//! coming back. Any input must give an error or a prediction, never a panic; what the binary
//! parser accepts, the text encoding's checks accept too.

mod common;

use loggps_predict::{graph, model::Params, replay, trace};

/// Inputs per target.
const RUNS: usize = 20_000;

/// xorshift64*: the same inputs every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The fixtures, as text and as binary.
fn seeds() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mut texts = Vec::new();
    let mut dirs = vec![common::fixture("")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "txt") {
                texts.push(std::fs::read(&p).unwrap());
            }
        }
    }
    texts.sort();
    let binaries = (texts.iter())
        .filter_map(|t| trace::text::parse("seed", t).ok())
        .map(|t| {
            let mut b = Vec::new();
            trace::binary::write(&t, &mut b, true).unwrap();
            b
        })
        .collect::<Vec<_>>();
    assert!(
        texts.len() >= 5 && binaries.len() >= 5,
        "{} texts",
        texts.len()
    );
    (texts, binaries)
}

/// One mutation of `input` (`other`: another seed to splice from).
fn mutate(rng: &mut Rng, input: &[u8], other: &[u8], text: bool) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(7) {
            0 if at < v.len() => v[at] ^= 1 << rng.below(8),
            1 if at < v.len() => {
                v[at] = match text {
                    true => b"0123456789 -=,:.\nMPI_eabx"[rng.below(25)],
                    false => [0, 1, 0x7f, 0x80, 0xff][rng.below(5)],
                }
            }
            2 => v.insert(at, rng.next() as u8),
            3 if at < v.len() => {
                let n = rng.below(16).min(v.len() - at);
                v.drain(at..at + n);
            }
            4 => v.truncate(at),
            5 if at < v.len() => {
                let n = (1 + rng.below(64)).min(v.len() - at);
                let piece = v[at..at + n].to_vec();
                v.splice(at..at, piece);
            }
            _ => {
                let from = rng.below(other.len());
                let n = rng.below(256).min(other.len() - from);
                v.splice(at..at, other[from..from + n].iter().copied());
            }
        }
    }
    v
}

/// The fuzz targets' body: parse, then match and replay what parses.
fn target(data: &[u8], binary: bool) {
    let parsed = match binary {
        true => trace::binary::parse("fuzz", data).inspect(|t| {
            if let Err(e) = t.validate("fuzz") {
                panic!("parsed, but then found invalid: {e}");
            }
        }),
        false => trace::text::parse("fuzz", data).and_then(|t| t.validate("fuzz").map(|_| t)),
    };
    let Ok(t) = parsed else { return };
    let Ok(g) = graph::build(&t, "fuzz") else {
        return;
    };
    let _ = replay::replay(&t, &g, &Params::preset("myrinet").unwrap(), "fuzz", &|_| {});
}

/// Runs `target` on `RUNS` mutations of `seeds`; a panic names the seed and the input's bytes.
fn run(seeds: &[Vec<u8>], binary: bool, seed: u64) -> usize {
    let mut rng = Rng(seed);
    let mut parsed = 0;
    for n in 0..RUNS {
        let a = &seeds[rng.below(seeds.len())];
        let b = &seeds[rng.below(seeds.len())];
        let input = mutate(&mut rng, a, b, !binary);
        let ok = std::panic::catch_unwind(|| target(&input, binary));
        if ok.is_err() {
            let dir = std::env::temp_dir().join(format!("loggps-fuzz-smoke-{n}"));
            std::fs::write(&dir, &input).unwrap();
            panic!("input {n} panicked; it is in {}", dir.display());
        }
        let accepted = match binary {
            true => trace::binary::parse("fuzz", &input).is_ok(),
            false => trace::text::parse("fuzz", &input).is_ok(),
        };
        parsed += accepted as usize;
    }
    parsed
}

#[test]
fn mutated_binary_traces_give_an_error_or_a_prediction() {
    let (_, binaries) = seeds();
    let parsed = run(&binaries, true, 0x9e37_79b9_7f4a_7c15);
    // Mutations reach past the first checks: some still parse (and replay).
    eprintln!("{parsed} of {RUNS} mutated inputs parsed");
    assert!(parsed > RUNS / 50, "{parsed} of {RUNS} parsed");
}

#[test]
fn mutated_text_traces_give_an_error_or_a_prediction() {
    let (texts, _) = seeds();
    let parsed = run(&texts, false, 0xd1b5_4a32_d192_ed03);
    eprintln!("{parsed} of {RUNS} mutated inputs parsed");
    assert!(parsed > RUNS / 50, "{parsed} of {RUNS} parsed");
}

/// Other tools' samples (fixtures/imported/), each read by its format's reader: one of its files
/// mutated (a text mutation, spliced from another sample), then matched and replayed.
#[test]
fn mutated_imported_traces_give_an_error_or_a_prediction() {
    use trace::import::{Format, Options};
    let dir = common::fixture("imported");
    let read = |p: &str| (p.to_string(), std::fs::read(dir.join(p)).unwrap());
    let ranks = |d: &str, stem: &str, ext: &str| -> Vec<(String, Vec<u8>)> {
        (0..4)
            .map(|r| read(&format!("{d}/{stem}{r}.{ext}")))
            .collect()
    };
    type Sample = (Format, Vec<(String, Vec<u8>)>);
    let mut samples: Vec<Sample> = vec![
        (
            Format::Allprof,
            ranks("allprof/vladimir", "pmpi-trace-rank-", "txt"),
        ),
        (
            Format::Allprof,
            ranks("allprof/sphot", "htor-coll-rank-", "dat"),
        ),
        (
            Format::Allprof,
            ranks("allprof/simple", "trace_bcast-", "dat"),
        ),
        (Format::Goal, vec![read("goal/binomialtreereduce-8.goal")]),
        (
            Format::Dumpi,
            (0..4)
                .map(|r| read(&format!("dumpi/testtrace/testtrace-000{r}.bin")))
                .collect(),
        ),
        (
            Format::Dumpi,
            (0..7)
                .map(|r| read(&format!("dumpi/testbgp/testbgp-000{r}.bin")))
                .collect(),
        ),
        (Format::Goal, vec![read("goal/schedule.goal")]),
        (
            Format::Paraver,
            vec![
                read("paraver/qsort_beo3.prv"),
                read("paraver/qsort_beo3.pcf"),
            ],
        ),
    ];
    // Extrae's caller events (fixtures/extrae/, written here in its format).
    let extrae = |f: &str| {
        let path = common::fixture(&format!("extrae/{f}"));
        (f.to_string(), std::fs::read(path).unwrap())
    };
    samples.push((
        Format::Paraver,
        vec![extrae("callers.prv"), extrae("callers.pcf")],
    ));
    // An OTF2 archive: its anchor first, then its definitions and each location's files.
    let archive = ["traces.otf2", "traces.def"].map(String::from).into_iter();
    let locations = (0..10).flat_map(|r| ["def", "evt"].map(|e| format!("traces/{r}.{e}")));
    samples.push((
        Format::Otf2,
        (archive.chain(locations))
            .map(|f| read(&format!("otf2/scorep-10/{f}")))
            .collect(),
    ));
    for e in std::fs::read_dir(dir.join("tit")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.starts_with("actions_") {
            samples.push((Format::Tit, vec![read(&format!("tit/{name}"))]));
        }
    }
    samples.sort_by(|a, b| a.1[0].0.cmp(&b.1[0].0));
    // FUZZ_SMOKE_IMPORT_ONLY=FORMAT (by hand): one format's samples alone.
    let only = std::env::var("FUZZ_SMOKE_IMPORT_ONLY").ok();
    if let Some(only) = &only {
        samples.retain(|(f, _)| f.name() == only);
    }
    let options = Options::default();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut parsed = 0;
    // FUZZ_SMOKE_IMPORT_LOG=1 (by hand) names each input before it is read: the last named
    // is the one that hangs or is killed.
    let log = std::env::var_os("FUZZ_SMOKE_IMPORT_LOG").is_some();
    // FUZZ_SMOKE_IMPORT_RUNS searches further by hand.
    let runs = std::env::var("FUZZ_SMOKE_IMPORT_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(RUNS);
    for n in 0..runs {
        let (format, files) = &samples[rng.below(samples.len())];
        // An OTF2 archive is written to files for the library (44 ms a run, 20× a text
        // sample's): a quarter of its draws, unless it is fuzzed alone.
        if *format == Format::Otf2 && only.is_none() && rng.below(4) != 0 {
            continue;
        }
        let other = &samples[rng.below(samples.len())].1[0].1;
        let mut files = files.clone();
        let k = rng.below(files.len());
        let text = !matches!(format, Format::Dumpi | Format::Otf2);
        files[k].1 = mutate(&mut rng, &files[k].1, other, text);
        if log {
            eprintln!("input {n} ({format:?}, file {k})");
        }
        let ok = std::panic::catch_unwind(|| {
            let Ok(t) = trace::import::parse(*format, &files, &options) else {
                return false;
            };
            if let Ok(g) = graph::build(&t, "fuzz") {
                let _ =
                    replay::replay(&t, &g, &Params::preset("myrinet").unwrap(), "fuzz", &|_| {});
            }
            true
        });
        match ok {
            Ok(accepted) => parsed += accepted as usize,
            Err(_) => {
                let path = std::env::temp_dir().join(format!("loggps-fuzz-import-{n}"));
                std::fs::write(&path, &files[k].1).unwrap();
                panic!(
                    "input {n} ({format:?}, file {k} of {}) panicked; it is in {}",
                    files[0].0,
                    path.display()
                );
            }
        }
    }
    eprintln!("{parsed} of {runs} mutated inputs parsed");
    assert!(parsed > runs / 50, "{parsed} of {runs} parsed");
}
