//! Which parameter set costs a message between two ranks (the model's §12): between nodes the
//! network's set, on one node the node set whose `cores` figure lies nearest the pair's own
//! (a cache line's round trip between their cores, as the tracer timed it for the pair's
//! class: same cache, same socket, other socket). Placement what-ifs re-assign ranks to nodes
//! first (`--ranks-per-node`, `--map`).

use crate::error::Error;
use crate::graph::split::Exchange;
use crate::model::{Class, Params};
use crate::trace::placement::{Cpu, MessageTrip, PairClass};
use crate::trace::{OTHER_CORES, Shape, Trace};
use rayon::prelude::*;

/// The sets of one run and the set of each pair of ranks.
#[derive(Clone, Debug)]
pub struct Links {
    pub sets: Vec<Params>,
    /// Per rank, its node (an index into `table`).
    node: Vec<u32>,
    /// Per rank, where it ran at `MPI_Init` (the pair's class inside a node).
    cpu: Vec<Option<Cpu>>,
    /// Per rank, its node in the trace (a pair placed on one node by a what-if that did not
    /// run on one has no measured class).
    traced_node: Vec<u32>,
    /// Per node, the set of a pair of each [`PairClass`], then of a pair whose class is not
    /// known.
    table: Vec<[u8; 4]>,
    network: u8,
    /// Who sends to whom, and how much: the pairs in the warnings, the shares in the report.
    traffic: Traffic,
    /// What choosing the sets found that the user should know.
    pub warnings: Vec<String>,
}

/// The point-to-point traffic of a trace: `(sender, receiver, bytes)` summed over each pair's
/// messages, sorted, messages a rank sends itself left out. Of the whole trace, also in one
/// process of a split replay ([`Traffic::gather`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Traffic(Vec<(u32, u32, u64)>);

impl Traffic {
    /// The traffic of the ranks `trace` holds events of.
    pub fn of(trace: &Trace) -> Traffic {
        let mut all: Vec<(u32, u32, u64)> = (0..trace.nranks())
            .into_par_iter()
            .flat_map_iter(|r| {
                let mut by: Vec<(u32, u64)> = sends(trace, r).map(|(q, b)| (q as u32, b)).collect();
                by.sort_unstable_by_key(|x| x.0);
                by.chunk_by(|a, b| a.0 == b.0)
                    .map(|c| (r as u32, c[0].0, c.iter().map(|x| x.1).sum()))
                    .collect::<Vec<_>>()
            })
            .collect();
        all.par_sort_unstable();
        Traffic(all)
    }

    /// The whole trace's traffic in a split replay: this process's ranks' ([`Traffic::of`] of
    /// its part) sent to every process. Every process calls it alike and gets the same.
    pub fn gather(trace: &Trace, ex: &dyn Exchange) -> Result<Traffic, Error> {
        let own = Traffic::of(trace);
        let words: Vec<u64> = (own.0.iter())
            .flat_map(|&(a, b, k)| [a as u64 | (b as u64) << 32, k])
            .collect();
        let got = ex.all_to_all(vec![words; ex.processes()])?;
        let mut all = Vec::with_capacity(got.iter().map(|v| v.len() / 2).sum());
        for v in &got {
            if v.len() % 2 != 0 {
                return Err(Error::Io(format!(
                    "a process sent its traffic in {} words, not pairs of words",
                    v.len()
                )));
            }
            all.extend(
                v.chunks_exact(2)
                    .map(|w| (w[0] as u32, (w[0] >> 32) as u32, w[1])),
            );
        }
        all.sort_unstable();
        Ok(Traffic(all))
    }
}

/// How ranks are re-placed on nodes for a what-if.
#[derive(Clone, Debug, PartialEq)]
pub enum Remap {
    /// As traced.
    Traced,
    /// `K` ranks a node, in rank order (block placement).
    PerNode(u32),
    /// Each rank's node, as listed.
    Listed(Vec<u32>),
}

