//! LogGOPSim's GOAL schedules (`txt2bin.re`): `num_ranks N`, then `rank R { … }` blocks of
//! `[LABEL:] send Nb to R [tag T] [cpu C] [nic N]`, `recv Nb from R …`, `calc N …`,
//! `A requires B` (A starts when B has ended) and `A irequires B` (when B has started). A rank's
//! operations form a graph, not a sequence: they are read as the MPI program that issues them
//! in an order the dependencies allow (file order where free), each send and receive
//! nonblocking (blocking where the very next operation requires it alone and is not a `calc 0`,
//! a Wait as schedgen and `convert --to goal` write it, or where it is the last), a dependency
//! on one a `MPI_Wait`/`MPI_Waitall`, a `calc` computation of `calc_ns` ns a unit, and the rest
//! completed by one `MPI_Waitall` at the end (IMPORT.md: where this and LogGOPSim differ).

use super::{Call, Notes, Out, Requests, ShortKeys, read_ranks};
use crate::error::TraceError;
use crate::trace::{Routine, Trace};
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::Path;

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Send { bytes: u64, to: i32, tag: i32 },
    Recv { bytes: u64, from: i32, tag: i32 },
    Calc(f64),
}

/// A rank's operations: their kinds in file order, and their dependencies as (operation, the
/// one it waits for) pairs in file order, on the other's end (`requires`) or start
/// (`irequires`).
#[derive(Clone, Debug, Default)]
struct Ops {
    kinds: Vec<Kind>,
    requires: Vec<(u32, u32)>,
    irequires: Vec<(u32, u32)>,
}

impl Ops {
    /// `op` waits for operation `b`: for its start (`irequires`) or its end.
    fn depend(&mut self, op: u32, b: u32, start: bool) {
        match start {
            true => self.irequires.push((op, b)),
            false => self.requires.push((op, b)),
        }
    }

    fn extend(&mut self, mut other: Ops) {
        if self.kinds.is_empty() {
            *self = other;
            return;
        }
        let base = self.kinds.len() as u32;
        let shift = |d: &mut Vec<(u32, u32)>| {
            d.iter_mut()
                .for_each(|(a, b)| (*a, *b) = (*a + base, *b + base))
        };
        shift(&mut other.requires);
        shift(&mut other.irequires);
        self.kinds.append(&mut other.kinds);
        self.requires.append(&mut other.requires);
        self.irequires.append(&mut other.irequires);
    }
}

pub(super) fn load(path: &Path, calc_ns: f64) -> Result<Trace, TraceError> {
    let name = path.display().to_string();
    let data = super::file_bytes(path)?;
    from_text(&name, crate::trace::text::utf8(&name, &data)?, calc_ns)
}

/// The trace of the GOAL schedule `text`. Where each rank has one block (schedgen's), each
/// rank's is read, checked and made calls on one thread, its operations dropped once they are
/// calls; otherwise, or where that finds something wrong, every block is read first
/// ([`parse`], whose error is the one nearest the file's start) and then made calls.
pub(super) fn from_text(name: &str, text: &str, calc_ns: f64) -> Result<Trace, TraceError> {
    let uncommented = without_block_comments(text);
    let found = blocks(name, &uncommented);
    let (p, blocks, structural) = (found.0, &found.1, &found.2);
    let mut by_rank: Vec<Option<&Block<'_>>> = vec![None; p.unwrap_or(0)];
    for b in blocks {
        by_rank[b.rank] = match by_rank[b.rank] {
            None => Some(b),
            Some(_) => None,
        };
    }
    let one_each = structural.is_none()
        && blocks.len() == by_rank.len()
        && by_rank.iter().all(|b| b.is_some_and(|b| b.closed));
    // Each rank's block issued as it is read where every block is as schedgen writes it, else
    // read whole and then issued.
    for streamed in [true, false].into_iter().filter(|_| one_each) {
        let p = by_rank.len();
        let read = read_ranks(name, p, notes(calc_ns), Vec::new(), &[], &|r, out| {
            let b = by_rank[r].expect("one block a rank");
            if streamed {
                return stream(b, p, calc_ns, out)
                    .map(|()| Notes::default())
                    .ok_or_else(|| TraceError::at(name, "read whole".into()));
            }
            let ops = block(name, b)?;
            check_peers(name, std::slice::from_ref(&ops), p)?;
            sequence(&ops, calc_ns, out);
            Ok(Notes::default())
        });
        if read.is_ok() {
            return read;
        }
    }
    drop(by_rank);
    let ranks = parse(name, found)?;
    read_ranks(
        name,
        ranks.len(),
        notes(calc_ns),
        Vec::new(),
        &[],
        &|r, out| {
            sequence(&ranks[r], calc_ns, out);
            Ok(Notes::default())
        },
    )
}

