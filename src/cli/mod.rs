//! The command line: clap definitions and the thin glue from flags to the pipeline.

#![allow(non_snake_case)] // flags named as the papers' parameters: --L --o --Os --Or --Gs --Gl --s --S --g --G

mod collective;
mod progress;

use clap::{Args, Parser, Subcommand, ValueEnum};
use loggps_predict::calibrate::{self, Calibration};
use loggps_predict::casestudy::{
    self,
    check::{Baseline, Entry},
};
use loggps_predict::collectives::traced::{Choice, TUNED, algorithm_or_tuned, op_of};
use loggps_predict::collectives::{OPS, Op};
use loggps_predict::error::Error;
use loggps_predict::model::{self, LogGpFlags, Overrides, ResolvedModel};
use loggps_predict::report::sweep::Value;
use loggps_predict::report::{self, Format, Report, info::Info};
use loggps_predict::trace::{self, Routine, Trace, binary, text};
use progress::Progress;
use rayon::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(
    name = "loggps-predict",
    version,
    about = "Predict an MPI program's runtime from its trace under the LogGPS model",
    long_about = "Predict an MPI program's runtime from its trace under the LogGPS model (Ino et al., PPoPP 2001).\n\n\
        The measured computation is kept; every MPI routine's duration becomes the model's cost, including the \
        synchronization the rendezvous protocol forces on messages above the eager limit S. The report gives the \
        predicted and measured runtime and, per rank, computation, communication, sender and receiver synchronization.\n\n\
        Parameters come from --params FILE, else --platform, else the trace itself; each can be overridden by its own \
        flag, which is how what-if questions are asked; --sweep asks one for several values, or for several \
        algorithms of a collective, the trace loaded and matched once:\n\n  loggps-predict trace.bin --S 65536\n  \
        loggps-predict trace.bin --sweep S=4096,16384,65536\n  loggps-predict trace.bin --sweep allreduce=tuned,ring,rabenseifner\n\n\
        --model loggp replays the trace under LogGP (Alexandrov et al. 1995) instead: o + (k−1)G + L + o per \
        k-byte message, a gap g between consecutive sends and between consecutive receives at a rank, no \
        rendezvous. It takes --L --o --g --G; those not given come from the LogGPS parameters above (G = Gs), \
        else are 0 (L must come from somewhere):\n\n  loggps-predict trace.bin --model loggp --L 5000 --o 1500 --g 3000 --G 0.1",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub predict: PredictArgs,
    /// Worker threads for loading and replay (default: all cores); 1 gives the same result
    #[arg(long, value_name = "N", global = true)]
    pub threads: Option<usize>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Predict a trace's runtime (what plain `loggps-predict TRACE` does).
    Predict(PredictArgs),
    /// Summarize a trace: ranks, events per routine, bytes, message sizes, measured runtime.
    Info {
        /// Trace file (binary or text)
        trace: PathBuf,
        /// Output format (json: for scripts)
        #[arg(long, value_enum, default_value_t = InfoFormat::Table)]
        format: InfoFormat,
    },
    /// Convert a trace between the binary and the text encoding (exact both ways).
    Convert {
        /// Trace to read (binary or text)
        input: PathBuf,
        /// Trace to write; the encoding follows the extension (.txt: text, else binary) unless --to says
        output: PathBuf,
        #[arg(long, value_enum)]
        to: Option<Encoding>,
        /// Overwrite OUTPUT if it exists
        #[arg(long)]
        force: bool,
        /// Embed these LogGPS parameters (a TOML as `calibrate` writes) in OUTPUT
        #[arg(long, value_name = "FILE")]
        params: Option<PathBuf>,
    },
    /// Measure this machine's LogGPS parameters with an MPI round-trip program (paper §4.3).
    Calibrate(CalibrateArgs),
    /// The paper's Table 7 and Fig. 6 for a directory of recorded traces with a MANIFEST.tsv.
    Table7 {
        /// Directory with the traces and MANIFEST.tsv (as traces/record.sh writes them)
        dir: PathBuf,
        /// Output format (json: for scripts)
        #[arg(long, value_enum, default_value_t = InfoFormat::Table)]
        format: InfoFormat,
        /// Also draw Fig. 6 (stacked bars of the breakdown) into this SVG file
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
    },
    Collective(collective::CollectiveArgs),
    /// Write a synthetic trace of a communication pattern, streaming (up to 2^20 ranks, 10^12 events).
    Synth {
        #[arg(long, value_enum)]
        pattern: loggps_predict::synth::Pattern,
        /// Number of ranks, 1 to 2^20
        #[arg(long)]
        ranks: u32,
        /// How many times the pattern repeats (dissemination: barriers; gauss: matrix columns;
        /// allreduce: calls; collectives: turns of three calls)
        #[arg(long, default_value_t = 1)]
        iterations: u32,
        /// Bytes per message (gauss: the longest pivot row)
        #[arg(long, default_value_t = 8)]
        bytes: u64,
        /// Computation between iterations, ns
        #[arg(long, value_name = "NS", default_value_t = 0)]
        compute: u64,
        /// Output (binary trace); an existing file is kept unless --force
        #[arg(short, long)]
        output: PathBuf,
        /// Overwrite the output if it exists
        #[arg(long)]
        force: bool,
    },
    /// Time the pipeline's phases on a trace (parse, graph, replay) and print figures as JSON.
    ///
    /// Per phase: seconds and events/s (parse also GB/s), peak resident memory after it
    /// (`peak_bytes_per_event_by_phase`), and the heap allocations it made (`allocations`,
    /// `allocations_per_event`); then end to end. `tests/bench/run.sh` runs it over the scale
    /// benchmark's synthetic traces.
    Bench {
        /// Trace to load, match and replay
        trace: PathBuf,
        #[command(flatten)]
        params: ParamArgs,
        /// Collectives, as for a prediction: modeled, measured or OP=ALGORITHM,…
        #[arg(long, value_name = "SPEC", default_value = "modeled")]
        coll: String,
    },
    /// Compare predictions with a baseline (for CI): exit 1 and a table of what drifted.
    Check {
        /// Traces to predict
        #[arg(required = true)]
        traces: Vec<PathBuf>,
        /// Baseline JSON (written by --update)
        #[arg(long, value_name = "FILE")]
        baseline: PathBuf,
        /// Largest drift allowed: percent of the predicted runtime, and percentage points of the synchronization share
        #[arg(long, value_name = "PCT", default_value_t = 1.0)]
        tolerance: f64,
        /// Write the baseline from these predictions instead of comparing
        #[arg(long)]
        update: bool,
        #[command(flatten)]
        params: ParamArgs,
    },
}

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Ranks (the round trip runs on exactly 2)
    #[arg(long, default_value_t = 2)]
    pub np: u32,
    /// MPI launcher with its own options, split at spaces (e.g. "mpirun --oversubscribe")
    #[arg(long, default_value = "mpirun")]
    pub mpirun: String,
    /// Where to write the parameters (TOML, read by --params)
    #[arg(short, long, default_value = "loggps-params.toml")]
    pub output: PathBuf,
    /// Where to draw measured vs modeled RTT (default: OUTPUT with .svg)
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Also write every measured point and the model's value (TSV)
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    /// The round-trip program (built by `make -C tracer`)
    #[arg(long, default_value = "tracer/loggps-rtt")]
    pub rtt: PathBuf,
    /// The tracer library, used to read the eager limit the MPI library reports
    #[arg(long, default_value = "tracer/libloggps-trace.so")]
    pub tracer: PathBuf,
    /// Largest message size measured, bytes
    #[arg(long, default_value_t = 4 << 20)]
    pub max_bytes: u64,
    /// The imbalance W, ns (it hides the transfer of messages that take less)
    #[arg(long, default_value_t = 500_000)]
    pub imbalance: u64,
    /// Repetitions per point at least; the median is kept
    #[arg(long, default_value_t = 31)]
    pub reps: u32,
    /// More repetitions while a point has taken less than this, ms
    #[arg(long, default_value_t = 30.0)]
    pub time_ms: f64,
    /// Sizes per octave in the first sweep
    #[arg(long, default_value_t = 4)]
    pub per_octave: u32,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum InfoFormat {
    Table,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
pub enum Encoding {
    Binary,
    Text,
}

/// Where the LogGPS parameters come from, and per-parameter overrides.
#[derive(Args, Debug, Clone)]
pub struct ParamArgs {
    /// LogGPS parameters from a TOML file (names as in the paper: L o Os Or Gs Gl s S)
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,
    /// Use the paper's parameters of a platform (Table 5)
    #[arg(long, value_parser = ["cenju4", "myrinet", "fast-ethernet"])]
    pub platform: Option<String>,
    /// Latency, ns
    #[arg(long = "L", value_name = "NS", allow_hyphen_values = true)]
    pub L: Option<f64>,
    /// Overhead per message (first byte), ns
    #[arg(long = "o", value_name = "NS", allow_hyphen_values = true)]
    pub o: Option<f64>,
    /// Send overhead per further byte, ns/byte
    #[arg(long = "Os", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub Os: Option<f64>,
    /// Receive overhead per further byte, ns/byte
    #[arg(long = "Or", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub Or: Option<f64>,
    /// Gap per byte for the first s bytes, ns/byte
    #[arg(long = "Gs", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub Gs: Option<f64>,
    /// Gap per byte beyond s bytes, ns/byte (may be negative)
    #[arg(long = "Gl", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub Gl: Option<f64>,
    /// Bytes above which a message goes in several packets
    #[arg(long = "s", value_name = "BYTES")]
    pub s: Option<u64>,
    /// Eager limit: bytes above which the rendezvous protocol is used
    #[arg(long = "S", value_name = "BYTES")]
    pub S: Option<u64>,
}

impl ParamArgs {
    /// The parameters for a trace embedding `embedded`; warnings about them are printed once
    /// per distinct parameter set.
    fn resolve(&self, embedded: Option<model::Params>) -> Result<model::Resolved, Error> {
        let ov = Overrides {
            L: self.L,
            o: self.o,
            Os: self.Os,
            Or: self.Or,
            Gs: self.Gs,
            Gl: self.Gl,
            s: self.s,
            S: self.S,
        };
        let r = model::resolve(
            self.params.as_deref(),
            self.platform.as_deref(),
            embedded,
            &ov,
        )?;
        static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
        for w in r.params.warnings() {
            if !warned.contains(&w) {
                warn(format!("parameters: {w}"));
                warned.push(w);
            }
        }
        Ok(r)
    }
}

/// The cost model and LogGP's own parameters (`predict` and `collective`).
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Cost model; loggp takes --L --o --g --G, and none of LogGPS's --Os --Or --Gs --Gl --s --S
    #[arg(long, value_enum, default_value_t = ModelKind::Loggps)]
    pub model: ModelKind,
    /// LogGP: gap between consecutive sends and between consecutive receives at a rank, ns (default 0)
    #[arg(long = "g", value_name = "NS", allow_hyphen_values = true)]
    pub g: Option<f64>,
    /// LogGP: gap per byte, ns/byte (default: Gs of --params/--platform/the trace, else 0)
    #[arg(long = "G", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub G: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
pub enum ModelKind {
    /// LogGPS (shared/MODEL.md), the replay's cost table, rendezvous above S included
    Loggps,
    /// LogGP (Alexandrov et al. 1995): o + (k−1)G + L + o per message, gap g, no rendezvous
    Loggp,
}

impl ModelArgs {
    /// The model and its parameters for a trace embedding `embedded`: LogGPS as
    /// [`ParamArgs::resolve`] says, or LogGP by [`model::resolve_loggp`]. A flag of the other
    /// model is a usage error.
    fn resolve(
        &self,
        p: &ParamArgs,
        embedded: Option<model::Params>,
    ) -> Result<ResolvedModel, Error> {
        match self.model {
            ModelKind::Loggps => {
                if self.g.is_some() || self.G.is_some() {
                    return Err(Error::Usage(
                        "--g and --G are LogGP parameters: add --model loggp (LogGPS disregards g and splits G into --Gs/--Gl)".into(),
                    ));
                }
                Ok(ResolvedModel::LogGps(p.resolve(embedded)?))
            }
            ModelKind::Loggp => {
                let loggps_only = [
                    ("--Os", p.Os.is_some()),
                    ("--Or", p.Or.is_some()),
                    ("--Gs", p.Gs.is_some()),
                    ("--Gl", p.Gl.is_some()),
                    ("--s", p.s.is_some()),
                    ("--S", p.S.is_some()),
                ];
                if let Some((flag, _)) = loggps_only.iter().find(|(_, set)| *set) {
                    return Err(Error::Usage(format!(
                        "{flag} is a LogGPS parameter; LogGP takes --L --o --g --G"
                    )));
                }
                let flags = LogGpFlags {
                    L: p.L,
                    o: p.o,
                    g: self.g,
                    G: self.G,
                };
                Ok(ResolvedModel::LogGp(model::resolve_loggp(
                    p.params.as_deref(),
                    p.platform.as_deref(),
                    embedded,
                    &flags,
                )?))
            }
        }
    }
}

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// Trace file (binary .bin or text .txt)
    #[arg(required = true)]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub params: ParamArgs,
    /// Collectives: `modeled` (expanded into point-to-point messages by the algorithm Open MPI
    /// 4.1's tuned rules pick for the call's size), `measured` (traced durations), or
    /// OP=ALGORITHM,… (modeled, e.g. bcast=postal,allreduce=rabenseifner; tuned: Open MPI's
    /// choice for that operation)
    #[arg(long, value_name = "SPEC", default_value = "modeled")]
    pub coll: String,
    /// Cost of reduction arithmetic in modeled collectives, ns per byte
    #[arg(long, value_name = "NS_PER_BYTE", default_value_t = 0.0)]
    pub gamma: f64,
    /// What-if sweep: one prediction per value of one parameter of the model, or per algorithm
    /// of one collective (tuned: Open MPI 4.1's choice by size), the trace loaded and matched
    /// once; a row per value (e.g. --sweep S=4096,16384,65536, --sweep allreduce=tuned,ring)
    #[arg(long, value_name = "NAME=V1,V2,…")]
    pub sweep: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Prints a warning on stderr.
fn warn(msg: String) {
    eprintln!("warning: {msg}");
}

fn load(path: &Path) -> Result<Trace, Error> {
    load_then(path, trace::Then::LOAD)
}

/// [`load`], for a caller that goes on as `then` says.
fn load_then(path: &Path, then: trace::Then) -> Result<Trace, Error> {
    let label = format!("loading {}", path.display());
    Ok(Progress::around(&label, || {
        trace::load_then(path, &mut warn, then)
    })?)
}

/// Runs the command line; the error's message is what the user sees.
pub fn run(cli: Cli) -> Result<(), Error> {
    let threads = cli.threads;
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        if n == 0 {
            return Err(Error::Usage("--threads must be at least 1".into()));
        }
        pool = pool.num_threads(n);
    }
    let pool = pool
        .build()
        .map_err(|e| Error::Usage(format!("cannot start {threads:?} threads: {e}")))?;
    pool.install(|| match cli.command {
        Some(Command::Predict(a)) => predict(&a),
        None => predict(&cli.predict),
        Some(Command::Info { trace, format }) => info(&trace, format),
        Some(Command::Convert {
            input,
            output,
            to,
            force,
            params,
        }) => convert(&input, &output, to, force, params.as_deref()),
        Some(Command::Calibrate(a)) => calibrate(&a),
        Some(Command::Synth {
            pattern,
            ranks,
            iterations,
            bytes,
            compute,
            output,
            force,
        }) => synth(
            &loggps_predict::synth::Spec {
                pattern,
                ranks,
                iterations,
                bytes,
                compute_ns: compute,
            },
            &output,
            force,
        ),
        Some(Command::Bench {
            trace,
            params,
            coll,
        }) => bench(&trace, &params, &coll),
        Some(Command::Collective(a)) => collective::run(&a),
        Some(Command::Table7 { dir, format, svg }) => table7(&dir, format, svg.as_deref()),
        Some(Command::Check {
            traces,
            baseline,
            tolerance,
            update,
            params,
        }) => check(&traces, &baseline, tolerance, update, &params),
    })
}

