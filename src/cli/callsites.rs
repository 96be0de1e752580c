//! `loggps-predict callsites TRACE`: the lines of the program whose MPI calls cost the most
//! synchronization and communication in the predicted run ([`loggps_predict::callsites`]).

use super::args::ReplayArgs;
use super::progress::Progress;
use super::{json_to, load_then, quiet_pipe, to_stdout, warn};
use clap::Args;
use loggps_predict::callsites::{Cost, Row, SortKey, Symbolizer, Tally};
use loggps_predict::collectives::traced::Choice;
use loggps_predict::error::Error;
use loggps_predict::replay::Remap;
use loggps_predict::report::Format;
use loggps_predict::trace;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CallsitesArgs {
    #[command(flatten)]
    pub replay: ReplayArgs,
    /// What the sites are ranked by
    #[arg(long, value_enum, default_value_t = SortKey::Sync)]
    pub sort: SortKey,
    /// How many sites the table shows (0: all; JSON and CSV always have all)
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// A folder to look for the traced program and libraries in, by file name, where they are
    /// not at their recorded paths, and for debug files by build id (DIR/.build-id/ab/cdef….debug,
    /// as /usr/lib/debug holds them); repeatable
    #[arg(long, value_name = "DIR")]
    pub search: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Serialize)]
struct Callsites<'a> {
    trace: String,
    predicted_s: f64,
    sorted_by: String,
    sites: &'a [Row],
    /// The calls whose site was not recorded.
    unknown_calls: u64,
}

pub(super) fn callsites(a: &CallsitesArgs) -> Result<(), Error> {
    let coll = Choice::parse(&a.replay.coll)?;
    let trace = load_then(&a.replay.trace, trace::Then::PREDICT)?;
    let name = a.replay.trace.display().to_string();
    let Some(sites) = trace.sites.as_ref().filter(|s| s.any()) else {
        return Err(Error::Usage(format!(
            "{name} has no call sites: record it again with loggps-trace (without \
             LOGGPS_TRACE_SITES=0); of other tools' traces, Paraver's with Extrae's caller events \
             and OTF2's with Score-P's program regions or calling contexts have them"
        )));
    };
    let (resolved, speed) = super::replay_model(&trace, &a.replay)?;
    let links = super::args::links_for(&resolved, &trace, &Remap::Traced, None)?;
    super::warn_oversubscribed(&trace);
    match &links {
        None => drop(super::warn_placement(&trace, resolved.cores())),
        Some(l) => l.warnings.iter().cloned().for_each(warn),
    }
    speed.into_iter().for_each(warn);
    let model = resolved.model();
    let graph = loggps_predict::graph::build(&trace, &name)?;
    let tally = Tally::new(&trace, sites);
    let bar = Progress::new("replaying", Some(trace.total_events()));
    let observe = |steps: &[loggps_predict::replay::Step]| tally.observe(steps);
    let prediction = loggps_predict::replay::replay_linked(
        &trace,
        &graph,
        &model,
        links.as_ref(),
        &coll,
        &name,
        &|n| bar.set(n),
        Some(&observe),
    );
    bar.finish();
    let prediction = prediction?;
    for w in &prediction.warnings {
        warn(w.clone());
    }
    let mut symbolizer = Symbolizer::new(a.search.clone());
    let (rows, unknown) = tally.rows(&mut symbolizer, a.sort);
    for w in symbolizer.warnings {
        warn(w);
    }
    if unknown.calls > 0 {
        warn(format!(
            "{} calls have no recorded site (left out)",
            unknown.calls
        ));
    }
    let report = Callsites {
        trace: name,
        predicted_s: prediction.predicted_ns * 1e-9,
        sorted_by: format!("{:?}", a.sort).to_lowercase(),
        sites: &rows,
        unknown_calls: unknown.calls,
    };
    let res = to_stdout(|out| match a.format {
        Format::Json => json_to(out, &report),
        Format::Csv => csv(&rows, out),
        Format::Table => table(&report, a.top, &unknown, out),
    });
    quiet_pipe(res, "writing the report")
}

fn table(c: &Callsites, top: usize, unknown: &Cost, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "trace      {}", c.trace)?;
    writeln!(out, "predicted  {:.6} s", c.predicted_s)?;
    writeln!(
        out,
        "sites      {} (ranked by {}; times summed over ranks, s)",
        c.sites.len(),
        c.sorted_by
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "{:>12} {:>12} {:>12} {:>10} {:>6}  {:<20} site",
        "receiver", "sender", "comm", "calls", "ranks", "routines"
    )?;
    let shown = if top == 0 { c.sites.len() } else { top };
    for r in c.sites.iter().take(shown) {
        writeln!(
            out,
            "{:>12.6} {:>12.6} {:>12.6} {:>10} {:>6}  {:<20} {}",
            r.receiver_sync_s,
            r.sender_sync_s,
            r.communication_s,
            r.calls,
            r.ranks,
            r.routines.join(","),
            r.site
        )?;
    }
    if c.sites.len() > shown {
        writeln!(
            out,
            "… {} more sites (--top 0 shows all)",
            c.sites.len() - shown
        )?;
    }
    if unknown.calls > 0 {
        writeln!(
            out,
            "{:>12.6} {:>12.6} {:>12.6} {:>10} {:>6}  {:<20} (no site recorded)",
            unknown.receiver_sync_ns * 1e-9,
            unknown.sender_sync_ns * 1e-9,
            unknown.communication_ns * 1e-9,
            unknown.calls,
            "",
            ""
        )?;
    }
    Ok(())
}

/// One row a site: RFC 4180 quoting for the text fields.
fn csv(rows: &[Row], out: &mut dyn Write) -> std::io::Result<()> {
    let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    writeln!(
        out,
        "receiver_sync_s,sender_sync_s,communication_s,calls,ranks,routines,function,file,line,object,address"
    )?;
    for r in rows {
        writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{}",
            r.receiver_sync_s,
            r.sender_sync_s,
            r.communication_s,
            r.calls,
            r.ranks,
            q(&r.routines.join(" ")),
            q(r.function.as_deref().unwrap_or("")),
            q(r.file.as_deref().unwrap_or("")),
            r.line.map(|l| l.to_string()).unwrap_or_default(),
            q(&r.object),
            r.address
        )?;
    }
    Ok(())
}
