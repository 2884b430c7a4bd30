//! Results as tables: rows of named scalar cells, flattened from nested results, written as CSV,
//! JSON, JSON Lines or Parquet (the format from the file's extension) and read back.
//!
//! A nested result becomes one row by joining the keys of its path with dots: `elapsed_ns`,
//! `response.p99_ns`, `config.policy`, `locality.device.block_affinity.mean`. What is a
//! distribution rather than a figure stays out of the row (it is in the JSON result): objects
//! keyed by numbers (size histograms such as `device.sizes`) and lists of objects (per-process
//! reports, histogram buckets, time series), except a list named `devices`, whose elements are
//! numbered (`devices.0.busy_ns`). A list of plain values is one cell, joined with commas
//! (`config.layers`). Columns keep the order in which the result serializes its fields, so
//! a table reads like the JSON it comes from. A table's columns are the union of its rows'
//! columns in order of first appearance; a row without a column has an empty cell (CSV), a null
//! (JSON) or a missing value (Parquet).
//!
//! Whole tables are written atomically: to a temporary file beside the target, then renamed
//! over it, so a reader never sees half a table and a failed write leaves the old file as it
//! was. [`Appender`] adds rows to a table as they come (a sweep's results): JSON Lines and CSV
//! files are appended to in place (a CSV file whose header lacks a new column is rewritten with
//! the wider header), Parquet, which cannot be appended to, is rewritten atomically.

mod csv;
mod parquet;

use std::path::{Path, PathBuf};

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::error::ConfigError;

/// One row: named scalar cells (numbers, strings, booleans, nulls), in column order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    pub cells: Vec<(String, Value)>,
}

impl Row {
    pub fn new() -> Row {
        Row::default()
    }

    /// Adds (or replaces) a cell.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<Value>) {
        let name = name.into();
        let value = value.into();
        match self.cells.iter_mut().find(|(n, _)| *n == name) {
            Some(cell) => cell.1 = value,
            None => self.cells.push((name, value)),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.cells.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Appends the cells of `other` (replacing cells of the same name).
    pub fn extend(&mut self, other: Row) {
        for (n, v) in other.cells {
            self.set(n, v);
        }
    }

    /// The row as a JSON object (columns in order as far as `serde_json` keeps order).
    pub fn to_json(&self) -> Value {
        Value::Object(self.cells.iter().cloned().collect())
    }
}

/// Flattens `value` (any serializable result) into a row of dotted column names, in the order
/// the value serializes its fields. `prefix` is prepended to every name (`""` for none).
pub fn flatten<T: serde::Serialize>(value: &T, prefix: &str) -> Row {
    // Through text, so that field order survives (`serde_json::Value` maps sort their keys).
    let text = serde_json::to_string(value).expect("results serialize to JSON");
    let tree: Tree = serde_json::from_str(&text).expect("JSON just written parses");
    let mut row = Row::new();
    tree.flatten_into(prefix, &mut row);
    row
}

/// A JSON object whose keys keep the order of the text (TOML or JSON) it was read from.
#[derive(Debug, Clone, Default)]
pub struct OrderedMap(pub Vec<(String, Value)>);

impl<'de> Deserialize<'de> for OrderedMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<OrderedMap, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedMap;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedMap, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Value>()? {
                    entries.push((k, v));
                }
                Ok(OrderedMap(entries))
            }
        }
        d.deserialize_map(V)
    }
}

/// A JSON value whose objects keep their key order.
enum Tree {
    Scalar(Value),
    Map(Vec<(String, Tree)>),
    List(Vec<Tree>),
}

