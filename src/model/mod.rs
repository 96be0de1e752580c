//! LogGPS parameters and the cost table of MODEL.md §2–4: pure functions of `k`, `ts`, `tr`;
//! and LogGP's parameters, the other model a run may choose.

#![allow(non_snake_case)] // the papers' parameter names: L, o, Os, Or, Gs, Gl, s, S; g, G

use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The LogGPS parameters (MODEL.md §1): times in ns, per-byte terms in ns/byte, `s`/`S` in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub L: f64,
    pub o: f64,
    pub Os: f64,
    pub Or: f64,
    pub Gs: f64,
    pub Gl: f64,
    pub s: u64,
    pub S: u64,
}

/// The parameter names in MODEL.md order.
pub const NAMES: [&str; 8] = ["L", "o", "Os", "Or", "Gs", "Gl", "s", "S"];

/// The paper's Table 5 presets.
pub const PRESETS: [(&str, Params); 3] = [
    (
        "cenju4",
        Params {
            L: 640.0,
            o: 7820.0,
            Os: 7.63,
            Or: 12.77,
            Gs: 0.57,
            Gl: -12.74,
            s: 1028,
            S: 1028,
        },
    ),
    (
        "myrinet",
        Params {
            L: 1160.0,
            o: 6550.0,
            Os: 6.86,
            Or: 2.57,
            Gs: 15.48,
            Gl: -0.74,
            s: 8191,
            S: 16383,
        },
    ),
    (
        "fast-ethernet",
        Params {
            L: 35220.0,
            o: 20590.0,
            Os: 10.67,
            Or: 5.87,
            Gs: 191.89,
            Gl: 74.95,
            s: 1023,
            S: 16383,
        },
    ),
];

/// A routine's predicted return, the synchronization inside its duration, and the instant
/// the partner unblocked it (what a later Wait measures its synchronization against).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    pub ret: f64,
    pub sync: f64,
    pub unblock: f64,
}

/// MODEL.md §4–5's Wait rule, folding the operations one call waits for (`MPI_Wait*`,
/// `MPI_Sendrecv`'s two halves): the call at `tw` returns when the last of them completes, no
/// earlier than `tw + o`; the critical one's wait for its partner is synchronization, on its side.
#[derive(Clone, Copy, Debug)]
pub struct WaitFold {
    tw: f64,
    ret: f64,
    /// When the critical operation's partner unblocked it (`tw` while none is critical: no
    /// synchronization).
    unblock: f64,
    send_side: bool,
}

/// A [`WaitFold`]'s return and unblocking times.
#[derive(Clone, Copy, Debug, Default)]
pub struct SavedFold {
    ret: f64,
    unblock: f64,
}

impl WaitFold {
    /// A call at `tw` that costs at least `o`.
    #[inline(always)]
    pub fn new(tw: f64, o: f64) -> WaitFold {
        WaitFold {
            tw,
            ret: tw + o,
            unblock: tw,
            send_side: false,
        }
    }

    /// An operation completing at `done` that its partner unblocked at `unblock`; `send_side`:
    /// it is a send (its synchronization is the sender's).
    #[inline(always)]
    pub fn add(&mut self, done: f64, unblock: f64, send_side: bool) {
        if done > self.ret {
            self.ret = done;
            self.unblock = unblock;
            self.send_side = send_side;
        }
    }

    /// The fold but its call time, and whether its critical operation is a send: to keep where
    /// the call time is kept anyway ([`WaitFold::resume`]).
    pub fn save(&self) -> (SavedFold, bool) {
        let saved = SavedFold {
            ret: self.ret,
            unblock: self.unblock,
        };
        (saved, self.send_side)
    }

    /// The fold [`WaitFold::save`] gave, of the call at `tw`.
    pub fn resume(tw: f64, saved: SavedFold, send_side: bool) -> WaitFold {
        WaitFold {
            tw,
            ret: saved.ret,
            unblock: saved.unblock,
            send_side,
        }
    }

    /// `(return, communication, sender sync, receiver sync)`.
    #[inline(always)]
    pub fn finish(self) -> (f64, f64, f64, f64) {
        let d = self.ret - self.tw;
        let sync = (self.unblock - self.tw).clamp(0.0, d);
        if self.send_side {
            (self.ret, d - sync, sync, 0.0)
        } else {
            (self.ret, d - sync, 0.0, sync)
        }
    }
}

impl Params {
    /// Parameters looked up by their names: `num` for the times and per-byte terms, `bytes`
    /// for `s` and `S` (the first error stops the lookup).
    pub fn from_named<E>(
        num: impl Fn(&str) -> Result<f64, E>,
        bytes: impl Fn(&str) -> Result<u64, E>,
    ) -> Result<Params, E> {
        Ok(Params {
            L: num("L")?,
            o: num("o")?,
            Os: num("Os")?,
            Or: num("Or")?,
            Gs: num("Gs")?,
            Gl: num("Gl")?,
            s: bytes("s")?,
            S: bytes("S")?,
        })
    }

