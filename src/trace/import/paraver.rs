//! BSC's Paraver traces (`.prv`, written by Extrae and by its predecessor MPItrace), with the
//! `.pcf` beside them for the routines' names.
//!
//! A `.prv` is text: a header `#Paraver (DATE):END[_ns]:RESOURCES:NAPPL:NTASKS(THREADS:NODE,…)[,NCOMMS]`,
//! communicator lines `c:APPL:ID:N:TASK…`, then records by time: `1:` states, `2:CPU:APPL:TASK:
//! THREAD:TIME:TYPE:VALUE…` events, `3:` communications (sender's CPU, application, task, thread,
//! logical and physical send times, the receiver's the same, size, tag) and, in old traces,
//! `4:` collective operations (`…:TIME:COMM:SENT:RECEIVED:OP:ROOT`). An MPI call is the span of
//! an event of an MPI type (50000001–50000005) from its value (the routine, Extrae's numbering)
//! until the type's value 0. Its peer, size and tag come from the communication record whose
//! logical send or receive falls inside it; a collective's sizes, communicator and root from
//! the `4:` record or Extrae's events 50100001–50100004 at its start.
//!
//! What a Paraver trace does not hold is said in warnings: requests (an `MPI_Irecv` completes in
//! the Wait or Test that holds its message's physical receive; an `MPI_Isend` or a nonblocking
//! collective in the next `MPI_Waitall`, or the next Wait that completes no receive), the
//! communicator of a
//! point-to-point message (taken as the world's), and calls of a thread other than a task's
//! first. MPI calls inside another (an old MPI library's collectives built on its own sends, a
//! `MPI_Allreduce` made of `MPI_Reduce` and `MPI_Bcast`) are part of it, their messages the
//! collective's own.

mod lines;

use super::{Call, Notes, Out, Requests, ShortKeys, read_ranks};
use crate::error::TraceError;
use crate::trace::sites::{Named, UNKNOWN};
use crate::trace::{Comm, Completion, PEER_NULL, RecvHalf, Routine, Shape, Trace};
use lines::{GLOP_RECORD, Piece, piece};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;

/// Whether `text` begins as a `.prv` does.
pub(super) fn is_header(text: &str) -> bool {
    text.starts_with("#Paraver (") || text.starts_with("#PARAVER (")
}

pub(super) fn load(path: &Path) -> Result<Trace, TraceError> {
    let name = path.display().to_string();
    let read = |p: &Path| {
        std::fs::read(p)
            .map_err(|e| TraceError::at(&p.display().to_string(), format!("cannot read: {e}")))
    };
    let data = super::file_bytes(path)?;
    let pcf_path = path.with_extension("pcf");
    let pcf = match pcf_path.is_file() {
        true => Some(String::from_utf8_lossy(&read(&pcf_path)?).into_owned()),
        false => None,
    };
    // The file's pages are handed back once its body is read: the calls hold what is used.
    parse(&name, &data, pcf.as_deref(), &|| data.release())
}

/// Extrae's MPI event types: point-to-point, collective, other, one-sided, I/O.
const MPI_TYPES: std::ops::RangeInclusive<u64> = 50_000_001..=50_000_005;
const COLLECTIVE: u64 = 50_000_002;
/// Extrae's events of a collective's send size, receive size, root (1 at the root) and
/// communicator, at its start.
const GLOBAL_OP: std::ops::RangeInclusive<u64> = 50_100_001..=50_100_004;

/// Extrae's events of the function an MPI call was made from and of its line: the caller at
/// level 1 (`…01`), or the one caller traced (`…00`). Their values are named in the `.pcf`.
const CALLER: [u64; 2] = [70_000_000, 70_000_001];
const CALLER_LINE: [u64; 2] = [80_000_000, 80_000_001];

fn is_caller(ty: u64) -> bool {
    CALLER.contains(&ty) || CALLER_LINE.contains(&ty)
}

/// The routines' names by Extrae's value (`MPI_EventEncoding.h`, from 1), where no `.pcf` names
/// them.
const EXTRAE_VALUES: &str = "Send Recv Isend Irecv Wait Waitall Bcast Barrier Reduce Allreduce \
    Alltoall Alltoallv Gather Gatherv Scatter Scatterv Allgather Allgatherv Comm_rank Comm_size \
    Comm_create Comm_dup Comm_split Comm_group Comm_free Comm_remote_group Comm_remote_size \
    Comm_test_inter Comm_compare Scan Init Finalize Bsend Ssend Rsend Ibsend Issend Irsend Test \
    Cancel Sendrecv Sendrecv_replace Cart_create Cart_shift Cart_coords Cart_get Cart_map \
    Cart_rank Cart_sub Cartdim_get Dims_create Graph_get Graph_map Graph_create Graph_neighbors \
    Graphdims_get Graph_neighbors_count Topo_test Waitany Waitsome Probe Iprobe Win_create \
    Win_free Put Get Accumulate Win_fence Win_start Win_complete Win_post Win_wait Win_test \
    Win_lock Win_unlock Pack Unpack Op_create Op_free Reduce_scatter Attr_delete Attr_get \
    Attr_put Group_difference Group_excl Group_free Group_incl Group_intersection Group_rank \
    Group_range_excl Group_range_incl Group_size Group_translate_ranks Group_union \
    Group_compare Intercomm_create Intercomm_merge Keyval_free Keyval_create Abort Error_class \
    Errhandler_create Errhandler_free Errhandler_get Error_string Errhandler_set \
    Get_processor_name Initialized Wtick Wtime Address Bsend_init Buffer_attach Buffer_detach \
    Request_free Recv_init Send_init Get_count Get_elements Pack_size Rsend_init Ssend_init \
    Start Startall Testall Testany Test_cancelled Testsome Type_commit Type_contiguous \
    Type_extent Type_free Type_hindexed Type_hvector Type_indexed Type_lb Type_size Type_struct \
    Type_ub Type_vector File_open File_close File_read File_read_all File_write File_write_all \
    File_read_at File_read_at_all File_write_at File_write_at_all Comm_spawn \
    Comm_spawn_multiple Request_get_status Ireduce Iallreduce Ibarrier Ibcast Ialltoall \
    Ialltoallv Iallgather Iallgatherv Igather Igatherv Iscatter Iscatterv Ireduce_scatter Iscan \
    Reduce_scatter_block Ireduce_scatter_block Alltoallw Ialltoallw Get_accumulate";

