//! Why does pre-protected LRU help or not? A probe of the eviction policies on the synthetic
//! workload, used by `docs/policies.md`.
//!
//! It generates the workload as `memhc-synth` does and replays it through each policy in
//! [`memhc_workload::eviction_model`], an exact model of the runtime's eviction for equal-sized
//! objects; each line also runs the real runtime dry (null backend) at the same budget and
//! says `same` when its misses and evictions agree with the model's (else it prints the
//! runtime's). Columns:
//!
//! * `slots`: the budget in objects; `vecs`: that many vectors' worth of new objects;
//! * `misses`, `x_comp` (misses over the compulsory misses, one per distinct object), `evict`;
//! * `near`: the share of evictions that took an object the current vector still had to use
//!   (the redundant evictions of the MemHC paper's Fig. 6, which pre-protection is for);
//! * `dead`: the share of evictions that took a result (never used again, read at the end);
//! * `rank`: at each victim selection, where the least recently used of the vector's
//!   still-pending resident inputs sat, counted from the LRU end: 0 (LRU's victim itself),
//!   1-3, 4-15, 16 or more, or none resident.
//!
//! The header line gives how far back (in vectors) each repeated input's previous use was.
//!
//! ```text
//! cargo run --release -p memhc-workload --example policy_probe -- \
//!     --dist recent:1 --vector-size 8 --repeat 0.5 --slots 16,24,64 --oversub 0.5
//! ```
//!
//! Every flag is optional: `--tensor-size N` (8; it changes no count), `--vector-size V`
//! (8), `--vectors K` (100), `--repeat r` (0.5), `--dist D` (uniform), `--seed S` (1),
//! `--policy LIST` (lru,pp-lru,car,clock-pro,belady), and budgets as `--slots LIST` or
//! `--oversub LIST` (`peak / (1 + O)`, as `memhc-synth --oversub` sets it; the default).

use std::error::Error;

use memhc_core::{Mode, PolicyKind};
use memhc_host::null::NullBackend;
use memhc_workload::eviction_model::{UseTrace, replay_model};
use memhc_workload::run::{RunSpec, peak_without_eviction, run};
use memhc_workload::{Dist, SynthParams, generate};

type Res<T> = Result<T, Box<dyn Error>>;

fn list<T: std::str::FromStr>(s: &str) -> Res<Vec<T>>
where
    T::Err: Error + 'static,
{
    s.split(',')
        .map(|x| Ok(x.trim().parse::<T>()?))
        .collect::<Res<_>>()
}

fn pct(part: u64, whole: u64) -> String {
    format!("{:.0}%", 100.0 * part as f64 / whole.max(1) as f64)
}

fn main() -> Res<()> {
    let mut p = SynthParams {
        tensor_size: 8,
        vector_size: 8,
        ..SynthParams::default()
    };
    let mut policies: Vec<PolicyKind> = list("lru,pp-lru,car,clock-pro,belady")?;
    let (mut slots, mut oversub): (Vec<usize>, Vec<f64>) = (Vec::new(), Vec::new());
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let [flag, value] = pair else {
            return Err(format!("{} needs a value", pair[0]).into());
        };
        match flag.as_str() {
            "--tensor-size" => p.tensor_size = value.parse()?,
            "--vector-size" => p.vector_size = value.parse()?,
            "--vectors" => p.vectors = value.parse()?,
            "--repeat" => p.repeat = value.parse()?,
            "--seed" => p.seed = value.parse()?,
            "--dist" => p.dist = value.parse::<Dist>()?,
            "--policy" => policies = list(value)?,
            "--slots" => slots = list(value)?,
            "--oversub" => oversub = list(value)?,
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    if slots.is_empty() && oversub.is_empty() {
        oversub.push(0.5);
    }
    let w = generate(&p)?;
    let a = w.analyse()?;
    let t = UseTrace::new(&w)?;
    let object = 16 * p.tensor_size * p.tensor_size * 16;
    let peak = peak_without_eviction(&w, &a)?;
    let mut budgets: Vec<(String, usize)> = slots.iter().map(|&s| (String::new(), s)).collect();
    for o in oversub {
        let budget = (peak as f64 / (1.0 + o)) as usize;
        budgets.push((format!(" (oversub {o})"), budget / object));
    }
    let compulsory = t.compulsory();
    let new_per_vector = compulsory as f64 / p.vectors.max(1) as f64;
    let g = t.reuse_gaps();
    let gaps: u64 = g.iter().sum();
    println!(
        "dist {} repeat {} V {} vectors {}: {compulsory} objects ({new_per_vector:.1} new per \
         vector), peak without eviction {} objects; previous use of a repeated input 1 vector \
         back: {}, 2-4: {}, 5-16: {}, 17-64: {}, more: {}",
        p.dist,
        p.repeat,
        p.vector_size,
        p.vectors,
        peak / object,
        pct(g[0], gaps),
        pct(g[1], gaps),
        pct(g[2], gaps),
        pct(g[3], gaps),
        pct(g[4], gaps),
    );
    println!(
        "{:>5} {:>5} {:<9} {:>6} {:>6} {:>6} {:>9} {:>5} {:>5}  rank: 0 / 1-3 / 4-15 / 16+ / none",
        "slots", "vecs", "policy", "misses", "x_comp", "evict", "runtime", "near", "dead"
    );
    for (label, s) in budgets {
        for &kind in &policies {
            let m = replay_model(&t, kind.build(0).as_mut(), s)?;
            let spec = RunSpec::new(kind, Mode::Optimal, s * object, 4);
            let real = run(NullBackend::new(s * object), &w, &a, &spec, &mut |_| {})?.stats;
            let agrees = (real.misses, real.evictions) == (m.misses, m.evictions());
            let r = m.pending_rank;
            let sel: u64 = r.iter().sum();
            println!(
                "{s:>5} {:>5.1} {:<9} {:>6} {:>6.3} {:>6} {:>9} {:>5} {:>5}  {} / {} / {} / {} / {}{label}",
                s as f64 / new_per_vector,
                kind.name(),
                m.misses,
                m.misses as f64 / compulsory as f64,
                m.evictions(),
                if agrees {
                    "same".to_string()
                } else {
                    format!("{}/{}", real.misses, real.evictions)
                },
                pct(m.near, m.evictions()),
                pct(m.dead, m.evictions()),
                pct(r[0], sel),
                pct(r[1], sel),
                pct(r[2], sel),
                pct(r[3], sel),
                pct(r[4], sel),
            );
        }
    }
    Ok(())
}
