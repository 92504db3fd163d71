//! A session: one runtime on one backend, driven through hadron nodes.

use std::sync::atomic::{AtomicU64, Ordering};

use hadron::{Contraction, NodeShape, TracePairs};
use memhc_core::{Backend, Complex64, ObjectId, Stats};

use crate::any::{AnyEngine, with_engine};
use crate::error::{EmbedError, Result};
use crate::host_buffer::{AnyHostCopy, HostBuffer};
use crate::options::Options;

/// Numbers sessions, so that a host buffer registers only into the session that made it.
static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// One runtime on the backend its [`Options`] name, with a hadron engine over it. See the
/// [crate documentation](crate).
///
/// Every node is identified by an [`ObjectId`], which the session never reuses: an id that was
/// released is refused ([`ErrorKind::UnknownObject`](crate::ErrorKind::UnknownObject)) forever.
#[derive(Debug)]
pub struct Session {
    engine: AnyEngine,
    backend: String,
    id: u64,
}

impl Session {
    /// Opens the backend and a runtime on it. A GPU backend that cannot open here (no driver,
    /// library or device, or not compiled in) is [`ErrorKind::Unavailable`](crate::ErrorKind)
    /// with a one-line reason.
    pub fn open(options: &Options) -> Result<Self> {
        let engine = AnyEngine::open(options)?;
        let backend = with_engine!(&engine, e => e.runtime().backend().name());
        let id = NEXT_SESSION.fetch_add(1, Ordering::Relaxed);
        Ok(Session {
            engine,
            backend,
            id,
        })
    }

    /// The backend's description (device, library files).
    pub fn backend_name(&self) -> &str {
        &self.backend
    }

    /// The device budget in bytes.
    pub fn budget(&self) -> usize {
        with_engine!(&self.engine, e => e.runtime().budget())
    }

    /// The number of streams.
    pub fn streams(&self) -> usize {
        with_engine!(&self.engine, e => e.runtime().streams())
    }

    /// Registers a node of `spins` components of dimensions `dims` from its elements in packed
    /// order (components one after another, each row-major). The session keeps `data` (a
    /// host-backed object, copied to the device when first used).
    pub fn register(
        &mut self,
        spins: usize,
        dims: &[usize],
        data: Vec<Complex64>,
    ) -> Result<ObjectId> {
        let shape = NodeShape::new(spins, dims)?;
        let expected = shape.layout()?.elems();
        if data.len() != expected {
            return Err(EmbedError::SizeMismatch(format!(
                "a node of {spins} spins of {dims:?} has {expected} elements, the data has {}",
                data.len()
            )));
        }
        let node = hadron::HadronNode::from_vec(&shape, data)?;
        Ok(with_engine!(&mut self.engine, e => e.register(node))?)
    }

    /// Host memory of the backend for a node of `spins` components of dimensions `dims`
    /// (page-locked on a GPU), for the caller to fill in place
    /// ([`HostBuffer::as_mut_slice`]) and register without a copy
    /// ([`Session::register_host`]): see [`crate::host_buffer`] for who owns it when. The
    /// shape is checked (no zero spin or dimension, 1 to 8 dimensions, a size that fits the
    /// address space) and its bytes admitted against the host's memory
    /// (`hadron::admission`) before any memory is taken. What it holds before the caller
    /// writes it is unspecified.
    pub fn alloc_host(&mut self, spins: usize, dims: &[usize]) -> Result<HostBuffer> {
        let shape = NodeShape::new(spins, dims)?;
        let bytes = shape.layout()?.bytes();
        hadron::admission::admit_host("a node's host buffer", bytes as u64)?;
        let copy = match &mut self.engine {
            AnyEngine::Host(e) => AnyHostCopy::Host(e.alloc_host(&shape)?),
            #[cfg(feature = "cuda")]
            AnyEngine::Cuda(e) => AnyHostCopy::Cuda(e.alloc_host(&shape)?),
            #[cfg(feature = "rocm")]
            AnyEngine::Rocm(e) => AnyHostCopy::Rocm(e.alloc_host(&shape)?),
        };
        Ok(HostBuffer::new(shape, self.id, copy))
    }

