//! Flag groups that several subcommands share: where the parameters come from, the cost
//! model, and the table-or-JSON output format; the prediction's own flags (`predict` and its
//! sweeps read them) and the parameter sets per link they choose.

#![allow(non_snake_case)] // flags named as the papers' parameters: --L --o --Os --Or --Gs --Gl --s --S --g --G

use super::warn;
use clap::{Args, ValueEnum};
use loggps_predict::error::Error;
use loggps_predict::model::{self, LogGpFlags, Overrides, ResolvedModel};
use loggps_predict::replay::{Links, Remap, links};
use loggps_predict::report::Format;
use loggps_predict::trace;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum InfoFormat {
    Table,
    Json,
}

/// Where the LogGPS parameters come from, and per-parameter overrides.
#[derive(Args, Debug, Clone)]
pub struct ParamArgs {
    /// LogGPS parameters from a TOML file (names as in the paper: L o Os Or Gs Gl s S).
    /// Repeatable: sets of `class = "node"` and `class = "network"` combine, each pair of
    /// ranks costed by its link's set (between nodes the network's; on one node the node set
    /// whose `cores` lies nearest the pair's)
    #[arg(long, value_name = "FILE")]
    pub params: Vec<PathBuf>,
    /// Use the paper's parameters of a platform (Table 5)
    #[arg(long, value_parser = ["cenju4", "myrinet", "fast-ethernet"])]
    pub platform: Option<String>,
    /// Latency, ns
    #[arg(long = "L", value_name = "NS", allow_hyphen_values = true)]
    pub L: Option<f64>,
    /// Overhead per message (first byte), ns
    #[arg(long = "o", value_name = "NS", allow_hyphen_values = true)]
    pub o: Option<f64>,
    /// Send overhead per further byte, ns/byte
    #[arg(long = "Os", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub Os: Option<f64>,
    /// Receive overhead per further byte, ns/byte
    #[arg(long = "Or", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub Or: Option<f64>,
    /// Gap per byte for the first s bytes, ns/byte
    #[arg(long = "Gs", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub Gs: Option<f64>,
    /// Gap per byte beyond s bytes, ns/byte (may be negative)
    #[arg(long = "Gl", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub Gl: Option<f64>,
    /// Bytes above which a message goes in several packets
    #[arg(long = "s", value_name = "BYTES")]
    pub s: Option<u64>,
    /// Eager limit: bytes above which the rendezvous protocol is used
    #[arg(long = "S", value_name = "BYTES")]
    pub S: Option<u64>,
    /// What a failed poll (an MPI_Test* that completes nothing, an MPI_Iprobe that finds
    /// nothing) costs, ns; by default each keeps its traced duration
    #[arg(long = "poll", value_name = "NS")]
    pub poll: Option<f64>,
    /// What posting a receive (MPI_Irecv, MPI_Imrecv, a persistent receive's MPI_Start) costs,
    /// ns; default: `post` of the parameters, else o (the paper's)
    #[arg(long = "post", value_name = "NS", allow_hyphen_values = true)]
    pub post: Option<f64>,
    /// What reducing one byte costs in a modeled collective's reduction steps, ns/byte, at every
    /// size (default: `gamma` of the parameters, by the vector's size where they give it so,
    /// else 0)
    #[arg(long = "gamma", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub gamma: Option<f64>,
    /// What a modeled collective call costs beyond its algorithm's messages, ns: each rank whose
    /// part receives returns this much later; a rank that only sends (a Bcast's root) pays none
    /// (default: `oc` of the parameters, else 0)
    #[arg(long = "oc", value_name = "NS", allow_hyphen_values = true)]
    pub oc: Option<f64>,
    /// What copying one byte locally costs in a modeled collective (a rank's own block, an
    /// algorithm's temporaries), ns/byte, at every size (default: `copy` of the parameters, by
    /// the size copied where they give it so, else 0)
    #[arg(long = "copy", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub copy: Option<f64>,
    /// The part of a send's overhead after its message has left, ns, in every band (the
    /// message leaves that much before the send returns; at most the band's o): default the
    /// parameters', else 0
    #[arg(long = "Od", value_name = "NS", allow_hyphen_values = true)]
    pub Od: Option<f64>,
    /// The part of a receive's overhead done before its message arrives, where the receive is
    /// posted that early, ns, in every band (at most the band's o): default the parameters',
    /// else 0
    #[arg(long = "Op", value_name = "NS", allow_hyphen_values = true)]
    pub Op: Option<f64>,
    /// The part of a send's overhead after its message has left that grows with its size, ns a
    /// byte, in every band (`Od + Osd·k` in all; at most the band's Os, so a set with a band of
    /// Os 0 refuses any but 0: `--scale Osd=F` scales each band's own): default the
    /// parameters', else 0
    #[arg(long = "Osd", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub Osd: Option<f64>,
    /// Where messages move: `async` (whatever the ranks do: the paper's model) or `calls`
    /// (only while the receiving rank is inside an MPI call, as in MPI libraries without a
    /// progress thread: a nonblocking receive's message moves at the rank's next Wait, Test or
    /// blocking call); default: the parameters', else async
    #[arg(long = "progress", value_name = "WHERE", value_parser = ["async", "calls"])]
    pub progress: Option<String>,
    /// The share of a rendezvous payload's send overhead T1 that holds its sender's CPU, 0–1:
    /// 0 the receiver's CPU alone moves it (a single copy, as over shared memory; the sender
    /// waits off its CPU), 1 each side copies (as over TCP): a nonblocking send's share is taken
    /// one at a time with the receives its Wait completes; default: the parameters', else 0
    #[arg(
        long = "rendezvous-sender",
        value_name = "F",
        allow_hyphen_values = true
    )]
    pub rendezvous_sender: Option<f64>,
    /// What a rendezvous payload received into a buffer its rank last sent to the same peer (a
    /// ping-pong sending back what it received; the trace's `bounced` receives) costs its
    /// receiver more, ns a byte, at every size; default: the parameters' (by size where
    /// `calibrate` measured it), else 0
    #[arg(
        long = "bounce",
        value_name = "NS_PER_BYTE",
        allow_hyphen_values = true
    )]
    pub bounce: Option<f64>,
    /// The same for a payload whose send the trace flagged `clean` (sent from an unchanged
    /// buffer: the receiver's writes into lines its peer holds are then what its copy waits
    /// for); default: the parameters', else --bounce's (--bounce alone costs both)
    #[arg(
        long = "bounce-clean",
        value_name = "NS_PER_BYTE",
        allow_hyphen_values = true
    )]
    pub bounce_clean: Option<f64>,
    /// What a modeled collective's own write (a copy, a reduction) into lines its peer has just
    /// read (a buffer it sends from by rendezvous) costs more, ns a byte; default: the
    /// parameters', else `bounce`
    #[arg(long = "held", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub held: Option<f64>,
    /// The same for a modeled collective's reduction into such lines (its result written into
    /// the buffer it has just sent), measured apart by `calibrate`; default: the parameters',
    /// else --held's
    #[arg(
        long = "held-reduce",
        value_name = "NS_PER_BYTE",
        allow_hyphen_values = true
    )]
    pub held_reduce: Option<f64>,
    /// What a modeled collective's temporary buffer costs, ns (its malloc and free; Open MPI's
    /// implementations allocate none to five a call: the model's §15); default: the
    /// parameters' (`calibrate` measures it), else 0
    #[arg(long = "alloc", value_name = "NS", allow_hyphen_values = true)]
    pub alloc: Option<f64>,
    /// What a rendezvous message's single copy costs more, ns a byte, where the trace shows its
    /// receive buffer starting 1-31 bytes further into its 4 KiB page than its send buffer (4
    /// KiB aliasing: the model's §9, "Where buffers lie"); default: the parameters' (`calibrate`
    /// measures it), else 0
    #[arg(long = "alias", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub alias: Option<f64>,
    /// What a receive costs, ns, where its eager message arrived while its rank waited inside
    /// an earlier MPI call with time to take it in (the library's progress copies it out then:
    /// the model's §14, "Messages taken in while waiting"); default: the parameters'
    /// (`calibrate` measures it by size), else such a receive costs T3 as any other
    #[arg(long = "drained", value_name = "NS", allow_hyphen_values = true)]
    pub drained: Option<f64>,
    /// What a completion call (an MPI_Wait*, a send-receive's wait) costs at least, ns, its
    /// operations already complete (the model's §4 Wait rule); default: the parameters'
    /// (`calibrate` measures it), else `o`, as the paper's
    #[arg(long = "wait", value_name = "NS", allow_hyphen_values = true)]
    pub wait: Option<f64>,
    /// What a rendezvous message sent from a buffer unchanged since its last send from it (the
    /// trace's `clean` sends: data written long before, as a halo sent from buffers written
    /// once) costs, as a share of what the set costs it (`calibrate` measures it: its `clean`
    /// ratio), one way or both at once (unless --clean-oneway says the one-way share);
    /// default: the parameters', else 1
    #[arg(long = "clean", value_name = "F")]
    pub clean: Option<f64>,
    /// `--clean` for a collective's clean message with none the other way at once (a Bcast's
    /// root, a Gather's leaf; a point-to-point message takes `clean`): `calibrate` measures it
    /// on round trips, `clean` on exchanges; default: the parameters', else `clean`
    #[arg(long = "clean-oneway", value_name = "F")]
    pub clean_oneway: Option<f64>,
    /// Eager sends of at most BYTES return when their message has left, their receives paying
    /// the rest of the send's overhead (`Od`, MODEL.md §13); default: the parameters', else
    /// every send returns at its end
    #[arg(long = "departs-upto", value_name = "BYTES")]
    pub departs_upto: Option<u64>,
    /// Multiply a parameter by F (in every band of a banded set): L, o, Os, Or, G (Gs and Gl
    /// both), Gs, Gl, Od, Op, copy, oc, gamma, or all of them (all=1.1: a machine 10% slower at
    /// everything the model costs, as `calibrate`'s interruptions finding suggests), or every
    /// parameter of the bands above S (rendezvous=0.5: messages sent by rendezvous from buffers
    /// not written since their last send, at `calibrate`'s `clean` ratio); repeatable, applied
    /// after the absolute values. Prefixed by a class (network.L=0.5, node.o=2), in that class's
    /// sets only
    #[arg(long = "scale", value_name = "NAME=F", value_parser = parse_scale)]
    pub scale: Vec<(String, f64)>,
    /// Set a parameter of one class's sets only, as its own flag would (network.L=5000,
    /// node.S=65536: L, o, Os, Or, Gs, Gl, s, S, Od, Op); repeatable
    #[arg(long = "set", value_name = "CLASS.NAME=V", value_parser = parse_scale)]
    pub set: Vec<(String, f64)>,
}

