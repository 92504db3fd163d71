//! The transport: how the master and the workers exchange [`Message`]s. Two traits, one per
//! side, so that the scheduling logic ([`crate::scheduler`], [`crate::worker`]) runs the same
//! over threads of one process ([`crate::inprocess`], the unit tests) and over MPI ranks
//! (`crate::mpi`, feature `mpi`).
//!
//! Receives take a timeout and return `None` when it passes: nothing in a campaign waits
//! forever, which is how a lost rank is noticed.

use std::time::Duration;

use crate::error::TransportError;
use crate::message::Message;

/// The master's side: one link to every worker, workers numbered by rank `0..workers()`.
pub trait MasterLink {
    /// How many workers (ranks) there are.
    fn workers(&self) -> usize;

    /// Sends `message` to the worker of rank `to`.
    fn send(&mut self, to: usize, message: Message) -> Result<(), TransportError>;

    /// The next message from any worker, with its rank; `None` if none came within `timeout`.
    fn recv(&mut self, timeout: Duration) -> Result<Option<(usize, Message)>, TransportError>;
}

/// A worker's side: its link to the master.
pub trait WorkerLink {
    /// This worker's rank.
    fn rank(&self) -> usize;

    /// Sends `message` to the master.
    fn send(&mut self, message: Message) -> Result<(), TransportError>;

    /// The next message from the master; `None` if none came within `timeout`.
    fn recv(&mut self, timeout: Duration) -> Result<Option<Message>, TransportError>;

    /// Whether the master may still be there. A transport that cannot tell says `true` (an
    /// MPI job is torn down by its launcher instead); the in-process one knows, which lets a
    /// worker that plays dead end when its test is over.
    fn master_alive(&self) -> bool {
        true
    }
}
