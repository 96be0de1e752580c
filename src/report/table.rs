//! The report as a human-readable table (the paper's Fig. 6 per rank, and the average).

use super::{Exporter, ParamUsed, Parts, Report, indexmap_like::Ordered};
use std::io::{self, Write};

pub struct Table;

fn row(out: &mut dyn Write, label: &str, p: &Parts) -> io::Result<()> {
    let pct = |v: f64| {
        if p.end_s > 0.0 {
            100.0 * v / p.end_s
        } else {
            0.0
        }
    };
    write!(out, "{label:>8} {:>12.6}", p.end_s)?;
    for v in [
        p.computation_s,
        p.communication_s,
        p.sender_sync_s,
        p.receiver_sync_s,
    ] {
        write!(out, " {v:>11.6} {:>5.1}%", pct(v))?;
    }
    writeln!(out)
}

/// The trace's line (ranks, events, the first line of its MPI library's name) and the model's.
pub(super) fn header(
    out: &mut dyn Write,
    trace: &str,
    ranks: usize,
    events: u64,
    library: &str,
    model: &str,
) -> io::Result<()> {
    let library = match library.lines().next() {
        Some(l) if !l.is_empty() => format!(", {l}"),
        _ => String::new(),
    };
    writeln!(
        out,
        "trace      {trace} ({ranks} ranks, {events} events{library})"
    )?;
    writeln!(out, "model      {model}")
}

/// The parameters' values on one line, and on the next where each came from (`also`: one more
/// such part, e.g. the parameter a sweep varies).
/// `(band, name)` of a banded set's parameter name (`b1.o`).
fn in_band(n: &str) -> Option<(&str, &str)> {
    n.split_once('.').filter(|(b, _)| b.starts_with('b'))
}

pub(super) fn parameters(
    out: &mut dyn Write,
    params: &Ordered<ParamUsed>,
    also: Option<&str>,
) -> io::Result<()> {
    // A set in bands: `b1.o`, … as a table of bands, a row each.
    let values: Vec<String> = (params.0.iter())
        .filter(|(n, _)| in_band(n).is_none())
        .map(|(n, p)| match p.value {
            // A calibrated gamma to four decimals, as a band's per-byte terms (at a size too:
            // `gamma@16384`).
            v if matches!(n.split('@').next(), Some("gamma" | "bounce")) && v >= 1e-3 => {
                format!("{n}={v:.4}")
            }
            // A calibrated collective call's cost to a tenth of a nanosecond, as a band's `o`.
            v if n == "oc" && v.fract() != 0.0 => format!("{n}={v:.1}"),
            v => format!("{n}={v}"),
        })
        .collect();
    writeln!(out, "parameters {}", values.join(" "))?;
    let mut rows: Vec<(&str, Vec<(&str, f64)>)> = Vec::new();
    for (n, p) in &params.0 {
        if let Some((band, name)) = in_band(n) {
            match rows.last_mut() {
                Some((b, cells)) if *b == band => cells.push((name, p.value)),
                _ => rows.push((band, vec![(name, p.value)])),
            }
        }
    }
    let mut lo = 0.0;
    for (k, (_, cells)) in rows.iter().enumerate() {
        let get = |name: &str| cells.iter().find(|(n, _)| *n == name).map(|c| c.1);
        let hi = get("hi").map_or("∞".to_string(), |h| h.to_string());
        let cols: Vec<String> = ["o", "L", "Os", "Or", "G"]
            .iter()
            .map(|&n| match get(n).unwrap_or(f64::NAN) {
                // ns to a tenth, ns per byte to four decimals: what a measurement can tell.
                v if n == "o" || n == "L" => format!("{n}={v:.1}"),
                v => format!("{n}={v:.4}"),
            })
            .collect();
        // A first band of the zero-byte messages alone: `0 B`.
        let bytes = match hi.as_str() {
            "0" => "0 B".to_string(),
            _ => format!("{lo}–{hi} B"),
        };
        writeln!(out, "  band {} {bytes:>16}  {}", k + 1, cols.join(" "))?;
        lo = get("hi").unwrap_or(f64::INFINITY);
    }
    let mut sources: Vec<(String, Vec<&str>)> = Vec::new();
    for (n, p) in &params.0 {
        // A band's parameter by its name alone: a flag sets it in every band.
        let (n, source) = match in_band(n) {
            Some((_, name)) if p.source == "flag" => (name, "flag, in every band".to_string()),
            Some((_, name)) => (name, p.source.clone()),
            None => (n.as_str(), p.source.clone()),
        };
        match sources.iter_mut().find(|(s, _)| *s == source) {
            Some((_, names)) if names.contains(&n) => {}
            Some((_, names)) => names.push(n),
            None => sources.push((source, vec![n])),
        }
    }
    let from: Vec<String> = (sources.iter())
        .map(|(s, n)| format!("{} from {s}", n.join(" ")))
        .chain(also.map(str::to_string))
        .collect();
    writeln!(out, "           ({})", from.join("; "))
}

