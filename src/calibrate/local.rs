//! What the round trips do not tell, timed by the round-trip program in one launch of its
//! own: a failed poll, a posted receive (`post`), the library's reduction (`gamma`), whether
//! messages move while a rank computes, and `memcpy` (`copy`, and whether aliased buffers copy
//! slower, a rendezvous message's single copy too).

use super::launch::{RTT_DONE, launch};
use super::{Options, reduce};
use crate::error::Error;
use crate::model::{BySize, SizeParam};
use reduce::Reduction;
use std::process::Command;

/// The message of the progress probe, bytes: above every eager limit the libraries set here.
pub const PROGRESS_BYTES: u64 = 262_144;

/// Whether messages move only inside MPI calls: a posted receive that waits, after the
/// computation, a quarter of the one-way transfer or more still had its message to move
/// (with background progress it finds it there, a wait of a few hundred nanoseconds).
pub fn moves_only_in_calls(wait_ns: f64, rtt_ns: f64) -> bool {
    wait_ns > 0.25 * rtt_ns / 2.0
}

/// The copy probe's size, bytes (the round-trip program's `--copy`).
pub const COPY_BYTES: u64 = 16_384;

/// How far past the source, modulo 4096, the copy probe puts its slow copy's destination.
pub const COPY_ALIAS: u64 = 16;

/// A copy whose destination lies [`COPY_ALIAS`] bytes past its source (modulo 4096) slower than
/// this many times an aligned one: `calibrate` warns that what a message costs on this CPU
/// depends on where the program's buffers lie.
pub const COPY_WARNING: f64 = 2.0;

/// What [`measure_local`] times.
pub(super) struct Local {
    pub(super) poll_ns: f64,
    /// A posted receive (`MPI_Irecv` of a message not yet sent), the median of batches: the
    /// model's `post`.
    pub(super) post_ns: f64,
    /// A completion call on complete requests (`MPI_Wait` on a cancelled receive), the median
    /// of batches: the model's `wait` (None: an older round-trip program timed none).
    pub(super) wait_ns: Option<f64>,
    pub(super) reduction: Reduction,
    pub(super) progress_wait_ns: f64,
    pub(super) progress_rtt_ns: f64,
    /// Aligned, aliased, at [`COPY_BYTES`].
    pub(super) copy_ns: (f64, f64),
    /// The aligned copies over [`reduce::SIZES`], and their line.
    pub(super) copying: Reduction,
    /// A `malloc` and `free` of each of [`reduce::SIZES`], ns (the probe's `alloc` lines).
    pub(super) allocs: Vec<(u64, f64)>,
    /// The clock's own interval, taken out of each of the probes' medians above, ns.
    pub(super) clock_ns: f64,
    /// The held probe's sizes and medians (its `--held`): a memcpy into the buffer just sent
    /// and into one not sent, a reduction into each, ns.
    pub(super) held: Vec<(u64, [f64; 4])>,
    /// The cores' cache-line round trip after the launch's one size (its `--line`), ns.
    pub(super) line_ns: Option<f64>,
    /// The alias probe's sizes and medians (its `--alias`): an exchange into a page-aligned
    /// receive buffer and into one [`COPY_ALIAS`] bytes past a page's start, ns.
    pub(super) alias: Vec<(u64, f64, f64)>,
    /// The drained probe's sizes and medians (its `--drained`): a receive of an eager message
    /// that arrived while its rank computed, and of one that arrived while it waited inside
    /// another call, ns (the clock's interval taken out).
    pub(super) drained: Vec<(u64, f64, f64)>,
}

/// The drained probe's sizes ([`measure_local`]): eager under both libraries' limits here
/// (Open MPI's 4,040 B, MPICH's 8,255 B); [`drained_finding`] keeps those at or under the set's.
const DRAINED_SIZES: [u64; 5] = [8, 256, 1024, 4000, 8000];

/// The held and alias probes' sizes ([`measure_local`]): above the libraries' eager limits
/// here, so that the peer's single copy reads the buffer sent.
const SINGLE_COPY_SIZES: [u64; 3] = [16_384, 65_536, 262_144];

