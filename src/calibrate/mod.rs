//! `loggps-predict calibrate`: measure round-trip times on this machine with an MPI program
//! (`tracer/calibrate/rtt.c`), fit the LogGPS parameters to them, and write a parameter file
//! the predictor reads.

pub mod banded;
pub mod fit;
pub mod svg;

use crate::error::Error;
use crate::model::Params;
use fit::{Fit, Sample};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How to run the measurement.
#[derive(Clone, Debug)]
pub struct Options {
    /// The MPI launcher and its own arguments, e.g. `mpirun --oversubscribe`.
    pub mpirun: Vec<String>,
    pub np: u32,
    /// The round-trip program.
    pub rtt: PathBuf,
    /// The tracer library, to read the eager limit the MPI library reports (None: skip).
    pub tracer: Option<PathBuf>,
    pub max_bytes: u64,
    /// The imbalance `W`, ns.
    pub imbalance_ns: u64,
    /// Repetitions per point at least (the median is kept), more while a point has taken less
    /// than `time_ms`.
    pub reps: u32,
    pub time_ms: f64,
    /// Sizes per octave in the coarse sweep.
    pub per_octave: u32,
}

/// What a calibration found.
#[derive(Clone, Debug)]
pub struct Calibration {
    pub fit: Fit,
    pub samples: Vec<Sample>,
    pub imbalance_ns: u64,
    /// The eager limit the library reports through the MPI tool interface, with its name.
    pub reported_eager_limit: Option<(String, u64)>,
    pub library: String,
    /// What a failed poll costs here, ns, untraced and on one request.
    pub poll_ns: f64,
}

impl Calibration {
    /// Whether the measured `S` and the reported limit agree: the reported one may count a
    /// protocol header the payload does not have, so within 5% or 256 bytes below.
    pub fn eager_limits_agree(&self) -> Option<bool> {
        let (_, reported) = self.reported_eager_limit.as_ref()?;
        let measured = self.fit.params.S as f64;
        let r = *reported as f64;
        Some(measured <= r && measured >= (r - 256.0).min(0.95 * r))
    }
}

/// The sizes of the coarse sweep: 0, then `per_octave` sizes per octave up to `max`.
pub fn coarse_sizes(max: u64, per_octave: u32) -> Vec<u64> {
    let mut k = vec![0u64];
    let mut e = 0.0f64;
    loop {
        let v = 2f64.powf(e).round() as u64;
        if v > max {
            break;
        }
        k.push(v);
        e += 1.0 / per_octave.max(1) as f64;
    }
    k.push(max);
    k.sort_unstable();
    k.dedup();
    k
}

