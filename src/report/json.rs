//! The report as one JSON object (the keys are documented in the README).

use super::{Exporter, Report};
use std::io::{self, Write};

pub struct Json;

impl Exporter for Json {
    fn write(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, report)?;
        writeln!(out)
    }
}
