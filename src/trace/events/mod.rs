//! Every rank's events in one set of flat columns, rank `r` at `start[r]..start[r + 1]`: 19
//! bytes an event, no heap allocation per event, and per rank at most three exact-size vectors
//! (auxiliary words, tag and communicator keys, wide values). Each rank's events come in blocks
//! of [`BLOCK`]:
//! - a call time is stored as its offset from the call that opens its block;
//! - an event's tag and communicator as a one-byte key into its block's list of the pairs its
//!   events use (at most [`BLOCK`] of them; a regular program uses one or two a block);
//! - a bit per event tells whether it created a request in sequence, with the count of those
//!   before the block: a request's creator is found by rank and select, 0.14 bytes an event
//!   where a table of creators would take 4 bytes a request.
//!
//! The rare value that does not fit 32 bits (a call more than 4.29 s after its block's first, a
//! duration beyond ±2.1 s, a message of 4 GiB or more) is kept exactly in its rank's short
//! `wide` list. One 32-bit `word` holds what the shape has: the byte count of a point-to-point
//! message; where the event's words start in `aux`; the request of a cancel; the new
//! communicator of a communicator operation. A request's id is implied: it is the number of
//! requests its rank created in sequence before it (an id out of sequence, which the graph
//! reports, is kept in `wide`). Variable-length parts (completed requests, Sendrecv's receive
//! half, collective counts, and the bytes sent by these two) go to the rank's `aux` words, but
//! for a collective without counts that sends what it receives, or one of the two only (an
//! Allreduce, a Barrier, a Bcast): its `flags` byte tells which, its `word` the count. A
//! completed request takes one word when its status is what its creator implies (a send's, or
//! a receive's with no wildcard), four words otherwise; a completion call on up to 127
//! requests created one after the other, each with its implied status (a Waitall on the
//! requests posted together), takes none: its `flags` byte holds the count, its `word` the
//! first request.

use super::{
    Completion, Event, FLAG_ANY_SOURCE, FLAG_ANY_TAG, FLAG_PAGES, PageOffsets, RecvHalf, Routine,
    Shape, TAG_ANY,
};
use crate::memory::prefetch;
use rayon::join;
use rayon::prelude::*;
use std::cell::{Cell, RefCell};
use std::sync::Arc;

mod push;
mod rank;
pub use push::Push;
pub use rank::{Completions, Rank};

/// A 32-bit value that did not fit: look it up in the rank's `wide` list.
const WIDE_DUR: i32 = i32::MIN;
const WIDE_BYTES: u32 = u32::MAX;
const WIDE_CALL: u32 = u32::MAX;
/// Events per block of call times (a power of two).
const BLOCK: usize = 256;

/// Blocks for a rank of `n` events.
fn blocks(n: usize) -> usize {
    n.div_ceil(BLOCK)
}

/// A block's request bits: bit `j` of word `j / 64` for its event `j`.
type ReqBits = [u64; BLOCK / 64];

/// The requests a rank created in sequence before its event `i`, from its blocks' counts
/// (`base`) and bits (block `i / BLOCK`'s count must be set).
#[inline]
fn requests_before(base: &[u32], bits: &[ReqBits], i: usize) -> u32 {
    let (b, j) = (i / BLOCK, i % BLOCK);
    let words = &bits[b];
    let full: u32 = words[..j / 64].iter().map(|w| w.count_ones()).sum();
    base[b] + full + (words[j / 64] & ((1u64 << (j % 64)) - 1)).count_ones()
}

/// The requests created in sequence up to the end of block `b`.
fn requests_through(base: &[u32], bits: &[ReqBits], b: usize) -> u32 {
    base[b] + bits[b].iter().map(|w| w.count_ones()).sum::<u32>()
}

/// The event that created request `req` in sequence, given its rank's blocks' counts and bits
/// (only the blocks filled so far), most likely in block `near` (a request is mostly completed
/// soon after it is created).
#[inline]
fn request_origin(base: &[u32], bits: &[ReqBits], req: u32, near: usize) -> Option<usize> {
    // The last block whose count is at most `req` holds it, if any does: the blocks before it
    // with the same count hold no request.
    let holds = |b: usize| base[b] <= req && base.get(b + 1).is_none_or(|&n| n > req);
    let b = match near < base.len() && holds(near) {
        true => near,
        false => base.partition_point(|&n| n <= req).checked_sub(1)?,
    };
    let mut k = req - base[b];
    for (w, &word) in bits[b].iter().enumerate() {
        let n = word.count_ones();
        if k < n {
            return Some(b * BLOCK + w * 64 + select(word, k) as usize);
        }
        k -= n;
    }
    None
}

/// The event that created request `req` in sequence, as [`request_origin`] finds it, unless
/// `prev`, the request looked up before it with its creator, is the one before it (a
/// completion call's requests mostly follow one another): then the next bit set after it, no
/// search. `len`: the events filled so far.
#[inline]
fn find_origin(
    base: &[u32],
    bits: &[ReqBits],
    len: usize,
    req: u32,
    prev: Option<(u32, u32)>,
    near: usize,
) -> Option<usize> {
    match prev {
        Some((p, e)) if req == p.wrapping_add(1) => next_request(bits, len, e as usize),
        _ => request_origin(base, bits, req, near),
    }
}

/// The first event after `e`, and before `len`, that created a request in sequence, given its
/// rank's blocks' bits.
#[inline]
fn next_request(bits: &[ReqBits], len: usize, e: usize) -> Option<usize> {
    let mut i = e + 1;
    while i < len {
        let word = bits[i / BLOCK][i % BLOCK / 64] >> (i % 64);
        if word != 0 {
            return Some(i + word.trailing_zeros() as usize);
        }
        i = (i / 64 + 1) * 64;
    }
    None
}

