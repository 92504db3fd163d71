//! The object lifecycle: the one place where an object's [`State`] changes.
//!
//! Inside the runtime an object's state is a `Lifecycle` (crate-private), which carries what
//! the state implies: `HostValid` and `Consistent` hold the host copy, `Consistent` and
//! `DeviceDirty` hold the device copy (its blocks and the work in flight on them),
//! `WritingBack` holds the write-back in flight, so neither copy can disagree with the state. The public [`State`]
//! is its data-less view (`Lifecycle::kind`). The state changes only through the named
//! [`Transition`]s below; each checks its precondition against the table and refuses, with an
//! [`IllegalTransition`] (an internal error for the caller of the runtime), when called from a
//! state it is not legal in, leaving the object as it was. Every transition taken, and every
//! one refused, is counted in a [`TransitionLog`]
//! ([`Runtime::transitions`](crate::Runtime::transitions)).
//!
//! Residency is part of the lifecycle: an object is resident exactly when its state holds a
//! device copy, so MemHC's element cache is no table of its own. A transition that gives the
//! object device memory takes it as an argument (`CopiedIn`, `Prefetched`, `WrittenOnDevice`
//! on an object that was not resident); one that takes it away hands it back to the runtime
//! (`Evicted`, `Uncached`, `RolledBack`, `WriteBackIssued`, `HostWritten`, `Released`), which
//! returns its blocks to the free pool or the driver. A refused transition hands its argument
//! back too: no device memory is ever dropped on the floor.
//!
//! ## The transition table
//!
//! Rows are transitions, columns the state an object is in before it (`none`: no object yet,
//! or no longer), cells the state after it; `✗` marks a transition refused from that state.
//!
//! | transition        | none        | `Empty`       | `HostValid`   | `Consistent`  | `DeviceDirty`         | `WritingBack` |
//! |-------------------|-------------|---------------|---------------|---------------|-----------------------|---------------|
//! | `Registered`      | `HostValid` | ✗             | ✗             | ✗             | ✗                     | ✗             |
//! | `Created`         | `Empty`     | ✗             | ✗             | ✗             | ✗                     | ✗             |
//! | `CopiedIn`        | ✗           | ✗             | `Consistent`  | ✗             | ✗                     | ✗             |
//! | `Prefetched`      | ✗           | ✗             | `Consistent`  | ✗             | ✗                     | ✗             |
//! | `WrittenOnDevice` | ✗           | `DeviceDirty` | `DeviceDirty` | `DeviceDirty` | `DeviceDirty`         | ✗             |
//! | `Synced`          | ✗           | ✗             | ✗             | ✗             | `Consistent`          | ✗             |
//! | `WrittenBack`     | ✗           | ✗             | ✗             | ✗             | `Consistent`          | ✗             |
//! | `WriteBackIssued` | ✗           | ✗             | ✗             | ✗             | `WritingBack`         | ✗             |
//! | `WriteBackLanded` | ✗           | ✗             | ✗             | ✗             | ✗                     | `HostValid`   |
//! | `Evicted`         | ✗           | ✗             | ✗             | `HostValid`   | ✗                     | ✗             |
//! | `Uncached`        | ✗           | ✗             | ✗             | `HostValid`   | ✗                     | ✗             |
//! | `RolledBack`      | ✗           | ✗             | ✗             | ✗             | `HostValid` / `Empty` | ✗             |
//! | `HostWritten`     | ✗           | `HostValid`   | `HostValid`   | `HostValid`   | `HostValid`           | `HostValid`   |
//! | `Released`        | ✗           | none          | none          | none          | none                  | none          |
//!
//! Where each happens in the runtime:
//!
//! * `Registered` / `Created`: [`Runtime::register`](crate::Runtime::register) (host data) /
//!   [`Runtime::create`](crate::Runtime::create) (a GPU-only object, no value yet).
//! * `CopiedIn`: a launch that reads a non-resident object copies its host copy into new device
//!   buffers (with managed memory: the host writes it in place).
//! * `Prefetched`: as `CopiedIn`, but ahead of the launch that will read the object, on the
//!   runtime's copy stream ([`Config::prefetch`](crate::Config::prefetch)); that launch waits
//!   for the copy's event.
//! * `WrittenOnDevice`: a launch declares it writes the object; the host copy, now stale, leaves
//!   the state and is kept aside to undo the launch if it fails. Legal from every state: a
//!   write-only access needs no previous value, and the object is resident by then.
//! * `Synced`: on-demand sync ([`Runtime::read`](crate::Runtime::read)) or, with on-demand sync
//!   off, the eager copy back after a launch: the device copy is read into a new host copy.
//! * `WrittenBack`: the same copy, forced by eviction of a device-only object (counted in
//!   [`Stats::writebacks`](crate::Stats::writebacks)); `Evicted` then follows.
//! * `WriteBackIssued`: with prefetch on, eviction of a device-only object copies it back
//!   asynchronously on the copy stream (counted in [`Stats::writebacks`](crate::Stats::writebacks)
//!   and [`Stats::evictions`](crate::Stats::evictions), and in
//!   [`Stats::async_writebacks`](crate::Stats::async_writebacks)): the device copy is gone
//!   and the host copy is on its way (`WritingBack`).
//! * `WriteBackLanded`: an asynchronous write-back has completed and its data became the host
//!   copy; taken when something needs the value (a launch, a read, a prefetch), after waiting
//!   for the copy.
//! * `Evicted`: the device copy of a consistent object is dropped to make room (counted in
//!   [`Stats::evictions`](crate::Stats::evictions)). A `DeviceDirty` object must be written back
//!   first: evicting it would lose its only copy.
//! * `Uncached`: without duplication-aware management, a consistent object's device copy is
//!   dropped after the launch that used it (not an eviction).
//! * `RolledBack`: a failed launch drops the device copy of each object it was writing, which
//!   goes back to the host copy it had before the launch (`HostValid`), or to no value.
//! * `HostWritten`: [`Runtime::write`](crate::Runtime::write) replaces the values from the host;
//!   any device copy is dropped.
//! * `Released`: [`Runtime::release`](crate::Runtime::release); the object is gone.