/// `NAME=F` of `--scale`.
fn parse_scale(s: &str) -> Result<(String, f64), String> {
    let (name, f) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=F (e.g. L=2), found `{s}`"))?;
    let f: f64 = f
        .trim()
        .parse()
        .map_err(|_| format!("expected a number after `{name}=`, found `{f}`"))?;
    Ok((name.trim().to_string(), f))
}

impl ParamArgs {
    /// Whether a flag or a platform sets what the messages cost (a what-if, or another
    /// machine's parameters), rather than the sets as measured.
    pub(super) fn changes_costs(&self) -> bool {
        let values = [
            self.L, self.o, self.Os, self.Or, self.Gs, self.Gl, self.Od, self.Op, self.Osd,
        ];
        self.platform.is_some()
            || values.iter().any(Option::is_some)
            || self.s.is_some()
            || self.S.is_some()
            || !self.scale.is_empty()
            || !self.set.is_empty()
    }

    /// The parameters for a trace embedding the sets `embedded` (its main one first); warnings about them are printed once
    /// per distinct parameter set.
    /// `limit`: the eager limit the trace recorded, which sets `S` where no flag or platform
    /// does and the set's eager bands above its `S` were measured at it
    /// ([`loggps_predict::trace::library::measured_limit`]).
    pub(super) fn resolve(
        &self,
        embedded: &[model::Params],
        limit: Option<&loggps_predict::trace::EagerLimit>,
    ) -> Result<model::Resolved, Error> {
        let ov = Overrides {
            L: self.L,
            o: self.o,
            Os: self.Os,
            Or: self.Or,
            Gs: self.Gs,
            Gl: self.Gl,
            s: self.s,
            S: self.S,
            poll: self.poll,
            gamma: self.gamma,
            oc: self.oc,
            copy: self.copy,
            Od: self.Od,
            Op: self.Op,
            Osd: self.Osd,
            progress_at_calls: self.progress.as_deref().map(|v| v == "calls"),
            rendezvous_sender: self.rendezvous_sender,
            bounce: self.bounce,
            bounce_clean: self.bounce_clean,
            clean: self.clean,
            clean_oneway: self.clean_oneway,
            departs_upto: self.departs_upto,
            post: self.post,
            held: self.held,
            held_reduce: self.held_reduce,
            alloc: self.alloc,
            alias: self.alias,
            drained: self.drained,
            wait: self.wait,
            scale: self.scale.clone(),
            set: self.set.clone(),
        };
        let mut r = model::resolve(&self.params, self.platform.as_deref(), embedded, &ov)?;
        at_traced_limit(&mut r, limit);
        static WARNED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
        let unmeasured = self
            .S
            .map_or(Vec::new(), |s| self.eager_unmeasured(embedded, s));
        for w in unmeasured.into_iter().chain(r.params.warnings()) {
            if !warned.contains(&w) {
                warn(format!("parameters: {w}"));
                warned.push(w);
            }
        }
        Ok(r)
    }
}

