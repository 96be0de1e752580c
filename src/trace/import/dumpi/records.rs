//! A DUMPI file's records decoded (sst-dumpi `dumpi/common/io.c`): its index and footer, and
//! the stream of records, each read by its function's layout (every DUMPI function's, in
//! `layouts.txt`), its arguments kept by key.

use super::{CREATING, MAGIC};
use crate::trace::{Routine, TAG_ANY};
use std::sync::OnceLock;

/// The label that ends a stream.
const END_OF_STREAM: u16 = 293;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Ty {
    I32,
    U16,
    U8,
    I64,
    /// An array of `.0`: an i32 count, then the elements.
    Array(Scalar),
    /// An i32 count of arrays of i32.
    Arrays,
    Str,
    Strs,
    Strss,
    Status,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Scalar {
    I32,
    U16,
    U8,
}

/// The arguments this reader reads, by name. A record keeps each argument under its index
/// here (its key; [`UNREAD`] for the others), found by that, not by comparing names.
pub(super) const KEYS: [&str; 29] = [
    "color",
    "comm",
    "commrank",
    "count",
    "datatype",
    "dest",
    "flag",
    "group",
    "index",
    "indices",
    "key",
    "newcomm",
    "newgroup",
    "oldcomm",
    "oldcommrank",
    "ranks",
    "recvcount",
    "recvcounts",
    "recvtag",
    "recvtype",
    "request",
    "requests",
    "root",
    "sendcount",
    "sendcounts",
    "sendtag",
    "sendtype",
    "source",
    "tag",
];

/// The key of an argument this reader does not read.
const UNREAD: u8 = u8::MAX;

/// The key of `name`, [`UNREAD`] where it is not in [`KEYS`].
pub(super) const fn key_of(name: &str) -> u8 {
    let mut i = 0;
    while i < KEYS.len() {
        if KEYS[i].len() == name.len() {
            let (a, b) = (KEYS[i].as_bytes(), name.as_bytes());
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return i as u8;
            }
        }
        i += 1;
    }
    UNREAD
}

/// The key of an argument the reader reads, at compile time (a name not in [`KEYS`] fails
/// the build).
macro_rules! k {
    ($name:literal) => {
        const {
            assert!(
                records::key_of($name) != u8::MAX,
                "an argument not in records::KEYS"
            );
            records::key_of($name)
        }
    };
}
pub(super) use k;

/// One argument of a layout: its name, type, and the two earlier arguments that must be equal
/// for it to be there (`commrank == root`).
#[derive(Clone, Debug)]
struct Field {
    /// Its key ([`KEYS`]).
    key: u8,
    ty: Ty,
    when: Option<(u8, u8)>,
}

/// Each function id's name and layout (`None`: not a record).
/// A function's name and argument layout.
type Layout = (&'static str, Vec<Field>);

fn layouts() -> &'static [Option<Layout>] {
    static TABLE: OnceLock<Vec<Option<Layout>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let text: &'static str = include_str!("layouts.txt");
        let mut table = vec![None; 294];
        for line in text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
        {
            let mut words = line.split_whitespace();
            let id: usize = words.next().and_then(|w| w.parse().ok()).expect("an id");
            let name = words.next().expect("a name");
            let rest: Vec<&'static str> = words.collect();
            if rest.first().is_some_and(|w| w.starts_with('<')) {
                continue;
            }
            let fields = rest
                .iter()
                .filter(|w| **w != "-")
                .map(|w| {
                    let (when, spec) = match w.strip_prefix('?') {
                        Some(c) => {
                            let (cond, spec) = c.split_once(':').expect("?a==b:field");
                            let (a, b) = cond.split_once("==").expect("a==b");
                            (Some((key_of(a), key_of(b))), spec)
                        }
                        None => (None, *w),
                    };
                    let (name, ty) = spec.split_once(':').expect("name:type");
                    let ty = match ty {
                        "i32" => Ty::I32,
                        "u16" => Ty::U16,
                        "u8" => Ty::U8,
                        "i64" => Ty::I64,
                        "i32[]" => Ty::Array(Scalar::I32),
                        "u16[]" => Ty::Array(Scalar::U16),
                        "u8[]" => Ty::Array(Scalar::U8),
                        "i32[][]" => Ty::Arrays,
                        "str32" => Ty::Str,
                        "str32[]" => Ty::Strs,
                        "str32[][]" => Ty::Strss,
                        "STATUS" => Ty::Status,
                        t => panic!("layouts.txt: unknown type {t}"),
                    };
                    Field {
                        key: key_of(name),
                        ty,
                        when,
                    }
                })
                .collect();
            table[id] = Some((name, fields));
        }
        table
    })
}

