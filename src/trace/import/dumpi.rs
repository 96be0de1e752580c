//! SST's DUMPI traces (sst-dumpi, `docs/traceformat.dox` and `dumpi/common/io.c`): a `.meta`
//! text file (`numprocs=`, `fileprefix=`) and one binary file a rank, `PREFIX-NNNN.bin`. A file
//! ends with an index (its last 64 bytes: big-endian offsets of its sections) and holds a
//! stream of records: a function id, a mask of the optional fields (thread, CPU and wall
//! times, performance counters, statuses), the times as seconds since a bias and nanoseconds,
//! then the arguments. Records carry no length: each is read by its function's layout, every
//! DUMPI function's in `dumpi/layouts.txt`, so that any record can be passed over.
//!
//! Byte counts are the count times the file's own table of datatype sizes; wall times are kept
//! to the ns, from the earliest call of any rank; requests are ids the MPI library reuses (a
//! completion takes the latest operation given the id); statuses give wildcard receives their
//! sources. Communicators are ids local to each rank with no members: they are rebuilt from
//! the calls that create them (`MPI_Comm_dup`, `MPI_Comm_split`, `MPI_Comm_create` of a group
//! from `MPI_Comm_group`, `MPI_Group_incl`, `MPI_Group_excl`); calls on others are left out,
//! counted.

use super::{Call, Notes, Out, Requests, numbered_siblings, read_ranks};
use crate::error::TraceError;
use crate::trace::{
    Comm, Completion, FLAG_ANY_SOURCE, FLAG_ANY_TAG, PEER_ANY, PEER_NULL, RecvHalf, Routine,
    TAG_ANY, Trace,
};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

mod records;
use records::{Record, for_each_record, k, routines, sections};

/// The 8 bytes every DUMPI file starts with (and its index).
pub(super) const MAGIC: [u8; 8] = [0xff, 0xaa, 0xdd, 0x44, 0x55, 0x4d, 0x50, 0x49];
/// `MPI_COMM_WORLD`'s id in records.
const WORLD: i64 = 2;

/// The per-rank files of a DUMPI trace: from its `.meta` (`numprocs`, `fileprefix`), or from
/// rank 0's `PREFIX-0000.bin`.
pub(super) fn rank_files(path: &Path) -> Result<Vec<PathBuf>, String> {
    if path.extension().is_some_and(|e| e == "meta") {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
        let get = |k: &str| {
            text.lines().find_map(|l| {
                l.split_once('=')
                    .filter(|(a, _)| a.trim() == k)
                    .map(|(_, v)| v.trim().to_string())
            })
        };
        let p: usize = get("numprocs")
            .and_then(|n| n.parse().ok())
            .filter(|&n| (1..1 << 22).contains(&n))
            .ok_or("expected `numprocs=N` in the .meta file")?;
        let prefix = get("fileprefix").ok_or("expected `fileprefix=NAME` in the .meta file")?;
        let dir = path.parent().unwrap_or(Path::new(""));
        let files: Vec<PathBuf> = (0..p)
            .map(|r| dir.join(format!("{prefix}-{r:04}.bin")))
            .collect();
        if let Some(missing) = files.iter().find(|f| !f.is_file()) {
            return Err(format!(
                "numprocs={p}, but {} is missing",
                missing.display()
            ));
        }
        return Ok(files);
    }
    numbered_siblings(path)
        .filter(|f| f.first().is_some_and(|f| f == path))
        .ok_or_else(|| {
            "expected a DUMPI trace's .meta file or rank 0's PREFIX-0000.bin".to_string()
        })
}

pub(super) fn load(path: &Path) -> Result<Trace, TraceError> {
    let name = path.display().to_string();
    let files = rank_files(path).map_err(|m| TraceError::at(&name, m))?;
    let mut data = Vec::with_capacity(files.len());
    for f in &files {
        data.push((f.display().to_string(), super::file_bytes(f)?));
    }
    parse(&name, &data)
}

/// The trace of `files` (name, bytes), rank 0's first.
pub(super) fn parse<B>(name: &str, files: &[(String, B)]) -> Result<Trace, TraceError>
where
    B: std::ops::Deref<Target = [u8]> + Sync,
{
    parse_passes(name, files, false)
}

