//! The paper's Fig. 6 as a stacked-bar chart: per configuration, the predicted time averaged
//! over ranks, split into computation, communication, sender and receiver synchronization.

use super::{Cell, Config};
use std::fmt::Write;

const PARTS: [(&str, &str); 4] = [
    ("computation", "#9ecae1"),
    ("communication", "#3182bd"),
    ("sender sync", "#e6550d"),
    ("receiver sync", "#fdae6b"),
];

/// Horizontal stacked bars, one per configuration, scaled to the longest predicted time.
pub fn chart(cells: &[(Config, Cell)]) -> String {
    let bar_h = 18.0;
    let left = 360.0;
    let width = 900.0;
    let top = 50.0;
    let height = top + (cells.len() as f64 + 1.0) * (bar_h + 6.0) + 30.0;
    let tmax = cells
        .iter()
        .map(|(_, c)| c.predicted_s)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut s = crate::report::svg::document(
        width,
        height,
        "Breakdown of predicted times (LogGPS), averaged over ranks",
    );
    for (i, (name, color)) in PARTS.iter().enumerate() {
        let x = left + i as f64 * 130.0;
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="30" width="12" height="12" fill="{color}"/><text x="{}" y="40">{name}</text>"#,
            x + 16.0
        );
    }
    for (i, (c, cell)) in cells.iter().enumerate() {
        let y = top + i as f64 * (bar_h + 6.0);
        let label = format!("P={} n={} {}", c.ranks, c.n, super::column(c));
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{label}</text>"#,
            left - 8.0,
            y + bar_h - 5.0
        );
        let full = (width - left - 90.0) * cell.predicted_s / tmax;
        let mut x = left;
        for (k, (name, color)) in PARTS.iter().enumerate() {
            let w = full * cell.shares[k];
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{bar_h}" fill="{color}"><title>{name}: {:.1}%</title></rect>"#,
                100.0 * cell.shares[k]
            );
            x += w;
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}">{:.3} s</text>"#,
            x + 4.0,
            y + bar_h - 5.0,
            cell.predicted_s
        );
    }
    s.push_str("</svg>\n");
    s
}
