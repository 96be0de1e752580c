//! Other tools' traces read into a [`Trace`]: LogGOPSim's liballprof (`allprof`), SimGrid's
//! time-independent traces (`tit`), LogGOPSim's GOAL schedules (`goal`; written by
//! [`crate::goal`]), SST's DUMPI (`dumpi`), BSC's Paraver (`paraver`) and Score-P's OTF2
//! (`otf2`, through the OTF2 library opened at run time).
//!
//! Each reader turns the format's records into calls (`Call`) rank by rank, pushed and checked
//! as they are read (`read_ranks`), as a loaded trace's events are; where a format leaves a
//! receive's source open (a wildcard: liballprof records no status), the calls are kept and
//! `build` resolves it first. What a format lacks (times,
//! hosts, communicators' members) is said in one warning each, with how the model fills it
//! (below).
#![doc = include_str!("IMPORT.md")]

mod allprof;
mod dumpi;
mod goal;
mod otf2;
mod paraver;
mod tit;

use super::Sink;
use super::sites::{Named, Sites, UNKNOWN};
use super::{Checks, Completion, Event, Events, FLAG_ANY_SOURCE, FLAG_ANY_TAG, PEER_ANY};
use super::{Push, RankRequests, RecvHalf};
use super::{Routine, Shape, TAG_ANY, Trace};
use crate::error::TraceError;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

/// A trace format this program reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Ours (`tracer/FORMAT.md`), binary or text.
    Loggps,
    /// LogGOPSim's liballprof: one text file per rank, `MPI_Name:t0:args…:t1` lines.
    Allprof,
    /// SimGrid's time-independent trace: `RANK ACTION ARGS` lines, one file or a list of files.
    Tit,
    /// LogGOPSim's GOAL schedule: `num_ranks N`, `rank R { … }`.
    Goal,
    /// SST's DUMPI: a `.meta` file and one binary file per rank, `PREFIX-NNNN.bin`.
    Dumpi,
    /// BSC's Paraver (Extrae): a `.prv` text file, its `.pcf` beside it.
    Paraver,
    /// Score-P's OTF2: an anchor file (`traces.otf2`), its definitions and events beside it.
    Otf2,
}

impl Format {
    pub const ALL: [Format; 7] = [
        Format::Loggps,
        Format::Allprof,
        Format::Tit,
        Format::Goal,
        Format::Dumpi,
        Format::Paraver,
        Format::Otf2,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Loggps => "loggps",
            Format::Allprof => "allprof",
            Format::Tit => "tit",
            Format::Goal => "goal",
            Format::Dumpi => "dumpi",
            Format::Paraver => "paraver",
            Format::Otf2 => "otf2",
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// How a trace is read: its format (detected when `None`) and the rates that turn untimed
/// formats' work into time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Options {
    pub from: Option<Format>,
    /// Nanoseconds one flop of a TIT `compute` takes (default 1: 1 Gflop/s).
    pub flop_ns: Option<f64>,
    /// Nanoseconds one unit of a GOAL `calc` takes (default 1: LogGOPSim's unit is the ns).
    pub calc_ns: Option<f64>,
}

/// The format of `path`: ours by its first bytes, the others by their first lines; a
/// directory by the files it holds.
pub fn detect(path: &Path) -> Result<Format, TraceError> {
    let name = path.display().to_string();
    if path.is_dir() {
        if allprof::rank_files(path).is_some() {
            return Ok(Format::Allprof);
        }
        if dumpi_meta(path).is_some() {
            return Ok(Format::Dumpi);
        }
        if otf2::anchor_in(path).is_some() {
            return Ok(Format::Otf2);
        }
        return Err(TraceError::at(
            &name,
            "is a directory that holds no trace this program reads (liballprof's \
             pmpi-trace-rank-N.txt files, a DUMPI .meta file, an OTF2 archive's .otf2 file); \
             give a trace file"
                .into(),
        ));
    }
    let head = read_head(path).map_err(|e| TraceError::at(&name, format!("cannot open: {e}")))?;
    if head.starts_with(&super::binary::MAGIC) || head.starts_with(b"loggps-trace") {
        return Ok(Format::Loggps);
    }
    if head.starts_with(&dumpi::MAGIC) {
        return Ok(Format::Dumpi);
    }
    if otf2::is_anchor(&head) {
        return Ok(Format::Otf2);
    }
    let text = String::from_utf8_lossy(&head);
    if paraver::is_header(&text) {
        return Ok(Format::Paraver);
    }
    if text.lines().any(|l| l.starts_with("numprocs="))
        && text.lines().any(|l| l.starts_with("fileprefix="))
    {
        return Ok(Format::Dumpi);
    }
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with("//"));
    if allprof::is_header(&text) || first.is_some_and(|l| l.starts_with("MPI_") && l.contains(':'))
    {
        return Ok(Format::Allprof);
    }
    match first {
        Some(l) if l.starts_with("num_ranks") => Ok(Format::Goal),
        Some(l) if tit::is_action(l) || tit::lists_files(path, &text) => Ok(Format::Tit),
        // Ours, or nothing we know: the loader says what it expected.
        _ => Ok(Format::Loggps),
    }
}

