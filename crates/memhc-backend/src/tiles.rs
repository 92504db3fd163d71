//! Tiled objects: the device layout in which a packed object's `g x g` components, each an
//! `r x c` row-major matrix, form one `(g r) x (g c)` row-major matrix whose tile `(a, b)` is
//! component `g a + b` (a meson node: `g = 4`, 16 spin components of `N x N`, one `4N x 4N`
//! matrix; shared/DESIGN.md §11).
//!
//! The host keeps the components back to back (component `g a + b` at element
//! `(g a + b) r c`, each row-major), as every file format and API documents. On the device
//! component `g a + b` starts at element `a r (g c) + b c` and its rows are `g c` elements apart
//! (its leading dimension). The conversion is part of the copy itself: one 2D copy per
//! component (`r` rows of `c` elements, `c` apart on the host and `g c` on the device;
//! `cuMemcpy2DAsync` on a GPU, a strided copy on the host backend), never a pass of its own
//! over host memory.
//!
//! The components of one block column `b` (tiles `(a, b)`, `a = 0..g`) are also one 3D copy
//! ([`Tiles::columns`]; `cuMemcpy3DAsync` on a GPU): `g` slices of `r` rows of `c` elements,
//! slice `a` being component `(a, b)`. On the host the slices are `g r c` elements apart
//! (every `g`-th component) and rows `c`; on the device slices are `r g c` apart (one block
//! row of the whole matrix) and rows `g c`. So a tiled copy is `g` such copies, against `g²`
//! 2D ones.
//!
//! With this layout a contraction whose terms are the block product
//! `out[g a + e] = Σ_b A[g a + b] B[g b + e]` (the meson4x4 mapping) is one GEMM of the whole
//! matrices, where the packed layout needs `g` accumulating batches of `g²` products.

use std::num::NonZeroU32;

use crate::{BackendError, BackendOp, ELEMENT_BYTES};

/// The tiling of a packed object: `grid x grid` components of `rows x cols` elements. See the
/// [module documentation](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Tiles {
    grid: NonZeroU32,
    rows: NonZeroU32,
    cols: NonZeroU32,
}

/// One 2D piece of a tiled copy: one component, `rows` rows of `width` bytes. Offsets and
/// pitches are in bytes, on the packed (host) side and the tiled (device) side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// Where the component starts in the packed order.
    pub packed: usize,
    /// Where the component starts in the tiled order.
    pub tiled: usize,
    /// Rows of the component.
    pub rows: usize,
    /// Bytes of one row.
    pub width: usize,
    /// Bytes between rows in the packed order (`width`).
    pub packed_pitch: usize,
    /// Bytes between rows in the tiled order (the whole matrix's row).
    pub tiled_pitch: usize,
}

impl Piece {
    /// Each row's offsets, `(packed, tiled)` in bytes, in order.
    pub fn row_offsets(&self) -> impl Iterator<Item = (usize, usize)> + use<> {
        let p = *self;
        (0..p.rows).map(move |i| (p.packed + i * p.packed_pitch, p.tiled + i * p.tiled_pitch))
    }
}

/// One 3D piece of a tiled copy: one block column, `depth` slices (its components, top to
/// bottom) of `rows` rows of `width` bytes. Offsets and pitches are in bytes; rows per slice
/// (the `CUDA_MEMCPY3D` `srcHeight` / `dstHeight` form: slices are pitch times that apart) on
/// each side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    /// Where the column's first component starts in the packed order.
    pub packed: usize,
    /// Where the column's first component starts in the tiled order.
    pub tiled: usize,
    /// Rows of one component (one slice).
    pub rows: usize,
    /// Bytes of one row.
    pub width: usize,
    /// Components in the column (slices: the grid).
    pub depth: usize,
    /// Bytes between rows in the packed order (`width`).
    pub packed_pitch: usize,
    /// Rows of `packed_pitch` between slices in the packed order (`grid` components' rows).
    pub packed_height: usize,
    /// Bytes between rows in the tiled order (the whole matrix's row).
    pub tiled_pitch: usize,
    /// Rows of `tiled_pitch` between slices in the tiled order (one component's rows).
    pub tiled_height: usize,
}

impl Column {
    /// Each row's offsets, `(packed, tiled)` in bytes, slice by slice.
    pub fn row_offsets(&self) -> impl Iterator<Item = (usize, usize)> + use<> {
        let c = *self;
        (0..c.depth).flat_map(move |z| {
            (0..c.rows).map(move |i| {
                (
                    c.packed + (z * c.packed_height + i) * c.packed_pitch,
                    c.tiled + (z * c.tiled_height + i) * c.tiled_pitch,
                )
            })
        })
    }

