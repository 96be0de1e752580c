//! The predicted run as a timeline in Perfetto's own protobuf trace format (`.perfetto-trace`,
//! `protos/perfetto/trace/perfetto_trace.proto`), for timelines too large for the JSON of
//! [`super::timeline`]: the same tracks, slices and arrows, each slice a begin and an end
//! `TrackEvent` on its track, names and argument keys interned once at the file's start.
//!
//! Tracks: a process per rank (`rank R`), with the threads `predicted`, `measured` and, with the
//! critical path, `critical path` (their uuids `(R + 1) · 4 + k`, k = 0, 1, 2; a thread's tid
//! the same number); the model, its parameters and the prediction are one instant event,
//! `prediction`, on the track `loggps-predict` (its `other` argument their JSON). Times are ns
//! from time 0 (the earliest `MPI_Init` return), rounded to the ns.
//!
//! Perfetto orders events of one time by their place in the file, so a rank's events are
//! written in program order: the replay hands them over in batches from any thread, and a
//! batch that comes before an earlier one of its rank waits for it (a few batches at most).

use super::timeline::{Cut, flow_ends, gap_ns, measured_ns};
use crate::critical::{CriticalPath, Part};
use crate::graph::HbGraph;
use crate::replay::Step;
use crate::trace::{PEER_NULL, Routine, Shape, Trace};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::Mutex;

/// Interned event names past the routines' (whose iid is their code + 1).
const COMPUTATION: u64 = 1000;
const SENDER_SYNC: u64 = 1001;
const RECEIVER_SYNC: u64 = 1002;
const PREDICTION: u64 = 1003;
/// Interned categories.
const CAT_MPI: u64 = 1;
const CAT_COMPUTATION: u64 = 2;
const CAT_SYNC: u64 = 3;
const CAT_CRITICAL: u64 = 4;
/// Interned argument keys, in this order from iid 1.
const KEYS: [&str; 9] = [
    "event",
    "peer",
    "bytes",
    "communication_ns",
    "sender_sync_ns",
    "receiver_sync_ns",
    "site",
    "part",
    "other",
];
const SEQUENCE: u64 = 1;
/// The one track outside the ranks'.
const GLOBAL_TRACK: u64 = 1;

/// A protobuf message being encoded (wire format only: the proto's field numbers are at the
/// call sites).
#[derive(Default)]
struct Pb(Vec<u8>);

impl Pb {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn uint(&mut self, field: u32, v: u64) {
        self.varint((field as u64) << 3);
        self.varint(v);
    }

    fn int(&mut self, field: u32, v: i64) {
        self.uint(field, v as u64);
    }

    fn fixed64(&mut self, field: u32, v: u64) {
        self.varint(((field as u64) << 3) | 1);
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.varint(((field as u64) << 3) | 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn string(&mut self, field: u32, s: &str) {
        self.bytes(field, s.as_bytes());
    }

    /// A nested message, built in place: a one-byte length first, widened after where the
    /// message is 128 bytes or more (rare: the interned names).
    fn message<T>(&mut self, field: u32, build: impl FnOnce(&mut Pb) -> T) {
        self.varint(((field as u64) << 3) | 2);
        let at = self.0.len();
        self.0.push(0);
        build(self);
        let len = self.0.len() - at - 1;
        if len < 0x80 {
            self.0[at] = len as u8;
        } else {
            let mut v = Pb::default();
            v.varint(len as u64);
            self.0.splice(at..=at, v.0);
        }
    }

    /// `Trace.packet` (1): a `TracePacket` on our sequence.
    fn packet<T>(&mut self, build: impl FnOnce(&mut Pb) -> T) {
        self.message(1, |p| {
            build(p);
            p.uint(10, SEQUENCE); // trusted_packet_sequence_id
        });
    }
}

/// An argument of a slice (`DebugAnnotation`: name_iid 1, then its value).
enum Arg<'s> {
    Uint(u64, u64),
    Int(u64, i64),
    Double(u64, f64),
    Str(u64, &'s str),
}

/// One `TrackEvent` (`TracePacket.track_event` 11) at `ts` ns.
struct Ev<'s> {
    ts: f64,
    track: u64,
    /// 1 slice begin, 2 slice end, 3 instant.
    kind: u64,
    name: u64,
    cat: u64,
    args: &'s [Arg<'s>],
    flow_out: Option<u64>,
    flow_in: Option<u64>,
}

