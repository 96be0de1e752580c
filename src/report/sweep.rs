//! A what-if sweep (`predict --sweep NAME=V1,V2,…`): one row per value of the swept parameter
//! (or algorithm of a collective), with the predicted runtime, its ratio to the first value's,
//! and the average rank's parts.

use super::{
    Format, ParamUsed, Parts, average, indexmap_like::Ordered, model_line, params_used, progress,
};
use crate::model::ResolvedModel;
use crate::replay::Prediction;
use crate::trace::Trace;
use serde::Serialize;
use std::fmt;
use std::io::{self, Write};

/// How much of a failed value's error the table shows.
const ERROR_CHARS: usize = 90;

/// A value the sweep gives: a parameter's number, or the name of a collective's algorithm
/// (`tuned`: the one Open MPI 4.1's rules pick for each call's size).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Number(f64),
    Algorithm(&'static str),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Number(v) => write!(f, "{v}"),
            Value::Algorithm(a) => f.write_str(a),
        }
    }
}

/// One value of the swept parameter and what the replay made of it.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub value: Value,
    /// None where the replay failed (`error` says why: a deadlock under rendezvous, say).
    pub predicted_s: Option<f64>,
    pub error_pct: Option<f64>,
    /// The predicted runtime over the first value's that replayed.
    pub vs_first: Option<f64>,
    /// The parts averaged over ranks.
    pub average: Option<Parts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What its replay warned of (a collective replayed as measured, not by the algorithm
    /// swept, say).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl Point {
    pub fn of(value: Value, pred: &Prediction) -> Point {
        Point {
            value,
            predicted_s: Some(pred.predicted_ns * 1e-9),
            error_pct: Some(pred.error_pct()),
            vs_first: None,
            average: Some(average(pred)),
            error: None,
            warnings: pred.warnings.clone(),
        }
    }

    pub fn failed(value: Value, error: &str) -> Point {
        Point {
            value,
            predicted_s: None,
            error_pct: None,
            vs_first: None,
            average: None,
            error: Some(error.to_string()),
            warnings: Vec::new(),
        }
    }
}

/// Everything a sweep's report shows.
#[derive(Clone, Debug, Serialize)]
pub struct SweepReport {
    pub trace: String,
    pub library: String,
    pub events: u64,
    pub ranks: usize,
    pub measured_s: f64,
    pub model: String,
    /// Where messages move: `async` or `calls` ([`super::Report::progress`]).
    pub progress: &'static str,
    /// The share of a rendezvous payload on its sender's CPU
    /// ([`super::Report::rendezvous_sender`]).
    #[serde(serialize_with = "super::sender_json")]
    pub rendezvous_sender: Option<crate::model::BySize>,
    /// The swept parameter's name.
    pub parameter: String,
    /// The other parameters, as every value used them.
    pub params: Ordered<ParamUsed>,
    /// Each set scaled to the run's message speed, in words ([`super::Report::at_run_speed`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub at_run_speed: Vec<String>,
    pub points: Vec<Point>,
}

impl SweepReport {
    /// The report of `points` over `trace` (measured `measured_s`), under `model` with any
    /// value of `parameter`.
    pub fn new(
        path: &str,
        trace: &Trace,
        model: &ResolvedModel,
        parameter: &str,
        measured_s: f64,
        mut points: Vec<Point>,
    ) -> SweepReport {
        let first = points.iter().find_map(|p| p.predicted_s);
        for p in &mut points {
            p.vs_first = p.predicted_s.zip(first).map(|(t, f)| t / f);
        }
        let mut params = params_used(model);
        params.0.retain(|(n, _)| n != parameter);
        SweepReport {
            trace: path.to_string(),
            library: trace.meta.library.clone(),
            events: trace.total_events(),
            ranks: trace.nranks(),
            measured_s,
            model: model.model().name().to_string(),
            progress: progress(model),
            rendezvous_sender: super::rendezvous_sender(model),
            parameter: parameter.to_string(),
            params,
            at_run_speed: Vec::new(),
            points,
        }
    }

