//! One rank's events read back from the columns of [`Events`]: each field decoded as
//! [`super`] stores it, completions and a request's creator found by rank and select.

use super::*;

/// One rank's events, read from the columns.
#[derive(Clone, Copy)]
pub struct Rank<'a> {
    pub(super) ev: &'a Events,
    pub(super) x: &'a Extra,
    pub(super) base: usize,
    pub(super) len: usize,
    /// The rank's first block in `t_base`.
    pub(super) blocks: usize,
}

impl<'a> Rank<'a> {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Global index of event `i` (in [`Events::offsets`] numbering).
    #[inline]
    pub fn global(&self, i: usize) -> usize {
        debug_assert!(i < self.len);
        self.base + i
    }

    #[inline]
    pub fn routine(&self, i: usize) -> Routine {
        self.ev.routine[self.global(i)]
    }

    /// The rank's events' routines.
    pub fn routines(&self) -> &'a [Routine] {
        &self.ev.routine[self.base..self.base + self.len]
    }

    #[inline(always)]
    pub fn t_call(&self, i: usize) -> u64 {
        match self.ev.t_call[self.global(i)] {
            WIDE_CALL => self.wide(wide_key(i, 3)),
            o => self.ev.t_base[self.blocks + i / BLOCK] + o as u64,
        }
    }

    #[inline]
    fn wide(&self, key: u64) -> u64 {
        let wide = self.x.wide();
        let k = wide
            .binary_search_by_key(&key, |&(k, _)| k)
            .expect("a wide value is listed");
        wide[k].1
    }

    #[inline(always)]
    pub fn t_return(&self, i: usize) -> u64 {
        match self.ev.dur[self.global(i)] {
            WIDE_DUR => self.wide(wide_key(i, 0)),
            d => self.t_call(i).wrapping_add_signed(d as i64),
        }
    }

    /// Whether event `i` is a plain send: a standard-mode `Send` or `Isend`, whose byte count
    /// is its word ([`Events::plain_bytes_at`]) and alone tells whether it goes by rendezvous.
    #[inline]
    pub fn plain_send(&self, i: usize) -> bool {
        matches!(self.routine(i), Routine::Send | Routine::Isend)
            && self.ev.word[self.global(i)] != WIDE_BYTES
    }

    #[inline(always)]
    pub fn bytes(&self, i: usize) -> u64 {
        let word = self.ev.word[self.global(i)];
        match self.routine(i).shape() {
            Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv => match word {
                WIDE_BYTES => self.wide(wide_key(i, 1)),
                b => b as u64,
            },
            Shape::Coll if let Some((sent, _)) = self.inline_coll(i) => sent,
            Shape::Sendrecv | Shape::Coll => join_u64(&self.x.aux()[word as usize..]),
            _ => 0,
        }
    }

    #[inline]
    pub fn peer(&self, i: usize) -> i32 {
        self.ev.peer[self.global(i)]
    }

    /// Event `i`'s `(tag, communicator)`.
    #[inline]
    fn key(&self, i: usize) -> (i32, u32) {
        let from = self.ev.k_base[self.blocks + i / BLOCK] as usize;
        self.x.keys[from + self.ev.key[self.global(i)] as usize]
    }

    #[inline]
    pub fn tag(&self, i: usize) -> i32 {
        self.key(i).0
    }

    #[inline]
    pub fn comm(&self, i: usize) -> u32 {
        self.key(i).1
    }

    #[inline]
    pub fn flags(&self, i: usize) -> u8 {
        let g = self.global(i);
        match self.ev.routine[g].shape() {
            Shape::Complete if self.ev.flags[g] & INLINE_RANGE != 0 => 0,
            // (a collective's own flag beside its form: see `INLINE_COLL`)
            Shape::Coll if self.ev.flags[g] & INLINE_COLL != 0 => self.ev.flags[g] & COLL_OWN_FLAGS,
            _ => self.ev.flags[g] & !FLAG_PAGES,
        }
    }

    /// Where event `i`'s message buffers start in their pages, where the trace says.
    #[inline]
    pub fn pages(&self, i: usize) -> PageOffsets {
        let g = self.global(i);
        match self.ev.flags[g] & FLAG_PAGES != 0 && self.ev.routine[g].shape().is_p2p() {
            true => PageOffsets::of_word(self.wide(wide_key(i, 4))),
            false => PageOffsets::NONE,
        }
    }

    /// The bytes sent and received by a collective stored in its columns (see
    /// [`INLINE_COLL`]).
    #[inline]
    fn inline_coll(&self, i: usize) -> Option<(u64, u64)> {
        let g = self.global(i);
        let (f, w) = (self.ev.flags[g], self.ev.word[g] as u64);
        let inline = f & INLINE_COLL != 0 && self.ev.routine[g].shape() == Shape::Coll;
        inline.then_some(match f & !(INLINE_COLL | COLL_OWN_FLAGS) {
            COLL_SYMMETRIC => (w, w),
            COLL_SENDS => (w, 0),
            _ => (0, w),
        })
    }

    /// The requests of a `complete` event stored in its columns (see [`INLINE_RANGE`]).
    #[inline]
    pub(super) fn inline_range(&self, i: usize) -> Option<std::ops::Range<u32>> {
        let g = self.global(i);
        let f = self.ev.flags[g];
        (f & INLINE_RANGE != 0 && self.ev.routine[g].shape() == Shape::Complete).then(|| {
            let first = self.ev.word[g];
            first..first + (f & !INLINE_RANGE) as u32
        })
    }

    /// The request created (isend, irecv) or cancelled (cancel), or the new communicator
    /// (commop, -1 none). A request's id is the count of requests created in sequence before
    /// it, unless it was out of sequence.
    #[inline]
    pub fn id(&self, i: usize) -> i64 {
        let word = self.ev.word[self.global(i)];
        let routine = self.routine(i);
        match routine.shape() {
            _ if routine.creates_request() && self.creates_request(i) => {
                requests_before(self.r_base(), self.r_bits(), i) as i64
            }
            _ if routine.creates_request() => self.wide(wide_key(i, 2)) as i64,
            Shape::CommOp if word == NO_COMM => -1,
            Shape::CommOp | Shape::Cancel => word as i64,
            _ => 0,
        }
    }

    /// Every field of event `i`; where one or two fields do, their accessors read less.
    #[inline]
    pub fn event(&self, i: usize) -> Event {
        Event {
            routine: self.routine(i),
            t_call: self.t_call(i),
            t_return: self.t_return(i),
            bytes: self.bytes(i),
            peer: self.peer(i),
            tag: self.tag(i),
            comm: self.comm(i),
            id: self.id(i),
            flags: self.flags(i),
            pages: self.pages(i),
        }
    }

    /// Event `i`'s words in `aux` (empty for shapes without).
    #[inline]
    pub(super) fn aux(&self, i: usize) -> &'a [u32] {
        let at = self.ev.word[self.global(i)] as usize;
        let aux = self.x.aux();
        // Sendrecv's and a collective's words follow the two of their bytes sent.
        let (at, n) = match self.routine(i).shape() {
            Shape::Complete if self.inline_range(i).is_some() => return &[],
            Shape::Complete if aux[at] & RANGE != 0 => (at, 2),
            Shape::Complete => (at, 2 + aux[at + 1] as usize),
            Shape::Sendrecv => (at + 2, 4),
            Shape::Coll if self.inline_coll(i).is_some() => return &[],
            Shape::Coll => (at + 2, 3 + 2 * aux[at + 2] as usize),
            _ => return &[],
        };
        &aux[at..at + n]
    }

    /// How many requests the rank created in sequence (ids 0, 1, …; a request out of
    /// sequence, which the graph reports, is not counted).
    pub fn requests(&self) -> usize {
        match blocks(self.len) {
            0 => 0,
            n => requests_through(self.r_base(), self.r_bits(), n - 1) as usize,
        }
    }

    /// Whether event `i` created the request with the next id of its rank (the id the rank's
    /// earlier requests imply).
    #[inline]
    pub fn creates_request(&self, i: usize) -> bool {
        let bits = &self.ev.r_bits[self.blocks + i / BLOCK];
        bits[i % BLOCK / 64] >> (i % 64) & 1 == 1
    }

    /// The event that created request `req`, if any.
    #[inline]
    pub fn req_origin(&self, req: u32) -> Option<u32> {
        self.find_origin(req, None, self.len)
    }

    /// [`find_origin`] in this rank, the request most likely created near event `i`.
    #[inline(always)]
    fn find_origin(&self, req: u32, prev: Option<(u32, u32)>, i: usize) -> Option<u32> {
        let near = i.min(self.len.saturating_sub(1)) / BLOCK;
        let (base, bits) = (self.r_base(), self.r_bits());
        find_origin(base, bits, self.len, req, prev, near).map(|i| i as u32)
    }

    /// The rank's blocks' counts of requests before them.
    #[inline]
    fn r_base(&self) -> &'a [u32] {
        &self.ev.r_base[self.blocks..self.blocks + blocks(self.len)]
    }

    /// The rank's blocks' request bits.
    #[inline]
    fn r_bits(&self) -> &'a [ReqBits] {
        &self.ev.r_bits[self.blocks..self.blocks + blocks(self.len)]
    }

    /// A `complete` event's requests: a range of them (stored in its columns, or as two words),
    /// or the words that list them one by one; and how many in all. Inlined where the range is
    /// in the columns: a call would return the three through memory, and the replay's 16-byte
    /// loads of them would wait on the callee's 8-byte stores (see the `diss` case of
    /// tests/bench/run.sh).
    #[inline(always)]
    fn completed_parts(&self, i: usize) -> (std::ops::Range<u32>, &'a [u32], usize) {
        match self.inline_range(i) {
            Some(range) => {
                let n = range.len();
                (range, &[], n)
            }
            None => self.completed_parts_in_aux(i),
        }
    }

    /// [`Rank::completed_parts`] of an event whose requests are not in its columns.
    #[inline(never)]
    fn completed_parts_in_aux(&self, i: usize) -> (std::ops::Range<u32>, &'a [u32], usize) {
        match (self.routine(i).shape(), self.aux(i)) {
            (Shape::Complete, &[n, first]) if n & RANGE != 0 => {
                let n = n & !RANGE;
                (first..first + n, &[], n as usize)
            }
            (Shape::Complete, aux) => (0..0, &aux[2..], aux[0] as usize),
            _ => (0..0, &[], 0),
        }
    }

    /// The ids of the requests a `complete` record completed, without their statuses (which
    /// cost a look at each request's creator).
    #[inline]
    pub fn completed_reqs(&self, i: usize) -> impl Iterator<Item = u32> + Clone + 'a {
        let (mut range, mut words, _) = self.completed_parts(i);
        std::iter::from_fn(move || {
            if let Some(req) = range.next() {
                return Some(req);
            }
            let (&w, rest) = words.split_first()?;
            if w == EXPLICIT {
                words = &rest[3..];
                Some(rest[0])
            } else {
                words = rest;
                Some(w)
            }
        })
    }

    /// The requests a `complete` record completed, from its `k`-th on, each with the event that
    /// created it (in sequence, as the graph checks). `last`: a request of the rank and its
    /// creator, known from before (see `find_origin`: a Waitall's first request mostly
    /// follows the last one the call before it completed).
    #[inline]
    pub fn completed_origins(
        &self,
        i: usize,
        k: usize,
        last: Option<(u32, u32)>,
    ) -> impl Iterator<Item = (u32, u32)> + 'a {
        let rank = *self;
        let mut reqs = self.completed_reqs(i).skip(k);
        let mut prev = last;
        std::iter::from_fn(move || {
            let req = reqs.next()?;
            let origin = rank
                .find_origin(req, prev, i)
                .expect("a request created in sequence");
            prev = Some((req, origin));
            Some((req, origin))
        })
    }

    /// The requests a `complete` record says it completed.
    #[inline]
    pub fn completions(&self, i: usize) -> Completions<'a> {
        let (range, words, left) = self.completed_parts(i);
        Completions {
            rank: *self,
            range,
            words,
            left,
        }
    }

    /// The receive half of a Sendrecv record.
    #[inline]
    pub fn recv_half(&self, i: usize) -> Option<RecvHalf> {
        match (self.routine(i).shape(), self.aux(i)) {
            (Shape::Sendrecv, w) => Some(RecvHalf {
                bytes: join_u64(w),
                source: w[2] as i32,
                tag: w[3] as i32,
            }),
            _ => None,
        }
    }

    /// A collective's bytes received by this rank and its per-rank counts.
    #[inline]
    pub fn coll_recv(&self, i: usize) -> (u64, Vec<u64>) {
        if let Some((_, received)) = self.inline_coll(i) {
            return (received, Vec::new());
        }
        match (self.routine(i).shape(), self.aux(i)) {
            (Shape::Coll, w) => (
                join_u64(&w[1..3]),
                w[3..].chunks_exact(2).map(join_u64).collect(),
            ),
            _ => (0, Vec::new()),
        }
    }
}

