//! The pyo3 module: `Runtime`, `Node`, `MemhcError`, and the correlator functions
//! `run_correlators`, `plan_correlators`, `reference_correlators`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use memhc_embed::hadron::{Contraction, MatrixView, SpinMapping, Term, TracePairs};
use memhc_embed::{
    Complex64, CorrOptions, CorrResults, CorrRun, EmbedError, ErrorKind, ObjectId, Options, Order,
    Session,
};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

pyo3::create_exception!(
    memhc,
    MemhcError,
    PyRuntimeError,
    "A memhc failure that is not a bad argument: a stale node, a backend that cannot run here, \
     a working set that does not fit the device budget, a device error."
);

fn err(e: EmbedError) -> PyErr {
    match e.kind() {
        ErrorKind::InvalidArgument
        | ErrorKind::SizeMismatch
        | ErrorKind::UnknownName
        | ErrorKind::InvalidFile => PyValueError::new_err(e.to_string()),
        ErrorKind::Io => PyOSError::new_err(e.to_string()),
        _ => MemhcError::new_err(e.to_string()),
    }
}

/// Numbers runtimes, so that a node used with a runtime it does not belong to is refused.
static NEXT_RUNTIME: AtomicU64 = AtomicU64::new(1);

/// A hadron node of one runtime: its values stay in the runtime (on the device when in use)
/// until `Runtime.read`. Holding a Node keeps nothing alive; `Runtime.release` frees it.
#[pyclass(module = "memhc", frozen)]
struct Node {
    runtime: u64,
    id: ObjectId,
    /// `(spins, d0, d1, ...)`.
    #[pyo3(get)]
    shape: Vec<usize>,
}

#[pymethods]
impl Node {
    fn __repr__(&self) -> String {
        format!("memhc.Node(id={}, shape={:?})", self.id.index(), self.shape)
    }
}

/// A memhc runtime on one backend. See the module documentation.
#[pyclass(module = "memhc")]
struct Runtime {
    serial: u64,
    session: Mutex<Session>,
}

/// A spin mapping: `"meson4x4"`, or a list of `(out, a, b)` terms.
fn mapping(spec: &Bound<'_, PyAny>, out_spins: Option<usize>) -> PyResult<Arc<SpinMapping>> {
    if let Ok(name) = spec.extract::<String>() {
        return match name.as_str() {
            "meson4x4" => Ok(Arc::new(SpinMapping::meson4x4())),
            other => Err(PyValueError::new_err(format!(
                "unknown mapping '{other}': give \"meson4x4\" or a list of (out, a, b) terms"
            ))),
        };
    }
    let terms: Vec<(usize, usize, usize)> = spec.extract()?;
    let terms = terms
        .into_iter()
        .map(|(o, a, b)| Term::new(o, a, b))
        .collect();
    let m = match out_spins {
        Some(s) => SpinMapping::new(s, terms),
        None => SpinMapping::from_terms(terms),
    };
    m.map(Arc::new).map_err(|e| err(e.into()))
}

/// Runtime options from the keywords `Runtime` and `run_correlators` share; `budget` is bytes
/// (an int), a string such as `"8G"`, or `None`.
fn options(
    backend: &str,
    budget: Option<&Bound<'_, PyAny>>,
    policy: &str,
    mode: &str,
    streams: usize,
    seed: u64,
) -> PyResult<Options> {
    let mut o = Options::from_names(Some(backend), None, Some(policy), Some(mode)).map_err(err)?;
    if let Some(b) = budget {
        o.budget = Some(match b.extract::<usize>() {
            Ok(n) => n,
            Err(_) => memhc_embed::parse_bytes(&b.extract::<String>()?).map_err(err)?,
        });
    }
    o.streams = streams;
    o.seed = seed;
    Ok(o)
}

