//! The pyo3 module: `Runtime`, `Node`, `MemhcError`, and the correlator functions
//! `run_correlators`, `plan_correlators`, `reference_correlators`.
//!
//! Every method and function body runs inside [`guard`], which turns a Rust panic (a bug in
//! memhc) into `MemhcError` instead of pyo3's `PanicException`. Integer arguments arrive as
//! Python objects and are converted by [`count`] and [`index`], so that a negative, too large
//! or non-integer value is a `ValueError` naming the argument rather than pyo3's
//! `OverflowError` or `TypeError`. The docstrings below are what `help()` shows; keep them
//! and `python/memhc.pyi` in step.

use std::panic::{AssertUnwindSafe, catch_unwind};
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
use pyo3::types::{PyBool, PyDict, PyList, PyString, PyTuple};

pyo3::create_exception!(
    memhc,
    MemhcError,
    PyRuntimeError,
    "A memhc failure that is not a bad argument: a released node, a backend that cannot run \
     here (no GPU, driver or library: the message says which), a working set that does not \
     fit the device budget, a device error, or an internal error of memhc (a bug, reported \
     instead of crashing). A subclass of RuntimeError."
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

/// Runs a method's body, turning a Rust panic (a bug in memhc) into `MemhcError`.
fn guard<T>(what: &str, body: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => result,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".to_owned());
            Err(MemhcError::new_err(format!(
                "internal error in memhc during {what} (a bug; please report it): {msg}"
            )))
        }
    }
}

/// A Python int in `min..=max`, or `ValueError` naming the argument.
fn int_in(name: &str, value: &Bound<'_, PyAny>, min: u64, max: u64) -> PyResult<u64> {
    let bad = || {
        let shown = value
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "?".to_owned());
        PyValueError::new_err(format!(
            "{name} must be an int from {min} to {max}, got {shown}"
        ))
    };
    if value.is_instance_of::<PyBool>() {
        return Err(bad());
    }
    // `__index__` (int, numpy integers), then range; anything else is refused the same way.
    let n: i128 = value.extract().map_err(|_| bad())?;
    if n < i128::from(min) || n > i128::from(max) {
        return Err(bad());
    }
    u64::try_from(n).map_err(|_| bad())
}

/// A count or index argument: a Python int from `min` to the largest `usize`.
fn count(name: &str, value: &Bound<'_, PyAny>, min: usize) -> PyResult<usize> {
    let n = int_in(name, value, min as u64, usize::MAX as u64)?;
    usize::try_from(n).map_err(|_| PyValueError::new_err(format!("{name} is too large")))
}

/// An optional count argument (`None` stays `None`).
fn opt_count(name: &str, value: Option<&Bound<'_, PyAny>>, min: usize) -> PyResult<Option<usize>> {
    match value {
        Some(v) if !v.is_none() => count(name, v, min).map(Some),
        _ => Ok(None),
    }
}

/// A list of integer tuples of length `N` (terms, pairs), or `ValueError` naming the argument.
fn tuples<const N: usize>(
    name: &str,
    what: &str,
    spec: &Bound<'_, PyAny>,
) -> PyResult<Vec<[usize; N]>> {
    let bad = |detail: String| {
        PyValueError::new_err(format!(
            "{name} must be a list of {what} tuples of non-negative ints: {detail}"
        ))
    };
    if spec.is_instance_of::<PyString>() {
        return Err(bad(format!("got the string {spec}")));
    }
    let mut out = Vec::new();
    for item in spec.try_iter().map_err(|e| bad(e.to_string()))? {
        let item = item?;
        let parts: Vec<Bound<'_, PyAny>> = item.extract().map_err(|_| bad(format!("{item}")))?;
        if parts.len() != N {
            return Err(bad(format!("{item} has {} entries, not {N}", parts.len())));
        }
        let mut t = [0usize; N];
        for (slot, p) in t.iter_mut().zip(&parts) {
            *slot = count(name, p, 0)?;
        }
        out.push(t);
    }
    Ok(out)
}

/// Numbers runtimes, so that a node used with a runtime it does not belong to is refused.
static NEXT_RUNTIME: AtomicU64 = AtomicU64::new(1);

