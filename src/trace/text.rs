//! The text encoding (`tracer/FORMAT.md`, "Text encoding"): one item per line, parsed with nom.

use super::sites::{Named, Object, Sites, UNKNOWN};
use super::{
    Comm, Completion, Cores, EagerLimit, Event, Events, FLAG_ANY_SOURCE, FLAG_ANY_TAG,
    FLAG_BOUNCED, FLAG_CLEAN, FLAG_FOUND, FLAG_REDUCED, MAX_CPUS, PageOffsets, Push, RankMeta,
    RecvHalf, Routine, Shape, Trace,
};
use crate::error::TraceError;
use nom::branch::alt;
use nom::bytes::complete::{escaped_transform, is_not, tag, take_while1};
use nom::character::complete::{char, space0, space1};
use nom::combinator::{all_consuming, map, opt, rest, value};
use nom::multi::{many0, many1, separated_list1};
use nom::sequence::{delimited, pair, preceded, separated_pair, tuple};
use nom::{IResult, Parser};
use std::fmt::Write as _;
use std::str::FromStr;

type Res<'a, T> = IResult<&'a str, T>;

mod params;
use params::{bands_field, extras_fields, params};

/// The largest number of ranks a text trace may declare.
const MAX_RANKS: usize = super::binary::MAX_RANKS as usize;

fn token(input: &str) -> Res<'_, &str> {
    take_while1(|c: char| !c.is_whitespace())(input)
}

fn word(input: &str) -> Res<'_, &str> {
    take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_')(input)
}

fn number<T: FromStr>(input: &str) -> Res<'_, T> {
    let (rest, t) = take_while1(|c: char| c.is_ascii_digit() || "+-.eE".contains(c))(input)?;
    match t.parse() {
        Ok(v) => Ok((rest, v)),
        Err(_) => Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Digit,
        ))),
    }
}

fn quoted(input: &str) -> Res<'_, String> {
    alt((
        map(tag("\"\""), |_| String::new()),
        delimited(
            char('"'),
            escaped_transform(
                is_not("\\\""),
                '\\',
                alt((
                    value("\\", tag("\\")),
                    value("\"", tag("\"")),
                    value("\n", tag("n")),
                )),
            ),
            char('"'),
        ),
    ))
    .parse(input)
}

/// `0x` and hex digits.
fn hex(input: &str) -> Res<'_, u64> {
    let (rest, digits) = preceded(tag("0x"), take_while1(|c: char| c.is_ascii_hexdigit()))(input)?;
    match u64::from_str_radix(digits, 16) {
        Ok(v) => Ok((rest, v)),
        Err(_) => Err(nom::Err::Error(nom::error::Error::new(
            input,
            nom::error::ErrorKind::HexDigit,
        ))),
    }
}

fn list<T: FromStr>(input: &str) -> Res<'_, Vec<T>> {
    separated_list1(char(','), number::<T>).parse(input)
}

/// One `key=value` field of an event line.
fn field(input: &str) -> Res<'_, (&str, &str)> {
    preceded(space1, separated_pair(word, char('='), token)).parse(input)
}

/// A rank line's tracer figures: `own`, then `inside` and `requests OWN INSIDE` where given.
type Tracer = (f64, Option<(f64, Option<((f64, f64), Option<u32>)>)>);

