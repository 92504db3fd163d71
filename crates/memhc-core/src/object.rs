//! Objects: what the runtime manages on behalf of its caller.
//!
//! An object is a list of equally sized components of complex-f64 elements (for a hadron node:
//! its spin components). It is either *host-backed* (registered from host data) or *GPU-only*
//! (an intermediate created on the device), and at any moment it is in exactly one [`State`].

use crate::error::{Error, Result};

pub use memhc_backend::ELEMENT_BYTES;
pub use memhc_backend::tiles::Tiles;
pub use memhc_policy::ObjectId;

/// Where an object comes from, which decides where its authoritative copy lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum ObjectKind {
    /// Registered from host data: the host copy is authoritative until a device write.
    HostBacked,
    /// Created on the device (an intermediate): it has no host copy until the caller reads it
    /// or eviction forces a write-back.
    GpuOnly,
}

/// The one explicit state of an object (in the style of Grid's `MemoryManager`).
///
/// | state         | host copy | device copy |
/// |---------------|-----------|-------------|
/// | `Empty`       | none      | none        |
/// | `HostValid`   | valid     | none        |
/// | `Consistent`  | valid     | valid       |
/// | `DeviceDirty` | none      | valid       |
/// | `WritingBack` | arriving  | none        |
///
/// An object moves between states only through the named transitions of
/// [`lifecycle`](crate::lifecycle), whose module documentation has the transition table; this
/// enum is the data-less view of the runtime's internal state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum State {
    /// A GPU-only object that has never been written: it holds no value anywhere.
    Empty,
    /// Only the host copy is valid; the object is not resident.
    HostValid,
    /// Resident, and the host copy holds the same values as the device copy.
    Consistent,
    /// Resident, and the device copy is the only valid one.
    DeviceDirty,
    /// Not resident: the object was evicted while device-only, and its asynchronous write-back
    /// (prefetch on, [`Config::prefetch`](crate::Config::prefetch)) is bringing its value to the
    /// host. Any use of the value waits for that copy, which then becomes the host copy.
    WritingBack,
}

impl State {
    /// Whether the object has a device copy in this state.
    pub fn is_resident(self) -> bool {
        matches!(self, State::Consistent | State::DeviceDirty)
    }

    /// Whether the host copy is valid in this state.
    pub fn host_valid(self) -> bool {
        matches!(self, State::HostValid | State::Consistent)
    }

    /// Whether the object holds a value anywhere.
    pub fn has_value(self) -> bool {
        self != State::Empty
    }

    /// Every state, in the order of the lifecycle table.
    pub const ALL: [State; 5] = [
        State::Empty,
        State::HostValid,
        State::Consistent,
        State::DeviceDirty,
        State::WritingBack,
    ];
}

/// Shape of an object: `components` components of `component_elems` complex-f64 elements each,
/// and how they sit on the device.
///
/// On the host an object's components are always back to back, each in its own order (for a
/// hadron node: row-major). On the device a packed object is the same (the *packed* layout),
/// unless its layout is *tiled* ([`Layout::tiled`], [`Tiles`]): then its `g x g` components form
/// one row-major matrix whose tile `(a, b)` is component `g a + b`, and the copies in and out
/// rearrange them as they copy. The runtime records a tiled layout only where it can keep it
/// (packing on, no managed memory, a backend with tiled copies: [`Runtime::layout`] says which
/// an object got); elsewhere the object is packed (or unpacked) as any other.
///
/// [`Runtime::layout`]: crate::Runtime::layout
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Layout {
    components: usize,
    component_elems: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    tiles: Option<Tiles>,
}

impl Layout {
    /// A layout of `components` components of `component_elems` elements each. Both must be
    /// non-zero, and the total size in bytes must fit in `usize`.
    pub fn new(components: usize, component_elems: usize) -> Result<Self> {
        if components == 0 || component_elems == 0 {
            return Err(Error::InvalidLayout(format!(
                "{components} components of {component_elems} elements: both must be non-zero"
            )));
        }
        components
            .checked_mul(component_elems)
            .and_then(|e| e.checked_mul(ELEMENT_BYTES))
            .ok_or_else(|| {
                Error::InvalidLayout(format!(
                    "{components} x {component_elems} elements overflow the address space"
                ))
            })?;
        Ok(Layout {
            components,
            component_elems,
            tiles: None,
        })
    }

