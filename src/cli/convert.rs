//! `loggps-predict convert INPUT OUTPUT`: a trace in the other encoding, exactly.

use super::{load, warn};
use clap::{Args, ValueEnum};
use loggps_predict::error::Error;
use loggps_predict::model;
use loggps_predict::trace::{binary, text};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Trace to read (ours, binary or text, or another tool's: see --from)
    pub input: PathBuf,
    /// Trace to write; the encoding follows the extension (.txt: text, .goal: GOAL, else binary) unless --to says
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
    /// LogGOPSim's GOAL schedule (collectives expanded as Open MPI 4.1 picks them)
    Goal,
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
    let encoding = to.unwrap_or(match output.extension().and_then(|e| e.to_str()) {
        Some("txt") => Encoding::Text,
        Some("goal") => Encoding::Goal,
        _ => Encoding::Binary,
    });
    let file = std::fs::File::create(output)
        .map_err(|e| Error::Io(format!("{}: cannot create: {e}", output.display())))?;
    let out = std::io::BufWriter::new(file);
    let res = match encoding {
        Encoding::Text => text::write(&trace, out),
        Encoding::Binary => binary::write(&trace, out, trace.complete),
        Encoding::Goal => loggps_predict::goal::write(&trace, out).map(|left_out| {
            if !left_out.is_empty() {
                let list: Vec<String> = left_out.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
                warn(format!(
                    "{}: {} calls GOAL cannot express were left out, their traced time a `calc` where the replay keeps it: {}",
                    output.display(),
                    left_out.values().sum::<u64>(),
                    list.join(", ")
                ));
            }
        }),
    };
    res.map_err(|e| Error::Io(format!("{}: cannot write: {e}", output.display())))
}
