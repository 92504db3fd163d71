//! The device side of a launch ([`Launch`]): views of the launch's objects, and the GEMM calls
//! its work makes, each operand checked against the objects before the backend sees it.

use crate::backend::gemm::{DeviceRef, GeamShape, GemmItem, GemmShape, StridedBatch};
use crate::backend::instrumented::Instrumented;
use crate::backend::{Backend, DeviceMemory, ELEMENT_BYTES};
use crate::element_cache::Resident;
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
    pub(super) objects: Vec<(Access, Layout, &'r Resident<B>)>,
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

    fn object(&self, index: usize) -> Result<&(Access, Layout, &'r Resident<B>)> {
        self.objects.get(index).ok_or_else(|| {
            Error::LaunchMisuse(format!(
                "object index {index}, but the launch has {} objects",
                self.objects.len()
            ))
        })
    }

    /// The layout of object `index`.
    pub fn layout(&self, index: usize) -> Result<Layout> {
        Ok(self.object(index)?.1)
    }

    /// Where component `component` of object `index` starts on the device.
    pub fn component(&self, index: usize, component: usize) -> Result<DeviceRef<'r, B::Buffer>> {
        let &(access, layout, resident) = self.object(index)?;
        resident
            .component(&layout, component, self.arena)
            .ok_or_else(|| {
                Error::LaunchMisuse(format!(
                    "component {component} of {} (it has {})",
                    access.object,
                    layout.components()
                ))
            })
    }

    /// The whole object `index` as one contiguous range (components back to back), if it is
    /// packed; `None` in unpacked mode.
    pub fn contiguous(&self, index: usize) -> Result<Option<DeviceRef<'r, B::Buffer>>> {
        let &(_, layout, resident) = self.object(index)?;
        if !resident.packed || resident.blocks.len() != 1 {
            return Ok(None);
        }
        Ok(resident.component(&layout, 0, self.arena))
    }

    /// The access of the object one of whose blocks holds all of `op`, if any.
    fn owner(&self, op: &Operand) -> Option<Access> {
        let end = op.start.checked_add(op.elems)?;
        self.objects.iter().find_map(|&(access, layout, resident)| {
            let elems = resident.block_elems(&layout);
            resident.blocks.iter().find_map(|block| {
                let (buffer, bytes) = block.place(self.arena)?;
                let first = bytes / ELEMENT_BYTES;
                let inside = buffer.handle() == op.handle
                    && first <= op.start
                    && end <= first.saturating_add(elems);
                inside.then_some(access)
            })
        })
    }

    /// Checks that every input lies inside one of the launch's objects and every output inside
    /// one it writes.
    fn check(&self, inputs: &[Operand], outputs: &[Operand]) -> Result<()> {
        for op in inputs {
            if self.owner(op).is_none() {
                return Err(Error::LaunchMisuse(format!(
                    "an input at {}, which lies in none of the launch's objects",
                    op.describe()
                )));
            }
        }
        for op in outputs {
            match self.owner(op) {
                Some(a) if a.mode.writes() => {}
                Some(a) => {
                    return Err(Error::LaunchMisuse(format!(
                        "an output in {}, which the launch declared read-only",
                        a.object
                    )));
                }
                None => {
                    return Err(Error::LaunchMisuse(format!(
                        "an output at {}, which lies in none of the launch's objects",
                        op.describe()
                    )));
                }
            }
        }
        Ok(())
    }

    /// [`Launch::check`] for the items of a batch whose A, B and C span `extents` elements
    /// (0 for an operand not read).
    fn check_items(
        &self,
        items: &[GemmItem<'_, B::Buffer>],
        (ea, eb, ec): (usize, usize, usize),
    ) -> Result<()> {
        for it in items {
            self.check(
                &[Operand::of(&it.a, ea), Operand::of(&it.b, eb)],
                &[Operand::of(&it.c, ec)],
            )?;
        }
        Ok(())
    }

    /// Enqueues a pointer-array batch on the launch's stream.
    pub fn gemm_batched(&self, shape: &GemmShape, items: &[GemmItem<'_, B::Buffer>]) -> Result<()> {
        let extents = if shape.is_empty() {
            (0, 0, 0)
        } else if shape.k == 0 {
            (0, 0, shape.c_extent())
        } else {
            (shape.a_extent(), shape.b_extent(), shape.c_extent())
        };
        self.check_items(items, extents)?;
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
        let (ea, eb, ec) = if shape.is_empty() {
            (0, 0, 0)
        } else if shape.k == 0 {
            (0, 0, shape.c_extent())
        } else {
            (shape.a_extent(), shape.b_extent(), shape.c_extent())
        };
        self.check(
            &[
                Operand::of(&batch.a, whole(batch.stride_a, ea)?),
                Operand::of(&batch.b, whole(batch.stride_b, eb)?),
            ],
            &[Operand::of(&batch.c, whole(batch.stride_c, ec)?)],
        )?;
        self.backend
            .gemm_strided_batched(self.stream, shape, batch)?;
        Ok(())
    }
}
