//! LogGOPSim's GOAL schedules (`txt2bin.re`): `num_ranks N`, then `rank R { … }` blocks of
//! `[LABEL:] send Nb to R [tag T] [cpu C] [nic N]`, `recv Nb from R …`, `calc N …`,
//! `A requires B` (A starts when B has ended) and `A irequires B` (when B has started). A rank's
//! operations form a graph, not a sequence: they are read as the MPI program that issues them
//! in an order the dependencies allow (file order where free), each send and receive
//! nonblocking (blocking where the very next operation requires it alone and is not a `calc 0`,
//! a Wait as schedgen and `convert --to goal` write it, or where it is the last), a dependency
//! on one a `MPI_Wait`/`MPI_Waitall`, a `calc` computation of `calc_ns` ns a unit, and the rest
//! completed by one `MPI_Waitall` at the end (IMPORT.md: where this and LogGOPSim differ).

use super::{Call, Notes, Requests, build};
use crate::error::TraceError;
use crate::trace::{Routine, Trace};
use rayon::prelude::*;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Send { bytes: u64, to: i32, tag: i32 },
    Recv { bytes: u64, from: i32, tag: i32 },
    Calc(f64),
}

#[derive(Clone, Debug)]
struct Op {
    kind: Kind,
    /// Operations that must have ended before it starts.
    requires: Vec<usize>,
    /// Operations that must have started before it starts.
    irequires: Vec<usize>,
}

pub(super) fn load(path: &Path, calc_ns: f64) -> Result<Trace, TraceError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| TraceError::at(&name, format!("cannot read: {e}")))?;
    from_text(&name, &text, calc_ns)
}

/// The trace of the GOAL schedule `text`.
pub(super) fn from_text(name: &str, text: &str, calc_ns: f64) -> Result<Trace, TraceError> {
    let ranks = parse(name, text)?;
    let mut notes = Notes::default();
    notes.say(format!(
        "a GOAL schedule records no times: each `calc` unit takes {calc_ns} ns (--calc-ns sets it), \
         every call no time, so the measured runtime is the computation alone; the ranks are taken \
         as one node, and each rank's operations as the MPI program that issues them in file order \
         as their dependencies allow"
    ));
    let calls = ranks.par_iter().map(|ops| sequence(ops, calc_ns)).collect();
    build(name, calls, notes, Vec::new())
}

/// Each rank's operations, in file order, with their dependencies as indices. The blocks are
/// found first, then read in parallel; the error said is the one nearest the file's start.
fn parse(name: &str, text: &str) -> Result<Vec<Vec<Op>>, TraceError> {
    let text = without_block_comments(text);
    let (p, blocks, structural) = blocks(name, &text);
    let read: Vec<Result<Vec<Op>, TraceError>> =
        blocks.par_iter().map(|b| block(name, b)).collect();
    let mut ranks: Vec<Vec<Op>> = vec![Vec::new(); p.unwrap_or(0)];
    for (b, ops) in blocks.iter().zip(read) {
        ranks[b.rank].extend(ops?);
    }
    if let Some(e) = structural {
        return Err(e);
    }
    check_peers(name, &ranks)?;
    Ok(ranks)
}

/// A rank's block: its rank, the number of its first line, its lines, and whether its `}` was
/// found.
struct Block<'a> {
    rank: usize,
    first: usize,
    body: &'a str,
    closed: bool,
}

/// A line without its `//` comment and surrounding spaces.
fn uncommented(raw: &str) -> &str {
    match raw.as_bytes().windows(2).position(|w| w == b"//") {
        Some(i) => &raw[..i],
        None => raw,
    }
    .trim()
}

