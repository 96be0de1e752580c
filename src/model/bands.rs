//! Parameters in bands of message size (the model's §10): each band its own `o, L, Os, Or, G`,
//! the paper's eight parameters being the two-band case.

#![allow(non_snake_case)] // the paper's parameter names

use super::Params;

/// The most bands a set may have: a machine's protocols are a handful.
pub const MAX_BANDS: usize = 8;

/// The parameters of the message sizes `lo < k ≤ hi` (`lo` the band before's `hi`, 0 for the
/// first, which also holds `k = 0`): times in ns, per-byte terms in ns/byte.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Band {
    /// The largest size in the band; `u64::MAX` for the last.
    pub hi: u64,
    pub o: f64,
    pub L: f64,
    pub Os: f64,
    pub Or: f64,
    pub G: f64,
    /// The part of the send's overhead after the message has left, ns (the model's §13; 0: the
    /// paper's send, its overhead wholly before the transfer).
    pub Od: f64,
    /// The part of the receive's overhead a receive posted before its message arrives has
    /// done by then, ns (the model's §13; 0: the paper's receive).
    pub Op: f64,
}

/// The names of a band's parameters, in [`Band::get`] order: the paper's five, then the
/// overheads' split around the message (the model's §13), listed only where a set has them
/// ([`Bands::names`]).
pub const BAND_NAMES: [&str; 7] = ["o", "L", "Os", "Or", "G", "Od", "Op"];

/// How many of [`BAND_NAMES`] are the paper's.
const PAPER_NAMES: usize = 5;

impl Band {
    /// `T1 + T2 + T3 − Od − Op` of a `k`-byte message in this band: what a one-way eager
    /// transfer to a receive posted early costs.
    fn one_way(&self, k: u64) -> f64 {
        2.0 * self.o + self.L + k as f64 * (self.Os + self.G + self.Or) - self.Od - self.Op
    }

    /// The `i`-th parameter of [`BAND_NAMES`].
    pub fn get(&self, i: usize) -> f64 {
        [self.o, self.L, self.Os, self.Or, self.G, self.Od, self.Op][i]
    }

    fn get_mut(&mut self, i: usize) -> &mut f64 {
        [
            &mut self.o,
            &mut self.L,
            &mut self.Os,
            &mut self.Or,
            &mut self.G,
            &mut self.Od,
            &mut self.Op,
        ][i]
    }

    /// Whether the band splits an overhead around its message (`Od` or `Op` not 0).
    pub fn split(&self) -> bool {
        self.Od != 0.0 || self.Op != 0.0
    }
}

/// One to [`MAX_BANDS`] bands covering every size, their `hi` rising, the last's `u64::MAX`
/// (in place, so that a parameter set stays `Copy`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bands {
    len: u8,
    list: [Band; MAX_BANDS],
}

impl Bands {
    /// `list` as bands: between 1 and [`MAX_BANDS`] of them, their `hi` rising, the last's
    /// `u64::MAX`.
    pub fn new(list: &[Band]) -> Result<Bands, String> {
        if list.is_empty() || list.len() > MAX_BANDS {
            return Err(format!(
                "expected 1 to {MAX_BANDS} bands, found {}",
                list.len()
            ));
        }
        for (j, w) in list.windows(2).enumerate() {
            if w[1].hi <= w[0].hi {
                return Err(format!(
                    "band {} ends at {} bytes, not above band {}'s {}: bands must rise",
                    j + 2,
                    w[1].hi,
                    j + 1,
                    w[0].hi
                ));
            }
        }
        if list[list.len() - 1].hi != u64::MAX {
            return Err("the last band must have no end (it covers every larger size)".into());
        }
        let mut b = Bands {
            len: list.len() as u8,
            list: [Band::default(); MAX_BANDS],
        };
        b.list[..list.len()].copy_from_slice(list);
        Ok(b)
    }

    /// The paper's eight parameters as their two bands (the model's §10): `k ≤ s` with `Gs`,
    /// `k > s` with `Gl` and `L + s·(Gs − Gl)`, so that `T2` is the same line as the paper's.
    /// `s = u64::MAX`: one band.
    pub fn of_paper(p: &Params) -> Bands {
        let first = Band {
            hi: p.s,
            o: p.o,
            L: p.L,
            Os: p.Os,
            Or: p.Or,
            G: p.Gs,
            ..Band::default()
        };
        let second = Band {
            hi: u64::MAX,
            L: p.L + p.s as f64 * (p.Gs - p.Gl),
            G: p.Gl,
            ..first
        };
        match p.s {
            u64::MAX => Bands::new(&[first]),
            _ => Bands::new(&[first, second]),
        }
        .expect("two rising bands")
    }

    pub fn as_slice(&self) -> &[Band] {
        &self.list[..self.len as usize]
    }

    /// Whether some band splits an overhead around its message (the model's §13).
    pub fn split(&self) -> bool {
        self.as_slice().iter().any(Band::split)
    }

