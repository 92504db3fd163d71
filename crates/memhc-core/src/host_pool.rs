//! Host buffers kept for reuse: vectors, and the backend's host memory.
//!
//! Every value the runtime copies back from the device lands in a host vector, and every
//! object it releases frees one. For large objects both are expensive on the host, not on the
//! device: a fresh vector is mapped by the kernel a page at a time as the copy first touches
//! it (on the H100 host of 2026-11-26, faulting in a 37.7 MB node cost as much as copying it
//! several times over), and freeing it unmaps every page again (about 1 ms per node there).
//! The pool keeps the host vectors of released objects, by length, up to a byte cap, and
//! hands them to the next copy back of the same length, whose pages are then already mapped.
//!
//! A pooled vector still holds the values of the object it came from: it is only handed to a
//! copy that overwrites all of it (a read back, a write-back landing, a managed read), and a
//! copy that fails drops it.
//!
//! Small vectors (below [`SMALL_BYTES`]) are kept too, down to a floor of a few hundred bytes
//! (where the pool's own entry would weigh a tenth of the vector), but only [`SMALL_COUNT`] of
//! them: the allocator serves a small request from memory freed long ago, cold on a long
//! queue, and a new vector is zeroed before the copy overwrites it, so each write-back of a
//! small object cost a cache miss per line of it. A kept vector is not zeroed: only the copy
//! touches it. Few are needed (releases outnumber copies back), and few keep the pool's lists
//! in cache: a pool that kept every small vector released would grow its lists by a line
//! every few releases.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use num_complex::Complex64;

use crate::backend::{Backend, BackendError, HostMemory};
use crate::hazards::Hazards;
use crate::host_copy::{Held, HostCopy, Origin};
use crate::policy::IdHasher;

mod pinned;
use pinned::PinnedArena;

/// Host buffers of released objects, by size in bytes, for reuse by copies back from the
/// device: vectors (`T = Vec<Complex64>`) or the backend's host memory (page-locked on a GPU,
/// where a new allocation costs far more than a fault: it pins every page).
#[derive(Debug)]
pub(crate) struct HostPool<T> {
    /// Kept buffers by length in bytes (hashed with one multiplication: a lookup per copy back
    /// and per release).
    by_bytes: HashMap<usize, Vec<T>, BuildHasherDefault<IdHasher>>,
    bytes: usize,
    cap: usize,
    floor: usize,
    /// Buffers below this many bytes are small: at most `small_max` of them are kept.
    small_below: usize,
    small_max: usize,
    /// The small buffers held.
    small_count: usize,
}

/// A vector below this many bytes is small: the host pool keeps at most [`SMALL_COUNT`] of
/// them.
pub(crate) const SMALL_BYTES: usize = 1 << 20;

/// The most small vectors (below [`SMALL_BYTES`]) the host pool keeps: its lists of them then
/// take a few KiB.
pub(crate) const SMALL_COUNT: usize = 256;

impl<T> HostPool<T> {
    /// A pool that keeps at most `cap` bytes of buffers of at least `floor` bytes each.
    pub(crate) fn new(cap: usize, floor: usize) -> Self {
        HostPool {
            by_bytes: HashMap::default(),
            bytes: 0,
            cap,
            floor,
            small_below: 0,
            small_max: 0,
            small_count: 0,
        }
    }

    /// The same pool keeping at most `max` of the buffers below `below` bytes.
    pub(crate) fn with_small_max(mut self, below: usize, max: usize) -> Self {
        self.small_below = below;
        self.small_max = max;
        self
    }

    /// Keeps `v`, of `bytes` bytes, for reuse if it is at least the floor and fits under the
    /// cap; hands it back otherwise (for the caller to drop).
    pub(crate) fn put(&mut self, v: T, bytes: usize) -> Option<T> {
        if !self.can_keep(bytes) {
            return Some(v);
        }
        self.bytes += bytes;
        if bytes < self.small_below {
            self.small_count += 1;
        }
        self.by_bytes.entry(bytes).or_default().push(v);
        None
    }