/// A header or event line, before interpretation.
enum Line<'a> {
    Version(u32),
    Ranks(usize),
    Library(String),
    Eager(String, u64),
    Params(Vec<(&'a str, &'a str)>),
    /// Rank, host, clock offsets at Init and Finalize, and the cores' figures if any.
    Rank(usize, String, i64, i64, Option<Cores>, Option<Tracer>),
    Comm(u32, Vec<u32>),
    /// A `place` line's fields ([`super::placement::parse_line`]).
    Place(&'a str),
    /// Rank and the tracer's own time of each routine sampled during the run: `(name,
    /// samples, ns)`.
    Sampled(usize, Vec<(&'a str, u32, f64)>),
    /// Rank and one of its loaded objects.
    Object(usize, Object),
    /// Rank and its site table.
    Sites(usize, Vec<u64>),
    /// Rank and the name of the next site of its table.
    Named(usize, Named),
    /// Rank, routine, call and return times, and the `key=value` fields' text ([`fields`]).
    Event(usize, &'a str, u64, u64, &'a str),
}

fn line(input: &str) -> Res<'_, Line<'_>> {
    let kw = |k: &'static str| tuple((tag(k), space1));
    alt((
        map(preceded(kw("loggps-trace"), number), Line::Version),
        map(preceded(kw("ranks"), number), Line::Ranks),
        map(preceded(kw("library"), quoted), Line::Library),
        map(
            preceded(kw("eager_limit"), separated_pair(word, space1, number)),
            |(n, b)| Line::Eager(n.to_string(), b),
        ),
        map(preceded(tag("params"), many0(field)), Line::Params),
        map(
            tuple((
                preceded(kw("rank"), number),
                preceded(tuple((space1, kw("host"))), quoted),
                preceded(
                    tuple((space1, kw("offset"))),
                    separated_pair(number, space1, number),
                ),
                opt(preceded(
                    tuple((space1, kw("cores"))),
                    tuple((number, preceded(space1, number), preceded(space1, number))),
                )),
                opt(preceded(
                    tuple((space1, kw("own"))),
                    pair(
                        number,
                        opt(pair(
                            preceded(tuple((space1, kw("inside"))), number),
                            opt(pair(
                                preceded(
                                    tuple((space1, kw("requests"))),
                                    separated_pair(number, space1, number),
                                ),
                                opt(preceded(tuple((space1, kw("cpus"))), number)),
                            )),
                        )),
                    ),
                )),
            )),
            |(r, h, (a, b), c, own)| {
                let cores = c.map(|(partner, init_ns, final_ns)| Cores {
                    partner,
                    init_ns,
                    final_ns,
                });
                Line::Rank(r, h, a, b, cores, own)
            },
        ),
        map(
            tuple((
                preceded(kw("comm"), number),
                preceded(tuple((space1, kw("members"))), list),
            )),
            |(id, m)| Line::Comm(id, m),
        ),
        map(
            tuple((
                preceded(kw("object"), number),
                preceded(space1, separated_pair(hex, space1, hex)),
                preceded(space1, hex),
                preceded(space1, token),
                preceded(space1, quoted),
            )),
            |(r, (bias, lo), hi, id, path)| {
                let build_id = if id == "-" { "" } else { id }.to_string();
                Line::Object(
                    r,
                    Object {
                        bias,
                        lo,
                        hi,
                        build_id,
                        path,
                    },
                )
            },
        ),
        map(preceded(kw("place"), rest), Line::Place),
        map(
            pair(
                preceded(kw("sampled"), number),
                many1(preceded(
                    space1,
                    tuple((word, preceded(space1, number), preceded(space1, number))),
                )),
            ),
            |(r, each)| Line::Sampled(r, each),
        ),
        map(
            tuple((
                preceded(kw("named"), number),
                preceded(space1, number),
                preceded(space1, quoted),
                preceded(space1, quoted),
            )),
            |(r, line, function, file)| {
                let named = Named {
                    function,
                    file,
                    line,
                };
                Line::Named(r, named)
            },
        ),
        map(
            tuple((
                preceded(kw("sites"), number),
                preceded(space1, separated_list1(char(','), hex)),
            )),
            |(r, a)| Line::Sites(r, a),
        ),
        map(
            tuple((
                number,
                preceded(space1, word),
                preceded(space1, number),
                preceded(space1, number),
                rest,
            )),
            |(r, name, a, b, f)| Line::Event(r, name, a, b, f),
        ),
    ))
    .parse(input)
}

/// The `key=value` fields of an event line's `text`, into `out` (emptied first; kept from line
/// to line, where a vector a line would be an allocation an event). None where `text` is not
/// fields.
fn fields<'a>(mut text: &'a str, out: &mut Vec<(&'a str, &'a str)>) -> Option<()> {
    out.clear();
    while !text.is_empty() {
        let (after, f) = field(text).ok()?;
        out.push(f);
        text = after;
    }
    Some(())
}

fn parse_flags(s: &str) -> Option<u8> {
    s.split('|').try_fold(0u8, |acc, f| match f {
        "any_source" => Some(acc | FLAG_ANY_SOURCE),
        "any_tag" => Some(acc | FLAG_ANY_TAG),
        "found" => Some(acc | FLAG_FOUND),
        "bounced" => Some(acc | FLAG_BOUNCED),
        "clean" => Some(acc | FLAG_CLEAN),
        "reduced" => Some(acc | FLAG_REDUCED),
        "0" => Some(acc),
        _ => None,
    })
}

/// A `done=` field's completions, into `done` (emptied first).
fn parse_done(s: &str, done: &mut Vec<Completion>) -> Option<()> {
    done.clear();
    if s.is_empty() {
        return Some(());
    }
    for c in s.split(',') {
        let mut it = c.split(':');
        done.push(Completion {
            req: it.next()?.parse().ok()?,
            source: it.next()?.parse().ok()?,
            tag: it.next()?.parse().ok()?,
        });
        it.next().is_none().then_some(())?;
    }
    Some(())
}

/// The keys a routine's shape reads; anything else on an event line is an error.
fn keys(routine: Routine) -> &'static [&'static str] {
    match routine.shape() {
        Shape::None => &[],
        Shape::Send => &["bytes", "peer", "tag", "comm", "flags", "send_page"],
        Shape::Isend => &["bytes", "peer", "tag", "comm", "req", "flags", "send_page"],
        Shape::Recv => &["bytes", "peer", "tag", "comm", "flags", "recv_page"],
        Shape::Irecv => &["bytes", "peer", "tag", "comm", "flags", "req", "recv_page"],
        Shape::Sendrecv => &[
            "bytes",
            "peer",
            "tag",
            "recv_bytes",
            "source",
            "recv_tag",
            "comm",
            "flags",
            "recv_page",
            "send_page",
        ],
        Shape::Complete => &["done"],
        Shape::Cancel => &["req"],
        Shape::Coll if routine.nonblocking() => &[
            "comm",
            "root",
            "bytes",
            "recv_bytes",
            "counts",
            "req",
            "flags",
        ],
        Shape::Coll => &["comm", "root", "bytes", "recv_bytes", "counts", "flags"],
        Shape::CommOp => &["comm", "newcomm"],
    }
}

