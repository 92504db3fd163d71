//! What the GPU backends (`memhc-cuda`, `memhc-hip`) have in common, in safe code, so that
//! each of them is only the translation of the [`Backend`](super::Backend) calls into its
//! driver's:
//!
//! * [`default_budget`]: how much of the card a backend takes when not told;
//! * [`pointer_table`]: the device pointer arrays of a pointer-array batched GEMM;
//! * [`StagingPool`]: page-locked host buffers recycled once the copies using them complete;
//! * [`loaded_library`]: which shared library file a process actually loaded, for
//!   [`Backend::name`](super::Backend::name).
//!
//! A GPU backend's [`DeviceMemory::handle`] is the allocation's device address; the helpers
//! here rely on it.

use std::collections::VecDeque;
use std::path::PathBuf;

use super::DeviceMemory;
use super::gemm::{DeviceRef, GemmItem};
use crate::ELEMENT_BYTES;
use crate::error::BackendError;

/// Bytes a backend leaves free below the card's free memory by default: the larger of
/// 512 MiB and 1/32 of it, for the BLAS library's workspace, the pointer arrays and the
/// driver's own allocations.
pub fn default_margin(free: usize) -> usize {
    (free / 32).max(512 << 20)
}

/// The budget a GPU backend uses when not told: the card's free memory minus
/// [`default_margin`] (zero if the card has less free than that).
pub fn default_budget(free: usize) -> usize {
    free.saturating_sub(default_margin(free))
}

/// The device address of a [`DeviceRef`]: its buffer's address plus its offset in bytes.
pub fn address<M: DeviceMemory>(r: &DeviceRef<'_, M>) -> u64 {
    r.buffer.handle() + (r.offset * ELEMENT_BYTES) as u64
}

/// The three pointer arrays of a pointer-array batched GEMM, back to back in one table: the
/// addresses of every item's A, then of every B, then of every C (`3 * items.len()` entries),
/// so that one host-to-device copy uploads all three.
pub fn pointer_table<M: DeviceMemory>(items: &[GemmItem<'_, M>]) -> Vec<u64> {
    let mut table = Vec::with_capacity(3 * items.len());
    table.extend(items.iter().map(|i| address(&i.a)));
    table.extend(items.iter().map(|i| address(&i.b)));
    table.extend(items.iter().map(|i| address(&i.c)));
    table
}

/// The path of the shared library, among those this process has mapped, whose file name
/// starts with `prefix` (`"libcublas."`, say); `None` if none is mapped or the platform does
/// not say (only Linux's `/proc/self/maps` is read).
pub fn loaded_library(prefix: &str) -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .map(PathBuf::from)
        .find(|p| {
            p.file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with(prefix))
        })
}

/// A host buffer a [`StagingPool`] can hand out: page-locked memory the backend allocated.
pub trait Staging {
    /// Size in bytes.
    fn capacity(&self) -> usize;
}

/// Page-locked staging buffers for host-to-device copies: [`StagingPool::take`] hands out an
/// idle buffer at least as large as asked (or `None`: the caller allocates one), and
/// [`StagingPool::in_flight`] takes it back with the event that marks the end of the copy that
/// reads it. A buffer is idle again once its event has completed; idle bytes beyond the pool's
/// cap are given back to the caller to free.
#[derive(Debug)]
pub struct StagingPool<H, E> {
    idle: Vec<H>,
    busy: VecDeque<(H, E)>,
    idle_cap: usize,
}

impl<H: Staging, E> StagingPool<H, E> {
    /// An empty pool that keeps at most `idle_cap` bytes of idle buffers.
    pub fn new(idle_cap: usize) -> Self {
        StagingPool {
            idle: Vec::new(),
            busy: VecDeque::new(),
            idle_cap,
        }
    }

    /// The size to allocate for a request of `bytes` when no idle buffer fits: a power of two
    /// of at least 1 MiB, so that buffers are reused across nearby sizes.
    pub fn allocation_size(bytes: usize) -> usize {
        bytes.max(1 << 20).next_power_of_two()
    }

    /// Moves every buffer whose copy has completed (`done(event)`) back to idle, oldest first,
    /// stopping at the first one still in flight; returns the idle buffers beyond the cap, for
    /// the caller to free.
    pub fn reclaim(
        &mut self,
        mut done: impl FnMut(&E) -> Result<bool, BackendError>,
    ) -> Result<Vec<H>, BackendError> {
        while let Some((_, event)) = self.busy.front() {
            if !done(event)? {
                break;
            }
            if let Some((buffer, _)) = self.busy.pop_front() {
                self.idle.push(buffer);
            }
        }
        let mut excess = Vec::new();
        self.idle.sort_by_key(|b| b.capacity());
        while self.idle_bytes() > self.idle_cap {
            // Free the largest first: they are the rarest requests.
            match self.idle.pop() {
                Some(b) => excess.push(b),
                None => break,
            }
        }
        Ok(excess)
    }

