//! The predicted run as a timeline in the Chrome trace-event JSON format, which
//! ui.perfetto.dev and chrome://tracing open (`predict --timeline FILE`).
//!
//! Each rank is a process (`pid` = rank) with two threads side by side: `predicted` (tid 0) and
//! `measured` (tid 1). On `predicted`, each MPI call is a slice from its predicted call to its
//! return; inside it, its sender synchronization and then its receiver synchronization are
//! slices of their own, from the call on (a call waits first, then moves its message); the
//! computation before each call is a slice too. On `measured`, each call is a slice from its
//! traced call to its return, on rank 0's clock. A call's slices name its call site (`site` in
//! their args, [`Timeline::with_sites`]) where the trace has one. Each message is a flow arrow from its send's
//! slice to its receive's. Times are microseconds from time 0 (the earliest `MPI_Init` return),
//! to the nanosecond. The model, its parameters and the prediction are in `otherData`. With
//! the critical path ([`Timeline::critical`]), the ranks it crosses get a third track,
//! `critical path` (tid 2), with an arrow where it moves from rank to rank.
//!
//! A file named `.perfetto-trace` gets the same tracks in Perfetto's own protobuf format
//! ([`super::perfetto`]).
//!
//! Written as the replay goes: each batch of costed events is formatted and written at once,
//! so what it holds is a batch, whatever the trace. Events are in no particular order (the
//! format does not ask for one).

use crate::critical::{CriticalPath, Part};
use crate::graph::{HbGraph, NONE};
use crate::replay::Step;
use crate::trace::{PEER_NULL, Shape, Trace};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::sync::Mutex;

/// Which ranks and which stretch of time a timeline keeps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cut {
    /// Inclusive ranges of ranks (None: every rank).
    pub ranks: Option<Vec<(u32, u32)>>,
    /// `[from, to]` ns: a slice is kept where it overlaps it (None: the whole run).
    pub window_ns: Option<(f64, f64)>,
}

impl Cut {
    /// Parses `--ranks`: ranks and ranges, `0,4,8-15`.
    pub fn parse_ranks(s: &str) -> Result<Vec<(u32, u32)>, String> {
        s.split(',')
            .map(|part| {
                let num = |x: &str| {
                    x.trim().parse::<u32>().map_err(|_| {
                        format!("`{x}` in --ranks {s} is not a rank (ranks: 0,4,8-15)")
                    })
                };
                match part.split_once('-') {
                    Some((a, b)) => {
                        let (a, b) = (num(a)?, num(b)?);
                        match a <= b {
                            true => Ok((a, b)),
                            false => Err(format!("the range {part} in --ranks runs backwards")),
                        }
                    }
                    None => num(part).map(|a| (a, a)),
                }
            })
            .collect()
    }

    /// Parses `--window T0:T1`: two times, each a number with a unit (`s`, `ms`, `us` or `µs`,
    /// `ns`; seconds without one), T0 before T1. Returns ns.
    pub fn parse_window(s: &str) -> Result<(f64, f64), String> {
        let time = |x: &str| -> Result<f64, String> {
            let x = x.trim();
            let (num, scale) = [
                ("ms", 1e6),
                ("us", 1e3),
                ("µs", 1e3),
                ("ns", 1.0),
                ("s", 1e9),
            ]
            .iter()
            .find_map(|&(u, f)| x.strip_suffix(u).map(|n| (n, f)))
            .unwrap_or((x, 1e9));
            match num.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(v * scale),
                _ => Err(format!(
                    "`{x}` in --window {s} is not a time (e.g. 0.5ms; seconds without a unit)"
                )),
            }
        };
        let (a, b) = s
            .split_once(':')
            .ok_or_else(|| format!("--window {s}: expected T0:T1 (e.g. 0:2ms)"))?;
        let (a, b) = (time(a)?, time(b)?);
        match a < b {
            true => Ok((a, b)),
            false => Err(format!("--window {s}: T0 must come before T1")),
        }
    }

    pub fn keeps_rank(&self, r: u32) -> bool {
        self.ranks
            .as_ref()
            .is_none_or(|v| v.iter().any(|&(a, b)| (a..=b).contains(&r)))
    }

    pub(crate) fn keeps(&self, from: f64, to: f64) -> bool {
        self.window_ns.is_none_or(|(a, b)| to >= a && from <= b)
    }
}

/// Bytes of formatted events a thread holds before it writes them.
const CHUNK: usize = 1 << 16;

/// A timeline being written: [`Timeline::observe`] is the replay's observer.
pub struct Timeline<'a, W: Write + Send> {
    trace: &'a Trace,
    g: &'a HbGraph,
    t0: f64,
    cut: Cut,
    out: Mutex<Out<W>>,
    /// Each rank's call sites' names as JSON strings, by index in its site table
    /// ([`Timeline::with_sites`]); empty: no `site` in the slices' args.
    sites: Vec<Vec<String>>,
}

