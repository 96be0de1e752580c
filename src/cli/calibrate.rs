//! `loggps-predict calibrate`: this machine's LogGPS parameters from an MPI round-trip program.

use clap::Args;
use loggps_predict::calibrate::banded::in_band;
use loggps_predict::calibrate::fit::{Calls, Sample};
use loggps_predict::calibrate::{self, Calibration};
use loggps_predict::error::Error;
use std::path::{Path, PathBuf};

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
    /// Also write every measured point and the model's value (TSV); a second set's (launches
    /// at another placement of the cores) to FILE with `-second` before its extension
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    /// The round-trip program (built by `make -C tracer`; by default looked for beside this
    /// binary, then in the tracer/ of this source tree and of the current directory)
    #[arg(long)]
    pub rtt: Option<PathBuf>,
    /// The tracer library, used to read the eager limit the MPI library reports (looked for
    /// as --rtt is)
    #[arg(long)]
    pub tracer: Option<PathBuf>,
    /// Largest message size measured, bytes
    #[arg(long, default_value_t = 4 << 20)]
    pub max_bytes: u64,
    /// A fixed imbalance W, ns, measured besides w = 0 and the imbalance that just hides each
    /// size's transfer (1.5 × its round trip): 0 for none. A long W chills the caches, and the
    /// calls after it are slower than a program's
    #[arg(long, default_value_t = 0)]
    pub imbalance: u64,
    /// Repetitions per point at least; the mean of their middle half (between the quartiles) is kept
    #[arg(long, default_value_t = 31)]
    pub reps: u32,
    /// More repetitions while a point has taken less than this, ms
    #[arg(long, default_value_t = 10.0)]
    pub time_ms: f64,
    /// Sizes per octave in the first sweep
    #[arg(long, default_value_t = 4)]
    pub per_octave: u32,
    /// Launches of the sweep, combined by their medians (the MPI library may choose its path
    /// per launch); launches whose ranks ran on cores 2× nearer or farther apart than the
    /// others' are measured again (up to as many more): two or more of them make a second set
    /// (the node's other placement), one alone is left out
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=25))]
    pub launches: u32,
    /// A second launcher under which the library's eager limit is higher, split at spaces
    /// (Open MPI's shared memory: "mpirun --mca btl_vader_eager_limit 65536"; over TCP:
    /// btl_tcp_eager_limit): the sizes between the two limits are measured eager there too,
    /// and each set keeps their eager bands (`eager_bands`) from the launches at its placement,
    /// so that a what-if `--S` above the measured limit costs those messages as the library
    /// sends them eagerly
    #[arg(long, value_name = "LAUNCHER")]
    pub eager_mpirun: Option<String>,
}

/// Where a file of the tracer's build is looked for when no flag names it: beside this binary
/// (an installed copy), then in the tracer/ of the source tree it was built from and of the
/// current directory: the plain build (`make -C tracer`) first, else the one of the MPI that
/// `mpirun` names (`mpirun.openmpi`: build-openmpi/).
fn candidates(name: &str, mpirun: &str) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.to_path_buf()))
    {
        dirs.push(dir);
    }
    let builds = match mpirun {
        m if m.ends_with(".mpich") => ["", "build-mpich"],
        _ => ["", "build-openmpi"],
    };
    for root in [
        PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        PathBuf::from("."),
    ] {
        dirs.extend(builds.map(|b| root.join("tracer").join(b)));
    }
    dirs.into_iter().map(|d| d.join(name)).collect()
}

/// The file `flag` names, else the first of [`candidates`] that exists, else an error saying
/// where it looked and what to build.
fn found(flag: &Option<PathBuf>, name: &str, mpirun: &str) -> Result<PathBuf, Error> {
    if let Some(p) = flag {
        return Ok(p.clone());
    }
    let looked = candidates(name, mpirun);
    if let Some(p) = looked.iter().find(|p| p.exists()) {
        return Ok(p.clone());
    }
    let list: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
    Err(Error::Usage(format!(
        "{name} not found (looked in {}): build it with `make -C {}/tracer` with the MPI you \
         calibrate, or name it with --{}",
        list.join(", "),
        env!("CARGO_MANIFEST_DIR"),
        if name.ends_with(".so") {
            "tracer"
        } else {
            "rtt"
        }
    )))
}

