//! `loggps-predict sensitivity TRACE`: what each LogGPS parameter is worth to the predicted
//! runtime, by replays of the trace matched once ([`loggps_predict::sensitivity`]).

use super::args::{InfoFormat, ModelKind, ReplayArgs};
use super::progress::Progress;
use super::{load_then, quiet_pipe, to_stdout, warn};
use clap::Args;
use loggps_predict::collectives::traced::Choice;
use loggps_predict::error::Error;
use loggps_predict::model::Params;
use loggps_predict::model::ResolvedModel;
use loggps_predict::replay::Remap;
use loggps_predict::sensitivity::{
    Added, BestS, Derivative, Replayer, Tolerance, best_s, derivatives, message_sizes, set_prefix,
    tolerance,
};
use loggps_predict::trace;
use serde::Serialize;
use std::io::Write;

#[derive(Args, Debug)]
pub struct SensitivityArgs {
    #[command(flatten)]
    pub replay: ReplayArgs,
    /// The range the best eager limit S is looked for in, bytes (default: 0 to the trace's
    /// largest message)
    #[arg(long = "S-range", value_name = "LO:HI")]
    pub s_range: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = InfoFormat::Table)]
    pub format: InfoFormat,
}

/// The rises in runtime each tolerance is found for, percent.
const RISES: [f64; 2] = [1.0, 5.0];

#[derive(Serialize)]
struct Sensitivity {
    trace: String,
    predicted_s: f64,
    parameters: Vec<Derivative>,
    tolerances: Vec<Tolerance>,
    best_s: Option<BestS>,
    /// Where `S` does not matter, why (no point-to-point message; every `S` tried predicts the
    /// same runtime): the table says so instead of naming a best.
    s_matters_not: Option<String>,
    /// The critical path's time whose cost no rule gave again (none on the traces tested): its
    /// derivatives leave it out, seconds.
    critical_path_unread_s: f64,
    /// The eager limit of the parameters.
    s: u64,
    replays: u32,
}

/// `LO:HI` of `--S-range`.
fn parse_range(s: &str) -> Result<(u64, u64), Error> {
    let bad = || {
        Error::Usage(format!(
            "--S-range {s}: expected LO:HI in bytes, LO ≤ HI (e.g. 0:65536)"
        ))
    };
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let (a, b): (u64, u64) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    match a <= b {
        true => Ok((a, b)),
        false => Err(bad()),
    }
}

pub(super) fn sensitivity(a: &SensitivityArgs) -> Result<(), Error> {
    if a.replay.model.model == ModelKind::Loggp {
        return Err(Error::Usage(
            "sensitivity covers LogGPS's parameters; leave out --model loggp".into(),
        ));
    }
    let coll = Choice::parse(&a.replay.coll)?;
    let range = a.s_range.as_deref().map(parse_range).transpose()?;
    let trace = load_then(&a.replay.trace, trace::Then::PREDICT)?;
    let (resolved, speed) = super::replay_model(&trace, &a.replay)?;
    let links = super::args::links_for(&resolved, &trace, &Remap::Traced, None)?;
    speed.into_iter().for_each(warn);
    let ResolvedModel::LogGps(resolved) = resolved else {
        unreachable!("LogGPS, checked above")
    };
    let sets: Vec<Params> = match &links {
        Some(l) => l.sets.clone(),
        None => vec![resolved.params],
    };
    super::warn_oversubscribed(&trace);
    match &links {
        None => drop(super::warn_placement(&trace, resolved.params.cores)),
        Some(l) => l.warnings.iter().cloned().for_each(warn),
    }
    let name = a.replay.trace.display().to_string();
    let graph = loggps_predict::graph::build(&trace, &name)?;
    let bar = Progress::new("sensitivity", None);
    let label = |what: &str| bar.label(&format!("replaying with {what}"));
    let rp = Replayer {
        trace: &trace,
        graph: &graph,
        coll: &coll,
        file: &name,
        links: links.as_ref(),
        progress: &label,
        replays: Default::default(),
    };
    let (t0, path) = rp.critical(&sets)?;
    let unread: f64 = path
        .derivative(&sets, loggps_predict::sensitivity::Knob::Gamma)
        .1;
    let parameters = derivatives(&rp, &sets, t0, &path)?;
    let mut tolerances = Vec::new();
    for j in 0..sets.len() {
        let prefix = set_prefix(&sets, j);
        for what in Added::ALL {
            // The derivative of the quantity added to every band: the sum of the bands' own.
            let slope: f64 = (parameters.iter())
                .filter_map(|d| Some((d.name.strip_prefix(&prefix)?, d.ns_per_unit)))
                .filter(|(name, _)| match what {
                    Added::G => matches!(name.rsplit('.').next(), Some("G" | "Gs" | "Gl")),
                    _ => name.rsplit('.').next() == Some(what.name()),
                })
                .map(|(_, d)| d)
                .sum();
            for rise in RISES {
                tolerances.push(tolerance(&rp, &sets, j, t0, what, slope, rise)?);
            }
        }
    }
    let sizes = message_sizes(&trace);
    let (lo, hi) = range.unwrap_or((0, sizes.last().copied().unwrap_or(0)));
    let mut s_matters_not = None;
    let best = match sizes.is_empty() {
        true => {
            let why = "the trace has no point-to-point message: the eager limit changes nothing";
            warn(why.into());
            s_matters_not = Some(why.to_string());
            None
        }
        false => match best_s(&rp, &sets, &sizes, lo, hi) {
            Ok(b) => Some(b),
            Err(e) => {
                warn(e.to_string());
                None
            }
        },
    };
    bar.finish();
    // Every S tried within a ten-thousandth of one another: none is best.
    if let Some(b) = &best {
        let (lo_t, hi_t) = (b.tried.iter()).fold((f64::INFINITY, 0f64), |(l, h), (_, t)| {
            (l.min(*t), h.max(*t))
        });
        if b.tried.len() > 1 && hi_t - lo_t <= 1e-4 * hi_t {
            s_matters_not = Some(format!(
                "S does not matter here: the {} values of S replayed in {}–{} B all predict {:.6} s",
                b.tried.len(),
                b.lo,
                b.hi,
                hi_t * 1e-9
            ));
        }
    }
    let s = Sensitivity {
        trace: name.clone(),
        predicted_s: t0 * 1e-9,
        parameters,
        tolerances,
        best_s: best,
        s_matters_not,
        critical_path_unread_s: unread * 1e-9,
        s: sets[0].S,
        replays: rp.replays.get(),
    };
    let res = to_stdout(|out| match a.format {
        InfoFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &s).map_err(std::io::Error::other)?;
            writeln!(out)
        }
        InfoFormat::Table => table(&s, out),
    });
    quiet_pipe(res, "writing the report")
}

