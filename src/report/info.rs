//! `loggps-predict info`: what a trace holds, without replaying it.

use crate::model::Params;
use crate::trace::sites::UNKNOWN;
use crate::trace::{FLAG_BOUNCED, FLAG_CLEAN, FLAG_REDUCED, PEER_NULL, Routine, Shape, Trace};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// One bucket of the message-size histogram: sizes in `[min_bytes, max_bytes]`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SizeBucket {
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub count: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct EagerInfo {
    pub name: String,
    pub bytes: u64,
    /// Whether the library's messages switch to rendezvous there (not MPICH's cell size:
    /// [`crate::trace::library::is_protocol_switch`]).
    pub protocol_switch: bool,
}

/// A trace's summary.
#[derive(Clone, Debug, Serialize)]
pub struct Info {
    pub trace: String,
    pub ranks: usize,
    pub events: u64,
    pub events_by_routine: BTreeMap<&'static str, u64>,
    /// Point-to-point messages sent (MPI_PROC_NULL excluded) and their bytes.
    pub messages: u64,
    pub message_bytes: u64,
    /// Of those, the sends the tracer flagged `clean` (from a buffer unchanged since the rank's
    /// last send from it: the model's §13), and their bytes.
    pub clean_sends: u64,
    pub clean_bytes: u64,
    /// Receives flagged `bounced` (into the buffer the rank last sent from to the same peer).
    pub bounced_receives: u64,
    /// Collective calls flagged `clean` (their send buffer unchanged since the rank's last
    /// send from it).
    pub clean_collectives: u64,
    /// Collective calls flagged `bounced` (their receive buffer overlaps one the rank sent
    /// from) and `reduced` (their receive buffer overlaps an Allreduce's, Scan's or Exscan's
    /// result: the model's §13).
    pub bounced_collectives: u64,
    pub reduced_collectives: u64,
    /// Point-to-point records that say where their buffers start in their pages (the tracer's
    /// offsets, which the replay matches for 4 KiB aliasing: the model's §13).
    pub placed_records: u64,
    /// Bytes sent by collectives, summed over ranks.
    pub collective_bytes: u64,
    pub bytes_moved: u64,
    pub message_sizes: Vec<SizeBucket>,
    pub measured_runtime_s: f64,
    pub library: String,
    pub hostnames: Vec<String>,
    /// Per node of two or more ranks, where its first two ran (the tracer's cores figure).
    pub cores: Vec<CoresInfo>,
    /// Where each rank ran, for the ranks the trace says (the tracer's `P` chunk).
    pub placement: Vec<PlaceInfo>,
    /// Each pair of ranks the tracer timed, per class of pair present on a node.
    pub links: Vec<LinkInfo>,
    /// The messages' round trips between two nodes (rank 0 and the next node's first rank),
    /// where the tracer timed them.
    pub network: Option<NetworkInfo>,
    /// The tracer's own time per record over the ranks that timed it, `[least, most]` ns
    /// (the model's §16; None: not timed).
    pub tracer_own_ns: Option<[f64; 2]>,
    /// The tracer's time inside each call's span, the same way (§16; None: not timed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracer_in_call_ns: Option<[f64; 2]>,
    /// The same two for a record of a request's routine (§16; None: not timed apart).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracer_own_requests_ns: Option<[f64; 2]>,
    /// The tracer's own time a record of each routine it sampled during the run (§16), in
    /// code order: the samples over the ranks and `[least, most]` ns over the ranks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tracer_sampled: Vec<SampledInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracer_in_call_requests_ns: Option<[f64; 2]>,
    /// The CPUs a node's ranks could run on at `MPI_Init` (their affinity masks together),
    /// `[least, most]` over the ranks that recorded it (None: none did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_cpus: Option<[f64; 2]>,
    pub communicators: usize,
    pub eager_limit: Option<EagerInfo>,
    pub params: Option<Params>,
    /// The sets combined with `params` per link class (the model's §12).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_params: Vec<Params>,
    pub finalized: bool,
    /// Call sites: the events with a recorded site, and the distinct return addresses summed
    /// over ranks (None: the trace has none).
    pub call_sites: Option<CallSites>,
    /// The file's size, and that over the events (the encoding's compactness).
    pub file_bytes: u64,
    pub bytes_per_event: f64,
}

