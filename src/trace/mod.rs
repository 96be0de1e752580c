//! The trace model: per rank, the ordered MPI events in compact columns, plus the
//! communicators and the job's metadata. Both encodings (`binary`, `text`) parse into it.

pub mod binary;
mod events;
pub mod import;
pub mod library;
mod pages;
pub mod placement;
pub mod sites;
pub mod text;
mod tracer_time;

pub use events::{Completions, Events, Push, Rank, Sink, par_ranges};
pub(crate) use pages::FLAG_PAGES;
pub use pages::PageOffsets;
pub use tracer_time::{GapChange, IN_CALL, OWN, OwnSampled, own_invalid};

use crate::error::TraceError;
use crate::model::Params;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;

/// `MPI_ANY_SOURCE` as a peer value.
pub const PEER_ANY: i32 = -1;
/// `MPI_PROC_NULL` as a peer value.
pub const PEER_NULL: i32 = -2;
/// `MPI_ANY_TAG` as a tag value.
pub const TAG_ANY: i32 = -1;
/// Receive flag: the program passed `MPI_ANY_SOURCE`.
pub const FLAG_ANY_SOURCE: u8 = 1;
/// Receive flag: the program passed `MPI_ANY_TAG`.
pub const FLAG_ANY_TAG: u8 = 2;
/// `MPI_Iprobe` flag: a message was found.
pub const FLAG_FOUND: u8 = 4;
/// Receive flag: received into a buffer the rank last sent from to the same peer (the model's
/// §13, "What a trace cannot tell": a ping-pong sending back the buffer it received into).
pub const FLAG_BOUNCED: u8 = 8;
/// Send flag (of a send and a Sendrecv's send half): sent from a buffer unchanged since the
/// rank's last send from it (the model's §13: data written long before, which a receiver's
/// copy reads faster than lines just written).
pub const FLAG_CLEAN: u8 = 16;
/// Collective flag: its receive buffer overlaps one that an `MPI_Allreduce`, `MPI_Scan` or
/// `MPI_Exscan` of the rank received its result into (the model's §13, "A reduction's result
/// received into"). The bit of a send's page flag in the binary encoding, which a collective
/// does not carry.
pub const FLAG_REDUCED: u8 = 64;

/// Which fields a routine's record carries (FORMAT.md, "shapes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    None,
    Send,
    Isend,
    Recv,
    Irecv,
    Sendrecv,
    Complete,
    Cancel,
    Coll,
    CommOp,
}

impl Shape {
    /// A point-to-point message's (a send's, a receive's, a Sendrecv's): what may carry
    /// [`PageOffsets`].
    #[inline]
    pub fn is_p2p(self) -> bool {
        matches!(
            self,
            Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv | Shape::Sendrecv
        )
    }
}

macro_rules! routines {
    ($($name:ident = $code:literal, $mpi:literal, $shape:ident;)*) => {
        /// An MPI routine the tracer records; the discriminant is the code in the binary format.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Routine { $($name = $code,)* }
        crate::memory::zeroable!(enum Routine = Routine::Init);

        impl Routine {
            /// Every routine, in code order.
            pub const ALL: &'static [Routine] = &[$(Routine::$name,)*];

            /// The routine with binary code `code`, if there is one. Inlined into the parse's
            /// loop, as are a request's implied status and an event's byte count, which the
            /// compiler kept as calls (see the `diss` case of tests/bench/run.sh).
            #[inline(always)]
            pub fn from_code(code: u8) -> Option<Routine> {
                match code { $($code => Some(Routine::$name),)* _ => None }
            }

            /// The MPI name, e.g. `"MPI_Send"`.
            pub fn mpi_name(self) -> &'static str {
                match self { $(Routine::$name => $mpi,)* }
            }

            /// The routine called `name` (`"MPI_Send"`): a hash lookup (a text reader asks
            /// once a line; a `match` on the names compares them one after another).
            pub fn from_mpi_name(name: &str) -> Option<Routine> {
                static BY_NAME: std::sync::LazyLock<std::collections::HashMap<&'static str, Routine>> =
                    std::sync::LazyLock::new(|| [$(($mpi, Routine::$name)),*].into_iter().collect());
                BY_NAME.get(name).copied()
            }

            /// The fields its record carries.
            #[inline]
            pub fn shape(self) -> Shape {
                match self { $(Routine::$name => Shape::$shape,)* }
            }
        }
    };
}

routines! {
    Init = 0, "MPI_Init", None;
    InitThread = 1, "MPI_Init_thread", None;
    Finalize = 2, "MPI_Finalize", None;
    Send = 10, "MPI_Send", Send;
    Ssend = 11, "MPI_Ssend", Send;
    Bsend = 12, "MPI_Bsend", Send;
    Rsend = 13, "MPI_Rsend", Send;
    Isend = 14, "MPI_Isend", Isend;
    Issend = 15, "MPI_Issend", Isend;
    Ibsend = 16, "MPI_Ibsend", Isend;
    Irsend = 17, "MPI_Irsend", Isend;
    Mrecv = 18, "MPI_Mrecv", Recv;
    Imrecv = 19, "MPI_Imrecv", Irecv;
    Recv = 20, "MPI_Recv", Recv;
    Irecv = 21, "MPI_Irecv", Irecv;
    Sendrecv = 22, "MPI_Sendrecv", Sendrecv;
    SendrecvReplace = 23, "MPI_Sendrecv_replace", Sendrecv;
    Probe = 24, "MPI_Probe", Recv;
    Iprobe = 25, "MPI_Iprobe", Recv;
    Cancel = 26, "MPI_Cancel", Cancel;
    RequestFree = 27, "MPI_Request_free", Complete;
    Mprobe = 28, "MPI_Mprobe", Recv;
    Improbe = 29, "MPI_Improbe", Recv;
    Wait = 30, "MPI_Wait", Complete;
    Waitall = 31, "MPI_Waitall", Complete;
    Waitany = 32, "MPI_Waitany", Complete;
    Waitsome = 33, "MPI_Waitsome", Complete;
    Test = 34, "MPI_Test", Complete;
    Testall = 35, "MPI_Testall", Complete;
    Testany = 36, "MPI_Testany", Complete;
    Testsome = 37, "MPI_Testsome", Complete;
    Barrier = 40, "MPI_Barrier", Coll;
    Bcast = 41, "MPI_Bcast", Coll;
    Reduce = 42, "MPI_Reduce", Coll;
    Allreduce = 43, "MPI_Allreduce", Coll;
    Gather = 44, "MPI_Gather", Coll;
    Gatherv = 45, "MPI_Gatherv", Coll;
    Scatter = 46, "MPI_Scatter", Coll;
    Scatterv = 47, "MPI_Scatterv", Coll;
    Allgather = 48, "MPI_Allgather", Coll;
    Allgatherv = 49, "MPI_Allgatherv", Coll;
    Alltoall = 50, "MPI_Alltoall", Coll;
    Alltoallv = 51, "MPI_Alltoallv", Coll;
    ReduceScatter = 52, "MPI_Reduce_scatter", Coll;
    ReduceScatterBlock = 53, "MPI_Reduce_scatter_block", Coll;
    Scan = 54, "MPI_Scan", Coll;
    Exscan = 55, "MPI_Exscan", Coll;
    Alltoallw = 56, "MPI_Alltoallw", Coll;
    CommDup = 60, "MPI_Comm_dup", CommOp;
    CommSplit = 61, "MPI_Comm_split", CommOp;
    CommCreate = 62, "MPI_Comm_create", CommOp;
    CommFree = 63, "MPI_Comm_free", CommOp;
    // A collective record that also creates a request (`Routine::nonblocking`).
    CommIdup = 64, "MPI_Comm_idup", Coll;
    // One-sided communication and neighborhood collectives: recorded, kept at their traced
    // durations (`Routine::kept_measured`).
    WinCreate = 70, "MPI_Win_create", None;
    WinAllocate = 71, "MPI_Win_allocate", None;
    WinAllocateShared = 72, "MPI_Win_allocate_shared", None;
    WinCreateDynamic = 73, "MPI_Win_create_dynamic", None;
    WinFree = 74, "MPI_Win_free", None;
    WinFence = 75, "MPI_Win_fence", None;
    WinLock = 76, "MPI_Win_lock", None;
    WinUnlock = 77, "MPI_Win_unlock", None;
    WinLockAll = 78, "MPI_Win_lock_all", None;
    WinUnlockAll = 79, "MPI_Win_unlock_all", None;
    WinFlush = 80, "MPI_Win_flush", None;
    WinFlushAll = 81, "MPI_Win_flush_all", None;
    WinFlushLocal = 82, "MPI_Win_flush_local", None;
    WinSync = 83, "MPI_Win_sync", None;
    WinPost = 84, "MPI_Win_post", None;
    WinStart = 85, "MPI_Win_start", None;
    WinComplete = 86, "MPI_Win_complete", None;
    WinWait = 87, "MPI_Win_wait", None;
    Put = 88, "MPI_Put", None;
    Get = 89, "MPI_Get", None;
    Accumulate = 90, "MPI_Accumulate", None;
    GetAccumulate = 91, "MPI_Get_accumulate", None;
    FetchAndOp = 92, "MPI_Fetch_and_op", None;
    CompareAndSwap = 93, "MPI_Compare_and_swap", None;
    NeighborAllgather = 100, "MPI_Neighbor_allgather", None;
    NeighborAllgatherv = 101, "MPI_Neighbor_allgatherv", None;
    NeighborAlltoall = 102, "MPI_Neighbor_alltoall", None;
    NeighborAlltoallv = 103, "MPI_Neighbor_alltoallv", None;
    NeighborAlltoallw = 104, "MPI_Neighbor_alltoallw", None;
    // Nonblocking collectives: the blocking twin's code + 70 (`Routine::blocking`).
    Ibarrier = 110, "MPI_Ibarrier", Coll;
    Ibcast = 111, "MPI_Ibcast", Coll;
    Ireduce = 112, "MPI_Ireduce", Coll;
    Iallreduce = 113, "MPI_Iallreduce", Coll;
    Igather = 114, "MPI_Igather", Coll;
    Igatherv = 115, "MPI_Igatherv", Coll;
    Iscatter = 116, "MPI_Iscatter", Coll;
    Iscatterv = 117, "MPI_Iscatterv", Coll;
    Iallgather = 118, "MPI_Iallgather", Coll;
    Iallgatherv = 119, "MPI_Iallgatherv", Coll;
    Ialltoall = 120, "MPI_Ialltoall", Coll;
    Ialltoallv = 121, "MPI_Ialltoallv", Coll;
    IreduceScatter = 122, "MPI_Ireduce_scatter", Coll;
    IreduceScatterBlock = 123, "MPI_Ireduce_scatter_block", Coll;
    Iscan = 124, "MPI_Iscan", Coll;
    Iexscan = 125, "MPI_Iexscan", Coll;
    Ialltoallw = 126, "MPI_Ialltoallw", Coll;
}

