//! What a rendezvous payload costs more where it is received into the buffer its rank last sent
//! to the same peer (the model's §13, a set's `bounce`): the round-trip program's `--bounce`
//! times, at each size, round trips as the sweep does (a send buffer written before each send,
//! a separate receive buffer) and from one buffer on each rank, received into and sent back; a
//! round trip holds two receives, so half their difference over the bytes is the cost per byte
//! received. It runs in the exchange launches, each of which goes to the set whose placement it
//! ran at, as the exchanges do, and after every sweep launch's sweep; a set takes the median
//! launch of all those at its placement. Launches at one cores figure differ here: of eight
//! at 61–79 ns, six bounced a 16 KiB round trip at 8.9 µs against 6.4 written, two at 7.4
//! against 7.5 (256 KiB: 84 against 44 µs, 48 against 52): the first launch alone took either.

use crate::model::{BySize, Params, SizeParam};

/// One size's round trips, ns: sent from a written buffer, bounced, and (where the round-trip
/// program timed it) sent from a buffer written once, before the first; and (where it timed
/// them) exchanges of one message each way from a buffer written before each and from one
/// written once; and (where it timed them) one message from a buffer written once, answered
/// by an empty one, into a buffer its receiver had not sent from and into one it had just
/// sent to the sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundTrips {
    pub k: u64,
    pub written_ns: f64,
    pub bounced_ns: f64,
    pub clean_ns: Option<f64>,
    pub exchanges_ns: Option<[f64; 2]>,
    pub clean_into_sent_ns: Option<[f64; 2]>,
}

impl RoundTrips {
    /// What a bounced receive costs more a byte (may be negative: none measured).
    fn per_byte(&self) -> f64 {
        (self.bounced_ns - self.written_ns) / (2 * self.k.max(1)) as f64
    }

    /// What a bounced receive of a message sent from a buffer written once costs more a byte,
    /// where timed (may be negative: none measured).
    fn clean_per_byte(&self) -> Option<f64> {
        let [own, into_sent] = self.clean_into_sent_ns?;
        Some((into_sent - own) / self.k.max(1) as f64)
    }
}

/// A set's fitted `bounce`, the round trips it came from, and each launch's figure at the set's
/// placement (ns a byte; `per_byte` their median's); and at each size, the median over those
/// launches of what a bounced receive costs more a byte there, at least 0 (the set's `bounce`).
#[derive(Clone, Debug, PartialEq)]
pub struct Bounce {
    pub per_byte: f64,
    pub sizes: Vec<RoundTrips>,
    pub launches: Vec<f64>,
    pub at_sizes: Vec<(u64, f64)>,
    /// At each size that has both, the median over the same launches of the share of its time
    /// an exchange from a buffer written once takes ([`clean_of`]).
    pub clean_at_sizes: Vec<(u64, f64)>,
    /// The same of a round trip's, where the launches timed exchanges too
    /// ([`clean_oneway_of`]).
    pub oneway_at_sizes: Vec<(u64, f64)>,
    /// At each size timed so, the median over the same launches of what a bounced receive of
    /// a message from a buffer written once costs more a byte ([`bounce_clean_of`]).
    pub clean_bounce_at_sizes: Vec<(u64, f64)>,
}

/// A set's `bounce` as a calibration found it.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Measured {
    /// Fitted to round trips timed at the set's placement.
    Fitted(Bounce),
    /// Wanted (sizes above the set's `S` were timed) but timed at none of the launches at its
    /// placement: the cores figures (ns) of those that ran elsewhere. The set keeps 0.
    Elsewhere(Vec<f64>),
    /// Nothing to fit: no size above the set's `S`, or no launch timed any.
    #[default]
    Nothing,
}

impl Measured {
    pub fn fitted(&self) -> Option<&Bounce> {
        match self {
            Measured::Fitted(b) => Some(b),
            _ => None,
        }
    }

    /// Writes into the set `p` what it measured: `bounce`, `clean`, `clean_oneway` and
    /// `bounce_clean` (none where nothing was fitted).
    pub fn write_into(&self, p: &mut Params) {
        let b = self.fitted();
        p.bounce = b.and_then(bounce_of);
        p.clean = b.and_then(clean_of);
        p.clean_oneway = b.and_then(clean_oneway_of);
        p.bounce_clean = b.and_then(bounce_clean_of);
    }

    /// What the set's `bounce` is: the report's line (a warning where it was wanted and not
    /// measured), None where there was nothing to fit.
    pub fn finding(&self, set: &Params) -> Option<(String, bool)> {
        match self {
            Measured::Fitted(b) => Some((finding(b), false)),
            Measured::Elsewhere(cores) => Some((elsewhere(set, cores), true)),
            Measured::Nothing => None,
        }
    }
}