    /// Whether a buffer of `bytes` bytes would be kept now.
    pub(crate) fn can_keep(&self, bytes: usize) -> bool {
        bytes > 0
            && bytes >= self.floor
            && self.bytes + bytes <= self.cap
            && (bytes >= self.small_below || self.small_count < self.small_max)
    }

    /// A kept buffer of `bytes` bytes (holding old values), if there is one.
    pub(crate) fn take(&mut self, bytes: usize) -> Option<T> {
        // Nothing kept (small objects, or a pool of zero bytes): no lookup.
        if self.bytes == 0 {
            return None;
        }
        let v = self.by_bytes.get_mut(&bytes).and_then(Vec::pop)?;
        self.bytes -= bytes;
        if bytes < self.small_below {
            self.small_count -= 1;
        }
        Some(v)
    }

    /// The bytes of the buffers held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Every buffer held, handed out (the pool is empty after).
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = T> {
        self.bytes = 0;
        self.small_count = 0;
        std::mem::take(&mut self.by_bytes).into_values().flatten()
    }
}

impl HostPool<Vec<Complex64>> {
    /// Keeps `v` for reuse if it is at least the floor and fits under the cap; drops it
    /// otherwise.
    pub(crate) fn put_vec(&mut self, v: Vec<Complex64>) {
        let bytes = std::mem::size_of_val(v.as_slice());
        drop(self.put(v, bytes));
    }

    /// A vector of `len` elements for a copy to overwrite whole: a pooled one (holding old
    /// values), or a new one of zeros from zeroed pages; a length the host cannot hold is an
    /// error, not an abort ([`crate::host_copy::zeroed`]).
    pub(crate) fn take_vec(&mut self, len: usize) -> crate::error::Result<Vec<Complex64>> {
        match len
            .checked_mul(std::mem::size_of::<Complex64>())
            .and_then(|bytes| self.take(bytes))
        {
            Some(v) => Ok(v),
            None => crate::host_copy::zeroed(len),
        }
    }
}

/// The runtime's host memory: vectors kept for reuse, the backend's host memory kept for
/// reuse, and the pinned pool it is cut from. (How often each object's vector was uploaded,
/// for registration in place, is in the object's record.)
pub(crate) struct HostPools<B: Backend> {
    /// Vectors of released objects ([`Config::host_pool_bytes`](crate::Config::host_pool_bytes)).
    pub vecs: HostPool<Vec<Complex64>>,
    /// The backend's host memory of released objects
    /// ([`Config::pinned_pool_bytes`](crate::Config::pinned_pool_bytes)), each with the work
    /// that may still read it (a copy in from it, queued when its object was released): a
    /// buffer is handed out again only once that work is done.
    pinned: HostPool<(Held<B>, Hazards<B>)>,
    /// The chunks new host memory is cut from ([`PinnedArena`]).
    arena: PinnedArena<B>,
    /// Zeros, never written, that staged copies of host copies not made yet
    /// ([`HostCopy::zeros`]) read: as long as the largest piece copied so far, so the nodes
    /// themselves cost no memory.
    zeros: Vec<Complex64>,
}

impl<B: Backend> HostPools<B> {
    /// Pools as `config` sizes them.
    pub(crate) fn new(config: &crate::Config) -> Self {
        HostPools {
            vecs: HostPool::new(config.host_pool_bytes, config.host_pool_min_bytes)
                .with_small_max(SMALL_BYTES, SMALL_COUNT),
            pinned: HostPool::new(config.pinned_pool_bytes, 0),
            arena: PinnedArena::new(config.pinned_reserve_bytes, config.pinned_chunk_bytes),
            zeros: Vec::new(),
        }
    }

    /// Makes the zero buffer at least `elems` long ([`HostPools::zeros`]); a size the host
    /// cannot hold is an error, not an abort.
    pub(crate) fn grow_zeros(&mut self, elems: usize) -> crate::error::Result<()> {
        if self.zeros.len() < elems {
            // Dropped first: the old one and the new one are never held at once.
            self.zeros = Vec::new();
            self.zeros = crate::host_copy::zeroed(elems)?;
        }
        Ok(())
    }