/// What a collective's own write into lines its peer has just read costs more, ns a byte (the
/// model's §15, `held`): over the held probe's sizes above `limit` (sent by rendezvous), the
/// median of a memcpy's time into the buffer just sent less its time into one not sent, a
/// byte (0 at least). None where no size lies above `limit`.
pub fn held_rate(held: &[(u64, [f64; 4])], limit: u64) -> Option<f64> {
    let each: Vec<f64> = (held.iter())
        .filter(|(k, _)| *k > limit)
        .map(|(k, [sent, own, ..])| ((sent - own) / *k as f64).max(0.0))
        .collect();
    (!each.is_empty()).then(|| super::fit::median(&each))
}

/// `held_reduce` (the model's §15): as [`held_rate`], of the probe's reductions
/// (`MPI_Reduce_local` into the buffer just sent against one not sent).
pub fn held_reduce_rate(held: &[(u64, [f64; 4])], limit: u64) -> Option<f64> {
    let each: Vec<f64> = (held.iter())
        .filter(|(k, _)| *k > limit)
        .map(|(k, [.., sent, own])| ((sent - own) / *k as f64).max(0.0))
        .collect();
    (!each.is_empty()).then(|| super::fit::median(&each))
}

/// [`held_rate`] in words, with the probe's figures.
pub fn held_finding(held: &[(u64, [f64; 4])], limit: u64) -> Option<String> {
    let rate = held_rate(held, limit)?;
    let above: Vec<_> = held.iter().filter(|(k, _)| *k > limit).collect();
    let copies: Vec<String> = (above.iter())
        .map(|(k, [s, o, ..])| format!("{k} B {:.2} µs against {:.2}", s / 1e3, o / 1e3))
        .collect();
    let reduced = held_reduce_rate(held, limit)?;
    Some(format!(
        "{rate:.4} ns a byte more for a collective's own write into lines its peer has just read \
         (a buffer it sends from by rendezvous; the model's §15): a memcpy into the buffer just \
         sent against one not sent, the median a byte ({}); a reduction (MPI_Reduce_local) so \
         costs {reduced:.4} ns a byte more, written as `held_reduce` (a recursive doubling's \
         result reduced into the buffer it has just sent)",
        copies.join("; "),
    ))
}

/// The least a timed copy, reduction or allocation is taken to cost once the clock's own
/// interval is out of it, ns (a median at or under the clock's is noise around it).
const MIN_WORK_NS: f64 = 0.5;

/// The most bytes of a temporary whose allocation [`alloc_ns`] takes in: the small ones that
/// glibc's per-thread cache serves (up to 1,032 B), as a small collective's temporaries and
/// every algorithm's arrays of displacements are. Larger ones take from its bins at about
/// twice the cost (70–115 ns against 40–45 here), and from 128 KiB on, where it maps memory,
/// a cost that depends on what the program allocated before: neither is modeled.
pub const ALLOC_MAX_BYTES: u64 = 1024;

/// What a collective's temporary costs (the model's §15 `alloc`): the median over the probe's
/// sizes up to [`ALLOC_MAX_BYTES`] of a `malloc` and `free`, ns; None where it timed none.
pub fn alloc_ns(allocs: &[(u64, f64)]) -> Option<f64> {
    let each: Vec<f64> = (allocs.iter())
        .filter(|(k, _)| *k <= ALLOC_MAX_BYTES)
        .map(|p| p.1)
        .collect();
    (!each.is_empty()).then(|| super::fit::median(&each))
}

/// [`alloc_ns`] in words, with the probe's figures and the clock's interval taken out of
/// them; None where the probe timed no allocation.
pub fn alloc_finding(c: &super::Calibration) -> Option<String> {
    let ns = alloc_ns(&c.allocs)?;
    let each: Vec<String> = (c.allocs.iter())
        .map(|(k, t)| format!("{k} B {t:.0}"))
        .collect();
    Some(format!(
        "{ns:.0} ns a collective's temporary buffer (malloc and free, the median up to \
         {ALLOC_MAX_BYTES} B: {} ns; the model's §15); the clock's own {:.0} ns taken out of \
         each copy, reduction and allocation timed",
        each.join(", "),
        c.clock_ns
    ))
}

