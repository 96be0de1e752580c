//! Random valid traces for property and mutation tests: programs built step by step so that
//! every message matches and nothing deadlocks, whatever the eager limit.

#![allow(dead_code)]

use loggps_predict::trace::{
    Completion, Event, Events, FLAG_ANY_SOURCE, PEER_ANY, PageOffsets, Push, RecvHalf, Routine,
    Trace,
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
    /// Per rank, the nonblocking collectives' requests not waited for yet.
    outstanding: Vec<Vec<u32>>,
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
    /// Rank `r` waits for its outstanding nonblocking collectives, if any, in one Waitall.
    fn wait_outstanding(&mut self, r: usize) {
        if self.outstanding[r].is_empty() {
            return;
        }
        let w = self.event(r, Routine::Waitall);
        let done: Vec<Completion> = (self.outstanding[r].drain(..))
            .map(|req| Completion {
                req,
                source: -1,
                tag: -1,
            })
            .collect();
        self.ranks[r].push_complete(&w, &done);
    }
}

const SIZES: [u64; 6] = [0, 100, 5_000, 12_000, 20_000, 70_000];

/// Where a random trace's messages of `k` bytes at `step` start in their pages, as the tracer
/// records them (1,024 bytes and more): every other step's, the receive buffer 16 bytes past
/// the send buffer's offset every fourth (aliased, the model's §9). Drawn from the step, not
/// the random numbers, which the traces of every seed keep.
fn pages(step: u64, k: u64) -> PageOffsets {
    match k >= 1024 && step.is_multiple_of(2) {
        true => PageOffsets {
            send: Some((step * 8 % 4096) as u16),
            recv: Some(((step * 8 + if step.is_multiple_of(4) { 16 } else { 64 }) % 4096) as u16),
        },
        false => PageOffsets::NONE,
    }
}

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
        outstanding: vec![Vec::new(); p],
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
                s.pages.send = pages(step, k).send.filter(|_| routine != Routine::Bsend);
                b.ranks[i].push(&s);
                let mut v = b.event(j, Routine::Recv);
                (v.bytes, v.peer, v.tag) = (k, i as i32, tag);
                v.pages.recv = pages(step, k).recv;
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
                s.pages.send = pages(step, k).send;
                b.ranks[i].push(&s);
                let mut v = b.event(j, Routine::Irecv);
                v.pages.recv = pages(step, k).recv;
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
                    e.pages = pages(step, k);
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
                // A third of them nonblocking, waited for at once or some steps later.
                let nonblocking = b.rng.below(3) == 0;
                let routine = match nonblocking {
                    true => Routine::from_code(routine as u8 + 70).expect("a nonblocking twin"),
                    false => routine,
                };
                for r in 0..p {
                    let mut e = b.event(r, routine);
                    (e.bytes, e.peer) = (k, root);
                    if nonblocking {
                        e.id = b.req(r) as i64;
                        b.outstanding[r].push(e.id as u32);
                    }
                    b.ranks[r].push_coll(&e, k, &[]);
                }
                if nonblocking && b.rng.below(2) == 0 {
                    (0..p).for_each(|r| b.wait_outstanding(r));
                }
            }
        }
    }
    for r in 0..p {
        b.wait_outstanding(r);
        let e = b.event(r, Routine::Finalize);
        b.ranks[r].push(&e);
    }
    b.trace.events = Events::concat(b.ranks);
    b.trace
}

// ---- the command line: running the binary and the traces that several tests/cli_*.rs share ----

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The predictor's binary, ready for its arguments.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_loggps-predict"))
}

/// A file of fixtures/.
pub fn fixture(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(p)
}

/// Runs the predictor with `args` to the end.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("runs")
}

/// Each synthetic pattern on 11 ranks, 3 iterations of 100 bytes, as a binary trace.
pub fn small_patterns() -> Vec<(loggps_predict::synth::Pattern, Vec<u8>)> {
    use loggps_predict::synth::{Pattern, Spec};
    let patterns = <Pattern as clap::ValueEnum>::value_variants();
    patterns
        .iter()
        .map(|&pattern| {
            let spec = Spec {
                pattern,
                ranks: 11,
                iterations: 3,
                bytes: 100,
                compute_ns: 10,
            };
            let mut buf = Vec::new();
            loggps_predict::synth::write(&spec, &mut buf, &|_| {}).unwrap();
            (pattern, buf)
        })
        .collect()
}

/// The trace `synth` writes with `args` (a pattern and its sizes) into `dir`, named after its
/// pattern.
pub fn synthesized(dir: &Path, args: &[&str]) -> String {
    let pattern = args.iter().skip_while(|&&a| a != "--pattern").nth(1);
    let f = dir.join(format!("{}.bin", pattern.expect("a --pattern")));
    let f = f.to_str().unwrap().to_string();
    let out = run(&[&["synth"], args, &["-o", &f]].concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {err}");
    f
}

/// The JSON that a successful run with `args` prints.
pub fn json(args: &[&str]) -> Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The predicted runtime, ns, of a successful run with `args` and `--format json`.
pub fn predicted_ns(args: &[&str]) -> f64 {
    json(&[args, &["--format", "json"]].concat())["predicted_s"]
        .as_f64()
        .unwrap()
        * 1e9
}

/// Writes `text` as a trace in a fresh directory; returns the directory (kept alive) and path.
pub fn text_trace(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join(name);
    std::fs::write(&f, text).unwrap();
    let path = f.to_str().unwrap().to_string();
    (dir, path)
}

/// Rank `r`'s end (ns) and four parts from a JSON report.
pub fn rank_ns(v: &Value, r: usize) -> [f64; 5] {
    let x = &v["ranks"][r];
    [
        "end_s",
        "computation_s",
        "communication_s",
        "sender_sync_s",
        "receiver_sync_s",
    ]
    .map(|k| x[k].as_f64().unwrap() * 1e9)
}

/// Asserts `got` is `want` to within 10^-6, naming `what` if not.
pub fn assert_close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() < 1e-6, "{what}: {got} != {want}");
}