/// The warning of a set whose `bounce` no launch at its placement timed.
fn elsewhere(set: &Params, cores: &[f64]) -> String {
    let at = set
        .cores
        .map_or(String::new(), |c| format!(" (a cache line {c:.0} ns)"));
    let each: Vec<String> = cores.iter().map(|c| format!("{c:.0}")).collect();
    format!(
        "not measured at this set's placement{at}: the {} launch(es) timing bounced buffers ran \
         at other cores ({} ns), so it keeps 0 and a rendezvous message received into the \
         buffer its rank last sent from (a ping-pong sending back what it received) is \
         predicted short at this placement, by up to 2–3× on cores that share little cache \
         (the model's §13): calibrate again while the ranks run there, or set --bounce",
        cores.len(),
        each.join(", ")
    )
}

/// The `bounce K WRITTEN_NS BOUNCED_NS REPS [CLEAN_NS [XWRITTEN_NS XCLEAN_NS [OWN_NS
/// INTO_SENT_NS]]]` lines of a launch's output.
pub fn parse(stdout: &str) -> Vec<RoundTrips> {
    let read = |line: &str| {
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |s: &str| s.parse::<f64>().ok();
        let (k, w, b, clean, exchanges, into_sent) = match f[..] {
            ["bounce", k, w, b, _] => (k, w, b, None, None, None),
            ["bounce", k, w, b, _, c] => (k, w, b, Some(num(c)?), None, None),
            ["bounce", k, w, b, _, c, xw, xc] => {
                (k, w, b, Some(num(c)?), Some([num(xw)?, num(xc)?]), None)
            }
            ["bounce", k, w, b, _, c, xw, xc, own, sent] => (
                k,
                w,
                b,
                Some(num(c)?),
                Some([num(xw)?, num(xc)?]),
                Some([num(own)?, num(sent)?]),
            ),
            _ => return None,
        };
        Some(RoundTrips {
            k: k.parse().ok()?,
            written_ns: w.parse().ok()?,
            bounced_ns: b.parse().ok()?,
            clean_ns: clean,
            exchanges_ns: exchanges,
            clean_into_sent_ns: into_sent,
        })
    };
    stdout.lines().filter_map(read).collect()
}

/// The `bounce` of a set whose eager limit is `S`: the median over the sizes above it of what a
/// bounced receive costs more a byte, at least 0; None where no size lies above `S` (then the
/// set keeps 0).
#[allow(non_snake_case)] // the paper's name
pub fn fit(sizes: &[RoundTrips], S: u64) -> Option<Bounce> {
    let above: Vec<RoundTrips> = sizes.iter().copied().filter(|x| x.k > S).collect();
    if above.is_empty() {
        return None;
    }
    let each: Vec<f64> = above.iter().map(RoundTrips::per_byte).collect();
    let per_byte = super::fit::median(&each).max(0.0);
    let bounced: Vec<(u64, f64)> = above.iter().map(|x| (x.k, x.per_byte())).collect();
    let at_sizes = median_by_size(&[bounced]);
    let clean_at_sizes = median_by_size(&[shares(&clean_sizes(&above))]);
    let oneway_at_sizes = median_by_size(&[shares(&oneway_sizes(&above))]);
    let clean_bounced: Vec<(u64, f64)> = (above.iter())
        .filter_map(|x| Some((x.k, x.clean_per_byte()?)))
        .collect();
    let clean_bounce_at_sizes = median_by_size(&[clean_bounced]);
    Some(Bounce {
        per_byte,
        sizes: above,
        launches: vec![per_byte],
        at_sizes,
        clean_at_sizes,
        oneway_at_sizes,
        clean_bounce_at_sizes,
    })
}

/// At each size some launch has a value at (`launches`: each one's `(k, value)` list), the
/// median over those that have one, at least 0; sizes rising.
fn median_by_size(launches: &[Vec<(u64, f64)>]) -> Vec<(u64, f64)> {
    let mut sizes: Vec<u64> = launches.iter().flatten().map(|x| x.0).collect();
    sizes.sort_unstable();
    sizes.dedup();
    (sizes.into_iter())
        .map(|k| {
            let each: Vec<f64> = (launches.iter().flatten())
                .filter(|x| x.0 == k)
                .map(|x| x.1)
                .collect();
            (k, super::fit::median(&each).max(0.0))
        })
        .collect()
}

