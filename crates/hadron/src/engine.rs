//! The engine: hadron contractions and traces on the memhc runtime, through the [`Backend`]
//! trait only.
//!
//! Inputs are acquired through the runtime's element cache (a repeated node is a hit), outputs
//! are created as GPU-only objects (they stay on the device until read), and nodes are packed
//! (one contiguous buffer per node) unless the runtime's configuration says otherwise.
//!
//! Two ways to accumulate the terms of an output, selectable with [`Accumulation`]:
//!
//! * [`Accumulation::Layered`] (default): the mapping's terms are split into layers in which
//!   each output appears at most once; one batched GEMM per layer writes straight into the
//!   output, with `beta = 0` in the first layer and `beta = 1` after. No temporaries, no extra
//!   pass over memory.
//! * [`Accumulation::Temporaries`]: the paper's scheme. Every product goes to its own
//!   temporary component (one batched GEMM for all terms), then the temporaries of each output
//!   are summed into it with batched matrix additions. It needs a temporary object of one
//!   component per term, and reads and writes every product once more.
//!
//! A layer whose items advance by constant spin steps runs as one strided batch (when nodes are
//! packed); any other runs as a pointer-array batch. Output spins that no term writes are set
//! to zero. Row-major data meets column-major BLAS in one place: [`crate::rowmajor`].

use memhc_core::backend::gemm::{GeamShape, GemmItem, GemmShape, StridedBatch};
use memhc_core::{Access, Backend, Complex64, HostCopy, Launch, Layout, ObjectId, Runtime};
use smallvec::SmallVec;

use crate::contraction::{Contraction, ContractionSizes};
use crate::error::{HadronError, Result};
use crate::mapping::{Layer, Term};
use crate::node::{HadronNode, NodeShape};
use crate::rowmajor::{RowMajorProduct, trace_row_item, trace_row_shape};
use crate::shapes::ShapeTable;
use crate::tiling;
use crate::trace::TracePairs;
use crate::view::MatrixView;

/// How the terms of an output are accumulated. See the [module documentation](self).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Accumulation {
    /// One GEMM batch per layer of terms, accumulating in place with `beta = 1`.
    #[default]
    Layered,
    /// Every product into a temporary, then a sum of the temporaries (the paper's scheme).
    Temporaries,
}

/// Hadron contractions on a [`Runtime`]. See the [module documentation](self).
#[derive(Debug)]
pub struct Engine<B: Backend> {
    rt: Runtime<B>,
    shapes: ShapeTable,
    accumulation: Accumulation,
}

/// Positions of A, B and the output in a launch's access list (A and B may be one object).
struct Slots {
    a: usize,
    b: usize,
    out: usize,
}

fn accesses(a: ObjectId, b: ObjectId, out: &[ObjectId]) -> (SmallVec<[Access; 4]>, Slots) {
    let mut list = SmallVec::with_capacity(2 + out.len());
    list.push(Access::read(a));
    let b_slot = if b == a {
        0
    } else {
        list.push(Access::read(b));
        1
    };
    let out_slot = list.len();
    list.extend(out.iter().map(|&o| Access::write(o)));
    (
        list,
        Slots {
            a: 0,
            b: b_slot,
            out: out_slot,
        },
    )
}

impl<B: Backend> Engine<B> {
    /// An engine on `rt`, accumulating [`Accumulation::Layered`].
    pub fn new(rt: Runtime<B>) -> Self {
        Engine {
            rt,
            shapes: ShapeTable::default(),
            accumulation: Accumulation::default(),
        }
    }

    /// The same engine accumulating another way.
    pub fn with_accumulation(mut self, accumulation: Accumulation) -> Self {
        self.accumulation = accumulation;
        self
    }

    /// How terms are accumulated.
    pub fn accumulation(&self) -> Accumulation {
        self.accumulation
    }

    /// The runtime (statistics, audit, configuration).
    pub fn runtime(&self) -> &Runtime<B> {
        &self.rt
    }

    /// The runtime, mutably (vector announcements, the future for Belady, synchronisation).
    pub fn runtime_mut(&mut self) -> &mut Runtime<B> {
        &mut self.rt
    }

    /// Registers a host node (a host-backed object: copied to the device when first used).
    pub fn register(&mut self, node: HadronNode) -> Result<ObjectId> {
        let shape = node.shape();
        let id = self.rt.register(node.into_vec(), shape.layout()?)?;
        self.note_shape(id, shape)
    }

