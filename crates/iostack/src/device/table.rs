//! Table disk model: service times learned by observation (KDSim, González-Férez, Piernas and
//! Cortes, "Improving I/O performance through an in-kernel disk simulator", Computer Journal
//! 59(10), 2016, §3.1 and §3.3; `papers/001_7a98b81f1a8601b2.txt` l.62-87, l.114-118; spec
//! `specs/kdsim-redcap.md` §1.3, K8, K13).
//!
//! The model knows nothing of how a disk works. It keeps two tables, one for reads and one for
//! writes. A row is the request size in 4 KiB blocks, 1 to 32; a larger request is "treated as
//! 128 kB" and uses row 32 (l.74). A column is the distance from the end of the previous request
//! the disk served to the start of this one (K8: with end-to-start, column 0 collects the
//! sequential requests, which is what makes it "capture many disk cache hits"):
//! - column 0: distance 0;
//! - column n = 1..18: 4·2^(n-1) KiB ≤ d < 4·2^n KiB (column 1 also takes 0 < d < 4 KiB, which
//!   the paper does not cover), so column 18 is [512 MiB, 1 GiB);
//! - then one column per GiB: column 18 + floor(d / 1 GiB), up to the capacity, so that a disk has
//!   18 + ceil(capacity / 1 GiB) columns.
//!
//! A cell holds the last S observed service times (S = 64, l.85; `values_per_cell`) in a ring and
//! answers their mean. Tables start empty and learn from every request the disk serves (l.83). A
//! cell nobody has updated answers the mean of its column's updated cells, or, when the column has
//! none, that of the nearest column that has (ties to the lower column); an empty table falls back
//! to the other table (reads for writes and back), then to 0 (l.118, K8).
//!
//! [`TableModel`] is the pair of tables (what KDSim's virtual disk and the off-line trainer use);
//! [`Table`] is the model as a [`Device`] (`--device table:PATH`): one request at a time, each
//! costing what the table answers for it. It does not learn from its own answers.
//!
//! The file format is JSON a person can write by hand (`docs/devices.md`):
//! `{"capacity_bytes": N, "values_per_cell": 64, "read": [[ms|null, ...] x 32], "write": [...]}`;
//! a row shorter than the column count repeats its last entry (`[[1.05], [1.10], ...]` is a
//! size-only table), an empty row is untrained. A loaded value fills its cell's ring, so that a
//! loaded cell moves under on-line updates as a trained one would.

use std::path::Path;

use super::{Device, DeviceRequest, Service, Spec, SECTOR};
use crate::error::ConfigError;
use crate::trace::Op;

/// Size rows: 1..32 blocks of 4 KiB.
pub const ROWS: usize = 32;
/// Bytes per block of a size row.
pub const BLOCK_BYTES: u64 = 4096;
/// Bytes per column beyond column 18.
pub const GIB: u64 = 1 << 30;
/// Doubling columns (1..=18) below 1 GiB.
const DOUBLING: usize = 18;
/// The paper's values per cell (l.85, l.226, l.242).
pub const DEFAULT_VALUES_PER_CELL: usize = 64;

/// The size row (0-based, 0..32) of a request of `bytes`: ceil(bytes / 4 KiB) clamped to 1..=32,
/// minus one.
#[inline]
pub fn size_row(bytes: u64) -> usize {
    (bytes.div_ceil(BLOCK_BYTES).clamp(1, ROWS as u64) - 1) as usize
}

/// The distance column of `d` bytes between the end of the previous request and the start of this
/// one, on a disk of `columns` columns (the last column takes anything beyond).
#[inline]
pub fn column(d: u64, columns: usize) -> usize {
    let c = if d == 0 {
        0
    } else if d < GIB {
        // 4·2^(n-1) KiB ≤ d < 4·2^n KiB  <=>  n = floor(log2(d / 4 KiB)) + 1; d < 4 KiB is 1.
        let blocks = (d / BLOCK_BYTES).max(1);
        (63 - blocks.leading_zeros()) as usize + 1
    } else {
        DOUBLING + (d / GIB) as usize
    };
    c.min(columns - 1)
}

