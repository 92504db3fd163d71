//! The pinned pool: a few large allocations of the backend's host memory (page-locked on a
//! GPU), cut into pieces for host copies ([`Backend::host_piece`]), instead of one page-locked
//! allocation per buffer.
//!
//! Page-locking is paid per allocation and per byte (on the H100 host, about 3 GB/s), and
//! every allocation is a driver call that maps and locks its pages; a queue of thousands of
//! nodes makes thousands of them. The pool makes one chunk of
//! [`Config::pinned_reserve_bytes`](crate::Config::pinned_reserve_bytes) (what the plan says
//! the run holds on the host at once, where a plan exists) and grows by chunks of
//! [`Config::pinned_chunk_bytes`](crate::Config::pinned_chunk_bytes) when it is full; each
//! chunk's free space is the runtime's own best-fit sub-allocator ([`SubAllocator`], the
//! device arena's), pieces rounded to [`PIECE_ALIGN`] (a page).
//!
//! A piece's range goes back to its chunk when the piece is dropped ([`Lease`]), and only after
//! the backend's host memory over it is gone, which waits for the copies that use it: a range
//! is never handed out again while a DMA still reads or writes it. The chunks go when the pool
//! and every piece are gone (each piece keeps its chunk alive), at the end of the run.

use std::sync::{Arc, Mutex};

use super::Same;
use crate::arena::SubAllocator;
use crate::backend::{Backend, BackendError, BackendOp, HostMemory};
use crate::host_copy::{Held, Origin};
use crate::lease::Lease;

/// Alignment and granularity of pieces: a page, so that each starts where a DMA is fastest.
pub(crate) const PIECE_ALIGN: usize = 4096;

/// One large allocation and its free space.
struct Chunk<B: Backend> {
    memory: Arc<B::HostBuffer>,
    free: Arc<Mutex<SubAllocator>>,
}

/// The chunks. See the [module documentation](self).
pub(crate) struct PinnedArena<B: Backend> {
    chunks: Vec<Chunk<B>>,
    /// The first chunk's size (the plan's), at least `grow`.
    first: usize,
    /// Each later chunk's size; 0: no pool (one allocation per buffer).
    grow: usize,
    /// Whether the backend cuts pieces (false once it said it does not).
    cuts: bool,
    /// Bytes of all chunks.
    bytes: usize,
}

impl<B: Backend> PinnedArena<B> {
    /// A pool whose first chunk holds `first` bytes and later ones `grow`; `grow` 0: none.
    pub(crate) fn new(first: usize, grow: usize) -> Self {
        PinnedArena {
            chunks: Vec::new(),
            first: first.max(grow),
            grow,
            cuts: grow > 0,
            bytes: 0,
        }
    }

    /// Whether pieces are cut (the pool is on and the backend cuts them).
    pub(crate) fn cuts(&self) -> bool {
        self.cuts
    }

    /// Bytes of the chunks allocated.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Chunks allocated.
    pub(crate) fn chunks(&self) -> usize {
        self.chunks.len()
    }

    /// Free bytes in the chunks (a piece held by anyone is not free).
    pub(crate) fn free_bytes(&self) -> usize {
        self.chunks
            .iter()
            .map(|c| {
                c.free
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .free_bytes()
            })
            .sum()
    }

    /// A piece of `bytes` from a chunk that has room, if one has.
    pub(crate) fn carve<D: Same<B>>(
        &mut self,
        backend: &D,
        bytes: usize,
    ) -> Result<Option<Held<B>>, BackendError> {
        if !self.cuts {
            return Ok(None);
        }
        let size = rounded(bytes)?;
        for i in 0..self.chunks.len() {
            if let Some(held) = self.cut(backend, i, bytes, size)? {
                return Ok(Some(held));
            }
            if !self.cuts {
                break;
            }
        }
        Ok(None)
    }

    /// A piece of `bytes` from a new chunk: the first one as large as the plan, later ones
    /// [`Config::pinned_chunk_bytes`](crate::Config::pinned_chunk_bytes); either at least the
    /// piece. `None` if the pool is off or the backend cuts no pieces.
    pub(crate) fn grow<D: Same<B>>(
        &mut self,
        backend: &D,
        bytes: usize,
    ) -> Result<Option<Held<B>>, BackendError> {
        if !self.cuts {
            return Ok(None);
        }
        let size = rounded(bytes)?;
        if self.chunks.is_empty() && !self.probe(backend)? {
            return Ok(None);
        }
        let want = if self.chunks.is_empty() {
            self.first
        } else {
            self.grow
        };
        let chunk_bytes = want.max(size);
        let memory = Arc::new(backend.alloc_host(chunk_bytes)?);
        self.chunks.push(Chunk {
            memory,
            free: Arc::new(Mutex::new(SubAllocator::new(chunk_bytes))),
        });
        self.bytes += chunk_bytes;
        let held = self.cut(backend, self.chunks.len() - 1, bytes, size)?;
        if held.is_none()
            && let Some(c) = self.chunks.pop()
        {
            // No piece after all (the backend cuts none): the chunk goes again.
            self.bytes -= c.memory.bytes();
        }
        Ok(held)
    }

