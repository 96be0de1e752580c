//! The body's lines read a piece at a time ([`piece`]): most as plain integers ([`plain_line`]),
//! each task's events and operations kept for its calls, the communication records and
//! communicators as they come.

use super::*;

/// A task's event (time, type, value) of a `2:` record, or a `4:` record's operation (type
/// [`GLOP_RECORD`], the value its index in its piece's operations).
pub(super) type Item = (u64, u64, i64);

/// The type of an [`Item`] from a `4:` record.
pub(super) const GLOP_RECORD: u64 = u64::MAX;

/// What a piece of the body holds: communicators, communication records, each task's items
/// (those of the types the reader uses) and the `4:` records' operations, what it left out,
/// and its first error. Read again for each round's piece: its lists keep their room.
#[derive(Default)]
pub(super) struct Piece {
    pub(super) comms: Vec<(i64, Vec<u32>)>,
    pub(super) records: Vec<Record>,
    /// The items of the tasks met, `lists[..used]`, each with its task.
    lists: Vec<(u32, Vec<Item>)>,
    used: usize,
    /// Each task's list, by its index in `lists`: in a table where the tasks are not too many
    /// for one a piece (a lookup a line), else hashed.
    dense: Vec<usize>,
    sparse: HashMap<usize, usize>,
    pub(super) glops: Vec<Glop>,
    pub(super) notes: Notes,
    pub(super) error: Option<TraceError>,
}

impl Piece {
    pub(super) fn new(p: usize) -> Piece {
        Piece {
            dense: vec![usize::MAX; if p <= 1 << 16 { p } else { 0 }],
            ..Piece::default()
        }
    }

    /// Empties it for another piece, its lists' room kept.
    fn clear(&mut self) {
        for (r, list) in &mut self.lists[..self.used] {
            list.clear();
            if let Some(k) = self.dense.get_mut(*r as usize) {
                *k = usize::MAX;
            }
        }
        self.used = 0;
        self.sparse.clear();
        self.glops.clear();
    }

    /// The list of task `r`'s items, made where the piece has none yet.
    fn list(&mut self, r: usize) -> &mut Vec<Item> {
        let k = match self.dense.get_mut(r) {
            Some(k) => k,
            None => self.sparse.entry(r).or_insert(usize::MAX),
        };
        if *k == usize::MAX {
            if self.used == self.lists.len() {
                self.lists.push((0, Vec::new()));
            }
            *k = self.used;
            self.lists[self.used].0 = r as u32;
            self.used += 1;
        }
        &mut self.lists[*k].1
    }

    /// Task `r`'s items.
    pub(super) fn items_of(&self, r: usize) -> &[Item] {
        let k = match self.dense.get(r) {
            Some(&k) => k,
            None => self.sparse.get(&r).copied().unwrap_or(usize::MAX),
        };
        self.lists
            .get(k)
            .filter(|_| k < self.used)
            .map_or(&[], |l| &l.1)
    }
}

