//! The Split paper's experiments (Varki, Hubbe and Merchant, Section 5, Figures 1 and 4): an
//! SPC-2-like workload of 100,000 one-block requests from 100 concurrent generators (Figure 1:
//! 90 multiple-sequential and 10 random; Figure 4: 80 and 20), the second prefetch technique
//! (2 blocks on a miss and on a hit to the last cached block of a stream), caches of 10 to 200
//! blocks, and the prefetch hit rate of LRU, StreamLRU, SplitLRU (1:1) and Split23 (2:1).
//!
//! The paper reports, for Figure 1, a hit rate of Split about 30 % above LRU's and StreamLRU's at
//! 110 blocks, and for Figure 4 that Split23 does better still. Its figures are plots, not
//! tables, so the checks compare orderings and the size of the gap, not exact values. The mean
//! response time (the paper's "miss rate x mean disk response time" on DiskSim's Cheetah 9LP) is
//! not reproduced here; it needs the timed stack's disk model.

use super::prefetch_cache::{self, Technique};
use super::{Check, Report, ReproInfo, Table};
use crate::cache::{self, Key};
use crate::workload::spc2::Spc2Config;

/// The policies compared.
pub const POLICIES: [&str; 4] = ["lru", "streamlru", "splitlru", "split23"];

/// Cache sizes of the figures (blocks).
pub fn sizes() -> Vec<u64> {
    (1..=20).map(|i| i * 10).collect()
}

/// Hit rate of each policy (rows) at each size (columns).
pub fn hit_rates(cfg: &Spc2Config, sizes: &[u64], policies: &[&str], technique: Technique) -> Result<Vec<Vec<f64>>, crate::ConfigError> {
    let keys: Vec<Key> = cfg.blocks()?.into_iter().map(|(_, b, _)| b).collect();
    let mut out = Vec::new();
    for p in policies {
        let mut row = Vec::new();
        for &c in sizes {
            let mut policy = cache::build(p, c)?;
            let hits = prefetch_cache::run(policy.as_mut(), &keys, technique, |_, _| {});
            row.push(hits as f64 / keys.len() as f64);
        }
        out.push(row);
    }
    Ok(out)
}

/// Runs one figure's experiment.
pub fn reproduce(figure: u32, cfg: &Spc2Config) -> Report {
    let technique = Technique::MissOrLastHit { x: 2 };
    let sizes = sizes();
    let rates = hit_rates(cfg, &sizes, &POLICIES, technique).expect("valid configuration");
    let header: Vec<String> = std::iter::once("cache".to_string()).chain(POLICIES.iter().map(|p| p.to_string())).chain(["split/lru".to_string(), "split/streamlru".to_string()]).collect();
    let rows: Vec<Vec<String>> = sizes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut r = vec![c.to_string()];
            r.extend(rates.iter().map(|row| format!("{:.4}", row[i])));
            r.push(format!("{:.2}", rates[2][i] / rates[0][i]));
            r.push(format!("{:.2}", rates[2][i] / rates[1][i]));
            r
        })
        .collect();
    let at = |c: u64| sizes.iter().position(|&s| s == c).unwrap();
    let i110 = at(110);
    let mut checks = Vec::new();
    let mid: Vec<usize> = (0..sizes.len()).filter(|&i| sizes[i] >= 30 && sizes[i] <= 170).collect();
    let split_wins = mid.iter().all(|&i| rates[2][i] > rates[0][i] && rates[2][i] > rates[1][i]);
    checks.push(Check::new("SplitLRU hit rate above LRU's and StreamLRU's (30-170 blocks)", "yes (Figure 1)", if split_wins { "yes" } else { "no" }, split_wins));
    if figure == 1 {
        let gain_lru = rates[2][i110] / rates[0][i110] - 1.0;
        let gain_stream = rates[2][i110] / rates[1][i110] - 1.0;
        checks.push(Check::new(
            "SplitLRU gain over LRU at 110 blocks",
            "about +30 %",
            format!("{:+.0} %", gain_lru * 100.0),
            gain_lru > 0.15,
        ));
        checks.push(Check::new(
            "SplitLRU gain over StreamLRU at 110 blocks",
            "about +30 %",
            format!("{:+.0} %", gain_stream * 100.0),
            gain_stream > 0.15,
        ));
    }
    let better23 = mid.iter().filter(|&&i| rates[3][i] >= rates[2][i]).count();
    checks.push(Check::new(
        "Split23 at least SplitLRU's hit rate (30-170 blocks)",
        if figure == 4 { "yes (Figure 4)" } else { "(Figure 4's claim)" },
        format!("{better23} of {} sizes", mid.len()),
        figure != 4 || better23 == mid.len(),
    ));
    let stream_lru_close = mid.iter().all(|&i| (rates[1][i] - rates[0][i]).abs() < 0.1);
    checks.push(Check::new("StreamLRU and LRU close", "almost statistically identical (Summary)", if stream_lru_close { "within 0.1" } else { "apart" }, stream_lru_close));
    Report {
        name: format!("split-fig{figure}"),
        title: format!(
            "Split paper Figure {figure}: hit rate vs cache size, {} multiple-sequential + {} random generators",
            cfg.multiple, cfg.random
        ),
        source: format!("Varki, Hubbe, Merchant, Section 5, Figure {figure}"),
        config: serde_json::json!({
            "workload": {"generator": "spc2", "config": cfg},
            "prefetch": technique,
            "model": "prefetch cache: a hit removes the block; a missed block is not cached",
            "policies": POLICIES,
            "cache_blocks": sizes,
        }),
        tables: vec![Table { title: "prefetch hit rate".into(), header, rows }],
        checks,
        notes: vec![
            "The paper's figures are plots; its text gives the checks above. Response times need the Cheetah 9LP model of the timed stack and are not reported here.".into(),
            "Poisson mean run length, arrival rate and address space are not given by the paper; see the workload config.".into(),
        ],
    }
}

pub fn figure1_config() -> Spc2Config {
    Spc2Config { multiple: 90, random: 10, ..Default::default() }
}
pub fn figure4_config() -> Spc2Config {
    Spc2Config { multiple: 80, random: 20, ..Default::default() }
}

pub const INFO_FIG1: ReproInfo = ReproInfo {
    name: "split-fig1",
    title: "Split paper Figure 1: 90 multiple-sequential + 10 random, 10-200 blocks",
    quick: false,
    run: || reproduce(1, &figure1_config()),
};
pub const INFO_FIG4: ReproInfo = ReproInfo {
    name: "split-fig4",
    title: "Split paper Figure 4: Split23 on 80 multiple-sequential + 20 random",
    quick: false,
    run: || reproduce(4, &figure4_config()),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figure1_trends_hold_across_seeds() {
        for seed in [1, 2, 3] {
            let cfg = Spc2Config { seed, requests: 40_000, ..figure1_config() };
            let r = reproduce(1, &cfg);
            for c in &r.checks {
                assert!(c.ok, "seed {seed}: {}: paper {} iostack {}", c.what, c.paper, c.iostack);
            }
        }
    }

    #[test]
    fn figure4_split23_better() {
        let cfg = Spc2Config { requests: 40_000, ..figure4_config() };
        let r = reproduce(4, &cfg);
        for c in &r.checks {
            assert!(c.ok, "{}: paper {} iostack {}", c.what, c.paper, c.iostack);
        }
    }
}