pub(super) fn calibrate(a: &CalibrateArgs) -> Result<(), Error> {
    let launcher = a.mpirun.split_whitespace().next().unwrap_or("mpirun");
    let opts = calibrate::Options {
        mpirun: a.mpirun.split_whitespace().map(String::from).collect(),
        np: a.np,
        rtt: found(&a.rtt, "loggps-rtt", launcher)?,
        tracer: match found(&a.tracer, "libloggps-trace.so", launcher) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("calibrate: {e}; the eager limit the library reports is not read");
                None
            }
        },
        max_bytes: a.max_bytes,
        imbalance_ns: a.imbalance,
        reps: a.reps,
        time_ms: a.time_ms,
        per_octave: a.per_octave,
        launches: a.launches,
        eager_mpirun: (a.eager_mpirun.as_deref())
            .map(|m| m.split_whitespace().map(String::from).collect()),
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
        // The first set's to PATH, a second set's beside it.
        let first = (
            &c.fit,
            &c.samples,
            &c.calls,
            c.exchanges.as_ref(),
            c.eager_above.as_ref(),
            path.clone(),
        );
        let second = (c.other.iter()).map(|o| {
            (
                &o.fit,
                &o.samples,
                &o.calls,
                o.exchanges.as_ref(),
                o.eager_above.as_ref(),
                second_samples(path),
            )
        });
        for (k, (fit, samples, calls, exchanges, eager, file)) in
            std::iter::once(first).chain(second).enumerate()
        {
            let set = Set {
                params: &fit.params,
                samples,
                outliers: &fit.outliers,
                calls,
                exchanges,
                eager,
            };
            write(&file, samples_tsv(&c, &set, k == 0))?;
        }
    }
    print_calibration(&c, &a.output, &svg);
    Ok(())
}

/// What [`samples_tsv`] writes of one set: its parameters, round trips (those set aside as
/// outliers), rank 0's calls and its exchange launch.
struct Set<'c> {
    params: &'c loggps_predict::model::Params,
    samples: &'c [calibrate::fit::Sample],
    outliers: &'c [calibrate::fit::Sample],
    calls: &'c [Calls],
    exchanges: Option<&'c calibrate::exchange::Exchanges>,
    /// Its sizes above S measured eager under `--eager-mpirun`.
    eager: Option<&'c calibrate::EagerAbove>,
}

/// Where `--samples PATH` writes the second set's: `PATH` with `-second` before its extension.
fn second_samples(path: &std::path::Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map_or("samples".into(), |s| s.to_string_lossy());
    let name = match path.extension() {
        Some(e) => format!("{stem}-second.{}", e.to_string_lossy()),
        None => format!("{stem}-second"),
    };
    path.with_file_name(name)
}