/// Each rank's node as traced: from the tracer's placement (MPI's view), else from the
/// hostnames (traces before it), else one node.
pub fn traced_nodes(trace: &Trace) -> Vec<u32> {
    let p = trace.nranks();
    let metas = &trace.meta.ranks;
    if (0..p).all(|r| metas.get(r).placement.is_some()) {
        return (0..p)
            .map(|r| metas.get(r).placement.as_ref().map_or(0, |x| x.node))
            .collect();
    }
    let mut hosts: Vec<&str> = Vec::new();
    (0..p)
        .map(|r| {
            let h = metas.get(r).hostname.as_str();
            match hosts.iter().position(|x| *x == h) {
                Some(i) => i as u32,
                None => {
                    hosts.push(h);
                    hosts.len() as u32 - 1
                }
            }
        })
        .collect()
}

/// The figure a pair of class `class` on the node whose ranks are `members` is costed by:
/// the tracer's link of that class there, else (a class not timed, or a trace before link
/// classes) the node's first two ranks' figure.
fn node_figure(trace: &Trace, members: &[usize], class: Option<PairClass>) -> Option<f64> {
    let metas = &trace.meta.ranks;
    let links = (members.iter())
        .filter_map(|&r| metas.get(r).placement.as_ref())
        .flat_map(|p| &p.links);
    let by_class = links
        .filter(|l| Some(l.class) == class)
        .map(|l| l.figure_ns())
        .reduce(f64::max);
    by_class.or_else(|| {
        (members.iter())
            .filter_map(|&r| metas.get(r).cores)
            .map(|c| c.init_ns.max(c.final_ns))
            .reduce(f64::max)
    })
}

/// The node set nearest a pair's figure `ns` (by ratio), among `nodes` (indices into `sets`);
/// the first where the figure or the sets' are not known.
fn nearest(sets: &[Params], nodes: &[usize], ns: Option<f64>) -> usize {
    let Some(ns) = ns else {
        return nodes[0];
    };
    nodes
        [crate::model::nearest_cores(ns, nodes.iter().map(|&i| sets[i].cores)).expect("a node set")]
}

/// Each rank's node as `remap` places it, `traced` the nodes as traced.
fn placed(remap: &Remap, traced: &[u32]) -> Result<Vec<u32>, String> {
    let p = traced.len();
    match remap {
        Remap::Traced => Ok(traced.to_vec()),
        Remap::PerNode(0) => Err("--ranks-per-node: expected 1 or more".into()),
        Remap::PerNode(k) => Ok((0..p as u32).map(|r| r / k).collect()),
        Remap::Listed(list) if list.len() != p => Err(format!(
            "--map: expected a node for each of the trace's {p} ranks, found {}",
            list.len()
        )),
        Remap::Listed(list) => Ok(list.clone()),
    }
}

/// Nodes numbered from 0 in order of first appearance.
fn numbered(node: Vec<u32>) -> Vec<u32> {
    let mut ids: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    (node.into_iter())
        .map(|n| {
            let next = ids.len() as u32;
            *ids.entry(n).or_insert(next)
        })
        .collect()
}

/// A node whose ranks' figure for a class lies 2× or more from the nearest set's: a rank of
/// the node, the class, its figure, the set's.
type Far = (usize, Option<PairClass>, f64, f64);

/// A node whose ranks' cores moved between placements within the run: a rank of the node, the
/// figures at `MPI_Init` and `MPI_Finalize`, the node set (an index into the sets) one of them
/// is nearest and not used, and the one used (the larger figure's, as
/// [`crate::trace::placement::Link::figure_ns`] takes it).
type Moved = (usize, f64, f64, usize, usize);

/// The first of `members`' cache-line timings (of class `class`, else the node's first two
/// ranks') whose figures at `MPI_Init` and `MPI_Finalize` lie 2× apart or more and are each
/// nearest another node set: the ranks moved to another placement within the run.
fn moved(
    trace: &Trace,
    members: &[usize],
    class: Option<PairClass>,
    sets: &[Params],
    node_sets: &[usize],
) -> Option<Moved> {
    let metas = &trace.meta.ranks;
    let links = (members.iter())
        .filter_map(|&r| metas.get(r).placement.as_ref())
        .flat_map(|p| &p.links)
        .filter(|l| Some(l.class) == class)
        .map(|l| (l.init_ns, l.final_ns));
    let cores = (members.iter())
        .filter_map(|&r| metas.get(r).cores)
        .map(|c| (c.init_ns, c.final_ns));
    let pairs: Vec<(f64, f64)> = links.collect();
    let pairs = if pairs.is_empty() && class.is_none() {
        cores.collect()
    } else {
        pairs
    };
    pairs.into_iter().find_map(|(a, b)| {
        let (sa, sb) = (
            nearest(sets, node_sets, Some(a)),
            nearest(sets, node_sets, Some(b)),
        );
        let used = nearest(sets, node_sets, Some(a.max(b)));
        let other = if used == sa { sb } else { sa };
        (a.max(b) >= OTHER_CORES * a.min(b) && sa != sb).then_some((members[0], a, b, other, used))
    })
}