impl Exporter for Table {
    fn write(&self, r: &Report, out: &mut dyn Write) -> io::Result<()> {
        let model = super::model_line(&r.model, r.progress, r.rendezvous_sender);
        header(out, &r.trace, r.ranks.len(), r.events, &r.library, &model)?;
        parameters(out, &r.params, None)?;
        writeln!(out)?;
        writeln!(out, "predicted  {:.6} s", r.predicted_s)?;
        writeln!(out, "measured   {:.6} s", r.measured_s)?;
        if r.measured_s > 0.0 {
            writeln!(out, "error      {:+.2} %", r.error_pct)?;
        } else {
            writeln!(out, "error      none: nothing was measured")?;
        }
        match r.tracer_removed_s {
            Some(t) if t > 0.0 => writeln!(
                out,
                "tracer     {t:.6} s a rank taken out of the measured computation (its own time per record, by routine as it sampled them during the run, else as timed at MPI_Init; --keep-tracer-time keeps it)"
            )?,
            Some(t) => writeln!(
                out,
                "tracer     {:.6} s a rank added to the measured computation (its time inside each call, timed at MPI_Init: the traced run's)",
                -t
            )?,
            None => {}
        }
        run_speed(out, &r.at_run_speed, "")?;
        writeln!(out)?;
        writeln!(
            out,
            "{:>8} {:>12} {:>18} {:>18} {:>18} {:>18}",
            "rank", "end (s)", "computation", "communication", "sender sync", "receiver sync"
        )?;
        for row_ in r.ranks.iter().take(r.max_rows) {
            row(out, &row_.rank.to_string(), &row_.parts)?;
        }
        if r.ranks.len() > r.max_rows {
            writeln!(
                out,
                "{:>8} ({} more ranks not shown; --format csv or json lists every rank)",
                "…",
                r.ranks.len() - r.max_rows
            )?;
        }
        row(out, "average", &r.average)?;
        if !r.collectives_s.0.is_empty() {
            writeln!(out, "\ncollectives (time per rank, averaged over ranks)")?;
            for (name, t) in &r.collectives_s.0 {
                writeln!(out, "{:>8} {name:<26} {t:>12.6} s", "")?;
            }
        }
        if let Some(l) = &r.links {
            links(out, l, r.max_rows)?;
        }
        if let Some(c) = &r.critical_path {
            critical_path(out, c)?;
        }
        if let Some(c) = &r.calls {
            calls(out, c, r.max_rows)?;
        }
        Ok(())
    }
}

/// The calls by routine and size class (the first `max_rows`, the most measured time first).
fn calls(out: &mut dyn Write, rows: &[super::calls::CallRow], max_rows: usize) -> io::Result<()> {
    writeln!(
        out,
        "
calls by routine and message size, predicted against measured (summed over ranks)"
    )?;
    writeln!(
        out,
        "{:<22} {:>21} {:>10} {:>12} {:>12} {:>9} {:>11} {:>11}",
        "routine",
        "bytes",
        "calls",
        "measured s",
        "predicted s",
        "pred/meas",
        "measured µs",
        "predicted µs"
    )?;
    for c in rows.iter().take(max_rows) {
        let per = |t: f64| 1e6 * t / c.calls.max(1) as f64;
        writeln!(
            out,
            "{:<22} {:>21} {:>10} {:>12.6} {:>12.6} {:>9} {:>11.2} {:>11.2}",
            c.routine,
            format!("{}–{}", c.bytes_from, c.bytes_to),
            c.calls,
            c.measured_s,
            c.predicted_s,
            c.ratio.map_or("–".into(), |r| format!("{r:.2}")),
            per(c.measured_s),
            per(c.predicted_s)
        )?;
    }
    if rows.len() > max_rows {
        writeln!(
            out,
            "{} more row(s) in the JSON format (--format json)",
            rows.len() - max_rows
        )?;
    }
    Ok(())
}

