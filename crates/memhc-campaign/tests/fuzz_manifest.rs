//! Fuzzing the campaign manifest (issue 31): seeded mutations of a valid `memhc-campaign/1`
//! manifest (numbers replaced by values that break size arithmetic, bytes flipped, ranges cut
//! or repeated, budgets and streams at their edges), then what the master does before the
//! journal exists: load it, cut its units, and admit each unit (its file, its plan under the
//! budget, the host memory it needs). Whatever the input: `Ok` or a one-line typed error,
//! never a panic, an abort or a hang. Deterministic and bounded for CI; `MEMHC_FUZZ_CASES=N`
//! runs more.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{a1_file, dir};
use memhc_campaign::corr::CorrCampaign;
use memhc_campaign::corr::job::{admit_unit, unit_model, unit_plan};
use memhc_campaign::corr::units::UnitSpec;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const EDGES: [&str; 9] = [
    "0",
    "1",
    "3",
    "1099511627776",
    "4611686018427387904",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "\"1000T\"",
];

fn mutate(r: &mut Rng, text: &mut Vec<u8>) {
    if text.is_empty() {
        text.extend_from_slice(b"{}");
        return;
    }
    match r.below(6) {
        0..=2 => {
            let starts: Vec<usize> = (0..text.len())
                .filter(|&i| text[i].is_ascii_digit() && (i == 0 || !text[i - 1].is_ascii_digit()))
                .collect();
            if starts.is_empty() {
                return;
            }
            let start = starts[r.below(starts.len())];
            let end = (start..text.len())
                .find(|&i| !text[i].is_ascii_digit())
                .unwrap_or(text.len());
            let edge = EDGES[r.below(EDGES.len())].as_bytes();
            text.splice(start..end, edge.iter().copied());
        }
        3 => {
            let i = r.below(text.len());
            text[i] = (r.next() & 0xff) as u8;
        }
        4 => {
            let a = r.below(text.len());
            let b = (a + r.below(48)).min(text.len());
            text.drain(a..b);
        }
        _ => {
            let a = r.below(text.len());
            let b = (a + r.below(48)).min(text.len());
            let piece: Vec<u8> = text[a..b].to_vec();
            let at = r.below(text.len());
            text.splice(at..at, piece);
        }
    }
}

/// What `memhc campaign` checks before its journal exists; the error text when refused.
fn admit(path: &std::path::Path) -> Result<usize, String> {
    let campaign = CorrCampaign::load(path, "host").map_err(|e| e.to_string())?;
    for unit in campaign.units() {
        let spec: UnitSpec = serde_json::from_str(&unit.spec).map_err(|e| e.to_string())?;
        let model = unit_model(&spec).map_err(|e| e.to_string())?;
        let (plan, budget) = unit_plan(&model, &spec.run).map_err(|e| e.0)?;
        admit_unit(&plan, budget, memhc_select::BackendChoice::Host).map_err(|e| e.0)?;
    }
    Ok(campaign.units().len())
}

fn cases() -> u64 {
    std::env::var("MEMHC_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

const SEED: &str = r#"{"format": "memhc-campaign/1", "source_block": 2, "sources": [0, 4, 8],
  "configurations": [{"id": "c1", "file": "a1.json"}, {"id": "c2", "file": "a1.json", "seed": 7}],
  "run": {"policy": "lru", "mode": "optimal", "streams": 2, "budget": "64M",
          "sharing": true, "order": "planned", "vector_size": 16}}"#;

#[test]
fn mutated_manifests_never_crash() {
    let d = dir("fuzz-manifest");
    memhc_corr::save(&a1_file(2), &d.join("a1.json")).unwrap();
    let path = d.join("campaign.json");
    std::fs::write(&path, SEED).unwrap();
    assert_eq!(admit(&path), Ok(4), "the seed itself is admitted");
    for case in 0..cases() {
        let mut r = Rng(case);
        let mut text = SEED.as_bytes().to_vec();
        for _ in 0..1 + r.below(3) {
            mutate(&mut r, &mut text);
        }
        std::fs::write(&path, &text).unwrap();
        if let Err(e) = admit(&path) {
            assert!(!e.contains('\n'), "a message of several lines: {e}");
        }
    }
}

#[test]
fn edge_settings_are_refused_before_anything_runs() {
    let d = dir("fuzz-manifest-edges");
    memhc_corr::save(&a1_file(2), &d.join("a1.json")).unwrap();
    let path = d.join("campaign.json");
    for (run, needle) in [
        (r#"{"streams": 4611686018427387904}"#, "run.streams"),
        (r#"{"streams": 0}"#, "run.streams"),
        (r#"{"vector_size": 0}"#, "run.vector_size"),
        (r#"{"budget": "1K"}"#, "does not fit"),
    ] {
        let text = format!(
            r#"{{"format": "memhc-campaign/1", "configurations": [{{"id": "c1", "file": "a1.json"}}], "run": {run}}}"#
        );
        std::fs::write(&path, text).unwrap();
        let e = admit(&path).expect_err(run);
        assert!(e.contains(needle), "'{e}' does not mention '{needle}'");
    }
}
