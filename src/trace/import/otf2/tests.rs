//! The reader's own part fuzzed: Score-P's 10-rank sample (fixtures/imported/otf2/scorep-10)
//! decoded once by the OTF2 library, then its definitions and events mutated as a library could
//! hand them over (any field any value, events dropped, doubled, swapped, moved to another rank,
//! definitions removed or redirected, cycles of calling contexts) and read by [`decoded`], then
//! matched and replayed: an error or a prediction, never a panic. A mutation of the archive's
//! files goes through the library first (tests/fuzz_smoke.rs: each run writes its 22 files,
//! about 30 ms); here a run costs the reader alone, so 10^6 runs take minutes:
//! `LOGGPS_FUZZ_OTF2_RUNS=1000000 cargo test --release --lib otf2::tests`.

use super::ffi::{Archive, Defs, Ev, RegionDef};
use super::{decoded, ranks};
use crate::model::Params;

/// xorshift64*: the same runs every time.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    /// An id or count: small ones (the sample's ids are), the edges, or any.
    fn u32(&mut self) -> u32 {
        match self.below(6) {
            0 | 1 => self.below(24) as u32,
            2 => u32::MAX,
            3 => u32::MAX - 1,
            4 => 1 << self.below(32),
            _ => self.next() as u32,
        }
    }

    /// A time, size or request.
    fn u64(&mut self) -> u64 {
        match self.below(5) {
            0 => self.below(24) as u64,
            1 => u64::MAX,
            2 => 1 << self.below(64),
            3 => self.next() >> self.below(64),
            _ => self.next(),
        }
    }

    fn u8(&mut self) -> u8 {
        match self.below(2) {
            0 => self.below(8) as u8,
            _ => self.next() as u8,
        }
    }
}

/// An event of any kind, its fields as [`Rng::u32`] and [`Rng::u64`] draw them.
fn any_event(r: &mut Rng) -> Ev {
    match r.below(16) {
        0 => Ev::Enter(r.u32()),
        1 => Ev::Leave(r.u32()),
        2 => Ev::ContextEnter(r.u32()),
        3 => Ev::ContextLeave(r.u32()),
        4 => Ev::Send {
            to: r.u32(),
            comm: r.u32(),
            tag: r.u32(),
            len: r.u64(),
        },
        5 => Ev::Isend {
            to: r.u32(),
            comm: r.u32(),
            tag: r.u32(),
            len: r.u64(),
            req: r.u64(),
        },
        6 => Ev::IsendComplete(r.u64()),
        7 => Ev::IrecvRequest(r.u64()),
        8 => Ev::Recv {
            from: r.u32(),
            comm: r.u32(),
            tag: r.u32(),
            len: r.u64(),
        },
        9 => Ev::Irecv {
            from: r.u32(),
            comm: r.u32(),
            tag: r.u32(),
            len: r.u64(),
            req: r.u64(),
        },
        10 | 11 => Ev::CollEnd {
            op: r.u8(),
            comm: r.u32(),
            root: r.u32(),
            sent: r.u64(),
            got: r.u64(),
        },
        12 => Ev::Cancelled(r.u64()),
        13 => Ev::NbcRequest(r.u64()),
        _ => Ev::NbcComplete {
            comm: r.u32(),
            root: r.u32(),
            sent: r.u64(),
            got: r.u64(),
            req: r.u64(),
        },
    }
}

