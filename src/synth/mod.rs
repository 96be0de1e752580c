//! `loggps-predict synth`: synthetic traces of communication patterns at any scale, written rank
//! by rank straight into the binary format, so that no more than one rank's events are ever in
//! memory. The patterns are those of the field's benchmarks (LogGOPSim's dissemination and
//! linear all-to-all among them).

use crate::trace::binary::{Writer, put_record};
use crate::trace::{Completion, Event, Events, Meta, Push, Routine};
use std::io::{self, Write};

/// A communication pattern, repeated `iterations` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Pattern {
    /// Dissemination barrier rounds: in round i, Isend to rank + 2^i, Irecv from rank − 2^i, Waitall.
    Dissemination,
    /// Isend to the next rank, Irecv from the previous, Waitall.
    Ring,
    /// A 2-D periodic grid: Irecv/Isend with 4 neighbours, one Waitall.
    Halo2d,
    /// A 3-D periodic grid: Irecv/Isend with 6 neighbours, one Waitall.
    Halo3d,
    /// Binomial-tree broadcast from rank 0 with Send/Recv.
    Bcast,
    /// Linear all-to-all: with every other rank, in turn, Isend, Irecv, Waitall.
    Alltoall,
    /// Gaussian-elimination-like: per column, pivot candidates to the owner, the choice and the
    /// shrinking pivot row from the owner to everyone.
    Gauss,
    /// MPI_Allreduce of `bytes` on MPI_COMM_WORLD, the collective most solver loops end with
    /// (replayed by the algorithm Open MPI would pick unless `--coll measured`).
    Allreduce,
    /// A conjugate-gradient-like solver step: the 2-D halo exchange of `bytes`, then an 8-byte
    /// MPI_Allreduce (its dot product).
    Cg,
    /// Collectives on MPI_COMM_WORLD in turn: an MPI_Allreduce of `bytes`, an MPI_Barrier and
    /// an MPI_Bcast of `bytes` from rank 0 (three schedules for the replay to keep).
    Collectives,
}

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub pattern: Pattern,
    pub ranks: u32,
    pub iterations: u32,
    pub bytes: u64,
    /// Computation between iterations, ns.
    pub compute_ns: u64,
}

/// The traced duration of every generated call, ns (the replay replaces it anyway).
const CALL_NS: u64 = 1_000;
/// The gap between calls inside one iteration, ns.
const GAP_NS: u64 = 100;
/// Records per E chunk.
const CHUNK_RECORDS: usize = 1 << 16;

/// One rank's events as they are generated, flushed in chunks.
struct RankStream<'w, W: Write> {
    writer: &'w mut Writer<W>,
    rank: u32,
    events: Events,
    encoded: Vec<u8>,
    clock: u64,
    last_return: u64,
    next_req: u32,
    total: u64,
}

impl<W: Write> RankStream<'_, W> {
    fn event(&mut self, routine: Routine, gap: u64) -> Event {
        let t_call = self.clock + gap;
        self.clock = t_call + CALL_NS;
        Event::new(routine, t_call, self.clock)
    }

    fn req(&mut self) -> u32 {
        self.next_req += 1;
        self.next_req - 1
    }

    fn flush_if_full(&mut self) -> io::Result<()> {
        if self.events.len() >= CHUNK_RECORDS {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.events.is_empty() {
            return Ok(());
        }
        self.encoded.clear();
        let ev = self.events.rank(0);
        for i in 0..ev.len() {
            put_record(&mut self.encoded, ev, i, self.last_return);
            self.last_return = ev.t_return(i);
        }
        self.writer
            .events(self.rank, self.events.len() as u32, &self.encoded)?;
        self.total += self.events.len() as u64;
        self.events.clear();
        Ok(())
    }

    fn plain(&mut self, routine: Routine, gap: u64) -> io::Result<()> {
        let e = self.event(routine, gap);
        self.events.push(&e);
        self.flush_if_full()
    }

    fn send(
        &mut self,
        routine: Routine,
        peer: u32,
        tag: i32,
        bytes: u64,
        gap: u64,
    ) -> io::Result<()> {
        let mut e = self.event(routine, gap);
        (e.peer, e.tag, e.bytes) = (peer as i32, tag, bytes);
        self.events.push(&e);
        self.flush_if_full()
    }

    /// A nonblocking send or receive; returns its request.
    fn post(
        &mut self,
        routine: Routine,
        peer: u32,
        tag: i32,
        bytes: u64,
    ) -> io::Result<Completion> {
        let req = self.req();
        let mut e = self.event(routine, GAP_NS);
        (e.peer, e.tag, e.bytes, e.id) = (peer as i32, tag, bytes, req as i64);
        self.events.push(&e);
        self.flush_if_full()?;
        let recv = routine == Routine::Irecv;
        Ok(Completion {
            req,
            source: if recv { peer as i32 } else { -1 },
            tag: if recv { tag } else { -1 },
        })
    }

    fn waitall(&mut self, done: &[Completion]) -> io::Result<()> {
        let e = self.event(Routine::Waitall, GAP_NS);
        self.events.push_complete(&e, done);
        self.flush_if_full()
    }

    /// An MPI_Allreduce of `bytes` on MPI_COMM_WORLD, `gap` after the last call.
    fn allreduce(&mut self, bytes: u64, gap: u64) -> io::Result<()> {
        self.collective(Routine::Allreduce, -1, (bytes, bytes), gap)
    }

    /// A collective `routine` on MPI_COMM_WORLD from `root` (-1: none) sending and receiving
    /// `(bytes, recv_bytes)`, `gap` after the last call.
    fn collective(
        &mut self,
        routine: Routine,
        root: i32,
        (bytes, recv_bytes): (u64, u64),
        gap: u64,
    ) -> io::Result<()> {
        let mut e = self.event(routine, gap);
        (e.peer, e.bytes) = (root, bytes);
        self.events.push_coll(&e, recv_bytes, &[]);
        self.flush_if_full()
    }
}

