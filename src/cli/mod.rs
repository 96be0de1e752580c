//! The command line: clap definitions and the thin glue from flags to the pipeline, one file
//! per subcommand; the flag groups they share are in `args`.

mod args;
mod bench;
mod calibrate;
mod callsites;
mod check;
mod collective;
mod convert;
mod info;
mod predict;
mod progress;
mod sensitivity;
mod sweep;
mod synth;
mod table7;

use args::PredictArgs;
use clap::{Parser, Subcommand};
use loggps_predict::error::Error;
use loggps_predict::graph::split::Census;
use loggps_predict::trace::{self, Trace};
use progress::Progress;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

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
    /// The trace's format, where detecting it from the file is not wanted: loggps (ours),
    /// allprof (LogGOPSim's liballprof: a directory or rank 0's file), tit (SimGrid's
    /// time-independent trace), goal (LogGOPSim's GOAL schedule), dumpi (SST's DUMPI: the .meta
    /// file, rank 0's .bin or their directory), paraver (Extrae's .prv, with its .pcf beside it),
    /// otf2 (Score-P's: the archive's .otf2 file or its directory; needs the OTF2 library)
    #[arg(long, value_name = "FORMAT", global = true, value_parser = parse_format)]
    pub from: Option<trace::import::Format>,
    /// Time-independent traces: the rate a `compute` runs at, flop/s (default 1e9)
    #[arg(long, value_name = "FLOP_PER_S", global = true)]
    pub flops: Option<f64>,
    /// GOAL schedules: nanoseconds one unit of `calc` takes (default 1, LogGOPSim's unit)
    #[arg(long, value_name = "NS", global = true)]
    pub calc_ns: Option<f64>,
}

fn parse_format(s: &str) -> Result<trace::import::Format, String> {
    trace::import::Format::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = trace::import::Format::ALL
            .iter()
            .map(|f| f.name())
            .collect();
        format!("expected one of {}", names.join(", "))
    })
}

/// How every trace of this run is read (`--from`, `--flops`, `--calc-ns`), set once by [`run`].
static IMPORT: std::sync::OnceLock<trace::import::Options> = std::sync::OnceLock::new();

fn import_options() -> trace::import::Options {
    IMPORT.get().copied().unwrap_or_default()
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Predict a trace's runtime (what plain `loggps-predict TRACE` does).
    Predict(PredictArgs),
    /// Summarize a trace: ranks, events per routine, bytes, message sizes, measured runtime.
    Info(info::InfoArgs),
    /// Convert a trace between the binary and the text encoding (exact both ways), or from another tool's format, or to GOAL for LogGOPSim.
    Convert(convert::ConvertArgs),
    /// Measure this machine's LogGPS parameters with an MPI round-trip program (paper §4.3).
    Calibrate(calibrate::CalibrateArgs),
    /// The paper's Table 7 and Fig. 6 for a directory of recorded traces with a MANIFEST.tsv.
    Table7(table7::Table7Args),
    Collective(collective::CollectiveArgs),
    /// Write a synthetic trace of a communication pattern, streaming (up to 2^20 ranks, 10^12 events).
    Synth(synth::SynthArgs),
    /// Time the pipeline's phases on a trace (parse, graph, replay) and print figures as JSON.
    ///
    /// Per phase: seconds and events/s (parse also GB/s), peak resident memory after it
    /// (`peak_bytes_per_event_by_phase`), and the heap allocations it made (`allocations`,
    /// `allocations_per_event`); then end to end. `tests/bench/run.sh` runs it over the scale
    /// benchmark's synthetic traces.
    Bench(bench::BenchArgs),
    /// Compare predictions with a baseline (for CI): exit 1 and a table of what drifted.
    Check(check::CheckArgs),
    /// What each LogGPS parameter is worth: the runtime's derivative by each (every band's, and
    /// gamma; each set's where several --params combine by link), how far L, o and G can grow
    /// before the runtime rises by 1% and 5%, and the best eager limit S in a range; by replays
    /// of the trace, matched once.
    Sensitivity(sensitivity::SensitivityArgs),
    /// The lines of the program whose calls cost the most in the predicted run: per call site
    /// (function, file and line, from the program's debug information), the receiver and
    /// sender synchronization, communication, calls and ranks, summed over ranks.
    Callsites(callsites::CallsitesArgs),
}

