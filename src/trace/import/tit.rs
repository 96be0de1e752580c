//! SimGrid's time-independent traces (SMPI's `smpi_replay.cpp`): `RANK ACTION ARGS` lines, all
//! ranks in one file, or one file per rank named line by line in a list file. Sizes are in
//! datatype elements (MPI_BYTE unless `init` has an argument: MPI_DOUBLE, as SimGrid's), times
//! are not recorded: `compute F` advances the rank's clock by `F × flop_ns`, every call takes
//! no time, and a reduction's `comp_size` flops follow its call, as SMPI executes them.

use super::{Call, Notes, Requests, build, simgrid_type_bytes};
use crate::error::TraceError;
use crate::trace::{Completion, RecvHalf, Routine, Trace};
use std::path::{Path, PathBuf};

const ACTIONS: &[&str] = &[
    "init",
    "finalize",
    "comm_size",
    "comm_split",
    "comm_dup",
    "send",
    "isend",
    "recv",
    "irecv",
    "test",
    "sendRecv",
    "wait",
    "waitall",
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "alltoall",
    "alltoallv",
    "gather",
    "scatter",
    "gatherv",
    "scatterv",
    "allgather",
    "allgatherv",
    "reducescatter",
    "scan",
    "exscan",
    "compute",
    "sleep",
    "location",
];

/// `RANK ACTION …` with a known action.
pub(super) fn is_action(line: &str) -> bool {
    let mut t = line.split_whitespace();
    t.next().is_some_and(|r| r.parse::<u32>().is_ok())
        && t.next().is_some_and(|a| ACTIONS.contains(&a))
}

/// Whether `text` (the head of `path`) lists files of actions, one a line.
pub(super) fn lists_files(path: &Path, text: &str) -> bool {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    lines.next().is_some_and(|l| {
        listed(path, l).is_some_and(|f| {
            std::fs::read_to_string(f).is_ok_and(|t| t.lines().any(|l| is_action(l.trim())))
        })
    })
}

/// The files `text` (the whole of `path`) lists, if it is a list file and they all exist.
pub(super) fn listed_files(path: &Path, text: &str) -> Option<Vec<PathBuf>> {
    if !lists_files(path, text) {
        return None;
    }
    let lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    lines.map(|l| listed(path, l)).collect()
}

/// The file a list file names: as written (from the working directory), beside the list, or
/// its last component beside the list (SimGrid's examples name them from their parent).
fn listed(list: &Path, line: &str) -> Option<PathBuf> {
    let dir = list.parent().unwrap_or(Path::new(""));
    let named = Path::new(line);
    [
        named.to_path_buf(),
        dir.join(named),
        dir.join(named.file_name()?),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

pub(super) fn load(path: &Path, flop_ns: f64) -> Result<Trace, TraceError> {
    let name = path.display().to_string();
    let read = |p: &Path| {
        std::fs::read_to_string(p)
            .map_err(|e| TraceError::at(&p.display().to_string(), format!("cannot read: {e}")))
    };
    let text = read(path)?;
    let files: Vec<(String, String)> = if lists_files(path, &text) {
        let mut files = Vec::new();
        for (n, l) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let f = listed(path, l.trim()).ok_or_else(|| {
                TraceError::line(
                    &name,
                    n + 1,
                    format!(
                        "expected a file of actions, found `{}` (no such file)",
                        l.trim()
                    ),
                )
            })?;
            files.push((f.display().to_string(), read(&f)?));
        }
        files
    } else {
        vec![(name.clone(), text)]
    };
    parse(&name, &files, flop_ns)
}

/// The trace of `files` (name, text), their lines of any ranks in any order.
pub(super) fn parse(
    name: &str,
    files: &[(String, String)],
    flop_ns: f64,
) -> Result<Trace, TraceError> {
    // Every action line, by rank: (file, line number, its words after the rank).
    let mut ranks: Vec<Vec<(usize, usize, Vec<&str>)>> = Vec::new();
    for (f, (file, text)) in files.iter().enumerate() {
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let mut words = line.split_whitespace();
            let rank = words
                .next()
                .and_then(|r| r.parse::<usize>().ok())
                .filter(|&r| r < 1 << 20);
            let Some(rank) = rank else {
                return Err(TraceError::line(
                    file,
                    n + 1,
                    format!("expected `RANK ACTION ARGS…` with a rank below 2^20, found `{line}`"),
                ));
            };
            if ranks.len() <= rank {
                ranks.resize_with(rank + 1, Vec::new);
            }
            ranks[rank].push((f, n + 1, words.collect()));
        }
    }
    let p = ranks.len();
    let mut notes = Notes::default();
    notes.say(format!(
        "a time-independent trace records no times: each `compute` takes {flop_ns} ns a flop \
         (--flops sets the rate), every call no time, so the measured runtime is the computation \
         alone; the ranks are taken as one node"
    ));
    let mut calls = Vec::with_capacity(p);
    for (r, lines) in ranks.iter().enumerate() {
        let mut rank = Rank {
            me: r as i32,
            p,
            t: 0.0,
            elem: 1,
            flop_ns,
            reqs: Requests::new(),
            calls: Vec::new(),
        };
        for (f, n, words) in lines {
            rank.action(words, &mut notes)
                .map_err(|m| TraceError::line(&files[*f].0, *n, m).in_event(r, rank.calls.len()))?;
        }
        calls.push(rank.calls);
    }
    build(name, calls, notes, Vec::new())
}

