//! One prediction's pipeline, the same for a whole trace in one process and for one process's
//! part of a split replay (`split`: the processes of the MPI job this one is one of): load its
//! ranks ([`load`]), learn what the processes need of the whole ([`census`]), match
//! ([`matched`]), replay ([`replay()`]); [`predict`] runs the three after loading. The commands
//! of the CLI and [`crate::predict`] go through it.

use crate::collectives::traced::Choice;
use crate::error::Error;
use crate::graph::{self, HbGraph, split::Census};
use crate::model::Model;
use crate::replay::{self, Links, Prediction, Traffic, split::Exchange};
use crate::trace::{self, Trace};
use std::path::Path;

/// The processes a replay is split over, where this one is one of several in an MPI job
/// (the `mpi` feature; else `None`).
pub type Split<'a> = Option<&'a dyn Exchange>;

/// How a matched trace is replayed: the model, the parameter sets per link class where there
/// are several, the collectives' algorithms, and the trace's name for messages.
#[derive(Clone, Copy)]
pub struct Replay<'a> {
    pub model: &'a Model,
    pub links: Option<&'a Links>,
    pub coll: &'a Choice,
    pub name: &'a str,
}

/// `r`, where every process of `split` got it; else an error on every process: its own, or
/// the first failed process's, named ([`replay::split::agreed`]). Every process of a split
/// replay calls it at the same points, so that one that fails alone stops them all.
pub fn agreed<T>(r: Result<T, Error>, split: Split<'_>) -> Result<T, Error> {
    match split {
        Some(ex) => replay::split::agreed(r, ex),
        None => r,
    }
}

/// The trace at `path` as this process replays it: whole, or in a split replay its own ranks
/// alone ([`trace::load_block`]); `warn` hears what the loader warns of.
pub fn load(
    path: &Path,
    import: &trace::import::Options,
    split: Split<'_>,
    warn: &mut dyn FnMut(String),
    then: trace::Then,
) -> Result<Trace, Error> {
    let block = split.map(|ex| (ex.process(), ex.processes()));
    Ok(trace::load_as(path, import, block, warn, then)?)
}

/// In a split replay, what every process learns of the whole trace once each has loaded its
/// own ranks; `None` for a whole trace. Every process calls it alike.
pub fn census(trace: &Trace, split: Split<'_>) -> Result<Option<Census>, Error> {
    match split {
        Some(ex) => Ok(Some(graph::split::census(trace, ex)?)),
        None => Ok(None),
    }
}

/// The graph of `trace`: the whole trace's, or in a split replay this process's part of the
/// whole ([`graph::split::divide`]).
pub fn matched(
    trace: &Trace,
    name: &str,
    census: Option<&Census>,
    split: Split<'_>,
) -> Result<HbGraph, Error> {
    let graph = match (split, census) {
        (Some(ex), Some(c)) => graph::split::divide(trace, name, c, ex),
        _ => graph::build(trace, name),
    };
    agreed(graph, split)
}

/// The prediction of `trace` (matched as `graph`) replayed as `how` says, split over the
/// processes of `split` where there are several (process 0 holds the whole prediction), each
/// message costed with its pair's set where `how.links` combines several.
pub fn replay(
    trace: &Trace,
    graph: &HbGraph,
    how: Replay<'_>,
    progress: &(dyn Fn(u64) + Sync),
    split: Split<'_>,
) -> Result<Prediction, Error> {
    let Replay {
        model,
        links,
        coll,
        name,
    } = how;
    match split {
        Some(ex) => {
            Ok(replay::replay_split(trace, graph, model, links, coll, name, progress, ex)?.0)
        }
        None => replay::replay_linked(trace, graph, model, links, coll, name, progress, None),
    }
}

/// Who sends to whom in the whole trace ([`Traffic`]), which the link sets' warnings and
/// report read: gathered from every process of `split`, which all call it alike.
pub fn traffic(trace: &Trace, split: Split<'_>) -> Result<Traffic, Error> {
    match split {
        Some(ex) => Traffic::gather(trace, ex),
        None => Ok(Traffic::of(trace)),
    }
}

/// Matches and replays a loaded trace: [`census`], [`matched`] and [`replay()`] in turn.
pub fn predict(
    trace: &Trace,
    how: Replay<'_>,
    progress: &(dyn Fn(u64) + Sync),
    split: Split<'_>,
) -> Result<Prediction, Error> {
    let census = census(trace, split)?;
    let graph = matched(trace, how.name, census.as_ref(), split)?;
    replay(trace, &graph, how, progress, split)
}