/// The parameter sets per link class, and each rank's bytes by set.
fn links(out: &mut dyn Write, l: &super::LinksReport, max_rows: usize) -> io::Result<()> {
    writeln!(out, "\nlink classes ({} node(s))", l.nodes)?;
    for (j, s) in l.sets.iter().enumerate() {
        let cores = s
            .cores_ns
            .map_or(String::new(), |c| format!(", cores {c:.0} ns"));
        writeln!(
            out,
            "{:>8} set {}: {}{cores}, S {} B, o {:.1} ns, L {:.1} ns{}",
            "",
            j + 1,
            s.class,
            s.S,
            s.o_ns,
            s.L_ns,
            super::sender_words(s.rendezvous_sender)
        )?;
    }
    let names: Vec<String> = (1..=l.sets.len()).map(|j| format!("set {j}")).collect();
    writeln!(
        out,
        "{:>8} bytes sent by set (%): {}",
        "rank",
        names.join(" / ")
    )?;
    for (r, by) in l.bytes_pct_by_rank.iter().enumerate().take(max_rows) {
        let v: Vec<String> = by.iter().map(|p| format!("{p:.1}")).collect();
        writeln!(out, "{r:>8} {}", v.join(" / "))?;
    }
    Ok(())
}

/// The critical path's section: its parts, then its time by routine, by rank and by call site
/// (the first `CRITICAL_ROWS` of each, most first).
fn critical_path(out: &mut dyn Write, c: &super::CriticalPathReport) -> io::Result<()> {
    let share = |t: f64| 100.0 * t / c.length_s.max(f64::MIN_POSITIVE);
    writeln!(
        out,
        "\ncritical path  {:.6} s, {} jump(s) to a partner a call waited for: computation {:.1}%, communication {:.1}%, sender sync {:.1}%, receiver sync {:.1}%",
        c.length_s,
        c.jumps,
        share(c.computation_s),
        share(c.communication_s),
        share(c.sender_sync_s),
        share(c.receiver_sync_s)
    )?;
    for (name, t) in c.by_routine.0.iter().take(CRITICAL_ROWS) {
        writeln!(out, "{:>8} {name:<26} {t:>12.6} s {:>6.1}%", "", share(*t))?;
    }
    let mut ranks: Vec<&super::RankTime> = c.by_rank.iter().collect();
    ranks.sort_by(|a, b| b.time_s.total_cmp(&a.time_s).then(a.rank.cmp(&b.rank)));
    for x in ranks.iter().take(CRITICAL_ROWS) {
        let rank = format!("rank {}", x.rank);
        writeln!(
            out,
            "{:>8} {rank:<26} {:>12.6} s {:>6.1}%",
            "",
            x.time_s,
            share(x.time_s)
        )?;
    }
    for (site, t) in c.by_call_site.0.iter().take(CRITICAL_ROWS) {
        writeln!(out, "{:>8} {site:<26} {t:>12.6} s {:>6.1}%", "", share(*t))?;
    }
    let more = c.by_routine.0.len().saturating_sub(CRITICAL_ROWS)
        + ranks.len().saturating_sub(CRITICAL_ROWS)
        + c.by_call_site.0.len().saturating_sub(CRITICAL_ROWS);
    if more > 0 {
        writeln!(
            out,
            "{:>8} ({more} more rows: --format json lists them all)",
            "…"
        )?;
    }
    Ok(())
}

/// Rows of routines and of ranks the table shows of the critical path.
const CRITICAL_ROWS: usize = 10;

/// The line naming each set scaled to the run's message speed (`--at-run-speed`), if any: `of`
/// says what was predicted so ("every value " in a sweep).
pub(super) fn run_speed(out: &mut dyn Write, said: &[String], of: &str) -> io::Result<()> {
    if said.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "speed      {of}at the run's message speed (--at-run-speed): {}",
        said.join(", ")
    )
}