    /// Whether the backend cuts pieces, asked once with a chunk of one page before the first
    /// large one (so that a backend that cuts none never gets a chunk the plan's size).
    fn probe<D: Same<B>>(&mut self, backend: &D) -> Result<bool, BackendError> {
        let chunk = Arc::new(backend.alloc_host(PIECE_ALIGN)?);
        self.cuts = backend.host_piece(&chunk, 0, PIECE_ALIGN)?.is_some();
        Ok(self.cuts)
    }

    /// A piece of `bytes` (taking `size`) from chunk `i`, if it has room.
    fn cut<D: Same<B>>(
        &mut self,
        backend: &D,
        i: usize,
        bytes: usize,
        size: usize,
    ) -> Result<Option<Held<B>>, BackendError> {
        let Some(chunk) = self.chunks.get(i) else {
            return Ok(None);
        };
        let Some((offset, size)) = chunk
            .free
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .alloc(size)
        else {
            return Ok(None);
        };
        let lease = Lease::new(Arc::clone(&chunk.free), offset, size);
        match backend.host_piece(&chunk.memory, offset, bytes)? {
            Some(buffer) => Ok(Some(Held {
                buffer,
                origin: Origin::Piece { _lease: lease },
            })),
            None => {
                // The backend cuts no pieces: allocate each buffer on its own from now on.
                drop(lease);
                self.cuts = false;
                Ok(None)
            }
        }
    }
}

/// The bytes a piece of `bytes` takes: a multiple of [`PIECE_ALIGN`].
fn rounded(bytes: usize) -> Result<usize, BackendError> {
    bytes
        .max(1)
        .checked_next_multiple_of(PIECE_ALIGN)
        .ok_or_else(|| BackendError::invalid(BackendOp::Alloc, format!("{bytes} host bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use memhc_host::HostBackend;

    #[test]
    fn a_backend_that_cuts_no_pieces_gets_no_chunk_and_is_not_asked_again() {
        let b = HostBackend::new(1 << 20);
        let mut pool = PinnedArena::<HostBackend>::new(64 << 20, 1 << 20);
        assert!(pool.cuts());
        assert!(pool.carve(&b, 1000).unwrap().is_none(), "no chunk yet");
        assert!(pool.grow(&b, 1000).unwrap().is_none(), "the probe says no");
        assert!(!pool.cuts());
        assert_eq!((pool.chunks(), pool.bytes(), pool.free_bytes()), (0, 0, 0));
        assert!(pool.grow(&b, 1000).unwrap().is_none());
        let off = PinnedArena::<HostBackend>::new(64 << 20, 0);
        assert!(!off.cuts(), "a chunk size of zero: no pool");
    }

    #[test]
    fn pieces_are_whole_pages_and_a_size_past_the_address_space_is_refused() {
        assert_eq!(rounded(1).unwrap(), PIECE_ALIGN);
        assert_eq!(rounded(PIECE_ALIGN).unwrap(), PIECE_ALIGN);
        assert_eq!(rounded(PIECE_ALIGN + 1).unwrap(), 2 * PIECE_ALIGN);
        assert!(rounded(usize::MAX).is_err());
    }

    #[test]
    fn a_lease_gives_its_range_back_once_dropped() {
        let free = Arc::new(Mutex::new(SubAllocator::new(4 * PIECE_ALIGN)));
        let (offset, size) = free.lock().unwrap().alloc(2 * PIECE_ALIGN).unwrap();
        let lease = Lease::new(Arc::clone(&free), offset, size);
        assert_eq!(free.lock().unwrap().free_bytes(), 2 * PIECE_ALIGN);
        drop(lease);
        assert_eq!(free.lock().unwrap().free_bytes(), 4 * PIECE_ALIGN);
        assert_eq!(
            free.lock().unwrap().largest_free(),
            4 * PIECE_ALIGN,
            "coalesced"
        );
    }
}
