//! Host buffers: a node's values in the backend's host memory (page-locked on a GPU), filled
//! in place by the caller and registered without a copy, or a result handed out where the
//! device put it.
//!
//! The rule a caller of any language follows:
//!
//! * [`Session::alloc_host`](crate::Session::alloc_host) gives a [`HostBuffer`] for a node of
//!   a shape; the caller owns it and fills it in place ([`HostBuffer::as_mut_slice`]).
//! * [`Session::register_host`](crate::Session::register_host) moves it into the session: the
//!   node's values are the buffer, uploaded in one DMA, never copied on the host. From then on
//!   the caller holds nothing that reaches that memory: the C and Python layers make their
//!   handles stale at that moment (C) or refuse to register while a view of it is alive
//!   (Python).
//! * [`Session::take_host`](crate::Session::take_host) hands a result out as a [`HostBuffer`]
//!   (the node is released): with [`HostMemoryKind::Pinned`](crate::HostMemoryKind) the
//!   memory its read-back landed in, without a copy; otherwise the vector it was read into.
//! * A buffer owns its memory and may outlive its session: page-locked memory keeps the
//!   device context it belongs to alive, and is freed when the buffer is dropped. It registers
//!   only into the session that made it ([`ErrorKind::InvalidArgument`](crate::ErrorKind)
//!   otherwise).

use hadron::NodeShape;
use memhc_core::{Complex64, HostCopy};
use memhc_host::HostBackend;

use crate::error::Result;

/// A host copy on whichever backend made it.
#[derive(Debug)]
pub(crate) enum AnyHostCopy {
    /// The host reference backend's memory (ordinary memory).
    Host(HostCopy<HostBackend>),
    /// The NVIDIA backend's page-locked memory.
    #[cfg(feature = "cuda")]
    Cuda(HostCopy<memhc_select::dispatch::CudaBackend>),
    /// The AMD backend's page-locked memory.
    #[cfg(feature = "rocm")]
    Rocm(HostCopy<memhc_select::dispatch::HipBackend>),
}

/// Runs `$body` with `$h` bound to the host copy, whatever its backend.
macro_rules! with_copy {
    ($any:expr, $h:ident => $body:expr) => {
        match $any {
            AnyHostCopy::Host($h) => $body,
            #[cfg(feature = "cuda")]
            AnyHostCopy::Cuda($h) => $body,
            #[cfg(feature = "rocm")]
            AnyHostCopy::Rocm($h) => $body,
        }
    };
}

/// A node's values on the host, in memory of the session's backend: see the
/// [module documentation](self) for who owns it when. Made by
/// [`Session::alloc_host`](crate::Session::alloc_host) (to fill and register) and
/// [`Session::take_host`](crate::Session::take_host) (a result).
#[derive(Debug)]
pub struct HostBuffer {
    shape: NodeShape,
    session: u64,
    copy: AnyHostCopy,
}

impl HostBuffer {
    pub(crate) fn new(shape: NodeShape, session: u64, copy: AnyHostCopy) -> Self {
        HostBuffer {
            shape,
            session,
            copy,
        }
    }

    pub(crate) fn into_parts(self) -> (NodeShape, u64, AnyHostCopy) {
        (self.shape, self.session, self.copy)
    }

    pub(crate) fn session(&self) -> u64 {
        self.session
    }

    pub(crate) fn copy(&self) -> &AnyHostCopy {
        &self.copy
    }

    /// The shape of the node it holds.
    pub fn shape(&self) -> &NodeShape {
        &self.shape
    }

    /// Complex elements held: the node's, in packed order (components one after another,
    /// each row-major).
    pub fn len(&self) -> usize {
        with_copy!(&self.copy, h => h.len())
    }

    /// Whether it holds no element (never, for a node: every dimension is at least 1).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the values are in the backend's host memory (page-locked on a GPU; ordinary
    /// memory on the host backend), rather than in a vector: always for
    /// [`Session::alloc_host`](crate::Session::alloc_host), and for a result taken from a
    /// session opened with [`HostMemoryKind::Pinned`](crate::HostMemoryKind).
    pub fn is_pinned(&self) -> bool {
        with_copy!(&self.copy, h => h.is_pinned())
    }