/// Events' values named: `(type, value) →` the name (a caller's whole label) and the routine
/// it names, if the model knows it.
type Names = HashMap<(u64, u64), (String, Option<Routine>), ShortKeys>;

/// The `.pcf`'s names of events' values (the first word; a caller's whole label).
fn pcf_names(pcf: &str) -> Names {
    let mut names = Names::default();
    let mut types: Vec<u64> = Vec::new();
    let mut in_values = false;
    for line in pcf.lines().map(str::trim) {
        let mut w = line.split_whitespace();
        match line {
            "EVENT_TYPE" => (types.clear(), in_values = false).1,
            "VALUES" => in_values = true,
            "" => in_values = false,
            _ if in_values => {
                if let (Some(v), Some(n)) = (w.next().and_then(|v| v.parse().ok()), w.next()) {
                    let label = || {
                        line.split_once(char::is_whitespace)
                            .map_or("", |x| x.1.trim())
                    };
                    for &t in &types {
                        let n = if is_caller(t) { label() } else { n };
                        names.insert((t, v), (n.to_string(), Routine::from_mpi_name(n)));
                    }
                }
            }
            _ => {
                if let Some(t) = w.nth(1).and_then(|t| t.parse().ok()) {
                    types.push(t);
                }
            }
        }
    }
    names
}

/// One MPI call of a task, as its events and records give it (40 bytes: a trace holds
/// millions).
#[derive(Default)]
struct PCall {
    t0: u64,
    t1: u64,
    /// Its event's value (at most `u32::MAX`: Extrae's are a routine's number) and type (from
    /// the first of [`MPI_TYPES`]), and the routine they name, if the model knows it.
    value: u32,
    ty: u8,
    routine: Option<Routine>,
    /// The communication records of what it sent and received, from 1 (0: none).
    sent: u32,
    got: u32,
    /// Its collective's operation in its task's `glops`, from 1 (0: none).
    coll: u32,
    /// Its caller's events' values (function, line) in its task's `sites`, from 1 (0: none).
    site: u32,
}

impl PCall {
    fn what(&self) -> (u64, u64) {
        (MPI_TYPES.start() + self.ty as u64, self.value as u64)
    }
}

#[derive(Clone, Copy, Default)]
struct Glop {
    sent: u64,
    got: u64,
    comm: i64,
    root: Option<i64>,
    is_root: bool,
}

/// A task's calls being read: the one open, by index; the collectives' operations and the
/// callers' values its calls refer to.
#[derive(Default)]
struct Task {
    calls: Vec<PCall>,
    open: Option<usize>,
    glops: Vec<Glop>,
    sites: Vec<(u64, u64)>,
    /// The caller's events last seen: their time and values (function, line).
    caller: (u64, u64, u64),
}

impl Task {
    /// A call of event `what` begins at `t`, the one open from now.
    fn begin(&mut self, (what, routine): ((u64, u64), Option<Routine>), t: u64) {
        let mut c = PCall {
            ty: (what.0 - MPI_TYPES.start()) as u8,
            value: what.1.min(u32::MAX.into()) as u32,
            routine,
            t0: t,
            t1: t,
            ..PCall::default()
        };
        if let (at, f, l) = self.caller
            && at == t
        {
            self.sites.push((f, l));
            c.site = self.sites.len() as u32;
        }
        self.calls.push(c);
        self.open = Some(self.calls.len() - 1);
    }

    /// The open call, if it began at `t`.
    fn open_at(&self, t: u64) -> Option<usize> {
        self.open.filter(|&i| self.calls[i].t0 == t)
    }

    /// The collective operation of call `i`, made where it has none.
    fn glop_mut(&mut self, i: usize) -> &mut Glop {
        if self.calls[i].coll == 0 {
            self.glops.push(Glop::default());
            self.calls[i].coll = self.glops.len() as u32;
        }
        &mut self.glops[self.calls[i].coll as usize - 1]
    }

