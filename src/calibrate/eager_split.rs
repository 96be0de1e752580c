//! The eager bands above `S` fitted to exchanges as well as round trips (the model's §9, §14).
//!
//! Round trips have one message in flight: they tell each band's `T1 + T2 + T3 − Od − Op`
//! (at `w = 0`) and its overheads' sum (a late receive), not how much of the send's overhead
//! follows the message's departure (`Od`) or how much of the receive's a receive posted early
//! has done by its arrival (`Op`); the fit takes `Od` from the round-trip program's Isends and
//! leaves `Op` what the rest allows. Two ranks that send and receive at once (a halo under a
//! higher eager limit, a what-if `--S`) pay what those two decide: the same 16 KiB exchange
//! predicted 2% short in one calibration and 49% long in another twenty minutes before, the
//! band edges in another place. [`fit`] cuts the bands at the exchanges' sizes and moves each
//! part's `Od` and `Op` (and `L` with them, so that `L − Od − Op` and every round trip stay as
//! fitted) to where the exchanges made under the eager launcher at its sizes are predicted
//! best: as they run untraced, where untraced launches timed them.

use super::exchange;
use crate::error::Error;
use crate::model::{Band, MAX_EAGER_ABOVE, Params};
use crate::trace::Trace;

/// A band's `Od`, `Op` and `L` before and after [`fit`], and the mean |ln(predicted /
/// measured)| of its exchanges with each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Refit {
    /// The band's sizes, `lo < k ≤ hi`.
    pub lo: u64,
    pub hi: u64,
    pub before: [f64; 3],
    pub after: [f64; 3],
    pub error_before: f64,
    pub error_after: f64,
    /// How many exchanges (sizes and counts each way, over the launches) it is fitted to.
    pub exchanges: usize,
    /// Whether they were measured untraced ([`exchange::measured_untraced`]).
    pub untraced: bool,
}

impl Refit {
    /// The refit in words.
    pub fn finding(&self) -> String {
        let [od, op, l] = self.after;
        let [od0, op0, l0] = self.before;
        format!(
            "eager band above S {}: Od {od0:.0} → {od:.0}, Op {op0:.0} → {op:.0}, L {l0:.0} → \
             {l:.0} ns, fitted to {} exchanges (sizes and counts each way, over the launches) \
             {} at its sizes: off by {:.0}% on average, {:.0}% before (its round trips \
             unchanged)",
            crate::model::sizes(self.lo, self.hi),
            self.exchanges,
            match self.untraced {
                true => "timed untraced",
                false => "traced",
            },
            100.0 * self.error_after.exp_m1(),
            100.0 * self.error_before.exp_m1()
        )
    }
}

/// Steps of the grid over each of `Od` (0 to `T1 − Osd·k` at the band's least size) and `Op` (0 to
/// `T3` there), then of the finer grid around the best point.
const STEPS: usize = 8;

