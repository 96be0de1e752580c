//! `loggps-predict check TRACES --baseline FILE`: predictions against a baseline, for CI.

use super::args::ParamArgs;
use super::load_then;
use clap::Args;
use loggps_predict::casestudy::{
    self,
    check::{Baseline, Entry},
};
use loggps_predict::error::Error;
use loggps_predict::trace;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Traces to predict
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Baseline JSON (written by --update)
    #[arg(long, value_name = "FILE")]
    pub baseline: PathBuf,
    /// Largest drift allowed: percent of the predicted runtime, and percentage points of the synchronization share
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    pub tolerance: f64,
    /// Write the baseline from these predictions instead of comparing
    #[arg(long)]
    pub update: bool,
    #[command(flatten)]
    pub params: ParamArgs,
}

pub(super) fn check(
    traces: &[PathBuf],
    baseline: &Path,
    tolerance: f64,
    update: bool,
    params: &ParamArgs,
) -> Result<(), Error> {
    let mut now = Vec::new();
    for path in traces {
        let trace = load_then(path, trace::Then::PREDICT)?;
        let resolved = params.resolve(&trace.meta.sets(), trace.meta.eager_limit.as_ref())?;
        let p = loggps_predict::predict(path, &trace, &resolved.params, &|_| {})?;
        let total: f64 = p.ranks.iter().map(|r| r.end_ns).sum();
        let sync: f64 = p
            .ranks
            .iter()
            .map(|r| r.sender_sync_ns + r.receiver_sync_ns)
            .sum();
        let share = if total > 0.0 { sync / total } else { 0.0 };
        now.push(Entry {
            trace: path.display().to_string(),
            predicted_s: p.predicted_ns * 1e-9,
            sync_share: share,
        });
    }
    if update {
        let text = serde_json::to_string_pretty(&Baseline {
            version: 1,
            traces: now,
        })
        .expect("serializable")
            + "\n";
        return std::fs::write(baseline, text)
            .map_err(|e| Error::Io(format!("{}: cannot write: {e}", baseline.display())));
    }
    let text = std::fs::read_to_string(baseline).map_err(|e| {
        Error::Io(format!(
            "{}: cannot read the baseline: {e}",
            baseline.display()
        ))
    })?;
    let base: Baseline = serde_json::from_str(&text)
        .map_err(|e| Error::Io(format!("{}: not a baseline: {e}", baseline.display())))?;
    let drifts = casestudy::check::compare(&base, &now, tolerance);
    if drifts.is_empty() {
        println!(
            "{} prediction(s) match {} within {tolerance}%",
            now.len(),
            baseline.display()
        );
        return Ok(());
    }
    print!("{}", casestudy::check::drift_table(&drifts));
    println!(
        "{} of {} prediction(s) drifted from {} by more than {tolerance}%",
        drifts.len(),
        now.len(),
        baseline.display()
    );
    std::process::exit(1);
}