    /// A call's collective operation.
    fn glop(&self, c: &PCall) -> Option<Glop> {
        (c.coll > 0).then(|| self.glops[c.coll as usize - 1])
    }

    /// A call's caller's values, (0, 0) where it has none.
    fn site(&self, c: &PCall) -> (u64, u64) {
        match c.site {
            0 => (0, 0),
            i => self.sites[i as usize - 1],
        }
    }
}

/// The header's fields used: the unit of time in ns, and each task's node.
struct Header {
    unit: u64,
    nodes: Vec<u32>,
}

fn header(line: &str) -> Result<Header, String> {
    let bad = || {
        format!(
            "expected a Paraver header `#Paraver (DATE):END:RESOURCES:NAPPL:NTASKS(THREADS:NODE,…)`, found `{line}`"
        )
    };
    let rest = line.split_once("):").ok_or_else(bad)?.1;
    // Fields at ':' outside parentheses.
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0, 0);
    for (i, c) in rest.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ':' if depth == 0 => {
                parts.push(&rest[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&rest[from..]);
    if parts.len() < 4 {
        return Err(bad());
    }
    let unit = match parts[0].split_once('_').map(|(_, u)| u) {
        None | Some("us") => 1000,
        Some("ns") => 1,
        Some("ms") => 1_000_000,
        Some(u) => return Err(format!("unknown time unit `_{u}` in the header")),
    };
    let appl = parts[3];
    let (n, list) = appl.split_once('(').ok_or_else(bad)?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    let list = list.split(')').next().unwrap_or("");
    let nodes: Vec<u32> = list
        .split(',')
        .map(|t| {
            t.split(':')
                .nth(1)
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(1)
        })
        .collect();
    if nodes.len() != n || n == 0 {
        return Err(format!(
            "the header's first application lists {} tasks of {n}",
            nodes.len()
        ));
    }
    Ok(Header { unit, nodes })
}

/// The trace of a `.prv` text, with its `.pcf` if there is one; `read` is called once the text
/// is no longer needed. The text is not checked as UTF-8 first: its plain lines are digits and
/// separators, the others checked as they are read.
pub(super) fn parse(
    name: &str,
    text: &[u8],
    pcf: Option<&str>,
    read: &dyn Fn(),
) -> Result<Trace, TraceError> {
    let (first, rest) = match memchr::memchr(b'\n', text) {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => (text, &[][..]),
    };
    let first = std::str::from_utf8(first)
        .map_err(|_| TraceError::line(name, 1, "expected UTF-8 text".into()))?;
    let h = header(first.trim_end_matches('\r')).map_err(|m| TraceError::line(name, 1, m))?;
    let p = h.nodes.len();
    let mut names: Names = pcf.map(pcf_names).unwrap_or_default();
    let mut notes = Notes::default();
    if names.is_empty() {
        notes.say("no .pcf beside it: MPI routines named by Extrae's numbering".into());
        for (v, n) in EXTRAE_VALUES.split_whitespace().enumerate() {
            for t in MPI_TYPES {
                let name = format!("MPI_{n}");
                let r = Routine::from_mpi_name(&name);
                names.insert((t, v as u64 + 1), (name, r));
            }
        }
    }
    let nodes: std::collections::BTreeSet<u32> = h.nodes.iter().copied().collect();
    notes.say(format!(
        "Paraver records no requests and no communicator of a point-to-point message: an MPI_Irecv \
         completes in the Wait or Test holding its message's arrival, an MPI_Isend in the next \
         Waitall or Wait that completes no receive; messages are matched on MPI_COMM_WORLD ({p} \
         tasks on {} node{})",
        nodes.len(),
        if nodes.len() == 1 { "" } else { "s" }
    ));
    let body = read_body(name, rest, &h, &names, &mut notes)?;
    read();
    let (comms, mut tasks, records) = (body.comms, body.tasks, body.records);
    let matched = match_messages(&mut tasks, &records).map_err(|m| TraceError::at(name, m))?;
    let inside = (body.inside, matched);
    if inside != (0, 0) {
        notes.say(format!(
            "{} MPI calls made inside another (an MPI library's collective built on calls it traced) \
             are taken as part of it, and {} messages sent inside one as its own",
            inside.0, inside.1
        ));
    }
    let ours: Comms = comm_ids(&comms, p);
    let roots = flagged_roots(&tasks);
    let places = places(&tasks, &names, &ours);
    let defined = ours.values().filter(|(id, _)| *id > 0).map(|(id, m)| Comm {
        id: *id,
        members: m.clone(),
    });
    let mut defined: Vec<Comm> = defined.collect();
    defined.sort_by_key(|c| c.id);
    defined.dedup_by_key(|c| c.id);
    let cx = Context {
        names: &names,
        comms: &ours,
        roots: &roots,
        records: &records,
        places: &places,
    };
    let mut trace = read_ranks(name, p, notes, defined, &places.named, &|r, out| {
        Ok(rank_calls(r, &tasks[r], &cx, out))
    })?;
    for (r, &node) in h.nodes.iter().enumerate() {
        let mut m = trace.meta.ranks.get(r).clone();
        m.hostname = format!("node {node}");
        trace.meta.ranks.set(r, m);
    }
    Ok(trace)
}

/// The places the calls were made from, numbered as first met: their callers' event values
/// (function, line) → index into `named`.
#[derive(Default)]
struct Places {
    index: HashMap<(u64, u64), u32>,
    named: Vec<Named>,
}

impl Places {
    /// The index of the place of a call's caller events, or `UNKNOWN` where it has none or
    /// the `.pcf` names neither.
    fn of(&mut self, site: (u64, u64), names: &Names) -> u32 {
        if site == (0, 0) {
            return UNKNOWN;
        }
        if let Some(&i) = self.index.get(&site) {
            return i;
        }
        let label = |types: [u64; 2], v: u64| {
            (types.iter()).find_map(|&t| names.get(&(t, v)).map(|n| n.0.as_str()))
        };
        let n = caller_named(label(CALLER, site.0), label(CALLER_LINE, site.1));
        let i = match n == Named::default() {
            true => UNKNOWN,
            false => {
                self.named.push(n);
                self.named.len() as u32 - 1
            }
        };
        self.index.insert(site, i);
        i
    }
}

/// A place from Extrae's labels of a caller's function (`main`, or `short [full]` where it
/// shortened it) and line (`42 (file.c)`, `42 (file.c, module)`, `42 (short) [42 (file.c)]`);
/// its `Unresolved` and `_NOT_Found` are not names.
fn caller_named(function: Option<&str>, line: Option<&str>) -> Named {
    let full = |l: &str| -> String {
        match l.strip_suffix(']').and_then(|l| l.split_once(" [")) {
            Some((_, full)) => full.to_string(),
            None => l.to_string(),
        }
    };
    let known = |s: String| match s.as_str() {
        "Unresolved" | "_NOT_Found" | "End" => String::new(),
        _ => s,
    };
    let function = known(function.map(full).unwrap_or_default());
    let (line, file) = line
        .map(full)
        .and_then(|l| {
            let (n, rest) = l.split_once(' ')?;
            let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
            let file = inner.split_once(", ").map_or(inner, |x| x.0);
            Some((n.parse().ok()?, known(file.to_string())))
        })
        .unwrap_or_default();
    Named {
        function,
        line: if file.is_empty() { 0 } else { line },
        file,
    }
}

/// What the body of a `.prv` holds: its communicators (Paraver's id, members from 0), each
/// task's calls, the communication records, and how many calls were made inside another.
struct Body {
    comms: Vec<(i64, Vec<u32>)>,
    tasks: Vec<Task>,
    records: Records,
    inside: u64,
}

/// The communication records of every piece, in the file's order, by their index from 0.
#[derive(Default)]
struct Records {
    pieces: Vec<Vec<Record>>,
    /// The index of each piece's first.
    first: Vec<usize>,
    len: usize,
}

impl Records {
    fn push(&mut self, piece: Vec<Record>) {
        self.first.push(self.len);
        self.len += piece.len();
        self.pieces.push(piece);
    }

    fn iter(&self) -> impl Iterator<Item = &Record> {
        self.pieces.iter().flatten()
    }

    /// Record `i`, looked for first in the piece `near` holds (a task's calls meet their
    /// records in order: most are in the piece of the one before), which it then holds.
    fn get_near(&self, i: usize, near: &std::cell::Cell<usize>) -> Record {
        let k = near.get();
        if let Some(piece) = self.pieces.get(k)
            && let Some(&r) = i.checked_sub(self.first[k]).and_then(|j| piece.get(j))
        {
            return r;
        }
        let k = self.piece_of(i);
        near.set(k);
        self.pieces[k][i - self.first[k]]
    }

    /// The piece holding record `i`.
    fn piece_of(&self, i: usize) -> usize {
        // The pieces hold about as many records each: the piece at `i`'s share of them, a step
        // or two either way at most.
        let n = self.pieces.len();
        // (at most 2^32 records: `match_messages`)
        let k = i.checked_mul(n).map_or(n - 1, |x| x / self.len.max(1));
        let mut k = k.min(n - 1);
        while self.first[k] > i {
            k -= 1;
        }
        while k + 1 < n && self.first[k + 1] <= i {
            k += 1;
        }
        k
    }
}

/// A communication record: sender, logical send, receiver, logical and physical receive, bytes,
/// tag (tasks from 0, times in ns; 48 bytes: a trace holds millions).
type Record = (u32, u64, u32, u64, u64, u64, i32);

/// Reads the lines after the header: in rounds of a few pieces of about [`PIECE_BYTES`], each
/// round's pieces read in parallel ([`piece`]), then each task's events of them in order
/// ([`event`]), task by task in parallel. The pieces' buffers serve every round: the items
/// of a whole trace (tens of bytes a line) are never all held, nor their pages faulted in.
fn read_body(
    name: &str,
    text: &[u8],
    h: &Header,
    names: &Names,
    notes: &mut Notes,
) -> Result<Body, TraceError> {
    let p = h.nodes.len();
    let pieces = super::line_pieces(text, text.len() / PIECE_BYTES);
    let round = 2 * rayon::current_num_threads();
    let routines = Routines::new(names);
    let mut bufs: Vec<Piece> = (0..round.min(pieces.len()))
        .map(|_| Piece::new(p))
        .collect();
    let mut comms = Vec::new();
    let mut records = Records::default();
    let mut tasks: Vec<Task> = (0..p).map(|_| Task::default()).collect();
    let (mut inside, mut read) = (0, 0);
    for (k, these) in pieces.chunks(round).enumerate() {
        let bufs = &mut bufs[..these.len()];
        (bufs.par_iter_mut().zip(these)).for_each(|(pc, t)| piece(name, text, t, h, pc));
        if let Some(e) = bufs.iter_mut().find_map(|pc| pc.error.take()) {
            return Err(e);
        }
        let done = &*bufs;
        inside += (tasks.par_iter_mut().enumerate())
            .map(|(r, tk)| {
                let mut inside = 0;
                for pc in done {
                    for &(t, ty, v) in pc.items_of(r) {
                        match ty {
                            GLOP_RECORD => operation(tk, t, pc.glops[v as usize]),
                            _ => inside += event(tk, &routines, ty, v, t),
                        }
                    }
                }
                inside
            })
            .sum::<u64>();
        read += these.iter().map(|t| t.len()).sum::<usize>();
        if k == 0 && read < text.len() {
            // After the first round, each task's calls given room for the whole body at the
            // rate read so far (grown, millions would be copied at each doubling).
            let scale = text.len() as f64 / read as f64 * 1.05;
            for tk in &mut tasks {
                tk.calls.reserve((tk.calls.len() as f64 * scale) as usize);
            }
        }
        for pc in bufs.iter_mut() {
            comms.append(&mut pc.comms);
            // (the next piece's given room for about as many: grown, each is copied)
            let n = pc.records.len();
            records.push(std::mem::replace(
                &mut pc.records,
                Vec::with_capacity(n + n / 8),
            ));
            notes.merge(std::mem::take(&mut pc.notes));
        }
    }
    Ok(Body {
        comms,
        tasks,
        records,
        inside,
    })
}

/// About how many bytes of the body a piece holds: a round's items stay in the caches' reach.
const PIECE_BYTES: usize = 1 << 20;

/// Gives each record's message to the calls holding its logical send and receive (the
/// record's index from 1); returns how many records no such pair holds (messages inside
/// another call).
fn match_messages(tasks: &mut [Task], records: &Records) -> Result<u64, String> {
    if records.len >= u32::MAX as usize {
        return Err(format!(
            "holds {} communication records, more than this reader numbers ({})",
            records.len,
            u32::MAX - 1
        ));
    }
    // The calls holding each record's logical times, each task's searched from where its last
    // search ended; else an MPI_Irecv with no message yet.
    let sorted: Vec<bool> = (tasks.par_iter())
        .map(|tk| tk.calls.windows(2).all(|w| w[0].t0 <= w[1].t0))
        .collect();
    let near = |&sorted: &bool| Near { at: 0, sorted };
    let mut sends: Vec<Near> = sorted.iter().map(near).collect();
    let mut recvs: Vec<Near> = sorted.iter().map(near).collect();
    let mut inside = 0;
    for (k, &(s, ls, d, lr, ..)) in records.iter().enumerate() {
        let (s, d) = (s as usize, d as usize);
        let send = find(&tasks[s].calls, ls, &mut sends[s], |r| {
            matches!(r.shape(), Shape::Send | Shape::Isend | Shape::Sendrecv)
        });
        let recv = find(&tasks[d].calls, lr, &mut recvs[d], |r| {
            matches!(r.shape(), Shape::Recv | Shape::Irecv | Shape::Sendrecv)
        });
        let recv = recv.or_else(|| irecv_before(&tasks[d].calls, lr));
        match (send, recv) {
            (Some(i), Some(j)) => {
                tasks[s].calls[i].sent = k as u32 + 1;
                tasks[d].calls[j].got = k as u32 + 1;
            }
            _ => inside += 1,
        }
    }
    Ok(inside)
}

/// Where Extrae flags the root (event 50100003 at the root alone): the k-th collective (from 1)
/// on each communicator → the flagging task.
fn flagged_roots(tasks: &[Task]) -> HashMap<(i64, usize), usize> {
    let mut roots = HashMap::new();
    // Only a call with an operation flags one.
    for (r, tk) in tasks
        .iter()
        .enumerate()
        .filter(|(_, tk)| !tk.glops.is_empty())
    {
        let mut seen: HashMap<i64, usize> = HashMap::new();
        let colls = tk
            .calls
            .iter()
            .filter(|c| c.routine.is_some_and(|x| x.shape() == Shape::Coll));
        for c in colls {
            let g = tk.glop(c);
            let comm = g.map_or(0, |g| g.comm);
            let k = seen.entry(comm).or_insert(0);
            *k += 1;
            if g.is_some_and(|g| g.is_root) {
                roots.insert((comm, *k), r);
            }
        }
    }
    roots
}

/// The routine of an event's (type, value), if the model knows it.
fn routine(names: &Names, what: (u64, u64)) -> Option<Routine> {
    names.get(&what).and_then(|n| n.1)
}

/// [`routine`] of the MPI types' values below [`DENSE_VALUES`] from a table (one lookup a call
/// begun: hashing them took a tenth of a large trace's reading), the others' hashed.
struct Routines<'n> {
    names: &'n Names,
    dense: Vec<Option<Routine>>,
}