/// Every measurement of `set` with the model's value: round trips (`rtt`; `rtt-eager`: the
/// sizes above S measured eager under `--eager-mpirun`, against the set at that limit), rank
/// 0's calls at the imbalance that hides the transfer (`send`, `recv`; `isend`, the same
/// point's send made by `MPI_Isend`), exchanges of `N` messages each way (`exchangeN`, against
/// their replay with the set), and the library's reduction (`reduce`, against the line whose
/// slope is `gamma`); `reduce`, measured once for both sets, where `shared`.
fn samples_tsv(c: &Calibration, set: &Set<'_>, shared: bool) -> String {
    let p = set.params;
    let mut t = String::from("kind\tk\tw_ns\tmeasured_ns\tmodel_ns\terror_pct\toutlier\n");
    let mut line = |kind: &str, k: u64, w: f64, measured: f64, model: f64, outlier: bool| {
        let error = 100.0 * (model - measured) / measured.max(1e-9);
        t.push_str(&format!(
            "{kind}\t{k}\t{w}\t{measured}\t{model:.1}\t{error:.2}\t{outlier}\n"
        ));
    };
    for x in set.samples {
        let model = calibrate::fit::model_rtt(p, x.k, x.w_ns);
        let outlier = set.outliers.contains(x);
        line("rtt", x.k, x.w_ns, x.rtt_ns, model, outlier);
    }
    // The sizes above S measured eager under --eager-mpirun, against the set at that limit.
    if let Some(e) = set.eager {
        let at = loggps_predict::model::Params { S: e.limit, ..*p };
        for x in &e.samples {
            let model = calibrate::fit::model_rtt(&at, x.k, x.w_ns);
            line("rtt-eager", x.k, x.w_ns, x.rtt_ns, model, false);
        }
    }
    for x in set.calls {
        let (send, recv) = calibrate::banded::model_calls(p, x.k);
        line("send", x.k, x.w_ns, x.send_ns, send, false);
        line("recv", x.k, x.w_ns, x.recv_ns, recv, false);
        if let Some(isend) = x.isend_ns {
            // An eager Isend returns once its message has left (the model's §13), a
            // rendezvous one once its request is out.
            let model = match x.k <= p.S {
                true => p.t1(x.k) - p.split_of(x.k).0,
                false => p.o,
            };
            line("isend", x.k, x.w_ns, isend, model, false);
        }
    }
    for x in set.exchanges.iter().flat_map(|x| &x.each) {
        let kind = format!("exchange{}", x.n);
        line(&kind, x.k, 0.0, x.measured_ns, x.predicted_ns, false);
    }
    for &(k, ns) in c.reduction.points.iter().filter(|_| shared) {
        line("reduce", k, 0.0, ns, c.reduction.model(k), false);
    }
    t
}

/// An exchange predicted further off than this is warned of.
const EXCHANGE_WORST: f64 = 0.10;

/// The fit's quality limit: every round trip within 5% of the model.
const QUALITY: f64 = calibrate::MISS;

/// What of each band the fit determined and what it assumed (the model's §13), and the
/// parameters it left at their bound: a fit at its limit, not the machine's value.
fn print_limits(p: &loggps_predict::model::Params, calls: &[Calls]) {
    let Some(b) = &p.bands else {
        return;
    };
    let mut lo = None;
    for (j, x) in b.as_slice().iter().enumerate() {
        let band = format!(
            "band {} ({})",
            j + 1,
            loggps_predict::model::sizes(lo.unwrap_or(0), x.hi)
        );
        let isends: Vec<&Calls> = (calls.iter())
            .filter(|c| in_band(c.k, lo, x.hi) && c.k <= p.S && c.isend_ns.is_some())
            .collect();
        if x.split() && !isends.is_empty() {
            let od = match x.Osd {
                0.0 => format!("{:.1} ns", x.Od),
                osd => format!("{:.1} ns + {osd:.4} ns a byte (Osd)", x.Od),
            };
            println!(
                "split       {band}: Od = {od} measured (T1 less MPI_Isend's own duration, {} size(s)), the round \
                 trips determine L − Od − Op = {:.1} ns: Op = {:.1}, L = {:.1} (the model's §13)",
                isends.len(),
                x.L - x.Od - x.Op,
                x.Op,
                x.L
            );
        } else if x.split() {
            println!(
                "split       {band}: messages arrive sooner than the overheads in series allow; the round trips \
                 determine L − Od − Op = {:.1} ns, the fit assumed L = 0 and Od, Op halves of {:.1} ns (Od = {:.1}, \
                 Op = {:.1}; the model's §13)",
                x.L - x.Od - x.Op,
                x.Od + x.Op,
                x.Od,
                x.Op
            );
        } else {
            let at: Vec<&str> = [("L", x.L), ("G", x.G)]
                .into_iter()
                .filter(|(_, v)| *v == 0.0)
                .map(|(n, _)| n)
                .collect();
            if !at.is_empty() {
                println!(
                    "limit       {band}: {} = 0, the fit at its bound (the constraint, not the machine's value)",
                    at.join(" and ")
                );
            }
        }
        lo = Some(x.hi);
    }
}