/// The warning of the nodes whose ranks moved between placements within the run.
fn moved_warning(sets: &[Params], mut moved: Vec<Moved>) -> Option<String> {
    moved.dedup_by(|a, b| a.0 == b.0);
    let &(r, a, b, other, used) = moved.first()?;
    let cores = |i: usize| sets[i].cores.map_or("?".into(), |c| format!("{c:.0}"));
    Some(format!(
        "the ranks of {} node(s) moved to other cores within the run (rank {r}'s node: a cache \
         line between its ranks' cores took {a:.0} ns at MPI_Init and {b:.0} ns at \
         MPI_Finalize): their messages are costed with the set of {} ns, the larger figure's; \
         where the run spent most of its time at the other placement, the set of {} ns is its \
         own, and the prediction is as far off as the two sets differ",
        moved.len(),
        cores(used),
        cores(other),
    ))
}

/// Per node of `node` (numbered from 0), the set of a pair of each [`PairClass`], then of a
/// pair whose class is not known: the node set (`node_sets`, indices into `sets`) nearest the
/// figure the tracer measured for the class on the node's ranks as traced. Also the nodes whose
/// figure is far from every set's.
fn node_table(
    trace: &Trace,
    sets: &[Params],
    node_sets: &[usize],
    node: &[u32],
    traced_node: &[u32],
) -> (Vec<[u8; 4]>, Vec<Far>, Vec<Moved>) {
    let nodes = node.iter().max().map_or(0, |&n| n as usize + 1);
    let mut table = Vec::with_capacity(nodes);
    let (mut far, mut moves) = (Vec::new(), Vec::new());
    for n in 0..nodes as u32 {
        // The figures of the node's ranks as traced: the traced node of its first rank.
        let first = node.iter().position(|&x| x == n).expect("a rank");
        let members: Vec<usize> = (0..node.len())
            .filter(|&r| traced_node[r] == traced_node[first])
            .collect();
        let mut row = [0u8; 4];
        let classes = PairClass::ALL.map(Some);
        for (j, c) in classes.into_iter().chain([None]).enumerate() {
            let figure = node_figure(trace, &members, c);
            row[j] = nearest(sets, node_sets, figure) as u8;
            moves.extend(moved(trace, &members, c, sets, node_sets));
            if let (Some(f), Some(cores)) = (figure, sets[row[j] as usize].cores)
                && (f >= OTHER_CORES * cores || f * OTHER_CORES <= cores)
            {
                far.push((first, c, f, cores));
            }
        }
        table.push(row);
    }
    (table, far, moves)
}

/// The warning of the nodes whose ranks ran farther apart or nearer together than any node
/// set was measured on.
fn far_warning(mut far: Vec<Far>) -> Option<String> {
    far.dedup_by(|a, b| a.0 == b.0);
    let &(r, c, f, cores) = far.first()?;
    // A round trip of microseconds is no cache line's: the ranks took turns on a core.
    const TURNS_NS: f64 = 10_000.0;
    Some(format!(
        "the ranks of {} node(s) ran on cores {} than any node set was measured on \
         (rank {r}'s node: a cache line between {} cores took {f:.0} ns, the nearest \
         set's {cores:.0} ns{}): their messages are likely {} than predicted",
        far.len(),
        match f > cores {
            true => "farther apart",
            false => "nearer together",
        },
        c.map_or("its first two ranks'".to_string(), |c| format!(
            "a {} pair's",
            c.name()
        )),
        match f >= TURNS_NS {
            true => "; the ranks took turns on a core: more ranks than cores?",
            false => "",
        },
        if f > cores { "slower" } else { "faster" },
    ))
}

