//! loggps-predict: trace-driven performance prediction of MPI programs under LogGPS
//! (Ino, Fujimoto, Hagihara, PPoPP 2001).
//!
//! The pipeline runs one way: [`trace`] parses a trace, [`graph`] matches it into a
//! happens-before graph, [`replay`] costs it with [`model`], [`report`] prints the result.
//!
//! `unsafe` code lives in [`memory`] (pages, prefetching) and in the MPI binding of the split
//! replay (`replay::mpi`) only: the compiler refuses it anywhere else.

#![deny(unsafe_code)]

pub mod calibrate;
pub mod callsites;
pub mod casestudy;
pub mod collectives;
pub mod critical;
pub mod driver;
pub mod error;
pub mod goal;
pub mod graph;
#[allow(unsafe_code)]
pub mod memory;
pub mod model;
pub mod replay;
pub mod report;
pub mod sensitivity;
pub mod synth;
pub mod trace;

use error::Error;
use std::path::Path;

/// Matches and replays a loaded trace with resolved parameters, collectives modeled by the
/// algorithms Open MPI 4.1 would pick.
pub fn predict(
    path: &Path,
    trace: &trace::Trace,
    params: &model::Params,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<replay::Prediction, Error> {
    predict_with(
        path,
        trace,
        &model::Model::LogGps(*params),
        &collectives::traced::Choice::tuned(),
        progress,
    )
}

/// [`predict`] under `model` (LogGPS or LogGP), collectives costed as `coll` says.
pub fn predict_with(
    path: &Path,
    trace: &trace::Trace,
    model: &model::Model,
    coll: &collectives::traced::Choice,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<replay::Prediction, Error> {
    let name = path.display().to_string();
    let how = driver::Replay {
        model,
        links: None,
        coll,
        name: &name,
    };
    driver::predict(trace, how, progress, None)
}