/// The completions of one `complete` record (see [`Rank::completions`]).
pub struct Completions<'a> {
    rank: Rank<'a>,
    /// The requests of a record stored as a range, each with its implied status.
    range: std::ops::Range<u32>,
    /// Those of a record that lists them.
    words: &'a [u32],
    left: usize,
}

impl Completions<'_> {
    /// Request `req` completed with the status its creator implies.
    fn implied(&self, req: u32) -> Completion {
        let r = &self.rank;
        let oi = r.req_origin(req).expect("a request created in sequence") as usize;
        let (source, tag) = implied_status(r.routine(oi), r.peer(oi), r.tag(oi), r.flags(oi))
            .expect("a one-word completion has an implied status");
        Completion { req, source, tag }
    }
}

impl Iterator for Completions<'_> {
    type Item = Completion;

    fn next(&mut self) -> Option<Completion> {
        if let Some(req) = self.range.next() {
            self.left -= 1;
            return Some(self.implied(req));
        }
        let (&w, rest) = self.words.split_first()?;
        self.left -= 1;
        if w == EXPLICIT {
            let c = Completion {
                req: rest[0],
                source: rest[1] as i32,
                tag: rest[2] as i32,
            };
            self.words = &rest[3..];
            return Some(c);
        }
        self.words = rest;
        Some(self.implied(w))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Completions<'_> {}
