//! The time the machine takes from the ranks: how much longer a launch's round trips took on
//! average than their middle halves (the model's §17). The set's round trips are the middle
//! halves' means (robust to a preempted repetition), so a program that repeats its messages
//! pays up to that share more than the set predicts; `calibrate` says how much, and
//! `--scale all=F` stretches a prediction so.

/// A share above this is a warning: predictions of communication-bound programs are low by
/// about as much.
pub const INTERRUPTED_WARNING: f64 = 0.05;

/// One launch's round trips, summed over its lines: the middle halves' means and the plain
/// means, each times its repetitions (ns).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Spent {
    pub middle_ns: f64,
    pub mean_ns: f64,
}

impl Spent {
    /// Adds a line's middle half's mean and plain mean over `reps` repetitions.
    pub fn add(&mut self, middle: f64, mean: f64, reps: f64) {
        self.middle_ns += middle * reps;
        self.mean_ns += mean * reps;
    }

    /// The share of the launch's time beyond its middle halves' (0 where the plain means were
    /// not longer): `1 − Σ middle / Σ mean`. None without lines that carry a mean (a round-trip
    /// program older than this field).
    pub fn share(&self) -> Option<f64> {
        (self.mean_ns > 0.0).then(|| (1.0 - self.middle_ns / self.mean_ns).max(0.0))
    }
}

/// What the launches' shares (`shares`, one a launch kept in the set) say, and whether it is a
/// warning; None without any.
pub fn finding(shares: &[f64]) -> Option<(String, bool)> {
    if shares.is_empty() {
        return None;
    }
    let share = super::fit::median(shares);
    let (lo, hi) = shares
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(l, h), &s| (l.min(s), h.max(s)));
    let stretch = 1.0 / (1.0 - share.min(0.9));
    let what = format!(
        "the round trips took {:.1}% of their time beyond their middle halves' (the median of {} \
         launches, {:.1}–{:.1}%): repetitions the operating system or the hypervisor \
         interrupted",
        100.0 * share,
        shares.len(),
        100.0 * lo,
        100.0 * hi
    );
    Some(match share > INTERRUPTED_WARNING {
        true => (
            format!(
                "{what}; the set leaves them out (its round trips are the middle halves': a \
                 typical message), a program that sends back and forth as the calibration does \
                 pays them and runs up to that much longer than predicted (--scale \
                 all={stretch:.2} stretches every modeled time so)"
            ),
            true,
        ),
        false => (format!("{what}: few enough to leave out"), false),
    })
}

/// What one rank of a launch lost to detours while it spun on the clock outside MPI (the
/// round-trip program's `--detours`): the operating system or the hypervisor taking its CPU for
/// more than a microsecond.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Detours {
    pub count: f64,
    pub lost_ns: f64,
    pub span_ns: f64,
    pub median_ns: f64,
}

/// How long the spin lasts in each launch, ms (the round-trip program's `--detours`).
pub const DETOUR_SPIN_MS: u32 = 20;

/// A repetition this long (a hiding point's round trip of 16 KiB here spans 10–20 µs) catching
/// a detour more often than [`CATCH_WARNING`] is a warning: a middle half leaves out a quarter.
const LONG_REP_NS: f64 = 20_000.0;
const CATCH_WARNING: f64 = 0.10;

impl Detours {
    /// A `detours RANK COUNT LOST_NS SPAN_NS MEDIAN_NS` line's figures (after its rank).
    pub fn parse(fields: &[&str]) -> Option<Detours> {
        let num = |i: usize| fields.get(i)?.parse::<f64>().ok();
        let d = Detours {
            count: num(0)?,
            lost_ns: num(1)?,
            span_ns: num(2)?,
            median_ns: num(3)?,
        };
        (d.span_ns > 0.0).then_some(d)
    }

    /// Detours a millisecond.
    pub fn rate_per_ms(&self) -> f64 {
        self.count / self.span_ns * 1e6
    }
}