    /// Zeros, never written, as many as the largest [`HostPools::grow_zeros`] asked for: the
    /// values of host copies not made yet, for copies that read them.
    pub(crate) fn zeros(&self) -> &[Complex64] {
        &self.zeros
    }

    /// Keeps a released object's host copy for reuse, or drops it; `uses` is the work that may
    /// still read it. Registered caller memory is dropped (unregistered).
    pub(crate) fn put(&mut self, host: HostCopy<B>, uses: Hazards<B>) {
        match host.into_parts() {
            Ok(v) => self.vecs.put_vec(v),
            Err((held, mut reads)) => {
                reads.absorb(uses);
                self.put_held(held, reads)
            }
        }
    }

    /// Keeps the backend's host memory for reuse, or drops it (dropping waits for the copies
    /// that use it); `uses` is the work that may still read it.
    pub(crate) fn put_held(&mut self, held: Held<B>, uses: Hazards<B>) {
        if matches!(held.origin, Origin::Registered) {
            return;
        }
        let bytes = held.buffer.bytes();
        drop(self.pinned.put((held, uses), bytes));
    }

    /// Host memory of `bytes` bytes for a copy to overwrite: a kept buffer, once the work
    /// that may read it is done, or new memory ([`HostPools::new_buffer`]).
    pub(crate) fn take_buffer<D: Same<B>>(
        &mut self,
        bytes: usize,
        backend: &D,
    ) -> Result<Held<B>, BackendError> {
        match self.pinned.take(bytes) {
            Some((held, uses)) => {
                uses.settle(backend)?;
                Ok(held)
            }
            None => self.new_buffer(bytes, backend),
        }
    }

    /// New host memory of `bytes` bytes: a piece of the pinned pool (after giving the pool
    /// back the buffers kept for reuse, if it is full; growing it by a chunk if still full),
    /// or, where the pool is off or the backend cuts no pieces, an allocation of its own.
    pub(crate) fn new_buffer<D: Same<B>>(
        &mut self,
        bytes: usize,
        backend: &D,
    ) -> Result<Held<B>, BackendError> {
        if let Some(held) = self.arena.carve(backend, bytes)? {
            return Ok(held);
        }
        if self.arena.cuts() && self.pinned.bytes() > 0 {
            // Kept buffers hold pieces of the pool: give them back before pinning more.
            for (held, uses) in self.pinned.drain() {
                uses.settle(backend)?;
                drop(held);
            }
            if let Some(held) = self.arena.carve(backend, bytes)? {
                return Ok(held);
            }
        }
        if let Some(held) = self.arena.grow(backend, bytes)? {
            return Ok(held);
        }
        Ok(Held {
            buffer: backend.alloc_host(bytes)?,
            origin: Origin::Own,
        })
    }

    /// Whether the pool of host memory has room for a buffer of `bytes` more.
    pub(crate) fn can_keep(&self, bytes: usize) -> bool {
        self.pinned.can_keep(bytes)
    }

    /// Bytes held in both.
    pub(crate) fn bytes(&self) -> usize {
        self.vecs.bytes() + self.pinned.bytes()
    }

    /// The pinned pool: bytes of its chunks, how many, and bytes free in them.
    pub(crate) fn pinned_pool(&self) -> PinnedPoolStats {
        PinnedPoolStats {
            bytes: self.arena.bytes(),
            chunks: self.arena.chunks(),
            free_bytes: self.arena.free_bytes(),
        }
    }
}

/// A backend over the same host memory, streams and events as `B` (the runtime's backend, `B`
/// wrapped in its counters).
pub(crate) trait Same<B: Backend>:
    Backend<HostBuffer = B::HostBuffer, Stream = B::Stream, Event = B::Event>
{
}

impl<B: Backend, D> Same<B> for D where
    D: Backend<HostBuffer = B::HostBuffer, Stream = B::Stream, Event = B::Event>
{
}

