//! [`PitchedCopy`]: a 2D or 3D copy between page-locked host memory and the device, as the
//! [`DeviceApi`](super::DeviceApi) takes it.

use memhc_backend::{BackendError, BackendOp};

/// The bytes of one side of a copy: `(offset, len)`.
pub type Span = (usize, usize);

/// A pitched copy (the `cuMemcpy2DAsync` / `cuMemcpy3DAsync` form, HIP's alike): `depth`
/// slices of `height` rows of `width` bytes. Row `i` of slice `z` goes from byte
/// `src_offset + (z src_height + i) src_pitch` of the source to byte
/// `dst_offset + (z dst_height + i) dst_pitch` of the destination: each side's slices are
/// its pitch times its rows per slice apart (`CUDA_MEMCPY3D`'s `srcHeight` and `dstHeight`).
/// Depth 1 is a 2D copy, whose rows per slice do not matter. One component of a tiled object
/// is one 2D copy, one block column of it one 3D copy ([`memhc_backend::tiles`]).
///
/// The fields are plain numbers; [`PitchedCopy::spans`] checks them (the one place) before a
/// device API uses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PitchedCopy {
    /// Where the first row starts in the source, in bytes.
    pub src_offset: usize,
    /// Bytes between rows in the source (at least `width`).
    pub src_pitch: usize,
    /// Rows between slices in the source (at least `height` when `depth` > 1): slices are
    /// `src_pitch src_height` bytes apart.
    pub src_height: usize,
    /// Where the first row starts in the destination, in bytes.
    pub dst_offset: usize,
    /// Bytes between rows in the destination (at least `width`).
    pub dst_pitch: usize,
    /// Rows between slices in the destination (at least `height` when `depth` > 1): slices
    /// are `dst_pitch dst_height` bytes apart.
    pub dst_height: usize,
    /// Bytes of one row.
    pub width: usize,
    /// Rows of one slice.
    pub height: usize,
    /// Slices (1: a 2D copy).
    pub depth: usize,
}

impl PitchedCopy {
    /// A 2D copy (depth 1): `height` rows of `width` bytes, from rows `src_pitch` apart from
    /// byte `src_offset` to rows `dst_pitch` apart from byte `dst_offset`.
    pub fn plane(
        (src_offset, src_pitch): (usize, usize),
        (dst_offset, dst_pitch): (usize, usize),
        (width, height): (usize, usize),
    ) -> Self {
        PitchedCopy {
            src_offset,
            src_pitch,
            src_height: height,
            dst_offset,
            dst_pitch,
            dst_height: height,
            width,
            height,
            depth: 1,
        }
    }

    /// The same copy the other way: source and destination swapped (a read-back of what this
    /// copy uploads).
    pub fn reversed(self) -> Self {
        PitchedCopy {
            src_offset: self.dst_offset,
            src_pitch: self.dst_pitch,
            src_height: self.dst_height,
            dst_offset: self.src_offset,
            dst_pitch: self.src_pitch,
            dst_height: self.src_height,
            ..self
        }
    }

    /// Bytes copied, over all slices (saturating: [`PitchedCopy::spans`] refuses a copy whose
    /// numbers overflow).
    pub fn bytes(&self) -> usize {
        self.width
            .saturating_mul(self.height)
            .saturating_mul(self.depth)
    }

    /// The bytes of the source the copy spans, from its first row's start to its last row's
    /// end over all slices: `(offset, len)` (`len` 0 for an empty copy; saturating, as
    /// [`PitchedCopy::bytes`]).
    pub fn src_span(&self) -> Span {
        (
            self.src_offset,
            span(
                self.src_pitch,
                self.src_height,
                self.width,
                self.height,
                self.depth,
            )
            .unwrap_or(usize::MAX),
        )
    }

    /// The bytes of the destination the copy spans, as [`PitchedCopy::src_span`].
    pub fn dst_span(&self) -> Span {
        (
            self.dst_offset,
            span(
                self.dst_pitch,
                self.dst_height,
                self.width,
                self.height,
                self.depth,
            )
            .unwrap_or(usize::MAX),
        )
    }

