//! Tiled copies on a GPU ([`memhc_backend::tiles`]): the packed order on the host, the tiled
//! order on the device, rearranged by the copy engine itself, one 2D copy
//! ([`DeviceApi::copy_h2d_2d_async`], `cuMemcpy2DAsync` / `hipMemcpy2DAsync`) per component:
//! a component's rows are contiguous on the host and one whole-matrix row apart on the device.
//!
//! From and into page-locked memory a tiled copy is those 2D copies, straight from the
//! caller's buffer and fenced as one copy. Through the stream's staging (a host slice), a
//! component, or as many of its rows as fit a staging chunk, is one staged piece: its rows are
//! contiguous in the slice, so staging is the same plain copy as for an untiled object, and the
//! 2D copy goes between the staging buffer and the device.

use memhc_backend::tiles::Tiles;
use memhc_backend::timeline::WorkKind;
use memhc_backend::{BackendError, BackendOp, check_range};

use super::GpuBackend;
use super::staged::Source;
use crate::api::{Copy2D, DeviceApi, PinnedAllocation};
use crate::copy_stats::Copied;
use crate::memory::{GpuBuffer, GpuHostBuffer, StagingBuffer};
use crate::stream::GpuStream;

/// Some rows of one component: `rows` rows of `width` bytes, from byte `packed` of the packed
/// order (contiguous there) and byte `tiled` of the tiled order (rows `pitch` apart).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Part {
    packed: usize,
    tiled: usize,
    rows: usize,
    width: usize,
    pitch: usize,
}

impl Part {
    fn bytes(&self) -> usize {
        self.rows * self.width
    }
}

/// The components of `tiles`, each cut into runs of rows of at most `chunk` bytes (one row at
/// least), in the packed order: the parts tile the packed bytes back to back.
fn parts(tiles: &Tiles, chunk: usize) -> impl Iterator<Item = Part> + '_ {
    tiles.pieces().flat_map(move |p| {
        let per = (chunk / p.width.max(1)).max(1);
        (0..p.rows).step_by(per).map(move |first| Part {
            packed: p.packed + first * p.width,
            tiled: p.tiled + first * p.tiled_pitch,
            rows: per.min(p.rows - first),
            width: p.width,
            pitch: p.tiled_pitch,
        })
    })
}

/// The parts of `tiles` (see [`parts`]) in groups of at most `chunk` bytes (one part at
/// least), each group back to back in the packed order: one staging buffer and one host copy
/// per group, so that the host copies are as large as for a plain copy (a component alone is
/// below the size at which a host copy is split over threads).
fn groups(tiles: &Tiles, chunk: usize) -> impl Iterator<Item = Vec<Part>> + '_ {
    let mut parts = parts(tiles, chunk).peekable();
    std::iter::from_fn(move || {
        let first = parts.next()?;
        let mut group = vec![first];
        let mut bytes = first.bytes();
        while let Some(next) = parts.next_if(|p| bytes + p.bytes() <= chunk) {
            bytes += next.bytes();
            group.push(next);
        }
        Some(group)
    })
}

/// The bytes of a group of parts.
fn group_bytes(group: &[Part]) -> usize {
    group.iter().map(Part::bytes).sum()
}

impl<D: DeviceApi> GpuBackend<D> {
    /// [`Backend::copy_h2d_tiled`](memhc_backend::Backend::copy_h2d_tiled): each group of parts
    /// staged in one buffer (one host copy), then one 2D copy per part from it.
    pub(super) fn h2d_tiled(
        &self,
        stream: &GpuStream<D>,
        src: &[u8],
        dst: &GpuBuffer<D>,
        dst_offset: usize,
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        tiles.check_len(BackendOp::CopyH2D, src.len())?;
        dst.check_range(BackendOp::CopyH2D, dst_offset, src.len())?;
        let chunk = self.options.staging.chunk;
        self.timed(stream, WorkKind::CopyH2D, || {
            let mut pool = stream.staging();
            for group in groups(tiles, chunk) {
                let start = group[0].packed;
                let piece = &src[start..start + group_bytes(&group)];
                let mut buffer =
                    pool.acquire(piece.len(), |n| self.api.host_alloc(n).map(StagingBuffer))?;
                if let Err(e) = buffer.0.write(0, piece) {
                    pool.put_idle(buffer);
                    return Err(e);
                }
                self.copies.add(Copied::StagedH2d, piece.len());
                let enqueued = group.iter().try_for_each(|part| {
                    let copy = Copy2D {
                        src_offset: part.packed - start,
                        src_pitch: part.width,
                        dst_offset: dst_offset + part.tiled,
                        dst_pitch: part.pitch,
                        width: part.width,
                        height: part.rows,
                    };
                    self.api
                        .copy_h2d_2d_async(stream.raw(), &buffer.0, dst.memory(), &copy)
                });
                self.settle(&mut pool, stream, buffer, enqueued)?;
            }
            Ok(())
        })
    }

