//! Baselines of predictions for regression checks (`loggps-predict check`): a prediction's
//! runtime and synchronization share per trace, compared with a committed baseline.

use serde::{Deserialize, Serialize};

/// What a baseline pins for one trace.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub trace: String,
    pub predicted_s: f64,
    /// Sender plus receiver synchronization over the sum of the ranks' predicted times.
    pub sync_share: f64,
}

/// A baseline file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Baseline {
    pub version: u32,
    pub traces: Vec<Entry>,
}

/// One difference between a prediction and its baseline.
#[derive(Clone, Debug, PartialEq)]
pub struct Drift {
    pub trace: String,
    pub baseline: Option<Entry>,
    pub now: Entry,
    pub predicted_pct: f64,
    pub sync_points: f64,
}

/// The entries of `now` that drifted from `baseline` by more than `tolerance_pct` (relative, for
/// the runtime; percentage points, for the synchronization share), or that it lacks.
pub fn compare(baseline: &Baseline, now: &[Entry], tolerance_pct: f64) -> Vec<Drift> {
    now.iter()
        .filter_map(|e| {
            let b = baseline.traces.iter().find(|b| b.trace == e.trace);
            let (predicted_pct, sync_points) = match b {
                Some(b) => (
                    100.0 * (e.predicted_s - b.predicted_s) / b.predicted_s,
                    100.0 * (e.sync_share - b.sync_share),
                ),
                None => (f64::INFINITY, f64::INFINITY),
            };
            let drifted =
                !(predicted_pct.abs() <= tolerance_pct && sync_points.abs() <= tolerance_pct);
            drifted.then(|| Drift {
                trace: e.trace.clone(),
                baseline: b.cloned(),
                now: e.clone(),
                predicted_pct,
                sync_points,
            })
        })
        .collect()
}

/// The drift table users read in their CI logs.
pub fn drift_table(drifts: &[Drift]) -> String {
    let mut s = format!(
        "{:<48} {:>14} {:>14} {:>9} {:>10} {:>10} {:>9}\n",
        "trace", "baseline (s)", "now (s)", "Δ %", "sync base", "sync now", "Δ pts"
    );
    for d in drifts {
        match &d.baseline {
            Some(b) => s.push_str(&format!(
                "{:<48} {:>14.9} {:>14.9} {:>+9.4} {:>9.2}% {:>9.2}% {:>+9.4}\n",
                d.trace,
                b.predicted_s,
                d.now.predicted_s,
                d.predicted_pct,
                100.0 * b.sync_share,
                100.0 * d.now.sync_share,
                d.sync_points
            )),
            None => s.push_str(&format!(
                "{:<48} {:>14} {:>14.9} (not in the baseline)\n",
                d.trace, "—", d.now.predicted_s
            )),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_is_relative_for_runtime_and_points_for_share() {
        let e = |t: &str, p: f64, s: f64| Entry {
            trace: t.into(),
            predicted_s: p,
            sync_share: s,
        };
        let base = Baseline {
            version: 1,
            traces: vec![e("a", 1.0, 0.5), e("b", 2.0, 0.1)],
        };
        assert!(compare(&base, &[e("a", 1.0, 0.5), e("b", 2.0, 0.1)], 0.0).is_empty());
        let d = compare(
            &base,
            &[e("a", 1.02, 0.5), e("b", 2.0, 0.13), e("c", 1.0, 0.0)],
            1.0,
        );
        assert_eq!(
            d.iter().map(|d| d.trace.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert!((d[0].predicted_pct - 2.0).abs() < 1e-9);
        assert!((d[1].sync_points - 3.0).abs() < 1e-9);
        assert!(compare(&base, &[e("a", 1.005, 0.504)], 1.0).is_empty());
    }
}