    pub fn write(&self, format: Format, out: &mut dyn Write) -> io::Result<()> {
        match format {
            Format::Table => self.table(out),
            Format::Json => {
                serde_json::to_writer_pretty(&mut *out, self)?;
                writeln!(out)
            }
            Format::Csv => self.csv(out),
        }
    }

    fn table(&self, out: &mut dyn Write) -> io::Result<()> {
        let (trace, library) = (&self.trace, &self.library);
        let model = model_line(&self.model, self.progress, self.rendezvous_sender);
        super::table::header(out, trace, self.ranks, self.events, library, &model)?;
        let swept = format!("{} swept", self.parameter);
        super::table::parameters(out, &self.params, Some(&swept))?;
        writeln!(out, "measured   {:.6} s", self.measured_s)?;
        super::table::run_speed(out, &self.at_run_speed, "every value ")?;
        writeln!(out)?;
        // A value whose replay warned is marked.
        let mark = |p: &Point| if p.warnings.is_empty() { "" } else { "*" };
        let shown: Vec<String> = (self.points.iter())
            .map(|p| format!("{}{}", p.value, mark(p)))
            .collect();
        let w = (shown.iter().chain([&self.parameter]))
            .map(|v| v.chars().count())
            .fold(12, usize::max);
        // The error's column as wide as its widest (a trace of a few nanoseconds measured is
        // off by millions of percent).
        let errors: Vec<String> = (self.points.iter())
            .map(|p| p.error_pct.map_or(String::new(), |e| format!("{e:+.2}%")))
            .collect();
        let ew = errors.iter().map(String::len).fold(10, usize::max);
        writeln!(
            out,
            "{:>w$} {:>13} {:>9} {:>ew$} | {:>13} {:>13} {:>13} {:>13}",
            self.parameter,
            "predicted (s)",
            "vs first",
            "error",
            "computation",
            "communication",
            "sender sync",
            "receiver sync"
        )?;
        for ((p, value), e) in self.points.iter().zip(&shown).zip(&errors) {
            write!(out, "{value:>w$}")?;
            match (p.predicted_s, p.vs_first, &p.average) {
                (Some(t), Some(x), Some(a)) => writeln!(
                    out,
                    " {t:>13.6} {x:>8.3}× {e:>ew$} | {:>13.6} {:>13.6} {:>13.6} {:>13.6}",
                    a.computation_s, a.communication_s, a.sender_sync_s, a.receiver_sync_s
                )?,
                _ => {
                    // Its start: the whole message went to stderr, and is in JSON and CSV.
                    let error = p.error.as_deref().unwrap_or("");
                    let start: String = error.chars().take(ERROR_CHARS).collect();
                    let cut = if start.len() < error.len() {
                        "… (stderr has the rest)"
                    } else {
                        ""
                    };
                    writeln!(out, " {:>13} {start}{cut}", "—")?
                }
            }
        }
        if self.points.iter().any(|p| !p.warnings.is_empty()) {
            writeln!(
                out,
                "\n* its replay gave warnings (on stderr; in JSON and CSV too)"
            )?;
        }
        writeln!(
            out,
            "\n(computation … receiver sync: the average rank's, in seconds; --format json or csv \
             for scripts)"
        )
    }

    fn csv(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "{},predicted_s,vs_first,error_pct,end_s,computation_s,communication_s,sender_sync_s,\
             receiver_sync_s,error,warnings",
            self.parameter
        )?;
        let opt = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
        for p in &self.points {
            let parts = match &p.average {
                Some(a) => format!(
                    "{},{},{},{},{}",
                    a.end_s, a.computation_s, a.communication_s, a.sender_sync_s, a.receiver_sync_s
                ),
                None => ",,,,".to_string(),
            };
            // The error and the warnings are quoted, their quotes doubled (RFC 4180).
            let quoted = |e: &str| format!("\"{}\"", e.replace('"', "\"\""));
            let error = p.error.as_deref().map_or(String::new(), quoted);
            let warnings = match &p.warnings[..] {
                [] => String::new(),
                w => quoted(&w.join("; ")),
            };
            writeln!(
                out,
                "{},{},{},{},{parts},{error},{warnings}",
                p.value,
                opt(p.predicted_s),
                opt(p.vs_first),
                opt(p.error_pct)
            )?;
        }
        Ok(())
    }
}
