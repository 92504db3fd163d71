//! `Runtime`: one device budget on one backend, with its nodes; spin mappings and options
//! from Python arguments.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use super::MemhcError;
use super::args::{counts, err, guard, opt_count, tuples};
use super::host::HostBuffer;
use super::node::{NEXT_RUNTIME, Node};
use super::spec::{mapping, options, stats};
use memhc_embed::hadron::{Contraction, MatrixView, SpinMapping, TracePairs};
use memhc_embed::{Complex64, ObjectId, Session};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

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
///     host_memory (str): where results land on the host: ``"pageable"`` (default) or
///         ``"pinned"`` (the backend's page-locked memory: a read-back is one DMA, and
///         `take_host` hands the result out there without a copy). Buffers from
///         `alloc_host` are page-locked either way. Not with ``mode="unified"``.
///
/// Raises:
///     ValueError: an unknown backend, policy, mode or host memory; a budget that is not a positive
///         number of bytes; streams below 1; a negative or non-integer seed.
///     MemhcError: the backend cannot open here (the message says why).
///
/// Methods: register, alloc_host, register_host, take_host, contract, run_vector, trace,
/// read, release, stats, audit; attributes budget, backend, streams. A runtime is safe to use from several Python threads (calls
/// serialise; contractions and reads release the GIL while they run).
#[pyclass(module = "memhc")]
pub(super) struct Runtime {
    serial: u64,
    session: Mutex<Session>,
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
    #[pyo3(signature = (backend="host", budget=None, policy="lru", mode="optimal", streams=None, seed=None, host_memory="pageable"),
        text_signature = "(backend='host', budget=None, policy='lru', mode='optimal', streams=4, seed=0, host_memory='pageable')")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        backend: &str,
        budget: Option<&Bound<'_, PyAny>>,
        policy: &str,
        mode: &str,
        streams: Option<&Bound<'_, PyAny>>,
        seed: Option<&Bound<'_, PyAny>>,
        host_memory: &str,
    ) -> PyResult<Self> {
        guard("Runtime()", || {
            let o = options(backend, budget, policy, mode, streams, seed)?
                .with_host_memory(Some(host_memory))
                .map_err(err)?;
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

    /// alloc_host(shape) -> HostBuffer
    ///
    /// The backend's host memory for a node of ``shape`` (page-locked on a GPU), to fill in
    /// place through ``numpy.asarray(buf)`` and register without a copy (`register_host`).
    /// What it holds before it is written is unspecified.
    ///
    /// Args:
    ///     shape (tuple[int, ...]): ``(spins, d0, d1, ...)``, as `register` takes arrays.
    ///
    /// Raises:
    ///     ValueError: a shape of fewer than 2 or more than 9 entries, a zero or negative
    ///         entry, a size beyond the address space (checked before memory is taken).
    ///     MemhcError: more than the host's memory, or the backend could not allocate.
    fn alloc_host(&self, shape: Vec<Bound<'_, PyAny>>) -> PyResult<HostBuffer> {
        guard("Runtime.alloc_host", || {
            let shape = counts("shape", &shape)?;
            let Some((&spins, dims)) = shape.split_first() else {
                return Err(PyValueError::new_err(
                    "shape must be (spins, d0, ...), got ()",
                ));
            };
            let buffer = self.session()?.alloc_host(spins, dims).map_err(err)?;
            Ok(HostBuffer::new(self.serial, buffer))
        })
    }

    /// register_host(buffer) -> Node
    ///
    /// Registers a host buffer of this runtime (from `alloc_host` or `take_host`) as a node,
    /// without a copy: its memory becomes the node's and the buffer is empty.
    ///
    /// Args:
    ///     buffer (HostBuffer): the buffer; no numpy array over it may be alive.
    ///
    /// Raises:
    ///     BufferError: a numpy array over the buffer is still alive (delete it first), or
    ///         the buffer was registered already.
    ///     ValueError: a buffer of another runtime.
    fn register_host(&self, buffer: &HostBuffer) -> PyResult<Node> {
        guard("Runtime.register_host", || {
            if buffer.runtime != self.serial {
                return Err(PyValueError::new_err(
                    "the host buffer is another runtime's",
                ));
            }
            buffer.check_unregistered()?;
            let mut s = self.session()?;
            let memory = buffer.take()?;
            if let Err(e) = s.check_host(&memory) {
                buffer.put_back(memory)?;
                return Err(err(e));
            }
            let id = s.register_host(memory).map_err(err)?;
            self.node(&s, id)
        })
    }

    /// take_host(node) -> HostBuffer
    ///
    /// Hands a node's values out as a HostBuffer and releases the node (read back first if
    /// needed). With ``host_memory="pinned"`` it is the page-locked memory the read-back
    /// landed in, without a copy; arrays over it keep it alive after the runtime is gone.
    ///
    /// Args:
    ///     node (Node): the node, of this runtime; released by the call.
    ///
    /// Raises:
    ///     ValueError: a node of another runtime.
    ///     MemhcError: a released node, or one without values (the node is then kept).
    fn take_host(&self, py: Python<'_>, node: &Node) -> PyResult<HostBuffer> {
        guard("Runtime.take_host", || {
            let id = self.id(node)?;
            let mut s = self.session()?;
            let buffer = {
                let session: &mut Session = &mut s;
                py.detach(|| session.take_host(id))
            }
            .map_err(err)?;
            Ok(HostBuffer::new(self.serial, buffer))
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
        guard("Runtime.stats", || stats(py, &*self.session()?))
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
