//! The Chrome trace of real runs of the synthetic workload on the host backend: its structure
//! follows the Trace Event Format (tracks, counters, async slices, flows, each checked as the
//! format requires), its totals equal the runtime's statistics in every mode and allocation
//! setting, and the report shows in the naive mode the redundancies MemHC removes, and none in
//! the optimal mode.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests: unwrap what must succeed

use std::collections::{BTreeMap, BTreeSet, HashMap};

use memhc_core::{Alloc, Mode, PolicyKind, Stats};
use memhc_host::HostBackend;
use memhc_trace::{Pattern, Report, ReportOptions};
use memhc_workload::run::{RunSpec, Traced, peak_without_eviction, run_traced};
use memhc_workload::{SynthParams, generate};
use serde_json::Value;

/// A run of a small synthetic workload (8 vectors of 4 meson contractions at N = 4) under
/// `peak / (1 + oversub)`.
fn traced(mode: Mode, oversub: f64, alloc: Option<Alloc>, prefetch: Option<usize>) -> Traced {
    let params = SynthParams {
        tensor_size: 4,
        vector_size: 4,
        vectors: 8,
        ..SynthParams::default()
    };
    let w = generate(&params).unwrap();
    let a = w.analyse().unwrap();
    let peak = peak_without_eviction(&w, &a).unwrap();
    let budget = (peak as f64 / (1.0 + oversub)) as usize;
    let spec = RunSpec {
        alloc,
        prefetch,
        ..RunSpec::new(PolicyKind::Lru, mode, budget, 2)
    };
    run_traced(HostBackend::new(1 << 30), &w, &a, &spec, &mut |_| {}).unwrap()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Checks every event against the Trace Event Format and returns the events.
fn check_format(trace: &Value) -> &[Value] {
    assert_eq!(trace["displayTimeUnit"], "ns");
    let events = trace["traceEvents"]
        .as_array()
        .expect("traceEvents is an array");
    let mut threads: BTreeMap<u64, String> = BTreeMap::new();
    let mut open: HashMap<(String, String), f64> = HashMap::new();
    let mut flows: HashMap<u64, (Value, Option<Value>)> = HashMap::new();
    for e in events {
        let ph = e["ph"].as_str().expect("every event has a phase");
        assert_eq!(e["pid"], 1, "{e}");
        if ph != "M" {
            assert!(num(&e["ts"]) >= 0.0, "{e}");
        }
        match ph {
            "M" => {
                let name = e["args"]["name"].as_str().unwrap().to_owned();
                match e["name"].as_str().unwrap() {
                    "thread_name" => {
                        threads.insert(e["tid"].as_u64().unwrap(), name);
                    }
                    "process_name" => assert_eq!(name, "memhc"),
                    other => panic!("unknown metadata {other}"),
                }
            }
            "X" => {
                assert!(num(&e["dur"]) >= 0.0, "{e}");
                assert!(e["name"].is_string() && e["tid"].is_u64(), "{e}");
                assert!(
                    ["copy", "compute"].contains(&e["cat"].as_str().unwrap()),
                    "{e}"
                );
            }
            "i" => {
                assert_eq!(e["s"], "t", "{e}");
                assert_eq!(e["tid"], 0, "{e}");
            }
            "C" => {
                assert_eq!(e["name"], "device bytes");
                let args = e["args"].as_object().unwrap();
                let keys: BTreeSet<&str> = args.keys().map(String::as_str).collect();
                assert_eq!(keys, BTreeSet::from(["in_use", "pinned", "pooled"]));
                assert!(args.values().all(Value::is_u64), "{e}");
            }
            "b" | "e" => {
                assert_eq!(e["cat"], "object");
                let key = (e["id"].as_str().unwrap().to_owned(), e["name"].to_string());
                if ph == "b" {
                    assert!(open.insert(key, num(&e["ts"])).is_none(), "{e} begun twice");
                } else {
                    let begun = open
                        .remove(&key)
                        .unwrap_or_else(|| panic!("{e} never begun"));
                    assert!(num(&e["ts"]) >= begun, "{e} ends before it begins");
                }
            }
            "s" => {
                assert_eq!(e["cat"], "dep");
                let id = e["id"].as_u64().unwrap();
                assert!(
                    flows.insert(id, (e.clone(), None)).is_none(),
                    "flow {id} twice"
                );
            }
            "f" => {
                assert_eq!(
                    (&e["cat"], &e["bp"]),
                    (&Value::from("dep"), &Value::from("e"))
                );
                let id = e["id"].as_u64().unwrap();
                let start = flows
                    .get_mut(&id)
                    .unwrap_or_else(|| panic!("{e} has no start"));
                assert!(start.1.replace(e.clone()).is_none(), "flow {id} ends twice");
            }
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
    assert!(open.is_empty(), "async slices never ended: {open:?}");
    // Every flow binds to a slice on its thread that encloses its time.
    let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    let encloses = |p: &Value| {
        slices.iter().any(|x| {
            let (ts, dur) = (num(&x["ts"]), num(&x["dur"]));
            x["tid"] == p["tid"] && ts <= num(&p["ts"]) && num(&p["ts"]) <= ts + dur
        })
    };
    for (id, (s, f)) in &flows {
        let f = f.as_ref().unwrap_or_else(|| panic!("flow {id} never ends"));
        assert!(
            encloses(s) && encloses(f),
            "flow {id} is not bound: {s} {f}"
        );
        assert!(
            num(&s["ts"]) <= num(&f["ts"]),
            "flow {id} goes back in time"
        );
    }
    // Every thread that has events is named.
    for e in events.iter().filter(|e| e["tid"].is_u64()) {
        assert!(threads.contains_key(&e["tid"].as_u64().unwrap()), "{e}");
    }
    events
}

/// The trace's totals, summed from its events alone.
fn totals(events: &[Value]) -> BTreeMap<&'static str, u64> {
    let mut t = BTreeMap::new();
    let count = |name: &str| {
        events
            .iter()
            .filter(|e| e["ph"] == "i" && e["name"] == name)
            .count() as u64
    };
    for (key, name) in [
        ("allocations", "alloc"),
        ("frees", "free"),
        ("pool_reuses", "pool_reuse"),
        ("handovers", "handover"),
        ("arena_allocations", "arena_alloc"),
        ("hits", "hit"),
        ("misses", "miss"),
        ("evictions", "evict"),
        ("prefetches", "prefetch"),
    ] {
        t.insert(key, count(name));
    }
    t.insert("writebacks", count("writeback") + count("writeback_issued"));
    let sum = |cat: &str, prefix: &str, arg: &str| {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == cat)
            .filter(|e| e["name"].as_str().unwrap().starts_with(prefix))
            .map(|e| e["args"][arg].as_u64().unwrap())
            .sum::<u64>()
    };
    t.insert("h2d_bytes", sum("copy", "h2d", "bytes"));
    t.insert("d2h_bytes", sum("copy", "d2h", "bytes"));
    t.insert("flops", sum("compute", "gemm", "flops"));
    t.insert("gemm_calls", sum("compute", "gemm", "calls"));
    t
}

fn stats_totals(s: &Stats) -> BTreeMap<&'static str, u64> {
    BTreeMap::from([
        ("allocations", s.allocations),
        ("frees", s.frees),
        ("pool_reuses", s.pool_reuses),
        ("handovers", s.handovers),
        ("arena_allocations", s.arena_allocations),
        ("hits", s.hits),
        ("misses", s.misses),
        ("evictions", s.evictions),
        ("prefetches", s.prefetches),
        ("writebacks", s.writebacks),
        ("h2d_bytes", s.h2d_bytes),
        ("d2h_bytes", s.d2h_bytes),
        ("flops", s.flops),
        ("gemm_calls", s.gemm_calls),
    ])
}

