//! The times a run reports besides its wall time: the process's CPU time over the same span
//! and the device's compute time from the backend's timeline. On the host backend the
//! "device" is the CPU, so both must be there, positive, and consistent with each other and
//! with the wall time.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

use memhc_core::{Mode, PolicyKind};
use memhc_host::host::HostBackend;
use memhc_workload::run::{RunSpec, peak_without_eviction, run};
use memhc_workload::{Dist, SynthParams, generate};

#[test]
fn a_run_reports_its_cpu_and_compute_time() {
    let w = generate(&SynthParams {
        tensor_size: 48,
        vector_size: 8,
        vectors: 6,
        repeat: 0.5,
        dist: Dist::Uniform,
        seed: 3,
    })
    .unwrap();
    let a = w.analyse().unwrap();
    let peak = peak_without_eviction(&w, &a).unwrap();
    let spec = RunSpec::new(PolicyKind::Lru, Mode::Optimal, peak, 2);
    let o = run(HostBackend::new(peak), &w, &a, &spec, &mut |_| {}).unwrap();

    let compute = o.device_compute_s.expect("the host backend times its work");
    assert!(compute > 0.0, "{compute}");
    // The union of the compute spans lies within the run.
    assert!(
        compute <= 1.05 * o.wall_s + 1e-3,
        "{compute} s of compute in {} s",
        o.wall_s
    );
    if cfg!(target_os = "linux") {
        let cpu = o.cpu_s.expect("Linux reports process CPU time");
        // The host backend computes on this process's threads: the CPU time covers at least
        // part of the compute (faer may use every core, so it can exceed the wall time).
        assert!(cpu > 0.0, "{cpu}");
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        assert!(
            cpu <= cores * o.wall_s + 0.05,
            "{cpu} s of CPU in {} s",
            o.wall_s
        );
    }
}
