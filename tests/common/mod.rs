//! Random valid traces for property and mutation tests: programs built step by step so that
//! every message matches and nothing deadlocks, whatever the eager limit.

#![allow(dead_code)]

use loggps_predict::trace::{
    Completion, Event, Events, FLAG_ANY_SOURCE, PEER_ANY, Push, RecvHalf, Routine, Trace,
};

/// A small deterministic generator (xorshift64*), so a failing seed reproduces.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct Builder {
    trace: Trace,
    ranks: Vec<Events>,
    clock: Vec<u64>,
    next_req: Vec<u32>,
    rng: Rng,
}

impl Builder {
    fn times(&mut self, r: usize) -> (u64, u64) {
        let call = self.clock[r] + self.rng.below(5_000);
        let ret = call + self.rng.below(50_000);
        self.clock[r] = ret;
        (call, ret)
    }
    fn event(&mut self, r: usize, routine: Routine) -> Event {
        let (c, t) = self.times(r);
        Event::new(routine, c, t)
    }
    fn req(&mut self, r: usize) -> u32 {
        self.next_req[r] += 1;
        self.next_req[r] - 1
    }
}

const SIZES: [u64; 6] = [0, 100, 5_000, 12_000, 20_000, 70_000];

/// A random valid trace of 2 to `max_ranks` ranks and up to `max_steps` steps.
pub fn random_trace(seed: u64, max_ranks: u64, max_steps: u64) -> Trace {
    let mut rng = Rng::new(seed);
    let p = 2 + rng.below(max_ranks - 1) as usize;
    let steps = rng.below(max_steps + 1);
    let mut b = Builder {
        trace: Trace::new(p),
        ranks: (0..p).map(|_| Events::single()).collect(),
        clock: (0..p).map(|_| rng.below(1_000)).collect(),
        next_req: vec![0; p],
        rng,
    };
    b.trace.meta.library = "random".into();
    for r in 0..p {
        let e = b.event(r, Routine::Init);
        b.ranks[r].push(&e);
    }
    for step in 0..steps {
        let tag = (step % 1000) as i32;
        let i = b.rng.below(p as u64) as usize;
        let j = (i + 1 + b.rng.below(p as u64 - 1) as usize) % p;
        let k = SIZES[b.rng.below(SIZES.len() as u64) as usize];
        match b.rng.below(5) {
            0 => b.clock[i] += b.rng.below(100_000),
            1 => {
                let routine = [
                    Routine::Send,
                    Routine::Ssend,
                    Routine::Bsend,
                    Routine::Rsend,
                ][b.rng.below(4) as usize];
                let mut s = b.event(i, routine);
                (s.bytes, s.peer, s.tag) = (k, j as i32, tag);
                b.ranks[i].push(&s);
                let mut v = b.event(j, Routine::Recv);
                (v.bytes, v.peer, v.tag) = (k, i as i32, tag);
                if b.rng.below(2) == 0 {
                    v.flags = FLAG_ANY_SOURCE;
                }
                b.ranks[j].push(&v);
            }
            2 => {
                let (sr, rr) = (b.req(i), b.req(j));
                let routine = [Routine::Isend, Routine::Issend][b.rng.below(2) as usize];
                let mut s = b.event(i, routine);
                (s.bytes, s.peer, s.tag, s.id) = (k, j as i32, tag, sr as i64);
                b.ranks[i].push(&s);
                let mut v = b.event(j, Routine::Irecv);
                let wild = b.rng.below(2) == 0;
                (v.bytes, v.peer, v.tag, v.id) =
                    (k, if wild { PEER_ANY } else { i as i32 }, tag, rr as i64);
                if wild {
                    v.flags = FLAG_ANY_SOURCE;
                }
                b.ranks[j].push(&v);
                let w = b.event(i, Routine::Wait);
                b.ranks[i].push_complete(
                    &w,
                    &[Completion {
                        req: sr,
                        source: -1,
                        tag: -1,
                    }],
                );
                let w = b.event(j, Routine::Waitall);
                b.ranks[j].push_complete(
                    &w,
                    &[Completion {
                        req: rr,
                        source: i as i32,
                        tag,
                    }],
                );
            }
            3 => {
                for (a, c) in [(i, j), (j, i)] {
                    let mut e = b.event(a, Routine::Sendrecv);
                    (e.bytes, e.peer, e.tag) = (k, c as i32, tag);
                    b.ranks[a].push_sendrecv(
                        &e,
                        RecvHalf {
                            bytes: k,
                            source: c as i32,
                            tag,
                        },
                    );
                }
            }
            _ => {
                let routine =
                    [Routine::Barrier, Routine::Allreduce, Routine::Bcast][b.rng.below(3) as usize];
                let root = if routine == Routine::Bcast {
                    i as i32
                } else {
                    -1
                };
                for r in 0..p {
                    let mut e = b.event(r, routine);
                    (e.bytes, e.peer) = (k, root);
                    b.ranks[r].push_coll(&e, k, &[]);
                }
            }
        }
    }
    for r in 0..p {
        let e = b.event(r, Routine::Finalize);
        b.ranks[r].push(&e);
    }
    b.trace.events = Events::concat(b.ranks);
    b.trace
}