impl Tree {
    fn flatten_into(self, prefix: &str, row: &mut Row) {
        let join = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
        match self {
            Tree::Scalar(v) => row.cells.push((prefix.to_string(), v)),
            Tree::Map(entries) => {
                if !entries.is_empty() && entries.iter().all(|(k, _)| k.bytes().all(|b| b.is_ascii_digit())) {
                    return;
                }
                for (k, v) in entries {
                    v.flatten_into(&join(&k), row);
                }
            }
            Tree::List(items) if items.iter().all(|t| matches!(t, Tree::Scalar(_))) => {
                let text: Vec<String> = items.iter().map(|t| if let Tree::Scalar(v) = t { cell_text(v) } else { String::new() }).collect();
                row.cells.push((prefix.to_string(), Value::String(text.join(","))));
            }
            Tree::List(items) => {
                if prefix == "devices" || prefix.ends_with(".devices") {
                    for (i, v) in items.into_iter().enumerate() {
                        v.flatten_into(&join(&i.to_string()), row);
                    }
                }
            }
        }
    }
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Tree, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tree;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Tree, E> {
                Ok(Tree::Scalar(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Tree, E> {
                Ok(Tree::Scalar(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Tree, E> {
                Ok(Tree::Scalar(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Tree, E> {
                Ok(Tree::Scalar(v.into()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Tree, E> {
                Ok(Tree::Scalar(v.into()))
            }
            fn visit_string<E>(self, v: String) -> Result<Tree, E> {
                Ok(Tree::Scalar(v.into()))
            }
            fn visit_unit<E>(self) -> Result<Tree, E> {
                Ok(Tree::Scalar(Value::Null))
            }
            fn visit_none<E>(self) -> Result<Tree, E> {
                Ok(Tree::Scalar(Value::Null))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
                let mut items = Vec::new();
                while let Some(t) = seq.next_element()? {
                    items.push(t);
                }
                Ok(Tree::List(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Tree>()? {
                    entries.push((k, v));
                }
                Ok(Tree::Map(entries))
            }
        }
        d.deserialize_any(V)
    }
}

/// The columns of `rows`: every name, in order of first appearance.
pub fn columns(rows: &[Row]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for r in rows {
        for (n, _) in &r.cells {
            if seen.insert(n.as_str()) {
                out.push(n.clone());
            }
        }
    }
    out
}

/// A table file format, from the output's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Csv,
    /// One JSON array of objects.
    Json,
    /// One JSON object per line.
    Jsonl,
    Parquet,
}

impl TableFormat {
    /// The format a path's extension names: `.csv`, `.json`, `.jsonl` (or `.ndjson`), `.parquet`.
    pub fn from_path(option: &str, path: &Path) -> Result<TableFormat, ConfigError> {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        Ok(match ext.as_str() {
            "csv" => TableFormat::Csv,
            "json" => TableFormat::Json,
            "jsonl" | "ndjson" => TableFormat::Jsonl,
            "parquet" | "pq" => TableFormat::Parquet,
            _ => {
                return Err(ConfigError::new(
                    option,
                    format!("{}: cannot tell the table format from the extension (use .csv, .json, .jsonl or .parquet)", path.display()),
                ))
            }
        })
    }
}

/// The text of a cell as CSV writes it (and as [`Row`] keys compare when read back from CSV):
/// strings as they are, numbers as JSON writes them, booleans `true`/`false`, null empty.
pub fn cell_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Writes `rows` to `path` in the format its extension names, atomically.
pub fn write(path: &Path, rows: &[Row]) -> std::io::Result<()> {
    let format = TableFormat::from_path("--output", path).map_err(std::io::Error::other)?;
    write_atomically(path, |file| write_to(file, format, rows))
}

fn write_to(file: &mut std::fs::File, format: TableFormat, rows: &[Row]) -> std::io::Result<()> {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(file);
    match format {
        TableFormat::Csv => csv::write(&mut w, &columns(rows), rows)?,
        TableFormat::Jsonl => {
            for r in rows {
                serde_json::to_writer(&mut w, &OrderedRow(r))?;
                w.write_all(b"\n")?;
            }
        }
        TableFormat::Json => {
            w.write_all(b"[")?;
            for (i, r) in rows.iter().enumerate() {
                w.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
                serde_json::to_writer(&mut w, &OrderedRow(r))?;
            }
            w.write_all(if rows.is_empty() { b"]\n" } else { b"\n]\n" })?;
        }
        TableFormat::Parquet => {
            let file = w.into_inner().map_err(|e| e.into_error())?;
            return parquet::write(file.try_clone()?, rows);
        }
    }
    w.flush()
}

/// Serializes a row as an object with its columns in order.
struct OrderedRow<'a>(&'a Row);

impl serde::Serialize for OrderedRow<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.cells.len()))?;
        for (k, v) in &self.0.cells {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Writes a file through `write` into a temporary file beside `path`, then renames it over
/// `path`; on error the temporary file is removed and `path` is untouched.
pub fn write_atomically(path: &Path, write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>) -> std::io::Result<()> {
    let tmp = temp_path(path);
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        write(&mut f)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Reads a table written by [`write`] or [`Appender`] (CSV cells come back as strings; a last
/// line cut short by an interruption is ignored in CSV and JSON Lines).
pub fn read(path: &Path) -> std::io::Result<Vec<Row>> {
    let format = TableFormat::from_path("--output", path).map_err(std::io::Error::other)?;
    let err = |line: usize, e: String| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{}: line {line}: {e}", path.display()));
    match format {
        TableFormat::Csv => csv::read(path),
        TableFormat::Jsonl => {
            let text = std::fs::read_to_string(path)?;
            let complete = match text.rfind('\n') {
                Some(i) => &text[..=i],
                None => "",
            };
            complete
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| row_from_json(l).map_err(|e| err(i + 1, e)))
                .collect()
        }
        TableFormat::Json => {
            let text = std::fs::read_to_string(path)?;
            let rows: Vec<Tree> = serde_json::from_str(&text).map_err(|e| err(e.line(), e.to_string()))?;
            Ok(rows
                .into_iter()
                .map(|t| {
                    let mut r = Row::new();
                    if let Tree::Map(entries) = t {
                        for (k, v) in entries {
                            v.flatten_into(&k, &mut r);
                        }
                    }
                    r
                })
                .collect())
        }
        TableFormat::Parquet => parquet::read(path),
    }
}

/// A row as one line of JSON (columns in order), as [`row_from_json`] reads it back.
pub fn row_to_json(row: &Row) -> String {
    serde_json::to_string(&OrderedRow(row)).expect("rows serialize")
}

/// A row from a JSON object (nested objects flattened), columns in the order of the text.
pub fn row_from_json(line: &str) -> Result<Row, String> {
    match serde_json::from_str::<Tree>(line).map_err(|e| e.to_string())? {
        Tree::Map(entries) => {
            let mut r = Row::new();
            for (k, v) in entries {
                v.flatten_into(&k, &mut r);
            }
            Ok(r)
        }
        _ => Err("not a JSON object".into()),
    }
}

/// Adds rows to a table file as they come, so that an interrupted run keeps every row written.
pub struct Appender {
    path: PathBuf,
    format: TableFormat,
    /// Every row of the file (CSV and Parquet rewrite it whole when they must).
    rows: Vec<Row>,
    /// CSV: the header of the file as it is.
    header: Vec<String>,
}

impl Appender {
    /// Starts a table at `path`: empty, or with the rows already there when `keep` is set (a
    /// resumed run). The format comes from the extension; `.json` is refused (an array cannot
    /// grow in place; use `.jsonl`).
    pub fn open(path: &Path, keep: bool) -> std::io::Result<Appender> {
        let format = TableFormat::from_path("--output", path).map_err(std::io::Error::other)?;
        if format == TableFormat::Json {
            return Err(std::io::Error::other(format!(
                "--output: {}: a JSON array cannot be appended to as runs finish; use .jsonl, .csv or .parquet",
                path.display()
            )));
        }
        let rows = if keep && path.exists() { read(path)? } else { Vec::new() };
        let mut a = Appender { path: path.to_path_buf(), format, header: columns(&rows), rows };
        // Rewrite what was read: drops a line cut short, and starts a fresh file otherwise.
        a.rewrite()?;
        Ok(a)
    }

    /// The rows in the file (those read back at open, then those appended).
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Appends rows and makes them durable before returning.
    pub fn append(&mut self, rows: Vec<Row>) -> std::io::Result<()> {
        use std::io::Write;
        if rows.is_empty() {
            return Ok(());
        }
        let start = self.rows.len();
        self.rows.extend(rows);
        let new = &self.rows[start..];
        match self.format {
            TableFormat::Jsonl => {
                let mut f = std::fs::OpenOptions::new().append(true).open(&self.path)?;
                let mut buf = Vec::new();
                for r in new {
                    serde_json::to_writer(&mut buf, &OrderedRow(r))?;
                    buf.push(b'\n');
                }
                f.write_all(&buf)?;
                f.sync_data()
            }
            TableFormat::Csv if new.iter().all(|r| r.cells.iter().all(|(n, _)| self.header.contains(n))) && !self.header.is_empty() => {
                let mut f = std::fs::OpenOptions::new().append(true).open(&self.path)?;
                let mut buf = Vec::new();
                csv::write_rows(&mut buf, &self.header, new)?;
                f.write_all(&buf)?;
                f.sync_data()
            }
            _ => self.rewrite(),
        }
    }

    fn rewrite(&mut self) -> std::io::Result<()> {
        self.header = columns(&self.rows);
        let (format, rows) = (self.format, &self.rows);
        write_atomically(&self.path, |f| write_to(f, format, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize)]
    struct Nested {
        zeta: u64,
        alpha: Inner,
        devices: Vec<Inner>,
        skipped: Vec<Inner>,
        histogram: std::collections::BTreeMap<u64, u64>,
        layers: Vec<&'static str>,
        name: &'static str,
        none: Option<u64>,
    }
    #[derive(serde::Serialize)]
    struct Inner {
        p99_ns: u64,
        mean: f64,
    }

    fn sample() -> Vec<Row> {
        let n = Nested {
            zeta: 1,
            alpha: Inner { p99_ns: 7, mean: 0.5 },
            devices: vec![Inner { p99_ns: 8, mean: 1.5 }],
            skipped: vec![Inner { p99_ns: 9, mean: 2.5 }],
            histogram: [(1, 2)].into(),
            layers: vec!["a", "b"],
            name: "a,\"b\"\nc", none: None };
        let mut second = flatten(&n, "");
        second.set("zeta", 2);
        second.set("extra", true);
        vec![flatten(&n, ""), second]
    }

    #[test]
    fn flattens_in_field_order_with_dotted_names() {
        let r = &sample()[0];
        let names: Vec<&str> = r.cells.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha.p99_ns", "alpha.mean", "devices.0.p99_ns", "devices.0.mean", "layers", "name", "none"]);
        assert_eq!(r.get("layers"), Some(&Value::from("a,b")));
        assert_eq!(columns(&sample()).last().unwrap(), "extra");
    }

    #[test]
    fn every_format_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let rows = sample();
        for ext in ["csv", "json", "jsonl", "parquet"] {
            let path = dir.path().join(format!("t.{ext}"));
            write(&path, &rows).unwrap();
            let back = read(&path).unwrap();
            assert_eq!(back.len(), 2, "{ext}");
            for (a, b) in rows.iter().zip(&back) {
                for (name, v) in &a.cells {
                    let got = b.get(name).map(cell_text).unwrap_or_default();
                    assert_eq!(got, cell_text(v), "{ext} {name}");
                }
            }
            let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".tmp")).collect();
            assert!(leftovers.is_empty());
        }
        assert!(TableFormat::from_path("--output", Path::new("x.txt")).unwrap_err().to_string().contains(".parquet"));
    }

    #[test]
    fn appends_survive_and_resume() {
        let dir = tempfile::tempdir().unwrap();
        let rows = sample();
        for ext in ["csv", "jsonl", "parquet"] {
            let path = dir.path().join(format!("a.{ext}"));
            let mut a = Appender::open(&path, false).unwrap();
            a.append(vec![rows[0].clone()]).unwrap();
            assert_eq!(read(&path).unwrap().len(), 1);
            // A second appender resumes with the row already there; a new column widens it.
            let mut b = Appender::open(&path, true).unwrap();
            assert_eq!(b.rows().len(), 1);
            b.append(vec![rows[1].clone()]).unwrap();
            let back = read(&path).unwrap();
            assert_eq!(back.len(), 2, "{ext}");
            assert_eq!(back[1].get("extra").map(cell_text).as_deref(), Some("true"), "{ext}");
            assert_eq!(back[0].get("extra").map(cell_text).unwrap_or_default(), "", "{ext}");
        }
        // A line cut short by an interruption is dropped on resume.
        let path = dir.path().join("cut.jsonl");
        std::fs::write(&path, "{\"a\":1}\n{\"a\":").unwrap();
        let a = Appender::open(&path, true).unwrap();
        assert_eq!(a.rows().len(), 1);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"a\":1}\n");
        assert!(Appender::open(&dir.path().join("x.json"), false).is_err());
    }
}
