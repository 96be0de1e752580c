use super::*;
use crate::model::{BAND_NAMES, Band};
use std::path::Path;

/// One `gamma` for every size.
fn g(v: f64) -> BySize {
    BySize::one(SizeParam::Gamma, v).unwrap()
}

/// One `copy` for every size.
fn c(v: f64) -> BySize {
    BySize::one(SizeParam::Copy, v).unwrap()
}

/// The set nearest by ratio: 140 ns lies nearer 60 (ln 2.33 = 0.85) than 450 (ln 3.21 =
/// 1.17), 300 nearer 450 (0.41) than 60 (1.61); 100 between 50 and 200 (ln 2 both) takes
/// the first; a set without a figure is farthest, and with none at all the first is taken.
#[test]
fn the_nearest_cores_figure_is_by_ratio() {
    let sets = [Some(60.0), Some(450.0), None];
    assert_eq!(nearest_cores(140.0, sets), Some(0));
    assert_eq!(nearest_cores(300.0, sets), Some(1));
    assert_eq!(nearest_cores(100.0, [Some(50.0), Some(200.0)]), Some(0));
    assert_eq!(nearest_cores(100.0, [None, Some(1000.0)]), Some(1));
    assert_eq!(nearest_cores(100.0, [None, None]), Some(0));
    assert_eq!(nearest_cores(100.0, []), None);
}

fn myrinet() -> Params {
    Params::preset("myrinet").unwrap()
}

#[test]
fn toml_top_level_and_table() {
    let top =
        "L = 1160\no = 6550\nOs = 6.86\nOr = 2.57\nGs = 15.48\nGl = -0.74\ns = 8191\nS = 16383\n";
    assert_eq!(parse_params_toml(top).unwrap(), myrinet());
    assert_eq!(
        parse_params_toml(&params_toml(&myrinet())).unwrap(),
        myrinet()
    );
    assert!(
        parse_params_toml("L = 1")
            .unwrap_err()
            .contains("parameter o is missing")
    );
    assert!(
        parse_params_toml(&top.replace("S = 16383", "S = 1.5"))
            .unwrap_err()
            .contains("integer")
    );
}

/// `--scale all=F` multiplies every time and rate: each band's, the paper form's six,
/// `copy`, `oc` and `gamma`; what it does not cost with (`S`, `s`, `poll`, `cores`) stays.
#[test]
fn scaling_all_multiplies_every_time_and_rate() {
    let extra = |p: Params| Params {
        gamma: Some(g(0.03)),
        oc: Some(200.0),
        copy: Some(c(0.02)),
        poll: Some(40.0),
        cores: Some(150.0),
        ..p
    };
    let paper = extra(myrinet());
    let p = scale(paper, "all", 2.0).unwrap();
    assert_eq!((p.L, p.o, p.Os, p.Or), (2320.0, 13100.0, 13.72, 5.14));
    assert_eq!((p.Gs, p.Gl), (30.96, -1.48));
    assert_eq!(
        (p.gamma, p.oc, p.copy),
        (Some(g(0.06)), Some(400.0), Some(c(0.04)))
    );
    assert_eq!(
        (p.s, p.S, p.poll, p.cores),
        (8191, 16383, Some(40.0), Some(150.0))
    );
    let banded = extra(Params::banded(myrinet().as_bands(), myrinet().S, None));
    let p = scale(banded, "all", 2.0).unwrap();
    let (before, after) = (banded.bands.unwrap(), p.bands.unwrap());
    for (b, a) in before.as_slice().iter().zip(after.as_slice()) {
        assert_eq!(a.hi, b.hi);
        for (i, name) in BAND_NAMES.iter().enumerate() {
            assert_eq!(a.get(i), 2.0 * b.get(i), "{name}");
        }
    }
    assert_eq!((p.oc, p.S), (Some(400.0), banded.S));
}