    /// The backend's host memory for the values of a node of `shape`
    /// ([`Runtime::alloc_host`]: page-locked on a GPU), to fill in place and register with
    /// [`Engine::register_host`]: the node is then uploaded in one DMA, without staging.
    pub fn alloc_host(&mut self, shape: &NodeShape) -> Result<HostCopy<B>> {
        Ok(self.rt.alloc_host(shape.layout()?)?)
    }

    /// Registers a node of `shape` whose values are `host` (a vector, or host memory from
    /// [`Engine::alloc_host`]).
    pub fn register_host(&mut self, shape: NodeShape, host: HostCopy<B>) -> Result<ObjectId> {
        let id = self.rt.register_host(host, shape.layout()?)?;
        self.note_shape(id, shape)
    }

    /// Creates a GPU-only node of `shape` with no value yet.
    pub fn create(&mut self, shape: NodeShape) -> Result<ObjectId> {
        let id = self.rt.create(shape.layout()?)?;
        self.note_shape(id, shape)
    }

    /// Notes the shape of the node just made as `id`; if the table cannot (more distinct
    /// shapes than a `u32` counts), the node is released again and the call fails.
    fn note_shape(&mut self, id: ObjectId, shape: NodeShape) -> Result<ObjectId> {
        if self.shapes.insert(id, shape).is_some() {
            return Ok(id);
        }
        self.rt.release(id)?;
        Err(HadronError::BadNode(
            "more distinct node shapes than an engine can hold (2^32 - 1)".to_owned(),
        ))
    }

    /// A hint that nodes `ids` will be used or released soon: reads their shapes and the
    /// runtime's records of them in one pass, into the CPU's caches
    /// ([`Runtime::touch_records`]; nothing is brought to the device). Changes nothing.
    pub fn touch_records(&self, ids: &[ObjectId]) {
        let known = ids
            .iter()
            .filter(|&&id| self.shapes.get(id).is_some())
            .count();
        std::hint::black_box(known);
        self.rt.touch_records(ids);
    }

    /// The shape of a node of this engine.
    pub fn shape(&self, id: ObjectId) -> Result<&NodeShape> {
        match self.shapes.get(id) {
            Some(s) => Ok(s),
            None => Err(HadronError::UnknownNode(id)),
        }
    }

    /// Validates a contraction and works out its sizes.
    pub fn sizes(&self, c: &Contraction) -> Result<ContractionSizes> {
        ContractionSizes::new(
            self.shape(c.a)?,
            self.shape(c.b)?,
            c.a_view,
            c.b_view,
            &c.mapping,
        )
    }

    /// Runs a contraction on `stream` into a new GPU-only node, which it returns. On failure
    /// the new node is released again.
    pub fn contract(&mut self, stream: usize, c: &Contraction) -> Result<ObjectId> {
        let plan = self.sizes(c)?;
        let out = self.create(plan.out.clone())?;
        match self.contract_planned(stream, c, &plan, out) {
            Ok(()) => Ok(out),
            Err(e) => {
                // The contraction's error is the one to report; a failed release cannot add to it.
                let _ = self.release(out);
                Err(e)
            }
        }
    }

    /// Runs a contraction on `stream` into an existing node of the right shape (overwriting
    /// it).
    pub fn contract_into(&mut self, stream: usize, c: &Contraction, out: ObjectId) -> Result<()> {
        let plan = self.sizes(c)?;
        let shape = self.shape(out)?;
        if *shape != plan.out {
            return Err(HadronError::ShapeMismatch(format!(
                "the output {out} is {shape:?}, the contraction produces {:?}",
                plan.out
            )));
        }
        self.contract_planned(stream, c, &plan, out)
    }

    fn contract_planned(
        &mut self,
        stream: usize,
        c: &Contraction,
        plan: &ContractionSizes,
        out: ObjectId,
    ) -> Result<()> {
        if out == c.a || out == c.b {
            return Err(HadronError::OutputIsInput(out));
        }
        match self.accumulation {
            Accumulation::Layered => self.contract_layered(stream, c, plan, out),
            Accumulation::Temporaries => self.contract_with_temporaries(stream, c, plan, out),
        }
    }