const DENSE_VALUES: u64 = 1024;

impl<'n> Routines<'n> {
    fn new(names: &'n Names) -> Routines<'n> {
        let types = MPI_TYPES.end() - MPI_TYPES.start() + 1;
        let mut dense = vec![None; (types * DENSE_VALUES) as usize];
        for (&(ty, v), &(_, r)) in names {
            if MPI_TYPES.contains(&ty) && v < DENSE_VALUES {
                dense[((ty - MPI_TYPES.start()) * DENSE_VALUES + v) as usize] = r;
            }
        }
        Routines { names, dense }
    }

    fn get(&self, (ty, v): (u64, u64)) -> Option<Routine> {
        match MPI_TYPES.contains(&ty) && v < DENSE_VALUES {
            true => self.dense[((ty - MPI_TYPES.start()) * DENSE_VALUES + v) as usize],
            false => routine(self.names, (ty, v)),
        }
    }
}

/// Collectives that old MPI libraries build from others (whose calls inside are its parts).
fn composite(r: Option<Routine>) -> bool {
    matches!(
        r,
        Some(
            Routine::Allreduce
                | Routine::Allgather
                | Routine::Allgatherv
                | Routine::ReduceScatter
                | Routine::Alltoall
        )
    )
}

/// A `4:` record's collective operation at `t` on a task: the sizes, communicator and root of
/// the call that began then.
fn operation(tk: &mut Task, t: u64, g: Glop) {
    if let Some(i) = tk.open_at(t).filter(|&i| tk.calls[i].coll == 0) {
        *tk.glop_mut(i) = g;
    }
}

/// An event (type `ty`, value `v`) at `t` on a task; 1 where it begins a call inside another.
fn event(tk: &mut Task, routines: &Routines<'_>, ty: u64, v: i64, t: u64) -> u64 {
    if GLOBAL_OP.contains(&ty) {
        if let Some(i) = tk.open_at(t) {
            let g = tk.glop_mut(i);
            let v = v.max(0);
            match ty - GLOBAL_OP.start() {
                0 => g.sent = v as u64,
                1 => g.got = v as u64,
                2 => g.is_root = v == 1,
                _ => g.comm = v,
            }
        }
        return 0;
    }
    if is_caller(ty) {
        if tk.caller.0 != t {
            tk.caller = (t, 0, 0);
        }
        match CALLER.contains(&ty) {
            true => tk.caller.1 = v.max(0) as u64,
            false => tk.caller.2 = v.max(0) as u64,
        }
        if let Some(i) = tk.open_at(t) {
            let site = (tk.caller.1, tk.caller.2);
            match tk.calls[i].site {
                0 => {
                    tk.sites.push(site);
                    tk.calls[i].site = tk.sites.len() as u32;
                }
                k => tk.sites[k as usize - 1] = site,
            }
        }
        return 0;
    }
    if !MPI_TYPES.contains(&ty) {
        return 0;
    }
    let what = (ty, v.max(0) as u64);
    match (tk.open, v) {
        (None, 0) => {}
        (Some(i), 0) => {
            if tk.calls[i].what().0 == ty {
                tk.calls[i].t1 = t;
                tk.open = None;
            }
        }
        (None, _) => {
            tk.begin((what, routines.get(what)), t);
        }
        (Some(i), _) if tk.calls[i].what() == (ty, what.1.min(u32::MAX.into())) => {}
        (Some(i), _) => {
            let open = tk.calls[i].what();
            if open.0 == COLLECTIVE && ty == COLLECTIVE && !composite(routines.get(open)) {
                // A collective after one, with no end between (old traces): the next call.
                tk.calls[i].t1 = t;
                tk.begin((what, routines.get(what)), t);
            } else {
                return 1;
            }
        }
    }
    0
}

/// Where a task's last search ended, and whether its calls begin in time order.
struct Near {
    at: usize,
    sorted: bool,
}

/// How many of `calls` begin at `t` or before, as `partition_point` counts them: searched
/// outward from where the last search ended (records come in time order: the next is near),
/// where the calls begin in order (else the answer is binary search's own).
fn begun(calls: &[PCall], t: u64, near: &mut Near) -> usize {
    let before = |c: &PCall| c.t0 <= t;
    if !near.sorted {
        return calls.partition_point(before);
    }
    let (n, h) = (calls.len(), near.at.min(calls.len()));
    let (mut lo, mut hi, mut step) = (h, h, 1);
    if h == 0 || before(&calls[h - 1]) {
        // At h or after: the first call not begun, galloping forward.
        while hi < n && before(&calls[hi]) {
            lo = hi + 1;
            hi = h + step;
            step *= 2;
        }
        hi = hi.min(n);
    } else {
        // Before h: galloping back.
        lo = h - 1;
        hi = h - 1;
        while lo > 0 && !before(&calls[lo - 1]) {
            hi = lo - 1;
            lo = (h - 1).saturating_sub(step);
            step *= 2;
        }
        lo = lo.min(hi);
    }
    near.at = lo + calls[lo..hi].partition_point(before);
    near.at
}

/// The call of `calls` holding time `t` whose routine `f` takes.
fn find(calls: &[PCall], t: u64, near: &mut Near, f: impl Fn(Routine) -> bool) -> Option<usize> {
    let i = begun(calls, t, near).checked_sub(1)?;
    let c = &calls[i];
    (t <= c.t1 && c.routine.is_some_and(f)).then_some(i)
}

/// The latest `MPI_Irecv` before time `t` (a receive whose logical time is its Wait's) with no
/// message yet.
fn irecv_before(calls: &[PCall], t: u64) -> Option<usize> {
    let end = calls.partition_point(|c| c.t0 <= t);
    (0..end)
        .rev()
        .find(|&i| calls[i].got == 0 && calls[i].routine.is_some_and(|r| r.shape() == Shape::Irecv))
}

/// Our ids of the trace's communicators, with their members: the one of every task in order
/// is `MPI_COMM_WORLD` (0), the others from 1.
fn comm_ids(comms: &[(i64, Vec<u32>)], p: usize) -> HashMap<i64, (u32, Vec<u32>)> {
    let world: Vec<u32> = (0..p as u32).collect();
    let mut next = 1;
    let mut ids = HashMap::new();
    for (id, m) in comms {
        let ours = match *m == world {
            true => 0,
            false => {
                next += 1;
                next - 1
            }
        };
        ids.insert(*id, (ours, m.clone()));
    }
    ids
}

/// What every task's calls are read with: the events' names, the communicators (Paraver's id →
/// ours and the members), the roots flagged ([`flagged_roots`]), the communication records and
/// the places of the calls ([`places`]).
struct Context<'a> {
    names: &'a Names,
    comms: &'a Comms,
    roots: &'a HashMap<(i64, usize), usize>,
    records: &'a Records,
    places: &'a Places,
}

