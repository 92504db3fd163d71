//! Matrix views of tensor components.
//!
//! A component of dimensions `(d0, d1, ..., d{r-1})` is contracted as a row-major matrix whose
//! rows are the first `split` dimensions and whose columns are the rest: a meson component
//! `(N, N)` is `N x N` (split 1); a baryon-like component `(N, N, N)` is `N x N²` (split 1) or
//! `N² x N` (split 2). A view is a reinterpretation of the same contiguous memory; it moves
//! nothing.

use crate::error::{HadronError, Result};

/// How a component is seen as a matrix: the number of leading dimensions that form its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatrixView {
    /// Leading dimensions forming the rows: at least 1 and fewer than the rank (a rank-1
    /// component has the one view `split = 1`: a single column).
    pub split: usize,
}

impl Default for MatrixView {
    /// Rows from the first dimension, columns from the rest.
    fn default() -> Self {
        MatrixView { split: 1 }
    }
}

impl MatrixView {
    /// Rows from the first `split` dimensions.
    pub fn split(split: usize) -> Self {
        MatrixView { split }
    }

    /// Rows and columns of a component of dimensions `dims` seen through this view.
    pub fn rows_cols(&self, dims: &[usize]) -> Result<(usize, usize)> {
        let rank = dims.len();
        let valid = if rank == 1 {
            self.split == 1
        } else {
            (1..rank).contains(&self.split)
        };
        if !valid {
            return Err(HadronError::BadView {
                split: self.split,
                rank,
            });
        }
        let rows = dims[..self.split].iter().product();
        let cols = dims[self.split..].iter().product();
        Ok((rows, cols))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits() {
        assert_eq!(MatrixView::default().rows_cols(&[4, 5]).unwrap(), (4, 5));
        assert_eq!(MatrixView::split(1).rows_cols(&[3, 4, 5]).unwrap(), (3, 20));
        assert_eq!(MatrixView::split(2).rows_cols(&[3, 4, 5]).unwrap(), (12, 5));
        assert_eq!(MatrixView::split(1).rows_cols(&[7]).unwrap(), (7, 1));
        assert!(MatrixView::split(2).rows_cols(&[4, 5]).is_err());
        assert!(MatrixView::split(0).rows_cols(&[4, 5]).is_err());
    }
}
