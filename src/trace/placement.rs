//! Where each rank ran (the model's §12): its node as MPI sees it, its CPU, socket and
//! last-level-cache domain at `MPI_Init` and `MPI_Finalize`, and per node a cache line's round
//! trip for each class of pair present. The tracer's `P` chunk (tracer/FORMAT.md), the text
//! form's `place` line, and what the replay asks of them: which node a rank is on and how far
//! apart two ranks of one node ran.

use nom::IResult;
use nom::number::complete::{le_f64, le_i32, le_u8, le_u32};

/// What a prediction says of where the ranks ran: a node of more ranks than CPUs, ranks on
/// cores nearer or farther apart than the parameters were measured on.
impl super::Meta {
    /// A warning where a node ran more ranks than its ranks could run on CPUs (the tracer's
    /// [`RankMeta::cpus`](super::RankMeta::cpus)): they took turns on the cores, which the model, one CPU a rank
    /// (MODEL.md §14), does not cost. Nodes are the placement's, else the hostnames.
    pub fn oversubscribed_warning(&self) -> Option<String> {
        // node → (its first rank, ranks, CPUs)
        let mut nodes: std::collections::BTreeMap<String, (usize, u32, u32)> = Default::default();
        for r in 0..self.ranks.nranks {
            let m = self.ranks.get(r);
            let node = match &m.placement {
                Some(p) => format!("rank {}", p.node),
                None => m.hostname.clone(),
            };
            let e = nodes.entry(node).or_insert((r, 0, 0));
            e.1 += 1;
            e.2 = e.2.max(m.cpus.unwrap_or(0));
        }
        let over: Vec<&(usize, u32, u32)> = (nodes.values())
            .filter(|(_, n, cpus)| *cpus > 0 && n > cpus)
            .collect();
        let &&(first, n, cpus) = over.iter().max_by_key(|(_, n, cpus)| (n / cpus, *n))?;
        let which = match nodes.len() {
            1 => String::new(),
            all => format!(
                " ({} of {all} nodes so; the most crowded shown)",
                over.len()
            ),
        };
        Some(format!(
            "the node of rank {first} ran {n} ranks on {cpus} CPU{} (the CPUs their affinity \
             allowed at MPI_Init){which}: they took turns on the cores, which the model does not \
             cost (a CPU for each rank, MODEL.md §14); the measured runtime holds their waits for \
             a core and the prediction does not: run at most one rank a CPU to compare them",
            if cpus == 1 { "" } else { "s" }
        ))
    }

    /// A warning where the ranks ran on cores 2× or more nearer or farther apart than the
    /// parameters were measured on (`calibrated_ns`: their [`Params::cores`](crate::model::Params::cores)): a shared-memory
    /// message costs another price there, which no parameter follows.
    pub fn placement_warning(&self, calibrated_ns: f64) -> Option<String> {
        use super::{Cores, OTHER_CORES};
        let off = |v: f64| v >= OTHER_CORES * calibrated_ns || v * OTHER_CORES <= calibrated_ns;
        let nodes: Vec<(usize, Cores)> = (self.ranks.recorded())
            .filter_map(|(r, m)| Some((r, m.cores?)))
            .collect();
        let away: Vec<&(usize, Cores)> = (nodes.iter())
            .filter(|(_, c)| off(c.init_ns) || off(c.final_ns))
            .collect();
        let (r, c) = **away.iter().max_by(|a, b| {
            let worst = |c: &Cores| {
                (c.init_ns / calibrated_ns)
                    .ln()
                    .abs()
                    .max((c.final_ns / calibrated_ns).ln().abs())
            };
            worst(&a.1).total_cmp(&worst(&b.1))
        })?;
        let farther = c.init_ns.max(c.final_ns) >= OTHER_CORES * calibrated_ns;
        // A round trip of microseconds is no cache line's: the two ranks took turns on a core.
        const TURNS_NS: f64 = 10_000.0;
        let placed = match c.init_ns.max(c.final_ns) >= TURNS_NS {
            true => "the ranks took turns on a core: more ranks than cores?",
            false => "the OS or a hypervisor placed the ranks so",
        };
        let nodes_text = match (away.len(), nodes.len()) {
            (_, 1) => String::new(),
            (a, n) => format!(" ({a} of {n} nodes so; the farthest from it shown)"),
        };
        Some(format!(
            "the ranks ran on cores {} than the parameters were measured on: a cache line between \
             ranks {r} and {}'s cores and back took {:.0} ns at MPI_Init and {:.0} ns at \
             MPI_Finalize, against the parameters' {calibrated_ns:.0} ns{nodes_text}. A message \
             over shared memory costs {} there ({placed}), \
             and the predicted runtime is likely too {}: calibrate while the ranks run where \
             the program's do, or trace the program again",
            if farther {
                "farther apart"
            } else {
                "nearer together"
            },
            c.partner,
            c.init_ns,
            c.final_ns,
            if farther { "more" } else { "less" },
            if farther { "short" } else { "long" },
        ))
    }
}