/// `set` (its `S` the measured limit, its eager bands above it ending at `limit`) with its
/// eager bands above `S` cut at `sizes` ([`cut`]) and the `Od` and `Op` of each that holds the
/// size of some exchange in `traces` (the round-trip program's `--exchange` of `sizes` under
/// the eager launcher) fitted to those exchanges as measured `untraced` (the traces replayed
/// with the tracer's own time taken out; without it, as traced, each trace with its tracer's
/// time kept: [`exchange::measured_untraced`] says why the untraced ones tell more): the
/// pair, within its bounds and `L =
/// L − Od − Op as fitted + Od + Op ≥ 0`, with the least mean |ln(predicted / measured)| over
/// them (of one and of two messages each way, every launch), predicted with the set at `S =
/// limit`; a grid of [`STEPS`] + 1 values each way, then a finer one around the best. A band
/// is changed only where that is better by more than 1% (the error's mean).
pub fn fit(
    traces: &[Trace],
    sizes: &[u64],
    set: &Params,
    limit: u64,
    untraced: Option<&exchange::Untraced>,
) -> Result<(Params, Vec<Refit>), Error> {
    let Some((lo, above)) = set.as_bands().eager_above().map(|(lo, l)| (lo, l.to_vec())) else {
        return Ok((*set, Vec::new()));
    };
    let with = |list: &[Band]| -> Result<Params, Error> {
        set.with_bands(|b| {
            *b = b.with_eager_above(lo, list)?;
            Ok(())
        })
        .map_err(|e| Error::Io(format!("the eager bands above S: {e}")))
    };
    let mut list = cut(&above, lo, sizes);
    let mut refits = Vec::new();
    let mut from = lo;
    for j in 0..list.len() {
        let b = list[j];
        let (a, z) = (from, b.hi);
        from = b.hi;
        let beyond = b.L - b.Od - b.Op;
        // The band's error with `Od`, `Op`: mean |ln| over its exchanges, and how many.
        let error = |list: &mut Vec<Band>, od: f64, op: f64| -> Result<(f64, usize), Error> {
            list[j] = Band {
                Od: od,
                Op: op,
                L: (beyond + od + op).max(0.0),
                ..b
            };
            let q = Params {
                S: limit,
                ..with(list)?
            };
            let (mut sum, mut n) = (0.0, 0);
            for t in traces {
                let each = exchange::check(t, &q)?;
                let each = match untraced {
                    Some(u) => exchange::measured_untraced(each, u),
                    None => each,
                };
                for e in each {
                    if e.k > a && e.k <= z && !e.clean && e.measured_ns > 0.0 {
                        sum += (e.predicted_ns.max(1e-9) / e.measured_ns).ln().abs();
                        n += 1;
                    }
                }
            }
            Ok((if n > 0 { sum / n as f64 } else { 0.0 }, n))
        };
        let (before, n) = error(&mut list, b.Od, b.Op)?;
        if n == 0 {
            list[j] = b;
            continue;
        }
        // `Od + Osd·k` at most `T1` at the band's least size (§13's validity).
        let (od_most, op_most) = (b.o + a as f64 * (b.Os - b.Osd), b.o + a as f64 * b.Or);
        let mut best = (before, b.Od, b.Op);
        let (mut od_span, mut op_span) = ((0.0, od_most), (0.0, op_most));
        for _round in 0..2 {
            let (od_step, op_step) = (
                (od_span.1 - od_span.0) / STEPS as f64,
                (op_span.1 - op_span.0) / STEPS as f64,
            );
            for i in 0..=STEPS {
                for k in 0..=STEPS {
                    let (od, op) = (
                        od_span.0 + i as f64 * od_step,
                        op_span.0 + k as f64 * op_step,
                    );
                    if beyond + od + op < 0.0 {
                        continue;
                    }
                    let (e, _) = error(&mut list, od, op)?;
                    if e < best.0 {
                        best = (e, od, op);
                    }
                }
            }
            od_span = ((best.1 - od_step).max(0.0), (best.1 + od_step).min(od_most));
            op_span = ((best.2 - op_step).max(0.0), (best.2 + op_step).min(op_most));
        }
        if best.0 < before - 0.01 {
            error(&mut list, best.1, best.2)?;
            refits.push(Refit {
                lo: a,
                hi: z,
                before: [b.Od, b.Op, b.L],
                after: [list[j].Od, list[j].Op, list[j].L],
                error_before: before,
                error_after: best.0,
                exchanges: n,
                untraced: untraced.is_some(),
            });
        } else {
            list[j] = b;
        }
    }
    Ok((with(&merged(&list))?, refits))
}

/// `list` (the eager bands above `lo`) cut at each of `sizes` (rising) inside a band, the
/// smallest first, while there is room ([`MAX_EAGER_ABOVE`]): each part keeps its band's
/// parameters (the same costs), so that the exchanges of each size move a band of their own (a
/// band's `Od` and `Op` are constants, and what its sizes' exchanges ask of them grows with the
/// size).
fn cut(list: &[Band], lo: u64, sizes: &[u64]) -> Vec<Band> {
    let mut out = list.to_vec();
    for &k in sizes {
        if out.len() >= MAX_EAGER_ABOVE {
            break;
        }
        let mut from = lo;
        let inside = out.iter().position(|b| {
            let inside = k > from && k < b.hi;
            from = b.hi;
            inside
        });
        if let Some(i) = inside {
            out.insert(i, Band { hi: k, ..out[i] });
        }
    }
    out
}

