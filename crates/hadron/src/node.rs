//! Hadron nodes on the host: `S` spin components, each a dense complex tensor.
//!
//! A node's data is one `ndarray` array of shape `(spins, d0, d1, ...)` in standard (C,
//! row-major) order: a meson is `(16, N, N)`, a baryon-like node `(S, N, N, N)`. That order is
//! also the *packed device layout*: the components one after another, each row-major, so a
//! node moves to and from the device as one contiguous copy, with component `s` at element
//! offset `s * component_elems`.

use ndarray::{Array3, ArrayD, ArrayView2, ArrayViewD, IxDyn};
use num_complex::Complex64;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{HadronError, Result};
use crate::view::MatrixView;
use memhc_core::{Layout, Tiles};

/// The most dimensions a component may have (a meson's have 2, a baryon's 3).
pub const MAX_RANK: usize = 8;

/// The shape of a node: its number of spins and the dimensions of each component.
///
/// It is a plain value (no heap): every contraction reads the shapes of its three nodes, and
/// at hundreds of thousands of nodes a pointer to chase per shape is a cache miss each time.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct NodeShape {
    spins: usize,
    rank: usize,
    /// The dimensions, then zeros.
    dims: [usize; MAX_RANK],
}

impl std::fmt::Debug for NodeShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeShape")
            .field("spins", &self.spins)
            .field("dims", &self.dims())
            .finish()
    }
}

impl NodeShape {
    /// `spins` components of shape `dims` (one to [`MAX_RANK`] dimensions; all non-zero).
    pub fn new(spins: usize, dims: &[usize]) -> Result<Self> {
        if spins == 0 || dims.is_empty() || dims.len() > MAX_RANK || dims.contains(&0) {
            return Err(HadronError::BadNode(format!(
                "{spins} spins of shape {dims:?}: needs at least one spin and one to {MAX_RANK} dimensions, none zero"
            )));
        }
        let mut inline = [0; MAX_RANK];
        inline[..dims.len()].copy_from_slice(dims);
        let shape = NodeShape {
            spins,
            rank: dims.len(),
            dims: inline,
        };
        shape.layout()?;
        Ok(shape)
    }

    /// A meson with full spin: 16 components of `n x n`.
    pub fn meson(n: usize) -> Result<Self> {
        Self::new(16, &[n, n])
    }

    /// Number of spin components.
    pub fn spins(&self) -> usize {
        self.spins
    }

    /// Dimensions of one component.
    pub fn dims(&self) -> &[usize] {
        &self.dims[..self.rank]
    }

    /// Elements of one component.
    pub fn component_elems(&self) -> usize {
        self.dims().iter().product()
    }

    /// The runtime layout: `spins` components of `component_elems` elements, tiled on the
    /// device ([`Layout::tiled`]) when the node is a `g x g` block matrix of matrices: rank 2
    /// and `g²` spins, `g ≥ 2` (a meson node: one `4N x 4N` matrix). Baryon nodes (rank 3,
    /// contracted through views that choose their rows), and any other, stay packed.
    pub fn layout(&self) -> Result<Layout> {
        if let Some(tiles) = self.tiles() {
            return Ok(Layout::tiled(tiles));
        }
        let elems = self
            .dims()
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| {
                HadronError::BadNode(format!("component {:?} overflows", self.dims()))
            })?;
        Ok(Layout::new(self.spins, elems)?)
    }

    /// The device tiling of [`NodeShape::layout`], if the node has one.
    pub fn tiles(&self) -> Option<Tiles> {
        let g = self.spins.isqrt();
        match self.dims() {
            &[rows, cols] if g >= 2 && g * g == self.spins => Tiles::new(g, rows, cols),
            _ => None,
        }
    }

    /// Rows and columns of a component seen through `view`.
    pub fn matrix(&self, view: MatrixView) -> Result<(usize, usize)> {
        view.rows_cols(self.dims())
    }

    /// The array shape `(spins, d0, d1, ...)`.
    pub fn array_shape(&self) -> Vec<usize> {
        std::iter::once(self.spins)
            .chain(self.dims().iter().copied())
            .collect()
    }
}

