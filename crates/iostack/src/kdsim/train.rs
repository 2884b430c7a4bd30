//! Off-line training of a table model against a device (KDSim §3.3, l.114-116; spec K13).
//!
//! The paper's program "issues requests in a random way and uniformly distributed over all the
//! cells" and stores, per cell, the mean of its samples. Here every reachable cell of a table
//! (size row, distance column) gets exactly `samples` requests, in one seeded random order, so that
//! no region of the disk or phase of its cache is favoured. The read table is trained first, then
//! the write table: in one mixed order, reads would be charged the destaging of the writes a drive
//! with a write cache buffered before them, which no read of a read-mostly workload pays (measured
//! on `hdd:st3400620as`: 4 KiB reads at distance 0 to 16 KiB averaged 3.7-6.5 ms mixed and
//! 0.14-0.45 ms read-only; see docs/devices.md). `mixed` keeps the single order. Each request is
//! placed at a random distance inside its column's range from where the previous one ended,
//! forward or backward at random, mirrored at the ends of the disk; when neither direction fits
//! (a far column from the middle of the disk) the head is first moved to an end by an unrecorded
//! 4 KiB read. Requests are issued back to back, as a synchronous program does: each is handed over
//! when the previous completes, and its service time (hand-over to completion) goes into its cell.
//! With `samples` equal to the cell size (64, K13) a trained table has the form a learned one has.
//!
//! A cell is unreachable when its column starts beyond what a request of its size can be placed
//! at (`capacity - size`); such cells stay untrained and answer through the model's fallbacks.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::device::table::{column, column_range, TableModel, BLOCK_BYTES, DEFAULT_VALUES_PER_CELL, ROWS};
use crate::device::{Device, DeviceRequest, SECTOR};
use crate::error::ConfigError;
use crate::trace::Op;

/// Settings of a training run.
#[derive(Debug, Clone, Copy)]
pub struct TrainConfig {
    /// Requests per cell.
    pub samples: u32,
    pub seed: u64,
    /// Values kept per cell in the trained table.
    pub values_per_cell: usize,
    /// The disk's capacity in bytes when the device model has none (e.g. `fixed`).
    pub capacity_bytes: Option<u64>,
    /// Idle time between a completion and the next request (a program's own time per request).
    pub gap_ns: u64,
    /// Mix reads and writes in one random order instead of training the read table first, then
    /// the write table.
    pub mixed: bool,
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig { samples: DEFAULT_VALUES_PER_CELL as u32, seed: 0, values_per_cell: DEFAULT_VALUES_PER_CELL, capacity_bytes: None, gap_ns: 0, mixed: false }
    }
}

/// What a training run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrainSummary {
    /// Requests recorded in the table.
    pub requests: u64,
    /// Unrecorded head moves.
    pub moves: u64,
    /// Cells trained (reads and writes) and cells no request of their size can reach.
    pub cells: u64,
    pub unreachable: u64,
    /// Simulated device time, ns.
    pub device_ns: u64,
}

/// The largest distance (bytes) a request of `bytes` can have on a disk of `capacity`.
fn max_distance(capacity: u64, bytes: u64) -> u64 {
    capacity.saturating_sub(bytes)
}

/// The device capacity training uses: the model's own, or the configured one; both given must
/// agree.
pub fn capacity_of(device: &dyn Device, cfg: &TrainConfig) -> Result<u64, ConfigError> {
    match (device.capacity_sectors(), cfg.capacity_bytes) {
        (Some(s), None) => Ok(s * SECTOR),
        (Some(s), Some(c)) if s * SECTOR != c => Err(ConfigError::new(
            "--capacity",
            format!("device `{}` has {} bytes; give no --capacity or that one", device.name(), s * SECTOR),
        )),
        (_, Some(c)) => Ok(c),
        (None, None) => Err(ConfigError::new("--capacity", format!("device `{}` has no capacity; give --capacity", device.name()))),
    }
}