/// The place of the `k`-th set bit of `word` (from 0; there must be more than `k`): the byte
/// that holds it by the bytes' running counts, then the bit within that byte.
#[inline]
fn select(word: u64, k: u32) -> u32 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut c = word - ((word >> 1) & 0x5555_5555_5555_5555);
    c = (c & 0x3333_3333_3333_3333) + ((c >> 2) & 0x3333_3333_3333_3333);
    c = (c + (c >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Byte j: the set bits in bytes 0..=j (at most 64, so no byte overflows).
    let running = c.wrapping_mul(ONES);
    // High bit of byte j: running count > k (each byte is at least 128 before the subtraction,
    // which therefore borrows from no other byte).
    let over = ((running | HIGH) - (k as u64 + 1) * ONES) & HIGH;
    let byte = over.trailing_zeros() / 8;
    let before = ((running << 8) >> (8 * byte)) as u32 & 0xff;
    let mut b = (word >> (8 * byte)) & 0xff;
    for _ in before..k {
        b &= b - 1;
    }
    8 * byte + b.trailing_zeros()
}

/// The `wide` key of field `field` of event `i`: 0 the return time, 1 the byte count, 2 a
/// request id out of sequence, 3 the call time, 4 its [`PageOffsets`] (the order in which they are
/// listed).
fn wide_key(i: usize, field: u64) -> u64 {
    8 * i as u64 + field
}
/// `word` of a communicator operation that created no communicator (-1 in [`Event::id`]).
const NO_COMM: u32 = u32::MAX;
/// A completion written out in full: `EXPLICIT, req, source, tag`.
const EXPLICIT: u32 = u32::MAX;
/// Marks a `complete` record stored as `RANGE | n, first`: requests `first..first + n`, each
/// with the status its creator implies (a Waitall on requests posted together).
const RANGE: u32 = 1 << 31;
/// The `flags` of a `complete` event whose range is in its columns: `INLINE_RANGE | n`, the
/// first request in `word` (a `complete` record carries no flags of its own).
const INLINE_RANGE: u8 = 0x80;
/// The `flags` of a collective without counts whose byte counts are in its columns:
/// `INLINE_COLL | form`, with its own flags (`FLAG_CLEAN`, `FLAG_BOUNCED`, `FLAG_REDUCED`, the ones a collective
/// carries) beside them, `word` the count that is not implied. Aux words would take 20 bytes a call (an
/// Allreduce, a Bcast, a Barrier).
const INLINE_COLL: u8 = 0x80;
/// Forms of an inline collective: receives what it sends (Allreduce, Barrier); receives
/// nothing (Bcast's root, Reduce's others); sends nothing, `word` the bytes received.
const COLL_SYMMETRIC: u8 = 0;
/// A collective's own flags, kept beside its inline form.
const COLL_OWN_FLAGS: u8 = super::FLAG_CLEAN | super::FLAG_BOUNCED | super::FLAG_REDUCED;
const COLL_SENDS: u8 = 1;
const COLL_RECEIVES: u8 = 2;

/// What one rank keeps besides its columns: 32 bytes, and a box for the ranks with words
/// that do not fit the columns (the two lists in place would take 72 bytes a rank, and most
/// ranks, all of a dissemination's, have none).
#[derive(Clone, Debug, Default)]
struct Extra {
    /// `(tag, communicator)` pairs: each block's, from `k_base` of the block on.
    keys: Keys,
    more: Option<Box<More>>,
}

#[derive(Clone, Debug, Default)]
struct More {
    aux: Vec<u32>,
    /// `(wide_key(event, field), value)`, sorted.
    wide: Vec<(u64, u64)>,
}

/// Compared by their lists, however held (an emptied box is no box).
impl PartialEq for Extra {
    fn eq(&self, other: &Extra) -> bool {
        self.keys == other.keys && self.aux() == other.aux() && self.wide() == other.wide()
    }
}

impl Eq for Extra {}

impl Extra {
    #[inline]
    fn aux(&self) -> &[u32] {
        self.more.as_ref().map_or(&[], |m| &m.aux)
    }

    #[inline]
    fn wide(&self) -> &[(u64, u64)] {
        self.more.as_ref().map_or(&[], |m| &m.wide)
    }

    /// The lists, to add to.
    #[inline]
    fn more(&mut self) -> &mut More {
        self.more.get_or_insert_default()
    }

    /// Empties the lists and the keys, keeping the allocations.
    fn clear(&mut self) {
        if let Some(m) = &mut self.more {
            m.aux.clear();
            m.wide.clear();
        }
        self.keys.own().clear();
    }

    /// What a rank keeps of `self`, built in a scratch: the lists at their exact size, or none.
    fn kept(&self, keys: SharedKeys) -> Extra {
        let more = self
            .more
            .as_ref()
            .filter(|m| !m.aux.is_empty() || !m.wide.is_empty())
            .map(|m| {
                Box::new(More {
                    aux: m.aux.as_slice().into(),
                    wide: m.wide.as_slice().into(),
                })
            });
        Extra {
            keys: Keys::Shared(keys),
            more,
        }
    }
}

/// A rank's `(tag, communicator)` pairs: its own while they grow, then (in a parallel fill)
/// shared with the rank parsed before it on the same thread when they are the same: the ranks
/// of a regular program use the same tags, and a copy a rank would repeat them on every rank
/// of a large job. Compared by their pairs, however held.
#[derive(Clone, Debug)]
enum Keys {
    Own(Vec<(i32, u32)>),
    Shared(SharedKeys),
}

type SharedKeys = Arc<[(i32, u32)]>;

impl Default for Keys {
    fn default() -> Keys {
        Keys::Own(Vec::new())
    }
}

impl std::ops::Deref for Keys {
    type Target = [(i32, u32)];
    #[inline]
    fn deref(&self) -> &[(i32, u32)] {
        match self {
            Keys::Own(v) => v,
            Keys::Shared(a) => a,
        }
    }
}

impl PartialEq for Keys {
    fn eq(&self, other: &Keys) -> bool {
        self[..] == other[..]
    }
}

impl Eq for Keys {}

impl Keys {
    /// The pairs, to add to (a shared list is copied first).
    #[inline]
    fn own(&mut self) -> &mut Vec<(i32, u32)> {
        if let Keys::Shared(a) = self {
            *self = Keys::Own(a.to_vec());
        }
        match self {
            Keys::Own(v) => v,
            Keys::Shared(_) => unreachable!("made own above"),
        }
    }
}

/// The columns of a range of events, to be written in place.
struct ColsMut<'a> {
    routine: &'a mut [Routine],
    flags: &'a mut [u8],
    key: &'a mut [u8],
    t_call: &'a mut [u32],
    dur: &'a mut [i32],
    word: &'a mut [u32],
    peer: &'a mut [i32],
    /// The call time opening each block of these ranks' events.
    t_base: &'a mut [u64],
    /// Where each block's keys start in its rank's `keys`.
    k_base: &'a mut [u32],
    /// Requests created in sequence before each block.
    r_base: &'a mut [u32],
    r_bits: &'a mut [ReqBits],
}

/// Invokes macro `$m` with the names of the per-event columns (of [`Events`] and [`ColsMut`]),
/// then those of the per-block ones.
macro_rules! with_columns {
    ($m:ident) => {
        $m!(routine, flags, key, t_call, dur, word, peer; t_base, k_base, r_base, r_bits)
    };
}

impl<'a> ColsMut<'a> {
    /// The first `n` events (and `b` blocks) on the left.
    fn split_at(self, n: usize, b: usize) -> (ColsMut<'a>, ColsMut<'a>) {
        macro_rules! split {
            ($($c:ident),*; $($blk:ident),*) => {{
                $(let $c = self.$c.split_at_mut(n);)*
                $(let $blk = self.$blk.split_at_mut(b);)*
                (
                    ColsMut { $($c: $c.0,)* $($blk: $blk.0,)* },
                    ColsMut { $($c: $c.1,)* $($blk: $blk.1,)* },
                )
            }};
        }
        with_columns!(split)
    }

    /// Stores event `e` (index `i` of its rank) at slot `k`; `requests`: how many the rank
    /// created in sequence before it.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn set(
        &mut self,
        k: usize,
        i: usize,
        e: &Event,
        x: &mut Extra,
        index: &mut KeyIndex,
        requests: &mut u32,
        aux: &[u32],
    ) {
        let b = i / BLOCK;
        if i.is_multiple_of(BLOCK) {
            self.t_base[b] = e.t_call;
            self.k_base[b] = keys_len(x);
            self.r_base[b] = *requests;
            index.clear();
        }
        let next = *requests;
        let Stored {
            dur,
            word,
            flags,
            request,
        } = encode(i, e, x, aux, || next);
        // Written for a request alone: the bits of ranks that make none stay zeroed pages
        // never touched, so never resident.
        if request {
            self.r_bits[b][i % BLOCK / 64] |= 1 << (i % 64);
        }
        *requests += request as u32;
        self.routine[k] = e.routine;
        self.flags[k] = flags;
        self.key[k] = index.intern(x.keys.own(), self.k_base[i / BLOCK], e.tag, e.comm);
        self.t_call[k] = call_offset(i, e.t_call, self.t_base[i / BLOCK], x);
        pages(i, e, x);
        self.dur[k] = dur;
        self.word[k] = word;
        self.peer[k] = e.peer;
    }
}

/// The narrowed fields of one event.
struct Stored {
    dur: i32,
    word: u32,
    flags: u8,
    /// It created the request with the next id of its rank.
    request: bool,
}

/// The length of a rank's `keys`, where a block that opens now starts its keys.
fn keys_len(x: &Extra) -> u32 {
    u32::try_from(x.keys.len()).expect("under 2^32 keys per rank")
}

/// Where each of the current block's keys is among its keys: an open-addressing table of
/// key + 1 (0: free), for blocks with many keys (a tag per iteration gives a block dozens), and
/// the slots taken, to free them alone (the whole table cleared for every rank of a few events
/// would be a kilobyte written per rank).
struct KeyIndex {
    slots: [u16; 2 * BLOCK],
    taken: Vec<u16>,
}