struct Out<W> {
    w: W,
    /// The first write error (writing stops there; [`Timeline::finish`] reports it).
    error: Option<io::Error>,
    /// Trace events written.
    events: u64,
}

/// Microseconds to the nanosecond, as the format's `ts` and `dur` are.
struct Us(f64);

impl std::fmt::Display for Us {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.3}", self.0 / 1e3)
    }
}

impl<'a, W: Write + Send> Timeline<'a, W> {
    /// Starts the file: the array of events, with each kept rank's names.
    pub fn new(trace: &'a Trace, g: &'a HbGraph, cut: Cut, w: W) -> io::Result<Self> {
        let tl = Timeline {
            trace,
            g,
            t0: trace.measured_t0(),
            cut,
            out: Mutex::new(Out {
                w,
                error: None,
                events: 0,
            }),
            sites: Vec::new(),
        };
        {
            let mut o = tl.out.lock().expect("timeline");
            o.w.write_all(b"{\"traceEvents\":[\n")?;
            // The first element has no comma before it: a name for the whole file.
            o.w.write_all(
                b"{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":-1,\"args\":{\"name\":\"loggps-predict\"}}",
            )?;
        }
        let mut s = String::new();
        for r in (0..trace.nranks() as u32).filter(|&r| tl.cut.keeps_rank(r)) {
            let _ = write!(
                s,
                ",\n{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{r},\"args\":{{\"name\":\"rank {r}\"}}}}\
                 ,\n{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{r},\"args\":{{\"sort_index\":{r}}}}}\
                 ,\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{r},\"tid\":0,\"args\":{{\"name\":\"predicted\"}}}}\
                 ,\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{r},\"tid\":1,\"args\":{{\"name\":\"measured\"}}}}"
            );
            if s.len() >= CHUNK {
                tl.put(&s, 4);
                s.clear();
            }
        }
        tl.put(&s, 0);
        Ok(tl)
    }

    /// Writes `s` (already comma-led events), counting `n` events.
    fn put(&self, s: &str, n: u64) {
        let mut o = self.out.lock().expect("timeline");
        if o.error.is_none() {
            match o.w.write_all(s.as_bytes()) {
                Ok(()) => o.events += n,
                Err(e) => o.error = Some(e),
            }
        }
    }

    /// Formats and writes a batch of costed events (the replay's observer).
    pub fn observe(&self, steps: &[Step]) {
        let mut s = String::with_capacity(CHUNK + 4096);
        let mut n = 0;
        for st in steps {
            n += self.step(st, &mut s);
            if s.len() >= CHUNK {
                self.put(&s, n);
                s.clear();
                n = 0;
            }
        }
        self.put(&s, n);
    }

    /// Labels each call's slices with its call site: `names[r][i]` for site `i` of rank `r`
    /// ([`crate::callsites::names`]).
    pub fn with_sites(mut self, names: Vec<Vec<String>>) -> Self {
        let json = |n: String| serde_json::to_string(&n).expect("a string");
        self.sites = names
            .into_iter()
            .map(|r| r.into_iter().map(json).collect())
            .collect();
        self
    }

    /// `,"site":NAME` for event `i` of rank `r`, where it has one.
    fn site_arg(&self, r: usize, i: usize) -> String {
        let of = self.trace.sites.as_ref().map(|s| &s.of_event);
        match of.and_then(|of| of.get(self.trace.events.offsets()[r] + i)) {
            Some(&k) if (k as usize) < self.sites.get(r).map_or(0, Vec::len) => {
                format!(",\"site\":{}", self.sites[r][k as usize])
            }
            _ => String::new(),
        }
    }