mod table;

pub use table::{IllegalTransition, Transition, TransitionLog};

use crate::backend::Backend;
use crate::device_copy::{DeviceCopy, WriteBack};
use crate::error::Error;
use crate::host_copy::HostCopy;
use crate::object::State;

/// An object's state with what it implies: the host copy lives inside the states where it is
/// valid, the device copy inside the states where the object is resident, and a write-back in
/// flight inside `WritingBack`. Changed only by the transitions below.
#[derive(Default)]
pub(crate) enum Lifecycle<B: Backend> {
    /// No value anywhere (a GPU-only object never written).
    #[default]
    Empty,
    /// Only the host copy is valid; not resident.
    HostValid(HostCopy<B>),
    /// Resident, and the host copy holds the device copy's values.
    Consistent(HostCopy<B>, DeviceCopy<B>),
    /// Resident, and the device copy is the only valid one.
    DeviceDirty(DeviceCopy<B>),
    /// Not resident; an asynchronous write-back is bringing the value to the host.
    WritingBack(WriteBack<B>),
}

impl<B: Backend> std::fmt::Debug for Lifecycle<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.kind())
    }
}

/// What a transition took off the device side of an object, for the runtime to dispose of:
/// its device copy's blocks go to the free pool (or are freed), a write-back's host memory is
/// dropped once the copy into it has completed.
pub(crate) enum Left<B: Backend> {
    /// Nothing was on the device side.
    Nothing,
    /// The device copy.
    Device(DeviceCopy<B>),
    /// A write-back in flight.
    WriteBack(WriteBack<B>),
}

/// What a transition's rule makes of a state and its input: the next state and the
/// transition's output, or (the input does not fit the state) both handed back unchanged.
enum Step<S, T, I> {
    Next(S, T),
    Unchanged(S, I),
}

/// A refused transition, with the input it was given handed back (nothing is lost: a device
/// copy offered to a transition that refused it is still the caller's to dispose of).
#[derive(Debug)]
pub(crate) struct Refused<I> {
    /// Why.
    pub error: IllegalTransition,
    /// What the transition was given.
    pub input: I,
}

impl<I> From<Refused<I>> for IllegalTransition {
    fn from(r: Refused<I>) -> Self {
        r.error
    }
}

