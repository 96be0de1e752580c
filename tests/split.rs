//! The replay split over processes (`replay::split`), its processes as threads of this test
//! ([`Threads`]): for K = 1…4 process 0's prediction is the single replay's, bit for bit, on
//! every synthetic pattern, the fixtures, recorded traces and random traces, under LogGPS
//! (progress asynchronous and at calls), LogGP, modeled and measured collectives, several
//! parameter sets by link; a deadlock
//! gives the single replay's error on every process; an unfinished trace the same warnings. The same over MPI processes: tests/split/run.sh.

mod common;

use loggps_predict::collectives::traced::Choice;
use loggps_predict::graph;
use loggps_predict::model::{BySize, Class, LogGp, Model, Params, SizeParam};
use loggps_predict::replay::split::{Exchange, SplitStats, Threads, owned};
use loggps_predict::replay::{self, Links, Prediction, Remap, Traffic};
use loggps_predict::synth::{Pattern, Spec};
use loggps_predict::trace::{self, Trace};
use proptest::prelude::*;

/// Several parameter sets combined per link (the model's §12): the sets, and where the ranks
/// are placed.
type Placed<'a> = Option<(&'a [Params], &'a Remap)>;

/// The links of `placed` for `t` (a whole trace, or one process's part with the whole
/// trace's `traffic`).
fn links(t: &Trace, placed: Placed<'_>, traffic: Traffic) -> Option<Links> {
    placed.map(|(sets, remap)| Links::new(sets.to_vec(), t, remap, traffic).unwrap())
}

/// One process's prediction, its statistics and the links it chose its sets by.
type Replayed = (Prediction, SplitStats, Option<Links>);