/// How two ranks of one node share the machine: the same last-level cache, the same socket
/// (another cache domain), or another socket. The tracer times one pair of each present.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PairClass {
    Cache = 0,
    Socket = 1,
    Other = 2,
}

impl PairClass {
    pub const ALL: [PairClass; 3] = [PairClass::Cache, PairClass::Socket, PairClass::Other];

    /// The name the text form and reports use.
    pub fn name(self) -> &'static str {
        match self {
            PairClass::Cache => "cache",
            PairClass::Socket => "socket",
            PairClass::Other => "other",
        }
    }

    pub fn from_name(s: &str) -> Option<PairClass> {
        PairClass::ALL.into_iter().find(|c| c.name() == s)
    }

    pub fn from_code(c: u8) -> Option<PairClass> {
        PairClass::ALL.get(c as usize).copied()
    }

    /// The class of two CPUs' pair, where both their socket and cache domain are known.
    pub fn of(a: Cpu, b: Cpu) -> Option<PairClass> {
        if a.socket < 0 || b.socket < 0 {
            return None;
        }
        Some(match (a.socket == b.socket, a.llc == b.llc && a.llc >= 0) {
            (true, true) => PairClass::Cache,
            (true, false) => PairClass::Socket,
            (false, _) => PairClass::Other,
        })
    }
}

/// A CPU and where it sits; -1 for what the tracer could not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cpu {
    pub cpu: i32,
    pub socket: i32,
    /// The last-level cache's domain: the lowest CPU sharing that cache.
    pub llc: i32,
}

/// One pair of a node's ranks timed by the tracer: a cache line's round trip between their
/// cores at `MPI_Init` and at `MPI_Finalize`, and a message's of a few sizes through MPI (traces
/// before them: none).
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub class: PairClass,
    pub ranks: [u32; 2],
    pub init_ns: f64,
    pub final_ns: f64,
    pub messages: Vec<MessageTrip>,
}

/// A message's round trip between a link's two ranks, timed by the tracer through MPI at
/// `MPI_Init` and at `MPI_Finalize`: one placement of the cores can run messages at speeds 25%
/// apart from one launch to the next, which the cache line does not see.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MessageTrip {
    pub bytes: u32,
    pub init_ns: f64,
    pub final_ns: f64,
}

impl Link {
    /// The figure a pair of this class is costed by: the larger of the two timings (a spell
    /// at another placement may begin within the run; the calibration takes a launch's figure
    /// alike).
    pub fn figure_ns(&self) -> f64 {
        self.init_ns.max(self.final_ns)
    }
}

/// Where one rank ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// The world rank of the lowest rank on its node (`MPI_Comm_split_type` SHARED).
    pub node: u32,
    pub init: Cpu,
    pub fini: Cpu,
    /// The pairs this rank timed (a node's first rank).
    pub links: Vec<Link>,
    /// The messages' round trips to another node's first rank, where this rank timed them
    /// (world rank 0 of a job over two nodes or more).
    pub network: Option<NetworkLink>,
}

/// A message's round trips through MPI between world rank 0 and the first rank of the next node
/// (the lowest world rank of a node other than its own), at a few sizes, timed by the tracer at
/// `MPI_Init` and at `MPI_Finalize`: the network's figure, as a [`Link`]'s messages are a
/// node's.
#[derive(Clone, Debug, PartialEq)]
pub struct NetworkLink {
    pub partner: u32,
    pub messages: Vec<MessageTrip>,
}

