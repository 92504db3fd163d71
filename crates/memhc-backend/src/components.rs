//! Batches of GEMMs given by component index: the form the runtime's hot path uses.
//!
//! A hadron node lives in one buffer as equally spaced components (one `N x N` matrix per
//! spin pair), and a contraction multiplies components of two nodes into components of a
//! third, in a pattern fixed by its spin mapping. A [`ComponentBatch`] says exactly that: three
//! [`Strip`]s (a buffer, where component 0 starts, the distance between components, how many)
//! and a [`ComponentTable`] of `(a, b, c)` component indices, one row per GEMM item.
//!
//! The table is built once per pattern (a spin mapping builds its tables once, and every
//! contraction with it reuses them) and knows, from its construction, the largest index of
//! each operand and whether its outputs are distinct. So [`validate_components`] checks a
//! batch in O(1), whatever its length: three strips within their buffers, and outputs that
//! cannot overlap each other or an input. Only when that cannot be shown from the strips
//! alone (outputs repeated, strips of one buffer overlapping) does it fall back to checking
//! the items one by one, with [`validate_batched`], so it accepts and refuses exactly what
//! the pointer-array form would.
//!
//! A backend that can use the form directly overrides
//! [`Backend::gemm_components`](crate::Backend::gemm_components); the provided method expands the items into a pointer
//! array and calls [`Backend::gemm_batched`](crate::Backend::gemm_batched).

use super::DeviceMemory;
use crate::ELEMENT_BYTES;
use crate::error::{BackendError, BackendOp};
use crate::gemm::{DeviceRef, GemmItem, GemmShape, validate_batched};

/// The items of a batch as component indices, with what validation needs worked out once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComponentTable {
    items: Vec<[usize; 3]>,
    /// Per operand (A, B, C): the largest index used plus one (0 for an empty table).
    needs: [usize; 3],
    /// Whether no two items write the same C component.
    distinct_outputs: bool,
}

impl ComponentTable {
    /// A table of `(a, b, c)` component indices, one per item, in the order given.
    pub fn new(items: impl IntoIterator<Item = (usize, usize, usize)>) -> Self {
        let items: Vec<[usize; 3]> = items.into_iter().map(|(a, b, c)| [a, b, c]).collect();
        let mut needs = [0usize; 3];
        for item in &items {
            for (need, &index) in needs.iter_mut().zip(item) {
                *need = (*need).max(index.saturating_add(1));
            }
        }
        let mut outputs: Vec<usize> = items.iter().map(|item| item[2]).collect();
        outputs.sort_unstable();
        let distinct_outputs = outputs.windows(2).all(|w| w[0] != w[1]);
        ComponentTable {
            items,
            needs,
            distinct_outputs,
        }
    }

    /// The `(a, b, c)` component indices of every item.
    pub fn items(&self) -> &[[usize; 3]] {
        &self.items
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the table has no items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Per operand (A, B, C), the number of components the table reaches: its largest index
    /// plus one.
    pub fn needs(&self) -> [usize; 3] {
        self.needs
    }

    /// Whether no two items write the same C component.
    pub fn distinct_outputs(&self) -> bool {
        self.distinct_outputs
    }
}

/// Equally spaced components in one buffer: component `i` starts at `start + i * stride`.
#[derive(Debug)]
pub struct Strip<'a, M> {
    /// Where component 0 starts.
    pub start: DeviceRef<'a, M>,
    /// Elements from one component's start to the next.
    pub stride: usize,
    /// Number of components.
    pub count: usize,
}

impl<M> Clone for Strip<'_, M> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<M> Copy for Strip<'_, M> {}

impl<'a, M> Strip<'a, M> {
    /// Where component `i` starts (no bounds check: see [`validate_components`]).
    pub fn at(&self, i: usize) -> DeviceRef<'a, M> {
        self.start.offset_by(i * self.stride)
    }
}

