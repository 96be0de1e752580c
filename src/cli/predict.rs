//! `loggps-predict [predict] TRACE`: replay a trace under the model and print the report.

use super::args::{PredictArgs, links_for};
use super::progress::Progress;
use super::sweep::{Sweep, predict_sweep};
use super::{
    Split, agreed, all_events, census, load_replayed, matched, quiet_pipe, to_stdout, warn,
    warn_placement,
};
use loggps_predict::callsites::{self, SortKey, Symbolizer};
use loggps_predict::collectives::traced::Choice;
use loggps_predict::critical::{Composition, CriticalPath, Record};
use loggps_predict::error::Error;
use loggps_predict::model::ResolvedModel;
use loggps_predict::replay::Links;
use loggps_predict::replay::Prediction;
use loggps_predict::report::indexmap_like::Ordered;
use loggps_predict::report::{self, Format, Report, perfetto, timeline};
use loggps_predict::trace::{self, sites::Sites};

pub(super) fn predict(a: &PredictArgs, split: Split<'_>) -> Result<(), Error> {
    let path = a.trace.as_deref().expect("clap requires TRACE");
    // What one process of a split replay may fail at alone (a trace or parameter file its node
    // lacks) stops them all, before their first exchange.
    let (coll, sweep, cut, trace) = agreed(prepare(a, path, split), split)?;
    let census = census(&trace, path, split)?;
    if let Some(sweep) = sweep {
        return predict_sweep(a, &sweep, &trace, census.as_ref(), &coll, split);
    }
    let mut resolved = agreed(
        a.model.resolve(
            &a.params,
            &trace.meta.sets(),
            trace.meta.eager_limit.as_ref(),
        ),
        split,
    )?;
    let at_speed = match a.at_run_speed {
        true => {
            let run = agreed(super::RunSpeed::of(&trace, &a.params), split)?;
            agreed(run.apply(&mut resolved), split)?;
            Some(run)
        }
        false => None,
    };
    let remap = agreed(a.remap(), split)?;
    let links = agreed(links_for(&resolved, &trace, &remap, split), split)?;
    super::warn_oversubscribed(&trace);
    let placement = match &links {
        None => warn_placement(&trace, resolved.cores()),
        Some(_) => None,
    };
    let mut link_warnings: Vec<String> = links.iter().flat_map(|l| l.warnings.clone()).collect();
    // At the run's speed, the sets already answer for it.
    let (speeds, run_speed) = match at_speed {
        Some(run) => (run.speeds, run.said),
        None => {
            let speeds = super::message_speeds(&trace, &resolved, &a.params);
            link_warnings.extend(loggps_predict::replay::links::speed_warnings(&speeds));
            (speeds, Vec::new())
        }
    };
    link_warnings.extend(super::library_warnings(&trace, &resolved, &coll));
    for w in &link_warnings {
        warn(w.clone());
    }
    // Names call sites for the timeline and the critical path, each object opened once.
    let mut symbolizer = Symbolizer::new(Vec::new());
    // The events this process holds: its own ranks' in a split replay.
    let bar = Progress::new("replaying", Some(trace.total_events()));
    let (prediction, critical, calls) = match (&a.timeline, a.critical_path || a.calls) {
        (None, false) => {
            let name = path.display().to_string();
            let graph = matched(&trace, &name, census.as_ref(), split);
            let replayed = graph.and_then(|g| {
                let how = loggps_predict::driver::Replay {
                    model: &resolved.model(),
                    links: links.as_ref(),
                    coll: &coll,
                    name: &name,
                };
                loggps_predict::driver::replay(&trace, &g, how, &|n| bar.set(n), split)
            });
            (replayed, None, None)
        }
        (file, _) => observed(
            path,
            file.as_deref(),
            (a.critical_path, a.calls),
            cut,
            &trace,
            &resolved,
            links.as_ref(),
            &coll,
            &|n| bar.set(n),
            &mut symbolizer,
        )?,
    };
    bar.finish();
    let prediction = prediction?;
    for w in &prediction.warnings {
        warn(w.clone());
    }
    let mut report = Report::new(
        &path.display().to_string(),
        &trace.meta.library,
        all_events(&trace, census.as_ref()),
        &prediction,
        &resolved,
    );
    report.warnings.extend(placement);
    report.warnings.extend(link_warnings);
    report.message_speed = speeds;
    report.at_run_speed = run_speed;
    report.links = links.as_ref().map(report::LinksReport::new);
    report.critical_path = critical.as_ref().map(Into::into);
    report.calls = calls;
    if let (Some(c), Some(r), Some(sites)) = (&critical, &mut report.critical_path, &trace.sites) {
        r.by_call_site = critical_sites(c, sites, &mut symbolizer);
    }
    for w in symbolizer.warnings {
        warn(w);
    }
    if critical.is_some() && a.format == Format::Csv {
        warn("the critical path is reported in the table and JSON formats, not CSV".into());
    }
    if report.calls.is_some() && a.format == Format::Csv {
        warn(
            "the calls by routine and size are reported in the table and JSON formats, not CSV"
                .into(),
        );
    }
    if let Some(path) = &a.svg {
        super::write_svg(path, &report.svg())?;
    }
    let res = to_stdout(|out| report::exporter(a.format).write(&report, out));
    quiet_pipe(res, "writing the report")
}

