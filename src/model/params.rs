//! Which parameters a run uses: `--params FILE`, `--platform`, the trace's own, each overridden
//! by its flag; and the parameter TOML.

use super::scale::{SCALE_ALL, SCALE_RENDEZVOUS, scale};
use super::{BySize, Class, LOGGP_NAMES, LogGp, Model, NAMES, PRESETS, Params, SizeParam};
use crate::error::Error;
use serde::Serialize;

/// Where a parameter's value came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Flag,
    File(String),
    Platform(String),
    Trace,
    /// The eager limit the trace recorded, where the set's eager bands above its `S` were
    /// measured at it (the model's §10, "both protocols").
    TraceLimit,
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
            Source::TraceLimit => write!(f, "the trace's eager limit"),
            Source::Default => write!(f, "default"),
        }
    }
}

/// Per-parameter overrides from the command line (`--L`, `--S`, …, `--scale`).
#[derive(Clone, Debug, Default)]
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
    /// Reduction arithmetic's cost, ns/byte (`--gamma`).
    pub gamma: Option<f64>,
    /// A modeled collective call's own cost, ns (`--oc`).
    pub oc: Option<f64>,
    /// A modeled collective's local copies' cost, ns/byte (`--copy`).
    pub copy: Option<f64>,
    /// The send's overhead after its message left, ns, set in every band (`--Od`, the model's
    /// §9).
    pub Od: Option<f64>,
    /// The receive's overhead done before its message arrives, ns, in every band (`--Op`).
    pub Op: Option<f64>,
    /// The part of the send's overhead after its message left that grows with its size, ns a
    /// byte, in every band (`--Osd`, the model's §13).
    pub Osd: Option<f64>,
    /// Whether messages move only inside MPI calls (`--progress calls`) or asynchronously.
    pub progress_at_calls: Option<bool>,
    /// The share of a rendezvous payload's `T1` that holds its sender's CPU
    /// (`--rendezvous-sender`, 0 to 1).
    pub rendezvous_sender: Option<f64>,
    /// What a rendezvous payload received into a buffer last sent to the same peer costs its
    /// receiver more, ns a byte (`--bounce`, the model's §13).
    pub bounce: Option<f64>,
    /// The same for a payload whose send the trace flagged `clean` (`--bounce-clean`).
    pub bounce_clean: Option<f64>,
    /// What a rendezvous message from a buffer unchanged since its last send costs, as a share
    /// of the set's cost (`--clean`, the model's §13); with none the other way at once too.
    pub clean: Option<f64>,
    /// The same for a message with none the other way at once (`--clean-oneway`).
    pub clean_oneway: Option<f64>,
    /// Eager sends of at most this many bytes return when their message has left
    /// (`--departs-upto`, the model's §13).
    pub departs_upto: Option<u64>,
    /// What posting a receive (`MPI_Irecv`) costs, ns (`--post`, the model's §4).
    pub post: Option<f64>,
    /// What a completion call costs at least, ns (`--wait`, the model's §4).
    pub wait: Option<f64>,
    /// What a collective's own write into lines its peer has just read costs more, ns a byte
    /// (`--held`, the model's §15).
    pub held: Option<f64>,
    /// The same for a collective's reduction into such lines (`--held-reduce`).
    pub held_reduce: Option<f64>,
    /// What a collective's temporary buffer costs, ns (`--alloc`, the model's §15).
    pub alloc: Option<f64>,
    /// What an aliased single copy costs more, ns a byte (`--alias`, the model's §9).
    pub alias: Option<f64>,
    /// What a receive of an eager message taken in while its rank waited costs, ns at every
    /// size (`--drained`, the model's §14).
    pub drained: Option<f64>,
    /// `(name, factor)`: multiply that parameter (in every band) by the factor (`--scale`),
    /// after the absolute values are set.
    pub scale: Vec<(String, f64)>,
    /// `(CLASS.NAME, value)`: set that parameter in that class's sets only (`--set`), as its
    /// flag sets it in every set.
    pub set: Vec<(String, f64)>,
}

