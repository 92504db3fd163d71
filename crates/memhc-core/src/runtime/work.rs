//! The device side of a launch ([`Launch`]): views of the launch's objects, and the GEMM calls
//! its work makes, each operand checked against the objects before the backend sees it.

use smallvec::SmallVec;

use crate::backend::components::{ComponentBatch, ComponentTable, Strip};
use crate::backend::gemm::{DeviceRef, GeamShape, GemmItem, GemmShape, StridedBatch};
use crate::backend::instrumented::Instrumented;
use crate::backend::{Backend, DeviceMemory, ELEMENT_BYTES};
use crate::device_copy::DeviceCopy;
use crate::error::{Error, Result};
use crate::object::{Access, Layout};

/// The device side of a launch: views of its objects, and GEMM calls on its stream.
///
/// Views are obtained by the index of the object in the launch's access list. Every operand of
/// a call must lie inside one of the launch's objects, all of it (the elements it spans, not
/// just where it starts), and every output inside an object the launch declared as written.
/// This is what keeps work inside its objects when they share a buffer (the arena), or hold a
/// larger one than they need (reuse tolerance): the backend only sees whole buffers.
pub struct Launch<'r, B: Backend> {
    pub(super) backend: &'r Instrumented<B>,
    pub(super) stream: &'r B::Stream,
    /// The arena's buffer, in arena mode.
    pub(super) arena: Option<&'r B::Buffer>,
    /// Held inline up to four (a contraction launches three or four objects).
    pub(super) objects: SmallVec<[Bound<'r, B>; 4]>,
}

/// One object of a launch, as its work sees it.
pub(super) struct Bound<'r, B: Backend> {
    access: Access,
    layout: Layout,
    resident: &'r DeviceCopy<B>,
    /// A packed object's one block: its buffer, the buffer's handle and the element where the
    /// object starts (worked out once, as every view of the object needs it).
    whole: Option<(&'r B::Buffer, u64, usize)>,
}

impl<'r, B: Backend> Bound<'r, B> {
    /// How a launch with the arena buffer `arena` sees `resident`, accessed as `access`.
    pub(super) fn new(
        access: Access,
        layout: Layout,
        resident: &'r DeviceCopy<B>,
        arena: Option<&'r B::Buffer>,
    ) -> Self {
        let whole = match resident.blocks.as_slice() {
            [block] if resident.packed => block
                .place(arena)
                .map(|(b, bytes)| (b, b.handle(), bytes / ELEMENT_BYTES)),
            _ => None,
        };
        Bound {
            access,
            layout,
            resident,
            whole,
        }
    }

    /// A packed object's range: its buffer's handle and its first and last-plus-one elements.
    fn range(&self) -> Option<(u64, usize, usize)> {
        self.whole
            .map(|(_, handle, first)| (handle, first, first + self.layout.elems()))
    }

    /// Whether `op` lies entirely inside the object (and starts inside it, even when it spans
    /// nothing, so that an empty operand at the end of one object is not taken for another's).
    fn holds(&self, op: &Operand, end: usize, arena: Option<&B::Buffer>) -> bool {
        let inside = |handle: u64, first: usize, elems: usize| {
            let last = first.saturating_add(elems);
            handle == op.handle && first <= op.start && op.start < last && end <= last
        };
        if let Some((_, handle, first)) = self.whole {
            return inside(handle, first, self.layout.elems());
        }
        let elems = self.resident.block_elems(&self.layout);
        self.resident.blocks.iter().any(|block| {
            block
                .place(arena)
                .is_some_and(|(b, bytes)| inside(b.handle(), bytes / ELEMENT_BYTES, elems))
        })
    }
}

/// The components of one object of a launch ([`Launch::components`]).
pub struct Components<'l, 'r, B: Backend> {
    object: &'l Bound<'r, B>,
    arena: Option<&'r B::Buffer>,
}

impl<B: Backend> Clone for Components<'_, '_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for Components<'_, '_, B> {}