    /// A preset by name.
    pub fn preset(name: &str) -> Option<Params> {
        PRESETS.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    /// Send overhead `T1 = o + k·Os`.
    #[inline(always)]
    pub fn t1(&self, k: u64) -> f64 {
        self.o + k as f64 * self.Os
    }

    /// First byte leaves → last byte arrives: `T2` (k ≤ s) or `T2'` (k > s).
    #[inline(always)]
    pub fn t2(&self, k: u64) -> f64 {
        if k <= self.s {
            k as f64 * self.Gs + self.L
        } else {
            self.s as f64 * self.Gs + (k - self.s) as f64 * self.Gl + self.L
        }
    }

    /// Receive overhead `T3 = o + k·Or`.
    #[inline(always)]
    pub fn t3(&self, k: u64) -> f64 {
        self.o + k as f64 * self.Or
    }

    /// ACK back to the sender, `T5 = o + L + o`.
    #[inline(always)]
    pub fn t5(&self) -> f64 {
        self.o + self.L + self.o
    }

    /// Whether a `k`-byte message goes by rendezvous (`always` for synchronous sends).
    #[inline(always)]
    pub fn rendezvous(&self, k: u64, always: bool) -> bool {
        always || k > self.S
    }

    /// A blocking send called at `ts` whose receive is called at `tr` (unused when eager).
    #[inline(always)]
    pub fn send(&self, k: u64, rdv: bool, ts: f64, tr: f64) -> Cost {
        if !rdv {
            return Cost {
                ret: ts + self.t1(k),
                sync: 0.0,
                unblock: ts,
            };
        }
        let req_arrives = ts + self.o + self.L;
        let confirmed = req_arrives.max(tr);
        Cost {
            ret: confirmed + self.o + self.t5() + self.t1(k),
            sync: (tr - req_arrives).max(0.0),
            unblock: tr,
        }
    }

    /// A blocking receive called at `tr` whose send is called at `ts`.
    #[inline(always)]
    pub fn recv(&self, k: u64, rdv: bool, ts: f64, tr: f64) -> Cost {
        if !rdv {
            let arrives = ts + self.t1(k) + self.t2(k);
            return Cost {
                ret: arrives.max(tr) + self.t3(k),
                sync: (arrives - tr).max(0.0),
                unblock: arrives,
            };
        }
        let req_arrives = ts + self.o + self.L;
        let ret = req_arrives.max(tr) + self.o + self.t5() + self.t1(k) + self.t2(k) + self.t3(k);
        Cost {
            ret,
            sync: (req_arrives - tr).max(0.0),
            unblock: req_arrives,
        }
    }

    /// `MPI_Probe` called at `tp` for a message sent at `ts`.
    pub fn probe(&self, k: u64, rdv: bool, ts: f64, tp: f64) -> Cost {
        let noticed = if rdv {
            ts + self.o + self.L
        } else {
            ts + self.t1(k) + self.t2(k)
        };
        Cost {
            ret: noticed.max(tp) + self.o,
            sync: (noticed - tp).max(0.0),
            unblock: noticed,
        }
    }

    /// Every routine cost stays positive only when `Os + Or + Gl > 0` (paper §4.3).
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.Os + self.Or + self.Gl <= 0.0 {
            w.push(format!(
                "Os + Or + Gl = {} ≤ 0: long messages get cheaper with size and some costs can turn negative (paper §4.3)",
                self.Os + self.Or + self.Gl
            ));
        }
        for (name, v) in [
            ("L", self.L),
            ("o", self.o),
            ("Os", self.Os),
            ("Or", self.Or),
            ("Gs", self.Gs),
        ] {
            if v < 0.0 {
                w.push(format!("{name} = {v} is negative"));
            }
        }
        w
    }

    fn get(&self, i: usize) -> f64 {
        [
            self.L,
            self.o,
            self.Os,
            self.Or,
            self.Gs,
            self.Gl,
            self.s as f64,
            self.S as f64,
        ][i]
    }
}

/// LogGP (Alexandrov et al. 1995): `k` bytes cost `o + (k−1)G + L + o` end to end, consecutive
/// messages leave (and arrive) at least `g` apart, one port per rank, no rendezvous.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LogGp {
    pub L: f64,
    pub o: f64,
    pub g: f64,
    pub G: f64,
}

/// LogGP's parameter names, in the order reports list them.
pub const LOGGP_NAMES: [&str; 4] = ["L", "o", "g", "G"];

impl LogGp {
    /// `(k − 1)·G`, the time between a message's first and last byte (a 0-byte message is one byte).
    pub fn stream(&self, bytes: u64) -> f64 {
        bytes.saturating_sub(1) as f64 * self.G
    }

