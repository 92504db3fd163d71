//! `--backend model`: the modelled H100 (`memhc_gpu::model`) runs the queue without data and
//! without a GPU, with the runtime's exact accounting, and its records carry the modelled
//! makespan and floor.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use common::{counts, scratch, stderr, synth};

const POINT: [&str; 10] = [
    "--tensor-size",
    "64",
    "--vector-size",
    "4",
    "--vectors",
    "3",
    "--repeat",
    "0.5",
    "--mode",
    "optimal,naive",
];

fn run(backend: &str, json: &std::path::Path) {
    let mut args = vec!["--backend", backend, "--json", json.to_str().unwrap()];
    args.extend_from_slice(&POINT);
    let o = synth(&args);
    assert!(o.status.success(), "{backend}: {}", stderr(&o));
}

fn records(path: &std::path::Path) -> Vec<serde_json::Value> {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn model_records_carry_the_makespan_and_the_floor_and_the_host_backends_counts() {
    let dir = scratch("model", "records");
    let (model, again, host) = (
        dir.join("model.json"),
        dir.join("again.json"),
        dir.join("host.json"),
    );
    run("model", &model);
    run("model", &again);
    run("host", &host);
    let m = records(&model);
    assert_eq!(m.len(), 2);
    for r in &m {
        assert_eq!(r["backend"], "model");
        let makespan = r["model_makespan_s"].as_f64().unwrap();
        let floor = r["model_floor_s"].as_f64().unwrap();
        assert!(makespan > 0.0 && floor > 0.0 && floor <= makespan, "{r}");
        // The floor covers every byte over the bus at 55 GB/s, each direction on its own.
        for bytes in ["h2d_bytes", "d2h_bytes"] {
            let bus = r[bytes].as_f64().unwrap() / 55e9;
            assert!(floor >= bus * (1.0 - 1e-9), "{bytes}: {floor} < {bus}");
        }
    }
    let (optimal, naive) = (&m[0], &m[1]);
    assert_eq!(
        (optimal["mode"].as_str(), naive["mode"].as_str()),
        (Some("optimal"), Some("naive"))
    );
    assert!(
        naive["model_makespan_s"].as_f64() > optimal["model_makespan_s"].as_f64(),
        "naive copies every input in and every output out each time: {m:?}"
    );
    // The model is deterministic: a second process models the same times.
    for (a, b) in m.iter().zip(records(&again).iter()) {
        assert_eq!(a["model_makespan_s"], b["model_makespan_s"]);
        assert_eq!(a["model_floor_s"], b["model_floor_s"]);
    }
    // The runtime's accounting is the host backend's, count for count.
    let strip = |path: &std::path::Path| {
        counts(path)
            .into_iter()
            .map(|mut r| {
                let o = r.as_object_mut().unwrap();
                for k in [
                    "backend",
                    "model_makespan_s",
                    "model_floor_s",
                    "model_setup_s",
                ] {
                    o.remove(k);
                }
                r
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&model), strip(&host));
    // Other backends' records do not carry the fields at all.
    let h = records(&host);
    assert!(
        h.iter().all(|r| r.get("model_makespan_s").is_none()),
        "{h:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn page_locked_host_memory_takes_the_staging_off_the_modelled_queue() {
    let dir = scratch("model", "pinned");
    let (pageable, pinned) = (dir.join("pageable.json"), dir.join("pinned.json"));
    for (json, memory) in [(&pageable, "pageable"), (&pinned, "pinned")] {
        let mut args = vec!["--backend", "model", "--json", json.to_str().unwrap()];
        args.extend_from_slice(&POINT[..8]);
        args.extend_from_slice(&["--mode", "optimal", "--host-memory", memory]);
        let o = synth(&args);
        assert!(o.status.success(), "{memory}: {}", stderr(&o));
    }
    let (a, b) = (&records(&pageable)[0], &records(&pinned)[0]);
    assert_eq!(
        (a["pinned"].as_bool(), b["pinned"].as_bool()),
        (Some(false), Some(true))
    );
    // The same traffic, every result read back early, and no staging on the queue: the
    // modelled makespan falls (page-locking the node memory is set-up, before the queue).
    assert_eq!(a["h2d_bytes"], b["h2d_bytes"]);
    assert_eq!(a["d2h_bytes"], b["d2h_bytes"]);
    assert_eq!(a["early_read_backs"].as_u64(), Some(0));
    assert!(b["early_read_backs"].as_u64() > Some(0), "{b}");
    let makespan = |r: &serde_json::Value| r["model_makespan_s"].as_f64().unwrap();
    assert!(makespan(b) < 0.5 * makespan(a), "{a}\n{b}");
    assert!(
        b["model_setup_s"].as_f64() > a["model_setup_s"].as_f64(),
        "{b}"
    );
    // Managed memory is read in place: pinned host memory does not apply to it.
    let o = synth(&[
        "--backend",
        "host",
        "--mode",
        "unified",
        "--host-memory",
        "pinned",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--host-memory pinned"),
        "{}",
        stderr(&o)
    );
    // The name is read by memhc-select, as `memhc run --host-memory` reads it.
    let o = synth(&["--backend", "host", "--host-memory", "locked"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--host-memory: unknown host memory 'locked'"),
        "{}",
        stderr(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_model_has_no_managed_memory() {
    let dir = scratch("model", "unified");
    let json = dir.join("r.json");
    let mut args = vec!["--backend", "model", "--json", json.to_str().unwrap()];
    args.extend_from_slice(&POINT[..8]);
    args.extend_from_slice(&["--mode", "unified"]);
    let o = synth(&args);
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("managed memory"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn memhc_model_sets_the_parameters() {
    let dir = scratch("model", "settings");
    let (default, slow) = (dir.join("default.json"), dir.join("slow.json"));
    run("model", &default);
    let mut args = vec!["--backend", "model", "--json", slow.to_str().unwrap()];
    args.extend_from_slice(&POINT);
    let o = common::synth_with(
        &args,
        &[("MEMHC_MODEL", "h2d_bandwidth=1e9,d2h_bandwidth=1e9")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for (d, s) in records(&default).iter().zip(records(&slow).iter()) {
        // A bus 55 times slower: the floor is the bus, 55 times longer.
        let (fd, fs) = (
            d["model_floor_s"].as_f64().unwrap(),
            s["model_floor_s"].as_f64().unwrap(),
        );
        assert!((fs / fd - 55.0).abs() < 1e-6, "{fd} {fs}");
        assert!(s["model_makespan_s"].as_f64() > d["model_makespan_s"].as_f64());
    }
    let o = common::synth_with(&args, &[("MEMHC_MODEL", "warp_speed=9")]);
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("warp_speed"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