#[test]
fn the_trace_is_well_formed_and_its_totals_are_the_statistics() {
    let cases = [
        ("naive", Mode::Naive, 0.0, None, None),
        ("reorg-sync", Mode::ReorgSync, 0.5, None, None),
        (
            "optimal, driver",
            Mode::Optimal,
            1.5,
            Some(Alloc::Driver),
            None,
        ),
        ("optimal, handover", Mode::Optimal, 1.5, None, None),
        (
            "optimal, arena",
            Mode::Optimal,
            1.5,
            Some(Alloc::Arena),
            None,
        ),
        ("optimal, prefetch", Mode::Optimal, 1.5, None, Some(6)),
    ];
    for (what, mode, oversub, alloc, prefetch) in cases {
        let t = traced(mode, oversub, alloc, prefetch);
        let trace = memhc_trace::chrome::trace(&t.events, &t.timeline);
        let events = check_format(&trace);
        let s = &t.outcome.stats;
        assert_eq!(totals(events), stats_totals(s), "{what}");
        assert!(
            s.evictions > 0 || oversub == 0.0,
            "{what}: the budget binds"
        );
        assert_eq!(s.prefetches > 0, prefetch.is_some(), "{what}");
        assert_eq!(
            s.arena_allocations > 0,
            alloc == Some(Alloc::Arena),
            "{what}"
        );
        assert_eq!(
            s.handovers > 0,
            mode == Mode::Optimal && alloc != Some(Alloc::Driver),
            "{what}"
        );
        // Every copy and GEMM batch was timed by the host backend's timeline.
        assert_eq!(trace["otherData"]["untimed_work"], 0, "{what}");
        // One track per stream: the launch streams, and the copy stream with prefetch.
        let tids: BTreeSet<u64> = events
            .iter()
            .filter(|e| e["ph"] == "X")
            .map(|e| e["tid"].as_u64().unwrap())
            .collect();
        let expected: BTreeSet<u64> = match prefetch {
            Some(_) => BTreeSet::from([1, 2, 3]),
            None => BTreeSet::from([1, 2]),
        };
        assert_eq!(tids, expected, "{what}");
        // The counter's peak is the driver's peak (outside the arena, which is one block).
        let held = events
            .iter()
            .filter(|e| e["ph"] == "C")
            .map(|e| e["args"]["in_use"].as_u64().unwrap() + e["args"]["pooled"].as_u64().unwrap())
            .max()
            .unwrap();
        if alloc != Some(Alloc::Arena) {
            assert_eq!(held, s.peak_device_bytes, "{what}");
        }
        // Every residency is an async slice, and dependencies are drawn.
        let slices = events.iter().filter(|e| e["ph"] == "b").count() as u64;
        assert!(slices >= s.misses + s.prefetches, "{what}");
        assert!(events.iter().any(|e| e["ph"] == "s"), "{what}: no flow");
    }
}