/// Each set's `bounce` from the launches at its placement (`launches`: each launch's cores
/// figure and round trips; the set nearest it by ratio, and not 2× away): the launch whose fit
/// is their median (the lower of two middle ones), with every launch's figure; None where no
/// launch ran there or none measured a size above the set's `S`.
pub fn per_set(
    launches: &[(Option<f64>, Vec<RoundTrips>)],
    sets: &[&Params],
) -> Vec<Option<Bounce>> {
    let at = |cores: Option<f64>| -> Option<usize> {
        let a = cores?;
        let i = crate::model::nearest_cores(a, sets.iter().map(|p| p.cores))?;
        (!super::placements_apart(a, sets[i].cores?)).then_some(i)
    };
    (0..sets.len())
        .map(|i| {
            let here = launches.iter().filter(|(c, _)| at(*c) == Some(i));
            let mut fits: Vec<Bounce> = here.filter_map(|(_, k)| fit(k, sets[i].S)).collect();
            fits.sort_by(|a, b| a.per_byte.total_cmp(&b.per_byte));
            let each: Vec<f64> = fits.iter().map(|b| b.per_byte).collect();
            let bounced: Vec<Vec<(u64, f64)>> = fits.iter().map(|b| b.at_sizes.clone()).collect();
            let clean: Vec<Vec<(u64, f64)>> =
                fits.iter().map(|b| b.clean_at_sizes.clone()).collect();
            let oneway: Vec<Vec<(u64, f64)>> =
                fits.iter().map(|b| b.oneway_at_sizes.clone()).collect();
            let clean_bounced: Vec<Vec<(u64, f64)>> = fits
                .iter()
                .map(|b| b.clean_bounce_at_sizes.clone())
                .collect();
            let middle = fits.len().checked_sub(1)? / 2;
            Some(Bounce {
                launches: each,
                at_sizes: median_by_size(&bounced),
                clean_at_sizes: median_by_size(&clean),
                oneway_at_sizes: median_by_size(&oneway),
                clean_bounce_at_sizes: median_by_size(&clean_bounced),
                ..fits.swap_remove(middle)
            })
        })
        .collect()
}

/// [`per_set`], and for each set that no exchange launch ran at the placement of, up to
/// [`PROBE_LAUNCHES`] launches of the round-trip program's `--bounce` alone at `sizes`, the
/// first at the set's placement (its cores figure within 2× of the set's) taken; a set whose
/// launches all ran elsewhere is said to be so. A launch that fails ends the probing (said in
/// `log`; the sets not yet measured keep 0).
pub(super) fn measured(
    opts: &super::Options,
    sizes: &str,
    launches: &[(Option<f64>, Vec<RoundTrips>)],
    sets: &[&Params],
    log: &mut dyn FnMut(String),
) -> Vec<Measured> {
    let mut launch = |i: usize| {
        log(format!(
            "timing round trips from a bounced buffer at the placement of set {}",
            i + 1
        ));
        (probe(opts, sizes, log))
            .map_err(|e| log(format!("bounced buffers not timed: {e}")))
            .ok()
    };
    settle(sizes, launches, sets, &mut launch)
}

/// [`measured`] with the probing launch given (`launch(i)`: a launch for set `i`, None where
/// it failed, which ends the probing).
fn settle(
    sizes: &str,
    launches: &[Launch],
    sets: &[&Params],
    launch: &mut dyn FnMut(usize) -> Option<Launch>,
) -> Vec<Measured> {
    let fitted = per_set(launches, sets).into_iter();
    let mut fitted: Vec<Measured> = fitted
        .map(|b| b.map_or(Measured::Nothing, Measured::Fitted))
        .collect();
    for (i, set) in sets.iter().enumerate() {
        let above = sizes
            .split(',')
            .any(|k| k.parse().is_ok_and(|k: u64| k > set.S));
        let mut elsewhere = Vec::new();
        for _ in 0..PROBE_LAUNCHES {
            if fitted[i] != Measured::Nothing || !above {
                break;
            }
            let Some(l) = launch(i) else { return fitted };
            match per_set(std::slice::from_ref(&l), &sets[i..=i]).swap_remove(0) {
                Some(b) => fitted[i] = Measured::Fitted(b),
                None => elsewhere.extend(l.0),
            }
        }
        if fitted[i] == Measured::Nothing && !elsewhere.is_empty() {
            fitted[i] = Measured::Elsewhere(elsewhere);
        }
    }
    fitted
}

/// A launch's cores figure and its bounced round trips.
type Launch = (Option<f64>, Vec<RoundTrips>);

/// At most this many launches for a set's `bounce` where no exchange launch ran at its
/// placement (one to two seconds each; here a placement held by one launch in five in some
/// spells is met within eight five times in six).
const PROBE_LAUNCHES: usize = 8;

/// One launch of the round-trip program timing `--bounce` at `sizes` alone, and its cores
/// figure (the larger of the cache line's round trips before and after).
fn probe(
    opts: &super::Options,
    sizes: &str,
    log: &mut dyn FnMut(String),
) -> Result<Launch, crate::error::Error> {
    let (cores, out) = super::untraced_probe(opts, &["--bounce", sizes], log)?;
    Ok((cores, parse(&out)))
}

