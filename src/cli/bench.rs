//! `loggps-predict bench TRACE`: the pipeline's phases timed, as JSON.

use super::args::{ParamArgs, links_for};
use super::{
    Split, agreed, all_events, census, json_to, load_replayed, matched, quiet_pipe, to_stdout,
};
use clap::Args;
use loggps_predict::collectives::traced::Choice;
use loggps_predict::error::Error;
use loggps_predict::replay::split::{Exchange, SplitStats};
use loggps_predict::replay::{Remap, replay_linked, replay_split};
use loggps_predict::{model, trace};
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Trace to load, match and replay
    pub trace: PathBuf,
    #[command(flatten)]
    pub params: ParamArgs,
    /// Collectives, as for a prediction: modeled, measured or OP=ALGORITHM,…
    #[arg(long, value_name = "SPEC", default_value = "modeled")]
    pub coll: String,
}

/// The process's peak resident memory so far, bytes (Linux; 0 elsewhere).
fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

pub(super) fn bench(
    path: &Path,
    params: &ParamArgs,
    coll: &str,
    split: Split<'_>,
) -> Result<(), Error> {
    use std::time::Instant;
    let choice = Choice::parse(coll)?;
    let name = path.display().to_string();
    let file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let allocs = loggps_predict::memory::allocations;
    let a0 = allocs();
    let t = Instant::now();
    // What one process may fail at alone (a file its node lacks, its memory) stops them all.
    let trace = agreed(load_replayed(path, trace::Then::PREDICT, split), split)?;
    let census = census(&trace, path, split)?;
    let parse_s = t.elapsed().as_secs_f64();
    let peak_parse = peak_rss_bytes();
    let a_parse = allocs();
    let resolved = agreed(
        params.resolve(&trace.meta.sets(), trace.meta.eager_limit.as_ref()),
        split,
    )?;
    let model = model::Model::LogGps(resolved.params);
    let resolved = model::ResolvedModel::LogGps(resolved);
    let links = links_for(&resolved, &trace, &Remap::Traced, split)?;
    for w in links.iter().flat_map(|l| &l.warnings) {
        super::warn(w.clone());
    }
    let t = Instant::now();
    let graph = matched(&trace, &name, census.as_ref(), split)?;
    let graph_s = t.elapsed().as_secs_f64();
    let peak_graph = peak_rss_bytes();
    let a_graph = allocs();
    let t = Instant::now();
    let links = links.as_ref();
    let (prediction, stats) = match split {
        Some(ex) => {
            let (p, s) = replay_split(&trace, &graph, &model, links, &choice, &name, &|_| {}, ex)?;
            (p, Some(s))
        }
        None => (
            replay_linked(&trace, &graph, &model, links, &choice, &name, &|_| {}, None)?,
            None,
        ),
    };
    let replay_s = t.elapsed().as_secs_f64();
    let a_replay = allocs();
    let total_events = all_events(&trace, census.as_ref());
    let events = total_events as f64;
    let per_event = |n: u64| n as f64 / events.max(1.0);
    let total_s = parse_s + graph_s + replay_s;
    let peak = peak_rss_bytes();
    let processes = match (split, stats) {
        (Some(ex), Some(s)) => Some(per_process(ex, &s, peak, replay_s)?),
        _ => None,
    };
    let mut figures = serde_json::json!({
        "trace": name,
        "ranks": trace.nranks(),
        "events": total_events,
        "threads": rayon::current_num_threads(),
        "coll": coll,
        "file_bytes": file_bytes,
        "parse_s": parse_s,
        "parse_gb_per_s": file_bytes as f64 / parse_s / 1e9,
        "parse_events_per_s": events / parse_s,
        "graph_s": graph_s,
        "graph_events_per_s": events / graph_s,
        "replay_s": replay_s,
        "replay_events_per_s": events / replay_s,
        "total_s": total_s,
        "total_events_per_s": events / total_s,
        "peak_rss_bytes": peak,
        "peak_bytes_per_event": peak as f64 / events.max(1.0),
        "peak_bytes_per_event_by_phase": {
            "parse": peak_parse as f64 / events.max(1.0),
            "graph": peak_graph as f64 / events.max(1.0),
            "replay": peak as f64 / events.max(1.0),
        },
        "allocations": {
            "parse": a_parse - a0,
            "graph": a_graph - a_parse,
            "replay": a_replay - a_graph,
        },
        "allocations_per_event": {
            "parse": per_event(a_parse - a0),
            "graph": per_event(a_graph - a_parse),
            "replay": per_event(a_replay - a_graph),
        },
        "predicted_s": prediction.predicted_ns * 1e-9,
    });
    if let Some(p) = processes {
        figures["processes"] = p;
    }
    quiet_pipe(
        to_stdout(|out| json_to(out, &figures)),
        "writing the figures",
    )
}

/// Each process's figures of a split replay, gathered on process 0 (JSON there; Null on the
/// others): its ranks, peak memory, replay time, rounds, what it sent the others, and the
/// parts of its replay time spent on the records and in the exchanges.
fn per_process(
    ex: &dyn Exchange,
    s: &SplitStats,
    peak: u64,
    replay_s: f64,
) -> Result<serde_json::Value, Error> {
    let mine = vec![
        s.ranks as u64,
        peak,
        replay_s.to_bits(),
        s.rounds,
        s.bytes_sent,
        s.messages_sent,
        s.recording.as_secs_f64().to_bits(),
        s.exchanging.as_secs_f64().to_bits(),
    ];
    let mut out = vec![Vec::new(); ex.processes()];
    out[0] = mine;
    let got = ex.all_to_all(out)?;
    if ex.process() != 0 {
        return Ok(serde_json::Value::Null);
    }
    let rows = got.iter().enumerate().map(|(k, w)| {
        serde_json::json!({
            "process": k,
            "ranks": w[0],
            "peak_rss_bytes": w[1],
            "replay_s": f64::from_bits(w[2]),
            "rounds": w[3],
            "bytes_sent": w[4],
            "messages_sent": w[5],
            "records_s": f64::from_bits(w[6]),
            "exchange_s": f64::from_bits(w[7]),
        })
    });
    Ok(serde_json::Value::Array(rows.collect()))
}