    fn contract_layered(
        &mut self,
        stream: usize,
        c: &Contraction,
        plan: &ContractionSizes,
        out: ObjectId,
    ) -> Result<()> {
        let (list, slots) = accesses(c.a, c.b, &[out]);
        let layers = c.mapping.layers();
        let uncovered = c.mapping.uncovered();
        let product = RowMajorProduct::new(plan.m, plan.n, plan.k);
        let block = c.mapping.block_product();
        self.rt.launch(stream, &list, |l| {
            if let Some(g) = block
                && tiling::block_product(l, (slots.a, slots.b, slots.out), plan, g)?
            {
                return Ok(()); // a block product covers every output
            }
            for (i, layer) in layers.iter().enumerate() {
                let p = product.accumulating(i > 0);
                products(l, &p, &slots, plan, layer, slots.out)?;
            }
            zero(l, slots.out, plan, uncovered)
        })?;
        Ok(())
    }

    fn contract_with_temporaries(
        &mut self,
        stream: usize,
        c: &Contraction,
        plan: &ContractionSizes,
        out: ObjectId,
    ) -> Result<()> {
        let terms = c.mapping.terms();
        let tmp = self
            .rt
            .create(Layout::new(terms.len(), plan.out_elems())?)?;
        let (list, slots) = accesses(c.a, c.b, &[out, tmp]);
        let tmp_slot = slots.out + 1;
        let by_output = c.mapping.terms_by_output();
        let product = RowMajorProduct::new(plan.m, plan.n, plan.k);
        // Every product into its own temporary component: term i into component i.
        let numbered = Layer::new(
            terms
                .iter()
                .enumerate()
                .map(|(i, t)| Term::new(i, t.a, t.b))
                .collect(),
        );
        let launched = self.rt.launch(stream, &list, |l| {
            products(l, &product, &slots, plan, &numbered, tmp_slot)?;
            accumulate(l, slots.out, tmp_slot, plan, &by_output)
        });
        let released = self.rt.release(tmp);
        launched?;
        released?;
        Ok(())
    }

    /// Runs a vector of independent contractions: announces their inputs to the policy (so
    /// that pre-protected LRU protects the resident ones), then launches contraction `i` on
    /// stream `i mod streams`, so they run concurrently. Returns the new output nodes in order.
    pub fn run_vector(&mut self, vector: &[Contraction]) -> Result<Vec<ObjectId>> {
        let members: Vec<ObjectId> = vector.iter().flat_map(|c| [c.a, c.b]).collect();
        self.rt.begin_vector(&members)?;
        let streams = self.rt.streams();
        vector
            .iter()
            .enumerate()
            .map(|(i, c)| self.contract(i % streams, c))
            .collect()
    }

    /// `Σ_(a, b) in pairs Tr(A[a] · B[b])`, computed on the device (one `1 x 1 x k` GEMM per
    /// row of each pair, into a scratch object), with only the per-row results copied back.
    /// A's components (default view) must be `m x k` and B's `k x m`.
    pub fn trace(
        &mut self,
        stream: usize,
        a: ObjectId,
        b: ObjectId,
        pairs: &TracePairs,
    ) -> Result<Complex64> {
        let v = MatrixView::default();
        self.trace_with_views(stream, a, v, b, v, pairs)
    }

    /// [`Engine::trace`] with A's and B's components seen through `a_view` and `b_view`
    /// (a baryon's `N x N²` or `N² x N`): A's view must be `m x k` and B's `k x m`. The
    /// scratch object holds `pairs · m` numbers.
    pub fn trace_with_views(
        &mut self,
        stream: usize,
        a: ObjectId,
        a_view: MatrixView,
        b: ObjectId,
        b_view: MatrixView,
        pairs: &TracePairs,
    ) -> Result<Complex64> {
        let (sa, sb) = (self.shape(a)?, self.shape(b)?);
        pairs.check(sa.spins(), sb.spins())?;
        let (m, k) = sa.matrix(a_view)?;
        let (kb, mb) = sb.matrix(b_view)?;
        if (kb, mb) != (k, m) {
            return Err(HadronError::ShapeMismatch(format!(
                "a trace needs A m x k and B k x m; A is {m} x {k} and B is {kb} x {mb}"
            )));
        }
        let count = pairs.pairs().len() * m;
        let scratch = self.rt.create(Layout::new(1, count)?)?;
        let (list, slots) = accesses(a, b, &[scratch]);
        let launched = self.rt.launch(stream, &list, |l| {
            // Rows k apart (m for B) when packed, the whole matrix's when tiled.
            let a_row = tiling::row_stride(l, slots.a, k)?;
            let shape = trace_row_shape(tiling::row_stride(l, slots.b, m)?, k);
            let base = l.component(slots.out, 0)?;
            let mut items = Vec::with_capacity(count);
            for (p, &(sa_spin, sb_spin)) in pairs.pairs().iter().enumerate() {
                let ra = l.component(slots.a, sa_spin)?;
                let rb = l.component(slots.b, sb_spin)?;
                for i in 0..m {
                    items.push(trace_row_item(a_row, i, ra, rb, base.offset_by(p * m + i)));
                }
            }
            l.gemm_batched(&shape, &items)
        });
        let total = launched
            .map_err(HadronError::from)
            .and_then(|()| Ok(self.rt.read(scratch)?.iter().sum::<Complex64>()));
        let released = self.rt.release(scratch);
        let total = total?;
        released?;
        Ok(total)
    }

