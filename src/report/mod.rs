//! Turns a prediction into what users read: one exporter per output format, behind one trait.

pub mod calls;
mod csv;
pub mod info;
mod json;
pub mod perfetto;
pub mod svg;
pub mod sweep;
mod table;
pub mod timeline;

use crate::model::{BySize, ResolvedModel};
use crate::replay::{Prediction, RankBreakdown};
use serde::Serialize;
use std::io::{self, Write};

/// An output format of the prediction report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

/// Writes a report in one format.
pub trait Exporter {
    fn write(&self, report: &Report, out: &mut dyn Write) -> io::Result<()>;
}

/// The exporter for `format`.
pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(table::Table),
        Format::Json => Box::new(json::Json),
        Format::Csv => Box::new(csv::Csv),
    }
}

/// One parameter as used, with where its value came from.
#[derive(Clone, Debug, Serialize)]
pub struct ParamUsed {
    pub value: f64,
    pub source: String,
}

/// The four parts of a rank's predicted time (paper Fig. 6), in seconds.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Parts {
    pub end_s: f64,
    pub computation_s: f64,
    pub communication_s: f64,
    pub sender_sync_s: f64,
    pub receiver_sync_s: f64,
}

/// One row of the per-rank table.
#[derive(Clone, Debug, Serialize)]
pub struct RankRow {
    pub rank: u32,
    #[serde(flatten)]
    pub parts: Parts,
    pub measured_end_s: f64,
    pub collective_s: f64,
}

/// Everything a prediction report shows.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub trace: String,
    pub library: String,
    pub events: u64,
    pub predicted_s: f64,
    pub measured_s: f64,
    pub error_pct: f64,
    /// The cost model: `loggps` or `loggp`.
    pub model: String,
    /// Where messages move: `async` (the paper's model) or `calls` (only inside MPI calls).
    pub progress: &'static str,
    /// The share of a rendezvous payload's `T1` that holds its sender's CPU (the model's §14):
    /// 0 (the receiver's alone) to 1 (both sides copy); by size where the set's is.
    #[serde(serialize_with = "sender_json")]
    pub rendezvous_sender: Option<BySize>,
    /// The model's parameters in its own names (LogGPS: L o Os Or Gs Gl s S; LogGP: L o g G).
    pub params: indexmap_like::Ordered<ParamUsed>,
    /// The tracer's own time taken out of the measured computation, averaged over ranks,
    /// seconds (the model's §16), where the trace timed it; negative where `--keep-tracer-time`
    /// added the tracer's time inside the calls instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracer_removed_s: Option<f64>,
    pub ranks: Vec<RankRow>,
    pub average: Parts,
    /// Time in each collective routine, averaged over ranks, seconds.
    pub collectives_s: indexmap_like::Ordered<f64>,
    pub warnings: Vec<String>,
    /// How the run's messages ran against its sets, per pair the tracer timed them over
    /// (src/model/MODEL.md §12; none where the trace has no such figures or a flag changed the
    /// costs): a ratio of 1.25 is 25% slower than the set models.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub message_speed: Vec<crate::replay::links::MessageSpeed>,
    /// Each set scaled to the run's message speed, in words (`--at-run-speed`; the model's §12).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub at_run_speed: Vec<String>,
    /// The critical path's composition, where asked for (`--critical-path`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical_path: Option<CriticalPathReport>,
    /// The parameter sets combined per link class (the model's §12), where several are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<LinksReport>,
    /// The calls by routine and size class, predicted against measured, where asked for
    /// (`--calls`), the most measured time first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calls: Option<Vec<calls::CallRow>>,
    /// Rows the table leaves out (it shows at most `max_rows`); JSON and CSV have every rank.
    #[serde(skip)]
    pub max_rows: usize,
}

const NS: f64 = 1e-9;

fn parts(b: &RankBreakdown) -> Parts {
    Parts {
        end_s: b.end_ns * NS,
        computation_s: b.computation_ns * NS,
        communication_s: b.communication_ns * NS,
        sender_sync_s: b.sender_sync_ns * NS,
        receiver_sync_s: b.receiver_sync_ns * NS,
    }
}

