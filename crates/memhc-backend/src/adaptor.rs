//! Backends that wrap a backend (in the manner of RMM's resource adaptors): an [`Adaptor`]
//! implements [`Backend`] once, forwarding every call to the backend it wraps and showing each
//! call that matters to its [`Hooks`] before and after. A wrapper is then only its hooks:
//! [`Instrumented`](crate::instrumented::Instrumented) counts,
//! [`FaultInjector`](crate::fault::FaultInjector) refuses chosen calls.
//!
//! The calls the hooks see are the ones that allocate, move bytes, compute or order work
//! ([`Call`]). Stream and event creation, queries, synchronisation, pinned host allocation and
//! memory advice are forwarded without a hook.

use crate::components::ComponentBatch;
use crate::gemm::{GeamShape, GemmItem, GemmShape, StridedBatch};
use crate::tiles::Tiles;
use crate::{Backend, BackendError, BackendOp, DeviceMemory, Location, MemInfo};

/// One call through an [`Adaptor`], as its [`Hooks`] see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// [`Backend::alloc`] of this many bytes.
    Alloc {
        /// Bytes asked for.
        bytes: usize,
    },
    /// [`Backend::alloc_managed`] of this many bytes.
    AllocManaged {
        /// Bytes asked for.
        bytes: usize,
    },
    /// [`Backend::free`] of a buffer of this many bytes.
    Free {
        /// The buffer's size.
        bytes: usize,
    },
    /// [`Backend::copy_h2d`] or [`Backend::copy_h2d_async`] of this many bytes.
    CopyH2D {
        /// Bytes copied.
        bytes: usize,
    },
    /// [`Backend::copy_d2h_async`] or [`Backend::copy_d2h`] of this many bytes.
    CopyD2H {
        /// Bytes copied.
        bytes: usize,
    },
    /// [`Backend::managed_write`]: the host writes this many bytes of managed memory.
    ManagedWrite {
        /// Bytes written.
        bytes: usize,
    },
    /// [`Backend::managed_read`]: the host reads this many bytes of managed memory.
    ManagedRead {
        /// Bytes read.
        bytes: usize,
    },
    /// [`Backend::gemm_batched`] or [`Backend::gemm_strided_batched`].
    Gemm {
        /// Floating-point operations of one item (`8 m n k`).
        item_flops: u64,
        /// Items in the batch.
        items: usize,
    },
    /// [`Backend::geam_batched`].
    Geam {
        /// Items in the batch.
        items: usize,
    },
    /// [`Backend::record_event`].
    RecordEvent,
    /// [`Backend::wait_event`].
    WaitEvent,
    /// [`Backend::prefetch`].
    Prefetch,
}

impl Call {
    /// The kind of call, as errors and fault plans name it.
    pub fn op(&self) -> BackendOp {
        match self {
            Call::Alloc { .. } | Call::AllocManaged { .. } => BackendOp::Alloc,
            Call::Free { .. } => BackendOp::Free,
            Call::CopyH2D { .. } | Call::ManagedWrite { .. } => BackendOp::CopyH2D,
            Call::CopyD2H { .. } | Call::ManagedRead { .. } => BackendOp::CopyD2H,
            Call::Gemm { .. } | Call::Geam { .. } => BackendOp::Gemm,
            Call::RecordEvent | Call::WaitEvent | Call::Prefetch => BackendOp::Sync,
        }
    }
}

/// What a wrapper adds to the backend it wraps.
pub trait Hooks {
    /// The wrapped backend's name as this wrapper reports it (unchanged by default).
    fn name(&self, inner: String) -> String {
        inner
    }

    /// Called before `call` is forwarded to `inner`. An error refuses the call: it is not
    /// forwarded (except a free, which always is, so that a refused free leaks nothing) and the
    /// error is returned to the caller.
    fn before<B: Backend>(&self, inner: &B, call: &Call) -> Result<(), BackendError> {
        let _ = (inner, call);
        Ok(())
    }

    /// Called after `call` was forwarded, with whether the wrapped backend succeeded.
    fn after(&self, call: &Call, succeeded: bool) {
        let _ = (call, succeeded);
    }
}

/// A backend wrapped with [`Hooks`]. It implements [`Backend`] with the wrapped backend's
/// types, so wrappers nest.
#[derive(Debug)]
pub struct Adaptor<B, H> {
    inner: B,
    hooks: H,
}

impl<B, H> Adaptor<B, H> {
    /// Wraps `inner` with `hooks`.
    pub fn with_hooks(inner: B, hooks: H) -> Self {
        Adaptor { inner, hooks }
    }