/// A batch of GEMMs by component: item `t` multiplies component `table[t][0]` of `a` by
/// component `table[t][1]` of `b` into component `table[t][2]` of `c`.
#[derive(Debug)]
pub struct ComponentBatch<'a, M> {
    /// The A operands.
    pub a: Strip<'a, M>,
    /// The B operands.
    pub b: Strip<'a, M>,
    /// The outputs.
    pub c: Strip<'a, M>,
    /// Which components each item uses.
    pub table: &'a ComponentTable,
}

impl<'a, M> ComponentBatch<'a, M> {
    /// Item `t` as a pointer-array item.
    pub fn item(&self, t: usize) -> Option<GemmItem<'a, M>> {
        self.table.items.get(t).map(|&[x, y, z]| GemmItem {
            a: self.a.at(x),
            b: self.b.at(y),
            c: self.c.at(z),
        })
    }

    /// Every item as a pointer-array item, in order.
    pub fn items(&self) -> impl ExactSizeIterator<Item = GemmItem<'a, M>> + Clone + '_ {
        self.table.items.iter().map(|&[x, y, z]| GemmItem {
            a: self.a.at(x),
            b: self.b.at(y),
            c: self.c.at(z),
        })
    }
}

/// The elements a strip's first `used` components span, each `extent` long: its first and
/// last-plus-one element, or `None` if the arithmetic overflows.
fn span_of<M>(strip: &Strip<'_, M>, used: usize, extent: usize) -> Option<(usize, usize)> {
    if used == 0 || extent == 0 {
        return Some((strip.start.offset, strip.start.offset));
    }
    let end = (used - 1)
        .checked_mul(strip.stride)?
        .checked_add(extent)?
        .checked_add(strip.start.offset)?;
    Some((strip.start.offset, end))
}