fn predict(a: &PredictArgs) -> Result<(), Error> {
    let path = a.trace.as_deref().expect("clap requires TRACE");
    let mut coll = Choice::parse(&a.coll)?;
    if !a.gamma.is_finite() || a.gamma < 0.0 {
        return Err(Error::Usage(format!(
            "--gamma {} must be a finite number ≥ 0",
            a.gamma
        )));
    }
    coll.gamma_ns_per_byte = a.gamma;
    let sweep = a
        .sweep
        .as_deref()
        .map(|s| Sweep::parse(s, &a.model, &a.params, &coll))
        .transpose()?;
    let trace = load_then(path, trace::Then::PREDICT)?;
    if let Some(sweep) = sweep {
        return predict_sweep(a, &sweep, &trace, &coll);
    }
    let resolved = a.model.resolve(&a.params, trace.meta.params)?;
    let bar = Progress::new("replaying", Some(trace.total_events()));
    let prediction =
        loggps_predict::predict_with(path, &trace, &resolved.model(), &coll, &|n| bar.set(n));
    bar.finish();
    let prediction = prediction?;
    for w in &prediction.warnings {
        warn(w.clone());
    }
    let report = Report::new(
        &path.display().to_string(),
        &trace.meta.library,
        trace.total_events(),
        &prediction,
        &resolved,
    );
    let res = to_stdout(|out| report::exporter(a.format).write(&report, out));
    quiet_pipe(res, "writing the report")
}