impl Placement {
    /// Why this cannot be rank `rank`'s of `nranks`, if it cannot.
    pub fn invalid(&self, rank: u32, nranks: usize) -> Option<String> {
        if self.node as usize >= nranks || self.node > rank {
            return Some(format!(
                "expected the rank's node to be named by a rank at most {rank}, found {}",
                self.node
            ));
        }
        for l in &self.links {
            if l.ranks.iter().any(|&r| r as usize >= nranks) || l.ranks[0] == l.ranks[1] {
                return Some(format!(
                    "expected a link between two ranks below {nranks}, found {} and {}",
                    l.ranks[0], l.ranks[1]
                ));
            }
            let times = (l.messages.iter()).flat_map(|m| [m.init_ns, m.final_ns]);
            if let Some(v) = [l.init_ns, l.final_ns]
                .into_iter()
                .chain(times)
                .find(|v| !(v.is_finite() && *v > 0.0))
            {
                return Some(format!(
                    "expected a link's round trip to be a time > 0 ns, found {v}"
                ));
            }
            if l.messages.iter().any(|m| m.bytes == 0) {
                return Some("expected a link's messages to be of 1 byte or more".into());
            }
        }
        if let Some(n) = &self.network {
            if n.partner as usize >= nranks || n.partner == rank {
                return Some(format!(
                    "expected the network's partner to be another rank below {nranks}, found {}",
                    n.partner
                ));
            }
            let times = (n.messages.iter()).flat_map(|m| [m.init_ns, m.final_ns]);
            if let Some(v) = times.clone().find(|v| !(v.is_finite() && *v > 0.0)) {
                return Some(format!(
                    "expected the network's round trip to be a time > 0 ns, found {v}"
                ));
            }
            if n.messages.is_empty() || n.messages.iter().any(|m| m.bytes == 0) {
                return Some("expected the network's messages to be of 1 byte or more".into());
            }
        }
        // One list of sizes for every link (the chunk holds it once).
        let sizes = |l: &Link| l.messages.iter().map(|m| m.bytes).collect::<Vec<_>>();
        if let Some(first) = self.links.first()
            && self.links.iter().any(|l| sizes(l) != sizes(first))
        {
            return Some(
                "expected every link of a rank to have its messages timed at the same sizes".into(),
            );
        }
        None
    }
}

type Res<'a, T> = IResult<&'a [u8], T>;

fn cpu(input: &[u8]) -> Res<'_, Cpu> {
    let (input, cpu) = le_i32(input)?;
    let (input, socket) = le_i32(input)?;
    let (input, llc) = le_i32(input)?;
    Ok((input, Cpu { cpu, socket, llc }))
}

fn link(input: &[u8]) -> Res<'_, Link> {
    let (input, code) = le_u8(input)?;
    let Some(class) = PairClass::from_code(code) else {
        return Err(nom::Err::Failure(nom::error::Error::new(
            input,
            nom::error::ErrorKind::Verify,
        )));
    };
    let (input, a) = le_u32(input)?;
    let (input, b) = le_u32(input)?;
    let (input, init_ns) = le_f64(input)?;
    let (input, final_ns) = le_f64(input)?;
    Ok((
        input,
        Link {
            class,
            ranks: [a, b],
            init_ns,
            final_ns,
            messages: Vec::new(),
        },
    ))
}

/// The messages' part after the links, where there is one: the sizes, then each link's round
/// trips at each size.
fn messages<'a>(input: &'a [u8], links: &mut [Link]) -> Res<'a, ()> {
    let (mut input, m) = le_u8(input)?;
    let (rest, sizes) = nom::multi::count(le_u32, m as usize)(input)?;
    input = rest;
    for l in links.iter_mut() {
        (input, l.messages) = trips(input, &sizes)?;
    }
    Ok((input, ()))
}

