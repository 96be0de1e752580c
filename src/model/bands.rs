//! Parameters in bands of message size (the model's §10): each band its own `o, L, Os, Or, G`,
//! the paper's eight parameters being the two-band case.

#![allow(non_snake_case)] // the paper's parameter names

use super::Params;

/// The most bands a set may have: a machine's protocols are a handful; twelve, and one for the
/// zero-byte messages alone (`hi = 0`), which a calibration may find cheaper than a byte.
pub const MAX_BANDS: usize = 13;

/// The most eager bands a set may have above its eager limit (the model's §10, "both
/// protocols"): measured at a higher limit, they cost eager messages there where `--S` moves
/// the limit up.
pub const MAX_EAGER_ABOVE: usize = 8;

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
    /// The part of the send's overhead after the message has left that grows with its size, ns
    /// a byte: `Od + Osd·k` in all (the model's §13; 0: `Od` alone). A library whose `MPI_Isend`
    /// returns in the same time at every size of the band while its blocking send grows with
    /// the size (Open MPI's shared memory above 256 B: its send waits for its fragment back).
    pub Osd: f64,
}

/// The names of a band's parameters, in [`Band::get`] order: the paper's five, then the
/// overheads' split around the message (the model's §13), `Od` and `Op` listed only where a set
/// has them, `Osd` only where a set has it too ([`Bands::names`]).
pub const BAND_NAMES: [&str; 8] = ["o", "L", "Os", "Or", "G", "Od", "Op", "Osd"];

/// How many of [`BAND_NAMES`] are the paper's.
const PAPER_NAMES: usize = 5;

/// How many of [`BAND_NAMES`] a set with `Od` and `Op` but no `Osd` lists.
const SPLIT_NAMES: usize = 7;

impl Band {
    /// `T1 + T2 + T3 − Od − Op` of a `k`-byte message in this band: what a one-way eager
    /// transfer to a receive posted early costs.
    fn one_way(&self, k: u64) -> f64 {
        2.0 * self.o + self.L + k as f64 * (self.Os + self.G + self.Or) - self.od(k) - self.Op
    }

    /// The part of a `k`-byte message's send overhead after it has left: `Od + Osd·k`.
    #[inline(always)]
    pub fn od(&self, k: u64) -> f64 {
        self.Od + k as f64 * self.Osd
    }

    /// The `i`-th parameter of [`BAND_NAMES`].
    pub fn get(&self, i: usize) -> f64 {
        [
            self.o, self.L, self.Os, self.Or, self.G, self.Od, self.Op, self.Osd,
        ][i]
    }

    pub(crate) fn get_mut(&mut self, i: usize) -> &mut f64 {
        [
            &mut self.o,
            &mut self.L,
            &mut self.Os,
            &mut self.Or,
            &mut self.G,
            &mut self.Od,
            &mut self.Op,
            &mut self.Osd,
        ][i]
    }

    /// Whether the band splits an overhead around its message (`Od`, `Op` or `Osd` not 0).
    pub fn split(&self) -> bool {
        self.Od != 0.0 || self.Op != 0.0 || self.Osd != 0.0
    }
}

