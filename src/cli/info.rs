//! `loggps-predict info TRACE`: a trace's summary.

use super::args::InfoFormat;
use super::{json_to, load, quiet_pipe, to_stdout};
use clap::Args;
use loggps_predict::error::Error;
use loggps_predict::report::info::Info;
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
    let file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let info = Info::new(&path.display().to_string(), &trace, file_bytes);
    let res = to_stdout(|out| match format {
        InfoFormat::Table => info.write_table(out),
        InfoFormat::Json => json_to(out, &info),
    });
    quiet_pipe(res, "writing the summary")
}
