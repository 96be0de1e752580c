//! `gamma`, what reducing one byte costs (the model's §10): the library's own reduction
//! (`MPI_Reduce_local`, `MPI_SUM` on doubles) timed over the vector's size, its time a byte at
//! each size (the model's §15: a vector that has left a cache level costs more a byte); and
//! `copy`, `memcpy` timed alike.

use crate::model::{BySize, SizeParam};

/// Vector sizes timed, bytes: from one double (a call's fixed cost) and one that fits the
/// first-level cache to one that does not fit the second, as a reducing collective's steps
/// span.
pub const SIZES: [u64; 7] = [8, 1024, 4096, 16384, 65536, 262_144, 1_048_576];

/// The reduction's measured medians and the line fitted to them.
#[derive(Clone, Debug, PartialEq)]
pub struct Reduction {
    /// `(bytes, median ns)` per size.
    pub points: Vec<(u64, f64)>,
    /// The call's fixed cost, ns (not a model parameter: a collective's steps carry `o`).
    pub intercept_ns: f64,
    /// ns per byte reduced, ≥ 0.
    pub gamma: f64,
}

impl Reduction {
    /// The line `t = a + gamma·k` fitted to `points` by least squares on relative errors, so
    /// that small vectors weigh as much as large ones; `gamma` constrained to be ≥ 0 (a line
    /// through the mean when the data fall). None with fewer than two distinct sizes.
    pub fn fit(points: Vec<(u64, f64)>) -> Option<Reduction> {
        let w = |t: f64| 1.0 / (t * t).max(1.0);
        let (mut sw, mut sk, mut st, mut skk, mut skt) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for &(k, t) in &points {
            let (k, wi) = (k as f64, w(t));
            (sw, sk, st) = (sw + wi, sk + wi * k, st + wi * t);
            (skk, skt) = (skk + wi * k * k, skt + wi * k * t);
        }
        let det = sw * skk - sk * sk;
        if points.len() < 2 || det <= 1e-12 * sw * skk {
            return None;
        }
        let gamma = ((sw * skt - sk * st) / det).max(0.0);
        let intercept_ns = (st - gamma * sk) / sw;
        Some(Reduction {
            points,
            intercept_ns,
            gamma,
        })
    }

    /// Its medians as the model's `param` by size: each median over its bytes (ns a byte, the
    /// call's fixed cost in it), at each size timed; None where one is not a positive time.
    pub fn by_size(&self, param: SizeParam) -> Option<BySize> {
        let mut rates: Vec<(u64, f64)> = (self.points.iter())
            .filter(|p| p.0 > 0)
            .map(|&(k, t)| (k, t / k as f64))
            .collect();
        rates.sort_by_key(|p| p.0);
        rates.dedup_by_key(|p| p.0);
        let fine = rates.iter().all(|p| p.1.is_finite() && p.1 > 0.0);
        fine.then(|| BySize::new(param, &rates).ok())?
    }

    /// `R ns/B at K B, … (WHAT: its time a byte at each size; the line through them S ns/B and I
    /// ns a call)`, as `calibrate` prints a line.
    pub fn described(&self, what: &str) -> String {
        let rates = match self.by_size(SizeParam::Gamma) {
            Some(b) => format!("{b} ns/B"),
            None => format!("{:.4} ns/B", self.gamma),
        };
        format!(
            "{rates} ({what}: its time a byte at each size, the model's at the size copied or \
             reduced; the line through them {:.4} ns/B and {:.0} ns a call)",
            self.gamma, self.intercept_ns
        )
    }

    /// The fitted time of a `k`-byte reduction, ns.
    pub fn model(&self, k: u64) -> f64 {
        self.intercept_ns + self.gamma * k as f64
    }
}

/// The `reduce K MEDIAN_NS …` lines of the round-trip program's output (its `--reduce`).
pub fn parse(text: &str) -> Vec<(u64, f64)> {
    text.lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["reduce", k, median, ..] => Some((k.parse().ok()?, median.parse().ok()?)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exact line gives back its slope and intercept.
    #[test]
    fn a_line_gives_back_its_slope() {
        let points = SIZES.iter().map(|&k| (k, 40.0 + 0.03 * k as f64)).collect();
        let r = Reduction::fit(points).unwrap();
        assert!((r.gamma - 0.03).abs() < 1e-12, "{r:?}");
        assert!((r.intercept_ns - 40.0).abs() < 1e-6, "{r:?}");
        assert!((r.model(2048) - (40.0 + 0.03 * 2048.0)).abs() < 1e-6);
    }

    /// ±5% noise moves the slope by a few percent, not by the large sizes' absolute noise.
    #[test]
    fn noise_moves_the_slope_little() {
        let noise = [1.05, 0.95, 1.04, 0.96, 1.05, 0.95];
        let points = SIZES
            .iter()
            .zip(noise)
            .map(|(&k, f)| (k, (50.0 + 0.025 * k as f64) * f))
            .collect();
        let r = Reduction::fit(points).unwrap();
        assert!((r.gamma / 0.025 - 1.0).abs() < 0.06, "{r:?}");
    }

    /// Times that fall with size (a clock's noise on a free reduction) give gamma 0, never a
    /// negative cost.
    #[test]
    fn falling_times_give_zero() {
        let points = vec![(1024, 100.0), (4096, 90.0), (16384, 80.0)];
        let r = Reduction::fit(points).unwrap();
        assert_eq!(r.gamma, 0.0);
        assert!((r.intercept_ns - 90.0).abs() < 11.0, "{r:?}");
        assert_eq!(Reduction::fit(vec![(1024, 100.0)]), None);
        assert_eq!(Reduction::fit(vec![(1024, 100.0), (1024, 90.0)]), None);
    }

    /// The program's lines, the others ignored.
    #[test]
    fn parses_the_programs_lines() {
        let text = "rtt 0 0 371 250 4001 50 291\npoll 39 39 11\npost 30 28 11\nreduce 1024 50 40 4001\n\
                    reduce 4096 110 90 4001\nreduce x 1 1 1\n";
        assert_eq!(parse(text), vec![(1024, 50.0), (4096, 110.0)]);
    }
}
