//! The binary encoding (`tracer/FORMAT.md`): nom parsers, one per record type, and the writer.

use super::sites::{Object, Sites, UNKNOWN};
use super::{
    Checks, Comm, Completion, Cores, EagerLimit, Event, Events, Meta, Push, Rank, RankMeta,
    RankMetas, RankRequests, RecvHalf, Routine, Shape, Trace, own_invalid, placement,
};
use crate::error::TraceError;
use crate::memory::Pages;
use crate::model::{Band, Bands, Class, Params};
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

#[allow(non_snake_case)] // the paper's names
fn params(input: &[u8]) -> Res<'_, Params> {
    let (input, (L, o, Os, Or, Gs, Gl, s, S)) = tuple((
        le_f64, le_f64, le_f64, le_f64, le_f64, le_f64, le_u64, le_u64,
    ))(input)?;
    Ok((
        input,
        Params {
            L,
            o,
            Os,
            Or,
            Gs,
            Gl,
            s,
            S,
            poll: None,
            gamma: None,
            oc: None,
            copy: None,
            cores: None,
            class: None,
            progress_at_calls: false,
            bands: None,
        },
    ))
}

/// Flag 3's parameters: `u8 n`, `n × (u64 hi, 5 × f64 o L Os Or G)`, `u64 S`, then the
/// [`extras`]; flag 5's (`split`) with `2 × f64 Od Op` after each band's `G` (the model's §13).
fn banded(input: &[u8], split: bool) -> Res<'_, Params> {
    let (mut input, n) = le_u8(input)?;
    let mut list = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (rest, (hi, o, l, os, or, g)) =
            tuple((le_u64, le_f64, le_f64, le_f64, le_f64, le_f64))(input)?;
        let (rest, (od, op)) = match split {
            true => tuple((le_f64, le_f64))(rest)?,
            false => (rest, (0.0, 0.0)),
        };
        list.push(Band {
            hi,
            o,
            L: l,
            Os: os,
            Or: or,
            G: g,
            Od: od,
            Op: op,
        });
        input = rest;
    }
    let bands = match Bands::new(&list) {
        Ok(b) => b,
        Err(why) => return fail(input, format!("valid bands ({why})")),
    };
    let (input, s) = le_u64(input)?;
    let (input, x) = extras(input)?;
    let poll = x.poll;
    Ok((input, x.on(Params::banded(bands, s, poll))))
}

/// The optional parameters: a `u8` of bits (1: `poll` follows, 2: `gamma` follows, 4:
/// progress only inside MPI calls, 8: `oc` follows, 16: `cores` follows, 32: `copy` follows),
/// then each value that is there as an `f64`, in the order `poll`, `gamma`, `oc`, `cores`, `copy`.
fn extras(input: &[u8]) -> Res<'_, Extras> {
    let (input, bits) = le_u8(input)?;
    if bits > 63 {
        return fail(
            input,
            format!("the optional parameters' bits 0 to 63, found {bits}"),
        );
    }
    let (input, poll) = cond(bits & 1 != 0, le_f64)(input)?;
    let (input, gamma) = cond(bits & 2 != 0, le_f64)(input)?;
    let (input, oc) = cond(bits & 8 != 0, le_f64)(input)?;
    let (input, cores) = cond(bits & 16 != 0, le_f64)(input)?;
    let (input, copy) = cond(bits & 32 != 0, le_f64)(input)?;
    let extras = Extras {
        poll,
        gamma,
        oc,
        cores,
        copy,
        progress_at_calls: bits & 4 != 0,
    };
    Ok((input, extras))
}

/// The optional parameters of a set, as [`extras`] reads them.
struct Extras {
    poll: Option<f64>,
    gamma: Option<f64>,
    oc: Option<f64>,
    cores: Option<f64>,
    copy: Option<f64>,
    progress_at_calls: bool,
}

impl Extras {
    /// `p` with these.
    fn on(self, p: Params) -> Params {
        Params {
            poll: self.poll,
            gamma: self.gamma,
            oc: self.oc,
            cores: self.cores,
            copy: self.copy,
            progress_at_calls: self.progress_at_calls,
            ..p
        }
    }
}

/// Writes the [`extras`] of `p`.
fn put_extras(j: &mut Vec<u8>, p: &Params) {
    let progress = (p.progress_at_calls as u8) << 2;
    let oc = (p.oc.is_some() as u8) << 3 | (p.cores.is_some() as u8) << 4;
    let copy = (p.copy.is_some() as u8) << 5;
    j.push(p.poll.is_some() as u8 | (p.gamma.is_some() as u8) << 1 | progress | oc | copy);
    for v in [p.poll, p.gamma, p.oc, p.cores, p.copy]
        .into_iter()
        .flatten()
    {
        j.extend_from_slice(&v.to_le_bytes());
    }
}

/// The job's library, eager limit, main parameter set and other sets.
type Job = (String, Option<EagerLimit>, Option<Params>, Vec<Params>);

fn job(input: &[u8]) -> Res<'_, Job> {
    let (input, library) = expect("the MPI library string", string)(input)?;
    let (input, has_eager) = expect("the eager-limit flag (0 or 1)", le_u8)(input)?;
    let (input, eager_limit) = match has_eager {
        0 => (input, None),
        1 => {
            let (input, name) = expect("the eager limit's name", string)(input)?;
            let (input, bytes) = expect("the eager limit in bytes (u64)", le_u64)(input)?;
            (input, Some(EagerLimit { name, bytes }))
        }
        v => return fail(input, format!("the eager-limit flag 0 or 1, found {v}")),
    };
    let (input, params) = set(input)?;
    // Where sets carry a class or several combine (the model's §12): the main set's class,
    // then the other sets, each with its class.
    if input.is_empty() {
        return Ok((input, (library, eager_limit, params, Vec::new())));
    }
    let Some(main) = params else {
        return fail(input, "nothing after a job without parameters");
    };
    let (input, main_class) = expect("the parameter set's class (0 to 2)", class)(input)?;
    let (mut input, n) = expect("the number of other parameter sets", le_u8)(input)?;
    let mut others = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (rest, c) = expect("a parameter set's class (0 to 2)", class)(input)?;
        let (rest, p) = set(rest)?;
        let Some(p) = p else {
            return fail(rest, "another parameter set (flag 1 to 5)");
        };
        others.push(Params { class: c, ..p });
        input = rest;
    }
    let main = Params {
        class: main_class,
        ..main
    };
    Ok((input, (library, eager_limit, Some(main), others)))
}

/// A parameter set's class: 0 none, 1 `node`, 2 `network`.
fn class(input: &[u8]) -> Res<'_, Option<Class>> {
    let (input, c) = le_u8(input)?;
    match c {
        0 => Ok((input, None)),
        1 => Ok((input, Some(Class::Node))),
        2 => Ok((input, Some(Class::Network))),
        v => fail(input, format!("a class 0 to 2, found {v}")),
    }
}

/// A parameter set after its flag (0: none).
fn set(input: &[u8]) -> Res<'_, Option<Params>> {
    let (input, has_params) = expect("the parameters flag (0 to 5)", le_u8)(input)?;
    let (input, params) = match has_params {
        0 => (input, None),
        1 => {
            let (input, p) = expect("LogGPS parameters (6 × f64, 2 × u64)", params)(input)?;
            (input, Some(p))
        }
        2 => {
            let (input, p) = expect("LogGPS parameters (6 × f64, 2 × u64)", params)(input)?;
            let (input, poll) = expect("the cost of a failed poll (f64)", le_f64)(input)?;
            let poll = Some(poll);
            (input, Some(Params { poll, ..p }))
        }
        3 => expect("LogGPS parameters in bands", |i| banded(i, false))(input)
            .map(|(i, p)| (i, Some(p)))?,
        5 => expect("LogGPS parameters in bands with Od and Op", |i| {
            banded(i, true)
        })(input)
        .map(|(i, p)| (i, Some(p)))?,
        4 => {
            let (input, p) = expect("LogGPS parameters (6 × f64, 2 × u64)", params)(input)?;
            let (input, x) = expect("the optional parameters", extras)(input)?;
            (input, Some(x.on(p)))
        }
        v => return fail(input, format!("the parameters flag 0 to 5, found {v}")),
    };
    Ok((input, params))
}

/// [`class`]'s code of `c`.
fn class_code(c: Option<Class>) -> u8 {
    match c {
        None => 0,
        Some(Class::Node) => 1,
        Some(Class::Network) => 2,
    }
}

/// Writes a parameter set as [`set`] reads it: its flag, then its fields (0 alone: none).
fn put_set(j: &mut Vec<u8>, params: Option<&Params>) {
    match params {
        Some(p) if let Some(b) = &p.bands => {
            // 3: bands, 5: bands with Od and Op (written only where a band has them).
            j.push(if b.split() { 5 } else { 3 });
            j.push(b.as_slice().len() as u8);
            for band in b.as_slice() {
                j.extend_from_slice(&band.hi.to_le_bytes());
                for i in 0..b.names().len() {
                    j.extend_from_slice(&band.get(i).to_le_bytes());
                }
            }
            j.extend_from_slice(&p.S.to_le_bytes());
            put_extras(j, p);
        }
        Some(p) => {
            // 1: the eight parameters, 2: and the cost of a failed poll (as earlier writers
            // did), 4: and the optional parameters with their bits.
            let extras = p.gamma.is_some()
                || p.oc.is_some()
                || p.cores.is_some()
                || p.copy.is_some()
                || p.progress_at_calls;
            j.push(match (p.poll, extras) {
                (_, true) => 4,
                (Some(_), false) => 2,
                (None, false) => 1,
            });
            for v in [p.L, p.o, p.Os, p.Or, p.Gs, p.Gl] {
                j.extend_from_slice(&v.to_le_bytes());
            }
            j.extend_from_slice(&p.s.to_le_bytes());
            j.extend_from_slice(&p.S.to_le_bytes());
            match extras {
                true => put_extras(j, p),
                false => j.extend(p.poll.iter().flat_map(|v| v.to_le_bytes())),
            }
        }
        None => j.push(0),
    }
}

