//! A set's `clean` (the model's §13): the share of its cost a rendezvous message takes whose
//! send the tracer flagged `clean` (sent from a buffer unchanged since its last send from it),
//! by message size.

/// The most sizes a `clean` holds (`calibrate` measures five).
pub const CLEAN_POINTS: usize = 8;

/// `clean` at sizes: `(k, share)` points, `k` rising, each share finite and > 0; between two
/// points the share is interpolated in `log k`, beyond the ends it is the end's. One point is
/// one share for every size (`--clean F`: at 0 bytes). Kept in place, so that a parameter set
/// stays `Copy`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clean {
    n: u8,
    at: [(u64, f64); CLEAN_POINTS],
}

impl Clean {
    /// One share for every size.
    pub fn one(share: f64) -> Result<Clean, String> {
        Clean::new(&[(0, share)])
    }

    /// `points` as a `clean`: 1 to [`CLEAN_POINTS`] of them, their sizes rising, each share
    /// finite and > 0.
    pub fn new(points: &[(u64, f64)]) -> Result<Clean, String> {
        if points.is_empty() || points.len() > CLEAN_POINTS {
            return Err(format!(
                "clean takes 1 to {CLEAN_POINTS} sizes, found {}",
                points.len()
            ));
        }
        if let Some(w) = points.windows(2).find(|w| w[1].0 <= w[0].0) {
            return Err(format!(
                "clean's sizes must rise: {} B after {} B",
                w[1].0, w[0].0
            ));
        }
        if let Some(&(k, f)) = points.iter().find(|(_, f)| !(f.is_finite() && *f > 0.0)) {
            let at = match points.len() {
                1 => String::new(),
                _ => format!(" at {k} B"),
            };
            return Err(format!(
                "clean = {f}{at} must be a finite number > 0 (the share of its cost a rendezvous \
                 message from an unchanged buffer takes)"
            ));
        }
        let mut at = [(0, 0.0); CLEAN_POINTS];
        at[..points.len()].copy_from_slice(points);
        Ok(Clean {
            n: points.len() as u8,
            at,
        })
    }

    /// Its points, sizes rising.
    pub fn points(&self) -> &[(u64, f64)] {
        &self.at[..self.n as usize]
    }

    /// The share at `k` bytes: interpolated in `log k` between the points around it, the
    /// nearest end's beyond them.
    pub fn at(&self, k: f64) -> f64 {
        let p = self.points();
        let after = p.partition_point(|&(x, _)| (x as f64) < k);
        match after {
            0 => p[0].1,
            i if i == p.len() => p[i - 1].1,
            i => {
                let ((a, fa), (b, fb)) = (p[i - 1], p[i]);
                let (a, b) = ((a as f64).max(1.0).ln(), (b as f64).ln());
                let t = (k.ln() - a) / (b - a);
                fa + t.clamp(0.0, 1.0) * (fb - fa)
            }
        }
    }

    /// The share for sizes `lo < k ≤ hi` (a band's): at their middle in `log k` (`hi`
    /// unbounded: at `2·lo`).
    pub fn over(&self, lo: u64, hi: u64) -> f64 {
        let lo = (lo as f64 + 1.0).max(1.0);
        let hi = match hi {
            u64::MAX => 2.0 * lo,
            h => (h as f64).max(lo),
        };
        self.at((lo * hi).sqrt())
    }

