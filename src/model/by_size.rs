//! A set's parameters that are measured at several message sizes (the model's §13): `clean`,
//! the share of its cost a rendezvous message takes whose send the tracer flagged `clean`
//! (sent from a buffer unchanged since its last send from it), `clean_oneway`, the same for a
//! message with none the other way at once, and `bounce`, what a rendezvous
//! payload received into the buffer its rank last sent to the same peer costs more a byte
//! (`bounce_clean` where its send was `clean`); and a
//! modeled collective's own work, `copy` and `gamma`, ns a byte at the size copied or reduced
//! (the caches make a byte of a large copy dearer than one of a small).

/// The most sizes one holds (`calibrate` measures five).
pub const SIZE_POINTS: usize = 8;

/// Which parameter a [`BySize`] is: its name and what its values may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeParam {
    /// `clean`: shares, each > 0.
    Clean,
    /// `clean_oneway`: as `clean`, for a message with none the other way at once.
    CleanOneway,
    /// `bounce`: ns a byte, each ≥ 0.
    Bounce,
    /// `bounce_clean`: as `bounce`, for a message whose send the tracer flagged `clean`.
    BounceClean,
    /// `copy`: a collective's local copy, ns a byte, each ≥ 0.
    Copy,
    /// `gamma`: a collective's reduction, ns a byte, each ≥ 0.
    Gamma,
    /// `drained`: a receive of an eager message taken in while its rank waited, ns, each ≥ 0.
    Drained,
    /// `rendezvous_sender`: the share of a rendezvous payload's `T1` on its sender's CPU, each
    /// 0 to 1 (the model's §14).
    RendezvousSender,
}

impl SizeParam {
    pub fn name(self) -> &'static str {
        match self {
            SizeParam::Clean => "clean",
            SizeParam::CleanOneway => "clean_oneway",
            SizeParam::Bounce => "bounce",
            SizeParam::BounceClean => "bounce_clean",
            SizeParam::Copy => "copy",
            SizeParam::Gamma => "gamma",
            SizeParam::Drained => "drained",
            SizeParam::RendezvousSender => "rendezvous_sender",
        }
    }

    fn allows(self, v: f64) -> bool {
        v.is_finite()
            && match self {
                SizeParam::Clean | SizeParam::CleanOneway => v > 0.0,
                SizeParam::Bounce
                | SizeParam::BounceClean
                | SizeParam::Copy
                | SizeParam::Gamma
                | SizeParam::Drained => v >= 0.0,
                SizeParam::RendezvousSender => (0.0..=1.0).contains(&v),
            }
    }

    /// What its values must be, as an error says it.
    fn must(self) -> &'static str {
        match self {
            SizeParam::Clean => {
                "must be a finite number > 0 (the share of its cost a rendezvous message from \
                 an unchanged buffer takes)"
            }
            SizeParam::CleanOneway => {
                "must be a finite number > 0 (the share of its cost a rendezvous message from \
                 an unchanged buffer takes with none the other way at once)"
            }
            SizeParam::Bounce => {
                "must be a finite number ≥ 0 (ns per byte a bounced rendezvous payload costs \
                 its receiver more)"
            }
            SizeParam::BounceClean => {
                "must be a finite number ≥ 0 (ns per byte a bounced rendezvous payload sent \
                 from an unchanged buffer costs its receiver more)"
            }
            SizeParam::Copy => "must be a finite number ≥ 0 (ns per byte copied)",
            SizeParam::Gamma => "must be a finite number ≥ 0 (ns per byte reduced)",
            SizeParam::Drained => {
                "must be a finite number ≥ 0 (ns a receive of a message taken in while its rank \
                 waited)"
            }
            SizeParam::RendezvousSender => {
                "must lie in 0–1 (the share of a rendezvous payload's T1 that holds its sender's CPU: \
                 0 the receiver's alone, 1 both sides copying)"
            }
        }
    }

    /// What a value is called in the `K:V` form's error.
    fn unit(self) -> &'static str {
        match self {
            SizeParam::Clean | SizeParam::CleanOneway | SizeParam::RendezvousSender => "share",
            SizeParam::Bounce | SizeParam::BounceClean | SizeParam::Copy | SizeParam::Gamma => {
                "ns_per_byte"
            }
            SizeParam::Drained => "ns",
        }
    }
}