/// An `R` chunk of rank `rank` of `nranks`.
fn rank_meta(input: &[u8], rank: u32, nranks: usize) -> Res<'_, RankMeta> {
    let (input, hostname) = expect("the hostname", string)(input)?;
    let (input, clock_offset_init_ns) = expect("the clock offset at Init (i64)", le_i64)(input)?;
    let (input, clock_offset_final_ns) =
        expect("the clock offset at Finalize (i64)", le_i64)(input)?;
    // After the offsets: the cores' figures (20 bytes), the tracer's own time (8), both or
    // neither.
    let (input, cores) = if input.len() != 20 && input.len() != 28 {
        (input, None)
    } else {
        let (input, partner) = expect("the cores' partner rank (u32)", le_u32)(input)?;
        let (input, init_ns) = expect("the cores' round trip at Init (f64)", le_f64)(input)?;
        let (input, final_ns) = expect("the cores' round trip at Finalize (f64)", le_f64)(input)?;
        let c = Cores {
            partner,
            init_ns,
            final_ns,
        };
        if let Some(why) = c.invalid(rank, nranks) {
            return fail(input, why);
        }
        (input, Some(c))
    };
    let (input, own_ns) = if input.is_empty() {
        (input, None)
    } else {
        let (input, own) = expect("the tracer's own time per record (f64)", le_f64)(input)?;
        if let Some(why) = own_invalid(own) {
            return fail(input, why);
        }
        (input, Some(own))
    };
    Ok((
        input,
        RankMeta {
            hostname,
            clock_offset_init_ns,
            clock_offset_final_ns,
            cores,
            placement: None,
            own_ns,
        },
    ))
}

/// An `S` chunk: the addresses it adds to its rank's site table, and the site of each of the
/// rank's next records (its index in the table, [`UNKNOWN`] for none: 0 in the file, else the
/// index + 1).
fn site_chunk(input: &[u8]) -> Res<'_, (Vec<u64>, Vec<u32>)> {
    let (rest, n) = expect("the number of new addresses (u32)", le_u32)(input)?;
    if n as usize > rest.len() / 8 {
        return fail(
            input,
            format!(
                "at most {} addresses (what the bytes left can hold), found {n}",
                rest.len() / 8
            ),
        );
    }
    let (rest, addresses) = nom::multi::count(le_u64, n as usize)(rest)?;
    let (mut rest, m) = expect("the number of records (u32)", le_u32)(rest)?;
    if m as usize > rest.len() {
        return fail(
            rest,
            format!(
                "at most {} site indices (what the bytes left can hold), found {m}",
                rest.len()
            ),
        );
    }
    let mut indices = Vec::with_capacity(m as usize);
    for _ in 0..m {
        let (r, i) = u32_field("a site index")(rest)?;
        indices.push(i.wrapping_sub(1));
        rest = r;
    }
    Ok((rest, (addresses, indices)))
}

/// An `M` chunk: the rank's loaded objects.
fn objects_chunk(input: &[u8]) -> Res<'_, Vec<Object>> {
    const MIN_OBJECT_BYTES: usize = 3 * 8 + 2;
    let (mut rest, n) = expect("the number of objects (u32)", le_u32)(input)?;
    if n as usize > rest.len() / MIN_OBJECT_BYTES {
        return fail(
            input,
            format!(
                "at most {} objects (what the bytes left can hold), found {n}",
                rest.len() / MIN_OBJECT_BYTES
            ),
        );
    }
    let mut objects = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let (r, (bias, lo, hi)) = expect(
            "an object's bias and address range (3 × u64)",
            tuple((le_u64, le_u64, le_u64)),
        )(rest)?;
        let (r, build_id) = expect("the object's build id", string)(r)?;
        let (r, path) = expect("the object's path", string)(r)?;
        objects.push(Object {
            bias,
            lo,
            hi,
            build_id,
            path,
        });
        rest = r;
    }
    Ok((rest, objects))
}

fn comm(input: &[u8]) -> Res<'_, Comm> {
    let (rest, id) = expect("the communicator id (u32)", le_u32)(input)?;
    if id == 0 {
        return fail(input, "a communicator id ≥ 1 (0 is MPI_COMM_WORLD)");
    }
    let (rest, n) = expect("the communicator size (u32)", le_u32)(rest)?;
    if n == 0 || n as usize > rest.len() / 4 {
        return fail(
            rest,
            format!(
                "a communicator size from 1 to {} (what the chunk holds), found {n}",
                rest.len() / 4
            ),
        );
    }
    let mut members = Vec::with_capacity(n as usize);
    let mut rest = rest;
    for _ in 0..n {
        let (r, m) = le_u32(rest)?;
        members.push(m);
        rest = r;
    }
    Ok((rest, Comm { id, members }))
}

/// The state carried from record to record of one rank.
struct Cursor<'t, P> {
    events: &'t mut P,
    /// A `complete` record's requests (a buffer reused from record to record).
    done: Vec<Completion>,
    /// A collective record's per-rank counts (likewise).
    counts: Vec<u64>,
    prev_return: u64,
    rank: usize,
    checks: &'t Checks,
    /// A communicator the rank was found a member of before.
    known_comm: u32,
    /// The rank's requests so far.
    requests: RankRequests,
    /// Why the record [`record`] failed on is wrong, where that is not its form but what
    /// [`Checks`] sees: its routine and the message.
    invalid: Option<(Routine, String)>,
}

impl<P> Cursor<'_, P> {
    /// Whether `e`, the rank's event `i`, passes [`Checks`] and its [`RankRequests`] (which
    /// then record it); `source`: a Sendrecv's receive source. A completion call's requests
    /// are in `done`.
    #[inline(always)]
    fn valid(&mut self, i: usize, e: &Event, source: i32) -> bool {
        let r = self.rank;
        let completed = self.done.iter().map(|c| c.req);
        let checked = self
            .checks
            .event(r, e, self.prev_return, source, &mut self.known_comm)
            .and_then(|()| self.requests.event(i as u32, e, completed));
        match checked {
            Ok(()) => true,
            Err(what) => {
                self.invalid = Some((e.routine, what));
                false
            }
        }
    }
}

fn time<'a>(
    input: &'a [u8],
    base: u64,
    delta: i64,
    what: &'static str,
) -> Result<u64, nom::Err<PErr<'a>>> {
    u64::try_from(base as i128 + delta as i128).map_err(|_| {
        nom::Err::Failure(PErr {
            input,
            expected: format!("a {what} time between 0 and 2^64 ns").into(),
        })
    })
}

fn record<'a, P: Push>(input: &'a [u8], cur: &mut Cursor<'_, P>) -> Res<'a, ()> {
    let (rest, code) = expect("a routine code", le_u8)(input)?;
    let Some(routine) = Routine::from_code(code) else {
        return fail(
            input,
            format!("a routine code ({}), found {code}", Routine::code_ranges()),
        );
    };
    let (rest, gap) = expect("the gap since the previous return (sleb)", sleb)(rest)?;
    let (rest, dur) = expect("the duration (sleb)", sleb)(rest)?;
    let t_call = time(input, cur.prev_return, gap, "call")?;
    let t_return = time(input, t_call, dur, "return")?;
    let mut e = Event::new(routine, t_call, t_return);
    let (index, mut source) = (cur.events.pushed(), 0);
    let rest = match routine.shape() {
        Shape::None => {
            cur.events.push(&e);
            rest
        }
        Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv => {
            let (mut rest, (bytes, peer, tag, comm)) = tuple((
                expect("the byte count", uleb),
                i32_field("the peer"),
                i32_field("the tag"),
                u32_field("the communicator"),
            ))(rest)?;
            (e.bytes, e.peer, e.tag, e.comm) = (bytes, peer, tag, comm);
            if matches!(routine.shape(), Shape::Recv | Shape::Irecv) {
                let (r, flags) = expect("the receive flags", uleb)(rest)?;
                if flags > 7 {
                    return fail(rest, format!("receive flags below 8, found {flags}"));
                }
                e.flags = flags as u8;
                rest = r;
            }
            if matches!(routine.shape(), Shape::Isend | Shape::Irecv) {
                let (r, req) = u32_field("the request id")(rest)?;
                e.id = req as i64;
                rest = r;
            }
            cur.events.push(&e);
            rest
        }
        Shape::Sendrecv => {
            let (rest, (bytes, peer, tag, recv_bytes, recv_source, recv_tag, comm, flags)) =
                tuple((
                    expect("the bytes sent", uleb),
                    i32_field("the destination"),
                    i32_field("the send tag"),
                    expect("the bytes received", uleb),
                    i32_field("the source"),
                    i32_field("the receive tag"),
                    u32_field("the communicator"),
                    expect("the receive flags", uleb),
                ))(rest)?;
            if flags > 3 {
                return fail(rest, format!("receive flags below 4, found {flags}"));
            }
            (e.bytes, e.peer, e.tag, e.comm, e.flags) = (bytes, peer, tag, comm, flags as u8);
            source = recv_source;
            cur.events.push_sendrecv(
                &e,
                RecvHalf {
                    bytes: recv_bytes,
                    source: recv_source,
                    tag: recv_tag,
                },
            );
            rest
        }
        Shape::Complete => {
            let (mut rest, n) = count("the number of completed requests", 3)(rest)?;
            let done = &mut cur.done;
            done.clear();
            for _ in 0..n {
                let (r, (req, source, tag)) = tuple((
                    u32_field("a request id"),
                    i32_field("the status source"),
                    i32_field("the status tag"),
                ))(rest)?;
                done.push(Completion { req, source, tag });
                rest = r;
            }
            cur.events.push_complete(&e, &cur.done);
            rest
        }
        Shape::Cancel => {
            let (rest, req) = u32_field("the request id")(rest)?;
            e.id = req as i64;
            cur.events.push(&e);
            rest
        }
        Shape::Coll => {
            let (rest, (comm, root, bytes, recv_bytes)) = tuple((
                u32_field("the communicator"),
                i32_field("the root"),
                expect("the bytes sent", uleb),
                expect("the bytes received", uleb),
            ))(rest)?;
            let (mut rest, n) = count("the number of per-rank counts", 1)(rest)?;
            cur.counts.clear();
            for _ in 0..n {
                let (r, c) = expect("a per-rank byte count", uleb)(rest)?;
                cur.counts.push(c);
                rest = r;
            }
            if routine.nonblocking() {
                let (r, req) = u32_field("the request id")(rest)?;
                (e.id, rest) = (req as i64, r);
            }
            (e.comm, e.peer, e.bytes) = (comm, root, bytes);
            cur.events.push_coll(&e, recv_bytes, &cur.counts);
            rest
        }
        Shape::CommOp => {
            let (rest, comm) = u32_field("the communicator")(rest)?;
            let (rest, newcomm) = expect("the new communicator (sleb)", sleb)(rest)?;
            if !(-1..u32::MAX as i64).contains(&newcomm) {
                return fail(
                    rest,
                    format!("a new communicator id below 4294967295 or -1, found {newcomm}"),
                );
            }
            (e.comm, e.id) = (comm, newcomm);
            cur.events.push(&e);
            rest
        }
    };
    // Pushed already: a record found wrong here ends the parse.
    if !cur.valid(index, &e, source) {
        return fail(input, "a valid record");
    }
    cur.prev_return = t_return;
    Ok((rest, ()))
}