/// Function id `id`'s name ("?" where it names no record).
pub(super) fn name(id: u16) -> &'static str {
    layouts()[id as usize].as_ref().map_or("?", |l| l.0)
}

/// Each function id's routine, if the model has it.
pub(super) fn routines() -> &'static [Option<Routine>] {
    static TABLE: OnceLock<Vec<Option<Routine>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let name = |l: &Option<Layout>| l.as_ref().map(|l| format!("MPI_{}", l.0));
        let names = layouts().iter().map(name);
        names
            .map(|n| n.and_then(|n| Routine::from_mpi_name(&n)))
            .collect()
    })
}

/// A big-endian reader over one file's bytes; every read checked.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len());
        let end =
            end.ok_or_else(|| format!("the file ends inside a record at byte {}", self.at))?;
        let s = &self.data[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().unwrap()))
    }
    fn i32(&mut self) -> Result<i32, String> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().unwrap()))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_be_bytes(self.take(8)?.try_into().unwrap()))
    }
    /// An array's count, at most what the rest of the file could hold.
    fn count(&mut self, width: usize) -> Result<usize, String> {
        let n = self.i32()?;
        let left = (self.data.len() - self.at) / width.max(1);
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= left)
            .ok_or_else(|| {
                format!(
                    "an array of {n} elements at byte {} runs past the file",
                    self.at - 4
                )
            })
    }
}

/// A decoded argument.
#[derive(Clone, Debug, Default)]
enum Value {
    #[default]
    None,
    Int(i64),
    /// An array: its place in the record's `ints`.
    Ints(u32, u32),
    /// Each status's (source, tag): their place in the record's `statuses`.
    Statuses(u32, u32),
}

/// One record: its function id, wall times (ns since the epoch) and arguments by name.
#[derive(Clone)]
pub(super) struct Record {
    pub id: u16,
    pub t: (u64, u64),
    args: Vec<(u8, Value)>,
    /// Where each key's first argument is in `args` (`NOT_HERE`: none), looked up for each.
    at: [u8; KEYS.len()],
    /// The arrays' values, one after the other (a buffer kept from record to record).
    ints: Vec<i64>,
    statuses: Vec<(i32, i32)>,
}

/// A key without an argument in a record's `at`.
const NOT_HERE: u8 = u8::MAX;

impl Record {
    /// The argument of `key`, if the record has one.
    fn arg(&self, key: u8) -> Option<&Value> {
        let i = *self.at.get(key as usize)?;
        self.args.get(i as usize).map(|(_, v)| v)
    }