/// `r`'s sets at the eager limit the trace recorded, `limit`, where no flag or platform sets
/// `S` and a set's eager bands above its `S` were measured at it.
fn at_traced_limit(r: &mut model::Resolved, limit: Option<&trace::EagerLimit>) {
    use loggps_predict::trace::library::measured_limit;
    if !matches!(
        r.sources[7],
        model::Source::Flag | model::Source::Platform(_)
    ) && let Some(e) = measured_limit(limit, &r.params)
    {
        (r.params.S, r.sources[7]) = (e, model::Source::TraceLimit);
        for o in &mut r.others {
            o.S = measured_limit(limit, o).unwrap_or(o.S);
        }
    }
}

impl ParamArgs {
    /// The sets as measured: the files' (else the trace's), none of the flags applied, at the
    /// trace's eager limit as [`ParamArgs::resolve`] takes it (the sets a run's message speed
    /// is judged against).
    pub(super) fn as_measured(
        &self,
        embedded: &[model::Params],
        limit: Option<&trace::EagerLimit>,
    ) -> Result<model::Resolved, Error> {
        let mut r = model::resolve(&self.params, None, embedded, &Overrides::default())?;
        at_traced_limit(&mut r, limit);
        Ok(r)
    }

    /// Where `--S s` lies above the eager costs a banded set given measured: a warning for each
    /// such set (the sets as given, before the flags), naming the sizes costed eagerly with
    /// bands fitted to rendezvous round trips.
    fn eager_unmeasured(&self, embedded: &[model::Params], s: u64) -> Vec<String> {
        let given = model::resolve(
            &self.params,
            self.platform.as_deref(),
            embedded,
            &Overrides::default(),
        );
        let Ok(given) = given else {
            return Vec::new();
        };
        let sets = std::iter::once(&given.params).chain(&given.others);
        let several = !given.others.is_empty();
        sets.filter_map(|p| {
            let from = p.eager_unmeasured_from(s)?;
            let which = match (several, p.class, p.cores) {
                (true, Some(model::Class::Network), _) => " of the network".to_string(),
                (true, _, Some(c)) => format!(" of cores {c:.0} ns"),
                _ => String::new(),
            };
            Some(format!(
                "--S {s} costs messages of {from}–{s} B eagerly, and the set{which} measured no \
                 eager costs above {} B: its bands there, fitted to rendezvous round trips, \
                 cost them, and the what-if is off by as much as the two protocols' costs \
                 differ (`calibrate --eager-mpirun` measures eager costs above S, the model's \
                 §10)",
                from - 1
            ))
        })
        .collect()
    }
}

