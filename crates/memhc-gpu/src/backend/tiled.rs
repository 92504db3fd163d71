//! Tiled copies on a GPU ([`memhc_backend::tiles`]): the packed order on the host, the tiled
//! order on the device, rearranged by the copy engine itself, one 2D copy
//! ([`DeviceApi::copy_h2d_pitched_async`], `cuMemcpy2DAsync` / `hipMemcpy2DAsync`) per
//! component: a component's rows are contiguous on the host and one whole-matrix row apart on
//! the device.
//!
//! From and into page-locked memory a tiled copy is those 2D copies, or, with
//! [`TiledCopies::PerColumn`], one 3D copy per block column (`cuMemcpy3DAsync` /
//! `hipMemcpy3DAsync`: `g` calls instead of `g²`), straight from the caller's buffer and fenced
//! as one copy. Through the stream's staging (a host slice), a
//! component, or as many of its rows as fit a staging chunk, is one staged piece: its rows are
//! contiguous in the slice, so staging is the same plain copy as for an untiled object, and the
//! 2D copy goes between the staging buffer and the device.

use memhc_backend::tiles::Tiles;
use memhc_backend::timeline::WorkKind;
use memhc_backend::{BackendError, BackendOp, check_range};

use super::GpuBackend;
use super::staged::Source;
use crate::api::{DeviceApi, PinnedAllocation, PitchedCopy};
use crate::copy_stats::Copied;
use crate::memory::{GpuBuffer, GpuHostBuffer, StagingBuffer};
use crate::options::TiledCopies;
use crate::stream::GpuStream;

/// Which way a tiled copy goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// From the packed order (host) to the tiled order (device).
    ToTiled,
    /// From the tiled order (device) to the packed order (host).
    ToPacked,
}

/// The direct path's copies of `tiles` as `how` says, between the packed order from byte
/// `packed` of the host buffer and the tiled order from byte `tiled` of the device buffer:
/// one 2D copy per component, or one 3D copy per block column.
fn direct_copies(
    tiles: &Tiles,
    how: TiledCopies,
    way: Way,
    packed: usize,
    tiled: usize,
) -> Vec<PitchedCopy> {
    let orient = |copy: PitchedCopy| match way {
        Way::ToTiled => copy,
        Way::ToPacked => copy.reversed(),
    };
    match how {
        TiledCopies::PerComponent => parts(tiles, usize::MAX)
            .map(|part| {
                orient(PitchedCopy::plane(
                    (packed + part.packed, part.width),
                    (tiled + part.tiled, part.pitch),
                    (part.width, part.rows),
                ))
            })
            .collect(),
        TiledCopies::PerColumn => tiles
            .columns()
            .map(|c| {
                orient(PitchedCopy {
                    src_offset: packed + c.packed,
                    src_pitch: c.packed_pitch,
                    src_height: c.packed_height,
                    dst_offset: tiled + c.tiled,
                    dst_pitch: c.tiled_pitch,
                    dst_height: c.tiled_height,
                    width: c.width,
                    height: c.rows,
                    depth: c.depth,
                })
            })
            .collect(),
    }
}

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
                    let copy = PitchedCopy::plane(
                        (part.packed - start, part.width),
                        (dst_offset + part.tiled, part.pitch),
                        (part.width, part.rows),
                    );
                    self.api
                        .copy_h2d_pitched_async(stream.raw(), &buffer.0, dst.memory(), &copy)
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
                .map(|part| {
                    PitchedCopy::plane(
                        (src_offset + part.tiled, part.pitch),
                        (part.packed - start, part.width),
                        (part.width, part.rows),
                    )
                })
                .collect();
            (Source::Parts(copies), piece)
        });
        self.download_pieces(stream, src.memory(), pieces)
    }

    /// [`Backend::copy_h2d_async_tiled`](memhc_backend::Backend::copy_h2d_async_tiled): one 2D
    /// copy per component, or one 3D copy per block column ([`TiledCopies`]), from the
    /// page-locked buffer, fenced as one copy.
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
            let how = self.options.tiled;
            direct_copies(tiles, how, Way::ToTiled, src_offset, dst_offset)
                .iter()
                .try_for_each(|copy| {
                    self.api
                        .copy_h2d_pitched_async(stream.raw(), src.pinned(), dst.memory(), copy)
                })
        })
    }

    /// [`Backend::copy_d2h_async_tiled`](memhc_backend::Backend::copy_d2h_async_tiled): one 2D
    /// copy per component, or one 3D copy per block column ([`TiledCopies`]), into the
    /// page-locked buffer, fenced as one copy.
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
            let how = self.options.tiled;
            direct_copies(tiles, how, Way::ToPacked, dst_offset, src_offset)
                .iter()
                .try_for_each(|copy| {
                    self.api
                        .copy_d2h_pitched_async(stream.raw(), src.memory(), dst.pinned(), copy)
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

    /// Every row each way of issuing the direct path's copies moves: `(source, destination)`.
    fn rows_of(copies: &[PitchedCopy]) -> Vec<(usize, usize)> {
        let mut rows: Vec<_> = copies.iter().flat_map(|c| c.rows()).collect();
        rows.sort_unstable();
        rows
    }

    #[test]
    fn per_column_copies_move_the_rows_per_component_copies_do() {
        for (g, r, c) in [(4, 5, 3), (4, 3, 3), (3, 1, 4), (1, 2, 2)] {
            let t = Tiles::new(g, r, c).expect("tiles");
            for way in [Way::ToTiled, Way::ToPacked] {
                let comp = direct_copies(&t, TiledCopies::PerComponent, way, 16, 48);
                let cols = direct_copies(&t, TiledCopies::PerColumn, way, 16, 48);
                assert_eq!((comp.len(), cols.len()), (g * g, g));
                assert_eq!(
                    rows_of(&comp),
                    rows_of(&cols),
                    "{g}x{g} of {r}x{c}, {way:?}"
                );
                for copy in cols.iter().chain(&comp) {
                    let op = BackendOp::CopyH2D;
                    let (src, dst) = copy.spans(op).expect("a valid copy");
                    let (host, device) = match way {
                        Way::ToTiled => (src, dst),
                        Way::ToPacked => (dst, src),
                    };
                    assert!(host.0 >= 16 && host.0 + host.1 <= 16 + t.bytes());
                    assert!(device.0 >= 48 && device.0 + device.1 <= 48 + t.bytes());
                }
            }
        }
    }
}
