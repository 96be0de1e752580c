//! LogGOPSim's liballprof traces (`src/liballprof/mpipclog.c`): one text file per rank
//! (`pmpi-trace-rank-N.txt`), a line a call, `MPI_Name:T0:ARG:…:T1` with the arguments in the
//! C prototype's order. Times are microseconds of `MPI_Wtime`; a datatype is `ID,SIZE,EXTENT`,
//! a communicator `ID,RANK,SIZE`, a request the address of its handle, an array its address
//! then its values. No status is recorded: a wildcard receive's source is found by matching
//! ([`super::read_ranks`]); communicators' members are not either, so only calls on a communicator of
//! every rank are kept (taken as `MPI_COMM_WORLD`).

use super::{Call, Notes, Out, Requests, nth_part, numbered_siblings, parse_i64, read_ranks};
use super::{numbered_lines, split_into};
use crate::error::TraceError;
use crate::trace::{Completion, FLAG_ANY_SOURCE, FLAG_ANY_TAG, RecvHalf, Routine, Trace};
use rayon::prelude::*;
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
    // Each rank's file mapped, not copied (read once, front to back).
    let data = (files.par_iter())
        .map(|f| Ok((f.display().to_string(), super::file_bytes(f)?)))
        .collect::<Result<Vec<_>, TraceError>>()?;
    let texts = (data.iter())
        .map(|(n, d)| Ok((n.clone(), crate::trace::text::utf8(n, d)?)))
        .collect::<Result<Vec<_>, TraceError>>()?;
    parse(&name, &texts)
}

/// The trace of `files` (name, text), rank 0's first.
pub(super) fn parse<S: AsRef<str> + Sync>(
    name: &str,
    files: &[(String, S)],
) -> Result<Trace, TraceError> {
    let p = files.len();
    let texts: Vec<&str> = files.iter().map(|(_, t)| t.as_ref()).collect();
    let mut notes = Notes::default();
    notes.say(format!(
        "liballprof's trace ({p} ranks) records no hosts and no communicators' members: the ranks \
         are taken as one node, and only calls on communicators of all {p} ranks are kept"
    ));
    // The trace's start: the earliest first call of the ranks (a rank's times only grow: the
    // checks refuse a call before the previous one's return).
    let t0 = (texts.par_iter())
        .filter_map(|text| first_time(text))
        .min()
        .unwrap_or(0);
    // A file a rank, read in parallel, each call pushed as it is read.
    read_ranks(name, p, notes, Vec::new(), &[], &|r, out| {
        let (file, text) = (&files[r].0, texts[r]);
        let mut rank = Rank {
            p,
            t0,
            reqs: Requests::new(),
            out,
            stride: 8,
            recent: Default::default(),
            next_recent: 0,
        };
        let mut notes = Notes::default();
        let mut fields = Vec::new();
        // A call a line at most.
        rank.out
            .reserve(memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1);
        for (n, line) in numbered_lines(text) {
            let line = line.trim_ascii();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            fields.clear();
            split_into(line, b':', &mut fields);
            let f = Fields { f: &fields, line };
            rank.call(&f, &mut notes)
                .map_err(|m| TraceError::line(file, n, m).in_event(r, rank.out.count()))?;
        }
        Ok(notes)
    })
}

/// The start of the first call in a rank's file, µs as ns; None where its first call line
/// has no time (the reading says what is wrong).
fn first_time(text: &str) -> Option<u64> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("MPI_"))?;
    let mut fields = Vec::new();
    split_into(line, b':', &mut fields);
    let routine = Routine::from_mpi_name(fields[0]);
    let t = (fields.len() >= 3).then(|| Rank::times(routine, &Fields { f: &fields, line }, 0));
    Some(t?.ok()?.0)
}