impl Default for KeyIndex {
    fn default() -> KeyIndex {
        KeyIndex {
            slots: [0; 2 * BLOCK],
            taken: Vec::with_capacity(BLOCK),
        }
    }
}

impl KeyIndex {
    fn clear(&mut self) {
        for &h in &self.taken {
            self.slots[h as usize] = 0;
        }
        self.taken.clear();
    }

    /// [`intern`], through the table (which must hold the block's keys).
    #[inline]
    fn intern(&mut self, keys: &mut Vec<(i32, u32)>, from: u32, tag: i32, comm: u32) -> u8 {
        let from = from as usize;
        let pair = ((tag as u32 as u64) << 32 | comm as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut h = (pair >> 55) as usize; // 9 bits: 2 · BLOCK slots
        loop {
            match self.slots[h] {
                0 => {
                    keys.push((tag, comm));
                    let k = keys.len() - 1 - from;
                    debug_assert!(
                        k < BLOCK,
                        "a block of {BLOCK} events has at most {BLOCK} keys"
                    );
                    self.slots[h] = k as u16 + 1;
                    self.taken.push(h as u16);
                    return k as u8;
                }
                s if keys[from + s as usize - 1] == (tag, comm) => return (s - 1) as u8,
                _ => h = (h + 1) % (2 * BLOCK),
            }
        }
    }
}

/// The key of `(tag, comm)` in the block whose keys start at `keys[from]`, added if new.
#[inline]
fn intern(keys: &mut Vec<(i32, u32)>, from: u32, tag: i32, comm: u32) -> u8 {
    let from = from as usize;
    let k = match keys[from..].iter().rposition(|&p| p == (tag, comm)) {
        Some(k) => k,
        None => {
            keys.push((tag, comm));
            keys.len() - 1 - from
        }
    };
    debug_assert!(
        k < BLOCK,
        "a block of {BLOCK} events has at most {BLOCK} keys"
    );
    k as u8
}

/// Event `i` of a rank as stored; `next_req`: how many requests the rank created in sequence
/// before it.
#[inline]
fn encode(
    i: usize,
    e: &Event,
    x: &mut Extra,
    aux: &[u32],
    next_req: impl FnOnce() -> u32,
) -> Stored {
    let key = wide_key(i, 0);
    let d = e.t_return as i128 - e.t_call as i128;
    let dur = match i32::try_from(d) {
        Ok(d) if d != WIDE_DUR => d,
        _ => {
            x.more().wide.push((key, e.t_return));
            WIDE_DUR
        }
    };
    let shape = e.routine.shape();
    let mut flags = e.flags;
    let mut request = false;
    let word = match shape {
        Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv => match u32::try_from(e.bytes) {
            Ok(b) if b != WIDE_BYTES => b,
            _ => {
                x.more().wide.push((key + 1, e.bytes));
                WIDE_BYTES
            }
        },
        Shape::Complete => match *aux {
            [n, first] if n & RANGE != 0 && n & !RANGE < INLINE_RANGE as u32 && e.flags == 0 => {
                flags = INLINE_RANGE | (n & !RANGE) as u8;
                first
            }
            _ => {
                debug_assert!(
                    e.flags & INLINE_RANGE == 0,
                    "a complete record has no flags"
                );
                let x = &mut x.more().aux;
                let at = u32::try_from(x.len()).expect("under 2^32 auxiliary words per rank");
                x.extend_from_slice(aux);
                at
            }
        },
        Shape::Coll if let Some((form, word)) = inline_coll(e, aux) => {
            flags = INLINE_COLL | form | e.flags;
            word
        }
        Shape::Sendrecv | Shape::Coll => {
            let x = &mut x.more().aux;
            let at = u32::try_from(x.len()).expect("under 2^32 auxiliary words per rank");
            x.extend(split_u64(e.bytes));
            x.extend_from_slice(aux);
            at
        }
        Shape::CommOp if e.id < 0 => NO_COMM,
        Shape::CommOp | Shape::Cancel => e.id as u32,
        Shape::None => 0,
    };
    if e.pages != PageOffsets::NONE && shape.is_p2p() {
        flags |= FLAG_PAGES;
    }
    if e.routine.creates_request() {
        request = e.id == next_req() as i64;
        if !request {
            x.more().wide.push((key + 2, e.id as u32 as u64));
        }
    }
    Stored {
        dur,
        word,
        flags,
        request,
    }
}

/// The form and word of a collective kept in its columns (see [`INLINE_COLL`]), given its
/// words `[counts, recv_bytes (2 words), counts…]`, if it can be.
fn inline_coll(e: &Event, aux: &[u32]) -> Option<(u8, u32)> {
    let [0, lo, hi] = *aux else { return None };
    let recv = join_u64(&[lo, hi]);
    let (form, word) = match (e.bytes, recv) {
        (b, r) if b == r => (COLL_SYMMETRIC, b),
        (b, 0) => (COLL_SENDS, b),
        (0, r) => (COLL_RECEIVES, r),
        _ => return None,
    };
    debug_assert!(e.flags & !COLL_OWN_FLAGS == 0, "a collective's flags");
    Some((form, u32::try_from(word).ok()?))
}

/// The stored call time of event `i`: its offset from its block's first call, else (listed in
/// `wide` after what [`encode`] listed of the same event) [`WIDE_CALL`].
#[inline]
fn call_offset(i: usize, t_call: u64, base: u64, x: &mut Extra) -> u32 {
    match t_call.checked_sub(base).map(u32::try_from) {
        Some(Ok(o)) if o != WIDE_CALL => o,
        _ => {
            x.more().wide.push((wide_key(i, 3), t_call));
            WIDE_CALL
        }
    }
}

/// Event `i`'s [`PageOffsets`], where it has any, listed in `wide` after its call time ([`encode`]
/// flags it [`FLAG_PAGES`]).
#[inline]
fn pages(i: usize, e: &Event, x: &mut Extra) {
    if e.pages != PageOffsets::NONE && e.routine.shape().is_p2p() {
        x.more().wide.push((wide_key(i, 4), e.pages.word()));
    }
}

/// The status a completed request reports unless the trace says otherwise: `(-1, -1)` for a
/// send, the posted source and tag for a receive without wildcards.
fn implied_status(routine: Routine, peer: i32, tag: i32, flags: u8) -> Option<(i32, i32)> {
    match routine.shape() {
        Shape::Isend => Some((-1, -1)),
        Shape::Coll if routine.nonblocking() => Some((-1, -1)),
        Shape::Irecv
            if peer >= 0 && tag != TAG_ANY && flags & (FLAG_ANY_SOURCE | FLAG_ANY_TAG) == 0 =>
        {
            Some((peer, tag))
        }
        _ => None,
    }
}

fn split_u64(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

fn join_u64(w: &[u32]) -> u64 {
    w[0] as u64 | (w[1] as u64) << 32
}

/// Every rank's events, as columns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Events {
    start: Vec<usize>,
    /// Rank `r`'s blocks at `block_start[r]..block_start[r + 1]` of `t_base`.
    block_start: Vec<usize>,
    t_base: Vec<u64>,
    /// Per block: where its keys start in its rank's `keys`.
    k_base: Vec<u32>,
    /// Per block: the requests its rank created in sequence before it.
    r_base: Vec<u32>,
    /// Per block: which of its events created a request in sequence.
    r_bits: Vec<ReqBits>,
    routine: Vec<Routine>,
    flags: Vec<u8>,
    /// The `(tag, communicator)` pair: its place among its block's keys.
    key: Vec<u8>,
    /// Call − its block's first call, or [`WIDE_CALL`].
    t_call: Vec<u32>,
    /// Return − call, or [`WIDE_DUR`].
    dur: Vec<i32>,
    /// The byte count (send, isend, recv, irecv; or [`WIDE_BYTES`]), where the event's words
    /// start in `aux` (complete, sendrecv, coll), the request (cancel), the new communicator
    /// (commop).
    word: Vec<u32>,
    peer: Vec<i32>,
    extra: Vec<Extra>,
}

impl Events {
    /// `nranks` ranks without events; pushes go to the last.
    pub fn new(nranks: usize) -> Events {
        Events {
            start: vec![0; nranks + 1],
            block_start: vec![0; nranks + 1],
            t_base: Vec::new(),
            k_base: Vec::new(),
            r_base: Vec::new(),
            r_bits: Vec::new(),
            routine: Vec::new(),
            flags: Vec::new(),
            key: Vec::new(),
            t_call: Vec::new(),
            dur: Vec::new(),
            word: Vec::new(),
            peer: Vec::new(),
            extra: vec![Extra::default(); nranks],
        }
    }

