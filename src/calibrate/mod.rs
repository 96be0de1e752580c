//! `loggps-predict calibrate`: measure round-trip times and call durations on this machine
//! with an MPI program (`tracer/calibrate/rtt.c`), fit LogGPS parameters in bands of message
//! size to them (`banded`), and write a parameter file the predictor reads.

mod again;
pub mod banded;
pub mod bounce;
pub mod eager_split;
pub mod exchange;
pub mod fit;
mod launch;
mod limit;
mod local;
pub mod noise;
mod oc;
mod placement;
pub mod reduce;
pub mod svg;

use crate::error::Error;
use crate::model::{Band, BySize, Class, Params, SizeParam};
use crate::trace::{OTHER_CORES, library};
pub use again::{Again, sizes_in_words as again_sizes_in_words};
use banded::BandedFit;
use fit::{Calls, Sample};
use launch::{Launch, RTT_DONE, TRACE_DONE, launch, odd_launches, read_launch};
pub use limit::{EagerAbove, MISS};
use limit::{eager_limit, measure_eager_above};
use local::measure_local;
pub use local::{
    ALLOC_MAX_BYTES, COPY_ALIAS, COPY_BYTES, COPY_WARNING, PROGRESS_BYTES, alias_finding,
    alias_rate, alloc_finding, alloc_ns, copy_finding, drained_finding, drained_points,
    held_finding, held_rate, held_reduce_rate, moves_only_in_calls,
};
pub use oc::{CollLoop, OcFit, UntracedRound, fit_oc, fit_oc_launches, fit_oc_sets};
use placement::placements;
pub(crate) use placement::placements_apart;
pub use placement::{MIN_OTHER_LAUNCHES, same_cores};
use reduce::Reduction;
use std::collections::HashMap;
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
    /// A fixed imbalance `W`, ns, measured besides the one that hides each size's transfer
    /// (0: none).
    pub imbalance_ns: u64,
    /// Repetitions per point at least (the mean of their middle half is kept), more while a
    /// point has taken less than `time_ms`.
    pub reps: u32,
    pub time_ms: f64,
    /// Sizes per octave in the coarse sweep.
    pub per_octave: u32,
    /// Launches of the coarse sweep, combined by their medians: the library may pick its path
    /// per launch.
    pub launches: u32,
    /// A second launcher under which the library's eager limit is higher (Open MPI: `mpirun
    /// --mca btl_vader_eager_limit 65536`): the sizes between the two limits are measured
    /// eager there too, and the set keeps their eager bands (the model's §10, "both
    /// protocols"). None: each size is measured under one protocol.
    pub eager_mpirun: Option<Vec<String>>,
}

/// What a calibration found.
#[derive(Clone, Debug)]
pub struct Calibration {
    pub fit: BandedFit,
    /// The launches at another placement of the ranks' cores than the majority's, fitted as a
    /// second set of the node's class with its own `cores` (the model's §12), where there were
    /// [`MIN_OTHER_LAUNCHES`] or more.
    pub other: Option<Other>,
    pub samples: Vec<Sample>,
    /// Rank 0's calls at an imbalance that just hides the transfer, per size of the sweep.
    pub calls: Vec<Calls>,
    /// Where the round trips jump to the rendezvous: the largest size measured eager and the
    /// smallest measured rendezvous (None: no jump found, `S` from the library or unbounded).
    pub jump: Option<(u64, u64)>,
    pub imbalance_ns: u64,
    /// The eager limit the library reports through the MPI tool interface, with its name.
    pub reported_eager_limit: Option<(String, u64)>,
    pub library: String,
    /// Launches of the sweep combined.
    pub launches: u32,
    /// How far their round trips at `w = 0` differ ([`launch_spread`]); how far once each
    /// launch's speed is divided out, and the least and greatest of those speeds ([`speeds`]).
    pub launch_spread: f64,
    pub launch_within: f64,
    pub launch_speeds: [f64; 2],
    /// Per launch, a cache line's round trip between the two ranks' cores before and after its
    /// sweep, ns (none where the ranks share no memory): where the OS or a hypervisor runs
    /// them on cores farther apart, every message over shared memory costs more.
    pub line_ns: Vec<[f64; 2]>,
    /// What a failed poll costs here, ns, untraced and on one request.
    pub poll_ns: f64,
    /// What posting a receive costs here, ns (`MPI_Irecv`, untraced): every set's `post`.
    pub post_ns: f64,
    /// The library's reduction timed over the vector's size: `fit.params.gamma` by size.
    pub reduction: Reduction,
    /// The progress probe: how long a posted receive of [`PROGRESS_BYTES`] waited after
    /// computation, and the same message's round trip, ns medians; `fit.params.progress_at_calls`
    /// says what they tell.
    pub progress_wait_ns: f64,
    pub progress_rtt_ns: f64,
    /// The copy probe: a memcpy of [`COPY_BYTES`] between page-aligned buffers and with the
    /// destination [`COPY_ALIAS`] bytes past the source modulo 4096, ns medians.
    pub copy_aligned_ns: f64,
    pub copy_aliased_ns: f64,
    /// The held probe's sizes and medians (`local::held_rate`), and the set whose placement
    /// it ran at (0 the main, 1 the other) where it gave one `held`.
    pub held: Vec<(u64, [f64; 4])>,
    pub held_set: Option<usize>,
    /// The alias probe's sizes and medians (`local::alias_finding`), ns.
    pub alias: Vec<(u64, f64, f64)>,
    /// The drained probe's sizes and medians (`local::drained_finding`), ns.
    pub drained: Vec<(u64, f64, f64)>,
    /// What an `MPI_Wait` on a complete request costs here, ns (`wait_finding`; None: an older
    /// round-trip program timed none).
    pub wait_ns: Option<f64>,
    /// The aligned memcpy timed over [`reduce::SIZES`]: `fit.params.copy` by size (the model's
    /// §15).
    pub copying: Reduction,
    /// A `malloc` and `free` of each of [`reduce::SIZES`], ns: `fit.params.alloc` (the model's
    /// §15).
    pub allocs: Vec<(u64, f64)>,
    /// The clock's own interval (two reads with nothing between), taken out of the copy,
    /// reduction and allocation probes' medians, ns.
    pub clock_ns: f64,
    /// The loop of small collectives `fit.params.oc` is fitted to, traced and run untraced (None: no tracer).
    pub oc_fit: Option<OcFit>,
    /// The sweep under [`Options::eager_mpirun`] whose eager bands above `S` the set keeps.
    pub eager_above: Option<EagerAbove>,
    /// Halo-like exchanges traced and predicted with the set (None: no tracer, or it failed).
    pub exchanges: Option<exchange::Exchanges>,
    /// The round trips `fit.params.bounce` is fitted to, or why there are none.
    pub bounce: bounce::Measured,
    /// Per launch in the set, the share of its round trips' time beyond their middle halves'
    /// (interruptions, [`noise`]); empty from a round-trip program that prints no means.
    pub interrupted: Vec<f64>,
    /// Each rank's detours in each launch in the set, spinning on the clock before its sweep
    /// ([`noise::Detours`]); empty from a round-trip program without `--detours`.
    pub detours: Vec<noise::Detours>,
    /// The sizes the fits missed, measured again ([`again`]).
    pub again: Again,
}

/// A second set of one calibration: the launches at another placement's.
#[derive(Clone, Debug)]
pub struct Other {
    pub fit: BandedFit,
    pub samples: Vec<Sample>,
    /// As [`Calibration::calls`], of these launches.
    pub calls: Vec<Calls>,
    /// As [`Calibration::line_ns`], of these launches.
    pub line_ns: Vec<[f64; 2]>,
    /// As [`Calibration::oc_fit`], at this placement.
    pub oc_fit: Option<OcFit>,
    /// As [`Calibration::exchanges`], of an exchange launch at this placement (None: none ran
    /// there).
    pub exchanges: Option<exchange::Exchanges>,
    /// As [`Calibration::bounce`], at this placement.
    pub bounce: bounce::Measured,
    /// As [`Calibration::eager_above`], of the launches at this placement under
    /// `--eager-mpirun` (None: none ran here).
    pub eager_above: Option<EagerAbove>,
}

/// The round-trip program's arguments for a launch that runs a probe alone: one round trip of
/// 0 bytes, untimed.
const PROBE_ONLY: [&str; 10] = [
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
];

/// Rounds of collectives the traced probe run makes (`--coll`).
const COLL_ROUNDS: u32 = 500;

/// The exchange launches: one launch's exchanges are a draw (at one placement, some launches
/// take twice as long as most: MODEL.md §9), so each set takes the median of those at its
/// placement ([`exchanges_per_set`]).
const EXCHANGE_LAUNCHES: usize = 5;

/// The exchange launches wanted at each placement they ran at (more are launched while one has
/// fewer, up to twice [`EXCHANGE_LAUNCHES`] in all).
const EXCHANGE_EACH: usize = 3;

impl Calibration {
    /// Whether the measured `S` and the reported limit agree: the reported one may count a
    /// protocol header the payload does not have (`trace::library::agrees`, as a prediction
    /// judges a trace's limit against its set's `S`).
    pub fn eager_limits_agree(&self) -> Option<bool> {
        let reported = limit::switch_reported(self.reported_eager_limit.as_ref())?;
        Some(crate::trace::library::agrees(self.fit.params.S, reported))
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

/// The imbalance of the point that times the calls, as a multiple of the size's round trip at
/// `w = 0` (the round-trip program's `--hide`).
const HIDE: f64 = 1.5;

/// One launch of the round-trip program over `sizes` × `ws`; with `calls`, each size's calls
/// timed too (`--hide`); with `line`, the cache line's round trip between the ranks' cores
/// before and after the sweep and after each size (`--line`).
fn run_rtt(
    opts: &Options,
    sizes: &[u64],
    ws: &[u64],
    (calls, line): (bool, bool),
    extra: &[&str],
    log: &mut dyn FnMut(String),
) -> Result<Launch, Error> {
    let reps = opts.reps;
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
        "--time-ms",
        &opts.time_ms.to_string(),
    ]);
    if calls {
        cmd.args(["--hide", &HIDE.to_string()]);
    }
    if line {
        cmd.args(["--line", &LINE_TRIPS.to_string()]);
    }
    cmd.args(["--detours", &noise::DETOUR_SPIN_MS.to_string()]);
    cmd.args(extra);
    log(format!(
        "measuring {} size(s) × {} imbalance(s), {reps} repetitions each",
        sizes.len(),
        ws.len()
    ));
    let out = launch(&mut cmd, RTT_DONE, log).map_err(|e| {
        Error::Io(format!(
            "cannot run {prog}: {e} (is MPI installed? see --mpirun)"
        ))
    })?;
    if !out.ok {
        return Err(Error::Io(format!(
            "the round-trip program failed ({}): {}\n{}",
            out.status,
            out.stderr.trim(),
            "run it by hand to see why: ".to_string()
                + &format!(
                    "{} -np 2 {} --sizes 0 --w 0",
                    opts.mpirun.join(" "),
                    opts.rtt.display()
                )
        )));
    }
    let text = &out.stdout;
    let l = read_launch(text);
    let expected = sizes.len() * (ws.len() + calls as usize);
    if l.samples.len() != expected || (calls && l.calls.len() != sizes.len()) {
        return Err(Error::Io(format!(
            "the round-trip program printed {} of {expected} round trips and {} of {} call \
             timings (rebuild it with `make -C tracer`: older builds have no --hide):\n{text}",
            l.samples.len(),
            l.calls.len(),
            if calls { sizes.len() } else { 0 }
        )));
    }
    Ok(l)
}

/// The imbalances of the sweep besides the one that hides each size's transfer: 0, and `W`
/// where one is given.
fn imbalances(opts: &Options) -> Vec<u64> {
    match opts.imbalance_ns {
        0 => vec![0],
        w => vec![0, w],
    }
}