/// Columns of a disk of `capacity_bytes`: 18 + ceil(capacity / 1 GiB) (at least 19).
pub fn column_count(capacity_bytes: u64) -> usize {
    DOUBLING + capacity_bytes.div_ceil(GIB).max(1) as usize
}

/// The distance range `[lo, hi)` in bytes of column `c` (column 0 is `[0, 1)`).
pub fn column_range(c: usize) -> (u64, u64) {
    match c {
        0 => (0, 1),
        1..=DOUBLING => (BLOCK_BYTES << (c - 1), BLOCK_BYTES << c),
        _ => ((c - DOUBLING) as u64 * GIB, (c - DOUBLING + 1) as u64 * GIB),
    }
}

/// One cell: a ring of the last `cap` observations, ns.
#[derive(Debug, Clone, Default)]
struct Cell {
    values: Vec<u64>,
    /// Next slot to overwrite once the ring is full.
    next: usize,
    sum: u64,
}

impl Cell {
    fn push(&mut self, ns: u64, cap: usize) {
        if self.values.len() < cap {
            self.values.push(ns);
        } else {
            self.sum -= self.values[self.next];
            self.values[self.next] = ns;
            self.next = (self.next + 1) % cap;
        }
        self.sum += ns;
    }

    fn fill(&mut self, ns: u64, cap: usize) {
        self.values = vec![ns; cap];
        self.next = 0;
        self.sum = ns * cap as u64;
    }

    #[inline]
    fn trained(&self) -> bool {
        !self.values.is_empty()
    }

    /// The mean, ns (unrounded).
    #[inline]
    fn mean(&self) -> f64 {
        self.sum as f64 / self.values.len() as f64
    }
}

/// One table (reads or writes): 32 rows by `columns` columns, row-major.
#[derive(Debug, Clone)]
struct Grid {
    cells: Vec<Cell>,
    /// Trained cells per column, to find the nearest trained column without scanning cells.
    trained_per_column: Vec<u32>,
    trained: usize,
}

impl Grid {
    fn new(columns: usize) -> Grid {
        Grid { cells: vec![Cell::default(); ROWS * columns], trained_per_column: vec![0; columns], trained: 0 }
    }

    fn columns(&self) -> usize {
        self.trained_per_column.len()
    }

    fn cell_mut(&mut self, row: usize, col: usize) -> &mut Cell {
        let n = self.columns();
        if !self.cells[row * n + col].trained() {
            self.trained_per_column[col] += 1;
            self.trained += 1;
        }
        &mut self.cells[row * n + col]
    }

    /// Unweighted mean of the trained cells of `col` (K8), if any.
    fn column_mean(&self, col: usize) -> Option<f64> {
        if self.trained_per_column[col] == 0 {
            return None;
        }
        let n = self.columns();
        let (sum, k) = (0..ROWS).map(|r| &self.cells[r * n + col]).filter(|c| c.trained()).fold((0.0, 0u32), |(s, k), c| (s + c.mean(), k + 1));
        Some(sum / k as f64)
    }

    /// The paper's look-up: the cell, else its column, else the nearest trained column.
    fn lookup(&self, row: usize, col: usize) -> Option<f64> {
        let n = self.columns();
        let cell = &self.cells[row * n + col];
        if cell.trained() {
            return Some(cell.mean());
        }
        if self.trained == 0 {
            return None;
        }
        for delta in 0..n {
            if delta <= col {
                if let Some(v) = self.column_mean(col - delta) {
                    return Some(v);
                }
            }
            if col + delta < n {
                if let Some(v) = self.column_mean(col + delta) {
                    return Some(v);
                }
            }
        }
        None
    }

    /// Unweighted mean over the trained cells of a column, all sizes ("VD 64 average", l.230).
    fn size_blind(&self, row: usize, col: usize) -> Option<f64> {
        self.column_mean(col).or_else(|| self.lookup(row, col))
    }
}

/// The read and write tables of one disk.
#[derive(Debug, Clone)]
pub struct TableModel {
    capacity_bytes: u64,
    values_per_cell: usize,
    read: Grid,
    write: Grid,
    /// Answer the column mean over all sizes (the paper's "VD 64 average" experiment).
    size_blind: bool,
}