fn table(s: &Sensitivity, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "trace      {}", s.trace)?;
    writeln!(
        out,
        "predicted  {:.6} s ({} replays)",
        s.predicted_s, s.replays
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:<10} {:>14} {:>6}  {:>18} {:>18} {:>11}",
        "parameter", "value", "unit", "d runtime (ns/unit)", "critical path", "elasticity"
    )?;
    for d in &s.parameters {
        writeln!(
            out,
            "{:<10} {:>14.6} {:>6}  {:>18.6} {:>18.6} {:>11.5}{}{}",
            d.name,
            d.value,
            d.unit,
            d.ns_per_unit,
            d.from_critical_path,
            d.elasticity,
            match d.difference {
                "forward" => "  (forward: it may not go below 0)",
                "backward" => "  (backward: it is at its upper bound)",
                "pinned" => "  (pinned: its bounds meet, so it cannot move either way)",
                _ => "",
            },
            match (d.left_ns_per_unit, d.right_ns_per_unit) {
                (Some(l), Some(r)) if (l - r).abs() > 1e-6 * l.abs().max(1.0) =>
                    format!("  (a kink: {l:.6} below, {r:.6} above; the path's is along itself)"),
                _ => String::new(),
            }
        )?;
    }
    writeln!(
        out,
        "(d runtime: by replays at nearby values; critical path: read off it, its segments' costs by their rules{}; elasticity: the runtime's change in % for 1% more of it)",
        match s.critical_path_unread_s {
            x if x > 0.0 => format!(", {x:.6} s of it untold (calls no rule gave again)"),
            _ => String::new(),
        }
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "tolerance  how much can be added (in every band) before the runtime rises by"
    )?;
    let mut names: Vec<&str> = s.tolerances.iter().map(|t| t.name.as_str()).collect();
    names.dedup();
    for name in names {
        let cell = |t: &Tolerance| match t.added {
            Some(x) => format!("{x:.6} {}", t.unit),
            None => "any: it does not matter".to_string(),
        };
        let cells: Vec<String> = (s.tolerances.iter())
            .filter(|t| t.name == name)
            .map(|t| format!("{}%: {}", t.rise_pct, cell(t)))
            .collect();
        writeln!(out, "{name:<10} {}", cells.join("   "))?;
    }
    if let Some(why) = &s.s_matters_not {
        writeln!(out)?;
        writeln!(out, "best S     none: {why}")?;
    } else if let Some(b) = &s.best_s {
        writeln!(out)?;
        // The candidate that predicts as the set's own S: the largest at or below it.
        let now = b
            .tried
            .iter()
            .filter(|(x, _)| *x <= s.s)
            .max_by_key(|(x, _)| *x)
            .filter(|_| (b.lo..=b.hi).contains(&s.s));
        writeln!(
            out,
            "best S     {} B: {:.6} s ({} of the {} message sizes in {}–{} B replayed{})",
            b.best,
            b.best_ns * 1e-9,
            b.tried.len(),
            b.candidates,
            b.lo,
            b.hi,
            match now {
                Some((_, t)) if (t - b.best_ns).abs() <= 1e-4 * t => format!(
                    "; the set's S = {} predicts the same: no S predicts a shorter run",
                    s.s
                ),
                Some((_, t)) => format!("; the set's S = {}: {:.6} s", s.s, t * 1e-9),
                None => String::new(),
            }
        )?;
        if let Some((x, why)) = b.failed.first() {
            writeln!(
                out,
                "{:<10} {} value(s) of S could not be replayed, the smallest {x}: {why}",
                "",
                b.failed.len()
            )?;
        }
    }
    Ok(())
}