    /// The wrapped backend.
    pub fn inner(&self) -> &B {
        &self.inner
    }

    /// The hooks.
    pub fn hooks(&self) -> &H {
        &self.hooks
    }

    /// Unwraps the backend.
    pub fn into_inner(self) -> B {
        self.inner
    }
}

impl<B: Backend, H: Hooks> Adaptor<B, H> {
    /// Runs `forward` between the hooks of `call`.
    fn hooked<T>(
        &self,
        call: Call,
        forward: impl FnOnce(&B) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.hooks.before(&self.inner, &call)?;
        let result = forward(&self.inner);
        self.hooks.after(&call, result.is_ok());
        result
    }
}

impl<B: Backend, H: Hooks> Backend for Adaptor<B, H> {
    type Buffer = B::Buffer;
    type Stream = B::Stream;
    type Event = B::Event;
    type HostBuffer = B::HostBuffer;

    fn name(&self) -> String {
        self.hooks.name(self.inner.name())
    }

    fn mem_info(&self) -> Result<MemInfo, BackendError> {
        self.inner.mem_info()
    }

    fn alloc(&self, bytes: usize) -> Result<Self::Buffer, BackendError> {
        self.hooked(Call::Alloc { bytes }, |b| b.alloc(bytes))
    }

    fn free(&self, buffer: Self::Buffer) -> Result<(), BackendError> {
        // A refused free still frees: the buffer is consumed either way, and must not leak.
        let call = Call::Free {
            bytes: buffer.bytes(),
        };
        let gate = self.hooks.before(&self.inner, &call);
        let result = self.inner.free(buffer);
        self.hooks.after(&call, result.is_ok());
        gate.and(result)
    }

    fn create_stream(&self) -> Result<Self::Stream, BackendError> {
        self.inner.create_stream()
    }

    fn create_event(&self) -> Result<Self::Event, BackendError> {
        self.inner.create_event()
    }

    fn record_event(&self, event: &Self::Event, stream: &Self::Stream) -> Result<(), BackendError> {
        self.hooked(Call::RecordEvent, |b| b.record_event(event, stream))
    }

    fn wait_event(&self, stream: &Self::Stream, event: &Self::Event) -> Result<(), BackendError> {
        self.hooked(Call::WaitEvent, |b| b.wait_event(stream, event))
    }

    fn event_query(&self, event: &Self::Event) -> Result<bool, BackendError> {
        self.inner.event_query(event)
    }

    fn event_synchronize(&self, event: &Self::Event) -> Result<(), BackendError> {
        self.inner.event_synchronize(event)
    }

    fn stream_synchronize(&self, stream: &Self::Stream) -> Result<(), BackendError> {
        self.inner.stream_synchronize(stream)
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.inner.synchronize()
    }

    fn copy_h2d(
        &self,
        stream: &Self::Stream,
        src: &[u8],
        dst: &Self::Buffer,
        dst_offset: usize,
    ) -> Result<(), BackendError> {
        let call = Call::CopyH2D { bytes: src.len() };
        self.hooked(call, |b| b.copy_h2d(stream, src, dst, dst_offset))
    }

    fn alloc_host(&self, bytes: usize) -> Result<Self::HostBuffer, BackendError> {
        self.inner.alloc_host(bytes)
    }

    fn host_piece(
        &self,
        chunk: &std::sync::Arc<Self::HostBuffer>,
        offset: usize,
        bytes: usize,
    ) -> Result<Option<Self::HostBuffer>, BackendError> {
        self.inner.host_piece(chunk, offset, bytes)
    }

    fn adopt_host(&self, memory: Vec<u64>, copies: usize) -> Result<Self::HostBuffer, Vec<u64>> {
        self.inner.adopt_host(memory, copies)
    }

    fn adopts_host(&self, bytes: usize, copies: usize) -> bool {
        self.inner.adopts_host(bytes, copies)
    }

    fn copy_h2d_async(
        &self,
        stream: &Self::Stream,
        src: &Self::HostBuffer,
        src_offset: usize,
        dst: &Self::Buffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        self.hooked(Call::CopyH2D { bytes: len }, |b| {
            b.copy_h2d_async(stream, src, src_offset, dst, dst_offset, len)
        })
    }

    fn copy_d2h_async(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &Self::HostBuffer,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        self.hooked(Call::CopyD2H { bytes: len }, |b| {
            b.copy_d2h_async(stream, src, src_offset, dst, dst_offset, len)
        })
    }

    fn copy_d2h(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        let call = Call::CopyD2H { bytes: dst.len() };
        self.hooked(call, |b| b.copy_d2h(stream, src, src_offset, dst))
    }