/// A hadron node of one Runtime: a handle, not the data.
///
/// Nodes come from `Runtime.register`, `Runtime.contract` and `Runtime.run_vector`. The
/// values stay in the runtime (on the device once a contraction used them) until
/// `Runtime.read` copies them out; passing a Node around never copies data. A Node belongs to
/// the runtime that made it: using it with another raises ValueError. Holding a Node keeps
/// nothing alive: `Runtime.release(node)` frees it, after which using it raises MemhcError.
///
/// Attributes:
///     shape (tuple[int, ...]): ``(spins, d0, d1, ...)``, the shape of the array
///         `Runtime.read` returns.
#[pyclass(module = "memhc", frozen)]
struct Node {
    runtime: u64,
    id: ObjectId,
    shape: Vec<usize>,
}

#[pymethods]
impl Node {
    /// ``(spins, d0, d1, ...)``: spin components first, then the dimensions of one component
    /// (a meson: ``(16, N, N)``; a baryon: ``(S, N, N, N)``). A tuple of ints.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.shape)
    }

    fn __repr__(&self) -> String {
        let dims: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
        let comma = if dims.len() == 1 { "," } else { "" };
        format!(
            "memhc.Node(id={}, shape=({}{comma}))",
            self.id.index(),
            dims.join(", ")
        )
    }
}