/// A trace where rank `r` computes until `calls[r].0`, then calls `routine` with the fields
/// `calls[r].1` and goes straight on to MPI_Finalize: its end is the collective's return.
pub fn coll_trace(routine: &str, calls: &[(u64, String)]) -> (tempfile::TempDir, String) {
    let mut t = format!("loggps-trace 1\nranks {}\n", calls.len());
    for (r, (c, fields)) in calls.iter().enumerate() {
        t += &format!(
            "{r} MPI_Init 0 0\n{r} {routine} {c} {} {fields}\n{r} MPI_Finalize {} {}\n",
            c + 10,
            c + 10,
            c + 20
        );
    }
    text_trace("coll.txt", &t)
}

/// `f` under the paper's Myrinet parameters, then `args`.
pub fn myrinet<'a>(f: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    [&[f, "--platform", "myrinet"], args].concat()
}

/// Two ranks that both `MPI_Send` 64 KiB to each other before receiving.
pub const HEAD_TO_HEAD: &str = "loggps-trace 1\nranks 2\n\
    0 MPI_Init 0 0\n0 MPI_Send 10 20 bytes=65536 peer=1\n0 MPI_Recv 30 40 bytes=65536 peer=1\n0 MPI_Finalize 50 60\n\
    1 MPI_Init 0 0\n1 MPI_Send 10 20 bytes=65536 peer=0\n1 MPI_Recv 30 40 bytes=65536 peer=0\n1 MPI_Finalize 50 60\n";

/// Four ranks that call a 1000-byte Bcast from rank 0 at once, for 10 ns.
pub fn bcast4() -> String {
    let mut t = String::from("loggps-trace 1\nranks 4\n");
    for r in 0..4 {
        let (sent, got) = if r == 0 { (1000, 0) } else { (0, 1000) };
        t += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Bcast 0 10 root=0 bytes={sent} recv_bytes={got}\n{r} MPI_Finalize 10 20\n"
        );
    }
    t
}

/// A loop of 3 Allreduces on 32,768 ranks, which a ring cannot model.
pub const UNMODELED_RING: [&str; 6] = [
    "--pattern",
    "allreduce",
    "--ranks",
    "32768",
    "--iterations",
    "3",
];

/// A text trace (Myrinet's parameters) of rank 1 sending three 8-byte messages back to back
/// from 0 and rank 0 receiving them after computing until 100,000 ns (the model's §14, "Small
/// messages taken in at a poll").
pub fn three_small_messages() -> String {
    let mut t = String::from(
        "loggps-trace 1\nranks 2\n\
         params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383\n\
         0 MPI_Init 0 0\n",
    );
    for i in 0..3 {
        t += &format!(
            "0 MPI_Recv {} {} bytes=8 peer=1 tag=0\n",
            100_000 + i,
            100_001 + i
        );
    }
    t += "0 MPI_Finalize 100003 100004\n1 MPI_Init 0 0\n";
    for i in 0..3 {
        t += &format!("1 MPI_Send {i} {} bytes=8 peer=0 tag=0\n", i + 1);
    }
    t + "1 MPI_Finalize 3 4\n"
}

/// [`three_small_messages`], rank 0's `i`-th receive made by `make(i, call)` (the lines of its
/// calls), each one nanosecond after the one before from `at`, after `first` (lines).
pub fn three_small_messages_received(
    at: u64,
    first: &str,
    make: &dyn Fn(u64, u64) -> String,
) -> String {
    let mut t = String::new();
    for line in three_small_messages().lines() {
        if line.starts_with("0 MPI_Recv") {
            continue;
        }
        t += line;
        t += "\n";
        if line == "0 MPI_Init 0 0" {
            t += first;
            (0..3).for_each(|i| t += &make(i, at + i));
        }
    }
    t.replace(
        "0 MPI_Finalize 100003 100004",
        &format!("0 MPI_Finalize {0} {0}", at + 3),
    )
}

/// [`three_small_messages_received`] by an `MPI_Recv` each from 100,100, after a failed
/// `MPI_Iprobe` at 100,000 (100 ns).
pub fn three_small_messages_probed() -> String {
    three_small_messages_received(
        100_100,
        "0 MPI_Iprobe 100000 100100 peer=1 tag=9\n",
        &|_, c| format!("0 MPI_Recv {c} {} bytes=8 peer=1 tag=0\n", c + 1),
    )
}

/// The flags the tests of small messages taken in at a poll predict [`three_small_messages`]
/// with (the model's §14): `Od` 2,000 (its sends return at `T1 − Od` up to `departs_upto`),
/// `drained` 500; then a Wait's floor of 10 and messages moving only inside calls.
pub fn poll_flags(departs_upto: &'static str) -> [&'static str; 10] {
    [
        "--Od",
        "2000",
        "--departs-upto",
        departs_upto,
        "--drained",
        "500",
        "--wait",
        "10",
        "--progress",
        "calls",
    ]
}

/// [`three_small_messages_received`] by an `MPI_Irecv` and its `MPI_Wait` each.
pub fn three_small_messages_waited(at: u64) -> String {
    three_small_messages_received(at, "", &|i, c| {
        format!(
            "0 MPI_Irecv {c} {c} bytes=8 peer=1 tag=0 req={i}\n0 MPI_Wait {c} {} done={i}:1:0\n",
            c + 1
        )
    })
}