/// A directory's DUMPI `.meta` file, if it holds one.
fn dumpi_meta(dir: &Path) -> Option<PathBuf> {
    let mut metas: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "meta"))
        .collect();
    metas.sort();
    metas.into_iter().next()
}

fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path)?
        .take(4096)
        .read_to_end(&mut head)?;
    Ok(head)
}

/// The files a trace of `format` at `path` is read from (all ranks', a list file's, a `.meta`'s),
/// for `info`'s size; `path` alone where they cannot be found.
pub fn files(path: &Path, format: Format) -> Vec<PathBuf> {
    let found = match format {
        Format::Allprof if path.is_dir() => allprof::rank_files(path),
        Format::Allprof => numbered_siblings(path),
        Format::Dumpi => {
            let meta = if path.is_dir() {
                dumpi_meta(path)
            } else {
                Some(path.to_path_buf())
            };
            meta.and_then(|m| {
                let mut f = dumpi::rank_files(&m).ok()?;
                if m.extension().is_some_and(|e| e == "meta") {
                    f.push(m);
                }
                Some(f)
            })
        }
        // Read whole only where its head says it lists files (a trace of actions can be large).
        Format::Tit => read_head(path)
            .ok()
            .filter(|head| tit::lists_files(path, &String::from_utf8_lossy(head)))
            .and_then(|_| std::fs::read_to_string(path).ok())
            .and_then(|text| {
                let mut f = tit::listed_files(path, &text)?;
                f.push(path.to_path_buf());
                Some(f)
            }),
        Format::Paraver => {
            let pcf = path.with_extension("pcf");
            Some(
                [path.to_path_buf()]
                    .into_iter()
                    .chain(pcf.is_file().then_some(pcf))
                    .collect(),
            )
        }
        Format::Otf2 => Some(otf2::files(&match path.is_dir() {
            true => otf2::anchor_in(path).unwrap_or_else(|| path.to_path_buf()),
            false => path.to_path_buf(),
        })),
        Format::Loggps | Format::Goal => None,
    };
    found.unwrap_or_else(|| vec![path.to_path_buf()])
}

/// Reads another tool's trace (`format` not ours) whole.
pub fn load(
    path: &Path,
    format: Format,
    options: &Options,
    warn: &mut dyn FnMut(String),
) -> Result<Trace, TraceError> {
    let trace = match format {
        Format::Allprof => allprof::load(path)?,
        Format::Tit => tit::load(path, options.flop_ns.unwrap_or(1.0))?,
        Format::Goal => goal::load(path, options.calc_ns.unwrap_or(1.0))?,
        Format::Paraver => paraver::load(path)?,
        Format::Otf2 => otf2::load(path)?,
        Format::Dumpi => match path.is_dir() {
            true => dumpi::load(&dumpi_meta(path).unwrap_or_else(|| path.join(".meta")))?,
            false => dumpi::load(path)?,
        },
        Format::Loggps => unreachable!("ours is loaded by trace::load"),
    };
    for w in &trace.warnings {
        warn(w.clone());
    }
    Ok(trace)
}

/// Parses another tool's trace held in memory, with every check: `files` its files' names and
/// contents (one for a time-independent trace or a GOAL schedule, though a TIT trace may be
/// one a rank; one a rank, rank 0's first, for liballprof; an OTF2 archive's files by their
/// paths in it, the anchor first). For the fuzz targets.
pub fn parse(
    format: Format,
    files: &[(String, Vec<u8>)],
    options: &Options,
) -> Result<Trace, TraceError> {
    if format == Format::Dumpi {
        let name = files
            .first()
            .map_or("(none)".to_string(), |(n, _)| n.clone());
        return dumpi::parse(&name, files);
    }
    if format == Format::Otf2 {
        return otf2::parse(files);
    }
    let mut texts = Vec::with_capacity(files.len());
    for (name, data) in files {
        let text = super::text::utf8(name, data)?;
        texts.push((name.clone(), text.to_string()));
    }
    let name = texts
        .first()
        .map_or("(none)".to_string(), |(n, _)| n.clone());
    match format {
        Format::Allprof => allprof::parse(&name, &texts),
        Format::Tit => tit::parse(&name, &texts, options.flop_ns.unwrap_or(1.0)),
        Format::Goal => {
            let text = texts.first().map_or("", |(_, t)| t.as_str());
            goal::from_text(&name, text, options.calc_ns.unwrap_or(1.0))
        }
        Format::Paraver => {
            let pcf = texts.get(1).map(|(_, t)| t.as_str());
            let text = texts.first().map_or("", |(_, t)| t.as_str());
            paraver::parse(&name, text.as_bytes(), pcf, &|| ())
        }
        Format::Loggps => super::parse(&name, files.first().map_or(&[][..], |(_, d)| d)),
        Format::Dumpi | Format::Otf2 => unreachable!("read above"),
    }
}