    /// The values in place, to fill or read. On a GPU this first waits for the copies that
    /// use the memory (a result's read-back), so what it shows is complete. What a buffer
    /// fresh from [`Session::alloc_host`](crate::Session::alloc_host) holds before it is
    /// written is unspecified.
    pub fn as_mut_slice(&mut self) -> Result<&mut [Complex64]> {
        Ok(with_copy!(&mut self.copy, h => h.as_mut_slice())?)
    }

    /// The values as a vector (a copy out of the backend's memory, if that is where they are).
    pub fn into_vec(self) -> Result<Vec<Complex64>> {
        Ok(with_copy!(self.copy, h => h.into_vec())?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, HostMemoryKind, Options, Session};
    use hadron::{Contraction, HadronNode, SpinMapping, reference};
    use std::sync::Arc;

    fn pinned(budget: usize) -> Options {
        Options {
            host_memory: HostMemoryKind::Pinned,
            ..Options::host(budget)
        }
    }

    /// Fills `buffer` with `node`'s values in place.
    fn fill(buffer: &mut HostBuffer, node: &HadronNode) -> Result<()> {
        buffer.as_mut_slice()?.copy_from_slice(node.as_slice());
        Ok(())
    }

    #[test]
    fn filled_in_place_registered_and_taken_match_the_reference() -> Result<()> {
        for options in [Options::host(32 << 20), pinned(32 << 20)] {
            let mut s = Session::open(&options)?;
            let shape = NodeShape::meson(6)?;
            let (x, y) = (HadronNode::random(&shape, 3), HadronNode::random(&shape, 4));
            let mut bx = s.alloc_host(16, &[6, 6])?;
            let mut by = s.alloc_host(16, &[6, 6])?;
            assert!(bx.is_pinned() && bx.len() == 16 * 36 && bx.shape() == &shape);
            fill(&mut bx, &x)?;
            fill(&mut by, &y)?;
            let (a, b) = (s.register_host(bx)?, s.register_host(by)?);
            let meson = Arc::new(SpinMapping::meson4x4());
            let out = s.contract(0, &Contraction::new(a, b, meson.clone()))?;
            s.expect_read(out)?;
            let mut taken = s.take_host(out)?;
            assert_eq!(taken.is_pinned(), options.host_memory.is_pinned());
            assert_eq!(
                s.elements(out).err().map(|e| e.kind()),
                Some(ErrorKind::UnknownObject)
            );
            let want = reference::contract(&x, &y, Default::default(), Default::default(), &meson)?;
            let got = HadronNode::from_vec(&shape, taken.as_mut_slice()?.to_vec())?;
            assert!(reference::relative_error(&got, &want) < 1e-12);
            // The registered inputs are the caller's values, unchanged.
            let mut back = vec![Complex64::default(); s.elements(a)?];
            s.read_into(a, &mut back)?;
            assert_eq!(back, x.as_slice());
            s.audit()?;
            // A taken result outlives its session, unchanged.
            drop(s);
            assert_eq!(taken.into_vec()?, got.as_slice());
        }
        Ok(())
    }

    #[test]
    fn bad_shapes_sizes_and_foreign_buffers_are_refused_before_memory_is_taken() -> Result<()> {
        let mut s = Session::open(&Options::host(1 << 20))?;
        let kind = |r: Result<HostBuffer>| r.err().map(|e| e.kind());
        assert_eq!(
            kind(s.alloc_host(0, &[2])),
            Some(ErrorKind::InvalidArgument)
        );
        assert_eq!(
            kind(s.alloc_host(1, &[2, 0])),
            Some(ErrorKind::InvalidArgument)
        );
        assert_eq!(kind(s.alloc_host(1, &[])), Some(ErrorKind::InvalidArgument));
        let huge = s.alloc_host(16, &[1 << 20, 1 << 20, 1 << 20]);
        assert!(matches!(
            kind(huge),
            Some(ErrorKind::InvalidArgument | ErrorKind::OutOfHostMemory)
        ));
        let mut other = Session::open(&Options::host(1 << 20))?;
        let foreign = other.alloc_host(1, &[2, 2])?;
        assert_eq!(
            s.check_host(&foreign).err().map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument)
        );
        assert_eq!(
            s.register_host(foreign).err().map(|e| e.kind()),
            Some(ErrorKind::InvalidArgument)
        );
        assert_eq!(s.object_count(), 0);
        Ok(())
    }
}