impl<I> From<Refused<I>> for Error {
    fn from(r: Refused<I>) -> Self {
        r.error.into()
    }
}

impl<B: Backend> Lifecycle<B> {
    /// `Registered`: a host-backed object holding `host`.
    pub(crate) fn registered(host: HostCopy<B>, log: &mut TransitionLog) -> Self {
        log.record_taken(None, Transition::Registered, Some(State::HostValid));
        Lifecycle::HostValid(host)
    }

    /// `Created`: a GPU-only object with no value.
    pub(crate) fn created(log: &mut TransitionLog) -> Self {
        log.record_taken(None, Transition::Created, Some(State::Empty));
        Lifecycle::Empty
    }

    /// The data-less view of the state.
    pub(crate) fn kind(&self) -> State {
        match self {
            Lifecycle::Empty => State::Empty,
            Lifecycle::HostValid(_) => State::HostValid,
            Lifecycle::Consistent(..) => State::Consistent,
            Lifecycle::DeviceDirty(_) => State::DeviceDirty,
            Lifecycle::WritingBack(_) => State::WritingBack,
        }
    }

    /// The host copy, in the states where it is valid.
    pub(crate) fn host(&self) -> Option<&HostCopy<B>> {
        match self {
            Lifecycle::HostValid(h) | Lifecycle::Consistent(h, _) => Some(h),
            Lifecycle::Empty | Lifecycle::DeviceDirty(_) | Lifecycle::WritingBack(_) => None,
        }
    }

    /// The host copy, in the states where it is valid, to read or change in place (a change
    /// is the caller's to keep consistent with the state).
    pub(crate) fn host_mut(&mut self) -> Option<&mut HostCopy<B>> {
        match self {
            Lifecycle::HostValid(h) | Lifecycle::Consistent(h, _) => Some(h),
            Lifecycle::Empty | Lifecycle::DeviceDirty(_) | Lifecycle::WritingBack(_) => None,
        }
    }

    /// The device copy, in the resident states.
    pub(crate) fn device(&self) -> Option<&DeviceCopy<B>> {
        match self {
            Lifecycle::Consistent(_, d) | Lifecycle::DeviceDirty(d) => Some(d),
            _ => None,
        }
    }

    /// The device copy, in the resident states, to record work on it.
    pub(crate) fn device_mut(&mut self) -> Option<&mut DeviceCopy<B>> {
        match self {
            Lifecycle::Consistent(_, d) | Lifecycle::DeviceDirty(d) => Some(d),
            _ => None,
        }
    }

    /// The write-back in flight, in `WritingBack`.
    pub(crate) fn write_back(&self) -> Option<&WriteBack<B>> {
        match self {
            Lifecycle::WritingBack(w) => Some(w),
            _ => None,
        }
    }

    /// Whether the object is resident (its state holds a device copy).
    pub(crate) fn is_resident(&self) -> bool {
        matches!(self, Lifecycle::Consistent(..) | Lifecycle::DeviceDirty(_))
    }

    /// Takes transition `t` with `input`: checks it against the table, then lets `apply` build
    /// the next state from the current one and the input (handing both back if they do not
    /// fit together). A refusal leaves the object unchanged and hands the input back.
    fn step<I, T>(
        &mut self,
        t: Transition,
        log: &mut TransitionLog,
        input: I,
        apply: impl FnOnce(Self, I) -> Step<Self, T, I>,
    ) -> Result<T, Refused<I>> {
        let from = Some(self.kind());
        let refuse = |log: &mut TransitionLog, input| {
            log.record_refused(from, t);
            Refused {
                error: IllegalTransition {
                    from,
                    transition: t,
                },
                input,
            }
        };
        if !t.is_legal_from(from) {
            return Err(refuse(log, input));
        }
        match apply(std::mem::take(self), input) {
            Step::Next(next, out) => {
                log.record_taken(from, t, Some(next.kind()));
                *self = next;
                Ok(out)
            }
            Step::Unchanged(unchanged, input) => {
                *self = unchanged;
                Err(refuse(log, input))
            }
        }
    }

