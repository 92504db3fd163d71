//! Copies staged through the stream's page-locked buffers: uploads a chunk at a time, downloads
//! behind a fence, and giving a staging buffer back after its copy, failed or not.

use memhc_backend::BackendError;

use super::GpuBackend;
use memhc_backend::timeline::WorkKind;

use crate::api::{DeviceApi, PinnedAllocation, PitchedCopy};
use crate::copy_stats::Copied;
use crate::event::Fence;
use crate::memory::StagingBuffer;
use crate::staging::Completion;
use crate::stream::{GpuStream, Pool};

/// Where one piece of a copy back comes from on the device.
#[derive(Clone, Debug)]
pub(super) enum Source {
    /// Contiguous bytes from this offset.
    Plain(usize),
    /// Several 2D copies into one staging buffer (parts of a tiled object that are back to
    /// back in the packed order), their destinations relative to the buffer: one buffer, one
    /// read out, however small each part is.
    Parts(Vec<PitchedCopy>),
}

impl<D: DeviceApi> GpuBackend<D> {
    /// Gives a staging buffer back after `result`, the enqueueing of a copy that reads or
    /// writes it: in flight behind a fence if the copy was enqueued; idle if it was not, or
    /// once the stream is idle; discarded if even that is unknown.
    pub(super) fn settle(
        &self,
        pool: &mut Pool<D>,
        stream: &GpuStream<D>,
        buffer: StagingBuffer<D>,
        result: Result<(), BackendError>,
    ) -> Result<(), BackendError> {
        let fenced = result.and_then(|()| self.fence(stream));
        match fenced {
            Ok(fence) => {
                pool.in_flight(buffer, fence);
                Ok(())
            }
            Err(e) => {
                recover(pool, stream, buffer);
                Err(e)
            }
        }
    }

    /// Stages `src` through the stream's page-locked buffers, a chunk at a time, and enqueues
    /// the copies into `dst` from byte `dst_offset` (a range the caller checked). While one
    /// chunk travels, the next is copied into another buffer; past the in-flight cap, the
    /// oldest is waited for. `src` has been read when this returns.
    pub(super) fn upload(
        &self,
        stream: &GpuStream<D>,
        src: &[u8],
        dst: &D::Memory,
        dst_offset: usize,
    ) -> Result<(), BackendError> {
        let chunk = self.options.staging.chunk;
        let mut pool = stream.staging();
        for (i, piece) in src.chunks(chunk).enumerate() {
            let mut buffer =
                pool.acquire(piece.len(), |n| self.api.host_alloc(n).map(StagingBuffer))?;
            if let Err(e) = buffer.0.write(0, piece) {
                pool.put_idle(buffer);
                return Err(e);
            }
            self.copies.add(Copied::StagedH2d, piece.len());
            let enqueued = self.api.copy_h2d_async(
                stream.raw(),
                &buffer.0,
                0,
                dst,
                dst_offset + i * chunk,
                piece.len(),
            );
            self.settle(&mut pool, stream, buffer, enqueued)?;
        }
        Ok(())
    }

    /// Copies pieces of `src` back into host slices through the stream's staging buffers,
    /// pipelined: the copy of the next piece is enqueued before the host reads the previous
    /// one out. Each piece is where it comes from and the slice it fills (of its length).
    pub(super) fn download_pieces<'a>(
        &self,
        stream: &GpuStream<D>,
        src: &D::Memory,
        pieces: impl Iterator<Item = (Source, &'a mut [u8])>,
    ) -> Result<(), BackendError> {
        let mark = self.begin(stream)?;
        let mut pool = stream.staging();
        let mut in_flight: Option<(StagingBuffer<D>, Fence<D>, &mut [u8])> = None;
        let mut outcome = Ok(());
        let mut total = 0;
        for (from, piece) in pieces {
            total += piece.len();
            let next = self.download(stream, &mut pool, src, from, piece.len());
            let done = match in_flight.take() {
                Some((b, f, out)) => read_out(&mut pool, b, &f, out),
                None => Ok(()),
            };
            match next {
                Ok((b, f)) => in_flight = Some((b, f, piece)),
                Err(e) => outcome = Err(e),
            }
            outcome = done.and(outcome);
            if outcome.is_err() {
                break;
            }
        }
        if outcome.is_err() {
            // What is still queued must finish before its buffer is reused.
            if let Some((b, _, _)) = in_flight.take() {
                recover(&mut pool, stream, b);
            }
            return self.end(stream, WorkKind::CopyD2H, mark, outcome);
        }
        // The end is recorded right after the last copy, before the host waits for it.
        self.end(stream, WorkKind::CopyD2H, mark, Ok(()))?;
        match in_flight {
            Some((b, f, out)) => read_out(&mut pool, b, &f, out),
            None => Ok(()),
        }?;
        self.copies.add(Copied::StagedD2h, total);
        Ok(())
    }

    /// Enqueues a copy of `len` bytes of `src` from `from` into a staging buffer of the
    /// stream, and the fence after it.
    pub(super) fn download(
        &self,
        stream: &GpuStream<D>,
        pool: &mut Pool<D>,
        src: &D::Memory,
        from: Source,
        len: usize,
    ) -> Result<(StagingBuffer<D>, Fence<D>), BackendError> {
        let buffer = pool.acquire(len, |n| self.api.host_alloc(n).map(StagingBuffer))?;
        let copied = match from {
            Source::Plain(offset) => {
                self.api
                    .copy_d2h_async(stream.raw(), src, offset, &buffer.0, 0, len)
            }
            Source::Parts(copies) => copies.iter().try_for_each(|copy| {
                self.api
                    .copy_d2h_pitched_async(stream.raw(), src, &buffer.0, copy)
            }),
        };
        match copied.and_then(|()| self.fence(stream)) {
            Ok(fence) => Ok((buffer, fence)),
            Err(e) => {
                recover(pool, stream, buffer);
                Err(e)
            }
        }
    }
}

/// Gives back a staging buffer that a copy may still use after a failure: idle once the
/// stream is idle, or discarded if even that is unknown.
pub(super) fn recover<D: DeviceApi>(
    pool: &mut Pool<D>,
    stream: &GpuStream<D>,
    buffer: StagingBuffer<D>,
) {
    if stream.synchronize().is_ok() {
        pool.put_idle(buffer);
    } else {
        pool.discard(buffer);
    }
}

/// Waits for `fence`, copies the staging buffer out into `out`, and gives the buffer back.
pub(super) fn read_out<D: DeviceApi>(
    pool: &mut Pool<D>,
    buffer: StagingBuffer<D>,
    fence: &Fence<D>,
    out: &mut [u8],
) -> Result<(), BackendError> {
    if let Err(e) = fence.wait() {
        // The copy may still be running: the buffer cannot be reused.
        pool.discard(buffer);
        return Err(e);
    }
    let read = buffer.0.read(0, out);
    pool.put_idle(buffer);
    read
}