    /// The values of a node, copied from the device if it holds the only valid copy.
    pub fn read(&mut self, id: ObjectId) -> Result<HadronNode> {
        let shape = self.shape(id)?.clone();
        let data = self.rt.read(id)?.to_vec();
        HadronNode::from_vec(&shape, data)
    }

    /// A node's values, handed over, and the node released ([`Runtime::take`]): for a
    /// result read once at the end of its life, one copy from the device and none on the host.
    pub fn take(&mut self, id: ObjectId) -> Result<HadronNode> {
        let shape = self.shape(id)?.clone();
        let data = self.rt.take(id)?;
        self.shapes.remove(id);
        HadronNode::from_vec(&shape, data)
    }

    /// [`Engine::take`], handing over the values where they are: with
    /// [`Config::pinned_results`](memhc_core::Config::pinned_results), in the backend's host
    /// memory the copy back landed in, without copying them.
    pub fn take_host(&mut self, id: ObjectId) -> Result<(NodeShape, HostCopy<B>)> {
        let shape = self.shape(id)?.clone();
        let data = self.rt.take_host(id)?;
        self.shapes.remove(id);
        Ok((shape, data))
    }

    /// Releases a node (its device memory goes to the free pool).
    pub fn release(&mut self, id: ObjectId) -> Result<()> {
        self.shape(id)?;
        self.rt.release(id)?;
        self.shapes.remove(id);
        Ok(())
    }

    /// The objects [`Engine::contract_into`] uses for `c` writing `out`, in the order the
    /// runtime sees them: `[a, b, out]` (`b` left out when it is `a`). Concatenated over a
    /// queue, this is the sequence [`Runtime::set_future`] wants for the Belady policy.
    pub fn uses(c: &Contraction, out: ObjectId) -> Vec<ObjectId> {
        let (list, _) = accesses(c.a, c.b, &[out]);
        list.into_iter().map(|a| a.object).collect()
    }
}

/// Enqueues `p` for every term of `layer`, term `t` writing component `t.out` of launch
/// object `target`: one strided batch when the terms advance by constant spin steps and every
/// object is packed (one buffer), else one batch by component (the layer's table).
fn products<B: Backend>(
    l: &Launch<'_, B>,
    p: &RowMajorProduct,
    slots: &Slots,
    plan: &ContractionSizes,
    layer: &Layer,
    target: usize,
) -> memhc_core::Result<()> {
    if layer.terms().is_empty() {
        return Ok(());
    }
    let mut tiled = false;
    for slot in [slots.a, slots.b, target] {
        tiled |= tiling::tiled(l, slot)?;
    }
    if tiled {
        // Components one whole-matrix row apart: one batch by component with those strides.
        let p = p.with_row_strides(
            tiling::row_stride(l, slots.a, plan.k)?,
            tiling::row_stride(l, slots.b, plan.n)?,
            tiling::row_stride(l, target, plan.n)?,
        );
        let objects = p.operands(slots.a, slots.b, target);
        return l.gemm_components(&p.shape, objects, layer.table());
    }
    if let Some(st) = layer.strided() {
        let mut packed = true;
        for slot in [slots.a, slots.b, target] {
            packed &= l.contiguous(slot)?.is_some();
        }
        if packed {
            let first = st.first;
            let batch = StridedBatch {
                // The operand swap: BLAS's A is our B, BLAS's B is our A (see `rowmajor`).
                a: l.component(slots.b, first.b)?,
                stride_a: st.step.2 * plan.b_elems,
                b: l.component(slots.a, first.a)?,
                stride_b: st.step.1 * plan.a_elems,
                c: l.component(target, first.out)?,
                stride_c: st.step.0 * plan.out_elems(),
                count: st.count,
            };
            return l.gemm_strided_batched(&p.shape, &batch);
        }
    }
    l.gemm_components(
        &p.shape,
        p.operands(slots.a, slots.b, target),
        layer.table(),
    )
}