    /// `CopiedIn` (from `HostValid`): `device`, new device memory holding (or about to hold)
    /// the host copy's values, becomes the device copy.
    pub(crate) fn copied_in(
        &mut self,
        device: DeviceCopy<B>,
        log: &mut TransitionLog,
    ) -> Result<(), Refused<DeviceCopy<B>>> {
        self.filled(Transition::CopiedIn, device, log)
    }

    /// `Prefetched` (from `HostValid`): as `CopiedIn`, ahead of the use, on the copy stream.
    pub(crate) fn prefetched(
        &mut self,
        device: DeviceCopy<B>,
        log: &mut TransitionLog,
    ) -> Result<(), Refused<DeviceCopy<B>>> {
        self.filled(Transition::Prefetched, device, log)
    }

    /// `CopiedIn` or `Prefetched`.
    fn filled(
        &mut self,
        t: Transition,
        device: DeviceCopy<B>,
        log: &mut TransitionLog,
    ) -> Result<(), Refused<DeviceCopy<B>>> {
        self.step(t, log, device, |s, d| match s {
            Lifecycle::HostValid(h) => Step::Next(Lifecycle::Consistent(h, d), ()),
            other => Step::Unchanged(other, d),
        })
    }

    /// `WriteBackIssued` (from `DeviceDirty`): the device copy leaves, handed back for its
    /// blocks to be freed or handed over, with `write_back` in flight.
    pub(crate) fn write_back_issued(
        &mut self,
        write_back: WriteBack<B>,
        log: &mut TransitionLog,
    ) -> Result<DeviceCopy<B>, Refused<WriteBack<B>>> {
        self.step(
            Transition::WriteBackIssued,
            log,
            write_back,
            |s, w| match s {
                Lifecycle::DeviceDirty(d) => Step::Next(Lifecycle::WritingBack(w), d),
                other => Step::Unchanged(other, w),
            },
        )
    }

    /// `WriteBackLanded` (from `WritingBack`): `host`, the completed write-back's data, is the
    /// host copy. Hands back the write-back, whose host memory is no longer needed.
    pub(crate) fn write_back_landed(
        &mut self,
        host: HostCopy<B>,
        log: &mut TransitionLog,
    ) -> Result<WriteBack<B>, Refused<HostCopy<B>>> {
        self.step(Transition::WriteBackLanded, log, host, |s, h| match s {
            Lifecycle::WritingBack(w) => Step::Next(Lifecycle::HostValid(h), w),
            other => Step::Unchanged(other, h),
        })
    }

    /// `WriteBackLanded` (from `WritingBack`), keeping the write-back's host memory, which
    /// holds `elems` elements, as the host copy (no copy out of it).
    pub(crate) fn write_back_kept(
        &mut self,
        elems: usize,
        log: &mut TransitionLog,
    ) -> Result<(), Refused<()>> {
        self.step(Transition::WriteBackLanded, log, (), |s, ()| match s {
            // (Too small to hold the object, it would be refused; it was allocated for it.)
            Lifecycle::WritingBack(w) if HostCopy::<B>::fits(&w.buffer, elems) => Step::Next(
                Lifecycle::HostValid(HostCopy::in_held(
                    crate::host_copy::Held {
                        buffer: w.buffer,
                        origin: w.origin,
                    },
                    elems,
                )),
                (),
            ),
            other => Step::Unchanged(other, ()),
        })
    }

    /// `WrittenOnDevice` (from any state but `WritingBack`): the device copy becomes the only
    /// valid one. A resident object keeps its device copy (`fresh` must be `None`); one that
    /// is not resident takes `fresh`, the device memory the launch obtained for it. Returns the
    /// host copy it held, if any (the value a failed launch rolls back to).
    pub(crate) fn written_on_device(
        &mut self,
        fresh: Option<DeviceCopy<B>>,
        log: &mut TransitionLog,
    ) -> Result<Option<HostCopy<B>>, Refused<Option<DeviceCopy<B>>>> {
        self.step(Transition::WrittenOnDevice, log, fresh, |s, fresh| {
            match (s, fresh) {
                (Lifecycle::HostValid(h), Some(d)) => {
                    Step::Next(Lifecycle::DeviceDirty(d), Some(h))
                }
                (Lifecycle::Empty, Some(d)) => Step::Next(Lifecycle::DeviceDirty(d), None),
                (Lifecycle::Consistent(h, d), None) => {
                    Step::Next(Lifecycle::DeviceDirty(d), Some(h))
                }
                (Lifecycle::DeviceDirty(d), None) => Step::Next(Lifecycle::DeviceDirty(d), None),
                (other, fresh) => Step::Unchanged(other, fresh),
            }
        })
    }