fn print_calibration(c: &Calibration, toml: &Path, svg: &Path) {
    let p = &c.fit.params;
    let kept: Vec<&Sample> = c
        .samples
        .iter()
        .filter(|x| !c.fit.outliers.contains(x))
        .collect();
    if let Some(class) = p.class {
        println!(
            "class       {}: {}",
            class.name(),
            match class {
                loggps_predict::model::Class::Node => "MPI put the two ranks on one node",
                loggps_predict::model::Class::Network => {
                    "MPI put the two ranks on different nodes: the set costs messages between nodes"
                }
            }
        );
    }
    print_bands(p, &kept);
    print_fit(c, p, &kept);
    print_limits(p, &c.calls);
    if let Some(text) = calibrate::departs_finding(p, &c.calls) {
        println!("departs     {text}");
    }
    print_warnings(c, p);
    print_eager_limit(c, p);
    print_findings(c, p);
    print_eager_above(c.eager_above.as_ref(), p);
    print_second_set(c);
    println!("wrote       {} and {}", toml.display(), svg.display());
}

/// The fit's quality over the round trips, and a warning naming the worst of the `kept`
/// ones it misses by more than [`QUALITY`]: predictions at those sizes are as far off.
fn print_fit(c: &Calibration, p: &loggps_predict::model::Params, kept: &[&Sample]) {
    println!(
        "fit         {} round trips ({} launches combined, differing by {:.0}%{}): model vs measured rms {:.2}%, max {:.2}%; {} outlier(s) set aside",
        c.samples.len(),
        c.launches,
        100.0 * c.launch_spread,
        match c.launches > 1 {
            true => format!(
                ", by {:.0}% once each launch's speed ({:.2}–{:.2} of the median launch's) is divided out",
                100.0 * c.launch_within,
                c.launch_speeds[0],
                c.launch_speeds[1]
            ),
            false => String::new(),
        },
        100.0 * c.fit.rms_rel,
        100.0 * c.fit.max_rel,
        c.fit.outliers.len()
    );
    let again = &c.again;
    if !again.sizes.is_empty() {
        println!(
            "again       {} size(s) the fit missed by more than {:.0}% or set aside ({}) measured again in {} more launches{} ({} at this set's placement, {} at the second set's), each size's round trips the median over all its launches: round trips missed or set aside {} before, {} after{}{}",
            again.sizes.len(),
            100.0 * calibrate::banded::MISS,
            calibrate::again_sizes_in_words(&again.sizes),
            again.launches,
            match again.between.len() {
                0 => String::new(),
                n => format!(
                    " with {n} size(s) halfway to their neighbours ({})",
                    calibrate::again_sizes_in_words(&again.between)
                ),
            },
            again.taken[0],
            again.taken[1],
            again.missed[0][0],
            again.missed[1][0],
            match c.other.is_some() {
                true => format!(
                    " (the second set's {} before, {} after)",
                    again.missed[0][1], again.missed[1][1]
                ),
                false => String::new(),
            },
            match again.undone {
                [0, 0] => String::new(),
                [m, o] => format!(
                    "; rounds that added misses undone: {m} of this set's, {o} of the second's"
                ),
            }
        );
    }
    let misses: Vec<(&Sample, f64)> = kept
        .iter()
        .map(|x| (*x, calibrate::banded::residual(p, x)))
        .filter(|(_, r)| r.abs() > QUALITY)
        .collect();
    if let Some((x, r)) = misses.iter().max_by(|a, b| a.1.abs().total_cmp(&b.1.abs())) {
        println!(
            "WARNING     the model misses {} of {} round trips by more than {:.0}% (worst: k = {} B, w = {} ns, {:+.1}%): \
             predictions of messages of those sizes are as far off; see the chart",
            misses.len(),
            kept.len(),
            100.0 * QUALITY,
            x.k,
            x.w_ns,
            100.0 * r
        );
    }
}