/// A hadron node held on the host. See the [module documentation](self).
#[derive(Clone, Debug, PartialEq)]
pub struct HadronNode {
    data: ArrayD<Complex64>,
}

impl HadronNode {
    /// A node from an array of shape `(spins, d0, ...)`; it is brought to standard order if it
    /// is not in it.
    pub fn new(data: ArrayD<Complex64>) -> Result<Self> {
        let shape = data.shape();
        if shape.len() < 2 {
            return Err(HadronError::BadNode(format!(
                "an array of shape {shape:?}: needs (spins, d0, ...)"
            )));
        }
        NodeShape::new(shape[0], &shape[1..])?;
        let data = if data.is_standard_layout() {
            data
        } else {
            data.as_standard_layout().into_owned()
        };
        Ok(HadronNode { data })
    }

    /// A meson-like node from a `(spins, rows, cols)` array.
    pub fn from_array3(data: Array3<Complex64>) -> Result<Self> {
        Self::new(data.into_dyn())
    }

    /// A node of `shape` from elements in packed order.
    pub fn from_vec(shape: &NodeShape, data: Vec<Complex64>) -> Result<Self> {
        let expected = shape.spins * shape.component_elems();
        if data.len() != expected {
            return Err(HadronError::BadNode(format!(
                "{} elements for shape {shape:?}, which needs {expected}",
                data.len()
            )));
        }
        ArrayD::from_shape_vec(IxDyn(&shape.array_shape()), data)
            .map(|data| HadronNode { data })
            .map_err(|e| HadronError::BadNode(e.to_string()))
    }