/// The report's line on a set's `bounce`.
pub fn finding(b: &Bounce) -> String {
    let each: Vec<String> = (b.sizes.iter())
        .map(|x| {
            format!(
                "{} B {:.1} µs from a buffer written before each send, {:.1} µs bounced",
                x.k,
                x.written_ns / 1e3,
                x.bounced_ns / 1e3
            )
        })
        .collect();
    let of = match b.launches.len() {
        0 | 1 => String::new(),
        n => format!(
            " (at each size the median of {n} launches at this placement; their medians over \
             the sizes {:.4}–{:.4})",
            b.launches[0],
            b.launches[n - 1]
        ),
    };
    let at = bounce_of(b).map_or_else(|| format!("{:.4}", b.per_byte), |x| x.to_string());
    format!(
        "a rendezvous payload received into the buffer its rank last sent to the same peer costs \
         more, ns a byte: {at}{of} (round trips: {}; the model's §13)",
        each.join("; ")
    )
}

/// The sizes the bounce probe times (`loggps-rtt --bounce`): those a set's `bounce` and
/// `clean` are measured at, the ones above its `S` (one to four a band above it on the
/// calibrations here), up to `max_bytes`.
pub fn sizes(max_bytes: u64) -> String {
    let each: Vec<String> = [1024u64, 4096, 16384, 65536, 262144]
        .iter()
        .filter(|&&k| k <= max_bytes.max(1024))
        .map(|k| k.to_string())
        .collect();
    each.join(",")
}

/// Each size above a set's `S` with exchanges (else round trips) from a buffer written once
/// and from one written before each send (the sweep's way): `(k, written, clean)`, ns. An
/// exchange's share is a halo's: a round trip saves more (16 KiB here: 0.46 against 0.51–0.62).
fn clean_sizes(sizes: &[RoundTrips]) -> Vec<(u64, f64, f64)> {
    (sizes.iter())
        .filter_map(|x| match x.exchanges_ns {
            Some([w, c]) => Some((x.k, w, c)),
            None => Some((x.k, x.written_ns, x.clean_ns?)),
        })
        .filter(|&(_, w, c)| w > 0.0 && c > 0.0)
        .collect()
}

/// The round trips ([`clean_sizes`]'s form) of each size where exchanges were timed too: where
/// none were, [`clean_sizes`] holds the round trips already.
fn oneway_sizes(sizes: &[RoundTrips]) -> Vec<(u64, f64, f64)> {
    (sizes.iter())
        .filter(|x| x.exchanges_ns.is_some())
        .filter_map(|x| Some((x.k, x.written_ns, x.clean_ns?)))
        .filter(|&(_, w, c)| w > 0.0 && c > 0.0)
        .collect()
}

/// Shares at each size of `(k, written, clean)` times: clean over written, sizes rising, one a
/// size.
fn shares(times: &[(u64, f64, f64)]) -> Vec<(u64, f64)> {
    let mut points: Vec<(u64, f64)> = times.iter().map(|&(k, w, c)| (k, c / w)).collect();
    points.sort_by_key(|p| p.0);
    points.dedup_by_key(|p| p.0);
    points
}

/// A set's `clean_oneway` (the model's §13): at each size above its `S` where exchanges were
/// timed too, a round trip from a buffer written once against one from a buffer written
/// before each send, the median of the launches at its placement; None where there is none.
pub fn clean_oneway_of(b: &Bounce) -> Option<BySize> {
    BySize::new(SizeParam::CleanOneway, &b.oneway_at_sizes).ok()
}

/// A set's `clean` (the model's §13): at each size above its `S`, an exchange (else a round
/// trip) from a buffer written once against one from a buffer written before each send, the
/// median of the launches at its placement ([`Bounce::clean_at_sizes`]); None where no size has
/// both.
pub fn clean_of(b: &Bounce) -> Option<BySize> {
    BySize::new(SizeParam::Clean, &b.clean_at_sizes).ok()
}

/// A set's `bounce` (the model's §13): at each size above its `S`, the median over the
/// launches at its placement ([`Bounce::at_sizes`]); None where there is none.
pub fn bounce_of(b: &Bounce) -> Option<BySize> {
    BySize::new(SizeParam::Bounce, &b.at_sizes).ok()
}

/// A set's `bounce_clean` (the model's §13): at each size above its `S` timed so, the median
/// over the launches at its placement ([`Bounce::clean_bounce_at_sizes`]); None where there is
/// none.
pub fn bounce_clean_of(b: &Bounce) -> Option<BySize> {
    BySize::new(SizeParam::BounceClean, &b.clean_bounce_at_sizes).ok()
}

