//! `HostBuffer`: a node's values in the backend's host memory (page-locked on a GPU), seen
//! from Python as numpy arrays over that memory, with no copy.
//!
//! Lifetimes. The memory is shared (an `Arc`) by its `HostBuffer` and one private
//! [`Export`] object per numpy array made over it: `numpy.asarray(buffer)` asks
//! `HostBuffer.__array__`, which makes an array from a new `Export`'s
//! `__array_interface__`, and numpy keeps the `Export` as the array's base (views of the
//! array keep it too); when the last array over it is gone, the `Export` is dropped. So:
//!
//! * an array over a buffer keeps its memory alive, whatever happens to the `HostBuffer` or
//!   the `Runtime` (page-locked memory keeps its device context alive): a taken result can be
//!   used after the runtime is gone;
//! * registering a buffer hands its memory to the runtime, so it is refused with
//!   `BufferError` while any array over it is alive (an `Export` still shares the memory, as
//!   `bytearray` refuses to resize while exported); once registered, the buffer is empty
//!   and asking it for an array raises `BufferError` too. No array ever points at memory the
//!   runtime owns or has freed.

use std::sync::{Arc, Mutex};

use super::args::err;
use memhc_embed::HostBuffer as Buffer;
use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// The memory of one host buffer, while the Python side owns it (`None` once registered).
type Shared = Arc<Mutex<Option<Buffer>>>;

/// One numpy array's hold on a host buffer's memory: the array's base.
#[pyclass(module = "memhc", name = "_HostMemory", frozen)]
pub(super) struct Export {
    memory: Shared,
    shape: Vec<usize>,
}

#[pymethods]
impl Export {
    /// numpy's array interface over the memory: complex128, C order, writeable.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut held = lock(&self.memory)?;
        let buffer = held.as_mut().ok_or_else(registered)?;
        let values = buffer.as_mut_slice().map_err(err)?;
        // The address numpy reads and writes through: the memory stays where it is while this
        // object (which every array over it keeps alive) shares it, and is handed to the
        // runtime only when no such object is left (`HostBuffer::take`).
        let address = values.as_mut_ptr() as usize;
        let d = PyDict::new(py);
        d.set_item("shape", PyTuple::new(py, &self.shape)?)?;
        d.set_item("typestr", "<c16")?;
        d.set_item("data", (address, false))?;
        d.set_item("version", 3)?;
        Ok(d)
    }
}

fn lock(m: &Mutex<Option<Buffer>>) -> PyResult<std::sync::MutexGuard<'_, Option<Buffer>>> {
    m.lock().map_err(|_| {
        PyBufferError::new_err("this host buffer failed internally earlier; allocate a new one")
    })
}

fn registered() -> PyErr {
    PyBufferError::new_err(
        "this host buffer was registered: its memory belongs to the runtime now (read the node \
         with Runtime.read, or take it back with Runtime.take_host)",
    )
}

/// A node's values in the backend's host memory, as numpy sees it without a copy.
///
/// Made by ``Runtime.alloc_host(shape)`` (page-locked memory to fill in place, then
/// ``Runtime.register_host``: the upload is one DMA, no copy on the host) or
/// ``Runtime.take_host(node)`` (a result, where its read-back landed). ``numpy.asarray(buf)``
/// is a writeable complex128 array of ``buf.shape`` over the memory itself:
///
///     buf = rt.alloc_host((16, n, n))
///     a = numpy.asarray(buf)
///     a[...] = values                     # written in place
///     del a                               # no array may outlive the hand-over
///     node = rt.register_host(buf)        # no copy; buf is empty from now on
///     r = numpy.asarray(rt.take_host(out))   # a result, no copy; node `out` is released
///
/// Lifetimes: an array over a buffer keeps the memory alive (after the buffer, and after the
/// Runtime, are gone). ``Runtime.register_host`` hands the memory to the runtime, so it
/// raises BufferError while an array over the buffer is alive (delete the arrays first),
/// and afterwards the buffer is empty: ``numpy.asarray(buf)`` raises BufferError. On the
/// host backend the memory is ordinary memory and everything works the same.
///
/// Attributes:
///     shape (tuple[int, ...]): ``(spins, d0, d1, ...)``.
///     pinned (bool): whether the values are in the backend's host memory (always for
///         ``alloc_host``; for ``take_host``, in a runtime made with
///         ``host_memory="pinned"``).
///     registered (bool): whether the buffer was registered (its memory is the runtime's).
#[pyclass(module = "memhc", frozen)]
pub(super) struct HostBuffer {
    pub(super) runtime: u64,
    shape: Vec<usize>,
    pinned: bool,
    memory: Shared,
}