    /// The layout of an object tiled as `tiles` on the device: `g²` components of `r x c`
    /// elements (see the [type documentation](Layout)).
    pub fn tiled(tiles: Tiles) -> Self {
        Layout {
            components: tiles.components(),
            component_elems: tiles.component_elems(),
            tiles: Some(tiles),
        }
    }

    /// The tiling on the device, if the layout is tiled.
    pub fn tiles(&self) -> Option<Tiles> {
        self.tiles
    }

    /// The same layout, packed (not tiled) on the device.
    pub fn untiled(self) -> Self {
        Layout {
            tiles: None,
            ..self
        }
    }

    /// Where component `c` starts in a packed block of this layout, in elements: `c` whole
    /// components in, or the tile's place when tiled.
    pub fn component_offset(&self, c: usize) -> usize {
        match self.tiles {
            Some(t) => t.offset(c).unwrap_or(c * self.component_elems),
            None => c * self.component_elems,
        }
    }

    /// Number of components (spins).
    pub fn components(&self) -> usize {
        self.components
    }

    /// Elements per component.
    pub fn component_elems(&self) -> usize {
        self.component_elems
    }

    /// Total elements.
    pub fn elems(&self) -> usize {
        self.components * self.component_elems
    }

    /// Bytes of one component.
    pub fn component_bytes(&self) -> usize {
        self.component_elems * ELEMENT_BYTES
    }

    /// Total bytes.
    pub fn bytes(&self) -> usize {
        self.elems() * ELEMENT_BYTES
    }
}

/// How a launch uses an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum AccessMode {
    /// The work reads the object; it must hold a value.
    Read,
    /// The work overwrites the object entirely; its previous value is not needed.
    Write,
    /// The work reads and updates the object (for example GEMM with `beta = 1`).
    ReadWrite,
}

impl AccessMode {
    /// Whether the work needs the object's current value.
    pub fn reads(self) -> bool {
        matches!(self, AccessMode::Read | AccessMode::ReadWrite)
    }

    /// Whether the work modifies the object.
    pub fn writes(self) -> bool {
        matches!(self, AccessMode::Write | AccessMode::ReadWrite)
    }
}

/// One object used by a launch, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Access {
    /// The object.
    pub object: ObjectId,
    /// How the launch uses it.
    pub mode: AccessMode,
}

impl Access {
    /// A read access.
    pub fn read(object: ObjectId) -> Self {
        Access {
            object,
            mode: AccessMode::Read,
        }
    }

    /// A write (full overwrite) access.
    pub fn write(object: ObjectId) -> Self {
        Access {
            object,
            mode: AccessMode::Write,
        }
    }

    /// A read-modify-write access.
    pub fn read_write(object: ObjectId) -> Self {
        Access {
            object,
            mode: AccessMode::ReadWrite,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_sizes() {
        let l = Layout::new(16, 384 * 384).unwrap();
        assert_eq!(l.bytes(), 16 * 384 * 384 * 16);
        assert_eq!(l.component_bytes(), 384 * 384 * 16);
        assert_eq!(l.elems(), 16 * 384 * 384);
    }

    #[test]
    fn layout_rejects_zero_and_overflow() {
        assert!(matches!(Layout::new(0, 4), Err(Error::InvalidLayout(_))));
        assert!(matches!(Layout::new(4, 0), Err(Error::InvalidLayout(_))));
        assert!(matches!(
            Layout::new(usize::MAX / 2, 4),
            Err(Error::InvalidLayout(_))
        ));
    }

    #[test]
    fn state_table() {
        assert!(!State::Empty.has_value());
        assert!(State::HostValid.host_valid() && !State::HostValid.is_resident());
        assert!(State::Consistent.host_valid() && State::Consistent.is_resident());
        assert!(!State::DeviceDirty.host_valid() && State::DeviceDirty.is_resident());
    }
}
