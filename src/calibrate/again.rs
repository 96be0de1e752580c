//! The sizes whose round trips a set's fit misses, measured again before the miss is the
//! model's: the sweep's medians over a few launches still scatter by 5–10% from one size to the
//! next on a machine whose speed moves between launches (TCP loopback here: 7 and 8 B 8% under
//! the model, 11 B 8% over it, in one calibration and not the next). Each such size is
//! measured in as many launches again as the sweep ran, and its values become the median over
//! all of them; a miss that stays is the model's.

use super::banded::{self, MISS};
use super::fit::Sample;
use super::launch::{self, Launch};
use super::{Options, Swept, coarse_sizes, combine, cores_ns, imbalances, run_rtt};
use crate::trace::OTHER_CORES;

/// What measuring again did, for the report: the sizes measured again, the launches run, how
/// many of them each set took (the rest ran at neither set's placement, or their ranks moved
/// within them), and each set's round trips missed or set aside before and after.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Again {
    pub sizes: Vec<u64>,
    /// Sizes the sweep had not measured, halfway between a missed size and its neighbours.
    pub between: Vec<u64>,
    pub launches: usize,
    pub taken: [usize; 2],
    pub missed: [[usize; 2]; 2],
    /// Each set's rounds undone: their launches left it more round trips missed or set aside
    /// than it had without them ([`add`]).
    pub undone: [usize; 2],
}

/// The sizes of `samples` (sorted by size) whose round trip the set's fit with eager limit
/// `limit` misses by more than [`MISS`], or sets aside as an outlier, and how many round trips
/// those are; none where the fit fails (the caller says so).
pub(super) fn missed(samples: &[Sample], calls: &[super::Calls], limit: u64) -> (Vec<u64>, usize) {
    let Some(f) = banded::fit_bands(samples, calls, limit) else {
        return (Vec::new(), 0);
    };
    let aside = |x: &Sample| f.outliers.iter().any(|o| o.k == x.k && o.w_ns == x.w_ns);
    let off: Vec<&Sample> = (samples.iter())
        .filter(|x| banded::residual(&f.params, x).abs() > MISS || aside(x))
        .collect();
    let mut k: Vec<u64> = off.iter().map(|x| x.k).collect();
    k.sort_unstable();
    k.dedup();
    (k, off.len())
}

/// Which of the sets whose cache-line figures are `sets` (the main set's, the second's) a
/// launch with figures `line` (before and after it) measured at: the nearest by ratio, within
/// [`OTHER_CORES`] of it at both ends; None where it ran at neither, or its ranks moved within
/// it. A set without a figure (the ranks share no memory) takes every launch.
pub(super) fn set_of(line: Option<[f64; 2]>, sets: &[Option<f64>]) -> Option<usize> {
    let Some([a, b]) = line else {
        return sets.iter().position(Option::is_none);
    };
    let ratio = |x: f64, y: f64| x.max(y) / x.min(y).max(1e-9);
    let (i, at) = (sets.iter().enumerate())
        .filter_map(|(i, s)| s.map(|s| (i, s)))
        .min_by(|x, y| ratio(a.max(b), x.1).total_cmp(&ratio(a.max(b), y.1)))?;
    (ratio(a, at) < OTHER_CORES && ratio(b, at) < OTHER_CORES).then_some(i)
}

