//! The binary encoding (`tracer/FORMAT.md`): the entry points and the parsing helpers here;
//! the metadata chunks' parsers and writers in `chunks`, the event records' (nom, and a
//! hand-written fast path) in `records`, the chunk listing, the index and the parallel scan
//! of a file's stretches in `index`, the writer in `writer`.

mod chunks;
mod index;
mod records;
mod writer;

use chunks::*;
use index::*;
use records::*;
pub use writer::{Writer, put_record, write};

use super::sites::{Named, Object, Sites, UNKNOWN};
use super::{
    Checks, Comm, Completion, Cores, EagerLimit, Event, Events, IN_CALL, Meta, OWN, OwnSampled,
    PageOffsets, Push, Rank, RankMeta, RankMetas, RankRequests, RecvHalf, Routine, Shape, Trace,
    own_invalid, placement,
};
use crate::error::TraceError;
use crate::memory::Pages;
use crate::model::{Band, Bands, BySize, Class, Params, SizeParam};
use nom::IResult;
use nom::bytes::complete::take;
use nom::combinator::cond;
use nom::number::complete::{le_f64, le_i64, le_u8, le_u16, le_u32, le_u64};
use nom::sequence::tuple;
use rayon::prelude::*;
use std::borrow::Cow;
use std::io::{self, Write};
use std::ops::Range;

/// The first eight bytes of a binary trace.
pub const MAGIC: [u8; 8] = *b"LGPSTRC\x1a";
/// The last eight bytes of a finalized binary trace.
pub const END_MAGIC: [u8; 8] = *b"LGPSEND\x1a";
/// The format version this crate reads and writes.
pub const VERSION: u16 = 1;
/// The largest number of ranks a trace may declare.
pub const MAX_RANKS: u32 = 1 << 24;
const HEADER_LEN: usize = 16;
const CHUNK_HEADER_LEN: usize = 9;
const NO_RANK: u32 = u32::MAX;
const MAX_STR: u64 = 65_536;
/// Records per `E` chunk the writer emits.
const RECORDS_PER_CHUNK: usize = 1 << 20;

/// A parse failure: where (the unparsed input) and what was expected.
#[derive(Debug)]
struct PErr<'a> {
    input: &'a [u8],
    expected: Cow<'static, str>,
}

impl<'a> nom::error::ParseError<&'a [u8]> for PErr<'a> {
    fn from_error_kind(input: &'a [u8], kind: nom::error::ErrorKind) -> Self {
        let expected = match kind {
            nom::error::ErrorKind::Eof => "more bytes (the data ends here)".into(),
            k => format!("{k:?}").into(),
        };
        PErr { input, expected }
    }
    fn append(_: &'a [u8], _: nom::error::ErrorKind, other: Self) -> Self {
        other
    }
}

type Res<'a, T> = IResult<&'a [u8], T, PErr<'a>>;

fn fail<T>(input: &[u8], expected: impl Into<Cow<'static, str>>) -> Res<'_, T> {
    Err(nom::Err::Failure(PErr {
        input,
        expected: expected.into(),
    }))
}

/// Names what a parser reads, so that a failure says "expected <what>".
fn expect<'a, O>(
    what: &'static str,
    mut p: impl FnMut(&'a [u8]) -> Res<'a, O>,
) -> impl FnMut(&'a [u8]) -> Res<'a, O> {
    move |input| {
        p(input).map_err(|e| match e {
            nom::Err::Error(err) | nom::Err::Failure(err) => {
                let truncated = err.input.is_empty() || err.expected.starts_with("more bytes");
                let expected = if truncated {
                    format!("{what}, but the data ends here (truncated)")
                } else {
                    format!("{what}: {}", err.expected)
                };
                nom::Err::Failure(PErr {
                    input,
                    expected: expected.into(),
                })
            }
            other => other,
        })
    }
}

fn uleb(input: &[u8]) -> Res<'_, u64> {
    let mut value = 0u64;
    for (i, &b) in input.iter().enumerate().take(10) {
        let bits = (b & 0x7f) as u64;
        if i == 9 && bits > 1 {
            return fail(input, "a LEB128 value below 2^64");
        }
        value |= bits << (7 * i);
        if b & 0x80 == 0 {
            return Ok((&input[i + 1..], value));
        }
    }
    if input.len() < 10 {
        fail(&input[input.len()..], "more bytes (the data ends here)")
    } else {
        fail(input, "a LEB128 value of at most 10 bytes")
    }
}

fn sleb(input: &[u8]) -> Res<'_, i64> {
    let (rest, z) = uleb(input)?;
    Ok((rest, ((z >> 1) as i64) ^ -((z & 1) as i64)))
}