/// How far apart a run's message round trips and its set's may lie, as a ratio's excess
/// (either way), before a prediction says so: beyond what a fit misses (5%) and one launch's
/// timing jitter, within the 25% that separates one placement's speeds here.
pub const SPEED_WARNING: f64 = 0.15;

/// How a pair's messages ran against the set that costs them: the tracer's round trips through
/// MPI at `MPI_Init` and `MPI_Finalize` over a pair of a node (`between` "node", `rank` the
/// node's first rank, `class` the pair's) or from world rank 0 to the next node (`between`
/// "network", `rank` that node's first rank, no class), and their ratio to the set's modeled
/// round trips ([`judged`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MessageSpeed {
    pub between: &'static str,
    pub rank: u32,
    pub class: Option<&'static str>,
    pub ratio: f64,
    /// Each size's figures in words, for the warning.
    #[serde(skip)]
    pub shown: String,
    /// The ratio at each moment (`MPI_Init`, `MPI_Finalize`) judged, with the index of the set
    /// it was judged against ([`speed_factors`]).
    #[serde(skip)]
    pub moments: Moments,
}

/// A pair's ratio at `MPI_Init` and at `MPI_Finalize`, each with the index of the set it was
/// judged against (None: that moment not judged).
pub type Moments = [Option<(usize, f64)>; 2];

/// Every pair's [`MessageSpeed`] that the trace timed and a set judges: each node's pairs
/// (against the node set nearest the pair's cores at each moment; a moment whose cores lie 2×
/// from that set's is left out, to the placement's own warning), then between nodes (against
/// the network set, else the first node set). `sets` are the run's as measured: a what-if's
/// changed set is meant to differ.
pub fn message_speeds(trace: &Trace, sets: &[Params]) -> Vec<MessageSpeed> {
    let node_sets: Vec<usize> = (0..sets.len())
        .filter(|&i| sets[i].class != Some(Class::Network))
        .collect();
    let network = (0..sets.len())
        .find(|&i| sets[i].class == Some(Class::Network))
        .unwrap_or(0);
    let mut out = Vec::new();
    let set = |cores: f64| {
        let i = nearest(sets, &node_sets, Some(cores));
        let apart = |c: f64| cores >= OTHER_CORES * c || cores * OTHER_CORES <= c;
        (!sets[i].cores.is_some_and(apart)).then_some(i)
    };
    let places = (0..trace.nranks()).filter(|_| !node_sets.is_empty());
    for r in places {
        let Some(place) = trace.meta.ranks.get(r).placement.as_ref() else {
            continue;
        };
        for l in place.links.iter().filter(|l| !l.messages.is_empty()) {
            if let Some((ratio, shown, moments)) =
                judged(&l.messages, sets, [set(l.init_ns), set(l.final_ns)])
            {
                out.push(MessageSpeed {
                    between: "node",
                    rank: r as u32,
                    class: Some(l.class.name()),
                    ratio,
                    shown,
                    moments,
                });
            }
        }
    }
    let net = trace.meta.ranks.get(0).placement.as_ref();
    if let Some(n) = net.and_then(|p| p.network.as_ref())
        && let Some((ratio, shown, moments)) = judged(&n.messages, sets, [Some(network); 2])
    {
        out.push(MessageSpeed {
            between: "network",
            rank: n.partner,
            class: None,
            ratio,
            shown,
            moments,
        });
    }
    out
}

/// What `--at-run-speed` multiplies each of `n` sets by (the model's §12, "A run's messages at
/// another speed"): the geometric mean of the ratios of the moments judged against it, none
/// where none was.
pub fn speed_factors(speeds: &[MessageSpeed], n: usize) -> Vec<Option<f64>> {
    let mut logs = vec![Vec::new(); n];
    for (i, r) in speeds.iter().flat_map(|x| x.moments.iter().flatten()) {
        if let Some(l) = logs.get_mut(*i) {
            l.push(r.ln());
        }
    }
    (logs.iter())
        .map(|l| (!l.is_empty()).then(|| (l.iter().sum::<f64>() / l.len() as f64).exp()))
        .collect()
}