/// Validates a batch by component, accepting and refusing exactly what [`validate_batched`]
/// would for its items, in O(1) for the usual batch (see the [module documentation](self)).
///
/// Beyond the items' own checks, every index of the table must be below its strip's `count`.
pub fn validate_components<M: DeviceMemory>(
    shape: &GemmShape,
    batch: &ComponentBatch<'_, M>,
) -> Result<(), BackendError> {
    shape.validate()?;
    let needs = batch.table.needs;
    let strips = [("A", &batch.a), ("B", &batch.b), ("C", &batch.c)];
    for ((what, strip), need) in strips.into_iter().zip(needs) {
        if need > strip.count {
            return Err(BackendError::invalid(
                BackendOp::Gemm,
                format!(
                    "component {} of {what} is used, but its strip has {}",
                    need - 1,
                    strip.count
                ),
            ));
        }
    }
    if shape.is_empty() || batch.table.is_empty() {
        return Ok(());
    }
    let reads = shape.k > 0;
    let extents = [
        if reads { shape.a_extent() } else { 0 },
        if reads { shape.b_extent() } else { 0 },
        shape.c_extent(),
    ];
    let mut spans = [(0, 0); 3];
    let mut fast = batch.table.distinct_outputs && (needs[2] < 2 || batch.c.stride >= extents[2]);
    for (i, (_, strip)) in strips.iter().enumerate() {
        let within = span_of(strip, needs[i], extents[i])
            .filter(|&(_, end)| end <= strip.start.buffer.bytes() / ELEMENT_BYTES);
        match within {
            Some(span) => spans[i] = span,
            None => fast = false,
        }
    }
    let c_handle = batch.c.start.buffer.handle();
    for i in 0..2 {
        let strip = strips[i].1;
        let apart = strip.start.buffer.handle() != c_handle
            || spans[i].1 <= spans[2].0
            || spans[2].1 <= spans[i].0
            || extents[i] == 0;
        fast &= apart;
    }
    if fast {
        return Ok(());
    }
    // Not provable from the strips alone: the items one by one, as the pointer-array form.
    let items: Vec<GemmItem<'_, M>> = batch.items().collect();
    validate_batched(shape, &items)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[derive(Debug)]
    struct Buf(u64, usize);

    impl DeviceMemory for Buf {
        fn bytes(&self) -> usize {
            self.1 * ELEMENT_BYTES
        }
        fn handle(&self) -> u64 {
            self.0
        }
    }

    fn meson_table() -> ComponentTable {
        let mut t = Vec::new();
        for a in 0..4 {
            for g in 0..4 {
                for b in 0..4 {
                    t.push((4 * b + g, 4 * a + b, 4 * a + g));
                }
            }
        }
        ComponentTable::new(t)
    }

    #[test]
    fn table_knows_its_reach_and_repeats() {
        let t = meson_table();
        assert_eq!(t.len(), 64);
        assert_eq!(t.needs(), [16, 16, 16]);
        assert!(!t.distinct_outputs(), "meson4x4 writes each output 4 times");
        let layer = ComponentTable::new([(0, 1, 2), (3, 0, 5)]);
        assert_eq!(layer.needs(), [4, 2, 6]);
        assert!(layer.distinct_outputs());
        assert!(ComponentTable::new([]).is_empty());
        assert_eq!(ComponentTable::new([]).needs(), [0, 0, 0]);
    }

    #[test]
    fn a_strip_too_short_for_the_table_is_refused_by_name() {
        let (x, y, z) = (Buf(1, 64), Buf(2, 64), Buf(3, 64));
        let table = ComponentTable::new([(0, 0, 0), (1, 3, 1)]);
        fn strip(b: &Buf, count: usize) -> Strip<'_, Buf> {
            Strip {
                start: DeviceRef::new(b, 0),
                stride: 4,
                count,
            }
        }
        let shape = GemmShape::dense(2, 2, 2);
        let batch = ComponentBatch {
            a: strip(&x, 2),
            b: strip(&y, 3),
            c: strip(&z, 2),
            table: &table,
        };
        let err = validate_components(&shape, &batch).unwrap_err().to_string();
        assert!(err.contains("component 3 of B"), "{err}");
    }

    /// A strip as drawn: (buffer, offset, stride).
    type DrawnStrip = (u64, usize, usize);
    /// A case as drawn: matrix size, three strips, table rows.
    type Case = (usize, [DrawnStrip; 3], Vec<(usize, usize, usize)>);

    /// A batch drawn at random: three buffers (two of which may be the same), strips anywhere
    /// in them (overlapping or not), and a table of random indices.
    fn arb_case() -> impl Strategy<Value = Case> {
        let strip = (0u64..3, 0usize..24, 0usize..10);
        (
            1usize..4,
            [strip.clone(), strip.clone(), strip],
            prop::collection::vec((0usize..5, 0usize..5, 0usize..5), 0..8),
        )
    }

    proptest! {
        /// The O(1) validation agrees with the item-by-item one on every batch it is given
        /// (strips long enough for the table; shorter ones are refused before either runs).
        #[test]
        fn agrees_with_the_pointer_array_validation(
            (n, strips, rows) in arb_case(),
            k_zero in any::<bool>(),
        ) {
            let bufs = [Buf(0, 40), Buf(1, 40), Buf(2, 40)];
            let table = ComponentTable::new(rows);
            let needs = table.needs();
            let make = |i: usize| {
                let (b, offset, stride) = strips[i];
                Strip { start: DeviceRef::new(&bufs[b as usize], offset), stride, count: needs[i] }
            };
            let batch = ComponentBatch { a: make(0), b: make(1), c: make(2), table: &table };
            let mut shape = GemmShape::dense(n, n, n);
            if k_zero {
                shape.k = 0;
            }
            let items: Vec<_> = batch.items().collect();
            let expected = validate_batched(&shape, &items).is_ok();
            prop_assert_eq!(validate_components(&shape, &batch).is_ok(), expected);
        }
    }
}