    /// The parameters a band of this set has, of [`BAND_NAMES`]: `Od` and `Op` only where
    /// some band has them, so that a set without them reads and prints as before.
    pub fn names(&self) -> &'static [&'static str] {
        match self.split() {
            true => &BAND_NAMES,
            false => &BAND_NAMES[..PAPER_NAMES],
        }
    }

    /// The band a `k`-byte message is in.
    #[inline(always)]
    pub fn of(&self, k: u64) -> &Band {
        let list = self.as_slice();
        list.iter()
            .find(|b| k <= b.hi)
            .unwrap_or(&list[list.len() - 1])
    }

    /// The first band: the control messages' (they carry no payload).
    #[inline(always)]
    pub fn first(&self) -> &Band {
        &self.list[0]
    }

    /// `(lo, band)` of each band, split at `S` where `S` falls inside one (both halves keep its
    /// parameters): the bands as the model's §10 lists them, `S` an edge.
    pub fn split_at(&self, S: u64) -> Vec<(u64, Band)> {
        let mut out = Vec::with_capacity(self.len as usize + 1);
        let mut lo = 0;
        for &b in self.as_slice() {
            if lo < S && S < b.hi {
                out.push((lo, Band { hi: S, ..b }));
                lo = S;
            }
            out.push((lo, b));
            lo = b.hi;
        }
        out
    }

    /// What makes the set invalid (the model's §10, §13), naming the band and the term: a negative
    /// `o`, `L`, `Os`, `Or`, `Od` or `Op`, an `Od` above the send's overhead `T1` or an `Op`
    /// above the receive's `T3` (at the band's smallest size, where they are least), a one-way
    /// transfer `T1 + T2 + T3 − Od − Op` below 0 at either end of a band, or a last band whose
    /// transfers get cheaper with size (`Os + Or + G < 0`).
    pub fn invalid(&self) -> Option<String> {
        let mut lo = 0;
        for (j, b) in self.as_slice().iter().enumerate() {
            let band = format!("band {} ({}–{} B)", j + 1, lo, end(b.hi));
            for i in [0, 1, 2, 3, 5, 6] {
                let v = b.get(i);
                if v.is_nan() || v < 0.0 {
                    return Some(format!("{band}: {} = {v} must be ≥ 0", BAND_NAMES[i]));
                }
            }
            if !b.G.is_finite() {
                return Some(format!("{band}: G = {} must be a finite number", b.G));
            }
            let first = if j == 0 { 0 } else { lo + 1 };
            let (t1, t3) = (b.o + first as f64 * b.Os, b.o + first as f64 * b.Or);
            if b.Od > t1 || b.Op > t3 {
                let (name, v, t, of) = match b.Od > t1 {
                    true => ("Od", b.Od, t1, "T1 = o + k·Os, the send's overhead"),
                    false => ("Op", b.Op, t3, "T3 = o + k·Or, the receive's overhead"),
                };
                return Some(format!(
                    "{band}: {name} = {v} is more than {of} ({t} at {first} B): it is a part of it"
                ));
            }
            let ends = match b.hi {
                u64::MAX => vec![first],
                hi => vec![first, hi],
            };
            for k in ends {
                if b.one_way(k) < 0.0 {
                    return Some(format!(
                        "{band}: T1 + T2 + T3 − Od − Op = {} at {k} B is negative",
                        b.one_way(k)
                    ));
                }
            }
            if b.hi == u64::MAX && b.Os + b.Or + b.G < 0.0 {
                return Some(format!(
                    "{band}: Os + Or + G = {} < 0: messages would get cheaper with size",
                    b.Os + b.Or + b.G
                ));
            }
            lo = b.hi;
        }
        None
    }

    /// Sets parameter `name` (of [`BAND_NAMES`]) to `v` in every band.
    pub fn set(&mut self, name: &str, v: f64) -> Result<(), String> {
        let i = index(name)?;
        let n = self.len as usize;
        self.list[..n].iter_mut().for_each(|b| *b.get_mut(i) = v);
        Ok(())
    }

    /// Sets parameter `name` (of [`BAND_NAMES`]) to `v` in band `j` (from 0).
    pub fn set_in(&mut self, j: usize, name: &str, v: f64) -> Result<(), String> {
        let i = index(name)?;
        let band = self.list[..self.len as usize]
            .get_mut(j)
            .ok_or_else(|| format!("the set has no band {}", j + 1))?;
        *band.get_mut(i) = v;
        Ok(())
    }

    /// Multiplies parameter `name` (of [`BAND_NAMES`]) by `f` in every band.
    pub fn scale(&mut self, name: &str, f: f64) -> Result<(), String> {
        let i = index(name)?;
        let n = self.len as usize;
        self.list[..n].iter_mut().for_each(|b| *b.get_mut(i) *= f);
        Ok(())
    }
}