    /// `Synced` (from `DeviceDirty`): `host`, read from the device copy, is the host copy
    /// (on-demand sync, or the eager copy back after a launch); the object stays resident.
    pub(crate) fn synced(
        &mut self,
        host: HostCopy<B>,
        log: &mut TransitionLog,
    ) -> Result<(), Refused<HostCopy<B>>> {
        self.device_read(Transition::Synced, host, log)
    }

    /// `WrittenBack` (from `DeviceDirty`): as `Synced`, forced by eviction; `Evicted` follows.
    pub(crate) fn written_back(
        &mut self,
        host: HostCopy<B>,
        log: &mut TransitionLog,
    ) -> Result<(), Refused<HostCopy<B>>> {
        self.device_read(Transition::WrittenBack, host, log)
    }

    /// `Synced` or `WrittenBack`.
    fn device_read(
        &mut self,
        t: Transition,
        host: HostCopy<B>,
        log: &mut TransitionLog,
    ) -> Result<(), Refused<HostCopy<B>>> {
        self.step(t, log, host, |s, h| match s {
            Lifecycle::DeviceDirty(d) => Step::Next(Lifecycle::Consistent(h, d), ()),
            other => Step::Unchanged(other, h),
        })
    }

    /// `Evicted` (from `Consistent`): the device copy is dropped to make room, and handed back.
    pub(crate) fn evicted(
        &mut self,
        log: &mut TransitionLog,
    ) -> Result<DeviceCopy<B>, IllegalTransition> {
        self.device_dropped(Transition::Evicted, log)
    }

    /// `Uncached` (from `Consistent`): the device copy is dropped after a launch (no dedup),
    /// and handed back.
    pub(crate) fn uncached(
        &mut self,
        log: &mut TransitionLog,
    ) -> Result<DeviceCopy<B>, IllegalTransition> {
        self.device_dropped(Transition::Uncached, log)
    }

    /// `Evicted` or `Uncached`.
    fn device_dropped(
        &mut self,
        t: Transition,
        log: &mut TransitionLog,
    ) -> Result<DeviceCopy<B>, IllegalTransition> {
        self.step(t, log, (), |s, ()| match s {
            Lifecycle::Consistent(h, d) => Step::Next(Lifecycle::HostValid(h), d),
            other => Step::Unchanged(other, ()),
        })
        .map_err(IllegalTransition::from)
    }

    /// `RolledBack` (from `DeviceDirty`): a failed launch's write is undone: back to
    /// `previous`, the host copy from before the launch (`HostValid`), or to no value
    /// (`Empty`). Hands back the device copy, which the launch may have half written.
    pub(crate) fn rolled_back(
        &mut self,
        previous: Option<HostCopy<B>>,
        log: &mut TransitionLog,
    ) -> Result<DeviceCopy<B>, Refused<Option<HostCopy<B>>>> {
        self.step(Transition::RolledBack, log, previous, |s, p| match s {
            Lifecycle::DeviceDirty(d) => {
                Step::Next(p.map_or(Lifecycle::Empty, Lifecycle::HostValid), d)
            }
            other => Step::Unchanged(other, p),
        })
    }

    /// `HostWritten` (from any state): `host` replaces the values. Hands back what the object
    /// held on the device side (a device copy, now stale, or a write-back in flight).
    pub(crate) fn host_written(
        &mut self,
        host: HostCopy<B>,
        log: &mut TransitionLog,
    ) -> Result<Left<B>, Refused<HostCopy<B>>> {
        self.step(Transition::HostWritten, log, host, |s, h| {
            Step::Next(Lifecycle::HostValid(h), s.into_left().1)
        })
    }