/// The warnings of [`message_speeds`] [`SPEED_WARNING`] or more off: on some node (the worst
/// pair of the node furthest off, with how many nodes are) and between nodes. On one placement
/// of the cores (one cache line's figure) this project's 2-vCPU machine runs a launch's
/// messages at speeds 25% apart, and a calibration stands at one of them; over TCP its loopback
/// varies up to 3× from launch to launch.
pub fn speed_warnings(speeds: &[MessageSpeed]) -> Vec<String> {
    let far = |x: &MessageSpeed| x.ratio.ln().abs();
    let off = |x: &&MessageSpeed| far(x) >= (1.0 + SPEED_WARNING).ln();
    let nodes = (speeds.iter()).filter(|x| x.between == "node");
    let mut timed: Vec<u32> = nodes.clone().map(|x| x.rank).collect();
    timed.dedup();
    let mut away: Vec<u32> = nodes.clone().filter(off).map(|x| x.rank).collect();
    away.dedup();
    let worst = nodes.filter(off).max_by(|a, b| far(a).total_cmp(&far(b)));
    let word = |x: &MessageSpeed| {
        let slower = x.ratio > 1.0;
        (
            if slower { x.ratio } else { 1.0 / x.ratio },
            if slower { "slower" } else { "faster" },
            if slower { "short" } else { "long" },
        )
    };
    let node = worst.map(|x| {
        let (ratio, way, off) = word(x);
        format!(
            "the messages of {} of {} node(s) ran {ratio:.2}× {way} than their parameters model \
             them (rank {}'s node, its {} pair: round trips through MPI at MPI_Init/MPI_Finalize \
             of {}): one placement of the cores runs messages at other speeds from one launch \
             to another (the machine's other load, a hypervisor), and the set was measured at \
             another; the communication is likely predicted too {off}: calibrate in the \
             conditions the program runs in (`predict --at-run-speed` predicts at the run's \
             speed)",
            away.len(),
            timed.len(),
            x.rank,
            x.class.unwrap_or("?"),
            x.shown,
        )
    });
    let between = (speeds.iter()).find(|x| x.between == "network").filter(off);
    let between = between.map(|x| {
        let (ratio, way, off) = word(x);
        format!(
            "the messages between nodes ran {ratio:.2}× {way} than their parameters model them \
             (ranks 0 and {}: round trips through MPI at MPI_Init/MPI_Finalize of {}): the \
             network ran at another speed than when the set was measured (its other load, \
             another route); the communication between nodes is likely predicted too {off}: \
             calibrate in the conditions the program runs in (`predict --at-run-speed` \
             predicts at the run's speed)",
            x.rank, x.shown,
        )
    });
    node.into_iter().chain(between).collect()
}

/// A pair's round trips against what the set of each moment (`MPI_Init`, `MPI_Finalize`; the
/// index in `all`, None: that moment left out) models for their sizes (§6): the run's ratio,
/// the geometric mean of the moments' (each the median of its sizes' ratios; of two in the
/// middle, their geometric mean), the sizes' figures in words, and each moment's ratio with its
/// set. None where no moment has a set (or its set models
/// no time for them: a set of zeros).
fn judged(
    trips: &[MessageTrip],
    all: &[Params],
    at: [Option<usize>; 2],
) -> Option<(f64, String, Moments)> {
    let sets = at.map(|i| i.map(|i| &all[i]));
    let model = |set: Option<&Params>, k: u32| set.map(|p| p.round_trip(k as u64, 0.0));
    let mut logs = Vec::new();
    let mut moments: Moments = [None; 2];
    for (j, set) in sets.iter().enumerate() {
        let Some(set) = set else { continue };
        let mut ratios: Vec<f64> = (trips.iter())
            .map(|m| {
                (
                    [m.init_ns, m.final_ns][j],
                    set.round_trip(m.bytes as u64, 0.0),
                )
            })
            .filter(|&(_, t)| t > 0.0)
            .map(|(ns, t)| ns / t)
            .collect();
        ratios.sort_by(f64::total_cmp);
        let n = ratios.len();
        if n > 0 {
            let ratio = (ratios[(n - 1) / 2] * ratios[n / 2]).sqrt();
            logs.push(ratio.ln());
            moments[j] = at[j].map(|i| (i, ratio));
        }
    }
    if logs.is_empty() {
        return None;
    }
    let each: Vec<String> = (trips.iter())
        .map(|m| {
            let [a, b] = sets.map(|s| model(s, m.bytes));
            let against = match (a, b) {
                (Some(a), Some(b)) if (a - b).abs() > 0.5 => format!("{a:.0}/{b:.0}"),
                (Some(a), _) | (None, Some(a)) => format!("{a:.0}"),
                (None, None) => "–".into(),
            };
            format!(
                "{} B {:.0}/{:.0} ns against {against}",
                m.bytes, m.init_ns, m.final_ns
            )
        })
        .collect();
    let ratio = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
    Some((ratio, each.join(", "), moments))
}

