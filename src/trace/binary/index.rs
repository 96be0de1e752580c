//! The chunks of a binary trace found before its events are decoded: the listing, the index
//! (`X`) and its check, and the parallel scan of a file's stretches of event chunks.

use super::*;

/// The chunk at `offset` of `body` (the file up to its trailer), read before.
pub(super) fn chunk_at(body: &[u8], offset: usize) -> RawChunk<'_> {
    let (_, (_, _, payload)) = chunk(&body[offset..]).expect("a chunk read before");
    RawChunk { offset, payload }
}

pub(super) struct RawChunk<'a> {
    pub(super) offset: usize,
    pub(super) payload: &'a [u8],
}

pub(super) fn chunk(input: &[u8]) -> Res<'_, (u8, u32, &[u8])> {
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

/// What the chunks of a trace say before its events are decoded: the job's and ranks'
/// metadata, the communicators, each rank's records, and where each rank's event chunks are.
pub(super) struct Listing<'a> {
    pub(super) meta: Meta,
    pub(super) comms: Vec<Comm>,
    /// Rank `r`'s records (each chunk's count bounded by its bytes, so that the columns cannot
    /// be over-allocated).
    pub(super) counts: Vec<usize>,
    /// Rank `r`'s event chunks are `by_rank[first[r]..first[r + 1]]`, in file order.
    pub(super) first: Vec<usize>,
    pub(super) by_rank: Vec<usize>,
    /// The file up to its trailer.
    pub(super) body: &'a [u8],
    /// Where an unfinished trace's file ends inside a chunk: the chunks before it are loaded.
    pub(super) cut: Option<usize>,
    /// As [`Tally`]'s.
    pub(super) site_chunks: Vec<(u32, usize)>,
    pub(super) object_chunks: Vec<[u64; 2]>,
}

impl Listing<'_> {
    /// The listing of ranks `own` alone: every other rank has no event chunks, no events and
    /// no call sites.
    pub(super) fn keep(&mut self, own: Range<usize>) {
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
                *o = [0, 0];
            }
        }
    }
}

/// Reads every chunk but the events' records: by stretches in parallel where the index says
/// where stretches start (else, or if the index is wrong, in one stretch), then in file order.
pub(super) fn list_chunks<'a>(
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
    let (t, cut) = tally(name, body, nranks, index_offset, stretches)?;
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
    set_rank_metas(&mut meta, body, nranks, &metas, &places);
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
    let by_rank = chunks_by_rank(&mut first, &event_chunks[..e_chunks], in_rank_order);
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

/// The chunks of the `stretches`, taken in file order: the tally, and where the file ends
/// inside a chunk, for a trace without its trailer (whose chunks before are kept).
fn tally<'a>(
    name: &str,
    body: &'a [u8],
    nranks: usize,
    index_offset: Option<usize>,
    stretches: Vec<Stretch>,
) -> Result<(Tally<'a>, Option<usize>), TraceError> {
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
    Ok((t, cut))
}

/// Each rank's metadata from its last R chunk and its placement from its last P chunk (at
/// their offsets + 1 in `metas` and `places`, 0: none), read once the scan has found them.
fn set_rank_metas(meta: &mut Meta, body: &[u8], nranks: usize, metas: &[u64], places: &[u64]) {
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
}

/// Each rank's event chunks: rank `r`'s at `first[r]..first[r + 1]` of the result, in file
/// order (a counting sort, unless the file lists them rank after rank already); `first`
/// holds each rank's count at `r + 1` and becomes their starts.
fn chunks_by_rank(
    first: &mut [usize],
    event_chunks: &[(u32, usize)],
    in_rank_order: bool,
) -> Vec<usize> {
    for r in 0..first.len() - 1 {
        first[r + 1] += first[r];
    }
    if in_rank_order {
        event_chunks.iter().map(|&(_, off)| off).collect()
    } else {
        let mut next = first.to_vec();
        let mut sorted = vec![0usize; event_chunks.len()];
        for &(r, off) in event_chunks {
            sorted[next[r as usize]] = off;
            next[r as usize] += 1;
        }
        sorted
    }
}