/// Batches of failed polls the round-trip program times (`--poll`).
const POLL_BATCHES: u32 = 101;

/// What the round trips do not tell, timed by the round-trip program in one launch: a failed
/// poll, the median over batches of failed `MPI_Test` and `MPI_Iprobe` calls (its `--poll`);
/// the library's reduction over [`reduce::SIZES`] (its `--reduce`), fitted for `gamma`; and
/// whether a posted receive's message moves while its rank computes (its `--progress`).
pub(super) fn measure_local(opts: &Options, log: &mut dyn FnMut(String)) -> Result<Local, Error> {
    let single: Vec<String> = (SINGLE_COPY_SIZES.iter())
        .filter(|&&k| k <= opts.max_bytes.max(SINGLE_COPY_SIZES[0]))
        .map(u64::to_string)
        .collect();
    let (prog, pre) = opts
        .mpirun
        .split_first()
        .ok_or_else(|| Error::Usage("--mpirun is empty".into()))?;
    log(format!(
        "timing {POLL_BATCHES} batches of failed polls, and MPI_Reduce_local on {} sizes",
        reduce::SIZES.len()
    ));
    let sizes: Vec<String> = reduce::SIZES.iter().map(u64::to_string).collect();
    let mut cmd = Command::new(prog);
    cmd.args(pre)
        .args(["-np", &opts.np.to_string()])
        .arg(&opts.rtt)
        .args(["--sizes", "0", "--w", "0", "--reps", &opts.reps.to_string()])
        .args(["--time-ms", &opts.time_ms.to_string()])
        .args(["--poll", &POLL_BATCHES.to_string()])
        .args(["--reduce", &sizes.join(",")])
        .args(["--progress", &PROGRESS_BYTES.to_string()])
        .args(["--copy", &sizes.join(",")])
        .args(["--held", &single.join(",")])
        .args(["--alias", &single.join(",")])
        .args(["--drained", &DRAINED_SIZES.map(|k| k.to_string()).join(",")])
        .args(["--line", &super::LINE_TRIPS.to_string()]);
    let out = launch(&mut cmd, RTT_DONE, log)
        .map_err(|e| Error::Io(format!("cannot run {prog}: {e}")))?;
    let text = out.stdout;
    // The first figure of the line that `key` begins (`poll` and `post`: their medians).
    let first = |key: &str| {
        text.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(key)).then(|| w.next()?.parse::<f64>().ok())?
        })
    };
    let (median, post) = (first("poll"), first("post"));
    // Each repetition of the local probes holds one interval of the clock's own (older builds
    // print none: nothing taken out).
    let clock = first("clock").unwrap_or(0.0);
    let net = |t: f64| (t - clock).max(MIN_WORK_NS);
    let reduction = Reduction::fit(
        (reduce::parse(&text).into_iter())
            .map(|(k, t)| (k, net(t)))
            .collect(),
    );
    let progress = text
        .lines()
        .find_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["progress", _, wait, rtt, ..] => Some((wait.parse().ok()?, rtt.parse().ok()?)),
            _ => None,
        });
    // A repetition under 16 KiB times a batch of copies (one interval of the clock's in all;
    // older builds time one).
    let copies: Vec<(u64, f64, f64)> = (text.lines())
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["copy", k, aligned, aliased, _, ref batch @ ..] => {
                let n = batch.first().map_or(Some(1.0), |b| b.parse::<f64>().ok())?;
                Some((
                    k.parse().ok()?,
                    net(aligned.parse().ok()?) / n,
                    net(aliased.parse().ok()?) / n,
                ))
            }
            _ => None,
        })
        .collect();
    let allocs: Vec<(u64, f64)> = (text.lines())
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["alloc", k, t, ..] => Some((k.parse().ok()?, net(t.parse().ok()?))),
            _ => None,
        })
        .collect();
    let copy = (copies.iter())
        .find(|c| c.0 == COPY_BYTES)
        .map(|c| (c.1, c.2));
    let copying = Reduction::fit(copies.iter().map(|c| (c.0, c.1)).collect());
    let held: Vec<(u64, [f64; 4])> = (text.lines())
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["held", k, a, b, c, d, ..] => Some((
                k.parse().ok()?,
                [
                    a.parse().ok()?,
                    b.parse().ok()?,
                    c.parse().ok()?,
                    d.parse().ok()?,
                ],
            )),
            _ => None,
        })
        .collect();
    let alias: Vec<(u64, f64, f64)> = (text.lines())
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["alias", k, a, b, ..] => Some((k.parse().ok()?, a.parse().ok()?, b.parse().ok()?)),
            _ => None,
        })
        .collect();
    let drained: Vec<(u64, f64, f64)> = (text.lines())
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["drained", k, a, b, ..] => {
                Some((k.parse().ok()?, net(a.parse().ok()?), net(b.parse().ok()?)))
            }
            _ => None,
        })
        .collect();
    let line_ns = super::launch::read_launch(&text)
        .line
        .map(|[_, after]| after);
    match (out.ok, median.zip(post), reduction, progress, copy, copying) {
        (true, Some((ns, post_ns)), Some(r), Some((wait, rtt)), Some(copy_ns), Some(copying)) => {
            Ok(Local {
                poll_ns: ns,
                post_ns,
                wait_ns: first("waitdone"),
                reduction: r,
                progress_wait_ns: wait,
                progress_rtt_ns: rtt,
                copy_ns,
                copying,
                allocs,
                clock_ns: clock,
                held,
                line_ns,
                alias,
                drained,
            })
        }
        _ => Err(Error::Io(format!(
            "the round-trip program did not time failed polls, posted receives, reductions, progress and copies ({}): {}{}\n(rebuild it with \
             `make -C tracer`: older builds have no --poll (or time no posted receives with it), --reduce, --progress or --copy)",
            out.status,
            text.trim(),
            out.stderr.trim()
        ))),
    }
}

