//! The event records of the binary encoding: one nom parser per record shape, and a
//! hand-written fast path for the common records that falls back to it.

use super::*;

/// The flags a Sendrecv may carry: its receive half's but `FLAG_FOUND`, its send half's.
const SENDRECV_FLAGS: u64 = (crate::trace::FLAG_ANY_SOURCE
    | crate::trace::FLAG_ANY_TAG
    | crate::trace::FLAG_BOUNCED
    | crate::trace::FLAG_CLEAN) as u64;

/// The flags a send may carry (after its fields, where its code has [`CODE_FLAGS`]).
const SEND_FLAGS: u64 = crate::trace::FLAG_CLEAN as u64;

/// The flags a collective may carry (likewise): its send buffer's `clean`, its receive
/// buffer's `bounced` and `reduced`.
const COLL_FLAGS: u64 =
    (crate::trace::FLAG_CLEAN | crate::trace::FLAG_BOUNCED | crate::trace::FLAG_REDUCED) as u64;

/// The flags' page bits (FORMAT.md): bit 5 the receive buffer's offset in its page follows in
/// bits 8–19, bit 6 the send buffer's in bits 20–31.
const RECV_PAGE: u64 = 32;
const SEND_PAGE: u64 = 64;

/// A record's `flags` as its event keeps them and its [`PageOffsets`], if only the bits of `allowed`
/// and the offsets of the page bits among them are set.
#[inline]
fn flags_pages(f: u64, allowed: u64) -> Option<(u8, PageOffsets)> {
    let low = f & 0xff;
    let (recv, send) = ((f >> 8) & 0xfff, f >> 20);
    let offsets_flagged =
        (recv == 0 || low & RECV_PAGE != 0) && (send == 0 || low & SEND_PAGE != 0);
    if low & !allowed != 0 || send > 0xfff || !offsets_flagged {
        return None;
    }
    let pages = PageOffsets {
        recv: (low & RECV_PAGE != 0).then_some(recv as u16),
        send: (low & SEND_PAGE != 0).then_some(send as u16),
    };
    Some(((low & !(RECV_PAGE | SEND_PAGE)) as u8, pages))
}

/// The flags a receive may carry: any source, any tag, found, bounced, its buffer's page.
const RECV_FLAGS: u64 = 15 | RECV_PAGE;

/// A send- or collective-shaped record's code with this bit set carries flags after its fields.
const CODE_FLAGS: u8 = 0x80;

/// Whether a record of `shape` may carry flags after its fields ([`CODE_FLAGS`]).
fn flaggable(shape: Shape) -> bool {
    matches!(shape, Shape::Send | Shape::Isend | Shape::Coll)
}

/// The state carried from record to record of one rank.
pub(super) struct Cursor<'t, P> {
    pub(super) events: &'t mut P,
    /// A `complete` record's requests (a buffer reused from record to record).
    pub(super) done: Vec<Completion>,
    /// A collective record's per-rank counts (likewise).
    pub(super) counts: Vec<u64>,
    pub(super) prev_return: u64,
    pub(super) rank: usize,
    pub(super) checks: &'t Checks,
    /// A communicator the rank was found a member of before.
    pub(super) known_comm: u32,
    /// The rank's requests so far.
    pub(super) requests: RankRequests,
    /// Why the record [`record`] failed on is wrong, where that is not its form but what
    /// [`Checks`] sees: its routine and the message.
    pub(super) invalid: Option<(Routine, String)>,
}

