//! The events of the work that reads or writes a device allocation, and the waits they imply.
//!
//! Every resident object and every pooled buffer carries a [`Hazards`]: the event of the last
//! work that wrote it and the events of the work that has read it since. Before new work reads
//! the allocation, its stream waits on the last write; before new work writes it, on the last
//! write and every read since. Before the host frees or hands the memory back, it waits on all
//! of them.
//!
//! The methods take any backend with the same stream and event types (the runtime passes its
//! instrumented wrapper).

use smallvec::SmallVec;

use crate::backend::Backend;
use crate::error::BackendError;

/// A short list of events, held inline: an allocation almost always has one last write and a
/// read or two since, so its history costs no heap allocation (a long queue makes and drops
/// one per object, and the allocator's work was a visible share of the runtime's cost).
type Events<B> = SmallVec<[Tagged<B>; 2]>;

/// An event, and the index of the runtime stream it was recorded on (a stream never needs to
/// wait on its own events: its work is in order).
pub(crate) struct Tagged<B: Backend> {
    pub stream: usize,
    pub event: B::Event,
}

impl<B: Backend> Clone for Tagged<B> {
    fn clone(&self) -> Self {
        Tagged {
            stream: self.stream,
            event: self.event.clone(),
        }
    }
}

/// Outstanding work on one allocation.
pub(crate) struct Hazards<B: Backend> {
    /// The last write; more than one only after [`Hazards::absorb`] combined histories.
    writes: Events<B>,
    /// Reads since the last write.
    reads: Events<B>,
}

impl<B: Backend> Default for Hazards<B> {
    fn default() -> Self {
        Hazards {
            writes: SmallVec::new(),
            reads: SmallVec::new(),
        }
    }
}

impl<B: Backend> Clone for Hazards<B> {
    fn clone(&self) -> Self {
        Hazards {
            writes: self.writes.clone(),
            reads: self.reads.clone(),
        }
    }
}

impl<B: Backend> std::fmt::Debug for Hazards<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hazards")
            .field("writes", &self.writes.len())
            .field("reads", &self.reads.len())
            .finish()
    }
}

impl<B: Backend> Hazards<B> {
    fn all(&self) -> impl Iterator<Item = &Tagged<B>> {
        self.writes.iter().chain(self.reads.iter())
    }

    /// Makes `stream` (runtime index `index`) wait until the allocation may be read.
    pub fn before_read<D>(
        &self,
        backend: &D,
        index: usize,
        stream: &B::Stream,
    ) -> Result<(), BackendError>
    where
        D: Backend<Stream = B::Stream, Event = B::Event>,
    {
        self.writes
            .iter()
            .filter(|t| t.stream != index)
            .try_for_each(|t| backend.wait_event(stream, &t.event))
    }

    /// Makes `stream` wait until the allocation may be overwritten.
    pub fn before_write<D>(
        &self,
        backend: &D,
        index: usize,
        stream: &B::Stream,
    ) -> Result<(), BackendError>
    where
        D: Backend<Stream = B::Stream, Event = B::Event>,
    {
        self.all()
            .filter(|t| t.stream != index)
            .try_for_each(|t| backend.wait_event(stream, &t.event))
    }

    /// Blocks the host until every recorded use has completed.
    pub fn settle<D>(&self, backend: &D) -> Result<(), BackendError>
    where
        D: Backend<Stream = B::Stream, Event = B::Event>,
    {
        self.all()
            .try_for_each(|t| backend.event_synchronize(&t.event))
    }

    /// Notes a read by the work `event` marks; forgets reads that have completed.
    pub fn add_read<D>(&mut self, backend: &D, event: Tagged<B>)
    where
        D: Backend<Stream = B::Stream, Event = B::Event>,
    {
        // A failed query keeps the event: waiting on a completed event is harmless.
        self.reads
            .retain(|t| !matches!(backend.event_query(&t.event), Ok(true)));
        self.reads.push(event);
    }

    /// Notes a write by the work `event` marks. That work waited on every earlier use, so they
    /// are implied by it.
    pub fn set_write(&mut self, event: Tagged<B>) {
        self.writes.clear();
        self.writes.push(event);
        self.reads.clear();
    }

    /// Notes a write by the work `event` marks when that work may not have waited on every
    /// earlier use (a launch that failed before or while ordering its stream): the earlier
    /// uses are kept, so that whoever uses the allocation next still waits for them.
    pub fn add_write(&mut self, event: Tagged<B>) {
        self.writes.push(event);
    }

    /// Adds the uses recorded in `other` (when buffers with histories are combined into one
    /// object).
    pub fn absorb(&mut self, other: Hazards<B>) {
        if self.writes.is_empty() && self.reads.is_empty() {
            *self = other;
            return;
        }
        self.writes.extend(other.writes);
        self.reads.extend(other.reads);
    }
}
