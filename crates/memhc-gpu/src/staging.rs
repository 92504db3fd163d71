//! Buffers recycled once the device work that uses them has completed: the page-locked
//! staging buffers of a stream's copies. A buffer taken from the pool is the caller's alone
//! until it is given back, either idle or in flight with the fence that marks the end of the
//! work that uses it; it is handed out again only once that fence has completed.

use std::collections::VecDeque;

use memhc_backend::BackendError;

/// A buffer a [`StagingPool`] can hand out.
pub trait Staging {
    /// Size in bytes.
    fn capacity(&self) -> usize;
}

/// The end of the device work that uses a buffer in flight.
pub trait Completion {
    /// Whether the work has completed.
    fn query(&self) -> Result<bool, BackendError>;
    /// Blocks until the work has completed.
    fn wait(&self) -> Result<(), BackendError>;
}

/// Buffers for device work, bounded both ways: at most `idle_cap` bytes are kept idle (the
/// largest beyond are freed), and once `busy_cap` bytes are in flight, [`StagingPool::acquire`]
/// waits for the oldest fence instead of allocating more.
#[derive(Debug)]
pub struct StagingPool<H, F> {
    idle: Vec<H>,
    busy: VecDeque<(H, F)>,
    /// Bytes of every buffer this pool allocated and still owns (idle, in flight or lent out).
    owned: usize,
    idle_cap: usize,
    busy_cap: usize,
}

impl<H: Staging, F: Completion> StagingPool<H, F> {
    /// An empty pool.
    pub fn new(idle_cap: usize, busy_cap: usize) -> Self {
        StagingPool {
            idle: Vec::new(),
            busy: VecDeque::new(),
            owned: 0,
            idle_cap,
            busy_cap,
        }
    }

    /// The size to allocate for a request of `bytes`: a power of two of at least 1 MiB, so
    /// that buffers are reused across nearby sizes.
    pub fn allocation_size(bytes: usize) -> usize {
        bytes.max(1 << 20).next_power_of_two()
    }

    /// Moves every buffer whose fence has completed back to idle, oldest first, stopping at
    /// the first still in flight (`wait_oldest`: after waiting for the oldest); then frees idle
    /// buffers beyond the idle cap, largest first (they are the rarest requests). A failed
    /// query or wait leaves the buffer in flight.
    fn reclaim(&mut self, mut wait_oldest: bool) -> Result<(), BackendError> {
        while let Some((_, fence)) = self.busy.front() {
            let done = if std::mem::take(&mut wait_oldest) {
                fence.wait().map(|()| true)?
            } else {
                fence.query()?
            };
            if !done {
                break;
            }
            if let Some((buffer, _)) = self.busy.pop_front() {
                self.idle.push(buffer);
            }
        }
        self.idle.sort_by_key(Staging::capacity);
        while self.idle_bytes() > self.idle_cap {
            match self.idle.pop() {
                Some(b) => self.discard(b),
                None => break,
            }
        }
        Ok(())
    }