/// The coarse sweep, `opts.launches` times, combined: per size and imbalance the median of the
/// launches' values (each the mean of its repetitions' middle half; the hiding imbalance, which
/// each launch sets from its own round trip, the median too), per size the median call
/// durations; and how far the launches' round trips at `w = 0` differ ([`launch_spread`]). A
/// set fitted to launches on cores near together and far apart fits neither: where some
/// launches differ so from the others ([`same_cores`]), more are run (up to as many again) and
/// the odd ones left out, or, where at least [`MIN_OTHER_LAUNCHES`] ran at the other placement,
/// made a second set; where one did, more are run (up to as many again) for a second.
fn sweep(opts: &Options, log: &mut dyn FnMut(String)) -> Result<(Swept, Option<Swept>), Error> {
    let sizes = coarse_sizes(opts.max_bytes, opts.per_octave);
    let ws = imbalances(opts);
    let want = opts.launches.max(1) as usize;
    let mut runs: Vec<Launch> = Vec::new();
    // The sizes launches measured at another placement than most of their sweep's.
    let mut parts: Vec<Launch> = Vec::new();
    let mut launched = 0;
    let count = |p: &[Option<bool>], at: Option<bool>| p.iter().filter(|&&x| x == at).count();
    while launched < 2 * want {
        let p = placements(&runs);
        let kept = count(&p, Some(true));
        // One launch at another placement is too few for a set of its own: measuring on
        // gives that placement the chance to come back (this machine flips in spells), unless
        // parts of other launches measured there make the set with it.
        let lone = (1..MIN_OTHER_LAUNCHES).contains(&count(&p, Some(false)))
            && !launch::parts_make_a_set(&runs, &p, &parts, &sizes);
        if launched >= want && kept >= want && !lone {
            break;
        }
        launched += 1;
        match launched <= want {
            true => log(format!("launch {launched} of {want}")),
            false => log(format!(
                "launch {launched} of up to {}: {}; measuring again",
                2 * want,
                odd_launches(&runs, &p)
            )),
        }
        // Each launch times round trips from a bounced buffer after its sweep too: a set's
        // `bounce` from its own launches where no exchange launch ran at its placement.
        let bounced = ["--bounce", &bounce::sizes(opts.max_bytes)];
        let (mut run, mut part, moved) =
            launch::split_by_placement(run_rtt(opts, &sizes, &ws, (true, true), &bounced, log)?);
        if !moved.is_empty() {
            // where they were timed is not known
            run.bounced.clear();
            part.iter_mut().for_each(|p| p.bounced.clear());
            let figures = |l: &Launch| {
                l.line
                    .map_or("none".into(), |[a, b]| format!("{a:.0}/{b:.0}"))
            };
            log(format!(
                "launch {launched}: the ranks' cores moved apart or together within its sweep: {} \
                 of its {} sizes measured elsewhere or while moving ({} of them wholly at \
                 another placement, {} ns before/after them); the rest at {} ns",
                moved.len(),
                sizes.len(),
                part.as_ref().map_or(0, |p| p.calls.len()),
                part.as_ref().map_or("none".into(), figures),
                figures(&run),
            ));
        } else if let Some([a, b]) = run.line {
            // Every launch's placement in the log, so that the sets it made can be read back.
            log(format!(
                "launch {launched}: a cache line between the ranks' cores and back {a:.0}/{b:.0} \
                 ns before/after its sweep"
            ));
        }
        parts.extend(part);
        if !run.samples.is_empty() {
            runs.push(run);
        }
    }
    let mut p = placements(&runs);
    if count(&p, Some(true)) == 0 {
        // Every launch moved within its sweep: they are combined as they are (the cores
        // finding warns that they mix placements).
        p = vec![Some(true); runs.len()];
    }
    let odd = count(&p, Some(false));
    if odd + count(&p, None) > 0 {
        log(format!(
            "{} {}: the fit is the other {} launches'{}",
            match odd >= MIN_OTHER_LAUNCHES {
                true => "set apart",
                false => "left out",
            },
            odd_launches(&runs, &p),
            count(&p, Some(true)),
            match odd >= MIN_OTHER_LAUNCHES {
                true => ", theirs a second set of the node's class",
                false => "",
            }
        ));
    }
    let apart = runs.iter().any(|r| r.apart);
    let (mut kept, mut other) = (Vec::new(), Vec::new());
    for (run, k) in runs.into_iter().zip(p) {
        match k {
            Some(true) => kept.push(run),
            Some(false) => other.push(run),
            None => {}
        }
    }
    let (main, far) = launch::with_parts(&kept, &mut other, parts, &sizes);
    kept.extend(main);
    match far {
        Ok(0) => {}
        Ok(far) => log(format!(
            "with the second set: the sizes {far} launch(es) measured at its placement within \
             their sweeps"
        )),
        Err(missing) => log(format!(
            "no second set from the sizes launches measured at another placement within their \
             sweeps: with the launches there, they leave {} of the {} sizes unmeasured ({})",
            missing.len(),
            sizes.len(),
            match missing.len() {
                0..=6 => (missing.iter().map(|k| format!("{k} B")))
                    .collect::<Vec<_>>()
                    .join(", "),
                _ => format!("{}–{} B among them", missing[0], missing[missing.len() - 1]),
            }
        )),
    }
    let combined = |runs: Vec<Launch>| combine(runs, &sizes, &ws, apart);
    let other = (other.len() >= MIN_OTHER_LAUNCHES).then(|| combined(other));
    Ok((combined(kept), other))
}

/// Whether a sweep measured again replaces the earlier one: unless it shows no rendezvous jump
/// near the reported limit `near` either and combines fewer launches at one placement (the
/// ranks moved within more of them).
fn replaces(again: &Swept, before: &Swept, near: Option<u64>) -> bool {
    fit::eager_jump(&again.samples, near).is_some() || again.launches >= before.launches
}

/// The second set after a sweep measured again: its own, else, of the other sweep's sets (its
/// main set and its second), the one of most launches at another placement than this sweep's
/// majority: a spell at the other placement is not lost because a later sweep held one
/// placement throughout (MPICH sweeps twice, its reported eager limit not the one its messages
/// meet: five launches near, then nine far and one near, lost the near set).
fn kept_other(main: &Swept, other: Option<Swept>, before: [Option<Swept>; 2]) -> Option<Swept> {
    let apart = |o: &Swept| match (cores_ns(&main.lines), cores_ns(&o.lines)) {
        (Some(a), Some(b)) => placements_apart(a, b),
        _ => false,
    };
    let earlier = before.into_iter().flatten().filter(apart);
    other.or_else(|| earlier.max_by_key(|o| o.launches))
}

/// Launches combined: each launch's speed divided out ([`speeds`]), then per size and imbalance
/// the median of the launches' central values, per size the median call durations ([`sweep`]);
/// `apart`: whether the ranks ran on different nodes.
fn combine(runs: Vec<Launch>, sizes: &[u64], ws: &[u64], apart: bool) -> Swept {
    let launches = runs.len();
    let speeds = speeds(&runs);
    let (mut samples, mut calls, mut lines) = (Vec::new(), Vec::new(), Vec::new());
    let (mut raw, mut interrupted) = (Vec::new(), Vec::new());
    for (l, &s) in runs.iter().zip(&speeds) {
        raw.extend_from_slice(&l.samples);
        // What a message costs beyond the imbalance, at the median launch's speed.
        let at = |w: f64, t: f64| w + (t - w) / s;
        samples.extend(l.samples.iter().map(|x| Sample {
            rtt_ns: at(x.w_ns, x.rtt_ns),
            ..*x
        }));
        calls.extend(l.calls.iter().map(|c| Calls {
            send_ns: c.send_ns / s,
            recv_ns: c.recv_ns / s,
            isend_ns: c.isend_ns.map(|t| t / s),
            ..*c
        }));
        lines.extend(l.line);
        interrupted.extend(l.spent.share());
    }
    let med = |v: Vec<f64>| fit::median(&v);
    let hiding = |x: &Sample| calls.iter().any(|c| c.k == x.k && c.w_ns == x.w_ns);
    let at0 = |v: &[Sample]| -> Vec<Sample> {
        let kept = v.iter().filter(|x| x.w_ns == 0.0 && !hiding(x));
        kept.cloned().collect()
    };
    // How far the launches differ as measured, and with their speeds divided out.
    let (spread, within) = (launch_spread(&at0(&raw)), launch_spread(&at0(&samples)));
    let (mut out, mut timed) = (Vec::new(), Vec::new());
    for &k in sizes {
        // A size whose points every launch left out (its ranks moved during it): none.
        if !samples.iter().any(|x| x.k == k) {
            continue;
        }
        for &w in ws {
            let at = samples
                .iter()
                .filter(|x| x.k == k && x.w_ns == w as f64 && !hiding(x));
            out.push(Sample {
                k,
                w_ns: w as f64,
                rtt_ns: med(at.map(|x| x.rtt_ns).collect()),
            });
        }
        let at: Vec<&Calls> = calls.iter().filter(|c| c.k == k).collect();
        let hid: Vec<&Sample> = samples.iter().filter(|x| x.k == k && hiding(x)).collect();
        let w = med(at.iter().map(|c| c.w_ns).collect());
        out.push(Sample {
            k,
            w_ns: w,
            rtt_ns: w + med(hid.iter().map(|x| x.rtt_ns - x.w_ns).collect()),
        });
        timed.push(Calls {
            k,
            w_ns: w,
            send_ns: med(at.iter().map(|c| c.send_ns).collect()),
            recv_ns: med(at.iter().map(|c| c.recv_ns).collect()),
            isend_ns: (at.iter().all(|c| c.isend_ns.is_some()) && !at.is_empty())
                .then(|| med(at.iter().filter_map(|c| c.isend_ns).collect())),
        });
    }
    let fold = |f: fn(f64, f64) -> f64, from: f64| speeds.iter().copied().fold(from, f);
    Swept {
        samples: out,
        calls: timed,
        spread,
        within,
        speeds: [fold(f64::min, f64::INFINITY), fold(f64::max, 0.0)],
        lines,
        apart,
        launches,
        interrupted,
        runs,
    }
}

/// A sweep's round trips and calls (combined over launches), how far its launches differ,
/// each launch's cache-line round trips between the ranks' cores (before and after it, ns),
/// whether the ranks ran on different nodes, how many launches it combines, and the share of
/// each launch's round trips' time that interruptions took ([`noise::Spent::share`]).
#[derive(Clone, Debug)]
struct Swept {
    samples: Vec<Sample>,
    calls: Vec<Calls>,
    spread: f64,
    /// How far they differ once each launch's speed is divided out, and the least and the
    /// greatest of those speeds ([`speeds`]).
    within: f64,
    speeds: [f64; 2],
    lines: Vec<[f64; 2]>,
    apart: bool,
    launches: usize,
    interrupted: Vec<f64>,
    /// The launches combined.
    runs: Vec<Launch>,
}

#[cfg(test)]
impl Swept {
    /// Launches with these cache-line figures and nothing measured (tests of where launches go).
    fn with_lines(lines: &[[f64; 2]]) -> Swept {
        Swept {
            samples: Vec::new(),
            calls: Vec::new(),
            spread: 0.0,
            within: 0.0,
            speeds: [1.0, 1.0],
            lines: lines.to_vec(),
            apart: false,
            launches: lines.len(),
            interrupted: Vec::new(),
            runs: Vec::new(),
        }
    }
}

/// Each launch's speed against the others', as a factor on what its messages cost. This
/// machine runs one launch 10–25% faster or slower than the next, at every size alike (the
/// launches' values move together from one size to the next): each size's median over
/// launches of different speeds scatters by that much around one machine's curve, which the
/// fit then misses. A launch of the sweep (one measuring at least half as many sizes as the
/// most) takes the median, over the sizes another such launch measured too, of its round trip
/// at `w = 0` over their median there. A launch measuring a few sizes again keeps 1: the sizes
/// it measures are those whose medians were off, so its ratios to them would tell the miss,
/// not its speed. 1 too for a launch sharing no size with another.
fn speeds(runs: &[Launch]) -> Vec<f64> {
    fn at0(l: &Launch) -> impl Iterator<Item = &Sample> {
        l.samples.iter().filter(|x| x.w_ns == 0.0 && x.rtt_ns > 0.0)
    }
    let counts: Vec<usize> = runs.iter().map(|l| at0(l).count()).collect();
    let most = counts.iter().copied().max().unwrap_or(0);
    let sweep = |i: usize| counts[i] > 0 && 2 * counts[i] >= most;
    let mut at: HashMap<u64, Vec<f64>> = HashMap::new();
    for (_, l) in runs.iter().enumerate().filter(|(i, _)| sweep(*i)) {
        for x in at0(l) {
            at.entry(x.k).or_default().push(x.rtt_ns);
        }
    }
    let mid: HashMap<u64, f64> = (at.into_iter())
        .filter(|(_, v)| v.len() >= 2)
        .map(|(k, v)| (k, fit::median(&v)))
        .collect();
    (runs.iter().enumerate())
        .map(|(i, l)| {
            let ratios: Vec<f64> = at0(l)
                .filter_map(|x| mid.get(&x.k).map(|m| x.rtt_ns / m))
                .filter(|r| r.is_finite() && *r > 0.0)
                .collect();
            match sweep(i) && !ratios.is_empty() {
                true => fit::median(&ratios),
                false => 1.0,
            }
        })
        .collect()
}

/// Round trips of a cache line between the ranks' cores that the round-trip program times
/// before and after each launch's sweep (`--line`; at most 2 ms, as the tracer times them).
const LINE_TRIPS: u32 = 20_000;

/// How far launches disagree: per size, the range of its round trips (with four or more,
/// the highest and the lowest left out: one odd launch the medians absorb) over their median,
/// and the median of that over the sizes (0 with one launch). The library may pick another
/// path per launch, and a machine may change speed between them.
pub fn launch_spread(round_trips: &[Sample]) -> f64 {
    let mut sizes: Vec<u64> = round_trips.iter().map(|x| x.k).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let per_size: Vec<f64> = sizes
        .iter()
        .map(|&k| {
            let mut v: Vec<f64> = (round_trips.iter())
                .filter(|x| x.k == k)
                .map(|x| x.rtt_ns)
                .collect();
            v.sort_by(f64::total_cmp);
            let inner = if v.len() >= 4 {
                &v[1..v.len() - 1]
            } else {
                &v[..]
            };
            (inner[inner.len() - 1] - inner[0]) / fit::median(&v).max(1e-9)
        })
        .collect();
    match per_size.is_empty() {
        true => 0.0,
        false => fit::median(&per_size),
    }
}

/// How far short of the room [`departs_upto`] asks for a band may fall, as a share of its round
/// trip (each way's shortfall lengthens it by as much: 0.5% at most, a tenth of what the fit
/// misses by): a band of a negative `G` can end a nanosecond short at its top, which would
/// otherwise leave every small send at its whole `T1` (MODEL.md §13).
const DEPARTS_SLACK: f64 = 0.0025;