/// `alias` (the model's §9, "Where buffers lie"): what the alias probe's exchange took more a
/// byte received with its buffers aliased, the median over its sizes above `limit` (the set's
/// `S`: a single copy). Both messages of the exchange are copied at once, one on each rank, so
/// the exchange takes one copy's extra: the replay charges `alias` a byte on each receive
/// whose buffers alias, and the exchange comes out as measured.
pub fn alias_rate(alias: &[(u64, f64, f64)], limit: u64) -> Option<f64> {
    let each: Vec<f64> = (alias.iter())
        .filter(|a| a.0 > limit && a.1 > 0.0)
        .map(|&(k, aligned, aliased)| ((aliased - aligned) / k as f64).max(0.0))
        .collect();
    (!each.is_empty()).then(|| super::fit::median(&each))
}

/// What the alias probe found (its sizes and medians, ns: into a page-aligned receive buffer
/// and into one [`COPY_ALIAS`] bytes past a page's start) at the sizes above the set's `S`
/// (`limit`: rendezvous, the receiver's single copy), in words, and whether it is a warning
/// (slower by more than [`COPY_WARNING`] at some size); None where it timed none of them.
pub fn alias_finding(alias: &[(u64, f64, f64)], limit: u64) -> Option<(String, bool)> {
    let above: Vec<_> = (alias.iter())
        .filter(|a| a.0 > limit && a.1 > 0.0)
        .collect();
    let worst = above.iter().map(|a| a.2 / a.1).fold(0.0f64, f64::max);
    let sizes = (above.iter())
        .map(|a| {
            format!(
                "{} B {:.1}× ({:.1} µs against {:.1})",
                a.0,
                a.2 / a.1,
                a.2 / 1e3,
                a.1 / 1e3
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let what = format!(
        "a rendezvous message received {COPY_ALIAS} bytes past its send buffer modulo 4096 \
         (an exchange of one each way): {sizes}"
    );
    let rate = alias_rate(alias, limit).unwrap_or(0.0);
    Some(match worst > COPY_WARNING {
        true => (
            format!(
                "{what}: the receiver's single copy runs into 4 KiB aliasing (alias = {rate:.3} \
                 ns a byte more), costed where a trace says where both buffers start in their \
                 pages (the tracer records it); a collective's own temporaries, which no trace \
                 shows, and a trace without the offsets run slower than predicted where their \
                 buffers fall so (the model's §9, \"Where buffers lie\")"
            ),
            true,
        ),
        false if !above.is_empty() => (
            format!("{what}: where buffers lie does not matter here"),
            false,
        ),
        false => return None,
    })
}

/// `drained` (the model's §14, "Messages taken in while waiting"): what the drained probe's
/// receive took where its rank waited inside another call, at its sizes at or under `limit`
/// (the set's `S`: eager); None where it timed none of them.
pub fn drained_points(drained: &[(u64, f64, f64)], limit: u64) -> Option<BySize> {
    let points: Vec<(u64, f64)> = (drained.iter())
        .filter(|d| d.0 <= limit && d.1 > 0.0)
        .map(|d| (d.0, d.2))
        .collect();
    BySize::new(SizeParam::Drained, &points).ok()
}

/// What the drained probe found (its sizes and medians, ns: a receive of an eager message that
/// arrived while its rank computed, and of one that arrived while it waited inside another
/// call) at the sizes at or under the set's `S`, against what the set costs a receive of a
/// message already there (`T3`, and `Od` where its send returned at the departure), in words,
/// and whether a waiting rank's receive took under half the computing one's at some size.
/// None where it timed none of them.
pub fn drained_finding(
    drained: &[(u64, f64, f64)],
    p: &crate::model::Params,
) -> Option<(String, bool)> {
    let eager: Vec<_> = (drained.iter())
        .filter(|d| d.0 <= p.S && d.1 > 0.0)
        .collect();
    let last = eager.last()?;
    let list = |f: &dyn Fn(&(u64, f64, f64)) -> f64| {
        (eager.iter())
            .map(|&d| format!("{:.0}", f(d)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sizes = (eager.iter())
        .map(|d| d.0.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let what = format!(
        "an eager message of {sizes} B that arrived while its receiver waited inside another MPI \
         call was received in {} ns, one that arrived while it computed in {} ns; the set costs \
         both {} ns (T3, the model's §14)",
        list(&|d| d.2),
        list(&|d| d.1),
        list(&|d| p.recv_busy(d.0, false)),
    );
    let most = (eager.iter())
        .map(|d| p.recv_busy(d.0, false) - d.2)
        .fold(0.0f64, f64::max);
    Some(match eager.iter().any(|d| d.2 < 0.5 * d.1) {
        true => (
            format!(
                "{what}: the library takes a message in while its rank waits inside a call; a \
                 receive that finds its message there after a wait (collectives back to back, a \
                 Recv after a Recv from another rank) costs up to {most:.0} ns less than T3 (up \
                 to {} B here). Written into the sets, `{}`: such receives cost so, and a receive \
                 behind another in one completion call saves what one at the least size saves \
                 (the model's §14)",
                last.0,
                drained_points(drained, p.S).map_or(String::new(), |b| b.toml().trim().to_string()),
            ),
            true,
        ),
        false => (format!("{what}: the two differ little here"), false),
    })
}

/// What the copy probe found (its medians, ns), in words, and whether it is a warning.
pub fn copy_finding(fast: f64, slow: f64) -> (String, bool) {
    let ratio = slow / fast.max(1.0);
    let warn = ratio > COPY_WARNING;
    let what = format!(
        "a {COPY_BYTES}-byte memcpy takes {:.2} µs between page-aligned buffers and {:.2} µs ({ratio:.1}×) with the destination {COPY_ALIAS} bytes past the source modulo 4096",
        fast / 1e3,
        slow / 1e3
    );
    match warn {
        true => (
            format!(
                "{what}: on this CPU a message costs more where the buffers it is copied between lie so (4 KiB aliasing); \
                 no parameter carries that, so a program whose buffers fall so runs slower than predicted (page-aligned buffers avoid it)"
            ),
            true,
        ),
        false => (
            format!("{what}: where buffers lie does not matter here"),
            false,
        ),
    }
}