impl<P> Cursor<'_, P> {
    /// Whether `e`, the rank's event `i`, passes [`Checks`] and its [`RankRequests`] (which
    /// then record it); `source`: a Sendrecv's receive source. A completion call's requests
    /// are in `done`.
    #[inline(always)]
    pub(super) fn valid(&mut self, i: usize, e: &Event, source: i32) -> bool {
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

pub(super) fn time<'a>(
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

/// Parses one record with nom, pushes its event and checks it: the slow path, with error
/// messages, behind [`record_fast`]'s.
pub(super) fn record<'a, P: Push>(input: &'a [u8], cur: &mut Cursor<'_, P>) -> Res<'a, ()> {
    let (rest, code) = expect("a routine code", le_u8)(input)?;
    let flagged = code & CODE_FLAGS != 0
        && Routine::from_code(code & !CODE_FLAGS).is_some_and(|r| flaggable(r.shape()));
    let code = match flagged {
        true => code & !CODE_FLAGS,
        false => code,
    };
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
            let (rest, ()) = point_to_point(rest, &mut e, flagged)?;
            cur.events.push(&e);
            rest
        }
        Shape::Sendrecv => {
            let (rest, recv) = sendrecv(rest, &mut e)?;
            source = recv.source;
            cur.events.push_sendrecv(&e, recv);
            rest
        }
        Shape::Complete => {
            let (rest, ()) = completions(rest, &mut cur.done)?;
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
            let (rest, recv_bytes) = collective(rest, &mut e, &mut cur.counts, flagged)?;
            cur.events.push_coll(&e, recv_bytes, &cur.counts);
            rest
        }
        Shape::CommOp => {
            let (rest, ()) = comm_op(rest, &mut e)?;
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

/// A send's or receive's fields after the times, into `e`: bytes, peer, tag, communicator,
/// then a receive's flags, a nonblocking call's request id and a `flagged` send's flags.
#[inline]
fn point_to_point<'a>(rest: &'a [u8], e: &mut Event, flagged: bool) -> Res<'a, ()> {
    let (mut rest, (bytes, peer, tag, comm)) = tuple((
        expect("the byte count", uleb),
        i32_field("the peer"),
        i32_field("the tag"),
        u32_field("the communicator"),
    ))(rest)?;
    (e.bytes, e.peer, e.tag, e.comm) = (bytes, peer, tag, comm);
    if matches!(e.routine.shape(), Shape::Recv | Shape::Irecv) {
        let (r, flags) = expect("the receive flags", uleb)(rest)?;
        let Some((flags, pages)) = flags_pages(flags, RECV_FLAGS) else {
            return fail(
                rest,
                format!("receive flags of bits 1, 2, 4, 8 and 32 (its page), found {flags}"),
            );
        };
        (e.flags, e.pages) = (flags, pages);
        rest = r;
    }
    if matches!(e.routine.shape(), Shape::Isend | Shape::Irecv) {
        let (r, req) = u32_field("the request id")(rest)?;
        e.id = req as i64;
        rest = r;
    }
    if flagged {
        (rest, (e.flags, e.pages)) = send_flags(rest)?;
    }
    Ok((rest, ()))
}

/// A flagged send's flags: bit 16 (`clean`), bit 64 (its page) or both.
fn send_flags(rest: &[u8]) -> Res<'_, (u8, PageOffsets)> {
    let (r, flags) = expect("the send flags", uleb)(rest)?;
    match flags_pages(flags, SEND_FLAGS | SEND_PAGE) {
        Some(f) if flags != 0 => Ok((r, f)),
        _ => fail(
            rest,
            format!("send flags of bits 16 (clean) and 64 (its page), found {flags}"),
        ),
    }
}

/// A flagged collective's flags: bits 16 (`clean`), 8 (`bounced`) and 64 (`reduced`), one or
/// more.
fn coll_flags(rest: &[u8]) -> Res<'_, u8> {
    let (r, flags) = expect("the collective's flags", uleb)(rest)?;
    if flags == 0 || flags & !COLL_FLAGS != 0 {
        return fail(
            rest,
            format!(
                "a collective's flags of bits 8 (bounced), 16 (clean) and 64 (reduced), \
                 found {flags}"
            ),
        );
    }
    Ok((r, flags as u8))
}

/// A Sendrecv's fields: its send half into `e`, its receive half returned.
#[inline]
fn sendrecv<'a>(rest: &'a [u8], e: &mut Event) -> Res<'a, RecvHalf> {
    let (rest, (bytes, peer, tag, recv_bytes, recv_source, recv_tag, comm, flags)) = tuple((
        expect("the bytes sent", uleb),
        i32_field("the destination"),
        i32_field("the send tag"),
        expect("the bytes received", uleb),
        i32_field("the source"),
        i32_field("the receive tag"),
        u32_field("the communicator"),
        expect("the receive flags", uleb),
    ))(rest)?;
    let Some((flags, pages)) = flags_pages(flags, SENDRECV_FLAGS | RECV_PAGE | SEND_PAGE) else {
        return fail(
            rest,
            format!("flags of bits 1, 2, 8, 16, 32 and 64 (its pages), found {flags}"),
        );
    };
    (e.bytes, e.peer, e.tag, e.comm) = (bytes, peer, tag, comm);
    (e.flags, e.pages) = (flags, pages);
    let recv = RecvHalf {
        bytes: recv_bytes,
        source: recv_source,
        tag: recv_tag,
    };
    Ok((rest, recv))
}

