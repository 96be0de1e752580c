//! The calls by routine and message size, predicted against measured (`predict --calls`):
//! where a prediction's error comes from. Each call's predicted duration (its return less its
//! call in the replay) and its measured one (in the trace) are summed per routine and size
//! class over every rank; a size class is a power of two (1024–2047 B), a call's size its
//! message's, a Wait's or Test's the largest message it completes.

use crate::replay::Step;
use crate::trace::{Routine, Shape, Trace};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Mutex;

/// One routine and size class.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallRow {
    pub routine: String,
    /// The size class's smallest and largest sizes, bytes.
    pub bytes_from: u64,
    pub bytes_to: u64,
    /// Calls over every rank.
    pub calls: u64,
    pub measured_s: f64,
    pub predicted_s: f64,
    /// Predicted over measured (None where the calls measured no time).
    pub ratio: Option<f64>,
}

/// A size's class: 0 for none, `k` for `2^(k−1) … 2^k − 1` bytes.
fn class(bytes: u64) -> u32 {
    64 - bytes.leading_zeros()
}

/// The sizes of class `k`, both ends included.
fn class_bytes(k: u32) -> (u64, u64) {
    match k {
        0 => (0, 0),
        64 => (1 << 63, u64::MAX),
        k => (1 << (k - 1), (1 << k) - 1),
    }
}

/// Calls, measured ns and predicted ns of one routine and size class.
type Sums = HashMap<(Routine, u32), (u64, f64, f64)>;

/// The sums being made: [`Calls::observe`] is the replay's observer.
pub struct Calls<'a> {
    trace: &'a Trace,
    sums: Mutex<Sums>,
}

impl<'a> Calls<'a> {
    pub fn new(trace: &'a Trace) -> Calls<'a> {
        Calls {
            trace,
            sums: Mutex::new(HashMap::new()),
        }
    }

    /// Adds a batch of the replay's steps (`MPI_Init` and `MPI_Finalize` left out: the runtime
    /// runs from the one's return to the other's call).
    pub fn observe(&self, steps: &[Step]) {
        let mut local = Sums::new();
        for st in steps {
            let (r, i) = (st.rank as usize, st.event as usize);
            let ev = self.trace.rank(r);
            let routine = ev.routine(i);
            if matches!(
                routine,
                Routine::Init | Routine::InitThread | Routine::Finalize
            ) {
                continue;
            }
            let bytes = match routine.shape() {
                Shape::Complete => (ev.completed_origins(i, 0, None))
                    .map(|(_, origin)| ev.bytes(origin as usize))
                    .max()
                    .unwrap_or(0),
                _ => ev.bytes(i),
            };
            let measured = self.trace.corrected_ns(r, ev.t_return(i))
                - self.trace.corrected_ns(r, ev.t_call(i));
            let sums = local.entry((routine, class(bytes))).or_default();
            sums.0 += 1;
            sums.1 += measured.max(0.0);
            sums.2 += st.return_ns - st.call_ns;
        }
        let mut all = self.sums.lock().expect("no observer panicked");
        for (key, (n, m, p)) in local {
            let sums = all.entry(key).or_default();
            *sums = (sums.0 + n, sums.1 + m, sums.2 + p);
        }
    }

    /// The rows, the most measured time first.
    pub fn rows(self) -> Vec<CallRow> {
        let sums = self.sums.into_inner().expect("no observer panicked");
        let mut rows: Vec<CallRow> = (sums.into_iter())
            .map(|((routine, k), (calls, m, p))| {
                let (bytes_from, bytes_to) = class_bytes(k);
                CallRow {
                    routine: routine.mpi_name().to_string(),
                    bytes_from,
                    bytes_to,
                    calls,
                    measured_s: m * 1e-9,
                    predicted_s: p * 1e-9,
                    ratio: (m > 0.0).then(|| p / m),
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            (b.measured_s.total_cmp(&a.measured_s))
                .then_with(|| a.routine.cmp(&b.routine))
                .then(a.bytes_from.cmp(&b.bytes_from))
        });
        rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_fall_in_powers_of_two() {
        assert_eq!((class(0), class(1), class(2), class(3)), (0, 1, 2, 2));
        assert_eq!((class(1023), class(1024), class(2047)), (10, 11, 11));
        assert_eq!(class_bytes(11), (1024, 2047));
        assert_eq!(class_bytes(0), (0, 0));
        assert_eq!(class_bytes(class(u64::MAX)), (1 << 63, u64::MAX));
        for k in [1u64, 5, 4096, 65_535, 1 << 40] {
            let (a, b) = class_bytes(class(k));
            assert!(a <= k && k <= b, "{k}: {a}–{b}");
        }
    }
}
