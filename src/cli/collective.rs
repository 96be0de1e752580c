//! `loggps-predict collective OP`: a collective's predicted completion time by a named
//! algorithm under LogGPS or LogGP — the calculator over `src/collectives`.

use super::args::{ModelArgs, ParamArgs};
use clap::ValueEnum;
use loggps_predict::collectives::traced::TUNED;
use loggps_predict::collectives::{self, Completion, Op, Spec};
use loggps_predict::error::Error;
use loggps_predict::model::Model;

/// Predict one collective call from its algorithm's point-to-point schedule.
#[derive(clap::Args, Debug)]
#[command(
    about = "Predict a collective's completion time from a named algorithm (LogGPS or LogGP)",
    long_about = "Predict a collective's completion time: the algorithm expands the call into point-to-point \
        messages and the model costs them, every rank calling at time 0.\n\n\
        OP and its algorithms (the first is the default):\n  \
        barrier: dissemination\n  bcast: binomial, scatter-allgather, pipeline, postal\n  \
        reduce: binomial, linear, rabenseifner\n  allreduce: recursive-doubling, binomial, rabenseifner, ring\n  \
        gather: binomial, linear\n  scatter: binomial, linear (the LogGP paper's Simple Long-Message), short-message, optimal\n  \
        allgather: recursive-doubling, ring, bruck\n  alltoall: pairwise (= linear), bruck\n  \
        reduce_scatter: recursive-halving, ring, pairwise\n  scan, exscan: recursive-doubling, linear\n\
        Any OP: tuned, the algorithm Open MPI 4.1's rules pick for --ranks and --bytes (as predictions do).\n\n\
        --bytes is MPI's count in bytes: the message (bcast), the vector (reduce, allreduce, scan), the block per \
        rank (gather, scatter, allgather, reduce_scatter) or per pair (alltoall).\n\n\
        The LogGP paper's Table 3 (P = 1024, simplified LogGP):\n  \
        loggps-predict collective scatter --algorithm optimal --ranks 1024 --bytes 10 --model loggp --L 30 --g 10 --G 1"
)]
pub struct CollectiveArgs {
    /// The collective (barrier, bcast, reduce, allreduce, gather, scatter, allgather, alltoall, reduce_scatter, scan, exscan)
    pub op: String,
    /// The algorithm that expands it (see above; `default` picks the first, `tuned` the one
    /// Open MPI 4.1's rules pick for these ranks and bytes, as predictions do)
    #[arg(long, default_value = "default")]
    pub algorithm: String,
    /// Number of ranks P
    #[arg(long)]
    pub ranks: u64,
    /// Bytes K (per rank or per pair where MPI counts so)
    #[arg(long, default_value_t = 0)]
    pub bytes: u64,
    /// Root of rooted collectives
    #[arg(long, default_value_t = 0)]
    pub root: u64,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub params: ParamArgs,
    /// Pipeline segment size, bytes (bcast --algorithm pipeline)
    #[arg(long, value_name = "BYTES", default_value_t = 8192)]
    pub segment: u64,
    /// Postal-model latency in sends (bcast --algorithm postal; default: from the model)
    #[arg(long, value_name = "STEPS")]
    pub h: Option<f64>,
    /// Output format (json: for scripts)
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

/// Runs the calculator and prints its answer.
pub fn run(a: &CollectiveArgs) -> Result<(), Error> {
    let op = Op::parse(&a.op)?;
    if a.ranks == 0 {
        return Err(Error::Usage("--ranks must be at least 1".into()));
    }
    let ranks = usize::try_from(a.ranks)
        .ok()
        .filter(|&r| r <= collectives::MAX_RANKS)
        .ok_or_else(|| {
            Error::Usage(format!(
                "--ranks {} is more than this calculator builds schedules for ({})",
                a.ranks,
                collectives::MAX_RANKS
            ))
        })?;
    if a.root >= a.ranks {
        return Err(Error::Usage(format!(
            "--root {} is not a rank of {}",
            a.root, a.ranks
        )));
    }
    if a.h.is_some_and(|h| !h.is_finite() || h <= 0.0) {
        return Err(Error::Usage(
            "--h must be a positive number of steps".into(),
        ));
    }
    let (algorithm, segment) = match a.algorithm.as_str() {
        TUNED => collectives::openmpi::tuned_algorithm(op, ranks, a.bytes),
        name => (op.algorithm(name)?, None),
    };
    let spec = Spec {
        ranks,
        bytes: a.bytes,
        root: a.root as usize,
        segment: segment.unwrap_or(a.segment.max(1)),
        postal_h: a.h,
    };
    let resolved = a.model.resolve(&a.params, &[], None)?;
    super::warn_one_set(&resolved, "collective");
    let reduced = collectives::copies::reduced(op, &spec);
    let (model, gamma) = (resolved.model(), resolved.gamma(reduced));
    // Every rank calls at 0; its part starts its copies later, and ends `oc` later where it
    // receives (the model's §8, §15).
    let mut starts = vec![0.0; spec.ranks];
    let shape = (op, algorithm, &spec);
    let after =
        collectives::copies::own_work(shape, collectives::copies::Work::of(&model), &mut starts);
    let (mut c, described) = match &model {
        Model::LogGps(p) => (
            collectives::predict_from(op, algorithm, &spec, p, gamma, &starts)?,
            format!("LogGPS {p}"),
        ),
        Model::LogGp(m) => (
            collectives::predict_from(op, algorithm, &spec, m, gamma, &starts)?,
            format!("LogGP L={} o={} g={} G={}", m.L, m.o, m.g, m.G),
        ),
    };
    if let Some(after) = &after {
        collectives::copies::add_after(&mut c, after);
    }
    print!(
        "{}",
        render(a, op, algorithm, &spec, &c, model.name(), &described)
    );
    Ok(())
}

fn render(
    a: &CollectiveArgs,
    op: Op,
    algorithm: &str,
    spec: &Spec,
    c: &Completion,
    model: &str,
    described: &str,
) -> String {
    match a.format {
        Format::Json => {
            let v = serde_json::json!({
                "op": op.name(),
                "algorithm": algorithm,
                "model": model,
                "ranks": spec.ranks,
                "bytes": spec.bytes,
                "root": spec.root,
                "messages": c.messages,
                "bytes_moved": c.bytes,
                "predicted_ns": c.time_ns,
            });
            format!(
                "{}\n",
                serde_json::to_string_pretty(&v).expect("plain JSON")
            )
        }
        Format::Table => format!(
            "collective   {}\nalgorithm    {algorithm}\nmodel        {described}\nranks        {}\nbytes        {}\n\
             messages     {}\nbytes moved  {}\npredicted    {:.3} ns\n",
            op.name(),
            spec.ranks,
            spec.bytes,
            c.messages,
            c.bytes,
            c.time_ns
        ),
    }
}
