//! The host backend's copies between host memory and its "device" buffers, plain or tiled
//! ([`memhc_backend::tiles`]): a tiled copy is the same job with a strided copy in place of
//! the one contiguous one, so the packed order is rearranged while it is copied, never in a
//! pass of its own.

use std::sync::Arc;

use memhc_backend::tiles::Tiles;
use memhc_backend::timeline::WorkKind;
use memhc_backend::{BackendError, BackendOp, check_range};

use super::memory::{Cell, HostBuffer, HostPinned};
use super::{HostBackend, HostStream, check_copy_range};

/// Copies `src` into `dst` whole: plainly, or from the packed order into the tiled order.
fn write(tiles: Option<&Tiles>, src: &[u8], dst: &mut [u8]) {
    match tiles {
        Some(t) => t.scatter(src, dst),
        None => dst.copy_from_slice(src),
    }
}

/// Copies `src` into `dst` whole: plainly, or from the tiled order into the packed order.
fn read(tiles: Option<&Tiles>, src: &[u8], dst: &mut [u8]) {
    match tiles {
        Some(t) => t.gather(src, dst),
        None => dst.copy_from_slice(src),
    }
}

/// The error of a job that found a buffer's lock poisoned.
fn poisoned(op: BackendOp) -> BackendError {
    BackendError::Async {
        op,
        message: "buffer lock poisoned".into(),
    }
}

impl HostBackend {
    /// [`Backend::copy_h2d`](memhc_backend::Backend::copy_h2d), tiled when `tiles` is given.
    pub(super) fn write_in(
        &self,
        stream: &HostStream,
        src: &[u8],
        dst: &HostBuffer,
        dst_offset: usize,
        tiles: Option<Tiles>,
    ) -> Result<(), BackendError> {
        if let Some(t) = &tiles {
            t.check_len(BackendOp::CopyH2D, src.len())?;
        }
        check_copy_range(BackendOp::CopyH2D, dst, dst_offset, src.len())?;
        if src.is_empty() {
            return Ok(());
        }
        let staged = src.to_vec();
        let cell = Arc::clone(&dst.cell);
        self.submit(
            stream,
            WorkKind::CopyH2D,
            vec![Arc::clone(&cell)],
            move |_done| {
                let mut data = cell
                    .data
                    .write()
                    .map_err(|_| poisoned(BackendOp::CopyH2D))?;
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(data.as_mut_slice());
                let end = dst_offset + staged.len();
                write(tiles.as_ref(), &staged, &mut bytes[dst_offset..end]);
                Ok(())
            },
        )
    }

    /// [`Backend::copy_d2h`](memhc_backend::Backend::copy_d2h), tiled when `tiles` is given.
    pub(super) fn read_out(
        &self,
        stream: &HostStream,
        src: &HostBuffer,
        src_offset: usize,
        dst: &mut [u8],
        tiles: Option<Tiles>,
    ) -> Result<(), BackendError> {
        if let Some(t) = &tiles {
            t.check_len(BackendOp::CopyD2H, dst.len())?;
        }
        check_copy_range(BackendOp::CopyD2H, src, src_offset, dst.len())?;
        if dst.is_empty() {
            return Ok(());
        }
        let len = dst.len();
        let cell = Arc::clone(&src.cell);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
        self.submit(
            stream,
            WorkKind::CopyD2H,
            vec![Arc::clone(&cell)],
            move |done| {
                let data = cell.data.read().map_err(|_| poisoned(BackendOp::CopyD2H))?;
                let bytes: &[u8] = bytemuck::cast_slice(data.as_slice());
                let mut copied = vec![0u8; len];
                read(
                    tiles.as_ref(),
                    &bytes[src_offset..src_offset + len],
                    &mut copied,
                );
                drop(data);
                // The caller may free the buffer as soon as it has the bytes: stop counting first.
                drop(done);
                // The receiver only disappears if the caller is gone; nothing to report then.
                let _ = tx.send(copied);
                Ok(())
            },
        )?;
        let copied = rx.recv().map_err(|_| {
            // The job failed or the stream stopped: report the stream's own error if it has one.
            match stream.state.wait_idle() {
                Err(e) => e,
                Ok(()) => BackendError::Async {
                    op: BackendOp::CopyD2H,
                    message: "the copy did not run".into(),
                },
            }
        })?;
        dst.copy_from_slice(&copied);
        Ok(())
    }