    /// One rank's events, for building a rank at a time (see [`Events::concat`]).
    pub fn single() -> Events {
        Events::new(1)
    }

    /// Adds a rank without events; pushes go to it.
    pub fn push_rank(&mut self) {
        self.start.push(self.len());
        self.block_start.push(self.t_base.len());
        self.extra.push(Extra::default());
    }

    /// The ranks of `parts`, one after the other, each column copied on a thread of its own.
    pub fn concat(parts: impl IntoIterator<Item = Events>) -> Events {
        let parts: Vec<Events> = parts.into_iter().collect();
        if parts.len() <= 1 {
            return (parts.into_iter().next()).unwrap_or_else(|| Events::new(0));
        }
        let mut all = Events::new(0);
        for p in &parts {
            let (base, blocks) = (*all.start.last().unwrap(), *all.block_start.last().unwrap());
            all.start.extend(p.start[1..].iter().map(|s| s + base));
            (all.block_start).extend(p.block_start[1..].iter().map(|s| s + blocks));
        }
        let list = &parts;
        macro_rules! append {
            ($($c:ident),*; $($blk:ident),*) => {
                rayon::scope(|s| {
                    $(let $c = &mut all.$c;
                      s.spawn(move |_| {
                          $c.reserve_exact(list.iter().map(|p| p.$c.len()).sum());
                          list.iter().for_each(|p| $c.extend_from_slice(&p.$c));
                      });)*
                    $(let $blk = &mut all.$blk;
                      s.spawn(move |_| list.iter().for_each(|p| $blk.extend_from_slice(&p.$blk)));)*
                })
            };
        }
        with_columns!(append);
        all.extra = parts.into_iter().flat_map(|p| p.extra).collect();
        all
    }

    pub fn nranks(&self) -> usize {
        self.start.len() - 1
    }

    /// Events over all ranks.
    pub fn len(&self) -> usize {
        self.routine.len()
    }

    pub fn is_empty(&self) -> bool {
        self.routine.is_empty()
    }

    /// Asks for the cache lines of global event `e`'s routine and byte count (its byte count
    /// alone where it is a `plain` send: [`Events::plain_bytes_at`]).
    #[inline]
    pub fn prefetch(&self, e: usize, plain: bool) {
        if !plain {
            prefetch(&self.routine[e]);
        }
        prefetch(&self.word[e]);
    }

    /// Asks for what a replay run of rank `r` from global event `e` reads first: the rank's
    /// own record and `e`'s columns.
    #[inline]
    pub fn prefetch_run(&self, r: usize, e: usize) {
        prefetch(&self.extra[r]);
        prefetch(&self.routine[e]);
        prefetch(&self.t_call[e]);
        prefetch(&self.dur[e]);
        prefetch(&self.word[e]);
        prefetch(&self.peer[e]);
    }

    /// The rank holding global event `e`, and the event's index there.
    pub fn locate(&self, e: usize) -> (usize, usize) {
        let r = self.start.partition_point(|&o| o <= e) - 1;
        (r, e - self.start[r])
    }

    /// The routine of global event `e`.
    #[inline]
    pub fn routine_at(&self, e: usize) -> Routine {
        self.routine[e]
    }

    /// Every event's routine, in global event order.
    pub fn routines(&self) -> &[Routine] {
        &self.routine
    }

    /// The byte count of global event `e`.
    #[inline(always)]
    pub fn bytes_at(&self, e: usize) -> u64 {
        match (self.routine[e].shape(), self.word[e]) {
            (Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv, b) if b != WIDE_BYTES => {
                b as u64
            }
            (Shape::None | Shape::Complete | Shape::Cancel | Shape::CommOp, _) => 0,
            _ => {
                let (r, i) = self.locate(e);
                self.rank(r).bytes(i)
            }
        }
    }

    /// The flags of global event `e`, a send or a Sendrecv (as recorded: theirs are kept as
    /// they are).
    #[inline]
    pub fn flags_at(&self, e: usize) -> u8 {
        self.flags[e]
    }

    /// The byte count of global event `e`, a plain send ([`Rank::plain_send`]): its word,
    /// not its routine's cache line too.
    #[inline(always)]
    pub fn plain_bytes_at(&self, e: usize) -> u64 {
        self.word[e] as u64
    }

    /// The first global index of each rank, and the total at the end.
    pub fn offsets(&self) -> &[usize] {
        &self.start
    }

    #[inline]
    pub fn rank(&self, r: usize) -> Rank<'_> {
        Rank {
            ev: self,
            x: &self.extra[r],
            base: self.start[r],
            len: self.start[r + 1] - self.start[r],
            blocks: self.block_start[r],
        }
    }

    pub fn ranks(&self) -> impl ExactSizeIterator<Item = Rank<'_>> + '_ {
        (0..self.nranks()).map(|r| self.rank(r))
    }

    fn push_last(&mut self, e: &Event, aux: &[u32]) {
        let r = self.nranks() - 1;
        let i = self.start[r + 1] - self.start[r];
        let x = &mut self.extra[r];
        let first = self.block_start[r];
        if i.is_multiple_of(BLOCK) {
            let before = match i {
                0 => 0,
                _ => requests_through(&self.r_base[first..], &self.r_bits[first..], i / BLOCK - 1),
            };
            self.t_base.push(e.t_call);
            self.k_base.push(keys_len(x));
            self.r_base.push(before);
            self.r_bits.push(ReqBits::default());
            self.block_start[r + 1] += 1;
        }
        let (base, bits) = (&self.r_base[first..], &self.r_bits[first..]);
        let Stored {
            dur,
            word,
            flags,
            request,
        } = encode(i, e, x, aux, || requests_before(base, bits, i));
        let block = first + i / BLOCK;
        self.r_bits[block][i % BLOCK / 64] |= (request as u64) << (i % 64);
        let t_call = call_offset(i, e.t_call, self.t_base[block], x);
        pages(i, e, x);
        self.routine.push(e.routine);
        self.flags.push(flags);
        self.key
            .push(intern(x.keys.own(), self.k_base[block], e.tag, e.comm));
        self.t_call.push(t_call);
        self.dur.push(dur);
        self.word.push(word);
        self.peer.push(e.peer);
        self.start[r + 1] += 1;
    }

    /// Room for `n` more events in every column, its pages made present at once
    /// ([`crate::memory::populate_writes`]: one call a column, not a fault a page), for a reader
    /// that knows about how many it will push.
    pub fn reserve(&mut self, n: usize) {
        macro_rules! reserve {
            ($($c:ident),*; $($blk:ident),*) => {{
                $(self.$c.reserve(n);
                  let _ = crate::memory::populate_writes(self.$c.spare_capacity_mut());)*
                $(self.$blk.reserve(n / BLOCK + 1);)*
            }};
        }
        with_columns!(reserve)
    }

    fn implied_last(&self, req: u32) -> Option<(i32, i32)> {
        let ev = self.rank(self.nranks() - 1);
        let oi = ev.req_origin(req)? as usize;
        implied_status(ev.routine(oi), ev.peer(oi), ev.tag(oi), ev.flags(oi))
    }