fn run_rtt(
    opts: &Options,
    sizes: &[u64],
    ws: &[u64],
    reps: u32,
    log: &mut dyn FnMut(String),
) -> Result<Vec<Sample>, Error> {
    let list = |v: &[u64]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let (prog, pre) = opts
        .mpirun
        .split_first()
        .ok_or_else(|| Error::Usage("--mpirun is empty".into()))?;
    let mut cmd = Command::new(prog);
    cmd.args(pre)
        .args(["-np", &opts.np.to_string()])
        .arg(&opts.rtt);
    cmd.args([
        "--sizes",
        &list(sizes),
        "--w",
        &list(ws),
        "--reps",
        &reps.to_string(),
    ]);
    log(format!(
        "measuring {} size(s) × {} imbalance(s), {reps} repetitions each",
        sizes.len(),
        ws.len()
    ));
    let out = cmd.output().map_err(|e| {
        Error::Io(format!(
            "cannot run {prog}: {e} (is MPI installed? see --mpirun)"
        ))
    })?;
    if !out.status.success() {
        return Err(Error::Io(format!(
            "the round-trip program failed ({}): {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            "run it by hand to see why: ".to_string()
                + &format!(
                    "{} -np 2 {} --sizes 0 --w 0",
                    opts.mpirun.join(" "),
                    opts.rtt.display()
                )
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let samples: Vec<Sample> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                ["rtt", k, w, median, ..] => Some(Sample {
                    k: k.parse().ok()?,
                    w_ns: w.parse().ok()?,
                    rtt_ns: median.parse().ok()?,
                }),
                _ => None,
            }
        })
        .collect();
    if samples.len() != sizes.len() * ws.len() {
        return Err(Error::Io(format!(
            "the round-trip program printed {} of {} results:\n{text}",
            samples.len(),
            sizes.len() * ws.len()
        )));
    }
    Ok(samples)
}

/// Runs the round-trip program once under the tracer and reads back what the trace records:
/// the library and the eager limit it reports through the MPI tool interface.
fn reported_by_library(
    opts: &Options,
    tracer: &Path,
) -> Result<(String, Option<(String, u64)>), Error> {
    let dir = std::env::temp_dir().join(format!("loggps-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::Io(format!("{}: {e}", dir.display())))?;
    let trace_path = dir.join("probe.bin");
    let _ = std::fs::remove_file(&trace_path);
    let (prog, pre) = opts
        .mpirun
        .split_first()
        .ok_or_else(|| Error::Usage("--mpirun is empty".into()))?;
    let version = Command::new(prog)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default();
    let tracer = std::fs::canonicalize(tracer)
        .map_err(|e| Error::Io(format!("{}: {e}", tracer.display())))?;
    let mut cmd = Command::new(prog);
    cmd.args(pre);
    let (preload, out) = (
        tracer.display().to_string(),
        trace_path.display().to_string(),
    );
    if version.contains("Open MPI") || version.contains("OpenRTE") {
        cmd.args([
            "-x",
            &format!("LD_PRELOAD={preload}"),
            "-x",
            &format!("LOGGPS_TRACE={out}"),
        ]);
    } else {
        cmd.args([
            "-genv",
            "LD_PRELOAD",
            &preload,
            "-genv",
            "LOGGPS_TRACE",
            &out,
        ]);
    }
    cmd.args(["-np", &opts.np.to_string()])
        .arg(&opts.rtt)
        .args([
            "--sizes",
            "0",
            "--w",
            "0",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--time-ms",
            "0",
        ]);
    let status = cmd
        .output()
        .map_err(|e| Error::Io(format!("cannot run {prog}: {e}")))?;
    if !status.status.success() {
        return Err(Error::Io(format!(
            "the traced probe run failed: {}",
            String::from_utf8_lossy(&status.stderr).trim()
        )));
    }
    let trace = crate::trace::load(&trace_path, &mut |_| {})?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok((
        trace.meta.library.clone(),
        trace.meta.eager_limit.map(|e| (e.name, e.bytes)),
    ))
}

/// Narrows a bracket `(lo, hi)` given the sizes `probe` inside it and the samples of the launch
/// that measured them with the bracket's ends; None: cannot tell, stop.
type Narrow<'a> = dyn Fn(u64, u64, &[u64], &[Sample]) -> Option<(u64, u64)> + 'a;

/// Narrows the bracket `(lo, hi)` around a threshold to adjacent sizes by measuring seven
/// probes inside it at imbalances `ws`, as long as `narrow` can tell where the threshold is.
fn refine(
    opts: &Options,
    bracket: (u64, u64),
    ws: &[u64],
    narrow: &Narrow<'_>,
    out: &mut Vec<Sample>,
    log: &mut dyn FnMut(String),
) -> Result<(u64, u64), Error> {
    let (mut lo, mut hi) = bracket;
    while hi > lo + 1 {
        let step = ((hi - lo) / 8).max(1);
        let probe: Vec<u64> = (1..8).map(|i| lo + i * step).filter(|&k| k < hi).collect();
        // The probes decide the result: measure each twice as long as the sweep does, with the
        // bracket's ends again, in one launch: a library may pick its path per launch (Open
        // MPI's vader can run the same round trip several times faster in one launch than in
        // the next), so a decision compares only samples of the same launch.
        let careful = Options {
            time_ms: 2.0 * opts.time_ms,
            ..opts.clone()
        };
        let sizes: Vec<u64> = std::iter::once(lo)
            .chain(probe.iter().copied())
            .chain(std::iter::once(hi))
            .collect();
        // An inconclusive launch is measured again, in a new launch, up to three times.
        let mut narrowed = None;
        for _ in 0..3 {
            let batch = run_rtt(&careful, &sizes, ws, opts.reps, log)?;
            out.extend(batch.iter().copied());
            narrowed = narrow(lo, hi, &probe, &batch)
                .filter(|&(l, h)| lo <= l && l < h && h <= hi && (l, h) != (lo, hi));
            if narrowed.is_some() {
                break;
            }
        }
        match narrowed {
            Some(bracket) => (lo, hi) = bracket,
            None => break,
        }
    }
    Ok((lo, hi))
}

/// The split of `probe` (sorted sizes inside `(lo, hi)`) that agrees best with per-probe
/// scores (positive: at or below the threshold), as a new bracket.
fn best_split(
    lo: u64,
    hi: u64,
    probe: &[u64],
    score: &dyn Fn(u64) -> Option<f64>,
) -> Option<(u64, u64)> {
    let scores: Vec<f64> = probe.iter().map(|&k| score(k)).collect::<Option<_>>()?;
    let agreement = |j: usize| scores[..j].iter().sum::<f64>() - scores[j..].iter().sum::<f64>();
    let j = (0..=probe.len()).max_by(|&a, &b| agreement(a).total_cmp(&agreement(b)))?;
    Some((
        if j == 0 { lo } else { probe[j - 1] },
        probe.get(j).copied().unwrap_or(hi),
    ))
}

/// Measures, refines around the thresholds, and fits.
pub fn calibrate(opts: &Options, log: &mut dyn FnMut(String)) -> Result<Calibration, Error> {
    if opts.np != 2 {
        return Err(Error::Usage(
            "the round trip runs on exactly 2 ranks (--np 2)".into(),
        ));
    }
    if !opts.rtt.exists() {
        return Err(Error::Usage(format!(
            "{} not found: build it with `make -C tracer` (or pass --rtt PATH)",
            opts.rtt.display()
        )));
    }
    let (library, reported) = match &opts.tracer {
        Some(t) if t.exists() => reported_by_library(opts, t)?,
        Some(t) => {
            log(format!(
                "{} not found: the eager limit the library reports is not read (build it with `make -C tracer`)",
                t.display()
            ));
            (String::new(), None)
        }
        None => (String::new(), None),
    };
    let w = opts.imbalance_ns;
    let sweep = |log: &mut dyn FnMut(String)| {
        run_rtt(
            opts,
            &coarse_sizes(opts.max_bytes, opts.per_octave),
            &[0, w],
            opts.reps,
            log,
        )
    };
    let mut samples = sweep(log)?;
    // S: the rendezvous jump (fit::eager_jump), looked for below the limit the library reports
    // and bracketed to adjacent sizes. The library picks its paths per launch: a sweep that
    // shows no jump below the reported limit is measured again before the search widens.
    let reported_limit = reported.as_ref().map(|(_, b)| *b);
    let mut near = reported_limit;
    for _ in 0..2 {
        if near.is_none() || fit::eager_jump(&samples, near).is_some() {
            break;
        }
        log(
            "no rendezvous jump below the reported eager limit in this launch: measuring again"
                .into(),
        );
        samples = sweep(log)?;
    }
    if near.is_some() && fit::eager_jump(&samples, near).is_none() {
        log(format!(
            "no rendezvous jump below the reported eager limit {} bytes: searching all sizes",
            near.unwrap_or(0)
        ));
        near = None;
    }
    if let Some(bracket) = fit::eager_jump(&samples, near) {
        // Within the bracket, the jump is where fit::eager_jump finds it among all samples
        // measured there: robust to a probe that took a fast or a slow path.
        let narrow =
            |_lo: u64, _hi: u64, _probe: &[u64], batch: &[Sample]| fit::eager_jump(batch, None);
        let (lo, hi) = refine(opts, bracket, &[0, w], &narrow, &mut samples, log)?;
        log(format!("eager limit bracketed to ({lo}, {hi}]"));
    }
    let p = fit::fit(&samples, near)
        .ok_or_else(|| Error::Io("the sweep could not be fitted".into()))?
        .params;
    // s: a change of slope below S; refined while the two slopes still tell the sizes apart.
    let above_packet = samples.iter().map(|x| x.k).filter(|&k| k > p.s).min();
    if p.s < p.S
        && let Some(hi) = above_packet
    {
        let one = Params {
            s: u64::MAX,
            S: u64::MAX,
            ..p
        };
        let many = Params {
            s: 0,
            S: u64::MAX,
            ..p
        };
        let narrow = |lo: u64, hi: u64, probe: &[u64], all: &[Sample]| {
            let score = |k: u64| {
                let x = all.iter().rev().find(|x| x.k == k && x.w_ns == 0.0)?;
                let (a, b) = (
                    fit::model_rtt(&one, x.k, 0.0),
                    fit::model_rtt(&many, x.k, 0.0),
                );
                ((a - b).abs() > 0.02 * x.rtt_ns)
                    .then(|| ((x.rtt_ns - b).abs() - (x.rtt_ns - a).abs()) / x.rtt_ns)
            };
            best_split(lo, hi, probe, &score)
        };
        let (lo, hi) = refine(
            opts,
            (p.s, hi.min(p.S)),
            &[0, w],
            &narrow,
            &mut samples,
            log,
        )?;
        log(format!("packet size bracketed to ({lo}, {hi}]"));
    }
    samples.sort_by_key(|x| (x.k, x.w_ns as u64));
    let fit = fit::fit(&samples, near)
        .ok_or_else(|| Error::Io("the sweep could not be fitted".into()))?;
    let poll_ns = measure_poll(opts, log)?;
    Ok(Calibration {
        fit,
        samples,
        imbalance_ns: w,
        reported_eager_limit: reported,
        library,
        poll_ns,
    })
}

/// Batches of failed polls the round-trip program times (`--poll`).
const POLL_BATCHES: u32 = 101;

/// What a failed poll costs here, ns: the median over batches of failed `MPI_Test` and
/// `MPI_Iprobe` calls, which the round-trip program times (its `--poll`).
fn measure_poll(opts: &Options, log: &mut dyn FnMut(String)) -> Result<f64, Error> {
    let (prog, pre) = opts
        .mpirun
        .split_first()
        .ok_or_else(|| Error::Usage("--mpirun is empty".into()))?;
    log(format!("timing {POLL_BATCHES} batches of failed polls"));
    let out = Command::new(prog)
        .args(pre)
        .args(["-np", &opts.np.to_string()])
        .arg(&opts.rtt)
        .args(["--sizes", "0", "--w", "0", "--reps", "1"])
        .args(["--poll", &POLL_BATCHES.to_string()])
        .output()
        .map_err(|e| Error::Io(format!("cannot run {prog}: {e}")))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let median = text
        .lines()
        .find_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["poll", median, ..] => median.parse::<f64>().ok(),
            _ => None,
        });
    match (out.status.success(), median) {
        (true, Some(ns)) => Ok(ns),
        _ => Err(Error::Io(format!(
            "the round-trip program did not time failed polls ({}): {}{}\n(rebuild it with \
             `make -C tracer`: older builds have no --poll)",
            out.status,
            text.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
    }
}

/// The TOML the predictor's `--params` reads, with the fit's quality as comments.
pub fn params_file(c: &Calibration) -> String {
    let mut s = String::new();
    s.push_str("# LogGPS parameters measured by `loggps-predict calibrate` (paper §4.3)\n");
    if !c.library.is_empty() {
        s.push_str(&format!(
            "# MPI library: {}\n",
            c.library.lines().next().unwrap_or("")
        ));
    }
    s.push_str(&format!(
        "# {} round trips, W = {} ns; model vs measured: rms {:.2}%, max {:.2}%; {} outlier(s) dropped\n",
        c.samples.len(),
        c.imbalance_ns,
        100.0 * c.fit.rms_rel,
        100.0 * c.fit.max_rel,
        c.fit.outliers.len()
    ));
    if let Some((name, bytes)) = &c.reported_eager_limit {
        s.push_str(&format!("# the library reports {name} = {bytes} bytes\n"));
    }
    s.push_str(&crate::model::params_toml(&c.fit.params));
    // A program's failed polls cost what they cost in its trace unless `poll` is set: a poll
    // over many requests costs more than this one-request figure.
    s.push_str(&format!(
        "# a failed poll (MPI_Test, MPI_Iprobe on one request) costs {} ns here; set `poll` to \
         cost every failed poll so (by default each keeps its traced duration)\n# poll = {:?}\n",
        c.poll_ns, c.poll_ns
    ));
    s
}