fn i32_field(what: &'static str) -> impl FnMut(&[u8]) -> Res<'_, i32> {
    move |input| {
        let (rest, v) = expect(what, sleb)(input)?;
        match i32::try_from(v) {
            Ok(v) => Ok((rest, v)),
            Err(_) => fail(input, format!("{what} in the 32-bit range, found {v}")),
        }
    }
}

fn u32_field(what: &'static str) -> impl FnMut(&[u8]) -> Res<'_, u32> {
    move |input| {
        let (rest, v) = expect(what, uleb)(input)?;
        match u32::try_from(v) {
            Ok(v) => Ok((rest, v)),
            Err(_) => fail(input, format!("{what} below 2^32, found {v}")),
        }
    }
}

/// A count of items of at least `min_item_bytes` each: never more than the bytes left can hold.
fn count(what: &'static str, min_item_bytes: usize) -> impl FnMut(&[u8]) -> Res<'_, usize> {
    move |input| {
        let (rest, n) = expect(what, uleb)(input)?;
        if n > (rest.len() / min_item_bytes) as u64 {
            return fail(
                input,
                format!(
                    "{what} of at most {} (what the bytes left can hold), found {n}",
                    rest.len() / min_item_bytes
                ),
            );
        }
        Ok((rest, n as usize))
    }
}

/// A u32 count (`what`) of `items` of at least `min_item_bytes` each: never more than the bytes
/// left can hold.
fn count_u32(
    what: &'static str,
    items: &'static str,
    min_item_bytes: usize,
) -> impl FnMut(&[u8]) -> Res<'_, usize> {
    move |input| {
        let (rest, n) = expect(what, le_u32)(input)?;
        let most = rest.len() / min_item_bytes;
        if n as usize > most {
            return fail(
                input,
                format!("at most {most} {items} (what the bytes left can hold), found {n}"),
            );
        }
        Ok((rest, n as usize))
    }
}

fn string(input: &[u8]) -> Res<'_, String> {
    let (rest, len) = expect("a string length", uleb)(input)?;
    if len > MAX_STR {
        return fail(
            input,
            format!("a string of at most {MAX_STR} bytes, found length {len}"),
        );
    }
    let (rest, bytes) = expect("the string's bytes", take(len as usize))(rest)?;
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok((rest, s.to_string())),
        Err(_) => fail(rest, "a UTF-8 string"),
    }
}

/// The most bytes of event records one rank may have: its event indices and auxiliary words
/// are 32-bit, and a record's bytes give at most two auxiliary words each.
const MAX_RANK_BYTES: usize = (1 << 31) - 1;

/// Parses a whole binary trace, each event checked as it is decoded ([`Checks`]).
pub fn parse(name: &str, data: &[u8]) -> Result<Trace, TraceError> {
    parse_releasing(name, data, &|_, _| {}, super::Then::LOAD, None)
}

/// Told `(offset, length)` of input that parsing is done with, in whole [`RELEASE_UNIT`]s.
pub type Release<'a> = dyn Fn(usize, usize) + Sync + 'a;

/// The granule in which [`parse_releasing`] reports input it is done with: a multiple of the
/// page size, large enough that a trace of small chunks costs few calls (each makes the kernel
/// flush the other threads' TLBs; see the `diss` case of tests/bench/run.sh).
pub const RELEASE_UNIT: usize = 1 << 20;

