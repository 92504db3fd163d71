//! The `memhc-synth` binary end to end, at small sizes: output, records, sweeps, verification
//! on every mode and policy, the Fig. 6 replay, and a one-line error with exit code 2 for every
//! kind of bad input.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use std::path::PathBuf;

use common::{one_line_error, stderr, stdout, synth, synth_with};

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    common::scratch("cli", name)
}

const SMALL: &[&str] = &["--tensor-size", "4", "--vector-size", "4", "--vectors", "6"];

fn records(path: &PathBuf) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str::<Vec<serde_json::Value>>(&text).unwrap()
}

/// `--dist recent:K` runs, and its records name the distribution as given.
#[test]
fn recent_distribution_runs_and_is_recorded() {
    let dir = scratch("recent");
    let json = dir.join("r.json");
    let mut args = SMALL.to_vec();
    args.extend_from_slice(&["--dist", "recent:2", "--oversub", "1", "--json"]);
    args.push(json.to_str().unwrap());
    let o = synth(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = records(&json);
    assert_eq!(r[0]["dist"], "recent:2");
    assert!(r[0]["misses"].as_u64().unwrap() >= r[0]["miss_lower_bound"].as_u64().unwrap());
}

#[test]
fn fig6_replay_prints_the_papers_counts() {
    let o = synth(&[
        "replay",
        "--slots",
        "4",
        "--policy",
        "lru,pp-lru",
        "A B C D",
        "E F A B",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "lru evictions=4 hits=0 misses=8\npp-lru evictions=2 hits=2 misses=6\n"
    );
    // `trace` is the command's old name, kept as an alias.
    let c = synth(&[
        "trace", "--slots", "4", "--policy", "pp-lru", "A B C D", "E F C D",
    ]);
    assert_eq!(stdout(&c), "pp-lru evictions=2 hits=2 misses=6\n");
}

#[test]
fn a_run_writes_table_json_csv_and_paper_table() {
    let dir = scratch("outputs");
    let (json, csv) = (dir.join("r.json"), dir.join("r.csv"));
    let mut args = SMALL.to_vec();
    args.extend([
        "--repeat",
        "0.5",
        "--oversub",
        "0.5",
        "--policy",
        "lru,pp-lru,belady",
        "--paper-table",
        "--json",
        json.to_str().unwrap(),
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let o = synth(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("policy") && out.contains("pp-lru") && out.contains("Hit Rate"),
        "{out}"
    );
    let recs = records(&json);
    assert_eq!(recs.len(), 3);
    for r in &recs {
        for key in [
            "policy",
            "mode",
            "tensor_size",
            "vector_size",
            "repeat",
            "oversub",
            "alloc",
            "allocations",
            "pool_reuses",
            "handovers",
            "arena_allocations",
            "pool_slack_bytes",
            "fragmentation_evictions",
            "arena_restarts",
            "hits",
            "misses",
            "hit_rate",
            "evictions",
            "writebacks",
            "h2d_bytes",
            "d2h_bytes",
            "peak_device_bytes",
            "flops",
            "gemm_calls",
            "gflops",
            "wall_s",
            "cpu_s",
            "device_compute_s",
            "miss_lower_bound",
            "budget",
        ] {
            assert!(r.get(key).is_some(), "record lacks {key}: {r}");
        }
        // The budget formula: peak / (1 + o), rounded down.
        let peak = r["peak_no_eviction_bytes"].as_u64().unwrap();
        assert_eq!(
            r["budget"].as_u64().unwrap(),
            (peak as f64 / 1.5).floor() as u64
        );
        // Belady's misses bound every policy's.
        assert!(r["miss_lower_bound"].as_u64().unwrap() <= r["misses"].as_u64().unwrap());
    }
    let belady = recs.iter().find(|r| r["policy"] == "belady").unwrap();
    assert_eq!(belady["miss_lower_bound"], belady["misses"]);
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv_text.lines().count(), 4, "{csv_text}");
    assert!(
        csv_text
            .lines()
            .next()
            .unwrap()
            .contains("miss_lower_bound")
    );
}

#[test]
fn verify_passes_on_every_mode_and_policy() {
    let dir = scratch("verify");
    let json = dir.join("v.json");
    let mut args = SMALL.to_vec();
    args.extend([
        "--oversub",
        "1",
        "--policy",
        "all",
        "--mode",
        "all",
        "--verify",
        "--json",
        json.to_str().unwrap(),
    ]);
    let o = synth(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&json);
    assert_eq!(recs.len(), 7 * 4);
    let mut modes: Vec<_> = recs.iter().map(|r| r["mode"].as_str().unwrap()).collect();
    modes.sort();
    modes.dedup();
    assert_eq!(
        modes,
        ["naive", "optimal", "reorg", "reorg-sync"],
        "`all` is the four explicit modes"
    );
    for r in &recs {
        assert_eq!(r["verified"], true, "{r}");
        assert!(r["max_rel_error"].as_f64().unwrap() <= 1e-12);
    }
    // Same queue, same results: every mode and policy moves the same flops.
    let flops: Vec<_> = recs.iter().map(|r| r["flops"].as_u64().unwrap()).collect();
    assert!(flops.windows(2).all(|w| w[0] == w[1]));
    // And issues the BLAS calls its layout implies: 6 vectors of 4 meson contractions. Packed
    // modes tile meson nodes on the device (issue 30), so each contraction is one GEMM of the
    // whole 4N x 4N matrices: 6 x 4 = 24 (before tiling: 96). The naive mode's unpacked
    // nodes keep one buffer per component, so its contractions are still 4 accumulating
    // batched calls of 16 products (one per layer): 6 x 4 x 4 = 96.
    for r in &recs {
        let want = if r["mode"] == "naive" { 96 } else { 24 };
        assert_eq!(r["gemm_calls"], want, "{}/{}", r["mode"], r["policy"]);
    }
}

/// The unified memory baseline runs on the host backend (it has managed memory): verified
/// results, one managed allocation per node, nothing evicted, and every result read back.
#[test]
fn unified_mode_runs_and_verifies_on_the_host_backend() {
    let dir = scratch("unified");
    let json = dir.join("u.json");
    let mut args = SMALL.to_vec();
    args.extend([
        "--mode",
        "unified,naive",
        "--verify",
        "--json",
        json.to_str().unwrap(),
    ]);
    let o = synth(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&json);
    let unified = recs.iter().find(|r| r["mode"] == "unified").unwrap();
    let naive = recs.iter().find(|r| r["mode"] == "naive").unwrap();
    assert_eq!(unified["verified"], true, "{unified}");
    assert_eq!(unified["evictions"], 0);
    assert_eq!(unified["budget"], unified["peak_no_eviction_bytes"]);
    assert_eq!(unified["flops"], naive["flops"]);
    assert_eq!(
        unified["misses"], unified["allocations"],
        "one managed allocation per node, on its first use"
    );
    // The host reads every result where naive copies it out.
    assert_eq!(unified["d2h_bytes"], naive["d2h_bytes"]);
}

#[test]
fn sweeps_run_every_combination() {
    let dir = scratch("sweep");
    let json = dir.join("s.json");
    let mut args = SMALL.to_vec();
    args.extend([
        "--sweep",
        "repeat=0,1",
        "--sweep",
        "oversub=0,0.5",
        "--json",
        json.to_str().unwrap(),
    ]);
    let o = synth(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&json);
    let points: Vec<(f64, f64)> = recs
        .iter()
        .map(|r| {
            (
                r["repeat"].as_f64().unwrap(),
                r["oversub"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(points, vec![(0.0, 0.0), (0.0, 0.5), (1.0, 0.0), (1.0, 0.5)]);
    // Without oversubscription nothing is evicted.
    assert!(
        recs.iter()
            .filter(|r| r["oversub"] == 0.0)
            .all(|r| r["evictions"] == 0)
    );
}

/// Every allocation setting verifies, and with nodes of one size they differ only in where
/// memory came from: the arena makes one driver allocation, handover fewer than the driver.
#[test]
fn allocation_settings_change_allocations_only() {
    let dir = scratch("alloc");
    let json = dir.join("alloc.json");
    let mut args = SMALL.to_vec();
    args.extend_from_slice(&[
        "--policy",
        "lru,belady",
        "--mode",
        "optimal,reorg-sync",
        "--alloc",
        "all",
        "--oversub",
        "1.5",
        "--verify",
        "--json",
        json.to_str().unwrap(),
    ]);
    let o = synth(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&json);
    assert_eq!(recs.len(), 2 * 2 * 3);
    let get = |r: &serde_json::Value, k: &str| r[k].as_u64().unwrap();
    for group in recs.chunks(2 * 3) {
        for policy in 0..2 {
            let [driver, handover, arena] = [0, 1, 2].map(|a| &group[a * 2 + policy]);
            assert_eq!(
                (driver["alloc"].as_str(), arena["alloc"].as_str()),
                (Some("driver"), Some("arena"))
            );
            for r in [driver, handover, arena] {
                assert_eq!(r["verified"].as_bool(), Some(true), "{r}");
                for k in ["hits", "misses", "evictions", "writebacks", "h2d_bytes"] {
                    assert_eq!(get(r, k), get(driver, k), "{k}: {r}");
                }
            }
            assert!(get(driver, "evictions") > 0, "{driver}");
            assert!(get(handover, "allocations") < get(driver, "allocations"));
            assert_eq!(get(arena, "allocations"), 1, "{arena}");
            assert!(get(arena, "arena_allocations") > 0, "{arena}");
        }
    }
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let cases: &[(&[&str], &str)] = &[
        (&["--repeat", "1.5"], "--repeat"),
        (&["--policy", "lfu"], "unknown eviction policy 'lfu'"),
        (
            &["--mode", "optimal,unified", "--oversub", "0.5"],
            "unified memory is never oversubscribed",
        ),
        (
            &["--mode", "unified", "--sweep", "oversub=0,1"],
            "--oversub 1",
        ),
        (
            &["--mode", "unified", "--budget", "64K"],
            "--budget makes it 65536 bytes",
        ),
        (&["--mode", "fast"], "unknown mode 'fast'"),
        (&["--backend", "tpu"], "unknown backend"),
        (&["--dist", "poisson"], "unknown distribution"),
        (&["--dist", "recent:0"], "unknown distribution 'recent:0'"),
        (&["--sweep", "speed=1"], "--sweep speed=1"),
        (&["--sweep", "vector-size=2.5"], "vector-size"),
        (&["--oversub", "-1"], "--oversub"),
        (&["--streams", "0"], "--streams"),
        (&["--alloc", "slab"], "unknown allocation mode 'slab'"),
        (&["--reuse-tolerance", "150"], "--reuse-tolerance"),
        (
            &["--mode", "unified", "--alloc", "arena"],
            "--alloc arena does not apply",
        ),
        (&["--budget", "1K"], "cannot hold one contraction"),
        // The generator's options conflict with a workload file (issue 31: not ignored).
        (
            &["--workload", "/nonexistent/w.json"],
            "cannot be used with",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = SMALL.to_vec();
        args.extend_from_slice(extra);
        let o = synth(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{extra:?}: not one line: {err}"
        );
        assert!(err.contains(needle), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{extra:?}: {err}");
    }
    let o = synth(&["--workload", "/nonexistent/w.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/w.json"), "{}", stderr(&o));
    // Argument errors from the parser itself also exit 2.
    let o = synth(&["--vectors", "many"]);
    assert_eq!(o.status.code(), Some(2));
    let o = synth(&["replay", "--slots", "2", "A A"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("names A twice"));
}

/// A refused command: its arguments, its environment, and what its one line says.
type Refused<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

/// Runs too large for the machine, sizes that overflow and queues with nothing to run are
/// refused before any data is made: one line, exit code 2 (no abort on a failed allocation,
/// no panic, no run into the machine's limit). `MEMHC_HOST_MEMORY` stands for the machine's
/// available memory where the case depends on it.
#[test]
fn runs_too_large_for_the_host_are_refused_in_one_line() {
    let cases: &[Refused] = &[
        // 2.5 TB per node: refused, not an abort on a failed allocation.
        (
            &["--tensor-size", "100000"],
            &[],
            "of host memory (the values of the initial nodes alone",
        ),
        // 24 GiB of initial nodes on a machine with 16 GiB available.
        (
            &[
                "--tensor-size",
                "4096",
                "--vectors",
                "2",
                "--vector-size",
                "2",
            ],
            &[("MEMHC_HOST_MEMORY", "16G")],
            "the run needs 24.0 GiB of host memory",
        ),
        (
            &["--vectors", "0"],
            &[],
            "--vectors 0: a run needs at least one vector",
        ),
        (
            &["plan", "--vectors", "0"],
            &[],
            "a run needs at least one vector",
        ),
        // Sizes that overflow: the node, the count of nodes.
        (
            &["--tensor-size", "5000000000000"],
            &[],
            "--tensor-size 5000000000000: a node of 16 components",
        ),
        (
            &["plan", "--tensor-size", "3000000000"],
            &[],
            "does not fit in the address space",
        ),
        (
            &["--tensor-size", "4", "--vectors", "100000000000000"],
            &[],
            "EiB of host memory",
        ),
        (
            &["plan", "--vectors", "100000000000000"],
            &[],
            "the plan needs",
        ),
        // The small workload on a machine with 1 MiB: the budget and the node values count.
        (
            &[
                SMALL[0], SMALL[1], SMALL[2], SMALL[3], SMALL[4], SMALL[5], "--verify",
            ],
            &[("MEMHC_HOST_MEMORY", "1M")],
            "available",
        ),
        (
            &["--tensor-size", "4"],
            &[("MEMHC_HOST_MEMORY", "lots")],
            "MEMHC_HOST_MEMORY",
        ),
    ];
    for (args, env, needle) in cases {
        let o = synth_with(args, env);
        one_line_error(&o, 2, needle, &format!("{args:?} {env:?}"));
    }
    // The check reads the machine's memory; `off` skips it.
    let mut small = SMALL.to_vec();
    small.push("--verify");
    let o = synth_with(&small, &[("MEMHC_HOST_MEMORY", "off")]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = synth_with(&small, &[("MEMHC_HOST_MEMORY", "100M")]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// `plan` predicts what real runs count: every statistic of every policy and mode at the
/// budget, from the same options; and a run at a least budget runs while one byte less does
/// not fit.
#[test]
fn plan_predicts_what_runs_count() {
    let dir = scratch("plan");
    let json = dir.join("run.json");
    let mut opts = SMALL.to_vec();
    opts.extend([
        "--repeat",
        "0.5",
        "--oversub",
        "1.5",
        "--policy",
        "all",
        "--mode",
        "all",
        "--streams",
        "3",
    ]);
    let mut plan_args = vec!["plan"];
    plan_args.extend_from_slice(&opts);
    plan_args.push("--json");
    let o = synth(&plan_args);
    assert!(o.status.success(), "{}", stderr(&o));
    let plan: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let mut run_args = opts.clone();
    run_args.extend(["--json", json.to_str().unwrap()]);
    let o = synth(&run_args);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&json);
    assert_eq!(recs.len(), 7 * 4);
    let budget = plan["budget"].as_u64().unwrap();
    assert_eq!(
        plan["peak_without_eviction"],
        recs[0]["peak_no_eviction_bytes"]
    );
    let mut least = None;
    for m in plan["modes"].as_array().unwrap() {
        for p in m["policies"].as_array().unwrap() {
            let (mode, policy) = (m["mode"].as_str().unwrap(), p["policy"].as_str().unwrap());
            let r = recs
                .iter()
                .find(|r| r["mode"] == mode && r["policy"] == policy)
                .unwrap();
            let predicted = &p["prediction"];
            assert_eq!(predicted["outcome"], "runs", "{mode}/{policy}: {predicted}");
            assert_eq!(r["budget"].as_u64(), Some(budget));
            for key in [
                "allocations",
                "pool_reuses",
                "hits",
                "misses",
                "evictions",
                "writebacks",
                "h2d_bytes",
                "d2h_bytes",
                "peak_device_bytes",
                "flops",
            ] {
                assert_eq!(predicted[key], r[key], "{mode}/{policy}: {key}");
            }
            if mode == "optimal" && policy == "lru" {
                least = Some((
                    p["least_budget"].as_u64().unwrap(),
                    m["least_budget_without_eviction"].as_u64().unwrap(),
                ));
            }
        }
    }
    // The least budgets of optimal/lru, run for real: they run; below the least, nothing does.
    let (runs, no_evict) = least.unwrap();
    for (budget, ok) in [(runs, true), (runs - 1, false), (no_evict, true)] {
        let b = budget.to_string();
        let json = dir.join(format!("least-{budget}.json"));
        let mut args = SMALL.to_vec();
        args.extend([
            "--repeat",
            "0.5",
            "--budget",
            &b,
            "--streams",
            "3",
            "--json",
            json.to_str().unwrap(),
        ]);
        let o = synth(&args);
        assert_eq!(o.status.success(), ok, "--budget {b}: {}", stderr(&o));
        if ok && budget == no_evict {
            assert_eq!(records(&json)[0]["evictions"], 0);
        }
    }
    // The table names every column it explains.
    let mut table_args = vec!["plan"];
    table_args.extend_from_slice(&opts);
    let o = synth(&table_args);
    assert!(o.status.success(), "{}", stderr(&o));
    for word in [
        "peak without eviction",
        "no_evict_B",
        "least_B",
        "clock-pro",
        "reorg-sync",
    ] {
        assert!(stdout(&o).contains(word), "{word}: {}", stdout(&o));
    }
}

/// Without the `cuda` feature, `--backend cuda` says how to get it, in one line (exit 2).
#[cfg(not(feature = "cuda"))]
#[test]
fn backend_cuda_without_the_feature_says_how_to_build_it() {
    let mut args = SMALL.to_vec();
    args.extend_from_slice(&["--backend", "cuda"]);
    one_line_error(&synth(&args), 2, "--features cuda", "--backend cuda");
}

/// With the `cuda` feature, `--backend cuda` runs on an NVIDIA GPU; where CUDA or the GPU is
/// missing, it fails at once with the backend's one-line reason (exit 1), never a panic.
#[cfg(feature = "cuda")]
#[test]
fn backend_cuda_runs_or_says_why_not() {
    let mut args = SMALL.to_vec();
    args.extend_from_slice(&["--backend", "cuda", "--verify"]);
    let o = synth(&args);
    match memhc_select::check(memhc_select::BackendChoice::Cuda) {
        Ok(_) => assert!(o.status.success(), "{}", stderr(&o)),
        Err(_) => {
            eprintln!("no CUDA here: checking the error: {}", stderr(&o));
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{err}");
            assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
            assert!(err.contains("backend unavailable: "), "{err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}

/// Without the `rocm` feature, `--backend rocm` says how to get it, in one line (exit 2).
#[cfg(not(feature = "rocm"))]
#[test]
fn backend_rocm_without_the_feature_says_how_to_build_it() {
    let mut args = SMALL.to_vec();
    args.extend_from_slice(&["--backend", "rocm"]);
    let o = synth(&args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    assert!(err.contains("--features rocm"), "{err}");
}

/// With the `rocm` feature, `--backend rocm` runs on an AMD GPU; where ROCm or the GPU is
/// missing (CI), it fails at once with the backend's one-line reason (exit 1), never a panic.
#[cfg(feature = "rocm")]
#[test]
fn backend_rocm_runs_or_says_why_not() {
    let mut args = SMALL.to_vec();
    args.extend_from_slice(&["--backend", "rocm", "--verify"]);
    let o = synth(&args);
    let err = stderr(&o);
    match memhc_select::check(memhc_select::BackendChoice::Rocm) {
        Ok(_) => assert!(o.status.success(), "{err}"),
        Err(_) => {
            eprintln!("no ROCm here: checking the error: {err}");
            assert_eq!(o.status.code(), Some(1), "{err}");
            assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
            assert!(err.contains("backend unavailable: "), "{err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}

/// Emit a generated workload (with seeds, and with .npy data), run the file, and get the same
/// results as generating directly: the dumped .npy results are identical byte for byte.
#[test]
fn workload_files_round_trip_through_the_cli() {
    let dir = scratch("roundtrip");
    let direct = dir.join("direct");
    let mut args = SMALL.to_vec();
    args.extend([
        "--repeat",
        "0.5",
        "--dump-results",
        direct.to_str().unwrap(),
    ]);
    let o = synth(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    for npy in [false, true] {
        let file = dir.join(if npy {
            "npy/work.json"
        } else {
            "seeds/work.json"
        });
        let mut emit = SMALL.to_vec();
        emit.extend(["--repeat", "0.5", "--emit-workload", file.to_str().unwrap()]);
        if npy {
            emit.push("--emit-npy");
        }
        let o = synth(&emit);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).is_empty(), "emitting runs nothing");
        let out = dir.join(format!("from-file-{npy}"));
        let o = synth(&[
            "--workload",
            file.to_str().unwrap(),
            "--verify",
            "--dump-results",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let mut names: Vec<_> = std::fs::read_dir(&direct)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert!(names.len() > 1, "no results dumped");
        for name in names {
            let a = std::fs::read(direct.join(&name)).unwrap();
            let b = std::fs::read(out.join(&name)).unwrap();
            assert_eq!(a, b, "{name:?} differs (npy data: {npy})");
        }
    }
}

/// Every malformed workload file is a one-line error naming the place, with exit code 2.
#[test]
fn malformed_workload_files_are_one_line_errors() {
    let dir = scratch("badfiles");
    let node = r#"{"id": "n0", "spins": 16, "dims": [2, 2], "data": {"random": {"seed": 1}}}"#;
    let cases: Vec<(&str, String, &str)> = vec![
        ("missing-field", r#"{"format": "memhc-workload/1", "nodes": [{"id": "n0", "spins": 16, "data": {"random": {"seed": 1}}}], "vectors": []}"#.into(), "dims"),
        ("unknown-id", format!(r#"{{"format": "memhc-workload/1", "nodes": [{node}], "vectors": [[{{"a": "n0", "b": "n9", "out": "t0", "terms": "meson4x4"}}]]}}"#), "vectors[0][0].b"),
        ("produced-twice", format!(r#"{{"format": "memhc-workload/1", "nodes": [{node}], "vectors": [[{{"a": "n0", "b": "n0", "out": "t0", "terms": "meson4x4"}}], [{{"a": "n0", "b": "n0", "out": "t0", "terms": "meson4x4"}}]]}}"#), "vectors[1][0].out"),
        ("never-produced", format!(r#"{{"format": "memhc-workload/1", "nodes": [{node}], "vectors": [], "results": ["t7"]}}"#), "results[0]"),
        ("version", r#"{"format": "memhc-workload/9", "nodes": [], "vectors": []}"#.into(), "format"),
        ("bad-npy-shape", r#"{"format": "memhc-workload/1", "nodes": [{"id": "n0", "spins": 16, "dims": [3, 3], "data": {"npy": "n0.npy"}}], "vectors": []}"#.into(), "n0.npy"),
        ("syntax", r#"{"format": "memhc-workload/1", "nodes": [,]}"#.into(), "line 1"),
    ];
    // A valid .npy of the wrong shape for the bad-npy-shape case: write one with the tool.
    let src = dir.join("src/work.json");
    let mut emit = vec![
        "--tensor-size",
        "2",
        "--vector-size",
        "1",
        "--vectors",
        "1",
        "--repeat",
        "0",
    ];
    emit.extend(["--emit-workload", src.to_str().unwrap(), "--emit-npy"]);
    assert!(synth(&emit).status.success());
    for (name, text, needle) in cases {
        let sub = dir.join(name);
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::copy(dir.join("src/n0.npy"), sub.join("n0.npy")).unwrap(); // (16, 2, 2)
        let file = sub.join("work.json");
        std::fs::write(&file, text).unwrap();
        let o = synth(&["--workload", file.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        assert!(
            err.contains("work.json") && err.contains(needle),
            "{name}: {err}"
        );
    }
}

/// `--report` prints a memory report per run after the table, `--timeline` writes a Chrome
/// trace (one run: the file named), and `--plot` adds memory and timeline plots of the run.
#[test]
fn report_timeline_and_memory_plots() {
    let dir = scratch("observe");
    let trace = dir.join("trace.json");
    let plots = dir.join("plots");
    let o = synth(&[
        "--tensor-size",
        "4",
        "--vectors",
        "6",
        "--vector-size",
        "4",
        "--oversub",
        "1",
        "--report",
        "--timeline",
        trace.to_str().unwrap(),
        "--plot",
        plots.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let table = out.find("policy").unwrap();
    let report = out.find("memory report: lru/optimal").unwrap();
    assert!(table < report, "the report follows the table: {out}");
    for pattern in [
        "early allocation",
        "dead write",
        "refetch after eviction",
        "peak 1:",
    ] {
        assert!(out[report..].contains(pattern), "{pattern}: {out}");
    }
    let parsed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    assert!(parsed["traceEvents"].is_array());
    for name in [
        "memory-lru-optimal-handover.svg",
        "timeline-lru-optimal-handover.svg",
    ] {
        let svg = std::fs::read_to_string(plots.join(name)).unwrap();
        assert!(svg.contains("device MiB"), "{name}");
    }
}

/// A run that fails after its outputs were opened (the results dumped, the timeline and the
/// plots written, then `--json` cannot be written) leaves none of them; the same run with a
/// writable `--json` keeps them all.
#[test]
fn a_failing_run_leaves_no_output_file() {
    let dir = scratch("no-outputs");
    let dump = dir.join("dump");
    let timeline = dir.join("timeline.json");
    let plots = dir.join("plots");
    let run = |json: &std::path::Path| {
        let mut args: Vec<String> = SMALL.iter().map(|s| (*s).to_owned()).collect();
        for (flag, path) in [
            ("--dump-results", &dump),
            ("--timeline", &timeline),
            ("--plot", &plots),
        ] {
            args.extend([flag.to_owned(), path.display().to_string()]);
        }
        args.extend(["--json".to_owned(), json.display().to_string()]);
        synth(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let o = run(&dir.join("no-such-dir/records.json"));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("no-such-dir/records.json"), "{err}");
    for left in [&dump, &timeline, &plots] {
        assert!(!left.exists(), "{} was left behind", left.display());
    }
    // The same run with a writable --json writes them all.
    let json = dir.join("records.json");
    let o = run(&json);
    assert!(o.status.success(), "{}", stderr(&o));
    for kept in [&dump.join("traces.json"), &timeline, &plots, &json] {
        assert!(kept.exists(), "{} was not written", kept.display());
    }
}

#[test]
fn every_run_is_recorded_and_the_times_are_their_median() {
    let dir = scratch("runs");
    let json = dir.join("r.json");
    let mut args = SMALL.to_vec();
    args.extend(["--runs", "3", "--json", json.to_str().unwrap()]);
    let o = synth(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records(&json);
    assert_eq!(recs.len(), 1);
    let walls: Vec<f64> = recs[0]["wall_s_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(walls.len(), 3);
    let mut sorted = walls.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(recs[0]["wall_s"].as_f64(), Some(sorted[1]));
    if let Some(cpus) = recs[0]["cpu_s_runs"].as_array() {
        assert_eq!(cpus.len(), 3);
    }
}

#[test]
fn verify_on_a_backend_without_values_is_refused_in_one_line() {
    let mut args = SMALL.to_vec();
    args.extend(["--backend", "model", "--verify"]);
    let o = synth(&args);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("--verify needs a backend that computes") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn a_finished_sweep_leaves_no_partial_records() {
    let dir = scratch("partial");
    let json = dir.join("r.json");
    let mut args = SMALL.to_vec();
    args.extend(["--sweep", "repeat=0,0.5", "--json", json.to_str().unwrap()]);
    let o = synth(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(records(&json).len(), 2);
    assert!(!dir.join("r.json.partial").exists());
}