impl HostBuffer {
    /// A buffer of runtime `runtime` over `buffer`.
    pub(super) fn new(runtime: u64, buffer: Buffer) -> Self {
        HostBuffer {
            runtime,
            shape: buffer.shape().array_shape(),
            pinned: buffer.is_pinned(),
            memory: Arc::new(Mutex::new(Some(buffer))),
        }
    }

    /// The memory, handed over for registration: refused while a numpy array over it is
    /// alive, or once registered already.
    pub(super) fn take(&self) -> PyResult<Buffer> {
        // This buffer holds one reference; every array over the memory holds another (its
        // `Export`).
        let arrays = Arc::strong_count(&self.memory).saturating_sub(1);
        if arrays > 0 {
            return Err(PyBufferError::new_err(format!(
                "{arrays} numpy array(s) still view this host buffer: delete them (del a) \
                 before registering it, since its memory becomes the runtime's"
            )));
        }
        lock(&self.memory)?.take().ok_or_else(registered)
    }

    /// Puts back memory that [`HostBuffer::take`] took and the runtime refused.
    pub(super) fn put_back(&self, buffer: Buffer) -> PyResult<()> {
        *lock(&self.memory)? = Some(buffer);
        Ok(())
    }

    /// Whether the memory is still the buffer's, checking nothing else.
    pub(super) fn check_unregistered(&self) -> PyResult<()> {
        match lock(&self.memory)?.is_some() {
            true => Ok(()),
            false => Err(registered()),
        }
    }
}

#[pymethods]
impl HostBuffer {
    /// ``(spins, d0, d1, ...)``: the shape of the node and of ``numpy.asarray(buf)``.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.shape)
    }

    /// Whether the values are in the backend's host memory (page-locked on a GPU) rather
    /// than in an ordinary vector.
    #[getter]
    fn pinned(&self) -> bool {
        self.pinned
    }

    /// Whether the buffer was registered: its memory is the runtime's, and it is empty.
    #[getter]
    fn registered(&self) -> PyResult<bool> {
        Ok(lock(&self.memory)?.is_none())
    }

    /// __array__(dtype=None, copy=None) -> numpy.ndarray
    ///
    /// The values as a writeable C-ordered complex128 array of ``shape`` over the buffer's
    /// memory (no copy), which keeps the memory alive. With ``copy=True``, or a ``dtype``
    /// other than complex128, a copy instead.
    ///
    /// Args:
    ///     dtype (numpy.dtype | None): the dtype wanted (None: complex128, no copy).
    ///     copy (bool | None): True for a copy; None or False for the memory itself.
    ///
    /// Raises:
    ///     BufferError: the buffer was registered (its memory is the runtime's).
    #[pyo3(signature = (dtype=None, copy=None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let np = py.import("numpy")?;
        let export = Export {
            memory: Arc::clone(&self.memory),
            shape: self.shape.clone(),
        };
        let view = np.call_method1("asarray", (Py::new(py, export)?,))?;
        let dtype = dtype.filter(|d| !d.is_none());
        if copy == Some(true) || dtype.is_some() {
            let kwargs = PyDict::new(py);
            if let Some(d) = dtype {
                kwargs.set_item("dtype", d)?;
            }
            return np
                .call_method("array", (view,), Some(&kwargs))
                .map_err(|e| {
                    PyValueError::new_err(format!("the host buffer's values do not convert: {e}"))
                });
        }
        Ok(view)
    }

    fn __repr__(&self) -> PyResult<String> {
        let dims: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
        let comma = if dims.len() == 1 { "," } else { "" };
        let state = if lock(&self.memory)?.is_none() {
            ", registered"
        } else {
            ""
        };
        Ok(format!(
            "memhc.HostBuffer(shape=({}{comma}), pinned={}{state})",
            dims.join(", "),
            if self.pinned { "True" } else { "False" }
        ))
    }
}
