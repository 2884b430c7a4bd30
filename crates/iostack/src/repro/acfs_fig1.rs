//! Cao, Felten, Karlin and Li, "Implementation and performance of integrated
//! application-controlled file caching, prefetching, and disk scheduling"
//! (`papers/002_a9d62adcdacf8768.txt`), §2.1.1, Figure 1, and the bound of §2.1.2.
//!
//! Figure 1 runs the reference string ABCA with a cache of two blocks holding A and B, one time
//! unit per reference and four per fetch. Without prefetching (optimal replacement) C misses at
//! time 3, counted from 1, replaces B, and the run takes 8 units; prefetching whenever possible
//! fetches C at time 2, replacing A "because B is in use", so that A misses and the run takes
//! 10 (l.114-134). With ABCB instead, prefetching wins (l.140-144; the paper prints no numbers
//! for it). The runs are those of [`crate::model::acfs`], with its event logs; the exhaustive
//! optimum is shown beside them, with the bound CA ≤ (1 + F/K) × OPT (l.202-205).

use super::{Check, Figure, Report, ReproInfo, Series, Table};
use crate::model::acfs::{run, Event, Instance, ModelPolicy, Outcome};

/// The figure's setting: cache size, fetch time, initial cache.
pub const K: usize = 2;
pub const F: u64 = 4;
pub const INIT: &str = "AB";

const POLICIES: [ModelPolicy; 3] = [ModelPolicy::None, ModelPolicy::Ca, ModelPolicy::Opt];

fn runs(refs: &str) -> Vec<Outcome> {
    let inst = Instance::parse(refs, INIT, K, F).expect("the figure's instance is valid");
    POLICIES.iter().map(|&p| run(&inst, p).expect("the figure's instance is small")).collect()
}

fn fetch_events(o: &Outcome) -> Vec<String> {
    o.log
        .iter()
        .filter_map(|e| match e {
            Event::Fetch { t, block, evict, .. } => {
                Some(format!("t={t} fetch {block} evicting {}", evict.as_deref().unwrap_or("nothing")))
            }
            _ => None,
        })
        .collect()
}

/// The paper's Figure 1 as a timeline: references completed against time, each point the end of
/// a reference (time counted from 0, as the model does).
fn timeline(o: &Outcome) -> Vec<(f64, f64)> {
    std::iter::once((0.0, 0.0)).chain(o.ref_times().iter().enumerate().map(|(i, &t)| ((t + 1) as f64, (i + 1) as f64))).collect()
}

/// The paper's ABCA timelines as its text gives them (l.118-130): no prefetching, two hits, C
/// fetched when it is referenced (time 3 counted from 1), then A hits, 8 units; prefetching, two
/// hits with C fetched during the second (time 2), C's reference waits for it, A misses, 10 units.
const PAPER_ENDS: [(&str, [u64; 4]); 2] = [("no prefetching", [1, 2, 7, 8]), ("prefetching", [1, 2, 6, 10])];