    /// One costed event's slices, arrows and measured slice; returns how many it wrote.
    fn step(&self, st: &Step, s: &mut String) -> u64 {
        let (r, i) = (st.rank as usize, st.event as usize);
        if !self.cut.keeps_rank(st.rank) {
            return 0;
        }
        let ev = self.trace.rank(r);
        let routine = ev.routine(i);
        let name = routine.mpi_name();
        let mut n = 0;
        let gap = gap_ns(ev, i);
        let from = st.call_ns - gap;
        let pid = st.rank;
        if gap > 0.0 && self.cut.keeps(from, st.call_ns) {
            let _ = write!(
                s,
                ",\n{{\"name\":\"computation\",\"cat\":\"computation\",\"ph\":\"X\",\"pid\":{pid},\"tid\":0,\"ts\":{},\"dur\":{}}}",
                Us(from),
                Us(gap)
            );
            n += 1;
        }
        if self.cut.keeps(st.call_ns, st.return_ns) {
            let _ = write!(
                s,
                ",\n{{\"name\":\"{name}\",\"cat\":\"mpi\",\"ph\":\"X\",\"pid\":{pid},\"tid\":0,\"ts\":{},\"dur\":{},\"args\":{{\"event\":{i}",
                Us(st.call_ns),
                Us(st.return_ns - st.call_ns)
            );
            let peer = ev.peer(i);
            let point_to_point = matches!(
                routine.shape(),
                Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv | Shape::Sendrecv
            );
            if point_to_point && peer != PEER_NULL && peer >= 0 {
                let _ = write!(s, ",\"peer\":{peer}");
            }
            let _ = write!(
                s,
                ",\"bytes\":{},\"communication_ns\":{},\"sender_sync_ns\":{},\"receiver_sync_ns\":{}{}}}}}",
                ev.bytes(i),
                st.communication_ns,
                st.sender_sync_ns,
                st.receiver_sync_ns,
                self.site_arg(r, i)
            );
            n += 1;
            let mut at = st.call_ns;
            for (what, d) in [
                ("sender sync", st.sender_sync_ns),
                ("receiver sync", st.receiver_sync_ns),
            ] {
                if d > 0.0 {
                    let _ = write!(
                        s,
                        ",\n{{\"name\":\"{what}\",\"cat\":\"sync\",\"ph\":\"X\",\"pid\":{pid},\"tid\":0,\"ts\":{},\"dur\":{}}}",
                        Us(at),
                        Us(d)
                    );
                    at += d;
                    n += 1;
                }
            }
            n += self.arrows(r, i, st.call_ns, s);
        }
        let (mc, mr) = measured_ns(self.trace, self.t0, r, i);
        if mr >= mc && self.cut.keeps(mc, mr) {
            let _ = write!(
                s,
                ",\n{{\"name\":\"{name}\",\"cat\":\"mpi\",\"ph\":\"X\",\"pid\":{pid},\"tid\":1,\"ts\":{},\"dur\":{},\"args\":{{\"event\":{i}{}}}}}",
                Us(mc),
                Us(mr - mc),
                self.site_arg(r, i)
            );
            n += 1;
        }
        n
    }

    /// The flow ends at event `i` of rank `r` (called at `at`): a send starts its message's
    /// arrow (its id the send's global event), a receive ends its message's.
    fn arrows(&self, r: usize, i: usize, at: f64, s: &mut String) -> u64 {
        let (out, into) = flow_ends(self.trace, self.g, r, i);
        let mut n = 0;
        for (ph, id) in [("s", out), ("f", into)] {
            let Some(id) = id else { continue };
            let bind = if ph == "f" { ",\"bp\":\"e\"" } else { "" };
            let _ = write!(
                s,
                ",\n{{\"name\":\"message\",\"cat\":\"message\",\"ph\":\"{ph}\",\"id\":{id},\"pid\":{r},\"tid\":0,\"ts\":{}{bind}}}",
                Us(at)
            );
            n += 1;
        }
        n
    }

    /// Adds the critical path ([`crate::critical`]): on each rank it crosses a third track,
    /// `critical path` (tid 2), with its segments (a routine's name, or `computation`), and an
    /// arrow where it moves from a waiting call to the partner it waited for.
    pub fn critical(&self, path: &CriticalPath) {
        let mut s = String::new();
        let mut n = 0;
        let ranks: std::collections::BTreeSet<u32> = path.segments.iter().map(|x| x.rank).collect();
        for r in ranks.into_iter().filter(|&r| self.cut.keeps_rank(r)) {
            let _ = write!(
                s,
                ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{r},\"tid\":2,\"args\":{{\"name\":\"critical path\"}}}}"
            );
        }
        for x in &path.segments {
            if !self.cut.keeps_rank(x.rank) || !self.cut.keeps(x.from_ns, x.to_ns) {
                continue;
            }
            let name = match x.part {
                Part::Computation => "computation",
                _ => self
                    .trace
                    .rank(x.rank as usize)
                    .routine(x.event as usize)
                    .mpi_name(),
            };
            let part = serde_json::to_string(&x.part).unwrap_or_default();
            let _ = write!(
                s,
                ",\n{{\"name\":\"{name}\",\"cat\":\"critical\",\"ph\":\"X\",\"pid\":{},\"tid\":2,\"ts\":{},\"dur\":{},\"args\":{{\"event\":{},\"part\":{part}}}}}",
                x.rank,
                Us(x.from_ns),
                Us(x.to_ns - x.from_ns),
                x.event
            );
            n += 1;
            if s.len() >= CHUNK {
                self.put(&s, n);
                s.clear();
                n = 0;
            }
        }
        // Ids past every event's, which the messages' arrows use.
        let first = self.trace.events.offsets()[self.trace.nranks()];
        for (k, j) in path.jumps.iter().enumerate() {
            let keep = |r: u32| self.cut.keeps_rank(r) && self.cut.keeps(j.at_ns, j.at_ns);
            if !keep(j.partner_rank) || !keep(j.rank) {
                continue;
            }
            for (ph, pid, bind) in [("s", j.partner_rank, ""), ("f", j.rank, ",\"bp\":\"e\"")] {
                let _ = write!(
                    s,
                    ",\n{{\"name\":\"waited for\",\"cat\":\"critical\",\"ph\":\"{ph}\",\"id\":{},\"pid\":{pid},\"tid\":2,\"ts\":{}{bind}}}",
                    first + k,
                    Us(j.at_ns)
                );
                n += 1;
            }
        }
        self.put(&s, n);
    }