/// Where each of [`BAND_NAMES`] (`o L Os Or G Od Op Osd`) takes its source from in a set in bands:
/// the place in [`NAMES`] of the parameter its flag sets (`G`: `Gs`, which `--scale G` marks),
/// then [`Resolved::split_sources`].
const BAND_SOURCES: [usize; 8] = [1, 0, 2, 3, 4, 8, 9, 10];

/// The parameters of a band [`apply`] sets or scales beyond the paper's, and their places in
/// [`Resolved::split_sources`].
const SPLIT_NAMES: [&str; 3] = ["Od", "Op", "Osd"];

/// The parameters a run used, each with where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub params: Params,
    pub sources: [Source; 8],
    /// Where `params.poll` came from (unused while it is None: failed polls as traced).
    pub poll_source: Source,
    /// Where `params.gamma` came from (unused while it is None: reductions free).
    pub gamma_source: Source,
    /// Where `params.oc` came from (unused while it is None).
    pub oc_source: Source,
    /// Where `params.copy` came from (unused while it is None).
    pub copy_source: Source,
    /// Where `params.bounce` came from (unused while it is 0).
    pub bounce_source: Source,
    /// Where `params.bounce_clean` came from (unused while it is None).
    pub bounce_clean_source: Source,
    /// Where `params.clean` came from (unused while it is None).
    pub clean_source: Source,
    /// Where `params.clean_oneway` came from (unused while it is None).
    pub clean_oneway_source: Source,
    /// Where `params.departs_upto` came from (unused while it is None).
    pub departs_source: Source,
    /// Where `params.post` came from (unused while it is None: a receive's post costs `o`).
    pub post_source: Source,
    /// Where `params.wait` came from (unused while it is None: a Wait costs `o` at least).
    pub wait_source: Source,
    /// Where `params.held` came from (unused while it is None: such writes cost `bounce`).
    pub held_source: Source,
    /// Where `params.held_reduce` came from (unused while it is None: `held` costs them).
    pub held_reduce_source: Source,
    /// Where `params.alloc` came from (unused while it is None).
    pub alloc_source: Source,
    /// Where `params.alias` came from (unused while it is None).
    pub alias_source: Source,
    /// Where `params.drained` came from (unused while it is None).
    pub drained_source: Source,
    /// Where the bands' `Od`, `Op` and `Osd` came from (unused while the set has none: the
    /// model's §13).
    pub split_sources: [Source; 3],
    /// The other sets given with it (several `--params`, or several sets in one file: the
    /// model's §12), each with the flags applied as to `params`. `params` is the first set
    /// for pairs on one node (the first of all where none is): what every use that takes one
    /// set (sweeps, sensitivity, the critical path, collectives) costs with.
    pub others: Vec<Params>,
}