/// Paraver's communicator ids → ours and their members.
type Comms = HashMap<i64, (u32, Vec<u32>)>;

/// Why a call is left out, where it is: what is said after its name (its routine is not
/// costed: nothing).
fn left_out(pc: &PCall, tk: &Task, comms: &Comms) -> Option<&'static str> {
    let Some(rt) = pc.routine else {
        return Some("");
    };
    let no_record = Some(" with no communication record");
    match rt.shape() {
        Shape::None if matches!(rt, Routine::Init | Routine::InitThread | Routine::Finalize) => {
            None
        }
        Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv if !rt.is_probe() => {
            let msg = if rt.receives() { pc.got } else { pc.sent };
            no_record.filter(|_| msg == 0)
        }
        Shape::Sendrecv => no_record.filter(|_| pc.sent == 0 || pc.got == 0),
        Shape::Complete => None,
        Shape::Coll => match comm_of(tk.glop(pc), comms) {
            Some(_) => None,
            None => Some(" on a communicator the trace does not define"),
        },
        _ => Some(""),
    }
}

/// A collective's communicator: our id and its members as world ranks (none: the world's).
fn comm_of(g: Option<Glop>, comms: &Comms) -> Option<(u32, &[u32])> {
    let comm = g.map_or(0, |g| g.comm);
    match comms.get(&comm) {
        Some((id, m)) => Some((*id, m)),
        None if comm == 0 || comms.is_empty() => Some((0, &[])),
        None => None,
    }
}