/// What a GOAL schedule lacks, said once.
fn notes(calc_ns: f64) -> Notes {
    let mut notes = Notes::default();
    notes.say(format!(
        "a GOAL schedule records no times: each `calc` unit takes {calc_ns} ns (--calc-ns sets it), \
         every call no time, so the measured runtime is the computation alone; the ranks are taken \
         as one node, and each rank's operations as the MPI program that issues them in file order \
         as their dependencies allow"
    ));
    notes
}

/// Each rank's operations, in file order, with their dependencies as indices, from the blocks
/// [`blocks`] found (read in parallel); the error said is the one nearest the file's start.
fn parse(name: &str, found: Found<'_>) -> Result<Vec<Ops>, TraceError> {
    let (p, blocks, structural) = found;
    let read: Vec<Result<Ops, TraceError>> = blocks.par_iter().map(|b| block(name, b)).collect();
    let mut ranks: Vec<Ops> = vec![Ops::default(); p.unwrap_or(0)];
    for (b, ops) in blocks.iter().zip(read) {
        ranks[b.rank].extend(ops?);
    }
    if let Some(e) = structural {
        return Err(e);
    }
    check_peers(name, &ranks, ranks.len())?;
    Ok(ranks)
}

/// A rank's block: its rank, its lines (in the schedule's `text`), and whether its `}` was
/// found.
struct Block<'a> {
    rank: usize,
    text: &'a str,
    body: &'a str,
    closed: bool,
}

impl Block<'_> {
    /// The number of the block's first line (for an error: the lines before it are counted).
    fn first(&self) -> usize {
        let start = self.body.as_ptr() as usize - self.text.as_ptr() as usize;
        line_at(self.text, start)
    }
}

/// The number of the line holding byte `at` of `text`, from 1.
fn line_at(text: &str, at: usize) -> usize {
    1 + text.as_bytes()[..at]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
}

/// A line without its `//` comment and surrounding spaces.
fn uncommented(raw: &str) -> &str {
    let b = raw.as_bytes();
    let mut from = 0;
    while let Some(k) = memchr::memchr(b'/', &b[from..]) {
        if b.get(from + k + 1) == Some(&b'/') {
            return trim(&raw[..from + k]);
        }
        from += k + 1;
    }
    trim(raw)
}

/// `s.trim()`, the ASCII spaces taken off first (a line's are: no Unicode tables looked at);
/// what `trim` also takes, a vertical tab or a space beyond ASCII, by `trim`.
fn trim(s: &str) -> &str {
    let t = s.trim_ascii();
    let other = |b: &u8| !b.is_ascii() || *b == 0x0b;
    match (t.as_bytes().first(), t.as_bytes().last()) {
        (Some(a), Some(z)) if other(a) || other(z) => t.trim(),
        _ => t,
    }
}

/// The schedule's `num_ranks` and its ranks' blocks, up to the first error outside a block
/// (a block is read later: its own errors, which come first where they lie before it, are
/// found then).
/// What [`blocks`] finds: `num_ranks`, the blocks, the first error outside them.
type Found<'a> = (Option<usize>, Vec<Block<'a>>, Option<TraceError>);

