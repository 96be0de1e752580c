//! Which parameters a run uses: `--params FILE`, `--platform`, the trace's own, each overridden
//! by its flag; and the parameter TOML.

use super::{LOGGP_NAMES, LogGp, Model, NAMES, PRESETS, Params};
use crate::error::Error;
use serde::Serialize;
use std::path::Path;

/// Where a parameter's value came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Flag,
    File(String),
    Platform(String),
    Trace,
    /// Not given anywhere: the model's default (LogGP's `o`, `g`, `G`: 0).
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag => write!(f, "flag"),
            Source::File(p) => write!(f, "file {p}"),
            Source::Platform(n) => write!(f, "platform {n}"),
            Source::Trace => write!(f, "trace"),
            Source::Default => write!(f, "default"),
        }
    }
}

/// Per-parameter overrides from the command line (`--L`, `--S`, …).
#[derive(Clone, Copy, Debug, Default)]
pub struct Overrides {
    pub L: Option<f64>,
    pub o: Option<f64>,
    pub Os: Option<f64>,
    pub Or: Option<f64>,
    pub Gs: Option<f64>,
    pub Gl: Option<f64>,
    pub s: Option<u64>,
    pub S: Option<u64>,
    /// A failed poll's cost, ns (`--poll`).
    pub poll: Option<f64>,
}

/// The parameters a run used, each with where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub params: Params,
    pub sources: [Source; 8],
    /// Where `params.poll` came from (unused while it is None: failed polls as traced).
    pub poll_source: Source,
}

impl Resolved {
    /// `(name, value, source)` in the order of the model's §1, then `poll` where one is set.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64, &Source)> + '_ {
        let named = (0..8).map(|i| (NAMES[i], self.params.get(i), &self.sources[i]));
        let poll = self.params.poll.map(|v| ("poll", v, &self.poll_source));
        named.chain(poll)
    }
}

/// Chooses the parameters: `--params FILE`, else `--platform`, else the trace's own, each
/// value then overridden by its flag. All eight flags together need no base.
pub fn resolve(
    file: Option<&Path>,
    platform: Option<&str>,
    embedded: Option<Params>,
    ov: &Overrides,
) -> Result<Resolved, Error> {
    let base = if let Some(path) = file {
        Some((
            read_params_file(path)?,
            Source::File(path.display().to_string()),
        ))
    } else if let Some(name) = platform {
        let p = Params::preset(name).ok_or_else(|| {
            Error::Params(format!(
                "unknown platform '{name}': expected one of {}",
                PRESETS.map(|(n, _)| n).join(", ")
            ))
        })?;
        Some((p, Source::Platform(name.to_string())))
    } else {
        embedded.map(|p| (p, Source::Trace))
    };
    let flags = [
        ov.L,
        ov.o,
        ov.Os,
        ov.Or,
        ov.Gs,
        ov.Gl,
        ov.s.map(|v| v as f64),
        ov.S.map(|v| v as f64),
    ];
    let Some((mut p, source)) = base.or_else(|| {
        flags
            .iter()
            .all(Option::is_some)
            .then_some((PRESETS[0].1, Source::Flag))
    }) else {
        let missing: Vec<String> = NAMES
            .iter()
            .zip(flags)
            .filter(|(_, f)| f.is_none())
            .map(|(n, _)| format!("--{n}"))
            .collect();
        return Err(Error::Params(format!(
            "no LogGPS parameters: the trace embeds none; pass --platform cenju4|myrinet|fast-ethernet, \
             --params FILE (a TOML such as `loggps-predict calibrate` writes), or all of --L --o --Os --Or --Gs --Gl --s --S \
             (missing: {})",
            missing.join(" ")
        )));
    };
    let mut sources: [Source; 8] = std::array::from_fn(|_| source.clone());
    let mut poll_source = source.clone();
    if let Some(v) = ov.poll {
        (p.poll, poll_source) = (Some(v), Source::Flag);
    }
    macro_rules! apply {
        ($($i:literal $f:ident),*) => {$(
            if let Some(v) = ov.$f { p.$f = v; sources[$i] = Source::Flag; }
        )*};
    }
    apply!(0 L, 1 o, 2 Os, 3 Or, 4 Gs, 5 Gl, 6 s, 7 S);
    for (name, v) in [
        ("L", p.L),
        ("o", p.o),
        ("Os", p.Os),
        ("Or", p.Or),
        ("Gs", p.Gs),
        ("Gl", p.Gl),
        ("poll", p.poll.unwrap_or(0.0)),
    ] {
        if !v.is_finite() {
            return Err(Error::Params(format!(
                "parameter {name} = {v} is not a finite number"
            )));
        }
    }
    if p.poll.is_some_and(|v| v < 0.0) {
        return Err(Error::Params(format!(
            "parameter poll = {} is negative: a failed poll costs 0 ns or more",
            p.poll.unwrap_or(0.0)
        )));
    }
    Ok(Resolved {
        params: p,
        sources,
        poll_source,
    })
}

