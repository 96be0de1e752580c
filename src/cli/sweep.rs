//! `predict --sweep NAME=V1,V2,…`: one prediction per value of a parameter, or per algorithm
//! of a collective, the trace loaded and matched once.

use super::args::{ModelArgs, ModelKind, ParamArgs};
use super::args::{PredictArgs, links_for};
use super::progress::Progress;
use super::{Split, all_events, anywhere, matched, quiet_pipe, to_stdout, warn};
use loggps_predict::collectives::traced::{Choice, TUNED, algorithm_or_tuned, op_of};
use loggps_predict::collectives::{OPS, Op};
use loggps_predict::error::Error;
use loggps_predict::graph::split::Census;
use loggps_predict::model;
use loggps_predict::replay::Remap;
use loggps_predict::report;
use loggps_predict::report::sweep::Value;
use loggps_predict::trace::{Routine, Trace};
use rayon::prelude::*;

/// The placement what-if a sweep can vary: ranks a node (`--ranks-per-node`).
const RANKS_PER_NODE: &str = "ranks-per-node";

/// `--sweep NAME=V1,V2,…`: one parameter of the model and the values it takes in turn, or one
/// collective operation and the algorithms it is modeled by in turn.
pub(super) struct Sweep {
    name: &'static str,
    /// The operation whose algorithm is swept (None: a parameter).
    op: Option<Op>,
    values: Vec<Value>,
}

impl Sweep {
    /// Checks the name against the model's parameters (not one also given by its own flag) and
    /// the values as that flag would; or against the collective operations (modeled, and with
    /// no algorithm of their own in `coll`) and the values against the operation's algorithms.
    pub(super) fn parse(
        spec: &str,
        model: &ModelArgs,
        params: &ParamArgs,
        coll: &Choice,
    ) -> Result<Sweep, Error> {
        let usage = |why: String| Error::Usage(format!("--sweep {spec}: {why}"));
        let (name, list) = spec.split_once('=').ok_or_else(|| {
            usage(
                "expected NAME=V1,V2,… (e.g. S=4096,16384,65536 or allreduce=ring,rabenseifner)"
                    .into(),
            )
        })?;
        let list: Vec<&str> = list.split(',').map(str::trim).collect();
        const LOGGPS_SWEPT: [&str; 16] = [
            "L",
            "o",
            "Os",
            "Or",
            "Gs",
            "Gl",
            "s",
            "S",
            "poll",
            "gamma",
            "oc",
            "copy",
            "Od",
            "Op",
            "rendezvous_sender",
            "bounce",
        ];
        let names: &[&'static str] = match model.model {
            ModelKind::Loggps => &LOGGPS_SWEPT,
            ModelKind::Loggp => &model::LOGGP_NAMES,
        };
        let placement = (model.model == ModelKind::Loggps).then_some(RANKS_PER_NODE);
        let found = names
            .iter()
            .copied()
            .chain(placement)
            .find(|&n| n == name.trim());
        let Some(name) = found else {
            let op = Op::parse(name.trim()).map_err(|_| {
                usage(format!(
                    "{} has no parameter {:?}; it has {}{}, and a collective's algorithms are \
                     swept by its name ({})",
                    match model.model {
                        ModelKind::Loggps => "LogGPS",
                        ModelKind::Loggp => "LogGP",
                    },
                    name.trim(),
                    names.join(" "),
                    placement.map_or(String::new(), |p| format!(" (and the placement {p})")),
                    OPS.map(|(_, n, _)| n).join(" ")
                ))
            })?;
            return Sweep::algorithms(op, &list, coll).map_err(|e| usage(e.to_string()));
        };
        if Sweep::set(model, params, name, 0.0).is_none() {
            return Err(usage(format!(
                "--{name} sets the parameter the sweep varies; give one or the other"
            )));
        }
        let integer = matches!(name, "s" | "S");
        let value = |&v: &&str| {
            let x: f64 = (v.parse()).map_err(|_| usage(format!("{v:?} is not a number")))?;
            if name == RANKS_PER_NODE && !(x >= 1.0 && x.fract() == 0.0 && x < 2f64.powi(32)) {
                Err(usage(format!("{name} takes whole numbers ≥ 1, not {v}")))
            } else if integer && !(x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(63)) {
                Err(usage(format!(
                    "{name} takes whole numbers of bytes ≥ 0, not {v}"
                )))
            } else if !x.is_finite() {
                Err(usage(format!("{v} is not a finite number")))
            } else {
                Ok(Value::Number(x))
            }
        };
        let values = list.iter().map(value).collect::<Result<_, _>>()?;
        Ok(Sweep {
            name,
            op: None,
            values,
        })
    }

