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

/// `--sweep NAME=V1,V2,…`: one parameter of the model and the values it takes in turn (of one
/// class's sets where prefixed by it, as `--set` takes it: `network.L`), or one collective
/// operation and the algorithms it is modeled by in turn.
pub(super) struct Sweep {
    name: String,
    /// The operation whose algorithm is swept (None: a parameter).
    op: Option<Op>,
    /// The values are factors of the parameter, as `--scale` takes them (`--sweep-scale`).
    factor: bool,
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
        const LOGGPS_SWEPT: [&str; 27] = [
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
            "Osd",
            "rendezvous_sender",
            "bounce",
            "bounce_clean",
            "clean",
            "clean_oneway",
            "post",
            "held",
            "held_reduce",
            "alloc",
            "alias",
            "drained",
            "wait",
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
            .map(str::to_string)
            .find(|n| n == name.trim())
            .or(Sweep::of_class(name.trim(), model).map_err(usage)?);
        let Some(name) = found else {
            let op = Op::parse(name.trim()).map_err(|_| {
                usage(format!(
                    "{} has no parameter {:?}; it has {}{}, and a collective's algorithms are \
                     swept by its name ({}){}",
                    match model.model {
                        ModelKind::Loggps => "LogGPS",
                        ModelKind::Loggp => "LogGP",
                    },
                    name.trim(),
                    names.join(" "),
                    placement.map_or(String::new(), |p| format!(" (and the placement {p})")),
                    OPS.map(|(_, n, _)| n).join(" "),
                    placement.map_or("", |_| "; one class's sets' parameter is swept as \
                                             --set names it (network.L, node.o)")
                ))
            })?;
            return Sweep::algorithms(op, &list, coll).map_err(|e| usage(e.to_string()));
        };
        if Sweep::set(model, params, &name, 0.0).is_none() {
            let flag = match name.contains('.') {
                true => format!("--set {name}=…"),
                false => format!("--{name}"),
            };
            return Err(usage(format!(
                "{flag} sets the parameter the sweep varies; give one or the other"
            )));
        }
        let param = name.rsplit('.').next().unwrap_or(&name);
        let integer = matches!(param, "s" | "S");
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
            factor: false,
            values,
        })
    }

    /// `--sweep-scale NAME=F1,F2,…`: the parameter `NAME` as `--scale` names it (of one
    /// class's sets where prefixed by it), multiplied by each factor in turn.
    pub(super) fn parse_scale(
        spec: &str,
        model: &ModelArgs,
        params: &ParamArgs,
    ) -> Result<Sweep, Error> {
        let usage = |why: String| Error::Usage(format!("--sweep-scale {spec}: {why}"));
        if model.model == ModelKind::Loggp {
            return Err(usage(
                "scales a LogGPS parameter; under LogGP sweep the value (--sweep L=…)".into(),
            ));
        }
        let (name, list) = spec.split_once('=').ok_or_else(|| {
            usage("expected NAME=F1,F2,… (e.g. L=0.5,1,2 or network.L=0.5,1,2)".into())
        })?;
        let name = name.trim();
        let (class, base) = match name.split_once('.') {
            Some((c, b)) => (Some(c), b),
            None => (None, name),
        };
        let known =
            model::SCALE_ALL.contains(&base) || matches!(base, "Gs" | "Gl" | "all" | "rendezvous");
        if !known || class.is_some_and(|c| model::Class::from_name(c).is_none()) {
            return Err(usage(format!(
                "expected a parameter --scale takes ({} Gs Gl all rendezvous), prefixed by a class \
                 (node or network) for that class's sets alone",
                model::SCALE_ALL.join(" ")
            )));
        }
        if params.scale.iter().any(|(n, _)| n == name) {
            return Err(usage(format!(
                "--scale {name}=… scales the parameter the sweep varies; give one or the other"
            )));
        }
        let factor = |v: &str| match v.trim().parse::<f64>() {
            Ok(f) if f.is_finite() && f >= 0.0 => Ok(Value::Number(f)),
            _ => Err(usage(format!(
                "{v:?} is not a factor (a finite number ≥ 0)"
            ))),
        };
        Ok(Sweep {
            name: name.to_string(),
            op: None,
            factor: true,
            values: list.split(',').map(factor).collect::<Result<_, _>>()?,
        })
    }

    /// The swept parameter as the report names it.
    fn label(&self) -> String {
        match self.factor {
            true => format!("{} scale", self.name),
            false => self.name.clone(),
        }
    }

    /// `CLASS.NAME` where CLASS is a class of parameter sets and NAME a parameter `--set` sets
    /// in that class's sets alone (None where the name has no dot; an error where the parts
    /// are not those).
    fn of_class(name: &str, model: &ModelArgs) -> Result<Option<String>, String> {
        let Some((class, param)) = name.split_once('.') else {
            return Ok(None);
        };
        const SPLIT: [&str; 3] = ["Od", "Op", "Osd"];
        let known = model::NAMES.contains(&param) || SPLIT.contains(&param);
        if model.model != ModelKind::Loggps || model::Class::from_name(class).is_none() || !known {
            return Err(format!(
                "expected CLASS.NAME (a parameter of one class's sets, as --set takes it): CLASS \
                 node or network, NAME one of {} {}",
                model::NAMES.join(" "),
                SPLIT.join(" ")
            ));
        }
        Ok(Some(name.to_string()))
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
            name: op.name().to_string(),
            op: Some(op),
            factor: false,
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
        if name.contains('.') {
            // One class's sets, as `--set` sets them (the name checked by `of_class`).
            if p.set.iter().any(|(n, _)| n == name) {
                return None;
            }
            p.set.push((name.to_string(), v));
            return Some((m, p));
        }
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
            "Osd" => &mut p.Osd,
            "rendezvous_sender" => &mut p.rendezvous_sender,
            "bounce" => &mut p.bounce,
            "bounce_clean" => &mut p.bounce_clean,
            "clean" => &mut p.clean,
            "clean_oneway" => &mut p.clean_oneway,
            "post" => &mut p.post,
            "held" => &mut p.held,
            "held_reduce" => &mut p.held_reduce,
            "alloc" => &mut p.alloc,
            "alias" => &mut p.alias,
            "drained" => &mut p.drained,
            "wait" => &mut p.wait,
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
            (None, Value::Number(f)) if self.factor => {
                let mut p = a.params.clone();
                p.scale.push((self.name.clone(), f));
                (a.model.clone(), p, coll.clone())
            }
            (None, Value::Number(v)) => {
                let (m, p) =
                    Sweep::set(&a.model, &a.params, &self.name, v).expect("checked by parse");
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
    // Every value at the run's message speed, measured against the sets as given.
    let run_speed = match a.at_run_speed {
        true => Some(super::agreed(super::RunSpeed::of(trace, &a.params), split)?),
        false => None,
    };
    let (mut points, mut first_error) = (Vec::new(), None);
    let (mut model, mut measured_s) = (None, f64::NAN);
    for (k, &v) in sweep.values.iter().enumerate() {
        let (m, p, coll) = sweep.at(a, coll, v);
        // A value whose parameters are invalid (a factor that leaves `Op` above `T3`) is a
        // failed point, as one whose replay fails: the other values still answer.
        let resolved = m.resolve(&p, &trace.meta.sets(), trace.meta.eager_limit.as_ref());
        let at_speed = |mut r| match &run_speed {
            Some(run) => run.apply(&mut r).map(|()| r),
            None => Ok(r),
        };
        let resolved = match resolved.and_then(at_speed) {
            Ok(r) => r,
            Err(e) => {
                points.push(report::sweep::Point::failed(v, &e.to_string()));
                first_error.get_or_insert(e);
                continue;
            }
        };
        let remap = match (placed, v) {
            (true, Value::Number(n)) => Remap::PerNode(n as u32),
            _ => super::agreed(a.remap(), split)?,
        };
        let links = links_for(&resolved, trace, &remap, split)?;
        if k == 0 {
            super::warn_oversubscribed(trace);
        }
        if k == 0 && links.is_none() {
            super::warn_placement(trace, resolved.cores());
        }
        for w in links.iter().flat_map(|l| &l.warnings) {
            warn(format!("{}={v}: {w}", sweep.label()));
        }
        let label = format!(
            "replaying {}={v} ({} of {})",
            sweep.label(),
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
                    warn(format!("{}={v}: {w}", sweep.label()));
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
            warn(format!("{}={}: {e}", sweep.label(), p.value));
        }
    }
    let model = model.expect("a sweep has a value at least");
    let mut report =
        report::sweep::SweepReport::new(&name, trace, &model, &sweep.label(), measured_s, points);
    report.events = all_events(trace, census);
    report.at_run_speed = run_speed.map(|r| r.said).unwrap_or_default();
    if let Some(path) = &a.svg {
        super::write_svg(path, &report.svg())?;
    }
    let res = to_stdout(|out| report.write(a.format, out));
    quiet_pipe(res, "writing the report")
}