/// What `predict` reads and checks before it replays: the collectives' choice, the sweep, the
/// timeline's cut and the trace.
fn prepare(
    a: &PredictArgs,
    path: &std::path::Path,
    split: Split<'_>,
) -> Result<(Choice, Option<Sweep>, timeline::Cut, trace::Trace), Error> {
    let coll = Choice::parse(&a.coll)?;
    let sweep = match (&a.sweep, &a.sweep_scale) {
        (Some(s), _) => Some(Sweep::parse(s, &a.model, &a.params, &coll)?),
        (None, Some(s)) => Some(Sweep::parse_scale(s, &a.model, &a.params)?),
        (None, None) => None,
    };
    let cut = timeline::Cut {
        ranks: a
            .ranks
            .as_deref()
            .map(timeline::Cut::parse_ranks)
            .transpose()
            .map_err(Error::Usage)?,
        window_ns: a
            .window
            .as_deref()
            .map(timeline::Cut::parse_window)
            .transpose()
            .map_err(Error::Usage)?,
    };
    let follows = a.timeline.is_some() || a.critical_path || a.calls;
    if sweep.is_some() && follows {
        return Err(Error::Usage(
            "--timeline, --critical-path and --calls follow one prediction: leave out --sweep (or predict each value with its own flags)".into(),
        ));
    }
    if split.is_some() && follows {
        return Err(Error::Usage(
            "--timeline, --critical-path and --calls follow one process's replay: run them without mpirun"
                .into(),
        ));
    }
    let mut trace = load_replayed(path, trace::Then::PREDICT, split)?;
    if a.keep_tracer_time {
        trace.meta.ranks.keep_tracer_time();
    }
    Ok((coll, sweep, cut, trace))
}

/// The critical path's calls' time by call site, named, most first.
fn critical_sites(c: &Composition, sites: &Sites, symbolizer: &mut Symbolizer) -> Ordered<f64> {
    let items = c.by_site.iter().copied();
    let rows = callsites::rows(sites, items, symbolizer, SortKey::Total);
    let total = |r: &callsites::Row| r.communication_s + r.sender_sync_s + r.receiver_sync_s;
    Ordered(
        rows.into_iter()
            .map(|r| (r.site.clone(), total(&r)))
            .collect(),
    )
}

/// The prediction, observed as the replay goes: its timeline written into `file` where there
/// is one, the events kept for the critical path where it is asked for (its composition comes
/// back with the prediction), the calls summed by routine and size where they are (`asks`:
/// the critical path, the calls). The timeline is ended whatever the replay gives: a deadlock's
/// shows the calls up to where its ranks stopped, and says why in its `otherData`.
#[allow(clippy::too_many_arguments)]
fn observed(
    path: &std::path::Path,
    file: Option<&std::path::Path>,
    (critical, calls): (bool, bool),
    cut: timeline::Cut,
    trace: &trace::Trace,
    resolved: &ResolvedModel,
    links: Option<&Links>,
    coll: &Choice,
    progress: &(dyn Fn(u64) + Sync),
    symbolizer: &mut Symbolizer,
) -> Result<Observed, Error> {
    let n = trace.nranks() as u32;
    if let Some((_, b)) = cut.ranks.iter().flatten().find(|(_, b)| *b >= n) {
        return Err(Error::Usage(format!(
            "--ranks: rank {b} is not in the trace (ranks 0–{})",
            n.saturating_sub(1)
        )));
    }
    let name = path.display().to_string();
    let graph = loggps_predict::graph::build(trace, &name)?;
    let cannot = |f: &std::path::Path, e: std::io::Error| {
        Error::Io(format!("cannot write {}: {e}", f.display()))
    };
    let tl = match file {
        Some(f) => {
            let (f, proto) = timeline_file(f, trace, &cut);
            let out = std::fs::File::create(&f).map_err(|e| cannot(&f, e))?;
            let w = std::io::BufWriter::new(out);
            let names = trace
                .sites
                .as_ref()
                .map(|s| callsites::names(s, symbolizer));
            let tl = match proto {
                false => {
                    let tl = timeline::Timeline::new(trace, &graph, cut, w);
                    let tl = tl.map_err(|e| cannot(&f, e))?;
                    Tl::Json(match names {
                        Some(n) => tl.with_sites(n),
                        None => tl,
                    })
                }
                true => {
                    let tl = perfetto::Perfetto::new(trace, &graph, cut, w);
                    let tl = tl.map_err(|e| cannot(&f, e))?;
                    Tl::Proto(match names {
                        Some(n) => tl.with_sites(n),
                        None => tl,
                    })
                }
            };
            Some((tl, f))
        }
        None => None,
    };
    let record = critical.then(|| Record::new(trace));
    let sums = calls.then(|| report::calls::Calls::new(trace));
    let model = resolved.model();
    let observe = |steps: &[loggps_predict::replay::Step]| {
        match &tl {
            Some((Tl::Json(t), _)) => t.observe(steps),
            Some((Tl::Proto(t), _)) => t.observe(steps),
            None => {}
        }
        if let Some(r) = &record {
            r.observe(steps);
        }
        if let Some(c) = &sums {
            c.observe(steps);
        }
    };
    let prediction = loggps_predict::replay::replay_linked(
        trace,
        &graph,
        &model,
        links,
        coll,
        &name,
        progress,
        Some(&observe),
    );
    let path = match (&prediction, &record) {
        (Ok(p), Some(r)) => Some(CriticalPath::find(trace, &graph, r, p, &model, links, coll)),
        _ => None,
    };
    let composition = path.as_ref().map(|c| c.composition(trace));
    if let Some((tl, f)) = tl {
        match (&tl, &path) {
            (Tl::Json(t), Some(c)) => t.critical(c),
            (Tl::Proto(t), Some(c)) => t.critical(c),
            _ => {}
        }
        let other = match &prediction {
            Ok(p) => {
                let report = Report::new(
                    &name,
                    &trace.meta.library,
                    trace.total_events(),
                    p,
                    resolved,
                );
                serde_json::json!({
                    "trace": name,
                    "model": report.model,
                    "progress": report.progress,
                    "parameters": report.params,
                    "predicted_s": report.predicted_s,
                    "measured_s": report.measured_s,
                    "error_pct": report.error_pct,
                    "tracks": "per rank: predicted (tid 0: calls, their sender and receiver synchronization, computation), measured (tid 1), critical path (tid 2, with --critical-path)",
                })
            }
            Err(e) => serde_json::json!({ "trace": name, "error": e.to_string() }),
        };
        let done = match tl {
            Tl::Json(t) => t.finish(&other).map(|_| ()),
            Tl::Proto(t) => t.finish(&other).map(|_| ()),
        };
        done.map_err(|e| cannot(&f, e))?;
    }
    Ok((prediction, composition, sums.map(|c| c.rows())))
}