impl Pb {
    fn event(&mut self, e: Ev<'_>) {
        self.packet(|p| {
            p.uint(8, e.ts.max(0.0).round() as u64); // timestamp
            p.uint(13, 2); // sequence_flags: SEQ_NEEDS_INCREMENTAL_STATE
            p.message(11, |t| {
                t.uint(9, e.kind); // type
                t.uint(11, e.track); // track_uuid
                if e.kind != 2 {
                    t.uint(10, e.name); // name_iid
                    t.uint(3, e.cat); // category_iids
                }
                // Zeros are left out, but an event's index (key 1).
                let zero = |a: &Arg<'_>| match *a {
                    Arg::Uint(k, v) => v == 0 && k != 1,
                    Arg::Double(_, v) => v == 0.0,
                    _ => false,
                };
                for a in e.args.iter().filter(|a| !zero(a)) {
                    t.message(4, |d| match *a {
                        Arg::Uint(k, v) => (d.uint(1, k), d.uint(3, v)),
                        Arg::Int(k, v) => (d.uint(1, k), d.int(4, v)),
                        Arg::Double(k, v) => (d.uint(1, k), d.fixed64(5, v.to_bits())),
                        Arg::Str(k, v) => (d.uint(1, k), d.string(6, v)),
                    });
                }
                if let Some(id) = e.flow_out {
                    t.fixed64(47, id); // flow_ids
                }
                if let Some(id) = e.flow_in {
                    t.fixed64(48, id); // terminating_flow_ids
                }
            });
        });
    }

    /// A slice from `from` for `dur` ns: its begin (with `args` and flows) and its end.
    fn slice(&mut self, track: u64, name: u64, cat: u64, from: f64, dur: f64, args: &[Arg<'_>]) {
        self.begin(track, name, cat, from, args, (None, None));
        self.end(track, from + dur);
    }

    fn begin(
        &mut self,
        track: u64,
        name: u64,
        cat: u64,
        ts: f64,
        args: &[Arg<'_>],
        flows: (Option<u64>, Option<u64>),
    ) {
        self.event(Ev {
            ts,
            track,
            kind: 1,
            name,
            cat,
            args,
            flow_out: flows.0,
            flow_in: flows.1,
        });
    }

    fn end(&mut self, track: u64, ts: f64) {
        self.event(Ev {
            ts,
            track,
            kind: 2,
            name: 0,
            cat: 0,
            args: &[],
            flow_out: None,
            flow_in: None,
        });
    }

    /// A `TrackDescriptor` (60): a rank's process (`thread` None) or one of its threads.
    fn track(&mut self, rank: u32, thread: Option<(u64, &str)>) {
        let pid = rank as i64 + 1;
        self.packet(|p| {
            p.message(60, |d| match thread {
                None => {
                    d.uint(1, process_track(rank));
                    d.message(3, |pd| {
                        pd.int(1, pid);
                        pd.string(6, &format!("rank {rank}"));
                    });
                }
                Some((k, name)) => {
                    d.uint(1, track(rank, k));
                    d.uint(5, process_track(rank)); // parent_uuid
                    d.message(4, |td| {
                        td.int(1, pid);
                        td.int(2, track(rank, k) as i64);
                        td.string(5, name);
                    });
                }
            });
        });
    }
}

/// The uuid of rank `r`'s thread `k` (0 predicted, 1 measured, 2 critical path); its tid too.
fn track(r: u32, k: u64) -> u64 {
    (r as u64 + 1) * 4 + k
}

fn process_track(r: u32) -> u64 {
    (r as u64 + 1) * 4 + 3
}

/// Where the file stands: each rank's next event and the events that came before it.
struct Out<W> {
    w: W,
    error: Option<io::Error>,
    /// Slices, instants and flow ends written.
    events: u64,
    /// Per rank, the next event to write; by (rank, event), the encoded events that came early.
    next: Vec<u32>,
    early: BTreeMap<(usize, u32), (Vec<u8>, u64)>,
}

impl<W: Write> Out<W> {
    fn write(&mut self, b: &[u8], n: u64) {
        if self.error.is_none() {
            match self.w.write_all(b) {
                Ok(()) => self.events += n,
                Err(e) => self.error = Some(e),
            }
        }
    }

    /// Event `i` of rank `r` (its bytes, its count of events): written if it is the rank's
    /// next, with those after it that came early; else kept until then.
    fn put(&mut self, r: usize, i: u32, b: &[u8], n: u64) {
        if i != self.next[r] {
            self.early.insert((r, i), (b.to_vec(), n));
            return;
        }
        self.write(b, n);
        self.next[r] = i + 1;
        while let Some((b, n)) = self.early.remove(&(r, self.next[r])) {
            self.write(&b, n);
            self.next[r] += 1;
        }
    }
}

/// A Perfetto timeline being written: [`Perfetto::observe`] is the replay's observer.
pub struct Perfetto<'a, W: Write + Send> {
    trace: &'a Trace,
    g: &'a HbGraph,
    t0: f64,
    cut: Cut,
    out: Mutex<Out<W>>,
    sites: Vec<Vec<String>>,
}