/// [`parse`], telling `release` of the input it is done with (a memory map can hand those pages
/// back to the kernel while the rest is parsed). Each event chunk, once parsed, reports the
/// units whose last byte lies in it: in a file written rank after rank, the ranks before it in
/// the unit were parsed before it by the same thread (the ranks are cut into contiguous
/// pieces), or, at the edge of a piece, by another thread. A unit reported too early
/// costs the parser a page fault to bring it back, nothing else.
///
/// With `only`, the events (and call sites) of the ranks it names (of the trace's ranks) alone
/// are decoded; every other rank
/// has none. The other chunks' headers are still read, their payloads not: a process of a
/// split replay holds its own ranks' events (src/replay/SPLIT.md).
pub fn parse_releasing(
    name: &str,
    data: &[u8],
    release: &Release<'_>,
    then: super::Then,
    only: Option<super::Only<'_>>,
) -> Result<Trace, TraceError> {
    let (nranks, index_offset) = header_and_trailer(name, data)?;
    // Loading some ranks, the scan hands back what it has read as it goes: their chunks are
    // read again, the others' not at all.
    let scanned = only.is_some().then_some(release);
    let mut listing = list_chunks(name, data, nranks, index_offset, scanned)?;
    if let Some(own) = only {
        let own = own(nranks);
        listing.keep(own.start.min(nranks)..own.end.min(nranks));
        // The scan read every chunk's header: the pages of the chunks not decoded go back now
        // (those decoded come back as they are parsed, and go again).
        let whole = listing.body.len() / RELEASE_UNIT * RELEASE_UNIT;
        if whole > 0 {
            release(0, whole);
        }
    }
    // The columns (19 bytes an event) and each rank's lists and blocks, and what follows.
    let events: usize = listing.counts.iter().sum();
    let (e, p) = (events as u64, nranks as u64);
    use super::{BYTES_PER_EVENT, BYTES_PER_RANK};
    // Call sites: an index an event (the addresses are few).
    let sites = if listing.site_chunks.is_empty() { 0 } else { 4 };
    let need = (BYTES_PER_EVENT + then.bytes_per_event + sites) * e
        + (BYTES_PER_RANK + then.bytes_per_rank) * p;
    let what = format!("{} {events} events of {nranks} ranks", then.what);
    crate::memory::ensure(&what, need).map_err(|e| shortfall(name, e))?;
    let complete = index_offset.is_some();
    let (columns, pending) = fill_columns(name, data, &listing, release)?;
    let Listing {
        meta,
        comms,
        cut,
        body,
        site_chunks,
        object_chunks,
        ..
    } = listing;
    let mut warnings: Vec<String> = cut
        .map(|at| {
            format!(
                "{name}: the file ends inside the chunk at byte {at} (cut short while it was written, \
                 or copied in part): loaded what comes before it"
            )
        })
        .into_iter()
        .collect();
    let chunks = (site_chunks.as_slice(), object_chunks.as_slice());
    let sites = read_sites(name, data, body, chunks, columns.offsets(), &mut warnings)?;
    Ok(Trace {
        meta,
        comms,
        events: columns,
        complete,
        pending,
        warnings,
        sites,
    })
}