/// The runtime's pinned pool ([`Runtime::pinned_pool`](crate::Runtime::pinned_pool)): a few
/// large allocations of the backend's host memory, cut into pieces for host copies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PinnedPoolStats {
    /// Bytes of the chunks allocated (each one backend host allocation).
    pub bytes: usize,
    /// Chunks allocated.
    pub chunks: usize,
    /// Bytes of the chunks no piece holds.
    pub free_bytes: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    const ELEM: usize = std::mem::size_of::<Complex64>();

    fn filled(len: usize, x: f64) -> Vec<Complex64> {
        vec![Complex64::new(x, -x); len]
    }

    #[test]
    fn a_kept_vector_serves_the_next_request_of_its_length() {
        let mut p = HostPool::<Vec<Complex64>>::new(1000 * ELEM, 0);
        let v = filled(100, 3.0);
        let at = v.as_ptr();
        p.put_vec(v);
        assert_eq!(p.bytes(), 100 * ELEM);
        let other = p.take_vec(99).unwrap();
        assert_eq!(other.len(), 99);
        assert!(
            other.iter().all(|z| *z == Complex64::new(0.0, 0.0)),
            "a new one is zeros"
        );
        let again = p.take_vec(100).unwrap();
        assert_eq!(again.as_ptr(), at, "the same allocation comes back");
        assert_eq!(p.bytes(), 0);
        assert_eq!(p.take_vec(100).unwrap().len(), 100, "then new ones");
    }

    #[test]
    fn the_cap_and_the_floor_bound_what_is_kept() {
        let mut p = HostPool::<Vec<Complex64>>::new(250 * ELEM, 50 * ELEM);
        p.put_vec(filled(49, 1.0)); // below the floor
        assert_eq!(p.bytes(), 0);
        p.put_vec(filled(100, 1.0));
        p.put_vec(filled(100, 2.0));
        p.put_vec(filled(100, 3.0)); // over the cap
        assert_eq!(p.bytes(), 200 * ELEM);
        p.put_vec(Vec::new());
        assert_eq!(p.bytes(), 200 * ELEM);
        let mut off = HostPool::<Vec<Complex64>>::new(0, 0);
        off.put_vec(filled(10, 1.0));
        assert_eq!(off.bytes(), 0, "a cap of zero keeps nothing");
    }

    #[test]
    fn a_vector_the_host_cannot_hold_is_an_error_not_an_abort() {
        let mut p = HostPool::<Vec<Complex64>>::new(1000 * ELEM, 0);
        for len in [usize::MAX / 8, usize::MAX] {
            let err = p
                .take_vec(len)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                err.contains("cannot hold") && !err.contains('\n'),
                "{len}: {err}"
            );
        }
        assert_eq!(p.take_vec(3).map(|v| v.len()).ok(), Some(3));
    }

    #[test]
    fn small_vectors_are_kept_up_to_their_own_count() {
        let mut p = HostPool::<Vec<Complex64>>::new(1000 * ELEM, 0).with_small_max(100 * ELEM, 2);
        p.put_vec(filled(60, 1.0));
        p.put_vec(filled(60, 2.0));
        p.put_vec(filled(60, 3.0)); // a third small one
        assert_eq!(p.bytes(), 120 * ELEM);
        p.put_vec(filled(500, 4.0)); // not small: the whole cap applies
        assert_eq!(p.bytes(), 620 * ELEM);
        let v = p.take_vec(60).unwrap();
        assert_eq!(
            v[0],
            Complex64::new(2.0, -2.0),
            "the last kept comes back first"
        );
        p.put_vec(filled(60, 5.0)); // room again
        assert_eq!(p.bytes(), 620 * ELEM);
        assert_eq!(p.drain().count(), 3);
        assert_eq!(p.bytes(), 0);
        p.put_vec(filled(60, 6.0));
        p.put_vec(filled(60, 7.0));
        assert_eq!(
            p.bytes(),
            120 * ELEM,
            "draining empties the small count too"
        );
    }
}