/// A parameter at sizes: `(k, value)` points, `k` rising, each value as [`SizeParam`] allows;
/// between two points the value is interpolated in `log k`, beyond the ends it is the end's.
/// One point is one value for every size (`--clean F`, `--bounce F`: at 0 bytes). Kept in
/// place, so that a parameter set stays `Copy`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BySize {
    param: SizeParam,
    n: u8,
    at: [(u64, f64); SIZE_POINTS],
}

impl BySize {
    /// One value for every size.
    pub fn one(param: SizeParam, v: f64) -> Result<BySize, String> {
        BySize::new(param, &[(0, v)])
    }

    /// `points` as a `param`: 1 to [`SIZE_POINTS`] of them, their sizes rising, each value as
    /// `param` allows.
    pub fn new(param: SizeParam, points: &[(u64, f64)]) -> Result<BySize, String> {
        let name = param.name();
        if points.is_empty() || points.len() > SIZE_POINTS {
            return Err(format!(
                "{name} takes 1 to {SIZE_POINTS} sizes, found {}",
                points.len()
            ));
        }
        if let Some(w) = points.windows(2).find(|w| w[1].0 <= w[0].0) {
            return Err(format!(
                "{name}'s sizes must rise: {} B after {} B",
                w[1].0, w[0].0
            ));
        }
        if let Some(&(k, f)) = points.iter().find(|(_, f)| !param.allows(*f)) {
            let at = match points.len() {
                1 => String::new(),
                _ => format!(" at {k} B"),
            };
            return Err(format!("{name} = {f}{at} {}", param.must()));
        }
        let mut at = [(0, 0.0); SIZE_POINTS];
        at[..points.len()].copy_from_slice(points);
        Ok(BySize {
            param,
            n: points.len() as u8,
            at,
        })
    }

    /// Whether every value is 0 (a `bounce` that costs nothing).
    pub fn is_zero(&self) -> bool {
        self.points().iter().all(|p| p.1 == 0.0)
    }

    /// Every value times `f` (≥ 0: a what-if's `--scale`, a derivative's step).
    pub fn scaled(&self, f: f64) -> BySize {
        let mut b = *self;
        for p in &mut b.at[..b.n as usize] {
            p.1 *= f;
        }
        b
    }

    /// What `k` bytes cost at the rate at `k` (a `copy`'s or `gamma`'s ns).
    pub fn cost(&self, k: u64) -> f64 {
        k as f64 * self.at(k as f64)
    }

    /// Its value where one number stands for it: the one for every size, else its smallest
    /// size's (what `sensitivity` varies: the whole in proportion, [`BySize::scaled`]).
    pub fn first(&self) -> f64 {
        self.at[0].1
    }

    /// Which parameter it is.
    pub fn param(&self) -> SizeParam {
        self.param
    }

    /// Its points, sizes rising.
    pub fn points(&self) -> &[(u64, f64)] {
        &self.at[..self.n as usize]
    }

    /// The value at `k` bytes, the nearest end's beyond the points. Between two points a
    /// share or `bounce` is interpolated in `log k`; a `copy` or `gamma` is the rate at which
    /// the time, `k` times the rate, is interpolated in `k` (a work's fixed cost and its cost a
    /// byte both hold between the sizes timed: a line through 8 B at 20 ns and 1 KiB at 31 ns
    /// costs 256 B 23 ns, where the rates' mean in `log k` would cost it 2.3 times that).
    pub fn at(&self, k: f64) -> f64 {
        let p = self.points();
        let after = p.partition_point(|&(x, _)| (x as f64) < k);
        match after {
            0 => p[0].1,
            i if i == p.len() => p[i - 1].1,
            i => {
                let ((a, fa), (b, fb)) = (p[i - 1], p[i]);
                let (a, b) = (a as f64, b as f64);
                if matches!(self.param, SizeParam::Copy | SizeParam::Gamma) {
                    let t = (k - a) / (b - a);
                    return (a * fa + t.clamp(0.0, 1.0) * (b * fb - a * fa)) / k;
                }
                let (a, b) = (a.max(1.0).ln(), b.ln());
                let t = (k.ln() - a) / (b - a);
                fa + t.clamp(0.0, 1.0) * (fb - fa)
            }
        }
    }