/// Warnings about the measurement itself: eager messages that arrive sooner than LogGPS
/// allows, and launches whose round trips differ more than [`calibrate::SPREAD_WARNING`].
fn print_warnings(c: &Calibration, p: &loggps_predict::model::Params) {
    let early = calibrate::early_departures(&c.samples, &c.calls, p.S);
    let split = p.bands.is_some_and(|b| b.split());
    if let (Some(first), Some(last), false) = (early.first(), early.last(), split) {
        let worst = early
            .iter()
            .max_by(|a, b| (a.2 / a.1).total_cmp(&(b.2 / b.1)));
        let (k, half, both) = *worst.unwrap_or(first);
        println!(
            "WARNING     at {} eager size(s), {}…{} B, a message arrives sooner than LogGPS allows (k = {k} B: half the round trip \
             at w = 0 takes {half:.0} ns, rank 0's send and receive with the reply already there {both:.0} ns): the library lets it \
             go before MPI_Send returns, the model's transfer starts when the send's overhead ends (L ≥ 0), so no valid \
             parameters fit both w there and the fit trades them off",
            early.len(),
            first.0,
            last.0
        );
    }
    if c.launch_spread > calibrate::SPREAD_WARNING {
        println!(
            "WARNING     the {} launches' round trips differ by {:.0}% (median over sizes): the machine changed speed or path \
             while calibrating, and predictions of runs taken at another moment are as far off; calibrate again on a quiet machine",
            c.launches,
            100.0 * c.launch_spread
        );
    }
}

/// The eager limit measured against what the library reports, where it does.
fn print_eager_limit(c: &Calibration, p: &loggps_predict::model::Params) {
    match (&c.reported_eager_limit, c.eager_limits_agree()) {
        (Some((name, bytes)), Some(true)) => println!(
            "eager limit measured S = {} B agrees with {name} = {bytes} B (which counts the protocol header)",
            p.S
        ),
        (Some((name, bytes)), None) if c.jump.is_some() => println!(
            "eager limit measured S = {} B ({name} = {bytes} B, which the library reports, is not where its messages switch to rendezvous)",
            p.S
        ),
        (Some(_), None) => {
            println!("eager limit none: the round trips show no rendezvous jump (every size eager)")
        }
        (Some((name, bytes)), _) if c.jump.is_none() => println!(
            "eager limit S = {} B as {name} = {bytes} B reports: the round trips show no rendezvous jump",
            p.S
        ),
        (Some((name, bytes)), _) => println!(
            "eager limit measured S = {} B DISAGREES with {name} = {bytes} B reported by the library",
            p.S
        ),
        (None, _) if c.jump.is_none() => {
            println!("eager limit none: the round trips show no rendezvous jump (every size eager)")
        }
        (None, _) => println!(
            "eager limit measured S = {} B (the library reports none)",
            p.S
        ),
    }
}

/// The costs measured beside the LogGPS parameters: failed polls, reductions, copies,
/// progress, collective calls, and the cores' cache-line times.
fn print_findings(c: &Calibration, p: &loggps_predict::model::Params) {
    println!(
        "failed poll {:.0} ns (MPI_Test, MPI_Iprobe on one request; written commented out: \
         a trace's own failed polls keep their durations unless --poll or `poll` is set)",
        c.poll_ns
    );
    println!("post        {}", calibrate::post_finding(c.post_ns));
    if let Some(w) = c.wait_ns {
        println!("wait        {}", calibrate::wait_finding(w));
    }
    let what = "MPI_Reduce_local, MPI_SUM on doubles";
    println!("gamma       {}", c.reduction.described(what));
    let what = "memcpy between page-aligned buffers";
    println!("copy        {}", c.copying.described(what));
    if let Some(text) = calibrate::alloc_finding(c) {
        println!("alloc       {text}");
    }
    println!("progress    {}", calibrate::progress_finding(c));
    println!(
        "oc          {:.0} ns a collective call: {}",
        p.oc.unwrap_or(0.0),
        calibrate::collectives_finding(c, false)
    );
    if let Some(text) = c.oc_fit.as_ref().and_then(|f| f.kinds_finding()) {
        println!("WARNING     collectives: {text}");
    }
    if let Some(x) = &c.exchanges {
        print_exchanges(x);
    }
    if let [Some(text), _] = calibrate::borrowed_shares(c) {
        println!("exchange    {text}");
    }
    print_bounce(&c.bounce, &c.fit.params);
    match calibrate::line_finding(&c.line_ns) {
        Some((text, true)) => println!("WARNING     cores: {text}"),
        Some((text, false)) => println!("cores       {text}"),
        None => {}
    }
    match calibrate::copy_finding(c.copy_aligned_ns, c.copy_aliased_ns) {
        (text, true) => println!("WARNING     copies: {text}"),
        (text, false) => println!("copies      {text}"),
    }
    match calibrate::alias_finding(&c.alias, c.fit.params.S) {
        Some((text, true)) => println!("WARNING     messages: {text}"),
        Some((text, false)) => println!("messages    {text}"),
        None => {}
    }
    if let Some((text, _)) = calibrate::drained_finding(&c.drained, &c.fit.params) {
        println!("drained     {text}");
    }
    if let Some(text) = calibrate::held_finding(&c.held, c.fit.params.S) {
        let set = match c.held_set {
            Some(1) => " (the second set's placement)",
            _ => "",
        };
        println!("held        {text}{set}");
    }
    match calibrate::noise::finding(&c.interrupted) {
        Some((text, true)) => println!("WARNING     interrupts: {text}"),
        Some((text, false)) => println!("interrupts  {text}"),
        None => {}
    }
    match calibrate::noise::detours_finding(&c.detours) {
        Some((text, true)) => println!("WARNING     detours: {text}"),
        Some((text, false)) => println!("detours     {text}"),
        None => {}
    }
}