/// `--sweep NAME=V1,V2,…`: one parameter of the model and the values it takes in turn, or one
/// collective operation and the algorithms it is modeled by in turn.
struct Sweep {
    name: &'static str,
    /// The operation whose algorithm is swept (None: a parameter).
    op: Option<Op>,
    values: Vec<Value>,
}

impl Sweep {
    /// Checks the name against the model's parameters (not one also given by its own flag) and
    /// the values as that flag would; or against the collective operations (modeled, and with
    /// no algorithm of their own in `coll`) and the values against the operation's algorithms.
    fn parse(
        spec: &str,
        model: &ModelArgs,
        params: &ParamArgs,
        coll: &Choice,
    ) -> Result<Sweep, Error> {
        let usage = |why: String| Error::Usage(format!("--sweep {spec}: {why}"));
        let (name, list) = spec.split_once('=').ok_or_else(|| {
            usage(
                "expected NAME=V1,V2,… (e.g. S=4096,16384,65536 or allreduce=ring,rabenseifner)"
                    .into(),
            )
        })?;
        let list: Vec<&str> = list.split(',').map(str::trim).collect();
        let names: &[&'static str] = match model.model {
            ModelKind::Loggps => &model::NAMES,
            ModelKind::Loggp => &model::LOGGP_NAMES,
        };
        let Some(&name) = names.iter().find(|&&n| n == name.trim()) else {
            let op = Op::parse(name.trim()).map_err(|_| {
                usage(format!(
                    "{} has no parameter {:?}; it has {}, and a collective's algorithms are swept \
                     by its name ({})",
                    match model.model {
                        ModelKind::Loggps => "LogGPS",
                        ModelKind::Loggp => "LogGP",
                    },
                    name.trim(),
                    names.join(" "),
                    OPS.map(|(_, n, _)| n).join(" ")
                ))
            })?;
            return Sweep::algorithms(op, &list, coll).map_err(|e| usage(e.to_string()));
        };
        if Sweep::set(model, params, name, 0.0).is_none() {
            return Err(usage(format!(
                "--{name} sets the parameter the sweep varies; give one or the other"
            )));
        }
        let integer = matches!(name, "s" | "S");
        let value = |&v: &&str| {
            let x: f64 = (v.parse()).map_err(|_| usage(format!("{v:?} is not a number")))?;
            if integer && !(x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(63)) {
                Err(usage(format!(
                    "{name} takes whole numbers of bytes ≥ 0, not {v}"
                )))
            } else if !x.is_finite() {
                Err(usage(format!("{v} is not a finite number")))
            } else {
                Ok(Value::Number(x))
            }
        };
        let values = list.iter().map(value).collect::<Result<_, _>>()?;
        Ok(Sweep {
            name,
            op: None,
            values,
        })
    }