/// Up to which size a blocking eager send returns once its message has left (the model's
/// §13, `Params::departs_upto`): the top of the run of bands from the first whose timed sends
/// (rank 0's `MPI_Send` with its partner already waiting) lie nearer `T1 − Od` than `T1`, in
/// most of their sizes, and whose receives, posted at the send's call, can do their `Op` and
/// that `Od` before the message arrives (`T1 + T2 − 2·Od − Op ≥ 0`, short by
/// [`DEPARTS_SLACK`] of the round trip at most: every round trip the fit reproduces stays as
/// it was, within that). None where the first band's sends take their `T1`, or
/// the set has no `Od`. A band of the zero-byte messages alone without `Od` (the model's §10)
/// is passed over: its sends' `T1 − Od` is their `T1`, so it is the same either way.
pub fn departs_upto(p: &Params, calls: &[Calls]) -> Option<u64> {
    let bands = p.bands.as_ref()?;
    let (mut lo, mut upto) = (0, None);
    for x in bands.as_slice().iter().take_while(|x| x.hi <= p.S) {
        if x.hi == 0 && x.Od == 0.0 {
            lo = 1;
            continue;
        }
        let timed: Vec<&Calls> = (calls.iter())
            .filter(|c| c.k >= lo && c.k <= x.hi && c.send_ns.is_finite())
            .collect();
        let nearer = |c: &&&Calls| {
            let t1 = p.t1(c.k);
            (c.send_ns - (t1 - x.od(c.k))).abs() < (c.send_ns - t1).abs()
        };
        let room = |k: u64| {
            p.t1(k) + p.t2(k) - 2.0 * x.od(k) - x.Op >= -DEPARTS_SLACK * p.round_trip(k, 0.0)
        };
        let departs = x.Od > 0.0
            && 2 * timed.iter().filter(nearer).count() > timed.len()
            && room(lo)
            && room(x.hi);
        if !departs {
            break;
        }
        (lo, upto) = (x.hi + 1, Some(x.hi));
    }
    upto
}

/// [`departs_upto`] in words: the sizes, and rank 0's timed sends there against `T1` and
/// `T1 − Od` (medians over the sizes); None where every send returns at its end.
pub fn departs_finding(p: &Params, calls: &[Calls]) -> Option<String> {
    let upto = p.departs_upto?;
    let at: Vec<&Calls> = (calls.iter())
        .filter(|c| c.k <= upto && c.send_ns.is_finite())
        .collect();
    let med = |f: &dyn Fn(&Calls) -> f64| fit::median(&at.iter().map(|c| f(c)).collect::<Vec<_>>());
    Some(format!(
        "a blocking eager send of at most {upto} B returns once its message has left, its receive \
         paying the rest of its overhead (Od; the model's §13): rank 0's MPI_Send took {:.0} ns \
         (the median of {} sizes) where T1 is {:.0} ns and T1 − Od {:.0} ns; every round trip \
         costs as before",
        med(&|c| c.send_ns),
        at.len(),
        med(&|c| p.t1(c.k)),
        med(&|c| p.t1(c.k) - p.departed(c.k)),
    ))
}

/// The eager sizes whose message arrives sooner than LogGPS lets it: half the round trip at
/// `w = 0` (the model's `T1 + T2 + T3`) more than 25% shorter than rank 0's send and receive
/// timed with the reply already there (`T1 + T3`). The library lets the message go before
/// `MPI_Send` returns (Open MPI's shared memory at 257 B–4 KiB here: 240 ns against 470 ns at
/// 304 B), which the model, its transfer starting when the send's overhead ends and `L ≥ 0`,
/// cannot follow: no valid parameters fit both `w` there. Each as `(k, half the round trip,
/// send + receive)`, ns medians.
pub fn early_departures(
    samples: &[Sample],
    calls: &[Calls],
    eager_limit: u64,
) -> Vec<(u64, f64, f64)> {
    // Both come combined over the launches: one round trip at w = 0 and one call pair a size.
    (calls.iter())
        .filter(|c| c.k <= eager_limit && (c.send_ns + c.recv_ns).is_finite())
        .filter_map(|c| {
            let at0 = samples.iter().find(|x| x.k == c.k && x.w_ns == 0.0)?;
            let (half, both) = (at0.rtt_ns / 2.0, c.send_ns + c.recv_ns);
            (both > 1.25 * half).then_some((c.k, half, both))
        })
        .collect()
}

/// What the traced probe runs give: the library, the eager limit it reports through the MPI
/// tool interface, each launch's trace (of its loop of collectives, for `oc`) and the traces of
/// the exchanges ([`exchange`]; up to [`EXCHANGE_LAUNCHES`], none where a launch failed, said in
/// `log`).
type Reported = (
    String,
    Option<(String, u64)>,
    Vec<oc::CollLoop>,
    Vec<(
        crate::trace::Trace,
        Vec<bounce::RoundTrips>,
        Option<exchange::Untraced>,
    )>,
);

/// The round-trip program run under the tracer, one launch at a time, each writing its trace
/// into a directory of its own (removed when dropped).
struct Traced<'a> {
    opts: &'a Options,
    tracer: PathBuf,
    version: String,
    dir: PathBuf,
}

