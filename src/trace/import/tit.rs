//! SimGrid's time-independent traces (SMPI's `smpi_replay.cpp`): `RANK ACTION ARGS` lines, all
//! ranks in one file, or one file per rank named line by line in a list file. Sizes are in
//! datatype elements (MPI_BYTE unless `init` has an argument: MPI_DOUBLE, as SimGrid's), times
//! are not recorded: `compute F` advances the rank's clock by `F × flop_ns`, every call takes
//! no time, and a reduction's `comp_size` flops follow its call, as SMPI executes them.

use super::{Call, Notes, Requests, filled, parse_i64, push_call, simgrid_type_bytes};
use crate::error::TraceError;
use crate::trace::{Completion, Push, RecvHalf, Routine, Trace};
use rayon::prelude::*;
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
    let data = super::file_bytes(path)?;
    let text = crate::trace::text::utf8(&name, &data)?;
    // The files of actions a list names, mapped.
    let mut listed_data = Vec::new();
    if lists_files(path, text) {
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
            listed_data.push((f.display().to_string(), super::file_bytes(&f)?));
        }
    }
    let files: Vec<(String, &str)> = match listed_data.is_empty() {
        true => vec![(name.clone(), text)],
        false => (listed_data.iter())
            .map(|(n, d)| Ok((n.clone(), crate::trace::text::utf8(n, d)?)))
            .collect::<Result<_, TraceError>>()?,
    };
    parse(&name, &files, flop_ns)
}

/// The trace of `files` (name, text), their lines of any ranks in any order.
pub(super) fn parse<S: AsRef<str> + Sync>(
    name: &str,
    files: &[(String, S)],
    flop_ns: f64,
) -> Result<Trace, TraceError> {
    let (pieces, ranks, mut notes) = lines_by_rank(files)?;
    let p = ranks.len();
    notes.say(format!(
        "a time-independent trace records no times: each `compute` takes {flop_ns} ns a flop \
         (--flops sets the rate), every call no time, so the measured runtime is the computation \
         alone; the ranks are taken as one node"
    ));
    // Each rank's actions depend on its own lines alone: the ranks are read in parallel, each
    // call pushed as it is read (a receive names its source: no wildcard to resolve first).
    let counts: Vec<usize> = ranks.iter().map(|r| r.calls).collect();
    filled(name, &counts, notes, Vec::new(), &|r, sink| {
        let mut rank = Rank {
            me: r as i32,
            p,
            t: 0.0,
            elem: 1,
            flop_ns,
            reqs: Requests::new(),
        };
        let mut words = Vec::new();
        let mut i = 0;
        for (k, starts) in &ranks[r].pieces {
            let piece = &pieces[*k as usize];
            let b = piece.text.as_bytes();
            for &at in starts {
                // The usual line read byte by byte, any other as words.
                let at_ = at as usize;
                let end = memchr::memchr(b'\n', &b[at_..]).map_or(b.len(), |n| at_ + n);
                if rank.usual(&b[at_..end], sink) {
                    i += 1;
                    continue;
                }
                words.clear();
                words_at(piece.text, at as usize, &mut words);
                rank.action(&words, sink).map_err(|m| {
                    let (file, line) = piece.line_of(at as usize);
                    TraceError::line(&files[file].0, line, m).in_event(r, i)
                })?;
                i += 1;
            }
        }
        Ok(())
    })
}

/// A piece of a file of actions, read apart: its file, the file's text, the piece's.
struct Piece<'a> {
    file: usize,
    whole: &'a str,
    text: &'a str,
}

impl Piece<'_> {
    /// The number of the piece's first line (errors only: the line breaks before it are
    /// counted).
    fn first(&self) -> usize {
        super::first_line(self.whole.as_bytes(), self.text.as_bytes())
    }

    /// The file and line number of byte `at` of the piece (errors only).
    fn line_of(&self, at: usize) -> (usize, usize) {
        let breaks = self.text.as_bytes()[..at].iter().filter(|&&b| b == b'\n');
        (self.file, self.first() + breaks.count())
    }
}