/// A time field: `1298365588610860`, `1237759886260335.000000` or `3.0` µs, in ns (the
/// fraction's digits after the third dropped).
fn micros(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    // The integer part, then a fraction after a `.`, in one pass.
    let (mut us, mut k) = (0u64, 0);
    while let Some(d) = b.get(k).map(|c| c.wrapping_sub(b'0')).filter(|&d| d <= 9) {
        us = us.wrapping_mul(10).wrapping_add(d as u64);
        k += 1;
    }
    // 19 digits cannot overflow.
    if k == 0 || k > 19 {
        return None;
    }
    let mut ns = 0u64;
    if let Some(&c) = b.get(k) {
        if c != b'.' {
            return None;
        }
        for (j, &c) in b[k + 1..].iter().enumerate() {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            if j < 3 {
                ns += d as u64 * [100, 10, 1][j];
            }
        }
    }
    us.checked_mul(1000)?.checked_add(ns)
}

struct Rank<'o> {
    p: usize,
    /// The trace's start, ns of the ranks' clock: calls' times are from it.
    t0: u64,
    /// Open requests by the address of their handle.
    reqs: Requests<u64>,
    out: &'o mut dyn Out,
    /// Bytes between the handles of a request array (4 in old MPICH, else 8).
    stride: u64,
    /// The routines of the last names read (a program calls few in turn: comparing names
    /// costs less than hashing them), each name of at most 15 bytes as its [`short_key`].
    recent: [(u128, Option<Routine>); 4],
    next_recent: usize,
}

/// A name of 1 to 15 bytes as one number (its bytes, zeros after them, its length in the
/// last byte): equal for equal names alone, never 0; None for any other name.
fn short_key(name: &str) -> Option<u128> {
    let b = name.as_bytes();
    if b.is_empty() || b.len() > 15 {
        return None;
    }
    let mut k = [0u8; 16];
    k[..b.len()].copy_from_slice(b);
    k[15] = b.len() as u8;
    Some(u128::from_le_bytes(k))
}

/// Which field of `routine`'s line holds its communicator (`usize::MAX`: none read).
fn comm_arg(routine: Routine) -> usize {
    match routine {
        Routine::Barrier => 0,
        Routine::Bcast => 4,
        Routine::Send | Routine::Ssend | Routine::Bsend | Routine::Rsend | Routine::Recv => 5,
        Routine::Isend | Routine::Issend | Routine::Ibsend | Routine::Irsend | Routine::Irecv => 5,
        Routine::Allreduce | Routine::Scan | Routine::Exscan => 5,
        Routine::Reduce | Routine::Allgather | Routine::Alltoall => 6,
        Routine::Gather | Routine::Scatter => 7,
        Routine::Allgatherv => 9,
        Routine::Sendrecv | Routine::Gatherv => 10,
        Routine::Alltoallv => 12,
        _ => usize::MAX,
    }
}