/// Whether the chunk at `at` of `body` runs past its end (or its header does).
pub(super) fn runs_past_end(body: &[u8], at: usize) -> bool {
    let Some(header) = body.get(at..at + CHUNK_HEADER_LEN) else {
        return true;
    };
    let len = u32::from_le_bytes(header[5..9].try_into().expect("4 bytes")) as usize;
    at + CHUNK_HEADER_LEN + len > body.len()
}

/// The stretches of chunks of `body`, scanned in parallel where the index at `index_offset`
/// tells where they start, else (or where the stretches do not meet) in one.
pub(super) fn read_stretches(
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
pub(super) struct Tally<'a> {
    // The trace is made at the end, around its events: an empty one made first, whose events
    // the fill replaces, would cost time a rank on one thread.
    pub(super) meta: Meta,
    pub(super) comms: Vec<Comm>,
    pub(super) seen_job: bool,
    pub(super) index: Option<RawChunk<'a>>,
    /// Event chunks listed with their rank (16 bytes a chunk, where a list of chunks and one
    /// of each rank's would take 70 bytes a rank), in pages of their own, bounded by the chunks
    /// found (a vector's growth would stay resident).
    pub(super) event_chunks: Pages<(u32, usize)>,
    pub(super) e_chunks: usize,
    /// Rank `r`'s event chunks are counted at `first[r + 1]`, its records and their bytes in
    /// `counts[r]` and `bytes[r]` (each chunk's count bounded by its bytes, so that the
    /// columns cannot be over-allocated).
    pub(super) first: Vec<usize>,
    pub(super) counts: Vec<usize>,
    pub(super) bytes: Vec<usize>,
    pub(super) in_rank_order: bool,
    pub(super) last_rank: u32,
    /// Each rank's last R chunk, at its offset + 1 (0: none), read once the scan is done.
    pub(super) metas: Vec<u64>,
    /// Each rank's last P chunk, as `metas`.
    pub(super) places: Vec<u64>,
    /// The S chunks with their rank, in file order, and each rank's last M and N chunks (as
    /// `metas`).
    pub(super) site_chunks: Vec<(u32, usize)>,
    pub(super) object_chunks: Vec<[u64; 2]>,
}