/// `data` as text, or an error naming the line where it stops being UTF-8.
pub(crate) fn utf8<'a>(name: &str, data: &'a [u8]) -> Result<&'a str, TraceError> {
    if let Some(text) = crate::memory::utf8_in_parallel(data) {
        return Ok(text);
    }
    std::str::from_utf8(data).map_err(|e| {
        let line = data[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        TraceError::line(name, line, "expected UTF-8 text".into())
    })
}

/// Parses a whole text trace (not yet validated across ranks: [`super::Trace::validate`]).
pub fn parse(name: &str, data: &[u8]) -> Result<Trace, TraceError> {
    let text = utf8(name, data)?;
    let mut built: Option<Built> = None;
    let mut version_seen = false;
    // An event line's fields, kept from line to line.
    let mut fields_of = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let lineno = n + 1;
        let content = raw
            .split_once('#')
            .map_or(raw, |(a, _)| if a.contains('"') { raw } else { a })
            .trim();
        if content.is_empty() {
            continue;
        }
        let err = |what: String| TraceError::line(name, lineno, what);
        let parsed = all_consuming(delimited(space0, line, space0))
            .parse(content)
            .map(|(_, l)| l);
        let unknown = || {
            err(format!(
                "expected a header line (loggps-trace, ranks, library, eager_limit, params, rank, comm, object, sites) or an event `RANK MPI_Name T_CALL T_RETURN key=value…`, found `{content}`"
            ))
        };
        let l = parsed.map_err(|_| unknown())?;
        if let Line::Event(.., f) = l
            && fields(f, &mut fields_of).is_none()
        {
            return Err(unknown());
        }
        if !version_seen {
            match l {
                Line::Version(1) => {
                    version_seen = true;
                    continue;
                }
                Line::Version(v) => {
                    return Err(err(format!(
                        "expected version 1 (this build reads only that), found {v}"
                    )));
                }
                _ => return Err(err("expected the first line `loggps-trace 1`".into())),
            }
        }
        match (l, built.as_mut()) {
            (Line::Ranks(_), Some(_)) => {
                return Err(err("expected one `ranks` line, found a second".into()));
            }
            // Every rank costs memory before its first event is read: bound them by the file's size.
            (Line::Ranks(p), None) if p == 0 || p > MAX_RANKS.min(data.len()) => {
                return Err(err(format!(
                    "expected a number of ranks from 1 to {} (at most one per byte of the file), found {p}",
                    MAX_RANKS.min(data.len())
                )));
            }
            (Line::Ranks(p), None) => built = Some(Built::new(p)),
            (_, None) => return Err(err("expected `ranks P` before this line".into())),
            (Line::Version(_), Some(_)) => {
                return Err(err(
                    "expected one `loggps-trace` line, found a second".into()
                ));
            }
            (Line::Event(r, routine, t_call, t_return, _), Some(b)) => {
                b.event(r, (routine, t_call, t_return), &mut fields_of, &err)?
            }
            (l, Some(b)) => b.header(l).map_err(err)?,
        }
    }
    if !version_seen {
        return Err(TraceError::line(
            name,
            1,
            "expected the first line `loggps-trace 1`".into(),
        ));
    }
    built
        .ok_or_else(|| TraceError::at(name, "expected a `ranks P` line, found none".into()))?
        .finish(name)
}

