//! The `memhc` binary: the happy path (generate, plan, run verified against the reference)
//! and bad input (one line on stderr, exit code 2).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

fn memhc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_memhc"))
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("memhc-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn generate_plan_and_run_a_preset() {
    let d = dir("happy");
    let file = d.join("a1.json");
    let out = memhc()
        .args(["gen", "a1_rhopi", "--tensor-size", "2", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let plan = memhc().arg("plan").arg(&file).output().unwrap();
    assert!(plan.status.success());
    assert!(String::from_utf8_lossy(&plan.stdout).contains("\"contractions_without_sharing\": 68"));
    let csv = d.join("a1.csv");
    let run = memhc()
        .arg("run")
        .arg(&file)
        .args([
            "--verify",
            "--policy",
            "lru,belady",
            "--mode",
            "naive,optimal",
            "--out",
        ])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("correlator,source,sink,re,im\n"));
    assert_eq!(text.lines().count(), 1 + 256);
}

fn one_line_exit_2(args: &[&str], file: Option<(&str, &str)>, needle: &str) {
    let d = dir(needle.split_whitespace().next().unwrap_or("x"));
    let mut cmd = memhc();
    cmd.args(args);
    if let Some((name, text)) = file {
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        cmd.arg(&p);
    }
    let out = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err}");
}

const NODES: &str = r#"{"id": "a", "spins": 16, "dims": [2, 2], "data": {"seed": 1}},
  {"id": "b", "spins": 16, "dims": [2, 2], "data": {"seed": 2}},
  {"id": "c", "spins": 16, "dims": [3, 2], "data": {"seed": 3}}"#;

fn corr(loop_nodes: &str, times: &str) -> String {
    format!(
        r#"{{"format": "memhc-corr/1", "nodes": [{NODES}],
        "graphs": [{{"id": "g0", "loops": [{{"nodes": {loop_nodes}}}]}}],
        "correlators": [{{"name": "C", "times": {times}}}]}}"#
    )
}