/// One call of an imported trace, before it is pushed: the event, and its completions, its
/// receive half or its collective's receive side as its shape has them.
#[derive(Clone, Debug)]
pub(crate) struct Call {
    pub e: Event,
    pub done: Vec<Completion>,
    pub half: Option<RecvHalf>,
    pub coll: Option<(u64, Vec<u64>)>,
    /// Where it was called: an index into the reader's named places, or `UNKNOWN`.
    pub site: u32,
}

impl Call {
    pub fn new(routine: Routine, t_call: u64, t_return: u64) -> Call {
        Call {
            e: Event::new(routine, t_call, t_return),
            done: Vec::new(),
            half: None,
            coll: None,
            site: UNKNOWN,
        }
    }

    /// A point-to-point call: send, receive or their nonblocking forms (`req` for those).
    pub fn p2p(routine: Routine, t: (u64, u64), bytes: u64, peer: i32, tag: i32) -> Call {
        let mut c = Call::new(routine, t.0, t.1);
        c.e.bytes = bytes;
        c.e.peer = peer;
        c.e.tag = tag;
        if routine.receives() {
            c.e.flags = if peer == PEER_ANY { FLAG_ANY_SOURCE } else { 0 }
                | if tag == TAG_ANY { FLAG_ANY_TAG } else { 0 };
        }
        c
    }

    /// A collective call on `MPI_COMM_WORLD`: `bytes` sent, `recv` received, per-rank counts.
    pub fn coll(routine: Routine, t: (u64, u64), root: i32, bytes: u64, recv: u64) -> Call {
        let mut c = Call::new(routine, t.0, t.1);
        c.e.peer = root;
        c.e.bytes = bytes;
        c.coll = Some((recv, Vec::new()));
        c
    }
}

/// Counts of what a reader left out or filled in, said in one warning each.
#[derive(Default)]
pub(crate) struct Notes {
    /// Calls of routines the model does not cost, by name: left out, their time computation.
    pub skipped: BTreeMap<String, u64>,
    /// Other warnings, each once.
    pub said: Vec<String>,
}

impl Notes {
    pub fn skip(&mut self, routine: &str) {
        self.skip_n(routine, 1);
    }

    pub fn skip_n(&mut self, routine: &str, n: u64) {
        *self.skipped.entry(routine.to_string()).or_default() += n;
    }

    /// Adds what another part of the same trace noted (a rank read apart), after it.
    pub fn merge(&mut self, other: Notes) {
        for (k, n) in other.skipped {
            self.skip_n(&k, n);
        }
        for s in other.said {
            self.say(s);
        }
    }

    pub fn say(&mut self, what: String) {
        if !self.said.contains(&what) {
            self.said.push(what);
        }
    }

    fn into_warnings(self, name: &str) -> Vec<String> {
        let mut w: Vec<String> = self
            .said
            .into_iter()
            .map(|s| format!("{name}: {s}"))
            .collect();
        if !self.skipped.is_empty() {
            let total: u64 = self.skipped.values().sum();
            let list: Vec<String> = self
                .skipped
                .iter()
                .map(|(k, n)| format!("{k} ×{n}"))
                .collect();
            w.push(format!(
                "{name}: {total} calls of routines the model does not cost were left out, their \
                 time counted as computation: {}",
                list.join(", ")
            ));
        }
        w
    }
}

/// The trace of `calls` (rank by rank, program order) on `comms` (world ranks; ids from 1),
/// their sites indices into `places` (none: no sites): wildcard receives given the source and
/// tag of the message MPI's rules would match them with, the events pushed and checked as a
/// loaded trace's are.
pub(crate) fn build(
    name: &str,
    mut calls: Vec<Vec<Call>>,
    mut notes: Notes,
    comms: Vec<super::Comm>,
    places: &[Named],
) -> Result<Trace, TraceError> {
    if calls.is_empty() {
        return Err(TraceError::at(name, "holds no rank's calls".into()));
    }
    let resolved = resolve_wildcards(&mut calls);
    if resolved > 0 {
        notes.say(format!(
            "{resolved} wildcard receives had no recorded source: each was given the earliest-sent \
             message MPI's matching rules allow"
        ));
    }
    let counts: Vec<usize> = calls.iter().map(Vec::len).collect();
    let sites = sites_of(&calls, places);
    let mut trace = filled(name, &counts, notes, comms, &|r, sink| {
        calls[r].iter().for_each(|c| push_call(sink, c));
        Ok(())
    })?;
    trace.sites = sites;
    Ok(trace)
}

/// The calls' sites, each rank's table its places in the order of their first call; None
/// where no call has one.
fn sites_of(calls: &[Vec<Call>], places: &[Named]) -> Option<Sites> {
    let sites: Vec<Vec<u32>> = (calls.iter())
        .map(|rank| rank.iter().map(|c| c.site).collect())
        .collect();
    sites_by_rank(&sites, places)
}