impl<'r, B: Backend> Components<'_, 'r, B> {
    /// Where component `c` starts on the device, or `None` past the last component.
    pub fn get(&self, c: usize) -> Option<DeviceRef<'r, B::Buffer>> {
        let o = self.object;
        match o.whole {
            Some((buffer, _, first)) if c < o.layout.components() => {
                Some(DeviceRef::new(buffer, first + o.layout.component_offset(c)))
            }
            Some(_) => None,
            None => o.resident.component(&o.layout, c, self.arena),
        }
    }

    /// [`Components::get`], or the error that names the component and the object.
    pub fn component(&self, c: usize) -> Result<DeviceRef<'r, B::Buffer>> {
        self.get(c).ok_or_else(|| {
            Error::LaunchMisuse(format!(
                "component {c} of {} (it has {})",
                self.object.access.object,
                self.object.layout.components()
            ))
        })
    }

    /// A packed object's components as plain arithmetic (`None` if the object is unpacked, or
    /// tiled: its components are not a constant stride apart).
    fn packed(&self) -> Option<Packed<'r, B>> {
        let o = self.object;
        if o.layout.tiles().is_some() {
            return None;
        }
        o.whole.map(|(buffer, _, first)| Packed {
            buffer,
            first,
            step: o.layout.component_elems(),
            count: o.layout.components(),
        })
    }

    /// Number of components.
    pub fn len(&self) -> usize {
        self.object.layout.components()
    }

    /// Whether the object has no components (never: layouts have at least one).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The components of a packed object: component `c` starts at `first + c * step` of `buffer`.
struct Packed<'r, B: Backend> {
    buffer: &'r B::Buffer,
    first: usize,
    step: usize,
    count: usize,
}

impl<'r, B: Backend> Packed<'r, B> {
    /// The components as the backend's [`Strip`].
    fn strip(&self) -> Strip<'r, B::Buffer> {
        Strip {
            start: DeviceRef::new(self.buffer, self.first),
            stride: self.step,
            count: self.count,
        }
    }
}

/// An operand as the checks see it: its buffer, first element and elements spanned.
struct Operand {
    handle: u64,
    start: usize,
    elems: usize,
}

impl Operand {
    fn of<M: DeviceMemory>(r: &DeviceRef<'_, M>, elems: usize) -> Self {
        Operand {
            handle: r.buffer.handle(),
            start: r.offset,
            elems,
        }
    }

    fn describe(&self) -> String {
        format!(
            "elements {}..{} of buffer {:#x}",
            self.start,
            self.start.saturating_add(self.elems),
            self.handle
        )
    }
}