/// One to [`MAX_BANDS`] bands covering every size, their `hi` rising, the last's `u64::MAX`
/// (in place, so that a parameter set stays `Copy`); and up to [`MAX_EAGER_ABOVE`] eager bands
/// above the eager limit the set was measured at (none: a message above it is costed with its
/// size's band whichever protocol it takes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bands {
    len: u8,
    list: [Band; MAX_BANDS],
    above_len: u8,
    /// Where the eager bands above begin (the set's measured `S`, exclusive); `u64::MAX` where
    /// there are none.
    above_lo: u64,
    above: [Band; MAX_EAGER_ABOVE],
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
            above_len: 0,
            above_lo: u64::MAX,
            above: [Band::default(); MAX_EAGER_ABOVE],
        };
        b.list[..list.len()].copy_from_slice(list);
        Ok(b)
    }

    /// These bands with `list` as the eager bands of the sizes `lo < k ≤ list's last hi` (the
    /// model's §10, "both protocols"): 1 to [`MAX_EAGER_ABOVE`] of them, their `hi` rising
    /// above `lo`, the last's finite (an eager limit was measured there). An empty `list`
    /// removes them.
    pub fn with_eager_above(mut self, lo: u64, list: &[Band]) -> Result<Bands, String> {
        if list.len() > MAX_EAGER_ABOVE {
            return Err(format!(
                "expected at most {MAX_EAGER_ABOVE} eager bands above S, found {}",
                list.len()
            ));
        }
        let mut prev = lo;
        for (j, b) in list.iter().enumerate() {
            if b.hi <= prev {
                return Err(format!(
                    "eager band {} above S ends at {} bytes, not above {prev}: they must rise from S = {lo}",
                    j + 1,
                    b.hi
                ));
            }
            prev = b.hi;
        }
        if prev == u64::MAX {
            return Err("the last eager band above S must have an end (`hi`: the larger eager limit it was measured at)".into());
        }
        self.above_len = list.len() as u8;
        self.above_lo = if list.is_empty() { u64::MAX } else { lo };
        self.above = [Band::default(); MAX_EAGER_ABOVE];
        self.above[..list.len()].copy_from_slice(list);
        Ok(self)
    }

    /// `(lo, bands)`: the eager bands above the set's measured eager limit `lo`, where it has
    /// them.
    pub fn eager_above(&self) -> Option<(u64, &[Band])> {
        (self.above_len > 0).then(|| (self.above_lo, &self.above[..self.above_len as usize]))
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
        self.as_slice().iter().chain(self.above()).any(Band::split)
    }

    fn above(&self) -> &[Band] {
        &self.above[..self.above_len as usize]
    }

    /// The parameters a band of this set has, of [`BAND_NAMES`]: `Od` and `Op` only where
    /// some band has them, `Osd` only where some band has it, so that a set without them reads
    /// and prints as before.
    pub fn names(&self) -> &'static [&'static str] {
        match (self.grows_od(), self.split()) {
            (true, _) => &BAND_NAMES,
            (false, true) => &BAND_NAMES[..SPLIT_NAMES],
            (false, false) => &BAND_NAMES[..PAPER_NAMES],
        }
    }

    /// Whether some band's `Od` grows with the size (`Osd` not 0).
    pub fn grows_od(&self) -> bool {
        self.as_slice()
            .iter()
            .chain(self.above())
            .any(|b| b.Osd != 0.0)
    }

    /// The band a `k`-byte message is in.
    #[inline(always)]
    pub fn of(&self, k: u64) -> &Band {
        let list = self.as_slice();
        list.iter()
            .find(|b| k <= b.hi)
            .unwrap_or(&list[list.len() - 1])
    }

    /// The band of a `k`-byte message under eager limit `S`: an eager message above the
    /// set's measured limit in its eager band there, where the set has one (the model's §10),
    /// else [`Bands::of`].
    #[inline(always)]
    pub fn at(&self, k: u64, S: u64) -> &Band {
        if k > self.above_lo
            && k <= S
            && let Some(b) = self.above().iter().find(|b| k <= b.hi)
        {
            return b;
        }
        self.of(k)
    }

    /// The first band: the control messages' (they carry no payload).
    #[inline(always)]
    pub fn first(&self) -> &Band {
        &self.list[0]
    }

    /// `(lo, band)` of each band, split at `S` where `S` falls inside one (both halves keep its
    /// parameters): the bands as the model's §10 lists them, `S` an edge; where `S` lies above
    /// the set's measured limit and the set has eager bands there, they take the sizes up to
    /// `S` (or their end), as [`Bands::at`] costs them.
    pub fn split_at(&self, S: u64) -> Vec<(u64, Band)> {
        let mut out = Vec::with_capacity(self.len as usize + self.above_len as usize + 2);
        let (from, to) = match self.above().last() {
            Some(last) if S > self.above_lo => (self.above_lo, S.min(last.hi)),
            _ => (u64::MAX, u64::MAX),
        };
        // Each piece clipped to the sizes its list costs: the main bands outside
        // `(from, to]`, the eager ones above inside.
        let mut push = |lo: u64, b: Band| {
            for (i, (a, z)) in [(lo, b.hi.min(from)), (lo.max(to), b.hi)]
                .into_iter()
                .enumerate()
            {
                // A first band of the zero-byte messages alone (`hi = 0`) holds the size 0.
                if a < z || (i == 0 && b.hi == 0) {
                    out.push((a, Band { hi: z, ..b }));
                }
            }
        };
        let mut lo = 0;
        for &b in self.as_slice() {
            if lo < S && S < b.hi {
                push(lo, Band { hi: S, ..b });
                lo = S;
            }
            push(lo, b);
            lo = b.hi;
        }
        let mut lo = self.above_lo;
        let mut above: Vec<(u64, Band)> = Vec::new();
        for &b in self.above() {
            if from < to && lo < to {
                above.push((
                    lo,
                    Band {
                        hi: b.hi.min(to),
                        ..b
                    },
                ));
            }
            lo = b.hi;
        }
        out.extend(above);
        out.sort_by_key(|(lo, _)| *lo);
        out
    }

    /// What makes the set invalid (the model's §10, §13), naming the band and the term: a negative
    /// `o`, `L`, `Os`, `Or`, `Od` or `Op`, an `Od` above the send's overhead `T1` or an `Op`
    /// above the receive's `T3` (at the band's smallest size, where they are least), a one-way
    /// transfer `T1 + T2 + T3 − Od − Op` below 0 at either end of a band, or a last band whose
    /// transfers get cheaper with size (`Os + Or + G < 0`). The eager bands above the measured
    /// limit are held to the same rule.
    pub fn invalid(&self) -> Option<String> {
        invalid_in(self.as_slice(), 0, "band").or_else(|| {
            let (lo, list) = self.eager_above()?;
            invalid_in(list, lo, "eager band above S")
        })
    }

    /// Sets parameter `name` (of [`BAND_NAMES`]) to `v` in every band. `Os` keeps each band's
    /// `Osd` its share of it (a part of `Os`: a what-if on the send's copy moves both).
    pub fn set(&mut self, name: &str, v: f64) -> Result<(), String> {
        let i = index(name)?;
        self.each_mut().for_each(|b| {
            if name == "Os" {
                b.Osd = if b.Os > 0.0 { b.Osd * v / b.Os } else { 0.0 };
            }
            *b.get_mut(i) = v
        });
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

    /// Multiplies parameter `name` (of [`BAND_NAMES`]) by `f` in every band; `Os` its `Osd` too
    /// (a part of it, as [`Bands::set`] keeps it).
    pub fn scale(&mut self, name: &str, f: f64) -> Result<(), String> {
        let i = index(name)?;
        self.each_mut().for_each(|b| {
            *b.get_mut(i) *= f;
            if name == "Os" {
                b.Osd *= f;
            }
        });
        Ok(())
    }

    /// Multiplies every parameter of the bands above `S` (their messages go by rendezvous) by
    /// `f`; the eager bands above the limit are not (their messages are eager). A band holding
    /// sizes on both sides of `S` is an error: `S` must be an edge.
    #[allow(non_snake_case)] // the paper's name
    pub fn scale_above(&mut self, S: u64, f: f64) -> Result<(), String> {
        let mut lo = 0;
        for (j, b) in self.as_slice().iter().enumerate() {
            if lo < S && S < b.hi {
                return Err(format!(
                    "band {} ({}) holds sizes on both sides of S = {S}: give the set a band \
                     edge at S (calibrate's sets have one)",
                    j + 1,
                    sizes(lo, b.hi)
                ));
            }
            lo = b.hi;
        }
        // No band across S: those holding sizes above it lie wholly above it.
        self.scale_holding_above(S, |_, _| f);
        Ok(())
    }

    /// Every parameter of each band holding sizes above `S` multiplied by `f(lo, hi)` of its
    /// sizes `lo < k ≤ hi` (a band across `S` too: what it costs above `S`,
    /// [`super::Params::clean_set`]).
    pub fn scale_holding_above(&mut self, S: u64, f: impl Fn(u64, u64) -> f64) {
        let mut lo = 0;
        for b in self.list[..self.len as usize].iter_mut() {
            if b.hi > S {
                let x = f(lo, b.hi);
                (0..BAND_NAMES.len()).for_each(|i| *b.get_mut(i) *= x);
            }
            lo = b.hi;
        }
    }

    /// Every band, the eager ones above the measured limit too.
    fn each_mut(&mut self) -> impl Iterator<Item = &mut Band> {
        let (n, m) = (self.len as usize, self.above_len as usize);
        self.list[..n].iter_mut().chain(&mut self.above[..m])
    }
}