/// What a text trace's lines after `ranks P` have built.
struct Built {
    trace: Trace,
    /// Events arrive in any rank order: one buffer per rank, joined at the end.
    ranks: Vec<Events>,
    /// An event line's completions, kept from line to line.
    done: Vec<Completion>,
    /// The call sites: each rank's objects and site table, once a line names one.
    sites: Option<Sites>,
    /// Each rank's events' `site=`.
    site_of: Vec<Vec<u32>>,
}

impl Built {
    fn new(p: usize) -> Built {
        Built {
            trace: Trace::new(p),
            ranks: (0..p).map(|_| Events::single()).collect(),
            done: Vec::new(),
            sites: None,
            site_of: vec![Vec::new(); p],
        }
    }

    /// A header line after `ranks`; the error's message.
    fn header(&mut self, l: Line<'_>) -> Result<(), String> {
        let (t, p) = (&mut self.trace, self.ranks.len());
        let rank = |r: usize| match r < p {
            true => Ok(r),
            false => Err(format!("expected a rank below {p}, found {r}")),
        };
        match l {
            Line::Library(s) => t.meta.library = s,
            Line::Eager(name, bytes) => t.meta.eager_limit = Some(EagerLimit { name, bytes }),
            // Several: sets combined per link class (the model's §12), the first the main one.
            Line::Params(fields) => {
                let p = params(&fields)?;
                match t.meta.params {
                    None => t.meta.params = Some(p),
                    Some(_) => t.meta.other_params.push(p),
                }
            }
            Line::Rank(r, hostname, a, b, cores, tracer) => {
                let r = rank(r)?;
                if let Some(why) = cores.and_then(|c| c.invalid(r as u32, p)) {
                    return Err(why);
                }
                let own_ns = tracer.map(|(o, _)| o);
                let in_call_ns = tracer.and_then(|(_, i)| i).map(|(i, _)| i);
                let requests = tracer.and_then(|(_, i)| i?.1);
                let own_req_ns = requests.map(|((o, i), _)| [o, i]);
                let cpus = requests.and_then(|(_, c)| c);
                if cpus.is_some_and(|c| !(1..=MAX_CPUS).contains(&c)) {
                    return Err(format!(
                        "expected the node's CPUs from 1 to {MAX_CPUS}, found {}",
                        cpus.unwrap_or(0)
                    ));
                }
                let figures = [(super::OWN, own_ns), (super::IN_CALL, in_call_ns)].into_iter();
                let req = own_req_ns.map(|[o, i]| [(super::OWN, o), (super::IN_CALL, i)]);
                let why = (figures.filter_map(|(w, t)| Some((w, t?))))
                    .chain(req.into_iter().flatten())
                    .find_map(|(what, t)| super::own_invalid(what, t));
                if let Some(why) = why {
                    return Err(why);
                }
                t.meta.ranks.set(
                    r,
                    RankMeta {
                        hostname,
                        clock_offset_init_ns: a,
                        clock_offset_final_ns: b,
                        cores,
                        placement: t.meta.ranks.get(r).placement.clone(),
                        own_ns,
                        in_call_ns,
                        own_req_ns,
                        cpus,
                        own_sampled: t.meta.ranks.get(r).own_sampled.clone(),
                    },
                );
            }
            Line::Sampled(r, each) => {
                let r = rank(r)?;
                let m = t.meta.ranks.get(r);
                if m.cpus.is_none() {
                    return Err(format!(
                        "expected rank {r}'s `rank` line with `cpus` before its `sampled` line"
                    ));
                }
                let mut got = Vec::with_capacity(each.len());
                for (name, n, ns) in each {
                    let routine = Routine::from_mpi_name(name)
                        .ok_or_else(|| format!("expected an MPI routine's name, found `{name}`"))?;
                    got.push((routine, n, ns));
                }
                let mut m = m.clone();
                m.own_sampled = super::OwnSampled::new(got)?;
                t.meta.ranks.set(r, m);
            }
            Line::Place(fields) => {
                let (r, place) = super::placement::parse_line(fields)?;
                let r = rank(r)?;
                if let Some(why) = place.invalid(r as u32, p) {
                    return Err(why);
                }
                let mut m = t.meta.ranks.get(r).clone();
                m.placement = Some(place);
                t.meta.ranks.set(r, m);
            }
            Line::Comm(0, _) => {
                return Err("expected a communicator id ≥ 1 (0 is MPI_COMM_WORLD)".into());
            }
            Line::Comm(id, _) if t.comms.iter().any(|c| c.id == id) => {
                return Err(format!("communicator {id} is defined twice"));
            }
            Line::Comm(id, members) => t.comms.push(Comm { id, members }),
            Line::Object(r, o) => {
                let r = rank(r)?;
                self.sites
                    .get_or_insert_with(|| Sites::unknown(p, 0))
                    .objects[r]
                    .push(o)
            }
            Line::Named(r, n) => {
                let r = rank(r)?;
                self.sites.get_or_insert_with(|| Sites::unknown(p, 0)).named[r].push(n)
            }
            Line::Sites(r, a) => {
                let r = rank(r)?;
                let sites = self.sites.get_or_insert_with(|| Sites::unknown(p, 0));
                let table = &mut sites.addresses[r];
                if !table.is_empty() {
                    return Err(format!(
                        "expected one `sites` line for rank {r}, found a second"
                    ));
                }
                *table = a;
            }
            Line::Version(_) | Line::Ranks(_) | Line::Event(..) => {
                unreachable!("read by parse")
            }
        }
        Ok(())
    }

