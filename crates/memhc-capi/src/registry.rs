//! Generation-checked handles: what a C caller holds instead of a pointer.
//!
//! A handle is a 64-bit number, `[kind: 8 bits][registry: 16][generation: 16][slot + 1: 24]`.
//! A registry stores values in slots; releasing a value bumps its slot's generation, so a
//! handle that outlived its value (a double release, a use after release) no longer matches
//! and is refused with a message, never dereferenced. The kind byte tells a runtime handle
//! from an object or a plan handle passed in its place; the registry number tells one
//! runtime's objects from another's. Freed slots are reused oldest first, so a stale handle
//! could alias a new value only after its slot has been reused 65,536 times; 0 is never a
//! valid handle.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU16, Ordering};

/// What a handle names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A runtime.
    Runtime = 1,
    /// An object (a hadron node) of one runtime.
    Object = 2,
    /// A plan (a validated spin mapping) of one runtime.
    Plan = 3,
    /// A correlator file, loaded and planned.
    Corr = 4,
    /// The correlators of one run.
    CorrResults = 5,
    /// A host buffer of one runtime.
    Host = 6,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Runtime => "runtime",
            Kind::Object => "object",
            Kind::Plan => "plan",
            Kind::Corr => "correlator file",
            Kind::CorrResults => "correlator results",
            Kind::Host => "host buffer",
        }
    }

    fn with_article(self) -> &'static str {
        match self {
            Kind::Runtime => "a runtime",
            Kind::Object => "an object",
            Kind::Plan => "a plan",
            Kind::Corr => "a correlator file",
            Kind::CorrResults => "a correlator results",
            Kind::Host => "a host buffer",
        }
    }

    fn from_tag(tag: u64) -> Option<Kind> {
        match tag {
            1 => Some(Kind::Runtime),
            2 => Some(Kind::Object),
            3 => Some(Kind::Plan),
            4 => Some(Kind::Corr),
            5 => Some(Kind::CorrResults),
            6 => Some(Kind::Host),
            _ => None,
        }
    }
}

/// Slots per registry: the slot index has 24 bits.
pub const MAX_SLOTS: usize = (1 << 24) - 1;

const SLOT_BITS: u32 = 24;
const GEN_BITS: u32 = 16;
const REG_BITS: u32 = 16;

/// Registry numbers, so that handles of two runtimes' registries differ.
static NEXT_REGISTRY: AtomicU16 = AtomicU16::new(1);

#[derive(Debug)]
struct Slot<T> {
    generation: u16,
    value: Option<T>,
}

/// Values behind generation-checked handles of one kind. See the [module documentation](self).
#[derive(Debug)]
pub struct Registry<T> {
    kind: Kind,
    id: u16,
    slots: Vec<Slot<T>>,
    free: VecDeque<usize>,
}

/// Why a handle was refused: a sentence that names the handle.
pub type Refusal = String;

impl<T> Registry<T> {
    /// An empty registry of `kind`, with a registry number of its own.
    pub fn new(kind: Kind) -> Self {
        let mut id = NEXT_REGISTRY.fetch_add(1, Ordering::Relaxed);
        if id == 0 {
            id = NEXT_REGISTRY.fetch_add(1, Ordering::Relaxed);
        }
        Registry {
            kind,
            id,
            slots: Vec::new(),
            free: VecDeque::new(),
        }
    }

    fn encode(&self, slot: usize, generation: u16) -> u64 {
        ((self.kind as u64) << (SLOT_BITS + GEN_BITS + REG_BITS))
            | (u64::from(self.id) << (SLOT_BITS + GEN_BITS))
            | (u64::from(generation) << SLOT_BITS)
            | (slot as u64 + 1)
    }

    /// Stores `value` and returns its handle; `None` when every slot is taken.
    pub fn insert(&mut self, value: T) -> Option<u64> {
        let slot = match self.free.pop_front() {
            Some(s) => s,
            None if self.slots.len() < MAX_SLOTS => {
                self.slots.push(Slot {
                    generation: 0,
                    value: None,
                });
                self.slots.len() - 1
            }
            None => return None,
        };
        let entry = self.slots.get_mut(slot)?;
        entry.value = Some(value);
        let generation = entry.generation;
        Some(self.encode(slot, generation))
    }