    /// The value for sizes `lo < k ≤ hi` (a band's): at their middle in `log k` (`hi`
    /// unbounded: at `2·lo`).
    pub fn over(&self, lo: u64, hi: u64) -> f64 {
        let lo = (lo as f64 + 1.0).max(1.0);
        let hi = match hi {
            u64::MAX => 2.0 * lo,
            h => (h as f64).max(lo),
        };
        self.at((lo * hi).sqrt())
    }

    /// As a parameter file and the text form write it: `F` where it is one value for every
    /// size, else `K:F,K:F,…`.
    pub fn text(&self) -> String {
        match self.points() {
            [(0, f)] => format!("{f}"),
            p => (p.iter().map(|(k, f)| format!("{k}:{f}")))
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// What [`BySize::text`] writes.
    pub fn parse(param: SizeParam, s: &str) -> Result<BySize, String> {
        let (name, unit) = (param.name(), param.unit());
        let bad = || format!("expected {name}=F or {name}=K:F,K:F,… (bytes:{unit}), found `{s}`");
        if !s.contains(':') {
            return BySize::one(param, s.trim().parse().map_err(|_| bad())?);
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
        BySize::new(param, &points)
    }
}

impl BySize {
    /// A set's `param` in a parameter file's `table`: one value (`clean = 0.49`), or a value at
    /// each size measured (`clean = [[4096, 0.64], [16384, 0.49]]`, sizes rising); None where
    /// the table has none.
    pub(super) fn of_table(
        param: SizeParam,
        table: &toml::Table,
    ) -> Result<Option<BySize>, String> {
        let (name, unit) = (param.name(), param.unit());
        let Some(v) = table.get(name) else {
            return Ok(None);
        };
        let bad = || {
            format!(
                "parameter {name} must be a number or a list of [bytes, {unit}] pairs, found {v}"
            )
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
        BySize::new(param, &points).map(Some)
    }

    /// Its line in a parameter file, as [`BySize::of_table`] reads it.
    pub fn toml(&self) -> String {
        let name = self.param.name();
        match self.points() {
            [(0, f)] => format!("{name} = {f:?}\n"),
            p => {
                let each: Vec<String> = p.iter().map(|(k, f)| format!("[{k}, {f:?}]")).collect();
                format!("{name} = [{}]\n", each.join(", "))
            }
        }
    }

    /// Its entries in a parameter listing: its name where it is one value for every size,
    /// else `NAME@K` a size.
    pub fn named(&self) -> impl Iterator<Item = (String, f64)> + '_ {
        let name = self.param.name();
        (self.points().iter()).map(move |&(k, v)| match (k, self.n) {
            (0, 1) => (name.to_string(), v),
            _ => (format!("{name}@{k}"), v),
        })
    }
}

impl std::fmt::Display for BySize {
    /// Shares to 3 places, ns a byte to 4.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let prec = match self.param {
            SizeParam::Clean | SizeParam::CleanOneway | SizeParam::RendezvousSender => 3,
            SizeParam::Bounce | SizeParam::BounceClean | SizeParam::Copy | SizeParam::Gamma => 4,
            SizeParam::Drained => 1,
        };
        match self.points() {
            [(0, x)] => write!(f, "{x:.prec$}"),
            p => {
                let each: Vec<String> = (p.iter())
                    .map(|(k, x)| format!("{x:.prec$} at {k} B"))
                    .collect();
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
        let clean = SizeParam::Clean;
        let c = BySize::new(clean, &[(4096, 0.64), (16384, 0.48), (262144, 0.5)]).unwrap();
        assert!((c.at(8192.0) - 0.56).abs() < 1e-12);
        assert_eq!(c.at(1000.0), 0.64);
        assert_eq!(c.at(1e7), 0.5);
        assert_eq!(c.at(16384.0), 0.48);
        assert!((c.over(4096, 16384) - 0.56).abs() < 1e-4);
        assert_eq!(c.over(262144, u64::MAX), 0.5);
        assert_eq!(BySize::one(clean, 0.49).unwrap().at(123.0), 0.49);
        assert_eq!(BySize::parse(clean, &c.text()).unwrap(), c);
        assert_eq!(c.text(), "4096:0.64,16384:0.48,262144:0.5");
        assert_eq!(BySize::parse(clean, "0.49").unwrap().text(), "0.49");
        assert!(
            BySize::new(clean, &[(16384, 0.5), (4096, 0.6)])
                .unwrap_err()
                .contains("clean's sizes must rise")
        );
        assert!(
            BySize::one(clean, 0.0)
                .unwrap_err()
                .contains("must be a finite number > 0")
        );
        assert!(
            BySize::parse(clean, "4096:x")
                .unwrap_err()
                .contains("expected clean=F")
        );
    }

    /// `copy` and `gamma` by size: their time interpolated in `k`. By hand: 8 B at 2.5 ns/B
    /// (20 ns) and 1,024 B at 0.03 (30.72 ns): 256 B costs 20 + 10.72 · 248 / 1016 = 22.6166 ns,
    /// 0.088346 ns/B; 4 B half of 8 B's 20 ns (the first point's rate), 2,048 B the last's
    /// rate. `bounce` between the same points stays in `log k`.
    #[test]
    fn copies_and_reductions_interpolate_their_time() {
        for param in [SizeParam::Copy, SizeParam::Gamma] {
            let c = BySize::new(param, &[(8, 2.5), (1024, 0.03)]).unwrap();
            let by_hand = 20.0 + 10.72 * 248.0 / 1016.0;
            assert!((c.cost(256) - by_hand).abs() < 1e-9, "{}", c.cost(256));
            assert!((c.at(256.0) - by_hand / 256.0).abs() < 1e-12);
            assert_eq!(c.cost(4), 10.0);
            assert!((c.cost(2048) - 61.44).abs() < 1e-9);
            assert!((c.cost(1024) - 30.72).abs() < 1e-9);
        }
        let b = BySize::new(SizeParam::Bounce, &[(8, 2.5), (1024, 0.03)]).unwrap();
        assert!(
            (b.at(90.50966799187808) - 1.265).abs() < 1e-9,
            "halfway in log k"
        );
    }

    /// `bounce` by size (ns a byte, 0 allowed): 0 at 4,096 B and 0.046 at 16,384 B give 0.023
    /// at 8,192 B (halfway in log k); its file line, text and listing read back; a negative
    /// value refused naming it.
    #[test]
    fn bounce_rates_between_the_sizes_measured() {
        let bounce = SizeParam::Bounce;
        let b = BySize::new(bounce, &[(4096, 0.0), (16384, 0.046)]).unwrap();
        assert!((b.at(8192.0) - 0.023).abs() < 1e-12);
        assert_eq!(b.at(100.0), 0.0);
        assert_eq!(b.toml(), "bounce = [[4096, 0.0], [16384, 0.046]]\n");
        let table: toml::Table = toml::from_str(&b.toml()).unwrap();
        assert_eq!(BySize::of_table(bounce, &table).unwrap(), Some(b));
        assert_eq!(BySize::parse(bounce, &b.text()).unwrap(), b);
        let named: Vec<(String, f64)> = b.named().collect();
        assert_eq!(named[1], ("bounce@16384".to_string(), 0.046));
        let one: Vec<(String, f64)> = BySize::one(bounce, 0.03).unwrap().named().collect();
        assert_eq!(one, [("bounce".to_string(), 0.03)]);
        assert_eq!(format!("{b}"), "0.0000 at 4096 B, 0.0460 at 16384 B");
        let e = BySize::parse(bounce, "4096:-0.01").unwrap_err();
        assert!(
            e.contains("bounce = -0.01 must be a finite number ≥ 0"),
            "{e}"
        );
    }
}