    fn holds_values(&self) -> bool {
        self.inner.holds_values()
    }

    fn supports_tiles(&self) -> bool {
        self.inner.supports_tiles()
    }

    fn copy_h2d_tiled(
        &self,
        stream: &Self::Stream,
        src: &[u8],
        dst: &Self::Buffer,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let call = Call::CopyH2D { bytes: src.len() };
        self.hooked(call, |b| {
            b.copy_h2d_tiled(stream, src, dst, dst_offset, tiles)
        })
    }

    fn copy_h2d_async_tiled(
        &self,
        stream: &Self::Stream,
        src: &Self::HostBuffer,
        src_offset: usize,
        dst: &Self::Buffer,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let call = Call::CopyH2D {
            bytes: tiles.bytes(),
        };
        self.hooked(call, |b| {
            b.copy_h2d_async_tiled(stream, src, src_offset, dst, dst_offset, tiles)
        })
    }

    fn copy_d2h_tiled(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &mut [u8],
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let call = Call::CopyD2H { bytes: dst.len() };
        self.hooked(call, |b| {
            b.copy_d2h_tiled(stream, src, src_offset, dst, tiles)
        })
    }

    fn copy_d2h_async_tiled(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &Self::HostBuffer,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let call = Call::CopyD2H {
            bytes: tiles.bytes(),
        };
        self.hooked(call, |b| {
            b.copy_d2h_async_tiled(stream, src, src_offset, dst, dst_offset, tiles)
        })
    }

    fn gemm_batched(
        &self,
        stream: &Self::Stream,
        shape: &GemmShape,
        items: &[GemmItem<'_, Self::Buffer>],
    ) -> Result<(), BackendError> {
        let call = Call::Gemm {
            item_flops: shape.flops(),
            items: items.len(),
        };
        self.hooked(call, |b| b.gemm_batched(stream, shape, items))
    }

    fn geam_batched(
        &self,
        stream: &Self::Stream,
        shape: &GeamShape,
        items: &[GemmItem<'_, Self::Buffer>],
    ) -> Result<(), BackendError> {
        let call = Call::Geam { items: items.len() };
        self.hooked(call, |b| b.geam_batched(stream, shape, items))
    }

    fn gemm_strided_batched(
        &self,
        stream: &Self::Stream,
        shape: &GemmShape,
        batch: &StridedBatch<'_, Self::Buffer>,
    ) -> Result<(), BackendError> {
        let call = Call::Gemm {
            item_flops: shape.flops(),
            items: batch.count,
        };
        self.hooked(call, |b| b.gemm_strided_batched(stream, shape, batch))
    }

    fn gemm_components(
        &self,
        stream: &Self::Stream,
        shape: &GemmShape,
        batch: &ComponentBatch<'_, Self::Buffer>,
    ) -> Result<(), BackendError> {
        let call = Call::Gemm {
            item_flops: shape.flops(),
            items: batch.table.len(),
        };
        self.hooked(call, |b| b.gemm_components(stream, shape, batch))
    }

    fn supports_managed(&self) -> bool {
        self.inner.supports_managed()
    }

    fn alloc_managed(&self, bytes: usize) -> Result<Self::Buffer, BackendError> {
        self.hooked(Call::AllocManaged { bytes }, |b| b.alloc_managed(bytes))
    }

    fn managed_write(
        &self,
        dst: &Self::Buffer,
        dst_offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        let call = Call::ManagedWrite { bytes: src.len() };
        self.hooked(call, |b| b.managed_write(dst, dst_offset, src))
    }

    fn managed_read(
        &self,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        let call = Call::ManagedRead { bytes: dst.len() };
        self.hooked(call, |b| b.managed_read(src, src_offset, dst))
    }

    fn prefetch(
        &self,
        stream: &Self::Stream,
        buffer: &Self::Buffer,
        to: Location,
    ) -> Result<(), BackendError> {
        self.hooked(Call::Prefetch, |b| b.prefetch(stream, buffer, to))
    }

    fn advise_read_mostly(&self, buffer: &Self::Buffer) -> Result<(), BackendError> {
        self.inner.advise_read_mostly(buffer)
    }

    fn set_timing(&self, on: bool) -> bool {
        self.inner.set_timing(on)
    }

    fn take_timeline(&self) -> Vec<crate::timeline::WorkSpan> {
        self.inner.take_timeline()
    }

    fn stream_number(&self, stream: &Self::Stream) -> Option<u64> {
        self.inner.stream_number(stream)
    }

    fn timing_clock_ns(&self) -> Option<u64> {
        self.inner.timing_clock_ns()
    }
}
