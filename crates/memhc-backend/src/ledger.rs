//! Device-memory accounting against a byte budget: a capacity, the bytes in use, and a
//! reservation that a buffer gives back when it is dropped, so the count can never leak. The
//! backends that play a device in host memory (host, null) use it as their whole memory; the
//! GPU backends use it for the budget they are given below the card's memory.

use std::sync::{Arc, Mutex};

use super::MemInfo;
use crate::error::BackendError;

/// Live bytes against a capacity, shared by a backend and its buffers.
#[derive(Debug)]
pub struct Ledger {
    capacity: usize,
    used: Mutex<usize>,
}

impl Ledger {
    /// A ledger of `capacity` bytes, none used.
    pub fn new(capacity: usize) -> Arc<Self> {
        Arc::new(Ledger {
            capacity,
            used: Mutex::new(0),
        })
    }

    /// The capacity.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes in use.
    pub fn used(&self) -> usize {
        *self.used.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Free and total bytes.
    pub fn mem_info(&self) -> MemInfo {
        MemInfo {
            free: self.capacity - self.used(),
            total: self.capacity,
        }
    }

    /// Takes `bytes`, or fails with [`BackendError::OutOfMemory`] if they are not free.
    pub fn reserve(&self, bytes: usize) -> Result<(), BackendError> {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let free = self.capacity - *used;
        if bytes > free {
            return Err(BackendError::OutOfMemory {
                requested: bytes,
                free,
            });
        }
        *used += bytes;
        Ok(())
    }

    /// Gives back `bytes` taken by [`Ledger::reserve`].
    pub fn release(&self, bytes: usize) {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        *used -= bytes;
    }

    /// Takes `bytes` as a [`Reservation`] that gives them back when dropped: what a buffer
    /// holds, so that its bytes return to the ledger however the buffer goes.
    pub fn take(self: &Arc<Self>, bytes: usize) -> Result<Reservation, BackendError> {
        self.reserve(bytes)?;
        Ok(Reservation {
            ledger: Arc::clone(self),
            bytes,
        })
    }
}

/// Bytes taken from a [`Ledger`] by [`Ledger::take`], given back when dropped.
#[derive(Debug)]
pub struct Reservation {
    ledger: Arc<Ledger>,
    bytes: usize,
}

impl Reservation {
    /// The bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.ledger.release(self.bytes);
    }
}