/// A cache line's round trip between a node's first two ranks' cores, ns.
#[derive(Clone, Debug, Serialize)]
pub struct CoresInfo {
    pub rank: usize,
    pub partner: u32,
    pub init_ns: f64,
    pub final_ns: f64,
}

/// Where one rank ran: its node (the lowest world rank on it), and its CPU, socket and
/// last-level-cache domain at `MPI_Init` and at `MPI_Finalize` (-1: not known).
#[derive(Clone, Debug, Serialize)]
pub struct PlaceInfo {
    pub rank: usize,
    pub node: u32,
    pub cpu: [i32; 2],
    pub socket: [i32; 2],
    pub llc: [i32; 2],
}

/// A cache line's round trip between two ranks' cores of one class of pair, ns, and a
/// message's through MPI between them at each size timed: `[bytes, init_ns, final_ns]`.
#[derive(Clone, Debug, Serialize)]
pub struct LinkInfo {
    pub class: &'static str,
    pub ranks: [u32; 2],
    pub init_ns: f64,
    pub final_ns: f64,
    pub messages: Vec<[f64; 3]>,
}

/// A message's round trips through MPI between rank 0 and `partner` on another node:
/// `[bytes, init_ns, final_ns]` at each size timed.
#[derive(Clone, Debug, Serialize)]
pub struct NetworkInfo {
    pub partner: u32,
    pub messages: Vec<[f64; 3]>,
}

/// Round trips as `[bytes, init_ns, final_ns]`.
fn trips(m: &[crate::trace::placement::MessageTrip]) -> Vec<[f64; 3]> {
    m.iter()
        .map(|m| [m.bytes as f64, m.init_ns, m.final_ns])
        .collect()
}

/// Round trips in words: `64 B 410/398 ns, …`.
fn trips_text(m: &[[f64; 3]]) -> String {
    let each: Vec<String> = (m.iter())
        .map(|[bytes, a, b]| format!("{bytes} B {a:.0}/{b:.0} ns"))
        .collect();
    each.join(", ")
}

#[derive(Clone, Debug, Serialize)]
pub struct CallSites {
    pub events_with_site: u64,
    pub addresses: u64,
}

/// The histogram bucket of a `k`-byte message: 0, then powers of two.
/// `[least, most]` of a tracer's figure `f` over the ranks that have it.
fn tracer_span(
    trace: &Trace,
    f: impl Fn(&crate::trace::RankMeta) -> Option<f64>,
) -> Option<[f64; 2]> {
    span(trace.meta.ranks.recorded().filter_map(|(_, m)| f(m)))
}

/// A routine's own time a record, sampled by the tracer during the run ([`Info::tracer_sampled`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampledInfo {
    pub routine: &'static str,
    pub samples: u64,
    pub ns: [f64; 2],
}

/// Each routine the ranks sampled, over the ranks.
fn tracer_sampled(trace: &Trace) -> Vec<SampledInfo> {
    let mut by: std::collections::BTreeMap<crate::trace::Routine, (u64, Vec<f64>)> =
        Default::default();
    for (_, m) in trace.meta.ranks.recorded() {
        for &(r, n, ns) in m.own_sampled.each() {
            let e = by.entry(r).or_default();
            e.0 += u64::from(n);
            e.1.push(ns);
        }
    }
    (by.into_iter())
        .filter_map(|(r, (samples, ns))| {
            Some(SampledInfo {
                routine: r.mpi_name(),
                samples,
                ns: span(ns.into_iter())?,
            })
        })
        .collect()
}

/// `[least, most]` of `v`, None where empty.
fn span(v: impl Iterator<Item = f64>) -> Option<[f64; 2]> {
    v.fold(None, |r, x| {
        Some(r.map_or([x, x], |[l, h]: [f64; 2]| [l.min(x), h.max(x)]))
    })
}