/// `e` with one of its fields drawn anew.
fn one_field(e: Ev, r: &mut Rng) -> Ev {
    let k = r.below(5);
    let (a, b) = (r.u32(), r.u64());
    match e {
        Ev::Enter(_) => Ev::Enter(a),
        Ev::Leave(_) => Ev::Leave(a),
        Ev::ContextEnter(_) => Ev::ContextEnter(a),
        Ev::ContextLeave(_) => Ev::ContextLeave(a),
        Ev::IsendComplete(_) => Ev::IsendComplete(b),
        Ev::IrecvRequest(_) => Ev::IrecvRequest(b),
        Ev::Cancelled(_) => Ev::Cancelled(b),
        Ev::NbcRequest(_) => Ev::NbcRequest(b),
        Ev::Send { to, comm, tag, len }
        | Ev::Recv {
            from: to,
            comm,
            tag,
            len,
        } => {
            let (to, comm, tag, len) = match k {
                0 => (a, comm, tag, len),
                1 => (to, a, tag, len),
                2 => (to, comm, a, len),
                _ => (to, comm, tag, b),
            };
            match e {
                Ev::Send { .. } => Ev::Send { to, comm, tag, len },
                _ => Ev::Recv {
                    from: to,
                    comm,
                    tag,
                    len,
                },
            }
        }
        Ev::Isend {
            to,
            comm,
            tag,
            len,
            req,
        }
        | Ev::Irecv {
            from: to,
            comm,
            tag,
            len,
            req,
        } => {
            let (to, comm, tag, len, req) = match k {
                0 => (a, comm, tag, len, req),
                1 => (to, a, tag, len, req),
                2 => (to, comm, a, len, req),
                3 => (to, comm, tag, b, req),
                _ => (to, comm, tag, len, b),
            };
            match e {
                Ev::Isend { .. } => Ev::Isend {
                    to,
                    comm,
                    tag,
                    len,
                    req,
                },
                _ => Ev::Irecv {
                    from: to,
                    comm,
                    tag,
                    len,
                    req,
                },
            }
        }
        Ev::CollEnd {
            op,
            comm,
            root,
            sent,
            got,
        } => match k {
            0 => Ev::CollEnd {
                op: r.u8(),
                comm,
                root,
                sent,
                got,
            },
            1 => Ev::CollEnd {
                op,
                comm: a,
                root,
                sent,
                got,
            },
            2 => Ev::CollEnd {
                op,
                comm,
                root: a,
                sent,
                got,
            },
            3 => Ev::CollEnd {
                op,
                comm,
                root,
                sent: b,
                got,
            },
            _ => Ev::CollEnd {
                op,
                comm,
                root,
                sent,
                got: b,
            },
        },
        Ev::NbcComplete {
            comm,
            root,
            sent,
            got,
            req,
        } => match k {
            0 => Ev::NbcComplete {
                comm: a,
                root,
                sent,
                got,
                req,
            },
            1 => Ev::NbcComplete {
                comm,
                root: a,
                sent,
                got,
                req,
            },
            2 => Ev::NbcComplete {
                comm,
                root,
                sent: b,
                got,
                req,
            },
            3 => Ev::NbcComplete {
                comm,
                root,
                sent,
                got: b,
                req,
            },
            _ => Ev::NbcComplete {
                comm,
                root,
                sent,
                got,
                req: b,
            },
        },
    }
}

/// One mutation of the ranks' events.
fn mutate_events(events: &mut [Vec<(u64, Ev)>], r: &mut Rng) {
    let rank = r.below(events.len());
    let n = events[rank].len();
    if n == 0 {
        events[rank].push((r.u64(), any_event(r)));
        return;
    }
    let (i, j) = (r.below(n), r.below(n));
    let evs = &mut events[rank];
    match r.below(9) {
        0 => evs[i].1 = one_field(evs[i].1, r),
        1 => evs[i].1 = any_event(r),
        2 => evs[i].0 = r.u64(),
        3 => {
            evs.remove(i);
        }
        4 => evs.insert(j, evs[i]),
        5 => evs.swap(i, j),
        6 => evs.truncate(i),
        7 => {
            let e = evs.remove(i);
            let other = r.below(events.len());
            let at = r.below(events[other].len() + 1);
            events[other].insert(at, e);
        }
        _ => evs.insert(i, (r.u64(), any_event(r))),
    }
}

/// A key of `map` drawn by its sorted order (a HashMap's own order differs run to run).
fn key<V>(map: &std::collections::HashMap<u32, V>, r: &mut Rng) -> Option<u32> {
    let mut keys: Vec<u32> = map.keys().copied().collect();
    keys.sort();
    (!keys.is_empty()).then(|| keys[r.below(keys.len())])
}