pub use loggps_predict::driver::Split;

/// Set on every process of a split replay but process 0, which alone prints.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Whether this process prints nothing (a split replay's process other than 0).
fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Runs the command line as a process: in an MPI job of several (the `mpi` feature), as one of
/// them. Gives the exit status: 0, or 2 with the error printed (by process 0 alone).
pub fn main(cli: Cli) -> i32 {
    #[cfg(feature = "mpi")]
    let mpi = match loggps_predict::replay::mpi::Mpi::init() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    #[cfg(feature = "mpi")]
    let split: Split<'_> = mpi
        .as_ref()
        .map(|m| m as &dyn loggps_predict::replay::split::Exchange)
        .filter(|m| m.processes() > 1);
    #[cfg(not(feature = "mpi"))]
    let split: Split<'_> = None;
    QUIET.store(split.is_some_and(|s| s.process() != 0), Ordering::Relaxed);
    match run(cli, split) {
        Ok(()) => 0,
        Err(e) => {
            if !quiet() {
                eprintln!("error: {e}");
            }
            2
        }
    }
}

use loggps_predict::driver::{agreed, matched};

/// [`load_then`], as this process replays the trace: in a split replay, its own ranks alone
/// ([`loggps_predict::driver::load`]), under a progress line.
fn load_replayed(path: &Path, then: trace::Then, split: Split<'_>) -> Result<Trace, Error> {
    let label = format!("loading {}", path.display());
    let import = import_options();
    Progress::around(&label, || {
        loggps_predict::driver::load(path, &import, split, &mut warn, then)
    })
}

/// [`loggps_predict::driver::census`]; an unfinished trace's ranks without MPI_Finalize are
/// warned of here, as one process warns of them when it loads.
fn census(trace: &Trace, path: &Path, split: Split<'_>) -> Result<Option<Census>, Error> {
    let c = loggps_predict::driver::census(trace, split)?;
    if let Some(c) = &c
        && !trace.complete
    {
        let name = path.display().to_string();
        warn(trace::unfinished_warning(
            &name,
            trace.nranks(),
            &c.unfinished,
        ));
    }
    Ok(c)
}

/// The trace's events: the whole trace's, where this process holds only its own ranks' too.
fn all_events(trace: &Trace, census: Option<&Census>) -> u64 {
    census.map_or(trace.total_events(), |c| {
        c.firsts[c.firsts.len() - 1] as u64
    })
}

/// Whether `here` holds on some process (on this one, where the replay is not split).
fn anywhere(here: bool, split: Split<'_>) -> Result<bool, Error> {
    let Some(ex) = split else {
        return Ok(here);
    };
    let got = ex.all_to_all(vec![vec![here as u64]; ex.processes()])?;
    Ok(got.iter().any(|v| v.first() == Some(&1)))
}

/// Prints a warning on stderr (process 0 alone, in a split replay).
fn warn(msg: String) {
    if !quiet() {
        eprintln!("warning: {msg}");
    }
}

/// Says where a node ran more ranks than CPUs ([`Meta::oversubscribed_warning`]).
///
/// [`Meta::oversubscribed_warning`]: loggps_predict::trace::Meta::oversubscribed_warning
fn warn_oversubscribed(trace: &Trace) {
    if let Some(w) = trace.meta.oversubscribed_warning() {
        warn(w);
    }
}

/// Warns where the trace's ranks ran on cores 2× nearer or farther apart than the parameters
/// were measured on (`cores`: theirs, if they say); the warning, for the report.
fn warn_placement(trace: &Trace, cores: Option<f64>) -> Option<String> {
    let w = cores.and_then(|c| trace.meta.placement_warning(c))?;
    warn(w.clone());
    Some(w)
}