/// LogGP parameters from the command line (`None`: not given).
#[derive(Clone, Copy, Debug, Default)]
pub struct LogGpFlags {
    pub L: Option<f64>,
    pub o: Option<f64>,
    pub g: Option<f64>,
    pub G: Option<f64>,
}

/// LogGP parameters with where each came from, in [`LOGGP_NAMES`] order.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedLogGp {
    pub model: LogGp,
    pub sources: [Source; 4],
}

/// Chooses LogGP's parameters: each from its flag, else `L`, `o` and `G = Gs` from the LogGPS
/// parameters [`resolve`] picks (`file`, else `platform`, else `embedded`), else `o`, `g` and `G`
/// are 0. `g` has no LogGPS counterpart (LogGPS disregards it); `L` has no default.
pub fn resolve_loggp(
    file: Option<&Path>,
    platform: Option<&str>,
    embedded: Option<Params>,
    flags: &LogGpFlags,
) -> Result<ResolvedLogGp, Error> {
    let base = if file.is_some() || platform.is_some() || embedded.is_some() {
        Some(resolve(file, platform, embedded, &Overrides::default())?)
    } else {
        None
    };
    // Each parameter: its flag, else its LogGPS counterpart (index into NAMES), else the default.
    let pick = |flag: Option<f64>, counterpart: Option<usize>| match (flag, counterpart, &base) {
        (Some(v), _, _) => Some((v, Source::Flag)),
        (None, Some(i), Some(b)) => Some((b.params.get(i), b.sources[i].clone())),
        _ => None,
    };
    let (L, L_source) = pick(flags.L, Some(0)).ok_or_else(|| {
        Error::Params(
            "LogGP needs L: pass --L NS (and optionally --o --g --G), or --platform/--params \
             (or a trace that embeds LogGPS parameters) for L, o and G = Gs"
                .into(),
        )
    })?;
    let default = || (0.0, Source::Default);
    let (o, o_source) = pick(flags.o, Some(1)).unwrap_or_else(default);
    let (g, g_source) = pick(flags.g, None).unwrap_or_else(default);
    let (G, G_source) = pick(flags.G, Some(4)).unwrap_or_else(default);
    let model = LogGp { L, o, g, G };
    for (name, v) in LOGGP_NAMES.iter().zip([L, o, g, G]) {
        if !v.is_finite() || v < 0.0 {
            return Err(Error::Params(format!(
                "LogGP parameter {name} = {v} must be a finite number ≥ 0"
            )));
        }
    }
    Ok(ResolvedLogGp {
        model,
        sources: [L_source, o_source, g_source, G_source],
    })
}

/// The model a run uses, each parameter with where its value came from.
#[derive(Clone, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)] // one a run: its size does not matter
pub enum ResolvedModel {
    LogGps(Resolved),
    LogGp(ResolvedLogGp),
}

impl ResolvedModel {
    pub fn model(&self) -> Model {
        match self {
            ResolvedModel::LogGps(r) => Model::LogGps(r.params),
            ResolvedModel::LogGp(r) => Model::LogGp(r.model),
        }
    }

    /// `(name, value, source)` in the model's own names and order.
    pub fn params(&self) -> Vec<(&'static str, f64, &Source)> {
        match self {
            ResolvedModel::LogGps(r) => r.iter().collect(),
            ResolvedModel::LogGp(r) => {
                let m = &r.model;
                LOGGP_NAMES
                    .into_iter()
                    .zip([m.L, m.o, m.g, m.G])
                    .zip(&r.sources)
                    .map(|((n, v), s)| (n, v, s))
                    .collect()
            }
        }
    }
}

/// Reads a parameter TOML: the eight names at the top level or in a `[params]` table.
pub fn read_params_file(path: &Path) -> Result<Params, Error> {
    let name = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Params(format!("{name}: cannot read parameters: {e}")))?;
    parse_params_toml(&text).map_err(|e| Error::Params(format!("{name}: {e}")))
}

