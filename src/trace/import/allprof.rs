//! LogGOPSim's liballprof traces (`src/liballprof/mpipclog.c`): one text file per rank
//! (`pmpi-trace-rank-N.txt`), a line a call, `MPI_Name:T0:ARG:…:T1` with the arguments in the
//! C prototype's order. Times are microseconds of `MPI_Wtime`; a datatype is `ID,SIZE,EXTENT`,
//! a communicator `ID,RANK,SIZE`, a request the address of its handle, an array its address
//! then its values. No status is recorded: a wildcard receive's source is found by matching
//! ([`super::build`]); communicators' members are not either, so only calls on a communicator of
//! every rank are kept (taken as `MPI_COMM_WORLD`).

use super::{Call, Notes, Requests, build, numbered_siblings};
use crate::error::TraceError;
use crate::trace::{RecvHalf, Routine, Trace};
use std::path::{Path, PathBuf};

/// Whether `text` begins as liballprof's files do.
pub(super) fn is_header(text: &str) -> bool {
    text.starts_with("# htor's PMPI Tracer") || text.starts_with("# collprof")
}

/// A directory's liballprof files, by rank: `*-N.txt` or `*-N.dat` from 0, the first one's
/// name counted up.
pub(super) fn rank_files(dir: &Path) -> Option<Vec<PathBuf>> {
    let mut first: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            (n.ends_with("-0.txt") || n.ends_with("-0.dat"))
                && std::fs::read(p)
                    .is_ok_and(|b| is_header(&String::from_utf8_lossy(&b[..b.len().min(64)])))
        })
        .collect();
    first.sort();
    numbered_siblings(first.first()?)
}

pub(super) fn load(path: &Path) -> Result<Trace, TraceError> {
    let name = path.display().to_string();
    let files = if path.is_dir() {
        rank_files(path)
    } else {
        numbered_siblings(path).filter(|f| f.first().is_some_and(|f| f == path))
    };
    let files = files.ok_or_else(|| {
        TraceError::at(
            &name,
            "expected liballprof's per-rank files from rank 0 (`…-0.txt`, `…-1.txt`, …): give the \
             directory or rank 0's file"
                .into(),
        )
    })?;
    let mut texts = Vec::with_capacity(files.len());
    for f in &files {
        let t = std::fs::read_to_string(f)
            .map_err(|e| TraceError::at(&f.display().to_string(), format!("cannot read: {e}")))?;
        texts.push((f.display().to_string(), t));
    }
    parse(&name, &texts)
}

/// The trace of `files` (name, text), rank 0's first.
pub(super) fn parse(name: &str, files: &[(String, String)]) -> Result<Trace, TraceError> {
    let p = files.len();
    let texts: Vec<&str> = files.iter().map(|(_, t)| t.as_str()).collect();
    // Times are µs of each rank's clock: kept to the ns, from the earliest call of any rank.
    let mut t0 = u64::MAX;
    for t in &texts {
        for l in t.lines().filter(|l| l.starts_with("MPI_")) {
            if let Some(v) = l.split(':').skip(1).find_map(micros) {
                t0 = t0.min(v);
            }
        }
    }
    let mut notes = Notes::default();
    notes.say(format!(
        "liballprof's trace ({p} ranks) records no hosts and no communicators' members: the ranks \
         are taken as one node, and only calls on communicators of all {p} ranks are kept"
    ));
    let mut calls = Vec::with_capacity(p);
    for (r, text) in texts.iter().enumerate() {
        let file = &files[r].0;
        let mut rank = Rank {
            p,
            t0,
            reqs: Requests::new(),
            calls: Vec::new(),
            stride: 8,
        };
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            rank.call(line, &mut notes)
                .map_err(|m| TraceError::line(file, n + 1, m).in_event(r, rank.calls.len()))?;
        }
        calls.push(rank.calls);
    }
    build(name, calls, notes, Vec::new())
}