/// Sets output spins `spins` of launch object `slot` to zero: GEMMs with `k = 0` and
/// `beta = 0`, which write `C = 0` without reading anything.
fn zero<B: Backend>(
    l: &Launch<'_, B>,
    slot: usize,
    plan: &ContractionSizes,
    spins: &[usize],
) -> memhc_core::Result<()> {
    if spins.is_empty() {
        return Ok(());
    }
    let row = tiling::row_stride(l, slot, plan.n)?;
    let shape = GemmShape {
        k: 0,
        ..RowMajorProduct::new(plan.m, plan.n, 1)
            .with_row_strides(1, row, row)
            .shape
    };
    let items = spins
        .iter()
        .map(|&s| {
            let c = l.component(slot, s)?;
            Ok(GemmItem { a: c, b: c, c })
        })
        .collect::<memhc_core::Result<Vec<_>>>()?;
    l.gemm_batched(&shape, &items)
}

/// Sums the temporaries of each output into it: `out = T[t0] + T[t1]` (or `T[t0]` alone, or
/// zero), then `out += T[tj]` for the others, each step one batched matrix addition.
fn accumulate<B: Backend>(
    l: &Launch<'_, B>,
    out_slot: usize,
    tmp_slot: usize,
    plan: &ContractionSizes,
    by_output: &[Vec<usize>],
) -> memhc_core::Result<()> {
    // Packed components are contiguous: add them as (elements x 1) matrices. A tiled output's
    // are not: add them as the column-major n x m matrices their row-major m x n are, the
    // output's rows a whole-matrix row apart (the temporaries are always packed).
    let (sum, out_row) = if tiling::tiled(l, out_slot)? {
        let row = tiling::row_stride(l, out_slot, plan.n)?;
        (GeamShape::dense_sum(plan.n, plan.m), row)
    } else {
        (GeamShape::dense_sum(plan.out_elems(), 1), plan.out_elems())
    };
    // `out = x T[i] + y T[j]` (or of `out` itself when no term writes it), and `out += T[j]`.
    let from_tmp = GeamShape {
        ldc: out_row,
        ..sum
    };
    let onto_out = GeamShape {
        lda: out_row,
        ldc: out_row,
        ..sum
    };
    let with = |alpha: f64, beta: f64, base: GeamShape| GeamShape {
        alpha: Complex64::new(alpha, 0.0),
        beta: Complex64::new(beta, 0.0),
        ..base
    };
    let only_out = GeamShape {
        ldb: out_row,
        ..onto_out
    };
    let out_ref = |s: usize| l.component(out_slot, s);
    let tmp_ref = |t: usize| l.component(tmp_slot, t);
    let (mut pairs, mut singles, mut empty) = (Vec::new(), Vec::new(), Vec::new());
    for (s, terms) in by_output.iter().enumerate() {
        match terms.as_slice() {
            [] => empty.push(GemmItem {
                a: out_ref(s)?,
                b: out_ref(s)?,
                c: out_ref(s)?,
            }),
            [t] => singles.push(GemmItem {
                a: tmp_ref(*t)?,
                b: tmp_ref(*t)?,
                c: out_ref(s)?,
            }),
            [t0, t1, ..] => pairs.push(GemmItem {
                a: tmp_ref(*t0)?,
                b: tmp_ref(*t1)?,
                c: out_ref(s)?,
            }),
        }
    }
    for (shape, items) in [
        (with(1.0, 1.0, from_tmp), &pairs),
        (with(1.0, 0.0, from_tmp), &singles),
        (with(0.0, 0.0, only_out), &empty),
    ] {
        if !items.is_empty() {
            l.geam_batched(&shape, items)?;
        }
    }
    let deepest = by_output.iter().map(Vec::len).max().unwrap_or(0);
    for j in 2..deepest {
        let items = by_output
            .iter()
            .enumerate()
            .filter_map(|(s, terms)| terms.get(j).map(|&t| (s, t)))
            .map(|(s, t)| {
                Ok(GemmItem {
                    a: out_ref(s)?,
                    b: tmp_ref(t)?,
                    c: out_ref(s)?,
                })
            })
            .collect::<memhc_core::Result<Vec<_>>>()?;
        l.geam_batched(&onto_out, &items)?;
    }
    Ok(())
}
