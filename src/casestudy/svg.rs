//! The paper's Fig. 6 as a stacked-bar chart: per configuration, the predicted time averaged
//! over ranks, split into computation, communication, sender and receiver synchronization.

use super::{Cell, Config};
use crate::report::svg::{Bar, breakdown};

/// Horizontal stacked bars, one per configuration, scaled to the longest predicted time.
pub fn chart(cells: &[(Config, Cell)]) -> String {
    let bars: Vec<Bar> = cells
        .iter()
        .map(|(c, cell)| Bar {
            label: format!("P={} n={} {}", c.ranks, c.n, super::column(c)),
            total_s: cell.predicted_s,
            parts: Some(cell.shares),
            note: String::new(),
        })
        .collect();
    breakdown(
        "Breakdown of predicted times (LogGPS), averaged over ranks",
        &bars,
    )
}