/// `list` with each band joined to the one after it where they differ in their end alone (the
/// parts of a cut no exchange moved).
fn merged(list: &[Band]) -> Vec<Band> {
    let mut out: Vec<Band> = Vec::new();
    for b in list {
        match out.last_mut() {
            Some(last) if Band { hi: b.hi, ..*last } == *b => last.hi = b.hi,
            _ => out.push(*b),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two ranks, each: an exchange of one `k`-byte message each way, then one of two, the
    /// calls 50 ns long and back to back; each Waitall ends `measured[0]`, `measured[1]` after
    /// its exchange's first receive began.
    fn launch(k: u64, measured: [u64; 2]) -> Trace {
        let mut text = String::from("loggps-trace 1\nranks 2\n");
        for r in 0..2 {
            let q = 1 - r;
            let mut t = 0;
            text += &format!("{r} MPI_Init 0 0\n");
            let mut req = 0;
            for (n, m) in [(1u32, measured[0]), (2, measured[1])] {
                let (start, first) = (t, req);
                for what in ["MPI_Irecv", "MPI_Isend"] {
                    for j in 0..n {
                        text += &format!(
                            "{r} {what} {t} {} bytes={k} peer={q} tag={j} req={req}\n",
                            t + 50
                        );
                        (t, req) = (t + 50, req + 1);
                    }
                }
                let done: Vec<String> = (first..req)
                    .map(|x| match x - first < n {
                        true => format!("{x}:{q}:{}", x - first),
                        false => format!("{x}:-1:-1"),
                    })
                    .collect();
                let call = t;
                t = start + m;
                text += &format!("{r} MPI_Waitall {call} {t} done={}\n", done.join(","));
            }
            text += &format!("{r} MPI_Finalize {t} {t}\n");
        }
        crate::trace::text::parse("x.txt", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A set of eager messages up to `S` = 1,000 B, and above it an eager band to 100,000 B
    /// (`o` 500, `L` `l`, `Os` 0.1, `Or` 0.05, `G` 0.02, `Od`, `Op`) and one to 200,000 B.
    fn set(l: f64, od: f64, op: f64) -> Params {
        let band = Band {
            hi: 100_000,
            o: 500.0,
            L: l,
            Os: 0.1,
            Or: 0.05,
            G: 0.02,
            Od: od,
            Op: op,
            Osd: 0.0,
        };
        let last = Band {
            hi: 200_000,
            o: 600.0,
            ..band
        };
        (Params::paper([100.0, 200.0, 0.0, 0.0, 0.0, 0.0], 1000, 1000).in_bands())
            .with_bands(|b| {
                *b = b.with_eager_above(1000, &[band, last])?;
                Ok(())
            })
            .unwrap()
    }

    /// Exchanges of 10,000 B made to be what a set with `Od` 600, `Op` 400 (`L` 1,500: `L −
    /// Od − Op` 500) predicts (its replay's durations written as the measured ones): from `Od =
    /// Op = 0` (`L` 500), the same round trips, where the exchange of two messages each way is
    /// predicted more than 5% long, the fit cuts the band at 10,000 B and finds for its part
    /// below a pair that predicts both within 1%, keeping `L − Od − Op` and every round trip;
    /// the part above and the band above that, with no exchange, as they were (one band each
    /// again); fitted already, nothing moves.
    #[test]
    fn the_split_is_fitted_to_exchanges_keeping_the_round_trips() {
        let truth = Params {
            S: 200_000,
            ..set(1500.0, 600.0, 400.0)
        };
        let predicted = exchange::check(&launch(10_000, [1000, 1000]), &truth).unwrap();
        let m: Vec<u64> = predicted
            .iter()
            .map(|e| e.predicted_ns.round() as u64)
            .collect();
        let traces = [launch(10_000, [m[0], m[1]])];
        let from = set(500.0, 0.0, 0.0);
        let before = exchange::check(&traces[0], &Params { S: 200_000, ..from }).unwrap();
        assert!(before.iter().any(|e| e.error() > 0.05), "{before:?}");
        let (fitted, refits) = fit(&traces, &[10_000], &from, 200_000, None).unwrap();
        assert_eq!(refits.len(), 1, "{refits:?}");
        let r = refits[0];
        // (the band cut at the exchanges' size: its part above keeps what it had)
        assert_eq!((r.lo, r.hi, r.exchanges), (1000, 10_000, 2));
        assert!(r.error_after < 0.01 && r.error_before > 0.04, "{r:?}");
        let [od, op, l] = r.after;
        assert!((l - od - op - 500.0).abs() < 1e-6, "{r:?}");
        let (_, list) = fitted
            .as_bands()
            .eager_above()
            .map(|(a, l)| (a, l.to_vec()))
            .unwrap();
        assert_eq!(
            (list[0].hi, list[0].Od, list[0].Op, list[0].L),
            (10_000, od, op, l)
        );
        assert_eq!(
            &list[1..],
            set(500.0, 0.0, 0.0).as_bands().eager_above().unwrap().1
        );
        for k in [2000, 10_000, 50_000, 100_000] {
            for w in [0.0, 1e6] {
                let a = Params { S: 200_000, ..from }.round_trip(k, w);
                let b = Params {
                    S: 200_000,
                    ..fitted
                }
                .round_trip(k, w);
                assert!((a - b).abs() < 1e-6, "{k} {w}: {a} {b}");
            }
        }
        // Fitted already: nothing to move.
        let (_, again) = fit(
            &traces,
            &[10_000],
            &Params { S: 1000, ..fitted },
            200_000,
            None,
        )
        .unwrap();
        assert!(again.is_empty(), "{again:?}");
    }

    /// Measured untraced, the exchanges are what the untraced launches timed, whatever the
    /// traced ones took: the same exchanges as above traced at 1,000 ns each (as if the tracer's
    /// records between the calls had let each message arrive before the next), untraced at
    /// what the set of `Od` 600, `Op` 400 predicts, give that set's exchanges back within 1%;
    /// without the untraced figures the fit follows the traced ones.
    #[test]
    fn the_split_is_fitted_to_the_exchanges_measured_untraced() {
        let truth = Params {
            S: 200_000,
            ..set(1500.0, 600.0, 400.0)
        };
        let traces = [launch(10_000, [1000, 1000])];
        let predicted = exchange::check(&traces[0], &truth).unwrap();
        let untraced: exchange::Untraced = exchange::untraced(&[predicted
            .iter()
            .map(|e| format!("exchange {} {} {:.1} 201\n", e.k, e.n, e.predicted_ns))
            .collect::<String>()]);
        assert_eq!(untraced.len(), 2, "{untraced:?}");
        let from = set(500.0, 0.0, 0.0);
        let (fitted, refits) = fit(&traces, &[10_000], &from, 200_000, Some(&untraced)).unwrap();
        let r = refits[0];
        assert!(r.error_after < 0.01 && r.error_before > 0.04, "{r:?}");
        let at = Params {
            S: 200_000,
            ..fitted
        };
        let again =
            exchange::measured_untraced(exchange::check(&traces[0], &at).unwrap(), &untraced);
        assert_eq!(again.len(), 2);
        assert!(again.iter().all(|e| e.error().abs() < 0.01), "{again:?}");
        // As traced, the same exchanges ask for another split.
        let (_, traced) = fit(&traces, &[10_000], &from, 200_000, None).unwrap();
        assert!(
            traced.iter().all(|t| t.after != r.after),
            "{traced:?} {r:?}"
        );
    }
}