fn blocks<'a>(name: &str, text: &'a str) -> Found<'a> {
    let mut blocks: Vec<Block<'a>> = Vec::new();
    let mut declared: Option<usize> = None;
    // The byte where a line starts (its number counted for an error only).
    let mut at = 0;
    while at < text.len() {
        let end = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |k| at + k);
        let line = uncommented(&text[at..end]);
        let next = (end + 1).min(text.len());
        let err = |m: String| TraceError::line(name, line_at(text, at), m);
        let fail = match line.split_ascii_whitespace().collect::<Vec<_>>().as_slice() {
            [] => None,
            ["num_ranks", p] => match p.parse().ok().filter(|&p| (1..=text.len()).contains(&p)) {
                Some(p) => {
                    declared = Some(p);
                    // A later `num_ranks` starts the ranks over, as each rank was read anew.
                    blocks.clear();
                    None
                }
                None => Some(err(format!(
                    "expected a number of ranks from 1 to {} (at most one per byte of the file), \
                     found `{p}`",
                    text.len()
                ))),
            },
            ["rank", r, "{"] => match declared {
                None => Some(err("expected `num_ranks N` before the first rank".into())),
                Some(p) => match r.parse::<usize>().ok().filter(|&r| r < p) {
                    None => Some(err(format!("expected a rank below {p}, found `{r}`"))),
                    Some(r) if blocks.iter().any(|b| b.rank == r && has_operations(b.body)) => {
                        Some(err(format!("rank {r} is given twice")))
                    }
                    Some(r) => {
                        // The block's lines, read later, up to its `}` line.
                        let (body, closed) = match block_end(text, next) {
                            Some((brace, after)) => {
                                at = after;
                                (&text[next..brace], true)
                            }
                            None => {
                                at = text.len();
                                (&text[next..], false)
                            }
                        };
                        blocks.push(Block {
                            rank: r,
                            text,
                            body,
                            closed,
                        });
                        if !closed {
                            break;
                        }
                        continue;
                    }
                },
            },
            _ => Some(err(format!(
                "expected `num_ranks N` or `rank R {{`, found `{line}`"
            ))),
        };
        if fail.is_some() {
            return (declared, blocks, fail);
        }
        at = end + 1;
    }
    let end = if blocks.last().is_some_and(|b| !b.closed) {
        Some(TraceError::at(
            name,
            "the file ends inside a rank's block: a `}` is missing".into(),
        ))
    } else if declared.is_none() {
        Some(TraceError::at(
            name,
            "expected a `num_ranks N` line, found none".into(),
        ))
    } else {
        None
    };
    (declared, blocks, end)
}

/// The block whose body starts at byte `start`: where its `}` line starts and the byte after
/// that line; None if the file has no such line.
fn block_end(text: &str, start: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let mut from = start;
    while let Some(k) = memchr::memchr(b'}', &b[from..]) {
        let brace = from + k;
        let line = b[start..brace]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(start, |i| start + i + 1);
        let end = b[brace..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(text.len(), |i| brace + i);
        if uncommented(&text[line..end]) == "}" {
            return Some((line, (end + 1).min(text.len())));
        }
        from = brace + 1;
    }
    None
}

/// Whether a block's lines hold an operation (any line but a dependency).
fn has_operations(body: &str) -> bool {
    body.lines().map(uncommented).any(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        !w.is_empty() && !matches!(w.as_slice(), [_, "requires" | "irequires", _])
    })
}

/// One rank's operations, read from its block; its dependencies resolved where its `}` was found.
fn block(name: &str, b: &Block<'_>) -> Result<Ops, TraceError> {
    let r = b.rank;
    // Sized for a label every 40 bytes (`l12: send 8b to 1 tag 0` and its dependency line):
    // growing a table of millions of labels costs more than the reading.
    let expected = b.body.len() / 40;
    let mut ops = Ops {
        kinds: Vec::with_capacity(expected),
        requires: Vec::with_capacity(expected),
        irequires: Vec::new(),
    };
    let mut labels = Labels::new(b.body.len());
    let mut deps: Vec<Dependency> = Vec::new();
    let body = b.body.as_bytes();
    let (mut at, mut n) = (0, 0);
    while at < body.len() {
        // The line's index in the block (its number counted for an error only).
        let k = n;
        n += 1;
        let lineno = || b.first() + k;
        // Schedgen's lines read byte by byte, the rest as words (below).
        if let Some((line, next)) = fast_line(b.body, at, labels.most) {
            at = next;
            match line {
                Fast::Op(l, label, kind) => {
                    if !labels.insert_numbered(l, ops.kinds.len() as u32) {
                        let m = format!("rank {r}: label `{label}` is defined twice");
                        return Err(TraceError::line(name, lineno(), m));
                    }
                    ops.kinds.push(kind);
                }
                Fast::Dep((a, an), (d, dn), start) => {
                    match (deps.is_empty(), labels.numbered(an), labels.numbered(dn)) {
                        (true, Some(a), Some(d)) => ops.depend(a, d, start),
                        _ => deps.push((k, a, d, start)),
                    }
                }
            }
            continue;
        }
        let end = memchr::memchr(b'\n', &body[at..]).map_or(body.len(), |k| at + k);
        let raw = &b.body[at..end];
        at = end + 1;
        let line = uncommented(raw.strip_suffix('\r').unwrap_or(raw));
        if line.is_empty() {
            continue;
        }
        // A dependency has no label (a label is a word and its `:`).
        if !line.as_bytes().contains(&b':') {
            let mut w = line.split_ascii_whitespace();
            if let (Some(a), Some(dep @ ("requires" | "irequires")), Some(d), None) =
                (w.next(), w.next(), w.next(), w.next())
            {
                // Resolved at once where both labels are known and none before it waits (the
                // order of each operation's dependencies stays the file's), else at the `}`.
                match (deps.is_empty(), labels.get(a), labels.get(d)) {
                    (true, Some(a), Some(d)) => ops.depend(a, d, dep == "irequires"),
                    _ => deps.push((k, a, d, dep == "irequires")),
                }
                continue;
            }
        }
        labeled_operation(line, &mut ops, &mut labels)
            .map_err(|m| TraceError::line(name, lineno(), format!("rank {r}: {m}")))?;
    }
    if b.closed {
        resolve(name, &mut ops, b, &labels, &mut deps)?;
    }
    Ok(ops)
}