/// The schedule's `num_ranks` and its ranks' blocks, up to the first error outside a block
/// (a block is read later: its own errors, which come first where they lie before it, are
/// found then).
fn blocks<'a>(name: &str, text: &'a str) -> (Option<usize>, Vec<Block<'a>>, Option<TraceError>) {
    let mut blocks: Vec<Block<'a>> = Vec::new();
    let mut declared: Option<usize> = None;
    // The open block: its index in `blocks` and the byte where its body starts.
    let mut open: Option<(usize, usize)> = None;
    let mut offset = 0;
    for (n, raw) in text.split('\n').enumerate() {
        let (lineno, at) = (n + 1, offset);
        offset += raw.len() + 1;
        let line = uncommented(raw);
        if line.is_empty() {
            continue;
        }
        let err = |m: String| TraceError::line(name, lineno, m);
        if let Some((i, start)) = open {
            if line == "}" {
                blocks[i].body = &text[start..at];
                blocks[i].closed = true;
                open = None;
            }
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let fail = match words.as_slice() {
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
                        let start = (at + raw.len() + 1).min(text.len());
                        blocks.push(Block {
                            rank: r,
                            first: lineno + 1,
                            body: &text[start..],
                            closed: false,
                        });
                        open = Some((blocks.len() - 1, start));
                        None
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
    }
    let end = if open.is_some() {
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

/// Whether a block's lines hold an operation (any line but a dependency).
fn has_operations(body: &str) -> bool {
    body.lines().map(uncommented).any(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        !w.is_empty() && !matches!(w.as_slice(), [_, "requires" | "irequires", _])
    })
}

/// One rank's operations, read from its block; its dependencies resolved where its `}` was found.
fn block(name: &str, b: &Block<'_>) -> Result<Vec<Op>, TraceError> {
    let r = b.rank;
    // Sized for a label every 40 bytes (`l12: send 8b to 1 tag 0` and its dependency line):
    // growing a table of millions of labels costs more than the reading.
    let expected = b.body.len() / 40;
    let mut ops: Vec<Op> = Vec::with_capacity(expected);
    let mut labels: Labels = HashMap::with_capacity_and_hasher(expected, Default::default());
    let mut deps: Vec<Dependency> = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    // The two labels defined last, with their operations: most dependencies name them.
    let mut recent: [(&str, usize); 2] = [("", 0); 2];
    for (n, raw) in b.body.lines().enumerate() {
        let line = uncommented(raw);
        if line.is_empty() {
            continue;
        }
        let lineno = b.first + n;
        words.clear();
        words.extend(line.split_whitespace());
        if let [a, dep @ ("requires" | "irequires"), d] = words.as_slice() {
            // Resolved at once where both labels are known and none before it waits (the order
            // of each operation's dependencies stays the file's), else at the `}`.
            let known = |l: &str| match recent.iter().find(|(k, _)| !k.is_empty() && *k == l) {
                Some(&(_, i)) => Some(i),
                None => labels.get(l).copied(),
            };
            match (deps.is_empty(), known(a), known(d)) {
                (true, Some(a), Some(d)) => depend(&mut ops[a], d, *dep == "irequires"),
                _ => deps.push((lineno, a, d, *dep == "irequires")),
            }
            continue;
        }
        let label = labeled_operation(line, &mut ops, &mut labels)
            .map_err(|m| TraceError::line(name, lineno, format!("rank {r}: {m}")))?;
        if let Some(l) = label {
            recent = [recent[1], (l, ops.len() - 1)];
        }
    }
    if b.closed {
        resolve(name, &mut ops, r, &labels, &mut deps)?;
    }
    Ok(ops)
}

/// A dependency read before its rank's block ends, where its labels may follow it: the line,
/// the operation that waits, the one it waits for, and whether for its start (`irequires`).
type Dependency<'a> = (usize, &'a str, &'a str, bool);

/// A rank's labels: their operations' indices, by a hasher for short keys (labels are looked
/// up once a dependency, millions in a large schedule; SipHash spends most of that time).
type Labels<'a> = HashMap<&'a str, usize, std::hash::BuildHasherDefault<ShortKeys>>;

/// FNV-1a, for short keys that no adversary chooses (a schedule's labels).
#[derive(Default)]
struct ShortKeys(u64);

impl std::hash::Hasher for ShortKeys {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// `text` with its `/* … */` comments blanked out but for their line breaks, so that errors
/// still name the file's lines.
fn without_block_comments(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("/*") {
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
    ops: &mut [Op],
    r: usize,
    labels: &Labels<'_>,
    deps: &mut Vec<Dependency<'_>>,
) -> Result<(), TraceError> {
    for (line, a, b, start) in deps.drain(..) {
        let find = |l: &str| {
            labels.get(l).copied().ok_or_else(|| {
                TraceError::line(
                    name,
                    line,
                    format!(
                        "rank {r}: a dependency names label `{l}`, which is not defined in the rank"
                    ),
                )
            })
        };
        let (a, b) = (find(a)?, find(b)?);
        depend(&mut ops[a], b, start);
    }
    Ok(())
}

/// `op` waits for operation `b`: for its start (`irequires`) or its end.
fn depend(op: &mut Op, b: usize, start: bool) {
    match start {
        true => op.irequires.push(b),
        false => op.requires.push(b),
    }
}

/// An operation line, `[LABEL:] send …`, appended to its rank's `ops` and its label, if any,
/// to `labels`; the complaint, without the rank, where it is wrong.
fn labeled_operation<'a>(
    line: &'a str,
    ops: &mut Vec<Op>,
    labels: &mut Labels<'a>,
) -> Result<Option<&'a str>, String> {
    let (label, op) = match line.split_once(':') {
        Some((l, rest)) if !l.trim().contains(' ') => (Some(l.trim()), rest.trim()),
        _ => (None, line),
    };
    let kind = operation(op)?;
    if let Some(l) = label
        && labels.insert(l, ops.len()).is_some()
    {
        return Err(format!("label `{l}` is defined twice"));
    }
    ops.push(Op {
        kind,
        requires: Vec::new(),
        irequires: Vec::new(),
    });
    Ok(label)
}

/// Every message's peer a rank of the schedule (or -1, any source), checked once all ranks
/// are read, since `num_ranks` bounds them.
fn check_peers(name: &str, ranks: &[Vec<Op>]) -> Result<(), TraceError> {
    let p = ranks.len() as i64;
    for (r, ops) in ranks.iter().enumerate() {
        for op in ops {
            let peer = match op.kind {
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
    let w: Vec<&str> = op.split_whitespace().collect();
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
    match w.as_slice() {
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

/// A rank's operations as a sequence of MPI calls.
fn sequence(ops: &[Op], calc_ns: f64) -> Vec<Call> {
    let n = ops.len();
    // Kahn's order over both kinds of edge, the lowest index first where several are ready.
    let mut indegree = vec![0usize; n];
    // The operations that wait for each, `after[start[d]..start[d + 1]]`, in index order.
    let mut start = vec![0usize; n + 1];
    for (i, op) in ops.iter().enumerate() {
        for &d in op.requires.iter().chain(&op.irequires) {
            indegree[i] += 1;
            start[d + 1] += 1;
        }
    }
    for d in 0..n {
        start[d + 1] += start[d];
    }
    let mut after = vec![0usize; start[n]];
    let mut filled = start.clone();
    for (i, op) in ops.iter().enumerate() {
        for &d in op.requires.iter().chain(&op.irequires) {
            after[filled[d]] = i;
            filled[d] += 1;
        }
    }
    let mut ready: BTreeSet<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &j in &after[start[i]..start[i + 1]] {
            indegree[j] -= 1;
            if indegree[j] == 0 {
                ready.insert(j);
            }
        }
    }
    // A cycle leaves operations out: they are never issued (LogGOPSim would never start them).
    let mut t = 0.0f64;
    let at = |t: f64| (t.round() as u64, t.round() as u64);
    let mut calls = vec![Call::new(Routine::Init, 0, 0)];
    let mut reqs: Requests<usize> = Requests::new();
    for (k, &i) in order.iter().enumerate() {
        // What it requires that is still in flight, completed first.
        let open: Vec<usize> = ops[i]
            .requires
            .iter()
            .copied()
            .filter(|d| reqs.is_open(d))
            .collect();
        if !open.is_empty() {
            let mut c = Call::new(
                if open.len() == 1 {
                    Routine::Wait
                } else {
                    Routine::Waitall
                },
                at(t).0,
                at(t).1,
            );
            c.done = open.iter().filter_map(|d| reqs.complete(d)).collect();
            calls.push(c);
        }
        // Blocking when the next operation requires this one and nothing else in flight and
        // is not a `calc 0` (what a Wait is written as), or when it is the last.
        let next = order.get(k + 1).map(|&j| &ops[j]);
        let blocking = next.is_none_or(|o| {
            o.kind != Kind::Calc(0.0)
                && o.requires.contains(&i)
                && o.requires.iter().all(|&d| d == i || !reqs.is_open(&d))
        });
        match ops[i].kind {
            Kind::Calc(units) => t += units * calc_ns,
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
                let send = matches!(ops[i].kind, Kind::Send { .. });
                let routine = match (send, blocking) {
                    (true, true) => Routine::Send,
                    (true, false) => Routine::Isend,
                    (false, true) => Routine::Recv,
                    (false, false) => Routine::Irecv,
                };
                let mut c = Call::p2p(routine, at(t), bytes, peer, tag);
                if !blocking {
                    c.e.id = reqs.create(i, (!send).then_some((peer, tag))) as i64;
                }
                calls.push(c);
            }
        }
    }
    let rest = reqs.complete_all();
    if !rest.is_empty() {
        let mut c = Call::new(Routine::Waitall, at(t).0, at(t).1);
        c.done = rest;
        calls.push(c);
    }
    calls.push(Call::new(Routine::Finalize, at(t).0, at(t).1));
    calls
}