impl TableModel {
    /// Empty tables for a disk of `capacity_bytes` (at least one byte), `values_per_cell` ≥ 1.
    pub fn new(capacity_bytes: u64, values_per_cell: usize) -> Result<TableModel, ConfigError> {
        if capacity_bytes == 0 {
            return Err(ConfigError::new("table.capacity_bytes", "the capacity must be at least one byte"));
        }
        if values_per_cell == 0 {
            return Err(ConfigError::new("table.values_per_cell", "a cell keeps at least one value"));
        }
        let cols = column_count(capacity_bytes);
        Ok(TableModel { capacity_bytes, values_per_cell, read: Grid::new(cols), write: Grid::new(cols), size_blind: false })
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    pub fn values_per_cell(&self) -> usize {
        self.values_per_cell
    }

    pub fn columns(&self) -> usize {
        self.read.columns()
    }

    /// Whether look-ups ignore the size (each answer the mean of its whole column).
    pub fn set_size_blind(&mut self, on: bool) {
        self.size_blind = on;
    }

    pub fn size_blind(&self) -> bool {
        self.size_blind
    }

    /// Cells updated at least once, reads and writes.
    pub fn trained_cells(&self) -> usize {
        self.read.trained + self.write.trained
    }

    fn grids(&self, op: Op) -> (&Grid, &Grid) {
        match op {
            Op::Write => (&self.write, &self.read),
            _ => (&self.read, &self.write),
        }
    }

    /// Records one observed service time of a request of `op`, `bytes`, at `distance` bytes from
    /// the end of the previous request the disk served.
    pub fn observe(&mut self, op: Op, bytes: u64, distance: u64, ns: u64) {
        let (row, col) = (size_row(bytes), column(distance, self.columns()));
        let cap = self.values_per_cell;
        let grid = if op == Op::Write { &mut self.write } else { &mut self.read };
        grid.cell_mut(row, col).push(ns, cap);
    }

    /// The cell value of (op, row, column) with the fallbacks, ns (unrounded); `None` if both tables
    /// are empty.
    pub fn cell_value(&self, op: Op, row: usize, col: usize) -> Option<f64> {
        let (own, other) = self.grids(op);
        if self.size_blind {
            own.size_blind(row, col).or_else(|| other.size_blind(row, col))
        } else {
            own.lookup(row, col).or_else(|| other.lookup(row, col))
        }
    }

    /// The service time the table predicts for a request, ns (0 when nothing was learned yet).
    pub fn estimate(&self, op: Op, bytes: u64, distance: u64) -> u64 {
        let v = self.cell_value(op, size_row(bytes), column(distance, self.columns())).unwrap_or(0.0);
        v.round() as u64
    }

    /// The value of a trained cell only (no fallback), ns; for inspection and tests.
    pub fn trained_value(&self, op: Op, row: usize, col: usize) -> Option<f64> {
        let g = if op == Op::Write { &self.write } else { &self.read };
        let c = &g.cells[row * g.columns() + col];
        c.trained().then(|| c.mean())
    }

    /// Parses a table file's text; errors name `path` and the entry.
    pub fn from_json(path: &Path, text: &str) -> Result<TableModel, ConfigError> {
        let name = path.display().to_string();
        let bad = |what: String, msg: String| ConfigError::new(format!("{name}: {what}"), msg);
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| ConfigError::new(name.clone(), format!("not a JSON table file: {e}")))?;
        let obj = v.as_object().ok_or_else(|| ConfigError::new(name.clone(), "a table file is a JSON object with capacity_bytes, values_per_cell, read and write"))?;
        const KEYS: [&str; 4] = ["capacity_bytes", "values_per_cell", "read", "write"];
        if let Some(k) = obj.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(bad(k.clone(), format!("unknown key; valid: {}", KEYS.join(", "))));
        }
        let whole = |key: &str| -> Result<u64, ConfigError> {
            let x = obj.get(key).ok_or_else(|| bad(key.to_string(), "missing".into()))?;
            x.as_u64().ok_or_else(|| bad(key.to_string(), format!("`{x}` is not a whole number")))
        };
        let capacity = whole("capacity_bytes")?;
        let per_cell = whole("values_per_cell")?;
        if capacity == 0 {
            return Err(bad("capacity_bytes".into(), "must be at least 1".into()));
        }
        if per_cell == 0 || per_cell > 1 << 20 {
            return Err(bad("values_per_cell".into(), format!("{per_cell} is not in 1..=1048576")));
        }
        let mut model = TableModel::new(capacity, per_cell as usize)?;
        let cols = model.columns();
        for (key, op) in [("read", Op::Read), ("write", Op::Write)] {
            let rows = obj.get(key).ok_or_else(|| bad(key.into(), "missing (32 rows, one per request size of 1..32 blocks of 4 KiB)".into()))?;
            let rows = rows.as_array().ok_or_else(|| bad(key.into(), "not a list of 32 rows".into()))?;
            if rows.len() != ROWS {
                return Err(bad(key.into(), format!("{} rows; a table has 32 (request sizes 1..32 blocks of 4 KiB)", rows.len())));
            }
            for (r, row) in rows.iter().enumerate() {
                let entries = row.as_array().ok_or_else(|| bad(format!("{key}[{r}]"), "not a list of service times in ms".into()))?;
                if entries.len() > cols {
                    return Err(bad(format!("{key}[{r}]"), format!("{} entries; a disk of {capacity} bytes has {cols} distance columns", entries.len())));
                }
                let mut ns = Vec::with_capacity(entries.len());
                for (c, e) in entries.iter().enumerate() {
                    let at = || format!("{key}[{r}][{c}]");
                    ns.push(match e {
                        serde_json::Value::Null => None,
                        serde_json::Value::Number(n) => match n.as_f64() {
                            Some(ms) if ms.is_finite() && ms >= 0.0 && ms < 1e9 => Some((ms * 1e6).round() as u64),
                            _ => return Err(bad(at(), format!("{n} is not a service time in ms (a non-negative number)"))),
                        },
                        other => return Err(bad(at(), format!("`{other}` is not a service time in ms or null"))),
                    });
                }
                let last = ns.last().copied().flatten();
                for c in 0..cols {
                    let value = if c < ns.len() { ns[c] } else { last };
                    if let Some(v) = value {
                        let grid = if op == Op::Write { &mut model.write } else { &mut model.read };
                        grid.cell_mut(r, c).fill(v, per_cell as usize);
                    }
                }
            }
        }
        Ok(model)
    }

    /// Reads a table file.
    pub fn load(path: &Path) -> Result<TableModel, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::new(path.display().to_string(), format!("cannot read the table file: {e}")))?;
        TableModel::from_json(path, &text)
    }

    /// The table as the file format: each trained cell's mean in ms, `null` for the others; rows
    /// whose tail repeats one value are written short.
    pub fn to_json(&self) -> serde_json::Value {
        let grid_json = |g: &Grid| -> serde_json::Value {
            let n = g.columns();
            let rows: Vec<serde_json::Value> = (0..ROWS)
                .map(|r| {
                    let mut row: Vec<Option<f64>> = (0..n).map(|c| {
                        let cell = &g.cells[r * n + c];
                        cell.trained().then(|| cell.mean() / 1e6)
                    }).collect();
                    while row.len() > 1 && row[row.len() - 1] == row[row.len() - 2] {
                        row.pop();
                    }
                    if row.len() == 1 && row[0].is_none() {
                        row.clear();
                    }
                    serde_json::json!(row)
                })
                .collect();
            serde_json::Value::Array(rows)
        };
        serde_json::json!({
            "capacity_bytes": self.capacity_bytes,
            "values_per_cell": self.values_per_cell,
            "read": grid_json(&self.read),
            "write": grid_json(&self.write),
        })
    }

    /// Writes the table file whole (a temporary file renamed into place).
    pub fn save(&self, path: &Path) -> Result<(), crate::error::Error> {
        let text = serde_json::to_string(&self.to_json()).map_err(std::io::Error::other)?;
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let tmp = dir.join(format!(".{}.tmp{}", path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), std::process::id()));
        std::fs::write(&tmp, text + "\n").and_then(|_| std::fs::rename(&tmp, path)).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            crate::error::Error::Io(std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
        })
    }
}