impl Resolved {
    /// `(name, value, source)` in the order of the model's §1, then `poll`, `gamma`, `oc`,
    /// `copy` and `bounce` where they are set.
    /// A set in bands: each band's `hi` and [`BAND_NAMES`] as `b1.hi`, `b1.o`, … (split at
    /// `S`, the model's §10), then `S`.
    pub fn iter(&self) -> impl Iterator<Item = (String, f64, &Source)> + '_ {
        let p = &self.params;
        let named: Vec<(String, f64, &Source)> = match &p.bands {
            None => (0..8)
                .map(|i| (NAMES[i].to_string(), p.get(i), &self.sources[i]))
                .collect(),
            Some(b) => {
                let mut v = Vec::new();
                for (j, (_, band)) in b.split_at(p.S).into_iter().enumerate() {
                    if band.hi != u64::MAX {
                        v.push((format!("b{}.hi", j + 1), band.hi as f64, &self.sources[7]));
                    }
                    for (i, name) in b.names().iter().enumerate() {
                        let source = match BAND_SOURCES[i] {
                            s if s < 8 => &self.sources[s],
                            s => &self.split_sources[s - 8],
                        };
                        v.push((format!("b{}.{name}", j + 1), band.get(i), source));
                    }
                }
                v.push(("S".to_string(), p.S as f64, &self.sources[7]));
                v
            }
        };
        let poll = p.poll.map(|v| ("poll".to_string(), v, &self.poll_source));
        // One value, or one a size measured (`copy@16384`, `bounce@16384`, `clean@4096`).
        let gamma =
            (p.gamma.iter().flat_map(BySize::named)).map(|(name, v)| (name, v, &self.gamma_source));
        let oc = p.oc.map(|v| ("oc".to_string(), v, &self.oc_source));
        let copy =
            (p.copy.iter().flat_map(BySize::named)).map(|(name, v)| (name, v, &self.copy_source));
        let bounce = (p.bounce.as_ref().filter(|b| !b.is_zero()).into_iter())
            .flat_map(BySize::named)
            .map(|(name, v)| (name, v, &self.bounce_source));
        let bounce_clean = (p.bounce_clean.iter().flat_map(BySize::named))
            .map(|(name, v)| (name, v, &self.bounce_clean_source));
        let clean =
            (p.clean.iter().flat_map(BySize::named)).map(|(name, v)| (name, v, &self.clean_source));
        let clean_oneway = (p.clean_oneway.iter().flat_map(BySize::named))
            .map(|(name, v)| (name, v, &self.clean_oneway_source));
        let departs =
            (p.departs_upto).map(|d| ("departs_upto".to_string(), d as f64, &self.departs_source));
        let post = p.post.map(|v| ("post".to_string(), v, &self.post_source));
        let wait = p.wait.map(|v| ("wait".to_string(), v, &self.wait_source));
        let held = p.held.map(|v| ("held".to_string(), v, &self.held_source));
        let held_reduce =
            (p.held_reduce).map(|v| ("held_reduce".to_string(), v, &self.held_reduce_source));
        let alloc = p
            .alloc
            .map(|v| ("alloc".to_string(), v, &self.alloc_source));
        let alias = p
            .alias
            .map(|v| ("alias".to_string(), v, &self.alias_source));
        let drained = (p.drained.iter().flat_map(BySize::named))
            .map(|(name, v)| (name, v, &self.drained_source));
        named
            .into_iter()
            .chain(poll)
            .chain(gamma)
            .chain(oc)
            .chain(copy)
            .chain(bounce)
            .chain(bounce_clean)
            .chain(clean)
            .chain(clean_oneway)
            .chain(departs)
            .chain(post)
            .chain(wait)
            .chain(held)
            .chain(held_reduce)
            .chain(alloc)
            .chain(alias)
            .chain(drained)
    }
}