    /// The sweep of `op`'s algorithms `list` (each of them, or [`TUNED`]).
    fn algorithms(op: Op, list: &[&str], coll: &Choice) -> Result<Sweep, Error> {
        if !coll.modeled {
            return Err(Error::Usage(format!(
                "--coll measured keeps the traced durations; a sweep of {}'s algorithms models \
                 them",
                op.name()
            )));
        }
        if coll.overrides.iter().any(|(o, _)| *o == op) {
            return Err(Error::Usage(format!(
                "--coll sets the algorithm of {} the sweep varies; give one or the other",
                op.name()
            )));
        }
        let not_one = |v: &str| {
            Error::Usage(format!(
                "{v:?} is not an algorithm of {}: it has {} (and {TUNED}: Open MPI 4.1's choice \
                 for each call's size)",
                op.name(),
                op.algorithms().join(" ")
            ))
        };
        let value = |&v: &&str| {
            algorithm_or_tuned(op, v)
                .map(Value::Algorithm)
                .map_err(|_| not_one(v))
        };
        Ok(Sweep {
            name: op.name(),
            op: Some(op),
            values: list.iter().map(value).collect::<Result<_, _>>()?,
        })
    }

    /// The model's and the parameters' flags with `name` set to `v`; None where a flag of its
    /// own sets it already.
    fn set(
        model: &ModelArgs,
        params: &ParamArgs,
        name: &str,
        v: f64,
    ) -> Option<(ModelArgs, ParamArgs)> {
        let (mut m, mut p) = (model.clone(), params.clone());
        let slot = match name {
            "L" => &mut p.L,
            "o" => &mut p.o,
            "Os" => &mut p.Os,
            "Or" => &mut p.Or,
            "Gs" => &mut p.Gs,
            "Gl" => &mut p.Gl,
            "g" => &mut m.g,
            "G" => &mut m.G,
            "s" | "S" => {
                let slot = if name == "s" { &mut p.s } else { &mut p.S };
                return slot.replace(v as u64).is_none().then_some((m, p));
            }
            _ => unreachable!("a parameter name checked by Sweep::parse"),
        };
        slot.replace(v).is_none().then_some((m, p))
    }