impl Routine {
    /// Recorded but not costed by the model (one-sided communication, neighborhood
    /// collectives): replayed at its traced duration, and counted in a warning.
    #[inline]
    pub fn kept_measured(self) -> bool {
        self.shape() == Shape::None
            && !matches!(
                self,
                Routine::Init | Routine::InitThread | Routine::Finalize
            )
    }

    /// A blocking probe: `MPI_Probe`, `MPI_Mprobe` (which also takes the message it finds off
    /// the queue, for the `MPI_Mrecv` after it: matched like a probe and that receive).
    #[inline]
    pub fn is_probe(self) -> bool {
        matches!(self, Routine::Probe | Routine::Mprobe)
    }

    /// A probe that returns at once: `MPI_Iprobe`, `MPI_Improbe`.
    #[inline]
    pub fn is_iprobe(self) -> bool {
        matches!(self, Routine::Iprobe | Routine::Improbe)
    }

    /// A receive-side event that takes a message: not a probe.
    #[inline]
    pub fn receives(self) -> bool {
        matches!(self.shape(), Shape::Irecv | Shape::Sendrecv)
            || matches!(self, Routine::Recv | Routine::Mrecv)
    }

    /// Whether it asks if requests have completed without waiting (`MPI_Test*`).
    #[inline]
    pub fn polls(self) -> bool {
        matches!(
            self,
            Routine::Test | Routine::Testany | Routine::Testsome | Routine::Testall
        )
    }

    /// The codes in use, as ranges: `"0-2, 10-37, …"`.
    pub fn code_ranges() -> String {
        let mut ranges: Vec<(u8, u8)> = Vec::new();
        for &r in Routine::ALL {
            match ranges.last_mut() {
                Some((_, hi)) if *hi + 1 == r as u8 => *hi = r as u8,
                _ => ranges.push((r as u8, r as u8)),
            }
        }
        let each = ranges.iter().map(|&(lo, hi)| match lo == hi {
            true => lo.to_string(),
            false => format!("{lo}-{hi}"),
        });
        each.collect::<Vec<_>>().join(", ")
    }

    /// A collective that returns at once with a request, completed by a Wait or Test (the
    /// nonblocking collectives, `MPI_Comm_idup`): its record is a collective's and an
    /// `isend`'s request (FORMAT.md, shape `icoll`).
    #[inline]
    pub fn nonblocking(self) -> bool {
        self as u8 >= Routine::Ibarrier as u8 || self == Routine::CommIdup
    }

    /// Whether its record creates a request: a nonblocking send or receive, or a nonblocking
    /// collective.
    #[inline]
    pub fn creates_request(self) -> bool {
        matches!(self.shape(), Shape::Isend | Shape::Irecv) || self.nonblocking()
    }

    /// The blocking collective a nonblocking one is modeled as (`MPI_Comm_idup`:
    /// `MPI_Comm_dup`); any other routine itself.
    pub fn blocking(self) -> Routine {
        match self {
            Routine::CommIdup => Routine::CommDup,
            r if r.nonblocking() => {
                Routine::from_code(r as u8 - 70).expect("a twin 70 codes below")
            }
            r => r,
        }
    }

    /// Synchronizing over a communicator: the collectives and the communicator constructors.
    pub fn is_collective(self) -> bool {
        self.shape() == Shape::Coll
            || matches!(
                self,
                Routine::CommDup | Routine::CommSplit | Routine::CommCreate
            )
    }
}

/// One event, copied out of the columns. Field meaning depends on the routine's shape
/// (FORMAT.md): `peer` is the destination, the (actual) source, or a collective's root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub routine: Routine,
    pub t_call: u64,
    pub t_return: u64,
    pub bytes: u64,
    pub peer: i32,
    pub tag: i32,
    pub comm: u32,
    /// The request created (`isend`, `irecv`, `cancel`), or the new communicator (`commop`, -1 none).
    pub id: i64,
    pub flags: u8,
    /// Where its message's buffers start in their pages, where the trace says.
    pub pages: PageOffsets,
}

impl Event {
    /// An event of `routine` at `[t_call, t_return]` with every other field empty.
    pub fn new(routine: Routine, t_call: u64, t_return: u64) -> Event {
        let root_like = matches!(routine.shape(), Shape::Coll);
        Event {
            routine,
            t_call,
            t_return,
            bytes: 0,
            peer: if root_like { -1 } else { 0 },
            tag: 0,
            comm: 0,
            id: if routine.shape() == Shape::CommOp {
                -1
            } else {
                0
            },
            flags: 0,
            pages: PageOffsets::NONE,
        }
    }
}

/// One completed request in a `complete` record, with the receive status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub req: u32,
    pub source: i32,
    pub tag: i32,
}

/// The receive half of an `MPI_Sendrecv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvHalf {
    pub bytes: u64,
    pub source: i32,
    pub tag: i32,
}

/// A communicator: its job-wide id and its members as world ranks, in communicator rank order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comm {
    pub id: u32,
    pub members: Vec<u32>,
}

/// An eager limit as the MPI library reported it.
#[derive(Clone, Debug, PartialEq)]
pub struct EagerLimit {
    pub name: String,
    pub bytes: u64,
}