    /// When the last byte of a `bytes` message whose first byte left at `first_out` arrives.
    pub fn arrival(&self, first_out: f64, bytes: u64) -> f64 {
        first_out + self.stream(bytes) + self.L
    }
}

/// The cost model a run uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Model {
    /// LogGPS, MODEL.md's cost table, rendezvous above `S` included.
    LogGps(Params),
    /// LogGP: no rendezvous, a gap `g` between consecutive messages at a rank.
    LogGp(LogGp),
}

impl Model {
    /// The name `--model` takes and reports show: `loggps` or `loggp`.
    pub fn name(&self) -> &'static str {
        match self {
            Model::LogGps(_) => "loggps",
            Model::LogGp(_) => "loggp",
        }
    }

    /// The per-message overhead `o`: what an `MPI_Isend`, `MPI_Irecv` or `MPI_Iprobe` costs.
    pub fn o(&self) -> f64 {
        match self {
            Model::LogGps(p) => p.o,
            Model::LogGp(m) => m.o,
        }
    }
}

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
}

/// The parameters a run used, each with where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub params: Params,
    pub sources: [Source; 8],
}

impl Resolved {
    /// `(name, value, source)` in MODEL.md order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64, &Source)> + '_ {
        (0..8).map(|i| (NAMES[i], self.params.get(i), &self.sources[i]))
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
    ] {
        if !v.is_finite() {
            return Err(Error::Params(format!(
                "parameter {name} = {v} is not a finite number"
            )));
        }
    }
    Ok(Resolved { params: p, sources })
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
    Params::from_named(num, bytes)
}

/// Writes parameters as the TOML [`parse_params_toml`] reads.
pub fn params_toml(p: &Params) -> String {
    format!(
        "# LogGPS parameters (ns, ns/byte, bytes)\n[params]\nL = {:?}\no = {:?}\nOs = {:?}\nOr = {:?}\nGs = {:?}\nGl = {:?}\ns = {}\nS = {}\n",
        p.L, p.o, p.Os, p.Or, p.Gs, p.Gl, p.s, p.S
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn myrinet() -> Params {
        Params::preset("myrinet").unwrap()
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-6, "{a} != {b}");
    }

    // MODEL.md §6, each value the routine's predicted duration (return − its own call).
    #[test]
    fn vector_k1000_one_way() {
        let p = myrinet();
        close(p.t1(1000) + p.t2(1000) + p.t3(1000), 39_170.0);
    }

    #[test]
    fn vector_k16383_one_way() {
        let p = myrinet();
        close(p.t1(16383) + p.t2(16383) + p.t3(16383), 289_486.290);
    }

    #[test]
    fn vector_send_16384_tr_eq_ts() {
        let p = myrinet();
        close(
            p.send(16384, p.rendezvous(16384, false), 0.0, 0.0).ret,
            147_464.240,
        );
    }

    #[test]
    fn vector_send_16384_tr_late() {
        let p = myrinet();
        let c = p.send(16384, true, 0.0, 100_000.0);
        close(c.ret, 239_754.240);
        close(c.sync, 100_000.0 - 6550.0 - 1160.0);
    }

    #[test]
    fn vector_recv_16384_tr_eq_ts() {
        let p = myrinet();
        close(
            p.recv(16384, p.rendezvous(16384, false), 0.0, 0.0).ret,
            318_014.980,
        );
    }

    #[test]
    fn vector_recv_65472_tr_late() {
        let p = myrinet();
        let tr = 100_000.0;
        close(
            p.recv(65472, p.rendezvous(65472, false), 0.0, tr).ret - tr,
            736_879.700,
        );
    }

    #[test]
    fn eager_limit_is_inclusive() {
        let p = myrinet();
        assert!(!p.rendezvous(16383, false));
        assert!(p.rendezvous(16384, false));
        assert!(p.rendezvous(1, true));
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

    #[test]
    fn loggp_arrival_is_o_free_transfer_plus_latency() {
        // 0-byte and 1-byte messages both take L after their first byte; k bytes (k−1)G more.
        let m = LogGp {
            L: 100.0,
            o: 7.0,
            g: 0.0,
            G: 2.0,
        };
        assert_eq!(m.arrival(10.0, 0), 110.0);
        assert_eq!(m.arrival(10.0, 1), 110.0);
        assert_eq!(m.arrival(10.0, 51), 210.0);
    }

    #[test]
    fn warns_when_long_messages_get_cheaper() {
        let p = Params::preset("cenju4").unwrap(); // Os + Or + Gl = 7.66 > 0
        assert!(p.warnings().is_empty());
        let bad = Params { Gl: -30.0, ..p };
        assert_eq!(bad.warnings().len(), 1);
    }
}