/// A memhc runtime: one device budget on one backend, with its nodes.
///
/// ``Runtime(backend="host", budget=None, policy="lru", mode="optimal", streams=4, seed=0)``
///
/// Args:
///     backend (str): ``"host"`` (the CPU reference backend: host memory plays a device of
///         ``budget`` bytes), ``"cuda"`` (NVIDIA) or ``"rocm"`` (AMD). GPU libraries are
///         loaded when the runtime opens, so every build has all three; without a GPU,
///         driver or library the constructor raises MemhcError saying which.
///     budget (int | str | None): the device bytes the runtime may hold, as an int (bytes,
///         at least 1) or a string of digits with an optional K, M, G or T suffix (powers of
///         1024: ``"8G"``, ``"512MiB"``). ``None`` (default): 1 GiB on the host backend; the
///         device's free memory (minus a margin) on a GPU. When the nodes one contraction
///         needs do not fit, the contraction raises MemhcError; otherwise other nodes are
///         evicted (device-only results are written back to host memory first, never lost).
///     policy (str): eviction policy, ``"lru"`` (default), ``"pp-lru"``, ``"random"``,
///         ``"mru"``, ``"car"``, ``"clock-pro"`` or ``"belady"``.
///     mode (str): ``"optimal"`` (default: all of MemHC), ``"naive"``, ``"reorg"``,
///         ``"reorg-sync"``, or ``"unified"`` (managed memory, GPU backends only): the
///         paper's baselines.
///     streams (int): streams contractions are spread over, at least 1 (default 4). The
///         ``stream`` argument of `contract` and `trace` is below this.
///     seed (int): seed of the ``"random"`` policy, 0 to 2**64 - 1 (default 0); runs with the
///         same seed evict the same nodes.
///
/// Raises:
///     ValueError: an unknown backend, policy or mode; a budget that is not a positive
///         number of bytes; streams below 1; a negative or non-integer seed.
///     MemhcError: the backend cannot open here (the message says why).
///
/// Methods: register, contract, run_vector, trace, read, release, stats, audit; attributes
/// budget, backend, streams. A runtime is safe to use from several Python threads (calls
/// serialise; contractions and reads release the GIL while they run).
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
    let terms = tuples::<3>("mapping", "(out, a, b)", spec)?
        .into_iter()
        .map(|[o, a, b]| Term::new(o, a, b))
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
    streams: &Bound<'_, PyAny>,
    seed: &Bound<'_, PyAny>,
) -> PyResult<Options> {
    let mut o = Options::from_names(Some(backend), None, Some(policy), Some(mode)).map_err(err)?;
    if let Some(b) = budget.filter(|b| !b.is_none()) {
        o.budget = Some(if b.is_instance_of::<PyString>() {
            memhc_embed::parse_bytes(&b.extract::<String>()?).map_err(err)?
        } else {
            count("budget", b, 1).map_err(|_| {
                PyValueError::new_err(format!(
                    "budget must be a positive number of bytes (an int, or a string such as \
                     \"8G\") or None, got {}",
                    b.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })?
        });
    }
    o.streams = count("streams", streams, 1)?;
    o.seed = int_in("seed", seed, 0, u64::MAX)?;
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
    #[new]
    #[pyo3(signature = (backend="host", budget=None, policy="lru", mode="optimal", streams=None, seed=None),
        text_signature = "(backend='host', budget=None, policy='lru', mode='optimal', streams=4, seed=0)")]
    fn new(
        py: Python<'_>,
        backend: &str,
        budget: Option<&Bound<'_, PyAny>>,
        policy: &str,
        mode: &str,
        streams: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        guard("Runtime()", || {
            let four = 4usize.into_pyobject(py)?.into_any();
            let zero = 0usize.into_pyobject(py)?.into_any();
            let o = options(
                backend,
                budget,
                policy,
                mode,
                streams.unwrap_or(&four),
                seed.unwrap_or(&zero),
            )?;
            let session = py.detach(|| Session::open(&o)).map_err(err)?;
            Ok(Runtime {
                serial: NEXT_RUNTIME.fetch_add(1, Ordering::Relaxed),
                session: Mutex::new(session),
            })
        })
    }

    /// register(array) -> Node
    ///
    /// Registers a hadron node from its values.
    ///
    /// Args:
    ///     array (numpy.ndarray or array-like): shape ``(spins, d0, d1, ...)``: spin
    ///         components first, then 1 to 8 dimensions of one component, none 0 (a meson:
    ///         ``(16, N, N)``). Converted to C-ordered complex128 first if it is not already
    ///         (real and Fortran-ordered arrays are accepted).
    ///
    /// Returns:
    ///     Node: a handle whose ``shape`` is ``array.shape``.
    ///
    /// The values are copied once into the runtime, which owns its host copy (eviction
    /// writes results back into such copies), so changing ``array`` afterwards changes
    /// nothing. Nothing goes to the device until a contraction needs it.
    ///
    /// Raises:
    ///     ValueError: fewer than 2 or more than 9 axes, a zero-length axis, or values that
    ///         do not convert to complex128.
    ///     MemhcError: the runtime failed internally.
    fn register(&self, py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<Node> {
        guard("Runtime.register", || {
            let np = py.import("numpy")?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("dtype", np.getattr("complex128")?)?;
            let arr = np
                .call_method("ascontiguousarray", (array,), Some(&kwargs))
                .map_err(|e| {
                    PyValueError::new_err(format!(
                        "register needs an array of complex numbers: {e}"
                    ))
                })?;
            let arr = arr.cast_into::<PyArrayDyn<Complex64>>()?;
            let shape = arr.shape().to_vec();
            let Some((&spins, dims)) = shape.split_first() else {
                return Err(PyValueError::new_err(
                    "a node needs an array of shape (spins, d0, ...), got a 0-d array",
                ));
            };
            let data = arr.readonly().as_slice()?.to_vec();
            let mut s = self.session()?;
            let id = s.register(spins, dims, data).map_err(err)?;
            self.node(&s, id)
        })
    }

    /// contract(a, b, mapping="meson4x4", out_spins=None, stream=0, a_split=1, b_split=1) -> Node
    ///
    /// Contracts two nodes: ``out[o] += A[i] @ B[j]`` for every term ``(o, i, j)`` of
    /// ``mapping``, each spin component seen as a matrix, into a new node.
    ///
    /// Args:
    ///     a (Node): the left input, of this runtime.
    ///     b (Node): the right input (may be ``a``).
    ///     mapping (str | list[tuple[int, int, int]] | None): ``"meson4x4"`` (default, also
    ///         for None: the 4x4 spin-block product of two full-spin mesons, spin
    ///         ``s = 4 alpha + beta``: 16 outputs of 4 terms) or a list of ``(out, a, b)``
    ///         spin-index terms, accumulated in the order given, none twice.
    ///     out_spins (int | None): output spins of a term list (None: the largest ``out``
    ///         plus 1; spins no term writes are zero). Ignored for ``"meson4x4"``.
    ///     stream (int): the stream to run on, ``0 <= stream < runtime.streams``.
    ///     a_split (int): leading dimensions of A's components forming the matrix rows
    ///         (default 1: a ``(N, N)`` component is ``N x N``; a baryon ``(N, N, N)`` is
    ///         ``N x N**2`` with 1, ``N**2 x N`` with 2).
    ///     b_split (int): the same for B.
    ///
    /// Returns:
    ///     Node: the result, of shape ``(out_spins, m, n)`` (rows of A by columns of B),
    ///     which stays in the runtime (on the device) until `read`: no copy to the host.
    ///
    /// Raises:
    ///     ValueError: an unknown mapping name, a malformed or duplicate term, a spin index
    ///         out of range, components whose matrices do not multiply, a stream or split out
    ///         of range, a node of another runtime.
    ///     MemhcError: a released node; the inputs and the output do not fit in the budget
    ///         together; an output larger than the host memory available; a device error.
    #[pyo3(signature = (a, b, mapping=None, out_spins=None, stream=None, a_split=None, b_split=None),
        text_signature = "($self, a, b, mapping='meson4x4', out_spins=None, stream=0, a_split=1, b_split=1)")]
    #[allow(clippy::too_many_arguments)]
    fn contract(
        &self,
        py: Python<'_>,
        a: &Node,
        b: &Node,
        mapping: Option<&Bound<'_, PyAny>>,
        out_spins: Option<&Bound<'_, PyAny>>,
        stream: Option<&Bound<'_, PyAny>>,
        a_split: Option<&Bound<'_, PyAny>>,
        b_split: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Node> {
        guard("Runtime.contract", || {
            let out_spins = opt_count("out_spins", out_spins, 1)?;
            let stream = opt_count("stream", stream, 0)?.unwrap_or(0);
            let a_split = opt_count("a_split", a_split, 1)?.unwrap_or(1);
            let b_split = opt_count("b_split", b_split, 1)?.unwrap_or(1);
            let m = match mapping.filter(|m| !m.is_none()) {
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
        })
    }

    /// run_vector(vector) -> list[Node]
    ///
    /// Runs a vector of independent contractions concurrently: contraction ``i`` on stream
    /// ``i % streams``, after announcing all their inputs to the eviction policy (``pp-lru``
    /// protects the resident ones).
    ///
    /// Args:
    ///     vector (list[tuple[Node, Node, str | list[tuple[int, int, int]]]]): ``(a, b,
    ///         mapping)`` triples, the mapping as in `contract`.
    ///
    /// Returns:
    ///     list[Node]: the new nodes, in the order of ``vector``.
    ///
    /// Raises:
    ///     ValueError, MemhcError: as `contract`. On failure no node is returned (results of
    ///     contractions that completed stay in the runtime until it is dropped).
    fn run_vector(&self, py: Python<'_>, vector: &Bound<'_, PyList>) -> PyResult<Vec<Node>> {
        guard("Runtime.run_vector", || {
            let mut cs = Vec::with_capacity(vector.len());
            for item in vector.iter() {
                let (a, b, m): (PyRef<'_, Node>, PyRef<'_, Node>, Bound<'_, PyAny>) =
                    item.extract().map_err(|_| {
                        PyValueError::new_err(format!(
                            "run_vector takes a list of (Node, Node, mapping) triples, got {item}"
                        ))
                    })?;
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
        })
    }

    /// trace(a, b, pairs="meson4x4", stream=0) -> complex
    ///
    /// ``sum over (i, j) in pairs of trace(A[i] @ B[j])``, computed on the device; the nodes
    /// stay there. Waits for the result.
    ///
    /// Args:
    ///     a (Node): the left node, components ``m x k``.
    ///     b (Node): the right node, components ``k x m``.
    ///     pairs (str | list[tuple[int, int]] | None): ``"meson4x4"`` (default, also for
    ///         None: the 16 pairs ``(4 alpha + beta, 4 beta + alpha)``, the full trace over
    ///         spin and distillation indices of two mesons) or a list of ``(i, j)`` spin
    ///         pairs, none twice.
    ///     stream (int): the stream to run on, ``0 <= stream < runtime.streams``.
    ///
    /// Returns:
    ///     complex: the trace.
    ///
    /// Raises:
    ///     ValueError: an unknown pairs name, a malformed or duplicate pair, a spin out of
    ///         range, components whose product is not square, a stream out of range, a node
    ///         of another runtime.
    ///     MemhcError: a released node; the nodes do not fit in the budget; a device error.
    #[pyo3(signature = (a, b, pairs=None, stream=None),
        text_signature = "($self, a, b, pairs='meson4x4', stream=0)")]
    fn trace(
        &self,
        py: Python<'_>,
        a: &Node,
        b: &Node,
        pairs: Option<&Bound<'_, PyAny>>,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Complex64> {
        guard("Runtime.trace", || {
            let stream = opt_count("stream", stream, 0)?.unwrap_or(0);
            let pairs = match pairs.filter(|p| !p.is_none()) {
                None => TracePairs::meson4x4(),
                Some(p) => match p.extract::<String>() {
                    Ok(name) if name == "meson4x4" => TracePairs::meson4x4(),
                    Ok(other) => {
                        return Err(PyValueError::new_err(format!(
                            "unknown pairs '{other}': give \"meson4x4\" or a list of (a, b)"
                        )));
                    }
                    Err(_) => {
                        let list = tuples::<2>("pairs", "(a, b)", p)?
                            .into_iter()
                            .map(|[i, j]| (i, j))
                            .collect();
                        TracePairs::new(list).map_err(|e| err(e.into()))?
                    }
                },
            };
            let (a, b) = (self.id(a)?, self.id(b)?);
            let mut s = self.session()?;
            let session: &mut Session = &mut s;
            py.detach(|| session.trace(stream, a, b, &pairs))
                .map_err(err)
        })
    }

    /// read(node, out=None) -> numpy.ndarray
    ///
    /// Copies a node's values out of the runtime, waiting for the work that writes them. A
    /// result whose only copy is on the device is copied back and stays resident.
    ///
    /// Args:
    ///     node (Node): the node to read, of this runtime.
    ///     out (numpy.ndarray | None): None (default) for a new array, or an array to fill
    ///         in place, with no intermediate copy: dtype complex128, C-contiguous, writeable,
    ///         with ``node.shape``'s number of elements (any shape).
    ///
    /// Returns:
    ///     numpy.ndarray: a C-contiguous complex128 array of shape ``node.shape`` (a new one,
    ///     made from the values without a second copy), or ``out`` itself.
    ///
    /// Raises:
    ///     ValueError: ``out`` of another dtype or size, not C-contiguous or read-only; a
    ///         node of another runtime.
    ///     MemhcError: a released node, or one whose contraction failed (it has no values).
    #[pyo3(signature = (node, out=None))]
    fn read<'py>(
        &self,
        py: Python<'py>,
        node: &Node,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guard("Runtime.read", || {
            let id = self.id(node)?;
            let mut s = self.session()?;
            let elements = s.elements(id).map_err(err)?;
            if let Some(out) = out.filter(|o| !o.is_none()) {
                let arr = out.cast::<PyArrayDyn<Complex64>>().map_err(|_| {
                    PyValueError::new_err("out must be a numpy array of dtype complex128")
                })?;
                if !arr.is_c_contiguous() {
                    // (A Fortran-ordered array is contiguous too, but in the other order.)
                    return Err(PyValueError::new_err("out must be C-contiguous"));
                }
                if arr.len() != elements {
                    return Err(PyValueError::new_err(format!(
                        "out has {} elements, the node {} has {elements}",
                        arr.len(),
                        node.__repr__()
                    )));
                }
                let mut rw = arr
                    .try_readwrite()
                    .map_err(|_| PyValueError::new_err("out is read-only or already borrowed"))?;
                let slice = rw
                    .as_slice_mut()
                    .map_err(|_| PyValueError::new_err("out must be C-contiguous"))?;
                {
                    let session: &mut Session = &mut s;
                    py.detach(|| session.read_into(id, slice))
                }
                .map_err(err)?;
                return Ok(out.clone());
            }
            let mut values = vec![Complex64::default(); elements];
            {
                let session: &mut Session = &mut s;
                py.detach(|| session.read_into(id, &mut values))
            }
            .map_err(err)?;
            Ok(numpy::PyArray1::from_vec(py, values)
                .reshape(node.shape.clone())?
                .into_any())
        })
    }

    /// release(node) -> None
    ///
    /// Releases a node: its device memory returns to the runtime's free pool. Using the node
    /// afterwards (or releasing it again) raises MemhcError.
    ///
    /// Args:
    ///     node (Node): a node of this runtime.
    ///
    /// Raises:
    ///     ValueError: a node of another runtime.
    ///     MemhcError: a node released already.
    fn release(&self, node: &Node) -> PyResult<()> {
        guard("Runtime.release", || {
            let id = self.id(node)?;
            self.session()?.release(id).map_err(err)
        })
    }

    /// stats() -> dict[str, int | float]
    ///
    /// A snapshot of every statistic of the runtime, under the metric names of memhc's
    /// reports (docs/architecture.md, "Workloads and metrics"): all ints except
    /// ``hit_rate`` (a float, ``hits / (hits + misses)``, 0.0 before any use). Counts:
    /// ``allocations`` (driver allocations), ``frees``, ``pool_reuses``, ``handovers``,
    /// ``arena_allocations``, ``pool_slack_bytes``, ``hits``, ``misses``, ``evictions``,
    /// ``writebacks``, ``fragmentation_evictions``, ``arena_stranded_bytes``,
    /// ``arena_restarts``, ``prefetches``, ``prefetch_hits``, ``prefetch_wasted``,
    /// ``prefetch_bytes``, ``async_writebacks``, ``h2d_bytes``, ``d2h_bytes``,
    /// ``h2d_copies``, ``d2h_copies``, ``peak_device_bytes``, ``flops`` (``8 m n k`` per
    /// product), ``gemm_calls``; and of the runtime: ``objects`` (live nodes),
    /// ``budget_bytes``, ``streams``. Bytes are bytes.
    ///
    /// Returns:
    ///     dict[str, int | float]: a new dict; later work does not change it.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard("Runtime.stats", || {
            let s = self.session()?;
            let d = PyDict::new(py);
            // Every field of memhc's Stats, by name, as serde sees it.
            let value = serde_json::to_value(s.stats())
                .map_err(|e| MemhcError::new_err(format!("statistics could not be listed: {e}")))?;
            let serde_json::Value::Object(fields) = value else {
                return Err(MemhcError::new_err("statistics are not a record"));
            };
            for (k, v) in fields {
                if let Some(n) = v.as_u64() {
                    d.set_item(k, n)?;
                } else if let Some(x) = v.as_f64() {
                    d.set_item(k, x)?;
                } else {
                    return Err(MemhcError::new_err(format!(
                        "statistic {k} is not a number"
                    )));
                }
            }
            d.set_item("objects", s.object_count())?;
            d.set_item("budget_bytes", s.budget())?;
            d.set_item("streams", s.streams())?;
            Ok(d)
        })
    }

    /// audit() -> None
    ///
    /// Checks every invariant of the runtime's tables (element cache, free pool, budget,
    /// object states).
    ///
    /// Raises:
    ///     MemhcError: an invariant is broken (a bug in memhc), all of them named.
    fn audit(&self) -> PyResult<()> {
        guard("Runtime.audit", || self.session()?.audit().map_err(err))
    }

    /// synchronize() -> None
    ///
    /// Waits for all work on all streams (reads and traces already wait for what they need;
    /// this is for timing).
    ///
    /// Raises:
    ///     MemhcError: a device error.
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        guard("Runtime.synchronize", || {
            let mut s = self.session()?;
            let session: &mut Session = &mut s;
            py.detach(|| session.synchronize()).map_err(err)
        })
    }

    /// The device budget in bytes (int).
    #[getter]
    fn budget(&self) -> PyResult<usize> {
        guard("Runtime.budget", || Ok(self.session()?.budget()))
    }

    /// The backend's description (str): ``"host"``, or the device and library files of a GPU.
    #[getter]
    fn backend(&self) -> PyResult<String> {
        guard("Runtime.backend", || {
            Ok(self.session()?.backend_name().to_owned())
        })
    }

    /// The number of streams (int).
    #[getter]
    fn streams(&self) -> PyResult<usize> {
        guard("Runtime.streams", || Ok(self.session()?.streams()))
    }

    fn __repr__(&self) -> PyResult<String> {
        guard("Runtime.__repr__", || {
            let s = self.session()?;
            Ok(format!(
                "memhc.Runtime(backend={:?}, budget={}, streams={}, nodes={})",
                s.backend_name(),
                s.budget(),
                s.streams(),
                s.object_count()
            ))
        })
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

/// The default `vector_size` of the correlator functions, as a Python int.
fn default_vector_size(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    Ok(CorrOptions::default()
        .vector_size
        .into_pyobject(py)?
        .into_any())
}

/// run_correlators(path, backend="host", budget=None, policy="lru", mode="optimal", streams=4, sharing=True, *, file_order=False, vector_size=16, seed=0, out=None) -> dict[str, tuple[numpy.ndarray, numpy.ndarray]]
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
    sharing=true, *, file_order=false, vector_size=None, seed=None, out=None),
    text_signature = "(path, backend='host', budget=None, policy='lru', mode='optimal', streams=4, \
    sharing=True, *, file_order=False, vector_size=16, seed=0, out=None)")]
