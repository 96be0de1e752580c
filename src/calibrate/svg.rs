//! The paper's Figs. 4–5 for this machine: measured and modeled RTT over message size, for
//! both imbalances, on log–log axes, with the bands' edges and `S` marked.

use super::Calibration;
use super::fit::{Sample, model_rtt};
use crate::model::Params;
use std::fmt::Write;

const W: f64 = 900.0;
const H: f64 = 560.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

/// The log–log frame: sizes (bytes) across, round trips (ns) up.
struct Frame {
    kmax: f64,
    lx: (f64, f64),
    ly: (f64, f64),
}

impl Frame {
    /// Where size `k` is drawn (size 0 at 0.5 bytes, to have a place on the log axis).
    fn px(&self, k: f64) -> f64 {
        LEFT + (k.max(0.5).log10() - self.lx.0) / (self.lx.1 - self.lx.0) * (W - LEFT - RIGHT)
    }

    fn py(&self, t: f64) -> f64 {
        H - BOTTOM - (t.log10() - self.ly.0) / (self.ly.1 - self.ly.0) * (H - TOP - BOTTOM)
    }
}

/// A series drawn: its legend, measured points, the model's `(k, w)` to draw through, and the
/// set drawn (at the `S` it is drawn with).
type Series<'a> = (String, Vec<&'a Sample>, Vec<(u64, f64)>, Params);