    /// The sweep of `op`'s algorithms `list` (each of them, or [`TUNED`]).
    fn algorithms(op: Op, list: &[&str], coll: &Choice) -> Result<Sweep, Error> {
        if !coll.modeled {
            return Err(Error::Usage(format!(
                "--coll measured keeps the traced durations; a sweep of {}'s algorithms models \
                 them",
                op.name()
            )));
        }
        if coll.overrides.iter().any(|(o, _)| *o == op) {
            return Err(Error::Usage(format!(
                "--coll sets the algorithm of {} the sweep varies; give one or the other",
                op.name()
            )));
        }
        let not_one = |v: &str| {
            Error::Usage(format!(
                "{v:?} is not an algorithm of {}: it has {} (and {TUNED}: Open MPI 4.1's choice \
                 for each call's size)",
                op.name(),
                op.algorithms().join(" ")
            ))
        };
        let value = |&v: &&str| {
            algorithm_or_tuned(op, v)
                .map(Value::Algorithm)
                .map_err(|_| not_one(v))
        };
        Ok(Sweep {
            name: op.name(),
            op: Some(op),
            values: list.iter().map(value).collect::<Result<_, _>>()?,
        })
    }

    /// The model's and the parameters' flags with `name` set to `v`; None where a flag of its
    /// own sets it already.
    fn set(
        model: &ModelArgs,
        params: &ParamArgs,
        name: &str,
        v: f64,
    ) -> Option<(ModelArgs, ParamArgs)> {
        let (mut m, mut p) = (model.clone(), params.clone());
        let slot = match name {
            "L" => &mut p.L,
            "o" => &mut p.o,
            "Os" => &mut p.Os,
            "Or" => &mut p.Or,
            "Gs" => &mut p.Gs,
            "Gl" => &mut p.Gl,
            "poll" => &mut p.poll,
            "gamma" => &mut p.gamma,
            "oc" => &mut p.oc,
            "copy" => &mut p.copy,
            "Od" => &mut p.Od,
            "Op" => &mut p.Op,
            "rendezvous_sender" => &mut p.rendezvous_sender,
            "bounce" => &mut p.bounce,
            "g" => &mut m.g,
            "G" => &mut m.G,
            "s" | "S" => {
                let slot = if name == "s" { &mut p.s } else { &mut p.S };
                return slot.replace(v as u64).is_none().then_some((m, p));
            }
            // A placement, not a parameter: set where the sweep's placement is taken.
            RANKS_PER_NODE => return Some((m, p)),
            _ => unreachable!("a parameter name checked by Sweep::parse"),
        };
        slot.replace(v).is_none().then_some((m, p))
    }

    /// The model's flags and the collectives' choice for `value`.
    fn at(&self, a: &PredictArgs, coll: &Choice, value: Value) -> (ModelArgs, ParamArgs, Choice) {
        match (self.op, value) {
            (None, Value::Number(v)) => {
                let (m, p) =
                    Sweep::set(&a.model, &a.params, self.name, v).expect("checked by parse");
                (m, p, coll.clone())
            }
            (Some(op), Value::Algorithm(algo)) => (
                a.model.clone(),
                a.params.clone(),
                coll.clone().with(op, algo),
            ),
            _ => unreachable!("a parameter's values are numbers, an operation's algorithms"),
        }
    }
}

