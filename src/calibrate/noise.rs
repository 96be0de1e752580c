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

#[cfg(test)]
mod tests {
    use super::*;

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
