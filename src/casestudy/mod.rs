//! The Gaussian-elimination case study (paper §4.4–4.5): the paper's Table 7 and Fig. 6 for a
//! directory of recorded traces (`loggps-predict table7`), and baselines of predictions for
//! regression checks (`loggps-predict check`).

pub mod check;
pub mod svg;

use crate::error::Error;
use crate::model::Params;
use crate::replay::Prediction;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One line of `MANIFEST.tsv`: what `traces/record.sh` ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub file: String,
    pub n: u64,
    pub ranks: u32,
    pub library: String,
    pub eager_limit: u64,
    pub variant: String,
    pub mode: String,
    pub run: u32,
    /// The CPUs of the machine it ran on (the `cpus` column; None where the manifest has none).
    pub cpus: Option<u32>,
}

impl Run {
    /// Whether it ran more ranks than its machine had CPUs: they took turns, which the model
    /// does not cost.
    pub fn oversubscribed(&self) -> bool {
        self.cpus.is_some_and(|c| self.ranks > c)
    }
}

/// Reads `DIR/MANIFEST.tsv` (tab-separated: file n P library eager_limit variant mode run …;
/// `#` comments are skipped; the header line, starting with `file`, names the columns, of
/// which an optional `cpus` is read).
pub fn read_manifest(dir: &Path) -> Result<Vec<Run>, Error> {
    let path = dir.join("MANIFEST.tsv");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::Io(format!("{}: cannot read the manifest: {e}", path.display())))?;
    let mut runs = Vec::new();
    let mut cpus_at = None;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with("file") {
            cpus_at = line.split('\t').position(|c| c.trim() == "cpus");
            continue;
        }
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let bad = |what: &str| {
            Error::Io(format!(
                "{}: line {}: expected {what}, found `{line}`",
                path.display(),
                i + 1
            ))
        };
        if f.len() < 8 {
            return Err(bad(
                "at least 8 tab-separated fields (file n P library eager_limit variant mode run)",
            ));
        }
        let num = |j: usize, what: &str| f[j].trim().parse::<u64>().map_err(|_| bad(what));
        runs.push(Run {
            file: f[0].to_string(),
            n: num(1, "n as an integer")?,
            ranks: num(2, "P as an integer")? as u32,
            library: f[3].to_string(),
            eager_limit: num(4, "the eager limit in bytes")?,
            variant: f[5].to_string(),
            mode: f[6].to_string(),
            run: num(7, "the run number")? as u32,
            cpus: match cpus_at {
                Some(j) if j < f.len() => Some(num(j, "the machine's CPUs as an integer")? as u32),
                _ => None,
            },
        });
    }
    Ok(runs)
}

/// One row of the JSON: a trace predicted as it ran, or a what-if.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub trace: String,
    pub n: u64,
    pub ranks: u32,
    pub eager_limit: u64,
    pub variant: String,
    pub mode: String,
    pub measured_s: f64,
    pub predicted_s: f64,
    pub error_pct: f64,
    /// For what-if rows: the configuration predicted from (`eager_limit=…`); `measured_s` is
    /// then the median of the target configuration's runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whatif_from: Option<String>,
    /// More ranks ran than the machine had CPUs ([`Run::oversubscribed`]): the error is the
    /// machine's taking turns, not the model's.
    pub oversubscribed: bool,
    /// The Fig. 6 breakdown, averaged over ranks, as fractions of the average end time.
    pub computation: f64,
    pub communication: f64,
    pub sender_sync: f64,
    pub receiver_sync: f64,
}

