//! The correlator functions: `run_correlators`, `plan_correlators`, `reference_correlators`
//! (and the panic self-test).

use std::path::PathBuf;

use super::args::{count, err, guard};
use super::spec::options;
use memhc_embed::{Complex64, CorrOptions, CorrResults, CorrRun, Order};
use numpy::PyArrayMethods;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Loads and plans a correlator file, the GIL released.
pub(super) fn open_corr(
    py: Python<'_>,
    path: PathBuf,
    sharing: bool,
    file_order: bool,
    vector_size: usize,
) -> PyResult<CorrRun> {
    let opts = CorrOptions {
        sharing,
        order: if file_order {
            Order::File
        } else {
            Order::Planned
        },
        vector_size,
    };
    py.detach(|| CorrRun::open(&path, &opts)).map_err(err)
}

/// `{name: (times, values)}` in file order: `times` an int64 array of shape `(n, 2)` (source,
/// sink), `values` a complex128 array of shape `(n,)`.
pub(super) fn results_dict<'py>(py: Python<'py>, r: &CorrResults) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for c in &r.correlators().correlators {
        let n = c.values.len();
        let times: Vec<i64> = c
            .values
            .iter()
            .flat_map(|v| [i64::from(v.source), i64::from(v.sink)])
            .collect();
        let times = numpy::PyArray1::from_vec(py, times).reshape([n, 2])?;
        let values: Vec<Complex64> = c.values.iter().map(|v| v.complex()).collect();
        let values = numpy::PyArray1::from_vec(py, values);
        d.set_item(&c.name, (times, values))?;
    }
    Ok(d)
}

/// The default `vector_size` of the correlator functions, as a Python int.
pub(super) fn default_vector_size(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    Ok(CorrOptions::default()
        .vector_size
        .into_pyobject(py)?
        .into_any())
}

/// run_correlators(path, backend="host", budget=None, policy="lru", mode="optimal", streams=4, sharing=True, *, file_order=False, vector_size=16, seed=0, out=None, host_memory="pageable", prefetch=None) -> dict[str, tuple[numpy.ndarray, numpy.ndarray]]
///
/// Loads and plans a correlator file, runs it on a fresh runtime of the backend named, and
/// returns the correlators.
///
/// Args:
///     path (str | os.PathLike): a ``memhc-corr/1`` JSON file (docs/correlator-format.md);
///         node data paths in it are relative to its folder.
///     backend, policy, mode, streams, seed: as for `Runtime`.
///     budget (int | str | None): as for `Runtime`, except that None means the plan's peak
///         of live bytes on the host backend (nothing is evicted; not 1 GiB) and the
///         device's free memory on a GPU.
///     sharing (bool): share identical partial products and traces across loops, graphs
///         and time pairs (default True); False reduces every loop on its own.
///     file_order (bool): run in the file's order instead of the planner's memory-aware
///         order (default False).
///     vector_size (int): at most this many contractions per vector (stage), at least 1
///         (default 16).
///     out (str | os.PathLike | None): also write the correlators there: a path ending in
///         ``.json`` (``memhc-corr-values/1``) or ``.csv`` (``correlator,source,sink,re,im``).
///         Checked before the run.
///     host_memory (str): where node data and results live on the host: ``"pageable"``
///         (default) or ``"pinned"`` (the backend's page-locked memory: node data loaded
///         straight into it, every copy one DMA). Not with mode ``"unified"``.
///     prefetch (int | None): a lookahead window in object uses (at least 1; a contraction is
///         three) within which copies are issued ahead of their use; None (default): off.
///         With ``host_memory="pinned"`` and ``prefetch=12``, the fast data path on a GPU.
///
/// Returns:
///     dict[str, tuple[numpy.ndarray, numpy.ndarray]]: ``{name: (times, values)}`` in the
///     file's order: ``times`` int64 of shape ``(n, 2)``, rows ``(source, sink)``;
///     ``values`` complex128 of shape ``(n,)``, ``values[k]`` at ``times[k]``.
///
/// Raises:
///     OSError: the file (or a node data file) cannot be read, or ``out`` cannot be written.
///     ValueError: the file is not valid (one line naming the file and the place: graph,
///         loop, node); a bad argument (unknown backend, policy or mode, an extension of
///         ``out`` other than .json or .csv, a non-positive budget, streams or vector_size).
///     MemhcError: the backend cannot open here; the budget is too small for one
///         contraction's working set; a device error.
#[pyfunction]
#[pyo3(signature = (path, backend="host", budget=None, policy="lru", mode="optimal", streams=None,
    sharing=true, *, file_order=false, vector_size=None, seed=None, out=None,
    host_memory="pageable", prefetch=None),
    text_signature = "(path, backend='host', budget=None, policy='lru', mode='optimal', streams=4, \
    sharing=True, *, file_order=False, vector_size=16, seed=0, out=None, host_memory='pageable', \
    prefetch=None)")]
