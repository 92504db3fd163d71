//! The unified memory baseline (`Mode::Unified`) on the host backend: results equal to the
//! reference, one managed allocation per object and nothing ever evicted, the host writing
//! inputs and reading results in place around every launch, a budget that is never
//! oversubscribed, and a clear refusal on a backend without managed memory.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use std::sync::Mutex;

use common::*;
use memhc_core::backend::gemm::{GeamShape, GemmItem, GemmShape, StridedBatch};
use memhc_core::{Backend, BackendError, Config, Error, Location, MemInfo, Mode, Runtime, State};
use memhc_host::host::{HostBackend, HostBuffer, HostEvent, HostPinned, HostStream};

const MIB: usize = 1 << 20;

fn unified() -> Config {
    Config::for_mode(Mode::Unified)
}

/// The chain `c = a b; d = c b; c = a d` of the explicit modes' test, in unified mode: the
/// same result, one managed allocation per object, inputs written once by the host, every
/// result read back by the host right after the launch that writes it, nothing evicted.
#[test]
fn unified_mode_matches_the_reference_with_one_managed_allocation_per_object() {
    let l = square(4, 5);
    let mut g = rng(8);
    let (av, bv) = (random(&mut g, l), random(&mut g, l));
    let mut rt = Runtime::new(HostBackend::new(64 * MIB), unified()).unwrap();
    let a = rt.register(av.clone(), l).unwrap();
    let b = rt.register(bv.clone(), l).unwrap();
    let c = rt.create(l).unwrap();
    let d = rt.create(l).unwrap();
    multiply(&mut rt, 0, a, b, c).unwrap();
    assert_eq!(
        rt.state(c).unwrap(),
        State::Consistent,
        "the host reads each result after its launch"
    );
    multiply(&mut rt, 1, c, b, d).unwrap();
    multiply(&mut rt, 2, a, d, c).unwrap();
    rt.audit().unwrap();
    let s = rt.stats();
    let bytes = l.bytes() as u64;
    assert_eq!(s.allocations, 4, "one managed allocation per object");
    assert_eq!((s.evictions, s.writebacks, s.pool_reuses), (0, 0, 0));
    assert_eq!(
        (s.hits, s.misses),
        (5, 4),
        "objects stay allocated between launches"
    );
    assert_eq!(s.h2d_bytes, 2 * bytes, "the host writes a and b once");
    assert_eq!(s.d2h_bytes, 3 * bytes, "the host reads every result once");
    assert_eq!(s.peak_device_bytes, 4 * bytes);
    assert!([a, b, c, d].iter().all(|&o| rt.is_resident(o)));

    let ab = product(&av, &bv, l);
    let expected = product(&av, &product(&ab, &bv, l), l);
    assert_close(rt.read(c).unwrap(), &expected, "c = a (a b b)");
    assert_close(rt.read(d).unwrap(), &product(&ab, &bv, l), "d = a b b");
    assert_eq!(
        rt.stats().d2h_bytes,
        3 * bytes,
        "reads find the host copy valid"
    );

    rt.release(d).unwrap();
    assert_eq!(rt.stats().frees, 1, "a released object is freed at once");
    assert_eq!(rt.backend().used(), 3 * l.bytes());
    rt.audit().unwrap();
}

/// Chains over four streams, releasing each intermediate while the next step may still run:
/// prefetches, in-place reads and frees wait for the work they must.
#[test]
fn unified_mode_respects_dependencies_across_streams() {
    let l = square(4, 24);
    let mut rt = Runtime::new(HostBackend::new(64 * MIB), unified().with_streams(4)).unwrap();
    let mut g = rng(9);
    let (mut values, mut ids) = (Vec::new(), Vec::new());
    for _ in 0..4 {
        let v = random(&mut g, l);
        ids.push(rt.register(v.clone(), l).unwrap());
        values.push(v);
    }
    let (mut acc_id, mut acc) = (ids[0], values[0].clone());
    for step in 1..12 {
        let out = rt.create(l).unwrap();
        let k = step % 4;
        multiply(&mut rt, k, acc_id, ids[k], out).unwrap();
        acc = product(&acc, &values[k], l);
        if acc_id != ids[0] {
            rt.release(acc_id).unwrap();
        }
        acc_id = out;
        rt.audit().unwrap();
    }
    assert_close(rt.read(acc_id).unwrap(), &acc, "cross-stream chain");
    assert_eq!(rt.stats().evictions, 0);
}

