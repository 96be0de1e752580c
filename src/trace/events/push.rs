//! Appending events to [`Events`]: to its last rank, or to a rank's slots in a parallel fill
//! ([`Sink`]), each record encoded as [`super`] describes.

use super::*;

impl Push for Sink<'_> {
    #[inline]
    fn push_words(&mut self, e: &Event, aux: &[u32]) {
        let before = self.requests;
        self.cols.set(
            self.next,
            self.next,
            e,
            self.extra,
            self.index,
            &mut self.requests,
            aux,
        );
        if self.requests != before {
            self.recent[before as usize % RECENT] =
                (before, implied_status(e.routine, e.peer, e.tag, e.flags));
        }
        self.next += 1;
    }

    #[inline(always)]
    fn implied(&self, req: u32) -> Option<(i32, i32)> {
        match self.recent[req as usize % RECENT] {
            (id, status) if id == req => return status,
            _ => {}
        }
        let c = &self.cols;
        let filled = blocks(self.next);
        let oi = find_origin(
            &c.r_base[..filled],
            &c.r_bits[..filled],
            self.next,
            req,
            self.last_origin.get(),
            filled.saturating_sub(1),
        )?;
        self.last_origin.set(Some((req, oi as u32)));
        let (tag, _) = self.extra.keys[c.k_base[oi / BLOCK] as usize + c.key[oi] as usize];
        implied_status(c.routine[oi], c.peer[oi], tag, c.flags[oi])
    }

    fn pushed(&self) -> usize {
        self.next
    }

    fn origin(&self, req: u32) -> Option<(usize, Routine)> {
        let c = &self.cols;
        let filled = blocks(self.next);
        let (base, bits) = (&c.r_base[..filled], &c.r_bits[..filled]);
        let oi = find_origin(base, bits, self.next, req, None, filled.saturating_sub(1))?;
        Some((oi, c.routine[oi]))
    }
}

impl Push for Events {
    fn push_words(&mut self, e: &Event, aux: &[u32]) {
        self.push_last(e, aux);
    }

    fn implied(&self, req: u32) -> Option<(i32, i32)> {
        self.implied_last(req)
    }

    fn pushed(&self) -> usize {
        self.rank(self.nranks() - 1).len()
    }

    fn origin(&self, req: u32) -> Option<(usize, Routine)> {
        let ev = self.rank(self.nranks() - 1);
        let oi = ev.req_origin(req)? as usize;
        Some((oi, ev.routine(oi)))
    }
}

/// Appending events: to the last rank of an [`Events`], or to a rank's [`Sink`].
pub trait Push {
    /// Appends `e` with its variable-length words as this module encodes them.
    #[doc(hidden)]
    fn push_words(&mut self, e: &Event, aux: &[u32]);

    /// The status request `req` reports unless the trace says otherwise.
    #[doc(hidden)]
    fn implied(&self, req: u32) -> Option<(i32, i32)>;

    /// The events of the rank pushed so far.
    #[doc(hidden)]
    fn pushed(&self) -> usize;

    /// The event that created request `req` in sequence, and its routine.
    #[doc(hidden)]
    fn origin(&self, req: u32) -> Option<(usize, Routine)>;

    /// Appends an event with no variable-length part.
    fn push(&mut self, e: &Event) {
        self.push_words(e, &[]);
    }

    /// Appends a `complete` record.
    fn push_complete(&mut self, e: &Event, done: &[Completion]) {
        let first = done.first().map_or(0, |c| c.req);
        let in_range = |(k, c): (usize, &Completion)| {
            c.req as u64 == first as u64 + k as u64
                && c.req != EXPLICIT
                && self.implied(c.req) == Some((c.source, c.tag))
        };
        if !done.is_empty() && done.len() < RANGE as usize && done.iter().enumerate().all(in_range)
        {
            return self.push_words(e, &[RANGE | done.len() as u32, first]);
        }
        with_words(|w| {
            w.extend([done.len() as u32, 0]);
            for c in done {
                if c.req != EXPLICIT && self.implied(c.req) == Some((c.source, c.tag)) {
                    w.push(c.req);
                } else {
                    w.extend([EXPLICIT, c.req, c.source as u32, c.tag as u32]);
                }
            }
            w[1] = (w.len() - 2) as u32;
            self.push_words(e, w);
        });
    }

    /// Appends a Sendrecv record.
    fn push_sendrecv(&mut self, e: &Event, recv: RecvHalf) {
        self.push_words(e, &sendrecv_words(recv));
    }

    /// Appends a collective record.
    fn push_coll(&mut self, e: &Event, recv_bytes: u64, counts: &[u64]) {
        with_words(|w| {
            w.push(counts.len() as u32);
            w.extend(split_u64(recv_bytes));
            w.extend(counts.iter().flat_map(|&c| split_u64(c)));
            self.push_words(e, w);
        });
    }

    /// Appends event `i` of `from` (any shape).
    fn push_from(&mut self, from: Rank<'_>, i: usize) {
        if from.routine(i).shape() == Shape::Complete {
            let done: Vec<Completion> = from.completions(i).collect();
            self.push_complete(&from.event(i), &done);
        } else if from.routine(i).shape() == Shape::Coll {
            let (received, counts) = from.coll_recv(i);
            self.push_coll(&from.event(i), received, &counts);
        } else {
            self.push_words(&from.event(i), from.aux(i));
        }
    }
}

fn sendrecv_words(h: RecvHalf) -> [u32; 4] {
    let [lo, hi] = split_u64(h.bytes);
    [lo, hi, h.source as u32, h.tag as u32]
}

/// Calls `f` with an empty buffer for one record's words (one per thread: no allocation per
/// record).
fn with_words<R>(f: impl FnOnce(&mut Vec<u32>) -> R) -> R {
    thread_local! {
        static WORDS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    }
    WORDS.with_borrow_mut(|w| {
        w.clear();
        f(w)
    })
}