/// The places of the calls kept, numbered as the tasks' calls meet them in order.
fn places(tasks: &[Task], names: &Names, comms: &Comms) -> Places {
    let mut places = Places::default();
    for tk in tasks.iter().filter(|tk| !tk.sites.is_empty()) {
        let sited = tk.calls.iter().filter(|c| c.site != 0);
        for pc in sited.filter(|pc| left_out(pc, tk, comms).is_none()) {
            places.of(tk.site(pc), names);
        }
    }
    places
}

/// A task's calls as the model's, in order, put to `out`: requests created and completed as
/// the module's documentation says; calls with no message found, or of routines the model
/// does not cost, left out (counted).
fn rank_calls(r: usize, tk: &Task, cx: &Context<'_>, out: &mut dyn Out) -> Notes {
    let mut notes = Notes::default();
    // Collectives so far per communicator, for the root another rank flagged.
    let mut seen: HashMap<i64, usize> = HashMap::new();
    // Open requests by the index of their call: (is a receive, physical arrival).
    let mut reqs: Requests<usize> = Requests::new();
    let mut open: Vec<(usize, bool, u64)> = Vec::new();
    // A call a call at most (grown, the rank's columns would be copied at each doubling).
    out.reserve(tk.calls.len());
    let near = std::cell::Cell::new(0);
    for (k, pc) in tk.calls.iter().enumerate() {
        let t = (pc.t0, pc.t1);
        if let Some(why) = left_out(pc, tk, cx.comms) {
            let what = pc.what();
            let name = match cx.names.get(&what) {
                Some(n) => n.0.clone(),
                None => format!("event {}:{}", what.0, what.1),
            };
            notes.skip(&format!("{name}{why}"));
            continue;
        }
        let Some(rt) = pc.routine else { continue };
        // Kept: its records are there (left_out).
        let record = |i: u32| cx.records.get_near(i as usize - 1, &near);
        let c = match rt.shape() {
            Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv => {
                let (peer, bytes, tag) = match rt.receives() {
                    true => {
                        let (source, .., b, tag) = record(pc.got);
                        (source as i32, b, tag)
                    }
                    false => {
                        let (_, _, dest, .., b, tag) = record(pc.sent);
                        (dest as i32, b, tag)
                    }
                };
                let mut c = Call::p2p(rt, t, bytes, peer, tag);
                if rt.creates_request() {
                    let receive = rt.receives();
                    c.e.id = reqs.create(k, receive.then_some((peer, tag))) as i64;
                    let arrival = if pc.got > 0 { record(pc.got).4 } else { 0 };
                    open.push((k, receive, arrival));
                }
                c
            }
            Shape::Sendrecv => {
                let ((_, _, dest, _, _, bytes, tag), got) = (record(pc.sent), record(pc.got));
                let mut c = Call::p2p(rt, t, bytes, dest as i32, tag);
                c.half = Some(RecvHalf {
                    bytes: got.5,
                    source: got.0 as i32,
                    tag: got.6,
                });
                c
            }
            Shape::Complete => {
                let mut c = Call::new(rt, t.0, t.1);
                c.done = completed(rt, t, &mut open, &mut reqs);
                c
            }
            Shape::Coll => {
                let g = tk.glop(pc);
                let comm = g.map_or(0, |g| g.comm);
                let nth = seen.entry(comm).or_insert(0);
                *nth += 1;
                let flagged = cx.roots.get(&(comm, *nth)).copied();
                let on = comm_of(g, cx.comms).unwrap_or((0, &[]));
                let mut c = collective(rt, t, g, r, on, flagged);
                // A nonblocking one completes as an MPI_Isend does (below).
                if rt.creates_request() {
                    c.e.id = reqs.create(k, None) as i64;
                    open.push((k, false, 0));
                }
                c
            }
            _ => Call::new(rt, t.0, t.1),
        };
        let site = match tk.site(pc) {
            (0, 0) => UNKNOWN,
            s => cx.places.index.get(&s).copied().unwrap_or(UNKNOWN),
        };
        out.put(&Call { site, ..c });
    }
    notes
}