    /// The model's flags and the collectives' choice for `value`.
    fn at(&self, a: &PredictArgs, coll: &Choice, value: Value) -> (ModelArgs, ParamArgs, Choice) {
        match (self.op, value) {
            (None, Value::Number(v)) => {
                let (m, p) =
                    Sweep::set(&a.model, &a.params, self.name, v).expect("checked by parse");
                (m, p, coll.clone())
            }
            (Some(op), Value::Algorithm(algo)) => (
                a.model.clone(),
                a.params.clone(),
                coll.clone().with(op, algo),
            ),
            _ => unreachable!("a parameter's values are numbers, an operation's algorithms"),
        }
    }
}

/// `predict --sweep`: the trace matched once, then replayed once per value.
fn predict_sweep(
    a: &PredictArgs,
    sweep: &Sweep,
    trace: &Trace,
    coll: &Choice,
) -> Result<(), Error> {
    let path = a.trace.as_deref().expect("clap requires TRACE");
    let name = path.display().to_string();
    let graph = loggps_predict::graph::build(trace, &name)?;
    if let Some(op) = sweep.op {
        let calls = |r: &Routine| op_of(*r) == Some(op);
        if !trace.events.routines().par_iter().any(calls) {
            warn(format!(
                "the trace has no {} call: every algorithm predicts the same",
                op.name()
            ));
        }
    }
    let (mut points, mut first_error) = (Vec::new(), None);
    let (mut model, mut measured_s) = (None, f64::NAN);
    for (k, &v) in sweep.values.iter().enumerate() {
        let (m, p, coll) = sweep.at(a, coll, v);
        let resolved = m.resolve(&p, trace.meta.params)?;
        let label = format!(
            "replaying {}={v} ({} of {})",
            sweep.name,
            k + 1,
            sweep.values.len()
        );
        let bar = Progress::new(&label, Some(trace.total_events()));
        let prediction = loggps_predict::replay::replay_with(
            trace,
            &graph,
            &resolved.model(),
            &coll,
            &name,
            &|n| bar.set(n),
        );
        bar.finish();
        let point = match prediction {
            Ok(pred) => {
                for w in &pred.warnings {
                    warn(format!("{}={v}: {w}", sweep.name));
                }
                measured_s = pred.measured_ns * 1e-9;
                report::sweep::Point::of(v, &pred)
            }
            Err(e) => {
                let point = report::sweep::Point::failed(v, &e.to_string());
                first_error.get_or_insert(e);
                point
            }
        };
        points.push(point);
        model = Some(resolved);
    }
    // Where no value replays, the sweep fails as one prediction would; else each value that
    // did not is told in full here (the table shows the start of it).
    if let Some(e) = first_error.filter(|_| points.iter().all(|p| p.predicted_s.is_none())) {
        return Err(e.into());
    }
    for p in &points {
        if let Some(e) = &p.error {
            warn(format!("{}={}: {e}", sweep.name, p.value));
        }
    }
    let model = model.expect("a sweep has a value at least");
    let report =
        report::sweep::SweepReport::new(&name, trace, &model, sweep.name, measured_s, points);
    let res = to_stdout(|out| report.write(a.format, out));
    quiet_pipe(res, "writing the report")
}

