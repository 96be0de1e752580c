//! Score-P's OTF2 traces, read through the OTF2 library ([`ffi`], opened at run time).
//!
//! An archive is an anchor file (`traces.otf2`), global definitions (`traces.def`) and a
//! directory of per-location definitions and events. The MPI ranks are the members of the
//! definitions' `COMM_LOCATIONS` group of the MPI paradigm, in rank order; a communicator's
//! members are its `COMM_GROUP`'s ranks (a `COMM_SELF` group is each rank alone). An MPI call is
//! the span of a region named `MPI_…` from its Enter to its Leave; its message comes from the
//! `MpiSend`/`MpiIsend`/`MpiRecv` record inside it, an `MPI_Irecv`'s from the `MpiIrecv` record
//! of the Wait or Test that completes its request, a collective's from its `MpiCollectiveEnd`
//! (Score-P's byte totals turned into the model's per-rank sizes below). Times are ticks of the
//! archive's clock from its global offset.

// The one binding of a C library outside `memory`: its callbacks and `dlopen` are unsafe.
#[allow(unsafe_code)]
mod ffi;

use super::{Call, Notes, Requests, build};
use crate::error::TraceError;
use crate::trace::sites::{Named, UNKNOWN};
use crate::trace::{Comm, PEER_ANY, PEER_NULL, RecvHalf, Routine, Shape, TAG_ANY, Trace};
use ffi::{Archive, Defs, Ev};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

const GROUP_COMM_LOCATIONS: u8 = 4;
const GROUP_COMM_GROUP: u8 = 5;
const GROUP_COMM_SELF: u8 = 6;
const PARADIGM_MPI: u8 = 4;
const PARADIGM_MEASUREMENT_SYSTEM: u8 = 6;
const ROLE_ARTIFICIAL: u8 = 31;
const UNDEFINED: u32 = u32::MAX;

/// Whether `head` begins as an OTF2 anchor file does.
pub(super) fn is_anchor(head: &[u8]) -> bool {
    head.get(2..6) == Some(b"OTF2")
}

/// A directory's anchor file (`*.otf2`), if it holds one.
pub(super) fn anchor_in(dir: &Path) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "otf2") && p.is_file())
        .collect();
    found.sort();
    found.into_iter().next()
}

/// The files of the archive anchored at `anchor`: it, its `.def` and its directory's files.
pub(super) fn files(anchor: &Path) -> Vec<PathBuf> {
    let mut all = vec![anchor.to_path_buf()];
    let def = anchor.with_extension("def");
    if def.is_file() {
        all.push(def);
    }
    if let Ok(dir) = std::fs::read_dir(anchor.with_extension("")) {
        let mut inner: Vec<PathBuf> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
        inner.sort();
        all.extend(inner.into_iter().filter(|p| p.is_file()));
    }
    all
}

pub(super) fn load(path: &Path) -> Result<Trace, TraceError> {
    let anchor = match path.is_dir() {
        true => anchor_in(path).ok_or_else(|| {
            TraceError::at(
                &path.display().to_string(),
                "holds no OTF2 anchor file".into(),
            )
        })?,
        false => path.to_path_buf(),
    };
    let name = anchor.display().to_string();
    let mut archive = Archive::open(&name).map_err(|m| TraceError::at(&name, m))?;
    let defs = std::mem::take(&mut archive.defs);
    decoded(&name, defs, &mut |world, each| archive.events(world, each))
}

/// How the ranks' events are had: `events(world, each)` hands each rank's (the locations of
/// `world`, in rank order) to `each` in turn, as [`Archive::events`] reads them.
type EventSource<'a> = dyn FnMut(&[u64], &mut dyn FnMut(usize, &[(u64, Ev)]) -> Result<(), String>) -> Result<(), String>
    + 'a;