/// A rank's action lines, in file order: per piece (an index into the pieces), where each
/// line's words after the rank begin; and how many calls they make.
#[derive(Default)]
struct RankLines {
    pieces: Vec<(u32, Vec<u32>)>,
    calls: usize,
}

/// Appends to `words` the words of the line that begins at byte `at` of `text`, up to its end
/// or its comment (`#`), as `split_ascii_whitespace` splits them: one pass over its bytes.
pub(super) fn words_at<'a>(text: &'a str, at: usize, words: &mut Vec<&'a str>) {
    let b = text.as_bytes();
    let space = |c: u8| matches!(c, b' ' | b'\t' | b'\r' | 0x0c);
    let mut i = at;
    loop {
        while i < b.len() && space(b[i]) {
            i += 1;
        }
        if i == b.len() || b[i] == b'\n' || b[i] == b'#' {
            return;
        }
        let start = i;
        while i < b.len() && !space(b[i]) && b[i] != b'\n' && b[i] != b'#' {
            i += 1;
        }
        // (at ASCII bytes: whole characters)
        words.push(&text[start..i]);
    }
}

/// Every action line of `files`, by rank, in file order; the actions the model does not cost
/// counted in the notes. Each file is read in pieces in parallel (each under 4 GiB: its lines
/// are found by 32-bit offsets).
type ByRank<'a> = (Vec<Piece<'a>>, Vec<RankLines>, Notes);

fn lines_by_rank<S: AsRef<str> + Sync>(files: &[(String, S)]) -> Result<ByRank<'_>, TraceError> {
    let mut pieces = Vec::new();
    for (f, (_, text)) in files.iter().enumerate() {
        let text = text.as_ref();
        let n = (rayon::current_num_threads() * 4).max((text.len() >> 31) + 1);
        let cut = super::text_pieces(text, n);
        pieces.extend(cut.into_iter().map(|piece| Piece {
            file: f,
            whole: text,
            text: piece,
        }));
    }
    let read: Vec<Result<Read, TraceError>> = (pieces.par_iter())
        .map(|piece| read_piece(&files[piece.file].0, piece))
        .collect();
    let mut ranks: Vec<RankLines> = Vec::new();
    let mut notes = Notes::default();
    for (k, read) in read.into_iter().enumerate() {
        let read = read?;
        if ranks.len() < read.ranks.len() {
            ranks.resize_with(read.ranks.len(), RankLines::default);
        }
        for (r, (starts, calls)) in read.ranks.into_iter().enumerate() {
            ranks[r].calls += calls;
            if !starts.is_empty() {
                ranks[r].pieces.push((k as u32, starts));
            }
        }
        for (a, n) in read.skipped {
            notes.skip_n(a, n);
        }
    }
    Ok((pieces, ranks, notes))
}