impl Runtime {
    fn session(&self) -> PyResult<std::sync::MutexGuard<'_, Session>> {
        self.session.lock().map_err(|_| {
            MemhcError::new_err("this runtime failed internally earlier; make a new one")
        })
    }

    fn id(&self, node: &Node) -> PyResult<ObjectId> {
        if node.runtime != self.serial {
            return Err(PyValueError::new_err(format!(
                "{} belongs to another runtime",
                node.__repr__()
            )));
        }
        Ok(node.id)
    }

    fn node(&self, session: &Session, id: ObjectId) -> PyResult<Node> {
        let s = session.shape(id).map_err(err)?;
        Ok(Node {
            runtime: self.serial,
            id,
            shape: s.array_shape(),
        })
    }
}

#[pymethods]
impl Runtime {
    /// `Runtime(backend="host", budget=None, policy="lru", mode="optimal", streams=4, seed=0)`:
    /// `budget` is bytes (an int) or a string such as `"8G"`; `None` means the device's free
    /// memory on a GPU and 1 GiB on the host backend.
    #[new]
    #[pyo3(signature = (backend="host", budget=None, policy="lru", mode="optimal", streams=4, seed=0))]
    fn new(
        backend: &str,
        budget: Option<&Bound<'_, PyAny>>,
        policy: &str,
        mode: &str,
        streams: usize,
        seed: u64,
    ) -> PyResult<Self> {
        let o = options(backend, budget, policy, mode, streams, seed)?;
        let session = Session::open(&o).map_err(err)?;
        Ok(Runtime {
            serial: NEXT_RUNTIME.fetch_add(1, Ordering::Relaxed),
            session: Mutex::new(session),
        })
    }

