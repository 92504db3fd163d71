//! The cost of the event log: the synthetic default of `memhc-synth --repeat 0.5 --oversub 1.5
//! --tensor-size 32` (100 vectors of 16 meson contractions, LRU, optimal mode, 4 streams, the
//! host backend) run with the log off and on, alternately (off, on, on, off, ...) in one
//! process, `pairs` times each; prints every wall time, the medians and their ratio, and the
//! time to turn a log into a trace and a report afterwards (not part of the run).
//!
//! ```text
//! cargo run --release -p memhc-trace --example tracing_overhead -- [pairs] [tensor-size]
//! ```

use std::error::Error;
use std::time::Instant;

use memhc_core::{Mode, PolicyKind};
use memhc_host::HostBackend;
use memhc_trace::{Report, ReportOptions, chrome};
use memhc_workload::run::{RunSpec, peak_without_eviction, run, run_traced};
use memhc_workload::{SynthParams, generate};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pairs: usize = args.first().map_or(Ok(7), |s| s.parse())?;
    let n: usize = args.get(1).map_or(Ok(32), |s| s.parse())?;
    let params = SynthParams {
        tensor_size: n,
        repeat: 0.5,
        ..SynthParams::default()
    };
    let w = generate(&params)?;
    let a = w.analyse()?;
    let budget = (peak_without_eviction(&w, &a)? as f64 / 2.5).floor() as usize;
    let spec = RunSpec::new(PolicyKind::Lru, Mode::Optimal, budget, 4);
    let backend = || HostBackend::new(budget);
    // Warm up (fresh memory, thread start-up), untimed.
    run(backend(), &w, &a, &spec, &mut |_| {})?;
    let (mut off, mut on) = (Vec::new(), Vec::new());
    let mut last = None;
    for i in 0..2 * pairs {
        // off, on, on, off, off, on, ...: neither side always goes first.
        let traced = (i % 4 == 1) || (i % 4 == 2);
        if traced {
            let t = run_traced(backend(), &w, &a, &spec, &mut |_| {})?;
            on.push(t.outcome.wall_s);
            println!(
                "on   {:.4} s  ({} events)",
                t.outcome.wall_s,
                t.events.events.len()
            );
            last = Some(t);
        } else {
            let o = run(backend(), &w, &a, &spec, &mut |_| {})?;
            off.push(o.wall_s);
            println!("off  {:.4} s", o.wall_s);
        }
    }
    let (m_off, m_on) = (median(&mut off), median(&mut on));
    println!(
        "median off {m_off:.4} s, on {m_on:.4} s: on/off = {:.4} ({:+.2}%), {} runs each",
        m_on / m_off,
        (m_on / m_off - 1.0) * 100.0,
        pairs
    );
    if let Some(t) = last {
        let start = Instant::now();
        let trace = chrome::trace(&t.events, &t.timeline);
        let json = serde_json::to_vec(&trace)?;
        let traced = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let report = Report::of(&t.events, ReportOptions::default());
        let reported = start.elapsed().as_secs_f64();
        println!(
            "afterwards: trace {traced:.3} s ({} MB of JSON), report {reported:.3} s ({} findings)",
            json.len() / 1_000_000,
            report.findings.len()
        );
    }
    Ok(())
}