pub fn reproduce() -> Report {
    let abca = runs("ABCA");
    let abcb = runs("ABCB");
    let paper = |refs: &str, p: ModelPolicy| match (refs, p) {
        ("ABCA", ModelPolicy::None) => "8",
        ("ABCA", ModelPolicy::Ca) => "10",
        ("ABCB", ModelPolicy::Ca) => "better than no prefetching",
        _ => "-",
    };
    let mut rows = Vec::new();
    for (refs, outs) in [("ABCA", &abca), ("ABCB", &abcb)] {
        for o in outs.iter() {
            rows.push(vec![
                refs.to_string(),
                o.policy.name().to_string(),
                paper(refs, o.policy).to_string(),
                o.total.to_string(),
                o.fetches.to_string(),
                fetch_events(o).join("; "),
            ]);
        }
    }
    let log_table = |title: &str, o: &Outcome| Table {
        title: title.to_string(),
        header: vec!["t".into(), "event".into()],
        rows: o
            .log
            .iter()
            .map(|e| {
                let text = e.text();
                let body = text.split_once(' ').map_or(text.clone(), |(_, b)| b.trim_start().to_string());
                vec![e.t().to_string(), body]
            })
            .collect(),
    };
    let bound = |o: &[Outcome]| o[1].total * K as u64 <= (K as u64 + F) * o[2].total;
    let ca = &abca[1];
    let checks = vec![
        Check::eq("ABCA without prefetching (optimal replacement): total time", 8, abca[0].total),
        Check::eq("ABCA prefetching whenever possible (controlled-aggressive): total time", 10, ca.total),
        Check::eq(
            "ABCA with prefetching: C fetched at time 2 (counted from 1) replacing A, then A misses",
            vec!["t=1 fetch C evicting A".to_string(), "t=5 fetch A evicting B".to_string()],
            fetch_events(ca),
        ),
        Check::eq("ABCA with prefetching: references run at", vec![0u64, 1, 5, 9], ca.ref_times()),
        Check::eq("ABCA without prefetching: C replaces B at time 3 (counted from 1)", vec!["t=2 fetch C evicting B".to_string()], fetch_events(&abca[0])),
        Check::new(
            "ABCB: prefetching beats no prefetching",
            "prefetching better",
            format!("{} < {}", abcb[1].total, abcb[0].total),
            "prefetching's total strictly lower",
            abcb[1].total < abcb[0].total,
        ),
        Check::new(
            "bound: CA <= (1 + F/K) x OPT (F/K = 2)",
            "holds",
            format!("ABCA {} <= {}, ABCB {} <= {}", abca[1].total, 3 * abca[2].total, abcb[1].total, 3 * abcb[2].total),
            "the bound itself (no slack)",
            bound(&abca) && bound(&abcb),
        ),
    ];
    Report {
        name: INFO.name.to_string(),
        title: INFO.title.to_string(),
        source: "Cao, Felten, Karlin, Li, Integrated application-controlled file caching, prefetching and disk scheduling (papers/002), §2.1, Figure 1".to_string(),
        config: serde_json::json!({ "k": K, "f": F, "init": INIT, "refs": ["ABCA", "ABCB"] }),
        tables: vec![
            Table {
                title: "total time (units; one per reference, F per fetch) and fetches".into(),
                header: vec!["refs".into(), "policy".into(), "paper".into(), "iostack".into(), "fetches".into(), "fetch events".into()],
                rows,
            },
            log_table("ABCA without prefetching: event log", &abca[0]),
            log_table("ABCA controlled-aggressive: event log", ca),
        ],
        checks,
        figures: vec![Figure::line(
            "figure1",
            "Figure 1: ABCA, K = 2, F = 4, A and B cached: references completed over time",
            "time (units)",
            "references completed",
            PAPER_ENDS
                .iter()
                .map(|(label, ends)| Series::paper(format!("paper, {label}"), std::iter::once((0.0, 0.0)).chain(ends.iter().enumerate().map(|(i, &t)| (t as f64, (i + 1) as f64)))))
                .chain([Series::iostack("iostack, no prefetching (optimal replacement)", timeline(&abca[0])), Series::iostack("iostack, controlled-aggressive prefetching", timeline(ca))])
                .collect(),
        )],
        notes: vec![
            "times count from 0 (the paper counts from 1); a reference starting at t runs during [t, t+1)".into(),
            "ABCB's times are not printed in the paper; in the model they are 8 (no prefetching) and 7 (prefetching, also the optimum)".into(),
            "`iostack model acfs --refs ... --init ... --k K --f F --policy none|ca|opt` runs any other instance".into(),
        ],
    }
}

pub const INFO: ReproInfo = ReproInfo {
    name: "acfs-fig1",
    title: "Cao et al. Figure 1: prefetching can hurt (ABCA: 8 vs 10), the model's event logs and the (1 + F/K) bound",
    quick: true,
    run: |_| reproduce(),
};

#[cfg(test)]
mod tests {
    #[test]
    fn agrees_with_the_paper() {
        let r = super::reproduce();
        assert!(r.ok(), "{}", r.to_text());
        assert!(r.to_text().contains("fetch C evicting A"));
        // The timelines redrawn from the model are the paper's.
        let f = &r.figures[0].series;
        assert_eq!((&f[0].x, &f[0].y), (&f[2].x, &f[2].y), "no prefetching");
        assert_eq!((&f[1].x, &f[1].y), (&f[3].x, &f[3].y), "prefetching");
    }
}
