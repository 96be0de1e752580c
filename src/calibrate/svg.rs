//! The paper's Figs. 4–5 for this machine: measured and modeled RTT over message size, for
//! both imbalances, on log–log axes, with the bands' edges and `S` marked.

use super::Calibration;
use super::fit::model_rtt;
use std::fmt::Write;

const W: f64 = 900.0;
const H: f64 = 560.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

/// The chart as an SVG document.
pub fn chart(c: &Calibration) -> String {
    let p = &c.fit.params;
    // Size 0 is drawn at 0.5 bytes so that it has a place on the log axis.
    let xk = |k: u64| (k as f64).max(0.5);
    let kmax = c.samples.iter().map(|x| x.k).max().unwrap_or(1).max(2) as f64;
    let (ymin, ymax) = c.samples.iter().fold((f64::MAX, 0.0f64), |(lo, hi), x| {
        (lo.min(x.rtt_ns), hi.max(x.rtt_ns))
    });
    let (lx0, lx1) = (0.5f64.log10(), kmax.log10());
    let (ly0, ly1) = ((ymin * 0.8).max(1.0).log10(), (ymax * 1.25).log10());
    let px = |k: f64| LEFT + (k.log10() - lx0) / (lx1 - lx0) * (W - LEFT - RIGHT);
    let py = |t: f64| H - BOTTOM - (t.log10() - ly0) / (ly1 - ly0) * (H - TOP - BOTTOM);
    let mut s = crate::report::svg::document(
        W,
        H,
        "Round-trip time: measured (dots) and LogGPS model (lines)",
    );
    // Axes with decade ticks.
    let _ = writeln!(
        s,
        r#"<g stroke="black"><line x1="{LEFT}" y1="{}" x2="{}" y2="{}"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{}"/></g>"#,
        H - BOTTOM,
        W - RIGHT,
        H - BOTTOM,
        H - BOTTOM
    );
    for e in 0..=(kmax.log2().ceil() as u32) {
        if e % 2 == 1 {
            continue;
        }
        let k = 2f64.powi(e as i32);
        let x = px(k);
        let label = if k >= 1048576.0 {
            format!("{}M", k / 1048576.0)
        } else if k >= 1024.0 {
            format!("{}K", k / 1024.0)
        } else {
            format!("{k}")
        };
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{}" x2="{x:.1}" y2="{TOP}" stroke="#eee"/><text x="{x:.1}" y="{}" text-anchor="middle">{label}</text>"##,
            H - BOTTOM,
            H - BOTTOM + 16.0
        );
    }
    for e in (ly0.floor() as i32)..=(ly1.ceil() as i32) {
        let t = 10f64.powi(e);
        if t.log10() < ly0 || t.log10() > ly1 {
            continue;
        }
        let y = py(t);
        let label = if t >= 1e6 {
            format!("{} ms", t / 1e6)
        } else if t >= 1e3 {
            format!("{} µs", t / 1e3)
        } else {
            format!("{t} ns")
        };
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#eee"/><text x="{}" y="{:.1}" text-anchor="end">{label}</text>"##,
            W - RIGHT,
            LEFT - 6.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">message size k (bytes)</text>"#,
        (LEFT + W - RIGHT) / 2.0,
        H - 18.0
    );
    // The bands' edges, S among them.
    let edges: Vec<u64> = p.as_bands().as_slice().iter().map(|b| b.hi).collect();
    for (i, &k) in edges.iter().enumerate() {
        if (k as f64) < kmax {
            let x = px(xk(k) + 0.5);
            let (name, dash) = match k == p.S {
                true => ("S", "5,4"),
                false => ("band", "2,3"),
            };
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{}" stroke="#888" stroke-dasharray="{dash}"/><text x="{:.1}" y="{}" fill="#555">{name} ≤ {k}</text>"##,
                H - BOTTOM,
                x + 4.0,
                TOP + 14.0 + 16.0 * (i % 2) as f64
            );
        }
    }
    let ws: Vec<f64> = {
        let mut v: Vec<f64> = c.samples.iter().map(|x| x.w_ns).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    };
    let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"];
    for (i, &w) in ws.iter().enumerate() {
        let color = colors[i % colors.len()];
        // The model, sampled densely on the log axis and at both sides of each threshold.
        let mut ks: Vec<u64> = (0..=400)
            .map(|j| (0.5 * (2.0 * kmax).powf(j as f64 / 400.0)) as u64)
            .collect();
        ks.extend(edges.iter().flat_map(|&e| [e, e.saturating_add(1)]));
        ks.sort_unstable();
        ks.dedup();
        let mut path = String::new();
        for k in ks.into_iter().filter(|&k| (k as f64) <= kmax) {
            let _ = write!(
                path,
                "{}{:.1},{:.1} ",
                if path.is_empty() { "M" } else { "L" },
                px(xk(k)),
                py(model_rtt(p, k, w))
            );
        }
        let _ = writeln!(
            s,
            r#"<path d="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>"#
        );
        for x in c.samples.iter().filter(|x| x.w_ns == w) {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{color}"/>"#,
                px(xk(x.k)),
                py(x.rtt_ns)
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" fill="{color}">w = {} µs</text>"#,
            LEFT + 12.0,
            TOP + 16.0 * (i as f64 + 1.0),
            w / 1e3
        );
    }
    for x in &c.fit.outliers {
        let _ = writeln!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="none" stroke="black"><title>outlier: k = {}, w = {}</title></circle>"#,
            px(xk(x.k)),
            py(x.rtt_ns),
            x.k,
            x.w_ns
        );
    }
    s.push_str("</svg>\n");
    s
}