impl<'r, B: Backend> Launch<'r, B> {
    /// Number of objects in the launch.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the launch has no objects.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    fn object(&self, index: usize) -> Result<&Bound<'r, B>> {
        self.objects.get(index).ok_or_else(|| {
            Error::LaunchMisuse(format!(
                "object index {index}, but the launch has {} objects",
                self.objects.len()
            ))
        })
    }

    /// The layout of object `index`.
    pub fn layout(&self, index: usize) -> Result<Layout> {
        Ok(self.object(index)?.layout)
    }

    /// Where component `component` of object `index` starts on the device.
    pub fn component(&self, index: usize, component: usize) -> Result<DeviceRef<'r, B::Buffer>> {
        self.components(index)?.component(component)
    }

    /// The components of object `index`, for work that needs views of many of them: one
    /// lookup of the object, then arithmetic per component.
    pub fn components(&self, index: usize) -> Result<Components<'_, 'r, B>> {
        Ok(Components {
            object: self.object(index)?,
            arena: self.arena,
        })
    }

    /// The whole object `index` as one contiguous range (components back to back), if it is
    /// packed; `None` in unpacked mode.
    pub fn contiguous(&self, index: usize) -> Result<Option<DeviceRef<'r, B::Buffer>>> {
        Ok(self
            .object(index)?
            .whole
            .map(|(buffer, _, first)| DeviceRef::new(buffer, first)))
    }

    /// The index of the object one of whose blocks holds all of `op`, if any; the object at
    /// `hint` is tried first (operands in the same role of a batch are usually in one object).
    fn owner(&self, op: &Operand, hint: &mut usize) -> Option<usize> {
        let end = op.start.checked_add(op.elems)?;
        if self
            .objects
            .get(*hint)
            .is_some_and(|o| o.holds(op, end, self.arena))
        {
            return Some(*hint);
        }
        let found = self
            .objects
            .iter()
            .position(|o| o.holds(op, end, self.arena))?;
        *hint = found;
        Some(found)
    }

    /// Checks that an input lies inside one of the launch's objects.
    fn check_input(&self, op: &Operand, hint: &mut usize) -> Result<()> {
        match self.owner(op, hint) {
            Some(_) => Ok(()),
            None => Err(Error::LaunchMisuse(format!(
                "an input at {}, which lies in none of the launch's objects",
                op.describe()
            ))),
        }
    }

    /// Checks that an output lies inside one of the objects the launch writes.
    fn check_output(&self, op: &Operand, hint: &mut usize) -> Result<()> {
        match self.owner(op, hint).map(|i| self.objects[i].access) {
            Some(a) if a.mode.writes() => Ok(()),
            Some(a) => Err(Error::LaunchMisuse(format!(
                "an output in {}, which the launch declared read-only",
                a.object
            ))),
            None => Err(Error::LaunchMisuse(format!(
                "an output at {}, which lies in none of the launch's objects",
                op.describe()
            ))),
        }
    }

    /// Whether every operand `pick` gives of `items`, spanning `elems` elements, lies in the
    /// (packed) object that holds the first one, and that object is written if `output`: the
    /// usual batch, checked in a few instructions per operand.
    fn uniform<'a>(
        &self,
        items: &'a [GemmItem<'_, B::Buffer>],
        elems: usize,
        output: bool,
        pick: impl Fn(&'a GemmItem<'_, B::Buffer>) -> &'a DeviceRef<'a, B::Buffer>,
    ) -> bool {
        let Some(first) = items.first() else {
            return true;
        };
        let Some(o) = self.owner(&Operand::of(pick(first), elems), &mut 0) else {
            return false;
        };
        let o = &self.objects[o];
        let Some((handle, lo, hi)) = o.range() else {
            return false;
        };
        (!output || o.access.mode.writes())
            && items.iter().all(|it| {
                let r = pick(it);
                r.buffer.handle() == handle
                    && r.offset >= lo
                    && r.offset < hi
                    && r.offset.checked_add(elems).is_some_and(|end| end <= hi)
            })
    }

    /// Checks the items of a batch whose A, B and C span `extents` elements (0 for an operand
    /// not read): inputs inside the launch's objects, outputs inside objects it writes.
    fn check_items(
        &self,
        items: &[GemmItem<'_, B::Buffer>],
        (ea, eb, ec): (usize, usize, usize),
    ) -> Result<()> {
        if self.uniform(items, ea, false, |it| &it.a)
            && self.uniform(items, eb, false, |it| &it.b)
            && self.uniform(items, ec, true, |it| &it.c)
        {
            return Ok(());
        }
        // Operands in several objects (or unpacked ones): each looked up, and the first that
        // is wrong reported.
        let mut hints = [0usize; 3];
        let [ha, hb, hc] = &mut hints;
        for it in items {
            self.check_input(&Operand::of(&it.a, ea), ha)?;
            self.check_input(&Operand::of(&it.b, eb), hb)?;
            self.check_output(&Operand::of(&it.c, ec), hc)?;
        }
        Ok(())
    }

    /// Enqueues a pointer-array batch on the launch's stream.
    pub fn gemm_batched(&self, shape: &GemmShape, items: &[GemmItem<'_, B::Buffer>]) -> Result<()> {
        self.check_items(items, gemm_extents(shape))?;
        self.backend.gemm_batched(self.stream, shape, items)?;
        Ok(())
    }

    /// Enqueues a pointer-array batch of products of components: item `i` takes A, B and C at
    /// the start of components `components[i]` of the launch's objects `objects` (indices in
    /// its access list, in the backend's operand order), built in `items` (a list the caller
    /// may reuse from one batch to the next; it holds the items afterwards).
    ///
    /// The same as building the items with [`Launch::components`] and calling
    /// [`Launch::gemm_batched`], errors included, but cheaper: when no operand spans more
    /// than one component and C's object is written, every operand lies in its object by
    /// construction, so the items need no check one by one.
    pub fn gemm_batched_components(
        &self,
        shape: &GemmShape,
        objects: (usize, usize, usize),
        components: impl IntoIterator<Item = (usize, usize, usize)>,
        items: &mut Vec<GemmItem<'r, B::Buffer>>,
    ) -> Result<()> {
        let (a, b, c) = (
            self.components(objects.0)?,
            self.components(objects.1)?,
            self.components(objects.2)?,
        );
        items.clear();
        for (x, y, z) in components {
            match (a.get(x), b.get(y), c.get(z)) {
                (Some(ra), Some(rb), Some(rc)) => items.push(GemmItem {
                    a: ra,
                    b: rb,
                    c: rc,
                }),
                _ => {
                    // Name the first component out of range.
                    a.component(x)?;
                    b.component(y)?;
                    c.component(z)?;
                }
            }
        }
        self.gemm_built(shape, (a, b, c), items)
    }

    /// Enqueues a batch of products of components given by a table: item `t` takes A, B and
    /// C at the start of components `table.items()[t]` of the launch's objects `objects`
    /// (indices in its access list, in the backend's operand order).
    ///
    /// The same as [`Launch::gemm_batched_components`] with the table's rows, errors included
    /// (an index past its object's components is named), but when the three objects are packed
    /// and no operand spans more than one component, neither the runtime nor the backend looks
    /// at the items one by one: the table's reach is checked against the objects once, and the
    /// backend gets the batch by component ([`Backend::gemm_components`]), whose check is O(1).
    pub fn gemm_components(
        &self,
        shape: &GemmShape,
        objects: (usize, usize, usize),
        table: &ComponentTable,
    ) -> Result<()> {
        let (a, b, c) = (
            self.components(objects.0)?,
            self.components(objects.1)?,
            self.components(objects.2)?,
        );
        let direct = match (a.packed(), b.packed(), c.packed()) {
            (Some(pa), Some(pb), Some(pc)) if inside(shape, (&a, &b, &c)) => Some((pa, pb, pc)),
            _ => None,
        };
        let Some((pa, pb, pc)) = direct else {
            let rows = table.items().iter().map(|&[x, y, z]| (x, y, z));
            return self.gemm_batched_components(shape, objects, rows, &mut Vec::new());
        };
        for (components, need) in [a, b, c].into_iter().zip(table.needs()) {
            if need > components.len() {
                components.component(need - 1)?;
            }
        }
        let batch = ComponentBatch {
            a: pa.strip(),
            b: pb.strip(),
            c: pc.strip(),
            table,
        };
        self.backend.gemm_components(self.stream, shape, &batch)?;
        Ok(())
    }

    /// Enqueues the items [`Launch::gemm_batched_components`] built from components of
    /// `objects`, checking them one by one only if they may reach out of their objects.
    fn gemm_built(
        &self,
        shape: &GemmShape,
        (a, b, c): (
            Components<'_, 'r, B>,
            Components<'_, 'r, B>,
            Components<'_, 'r, B>,
        ),
        items: &[GemmItem<'r, B::Buffer>],
    ) -> Result<()> {
        if !inside(shape, (&a, &b, &c)) {
            self.check_items(items, gemm_extents(shape))?;
        }
        self.backend.gemm_batched(self.stream, shape, items)?;
        Ok(())
    }

    /// Enqueues a batch of matrix additions on the launch's stream.
    pub fn geam_batched(&self, shape: &GeamShape, items: &[GemmItem<'_, B::Buffer>]) -> Result<()> {
        let zero = num_complex::Complex64::new(0.0, 0.0);
        let span = |ld: usize, used: bool| {
            if used && shape.m > 0 && shape.n > 0 {
                crate::backend::gemm::extent(shape.m, shape.n, ld)
            } else {
                0
            }
        };
        let extents = (
            span(shape.lda, shape.alpha != zero),
            span(shape.ldb, shape.beta != zero),
            span(shape.ldc, true),
        );
        self.check_items(items, extents)?;
        self.backend.geam_batched(self.stream, shape, items)?;
        Ok(())
    }

    /// Enqueues a strided batch on the launch's stream.
    pub fn gemm_strided_batched(
        &self,
        shape: &GemmShape,
        batch: &StridedBatch<'_, B::Buffer>,
    ) -> Result<()> {
        // The elements a whole strided operand spans: the last item's start plus its extent.
        let whole = |stride: usize, extent: usize| -> Result<usize> {
            if extent == 0 || batch.count == 0 {
                return Ok(0);
            }
            (batch.count - 1)
                .checked_mul(stride)
                .and_then(|s| s.checked_add(extent))
                .ok_or_else(|| Error::LaunchMisuse("a strided batch overflows usize".into()))
        };
        let (ea, eb, ec) = gemm_extents(shape);
        let mut hint = 0;
        self.check_input(
            &Operand::of(&batch.a, whole(batch.stride_a, ea)?),
            &mut hint,
        )?;
        self.check_input(
            &Operand::of(&batch.b, whole(batch.stride_b, eb)?),
            &mut hint,
        )?;
        self.check_output(
            &Operand::of(&batch.c, whole(batch.stride_c, ec)?),
            &mut hint,
        )?;
        self.backend
            .gemm_strided_batched(self.stream, shape, batch)?;
        Ok(())
    }
}

/// Whether every item of `shape` built from components of `a`, `b` and `c` lies in its
/// object by construction: no operand spans more than one component, and C's object is
/// written.
fn inside<B: Backend>(
    shape: &GemmShape,
    (a, b, c): (
        &Components<'_, '_, B>,
        &Components<'_, '_, B>,
        &Components<'_, '_, B>,
    ),
) -> bool {
    let extents = gemm_extents(shape);
    let within = |o: &Bound<'_, B>, extent: usize| extent <= o.layout.component_elems();
    within(a.object, extents.0)
        && within(b.object, extents.1)
        && within(c.object, extents.2)
        && c.object.access.mode.writes()
}

/// The elements the A, B and C of one item of `shape` span (0 for an operand not read).
fn gemm_extents(shape: &GemmShape) -> (usize, usize, usize) {
    if shape.is_empty() {
        (0, 0, 0)
    } else if shape.k == 0 {
        (0, 0, shape.c_extent())
    } else {
        (shape.a_extent(), shape.b_extent(), shape.c_extent())
    }
}