/// A dependency read before its rank's block ends, where its labels may follow it: its line's
/// index in the block, the operation that waits, the one it waits for, and whether for its
/// start (`irequires`).
type Dependency<'a> = (usize, &'a str, &'a str, bool);

/// A rank's labels and their operations: `l<N>` (schedgen's) in a table by N, others hashed
/// (looked up once a dependency, millions in a large schedule).
struct Labels<'a> {
    numbered: Vec<u32>,
    /// The largest N the table takes: a label beyond it is hashed.
    most: usize,
    named: HashMap<&'a str, u32, ShortKeys>,
}

impl<'a> Labels<'a> {
    /// For a block of `bytes` bytes (each numbered label takes a line of several).
    fn new(bytes: usize) -> Labels<'a> {
        Labels {
            numbered: Vec::new(),
            most: bytes / 8,
            named: HashMap::default(),
        }
    }

    /// N of a label `lN` written as schedgen writes it (no leading zero), up to the table's
    /// bound.
    fn number(&self, l: &str) -> Option<usize> {
        let d = l.strip_prefix('l')?.as_bytes();
        let plain = !d.is_empty() && d.len() <= 9 && (d.len() == 1 || d[0] != b'0');
        if !plain || !d.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let n = d.iter().fold(0usize, |n, &c| n * 10 + (c - b'0') as usize);
        (n <= self.most).then_some(n)
    }

    fn get(&self, l: &str) -> Option<u32> {
        match self.number(l) {
            Some(n) => self.numbered(n),
            None => self.named.get(l).copied(),
        }
    }

    /// The operation of label `lN`, N at most the table's bound.
    fn numbered(&self, n: usize) -> Option<u32> {
        self.numbered.get(n).copied().filter(|&i| i != u32::MAX)
    }

    /// Defines label `l` as operation `i`; false if it was defined before.
    fn insert(&mut self, l: &'a str, i: u32) -> bool {
        match self.number(l) {
            Some(n) => self.insert_numbered(n, i),
            None => self.named.insert(l, i).is_none(),
        }
    }

    /// Defines label `lN` (N at most the table's bound) as operation `i`; false if it was
    /// defined before.
    fn insert_numbered(&mut self, n: usize, i: u32) -> bool {
        if n >= self.numbered.len() {
            self.numbered
                .resize((n + 1).max(2 * self.numbered.len()), u32::MAX);
        }
        std::mem::replace(&mut self.numbered[n], i) == u32::MAX
    }
}

/// `text` with its `/* … */` comments blanked out but for their line breaks, so that errors
/// still name the file's lines.
fn without_block_comments(text: &str) -> std::borrow::Cow<'_, str> {
    if !super::contains(text.as_bytes(), b"/*") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut text = text.to_string();
    while let Some(i) = text.find("/*") {
        let end = text[i..].find("*/").map_or(text.len(), |j| i + j + 2);
        let lines = text[i..end].matches('\n').count();
        text.replace_range(i..end, &"\n".repeat(lines));
    }
    std::borrow::Cow::Owned(text)
}