/// The trace of an archive's definitions and events as the library hands them over: all that
/// is read here, not in the library (the reader's own part, fuzzed apart in `tests`).
fn decoded(name: &str, defs: Defs, events: &mut EventSource<'_>) -> Result<Trace, TraceError> {
    let mut notes = Notes::default();
    let world = ranks(&defs).map_err(|m| TraceError::at(name, m))?;
    let p = world.len();
    let (ticks, offset) = defs.clock.unwrap_or_else(|| {
        notes.say("no clock properties: times taken as nanoseconds".into());
        (1_000_000_000, 0)
    });
    if ticks == 0 {
        return Err(TraceError::at(
            name,
            "its clock has 0 ticks a second".into(),
        ));
    }
    let comms = Comms::new(&defs, p);
    let mut out: Vec<Vec<Call>> = Vec::with_capacity(p);
    let mut counts = Counts::default();
    let mut selves: HashMap<(u32, u32), u32> = HashMap::new();
    let regions = Regions::new(&defs);
    events(&world, &mut |r, evs| {
        let mut rank = Rank {
            me: r as u32,
            regions: &regions,
            comms: &comms,
            selves: &mut selves,
            clock: (ticks, offset),
            reqs: Requests::new(),
            posted: HashMap::new(),
            calls: Vec::new(),
        };
        rank.read(evs, &mut notes, &mut counts);
        out.push(rank.calls);
        Ok(())
    })
    .map_err(|m| TraceError::at(name, m))?;
    if out.len() != p {
        return Err(TraceError::at(
            name,
            format!("its events were read for {} of its {p} ranks", out.len()),
        ));
    }
    counts.say(&mut notes, p, world_nodes(&defs, &world));
    let mut defined: Vec<Comm> = comms.defined();
    let mut selves: Vec<((u32, u32), u32)> = selves.into_iter().collect();
    selves.sort_by_key(|s| s.1);
    defined.extend(selves.into_iter().map(|((_, r), id)| Comm {
        id,
        members: vec![r],
    }));
    let mut trace = build(name, out, notes, defined, &regions.places)?;
    for (r, &l) in world.iter().enumerate() {
        let mut m = trace.meta.ranks.get(r).clone();
        m.hostname = host(&defs, l);
        trace.meta.ranks.set(r, m);
    }
    Ok(trace)
}

/// Reads an archive held in memory (its files by their paths in it, the anchor first): the
/// library reads files, so they are written to a directory of their own first.
pub(super) fn parse(files: &[(String, Vec<u8>)]) -> Result<Trace, TraceError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "loggps-otf2-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let write = || -> std::io::Result<PathBuf> {
        for (name, data) in files {
            let at = dir.join(name.trim_start_matches('/'));
            std::fs::create_dir_all(at.parent().unwrap_or(&dir))?;
            std::fs::write(at, data)?;
        }
        Ok(dir.join(files.first().map_or("", |f| f.0.as_str())))
    };
    let result = match write() {
        Ok(anchor) => load(&anchor),
        Err(e) => Err(TraceError::at(&dir.display().to_string(), e.to_string())),
    };
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// The MPI ranks' locations, in rank order.
fn ranks(defs: &Defs) -> Result<Vec<u64>, String> {
    let mut ids: Vec<u32> = defs.groups.keys().copied().collect();
    ids.sort();
    let world = (ids.into_iter())
        .map(|id| &defs.groups[&id])
        .find(|g| g.0 == GROUP_COMM_LOCATIONS && g.1 == PARADIGM_MPI && !g.2.is_empty())
        .map(|g| g.2.clone())
        .ok_or(
            "defines no MPI ranks (no group of MPI's communication locations): an OTF2 trace of \
             an MPI program is needed",
        )?;
    let mut sorted = world.clone();
    sorted.sort();
    match sorted.windows(2).find(|w| w[0] == w[1]) {
        Some(w) => Err(format!(
            "its MPI ranks' group lists location {} twice",
            w[0]
        )),
        None => Ok(world),
    }
}

/// The name of the system tree node a location's process ran on.
fn host(defs: &Defs, location: u64) -> String {
    let group = (defs.locations.iter())
        .find(|l| l.0 == location)
        .map(|l| l.3);
    let node = group
        .and_then(|g| defs.groups_of_locations.get(&g))
        .map(|g| g.2);
    node.and_then(|n| defs.nodes.get(&n))
        .map_or_else(String::new, |n| defs.string(n.0).to_string())
}