    /// The events of ranks `own` alone; every other rank keeps its place, with no events.
    pub fn keep(&mut self, own: std::ops::Range<usize>) {
        let (e0, e1) = (self.start[own.start], self.start[own.end]);
        let (b0, b1) = (self.block_start[own.start], self.block_start[own.end]);
        macro_rules! keep {
            ($($c:ident),*; $($blk:ident),*) => {
                $(self.$c.truncate(e1); self.$c.drain(..e0); self.$c.shrink_to_fit();)*
                $(self.$blk.truncate(b1); self.$blk.drain(..b0); self.$blk.shrink_to_fit();)*
            };
        }
        with_columns!(keep);
        self.start
            .iter_mut()
            .for_each(|s| *s = (*s).clamp(e0, e1) - e0);
        (self.block_start.iter_mut()).for_each(|s| *s = (*s).clamp(b0, b1) - b0);
        for (r, x) in self.extra.iter_mut().enumerate() {
            if !own.contains(&r) {
                *x = Extra::default();
            }
        }
    }

    /// Empties the last rank (a single-rank buffer), keeping the allocations.
    pub fn clear(&mut self) {
        macro_rules! clear {
            ($($c:ident),*; $($blk:ident),*) => {$(self.$c.clear();)* $(self.$blk.clear();)*};
        }
        with_columns!(clear);
        self.start.iter_mut().for_each(|s| *s = 0);
        self.block_start.iter_mut().for_each(|s| *s = 0);
        self.extra.iter_mut().for_each(Extra::clear);
    }

    /// Columns for ranks of `counts[r]` events, filled in parallel: `fill(r, sink)` must push
    /// exactly `counts[r]` events into `sink`. The first error (lowest rank) is returned.
    pub fn fill<E: Send>(
        counts: &[usize],
        fill: &(dyn Fn(usize, &mut Sink<'_>) -> Result<(), E> + Sync),
    ) -> Result<Events, E> {
        let mut start = Vec::with_capacity(counts.len() + 1);
        start.push(0);
        for c in counts {
            start.push(start.last().unwrap() + c);
        }
        let n = *start.last().unwrap();
        let mut block_start = Vec::with_capacity(counts.len() + 1);
        block_start.push(0);
        for &c in counts {
            block_start.push(block_start.last().unwrap() + blocks(c));
        }
        // Columns of zeroed memory, whose pages the threads that fill them touch first, a
        // piece of ranks at a time as it is filled ([`RankSplit::prepare`]: one call a column,
        // not a fault a page, see the `diss` case of tests/bench/run.sh; made present for the
        // whole trace at once, they would raise the peak where the file, released as it is
        // parsed, is large beside them), and each rank's parts made in parallel, not written
        // for every rank before the fill.
        let mut ev = Events {
            t_base: vec![0; *block_start.last().unwrap()],
            k_base: vec![0; *block_start.last().unwrap()],
            r_base: vec![0; *block_start.last().unwrap()],
            r_bits: vec![ReqBits::default(); *block_start.last().unwrap()],
            block_start,
            routine: crate::memory::zeroed_slice::<Routine>(n).into_vec(),
            flags: vec![0; n],
            key: vec![0; n],
            t_call: vec![0; n],
            dur: vec![0; n],
            word: vec![0; n],
            peer: vec![0; n],
            extra: (0..counts.len())
                .into_par_iter()
                .map(|_| Extra::default())
                .collect(),
            start,
        };
        let cols = ColsMut {
            routine: &mut ev.routine,
            flags: &mut ev.flags,
            key: &mut ev.key,
            t_call: &mut ev.t_call,
            dur: &mut ev.dur,
            word: &mut ev.word,
            peer: &mut ev.peer,
            t_base: &mut ev.t_base,
            k_base: &mut ev.k_base,
            r_base: &mut ev.r_base,
            r_bits: &mut ev.r_bits,
        };
        thread_local! {
            /// A rank's variable-length parts grow here and are then kept at their exact size:
            /// no growth garbage, no spare capacity; with the keys of the rank before.
            static SCRATCH: RefCell<(Extra, KeyIndex, Option<SharedKeys>)> =
                RefCell::default();
        }
        let parts = (cols, &mut ev.extra[..], (&ev.block_start[..], 0));
        type Parts<'a> = (ColsMut<'a>, &'a mut [Extra], (&'a [usize], usize));
        par_ranges(parts, &ev.start, &|r, (cols, x, _): Parts<'_>| {
            SCRATCH.with_borrow_mut(|(scratch, index, before)| {
                scratch.clear();
                let mut sink = Sink {
                    cols,
                    next: 0,
                    requests: 0,
                    last_origin: Cell::new(None),
                    recent: [(NO_REQUEST, None); RECENT],
                    extra: scratch,
                    index,
                };
                fill(r, &mut sink)?;
                debug_assert_eq!(sink.next, sink.cols.word.len());
                let keys = match before.take() {
                    Some(k) if k[..] == scratch.keys[..] => k,
                    _ => Arc::from(&scratch.keys[..]),
                };
                *before = Some(Arc::clone(&keys));
                x[0] = scratch.kept(keys);
                Ok(())
            })
        })?;
        Ok(ev)
    }
}

/// Per-rank data that can be cut between two ranks: `split(ranks, events)` leaves the first
/// `ranks` ranks, which hold `events` events, on the left.
pub trait RankSplit: Sized + Send {
    fn split(self, ranks: usize, events: usize) -> (Self, Self);

    /// Readies the part before its ranks are called, on the thread that calls them.
    fn prepare(&mut self) {}
}

impl<T: Send> RankSplit for &mut [T] {
    fn split(self, _: usize, events: usize) -> (Self, Self) {
        self.split_at_mut(events)
    }
}

/// The columns of some ranks, the rank's extras, and the block starts of all ranks (with the
/// first rank's index), to know how many blocks the left ranks hold.
impl RankSplit for (ColsMut<'_>, &mut [Extra], (&[usize], usize)) {
    fn split(self, ranks: usize, events: usize) -> (Self, Self) {
        let (block_start, first) = self.2;
        let b = block_start[first + ranks] - block_start[first];
        let (a, c) = self.0.split_at(events, b);
        let (xa, xc) = self.1.split_at_mut(ranks);
        (
            (a, xa, (block_start, first)),
            (c, xc, (block_start, first + ranks)),
        )
    }

    /// The piece's columns made present ([`crate::memory::populate_writes`]).
    fn prepare(&mut self) {
        macro_rules! populate {
            ($($c:ident),*; $($blk:ident),*) => {{
                $(let _ = crate::memory::populate_writes(&mut self.0.$c[..]);)*
            }};
        }
        with_columns!(populate)
    }
}

/// What [`par_ranges`] calls for each rank.
pub type RangeFn<'f, P, E> = dyn Fn(usize, P) -> Result<(), E> + Sync + 'f;

/// Calls `f(r, rank r's part of data)` for every rank `r` (rank `r` holds events
/// `start[r]..start[r + 1]`), in parallel: the ranks are split in halves (rayon) down to pieces
/// of a few thousand events or ranks (`f` may do work per rank that its part does not tell:
/// matching the receives of a trace of collectives, whose ranks all have empty parts of the
/// sends, would otherwise go on one thread). The first error (lowest rank) is returned.
pub fn par_ranges<P: RankSplit, E: Send>(
    data: P,
    start: &[usize],
    f: &RangeFn<'_, P, E>,
) -> Result<(), E> {
    fn go<P: RankSplit, E: Send>(
        data: P,
        start: &[usize],
        first: usize,
        n: usize,
        f: &RangeFn<'_, P, E>,
    ) -> Result<(), E> {
        const PIECE_EVENTS: usize = 1 << 14;
        const PIECE_RANKS: usize = 1 << 12;
        if n > PIECE_RANKS || n > 1 && start[first + n] - start[first] > PIECE_EVENTS {
            let mid = n / 2;
            let (a, b) = data.split(mid, start[first + mid] - start[first]);
            let (ra, rb) = join(
                || go(a, start, first, mid, f),
                || go(b, start, first + mid, n - mid, f),
            );
            return ra.and(rb);
        }
        let mut rest = data;
        rest.prepare();
        for r in first..first + n {
            let (mine, tail) = rest.split(1, start[r + 1] - start[r]);
            rest = tail;
            f(r, mine)?;
        }
        Ok(())
    }
    go(data, start, 0, start.len() - 1, f)
}