#[test]
fn the_trace_file_parses() {
    let t = traced(Mode::Optimal, 1.0, None, None);
    let dir = std::env::temp_dir().join(format!("memhc-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("trace.json");
    memhc_trace::chrome::write(&path, &t.events, &t.timeline).unwrap();
    let parsed: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    check_format(&parsed);
    let svg = dir.join("memory.svg");
    let replay = memhc_trace::Replay::of(&t.events);
    let report = Report::of(&t.events, ReportOptions::default());
    memhc_trace::plot::memory_svg(&svg, "test", &replay, t.events.budget, &report.peaks).unwrap();
    let timeline = dir.join("timeline.svg");
    memhc_trace::plot::timeline_svg(&timeline, "test", &t.events, &t.timeline).unwrap();
    for p in [&svg, &timeline] {
        let text = std::fs::read_to_string(p).unwrap();
        assert!(
            text.starts_with("<svg") && text.contains("device MiB"),
            "{}",
            p.display()
        );
    }
    assert!(
        std::fs::read_to_string(&timeline)
            .unwrap()
            .contains("stream 1")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn naive_mode_shows_the_redundancies_memhc_removes_and_optimal_none() {
    let count = |t: &Traced, p: Pattern| {
        Report::of(&t.events, ReportOptions::default())
            .of_pattern(p)
            .count()
    };
    let naive = traced(Mode::Naive, 0.0, None, None);
    assert!(count(&naive, Pattern::RedundantAllocation) > 0);
    assert!(count(&naive, Pattern::RepeatedCopy) > 0);
    for oversub in [0.0, 1.5] {
        let optimal = traced(Mode::Optimal, oversub, None, None);
        assert_eq!(
            count(&optimal, Pattern::RedundantAllocation),
            0,
            "{oversub}"
        );
        assert_eq!(count(&optimal, Pattern::RepeatedCopy), 0, "{oversub}");
        assert_eq!(count(&optimal, Pattern::Leak), 0, "{oversub}");
        assert_eq!(count(&optimal, Pattern::UnusedAllocation), 0, "{oversub}");
        // Within the budget nothing comes back; over it, what comes back was evicted.
        let refetched = count(&optimal, Pattern::RefetchAfterEviction);
        assert_eq!(
            refetched == 0,
            oversub == 0.0,
            "{oversub}: {refetched} refetches"
        );
    }
}