fn info(path: &Path, format: InfoFormat) -> Result<(), Error> {
    let trace = load(path)?;
    let file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let info = Info::new(&path.display().to_string(), &trace, file_bytes);
    let res = to_stdout(|out| match format {
        InfoFormat::Table => info.write_table(out),
        InfoFormat::Json => json_to(out, &info),
    });
    quiet_pipe(res, "writing the summary")
}

fn convert(
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
        trace.meta.params = Some(model::read_params_file(p)?);
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

/// Runs `write` on standard output through a buffer, flushed at the end. Standard output is
/// line-buffered: a JSON report of 262,144 ranks (14 lines each) went out one write call a line,
/// 0.65 s of a 1.47 s prediction.
fn to_stdout(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    write(&mut out)?;
    out.flush()
}

/// `value` as pretty JSON and a newline.
fn json_to(out: &mut dyn Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}

/// A reader that stops early (`| head`) is not an error.
fn quiet_pipe(res: std::io::Result<()>, what: &str) -> Result<(), Error> {
    match res {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| Error::Io(format!("{what}: {e}"))),
    }
}

fn calibrate(a: &CalibrateArgs) -> Result<(), Error> {
    let opts = calibrate::Options {
        mpirun: a.mpirun.split_whitespace().map(String::from).collect(),
        np: a.np,
        rtt: a.rtt.clone(),
        tracer: Some(a.tracer.clone()),
        max_bytes: a.max_bytes,
        imbalance_ns: a.imbalance,
        reps: a.reps,
        time_ms: a.time_ms,
        per_octave: a.per_octave,
    };
    let c = calibrate::calibrate(&opts, &mut |m| eprintln!("calibrate: {m}"))?;
    let write = |path: &Path, text: String| {
        std::fs::write(path, text)
            .map_err(|e| Error::Io(format!("{}: cannot write: {e}", path.display())))
    };
    write(&a.output, calibrate::params_file(&c))?;
    let svg = a
        .svg
        .clone()
        .unwrap_or_else(|| a.output.with_extension("svg"));
    write(&svg, calibrate::svg::chart(&c))?;
    if let Some(path) = &a.samples {
        let mut t = String::from("k\tw_ns\trtt_ns\tmodel_ns\terror_pct\toutlier\n");
        for x in &c.samples {
            let m = calibrate::fit::model_rtt(&c.fit.params, x.k, x.w_ns);
            let outlier = c.fit.outliers.contains(x);
            t.push_str(&format!(
                "{}\t{}\t{}\t{:.1}\t{:.2}\t{}\n",
                x.k,
                x.w_ns,
                x.rtt_ns,
                m,
                100.0 * (m - x.rtt_ns) / x.rtt_ns,
                outlier
            ));
        }
        write(path, t)?;
    }
    print_calibration(&c, &a.output, &svg);
    Ok(())
}