/// A completion call's requests with their statuses, into `done` (cleared first: the
/// cursor's buffer, reused from record to record).
#[inline]
fn completions<'a>(rest: &'a [u8], done: &mut Vec<Completion>) -> Res<'a, ()> {
    let (mut rest, n) = count("the number of completed requests", 3)(rest)?;
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
    Ok((rest, ()))
}

/// A collective's fields into `e`, its per-rank counts into `counts` (the cursor's reused
/// buffer); returns the bytes received.
#[inline]
fn collective<'a>(
    rest: &'a [u8],
    e: &mut Event,
    counts: &mut Vec<u64>,
    flagged: bool,
) -> Res<'a, u64> {
    let (rest, (comm, root, bytes, recv_bytes)) = tuple((
        u32_field("the communicator"),
        i32_field("the root"),
        expect("the bytes sent", uleb),
        expect("the bytes received", uleb),
    ))(rest)?;
    let (mut rest, n) = count("the number of per-rank counts", 1)(rest)?;
    counts.clear();
    for _ in 0..n {
        let (r, c) = expect("a per-rank byte count", uleb)(rest)?;
        counts.push(c);
        rest = r;
    }
    if e.routine.nonblocking() {
        let (r, req) = u32_field("the request id")(rest)?;
        (e.id, rest) = (req as i64, r);
    }
    if flagged {
        (rest, e.flags) = coll_flags(rest)?;
    }
    (e.comm, e.peer, e.bytes) = (comm, root, bytes);
    Ok((rest, recv_bytes))
}

/// A communicator operation's fields into `e`: the communicator and the new one's id (-1
/// for none).
#[inline]
fn comm_op<'a>(rest: &'a [u8], e: &mut Event) -> Res<'a, ()> {
    let (rest, comm) = u32_field("the communicator")(rest)?;
    let (rest, newcomm) = expect("the new communicator (sleb)", sleb)(rest)?;
    if !(-1..u32::MAX as i64).contains(&newcomm) {
        return fail(
            rest,
            format!("a new communicator id below 4294967295 or -1, found {newcomm}"),
        );
    }
    (e.comm, e.id) = (comm, newcomm);
    Ok((rest, ()))
}

/// Records decoded without nom: `None` on anything unusual (a field out of range, the data
/// ending, a LEB128 value of 10 bytes, a record [`Checks`] finds wrong), before anything is
/// pushed, and [`record`] then parses the same bytes with its error messages. Accepts exactly
/// what [`record`] accepts. The common shapes here, Sendrecv, collectives and communicator
/// operations in [`record_fast_more`] (in one function with them, the common shapes' parse is
/// slower).
pub(super) fn record_fast<'a, P: Push>(
    input: &'a [u8],
    cur: &mut Cursor<'_, P>,
) -> Option<&'a [u8]> {
    let mut at = 1;
    let code = *input.first()?;
    let routine = Routine::from_code(code & !CODE_FLAGS)?;
    let flagged = code & CODE_FLAGS != 0;
    if flagged && !flaggable(routine.shape()) {
        return None;
    }
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
                (e.flags, e.pages) = flags_pages(fast_uleb(input, &mut at)?, RECV_FLAGS)?;
            }
            if matches!(shape, Shape::Isend | Shape::Irecv) {
                e.id = u32::try_from(fast_uleb(input, &mut at)?).ok()? as i64;
            }
            if flagged {
                let f = fast_uleb(input, &mut at)?;
                (e.flags, e.pages) = flags_pages(f, SEND_FLAGS | SEND_PAGE).filter(|_| f != 0)?;
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
pub(super) fn record_fast_more<'a, P: Push>(
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
            (e.flags, e.pages) = flags_pages(
                fast_uleb(input, &mut at)?,
                SENDRECV_FLAGS | RECV_PAGE | SEND_PAGE,
            )?;
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
            if input[0] & CODE_FLAGS != 0 {
                e.flags = u8::try_from(fast_uleb(input, &mut at)?)
                    .ok()
                    .filter(|&f| f != 0 && f as u64 & !COLL_FLAGS == 0)?;
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
pub(super) fn fast_uleb(input: &[u8], at: &mut usize) -> Option<u64> {
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
pub(super) fn fast_sleb(input: &[u8], at: &mut usize) -> Option<i64> {
    let z = fast_uleb(input, at)?;
    Some(((z >> 1) as i64) ^ -((z & 1) as i64))
}