    /// Bytes of the column.
    pub fn bytes(&self) -> usize {
        self.depth * self.rows * self.width
    }
}

impl Tiles {
    /// `grid x grid` components of `rows x cols` elements each, or `None` if a number is zero
    /// or above `u32::MAX`, or the object's bytes overflow `usize`.
    pub fn new(grid: usize, rows: usize, cols: usize) -> Option<Self> {
        let n = |x: usize| NonZeroU32::new(u32::try_from(x).ok()?);
        grid.checked_mul(grid)?
            .checked_mul(rows)?
            .checked_mul(cols)?
            .checked_mul(ELEMENT_BYTES)?;
        Some(Tiles {
            grid: n(grid)?,
            rows: n(rows)?,
            cols: n(cols)?,
        })
    }

    /// Components along each side of the matrix.
    pub fn grid(&self) -> usize {
        self.grid.get() as usize
    }

    /// Rows of one component.
    pub fn rows(&self) -> usize {
        self.rows.get() as usize
    }

    /// Columns of one component.
    pub fn cols(&self) -> usize {
        self.cols.get() as usize
    }

    /// Number of components (`grid²`).
    pub fn components(&self) -> usize {
        self.grid() * self.grid()
    }

    /// Elements of one component.
    pub fn component_elems(&self) -> usize {
        self.rows() * self.cols()
    }

    /// Elements of the object.
    pub fn elems(&self) -> usize {
        self.components() * self.component_elems()
    }

    /// Bytes of the object.
    pub fn bytes(&self) -> usize {
        self.elems() * ELEMENT_BYTES
    }

    /// Elements between consecutive rows of the whole matrix: the leading dimension of every
    /// component's row-major view on the device.
    pub fn row_stride(&self) -> usize {
        self.grid() * self.cols()
    }

    /// Where component `c` starts on the device, in elements from the object's start (`None`
    /// past the last component).
    pub fn offset(&self, c: usize) -> Option<usize> {
        (c < self.components()).then(|| {
            let (a, b) = (c / self.grid(), c % self.grid());
            a * self.rows() * self.row_stride() + b * self.cols()
        })
    }

    /// Checks that a host slice of `len` bytes, the packed side of a tiled copy `op`, holds the
    /// object exactly.
    pub fn check_len(&self, op: BackendOp, len: usize) -> Result<(), BackendError> {
        if len == self.bytes() {
            return Ok(());
        }
        Err(BackendError::invalid(
            op,
            format!(
                "a tiled copy of {} bytes given {len} bytes of host memory",
                self.bytes()
            ),
        ))
    }