/// How the trace's messages ran against its parameters' round trips
/// ([`loggps_predict::replay::links::message_speeds`]; the sets as measured: none where a flag
/// or a platform changes what they cost).
fn message_speeds(
    trace: &Trace,
    resolved: &loggps_predict::model::ResolvedModel,
    given: &args::ParamArgs,
) -> Vec<loggps_predict::replay::links::MessageSpeed> {
    let loggps_predict::model::ResolvedModel::LogGps(r) = resolved else {
        return Vec::new();
    };
    if given.changes_costs() {
        return Vec::new();
    }
    let sets: Vec<_> = std::iter::once(r.params)
        .chain(r.others.iter().copied())
        .collect();
    loggps_predict::replay::links::message_speeds(trace, &sets)
}

/// `--at-run-speed`: how the run's messages went against the sets as measured (the files' and
/// the trace's, without the flags), and what each set is multiplied by
/// ([`speed_factors`](loggps_predict::replay::links::speed_factors)), in words too.
struct RunSpeed {
    speeds: Vec<loggps_predict::replay::links::MessageSpeed>,
    factors: Vec<Option<f64>>,
    said: Vec<String>,
}

impl RunSpeed {
    /// The run's speed against the sets `given` names (warned where the trace holds no figure
    /// a set judges; refused for a platform's sets).
    fn of(trace: &Trace, given: &args::ParamArgs) -> Result<RunSpeed, Error> {
        use loggps_predict::model::{Class, Params};
        if given.platform.is_some() {
            return Err(Error::Usage(
                "--at-run-speed: a platform's parameters were not measured where the trace ran: give \
                 the sets measured there (--params)"
                    .into(),
            ));
        }
        let measured = given.as_measured(&trace.meta.sets(), trace.meta.eager_limit.as_ref())?;
        let sets: Vec<Params> = std::iter::once(measured.params)
            .chain(measured.others)
            .collect();
        let speeds = loggps_predict::replay::links::message_speeds(trace, &sets);
        let factors = loggps_predict::replay::links::speed_factors(&speeds, sets.len());
        let several = sets.len() > 1;
        let said: Vec<String> = (sets.iter().zip(&factors))
            .filter_map(|(p, f)| {
                let which = match (several, p.class, p.cores) {
                    (true, Some(Class::Network), _) => "the network's set".to_string(),
                    (true, _, Some(c)) => format!("the set of cores {c:.0} ns"),
                    _ => "the set".to_string(),
                };
                f.map(|f| format!("{which} ×{f:.3}"))
            })
            .collect();
        if said.is_empty() {
            warn(
                "--at-run-speed: the trace holds no round trips through MPI that a set judges (the \
                 tracer times them at MPI_Init and MPI_Finalize; a pair whose cores lay 2× from \
                 every set's is not judged): predicted at the sets' own speed"
                    .into(),
            );
        }
        Ok(RunSpeed {
            speeds,
            factors,
            said,
        })
    }

    /// `resolved`'s sets, in the order measured, each multiplied by its factor (as by `--scale
    /// all=F`, after the flags).
    fn apply(&self, resolved: &mut loggps_predict::model::ResolvedModel) -> Result<(), Error> {
        let loggps_predict::model::ResolvedModel::LogGps(r) = resolved else {
            return Err(Error::Usage(
                "--at-run-speed scales LogGPS sets; LogGP's have no message round trips to judge"
                    .into(),
            ));
        };
        let sets = std::iter::once(&mut r.params).chain(r.others.iter_mut());
        for (p, f) in sets.zip(&self.factors) {
            if let Some(f) = *f {
                *p = loggps_predict::model::scale(*p, "all", f)?;
            }
        }
        Ok(())
    }
}

