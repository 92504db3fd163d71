//! Statistics as a wrapper around a backend (in the manner of RMM's statistics adaptor):
//! allocations, frees, bytes moved each way, live and peak device bytes, GEMM calls and flops
//! are counted here, at the one place every call passes through, instead of at each call site.
//!
//! Managed memory counts as device memory (an allocation, live and peak bytes), and the host's
//! in-place writes and reads of it count as host-to-device and device-to-host bytes: they are
//! the traffic the driver migrates on the program's behalf.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::adaptor::{Adaptor, Call, Hooks};

/// Counts of what went through an [`Instrumented`] backend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceCounters {
    /// Successful device allocations.
    pub allocations: u64,
    /// Successful frees.
    pub frees: u64,
    /// Bytes currently allocated through the wrapper.
    pub live_bytes: u64,
    /// The most bytes allocated at once.
    pub peak_device_bytes: u64,
    /// Host-to-device copies enqueued.
    pub h2d_copies: u64,
    /// Bytes copied host to device.
    pub h2d_bytes: u64,
    /// Device-to-host copies made (blocking or enqueued).
    pub d2h_copies: u64,
    /// Bytes copied device to host.
    pub d2h_bytes: u64,
    /// Batched GEMM calls (pointer-array or strided).
    pub gemm_calls: u64,
    /// GEMM items (single products) across all calls.
    pub gemm_items: u64,
    /// Floating-point operations of all items: `8 m n k` each.
    pub flops: u64,
    /// Batched matrix-addition calls.
    pub geam_calls: u64,
}

/// The counters of an [`Instrumented`] backend: its [`Hooks`].
#[derive(Debug, Default)]
pub struct Counters {
    allocations: AtomicU64,
    frees: AtomicU64,
    live_bytes: AtomicU64,
    peak_device_bytes: AtomicU64,
    h2d_copies: AtomicU64,
    h2d_bytes: AtomicU64,
    d2h_copies: AtomicU64,
    d2h_bytes: AtomicU64,
    gemm_calls: AtomicU64,
    gemm_items: AtomicU64,
    flops: AtomicU64,
    geam_calls: AtomicU64,
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// A backend that counts what passes through it: an [`Adaptor`] with [`Counters`] as hooks.
/// It implements [`Backend`](crate::Backend) itself, with the inner backend's types, and
/// forwards every call.
pub type Instrumented<B> = Adaptor<B, Counters>;

impl<B> Adaptor<B, Counters> {
    /// Wraps `inner` with all counters at zero.
    pub fn new(inner: B) -> Self {
        Adaptor::with_hooks(inner, Counters::default())
    }

    /// A snapshot of the counters.
    pub fn counters(&self) -> DeviceCounters {
        self.hooks().snapshot()
    }
}

impl Counters {
    /// A snapshot of the counters.
    pub fn snapshot(&self) -> DeviceCounters {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        DeviceCounters {
            allocations: get(&self.allocations),
            frees: get(&self.frees),
            live_bytes: get(&self.live_bytes),
            peak_device_bytes: get(&self.peak_device_bytes),
            h2d_copies: get(&self.h2d_copies),
            h2d_bytes: get(&self.h2d_bytes),
            d2h_copies: get(&self.d2h_copies),
            d2h_bytes: get(&self.d2h_bytes),
            gemm_calls: get(&self.gemm_calls),
            gemm_items: get(&self.gemm_items),
            flops: get(&self.flops),
            geam_calls: get(&self.geam_calls),
        }
    }

    fn count_alloc(&self, bytes: usize) {
        bump(&self.allocations, 1);
        let live = self.live_bytes.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
        self.peak_device_bytes.fetch_max(live, Ordering::Relaxed);
    }
}

impl Hooks for Counters {
    fn after(&self, call: &Call, succeeded: bool) {
        match *call {
            // The buffer is gone either way (the call consumed it), so its bytes are no longer
            // live; only a successful free counts as one.
            Call::Free { bytes } => {
                self.live_bytes.fetch_sub(bytes as u64, Ordering::Relaxed);
                if succeeded {
                    bump(&self.frees, 1);
                }
            }
            _ if !succeeded => {}
            Call::Alloc { bytes } | Call::AllocManaged { bytes } => self.count_alloc(bytes),
            Call::CopyH2D { bytes } | Call::ManagedWrite { bytes } => {
                bump(&self.h2d_copies, 1);
                bump(&self.h2d_bytes, bytes as u64);
            }
            Call::CopyD2H { bytes } | Call::ManagedRead { bytes } => {
                bump(&self.d2h_copies, 1);
                bump(&self.d2h_bytes, bytes as u64);
            }
            Call::Gemm { item_flops, items } => {
                bump(&self.gemm_calls, 1);
                bump(&self.gemm_items, items as u64);
                bump(&self.flops, item_flops * items as u64);
            }
            Call::Geam { .. } => bump(&self.geam_calls, 1),
            Call::RecordEvent | Call::WaitEvent | Call::Prefetch => {}
        }
    }
}