/// Managed memory is never oversubscribed: an allocation beyond the budget is refused with an
/// error that says so, nothing is evicted to make room, and the runtime goes on once the caller
/// releases something.
#[test]
fn unified_mode_refuses_a_budget_too_small_and_never_evicts() {
    let l = square(2, 4);
    let bytes = l.bytes();
    let mut rt =
        Runtime::new(HostBackend::new(64 * MIB), unified().with_budget(3 * bytes)).unwrap();
    let mut g = rng(12);
    let (av, bv) = (random(&mut g, l), random(&mut g, l));
    let a = rt.register(av.clone(), l).unwrap();
    let b = rt.register(bv.clone(), l).unwrap();
    let (c, d) = (rt.create(l).unwrap(), rt.create(l).unwrap());
    multiply(&mut rt, 0, a, b, c).unwrap();

    let err = multiply(&mut rt, 0, c, b, d).unwrap_err();
    assert_eq!(
        err,
        Error::ManagedDoesNotFit {
            requested: bytes,
            held: 3 * bytes,
            available: 3 * bytes,
            budget: 3 * bytes
        }
    );
    assert!(
        err.to_string()
            .contains("unified memory is never oversubscribed"),
        "{err}"
    );
    assert_eq!(rt.stats().evictions, 0);
    assert!([a, b, c].iter().all(|&o| rt.is_resident(o)));
    assert_eq!(rt.state(d).unwrap(), State::Empty);
    rt.audit().unwrap();

    rt.release(a).unwrap();
    multiply(&mut rt, 0, c, b, d).unwrap();
    let ab = product(&av, &bv, l);
    assert_close(
        rt.read(d).unwrap(),
        &product(&ab, &bv, l),
        "after a release",
    );
    rt.audit().unwrap();

    // A launch that cannot fit even alone is the ordinary working-set error.
    let mut tiny = Runtime::new(HostBackend::new(64 * MIB), unified().with_budget(bytes)).unwrap();
    let (x, y) = (tiny.register(av, l).unwrap(), tiny.create(l).unwrap());
    assert!(matches!(
        multiply(&mut tiny, 0, x, x, y),
        Err(Error::DoesNotFit { .. })
    ));
}

/// A device with less free memory than the budget refuses the managed allocation; the
/// runtime reports the same error with what the device had, and does not evict.
#[test]
fn a_device_refusing_managed_memory_is_the_same_error() {
    let l = square(2, 4);
    let bytes = l.bytes();
    let mut rt = Runtime::new(
        HostBackend::new(2 * bytes + 8),
        unified().with_budget(10 * bytes),
    )
    .unwrap();
    let mut g = rng(13);
    let a = rt.register(random(&mut g, l), l).unwrap();
    let c = rt.create(l).unwrap();
    multiply(&mut rt, 0, a, a, c).unwrap();
    let d = rt.create(l).unwrap();
    assert_eq!(
        multiply(&mut rt, 0, c, c, d).unwrap_err(),
        Error::ManagedDoesNotFit {
            requested: bytes,
            held: 2 * bytes,
            available: 2 * bytes + 8,
            budget: 10 * bytes
        }
    );
    rt.audit().unwrap();
}

#[test]
fn unified_mode_needs_a_backend_with_managed_memory() {
    let err = Runtime::new(Recorder::new(false), unified()).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidConfig(m) if m.contains("needs managed memory")),
        "{err}"
    );
    assert!(Runtime::new(Recorder::new(false), Config::default()).is_ok());
    assert!(Runtime::new(Recorder::new(true), unified()).is_ok());
}

/// What the runtime asks of the backend in unified mode, in order: managed allocations, the
/// host writing inputs in place with read-mostly advice, a prefetch of every object to the
/// device before the work, and the host reading the result in place once the launch's work is
/// done. Never an explicit allocation or copy.
#[test]
fn unified_mode_writes_prefetches_and_reads_managed_memory_in_order() {
    let l = square(2, 3);
    let mut rt = Runtime::new(Recorder::new(true), unified().with_streams(1)).unwrap();
    let mut g = rng(14);
    let a = rt.register(random(&mut g, l), l).unwrap();
    let b = rt.register(random(&mut g, l), l).unwrap();
    let c = rt.create(l).unwrap();
    rt.backend().take();
    multiply(&mut rt, 0, a, b, c).unwrap();
    assert_eq!(
        rt.backend().take(),
        [
            "alloc_managed",
            "managed_write",
            "advise_read_mostly",
            "alloc_managed",
            "managed_write",
            "advise_read_mostly",
            "alloc_managed",
            "prefetch Device",
            "prefetch Device",
            "prefetch Device",
            "gemm_batched",
            "create_event",
            "record_event",
            "event_synchronize",
            "managed_read",
        ]
    );
    // A second launch on resident objects: prefetches again (cheap when resident), no writes.
    multiply(&mut rt, 0, a, b, c).unwrap();
    let calls = rt.backend().take();
    assert!(
        !calls
            .iter()
            .any(|c| c.starts_with("alloc") || *c == "managed_write")
    );
    assert_eq!(calls.iter().filter(|c| **c == "prefetch Device").count(), 3);
    assert_eq!(calls.last(), Some(&"managed_read"));
    rt.audit().unwrap();
}

/// A host backend that records the calls it gets, with or without managed memory.
struct Recorder {
    inner: HostBackend,
    managed: bool,
    calls: Mutex<Vec<&'static str>>,
}

impl Recorder {
    fn new(managed: bool) -> Self {
        Recorder {
            inner: HostBackend::new(64 * MIB),
            managed,
            calls: Mutex::new(Vec::new()),
        }
    }

    fn note(&self, call: &'static str) {
        self.calls.lock().unwrap().push(call);
    }

    /// The calls recorded since the last `take`.
    fn take(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }

    fn managed(&self, call: &'static str) -> Result<(), BackendError> {
        self.note(call);
        if self.managed {
            Ok(())
        } else {
            Err(BackendError::Unsupported("no managed memory".into()))
        }
    }
}

impl Backend for Recorder {
    type Buffer = HostBuffer;
    type Stream = HostStream;
    type Event = HostEvent;
    type HostBuffer = HostPinned;

    fn name(&self) -> String {
        format!("recording {}", self.inner.name())
    }
    fn mem_info(&self) -> Result<MemInfo, BackendError> {
        self.inner.mem_info()
    }
    fn alloc(&self, bytes: usize) -> Result<HostBuffer, BackendError> {
        self.note("alloc");
        self.inner.alloc(bytes)
    }
    fn free(&self, buffer: HostBuffer) -> Result<(), BackendError> {
        self.note("free");
        self.inner.free(buffer)
    }
    fn create_stream(&self) -> Result<HostStream, BackendError> {
        self.inner.create_stream()
    }
    fn create_event(&self) -> Result<HostEvent, BackendError> {
        self.note("create_event");
        self.inner.create_event()
    }
    fn record_event(&self, event: &HostEvent, stream: &HostStream) -> Result<(), BackendError> {
        self.note("record_event");
        self.inner.record_event(event, stream)
    }
    fn wait_event(&self, stream: &HostStream, event: &HostEvent) -> Result<(), BackendError> {
        self.note("wait_event");
        self.inner.wait_event(stream, event)
    }
    fn event_query(&self, event: &HostEvent) -> Result<bool, BackendError> {
        self.inner.event_query(event)
    }
    fn event_synchronize(&self, event: &HostEvent) -> Result<(), BackendError> {
        self.note("event_synchronize");
        self.inner.event_synchronize(event)
    }
    fn stream_synchronize(&self, stream: &HostStream) -> Result<(), BackendError> {
        self.note("stream_synchronize");
        self.inner.stream_synchronize(stream)
    }
    fn synchronize(&self) -> Result<(), BackendError> {
        self.note("synchronize");
        self.inner.synchronize()
    }
    fn copy_h2d(
        &self,
        stream: &HostStream,
        src: &[u8],
        dst: &HostBuffer,
        dst_offset: usize,
    ) -> Result<(), BackendError> {
        self.note("copy_h2d");
        self.inner.copy_h2d(stream, src, dst, dst_offset)
    }
    fn alloc_host(&self, bytes: usize) -> Result<HostPinned, BackendError> {
        self.inner.alloc_host(bytes)
    }
    fn copy_d2h_async(
        &self,
        stream: &HostStream,
        src: &HostBuffer,
        src_offset: usize,
        dst: &HostPinned,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        self.note("copy_d2h_async");
        self.inner
            .copy_d2h_async(stream, src, src_offset, dst, dst_offset, len)
    }
    fn copy_d2h(
        &self,
        stream: &HostStream,
        src: &HostBuffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        self.note("copy_d2h");
        self.inner.copy_d2h(stream, src, src_offset, dst)
    }
    fn gemm_batched(
        &self,
        stream: &HostStream,
        shape: &GemmShape,
        items: &[GemmItem<'_, HostBuffer>],
    ) -> Result<(), BackendError> {
        self.note("gemm_batched");
        self.inner.gemm_batched(stream, shape, items)
    }
    fn geam_batched(
        &self,
        stream: &HostStream,
        shape: &GeamShape,
        items: &[GemmItem<'_, HostBuffer>],
    ) -> Result<(), BackendError> {
        self.note("geam_batched");
        self.inner.geam_batched(stream, shape, items)
    }
    fn gemm_strided_batched(
        &self,
        stream: &HostStream,
        shape: &GemmShape,
        batch: &StridedBatch<'_, HostBuffer>,
    ) -> Result<(), BackendError> {
        self.note("gemm_strided_batched");
        self.inner.gemm_strided_batched(stream, shape, batch)
    }
    fn supports_managed(&self) -> bool {
        self.managed
    }
    fn alloc_managed(&self, bytes: usize) -> Result<HostBuffer, BackendError> {
        self.managed("alloc_managed")?;
        self.inner.alloc_managed(bytes)
    }
    fn managed_write(
        &self,
        dst: &HostBuffer,
        dst_offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        self.managed("managed_write")?;
        self.inner.managed_write(dst, dst_offset, src)
    }
    fn managed_read(
        &self,
        src: &HostBuffer,
        src_offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        self.managed("managed_read")?;
        self.inner.managed_read(src, src_offset, dst)
    }
    fn prefetch(
        &self,
        stream: &HostStream,
        buffer: &HostBuffer,
        to: Location,
    ) -> Result<(), BackendError> {
        self.managed(match to {
            Location::Device => "prefetch Device",
            Location::Host => "prefetch Host",
        })?;
        self.inner.prefetch(stream, buffer, to)
    }
    fn advise_read_mostly(&self, buffer: &HostBuffer) -> Result<(), BackendError> {
        self.managed("advise_read_mostly")?;
        self.inner.advise_read_mostly(buffer)
    }
}