/// Measures again the sizes each set's fit misses (`main`, and `other` where there is a second
/// set), in as many launches as the sweep's; each launch's points go to the set it ran at
/// ([`set_of`]), and each set's points are combined anew over all its launches. Where misses
/// stay, a second round measures them with the sizes halfway to their neighbours ([`halves`]),
/// so that the breakpoint search can follow a cost that bends within an octave: only there,
/// since a size the sweep never measured stands on the launches measuring again alone, whose
/// minutes' speed its neighbours do not share (four calibrations each way in turn, round trips
/// missed or set aside before → after: with the halves in the first round 16→31, 13→22, 9→20,
/// 20→37; in a second round 25→15, 12→12, 9→16, 23→29). A round that adds a set misses is
/// undone for it ([`add`]). The sets' launch counts, spread and cache-line figures stay the
/// sweep's.
pub(super) fn where_missed(
    opts: &Options,
    limit: u64,
    main: &mut Swept,
    mut other: Option<&mut Swept>,
    log: &mut dyn FnMut(String),
) -> Again {
    let (mut sizes, ws) = (
        coarse_sizes(opts.max_bytes, opts.per_octave),
        imbalances(opts),
    );
    let misses = |main: &Swept, other: Option<&Swept>| {
        let (mut k, n) = missed(&main.samples, &main.calls, limit);
        let (o, m) = other.map_or((Vec::new(), 0), |o| missed(&o.samples, &o.calls, limit));
        k.extend(o);
        k.sort_unstable();
        k.dedup();
        (k, [n, m])
    };
    let (k, before) = misses(main, other.as_deref());
    let mut again = Again {
        sizes: k.clone(),
        missed: [before, before],
        ..Again::default()
    };
    if k.is_empty() {
        return again;
    }
    log(format!(
        "the fit misses round trips at {} size(s) ({}): measuring {} again in {} launches (up \
         to twice as many while few run at the main set's placement)",
        k.len(),
        sizes_in_words(&k),
        match k.len() {
            1 => "it",
            _ => "them",
        },
        opts.launches.max(1),
    ));
    let figures = [
        cores_ns(&main.lines),
        other.as_deref().and_then(|o| cores_ns(&o.lines)),
    ];
    let sets = &figures[..1 + other.is_some() as usize];
    let fresh = launches(opts, &k, &ws, sets, &mut again, before[0] > 0, log);
    add_each(
        main,
        other.as_deref_mut(),
        fresh,
        (&sizes, &ws, limit),
        &mut again,
        log,
    );
    let (still, _) = misses(main, other.as_deref());
    let measured = halves(&still, &sizes);
    again.between = (measured.iter())
        .filter(|m| sizes.binary_search(m).is_err())
        .copied()
        .collect();
    if !again.between.is_empty() {
        log(format!(
            "the fit still misses round trips at {} size(s) ({}): measuring them again with {} \
             size(s) halfway to their neighbours in {} launches",
            still.len(),
            sizes_in_words(&still),
            again.between.len(),
            opts.launches.max(1),
        ));
        sizes.extend(&again.between);
        sizes.sort_unstable();
        // As many launches as the sweep's, no more: the first round gave the main set its own.
        let fresh = launches(opts, &measured, &ws, sets, &mut again, false, log);
        add_each(
            main,
            other.as_deref_mut(),
            fresh,
            (&sizes, &ws, limit),
            &mut again,
            log,
        );
    }
    again.missed[1] = misses(main, other.as_deref()).1;
    again
}

/// One round of launches measuring `measured` again, each launch for the set it ran at
/// ([`set_of`] over `sets`): as many as the sweep's, and more (twice as many at most) while
/// the main set, which missed (`main_missed`), has fewer than half of them at its placement:
/// otherwise a spell at the other placement leaves the main set's misses measured once only.
/// Counted in `again`.
fn launches(
    opts: &Options,
    measured: &[u64],
    ws: &[u64],
    sets: &[Option<f64>],
    again: &mut Again,
    main_missed: bool,
    log: &mut dyn FnMut(String),
) -> [Vec<Launch>; 2] {
    let mut fresh: [Vec<Launch>; 2] = [Vec::new(), Vec::new()];
    let want = opts.launches.max(1) as usize;
    let (mut ran_here, mut taken_here) = (0, 0);
    while ran_here < want || (main_missed && taken_here < want.div_ceil(2) && ran_here < 2 * want) {
        ran_here += 1;
        again.launches += 1;
        // A launch that fails ends the measuring again: the points so far stand.
        let ran = match run_rtt(opts, measured, ws, (true, true), &[], log) {
            Ok(ran) => ran,
            Err(e) => {
                log(format!("measuring again stopped: {e}"));
                break;
            }
        };
        let (run, _, moved) = launch::split_by_placement(ran);
        match set_of(run.line, sets).filter(|_| moved.is_empty()) {
            Some(s) => {
                again.taken[s] += 1;
                taken_here += (s == 0) as usize;
                fresh[s].push(run);
            }
            None => log(
                "a launch measuring again ran at neither set's placement (or its ranks moved): left out"
                    .into(),
            ),
        }
    }
    fresh
}

