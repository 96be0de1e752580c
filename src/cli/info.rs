//! `loggps-predict info TRACE`: a trace's summary.

use super::args::InfoFormat;
use super::{json_to, load, quiet_pipe, to_stdout};
use clap::Args;
use loggps_predict::error::Error;
use loggps_predict::report::info::Info;
use loggps_predict::trace;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct InfoArgs {
    /// Trace file (binary or text)
    pub trace: PathBuf,
    /// Output format (json: for scripts)
    #[arg(long, value_enum, default_value_t = InfoFormat::Table)]
    pub format: InfoFormat,
}

pub(super) fn info(path: &Path, format: InfoFormat) -> Result<(), Error> {
    let trace = load(path)?;
    // All the files the trace was read from (another tool's may be one a rank).
    let from = match super::import_options().from {
        Some(f) => f,
        None => trace::import::detect(path)?,
    };
    let file_bytes = (trace::import::files(path, from).iter())
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum();
    let info = Info::new(&path.display().to_string(), &trace, file_bytes);
    // The process ends after this: the trace's memory goes back with it (memory::exit_now).
    std::mem::forget(trace);
    let res = to_stdout(|out| match format {
        InfoFormat::Table => info.write_table(out),
        InfoFormat::Json => json_to(out, &info),
    });
    quiet_pipe(res, "writing the summary")
}