    /// The smallest idle buffer of at least `bytes`, if any.
    fn take(&mut self, bytes: usize) -> Option<H> {
        let at = self
            .idle
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= bytes)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i)?;
        Some(self.idle.swap_remove(at))
    }

    /// A buffer of at least `bytes` that no queued work uses: an idle one, else a new one from
    /// `alloc`, asked for [`StagingPool::allocation_size`] bytes. Past the in-flight cap it
    /// waits for the oldest fence first (and again, until a buffer is free or the bytes in
    /// flight allow a new one).
    pub fn acquire(
        &mut self,
        bytes: usize,
        alloc: impl FnOnce(usize) -> Result<H, BackendError>,
    ) -> Result<H, BackendError> {
        let size = Self::allocation_size(bytes);
        let mut wait = false;
        loop {
            self.reclaim(wait)?;
            if let Some(b) = self.take(bytes) {
                return Ok(b);
            }
            if self.busy.is_empty() || self.busy_bytes() + size <= self.busy_cap {
                break;
            }
            wait = true;
        }
        let b = alloc(size)?;
        self.owned += b.capacity();
        Ok(b)
    }

    /// Takes back a buffer that queued work uses until `fence` completes.
    pub fn in_flight(&mut self, buffer: H, fence: F) {
        self.busy.push_back((buffer, fence));
    }

    /// Takes back a buffer no queued work uses.
    pub fn put_idle(&mut self, buffer: H) {
        self.idle.push(buffer);
    }

    /// Frees a buffer instead of keeping it (after a failure, when its state is unknown).
    pub fn discard(&mut self, buffer: H) {
        self.owned = self.owned.saturating_sub(buffer.capacity());
        drop(buffer);
    }

    /// Bytes of idle buffers.
    pub fn idle_bytes(&self) -> usize {
        self.idle.iter().map(Staging::capacity).sum()
    }

    /// Bytes of the buffers in flight or lent out (owned, not idle).
    pub fn busy_bytes(&self) -> usize {
        self.owned.saturating_sub(self.idle_bytes())
    }

    /// Buffers in flight.
    pub fn busy_len(&self) -> usize {
        self.busy.len()
    }

    /// Bytes of every buffer the pool allocated and still owns.
    pub fn owned(&self) -> usize {
        self.owned
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    #[derive(Debug, PartialEq)]
    struct Buf(usize);
    impl Staging for Buf {
        fn capacity(&self) -> usize {
            self.0
        }
    }

    /// A fence that completes when told, or once waited for; `Err` marks a failing one.
    #[derive(Debug)]
    struct Done(Cell<Result<bool, ()>>);
    impl Completion for Done {
        fn query(&self) -> Result<bool, BackendError> {
            self.0
                .get()
                .map_err(|()| BackendError::Unsupported("query".into()))
        }
        fn wait(&self) -> Result<(), BackendError> {
            self.query()?;
            self.0.set(Ok(true));
            Ok(())
        }
    }
    fn done(d: bool) -> Done {
        Done(Cell::new(Ok(d)))
    }
    type Pool = StagingPool<Buf, Done>;

    fn alloc(n: usize) -> Result<Buf, BackendError> {
        Ok(Buf(n))
    }

    #[test]
    fn reuses_completed_buffers_smallest_fit_first() {
        let mut pool = Pool::new(4 << 20, 1 << 30);
        assert_eq!(Pool::allocation_size(10), 1 << 20);
        assert_eq!(Pool::allocation_size(3 << 20), 4 << 20);
        let (a, b, c) = (
            pool.acquire(1, alloc).unwrap(),
            pool.acquire(2 << 20, alloc).unwrap(),
            pool.acquire(5 << 20, alloc).unwrap(),
        );
        assert_eq!((a.0, b.0, c.0), (1 << 20, 2 << 20, 8 << 20));
        assert_eq!(pool.owned(), 11 << 20);
        pool.in_flight(a, done(true));
        pool.in_flight(b, done(false));
        pool.in_flight(c, done(true));
        // Only the oldest has completed; the third waits behind the second.
        assert_eq!(pool.acquire(1 << 20, alloc).unwrap(), Buf(1 << 20));
        assert_eq!(pool.busy_len(), 2);
        assert_eq!(pool.owned(), 11 << 20);
    }

    #[test]
    fn idle_bytes_beyond_the_cap_are_freed_largest_first() {
        let mut pool = Pool::new(4 << 20, 1 << 30);
        for n in [1 << 20, 2 << 20, 8 << 20] {
            let b = pool.acquire(n, alloc).unwrap();
            pool.in_flight(b, done(true));
        }
        // 11 MiB complete, over the 4 MiB cap: the 8 MiB one is freed.
        let small = pool.acquire(1, alloc).unwrap();
        assert_eq!(small, Buf(1 << 20));
        assert_eq!(pool.idle_bytes(), 2 << 20);
        assert_eq!(pool.owned(), 3 << 20);
        pool.put_idle(small);
        assert_eq!(pool.busy_bytes(), 0);
    }

    #[test]
    fn past_the_busy_cap_acquire_waits_for_the_oldest() {
        let mut pool = Pool::new(64 << 20, 2 << 20);
        let a = pool.acquire(1 << 20, alloc).unwrap();
        pool.in_flight(a, done(false));
        let b = pool.acquire(1 << 20, alloc).unwrap();
        pool.in_flight(b, done(false));
        assert_eq!(pool.busy_bytes(), 2 << 20);
        // A third would exceed 2 MiB in flight: the oldest is waited for and reused.
        let c = pool.acquire(1 << 20, alloc).unwrap();
        assert_eq!(c, Buf(1 << 20));
        assert_eq!(pool.owned(), 2 << 20);
        assert_eq!(pool.busy_len(), 1);
        // Nothing in flight: a request larger than the cap is still served.
        let mut pool = Pool::new(0, 1);
        assert_eq!(pool.acquire(4 << 20, alloc).unwrap(), Buf(4 << 20));
    }

    #[test]
    fn a_failed_query_leaves_the_buffer_in_flight() {
        let mut pool = Pool::new(1 << 30, 1 << 30);
        let a = pool.acquire(1, alloc).unwrap();
        pool.in_flight(a, Done(Cell::new(Err(()))));
        assert!(pool.acquire(1, alloc).is_err());
        assert_eq!(pool.busy_len(), 1);
        let b = pool.acquire(1, |_| Err(BackendError::Unsupported("no".into())));
        assert!(b.is_err());
        assert_eq!(pool.owned(), 1 << 20);
    }

    #[test]
    fn discarded_buffers_are_no_longer_owned() {
        let mut pool = Pool::new(1 << 30, 1 << 30);
        let a = pool.acquire(1, alloc).unwrap();
        pool.discard(a);
        assert_eq!(pool.owned(), 0);
    }
}