/// A round trip at `MPI_Init` and one at `MPI_Finalize` (two f64) for each of `sizes`.
fn trips<'a>(mut input: &'a [u8], sizes: &[u32]) -> Res<'a, Vec<MessageTrip>> {
    let mut out = Vec::with_capacity(sizes.len());
    for &bytes in sizes {
        let (rest, init_ns) = le_f64(input)?;
        let (rest, final_ns) = le_f64(rest)?;
        input = rest;
        out.push(MessageTrip {
            bytes,
            init_ns,
            final_ns,
        });
    }
    Ok((input, out))
}

/// The network's part, last: the partner, the sizes, the round trips at each.
fn network(input: &[u8]) -> Res<'_, NetworkLink> {
    let (input, partner) = le_u32(input)?;
    let (input, m) = le_u8(input)?;
    let (input, sizes) = nom::multi::count(le_u32, m as usize)(input)?;
    let (input, messages) = trips(input, &sizes)?;
    Ok((input, NetworkLink { partner, messages }))
}

/// A `P` chunk's payload, whole, or why not.
pub fn parse_chunk(payload: &[u8], rank: u32, nranks: usize) -> Result<Placement, String> {
    let read = |input| -> Res<'_, Placement> {
        let (input, node) = le_u32(input)?;
        let (input, init) = cpu(input)?;
        let (input, fini) = cpu(input)?;
        let (input, n) = le_u8(input)?;
        let (mut input, mut links) = nom::multi::count(link, n as usize)(input)?;
        if !input.is_empty() && n > 0 {
            (input, ()) = messages(input, &mut links)?;
        }
        let mut net = None;
        if !input.is_empty() {
            let (rest, n) = network(input)?;
            (input, net) = (rest, Some(n));
        }
        Ok((
            input,
            Placement {
                node,
                init,
                fini,
                links,
                network: net,
            },
        ))
    };
    let (rest, p) = read(payload).map_err(|_| {
        "expected a P chunk: u32 node, 6 × i32 CPU/socket/cache, u8 links, each u8 class \
         (0–2), 2 × u32 ranks, 2 × f64 ns; then, optionally, u8 message sizes, each u32 bytes, \
         and each link's 2 × f64 ns at each size; then, optionally, u32 network partner, u8 \
         sizes, each u32 bytes, 2 × f64 ns at each"
            .to_string()
    })?;
    if !rest.is_empty() {
        return Err(format!(
            "expected the P chunk to end after its {} link(s), found {} more bytes",
            p.links.len(),
            rest.len()
        ));
    }
    match p.invalid(rank, nranks) {
        Some(why) => Err(why),
        None => Ok(p),
    }
}