struct Rank {
    me: i32,
    p: usize,
    /// The rank's clock, ns.
    t: f64,
    /// Bytes of the default datatype.
    elem: u64,
    flop_ns: f64,
    /// Open requests by (source, destination, tag), as SMPI keys them.
    reqs: Requests<(i32, i32, i32)>,
    calls: Vec<Call>,
}

impl Rank {
    fn now(&self) -> (u64, u64) {
        let t = self.t.round() as u64;
        (t, t)
    }

    fn action(&mut self, words: &[&str], notes: &mut Notes) -> Result<(), String> {
        let action = *words.first().ok_or("expected an action after the rank")?;
        let args = &words[1..];
        let num = |i: usize| -> Result<f64, String> {
            let w = args
                .get(i)
                .ok_or_else(|| format!("`{action}` expects an argument {}", i + 1))?;
            w.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= -1.0)
                .ok_or_else(|| {
                    format!(
                        "expected a number for argument {} of `{action}`, found `{w}`",
                        i + 1
                    )
                })
        };
        let int = |i: usize| num(i).map(|v| v.trunc() as i64);
        let count = |i: usize| {
            int(i).and_then(|v| {
                u64::try_from(v).map_err(|_| {
                    format!("expected a count ≥ 0 for argument {} of `{action}`", i + 1)
                })
            })
        };
        // An optional datatype argument: its size, else the default's.
        let dt = |i: usize| -> Result<u64, String> {
            match args.get(i) {
                None => Ok(self.elem),
                Some(w) => w
                    .parse::<i64>()
                    .ok()
                    .and_then(simgrid_type_bytes)
                    .ok_or_else(|| format!("expected a SimGrid datatype id (0–59) for argument {} of `{action}`, found `{w}`", i + 1)),
            }
        };
        let rank = |i: usize| -> Result<i32, String> {
            let v = int(i)?;
            if (0..self.p as i64).contains(&v) {
                Ok(v as i32)
            } else {
                Err(format!(
                    "expected a rank below {} for argument {} of `{action}`, found {v}",
                    self.p,
                    i + 1
                ))
            }
        };
        let counts = |from: usize, size: u64| -> Result<Vec<u64>, String> {
            (from..from + self.p)
                .map(|i| count(i).map(|c| c * size))
                .collect()
        };
        let t = self.now();
        let me = self.me;
        match action {
            "init" => {
                self.elem = if args.is_empty() { 1 } else { 8 };
                self.calls.push(Call::new(Routine::Init, t.0, t.1));
            }
            "finalize" => self.calls.push(Call::new(Routine::Finalize, t.0, t.1)),
            "comm_size" | "comm_split" | "comm_dup" | "location" => notes.skip(action),
            "compute" => self.t += num(0)? * self.flop_ns,
            "sleep" => self.t += num(0)? * 1e9,
            "send" | "isend" | "recv" | "irecv" => {
                let (partner, tag, bytes) = (rank(0)?, int(1)? as i32, count(2)? * dt(3)?);
                let routine = match action {
                    "send" => Routine::Send,
                    "isend" => Routine::Isend,
                    "recv" => Routine::Recv,
                    _ => Routine::Irecv,
                };
                let mut c = Call::p2p(routine, t, bytes, partner, tag);
                if routine.creates_request() {
                    let (key, status) = if routine == Routine::Isend {
                        ((me, partner, tag), None)
                    } else {
                        ((partner, me, tag), Some((partner, tag)))
                    };
                    c.e.id = self.reqs.create(key, status) as i64;
                }
                self.calls.push(c);
            }
            "wait" | "test" => {
                let key = (int(0)? as i32, int(1)? as i32, int(2)? as i32);
                // A test may or may not have completed it: SMPI's trace does not say; it stays
                // open for the wait or waitall after it (or pending at the end).
                let done: Vec<Completion> = match action {
                    "wait" => self.reqs.complete(&key).into_iter().collect(),
                    _ => Vec::new(),
                };
                let mut c = Call::new(
                    if action == "wait" {
                        Routine::Wait
                    } else {
                        Routine::Test
                    },
                    t.0,
                    t.1,
                );
                c.done = done;
                self.calls.push(c);
            }
            "waitall" => {
                let mut c = Call::new(Routine::Waitall, t.0, t.1);
                c.done = self.reqs.complete_all();
                self.calls.push(c);
            }
            "sendRecv" => {
                let (sent, dst) = (count(0)? * dt(4)?, rank(1)?);
                let (got, src) = (count(2)? * dt(5)?, rank(3)?);
                let mut c = Call::p2p(Routine::Sendrecv, t, sent, dst, 0);
                c.half = Some(RecvHalf {
                    bytes: got,
                    source: src,
                    tag: 0,
                });
                self.calls.push(c);
            }
            "barrier" => self.calls.push(Call::coll(Routine::Barrier, t, -1, 0, 0)),
            "bcast" => {
                let n = count(0)? * dt(2)?;
                let root = if args.len() > 1 { rank(1)? } else { 0 };
                let (sent, got) = if root == me { (n, 0) } else { (0, n) };
                self.calls
                    .push(Call::coll(Routine::Bcast, t, root, sent, got));
            }
            "reduce" => {
                let n = count(0)? * dt(3)?;
                let root = if args.len() > 2 { rank(2)? } else { 0 };
                self.calls.push(Call::coll(
                    Routine::Reduce,
                    t,
                    root,
                    n,
                    if root == me { n } else { 0 },
                ));
                self.t += num(1)? * self.flop_ns;
            }
            "allreduce" | "scan" | "exscan" => {
                let n = count(0)? * dt(2)?;
                let routine = match action {
                    "allreduce" => Routine::Allreduce,
                    "scan" => Routine::Scan,
                    _ => Routine::Exscan,
                };
                self.calls.push(Call::coll(routine, t, -1, n, n));
                self.t += num(1)? * self.flop_ns;
            }
            "alltoall" => {
                let p = self.p as u64;
                let c = Call::coll(
                    Routine::Alltoall,
                    t,
                    -1,
                    count(0)? * dt(2)? * p,
                    count(1)? * dt(3)? * p,
                );
                self.calls.push(c);
            }
            "gather" | "allgather" => {
                let rooted = action == "gather";
                let k = if rooted { 3 } else { 2 };
                let (sent, block) = (count(0)? * dt(k)?, count(1)? * dt(k + 1)?);
                let c = if rooted {
                    let root = if args.len() > 2 { rank(2)? } else { 0 };
                    let got = if root == me { block * self.p as u64 } else { 0 };
                    Call::coll(Routine::Gather, t, root, sent, got)
                } else {
                    Call::coll(Routine::Allgather, t, -1, sent, block * self.p as u64)
                };
                self.calls.push(c);
            }
            "scatter" => {
                let root = if args.len() > 2 { rank(2)? } else { 0 };
                let block = if root == me { count(0)? * dt(3)? } else { 0 };
                let c = Call::coll(
                    Routine::Scatter,
                    t,
                    root,
                    block * self.p as u64,
                    count(1)? * dt(4)?,
                );
                self.calls.push(c);
            }
            "gatherv" | "allgatherv" => {
                let p = self.p;
                let rooted = action == "gatherv";
                let k = if rooted { p + 2 } else { p + 1 };
                let sent = count(0)? * dt(k)?;
                let all = counts(1, dt(k + 1)?)?;
                let c = if rooted {
                    let root = if args.len() > p + 1 { rank(p + 1)? } else { 0 };
                    let mine = if root == me { all } else { Vec::new() };
                    let mut c = Call::coll(Routine::Gatherv, t, root, sent, mine.iter().sum());
                    c.coll = Some((mine.iter().sum(), mine));
                    c
                } else {
                    let mut c = Call::coll(Routine::Allgatherv, t, -1, sent, all.iter().sum());
                    c.coll = Some((all.iter().sum(), all));
                    c
                };
                self.calls.push(c);
            }
            "scatterv" => {
                let p = self.p;
                let root = if args.len() > p + 1 { rank(p + 1)? } else { 0 };
                let all = counts(0, dt(p + 2)?)?;
                let got = count(p)? * dt(p + 3)?;
                let mine = if root == me { all } else { Vec::new() };
                let mut c = Call::coll(Routine::Scatterv, t, root, mine.iter().sum(), got);
                c.coll = Some((got, mine));
                self.calls.push(c);
            }
            "reducescatter" => {
                let p = self.p;
                let all = counts(0, dt(p + 1)?)?;
                let mut c = Call::coll(
                    Routine::ReduceScatter,
                    t,
                    -1,
                    all.iter().sum(),
                    all[me as usize],
                );
                c.coll = Some((all[me as usize], all));
                self.calls.push(c);
                self.t += num(p)? * self.flop_ns;
            }
            "alltoallv" => {
                let p = self.p;
                let sends = counts(1, dt(2 * p + 2)?)?;
                let recvs = counts(p + 2, dt(2 * p + 3)?)?;
                let (sent, got) = (sends.iter().sum(), recvs.iter().sum());
                let mut c = Call::coll(Routine::Alltoallv, t, -1, sent, got);
                c.coll = Some((got, [sends, recvs].concat()));
                self.calls.push(c);
            }
            _ => {
                return Err(format!(
                    "expected an action among {}, found `{action}`",
                    ACTIONS.join(" ")
                ));
            }
        }
        Ok(())
    }
}