/// The sites of each rank's events, given as indices into `places` ([`UNKNOWN`], or any
/// index beyond them: none), as [`Sites`]; None where no event has one.
fn sites_by_rank(sites: &[Vec<u32>], places: &[Named]) -> Option<Sites> {
    let known = |&site: &u32| (site as usize) < places.len();
    if !sites.iter().flatten().any(known) {
        return None;
    }
    let mut s = Sites::unknown(sites.len(), 0);
    for (r, rank) in sites.iter().enumerate() {
        let mut index: HashMap<u32, u32> = HashMap::new();
        for site in rank {
            let i = match known(site) {
                true => *index.entry(*site).or_insert_with(|| {
                    s.addresses[r].push(*site as u64);
                    s.named[r].push(places[*site as usize].clone());
                    s.addresses[r].len() as u32 - 1
                }),
                false => UNKNOWN,
            };
            s.of_event.push(i);
        }
    }
    Some(s)
}

/// The trace of ranks of `counts` calls each, which `fill(r, sink)` pushes rank by rank in
/// parallel (a reader whose receives all name their source: nothing to resolve across ranks),
/// each event checked as it is pushed, as a loaded trace's are ([`Checked`]).
pub(crate) fn filled(
    name: &str,
    counts: &[usize],
    notes: Notes,
    comms: Vec<super::Comm>,
    fill: &FillRank<'_>,
) -> Result<Trace, TraceError> {
    if counts.is_empty() {
        return Err(TraceError::at(name, "holds no rank's calls".into()));
    }
    let checks = Checks::new(name, counts.len(), &comms)?;
    let pending = std::sync::Mutex::new(Vec::new());
    let mut trace = Trace::new(counts.len());
    trace.events = Events::fill(counts, &|r, sink| {
        let mut checked = Checked::new(sink, &checks, r);
        let read = fill(r, &mut checked);
        if let Some((i, routine, what)) = checked.wrong.take() {
            return Err(TraceError::event(name, r, i, routine.mpi_name(), what));
        }
        read?;
        pending.lock().expect("pending").push(checked.pending());
        Ok(())
    })?;
    let mut pending = pending.into_inner().expect("pending");
    pending.sort_unstable_by_key(|p| p.first().map(|&(r, _)| r));
    trace.pending = pending.into_iter().flatten().collect();
    trace.comms = comms;
    trace.warnings = notes.into_warnings(name);
    Ok(trace)
}

/// Where a reader puts one rank's calls, in program order: kept (a `Vec<Call>`, for
/// [`build`]), or pushed and checked as they come ([`read_ranks`]).
pub(crate) trait Out {
    fn put(&mut self, c: &Call);
    /// Room for about `n` more calls (a reader's estimate from its input's size).
    fn reserve(&mut self, n: usize);
    /// The calls put so far.
    fn count(&self) -> usize;
}

impl Out for Vec<Call> {
    fn put(&mut self, c: &Call) {
        self.push(c.clone());
    }

    fn reserve(&mut self, n: usize) {
        Vec::reserve(self, n);
    }

    fn count(&self) -> usize {
        self.len()
    }
}

/// A rank's calls pushed, checked, into its own events as they are read, with their sites;
/// whether one was a receive with a wildcard, after which nothing more is pushed.
struct Direct<'s> {
    events: Checked<'s, Events>,
    sites: Vec<u32>,
    wild: bool,
}

impl Out for Direct<'_> {
    fn put(&mut self, c: &Call) {
        self.wild |= wild(c);
        if !self.wild {
            push_call(&mut self.events, c);
            self.sites.push(c.site);
        }
    }

    fn reserve(&mut self, n: usize) {
        self.events.sink.reserve(n);
        self.sites.reserve(n);
    }

    fn count(&self) -> usize {
        self.sites.len()
    }
}

/// What `read` makes of a rank: its calls put to the output given, what it noted.
pub(crate) type ReadRank<'f> = dyn Fn(usize, &mut dyn Out) -> Result<Notes, TraceError> + Sync + 'f;

