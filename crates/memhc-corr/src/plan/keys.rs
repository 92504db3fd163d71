//! Canonical keys: two partial products with the same key are the same matrix, and two loops
//! with the same trace key have the same trace, so each is computed once.
//!
//! A node enters a loop as a *factor*: the node and the view its components are seen through
//! (a baryon's `N x N²` and `N² x N` are different matrices of the same data), written
//! `(node, split)`.
//!
//! * A **product key** is the sequence of `(mapping, node, split)` steps that built it: the
//!   first factor, then each factor multiplied in on the right with the mapping used (mapping
//!   `0` is `meson4x4`; the first step's mapping is always `0`). For a meson product this is
//!   simply the sequence of factors: by associativity `(A B) C` and `A (B C)` are one matrix,
//!   so the key forgets the bracketing. Explicit mappings are not associative in general, so
//!   their products are only ever left folds and their keys are the fold's prefix.
//! * A **meson trace key** is the loop's factor cycle, rotated to its lexicographically least
//!   rotation: `Tr(A B C) = Tr(B C A) = Tr(C A B)` share one key. Reversal is *not* applied:
//!   `Tr(C B A) = Tr((A B C)ᵀ ...)` only equals `Tr(A B C)` when every node's big matrix is
//!   symmetric (`Tr(X) = Tr(Xᵀ)` and `(A B C)ᵀ = Cᵀ Bᵀ Aᵀ`, which is `C B A` only for symmetric
//!   nodes), and hadron nodes are not symmetric in general.
//! * An **explicit trace key** is the product key of the folded prefix, the closing pairs and
//!   the last factor.

use hadron::MatrixView;

/// A node of a loop and its view: `(node index, view split)`.
pub type Factor = (u32, u32);

/// One step of a product key: `(mapping id, node index, view split)`.
pub type Step = (u32, u32, u32);

/// The key of a partial product. See the [module documentation](self).
pub type ProductKey = Vec<Step>;

/// The key of a loop's trace. See the [module documentation](self).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum TraceKey {
    /// A meson loop: its least rotation.
    Meson(Vec<Factor>),
    /// An explicit loop: the prefix's key, the pairs' id, the closing factor.
    Explicit(ProductKey, u32, Factor),
}

/// The mapping id of `meson4x4`.
pub const MESON: u32 = 0;

/// The factor of node `n` seen through `view`.
pub fn factor(n: usize, view: MatrixView) -> Factor {
    (n as u32, view.split as u32)
}

/// The product key of the meson product of `factors` in order.
pub fn meson_key(factors: impl IntoIterator<Item = Factor>) -> ProductKey {
    factors.into_iter().map(|(n, v)| (MESON, n, v)).collect()
}

/// The least rotation of `cycle` (lexicographic), by trying every start: loops are short.
pub fn least_rotation<T: Ord + Copy>(cycle: &[T]) -> Vec<T> {
    let k = cycle.len();
    (0..k)
        .map(|s| (0..k).map(|i| cycle[(s + i) % k]).collect::<Vec<T>>())
        .min()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotations_share_a_key_and_reversals_do_not() {
        assert_eq!(least_rotation(&[3, 1, 2]), vec![1, 2, 3]);
        assert_eq!(least_rotation(&[2, 3, 1]), vec![1, 2, 3]);
        assert_eq!(least_rotation(&[1, 2, 3]), vec![1, 2, 3]);
        assert_ne!(least_rotation(&[3, 2, 1]), vec![1, 2, 3]);
        assert_eq!(least_rotation(&[2, 1, 2, 1]), vec![1, 2, 1, 2]);
        let (a, b) = (
            factor(4, MatrixView::split(1)),
            factor(5, MatrixView::split(2)),
        );
        assert_eq!(meson_key([a, b]), vec![(MESON, 4, 1), (MESON, 5, 2)]);
        // One node through two views is two factors.
        assert_ne!(
            least_rotation(&[(1, 1), (2, 2)]),
            least_rotation(&[(1, 2), (2, 1)])
        );
        assert_eq!(
            least_rotation(&[(2, 2), (1, 1)]),
            least_rotation(&[(1, 1), (2, 2)])
        );
    }
}
