//! Fuzzing the campaign manifest (issue 31): seeded mutations of a valid `memhc-campaign/1`
//! manifest (numbers replaced by values that break size arithmetic, bytes flipped, ranges cut
//! or repeated, budgets and streams at their edges), then what the master does before the
//! journal exists: load it, cut its units, and admit each unit (its file, its plan under the
//! budget, the host memory it needs). Whatever the input: `Ok` or a one-line typed error,
//! never a panic, an abort or a hang. Deterministic and bounded for CI; `MEMHC_FUZZ_CASES=N` (or `MEMHC_FUZZ_SECONDS=S`, see `memhc_testkit::fuzz`)
//! runs more.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{a1_file, dir};
use memhc_campaign::corr::CorrCampaign;
use memhc_campaign::corr::job::{admit_unit, unit_file, unit_plan};
use memhc_campaign::corr::units::UnitSpec;
use memhc_testkit::fuzz::{self, Rng, mutate_json};

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

/// What `memhc campaign` checks before its journal exists; the error text when refused.
fn admit(path: &std::path::Path) -> Result<usize, String> {
    let campaign = CorrCampaign::load(path, "host").map_err(|e| e.to_string())?;
    for unit in campaign.units() {
        let spec: UnitSpec = serde_json::from_str(&unit.spec).map_err(|e| e.to_string())?;
        let checked = unit_file(&spec).map_err(|e| e.to_string())?;
        let (plan, budget) = unit_plan(&checked, &spec.run).map_err(|e| e.0)?;
        admit_unit(&plan, budget, memhc_select::BackendChoice::Host).map_err(|e| e.0)?;
    }
    Ok(campaign.units().len())
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
    for case in fuzz::cases("campaign-manifests", 100) {
        let mut r = Rng::new(case);
        let mut text = SEED.as_bytes().to_vec();
        for _ in 0..1 + r.below(3) {
            mutate_json(&mut r, &mut text, &EDGES, 48);
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
