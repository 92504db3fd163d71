//! Tiled nodes in the engine ([`memhc_core::Tiles`]): a node of `g²` spin components of one
//! matrix shape is, on the device, one row-major matrix of `g x g` tiles, tile `(a, b)` being
//! component `g a + b` ([`NodeShape::tiles`](crate::NodeShape::tiles); the runtime keeps the
//! tiling where it can, [`memhc_core::Layout`]).
//!
//! Every component is still a row-major matrix, only with rows `g c` elements apart instead of
//! `c` (`c` its columns): every GEMM, addition and trace the engine issues takes its leading
//! dimensions from [`row_stride`], so every mapping and accumulation scheme works on tiled
//! and packed nodes alike, mixed in one contraction. What the tiling adds is
//! [`block_product`]: a mapping that is the `g x g` block product ([`SpinMapping::block_product`],
//! the meson4x4 mapping) of tiled nodes is the product of the two whole matrices, one GEMM
//! of order `g N` where the layers take `g` batches of `g²` products.
//!
//! [`SpinMapping::block_product`]: crate::SpinMapping::block_product

use memhc_core::backend::gemm::StridedBatch;
use memhc_core::{Backend, Launch};

use crate::contraction::ContractionSizes;
use crate::rowmajor::RowMajorProduct;

/// Elements between the rows of a component of launch object `slot` whose components have
/// `cols` columns: `cols` when the object is packed, the whole matrix's row when tiled.
pub(crate) fn row_stride<B: Backend>(
    l: &Launch<'_, B>,
    slot: usize,
    cols: usize,
) -> memhc_core::Result<usize> {
    Ok(l.layout(slot)?.tiles().map_or(cols, |t| t.row_stride()))
}

/// Whether launch object `slot` is tiled on the device.
pub(crate) fn tiled<B: Backend>(l: &Launch<'_, B>, slot: usize) -> memhc_core::Result<bool> {
    Ok(l.layout(slot)?.tiles().is_some())
}

/// The `g x g` block product of launch objects `a` and `b` into `out` as one GEMM of the
/// whole matrices (`out = A B`, beta 0), when all three are tiled `g x g`; returns whether it
/// did (if not, nothing was enqueued and the caller runs the layers).
pub(crate) fn block_product<B: Backend>(
    l: &Launch<'_, B>,
    (a, b, out): (usize, usize, usize),
    plan: &ContractionSizes,
    g: usize,
) -> memhc_core::Result<bool> {
    for slot in [a, b, out] {
        if l.layout(slot)?.tiles().map(|t| t.grid()) != Some(g) {
            return Ok(false);
        }
    }
    // Row-major (g m) x (g k) times (g k) x (g n), each dense: the tiles' rows are the
    // whole matrices' rows.
    let p = RowMajorProduct::new(g * plan.m, g * plan.n, g * plan.k);
    let (x, y, z) = p.operands(l.component(a, 0)?, l.component(b, 0)?, l.component(out, 0)?);
    let one = StridedBatch {
        a: x,
        stride_a: 0,
        b: y,
        stride_b: 0,
        c: z,
        stride_c: 0,
        count: 1,
    };
    l.gemm_strided_batched(&p.shape, &one)?;
    Ok(true)
}