/// What [`Info`] counts of a trace's events: per routine code, the messages, their sizes'
/// histogram, the collectives' bytes.
struct Counts {
    per_code: [u64; 256],
    hist: [u64; 65],
    messages: u64,
    message_bytes: u64,
    clean: [u64; 2],
    bounced: u64,
    /// Collectives flagged `clean`, `bounced`, `reduced`.
    colls: [u64; 3],
    placed: u64,
    collective_bytes: u64,
}

impl Counts {
    fn add(mut self, o: Counts) -> Counts {
        (0..256).for_each(|k| self.per_code[k] += o.per_code[k]);
        (0..65).for_each(|k| self.hist[k] += o.hist[k]);
        self.messages += o.messages;
        self.message_bytes += o.message_bytes;
        (self.clean[0], self.clean[1]) = (self.clean[0] + o.clean[0], self.clean[1] + o.clean[1]);
        self.bounced += o.bounced;
        (0..3).for_each(|k| self.colls[k] += o.colls[k]);
        self.placed += o.placed;
        self.collective_bytes += o.collective_bytes;
        self
    }
}

/// The trace's [`Counts`], its ranks counted in parallel.
fn counts(trace: &Trace) -> Counts {
    use rayon::prelude::*;
    let zero = || Counts {
        per_code: [0; 256],
        hist: [0; 65],
        messages: 0,
        message_bytes: 0,
        clean: [0; 2],
        bounced: 0,
        colls: [0; 3],
        placed: 0,
        collective_bytes: 0,
    };
    let rank = |r: usize| {
        let (ev, mut c) = (trace.events.rank(r), zero());
        for i in 0..ev.len() {
            let routine = ev.routine(i);
            c.per_code[routine as usize] += 1;
            match routine.shape() {
                Shape::Send | Shape::Isend | Shape::Sendrecv if ev.peer(i) != PEER_NULL => {
                    let bytes = ev.bytes(i);
                    c.messages += 1;
                    c.message_bytes += bytes;
                    c.hist[bucket(bytes)] += 1;
                    if ev.flags(i) & FLAG_CLEAN != 0 {
                        (c.clean[0], c.clean[1]) = (c.clean[0] + 1, c.clean[1] + bytes);
                    }
                }
                Shape::Coll => {
                    c.collective_bytes += ev.bytes(i);
                    let f = ev.flags(i);
                    for (n, flag) in
                        c.colls
                            .iter_mut()
                            .zip([FLAG_CLEAN, FLAG_BOUNCED, FLAG_REDUCED])
                    {
                        *n += (f & flag != 0) as u64;
                    }
                }
                _ => {}
            }
            c.placed += (ev.pages(i) != crate::trace::PageOffsets::NONE) as u64;
            // A Sendrecv's flags hold both halves': its receive's `bounced` counted here.
            if matches!(
                routine.shape(),
                Shape::Recv | Shape::Irecv | Shape::Sendrecv
            ) && ev.flags(i) & FLAG_BOUNCED != 0
            {
                c.bounced += 1;
            }
        }
        c
    };
    (0..trace.nranks())
        .into_par_iter()
        .map(rank)
        .reduce(zero, Counts::add)
}

fn bucket(k: u64) -> usize {
    if k == 0 {
        0
    } else {
        64 - k.leading_zeros() as usize
    }
}

/// Cores or links shown one a line before the rest are summed up in one.
const SHOWN: usize = 4;

