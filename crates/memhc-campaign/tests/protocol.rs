//! The scheduling protocol on the in-process transport: dynamic hand-out, results identical for
//! any number of ranks, restart after a rank dies mid-run, failures reported once with their
//! rank, and lost ranks (or a lost master) noticed within the timeout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use memhc_campaign::inprocess::links;
use memhc_campaign::{
    CampaignError, Fault, FaultAction, Job, JobError, Journal, Message, RankContext, Timing, Unit,
    WorkerLink, run_local, stop_all, work,
};

/// `sleep:MS:X` sleeps MS milliseconds and returns a value derived from X; `bad:X` fails;
/// `wait-for:N` blocks until N other units have finished (at most 20 s).
#[derive(Default)]
struct Toy {
    finished: AtomicUsize,
}

impl Job for Toy {
    fn run(&self, spec: &str, ctx: &RankContext) -> Result<String, JobError> {
        let parts: Vec<&str> = spec.split(':').collect();
        let out = match parts.as_slice() {
            ["sleep", ms, x] => {
                std::thread::sleep(Duration::from_millis(ms.parse().unwrap()));
                let x: u64 = x.parse().unwrap();
                Ok(format!("{{\"x\": {x}, \"square\": {}}}", x * x))
            }
            ["bad", x] => Err(JobError(format!("unit {x} is bad input"))),
            ["wait-for", n] => {
                let n: usize = n.parse().unwrap();
                let start = Instant::now();
                while self.finished.load(Ordering::SeqCst) < n {
                    if start.elapsed() > Duration::from_secs(20) {
                        return Err(JobError("the short units never came".into()));
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Ok(format!("{{\"long\": {}}}", ctx.rank))
            }
            _ => Err(JobError(format!("unknown spec {spec}"))),
        };
        self.finished.fetch_add(1, Ordering::SeqCst);
        out
    }
}

fn unit(key: &str, spec: &str, cost: f64) -> Unit {
    Unit {
        key: key.into(),
        spec: spec.into(),
        cost,
    }
}

fn sleepy(n: usize, ms: u64) -> Vec<Unit> {
    (0..n)
        .map(|i| unit(&format!("u{i:03}"), &format!("sleep:{ms}:{i}"), 1.0))
        .collect()
}

fn timing(ms: u64) -> Timing {
    Timing::with_timeout(Duration::from_millis(ms))
}

fn journal_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("memhc-protocol-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn collect(results: Vec<Option<String>>) -> Vec<String> {
    results.into_iter().map(Option::unwrap).collect()
}

#[test]
fn results_are_the_same_for_any_number_of_ranks() {
    let units = sleepy(12, 2);
    let mut reference = None;
    for ranks in [1, 2, 3, 5] {
        let job = Toy::default();
        let mut results = vec![None; units.len()];
        let mut seen = 0;
        let (summary, ends) = run_local(
            &job,
            &units,
            &mut results,
            None,
            ranks,
            &timing(10_000),
            &mut |p| {
                seen += 1;
                assert_eq!(p.done, seen);
                assert_eq!(p.total, 12);
            },
        )
        .unwrap();
        assert_eq!((summary.ran, summary.skipped), (12, 0));
        assert_eq!(summary.ranks.len(), ranks);
        assert_eq!(summary.ranks.iter().map(|r| r.units).sum::<usize>(), 12);
        assert!(ends.iter().all(|e| e.as_ref().is_ok_and(|e| !e.failed)));
        let results = collect(results);
        assert_eq!(results[5], "{\"x\": 5, \"square\": 25}");
        match &reference {
            None => reference = Some(results),
            Some(r) => assert_eq!(&results, r, "{ranks} ranks"),
        }
    }
}

#[test]
fn units_are_handed_out_dynamically_largest_first() {
    // The long unit goes out first and cannot finish before the six short ones: with a
    // static split, its rank would hold short units too and the campaign would stall.
    let mut units = sleepy(6, 1);
    units.push(unit("long", "wait-for:6", 100.0));
    let job = Toy::default();
    let mut results = vec![None; units.len()];
    let (summary, _) = run_local(
        &job,
        &units,
        &mut results,
        None,
        2,
        &timing(10_000),
        &mut |_| {},
    )
    .unwrap();
    let long_rank: usize = results[6]
        .as_ref()
        .unwrap()
        .trim_start_matches("{\"long\": ")
        .trim_end_matches('}')
        .parse()
        .unwrap();
    assert_eq!(summary.ranks[long_rank].units, 1);
    assert_eq!(summary.ranks[1 - long_rank].units, 6);
}

#[test]
fn a_rank_killed_mid_run_then_a_rerun_gives_identical_results() {
    let units = sleepy(9, 20);
    let job = Toy::default();
    let mut clean = vec![None; units.len()];
    run_local(
        &job,
        &units,
        &mut clean,
        None,
        3,
        &timing(10_000),
        &mut |_| {},
    )
    .unwrap();
    let clean = collect(clean);

    let dir = journal_dir("restart");
    let journal = Journal::open(&dir).unwrap();
    let mut faulty = timing(400);
    faulty.fault = Some(Fault {
        rank: 2,
        after: 1,
        action: FaultAction::Exit,
    });
    let mut results = journal.load(&units).unwrap();
    let start = Instant::now();
    let e = run_local(
        &Toy::default(),
        &units,
        &mut results,
        Some(&journal),
        3,
        &faulty,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    match &e {
        CampaignError::RankLost { rank, unit, .. } => {
            assert_eq!(*rank, 2);
            assert!(unit.is_some());
        }
        other => panic!("{other}"),
    }
    assert_eq!(e.exit_code(), 1);
    // Some units were recorded before the rank died, not all.
    let recorded = Journal::open(&dir).unwrap().load(&units).unwrap();
    let done = recorded.iter().filter(|r| r.is_some()).count();
    assert!((1..units.len()).contains(&done), "{done}");

    // The rerun skips them and ends with the same results.
    let mut results = recorded;
    let (summary, _) = run_local(
        &Toy::default(),
        &units,
        &mut results,
        Some(&journal),
        3,
        &timing(10_000),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(summary.skipped, done);
    assert_eq!(summary.ran, units.len() - done);
    assert_eq!(collect(results), clean);
    // And a third run has nothing left to do.
    let mut again = journal.load(&units).unwrap();
    let (summary, _) = run_local(
        &Toy::default(),
        &units,
        &mut again,
        Some(&journal),
        2,
        &timing(10_000),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!((summary.ran, summary.skipped), (0, units.len()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_rank_that_hangs_is_lost_within_the_timeout() {
    let units = sleepy(6, 5);
    let mut t = timing(300);
    t.fault = Some(Fault {
        rank: 1,
        after: 0,
        action: FaultAction::Hang,
    });
    let mut results = vec![None; units.len()];
    let start = Instant::now();
    let e = run_local(
        &Toy::default(),
        &units,
        &mut results,
        None,
        2,
        &t,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(matches!(e, CampaignError::RankLost { rank: 1, .. }), "{e}");
    assert!(
        e.to_string().starts_with("rank 1 lost: no message for 0."),
        "{e}"
    );
}

#[test]
fn bad_input_on_one_rank_is_reported_once_with_its_rank_and_nothing_done_is_lost() {
    let mut units = sleepy(8, 30);
    units.insert(3, unit("broken", "bad:3", 1.0));
    let dir = journal_dir("bad");
    let journal = Journal::open(&dir).unwrap();
    let mut results = vec![None; units.len()];
    let e = run_local(
        &Toy::default(),
        &units,
        &mut results,
        Some(&journal),
        3,
        &timing(10_000),
        &mut |_| {},
    )
    .unwrap_err();
    let CampaignError::UnitFailed {
        rank,
        unit,
        message,
    } = &e
    else {
        panic!("{e}");
    };
    assert_eq!(
        (unit.as_str(), message.as_str()),
        ("broken", "unit 3 is bad input")
    );
    assert!(*rank < 3);
    assert_eq!(e.exit_code(), 2);
    assert_eq!(e.to_string().lines().count(), 1);
    // Everything that finished is in the results and in the journal; the bad unit is not.
    let recorded = journal.load(&units).unwrap();
    assert_eq!(recorded, results);
    assert!(recorded[3].is_none());
    assert!(recorded.iter().filter(|r| r.is_some()).count() >= 3);
    std::fs::remove_dir_all(&dir).unwrap();
}

struct BadSetup;

impl Job for BadSetup {
    fn setup(&self, ctx: &RankContext) -> Result<(), JobError> {
        if ctx.rank == 1 {
            Err(JobError("no GPU here".into()))
        } else {
            Ok(())
        }
    }

    fn run(&self, _spec: &str, _ctx: &RankContext) -> Result<String, JobError> {
        Ok("1".into())
    }
}

#[test]
fn a_rank_that_cannot_set_up_is_reported_with_its_rank() {
    let units = sleepy(4, 1);
    let mut results = vec![None; units.len()];
    let e = run_local(
        &BadSetup,
        &units,
        &mut results,
        None,
        2,
        &timing(10_000),
        &mut |_| {},
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "rank 1, unit (setup): no GPU here");
}

#[test]
fn a_worker_whose_master_is_silent_stops_within_the_timeout() {
    let (master, mut workers) = links(1);
    let start = Instant::now();
    let e = work(
        &mut workers[0],
        &Toy::default(),
        &RankContext::single(),
        &timing(200),
    )
    .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(3));
    assert!(
        matches!(e, CampaignError::MasterLost { rank: 0, .. }),
        "{e}"
    );
    drop(master);
}

#[test]
fn a_worker_sends_heartbeats_while_a_unit_runs() {
    let (mut master, mut workers) = links(1);
    let handle = std::thread::spawn(move || {
        work(
            &mut workers[0],
            &Toy::default(),
            &RankContext::single(),
            &timing(100),
        )
    });
    use memhc_campaign::MasterLink;
    let wait = Duration::from_secs(5);
    assert_eq!(master.recv(wait).unwrap(), Some((0, Message::Ready)));
    master
        .send(
            0,
            Message::Assign {
                unit: 0,
                key: "u".into(),
                spec: "sleep:150:2".into(),
            },
        )
        .unwrap();
    let mut beats = 0;
    loop {
        match master.recv(wait).unwrap() {
            Some((0, Message::Heartbeat { unit: 0 })) => beats += 1,
            Some((
                0,
                Message::Done {
                    unit: 0, result, ..
                },
            )) => {
                assert_eq!(result, "{\"x\": 2, \"square\": 4}");
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(beats >= 2, "{beats} heartbeats");
    master.send(0, Message::Stop).unwrap();
    assert_eq!(master.recv(wait).unwrap(), Some((0, Message::Bye)));
    let end = handle.join().unwrap().unwrap();
    assert_eq!((end.units, end.failed), (1, false));
}

#[test]
fn stopping_all_workers_ends_them_cleanly() {
    let (mut master, workers) = links(3);
    let handles: Vec<_> = workers
        .into_iter()
        .map(|mut w| {
            std::thread::spawn(move || {
                let ctx = RankContext {
                    rank: w.rank(),
                    ranks: 3,
                    local_rank: w.rank(),
                    local_ranks: 3,
                };
                work(&mut w, &Toy::default(), &ctx, &timing(5_000))
            })
        })
        .collect();
    stop_all(&mut master, Duration::from_secs(5)).unwrap();
    for h in handles {
        assert_eq!(h.join().unwrap().unwrap().units, 0);
    }
}