fn world_nodes(defs: &Defs, world: &[u64]) -> usize {
    let mut hosts: Vec<String> = world.iter().map(|&l| host(defs, l)).collect();
    hosts.sort();
    hosts.dedup();
    hosts.len()
}

/// The archive's communicators: OTF2's id → ours and its members (world ranks), or `None` for
/// one whose group is `COMM_SELF` (each rank alone: ours per rank, made when first used).
struct Comms {
    by_id: HashMap<u32, Option<(u32, Vec<u32>)>>,
    /// Our next id, after the defined ones.
    next: u32,
}

impl Comms {
    fn new(defs: &Defs, p: usize) -> Comms {
        let identity =
            |m: &[u64]| m.len() == p && m.iter().enumerate().all(|(i, &r)| r == i as u64);
        let members = |g: u32| defs.groups.get(&g);
        // MPI_COMM_WORLD: the one so named, else the first of all ranks in order.
        let world = (defs.comms.iter())
            .find(|c| defs.string(c.1) == "MPI_COMM_WORLD")
            .or_else(|| (defs.comms.iter()).find(|c| members(c.2).is_some_and(|g| identity(&g.2))))
            .map(|c| c.0);
        let mut by_id = HashMap::new();
        let mut next = 1;
        for &(id, _, group, _) in &defs.comms {
            let Some((kind, _, m)) = members(group) else {
                continue;
            };
            let ours = match *kind {
                GROUP_COMM_SELF => None,
                GROUP_COMM_GROUP if Some(id) == world => Some((0, (0..p as u32).collect())),
                GROUP_COMM_GROUP => {
                    next += 1;
                    let m = m.iter().map(|&r| r.min(u32::MAX as u64) as u32).collect();
                    Some((next - 1, m))
                }
                _ => continue,
            };
            by_id.insert(id, ours);
        }
        Comms { by_id, next }
    }

    /// The communicators besides the world's, ours, by id.
    fn defined(&self) -> Vec<Comm> {
        let mut d: Vec<Comm> = (self.by_id.values().flatten())
            .filter(|(id, _)| *id > 0)
            .map(|(id, m)| Comm {
                id: *id,
                members: m.clone(),
            })
            .collect();
        d.sort_by_key(|c| c.id);
        d
    }
}

/// What was left out or approximated over all ranks, said once each.
#[derive(Default)]
struct Counts {
    nested: u64,
    outside: u64,
    unknown_comm: u64,
    unfinished: u64,
    no_message: std::collections::BTreeMap<String, u64>,
    started: u64,
}

impl Counts {
    fn say(&self, notes: &mut Notes, p: usize, nodes: usize) {
        notes.say(format!(
            "OTF2 records no point-to-point receive's source, tag or size before it completes: an \
             MPI_Irecv takes them from the Wait or Test that completes it; the collectives' sizes \
             are Score-P's byte totals, divided back into the model's per-rank sizes ({p} ranks \
             on {nodes} node{})",
            if nodes == 1 { "" } else { "s" }
        ));
        let counted = [
            (
                self.nested,
                "MPI calls made inside another are taken as part of it",
            ),
            (
                self.outside,
                "MPI records outside any MPI call were left out",
            ),
            (
                self.unknown_comm,
                "calls on a communicator the archive does not define were left out",
            ),
            (
                self.unfinished,
                "MPI_Irecv requests are never completed in the trace: each taken as a receive \
                 from MPI_PROC_NULL",
            ),
            (
                self.started,
                "operations started by MPI_Start or MPI_Startall are taken as MPI_Isend or \
                 MPI_Irecv calls sharing the call's time",
            ),
        ];
        for (n, what) in counted.into_iter().filter(|c| c.0 > 0) {
            notes.say(format!("{n} {what}"));
        }
        for (name, &n) in &self.no_message {
            notes.skip_n(&format!("{name} with no message record"), n);
        }
    }