/// The cost model and LogGP's own parameters (`predict` and `collective`).
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Cost model; loggp takes --L --o --g --G, and none of LogGPS's --Os --Or --Gs --Gl --s --S
    #[arg(long, value_enum, default_value_t = ModelKind::Loggps)]
    pub model: ModelKind,
    /// LogGP: gap between consecutive sends and between consecutive receives at a rank, ns (default 0)
    #[arg(long = "g", value_name = "NS", allow_hyphen_values = true)]
    pub g: Option<f64>,
    /// LogGP: gap per byte, ns/byte (default: Gs of --params/--platform/the trace, else 0)
    #[arg(long = "G", value_name = "NS_PER_BYTE", allow_hyphen_values = true)]
    pub G: Option<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
pub enum ModelKind {
    /// LogGPS as in the model documentation (src/model/MODEL.md): the replay's cost table, rendezvous above S included
    Loggps,
    /// LogGP (Alexandrov et al. 1995): o + (k−1)G + L + o per message, gap g, no rendezvous
    Loggp,
}

impl ModelArgs {
    /// The model and its parameters for a trace embedding `embedded`: LogGPS as
    /// [`ParamArgs::resolve`] says, or LogGP by [`model::resolve_loggp`]. A flag of the other
    /// model is a usage error.
    pub(super) fn resolve(
        &self,
        p: &ParamArgs,
        embedded: &[model::Params],
        limit: Option<&loggps_predict::trace::EagerLimit>,
    ) -> Result<ResolvedModel, Error> {
        match self.model {
            ModelKind::Loggps => {
                if self.g.is_some() || self.G.is_some() {
                    return Err(Error::Usage(
                        "--g and --G are LogGP parameters: add --model loggp (LogGPS disregards g and splits G into --Gs/--Gl)".into(),
                    ));
                }
                Ok(ResolvedModel::LogGps(p.resolve(embedded, limit)?))
            }
            ModelKind::Loggp => {
                let loggps_only = [
                    ("--Os", p.Os.is_some()),
                    ("--Or", p.Or.is_some()),
                    ("--Gs", p.Gs.is_some()),
                    ("--Gl", p.Gl.is_some()),
                    ("--s", p.s.is_some()),
                    ("--S", p.S.is_some()),
                    ("--scale", !p.scale.is_empty()),
                    ("--progress", p.progress.is_some()),
                    ("--rendezvous-sender", p.rendezvous_sender.is_some()),
                    ("--bounce", p.bounce.is_some()),
                    ("--bounce-clean", p.bounce_clean.is_some()),
                    ("--clean", p.clean.is_some()),
                    ("--clean-oneway", p.clean_oneway.is_some()),
                    ("--departs-upto", p.departs_upto.is_some()),
                    ("--post", p.post.is_some()),
                    ("--held", p.held.is_some()),
                    ("--held-reduce", p.held_reduce.is_some()),
                    ("--alloc", p.alloc.is_some()),
                    ("--alias", p.alias.is_some()),
                    ("--drained", p.drained.is_some()),
                    ("--wait", p.wait.is_some()),
                    ("--oc", p.oc.is_some()),
                    ("--copy", p.copy.is_some()),
                    ("--Od", p.Od.is_some()),
                    ("--Op", p.Op.is_some()),
                    ("--Osd", p.Osd.is_some()),
                ];
                if let Some((flag, _)) = loggps_only.iter().find(|(_, set)| *set) {
                    return Err(Error::Usage(format!(
                        "{flag} is a LogGPS parameter; LogGP takes --L --o --g --G"
                    )));
                }
                let flags = LogGpFlags {
                    L: p.L,
                    o: p.o,
                    g: self.g,
                    G: self.G,
                    gamma: p.gamma,
                };
                Ok(ResolvedModel::LogGp(model::resolve_loggp(
                    &p.params,
                    p.platform.as_deref(),
                    embedded,
                    &flags,
                )?))
            }
        }
    }
}

