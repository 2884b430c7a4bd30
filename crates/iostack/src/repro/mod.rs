//! Reproductions of the papers' worked examples and experiments.
//!
//! Each reproduction builds the paper's input with iostack's own generators and components,
//! runs it, and reports the paper's figure beside iostack's, with checks that state what must
//! agree. `iostack repro NAME` prints one; `docs/reproductions.md` collects them. Nothing here
//! knows an answer in advance: the paper's numbers are data to compare with, and the inputs are
//! parameterised (block numbers, seeds) so that tests can vary them.

pub mod acfs_fig1;
pub mod acfs_multi;
pub mod acfs_runs;
pub mod acfs_single;
pub mod ada_air;
pub mod ada_aip;
pub mod ada_patterns;
pub mod affinity_disk_size;
pub mod affinity_extremes;
pub mod affinity_scheduler;
pub mod dulo_sensitivity;
pub mod dulo_table1;
pub mod dulo_trends;
pub mod kdsim_accuracy;
pub mod kdsim_table1;
pub mod prefetch_cache;
pub mod ra_select;
pub mod redcap_patterns;
pub mod sched_select;
pub mod split_experiment;
pub mod split_tables;

use serde::{Deserialize, Serialize};

/// One comparison between the paper and iostack: the paper's value, iostack's, the tolerance
/// the comparison was judged by (in words: "exact", "within 0.05", "direction only", ...), and
/// the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub what: String,
    pub paper: String,
    pub iostack: String,
    pub tolerance: String,
    pub ok: bool,
}

impl Check {
    pub fn new(what: impl Into<String>, paper: impl ToString, iostack: impl ToString, tolerance: impl ToString, ok: bool) -> Check {
        Check { what: what.into(), paper: paper.to_string(), iostack: iostack.to_string(), tolerance: tolerance.to_string(), ok }
    }
    /// Equality of two values (tolerance "exact").
    pub fn eq<T: PartialEq + std::fmt::Debug>(what: impl Into<String>, paper: T, iostack: T) -> Check {
        let ok = paper == iostack;
        Check::new(what, format!("{paper:?}"), format!("{iostack:?}"), "exact", ok)
    }
    /// A number at least `min` (the paper's lower bound or a margin on it).
    pub fn at_least(what: impl Into<String>, paper: impl ToString, iostack: f64, min: f64, unit: &str) -> Check {
        Check::new(what, paper, format!("{iostack:.3}{unit}"), format!(">= {min}{unit}"), iostack >= min)
    }
    /// A number within `[lo, hi]`.
    pub fn within(what: impl Into<String>, paper: impl ToString, iostack: f64, lo: f64, hi: f64, unit: &str) -> Check {
        Check::new(what, paper, format!("{iostack:.3}{unit}"), format!("in [{lo}, {hi}]{unit}"), (lo..=hi).contains(&iostack))
    }
}

/// Reports how far a long reproduction has got: `step` after each of `total` runs. The CLI shows
/// a progress bar on a terminal; tests and the quiet default ignore it.
pub struct Progress<'a> {
    hook: Option<&'a (dyn Fn(u64, u64, &str) + Sync)>,
    done: std::sync::atomic::AtomicU64,
    total: std::sync::atomic::AtomicU64,
}

impl<'a> Progress<'a> {
    /// No progress shown.
    pub fn none() -> Progress<'static> {
        Progress { hook: None, done: 0.into(), total: 0.into() }
    }
    /// Calls `hook(done, total, what)` after each step.
    pub fn new(hook: &'a (dyn Fn(u64, u64, &str) + Sync)) -> Progress<'a> {
        Progress { hook: Some(hook), done: 0.into(), total: 0.into() }
    }
    /// Adds `n` steps to the total.
    pub fn expect(&self, n: u64) {
        self.total.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }
    /// One step done (`what`: the run that just finished).
    pub fn step(&self, what: &str) {
        let done = self.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if let Some(h) = self.hook {
            h(done, self.total.load(std::sync::atomic::Ordering::Relaxed), what);
        }
    }
}

/// A figure in the paper's form: series of (x, y) points, the paper's values as series of
/// their own (`paper: true`) where the paper gives numbers, drawn over iostack's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// File name stem (`figure1-hit-rate`).
    pub name: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// `line` or `bar`.
    pub kind: String,
    #[serde(default)]
    pub log_x: bool,
    /// Category names for bar charts (x = 0, 1, ... index them).
    #[serde(default)]
    pub x_ticks: Vec<String>,
    pub series: Vec<Series>,
}