/// Where the previous request ended, to measure the next one's distance (K8).
#[derive(Debug, Clone, Copy, Default)]
pub struct Head {
    end_byte: u64,
}

impl Head {
    /// The distance of `req` from the previous request's end, bytes; moves the head to its end.
    #[inline]
    pub fn advance(&mut self, sector: u64, sectors: u64) -> u64 {
        let start = sector * SECTOR;
        let d = start.abs_diff(self.end_byte);
        self.end_byte = start + sectors * SECTOR;
        d
    }

    /// The distance `req` would have, without moving.
    #[inline]
    pub fn distance(&self, sector: u64) -> u64 {
        (sector * SECTOR).abs_diff(self.end_byte)
    }
}

/// The table model as a device: one request at a time, each costing the table's answer.
pub struct Table {
    model: TableModel,
    path: String,
    head: Head,
    busy_until: u64,
}

impl Table {
    pub fn new(model: TableModel, path: impl Into<String>) -> Table {
        Table { model, path: path.into(), head: Head::default(), busy_until: 0 }
    }

    pub fn model(&self) -> &TableModel {
        &self.model
    }

    /// `table:PATH[,size_blind=on]`. The path keeps its case (the spec parser lower-cases presets).
    pub fn from_spec(mut s: Spec) -> Result<Table, ConfigError> {
        let rest = s.text.split_once(':').map(|(_, r)| r).unwrap_or("");
        let path = rest.split(',').next().unwrap_or("").trim().to_string();
        if path.is_empty() || s.preset.is_none() {
            return Err(ConfigError::new("--device", format!("`{}` names no table file (table:PATH)", s.text)));
        }
        let size_blind = s.bool("size_blind", false)?;
        s.finish(&["size_blind"])?;
        let mut model = TableModel::load(Path::new(&path))?;
        model.set_size_blind(size_blind);
        Ok(Table::new(model, path))
    }
}