/// Reads the lines of `text`, a piece of the body `body` (the lines after the header line),
/// into `out`. Never inlined: inlined into the parallel loop that calls it, the whole read took
/// 0.29 s against 0.25 (2,000,000 calls, medians of nine runs in turn).
#[inline(never)]
pub(super) fn piece(name: &str, body: &[u8], text: &[u8], h: &Header, out: &mut Piece) {
    let p = h.nodes.len();
    out.clear();
    let mut f: Vec<&str> = Vec::new();
    let mut v = [0i64; 32];
    // The lines as `str::lines` cuts them; most are plain integers, read as they are met, any
    // other's fields as text.
    let (bytes, mut from, mut n) = (text, 0, 0);
    while from < bytes.len() {
        let (end, plain) = plain_line(bytes, from, &mut v);
        if plain.is_some_and(|count| plain_record(&v[..count], h.unit, p, out)) {
            (from, n) = (end + 1, n + 1);
            continue;
        }
        let k = n;
        let at = |m: String| {
            TraceError::line(
                name,
                1 + crate::trace::import::first_line(body, text) + k,
                m,
            )
        };
        let Ok(line) = std::str::from_utf8(&text[from..end]) else {
            out.error = Some(at("expected UTF-8 text".into()));
            break;
        };
        let line = line.strip_suffix('\r').unwrap_or(line);
        (from, n) = (end + 1, n + 1);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        f.clear();
        if plain.is_none() {
            crate::trace::import::split_into(line, b':', &mut f);
        }
        let (f, v) = (&f, &v);
        let count = plain.unwrap_or(f.len());
        let int = |i: usize| -> Result<i64, Wrong> {
            if plain.is_some_and(|n| i < n) {
                return Ok(v[i]);
            }
            let s = f.get(i).copied().unwrap_or("");
            // Fields with spaces: trimmed.
            (s.parse().or_else(|_| s.trim().parse())).map_err(|_| Wrong::Number(i))
        };
        let time = |i: usize| -> Result<u64, Wrong> {
            let t = int(i)?;
            u64::try_from(t)
                .ok()
                .and_then(|t| t.checked_mul(h.unit))
                .ok_or(Wrong::Time(t))
        };
        let mut read = || -> Result<(), Wrong> {
            if plain.is_none() && f[0] == "c" {
                // c:APPL:ID:N:TASK…, the first application's only.
                let members: Result<Vec<i64>, _> = (4..f.len()).map(int).collect();
                let members = members?;
                if int(1)? == 1 && members.iter().all(|&t| t >= 1 && t as usize <= p) {
                    let members = members.iter().map(|&t| t as u32 - 1).collect();
                    out.comms.push((int(2)?, members));
                }
                return Ok(());
            }
            let kind = int(0)?;
            if kind == 1 {
                return Ok(());
            }
            if !(2..=4).contains(&kind) {
                out.notes.skip(&format!("Paraver records of type {kind}"));
                return Ok(());
            }
            let task = int(3)?;
            if int(2)? != 1 || task < 1 || task as usize > p {
                out.notes.skip("records of another application or task");
                return Ok(());
            }
            let r = task as usize - 1;
            if kind == 3 {
                // The receiver's task is field 10.
                let dst = int(9)?;
                if int(8)? != 1 || dst < 1 || dst as usize > p {
                    return Err(Wrong::Receiver);
                }
                out.records.push((
                    r as u32,
                    time(5)?,
                    dst as u32 - 1,
                    time(11)?,
                    time(12)?,
                    int(13)?.max(0) as u64,
                    int(14)? as i32,
                ));
                return Ok(());
            }
            if int(4)? != 1 {
                out.notes.skip("events of a task's other threads");
                return Ok(());
            }
            let t = time(5)?;
            if kind == 4 {
                // COMM:SENT:RECEIVED:OP:ROOT, for the call that began here.
                let g = Glop {
                    comm: int(6)?,
                    sent: int(7)?.max(0) as u64,
                    got: int(8)?.max(0) as u64,
                    root: Some(int(10)?),
                    is_root: false,
                };
                out.glops.push(g);
                let i = out.glops.len() as i64 - 1;
                out.list(r).push((t, GLOP_RECORD, i));
                return Ok(());
            }
            let items = out.list(r);
            for k in (6..count.saturating_sub(1)).step_by(2) {
                let (ty, v) = (int(k)? as u64, int(k + 1)?);
                if MPI_TYPES.contains(&ty) || GLOBAL_OP.contains(&ty) || is_caller(ty) {
                    items.push((t, ty, v));
                }
            }
            Ok(())
        };
        if let Err(wrong) = read() {
            let m = match wrong {
                Wrong::Number(i) => format!(
                    "expected a number as field {}, found `{}` in `{line}`",
                    i + 1,
                    line.split(':').nth(i).unwrap_or("")
                ),
                Wrong::Time(t) => format!("time {t} out of range"),
                Wrong::Receiver => {
                    format!("expected a receiving task 1–{p} of application 1 in `{line}`")
                }
            };
            out.error = Some(at(m));
            break;
        }
    }
}

/// Reads a line of plain integers `v` where it is a state, an event of a task's first thread
/// or a communication between two tasks, of the first application, whole: most of a trace's
/// lines, read without the general path's steps. False where the general path must read it
/// (another record, or one it refuses with what is wrong).
#[inline]
fn plain_record(v: &[i64], unit: u64, p: usize, out: &mut Piece) -> bool {
    let time = |t: i64| u64::try_from(t).ok().and_then(|t| t.checked_mul(unit));
    let task = |t: i64| usize::try_from(t).ok().filter(|t| (1..=p).contains(t));
    match *v {
        [1, ..] => true,
        [2, _, 1, r, 1, t, ref events @ ..] => {
            let (Some(r), Some(t)) = (task(r), time(t)) else {
                return false;
            };
            let items = out.list(r - 1);
            for e in events.chunks_exact(2) {
                let ty = e[0] as u64;
                if MPI_TYPES.contains(&ty) || GLOBAL_OP.contains(&ty) || is_caller(ty) {
                    items.push((t, ty, e[1]));
                }
            }
            true
        }
        [3, _, 1, r, _, ls, _, _, 1, d, _, lr, pr, bytes, tag, ..] => {
            let (Some(r), Some(d)) = (task(r), task(d)) else {
                return false;
            };
            let (Some(ls), Some(lr), Some(pr)) = (time(ls), time(lr), time(pr)) else {
                return false;
            };
            let (r, d) = (r as u32 - 1, d as u32 - 1);
            (out.records).push((r, ls, d, lr, pr, bytes.max(0) as u64, tag as i32));
            true
        }
        _ => false,
    }
}

/// What is wrong with a line: field `i` (from 0) is not a number, a time out of range, a
/// communication record's receiver.
enum Wrong {
    Number(usize),
    Time(i64),
    Receiver,
}