/// Rank `r`'s dependencies `deps` (drained) as indices into its operations `ops`, once its
/// block has ended and every label in it is known.
fn resolve(
    name: &str,
    ops: &mut Ops,
    block: &Block<'_>,
    labels: &Labels<'_>,
    deps: &mut Vec<Dependency<'_>>,
) -> Result<(), TraceError> {
    let r = block.rank;
    for (k, a, b, start) in deps.drain(..) {
        let find = |l: &str| {
            labels.get(l).ok_or_else(|| {
                TraceError::line(
                    name,
                    block.first() + k,
                    format!(
                        "rank {r}: a dependency names label `{l}`, which is not defined in the rank"
                    ),
                )
            })
        };
        let (a, b) = (find(a)?, find(b)?);
        ops.depend(a, b, start);
    }
    Ok(())
}

/// An operation line, `[LABEL:] send …`, appended to its rank's `ops` and its label, if any,
/// to `labels`; the complaint, without the rank, where it is wrong.
fn labeled_operation<'a>(
    line: &'a str,
    ops: &mut Ops,
    labels: &mut Labels<'a>,
) -> Result<(), String> {
    let colon = line.as_bytes().iter().position(|&b| b == b':');
    let (label, op) = match colon.map(|i| (trim(&line[..i]), &line[i + 1..])) {
        Some((l, rest)) if !l.as_bytes().contains(&b' ') => (Some(l), trim(rest)),
        _ => (None, line),
    };
    let kind = operation(op)?;
    if let Some(l) = label
        && !labels.insert(l, ops.kinds.len() as u32)
    {
        return Err(format!("label `{l}` is defined twice"));
    }
    ops.kinds.push(kind);
    Ok(())
}

/// A line as schedgen writes it, read by [`fast_line`]: an operation with its label
/// `lN` (N, the label), or a dependency of label `lA` (with A) on `lB`, on its start or not.
enum Fast<'a> {
    Op(usize, &'a str, Kind),
    Dep((&'a str, usize), (&'a str, usize), bool),
}

/// The line at byte `at` of `body` where it is one of schedgen's, words apart by one space,
/// nothing before or after them: `lN: send Sb to R[ tag T]`, `lN: recv Sb from R[ tag T]`,
/// `lN: calc C`, `lA requires lB`, `lA irequires lB`, every number plain digits (a peer may
/// be negative), every label at most `most`; with the byte after its line break. None for
/// any other line, which the words' reading takes as the same operation or dependency, or
/// finds wrong.
fn fast_line(text: &str, at: usize, most: usize) -> Option<(Fast<'_>, usize)> {
    let body = text.as_bytes();
    let mut p = Cursor { b: body, p: at };
    let label = |p: &mut Cursor<'_>| {
        let (start, n) = p.label(most)?;
        Some((&text[start..p.p], n))
    };
    let (first, n) = label(&mut p)?;
    let line = if p.word(b": ").is_some() {
        let kind = if p.word(b"calc ").is_some() {
            Kind::Calc(p.digits(15)? as f64)
        } else {
            let send = match () {
                _ if p.word(b"send ").is_some() => true,
                _ if p.word(b"recv ").is_some() => false,
                _ => return None,
            };
            let bytes = p.digits(19)?;
            match send {
                true => p.word(b"b to "),
                false => p.word(b"b from "),
            }?;
            let peer = p.int()?;
            let tag = match p.word(b" tag ") {
                Some(()) => p.int()?,
                None => 0,
            };
            match send {
                true => Kind::Send {
                    bytes,
                    to: peer,
                    tag,
                },
                false => Kind::Recv {
                    bytes,
                    from: peer,
                    tag,
                },
            }
        };
        Fast::Op(n, first, kind)
    } else {
        let start = match () {
            _ if p.word(b" requires ").is_some() => false,
            _ if p.word(b" irequires ").is_some() => true,
            _ => return None,
        };
        Fast::Dep((first, n), label(&mut p)?, start)
    };
    match body.get(p.p) {
        None => Some((line, p.p)),
        Some(b'\n') => Some((line, p.p + 1)),
        Some(_) => None,
    }
}

/// Where [`fast_line`] is in its line's bytes.
struct Cursor<'a> {
    b: &'a [u8],
    p: usize,
}