/// `predict --sweep`: the trace matched once, then replayed once per value.
pub(super) fn predict_sweep(
    a: &PredictArgs,
    sweep: &Sweep,
    trace: &Trace,
    census: Option<&Census>,
    coll: &Choice,
    split: Split<'_>,
) -> Result<(), Error> {
    let path = a.trace.as_deref().expect("clap requires TRACE");
    let name = path.display().to_string();
    let graph = matched(trace, &name, census, split)?;
    if let Some(op) = sweep.op {
        let calls = |r: &Routine| op_of(*r) == Some(op);
        if !anywhere(trace.events.routines().par_iter().any(calls), split)? {
            warn(format!(
                "the trace has no {} call: every algorithm predicts the same",
                op.name()
            ));
        }
    }
    let placed = sweep.name == RANKS_PER_NODE;
    if placed && (a.ranks_per_node.is_some() || a.map.is_some()) {
        return Err(Error::Usage(format!(
            "--sweep {RANKS_PER_NODE} places the ranks: leave out --ranks-per-node and --map"
        )));
    }
    let (mut points, mut first_error) = (Vec::new(), None);
    let (mut model, mut measured_s) = (None, f64::NAN);
    for (k, &v) in sweep.values.iter().enumerate() {
        let (m, p, coll) = sweep.at(a, coll, v);
        let resolved = m.resolve(&p, &trace.meta.sets(), trace.meta.eager_limit.as_ref())?;
        let remap = match (placed, v) {
            (true, Value::Number(n)) => Remap::PerNode(n as u32),
            _ => super::agreed(a.remap(), split)?,
        };
        let links = links_for(&resolved, trace, &remap, split)?;
        if k == 0 && links.is_none() {
            super::warn_placement(trace, resolved.cores());
        }
        for w in links.iter().flat_map(|l| &l.warnings) {
            warn(format!("{}={v}: {w}", sweep.name));
        }
        let label = format!(
            "replaying {}={v} ({} of {})",
            sweep.name,
            k + 1,
            sweep.values.len()
        );
        let bar = Progress::new(&label, Some(trace.total_events()));
        let m = resolved.model();
        let how = loggps_predict::driver::Replay {
            model: &m,
            links: links.as_ref(),
            coll: &coll,
            name: &name,
        };
        let prediction = loggps_predict::driver::replay(trace, &graph, how, &|n| bar.set(n), split);
        bar.finish();
        let point = match prediction {
            Ok(pred) => {
                for w in &pred.warnings {
                    warn(format!("{}={v}: {w}", sweep.name));
                }
                measured_s = pred.measured_ns * 1e-9;
                report::sweep::Point::of(v, &pred)
            }
            Err(e) => {
                let point = report::sweep::Point::failed(v, &e.to_string());
                first_error.get_or_insert(e);
                point
            }
        };
        points.push(point);
        model = Some(resolved);
    }
    // Where no value replays, the sweep fails as one prediction would; else each value that
    // did not is told in full here (the table shows the start of it).
    if let Some(e) = first_error.filter(|_| points.iter().all(|p| p.predicted_s.is_none())) {
        return Err(e);
    }
    for p in &points {
        if let Some(e) = &p.error {
            warn(format!("{}={}: {e}", sweep.name, p.value));
        }
    }
    let model = model.expect("a sweep has a value at least");
    let mut report =
        report::sweep::SweepReport::new(&name, trace, &model, sweep.name, measured_s, points);
    report.events = all_events(trace, census);
    if let Some(path) = &a.svg {
        super::write_svg(path, &report.svg())?;
    }
    let res = to_stdout(|out| report.write(a.format, out));
    quiet_pipe(res, "writing the report")
}