/// Chooses the parameters: `--params FILE` (several files, or a file of several sets,
/// combine: the model's §12), else `--platform`, else the trace's own, each value then
/// overridden by its flag. All eight flags together need no base.
pub fn resolve(
    files: &[std::path::PathBuf],
    platform: Option<&str>,
    embedded: &[Params],
    ov: &Overrides,
) -> Result<Resolved, Error> {
    let mut sets = Vec::new();
    for path in files {
        let name = path.display().to_string();
        for p in read_param_sets(path)? {
            sets.push((p, Source::File(name.clone())));
        }
    }
    if sets.len() > 1 {
        return resolve_sets(sets, ov);
    }
    // A trace that embeds several sets combines them, as several files would.
    if sets.is_empty() && platform.is_none() && embedded.len() > 1 {
        let embedded = embedded.iter().map(|p| (*p, Source::Trace)).collect();
        return resolve_sets(embedded, ov);
    }
    let base = if let Some(set) = sets.pop() {
        Some(set)
    } else if let Some(name) = platform {
        let p = Params::preset(name).ok_or_else(|| {
            Error::Params(format!(
                "unknown platform '{name}': expected one of {}",
                PRESETS.map(|(n, _)| n).join(", ")
            ))
        })?;
        Some((p, Source::Platform(name.to_string())))
    } else {
        embedded.first().map(|p| (*p, Source::Trace))
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
    let Some((p, source)) = base.or_else(|| {
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
    let ov = unprefixed(ov, None)?;
    apply(p, source, &ov)
}

/// Several sets combined (the model's §12): each with the flags, `--scale CLASS.NAME=F` on
/// that class's sets alone; the first node set first. Refused where the sets cannot be told
/// apart: two network sets, or node sets of which one lacks its `cores`.
fn resolve_sets(sets: Vec<(Params, Source)>, ov: &Overrides) -> Result<Resolved, Error> {
    let class = |p: &Params| p.class.unwrap_or(Class::Node);
    let network = sets.iter().filter(|(p, _)| class(p) == Class::Network);
    if network.count() > 1 {
        return Err(Error::Params(
            "two parameter sets of class \"network\": give one (the network's, between nodes)"
                .into(),
        ));
    }
    let nodes: Vec<&(Params, Source)> = (sets.iter())
        .filter(|(p, _)| class(p) == Class::Node)
        .collect();
    if nodes.len() > 1
        && let Some((_, s)) = nodes.iter().find(|(p, _)| p.cores.is_none())
    {
        return Err(Error::Params(format!(
            "{} node parameter sets, and the one from {s} has no `cores` figure: a pair of \
             ranks takes the node set whose `cores` lies nearest its own, so each needs one \
             (calibrate writes it)",
            nodes.len()
        )));
    }
    // A flag for a class no set is of would change nothing, silently.
    let prefixed = (ov.set.iter().map(|(n, v)| ("set", n, v)))
        .chain(ov.scale.iter().map(|(n, f)| ("scale", n, f)));
    for (flag, name, v) in prefixed {
        let c = name.split_once('.').and_then(|(c, _)| Class::from_name(c));
        if let Some(c) = c.filter(|&c| !sets.iter().any(|(p, _)| class(p) == c)) {
            return Err(Error::Usage(format!(
                "--{flag} {name}={v}: no parameter set given is of class {}: give its set with \
                 another --params",
                c.name()
            )));
        }
    }
    let first = (sets.iter())
        .position(|(p, _)| class(p) == Class::Node)
        .unwrap_or(0);
    let mut resolved = Vec::with_capacity(sets.len());
    for (p, source) in sets {
        let ov = unprefixed(ov, Some(class(&p)))?;
        resolved.push(apply(p, source, &ov)?);
    }
    let mut primary = resolved.remove(first);
    primary.others = resolved.into_iter().map(|r| r.params).collect();
    Ok(primary)
}

/// `ov` as it applies to a set of class `class` (None: the one set of a run): `--scale
/// CLASS.NAME=F` kept, without its prefix, where CLASS is the set's, left out elsewhere.
fn unprefixed(ov: &Overrides, class: Option<Class>) -> Result<Overrides, Error> {
    let mut out = ov.clone();
    out.scale.clear();
    out.set.clear();
    for (name, v) in &ov.set {
        let bad = || {
            Error::Usage(format!(
                "--set {name}={v}: expected CLASS.NAME=V, CLASS node or network, NAME one of {} {}",
                NAMES.join(" "),
                SPLIT_NAMES.join(" ")
            ))
        };
        let (prefix, param) = name.split_once('.').ok_or_else(bad)?;
        let c = Class::from_name(prefix).ok_or_else(bad)?;
        let bytes = || match *v >= 0.0 && v.fract() == 0.0 && *v < 2f64.powi(63) {
            true => Ok(*v as u64),
            false => Err(Error::Usage(format!(
                "--set {name}={v}: {param} takes whole numbers of bytes ≥ 0"
            ))),
        };
        if !NAMES.contains(&param) && !SPLIT_NAMES.contains(&param) {
            return Err(bad());
        }
        if class.is_none_or(|k| k != c) {
            if class.is_none() && c == Class::Network {
                return Err(Error::Usage(format!(
                    "--set {name}={v}: the run has one parameter set, of no class network; \
                     give the network's set with a second --params"
                )));
            }
            if class.is_some() {
                continue;
            }
        }
        match param {
            "L" => out.L = Some(*v),
            "o" => out.o = Some(*v),
            "Os" => out.Os = Some(*v),
            "Or" => out.Or = Some(*v),
            "Gs" => out.Gs = Some(*v),
            "Gl" => out.Gl = Some(*v),
            "Od" => out.Od = Some(*v),
            "Op" => out.Op = Some(*v),
            "Osd" => out.Osd = Some(*v),
            "s" => out.s = Some(bytes()?),
            _ => out.S = Some(bytes()?),
        }
    }
    for (name, f) in &ov.scale {
        let Some((prefix, name)) = name.split_once('.') else {
            out.scale.push((name.clone(), *f));
            continue;
        };
        let Some(c) = Class::from_name(prefix) else {
            return Err(Error::Usage(format!(
                "--scale {prefix}.{name}={f}: expected the class node or network before the dot"
            )));
        };
        match class {
            None if c == Class::Network => {
                return Err(Error::Usage(format!(
                    "--scale {prefix}.{name}={f}: the run has one parameter set, of no class \
                     network; give the network's set with a second --params"
                )));
            }
            None => out.scale.push((name.to_string(), *f)),
            Some(k) if k == c => out.scale.push((name.to_string(), *f)),
            Some(_) => {}
        }
    }
    Ok(out)
}

/// A base set with the flags applied and checked.
fn apply(mut p: Params, source: Source, ov: &Overrides) -> Result<Resolved, Error> {
    let mut sources: [Source; 8] = std::array::from_fn(|_| source.clone());
    let mut poll_source = source.clone();
    if let Some(v) = ov.poll {
        (p.poll, poll_source) = (Some(v), Source::Flag);
    }
    let mut gamma_source = source.clone();
    if let Some(v) = ov.gamma {
        let g = flag_by_size(SizeParam::Gamma, v)?;
        (p.gamma, gamma_source) = (Some(g), Source::Flag);
    }
    let mut oc_source = source.clone();
    if let Some(v) = ov.oc {
        (p.oc, oc_source) = (Some(v), Source::Flag);
    }
    let mut copy_source = source.clone();
    if let Some(v) = ov.copy {
        let c = flag_by_size(SizeParam::Copy, v)?;
        (p.copy, copy_source) = (Some(c), Source::Flag);
    }
    if let Some(calls) = ov.progress_at_calls {
        p.progress_at_calls = calls;
    }
    if let Some(f) = ov.rendezvous_sender {
        p.rendezvous_sender = Some(flag_by_size(SizeParam::RendezvousSender, f)?);
    }
    let mut bounce_source = source.clone();
    if let Some(v) = ov.bounce {
        let b = flag_by_size(SizeParam::Bounce, v)?;
        (p.bounce, bounce_source) = (Some(b), Source::Flag);
        // --bounce alone costs clean messages' too
        p.bounce_clean = None;
    }
    let mut bounce_clean_source = source.clone();
    if let Some(v) = ov.bounce_clean {
        let b = flag_by_size(SizeParam::BounceClean, v)?;
        (p.bounce_clean, bounce_clean_source) = (Some(b), Source::Flag);
    }
    // `--clean` is every clean message's share, one way or not, unless `--clean-oneway` says
    // the one-way messages'.
    let (mut clean_source, mut clean_oneway_source) = (source.clone(), source.clone());
    if let Some(v) = ov.clean {
        let c = flag_by_size(SizeParam::Clean, v)?;
        (p.clean, clean_source) = (Some(c), Source::Flag);
        p.clean_oneway = None;
    }
    if let Some(v) = ov.clean_oneway {
        let c = flag_by_size(SizeParam::CleanOneway, v)?;
        (p.clean_oneway, clean_oneway_source) = (Some(c), Source::Flag);
    }
    let mut departs_source = source.clone();
    if let Some(d) = ov.departs_upto {
        (p.departs_upto, departs_source) = (Some(d), Source::Flag);
    }
    let mut post_source = source.clone();
    if let Some(v) = ov.post {
        (p.post, post_source) = (Some(v), Source::Flag);
    }
    let mut wait_source = source.clone();
    if let Some(v) = ov.wait {
        (p.wait, wait_source) = (Some(v), Source::Flag);
    }
    let mut held_source = source.clone();
    if let Some(v) = ov.held {
        (p.held, held_source) = (Some(v), Source::Flag);
    }
    let mut held_reduce_source = source.clone();
    if let Some(v) = ov.held_reduce {
        (p.held_reduce, held_reduce_source) = (Some(v), Source::Flag);
    }
    let mut alloc_source = source.clone();
    if let Some(v) = ov.alloc {
        (p.alloc, alloc_source) = (Some(v), Source::Flag);
    }
    let mut alias_source = source.clone();
    if let Some(v) = ov.alias {
        (p.alias, alias_source) = (Some(v), Source::Flag);
    }
    let mut drained_source = source.clone();
    if let Some(v) = ov.drained {
        let d = flag_by_size(SizeParam::Drained, v)?;
        (p.drained, drained_source) = (Some(d), Source::Flag);
    }
    let mut split_sources = [source.clone(), source.clone(), source.clone()];
    for (j, v) in [ov.Od, ov.Op, ov.Osd].into_iter().enumerate() {
        if let Some(v) = v {
            p = p
                .in_bands()
                .with_bands(|b| b.set(SPLIT_NAMES[j], v))
                .map_err(Error::Params)?;
            split_sources[j] = Source::Flag;
        }
    }
    match p.bands {
        None => {
            macro_rules! apply {
                ($($i:literal $f:ident),*) => {$(
                    if let Some(v) = ov.$f { p.$f = v; sources[$i] = Source::Flag; }
                )*};
            }
            apply!(0 L, 1 o, 2 Os, 3 Or, 4 Gs, 5 Gl, 6 s, 7 S);
        }
        Some(_) => p = override_bands(p, ov, &mut sources)?,
    }
    for (name, f) in &ov.scale {
        p = scale(p, name, *f)?;
        let scaled = match name.as_str() {
            "all" => &SCALE_ALL[..],
            "rendezvous" => &SCALE_RENDEZVOUS[..],
            name => &[name][..],
        };
        // Each parameter scaled now comes from the flag (`G`: `Gs` and `Gl`).
        for n in scaled.iter().flat_map(|n| match *n {
            "G" => &["Gs", "Gl"][..],
            _ => std::slice::from_ref(n),
        }) {
            let n: &str = n;
            match n {
                "copy" => copy_source = Source::Flag,
                "oc" => oc_source = Source::Flag,
                "gamma" => gamma_source = Source::Flag,
                n => match SPLIT_NAMES.iter().position(|&s| s == n) {
                    Some(j) => split_sources[j] = Source::Flag,
                    None => {
                        if let Some(i) = NAMES.iter().position(|&m| m == n) {
                            sources[i] = Source::Flag;
                        }
                    }
                },
            }
        }
    }
    for (name, v) in [
        ("L", p.L),
        ("o", p.o),
        ("Os", p.Os),
        ("Or", p.Or),
        ("Gs", p.Gs),
        ("Gl", p.Gl),
        ("poll", p.poll.unwrap_or(0.0)),
        ("oc", p.oc.unwrap_or(0.0)),
        ("post", p.post.unwrap_or(0.0)),
        ("wait", p.wait.unwrap_or(0.0)),
        ("held", p.held.unwrap_or(0.0)),
        ("held_reduce", p.held_reduce.unwrap_or(0.0)),
        ("alloc", p.alloc.unwrap_or(0.0)),
        ("alias", p.alias.unwrap_or(0.0)),
    ] {
        if !v.is_finite() {
            return Err(Error::Params(format!(
                "parameter {name} = {v} is not a finite number"
            )));
        }
    }
    if let Some(why) = p.invalid() {
        return Err(Error::Params(format!("invalid parameters: {why}")));
    }
    if p.poll.is_some_and(|v| v < 0.0) {
        return Err(Error::Params(format!(
            "parameter poll = {} is negative: a failed poll costs 0 ns or more",
            p.poll.unwrap_or(0.0)
        )));
    }
    // (`gamma` and `copy` are checked as they are made: [`BySize`])
    if let Some(why) = post_invalid(p.post)
        .or_else(|| wait_invalid(p.wait))
        .or_else(|| held_invalid(p.held))
        .or_else(|| held_reduce_invalid(p.held_reduce))
        .or_else(|| alloc_invalid(p.alloc))
        .or_else(|| alias_invalid(p.alias))
        .or_else(|| oc_invalid(p.oc))
        .or_else(|| cores_invalid(p.cores))
    {
        return Err(Error::Params(why));
    }
    Ok(Resolved {
        params: p,
        sources,
        poll_source,
        gamma_source,
        oc_source,
        copy_source,
        bounce_source,
        bounce_clean_source,
        clean_source,
        clean_oneway_source,
        departs_source,
        post_source,
        wait_source,
        held_source,
        held_reduce_source,
        alloc_source,
        alias_source,
        drained_source,
        split_sources,
        others: Vec::new(),
    })
}

/// A by-size parameter's flag (`--gamma`, `--bounce-clean`, …) at one value for every size,
/// or the error naming the flag.
fn flag_by_size(param: SizeParam, v: f64) -> Result<BySize, Error> {
    BySize::one(param, v)
        .map_err(|why| Error::Params(format!("--{}: {why}", param.name().replace('_', "-"))))
}

/// Why a reduction cost cannot be used: a negative one would make reducing save time.
fn gamma_invalid(gamma: Option<f64>) -> Option<String> {
    gamma
        .filter(|v| !(v.is_finite() && *v >= 0.0))
        .map(|v| format!("parameter gamma = {v} must be a finite number ≥ 0 (ns per byte reduced)"))
}

/// Why a calibration's cores figure cannot be one (see `Params::cores`).
pub fn cores_invalid(cores: Option<f64>) -> Option<String> {
    cores.filter(|v| !(v.is_finite() && *v > 0.0)).map(|v| {
        format!("cores = {v} must be a time > 0 ns (a cache line's round trip between two cores)")
    })
}

/// Which of the sets' `cores` figures (`Params::cores`, one a set, None where a set has none)
/// lies nearest a pair's or a launch's `figure` by ratio, `|ln(figure / cores)|` (§12): its
/// index, the first of several as near, a set without one farthest; None where there are none.
pub fn nearest_cores(figure: f64, cores: impl IntoIterator<Item = Option<f64>>) -> Option<usize> {
    let distance = |c: Option<f64>| c.map_or(f64::INFINITY, |c| (figure / c).ln().abs());
    (cores.into_iter().map(distance).enumerate())
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// Why a collective call's cost cannot be used: a negative one would make a call save time.
fn oc_invalid(oc: Option<f64>) -> Option<String> {
    oc.filter(|v| !(v.is_finite() && *v >= 0.0))
        .map(|v| format!("parameter oc = {v} must be a finite number ≥ 0 (ns a collective call)"))
}

/// A set in bands with the command line's absolute values: `--L`, `--o`, `--Os`, `--Or` set
/// in every band, `--S` moved; the paper's `--Gs`, `--Gl`, `--s` have no meaning there.
fn override_bands(p: Params, ov: &Overrides, sources: &mut [Source; 8]) -> Result<Params, Error> {
    let paper_only = [
        ("--Gs", ov.Gs),
        ("--Gl", ov.Gl),
        ("--s", ov.s.map(|v| v as f64)),
    ];
    if let Some((flag, _)) = paper_only.iter().find(|(_, v)| v.is_some()) {
        return Err(Error::Usage(format!(
            "{flag} is a parameter of the paper's form; these parameters are in bands, each with its own G: use --scale G=F (or --L --o --Os --Or, set in every band)"
        )));
    }
    let mut p = p;
    for (i, name, v) in [
        (0, "L", ov.L),
        (1, "o", ov.o),
        (2, "Os", ov.Os),
        (3, "Or", ov.Or),
    ] {
        if let Some(v) = v {
            p = p.with_bands(|b| b.set(name, v)).map_err(Error::Params)?;
            sources[i] = Source::Flag;
        }
    }
    if let Some(S) = ov.S {
        (p.S, sources[7]) = (S, Source::Flag);
    }
    Ok(p)
}

/// LogGP parameters from the command line (`None`: not given).
#[derive(Clone, Copy, Debug, Default)]
pub struct LogGpFlags {
    pub L: Option<f64>,
    pub o: Option<f64>,
    pub g: Option<f64>,
    pub G: Option<f64>,
    /// Reduction arithmetic, ns/byte (`--gamma`).
    pub gamma: Option<f64>,
}

/// LogGP parameters with where each came from, in [`LOGGP_NAMES`] order.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedLogGp {
    pub model: LogGp,
    pub sources: [Source; 4],
    /// Reduction arithmetic, ns/byte, and where it came from (as LogGPS's `gamma`).
    pub gamma: Option<(f64, Source)>,
}

/// Chooses LogGP's parameters: each from its flag, else `L`, `o` and `G = Gs` from the LogGPS
/// parameters [`resolve`] picks (`file`, else `platform`, else `embedded`), else `o`, `g` and `G`
/// are 0. `g` has no LogGPS counterpart (LogGPS disregards it); `L` has no default.
pub fn resolve_loggp(
    files: &[std::path::PathBuf],
    platform: Option<&str>,
    embedded: &[Params],
    flags: &LogGpFlags,
) -> Result<ResolvedLogGp, Error> {
    let base = if !files.is_empty() || platform.is_some() || !embedded.is_empty() {
        Some(resolve(files, platform, embedded, &Overrides::default())?)
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
    for (name, v) in LOGGP_NAMES.iter().zip([L, o, g, G]) {
        if !v.is_finite() || v < 0.0 {
            return Err(Error::Params(format!(
                "LogGP parameter {name} = {v} must be a finite number ≥ 0"
            )));
        }
    }
    let gamma = match (flags.gamma, &base) {
        (Some(v), _) => Some((v, Source::Flag)),
        // (a set's by size: its smallest size's, LogGP taking one rate)
        (None, Some(b)) => b.params.gamma.map(|v| (v.first(), b.gamma_source.clone())),
        (None, None) => None,
    };
    if let Some(why) = gamma_invalid(gamma.as_ref().map(|g| g.0)) {
        return Err(Error::Params(why));
    }
    let model = LogGp {
        L,
        o,
        g,
        G,
        gamma: gamma.as_ref().map_or(0.0, |g| g.0),
    };
    Ok(ResolvedLogGp {
        model,
        sources: [L_source, o_source, g_source, G_source],
        gamma,
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
    pub fn params(&self) -> Vec<(String, f64, &Source)> {
        match self {
            ResolvedModel::LogGps(r) => r.iter().collect(),
            ResolvedModel::LogGp(r) => {
                let m = &r.model;
                let gamma = r.gamma.iter().map(|(v, s)| ("gamma".to_string(), *v, s));
                LOGGP_NAMES
                    .into_iter()
                    .zip([m.L, m.o, m.g, m.G])
                    .zip(&r.sources)
                    .map(|((n, v), s)| (n.to_string(), v, s))
                    .chain(gamma)
                    .collect()
            }
        }
    }

    /// What reducing one byte of a `k`-byte vector costs in modeled collectives, ns (0 where
    /// no `gamma` is set).
    pub fn gamma(&self, k: u64) -> f64 {
        self.model().gamma(k)
    }

    /// Where the LogGPS parameters were measured ([`Params::cores`]), if they say.
    pub fn cores(&self) -> Option<f64> {
        match self {
            ResolvedModel::LogGps(r) => r.params.cores,
            ResolvedModel::LogGp(_) => None,
        }
    }
}

mod file;
pub use file::{
    alias_invalid, alloc_invalid, held_invalid, held_reduce_invalid, param_sets_toml, params_toml,
    parse_param_sets, parse_params_toml, parse_progress, post_invalid, read_param_sets,
    read_params_file, wait_invalid,
};

#[cfg(test)]
mod tests;