/// The call sites of the `S`, `M` and `N` chunks at `(sites, objects)` (as [`Tally`] lists them)
/// of a trace whose ranks' events start at `offsets`; None if it has none. A rank whose sites
/// do not number its events (a job cut short) has them unknown, with a warning.
fn read_sites(
    name: &str,
    data: &[u8],
    body: &[u8],
    (sites, objects): (&[(u32, usize)], &[[u64; 2]]),
    offsets: &[usize],
    warnings: &mut Vec<String>,
) -> Result<Option<Sites>, TraceError> {
    if sites.is_empty() && objects.iter().all(|&o| o == [0, 0]) {
        return Ok(None);
    }
    let to_err = |e: nom::Err<PErr<'_>>| nom_error(name, data, e);
    let nranks = offsets.len() - 1;
    let mut s = Sites::unknown(nranks, offsets[nranks]);
    let mut given = vec![0usize; nranks];
    for &(r, offset) in sites {
        let r = r as usize;
        let payload = chunk_at(body, offset).payload;
        let (rest, (addresses, indices)) = site_chunk(payload).map_err(to_err)?;
        chunk_end(name, data, offset, rest, "S")?;
        s.addresses[r].extend(addresses);
        let table = s.addresses[r].len() as u32;
        if let Some(&i) = indices.iter().find(|&&i| i >= table && i != UNKNOWN) {
            return Err(TraceError::offset(
                name,
                offset as u64,
                format!(
                    "expected sites below {table}, the addresses of rank {r} so far, found {i} (written {})",
                    i + 1
                ),
            ));
        }
        let (from, to) = (offsets[r] + given[r], offsets[r + 1]);
        let fit = indices.len().min(to.saturating_sub(from));
        s.of_event[from..from + fit].copy_from_slice(&indices[..fit]);
        given[r] += indices.len();
    }
    let odd: Vec<usize> = (0..nranks)
        .filter(|&r| given[r] != offsets[r + 1] - offsets[r] && given[r] > 0)
        .collect();
    for &r in &odd {
        s.of_event[offsets[r]..offsets[r + 1]].fill(UNKNOWN);
    }
    if let Some(&r) = odd.first() {
        warnings.push(format!(
            "{name}: rank {r} has call sites for {} records but {} events{}: the call sites of \
             {} ranks are left unknown",
            given[r],
            offsets[r + 1] - offsets[r],
            if odd.len() > 1 { " (and others)" } else { "" },
            odd.len()
        ));
    }
    for (r, &[m, n]) in objects.iter().enumerate() {
        if let Some(offset) = m.checked_sub(1) {
            let offset = offset as usize;
            let (rest, list) = objects_chunk(chunk_at(body, offset).payload).map_err(to_err)?;
            chunk_end(name, data, offset, rest, "M")?;
            s.objects[r] = list;
        }
        if let Some(offset) = n.checked_sub(1) {
            let offset = offset as usize;
            let (rest, list) = named_chunk(chunk_at(body, offset).payload).map_err(to_err)?;
            chunk_end(name, data, offset, rest, "N")?;
            s.named[r] = list;
        }
    }
    if let Some((r, n, table)) = s.misnamed() {
        let at = objects[r][1] - 1;
        return Err(TraceError::offset(
            name,
            at,
            format!("expected names for the {table} sites of rank {r}'s table, found {n}"),
        ));
    }
    Ok(Some(s))
}

/// The header's number of ranks, checked, and the offset of the index chunk that a finalized
/// trace's trailer names (None: no trailer, the job stopped before `MPI_Finalize`).
fn header_and_trailer(name: &str, data: &[u8]) -> Result<(usize, Option<usize>), TraceError> {
    let to_err = |e: nom::Err<PErr<'_>>| nom_error(name, data, e);
    let header = |input| -> Res<'_, u32> {
        let (rest, _) = expect(
            "the magic \"LGPSTRC\\x1a\"",
            nom::bytes::complete::tag(&MAGIC[..]),
        )(input)?;
        let (rest, version) = expect("the version (u16)", le_u16)(rest)?;
        if version != VERSION {
            return fail(
                &input[8..],
                format!("version {VERSION} (this build reads only that), found {version}"),
            );
        }
        let (rest, flags) = expect("the header flags (u16)", le_u16)(rest)?;
        if flags != 0 {
            return fail(&input[10..], format!("header flags 0, found {flags:#x}"));
        }
        let (rest, nranks) = expect("the number of ranks (u32)", le_u32)(rest)?;
        if nranks == 0 || nranks > MAX_RANKS {
            return fail(
                &input[12..],
                format!("a number of ranks from 1 to {MAX_RANKS}, found {nranks}"),
            );
        }
        Ok((rest, nranks))
    };
    let (_, nranks) = header(data).map_err(to_err)?;
    let nranks = nranks as usize;
    // Every rank costs memory before its first event is read: bound them by the file's size.
    if nranks > data.len() {
        return Err(TraceError::offset(
            name,
            12,
            format!(
                "expected at most {} ranks in a file of {} bytes, found {nranks}",
                data.len(),
                data.len()
            ),
        ));
    }

    // A finalized trace ends with a trailer naming the index chunk.
    let mut index_offset = None;
    if data.len() >= HEADER_LEN + 16 && data.ends_with(&END_MAGIC) {
        let off = u64::from_le_bytes(
            data[data.len() - 16..data.len() - 8]
                .try_into()
                .expect("8 bytes"),
        );
        if off < HEADER_LEN as u64 || off > (data.len() - 16 - CHUNK_HEADER_LEN) as u64 {
            return Err(TraceError::offset(
                name,
                (data.len() - 16) as u64,
                format!("expected the index offset inside the file, found {off}"),
            ));
        }
        index_offset = Some(off as usize);
    }
    Ok((nranks, index_offset))
}

#[cfg(test)]
mod tests;