impl Cursor<'_> {
    /// Digits here, at most `max` of them, moved past: their value.
    #[inline(always)]
    fn digits(&mut self, max: usize) -> Option<u64> {
        let start = self.p;
        let mut v = 0u64;
        while let Some(&c) = self.b.get(self.p) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(d as u64);
            self.p += 1;
        }
        (self.p > start && self.p - start <= max).then_some(v)
    }

    /// A label `lN` here, as `Labels::number` reads it (no leading zero, N at most `most`),
    /// moved past: where it starts, and N.
    #[inline(always)]
    fn label(&mut self, most: usize) -> Option<(usize, usize)> {
        let start = self.p;
        self.word(b"l")?;
        let n = self.digits(9)? as usize;
        let plain = self.p - start == 2 || self.b[start + 1] != b'0';
        (plain && n <= most).then_some((start, n))
    }

    /// A peer or tag here (`-` and at most 9 digits), moved past.
    #[inline(always)]
    fn int(&mut self) -> Option<i32> {
        let negative = self.b.get(self.p) == Some(&b'-');
        self.p += negative as usize;
        let v = self.digits(9)? as i64;
        Some(if negative { -v } else { v } as i32)
    }

    /// `w` here, moved past (compared as one or two words, not byte by byte).
    #[inline(always)]
    fn word<const N: usize>(&mut self, w: &[u8; N]) -> Option<()> {
        let here: &[u8; N] = self.b.get(self.p..self.p + N)?.try_into().ok()?;
        (here == w).then(|| self.p += N)
    }
}

/// Every message's peer in `ranks` a rank of the schedule's `p` (or -1, any source).
fn check_peers(name: &str, ranks: &[Ops], p: usize) -> Result<(), TraceError> {
    let p = p as i64;
    for (r, ops) in ranks.iter().enumerate() {
        for kind in &ops.kinds {
            let peer = match *kind {
                Kind::Send { to, .. } => to as i64,
                Kind::Recv { from, .. } => from as i64,
                Kind::Calc(_) => continue,
            };
            if peer >= p || peer < -1 {
                return Err(TraceError::at(
                    name,
                    format!("rank {r}: a message names rank {peer}, of {p}"),
                ));
            }
        }
    }
    Ok(())
}

/// `send 8b to 1 tag 0`, `recv 8b from -1`, `calc 100`, each may end with `cpu C` and `nic N`.
fn operation(op: &str) -> Result<Kind, String> {
    let mut words = [""; 12];
    let mut n = 0;
    for w in op.split_ascii_whitespace() {
        if n == words.len() {
            return Err(format!("expected at most {n} words, found `{op}`"));
        }
        words[n] = w;
        n += 1;
    }
    let w = &words[..n];
    let bytes = |s: &str| {
        s.strip_suffix('b')
            .and_then(|n| n.parse::<u64>().ok())
            .ok_or_else(|| format!("expected a size such as `8b`, found `{s}`"))
    };
    let int = |s: &str| {
        s.parse::<i32>()
            .map_err(|_| format!("expected an integer, found `{s}`"))
    };
    // The optional `tag T`, `cpu C`, `nic N` after the first words.
    let tail = |rest: &[&str]| -> Result<i32, String> {
        let mut tag = 0;
        for pair in rest.chunks(2) {
            match pair {
                ["tag", t] => tag = int(t)?,
                ["cpu" | "nic", v] => {
                    int(v)?;
                }
                _ => {
                    return Err(format!(
                        "expected `tag T`, `cpu C` or `nic N`, found `{}`",
                        pair.join(" ")
                    ));
                }
            }
        }
        Ok(tag)
    };
    match w {
        ["send", size, "to", to, rest @ ..] => Ok(Kind::Send {
            bytes: bytes(size)?,
            to: int(to)?,
            tag: tail(rest)?,
        }),
        ["recv", size, "from", from, rest @ ..] => Ok(Kind::Recv {
            bytes: bytes(size)?,
            from: int(from)?,
            tag: tail(rest)?,
        }),
        ["calc", n, rest @ ..] => {
            tail(rest)?;
            let v: f64 = n
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("expected a time ≥ 0 for `calc`, found `{n}`"))?;
            Ok(Kind::Calc(v))
        }
        _ => Err(format!(
            "expected `send Nb to R`, `recv Nb from R`, `calc N` or `A requires B`, found `{op}`"
        )),
    }
}