/// The report's line on the set's `bounce_clean` ([`bounce_clean_of`]) and the messages it
/// comes from (the median launch's); None where it has none.
pub fn bounce_clean_finding(b: &Bounce) -> Option<String> {
    let rate = bounce_clean_of(b)?;
    let each: Vec<String> = (b.sizes.iter())
        .filter_map(|x| {
            let [own, sent] = x.clean_into_sent_ns?;
            Some(format!(
                "{} B {:.1} µs against {:.1}",
                x.k,
                sent / 1e3,
                own / 1e3
            ))
        })
        .collect();
    let whose = match b.launches.len() {
        0 | 1 => "",
        _ => "the median launch's: ",
    };
    Some(format!(
        "{rate} ns a byte more for a rendezvous payload from a buffer written once (a `clean` \
         send) received into the buffer its rank has just sent to the sender, against one into \
         a buffer it has not sent from (one message answered by an empty one; {whose}{}): the \
         source read at once, the receiver's writes into lines its peer holds are what its copy \
         waits for, where `bounce` is measured on a ping-pong of written buffers (a Bcast into a \
         buffer its leaf last sent from; the model's §13)",
        each.join("; ")
    ))
}

/// The report's line on the set's `clean` ([`clean_of`], as [`BySize`] prints it) and the round
/// trips it comes from; None where it has none.
pub fn clean_finding(b: &Bounce) -> Option<String> {
    let clean = clean_of(b)?;
    let shares: Vec<f64> = clean.points().iter().map(|p| p.1).collect();
    let median = super::fit::median(&shares);
    let each: Vec<String> = (clean_sizes(&b.sizes).iter())
        .map(|&(k, w, c)| format!("{k} B {:.1} µs against {:.1}", c / 1e3, w / 1e3))
        .collect();
    let of = match b.launches.len() {
        0 | 1 => String::new(),
        n => format!(" (at each size the median of {n} launches' shares)"),
    };
    let whose = if of.is_empty() {
        ""
    } else {
        "the median launch's: "
    };
    Some(format!(
        "{clean}{of}: an exchange of one message each way at once (a halo's; a round trip where \
         the program timed none) from a send buffer written once, before the first, against one \
         from a buffer written before each send, as the sweep's ({whose}{}); a rendezvous \
         message the tracer flags `clean` (sent from a buffer unchanged since its last send from \
         it) is costed at its size's share (the model's §13). Traces of other tools flag none: \
         a program known to send unchanged buffers is predicted from them with --scale \
         rendezvous={median:.2}",
        each.join("; ")
    ))
}