/// One rank's slots in [`Events::fill`].
pub struct Sink<'a> {
    cols: ColsMut<'a>,
    next: usize,
    /// Requests created in sequence so far.
    requests: u32,
    /// The request [`Push::implied`] looked at last, and its creator.
    last_origin: Cell<Option<(u32, u32)>>,
    /// The status each of the last [`RECENT`] requests created in sequence implies, at its id
    /// modulo [`RECENT`] (a completion call most often completes requests just made: their
    /// statuses are known without a look for their creators in the columns).
    recent: [(u32, Option<(i32, i32)>); RECENT],
    extra: &'a mut Extra,
    index: &'a mut KeyIndex,
}

/// Requests whose implied statuses a [`Sink`] keeps (a power of two).
const RECENT: usize = 16;
/// An id no request has in [`Sink::recent`].
const NO_REQUEST: u32 = u32::MAX;

#[cfg(test)]
mod tests {
    use super::*;

    /// A rank keeps a box of words only when it has words: an emptied box compares as none,
    /// and what a rank keeps of an empty scratch has none.
    #[test]
    fn an_emptied_box_of_words_is_no_box() {
        let mut x = Extra::default();
        x.more().aux.push(1);
        assert_ne!(x, Extra::default());
        assert_eq!(x.kept(Arc::from(&[][..])).aux(), [1]);
        x.clear();
        assert!(x.more.is_some());
        assert_eq!(x, Extra::default());
        assert!(x.kept(Arc::from(&[][..])).more.is_none());
    }

    #[test]
    fn wide_values_round_trip() {
        let mut ev = Events::single();
        let mut e = Event::new(Routine::Send, 5, 5 + (1 << 40));
        e.bytes = 1 << 33;
        ev.push(&e);
        let mut back = Event::new(Routine::Recv, 10, 3); // returns before its call
        back.bytes = u32::MAX as u64;
        ev.push(&back);
        let mut c = Event::new(Routine::CommDup, 20, 21);
        c.id = -1;
        ev.push(&c);
        let r = ev.rank(0);
        assert_eq!((r.event(0), r.event(1), r.event(2)), (e, back, c));
    }

    #[test]
    fn completions_take_one_word_when_the_status_is_implied() {
        let mut ev = Events::single();
        let mut send = Event::new(Routine::Isend, 0, 1);
        (send.peer, send.tag, send.id) = (1, 3, 0);
        let mut recv = Event::new(Routine::Irecv, 2, 3);
        (recv.peer, recv.tag, recv.id) = (1, 4, 1);
        let mut any = Event::new(Routine::Irecv, 4, 5);
        (any.peer, any.tag, any.id, any.flags) = (-1, 4, 2, FLAG_ANY_SOURCE);
        for e in [&send, &recv, &any] {
            ev.push(e);
        }
        let done = [
            Completion {
                req: 0,
                source: -1,
                tag: -1,
            }, // implied: a send's
            Completion {
                req: 1,
                source: 1,
                tag: 4,
            }, // implied: posted source and tag
            Completion {
                req: 2,
                source: 5,
                tag: 4,
            }, // a wildcard: written out
            Completion {
                req: 1,
                source: 1,
                tag: 9,
            }, // not what was posted: written out
        ];
        ev.push_complete(&Event::new(Routine::Waitall, 6, 7), &done);
        let r = ev.rank(0);
        assert_eq!(r.aux(3).len(), 2 + 1 + 1 + 4 + 4);
        assert_eq!(r.completions(3).len(), 4);
        assert_eq!(r.completions(3).collect::<Vec<_>>(), done);
        assert_eq!(r.req_origin(2), Some(2));
    }

    #[test]
    fn completions_of_requests_posted_together_take_no_words() {
        // 130 requests: sends and receives from rank 2 with tag 7, alternating.
        let mut ev = Events::single();
        for id in 0..130 {
            let mut e = Event::new(
                [Routine::Isend, Routine::Irecv][id % 2],
                id as u64,
                id as u64,
            );
            (e.peer, e.tag, e.id) = (2, 7, id as i64);
            ev.push(&e);
        }
        let implied = |req: u32| Completion {
            req,
            source: [-1, 2][req as usize % 2],
            tag: [-1, 7][req as usize % 2],
        };
        // (completions, aux words, stored in the columns)
        let cases: [(Vec<Completion>, usize, bool); 8] = [
            ((0..4).map(implied).collect(), 0, true),     // 0, 1, 2, 3
            (vec![implied(2)], 0, true),                  // one request
            ((1..3).map(implied).collect(), 0, true),     // 1, 2
            ((3..130).map(implied).collect(), 0, true),   // 127, the most a flags byte holds
            ((2..130).map(implied).collect(), 2, false),  // 128: RANGE | n, first
            (vec![implied(0), implied(2)], 2 + 2, false), // a gap: one word each
            (vec![implied(1), implied(0)], 2 + 2, false), // descending
            (
                vec![
                    implied(0),
                    Completion {
                        tag: 9,
                        ..implied(1)
                    },
                ],
                2 + 1 + 4,
                false,
            ), // not implied
        ];
        for (k, (done, words, inline)) in cases.iter().enumerate() {
            let wait = Event::new(Routine::Waitall, 10, 11);
            ev.push_complete(&wait, done);
            let (r, i) = (ev.rank(0), 130 + k);
            assert_eq!(r.aux(i).len(), *words, "case {k}");
            assert_eq!(r.inline_range(i).is_some(), *inline, "case {k}");
            assert_eq!(r.event(i), wait, "case {k}");
            assert_eq!(r.completions(i).len(), done.len(), "case {k}");
            assert_eq!(r.completions(i).collect::<Vec<_>>(), *done, "case {k}");
            let reqs: Vec<u32> = done.iter().map(|c| c.req).collect();
            assert_eq!(r.completed_reqs(i).collect::<Vec<_>>(), reqs, "case {k}");
        }
    }

