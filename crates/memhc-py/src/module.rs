//! The pyo3 module: `Runtime`, `Node`, `MemhcError`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use memhc_embed::hadron::{Contraction, MatrixView, SpinMapping, Term, TracePairs};
use memhc_embed::{Complex64, EmbedError, ErrorKind, ObjectId, Options, Session};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
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
        ErrorKind::InvalidArgument | ErrorKind::SizeMismatch | ErrorKind::UnknownName => {
            PyValueError::new_err(e.to_string())
        }
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
        let mut o =
            Options::from_names(Some(backend), None, Some(policy), Some(mode)).map_err(err)?;
        if let Some(b) = budget {
            o.budget = Some(match b.extract::<usize>() {
                Ok(n) => n,
                Err(_) => memhc_embed::parse_bytes(&b.extract::<String>()?).map_err(err)?,
            });
        }
        o.streams = streams;
        o.seed = seed;
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

/// memhc: a GPU memory runtime for batched complex-double hadron contractions.
#[pymodule]
#[pyo3(name = "memhc")]
fn memhc_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Runtime>()?;
    m.add_class::<Node>()?;
    m.add("MemhcError", m.py().get_type::<MemhcError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