impl Links {
    /// The sets' choice for each pair of `trace`'s ranks, placed as `remap` says. `sets` holds
    /// one set or more (the first the run's main one); a class the trace needs and no set has
    /// is a warning naming the pairs. `traffic` is the whole trace's ([`Traffic`]).
    pub fn new(
        sets: Vec<Params>,
        trace: &Trace,
        remap: &Remap,
        traffic: Traffic,
    ) -> Result<Links, String> {
        let p = trace.nranks();
        let traced_node = traced_nodes(trace);
        let node = numbered(placed(remap, &traced_node)?);
        let cpu: Vec<Option<Cpu>> = (0..p)
            .map(|r| trace.meta.ranks.get(r).placement.as_ref().map(|x| x.init))
            .collect();
        let class = |s: &Params| s.class.unwrap_or(Class::Node);
        let network_set = (0..sets.len()).find(|&i| class(&sets[i]) == Class::Network);
        // A node with no node set takes the network's, and the other way round: warned of
        // where some pair needs it.
        let mut node_sets: Vec<usize> = (0..sets.len())
            .filter(|&i| class(&sets[i]) == Class::Node)
            .collect();
        if node_sets.is_empty() {
            node_sets = vec![network_set.expect("a set")];
        }
        let (table, far, moves) = node_table(trace, &sets, &node_sets, &node, &traced_node);
        let network = network_set.unwrap_or(node_sets[0]) as u8;
        let mut links = Links {
            sets,
            node,
            cpu,
            traced_node,
            table,
            network,
            traffic,
            warnings: Vec::new(),
        };
        links.warnings = links.missing_classes(network_set.is_some(), &node_sets);
        links.warnings.extend(far_warning(far));
        links.warnings.extend(moved_warning(&links.sets, moves));
        Ok(links)
    }

    /// The warnings of a class some pair needs and no set has: a network set where only node
    /// sets were given (`network`: whether one was), or the other way round.
    fn missing_classes(&self, network: bool, node_sets: &[usize]) -> Vec<String> {
        let (across, within) = self.pairs_in_use();
        let mut warnings = Vec::new();
        if !network && !across.is_empty() {
            warnings.push(format!(
                "{} pair(s) of ranks on different nodes exchange messages ({}), and no \
                 parameter set is of class \"network\": they are costed with the node set{}; \
                 calibrate between two nodes (`calibrate --mpirun` with a launch over two \
                 hosts) and add its set with a second --params",
                across.len(),
                sample(&across),
                cores_text(&self.sets[self.network as usize])
            ));
        }
        if node_sets == [self.network as usize] && !within.is_empty() && network {
            warnings.push(format!(
                "{} pair(s) of ranks on one node exchange messages ({}), and no parameter set \
                 is of class \"node\": they are costed with the network set; calibrate on one \
                 node and add its set with a second --params",
                within.len(),
                sample(&within)
            ));
        }
        warnings
    }

    /// The same choice of each pair's set, the sets' parameters replaced by `sets` (as many, in
    /// the same order: a what-if on their values).
    pub fn with_sets(&self, sets: &[Params]) -> Links {
        assert_eq!(sets.len(), self.sets.len(), "a value for every set");
        Links {
            sets: sets.to_vec(),
            ..self.clone()
        }
    }

    /// Whether every pair takes the same set (one set: the run as before link classes).
    pub fn uniform(&self) -> bool {
        self.sets.len() == 1
    }