/// `gamma` is written and read back in both forms, `progress` too; the calibrated banded
/// set of traces/params.toml carries a gamma.
#[test]
fn toml_keeps_gamma() {
    let paper = Params {
        gamma: Some(g(0.03)),
        poll: Some(40.0),
        ..myrinet()
    };
    let banded = Params {
        gamma: Some(g(0.03)),
        ..Params::banded(myrinet().as_bands(), myrinet().S, None)
    };
    for p in [paper, banded] {
        let text = params_toml(&p);
        assert!(text.contains("gamma = 0.03\n"), "{text}");
        assert_eq!(parse_params_toml(&text).unwrap(), p);
    }
    let calls = Params {
        progress_at_calls: true,
        ..myrinet()
    };
    let text = params_toml(&calls);
    assert!(text.contains("progress = \"calls\"\n"), "{text}");
    assert_eq!(parse_params_toml(&text).unwrap(), calls);
    let share = |points: &[(u64, f64)]| BySize::new(SizeParam::RendezvousSender, points).ok();
    // One value, and one a size: the file's line reads back as written.
    let round_trip = |points: &[(u64, f64)], line: &str| {
        let set = Params {
            rendezvous_sender: share(points),
            ..myrinet()
        };
        let text = params_toml(&set);
        assert!(text.contains(line), "{text}");
        assert_eq!(parse_params_toml(&text).unwrap(), set);
        (set, text)
    };
    let (_, text_both) = round_trip(&[(0, 0.25)], "rendezvous_sender = 0.25\n");
    let over = text_both.replace("0.25", "1.5");
    let why = parse_params_toml(&over).unwrap_err();
    assert!(
        why.contains("rendezvous_sender = 1.5 must lie in 0–1"),
        "{why}"
    );
    // The share between two sizes interpolated in log k (0.4 at 4,096 B, 0.1 at 16,384 B: 0.25
    // at 8,192 B).
    let (sized, text_sized) = round_trip(
        &[(4096, 0.4), (16384, 0.1)],
        "rendezvous_sender = [[4096, 0.4], [16384, 0.1]]\n",
    );
    assert!((sized.sender_share(8192) - 0.25).abs() < 1e-12);
    assert_eq!(
        (sized.sender_share(100), sized.sender_share(1 << 20)),
        (0.4, 0.1)
    );
    let over = text_sized.replace("0.4]", "1.4]");
    let why = parse_params_toml(&over).unwrap_err();
    assert!(
        why.contains("rendezvous_sender = 1.4 at 4096 B must lie in 0–1"),
        "{why}"
    );
    let bad = text.replace("\"calls\"", "\"sometimes\"");
    assert!(
        parse_params_toml(&bad)
            .unwrap_err()
            .contains("\"async\" or \"calls\"")
    );
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/traces/params.toml");
    let calibrated = read_params_file(Path::new(file)).unwrap();
    assert!(
        calibrated.gamma.is_some_and(|g| g.first() > 0.0),
        "{calibrated:?}"
    );
}

/// Sets of both forms and classes go through one file of `[[set]]` tables and back
/// exactly; a file of sets is refused where one set is expected, and a class is checked.
#[test]
fn sets_travel_through_one_file() {
    let node = Params {
        class: Some(Class::Node),
        cores: Some(92.0),
        gamma: Some(g(0.03)),
        ..Params::banded(myrinet().as_bands(), myrinet().S, None)
    };
    let network = Params {
        class: Some(Class::Network),
        ..myrinet()
    };
    let text = param_sets_toml(&[node, network]);
    assert_eq!(parse_param_sets(&text).unwrap(), vec![node, network]);
    assert_eq!(parse_param_sets(&params_toml(&node)).unwrap(), vec![node]);
    let bad = params_toml(&network).replace("\"network\"", "\"rack\"");
    assert!(
        parse_params_toml(&bad)
            .unwrap_err()
            .contains("\"node\" or \"network\"")
    );
    assert!(parse_param_sets(&format!("L = 1\n{text}")).is_err());
}