/// A time field: `1298365588610860`, `1237759886260335.000000` or `3.0` µs, in ns.
fn micros(s: &str) -> Option<u64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let ns = |d: &str| {
        d.bytes()
            .chain(std::iter::repeat(b'0'))
            .take(3)
            .fold(0u64, |a, b| a * 10 + (b - b'0') as u64)
    };
    int.parse::<u64>()
        .ok()?
        .checked_mul(1000)?
        .checked_add(ns(frac))
}

struct Rank {
    p: usize,
    /// The trace's first time, ns.
    t0: u64,
    /// Open requests by the address of their handle.
    reqs: Requests<u64>,
    calls: Vec<Call>,
    /// Bytes between the handles of a request array (4 in old MPICH, else 8).
    stride: u64,
}

impl Rank {
    fn call(&mut self, line: &str, notes: &mut Notes) -> Result<(), String> {
        let f: Vec<&str> = line.split(':').collect();
        let (p, t0) = (self.p, self.t0);
        let routine_name = f[0];
        if f.len() < 3 {
            return Err(format!("expected `MPI_Name:T0:…:T1`, found `{line}`"));
        }
        let time = |s: &str| -> Result<u64, String> {
            micros(s)
                .map(|t| t.saturating_sub(t0))
                .ok_or_else(|| format!("expected a time in µs, found `{s}`"))
        };
        // MPI_Init has no start time (`-`), MPI_Finalize no end.
        let (t_call, t_return) = match routine_name {
            "MPI_Init" | "MPI_Init_thread" => {
                let t = time(f[f.len() - 1])?;
                (t, t)
            }
            "MPI_Finalize" => {
                let t = time(f[1])?;
                (t, t)
            }
            _ => (time(f[1])?, time(f[f.len() - 1])?),
        };
        if t_return < t_call {
            return Err(format!(
                "expected the end time {} µs at or after the start",
                f[f.len() - 1]
            ));
        }
        let t = (t_call, t_return);
        let arg = |i: usize| -> Result<&str, String> {
            f.get(i + 2)
                .filter(|_| i + 3 < f.len())
                .copied()
                .ok_or_else(|| {
                    format!(
                        "{routine_name} expects an argument {}: found `{line}`",
                        i + 1
                    )
                })
        };
        let int = |i: usize| -> Result<i64, String> {
            let a = arg(i)?;
            a.parse().map_err(|_| {
                format!(
                    "expected an integer for argument {} of {routine_name}, found `{a}`",
                    i + 1
                )
            })
        };
        let sub = |i: usize, k: usize| -> Result<i64, String> {
            let a = arg(i)?;
            a.split(',')
                .nth(k)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| {
                    format!(
                        "expected `ID,SIZE,…` for argument {} of {routine_name}, found `{a}`",
                        i + 1
                    )
                })
        };
        let bytes = |count: usize, dt: usize| -> Result<u64, String> {
            let (c, s) = (int(count)?, sub(dt, 1)?);
            u64::try_from(c.max(0) * s.max(0)).map_err(|_| "a byte count out of range".to_string())
        };
        let list = |i: usize| -> Result<Vec<i64>, String> {
            let a = arg(i)?;
            a.split(',').map(|v| v.parse().map_err(|_| format!("expected a list of integers for argument {} of {routine_name}, found `{a}`", i + 1))).collect()
        };
        // The communicator argument: kept only if all ranks are in it.
        let world = |i: usize| -> Result<bool, String> { Ok(sub(i, 2)? == p as i64) };
        let peer = |v: i64| -> Result<i32, String> {
            match v {
                -1 | -2 => Ok(v as i32),
                v if (0..p as i64).contains(&v) => Ok(v as i32),
                v => Err(format!(
                    "expected a rank below {p} in {routine_name}, found {v}"
                )),
            }
        };
        let mut keep = |this: &mut Rank, c: Call, comm_arg: usize| -> Result<(), String> {
            if world(comm_arg)? {
                this.calls.push(c);
            } else {
                notes.skip(&format!("{routine_name} on a communicator of fewer ranks"));
            }
            Ok(())
        };
        let routine = Routine::from_mpi_name(routine_name);
        match routine {
            Some(r @ (Routine::Init | Routine::InitThread | Routine::Finalize)) => {
                self.calls.push(Call::new(r, t_call, t_return))
            }
            Some(r @ (Routine::Send | Routine::Ssend | Routine::Bsend | Routine::Rsend)) => {
                let c = Call::p2p(r, t, bytes(1, 2)?, peer(int(3)?)?, int(4)? as i32);
                keep(self, c, 5)?;
            }
            Some(
                r @ (Routine::Isend
                | Routine::Issend
                | Routine::Ibsend
                | Routine::Irsend
                | Routine::Irecv),
            ) => {
                let (bytes, who, tag) = (bytes(1, 2)?, peer(int(3)?)?, int(4)? as i32);
                let mut c = Call::p2p(r, t, bytes, who, tag);
                if world(5)? {
                    let status = (r == Routine::Irecv).then_some((who, tag));
                    c.e.id = self.reqs.create(int(6)? as u64, status) as i64;
                }
                keep(self, c, 5)?;
            }
            Some(Routine::Recv) => {
                let c = Call::p2p(
                    Routine::Recv,
                    t,
                    bytes(1, 2)?,
                    peer(int(3)?)?,
                    int(4)? as i32,
                );
                keep(self, c, 5)?;
            }
            Some(Routine::Sendrecv) => {
                let mut c = Call::p2p(
                    Routine::Sendrecv,
                    t,
                    bytes(1, 2)?,
                    peer(int(3)?)?,
                    int(4)? as i32,
                );
                let (got, source, tag) = (bytes(6, 7)?, peer(int(8)?)?, int(9)? as i32);
                c.half = Some(RecvHalf {
                    bytes: got,
                    source,
                    tag,
                });
                c.e.flags = if source == -1 {
                    crate::trace::FLAG_ANY_SOURCE
                } else {
                    0
                } | if tag == -1 {
                    crate::trace::FLAG_ANY_TAG
                } else {
                    0
                };
                keep(self, c, 10)?;
            }
            Some(r @ (Routine::Wait | Routine::Waitall)) => {
                let mut c = Call::new(r, t_call, t_return);
                // A handle no open request has is MPI_REQUEST_NULL (or one of fewer ranks').
                c.done = if r == Routine::Wait {
                    self.reqs.complete(&(int(0)? as u64)).into_iter().collect()
                } else {
                    let (n, base) = (int(0)?.max(0) as u64, int(1)? as u64);
                    if n > 1
                        && !self.reqs.is_open(&base.wrapping_add(8))
                        && self.reqs.is_open(&base.wrapping_add(4))
                    {
                        self.stride = 4;
                    }
                    let s = self.stride;
                    // The array's handles, in array order: the open requests among them.
                    let mut done = self.reqs.complete_where(|&h| {
                        h.checked_sub(base).is_some_and(|d| d % s == 0 && d / s < n)
                    });
                    done.sort_by_key(|&(h, _)| h);
                    done.into_iter().map(|(_, c)| c).collect()
                };
                self.calls.push(c);
            }
            Some(
                r @ (Routine::Test
                | Routine::Testall
                | Routine::Testany
                | Routine::Testsome
                | Routine::Waitany
                | Routine::Waitsome),
            ) => {
                // Which requests completed is not recorded: they stay open for a later Wait.
                notes.say(format!(
                    "{} does not record which requests it completed: taken as none (the requests stay open for a later Wait)",
                    r.mpi_name()
                ));
                self.calls.push(Call::new(r, t_call, t_return));
            }
            Some(Routine::Barrier) => {
                let c = Call::coll(Routine::Barrier, t, -1, 0, 0);
                keep(self, c, 0)?;
            }
            Some(Routine::Bcast) => {
                let (n, root, me) = (bytes(1, 2)?, int(3)? as i32, sub(4, 1)? as i32);
                let c = Call::coll(
                    Routine::Bcast,
                    t,
                    root,
                    if root == me { n } else { 0 },
                    if root == me { 0 } else { n },
                );
                keep(self, c, 4)?;
            }
            Some(r @ (Routine::Reduce | Routine::Allreduce | Routine::Scan | Routine::Exscan)) => {
                let n = bytes(2, 3)?;
                let c = if r == Routine::Reduce {
                    let (root, me) = (int(5)? as i32, sub(6, 1)? as i32);
                    Call::coll(r, t, root, n, if root == me { n } else { 0 })
                } else {
                    Call::coll(r, t, -1, n, n)
                };
                keep(self, c, if r == Routine::Reduce { 6 } else { 5 })?;
            }
            Some(
                r @ (Routine::Gather | Routine::Scatter | Routine::Allgather | Routine::Alltoall),
            ) => {
                let (sent, block) = (bytes(1, 2)?, bytes(4, 5)?);
                let p = p as u64;
                let c = match r {
                    Routine::Gather | Routine::Scatter => {
                        let (root, me) = (int(6)? as i32, sub(7, 1)? as i32);
                        match (r, root == me) {
                            (Routine::Gather, true) => Call::coll(r, t, root, sent, block * p),
                            (Routine::Gather, false) => Call::coll(r, t, root, sent, 0),
                            (_, true) => Call::coll(r, t, root, sent * p, block),
                            _ => Call::coll(r, t, root, 0, block),
                        }
                    }
                    Routine::Allgather => Call::coll(r, t, -1, sent, block * p),
                    _ => Call::coll(r, t, -1, sent * p, block * p),
                };
                keep(
                    self,
                    c,
                    if matches!(r, Routine::Gather | Routine::Scatter) {
                        7
                    } else {
                        6
                    },
                )?;
            }
            Some(Routine::Alltoallv) => {
                // sbuf, scounts (address, values), sdispls (address, values), stype, rbuf, …
                let (s, rr) = (sub(5, 1)?.max(0) as u64, sub(11, 1)?.max(0) as u64);
                let sends: Vec<u64> = list(2)?.iter().map(|&c| c.max(0) as u64 * s).collect();
                let recvs: Vec<u64> = list(8)?.iter().map(|&c| c.max(0) as u64 * rr).collect();
                let (sent, got) = (sends.iter().sum(), recvs.iter().sum());
                let mut c = Call::coll(Routine::Alltoallv, t, -1, sent, got);
                c.coll = Some((got, [sends, recvs].concat()));
                keep(self, c, 12)?;
            }
            Some(r @ (Routine::Gatherv | Routine::Allgatherv)) => {
                // sbuf, scount, stype, rbuf, rcounts (address, values), displs (…), rtype, [root,] comm
                let sent = bytes(1, 2)?;
                let size = sub(8, 1)?.max(0) as u64;
                let all: Vec<u64> = list(5)?.iter().map(|&c| c.max(0) as u64 * size).collect();
                let c = if r == Routine::Gatherv {
                    let (root, me) = (int(9)? as i32, sub(10, 1)? as i32);
                    let mine = if root == me { all } else { Vec::new() };
                    let mut c = Call::coll(r, t, root, sent, mine.iter().sum());
                    c.coll = Some((mine.iter().sum(), mine));
                    c
                } else {
                    let mut c = Call::coll(r, t, -1, sent, all.iter().sum());
                    c.coll = Some((all.iter().sum(), all));
                    c
                };
                keep(self, c, if r == Routine::Gatherv { 10 } else { 9 })?;
            }
            _ => notes.skip(routine_name),
        }
        Ok(())
    }
}