/// The sizes to measure again: those `missed`, and for each of at least [`HALVES_FROM`] bytes
/// the size halfway (by ratio) to each neighbour in the sweep's `sizes` (sorted). A band must
/// span [`banded::MIN_SIZES`] sizes and 1.4× in size: where a library's cost bends within an
/// octave or two (the largest messages, beyond the caches), the sweep's 4 sizes an octave leave
/// the breakpoint search no band to cut there; twice as many around the miss do.
fn halves(missed: &[u64], sizes: &[u64]) -> Vec<u64> {
    let mut out = missed.to_vec();
    for &m in missed.iter().filter(|&&m| m >= HALVES_FROM) {
        let Ok(i) = sizes.binary_search(&m) else {
            continue;
        };
        let near = [i.checked_sub(1), Some(i + 1)];
        for n in near.into_iter().flatten().filter_map(|j| sizes.get(j)) {
            let h = (m as f64 * *n as f64).sqrt().round() as u64;
            if h != m && h != *n && *n >= HALVES_FROM {
                out.push(h);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The least size whose neighbours' halves are measured again: below it a band spans too few
/// bytes for a per-byte term ([`banded`]'s least span).
const HALVES_FROM: u64 = 64;

/// Each set's launches of `fresh` added to it ([`add`]; `at`: the sizes, imbalances and eager
/// limit its points are combined and fitted with), the rounds undone counted in `again`.
fn add_each(
    main: &mut Swept,
    other: Option<&mut Swept>,
    fresh: [Vec<Launch>; 2],
    at: (&[u64], &[u64], u64),
    again: &mut Again,
    log: &mut dyn FnMut(String),
) {
    let [for_main, for_other] = fresh;
    for (s, (set, more)) in [(Some(main), for_main), (other, for_other)]
        .into_iter()
        .enumerate()
    {
        let Some(set) = set else { continue };
        if let Some((was, now)) = add(set, more, at) {
            again.undone[s] += 1;
            log(format!(
                "measuring again left the {} set {now} round trips missed or set aside where it \
                 had {was}: those launches undone (the sizes measured in another minute than \
                 their neighbours, whose speed the sweep's launches did not share)",
                ["main", "second"][s]
            ));
        }
    }
}

/// Adds the launches `more` to `set` and combines its points anew over all its launches, with
/// the sizes, imbalances and eager limit `at`; where that leaves the set's fit more round trips
/// missed or set aside than before, the set is left as it was, and the counts before and
/// after are returned. Measuring again is to tell a spell's miss from the model's, and a round
/// that adds misses shows the launches' minutes apart, not the model.
fn add(
    set: &mut Swept,
    more: Vec<Launch>,
    (sizes, ws, limit): (&[u64], &[u64], u64),
) -> Option<(usize, usize)> {
    if more.is_empty() {
        return None;
    }
    let was = missed(&set.samples, &set.calls, limit).1;
    let mut runs = set.runs.clone();
    runs.extend(more);
    let fresh = combine(runs.clone(), sizes, ws, set.apart);
    let now = missed(&fresh.samples, &fresh.calls, limit).1;
    if now > was {
        return Some((was, now));
    }
    set.runs = runs;
    set.samples = fresh.samples;
    set.calls = fresh.calls;
    None
}

/// Sizes in bytes, a few named and the rest counted.
pub fn sizes_in_words(k: &[u64]) -> String {
    let named: Vec<String> = k.iter().take(6).map(|k| format!("{k} B")).collect();
    match k.len() {
        0..=6 => named.join(", "),
        n => format!("{} and {} more", named.join(", "), n - 6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch goes to the set whose figure is nearest by ratio, within 2× at both its ends;
    /// one whose ranks moved (figures 2× apart) or ran at neither goes nowhere.
    #[test]
    fn launches_go_to_the_set_they_ran_at() {
        let sets = [Some(65.0), Some(320.0)];
        assert_eq!(set_of(Some([60.0, 70.0]), &sets), Some(0));
        assert_eq!(set_of(Some([310.0, 330.0]), &sets), Some(1));
        assert_eq!(set_of(Some([61.0, 330.0]), &sets), None);
        assert_eq!(set_of(Some([1200.0, 1300.0]), &sets), None);
        assert_eq!(set_of(Some([140.0, 140.0]), &sets[..1]), None);
        assert_eq!(set_of(Some([120.0, 125.0]), &sets[..1]), Some(0));
        // Ranks that share no memory (two nodes): the set without a figure takes them.
        assert_eq!(set_of(None, &[None]), Some(0));
        assert_eq!(set_of(None, &sets), None);
    }

    /// Around a missed size of 64 B or more, the sizes halfway to its neighbours by ratio
    /// (by hand: √(2,965,821 × 3,526,975) = 3,234,251; √(3,526,975 × 4,194,304) = 3,846,194);
    /// none below 64 B or between a size and itself.
    #[test]
    fn sizes_halfway_to_a_misses_neighbours_are_measured_too() {
        let sizes = [0, 1, 2, 48, 64, 128, 2_965_821, 3_526_975, 4_194_304];
        assert_eq!(
            halves(&[3_526_975], &sizes),
            vec![3_234_251, 3_526_975, 3_846_194]
        );
        assert_eq!(halves(&[4_194_304], &sizes), vec![3_846_194, 4_194_304]);
        assert_eq!(halves(&[2, 48], &sizes), vec![2, 48]);
        // 64 B: its neighbour 48 B lies below the least, 128 B does not (√8192 = 90.5).
        assert_eq!(halves(&[64], &sizes), vec![64, 91]);
        assert_eq!(halves(&[], &sizes), Vec::<u64>::new());
    }

    /// A round measuring again is kept where it leaves the set no more round trips missed or
    /// set aside, and undone where it leaves more. MPICH's round trips of one calibration
    /// (`fixtures/calibration/mpich-4.0-ucx.tsv`) as one launch, with 2 KiB's 30% over its
    /// neighbours (a spell's miss): two launches at the sweep's speed there take the miss away
    /// (the median of 1.3, 1, 1); then a launch of four other sizes, apart, 60% slower
    /// (another minute: the medians of 1 and 1.6, 30% over) adds misses, and is undone.
    #[test]
    fn a_round_that_adds_misses_is_undone() {
        let root = env!("CARGO_MANIFEST_DIR");
        let (samples, calls) = super::super::banded::measured::read(&format!(
            "{root}/fixtures/calibration/mpich-4.0-ucx.tsv"
        ));
        let mut sizes: Vec<u64> = samples.iter().map(|x| x.k).collect();
        sizes.dedup();
        let (ws, limit) = ([0u64], 8255);
        let launch = |ks: &[u64], factor: f64| Launch {
            samples: (samples.iter())
                .filter(|x| ks.contains(&x.k))
                .map(|x| Sample {
                    rtt_ns: x.w_ns + (x.rtt_ns - x.w_ns) * factor,
                    ..*x
                })
                .collect(),
            calls: calls
                .iter()
                .filter(|c| ks.contains(&c.k))
                .cloned()
                .collect(),
            ..Launch::default()
        };
        let clean = super::super::combine(vec![launch(&sizes, 1.0)], &sizes, &ws, false);
        let n0 = missed(&clean.samples, &clean.calls, limit).1;
        let spike = sizes[40];
        let mut first = launch(&sizes, 1.0);
        for x in first.samples.iter_mut().filter(|x| x.k == spike) {
            x.rtt_ns = x.w_ns + (x.rtt_ns - x.w_ns) * 1.3;
        }
        let mut set = super::super::combine(vec![first], &sizes, &ws, false);
        let (k, n1) = missed(&set.samples, &set.calls, limit);
        assert!(k.contains(&spike) && n1 > n0, "{k:?}: {n1} against {n0}");
        let at = (&sizes[..], &ws[..], limit);
        assert_eq!(
            add(
                &mut set,
                vec![launch(&[spike], 1.0), launch(&[spike], 1.0)],
                at
            ),
            None
        );
        assert_eq!(
            (set.runs.len(), missed(&set.samples, &set.calls, limit).1),
            (3, n0)
        );
        let kept = set.samples.clone();
        let apart = [sizes[5], sizes[20], sizes[30], sizes[50]];
        let worse = add(&mut set, vec![launch(&apart, 1.6)], at);
        assert!(
            worse.is_some_and(|(was, now)| was == n0 && now > n0),
            "{worse:?}"
        );
        assert_eq!((set.runs.len(), &set.samples), (3, &kept));
        assert_eq!(add(&mut set, Vec::new(), at), None);
    }

    /// The sizes missed: those whose round trip lies more than 5% off the fit, here a step of
    /// 12% at one size among round trips on a line (by hand: 1000 ns + 2 ns a byte).
    #[test]
    fn a_size_off_the_line_is_missed() {
        let line = |k: u64| 1000.0 + 2.0 * k as f64;
        let mut samples: Vec<Sample> = (0..40)
            .map(|i| 16 * i + 1)
            .map(|k| Sample {
                k,
                w_ns: 0.0,
                rtt_ns: line(k) * if k == 337 { 1.12 } else { 1.0 },
            })
            .collect();
        samples.sort_by_key(|x| x.k);
        assert_eq!(missed(&samples, &[], 1 << 20), (vec![337], 1));
        samples[21].rtt_ns = line(337);
        assert_eq!(missed(&samples, &[], 1 << 20), (Vec::new(), 0));
        assert_eq!(sizes_in_words(&[1, 2]), "1 B, 2 B");
        assert_eq!(
            sizes_in_words(&[1, 2, 3, 4, 5, 6, 7, 8]),
            "1 B, 2 B, 3 B, 4 B, 5 B, 6 B and 2 more"
        );
    }
}