#[allow(clippy::too_many_arguments)]
fn run_correlators<'py>(
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
) -> PyResult<Bound<'py, PyDict>> {
    guard("run_correlators", || {
        let four = 4usize.into_pyobject(py)?.into_any();
        let zero = 0usize.into_pyobject(py)?.into_any();
        let o = options(
            backend,
            budget,
            policy,
            mode,
            streams.unwrap_or(&four),
            seed.unwrap_or(&zero),
        )?;
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
fn plan_correlators<'py>(
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
fn reference_correlators<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
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
fn _panic_selftest() -> PyResult<()> {
    guard("_panic_selftest", || {
        let empty: Vec<u8> = Vec::new();
        // An out-of-bounds index: a panic, as a bug in memhc would raise.
        let i = empty.len() + usize::from(std::hint::black_box(1u8));
        std::hint::black_box(empty[i]);
        Ok(())
    })
}

/// memhc: a GPU memory runtime for batched complex-double hadron contractions (lattice QCD).
///
/// A Runtime owns device memory on one backend (``"host"``: the CPU plays the device;
/// ``"cuda"``; ``"rocm"``) within a byte budget. Nodes (spin components of complex
/// tensors) are registered from numpy arrays, contracted on the device, and read back only
/// when asked:
///
///     import numpy as np, memhc
///     rt = memhc.Runtime(backend="host", budget="8G", policy="belady")
///     x = np.random.rand(16, 32, 32) + 1j * np.random.rand(16, 32, 32)
///     a = rt.register(x)                  # copied; a Node, a.shape == (16, 32, 32)
///     c = rt.contract(a, a, "meson4x4")   # stays on the device
///     values = rt.read(c)                 # complex128, shape (16, 32, 32)
///     t = rt.trace(c, a)                  # a Python complex
///     rt.stats()["hits"]
///
/// A correlator file (``memhc-corr/1``) runs in one call:
///
///     corr = memhc.run_correlators("examples/data/pion.corr.json", policy="belady")
///     times, values = corr["C_pi_pi"]     # int64 (n, 2) of (source, sink); complex128 (n,)
///
/// Arrays: inputs are converted to C-ordered complex128 (a copy only when they are not
/// already) and copied into the runtime; outputs are new C-contiguous complex128 arrays
/// (``Runtime.read(node, out=array)`` fills an array in place). Shapes are tuples, spin
/// components first: ``(spins, d0, d1, ...)``.
///
/// Errors: a bad argument value (a negative size, an unknown name, a spin out of range, an
/// invalid correlator file) raises ValueError; an argument of the wrong type (a string where
/// a Node is expected) raises TypeError; a file that cannot be read OSError; everything
/// else (a released node, a backend that cannot open, a working set that does not fit, an
/// internal error) raises MemhcError, a RuntimeError. No call crashes the interpreter on a
/// memhc bug: panics become MemhcError.
///
/// Contents: Runtime, Node, MemhcError, run_correlators, plan_correlators,
/// reference_correlators, __version__.
#[pymodule]
#[pyo3(name = "memhc")]
fn memhc_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Runtime>()?;
    m.add_class::<Node>()?;
    m.add_function(wrap_pyfunction!(run_correlators, m)?)?;
    m.add_function(wrap_pyfunction!(plan_correlators, m)?)?;
    m.add_function(wrap_pyfunction!(reference_correlators, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_selftest, m)?)?;
    m.add("MemhcError", m.py().get_type::<MemhcError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