    /// Checks that [`Session::register_host`] would take `buffer`: it was made by this
    /// session (by [`Session::alloc_host`] or [`Session::take_host`]). The C and Python
    /// layers call it first, so that a refused buffer stays the caller's.
    pub fn check_host(&self, buffer: &HostBuffer) -> Result<()> {
        let same_backend = matches!(
            (&self.engine, buffer.copy()),
            (AnyEngine::Host(_), AnyHostCopy::Host(_))
        );
        #[cfg(feature = "cuda")]
        let same_backend = same_backend
            || matches!(
                (&self.engine, buffer.copy()),
                (AnyEngine::Cuda(_), AnyHostCopy::Cuda(_))
            );
        #[cfg(feature = "rocm")]
        let same_backend = same_backend
            || matches!(
                (&self.engine, buffer.copy()),
                (AnyEngine::Rocm(_), AnyHostCopy::Rocm(_))
            );
        if buffer.session() != self.id || !same_backend {
            return Err(EmbedError::InvalidArgument(
                "this host buffer was made by another session: a buffer registers only into \
                 the session whose alloc_host or take_host made it"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Registers `buffer` (from [`Session::alloc_host`], filled, or a result from
    /// [`Session::take_host`]) as a node of its shape, without copying it: the buffer
    /// becomes the node's host copy, uploaded in one DMA when first used. A buffer of another
    /// session is refused ([`Session::check_host`]) and dropped.
    pub fn register_host(&mut self, buffer: HostBuffer) -> Result<ObjectId> {
        self.check_host(&buffer)?;
        let (shape, _, copy) = buffer.into_parts();
        let id = match (&mut self.engine, copy) {
            (AnyEngine::Host(e), AnyHostCopy::Host(h)) => e.register_host(shape, h)?,
            #[cfg(feature = "cuda")]
            (AnyEngine::Cuda(e), AnyHostCopy::Cuda(h)) => e.register_host(shape, h)?,
            #[cfg(feature = "rocm")]
            (AnyEngine::Rocm(e), AnyHostCopy::Rocm(h)) => e.register_host(shape, h)?,
            #[allow(unreachable_patterns)] // with one backend compiled in, every pair matches
            _ => {
                return Err(EmbedError::Internal(
                    "a host buffer of another backend passed the session check".into(),
                ));
            }
        };
        Ok(id)
    }

    /// Hands a node's values out as a [`HostBuffer`] and releases the node (its id is refused
    /// from now on): a node whose only copy is on the device is read back first. With
    /// [`HostMemoryKind::Pinned`](crate::HostMemoryKind) the buffer is the backend's
    /// page-locked memory the read-back landed in, handed over without a copy
    /// ([`HostBuffer::is_pinned`]); otherwise the vector it was read into. If the read fails
    /// the node is left as it was.
    pub fn take_host(&mut self, id: ObjectId) -> Result<HostBuffer> {
        let (shape, copy) = match &mut self.engine {
            AnyEngine::Host(e) => {
                let (shape, h) = e.take_host(id)?;
                (shape, AnyHostCopy::Host(h))
            }
            #[cfg(feature = "cuda")]
            AnyEngine::Cuda(e) => {
                let (shape, h) = e.take_host(id)?;
                (shape, AnyHostCopy::Cuda(h))
            }
            #[cfg(feature = "rocm")]
            AnyEngine::Rocm(e) => {
                let (shape, h) = e.take_host(id)?;
                (shape, AnyHostCopy::Rocm(h))
            }
        };
        Ok(HostBuffer::new(shape, self.id, copy))
    }

    /// Announces that the caller will read (or take) node `id`: with
    /// [`HostMemoryKind::Pinned`](crate::HostMemoryKind) the page-locked memory its
    /// read-back lands in is allocated now (page-locking is set-up cost, better paid before
    /// the contractions than at [`Session::take_host`]). (The runtime's early read-back needs
    /// the announcement before the launch that writes the node, which a session's
    /// [`Session::contract`] makes and writes in one call, so here it only prepares memory.)
    /// Changes no value.
    pub fn expect_read(&mut self, id: ObjectId) -> Result<()> {
        Ok(with_engine!(&mut self.engine, e => e.runtime_mut().expect_read(id))?)
    }

    /// Runs one contraction on `stream` into a new node, which stays on the device until read.
    pub fn contract(&mut self, stream: usize, c: &Contraction) -> Result<ObjectId> {
        Ok(with_engine!(&mut self.engine, e => e.contract(stream, c))?)
    }

    /// Runs a vector of independent contractions, contraction `i` on stream `i mod streams`,
    /// announcing their inputs to the policy first; returns the outputs in order.
    pub fn run_vector(&mut self, vector: &[Contraction]) -> Result<Vec<ObjectId>> {
        Ok(with_engine!(&mut self.engine, e => e.run_vector(vector))?)
    }

    /// `Σ_(a, b) in pairs Tr(A[a] · B[b])`, computed on the device.
    pub fn trace(
        &mut self,
        stream: usize,
        a: ObjectId,
        b: ObjectId,
        pairs: &TracePairs,
    ) -> Result<Complex64> {
        Ok(with_engine!(&mut self.engine, e => e.trace(stream, a, b, pairs))?)
    }

    /// The shape of a node.
    pub fn shape(&self, id: ObjectId) -> Result<NodeShape> {
        Ok(with_engine!(&self.engine, e => e.shape(id).cloned())?)
    }

    /// The number of complex elements of a node.
    pub fn elements(&self, id: ObjectId) -> Result<usize> {
        Ok(self.shape(id)?.layout()?.elems())
    }

    /// Copies a node's values into `out`, which must have exactly
    /// [`Session::elements`] elements, in packed order. A node whose only valid copy is on the
    /// device is copied back first (it stays resident).
    pub fn read_into(&mut self, id: ObjectId, out: &mut [Complex64]) -> Result<()> {
        let expected = self.elements(id)?;
        if out.len() != expected {
            return Err(EmbedError::SizeMismatch(format!(
                "node {id} has {expected} elements, the buffer {}",
                out.len()
            )));
        }
        with_engine!(&mut self.engine, e => {
            let values = e.runtime_mut().read(id)?;
            out.copy_from_slice(values);
        });
        Ok(())
    }

    /// Releases a node: its id is refused from now on, and its device memory returns to the
    /// free pool.
    pub fn release(&mut self, id: ObjectId) -> Result<()> {
        Ok(with_engine!(&mut self.engine, e => e.release(id))?)
    }

    /// Waits for all work on all streams.
    pub fn synchronize(&mut self) -> Result<()> {
        Ok(with_engine!(&mut self.engine, e => e.runtime_mut().synchronize())?)
    }

    /// A snapshot of the statistics (metric names as in reports).
    pub fn stats(&self) -> Stats {
        with_engine!(&self.engine, e => e.runtime().stats())
    }

    /// Checks every invariant of the runtime's tables.
    pub fn audit(&self) -> Result<()> {
        with_engine!(&self.engine, e => e.runtime().audit()).map_err(|a| EmbedError::Audit(a.0))
    }

    /// Live nodes (registered or produced, not yet released).
    pub fn object_count(&self) -> usize {
        with_engine!(&self.engine, e => e.runtime().object_count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use crate::options::BackendChoice;
    use hadron::{HadronNode, SpinMapping, reference};
    use std::sync::Arc;

    fn kind<T>(r: Result<T>) -> Option<ErrorKind> {
        r.err().map(|e| e.kind())
    }

    #[test]
    fn contraction_and_trace_match_the_reference() -> Result<()> {
        let mut s = Session::open(&Options::host(32 << 20))?;
        let shape = NodeShape::meson(5)?;
        let (x, y) = (HadronNode::random(&shape, 7), HadronNode::random(&shape, 8));
        let a = s.register(16, &[5, 5], x.as_slice().to_vec())?;
        let b = s.register(16, &[5, 5], y.as_slice().to_vec())?;
        let meson = Arc::new(SpinMapping::meson4x4());
        let outs = s.run_vector(&[
            Contraction::new(a, b, meson.clone()),
            Contraction::new(b, a, meson.clone()),
        ])?;
        let mut got = vec![Complex64::default(); s.elements(outs[0])?];
        s.read_into(outs[0], &mut got)?;
        let want = reference::contract(&x, &y, Default::default(), Default::default(), &meson)?;
        let got = HadronNode::from_vec(&shape, got)?;
        assert!(reference::relative_error(&got, &want) < 1e-12);
        let t = s.trace(1, outs[0], outs[1], &TracePairs::meson4x4())?;
        let yx = reference::contract(&y, &x, Default::default(), Default::default(), &meson)?;
        let t_ref = reference::trace(&want, &yx, &TracePairs::meson4x4())?;
        assert!((t - t_ref).norm() <= 1e-12 * t_ref.norm());
        assert!(s.stats().flops > 0 && s.stats().hits + s.stats().misses > 0);
        s.audit()?;
        s.release(outs[0])?;
        assert_eq!(kind(s.release(outs[0])), Some(ErrorKind::UnknownObject));
        assert_eq!(kind(s.elements(outs[0])), Some(ErrorKind::UnknownObject));
        Ok(())
    }

    #[test]
    fn wrong_sizes_and_names_are_typed_errors() -> Result<()> {
        let mut s = Session::open(&Options::host(1 << 20))?;
        let c = Complex64::default();
        assert_eq!(
            kind(s.register(16, &[2, 2], vec![c; 63])),
            Some(ErrorKind::SizeMismatch)
        );
        assert_eq!(
            kind(s.register(0, &[2, 2], vec![])),
            Some(ErrorKind::InvalidArgument)
        );
        let a = s.register(1, &[2, 2], vec![c; 4])?;
        assert_eq!(
            kind(s.read_into(a, &mut [c; 3])),
            Some(ErrorKind::SizeMismatch)
        );
        let bad = Contraction::new(a, a, Arc::new(SpinMapping::meson4x4()));
        assert_eq!(kind(s.contract(0, &bad)), Some(ErrorKind::InvalidArgument));
        let diag = Arc::new(SpinMapping::diagonal(1)?);
        assert_eq!(
            kind(s.contract(9, &Contraction::new(a, a, diag))),
            Some(ErrorKind::InvalidArgument)
        );
        // 64 KiB of one node cannot fit a 1 KiB device.
        let mut tiny = Session::open(&Options::host(1 << 10))?;
        let big = tiny.register(1, &[64, 64], vec![c; 64 * 64])?;
        let diag = Arc::new(SpinMapping::diagonal(1)?);
        assert_eq!(
            kind(tiny.contract(0, &Contraction::new(big, big, diag))),
            Some(ErrorKind::DoesNotFit)
        );
        for gpu in [BackendChoice::Cuda, BackendChoice::Rocm] {
            // Without a GPU (CI), opening says why; with one, it works.
            let opened = Session::open(&Options {
                backend: gpu,
                budget: Some(1 << 20),
                ..Options::default()
            });
            if let Err(e) = opened {
                assert_eq!(e.kind(), ErrorKind::Unavailable, "{e}");
                assert!(!e.to_string().contains('\n'));
            }
        }
        Ok(())
    }
}
