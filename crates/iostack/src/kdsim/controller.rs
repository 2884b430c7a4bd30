//! The on-line controller of KDSim used as a framework (KDSim paper, González-Férez, Piernas and
//! Cortes, Computer Journal 59(10), 2016, §3 and §7): two settings of one part of the stack, one
//! running on the real system, the other played beside it on the virtual disk, and a window
//! comparison that adopts the other when it would have done better.
//!
//! What is the same whatever the two settings are lives here; what a setting *is* (an I/O
//! scheduler in the device's lane, `sched::select`; a readahead setting of the page cache,
//! `prefetch::select`) and how the road not taken is played stays with the selector of that part.
//!
//! - The settings (`A,B[,window=N][,cadence=...][,table=PATH][,margin=PCT][,verify=on|off]`,
//!   [`ControllerConfig`]): A runs first.
//! - Each read the selector measures is recorded for the setting that produced it
//!   ([`Controller::record`]) in [`WindowComparator`]'s two windows (A as the baseline, B as the
//!   candidate, whichever system produced the values: a setting keeps its window across
//!   switches). The selector counts the running setting's reads ([`Controller::count`]), the
//!   cadence's clock; at a check it calls [`Controller::decide`].
//! - The decision: the other setting is adopted when its window sum is strictly smaller than the
//!   running one's less the margin (KDSim's condition (1) is a strict "<"), once the played side
//!   has a full window of its own since it started playing (the selector says when: before that
//!   its missing reads would be judged from the ones it finished first).
//! - The verification (`verify=on`, [`Verifier`]): a switch is checked on the real system by the
//!   new setting's first window there against the window sum it was decided on; a worse one is
//!   switched back and the setting left is held for a period that doubles with each revert.
//! - The report: switches, per-check window sums, time shares ([`Controller::report`]).

use std::path::PathBuf;

use crate::error::ConfigError;
use crate::kdsim::window::{Cadence, Check, Side, WindowComparator};

/// The controller's settings, as `--sched-select` and `--prefetch-select` spell them.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerConfig {
    /// The two settings' specs: the first runs on the real system at the start.
    pub specs: [String; 2],
    pub window: usize,
    pub cadence: Cadence,
    /// The virtual disk's starting table (`None`: learned on line from zero).
    pub table: Option<PathBuf>,
    /// How much smaller (in percent of the running setting's sum) the other's sum must be for
    /// a switch; 0 (the default) is KDSim's strict "smaller".
    pub margin_pct: f64,
    /// Verify each switch on the real system, reverting it with a doubling hold (`verify=on`).
    pub verify: bool,
}

const KEYS: [&str; 5] = ["window", "cadence", "table", "margin", "verify"];

