//! Where command output goes, and whether progress bars are shown.

use std::io::{IsTerminal, Write};
use std::path::Path;

use iostack::table::{Row, TableFormat};

/// Destination of a command's results (stdout) and progress (stderr, only on a terminal).
pub struct Output {
    progress: bool,
}

impl Output {
    pub fn stdout() -> Output {
        Output { progress: std::io::stderr().is_terminal() }
    }

    /// Whether to draw progress bars.
    pub fn progress(&self) -> bool {
        self.progress
    }

    /// Writes `text` to stdout; a closed pipe (e.g. `| head`) is not an error.
    pub fn print(&self, text: &str) -> anyhow::Result<()> {
        let mut so = std::io::stdout().lock();
        match so.write_all(text.as_bytes()).and_then(|_| so.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            r => Ok(r?),
        }
    }
}

/// Checks that `--output PATH` names a table format, before any work is done.
pub fn check_table_path(path: Option<&Path>) -> anyhow::Result<()> {
    if let Some(p) = path {
        TableFormat::from_path("--output", p)?;
    }
    Ok(())
}

/// Writes `rows` to `path` (format from its extension) whole, through a temporary file renamed
/// into place, so that a failure leaves nothing half-written.
pub fn write_table(path: &Path, rows: &[Row]) -> anyhow::Result<()> {
    iostack::table::write(path, rows).map_err(|e| anyhow::anyhow!("--output: {e}"))
}