    fn none(&mut self, name: &str) {
        *self.no_message.entry(name.to_string()).or_default() += 1;
    }
}

/// What a region is: an MPI routine's (the model's routine, if it has it), `MPI_Start` or
/// `MPI_Startall`'s, or another paradigm's.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Mpi(Option<Routine>),
    Start,
    Other,
}

struct Region {
    name: String,
    kind: Kind,
    /// The place of an MPI call made inside it, where it is a function of the program
    /// (its first line): an index into [`Regions::places`], or `UNKNOWN`.
    site: u32,
}

/// The archive's regions by id, looked up once an event (sorted: no hashing), and the places
/// of those that hold calls: each a region of the program, named by its own definition
/// (function, source file, first line).
struct Regions {
    all: Vec<(u32, Region)>,
    places: Vec<Named>,
    /// Calling contexts (Score-P with unwinding) → their region, and the place a call entered
    /// through one was made: its parent context's function, at the parent's source code
    /// location (where the parent called it).
    contexts: HashMap<u32, (u32, u32)>,
}

impl Regions {
    fn new(defs: &Defs) -> Regions {
        let mut ids: Vec<u32> = defs.regions.keys().copied().collect();
        ids.sort();
        let mut places = Vec::new();
        let all = (ids.into_iter())
            .map(|id| {
                let d = defs.regions[&id];
                let name = defs.string(d.name).to_string();
                let kind = match name.as_str() {
                    "MPI_Start" | "MPI_Startall" => Kind::Start,
                    // A matched receive's message is a receive's.
                    "MPI_Mrecv" => Kind::Mpi(Some(Routine::Recv)),
                    n if n.starts_with("MPI_") => Kind::Mpi(Routine::from_mpi_name(n)),
                    _ => Kind::Other,
                };
                let program = kind == Kind::Other
                    && d.role != ROLE_ARTIFICIAL
                    && d.paradigm != PARADIGM_MEASUREMENT_SYSTEM
                    && !name.is_empty();
                let site = match program {
                    true => {
                        places.push(Named {
                            function: name.clone(),
                            file: defs.string(d.file).to_string(),
                            line: d.begin,
                        });
                        places.len() as u32 - 1
                    }
                    false => UNKNOWN,
                };
                (id, Region { name, kind, site })
            })
            .collect();
        let mut regions = Regions {
            all,
            places,
            contexts: HashMap::new(),
        };
        regions.contexts = regions.contexts_of(defs);
        regions
    }

    /// Each calling context's region and place (the place added to `places` once).
    fn contexts_of(&mut self, defs: &Defs) -> HashMap<u32, (u32, u32)> {
        let mut known: HashMap<Named, u32> = HashMap::new();
        let mut ids: Vec<u32> = defs.contexts.keys().copied().collect();
        ids.sort();
        let mut out = HashMap::new();
        for id in ids {
            let (region, _, parent) = defs.contexts[&id];
            let site = match defs.contexts.get(&parent) {
                None => UNKNOWN,
                Some(&(caller, scl, _)) => {
                    let d = defs.regions.get(&caller);
                    let (file, line) = match defs.locations_in_code.get(&scl) {
                        Some(&(f, l)) => (f, l),
                        None => d.map_or((UNDEFINED, 0), |d| (d.file, d.begin)),
                    };
                    let n = Named {
                        function: d.map_or("", |d| defs.string(d.name)).to_string(),
                        file: defs.string(file).to_string(),
                        line,
                    };
                    *known.entry(n).or_insert_with_key(|n| {
                        self.places.push(n.clone());
                        self.places.len() as u32 - 1
                    })
                }
            };
            out.insert(id, (region, site));
        }
        out
    }

    fn get(&self, id: u32) -> &Region {
        const NONE: &Region = &Region {
            name: String::new(),
            kind: Kind::Other,
            site: UNKNOWN,
        };
        match self.all.binary_search_by_key(&id, |r| r.0) {
            Ok(i) => &self.all[i].1,
            Err(_) => NONE,
        }
    }
}

