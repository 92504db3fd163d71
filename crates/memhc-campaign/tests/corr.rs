//! Correlator campaigns end to end on the host backend, in-process: the gathered output is the
//! same, byte for byte, for any number of ranks and after a restart; every value is the same
//! double as in a single-process run of each configuration's whole file (`memhc run`: one plan
//! for the file, `memhc_corr::run`), and equals the independent dense reference within 1e-12;
//! bad input in one configuration is reported once, with the rank and the unit.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{CONFIGURATIONS, TWO, a1_at, a1_file, dir, manifest};

use memhc_campaign::corr::units::reseed;
use memhc_campaign::corr::{BackendRunner, CampaignValues, CorrCampaign, CorrJob};
use memhc_campaign::{CampaignError, Fault, FaultAction, Journal, Timing, run_local};
use memhc_corr::{GraphSpec, LoopSpec};

fn run(
    campaign: &CorrCampaign,
    ranks: usize,
    journal: Option<&Journal>,
    timing: &Timing,
) -> Result<(Vec<u8>, CampaignValues), CampaignError> {
    let units = campaign.units();
    let mut results = match journal {
        Some(j) => j.load(units)?,
        None => vec![None; units.len()],
    };
    let job = CorrJob::new(BackendRunner::host());
    run_local(
        &job,
        units,
        &mut results,
        journal,
        ranks,
        timing,
        &mut |_| {},
    )?;
    let values = campaign.gather(&results)?;
    Ok((values.to_json()?, values))
}

#[test]
fn any_number_of_ranks_gives_the_same_bytes_and_the_doubles_of_whole_file_runs() {
    let d = dir("ranks");
    // Three sources in blocks of two: units of two sources and of one.
    memhc_corr::save(&a1_at(3, &[0, 4, 8]), &d.join("a1.json")).unwrap();
    let m = manifest(&d, &TWO, r#", "source_block": 2"#);
    let campaign = CorrCampaign::load(&m, "host").unwrap();
    assert_eq!(campaign.units().len(), 4);
    let timing = Timing::with_timeout(Duration::from_secs(60));
    let (one, values) = run(&campaign, 1, None, &timing).unwrap();
    let (three, _) = run(&campaign, 3, None, &timing).unwrap();
    assert!(three == one, "3 ranks differ from 1");

    // Each configuration against `memhc run` of its whole file (read from disk as the
    // campaign reads it, planned as one piece, run in one process), and the dense reference.
    assert_eq!(values.configurations.len(), 2);
    let text = std::fs::read_to_string(d.join("a1.json")).unwrap();
    for (conf, (_, _, seed)) in values.configurations.iter().zip(TWO) {
        let mut file = memhc_corr::io::parse_file(&text, "a1.json").unwrap();
        if let Some(s) = seed {
            reseed(&mut file, s);
        }
        let checked = memhc_corr::CheckedFile::new(file, &d).unwrap();
        let plan = memhc_corr::plan(&checked, &memhc_corr::PlanOptions::default()).unwrap();
        let budget = plan.report.peak_bytes.max(1) as usize;
        let whole = memhc_campaign::corr::run_on(
            memhc_host::HostBackend::new(budget),
            memhc_campaign::corr::RunSettings::default().config(budget),
            &plan,
        )
        .unwrap();
        assert!(conf.correlators == whole.correlators, "{} differs", conf.id);
        // The independent dense reference (once: memhc-corr's own tests do the rest).
        if seed.is_none() {
            let got = memhc_corr::Correlators {
                format: whole.format.clone(),
                correlators: conf.correlators.clone(),
            };
            let reference = memhc_corr::reference::correlators(&checked).unwrap();
            assert!(got.max_relative_error(&reference) <= 1e-12);
        }
    }
    // Configurations differ (their seeds do).
    assert_ne!(
        values.configurations[0].correlators,
        values.configurations[1].correlators
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_rank_killed_mid_run_then_a_rerun_gives_the_same_bytes() {
    let d = dir("restart");
    memhc_corr::save(&a1_file(2), &d.join("a1.json")).unwrap();
    let m = manifest(&d, &CONFIGURATIONS, r#", "source_block": 1"#);
    let campaign = CorrCampaign::load(&m, "host").unwrap();
    assert_eq!(campaign.units().len(), 12);
    let timing = Timing::with_timeout(Duration::from_secs(60));
    let clean = run(&campaign, 3, None, &timing).unwrap().0;

    let journal = Journal::open(&d.join("journal")).unwrap();
    let mut faulty = Timing::with_timeout(Duration::from_millis(1500));
    faulty.fault = Some(Fault {
        rank: 1,
        after: 2,
        action: FaultAction::Exit,
    });
    let e = run(&campaign, 3, Some(&journal), &faulty).unwrap_err();
    assert!(matches!(e, CampaignError::RankLost { rank: 1, .. }), "{e}");
    let done = journal
        .load(campaign.units())
        .unwrap()
        .iter()
        .filter(|r| r.is_some())
        .count();
    assert!((2..12).contains(&done), "{done}");
    let rerun = run(&campaign, 2, Some(&journal), &timing).unwrap().0;
    assert!(rerun == clean);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_input_in_one_configuration_is_reported_once_with_rank_and_unit() {
    let d = dir("bad");
    let good = a1_file(2);
    memhc_corr::save(&good, &d.join("a1.json")).unwrap();
    // The bad configuration: a graph summed at source 12 only names a node that is not there.
    let mut bad = good.clone();
    bad.graphs.push(GraphSpec {
        id: "broken".into(),
        coefficient: [1.0, 0.0],
        loops: vec![LoopSpec::meson(&["no_such_node"])],
    });
    let last = bad.correlators[0].times.len() - 1;
    assert_eq!(bad.correlators[0].times[last].source, 12);
    bad.correlators[0].times[last].graphs.push("broken".into());
    memhc_corr::save(&bad, &d.join("bad.json")).unwrap();
    let m = manifest(
        &d,
        &[("c1", "a1.json", None), ("c2", "bad.json", None)],
        r#", "source_block": 2"#,
    );
    let campaign = CorrCampaign::load(&m, "host").unwrap();
    let journal = Journal::open(&d.join("journal")).unwrap();
    let e = run(
        &campaign,
        2,
        Some(&journal),
        &Timing::with_timeout(Duration::from_secs(60)),
    )
    .unwrap_err();
    let text = e.to_string();
    assert_eq!(text.lines().count(), 1);
    assert!(text.starts_with("rank "), "{text}");
    assert!(text.contains(", unit c2.b0001: "), "{text}");
    assert!(
        text.contains("bad.json: graph broken, loop 0: unknown node \"no_such_node\""),
        "{text}"
    );
    assert_eq!(e.exit_code(), 2);
    // The good configuration's units that ran are recorded.
    let recorded = journal.load(campaign.units()).unwrap();
    assert!(recorded[3].is_none());
    std::fs::remove_dir_all(&d).unwrap();
}