/// The trace of `p` ranks on `comms`, each rank's calls put in program order by `read(r, out)`
/// (its sites indices into `places`), the ranks read in parallel, each call pushed and checked
/// as it is read. Where a rank posts a receive with a wildcard, whose source another rank's
/// sends decide, the ranks are read again, their calls kept and resolved ([`build`]).
/// The error said is the first reader's in rank order, else the first wrong event's.
pub(crate) fn read_ranks(
    name: &str,
    p: usize,
    mut notes: Notes,
    comms: Vec<super::Comm>,
    places: &[Named],
    read: &ReadRank<'_>,
) -> Result<Trace, TraceError> {
    use rayon::prelude::*;
    if p == 0 {
        return Err(TraceError::at(name, "holds no rank's calls".into()));
    }
    let checks = Checks::new(name, p, &comms)?;
    type Read = (
        Result<Notes, TraceError>,
        Option<TraceError>,
        Events,
        Vec<u32>,
        Vec<(u32, u32)>,
    );
    let ranks: Vec<(Read, bool)> = (0..p)
        .into_par_iter()
        .map(|r| {
            let mut events = Events::single();
            let mut out = Direct {
                events: Checked::new(&mut events, &checks, r),
                sites: Vec::new(),
                wild: false,
            };
            let noted = read(r, &mut out);
            let wrong = (out.events.wrong.take())
                .map(|(i, routine, what)| TraceError::event(name, r, i, routine.mpi_name(), what));
            let pending = out.events.pending();
            let (sites, wild) = (out.sites, out.wild);
            ((noted, wrong, events, sites, pending), wild)
        })
        .collect();
    if ranks.iter().any(|(_, wild)| *wild) {
        drop(ranks);
        let kept: Vec<Result<(Vec<Call>, Notes), TraceError>> = (0..p)
            .into_par_iter()
            .map(|r| {
                let mut calls = Vec::new();
                read(r, &mut calls).map(|n| (calls, n))
            })
            .collect();
        let mut calls = Vec::with_capacity(p);
        for rank in kept {
            let (c, n) = rank?;
            notes.merge(n);
            calls.push(c);
        }
        return build(name, calls, notes, comms, places);
    }
    let mut parts = Vec::with_capacity(p);
    let (mut sites, mut pending, mut wrong) = (Vec::with_capacity(p), Vec::new(), None);
    for ((noted, w, events, s, open), _) in ranks {
        notes.merge(noted?);
        wrong = wrong.or(w);
        parts.push(events);
        sites.push(s);
        pending.extend(open);
    }
    if let Some(e) = wrong {
        return Err(e);
    }
    let mut trace = Trace::new(p);
    trace.events = Events::concat(parts);
    trace.sites = sites_by_rank(&sites, places);
    trace.comms = comms;
    trace.pending = pending;
    trace.warnings = notes.into_warnings(name);
    Ok(trace)
}

/// FNV-1a, for short keys that no adversary chooses (a schedule's labels, a Paraver event's
/// type and value): a word at a time where the key is made of words.
#[derive(Default)]
pub(crate) struct Fnv(u64);

/// Tables keyed by [`Fnv`].
pub(crate) type ShortKeys = std::hash::BuildHasherDefault<Fnv>;

impl std::hash::Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.mix(b as u64);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.mix(x);
    }

    fn write_u32(&mut self, x: u32) {
        self.mix(x as u64);
    }

    fn write_usize(&mut self, x: usize) {
        self.mix(x as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl Fnv {
    #[inline]
    fn mix(&mut self, x: u64) {
        let h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        self.0 = (h ^ x).wrapping_mul(0x0100_0000_01b3);
    }
}

/// What [`filled`] calls to push rank `r`'s calls.
pub(crate) type FillRank<'f> =
    dyn Fn(usize, &mut Checked<'_, Sink<'_>>) -> Result<(), TraceError> + Sync + 'f;

/// A rank's [`Sink`] whose every event is checked as it is pushed, as [`Trace::validate`]
/// checks a loaded trace's ([`Checks`], then [`RankRequests`]): the first wrong event is
/// kept (pushed all the same), the events after it not checked.
pub(crate) struct Checked<'s, P> {
    sink: &'s mut P,
    checks: &'s Checks,
    rank: usize,
    prev_return: u64,
    known_comm: u32,
    requests: RankRequests,
    /// The first wrong event: its index, routine and what is wrong.
    wrong: Option<(usize, Routine, String)>,
}

impl<'s, P: Push> Checked<'s, P> {
    /// Checks rank `rank`'s events pushed to `sink` against `checks`.
    fn new(sink: &'s mut P, checks: &'s Checks, rank: usize) -> Self {
        Checked {
            sink,
            checks,
            rank,
            prev_return: 0,
            known_comm: 0,
            requests: RankRequests::default(),
            wrong: None,
        }
    }

    /// The requests the rank left pending, as (rank, the event that created it).
    fn pending(&self) -> Vec<(u32, u32)> {
        let origin = |req| self.sink.origin(req).expect("created in sequence").0 as u32;
        let open = self.requests.pending();
        open.map(|req| (self.rank as u32, origin(req))).collect()
    }

    /// Checks `e`, about to be pushed; `source` a Sendrecv's receive source, `done` a
    /// completion call's requests.
    #[inline(always)]
    fn check(&mut self, e: &Event, source: i32, done: &[Completion]) {
        if self.wrong.is_some() {
            return;
        }
        let i = self.sink.pushed();
        let checked = (self.checks)
            .event(self.rank, e, self.prev_return, source, &mut self.known_comm)
            .and_then(|()| self.requests.event(i as u32, e, done.iter().map(|c| c.req)));
        if let Err(what) = checked {
            self.wrong = Some((i, e.routine, what));
        }
        self.prev_return = e.t_return;
    }
}

impl<P: Push> Push for Checked<'_, P> {
    fn push_words(&mut self, e: &Event, aux: &[u32]) {
        self.sink.push_words(e, aux);
    }

    fn implied(&self, req: u32) -> Option<(i32, i32)> {
        self.sink.implied(req)
    }

    fn pushed(&self) -> usize {
        self.sink.pushed()
    }

    fn origin(&self, req: u32) -> Option<(usize, Routine)> {
        self.sink.origin(req)
    }

    fn push(&mut self, e: &Event) {
        self.check(e, 0, &[]);
        self.sink.push(e);
    }

    fn push_complete(&mut self, e: &Event, done: &[Completion]) {
        self.check(e, 0, done);
        self.sink.push_complete(e, done);
    }

    fn push_sendrecv(&mut self, e: &Event, recv: RecvHalf) {
        self.check(e, recv.source, &[]);
        self.sink.push_sendrecv(e, recv);
    }

    fn push_coll(&mut self, e: &Event, recv_bytes: u64, counts: &[u64]) {
        self.check(e, 0, &[]);
        self.sink.push_coll(e, recv_bytes, counts);
    }
}