/// Reads the line of `text` at `from` as plain integers (digits after an optional `-`, at most
/// 18, between `:`), their values in `v`: the line's end (its `\n`, or the text's end) and how
/// many; None where a field is anything else or `v` cannot hold them all.
pub(super) fn plain_line(text: &[u8], from: usize, v: &mut [i64; 32]) -> (usize, Option<usize>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(read) = wide::plain_line(text, from, v) {
        return read;
    }
    let line_end = |k: usize| k + memchr::memchr(b'\n', &text[k..]).unwrap_or(text.len() - k);
    // A byte at a time, the field's value, digits and sign so far.
    let (mut n, mut x, mut digits, mut negative) = (0, 0i64, 0, false);
    for (k, &b) in text[from..].iter().enumerate() {
        let d = b.wrapping_sub(b'0');
        if d <= 9 {
            x = x.wrapping_mul(10).wrapping_add(d as i64);
            digits += 1;
            continue;
        }
        if b == b'-' && digits == 0 && !negative {
            negative = true;
            continue;
        }
        if digits == 0 || digits > 18 || n == v.len() {
            return (line_end(from + k), None);
        }
        v[n] = if negative { -x } else { x };
        (n, x, digits, negative) = (n + 1, 0, 0, false);
        match b {
            b':' => {}
            b'\n' => return (from + k, Some(n)),
            _ => return (line_end(from + k), None),
        }
    }
    if digits == 0 || digits > 18 || n == v.len() {
        return (text.len(), None);
    }
    v[n] = if negative { -x } else { x };
    (text.len(), Some(n + 1))
}

/// [`plain_line`] for the lines it can read whole at once: 64 bytes from the line's start
/// classed 16 at a time (a colon, a line feed, a digit), the fields' ends then known, each
/// field's digits read eight bytes at a time, none waiting on another. The byte loop waits at
/// each field's end on a branch it cannot foresee (the fields' lengths vary from line to line):
/// `info` of a 2,000,000-call trace took 383–415 ms of CPU with this against 441–460 without
/// (`perf stat -r 10`, in turn; the wall time, 0.24–0.25 s, is held by the serial steps after).
#[cfg(target_arch = "x86_64")]
mod wide {
    /// The line at `from` where it is plain, at most 63 bytes long and its fields at most 16
    /// digits, with at least 8 bytes of `text` before it and 64 from its start: as
    /// [`super::plain_line`] reads it. None where the byte loop must say: a longer line, a
    /// sign, any other byte, an empty field, a longer field, the text's ends.
    #[inline(always)]
    pub(super) fn plain_line(
        text: &[u8],
        from: usize,
        v: &mut [i64; 32],
    ) -> Option<(usize, Option<usize>)> {
        let block = text.get(from..from + 64)?;
        if from < 8 {
            return None;
        }
        let (mut colon, mut newline, mut digit) = (0u64, 0u64, 0u64);
        for (i, part) in block.chunks_exact(16).enumerate() {
            let (c, n, d) = crate::memory::classes16(part.try_into().expect("16 bytes"));
            let at = 16 * i;
            colon |= u64::from(c) << at;
            newline |= u64::from(n) << at;
            digit |= u64::from(d) << at;
        }
        let len = newline.trailing_zeros() as usize;
        if len == 0 || len == 64 {
            return None;
        }
        let below = (1u64 << len) - 1;
        let colon = colon & below;
        let empty = colon & 1 != 0 || colon >> (len - 1) != 0 || colon & (colon >> 1) != 0;
        let count = colon.count_ones() as usize + 1;
        if (digit | colon) & below != below || empty || count > v.len() {
            return None;
        }
        let (mut start, mut ends) = (from, colon);
        for slot in &mut v[..count] {
            let end = from
                + if ends == 0 {
                    len
                } else {
                    ends.trailing_zeros() as usize
                };
            *slot = field(text, start, end)?;
            (start, ends) = (end + 1, ends & ends.wrapping_sub(1));
        }
        Some((from + len, Some(count)))
    }

    /// The digits of `text[start..end]` (1 to 16 of them, 8 bytes of `text` before `end - 8`
    /// where more than 8) as a number; None where more than 16.
    #[inline(always)]
    fn field(text: &[u8], start: usize, end: usize) -> Option<i64> {
        let len = end - start;
        let word = |e: usize| {
            let w: [u8; 8] = text[e - 8..e].try_into().expect("eight bytes");
            u64::from_le_bytes(w) ^ 0x3030_3030_3030_3030
        };
        match len {
            // (most fields of a Paraver line are one digit: the record's kind, application,
            // task, thread)
            1 => Some(text[start].wrapping_sub(b'0') as i64),
            2..=8 => Some(eight(word(end), len) as i64),
            9..=16 => {
                Some((eight(word(end - 8), len - 8) * 100_000_000 + eight(word(end), 8)) as i64)
            }
            _ => None,
        }
    }

    /// The number the last `len` (1 to 8) bytes of `t` hold, each a digit's value, the first
    /// byte in memory the most significant: the bytes before them cleared, then pairs, fours
    /// and the eight joined by three multiplications.
    #[inline(always)]
    fn eight(t: u64, len: usize) -> u64 {
        let t = t & (u64::MAX << (8 * (8 - len)));
        let t = ((t & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(2561)) >> 8;
        let t = ((t & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601)) >> 16;
        ((t & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001)) >> 32
    }
}