impl<'a, W: Write + Send> Perfetto<'a, W> {
    /// Starts the file: the interned names and each kept rank's tracks.
    pub fn new(trace: &'a Trace, g: &'a HbGraph, cut: Cut, mut w: W) -> io::Result<Self> {
        let mut pb = Pb::default();
        pb.packet(|p| {
            p.uint(13, 1); // sequence_flags: SEQ_INCREMENTAL_STATE_CLEARED
            p.message(12, |d| {
                // interned_data
                let mut name = |iid: u64, s: &str| {
                    d.message(2, |n| (n.uint(1, iid), n.string(2, s)));
                };
                for &r in Routine::ALL {
                    name(r as u64 + 1, r.mpi_name());
                }
                name(COMPUTATION, "computation");
                name(SENDER_SYNC, "sender sync");
                name(RECEIVER_SYNC, "receiver sync");
                name(PREDICTION, "prediction");
                for (i, c) in ["mpi", "computation", "sync", "critical"]
                    .iter()
                    .enumerate()
                {
                    d.message(1, |n| (n.uint(1, i as u64 + 1), n.string(2, c)));
                }
                for (i, k) in KEYS.iter().enumerate() {
                    d.message(3, |n| (n.uint(1, i as u64 + 1), n.string(2, k)));
                }
            });
        });
        pb.packet(|p| {
            p.message(60, |d| {
                (d.uint(1, GLOBAL_TRACK), d.string(2, "loggps-predict"))
            });
        });
        for r in (0..trace.nranks() as u32).filter(|&r| cut.keeps_rank(r)) {
            pb.track(r, None);
            pb.track(r, Some((0, "predicted")));
            pb.track(r, Some((1, "measured")));
            if pb.0.len() >= 1 << 16 {
                w.write_all(&pb.0)?;
                pb.0.clear();
            }
        }
        w.write_all(&pb.0)?;
        let n = trace.nranks();
        Ok(Perfetto {
            trace,
            g,
            t0: trace.measured_t0(),
            cut,
            out: Mutex::new(Out {
                w,
                error: None,
                events: 0,
                next: vec![0; n],
                early: BTreeMap::new(),
            }),
            sites: Vec::new(),
        })
    }

    /// Names each call's site: `names[r][i]` for site `i` of rank `r`.
    pub fn with_sites(mut self, names: Vec<Vec<String>>) -> Self {
        self.sites = names;
        self
    }

    fn site(&self, r: usize, i: usize) -> Option<&str> {
        let of = self.trace.sites.as_ref().map(|s| &s.of_event)?;
        let k = *of.get(self.trace.events.offsets()[r] + i)? as usize;
        self.sites.get(r)?.get(k).map(String::as_str)
    }

    /// Encodes and writes a batch of costed events (the replay's observer).
    pub fn observe(&self, steps: &[Step]) {
        let mut pb = Pb::default();
        // (rank, event, end of its bytes, events in it)
        let mut cuts = Vec::with_capacity(steps.len());
        for st in steps.iter().filter(|st| self.cut.keeps_rank(st.rank)) {
            let n = self.step(st, &mut pb);
            cuts.push((st.rank as usize, st.event, pb.0.len(), n));
        }
        let mut o = self.out.lock().expect("timeline");
        let mut at = 0;
        for (r, i, end, n) in cuts {
            o.put(r, i, &pb.0[at..end], n);
            at = end;
        }
    }