/// A file's bytes, mapped rather than copied (a large text trace is read once, front to back).
pub(crate) enum FileBytes {
    Mapped(crate::memory::MappedFile),
    Empty,
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Empty => &[],
        }
    }
}

impl FileBytes {
    /// Hands the mapped pages back once read: touched again, they are read from the file.
    pub(crate) fn release(&self) {
        if let FileBytes::Mapped(m) = self {
            m.release(0, m.len());
        }
    }
}

/// The bytes of the file at `path`.
pub(crate) fn file_bytes(path: &Path) -> Result<FileBytes, TraceError> {
    let name = path.display().to_string();
    let err = |e: std::io::Error| TraceError::at(&name, format!("cannot read: {e}"));
    let file = std::fs::File::open(path).map_err(err)?;
    match file.metadata().map_err(err)?.len() {
        0 => Ok(FileBytes::Empty),
        _ => crate::memory::MappedFile::open(&file)
            .map(FileBytes::Mapped)
            .map_err(err),
    }
}

/// `text` cut into about `n` pieces of whole lines, to be read in parallel.
pub(crate) fn text_pieces(text: &str, n: usize) -> Vec<&str> {
    let pieces = line_pieces(text.as_bytes(), n);
    // (each piece ends after a line break or at the end: where a character ends)
    let at = |p: &[u8]| p.as_ptr() as usize - text.as_ptr() as usize;
    pieces
        .iter()
        .map(|p| &text[at(p)..at(p) + p.len()])
        .collect()
}

/// `text` cut into about `n` pieces of whole lines (each ending after its `\n`, or at the end).
pub(crate) fn line_pieces(text: &[u8], n: usize) -> Vec<&[u8]> {
    let size = (text.len() / n.max(1)).max(1 << 16);
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let from = (start + size).min(text.len());
        let end = memchr::memchr(b'\n', &text[from..]).map_or(text.len(), |i| from + i + 1);
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces
}

/// Whether `needle` is in `text`, its pieces of a few MB searched in parallel.
pub(crate) fn contains(text: &[u8], needle: &[u8]) -> bool {
    use rayon::prelude::*;
    let size = (text.len() / (4 * rayon::current_num_threads())).max(1 << 22);
    let finder = memchr::memmem::Finder::new(needle);
    (0..text.len().div_ceil(size)).into_par_iter().any(|k| {
        // Each piece with the bytes a match starting in it may reach into the next.
        let end = ((k + 1) * size + needle.len().saturating_sub(1)).min(text.len());
        finder.find(&text[k * size..end]).is_some()
    })
}

/// The number (from 1) of the first line of `piece`, a part of `text` (errors only: the line
/// breaks before it are counted).
pub(crate) fn first_line(text: &[u8], piece: &[u8]) -> usize {
    let at = piece.as_ptr() as usize - text.as_ptr() as usize;
    1 + memchr::memchr_iter(b'\n', &text[..at]).count()
}

/// Appends to `out` the parts of `s` between the bytes `sep` (an ASCII byte).
pub(crate) fn split_into<'a>(s: &'a str, sep: u8, out: &mut Vec<&'a str>) {
    let b = s.as_bytes();
    let mut start = 0;
    // Eight bytes at a time: each byte equal to `sep` found by its high bit in `hits`.
    let (low, seps) = (u64::from_le_bytes([0x7f; 8]), u64::from_le_bytes([sep; 8]));
    let mut at = 0;
    while let Some(word) = b.get(at..at + 8) {
        let x = u64::from_le_bytes(word.try_into().expect("eight bytes")) ^ seps;
        // A byte's high bit set where the byte is 0, exactly (no carry between bytes).
        let mut hits = !(((x & low) + low) | x | low);
        while hits != 0 {
            let i = at + hits.trailing_zeros() as usize / 8;
            out.push(&s[start..i]);
            start = i + 1;
            hits &= hits - 1;
        }
        at += 8;
    }
    for (i, &c) in b.iter().enumerate().skip(at) {
        if c == sep {
            out.push(&s[start..i]);
            start = i + 1;
        }
    }
    out.push(&s[start..]);
}

