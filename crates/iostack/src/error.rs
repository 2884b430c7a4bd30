//! Error types shared by the whole crate.
//!
//! Every error a user can cause names what was wrong precisely enough to fix it: a trace error
//! names the file, the line (text formats) or record (binary formats) and the field; a
//! configuration error names the option and, for unknown names, lists the valid ones.

use std::fmt;
use std::path::{Path, PathBuf};

/// Where in a trace an error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// 1-based line number of a text trace.
    Line(u64),
    /// 1-based record number of a binary trace.
    Record(u64),
    /// 1-based number of a request among those the reader returned (checks made after parsing,
    /// where the line is no longer known).
    Request(u64),
    /// The file as a whole (open failure, empty trace, undetectable format).
    File,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(n) => write!(f, "line {n}"),
            Location::Record(n) => write!(f, "record {n}"),
            Location::Request(n) => write!(f, "request {n}"),
            Location::File => Ok(()),
        }
    }
}

/// An error reading or writing a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// The trace file (or `<memory>` for in-memory traces).
    pub path: PathBuf,
    pub location: Location,
    /// The field that could not be parsed, when the error concerns one field.
    pub field: Option<String>,
    pub message: String,
}

impl TraceError {
    pub fn new(path: &Path, location: Location, field: Option<&str>, message: impl Into<String>) -> Self {
        TraceError {
            path: path.to_path_buf(),
            location,
            field: field.map(str::to_string),
            message: message.into(),
        }
    }

    /// An error about the file as a whole.
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        Self::new(path, Location::File, None, message)
    }

    /// An I/O error on the file as a whole.
    pub fn io(path: &Path, err: &std::io::Error) -> Self {
        Self::file(path, err.to_string())
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if self.location != Location::File {
            write!(f, ": {}", self.location)?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for TraceError {}

/// An impossible or unknown configuration: a bad option value, an unknown policy or format name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The option or parameter concerned, e.g. `--cache` or `policy.bank`.
    pub option: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(option: impl Into<String>, message: impl Into<String>) -> Self {
        ConfigError { option: option.into(), message: message.into() }
    }

    /// An unknown name, listing the valid ones.
    pub fn unknown(option: impl Into<String>, what: &str, given: &str, valid: &[&str]) -> Self {
        ConfigError::new(option, format!("unknown {what} `{given}`; valid: {}", valid.join(", ")))
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.option, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// Any error of the library, for callers that do not care which kind.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}
