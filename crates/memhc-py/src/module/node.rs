//! `Node`: a handle to a hadron node of one runtime.

use std::sync::atomic::AtomicU64;

use memhc_embed::ObjectId;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Numbers runtimes, so that a node used with a runtime it does not belong to is refused.
pub(super) static NEXT_RUNTIME: AtomicU64 = AtomicU64::new(1);

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
pub(super) struct Node {
    pub(super) runtime: u64,
    pub(super) id: ObjectId,
    pub(super) shape: Vec<usize>,
}

#[pymethods]
impl Node {
    /// ``(spins, d0, d1, ...)``: spin components first, then the dimensions of one component
    /// (a meson: ``(16, N, N)``; a baryon: ``(S, N, N, N)``). A tuple of ints.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.shape)
    }

    pub(super) fn __repr__(&self) -> String {
        let dims: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
        let comma = if dims.len() == 1 { "," } else { "" };
        format!(
            "memhc.Node(id={}, shape=({}{comma}))",
            self.id.index(),
            dims.join(", ")
        )
    }
}