    /// `Released`: the object is gone. Hands back its host copy, if it held one, and what it
    /// held on the device side.
    pub(crate) fn released(self, log: &mut TransitionLog) -> (Option<HostCopy<B>>, Left<B>) {
        log.record_taken(Some(self.kind()), Transition::Released, None);
        self.into_left()
    }

    /// Takes the state apart: the host copy and the device side.
    fn into_left(self) -> (Option<HostCopy<B>>, Left<B>) {
        match self {
            Lifecycle::Empty => (None, Left::Nothing),
            Lifecycle::HostValid(h) => (Some(h), Left::Nothing),
            Lifecycle::Consistent(h, d) => (Some(h), Left::Device(d)),
            Lifecycle::DeviceDirty(d) => (None, Left::Device(d)),
            Lifecycle::WritingBack(w) => (None, Left::WriteBack(w)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::table::SLOTS;
    use super::*;
    use num_complex::Complex64;

    /// An object in state `s`, with a distinct host copy where the state holds one.
    type B = memhc_host::NullBackend;
    type L = Lifecycle<B>;

    /// A device copy of one arena block (no backend needed).
    fn device() -> DeviceCopy<B> {
        DeviceCopy {
            blocks: smallvec::smallvec![crate::block::Block::Arena {
                offset: 0,
                size: 48
            }],
            packed: true,
            hazards: crate::hazards::Hazards::default(),
        }
    }

    /// A write-back in flight, its host memory from the null backend.
    fn write_back() -> WriteBack<B> {
        let backend = B::new(1 << 10);
        WriteBack {
            buffer: backend.alloc_host(48).expect("host memory"),
            origin: crate::host_copy::Origin::Own,
            event: crate::hazards::Tagged {
                stream: 0,
                event: backend.create_event().expect("event"),
            },
        }
    }

    fn in_state(s: State) -> L {
        let host = vec![Complex64::new(1.0, 2.0); 3].into();
        match s {
            State::Empty => Lifecycle::Empty,
            State::HostValid => Lifecycle::HostValid(host),
            State::Consistent => Lifecycle::Consistent(host, device()),
            State::DeviceDirty => Lifecycle::DeviceDirty(device()),
            State::WritingBack => Lifecycle::WritingBack(write_back()),
        }
    }

    const STATES: [State; 5] = [
        State::Empty,
        State::HostValid,
        State::Consistent,
        State::DeviceDirty,
        State::WritingBack,
    ];

    /// Takes `t` with the input the state calls for (a fresh device copy for
    /// `WrittenOnDevice` on an object that is not resident).
    fn apply(
        l: &mut L,
        t: Transition,
        previous: bool,
        log: &mut TransitionLog,
    ) -> Option<Result<Option<State>, IllegalTransition>> {
        let data = || HostCopy::from(vec![Complex64::new(-1.0, 0.5); 3]);
        let r: Result<(), IllegalTransition> = match t {
            Transition::Registered | Transition::Created => return None,
            Transition::CopiedIn => l.copied_in(device(), log).map_err(Into::into),
            Transition::Prefetched => l.prefetched(device(), log).map_err(Into::into),
            Transition::WriteBackIssued => l
                .write_back_issued(write_back(), log)
                .map(drop)
                .map_err(Into::into),
            Transition::WriteBackLanded => l
                .write_back_landed(data(), log)
                .map(drop)
                .map_err(Into::into),
            Transition::WrittenOnDevice => {
                let fresh = (!l.is_resident()).then(device);
                l.written_on_device(fresh, log)
                    .map(drop)
                    .map_err(Into::into)
            }
            Transition::Synced => l.synced(data(), log).map_err(Into::into),
            Transition::WrittenBack => l.written_back(data(), log).map_err(Into::into),
            Transition::Evicted => l.evicted(log).map(drop),
            Transition::Uncached => l.uncached(log).map(drop),
            Transition::RolledBack => l
                .rolled_back(previous.then(data), log)
                .map(drop)
                .map_err(Into::into),
            Transition::HostWritten => l.host_written(data(), log).map(drop).map_err(Into::into),
            Transition::Released => {
                let _ = std::mem::take(l).released(log);
                return Some(Ok(None));
            }
        };
        Some(r.map(|()| Some(l.kind())))
    }

    #[test]
    fn every_transition_from_every_state_follows_the_table() {
        for from in STATES {
            for t in Transition::ALL {
                for previous in [false, true] {
                    let mut log = TransitionLog::default();
                    let mut l = in_state(from);
                    let before_host = l
                        .host()
                        .and_then(HostCopy::as_slice)
                        .map(<[Complex64]>::to_vec);
                    let Some(r) = apply(&mut l, t, previous, &mut log) else {
                        assert!(!t.is_legal_from(Some(from)), "{t:?} from {from:?}");
                        continue;
                    };
                    match r {
                        Ok(to) => {
                            assert!(
                                t.targets(Some(from)).contains(&to),
                                "{t:?} from {from:?} went to {to:?}"
                            );
                            let taken: Vec<_> = log.taken().collect();
                            assert_eq!(taken, vec![(Some(from), t, to, 1)]);
                            assert_eq!(log.refused_total(), 0);
                        }
                        Err(e) => {
                            assert!(!t.is_legal_from(Some(from)), "{t:?} from {from:?}: {e}");
                            assert_eq!(e.from, Some(from));
                            assert_eq!(e.transition, t);
                            // Refused: the object is exactly as it was.
                            assert_eq!(l.kind(), from);
                            assert_eq!(
                                l.host()
                                    .and_then(HostCopy::as_slice)
                                    .map(<[Complex64]>::to_vec),
                                before_host
                            );
                            assert_eq!(log.taken().count(), 0);
                            assert_eq!(log.refused().collect::<Vec<_>>(), vec![(Some(from), t, 1)]);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn each_illegal_transition_is_refused() {
        use State::{Consistent, DeviceDirty, Empty, HostValid, WritingBack};
        let illegal = [
            (
                Transition::CopiedIn,
                [Empty, Consistent, DeviceDirty, WritingBack].as_slice(),
            ),
            (
                Transition::Prefetched,
                &[Empty, Consistent, DeviceDirty, WritingBack],
            ),
            (Transition::WrittenOnDevice, &[WritingBack]),
            (
                Transition::Synced,
                &[Empty, HostValid, Consistent, WritingBack],
            ),
            (
                Transition::WrittenBack,
                &[Empty, HostValid, Consistent, WritingBack],
            ),
            (
                Transition::WriteBackIssued,
                &[Empty, HostValid, Consistent, WritingBack],
            ),
            (
                Transition::WriteBackLanded,
                &[Empty, HostValid, Consistent, DeviceDirty],
            ),
            (
                Transition::Evicted,
                &[Empty, HostValid, DeviceDirty, WritingBack],
            ),
            (
                Transition::Uncached,
                &[Empty, HostValid, DeviceDirty, WritingBack],
            ),
            (
                Transition::RolledBack,
                &[Empty, HostValid, Consistent, WritingBack],
            ),
        ];
        let mut refusals = 0;
        for (t, froms) in illegal {
            for &from in froms {
                let mut log = TransitionLog::default();
                let mut l = in_state(from);
                let r = apply(&mut l, t, true, &mut log);
                assert!(
                    matches!(r, Some(Err(IllegalTransition { from: Some(f), transition })) if f == from && transition == t),
                    "{t:?} from {from:?}: {r:?}"
                );
                assert_eq!(l.kind(), from);
                refusals += 1;
            }
        }
        // Every cell marked ✗ between existing states, and no other, was tried.
        let cells = STATES
            .iter()
            .flat_map(|&s| Transition::ALL.map(|t| (s, t)))
            .filter(|&(s, t)| {
                !t.is_legal_from(Some(s))
                    && !matches!(t, Transition::Registered | Transition::Created)
            })
            .count();
        assert_eq!(refusals, cells);
    }

    #[test]
    fn written_on_device_hands_back_the_stale_host_copy() {
        let mut log = TransitionLog::default();
        let mut l = L::registered(vec![Complex64::new(3.0, 0.0)].into(), &mut log);
        l.copied_in(device(), &mut log).unwrap();
        let previous = l.written_on_device(None, &mut log).unwrap();
        let kept = previous.as_ref().and_then(HostCopy::as_slice);
        assert_eq!(kept, Some([Complex64::new(3.0, 0.0)].as_slice()));
        assert!(l.host().is_none());
        assert!(l.is_resident());
        let undone = l.rolled_back(previous, &mut log).unwrap();
        assert_eq!(
            undone.bytes(),
            48,
            "the device copy comes back to be disposed of"
        );
        assert_eq!(
            l.host().and_then(HostCopy::as_slice),
            Some([Complex64::new(3.0, 0.0)].as_slice())
        );
        assert!(!l.is_resident());
        let mut g = L::created(&mut log);
        assert!(
            g.written_on_device(Some(device()), &mut log)
                .unwrap()
                .is_none()
        );
        g.rolled_back(None, &mut log).unwrap();
        assert_eq!(g.kind(), State::Empty);
        assert_eq!(log.count(Transition::RolledBack), 2);
        assert_eq!(log.count(Transition::Registered), 1);
        assert_eq!(log.count(Transition::Created), 1);
    }

    #[test]
    fn residency_is_the_state() {
        for s in STATES {
            let l = in_state(s);
            assert_eq!(l.is_resident(), s.is_resident(), "{s:?}");
            assert_eq!(l.device().is_some(), s.is_resident(), "{s:?}");
            assert_eq!(l.write_back().is_some(), s == State::WritingBack, "{s:?}");
        }
    }

    #[test]
    fn a_refused_transition_hands_its_device_copy_back() {
        let mut log = TransitionLog::default();
        // Already resident: a second device copy is refused, and returned.
        let mut l = in_state(State::Consistent);
        let r = l.written_on_device(Some(device()), &mut log).unwrap_err();
        assert_eq!(r.input.map(|d| d.bytes()), Some(48));
        assert_eq!(l.kind(), State::Consistent);
        // Not resident: writing on the device needs device memory.
        let mut e = in_state(State::Empty);
        assert!(e.written_on_device(None, &mut log).is_err());
        assert_eq!(e.kind(), State::Empty);
        // Copied in twice: the second copy comes back.
        let r = l.copied_in(device(), &mut log).unwrap_err();
        assert_eq!(r.input.bytes(), 48);
        assert_eq!(log.refused_total(), 3);
    }

    #[test]
    fn a_refusal_is_an_internal_error() {
        let mut log = TransitionLog::default();
        let mut l = in_state(State::DeviceDirty);
        let e = Error::from(l.evicted(&mut log).unwrap_err());
        assert!(
            matches!(&e, Error::Internal(m) if m.contains("Evicted") && m.contains("DeviceDirty")),
            "{e}"
        );
    }

    /// Parses a state cell of the documented table.
    fn parse_cell(cell: &str) -> Vec<Option<State>> {
        if cell == "✗" {
            return Vec::new();
        }
        cell.split('/')
            .map(|s| match s.trim().trim_matches('`') {
                "none" => None,
                "Empty" => Some(State::Empty),
                "HostValid" => Some(State::HostValid),
                "Consistent" => Some(State::Consistent),
                "DeviceDirty" => Some(State::DeviceDirty),
                "WritingBack" => Some(State::WritingBack),
                other => panic!("unknown state {other:?} in the table"),
            })
            .collect()
    }

    /// The table in the module documentation is the one the code follows.
    #[test]
    fn the_documented_table_is_the_table() {
        let source = include_str!("mod.rs");
        let rows: Vec<Vec<&str>> = source
            .lines()
            .filter_map(|l| l.strip_prefix("//! | `"))
            .map(|l| {
                let l = l.trim_end().trim_end_matches('|');
                l.split('|').map(str::trim).collect()
            })
            .collect();
        assert_eq!(rows.len(), Transition::ALL.len(), "one row per transition");
        for (row, t) in rows.iter().zip(Transition::ALL) {
            assert_eq!(row[0].trim_end_matches('`'), format!("{t:?}"));
            assert_eq!(row.len(), 1 + SLOTS.len(), "{t:?}: {row:?}");
            for (cell, from) in row[1..].iter().zip(SLOTS) {
                assert_eq!(
                    parse_cell(cell),
                    t.targets(from).to_vec(),
                    "{t:?} from {from:?}: the table says {cell}"
                );
            }
        }
    }
}