/// Part `k` (from 0) of `s` between the bytes `sep`.
pub(crate) fn nth_part(s: &str, sep: u8, k: usize) -> Option<&str> {
    let (mut start, mut seen) = (0, 0);
    for (i, &c) in s.as_bytes().iter().enumerate() {
        if c == sep {
            if seen == k {
                return Some(&s[start..i]);
            }
            (start, seen) = (i + 1, seen + 1);
        }
    }
    (seen == k).then(|| &s[start..])
}

/// `s` as `str::parse::<i64>` reads it (an optional sign, decimal digits), in fewer steps for
/// the short numbers of trace lines.
pub(crate) fn parse_i64(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    // 18 digits cannot overflow; longer numbers take the library's path.
    if digits.is_empty() || digits.len() > 18 {
        return s.parse().ok();
    }
    let v = decimal(digits)? as i64;
    Some(if neg { -v } else { v })
}

/// Unsigned decimal digits, 1 to 18 of them (no overflow), as their number; None for any other
/// byte or length.
#[inline]
pub(crate) fn decimal(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v = 0u64;
    for &d in digits {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + d as u64;
    }
    Some(v)
}

/// The lines of `text`, numbered from 1, each without its line break.
pub(crate) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let (mut at, mut n) = (0, 0);
    std::iter::from_fn(move || {
        if at >= text.len() {
            return None;
        }
        let end = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |i| at + i);
        let line = &text[at..end];
        (at, n) = (end + 1, n + 1);
        Some((n, line))
    })
}

/// Pushes one call as its shape has it.
pub(crate) fn push_call(sink: &mut impl Push, c: &Call) {
    match c.e.routine.shape() {
        Shape::Complete => sink.push_complete(&c.e, &c.done),
        Shape::Coll => match &c.coll {
            Some((recv, counts)) => sink.push_coll(&c.e, *recv, counts),
            None => sink.push_coll(&c.e, 0, &[]),
        },
        Shape::Sendrecv => sink.push_sendrecv(&c.e, c.half.expect("a Sendrecv's half")),
        _ => sink.push(&c.e),
    }
}

/// Gives each receive posted with `MPI_ANY_SOURCE` or `MPI_ANY_TAG` the
/// source and tag of the message it matches: receives taken in their rank's program order, each
/// the first unmatched message of each source that fits it (MPI's order between a pair), of
/// those the one whose send was called first. Returns how many were resolved.
fn resolve_wildcards(calls: &mut [Vec<Call>]) -> usize {
    if !calls.iter().flatten().any(wild) {
        return 0;
    }
    let p = calls.len();
    // Per destination, per (source, communicator): the messages in the sender's program order
    // (tag, t_call).
    type Queues = HashMap<(usize, u32), VecDeque<(i32, u64)>>;
    let mut sent: Vec<Queues> = vec![HashMap::new(); p];
    for (src, rank) in calls.iter().enumerate() {
        for c in rank {
            let (dst, tag) = match c.e.routine.shape() {
                Shape::Send | Shape::Isend | Shape::Sendrecv => (c.e.peer, c.e.tag),
                _ => continue,
            };
            if (0..p as i32).contains(&dst) {
                sent[dst as usize]
                    .entry((src, c.e.comm))
                    .or_default()
                    .push_back((tag, c.e.t_call));
            }
        }
    }
    let mut resolved = 0;
    for (dst, rank) in calls.iter_mut().enumerate() {
        // The actual (source, tag) of each wildcard Irecv's request, for its completion.
        let mut actual: HashMap<u32, (i32, i32)> = HashMap::new();
        let mut next_req = 0u32;
        for c in rank.iter_mut() {
            let creates = c.e.routine.creates_request();
            let posted = match c.e.routine.shape() {
                Shape::Recv | Shape::Irecv
                    if !(c.e.routine.is_probe() || c.e.routine.is_iprobe()) =>
                {
                    Some((c.e.peer, c.e.tag))
                }
                Shape::Sendrecv => c.half.map(|h| (h.source, h.tag)),
                _ => None,
            };
            if let Some((src, tag)) = posted {
                let comm = c.e.comm;
                let take = |queue: &VecDeque<(i32, u64)>| {
                    queue.iter().position(|&(t, _)| tag == TAG_ANY || t == tag)
                };
                let pick = if src == PEER_ANY {
                    sent[dst]
                        .iter()
                        .filter(|((_, k), _)| *k == comm)
                        .filter_map(|(&(s, _), q)| take(q).map(|i| (q[i].1, s, i)))
                        .min()
                        .map(|(_, s, i)| (s, i))
                } else if src >= 0 {
                    let s = src as usize;
                    sent[dst]
                        .get(&(s, comm))
                        .and_then(|q| take(q).map(|i| (s, i)))
                } else {
                    None
                };
                if let Some((s, i)) = pick {
                    let (t, _) = sent[dst]
                        .get_mut(&(s, comm))
                        .expect("picked")
                        .remove(i)
                        .expect("in range");
                    if src == PEER_ANY || tag == TAG_ANY {
                        resolved += 1;
                        match c.e.routine.shape() {
                            Shape::Irecv => {
                                actual.insert(next_req, (s as i32, t));
                            }
                            Shape::Sendrecv => {
                                let h = c.half.as_mut().expect("posted from it");
                                (h.source, h.tag) = (s as i32, t);
                            }
                            _ => (c.e.peer, c.e.tag) = (s as i32, t),
                        }
                    }
                }
            }
            if creates {
                next_req += 1;
            }
            for d in c.done.iter_mut() {
                if let Some(&(s, t)) = actual.get(&d.req) {
                    (d.source, d.tag) = (s, t);
                }
            }
        }
    }
    resolved
}