    /// Registers a node from an array of shape `(spins, d0, ...)` (converted to C-ordered
    /// complex128 and copied).
    fn register(&self, py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<Node> {
        let np = py.import("numpy")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("dtype", np.getattr("complex128")?)?;
        let arr = np.call_method("ascontiguousarray", (array,), Some(&kwargs))?;
        let arr = arr.cast_into::<PyArrayDyn<Complex64>>()?;
        let shape = arr.shape().to_vec();
        let Some((&spins, dims)) = shape.split_first() else {
            return Err(PyValueError::new_err(
                "a node needs an array of shape (spins, d0, ...)",
            ));
        };
        let data = arr.readonly().as_slice()?.to_vec();
        let mut s = self.session()?;
        let id = s.register(spins, dims, data).map_err(err)?;
        self.node(&s, id)
    }

    /// `out[o] += A[a] @ B[b]` for every term of `mapping` (`"meson4x4"` or a list of
    /// `(out, a, b)`), into a new node that stays in the runtime until read. `a_split` and
    /// `b_split`: leading dimensions of a component forming the matrix rows (baryons).
    #[pyo3(signature = (a, b, mapping=None, out_spins=None, stream=0, a_split=1, b_split=1))]
    #[allow(clippy::too_many_arguments)]
    fn contract(
        &self,
        py: Python<'_>,
        a: &Node,
        b: &Node,
        mapping: Option<&Bound<'_, PyAny>>,
        out_spins: Option<usize>,
        stream: usize,
        a_split: usize,
        b_split: usize,
    ) -> PyResult<Node> {
        let m = match mapping {
            Some(spec) => self::mapping(spec, out_spins)?,
            None => Arc::new(SpinMapping::meson4x4()),
        };
        let c = Contraction::new(self.id(a)?, self.id(b)?, m)
            .with_views(MatrixView::split(a_split), MatrixView::split(b_split));
        let mut s = self.session()?;
        let id = {
            let session: &mut Session = &mut s;
            py.detach(|| session.contract(stream, &c))
        }
        .map_err(err)?;
        self.node(&s, id)
    }

    /// Runs a vector of independent contractions `[(a, b, mapping), ...]` concurrently, one
    /// stream each in turn; returns the new nodes in order.
    fn run_vector(&self, py: Python<'_>, vector: &Bound<'_, PyList>) -> PyResult<Vec<Node>> {
        let mut cs = Vec::with_capacity(vector.len());
        for item in vector.iter() {
            let (a, b, m): (PyRef<'_, Node>, PyRef<'_, Node>, Bound<'_, PyAny>) = item.extract()?;
            cs.push(Contraction::new(
                self.id(&a)?,
                self.id(&b)?,
                mapping(&m, None)?,
            ));
        }
        let mut s = self.session()?;
        let ids = {
            let session: &mut Session = &mut s;
            py.detach(|| session.run_vector(&cs))
        }
        .map_err(err)?;
        ids.into_iter().map(|id| self.node(&s, id)).collect()
    }

    /// `sum over (a, b) in pairs of trace(A[a] @ B[b])`; `pairs` is `"meson4x4"` (the full
    /// spin trace of two mesons) or a list of `(a, b)`.
    #[pyo3(signature = (a, b, pairs=None, stream=0))]
    fn trace(
        &self,
        py: Python<'_>,
        a: &Node,
        b: &Node,
        pairs: Option<&Bound<'_, PyAny>>,
        stream: usize,
    ) -> PyResult<Complex64> {
        let Some(pairs) = pairs else {
            let (a, b) = (self.id(a)?, self.id(b)?);
            let mut s = self.session()?;
            let session: &mut Session = &mut s;
            return py
                .detach(|| session.trace(stream, a, b, &TracePairs::meson4x4()))
                .map_err(err);
        };
        let pairs = match pairs.extract::<String>() {
            Ok(name) if name == "meson4x4" => TracePairs::meson4x4(),
            Ok(other) => {
                return Err(PyValueError::new_err(format!(
                    "unknown pairs '{other}': give \"meson4x4\" or a list of (a, b)"
                )));
            }
            Err(_) => TracePairs::new(pairs.extract()?).map_err(|e| err(e.into()))?,
        };
        let (a, b) = (self.id(a)?, self.id(b)?);
        let mut s = self.session()?;
        {
            let session: &mut Session = &mut s;
            py.detach(|| session.trace(stream, a, b, &pairs))
        }
        .map_err(err)
    }

    /// The node's values as a new complex128 array of its shape.
    fn read<'py>(
        &self,
        py: Python<'py>,
        node: &Node,
    ) -> PyResult<Bound<'py, PyArrayDyn<Complex64>>> {
        let id = self.id(node)?;
        let mut s = self.session()?;
        let mut values = vec![Complex64::default(); s.elements(id).map_err(err)?];
        {
            let session: &mut Session = &mut s;
            py.detach(|| session.read_into(id, &mut values))
        }
        .map_err(err)?;
        numpy::PyArray1::from_vec(py, values).reshape(node.shape.clone())
    }

    /// Releases a node; using it afterwards raises `MemhcError`.
    fn release(&self, node: &Node) -> PyResult<()> {
        let id = self.id(node)?;
        self.session()?.release(id).map_err(err)
    }

    /// The statistics, under the metric names of memhc's reports.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let st = self.session()?.stats();
        let d = PyDict::new(py);
        for (k, v) in [
            ("allocations", st.allocations),
            ("frees", st.frees),
            ("pool_reuses", st.pool_reuses),
            ("handovers", st.handovers),
            ("hits", st.hits),
            ("misses", st.misses),
            ("evictions", st.evictions),
            ("writebacks", st.writebacks),
            ("h2d_bytes", st.h2d_bytes),
            ("d2h_bytes", st.d2h_bytes),
            ("peak_device_bytes", st.peak_device_bytes),
            ("flops", st.flops),
            ("gemm_calls", st.gemm_calls),
        ] {
            d.set_item(k, v)?;
        }
        d.set_item("hit_rate", st.hit_rate)?;
        Ok(d)
    }

    /// Checks every invariant of the runtime's tables; raises `MemhcError` if one is broken.
    fn audit(&self) -> PyResult<()> {
        self.session()?.audit().map_err(err)
    }

    /// The device budget in bytes.
    #[getter]
    fn budget(&self) -> PyResult<usize> {
        Ok(self.session()?.budget())
    }

    /// The backend's description.
    #[getter]
    fn backend(&self) -> PyResult<String> {
        Ok(self.session()?.backend_name().to_owned())
    }
}

