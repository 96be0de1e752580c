//! The per-rank breakdown as CSV, one row per rank, then the average row; each row ends with
//! the model and its parameters' values (the header names them).

use super::{Exporter, Parts, Report};
use std::io::{self, Write};

pub struct Csv;

fn row(
    out: &mut dyn Write,
    rank: &str,
    p: &Parts,
    measured: String,
    model: &str,
) -> io::Result<()> {
    writeln!(
        out,
        "{rank},{},{},{},{},{},{measured},{model}",
        p.end_s, p.computation_s, p.communication_s, p.sender_sync_s, p.receiver_sync_s
    )
}

impl Exporter for Csv {
    fn write(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        let names: Vec<&str> = report.params.0.iter().map(|(n, _)| n.as_str()).collect();
        let values: Vec<String> = report
            .params
            .0
            .iter()
            .map(|(_, p)| p.value.to_string())
            .collect();
        let model = format!("{},{}", report.model, values.join(","));
        writeln!(
            out,
            "rank,end_s,computation_s,communication_s,sender_sync_s,receiver_sync_s,measured_end_s,model,{}",
            names.join(",")
        )?;
        for r in &report.ranks {
            row(
                out,
                &r.rank.to_string(),
                &r.parts,
                r.measured_end_s.to_string(),
                &model,
            )?;
        }
        row(out, "average", &report.average, String::new(), &model)
    }
}
