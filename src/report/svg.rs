//! SVG charts: what every chart of the tool starts with, and the breakdown of predicted time
//! into the paper's four parts as stacked bars (its Fig. 6), for a trace's ranks, a sweep's
//! values or the case study's configurations.

use super::sweep::SweepReport;
use super::{Parts, Report};
use std::fmt::Write;

/// Ranks a trace's chart shows at most: beyond, the ones that end last.
pub const MAX_RANK_BARS: usize = 32;

impl Parts {
    fn four(&self) -> [f64; 4] {
        [
            self.computation_s,
            self.communication_s,
            self.sender_sync_s,
            self.receiver_sync_s,
        ]
    }
}

impl Report {
    /// The breakdown by rank (`predict --svg`): the average rank first, then every rank (or
    /// the [`MAX_RANK_BARS`] that end last, in rank order), each bar its predicted end.
    pub fn svg(&self) -> String {
        let mut shown: Vec<_> = self.ranks.iter().collect();
        if shown.len() > MAX_RANK_BARS {
            shown.sort_by(|a, b| b.parts.end_s.total_cmp(&a.parts.end_s));
            shown.truncate(MAX_RANK_BARS);
            shown.sort_by_key(|r| r.rank);
        }
        let which = match shown.len() < self.ranks.len() {
            true => format!(
                ", the {} of {} ranks that end last",
                shown.len(),
                self.ranks.len()
            ),
            false => String::new(),
        };
        let mut bars = vec![Bar {
            label: format!("average of {} ranks", self.ranks.len()),
            total_s: self.average.end_s,
            parts: Some(self.average.four()),
            note: format!(" (the run: {:.6} s)", self.predicted_s),
        }];
        bars.extend(shown.iter().map(|r| Bar {
            label: format!("rank {}", r.rank),
            total_s: r.parts.end_s,
            parts: Some(r.parts.four()),
            note: String::new(),
        }));
        let title = format!(
            "Predicted time by rank ({}): {}{which}",
            self.model, self.trace
        );
        breakdown(&title, &bars)
    }
}

impl SweepReport {
    /// The breakdown by value (`predict --sweep … --svg`): each bar the predicted runtime,
    /// split as the average rank's time is; a value that failed says so.
    pub fn svg(&self) -> String {
        let bars: Vec<Bar> = self
            .points
            .iter()
            .map(|p| Bar {
                label: format!("{}={}", self.parameter, p.value),
                total_s: p.predicted_s.unwrap_or(0.0),
                parts: p.average.as_ref().map(Parts::four),
                note: match &p.error {
                    Some(e) => format!("failed: {}", e.chars().take(80).collect::<String>()),
                    None => String::new(),
                },
            })
            .collect();
        let title = format!(
            "Predicted runtime by {} ({}), split as the average rank's: {}",
            self.parameter, self.model, self.trace
        );
        breakdown(&title, &bars)
    }
}

/// The opening of an SVG document: size, a white background and a centred title.
pub fn document(width: f64, height: f64, title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
        width / 2.0,
        escape(title)
    )
}

/// `s` with XML's special characters escaped (labels carry file names and algorithm names).
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The four parts of a predicted time, in the paper's order, with their colours.
pub const PARTS: [(&str, &str); 4] = [
    ("computation", "#9ecae1"),
    ("communication", "#3182bd"),
    ("sender sync", "#e6550d"),
    ("receiver sync", "#fdae6b"),
];

/// One bar: its label, the time it stands for (s), and the four parts it splits into, in any
/// unit (their shares split the bar). No parts: a bar that could not be predicted, `note`
/// said instead.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub label: String,
    pub total_s: f64,
    pub parts: Option<[f64; 4]>,
    pub note: String,
}

/// Horizontal stacked bars scaled to the longest, each labelled with its time; each segment's
/// share in its tooltip.
pub fn breakdown(title: &str, bars: &[Bar]) -> String {
    let bar_h = 18.0;
    let longest_label = bars.iter().map(|b| b.label.chars().count()).max();
    let left = (7.0 * longest_label.unwrap_or(0) as f64 + 16.0).max(80.0);
    let width = left + 700.0;
    let top = 50.0;
    let height = top + bars.len() as f64 * (bar_h + 6.0) + 30.0;
    let tmax = bars
        .iter()
        .filter(|b| b.parts.is_some())
        .map(|b| b.total_s)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut s = document(width, height, title);
    for (i, (name, color)) in PARTS.iter().enumerate() {
        let x = 20.0 + i as f64 * 130.0;
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="30" width="12" height="12" fill="{color}"/><text x="{}" y="40">{name}</text>"#,
            x + 16.0
        );
    }
    for (i, bar) in bars.iter().enumerate() {
        let y = top + i as f64 * (bar_h + 6.0);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
            left - 8.0,
            y + bar_h - 5.0,
            escape(&bar.label)
        );
        let mut x = left;
        if let Some(parts) = bar.parts {
            let sum: f64 = parts.iter().sum();
            let full = (width - left - 230.0) * bar.total_s / tmax;
            for (k, (name, color)) in PARTS.iter().enumerate() {
                let share = if sum > 0.0 { parts[k] / sum } else { 0.0 };
                let w = full * share;
                let _ = writeln!(
                    s,
                    r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{bar_h}" fill="{color}"><title>{name}: {:.1}%</title></rect>"#,
                    100.0 * share
                );
                x += w;
            }
        }
        let text = match bar.parts {
            Some(_) => format!("{:.6} s{}", bar.total_s, bar.note),
            None => bar.note.clone(),
        };
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{}">{}</text>"#,
            x + 4.0,
            y + bar_h - 5.0,
            escape(&text)
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widths(svg: &str) -> Vec<f64> {
        svg.lines()
            .filter(|l| l.contains("<title>"))
            .map(|l| {
                let w = l.split("width=\"").nth(1).unwrap();
                w[..w.find('"').unwrap()].parse().unwrap()
            })
            .collect()
    }

    /// Bars scale to the longest; segments split a bar by the parts' shares; a bar that failed
    /// has no segments and says why; labels are escaped.
    #[test]
    fn bars_split_by_shares_and_scale_to_the_longest() {
        let bars = [
            Bar {
                label: "a<b".into(),
                total_s: 2.0,
                parts: Some([1.0, 1.0, 0.0, 2.0]),
                note: String::new(),
            },
            Bar {
                label: "c".into(),
                total_s: 1.0,
                parts: Some([3.0, 1.0, 0.0, 0.0]),
                note: String::new(),
            },
            Bar {
                label: "d".into(),
                total_s: 0.0,
                parts: None,
                note: "deadlock".into(),
            },
        ];
        let svg = breakdown("t", &bars);
        let w = widths(&svg);
        assert_eq!(w.len(), 8, "{svg}");
        let full: f64 = w[..4].iter().sum();
        // The first bar: 1/4, 1/4, 0, 1/2 of its length; the second half as long, 3/4 and 1/4.
        for (got, want) in w[..4].iter().zip([0.25, 0.25, 0.0, 0.5]) {
            assert!((got - want * full).abs() < 0.2, "{w:?}");
        }
        for (got, want) in w[4..].iter().zip([0.375, 0.125, 0.0, 0.0]) {
            assert!((got - want * full).abs() < 0.2, "{w:?}");
        }
        assert!(
            svg.contains(">a&lt;b<") && svg.contains(">deadlock<"),
            "{svg}"
        );
        assert!(svg.contains("receiver sync: 50.0%"), "{svg}");
    }
}