/// [`parse`], the first pass over each file `whole` or as its footer allows ([`scan`]): read
/// again whole where a file's footer proves wrong.
fn parse_passes<B>(name: &str, files: &[(String, B)], whole: bool) -> Result<Trace, TraceError>
where
    B: std::ops::Deref<Target = [u8]> + Sync,
{
    let p = files.len();
    // Two passes over each file, in parallel: the first keeps what the communicators and the
    // trace's start need, the second turns each record into calls as it is decoded (no file's
    // records are held).
    let scanned: Vec<Result<Scanned, TraceError>> = (files.par_iter())
        .map(|(file, data)| scan(data, whole).map_err(|m| TraceError::at(file, m)))
        .collect();
    // The first file's error, as read one after another.
    let scanned: Vec<Scanned> = scanned.into_iter().collect::<Result<_, _>>()?;
    let t0 = (scanned.iter().map(|s| s.first)).min().unwrap_or(u64::MAX);
    let t0 = if t0 == u64::MAX { 0 } else { t0 };
    let mut notes = Notes::default();
    notes.say(format!(
        "a DUMPI trace ({p} ranks) records no hosts, and no communicators' members: they are \
         rebuilt from the ranks' MPI_Comm_dup, MPI_Comm_split and MPI_Comm_create calls (calls \
         on others are left out); the ranks are taken as one node"
    ));
    let creating: Vec<&[Record]> = scanned.iter().map(|s| &s.creating[..]).collect();
    let comms = communicators(&creating, p);
    let defined = (comms.members.iter().enumerate().skip(1))
        .map(|(id, m)| Comm {
            id: id as u32,
            members: m.clone(),
        })
        .collect();
    let footer_wrong = std::sync::atomic::AtomicBool::new(false);
    let read = read_ranks(name, p, notes, defined, &[], &|r, out| {
        let (file, data) = (&files[r].0, &files[r].1);
        let mut rank = Rank {
            me: r as u32,
            comms: &comms,
            local: &comms.local[r],
            t0,
            sizes: &scanned[r].sizes,
            reqs: Requests::new(),
            out,
            last_comm: None,
        };
        let mut notes = Notes::default();
        // A call a record at most, as the footer counts them (no more than a record every 8
        // bytes: a footer that counts wrong makes no room that the file could not fill).
        rank.out
            .reserve(scanned[r].calls.min(data.len() as u64 / 8) as usize);
        let (mut i, mut failed) = (0, None);
        let read = for_each_record(data, &mut |rec| {
            if !scanned[r].whole && creates_comms(rec.id) {
                footer_wrong.store(true, std::sync::atomic::Ordering::Relaxed);
                return Err("its footer counts no call that creates a communicator".into());
            }
            if let Err(m) = rank.record(rec, &mut notes) {
                let e = TraceError::at(file, format!("record {i}: {m}"));
                failed = Some(e.in_event(r, rank.out.count()));
                return Err(String::new());
            }
            i += 1;
            Ok(())
        });
        if let Err(m) = read {
            return Err(failed.unwrap_or_else(|| TraceError::at(file, m)));
        }
        Ok(notes)
    });
    match footer_wrong.into_inner() {
        true => parse_passes(name, files, true),
        false => read,
    }
}

/// What the first pass keeps of a file: the records that create communicators or groups,
/// the earliest start of a record (0 where none has one), the datatype sizes.
struct Scanned {
    creating: Vec<Record>,
    first: u64,
    sizes: Vec<i64>,
    /// Whether every record was read (else the footer said none creates a communicator).
    whole: bool,
    /// The calls the footer counts ([`Sections::calls`]).
    calls: u64,
}

/// The ids of the records [`communicators`] reads.
const CREATING: [u16; 6] = [72, 76, 77, 84, 85, 86];

fn creates_comms(id: u16) -> bool {
    CREATING.contains(&id)
}