/// The model `callsites` and `sensitivity` replay with, as a prediction resolves it (at the
/// run's message speed where asked), and what to warn of the run's speed: the speed's
/// warnings, or the sets scaled to it.
fn replay_model(
    trace: &Trace,
    a: &args::ReplayArgs,
) -> Result<(loggps_predict::model::ResolvedModel, Vec<String>), Error> {
    let mut resolved = a.model.resolve(
        &a.params,
        &trace.meta.sets(),
        trace.meta.eager_limit.as_ref(),
    )?;
    if !a.at_run_speed {
        let said = speed_warnings(trace, &resolved, &a.params);
        return Ok((resolved, said));
    }
    let run = RunSpeed::of(trace, &a.params)?;
    run.apply(&mut resolved)?;
    let said = (!run.said.is_empty()).then(|| {
        format!(
            "replayed at the run's message speed (--at-run-speed): {}",
            run.said.join(", ")
        )
    });
    Ok((resolved, said.into_iter().collect()))
}

/// The warnings of [`message_speeds`], for the caller to print (and report).
fn speed_warnings(
    trace: &Trace,
    resolved: &loggps_predict::model::ResolvedModel,
    given: &args::ParamArgs,
) -> Vec<String> {
    loggps_predict::replay::links::speed_warnings(&message_speeds(trace, resolved, given))
}

/// Where the trace's library and the parameters or the collectives' model disagree (its eager
/// limit and the set's `S`; MPICH's collectives modeled by Open MPI's choices): the warnings,
/// for the caller to print and report.
fn library_warnings(
    trace: &Trace,
    resolved: &loggps_predict::model::ResolvedModel,
    coll: &loggps_predict::collectives::traced::Choice,
) -> Vec<String> {
    use loggps_predict::trace::library;
    let mut out = Vec::new();
    if let loggps_predict::model::ResolvedModel::LogGps(r) = resolved {
        // A flag's S is the user's what-if, a platform's another machine's: only a file's or
        // the trace's own set claims to be this library's.
        use loggps_predict::model::Source;
        let chosen = matches!(r.sources[7], Source::Flag | Source::Platform(_));
        out.extend(library::eager_limit_warning(
            &trace.meta,
            r.params.S,
            chosen,
        ));
        let flag = r.sources[7] == Source::Flag;
        out.extend(library::protocol_moved_warning(trace, r.params.S, flag));
        // A set that costs them (its `bounce`) needs no word.
        if r.params.bounce_cost().is_none() {
            out.extend(library::bounced_warning(trace, r.params.S));
        }
        // A set measured here (a file's, the trace's) and without `clean`: a preset is another
        // machine's, whose buffers nobody knows.
        let measured = matches!(r.sources[0], Source::File(_) | Source::Trace);
        if r.params.clean.is_none() && measured {
            out.extend(library::clean_warning(trace, r.params.S));
        }
    }
    // The events scanned only where the warning could apply: an MPICH trace, modeled.
    let collectives = coll.modeled
        && library::is_mpich(&trace.meta)
        && (0..trace.nranks()).any(|r| {
            let ev = trace.rank(r);
            (0..ev.len()).any(|i| ev.routine(i).shape() == loggps_predict::trace::Shape::Coll)
        });
    out.extend(library::collectives_warning(&trace.meta, collectives));
    out
}

/// Warns where several parameter sets were given to `what`, which costs with one: the run's
/// main set (the first node set), the others unused (`predict` combines them per link class).
fn warn_one_set(resolved: &loggps_predict::model::ResolvedModel, what: &str) {
    if let loggps_predict::model::ResolvedModel::LogGps(r) = resolved
        && !r.others.is_empty()
    {
        warn(format!(
            "{what} costs every message with one parameter set, the first node set's{}: the \
             other {} set(s) given are not used (predict combines them per link class)",
            r.params
                .cores
                .map_or(String::new(), |c| format!(" (cores {c:.0} ns)")),
            r.others.len()
        ));
    }
}

fn load(path: &Path) -> Result<Trace, Error> {
    load_then(path, trace::Then::LOAD)
}

/// [`load`], for a caller that goes on as `then` says.
fn load_then(path: &Path, then: trace::Then) -> Result<Trace, Error> {
    load_replayed(path, then, None)
}