    /// [`Backend::copy_h2d_async`](memhc_backend::Backend::copy_h2d_async) (`tiles`: tiled
    /// into the device buffer).
    #[allow(clippy::too_many_arguments)] // the trait's arguments, and the tiling
    pub(super) fn upload(
        &self,
        stream: &HostStream,
        src: &HostPinned,
        src_offset: usize,
        dst: &HostBuffer,
        dst_offset: usize,
        len: usize,
        tiles: Option<Tiles>,
    ) -> Result<(), BackendError> {
        check_range(
            BackendOp::CopyH2D,
            "host buffer",
            src.bytes,
            src_offset,
            len,
        )?;
        check_copy_range(BackendOp::CopyH2D, dst, dst_offset, len)?;
        let (from, to) = (Arc::clone(&src.cell), Arc::clone(&dst.cell));
        let job = Job {
            op: BackendOp::CopyH2D,
            from,
            src_offset,
            to,
            dst_offset,
            len,
        };
        self.queue(stream, WorkKind::CopyH2D, job, move |s, d| {
            write(tiles.as_ref(), s, d)
        })
    }

    /// [`Backend::copy_d2h_async`](memhc_backend::Backend::copy_d2h_async) (`tiles`: tiled
    /// in the device buffer).
    #[allow(clippy::too_many_arguments)] // the trait's arguments, and the tiling
    pub(super) fn download(
        &self,
        stream: &HostStream,
        src: &HostBuffer,
        src_offset: usize,
        dst: &HostPinned,
        dst_offset: usize,
        len: usize,
        tiles: Option<Tiles>,
    ) -> Result<(), BackendError> {
        check_copy_range(BackendOp::CopyD2H, src, src_offset, len)?;
        check_range(
            BackendOp::CopyD2H,
            "host buffer",
            dst.bytes,
            dst_offset,
            len,
        )?;
        let (from, to) = (Arc::clone(&src.cell), Arc::clone(&dst.cell));
        let job = Job {
            op: BackendOp::CopyD2H,
            from,
            src_offset,
            to,
            dst_offset,
            len,
        };
        self.queue(stream, WorkKind::CopyD2H, job, move |s, d| {
            read(tiles.as_ref(), s, d)
        })
    }

    /// Queues `job`, which runs `copy` on its two ranges.
    fn queue(
        &self,
        stream: &HostStream,
        kind: WorkKind,
        job: Job,
        copy: impl FnOnce(&[u8], &mut [u8]) + Send + 'static,
    ) -> Result<(), BackendError> {
        if job.len == 0 {
            return Ok(());
        }
        let cells = vec![Arc::clone(&job.from), Arc::clone(&job.to)];
        self.submit(stream, kind, cells, move |_done| job.run(copy))
    }
}

/// A copy between two cells: `len` bytes of `from` (from byte `src_offset`) into `to` (from
/// byte `dst_offset`).
struct Job {
    op: BackendOp,
    from: Arc<Cell>,
    src_offset: usize,
    to: Arc<Cell>,
    dst_offset: usize,
    len: usize,
}

impl Job {
    /// The copy job's work: the two locks are taken in one global order (by address), so that
    /// two copies between the same two cells in opposite directions, on two streams, cannot
    /// deadlock.
    fn run(self, copy: impl FnOnce(&[u8], &mut [u8])) -> Result<(), BackendError> {
        let (from, to) = (&*self.from, &*self.to);
        let from_first = std::ptr::from_ref(from) < std::ptr::from_ref(to);
        let (data, mut out) = if from_first {
            let data = from.data.read().map_err(|_| poisoned(self.op))?;
            (data, to.data.write().map_err(|_| poisoned(self.op))?)
        } else {
            let out = to.data.write().map_err(|_| poisoned(self.op))?;
            (from.data.read().map_err(|_| poisoned(self.op))?, out)
        };
        let src_bytes: &[u8] = bytemuck::cast_slice(data.as_slice());
        let dst_bytes: &mut [u8] = bytemuck::cast_slice_mut(out.as_mut_slice());
        copy(
            &src_bytes[self.src_offset..self.src_offset + self.len],
            &mut dst_bytes[self.dst_offset..self.dst_offset + self.len],
        );
        Ok(())
    }
}