/// Records decoded without nom: `None` on anything unusual (a field out of range, the data
/// ending, a LEB128 value of 10 bytes, a record [`Checks`] finds wrong), before anything is
/// pushed, and [`record`] then parses the same bytes with its error messages. Accepts exactly
/// what [`record`] accepts. The common shapes here, Sendrecv, collectives and communicator
/// operations in [`record_fast_more`] (in one function with them, the common shapes' parse is
/// slower).
fn record_fast<'a, P: Push>(input: &'a [u8], cur: &mut Cursor<'_, P>) -> Option<&'a [u8]> {
    let mut at = 1;
    let routine = Routine::from_code(*input.first()?)?;
    let gap = fast_sleb(input, &mut at)?;
    let dur = fast_sleb(input, &mut at)?;
    let t_call = u64::try_from(cur.prev_return as i128 + gap as i128).ok()?;
    let t_return = u64::try_from(t_call as i128 + dur as i128).ok()?;
    let mut e = Event::new(routine, t_call, t_return);
    let complete = match routine.shape() {
        Shape::None => false,
        shape @ (Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv) => {
            e.bytes = fast_uleb(input, &mut at)?;
            e.peer = i32::try_from(fast_sleb(input, &mut at)?).ok()?;
            e.tag = i32::try_from(fast_sleb(input, &mut at)?).ok()?;
            e.comm = u32::try_from(fast_uleb(input, &mut at)?).ok()?;
            if matches!(shape, Shape::Recv | Shape::Irecv) {
                e.flags = u8::try_from(fast_uleb(input, &mut at)?)
                    .ok()
                    .filter(|&f| f <= 7)?;
            }
            if matches!(shape, Shape::Isend | Shape::Irecv) {
                e.id = u32::try_from(fast_uleb(input, &mut at)?).ok()? as i64;
            }
            false
        }
        Shape::Complete => {
            let n = fast_uleb(input, &mut at)?;
            if n > ((input.len() - at) / 3) as u64 {
                return None;
            }
            cur.done.clear();
            for _ in 0..n {
                let req = u32::try_from(fast_uleb(input, &mut at)?).ok()?;
                let source = i32::try_from(fast_sleb(input, &mut at)?).ok()?;
                let tag = i32::try_from(fast_sleb(input, &mut at)?).ok()?;
                cur.done.push(Completion { req, source, tag });
            }
            true
        }
        Shape::Cancel => {
            e.id = u32::try_from(fast_uleb(input, &mut at)?).ok()? as i64;
            false
        }
        Shape::Sendrecv | Shape::Coll | Shape::CommOp => {
            return record_fast_more(input, at, cur, e);
        }
    };
    if !cur.valid(cur.events.pushed(), &e, 0) {
        return None;
    }
    match complete {
        true => cur.events.push_complete(&e, &cur.done),
        false => cur.events.push(&e),
    }
    cur.prev_return = t_return;
    Some(&input[at..])
}

/// [`record_fast`] for a Sendrecv, a collective or a communicator operation: `e` its event
/// with the times read, its other fields at `input[at..]`.
#[inline(never)]
fn record_fast_more<'a, P: Push>(
    input: &'a [u8],
    mut at: usize,
    cur: &mut Cursor<'_, P>,
    mut e: Event,
) -> Option<&'a [u8]> {
    let u32_at = |at: &mut usize| u32::try_from(fast_uleb(input, at)?).ok();
    let i32_at = |at: &mut usize| i32::try_from(fast_sleb(input, at)?).ok();
    /// What the record pushes besides its event.
    enum Part {
        Half(RecvHalf),
        Counts { recv_bytes: u64 },
        Nothing,
    }
    let part = match e.routine.shape() {
        Shape::Sendrecv => {
            e.bytes = fast_uleb(input, &mut at)?;
            e.peer = i32_at(&mut at)?;
            e.tag = i32_at(&mut at)?;
            let bytes = fast_uleb(input, &mut at)?;
            let source = i32_at(&mut at)?;
            let tag = i32_at(&mut at)?;
            e.comm = u32_at(&mut at)?;
            e.flags = u8::try_from(fast_uleb(input, &mut at)?)
                .ok()
                .filter(|&f| f <= 3)?;
            Part::Half(RecvHalf { bytes, source, tag })
        }
        Shape::Coll => {
            e.comm = u32_at(&mut at)?;
            e.peer = i32_at(&mut at)?;
            e.bytes = fast_uleb(input, &mut at)?;
            let recv_bytes = fast_uleb(input, &mut at)?;
            let n = fast_uleb(input, &mut at)?;
            if n > (input.len() - at) as u64 {
                return None;
            }
            cur.counts.clear();
            for _ in 0..n {
                cur.counts.push(fast_uleb(input, &mut at)?);
            }
            if e.routine.nonblocking() {
                e.id = u32_at(&mut at)? as i64;
            }
            Part::Counts { recv_bytes }
        }
        _ => {
            e.comm = u32_at(&mut at)?;
            e.id = fast_sleb(input, &mut at)?;
            if !(-1..u32::MAX as i64).contains(&e.id) {
                return None;
            }
            Part::Nothing
        }
    };
    let source = match part {
        Part::Half(h) => h.source,
        _ => 0,
    };
    if !cur.valid(cur.events.pushed(), &e, source) {
        return None;
    }
    match part {
        Part::Half(h) => cur.events.push_sendrecv(&e, h),
        Part::Counts { recv_bytes } => cur.events.push_coll(&e, recv_bytes, &cur.counts),
        Part::Nothing => cur.events.push(&e),
    }
    cur.prev_return = e.t_return;
    Some(&input[at..])
}

/// A LEB128 value of at most 9 bytes at `input[*at..]` (longer ones: `None`).
#[inline(always)]
fn fast_uleb(input: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let b = *input.get(*at)?;
        *at += 1;
        value |= ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            return Some(value);
        }
        shift += 7;
        if shift > 56 {
            return None;
        }
    }
}

#[inline(always)]
fn fast_sleb(input: &[u8], at: &mut usize) -> Option<i64> {
    let z = fast_uleb(input, at)?;
    Some(((z >> 1) as i64) ^ -((z & 1) as i64))
}

/// The chunk at `offset` of `body` (the file up to its trailer), read before.
fn chunk_at(body: &[u8], offset: usize) -> RawChunk<'_> {
    let (_, (_, _, payload)) = chunk(&body[offset..]).expect("a chunk read before");
    RawChunk { offset, payload }
}

struct RawChunk<'a> {
    offset: usize,
    payload: &'a [u8],
}

fn chunk(input: &[u8]) -> Res<'_, (u8, u32, &[u8])> {
    let (rest, (kind, rank, len)) = expect(
        "a chunk header (kind u8, rank u32, length u32)",
        tuple((le_u8, le_u32, le_u32)),
    )(input)?;
    if len as usize > rest.len() {
        return fail(
            input,
            format!(
                "a chunk of at most {} bytes (what is left of the file), found length {len}",
                rest.len()
            ),
        );
    }
    let (rest, payload) = take(len as usize)(rest)?;
    Ok((rest, (kind, rank, payload)))
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

