//! `memhc-synth --order`: the dependency order verifies against the reference in every mode
//! and policy, fitting and oversubscribed, on pageable and page-locked host memory; its
//! records say so (the queue's leave `order` out, as before the option); the model runs it;
//! a bad order is one line with exit code 2; and `plan`, whose dry runs are the queue's,
//! refuses it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use std::path::PathBuf;

use common::{one_line_error, stderr, synth};

const SMALL: &[&str] = &["--tensor-size", "4", "--vector-size", "4", "--vectors", "6"];

fn records(path: &PathBuf) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str::<Vec<serde_json::Value>>(&text).unwrap()
}

/// Runs SMALL with `extra` and `--json`, expecting success; the records.
fn run(name: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let dir = common::scratch("order", name);
    let json = dir.join("r.json");
    let mut args = SMALL.to_vec();
    args.extend_from_slice(extra);
    args.extend(["--json", json.to_str().unwrap()]);
    let o = synth(&args);
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    records(&json)
}

fn check_verified(recs: &[serde_json::Value], order: &str) {
    for r in recs {
        assert_eq!(r["verified"], true, "{r}");
        assert!(r["max_rel_error"].as_f64().unwrap() <= 1e-12, "{r}");
        assert_eq!(r["order"].as_str().unwrap_or("queue"), order, "{r}");
    }
}

#[test]
fn the_dependency_order_verifies_in_every_mode_and_policy() {
    let common = [
        "--policy",
        "all",
        "--mode",
        "all",
        "--sweep",
        "oversub=0,1",
        "--sweep",
        "repeat=0.25,1",
        "--verify",
        "--order",
        "dependency",
    ];
    let recs = run("pageable", &common);
    assert_eq!(recs.len(), 4 * 7 * 4);
    check_verified(&recs, "dependency");
    // Oversubscribed runs evicted: the check covered eviction too.
    assert!(recs.iter().any(|r| r["evictions"].as_u64().unwrap() > 0));
    // The same flops as the queue's order.
    let queue = run(
        "pageable-queue",
        &common[..common.len() - 2]
            .iter()
            .copied()
            .chain(["--order", "queue"])
            .collect::<Vec<_>>(),
    );
    check_verified(&queue, "queue");
    for (q, d) in queue.iter().zip(&recs) {
        assert!(
            q.get("order").is_none(),
            "the default order is not written: {q}"
        );
        assert_eq!(q["flops"], d["flops"]);
        assert_eq!(q["gemm_calls"], d["gemm_calls"]);
    }
}

#[test]
fn the_dependency_order_verifies_on_the_direct_path() {
    let recs = run(
        "pinned",
        &[
            "--policy",
            "lru,pp-lru,belady",
            "--host-memory",
            "pinned",
            "--prefetch",
            "off,12",
            "--sweep",
            "oversub=0,0.5,1.5",
            "--repeat",
            "0.75",
            "--streams",
            "3",
            "--verify",
            "--order",
            "dependency",
        ],
    );
    assert_eq!(recs.len(), 3 * 3 * 2);
    check_verified(&recs, "dependency");
    for r in &recs {
        assert_eq!(r["pinned"], true);
    }
}

#[test]
fn the_model_runs_the_dependency_order() {
    let recs = run(
        "model",
        &[
            "--backend",
            "model",
            "--repeat",
            "1",
            "--host-memory",
            "pinned",
            "--prefetch",
            "12",
            "--order",
            "dependency",
        ],
    );
    assert_eq!(recs[0]["order"], "dependency");
    assert!(recs[0]["model_makespan_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_bad_order_is_refused_and_plan_refuses_the_dependency_order() {
    let mut args = SMALL.to_vec();
    args.extend(["--order", "fifo"]);
    one_line_error(
        &synth(&args),
        2,
        "--order: unknown order 'fifo'",
        "bad order",
    );
    let mut args = vec!["plan"];
    args.extend_from_slice(SMALL);
    args.extend(["--order", "dependency"]);
    one_line_error(&synth(&args), 2, "--order dependency", "plan");
    // The queue's order is the plan's own.
    let mut args = vec!["plan"];
    args.extend_from_slice(SMALL);
    args.extend(["--order", "queue"]);
    let o = synth(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}