/// A `P` chunk's payload.
pub fn chunk(p: &Placement) -> Vec<u8> {
    let mut out = Vec::with_capacity(30 + 25 * p.links.len());
    out.extend_from_slice(&p.node.to_le_bytes());
    for c in [p.init, p.fini] {
        for v in [c.cpu, c.socket, c.llc] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out.push(p.links.len().min(255) as u8);
    for l in p.links.iter().take(255) {
        out.push(l.class as u8);
        for r in l.ranks {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&l.init_ns.to_le_bytes());
        out.extend_from_slice(&l.final_ns.to_le_bytes());
    }
    // The messages' sizes are every link's (a placement that loaded is valid), the first's;
    // none (0) where only the network's part follows.
    let put_trips = |out: &mut Vec<u8>, trips: &[MessageTrip]| {
        for m in trips.iter().take(255) {
            out.extend_from_slice(&m.init_ns.to_le_bytes());
            out.extend_from_slice(&m.final_ns.to_le_bytes());
        }
    };
    let put_sizes = |out: &mut Vec<u8>, trips: &[MessageTrip]| {
        out.push(trips.len().min(255) as u8);
        for m in trips.iter().take(255) {
            out.extend_from_slice(&m.bytes.to_le_bytes());
        }
    };
    let links = &p.links[..p.links.len().min(255)];
    if let Some(first) = links.first()
        && (!first.messages.is_empty() || p.network.is_some())
    {
        put_sizes(&mut out, &first.messages);
        for l in links {
            put_trips(&mut out, &l.messages);
        }
    }
    if let Some(n) = &p.network {
        out.extend_from_slice(&n.partner.to_le_bytes());
        put_sizes(&mut out, &n.messages);
        put_trips(&mut out, &n.messages);
    }
    out
}

/// The text form's line for rank `rank` (without its newline).
pub fn line(rank: usize, p: &Placement) -> String {
    let mut s = format!(
        "place {rank} node {} cpu {} {} socket {} {} llc {} {}",
        p.node, p.init.cpu, p.fini.cpu, p.init.socket, p.fini.socket, p.init.llc, p.fini.llc
    );
    for l in &p.links {
        s += &format!(
            " link {} {} {} {} {}",
            l.class.name(),
            l.ranks[0],
            l.ranks[1],
            l.init_ns,
            l.final_ns
        );
        for m in &l.messages {
            s += &format!(" message {} {} {}", m.bytes, m.init_ns, m.final_ns);
        }
    }
    if let Some(n) = &p.network {
        s += &format!(" network {}", n.partner);
        for m in &n.messages {
            s += &format!(" message {} {} {}", m.bytes, m.init_ns, m.final_ns);
        }
    }
    s
}

/// Parses a `place` line's fields after `place` (see [`line()`]): the rank and its placement.
pub fn parse_line(text: &str) -> Result<(usize, Placement), String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let expect = "expected `place R node N cpu A B socket A B llc A B` then any number of \
                  `link CLASS A B INIT_NS FINAL_NS`, then optionally `network PARTNER`, each \
                  link and the network followed by any number of `message BYTES INIT_NS \
                  FINAL_NS`";
    let int = |i: usize| -> Result<i64, String> {
        let w = words.get(i).ok_or_else(|| expect.to_string())?;
        w.parse()
            .map_err(|_| format!("{expect}: `{w}` is not an integer"))
    };
    let key = |i: usize, k: &str| match words.get(i) {
        Some(w) if *w == k => Ok(()),
        _ => Err(format!("{expect}: `{k}` missing")),
    };
    let small = |v: i64| i32::try_from(v).map_err(|_| format!("{expect}: {v} out of range"));
    let unsigned = |v: i64| u32::try_from(v).map_err(|_| format!("{expect}: {v} out of range"));
    let rank = unsigned(int(0)?)? as usize;
    key(1, "node")?;
    let node = unsigned(int(2)?)?;
    key(3, "cpu")?;
    key(6, "socket")?;
    key(9, "llc")?;
    let at = |j: usize| -> Result<Cpu, String> {
        Ok(Cpu {
            cpu: small(int(4 + j)?)?,
            socket: small(int(7 + j)?)?,
            llc: small(int(10 + j)?)?,
        })
    };
    let (init, fini) = (at(0)?, at(1)?);
    let num = |j: usize| -> Result<f64, String> {
        let w = words.get(j).ok_or_else(|| expect.to_string())?;
        w.parse()
            .map_err(|_| format!("{expect}: `{w}` is not a number"))
    };
    let mut links: Vec<Link> = Vec::new();
    let mut network: Option<NetworkLink> = None;
    let mut i = 12;
    while i < words.len() {
        if words[i] == "message" {
            let trip = MessageTrip {
                bytes: unsigned(int(i + 1)?)?,
                init_ns: num(i + 2)?,
                final_ns: num(i + 3)?,
            };
            match (&mut network, links.last_mut()) {
                (Some(n), _) => n.messages.push(trip),
                (None, Some(l)) => l.messages.push(trip),
                (None, None) => return Err(format!("{expect}: a message before a link")),
            }
            i += 4;
            continue;
        }
        if words[i] == "network" && network.is_none() {
            network = Some(NetworkLink {
                partner: unsigned(int(i + 1)?)?,
                messages: Vec::new(),
            });
            i += 2;
            continue;
        }
        if network.is_some() {
            return Err(format!("{expect}: `{}` after the network", words[i]));
        }
        key(i, "link")?;
        let class = words
            .get(i + 1)
            .and_then(|w| PairClass::from_name(w))
            .ok_or_else(|| format!("{expect}: CLASS is one of cache, socket, other"))?;
        links.push(Link {
            class,
            ranks: [unsigned(int(i + 2)?)?, unsigned(int(i + 3)?)?],
            init_ns: num(i + 4)?,
            final_ns: num(i + 5)?,
            messages: Vec::new(),
        });
        i += 6;
    }
    Ok((
        rank,
        Placement {
            node,
            init,
            fini,
            links,
            network,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Placement {
        Placement {
            node: 0,
            init: Cpu {
                cpu: 3,
                socket: 0,
                llc: 0,
            },
            fini: Cpu {
                cpu: 5,
                socket: 1,
                llc: 4,
            },
            links: vec![
                Link {
                    class: PairClass::Cache,
                    ranks: [0, 1],
                    init_ns: 92.5,
                    final_ns: 88.0,
                    messages: Vec::new(),
                },
                Link {
                    class: PairClass::Other,
                    ranks: [0, 2],
                    init_ns: 310.25,
                    final_ns: 333.0,
                    messages: Vec::new(),
                },
            ],
            network: None,
        }
    }

    /// [`sample`] with two sizes of messages timed over each link.
    fn with_messages() -> Placement {
        let mut p = sample();
        for (l, ns) in p
            .links
            .iter_mut()
            .zip([[440.5, 451.0, 820.0, 800.25], [900.0, 880.0, 1.5e3, 1.6e3]])
        {
            l.messages = vec![
                MessageTrip {
                    bytes: 64,
                    init_ns: ns[0],
                    final_ns: ns[1],
                },
                MessageTrip {
                    bytes: 1024,
                    init_ns: ns[2],
                    final_ns: ns[3],
                },
            ];
        }
        p
    }

    #[test]
    fn placement_travels_through_both_encodings_exactly() {
        let p = sample();
        assert_eq!(parse_chunk(&chunk(&p), 1, 4).unwrap(), p);
        let text = line(1, &p);
        assert_eq!(
            text,
            "place 1 node 0 cpu 3 5 socket 0 1 llc 0 4 link cache 0 1 92.5 88 \
             link other 0 2 310.25 333"
        );
        let (r, q) = parse_line(text.strip_prefix("place ").unwrap()).unwrap();
        assert_eq!((r, q), (1, p));
        // The messages' part: one byte of sizes (2), two u32 sizes, two links × two sizes ×
        // two f64; the text gives each link's after it.
        let m = with_messages();
        let b = chunk(&m);
        assert_eq!(b.len(), chunk(&sample()).len() + 1 + 2 * 4 + 2 * 2 * 16);
        assert_eq!(parse_chunk(&b, 1, 4).unwrap(), m);
        let text = line(1, &m);
        assert_eq!(
            text,
            "place 1 node 0 cpu 3 5 socket 0 1 llc 0 4 link cache 0 1 92.5 88 \
             message 64 440.5 451 message 1024 820 800.25 link other 0 2 310.25 333 \
             message 64 900 880 message 1024 1500 1600"
        );
        let (r, q) = parse_line(text.strip_prefix("place ").unwrap()).unwrap();
        assert_eq!((r, q), (1, m));
        // The network's part, last: after the links' messages, after links without messages
        // (their part then says 0 sizes), and on a rank that timed no link.
        let net = Some(NetworkLink {
            partner: 2,
            messages: vec![MessageTrip {
                bytes: 64,
                init_ns: 25_000.5,
                final_ns: 31_000.0,
            }],
        });
        for links in [with_messages().links, sample().links, Vec::new()] {
            let m = Placement {
                links,
                network: net.clone(),
                ..sample()
            };
            assert_eq!(parse_chunk(&chunk(&m), 0, 4).unwrap(), m);
            let text = line(0, &m);
            assert!(
                text.ends_with(" network 2 message 64 25000.5 31000"),
                "{text}"
            );
            let (r, q) = parse_line(text.strip_prefix("place ").unwrap()).unwrap();
            assert_eq!((r, q), (0, m));
        }
        let b = chunk(&Placement {
            network: net.clone(),
            ..sample()
        });
        assert_eq!(b.len(), chunk(&sample()).len() + 1 + 4 + 1 + 4 + 16);
    }

    #[test]
    fn bad_placements_are_refused_saying_why() {
        let mut p = sample();
        // a node named by a rank above this one, a link to itself, a figure of 0, a rank beyond
        p.node = 3;
        assert!(parse_chunk(&chunk(&p), 1, 4).unwrap_err().contains("node"));
        let mut p = sample();
        p.links[0].ranks = [2, 2];
        assert!(
            parse_chunk(&chunk(&p), 1, 4)
                .unwrap_err()
                .contains("two ranks")
        );
        let mut p = sample();
        p.links[1].final_ns = 0.0;
        assert!(parse_chunk(&chunk(&p), 1, 4).unwrap_err().contains("> 0"));
        assert!(parse_chunk(&chunk(&sample()), 1, 2).is_err());
        // a class code beyond 2, a chunk cut short, bytes left over
        let mut b = chunk(&sample());
        b[29] = 7;
        assert!(parse_chunk(&b, 1, 4).is_err());
        let b = chunk(&sample());
        assert!(parse_chunk(&b[..b.len() - 1], 1, 4).is_err());
        // (a byte 0 after the links says no message sizes: the tracer's where some failed)
        let mut b = chunk(&sample());
        b.push(0);
        assert_eq!(parse_chunk(&b, 1, 4).unwrap(), sample());
        b.push(0);
        assert!(parse_chunk(&b, 1, 4).is_err(), "a network's part cut short");
        let mut b = chunk(&Placement {
            network: Some(NetworkLink {
                partner: 2,
                messages: Vec::new(),
            }),
            ..sample()
        });
        b.push(0);
        assert!(parse_chunk(&b, 1, 4).unwrap_err().contains("1 more bytes"));
        // messages: a time of 0, sizes that differ between links, a size of 0, cut short, one
        // before any link
        let mut m = with_messages();
        m.links[1].messages[0].final_ns = 0.0;
        assert!(m.invalid(1, 4).unwrap().contains("> 0"));
        let mut m = with_messages();
        m.links[1].messages[1].bytes = 2048;
        assert!(m.invalid(1, 4).unwrap().contains("same sizes"));
        let mut m = with_messages();
        (m.links[0].messages[0].bytes, m.links[1].messages[0].bytes) = (0, 0);
        assert!(m.invalid(1, 4).unwrap().contains("1 byte"));
        let b = chunk(&with_messages());
        assert!(parse_chunk(&b[..b.len() - 8], 1, 4).is_err());
        assert!(parse_line("1 node 0 cpu 3 5 socket 0 1 llc 0 4 message 64 1 1").is_err());
        // the network's: its partner the rank itself, a time of 0, a link after it
        let net = |partner, ns| Placement {
            network: Some(NetworkLink {
                partner,
                messages: vec![MessageTrip {
                    bytes: 64,
                    init_ns: ns,
                    final_ns: ns,
                }],
            }),
            ..sample()
        };
        assert!(net(1, 5.0).invalid(1, 4).unwrap().contains("partner"));
        assert!(net(2, 0.0).invalid(1, 4).unwrap().contains("> 0"));
        assert_eq!(net(2, 5.0).invalid(1, 4), None);
        assert!(
            parse_line("1 node 0 cpu 3 5 socket 0 1 llc 0 4 network 2 link cache 0 1 1 1")
                .unwrap_err()
                .contains("after the network")
        );
        assert!(parse_line("1 node 0 cpu 3 5 socket 0 1 llc 0").is_err());
        assert!(parse_line("1 node 0 cpu 3 5 socket 0 1 llc 0 4 link far 0 1 1 1").is_err());
    }

    #[test]
    fn pairs_are_classed_by_socket_and_cache_domain() {
        let c = |socket, llc| Cpu {
            cpu: 0,
            socket,
            llc,
        };
        assert_eq!(PairClass::of(c(0, 0), c(0, 0)), Some(PairClass::Cache));
        assert_eq!(PairClass::of(c(0, 0), c(0, 8)), Some(PairClass::Socket));
        assert_eq!(PairClass::of(c(0, 0), c(1, 0)), Some(PairClass::Other));
        assert_eq!(PairClass::of(c(0, -1), c(0, -1)), Some(PairClass::Socket));
        assert_eq!(PairClass::of(c(-1, 0), c(0, 0)), None);
    }
}