    /// As a parameter file and the text form write it: `F` where it is one share for every
    /// size, else `K:F,K:F,…`.
    pub fn text(&self) -> String {
        match self.points() {
            [(0, f)] => format!("{f}"),
            p => (p.iter().map(|(k, f)| format!("{k}:{f}")))
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// What [`Clean::text`] writes.
    pub fn parse(s: &str) -> Result<Clean, String> {
        let bad = || format!("expected clean=F or clean=K:F,K:F,… (bytes:share), found `{s}`");
        if !s.contains(':') {
            return Clean::one(s.trim().parse().map_err(|_| bad())?);
        }
        let points = s
            .split(',')
            .map(|p| {
                let (k, f) = p.split_once(':').ok_or_else(bad)?;
                Ok((
                    k.trim().parse().map_err(|_| bad())?,
                    f.trim().parse().map_err(|_| bad())?,
                ))
            })
            .collect::<Result<Vec<(u64, f64)>, String>>()?;
        Clean::new(&points)
    }
}

impl Clean {
    /// A set's `clean` in a parameter file's `table`: one share (`clean = 0.49`), or a share at
    /// each size measured (`clean = [[4096, 0.64], [16384, 0.49]]`, sizes rising); None where
    /// the table has none.
    pub(super) fn of_table(table: &toml::Table) -> Result<Option<Clean>, String> {
        let Some(v) = table.get("clean") else {
            return Ok(None);
        };
        let bad = || {
            format!("parameter clean must be a number or a list of [bytes, share] pairs, found {v}")
        };
        let number = |x: &toml::Value| match x {
            toml::Value::Float(f) => Some(*f),
            toml::Value::Integer(i) => Some(*i as f64),
            _ => None,
        };
        let points: Vec<(u64, f64)> = match v {
            toml::Value::Array(list) => (list.iter())
                .map(|p| match p.as_array().map(|a| a.as_slice()) {
                    Some([toml::Value::Integer(k), f]) if *k >= 0 => {
                        Ok((*k as u64, number(f).ok_or_else(bad)?))
                    }
                    _ => Err(bad()),
                })
                .collect::<Result<_, _>>()?,
            x => vec![(0, number(x).ok_or_else(bad)?)],
        };
        Clean::new(&points).map(Some)
    }

    /// Its line in a parameter file, as [`Clean::of_table`] reads it.
    pub(super) fn toml(&self) -> String {
        match self.points() {
            [(0, f)] => format!("clean = {f:?}\n"),
            p => {
                let each: Vec<String> = p.iter().map(|(k, f)| format!("[{k}, {f:?}]")).collect();
                format!("clean = [{}]\n", each.join(", "))
            }
        }
    }
}

impl std::fmt::Display for Clean {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.points() {
            [(0, x)] => write!(f, "{x:.3}"),
            p => {
                let each: Vec<String> = p.iter().map(|(k, x)| format!("{x:.3} at {k} B")).collect();
                write!(f, "{}", each.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Interpolated by hand: between 4,096 B at 0.64 and 16,384 B at 0.48, 8,192 B lies halfway
    /// in log k: 0.56; below the first and above the last, the ends'. A band (4,096, 16,384]
    /// takes its share at √(4,097 · 16,384) ≈ 8,193 B: 0.56 within 1e-4; an unbounded band
    /// from 262,144 at 524,290 B, beyond the last point. One share is every size's.
    #[test]
    fn shares_between_the_sizes_measured() {
        let c = Clean::new(&[(4096, 0.64), (16384, 0.48), (262144, 0.5)]).unwrap();
        assert!((c.at(8192.0) - 0.56).abs() < 1e-12);
        assert_eq!(c.at(1000.0), 0.64);
        assert_eq!(c.at(1e7), 0.5);
        assert_eq!(c.at(16384.0), 0.48);
        assert!((c.over(4096, 16384) - 0.56).abs() < 1e-4);
        assert_eq!(c.over(262144, u64::MAX), 0.5);
        assert_eq!(Clean::one(0.49).unwrap().at(123.0), 0.49);
        assert_eq!(Clean::parse(&c.text()).unwrap(), c);
        assert_eq!(c.text(), "4096:0.64,16384:0.48,262144:0.5");
        assert_eq!(Clean::parse("0.49").unwrap().text(), "0.49");
        assert!(
            Clean::new(&[(16384, 0.5), (4096, 0.6)])
                .unwrap_err()
                .contains("must rise")
        );
        assert!(
            Clean::one(0.0)
                .unwrap_err()
                .contains("must be a finite number > 0")
        );
        assert!(
            Clean::parse("4096:x")
                .unwrap_err()
                .contains("expected clean=F")
        );
    }
}
