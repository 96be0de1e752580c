//! `loggps-predict convert INPUT OUTPUT`: a trace in the other encoding, exactly.

use super::load;
use clap::{Args, ValueEnum};
use loggps_predict::error::Error;
use loggps_predict::model;
use loggps_predict::trace::{binary, text};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Trace to read (binary or text)
    pub input: PathBuf,
    /// Trace to write; the encoding follows the extension (.txt: text, else binary) unless --to says
    pub output: PathBuf,
    #[arg(long, value_enum)]
    pub to: Option<Encoding>,
    /// Overwrite OUTPUT if it exists
    #[arg(long)]
    pub force: bool,
    /// Embed these LogGPS parameters (a TOML as `calibrate` writes) in OUTPUT
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
pub enum Encoding {
    Binary,
    Text,
}

pub(super) fn convert(
    input: &Path,
    output: &Path,
    to: Option<Encoding>,
    force: bool,
    params: Option<&Path>,
) -> Result<(), Error> {
    if output.exists() && !force {
        return Err(Error::Usage(format!(
            "{} exists; pass --force to overwrite it",
            output.display()
        )));
    }
    let mut trace = load(input)?;
    if let Some(p) = params {
        // Checked as a prediction would combine them (the model's §12), the main set first.
        let files = [p.to_path_buf()];
        let r = model::resolve(&files, None, &[], &model::Overrides::default())?;
        if r.others.len() >= u8::MAX as usize {
            return Err(Error::Params(format!(
                "{}: more than 255 parameter sets",
                p.display()
            )));
        }
        trace.meta.params = Some(r.params);
        trace.meta.other_params = r.others;
    }
    let encoding = to.unwrap_or(if output.extension().is_some_and(|e| e == "txt") {
        Encoding::Text
    } else {
        Encoding::Binary
    });
    let file = std::fs::File::create(output)
        .map_err(|e| Error::Io(format!("{}: cannot create: {e}", output.display())))?;
    let out = std::io::BufWriter::new(file);
    let res = match encoding {
        Encoding::Text => text::write(&trace, out),
        Encoding::Binary => binary::write(&trace, out, trace.complete),
    };
    res.map_err(|e| Error::Io(format!("{}: cannot write: {e}", output.display())))
}
