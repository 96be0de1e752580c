//! `loggps-predict calibrate`: this machine's LogGPS parameters from an MPI round-trip program.

use clap::Args;
use loggps_predict::calibrate::{self, Calibration};
use loggps_predict::error::Error;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Ranks (the round trip runs on exactly 2)
    #[arg(long, default_value_t = 2)]
    pub np: u32,
    /// MPI launcher with its own options, split at spaces (e.g. "mpirun --oversubscribe")
    #[arg(long, default_value = "mpirun")]
    pub mpirun: String,
    /// Where to write the parameters (TOML, read by --params)
    #[arg(short, long, default_value = "loggps-params.toml")]
    pub output: PathBuf,
    /// Where to draw measured vs modeled RTT (default: OUTPUT with .svg)
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Also write every measured point and the model's value (TSV)
    #[arg(long, value_name = "FILE")]
    pub samples: Option<PathBuf>,
    /// The round-trip program (built by `make -C tracer`; by default looked for beside this
    /// binary, then in the tracer/ of this source tree and of the current directory)
    #[arg(long)]
    pub rtt: Option<PathBuf>,
    /// The tracer library, used to read the eager limit the MPI library reports (looked for
    /// as --rtt is)
    #[arg(long)]
    pub tracer: Option<PathBuf>,
    /// Largest message size measured, bytes
    #[arg(long, default_value_t = 4 << 20)]
    pub max_bytes: u64,
    /// The imbalance W, ns (it hides the transfer of messages that take less)
    #[arg(long, default_value_t = 500_000)]
    pub imbalance: u64,
    /// Repetitions per point at least; the median is kept
    #[arg(long, default_value_t = 31)]
    pub reps: u32,
    /// More repetitions while a point has taken less than this, ms
    #[arg(long, default_value_t = 30.0)]
    pub time_ms: f64,
    /// Sizes per octave in the first sweep
    #[arg(long, default_value_t = 4)]
    pub per_octave: u32,
}

/// Where a file of the tracer's build is looked for when no flag names it: beside this binary
/// (an installed copy), then in the tracer/ of the source tree it was built from and of the
/// current directory: the plain build (`make -C tracer`) first, else the one of the MPI that
/// `mpirun` names (`mpirun.openmpi`: build-openmpi/).
fn candidates(name: &str, mpirun: &str) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.to_path_buf()))
    {
        dirs.push(dir);
    }
    let builds = match mpirun {
        m if m.ends_with(".mpich") => ["", "build-mpich"],
        _ => ["", "build-openmpi"],
    };
    for root in [
        PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        PathBuf::from("."),
    ] {
        dirs.extend(builds.map(|b| root.join("tracer").join(b)));
    }
    dirs.into_iter().map(|d| d.join(name)).collect()
}

/// The file `flag` names, else the first of [`candidates`] that exists, else an error saying
/// where it looked and what to build.
fn found(flag: &Option<PathBuf>, name: &str, mpirun: &str) -> Result<PathBuf, Error> {
    if let Some(p) = flag {
        return Ok(p.clone());
    }
    let looked = candidates(name, mpirun);
    if let Some(p) = looked.iter().find(|p| p.exists()) {
        return Ok(p.clone());
    }
    let list: Vec<String> = looked.iter().map(|p| p.display().to_string()).collect();
    Err(Error::Usage(format!(
        "{name} not found (looked in {}): build it with `make -C {}/tracer` with the MPI you \
         calibrate, or name it with --{}",
        list.join(", "),
        env!("CARGO_MANIFEST_DIR"),
        if name.ends_with(".so") {
            "tracer"
        } else {
            "rtt"
        }
    )))
}

pub(super) fn calibrate(a: &CalibrateArgs) -> Result<(), Error> {
    let launcher = a.mpirun.split_whitespace().next().unwrap_or("mpirun");
    let opts = calibrate::Options {
        mpirun: a.mpirun.split_whitespace().map(String::from).collect(),
        np: a.np,
        rtt: found(&a.rtt, "loggps-rtt", launcher)?,
        tracer: match found(&a.tracer, "libloggps-trace.so", launcher) {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("calibrate: {e}; the eager limit the library reports is not read");
                None
            }
        },
        max_bytes: a.max_bytes,
        imbalance_ns: a.imbalance,
        reps: a.reps,
        time_ms: a.time_ms,
        per_octave: a.per_octave,
    };
    let c = calibrate::calibrate(&opts, &mut |m| eprintln!("calibrate: {m}"))?;
    let write = |path: &Path, text: String| {
        std::fs::write(path, text)
            .map_err(|e| Error::Io(format!("{}: cannot write: {e}", path.display())))
    };
    write(&a.output, calibrate::params_file(&c))?;
    let svg = a
        .svg
        .clone()
        .unwrap_or_else(|| a.output.with_extension("svg"));
    write(&svg, calibrate::svg::chart(&c))?;
    if let Some(path) = &a.samples {
        let mut t = String::from("k\tw_ns\trtt_ns\tmodel_ns\terror_pct\toutlier\n");
        for x in &c.samples {
            let m = calibrate::fit::model_rtt(&c.fit.params, x.k, x.w_ns);
            let outlier = c.fit.outliers.contains(x);
            t.push_str(&format!(
                "{}\t{}\t{}\t{:.1}\t{:.2}\t{}\n",
                x.k,
                x.w_ns,
                x.rtt_ns,
                m,
                100.0 * (m - x.rtt_ns) / x.rtt_ns,
                outlier
            ));
        }
        write(path, t)?;
    }
    print_calibration(&c, &a.output, &svg);
    Ok(())
}

fn print_calibration(c: &Calibration, toml: &Path, svg: &Path) {
    let p = &c.fit.params;
    println!(
        "parameters  L={:.1} ns  o={:.1} ns  Os={:.4} ns/B  Or={:.4} ns/B  Gs={:.4} ns/B  Gl={:.4} ns/B  s={} B  S={} B",
        p.L, p.o, p.Os, p.Or, p.Gs, p.Gl, p.s, p.S
    );
    println!(
        "fit         {} round trips: model vs measured rms {:.2}%, max {:.2}%; {} outlier(s) dropped",
        c.samples.len(),
        100.0 * c.fit.rms_rel,
        100.0 * c.fit.max_rel,
        c.fit.outliers.len()
    );
    match (&c.reported_eager_limit, c.eager_limits_agree()) {
        (Some((name, bytes)), Some(true)) => println!(
            "eager limit measured S = {} B agrees with {name} = {bytes} B (which counts the protocol header)",
            p.S
        ),
        (Some((name, bytes)), _) => println!(
            "eager limit measured S = {} B DISAGREES with {name} = {bytes} B reported by the library",
            p.S
        ),
        (None, _) => println!(
            "eager limit measured S = {} B (the library reports none)",
            p.S
        ),
    }
    println!(
        "failed poll {:.0} ns (MPI_Test, MPI_Iprobe on one request; written commented out: \
         a trace's own failed polls keep their durations unless --poll or `poll` is set)",
        c.poll_ns
    );
    let [a0, aw] = c.fit.rendezvous_intercepts_ns;
    let [m0, mw] = c.fit.modeled_rendezvous_intercepts_ns;
    if (a0, aw) != (m0, mw) {
        println!(
            "rendezvous  the handshake is not LogGPS's: intercepts measured {a0:.0} ns (w = 0) and {aw:.0} ns (w = W), modeled 12o+6L = {m0:.0} ns and 10o+4L = {mw:.0} ns"
        );
    }
    for w in p.warnings() {
        println!("warning     {w}");
    }
    println!("wrote       {} and {}", toml.display(), svg.display());
}