/// One mutation of the definitions.
fn mutate_defs(d: &mut Defs, r: &mut Rng) {
    match r.below(10) {
        0 => {
            let names = [
                "MPI_COMM_WORLD",
                "MPI_Send",
                "MPI_Waitall",
                "MPI_Start",
                "main",
                "",
            ];
            let s = names[r.below(names.len())].to_string();
            match (key(&d.strings, r), r.below(3)) {
                (Some(k), 0) => drop(d.strings.remove(&k)),
                (Some(k), _) => drop(d.strings.insert(k, s)),
                (None, _) => drop(d.strings.insert(r.u32(), s)),
            }
        }
        1 => match key(&d.regions, r) {
            Some(k) if r.below(4) == 0 => drop(d.regions.remove(&k)),
            k => {
                let id = k.unwrap_or_else(|| r.u32());
                let mut def = d.regions.get(&id).copied().unwrap_or(RegionDef {
                    name: r.u32(),
                    role: 0,
                    paradigm: 0,
                    file: 0,
                    begin: 0,
                });
                match r.below(5) {
                    0 => def.name = r.u32(),
                    1 => def.role = r.u8(),
                    2 => def.paradigm = r.u8(),
                    3 => def.file = r.u32(),
                    _ => def.begin = r.u32(),
                }
                d.regions.insert(id, def);
            }
        },
        2 if !d.locations.is_empty() => {
            let i = r.below(d.locations.len());
            match r.below(4) {
                0 => drop(d.locations.remove(i)),
                1 => d.locations.push(d.locations[i]),
                2 => d.locations[i].0 = r.u64(),
                _ => d.locations[i].3 = r.u32(),
            }
        }
        3 => match key(&d.groups, r) {
            None => {}
            Some(k) => {
                let g = d.groups.get_mut(&k).expect("a key");
                match r.below(6) {
                    0 => g.0 = r.u8(),
                    1 => g.1 = r.u8(),
                    2 => g.2.clear(),
                    3 => g.2.push(r.u64()),
                    4 if !g.2.is_empty() => drop(g.2.remove(r.below(g.2.len()))),
                    _ => {
                        let (i, j) = (r.below(g.2.len()), r.below(g.2.len()));
                        if i < g.2.len() && j < g.2.len() {
                            g.2[i] = g.2[j];
                        }
                    }
                }
            }
        },
        4 if !d.comms.is_empty() => {
            let i = r.below(d.comms.len());
            match r.below(4) {
                0 => drop(d.comms.remove(i)),
                1 => d.comms.push(d.comms[i]),
                2 => d.comms[i].0 = r.u32(),
                _ => d.comms[i].2 = r.u32(),
            }
        }
        5 => {
            d.clock = match r.below(4) {
                0 => None,
                1 => Some((0, r.u64())),
                _ => Some((r.u64(), r.u64())),
            }
        }
        6 => {
            // A calling context, its parent perhaps itself or one of its children.
            let id = key(&d.contexts, r).unwrap_or_else(|| r.u32());
            let other = key(&d.contexts, r).unwrap_or(id);
            let parent = [id, other, r.u32()][r.below(3)];
            d.contexts.insert(id, (r.u32(), r.u32(), parent));
        }
        7 => drop(d.locations_in_code.insert(r.u32(), (r.u32(), r.u32()))),
        8 => {
            if let Some(k) = key(&d.groups_of_locations, r) {
                d.groups_of_locations.insert(k, (r.u32(), r.u8(), r.u32()));
            }
        }
        _ => {
            if let Some(k) = key(&d.nodes, r) {
                d.nodes.insert(k, (r.u32(), r.u32(), r.u32()));
            }
        }
    }
}

#[test]
fn mutated_definitions_and_events_give_an_error_or_a_prediction() {
    let anchor = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/imported/otf2/scorep-10/traces.otf2"
    );
    let mut archive = Archive::open(anchor)
        .expect("the OTF2 library reads the sample (apt-get install libopen-trace-format2-10)");
    let defs = std::mem::take(&mut archive.defs);
    let world = ranks(&defs).expect("the sample's ranks");
    let mut sample: Vec<Vec<(u64, Ev)>> = Vec::new();
    archive
        .events(&world, |_, evs| {
            sample.push(evs.to_vec());
            Ok(())
        })
        .expect("the sample's events");
    assert_eq!(sample.len(), 10, "the sample's ranks");
    assert!(sample.iter().all(|e| e.len() > 1000), "each rank's events");
    let runs: u64 = std::env::var("LOGGPS_FUZZ_OTF2_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3_000);
    let params = Params::preset("myrinet").unwrap();
    // Runs on threads of their own, each a stride of them, each with a pool of one thread for
    // the reader's and the replay's parallel parts: inside one pool, a run waiting on them
    // would take up another run on its stack, and the replay's threads of runs side by side
    // would spin against each other (20× slower).
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let one = |n: u64| {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15 ^ n.wrapping_mul(0xbf58_476d_1ce4_e5b9) | 1);
        let (mut d, mut evs) = (defs.clone(), sample.clone());
        for _ in 0..=r.below(4) {
            match r.below(3) {
                0 => mutate_defs(&mut d, &mut r),
                _ => mutate_events(&mut evs, &mut r),
            }
        }
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let t = decoded("fuzz", d, &mut |world, each| {
                for (i, e) in evs.iter().take(world.len()).enumerate() {
                    each(i, e)?;
                }
                Ok(())
            });
            let Ok(t) = t else { return false };
            if let Ok(g) = crate::graph::build(&t, "fuzz") {
                let _ = crate::replay::replay(&t, &g, &params, "fuzz", &|_| {});
            }
            true
        }));
        match run {
            Ok(accepted) => accepted as usize,
            Err(_) => panic!(
                "run {n} panicked (LOGGPS_FUZZ_OTF2_RUNS={} reaches it)",
                n + 1
            ),
        }
    };
    let parsed: usize = std::thread::scope(|s| {
        let each: Vec<_> = (0..threads)
            .map(|k| {
                s.spawn(move || {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build();
                    pool.expect("a thread pool")
                        .install(|| (k..runs).step_by(threads as usize).map(one).sum::<usize>())
                })
            })
            .collect();
        each.into_iter()
            .map(|h| h.join().expect("a run panicked"))
            .sum()
    });
    eprintln!("{parsed} of {runs} mutated OTF2 samples parsed");
    // Most mutations leave a readable trace: the mutations reach the reader's paths.
    assert!(parsed as u64 > runs / 4, "{parsed} of {runs} parsed");
}