/// The set fitted at another placement of the ranks' cores, where calibrate made one.
/// The eager bands above `S` measured under the second launcher, with their fit's error.
fn print_eager_above(e: Option<&calibrate::EagerAbove>, p: &loggps_predict::model::Params) {
    let (Some(e), Some((lo, list))) = (e, p.bands.as_ref().and_then(|b| b.eager_above())) else {
        return;
    };
    println!(
        "\neager above S = {lo} B, measured eager under `{}` (its eager limit {} B{}{}): {} of {} round trips missed by more than {:.0}%; \
         a trace that recorded that limit is predicted at it (as with --S {})",
        e.mpirun,
        e.limit,
        e.reported
            .map_or(String::new(), |r| format!(", the library reports {r} B")),
        calibrate::line_finding(&e.line_ns).map_or(String::new(), |(t, _)| format!("; cores {t}")),
        e.missed,
        e.samples.len(),
        100.0 * QUALITY,
        e.limit
    );
    let mut from = lo;
    for b in list {
        println!(
            "eager  {:>21}  {:>8.1} {:>8.1} {:>9.4} {:>9.4} {:>9.4}",
            format!("{} … {}", from + 1, b.hi),
            b.o,
            b.L,
            b.Os,
            b.Or,
            b.G
        );
        from = b.hi;
    }
    for r in &e.refits {
        println!("eager split    {}", r.finding());
    }
    if let Some(x) = &e.exchanges {
        let (lines, off) = calibrate::exchange::finding(x, EXCHANGE_WORST);
        for l in lines {
            println!("eager exchange {l}");
        }
        if off {
            println!(
                "WARNING     eager exchanges: the set at S = {} predicts an exchange (messages sent \
                 and received at once, as a halo's) of a size above {lo} B more than {:.0}% off \
                 under `{}`: the round trips its eager bands are fitted to have one message in \
                 flight; programs that exchange messages of that size, and what-ifs that move \
                 them to the eager protocol (--S), are predicted as far off",
                e.limit,
                100.0 * EXCHANGE_WORST,
                e.mpirun
            );
        }
    }
}

/// The exchanges traced and predicted with a set, and a warning where they are far off.
fn print_exchanges(x: &calibrate::exchange::Exchanges) {
    let (lines, off) = calibrate::exchange::finding(x, EXCHANGE_WORST);
    for l in lines {
        println!("exchange    {l}");
    }
    if off {
        println!(
            "WARNING     exchanges: the set predicts an exchange (messages sent and received at \
             once, as a halo's) more than {:.0}% off at a size above: round trips leave to the \
             fit's assumption which part of a message holds each rank's CPU (the model's §13, \
             §14); programs that exchange messages of that size are predicted as far off",
            100.0 * EXCHANGE_WORST
        );
    }
}

