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

/// The tracer's own time per record of each routine, sampled during the run (a rank's `R`
/// chunk, written at `MPI_Finalize`; the model's §16): a record's cost to the tracer depends on
/// its routine and its buffers, which the figures timed at `MPI_Init` do not show.
#[derive(Clone, Debug, Default)]
pub struct OwnSampled {
    /// `(routine, samples, ns)` in code order, each routine once.
    each: Vec<(Routine, u32, f64)>,
    /// `each`'s figures by routine code, NaN where none: a replay's lookup.
    by_code: Option<Box<[f64; 256]>>,
}

impl PartialEq for OwnSampled {
    fn eq(&self, other: &OwnSampled) -> bool {
        self.each == other.each
    }
}

/// The samples a routine's figure needs before a replay takes it (fewer: the figures timed at
/// `MPI_Init`): a routine's first calls cost the tracer microseconds more (a call site's, a
/// communicator's or a buffer's first use), which the median of a few samples would hold.
pub const SAMPLES_USED: u32 = 8;

impl OwnSampled {
    /// None sampled.
    pub const NONE: OwnSampled = OwnSampled {
        each: Vec::new(),
        by_code: None,
    };

    /// The figures `(routine, samples, ns)`, checked: each routine once, at least one sample,
    /// a time [`own_invalid`] accepts.
    pub fn new(mut each: Vec<(Routine, u32, f64)>) -> Result<OwnSampled, String> {
        each.sort_by_key(|e| e.0);
        if let Some(w) = each.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(format!(
                "expected each routine's sampled own time once, found {} twice",
                w[0].0.mpi_name()
            ));
        }
        for &(r, n, ns) in &each {
            if n == 0 {
                return Err(format!(
                    "expected at least one sample of {}'s own time, found 0",
                    r.mpi_name()
                ));
            }
            if let Some(why) = own_invalid(OWN, ns) {
                return Err(format!("{}: {why}", r.mpi_name()));
            }
        }
        let used = || (each.iter()).filter(|e| e.1 >= SAMPLES_USED);
        let by_code = used().next().is_some().then(|| {
            let mut t = Box::new([f64::NAN; 256]);
            for &(r, _, ns) in used() {
                t[r as usize] = ns;
            }
            t
        });
        Ok(OwnSampled { each, by_code })
    }

    /// `(routine, samples, ns)` in code order.
    pub fn each(&self) -> &[(Routine, u32, f64)] {
        &self.each
    }

    pub fn is_empty(&self) -> bool {
        self.each.is_empty()
    }

    /// The lookup [`GapChange::sampled`] takes.
    pub(super) fn table(&self) -> Option<&[f64; 256]> {
        self.by_code.as_deref()
    }
}

/// What a replay adds to a rank's measured gaps between calls, ns ([`super::RankMetas::gap_change`]):
/// `plain` for a record of any other routine, `request` for a request's, or, taking the
/// tracer's own time out, a routine's own sampled figure where the run sampled it (`sampled`,
/// by routine code, NaN where not); a gap between two records takes the mean of its two ends'
/// (the tracer's work after one call and before the next).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GapChange<'a> {
    pub plain: f64,
    pub request: f64,
    pub sampled: Option<&'a [f64; 256]>,
}

impl GapChange<'_> {
    /// Nothing added or taken anywhere.
    pub fn is_none(&self) -> bool {
        self.plain == 0.0 && self.request == 0.0 && self.sampled.is_none()
    }

    /// The change of the gap between a call of `before` and one of `after`.
    #[inline]
    pub fn between(&self, before: Routine, after: Routine) -> f64 {
        let of = |r: Routine| match self.sampled.map(|t| t[r as usize]) {
            Some(ns) if !ns.is_nan() => -ns,
            _ if of_request(r) => self.request,
            _ => self.plain,
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
            sampled: None,
        };
        assert_eq!(c.between(Routine::Send, Routine::Recv), -40.0);
        assert_eq!(c.between(Routine::Isend, Routine::Waitall), -100.0);
        assert_eq!(c.between(Routine::Allreduce, Routine::Irecv), -70.0);
        assert_eq!(c.between(Routine::Test, Routine::Barrier), -70.0);
        assert!(!c.is_none());
        let none = GapChange {
            plain: 0.0,
            request: 0.0,
            sampled: None,
        };
        assert!(none.is_none() && none.between(Routine::Wait, Routine::Send) == 0.0);
    }

    /// A routine sampled during the run takes its own figure, one not sampled (or sampled
    /// fewer than [`SAMPLES_USED`] times) the figures timed at `MPI_Init`.
    #[test]
    fn a_sampled_routine_takes_its_own_figure() {
        let s = OwnSampled::new(vec![
            (Routine::Allreduce, 9, 230.0),
            (Routine::Isend, 8, 120.0),
            (Routine::Send, 7, 5000.0),
        ])
        .unwrap();
        let c = GapChange {
            plain: -40.0,
            request: -100.0,
            sampled: s.table(),
        };
        assert_eq!(c.between(Routine::Allreduce, Routine::Allreduce), -230.0);
        assert_eq!(c.between(Routine::Isend, Routine::Send), -80.0);
        assert_eq!(c.between(Routine::Irecv, Routine::Allreduce), -165.0);
        // 7 samples: too few, the figure timed at MPI_Init instead
        assert_eq!(c.between(Routine::Send, Routine::Recv), -40.0);
        assert!(!c.is_none());
    }

    /// A routine twice, no sample or a time out of range are refused.
    #[test]
    fn sampled_figures_are_checked() {
        let twice = vec![(Routine::Send, 1, 10.0), (Routine::Send, 2, 20.0)];
        assert!(
            OwnSampled::new(twice)
                .unwrap_err()
                .contains("MPI_Send twice")
        );
        assert!(OwnSampled::new(vec![(Routine::Send, 0, 10.0)]).is_err());
        assert!(OwnSampled::new(vec![(Routine::Send, 1, f64::NAN)]).is_err());
        assert!(OwnSampled::new(vec![(Routine::Send, 1, -1.0)]).is_err());
        assert!(OwnSampled::new(Vec::new()).unwrap().is_empty());
    }
}