    /// One costed event's slices and flow ends; returns how many it wrote.
    fn step(&self, st: &Step, pb: &mut Pb) -> u64 {
        let (r, i) = (st.rank as usize, st.event as usize);
        let ev = self.trace.rank(r);
        let routine = ev.routine(i);
        let predicted = track(st.rank, 0);
        let mut n = 0;
        let gap = gap_ns(ev, i);
        let from = st.call_ns - gap;
        if gap > 0.0 && self.cut.keeps(from, st.call_ns) {
            pb.slice(predicted, COMPUTATION, CAT_COMPUTATION, from, gap, &[]);
            n += 1;
        }
        if self.cut.keeps(st.call_ns, st.return_ns) {
            let peer = ev.peer(i);
            let p2p = matches!(
                routine.shape(),
                Shape::Send | Shape::Isend | Shape::Recv | Shape::Irecv | Shape::Sendrecv
            );
            let mut args = vec![Arg::Uint(1, i as u64)];
            if p2p && peer != PEER_NULL && peer >= 0 {
                args.push(Arg::Int(2, peer as i64));
            }
            args.extend([
                Arg::Uint(3, ev.bytes(i)),
                Arg::Double(4, st.communication_ns),
                Arg::Double(5, st.sender_sync_ns),
                Arg::Double(6, st.receiver_sync_ns),
            ]);
            if let Some(s) = self.site(r, i) {
                args.push(Arg::Str(7, s));
            }
            // Flow ids from 1: an event's global index + 1.
            let (out, into) = flow_ends(self.trace, self.g, r, i);
            let flows = (out.map(|e| e as u64 + 1), into.map(|e| e as u64 + 1));
            let name = routine as u64 + 1;
            pb.begin(predicted, name, CAT_MPI, st.call_ns, &args, flows);
            n += 1 + flows.0.is_some() as u64 + flows.1.is_some() as u64;
            let mut at = st.call_ns;
            for (what, d) in [
                (SENDER_SYNC, st.sender_sync_ns),
                (RECEIVER_SYNC, st.receiver_sync_ns),
            ] {
                if d > 0.0 {
                    pb.slice(predicted, what, CAT_SYNC, at, d, &[]);
                    at += d;
                    n += 1;
                }
            }
            pb.end(predicted, st.return_ns);
        }
        let (mc, mr) = measured_ns(self.trace, self.t0, r, i);
        if mr >= mc && self.cut.keeps(mc, mr) {
            let mut args = vec![Arg::Uint(1, i as u64)];
            if let Some(s) = self.site(r, i) {
                args.push(Arg::Str(7, s));
            }
            let name = routine as u64 + 1;
            pb.slice(track(st.rank, 1), name, CAT_MPI, mc, mr - mc, &args);
            n += 1;
        }
        n
    }

