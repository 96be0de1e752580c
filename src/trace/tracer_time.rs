//! The tracer's own time in a trace (the model's §16): the figures a rank's `R` chunk holds,
//! checked, and what a replay makes of them between two calls.

use super::{Routine, Shape};

/// Why `ns` cannot be the tracer's time `what` ([`super::RankMeta::own_ns`], `in_call_ns`), if it
/// cannot.
pub fn own_invalid(what: &str, ns: f64) -> Option<String> {
    let fine = ns.is_finite() && (0.0..1e9).contains(&ns);
    (!fine).then(|| format!("expected the tracer's {what} in 0 ns – 1 s, found {ns}"))
}

/// The tracer's time figures' names in [`own_invalid`]'s errors.
pub const OWN: &str = "own time per record";
pub const IN_CALL: &str = "time inside a call";

/// What a replay adds to a rank's measured gaps between calls, ns ([`super::RankMetas::gap_change`]):
/// `plain` for a record of any other routine, `request` for a request's; a gap between two
/// records takes the mean of its two ends' (the tracer's work after one call and before the
/// next).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GapChange {
    pub plain: f64,
    pub request: f64,
}

impl GapChange {
    /// Nothing added or taken anywhere.
    pub fn is_none(&self) -> bool {
        self.plain == 0.0 && self.request == 0.0
    }

    /// The change of the gap between a call of `before` and one of `after`.
    #[inline]
    pub fn between(&self, before: Routine, after: Routine) -> f64 {
        let of = |r: Routine| match of_request(r) {
            true => self.request,
            false => self.plain,
        };
        0.5 * (of(before) + of(after))
    }
}

/// Whether the tracer's record of `routine` is a request's (its own figures: an entry in its
/// table of requests made or found again).
#[inline]
pub fn of_request(routine: Routine) -> bool {
    matches!(
        routine.shape(),
        Shape::Isend | Shape::Irecv | Shape::Complete | Shape::Cancel
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gap's change is the mean of its two ends' figures: a request's routine (`Isend`,
    /// `Irecv`, a completion, `Cancel`) takes `request`, any other `plain`.
    #[test]
    fn a_gap_takes_the_mean_of_its_ends() {
        let c = GapChange {
            plain: -40.0,
            request: -100.0,
        };
        assert_eq!(c.between(Routine::Send, Routine::Recv), -40.0);
        assert_eq!(c.between(Routine::Isend, Routine::Waitall), -100.0);
        assert_eq!(c.between(Routine::Allreduce, Routine::Irecv), -70.0);
        assert_eq!(c.between(Routine::Test, Routine::Barrier), -70.0);
        assert!(!c.is_none());
        let none = GapChange {
            plain: 0.0,
            request: 0.0,
        };
        assert!(none.is_none() && none.between(Routine::Wait, Routine::Send) == 0.0);
    }
}