    /// Checks the copy and gives its source and destination spans
    /// ([`PitchedCopy::src_span`], [`PitchedCopy::dst_span`]): each row fits its pitch on both
    /// sides, with more than one slice each slice fits its side's rows per slice, and no
    /// offset or span overflows `usize`. Anything else is [`BackendError::InvalidArgument`]
    /// for `op`. An empty copy (no bytes) is accepted as it is.
    pub fn spans(&self, op: BackendOp) -> Result<(Span, Span), BackendError> {
        let refuse = |why: String| Err(BackendError::invalid(op, why));
        if self.bytes() == 0 {
            return Ok(((self.src_offset, 0), (self.dst_offset, 0)));
        }
        if self.width > self.src_pitch || self.width > self.dst_pitch {
            return refuse(format!(
                "a pitched copy of rows of {} bytes, pitches {} (source) and {} (destination)",
                self.width, self.src_pitch, self.dst_pitch
            ));
        }
        if self.depth > 1 && (self.height > self.src_height || self.height > self.dst_height) {
            return refuse(format!(
                "a pitched copy of slices of {} rows, {} rows per slice (source) and {} \
                 (destination)",
                self.height, self.src_height, self.dst_height
            ));
        }
        let side = |offset: usize, pitch, rows| {
            let len = span(pitch, rows, self.width, self.height, self.depth)?;
            offset.checked_add(len).map(|_| (offset, len))
        };
        match (
            side(self.src_offset, self.src_pitch, self.src_height),
            side(self.dst_offset, self.dst_pitch, self.dst_height),
            self.width
                .checked_mul(self.height)
                .and_then(|n| n.checked_mul(self.depth)),
        ) {
            (Some(src), Some(dst), Some(_)) => Ok((src, dst)),
            _ => refuse(format!(
                "a pitched copy whose byte ranges overflow: {self:?}"
            )),
        }
    }

    /// Each row's source and destination offsets, slice by slice (saturating, as
    /// [`PitchedCopy::bytes`]).
    pub fn rows(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let at = |offset: usize, pitch: usize, rows: usize, z: usize, i: usize| {
            z.saturating_mul(rows)
                .saturating_add(i)
                .saturating_mul(pitch)
                .saturating_add(offset)
        };
        (0..self.depth).flat_map(move |z| {
            (0..self.height).map(move |i| {
                (
                    at(self.src_offset, self.src_pitch, self.src_height, z, i),
                    at(self.dst_offset, self.dst_pitch, self.dst_height, z, i),
                )
            })
        })
    }
}

/// Bytes from the first row's start to the last row's end over all slices (`None` on
/// overflow).
fn span(pitch: usize, rows: usize, width: usize, height: usize, depth: usize) -> Option<usize> {
    if width == 0 || height == 0 || depth == 0 {
        return Some(0);
    }
    let last_slice = (depth - 1).checked_mul(rows)?.checked_mul(pitch)?;
    let last_row = (height - 1).checked_mul(pitch)?;
    last_slice.checked_add(last_row)?.checked_add(width)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column() -> PitchedCopy {
        // One block column of a 4 x 4 grid of 2 x 3 components (E = 1 for short numbers):
        // rows of 3 bytes, 3 apart and 8 rows a slice on the host; 12 apart and 2 rows a
        // slice on the device.
        PitchedCopy {
            src_offset: 6,
            src_pitch: 3,
            src_height: 8,
            dst_offset: 3,
            dst_pitch: 12,
            dst_height: 2,
            width: 3,
            height: 2,
            depth: 4,
        }
    }

    #[test]
    fn a_3d_copy_covers_every_slice() {
        let c = column();
        assert_eq!(c.bytes(), 24);
        let rows: Vec<_> = c.rows().collect();
        assert_eq!(rows.len(), 8);
        assert_eq!(&rows[..3], &[(6, 3), (9, 15), (30, 27)]);
        assert_eq!(rows[7], (6 + 3 * 24 + 3, 3 + 3 * 24 + 12));
        assert_eq!(
            (c.src_span(), c.dst_span()),
            ((6, 3 * 24 + 6), (3, 3 * 24 + 15))
        );
        assert_eq!(
            c.spans(BackendOp::CopyH2D),
            Ok((c.src_span(), c.dst_span()))
        );
        let plane = PitchedCopy::plane((6, 3), (3, 12), (3, 2));
        assert_eq!((plane.depth, plane.bytes()), (1, 6));
        assert_eq!(plane.spans(BackendOp::CopyD2H), Ok(((6, 6), (3, 15))));
    }

    #[test]
    fn bad_shapes_are_refused_with_a_typed_error() {
        let refused = |c: PitchedCopy| {
            matches!(
                c.spans(BackendOp::CopyH2D),
                Err(BackendError::InvalidArgument { .. })
            )
        };
        let c = column();
        assert!(refused(PitchedCopy { width: 4, ..c }));
        assert!(refused(PitchedCopy { dst_pitch: 2, ..c }));
        assert!(refused(PitchedCopy { src_height: 1, ..c }));
        assert!(refused(PitchedCopy { dst_height: 1, ..c }));
        assert!(refused(PitchedCopy {
            src_offset: usize::MAX - 8,
            ..c
        }));
        assert!(refused(PitchedCopy {
            depth: usize::MAX,
            ..c
        }));
        // Rows per slice do not matter at depth 1, and an empty copy is nothing to check.
        assert!(!refused(PitchedCopy {
            src_height: 0,
            depth: 1,
            ..c
        }));
        assert!(!refused(PitchedCopy {
            width: 0,
            src_pitch: 0,
            ..c
        }));
        let huge = PitchedCopy {
            depth: usize::MAX,
            ..c
        };
        assert_eq!((huge.bytes(), huge.src_span().1), (usize::MAX, usize::MAX));
    }
}