fn print_second_set(c: &Calibration) {
    if let Some(o) = &c.other {
        println!(
            "\nsecond set  the {} launches at another placement of the ranks' cores ({}): {} round trips, model vs measured rms {:.2}%, max {:.2}%",
            o.line_ns.len(),
            calibrate::line_finding(&o.line_ns).map_or("no figure".into(), |(t, _)| t),
            o.samples.len(),
            100.0 * o.fit.rms_rel,
            100.0 * o.fit.max_rel
        );
        println!(
            "oc          {:.0} ns a collective call: {}",
            o.fit.params.oc.unwrap_or(0.0),
            calibrate::collectives_finding(c, true)
        );
        if let Some(x) = &o.exchanges {
            print_exchanges(x);
        }
        if let [_, Some(text)] = calibrate::borrowed_shares(c) {
            println!("exchange    {text}");
        }
        print_bounce(&o.bounce, &o.fit.params);
        let kept: Vec<&Sample> = (o.samples.iter())
            .filter(|x| !o.fit.outliers.contains(x))
            .collect();
        print_bands(&o.fit.params, &kept);
        if let Some(text) = calibrate::departs_finding(&o.fit.params, &o.calls) {
            println!("departs     {text}");
        }
        print_eager_above(o.eager_above.as_ref(), &o.fit.params);
    }
}

/// The line on set `p`'s `bounce`: what it was fitted to, or a warning where it was wanted and
/// not measured at the set's placement.
fn print_bounce(b: &calibrate::bounce::Measured, p: &loggps_predict::model::Params) {
    match b.finding(p) {
        Some((text, true)) => println!("WARNING     bounce: {text}"),
        Some((text, false)) => println!("bounce      {text}"),
        None => {}
    }
    if let Some(text) = b.fitted().and_then(calibrate::bounce::clean_finding) {
        println!("clean       {text}");
    }
    if let Some(text) = b.fitted().and_then(calibrate::bounce::clean_oneway_finding) {
        println!("clean_oneway {text}");
    }
    if let Some(text) = b.fitted().and_then(calibrate::bounce::bounce_clean_finding) {
        println!("bounce_clean {text}");
    }
}

/// The bands of set `p`, each with its fit's error over the `kept` round trips of its sizes.
fn print_bands(p: &loggps_predict::model::Params, kept: &[&Sample]) {
    let bands = p.as_bands();
    println!(
        "{:<6} {:>21}  {:>8} {:>8} {:>9} {:>9} {:>9}  {:>16}",
        "band",
        "sizes (B)",
        "o (ns)",
        "L (ns)",
        "Os (ns/B)",
        "Or (ns/B)",
        "G (ns/B)",
        "RTT error rms/max"
    );
    let mut lo = 0;
    for (i, b) in bands.as_slice().iter().enumerate() {
        let within: Vec<f64> = kept
            .iter()
            .filter(|x| (i == 0 || x.k > lo) && x.k <= b.hi)
            .map(|x| calibrate::banded::residual(p, x))
            .collect();
        let rms = (within.iter().map(|r| r * r).sum::<f64>() / within.len().max(1) as f64).sqrt();
        let max = within.iter().fold(0.0f64, |m, r| m.max(r.abs()));
        let hi = match b.hi {
            u64::MAX => "∞".to_string(),
            h => h.to_string(),
        };
        let span = match (i, b.hi) {
            // The zero-byte messages' own band.
            (0, 0) => "0".to_string(),
            (0, _) => format!("0 … {hi}"),
            _ => format!("{} … {hi}", lo + 1),
        };
        println!(
            "{:<6} {:>21}  {:>8.1} {:>8.1} {:>9.4} {:>9.4} {:>9.4}  {:>7.2}% / {:.2}%",
            i + 1,
            span,
            b.o,
            b.L,
            b.Os,
            b.Or,
            b.G,
            100.0 * rms,
            100.0 * max
        );
        lo = b.hi;
    }
}

#[cfg(test)]
mod tests {
    use super::second_samples;
    use std::path::Path;

    #[test]
    fn the_second_sets_samples_lie_beside_the_firsts() {
        let at = |p: &str| second_samples(Path::new(p)).display().to_string();
        assert_eq!(at("/tmp/cal/s.tsv"), "/tmp/cal/s-second.tsv");
        assert_eq!(at("s.v2.tsv"), "s.v2-second.tsv");
        assert_eq!(at("samples"), "samples-second");
    }
}
