//! `loggps-predict synth`: a synthetic trace of a communication pattern, written as it is made.

use super::progress::Progress;
use clap::Args;
use loggps_predict::error::Error;
use loggps_predict::synth::{Pattern, Spec};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct SynthArgs {
    #[arg(long, value_enum)]
    pub pattern: Pattern,
    /// Number of ranks, 1 to 2^20
    #[arg(long)]
    pub ranks: u32,
    /// How many times the pattern repeats (dissemination: barriers; gauss: matrix columns;
    /// allreduce: calls; collectives: turns of three calls)
    #[arg(long, default_value_t = 1)]
    pub iterations: u32,
    /// Bytes per message (gauss: the longest pivot row)
    #[arg(long, default_value_t = 8)]
    pub bytes: u64,
    /// Computation between iterations, ns
    #[arg(long, value_name = "NS", default_value_t = 0)]
    pub compute: u64,
    /// Output (binary trace); an existing file is kept unless --force
    #[arg(short, long)]
    pub output: PathBuf,
    /// Overwrite the output if it exists
    #[arg(long)]
    pub force: bool,
}

impl SynthArgs {
    /// The pattern and its sizes, as the library writes them.
    pub(super) fn spec(&self) -> Spec {
        Spec {
            pattern: self.pattern,
            ranks: self.ranks,
            iterations: self.iterations,
            bytes: self.bytes,
            compute_ns: self.compute,
        }
    }
}

pub(super) fn synth(spec: &Spec, output: &Path, force: bool) -> Result<(), Error> {
    if spec.ranks == 0 || spec.ranks > 1 << 20 {
        return Err(Error::Usage(format!(
            "--ranks must be from 1 to 2^20 (1048576), found {}",
            spec.ranks
        )));
    }
    let events = loggps_predict::synth::count_events(spec);
    if events > 1_000_000_000_000 {
        return Err(Error::Usage(format!(
            "that is {events} events; at most 10^12"
        )));
    }
    if output.exists() && !force {
        return Err(Error::Usage(format!(
            "{} exists; pass --force to overwrite it",
            output.display()
        )));
    }
    let file = std::fs::File::create(output)
        .map_err(|e| Error::Io(format!("{}: cannot create: {e}", output.display())))?;
    let bar = Progress::new(&format!("writing {events} events"), Some(spec.ranks as u64));
    let written = loggps_predict::synth::write(
        spec,
        std::io::BufWriter::with_capacity(1 << 20, file),
        &|r| bar.set(r),
    );
    bar.finish();
    let written =
        written.map_err(|e| Error::Io(format!("{}: cannot write: {e}", output.display())))?;
    eprintln!(
        "wrote {written} events of {} ranks to {}",
        spec.ranks,
        output.display()
    );
    Ok(())
}