#[allow(clippy::too_many_arguments)]
pub(super) fn run_correlators<'py>(
    py: Python<'py>,
    path: PathBuf,
    backend: &str,
    budget: Option<&Bound<'py, PyAny>>,
    policy: &str,
    mode: &str,
    streams: Option<&Bound<'py, PyAny>>,
    sharing: bool,
    file_order: bool,
    vector_size: Option<&Bound<'py, PyAny>>,
    seed: Option<&Bound<'py, PyAny>>,
    out: Option<PathBuf>,
    host_memory: &str,
    prefetch: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    guard("run_correlators", || {
        let window = prefetch
            .filter(|p| !p.is_none())
            .map(|p| count("prefetch", p, 1))
            .transpose()?;
        let o = options(backend, budget, policy, mode, streams, seed)?
            .with_host_memory(Some(host_memory))
            .and_then(|o| o.with_prefetch(window))
            .map_err(err)?;
        let vs = default_vector_size(py)?;
        let vector_size = count("vector_size", vector_size.unwrap_or(&vs), 1)?;
        if let Some(out) = &out {
            // A bad output path must not cost a run.
            memhc_embed::check_output_path(out).map_err(err)?;
        }
        let run = open_corr(py, path, sharing, file_order, vector_size)?;
        let results = py.detach(|| run.run(&o)).map_err(err)?;
        if let Some(out) = out {
            results.write(out).map_err(err)?;
        }
        results_dict(py, &results)
    })
}

/// plan_correlators(path, sharing=True, file_order=False, vector_size=16) -> dict[str, int | float | bool | str]
///
/// The planner's report of a correlator file, without running it.
///
/// Args:
///     path, sharing, file_order, vector_size: as for `run_correlators`.
///
/// Returns:
///     dict: ``loops`` (loops of the used graphs), ``contractions_without_sharing``,
///     ``contractions`` (what the plan runs), ``traces``, ``shared_fraction`` (float,
///     ``1 - contractions / contractions_without_sharing``), ``flops``, ``stages`` (vectors),
///     ``nodes`` and ``node_bytes`` (the initial nodes read), ``peak_bytes`` (the most bytes
///     alive at once: the smallest budget under which a run evicts nothing),
///     ``peak_bytes_other_order`` (the same in the other order), ``peak_bytes_with_pool``
///     (device bytes at the peak counting the free pool), ``sharing`` (bool), ``order``
///     (``"planned"`` or ``"file"``). Ints unless said otherwise; bytes are bytes.
///
/// Raises:
///     OSError, ValueError: as `run_correlators`.
#[pyfunction]
#[pyo3(signature = (path, sharing=true, file_order=false, vector_size=None),
    text_signature = "(path, sharing=True, file_order=False, vector_size=16)")]
pub(super) fn plan_correlators<'py>(
    py: Python<'py>,
    path: PathBuf,
    sharing: bool,
    file_order: bool,
    vector_size: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    guard("plan_correlators", || {
        let vs = default_vector_size(py)?;
        let vector_size = count("vector_size", vector_size.unwrap_or(&vs), 1)?;
        let run = open_corr(py, path, sharing, file_order, vector_size)?;
        let r = run.plan_report();
        let d = PyDict::new(py);
        for (k, v) in [
            ("loops", r.loops),
            (
                "contractions_without_sharing",
                r.contractions_without_sharing,
            ),
            ("contractions", r.contractions),
            ("traces", r.traces),
            ("flops", r.flops),
            ("stages", r.stages),
            ("nodes", r.nodes),
            ("node_bytes", r.node_bytes),
            ("peak_bytes", r.peak_bytes),
            ("peak_bytes_other_order", r.peak_bytes_other_order),
            ("peak_bytes_with_pool", r.peak_bytes_with_pool),
        ] {
            d.set_item(k, v)?;
        }
        d.set_item("shared_fraction", r.shared_fraction)?;
        d.set_item("sharing", r.sharing)?;
        d.set_item(
            "order",
            if r.order == Order::File {
                "file"
            } else {
                "planned"
            },
        )?;
        Ok(d)
    })
}

/// reference_correlators(path) -> dict[str, tuple[numpy.ndarray, numpy.ndarray]]
///
/// The correlators of a file computed by memhc's independent dense reference: every graph
/// on its own, plain products and traces on the host (no planner, no runtime). Slow for
/// large files; meant for checking.
///
/// Args:
///     path (str | os.PathLike): as for `run_correlators`.
///
/// Returns:
///     dict[str, tuple[numpy.ndarray, numpy.ndarray]]: as `run_correlators`.
///
/// Raises:
///     OSError, ValueError: as `run_correlators`.
#[pyfunction]
pub(super) fn reference_correlators<'py>(
    py: Python<'py>,
    path: PathBuf,
) -> PyResult<Bound<'py, PyDict>> {
    guard("reference_correlators", || {
        let run = open_corr(py, path, true, false, CorrOptions::default().vector_size)?;
        let results = py.detach(|| run.reference()).map_err(err)?;
        results_dict(py, &results)
    })
}

/// _panic_selftest() -> None
///
/// Not part of the API: panics inside memhc on purpose, to show (in memhc's tests) that a
/// Rust panic reaches Python as MemhcError rather than crashing or raising PanicException.
///
/// Raises:
///     MemhcError: always.
#[pyfunction]
pub(super) fn _panic_selftest() -> PyResult<()> {
    guard("_panic_selftest", || {
        let empty: Vec<u8> = Vec::new();
        // An out-of-bounds index: a panic, as a bug in memhc would raise.
        let i = empty.len() + usize::from(std::hint::black_box(1u8));
        std::hint::black_box(empty[i]);
        Ok(())
    })
}