/// Per-rank metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RankMeta {
    pub hostname: String,
    /// Offset to rank 0's clock measured at `MPI_Init` and at `MPI_Finalize`, ns.
    pub clock_offset_init_ns: i64,
    pub clock_offset_final_ns: i64,
    /// On the first rank of a node with two or more: where the node's first two ranks ran.
    pub cores: Option<Cores>,
    /// Where the rank ran (the `P` chunk; traces before it have none).
    pub placement: Option<placement::Placement>,
    /// The tracer's own time per record, ns, timed at `MPI_Init`: the part of each measured
    /// gap between calls that was the tracer's, not the program's (traces before it: none).
    pub own_ns: Option<f64>,
    /// The tracer's time inside each recorded call's span, ns, timed at `MPI_Init` with
    /// `own_ns` (traces before it: none): a replay that keeps the tracer's time adds it to
    /// each gap, as the traced run paid it.
    pub in_call_ns: Option<f64>,
    /// The same two figures, `[own, inside]`, for a record of a request's routine
    /// (`MPI_Isend`, `MPI_Irecv`, `MPI_Wait*`, `MPI_Test*`, `MPI_Cancel`), which costs the tracer
    /// more (traces before it: none; the figures above serve every record).
    pub own_req_ns: Option<[f64; 2]>,
    /// The CPUs the ranks of this rank's node could run on at `MPI_Init` (their affinity masks
    /// together; traces before it: none): fewer than the node's ranks, and they took turns.
    pub cpus: Option<u32>,
    /// The tracer's own time per record of each routine, sampled during the run (traces before
    /// it, or ranks that never finalized: none): taken out of the gaps in place of `own_ns`
    /// and `own_req_ns` for the routines it holds.
    pub own_sampled: OwnSampled,
}

/// Where a node's first two ranks ran: the round trip of a cache line between their cores,
/// timed by the tracer at `MPI_Init` and at `MPI_Finalize` (`calibrate` times the same between
/// its two ranks). A shared-memory message's cost rests on it, and it changes where the OS or a
/// hypervisor runs the ranks on cores farther apart.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cores {
    /// The world rank of the node's second rank.
    pub partner: u32,
    pub init_ns: f64,
    pub final_ns: f64,
}

/// How far apart two cores' figures (a calibration's, a launch's, a trace's) lie where the ranks
/// ran at another distance: this factor or more.
pub const OTHER_CORES: f64 = 2.0;

impl Cores {
    /// Why these figures cannot be rank `rank`'s of `nranks`, if they cannot.
    pub fn invalid(&self, rank: u32, nranks: usize) -> Option<String> {
        if self.partner as usize >= nranks || self.partner == rank {
            return Some(format!(
                "expected the cores' partner to be another rank below {nranks}, found {}",
                self.partner
            ));
        }
        [self.init_ns, self.final_ns]
            .into_iter()
            .find(|v| !(v.is_finite() && *v > 0.0))
            .map(|v| format!("expected the cores' round trip to be a time > 0 ns, found {v}"))
    }
}

/// Job metadata.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Meta {
    pub library: String,
    pub eager_limit: Option<EagerLimit>,
    pub params: Option<Params>,
    /// Sets combined with `params` per link class (the model's §12), where the trace embeds
    /// several.
    pub other_params: Vec<Params>,
    pub ranks: RankMetas,
}

impl Meta {
    /// The parameter sets the trace embeds, its main one first.
    pub fn sets(&self) -> Vec<Params> {
        self.params
            .iter()
            .chain(&self.other_params)
            .copied()
            .collect()
    }
}

/// Every rank's metadata, kept only once some rank has any: a synthetic trace has none, and
/// an empty one a rank would cost memory on every rank for nothing.
#[derive(Clone, Debug, Default)]
pub struct RankMetas {
    nranks: usize,
    /// Empty, or one per rank.
    list: Vec<RankMeta>,
    /// A replay keeps the tracer's time in the gaps ([`RankMetas::keep_tracer_time`]).
    tracer_kept: bool,
}

/// The most CPUs a node's count of them may say (a trace's `R` chunk, its text's `cpus`).
pub const MAX_CPUS: u32 = 1 << 20;

/// A rank's metadata when none was recorded.
static NO_META: RankMeta = RankMeta {
    hostname: String::new(),
    clock_offset_init_ns: 0,
    clock_offset_final_ns: 0,
    cores: None,
    placement: None,
    own_ns: None,
    in_call_ns: None,
    own_req_ns: None,
    cpus: None,
    own_sampled: OwnSampled::NONE,
};

impl RankMetas {
    pub fn new(nranks: usize) -> RankMetas {
        RankMetas {
            nranks,
            list: Vec::new(),
            tracer_kept: false,
        }
    }

    pub fn get(&self, r: usize) -> &RankMeta {
        self.list.get(r).unwrap_or(&NO_META)
    }

    pub fn set(&mut self, r: usize, m: RankMeta) {
        if self.list.is_empty() {
            self.list = vec![RankMeta::default(); self.nranks];
        }
        self.list[r] = m;
    }

    /// A replay then predicts the traced run: each gap between calls keeps the tracer's own
    /// time, and gets its time inside the calls' spans too where the trace timed it.
    pub fn keep_tracer_time(&mut self) {
        self.tracer_kept = true;
    }

    /// What a replay adds to each measured gap of rank `r` between calls (the model's §16):
    /// the tracer's own time taken out (< 0), or, keeping the tracer's time, its time inside a
    /// call added (≥ 0); 0 where the trace did not time it.
    pub fn gap_change(&self, r: usize) -> GapChange<'_> {
        let m = self.get(r);
        let (plain, req) = match self.tracer_kept {
            true => (m.in_call_ns, m.own_req_ns.map(|[_, c]| c)),
            false => (m.own_ns.map(|t| -t), m.own_req_ns.map(|[t, _]| -t)),
        };
        let plain = plain.unwrap_or(0.0);
        GapChange {
            plain,
            request: req.unwrap_or(plain),
            sampled: match self.tracer_kept {
                true => None,
                false => m.own_sampled.table(),
            },
        }
    }

    /// The tracer's time inside the span of a call of `routine` on rank `r`, ns, whichever way
    /// the replay takes the tracer's time (0 where the trace did not time it): what a call
    /// whose traced duration the replay keeps holds of the tracer's (the model's §16).
    #[inline]
    pub fn inside_call(&self, r: usize, routine: Routine) -> f64 {
        let m = self.get(r);
        let plain = m.in_call_ns.unwrap_or(0.0);
        match tracer_time::of_request(routine) {
            true => m.own_req_ns.map_or(plain, |[_, c]| c),
            false => plain,
        }
    }

    /// `(rank, metadata)` of the ranks whose metadata is recorded.
    pub fn recorded(&self) -> impl Iterator<Item = (usize, &RankMeta)> {
        self.list
            .iter()
            .enumerate()
            .filter(|(_, m)| **m != RankMeta::default())
    }
}

impl PartialEq for RankMetas {
    fn eq(&self, other: &RankMetas) -> bool {
        self.nranks == other.nranks && self.recorded().eq(other.recorded())
    }
}

/// A whole trace. `comms` excludes `MPI_COMM_WORLD` (id 0), which is every rank in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    pub meta: Meta,
    pub comms: Vec<Comm>,
    pub events: Events,
    /// False when the trace was not finalized (no index: the job died); it loads with a warning.
    pub complete: bool,
    /// `(rank, event)` of each request that no call completed or freed by the rank's end (a
    /// legal program may leave a request pending at `MPI_Finalize`): the replay completes its
    /// operation without a waiter, and the graph warns of them.
    pub pending: Vec<(u32, u32)>,
    /// What loading found that the user should know, each said once (a file cut short).
    pub warnings: Vec<String>,
    /// Where each call was made, if the tracer recorded it.
    pub sites: Option<sites::Sites>,
}

impl Trace {
    /// An empty trace of `nranks` ranks.
    pub fn new(nranks: usize) -> Trace {
        Trace {
            meta: Meta {
                ranks: RankMetas::new(nranks),
                ..Meta::default()
            },
            comms: Vec::new(),
            events: Events::new(nranks),
            complete: true,
            pending: Vec::new(),
            warnings: Vec::new(),
            sites: None,
        }
    }

    pub fn nranks(&self) -> usize {
        self.events.nranks()
    }

    pub fn total_events(&self) -> u64 {
        self.events.len() as u64
    }

    /// The trace of ranks `own` alone: every other rank keeps its place with no events, call
    /// sites or pending requests (see [`load_ranks`]).
    pub fn keep(&mut self, own: std::ops::Range<usize>) {
        let n = self.nranks();
        let own = own.start.min(n)..own.end.min(n);
        if let Some(s) = &mut self.sites {
            s.keep(own.clone(), self.events.offsets());
        }
        self.events.keep(own.clone());
        self.pending.retain(|&(r, _)| own.contains(&(r as usize)));
    }