/// One piece of a file read: by rank, where its lines' actions begin and the calls they make;
/// the actions the model does not cost, counted.
struct Read {
    ranks: Vec<(Vec<u32>, usize)>,
    skipped: Vec<(&'static str, u64)>,
}

/// The action lines of `piece` (of the file named `file`).
fn read_piece(file: &str, piece: &Piece<'_>) -> Result<Read, TraceError> {
    let mut read = Read {
        ranks: Vec::new(),
        skipped: Vec::new(),
    };
    let (text, b) = (piece.text, piece.text.as_bytes());
    let (mut at, mut n) = (0, 0);
    while at < b.len() {
        let end = memchr::memchr(b'\n', &b[at..]).map_or(b.len(), |k| at + k);
        let (line, number) = (at..end, n);
        (at, n) = (end + 1, n + 1);
        // The usual line, `RANK ACTION…` from its first byte, read byte by byte; any other
        // (spaces first, a comment, a signed rank…) as words.
        let (rank, rest) = match usual_rank(&b[line.clone()]) {
            Some((rank, k)) => (rank, line.start + k),
            None => {
                let l = text[line.clone()]
                    .split('#')
                    .next()
                    .unwrap_or("")
                    .trim_ascii();
                if l.is_empty() {
                    continue;
                }
                let (word, rest) = split_word(l);
                let rank = parse_i64(word).and_then(|r| usize::try_from(r).ok());
                let Some(rank) = rank.filter(|&r| r < MAX_RANKS) else {
                    return Err(TraceError::line(
                        file,
                        piece.first() + number,
                        format!("expected `RANK ACTION ARGS…` with a rank below 2^20, found `{l}`"),
                    ));
                };
                (rank, rest.as_ptr() as usize - text.as_ptr() as usize)
            }
        };
        if read.ranks.len() <= rank {
            read.ranks.resize_with(rank + 1, Default::default);
        }
        let r = &mut read.ranks[rank];
        match first_word(&b[rest..line.end]) {
            b"compute" | b"sleep" => {}
            a @ (b"comm_size" | b"comm_split" | b"comm_dup" | b"location") => {
                let a = ACTIONS
                    .iter()
                    .find(|k| k.as_bytes() == a)
                    .expect("an action");
                match read.skipped.iter_mut().find(|(k, _)| k == a) {
                    Some((_, n)) => *n += 1,
                    None => read.skipped.push((a, 1)),
                }
            }
            _ => r.1 += 1,
        }
        // Where the words after the rank begin (the piece is under 4 GiB).
        r.0.push(rest as u32);
    }
    Ok(read)
}

/// Ranks below this: 2^20.
const MAX_RANKS: usize = 1 << 20;

/// A line that begins with its rank, 1 to 7 digits below [`MAX_RANKS`], then a space or a
/// tab: the rank and where the byte after that space is; None for any other line.
#[inline]
fn usual_rank(line: &[u8]) -> Option<(usize, usize)> {
    let mut rank = 0;
    for (i, &c) in line.iter().enumerate().take(8) {
        match c {
            b'0'..=b'9' => rank = rank * 10 + (c - b'0') as usize,
            b' ' | b'\t' if i > 0 && rank < MAX_RANKS => return Some((rank, i + 1)),
            _ => return None,
        }
    }
    None
}

/// The first word of `s` (ASCII spaces first skipped), up to a space or a comment.
fn first_word(s: &[u8]) -> &[u8] {
    let stop = |c: &u8| c.is_ascii_whitespace() || *c == b'#';
    let from = s
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(s.len());
    let s = &s[from..];
    &s[..s.iter().position(stop).unwrap_or(s.len())]
}

/// `t.round() as u64` without the library call (the build's baseline x86-64 has no rounding
/// instruction): half away from zero, negative and NaN to 0, saturating.
pub(super) fn round_ns(t: f64) -> u64 {
    if t.is_nan() || t < 0.5 {
        return 0;
    }
    if t >= u64::MAX as f64 {
        return u64::MAX;
    }
    let r = t as u64;
    // Exact: below 2^53 the fraction is `t - r`, above it `t` is whole.
    if t - r as f64 >= 0.5 { r + 1 } else { r }
}

/// The first word of `s` and what follows it.
fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_ascii_start();
    match s.bytes().position(|b| b.is_ascii_whitespace()) {
        Some(i) => (&s[..i], &s[i + 1..]),
        // (the rest still within `s`: [`read_piece`] finds it by its address)
        None => (s, &s[s.len()..]),
    }
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
}

/// The routine of a point-to-point action's name (`send`, `isend`, `recv`, else `irecv`).
fn p2p_routine(action: &[u8]) -> Routine {
    match action {
        b"send" => Routine::Send,
        b"isend" => Routine::Isend,
        b"recv" => Routine::Recv,
        _ => Routine::Irecv,
    }
}

impl Rank {
    fn now(&self) -> (u64, u64) {
        let t = round_ns(self.t);
        (t, t)
    }

