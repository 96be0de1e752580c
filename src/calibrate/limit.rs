//! Where the protocol changes: the eager limit's jump bracketed by probes ([`eager_limit`]),
//! and the sizes above it measured eager under a launcher at a higher limit
//! ([`measure_eager_above`], the model's §10 "both protocols").

use super::*;

/// The sizes between the set's eager limit and a higher one, measured eager under another
/// launcher ([`Options::eager_mpirun`]).
#[derive(Clone, Debug)]
pub struct EagerAbove {
    /// The launcher, as given.
    pub mpirun: String,
    /// The higher limit measured there (the largest size measured eager): the set's eager
    /// bands above `S` end here, and a trace recorded at that limit is predicted at it.
    pub limit: u64,
    /// Its round trips above the set's `S` up to `limit`, and how many of them the set at
    /// `S = limit` misses by more than [`MISS`].
    pub samples: Vec<Sample>,
    pub missed: usize,
    /// As [`Calibration::line_ns`], of its launches kept.
    pub line_ns: Vec<[f64; 2]>,
    /// The eager limit the library reports under that launcher (None: not read).
    pub reported: Option<u64>,
    /// Exchanges (two ranks sending and receiving at once, as a halo's) of the sizes between
    /// the set's `S` and `limit`, traced under that launcher and predicted with the set at
    /// `S = limit` (`calibrate`'s [`super::eager_exchanges`]; None: none measured).
    pub exchanges: Option<super::exchange::Exchanges>,
    /// The eager bands above `S` whose `Od` and `Op` those exchanges moved
    /// ([`super::eager_split::fit`]).
    pub refits: Vec<super::eager_split::Refit>,
}

/// A modeled round trip this far from the measured one (relative) is a miss.
pub const MISS: f64 = 0.05;

/// Narrows a bracket `(lo, hi)` given the sizes `probe` inside it and the samples of the launch
/// that measured them with the bracket's ends; None: cannot tell, stop.
type Narrow<'a> = dyn Fn(u64, u64, &[u64], &[Sample]) -> Option<(u64, u64)> + 'a;

/// A probe launch's samples where its ranks held one placement throughout (each size's cache
/// line figures within 2× of the launch's median, [`launch::split_by_placement`]); None where
/// they moved.
fn held_still(l: Launch) -> Option<Vec<Sample>> {
    let (kept, _, moved) = launch::split_by_placement(l);
    moved.is_empty().then_some(kept.samples)
}