    /// The smallest idle buffer of at least `bytes`, if any.
    pub fn take(&mut self, bytes: usize) -> Option<H> {
        let at = self
            .idle
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= bytes)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i)?;
        Some(self.idle.swap_remove(at))
    }

    /// Takes back a buffer that a copy still reads until `event` completes.
    pub fn in_flight(&mut self, buffer: H, event: E) {
        self.busy.push_back((buffer, event));
    }

    /// Takes back a buffer no copy uses.
    pub fn put_idle(&mut self, buffer: H) {
        self.idle.push(buffer);
    }

    /// Bytes of idle buffers.
    pub fn idle_bytes(&self) -> usize {
        self.idle.iter().map(Staging::capacity).sum()
    }

    /// Buffers still in flight.
    pub fn busy_len(&self) -> usize {
        self.busy.len()
    }

    /// Every buffer, idle and in flight, for the caller to free once the device is idle.
    pub fn drain(&mut self) -> Vec<H> {
        let mut all: Vec<H> = self.idle.drain(..).collect();
        all.extend(self.busy.drain(..).map(|(b, _)| b));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    struct Buf(usize);
    impl Staging for Buf {
        fn capacity(&self) -> usize {
            self.0
        }
    }

    #[derive(Debug)]
    struct Mem(u64);
    impl DeviceMemory for Mem {
        fn bytes(&self) -> usize {
            1 << 20
        }
        fn handle(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn budget_leaves_a_margin() {
        assert_eq!(default_budget(80 << 30), (80 << 30) - ((80 << 30) / 32));
        assert_eq!(default_budget(1 << 30), (1 << 30) - (512 << 20));
        assert_eq!(default_budget(100), 0);
    }

    #[test]
    fn pointer_table_is_a_then_b_then_c_in_bytes() {
        let (x, y) = (Mem(0x1000), Mem(0x9000));
        let item = |a, b, c| GemmItem {
            a: DeviceRef::new(&x, a),
            b: DeviceRef::new(&y, b),
            c: DeviceRef::new(&x, c),
        };
        let table = pointer_table(&[item(0, 1, 2), item(3, 4, 5)]);
        assert_eq!(
            table,
            vec![
                0x1000,
                0x1000 + 48,
                0x9000 + 16,
                0x9000 + 64,
                0x1000 + 32,
                0x1000 + 80
            ]
        );
    }

    #[test]
    fn staging_reuses_completed_buffers_smallest_fit_first() {
        let mut pool: StagingPool<Buf, bool> = StagingPool::new(4 << 20);
        assert_eq!(StagingPool::<Buf, bool>::allocation_size(10), 1 << 20);
        assert_eq!(StagingPool::<Buf, bool>::allocation_size(3 << 20), 4 << 20);
        assert!(pool.take(1).is_none());
        pool.in_flight(Buf(1 << 20), true);
        pool.in_flight(Buf(2 << 20), false);
        pool.in_flight(Buf(8 << 20), true);
        // Only the oldest has completed; the third waits behind the second.
        assert!(pool.reclaim(|done| Ok(*done)).unwrap().is_empty());
        assert_eq!(pool.busy_len(), 2);
        assert_eq!(pool.take(1 << 20), Some(Buf(1 << 20)));
        assert!(pool.take(1).is_none());
        // All complete: 10 MiB idle, over the 4 MiB cap, so the 8 MiB one goes back.
        let excess = pool.reclaim(|_| Ok(true)).unwrap();
        assert_eq!(excess, vec![Buf(8 << 20)]);
        assert_eq!(pool.take(1 << 20), Some(Buf(2 << 20)));
        pool.put_idle(Buf(1 << 20));
        assert_eq!(pool.drain(), vec![Buf(1 << 20)]);
    }

    #[test]
    fn a_failed_query_leaves_the_buffer_in_flight() {
        let mut pool: StagingPool<Buf, ()> = StagingPool::new(1 << 30);
        pool.in_flight(Buf(1 << 20), ());
        let err = pool.reclaim(|_| Err(BackendError::Unsupported("query".into())));
        assert!(err.is_err());
        assert_eq!(pool.busy_len(), 1);
    }

    #[test]
    fn this_process_maps_its_c_library() {
        // Every Linux process running Rust's std maps libc; elsewhere nothing is reported.
        if cfg!(target_os = "linux") {
            let libc = loaded_library("libc.").or_else(|| loaded_library("libc-"));
            assert!(libc.is_some_and(|p| p.is_absolute()));
        }
        assert!(loaded_library("libnot-a-library-anywhere").is_none());
    }
}
