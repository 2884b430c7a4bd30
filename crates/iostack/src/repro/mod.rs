//! Reproductions of the papers' worked examples and experiments.
//!
//! Each reproduction builds the paper's input with iostack's own generators and components,
//! runs it, and reports the paper's figure beside iostack's, with checks that state what must
//! agree. `iostack repro NAME` prints one; `docs/reproductions.md` collects them. Nothing here
//! knows an answer in advance: the paper's numbers are data to compare with, and the inputs are
//! parameterised (block numbers, seeds) so that tests can vary them.

pub mod acfs_fig1;
pub mod affinity_extremes;
pub mod dulo_table1;
pub mod dulo_trends;
pub mod prefetch_cache;
pub mod split_experiment;
pub mod split_tables;

use serde::Serialize;

/// One comparison between the paper and iostack.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub what: String,
    pub paper: String,
    pub iostack: String,
    pub ok: bool,
}

impl Check {
    pub fn new(what: impl Into<String>, paper: impl ToString, iostack: impl ToString, ok: bool) -> Check {
        Check { what: what.into(), paper: paper.to_string(), iostack: iostack.to_string(), ok }
    }
    pub fn eq<T: PartialEq + std::fmt::Debug>(what: impl Into<String>, paper: T, iostack: T) -> Check {
        let ok = paper == iostack;
        Check { what: what.into(), paper: format!("{paper:?}"), iostack: format!("{iostack:?}"), ok }
    }
}

/// A reproduction's result.
#[derive(Debug, Clone, Serialize)]
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
}

#[derive(Debug, Clone, Serialize)]
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
                .map(|c| vec![if c.ok { "ok" } else { "DIFFERS" }.to_string(), c.what.clone(), c.paper.clone(), c.iostack.clone()])
                .collect();
            s += &render(&["".into(), "what".into(), "paper".into(), "iostack".into()], &rows);
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
    pub run: fn() -> Report,
}

/// Every reproduction.
pub static REPROS: &[ReproInfo] = &[
    dulo_table1::INFO,
    split_tables::INFO_TABLE1,
    split_tables::INFO_TABLE2,
    split_tables::INFO_TABLE3,
    split_tables::INFO_TABLE4,
    split_experiment::INFO_FIG1,
    split_experiment::INFO_FIG4,
    dulo_trends::INFO,
    affinity_extremes::INFO,
    acfs_fig1::INFO,
];

/// Looks a reproduction up by name (case-insensitive).
pub fn find(name: &str) -> Option<&'static ReproInfo> {
    REPROS.iter().find(|r| r.name.eq_ignore_ascii_case(name))
}