/// The whole study.
#[derive(Clone, Debug, Serialize)]
pub struct Study {
    pub rows: Vec<Row>,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

fn row(
    run: &Run,
    trace: String,
    p: &Prediction,
    measured_s: f64,
    whatif_from: Option<String>,
) -> Row {
    let n = p.ranks.len().max(1) as f64;
    let avg =
        |f: &dyn Fn(&crate::replay::RankBreakdown) -> f64| p.ranks.iter().map(f).sum::<f64>() / n;
    let end = avg(&|b| b.end_ns).max(f64::MIN_POSITIVE);
    let predicted_s = p.predicted_ns * 1e-9;
    Row {
        trace,
        n: run.n,
        ranks: run.ranks,
        eager_limit: run.eager_limit,
        variant: run.variant.clone(),
        mode: run.mode.clone(),
        measured_s,
        predicted_s,
        error_pct: 100.0 * (predicted_s - measured_s) / measured_s,
        whatif_from,
        oversubscribed: run.oversubscribed(),
        computation: avg(&|b| b.computation_ns) / end,
        communication: avg(&|b| b.communication_ns) / end,
        sender_sync: avg(&|b| b.sender_sync_ns) / end,
        receiver_sync: avg(&|b| b.receiver_sync_ns) / end,
    }
}

/// The `S` of a run with the library's eager limit set to `limit`. The embedded parameters
/// were calibrated under the smallest limit of the study (the library's default): the
/// difference between that limit and the measured `S` is the protocol header the limit counts,
/// the same for every limit.
fn s_for(limit: u64, embedded: &Params, calibrated_limit: u64) -> u64 {
    limit.saturating_sub(calibrated_limit.saturating_sub(embedded.S))
}

/// Predicts every trace of the manifest, then the what-if rows: each original-code
/// configuration predicted from the other eager limit's traces (`S` changed, nothing else),
/// against the median measured time of the target configuration's runs.
pub fn study(dir: &Path, progress: &mut dyn FnMut(usize, usize)) -> Result<Study, Error> {
    let runs = read_manifest(dir)?;
    let calibrated_limit = runs.iter().map(|r| r.eager_limit).min().unwrap_or(0);
    let mut rows = Vec::new();
    let mut done: Vec<(Run, PathBuf, Params, f64)> = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        progress(i, runs.len());
        let path = dir.join(&run.file);
        let trace = crate::trace::load(&path, &mut |w| eprintln!("warning: {w}"))?;
        let measured = trace.measured_span_ns().1 * 1e-9;
        let embedded = trace.meta.params.ok_or_else(|| {
            Error::Params(format!(
                "{}: no LogGPS parameters embedded (record.sh embeds traces/params.toml)",
                path.display()
            ))
        })?;
        let params = Params {
            S: s_for(run.eager_limit, &embedded, calibrated_limit),
            ..embedded
        };
        let p = crate::predict(&path, &trace, &params, &|_| {})?;
        rows.push(row(run, run.file.clone(), &p, measured, None));
        done.push((run.clone(), path, embedded, measured));
    }
    let mut limits: Vec<u64> = runs
        .iter()
        .filter(|r| r.variant == "original")
        .map(|r| r.eager_limit)
        .collect();
    limits.sort_unstable();
    limits.dedup();
    for (run, path, embedded, _) in done.iter().filter(|(r, ..)| r.variant == "original") {
        for &target in limits.iter().filter(|&&l| l != run.eager_limit) {
            let mut target_measured: Vec<f64> = done
                .iter()
                .filter(|(r, ..)| {
                    r.variant == "original"
                        && r.eager_limit == target
                        && (r.n, r.ranks, &r.mode) == (run.n, run.ranks, &run.mode)
                })
                .map(|(.., m)| *m)
                .collect();
            if target_measured.is_empty() {
                continue;
            }
            let trace = crate::trace::load(path, &mut |_| {})?;
            let params = Params {
                S: s_for(target, embedded, calibrated_limit),
                ..*embedded
            };
            let p = crate::predict(path, &trace, &params, &|_| {})?;
            let mut r = row(
                run,
                run.file.clone(),
                &p,
                median(&mut target_measured),
                Some(format!("eager_limit={}", run.eager_limit)),
            );
            r.eager_limit = target;
            rows.push(r);
        }
    }
    Ok(Study { rows })
}

/// A configuration of the study: which runs' medians a Table 7 cell shows.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Config {
    pub ranks: u32,
    pub mode: String,
    pub n: u64,
    pub variant: String,
    pub eager_limit: u64,
    pub whatif_from: Option<String>,
}

impl Row {
    pub fn config(&self) -> Config {
        Config {
            ranks: self.ranks,
            mode: self.mode.clone(),
            n: self.n,
            variant: self.variant.clone(),
            eager_limit: self.eager_limit,
            whatif_from: self.whatif_from.clone(),
        }
    }
}

/// Medians over a configuration's runs: measured, predicted, and the Fig. 6 shares.
#[derive(Clone, Debug)]
pub struct Cell {
    pub runs: usize,
    pub measured_s: f64,
    pub predicted_s: f64,
    pub error_pct: f64,
    pub shares: [f64; 4],
}

/// Every configuration with the medians of its runs, in a stable order.
pub fn cells(study: &Study) -> Vec<(Config, Cell)> {
    let mut configs: Vec<Config> = study.rows.iter().map(Row::config).collect();
    configs.sort();
    configs.dedup();
    configs
        .into_iter()
        .map(|c| {
            let rows: Vec<&Row> = study.rows.iter().filter(|r| r.config() == c).collect();
            let med = |f: &dyn Fn(&Row) -> f64| {
                median(&mut rows.iter().map(|r| f(r)).collect::<Vec<_>>())
            };
            let (m, p) = (med(&|r| r.measured_s), med(&|r| r.predicted_s));
            let shares = [
                med(&|r| r.computation),
                med(&|r| r.communication),
                med(&|r| r.sender_sync),
                med(&|r| r.receiver_sync),
            ];
            (
                c,
                Cell {
                    runs: rows.len(),
                    measured_s: m,
                    predicted_s: p,
                    error_pct: 100.0 * (p - m) / m,
                    shares,
                },
            )
        })
        .collect()
}

/// The column a configuration goes in: `(label, sort key)`.
fn column(c: &Config) -> String {
    match (&c.whatif_from, c.variant.as_str()) {
        (Some(from), _) => format!("original, S={} predicted from {from}", c.eager_limit),
        (None, "original") => format!("original, S={}", c.eager_limit),
        (None, v) => format!("{v}, S={}", c.eager_limit),
    }
}