/// The report's line on the set's `clean_oneway` ([`clean_oneway_of`]) and the round trips it
/// comes from; None where it has none.
pub fn clean_oneway_finding(b: &Bounce) -> Option<String> {
    let oneway = clean_oneway_of(b)?;
    let each: Vec<String> = (oneway_sizes(&b.sizes).iter())
        .map(|&(k, w, c)| format!("{k} B {:.1} µs against {:.1}", c / 1e3, w / 1e3))
        .collect();
    let whose = match b.launches.len() {
        0 | 1 => "",
        _ => "the median launch's: ",
    };
    Some(format!(
        "{oneway}: a round trip (one message at a time) from a send buffer written once against \
         one from a buffer written before each send ({whose}{}), where `clean` is an \
         exchange's; a collective's `clean` message with none the other way at once (a Bcast's \
         root, a Gather's leaf) is costed at its size's share (the model's §13)",
        each.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Measured here (loggps-rtt --bounce, far cores at 345 ns): 16 KiB 13,506.5 and 29,807.2 ns,
    /// 256 KiB 99,843.1 and 315,018.9 ns: (29,807.2 − 13,506.5) / 32,768 = 0.4975 and
    /// (315,018.9 − 99,843.1) / 524,288 = 0.4104 ns a byte, their median 0.4539; with S above
    /// 16 KiB the larger alone; none above S: None; bounced cheaper: 0.
    #[test]
    fn bounce_is_half_the_difference_a_byte() {
        let out = "line_at 0 344.9\nbounce 16384 13506.5 29807.2 201\n\
                   bounce 262144 99843.1 315018.9 201\nline 340.0 351.3 1000\n";
        let sizes = parse(out);
        assert_eq!(sizes.len(), 2);
        let b = fit(&sizes, 4040).unwrap();
        assert!(
            (b.per_byte - 0.5 * (0.49746 + 0.41041)).abs() < 1e-4,
            "{b:?}"
        );
        let b = fit(&sizes, 65536).unwrap();
        assert!((b.per_byte - 0.41041).abs() < 1e-4, "{b:?}");
        assert_eq!(b.sizes.len(), 1);
        assert_eq!(fit(&sizes, 1 << 20), None);
        let cheaper = parse("bounce 16384 7655.5 7471.2 201\n");
        assert_eq!(fit(&cheaper, 4040).unwrap().per_byte, 0.0);
        assert!(finding(&fit(&sizes, 65536).unwrap()).contains("262144 B 99.8 µs"));
    }

    /// Measured here (loggps-rtt --bounce on an Intel Xeon VM at 121–128 ns, one launch of
    /// `tracer/bench/buffers`' three ways): 16 KiB 6,900 ns written, 8,520 bounced, 3,205
    /// clean; 256 KiB 47,902, 54,889, 23,857: shares 3,205 / 6,900 = 0.4645 and 23,857 /
    /// 47,902 = 0.4980, their median 0.4813 (the --scale the line names). Lines without the
    /// clean time (an older round-trip program): none.
    #[test]
    fn a_clean_message_into_a_buffer_just_sent_against_one_into_its_own() {
        // Measured here (an Intel Xeon VM, loggps-rtt --bounce): 16 KiB 2,277.9 ns into a
        // buffer its receiver had not sent from, 3,715.3 into one it had just sent to the
        // sender: (3,715.3 − 2,277.9) / 16,384 = 0.0877 ns a byte, 2.7× the ping-pong's
        // (8,399.9 − 7,348.6) / 32,768 = 0.0321; 256 KiB (20,084.9 − 10,813.9) / 262,144 =
        // 0.0354.
        let out = "bounce 16384 7348.6 8399.9 201 3741.2 4786.8 2588.1 2277.9 3715.3\n\
                   bounce 262144 46557.2 52253.3 201 21771.5 24034.0 12022.0 10813.9 20084.9\n";
        let sizes = parse(out);
        assert_eq!(sizes[0].clean_into_sent_ns, Some([2277.9, 3715.3]));
        assert_eq!(sizes[0].exchanges_ns, Some([4786.8, 2588.1]));
        let b = fit(&sizes, 4040).unwrap();
        let rate = bounce_clean_of(&b).unwrap();
        let want = [
            (16384, (3715.3 - 2277.9) / 16384.0),
            (262144, (20084.9 - 10813.9) / 262144.0),
        ];
        assert_eq!(rate.points(), want);
        assert!((rate.points()[0].1 - 0.0877).abs() < 1e-4);
        let text = bounce_clean_finding(&b).unwrap();
        assert!(text.contains("16384 B 3.7 µs against 2.3"), "{text}");
        // A launch that timed none (the eight-field line): none.
        let old = parse("bounce 16384 7348.6 8399.9 201 3741.2 4786.8 2588.1\n");
        assert_eq!(old[0].clean_into_sent_ns, None);
        assert_eq!(bounce_clean_of(&fit(&old, 4040).unwrap()), None);
    }

    #[test]
    fn clean_round_trips_against_written_ones() {
        let out =
            "bounce 16384 6900.0 8520.0 201 3205.0\nbounce 262144 47902.0 54889.0 201 23857.0\n";
        let sizes = parse(out);
        assert_eq!(sizes[1].clean_ns, Some(23857.0));
        let clean = clean_of(&fit(&sizes, 4040).unwrap()).unwrap();
        assert_eq!(
            clean.points(),
            [(16384, 3205.0 / 6900.0), (262144, 23857.0 / 47902.0)]
        );
        let text = clean_finding(&fit(&sizes, 4040).unwrap()).unwrap();
        assert!(
            text.starts_with("0.464 at 16384 B, 0.498 at 262144 B: ")
                && text.contains("--scale rendezvous=0.48"),
            "{text}"
        );
        assert!(text.contains("16384 B 3.2 µs against 6.9"), "{text}");
        // Only the sizes above S: 256 KiB's alone.
        let clean = clean_of(&fit(&sizes, 65536).unwrap()).unwrap();
        assert_eq!(clean.points(), [(262144, 23857.0 / 47902.0)]);
        let old = parse("bounce 16384 6900.0 8520.0 201\n");
        assert_eq!(old[0].clean_ns, None);
        assert_eq!(clean_of(&fit(&old, 4040).unwrap()), None);
        assert_eq!(clean_finding(&fit(&old, 4040).unwrap()), None);
        // With exchanges (measured here, one launch: 4 KiB 3,318.6 written, 2,292.8 clean;
        // 16 KiB 5,825.3 and 2,985.6): their shares, 0.6909 and 0.5125, not the round trips'.
        let both = parse(
            "bounce 4096 4057.0 4095.0 201 2574.0 3318.6 2292.8\n\
             bounce 16384 7728.0 8900.0 201 3364.0 5825.3 2985.6\n",
        );
        assert_eq!(both[0].exchanges_ns, Some([3318.6, 2292.8]));
        let clean = clean_of(&fit(&both, 4040).unwrap()).unwrap();
        assert_eq!(
            clean.points(),
            [(4096, 2292.8 / 3318.6), (16384, 2985.6 / 5825.3)]
        );
        let text = clean_finding(&fit(&both, 4040).unwrap()).unwrap();
        assert!(text.contains("4096 B 2.3 µs against 3.3"), "{text}");
        // The round trips' shares, 2,574 / 4,057 and 3,364 / 7,728, are the one-way messages':
        // kept only where exchanges were timed (else `clean` is the round trips' already).
        let oneway = clean_oneway_of(&fit(&both, 4040).unwrap()).unwrap();
        assert_eq!(
            oneway.points(),
            [(4096, 2574.0 / 4057.0), (16384, 3364.0 / 7728.0)]
        );
        let text = clean_oneway_finding(&fit(&both, 4040).unwrap()).unwrap();
        assert!(
            text.starts_with("0.634 at 4096 B, 0.435 at 16384 B: a round trip")
                && text.contains("16384 B 3.4 µs against 7.7"),
            "{text}"
        );
        assert_eq!(clean_oneway_of(&fit(&sizes, 4040).unwrap()), None);
    }

    /// A launch goes to the set nearest its cores figure, not one 2× away: a near launch (62 ns)
    /// to the near set, none to a far set; a launch of no figure to none.
    #[test]
    fn launches_go_to_the_set_of_their_placement() {
        let set = |cores| Params {
            cores: Some(cores),
            ..Params::preset("myrinet").unwrap()
        };
        let (near, far) = (set(66.0), set(320.0));
        let sizes = parse("bounce 16384 7828.8 10878.4 201\n");
        let fitted = per_set(
            &[(Some(62.0), sizes.clone()), (None, sizes)],
            &[&far, &near],
        );
        assert_eq!(fitted[0], None);
        let b = fitted[1].as_ref().unwrap();
        assert!((b.per_byte - (10878.4 - 7828.8) / 32768.0).abs() < 1e-9);
    }

    /// A set takes the median of its launches, not the first: measured here at 61–79 ns (three
    /// of eight launches): one bounced a 16 KiB round trip as cheaply as it wrote it (7,517.5
    /// and 7,416.6 ns; 256 KiB 52,664.9 and 47,875.8: 0), two at a cost, 16 KiB (9,040.0 −
    /// 6,493.5) / 32,768 = 0.077713 and 256 KiB (85,257.6 − 43,817.5) / 524,288 = 0.079041,
    /// their median 0.078377; 16 KiB (8,941.0 − 6,464.7) / 32,768 = 0.075571, 256 KiB
    /// (83,498.8 − 43,464.3) / 524,288 = 0.076360, their median 0.075966: the median launch.
    /// The set's `bounce` at each size the median of the three launches' there: 16 KiB
    /// 0.075571 (the cheap one's −0.003079, 0.077713), 256 KiB 0.076360 (−0.009135, 0.079041).
    #[test]
    fn a_set_takes_the_median_of_its_launches() {
        let set = Params {
            cores: Some(66.0),
            ..Params::preset("myrinet").unwrap()
        };
        let cheap = parse("bounce 16384 7517.5 7416.6 201\nbounce 262144 52664.9 47875.8 201\n");
        let b1 = parse("bounce 16384 6493.5 9040.0 201\nbounce 262144 43817.5 85257.6 201\n");
        let b2 = parse("bounce 16384 6464.7 8941.0 201\nbounce 262144 43464.3 83498.8 201\n");
        let launches = [(Some(70.7), cheap), (Some(64.5), b1), (Some(78.7), b2)];
        let b = per_set(&launches, &[&set]).swap_remove(0).unwrap();
        assert!((b.per_byte - 0.075966).abs() < 1e-5, "{b:?}");
        assert_eq!(b.launches.len(), 3);
        assert!(b.launches[0] == 0.0 && (b.launches[2] - 0.078377).abs() < 1e-5);
        assert_eq!(b.sizes[0].bounced_ns, 8941.0);
        let at = bounce_of(&b).unwrap();
        assert_eq!(at.points().len(), 2);
        assert!((at.points()[0].1 - 0.075571).abs() < 1e-6, "{at}");
        assert!((at.points()[1].1 - 0.076360).abs() < 1e-6, "{at}");
        let text = finding(&b);
        assert!(
            text.contains(
                "costs more, ns a byte: 0.0756 at 16384 B, 0.0764 at 262144 B (at each size the \
                 median of 3 launches at this placement; their medians over the sizes \
                 0.0000–0.0784)"
            ),
            "{text}"
        );
        // the first launch alone took the cheap one
        assert_eq!(
            per_set(&launches[..1], &[&set])[0]
                .as_ref()
                .unwrap()
                .per_byte,
            0.0
        );
    }

    /// A set's `clean` at each size is the median of its launches' shares there, not the median
    /// launch's: three launches at one placement, 16 KiB written 8,000 ns each, bounced 9,000,
    /// 10,000 and 9,500 (0.0305, 0.0610, 0.0458 ns a byte: the third the median launch), from a
    /// buffer written once 6,000, 4,000 and 6,400 (shares 0.75, 0.50, 0.80): `clean` 0.75 at
    /// 16 KiB where the median launch's is 0.80; its `bounce` 0.0458.
    #[test]
    fn clean_is_the_median_share_of_the_launches() {
        let set = Params {
            cores: Some(66.0),
            ..Params::preset("myrinet").unwrap()
        };
        let launch = |b: f64, c: f64| {
            (
                Some(66.0),
                parse(&format!("bounce 16384 8000 {b} 201 {c}\n")),
            )
        };
        let launches = [
            launch(9000.0, 6000.0),
            launch(10000.0, 4000.0),
            launch(9500.0, 6400.0),
        ];
        let b = per_set(&launches, &[&set]).swap_remove(0).unwrap();
        assert_eq!(b.sizes[0].bounced_ns, 9500.0, "the median launch");
        assert_eq!(clean_of(&b).unwrap().points(), &[(16384, 0.75)]);
        let bounce = bounce_of(&b).unwrap();
        assert!((bounce.points()[0].1 - 1500.0 / 32768.0).abs() < 1e-12);
        let text = clean_finding(&b).unwrap();
        assert!(
            text.starts_with("0.750 at 16384 B (at each size the median of 3 launches' shares): ")
                && text.contains("(the median launch's: 16384 B 6.4 µs against 8.0)"),
            "{text}"
        );
    }

    /// A set that no launch timed at its placement is said to be so, with where its probing
    /// launches ran; a probing launch at its placement fits it (16 KiB: (10,878.4 − 7,828.8) /
    /// 32,768 ns a byte), as does a sweep launch there listed after the exchange launches; a set
    /// whose `S` lies above every size is not probed.
    #[test]
    fn a_set_measured_nowhere_at_its_placement_says_where_its_launches_ran() {
        let set = |cores, limit| Params {
            cores: Some(cores),
            S: limit,
            ..Params::preset("myrinet").unwrap()
        };
        let (near, far, big) = (set(120.0, 4040), set(440.0, 4040), set(440.0, 1 << 20));
        let sizes = parse("bounce 16384 7828.8 10878.4 201\n");
        let exchange = [(Some(118.0), sizes.clone())];
        // every probe at near cores
        let mut ran = Vec::new();
        let mut launch = |i: usize| {
            ran.push(i);
            Some((Some(121.0 + ran.len() as f64), sizes.clone()))
        };
        let got = settle("16384", &exchange, &[&near, &far], &mut launch);
        assert_eq!(
            ran, [1; PROBE_LAUNCHES],
            "the far set probed PROBE_LAUNCHES times"
        );
        assert!(matches!(got[0], Measured::Fitted(_)));
        let each: Vec<f64> = (1..=PROBE_LAUNCHES).map(|n| 121.0 + n as f64).collect();
        assert_eq!(got[1], Measured::Elsewhere(each));
        let (text, warned) = got[1].finding(&far).unwrap();
        assert!(warned && text.contains("(a cache line 440 ns)"), "{text}");
        assert!(
            text.contains("8 launch(es)")
                && text.contains("(122, 123, 124, 125, 126, 127, 128, 129 ns)"),
            "{text}"
        );
        // the second probe at far cores
        let mut n = 0;
        let mut launch = |_: usize| {
            n += 1;
            Some((Some(if n == 2 { 450.0 } else { 119.0 }), sizes.clone()))
        };
        let got = settle("16384", &exchange, &[&near, &far], &mut launch);
        let b = got[1].fitted().expect("fitted at far cores");
        assert!((b.per_byte - (10878.4 - 7828.8) / 32768.0).abs() < 1e-9);
        // a sweep launch of the far set's after the exchange launch: taken, no probe
        let far_sweep = parse("bounce 16384 13506.5 29807.2 201\n");
        let both = [exchange[0].clone(), (Some(452.0), far_sweep)];
        let mut launch = |_: usize| -> Option<Launch> { panic!("probed a set its sweep timed") };
        let got = settle("16384", &both, &[&near, &far], &mut launch);
        let b = got[1].fitted().expect("from its sweep launch");
        assert!((b.per_byte - (29807.2 - 13506.5) / 32768.0).abs() < 1e-9);
        // nothing above S: no probe, nothing said
        let mut launch =
            |_: usize| -> Option<Launch> { panic!("probed a set with no size above its S") };
        let got = settle("16384", &exchange, &[&near, &big], &mut launch);
        assert_eq!(got[1], Measured::Nothing);
        assert_eq!(got[1].finding(&big), None);
    }
}