fn print_calibration(c: &Calibration, toml: &Path, svg: &Path) {
    let p = &c.fit.params;
    println!(
        "parameters  L={:.1} ns  o={:.1} ns  Os={:.4} ns/B  Or={:.4} ns/B  Gs={:.4} ns/B  Gl={:.4} ns/B  s={} B  S={} B",
        p.L, p.o, p.Os, p.Or, p.Gs, p.Gl, p.s, p.S
    );
    println!(
        "fit         {} round trips: model vs measured rms {:.2}%, max {:.2}%; {} outlier(s) dropped",
        c.samples.len(),
        100.0 * c.fit.rms_rel,
        100.0 * c.fit.max_rel,
        c.fit.outliers.len()
    );
    match (&c.reported_eager_limit, c.eager_limits_agree()) {
        (Some((name, bytes)), Some(true)) => println!(
            "eager limit measured S = {} B agrees with {name} = {bytes} B (which counts the protocol header)",
            p.S
        ),
        (Some((name, bytes)), _) => println!(
            "eager limit measured S = {} B DISAGREES with {name} = {bytes} B reported by the library",
            p.S
        ),
        (None, _) => println!(
            "eager limit measured S = {} B (the library reports none)",
            p.S
        ),
    }
    let [a0, aw] = c.fit.rendezvous_intercepts_ns;
    let [m0, mw] = c.fit.modeled_rendezvous_intercepts_ns;
    if (a0, aw) != (m0, mw) {
        println!(
            "rendezvous  the handshake is not LogGPS's: intercepts measured {a0:.0} ns (w = 0) and {aw:.0} ns (w = W), modeled 12o+6L = {m0:.0} ns and 10o+4L = {mw:.0} ns"
        );
    }
    for w in p.warnings() {
        println!("warning     {w}");
    }
    println!("wrote       {} and {}", toml.display(), svg.display());
}