impl Report {
    pub fn new(
        trace: &str,
        library: &str,
        events: u64,
        pred: &Prediction,
        model: &ResolvedModel,
    ) -> Report {
        let n = pred.ranks.len().max(1) as f64;
        Report {
            trace: trace.to_string(),
            library: library.to_string(),
            events,
            predicted_s: pred.predicted_ns * NS,
            measured_s: pred.measured_ns * NS,
            error_pct: pred.error_pct(),
            model: model.model().name().to_string(),
            progress: progress(model),
            rendezvous_sender: rendezvous_sender(model),
            params: params_used(model),
            tracer_removed_s: {
                let sum: f64 = pred.ranks.iter().map(|b| b.tracer_ns).sum();
                (sum != 0.0).then_some(sum * NS / n)
            },
            ranks: pred
                .ranks
                .iter()
                .map(|b| RankRow {
                    rank: b.rank,
                    parts: parts(b),
                    measured_end_s: b.measured_end_ns * NS,
                    collective_s: b.collective_ns * NS,
                })
                .collect(),
            average: average(pred),
            collectives_s: {
                let mut kinds: Vec<(crate::trace::Routine, f64)> = Vec::new();
                for (k, t) in pred.ranks.iter().flat_map(|b| b.by_routine()) {
                    match kinds.iter_mut().find(|(q, _)| *q == k) {
                        Some((_, sum)) => *sum += t * NS / n,
                        None => kinds.push((k, t * NS / n)),
                    }
                }
                kinds.sort_by_key(|(k, _)| *k);
                indexmap_like::Ordered(
                    kinds
                        .into_iter()
                        .map(|(k, t)| (k.mpi_name().to_string(), t))
                        .collect(),
                )
            },
            warnings: pred.warnings.clone(),
            message_speed: Vec::new(),
            at_run_speed: Vec::new(),
            critical_path: None,
            links: None,
            calls: None,
            max_rows: 64,
        }
    }
}

/// The parameter sets of a run that combines several (the model's §12), and how each rank's
/// point-to-point bytes divide among them.
#[derive(Clone, Debug, Serialize)]
pub struct LinksReport {
    /// The nodes the ranks were placed on (as traced, or as a placement what-if says).
    pub nodes: usize,
    pub sets: Vec<SetReport>,
    /// Per rank, the share of the bytes it sent with each set (in `sets`' order), percent.
    pub bytes_pct_by_rank: Vec<Vec<f64>>,
}

/// One set of a combination: its class, `cores` figure, eager limit, `o`, `L` of its first
/// band and its rendezvous payload's share on the sender's CPU (the rest is in the parameter
/// file).
#[derive(Clone, Debug, Serialize)]
#[allow(non_snake_case)] // the papers' names
pub struct SetReport {
    pub class: &'static str,
    pub cores_ns: Option<f64>,
    pub S: u64,
    pub o_ns: f64,
    pub L_ns: f64,
    /// The share of a rendezvous payload's `T1` on its sender's CPU (the model's §14).
    #[serde(serialize_with = "sender_json")]
    pub rendezvous_sender: Option<BySize>,
}

impl LinksReport {
    pub fn new(links: &crate::replay::Links) -> LinksReport {
        let pct = |by: Vec<u64>| {
            let total = by.iter().sum::<u64>().max(1) as f64;
            by.into_iter().map(|b| 100.0 * b as f64 / total).collect()
        };
        LinksReport {
            nodes: links.nodes(),
            sets: (links.sets.iter())
                .map(|p| SetReport {
                    class: p.class.map_or("any", |c| c.name()),
                    cores_ns: p.cores,
                    S: p.S,
                    o_ns: p.o,
                    L_ns: p.L,
                    rendezvous_sender: p.sender_shares(),
                })
                .collect(),
            bytes_pct_by_rank: links.bytes_by_set().into_iter().map(pct).collect(),
        }
    }
}

/// The critical path ([`crate::critical`]): its length, its four parts, its time by rank (the
/// ranks it crosses) and by routine (most first; computation as `computation`), seconds.
#[derive(Clone, Debug, Serialize)]
pub struct CriticalPathReport {
    pub length_s: f64,
    pub computation_s: f64,
    pub communication_s: f64,
    pub sender_sync_s: f64,
    pub receiver_sync_s: f64,
    /// How many times the path moves to the partner a call waited for.
    pub jumps: usize,
    pub by_rank: Vec<RankTime>,
    pub by_routine: indexmap_like::Ordered<f64>,
    /// The calls' time on the path by call site (`function file:line`), most first; empty
    /// where the trace has no sites (filled by the caller, who names them:
    /// [`crate::callsites::rows`]).
    pub by_call_site: indexmap_like::Ordered<f64>,
}

