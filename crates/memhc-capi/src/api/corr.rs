//! Correlator files and their results behind handles: two process-wide registries (one of
//! loaded, planned files, one of results), each held only to look a handle up or change the
//! table, never during a run. Files and results are immutable once made and shared by
//! [`Arc`], so that calls on them from several threads run in parallel.

use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};

use memhc_embed::{Complex64, CorrOptions, CorrResults, CorrRun, Options, Order};

use crate::registry::{Kind, Registry};
use crate::status::{Failure, MemhcStatus, Outcome};
use crate::types::{
    MemhcCorr, MemhcCorrOptions, MemhcCorrPlanReport, MemhcCorrResults, MemhcCorrTime,
};

static FILES: LazyLock<Mutex<Registry<Arc<CorrRun>>>> =
    LazyLock::new(|| Mutex::new(Registry::new(Kind::Corr)));

static RESULTS: LazyLock<Mutex<Registry<Arc<CorrResults>>>> =
    LazyLock::new(|| Mutex::new(Registry::new(Kind::CorrResults)));

fn files() -> MutexGuard<'static, Registry<Arc<CorrRun>>> {
    // Changed only by whole insertions and removals: usable after a panic.
    FILES.lock().unwrap_or_else(PoisonError::into_inner)
}

fn results() -> MutexGuard<'static, Registry<Arc<CorrResults>>> {
    RESULTS.lock().unwrap_or_else(PoisonError::into_inner)
}

fn file(h: MemhcCorr) -> Outcome<Arc<CorrRun>> {
    files().get(h.handle).cloned().map_err(Failure::handle)
}

fn result(h: MemhcCorrResults) -> Outcome<Arc<CorrResults>> {
    results().get(h.handle).cloned().map_err(Failure::handle)
}

fn adopt(r: CorrResults) -> Outcome<MemhcCorrResults> {
    let handle = results()
        .insert(Arc::new(r))
        .ok_or_else(|| Failure::argument("too many live correlator results (16,777,215)"))?;
    Ok(MemhcCorrResults { handle })
}

/// The planner's options a C struct gives (a vector size of 0: 16).
pub fn corr_options(o: &MemhcCorrOptions) -> CorrOptions {
    CorrOptions {
        sharing: o.sharing != 0,
        order: if o.file_order != 0 {
            Order::File
        } else {
            Order::Planned
        },
        vector_size: if o.vector_size == 0 {
            CorrOptions::default().vector_size
        } else {
            o.vector_size
        },
    }
}

/// Loads and plans the correlator file at `path`.
pub fn open(path: &str, options: &MemhcCorrOptions) -> Outcome<MemhcCorr> {
    let run = CorrRun::open(path, &corr_options(options))?;
    let handle = files()
        .insert(Arc::new(run))
        .ok_or_else(|| Failure::argument("too many live correlator files (16,777,215)"))?;
    Ok(MemhcCorr { handle })
}

/// The planner's report.
pub fn plan_report(h: MemhcCorr) -> Outcome<MemhcCorrPlanReport> {
    let run = file(h)?;
    let r = run.plan_report();
    Ok(MemhcCorrPlanReport {
        sharing: i32::from(r.sharing),
        file_order: i32::from(r.order == Order::File),
        loops: r.loops,
        contractions_without_sharing: r.contractions_without_sharing,
        contractions: r.contractions,
        traces: r.traces,
        shared_fraction: r.shared_fraction,
        flops: r.flops,
        stages: r.stages,
        nodes: r.nodes,
        node_bytes: r.node_bytes,
        peak_bytes: r.peak_bytes,
        peak_bytes_other_order: r.peak_bytes_other_order,
        peak_bytes_with_pool: r.peak_bytes_with_pool,
    })
}

/// Runs the file on a fresh runtime as `options` say (a budget of `None`: the plan's peak on
/// the host backend, the free memory on a GPU).
pub fn run(h: MemhcCorr, options: &Options) -> Outcome<MemhcCorrResults> {
    let run = file(h)?;
    adopt(run.run(options)?)
}

/// The correlators by the independent dense reference.
pub fn reference(h: MemhcCorr) -> Outcome<MemhcCorrResults> {
    let run = file(h)?;
    adopt(run.reference()?)
}

/// The largest relative error of `r` against the reference; over 1e-12 a failure.
pub fn verify(h: MemhcCorr, r: MemhcCorrResults) -> Outcome<f64> {
    let run = file(h)?;
    let values = result(r)?;
    Ok(run.verify(&values)?)
}

/// Releases a correlator file; results made from it stay valid.
pub fn release(h: MemhcCorr) -> Outcome<()> {
    files().remove(h.handle).map(drop).map_err(Failure::handle)
}

/// The number of correlators.
pub fn count(r: MemhcCorrResults) -> Outcome<usize> {
    Ok(result(r)?.len())
}

/// The name of correlator `i`.
pub fn name(r: MemhcCorrResults, i: usize) -> Outcome<String> {
    Ok(result(r)?.name(i)?.to_owned())
}

/// The number of time pairs of correlator `i`.
pub fn len(r: MemhcCorrResults, i: usize) -> Outcome<usize> {
    Ok(result(r)?.correlator(i)?.values.len())
}

/// Copies the time pairs and values of correlator `i` into the caller's buffers (either may
/// be absent), each of exactly `n` elements.
pub fn values(
    r: MemhcCorrResults,
    i: usize,
    times: Option<&mut [MemhcCorrTime]>,
    values: Option<&mut [Complex64]>,
    n: usize,
) -> Outcome<()> {
    let all = result(r)?;
    let c = all.correlator(i)?;
    if c.values.len() != n {
        return Err(Failure::new(
            MemhcStatus::SizeMismatch,
            format!(
                "correlator {} has {} time pairs, the buffers {n}",
                c.name,
                c.values.len()
            ),
        ));
    }
    if let Some(times) = times {
        for (t, v) in times.iter_mut().zip(&c.values) {
            *t = MemhcCorrTime {
                source: v.source,
                sink: v.sink,
            };
        }
    }
    if let Some(values) = values {
        for (out, v) in values.iter_mut().zip(&c.values) {
            *out = v.complex();
        }
    }
    Ok(())
}

/// The index of the correlator called `name`.
pub fn find(r: MemhcCorrResults, name: &str) -> Outcome<usize> {
    let all = result(r)?;
    all.find(name).ok_or_else(|| {
        let known: Vec<&str> = all.names().collect();
        Failure::new(
            MemhcStatus::NotFound,
            format!(
                "no correlator named \"{}\" (there are: {})",
                name.escape_debug(),
                known.join(", ")
            ),
        )
    })
}

/// The largest relative error of `a` against `b` (infinite when their correlators or time
/// pairs differ).
pub fn compare(a: MemhcCorrResults, b: MemhcCorrResults) -> Outcome<f64> {
    let (a, b) = (result(a)?, result(b)?);
    Ok(a.max_relative_error(&b))
}

/// Writes the results to `path`, in the form its extension names.
pub fn write(r: MemhcCorrResults, path: &str) -> Outcome<()> {
    Ok(result(r)?.write(path)?)
}

/// Releases results.
pub fn results_release(r: MemhcCorrResults) -> Outcome<()> {
    results()
        .remove(r.handle)
        .map(drop)
        .map_err(Failure::handle)
}

/// Live correlator files and live results (for tests).
pub fn live() -> (usize, usize) {
    (files().len(), results().len())
}
