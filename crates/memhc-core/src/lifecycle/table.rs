//! The transitions of the object lifecycle, the table of where each may be taken (see the
//! [module documentation](super)), and the log that counts them.

use crate::error::Error;
use crate::object::State;

/// A named change of an object's state. See the [module documentation](super) for the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transition {
    /// The object is registered from host data.
    Registered,
    /// The object is created as a GPU-only object with no value.
    Created,
    /// The host copy is copied into new device buffers.
    CopiedIn,
    /// The host copy is copied into new device buffers ahead of its use, on the copy stream.
    Prefetched,
    /// A launch writes the device copy: the host copy becomes stale.
    WrittenOnDevice,
    /// The device copy is copied to the host on demand (or eagerly after a launch).
    Synced,
    /// The device copy is copied to the host because eviction forces it.
    WrittenBack,
    /// A device-only object is evicted with its write-back in flight on the copy stream.
    WriteBackIssued,
    /// An asynchronous write-back completed: its data is the host copy.
    WriteBackLanded,
    /// The device copy of a consistent object is dropped to make room.
    Evicted,
    /// The device copy of a consistent object is dropped after a launch (no dedup).
    Uncached,
    /// A failed launch's write is undone: back to the previous host copy, or to no value.
    RolledBack,
    /// The host replaces the object's values.
    HostWritten,
    /// The object is released.
    Released,
}

/// Every state slot of the table: `None` (no object) first, then every [`State`].
pub(super) const SLOTS: [Option<State>; 6] = [
    None,
    Some(State::Empty),
    Some(State::HostValid),
    Some(State::Consistent),
    Some(State::DeviceDirty),
    Some(State::WritingBack),
];

/// The position of a state slot in [`SLOTS`].
pub(super) fn slot(state: Option<State>) -> usize {
    match state {
        None => 0,
        Some(State::Empty) => 1,
        Some(State::HostValid) => 2,
        Some(State::Consistent) => 3,
        Some(State::DeviceDirty) => 4,
        Some(State::WritingBack) => 5,
    }
}

impl Transition {
    /// Every transition, in the order of the table.
    pub const ALL: [Transition; 14] = [
        Transition::Registered,
        Transition::Created,
        Transition::CopiedIn,
        Transition::Prefetched,
        Transition::WrittenOnDevice,
        Transition::Synced,
        Transition::WrittenBack,
        Transition::WriteBackIssued,
        Transition::WriteBackLanded,
        Transition::Evicted,
        Transition::Uncached,
        Transition::RolledBack,
        Transition::HostWritten,
        Transition::Released,
    ];

    /// The states this transition can lead to from `from` (`None`: no object), as the table
    /// says; empty when the transition is illegal from `from`.
    pub fn targets(self, from: Option<State>) -> &'static [Option<State>] {
        use State::{Consistent, DeviceDirty, Empty, HostValid, WritingBack};
        match (self, from) {
            (Transition::Registered, None) => &[Some(HostValid)],
            (Transition::Created, None) => &[Some(Empty)],
            (Transition::CopiedIn | Transition::Prefetched, Some(HostValid)) => &[Some(Consistent)],
            (Transition::WrittenOnDevice, Some(WritingBack)) => &[],
            (Transition::WrittenOnDevice, Some(_)) => &[Some(DeviceDirty)],
            (Transition::WriteBackIssued, Some(DeviceDirty)) => &[Some(WritingBack)],
            (Transition::WriteBackLanded, Some(WritingBack)) => &[Some(HostValid)],
            (Transition::Synced | Transition::WrittenBack, Some(DeviceDirty)) => {
                &[Some(Consistent)]
            }
            (Transition::Evicted | Transition::Uncached, Some(Consistent)) => &[Some(HostValid)],
            (Transition::RolledBack, Some(DeviceDirty)) => &[Some(HostValid), Some(Empty)],
            (Transition::HostWritten, Some(_)) => &[Some(HostValid)],
            (Transition::Released, Some(_)) => &[None],
            _ => &[],
        }
    }

    /// Whether the transition is legal from `from` (`None`: no object).
    pub fn is_legal_from(self, from: Option<State>) -> bool {
        !self.targets(from).is_empty()
    }

    /// The position of the transition in [`Transition::ALL`].
    fn index(self) -> usize {
        self as usize
    }
}

/// A transition attempted from a state it is not legal in. The object is left unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("object lifecycle: transition {transition:?} is illegal from state {}", state_name(*.from))]
pub struct IllegalTransition {
    /// The state the object was in (`None`: no object).
    pub from: Option<State>,
    /// The transition refused.
    pub transition: Transition,
}

/// A state slot for messages.
fn state_name(state: Option<State>) -> String {
    state.map_or_else(|| "none".to_owned(), |s| format!("{s:?}"))
}

impl From<IllegalTransition> for Error {
    fn from(e: IllegalTransition) -> Self {
        Error::Internal(e.to_string())
    }
}

/// Counts of the transitions a runtime took, by state before, transition and state after, and
/// of the transitions it refused. Counting costs a few array increments per transition.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransitionLog {
    taken: [[[u64; SLOTS.len()]; Transition::ALL.len()]; SLOTS.len()],
    refused: [[u64; Transition::ALL.len()]; SLOTS.len()],
}

impl TransitionLog {
    /// Every `(from, transition, to, count)` taken at least once (`None`: no object).
    pub fn taken(
        &self,
    ) -> impl Iterator<Item = (Option<State>, Transition, Option<State>, u64)> + '_ {
        SLOTS.iter().flat_map(move |&from| {
            Transition::ALL.iter().flat_map(move |&t| {
                SLOTS.iter().filter_map(move |&to| {
                    let n = self.taken[slot(from)][t.index()][slot(to)];
                    (n > 0).then_some((from, t, to, n))
                })
            })
        })
    }

    /// Every `(from, transition, count)` refused at least once.
    pub fn refused(&self) -> impl Iterator<Item = (Option<State>, Transition, u64)> + '_ {
        SLOTS.iter().flat_map(move |&from| {
            Transition::ALL.iter().filter_map(move |&t| {
                let n = self.refused[slot(from)][t.index()];
                (n > 0).then_some((from, t, n))
            })
        })
    }

    /// How many times `transition` was taken, from any state.
    pub fn count(&self, transition: Transition) -> u64 {
        self.taken
            .iter()
            .flat_map(|by_t| by_t[transition.index()].iter())
            .sum()
    }

    /// How many transitions were refused in all.
    pub fn refused_total(&self) -> u64 {
        self.refused.iter().flatten().sum()
    }

    pub(super) fn record_taken(&mut self, from: Option<State>, t: Transition, to: Option<State>) {
        self.taken[slot(from)][t.index()][slot(to)] += 1;
    }

    pub(super) fn record_refused(&mut self, from: Option<State>, t: Transition) {
        self.refused[slot(from)][t.index()] += 1;
    }
}