/// Runs the command line; the error's message is what the user sees. `split`: the processes of
/// an MPI job this one is one of, which `predict` and `bench` split their replay over.
pub fn run(cli: Cli, split: Split<'_>) -> Result<(), Error> {
    let threads = cli.threads;
    if let Some(name) = split.and(single_process(&cli)) {
        return Err(Error::Usage(format!(
            "`{name}` runs in one process: run it without mpirun (predict and bench split their replay over an MPI job)"
        )));
    }
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        if n == 0 {
            return Err(Error::Usage("--threads must be at least 1".into()));
        }
        pool = pool.num_threads(n);
    }
    let positive = |v: Option<f64>, flag: &str, zero: bool| match v {
        Some(x) if !x.is_finite() || x < 0.0 || (x == 0.0 && !zero) => Err(Error::Usage(format!(
            "{flag} must be a finite number {} 0, found {x}",
            if zero { "≥" } else { ">" }
        ))),
        _ => Ok(()),
    };
    positive(cli.flops, "--flops", false)?;
    positive(cli.calc_ns, "--calc-ns", true)?;
    let _ = IMPORT.set(trace::import::Options {
        from: cli.from,
        flop_ns: cli.flops.map(|f| 1e9 / f),
        calc_ns: cli.calc_ns,
    });
    let pool = pool
        .build()
        .map_err(|e| Error::Usage(format!("cannot start {threads:?} threads: {e}")))?;
    pool.install(|| match cli.command {
        Some(Command::Predict(a)) => predict::predict(&a, split),
        None => predict::predict(&cli.predict, split),
        Some(Command::Info(a)) => info::info(&a.trace, a.format),
        Some(Command::Convert(a)) => {
            convert::convert(&a.input, &a.output, a.to, a.force, a.params.as_deref())
        }
        Some(Command::Calibrate(a)) => calibrate::calibrate(&a),
        Some(Command::Synth(a)) => synth::synth(&a.spec(), &a.output, a.force),
        Some(Command::Bench(a)) => bench::bench(&a.trace, &a.params, &a.coll, split),
        Some(Command::Collective(a)) => collective::run(&a),
        Some(Command::Table7(a)) => table7::table7(&a.dir, a.format, a.svg.as_deref()),
        Some(Command::Sensitivity(a)) => sensitivity::sensitivity(&a),
        Some(Command::Callsites(a)) => callsites::callsites(&a),
        Some(Command::Check(a)) => {
            check::check(&a.traces, &a.baseline, a.tolerance, a.update, &a.params)
        }
    })
}

/// The subcommand of `cli` that does not split over an MPI job, if it is one.
fn single_process(cli: &Cli) -> Option<&'static str> {
    match &cli.command {
        None | Some(Command::Predict(_)) | Some(Command::Bench(_)) => None,
        Some(Command::Info(_)) => Some("info"),
        Some(Command::Convert(_)) => Some("convert"),
        Some(Command::Calibrate(_)) => Some("calibrate"),
        Some(Command::Table7(_)) => Some("table7"),
        Some(Command::Collective(_)) => Some("collective"),
        Some(Command::Synth(_)) => Some("synth"),
        Some(Command::Check(_)) => Some("check"),
        Some(Command::Sensitivity(_)) => Some("sensitivity"),
        Some(Command::Callsites(_)) => Some("callsites"),
    }
}

/// Runs `write` on standard output through a buffer, flushed at the end: standard output is
/// line-buffered, and a report of many ranks would otherwise go out one write call a line.
fn to_stdout(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> std::io::Result<()> {
    if quiet() {
        return Ok(());
    }
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    write(&mut out)?;
    out.flush()
}

/// `value` as pretty JSON and a newline.
fn json_to(out: &mut dyn Write, value: &impl serde::Serialize) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}

/// Writes a chart, the error naming the file.
fn write_svg(path: &std::path::Path, svg: &str) -> Result<(), Error> {
    if quiet() {
        return Ok(());
    }
    std::fs::write(path, svg)
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))
}

/// A reader that stops early (`| head`) is not an error.
fn quiet_pipe(res: std::io::Result<()>, what: &str) -> Result<(), Error> {
    match res {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| Error::Io(format!("{what}: {e}"))),
    }
}