/// What the launches' ranks' detours say (`each`: every rank of every launch), and whether it
/// is a warning: where a repetition of [`LONG_REP_NS`] catches one more often than
/// [`CATCH_WARNING`] (at the median rate), the round trips at the hiding point, which span the
/// imbalance, are interrupted beyond what their middle halves leave out, and read slower than
/// those at `w = 0` (the fit then misses round trips above `S`). None without any.
pub fn detours_finding(each: &[Detours]) -> Option<(String, bool)> {
    if each.is_empty() {
        return None;
    }
    let med = |f: &dyn Fn(&Detours) -> f64| {
        let v: Vec<f64> = each.iter().map(f).collect();
        super::fit::median(&v)
    };
    let rates: Vec<f64> = each.iter().map(Detours::rate_per_ms).collect();
    let (lo, hi) = (rates.iter()).fold((f64::INFINITY, 0.0f64), |(l, h), &r| (l.min(r), h.max(r)));
    let rate = super::fit::median(&rates);
    let share = med(&|d| d.lost_ns / d.span_ns);
    let typical = med(&|d| d.median_ns);
    let catch = 1.0 - (-rate * LONG_REP_NS / 1e6).exp();
    let what = format!(
        "a rank spinning on the clock outside MPI lost its CPU for more than 1 µs {rate:.1} times \
         a millisecond ({:.1}% of its time, the median detour {:.1} µs; the median of {} ranks' \
         {DETOUR_SPIN_MS} ms over the launches, {lo:.1}–{hi:.1} a ms): a {:.0} µs repetition \
         catches one {:.0}% of the time",
        100.0 * share,
        typical / 1e3,
        each.len(),
        LONG_REP_NS / 1e3,
        100.0 * catch
    );
    Some(match catch > CATCH_WARNING {
        true => (
            format!(
                "{what}: the round trips at the hiding point, which span the imbalance, are \
                 interrupted more often than the quarter their middle halves leave out and read \
                 slower than those at w = 0, which no band follows (the fit's misses above S are \
                 then the machine's); a program's messages pay the detours too, and synchronizing \
                 ones more (the model's §17): calibrate again in a quieter minute"
            ),
            true,
        ),
        false => (format!("{what}: rare enough"), false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 340 detours in 20 ms (17 a millisecond, 5.1% of the time) on one rank and 10 (0.5) on
    /// the other: the median rate 8.75 a ms, a 20 µs repetition catching one 1 − e^−0.175 =
    /// 16% of the time, a warning; 10 in 20 ms on both ranks: 1%, none.
    #[test]
    fn frequent_detours_are_a_warning_about_the_hiding_point() {
        let noisy = Detours::parse(&["340", "1020000", "20000000", "2200"]).unwrap();
        let quiet = Detours::parse(&["10", "200000", "20000000", "20000"]).unwrap();
        assert_eq!(noisy.rate_per_ms(), 17.0);
        let (text, warn) = detours_finding(&[noisy, quiet]).unwrap();
        assert!(warn, "{text}");
        assert!(text.contains("8.8 times a millisecond"), "{text}");
        assert!(text.contains("catches one 16% of the time"), "{text}");
        assert!(text.contains("0.5–17.0 a ms"), "{text}");
        let (text, warn) = detours_finding(&[quiet, quiet]).unwrap();
        assert!(
            !warn && text.contains("catches one 1% of the time"),
            "{text}"
        );
        assert_eq!(detours_finding(&[]), None);
        assert_eq!(Detours::parse(&["1", "2", "0", "4"]), None);
        assert_eq!(Detours::parse(&["1", "2"]), None);
    }

    /// Two lines: 1,000 repetitions of 500 ns in the middle half and 550 ns on average, and
    /// 100 of 10,000 and 12,000 ns: (500,000 + 1,000,000) / (550,000 + 1,200,000) = 6 / 7.
    #[test]
    fn the_share_weighs_each_line_by_its_time() {
        let mut s = Spent::default();
        s.add(500.0, 550.0, 1000.0);
        s.add(10_000.0, 12_000.0, 100.0);
        assert!((s.share().unwrap() - 1.0 / 7.0).abs() < 1e-12);
        assert_eq!(Spent::default().share(), None);
        let mut quiet = Spent::default();
        quiet.add(500.0, 499.0, 10.0);
        assert_eq!(quiet.share(), Some(0.0));
    }

    #[test]
    fn a_large_share_is_a_warning_with_the_stretch_that_puts_it_back() {
        let (text, warn) = finding(&[0.10, 0.20, 0.05]).unwrap();
        assert!(warn, "{text}");
        assert!(text.contains("10.0% of their time"), "{text}");
        assert!(text.contains("3 launches, 5.0–20.0%"), "{text}");
        // 1 / (1 − 0.1)
        assert!(text.contains("--scale all=1.11"), "{text}");
        let (text, warn) = finding(&[0.01, 0.02]).unwrap();
        assert!(!warn && text.contains("few enough"), "{text}");
        assert_eq!(finding(&[]), None);
    }
}