impl Device for Table {
    fn name(&self) -> String {
        format!("table:{}", self.path)
    }

    fn service(&mut self, req: &DeviceRequest, now_ns: u64) -> Service {
        let cap = self.model.capacity_bytes().div_ceil(SECTOR).max(1);
        let sector = req.sector % cap;
        let d = self.head.advance(sector, req.sectors);
        let cost = self.model.estimate(req.op, req.sectors * SECTOR, d);
        let start = now_ns.max(self.busy_until);
        let finish = start + cost;
        self.busy_until = finish;
        Service { start_ns: start, finish_ns: finish, cache_hit: false }
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "model": "table",
            "path": self.path,
            "capacity_bytes": self.model.capacity_bytes(),
            "values_per_cell": self.model.values_per_cell(),
            "columns": self.model.columns(),
            "trained_cells": self.model.trained_cells(),
            "size_blind": self.model.size_blind(),
            "source": "KDSim (Computer Journal 59(10), 2016) §3.1: read/write tables by size (4 KiB..128 KiB) and distance from the previous request",
        })
    }

    fn capacity_sectors(&self) -> Option<u64> {
        Some(self.model.capacity_bytes() / SECTOR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;

    /// D-K1: column and row functions.
    #[test]
    fn columns_and_rows() {
        let n = column_count(400_000_000_000);
        assert_eq!(n, 391);
        let cases = [(0, 0), (512, 1), (4 * KIB, 1), (8 * KIB - 1, 1), (8 * KIB, 2), (512 * MIB, 18), (GIB - 1, 18), (GIB, 19), (2 * GIB, 20)];
        for (d, c) in cases {
            assert_eq!(column(d, n), c, "distance {d}");
        }
        // Beyond the capacity: the last column.
        assert_eq!(column(10_000 * GIB, n), n - 1);
        assert_eq!(column_count(1), 19);
        assert_eq!(column_count(GIB), 19);
        assert_eq!(column_count(GIB + 1), 20);
        for (bytes, row) in [(1, 1), (4 * KIB, 1), (4 * KIB + 1, 2), (128 * KIB, 32), (512 * KIB, 32)] {
            assert_eq!(size_row(bytes) + 1, row, "{bytes} bytes");
        }
        for c in 0..40 {
            let (lo, hi) = column_range(c);
            assert_eq!(column(lo, 1000), c);
            assert_eq!(column(hi - 1, 1000), c);
        }
    }

    /// D-K2: the ring keeps the last 64.
    #[test]
    fn cell_ring() {
        let mut m = TableModel::new(GIB, 64).unwrap();
        for _ in 0..64 {
            m.observe(Op::Read, 4096, 0, 1_000_000);
        }
        m.observe(Op::Read, 4096, 0, 65_000_000);
        assert_eq!(m.estimate(Op::Read, 4096, 0), 2_000_000);
        let mut small = TableModel::new(GIB, 2).unwrap();
        for ns in [10, 20, 30] {
            small.observe(Op::Read, 4096, 0, ns);
        }
        assert_eq!(small.estimate(Op::Read, 4096, 0), 25);
    }

    /// D-K3: on-line fallbacks from a zeroed table.
    #[test]
    fn online_fallback() {
        let mut m = TableModel::new(400_000_000_000, 64).unwrap();
        assert_eq!(m.estimate(Op::Read, 4096, 0), 0, "empty tables answer 0");
        // Column 2 is [8, 16) KiB.
        m.observe(Op::Read, 4 * 4096, 8 * KIB, 4_000_000);
        assert_eq!(m.cell_value(Op::Read, 3, 2), Some(4e6));
        assert_eq!(m.cell_value(Op::Read, 0, 2), Some(4e6), "column average");
        assert_eq!(m.cell_value(Op::Read, 0, 6), Some(4e6), "nearest trained column");
        assert_eq!(m.cell_value(Op::Write, 0, 2), Some(4e6), "the other table");
        // The column average is unweighted over trained cells; the nearest column tie goes low.
        m.observe(Op::Read, 4096, 8 * KIB, 2_000_000);
        m.observe(Op::Read, 4096, 8 * KIB, 2_000_000);
        assert_eq!(m.cell_value(Op::Read, 5, 2), Some(3e6));
        m.observe(Op::Read, 4096, 32 * KIB, 9_000_000); // column 4
        assert_eq!(m.cell_value(Op::Read, 0, 3), Some(3e6), "tie between 2 and 4 goes to 2");
        assert_eq!(m.cell_value(Op::Read, 0, 5), Some(9e6));
        // Writes now learn apart from reads.
        m.observe(Op::Write, 4096, 0, 7_000_000);
        assert_eq!(m.cell_value(Op::Write, 0, 2), Some(7e6));
        // Size-blind: the column mean whatever the size.
        m.set_size_blind(true);
        assert_eq!(m.cell_value(Op::Read, 3, 2), Some(3e6));
    }

    fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn rows(entry: &str) -> String {
        format!("[{}]", vec![entry; 32].join(","))
    }

    #[test]
    fn file_round_trip_and_short_rows() {
        let dir = tempfile::tempdir().unwrap();
        let mut read: Vec<String> = (1..=32).map(|r| format!("[{}]", 1.0 + r as f64 / 100.0)).collect();
        read[1] = "[0.5, null, 2.0]".into();
        read[2] = "[]".into();
        let text = format!(r#"{{"capacity_bytes": 4294967296, "values_per_cell": 8, "read": [{}], "write": {}}}"#, read.join(","), rows("[3]"));
        let p = write(&dir, "t.json", &text);
        let m = TableModel::load(&p).unwrap();
        assert_eq!(m.columns(), 22);
        assert_eq!(m.values_per_cell(), 8);
        // A one-entry row holds every column.
        assert_eq!(m.estimate(Op::Read, 4096, 0), 1_010_000);
        assert_eq!(m.estimate(Op::Read, 4096, 3 * GIB), 1_010_000);
        // Row 2: 0.5 at column 0, untrained column 1 (column mean), 2.0 from column 2 on.
        assert_eq!(m.trained_value(Op::Read, 1, 1), None);
        assert_eq!(m.estimate(Op::Read, 8192, 10 * MIB), 2_000_000);
        assert_eq!(m.trained_value(Op::Read, 2, 5), None);
        assert_eq!(m.estimate(Op::Write, 128 * KIB, 0), 3_000_000);
        let out = dir.path().join("out.json");
        m.save(&out).unwrap();
        let again = TableModel::load(&out).unwrap();
        assert_eq!(again.to_json(), m.to_json());
        let j = m.to_json();
        assert_eq!(j["read"][0], serde_json::json!([1.01]));
        assert_eq!(j["read"][1], serde_json::json!([0.5, null, 2.0]));
        assert_eq!(j["read"][2], serde_json::json!([]));
        // A loaded cell moves under updates like a trained ring of 8.
        let mut m = m;
        m.observe(Op::Write, 4096, 0, 11_000_000);
        assert_eq!(m.estimate(Op::Write, 4096, 0), 4_000_000);
    }

    #[test]
    fn bad_files_name_the_file_and_entry() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            ("notjson", "{", "not a JSON table file"),
            ("list", "[1]", "JSON object"),
            ("nocap", &format!(r#"{{"values_per_cell": 64, "read": {0}, "write": {0}}}"#, rows("[1]")), "capacity_bytes: missing"),
            ("zero", &format!(r#"{{"capacity_bytes": 1000, "values_per_cell": 0, "read": {0}, "write": {0}}}"#, rows("[1]")), "values_per_cell"),
            ("rows", &format!(r#"{{"capacity_bytes": 1000, "values_per_cell": 64, "read": [[1]], "write": {}}}"#, rows("[1]")), "read: 1 rows"),
            ("negative", &format!(r#"{{"capacity_bytes": 1000, "values_per_cell": 64, "read": {}, "write": {}}}"#, rows("[1]"), rows("[1, -2]")), "write[0][1]"),
            ("string", &format!(r#"{{"capacity_bytes": 1000, "values_per_cell": 64, "read": {}, "write": {}}}"#, rows("[\"x\"]"), rows("[1]")), "read[0][0]"),
            ("long", &format!(r#"{{"capacity_bytes": 1000, "values_per_cell": 64, "read": {}, "write": {}}}"#, rows(&format!("[{}]", vec!["1"; 20].join(","))), rows("[1]")), "19 distance columns"),
            ("extra", &format!(r#"{{"capacity_bytes": 1000, "values_per_cell": 64, "read": {0}, "write": {0}, "colour": 1}}"#, rows("[1]")), "colour: unknown key"),
        ];
        for (name, text, want) in cases {
            let p = write(&dir, name, text);
            let e = TableModel::load(&p).err().unwrap_or_else(|| panic!("{name} loaded")).to_string();
            assert!(e.contains(&p.display().to_string()) && e.contains(want), "{name}: {e}");
        }
        let e = TableModel::load(&dir.path().join("absent.json")).err().unwrap().to_string();
        assert!(e.contains("absent.json"), "{e}");
    }

    #[test]
    fn table_device_serves_by_size_and_distance() {
        let dir = tempfile::tempdir().unwrap();
        let mut read: Vec<String> = (1..=32).map(|_| "[0.1, 5]".to_string()).collect();
        read[1] = "[0.2, 6]".into();
        let p = write(&dir, "Dev.json", &format!(r#"{{"capacity_bytes": 1073741824, "values_per_cell": 64, "read": [{}], "write": {}}}"#, read.join(","), rows("[1]")));
        let mut d = crate::device::build(&format!("table:{}", p.display())).unwrap();
        assert_eq!(d.name(), format!("table:{}", p.display()), "the path keeps its case");
        assert_eq!(d.capacity_sectors(), Some(GIB / SECTOR));
        // First request: distance from 0 is 0.
        let a = d.service(&DeviceRequest::read(0, 8), 0);
        assert_eq!((a.start_ns, a.finish_ns), (0, 100_000));
        // Sequential 8 KiB: row 2, column 0; handed over while busy, it waits.
        let b = d.service(&DeviceRequest::read(8, 16), 50_000);
        assert_eq!((b.start_ns, b.finish_ns), (100_000, 300_000));
        // A jump: the second column (repeated for every farther one).
        let c = d.service(&DeviceRequest::read(1_000_000, 8), 1_000_000);
        assert_eq!(c.finish_ns - c.start_ns, 5_000_000);
        let w = d.service(&DeviceRequest::write(1_000_008, 1), 10_000_000);
        assert_eq!(w.finish_ns - w.start_ns, 1_000_000);
        assert!(crate::device::build("table:").is_err());
        assert!(crate::device::build(&format!("table:{},colour=red", p.display())).is_err());
        let blind = crate::device::build(&format!("table:{},size_blind=on", p.display())).unwrap();
        assert_eq!(blind.parameters()["size_blind"], true);
    }
}