    /// Rank `r`'s events.
    #[inline]
    pub fn rank(&self, r: usize) -> Rank<'_> {
        self.events.rank(r)
    }

    /// Members of communicator `id` as world ranks (`None` if the trace does not define it).
    pub fn comm_members(&self, id: u32) -> Option<CommMembers<'_>> {
        if id == 0 {
            return Some(CommMembers::World(self.nranks() as u32));
        }
        self.comms
            .iter()
            .find(|c| c.id == id)
            .map(|c| CommMembers::List(&c.members))
    }

    /// Rank `r`'s timestamp `t` on rank 0's clock, interpolating the offset measured at Init
    /// and at Finalize over the rank's run.
    pub fn corrected_ns(&self, r: usize, t: u64) -> f64 {
        let m = self.meta.ranks.get(r);
        let ev = self.rank(r);
        if m.clock_offset_init_ns == m.clock_offset_final_ns || ev.is_empty() {
            return t as f64 + m.clock_offset_init_ns as f64;
        }
        let t0 = ev.t_return(0) as f64;
        let t1 = ev.t_call(ev.len() - 1) as f64;
        let frac = if t1 > t0 {
            ((t as f64 - t0) / (t1 - t0)).clamp(0.0, 1.0)
        } else {
            0.0
        };
        // In f64: the two offsets come from the file, their difference may not fit in i64.
        let (init, fin) = (
            m.clock_offset_init_ns as f64,
            m.clock_offset_final_ns as f64,
        );
        let offset = init + frac * (fin - init);
        t as f64 + offset
    }

    /// Rank `r`'s measured start on rank 0's clock: its `MPI_Init` return, else its first call.
    pub fn measured_begin_ns(&self, r: usize) -> Option<f64> {
        let ev = self.rank(r);
        match ev.len() {
            0 => None,
            _ if matches!(ev.routine(0), Routine::Init | Routine::InitThread) => {
                Some(self.corrected_ns(r, ev.t_return(0)))
            }
            _ => Some(self.corrected_ns(r, ev.t_call(0))),
        }
    }

    /// Rank `r`'s measured end on rank 0's clock: its `MPI_Finalize` call, else its last return.
    pub fn measured_end_ns(&self, r: usize) -> Option<f64> {
        self.measured_end_ns_from(r, 0)
    }

    /// [`Trace::measured_end_ns`] of a rank whose events before `from` are known to hold no
    /// `MPI_Finalize` (a replay stops at the first): the search for it starts at `from`.
    pub fn measured_end_ns_from(&self, r: usize, from: usize) -> Option<f64> {
        let ev = self.rank(r);
        let last = ev.len().checked_sub(1)?;
        let rest = ev.routines().get(from..).unwrap_or_default();
        let end = match rest.iter().position(|&x| x == Routine::Finalize) {
            Some(f) => ev.t_call(from + f),
            None => ev.t_return(last),
        };
        Some(self.corrected_ns(r, end))
    }

    /// Time 0: the earliest start over ranks ([`Trace::measured_begin_ns`]; 0 if no rank has
    /// events). A rank's start from there is its begin − time 0, found when needed: a vector
    /// of them would hold 8 bytes a rank through the replay.
    pub fn measured_t0(&self) -> f64 {
        let t0 = (0..self.nranks())
            .into_par_iter()
            .filter_map(|r| self.measured_begin_ns(r))
            .reduce(|| f64::INFINITY, f64::min);
        if t0.is_finite() { t0 } else { 0.0 }
    }

    /// Time 0 ([`Trace::measured_t0`]) and the measured runtime from there.
    pub fn measured_span_ns(&self) -> (f64, f64) {
        let t0 = self.measured_t0();
        let end = (0..self.nranks())
            .into_par_iter()
            .filter_map(|r| self.measured_end_ns(r))
            .reduce(|| t0, f64::max);
        (t0, end - t0)
    }

    /// Checks what a parser cannot see in a record alone ([`Checks`], [`RankRequests`]),
    /// after parsing: the text encoding's way; the binary parser checks as it decodes. Returns
    /// the requests no call completed ([`Trace::pending`]), in rank order.
    pub fn validate(&self, file: &str) -> Result<Vec<(u32, u32)>, TraceError> {
        let checks = Checks::new(file, self.nranks(), &self.comms)?;
        let check_rank = |r: usize| -> Result<Vec<(u32, u32)>, TraceError> {
            let ev = self.rank(r);
            let (mut prev_return, mut known_comm) = (0, 0);
            for i in 0..ev.len() {
                let e = ev.event(i);
                let source = ev.recv_half(i).map_or(0, |h| h.source);
                checks
                    .event(r, &e, prev_return, source, &mut known_comm)
                    .map_err(|what| TraceError::event(file, r, i, e.routine.mpi_name(), what))?;
                prev_return = e.t_return;
            }
            let mut reqs = RankRequests::default();
            self.rank_requests(file, r, &mut reqs)?;
            let origin = |req| ev.req_origin(req).expect("created in sequence");
            Ok(reqs.pending().map(|req| (r as u32, origin(req))).collect())
        };
        // Rank by rank in parallel; the error reported is the first in rank order.
        let ranks: Vec<_> = (0..self.nranks()).into_par_iter().map(check_rank).collect();
        let mut pending = Vec::new();
        for rank in ranks {
            pending.extend(rank?);
        }
        Ok(pending)
    }

    /// Rank `r`'s requests, checked ([`RankRequests`]) into `reqs`.
    pub fn rank_requests(
        &self,
        file: &str,
        r: usize,
        reqs: &mut RankRequests,
    ) -> Result<(), TraceError> {
        reqs.done.clear();
        let ev = self.rank(r);
        for i in 0..ev.len() {
            let e = ev.event(i);
            reqs.event(i as u32, &e, ev.completed_reqs(i))
                .map_err(|what| TraceError::event(file, r, i, e.routine.mpi_name(), what))?;
        }
        Ok(())
    }
}

/// What a parser cannot see in a record alone, given the trace's ranks and communicators:
/// times within each rank, the shape of peers, and the communicators events refer to.
pub struct Checks {
    p: i64,
    /// Each communicator's members, sorted.
    members: HashMap<u32, Vec<u32>>,
}

impl Checks {
    /// The checks for a trace of `nranks` ranks and these communicators, which must list each
    /// member once, and only world ranks.
    pub fn new(file: &str, nranks: usize, comms: &[Comm]) -> Result<Checks, TraceError> {
        let p = nranks as i64;
        let mut members = HashMap::new();
        for c in comms {
            if let Some(&m) = c.members.iter().find(|&&m| m as i64 >= p) {
                return Err(TraceError::at(
                    file,
                    format!(
                        "communicator {} lists world rank {m}, but the trace has {p} ranks",
                        c.id
                    ),
                ));
            }
            let mut sorted = c.members.clone();
            sorted.sort_unstable();
            if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
                return Err(TraceError::at(
                    file,
                    format!("communicator {} lists world rank {} twice", c.id, w[0]),
                ));
            }
            members.insert(c.id, sorted);
        }
        Ok(Checks { p, members })
    }

    /// What is wrong with event `e` of rank `r`, whose previous event returned at
    /// `prev_return` (0 before its first); `source`: a Sendrecv's receive source.
    /// `known_comm`: a communicator other than world found fine for this rank before (0 at
    /// first), which this updates. Inlined into the parse's loop, as are the request check and
    /// the cursor's, which would otherwise be a call an event (see the `diss` case of
    /// tests/bench/run.sh).
    #[inline(always)]
    pub fn event(
        &self,
        r: usize,
        e: &Event,
        prev_return: u64,
        source: i32,
        known_comm: &mut u32,
    ) -> Result<(), String> {
        let (p, peer, t_call, t_return) = (self.p, e.peer, e.t_call, e.t_return);
        if t_return < t_call {
            return Err(format!(
                "return time {t_return} is before call time {t_call}: time goes backwards"
            ));
        }
        if t_call < prev_return {
            return Err(format!(
                "call time {t_call} is before the previous event's return {prev_return}: time goes backwards"
            ));
        }
        let peer_ok = |peer: i32| (peer >= 0 && (peer as i64) < p) || peer == PEER_NULL;
        match e.routine.shape() {
            Shape::Send | Shape::Isend if !peer_ok(peer) => {
                return Err(format!(
                    "destination {peer} is not a world rank (0..{p}) or MPI_PROC_NULL"
                ));
            }
            Shape::Recv
                if !(peer_ok(peer) || (e.routine.is_iprobe() && e.flags & FLAG_FOUND == 0)) =>
            {
                return Err(format!(
                    "source {peer} is not a world rank (0..{p}) or MPI_PROC_NULL"
                ));
            }
            Shape::Irecv if !peer_ok(peer) && peer != PEER_ANY => {
                return Err(format!(
                    "source {peer} is not a world rank, MPI_ANY_SOURCE or MPI_PROC_NULL"
                ));
            }
            Shape::Sendrecv if !peer_ok(peer) || !peer_ok(source) => {
                return Err(format!(
                    "peers {peer} / {source} are not world ranks (0..{p})"
                ));
            }
            Shape::Coll if peer < -1 || peer as i64 >= p => {
                return Err(format!("root {peer} is not a world rank (0..{p}) or -1"));
            }
            Shape::None | Shape::Complete | Shape::Cancel => return Ok(()),
            _ => {}
        }
        let comm = e.comm;
        if comm != 0 && comm != *known_comm {
            match self.members.get(&comm) {
                None => return Err(format!("communicator {comm} is not defined in the trace")),
                Some(m) if m.binary_search(&(r as u32)).is_err() => {
                    return Err(format!(
                        "rank {r} uses communicator {comm}, which it is not a member of"
                    ));
                }
                _ => *known_comm = comm,
            }
        }
        Ok(())
    }
}