/// A trace and the flags of its replay, as a prediction takes them (`sensitivity`, `callsites`).
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Trace file (ours: binary .bin or text .txt; or another tool's, see --from)
    pub trace: PathBuf,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub params: ParamArgs,
    /// Collectives, as for a prediction (`modeled`, `measured` or OP=ALGORITHM,…)
    #[arg(long, value_name = "SPEC", default_value = "modeled")]
    pub coll: String,
    /// Replay at the speed the run's messages went, as `predict --at-run-speed` does
    #[arg(long)]
    pub at_run_speed: bool,
}

#[derive(Args, Debug)]
pub struct PredictArgs {
    /// Trace file (ours: binary .bin or text .txt; or another tool's, see --from)
    #[arg(required = true)]
    pub trace: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub params: ParamArgs,
    /// Collectives: `modeled` (expanded into point-to-point messages by the algorithm Open MPI
    /// 4.1's tuned rules pick for the call's size), `measured` (traced durations), or
    /// OP=ALGORITHM,… (modeled, e.g. bcast=postal,allreduce=rabenseifner; tuned: Open MPI's
    /// choice for that operation)
    #[arg(long, value_name = "SPEC", default_value = "modeled")]
    pub coll: String,
    /// What-if sweep: one prediction per value of one parameter of the model (of one class's
    /// sets where prefixed, as --set takes it), of ranks a node, or per algorithm of one
    /// collective (tuned: Open MPI 4.1's choice by size), the trace loaded and matched once; a
    /// row per value (e.g. --sweep S=4096,16384,65536, --sweep network.L=2500,5000, --sweep
    /// ranks-per-node=1,2,4, --sweep allreduce=tuned,ring)
    #[arg(long, value_name = "NAME=V1,V2,…")]
    pub sweep: Option<String>,
    /// What-if sweep by factors: one prediction per factor of a parameter, as --scale takes
    /// it (e.g. --sweep-scale L=0.5,1,2; network.L=0.5,1,2 scales the network's set alone)
    #[arg(long, value_name = "NAME=F1,F2,…", conflicts_with = "sweep")]
    pub sweep_scale: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also draw the breakdown as stacked bars (the paper's Fig. 6) into FILE: one bar per
    /// rank and their average, or with --sweep one per value
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Also write the predicted run as a timeline into FILE, in the Chrome trace-event JSON
    /// format (open it in ui.perfetto.dev or chrome://tracing), or in Perfetto's own protobuf
    /// format where FILE ends in .perfetto-trace (smaller; also written instead of JSON larger
    /// than Perfetto's UI opens, said in a warning): per rank the predicted calls with their
    /// synchronization and the computation between, the measured calls beside them, each
    /// message an arrow
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// The timeline's ranks only (e.g. 0,4,8-15)
    #[arg(long, value_name = "LIST", requires = "timeline")]
    pub ranks: Option<String>,
    /// The timeline's slices that overlap T0:T1 only (e.g. 0:2ms, 1.5s:1.6s; seconds without a
    /// unit)
    #[arg(long, value_name = "T0:T1", requires = "timeline")]
    pub window: Option<String>,
    /// Also find the critical path: the chain of calls, messages and computation that sets the
    /// predicted runtime, reported as its parts, by routine and by rank (table and JSON; with
    /// --timeline, also drawn there)
    #[arg(long)]
    pub critical_path: bool,
    /// Also report the calls by routine and message size (powers of two; a Wait's or Test's
    /// by the largest message it completes), predicted against measured, summed over the
    /// ranks: where the prediction's error comes from (table and JSON)
    #[arg(long)]
    pub calls: bool,
    /// Predict the traced run: keep the tracer's own time in the measured computation between
    /// calls, and add its time inside each call where the trace timed it (by default a trace
    /// that timed them, at MPI_Init, has the own time taken out of every gap: the prediction is
    /// of the program run without the tracer)
    #[arg(long)]
    pub keep_tracer_time: bool,
    /// Predict at the speed the run's messages went: each parameter set multiplied, as by
    /// --scale all=F and after the other flags, by how much slower (F > 1) or faster its
    /// round trips through MPI ran at MPI_Init and MPI_Finalize than the set, as measured,
    /// models them (the tracer's figures; the JSON report's `message_speed`): the model's
    /// error with the machine's speed of the moment divided out (with a sweep, every value).
    /// Not with --platform
    #[arg(long)]
    pub at_run_speed: bool,
    /// What-if placement: K ranks a node, in rank order (block), so that pairs change class
    /// (between nodes the network's set, on one node a node set; the model's §12)
    #[arg(long, value_name = "K", conflicts_with = "map")]
    pub ranks_per_node: Option<u32>,
    /// What-if placement: each rank's node from FILE, a node number per rank in rank order
    /// (whitespace or commas; ranks with the same number share a node)
    #[arg(long, value_name = "FILE")]
    pub map: Option<PathBuf>,
}

impl PredictArgs {
    /// How the ranks are placed on nodes: as traced, or as `--ranks-per-node`/`--map` say.
    pub(super) fn remap(&self) -> Result<Remap, Error> {
        if let Some(k) = self.ranks_per_node {
            return Ok(Remap::PerNode(k));
        }
        let Some(path) = &self.map else {
            return Ok(Remap::Traced);
        };
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Usage(format!("--map {}: cannot read: {e}", path.display())))?;
        links::parse_map(&text)
            .map(Remap::Listed)
            .map_err(|e| Error::Usage(format!("--map {}: {e}", path.display())))
    }
}

/// The sets of each pair where the run combines several or re-places its ranks (the model's
/// §12); None where one set costs every pair as before.
pub(super) fn links_for(
    resolved: &ResolvedModel,
    trace: &trace::Trace,
    remap: &Remap,
    split: super::Split<'_>,
) -> Result<Option<Links>, Error> {
    let ResolvedModel::LogGps(r) = resolved else {
        return match remap {
            Remap::Traced => Ok(None),
            _ => Err(Error::Usage(
                "--ranks-per-node and --map choose LogGPS parameter sets by link: leave out --model loggp".into(),
            )),
        };
    };
    if r.others.is_empty() && *remap == Remap::Traced {
        return Ok(None);
    }
    let sets: Vec<_> = std::iter::once(r.params)
        .chain(r.others.iter().copied())
        .collect();
    let traffic = loggps_predict::driver::traffic(trace, split)?;
    Links::new(sets, trace, remap, traffic)
        .map(Some)
        .map_err(Error::Usage)
}