impl<'a> Tally<'a> {
    pub(super) fn new(name: &str, nranks: usize, found: usize) -> Result<Tally<'a>, TraceError> {
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
    pub(super) fn take(
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
            b'M' | b'N' => {
                self.object_chunks.resize(self.counts.len(), [0, 0]);
                self.object_chunks[f.rank as usize][(f.kind == b'N') as usize] = f.offset + 1;
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
pub(super) fn fill_columns(
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
pub(super) const STRETCHES_PER_THREAD: usize = 4;

/// A chunk the scan found good in itself: where it is, its kind, and for an E chunk its rank,
/// records and their bytes (what is left to check depends on the chunks before it).
#[derive(Clone, Copy)]
pub(super) struct Found {
    pub(super) offset: u64,
    pub(super) rank: u32,
    pub(super) records: u32,
    pub(super) len: u32,
    pub(super) kind: u8,
}

crate::memory::zeroable!(Found {
    offset: u64,
    rank: u32,
    records: u32,
    len: u32,
    kind: u8
});

/// The chunks of one stretch of the file, from `from` to `to`, read by [`scan`].
pub(super) struct Stretch {
    /// The chunks, `found[..chunks]`: in pages of their own, returned when dropped (the
    /// allocator would keep a vector's for reuse, where nothing reuses them).
    pub(super) found: Pages<Found>,
    pub(super) chunks: usize,
    /// What stopped the scan before `to`.
    pub(super) error: Option<TraceError>,
    /// Where the scan stopped: `to`, unless the last chunk crossed it or an error stopped it.
    pub(super) end: usize,
    pub(super) to: usize,
}

/// Where stretches of about equal numbers of event chunks start, by the index at `x`, the
/// first at the header's end, each with the index's entries from its first event chunk on:
/// `None` if the index does not read as offsets rising inside the body (then the file is read
/// in one stretch, which finds what is wrong).
pub(super) fn stretch_starts(
    body: &[u8],
    x: usize,
    stretches: usize,
) -> Option<Vec<(usize, &[u8])>> {
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
pub(super) const INDEX_ENTRY_LEN: usize = 12;

/// The offset that entry `k` of an index's `entries` gives.
pub(super) fn index_offset(entries: &[u8], k: usize) -> usize {
    let at = k * INDEX_ENTRY_LEN + 4;
    u64::from_le_bytes(entries[at..at + 8].try_into().expect("8 bytes")) as usize
}

/// How many event chunks ahead [`scan`] asks for a chunk's header: chunks are hundreds of
/// bytes apart, each header a miss that a core's own prefetching does not foresee (see the
/// `diss` case of tests/bench/run.sh).
pub(super) const SCAN_AHEAD: usize = 16;

/// Reads the chunks of `body` (the file `data` up to its trailer) from offset `from` until one
/// ends at or past `to`, or one is wrong.
/// `ahead`: the index's entries from the stretch's first event chunk on (none: no index), by
/// which the headers of the event chunks ahead are asked for (only a hint: a wrong index costs
/// nothing but the hints). `scanned`: where it hands back what it has read, as it goes.
pub(super) fn scan(
    name: &str,
    data: &[u8],
    body: &[u8],
    (from, to): (usize, usize),
    nranks: usize,
    ahead: &[u8],
    scanned: Option<&Release<'_>>,
) -> Result<Stretch, TraceError> {
    let at = |input: &[u8]| offset_in(data, input);
    let mut rest = &body[from..];
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
        match scan_chunk(name, data, nranks, offset, &mut rest) {
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

/// Reads the chunk at `offset`, the start of `rest` (then moved past it), and checks it in
/// itself: its kind, its rank, and its payload where that does not depend on other chunks.
#[inline]
fn scan_chunk(
    name: &str,
    data: &[u8],
    nranks: usize,
    offset: usize,
    rest: &mut &[u8],
) -> Result<Found, TraceError> {
    let to_err = |e: nom::Err<PErr<'_>>| nom_error(name, data, e);
    let whole = |offset, r: &[u8], what| chunk_end(name, data, offset, r, what);
    let (r, (kind, rank, payload)) = chunk(rest).map_err(to_err)?;
    check_chunk_header(name, offset, kind, rank, nranks)?;
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
}

/// A chunk header's kind one the format has, and its rank a rank of the job for a rank's
/// chunk, `NO_RANK` for a job-wide one.
#[inline]
fn check_chunk_header(
    name: &str,
    offset: usize,
    kind: u8,
    rank: u32,
    nranks: usize,
) -> Result<(), TraceError> {
    if !b"JRPCEXSMN".contains(&kind) {
        return Err(TraceError::offset(
            name,
            offset as u64,
            format!("expected a chunk kind J, R, P, C, E, S, M, N or X, found byte {kind:#04x}"),
        ));
    }
    if matches!(kind, b'R' | b'P' | b'E' | b'S' | b'M' | b'N') && rank as usize >= nranks {
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
    Ok(())
}

/// A shortfall of memory while parsing `name`, as the parser's error.
pub(super) fn shortfall(name: &str, e: crate::memory::Shortfall) -> TraceError {
    TraceError::at(name, e.message)
}

/// Whether `r`, what is left of the chunk at `offset` of `data` once read, is nothing.
pub(super) fn chunk_end(
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
pub(super) fn offset_in(data: &[u8], input: &[u8]) -> u64 {
    (input.as_ptr() as usize).saturating_sub(data.as_ptr() as usize) as u64
}

/// A nom error as the trace error it is, at its offset in `data`.
pub(super) fn nom_error(name: &str, data: &[u8], e: nom::Err<PErr<'_>>) -> TraceError {
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

pub(super) fn check_index(
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