    /// An event line of rank `r`: `fields` its `key=value` fields (`site=` taken out).
    fn event<'a>(
        &mut self,
        r: usize,
        (routine_name, t_call, t_return): (&str, u64, u64),
        fields_of: &mut Vec<(&'a str, &'a str)>,
        err: &dyn Fn(String) -> TraceError,
    ) -> Result<(), TraceError> {
        let p = self.ranks.len();
        if r >= p {
            return Err(err(format!("expected a rank below {p}, found {r}")));
        }
        let index = self.ranks[r].len();
        let Some(routine) = Routine::from_mpi_name(routine_name) else {
            return Err(err(format!(
                "expected an MPI routine name such as MPI_Send, found `{routine_name}`"
            ))
            .in_event(r, index));
        };
        let site = match fields_of.iter().position(|(k, _)| *k == "site") {
            Some(k) => {
                let v = fields_of.remove(k).1;
                let i = v.parse().ok().filter(|&i| i != UNKNOWN).ok_or_else(|| {
                    err(format!("expected a site index for `site`, found `{v}`")).in_event(r, index)
                })?;
                self.sites.get_or_insert_with(|| Sites::unknown(p, 0));
                i
            }
            None => UNKNOWN,
        };
        self.site_of[r].push(site);
        let line = (routine, t_call, t_return);
        event(&mut self.ranks[r], line, fields_of, &mut self.done).map_err(|m| TraceError {
            routine: Some(routine.mpi_name()),
            ..err(m).in_event(r, index)
        })
    }

    /// The trace, its sites' indices checked against their tables.
    fn finish(self, name: &str) -> Result<Trace, TraceError> {
        let mut trace = self.trace;
        trace.events = Events::concat(self.ranks);
        if let Some(mut s) = self.sites {
            for (r, of) in self.site_of.iter().enumerate() {
                let table = s.addresses[r].len();
                if let Some(i) = of.iter().position(|&i| i != UNKNOWN && i as usize >= table) {
                    return Err(TraceError::at(
                        name,
                        format!(
                            "expected site indices below {table}, the length of rank {r}'s `sites` line, found site={}",
                            of[i]
                        ),
                    )
                    .in_event(r, i));
                }
            }
            if let Some((r, n, table)) = s.misnamed() {
                return Err(TraceError::at(
                    name,
                    format!(
                        "expected a `named` line for each of the {table} sites of rank {r}'s `sites` line, found {n}"
                    ),
                ));
            }
            s.of_event = self.site_of.concat();
            trace.sites = Some(s);
        }
        Ok(trace)
    }
}