impl Figure {
    pub fn line(name: &str, title: impl Into<String>, x_label: &str, y_label: &str, series: Vec<Series>) -> Figure {
        Figure { name: name.into(), title: title.into(), x_label: x_label.into(), y_label: y_label.into(), kind: "line".into(), log_x: false, x_ticks: Vec::new(), series }
    }
    pub fn bar(name: &str, title: impl Into<String>, y_label: &str, ticks: &[&str], series: Vec<Series>) -> Figure {
        Figure {
            name: name.into(),
            title: title.into(),
            x_label: String::new(),
            y_label: y_label.into(),
            kind: "bar".into(),
            log_x: false,
            x_ticks: ticks.iter().map(|t| t.to_string()).collect(),
            series,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub label: String,
    /// The paper's values (drawn as hollow markers, dashed).
    pub paper: bool,
    pub x: Vec<f64>,
    pub y: Vec<f64>,
}

impl Series {
    pub fn iostack(label: impl Into<String>, points: impl IntoIterator<Item = (f64, f64)>) -> Series {
        let (x, y) = points.into_iter().unzip();
        Series { label: label.into(), paper: false, x, y }
    }
    pub fn paper(label: impl Into<String>, points: impl IntoIterator<Item = (f64, f64)>) -> Series {
        let (x, y) = points.into_iter().unzip();
        Series { label: label.into(), paper: true, x, y }
    }
}

/// A reproduction's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub name: String,
    pub title: String,
    /// The paper and section reproduced.
    pub source: String,
    /// Everything the run was built from.
    pub config: serde_json::Value,
    /// Tables to print (title, header, rows).
    pub tables: Vec<Table>,
    pub checks: Vec<Check>,
    pub notes: Vec<String>,
    /// The paper's figures, redrawn (`iostack repro NAME --plot DIR`).
    #[serde(default)]
    pub figures: Vec<Figure>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Report {
    /// Whether every check agreed.
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }

    /// Plain-text rendering.
    pub fn to_text(&self) -> String {
        let mut s = format!("{} — {}\nsource: {}\n", self.name, self.title, self.source);
        for t in &self.tables {
            s += &format!("\n{}\n", t.title);
            s += &render(&t.header, &t.rows);
        }
        if !self.checks.is_empty() {
            s += "\nchecks:\n";
            let rows: Vec<Vec<String>> = self
                .checks
                .iter()
                .map(|c| vec![if c.ok { "ok" } else { "DIFFERS" }.to_string(), c.what.clone(), c.paper.clone(), c.iostack.clone(), c.tolerance.clone()])
                .collect();
            s += &render(&["".into(), "what".into(), "paper".into(), "iostack".into(), "tolerance".into()], &rows);
            let failed = self.checks.iter().filter(|c| !c.ok).count();
            s += &if failed == 0 {
                format!("\nverdict: holds ({} of {} checks agree)\n", self.checks.len(), self.checks.len())
            } else {
                format!("\nverdict: DIFFERS ({failed} of {} checks differ)\n", self.checks.len())
            };
        }
        for n in &self.notes {
            s += &format!("\nnote: {n}\n");
        }
        s
    }
}

fn render(header: &[String], rows: &[Vec<String>]) -> String {
    let n = header.len().max(rows.iter().map(|r| r.len()).max().unwrap_or(0));
    let mut w = vec![0; n];
    for r in std::iter::once(header).chain(rows.iter().map(|r| r.as_slice())) {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |r: &[String]| {
        let mut l = String::new();
        for (i, c) in r.iter().enumerate() {
            l += c;
            if i + 1 < r.len() {
                l += &" ".repeat(w[i] - c.chars().count() + 2);
            }
        }
        l.trim_end().to_string() + "\n"
    };
    let mut s = line(header);
    for r in rows {
        s += &line(r);
    }
    s
}

/// A reproduction iostack can run.
pub struct ReproInfo {
    pub name: &'static str,
    pub title: &'static str,
    /// Whether it runs in well under a second (tests run the quick ones in full).
    pub quick: bool,
    pub run: fn(&Progress) -> Report,
}

/// Every reproduction.
pub static REPROS: &[ReproInfo] = &[
    dulo_table1::INFO,
    split_tables::INFO_TABLE1,
    split_tables::INFO_TABLE2,
    split_tables::INFO_TABLE3,
    split_tables::INFO_TABLE4,
    split_experiment::INFO_FIG1,
    split_experiment::INFO_FIG2,
    split_experiment::INFO_FIG3,
    split_experiment::INFO_FIG4,
    dulo_trends::INFO,
    dulo_sensitivity::INFO_TABLE2,
    dulo_sensitivity::INFO_TABLE3,
    dulo_sensitivity::INFO_FIG7,
    affinity_extremes::INFO,
    acfs_fig1::INFO,
    acfs_single::INFO_FIG4_5,
    acfs_single::INFO_FIG6_7,
    acfs_multi::INFO_FIG8_9,
    acfs_multi::INFO_FIG10_11,
    affinity_disk_size::INFO,
    affinity_scheduler::INFO,
    kdsim_accuracy::INFO,
    kdsim_table1::INFO,
    redcap_patterns::INFO,
    ada_patterns::INFO,
    ada_air::INFO,
    ada_aip::INFO,
    sched_select::INFO,
    ra_select::INFO,
];

/// The status table of `docs/reproductions.md`: one row per report, with how many checks agree
/// and the verdict (naming the checks that differ). The table in the docs is this function of
/// the stored `iostack repro NAME --json` outputs in `docs/repro/`, which a test keeps true.
pub fn status_table(reports: &[Report]) -> String {
    let mut s = String::from("| reproduction | what | checks agreeing | verdict |\n|---|---|---|---|\n");
    for r in reports {
        let failed: Vec<&str> = r.checks.iter().filter(|c| !c.ok).map(|c| c.what.as_str()).collect();
        let verdict = if failed.is_empty() { "holds".to_string() } else { format!("differs: {}", failed.join("; ")) };
        let agree = r.checks.len() - failed.len();
        s += &format!("| `{}` | {} | {agree} of {} | {verdict} |\n", r.name, r.title.replace('|', "/"), r.checks.len());
    }
    s
}

/// Looks a reproduction up by name (case-insensitive).
pub fn find(name: &str) -> Option<&'static ReproInfo> {
    REPROS.iter().find(|r| r.name.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEGIN: &str = "<!-- status: generated from docs/repro/*.json by repro::tests; do not edit -->\n";
    const END: &str = "<!-- end of status -->";

    fn docs() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
    }

    /// The stored report of every reproduction (`iostack repro NAME --json > docs/repro/NAME.json`).
    fn stored() -> Vec<Report> {
        REPROS
            .iter()
            .map(|r| {
                let path = docs().join("repro").join(format!("{}.json", r.name));
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}; run `iostack repro {} --json > {}`", path.display(), r.name, path.display()));
                let report: Report = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(report.name, r.name, "{}", path.display());
                report
            })
            .collect()
    }