/// The side lengths of a `dims`-dimensional grid of `p` ranks, as square as divisors allow.
fn grid(p: u32, dims: usize) -> Vec<u32> {
    let mut sides = Vec::with_capacity(dims);
    let mut rest = p;
    for d in 0..dims {
        let target = (rest as f64).powf(1.0 / (dims - d) as f64).round().max(1.0) as u32;
        let side = (1..=target.max(1))
            .rev()
            .find(|&s| rest.is_multiple_of(s))
            .unwrap_or(1);
        sides.push(side);
        rest /= side;
    }
    sides[dims - 1] *= rest;
    sides
}

/// Generates one rank's iterations.
fn rank_events<W: Write>(s: &Spec, st: &mut RankStream<'_, W>) -> io::Result<()> {
    let (p, r) = (s.ranks, st.rank);
    let mut done = Vec::new();
    for it in 0..s.iterations {
        let first_gap = s.compute_ns;
        let tag = it as i32;
        match s.pattern {
            Pattern::Dissemination => {
                let rounds = 32 - (p.max(2) - 1).leading_zeros();
                for i in 0..rounds {
                    let d = 1u32 << i;
                    st.clock += if i == 0 { first_gap } else { 0 };
                    done.clear();
                    done.push(st.post(Routine::Isend, (r + d) % p, i as i32, s.bytes)?);
                    done.push(st.post(Routine::Irecv, (r + p - d % p) % p, i as i32, s.bytes)?);
                    st.waitall(&done)?;
                }
            }
            Pattern::Ring => {
                st.clock += first_gap;
                done.clear();
                done.push(st.post(Routine::Isend, (r + 1) % p, tag, s.bytes)?);
                done.push(st.post(Routine::Irecv, (r + p - 1) % p, tag, s.bytes)?);
                st.waitall(&done)?;
            }
            Pattern::Halo2d | Pattern::Halo3d => {
                let dims = if s.pattern == Pattern::Halo2d { 2 } else { 3 };
                st.clock += first_gap;
                halo(s, st, dims, &mut done)?;
            }
            Pattern::Cg => {
                st.clock += first_gap;
                halo(s, st, 2, &mut done)?;
                st.allreduce(8, GAP_NS)?;
            }
            Pattern::Bcast => {
                // Binomial tree from 0: receive from the parent (clear the lowest set bit), then
                // send to r + 2^j for every 2^j below that bit.
                let low = if r == 0 {
                    p.next_power_of_two()
                } else {
                    1 << r.trailing_zeros()
                };
                st.clock += first_gap;
                if r != 0 {
                    let mut e = st.event(Routine::Recv, GAP_NS);
                    (e.peer, e.tag, e.bytes) = ((r - low) as i32, tag, s.bytes);
                    st.events.push(&e);
                    st.flush_if_full()?;
                }
                let mut j = low >> 1;
                while j > 0 {
                    if r + j < p {
                        st.send(Routine::Send, r + j, tag, s.bytes, GAP_NS)?;
                    }
                    j >>= 1;
                }
            }
            Pattern::Alltoall => {
                st.clock += first_gap;
                for j in 1..p {
                    done.clear();
                    done.push(st.post(Routine::Isend, (r + j) % p, tag, s.bytes)?);
                    done.push(st.post(Routine::Irecv, (r + p - j) % p, tag, s.bytes)?);
                    st.waitall(&done)?;
                }
            }
            Pattern::Allreduce => st.allreduce(s.bytes, first_gap)?,
            Pattern::Collectives => {
                st.allreduce(s.bytes, first_gap)?;
                st.collective(Routine::Barrier, -1, (0, 0), GAP_NS)?;
                st.collective(Routine::Bcast, 0, (s.bytes, 0), GAP_NS)?;
            }
            Pattern::Gauss => {
                // Column `it` of an n = iterations matrix, rows `bytes / 8` doubles wide at most.
                let owner = it % p;
                st.clock += first_gap;
                if r == owner {
                    for q in (0..p).filter(|&q| q != owner) {
                        let mut e = st.event(Routine::Recv, GAP_NS);
                        (e.peer, e.tag, e.bytes) = (q as i32, 1, 16);
                        st.events.push(&e);
                        st.flush_if_full()?;
                    }
                    let row = s
                        .bytes
                        .saturating_sub(s.bytes * it as u64 / s.iterations.max(1) as u64)
                        .max(8);
                    for q in (0..p).filter(|&q| q != owner) {
                        st.send(Routine::Send, q, 2, 4, GAP_NS)?;
                        st.send(Routine::Send, q, 3, row, GAP_NS)?;
                    }
                } else {
                    st.send(Routine::Send, owner, 1, 16, GAP_NS)?;
                    let row = s
                        .bytes
                        .saturating_sub(s.bytes * it as u64 / s.iterations.max(1) as u64)
                        .max(8);
                    for (t, b) in [(2, 4), (3, row)] {
                        let mut e = st.event(Routine::Recv, GAP_NS);
                        (e.peer, e.tag, e.bytes) = (owner as i32, t, b);
                        st.events.push(&e);
                        st.flush_if_full()?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// One exchange with the neighbours on a periodic grid of `dims` dimensions: an Irecv and an
/// Isend of `bytes` each way along each dimension, then one Waitall.
fn halo<W: Write>(
    s: &Spec,
    st: &mut RankStream<'_, W>,
    dims: usize,
    done: &mut Vec<Completion>,
) -> io::Result<()> {
    let sides = grid(s.ranks, dims);
    let mut coord = Vec::with_capacity(dims);
    let mut rest = st.rank;
    for &side in &sides {
        coord.push(rest % side);
        rest /= side;
    }
    let rank_of = |c: &[u32]| {
        c.iter()
            .zip(&sides)
            .rev()
            .fold(0u32, |acc, (&x, &side)| acc * side + x)
    };
    done.clear();
    for d in 0..dims {
        for (dir, forward) in [(1 % sides[d], true), (sides[d] - 1, false)] {
            let mut c = coord.clone();
            c[d] = (c[d] + dir) % sides[d];
            let peer = rank_of(&c);
            // Tags name the direction, so opposite neighbours that coincide still match.
            let t = (2 * d + !forward as usize) as i32;
            let back = (2 * d + forward as usize) as i32;
            done.push(st.post(Routine::Irecv, peer, back, s.bytes)?);
            done.push(st.post(Routine::Isend, peer, t, s.bytes)?);
        }
    }
    st.waitall(done)
}

/// The number of events the spec generates (for progress and to check limits up front).
pub fn count_events(s: &Spec) -> u64 {
    let (p, it) = (s.ranks as u64, s.iterations as u64);
    let per_iteration = match s.pattern {
        Pattern::Dissemination => p * 3 * (64 - (p.max(2) - 1).leading_zeros()) as u64,
        Pattern::Ring => p * 3,
        Pattern::Halo2d => p * 9,
        Pattern::Halo3d => p * 13,
        Pattern::Bcast => 2 * (p - 1),
        Pattern::Alltoall => p * 3 * (p - 1),
        Pattern::Gauss => 6 * (p - 1),
        Pattern::Allreduce => p,
        Pattern::Cg => p * 10,
        Pattern::Collectives => p * 3,
    };
    2 * p + it * per_iteration
}

/// Writes the trace of `spec` to `out`; `progress` is told the number of ranks written.
pub fn write(spec: &Spec, out: impl Write, progress: &dyn Fn(u64)) -> io::Result<u64> {
    let meta = Meta {
        library: format!("loggps-predict synth {:?}", spec.pattern).to_lowercase(),
        ..Meta::default()
    };
    let mut writer = Writer::new(out, spec.ranks, &meta)?;
    let mut total = 0;
    let mut events = Events::single();
    let mut encoded = Vec::new();
    for rank in 0..spec.ranks {
        let mut st = RankStream {
            writer: &mut writer,
            rank,
            events,
            encoded,
            clock: 0,
            last_return: 0,
            next_req: 0,
            total: 0,
        };
        st.plain(Routine::Init, 0)?;
        rank_events(spec, &mut st)?;
        st.plain(Routine::Finalize, GAP_NS)?;
        st.flush()?;
        total += st.total;
        (events, encoded) = (st.events, st.encoded);
        if rank % 1024 == 0 {
            progress(rank as u64);
        }
    }
    writer.finish()?;
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{graph, model::Params, replay, trace};

    fn generate(pattern: Pattern, ranks: u32, iterations: u32) -> trace::Trace {
        let spec = Spec {
            pattern,
            ranks,
            iterations,
            bytes: 1000,
            compute_ns: 5000,
        };
        let mut buf = Vec::new();
        let n = write(&spec, &mut buf, &|_| {}).unwrap();
        assert_eq!(n, count_events(&spec), "{pattern:?}");
        trace::parse("synth", &buf).unwrap()
    }

    #[test]
    fn every_pattern_is_a_valid_matched_deadlock_free_trace() {
        let p = Params::preset("myrinet").unwrap();
        for &pattern in <Pattern as clap::ValueEnum>::value_variants() {
            for ranks in [2, 5, 8, 12] {
                let t = generate(pattern, ranks, 3);
                let g = graph::build(&t, "synth")
                    .unwrap_or_else(|e| panic!("{pattern:?} P={ranks}: {e}"));
                let pred = replay::replay(&t, &g, &p, "synth", &|_| {})
                    .unwrap_or_else(|e| panic!("{pattern:?} P={ranks}: {e}"));
                assert!(pred.predicted_ns > 0.0);
                // Every collective is costed by its algorithm, none replayed as measured.
                assert!(
                    pred.warnings.is_empty(),
                    "{pattern:?} P={ranks}: {:?}",
                    pred.warnings
                );
            }
        }
    }

    #[test]
    fn event_counts_match_loggopsim_cases() {
        // 262,144-rank dissemination: 18 rounds of 3 events; LogGOPSim's case has 14.2 M events.
        let d = Spec {
            pattern: Pattern::Dissemination,
            ranks: 262_144,
            iterations: 1,
            bytes: 8,
            compute_ns: 0,
        };
        assert_eq!(count_events(&d), 262_144 * (2 + 54));
        // 1,024-rank linear all-to-all: 3 events per peer; LogGOPSim's case has 3.1 M events.
        let a = Spec {
            pattern: Pattern::Alltoall,
            ranks: 1024,
            iterations: 1,
            bytes: 8,
            compute_ns: 0,
        };
        assert_eq!(count_events(&a), 1024 * (2 + 3 * 1023));
        // A CG step on 16 ranks: 4 Irecv, 4 Isend, a Waitall and an Allreduce a rank, written.
        let cg = Spec {
            pattern: Pattern::Cg,
            ranks: 16,
            iterations: 3,
            bytes: 8,
            compute_ns: 0,
        };
        let mut buf = Vec::new();
        assert_eq!(write(&cg, &mut buf, &|_| {}).unwrap(), 16 * (2 + 3 * 10));
        let t = trace::parse("cg", &buf).unwrap();
        let allreduces = (0..16)
            .flat_map(|r| (0..t.rank(r).len()).map(move |i| (r, i)))
            .filter(|&(r, i)| t.rank(r).routine(i) == Routine::Allreduce)
            .count();
        assert_eq!(allreduces, 16 * 3);
    }

    #[test]
    fn grids_factor_the_ranks() {
        assert_eq!(grid(12, 2).iter().product::<u32>(), 12);
        assert_eq!(grid(64, 3), vec![4, 4, 4]);
        assert_eq!(grid(7, 2).iter().product::<u32>(), 7);
    }
}
