//! The exact overlap check of a batch whose matrices are strided (a leading dimension larger
//! than the rows): components of a tiled object ([`crate::tiles`]) interleave, so the ranges
//! from their first to their last element overlap while their elements do not.
//!
//! [`validate_batched`](crate::gemm::validate_batched) and
//! [`validate_geam`](crate::gemm::validate_geam) compare those ranges first (exact for dense
//! matrices, and fast); only when that finds an overlap in a batch with a strided matrix do they
//! ask this module, which compares the elements: two column-major matrices with the same
//! leading dimension are at most two rectangles each on the grid of (column, row) positions of
//! that leading dimension, and overlap exactly when one rectangle of each intersects. Matrices
//! with different leading dimensions are compared by range (conservatively).

use crate::{BackendError, BackendOp};

/// A column-major matrix in a buffer: `rows x cols`, columns `ld` apart, from `start`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mat {
    handle: u64,
    start: usize,
    rows: usize,
    cols: usize,
    ld: usize,
}

/// Half-open column and row ranges on the grid of a leading dimension.
type Rect = ((usize, usize), (usize, usize));

impl Mat {
    /// The matrix of buffer `handle` from element `start`, `rows x cols`, columns `ld` apart.
    pub(crate) fn new(handle: u64, start: usize, (rows, cols): (usize, usize), ld: usize) -> Self {
        Mat {
            handle,
            start,
            rows,
            cols,
            ld,
        }
    }

    fn end(&self) -> usize {
        if self.empty() {
            self.start
        } else {
            self.start + (self.cols - 1) * self.ld + self.rows
        }
    }

    fn empty(&self) -> bool {
        self.rows == 0 || self.cols == 0
    }

    /// The matrix on the grid of its leading dimension: one rectangle, or two when its rows
    /// wrap past the end of a grid column.
    fn rects(&self) -> [Option<Rect>; 2] {
        let (q, r) = (self.start / self.ld, self.start % self.ld);
        let first = ((q, q + self.cols), (r, (r + self.rows).min(self.ld)));
        let wrapped = (r + self.rows > self.ld)
            .then(|| ((q + 1, q + 1 + self.cols), (0, r + self.rows - self.ld)));
        [Some(first), wrapped]
    }
}

fn intersect(x: &Rect, y: &Rect) -> bool {
    let meet = |a: (usize, usize), b: (usize, usize)| a.0 < b.1 && b.0 < a.1;
    meet(x.0, y.0) && meet(x.1, y.1)
}

/// Whether `x` and `y` share an element (exactly, when they have the same leading dimension
/// and their rows fit it; by range otherwise).
fn overlap(x: &Mat, y: &Mat) -> bool {
    if x.handle != y.handle || x.empty() || y.empty() {
        return false;
    }
    if !(x.start < y.end() && y.start < x.end()) {
        return false;
    }
    if x.ld != y.ld || x.ld == 0 || x.rows > x.ld || y.rows > y.ld {
        return true;
    }
    let (xs, ys) = (x.rects(), y.rects());
    xs.iter()
        .flatten()
        .any(|a| ys.iter().flatten().any(|b| intersect(a, b)))
}

/// Checks `outputs` (all of one shape) pairwise disjoint, and each of `inputs` disjoint from
/// every output; `what` names the batch in the error.
pub(crate) fn check(
    what: &str,
    mut outputs: Vec<Mat>,
    inputs: impl Iterator<Item = Mat>,
) -> Result<(), BackendError> {
    outputs.sort_unstable_by_key(|m| (m.handle, m.start));
    for (i, x) in outputs.iter().enumerate() {
        let later = outputs[i + 1..]
            .iter()
            .take_while(|y| y.handle == x.handle && y.start < x.end());
        if let Some(y) = later.into_iter().find(|y| overlap(x, y)) {
            return Err(BackendError::invalid(
                BackendOp::Gemm,
                format!(
                    "{what}: outputs overlap in buffer {:#x} (the matrices at elements {} and {})",
                    x.handle, x.start, y.start
                ),
            ));
        }
    }
    // Every output spans the same number of elements: one that meets an input starts less
    // than that before the input's start.
    let reach = outputs.first().map_or(0, |m| m.end() - m.start);
    for input in inputs.filter(|m| !m.empty()) {
        let from = input.start.saturating_sub(reach);
        let first = outputs.partition_point(|m| (m.handle, m.start) < (input.handle, from));
        let near = outputs[first..]
            .iter()
            .take_while(|m| m.handle == input.handle && m.start < input.end());
        if let Some(c) = near.into_iter().find(|c| overlap(c, &input)) {
            return Err(BackendError::invalid(
                BackendOp::Gemm,
                format!(
                    "{what}: an output (the matrix at element {}) overlaps an input (at element {}) in buffer {:#x}",
                    c.start, input.start, c.handle
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mat(start: usize, rows: usize, cols: usize, ld: usize) -> Mat {
        Mat {
            handle: 1,
            start,
            rows,
            cols,
            ld,
        }
    }

    /// Whether two matrices share an element, by listing them.
    fn brute(x: &Mat, y: &Mat) -> bool {
        let cells = |m: &Mat| {
            (0..m.cols)
                .flat_map(|j| (0..m.rows).map(move |i| m.start + j * m.ld + i))
                .collect::<std::collections::HashSet<_>>()
        };
        !cells(x).is_disjoint(&cells(y))
    }

    #[test]
    fn the_exact_test_agrees_with_listing_the_elements() {
        for ld in 1..7 {
            for (r1, c1, r2, c2) in [(1, 1, 1, 1), (2, 3, 2, 3), (3, 2, 1, 4), (ld, 2, 1, 1)] {
                if r1 > ld || r2 > ld {
                    continue;
                }
                for s1 in 0..12 {
                    for s2 in 0..12 {
                        let (x, y) = (mat(s1, r1, c1, ld), mat(s2, r2, c2, ld));
                        assert_eq!(overlap(&x, &y), brute(&x, &y), "{x:?} {y:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn tiles_of_one_block_row_are_disjoint_and_a_shifted_one_is_not() {
        // A 4 x 4 grid of 3 x 3 tiles (row stride 12), as column-major 3 x 3 with ld 12.
        let tiles: Vec<Mat> = (0..16)
            .map(|c| mat((c / 4) * 36 + (c % 4) * 3, 3, 3, 12))
            .collect();
        assert!(check("t", tiles.clone(), std::iter::empty()).is_ok());
        let mut bad = tiles.clone();
        bad[1].start = 2; // tile (0, 1) moved onto tile (0, 0)'s last row
        assert!(check("t", bad, std::iter::empty()).is_err());
        let input = mat(3, 3, 3, 12); // tile (0, 1) read as an input
        assert!(check("t", tiles, std::iter::once(input)).is_err());
    }
}