/// What a Wait or Test at `t` completes: receives whose message arrived inside it; for a
/// Waitall every open request; for a Wait with no such receive, the oldest open send.
fn completed(
    rt: Routine,
    t: (u64, u64),
    open: &mut Vec<(usize, bool, u64)>,
    reqs: &mut Requests<usize>,
) -> Vec<Completion> {
    let take: Vec<usize> = match rt {
        Routine::Waitall => open.iter().map(|o| o.0).collect(),
        _ => {
            let mut arrived: Vec<usize> = (open.iter())
                .filter(|o| o.1 && (t.0..=t.1).contains(&o.2))
                .map(|o| o.0)
                .collect();
            if arrived.is_empty()
                && matches!(rt, Routine::Wait | Routine::Waitany | Routine::Waitsome)
            {
                arrived.extend(open.iter().find(|o| !o.1).or(open.first()).map(|o| o.0));
            }
            arrived
        }
    };
    open.retain(|o| !take.contains(&o.0));
    take.iter().filter_map(|k| reqs.complete(k)).collect()
}

/// A collective's call from its operation's record: sizes normalized as the model's
/// collectives take them (a Bcast's or Reduce's bytes at every rank, received at the non-root
/// or root), its communicator `(id, members)` and root as world ranks.
fn collective(
    rt: Routine,
    t: (u64, u64),
    g: Option<Glop>,
    me: usize,
    (id, members): (u32, &[u32]),
    flagged: Option<usize>,
) -> Call {
    let g = g.unwrap_or_default();
    let world = |v: i64| match members.is_empty() {
        true => v as i32,
        false => members.get(v as usize).map_or(PEER_NULL, |&w| w as i32),
    };
    let root = match (g.root, g.is_root, flagged) {
        (_, true, _) => me as i32,
        (Some(v), ..) => world(v),
        (None, false, Some(w)) => w as i32,
        (None, false, None) => -1,
    };
    let n = g.sent.max(g.got);
    // A nonblocking collective's sizes and root are its blocking twin's.
    let mut c = match rt.blocking() {
        Routine::Barrier => Call::coll(rt, t, -1, 0, 0),
        Routine::Bcast if root == me as i32 => Call::coll(rt, t, root, n, 0),
        Routine::Bcast => Call::coll(rt, t, root, 0, n),
        Routine::Reduce => Call::coll(rt, t, root, n, if root == me as i32 { n } else { 0 }),
        Routine::Allreduce | Routine::Scan | Routine::Exscan => Call::coll(rt, t, -1, n, n),
        Routine::Gather | Routine::Gatherv | Routine::Scatter | Routine::Scatterv => {
            Call::coll(rt, t, root, g.sent, g.got)
        }
        _ => Call::coll(rt, t, -1, g.sent, g.got),
    };
    c.e.comm = id;
    c
}

#[cfg(test)]
mod tests;