/// A rank's requests as its events come, checked: created in sequence (ids 0, 1, …), each
/// completed once by a later call, cancelled only once created. `done[req]` is the event that
/// completed request `req` ([`NOT_DONE`]: none yet); a legal program may leave some pending at
/// its end ([`RankRequests::pending`], [`Trace::pending`]). 4 bytes a request of the rank.
#[derive(Clone, Debug, Default)]
pub struct RankRequests {
    pub done: Vec<u32>,
}

/// No event completed the request.
pub const NOT_DONE: u32 = u32::MAX;

impl RankRequests {
    /// What is wrong with event `i`, `e`, whose completed requests (for a completion call)
    /// are `completed`. Nothing is recorded of an event found wrong.
    #[inline(always)]
    pub fn event(
        &mut self,
        i: u32,
        e: &Event,
        completed: impl Iterator<Item = u32> + Clone,
    ) -> Result<(), String> {
        let created = self.done.len();
        match e.routine.shape() {
            _ if e.routine.creates_request() && e.id != created as i64 => Err(format!(
                "expected request id {created} (ids are per-rank sequence numbers), found {}",
                e.id
            )),
            _ if e.routine.creates_request() => {
                self.done.push(NOT_DONE);
                Ok(())
            }
            Shape::Complete => {
                for (k, req) in completed.clone().enumerate() {
                    let wrong = match self.done.get(req as usize) {
                        None => format!("completes request {req} which no earlier call created"),
                        Some(&NOT_DONE) => {
                            self.done[req as usize] = i;
                            continue;
                        }
                        Some(&by) => format!(
                            "completes request {req} a second time (event {by} completed it already)"
                        ),
                    };
                    // Those before it in this call were not done before it (else it stopped).
                    for req in completed.take(k) {
                        self.done[req as usize] = NOT_DONE;
                    }
                    return Err(wrong);
                }
                Ok(())
            }
            Shape::Cancel if !(0..created as i64).contains(&e.id) => Err(format!(
                "cancels request {} which no earlier call created",
                e.id
            )),
            _ => Ok(()),
        }
    }

    /// The requests no event completed.
    pub fn pending(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.done.len() as u32).filter(|&req| self.done[req as usize] == NOT_DONE)
    }
}

/// The members of a communicator, without copying `MPI_COMM_WORLD`.
#[derive(Clone, Copy, Debug)]
pub enum CommMembers<'a> {
    World(u32),
    List(&'a [u32]),
}