/// Pushes the event of `(routine, t_call, t_return)` and `fields` onto `ev`; `done`: room for a
/// completion call's requests.
fn event(
    ev: &mut super::Events,
    (routine, t_call, t_return): (Routine, u64, u64),
    fields: &[(&str, &str)],
    done: &mut Vec<Completion>,
) -> Result<(), String> {
    let allowed = keys(routine);
    for (i, (k, _)) in fields.iter().enumerate() {
        if !allowed.contains(k) {
            return Err(format!(
                "expected fields among [{}] for {}, found `{k}`",
                allowed.join(" "),
                routine.mpi_name()
            ));
        }
        if fields[..i].iter().any(|(k2, _)| k2 == k) {
            return Err(format!("field `{k}` given twice"));
        }
    }
    let raw = |k: &str| fields.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    fn num<T: FromStr>(k: &str, v: Option<&str>, default: Option<T>) -> Result<T, String> {
        match v {
            Some(v) => v
                .parse()
                .map_err(|_| format!("expected a number in range for `{k}`, found `{v}`")),
            None => default.ok_or_else(|| format!("expected field `{k}=…`")),
        }
    }
    let mut e = Event::new(routine, t_call, t_return);
    let shape = routine.shape();
    if allowed.contains(&"bytes") {
        e.bytes = num("bytes", raw("bytes"), Some(0))?;
    }
    if allowed.contains(&"peer") {
        e.peer = num("peer", raw("peer"), None)?;
    }
    if allowed.contains(&"root") {
        e.peer = num("root", raw("root"), Some(-1))?;
    }
    if allowed.contains(&"tag") {
        e.tag = num("tag", raw("tag"), Some(0))?;
    }
    if allowed.contains(&"comm") {
        e.comm = num("comm", raw("comm"), Some(0))?;
    }
    if allowed.contains(&"req") {
        e.id = num::<u32>("req", raw("req"), None)? as i64;
    }
    if allowed.contains(&"newcomm") {
        e.id = num("newcomm", raw("newcomm"), Some(-1))?;
        if !(-1..u32::MAX as i64).contains(&e.id) {
            return Err(format!(
                "expected a communicator id below 4294967295 or -1 for `newcomm`, found {}",
                e.id
            ));
        }
    }
    if allowed.contains(&"flags") {
        // A send's flag (a collective's too), a receive's, or a Sendrecv's of either half but
        // `found`.
        let (names, mask) = match shape {
            Shape::Send | Shape::Isend => ("clean", FLAG_CLEAN),
            Shape::Coll => (
                "clean|bounced|reduced",
                FLAG_CLEAN | FLAG_BOUNCED | FLAG_REDUCED,
            ),
            Shape::Recv | Shape::Irecv => ("any_source|any_tag|found|bounced", 15),
            _ => (
                "any_source|any_tag|bounced|clean",
                FLAG_ANY_SOURCE | FLAG_ANY_TAG | FLAG_BOUNCED | FLAG_CLEAN,
            ),
        };
        e.flags = match raw("flags").map(|f| (f, parse_flags(f))) {
            Some((_, Some(flags))) if flags & !mask == 0 => flags,
            Some((f, _)) => return Err(format!("expected flags among {names}, found `{f}`")),
            None => 0,
        };
    }
    // Where its buffers start in their pages (FORMAT.md: the flags' bits 5 and 6).
    let page = |k: &str| -> Result<Option<u16>, String> {
        match raw(k).map(|v| (v, v.parse::<u16>())) {
            None => Ok(None),
            Some((_, Ok(o))) if o < 4096 => Ok(Some(o)),
            Some((v, _)) => Err(format!(
                "expected an offset in a page, 0–4095, for `{k}`, found `{v}`"
            )),
        }
    };
    e.pages = PageOffsets {
        recv: page("recv_page")?,
        send: page("send_page")?,
    };
    match shape {
        Shape::Sendrecv => {
            let half = RecvHalf {
                bytes: num("recv_bytes", raw("recv_bytes"), Some(0))?,
                source: num("source", raw("source"), None)?,
                tag: num("recv_tag", raw("recv_tag"), Some(0))?,
            };
            ev.push_sendrecv(&e, half);
        }
        Shape::Complete => {
            match raw("done") {
                Some(d) => parse_done(d, done)
                    .ok_or_else(|| format!("expected done=REQ:SOURCE:TAG,…, found `{d}`"))?,
                None => done.clear(),
            }
            ev.push_complete(&e, done);
        }
        Shape::Coll => {
            let counts = match raw("counts") {
                Some(c) => {
                    all_consuming(list::<u64>)
                        .parse(c)
                        .map_err(|_| format!("expected counts=N,N,…, found `{c}`"))?
                        .1
                }
                None => Vec::new(),
            };
            ev.push_coll(&e, num("recv_bytes", raw("recv_bytes"), Some(0))?, &counts);
        }
        _ => ev.push(&e),
    }
    Ok(())
}