/// Eager bands above S (the model's §10, "both protocols") go through a file of one set
/// and of several exactly, start at the file's S, and are refused where malformed or
/// beside the paper's form.
#[test]
fn eager_bands_travel_through_files() {
    let banded = Params::banded(myrinet().as_bands(), myrinet().S, None);
    let above = Band {
        hi: 65536,
        o: 400.0,
        L: 10.0,
        Os: 0.06,
        Or: 0.07,
        ..Band::default()
    };
    let both = banded
        .with_bands(|b| {
            *b = b.with_eager_above(banded.S, &[above])?;
            Ok(())
        })
        .unwrap();
    let text = params_toml(&both);
    assert!(
        text.contains("\n[[eager_bands]]\nhi = 65536\no = 400.0\n"),
        "{text}"
    );
    assert_eq!(parse_params_toml(&text).unwrap(), both);
    let node = Params {
        class: Some(Class::Node),
        cores: Some(92.0),
        ..both
    };
    let network = Params {
        class: Some(Class::Network),
        ..myrinet()
    };
    let sets = param_sets_toml(&[node, network]);
    assert!(sets.contains("[[set.eager_bands]]"), "{sets}");
    assert_eq!(parse_param_sets(&sets).unwrap(), vec![node, network]);
    let e = parse_params_toml(&text.replace("hi = 65536\n", "")).unwrap_err();
    assert!(e.contains("eager band 1: hi must be"), "{e}");
    let e = parse_params_toml(&text.replace("hi = 65536", "hi = 100")).unwrap_err();
    assert!(e.contains("rise from S = 16383"), "{e}");
    let paper = format!("{}\n[[eager_bands]]\nhi = 65536\n", params_toml(&myrinet()));
    let e = parse_params_toml(&paper.replace("[params]\n", "")).unwrap_err();
    assert!(e.contains("extend a set in bands"), "{e}");
}

#[test]
fn precedence_file_platform_trace_then_flags() {
    let embedded = Params {
        L: 1.0,
        ..myrinet()
    };
    let r = resolve(&[], None, &[embedded], &Overrides::default()).unwrap();
    assert_eq!(r.params.L, 1.0);
    assert_eq!(r.sources[0], Source::Trace);
    let r = resolve(
        &[],
        Some("cenju4"),
        &[embedded],
        &Overrides {
            S: Some(65536),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(r.params.L, 640.0);
    assert_eq!(r.params.S, 65536);
    assert_eq!(r.sources[7], Source::Flag);
    assert_eq!(r.sources[0], Source::Platform("cenju4".into()));
    let err = resolve(
        &[],
        None,
        &[],
        &Overrides {
            L: Some(1.0),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("--platform"), "{err}");
    assert!(resolve(&[], Some("nope"), &[], &Overrides::default()).is_err());
}

#[test]
fn loggp_takes_each_flag_else_the_loggps_base_else_zero() {
    let flags = LogGpFlags {
        g: Some(5.0),
        ..Default::default()
    };
    let r = resolve_loggp(&[], Some("myrinet"), &[], &flags).unwrap();
    let platform = Source::Platform("myrinet".into());
    assert_eq!(
        r.model,
        LogGp {
            L: 1160.0,
            o: 6550.0,
            g: 5.0,
            G: 15.48,
            gamma: 0.0,
        }
    );
    assert_eq!(
        r.sources,
        [platform.clone(), platform.clone(), Source::Flag, platform]
    );
    let flags = LogGpFlags {
        L: Some(30.0),
        ..Default::default()
    };
    let r = resolve_loggp(&[], None, &[myrinet()], &flags).unwrap();
    assert_eq!((r.model.L, r.model.o, r.model.G), (30.0, 6550.0, 15.48));
    assert_eq!(r.sources[1], Source::Trace);
    let r = resolve_loggp(&[], None, &[], &flags).unwrap();
    assert_eq!((r.model.o, r.model.g, r.model.G), (0.0, 0.0, 0.0));
    assert_eq!(r.sources[3], Source::Default);
    let err = resolve_loggp(&[], None, &[], &LogGpFlags::default()).unwrap_err();
    assert!(err.to_string().contains("LogGP needs L"), "{err}");
    let negative = LogGpFlags {
        G: Some(-1.0),
        ..flags
    };
    assert!(resolve_loggp(&[], None, &[], &negative).is_err());
}