impl ControllerConfig {
    /// Parses `A,B[,window=1000][,cadence=tumbling|sliding][,table=PATH][,margin=PCT][,verify=on|off]`
    /// for `option` (e.g. `--sched-select`), whose settings are `noun`s (`schedulers`), `example`
    /// a valid pair. A setting's own parameters follow it as in its own option
    /// (`deadline:read_expire=100ms,fifo_batch=8`): an item `key=value` whose key is not the
    /// controller's belongs to the setting before it.
    pub fn parse(option: &str, noun: &str, example: &str, text: &str) -> Result<ControllerConfig, ConfigError> {
        let mut specs: Vec<String> = Vec::new();
        let (mut window, mut cadence, mut table, mut margin_pct, mut verify) = (1000usize, Cadence::Tumbling, None, 0.0, true);
        let field = |k: &str| format!("{option} {k}");
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let kv = item.split_once('=').filter(|(k, _)| !k.contains(':'));
            match kv {
                Some((k, v)) if KEYS.contains(&k.trim()) => {
                    let v = v.trim();
                    match k.trim() {
                        "window" => {
                            window = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| ConfigError::new(field("window"), format!("`{v}` is not a positive number of requests")))?;
                        }
                        "cadence" => cadence = Cadence::parse(&field("cadence"), v)?,
                        "margin" => {
                            margin_pct = v
                                .trim_end_matches('%')
                                .parse::<f64>()
                                .ok()
                                .filter(|m| (0.0..100.0).contains(m))
                                .ok_or_else(|| ConfigError::new(field("margin"), format!("`{v}` is not a percentage in [0, 100)")))?;
                        }
                        "verify" => {
                            verify = match v {
                                "on" => true,
                                "off" => false,
                                other => return Err(ConfigError::unknown(&field("verify"), "value", other, &["on", "off"])),
                            };
                        }
                        _ => {
                            if v.is_empty() {
                                return Err(ConfigError::new(field("table"), "an empty path"));
                            }
                            table = Some(PathBuf::from(v));
                        }
                    }
                }
                Some(_) => match specs.last_mut() {
                    // A parameter of the setting before it.
                    Some(last) => {
                        last.push(if last.contains(':') { ',' } else { ':' });
                        last.push_str(item);
                    }
                    None => return Err(ConfigError::unknown(option, "parameter", item.split('=').next().unwrap_or(item), &KEYS)),
                },
                None => specs.push(item.to_string()),
            }
        }
        let [a, b]: [String; 2] = specs.try_into().map_err(|v: Vec<String>| {
            ConfigError::new(option, format!("give exactly two {noun} to choose between (e.g. `{example}`), not {} ({})", v.len(), v.join(", ")))
        })?;
        if a == b {
            return Err(ConfigError::new(option, format!("the two {noun} are the same (`{a}`): nothing to choose")));
        }
        Ok(ControllerConfig { specs: [a, b], window, cadence, table, margin_pct, verify })
    }

    /// `window=N,cadence=...,verify=...` for a component's name.
    pub fn describe(&self) -> String {
        format!("window={},cadence={},verify={}", self.window, self.cadence.name(), if self.verify { "on" } else { "off" })
    }
}

/// A setting taking effect on the real system.
#[derive(Debug, Clone, PartialEq)]
pub struct Switch {
    /// The selector's count of reads when it took effect (see its report).
    pub request: u64,
    pub time_ns: u64,
    /// The setting's spec as given.
    pub setting: String,
    /// `window`: the window comparison chose it; `revert`: the verification undid the switch
    /// before this one.
    pub cause: &'static str,
    /// The replaced setting's window sum when the switch was decided.
    pub before_ms: Option<f64>,
    /// The new setting's first window sum on the real system (`null`: not verified, the run
    /// ended first, or a revert, which is not verified itself).
    pub after_ms: Option<f64>,
    /// Whether the verification found the new setting worse and switched back.
    pub reverted: bool,
}

impl Switch {
    /// The switch as JSON, the setting under `key` (`scheduler`, `prefetch`).
    pub fn json(&self, key: &str) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("request".into(), self.request.into());
        m.insert("time_ns".into(), self.time_ns.into());
        m.insert(key.into(), self.setting.clone().into());
        m.insert("cause".into(), self.cause.into());
        m.insert("before_ms".into(), serde_json::json!(self.before_ms));
        m.insert("after_ms".into(), serde_json::json!(self.after_ms));
        m.insert("reverted".into(), self.reverted.into());
        serde_json::Value::Object(m)
    }
}

/// What a check does to a switch awaiting its verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// No switch awaits one.
    Idle,
    /// The new setting's first real window is not complete yet: no decision.
    Wait,
    /// Its real window is no worse than the replaced one's: the switch stands, the hold is reset.
    Confirm { after_ms: f64 },
    /// Its real window is worse: switch back and hold the old setting for `hold_windows`.
    Revert { after_ms: f64, hold_windows: u64 },
}

/// The switch verification's rule with its back-off, apart from the settings it applies to.
/// Counts are the cadence's clock (reads of the running setting).
#[derive(Debug, Clone)]
pub struct Verifier {
    window: u64,
    /// The switch awaiting its verdict: the count at it and the replaced setting's sum.
    pending: Option<(u64, f64)>,
    /// No switch away from the running setting before this count.
    hold_until: u64,
    /// The hold the next revert imposes, in windows.
    next_hold: u64,
}

/// A hold stops doubling here (about a million windows: the rest of any run).
const MAX_HOLD_WINDOWS: u64 = 1 << 20;