/// README.md's case-study table: the 2-rank blocking runs at each size, each configuration's
/// medians (measured, predicted, error %), the what-if of `S = 65536` from the traces of the
/// default limit beside them. Between the README's `table7` markers, checked by
/// tests/casestudy.rs.
pub fn markdown(study: &Study) -> String {
    use std::fmt::Write;
    let cells = cells(study);
    let of = |n: u64, variant: &str, limit: u64, whatif: bool| {
        cells.iter().find(|(c, _)| {
            c.ranks == 2
                && c.mode == "blocking"
                && c.n == n
                && c.variant == variant
                && c.eager_limit == limit
                && c.whatif_from.is_some() == whatif
        })
    };
    let pct = |e: f64| format!("{e:+.1}").replace('-', "−");
    let mut ns: Vec<u64> = cells.iter().map(|(c, _)| c.n).collect();
    ns.sort_unstable();
    ns.dedup();
    let mut out = String::from(
        "| n | S=4096: meas | pred | err | S=64K (M1): meas | pred | err | fragmented (M2): meas | pred | err | S=64K predicted from the S=4096 traces | err |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for n in ns {
        let _ = write!(out, "| {n} |");
        for (variant, limit) in [
            ("original", 4096),
            ("original", 65536),
            ("fragmented", 4096),
        ] {
            match of(n, variant, limit, false) {
                Some((_, c)) => {
                    let (m, p, e) = (c.measured_s, c.predicted_s, pct(c.error_pct));
                    let _ = write!(out, " {m:.4} | {p:.4} | {e} |");
                }
                None => out.push_str(" – | – | – |"),
            }
        }
        match of(n, "original", 65536, true) {
            Some((_, c)) => {
                let _ = write!(out, " {:.4} | {} |", c.predicted_s, pct(c.error_pct));
            }
            None => out.push_str(" – | – |"),
        }
        out.push('\n');
    }
    out
}

/// The paper's Table 7 for these runs (medians over runs), then the Fig. 6 breakdown.
pub fn table(study: &Study) -> String {
    use std::fmt::Write;
    let cells = cells(study);
    let mut out = String::new();
    let mut groups: Vec<(u32, String)> = cells
        .iter()
        .map(|(c, _)| (c.ranks, c.mode.clone()))
        .collect();
    groups.dedup();
    for (ranks, mode) in groups {
        let mine: Vec<&(Config, Cell)> = cells
            .iter()
            .filter(|(c, _)| c.ranks == ranks && c.mode == mode)
            .collect();
        let mut cols: Vec<String> = mine.iter().map(|(c, _)| column(c)).collect();
        cols.sort_by_key(|c| {
            (
                c.contains("predicted from"),
                c.starts_with("fragmented"),
                c.clone(),
            )
        });
        cols.dedup();
        let mut ns: Vec<u64> = mine.iter().map(|(c, _)| c.n).collect();
        ns.dedup();
        let _ = writeln!(
            out,
            "Table 7: {ranks} ranks, {mode} — measured and predicted times (s, medians over runs), error (%)"
        );
        let over = study
            .rows
            .iter()
            .any(|r| r.ranks == ranks && r.mode == mode && r.oversubscribed);
        if over {
            let _ = writeln!(
                out,
                "  OVERSUBSCRIBED: these runs had more ranks than their machine had CPUs, and the ranks took turns; the model costs no contention for cores, so these errors are the machine's, not the model's"
            );
        }
        for (i, col) in cols.iter().enumerate() {
            let _ = writeln!(out, "  ({}) {col}", (b'a' + i as u8) as char);
        }
        let _ = write!(out, "{:>6}", "n");
        for i in 0..cols.len() {
            let _ = write!(
                out,
                " | {:>9} {:>9} {:>6}",
                format!("meas({})", (b'a' + i as u8) as char),
                "pred",
                "err"
            );
        }
        let _ = writeln!(out);
        for n in &ns {
            let _ = write!(out, "{n:>6}");
            for col in &cols {
                match mine.iter().find(|(c, _)| c.n == *n && column(c) == *col) {
                    Some((_, cell)) => {
                        let _ = write!(
                            out,
                            " | {:>9.4} {:>9.4} {:>+6.1}",
                            cell.measured_s, cell.predicted_s, cell.error_pct
                        );
                    }
                    None => {
                        let _ = write!(out, " | {:>9} {:>9} {:>6}", "—", "—", "");
                    }
                }
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(
            out,
            "\nFig. 6: breakdown of the predicted time, averaged over ranks (medians over runs)"
        );
        let _ = writeln!(
            out,
            "{:>6}  {:<48} {:>8} {:>8} {:>8} {:>8}",
            "n", "configuration", "comp", "comm", "send-sync", "recv-sync"
        );
        for (c, cell) in &mine {
            let s = cell.shares;
            let _ = writeln!(
                out,
                "{:>6}  {:<48} {:>7.1}% {:>7.1}% {:>8.1}% {:>8.1}%",
                c.n,
                column(c),
                100.0 * s[0],
                100.0 * s[1],
                100.0 * s[2],
                100.0 * s[3]
            );
        }
        let _ = writeln!(out);
    }
    out
}