/// What [`observed`] gives: the prediction, the critical path's composition, the calls by
/// routine and size.
type Observed = (
    Result<Prediction, Error>,
    Option<Composition>,
    Option<Vec<report::calls::CallRow>>,
);

/// A timeline being written, in the Chrome JSON or Perfetto's protobuf format.
enum Tl<'a> {
    Json(timeline::Timeline<'a, std::io::BufWriter<std::fs::File>>),
    Proto(perfetto::Perfetto<'a, std::io::BufWriter<std::fs::File>>),
}

/// Bytes the timeline of one event takes, about, as JSON and as protobuf: its slices,
/// synchronization and arrows (tests/bench/RESULTS.md: JSON 467–540 on the dissemination and
/// the case study, 150 on a trace of Test calls; protobuf 160–163).
const JSON_PER_EVENT: u64 = 450;
const PROTO_PER_EVENT: u64 = 160;

/// The most JSON a timeline is written as: Perfetto's UI parses a JSON trace inside its
/// WebAssembly heap (4 GB at most), which holds about this much of it.
/// `LOGGPS_TIMELINE_JSON_MAX` (bytes) sets another bound.
const JSON_MAX: u64 = 1 << 30;

/// The timeline's file and whether it is Perfetto's protobuf: where its name asks for it
/// (`.perfetto-trace`, `.pftrace`, `.pb`), or where the JSON would be larger than Perfetto's UI
/// opens (then written beside it as `.perfetto-trace`, said in a warning); a warning too where
/// even that is larger, with how to cut it.
fn timeline_file(
    f: &std::path::Path,
    trace: &trace::Trace,
    cut: &timeline::Cut,
) -> (std::path::PathBuf, bool) {
    let events: u64 = (0..trace.nranks())
        .filter(|&r| cut.keeps_rank(r as u32))
        .map(|r| trace.rank(r).len() as u64)
        .sum();
    let gb = |b: u64| format!("{:.1} GB", b as f64 / 1e9);
    let max = std::env::var("LOGGPS_TIMELINE_JSON_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(JSON_MAX);
    let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
    let asked = matches!(ext, "perfetto-trace" | "pftrace" | "pb");
    let mut out = (f.to_path_buf(), asked);
    let json = events.saturating_mul(JSON_PER_EVENT);
    if !asked && json > max {
        out = (f.with_extension("perfetto-trace"), true);
        warn(format!(
            "--timeline {}: as JSON it would take about {} ({events} events{}), more than \
             Perfetto's UI opens ({}): written in Perfetto's own format to {} instead",
            f.display(),
            gb(json),
            if cut.window_ns.is_some() {
                " before --window"
            } else {
                ""
            },
            gb(max),
            out.0.display()
        ));
    }
    let proto = events.saturating_mul(PROTO_PER_EVENT);
    if out.1 && proto > 2 * JSON_MAX {
        warn(format!(
            "--timeline {}: about {} in Perfetto's format, which its UI may not hold (its \
             memory is 4 GB at most): cut it with --window T0:T1 or --ranks LIST, or open it \
             with Perfetto's trace_processor",
            out.0.display(),
            gb(proto)
        ));
    }
    out
}
