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

use super::{Call, Notes, Requests, build};
use crate::error::TraceError;
use crate::trace::sites::{Named, UNKNOWN};
use crate::trace::{Comm, Completion, PEER_NULL, RecvHalf, Routine, Shape, Trace};
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
    let text = crate::trace::text::utf8(&name, &data)?;
    let pcf_path = path.with_extension("pcf");
    let pcf = match pcf_path.is_file() {
        true => Some(String::from_utf8_lossy(&read(&pcf_path)?).into_owned()),
        false => None,
    };
    // The file's pages are handed back once its body is read: the calls hold what is used.
    parse(&name, text, pcf.as_deref(), &|| data.release())
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
type Names = HashMap<(u64, u64), (String, Option<Routine>)>;

/// The `.pcf`'s names of events' values (the first word; a caller's whole label).
fn pcf_names(pcf: &str) -> Names {
    let mut names = HashMap::new();
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

/// One MPI call of a task, as its events and records give it.
#[derive(Default)]
struct PCall {
    /// Its event's (type, value), and the routine that names, if the model knows it.
    what: (u64, u64),
    routine: Option<Routine>,
    t0: u64,
    t1: u64,
    /// Sent: (destination task from 0, bytes, tag); received: (source, bytes, tag, physical
    /// receive time).
    sent: Option<(i32, u64, i32)>,
    got: Option<(i32, u64, i32, u64)>,
    /// A collective's (sent, received, communicator, root in the communicator or -1, this rank
    /// the root).
    coll: Option<Glop>,
    /// The values of its caller's events (function, line; 0: none).
    site: (u64, u64),
}

#[derive(Clone, Copy, Default)]
struct Glop {
    sent: u64,
    got: u64,
    comm: i64,
    root: Option<i64>,
    is_root: bool,
}

/// A task's calls being read: the one open, by index.
#[derive(Default)]
struct Task {
    calls: Vec<PCall>,
    open: Option<usize>,
    /// The caller's events last seen: their time and values (function, line).
    caller: (u64, u64, u64),
}

impl Task {
    /// A call of event `what` begins at `t`, the one open from now.
    fn begin(&mut self, (what, routine): ((u64, u64), Option<Routine>), t: u64) {
        let c = PCall {
            what,
            routine,
            t0: t,
            t1: t,
            site: match self.caller {
                (at, f, l) if at == t => (f, l),
                _ => (0, 0),
            },
            ..PCall::default()
        };
        self.calls.push(c);
        self.open = Some(self.calls.len() - 1);
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
/// is no longer needed.
pub(super) fn parse(
    name: &str,
    text: &str,
    pcf: Option<&str>,
    read: &dyn Fn(),
) -> Result<Trace, TraceError> {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
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
    let (comms, mut tasks) = (body.comms, body.tasks);
    let inside = (body.inside, match_messages(&mut tasks, body.records));
    if inside != (0, 0) {
        notes.say(format!(
            "{} MPI calls made inside another (an MPI library's collective built on calls it traced) \
             are taken as part of it, and {} messages sent inside one as its own",
            inside.0, inside.1
        ));
    }
    let ours: HashMap<i64, (u32, Vec<u32>)> = comm_ids(&comms, p);
    let roots = flagged_roots(&tasks);
    // Each task's calls in parallel, with its own places and notes, merged in task order as
    // one pass over the tasks would have made them.
    let ctx = (&names, &ours, &roots);
    let read: Vec<(Vec<Call>, Places, Notes)> = (tasks.par_iter().enumerate())
        .map(|(r, tk)| {
            let (mut places, mut notes) = (Places::default(), Notes::default());
            let calls = rank_calls(r, &tk.calls, ctx, &mut places, &mut notes);
            (calls, places, notes)
        })
        .collect();
    let mut calls = Vec::with_capacity(p);
    let mut places = Places::default();
    for (mut c, local, n) in read {
        places.merge(&local, &mut c);
        notes.merge(n);
        calls.push(c);
    }
    let defined = ours.values().filter(|(id, _)| *id > 0).map(|(id, m)| Comm {
        id: *id,
        members: m.clone(),
    });
    let mut defined: Vec<Comm> = defined.collect();
    defined.sort_by_key(|c| c.id);
    defined.dedup_by_key(|c| c.id);
    let mut trace = build(name, calls, notes, defined, &places.named)?;
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
    /// Adds a task's places (`local`, numbered as its calls met them) to these, the calls'
    /// sites renumbered.
    fn merge(&mut self, local: &Places, calls: &mut [Call]) {
        let mut ours = vec![UNKNOWN; local.named.len()];
        let mut sites: Vec<(&(u64, u64), &u32)> = local.index.iter().collect();
        sites.sort_by_key(|(_, i)| **i);
        for (site, &i) in sites {
            let global = *self.index.entry(*site).or_insert_with(|| match i {
                UNKNOWN => UNKNOWN,
                _ => {
                    self.named.push(local.named[i as usize].clone());
                    self.named.len() as u32 - 1
                }
            });
            if i != UNKNOWN {
                ours[i as usize] = global;
            }
        }
        for c in calls.iter_mut().filter(|c| c.site != UNKNOWN) {
            c.site = ours[c.site as usize];
        }
    }

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
    records: Vec<Record>,
    inside: u64,
}

/// A communication record: sender, logical send, receiver, logical and physical receive, bytes,
/// tag (tasks from 0, times in ns).
type Record = (usize, u64, usize, u64, u64, u64, i32);

/// Reads the lines after the header: in pieces in parallel ([`piece`]), then each task's
/// events of every piece in order ([`event`]).
fn read_body(
    name: &str,
    text: &str,
    h: &Header,
    names: &Names,
    notes: &mut Notes,
) -> Result<Body, TraceError> {
    let p = h.nodes.len();
    let pieces: Vec<Piece> = super::text_pieces(text, 4 * rayon::current_num_threads())
        .par_iter()
        .map(|&(line, t)| piece(name, line + 1, t, h))
        .collect();
    let mut comms = Vec::new();
    let mut records = Vec::new();
    for pc in &pieces {
        if let Some(e) = &pc.error {
            return Err(e.clone());
        }
    }
    let mut items: Vec<Vec<(&[Item], &[Glop])>> = vec![Vec::with_capacity(pieces.len()); p];
    for pc in &pieces {
        for (r, list) in &pc.items {
            items[*r as usize].push((list, &pc.glops));
        }
    }
    let mut tasks: Vec<Task> = (0..p).map(|_| Task::default()).collect();
    let inside: u64 = (tasks.par_iter_mut().zip(&items))
        .map(|(tk, lists)| {
            let mut inside = 0;
            // A call takes two events at least (its start and end): room reserved, not touched.
            tk.calls
                .reserve(lists.iter().map(|l| l.0.len()).sum::<usize>() / 2 + 1);
            for &(list, glops) in lists {
                for &(t, ty, v) in list {
                    match ty {
                        GLOP_RECORD => operation(tk, t, glops[v as usize]),
                        _ => inside += event(tk, names, ty, v, t),
                    }
                }
            }
            inside
        })
        .sum();
    for pc in pieces {
        comms.extend(pc.comms);
        records.extend(pc.records);
        notes.merge(pc.notes);
    }
    Ok(Body {
        comms,
        tasks,
        records,
        inside,
    })
}

/// A task's event (time, type, value) of a `2:` record, or a `4:` record's operation (type
/// [`GLOP_RECORD`], the value its index in its piece's operations).
type Item = (u64, u64, i64);

/// The type of an [`Item`] from a `4:` record.
const GLOP_RECORD: u64 = u64::MAX;

/// What a piece of the body holds: communicators, communication records, each task's items
/// (those of the types the reader uses) and the `4:` records' operations, what it left out,
/// and its first error.
#[derive(Default)]
struct Piece {
    comms: Vec<(i64, Vec<u32>)>,
    records: Vec<Record>,
    items: Vec<(u32, Vec<Item>)>,
    glops: Vec<Glop>,
    notes: Notes,
    error: Option<TraceError>,
}

/// Reads the lines of `text`, the first numbered `first`.
fn piece(name: &str, first: usize, text: &str, h: &Header) -> Piece {
    let p = h.nodes.len();
    let mut out = Piece::default();
    // Each task's items, by the index of its list in `out.items`: in a table where the tasks
    // are not too many for one a piece (a lookup a line), else hashed.
    let mut dense = vec![usize::MAX; if p <= 1 << 16 { p } else { 0 }];
    let mut sparse: HashMap<usize, usize> = HashMap::new();
    let mut f: Vec<&str> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let at = |m: String| TraceError::line(name, first + n, m);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        f.clear();
        f.extend(super::split_bytes(line, b':'));
        let f = &f;
        let int = |i: usize| -> Result<i64, TraceError> {
            let s = f.get(i).copied().unwrap_or("");
            // Most fields are plain digits: parsed as they are, else trimmed first.
            s.parse().or_else(|_| s.trim().parse()).map_err(|_| {
                at(format!(
                    "expected a number as field {}, found `{s}` in `{line}`",
                    i + 1
                ))
            })
        };
        let time = |i: usize| -> Result<u64, TraceError> {
            let t = int(i)?;
            u64::try_from(t)
                .ok()
                .and_then(|t| t.checked_mul(h.unit))
                .ok_or_else(|| at(format!("time {t} out of range")))
        };
        let mut read = || -> Result<(), TraceError> {
            if f[0] == "c" {
                // c:APPL:ID:N:TASK…, the first application's only.
                let members: Result<Vec<i64>, _> = (4..f.len()).map(int).collect();
                let members = members?;
                if int(1)? == 1 && members.iter().all(|&t| t >= 1 && t as usize <= p) {
                    let members = members.iter().map(|&t| t as u32 - 1).collect();
                    out.comms.push((int(2)?, members));
                }
                return Ok(());
            }
            let kind = int(0)?;
            if kind == 1 {
                return Ok(());
            }
            if !(2..=4).contains(&kind) {
                out.notes.skip(&format!("Paraver records of type {kind}"));
                return Ok(());
            }
            let task = int(3)?;
            if int(2)? != 1 || task < 1 || task as usize > p {
                out.notes.skip("records of another application or task");
                return Ok(());
            }
            let r = task as usize - 1;
            if kind == 3 {
                // The receiver's task is field 10.
                let dst = int(9)?;
                if int(8)? != 1 || dst < 1 || dst as usize > p {
                    return Err(at(format!(
                        "expected a receiving task 1–{p} of application 1 in `{line}`"
                    )));
                }
                out.records.push((
                    r,
                    time(5)?,
                    dst as usize - 1,
                    time(11)?,
                    time(12)?,
                    int(13)?.max(0) as u64,
                    int(14)? as i32,
                ));
                return Ok(());
            }
            if int(4)? != 1 {
                out.notes.skip("events of a task's other threads");
                return Ok(());
            }
            let t = time(5)?;
            let list = match dense.get_mut(r) {
                Some(k) => k,
                None => sparse.entry(r).or_insert(usize::MAX),
            };
            if *list == usize::MAX {
                out.items.push((r as u32, Vec::new()));
                *list = out.items.len() - 1;
            }
            let k = *list;
            if kind == 4 {
                // COMM:SENT:RECEIVED:OP:ROOT, for the call that began here.
                let g = Glop {
                    comm: int(6)?,
                    sent: int(7)?.max(0) as u64,
                    got: int(8)?.max(0) as u64,
                    root: Some(int(10)?),
                    is_root: false,
                };
                out.glops.push(g);
                let i = out.glops.len() as i64 - 1;
                out.items[k].1.push((t, GLOP_RECORD, i));
                return Ok(());
            }
            let items = &mut out.items[k].1;
            for k in (6..f.len().saturating_sub(1)).step_by(2) {
                let (ty, v) = (int(k)? as u64, int(k + 1)?);
                if MPI_TYPES.contains(&ty) || GLOBAL_OP.contains(&ty) || is_caller(ty) {
                    items.push((t, ty, v));
                }
            }
            Ok(())
        };
        if let Err(e) = read() {
            out.error = Some(e);
            break;
        }
    }
    out
}

/// Gives each record's message to the calls holding its logical send and receive; returns how
/// many records no such pair holds (messages inside another call).
fn match_messages(tasks: &mut [Task], records: Vec<Record>) -> u64 {
    // The calls holding each record's logical times, found in parallel (the calls do not
    // change); an MPI_Irecv with no message yet, in order.
    let found: Vec<(Option<usize>, Option<usize>)> = (records.par_iter())
        .map(|&(s, ls, d, lr, ..)| {
            let send = find(&tasks[s].calls, ls, |r| {
                matches!(r.shape(), Shape::Send | Shape::Isend | Shape::Sendrecv)
            });
            let recv = find(&tasks[d].calls, lr, |r| {
                matches!(r.shape(), Shape::Recv | Shape::Irecv | Shape::Sendrecv)
            });
            (send, recv)
        })
        .collect();
    let mut inside = 0;
    for ((s, _, d, lr, pr, bytes, tag), (send, recv)) in records.into_iter().zip(found) {
        let recv = recv.or_else(|| irecv_before(&tasks[d].calls, lr));
        match (send, recv) {
            (Some(i), Some(j)) => {
                tasks[s].calls[i].sent = Some((d as i32, bytes, tag));
                tasks[d].calls[j].got = Some((s as i32, bytes, tag, pr));
            }
            _ => inside += 1,
        }
    }
    inside
}

/// Where Extrae flags the root (event 50100003 at the root alone): the k-th collective (from 1)
/// on each communicator → the flagging task.
fn flagged_roots(tasks: &[Task]) -> HashMap<(i64, usize), usize> {
    let mut roots = HashMap::new();
    for (r, tk) in tasks.iter().enumerate() {
        let mut seen: HashMap<i64, usize> = HashMap::new();
        let colls = tk
            .calls
            .iter()
            .filter(|c| c.routine.is_some_and(|x| x.shape() == Shape::Coll));
        for c in colls {
            let comm = c.coll.map_or(0, |g| g.comm);
            let k = seen.entry(comm).or_insert(0);
            *k += 1;
            if c.coll.is_some_and(|g| g.is_root) {
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
    let open = tk.open.map(|i| &mut tk.calls[i]);
    if let Some(c) = open.filter(|c| c.t0 == t && c.coll.is_none()) {
        c.coll = Some(g);
    }
}

/// An event (type `ty`, value `v`) at `t` on a task; 1 where it begins a call inside another.
fn event(tk: &mut Task, names: &Names, ty: u64, v: i64, t: u64) -> u64 {
    if GLOBAL_OP.contains(&ty) {
        if let Some(c) = tk.open.map(|i| &mut tk.calls[i]).filter(|c| c.t0 == t) {
            let g = c.coll.get_or_insert_with(Glop::default);
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
        if let Some(c) = tk.open.map(|i| &mut tk.calls[i]).filter(|c| c.t0 == t) {
            c.site = (tk.caller.1, tk.caller.2);
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
            if tk.calls[i].what.0 == ty {
                tk.calls[i].t1 = t;
                tk.open = None;
            }
        }
        (None, _) => {
            tk.begin((what, routine(names, what)), t);
        }
        (Some(i), _) if tk.calls[i].what == what => {}
        (Some(i), _) => {
            let open = tk.calls[i].what;
            if open.0 == COLLECTIVE && ty == COLLECTIVE && !composite(routine(names, open)) {
                // A collective after one, with no end between (old traces): the next call.
                tk.calls[i].t1 = t;
                tk.begin((what, routine(names, what)), t);
            } else {
                return 1;
            }
        }
    }
    0
}

/// The call of `calls` holding time `t` whose routine `f` takes.
fn find(calls: &[PCall], t: u64, f: impl Fn(Routine) -> bool) -> Option<usize> {
    let i = calls.partition_point(|c| c.t0 <= t).checked_sub(1)?;
    let c = &calls[i];
    (t <= c.t1 && c.routine.is_some_and(f)).then_some(i)
}

/// The latest `MPI_Irecv` before time `t` (a receive whose logical time is its Wait's) with no
/// message yet.
fn irecv_before(calls: &[PCall], t: u64) -> Option<usize> {
    let end = calls.partition_point(|c| c.t0 <= t);
    (0..end).rev().find(|&i| {
        calls[i].got.is_none() && calls[i].routine.is_some_and(|r| r.shape() == Shape::Irecv)
    })
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
/// ours and the members) and the roots flagged ([`flagged_roots`]).
type Context<'a> = (
    &'a Names,
    &'a HashMap<i64, (u32, Vec<u32>)>,
    &'a HashMap<(i64, usize), usize>,
);

/// A task's calls as the model's, in order: requests created and completed as the module's
/// documentation says; calls with no message found, or of routines the model does not cost,
/// left out (counted).
fn rank_calls(
    r: usize,
    pcalls: &[PCall],
    (names, comms, roots): Context<'_>,
    places: &mut Places,
    notes: &mut Notes,
) -> Vec<Call> {
    let mut out = Vec::with_capacity(pcalls.len());
    // Collectives so far per communicator, for the root another rank flagged.
    let mut seen: HashMap<i64, usize> = HashMap::new();
    // Open requests by the index of their call: (is a receive, physical arrival).
    let mut reqs: Requests<usize> = Requests::new();
    let mut open: Vec<(usize, bool, u64)> = Vec::new();
    for (k, pc) in pcalls.iter().enumerate() {
        let t = (pc.t0, pc.t1);
        // Named only where a note needs it.
        let name = || match names.get(&pc.what) {
            Some(n) => n.0.clone(),
            None => format!("event {}:{}", pc.what.0, pc.what.1),
        };
        let Some(rt) = pc.routine else {
            notes.skip(&name());
            continue;
        };
        let c = match rt.shape() {
            Shape::None
                if matches!(rt, Routine::Init | Routine::InitThread | Routine::Finalize) =>
            {
                Call::new(rt, t.0, t.1)
            }
            Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv if !rt.is_probe() => {
                let msg = match rt.receives() {
                    true => pc.got.map(|(s, b, g, _)| (s, b, g)),
                    false => pc.sent,
                };
                let Some((peer, bytes, tag)) = msg else {
                    notes.skip(&format!("{} with no communication record", name()));
                    continue;
                };
                let mut c = Call::p2p(rt, t, bytes, peer, tag);
                if rt.creates_request() {
                    let receive = rt.receives();
                    c.e.id = reqs.create(k, receive.then_some((peer, tag))) as i64;
                    open.push((k, receive, pc.got.map_or(0, |g| g.3)));
                }
                c
            }
            Shape::Sendrecv => {
                let (Some((dest, bytes, tag)), Some((source, got, rtag, _))) = (pc.sent, pc.got)
                else {
                    notes.skip(&format!("{} with no communication record", name()));
                    continue;
                };
                let mut c = Call::p2p(rt, t, bytes, dest, tag);
                c.half = Some(RecvHalf {
                    bytes: got,
                    source,
                    tag: rtag,
                });
                c
            }
            Shape::Complete => {
                let mut c = Call::new(rt, t.0, t.1);
                c.done = completed(rt, t, &mut open, &mut reqs);
                c
            }
            Shape::Coll => {
                let comm = pc.coll.map_or(0, |g| g.comm);
                let nth = seen.entry(comm).or_insert(0);
                *nth += 1;
                let flagged = roots.get(&(comm, *nth)).copied();
                match collective(rt, t, pc.coll, r, comms, flagged) {
                    // A nonblocking one completes as an MPI_Isend does (below).
                    Some(mut c) if rt.creates_request() => {
                        c.e.id = reqs.create(k, None) as i64;
                        open.push((k, false, 0));
                        c
                    }
                    Some(c) => c,
                    None => {
                        notes.skip(&format!(
                            "{} on a communicator the trace does not define",
                            name()
                        ));
                        continue;
                    }
                }
            }
            _ => {
                notes.skip(&name());
                continue;
            }
        };
        out.push(Call {
            site: places.of(pc.site, names),
            ..c
        });
    }
    out
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
/// or root), its communicator and root as world ranks. None where the communicator is unknown.
fn collective(
    rt: Routine,
    t: (u64, u64),
    g: Option<Glop>,
    me: usize,
    comms: &HashMap<i64, (u32, Vec<u32>)>,
    flagged: Option<usize>,
) -> Option<Call> {
    let g = g.unwrap_or_default();
    let (id, members) = match comms.get(&g.comm) {
        Some((id, m)) => (*id, m.clone()),
        None if g.comm == 0 || comms.is_empty() => (0, Vec::new()),
        None => return None,
    };
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
    Some(c)
}