/// The call sites of the `S` and `M` chunks at `(sites, objects)` (as [`Tally`] lists them)
/// of a trace whose ranks' events start at `offsets`; None if it has none. A rank whose sites
/// do not number its events (a job cut short) has them unknown, with a warning.
fn read_sites(
    name: &str,
    data: &[u8],
    body: &[u8],
    (sites, objects): (&[(u32, usize)], &[u64]),
    offsets: &[usize],
    warnings: &mut Vec<String>,
) -> Result<Option<Sites>, TraceError> {
    if sites.is_empty() && objects.iter().all(|&o| o == 0) {
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
    for (r, &at) in objects.iter().enumerate() {
        if let Some(offset) = at.checked_sub(1) {
            let offset = offset as usize;
            let (rest, list) = objects_chunk(chunk_at(body, offset).payload).map_err(to_err)?;
            chunk_end(name, data, offset, rest, "M")?;
            s.objects[r] = list;
        }
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

/// What the chunks of a trace say before its events are decoded: the job's and ranks'
/// metadata, the communicators, each rank's records, and where each rank's event chunks are.
struct Listing<'a> {
    meta: Meta,
    comms: Vec<Comm>,
    /// Rank `r`'s records (each chunk's count bounded by its bytes, so that the columns cannot
    /// be over-allocated).
    counts: Vec<usize>,
    /// Rank `r`'s event chunks are `by_rank[first[r]..first[r + 1]]`, in file order.
    first: Vec<usize>,
    by_rank: Vec<usize>,
    /// The file up to its trailer.
    body: &'a [u8],
    /// Where an unfinished trace's file ends inside a chunk: the chunks before it are loaded.
    cut: Option<usize>,
    /// As [`Tally`]'s.
    site_chunks: Vec<(u32, usize)>,
    object_chunks: Vec<u64>,
}

impl Listing<'_> {
    /// The listing of ranks `own` alone: every other rank has no event chunks, no events and
    /// no call sites.
    fn keep(&mut self, own: Range<usize>) {
        let (lo, hi) = (self.first[own.start], self.first[own.end]);
        self.by_rank.truncate(hi);
        self.by_rank.drain(..lo);
        for (r, f) in self.first.iter_mut().enumerate() {
            *f = (*f).clamp(lo, hi) - lo;
            if r < self.counts.len() && !own.contains(&r) {
                self.counts[r] = 0;
            }
        }
        self.site_chunks
            .retain(|&(r, _)| own.contains(&(r as usize)));
        for (r, o) in self.object_chunks.iter_mut().enumerate() {
            if !own.contains(&r) {
                *o = 0;
            }
        }
    }
}

/// Reads every chunk but the events' records: by stretches in parallel where the index says
/// where stretches start (else, or if the index is wrong, in one stretch), then in file order.
fn list_chunks<'a>(
    name: &str,
    data: &'a [u8],
    nranks: usize,
    index_offset: Option<usize>,
    scanned: Option<&Release<'_>>,
) -> Result<Listing<'a>, TraceError> {
    let at = |input: &[u8]| offset_in(data, input);
    let body_end = match index_offset {
        Some(_) => data.len() - 16,
        None => data.len(),
    };
    let body = &data[..body_end];
    let stretches = read_stretches(name, data, body, nranks, index_offset, scanned)?;
    let found: usize = stretches.iter().map(|s| s.chunks).sum();
    let mut t = Tally::new(name, nranks, found)?;
    let mut cut = None;
    for stretch in stretches {
        for f in &stretch.found[..stretch.chunks] {
            t.take(name, body, f, index_offset)?;
        }
        if let Some(e) = stretch.error {
            // A trace without its trailer may end inside a chunk: cut while it was written.
            if index_offset.is_none() && runs_past_end(body, stretch.end) {
                cut = Some(stretch.end);
                break;
            }
            return Err(e);
        }
    }
    let Tally {
        mut meta,
        comms,
        seen_job,
        index,
        event_chunks,
        e_chunks,
        mut first,
        counts,
        in_rank_order,
        metas,
        places,
        site_chunks,
        object_chunks,
        ..
    } = t;
    let nranks = counts.len();
    let metas: Vec<Option<RankMeta>> = metas
        .par_iter()
        .enumerate()
        .map(|(r, &at)| {
            let at = at.checked_sub(1)? as usize;
            Some(
                rank_meta(chunk_at(body, at).payload, r as u32, nranks)
                    .expect("read before")
                    .1,
            )
        })
        .collect();
    for (r, m) in metas.into_iter().enumerate() {
        if let Some(m) = m {
            meta.ranks.set(r, m);
        }
    }
    for (r, &at) in places.iter().enumerate() {
        let Some(at) = at.checked_sub(1) else {
            continue;
        };
        let payload = chunk_at(body, at as usize).payload;
        let p = placement::parse_chunk(payload, r as u32, nranks).expect("read before");
        let mut m = meta.ranks.get(r).clone();
        m.placement = Some(p);
        meta.ranks.set(r, m);
    }
    match (index_offset, index) {
        (_, Some(x)) => check_index(name, &x, &event_chunks[..e_chunks], &at)?,
        (Some(off), None) => {
            return Err(TraceError::offset(
                name,
                (data.len() - 16) as u64,
                format!("expected an X (index) chunk at byte {off}, where the trailer points"),
            ));
        }
        (None, None) => {}
    }
    if !seen_job {
        let what = match cut {
            Some(at) => format!(
                "the file ends inside its first chunks (at byte {at}), before its job chunk: \
                 nothing to load"
            ),
            None => "expected a J (job) chunk, found none".into(),
        };
        return Err(TraceError::at(name, what));
    }
    // Each rank's event chunks: rank `r`'s at `first[r]..first[r + 1]` of `by_rank`, in file
    // order (a counting sort, unless the file lists them rank after rank already).
    for r in 0..nranks {
        first[r + 1] += first[r];
    }
    let by_rank: Vec<usize> = if in_rank_order {
        event_chunks[..e_chunks]
            .iter()
            .map(|&(_, off)| off)
            .collect()
    } else {
        let mut next = first.clone();
        let mut sorted = vec![0usize; e_chunks];
        for &(r, off) in &event_chunks[..e_chunks] {
            sorted[next[r as usize]] = off;
            next[r as usize] += 1;
        }
        sorted
    };

    Ok(Listing {
        meta,
        comms,
        counts,
        first,
        by_rank,
        body,
        cut,
        site_chunks,
        object_chunks,
    })
}

/// Whether the chunk at `at` of `body` runs past its end (or its header does).
fn runs_past_end(body: &[u8], at: usize) -> bool {
    let Some(header) = body.get(at..at + CHUNK_HEADER_LEN) else {
        return true;
    };
    let len = u32::from_le_bytes(header[5..9].try_into().expect("4 bytes")) as usize;
    at + CHUNK_HEADER_LEN + len > body.len()
}

/// The stretches of chunks of `body`, scanned in parallel where the index at `index_offset`
/// tells where they start, else (or where the stretches do not meet) in one.
fn read_stretches(
    name: &str,
    data: &[u8],
    body: &[u8],
    nranks: usize,
    index_offset: Option<usize>,
    scanned: Option<&Release<'_>>,
) -> Result<Vec<Stretch>, TraceError> {
    let starts = index_offset
        .and_then(|x| stretch_starts(body, x, rayon::current_num_threads() * STRETCHES_PER_THREAD));
    let read = |starts: &[(usize, &[u8])]| -> Result<Vec<Stretch>, TraceError> {
        let ends = starts[1..].iter().map(|s| s.0).chain([body.len()]);
        let pairs: Vec<(usize, usize, &[u8])> = starts
            .iter()
            .zip(ends)
            .map(|(&(from, x), to)| (from, to, x))
            .collect();
        pairs
            .par_iter()
            .map(|&(from, to, ahead)| scan(name, data, body, (from, to), nranks, ahead, scanned))
            .collect()
    };
    Ok(match starts.map(|s| read(&s)).transpose()? {
        // Each stretch must end where the next starts.
        Some(v) if v.iter().all(|s| s.error.is_some() || s.end == s.to) => v,
        _ => read(&[(HEADER_LEN, &[])])?,
    })
}

/// What the chunks say, taken in file order.
struct Tally<'a> {
    // The trace is made at the end, around its events: an empty one made first, whose events
    // the fill replaces, would cost time a rank on one thread.
    meta: Meta,
    comms: Vec<Comm>,
    seen_job: bool,
    index: Option<RawChunk<'a>>,
    /// Event chunks listed with their rank (16 bytes a chunk, where a list of chunks and one
    /// of each rank's would take 70 bytes a rank), in pages of their own, bounded by the chunks
    /// found (a vector's growth would stay resident).
    event_chunks: Pages<(u32, usize)>,
    e_chunks: usize,
    /// Rank `r`'s event chunks are counted at `first[r + 1]`, its records and their bytes in
    /// `counts[r]` and `bytes[r]` (each chunk's count bounded by its bytes, so that the
    /// columns cannot be over-allocated).
    first: Vec<usize>,
    counts: Vec<usize>,
    bytes: Vec<usize>,
    in_rank_order: bool,
    last_rank: u32,
    /// Each rank's last R chunk, at its offset + 1 (0: none), read once the scan is done.
    metas: Vec<u64>,
    /// Each rank's last P chunk, as `metas`.
    places: Vec<u64>,
    /// The S chunks with their rank, in file order, and each rank's last M chunk (as `metas`).
    site_chunks: Vec<(u32, usize)>,
    object_chunks: Vec<u64>,
}