fn quote(s: &str) -> String {
    format!(
        "\"{}\"",
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    )
}

/// Writes `items` to `out`, `sep` between them, each as `each` writes it: no string or vector
/// an item (which would be several allocations a completion call).
fn write_joined<T>(
    out: &mut String,
    items: impl Iterator<Item = T>,
    sep: &str,
    mut each: impl FnMut(&mut String, T),
) {
    for (k, x) in items.enumerate() {
        if k > 0 {
            out.push_str(sep);
        }
        each(out, x);
    }
}

/// Writes event `i` of rank `r` as one line (no newline).
pub fn event_line(out: &mut String, r: usize, ev: super::Rank<'_>, i: usize) {
    let e = ev.event(i);
    let _ = write!(
        out,
        "{r} {} {} {}",
        e.routine.mpi_name(),
        e.t_call,
        e.t_return
    );
    let shape = e.routine.shape();
    for &k in keys(e.routine) {
        let _ = match k {
            "bytes" => write!(out, " bytes={}", e.bytes),
            "peer" => write!(out, " peer={}", e.peer),
            "root" => write!(out, " root={}", e.peer),
            "tag" => write!(out, " tag={}", e.tag),
            "comm" => write!(out, " comm={}", e.comm),
            "req" => write!(out, " req={}", e.id),
            "newcomm" => write!(out, " newcomm={}", e.id),
            "flags" if e.flags != 0 => {
                out.push_str(" flags=");
                let names = [
                    (FLAG_ANY_SOURCE, "any_source"),
                    (FLAG_ANY_TAG, "any_tag"),
                    (FLAG_FOUND, "found"),
                    (FLAG_BOUNCED, "bounced"),
                    (FLAG_CLEAN, "clean"),
                    (FLAG_REDUCED, "reduced"),
                ];
                let set = names.into_iter().filter(|(b, _)| e.flags & b != 0);
                write_joined(out, set, "|", |out, (_, n)| out.push_str(n));
                Ok(())
            }
            "recv_bytes" if shape == Shape::Sendrecv => {
                write!(out, " recv_bytes={}", ev.recv_half(i).expect("half").bytes)
            }
            "source" => write!(out, " source={}", ev.recv_half(i).expect("half").source),
            "recv_tag" => write!(out, " recv_tag={}", ev.recv_half(i).expect("half").tag),
            "recv_bytes" => write!(out, " recv_bytes={}", ev.coll_recv(i).0),
            "counts" if !ev.coll_recv(i).1.is_empty() => {
                out.push_str(" counts=");
                let counts = ev.coll_recv(i).1;
                write_joined(out, counts.iter(), ",", |out, c| {
                    let _ = write!(out, "{c}");
                });
                Ok(())
            }
            "recv_page" if let Some(o) = e.pages.recv => write!(out, " recv_page={o}"),
            "send_page" if let Some(o) = e.pages.send => write!(out, " send_page={o}"),
            "done" if ev.completions(i).len() > 0 => {
                out.push_str(" done=");
                write_joined(out, ev.completions(i), ",", |out, c| {
                    let _ = write!(out, "{}:{}:{}", c.req, c.source, c.tag);
                });
                Ok(())
            }
            _ => Ok(()),
        };
    }
}

