//! Copies straight between device memory and page-locked host buffers: one DMA each, no
//! staging, and the copy's fence kept in the host buffer, so the host waits for it before it
//! touches or frees the buffer.

use memhc_backend::timeline::WorkKind;
use memhc_backend::{BackendError, BackendOp, check_range};

use super::GpuBackend;
use crate::api::{DeviceApi, PinnedAllocation};
use crate::copy_stats::Copied;
use crate::memory::{GpuBuffer, GpuHostBuffer, forget_completed};
use crate::stream::GpuStream;

impl<D: DeviceApi> GpuBackend<D> {
    /// Enqueues `copy`, an asynchronous copy into or out of page-locked buffer `host`, timed
    /// as `kind`, and keeps its fence in the buffer, so the host waits for it before touching
    /// or freeing the buffer. Without a fence, the stream is synchronised instead.
    pub(super) fn fenced_host_copy(
        &self,
        stream: &GpuStream<D>,
        host: &GpuHostBuffer<D>,
        kind: WorkKind,
        copy: impl FnOnce() -> Result<(), BackendError>,
    ) -> Result<(), BackendError> {
        let mut pending = host.pending();
        forget_completed(&mut pending)?;
        self.timed(stream, kind, copy)?;
        match self.fence(stream) {
            Ok(fence) => {
                pending.push(fence);
                Ok(())
            }
            Err(e) => {
                // No fence: make sure the copy is over before the host may use the buffer.
                stream.synchronize()?;
                Err(e)
            }
        }
    }

    /// [`Backend::copy_h2d_async`](memhc_backend::Backend::copy_h2d_async): one DMA from the
    /// page-locked buffer, no staging, fenced in the buffer.
    pub(super) fn h2d_direct(
        &self,
        stream: &GpuStream<D>,
        (src, src_offset): (&GpuHostBuffer<D>, usize),
        (dst, dst_offset): (&GpuBuffer<D>, usize),
        len: usize,
    ) -> Result<(), BackendError> {
        dst.check_range(BackendOp::CopyH2D, dst_offset, len)?;
        check_range(
            BackendOp::CopyH2D,
            "host buffer",
            src.pinned().bytes(),
            src_offset,
            len,
        )?;
        if len == 0 {
            return Ok(());
        }
        self.copies.add(Copied::DirectH2d, len);
        self.fenced_host_copy(stream, src, WorkKind::CopyH2D, || {
            self.api.copy_h2d_async(
                stream.raw(),
                src.pinned(),
                src_offset,
                dst.memory(),
                dst_offset,
                len,
            )
        })
    }

    /// [`Backend::copy_d2h_async`](memhc_backend::Backend::copy_d2h_async): one DMA into the
    /// page-locked buffer, fenced in the buffer.
    pub(super) fn d2h_direct(
        &self,
        stream: &GpuStream<D>,
        (src, src_offset): (&GpuBuffer<D>, usize),
        (dst, dst_offset): (&GpuHostBuffer<D>, usize),
        len: usize,
    ) -> Result<(), BackendError> {
        src.check_range(BackendOp::CopyD2H, src_offset, len)?;
        check_range(
            BackendOp::CopyD2H,
            "host buffer",
            dst.pinned().bytes(),
            dst_offset,
            len,
        )?;
        if len == 0 {
            return Ok(());
        }
        self.copies.add(Copied::DirectD2h, len);
        self.fenced_host_copy(stream, dst, WorkKind::CopyD2H, || {
            self.api.copy_d2h_async(
                stream.raw(),
                src.memory(),
                src_offset,
                dst.pinned(),
                dst_offset,
                len,
            )
        })
    }
}