fn table7(dir: &Path, format: InfoFormat, svg: Option<&Path>) -> Result<(), Error> {
    let study = Progress::around(
        &format!("predicting the traces of {}", dir.display()),
        || casestudy::study(dir, &mut |_, _| {}),
    )?;
    if let Some(path) = svg {
        std::fs::write(path, casestudy::svg::chart(&casestudy::cells(&study)))
            .map_err(|e| Error::Io(format!("{}: cannot write: {e}", path.display())))?;
    }
    let res = to_stdout(|out| match format {
        InfoFormat::Table => out.write_all(casestudy::table(&study).as_bytes()),
        InfoFormat::Json => json_to(out, &study),
    });
    quiet_pipe(res, "writing the table")
}

fn check(
    traces: &[PathBuf],
    baseline: &Path,
    tolerance: f64,
    update: bool,
    params: &ParamArgs,
) -> Result<(), Error> {
    let mut now = Vec::new();
    for path in traces {
        let trace = load_then(path, trace::Then::PREDICT)?;
        let resolved = params.resolve(trace.meta.params)?;
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

fn synth(spec: &loggps_predict::synth::Spec, output: &Path, force: bool) -> Result<(), Error> {
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

/// The process's peak resident memory so far, bytes (Linux; 0 elsewhere).
fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn bench(path: &Path, params: &ParamArgs, coll: &str) -> Result<(), Error> {
    use std::time::Instant;
    let choice = Choice::parse(coll)?;
    let name = path.display().to_string();
    let file_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let allocs = loggps_predict::memory::allocations;
    let a0 = allocs();
    let t = Instant::now();
    let trace = trace::load_then(path, &mut warn, trace::Then::PREDICT)?;
    let parse_s = t.elapsed().as_secs_f64();
    let peak_parse = peak_rss_bytes();
    let a_parse = allocs();
    let resolved = params.resolve(trace.meta.params)?;
    let t = Instant::now();
    let graph = loggps_predict::graph::build(&trace, &name)?;
    let graph_s = t.elapsed().as_secs_f64();
    let peak_graph = peak_rss_bytes();
    let a_graph = allocs();
    let t = Instant::now();
    let model = model::Model::LogGps(resolved.params);
    let prediction =
        loggps_predict::replay::replay_with(&trace, &graph, &model, &choice, &name, &|_| {})?;
    let replay_s = t.elapsed().as_secs_f64();
    let a_replay = allocs();
    let events = trace.total_events() as f64;
    let per_event = |n: u64| n as f64 / events.max(1.0);
    let total_s = parse_s + graph_s + replay_s;
    let peak = peak_rss_bytes();
    let figures = serde_json::json!({
        "trace": name,
        "ranks": trace.nranks(),
        "events": trace.total_events(),
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
    quiet_pipe(
        to_stdout(|out| json_to(out, &figures)),
        "writing the figures",
    )
}
