//! The per-rank breakdown as CSV, one row per rank, then the average row.

use super::{Exporter, Parts, Report};
use std::io::{self, Write};

pub struct Csv;

fn row(out: &mut dyn Write, rank: &str, p: &Parts, measured: String) -> io::Result<()> {
    writeln!(
        out,
        "{rank},{},{},{},{},{},{measured}",
        p.end_s, p.computation_s, p.communication_s, p.sender_sync_s, p.receiver_sync_s
    )
}

impl Exporter for Csv {
    fn write(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "rank,end_s,computation_s,communication_s,sender_sync_s,receiver_sync_s,measured_end_s"
        )?;
        for r in &report.ranks {
            row(
                out,
                &r.rank.to_string(),
                &r.parts,
                r.measured_end_s.to_string(),
            )?;
        }
        row(out, "average", &report.average, String::new())
    }
}
