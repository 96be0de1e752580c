//! `loggps-predict [predict] TRACE`: replay a trace under the model and print the report.

use super::args::{ModelArgs, ParamArgs};
use super::progress::Progress;
use super::sweep::{Sweep, predict_sweep};
use super::{load_then, quiet_pipe, to_stdout, warn};
use clap::Args;
use loggps_predict::collectives::traced::Choice;
use loggps_predict::error::Error;
use loggps_predict::report::{self, Format, Report};
use loggps_predict::trace;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// Trace file (binary .bin or text .txt)
    #[arg(required = true)]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub params: ParamArgs,
    /// Collectives: `modeled` (expanded into point-to-point messages by the algorithm Open MPI
    /// 4.1's tuned rules pick for the call's size), `measured` (traced durations), or
    /// OP=ALGORITHM,… (modeled, e.g. bcast=postal,allreduce=rabenseifner; tuned: Open MPI's
    /// choice for that operation)
    #[arg(long, value_name = "SPEC", default_value = "modeled")]
    pub coll: String,
    /// What-if sweep: one prediction per value of one parameter of the model, or per algorithm
    /// of one collective (tuned: Open MPI 4.1's choice by size), the trace loaded and matched
    /// once; a row per value (e.g. --sweep S=4096,16384,65536, --sweep allreduce=tuned,ring)
    #[arg(long, value_name = "NAME=V1,V2,…")]
    pub sweep: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the breakdown as stacked bars (the paper's Fig. 6) into FILE: one bar per
    /// rank and their average, or with --sweep one per value
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

pub(super) fn predict(a: &PredictArgs) -> Result<(), Error> {
    let path = a.trace.as_deref().expect("clap requires TRACE");
    let coll = Choice::parse(&a.coll)?;
    let sweep = a
        .sweep
        .as_deref()
        .map(|s| Sweep::parse(s, &a.model, &a.params, &coll))
        .transpose()?;
    let trace = load_then(path, trace::Then::PREDICT)?;
    if let Some(sweep) = sweep {
        return predict_sweep(a, &sweep, &trace, &coll);
    }
    let resolved = a.model.resolve(&a.params, trace.meta.params)?;
    let bar = Progress::new("replaying", Some(trace.total_events()));
    let prediction =
        loggps_predict::predict_with(path, &trace, &resolved.model(), &coll, &|n| bar.set(n));
    bar.finish();
    let prediction = prediction?;
    for w in &prediction.warnings {
        warn(w.clone());
    }
    let report = Report::new(
        &path.display().to_string(),
        &trace.meta.library,
        trace.total_events(),
        &prediction,
        &resolved,
    );
    if let Some(path) = &a.svg {
        write_svg(path, &report.svg())?;
    }
    let res = to_stdout(|out| report::exporter(a.format).write(&report, out));
    quiet_pipe(res, "writing the report")
}

/// Writes a chart, the error naming the file.
pub(super) fn write_svg(path: &std::path::Path, svg: &str) -> Result<(), Error> {
    std::fs::write(path, svg)
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))
}