/// Trains a fresh table against `device`; `progress(done, total)` is called now and then.
pub fn train(device: &mut dyn Device, cfg: &TrainConfig, progress: &mut dyn FnMut(u64, u64)) -> Result<(TableModel, TrainSummary), ConfigError> {
    if cfg.samples == 0 {
        return Err(ConfigError::new("--samples", "at least one sample per cell"));
    }
    let capacity = capacity_of(device, cfg)?;
    if capacity < BLOCK_BYTES * ROWS as u64 {
        return Err(ConfigError::new("--capacity", format!("{capacity} bytes is smaller than one 128 KiB request")));
    }
    let mut model = TableModel::new(capacity, cfg.values_per_cell)?;
    let cols = model.columns();
    // Cell index: (op, row, col) as op * ROWS * cols + row * cols + col.
    let mut cells = Vec::new();
    let mut unreachable = 0u64;
    for op in 0..2usize {
        for row in 0..ROWS {
            let bytes = (row as u64 + 1) * BLOCK_BYTES;
            for col in 0..cols {
                if column_range(col).0 > max_distance(capacity, bytes) {
                    unreachable += 1;
                } else {
                    cells.push(((op * ROWS + row) * cols + col) as u32);
                }
            }
        }
    }
    let trained = cells.len() as u64;
    let mut order: Vec<u32> = Vec::with_capacity(cells.len() * cfg.samples as usize);
    for _ in 0..cfg.samples {
        order.extend_from_slice(&cells);
    }
    let mut rng = Pcg64Mcg::seed_from_u64(cfg.seed);
    order.shuffle(&mut rng);
    if !cfg.mixed {
        // Stable: each table keeps its random order.
        let per_op = (ROWS * cols) as u32;
        order.sort_by_key(|&c| c / per_op);
    }
    let total = order.len() as u64;
    let sectors_total = capacity / SECTOR;
    let mut now = 0u64;
    let mut end = 0u64; // where the previous request ended, sectors
    let mut moves = 0u64;
    let gap = cfg.gap_ns;
    let serve = |device: &mut dyn Device, req: DeviceRequest, now: &mut u64| -> u64 {
        *now += gap;
        let s = device.service(&req, *now);
        let t = s.finish_ns - *now;
        *now = s.finish_ns;
        t
    };
    progress(0, total);
    for (i, &cell) in order.iter().enumerate() {
        let cell = cell as usize;
        let (op_row, col) = (cell / cols, cell % cols);
        let (op, row) = (if op_row / ROWS == 0 { Op::Read } else { Op::Write }, op_row % ROWS);
        let bytes = (row as u64 + 1) * BLOCK_BYTES;
        let sectors = bytes / SECTOR;
        let (lo, hi) = column_range(col);
        let hi = hi.min(max_distance(capacity, bytes) + 1);
        // Distance in sectors, uniform in the column's range.
        let d = if col == 0 { 0 } else { rng.gen_range(lo.div_ceil(SECTOR)..hi.div_ceil(SECTOR).max(lo.div_ceil(SECTOR) + 1)) };
        let fits = |end: u64| -> (bool, bool) { (end + d + sectors <= sectors_total, d <= end && end - d + sectors <= sectors_total) };
        let (mut fwd, mut back) = fits(end);
        if !fwd && !back {
            // Move the head to the end of the disk (or its start) without recording.
            for at in [sectors_total - BLOCK_BYTES / SECTOR, 0] {
                let mv = DeviceRequest::read(at, BLOCK_BYTES / SECTOR);
                serve(device, mv, &mut now);
                moves += 1;
                end = at + BLOCK_BYTES / SECTOR;
                (fwd, back) = fits(end);
                if fwd || back {
                    break;
                }
            }
        }
        let start = match (fwd, back) {
            (true, true) => if rng.gen::<bool>() { end + d } else { end - d },
            (true, false) => end + d,
            (false, true) => end - d,
            (false, false) => unreachable!("a reachable cell fits from one end of the disk"),
        };
        let req = DeviceRequest { op, device: 0, sector: start, sectors };
        let t = serve(device, req, &mut now);
        let dist = (start * SECTOR).abs_diff(end * SECTOR);
        debug_assert_eq!(column(dist, cols), col);
        model.observe(op, bytes, dist, t);
        end = start + sectors;
        if i % 4096 == 4095 {
            progress(i as u64 + 1, total);
        }
    }
    progress(total, total);
    Ok((model, TrainSummary { requests: total, moves, cells: trained, unreachable, device_ns: now }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::table::Table;

    /// A hand-written table with a distinct value per (op, row, column).
    fn hand_table(capacity: u64) -> TableModel {
        let cols = crate::device::table::column_count(capacity);
        let row = |op: u32, r: usize| -> String {
            let v: Vec<String> = (0..cols).map(|c| format!("{}", 0.1 * (op as f64 + 1.0) + r as f64 * 0.01 + c as f64 * 0.25)).collect();
            format!("[{}]", v.join(","))
        };
        let rows = |op| (0..ROWS).map(|r| row(op, r)).collect::<Vec<_>>().join(",");
        let text = format!(r#"{{"capacity_bytes": {capacity}, "values_per_cell": 64, "read": [{}], "write": [{}]}}"#, rows(0), rows(1));
        TableModel::from_json(std::path::Path::new("hand.json"), &text).unwrap()
    }

    /// D-K4 (training): a table trained against a table device holds that device's values exactly
    /// in every reachable cell; a cell out of reach stays untrained.
    #[test]
    fn table_learns_a_table_device_exactly() {
        let capacity = 3 * crate::device::table::GIB;
        let truth = hand_table(capacity);
        let mut dev = Table::new(truth.clone(), "hand.json");
        let cfg = TrainConfig { samples: 3, seed: 5, ..Default::default() };
        let (learned, sum) = train(&mut dev, &cfg, &mut |_, _| {}).unwrap();
        assert_eq!(learned.columns(), 21);
        assert_eq!(sum.cells + sum.unreachable, 2 * 32 * 21);
        assert_eq!(sum.unreachable, 0, "every column of a 3 GiB disk is reachable at 128 KiB");
        assert_eq!(sum.requests, 3 * sum.cells);
        for op in [Op::Read, Op::Write] {
            for row in 0..ROWS {
                for col in 0..21 {
                    assert_eq!(learned.trained_value(op, row, col), truth.trained_value(op, row, col), "{op:?} {row} {col}");
                }
            }
        }
        // Deterministic per seed.
        let mut dev2 = Table::new(truth.clone(), "hand.json");
        let (again, _) = train(&mut dev2, &cfg, &mut |_, _| {}).unwrap();
        assert_eq!(again.to_json(), learned.to_json());
    }

    #[test]
    fn trains_the_hdd_model_with_sensible_values() {
        let mut dev = crate::device::build("hdd:st3400620as,capacity=4GiB").unwrap();
        let cfg = TrainConfig { samples: 4, seed: 1, ..Default::default() };
        let mut calls = 0;
        let (t, sum) = train(dev.as_mut(), &cfg, &mut |d, n| {
            calls += 1;
            assert!(d <= n);
        }).unwrap();
        assert!(calls >= 2);
        assert_eq!(sum.unreachable, 0);
        // Reads: farther is slower (seek); cached writes: well under a millisecond in most cells.
        let mean = |op, row, cols: std::ops::RangeInclusive<usize>| {
            let n = cols.clone().count() as f64;
            cols.map(|c| t.trained_value(op, row, c).unwrap()).sum::<f64>() / n
        };
        for row in [0, 31] {
            let (near, far) = (mean(Op::Read, row, 1..=6), mean(Op::Read, row, 19..=21));
            assert!(far > 1.5 * near && far > 8e6, "row {row}: near {near} ns, far {far} ns");
        }
        let fast = (0..22).filter(|&c| t.trained_value(Op::Write, 0, c).unwrap() < 1e6).count();
        assert!(fast >= 18, "{fast}");
        // A different seed, a different (but similar) table.
        let mut dev = crate::device::build("hdd:st3400620as,capacity=4GiB").unwrap();
        let (u, _) = train(dev.as_mut(), &TrainConfig { seed: 2, ..cfg }, &mut |_, _| {}).unwrap();
        assert_ne!(u.to_json(), t.to_json());
    }

    /// Records the ops it is asked to serve, 1 ms each.
    struct Recorder(Vec<Op>, u64);
    impl Device for Recorder {
        fn name(&self) -> String {
            "recorder".into()
        }
        fn service(&mut self, req: &DeviceRequest, now: u64) -> crate::device::Service {
            self.0.push(req.op);
            let start = now.max(self.1);
            self.1 = start + 1_000_000;
            crate::device::Service { start_ns: start, finish_ns: self.1, cache_hit: false }
        }
        fn parameters(&self) -> serde_json::Value {
            serde_json::Value::Null
        }
        fn capacity_sectors(&self) -> Option<u64> {
            Some((1 << 30) / SECTOR)
        }
    }

    #[test]
    fn reads_are_trained_first_unless_mixed() {
        let mut dev = Recorder(Vec::new(), 0);
        let cfg = TrainConfig { samples: 2, gap_ns: 500, ..Default::default() };
        let (_, sum) = train(&mut dev, &cfg, &mut |_, _| {}).unwrap();
        let half = (sum.requests / 2) as usize;
        assert_eq!(dev.0.len(), sum.requests as usize + sum.moves as usize);
        // Every read cell first (head moves are reads too, in either phase), then the writes.
        let first_write = dev.0.iter().position(|&o| o == Op::Write).unwrap();
        assert!(first_write >= half, "{first_write} < {half}");
        assert_eq!(dev.0[first_write..].iter().filter(|&&o| o == Op::Write).count(), half);
        // The gap is idle time before each request.
        assert_eq!(sum.device_ns, (sum.requests + sum.moves) * 1_000_500);
        let mut dev = Recorder(Vec::new(), 0);
        train(&mut dev, &TrainConfig { samples: 2, mixed: true, ..Default::default() }, &mut |_, _| {}).unwrap();
        assert!(dev.0[..half].iter().any(|&o| o == Op::Write));
    }

    #[test]
    fn capacity_is_needed_and_checked() {
        let mut fixed = crate::device::build("fixed:1ms").unwrap();
        let e = train(fixed.as_mut(), &TrainConfig::default(), &mut |_, _| {}).err().unwrap().to_string();
        assert!(e.contains("--capacity"), "{e}");
        let cfg = TrainConfig { capacity_bytes: Some(1 << 30), samples: 1, ..Default::default() };
        let (t, _) = train(fixed.as_mut(), &cfg, &mut |_, _| {}).unwrap();
        assert_eq!(t.estimate(Op::Read, 4096, 12345 * 512), 1_000_000);
        let mut hdd = crate::device::build("hdd:st3400620as,capacity=4GiB").unwrap();
        assert!(train(hdd.as_mut(), &TrainConfig { capacity_bytes: Some(1 << 30), ..Default::default() }, &mut |_, _| {}).is_err());
        assert!(train(hdd.as_mut(), &TrainConfig { samples: 0, ..Default::default() }, &mut |_, _| {}).is_err());
    }
}