impl Rank<'_> {
    fn routine(&mut self, name: &str) -> Option<Routine> {
        let Some(key) = short_key(name) else {
            return Routine::from_mpi_name(name);
        };
        if let Some((_, r)) = self.recent.iter().find(|(k, _)| *k == key) {
            return *r;
        }
        let r = Routine::from_mpi_name(name);
        self.recent[self.next_recent] = (key, r);
        self.next_recent = (self.next_recent + 1) % self.recent.len();
        r
    }

    fn call(&mut self, f: &Fields<'_>, notes: &mut Notes) -> Result<(), String> {
        let (name, line) = (f.f[0], f.line);
        if f.f.len() < 3 {
            return Err(format!("expected `MPI_Name:T0:…:T1`, found `{line}`"));
        }
        let routine = self.routine(name);
        let t = Rank::times(routine, f, self.t0)?;
        let Some(routine) = routine else {
            notes.skip(name);
            return Ok(());
        };
        // The communicator argument: kept only if all ranks are in it.
        let comm_arg = comm_arg(routine);
        if comm_arg != usize::MAX && f.sub(comm_arg, 2)? != self.p as i64 {
            notes.skip(&format!("{name} on a communicator of fewer ranks"));
            return Ok(());
        }
        let c = match routine {
            Routine::Init | Routine::InitThread | Routine::Finalize => Call::new(routine, t.0, t.1),
            Routine::Send
            | Routine::Ssend
            | Routine::Bsend
            | Routine::Rsend
            | Routine::Recv
            | Routine::Isend
            | Routine::Issend
            | Routine::Ibsend
            | Routine::Irsend
            | Routine::Irecv => self.point_to_point(name, routine, t, f)?,
            Routine::Sendrecv => self.sendrecv(name, t, f)?,
            Routine::Wait | Routine::Waitall => {
                let mut c = Call::new(routine, t.0, t.1);
                c.done = self.completed(routine, f)?;
                c
            }
            Routine::Test
            | Routine::Testall
            | Routine::Testany
            | Routine::Testsome
            | Routine::Waitany
            | Routine::Waitsome => {
                // Which requests completed is not recorded: they stay open for a later Wait.
                notes.say(format!(
                    "{name} does not record which requests it completed: taken as none (the \
                     requests stay open for a later Wait)"
                ));
                Call::new(routine, t.0, t.1)
            }
            _ if comm_arg != usize::MAX => self.collective(routine, t, f)?,
            _ => {
                notes.skip(name);
                return Ok(());
            }
        };
        self.out.put(&c);
        Ok(())
    }

    /// The call's start and end, ns from `t0` (none before it): MPI_Init has no start time
    /// (`-`), MPI_Finalize no end.
    fn times(routine: Option<Routine>, f: &Fields<'_>, t0: u64) -> Result<(u64, u64), String> {
        let time = |s: &str| -> Result<u64, String> {
            micros(s).ok_or_else(|| format!("expected a time in µs, found `{s}`"))
        };
        let last = f.f[f.f.len() - 1];
        let t = match routine {
            Some(Routine::Init | Routine::InitThread) => (time(last)?, time(last)?),
            Some(Routine::Finalize) => (time(f.f[1])?, time(f.f[1])?),
            _ => (time(f.f[1])?, time(last)?),
        };
        if t.1 < t.0 {
            return Err(format!(
                "expected the end time {last} µs at or after the start"
            ));
        }
        Ok((t.0.saturating_sub(t0), t.1.saturating_sub(t0)))
    }

    /// A peer field `v` of call `name`: a rank, or -1 (any source) or -2 (`MPI_PROC_NULL`).
    fn peer(&self, name: &str, v: i64) -> Result<i32, String> {
        match v {
            -1 | -2 => Ok(v as i32),
            v if (0..self.p as i64).contains(&v) => Ok(v as i32),
            v => Err(format!(
                "expected a rank below {} in {name}, found {v}",
                self.p
            )),
        }
    }

    /// A send or receive, blocking or not; a nonblocking one's request opened by its handle's
    /// address (an Irecv's with its source and tag, for a status that records none).
    fn point_to_point(
        &mut self,
        name: &str,
        routine: Routine,
        t: (u64, u64),
        f: &Fields<'_>,
    ) -> Result<Call, String> {
        let (who, tag) = (self.peer(name, f.int(3)?)?, f.int(4)? as i32);
        let mut c = Call::p2p(routine, t, f.bytes(1, 2)?, who, tag);
        if routine.creates_request() {
            let status = (routine == Routine::Irecv).then_some((who, tag));
            c.e.id = self.reqs.create(f.int(6)? as u64, status) as i64;
        }
        Ok(c)
    }

    /// An `MPI_Sendrecv`: its send half, and its receive half with the wildcards it names.
    fn sendrecv(&self, name: &str, t: (u64, u64), f: &Fields<'_>) -> Result<Call, String> {
        let (dest, tag) = (self.peer(name, f.int(3)?)?, f.int(4)? as i32);
        let mut c = Call::p2p(Routine::Sendrecv, t, f.bytes(1, 2)?, dest, tag);
        let (source, tag) = (self.peer(name, f.int(8)?)?, f.int(9)? as i32);
        c.half = Some(RecvHalf {
            bytes: f.bytes(6, 7)?,
            source,
            tag,
        });
        c.e.flags = if source == -1 { FLAG_ANY_SOURCE } else { 0 }
            | if tag == -1 { FLAG_ANY_TAG } else { 0 };
        Ok(c)
    }

    /// What a `Wait` (its request's handle) or `Waitall` (its array's) completed. A handle no
    /// open request has is `MPI_REQUEST_NULL` (or one of a call left out).
    fn completed(&mut self, routine: Routine, f: &Fields<'_>) -> Result<Vec<Completion>, String> {
        if routine == Routine::Wait {
            return Ok(self
                .reqs
                .complete(&(f.int(0)? as u64))
                .into_iter()
                .collect());
        }
        let (n, base) = (f.int(0)?.max(0) as u64, f.int(1)? as u64);
        if n > 1
            && !self.reqs.is_open(&base.wrapping_add(8))
            && self.reqs.is_open(&base.wrapping_add(4))
        {
            self.stride = 4;
        }
        let s = self.stride;
        // The array's handles, in array order: the open requests among them.
        let mut done = (self.reqs)
            .complete_where(|&h| h.checked_sub(base).is_some_and(|d| d % s == 0 && d / s < n));
        done.sort_by_key(|&(h, _)| h);
        Ok(done.into_iter().map(|(_, c)| c).collect())
    }

    /// A collective's call: its arguments in the C prototype's order, arrays as an address then
    /// their values.
    fn collective(&self, r: Routine, t: (u64, u64), f: &Fields<'_>) -> Result<Call, String> {
        let p = self.p as u64;
        // This rank's place in the communicator, from its `ID,RANK,SIZE`.
        let me = |i: usize| f.sub(i, 1).map(|m| m as i32);
        Ok(match r {
            Routine::Barrier => Call::coll(r, t, -1, 0, 0),
            Routine::Bcast => {
                let (n, root) = (f.bytes(1, 2)?, f.int(3)? as i32);
                match root == me(4)? {
                    true => Call::coll(r, t, root, n, 0),
                    false => Call::coll(r, t, root, 0, n),
                }
            }
            Routine::Reduce => {
                let (n, root) = (f.bytes(2, 3)?, f.int(5)? as i32);
                Call::coll(r, t, root, n, if root == me(6)? { n } else { 0 })
            }
            Routine::Allreduce | Routine::Scan | Routine::Exscan => {
                let n = f.bytes(2, 3)?;
                Call::coll(r, t, -1, n, n)
            }
            Routine::Gather | Routine::Scatter => {
                let (sent, block, root) = (f.bytes(1, 2)?, f.bytes(4, 5)?, f.int(6)? as i32);
                match (r, root == me(7)?) {
                    (Routine::Gather, true) => {
                        Call::coll(r, t, root, sent, block.saturating_mul(p))
                    }
                    (Routine::Gather, false) => Call::coll(r, t, root, sent, 0),
                    (_, true) => Call::coll(r, t, root, sent.saturating_mul(p), block),
                    _ => Call::coll(r, t, root, 0, block),
                }
            }
            Routine::Allgather => {
                Call::coll(r, t, -1, f.bytes(1, 2)?, f.bytes(4, 5)?.saturating_mul(p))
            }
            Routine::Alltoall => {
                let (sent, block) = (f.bytes(1, 2)?, f.bytes(4, 5)?);
                Call::coll(r, t, -1, sent.saturating_mul(p), block.saturating_mul(p))
            }
            Routine::Alltoallv => {
                // sbuf, scounts (address, values), sdispls (address, values), stype, rbuf, …
                let sends = f.scaled(2, 5)?;
                let recvs = f.scaled(8, 11)?;
                let (sent, got) = (sends.iter().sum(), recvs.iter().sum());
                let mut c = Call::coll(r, t, -1, sent, got);
                c.coll = Some((got, [sends, recvs].concat()));
                c
            }
            _ => {
                // Gatherv, Allgatherv: sbuf, scount, stype, rbuf, rcounts (address, values),
                // displs (…), rtype, [root,] comm.
                let (sent, all) = (f.bytes(1, 2)?, f.scaled(5, 8)?);
                let (root, mine) = match r {
                    Routine::Gatherv => {
                        let root = f.int(9)? as i32;
                        (root, if root == me(10)? { all } else { Vec::new() })
                    }
                    _ => (-1, all),
                };
                let got = mine.iter().sum();
                let mut c = Call::coll(r, t, root, sent, got);
                c.coll = Some((got, mine));
                c
            }
        })
    }
}