/// Writes a whole trace as text.
pub fn write(trace: &Trace, mut out: impl std::io::Write) -> std::io::Result<()> {
    let mut s = String::new();
    let _ = writeln!(s, "loggps-trace 1\nranks {}", trace.nranks());
    let m = &trace.meta;
    if !m.library.is_empty() {
        let _ = writeln!(s, "library {}", quote(&m.library));
    }
    if let Some(e) = &m.eager_limit {
        let _ = writeln!(s, "eager_limit {} {}", e.name, e.bytes);
    }
    for p in m.params.iter().chain(&m.other_params) {
        let _ = match &p.bands {
            Some(b) => writeln!(
                s,
                "params bands={} S={}{}",
                bands_field(b),
                p.S,
                extras_fields(p)
            ),
            None => writeln!(
                s,
                "params L={} o={} Os={} Or={} Gs={} Gl={} s={} S={}{}",
                p.L,
                p.o,
                p.Os,
                p.Or,
                p.Gs,
                p.Gl,
                p.s,
                p.S,
                extras_fields(p)
            ),
        };
    }
    for (r, rm) in m.ranks.recorded() {
        let _ = write!(
            s,
            "rank {r} host {} offset {} {}",
            quote(&rm.hostname),
            rm.clock_offset_init_ns,
            rm.clock_offset_final_ns
        );
        if let Some(c) = &rm.cores {
            let _ = write!(s, " cores {} {} {}", c.partner, c.init_ns, c.final_ns);
        }
        if let Some(own) = rm.own_ns {
            let _ = write!(s, " own {own}");
            if let Some(inside) = rm.in_call_ns {
                let _ = write!(s, " inside {inside}");
                if let Some([o, i]) = rm.own_req_ns {
                    let _ = write!(s, " requests {o} {i}");
                    if let Some(c) = rm.cpus {
                        let _ = write!(s, " cpus {c}");
                    }
                }
            }
        }
        s.push('\n');
        if !rm.own_sampled.is_empty() {
            let _ = write!(s, "sampled {r}");
            for &(routine, n, ns) in rm.own_sampled.each() {
                let _ = write!(s, " {} {n} {ns}", routine.mpi_name());
            }
            s.push('\n');
        }
        if let Some(p) = &rm.placement {
            s.push_str(&super::placement::line(r, p));
            s.push('\n');
        }
    }
    for c in &trace.comms {
        let members: Vec<String> = c.members.iter().map(|m| m.to_string()).collect();
        let _ = writeln!(s, "comm {} members {}", c.id, members.join(","));
    }
    let sites = trace.sites.as_ref();
    for (r, objects) in sites.iter().flat_map(|x| x.objects.iter().enumerate()) {
        for o in objects {
            let id = if o.build_id.is_empty() {
                "-"
            } else {
                &o.build_id
            };
            let (path, bias, lo, hi) = (quote(&o.path), o.bias, o.lo, o.hi);
            let _ = writeln!(s, "object {r} {bias:#x} {lo:#x} {hi:#x} {id} {path}");
        }
    }
    for (r, named) in sites.iter().flat_map(|x| x.named.iter().enumerate()) {
        for n in named {
            let (function, file) = (quote(&n.function), quote(&n.file));
            let _ = writeln!(s, "named {r} {} {function} {file}", n.line);
        }
    }
    for (r, table) in sites.iter().flat_map(|x| x.addresses.iter().enumerate()) {
        if !table.is_empty() {
            let _ = write!(s, "sites {r} ");
            write_joined(&mut s, table.iter(), ",", |out, a| {
                let _ = write!(out, "{a:#x}");
            });
            s.push('\n');
        }
    }
    out.write_all(s.as_bytes())?;
    for (r, ev) in trace.events.ranks().enumerate() {
        s.clear();
        let at = trace.events.offsets()[r];
        for i in 0..ev.len() {
            event_line(&mut s, r, ev, i);
            if let Some(&site) = sites.and_then(|x| x.of_event.get(at + i))
                && site != UNKNOWN
            {
                let _ = write!(s, " site={site}");
            }
            s.push('\n');
            if s.len() > 1 << 20 {
                out.write_all(s.as_bytes())?;
                s.clear();
            }
        }
        out.write_all(s.as_bytes())?;
    }
    Ok(())
}