/// Narrows the bracket `(lo, hi)` around a threshold to adjacent sizes by measuring seven
/// probes inside it at imbalances `ws`, as long as `narrow` can tell where the threshold is.
fn refine(
    opts: &Options,
    bracket: (u64, u64),
    ws: &[u64],
    narrow: &Narrow<'_>,
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
        // An inconclusive launch is measured again, in a new launch, up to three times; so is
        // one whose ranks moved between cores within it (a round trip twice as long from one
        // size to the next, which the jump search would take for the rendezvous).
        let mut narrowed = None;
        for _ in 0..3 {
            let Some(batch) = held_still(run_rtt(&careful, &sizes, ws, (false, true), &[], log)?)
            else {
                log("the ranks' cores moved within the launch: measuring it again".into());
                continue;
            };
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

/// The sizes above `S` measured again under the launcher `mpirun`, at a higher eager limit:
/// their eager bands added to each set (`sets`: the main one, then the one at the other
/// placement where there is one) from that launcher's launches at the set's placement, each
/// set's measurement returned (None where it has none: no higher limit found, or no launch ran
/// at its placement, said in `log`). The sweep is measured again while none of its launches ran
/// at the main set's placement (up to three sweeps), and once more for the second set's. The
/// higher limit is the jump the main set's launches show where it lies within the library's
/// header of the limit the library reports, else that limit less `header` (the one `S` showed:
/// one library counts one header), said in `log`.
#[allow(non_snake_case)] // the paper's name
pub(super) fn measure_eager_above(
    opts: &Options,
    mpirun: &[String],
    mut sets: Vec<&mut Params>,
    (S, header): (u64, Option<u64>),
    log: &mut dyn FnMut(String),
) -> Result<Vec<Option<EagerAbove>>, Error> {
    let line = mpirun.join(" ");
    log(format!(
        "measuring the sizes above S = {S} B eager too, under `{line}`"
    ));
    let o = Options {
        mpirun: mpirun.to_vec(),
        eager_mpirun: None,
        ..opts.clone()
    };
    let cores: Vec<Option<f64>> = sets.iter().map(|p| p.cores).collect();
    let held = |x: &Option<Swept>, set: usize| x.as_ref().is_some_and(|x| at(x, cores[set]));
    let figure = |c: Option<f64>| c.map_or("?".into(), |c| format!("{c:.0} ns"));
    // Each set's launches: of each sweep's two placements, the one nearest the set's.
    let mut swept: Vec<Option<Swept>> = vec![None; sets.len()];
    for attempt in 0..3 {
        if attempt > 0 {
            // Again while the main set has no launch at its placement, once for the second's.
            let lacking = (0..sets.len()).find(|&i| !held(&swept[i], i));
            let Some(i) = lacking.filter(|&i| i == 0 || attempt == 1) else {
                break;
            };
            log(format!(
                "its launches ran on cores {}, {} on {}: measuring again",
                (swept.iter().flatten())
                    .map(|x| figure(cores_ns(&x.lines)))
                    .collect::<Vec<_>>()
                    .join(" and "),
                if i == 0 {
                    "the set's"
                } else {
                    "the second set's"
                },
                figure(cores[i])
            ));
        }
        let (kept, other) = sweep(&o, log)?;
        for x in std::iter::once(kept).chain(other) {
            give(&mut swept, &cores, x);
        }
    }
    // The main set takes the sweep nearest it where none ran at its placement.
    if swept[0].is_none() {
        let i = (1..swept.len())
            .find(|&i| swept[i].is_some())
            .expect("one sweep at least");
        swept[0] = swept[i].take();
    }
    let main = swept[0].as_ref().expect("one sweep at least");
    if !at(main, cores[0]) {
        log(format!(
            "WARNING: the sweep under `{line}` ran on cores {} apart, the set's on {}: its eager \
             bands above S cost messages at another placement; calibrate again while it holds still",
            figure(cores_ns(&main.lines)),
            figure(cores[0])
        ));
    }
    // The higher limit's jump is looked for above S alone, near the limit the library
    // reports under this launcher where the tracer reads it (as the set's S is): below it
    // the library has other steps (fast boxes; a step at the default limit's size).
    let reported = match &opts.tracer {
        Some(t) if t.exists() => {
            let quick = Options {
                launches: 1,
                ..o.clone()
            };
            reported_by_library(&quick, t, log)?.1.map(|(_, b)| b)
        }
        _ => None,
    };
    let mut above: Vec<Sample> = (main.samples.iter()).filter(|x| x.k > S).cloned().collect();
    above.sort_by_key(|x| (x.k, x.w_ns as u64));
    let near = reported.filter(|&r| fit::eager_jump(&above, Some(r)).is_some());
    let (_, mut limit) = eager_limit(&o, &above, near, reported, log)?;
    if let (Some(r), Some(h)) = (reported, header)
        && r > S + h
        && !(r.saturating_sub(library::HEADER_BYTES)..=r).contains(&limit)
    {
        log(format!(
            "the jump placed at {limit} B is not within {} B of the limit the library reports \
             ({r} B): taken as {} B, that limit less the {h} B header S showed",
            library::HEADER_BYTES,
            r - h
        ));
        limit = r - h;
    }
    if limit <= S || limit == u64::MAX {
        log(format!(
            "no eager limit above S = {S} B under `{line}` (found {}): no eager bands above S",
            match limit {
                u64::MAX => "none".to_string(),
                l => format!("{l} B"),
            }
        ));
        return Ok(sets.iter().map(|_| None).collect());
    }
    let mut each = Vec::new();
    for (i, (set, x)) in sets.iter_mut().zip(swept).enumerate() {
        let which = if i == 0 { "the set" } else { "the second set" };
        let x = match x {
            Some(x) if i == 0 || at(&x, cores[i]) => x,
            _ => {
                log(format!(
                    "no launch under `{line}` ran at {which}'s placement ({}): its costs of the \
                     sizes above S sent eagerly are not measured (a what-if --S above S warns of it)",
                    figure(cores[i])
                ));
                each.push(None);
                continue;
            }
        };
        each.push(eager_bands(
            set,
            x,
            (S, limit),
            (&line, reported),
            which,
            log,
        )?);
    }
    Ok(each)
}

/// How far (the log of the ratio) the launches of `x` ran from cores `c` apart (0 where either
/// figure is missing).
fn away(x: &Swept, c: Option<f64>) -> f64 {
    match (cores_ns(&x.lines), c) {
        (Some(a), Some(b)) => (a / b).ln().abs(),
        _ => 0.0,
    }
}

/// Whether the launches of `x` ran at the placement of cores `c` apart (within
/// [`OTHER_CORES`] of it).
fn at(x: &Swept, c: Option<f64>) -> bool {
    away(x, c) <= OTHER_CORES.ln()
}

/// Gives the launches `x` to the set (of `cores`) whose placement lies nearest theirs, where
/// it has none nearer.
fn give(each: &mut [Option<Swept>], cores: &[Option<f64>], x: Swept) {
    let i = (0..cores.len())
        .min_by(|&a, &b| away(&x, cores[a]).total_cmp(&away(&x, cores[b])))
        .unwrap_or(0);
    if each[i]
        .as_ref()
        .is_none_or(|y| away(&x, cores[i]) < away(y, cores[i]))
    {
        each[i] = Some(x);
    }
}

/// The eager bands above `S` up to `limit` fitted to the launches `swept` made under the
/// launcher `line` (which reported `reported`), added to `set` (`which`, in `log`).
#[allow(non_snake_case)] // the paper's name
fn eager_bands(
    set: &mut Params,
    mut swept: Swept,
    (S, limit): (u64, u64),
    (line, reported): (&str, Option<u64>),
    which: &str,
    log: &mut dyn FnMut(String),
) -> Result<Option<EagerAbove>, Error> {
    swept.samples.sort_by_key(|x| (x.k, x.w_ns as u64));
    let Some(f) = banded::fit_bands(&swept.samples, &swept.calls, limit) else {
        log(format!(
            "the sweep under `{line}` at {which}'s placement could not be fitted in bands: no eager bands above S"
        ));
        return Ok(None);
    };
    let fitted = f.params.as_bands();
    let mut list = Vec::new();
    let mut lo = 0;
    for b in fitted.as_slice() {
        if b.hi > S && lo < limit {
            list.push(Band {
                hi: b.hi.min(limit),
                ..*b
            });
        }
        lo = b.hi;
    }
    *set = set
        .with_bands(|b| {
            *b = b.with_eager_above(S, &list)?;
            Ok(())
        })
        .map_err(|e| Error::Io(format!("the eager bands above S: {e}")))?;
    let at = Params { S: limit, ..*set };
    let samples: Vec<Sample> = (swept.samples.into_iter())
        .filter(|x| x.k > S && x.k <= limit)
        .collect();
    let missed = (samples.iter())
        .filter(|x| banded::residual(&at, x).abs() > MISS)
        .count();
    log(format!(
        "{} eager band(s) above S for {S}–{limit} B, {which}'s: {missed} of their {} round trips missed by more than {:.0}%",
        list.len(),
        samples.len(),
        100.0 * MISS
    ));
    Ok(Some(EagerAbove {
        mpirun: line.to_string(),
        limit,
        samples,
        missed,
        line_ns: swept.lines,
        reported,
        exchanges: None,
        refits: Vec::new(),
    }))
}

/// The eager limit the library reports, where it is where its messages switch to rendezvous:
/// the jump search's prior, and `S` where the round trips show none. MPICH's shared-memory
/// cell size is not (`library::names_a_switch`): as a prior it put `S` at 65,536 B in a
/// calibration of 2026-12-07, its step past the cell half as strong as the rendezvous jump at
/// 8 KiB, while MPICH on UCX sends by rendezvous from there (its blocking send waits for a
/// computing receiver from 9 KiB: `tracer/bench/held`, 12,000 B 21.9 µs with the receiver
/// computing 20 µs, 8,193 B 0.5 µs).
pub(super) fn switch_reported(reported: Option<&(String, u64)>) -> Option<u64> {
    (reported.filter(|(name, _)| library::names_a_switch(name))).map(|(_, b)| *b)
}

/// The sweep's jumps [`eager_limit`] measures again at most, strongest first.
const BRACKETS_MOST: usize = 3;

/// The rendezvous jump in `samples` (looked for below `near`, the library's limit where the
/// sweep shows a jump below it), bracketed to adjacent sizes by probes, and `S`: the largest
/// size measured eager; with no jump, the library's limit (`reported`), else none (every size
/// eager).
pub(super) fn eager_limit(
    opts: &Options,
    samples: &[Sample],
    near: Option<u64>,
    reported: Option<u64>,
    log: &mut dyn FnMut(String),
) -> Result<(Option<(u64, u64)>, u64), Error> {
    let mut jump = None;
    // Within a bracket, the jump is where fit::eager_jump finds it among all samples measured
    // there: robust to a probe that took a fast or a slow path.
    let narrow = |lo: u64, hi: u64, _probe: &[u64], batch: &[Sample]| {
        fit::eager_jump(batch, near).filter(|&(l, h)| holds_the_jump(batch, (lo, hi), (l, h)))
    };
    // A bracket whose careful launches showed no jump inside it is passed over for the sweep's
    // next (a spell that slowed two sizes of one launch makes a jump into them: one calibration
    // here bracketed S to (2435, 2896] that way, Open MPI's 4,040 B limit unseen); where none
    // other is found, or none narrows either, the first stands.
    let mut skip = Vec::new();
    let mut first = None;
    while let Some(bracket) = fit::eager_jump_except(samples, near, &skip) {
        // The probes only place the jump: measured in one launch each, on whichever path that
        // launch took, they are not fitted.
        let found = refine(opts, bracket, &imbalances(opts), &narrow, log)?;
        if found != bracket || found.1 == found.0 + 1 {
            first = Some(found);
            break;
        }
        first = first.or(Some(found));
        if skip.len() + 1 >= BRACKETS_MOST {
            break;
        }
        log(format!(
            "no jump between {} and {} B measured again: looking for the next",
            found.0, found.1
        ));
        skip.push(bracket);
    }
    if let Some((lo, hi)) = first {
        log(format!("eager limit bracketed to ({lo}, {hi}]"));
        // A jump at the last size cannot be told from a slow last point.
        let above = samples.iter().filter(|x| x.k > lo && x.w_ns == 0.0).count();
        match above >= 2 {
            true => jump = Some((lo, hi)),
            false => log(format!(
                "a jump with {above} size above it is not trusted: ignored (raise --max-bytes)"
            )),
        }
        if (2..banded::MIN_SIZES).contains(&above) {
            log(format!(
                "{above} sizes above S: too few to split into bands (raise --max-bytes)"
            ));
        }
    }
    // S is the largest size measured eager; with no jump, the library's limit, else none.
    let limit = match (jump, reported) {
        (Some((lo, _)), _) => lo,
        (None, Some(r)) => {
            log(format!(
                "no rendezvous jump in the round trips: S = {r} bytes, as the library reports"
            ));
            r
        }
        (None, None) => {
            log(
                "no rendezvous jump in the round trips and no limit reported: every size is eager"
                    .into(),
            );
            u64::MAX
        }
    };
    Ok((jump, limit))
}

/// Whether the sizes `(l, h)` of `batch` take at least half of the step (up or down) its round
/// trips at `w = 0` make across `(lo, hi)` beyond their growth with the size (the median slope of the
/// other gaps between its sizes there): a jump found among one launch's probes where its round
/// trips barely move (a fast or slow path of that launch scored as one) is not the rendezvous,
/// and a bracket many times the jump's width grows by more than the jump.
fn holds_the_jump(batch: &[Sample], (lo, hi): (u64, u64), (l, h): (u64, u64)) -> bool {
    let mut ks: Vec<u64> = (batch.iter())
        .filter(|x| x.w_ns == 0.0 && (lo..=hi).contains(&x.k))
        .map(|x| x.k)
        .collect();
    ks.sort_unstable();
    ks.dedup();
    let at = |k: u64| {
        let v: Vec<f64> = (batch.iter())
            .filter(|x| x.k == k && x.w_ns == 0.0)
            .map(|x| x.rtt_ns)
            .collect();
        fit::median(&v)
    };
    if [lo, hi, l, h].iter().any(|k| !ks.contains(k)) {
        return true;
    }
    let slopes: Vec<f64> = (ks.windows(2))
        .filter(|p| (p[0], p[1]) != (l, h))
        .map(|p| (at(p[1]) - at(p[0])) / (p[1] - p[0]) as f64)
        .collect();
    let slope = match slopes.is_empty() {
        true => 0.0,
        false => fit::median(&slopes).max(0.0),
    };
    let excess = |a: u64, b: u64| at(b) - at(a) - slope * (b - a) as f64;
    // A step up, or down where the switch saves more than it costs (fit::eager_jump).
    match excess(lo, hi) {
        all if all >= 0.0 => excess(l, h) >= 0.5 * all,
        all => excess(l, h) <= 0.5 * all,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A probe launch of Open MPI's shared memory (2026-12-02): its bracket's ends and seven
    /// sizes between, each with the cache line's figure after it. Where the ranks held near
    /// cores throughout, its samples are used; where they moved to far ones after the third
    /// size (the round trip 2.1× from 3,504 to 3,525 B, as a rendezvous jump would be), the
    /// launch is measured again. (A calibration of that hour put `S` at 3,504 B where three
    /// others found 4,040 B; its probe launches timed no figure that could tell why.)
    #[test]
    fn a_probe_launch_whose_ranks_moved_is_measured_again() {
        let sizes = [3444, 3463, 3484, 3504, 3525, 3545, 3565, 3586, 4096];
        let launch = |figures: &[f64], rtts: &[f64]| {
            let mut text = format!("line {} {} 20000\n", figures[0], figures[figures.len() - 1]);
            for ((k, f), r) in sizes.iter().zip(&figures[1..]).zip(rtts) {
                text += &format!("rtt {k} 0 {r} {r} 31 0 0 {r}\nline_at {k} {f}\n");
            }
            launch::read_launch(&text)
        };
        let still = [
            121.0, 118.0, 125.0, 119.0, 122.0, 124.0, 117.0, 120.0, 123.0, 121.0, 119.0,
        ];
        let rtts = [
            2150.0, 2160.0, 2170.0, 2180.0, 2190.0, 2200.0, 2210.0, 2220.0, 5100.0,
        ];
        let kept = held_still(launch(&still, &rtts)).expect("held still");
        assert_eq!(kept.len(), sizes.len());
        let moved = [
            121.0, 118.0, 125.0, 119.0, 440.0, 452.0, 447.0, 450.0, 455.0, 449.0, 451.0,
        ];
        let rtts = [
            2150.0, 2160.0, 2170.0, 2180.0, 4580.0, 4600.0, 4610.0, 4630.0, 10900.0,
        ];
        assert_eq!(held_still(launch(&moved, &rtts)), None);
    }

    /// Measured under `btl_vader_eager_limit` 65536: the round trip steps from 17.9 µs to
    /// 24.9 µs between 65480 and 65490 B; a launch's probes that score a gap of 0.2 µs
    /// elsewhere do not place the jump there.
    #[test]
    fn only_a_limit_where_messages_switch_guides_the_search() {
        let named = |n: &str, b: u64| Some((n.to_string(), b));
        assert_eq!(
            switch_reported(named("btl_vader_eager_limit", 4096).as_ref()),
            Some(4096)
        );
        let cell = named("MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE", 69632);
        assert_eq!(switch_reported(cell.as_ref()), None);
        assert_eq!(switch_reported(None), None);
    }

    #[test]
    fn a_jump_must_hold_most_of_the_step() {
        let batch: Vec<Sample> = [
            (64230, 17700.0),
            (64393, 17500.0),
            (64556, 17900.0),
            (65371, 17950.0),
            (65536, 24900.0),
        ]
        .map(|(k, rtt_ns)| Sample {
            k,
            w_ns: 0.0,
            rtt_ns,
        })
        .to_vec();
        assert!(!holds_the_jump(&batch, (64230, 65536), (64393, 64556)));
        assert!(holds_the_jump(&batch, (64230, 65536), (65371, 65536)));
    }

    /// A bracket eight probe steps wide (46341–65536 B, the sweep's sizes at two an octave):
    /// the round trip grows 1 ns a byte (the slope of CI's
    /// far placement, `2(Os + Or + G)` ≈ 1.04 ns/B in its band 3) and steps 7 µs at 65480 B.
    /// Across the bracket it grows 26 µs, across the jump's gap 9.4 µs: the growth with the
    /// size is not the jump's.
    #[test]
    fn a_wide_bracket_grows_with_the_size_besides_the_jump() {
        let batch: Vec<Sample> = ((0..8u64).map(|i| 46341 + i * 2399))
            .chain([65536])
            .map(|k| Sample {
                k,
                w_ns: 0.0,
                rtt_ns: 20000.0 + (k - 46341) as f64 + if k > 65480 { 7000.0 } else { 0.0 },
            })
            .collect();
        assert!(holds_the_jump(&batch, (46341, 65536), (63134, 65536)));
        assert!(!holds_the_jump(&batch, (46341, 65536), (60735, 63134)));
    }

    /// The launches under `--eager-mpirun` go to the set whose placement they ran at: a
    /// sweep's near and far launches each to its set, a sweep nearer a set's placement in place
    /// of one farther from it, and with one set every sweep to it (the figures of the 35th
    /// session's calibration with two sets: far 428.55 ns, near 116.15 ns).
    #[test]
    fn each_set_takes_the_eager_launches_at_its_placement() {
        let swept = Swept::with_lines;
        let figure = |x: &Option<Swept>| x.as_ref().and_then(|x| cores_ns(&x.lines));
        let cores = [Some(428.55), Some(116.15)];
        let mut each = vec![None, None];
        give(&mut each, &cores, swept(&[[120.0, 131.0], [118.0, 125.0]]));
        assert_eq!((figure(&each[0]), figure(&each[1])), (None, Some(122.5)));
        give(&mut each, &cores, swept(&[[300.0, 310.0]]));
        assert_eq!(figure(&each[0]), Some(305.0));
        // 440 ns lies nearer the far set's figure and takes the place of 305 ns; 200 ns goes
        // to the near set's (nearer 116.15 than 428.55 by ratio), where 122.5 ns is nearer.
        give(&mut each, &cores, swept(&[[438.0, 442.0]]));
        give(&mut each, &cores, swept(&[[200.0, 200.0]]));
        assert_eq!(
            (figure(&each[0]), figure(&each[1])),
            (Some(440.0), Some(122.5))
        );
        assert!(at(each[0].as_ref().unwrap(), cores[0]));
        assert!(at(each[1].as_ref().unwrap(), cores[1]));
        let mut one = vec![None];
        give(&mut one, &[Some(428.55)], swept(&[[120.0, 120.0]]));
        assert_eq!(figure(&one[0]), Some(120.0));
        assert!(!at(one[0].as_ref().unwrap(), Some(428.55)));
        // A set without a figure (the network's) takes every sweep as at its placement.
        assert!(at(one[0].as_ref().unwrap(), None));
    }
}