impl<'a> Traced<'a> {
    fn new(opts: &'a Options, tracer: &Path) -> Result<Traced<'a>, Error> {
        static MADE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = MADE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            (std::env::temp_dir()).join(format!("loggps-calibrate-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| Error::Io(format!("{}: {e}", dir.display())))?;
        let prog = (opts.mpirun.first()).ok_or_else(|| Error::Usage("--mpirun is empty".into()))?;
        let version = Command::new(prog)
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default();
        let tracer = std::fs::canonicalize(tracer)
            .map_err(|e| Error::Io(format!("{}: {e}", tracer.display())))?;
        Ok(Traced {
            opts,
            tracer,
            version,
            dir,
        })
    }

    /// One launch, after one round trip of 0 bytes, with `probe`: its trace and what it printed.
    fn run(
        &self,
        probe: &[&str],
        log: &mut dyn FnMut(String),
    ) -> Result<(crate::trace::Trace, String), Error> {
        let (prog, pre) = (self.opts.mpirun.split_first())
            .ok_or_else(|| Error::Usage("--mpirun is empty".into()))?;
        let trace_path = self.dir.join("probe.bin");
        let mut cmd = Command::new(prog);
        cmd.args(pre);
        let (preload, out) = (
            self.tracer.display().to_string(),
            trace_path.display().to_string(),
        );
        if self.version.contains("Open MPI") || self.version.contains("OpenRTE") {
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
        cmd.args(["-np", &self.opts.np.to_string()])
            .arg(&self.opts.rtt)
            .args(PROBE_ONLY);
        cmd.args(probe);
        let _ = std::fs::remove_file(&trace_path);
        let ran = launch(&mut cmd, TRACE_DONE, log)
            .map_err(|e| Error::Io(format!("cannot run {prog}: {e}")))?;
        match ran.ok {
            true => Ok((crate::trace::load(&trace_path, &mut |_| {})?, ran.stdout)),
            false => Err(Error::Io(format!(
                "the traced probe run failed ({}): {}",
                ran.status,
                ran.stderr.trim()
            ))),
        }
    }

    /// One launch of the loop of collectives that `oc` is fitted to, with what it printed of
    /// the same loop untraced.
    fn collectives(&self, log: &mut dyn FnMut(String)) -> Result<oc::CollLoop, Error> {
        let rounds = COLL_ROUNDS.to_string();
        let (trace, printed) = self.run(&["--coll", &rounds], log)?;
        Ok(oc::CollLoop::new(trace, &printed))
    }
}

impl Drop for Traced<'_> {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Runs the round-trip program under the tracer, with a loop of small collectives, in as many
/// launches as the sweep, then with the exchanges in [`EXCHANGE_LAUNCHES`] launches (more while
/// a placement they ran at holds fewer than [`EXCHANGE_EACH`]), and reads back what the traces
/// record.
fn reported_by_library(
    opts: &Options,
    tracer: &Path,
    log: &mut dyn FnMut(String),
) -> Result<Reported, Error> {
    let traced = Traced::new(opts, tracer)?;
    // One launch's loop runs 2 ms: a preemption or another path in that launch moves it by
    // half (1.3–2.4 ms in five launches here), so the probe runs as many launches as the sweep.
    let mut traces = Vec::new();
    for _ in 0..opts.launches.max(1) {
        traces.push(traced.collectives(log)?);
    }
    let (sizes, bounce_sizes) = (
        exchange::sizes(opts.max_bytes),
        bounce::sizes(opts.max_bytes),
    );
    let mut exchanges: Vec<(crate::trace::Trace, _, _)> = Vec::new();
    // More launches (twice as many at most) while a placement they ran at holds fewer than
    // [`EXCHANGE_EACH`] of them: a set fitted to one launch takes its draw.
    let few = |x: &[(crate::trace::Trace, _, _)]| {
        let figures: Vec<f64> = x.iter().filter_map(|(t, _, _)| probe_cores(t)).collect();
        few_at_a_placement(&figures, EXCHANGE_EACH)
    };
    while exchanges.len() < EXCHANGE_LAUNCHES
        || (few(&exchanges) && exchanges.len() < 2 * EXCHANGE_LAUNCHES)
    {
        match traced.run(&["--exchange", &sizes, "--bounce", &bounce_sizes], log) {
            Ok((t, out)) => {
                // The same exchanges untraced, right after: at the same placement, most often.
                let untraced = untraced_launch(opts, &sizes, log)
                    .filter(|(line, _)| at_placement(*line, probe_cores(&t)))
                    .map(|(_, printed)| exchange::untraced(&[printed]))
                    .filter(|u| !u.is_empty());
                exchanges.push((t, bounce::parse(&out), untraced))
            }
            Err(e) => {
                log(format!("the exchanges are not checked: {e}"));
                break;
            }
        }
    }
    Ok((
        traces[0].trace.meta.library.clone(),
        traces[0]
            .trace
            .meta
            .eager_limit
            .clone()
            .map(|e| (e.name, e.bytes)),
        traces,
        exchanges,
    ))
}

/// Launches of the exchanges under the eager launcher (traced, and as many untraced).
const EAGER_EXCHANGE_LAUNCHES: usize = 3;

/// One untraced launch of the round-trip program's probes `probe` alone (`--exchange K,…`,
/// `--bounce K,…`) under `opts`' launcher: its cache line's round trip between the ranks'
/// cores (the larger of its two figures; None: not measured) and what it printed.
pub(super) fn untraced_probe(
    opts: &Options,
    probe: &[&str],
    log: &mut dyn FnMut(String),
) -> Result<(Option<f64>, String), Error> {
    let (prog, pre) =
        (opts.mpirun.split_first()).ok_or_else(|| Error::Usage("--mpirun is empty".into()))?;
    let mut cmd = Command::new(prog);
    cmd.args(pre)
        .args(["-np", &opts.np.to_string()])
        .arg(&opts.rtt)
        .args(PROBE_ONLY)
        .args(["--line", &LINE_TRIPS.to_string()])
        .args(probe);
    let ran = launch(&mut cmd, RTT_DONE, log)
        .map_err(|e| Error::Io(format!("cannot run {prog}: {e}")))?;
    if !ran.ok {
        return Err(Error::Io(format!(
            "the round-trip program failed ({}): {}",
            ran.status,
            ran.stderr.trim()
        )));
    }
    let line = read_launch(&ran.stdout).line.map(|[a, b]| a.max(b));
    Ok((line, ran.stdout))
}

/// [`untraced_probe`] of the exchanges of `sizes` (a list, as `--exchange` takes it); None
/// where it failed (said in `log`).
fn untraced_launch(
    opts: &Options,
    sizes: &str,
    log: &mut dyn FnMut(String),
) -> Option<(Option<f64>, String)> {
    (untraced_probe(opts, &["--exchange", sizes], log))
        .map_err(|e| log(format!("an untraced exchange launch failed: {e}")))
        .ok()
}

/// Whether a launch whose cache line's round trip took `line` ran at the placement of one of
/// `cores` (within 2×; so where either is unknown).
fn at_placement(line: Option<f64>, cores: Option<f64>) -> bool {
    match (line, cores) {
        (Some(a), Some(b)) => !placements_apart(a, b),
        _ => true,
    }
}

/// The exchanges of `sizes` timed untraced under `opts`' launcher in
/// [`EAGER_EXCHANGE_LAUNCHES`] launches, of those that ran at the placement of a set whose
/// `cores` are given ([`at_placement`]): [`exchange::Untraced`]. None where none ran there
/// (said in `log`).
fn untraced_exchanges(
    opts: &Options,
    sizes: &str,
    cores: Option<f64>,
    log: &mut dyn FnMut(String),
) -> Option<exchange::Untraced> {
    let outputs: Vec<String> = (0..EAGER_EXCHANGE_LAUNCHES)
        .filter_map(|_| untraced_launch(opts, sizes, log))
        .filter(|(line, _)| at_placement(*line, cores))
        .map(|(_, out)| out)
        .collect();
    let untraced = exchange::untraced(&outputs);
    if untraced.is_empty() {
        log(format!(
            "none of the {EAGER_EXCHANGE_LAUNCHES} untraced exchange launches under `{}` ran at \
             the set's placement: the exchanges are measured traced, the tracer's time kept",
            opts.mpirun.join(" ")
        ));
    }
    (!untraced.is_empty()).then_some(untraced)
}

/// The exchanges of the sizes between `set`'s `S` and `limit` (the limit measured under the
/// eager launcher `mpirun`: each power of two between, 1.5 times each, and the limit), traced
/// under that launcher in [`EAGER_EXCHANGE_LAUNCHES`] launches; the set's eager bands above
/// `S` fitted to them ([`eager_split::fit`]), then the exchanges predicted with the set at `S =
/// limit`, its eager bands above `S` costing them (as a trace recorded at that limit is
/// predicted, and a what-if `--S limit` of a trace at `S`): of the launches at the set's
/// placement, the middle one ([`exchanges_per_set`]). Round trips, which the eager bands are
/// fitted to first, have one message in flight; where both ranks copy through the library's
/// shared buffers at once (16 KiB exchanges here: each copy 30% longer than alone), they
/// cannot tell. None where no size lies there, or no launch ran (said in `log`); with the bands
/// the exchanges moved.
fn eager_exchanges(
    opts: &Options,
    mpirun: &[String],
    tracer: &Path,
    limit: u64,
    set: &mut Params,
    log: &mut dyn FnMut(String),
) -> (Option<exchange::Exchanges>, Vec<eager_split::Refit>) {
    let mut each: Vec<u64> = ((0..63).flat_map(|i| [1u64 << i, 3u64 << i]).chain([limit]))
        .filter(|&k| k > set.S && k <= limit && k <= opts.max_bytes)
        .collect();
    each.sort_unstable();
    each.dedup();
    let sizes: Vec<String> = each.iter().map(|k| k.to_string()).collect();
    if sizes.is_empty() {
        return (None, Vec::new());
    }
    let eager = Options {
        mpirun: mpirun.to_vec(),
        ..opts.clone()
    };
    let mut traces = Vec::new();
    let run = |traces: &mut Vec<crate::trace::Trace>, log: &mut dyn FnMut(String)| {
        let traced = Traced::new(&eager, tracer)?;
        for _ in 0..EAGER_EXCHANGE_LAUNCHES {
            traces.push(traced.run(&["--exchange", &sizes.join(",")], log)?.0);
        }
        Ok::<(), Error>(())
    };
    if let Err(e) = run(&mut traces, log) {
        log(format!(
            "{} of the {EAGER_EXCHANGE_LAUNCHES} exchange launches under `{}` ran: {e}",
            traces.len(),
            mpirun.join(" ")
        ));
    }
    if traces.is_empty() {
        return (None, Vec::new());
    }
    let untraced = untraced_exchanges(&eager, &sizes.join(","), set.cores, log);
    let checked = (|| {
        // Those at the set's placement fit its bands (a launch far from it costs another
        // price).
        let mut here: Vec<crate::trace::Trace> = (traces.iter())
            .filter(|t| at_placement(probe_cores(t), set.cores))
            .cloned()
            .collect();
        if untraced.is_none() {
            here.iter_mut()
                .for_each(|t| t.meta.ranks.keep_tracer_time());
        }
        let (fitted, refits) = eager_split::fit(&here, &each, set, limit, untraced.as_ref())?;
        *set = fitted;
        let at = Params { S: limit, ..*set };
        (traces.into_iter())
            .map(|t| exchange::check_nearest(t, &[&at], &[], untraced.as_ref()))
            .collect::<Result<Vec<_>, Error>>()
            .map(|c| (c, at, refits))
    })();
    match checked {
        Ok((checked, at, refits)) => (
            exchanges_per_set(checked, &[&at])
                .into_iter()
                .next()
                .flatten(),
            refits,
        ),
        Err(e) => {
            log(format!(
                "the exchanges under `{}` are not checked: their replay failed: {e}",
                mpirun.join(" ")
            ));
            (None, Vec::new())
        }
    }
}

/// A traced launch's cores figure: the larger of the cache line's round trips at `MPI_Init`
/// and `MPI_Finalize`.
pub(crate) fn probe_cores(t: &crate::trace::Trace) -> Option<f64> {
    (t.meta.ranks.get(0).cores).map(|c| c.init_ns.max(c.final_ns))
}

/// How many of the loops of collectives `probe` ran at each set's placement (their cores within
/// 2× of the set's; a launch or a set with no figure counts everywhere).
fn probe_at_sets(probe: &[oc::CollLoop], sets: &[&Params]) -> Vec<usize> {
    (sets.iter())
        .map(|p| {
            (probe.iter())
                .filter(|l| at_placement(probe_cores(&l.trace), p.cores))
                .count()
        })
        .collect()
}

/// Launches of the loop of collectives a set's placement needs at least: its `oc` is their
/// median.
const COLL_AT_PLACEMENT: usize = 2;

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
    let tracer = opts.tracer.as_deref().filter(|t| t.exists());
    let (library, reported, mut probe, exchanges) = match &opts.tracer {
        Some(t) if t.exists() => reported_by_library(opts, t, log)?,
        Some(t) => {
            log(format!(
                "{} not found: the eager limit the library reports is not read, nor oc fitted (build it with `make -C tracer`)",
                t.display()
            ));
            (String::new(), None, Vec::new(), Vec::new())
        }
        None => (String::new(), None, Vec::new(), Vec::new()),
    };
    let w = opts.imbalance_ns;
    let (mut swept, mut other) = sweep(opts, log)?;
    // S: the rendezvous jump (fit::eager_jump), looked for below the limit the library reports
    // and bracketed to adjacent sizes. The library picks its paths per launch: a sweep that
    // shows no jump below the reported limit is measured again before the search widens.
    let reported_limit = limit::switch_reported(reported.as_ref());
    let mut near = reported_limit;
    let mut elsewhere = None;
    for _ in 0..2 {
        if near.is_none() || fit::eager_jump(&swept.samples, near).is_some() {
            break;
        }
        // The same jump away from the reported limit twice: the messages meet another limit
        // (MPICH on UCX reports its shared-memory cell and switches at 8 KiB), not a path
        // this launch's library happened to pick.
        let jump = fit::eager_jump(&swept.samples, None);
        if jump.is_some() && jump == elsewhere {
            break;
        }
        elsewhere = jump;
        log(
            "no rendezvous jump below the reported eager limit in these launches: measuring again"
                .into(),
        );
        let (again, again_other) = sweep(opts, log)?;
        if !replaces(&again, &swept, near) {
            log(format!(
                "kept the earlier sweep's {} launches (this one's held {})",
                swept.launches, again.launches
            ));
            other = kept_other(&swept, other, [again_other, Some(again)]);
        } else {
            let before = std::mem::replace(&mut swept, again);
            other = kept_other(&swept, again_other, [other, Some(before)]);
        }
    }
    if near.is_some() && fit::eager_jump(&swept.samples, near).is_none() {
        log(format!(
            "no rendezvous jump below the reported eager limit {} bytes: searching all sizes",
            near.unwrap_or(0)
        ));
        near = None;
    }
    let (jump, limit) = eager_limit(opts, &swept.samples, near, reported_limit, log)?;
    let again = again::where_missed(opts, limit, &mut swept, other.as_mut(), log);
    // The sweep launches' bounced round trips, at the cores after each one's sweep.
    let swept_bounces: Vec<(Option<f64>, Vec<bounce::RoundTrips>)> = std::iter::once(&swept)
        .chain(other.as_ref())
        .flat_map(|s| &s.runs)
        .filter(|l| !l.bounced.is_empty())
        .map(|l| (l.line.map(|[_, after]| after), l.bounced.clone()))
        .collect();
    let detours: Vec<noise::Detours> = (swept.runs.iter())
        .flat_map(|l| l.detours.iter().copied())
        .collect();
    let Swept {
        mut samples,
        calls,
        spread: launch_spread,
        within: launch_within,
        speeds: launch_speeds,
        lines,
        apart,
        launches,
        interrupted,
        ..
    } = swept;
    samples.sort_by_key(|x| (x.k, x.w_ns as u64));
    let mut fit = banded::fit_bands(&samples, &calls, limit).ok_or_else(|| {
        Error::Io(format!(
            "the sweep could not be fitted in bands (S = {limit} bytes): too few sizes on a side \
             of S? (raise --max-bytes or --per-octave)"
        ))
    })?;
    let local = measure_local(opts, log)?;
    // By size where the probe gave every size a time, else the line's slope.
    let one = |param, v| BySize::one(param, v).ok();
    fit.params.gamma = (local.reduction.by_size(SizeParam::Gamma))
        .or_else(|| one(SizeParam::Gamma, local.reduction.gamma));
    fit.params.copy = (local.copying.by_size(SizeParam::Copy))
        .or_else(|| one(SizeParam::Copy, local.copying.gamma));
    fit.params.alloc = alloc_ns(&local.allocs);
    // An aliased single copy's extra (the model's §9) is the receiving core's: every set's.
    fit.params.alias = alias_rate(&local.alias, limit);
    // What a receive costs whose message a waiting call took in, and one behind another in a
    // completion call (the model's §14): the drained probe's, a copy from the library's own
    // buffer, alike at both placements; and what a completion call whose operations are done
    // costs (`wait`, §4), a check of them: both sets'.
    fit.params.drained = drained_points(&local.drained, limit);
    fit.params.post = Some(local.post_ns);
    fit.params.wait = local.wait_ns;
    fit.params.progress_at_calls =
        moves_only_in_calls(local.progress_wait_ns, local.progress_rtt_ns);
    fit.params.cores = cores_ns(&lines);
    fit.params.class = Some(match apart {
        true => Class::Network,
        false => Class::Node,
    });
    let mut other = other.and_then(|o| fit_other(o, &fit.params, limit, log));
    if let Some(o) = other.as_mut() {
        o.fit.params.alias = fit.params.alias;
        o.fit.params.drained = fit.params.drained;
        o.fit.params.wait = fit.params.wait;
    }
    // Where a small blocking send returns once its message has left (the model's §13).
    fit.params.departs_upto = departs_upto(&fit.params, &calls);
    if let Some(o) = other.as_mut() {
        o.fit.params.departs_upto = departs_upto(&o.fit.params, &o.calls);
    }
    // A collective's writes into lines its peer has read (the model's §15), for the set at
    // whose placement the probe ran (the other keeps `bounce` for them).
    let reduce_rate = held_reduce_rate(&local.held, limit);
    let held_set = held_rate(&local.held, limit).map(|rate| {
        let cores = [
            fit.params.cores,
            other.as_ref().and_then(|o| o.fit.params.cores),
        ];
        let i = (local.line_ns)
            .and_then(|l| crate::model::nearest_cores(l, cores))
            .unwrap_or(0);
        let set = match (i, other.as_mut()) {
            (1, Some(o)) => &mut o.fit.params,
            _ => &mut fit.params,
        };
        (set.held, set.held_reduce) = (Some(rate), reduce_rate);
        i
    });
    // Each placement's `oc` fitted with its own parameters, to the launches that ran there.
    let sets: Vec<&Params> = std::iter::once(&fit.params)
        .chain(other.as_ref().map(|o| &o.fit.params))
        .collect();
    // The loops ran before the sweep told the sets' placements: more launches (as many again
    // at most) while a set has fewer than COLL_AT_PLACEMENT at its own (fitted with another
    // placement's parameters, a loop's `oc` takes up their difference).
    if let Some(t) = tracer.filter(|_| !probe.is_empty()) {
        let wanted = |probe: &[oc::CollLoop]| {
            (probe_at_sets(probe, &sets).iter()).any(|&n| n < COLL_AT_PLACEMENT)
        };
        let most = 2 * opts.launches.max(1) as usize;
        if wanted(&probe) && probe.len() < most {
            log(format!(
                "the loop of collectives ran at each set's placement in {:?} of its {} launches: \
                 more launches ({most} at most) until each set has {COLL_AT_PLACEMENT}",
                probe_at_sets(&probe, &sets),
                probe.len()
            ));
            let traced = Traced::new(opts, t)?;
            while wanted(&probe) && probe.len() < most {
                match traced.collectives(log) {
                    Ok(l) => probe.push(l),
                    Err(e) => {
                        log(format!("no more launches of the loop of collectives: {e}"));
                        break;
                    }
                }
            }
        }
    }
    let oc_fits = fit_oc_probe(&probe, &sets, log).unwrap_or_default();
    let mut oc_fits = oc_fits.into_iter();
    let oc_fit = oc_fits.next().map(|(oc, f)| {
        fit.params.oc = Some(oc);
        f
    });
    if let (Some(o), Some((oc, f))) = (other.as_mut(), oc_fits.next()) {
        o.fit.params.oc = Some(oc);
        o.oc_fit = Some(f);
    }
    let sets: Vec<&Params> = std::iter::once(&fit.params)
        .chain(other.as_ref().map(|o| &o.fit.params))
        .collect();
    // Each set's `bounce` from the exchange launch at its placement, else from a sweep launch
    // there (the model's §13).
    let mut bounces: Vec<_> = exchanges
        .iter()
        .map(|(t, b, _)| (probe_cores(t), b.clone()))
        .collect();
    bounces.extend(swept_bounces);
    let sizes = bounce::sizes(opts.max_bytes);
    let mut bounced = bounce::measured(opts, &sizes, &bounces, &sets, log).into_iter();
    let checked = exchanges.into_iter().filter_map(|(t, b, u)| {
        match exchange::check_nearest(t, &sets, &b, u.as_ref()) {
            Ok(x) => Some(x),
            Err(e) => {
                log(format!(
                    "the exchanges are not checked: their replay failed: {e}"
                ));
                None
            }
        }
    });
    let mut each = exchanges_per_set(checked.collect(), &sets).into_iter();
    let (exchanges, other_exchanges) = (each.next().flatten(), each.next().flatten());
    // Each set's share of a rendezvous payload on its sender's CPU from the exchanges at its
    // placement; a set with none there takes the other's (the transport's).
    let share = |x: &Option<exchange::Exchanges>| {
        let fitted = x.as_ref().and_then(|x| x.rendezvous).filter(|v| v.fits());
        fitted.map(|v| v.sender)
    };
    let (first, second) = (share(&exchanges), share(&other_exchanges));
    if let Some(f) = first.or(second) {
        fit.params.rendezvous_sender = Some(f);
    }
    let bounce = bounced.next().unwrap_or_default();
    bounce.write_into(&mut fit.params);
    if let Some(o) = other.as_mut() {
        if let Some(f) = second.or(first) {
            o.fit.params.rendezvous_sender = Some(f);
        }
        o.exchanges = other_exchanges;
        o.bounce = bounced.next().unwrap_or_default();
        o.bounce.write_into(&mut o.fit.params);
    }
    // The header the library counts in its limit (Open MPI's 56 B on shared memory), where
    // the set's S agrees with the limit the library reports.
    let header = reported_limit
        .filter(|&r| r >= limit && r - limit <= library::HEADER_BYTES)
        .map(|r| r - limit);
    let mut eager_above = None;
    if let Some(m) = &opts.eager_mpirun {
        let mut sets = vec![&mut fit.params];
        sets.extend(other.as_mut().map(|o| &mut o.fit.params));
        let mut each = measure_eager_above(opts, m, sets, (limit, header), log)?.into_iter();
        eager_above = each.next().flatten();
        if let Some(o) = other.as_mut() {
            o.eager_above = each.next().flatten();
        }
        if let (Some(e), Some(t)) = (eager_above.as_mut(), tracer) {
            (e.exchanges, e.refits) = eager_exchanges(opts, m, t, e.limit, &mut fit.params, log);
        }
    }
    Ok(Calibration {
        fit,
        other,
        samples,
        calls,
        jump,
        launches: launches as u32,
        imbalance_ns: w,
        reported_eager_limit: reported,
        library,
        launch_spread,
        launch_within,
        launch_speeds,
        line_ns: lines,
        poll_ns: local.poll_ns,
        post_ns: local.post_ns,
        wait_ns: local.wait_ns,
        reduction: local.reduction,
        progress_wait_ns: local.progress_wait_ns,
        progress_rtt_ns: local.progress_rtt_ns,
        copy_aligned_ns: local.copy_ns.0,
        copy_aliased_ns: local.copy_ns.1,
        held: local.held,
        alias: local.alias,
        drained: local.drained,
        held_set,
        copying: local.copying,
        allocs: local.allocs,
        clock_ns: local.clock_ns,
        oc_fit,
        eager_above,
        exchanges,
        bounce,
        interrupted,
        detours,
        again,
    })
}

/// The one of `sets` whose `cores` figure lies nearest (by ratio) that of the launch `trace`
/// records (its node's first two ranks, the larger of the figures at `MPI_Init` and
/// `MPI_Finalize`), as a replay picks a pair's set; the first where either figure is missing.
pub(crate) fn nearest_set(trace: &crate::trace::Trace, sets: &[&Params]) -> usize {
    probe_cores(trace)
        .and_then(|a| crate::model::nearest_cores(a, sets.iter().map(|p| p.cores)))
        .unwrap_or(0)
}

/// `oc` of each set fitted to the loops of collectives, traced and untraced (`probe`; none where there are
/// none, or their replay failed, said in `log`).
fn fit_oc_probe(
    probe: &[oc::CollLoop],
    sets: &[&Params],
    log: &mut dyn FnMut(String),
) -> Option<Vec<(f64, OcFit)>> {
    if probe.is_empty() {
        return None;
    }
    log(
        "fitting oc to the loops of collectives (traced, and untraced in the same launches)".into(),
    );
    fit_oc_sets(probe, sets)
        .map_err(|e| {
            log(format!(
                "oc not fitted: the collectives probe's replay failed: {e}"
            ))
        })
        .ok()
}

/// The launches at the other placement (`o`) fitted in bands of their own, with the same `S`
/// (`limit`) and the local figures of `main` (none where they could not be fitted, said in
/// `log`).
fn fit_other(
    mut o: Swept,
    main: &Params,
    limit: u64,
    log: &mut dyn FnMut(String),
) -> Option<Other> {
    o.samples.sort_by_key(|x| (x.k, x.w_ns as u64));
    let Some(mut f) = banded::fit_bands(&o.samples, &o.calls, limit) else {
        log("the launches at the other placement could not be fitted in bands: left out".into());
        return None;
    };
    f.params = Params {
        cores: cores_ns(&o.lines),
        gamma: main.gamma,
        oc: None,
        copy: main.copy,
        alloc: main.alloc,
        post: main.post,
        class: main.class,
        progress_at_calls: main.progress_at_calls,
        ..f.params
    };
    Some(Other {
        fit: f,
        samples: o.samples,
        calls: o.calls,
        line_ns: o.lines,
        oc_fit: None,
        exchanges: None,
        bounce: bounce::Measured::Nothing,
        eager_above: None,
    })
}

/// Whether some launch's placement (its cache-line figure, ns) holds fewer than `each` of the
/// launches (those within 2× of it).
fn few_at_a_placement(figures: &[f64], each: usize) -> bool {
    let here = |a: f64| figures.iter().filter(|&&b| !placements_apart(a, b)).count();
    figures.iter().any(|&a| here(a) < each)
}

/// The exchange launches' checks given to the sets, in order: to each, of the launches at its
/// placement (predicted with it, the launch's cores within 2× of the set's), the one whose
/// fitted rendezvous share is the median (the lower of two; the middle launch where none has
/// one); where no set has one, the first launch to the first set all the same (at another
/// placement: not judged).
fn exchanges_per_set(
    checked: Vec<exchange::Exchanges>,
    sets: &[&Params],
) -> Vec<Option<exchange::Exchanges>> {
    let at = |x: &exchange::Exchanges, p: &Params| {
        x.set_cores_ns == p.cores
            && !matches!((x.cores_ns, x.set_cores_ns), (Some(a), Some(b)) if placements_apart(a, b))
    };
    let share = |x: &exchange::Exchanges| x.rendezvous.map_or(0.0, |r| r.mean());
    let fits = |x: &exchange::Exchanges| x.rendezvous.is_some_and(|r| r.fits());
    let median = |p: &Params| {
        let mut here: Vec<&exchange::Exchanges> = checked.iter().filter(|x| at(x, p)).collect();
        let n = here.len();
        let fitted = here.iter().filter(|x| fits(x)).count();
        // The median of the launches whose share fits their exchanges, where some does.
        if fitted > 0 {
            here.retain(|x| fits(x));
        }
        here.sort_by(|a, b| share(a).total_cmp(&share(b)));
        (here.get(here.len().saturating_sub(1) / 2)).map(|x| exchange::Exchanges {
            launches: n,
            fitted,
            ..(*x).clone()
        })
    };
    let mut each: Vec<Option<exchange::Exchanges>> = sets.iter().map(|p| median(p)).collect();
    if each.iter().all(Option::is_none)
        && let Some(first) = each.first_mut()
    {
        *first = checked.into_iter().next();
    }
    each
}

/// Launches whose round trips differ by more than this (median over sizes) were taken while
/// the machine changed speed or path: `calibrate` says so.
pub const SPREAD_WARNING: f64 = 0.25;

/// What the collectives probe found, in words: for the first set, or with `second` for the
/// second set's placement.
pub fn collectives_finding(c: &Calibration, second: bool) -> String {
    let (fit, oc) = match (second, &c.other) {
        (false, _) => (&c.oc_fit, c.fit.params.oc),
        (true, Some(o)) => (&o.oc_fit, o.fit.params.oc),
        (true, None) => (&None, None),
    };
    let Some(f) = fit else {
        return "not fitted (the collectives probe runs under the tracer: none given, or its replay failed)".into();
    };
    let speed = f.speed.unwrap_or(1.0);
    let launches = match (f.elsewhere, f.unplaced) {
        (true, true) => format!(
            "none of its {} launches at a set's placement: not fitted, 0 (with this set's \
             parameters they take up the placements' difference, not the calls' cost; calibrate \
             again for a set where they ran)",
            f.launches_oc.len()
        ),
        (true, false) => format!(
            "every launch's, {} launches, none at this placement",
            f.launches_oc.len()
        ),
        (false, _) => match f.launches_oc.len() {
            1 => "the one launch at this placement".to_string(),
            n => format!("the {n} launches at this placement"),
        },
    };
    let traced = format!(
        "its calls but each kind's first and those interrupted (beyond their kind's far fence; \
         {:.1} and {:.1} µs a rank, left out on both sides) took {:.1} µs a rank (the tracer's \
         time inside them taken out), predicted {:.1} µs with oc = 0 and {:.1} µs with oc = \
         {:.0} ns",
        f.first_calls_ns / 1e3,
        f.interrupted_ns / 1e3,
        f.measured_ns / 1e3,
        f.without_ns / 1e3,
        f.with_ns / 1e3,
        f.traced_oc * speed,
    );
    let at_speed = |what: &str, oc: f64| match f.speed {
        Some(s) => format!(
            " at its messages' speed, {s:.2}× the set's (the tracer's round trips at MPI_Init \
             and MPI_Finalize): {what} = {oc:.0} ns at the set's"
        ),
        None => String::new(),
    };
    let range = format!(
        "(oc {:.0}–{:.0} ns)",
        f.launches_oc.first().unwrap_or(&0.0),
        f.launches_oc.last().unwrap_or(&0.0)
    );
    match f.untraced {
        Some(u) => format!(
            "a loop of 8-byte collectives of every kind on 2 ranks, run untraced right after \
             its traced run in each launch, the median of {launches} {range}: a round of its {} \
             calls took {:.0} ns untraced, predicted from the trace (the tracer's time taken \
             out) {:.0} ns with oc = 0 and {:.0} ns with oc = {:.0} ns{}; traced, {traced}{} \
             (the tracer slows the calls beyond its own time)",
            f.calls / COLL_ROUNDS as usize,
            u.measured_ns,
            u.without_ns,
            u.with_ns,
            oc.unwrap_or(0.0) * speed,
            at_speed("oc", oc.unwrap_or(0.0)),
            at_speed("the traced loop's", f.traced_oc),
        ),
        None => format!(
            "a traced loop of 8-byte collectives of every kind on 2 ranks ({} calls a rank), \
             the median of {launches} {range}: {traced}{}",
            f.calls,
            at_speed("oc", oc.unwrap_or(0.0)),
        ),
    }
}

/// What the posted receives' probe found, in words (the model's §4 `post`).
pub fn post_finding(post_ns: f64) -> String {
    format!(
        "{post_ns:.0} ns an MPI_Irecv of a message not yet sent (the median of batches, untraced): \
         what a program's receive posts cost, where the paper charges o"
    )
}

/// What the completion-call probe found, in words (the model's §4 `wait`).
pub fn wait_finding(wait_ns: f64) -> String {
    format!(
        "{wait_ns:.0} ns an MPI_Wait on a complete request (the median of batches, untraced): \
         what a completion call whose operations are done costs, where the paper charges o; \
         written into the sets as `wait = {wait_ns:.0}` (a Wait's floor, the model's §4; \
         `--wait` asks another)"
    )
}

/// What the progress probe found, in words.
pub fn progress_finding(c: &Calibration) -> String {
    let (wait, one_way) = (c.progress_wait_ns / 1e3, c.progress_rtt_ns / 2e3);
    match c.fit.params.progress_at_calls {
        true => format!(
            "calls: a posted receive of {PROGRESS_BYTES} bytes waited {wait:.1} µs after its rank computed, a one-way transfer takes {one_way:.1} µs: messages move only inside MPI calls"
        ),
        false => format!(
            "async: a posted receive of {PROGRESS_BYTES} bytes waited {wait:.1} µs after its rank computed, a one-way transfer takes {one_way:.1} µs: messages move in the background"
        ),
    }
}

/// The set's `cores` figure: the median of the launches' cache-line round trips, before and
/// after each (None where the ranks share no memory).
fn cores_ns(lines: &[[f64; 2]]) -> Option<f64> {
    let all: Vec<f64> = lines.iter().flatten().copied().collect();
    (!all.is_empty()).then(|| fit::median(&all))
}

/// What the cache-line probe found ([`Calibration::line_ns`]), in words, and whether it is a
/// warning: the launches' round trips of a cache line between the ranks' cores differing by
/// more than 2×, the OS or a hypervisor having moved the ranks between cores near and far
/// apart while calibrating (on this project's 2-vCPU machine: 55–100 ns, or about 350 ns in
/// spells of seconds to minutes, when every shared-memory message costs 2–3× more). None where
/// the ranks share no memory.
pub fn line_finding(lines: &[[f64; 2]]) -> Option<(String, bool)> {
    let median = cores_ns(lines)?;
    let all = lines.iter().flatten().copied();
    let lo = all.clone().fold(f64::INFINITY, f64::min);
    let hi = all.fold(0.0, f64::max);
    let what = format!(
        "a cache line between the two ranks' cores and back takes {median:.0} ns (the median; {lo:.0}–{hi:.0} ns before and after the {} launches' sweeps)",
        lines.len()
    );
    match hi > OTHER_CORES * lo {
        true => Some((
            format!(
                "{what}: the ranks ran on cores nearer and farther apart while calibrating (the OS or a hypervisor moved them), \
                 and a message over shared memory costs more on far ones; the launches' medians mix both, and a run on far cores \
                 is predicted too fast: calibrate again while it holds still"
            ),
            true,
        )),
        false => Some((what, false)),
    }
}

/// For the main set and the second, the line saying its `rendezvous_sender` was not fitted at
/// its placement, where no exchange launch ran there and one ran at the other set's
/// ([`exchange::borrowed`]).
pub fn borrowed_shares(c: &Calibration) -> [Option<String>; 2] {
    let Some(o) = &c.other else {
        return [None, None];
    };
    let (main, second) = (c.exchanges.as_ref(), o.exchanges.as_ref());
    [
        exchange::borrowed(main, second, c.fit.params.rendezvous_sender),
        exchange::borrowed(second, main, o.fit.params.rendezvous_sender),
    ]
}

/// The TOML the predictor's `--params` reads, with the fit's quality as comments.
pub fn params_file(c: &Calibration) -> String {
    let mut s = String::new();
    s.push_str(
        "# LogGPS parameters in bands of message size, measured by `loggps-predict calibrate`\n",
    );
    if !c.library.is_empty() {
        s.push_str(&format!(
            "# MPI library: {}\n",
            c.library.lines().next().unwrap_or("")
        ));
    }
    s.push_str(&format!(
        "# {} round trips ({} launches; w = 0 and w = {HIDE} × the round trip{}); model vs measured: rms {:.2}%, max {:.2}%; {} outlier(s) dropped\n",
        c.samples.len(),
        c.launches,
        match c.imbalance_ns {
            0 => String::new(),
            w => format!(" and W = {w} ns"),
        },
        100.0 * c.fit.rms_rel,
        100.0 * c.fit.max_rel,
        c.fit.outliers.len()
    ));
    if let Some((name, bytes)) = &c.reported_eager_limit {
        s.push_str(&format!("# the library reports {name} = {bytes} bytes\n"));
    }
    let r = &c.reduction;
    let (lo, hi) = (r.points.first(), r.points.last());
    s.push_str(&format!(
        "# gamma: MPI_Reduce_local (MPI_SUM on doubles) over {}–{} bytes, its time a byte at each size (a line through them: {:.0} ns a call)\n",
        lo.map_or(0, |p| p.0),
        hi.map_or(0, |p| p.0),
        r.intercept_ns
    ));
    s.push_str(&format!("# post: {}\n", post_finding(c.post_ns)));
    if let Some(w) = c.wait_ns {
        s.push_str(&format!("# wait: {}\n", wait_finding(w)));
    }
    s.push_str(&format!("# progress: {}\n", progress_finding(c)));
    s.push_str(&format!(
        "# copies: {}\n",
        copy_finding(c.copy_aligned_ns, c.copy_aliased_ns).0
    ));
    if let Some((text, _)) = alias_finding(&c.alias, c.fit.params.S) {
        s.push_str(&format!("# messages: {text}\n"));
    }
    if let Some((text, _)) = drained_finding(&c.drained, &c.fit.params) {
        s.push_str(&format!("# drained: {text}\n"));
    }
    if let Some(text) = departs_finding(&c.fit.params, &c.calls) {
        s.push_str(&format!("# departs: {text}\n"));
    }
    if c.held_set == Some(0)
        && let Some(text) = held_finding(&c.held, c.fit.params.S)
    {
        s.push_str(&format!("# held: {text}\n"));
    }
    let (lo, hi) = (c.copying.points.first(), c.copying.points.last());
    s.push_str(&format!(
        "# copy: memcpy between page-aligned buffers over {}–{} bytes, its time a byte at each size (a line through them: {:.0} ns a call)\n",
        lo.map_or(0, |p| p.0),
        hi.map_or(0, |p| p.0),
        c.copying.intercept_ns
    ));
    if let Some(text) = alloc_finding(c) {
        s.push_str(&format!("# alloc: {text}\n"));
    }
    s.push_str(&format!("# oc: {}\n", collectives_finding(c, false)));
    if let Some(text) = c.oc_fit.as_ref().and_then(|f| f.kinds_finding()) {
        s.push_str(&format!("# collectives: {text}\n"));
    }
    if c.other.is_some() {
        s.push_str(&format!(
            "# oc of the second set: {}\n",
            collectives_finding(c, true)
        ));
    }
    let bounces = std::iter::once(("", &c.bounce, &c.fit.params));
    let others = (c.other.iter()).map(|o| (" of the second set", &o.bounce, &o.fit.params));
    for (which, b, set) in bounces.chain(others) {
        if let Some((text, _)) = b.finding(set) {
            s.push_str(&format!("# bounce{which}: {text}\n"));
        }
        if let Some(text) = b.fitted().and_then(bounce::clean_finding) {
            s.push_str(&format!("# clean{which}: {text}\n"));
        }
        if let Some(text) = b.fitted().and_then(bounce::clean_oneway_finding) {
            s.push_str(&format!("# clean_oneway{which}: {text}\n"));
        }
        if let Some(text) = b.fitted().and_then(bounce::bounce_clean_finding) {
            s.push_str(&format!("# bounce_clean{which}: {text}\n"));
        }
    }
    let [main, second] = borrowed_shares(c);
    for (which, text) in [("", main), (" of the second set", second)] {
        if let Some(text) = text {
            s.push_str(&format!("# exchanges{which}: {text}\n"));
        }
    }
    if let Some((text, _)) = line_finding(&c.line_ns) {
        s.push_str(&format!("# cores: {text}\n"));
    }
    let sets = std::iter::once(("", &c.eager_above));
    for (which, e) in sets.chain(
        c.other
            .iter()
            .map(|o| (" of the second set", &o.eager_above)),
    ) {
        let Some(e) = e else { continue };
        s.push_str(&format!(
            "# eager_bands{which}: the sizes above S measured eager under `{}` (its eager limit {} B{}{}); \
             {} of their {} round trips missed by more than {:.0}%; a trace that recorded \
             that limit is predicted at it (as with --S {})\n",
            e.mpirun,
            e.limit,
            e.reported
                .map_or(String::new(), |r| format!(", the library reports {r} B")),
            line_finding(&e.line_ns).map_or(String::new(), |(t, _)| format!(", cores: {t}")),
            e.missed,
            e.samples.len(),
            100.0 * MISS,
            e.limit
        ));
    }
    match &c.other {
        None => s.push_str(&crate::model::params_toml(&c.fit.params)),
        Some(o) => {
            s.push_str(&format!(
                "# two placements of the ranks' cores: the second set is the {} launches' at {}, \
                 {} round trips, model vs measured rms {:.2}%, max {:.2}%; a pair of ranks takes the \
                 set whose cores lies nearest its own\n",
                o.line_ns.len(),
                line_finding(&o.line_ns).map_or("no figure".into(), |(t, _)| t),
                o.samples.len(),
                100.0 * o.fit.rms_rel,
                100.0 * o.fit.max_rel,
            ));
            s.push_str(&crate::model::param_sets_toml(&[
                c.fit.params,
                o.fit.params,
            ]));
        }
    }
    // A program's failed polls cost what they cost in its trace unless `poll` is set: a poll
    // over many requests costs more than this one-request figure.
    s.push_str(&format!(
        "# a failed poll (MPI_Test, MPI_Iprobe on one request) costs {} ns here; set `poll` to \
         cost every failed poll so (by default each keeps its traced duration)\n# poll = {:?}\n",
        c.poll_ns, c.poll_ns
    ));
    if let Some((text, _)) = noise::finding(&c.interrupted) {
        s.push_str(&format!("# interrupts: {text}\n"));
    }
    if let Some((text, _)) = noise::detours_finding(&c.detours) {
        s.push_str(&format!("# detours: {text}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A set of two eager bands: up to 256 B `T1` = 100 ns with `Od` = 40, up to 4040 B `T1` =
    /// 300 + k·0.1 with `Od` = 200; `L` = 50 (hand-made).
    fn two_bands(od1: f64, l1: f64) -> Params {
        use crate::model::{Band, Bands};
        let band = |hi, o, l, os, od| Band {
            hi,
            o,
            L: l,
            Os: os,
            Or: 0.0,
            G: 0.0,
            Od: od,
            Op: 0.0,
            Osd: 0.0,
        };
        let b = [
            band(256, 100.0, l1, 0.0, od1),
            band(4040, 300.0, 50.0, 0.1, 200.0),
            band(u64::MAX, 900.0, 50.0, 0.1, 0.0),
        ];
        Params::banded(Bands::new(&b).unwrap(), 4040, None)
    }

    /// Rank 0's sends of `(k, ns)`.
    fn sends(at: &[(u64, f64)]) -> Vec<Calls> {
        (at.iter())
            .map(|&(k, send_ns)| Calls {
                k,
                w_ns: 1e5,
                send_ns,
                recv_ns: 200.0,
                isend_ns: Some(60.0),
            })
            .collect()
    }

    /// The first band's sends take 58–66 ns, nearer its `T1 − Od` (60) than its `T1` (100); the
    /// second's 310–500 ns, nearer their `T1` (402.4–504.8) than `T1 − 200`: sends of at most
    /// 256 B depart. Sends of 95 ns in the first band, or a first band whose receives could not
    /// do its `Od` twice over before the message arrives (`L` = 0, `Od` = 60: 100 − 120 = −20,
    /// beyond 0.25% of its round trip, 2 · (100 − 60 + 100) = 280 ns), or a set without `Od`:
    /// none. Short by 0.5 ns (`Od` = 50.25: 100 − 100.5; 0.25% of 2 · (100 − 50.25 + 100) =
    /// 299.5 ns is 0.75): they depart.
    #[test]
    fn small_sends_that_return_at_their_departure_are_found() {
        use crate::model::{Band, Bands};
        let timed = [
            (8, 58.0),
            (64, 66.0),
            (256, 61.0),
            (1024, 390.0),
            (2048, 500.0),
        ];
        assert_eq!(
            departs_upto(&two_bands(40.0, 50.0), &sends(&timed)),
            Some(256)
        );
        let slow = [(8, 95.0), (64, 96.0), (256, 94.0), (1024, 390.0)];
        assert_eq!(departs_upto(&two_bands(40.0, 50.0), &sends(&slow)), None);
        assert_eq!(departs_upto(&two_bands(60.0, 0.0), &sends(&timed)), None);
        assert_eq!(
            departs_upto(&two_bands(50.25, 0.0), &sends(&timed)),
            Some(256)
        );
        assert_eq!(departs_upto(&two_bands(0.0, 50.0), &sends(&timed)), None);
        // A band of zero-byte messages before them, without `Od` (its sends take their `T1`,
        // 90 ns): the bands after it depart as before, and the finding counts its sends.
        let with_zero = |p: Params| {
            let mut b = p.bands.unwrap().as_slice().to_vec();
            b.insert(
                0,
                Band {
                    hi: 0,
                    o: 90.0,
                    L: 10.0,
                    Os: 0.0,
                    Or: 0.0,
                    G: 0.0,
                    Od: 0.0,
                    Op: 0.0,
                    Osd: 0.0,
                },
            );
            Params::banded(Bands::new(&b).unwrap(), 4040, None)
        };
        let zero = [&[(0, 90.0)], &timed[..]].concat();
        assert_eq!(
            departs_upto(&with_zero(two_bands(40.0, 50.0)), &sends(&zero)),
            Some(256)
        );
        assert_eq!(
            departs_upto(
                &with_zero(two_bands(40.0, 50.0)),
                &sends(&[(0, 90.0), (8, 95.0), (64, 96.0), (256, 94.0)])
            ),
            None
        );
        let p = Params {
            departs_upto: Some(256),
            ..two_bands(40.0, 50.0)
        };
        let text = departs_finding(&p, &sends(&timed)).unwrap();
        assert!(text.contains("at most 256 B"), "{text}");
        assert!(
            text.contains(
                "took 61 ns (the median of 3 sizes) where T1 is 100 ns and T1 − Od 60 ns"
            ),
            "{text}"
        );
    }

    /// `alloc` from the probe's medians (the clock's interval already out, ns): the median of
    /// those up to 1 KiB, 40 and 44: 42; the larger ones' (90, 110) left out; none timed: None.
    #[test]
    fn alloc_is_the_small_temporaries_median() {
        let probe = [(8, 40.0), (1024, 44.0), (16384, 90.0), (65536, 110.0)];
        assert_eq!(alloc_ns(&probe), Some(42.0));
        assert_eq!(alloc_ns(&probe[2..]), None);
    }

    /// `held` from the held probe's medians (hand-made, ns): a memcpy into the buffer just sent
    /// against one not sent, a byte, the median over the sizes above the limit: at 4040, 0
    /// (4096: none more), 820 / 16,384 and 4,100 / 65,536: 0.0500; at 16,384 the last alone;
    /// none above them all.
    #[test]
    fn held_is_the_copies_difference_a_byte_above_the_limit() {
        let probe = [
            (4096, [80.0, 80.0, 330.0, 90.0]),
            (16384, [1000.0, 180.0, 2600.0, 220.0]),
            (65536, [5500.0, 1400.0, 12700.0, 1500.0]),
        ];
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-9);
        assert!(close(held_rate(&probe, 4040), 820.0 / 16384.0));
        assert!(close(held_rate(&probe, 16384), 4100.0 / 65536.0));
        assert!(close(held_reduce_rate(&probe, 4040), 2380.0 / 16384.0));
        assert!(close(held_reduce_rate(&probe, 16384), 11200.0 / 65536.0));
        assert_eq!(held_rate(&probe, 65536), None);
        let text = held_finding(&probe, 4040).unwrap();
        assert!(text.starts_with("0.0500 ns a byte more"), "{text}");
        // (the reductions: 0, 2,380 / 16,384, 11,200 / 65,536: their median 0.1453)
        assert!(text.contains("16384 B 1.00 µs against 0.18"), "{text}");
        assert!(text.contains("costs 0.1453 ns a byte more"), "{text}");
    }

    /// Exchange launches go on while a placement holds fewer than three of them (hand-made
    /// cache-line figures, grouped within 2×).
    #[test]
    fn exchanges_are_launched_until_each_placement_holds_three() {
        // The calibration that fitted 0.99 to one slow launch: one at 152 ns, four at 59–61.
        assert!(few_at_a_placement(&[152.0, 59.0, 61.0, 60.0, 59.0], 3));
        assert!(!few_at_a_placement(
            &[152.0, 59.0, 140.0, 60.0, 120.0, 61.0],
            3
        ));
        // 100 and 190 ns are one placement (under 2× apart), 60 and 130 are not.
        assert!(!few_at_a_placement(&[100.0, 190.0, 150.0], 3));
        assert!(few_at_a_placement(&[60.0, 130.0, 130.0, 130.0], 3));
        assert!(!few_at_a_placement(&[], 3));
    }

    /// Exchange launches at two placements, one checked with each set: near cores (150 ns)
    /// measured 6,500 ns, far ones (450 ns) 7,000 ns, each a rendezvous of 1,000 B each way
    /// (the exchange module's example: 6,000 ns with the payload on the receiver's CPU alone,
    /// 7,000 with all of its `T1` on the sender's too). Each set gets its own launch and share
    /// (0.25 and 1); of several at one placement, the median share's, of those whose share
    /// fits them within [`exchange::SHARE_MISS`] where some does; a far launch alone
    /// goes to the far set, and a set with none there gets none; with one set at another
    /// placement, the launch is its, not judged.
    #[test]
    fn each_set_is_given_the_exchanges_at_its_placement() {
        let p = exchange::tests::example_set();
        let (near, far) = (
            Params {
                cores: Some(150.0),
                ..p
            },
            Params {
                cores: Some(450.0),
                ..p
            },
        );
        let launch = |measured: u64, cores: u32| {
            let placed = format!(
                "rank 0 host \"h\" offset 0 0 cores 1 {cores} {cores}\nrank 1 host \"h\" offset 0 0\n"
            );
            exchange::tests::example_launch(measured, &placed)
        };
        let sets = [&near, &far];
        let checked = |launches: Vec<crate::trace::Trace>, sets: &[&Params]| {
            let each = launches
                .into_iter()
                .map(|t| exchange::check_nearest(t, sets, &[], None).unwrap());
            exchanges_per_set(each.collect(), sets)
        };
        let share = |x: &Option<exchange::Exchanges>| {
            x.as_ref().unwrap().rendezvous.unwrap().sender.at(1000.0)
        };
        let both = checked(vec![launch(7000, 450), launch(6500, 150)], &sets);
        assert!((share(&both[0]) - 0.25).abs() <= 1.0 / 1024.0, "{both:?}");
        assert!((share(&both[1]) - 1.0).abs() <= 1.0 / 1024.0, "{both:?}");
        // Three launches near (shares 0.05, 0.45 and 0.25 by the example's rule, 6,000 + 2,000·F
        // ns): the median's.
        let three = checked(
            vec![launch(6100, 150), launch(6900, 150), launch(6500, 150)],
            &sets,
        );
        assert!((share(&three[0]) - 0.25).abs() <= 1.0 / 1024.0, "{three:?}");
        assert_eq!(three[0].as_ref().unwrap().launches, 3);
        assert!(three[1].is_none(), "{three:?}");
        // Launches no share fits within 15% (9,000 ns: 1 leaves it 22% off, ln 7/9; 4,000 ns:
        // 0 leaves it 50% over, ln 6/4) are passed over for the one that fits (6,100: 0.05).
        let odd = checked(
            vec![launch(9000, 150), launch(6100, 150), launch(4000, 150)],
            &sets,
        );
        let x = odd[0].as_ref().unwrap();
        assert!((share(&odd[0]) - 0.05).abs() <= 1.0 / 1024.0, "{x:?}");
        assert_eq!((x.launches, x.fitted), (3, 1));
        // None fits: the median of all is shown, its share not fitting (the set keeps 0).
        let none = checked(vec![launch(9000, 150), launch(4000, 150)], &sets);
        let x = none[0].as_ref().unwrap();
        let r = x.rendezvous.unwrap();
        assert_eq!(
            (x.launches, x.fitted, r.sender.at(1000.0), r.fits()),
            (2, 0, 0.0, false)
        );
        let (lines, _) = exchange::finding(x, 0.10);
        assert!(
            lines[0].contains("of 2 launches at this placement, 0 fitting a share within 16%")
                && lines.last().unwrap().ends_with(
                    "no share fits them within 16%: not taken (the other placement's where one \
                     fits there, else 0, the receiver's CPU alone)"
                ),
            "{lines:?}"
        );
        let far_only = checked(vec![launch(7000, 450)], &sets);
        assert!(far_only[0].is_none(), "{far_only:?}");
        assert_eq!(far_only[1].as_ref().unwrap().set_cores_ns, Some(450.0));
        let elsewhere = checked(vec![launch(7000, 450)], &[&near]);
        let x = elsewhere[0].as_ref().unwrap();
        assert!(x.share_elsewhere && x.rendezvous.is_none(), "{x:?}");
    }

    fn rtt(k: u64, rtt_ns: f64) -> Sample {
        Sample {
            k,
            w_ns: 0.0,
            rtt_ns,
        }
    }

    /// Per size the range over the median, then the median over sizes; one launch, none.
    #[test]
    fn launch_spread_is_the_median_range() {
        let three = [
            rtt(8, 400.0),
            rtt(8, 500.0),
            rtt(8, 600.0),
            rtt(16, 1000.0),
            rtt(16, 1000.0),
            rtt(16, 1100.0),
        ];
        // 200/500 = 0.4 and 100/1000 = 0.1: their median is 0.25.
        assert!((launch_spread(&three) - 0.25).abs() < 1e-12);
        // Five launches, one far off: the middle three's range, 0.1 of the median.
        let five: Vec<Sample> = [1000.0, 1050.0, 1100.0, 2000.0, 900.0]
            .iter()
            .map(|&t| rtt(8, t))
            .collect();
        assert!((launch_spread(&five) - 0.1 / 1.05).abs() < 1e-12);
        assert_eq!(launch_spread(&[rtt(8, 400.0), rtt(16, 900.0)]), 0.0);
        assert_eq!(launch_spread(&[]), 0.0);
    }

    /// Launches at different speeds are combined at the median launch's: by hand, round trips
    /// of 1000 ns + 2 ns a byte at five sizes (`w = 0`), and at an imbalance of 5000 ns 600 ns
    /// beyond it; launch A at that speed but 15% over at 64 B, B 1.2× at every size, C 0.9×.
    /// Per size the medians without the speeds divided out would keep A's 15% at 64 B (1.15,
    /// 1.2, 0.9); A's, B's and C's speeds are the medians of their ratios to the sizes' medians
    /// (1, 1.2, 0.9: at 64 B, 1.15 / 1.15, 1.2 / 1.15, 0.9 / 1.15 are each launch's one odd
    /// ratio), so 64 B's values become 1.15, 1, 1 of the line and their median the line. A
    /// launch measuring 64 B and 96 B again, 1.6× slower, keeps its values (its ratio at 64 B
    /// would tell 64 B's miss as much as its speed).
    #[test]
    fn each_launch_is_taken_at_the_median_launchs_speed() {
        let line = |k: u64| 1000.0 + 2.0 * k as f64;
        let launch = |ks: &[u64], speed: f64, odd: Option<(u64, f64)>| Launch {
            samples: (ks.iter())
                .flat_map(|&k| {
                    let f = speed * odd.filter(|o| o.0 == k).map_or(1.0, |o| o.1);
                    [(0.0, line(k)), (5000.0, 600.0)].map(|(w, t)| Sample {
                        k,
                        w_ns: w,
                        rtt_ns: w + t * f,
                    })
                })
                .collect(),
            calls: (ks.iter())
                .map(|&k| Calls {
                    k,
                    w_ns: 3000.0,
                    send_ns: 100.0 * speed,
                    recv_ns: 200.0 * speed,
                    isend_ns: Some(50.0 * speed),
                })
                .collect(),
            ..Launch::default()
        };
        let sizes = [8, 16, 32, 64, 128];
        let runs = vec![
            launch(&sizes, 1.0, Some((64, 1.15))),
            launch(&sizes, 1.2, None),
            launch(&sizes, 0.9, None),
        ];
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9 * b.abs().max(1.0);
        let speeds = speeds(&runs);
        assert!(
            speeds.iter().zip([1.0, 1.2, 0.9]).all(|(&s, x)| near(s, x)),
            "{speeds:?}"
        );
        let swept = combine(runs.clone(), &sizes, &[0, 5000], false);
        for x in swept.samples.iter().filter(|x| x.w_ns == 0.0) {
            assert!(near(x.rtt_ns, line(x.k)), "{x:?}");
        }
        for x in swept.samples.iter().filter(|x| x.w_ns == 5000.0) {
            assert!(near(x.rtt_ns, 5600.0), "{x:?}");
        }
        // The calls at the median launch's speed too: 100 / 200 / 50 ns in each.
        let c = swept.calls.iter().find(|c| c.k == 8).expect("8 B's calls");
        assert!(near(c.send_ns, 100.0) && near(c.recv_ns, 200.0), "{c:?}");
        assert_eq!(c.isend_ns.map(|t| near(t, 50.0)), Some(true));
        // How far they differ: raw, B's and C's 0.3 of A's (the median range); divided out,
        // 64 B's range alone (0.15 of the median) leaves the other sizes' 0.
        assert!(near(swept.spread, 0.3), "{}", swept.spread);
        assert!(near(swept.within, 0.0), "{}", swept.within);
        assert!(near(swept.speeds[0], 0.9) && near(swept.speeds[1], 1.2));
        let mut more = runs;
        more.push(launch(&[64, 96], 1.6, None));
        let speeds = super::speeds(&more);
        assert!(near(speeds[1], 1.2) && speeds[3] == 1.0, "{speeds:?}");
        let swept = combine(more, &[8, 16, 32, 64, 96, 128], &[0, 5000], false);
        let at = |k: u64| swept.samples.iter().find(|x| x.k == k && x.w_ns == 0.0);
        assert!(
            at(96).is_some_and(|x| near(x.rtt_ns, 1.6 * line(96))),
            "{:?}",
            at(96)
        );
        // 64 B: the median of 1.15, 1, 1 and 1.6.
        assert!(
            at(64).is_some_and(|x| near(x.rtt_ns, 1.075 * line(64))),
            "{:?}",
            at(64)
        );
        // One launch: as measured.
        let one = combine(vec![launch(&sizes, 1.3, None)], &sizes, &[0], false);
        assert!(near(one.samples[0].rtt_ns, 1.3 * line(8)));
    }

    /// Open MPI's shared memory at 304 B–4 KiB: the calls exceed half the round trip.
    #[test]
    fn early_departures_are_where_open_mpi_sends_before_returning() {
        let root = env!("CARGO_MANIFEST_DIR");
        // Open MPI's shared memory: every size from its fast boxes' end (256 B) to S.
        let (ompi, calls) = banded::measured::read(&format!(
            "{root}/fixtures/calibration/openmpi-4.1-vader.tsv"
        ));
        let early: Vec<u64> = early_departures(&ompi, &calls, 4040)
            .into_iter()
            .map(|(k, ..)| k)
            .collect();
        let above_fast_boxes: Vec<u64> = early.iter().copied().filter(|&k| k > 256).collect();
        assert_eq!(
            above_fast_boxes,
            [
                304, 362, 431, 512, 609, 724, 861, 1024, 1218, 1448, 1722, 2048, 2435, 2896, 3444
            ]
        );
        // 304 B: half of 481 ns against a 471 ns send and receive (hand-read from the file).
        let at = early_departures(&ompi, &calls, 4040);
        let x = at.iter().find(|x| x.0 == 304).unwrap();
        assert_eq!((x.1, x.2), (240.5, 471.0));
        // MPICH: none.
        let (mpich, calls) =
            banded::measured::read(&format!("{root}/fixtures/calibration/mpich-4.0-ucx.tsv"));
        assert!(early_departures(&mpich, &calls, 8255).is_empty());
    }

    #[test]
    fn line_finding_warns_when_the_cores_moved() {
        assert_eq!(line_finding(&[]), None);
        // Measured here: five launches on near cores, then one with a spell on far ones.
        let near = [
            [65.0, 70.4],
            [101.4, 96.4],
            [70.4, 70.4],
            [100.7, 97.3],
            [89.2, 103.3],
        ];
        let (text, warn) = line_finding(&near).unwrap();
        assert!(!warn, "{text}");
        assert!(
            text.contains("takes 93 ns") && text.contains("65–103 ns"),
            "{text}"
        );
        let moved = [[65.0, 70.4], [354.2, 356.9]];
        let (text, warn) = line_finding(&moved).unwrap();
        assert!(warn && text.contains("65–357 ns"), "{text}");
    }

    /// A launch as the round-trip program prints it (Open MPI 4.1, this machine, 2026-12-01):
    /// its points, rank 0's calls at the hiding point with the Isend's, the cache line's figures
    /// (around the sweep and after each size),
    /// and the share of its round trips' time (the `rtt` lines', each weighed by its
    /// repetitions) beyond their middle halves': by hand 1 − 46,374,583.3 / 52,626,273.7.
    /// Without the last field (an older program) no share. Its bounced round trips (`bounce`).
    #[test]
    fn a_launch_is_read_with_its_interrupted_share() {
        let text = "nodes 1\n\
            rtt 8 0 407.5 341 4001 103.4 273.4 423.6\n\
            rtt 8 2000 2360.8 2324 4001 100.1 172.9 2785.1\n\
            hide 8 2000 2274.2 2240 4001 100.1 173.2 2313.5\n\
            isend 8 2000 100.1 4001\n\
            line_at 8 152.6\n\
            rtt 16384 0 9724.8 9397 1650 4821.5 4871.0 12055.0\n\
            rtt 16384 2000 11668.3 11492 1650 4812.3 4762.5 12059.1\n\
            hide 16384 14586 24163.1 23984 758 4814.4 4762.0 26256.9\n\
            isend 16384 14586 202.0 837\n\
            line_at 16384 -1\n\
            line 1102.0 270.0 1\n\
            bounce 16384 9912.0 11104.5 201\nend\n";
        let l = read_launch(text);
        assert_eq!(l.samples.len(), 6);
        // The bounced round trips after the sweep.
        assert_eq!(
            l.bounced,
            [bounce::RoundTrips {
                k: 16384,
                written_ns: 9912.0,
                bounced_ns: 11104.5,
                clean_ns: None,
                exchanges_ns: None,
                clean_into_sent_ns: None
            }]
        );
        assert_eq!(l.calls.len(), 2);
        assert_eq!(
            (l.calls[1].send_ns, l.calls[1].isend_ns),
            (4814.4, Some(202.0))
        );
        assert_eq!((l.line, l.apart), (Some([1102.0, 270.0]), false));
        // Each size's figure after it; none where the ranks share no memory (-1).
        assert_eq!(l.at, [(8, 152.6)]);
        let share = l.spent.share().unwrap();
        assert!(
            (share - (1.0 - 46_374_583.3 / 52_626_273.7)).abs() < 1e-9,
            "{share}"
        );
        let old: String = text
            .lines()
            .map(|l| match l.starts_with("rtt") {
                true => l.rsplit_once(' ').unwrap().0.to_string() + "\n",
                false => l.to_string() + "\n",
            })
            .collect();
        let l = read_launch(&old);
        assert_eq!((l.samples.len(), l.spent.share()), (6, None));
    }

    /// A launch whose ranks moved to far cores at its second size and back during its fourth
    /// (the cache line's figure after each size: 150, 460, 470, 150, 151 ns; before 150, after
    /// 152; their median 151): the three sizes measured while far or moving are out of its
    /// first part, the one measured wholly far (between 460 and 470 ns) its second; each
    /// part's figures its sizes'. A launch without figures per size is kept whole.
    #[test]
    fn a_launch_is_split_where_its_ranks_moved() {
        let sizes = [8u64, 64, 512, 4096, 32768];
        let l = Launch {
            samples: sizes.iter().map(|&k| rtt(k, 100.0 + k as f64)).collect(),
            calls: sizes
                .iter()
                .map(|&k| Calls {
                    k,
                    w_ns: 1000.0,
                    send_ns: 50.0,
                    recv_ns: 60.0,
                    isend_ns: None,
                })
                .collect(),
            line: Some([150.0, 152.0]),
            at: sizes
                .iter()
                .copied()
                .zip([150.0, 460.0, 470.0, 150.0, 151.0])
                .collect(),
            ..Launch::default()
        };
        let (kept, part, out) = launch::split_by_placement(l.clone());
        assert_eq!(out, [64, 512, 4096]);
        let ks = |v: &[Sample]| v.iter().map(|x| x.k).collect::<Vec<_>>();
        assert_eq!(ks(&kept.samples), [8, 32768]);
        assert_eq!(
            kept.calls.iter().map(|c| c.k).collect::<Vec<_>>(),
            [8, 32768]
        );
        assert_eq!(kept.line, Some([150.0, 151.0]));
        let part = part.expect("the size measured far");
        assert_eq!(
            (ks(&part.samples), part.line),
            (vec![512], Some([460.0, 470.0]))
        );
        assert_eq!(part.calls.len(), 1);
        let whole = Launch {
            at: Vec::new(),
            ..l.clone()
        };
        let (kept, part, out) = launch::split_by_placement(whole);
        assert!(out.is_empty() && part.is_none() && kept.samples.len() == 5);
        // Most of it far: the near sizes are out, none wholly near (each moved within).
        let far = Launch {
            line: Some([450.0, 440.0]),
            at: sizes
                .iter()
                .copied()
                .zip([450.0, 460.0, 150.0, 470.0, 455.0])
                .collect(),
            ..l
        };
        let (kept, part, out) = launch::split_by_placement(far);
        assert_eq!(out, [512, 4096]);
        assert_eq!(kept.line, Some([450.0, 455.0]));
        assert!(part.is_none());
    }

    /// Parts of launches measured at the second placement make its set with the launches that
    /// ran there where together they measure every size, and go with the first set where they
    /// ran at its placement; parts that leave a size out make no set, but join one that the
    /// launches there make by themselves.
    #[test]
    fn parts_measured_elsewhere_join_the_set_of_their_placement() {
        let at = |line: [f64; 2], ks: &[u64]| Launch {
            samples: ks.iter().map(|&k| rtt(k, 500.0)).collect(),
            line: Some(line),
            ..Launch::default()
        };
        let sizes = [8u64, 64, 512];
        let kept = vec![at([140.0, 150.0], &sizes), at([145.0, 150.0], &sizes)];
        let parts = vec![
            at([450.0, 460.0], &[8, 64]),
            at([130.0, 135.0], &[512]),
            at([440.0, 470.0], &[512]),
        ];
        let mut other = Vec::new();
        let (same, far) = launch::with_parts(&kept, &mut other, parts.clone(), &sizes);
        assert_eq!((same.len(), far, other.len()), (1, Ok(2), 2));
        // Without the far part at 512 B the far parts leave it out: no second set from them.
        let mut other = Vec::new();
        let fewer = vec![parts[0].clone(), parts[1].clone()];
        let (same, far) = launch::with_parts(&kept, &mut other, fewer.clone(), &sizes);
        assert_eq!((same.len(), far, other.len()), (1, Err(vec![512]), 0));
        let mut other = vec![at([450.0, 440.0], &[8]), at([460.0, 470.0], &[8, 64])];
        let (_, far) = launch::with_parts(&kept, &mut other, fewer, &sizes);
        assert_eq!((far, other.len()), (Ok(1), 3));
        // Far parts do not join a second set of launches near together (a third placement):
        // the near launch alone is no set, and the far parts are in none.
        let mut other = vec![at([60.0, 65.0], &sizes)];
        let (same, far) = launch::with_parts(&kept, &mut other, parts.clone(), &sizes);
        assert_eq!((same.len(), far, other.len()), (1, Ok(0), 1));
        let mut other = vec![at([60.0, 65.0], &sizes)];
        let near_part = vec![at([62.0, 66.0], &[8])];
        let (_, far) = launch::with_parts(&kept, &mut other, near_part, &sizes);
        assert_eq!((far, other.len()), (Ok(1), 2));
    }

    /// A second set found before a sweep was measured again (MPICH's reported limit is not
    /// the one its messages meet) is kept where the later sweep held one placement, if that
    /// is another placement; the later sweep's own second set comes first.
    #[test]
    fn a_second_set_outlives_a_sweep_measured_again() {
        let swept = Swept::with_lines;
        // This session's MPICH node calibration: 2 of 7 launches near, then 5 far.
        let far = swept(&[[450.0, 460.0], [440.0, 470.0], [445.0, 452.0]]);
        let near = swept(&[[166.0, 62.0], [154.0, 158.0]]);
        let kept = kept_other(&far, None, [Some(near.clone()), None]);
        assert_eq!(kept.map(|o| o.lines), Some(near.lines.clone()));
        // An earlier set at the later sweep's own placement is not a second one.
        let same = swept(&[[140.0, 150.0]]);
        assert!(kept_other(&near, None, [Some(same.clone()), None]).is_none());
        let own = swept(&[[60.0, 70.0], [65.0, 61.0]]);
        let kept = kept_other(&far, Some(own.clone()), [Some(near.clone()), None]);
        assert_eq!(kept.map(|o| o.lines), Some(own.lines));
        assert!(kept_other(&far, None, [None, None]).is_none());
        // The 37th session's MPICH node calibration: the first sweep's five launches near, its
        // main set, then nine far and one near (left out): the earlier main set is the second.
        let five = swept(&[
            [144.0, 136.0],
            [135.0, 134.0],
            [133.0, 136.0],
            [131.0, 134.0],
            [141.0, 106.0],
        ]);
        let kept = kept_other(&far, None, [None, Some(five.clone())]);
        assert_eq!(kept.map(|o| o.lines), Some(five.lines.clone()));
        // Of two earlier sets apart, the one of more launches.
        let kept = kept_other(&far, None, [Some(near.clone()), Some(five.clone())]);
        assert_eq!(kept.map(|o| o.lines), Some(five.lines));
        assert!(kept_other(&far, None, [Some(same), None]).is_some());
        // A sweep measured again whose ranks moved within most launches (2 held one
        // placement, against 5) does not replace the earlier one; as many or more do.
        let held = |n: usize| Swept {
            launches: n,
            ..far.clone()
        };
        assert!(!replaces(&held(2), &held(5), Some(69_632)));
        assert!(replaces(&held(5), &held(5), Some(69_632)));
        assert!(replaces(&held(6), &held(5), None));
    }

    /// Above COPY_WARNING times the aligned copy it is a warning, with the ratio; below, not.
    #[test]
    fn copy_finding_warns_on_aliasing() {
        let (text, warn) = copy_finding(431.0, 9448.0);
        assert!(warn);
        assert!(
            text.contains("0.43 µs") && text.contains("9.45 µs (21.9×)"),
            "{text}"
        );
        let (text, warn) = copy_finding(431.0, 800.0);
        assert!(!warn);
        assert!(text.contains("does not matter"), "{text}");
    }

    /// The alias probe as measured here (`loggps-rtt --alias`, an AMD EPYC VM, Open MPI 4.1):
    /// 4,096 B (above `S` = 4,040 B) 1.4× is no warning alone; 16,384
    /// B 2.2× (16.0 µs against 7.3) is; sizes at or below `S` (eager, through the library's own
    /// buffers) are left out, and none above it gives no finding.
    #[test]
    fn alias_finding_warns_where_a_single_copy_aliases() {
        let probe = [
            (4096, 5110.0, 7314.0),
            (16384, 7344.0, 16000.0),
            (262144, 36468.0, 173163.0),
        ];
        let (text, warn) = alias_finding(&probe, 4040).unwrap();
        assert!(warn);
        // `alias`: each size's extra a byte, (7,314 − 5,110) / 4,096 = 0.5381, (16,000 −
        // 7,344) / 16,384 = 0.5283, (173,163 − 36,468) / 262,144 = 0.5214: their median; above
        // 8,255 B the mean of the last two.
        let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-4);
        assert!(close(alias_rate(&probe, 4040), 8656.0 / 16384.0));
        assert!(close(
            alias_rate(&probe, 8255),
            (8656.0 / 16384.0 + 136695.0 / 262144.0) / 2.0
        ));
        assert!(alias_rate(&probe, 1 << 20).is_none());
        assert!(text.contains("alias = 0.528 ns a byte"), "{text}");
        assert!(
            text.contains("4096 B 1.4× (7.3 µs against 5.1)")
                && text.contains("16384 B 2.2× (16.0 µs against 7.3)")
                && text.contains("262144 B 4.7× (173.2 µs against 36.5)"),
            "{text}"
        );
        let (text, warn) = alias_finding(&probe[..1], 4040).unwrap();
        assert!(!warn && text.contains("does not matter"), "{text}");
        let (text, _) = alias_finding(&probe, 8255).unwrap();
        assert!(!text.contains("4096 B"), "{text}");
        assert!(alias_finding(&probe, 1 << 20).is_none());
    }

    /// The drained probe as measured here (`loggps-rtt --drained`, an Intel Xeon VM, Open MPI
    /// 4.1; medians, ns): a receive of a message that arrived while its rank waited inside
    /// MPI_Iprobe took 65–107 ns where one that arrived while it computed took 212–780 ns.
    /// Against Myrinet's set (`o` 6,550, `Or` 2.57, `S` 16,383: `T3` = 6,550 + 2.57 k, 6,571 at
    /// 8 B, 9,182 at 1,024, 16,830 at 4,000, 27,110 at 8,000) the largest saving is 27,110 −
    /// 874 = 26,236 ns; under a limit of 4,040, 8,000 B is left out: 16,830 − 107 = 16,723.
    #[test]
    fn drained_finding_names_the_receives_a_wait_took_in() {
        let probe = [
            (8, 212.0, 65.0),
            (1024, 529.0, 78.0),
            (4000, 780.0, 107.0),
            (8000, 995.0, 874.0),
        ];
        let p = crate::model::Params::preset("myrinet").unwrap();
        let (text, warn) = drained_finding(&probe, &p).unwrap();
        assert!(warn, "{text}");
        // The set's line to paste, the probe's figures at its sizes up to `S`.
        assert!(
            text.contains("`drained = [[8, 65.0], [1024, 78.0], [4000, 107.0], [8000, 874.0]]`"),
            "{text}"
        );
        assert!(
            text.contains("of 8, 1024, 4000, 8000 B")
                && text.contains("received in 65, 78, 107, 874 ns")
                && text.contains("computed in 212, 529, 780, 995 ns")
                && text.contains("costs both 6571, 9182, 16830, 27110 ns"),
            "{text}"
        );
        assert!(
            text.contains("up to 26236 ns less than T3 (up to 8000 B"),
            "{text}"
        );
        let p = crate::model::Params { S: 4040, ..p };
        let (text, _) = drained_finding(&probe, &p).unwrap();
        assert!(
            text.contains("of 8, 1024, 4000 B") && text.contains("up to 16723 ns less"),
            "{text}"
        );
        // MPICH's (161/47 at 8 B; 1,024 B 323/213, 4,000 B 614/491): a wait takes in less of
        // the larger messages, under half at neither.
        let mpich = [(1024, 323.0, 213.0), (4000, 614.0, 491.0)];
        let (text, warn) = drained_finding(&mpich, &p).unwrap();
        assert!(!warn && text.contains("differ little"), "{text}");
        assert!(drained_finding(&probe[3..], &p).is_none());
    }
}