    /// Adds the critical path: a `critical path` thread on each rank it crosses, its segments
    /// (a routine's name, or `computation`) in time order, a flow where it moves between ranks.
    pub fn critical(&self, path: &CriticalPath) {
        let mut pb = Pb::default();
        let mut n = 0;
        let ranks: std::collections::BTreeSet<u32> = path.segments.iter().map(|x| x.rank).collect();
        for &r in ranks.iter().filter(|&&r| self.cut.keeps_rank(r)) {
            pb.track(r, Some((2, "critical path")));
        }
        // Ids past every event's, which the messages' flows use.
        let first = self.trace.events.offsets()[self.trace.nranks()] as u64 + 1;
        let mut flows: BTreeMap<(u32, u32), (Option<u64>, Option<u64>)> = BTreeMap::new();
        for (k, j) in path.jumps.iter().enumerate() {
            let keep = |r: u32| self.cut.keeps_rank(r) && self.cut.keeps(j.at_ns, j.at_ns);
            if keep(j.partner_rank) && keep(j.rank) {
                flows
                    .entry((j.partner_rank, j.partner_event))
                    .or_default()
                    .0 = Some(first + k as u64);
                flows.entry((j.rank, j.event)).or_default().1 = Some(first + k as u64);
            }
        }
        let mut segments: Vec<_> = path.segments.iter().collect();
        segments.sort_by(|a, b| {
            (a.rank, a.from_ns)
                .partial_cmp(&(b.rank, b.from_ns))
                .expect("times")
        });
        for x in segments {
            if !self.cut.keeps_rank(x.rank) || !self.cut.keeps(x.from_ns, x.to_ns) {
                continue;
            }
            let name = match x.part {
                Part::Computation => COMPUTATION,
                _ => self.trace.rank(x.rank as usize).routine(x.event as usize) as u64 + 1,
            };
            let part = serde_json::to_string(&x.part).unwrap_or_default();
            let args = [
                Arg::Uint(1, x.event as u64),
                Arg::Str(8, part.trim_matches('"')),
            ];
            // A jump's flow on the first segment of its event.
            let f = flows.remove(&(x.rank, x.event)).unwrap_or_default();
            let tr = track(x.rank, 2);
            pb.begin(tr, name, CAT_CRITICAL, x.from_ns, &args, f);
            pb.end(tr, x.to_ns);
            n += 1 + f.0.is_some() as u64 + f.1.is_some() as u64;
        }
        self.out.lock().expect("timeline").write(&pb.0, n);
    }

    /// Ends the file with `other` (the model, its parameters, the prediction) as the argument
    /// `other` of an instant `prediction`; returns the writer and the events written.
    pub fn finish(self, other: &serde_json::Value) -> io::Result<(W, u64)> {
        let mut o = self.out.into_inner().expect("timeline");
        // Events after one the replay never costed (a deadlock's): in their order.
        for (_, (b, n)) in std::mem::take(&mut o.early) {
            o.write(&b, n);
        }
        if let Some(e) = o.error {
            return Err(e);
        }
        let json = serde_json::to_string(other).map_err(io::Error::other)?;
        let mut pb = Pb::default();
        pb.event(Ev {
            ts: 0.0,
            track: GLOBAL_TRACK,
            kind: 3,
            name: PREDICTION,
            cat: CAT_MPI,
            args: &[Arg::Str(9, &json)],
            flow_out: None,
            flow_in: None,
        });
        let mut w = o.w;
        w.write_all(&pb.0)?;
        w.flush()?;
        Ok((w, o.events + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wire format by hand (protobuf's encoding guide): field 1 varint 150 is 08 96 01; a
    /// string field 2 "ab" is 12 02 61 62; a fixed64 field 47 is key 0x179 (varint F9 02).
    #[test]
    fn fields_encode_as_the_wire_format_says() {
        let mut pb = Pb::default();
        pb.uint(1, 150);
        pb.string(2, "ab");
        assert_eq!(pb.0, [0x08, 0x96, 0x01, 0x12, 0x02, 0x61, 0x62]);
        let mut pb = Pb::default();
        pb.fixed64(47, 1);
        assert_eq!(pb.0, [0xF9, 0x02, 1, 0, 0, 0, 0, 0, 0, 0]);
        let mut pb = Pb::default();
        pb.int(4, -1);
        assert_eq!(pb.0.len(), 1 + 10, "a negative int64 is ten bytes");
        // A nested message built in place is the bytes field of its encoding, its length one
        // varint byte below 128 and two from 128.
        for n in [3, 127, 128, 300] {
            let s = "x".repeat(n);
            let (mut a, mut b, mut inner) = (Pb::default(), Pb::default(), Pb::default());
            a.message(5, |m| m.string(2, &s));
            inner.string(2, &s);
            b.bytes(5, &inner.0);
            assert_eq!(a.0, b.0, "{n}");
        }
    }

    #[test]
    fn a_ranks_early_events_wait_for_the_one_before_them() {
        let mut o = Out {
            w: Vec::new(),
            error: None,
            events: 0,
            next: vec![0; 2],
            early: BTreeMap::new(),
        };
        o.put(0, 1, b"b", 1);
        o.put(1, 0, b"x", 1);
        assert_eq!(o.w, b"x");
        o.put(0, 0, b"a", 1);
        o.put(0, 2, b"c", 1);
        assert_eq!(o.w, b"xabc");
        assert_eq!(o.events, 4);
    }
}