    /// The slot a handle names if it is live, or why it is not.
    fn slot_of(&self, handle: u64) -> Result<usize, Refusal> {
        let what = self.kind.name();
        if handle == 0 {
            return Err(format!("the {what} handle is null (0)"));
        }
        let tag = handle >> (SLOT_BITS + GEN_BITS + REG_BITS);
        if tag != self.kind as u64 {
            return Err(match Kind::from_tag(tag) {
                Some(other) => format!(
                    "handle {handle:#x} is {} handle, not {} handle",
                    other.with_article(),
                    self.kind.with_article()
                ),
                None => format!("{handle:#x} is no memhc handle at all"),
            });
        }
        let registry = (handle >> (SLOT_BITS + GEN_BITS)) & ((1 << REG_BITS) - 1);
        if registry != u64::from(self.id) {
            return Err(format!(
                "{what} handle {handle:#x} belongs to another runtime (or to one destroyed)"
            ));
        }
        let generation = (handle >> SLOT_BITS) & ((1 << GEN_BITS) - 1);
        let slot = (handle & ((1 << SLOT_BITS) - 1)) as usize;
        let live = slot
            .checked_sub(1)
            .and_then(|s| self.slots.get(s).map(|e| (s, e)));
        match live {
            Some((s, e)) if u64::from(e.generation) == generation && e.value.is_some() => Ok(s),
            Some(_) => Err(format!(
                "{what} handle {handle:#x} was released already (a double release, or a use \
                 after release)"
            )),
            None => Err(format!("{what} handle {handle:#x} was never issued")),
        }
    }

    /// The value behind a live handle.
    pub fn get(&self, handle: u64) -> Result<&T, Refusal> {
        let s = self.slot_of(handle)?;
        self.slots
            .get(s)
            .and_then(|e| e.value.as_ref())
            .ok_or_else(|| format!("handle {handle:#x}: empty slot"))
    }

    /// The value behind a live handle, to change in place.
    pub fn get_mut(&mut self, handle: u64) -> Result<&mut T, Refusal> {
        let s = self.slot_of(handle)?;
        self.slots
            .get_mut(s)
            .and_then(|e| e.value.as_mut())
            .ok_or_else(|| format!("handle {handle:#x}: empty slot"))
    }

    /// Removes the value behind a live handle and returns it; the handle is stale from now on.
    pub fn remove(&mut self, handle: u64) -> Result<T, Refusal> {
        let s = self.slot_of(handle)?;
        let entry = self
            .slots
            .get_mut(s)
            .ok_or_else(|| format!("handle {handle:#x}: no slot"))?;
        let value = entry
            .value
            .take()
            .ok_or_else(|| format!("handle {handle:#x}: empty slot"))?;
        entry.generation = entry.generation.wrapping_add(1);
        self.free.push_back(s);
        Ok(value)
    }

    /// Live values.
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Whether no value is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every live value, with its handle.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(s, e)| e.value.as_ref().map(|v| (self.encode(s, e.generation), v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_foreign_and_wrong_kind_handles_are_refused() {
        let mut objects = Registry::new(Kind::Object);
        let mut other = Registry::new(Kind::Object);
        let mut plans = Registry::new(Kind::Plan);
        let h = objects.insert("a").unwrap_or(0);
        let g = other.insert("b").unwrap_or(0);
        let p = plans.insert("p").unwrap_or(0);
        assert_eq!(objects.get(h), Ok(&"a"));
        assert!(objects.get(g).unwrap_err().contains("another runtime"));
        let refused = objects.get(p).unwrap_err();
        assert!(
            refused.contains("is a plan handle, not an object handle"),
            "{refused}"
        );
        assert!(objects.get(0).unwrap_err().contains("null"));
        assert!(objects.get(12345).unwrap_err().contains("no memhc handle"));
        assert_eq!(objects.remove(h), Ok("a"));
        assert!(objects.remove(h).unwrap_err().contains("released already"));
        // The slot is reused with a new generation: the old handle stays stale.
        let h2 = objects.insert("c").unwrap_or(0);
        assert_ne!(h, h2);
        assert!(objects.get(h).unwrap_err().contains("released already"));
        assert_eq!(objects.get(h2), Ok(&"c"));
        assert_eq!(objects.len(), 1);
        let never = h2 + 5;
        assert!(objects.get(never).unwrap_err().contains("never issued"));
        assert_eq!(
            objects.iter().map(|(k, v)| (k, *v)).collect::<Vec<_>>(),
            vec![(h2, "c")]
        );
    }

    #[test]
    fn freed_slots_are_reused_oldest_first() {
        let mut r = Registry::new(Kind::Plan);
        let hs: Vec<u64> = (0..4).filter_map(|i| r.insert(i)).collect();
        for &h in &hs {
            assert!(r.remove(h).is_ok());
        }
        let again = r.insert(9).unwrap_or(0);
        assert_eq!(again & 0xff_ffff, hs[0] & 0xff_ffff, "the oldest free slot");
        assert!(!r.is_empty() && r.get(hs[0]).is_err());
    }
}
