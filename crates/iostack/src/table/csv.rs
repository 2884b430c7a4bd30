//! CSV tables (RFC 4180): a header of column names, then one line per row; a cell with a comma,
//! a quote or a line break is quoted, quotes doubled.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use super::{cell_text, Row};

fn field(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    if text.contains([',', '"', '\n', '\r']) {
        write!(out, "\"{}\"", text.replace('"', "\"\""))
    } else {
        out.write_all(text.as_bytes())
    }
}

/// The header and every row.
pub fn write(out: &mut impl Write, columns: &[String], rows: &[Row]) -> std::io::Result<()> {
    for (i, c) in columns.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        field(out, c)?;
    }
    out.write_all(b"\n")?;
    write_rows(out, columns, rows)
}

/// Rows only, cells in the order of `columns` (missing cells empty).
pub fn write_rows(out: &mut impl Write, columns: &[String], rows: &[Row]) -> std::io::Result<()> {
    for r in rows {
        for (i, c) in columns.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            if let Some(v) = r.get(c) {
                field(out, &cell_text(v))?;
            }
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Reads a CSV table; cells come back as strings (empty cells are left out of their row). A last
/// record without its line break (a write cut short) is ignored.
pub fn read(path: &Path) -> std::io::Result<Vec<Row>> {
    let text = std::fs::read_to_string(path)?;
    let mut records: Vec<Vec<String>> = Vec::new();
    let mut record = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut cell)),
            (false, '\r') => {}
            (false, '\n') => {
                record.push(std::mem::take(&mut cell));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => cell.push(c),
        }
    }
    let mut records = records.into_iter();
    let Some(header) = records.next() else { return Ok(Vec::new()) };
    let mut rows = Vec::new();
    for (i, rec) in records.enumerate() {
        if rec.len() != header.len() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: line {}: {} fields, but the header has {}", path.display(), i + 2, rec.len(), header.len()),
            ));
        }
        let mut row = Row::new();
        for (name, text) in header.iter().zip(rec) {
            if !text.is_empty() {
                row.cells.push((name.clone(), Value::String(text)));
            }
        }
        rows.push(row);
    }
    Ok(rows)
}