/// Every process's result of `trace` split over `k` thread-processes.
fn split(
    t: &Trace,
    model: &Model,
    placed: Placed<'_>,
    coll: &Choice,
    k: usize,
) -> Vec<Result<Replayed, String>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = Threads::group(k)
            .into_iter()
            .map(|ex| {
                // A pool of its own, as a process has: processes sharing one pool's threads
                // could wait on each other inside it.
                s.spawn(move || {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(2);
                    pool.build().unwrap().install(|| {
                        // Its own ranks alone, as `trace::load_ranks` gives them.
                        let mut part = t.clone();
                        part.keep(owned(ex.process(), k, t.nranks()));
                        let census = graph::split::census(&part, &ex).unwrap();
                        let g = graph::split::divide(&part, "t", &census, &ex).unwrap();
                        let traffic = Traffic::gather(&part, &ex).unwrap();
                        let links = links(&part, placed, traffic);
                        let l = links.as_ref();
                        replay::replay_split(&part, &g, model, l, coll, "t", &|_| {}, &ex)
                            .map(|(p, s)| (p, s, links))
                            .map_err(|e| e.to_string())
                    })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn single(
    t: &Trace,
    model: &Model,
    links: Option<&Links>,
    coll: &Choice,
) -> Result<Prediction, String> {
    let g = graph::build(t, "t").unwrap();
    replay::replay_linked(t, &g, model, links, coll, "t", &|_| {}, None).map_err(|e| e.to_string())
}

/// Process 0's prediction is the single replay's for K = 1…4, the others' errors are errors
/// where it fails; gives the stats of each K's processes.
fn same_for_every_k(what: &str, t: &Trace, model: &Model, coll: &Choice) -> Vec<Vec<SplitStats>> {
    same_placed(what, t, model, None, coll)
}

/// [`same_for_every_k`] with the sets of `placed`: every process's links choose as the whole
/// trace's do, and warn and count bytes alike (from the traffic gathered).
fn same_placed(
    what: &str,
    t: &Trace,
    model: &Model,
    placed: Placed<'_>,
    coll: &Choice,
) -> Vec<Vec<SplitStats>> {
    let whole = links(t, placed, Traffic::of(t));
    let one = single(t, model, whole.as_ref(), coll);
    let mut stats = Vec::new();
    for k in 1..=4 {
        let all = split(t, model, placed, coll, k);
        for x in all.iter().flatten() {
            let (a, b) = (x.2.as_ref(), whole.as_ref());
            assert_eq!(
                a.map(|l| &l.warnings),
                b.map(|l| &l.warnings),
                "{what}, K = {k}"
            );
            assert_eq!(
                a.map(Links::bytes_by_set),
                b.map(Links::bytes_by_set),
                "{what}, K = {k}"
            );
        }
        match (&one, &all[0]) {
            (Ok(a), Ok((b, _, _))) => assert_eq!(a, b, "{what}, K = {k}"),
            (Err(a), Err(b)) => assert_eq!(a, b, "{what}, K = {k}"),
            (a, b) => panic!("{what}, K = {k}: {a:?} against {b:?}"),
        }
        assert!(
            all.iter().all(|x| x.is_ok() == one.is_ok()),
            "{what}, K = {k}: {all:?}"
        );
        stats.push(
            all.into_iter()
                .filter_map(Result::ok)
                .map(|x| x.1)
                .collect(),
        );
    }
    stats
}

fn models() -> Vec<(&'static str, Model)> {
    let myrinet = Params::preset("myrinet").unwrap();
    vec![
        ("LogGPS", Model::LogGps(myrinet)),
        (
            "LogGPS, progress at calls, drained",
            Model::LogGps(Params {
                progress_at_calls: true,
                drained: loggps_predict::model::BySize::new(
                    loggps_predict::model::SizeParam::Drained,
                    &[(8, 300.0), (65536, 2000.0)],
                )
                .ok(),
                ..myrinet
            }),
        ),
        (
            "LogGP",
            Model::LogGp(LogGp {
                L: 1160.0,
                o: 6550.0,
                g: 9000.0,
                G: 15.48,
                gamma: 0.0,
            }),
        ),
    ]
}

fn synthetic(pattern: Pattern, ranks: u32, bytes: u64) -> Trace {
    let spec = Spec {
        pattern,
        ranks,
        iterations: 3,
        bytes,
        compute_ns: 5000,
    };
    let mut buf = Vec::new();
    loggps_predict::synth::write(&spec, &mut buf, &|_| {}).unwrap();
    trace::parse("synth", &buf).unwrap()
}

#[test]
fn every_synthetic_pattern_splits_bit_for_bit() {
    for &pattern in <Pattern as clap::ValueEnum>::value_variants() {
        for bytes in [100, 100_000] {
            let t = synthetic(pattern, 11, bytes);
            for (name, model) in models() {
                for coll in [Choice::tuned(), Choice::measured()] {
                    let what = format!("{pattern:?} of {bytes} bytes, {name}");
                    let stats = same_for_every_k(&what, &t, &model, &coll);
                    // One process sends nothing; with more, each names its own ranks.
                    assert_eq!(stats[0][0].bytes_sent, 0, "{what}");
                    for (k, s) in stats.iter().enumerate() {
                        let ranks: usize = s.iter().map(|x| x.ranks).sum();
                        assert_eq!((s.len(), ranks), (k + 1, 11), "{what}");
                    }
                }
            }
        }
    }
}

/// Several parameter sets (the model's §12): 11 ranks placed 3 a node (`--ranks-per-node 3`),
/// Myrinet's set within a node and Fast Ethernet's between nodes (its eager limit raised to
/// 64 KiB, so that 20,000 bytes go by rendezvous within a node and eagerly between nodes): most
/// messages between two processes' ranks cross nodes, their ghosts costed by the network's set.
#[test]
fn several_sets_split_bit_for_bit() {
    let node = Params {
        class: Some(Class::Node),
        ..Params::preset("myrinet").unwrap()
    };
    let network = Params {
        class: Some(Class::Network),
        S: 65_536,
        ..Params::preset("fast-ethernet").unwrap()
    };
    let sets = [node, network];
    let remap = Remap::PerNode(3);
    use Pattern::*;
    for pattern in [Ring, Halo2d, Alltoall, Gauss, Cg, Collectives] {
        for bytes in [100, 20_000] {
            let t = synthetic(pattern, 11, bytes);
            let model = Model::LogGps(node);
            // The sets matter: one set alone predicts otherwise.
            let whole = links(&t, Some((&sets, &remap)), Traffic::of(&t));
            assert_ne!(
                single(&t, &model, whole.as_ref(), &Choice::tuned()).map(|p| p.predicted_ns),
                single(&t, &model, None, &Choice::tuned()).map(|p| p.predicted_ns),
                "{pattern:?} of {bytes} bytes"
            );
            for progress in [false, true] {
                let model = Model::LogGps(Params {
                    progress_at_calls: progress,
                    ..node
                });
                for coll in [Choice::tuned(), Choice::measured()] {
                    let what = format!("{pattern:?} of {bytes} bytes, two sets, {progress}");
                    same_placed(&what, &t, &model, Some((&sets, &remap)), &coll);
                }
            }
        }
    }
}

#[test]
fn fixtures_and_recorded_traces_split_bit_for_bit() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![
        root.join("fixtures/all-routines.txt"),
        root.join("fixtures/sites.txt"),
    ];
    for f in std::fs::read_dir(root.join("fixtures/rtt")).unwrap() {
        files.push(f.unwrap().path());
    }
    for name in [
        "gauss-n256-p2-s4096-original-nonblocking-r1.bin",
        "gauss-n1024-p4-s4096-fragmented-r1.bin",
        "gauss-n1024-p4-s65536-original-r1.bin",
    ] {
        files.push(root.join("traces").join(name));
    }
    for f in files {
        let t = trace::parse(&f.display().to_string(), &std::fs::read(&f).unwrap()).unwrap();
        let embedded = t.meta.params.unwrap_or(Params::preset("myrinet").unwrap());
        let models = [
            Model::LogGps(embedded),
            Model::LogGps(Params {
                progress_at_calls: true,
                ..embedded
            }),
        ];
        for model in models {
            let what = f.display().to_string();
            same_for_every_k(&what, &t, &model, &Choice::tuned());
        }
    }
}

/// Collectives whose records the tracer flagged `clean` (the model's §13) split bit for bit: a
/// process learns the other processes' ranks' flags with their records. Four ranks, 16 KiB
/// (rendezvous under Myrinet), `clean` 0.5: a Bcast whose root is flagged, an Allgather with
/// ranks 1 and 2 flagged, a Gather with its leaves flagged; predicted otherwise than unflagged.
#[test]
fn clean_collectives_split_bit_for_bit() {
    let trace = |flag: &str| {
        let mut t = "loggps-trace 1\nranks 4\n".to_string();
        for r in 0..4 {
            let f = |on: bool| if on { flag } else { "" };
            let (root, leaf) = (r == 0, r != 0);
            let (bcast, gather) = match root {
                true => ("bytes=16384", "bytes=16384 recv_bytes=65536"),
                false => ("recv_bytes=16384", "bytes=16384"),
            };
            t += &format!(
                "{r} MPI_Init 0 0\n{r} MPI_Bcast 0 60 root=0 {bcast}{}\n\
                 {r} MPI_Allgather 70 90 bytes=16384 recv_bytes=65536{}\n\
                 {r} MPI_Gather 100 120 root=0 {gather}{}\n{r} MPI_Finalize 130 140\n",
                f(root),
                f(r == 1 || r == 2),
                f(leaf)
            );
        }
        trace::parse("clean.txt", t.as_bytes()).unwrap()
    };
    let model = myrinet_with(SizeParam::Clean, 0.5);
    let (flagged, plain) = (trace(" flags=clean"), trace(""));
    let (with, without) = flagged_split_alike("clean collectives", (&flagged, &plain), &model);
    assert!(with < without, "the flags cost nothing");
}

/// The Myrinet preset with `param` at `v` at every size.
fn myrinet_with(param: SizeParam, v: f64) -> Model {
    let v = Some(BySize::one(param, v).unwrap());
    let mut p = Params::preset("myrinet").unwrap();
    match param {
        SizeParam::Clean => p.clean = v,
        SizeParam::Bounce => p.bounce = v,
        _ => unreachable!("a parameter these tests set"),
    }
    Model::LogGps(p)
}

/// Checks that a trace of flagged records splits bit for bit under `model`, and returns its
/// single-process runtime and that of the same trace unflagged, ns.
fn flagged_split_alike(
    what: &str,
    (flagged, plain): (&Trace, &Trace),
    model: &Model,
) -> (f64, f64) {
    same_for_every_k(what, flagged, model, &Choice::tuned());
    let end = |t: &Trace| {
        single(t, model, None, &Choice::tuned())
            .unwrap()
            .predicted_ns
    };
    (end(flagged), end(plain))
}

/// Collectives whose receive buffers the tracer flagged `bounced` or `reduced` (the model's §13)
/// split bit for bit, as `clean` ones: on two ranks a flagged rank's peer ends later too, so
/// each process must learn the other's flags. 16 KiB (rendezvous under Myrinet), `bounce` 0.5:
/// a Bcast whose leaf is `reduced`, a Gather whose root is `bounced`, an Allgather with rank 1
/// `reduced`; predicted later than unflagged.
#[test]
fn bounced_and_reduced_collectives_split_bit_for_bit() {
    let trace = |on: bool| {
        let mut t = "loggps-trace 1\nranks 2\n".to_string();
        for r in 0..2 {
            let f = |flag: &str, here: bool| match on && here {
                true => format!(" flags={flag}"),
                false => String::new(),
            };
            let (bcast, gather) = match r == 0 {
                true => ("bytes=16384", "bytes=16384 recv_bytes=32768"),
                false => ("recv_bytes=16384", "bytes=16384"),
            };
            t += &format!(
                "{r} MPI_Init 0 0\n{r} MPI_Bcast 0 60 root=0 {bcast}{}\n\
                 {r} MPI_Gather 100 120 root=0 {gather}{}\n\
                 {r} MPI_Allgather 130 150 bytes=16384 recv_bytes=32768{}\n\
                 {r} MPI_Finalize 160 170\n",
                f("reduced", r == 1),
                f("bounced", r == 0),
                f("reduced", r == 1)
            );
        }
        trace::parse("reduced.txt", t.as_bytes()).unwrap()
    };
    let model = myrinet_with(SizeParam::Bounce, 0.5);
    let (flagged, plain) = (trace(true), trace(false));
    let what = "bounced and reduced collectives";
    let (with, without) = flagged_split_alike(what, (&flagged, &plain), &model);
    assert!(with > without, "the flags cost nothing");
}

/// Messages whose buffers' offsets alias (the model's §9) split bit for bit: a process learns
/// the other processes' ranks' send buffers' offsets with their records, and its receives'
/// senders learn its receive buffers'. A ring of four ranks, each sending 16 KiB (rendezvous
/// under Myrinet) to the next from offset 0 (`MPI_Isend`) and receiving from the previous
/// into offset 16 (`MPI_Recv`), the last pair by `MPI_Sendrecv`; `alias` 0.5; predicted
/// later than with the receives at offset 32.
#[test]
fn aliased_messages_split_bit_for_bit() {
    let trace = |recv: u32| {
        let mut t = "loggps-trace 1\nranks 4\n".to_string();
        for r in 0..4 {
            let (next, prev) = ((r + 1) % 4, (r + 3) % 4);
            t += &format!(
                "{r} MPI_Init 0 0\n\
                 {r} MPI_Isend 0 10 bytes=16384 peer={next} tag=1 req=0 send_page=0\n\
                 {r} MPI_Recv 10 50 bytes=16384 peer={prev} tag=1 recv_page={recv}\n\
                 {r} MPI_Wait 60 70 done=0:-1:-1\n\
                 {r} MPI_Sendrecv 80 120 bytes=16384 peer={next} tag=2 recv_bytes=16384 \
                 source={prev} recv_tag=2 recv_page={recv} send_page=4090\n\
                 {r} MPI_Finalize 130 140\n"
            );
        }
        trace::parse("aliased.txt", t.as_bytes()).unwrap()
    };
    let model = Model::LogGps(Params {
        alias: Some(0.5),
        ..Params::preset("myrinet").unwrap()
    });
    // The Sendrecv's receive buffer at 16 lies 22 past its send buffer's 4090, at 32 38 past.
    let (aliased, apart) = (trace(16), trace(32));
    same_for_every_k("aliased messages", &aliased, &model, &Choice::tuned());
    let end = |t: &Trace| {
        single(t, &model, None, &Choice::tuned())
            .unwrap()
            .predicted_ns
    };
    assert!(
        end(&aliased) > end(&apart) + 8192.0,
        "the offsets cost nothing"
    );
}

/// Receives of messages taken in while their ranks waited (the model's §14, `drained` 500)
/// split bit for bit: a process learns where each participant of a collective last waited with
/// its call time. Four ranks, 8 B messages: rank 3 enters an Allreduce 100 µs late (the others
/// wait in it) while rank 0's message to rank 2 arrives, which rank 2 then receives; rank 3
/// waits in a receive from rank 0, which computes 200 µs, while the root of a Bcast, rank 1,
/// sends it its part; it then enters the Bcast, its message there.
#[test]
fn drained_receives_split_bit_for_bit() {
    let t = "loggps-trace 1\nranks 4\n\
        0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes=8 peer=2 tag=1\n0 MPI_Allreduce 10 20 bytes=8\n\
        0 MPI_Send 200000 200010 bytes=8 peer=3 tag=2\n0 MPI_Bcast 200010 200020 bytes=8 root=1\n\
        0 MPI_Finalize 200020 200030\n\
        1 MPI_Init 0 0\n1 MPI_Allreduce 0 10 bytes=8\n1 MPI_Bcast 10 20 bytes=8 root=1\n\
        1 MPI_Finalize 20 30\n\
        2 MPI_Init 0 0\n2 MPI_Allreduce 0 10 bytes=8\n2 MPI_Recv 10 20 bytes=8 peer=0 tag=1\n\
        2 MPI_Bcast 20 30 bytes=8 root=1\n2 MPI_Finalize 30 40\n\
        3 MPI_Init 0 0\n3 MPI_Allreduce 100000 100010 bytes=8\n\
        3 MPI_Recv 100010 100020 bytes=8 peer=0 tag=2\n3 MPI_Bcast 100020 100030 bytes=8 root=1\n\
        3 MPI_Finalize 100030 100040\n";
    let t = trace::parse("drained.txt", t.as_bytes()).unwrap();
    let p = Params::preset("myrinet").unwrap();
    let drained = Model::LogGps(Params {
        drained: Some(
            loggps_predict::model::BySize::one(loggps_predict::model::SizeParam::Drained, 500.0)
                .unwrap(),
        ),
        ..p
    });
    same_for_every_k("drained receives", &t, &drained, &Choice::tuned());
    let end = |m: &Model| single(&t, m, None, &Choice::tuned()).unwrap().predicted_ns;
    assert!(
        end(&drained) < end(&Model::LogGps(p)),
        "no receive was taken in"
    );
}

/// A deadlock is named on every process as the single replay names it, from the waits each
/// process gathers of its own ranks: two ranks sending to each other by rendezvous; a ring of
/// five such ranks; and ranks waiting inside an Allreduce for a rank blocked in a receive
/// whose sender waits in the Allreduce.
#[test]
fn a_deadlock_is_named_alike_on_every_process() {
    let mut ring = String::from("loggps-trace 1\nranks 5\n");
    for r in 0..5 {
        let (to, from) = ((r + 1) % 5, (r + 4) % 5);
        ring += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Send 10 20 bytes=65536 peer={to}\n{r} MPI_Recv 30 40 bytes=65536 peer={from}\n{r} MPI_Finalize 50 60\n"
        );
    }
    // Rank 0 receives from rank 3 before the Allreduce; rank 3 sends it after.
    let mut coll = String::from("loggps-trace 1\nranks 4\n");
    for r in 0..4 {
        coll += &format!("{r} MPI_Init 0 0\n");
        if r == 0 {
            coll += "0 MPI_Recv 10 20 bytes=8 peer=3\n";
        }
        coll += &format!("{r} MPI_Allreduce 30 40 bytes=8\n");
        if r == 3 {
            coll += "3 MPI_Send 50 60 bytes=8 peer=0\n";
        }
        coll += &format!("{r} MPI_Finalize 70 80\n");
    }
    let model = Model::LogGps(Params::preset("myrinet").unwrap());
    for (name, text) in [
        ("head to head", common::HEAD_TO_HEAD),
        ("ring", &ring),
        ("allreduce", &coll),
    ] {
        let t = trace::parse(name, text.as_bytes()).unwrap();
        let one = single(&t, &model, None, &Choice::tuned()).unwrap_err();
        assert!(one.contains("deadlock"), "{name}: {one}");
        for k in 1..=4 {
            for (me, got) in split(&t, &model, None, &Choice::tuned(), k)
                .iter()
                .enumerate()
            {
                assert_eq!(
                    got.as_ref().unwrap_err(),
                    &one,
                    "{name}: process {me} of {k}"
                );
            }
        }
    }
}

/// A process that fails alone stops every process: it fails with its own error, the others
/// with the first failed process's, named; where none fails, each keeps its value.
#[test]
fn a_process_that_fails_alone_stops_them_all() {
    use loggps_predict::error::Error;
    use loggps_predict::replay::split::agreed;
    for failing in [vec![], vec![1], vec![0, 2], vec![2, 1]] {
        let got: Vec<Result<usize, String>> = std::thread::scope(|s| {
            let handles: Vec<_> = Threads::group(3)
                .into_iter()
                .enumerate()
                .map(|(k, ex)| {
                    let r = match failing.contains(&k) {
                        true => Err(Error::Io(format!("no trace on node {k}"))),
                        false => Ok(k),
                    };
                    s.spawn(move || agreed(r, &ex).map_err(|e| e.to_string()))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let first = failing.iter().min();
        for (k, r) in got.iter().enumerate() {
            let want = match first {
                None => Ok(k),
                Some(_) if failing.contains(&k) => Err(format!("no trace on node {k}")),
                Some(f) => Err(format!("process {f} of 3: no trace on node {f}")),
            };
            assert_eq!(r, &want, "failing {failing:?}, process {k}");
        }
    }
}

/// An unfinished trace whose ranks wait on each other: the same warning, naming the same
/// ranks, from every K.
#[test]
fn an_unfinished_trace_warns_alike() {
    let mut t = trace::parse("h2h.txt", common::HEAD_TO_HEAD.as_bytes()).unwrap();
    t.complete = false;
    let model = Model::LogGps(Params::preset("myrinet").unwrap());
    let one = single(&t, &model, None, &Choice::tuned()).unwrap();
    assert!(
        one.warnings
            .iter()
            .any(|w| w.contains("cuts 2 rank(s) short")),
        "{:?}",
        one.warnings
    );
    same_for_every_k("unfinished", &t, &model, &Choice::tuned());
    // A binary trace cut short, as a job that stopped leaves it: some ranks have no
    // MPI_Finalize, messages and collectives lack partners.
    let cg = common::small_patterns()
        .into_iter()
        .find(|p| p.0 == Pattern::Cg);
    let buf = cg.unwrap().1;
    for cut in [2, 3, 4] {
        let t = trace::parse("cut", &buf[..buf.len() * cut / 5]).unwrap();
        assert!(!t.complete);
        for coll in [Choice::tuned(), Choice::measured()] {
            same_for_every_k(&format!("cut at {cut}/5"), &t, &model, &coll);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_traces_split_bit_for_bit(seed: u64) {
        let t = common::random_trace(seed, 12, 120);
        for (name, model) in models() {
            for coll in [Choice::tuned(), Choice::measured()] {
                same_for_every_k(&format!("seed {seed}, {name}"), &t, &model, &coll);
            }
        }
    }
}