#[test]
fn bad_input_is_one_line_naming_the_graph_and_node() {
    let ok_times = r#"[{"source": 0, "sink": 1, "graphs": ["g0"]}]"#;
    one_line_exit_2(
        &["plan"],
        Some(("u.json", &corr(r#"["a", "zz"]"#, ok_times))),
        "graph g0",
    );
    one_line_exit_2(
        &["plan"],
        Some(("d.json", &corr(r#"["a", "c", "b"]"#, ok_times))),
        "graph g0",
    );
    one_line_exit_2(
        &["plan"],
        Some(("l.json", &corr(r#"["c"]"#, ok_times))),
        "graph g0",
    );
    one_line_exit_2(
        &["plan"],
        Some((
            "t.json",
            &corr(
                r#"["a", "b"]"#,
                r#"[{"source": 0, "sink": 1, "graphs": []}]"#,
            ),
        )),
        "time pair",
    );
    let npy = corr(r#"["a", "b"]"#, ok_times).replace(r#""seed": 1"#, r#""npy": "missing.npy""#);
    one_line_exit_2(&["plan"], Some(("n.json", &npy)), "node a");
    let spin = corr(r#"["a", "b", "a"]"#, ok_times).replace(
        r#""nodes": ["a", "b", "a"]"#,
        r#""nodes": ["a", "b", "a"], "mappings": [[[0, 99, 0]]]"#,
    );
    one_line_exit_2(&["plan"], Some(("s.json", &spin)), "graph g0");
    one_line_exit_2(&["gen", "nope", "-o", "/dev/null"], None, "unknown preset");
}

#[test]
fn a_backend_or_output_this_build_lacks_is_one_line() {
    let ok = corr(
        r#"["a", "b"]"#,
        r#"[{"source": 0, "sink": 1, "graphs": ["g0"]}]"#,
    );
    one_line_exit_2(
        &["run", "--backend", "tpu"],
        Some(("b.json", &ok)),
        "unknown backend",
    );
    if !cfg!(feature = "cuda") {
        one_line_exit_2(
            &["run", "--backend", "cuda"],
            Some(("c.json", &ok)),
            "--features cuda",
        );
    }
    let d = dir("out");
    let bad_out = d.join("x.txt");
    one_line_exit_2(
        &["run", "--out", bad_out.to_str().unwrap()],
        Some(("o.json", &ok)),
        "unknown extension",
    );
    // Refused before anything runs: no table, no file.
    std::fs::write(d.join("o.json"), &ok).unwrap();
    let out = memhc()
        .args(["run", "--out", bad_out.to_str().unwrap()])
        .arg(d.join("o.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!bad_out.exists());
    if !cfg!(feature = "hdf5") {
        let h5 = d.join("x.h5");
        one_line_exit_2(
            &["run", "--out", h5.to_str().unwrap()],
            Some(("h.json", &ok)),
            "--features hdf5",
        );
    }
}

/// `--timeline` writes one Chrome trace per run (labelled by policy and mode) and `--report`
/// prints the memory report after each run's line: the naive mode's redundancies are there.
#[test]
fn timeline_and_report() {
    let d = dir("timeline");
    let file = d.join("a1.json");
    let made = memhc()
        .args(["gen", "a1_rhopi", "--tensor-size", "2", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(made.status.success());
    let run = memhc()
        .arg("run")
        .arg(&file)
        .args(["--mode", "naive,optimal", "--report", "--timeline"])
        .arg(d.join("t.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(stdout.matches("memory report: lru/").count(), 2, "{stdout}");
    let naive = &stdout[stdout.find("lru/naive").unwrap()..stdout.find("lru/optimal").unwrap()];
    let count = |pattern: &str| {
        let line = naive.lines().find(|l| l.starts_with(pattern)).unwrap();
        line[pattern.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    assert!(count("redundant allocation") > 0, "{naive}");
    assert!(count("repeated copy") > 0, "{naive}");
    for mode in ["naive", "optimal"] {
        let trace = std::fs::read(d.join(format!("t-lru-{mode}.json"))).unwrap();
        let trace: serde_json::Value = serde_json::from_slice(&trace).unwrap();
        assert!(
            trace["traceEvents"].as_array().unwrap().len() > 100,
            "{mode}"
        );
    }
}

/// `memhc run` reports the batched BLAS calls it issued, in its table and in each JSON record.
/// Six distinct meson nodes (N = 2) in two loops of three, `Tr(A B C)` and `Tr(D E F)`, at one
/// time pair: nothing to share, so each loop is one contraction and one trace. Meson nodes are
/// tiled on the device (issue 30), so a meson contraction is one GEMM of the whole 4N x 4N
/// matrices (it was 4 accumulating batched calls of 16 products) and a trace one call:
/// 2 x 1 + 2 = 4 (it was 10).
#[test]
fn a_run_reports_one_blas_call_per_meson_contraction() {
    let d = dir("gemm-calls");
    let node = |id: &str, seed: u32| {
        format!(r#"{{"id": "{id}", "spins": 16, "dims": [2, 2], "data": {{"seed": {seed}}}}}"#)
    };
    let nodes: Vec<String> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .zip(1..)
        .map(|(id, seed)| node(id, seed))
        .collect();
    let file = d.join("loops.json");
    let text = format!(
        r#"{{"format": "memhc-corr/1", "nodes": [{}],
        "graphs": [{{"id": "g0", "loops": [{{"nodes": ["a", "b", "c"]}}]}},
                   {{"id": "g1", "loops": [{{"nodes": ["d", "e", "f"]}}]}}],
        "correlators": [{{"name": "C",
            "times": [{{"source": 0, "sink": 1, "graphs": ["g0", "g1"]}}]}}]}}"#,
        nodes.join(", ")
    );
    std::fs::write(&file, text).unwrap();
    let json = d.join("records.json");
    let run = memhc()
        .arg("run")
        .arg(&file)
        .args(["--mode", "optimal", "--verify", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let records: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let r = &records[0];
    assert_eq!(r["plan"]["contractions"], 2, "{r}");
    assert_eq!(r["plan"]["traces"], 2, "{r}");
    assert_eq!(r["gemm_calls"], 4, "{r}");
    assert_eq!(r["stats"]["gemm_calls"], 4, "{r}");
    // The table's last column.
    let header = stdout.lines().next().unwrap();
    assert!(header.trim_end().ends_with("gemm_calls"), "{stdout}");
    let row = stdout.lines().find(|l| l.starts_with("lru")).unwrap();
    assert_eq!(row.split_whitespace().last(), Some("4"), "{stdout}");
}

/// `memhc run` that fails after its outputs were written (the correlators and the timeline,
/// then `--json` cannot be written) leaves none of them; with a writable `--json` it keeps all.
#[test]
fn a_failing_run_leaves_no_output_file() {
    let d = dir("no-outputs");
    let file = d.join("a1.json");
    let out = memhc()
        .args(["gen", "a1_rhopi", "--tensor-size", "2", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let values = d.join("values.csv");
    let timeline = d.join("timeline.json");
    let run = |json: &std::path::Path| {
        memhc()
            .arg("run")
            .arg(&file)
            .args(["--policy", "lru,belady", "--out"])
            .arg(&values)
            .arg("--timeline")
            .arg(&timeline)
            .arg("--json")
            .arg(json)
            .output()
            .unwrap()
    };
    let o = run(&d.join("no-such-dir/records.json"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.lines()
            .last()
            .unwrap_or("")
            .contains("no-such-dir/records.json"),
        "{err}"
    );
    // Both policies' timelines (labelled) and the values are gone.
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["a1.json"], "outputs left behind");
    let json = d.join("records.json");
    let o = run(&json);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for kept in [
        values,
        d.join("timeline-lru-optimal.json"),
        d.join("timeline-belady-optimal.json"),
        json,
    ] {
        assert!(kept.exists(), "{} was not written", kept.display());
    }
}