    /// A node of `shape` with real and imaginary parts uniform in [-1, 1), from `seed` (never
    /// zeros, so that tests cannot pass by multiplying nothing).
    pub fn random(shape: &NodeShape, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let data = ArrayD::from_shape_simple_fn(IxDyn(&shape.array_shape()), || {
            Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))
        });
        HadronNode { data }
    }

    /// Fills `out`, the elements of a node of some shape in order (spin components back to
    /// back), with the values [`HadronNode::random`] gives that shape for `seed`: a node
    /// generated straight into memory the caller provides (the backend's page-locked memory).
    pub fn fill_random(seed: u64, out: &mut [Complex64]) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for z in out {
            *z = Complex64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        }
    }

    /// A node of `shape` filled with zeros.
    pub fn zeros(shape: &NodeShape) -> Self {
        HadronNode {
            data: ArrayD::zeros(IxDyn(&shape.array_shape())),
        }
    }

    /// The node's shape.
    pub fn shape(&self) -> NodeShape {
        let s = self.data.shape();
        let mut dims = [0; MAX_RANK];
        dims[..s.len() - 1].copy_from_slice(&s[1..]);
        NodeShape {
            spins: s[0],
            rank: s.len() - 1,
            dims,
        }
    }

    /// Number of spin components.
    pub fn spins(&self) -> usize {
        self.data.shape()[0]
    }

    /// The whole array `(spins, d0, ...)`.
    pub fn array(&self) -> &ArrayD<Complex64> {
        &self.data
    }

    /// Component `spin` as a tensor.
    pub fn component(&self, spin: usize) -> ArrayViewD<'_, Complex64> {
        self.data.index_axis(ndarray::Axis(0), spin)
    }

    /// Component `spin` seen as a row-major matrix through `view`.
    pub fn matrix(&self, spin: usize, view: MatrixView) -> Result<ArrayView2<'_, Complex64>> {
        let shape = self.shape();
        let (rows, cols) = shape.matrix(view)?;
        let e = shape.component_elems();
        // Checked: a spin index from a caller may be as large as usize::MAX.
        let range = spin
            .checked_mul(e)
            .and_then(|start| Some(start..start.checked_add(e)?));
        let flat = range.and_then(|r| self.as_slice().get(r)).ok_or_else(|| {
            HadronError::BadNode(format!(
                "spin {spin} of a node with {} spins",
                shape.spins()
            ))
        })?;
        ArrayView2::from_shape((rows, cols), flat).map_err(|e| HadronError::BadNode(e.to_string()))
    }

    /// The elements in packed device order (components one after another, row-major).
    pub fn as_slice(&self) -> &[Complex64] {
        // `new`, `from_vec`, `random` and `zeros` all produce standard layout.
        self.data.as_slice().unwrap_or(&[])
    }

    /// The elements in packed device order, consuming the node.
    pub fn into_vec(self) -> Vec<Complex64> {
        let (v, _) = self.data.into_raw_vec_and_offset();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filling_memory_gives_the_values_of_the_random_node() {
        let shape = NodeShape::new(4, &[3, 2]).unwrap();
        let node = HadronNode::random(&shape, 77);
        let mut out = vec![Complex64::new(9.0, 9.0); 4 * 6];
        HadronNode::fill_random(77, &mut out);
        assert_eq!(node.into_vec(), out);
    }

    #[test]
    fn packed_order_is_row_major_components_back_to_back() {
        let shape = NodeShape::new(2, &[2, 3]).unwrap();
        let data: Vec<_> = (0..12).map(|i| Complex64::new(i as f64, 0.0)).collect();
        let node = HadronNode::from_vec(&shape, data.clone()).unwrap();
        assert_eq!(node.as_slice(), data.as_slice());
        let m = node.matrix(1, MatrixView::default()).unwrap();
        assert_eq!(m[[0, 2]], Complex64::new(8.0, 0.0)); // component 1 starts at 6; row 0 col 2
        assert_eq!(m[[1, 0]], Complex64::new(9.0, 0.0));
        assert_eq!(node.clone().into_vec(), data);
        // Spins past the end, up to the largest index, are refused rather than wrapping.
        for spin in [2, usize::MAX / 6 + 1, usize::MAX] {
            assert!(matches!(
                node.matrix(spin, MatrixView::default()),
                Err(HadronError::BadNode(_))
            ));
        }
    }

    #[test]
    fn non_standard_arrays_are_normalised() {
        let a = Array3::from_shape_fn((2, 3, 4), |(s, i, j)| {
            Complex64::new((s * 100 + i * 10 + j) as f64, 0.0)
        });
        let t = a.clone().permuted_axes([0, 2, 1]); // (2, 4, 3), not standard order
        let node = HadronNode::from_array3(t.clone()).unwrap();
        assert_eq!(node.shape(), NodeShape::new(2, &[4, 3]).unwrap());
        assert_eq!(
            node.matrix(1, MatrixView::default()).unwrap()[[3, 2]],
            t[[1, 3, 2]]
        );
    }

    #[test]
    fn bad_shapes_are_refused() {
        assert!(NodeShape::new(0, &[2, 2]).is_err());
        assert!(NodeShape::new(2, &[]).is_err());
        assert!(NodeShape::new(2, &[2, 0]).is_err());
        assert!(HadronNode::from_vec(&NodeShape::meson(2).unwrap(), vec![]).is_err());
        assert!(HadronNode::new(ArrayD::zeros(IxDyn(&[4]))).is_err());
        let deepest = [1; MAX_RANK];
        let shape = NodeShape::new(3, &deepest).unwrap();
        assert_eq!(shape.dims(), deepest);
        let err = NodeShape::new(3, &[1; MAX_RANK + 1])
            .unwrap_err()
            .to_string();
        assert!(err.contains("one to 8 dimensions"), "{err}");
        assert!(HadronNode::new(ArrayD::zeros(IxDyn(&[1; MAX_RANK + 2]))).is_err());
        // The shape of a node is the shape it was made from, however many dimensions.
        let baryon = NodeShape::new(2, &[3, 4, 5]).unwrap();
        assert_eq!(HadronNode::zeros(&baryon).shape(), baryon);
        assert_eq!(
            format!("{baryon:?}"),
            "NodeShape { spins: 2, dims: [3, 4, 5] }"
        );
    }
}