/// [`Bands::invalid`] of `list`, its first band starting above `lo` (0: at 0), each named
/// `what` and its number.
fn invalid_in(list: &[Band], lo: u64, what: &str) -> Option<String> {
    let mut lo = lo;
    for (j, b) in list.iter().enumerate() {
        let band = format!("{what} {} ({})", j + 1, sizes(lo, b.hi));
        for i in [0, 1, 2, 3, 5, 6, 7] {
            let v = b.get(i);
            if v.is_nan() || v < 0.0 {
                return Some(format!("{band}: {} = {v} must be ≥ 0", BAND_NAMES[i]));
            }
        }
        if !b.G.is_finite() {
            return Some(format!("{band}: G = {} must be a finite number", b.G));
        }
        let first = if lo == 0 { 0 } else { lo + 1 };
        let (t1, t3) = (b.o + first as f64 * b.Os, b.o + first as f64 * b.Or);
        if b.od(first) > t1 || b.Op > t3 {
            let (name, v, t, of) = match b.od(first) > t1 {
                true => ("Od", b.od(first), t1, "T1 = o + k·Os, the send's overhead"),
                false => ("Op", b.Op, t3, "T3 = o + k·Or, the receive's overhead"),
            };
            return Some(format!(
                "{band}: {name} = {v} is more than {of} ({t} at {first} B): it is a part of it"
            ));
        }
        if b.Osd > b.Os {
            return Some(format!(
                "{band}: Osd = {} is more than Os = {}: the part of the send's overhead a byte \
                 after the message has left is a part of Os",
                b.Osd, b.Os
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

impl std::fmt::Display for Bands {
    /// `0–256 B: o=300.0 L=200.0 Os=0.1000 Or=0.1000 G=0.3000; 256–∞ B: …`: for people, ns to
    /// a tenth and ns per byte to four decimals (files and traces keep every digit); `Od=`,
    /// `Op=` after them where the set has them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut lo = 0;
        let (split, grows) = (self.split(), self.grows_od());
        for (j, b) in self.as_slice().iter().enumerate() {
            let sep = if j > 0 { "; " } else { "" };
            write!(
                f,
                "{sep}{}: o={:.1} L={:.1} Os={:.4} Or={:.4} G={:.4}",
                sizes(lo, b.hi),
                b.o,
                b.L,
                b.Os,
                b.Or,
                b.G
            )?;
            if split {
                write!(f, " Od={:.1} Op={:.1}", b.Od, b.Op)?;
            }
            if grows {
                write!(f, " Osd={:.4}", b.Osd)?;
            }
            lo = b.hi;
        }
        if let Some((lo, list)) = self.eager_above() {
            write!(f, "; eager above {lo} B:")?;
            let mut lo = lo;
            for b in list {
                write!(
                    f,
                    " {lo}–{} B: o={:.1} L={:.1} Os={:.4} Or={:.4} G={:.4}",
                    b.hi, b.o, b.L, b.Os, b.Or, b.G
                )?;
                if split {
                    write!(f, " Od={:.1} Op={:.1}", b.Od, b.Op)?;
                }
                if grows {
                    write!(f, " Osd={:.4}", b.Osd)?;
                }
                lo = b.hi;
            }
        }
        Ok(())
    }
}

/// A band's end as the report prints it.
fn end(hi: u64) -> String {
    match hi {
        u64::MAX => "∞".into(),
        hi => hi.to_string(),
    }
}

/// The sizes of the band after `lo` up to `hi`, in words: `256–4040 B`, `370728–∞ B`, and `0 B`
/// for a first band of the zero-byte messages alone.
pub fn sizes(lo: u64, hi: u64) -> String {
    match hi {
        0 => "0 B".into(),
        hi => format!("{lo}–{} B", end(hi)),
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

    /// `Osd` is a part of `Os`: setting or scaling `Os` keeps its share (a what-if on the send's
    /// copy, `--Os`, `--scale Os=F`, stays valid), and more than `Os` is refused naming both.
    #[test]
    fn os_carries_its_part_osd() {
        let b = Band {
            Osd: 0.3,
            ..band(u64::MAX, 100.0, 0.0, 0.4, 0.1, 0.0)
        };
        let mut x = Bands::new(&[b]).unwrap();
        x.scale("Os", 0.5).unwrap();
        assert_eq!((x.of(0).Os, x.of(0).Osd), (0.2, 0.15));
        assert_eq!(x.invalid(), None);
        x.set("Os", 0.1).unwrap();
        assert!((x.of(0).Osd - 0.075).abs() < 1e-12, "{:?}", x.of(0));
        x.set("Osd", 0.2).unwrap();
        let why = x.invalid().unwrap();
        assert!(why.contains("Osd = 0.2 is more than Os = 0.1"), "{why}");
    }

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

    /// A set's bands measured at S = 4040 (eager, then rendezvous) and two eager bands above
    /// it, to 16384 and 65480 B.
    fn both_protocols() -> ([Band; 2], Band, Band) {
        let main = [
            band(4040, 300.0, 50.0, 0.1, 0.1, 0.2),
            band(u64::MAX, 1700.0, 0.0, 0.15, 0.0, 0.05),
        ];
        let a = band(16384, 400.0, 10.0, 0.06, 0.07, 0.0);
        let b = band(65480, 500.0, 20.0, 0.05, 0.05, 0.01);
        (main, a, b)
    }

    /// A set measured at S = 4040 with eager bands above it to 65480 (the model's §10, "both
    /// protocols"): a message takes them only where it is eager (`k ≤ S`) and above 4040, up to
    /// 65480; elsewhere its size's band, as without them. The list split at an `S` shows the
    /// bands each size is costed with.
    #[test]
    fn eager_bands_above_cost_eager_messages_beyond_the_measured_limit() {
        let (main, a, b) = both_protocols();
        let bands = Bands::new(&main).unwrap();
        let both = bands.with_eager_above(4040, &[a, b]).unwrap();
        assert_eq!(both.eager_above(), Some((4040, &[a, b][..])));
        for (k, S, want) in [
            (2000, 4040, main[0]),
            (10_000, 4040, main[1]),
            (10_000, 65536, a),
            (16_384, 65536, a),
            (16_385, 65536, b),
            (65_480, 65536, b),
            (65_481, 65536, main[1]),
            (10_000, 16384, a),
            (30_000, 16384, main[1]),
            (2000, 1024, main[0]),
        ] {
            assert_eq!(*both.at(k, S), want, "k = {k}, S = {S}");
            // Without eager bands above, the size's band whatever S.
            assert_eq!(bands.at(k, S), bands.of(k));
        }
        let ends = |S: u64| -> Vec<(u64, u64, f64)> {
            (both.split_at(S).iter())
                .map(|(lo, x)| (*lo, x.hi, x.o))
                .collect()
        };
        assert_eq!(ends(4040), [(0, 4040, 300.0), (4040, u64::MAX, 1700.0)]);
        assert_eq!(
            ends(10_000),
            [
                (0, 4040, 300.0),
                (4040, 10_000, 400.0),
                (10_000, u64::MAX, 1700.0)
            ]
        );
        assert_eq!(
            ends(65536),
            [
                (0, 4040, 300.0),
                (4040, 16384, 400.0),
                (16384, 65480, 500.0),
                (65480, 65536, 1700.0),
                (65536, u64::MAX, 1700.0)
            ]
        );
        assert_eq!(
            ends(1024),
            [
                (0, 1024, 300.0),
                (1024, 4040, 300.0),
                (4040, u64::MAX, 1700.0)
            ]
        );
        // Held to the validity rule, named as theirs; malformed lists refused.
        let bad = bands
            .with_eager_above(4040, &[Band { Os: -0.1, ..a }, b])
            .unwrap();
        let m = bad.invalid().unwrap();
        assert!(
            m.starts_with("eager band above S 1 (4040–16384 B): Os = -0.1"),
            "{m}"
        );
        assert!(both.invalid().is_none());
        assert!(
            bands
                .with_eager_above(4040, &[b, a])
                .unwrap_err()
                .contains("rise")
        );
        assert!(
            bands
                .with_eager_above(20_000, &[a])
                .unwrap_err()
                .contains("rise")
        );
        let open = Band { hi: u64::MAX, ..b };
        assert!(
            bands
                .with_eager_above(4040, &[a, open])
                .unwrap_err()
                .contains("an end")
        );
        assert!(
            bands
                .with_eager_above(4040, &[a; MAX_EAGER_ABOVE + 1])
                .is_err()
        );
        assert_eq!(both.with_eager_above(4040, &[]).unwrap(), bands);
        // Flags set and scale them as every band.
        let mut scaled = both;
        scaled.scale("o", 2.0).unwrap();
        assert_eq!(scaled.eager_above().unwrap().1[1].o, 1000.0);
        scaled.set("L", 7.0).unwrap();
        assert_eq!(scaled.eager_above().unwrap().1[0].L, 7.0);
    }

    /// Hand-costed: a 10 000-byte eager message of the set above at `S` = 65536 costs `T1 =
    /// 400 + 10 000·0.06 = 1000`, `T2 = 10 + 0 = 10`, `T3 = 400 + 700 = 1100` (its eager band);
    /// at the set's own S = 4040 it is rendezvous, its payload `T1 = 1700 + 1500 = 3200`.
    #[test]
    fn a_what_if_s_costs_with_the_eager_bands() {
        let (main, a, _) = both_protocols();
        let both = Bands::new(&main)
            .unwrap()
            .with_eager_above(4040, &[a])
            .unwrap();
        let own = Params::banded(both, 4040, None);
        let what_if = Params { S: 65536, ..own };
        assert!(!what_if.rendezvous(10_000, false) && own.rendezvous(10_000, false));
        assert_eq!(what_if.t1(10_000), 1000.0);
        assert_eq!(what_if.t2(10_000), 10.0);
        assert_eq!(what_if.t3(10_000), 1100.0);
        assert_eq!(own.t1(10_000), 3200.0);
        // A one-way eager transfer posted early: T1 + T2 + T3 = 2110 at the what-if.
        let recv = what_if.recv(10_000, false, 0.0, 0.0);
        assert_eq!(recv.ret, 2110.0);
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