/// Why a call was left out: no record of its message, or a communicator not defined.
enum Miss {
    NoMessage,
    UnknownComm,
}

type Made = Result<Call, Miss>;

/// A call's `MpiRecv` record: (source, communicator, tag, bytes).
fn received(mut inner: impl Iterator<Item = Ev>) -> Option<(u32, u32, u32, u64)> {
    inner.find_map(|e| match e {
        Ev::Recv {
            from,
            comm,
            tag,
            len,
        } => Some((from, comm, tag, len)),
        _ => None,
    })
}

/// An OTF2 tag: `MPI_ANY_TAG` where undefined.
fn tag(g: u32) -> i32 {
    if g == UNDEFINED { TAG_ANY } else { g as i32 }
}

/// One rank's events turned into calls.
struct Rank<'a> {
    me: u32,
    regions: &'a Regions,
    comms: &'a Comms,
    /// `COMM_SELF` communicators' ids, per (OTF2 id, rank).
    selves: &'a mut HashMap<(u32, u32), u32>,
    clock: (u64, u64),
    reqs: Requests<u64>,
    /// Receives posted and not yet completed, by request: their call's index.
    posted: HashMap<u64, usize>,
    calls: Vec<Call>,
}

impl Rank<'_> {
    fn ns(&self, t: u64) -> u64 {
        let (ticks, offset) = self.clock;
        let d = t.saturating_sub(offset) as u128;
        (d * 1_000_000_000 / ticks as u128).min(u64::MAX as u128) as u64
    }

    fn read(&mut self, evs: &[(u64, Ev)], notes: &mut Notes, counts: &mut Counts) {
        // The regions entered and not left, innermost last.
        let mut stack: Vec<u32> = Vec::new();
        // The open MPI call: its depth, region, start, first inner event and the place of the
        // calling context it was entered through (UNKNOWN: none).
        let mut open: Option<(usize, u32, u64, usize, u32)> = None;
        for (i, &(t, ev)) in evs.iter().enumerate() {
            match ev {
                Ev::Enter(_) | Ev::ContextEnter(_) => {
                    let (region, from) = match ev {
                        Ev::ContextEnter(c) => {
                            (self.regions.contexts.get(&c).copied()).unwrap_or((UNDEFINED, UNKNOWN))
                        }
                        Ev::Enter(region) => (region, UNKNOWN),
                        _ => unreachable!("an enter"),
                    };
                    stack.push(region);
                    let mpi = self.regions.get(region).kind != Kind::Other;
                    match open {
                        None if mpi => open = Some((stack.len(), region, t, i + 1, from)),
                        Some(_) if mpi => counts.nested += 1,
                        _ => {}
                    }
                }
                Ev::Leave(_) | Ev::ContextLeave(_) => {
                    if let Some((d, region, t0, first, from)) = open
                        && d == stack.len()
                    {
                        let inner = evs[first..i].iter().map(|e| e.1);
                        let span = (self.ns(t0), self.ns(t).max(self.ns(t0)));
                        let before = self.calls.len();
                        self.call(region, span, inner, notes, counts);
                        // Made at its calling context's place, else in the innermost region of
                        // the program entered around it.
                        let site = (stack[..d - 1].iter().rev())
                            .map(|&g| self.regions.get(g).site)
                            .fold(from, |s, g| if s == UNKNOWN { g } else { s });
                        self.calls[before..].iter_mut().for_each(|c| c.site = site);
                        open = None;
                    }
                    stack.pop();
                }
                _ if open.is_none() => counts.outside += 1,
                _ => {}
            }
        }
        // Receives never completed: from MPI_PROC_NULL, so that nothing waits for them.
        for (_, k) in self.posted.drain() {
            let e = &mut self.calls[k].e;
            if e.routine == Routine::Irecv {
                (e.peer, e.flags) = (PEER_NULL, 0);
                counts.unfinished += 1;
            }
        }
    }

    /// Our communicator id and the world rank of rank `r` of OTF2's communicator `comm`.
    fn peer(&mut self, comm: u32, r: u32) -> Option<(u32, i32)> {
        match self.comms.by_id.get(&comm)? {
            Some((id, m)) => Some((*id, m.get(r as usize).map_or(PEER_NULL, |&w| w as i32))),
            None => {
                let next = self.comms.next + self.selves.len() as u32;
                let id = *self.selves.entry((comm, self.me)).or_insert(next);
                Some((id, if r == 0 { self.me as i32 } else { PEER_NULL }))
            }
        }
    }

    fn call(
        &mut self,
        region: u32,
        t: (u64, u64),
        inner: impl Iterator<Item = Ev> + Clone,
        notes: &mut Notes,
        counts: &mut Counts,
    ) {
        let regions = self.regions;
        let Region { name, kind, .. } = regions.get(region);
        let r = match *kind {
            Kind::Start => return self.started(t, inner, counts),
            Kind::Mpi(Some(r)) => r,
            _ => return notes.skip(name),
        };
        let made = match r.shape() {
            Shape::None if matches!(r, Routine::Init | Routine::InitThread | Routine::Finalize) => {
                Ok(Call::new(r, t.0, t.1))
            }
            Shape::Send | Shape::Isend => self.send(r, t, inner),
            Shape::Recv if !r.is_probe() && !r.is_iprobe() => self.recv(t, inner),
            Shape::Irecv if r == Routine::Irecv => (inner.clone())
                .find_map(|e| match e {
                    Ev::IrecvRequest(q) => Some(self.post(t, q)),
                    _ => None,
                })
                .ok_or(Miss::NoMessage),
            Shape::Sendrecv => self.sendrecv(r, t, inner),
            Shape::Complete => {
                let mut c = Call::new(r, t.0, t.1);
                self.complete(&mut c, inner, counts);
                Ok(c)
            }
            Shape::Coll if !r.creates_request() => match inner.clone().find_map(|e| match e {
                Ev::CollEnd {
                    comm,
                    root,
                    sent,
                    got,
                    ..
                } => Some((comm, root, sent, got)),
                _ => None,
            }) {
                Some((comm, root, sent, got)) => {
                    (self.collective(r, t, comm, root, sent, got)).ok_or(Miss::UnknownComm)
                }
                None => Err(Miss::NoMessage),
            },
            // Its sizes come with its completion (OTF2 ≥ 2.2); Score-P before 7 records neither.
            Shape::Coll => match inner.clone().find_map(|e| match e {
                Ev::NbcRequest(q) => Some(q),
                _ => None,
            }) {
                Some(req) => {
                    let mut c = Call::coll(r, t, -1, 0, 0);
                    c.e.id = self.reqs.create(req, None) as i64;
                    self.posted.insert(req, self.calls.len());
                    Ok(c)
                }
                None => Err(Miss::NoMessage),
            },
            _ => return notes.skip(name),
        };
        match made {
            Ok(c) => self.calls.push(c),
            Err(Miss::NoMessage) => counts.none(name),
            Err(Miss::UnknownComm) => counts.unknown_comm += 1,
        }
    }

    /// A send or nonblocking send, from its `MpiSend` or `MpiIsend` record.
    fn send(&mut self, r: Routine, t: (u64, u64), mut inner: impl Iterator<Item = Ev>) -> Made {
        let found = inner.find_map(|e| match e {
            Ev::Send { to, comm, tag, len } => Some((to, comm, tag, len, None)),
            Ev::Isend {
                to,
                comm,
                tag,
                len,
                req,
            } => Some((to, comm, tag, len, Some(req))),
            _ => None,
        });
        let (to, comm, g, len, req) = found.ok_or(Miss::NoMessage)?;
        let (id, peer) = self.peer(comm, to).ok_or(Miss::UnknownComm)?;
        let mut c = Call::p2p(r, t, len, peer, tag(g));
        c.e.comm = id;
        if r.creates_request() {
            c.e.id = self.reqs.create(req.unwrap_or(u64::MAX), None) as i64;
        }
        Ok(c)
    }

    /// A blocking receive (or `MPI_Mrecv`), from its `MpiRecv` record.
    fn recv(&mut self, t: (u64, u64), inner: impl Iterator<Item = Ev>) -> Made {
        let found = received(inner);
        let (from, comm, g, len) = found.ok_or(Miss::NoMessage)?;
        let (id, peer) = self.peer(comm, from).ok_or(Miss::UnknownComm)?;
        let mut c = Call::p2p(Routine::Recv, t, len, peer, tag(g));
        c.e.comm = id;
        Ok(c)
    }

    /// `MPI_Sendrecv` or `MPI_Sendrecv_replace`, from its `MpiSend` and `MpiRecv` records.
    fn sendrecv(
        &mut self,
        r: Routine,
        t: (u64, u64),
        inner: impl Iterator<Item = Ev> + Clone,
    ) -> Made {
        let sent = inner.clone().find_map(|e| match e {
            Ev::Send { to, comm, tag, len } => Some((to, comm, tag, len)),
            _ => None,
        });
        let got = received(inner.clone());
        let ((to, comm, g, len), (from, rcomm, rg, rlen)) = sent.zip(got).ok_or(Miss::NoMessage)?;
        let (id, dest) = self.peer(comm, to).ok_or(Miss::UnknownComm)?;
        let (_, source) = self.peer(rcomm, from).ok_or(Miss::UnknownComm)?;
        let mut c = Call::p2p(r, t, len, dest, tag(g));
        c.e.comm = id;
        c.half = Some(RecvHalf {
            bytes: rlen,
            source,
            tag: tag(rg),
        });
        Ok(c)
    }

    /// An `MPI_Irecv` posted with request `req`: its source, tag and size filled when it
    /// completes.
    fn post(&mut self, t: (u64, u64), req: u64) -> Call {
        let mut c = Call::p2p(Routine::Irecv, t, 0, PEER_ANY, TAG_ANY);
        c.e.id = self.reqs.create(req, None) as i64;
        self.posted.insert(req, self.calls.len());
        c
    }

    /// The requests a Wait or Test completes, a receive's message filled into its Irecv.
    fn complete(&mut self, c: &mut Call, inner: impl Iterator<Item = Ev>, counts: &mut Counts) {
        for e in inner {
            match e {
                Ev::IsendComplete(req) | Ev::Cancelled(req) => {
                    self.posted.remove(&req);
                    c.done.extend(self.reqs.complete(&req));
                }
                Ev::Irecv {
                    from,
                    comm,
                    tag,
                    len,
                    req,
                } => {
                    let Some(k) = self.posted.remove(&req) else {
                        continue;
                    };
                    let Some((id, source)) = self.peer(comm, from) else {
                        counts.unknown_comm += 1;
                        continue;
                    };
                    let tag = self::tag(tag);
                    let posted = &mut self.calls[k].e;
                    (posted.peer, posted.tag, posted.bytes, posted.comm) = (source, tag, len, id);
                    posted.flags = 0;
                    if let Some(mut d) = self.reqs.complete(&req) {
                        (d.source, d.tag) = (source, tag);
                        c.done.push(d);
                    }
                }
                Ev::NbcComplete {
                    comm,
                    root,
                    sent,
                    got,
                    req,
                } => {
                    let Some(k) = self.posted.remove(&req) else {
                        continue;
                    };
                    let e = &self.calls[k].e;
                    let (r, t) = (e.routine, (e.t_call, e.t_return));
                    match self.collective(r.blocking(), t, comm, root, sent, got) {
                        Some(full) => {
                            let posted = &mut self.calls[k];
                            (posted.e.peer, posted.e.bytes) = (full.e.peer, full.e.bytes);
                            (posted.e.comm, posted.coll) = (full.e.comm, full.coll);
                        }
                        None => counts.unknown_comm += 1,
                    }
                    c.done.extend(self.reqs.complete(&req));
                }
                _ => {}
            }
        }
    }

    /// `MPI_Start`/`MPI_Startall`: each operation it starts as the nonblocking call it is.
    fn started(&mut self, t: (u64, u64), inner: impl Iterator<Item = Ev>, counts: &mut Counts) {
        let ops: Vec<Ev> = inner
            .filter(|e| matches!(e, Ev::Isend { .. } | Ev::IrecvRequest(_)))
            .collect();
        let n = ops.len() as u64;
        for (k, e) in ops.into_iter().enumerate() {
            let k = k as u64;
            let span = t.1 - t.0;
            let sub = (t.0 + span * k / n, t.0 + span * (k + 1) / n);
            counts.started += 1;
            let c = match e {
                Ev::Isend {
                    to,
                    comm,
                    tag,
                    len,
                    req,
                } => {
                    let Some((id, peer)) = self.peer(comm, to) else {
                        counts.unknown_comm += 1;
                        continue;
                    };
                    let mut c = Call::p2p(Routine::Isend, sub, len, peer, tag as i32);
                    c.e.comm = id;
                    c.e.id = self.reqs.create(req, None) as i64;
                    c
                }
                Ev::IrecvRequest(req) => self.post(sub, req),
                _ => continue,
            };
            self.calls.push(c);
        }
    }

    /// A blocking collective from its `MpiCollectiveEnd`: Score-P's totals (the bytes a rank
    /// sends to and receives from all, `scorep_mpi_coll_bytes_*`) as the model's sizes.
    fn collective(
        &mut self,
        r: Routine,
        t: (u64, u64),
        comm: u32,
        root: u32,
        sent: u64,
        got: u64,
    ) -> Option<Call> {
        let (id, members): (u32, Vec<u32>) = match self.comms.by_id.get(&comm)? {
            Some((id, m)) => (*id, m.clone()),
            None => (self.peer(comm, 0)?.0, vec![self.me]),
        };
        let n = (members.len() as u64).max(1);
        let me = members.iter().position(|&m| m == self.me).unwrap_or(0) as u64;
        let at_root = root != UNDEFINED && root as u64 == me;
        let root_w = match root {
            UNDEFINED => -1,
            v => members.get(v as usize).map_or(PEER_NULL, |&w| w as i32),
        };
        let mut c = match r {
            Routine::Barrier => Call::coll(r, t, -1, 0, 0),
            // The root: sent n × N, received n; the others received n.
            Routine::Bcast if at_root => Call::coll(r, t, root_w, got.max(sent / n), 0),
            Routine::Bcast => Call::coll(r, t, root_w, 0, got),
            // Each sent n; the root received n × N.
            Routine::Reduce => {
                let b = sent.max(if at_root { got / n } else { 0 });
                Call::coll(r, t, root_w, b, if at_root { b } else { 0 })
            }
            // n × N both ways.
            Routine::Allreduce => {
                let b = sent.max(got) / n;
                Call::coll(r, t, -1, b, b)
            }
            // Rank k sent n × (N − k), received n × (k + 1); Exscan one fewer each.
            Routine::Scan => {
                let b = got / (me + 1);
                Call::coll(r, t, -1, b, b)
            }
            Routine::Exscan => {
                let b = match me {
                    0 => sent / (n - 1).max(1),
                    k => got / k,
                };
                Call::coll(r, t, -1, b, b)
            }
            // The model's: each rank's block sent, N blocks received.
            Routine::Allgather | Routine::Allgatherv => Call::coll(r, t, -1, sent / n, got),
            // The model's (sent at the root, received at it): Score-P's as they are.
            Routine::Gather | Routine::Gatherv | Routine::Scatter | Routine::Scatterv => {
                Call::coll(r, t, root_w, sent, got)
            }
            // Received n × N of one's own block.
            Routine::ReduceScatter | Routine::ReduceScatterBlock => {
                let mut c = Call::coll(r, t, -1, sent, got / n);
                c.coll = Some((got / n, Vec::new()));
                c
            }
            _ => Call::coll(r, t, -1, sent, got),
        };
        c.e.comm = id;
        Some(c)
    }
}

#[cfg(test)]
mod tests;