/// The chart as an SVG document.
pub fn chart(c: &Calibration) -> String {
    let p = &c.fit.params;
    let kmax = c.samples.iter().map(|x| x.k).max().unwrap_or(1).max(2) as f64;
    let other = c.other.iter().flat_map(|o| &o.samples);
    let above = c.eager_above.iter().flat_map(|e| &e.samples);
    let (ymin, ymax) = c
        .samples
        .iter()
        .chain(other)
        .chain(above)
        .fold((f64::MAX, 0.0f64), |(lo, hi), x| {
            (lo.min(x.rtt_ns), hi.max(x.rtt_ns))
        });
    let f = Frame {
        kmax,
        lx: (0.5f64.log10(), kmax.log10()),
        ly: ((ymin * 0.8).max(1.0).log10(), (ymax * 1.25).log10()),
    };
    let mut s = crate::report::svg::document(
        W,
        H,
        "Round-trip time: measured (dots) and LogGPS model (lines)",
    );
    axes(&mut s, &f);
    // The bands' edges, S among them.
    let edges: Vec<u64> = (p.as_bands().split_at(p.S).iter())
        .map(|(_, b)| b.hi)
        .collect();
    for (i, &k) in edges.iter().enumerate() {
        if (k as f64) < kmax {
            let x = f.px((k as f64).max(0.5) + 0.5);
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
    let colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];
    for (i, (label, points, curve, p)) in series(c, &edges, kmax).iter().enumerate() {
        let color = colors[i % colors.len()];
        let mut path = String::new();
        for &(k, w) in curve.iter().filter(|(k, _)| (*k as f64) <= kmax) {
            let _ = write!(
                path,
                "{}{:.1},{:.1} ",
                if path.is_empty() { "M" } else { "L" },
                f.px(k as f64),
                f.py(model_rtt(p, k, w))
            );
        }
        let _ = writeln!(
            s,
            r#"<path d="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>"#
        );
        for x in points {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{color}"/>"#,
                f.px(x.k as f64),
                f.py(x.rtt_ns)
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" fill="{color}">{label}</text>"#,
            LEFT + 12.0,
            TOP + 16.0 * (i as f64 + 1.0),
        );
    }
    for x in &c.fit.outliers {
        let _ = writeln!(
            s,
            r#"<circle cx="{:.1}" cy="{:.1}" r="4" fill="none" stroke="black"><title>outlier: k = {}, w = {}</title></circle>"#,
            f.px(x.k as f64),
            f.py(x.rtt_ns),
            x.k,
            x.w_ns
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The axes with their ticks (every other power of two across, decades up) and the sizes' label.
fn axes(s: &mut String, f: &Frame) {
    let _ = writeln!(
        s,
        r#"<g stroke="black"><line x1="{LEFT}" y1="{}" x2="{}" y2="{}"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{}"/></g>"#,
        H - BOTTOM,
        W - RIGHT,
        H - BOTTOM,
        H - BOTTOM
    );
    for e in (0..=(f.kmax.log2().ceil() as u32)).step_by(2) {
        let k = 2f64.powi(e as i32);
        let x = f.px(k);
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
    for e in (f.ly.0.floor() as i32)..=(f.ly.1.ceil() as i32) {
        let t = 10f64.powi(e);
        if t.log10() < f.ly.0 || t.log10() > f.ly.1 {
            continue;
        }
        let y = f.py(t);
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
}

/// The series: w = 0 and a fixed W, each with the model drawn densely (on the log axis and at
/// both sides of each band edge of `edges`); the round trips at the imbalance that hides each
/// size's transfer (its own w per size), the model at each; the second set's w = 0.
fn series<'a>(c: &'a Calibration, edges: &[u64], kmax: f64) -> Vec<Series<'a>> {
    let p = &c.fit.params;
    let hiding = |x: &Sample| c.calls.iter().any(|t| t.k == x.k && t.w_ns == x.w_ns);
    let mut fixed: Vec<f64> = c
        .samples
        .iter()
        .filter(|x| !hiding(x))
        .map(|x| x.w_ns)
        .collect();
    fixed.sort_by(f64::total_cmp);
    fixed.dedup();
    let mut series: Vec<Series> = Vec::new();
    for &w in &fixed {
        let mut ks: Vec<u64> = (0..=400)
            .map(|j| (0.5 * (2.0 * kmax).powf(j as f64 / 400.0)) as u64)
            .collect();
        ks.extend(edges.iter().flat_map(|&e| [e, e.saturating_add(1)]));
        ks.sort_unstable();
        ks.dedup();
        let curve = ks.into_iter().map(|k| (k, w)).collect();
        let points = c
            .samples
            .iter()
            .filter(|x| x.w_ns == w && !hiding(x))
            .collect();
        series.push((format!("w = {} µs", w / 1e3), points, curve, *p));
    }
    let hidden: Vec<&Sample> = c.samples.iter().filter(|x| hiding(x)).collect();
    if !hidden.is_empty() {
        let curve = hidden.iter().map(|x| (x.k, x.w_ns)).collect();
        series.push((
            "w hiding the transfer (1.5 × RTT at w = 0)".into(),
            hidden,
            curve,
            *p,
        ));
    }
    // The sizes above S measured eager under a launcher at a higher limit (the model's §10,
    // "both protocols"): w = 0, the set drawn at that limit, as a trace recorded there is.
    if let Some(e) = &c.eager_above {
        let points: Vec<&Sample> = (e.samples.iter()).filter(|x| x.w_ns == 0.0).collect();
        let curve = points.iter().map(|x| (x.k, 0.0)).collect();
        series.push((
            format!(
                "eager above S under `{}` (S = {} B): w = 0",
                crate::report::svg::escape(&e.mpirun),
                e.limit
            ),
            points,
            curve,
            Params { S: e.limit, ..*p },
        ));
    }
    // The second set (launches at another placement of the cores, the model's §12): w = 0.
    if let Some(o) = &c.other {
        let points: Vec<&Sample> = (o.samples.iter()).filter(|x| x.w_ns == 0.0).collect();
        let curve = points.iter().map(|x| (x.k, 0.0)).collect();
        let cores = o
            .fit
            .params
            .cores
            .map_or(String::new(), |v| format!(", cores {v:.0} ns"));
        series.push((
            format!("second set, another placement{cores}: w = 0"),
            points,
            curve,
            o.fit.params,
        ));
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::banded::BandedFit;
    use crate::calibrate::fit::Calls;
    use crate::model::{Bands, Params};

    /// The round trips at the hiding imbalance (each size its own `w`) are one series with one
    /// legend entry, beside `w = 0`; each band edge and `S` are marked.
    #[test]
    fn hiding_round_trips_are_one_series() {
        let paper = Params::preset("myrinet").unwrap();
        let p = Params::banded(Bands::of_paper(&paper), paper.S, None);
        let ks = [0u64, 1000, 10_000, 100_000];
        let mut samples = Vec::new();
        let mut calls = Vec::new();
        for k in ks {
            let rtt = model_rtt(&p, k, 0.0);
            samples.push(Sample {
                k,
                w_ns: 0.0,
                rtt_ns: rtt,
            });
            let w = 1.5 * rtt;
            samples.push(Sample {
                k,
                w_ns: w,
                rtt_ns: model_rtt(&p, k, w),
            });
            calls.push(Calls {
                k,
                w_ns: w,
                send_ns: 1.0,
                recv_ns: 1.0,
                isend_ns: None,
            });
        }
        let c = calibration(p, samples, calls);
        let svg = chart(&c);
        assert_eq!(svg.matches("<path").count(), 2, "{svg}");
        assert_eq!(svg.matches(">w = ").count(), 1, "{svg}");
        assert_eq!(svg.matches("w hiding the transfer").count(), 1, "{svg}");
        assert_eq!(svg.matches("<circle").count(), 8);
        assert!(svg.contains(&format!("S ≤ {}", paper.S)), "{svg}");
        assert!(svg.contains(&format!("band ≤ {}", paper.s)), "{svg}");
    }

    /// A calibration of set `p` with these round trips (the rest empty).
    fn calibration(p: Params, samples: Vec<Sample>, calls: Vec<Calls>) -> Calibration {
        Calibration {
            other: None,
            fit: BandedFit {
                params: p,
                rms_rel: 0.0,
                max_rel: 0.0,
                outliers: vec![],
            },
            samples,
            calls,
            jump: None,
            imbalance_ns: 0,
            reported_eager_limit: None,
            library: String::new(),
            launches: 1,
            launch_spread: 0.0,
            launch_within: 0.0,
            launch_speeds: [1.0, 1.0],
            line_ns: Vec::new(),
            poll_ns: 0.0,
            post_ns: 0.0,
            wait_ns: None,
            reduction: crate::calibrate::reduce::Reduction::fit(vec![(1, 1.0), (2, 2.0)]).unwrap(),
            progress_wait_ns: 0.0,
            progress_rtt_ns: 0.0,
            copy_aligned_ns: 0.0,
            copy_aliased_ns: 0.0,
            held: Vec::new(),
            alias: Vec::new(),
            drained: Vec::new(),
            held_set: None,
            copying: crate::calibrate::reduce::Reduction::fit(vec![(1, 1.0), (2, 2.0)]).unwrap(),
            allocs: Vec::new(),
            clock_ns: 0.0,
            oc_fit: None,
            eager_above: None,
            exchanges: None,
            bounce: Default::default(),
            interrupted: Vec::new(),
            detours: Vec::new(),
            again: Default::default(),
        }
    }

    /// A sweep under a launcher at a higher limit is its own series: its round trips above
    /// `S` at `w = 0`, the model drawn through them at its limit. Hand-costed (the model's §2,
    /// the Myrinet set, `S` = 16,383 B): a 20,000-byte message eager costs `T1` = 6550 +
    /// 6.86·20,000 = 143,750, `T2'` = 8191·15.48 + 11,809·(−0.74) + 1160 = 119,218.02 and `T3` =
    /// 6550 + 2.57·20,000 = 57,950 ns, its round trip twice their sum, 641,836.04 ns; by
    /// rendezvous at the set's `S` it costs more.
    #[test]
    fn the_raised_limits_sweep_is_drawn_at_its_limit() {
        let paper = Params::preset("myrinet").unwrap();
        let p = Params::banded(Bands::of_paper(&paper), paper.S, None);
        let at = Params { S: 32_768, ..p };
        assert!((model_rtt(&at, 20_000, 0.0) - 641_836.04).abs() < 1e-6);
        assert!(model_rtt(&p, 20_000, 0.0) > 641_836.04 + 1000.0);
        let sample = |k: u64, p: &Params| Sample {
            k,
            w_ns: 0.0,
            rtt_ns: model_rtt(p, k, 0.0),
        };
        let mut c = calibration(p, vec![sample(0, &p), sample(100_000, &p)], vec![]);
        c.eager_above = Some(crate::calibrate::EagerAbove {
            mpirun: "mpirun --mca limit <32768> & more".into(),
            limit: 32_768,
            samples: vec![sample(20_000, &at), sample(32_768, &at)],
            missed: 0,
            line_ns: vec![],
            reported: Some(32_768),
            exchanges: None,
            refits: vec![],
        });
        let svg = chart(&c);
        assert_eq!(svg.matches("<path").count(), 2, "{svg}");
        assert!(
            svg.contains(
                "eager above S under `mpirun --mca limit &lt;32768&gt; &amp; more` (S = 32768 B): w = 0"
            ),
            "{svg}"
        );
        assert_eq!(svg.matches("<circle").count(), 4, "{svg}");
        // The raised series' line starts on its first round trip: drawn at the raised limit.
        let path = svg.split("<path d=\"").nth(2).unwrap();
        let start = path.strip_prefix('M').unwrap().split(' ').next().unwrap();
        let circle = svg.split("<circle cx=\"").nth(3).unwrap();
        let (cx, rest) = circle.split_once("\" cy=\"").unwrap();
        let cy = rest.split('"').next().unwrap();
        assert_eq!(start, format!("{cx},{cy}"), "{svg}");
    }
}