impl Info {
    pub fn new(name: &str, trace: &Trace, file_bytes: u64) -> Info {
        let c = counts(trace);
        let (per_code, hist) = (&c.per_code, &c.hist);
        let (messages, message_bytes, collective_bytes) =
            (c.messages, c.message_bytes, c.collective_bytes);
        let by_routine: BTreeMap<&'static str, u64> = Routine::ALL
            .iter()
            .filter(|&&r| per_code[r as usize] > 0)
            .map(|&r| (r.mpi_name(), per_code[r as usize]))
            .collect();
        let message_sizes = hist
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(b, &count)| match b {
                0 => SizeBucket {
                    min_bytes: 0,
                    max_bytes: 0,
                    count,
                },
                _ => SizeBucket {
                    min_bytes: 1 << (b - 1),
                    max_bytes: ((1u128 << b) - 1) as u64,
                    count,
                },
            })
            .collect();
        let mut hostnames: Vec<String> = trace
            .meta
            .ranks
            .recorded()
            .map(|(_, r)| r.hostname.clone())
            .filter(|h| !h.is_empty())
            .collect();
        hostnames.sort();
        hostnames.dedup();
        Info {
            trace: name.to_string(),
            ranks: trace.nranks(),
            events: trace.total_events(),
            events_by_routine: by_routine,
            messages,
            message_bytes,
            clean_sends: c.clean[0],
            clean_bytes: c.clean[1],
            bounced_receives: c.bounced,
            clean_collectives: c.colls[0],
            bounced_collectives: c.colls[1],
            reduced_collectives: c.colls[2],
            placed_records: c.placed,
            collective_bytes,
            bytes_moved: message_bytes + collective_bytes,
            message_sizes,
            measured_runtime_s: trace.measured_span_ns().1 * 1e-9,
            library: trace.meta.library.clone(),
            hostnames,
            cores: (trace.meta.ranks.recorded())
                .filter_map(|(rank, m)| {
                    let c = m.cores?;
                    Some(CoresInfo {
                        rank,
                        partner: c.partner,
                        init_ns: c.init_ns,
                        final_ns: c.final_ns,
                    })
                })
                .collect(),
            tracer_own_ns: tracer_span(trace, |m| m.own_ns),
            tracer_in_call_ns: tracer_span(trace, |m| m.in_call_ns),
            tracer_own_requests_ns: tracer_span(trace, |m| Some(m.own_req_ns?[0])),
            tracer_sampled: tracer_sampled(trace),
            tracer_in_call_requests_ns: tracer_span(trace, |m| Some(m.own_req_ns?[1])),
            node_cpus: tracer_span(trace, |m| m.cpus.map(f64::from)),
            placement: (trace.meta.ranks.recorded())
                .filter_map(|(rank, m)| {
                    let p = m.placement.as_ref()?;
                    Some(PlaceInfo {
                        rank,
                        node: p.node,
                        cpu: [p.init.cpu, p.fini.cpu],
                        socket: [p.init.socket, p.fini.socket],
                        llc: [p.init.llc, p.fini.llc],
                    })
                })
                .collect(),
            links: (trace.meta.ranks.recorded())
                .flat_map(|(_, m)| m.placement.iter().flat_map(|p| &p.links))
                .map(|l| LinkInfo {
                    class: l.class.name(),
                    ranks: l.ranks,
                    init_ns: l.init_ns,
                    final_ns: l.final_ns,
                    messages: trips(&l.messages),
                })
                .collect(),
            network: (trace.meta.ranks.recorded())
                .find_map(|(_, m)| m.placement.as_ref()?.network.as_ref())
                .map(|n| NetworkInfo {
                    partner: n.partner,
                    messages: trips(&n.messages),
                }),
            communicators: trace.comms.len() + 1,
            eager_limit: trace.meta.eager_limit.as_ref().map(|e| EagerInfo {
                name: e.name.clone(),
                bytes: e.bytes,
                protocol_switch: crate::trace::library::is_protocol_switch(e),
            }),
            params: trace.meta.params,
            other_params: trace.meta.other_params.clone(),
            finalized: trace.complete,
            call_sites: trace.sites.as_ref().map(|s| CallSites {
                events_with_site: s.of_event.iter().filter(|&&i| i != UNKNOWN).count() as u64,
                addresses: s.addresses.iter().map(|a| a.len() as u64).sum(),
            }),
            file_bytes,
            bytes_per_event: file_bytes as f64 / trace.total_events().max(1) as f64,
        }
    }

    pub fn write_table(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "trace          {}", self.trace)?;
        writeln!(
            out,
            "library        {}",
            if self.library.is_empty() {
                "(not recorded)"
            } else {
                self.library.lines().next().unwrap_or("")
            }
        )?;
        writeln!(
            out,
            "hosts          {}",
            if self.hostnames.is_empty() {
                "(not recorded)".to_string()
            } else {
                self.hostnames.join(", ")
            }
        )?;
        self.write_placement(out)?;
        writeln!(out, "ranks          {}", self.ranks)?;
        writeln!(out, "communicators  {}", self.communicators)?;
        writeln!(out, "events         {}", self.events)?;
        writeln!(
            out,
            "file           {} bytes ({:.1} bytes/event)",
            self.file_bytes, self.bytes_per_event
        )?;
        writeln!(
            out,
            "finalized      {}",
            if self.finalized {
                "yes"
            } else {
                "no (the job stopped before MPI_Finalize)"
            }
        )?;
        self.write_recording(out)?;
        writeln!(
            out,
            "messages       {} point-to-point, {} bytes; collectives {} bytes",
            self.messages, self.message_bytes, self.collective_bytes
        )?;
        let colls = self.clean_collectives + self.bounced_collectives + self.reduced_collectives;
        if self.clean_sends + self.bounced_receives + colls > 0 {
            writeln!(
                out,
                "buffers        {} send(s) from a buffer unchanged since its last send (`clean`, {} \
                 bytes), {} receive(s) into the buffer last sent to the same peer (`bounced`); \
                 collective calls: {} from an unchanged send buffer (`clean`), {} into a buffer \
                 the rank sent from (`bounced`), {} into a reduction's result (`reduced`)",
                self.clean_sends,
                self.clean_bytes,
                self.bounced_receives,
                self.clean_collectives,
                self.bounced_collectives,
                self.reduced_collectives
            )?;
        }
        if self.placed_records > 0 {
            writeln!(
                out,
                "pages          {} point-to-point record(s) say where their buffers start in their \
                 pages (a rendezvous message received 1–31 bytes further into its page than it \
                 was sent from costs `alias` more)",
                self.placed_records
            )?;
        }
        self.write_counts(out)
    }

    /// Where the ranks ran: the cores' and links' cache-line times, the tracer's own cost and
    /// the placement, the lines a reader checks before trusting a prediction.
    fn write_placement(&self, out: &mut dyn Write) -> io::Result<()> {
        for c in self.cores.iter().take(SHOWN) {
            writeln!(
                out,
                "cores          ranks {} and {}: a cache line between their cores and back {:.0} ns at MPI_Init, {:.0} ns at MPI_Finalize",
                c.rank, c.partner, c.init_ns, c.final_ns
            )?;
        }
        if self.cores.len() > SHOWN {
            let all = self.cores.iter().flat_map(|c| [c.init_ns, c.final_ns]);
            let (lo, hi) = all.fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(v), h.max(v)));
            writeln!(
                out,
                "               and {} more nodes ({lo:.0}–{hi:.0} ns over all; `--format json` lists them)",
                self.cores.len() - SHOWN
            )?;
        }
        let range = |[lo, hi]: [f64; 2]| match format!("{lo:.0}") == format!("{hi:.0}") {
            true => format!("{lo:.0}"),
            false => format!("{lo:.0}–{hi:.0}"),
        };
        if let Some(own) = self.tracer_own_ns {
            let req = (self.tracer_own_requests_ns).map_or(String::new(), |r| {
                format!(", {} ns one of a request's routine", range(r))
            });
            writeln!(
                out,
                "tracer         {} ns a record of its own{req}, timed at MPI_Init (predict takes it out of the computation between calls)",
                range(own)
            )?;
        }
        if !self.tracer_sampled.is_empty() {
            const SHOWN_SAMPLED: usize = 6;
            let mut each: Vec<String> = (self.tracer_sampled.iter().take(SHOWN_SAMPLED))
                .map(|x| format!("{} {} ns", x.routine, range(x.ns)))
                .collect();
            if self.tracer_sampled.len() > SHOWN_SAMPLED {
                each.push(format!(
                    "{} more",
                    self.tracer_sampled.len() - SHOWN_SAMPLED
                ));
            }
            writeln!(
                out,
                "               {} a record of its own, sampled during the run (predict takes these out in place of the figures above)",
                each.join(", ")
            )?;
        }
        if let Some(inside) = self.tracer_in_call_ns {
            let req = (self.tracer_in_call_requests_ns)
                .map_or(String::new(), |r| format!(", {} ns a request's", range(r)));
            writeln!(
                out,
                "               {} ns inside each call's span{req} (predict --keep-tracer-time adds it to the computation between calls)",
                range(inside)
            )?;
        }
        if let Some(cpus) = self.node_cpus {
            writeln!(
                out,
                "cpus           {} a node's ranks could run on at MPI_Init (their affinity together)",
                range(cpus)
            )?;
        }
        if !self.placement.is_empty() {
            let mut nodes: Vec<u32> = self.placement.iter().map(|p| p.node).collect();
            nodes.sort_unstable();
            nodes.dedup();
            let moved = (self.placement.iter())
                .filter(|p| p.cpu[0] != p.cpu[1])
                .count();
            writeln!(
                out,
                "placement      {} node(s) as MPI sees them; {moved} of {} rank(s) on another CPU at MPI_Finalize than at MPI_Init",
                nodes.len(),
                self.placement.len()
            )?;
        }
        for l in self.links.iter().take(SHOWN) {
            writeln!(
                out,
                "link           {} (ranks {} and {}): {:.0} ns at MPI_Init, {:.0} ns at MPI_Finalize",
                l.class, l.ranks[0], l.ranks[1], l.init_ns, l.final_ns
            )?;
            if !l.messages.is_empty() {
                writeln!(
                    out,
                    "               a message's round trip through MPI at MPI_Init/MPI_Finalize: {}",
                    trips_text(&l.messages)
                )?;
            }
        }
        if let Some(n) = &self.network {
            writeln!(
                out,
                "network        ranks 0 and {} (two nodes): a message's round trip through MPI at MPI_Init/MPI_Finalize: {}",
                n.partner,
                trips_text(&n.messages)
            )?;
        }
        Ok(())
    }

    /// What the tracer recorded beside the events: call sites, the measured run time, the
    /// eager limit and the embedded parameters.
    fn write_recording(&self, out: &mut dyn Write) -> io::Result<()> {
        match &self.call_sites {
            Some(c) => writeln!(
                out,
                "call sites     {} events with one, {} addresses over all ranks (`callsites` names them)",
                c.events_with_site, c.addresses
            )?,
            None => writeln!(out, "call sites     (not recorded)")?,
        }
        writeln!(out, "measured       {:.6} s", self.measured_runtime_s)?;
        match &self.eager_limit {
            Some(e) => writeln!(
                out,
                "eager limit    {} bytes ({}){}",
                e.bytes,
                e.name,
                match e.protocol_switch {
                    true => "",
                    false =>
                        ": MPICH's shared-memory cell size, not where its messages switch to rendezvous (calibrate measures that)",
                }
            )?,
            None => writeln!(out, "eager limit    (not recorded)")?,
        }
        match &self.params {
            Some(p) => writeln!(out, "parameters     {}{p}", class_of(p))?,
            None => writeln!(out, "parameters     (none embedded)")?,
        }
        for p in &self.other_params {
            writeln!(out, "               {}{p}", class_of(p))?;
        }
        Ok(())
    }

    /// The tables after the summary: events per routine and the message sizes' histogram.
    fn write_counts(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "\nevents by routine")?;
        for (name, n) in &self.events_by_routine {
            writeln!(out, "  {name:<26} {n:>12}")?;
        }
        if !self.message_sizes.is_empty() {
            writeln!(out, "\nmessage sizes (bytes)")?;
            for b in &self.message_sizes {
                writeln!(
                    out,
                    "  {:>10} – {:<20} {:>12}",
                    b.min_bytes, b.max_bytes, b.count
                )?;
            }
        }
        Ok(())
    }
}

/// `class NAME, ` where a set carries one (the model's §12), to lead its line.
fn class_of(p: &Params) -> String {
    p.class
        .map_or(String::new(), |c| format!("class {}, ", c.name()))
}