impl CommMembers<'_> {
    pub fn len(&self) -> usize {
        match self {
            CommMembers::World(n) => *n as usize,
            CommMembers::List(l) => l.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> u32 {
        match self {
            CommMembers::World(_) => i as u32,
            CommMembers::List(l) => l[i],
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

/// What loading allocates: an event's columns, and a rank's lists and blocks.
pub const BYTES_PER_EVENT: u64 = 19;
pub const BYTES_PER_RANK: u64 = 250;

/// What a caller allocates after loading a trace, besides its events: a load that could not be
/// followed through for memory fails before it allocates anything (see [`crate::memory`]).
#[derive(Clone, Copy, Debug)]
pub struct Then {
    /// What the caller does, to name in the error ("predicting on").
    pub what: &'static str,
    pub bytes_per_event: u64,
    pub bytes_per_rank: u64,
}

impl Then {
    /// Nothing: the trace alone.
    pub const LOAD: Then = Then {
        what: "loading",
        bytes_per_event: 0,
        bytes_per_rank: 0,
    };
}

/// Loads a trace of either encoding (chosen by the binary magic), with every check.
/// Warnings (an unfinalized trace) go to `warn`.
pub fn load(path: &Path, warn: &mut dyn FnMut(String)) -> Result<Trace, TraceError> {
    load_then(path, warn, Then::LOAD)
}

/// [`load`], failing at once where `then` will not fit in memory beside the events.
pub fn load_then(
    path: &Path,
    warn: &mut dyn FnMut(String),
    then: Then,
) -> Result<Trace, TraceError> {
    load_some(path, warn, then, None)
}

/// [`load_then`] of ranks `own` alone, as a process of a split replay holds them: every other
/// rank keeps its place with no events. A binary trace's other ranks are not decoded (their
/// chunks' headers are read, not their records); a text trace is read whole, then split.
/// Where the trace is unfinished, which ranks lack `MPI_Finalize` is not warned of: they are
/// the whole trace's ([`crate::graph::split::Census`], [`unfinished_warning`]).
pub fn load_ranks(
    path: &Path,
    own: std::ops::Range<usize>,
    warn: &mut dyn FnMut(String),
    then: Then,
) -> Result<Trace, TraceError> {
    load_some(path, warn, then, Some(&|_| own.clone()))
}

/// A trace of any format this program reads ([`import`]), as `options` says or detected: ours
/// as [`load_then`] reads it (or [`load_block`], of process `k` of `n`'s ranks, where `block`
/// says), another tool's whole, then cut to the block.
pub fn load_as(
    path: &Path,
    options: &import::Options,
    block: Option<(usize, usize)>,
    warn: &mut dyn FnMut(String),
    then: Then,
) -> Result<Trace, TraceError> {
    let format = match options.from {
        Some(f) => f,
        None => import::detect(path)?,
    };
    if format == import::Format::Loggps {
        return match block {
            Some((k, n)) => load_block(path, k, n, warn, then),
            None => load_then(path, warn, then),
        };
    }
    let mut trace = import::load(path, format, options, warn)?;
    if let Some((k, n)) = block {
        let p = trace.nranks();
        trace.keep(owned(k, n, p));
    }
    Ok(trace)
}

/// [`load_ranks`] of the ranks process `k` of `n` replays ([`owned`]).
pub fn load_block(
    path: &Path,
    k: usize,
    n: usize,
    warn: &mut dyn FnMut(String),
    then: Then,
) -> Result<Trace, TraceError> {
    load_some(path, warn, then, Some(&|p| owned(k, n, p)))
}

/// The ranks process `k` of `n` replays, of `p`: contiguous blocks, their sizes differing by
/// one at most.
pub fn owned(k: usize, n: usize, p: usize) -> std::ops::Range<usize> {
    k * p / n..(k + 1) * p / n
}

/// The process of `n` that owns rank `r` of `p` ([`owned`]).
pub fn owner_of(n: usize, p: usize) -> impl Fn(usize) -> usize {
    let firsts: Vec<usize> = (0..=n).map(|k| owned(k, n, p).start).collect();
    move |r| firsts.partition_point(|&f| f <= r) - 1
}

/// Which ranks a load keeps, of the trace's ranks.
type Only<'a> = &'a dyn Fn(usize) -> std::ops::Range<usize>;

/// What loading an unfinished trace says: that it was not finalized, and which of its `p`
/// ranks have no `MPI_Finalize` (`unfinished`).
pub fn unfinished_warning(name: &str, p: usize, unfinished: &[usize]) -> String {
    match unfinished.len() {
        0 => format!(
            "{name}: the trace was not finalized (no index: its end is missing), though every \
             rank reached MPI_Finalize"
        ),
        n => format!(
            "{name}: the trace was not finalized (no index: the job stopped before MPI_Finalize); {n} of {p} ranks have no MPI_Finalize{}",
            list_some(unfinished)
        ),
    }
}

fn load_some(
    path: &Path,
    warn: &mut dyn FnMut(String),
    then: Then,
    only: Option<Only<'_>>,
) -> Result<Trace, TraceError> {
    let name = path.display().to_string();
    if path.is_dir() {
        return Err(TraceError::at(
            &name,
            "is a directory: expected a loggps trace file (binary or text)".into(),
        ));
    }
    let file = std::fs::File::open(path)
        .map_err(|e| TraceError::at(&name, format!("cannot open: {e}")))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let trace = if len == 0 {
        return Err(TraceError::at(
            &name,
            "the file is empty: expected a loggps trace (binary or text)".to_string(),
        ));
    } else {
        let map = crate::memory::MappedFile::open(&file)
            .map_err(|e| TraceError::at(&name, format!("cannot map: {e}")))?;
        // The parsed parts of the file need not stay in memory while the rest is parsed.
        let release = |offset, len| map.release(offset, len);
        parse_releasing(&name, &map, &release, then, only)?
    };
    for w in &trace.warnings {
        warn(w.clone());
    }
    if !trace.complete && only.is_none() {
        let unfinished: Vec<usize> = (0..trace.nranks())
            .filter(|&r| !trace.rank(r).routines().contains(&Routine::Finalize))
            .collect();
        warn(unfinished_warning(&name, trace.nranks(), &unfinished));
    }
    Ok(trace)
}

/// Parses a trace held in memory; `name` is used in errors.
pub fn parse(name: &str, data: &[u8]) -> Result<Trace, TraceError> {
    parse_releasing(name, data, &|_, _| {}, Then::LOAD, None)
}

/// [`parse`], telling `release` of the input it is done with (binary traces, see
/// [`binary::parse_releasing`]).
fn parse_releasing(
    name: &str,
    data: &[u8],
    release: &binary::Release<'_>,
    then: Then,
    only: Option<Only<'_>>,
) -> Result<Trace, TraceError> {
    let trace = if data.starts_with(&binary::MAGIC) {
        binary::parse_releasing(name, data, release, then, only)?
    } else if data.is_empty() {
        return Err(TraceError::at(
            name,
            "the file is empty: expected a loggps trace (binary or text)".to_string(),
        ));
    } else if data.starts_with(b"loggps-trace") || data.starts_with(b"#") {
        let mut trace = text::parse(name, data)?;
        trace.pending = trace.validate(name)?;
        if let Some(own) = only {
            trace.keep(own(trace.nranks()));
        }
        trace
    } else {
        return Err(TraceError::offset(
            name,
            0,
            format!(
                "bad magic {:02x?}: expected a binary trace (\"LGPSTRC\\x1a\") or a text trace (\"loggps-trace 1\")",
                &data[..data.len().min(8)]
            ),
        ));
    };
    Ok(trace)
}

/// ": 1, 2, 3 …" for error messages, at most eight items.
pub fn list_some<T: std::fmt::Display>(items: &[T]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let shown: Vec<String> = items.iter().take(8).map(|x| x.to_string()).collect();
    let more = if items.len() > 8 {
        format!(" and {} more", items.len() - 8)
    } else {
        String::new()
    };
    format!(": {}{more}", shown.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every nonblocking collective's twin is the blocking routine of the same name, and only
    /// they create requests besides the point-to-point I-forms.
    #[test]
    fn nonblocking_collectives_have_blocking_twins() {
        let nonblocking: Vec<Routine> = Routine::ALL
            .iter()
            .copied()
            .filter(|r| r.nonblocking())
            .collect();
        assert_eq!(nonblocking.len(), 18, "{nonblocking:?}");
        for r in nonblocking {
            let twin = r.blocking();
            let name = r
                .mpi_name()
                .replacen("MPI_I", "MPI_", 1)
                .replace("idup", "dup");
            assert!(
                twin.mpi_name().eq_ignore_ascii_case(&name),
                "{r:?} → {twin:?}"
            );
            assert!(r.is_collective() && r.creates_request() && !twin.nonblocking());
        }
        assert_eq!(Routine::Alltoallw.blocking(), Routine::Alltoallw);
        assert!(Routine::Irecv.creates_request() && !Routine::Allreduce.creates_request());
        assert_eq!(
            Routine::code_ranges(),
            "0-2, 10-37, 40-56, 60-64, 70-93, 100-104, 110-126"
        );
    }

    /// Each check of [`Checks`] and [`RankRequests`] rejects the same event with the same
    /// message in both encodings: the text one after parsing, the binary one as it decodes
    /// (and there at the byte of the event's record); and what they accept (a wildcard source,
    /// an Iprobe that found nothing, a communicator the rank is in) loads in both.
    /// The cost of a failed poll travels with the parameters, in both encodings; without it
    /// the binary record is as before (flag 1).
    /// `gamma`, `copy` and `progress` travel too, with or without `poll`, in the paper's form
    /// (flag 4) and in bands.
    #[test]
    fn gamma_travels_with_the_parameters() {
        let paper = "L=1 o=2 Os=3 Or=4 Gs=5 Gl=6 s=7 S=8";
        let bands = "bands=100:1:2:0.1:0.2:0.3;inf:5:6:0.4:0.5:0.6 S=100";
        for (params, poll, gamma) in [
            (paper, "", " gamma=0.25"),
            (paper, " poll=30.5", " gamma=0.25"),
            (bands, "", " gamma=0.25"),
            (bands, " poll=30.5", " gamma=0.25"),
            (bands, " poll=30.5", ""),
            (paper, "", " progress=calls"),
            (bands, " poll=30.5", " gamma=0.25 progress=calls"),
            (paper, "", " gamma=0.25 copy=0.125"),
            (bands, " poll=30.5", " copy=0.125"),
        ] {
            let text =
                format!("loggps-trace 1\nranks 1\nparams {params}{poll}{gamma}\n0 MPI_Init 0 1\n");
            let t = parse("t.txt", text.as_bytes()).unwrap();
            let p = t.meta.params.unwrap();
            let has_gamma = gamma.contains("gamma");
            let one = |param, v| crate::model::BySize::one(param, v).unwrap();
            use crate::model::SizeParam;
            let (gamma_param, copy_param) = (SizeParam::Gamma, SizeParam::Copy);
            assert_eq!(p.gamma, has_gamma.then(|| one(gamma_param, 0.25)), "{text}");
            assert_eq!(p.progress_at_calls, gamma.contains("calls"), "{text}");
            assert_eq!(p.poll, (!poll.is_empty()).then_some(30.5), "{text}");
            assert_eq!(
                p.copy,
                gamma.contains("copy").then(|| one(copy_param, 0.125)),
                "{text}"
            );
            let again = params_round_trip(&t);
            assert!(again.contains(&format!("{poll}{gamma}\n")), "{again}");
        }
    }

    /// `t` through the binary encoding keeps its parameters; its text encoding, returned.
    fn params_round_trip(t: &Trace) -> String {
        let mut bin = Vec::new();
        binary::write(t, &mut bin, true).unwrap();
        assert_eq!(parse("t.bin", &bin).unwrap().meta.params, t.meta.params);
        let mut again = Vec::new();
        text::write(t, &mut again).unwrap();
        String::from_utf8(again).unwrap()
    }

    /// Eager bands above S (the model's §10) travel with a set in both encodings (the binary
    /// one's flag 6), as text `eager_bands=LO;HI:…`, and are refused malformed.
    #[test]
    fn eager_bands_travel_with_the_parameters() {
        let line = "params bands=100:1:2:0.1:0.2:0.3;inf:5:6:0.4:0.5:0.6 \
                    eager_bands=100;1000:3:4:0.05:0.06:0.07:0:0;4000:3:5:0.04:0.05:0.06:1:0.5 S=100 gamma=0.25";
        let text = format!("loggps-trace 1\nranks 1\n{line}\n0 MPI_Init 0 1\n");
        let t = parse("t.txt", text.as_bytes()).unwrap();
        let p = t.meta.params.unwrap();
        let (lo, above) = p
            .bands
            .unwrap()
            .eager_above()
            .map(|(l, a)| (l, a.to_vec()))
            .unwrap();
        assert_eq!(
            (lo, above.len(), above[1].hi, above[1].Od),
            (100, 2, 4000, 1.0)
        );
        assert_eq!(
            p.t1(500),
            5.0 + 500.0 * 0.4,
            "rendezvous at S = 100: its band"
        );
        assert_eq!(Params { S: 4000, ..p }.t1(500), 3.0 + 500.0 * 0.05);
        let again = params_round_trip(&t);
        assert_eq!(
            parse("t.txt", again.as_bytes()).unwrap().meta.params,
            t.meta.params
        );
        // With `Osd` (the binary encoding's flag 8): `Od + Osd·k` of 1 + 0.02 × 2,000 at 2,000 B.
        let osd = text.replace(":1:0.5 S=", ":1:0.5:0.02 S=");
        let t = parse("t.txt", osd.as_bytes()).unwrap();
        let p = t.meta.params.unwrap();
        assert_eq!(Params { S: 4000, ..p }.split_of(2000), (41.0, 0.5));
        assert!(params_round_trip(&t).contains(":1:0.5:0.02"));
        for bad in [
            "eager_bands=x;1000:3:4:0.05:0.06:0.07",
            "eager_bands=2000;1000:3:4:0.05:0.06:0.07",
        ] {
            let text = text.replace(line.split(' ').nth(2).unwrap(), bad);
            let e = parse("t.txt", text.as_bytes()).unwrap_err().to_string();
            assert!(e.contains("eager_bands") || e.contains("rise"), "{e}");
        }
    }

    #[test]
    fn poll_travels_with_the_parameters() {
        for (line, poll) in [(" poll=30.5", Some(30.5)), ("", None)] {
            let text = format!(
                "loggps-trace 1\nranks 1\nparams L=1 o=2 Os=3 Or=4 Gs=5 Gl=6 s=7 S=8{line}\n\
                 0 MPI_Init 0 1\n"
            );
            let t = parse("t.txt", text.as_bytes()).unwrap();
            assert_eq!(t.meta.params.unwrap().poll, poll);
            let mut bin = Vec::new();
            binary::write(&t, &mut bin, true).unwrap();
            assert_eq!(parse("t.bin", &bin).unwrap().meta.params, t.meta.params);
            let mut again = Vec::new();
            text::write(&t, &mut again).unwrap();
            assert_eq!(
                String::from_utf8(again).unwrap().contains(" poll=30.5"),
                poll.is_some()
            );
        }
    }

    /// The cores' figures of a `rank` line and the parameters' `cores` go through the binary
    /// encoding and back to the same text; figures that cannot be a node's are refused.
    #[test]
    fn cores_figures_travel_and_bad_ones_are_refused() {
        let text = "loggps-trace 1\nranks 3\n\
                    params L=1 o=2 Os=3 Or=4 Gs=5 Gl=6 s=7 S=8 cores=92.5\n\
                    rank 0 host \"a\" offset 0 0 cores 2 55.25 341\n\
                    rank 1 host \"b\" offset 0 0\n\
                    0 MPI_Init 0 1\n1 MPI_Init 0 1\n2 MPI_Init 0 1\n";
        let t = parse("t.txt", text.as_bytes()).unwrap();
        let c = t.meta.ranks.get(0).cores.unwrap();
        assert_eq!((c.partner, c.init_ns, c.final_ns), (2, 55.25, 341.0));
        assert_eq!(t.meta.ranks.get(1).cores, None);
        assert_eq!(t.meta.params.unwrap().cores, Some(92.5));
        let mut bin = Vec::new();
        binary::write(&t, &mut bin, true).unwrap();
        let back = parse("t.bin", &bin).unwrap();
        assert_eq!(back.meta, t.meta);
        let mut again = Vec::new();
        text::write(&back, &mut again).unwrap();
        assert_eq!(String::from_utf8(again).unwrap(), text);
        for (bad, says) in [
            ("cores 0 55 60", "another rank below 3, found 0"),
            ("cores 3 55 60", "another rank below 3, found 3"),
            ("cores 1 0 60", "a time > 0 ns, found 0"),
            ("cores 1 55 -1", "a time > 0 ns, found -1"),
        ] {
            let text = format!("loggps-trace 1\nranks 3\nrank 0 host \"a\" offset 0 0 {bad}\n");
            let e = parse("t.txt", text.as_bytes()).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
        let text = "loggps-trace 1\nranks 1\nparams L=1 o=2 Os=3 Or=4 Gs=5 Gl=6 s=7 S=8 cores=0\n";
        let e = parse("t.txt", text.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("cores = 0 must be a time > 0 ns"), "{e}");
    }

    /// A trace whose ranks ran on cores 2× or more farther apart or nearer together than the
    /// parameters' figure is warned of, in the direction it errs; within 2× it is not.
    #[test]
    fn placement_far_from_the_calibrations_is_warned_of() {
        let meta = |init: f64, fin: f64| {
            let text = format!(
                "loggps-trace 1\nranks 2\nrank 0 host \"a\" offset 0 0 cores 1 {init} {fin}\n"
            );
            parse("t.txt", text.as_bytes()).unwrap().meta
        };
        assert_eq!(meta(92.0, 150.0).placement_warning(92.0), None);
        assert_eq!(meta(60.0, 47.0).placement_warning(92.0), None);
        let far = meta(92.0, 338.0).placement_warning(92.0).unwrap();
        assert!(
            far.contains("farther apart") && far.contains("too short"),
            "{far}"
        );
        assert!(
            far.contains("92 ns at MPI_Init and 338 ns at MPI_Finalize"),
            "{far}"
        );
        assert!(far.contains("hypervisor placed"), "{far}");
        let turns = meta(3_980_960.0, 227.0).placement_warning(92.0).unwrap();
        assert!(turns.contains("took turns on a core"), "{turns}");
        let near = meta(300.0, 340.0).placement_warning(800.0).unwrap();
        assert!(
            near.contains("nearer together") && near.contains("too long"),
            "{near}"
        );
        let text = "loggps-trace 1\nranks 2\nrank 0 host \"a\" offset 0 0\n";
        let none = parse("t.txt", text.as_bytes()).unwrap().meta;
        assert_eq!(none.placement_warning(92.0), None);
    }

    #[test]
    fn both_encodings_check_events_alike() {
        let head = "loggps-trace 1\nranks 2\ncomm 1 members 0\n";
        let bad: &[(&str, usize, &str)] = &[
            (
                "0 MPI_Init 0 100\n0 MPI_Finalize 170 150\n",
                1,
                "return time 150 is before call time 170",
            ),
            (
                "0 MPI_Init 0 100\n0 MPI_Finalize 90 150\n",
                1,
                "call time 90 is before the previous event's return 100",
            ),
            (
                "0 MPI_Send 0 1 bytes=8 peer=2 tag=0\n",
                0,
                "destination 2 is not a world rank (0..2)",
            ),
            (
                "0 MPI_Isend 0 1 bytes=8 peer=-1 tag=0 req=0\n",
                0,
                "destination -1 is not a world rank",
            ),
            (
                "0 MPI_Recv 0 1 bytes=8 peer=-1 tag=0\n",
                0,
                "source -1 is not a world rank (0..2)",
            ),
            (
                "0 MPI_Irecv 0 1 bytes=8 peer=-3 tag=0 req=0\n",
                0,
                "source -3 is not a world rank, MPI_ANY_SOURCE",
            ),
            (
                "0 MPI_Sendrecv 0 1 bytes=8 peer=1 recv_bytes=8 source=5\n",
                0,
                "peers 1 / 5 are not world ranks",
            ),
            (
                "0 MPI_Init 0 1\n0 MPI_Bcast 2 3 root=2 bytes=8\n",
                1,
                "root 2 is not a world rank",
            ),
            (
                "0 MPI_Send 0 1 bytes=8 peer=1 tag=0 comm=7\n",
                0,
                "communicator 7 is not defined",
            ),
            (
                "1 MPI_Send 0 1 bytes=8 peer=0 tag=0 comm=1\n",
                0,
                "rank 1 uses communicator 1, which it is not a member of",
            ),
            // Requests (RankRequests).
            (
                "0 MPI_Isend 0 1 bytes=8 peer=1 tag=0 req=1\n",
                0,
                "expected request id 0 (ids are per-rank sequence numbers), found 1",
            ),
            (
                "0 MPI_Wait 0 1 done=3:-1:-1\n",
                0,
                "completes request 3 which no earlier call created",
            ),
            (
                "0 MPI_Isend 0 1 bytes=8 peer=1 tag=0 req=0\n0 MPI_Wait 2 3 done=0:-1:-1\n\
                 0 MPI_Wait 4 5 done=0:-1:-1\n",
                2,
                "completes request 0 a second time (event 1 completed it already)",
            ),
            (
                "0 MPI_Isend 0 1 bytes=8 peer=1 tag=0 req=0\n0 MPI_Waitall 2 3 done=0:-1:-1,0:-1:-1\n",
                1,
                "completes request 0 a second time (event 1 completed it already)",
            ),
            // Request 0 is taken back when request 5 fails: the binary parser's second
            // reading of the record (for its message) must not find it completed already.
            (
                "0 MPI_Isend 0 1 bytes=8 peer=1 tag=0 req=0\n0 MPI_Waitall 2 3 done=0:-1:-1,5:-1:-1\n",
                1,
                "completes request 5 which no earlier call created",
            ),
            (
                "0 MPI_Cancel 0 1 req=0\n",
                0,
                "cancels request 0 which no earlier call created",
            ),
        ];
        for &(events, event, message) in bad {
            let text = format!("{head}{events}");
            let t = text::parse("t", text.as_bytes()).unwrap();
            let mut bin = Vec::new();
            binary::write(&t, &mut bin, true).unwrap();
            let rank = events.as_bytes()[0] as usize - b'0' as usize;
            for (name, data) in [("t.txt", text.as_bytes()), ("t.bin", &bin[..])] {
                let e = parse(name, data).expect_err(events);
                assert_eq!(
                    (e.rank, e.event),
                    (Some(rank), Some(event)),
                    "{name} {events}: {e}"
                );
                assert!(e.message.contains(message), "{name} {events}: {e}");
                if name == "t.bin" {
                    let at = e.offset.expect("a byte offset") as usize;
                    assert_eq!(
                        Some(bin[at]),
                        e.routine.and_then(Routine::from_mpi_name).map(|r| r as u8),
                        "{events}: {e}"
                    );
                }
            }
        }
        // A request left pending at the end loads, named in both encodings, finalized or not.
        let pending = format!("{head}0 MPI_Init 0 1\n0 MPI_Irecv 2 3 bytes=8 peer=1 tag=0 req=0\n");
        let t = parse("t.txt", pending.as_bytes()).unwrap();
        assert_eq!(t.pending, [(0, 1)]);
        for finalized in [true, false] {
            let mut bin = Vec::new();
            binary::write(&t, &mut bin, finalized).unwrap();
            let b = parse("t.bin", &bin).unwrap();
            assert_eq!(
                (b.pending.as_slice(), b.complete),
                (&[(0, 1)][..], finalized)
            );
        }
        let good = "0 MPI_Irecv 0 1 bytes=8 peer=-1 tag=0 req=0\n0 MPI_Wait 2 3 done=0:1:0\n\
            0 MPI_Iprobe 4 5 peer=-1 tag=0 flags=any_source\n\
            0 MPI_Send 6 7 bytes=8 peer=0 tag=0 comm=1\n\
            0 MPI_Send 8 9 bytes=8 peer=0 tag=0\n1 MPI_Send 0 1 bytes=8 peer=0 tag=0\n";
        let text = format!("{head}{good}");
        let t = parse("t.txt", text.as_bytes()).unwrap();
        let mut bin = Vec::new();
        binary::write(&t, &mut bin, true).unwrap();
        assert_eq!(parse("t.bin", &bin).unwrap().events, t.events);
        // Communicators are checked before any event.
        for (comm, message) in [
            (
                "comm 1 members 0,2",
                "lists world rank 2, but the trace has 2",
            ),
            ("comm 1 members 1,0,1", "lists world rank 1 twice"),
        ] {
            let text = format!("loggps-trace 1\nranks 2\n{comm}\n0 MPI_Init 0 1\n");
            let t = text::parse("t", text.as_bytes()).unwrap();
            let mut bin = Vec::new();
            binary::write(&t, &mut bin, true).unwrap();
            for (name, data) in [("t.txt", text.as_bytes()), ("t.bin", &bin[..])] {
                let e = parse(name, data).expect_err(comm);
                assert!(
                    e.message.contains(message) && e.rank.is_none(),
                    "{name}: {e}"
                );
            }
        }
    }

    #[test]
    fn parsed_input_is_released_in_whole_units_and_a_loaded_file_reads_the_same() {
        // 64 ranks of 12,002 events, written rank after rank: about 12 MB.
        let spec = crate::synth::Spec {
            pattern: crate::synth::Pattern::Ring,
            ranks: 64,
            iterations: 4000,
            bytes: 100,
            compute_ns: 10,
        };
        let mut buf = Vec::new();
        crate::synth::write(&spec, &mut buf, &|_| {}).unwrap();
        let released = std::sync::Mutex::new(Vec::new());
        let t = binary::parse_releasing(
            "t",
            &buf,
            &|offset, len| released.lock().unwrap().push((offset, len)),
            Then::LOAD,
            None,
        )
        .unwrap();
        let mut released = released.into_inner().unwrap();
        released.sort_unstable();
        let unit = binary::RELEASE_UNIT;
        let mut end = 0;
        for &(offset, len) in &released {
            assert!(
                offset % unit == 0 && len % unit == 0 && len > 0,
                "{offset} {len}"
            );
            assert!(offset >= end, "released twice: {offset}");
            end = offset + len;
        }
        assert!(end <= buf.len());
        // All but the units that end in the header, the job and rank chunks, or past the
        // last event chunk.
        let total: usize = released.iter().map(|&(_, len)| len).sum();
        assert!(total >= buf.len() - 3 * unit, "{total} of {}", buf.len());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ring.bin");
        std::fs::write(&path, &buf).unwrap();
        let loaded = load(&path, &mut |w| panic!("{w}")).unwrap();
        assert_eq!(loaded, t);
        assert_eq!(loaded, parse("t", &buf).unwrap());
    }

    /// Ranks' metadata is kept only once one is recorded; a rank without reads as empty, and
    /// lists compare by what they record.
    #[test]
    fn rank_metadata_is_kept_once_recorded() {
        let mut m = RankMetas::new(3);
        assert_eq!(m.get(1), &RankMeta::default());
        assert_eq!(m.recorded().count(), 0);
        let host = RankMeta {
            hostname: "node7".into(),
            ..RankMeta::default()
        };
        m.set(2, host.clone());
        assert_eq!((m.get(2), m.get(0)), (&host, &RankMeta::default()));
        assert_eq!(m.recorded().collect::<Vec<_>>(), [(2, &host)]);
        let mut same = RankMetas::new(3);
        same.set(0, RankMeta::default());
        same.set(2, host);
        assert_eq!(m, same);
        assert_ne!(m, RankMetas::new(3));
    }

    #[test]
    fn clock_offsets_whose_difference_overflows_i64_interpolate() {
        // Found by fuzzing: offsets of -9e18 and +9e18 ns at Init and Finalize. Halfway
        // through the rank's run the offset is their mean, 0.
        let mut t = Trace::new(1);
        t.meta.ranks.set(
            0,
            RankMeta {
                clock_offset_init_ns: -9_000_000_000_000_000_000,
                clock_offset_final_ns: 9_000_000_000_000_000_000,
                ..RankMeta::default()
            },
        );
        let mut ev = Events::single();
        ev.push(&Event::new(Routine::Init, 0, 1000));
        ev.push(&Event::new(Routine::Finalize, 3000, 3000));
        t.events = ev;
        assert_eq!(t.corrected_ns(0, 2000), 2000.0);
    }

    /// A rank's measured end is its first MPI_Finalize's call, searched for from where the
    /// caller knows there is none before; without one, its last return.
    #[test]
    fn the_measured_end_is_the_first_finalize_from_where_the_search_starts() {
        let mut t = Trace::new(1);
        let mut ev = Events::single();
        ev.push(&Event::new(Routine::Init, 0, 1000));
        ev.push(&Event::new(Routine::Barrier, 2000, 2500));
        ev.push(&Event::new(Routine::Finalize, 3000, 3100));
        ev.push(&Event::new(Routine::Finalize, 4000, 4200));
        t.events = ev;
        let ends: Vec<_> = (0..6).map(|from| t.measured_end_ns_from(0, from)).collect();
        let (first, second, last) = (Some(3000.0), Some(4000.0), Some(4200.0));
        assert_eq!(ends, [first, first, first, second, last, last]);
        assert_eq!(t.measured_end_ns(0), first);
        assert_eq!(Trace::new(1).measured_end_ns_from(0, 0), None);
    }
}