    /// [`Backend::copy_d2h_tiled`](memhc_backend::Backend::copy_d2h_tiled): each part one 2D
    /// copy into a staging buffer, pipelined as a plain copy back is.
    pub(super) fn d2h_tiled(
        &self,
        stream: &GpuStream<D>,
        src: &GpuBuffer<D>,
        src_offset: usize,
        dst: &mut [u8],
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        tiles.check_len(BackendOp::CopyD2H, dst.len())?;
        src.check_range(BackendOp::CopyD2H, src_offset, dst.len())?;
        let chunk = self.options.staging.chunk;
        let mut rest = dst;
        let pieces = groups(tiles, chunk).map(move |group| {
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(group_bytes(&group));
            rest = tail;
            let start = group[0].packed;
            let copies = group
                .iter()
                .map(|part| Copy2D {
                    src_offset: src_offset + part.tiled,
                    src_pitch: part.pitch,
                    dst_offset: part.packed - start,
                    dst_pitch: part.width,
                    width: part.width,
                    height: part.rows,
                })
                .collect();
            (Source::Parts(copies), piece)
        });
        self.download_pieces(stream, src.memory(), pieces)
    }

    /// [`Backend::copy_h2d_async_tiled`](memhc_backend::Backend::copy_h2d_async_tiled): one 2D
    /// copy per component from the page-locked buffer, fenced as one copy.
    pub(super) fn h2d_async_tiled(
        &self,
        stream: &GpuStream<D>,
        (src, src_offset): (&GpuHostBuffer<D>, usize),
        (dst, dst_offset): (&GpuBuffer<D>, usize),
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let len = tiles.bytes();
        dst.check_range(BackendOp::CopyH2D, dst_offset, len)?;
        let host = src.pinned().bytes();
        check_range(BackendOp::CopyH2D, "host buffer", host, src_offset, len)?;
        self.copies.add(Copied::DirectH2d, len);
        self.fenced_host_copy(stream, src, WorkKind::CopyH2D, || {
            parts(tiles, usize::MAX).try_for_each(|part| {
                let copy = Copy2D {
                    src_offset: src_offset + part.packed,
                    src_pitch: part.width,
                    dst_offset: dst_offset + part.tiled,
                    dst_pitch: part.pitch,
                    width: part.width,
                    height: part.rows,
                };
                self.api
                    .copy_h2d_2d_async(stream.raw(), src.pinned(), dst.memory(), &copy)
            })
        })
    }

    /// [`Backend::copy_d2h_async_tiled`](memhc_backend::Backend::copy_d2h_async_tiled): one 2D
    /// copy per component into the page-locked buffer, fenced as one copy.
    pub(super) fn d2h_async_tiled(
        &self,
        stream: &GpuStream<D>,
        (src, src_offset): (&GpuBuffer<D>, usize),
        (dst, dst_offset): (&GpuHostBuffer<D>, usize),
        tiles: &Tiles,
    ) -> Result<(), BackendError> {
        let len = tiles.bytes();
        src.check_range(BackendOp::CopyD2H, src_offset, len)?;
        let host = dst.pinned().bytes();
        check_range(BackendOp::CopyD2H, "host buffer", host, dst_offset, len)?;
        self.copies.add(Copied::DirectD2h, len);
        self.fenced_host_copy(stream, dst, WorkKind::CopyD2H, || {
            parts(tiles, usize::MAX).try_for_each(|part| {
                let copy = Copy2D {
                    src_offset: src_offset + part.tiled,
                    src_pitch: part.pitch,
                    dst_offset: dst_offset + part.packed,
                    dst_pitch: part.width,
                    width: part.width,
                    height: part.rows,
                };
                self.api
                    .copy_d2h_2d_async(stream.raw(), src.memory(), dst.pinned(), &copy)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_the_packed_order_back_to_back_within_the_chunk() {
        let t = Tiles::new(4, 5, 3).expect("tiles");
        for chunk in [1, 48, 100, 1 << 20] {
            let all: Vec<Part> = parts(&t, chunk).collect();
            let mut at = 0;
            for p in &all {
                assert_eq!(p.packed, at);
                assert!(p.bytes() <= chunk.max(p.width));
                at += p.bytes();
            }
            assert_eq!(at, t.bytes());
        }
        assert_eq!(parts(&t, usize::MAX).count(), 16);
    }

    #[test]
    fn groups_fill_a_chunk_with_whole_parts_in_the_packed_order() {
        let t = Tiles::new(4, 5, 3).expect("tiles");
        let part = parts(&t, usize::MAX).next().expect("a part").bytes();
        for chunk in [1, part, 3 * part, 3 * part + 1, 1 << 20] {
            let mut at = 0;
            let mut count = 0;
            for g in groups(&t, chunk) {
                assert!(!g.is_empty());
                assert!(group_bytes(&g) <= chunk.max(g[0].bytes()), "chunk {chunk}");
                for p in &g {
                    assert_eq!(p.packed, at, "chunk {chunk}: back to back");
                    at += p.bytes();
                    count += 1;
                }
            }
            assert_eq!(at, t.bytes());
            assert_eq!(count, parts(&t, chunk).count());
        }
        // Whole components fit three to a chunk of three: 16 components make 6 groups.
        assert_eq!(groups(&t, 3 * part).count(), 6);
        assert_eq!(groups(&t, 1 << 20).count(), 1);
    }
}