    /// Ends the file with `other` (the model, its parameters, the prediction) as `otherData`;
    /// returns the writer and the trace events written, or the first write error.
    pub fn finish(self, other: &serde_json::Value) -> io::Result<(W, u64)> {
        let o = self.out.into_inner().expect("timeline");
        if let Some(e) = o.error {
            return Err(e);
        }
        let mut w = o.w;
        write!(
            w,
            "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{}}}\n",
            serde_json::to_string(other).map_err(io::Error::other)?
        )?;
        w.flush()?;
        Ok((w, o.events))
    }
}

/// The computation before event `i`, as the replay keeps it: the measured gap, ns.
pub(crate) fn gap_ns(ev: crate::trace::Rank<'_>, i: usize) -> f64 {
    match i {
        0 => 0.0,
        _ => (ev.t_call(i) as f64 - ev.t_return(i - 1) as f64).max(0.0),
    }
}

/// Event `i` of rank `r` as measured: its call and return on rank 0's clock from `t0`, ns
/// (`MPI_Init`'s call, before time 0, from 0).
pub(crate) fn measured_ns(trace: &Trace, t0: f64, r: usize, i: usize) -> (f64, f64) {
    let ev = trace.rank(r);
    (
        (trace.corrected_ns(r, ev.t_call(i)) - t0).max(0.0),
        trace.corrected_ns(r, ev.t_return(i)) - t0,
    )
}

/// The messages event `i` of rank `r` starts and ends, by id (the sending event's global
/// index): a send's own, a receive's sender's; a Sendrecv may have both.
pub(crate) fn flow_ends(
    trace: &Trace,
    g: &HbGraph,
    r: usize,
    i: usize,
) -> (Option<usize>, Option<usize>) {
    let me = trace.events.offsets()[r] + i;
    let linked = |e: u32| (e != NONE).then_some(e as usize);
    match trace.rank(r).routine(i).shape() {
        Shape::Send | Shape::Isend => (linked(g.link(r, i)).map(|_| me), None),
        Shape::Recv | Shape::Irecv => (None, linked(g.link(r, i))),
        Shape::Sendrecv => (linked(g.link(r, i)).map(|_| me), linked(g.link2(r, i))),
        _ => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_windows_parse_or_say_why_not() {
        assert_eq!(
            Cut::parse_ranks("0,4,8-15"),
            Ok(vec![(0, 0), (4, 4), (8, 15)])
        );
        assert!(Cut::parse_ranks("3-1").unwrap_err().contains("backwards"));
        assert!(Cut::parse_ranks("a").unwrap_err().contains("`a`"));
        assert_eq!(Cut::parse_window("0:2ms"), Ok((0.0, 2e6)));
        assert_eq!(Cut::parse_window("1.5us:3µs"), Ok((1500.0, 3000.0)));
        assert_eq!(Cut::parse_window("10ns:0.5"), Ok((10.0, 0.5e9)));
        assert!(Cut::parse_window("2:1").unwrap_err().contains("before"));
        assert!(Cut::parse_window("2").unwrap_err().contains("T0:T1"));
        assert!(Cut::parse_window("x:1").unwrap_err().contains("`x`"));
    }

    #[test]
    fn a_cut_keeps_ranks_listed_and_slices_that_overlap_the_window() {
        let cut = Cut {
            ranks: Some(vec![(1, 1), (4, 6)]),
            window_ns: Some((100.0, 200.0)),
        };
        let kept: Vec<u32> = (0..8).filter(|&r| cut.keeps_rank(r)).collect();
        assert_eq!(kept, [1, 4, 5, 6]);
        assert!(cut.keeps(50.0, 100.0) && cut.keeps(150.0, 160.0) && cut.keeps(200.0, 300.0));
        assert!(!cut.keeps(0.0, 99.9) && !cut.keeps(200.1, 300.0));
        assert!(Cut::default().keeps(-1.0, 1e30) && Cut::default().keeps_rank(7));
    }
}