/// Parses a parameter TOML (see [`read_params_file`]).
pub fn parse_params_toml(text: &str) -> Result<Params, String> {
    let value: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("not valid TOML: {}", e.message()))?;
    let table = match value.get("params") {
        Some(toml::Value::Table(t)) => t.clone(),
        Some(_) => return Err("`params` must be a table".into()),
        None => value,
    };
    let num = |n: &str| -> Result<f64, String> {
        match table.get(n) {
            Some(toml::Value::Float(f)) => Ok(*f),
            Some(toml::Value::Integer(i)) => Ok(*i as f64),
            Some(v) => Err(format!("parameter {n} must be a number, found {v}")),
            None => Err(format!(
                "parameter {n} is missing (expected all of {})",
                NAMES.join(", ")
            )),
        }
    };
    let bytes = |n: &str| -> Result<u64, String> {
        match table.get(n) {
            Some(toml::Value::Integer(i)) if *i >= 0 => Ok(*i as u64),
            Some(v) => Err(format!(
                "parameter {n} must be a non-negative integer number of bytes, found {v}"
            )),
            None => Err(format!(
                "parameter {n} is missing (expected all of {})",
                NAMES.join(", ")
            )),
        }
    };
    let poll = match table.get("poll") {
        None => None,
        Some(_) => Some(num("poll")?),
    };
    Ok(Params {
        poll,
        ..Params::from_named(num, bytes)?
    })
}

/// Writes parameters as the TOML [`parse_params_toml`] reads.
pub fn params_toml(p: &Params) -> String {
    let poll = p.poll.map_or(String::new(), |v| format!("poll = {v:?}\n"));
    format!(
        "# LogGPS parameters (ns, ns/byte, bytes)\n[params]\nL = {:?}\no = {:?}\nOs = {:?}\nOr = {:?}\nGs = {:?}\nGl = {:?}\ns = {}\nS = {}\n{poll}",
        p.L, p.o, p.Os, p.Or, p.Gs, p.Gl, p.s, p.S
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn myrinet() -> Params {
        Params::preset("myrinet").unwrap()
    }

    #[test]
    fn toml_top_level_and_table() {
        let top = "L = 1160\no = 6550\nOs = 6.86\nOr = 2.57\nGs = 15.48\nGl = -0.74\ns = 8191\nS = 16383\n";
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

    #[test]
    fn precedence_file_platform_trace_then_flags() {
        let embedded = Params {
            L: 1.0,
            ..myrinet()
        };
        let r = resolve(None, None, Some(embedded), &Overrides::default()).unwrap();
        assert_eq!(r.params.L, 1.0);
        assert_eq!(r.sources[0], Source::Trace);
        let r = resolve(
            None,
            Some("cenju4"),
            Some(embedded),
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
            None,
            None,
            None,
            &Overrides {
                L: Some(1.0),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("--platform"), "{err}");
        assert!(resolve(None, Some("nope"), None, &Overrides::default()).is_err());
    }

    #[test]
    fn loggp_takes_each_flag_else_the_loggps_base_else_zero() {
        let flags = LogGpFlags {
            g: Some(5.0),
            ..Default::default()
        };
        let r = resolve_loggp(None, Some("myrinet"), None, &flags).unwrap();
        let platform = Source::Platform("myrinet".into());
        assert_eq!(
            r.model,
            LogGp {
                L: 1160.0,
                o: 6550.0,
                g: 5.0,
                G: 15.48
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
        let r = resolve_loggp(None, None, Some(myrinet()), &flags).unwrap();
        assert_eq!((r.model.L, r.model.o, r.model.G), (30.0, 6550.0, 15.48));
        assert_eq!(r.sources[1], Source::Trace);
        let r = resolve_loggp(None, None, None, &flags).unwrap();
        assert_eq!((r.model.o, r.model.g, r.model.G), (0.0, 0.0, 0.0));
        assert_eq!(r.sources[3], Source::Default);
        let err = resolve_loggp(None, None, None, &LogGpFlags::default()).unwrap_err();
        assert!(err.to_string().contains("LogGP needs L"), "{err}");
        let negative = LogGpFlags {
            G: Some(-1.0),
            ..flags
        };
        assert!(resolve_loggp(None, None, None, &negative).is_err());
    }
}