    /// The status table in docs/reproductions.md is the one the stored reports give (set
    /// IOSTACK_UPDATE_REPRO_DOCS=1 to rewrite it from them), and the quick reproductions, run
    /// now, give the stored checks and verdicts.
    #[test]
    fn docs_status_table_matches_the_reports() {
        let reports = stored();
        for (info, report) in REPROS.iter().zip(&reports) {
            if info.quick {
                let now = (info.run)(&Progress::none());
                assert_eq!(now.checks, report.checks, "{}: docs/repro/{}.json is stale", info.name, info.name);
                assert_eq!(now.tables, report.tables, "{}: docs/repro/{}.json is stale", info.name, info.name);
            }
        }
        let path = docs().join("reproductions.md");
        let text = std::fs::read_to_string(&path).unwrap();
        let start = text.find(BEGIN).expect("status markers in docs/reproductions.md") + BEGIN.len();
        let end = start + text[start..].find(END).expect("end marker");
        let want = status_table(&reports);
        if std::env::var_os("IOSTACK_UPDATE_REPRO_DOCS").is_some() {
            std::fs::write(&path, format!("{}{want}{}", &text[..start], &text[end..])).unwrap();
            return;
        }
        assert_eq!(&text[start..end], want, "docs/reproductions.md's status table differs from docs/repro/*.json (IOSTACK_UPDATE_REPRO_DOCS=1 rewrites it)");
    }

    #[test]
    fn every_check_states_its_tolerance() {
        for r in stored() {
            for c in &r.checks {
                assert!(!c.tolerance.is_empty(), "{}: {}", r.name, c.what);
            }
        }
    }
}