    /// A point-to-point call now, its request created where it makes one.
    fn p2p(&mut self, routine: Routine, partner: i32, tag: i32, bytes: u64) -> Call {
        let mut c = Call::p2p(routine, self.now(), bytes, partner, tag);
        if routine.creates_request() {
            let (key, status) = match routine {
                Routine::Isend => ((self.me, partner, tag), None),
                _ => ((partner, self.me, tag), Some((partner, tag))),
            };
            c.e.id = self.reqs.create(key, status) as i64;
        }
        c
    }

    /// The usual line after its rank, read byte by byte and costed as [`Rank::action`] costs
    /// its words: `send`, `isend`, `recv` or `irecv` with a peer below `p`, a tag and a count
    /// (no datatype), or `compute` with its flops, each number unsigned decimal digits after
    /// one space, nothing after the last. False for any other line (read as words), which
    /// leaves the rank as it was.
    #[inline]
    fn usual(&mut self, line: &[u8], sink: &mut impl Push) -> bool {
        let Some(cut) = memchr::memchr(b' ', line) else {
            return false;
        };
        let (action, mut rest) = line.split_at(cut);
        let mut v = [0u64; 3];
        let mut n = 0;
        while let Some((&b' ', r)) = rest.split_first() {
            let len = r.iter().position(|&c| c == b' ').unwrap_or(r.len());
            // (15 digits at most: each a double exactly, as the words' path reads them)
            let x = (n < 3 && len <= 15)
                .then(|| super::decimal(&r[..len]))
                .flatten();
            let Some(x) = x else {
                return false;
            };
            (v[n], n, rest) = (x, n + 1, &r[len..]);
        }
        if !rest.is_empty() {
            return false;
        }
        match (action, n) {
            (b"compute", 1) => self.t += v[0] as f64 * self.flop_ns,
            (b"send" | b"isend" | b"recv" | b"irecv", 3)
                if v[0] < self.p as u64 && v[1] <= i32::MAX as u64 =>
            {
                let bytes = v[2].saturating_mul(self.elem);
                let c = self.p2p(p2p_routine(action), v[0] as i32, v[1] as i32, bytes);
                push_call(sink, &c);
            }
            _ => return false,
        }
        true
    }

    /// Reads one action; its call is pushed to `sink`. The actions the model does not cost
    /// are counted by [`lines_by_rank`].
    fn action(&mut self, words: &[&str], sink: &mut impl Push) -> Result<(), String> {
        let action = *words.first().ok_or("expected an action after the rank")?;
        let a = Args {
            action,
            args: &words[1..],
            elem: self.elem,
            p: self.p,
        };
        let t = self.now();
        let me = self.me;
        let call = match action {
            "init" => {
                self.elem = if a.args.is_empty() { 1 } else { 8 };
                Call::new(Routine::Init, t.0, t.1)
            }
            "finalize" => Call::new(Routine::Finalize, t.0, t.1),
            "comm_size" | "comm_split" | "comm_dup" | "location" => return Ok(()),
            "compute" | "sleep" => {
                self.t += a.num(0)? * if action == "sleep" { 1e9 } else { self.flop_ns };
                return Ok(());
            }
            "send" | "isend" | "recv" | "irecv" => {
                let (partner, tag, bytes) = (a.rank(0)?, a.int(1)? as i32, a.bytes(2, 3)?);
                self.p2p(p2p_routine(action.as_bytes()), partner, tag, bytes)
            }
            "wait" | "test" => {
                let key = (a.int(0)? as i32, a.int(1)? as i32, a.int(2)? as i32);
                // A test may or may not have completed it: SMPI's trace does not say; it stays
                // open for the wait or waitall after it (or pending at the end).
                let (routine, done): (_, Vec<Completion>) = match action {
                    "wait" => (
                        Routine::Wait,
                        self.reqs.complete(&key).into_iter().collect(),
                    ),
                    _ => (Routine::Test, Vec::new()),
                };
                let mut c = Call::new(routine, t.0, t.1);
                c.done = done;
                c
            }
            "waitall" => {
                let mut c = Call::new(Routine::Waitall, t.0, t.1);
                c.done = self.reqs.complete_all();
                c
            }
            "sendRecv" => {
                let (sent, dst) = (a.bytes(0, 4)?, a.rank(1)?);
                let (got, src) = (a.bytes(2, 5)?, a.rank(3)?);
                let mut c = Call::p2p(Routine::Sendrecv, t, sent, dst, 0);
                c.half = Some(RecvHalf {
                    bytes: got,
                    source: src,
                    tag: 0,
                });
                c
            }
            _ if ACTIONS.contains(&action) => {
                let (c, flops) = a.collective(t, me)?;
                push_call(sink, &c);
                // A reduction's computation follows its call, as SMPI executes it.
                self.t += flops * self.flop_ns;
                return Ok(());
            }
            _ => {
                return Err(format!(
                    "expected an action among {}, found `{action}`",
                    ACTIONS.join(" ")
                ));
            }
        };
        push_call(sink, &call);
        Ok(())
    }
}