    /// The set (index into `sets`) of a message between ranks `a` and `b`.
    #[inline]
    pub fn set_of(&self, a: usize, b: usize) -> usize {
        if self.sets.len() == 1 {
            return 0;
        }
        let n = self.node[a];
        if n != self.node[b] {
            return self.network as usize;
        }
        let class = match (
            self.traced_node[a] == self.traced_node[b],
            self.cpu[a],
            self.cpu[b],
        ) {
            (true, Some(x), Some(y)) => PairClass::of(x, y).map_or(3, |c| c as usize),
            _ => 3,
        };
        self.table[n as usize][class] as usize
    }

    /// The set of a group of ranks (a collective's members): the network's where they span
    /// nodes, else that of its first two members' pair (the first's alone: the first node set).
    pub fn set_of_group(&self, mut members: impl Iterator<Item = usize>) -> usize {
        let Some(a) = members.next() else {
            return 0;
        };
        let mut pair = None;
        for b in members {
            if self.node[a] != self.node[b] {
                return self.network as usize;
            }
            pair.get_or_insert(b);
        }
        pair.map_or(self.table[self.node[a] as usize][3] as usize, |b| {
            self.set_of(a, b)
        })
    }

    /// The pairs `(a, b)`, `a < b`, that exchange point-to-point messages, across nodes and
    /// within one.
    fn pairs_in_use(&self) -> (Pairs, Pairs) {
        let mut pairs: Pairs = (self.traffic.0.iter())
            .map(|&(r, q, _)| (r.min(q), r.max(q)))
            .collect();
        pairs.par_sort_unstable();
        pairs.dedup();
        pairs
            .into_iter()
            .partition(|&(a, b)| self.node[a as usize] != self.node[b as usize])
    }

    /// Per rank, the bytes it sent point-to-point with each set (indices as `sets`).
    pub fn bytes_by_set(&self) -> Vec<Vec<u64>> {
        let mut by = vec![vec![0u64; self.sets.len()]; self.node.len()];
        for &(r, q, bytes) in &self.traffic.0 {
            by[r as usize][self.set_of(r as usize, q as usize)] += bytes;
        }
        by
    }

    /// The number of nodes the ranks are placed on.
    pub fn nodes(&self) -> usize {
        self.table.len()
    }
}

/// Rank `r`'s point-to-point sends to another rank: `(peer, bytes)`.
fn sends(trace: &Trace, r: usize) -> impl Iterator<Item = (usize, u64)> + '_ {
    let ev = trace.rank(r);
    let p = trace.nranks();
    (0..ev.len()).filter_map(move |i| {
        let sends = matches!(
            ev.routine(i).shape(),
            Shape::Send | Shape::Isend | Shape::Sendrecv
        );
        let peer = usize::try_from(ev.peer(i))
            .ok()
            .filter(|&q| q < p && q != r)?;
        sends.then_some((peer, ev.bytes(i)))
    })
}

/// Pairs of ranks `(a, b)`, `a < b`.
type Pairs = Vec<(u32, u32)>;

/// Up to three pairs, for a warning.
fn sample(pairs: &[(u32, u32)]) -> String {
    let shown: Vec<String> = (pairs.iter().take(3))
        .map(|(a, b)| format!("ranks {a} and {b}"))
        .collect();
    match pairs.len() > 3 {
        true => format!("{}, …", shown.join(", ")),
        false => shown.join(", "),
    }
}

fn cores_text(p: &Params) -> String {
    p.cores
        .map_or(String::new(), |c| format!(" (cores {c:.0} ns)"))
}

/// Reads a `--map` file: a node for each rank, in rank order, whitespace- or comma-separated
/// (`#` starts a comment). Nodes are any numbers; ranks with the same number share a node.
pub fn parse_map(text: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for w in line.split(|c: char| c.is_whitespace() || c == ',') {
            if w.is_empty() {
                continue;
            }
            let v: u32 = w.parse().map_err(|_| {
                format!(
                    "line {}: expected a node number for rank {}, found `{w}`",
                    n + 1,
                    out.len()
                )
            })?;
            out.push(v);
        }
    }
    Ok(out)
}