/// Each operation's dependencies `deps` (operation, the one it waits for) as lists,
/// `of[start[i]..start[i + 1]]` operation `i`'s, in file order.
fn lists(n: usize, deps: &[(u32, u32)], by_waiter: bool) -> (Vec<u32>, Vec<u32>) {
    let key = |&(a, b): &(u32, u32)| if by_waiter { a } else { b } as usize;
    let mut start = vec![0u32; n + 1];
    for d in deps {
        start[key(d) + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut of = vec![0u32; deps.len()];
    let mut filled = start.clone();
    for d in deps {
        let k = key(d);
        of[filled[k] as usize] = if by_waiter { d.1 } else { d.0 };
        filled[k] += 1;
    }
    (start, of)
}

/// Kahn's order of `n` operations whose dependencies are `both` (operation, the one it
/// waits for), the lowest index first where several are ready; an operation on a cycle is
/// left out.
fn kahn(n: usize, both: &[(u32, u32)]) -> Vec<usize> {
    let (after_at, after) = lists(n, both, false);
    let mut indegree = vec![0u32; n];
    for &(a, _) in both {
        indegree[a as usize] += 1;
    }
    let mut ready: BinaryHeap<Reverse<u32>> = (0..n as u32)
        .filter(|&i| indegree[i as usize] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i as usize);
        for &j in &after[after_at[i as usize] as usize..after_at[i as usize + 1] as usize] {
            indegree[j as usize] -= 1;
            if indegree[j as usize] == 0 {
                ready.push(Reverse(j));
            }
        }
    }
    order
}

/// A rank's block issued as MPI calls while it is read, as [`block`] and [`sequence`] would
/// issue it, where every line is one of [`fast_line`]'s (or empty), each operation's
/// dependencies follow it before the next operation and name earlier ones, and every peer is
/// one of the `p` ranks; None at the first line that is not so (the calls put so far are then
/// dropped by the caller).
fn stream(b: &Block<'_>, p: usize, calc_ns: f64, out: &mut dyn Out) -> Option<()> {
    let body = b.body.as_bytes();
    let mut labels = Labels::new(body.len());
    // An operation a label, each with its dependency line: about 40 bytes.
    out.reserve(body.len() / 40 + 3);
    let mut issuer = Issuer::new(calc_ns, out);
    // The operation to issue next and the one after it, whose dependencies are being read:
    // each its index, kind and the operations it requires.
    type Op = (u32, Kind, Vec<u32>);
    let (mut pending, mut current): (Option<Op>, Option<Op>) = (None, None);
    let mut spare = Vec::new();
    let (mut n, mut at) = (0u32, 0);
    while at < body.len() {
        if body[at] == b'\n' {
            at += 1;
            continue;
        }
        let (line, next) = fast_line(b.body, at, labels.most)?;
        at = next;
        match line {
            Fast::Op(l, _, kind) => {
                let peer = match kind {
                    Kind::Send { to, .. } => to,
                    Kind::Recv { from, .. } => from,
                    Kind::Calc(_) => 0,
                };
                if peer < -1 || peer as i64 >= p as i64 || !labels.insert_numbered(l, n) {
                    return None;
                }
                if let Some((i, kind, mut requires)) = pending.take() {
                    let (_, k, r) = current.as_ref().expect("the operation after it");
                    issuer.issue(i, &kind, &requires, Some((k, r)), out);
                    requires.clear();
                    spare = requires;
                }
                pending = current.replace((n, kind, std::mem::take(&mut spare)));
                n += 1;
            }
            Fast::Dep((_, a), (_, d), start) => {
                let (a, d) = (labels.numbered(a)?, labels.numbered(d)?);
                let op = current.as_mut().filter(|op| op.0 == a && d < a)?;
                if !start {
                    op.2.push(d);
                }
            }
        }
    }
    if let Some((i, kind, requires)) = pending {
        let (_, k, r) = current.as_ref().expect("the operation after it");
        issuer.issue(i, &kind, &requires, Some((k, r)), out);
    }
    if let Some((i, kind, requires)) = current {
        issuer.issue(i, &kind, &requires, None, out);
    }
    issuer.finish(out);
    Some(())
}

/// A rank's operations as a sequence of MPI calls, put to `out`.
fn sequence(ops: &Ops, calc_ns: f64, out: &mut dyn Out) {
    let n = ops.kinds.len();
    let both = || ops.requires.iter().chain(&ops.irequires);
    // Where every operation waits for earlier ones only (schedgen's), the order is the file's
    // (None).
    let order: Option<Vec<usize>> = match both().all(|&(a, b)| a > b) {
        true => None,
        false => Some(kahn(n, &both().copied().collect::<Vec<_>>())),
    };
    let issued = order.as_ref().map_or(n, Vec::len);
    let nth = |k: usize| order.as_ref().map_or(Some(k), |o| o.get(k).copied());
    // A call an operation at most, and MPI_Init, MPI_Finalize and a last Waitall.
    out.reserve(issued + 3);
    // What each operation requires, in file order.
    let (req_at, req) = lists(n, &ops.requires, true);
    let requires = |i: usize| &req[req_at[i] as usize..req_at[i + 1] as usize];
    // A cycle leaves operations out: they are never issued (LogGOPSim would never start them).
    let mut issuer = Issuer::new(calc_ns, out);
    for k in 0..issued {
        let i = nth(k).expect("an operation");
        let next = (nth(k + 1).filter(|&j| j < n)).map(|j| (&ops.kinds[j], requires(j)));
        issuer.issue(i as u32, &ops.kinds[i], requires(i), next, out);
    }
    issuer.finish(out);
}

/// Issues a rank's operations as MPI calls, one after another in the order chosen: the time
/// reached and the requests still in flight.
struct Issuer {
    calc_ns: f64,
    t: f64,
    reqs: Requests<u32>,
}

impl Issuer {
    /// Starts the rank with its `MPI_Init`.
    fn new(calc_ns: f64, out: &mut dyn Out) -> Issuer {
        out.put(&Call::new(Routine::Init, 0, 0));
        Issuer {
            calc_ns,
            t: 0.0,
            reqs: Requests::new(),
        }
    }

    fn now(&self) -> u64 {
        self.t.round() as u64
    }

    /// Operation `i` of `kind` that requires operations `requires`, the next issued (its kind
    /// and what it requires) `next`: what it requires still in flight completed first, then
    /// the operation, blocking where the next requires it and nothing else in flight and is not
    /// a `calc 0` (what a Wait is written as), or where it is the last.
    fn issue(
        &mut self,
        i: u32,
        kind: &Kind,
        requires: &[u32],
        next: Option<(&Kind, &[u32])>,
        out: &mut dyn Out,
    ) {
        let (now, reqs) = (self.now(), &mut self.reqs);
        let open: Vec<u32> = requires
            .iter()
            .copied()
            .filter(|d| reqs.is_open(d))
            .collect();
        if !open.is_empty() {
            let routine = match open.len() {
                1 => Routine::Wait,
                _ => Routine::Waitall,
            };
            let mut c = Call::new(routine, now, now);
            c.done = open.iter().filter_map(|d| reqs.complete(d)).collect();
            out.put(&c);
        }
        let blocking = next.is_none_or(|(kind, r)| {
            *kind != Kind::Calc(0.0)
                && r.contains(&i)
                && r.iter().all(|&d| d == i || !reqs.is_open(&d))
        });
        match *kind {
            Kind::Calc(units) => self.t += units * self.calc_ns,
            Kind::Send {
                bytes,
                to: peer,
                tag,
            }
            | Kind::Recv {
                bytes,
                from: peer,
                tag,
            } => {
                let send = matches!(kind, Kind::Send { .. });
                let routine = match (send, blocking) {
                    (true, true) => Routine::Send,
                    (true, false) => Routine::Isend,
                    (false, true) => Routine::Recv,
                    (false, false) => Routine::Irecv,
                };
                let mut c = Call::p2p(routine, (now, now), bytes, peer, tag);
                if !blocking {
                    c.e.id = reqs.create(i, (!send).then_some((peer, tag))) as i64;
                }
                out.put(&c);
            }
        }
    }

    /// Ends the rank: what is still in flight completed by one `MPI_Waitall`, then
    /// `MPI_Finalize`.
    fn finish(mut self, out: &mut dyn Out) {
        let rest = self.reqs.complete_all();
        if !rest.is_empty() {
            let mut c = Call::new(Routine::Waitall, self.now(), self.now());
            c.done = rest;
            out.put(&c);
        }
        out.put(&Call::new(Routine::Finalize, self.now(), self.now()));
    }
}