/// One action's arguments (after the rank and the action), read as SMPI's parsers read them.
struct Args<'a> {
    action: &'a str,
    args: &'a [&'a str],
    /// Bytes of the default datatype.
    elem: u64,
    p: usize,
}

impl Args<'_> {
    fn num(&self, i: usize) -> Result<f64, String> {
        let action = self.action;
        let w = (self.args.get(i))
            .ok_or_else(|| format!("`{action}` expects an argument {}", i + 1))?;
        // An integer (most arguments) parses faster as one, and gives the same f64.
        (parse_i64(w)
            .map(|v| v as f64)
            .or_else(|| w.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= -1.0))
        .ok_or_else(|| {
            format!(
                "expected a number for argument {} of `{action}`, found `{w}`",
                i + 1
            )
        })
    }

    fn int(&self, i: usize) -> Result<i64, String> {
        // `as` truncates toward zero (and saturates), as `trunc` would.
        self.num(i).map(|v| v as i64)
    }

    fn count(&self, i: usize) -> Result<u64, String> {
        let v = self.int(i)?;
        u64::try_from(v).map_err(|_| {
            format!(
                "expected a count ≥ 0 for argument {} of `{}`",
                i + 1,
                self.action
            )
        })
    }

    /// An optional datatype argument: its size, else the default's.
    fn dt(&self, i: usize) -> Result<u64, String> {
        match self.args.get(i) {
            None => Ok(self.elem),
            Some(w) => (w.parse::<i64>().ok().and_then(simgrid_type_bytes)).ok_or_else(|| {
                format!(
                    "expected a SimGrid datatype id (0–59) for argument {} of `{}`, found `{w}`",
                    i + 1,
                    self.action
                )
            }),
        }
    }

    /// Count argument `count` in elements of datatype argument `dt`, in bytes.
    fn bytes(&self, count: usize, dt: usize) -> Result<u64, String> {
        Ok(self.count(count)?.saturating_mul(self.dt(dt)?))
    }

    fn rank(&self, i: usize) -> Result<i32, String> {
        let v = self.int(i)?;
        if (0..self.p as i64).contains(&v) {
            return Ok(v as i32);
        }
        let (p, action) = (self.p, self.action);
        Err(format!(
            "expected a rank below {p} for argument {} of `{action}`, found {v}",
            i + 1
        ))
    }

    /// An optional root at argument `i` (0 if absent).
    fn root(&self, i: usize) -> Result<i32, String> {
        if self.args.len() > i {
            self.rank(i)
        } else {
            Ok(0)
        }
    }

    /// `p` counts from argument `from`, each in elements of `size` bytes.
    fn counts(&self, from: usize, size: u64) -> Result<Vec<u64>, String> {
        (from..from + self.p)
            .map(|i| self.count(i).map(|c| c.saturating_mul(size)))
            .collect()
    }

    /// A collective action's call at `t` on rank `me`, and the flops of its reduction.
    fn collective(&self, t: (u64, u64), me: i32) -> Result<(Call, f64), String> {
        let (p, pu) = (self.p, self.p as u64);
        let mut flops = 0.0;
        let c = match self.action {
            "barrier" => Call::coll(Routine::Barrier, t, -1, 0, 0),
            "bcast" => {
                let (n, root) = (self.bytes(0, 2)?, self.root(1)?);
                let (sent, got) = if root == me { (n, 0) } else { (0, n) };
                Call::coll(Routine::Bcast, t, root, sent, got)
            }
            "reduce" => {
                let (n, root) = (self.bytes(0, 3)?, self.root(2)?);
                flops = self.num(1)?;
                Call::coll(Routine::Reduce, t, root, n, if root == me { n } else { 0 })
            }
            "allreduce" | "scan" | "exscan" => {
                let n = self.bytes(0, 2)?;
                let routine = match self.action {
                    "allreduce" => Routine::Allreduce,
                    "scan" => Routine::Scan,
                    _ => Routine::Exscan,
                };
                flops = self.num(1)?;
                Call::coll(routine, t, -1, n, n)
            }
            "alltoall" => {
                let (sent, got) = (self.bytes(0, 2)?, self.bytes(1, 3)?);
                Call::coll(
                    Routine::Alltoall,
                    t,
                    -1,
                    sent.saturating_mul(pu),
                    got.saturating_mul(pu),
                )
            }
            "gather" => {
                let (sent, block, root) = (self.bytes(0, 3)?, self.bytes(1, 4)?, self.root(2)?);
                let got = if root == me {
                    block.saturating_mul(pu)
                } else {
                    0
                };
                Call::coll(Routine::Gather, t, root, sent, got)
            }
            "allgather" => {
                let (sent, block) = (self.bytes(0, 2)?, self.bytes(1, 3)?);
                Call::coll(Routine::Allgather, t, -1, sent, block.saturating_mul(pu))
            }
            "scatter" => {
                let root = self.root(2)?;
                let block = if root == me { self.bytes(0, 3)? } else { 0 };
                Call::coll(
                    Routine::Scatter,
                    t,
                    root,
                    block.saturating_mul(pu),
                    self.bytes(1, 4)?,
                )
            }
            "gatherv" | "allgatherv" => {
                let rooted = self.action == "gatherv";
                let k = if rooted { p + 2 } else { p + 1 };
                let (sent, all) = (self.bytes(0, k)?, self.counts(1, self.dt(k + 1)?)?);
                let (routine, root, mine) = match rooted {
                    true => {
                        let root = self.root(p + 1)?;
                        (
                            Routine::Gatherv,
                            root,
                            if root == me { all } else { Vec::new() },
                        )
                    }
                    false => (Routine::Allgatherv, -1, all),
                };
                let got = mine.iter().sum();
                let mut c = Call::coll(routine, t, root, sent, got);
                c.coll = Some((got, mine));
                c
            }
            "scatterv" => {
                let root = self.root(p + 1)?;
                let all = self.counts(0, self.dt(p + 2)?)?;
                let got = self.bytes(p, p + 3)?;
                let mine = if root == me { all } else { Vec::new() };
                let mut c = Call::coll(Routine::Scatterv, t, root, mine.iter().sum(), got);
                c.coll = Some((got, mine));
                c
            }
            "reducescatter" => {
                let all = self.counts(0, self.dt(p + 1)?)?;
                let mine = all[me as usize];
                flops = self.num(p)?;
                let mut c = Call::coll(Routine::ReduceScatter, t, -1, all.iter().sum(), mine);
                c.coll = Some((mine, all));
                c
            }
            _ => {
                // alltoallv: send buffer, p send counts, receive buffer, p receive counts.
                let sends = self.counts(1, self.dt(2 * p + 2)?)?;
                let recvs = self.counts(p + 2, self.dt(2 * p + 3)?)?;
                let (sent, got) = (sends.iter().sum(), recvs.iter().sum());
                let mut c = Call::coll(Routine::Alltoallv, t, -1, sent, got);
                c.coll = Some((got, [sends, recvs].concat()));
                c
            }
        };
        Ok((c, flops))
    }
}
