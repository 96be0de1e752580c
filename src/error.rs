//! Errors as values that carry where the problem is: file, byte offset or line, rank, event.

use std::fmt;

/// Something wrong with a trace: what was expected, and exactly where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub file: Box<str>,
    pub offset: Option<u64>,
    pub line: Option<usize>,
    pub rank: Option<usize>,
    pub event: Option<usize>,
    /// The event's routine, by its MPI name.
    pub routine: Option<&'static str>,
    pub message: String,
}

impl TraceError {
    /// An error about the file as a whole.
    pub fn at(file: &str, message: String) -> TraceError {
        TraceError {
            file: file.into(),
            offset: None,
            line: None,
            rank: None,
            event: None,
            routine: None,
            message,
        }
    }

    /// An error at a byte offset of a binary trace.
    pub fn offset(file: &str, offset: u64, message: String) -> TraceError {
        TraceError {
            offset: Some(offset),
            ..TraceError::at(file, message)
        }
    }

    /// An error at a line of a text trace.
    pub fn line(file: &str, line: usize, message: String) -> TraceError {
        TraceError {
            line: Some(line),
            ..TraceError::at(file, message)
        }
    }

    /// An error about event `event` of rank `rank`.
    pub fn event(
        file: &str,
        rank: usize,
        event: usize,
        routine: &'static str,
        message: String,
    ) -> TraceError {
        TraceError {
            rank: Some(rank),
            event: Some(event),
            routine: Some(routine),
            ..TraceError::at(file, message)
        }
    }

    /// The same error, located at rank `rank`, event `event`.
    pub fn in_event(mut self, rank: usize, event: usize) -> TraceError {
        self.rank = Some(rank);
        self.event = Some(event);
        self
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(o) = self.offset {
            write!(f, ": byte {o}")?;
        }
        if let Some(l) = self.line {
            write!(f, ": line {l}")?;
        }
        match (self.rank, self.event) {
            (Some(r), Some(i)) => write!(f, ": rank {r}, event {i}")?,
            (Some(r), None) => write!(f, ": rank {r}")?,
            _ => {}
        }
        if let Some(r) = self.routine {
            write!(f, " ({r})")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for TraceError {}

/// Any error the pipeline reports; every one exits with status 2.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Trace(#[from] TraceError),
    #[error("{0}")]
    Params(String),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Io(String),
    /// Not enough memory for what a phase was about to take.
    #[error("{0}")]
    Memory(#[from] crate::memory::Shortfall),
}