/// One line's fields (split at `:`): the routine's name, its start time, its arguments, its
/// end time.
struct Fields<'a> {
    f: &'a [&'a str],
    line: &'a str,
}

impl Fields<'_> {
    /// Argument `i` (from 0).
    fn arg(&self, i: usize) -> Result<&str, String> {
        (self.f.get(i + 2).filter(|_| i + 3 < self.f.len()).copied()).ok_or_else(|| {
            format!(
                "{} expects an argument {}: found `{}`",
                self.f[0],
                i + 1,
                self.line
            )
        })
    }

    fn int(&self, i: usize) -> Result<i64, String> {
        let a = self.arg(i)?;
        parse_i64(a).ok_or_else(|| {
            format!(
                "expected an integer for argument {} of {}, found `{a}`",
                i + 1,
                self.f[0]
            )
        })
    }

    /// Part `k` of argument `i`, `ID,SIZE,EXTENT` or `ID,RANK,SIZE`.
    fn sub(&self, i: usize, k: usize) -> Result<i64, String> {
        let a = self.arg(i)?;
        (nth_part(a, b',', k).and_then(parse_i64)).ok_or_else(|| {
            format!(
                "expected `ID,SIZE,…` for argument {} of {}, found `{a}`",
                i + 1,
                self.f[0]
            )
        })
    }

    /// The bytes of count argument `count` of datatype argument `dt`.
    fn bytes(&self, count: usize, dt: usize) -> Result<u64, String> {
        let (c, s) = (self.int(count)?, self.sub(dt, 1)?);
        Ok((c.max(0) as u64).saturating_mul(s.max(0) as u64))
    }

    /// The values of array argument `i`, each times the size of datatype argument `dt`.
    fn scaled(&self, i: usize, dt: usize) -> Result<Vec<u64>, String> {
        let (a, size) = (self.arg(i)?, self.sub(dt, 1)?.max(0) as u64);
        a.split(',')
            .map(|v| {
                v.parse::<i64>()
                    .map(|c| (c.max(0) as u64).saturating_mul(size))
                    .map_err(|_| {
                        format!(
                            "expected a list of integers for argument {} of {}, found `{a}`",
                            i + 1,
                            self.f[0]
                        )
                    })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{micros, short_key};

    /// Names' keys equal where the names are, and only there; names beyond 15 bytes have none.
    #[test]
    fn short_names_have_keys_of_their_own() {
        let names = [
            "MPI_Send",
            "MPI_Sen",
            "MPI_Send\0",
            "MPI_Sendrecv",
            "A",
            "\u{1}",
            "\u{1}\0",
            "MPI_Allgatherv",
            "MPI_Alltoallv12",
            "MPI_Alltoallv123",
            "",
        ];
        for a in names {
            assert_eq!(short_key(a).is_some(), (1..=15).contains(&a.len()), "{a:?}");
            for b in names {
                if let (Some(ka), Some(kb)) = (short_key(a), short_key(b)) {
                    assert_eq!(ka == kb, a == b, "{a:?} {b:?}");
                    assert_ne!(ka, 0);
                }
            }
        }
    }

    /// Times as liballprof writes them, µs to ns by hand; the fraction's fourth digit on dropped.
    #[test]
    fn times_are_microseconds_read_to_the_nanosecond() {
        for (s, ns) in [
            ("1298365588610860", Some(1_298_365_588_610_860_000)),
            ("1237759886260335.000000", Some(1_237_759_886_260_335_000)),
            ("3.0", Some(3_000)),
            ("3.1239", Some(3_123)),
            ("3.", Some(3_000)),
            ("0.05", Some(50)),
            ("18446744073709551", Some(18_446_744_073_709_551_000)),
            ("18446744073709552", None),
            ("12345678901234567890", None),
            (".5", None),
            ("", None),
            ("1a", None),
            ("3.x", None),
            ("-1", None),
            ("1.2.3", None),
        ] {
            assert_eq!(micros(s), ns, "{s}");
        }
    }
}