/// The first pass over a file. Where its footer counts no call that creates a communicator
/// (`whole` false), it stops at the first record with a time: a rank's times only grow (the
/// checks refuse a call before the previous one's return), so that one is its earliest.
fn scan(data: &[u8], whole: bool) -> Result<Scanned, String> {
    let (mut creating, mut first) = (Vec::new(), u64::MAX);
    let s = sections(data)?;
    let whole = whole || s.creates != Some(false);
    let read = for_each_record(data, &mut |rec| {
        if creates_comms(rec.id) {
            creating.push(rec.clone());
        }
        if rec.t.0 > 0 {
            first = first.min(rec.t.0);
            if !whole {
                return Err(String::new());
            }
        }
        Ok(())
    });
    let sizes = match read {
        Ok(sizes) => sizes,
        Err(m) if !m.is_empty() => return Err(m),
        Err(_) => s.sizes,
    };
    Ok(Scanned {
        creating,
        first,
        sizes,
        whole,
        calls: s.calls,
    })
}

/// Communicators rebuilt from the ranks' calls that create them: per rank, its local ids'
/// job-wide ids (`MPI_COMM_WORLD`'s 2 is 0); each job-wide id's members, world ranks in
/// communicator order. The k-th creating call on one parent at each member is one call.
struct Comms {
    local: Vec<HashMap<i64, u32>>,
    members: Vec<Vec<u32>>,
}

fn communicators(ranks: &[&[Record]], p: usize) -> Comms {
    let mut members: Vec<Vec<u32>> = vec![(0..p as u32).collect()];
    // (parent, k-th creation on it, color) → job-wide id; a split's (key, world rank) entries.
    let mut ids: HashMap<(u32, u32, i64), u32> = HashMap::new();
    let mut split: BTreeMap<u32, (u32, Vec<(i64, u32)>)> = BTreeMap::new();
    let mut local = Vec::with_capacity(p);
    for (r, records) in ranks.iter().enumerate() {
        let mut map: HashMap<i64, u32> = HashMap::from([(WORLD, 0)]);
        let mut groups: HashMap<i64, Vec<u32>> = HashMap::new();
        let mut created: HashMap<u32, u32> = HashMap::new();
        for rec in records.iter() {
            let int = |k: u8| rec.int(k).ok();
            match rec.id {
                72 => {
                    let m = int(k!("comm"))
                        .and_then(|c| map.get(&c))
                        .map(|&j| members[j as usize].clone());
                    if let (Some(m), Some(g)) = (m, int(k!("group"))) {
                        groups.insert(g, m);
                    }
                }
                76 | 77 => {
                    let (Some(g), Some(new)) = (
                        int(k!("group")).and_then(|g| groups.get(&g)),
                        int(k!("newgroup")),
                    ) else {
                        continue;
                    };
                    let listed: Vec<usize> = rec
                        .ints(k!("ranks"))
                        .iter()
                        .filter_map(|&i| usize::try_from(i).ok())
                        .collect();
                    let m: Vec<u32> = if rec.id == 76 {
                        listed.iter().filter_map(|&i| g.get(i).copied()).collect()
                    } else {
                        (0..g.len())
                            .filter(|i| !listed.contains(i))
                            .map(|i| g[i])
                            .collect()
                    };
                    groups.insert(new, m);
                }
                84..=86 => {
                    let Some(&parent) = int(k!("oldcomm")).and_then(|c| map.get(&c)) else {
                        continue;
                    };
                    let k = created.entry(parent).or_default();
                    *k += 1;
                    let new = int(k!("newcomm")).unwrap_or(1);
                    // MPI_COMM_NULL (1) for a rank outside the new communicator.
                    if new < 4 {
                        continue;
                    }
                    let color = if rec.id == 86 {
                        int(k!("color")).unwrap_or(0)
                    } else {
                        0
                    };
                    let next = members.len() as u32;
                    let id = *ids.entry((parent, *k, color)).or_insert(next);
                    if id as usize >= members.len() {
                        members.resize(id as usize + 1, Vec::new());
                        members[id as usize] = match rec.id {
                            84 => members[parent as usize].clone(),
                            85 => int(k!("group"))
                                .and_then(|g| groups.get(&g))
                                .cloned()
                                .unwrap_or_default(),
                            _ => Vec::new(),
                        };
                    }
                    if rec.id == 86 {
                        split
                            .entry(id)
                            .or_insert((parent, Vec::new()))
                            .1
                            .push((int(k!("key")).unwrap_or(0), r as u32));
                    }
                    map.insert(new, id);
                }
                _ => {}
            }
        }
        local.push(map);
    }
    // Splits in creation order (a parent before its children): by key, then parent rank.
    for (id, (parent, mut entries)) in split {
        let parent = &members[parent as usize];
        let at = |w: u32| parent.iter().position(|&m| m == w).unwrap_or(usize::MAX);
        entries.sort_by_key(|&(key, w)| (key, at(w)));
        members[id as usize] = entries.into_iter().map(|(_, w)| w).collect();
    }
    Comms { local, members }
}