impl Verifier {
    pub fn new(window: usize) -> Verifier {
        Verifier { window: window as u64, pending: None, hold_until: 0, next_hold: 1 }
    }

    /// A switch took effect at `count`, decided while the replaced setting's sum was `before_ms`.
    pub fn switched(&mut self, count: u64, before_ms: f64) {
        self.pending = Some((count, before_ms));
    }

    /// A check at `count` where the running setting's sum is `running_ms`.
    pub fn check(&mut self, count: u64, running_ms: Option<f64>) -> Verdict {
        let Some((at, before)) = self.pending else { return Verdict::Idle };
        let after = match running_ms {
            Some(ms) if count >= at + self.window => ms,
            _ => return Verdict::Wait,
        };
        self.pending = None;
        if after > before {
            let hold_windows = self.next_hold;
            self.next_hold = (self.next_hold * 2).min(MAX_HOLD_WINDOWS);
            self.hold_until = count + hold_windows * self.window;
            Verdict::Revert { after_ms: after, hold_windows }
        } else {
            self.next_hold = 1;
            Verdict::Confirm { after_ms: after }
        }
    }

    /// Whether a switch away from the running setting may be decided at `count`.
    pub fn may_switch(&self, count: u64) -> bool {
        self.pending.is_none() && count >= self.hold_until
    }
}

/// One logged check.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WindowSums {
    /// The selector's count of reads at the check.
    pub request: u64,
    /// Reads of the running setting counted (the cadence's clock).
    pub completed: u64,
    pub time_ns: u64,
    /// Each setting's window sum (scaled to the window when it has fewer; `null`: none yet),
    /// A's and B's.
    pub a_ms: Option<f64>,
    pub b_ms: Option<f64>,
    pub a_requests: usize,
    pub b_requests: usize,
    /// The setting on the real system after the check.
    pub running: String,
}

fn side(i: usize) -> Side {
    if i == 1 {
        Side::Candidate
    } else {
        Side::Baseline
    }
}

/// The decision state: the two windows, which setting runs, the verification, and the log.
#[derive(Debug, Clone)]
pub struct Controller {
    cfg: ControllerConfig,
    cmp: WindowComparator,
    running: usize,
    verifier: Verifier,
    switches: Vec<Switch>,
    windows: Vec<WindowSums>,
    checks: u64,
    undecided: u64,
    reverted: u64,
    /// Time each setting ran, up to `since` (the last switch).
    time_ns: [u64; 2],
    since: u64,
    /// Reads counted while each setting ran.
    counted: [u64; 2],
}

impl Controller {
    pub fn new(cfg: ControllerConfig) -> Result<Controller, ConfigError> {
        let cmp = WindowComparator::new(cfg.window, cfg.cadence)?;
        Ok(Controller {
            cmp,
            running: 0,
            verifier: Verifier::new(cfg.window),
            switches: Vec::new(),
            windows: Vec::new(),
            checks: 0,
            undecided: 0,
            reverted: 0,
            time_ns: [0; 2],
            since: 0,
            counted: [0; 2],
            cfg,
        })
    }

    pub fn config(&self) -> &ControllerConfig {
        &self.cfg
    }

    /// Which setting runs on the real system (0: A, 1: B).
    pub fn running(&self) -> usize {
        self.running
    }