    /// The copy as 2D pieces, one per component, in component order.
    pub fn pieces(&self) -> impl Iterator<Item = Piece> + '_ {
        let width = self.cols() * ELEMENT_BYTES;
        let tiled_pitch = self.row_stride() * ELEMENT_BYTES;
        let component = self.component_elems() * ELEMENT_BYTES;
        (0..self.components()).map(move |c| Piece {
            packed: c * component,
            tiled: self.offset(c).unwrap_or(0) * ELEMENT_BYTES,
            rows: self.rows(),
            width,
            packed_pitch: width,
            tiled_pitch,
        })
    }

    /// The copy as 3D pieces, one per block column, left to right: together they copy exactly
    /// the rows of [`Tiles::pieces`] (see the [module documentation](self)).
    pub fn columns(&self) -> impl Iterator<Item = Column> + use<> {
        let (g, r) = (self.grid(), self.rows());
        let width = self.cols() * ELEMENT_BYTES;
        let tiled_pitch = self.row_stride() * ELEMENT_BYTES;
        (0..g).map(move |b| Column {
            packed: b * r * width,
            tiled: b * width,
            rows: r,
            width,
            depth: g,
            packed_pitch: width,
            packed_height: g * r,
            tiled_pitch,
            tiled_height: r,
        })
    }

    /// The host's strided copy from the packed order into the tiled order: `packed` and
    /// `tiled` must each hold [`Tiles::bytes`] (checked by the caller; shorter slices copy
    /// only the pieces that fit, longer ones leave the rest alone).
    pub fn scatter(&self, packed: &[u8], tiled: &mut [u8]) {
        for p in self.pieces() {
            for i in 0..p.rows {
                let (s, d) = (p.packed + i * p.packed_pitch, p.tiled + i * p.tiled_pitch);
                if let (Some(src), Some(dst)) =
                    (packed.get(s..s + p.width), tiled.get_mut(d..d + p.width))
                {
                    dst.copy_from_slice(src);
                }
            }
        }
    }

    /// The host's strided copy from the tiled order back into the packed order (the inverse
    /// of [`Tiles::scatter`], with the same conditions).
    pub fn gather(&self, tiled: &[u8], packed: &mut [u8]) {
        for p in self.pieces() {
            for i in 0..p.rows {
                let (s, d) = (p.tiled + i * p.tiled_pitch, p.packed + i * p.packed_pitch);
                if let (Some(src), Some(dst)) =
                    (tiled.get(s..s + p.width), packed.get_mut(d..d + p.width))
                {
                    dst.copy_from_slice(src);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The block columns are `grid` 3D copies of `grid` slices each, and their rows are
        /// exactly the components' rows (the same `(packed, tiled)` pairs, each once), for
        /// square and non-square components.
        #[test]
        fn columns_copy_exactly_the_components_rows(
            grid in 1usize..7,
            rows in 1usize..9,
            cols in 1usize..9,
        ) {
            let t = Tiles::new(grid, rows, cols).expect("tiles");
            let columns: Vec<Column> = t.columns().collect();
            prop_assert_eq!(columns.len(), grid);
            prop_assert!(columns.iter().all(|c| c.depth == grid && c.rows == rows));
            prop_assert_eq!(columns.iter().map(Column::bytes).sum::<usize>(), t.bytes());
            let mut by_column: Vec<(usize, usize)> =
                columns.iter().flat_map(Column::row_offsets).collect();
            let mut by_component: Vec<(usize, usize)> =
                t.pieces().flat_map(|p| p.row_offsets().collect::<Vec<_>>()).collect();
            prop_assert_eq!(by_column.len(), by_component.len());
            by_column.sort_unstable();
            by_component.sort_unstable();
            prop_assert_eq!(by_column, by_component);
        }
    }

    #[test]
    fn a_column_is_the_3d_copy_the_module_describes() {
        // g = 4, r = c = N = 128, E = 16: block column 1.
        let t = Tiles::new(4, 128, 128).expect("tiles");
        let e = ELEMENT_BYTES;
        let c = t.columns().nth(1).expect("column 1");
        assert_eq!((c.packed, c.tiled), (128 * 128 * e, 128 * e));
        assert_eq!((c.width, c.rows, c.depth), (128 * e, 128, 4));
        assert_eq!(c.packed_pitch * c.packed_height, 4 * 128 * 128 * e);
        assert_eq!(c.tiled_pitch * c.tiled_height, 128 * 4 * 128 * e);
        assert_eq!(t.columns().count(), 4);
    }

    /// Element `(R, C)` of the whole matrix, read from the packed order the way the module
    /// documentation defines it (tile `(R / r, C / c)` is component `g (R / r) + C / c`).
    fn packed_at(t: &Tiles, packed: &[u8], row: usize, col: usize) -> u8 {
        let comp = t.grid() * (row / t.rows()) + col / t.cols();
        let at = comp * t.component_elems() + (row % t.rows()) * t.cols() + col % t.cols();
        packed[at * ELEMENT_BYTES]
    }

    #[test]
    fn scatter_makes_the_whole_matrix_and_gather_undoes_it() {
        // Non-square components (2 x 3) in a 3 x 3 grid: elements numbered in packed order.
        let t = Tiles::new(3, 2, 3).expect("tiles");
        let packed: Vec<u8> = (0..t.bytes()).map(|i| (i / ELEMENT_BYTES) as u8).collect();
        let mut tiled = vec![0u8; t.bytes()];
        t.scatter(&packed, &mut tiled);
        let (rows, cols) = (3 * 2, 3 * 3);
        for row in 0..rows {
            for col in 0..cols {
                let at = (row * cols + col) * ELEMENT_BYTES;
                assert_eq!(
                    tiled[at],
                    packed_at(&t, &packed, row, col),
                    "({row}, {col})"
                );
            }
        }
        let mut back = vec![0u8; t.bytes()];
        t.gather(&tiled, &mut back);
        assert_eq!(back, packed);
    }

    #[test]
    fn offsets_and_limits() {
        let t = Tiles::new(4, 5, 5).expect("tiles");
        assert_eq!(t.row_stride(), 20);
        assert_eq!(t.offset(0), Some(0));
        assert_eq!(t.offset(1), Some(5)); // tile (0, 1)
        assert_eq!(t.offset(4), Some(5 * 20)); // tile (1, 0)
        assert_eq!(t.offset(15), Some(3 * 5 * 20 + 15));
        assert_eq!(t.offset(16), None);
        assert_eq!(t.pieces().count(), 16);
        assert!(Tiles::new(0, 5, 5).is_none());
        assert!(Tiles::new(4, 1 << 33, 1).is_none());
        assert!(Tiles::new(1 << 20, 1 << 20, 1 << 20).is_none());
    }
}