fn wild(c: &Call) -> bool {
    let posted = match c.half {
        Some(h) => (h.source, h.tag),
        None if c.e.routine.receives() => (c.e.peer, c.e.tag),
        None => return false,
    };
    posted.0 == PEER_ANY || posted.1 == TAG_ANY
}

/// Per rank, the requests a reader created and not yet completed, by the reader's own key
/// (an address, a `(src, dst, tag)`): ids in creation order, as our format numbers them.
pub(crate) struct Requests<K> {
    next: u32,
    /// Each open request: its key, id, and the (source, tag) its completion reports.
    open: Vec<(K, u32, Status)>,
}

/// A receive's (source, tag) as its completion reports it; `None` for a send.
type Status = Option<(i32, i32)>;

impl<K: PartialEq + Clone> Requests<K> {
    pub fn new() -> Requests<K> {
        Requests {
            next: 0,
            open: Vec::new(),
        }
    }

    /// A new request under `key`; `status` the (source, tag) a receive's completion reports.
    pub fn create(&mut self, key: K, status: Status) -> u32 {
        let id = self.next;
        self.next += 1;
        self.open.push((key, id, status));
        id
    }

    /// The oldest open request under `key`, completed.
    pub fn complete(&mut self, key: &K) -> Option<Completion> {
        let i = self.open.iter().position(|(k, ..)| k == key)?;
        Some(Self::completion(self.open.remove(i)))
    }

    /// The open requests whose key `f` takes, completed, with their keys, in creation order.
    pub fn complete_where(&mut self, f: impl Fn(&K) -> bool) -> Vec<(K, Completion)> {
        let (taken, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.open)
            .into_iter()
            .partition(|(k, ..)| f(k));
        self.open = kept;
        taken
            .into_iter()
            .map(|o| (o.0.clone(), Self::completion(o)))
            .collect()
    }

    /// Every open request, completed in creation order.
    pub fn complete_all(&mut self) -> Vec<Completion> {
        self.open.drain(..).map(Self::completion).collect()
    }

    pub fn is_open(&self, key: &K) -> bool {
        self.open.iter().any(|(k, ..)| k == key)
    }

    fn completion((_, req, status): (K, u32, Status)) -> Completion {
        let (source, tag) = status.unwrap_or((-1, -1));
        Completion { req, source, tag }
    }
}

/// The files of a trace given as one file of several: `path` itself, with its last run of
/// digits counting up from 0 (`pmpi-trace-rank-0.txt`, `…-1.txt`, …) while they exist.
pub(crate) fn numbered_siblings(path: &Path) -> Option<Vec<PathBuf>> {
    let file = path.file_name()?.to_str()?;
    let end = file.rfind(|c: char| c.is_ascii_digit())? + 1;
    let start = file[..end]
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    let (head, tail) = (&file[..start], &file[end..]);
    // `-0000.bin`: numbers zero-padded to the width of the one given.
    let width = if file[start..end].starts_with('0') {
        end - start
    } else {
        1
    };
    let dir = path.parent().unwrap_or(Path::new(""));
    let files: Vec<PathBuf> = (0..)
        .map(|r| dir.join(format!("{head}{r:0width$}{tail}")))
        .take_while(|p| p.is_file())
        .collect();
    (!files.is_empty()).then_some(files)
}

/// Bytes of a SimGrid datatype id (`simgrid::smpi::Datatype::decode`, x86-64 sizes); `None`
/// for an id it does not define.
pub(crate) fn simgrid_type_bytes(id: i64) -> Option<u64> {
    const SIZES: [u64; 60] = [
        8, 4, 1, 2, 8, 4, 1, 8, 1, 1, 2, 4, 8, 8, 16, 4, 1, 1, 2, 4, 8, 1, 2, 4, 8, 8, 16, 32, 8,
        8, 8, 16, 16, 8, 8, 8, 16, 16, 4, 4, 8, 16, 8, 16, 16, 4, 2, 4, 8, 16, 32, 1, 8, 16, 32, 0,
        0, 1, 8, 8,
    ];
    SIZES.get(usize::try_from(id).ok()?).copied()
}

#[cfg(test)]
mod tests;