impl<'a> Tally<'a> {
    fn new(name: &str, nranks: usize, found: usize) -> Result<Tally<'a>, TraceError> {
        Ok(Tally {
            meta: Meta {
                ranks: RankMetas::new(nranks),
                ..Meta::default()
            },
            comms: Vec::new(),
            seen_job: false,
            index: None,
            event_chunks: Pages::zeroed(found).map_err(|e| shortfall(name, e))?,
            e_chunks: 0,
            first: vec![0; nranks + 1],
            counts: vec![0; nranks],
            bytes: vec![0; nranks],
            in_rank_order: true,
            last_rank: 0,
            metas: Vec::new(),
            places: Vec::new(),
            site_chunks: Vec::new(),
            object_chunks: Vec::new(),
        })
    }

    /// Takes chunk `f` of `body`.
    fn take(
        &mut self,
        name: &str,
        body: &'a [u8],
        f: &Found,
        index_offset: Option<usize>,
    ) -> Result<(), TraceError> {
        let offset = f.offset as usize;
        let payload = || chunk_at(body, offset).payload;
        match f.kind {
            b'J' => {
                if self.seen_job {
                    return Err(TraceError::offset(
                        name,
                        f.offset,
                        "expected one J (job) chunk, found a second".into(),
                    ));
                }
                self.seen_job = true;
                let (_, job) = job(payload()).expect("read before");
                let m = &mut self.meta;
                (m.library, m.eager_limit, m.params, m.other_params) = job;
            }
            b'R' => {
                self.metas.resize(self.counts.len(), 0);
                self.metas[f.rank as usize] = f.offset + 1;
            }
            b'P' => {
                self.places.resize(self.counts.len(), 0);
                self.places[f.rank as usize] = f.offset + 1;
            }
            b'S' => self.site_chunks.push((f.rank, offset)),
            b'M' => {
                self.object_chunks.resize(self.counts.len(), 0);
                self.object_chunks[f.rank as usize] = f.offset + 1;
            }
            b'C' => {
                let (_, comm) = comm(payload()).expect("read before");
                match self.comms.iter().find(|x| x.id == comm.id) {
                    Some(old) if *old != comm => {
                        return Err(TraceError::offset(
                            name,
                            f.offset,
                            format!(
                                "communicator {} is defined twice with different members",
                                comm.id
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => self.comms.push(comm),
                }
            }
            b'E' => {
                let r = f.rank as usize;
                self.counts[r] += f.records as usize;
                self.bytes[r] += f.len as usize;
                if self.bytes[r] > MAX_RANK_BYTES {
                    return Err(TraceError::offset(
                        name,
                        f.offset,
                        format!(
                            "rank {r} has over {MAX_RANK_BYTES} bytes of event records, the most this build reads per rank"
                        ),
                    ));
                }
                self.in_rank_order &= self.last_rank <= f.rank;
                self.last_rank = f.rank;
                self.first[r + 1] += 1;
                self.event_chunks[self.e_chunks] = (f.rank, offset);
                self.e_chunks += 1;
            }
            _ => {
                if Some(offset) != index_offset {
                    return Err(TraceError::offset(
                        name,
                        f.offset,
                        "expected the X (index) chunk only where the trailer points".into(),
                    ));
                }
                self.index = Some(chunk_at(body, offset));
            }
        }
        Ok(())
    }
}

/// Decodes every rank's event records into the columns, each event checked ([`Checks`]),
/// telling `release` of the input done with; and the requests no call completed
/// ([`Trace::pending`]), in rank order.
fn fill_columns(
    name: &str,
    data: &[u8],
    listing: &Listing<'_>,
    release: &Release<'_>,
) -> Result<(Events, Vec<(u32, u32)>), TraceError> {
    let at = |input: &[u8]| offset_in(data, input);
    let to_err = |e: nom::Err<PErr<'_>>| nom_error(name, data, e);
    let (counts, first, by_rank, body) = (
        &listing.counts,
        &listing.first,
        &listing.by_rank,
        listing.body,
    );
    let chunks_of = |r: usize| {
        by_rank[first[r]..first[r + 1]]
            .iter()
            .map(|&off| chunk_at(body, off))
    };
    let checks = Checks::new(name, counts.len(), &listing.comms)?;
    thread_local! {
        /// A cursor's buffers, kept from rank to rank on this thread (not allocated per rank).
        static BUFFERS: std::cell::Cell<(Vec<Completion>, Vec<u64>, RankRequests)> =
            Default::default();
    }
    let pending = std::sync::Mutex::new(Vec::new());
    let records = counts;
    let columns = Events::fill(counts, &|rank, sink| {
        let (done, counts, mut requests) = BUFFERS.take();
        requests.done.clear();
        // A request a record at most: room made once, not by doubling (the copy of the last
        // doubling would hold 1.5 times the requests of the largest rank on each thread).
        requests.done.reserve(records[rank]);
        let mut cur = Cursor {
            events: sink,
            done,
            counts,
            prev_return: 0,
            rank,
            checks: &checks,
            known_comm: 0,
            requests,
            invalid: None,
        };
        for c in chunks_of(rank) {
            let (mut rest, n) = le_u32::<_, PErr>(c.payload).map_err(to_err)?;
            for _ in 0..n {
                rest = match record_fast(rest, &mut cur) {
                    Some(r) => r,
                    None => {
                        let index = cur.events.pushed();
                        record(rest, &mut cur)
                            .map_err(|e| match cur.invalid.take() {
                                Some((routine, what)) => TraceError {
                                    offset: Some(at(rest)),
                                    ..TraceError::event(name, rank, index, routine.mpi_name(), what)
                                },
                                None => to_err(e).in_event(rank, index),
                            })?
                            .0
                    }
                };
            }
            chunk_end(name, data, c.offset, rest, "E")
                .map_err(|e| e.in_event(rank, cur.events.pushed()))?;
            let end = at(c.payload) as usize + c.payload.len();
            let (from, to) = (c.offset / RELEASE_UNIT, end / RELEASE_UNIT);
            if to > from {
                release(from * RELEASE_UNIT, (to - from) * RELEASE_UNIT);
            }
        }
        if cur.requests.pending().next().is_some() {
            let found = cur
                .requests
                .pending()
                .filter_map(|req| cur.events.origin(req));
            let found: Vec<(u32, u32)> = found.map(|(i, _)| (rank as u32, i as u32)).collect();
            pending.lock().expect("pending").extend(found);
        }
        BUFFERS.set((cur.done, cur.counts, cur.requests));
        Ok(())
    })?;
    // What the buffers grew to for the largest rank is not kept past the load: a rank of many
    // events would leave 4 bytes an event on each thread for its requests.
    rayon::broadcast(|_| drop(BUFFERS.take()));
    drop(BUFFERS.take());
    let mut pending = pending.into_inner().expect("pending");
    pending.sort_unstable();
    Ok((columns, pending))
}

/// Stretches of the chunk scan per thread (more than one: stretches differ in their chunks).
const STRETCHES_PER_THREAD: usize = 4;

/// A chunk the scan found good in itself: where it is, its kind, and for an E chunk its rank,
/// records and their bytes (what is left to check depends on the chunks before it).
#[derive(Clone, Copy)]
struct Found {
    offset: u64,
    rank: u32,
    records: u32,
    len: u32,
    kind: u8,
}

crate::memory::zeroable!(Found {
    offset: u64,
    rank: u32,
    records: u32,
    len: u32,
    kind: u8
});

/// The chunks of one stretch of the file, from `from` to `to`, read by [`scan`].
struct Stretch {
    /// The chunks, `found[..chunks]`: in pages of their own, returned when dropped (the
    /// allocator would keep a vector's for reuse, where nothing reuses them).
    found: Pages<Found>,
    chunks: usize,
    /// What stopped the scan before `to`.
    error: Option<TraceError>,
    /// Where the scan stopped: `to`, unless the last chunk crossed it or an error stopped it.
    end: usize,
    to: usize,
}

/// Where stretches of about equal numbers of event chunks start, by the index at `x`, the
/// first at the header's end, each with the index's entries from its first event chunk on:
/// `None` if the index does not read as offsets rising inside the body (then the file is read
/// in one stretch, which finds what is wrong).
fn stretch_starts(body: &[u8], x: usize, stretches: usize) -> Option<Vec<(usize, &[u8])>> {
    let (_, (kind, _, payload)) = chunk(&body[x..]).ok()?;
    let (entries, n) = le_u32::<_, PErr>(payload).ok()?;
    let n = n as usize;
    if kind != b'X' || entries.len() != n * INDEX_ENTRY_LEN || n < stretches || stretches < 2 {
        return None;
    }
    let mut starts = vec![(HEADER_LEN, entries)];
    for j in 1..stretches {
        let k = n * j / stretches;
        let off = index_offset(entries, k);
        if off <= starts.last().expect("one").0 || off >= x {
            return None;
        }
        starts.push((off, &entries[k * INDEX_ENTRY_LEN..]));
    }
    Some(starts)
}

/// An index entry: the rank (u32) and offset (u64) of an event chunk.
const INDEX_ENTRY_LEN: usize = 12;

/// The offset that entry `k` of an index's `entries` gives.
fn index_offset(entries: &[u8], k: usize) -> usize {
    let at = k * INDEX_ENTRY_LEN + 4;
    u64::from_le_bytes(entries[at..at + 8].try_into().expect("8 bytes")) as usize
}

/// How many event chunks ahead [`scan`] asks for a chunk's header: chunks are hundreds of
/// bytes apart, each header a miss that a core's own prefetching does not foresee (see the
/// `diss` case of tests/bench/run.sh).
const SCAN_AHEAD: usize = 16;

/// Reads the chunks of `body` (the file `data` up to its trailer) from offset `from` until one
/// ends at or past `to`, or one is wrong.
/// `ahead`: the index's entries from the stretch's first event chunk on (none: no index), by
/// which the headers of the event chunks ahead are asked for (only a hint: a wrong index costs
/// nothing but the hints). `scanned`: where it hands back what it has read, as it goes.
fn scan(
    name: &str,
    data: &[u8],
    body: &[u8],
    (from, to): (usize, usize),
    nranks: usize,
    ahead: &[u8],
    scanned: Option<&Release<'_>>,
) -> Result<Stretch, TraceError> {
    let at = |input: &[u8]| offset_in(data, input);
    let to_err = |e: nom::Err<PErr<'_>>| nom_error(name, data, e);
    let whole = |offset, r: &[u8], what| chunk_end(name, data, offset, r, what);
    let mut rest = &body[from..];
    let one = |offset: usize, rest: &mut &[u8]| -> Result<Found, TraceError> {
        let (r, (kind, rank, payload)) = chunk(rest).map_err(to_err)?;
        if !b"JRPCEXSM".contains(&kind) {
            return Err(TraceError::offset(
                name,
                offset as u64,
                format!("expected a chunk kind J, R, P, C, E, S, M or X, found byte {kind:#04x}"),
            ));
        }
        if matches!(kind, b'R' | b'P' | b'E' | b'S' | b'M') && rank as usize >= nranks {
            return Err(TraceError::offset(
                name,
                offset as u64 + 1,
                format!("expected a rank below {nranks}, found {rank}"),
            ));
        }
        if matches!(kind, b'J' | b'C' | b'X') && rank != NO_RANK {
            return Err(TraceError::offset(
                name,
                offset as u64 + 1,
                format!("expected rank 0xFFFFFFFF for a job-wide chunk, found {rank}"),
            ));
        }
        *rest = r;
        let mut found = Found {
            offset: offset as u64,
            rank,
            records: 0,
            len: 0,
            kind,
        };
        // J, R and C chunks are read here to be checked, and again where they are used.
        match kind {
            b'J' => whole(offset, job(payload).map_err(to_err)?.0, "J")?,
            b'R' => whole(
                offset,
                rank_meta(payload, rank, nranks).map_err(to_err)?.0,
                "R",
            )?,
            b'C' => whole(offset, comm(payload).map_err(to_err)?.0, "C")?,
            b'P' => {
                placement::parse_chunk(payload, rank, nranks).map_err(|why| {
                    TraceError::offset(
                        name,
                        (offset + CHUNK_HEADER_LEN) as u64,
                        format!("rank {rank}: {why}"),
                    )
                })?;
            }
            b'E' => {
                let (rest, n) =
                    expect("the number of records (u32)", le_u32)(payload).map_err(to_err)?;
                if n as usize > rest.len() / 3 {
                    return Err(TraceError::offset(
                        name,
                        offset as u64 + CHUNK_HEADER_LEN as u64,
                        format!(
                            "expected at most {} records (3 bytes each at least) in a chunk of {} bytes, found a count of {n}",
                            rest.len() / 3,
                            payload.len()
                        ),
                    ));
                }
                (found.records, found.len) = (n, rest.len() as u32);
            }
            _ => {}
        }
        Ok(found)
    };
    let mut found = Pages::<Found>::zeroed(1 << 12).map_err(|e| shortfall(name, e))?;
    let (mut chunks, mut offset) = (0, from);
    let mut error = None;
    let listed = ahead.len() / INDEX_ENTRY_LEN;
    let hint = |k: usize| {
        if k < listed {
            let at = index_offset(ahead, k);
            if at < body.len() {
                crate::memory::prefetch(&body[at]);
            }
        }
    };
    (0..SCAN_AHEAD).for_each(hint);
    let mut e_chunks = 0;
    let mut released = from.div_ceil(RELEASE_UNIT) * RELEASE_UNIT;
    while offset < to && !rest.is_empty() {
        if chunks == found.len() {
            found = found.doubled().map_err(|e| shortfall(name, e))?;
        }
        match one(offset, &mut rest) {
            Ok(f) => {
                if f.kind == b'E' {
                    hint(e_chunks + SCAN_AHEAD);
                    e_chunks += 1;
                }
                found[chunks] = f;
            }
            Err(e) => {
                error = Some(e);
                break;
            }
        }
        chunks += 1;
        offset = at(rest) as usize;
        // The whole units read of this stretch, handed back (the units it shares with the
        // stretches beside it are the caller's).
        if let Some(release) = scanned {
            let done = offset / RELEASE_UNIT * RELEASE_UNIT;
            if done >= released + RELEASE_UNIT {
                release(released, done - released);
                released = done;
            }
        }
    }
    Ok(Stretch {
        found,
        chunks,
        error,
        end: offset,
        to,
    })
}

/// A shortfall of memory while parsing `name`, as the parser's error.
fn shortfall(name: &str, e: crate::memory::Shortfall) -> TraceError {
    TraceError::at(name, e.message)
}

/// Whether `r`, what is left of the chunk at `offset` of `data` once read, is nothing.
fn chunk_end(
    name: &str,
    data: &[u8],
    offset: usize,
    r: &[u8],
    what: &str,
) -> Result<(), TraceError> {
    if r.is_empty() {
        return Ok(());
    }
    Err(TraceError::offset(
        name,
        offset_in(data, r),
        format!(
            "expected the end of the {what} chunk at byte {offset}, found {} more bytes",
            r.len()
        ),
    ))
}

/// Where `input`, a part of `data`, starts in it.
fn offset_in(data: &[u8], input: &[u8]) -> u64 {
    (input.as_ptr() as usize).saturating_sub(data.as_ptr() as usize) as u64
}

/// A nom error as the trace error it is, at its offset in `data`.
fn nom_error(name: &str, data: &[u8], e: nom::Err<PErr<'_>>) -> TraceError {
    match e {
        nom::Err::Error(e) | nom::Err::Failure(e) => TraceError::offset(
            name,
            offset_in(data, e.input),
            format!("expected {}", e.expected),
        ),
        nom::Err::Incomplete(_) => {
            TraceError::offset(name, data.len() as u64, "expected more bytes".into())
        }
    }
}

fn check_index(
    name: &str,
    x: &RawChunk,
    event_chunks: &[(u32, usize)],
    at: &dyn Fn(&[u8]) -> u64,
) -> Result<(), TraceError> {
    let err = |e: nom::Err<PErr<'_>>| match e {
        nom::Err::Error(e) | nom::Err::Failure(e) => {
            TraceError::offset(name, at(e.input), format!("expected {}", e.expected))
        }
        nom::Err::Incomplete(_) => {
            TraceError::offset(name, x.offset as u64, "expected a complete index".into())
        }
    };
    let (mut rest, n) = expect("the index count (u32)", le_u32)(x.payload).map_err(err)?;
    if n as usize != event_chunks.len() {
        return Err(TraceError::offset(
            name,
            x.offset as u64,
            format!(
                "expected an index of the file's {} E chunks, found {n} entries",
                event_chunks.len()
            ),
        ));
    }
    for &(c_rank, c_offset) in event_chunks {
        let (r, (rank, off)) = expect(
            "an index entry (rank u32, offset u64)",
            tuple((le_u32, le_u64)),
        )(rest)
        .map_err(err)?;
        if rank != c_rank || off != c_offset as u64 {
            return Err(TraceError::offset(
                name,
                at(rest),
                format!(
                    "expected index entry (rank {c_rank}, offset {c_offset}), found (rank {rank}, offset {off})"
                ),
            ));
        }
        rest = r;
    }
    if !rest.is_empty() {
        return Err(TraceError::offset(
            name,
            at(rest),
            "expected the end of the index".into(),
        ));
    }
    Ok(())
}

fn put_uleb(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn put_sleb(out: &mut Vec<u8>, v: i64) {
    put_uleb(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_uleb(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// Appends event `i` of `ev` as one record, its gap measured from `prev_return`.
pub fn put_record(out: &mut Vec<u8>, ev: Rank<'_>, i: usize, prev_return: u64) {
    let e = ev.event(i);
    out.push(e.routine as u8);
    put_sleb(out, (e.t_call as i128 - prev_return as i128) as i64);
    put_sleb(out, (e.t_return as i128 - e.t_call as i128) as i64);
    match e.routine.shape() {
        Shape::None => {}
        Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv => {
            put_uleb(out, e.bytes);
            put_sleb(out, e.peer as i64);
            put_sleb(out, e.tag as i64);
            put_uleb(out, e.comm as u64);
            if matches!(e.routine.shape(), Shape::Recv | Shape::Irecv) {
                put_uleb(out, e.flags as u64);
            }
            if matches!(e.routine.shape(), Shape::Isend | Shape::Irecv) {
                put_uleb(out, e.id as u64);
            }
        }
        Shape::Sendrecv => {
            let h = ev.recv_half(i).expect("sendrecv has a receive half");
            put_uleb(out, e.bytes);
            put_sleb(out, e.peer as i64);
            put_sleb(out, e.tag as i64);
            put_uleb(out, h.bytes);
            put_sleb(out, h.source as i64);
            put_sleb(out, h.tag as i64);
            put_uleb(out, e.comm as u64);
            put_uleb(out, e.flags as u64);
        }
        Shape::Complete => {
            put_uleb(out, ev.completions(i).len() as u64);
            for c in ev.completions(i) {
                put_uleb(out, c.req as u64);
                put_sleb(out, c.source as i64);
                put_sleb(out, c.tag as i64);
            }
        }
        Shape::Cancel => put_uleb(out, e.id as u64),
        Shape::Coll => {
            let (recv_bytes, counts) = ev.coll_recv(i);
            put_uleb(out, e.comm as u64);
            put_sleb(out, e.peer as i64);
            put_uleb(out, e.bytes);
            put_uleb(out, recv_bytes);
            put_uleb(out, counts.len() as u64);
            for c in counts {
                put_uleb(out, c);
            }
            if e.routine.nonblocking() {
                put_uleb(out, e.id as u64);
            }
        }
        Shape::CommOp => {
            put_uleb(out, e.comm as u64);
            put_sleb(out, e.id);
        }
    }
}

/// Writes chunks and keeps the offsets of the E chunks for the index.
pub struct Writer<W: Write> {
    out: W,
    offset: u64,
    index: Vec<(u32, u64)>,
}

impl<W: Write> Writer<W> {
    /// Starts a file of `nranks` ranks: header and J chunk.
    pub fn new(mut out: W, nranks: u32, meta: &Meta) -> io::Result<Writer<W>> {
        let mut head = Vec::with_capacity(HEADER_LEN);
        head.extend_from_slice(&MAGIC);
        head.extend_from_slice(&VERSION.to_le_bytes());
        head.extend_from_slice(&0u16.to_le_bytes());
        head.extend_from_slice(&nranks.to_le_bytes());
        out.write_all(&head)?;
        let mut w = Writer {
            out,
            offset: HEADER_LEN as u64,
            index: Vec::new(),
        };
        let mut j = Vec::new();
        put_str(&mut j, &meta.library);
        match &meta.eager_limit {
            Some(e) => {
                j.push(1);
                put_str(&mut j, &e.name);
                j.extend_from_slice(&e.bytes.to_le_bytes());
            }
            None => j.push(0),
        }
        put_set(&mut j, meta.params.as_ref());
        if let Some(p) = &meta.params
            && (p.class.is_some() || !meta.other_params.is_empty())
        {
            j.push(class_code(p.class));
            j.push(meta.other_params.len() as u8);
            for o in &meta.other_params {
                j.push(class_code(o.class));
                put_set(&mut j, Some(o));
            }
        }
        w.chunk(b'J', NO_RANK, &j)?;
        Ok(w)
    }

    /// Appends one chunk.
    pub fn chunk(&mut self, kind: u8, rank: u32, payload: &[u8]) -> io::Result<()> {
        let len = u32::try_from(payload.len()).map_err(|_| io::Error::other("chunk over 4 GiB"))?;
        if kind == b'E' {
            self.index.push((rank, self.offset));
        }
        let mut head = [0u8; CHUNK_HEADER_LEN];
        head[0] = kind;
        head[1..5].copy_from_slice(&rank.to_le_bytes());
        head[5..9].copy_from_slice(&len.to_le_bytes());
        self.out.write_all(&head)?;
        self.out.write_all(payload)?;
        self.offset += (CHUNK_HEADER_LEN + payload.len()) as u64;
        Ok(())
    }

    /// Appends a rank's metadata.
    pub fn rank_meta(&mut self, rank: u32, m: &RankMeta) -> io::Result<()> {
        let mut p = Vec::new();
        put_str(&mut p, &m.hostname);
        p.extend_from_slice(&m.clock_offset_init_ns.to_le_bytes());
        p.extend_from_slice(&m.clock_offset_final_ns.to_le_bytes());
        if let Some(c) = &m.cores {
            p.extend_from_slice(&c.partner.to_le_bytes());
            p.extend_from_slice(&c.init_ns.to_le_bytes());
            p.extend_from_slice(&c.final_ns.to_le_bytes());
        }
        if let Some(own) = m.own_ns {
            p.extend_from_slice(&own.to_le_bytes());
        }
        self.chunk(b'R', rank, &p)
    }

    /// Appends where a rank ran.
    pub fn placement(&mut self, rank: u32, p: &placement::Placement) -> io::Result<()> {
        self.chunk(b'P', rank, &placement::chunk(p))
    }

    /// Appends a communicator.
    pub fn comm(&mut self, c: &Comm) -> io::Result<()> {
        let mut p = Vec::with_capacity(8 + 4 * c.members.len());
        p.extend_from_slice(&c.id.to_le_bytes());
        p.extend_from_slice(&(c.members.len() as u32).to_le_bytes());
        for m in &c.members {
            p.extend_from_slice(&m.to_le_bytes());
        }
        self.chunk(b'C', NO_RANK, &p)
    }

    /// Appends an S chunk: `fresh` addresses added to rank `rank`'s site table, and the sites
    /// of its next records (indices into the table, or [`UNKNOWN`]).
    pub fn sites(&mut self, rank: u32, fresh: &[u64], indices: &[u32]) -> io::Result<()> {
        let mut p = Vec::with_capacity(8 + 8 * fresh.len() + 2 * indices.len());
        p.extend_from_slice(&(fresh.len() as u32).to_le_bytes());
        fresh
            .iter()
            .for_each(|a| p.extend_from_slice(&a.to_le_bytes()));
        p.extend_from_slice(&(indices.len() as u32).to_le_bytes());
        indices
            .iter()
            .for_each(|&i| put_uleb(&mut p, (i as u64 + 1) % (UNKNOWN as u64 + 1)));
        self.chunk(b'S', rank, &p)
    }

    /// Appends an M chunk: rank `rank`'s loaded objects.
    pub fn objects(&mut self, rank: u32, objects: &[Object]) -> io::Result<()> {
        let mut p = Vec::new();
        p.extend_from_slice(&(objects.len() as u32).to_le_bytes());
        for o in objects {
            for v in [o.bias, o.lo, o.hi] {
                p.extend_from_slice(&v.to_le_bytes());
            }
            put_str(&mut p, &o.build_id);
            put_str(&mut p, &o.path);
        }
        self.chunk(b'M', rank, &p)
    }

    /// Appends an E chunk of `records` already encoded.
    pub fn events(&mut self, rank: u32, records: u32, encoded: &[u8]) -> io::Result<()> {
        let mut p = Vec::with_capacity(4 + encoded.len());
        p.extend_from_slice(&records.to_le_bytes());
        p.extend_from_slice(encoded);
        self.chunk(b'E', rank, &p)
    }

    /// Writes the index and the trailer; the file is then finalized.
    pub fn finish(mut self) -> io::Result<W> {
        let mut x = Vec::with_capacity(4 + INDEX_ENTRY_LEN * self.index.len());
        x.extend_from_slice(&(self.index.len() as u32).to_le_bytes());
        for (rank, off) in &self.index {
            x.extend_from_slice(&rank.to_le_bytes());
            x.extend_from_slice(&off.to_le_bytes());
        }
        let index_at = self.offset;
        self.chunk(b'X', NO_RANK, &x)?;
        self.out.write_all(&index_at.to_le_bytes())?;
        self.out.write_all(&END_MAGIC)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Writes a whole trace; `finalize: false` leaves out the index, as a job that died would.
pub fn write(trace: &Trace, out: impl Write, finalize: bool) -> io::Result<()> {
    let mut w = Writer::new(out, trace.nranks() as u32, &trace.meta)?;
    for (r, m) in trace.meta.ranks.recorded() {
        w.rank_meta(r as u32, m)?;
        if let Some(p) = &m.placement {
            w.placement(r as u32, p)?;
        }
    }
    for c in &trace.comms {
        w.comm(c)?;
    }
    if let Some(s) = &trace.sites {
        for (r, objects) in s.objects.iter().enumerate() {
            if !objects.is_empty() {
                w.objects(r as u32, objects)?;
            }
        }
    }
    let mut buf = Vec::new();
    for (r, ev) in trace.events.ranks().enumerate() {
        let mut prev_return = 0;
        // A rank's sites, where it has any, its whole site table with its first chunk.
        let at = trace.events.offsets()[r];
        let sites = trace
            .sites
            .as_ref()
            .map(|s| (s, &s.of_event[at..at + ev.len()]))
            .filter(|(s, of)| !s.addresses[r].is_empty() || of.iter().any(|&i| i != UNKNOWN));
        for start in (0..ev.len()).step_by(RECORDS_PER_CHUNK) {
            buf.clear();
            let end = (start + RECORDS_PER_CHUNK).min(ev.len());
            if let Some((s, of)) = sites {
                let fresh = if start == 0 { &s.addresses[r][..] } else { &[] };
                w.sites(r as u32, fresh, &of[start..end])?;
            }
            for i in start..end {
                put_record(&mut buf, ev, i, prev_return);
                prev_return = ev.t_return(i);
            }
            w.events(r as u32, (end - start) as u32, &buf)?;
        }
    }
    if finalize {
        w.finish()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of the two ranks of `t`, each rank's records after one S chunk of `sites[r]`.
    fn with_site_chunks(t: &Trace, sites: [&[u32]; 2]) -> Vec<u8> {
        let mut w = Writer::new(Vec::new(), 2, &t.meta).unwrap();
        for (r, idx) in sites.into_iter().enumerate() {
            let ev = t.events.rank(r);
            let (mut buf, mut prev) = (Vec::new(), 0);
            for i in 0..ev.len() {
                put_record(&mut buf, ev, i, prev);
                prev = ev.t_return(i);
            }
            w.sites(r as u32, &[0x10 + r as u64], idx).unwrap();
            w.events(r as u32, ev.len() as u32, &buf).unwrap();
        }
        w.finish().unwrap()
    }

    /// Sites round-trip; a rank whose S chunks number fewer records than it has loads with its
    /// sites unknown and a warning; an index past the table is an error at the chunk.
    #[test]
    fn call_sites_are_checked_against_the_events() {
        let text = "loggps-trace 1\nranks 2\n\
                    0 MPI_Init 0 1\n0 MPI_Finalize 2 3\n1 MPI_Init 0 1\n1 MPI_Finalize 2 3\n";
        let t = super::super::text::parse("t.txt", text.as_bytes()).unwrap();
        let good = parse("t.bin", &with_site_chunks(&t, [&[0, UNKNOWN], &[0, 0]])).unwrap();
        let s = good.sites.as_ref().unwrap();
        assert_eq!(s.of_event, [0, UNKNOWN, 0, 0]);
        assert_eq!((s.address(0, 0), s.address(1, 2)), (Some(0x10), Some(0x11)));
        assert!(good.warnings.is_empty(), "{:?}", good.warnings);
        let mut out = Vec::new();
        write(&good, &mut out, true).unwrap();
        assert_eq!(parse("t.bin", &out).unwrap().sites, good.sites);

        let short = parse("t.bin", &with_site_chunks(&t, [&[0, 0], &[0]])).unwrap();
        assert_eq!(
            short.sites.as_ref().unwrap().of_event,
            [0, 0, UNKNOWN, UNKNOWN]
        );
        assert!(
            short.warnings[0].contains("rank 1 has call sites for 1 records but 2 events"),
            "{:?}",
            short.warnings
        );

        let e = parse("t.bin", &with_site_chunks(&t, [&[0, 1], &[0, 0]])).unwrap_err();
        assert!(e.to_string().contains("expected sites below 1"), "{e}");
    }

    /// Event chunks in any order, a rank's split over several: each rank reads its own in
    /// file order, with or without an index.
    #[test]
    fn event_chunks_out_of_rank_order() {
        let text = "loggps-trace 1\nranks 3\n\
            0 MPI_Send 10 20 bytes=8 peer=1 tag=0\n1 MPI_Recv 5 30 bytes=8 peer=0 tag=0\n\
            1 MPI_Send 40 50 bytes=9 peer=2 tag=1\n2 MPI_Recv 0 60 bytes=9 peer=1 tag=1\n\
            1 MPI_Barrier 70 80\n0 MPI_Barrier 70 80\n2 MPI_Barrier 70 80\n";
        let t = crate::trace::text::parse("t.txt", text.as_bytes()).unwrap();
        // Rank 1's three records in two chunks, around ranks 2's and 0's.
        let chunk = |r: usize, from: usize, to: usize| {
            let (ev, mut buf) = (t.events.rank(r), Vec::new());
            let mut prev = if from == 0 { 0 } else { ev.t_return(from - 1) };
            for i in from..to {
                put_record(&mut buf, ev, i, prev);
                prev = ev.t_return(i);
            }
            (r as u32, (to - from) as u32, buf)
        };
        let order = [
            chunk(1, 0, 2),
            chunk(2, 0, 2),
            chunk(0, 0, 2),
            chunk(1, 2, 3),
        ];
        for finalize in [false, true] {
            let mut out = Vec::new();
            let mut w = Writer::new(&mut out, 3, &t.meta).unwrap();
            for (r, n, buf) in &order {
                w.events(*r, *n, buf).unwrap();
            }
            match finalize {
                true => drop(w.finish().unwrap()),
                false => drop(w),
            }
            let back = parse("t.bin", &out).unwrap();
            assert_eq!(back.complete, finalize);
            assert_eq!(back.events, t.events, "finalized: {finalize}");
        }
    }

    /// A finalized 40-rank ring, rank by rank: `before(writer, r)` writes what goes before rank
    /// `r`'s E chunk. Returns the file and where each rank's E chunk is.
    fn ring_file(before: &dyn Fn(&mut Writer<&mut Vec<u8>>, u32)) -> (Vec<u8>, Vec<usize>) {
        let spec = crate::synth::Spec {
            pattern: crate::synth::Pattern::Ring,
            ranks: 40,
            iterations: 2,
            bytes: 8,
            compute_ns: 0,
        };
        let mut file = Vec::new();
        crate::synth::write(&spec, &mut file, &|_| {}).unwrap();
        let t = parse("t.bin", &file).unwrap();
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, 40, &t.meta).unwrap();
        let mut e_chunks = Vec::new();
        for r in 0..40 {
            before(&mut w, r as u32);
            let (ev, mut buf, mut prev) = (t.events.rank(r), Vec::new(), 0);
            for i in 0..ev.len() {
                put_record(&mut buf, ev, i, prev);
                prev = ev.t_return(i);
            }
            e_chunks.push(w.offset as usize);
            w.events(r as u32, ev.len() as u32, &buf).unwrap();
        }
        w.finish().unwrap();
        (out, e_chunks)
    }

    /// The chunk scan read in stretches, where the index says they start, finds what a scan in
    /// one stretch finds: the same trace and, with a byte changed before the index, the same
    /// first error. The one-stretch scan reads the same bytes without the trailer, so that it
    /// has no index to split by; where it stops only at the index chunk it was not told of,
    /// the change was found later than the scan (in the records), and there is nothing to
    /// compare.
    #[test]
    fn stretches_read_as_one() {
        let host = |name: String| RankMeta {
            hostname: name,
            clock_offset_init_ns: 5,
            clock_offset_final_ns: -5,
            cores: None,
            placement: None,
            own_ns: None,
        };
        // Each rank's R chunk before its events, rank 7's again before rank 35's events.
        let (file, e_chunks) = ring_file(&|w, r| {
            w.rank_meta(r, &host(format!("n{}", r % 3))).unwrap();
            if r == 35 {
                w.rank_meta(7, &host("late".into())).unwrap();
            }
        });
        let trailer = file.len() - 16;
        let x = u64::from_le_bytes(file[trailer..trailer + 8].try_into().unwrap()) as usize;
        assert_eq!(e_chunks.len(), 40);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        pool.install(|| {
            let starts = stretch_starts(&file[..trailer], x, 3 * STRETCHES_PER_THREAD).unwrap();
            assert_eq!(starts.len(), 12);
            // Each stretch's hints start at its first event chunk.
            for &(from, ahead) in &starts[1..] {
                assert_eq!(index_offset(ahead, 0), from);
            }
            let whole = parse("t.bin", &file).unwrap();
            let mut text = Vec::new();
            crate::trace::text::write(&whole, &mut text).unwrap();
            let again = crate::trace::text::parse("t.txt", &text).unwrap();
            assert_eq!(whole.events, again.events);
            assert_eq!(whole.events.len(), 40 * 8);
            assert_eq!(whole.meta.ranks.get(7).hostname, "late");
            assert_eq!(whole.meta.ranks.get(8).hostname, "n2");
            assert_eq!(whole.meta.ranks.get(39).clock_offset_final_ns, -5);

            let mut seed = 0x2545_f491_4f6c_dd1du64;
            let (mut compared, mut in_headers) = (0, 0);
            for case in 0..4000 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                // Half the cases in an E chunk's header or record count, half anywhere.
                let at = if case % 2 == 0 {
                    e_chunks[seed as usize % 40] + (seed >> 20) as usize % (CHUNK_HEADER_LEN + 4)
                } else {
                    HEADER_LEN + (seed >> 8) as usize % (x - HEADER_LEN)
                };
                let mut f = file.clone();
                f[at] ^= 1 << ((seed >> 40) % 8);
                let Err(one) = parse("t.bin", &f[..trailer]) else {
                    continue;
                };
                if one.offset == Some(x as u64) {
                    continue;
                }
                let stretched =
                    parse("t.bin", &f).expect_err("an error the one-stretch scan finds");
                // Without its trailer, a chunk running past the end is where the file was
                // cut: loaded up to there, it may fail later, at another error.
                if stretched.message.contains("a chunk of at most") {
                    continue;
                }
                assert_eq!(
                    stretched.to_string(),
                    one.to_string(),
                    "bit flipped at byte {at}"
                );
                compared += 1;
                in_headers += usize::from(e_chunks.iter().any(|&c| (c..c + 13).contains(&at)));
            }
            assert!(
                compared > 1000 && in_headers > 500,
                "{compared} compared, {in_headers} in E headers"
            );
        });
    }

    /// An error the chunks' order finds (a communicator defined again, differently) is reported
    /// before one a later chunk of the same stretch has in itself.
    #[test]
    fn stretches_report_errors_in_file_order() {
        let comm = |members: Vec<u32>| Comm { id: 5, members };
        let (mut out, e_chunks) = ring_file(&|w, r| match r {
            0 => w.comm(&comm(vec![0, 1])).unwrap(),
            31 => w.comm(&comm(vec![1, 0])).unwrap(),
            _ => {}
        });
        assert!(parse("t.bin", &out).is_err_and(|e| e.message.contains("defined twice")));
        // Rank 31's chunk, after the second definition, made of an unknown kind.
        out[e_chunks[31]] = b'Q';
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let e = pool.install(|| parse("t.bin", &out)).unwrap_err();
        // The stretch that starts at rank 30's chunk holds the second C chunk (9 + 16 bytes).
        let starts = pool.install(|| {
            stretch_starts(&out[..out.len() - 16], out.len() - 16 - 9 - 4 - 40 * 12, 12)
        });
        assert!(starts.unwrap().iter().any(|s| s.0 == e_chunks[30]));
        assert_eq!(
            e.to_string(),
            format!(
                "t.bin: byte {}: communicator 5 is defined twice with different members",
                e_chunks[31] - 25
            )
        );
    }

    #[test]
    fn leb128_round_trip() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_uleb(&mut b, v);
            assert_eq!(uleb(&b).unwrap(), (&[][..], v));
        }
        for v in [0i64, -1, 1, -64, 64, i64::MIN, i64::MAX] {
            let mut b = Vec::new();
            put_sleb(&mut b, v);
            assert_eq!(sleb(&b).unwrap().1, v);
        }
        // zigzag as FORMAT.md defines it: 0→0, -1→1, 1→2
        let mut b = Vec::new();
        put_sleb(&mut b, -1);
        assert_eq!(b, [1]);
        assert!(uleb(&[0xff; 11]).is_err());
        assert!(uleb(&[0x80]).is_err());
    }

    /// `record_fast` accepts only what `record` accepts, and then stores the same event and
    /// stops at the same byte: random records of every shape, with values at the edges of
    /// their ranges, overlong LEB128 encodings, flipped bytes and truncations.
    #[test]
    fn fast_records_agree_with_nom() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let edges: [u64; 12] = [
            0,
            1,
            7,
            8,
            127,
            128,
            i32::MAX as u64,
            1 << 31,
            u32::MAX as u64,
            1 << 32,
            i64::MAX as u64,
            u64::MAX,
        ];
        // Any peer is a rank, communicators 0 and 1 hold rank 0 (most records pass the checks).
        let one = Comm {
            id: 1,
            members: vec![0],
        };
        let checks = Checks::new("t", 1 << 24, &[one]).unwrap();
        let created = RankRequests {
            done: vec![super::super::NOT_DONE],
        };
        let (mut fast, mut both) = (0, 0);
        for case in 0..700_000 {
            let mut b = Vec::new();
            let codes = [
                0u8, 2, 10, 14, 17, 20, 21, 22, 23, 24, 25, 26, 30, 31, 34, 40, 43, 45, 51, 60, 61,
                63, 99,
            ];
            b.push(codes[rnd() as usize % codes.len()]);
            let value = |rnd: &mut dyn FnMut() -> u64| match rnd() % 4 {
                0 => edges[rnd() as usize % edges.len()],
                1 => rnd() % 300,
                2 => (rnd() % 300).wrapping_neg(),
                _ => rnd() >> (rnd() % 64),
            };
            // Half the records of small values alone, so that records of many fields (a
            // Sendrecv's eight) pass the checks too.
            let small = rnd() % 2 == 0;
            for _ in 0..rnd() % 14 {
                let v = if small { rnd() % 4 } else { value(&mut rnd) };
                if rnd() % 2 == 0 {
                    put_uleb(&mut b, v);
                } else {
                    put_sleb(&mut b, v as i64);
                }
            }
            if rnd() % 8 == 0 {
                let at = 1 + rnd() as usize % b.len();
                b.insert(at.min(b.len()), 0x80); // an overlong (or broken) LEB128 value
            }
            if rnd() % 8 == 0 {
                let at = rnd() as usize % b.len();
                b[at] ^= 1 << (rnd() % 8);
            }
            if rnd() % 8 == 0 {
                b.truncate(rnd() as usize % (b.len() + 1));
            }
            let prev_return = value(&mut rnd);
            let (mut ea, mut eb) = (Events::single(), Events::single());
            // A request 0 created before, so that completions may take the short form.
            let creator = Event {
                id: 0,
                ..Event::new(Routine::Irecv, 0, 0)
            };
            ea.push(&creator);
            eb.push(&creator);
            let mut ca = Cursor {
                events: &mut ea,
                done: Vec::new(),
                counts: Vec::new(),
                prev_return,
                rank: 0,
                checks: &checks,
                known_comm: 0,
                requests: created.clone(),
                invalid: None,
            };
            let mut cb = Cursor {
                events: &mut eb,
                done: Vec::new(),
                counts: Vec::new(),
                prev_return,
                rank: 0,
                checks: &checks,
                known_comm: 0,
                requests: created.clone(),
                invalid: None,
            };
            let slow = record(&b, &mut cb).map(|(rest, ())| rest.len()).ok();
            if let Some(rest) = record_fast(&b, &mut ca) {
                fast += 1;
                assert_eq!(slow, Some(rest.len()), "case {case}: {b:?}");
                assert_eq!(ca.prev_return, cb.prev_return, "case {case}: {b:?}");
                assert_eq!(ea, eb, "case {case}: {b:?}");
            }
            both += slow.is_some() as usize;
        }
        // Most records nom accepts take the fast path (not a vacuous comparison).
        assert!(
            fast > both * 3 / 4 && fast > 10_000,
            "{fast} fast of {both}"
        );
    }
}