struct Rank<'a> {
    /// This rank's world rank.
    me: u32,
    comms: &'a Comms,
    /// This rank's communicator ids → job-wide ids.
    local: &'a HashMap<i64, u32>,
    t0: u64,
    sizes: &'a [i64],
    /// Open requests by DUMPI's request id.
    reqs: Requests<i64>,
    out: &'a mut dyn Out,
    /// The communicator looked up last, and its job-wide id.
    last_comm: Option<(i64, Option<u32>)>,
}

/// Bytes of DUMPI's built-in datatypes (`constants.h`) where a file's table lacks them.
const TYPE_BYTES: [u64; 28] = [
    0, 0, 1, 1, 1, 1, 4, 2, 2, 4, 4, 8, 8, 4, 8, 16, 8, 8, 8, 1, 0, 0, 8, 16, 16, 8, 8, 32,
];

impl Rank<'_> {
    /// The job-wide id of the rank's communicator `local`, if it is known.
    fn job_wide(&mut self, local: i64) -> Option<u32> {
        match self.last_comm {
            Some((c, id)) if c == local => id,
            _ => {
                let id = self.local.get(&local).copied();
                self.last_comm = Some((local, id));
                id
            }
        }
    }

    fn bytes(&self, count: i64, datatype: i64) -> u64 {
        let size = self
            .sizes
            .get(datatype as usize)
            .copied()
            .filter(|&s| s > 0)
            .or_else(|| TYPE_BYTES.get(datatype as usize).map(|&b| b as i64))
            .unwrap_or(8);
        (count.max(0) as u64).saturating_mul(size.max(0) as u64)
    }

    fn record(&mut self, rec: &Record, notes: &mut Notes) -> Result<(), String> {
        let name = records::name(rec.id);
        let t = (
            rec.t.0.saturating_sub(self.t0),
            rec.t
                .1
                .saturating_sub(self.t0)
                .max(rec.t.0.saturating_sub(self.t0)),
        );
        // The call's communicator, if it has one this reader knows: its job-wide id, members.
        let comm = (rec.int(k!("comm")).ok())
            .and_then(|c| self.job_wide(c))
            .map(|id| (id, self.comms.members[id as usize].as_slice()));
        let known = comm.is_some();
        let (comm_id, members) = comm.unwrap_or((0, &[]));
        let p = members.len() as i64;
        let world_of = |v: i64| members[v as usize] as i32;
        // A destination or source (ranks of the communicator): negative dest is MPI_PROC_NULL;
        // a source −1 is MPI_ANY_SOURCE, other negatives MPI_PROC_NULL.
        let dest = |v: i64| {
            if v < 0 || v >= p {
                PEER_NULL
            } else {
                world_of(v)
            }
        };
        let source = |v: i64| match v {
            -1 => PEER_ANY,
            v if v < 0 || v >= p => PEER_NULL,
            v => world_of(v),
        };
        let tag = |v: i64| if v < 0 { TAG_ANY } else { v as i32 };
        // The k-th status's actual (source as a world rank, tag).
        let status = |k: usize| {
            (rec.statuses().get(k).copied())
                .filter(|&(s, _)| s >= 0 && (s as i64) < p)
                .map(|(s, g)| (world_of(s as i64), g))
        };
        let routine = routines()[rec.id as usize];
        if rec.int(k!("comm")).is_ok() && !known {
            notes.skip(&format!(
                "MPI_{name} on a communicator this reader cannot rebuild"
            ));
            return Ok(());
        }
        let mut c = match (rec.id, routine) {
            (124 | 171 | 125, Some(r)) => Call::new(r, t.0, t.1),
            (0 | 3 | 4 | 5, Some(r)) => Call::p2p(
                r,
                t,
                self.bytes(rec.int(k!("count"))?, rec.int(k!("datatype"))?),
                dest(rec.int(k!("dest"))?),
                tag(rec.int(k!("tag"))?),
            ),
            (8..=12, Some(r)) => {
                let bytes = self.bytes(rec.int(k!("count"))?, rec.int(k!("datatype"))?);
                let (who, tg) = if r == Routine::Irecv {
                    (source(rec.int(k!("source"))?), tag(rec.int(k!("tag"))?))
                } else {
                    (dest(rec.int(k!("dest"))?), tag(rec.int(k!("tag"))?))
                };
                let mut c = Call::p2p(r, t, bytes, who, tg);
                let status = (r == Routine::Irecv).then_some((who, tg));
                c.e.id = self.reqs.create(rec.int(k!("request"))?, status) as i64;
                c
            }
            (1, _) => {
                let (mut who, mut tg) = (source(rec.int(k!("source"))?), tag(rec.int(k!("tag"))?));
                let mut c = Call::p2p(
                    Routine::Recv,
                    t,
                    self.bytes(rec.int(k!("count"))?, rec.int(k!("datatype"))?),
                    who,
                    tg,
                );
                if let Some((s, g)) = status(0) {
                    (who, tg) = (s, if g >= 0 { g } else { tg });
                    (c.e.peer, c.e.tag) = (who, tg);
                }
                c
            }
            (15, _) => {
                let mut c = Call::new(Routine::RequestFree, t.0, t.1);
                let freed = self.reqs.complete_last(&rec.int(k!("request"))?);
                c.done = freed.into_iter().map(|(d, _)| d).collect();
                c
            }
            (13..=21, Some(r)) => self.completion(rec, r, t, &status)?,
            (33 | 34, _) => self.sendrecv(rec, t, &dest, &source, &status)?,
            (
                52 | 53 | 54 | 55 | 56 | 57 | 58 | 59 | 60 | 61 | 62 | 65 | 66 | 67 | 156,
                Some(r),
            ) => self.collective(rec, r, t, members)?,
            _ => {
                notes.skip(&format!("MPI_{name}"));
                return Ok(());
            }
        };
        c.e.comm = comm_id;
        self.out.put(&c);
        Ok(())
    }

    /// A Wait or Test call: the requests it completed (by its flag, index or indices), a
    /// receive's with its status's source and tag.
    fn completion(
        &mut self,
        rec: &Record,
        r: Routine,
        t: (u64, u64),
        status: &dyn Fn(usize) -> Option<(i32, i32)>,
    ) -> Result<Call, String> {
        let reqs = rec.ints(k!("requests"));
        let flag = rec.int(k!("flag")).unwrap_or(1) != 0;
        let done: Vec<i64> = match rec.id {
            13 => vec![rec.int(k!("request"))?],
            14 if flag => vec![rec.int(k!("request"))?],
            18 => reqs.clone(),
            19 if flag => reqs.clone(),
            16 | 17 if flag => {
                let i = rec.int(k!("index"))?;
                reqs.get(usize::try_from(i).unwrap_or(usize::MAX))
                    .copied()
                    .into_iter()
                    .collect()
            }
            20 | 21 => rec
                .ints(k!("indices"))
                .iter()
                .filter_map(|&i| reqs.get(i as usize).copied())
                .collect(),
            _ => Vec::new(),
        };
        let mut c = Call::new(r, t.0, t.1);
        for (k, id) in done.iter().enumerate() {
            let Some((mut d, receive)) = self.reqs.complete_last(id) else {
                continue;
            };
            if let (true, Some((s, g))) = (receive, status(k)) {
                d.source = s;
                if g >= 0 {
                    d.tag = g;
                }
            }
            c.done.push(d);
        }
        Ok(c)
    }

    /// `MPI_Sendrecv` or `MPI_Sendrecv_replace`, its receive half's source and tag from its
    /// status where it has one.
    fn sendrecv(
        &self,
        rec: &Record,
        t: (u64, u64),
        dest: &dyn Fn(i64) -> i32,
        source: &dyn Fn(i64) -> i32,
        status: &dyn Fn(usize) -> Option<(i32, i32)>,
    ) -> Result<Call, String> {
        let tag = |v: i64| if v < 0 { TAG_ANY } else { v as i32 };
        let (r, sent, got) = if rec.id == 34 {
            let b = self.bytes(rec.int(k!("count"))?, rec.int(k!("datatype"))?);
            (Routine::SendrecvReplace, b, b)
        } else {
            let sent = self.bytes(rec.int(k!("sendcount"))?, rec.int(k!("sendtype"))?);
            (
                Routine::Sendrecv,
                sent,
                self.bytes(rec.int(k!("recvcount"))?, rec.int(k!("recvtype"))?),
            )
        };
        let mut c = Call::p2p(
            r,
            t,
            sent,
            dest(rec.int(k!("dest"))?),
            tag(rec.int(k!("sendtag"))?),
        );
        let (mut s, mut g) = (source(rec.int(k!("source"))?), tag(rec.int(k!("recvtag"))?));
        c.e.flags = if s == PEER_ANY { FLAG_ANY_SOURCE } else { 0 }
            | if g == TAG_ANY { FLAG_ANY_TAG } else { 0 };
        if let Some((a, b)) = status(0) {
            (s, g) = (a, if b >= 0 { b } else { g });
        }
        c.half = Some(RecvHalf {
            bytes: got,
            source: s,
            tag: g,
        });
        Ok(c)
    }

    /// A collective on the communicator of `members` (world ranks in its order).
    fn collective(
        &self,
        rec: &Record,
        r: Routine,
        t: (u64, u64),
        members: &[u32],
    ) -> Result<Call, String> {
        let p = members.len() as u64;
        let me = members
            .iter()
            .position(|&m| m == self.me)
            .map_or(-1, |i| i as i64);
        Ok(match r {
            Routine::Barrier => Call::coll(r, t, -1, 0, 0),
            Routine::Bcast | Routine::Reduce | Routine::Gather | Routine::Scatter => {
                self.rooted(rec, r, t, members, me)?
            }
            Routine::Gatherv | Routine::Scatterv => self.rooted_v(rec, r, t, members, me)?,
            Routine::Allreduce | Routine::Scan | Routine::Exscan => {
                let n = self.bytes(rec.int(k!("count"))?, rec.int(k!("datatype"))?);
                Call::coll(r, t, -1, n, n)
            }
            Routine::Allgather | Routine::Alltoall => {
                let sent = self.bytes(rec.int(k!("sendcount"))?, rec.int(k!("sendtype"))?);
                let block = self.bytes(rec.int(k!("recvcount"))?, rec.int(k!("recvtype"))?);
                let sent = if r == Routine::Alltoall {
                    sent.saturating_mul(p)
                } else {
                    sent
                };
                Call::coll(r, t, -1, sent, block.saturating_mul(p))
            }
            _ => self.unrooted_v(rec, r, t, me)?,
        })
    }

    /// Bcast, Reduce, Gather or Scatter: the bytes this rank sends and receives depend on
    /// whether it is the root (`me`, its rank in the communicator of `members`).
    fn rooted(
        &self,
        rec: &Record,
        r: Routine,
        t: (u64, u64),
        members: &[u32],
        me: i64,
    ) -> Result<Call, String> {
        let p = members.len() as u64;
        let root = || root_of(rec, p);
        let world = |v: i64| members[v as usize] as i32;
        Ok(match r {
            Routine::Bcast => {
                let (n, root) = (
                    self.bytes(rec.int(k!("count"))?, rec.int(k!("datatype"))?),
                    root()?,
                );
                if root == me {
                    Call::coll(r, t, world(root), n, 0)
                } else {
                    Call::coll(r, t, world(root), 0, n)
                }
            }
            Routine::Reduce => {
                let (n, root) = (
                    self.bytes(rec.int(k!("count"))?, rec.int(k!("datatype"))?),
                    root()?,
                );
                Call::coll(r, t, world(root), n, if root == me { n } else { 0 })
            }
            Routine::Gather => {
                let (sent, root) = (
                    self.bytes(rec.int(k!("sendcount"))?, rec.int(k!("sendtype"))?),
                    root()?,
                );
                let got = match (rec.int(k!("recvcount")), rec.int(k!("recvtype"))) {
                    (Ok(c), Ok(d)) if root == me => self.bytes(c, d).saturating_mul(p),
                    _ => 0,
                };
                Call::coll(r, t, world(root), sent, got)
            }
            _ => {
                // Scatter.
                let (got, root) = (
                    self.bytes(rec.int(k!("recvcount"))?, rec.int(k!("recvtype"))?),
                    root()?,
                );
                let sent = match (rec.int(k!("sendcount")), rec.int(k!("sendtype"))) {
                    (Ok(c), Ok(d)) if root == me => self.bytes(c, d).saturating_mul(p),
                    _ => 0,
                };
                Call::coll(r, t, world(root), sent, got)
            }
        })
    }

    /// Gatherv or Scatterv: the root (`me` in the communicator of `members`) alone has the
    /// per-rank counts, kept with the call.
    fn rooted_v(
        &self,
        rec: &Record,
        r: Routine,
        t: (u64, u64),
        members: &[u32],
        me: i64,
    ) -> Result<Call, String> {
        let root = root_of(rec, members.len() as u64)?;
        let world = |v: i64| members[v as usize] as i32;
        Ok(if r == Routine::Gatherv {
            let sent = self.bytes(rec.int(k!("sendcount"))?, rec.int(k!("sendtype"))?);
            let counts = if root == me {
                self.scaled(rec.ints(k!("recvcounts")), rec.int(k!("recvtype"))?)
            } else {
                Vec::new()
            };
            let got = counts.iter().sum();
            let mut c = Call::coll(r, t, world(root), sent, got);
            c.coll = Some((got, counts));
            c
        } else {
            let got = self.bytes(rec.int(k!("recvcount"))?, rec.int(k!("recvtype"))?);
            let counts = if root == me {
                self.scaled(rec.ints(k!("sendcounts")), rec.int(k!("sendtype"))?)
            } else {
                Vec::new()
            };
            let mut c = Call::coll(r, t, world(root), counts.iter().sum(), got);
            c.coll = Some((got, counts));
            c
        })
    }

    /// Allgatherv, Alltoallv or Reduce_scatter (any other routine): every rank has the
    /// per-rank counts, kept with the call; `me`: this rank in the communicator.
    fn unrooted_v(&self, rec: &Record, r: Routine, t: (u64, u64), me: i64) -> Result<Call, String> {
        Ok(match r {
            Routine::Allgatherv => {
                let counts = self.scaled(rec.ints(k!("recvcounts")), rec.int(k!("recvtype"))?);
                let got = counts.iter().sum();
                let mut c = Call::coll(
                    r,
                    t,
                    -1,
                    self.bytes(rec.int(k!("sendcount"))?, rec.int(k!("sendtype"))?),
                    got,
                );
                c.coll = Some((got, counts));
                c
            }
            Routine::Alltoallv => {
                let sends = self.scaled(rec.ints(k!("sendcounts")), rec.int(k!("sendtype"))?);
                let recvs = self.scaled(rec.ints(k!("recvcounts")), rec.int(k!("recvtype"))?);
                let (sent, got) = (sends.iter().sum(), recvs.iter().sum());
                let mut c = Call::coll(r, t, -1, sent, got);
                c.coll = Some((got, [sends, recvs].concat()));
                c
            }
            _ => {
                // Reduce_scatter: the receive counts.
                let counts = self.scaled(rec.ints(k!("recvcounts")), rec.int(k!("datatype"))?);
                let mine = counts.get(me as usize).copied().unwrap_or(0);
                let mut c = Call::coll(r, t, -1, counts.iter().sum(), mine);
                c.coll = Some((mine, counts));
                c
            }
        })
    }

    /// Per-rank counts `v` of datatype `dt` in bytes.
    fn scaled(&self, v: Vec<i64>, dt: i64) -> Vec<u64> {
        v.into_iter().map(|c| self.bytes(c, dt)).collect()
    }
}

/// The record's root, in the communicator's ranks (to compare with this rank's), checked to
/// be one of its `p`.
fn root_of(rec: &Record, p: u64) -> Result<i64, String> {
    let v = rec.int(k!("root"))?;
    (0..p as i64)
        .contains(&v)
        .then_some(v)
        .ok_or_else(|| format!("root {v} is not a rank of the communicator's {p}"))
}

impl Requests<i64> {
    /// Completes the latest open request of `key` (DUMPI's ids are reused once completed), and
    /// says whether it is a receive's.
    fn complete_last(&mut self, key: &i64) -> Option<(Completion, bool)> {
        let i = self.open.iter().rposition(|(k, ..)| k == key)?;
        let (_, req, status) = self.open.remove(i);
        let (source, tag) = status.unwrap_or((-1, -1));
        Some((Completion { req, source, tag }, status.is_some()))
    }
}