    /// The running setting's spec.
    pub fn running_spec(&self) -> &str {
        &self.cfg.specs[self.running]
    }

    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }

    /// A read of `setting` (0: A, 1: B) took `time_ns` for `blocks` blocks.
    pub fn record(&mut self, setting: usize, time_ns: f64, blocks: u64) {
        self.cmp.record(side(setting), time_ns, blocks);
    }

    /// Counts one read of `setting` (the running one, or the one that ran when the read was
    /// served): the cadence's clock; a check when one is due.
    pub fn count(&mut self, setting: usize) -> Option<Check> {
        self.counted[setting] += 1;
        self.cmp.count()
    }

    /// Decides at check `c`, at time `now`, the selector's read count being `request`; `young`
    /// when the played side has not completed a window of its own since it started. Returns
    /// whether the running setting changed: the selector then puts the other setting on the real
    /// system and plays the one left.
    pub fn decide(&mut self, c: Check, young: bool, request: u64, now: u64) -> bool {
        self.checks += 1;
        let (a, b) = (c.baseline_ms, c.candidate_ms);
        let (run, other) = if self.running == 0 { (a, b) } else { (b, a) };
        let verdict = if self.cfg.verify { self.verifier.check(c.request, run) } else { Verdict::Idle };
        let mut switched = false;
        match verdict {
            Verdict::Revert { after_ms, .. } => {
                let last = self.switches.last_mut().expect("a switch awaited its verdict");
                last.after_ms = Some(after_ms);
                last.reverted = true;
                self.reverted += 1;
                self.switch(request, now, "revert", run);
                switched = true;
            }
            Verdict::Confirm { after_ms } => self.switches.last_mut().expect("a switch awaited its verdict").after_ms = Some(after_ms),
            Verdict::Idle | Verdict::Wait => {}
        }
        if !switched && (!self.cfg.verify || self.verifier.may_switch(c.request)) {
            switched = match (run, other) {
                (Some(run), Some(other)) if !young => other < run * (1.0 - self.cfg.margin_pct / 100.0),
                _ => {
                    self.undecided += 1;
                    false
                }
            };
            if switched {
                self.switch(request, now, "window", run);
                if self.cfg.verify {
                    self.verifier.switched(c.request, run.expect("compared"));
                }
            }
        }
        let n = self.cfg.window as u64;
        if switched || self.cfg.cadence == Cadence::Tumbling || c.request % n == 0 {
            self.windows.push(WindowSums {
                request,
                completed: c.request,
                time_ns: now,
                a_ms: a,
                b_ms: b,
                a_requests: c.baseline_requests,
                b_requests: c.candidate_requests,
                running: self.running_spec().to_string(),
            });
        }
        switched
    }

    fn switch(&mut self, request: u64, now: u64, cause: &'static str, before_ms: Option<f64>) {
        let other = 1 - self.running;
        self.time_ns[self.running] += now - self.since;
        self.since = now;
        self.running = other;
        self.switches.push(Switch { request, time_ns: now, setting: self.cfg.specs[other].clone(), cause, before_ms, after_ms: None, reverted: false });
    }

    /// The report's common part at time `now`: `window`, `cadence`, `margin_pct`, `verify`,
    /// `table`, `running`, `switches` (the setting under `key`), `reverted_switches`, `checks`,
    /// `undecided_checks`, `windows`, and under `list` (`schedulers`) one entry per setting with
    /// `spec`, `name` (from `names`), `time_ns`, `time_share`, `reads`, `read_share`.
    pub fn report(&self, now: u64, key: &str, list: &str, names: &[String; 2]) -> serde_json::Map<String, serde_json::Value> {
        let mut time = self.time_ns;
        time[self.running] += now.saturating_sub(self.since);
        let total = (time[0] + time[1]).max(1) as f64;
        let reads = (self.counted[0] + self.counted[1]).max(1) as f64;
        let settings: Vec<serde_json::Value> = (0..2)
            .map(|i| {
                serde_json::json!({
                    "spec": self.cfg.specs[i],
                    "name": names[i],
                    "time_ns": time[i],
                    "time_share": time[i] as f64 / total,
                    "reads": self.counted[i],
                    "read_share": self.counted[i] as f64 / reads,
                })
            })
            .collect();
        let v = serde_json::json!({
            "window": self.cfg.window,
            "cadence": self.cfg.cadence.name(),
            "margin_pct": self.cfg.margin_pct,
            "verify": self.cfg.verify,
            "table": self.cfg.table.as_ref().map(|p| p.display().to_string()),
            list: settings,
            "running": self.running_spec(),
            "switches": self.switches.iter().map(|s| s.json(key)).collect::<Vec<_>>(),
            "reverted_switches": self.reverted,
            "checks": self.checks,
            "undecided_checks": self.undecided,
            "windows": self.windows,
        });
        match v {
            serde_json::Value::Object(m) => m,
            _ => unreachable!("an object"),
        }
    }
}
