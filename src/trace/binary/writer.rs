//! Writing the binary encoding: records, chunks, the index and the trailer.

use super::*;

pub(super) fn put_uleb(out: &mut Vec<u8>, mut v: u64) {
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

pub(super) fn put_sleb(out: &mut Vec<u8>, v: i64) {
    put_uleb(out, ((v << 1) ^ (v >> 63)) as u64);
}

pub(super) fn put_str(out: &mut Vec<u8>, s: &str) {
    put_uleb(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

/// Appends event `i` of `ev` as one record, its gap measured from `prev_return`.
pub fn put_record(out: &mut Vec<u8>, ev: Rank<'_>, i: usize, prev_return: u64) {
    let e = ev.event(i);
    let flags = e.flags as u64 | e.pages.record_flags();
    let flagged =
        matches!(e.routine.shape(), Shape::Send | Shape::Isend | Shape::Coll) && flags != 0;
    out.push(e.routine as u8 | if flagged { 0x80 } else { 0 });
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
                put_uleb(out, flags);
            }
            if matches!(e.routine.shape(), Shape::Isend | Shape::Irecv) {
                put_uleb(out, e.id as u64);
            }
            if flagged {
                put_uleb(out, flags);
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
            put_uleb(out, flags);
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
            if flagged {
                put_uleb(out, e.flags as u64);
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
    pub(super) out: W,
    pub(super) offset: u64,
    pub(super) index: Vec<(u32, u64)>,
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
        let sets = || meta.params.iter().chain(&meta.other_params);
        // (a `bounce` of one value is the extras')
        let by_size = |param| sets().any(|p| at_sizes(p, param).is_some());
        let sending = by_size(SizeParam::RendezvousSender);
        let bouncing_clean = sending || sets().any(|p| p.bounce_clean.is_some());
        let waiting = bouncing_clean || sets().any(|p| p.wait.is_some());
        let draining = waiting || sets().any(|p| p.drained.is_some());
        let aliasing = draining || sets().any(|p| p.alias.is_some());
        let allocating = aliasing || sets().any(|p| p.alloc.is_some());
        let reducing = allocating || sets().any(|p| p.held_reduce.is_some());
        let sized = reducing || by_size(SizeParam::Copy) || by_size(SizeParam::Gamma);
        let oneway = sized || sets().any(|p| p.clean_oneway.is_some());
        let bouncing = oneway || sets().any(|p| bounce_at_sizes(p).is_some());
        let holding = bouncing || sets().any(|p| p.held.is_some());
        let cleaning = holding || sets().any(|p| p.clean.is_some());
        let posting = cleaning || sets().any(|p| p.post.is_some());
        let departing = posting || sets().any(|p| p.departs_upto.is_some());
        if let Some(p) = &meta.params
            && (p.class.is_some() || !meta.other_params.is_empty() || departing)
        {
            j.push(class_code(p.class));
            j.push(meta.other_params.len() as u8);
            for o in &meta.other_params {
                j.push(class_code(o.class));
                put_set(&mut j, Some(o));
            }
            // Each set's `departs_upto` (u64::MAX: none), where one has it.
            if departing {
                for q in std::iter::once(p).chain(&meta.other_params) {
                    j.extend_from_slice(&q.departs_upto.unwrap_or(u64::MAX).to_le_bytes());
                }
            }
            // Then each set's `post` (NaN: none), where one has it.
            if posting {
                for q in std::iter::once(p).chain(&meta.other_params) {
                    j.extend_from_slice(&q.post.unwrap_or(f64::NAN).to_le_bytes());
                }
            }
            // Then each set's `clean`, where one has it: its number of sizes (0: none), each
            // size and its share.
            if cleaning {
                put_by_size(&mut j, p, &meta.other_params, |q| q.clean);
            }
            // Then each set's `held` (NaN: none), where one has it.
            if holding {
                for q in std::iter::once(p).chain(&meta.other_params) {
                    j.extend_from_slice(&q.held.unwrap_or(f64::NAN).to_le_bytes());
                }
            }
            // Then each set's `bounce` at sizes, where one has it so: as the `clean`s (0 sizes:
            // none, or the one value in its extras).
            if bouncing {
                put_by_size(&mut j, p, &meta.other_params, bounce_at_sizes);
            }
            // Then each set's `clean_oneway`, where one has it: as the `clean`s.
            if oneway {
                put_by_size(&mut j, p, &meta.other_params, |q| q.clean_oneway);
            }
            // Then each set's `copy` and `gamma` at sizes, where one has either so: as the
            // `bounce`s.
            if sized {
                put_by_size(&mut j, p, &meta.other_params, |q| {
                    at_sizes(q, SizeParam::Copy)
                });
                put_by_size(&mut j, p, &meta.other_params, |q| {
                    at_sizes(q, SizeParam::Gamma)
                });
            }
            // Then each set's `held_reduce` (NaN: none), where one has it.
            if reducing {
                for q in std::iter::once(p).chain(&meta.other_params) {
                    j.extend_from_slice(&q.held_reduce.unwrap_or(f64::NAN).to_le_bytes());
                }
            }
            // Then each set's `alloc` (NaN: none), where one has it.
            if allocating {
                for q in std::iter::once(p).chain(&meta.other_params) {
                    j.extend_from_slice(&q.alloc.unwrap_or(f64::NAN).to_le_bytes());
                }
            }
            // Then each set's `alias` (NaN: none), where one has it.
            if aliasing {
                for q in std::iter::once(p).chain(&meta.other_params) {
                    j.extend_from_slice(&q.alias.unwrap_or(f64::NAN).to_le_bytes());
                }
            }
            // Then each set's `drained` at sizes, where one has it: as the `clean`s.
            if draining {
                put_by_size(&mut j, p, &meta.other_params, |q| q.drained);
            }
            // Then each set's `wait` (NaN: none), where one has it.
            if waiting {
                for q in std::iter::once(p).chain(&meta.other_params) {
                    j.extend_from_slice(&q.wait.unwrap_or(f64::NAN).to_le_bytes());
                }
            }
            // Then each set's `bounce_clean` at sizes, where one has it: as the `clean`s.
            if bouncing_clean {
                put_by_size(&mut j, p, &meta.other_params, |q| q.bounce_clean);
            }
            // Then each set's `rendezvous_sender` at sizes, where one has it so: as the
            // `bounce`s.
            if sending {
                put_by_size(&mut j, p, &meta.other_params, |q| {
                    at_sizes(q, SizeParam::RendezvousSender)
                });
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
            if let Some(inside) = m.in_call_ns {
                p.extend_from_slice(&inside.to_le_bytes());
                for v in m.own_req_ns.iter().flatten() {
                    p.extend_from_slice(&v.to_le_bytes());
                }
                if let (Some(_), Some(c)) = (m.own_req_ns, m.cpus) {
                    p.extend_from_slice(&u64::from(c).to_le_bytes());
                    let each = m.own_sampled.each();
                    if !each.is_empty() {
                        p.extend_from_slice(&(each.len() as u32).to_le_bytes());
                        for &(r, n, ns) in each {
                            p.push(r as u8);
                            p.extend_from_slice(&n.to_le_bytes());
                            p.extend_from_slice(&ns.to_le_bytes());
                        }
                    }
                }
            }
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

    /// Appends an N chunk: the names of rank `rank`'s sites.
    pub fn named(&mut self, rank: u32, named: &[Named]) -> io::Result<()> {
        let mut p = Vec::new();
        p.extend_from_slice(&(named.len() as u32).to_le_bytes());
        for n in named {
            put_str(&mut p, &n.function);
            put_str(&mut p, &n.file);
            put_uleb(&mut p, n.line as u64);
        }
        self.chunk(b'N', rank, &p)
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
        for (r, named) in s.named.iter().enumerate() {
            if !named.is_empty() {
                w.named(r as u32, named)?;
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