    pub fn int(&self, key: u8) -> Result<i64, String> {
        match self.arg(key) {
            Some(Value::Int(v)) => Ok(*v),
            _ => Err(format!(
                "a record of function {} lacks `{}`",
                self.id, KEYS[key as usize]
            )),
        }
    }
    pub fn ints(&self, key: u8) -> Vec<i64> {
        match self.arg(key) {
            Some(&Value::Ints(a, b)) => self.ints[a as usize..b as usize].to_vec(),
            _ => Vec::new(),
        }
    }
    pub fn statuses(&self) -> &[(i32, i32)] {
        match self
            .args
            .iter()
            .find(|(_, v)| matches!(v, Value::Statuses(..)))
        {
            Some(&(_, Value::Statuses(a, b))) => &self.statuses[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// A file's sections, from its index: the header and body offsets and the datatype sizes.
pub(super) struct Sections {
    header: usize,
    body: usize,
    pub sizes: Vec<i64>,
    /// The file's version (major, minor, sub).
    version: (u8, u8, u8),
    /// Whether the footer counts calls that create communicators or groups (None: no footer).
    pub creates: Option<bool>,
    /// The calls the footer counts, of every function (0: no footer): room to make for them.
    pub calls: u64,
}

pub(super) fn sections(data: &[u8]) -> Result<Sections, String> {
    if !data.starts_with(&MAGIC) || data.len() < 64 + 8 {
        return Err("expected a DUMPI file (it begins with ff aa dd 44 55 4d 50 49)".into());
    }
    let magic = u64::from_be_bytes(MAGIC);
    let mut b = Bytes {
        data,
        at: data.len() - 64,
    };
    // Older files have fewer of the leading optional entries (sizelbl, addrlbl, perflbl): the
    // magic comes later in the last 64 bytes (io.c `dumpi_open_input_file`).
    let mut skipped = 0;
    while b.u64()? != magic {
        skipped += 1;
        if skipped > 3 {
            return Err(
                "the index (the file's last 64 bytes) has no magic: the file is cut short".into(),
            );
        }
    }
    let mut optional = [0u64; 3];
    for slot in optional.iter_mut().skip(skipped) {
        *slot = b.u64()?;
    }
    let [sizelbl, ..] = optional;
    let off = |v: u64| usize::try_from(v).ok().filter(|&o| o <= data.len());
    let bad =
        || "the index (the file's last 64 bytes) names offsets past the file's end".to_string();
    let header = off(b.u64()?).ok_or_else(bad)?;
    let body = off(b.u64()?).ok_or_else(bad)?;
    let footer = off(b.u64()?).ok_or_else(bad)?;
    let mut sizes = Vec::new();
    if let Some(at) = off(sizelbl).filter(|&o| o > 0) {
        let mut s = Bytes { data, at };
        let n = s.count(4)?;
        for _ in 0..n {
            sizes.push(s.i32()? as i64);
        }
    }
    let mut h = Bytes { data, at: header };
    let version = (h.u8()?, h.u8()?, h.u8()?);
    // The footer: its magic, then each function id's count of calls (io.c
    // `dumpi_write_footer`), for the first pass to be skipped where none creates a communicator.
    let mut f = Bytes { data, at: footer };
    let has_footer = footer > 0 && f.u64().is_ok_and(|m| m == FOOTER_MAGIC);
    let count = |id: u16| {
        let at = footer + 8 + 4 * id as usize;
        (data.get(at..at + 4)).map_or(1, |c| i32::from_be_bytes(c.try_into().unwrap()))
    };
    let creates = has_footer.then(|| CREATING.iter().any(|&id| count(id) != 0));
    let calls = match has_footer {
        true => (0..ALL_FUNCTIONS).map(|id| count(id).max(0) as u64).sum(),
        false => 0,
    };
    Ok(Sections {
        header,
        body,
        sizes,
        version,
        creates,
        calls,
    })
}

/// The function ids a footer counts calls of (`DUMPI_ALL_FUNCTIONS`).
const ALL_FUNCTIONS: u16 = 290;

/// The footer's magic (io.c `DUMPI_FOOT_MAGIC`).
const FOOTER_MAGIC: u64 = 0xf007_fee7;

/// Every record of one file's stream, handed to `each` in turn (one record's buffers reused
/// for the next); the file's datatype sizes.
pub(super) fn for_each_record(
    data: &[u8],
    each: &mut dyn FnMut(&Record) -> Result<(), String>,
) -> Result<Vec<i64>, String> {
    let s = sections(data)?;
    let table = layouts();
    let with_tag = s.version >= (0, 6, 3);
    let mut b = Bytes {
        data: &data[..s.header.max(s.body).min(data.len())],
        at: s.body,
    };
    let (_cpu_bias, wall_bias) = (b.u32()?, b.u32()? as u64);
    let mut rec = Record {
        id: 0,
        t: (0, 0),
        args: Vec::new(),
        at: [NOT_HERE; KEYS.len()],
        ints: Vec::new(),
        statuses: Vec::new(),
    };
    loop {
        let at = b.at;
        let id = b.u16()?;
        if id == END_OF_STREAM {
            break;
        }
        let Some(Some((_, fields))) = table.get(id as usize) else {
            return Err(format!("byte {at}: function id {id} names no DUMPI record"));
        };
        let mask = b.u8()?;
        if mask & 0x40 != 0 {
            b.u16()?;
        }
        let mut time = || -> Result<(u64, u64), String> {
            let (s0, n0, s1, n1) = (
                b.u16()? as u64,
                b.u32()? as u64,
                b.u16()? as u64,
                b.u32()? as u64,
            );
            Ok((
                (s0 + wall_bias) * 1_000_000_000 + n0,
                (s1 + wall_bias) * 1_000_000_000 + n1,
            ))
        };
        if mask & 0x04 != 0 {
            time()?;
        }
        let t = if mask & 0x08 != 0 { time()? } else { (0, 0) };
        if mask & 0x80 != 0 {
            let n = b.u8()? as usize;
            b.take(n * 16)?;
        }
        for &(k, _) in &rec.args {
            if let Some(at) = rec.at.get_mut(k as usize) {
                *at = NOT_HERE;
            }
        }
        let args = &mut rec.args;
        args.clear();
        rec.ints.clear();
        rec.statuses.clear();
        for f in fields {
            if let Some((x, y)) = f.when {
                // (both in KEYS: the layouts' conditions name commrank, oldcommrank, root)
                let get = |n: u8| {
                    args.iter()
                        .find(|(k, _)| *k == n && n != UNREAD)
                        .and_then(|(_, v)| match v {
                            Value::Int(i) => Some(*i),
                            _ => None,
                        })
                };
                if get(x) != get(y) {
                    continue;
                }
            }
            let v = match f.ty {
                Ty::I32 => Value::Int(b.i32()? as i64),
                Ty::U16 => Value::Int(b.u16()? as i64),
                Ty::U8 => Value::Int(b.u8()? as i64),
                Ty::I64 => Value::Int(b.u64()? as i64),
                Ty::Array(s) => {
                    let width = match s {
                        Scalar::I32 => 4,
                        Scalar::U16 => 2,
                        Scalar::U8 => 1,
                    };
                    let n = b.count(width)?;
                    let start = rec.ints.len() as u32;
                    for _ in 0..n {
                        rec.ints.push(match s {
                            Scalar::I32 => b.i32()? as i64,
                            Scalar::U16 => b.u16()? as i64,
                            Scalar::U8 => b.u8()? as i64,
                        });
                    }
                    Value::Ints(start, rec.ints.len() as u32)
                }
                Ty::Arrays => {
                    for _ in 0..b.count(4)? {
                        let n = b.count(4)?;
                        b.take(4 * n)?;
                    }
                    Value::None
                }
                Ty::Str | Ty::Strs | Ty::Strss => {
                    let depth = match f.ty {
                        Ty::Str => 0,
                        Ty::Strs => 1,
                        _ => 2,
                    };
                    skip_strings(&mut b, depth)?;
                    Value::None
                }
                Ty::Status if mask & 3 == 0 => Value::None,
                Ty::Status => {
                    let n = b.count(10)?;
                    let start = rec.statuses.len() as u32;
                    for _ in 0..n {
                        let (_bytes, source) = (b.i32()?, b.i32()?);
                        b.take(2)?;
                        let tag = if with_tag { b.i32()? } else { TAG_ANY };
                        rec.statuses.push((source, tag));
                    }
                    Value::Statuses(start, rec.statuses.len() as u32)
                }
            };
            if let Some(at) = rec.at.get_mut(f.key as usize)
                && *at == NOT_HERE
            {
                *at = u8::try_from(args.len()).expect("a layout has under 255 fields");
            }
            args.push((f.key, v));
        }
        (rec.id, rec.t) = (id, t);
        each(&rec)?;
    }
    Ok(s.sizes)
}

fn skip_strings(b: &mut Bytes<'_>, depth: u8) -> Result<(), String> {
    if depth == 0 {
        let n = b.count(1)?;
        b.take(n)?;
        return Ok(());
    }
    for _ in 0..b.count(4)? {
        skip_strings(b, depth - 1)?;
    }
    Ok(())
}