    /// A collective without counts whose byte counts are equal, or one of them 0, and fit 32
    /// bits keeps them in its columns; any other keeps its words. Either reads back the same,
    /// pushed or filled, and copies as itself.
    #[test]
    fn collectives_without_counts_take_no_words() {
        let big = 1u64 << 32;
        // (bytes sent, bytes received, counts, aux words besides the bytes sent)
        let cases: [(u64, u64, Vec<u64>, usize); 9] = [
            (8, 8, vec![], 0),               // Allreduce
            (0, 0, vec![], 0),               // Barrier
            (4096, 0, vec![], 0),            // Bcast's root
            (0, 4096, vec![], 0),            // Bcast's others
            (u32::MAX as u64, 0, vec![], 0), // the largest that fits
            (big, big, vec![], 3),           // too large
            (0, big, vec![], 3),             // too large, received
            (8, 16, vec![], 3),              // Gather's root: neither 0 nor equal
            (8, 8, vec![8, 8], 3 + 2 * 2),   // counts
        ];
        let event = |k: usize| {
            let mut e = Event::new(Routine::Allreduce, 10 * k as u64, 10 * k as u64 + 5);
            (e.bytes, e.peer, e.comm) = (cases[k].0, -1, 0);
            e
        };
        let mut one = Events::single();
        for (k, (_, received, counts, _)) in cases.iter().enumerate() {
            one.push_coll(&event(k), *received, counts);
        }
        let filled = Events::fill::<()>(&[cases.len()], &|_, sink| {
            for (k, (_, received, counts, _)) in cases.iter().enumerate() {
                sink.push_coll(&event(k), *received, counts);
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(filled, one);
        let mut copy = Events::single();
        let r = one.rank(0);
        for (k, (sent, received, counts, words)) in cases.iter().enumerate() {
            assert_eq!(r.event(k), event(k), "case {k}");
            assert_eq!(r.bytes(k), *sent, "case {k}");
            assert_eq!(one.bytes_at(k), *sent, "case {k}");
            assert_eq!(r.coll_recv(k), (*received, counts.clone()), "case {k}");
            assert_eq!(r.aux(k).len(), *words, "case {k}");
            assert_eq!(r.flags(k), 0, "case {k}");
            copy.push_from(r, k);
        }
        assert_eq!(copy, one);
    }

    /// Call times are offsets from their block's first call: those that do not fit are kept
    /// exactly, pushed one at a time or filled in parallel.
    #[test]
    fn call_times_round_trip_across_blocks() {
        let base = 1u64 << 50;
        // 600 events, three blocks (of 256); block 1 opens at event 256, at base + 7·256.
        let time = |i: usize| match i {
            10 => base + u32::MAX as u64 - 1, // the largest offset that fits
            11 => base + u32::MAX as u64,     // the sentinel's value: kept wide
            12 => base + (1 << 33),           // beyond 32 bits: kept wide
            300 => base + 7 * 256 - 5,        // before its block's first call: kept wide
            _ => base + 7 * i as u64,
        };
        let event = |i: usize| Event::new(Routine::Barrier, time(i), time(i) + 1);
        let mut one = Events::single();
        for i in 0..600 {
            one.push(&event(i));
        }
        assert_eq!(one.extra[0].wide().len(), 3);
        assert_eq!(one.t_base, [base, base + 7 * 256, base + 7 * 512]);
        for i in 0..600 {
            assert_eq!(one.rank(0).event(i), event(i), "event {i}");
        }
        let counts = [600, 0, 600];
        let filled = Events::fill::<()>(&counts, &|r, sink| {
            for i in 0..counts[r] {
                sink.push(&event(i));
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(filled, Events::concat([one.clone(), Events::single(), one]));
    }

    /// Tags and communicators as per-block keys, request ids implied by `origin`, and bytes
    /// kept in `aux`: every event reads back as pushed, filled in parallel or pushed.
    #[test]
    fn keys_ids_and_aux_bytes_round_trip() {
        // 700 events: block 0 gives every event its own tag (256 keys, the most a block can
        // hold), blocks 1 and 2 use two pairs.
        let event = |i: usize| {
            let t = 10 * i as u64;
            let mut e = match i % 5 {
                0 | 1 => {
                    let mut e = Event::new([Routine::Isend, Routine::Irecv][i % 2], t, t + 1);
                    // Request ids in sequence, but event 11's is out of it.
                    e.id = if i == 11 {
                        99
                    } else {
                        (2 * (i / 5) + i % 5) as i64 - (i > 11) as i64
                    };
                    e.bytes = i as u64;
                    e
                }
                2 => {
                    let mut e = Event::new(Routine::Sendrecv, t, t + 1);
                    e.bytes = (1 << 40) + i as u64; // beyond 32 bits, in aux
                    e
                }
                3 => {
                    let mut e = Event::new(Routine::Allgatherv, t, t + 1);
                    (e.bytes, e.peer) = (u32::MAX as u64 + i as u64, 3);
                    e
                }
                _ if i.is_multiple_of(2) => Event {
                    id: 3,
                    ..Event::new(Routine::Cancel, t, t + 1)
                },
                _ => Event {
                    id: [-1, 12][i / 5 % 2],
                    ..Event::new(Routine::CommDup, t, t + 1)
                },
            };
            (e.tag, e.comm) = if i < 256 {
                (i as i32 - 100, 4)
            } else {
                (5, (i % 2) as u32)
            };
            e
        };
        let push = |sink: &mut dyn FnMut(usize, &Event)| {
            for i in 0..700 {
                sink(i, &event(i));
            }
        };
        let recv = |i: usize| RecvHalf {
            bytes: i as u64 * 3,
            source: 1,
            tag: i as i32,
        };
        let counts = [0, 7];
        let mut one = Events::single();
        push(&mut |i, e| match e.routine.shape() {
            Shape::Sendrecv => one.push_sendrecv(e, recv(i)),
            Shape::Coll => one.push_coll(e, 2 * i as u64, &counts.map(|c| c + i as u64)),
            _ => one.push(e),
        });
        assert_eq!(one.extra[0].keys.len(), 256 + 2 + 2);
        assert_eq!(one.k_base, [0, 256, 258]);
        let r = one.rank(0);
        for i in 0..700 {
            assert_eq!(r.event(i), event(i), "event {i}");
            match event(i).routine.shape() {
                Shape::Sendrecv => assert_eq!(r.recv_half(i), Some(recv(i))),
                Shape::Coll => {
                    assert_eq!(r.coll_recv(i), (2 * i as u64, vec![i as u64, 7 + i as u64]))
                }
                _ => {}
            }
            assert_eq!(one.bytes_at(i), event(i).bytes, "event {i}");
        }
        // Event 11 (id 99) is out of sequence: the requests after it are not.
        assert_eq!(r.req_origin(4), Some(10));
        assert_eq!(r.req_origin(5), Some(15));
        assert_eq!(r.id(11), 99);
        let filled = Events::fill::<()>(&[700], &|_, sink| {
            push(&mut |i, e| match e.routine.shape() {
                Shape::Sendrecv => sink.push_sendrecv(e, recv(i)),
                Shape::Coll => sink.push_coll(e, 2 * i as u64, &counts.map(|c| c + i as u64)),
                _ => sink.push(e),
            });
            Ok(())
        })
        .unwrap();
        assert_eq!(filled, one);
    }

    /// One rank of `events` (a Waitall's completions beside it), pushed, checked equal to
    /// the same filled through a [`Sink`].
    fn pushed_equals_filled(events: &[(Event, Vec<Completion>)]) -> Events {
        let push = |sink: &mut dyn Push| {
            for (e, done) in events {
                match e.routine {
                    Routine::Waitall => sink.push_complete(e, done),
                    _ => sink.push(e),
                }
            }
        };
        let mut one = Events::single();
        push(&mut one);
        let filled = Events::fill::<()>(&[events.len()], &|_, sink| {
            push(sink);
            Ok(())
        })
        .unwrap();
        assert_eq!(filled, one);
        one
    }

    /// `select` against a bit-by-bit count, and a rank's request creators found by rank and
    /// select against the list of its in-sequence request-creating events: across blocks,
    /// with a block that creates none, around an id out of sequence.
    #[test]
    fn requests_are_found_by_rank_and_select() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut words = vec![
            1,
            u64::MAX,
            1 << 63,
            0xFF00_FF00_FF00_FF00,
            0x8000_0000_0000_0001,
        ];
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            words.push(x & x.rotate_left(9)); // sparser words too
            words.push(x);
        }
        for &w in &words {
            let naive: Vec<u32> = (0..64).filter(|b| w >> b & 1 == 1).collect();
            for (k, &b) in naive.iter().enumerate() {
                assert_eq!(select(w, k as u32), b, "word {w:#x}, k {k}");
            }
        }

        // 1,000 sends or requests: two requests in every three (none from 200 to 599: a
        // whole block creates none), one id out of sequence; after every 10th a
        // Waitall on the last two requests, after every 45th one on two requests far apart
        // (listed one by one).
        let creates = |i: usize| i % 3 != 2 && !(200..600).contains(&i);
        let mut events = Vec::new();
        let mut creators: Vec<usize> = Vec::new();
        let mut waits: Vec<(usize, Vec<u32>)> = Vec::new();
        for i in 0..1000 {
            if creates(i) {
                let mut e = Event::new(Routine::Isend, i as u64, i as u64 + 1);
                e.id = if i == 7 * 3 {
                    1000
                } else {
                    creators.len() as i64
                };
                if i != 7 * 3 {
                    creators.push(events.len());
                }
                events.push((e, Vec::new()));
            } else {
                events.push((
                    Event::new(Routine::Send, i as u64, i as u64 + 1),
                    Vec::new(),
                ));
            }
            let n = creators.len() as u32;
            let done = match i {
                _ if i % 45 == 44 && n > 20 => vec![n - 1, n - 20],
                _ if i % 10 == 9 && n > 1 => vec![n - 2, n - 1],
                _ => continue,
            };
            let c: Vec<Completion> = done
                .iter()
                .map(|&req| Completion {
                    req,
                    source: -1,
                    tag: -1,
                })
                .collect();
            waits.push((events.len(), done));
            events.push((Event::new(Routine::Waitall, i as u64, i as u64 + 1), c));
        }
        let one = pushed_equals_filled(&events);
        let r = one.rank(0);
        assert!(r.len() > 4 * BLOCK);
        assert!((BLOCK..2 * BLOCK).all(|i| !r.creates_request(i)));
        assert_eq!(r.requests(), creators.len());
        for (req, &e) in creators.iter().enumerate() {
            assert_eq!(r.req_origin(req as u32), Some(e as u32), "request {req}");
            assert_eq!(r.id(e), req as i64);
        }
        assert_eq!(r.req_origin(creators.len() as u32), None);
        let odd = events.iter().position(|(e, _)| e.id == 1000).unwrap();
        assert!(!r.creates_request(odd) && r.id(odd) == 1000);
        for (i, done) in &waits {
            let expect: Vec<(u32, u32)> = done
                .iter()
                .map(|&q| (q, creators[q as usize] as u32))
                .collect();
            for k in 0..done.len() {
                let seen: Vec<_> = r.completed_origins(*i, k, None).collect();
                assert_eq!(seen, expect[k..], "event {i} from {k}");
                // With the request before its first known, as a replay keeps it.
                let before = done[k]
                    .checked_sub(1)
                    .map(|q| (q, creators[q as usize] as u32));
                let seen: Vec<_> = r.completed_origins(*i, k, before).collect();
                assert_eq!(
                    seen,
                    expect[k..],
                    "event {i} from {k}, request before known"
                );
            }
        }
        // A completion before any request (a trace the graph rejects) is kept as it is.
        let done = [Completion {
            req: 0,
            source: -1,
            tag: -1,
        }];
        let wait = Event::new(Routine::Waitall, 1, 2);
        let filled = Events::fill::<()>(&[1], &|_, sink| {
            sink.push_complete(&wait, &done);
            Ok(())
        })
        .unwrap();
        let mut one = Events::single();
        one.push_complete(&wait, &done);
        assert_eq!(filled, one);
        assert_eq!(one.rank(0).completed_reqs(0).collect::<Vec<_>>(), [0]);
    }

    /// A filled rank keeps the statuses its last requests imply ([`Sink::recent`]); what it
    /// stores of a completion call is what pushing stores, for requests just made or made long
    /// before, implied statuses or not, and requests made out of sequence.
    #[test]
    fn completions_are_stored_alike_filled_or_pushed() {
        // 100 requests: sends, receives from a rank, and receives from any source or with any
        // tag; request 50 made with an id out of sequence (it stays 999).
        let mut events: Vec<(Event, Vec<Completion>)> = Vec::new();
        let mut implied = Vec::new();
        for k in 0..100u32 {
            let routine = [Routine::Isend, Routine::Irecv][k as usize % 2];
            let mut e = Event::new(routine, k as u64, k as u64 + 1);
            (e.peer, e.tag, e.id) = (k as i32 % 5, k as i32 % 3, implied.len() as i64);
            match k % 7 {
                3 => e.flags = FLAG_ANY_SOURCE,
                5 => e.flags = FLAG_ANY_TAG,
                6 if routine == Routine::Irecv => e.peer = -1,
                _ => {}
            }
            if k == 50 {
                e.id = 999;
            } else {
                implied.push(implied_status(e.routine, e.peer, e.tag, e.flags));
            }
            events.push((e, Vec::new()));
        }
        let status = |req: u32, differ: bool| {
            let (source, tag) = implied[req as usize].unwrap_or((4, 2));
            Completion {
                req,
                source,
                tag: tag + differ as i32,
            }
        };
        let n = implied.len() as u32;
        let waits: Vec<Vec<Completion>> = vec![
            vec![status(n - 2, false), status(n - 1, false)],
            (n - 40..n).map(|q| status(q, false)).collect(),
            vec![status(1, false), status(n - 1, false)],
            vec![status(n - 3, true), status(n - 2, false)],
            vec![
                status(0, false),
                status(n - 17, false),
                status(n - 16, false),
            ],
        ];
        for (j, done) in waits.into_iter().enumerate() {
            let t = 200 + j as u64;
            events.push((Event::new(Routine::Waitall, t, t), done));
        }
        let filled = pushed_equals_filled(&events);
        let r = filled.rank(0);
        for (i, (_, done)) in events.iter().enumerate().skip(100) {
            assert_eq!(r.completions(i).collect::<Vec<_>>(), *done, "event {i}");
        }
        // The 40 requests listed one by one (some statuses are not implied), the two last as
        // a range in the columns.
        assert!(r.inline_range(100).is_some() && r.inline_range(101).is_none());
    }

    /// Ranks parsed one after the other with the same tags and communicators hold one copy of
    /// them; a rank with others has its own; either way they read as pushed.
    #[test]
    fn ranks_with_the_same_keys_share_them() {
        let event = |r: usize, i: usize| {
            let mut e = Event::new(Routine::Send, i as u64, i as u64 + 1);
            (e.tag, e.comm) = (i as i32 % 5, if r == 2 { 7 } else { 0 });
            e
        };
        let fill = |r: usize, sink: &mut dyn Push| (0..20).for_each(|i| sink.push(&event(r, i)));
        let filled = Events::fill::<()>(&[20; 4], &|r, sink| {
            fill(r, sink);
            Ok(())
        })
        .unwrap();
        let pushed = Events::concat((0..4).map(|r| {
            let mut one = Events::single();
            fill(r, &mut one);
            one
        }));
        assert_eq!(filled, pushed);
        let shared = |r: usize| match &filled.extra[r].keys {
            Keys::Shared(k) => Arc::clone(k),
            Keys::Own(_) => panic!("rank {r}'s keys are not shared"),
        };
        assert!(Arc::ptr_eq(&shared(0), &shared(1)));
        assert!(!Arc::ptr_eq(&shared(1), &shared(2)) && !Arc::ptr_eq(&shared(2), &shared(3)));
        assert_eq!(shared(3)[..], shared(0)[..]);
        assert_eq!(filled.rank(2).comm(3), 7);
    }

    #[test]
    fn parallel_fill_equals_pushing() {
        // Ranks of up to three blocks of call times.
        let counts: Vec<usize> = (0..300)
            .map(|r| r % 7 * 11 + if r % 50 == 1 { 700 } else { 0 })
            .collect();
        let event = |r: usize, i: usize| {
            let mut e = Event::new(
                Routine::Isend,
                (r * 1000 + i) as u64,
                (r * 1000 + 2 * i) as u64,
            );
            (e.peer, e.bytes, e.id) = (r as i32, i as u64, i as i64);
            e
        };
        let done = |i: usize| {
            [Completion {
                req: i as u32,
                source: 1,
                tag: -1,
            }]
        };
        let filled = Events::fill::<()>(&counts, &|r, sink| {
            for i in 0..counts[r] {
                if i % 3 == 2 {
                    sink.push_complete(&Event::new(Routine::Waitall, 1, 2), &done(i));
                } else {
                    sink.push(&event(r, i));
                }
            }
            Ok(())
        })
        .unwrap();
        let pushed = Events::concat(counts.iter().enumerate().map(|(r, &n)| {
            let mut one = Events::single();
            for i in 0..n {
                if i % 3 == 2 {
                    one.push_complete(&Event::new(Routine::Waitall, 1, 2), &done(i));
                } else {
                    one.push(&event(r, i));
                }
            }
            one
        }));
        assert_eq!(filled, pushed);
        assert_eq!(filled.rank(5).completions(2).next().unwrap().req, 2);
    }
}