/// Loads and plans a correlator file, the GIL released.
fn open_corr(
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
fn results_dict<'py>(py: Python<'py>, r: &CorrResults) -> PyResult<Bound<'py, PyDict>> {
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

/// `run_correlators(path, backend="host", budget=None, policy="lru", mode="optimal",
/// streams=4, sharing=True, *, file_order=False, vector_size=16, seed=0, out=None)`: loads
/// and plans the correlator file at `path` (`memhc-corr/1`, docs/correlator-format.md), runs
/// it on a fresh runtime of the backend named, and returns `{name: (times, values)}` in file
/// order: `times` an int64 array of shape `(n, 2)` of `(source, sink)`, `values` a complex128
/// array of shape `(n,)`. `budget=None` is the plan's peak of live bytes on the host backend
/// (nothing is evicted) and the device's free memory on a GPU. `out` (a path ending in
/// `.json` or `.csv`) also writes the correlators there. A file that cannot be read raises
/// `OSError`, an invalid one `ValueError` (one line naming the file and the place).
#[pyfunction]
#[pyo3(signature = (path, backend="host", budget=None, policy="lru", mode="optimal", streams=4,
    sharing=true, *, file_order=false, vector_size=16, seed=0, out=None))]
#[allow(clippy::too_many_arguments)]
fn run_correlators<'py>(
    py: Python<'py>,
    path: PathBuf,
    backend: &str,
    budget: Option<&Bound<'py, PyAny>>,
    policy: &str,
    mode: &str,
    streams: usize,
    sharing: bool,
    file_order: bool,
    vector_size: usize,
    seed: u64,
    out: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let o = options(backend, budget, policy, mode, streams, seed)?;
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
}

/// `plan_correlators(path, sharing=True, file_order=False, vector_size=16)`: the planner's
/// report of a correlator file, as a dict: `contractions_without_sharing`, `contractions`,
/// `traces`, `shared_fraction`, `flops`, `stages`, `nodes`, `node_bytes`, `peak_bytes` (the
/// smallest budget under which a run evicts nothing), `peak_bytes_other_order`,
/// `peak_bytes_with_pool`, `loops`, `sharing`, `order`.
#[pyfunction]
#[pyo3(signature = (path, sharing=true, file_order=false, vector_size=16))]
fn plan_correlators<'py>(
    py: Python<'py>,
    path: PathBuf,
    sharing: bool,
    file_order: bool,
    vector_size: usize,
) -> PyResult<Bound<'py, PyDict>> {
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
}

/// `reference_correlators(path)`: the correlators of a file computed by memhc's independent
/// dense reference (every graph on its own, plain products and traces on the host; no planner,
/// no runtime), in the form `run_correlators` returns.
#[pyfunction]
fn reference_correlators<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let run = open_corr(py, path, true, false, CorrOptions::default().vector_size)?;
    let results = py.detach(|| run.reference()).map_err(err)?;
    results_dict(py, &results)
}

/// memhc: a GPU memory runtime for batched complex-double hadron contractions.
#[pymodule]
#[pyo3(name = "memhc")]
fn memhc_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Runtime>()?;
    m.add_class::<Node>()?;
    m.add_function(wrap_pyfunction!(run_correlators, m)?)?;
    m.add_function(wrap_pyfunction!(plan_correlators, m)?)?;
    m.add_function(wrap_pyfunction!(reference_correlators, m)?)?;
    m.add("MemhcError", m.py().get_type::<MemhcError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