/// A rank's time on the critical path, seconds.
#[derive(Clone, Debug, Serialize)]
pub struct RankTime {
    pub rank: u32,
    pub time_s: f64,
}

impl From<&crate::critical::Composition> for CriticalPathReport {
    fn from(c: &crate::critical::Composition) -> Self {
        CriticalPathReport {
            length_s: c.length_ns * NS,
            computation_s: c.computation_ns * NS,
            communication_s: c.communication_ns * NS,
            sender_sync_s: c.sender_sync_ns * NS,
            receiver_sync_s: c.receiver_sync_ns * NS,
            jumps: c.jumps,
            by_rank: c
                .by_rank
                .iter()
                .map(|&(rank, t)| RankTime {
                    rank,
                    time_s: t * NS,
                })
                .collect(),
            by_routine: indexmap_like::Ordered(
                c.by_routine
                    .iter()
                    .map(|(n, t)| (n.clone(), t * NS))
                    .collect(),
            ),
            by_call_site: indexmap_like::Ordered(Vec::new()),
        }
    }
}

/// The four parts averaged over ranks.
pub fn average(pred: &Prediction) -> Parts {
    let n = pred.ranks.len().max(1) as f64;
    let mut average = Parts::default();
    for b in &pred.ranks {
        let p = parts(b);
        average.end_s += p.end_s / n;
        average.computation_s += p.computation_s / n;
        average.communication_s += p.communication_s / n;
        average.sender_sync_s += p.sender_sync_s / n;
        average.receiver_sync_s += p.receiver_sync_s / n;
    }
    average
}

/// `calls` where messages move only inside MPI calls, else `async`.
pub fn progress(model: &ResolvedModel) -> &'static str {
    match model.model().progress_at_calls() {
        true => "calls",
        false => "async",
    }
}

/// The (first) set's share of a rendezvous payload's `T1` on its sender's CPU (None under
/// LogGP, and where it is 0 at every size).
pub fn rendezvous_sender(model: &ResolvedModel) -> Option<BySize> {
    match model.model() {
        crate::model::Model::LogGps(p) => p.sender_shares(),
        _ => None,
    }
}

/// A set's `rendezvous_sender` in JSON: its share where it is one for every size (0 where the
/// set has none), else its `[bytes, share]` pairs, as a parameter file writes them.
pub(crate) fn sender_json<S: serde::Serializer>(
    b: &Option<BySize>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match b.as_ref().map(|b| b.points()) {
        None => s.serialize_f64(0.0),
        Some(&[(0, f)]) => s.serialize_f64(f),
        Some(points) => points.serialize(s),
    }
}

/// The words for a rendezvous payload's share on its sender's CPU where a set has one (as
/// [`crate::model::Params::sender_shares`] gives it).
pub(crate) fn sender_words(rendezvous_sender: Option<BySize>) -> String {
    rendezvous_sender.map_or(String::new(), |b| {
        format!(", rendezvous payload on the sender's CPU {b} of its T1")
    })
}

/// The model line of a table: the model's name, where messages move and the share of a
/// rendezvous payload on its sender's CPU when not the paper's.
pub(crate) fn model_line(model: &str, progress: &str, rendezvous_sender: Option<BySize>) -> String {
    let mut line = model.to_string();
    if progress == "calls" {
        line += ", progress calls: messages move only inside MPI calls";
    }
    line + &sender_words(rendezvous_sender)
}

/// The model's parameters as used, with where each came from.
pub fn params_used(model: &ResolvedModel) -> indexmap_like::Ordered<ParamUsed> {
    indexmap_like::Ordered(
        model
            .params()
            .into_iter()
            .map(|(n, v, s)| {
                let used = ParamUsed {
                    value: v,
                    source: s.to_string(),
                };
                (n.to_string(), used)
            })
            .collect(),
    )
}

/// A JSON object that keeps its keys in insertion order (the parameters in the order of the
/// model's §1, src/model/MODEL.md).
pub mod indexmap_like {
    use serde::ser::{Serialize, SerializeMap, Serializer};

    #[derive(Clone, Debug)]
    pub struct Ordered<T>(pub Vec<(String, T)>);

    impl<T: Serialize> Serialize for Ordered<T> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(Some(self.0.len()))?;
            for (k, v) in &self.0 {
                m.serialize_entry(k, v)?;
            }
            m.end()
        }
    }
}
