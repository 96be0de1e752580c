//! `loggps-predict table7 DIR`: the paper's case study over a directory of recorded traces.

use super::progress::Progress;
use super::{json_to, quiet_pipe, to_stdout};
use clap::Args;
use loggps_predict::casestudy;
use loggps_predict::error::Error;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct Table7Args {
    /// Directory with the traces and MANIFEST.tsv (as traces/record.sh writes them)
    pub dir: PathBuf,
    /// Output format (json: for scripts; markdown: the README's table of the 2-rank runs)
    #[arg(long, value_enum, default_value_t = Table7Format::Table)]
    pub format: Table7Format,
    /// Also draw Fig. 6 (stacked bars of the breakdown) into this SVG file
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Table7Format {
    Table,
    Json,
    Markdown,
}

pub(super) fn table7(dir: &Path, format: Table7Format, svg: Option<&Path>) -> Result<(), Error> {
    let study = Progress::around(
        &format!("predicting the traces of {}", dir.display()),
        || casestudy::study(dir, &mut |_, _| {}),
    )?;
    if let Some(path) = svg {
        std::fs::write(path, casestudy::svg::chart(&casestudy::cells(&study)))
            .map_err(|e| Error::Io(format!("{}: cannot write: {e}", path.display())))?;
    }
    let res = to_stdout(|out| match format {
        Table7Format::Table => out.write_all(casestudy::table(&study).as_bytes()),
        Table7Format::Json => json_to(out, &study),
        Table7Format::Markdown => out.write_all(casestudy::markdown(&study).as_bytes()),
    });
    quiet_pipe(res, "writing the table")
}