impl std::fmt::Display for Bands {
    /// `0–256 B: o=300.0 L=200.0 Os=0.1000 Or=0.1000 G=0.3000; 256–∞ B: …`: for people, ns to
    /// a tenth and ns per byte to four decimals (files and traces keep every digit); `Od=`,
    /// `Op=` after them where the set has them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut lo = 0;
        let split = self.split();
        for (j, b) in self.as_slice().iter().enumerate() {
            let sep = if j > 0 { "; " } else { "" };
            write!(
                f,
                "{sep}{lo}–{} B: o={:.1} L={:.1} Os={:.4} Or={:.4} G={:.4}",
                end(b.hi),
                b.o,
                b.L,
                b.Os,
                b.Or,
                b.G
            )?;
            if split {
                write!(f, " Od={:.1} Op={:.1}", b.Od, b.Op)?;
            }
            lo = b.hi;
        }
        Ok(())
    }
}

/// A band's end as the report prints it.
pub fn end(hi: u64) -> String {
    match hi {
        u64::MAX => "∞".into(),
        hi => hi.to_string(),
    }
}

fn index(name: &str) -> Result<usize, String> {
    BAND_NAMES.iter().position(|&n| n == name).ok_or_else(|| {
        format!(
            "expected a band parameter among {}, found `{name}`",
            BAND_NAMES.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn band(hi: u64, o: f64, L: f64, Os: f64, Or: f64, G: f64) -> Band {
        Band {
            hi,
            o,
            L,
            Os,
            Or,
            G,
            ..Band::default()
        }
    }

    /// Myrinet's eight parameters (Table 5) as two bands: `T2` of a 20 000-byte message by the
    /// paper's `s·Gs + (k − s)·Gl + L` = 8191·15.48 + 11 809·(−0.74) + 1160 = 119 218.02.
    #[test]
    fn the_paper_form_is_two_bands() {
        let p = Params::preset("myrinet").unwrap();
        let b = Bands::of_paper(&p);
        assert_eq!(b.as_slice().len(), 2);
        let t2 = |k: u64| b.of(k).L + k as f64 * b.of(k).G;
        assert!((t2(20_000) - 119_218.02).abs() < 1e-6, "{}", t2(20_000));
        assert!((t2(8191) - (8191.0 * 15.48 + 1160.0)).abs() < 1e-6);
        assert_eq!(b.of(8191).G, 15.48);
        assert_eq!(b.of(8192).G, -0.74);
        assert_eq!(b.of(0).hi, 8191);
        // Split at S = 16383: three bands as listed, the two last alike but their ends.
        let listed = b.split_at(p.S);
        let ends: Vec<(u64, u64)> = listed.iter().map(|(lo, b)| (*lo, b.hi)).collect();
        assert_eq!(ends, [(0, 8191), (8191, 16383), (16383, u64::MAX)]);
        assert_eq!(listed[1].1.G, listed[2].1.G);
        assert_eq!(b.split_at(8191).len(), 2, "S on an edge splits nothing");
        assert!(b.invalid().is_none());
    }

    /// Each kind of invalid set is refused, naming the band and the term.
    #[test]
    fn the_validity_rule() {
        let good = [
            band(256, 200.0, 100.0, 0.1, 0.1, 0.2),
            band(u64::MAX, 900.0, 50.0, 0.05, 0.05, -0.05),
        ];
        assert!(Bands::new(&good).unwrap().invalid().is_none());
        let refused = |j: usize, f: &dyn Fn(&mut Band)| {
            let mut l = good;
            f(&mut l[j]);
            Bands::new(&l).unwrap().invalid().expect("refused")
        };
        let m = refused(0, &|b| b.L = -1.0);
        assert!(m.starts_with("band 1 (0–256 B): L = -1"), "{m}");
        let m = refused(1, &|b| b.o = -1.0);
        assert!(m.starts_with("band 2 (256–∞ B): o = -1"), "{m}");
        assert!(refused(0, &|b| b.Os = -0.1).contains("Os = -0.1"));
        assert!(refused(1, &|b| b.Or = f64::NAN).contains("Or = NaN"));
        // The one-way cost at the band's top: 400 + 100 + 256·(0.1 + 0.1 − 3) < 0.
        let m = refused(0, &|b| b.G = -3.0);
        assert!(m.contains("T1 + T2 + T3") && m.contains("at 256 B"), "{m}");
        // The last band getting cheaper with size.
        let m = refused(1, &|b| b.G = -0.2);
        assert!(m.contains("band 2") && m.contains("Os + Or + G"), "{m}");
        // Malformed lists.
        assert!(Bands::new(&[]).is_err());
        assert!(
            Bands::new(&[good[1], good[0]])
                .unwrap_err()
                .contains("rise")
        );
        assert!(Bands::new(&good[..1]).unwrap_err().contains("no end"));
        assert!(Bands::new(&[good[1]; MAX_BANDS + 1]).is_err());
    }

    #[test]
    fn set_and_scale_every_band() {
        let mut b = Bands::of_paper(&Params::preset("myrinet").unwrap());
        b.scale("L", 2.0).unwrap();
        assert_eq!(b.first().L, 2320.0);
        b.set("o", 100.0).unwrap();
        assert!(b.as_slice().iter().all(|x| x.o == 100.0));
        assert!(b.set("Gs", 1.0).unwrap_err().contains("o, L, Os, Or, G"));
    }
}
