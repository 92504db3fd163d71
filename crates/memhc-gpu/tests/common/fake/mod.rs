//! A fake device behind [`DeviceApi`]: device memory is host memory (`Vec<u8>` per allocation,
//! found by address), streams are queues of work that run in order, and the BLAS routines are
//! memhc-core's reference GEMM over that memory. It is as strict as a real device where the
//! skeleton could go wrong, and stricter:
//!
//! * in [`Progress::Lazy`] mode nothing runs until something waits for it (an event or stream
//!   synchronisation, or a device-wide one), so work that is not ordered by the stream or by
//!   events reads stale data; [`Progress::OnQuery`] also completes work an event query asks
//!   about, [`Progress::Eager`] runs everything at once;
//! * the pointer-array GEMM reads its pointer table from fake device memory when it runs, so a
//!   table uploaded late or overwritten early shows;
//! * every address the device touches must lie inside a live allocation, and the host must not
//!   write, read or free page-locked memory while a queued copy still uses it: each breach is
//!   recorded in [`Stats::violations`] (and the tests check there is none).

#![allow(dead_code)]

pub mod meter;
mod state;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use memhc_core::backend::{Location, MemInfo, check_range};
use memhc_core::{BackendError, BackendOp};
use memhc_gpu::{
    BatchedGemm, DeviceAllocation, DeviceApi, Geam, PinnedAllocation, PitchedCopy, StridedGemm,
    Unregistered,
};
use meter::Meter;
use state::{PinnedData, Queue, State, Work, lock};

/// When queued work runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// When it is enqueued.
    Eager,
    /// Only when something waits for it.
    Lazy,
    /// When something waits for it or queries an event recorded after it.
    OnQuery,
}

/// The fake device's size and behaviour.
#[derive(Clone, Copy, Debug)]
pub struct FakeConfig {
    /// Device memory in bytes.
    pub capacity: usize,
    /// Whether it has managed memory.
    pub managed: bool,
    /// When work runs.
    pub progress: Progress,
    /// Whether a violation panics at once (else it is only recorded).
    pub strict: bool,
    /// Whether GEMMs and GEAMs compute (off: they run as no-ops, so results are wrong, for the
    /// `host_cost` bench, whose N = 384 products the reference GEMM would take minutes over;
    /// copies move data either way).
    pub compute: bool,
    /// Whether the host's staging copies and the device's own work are metered
    /// ([`Stats::host_copy`], [`Stats::device_work`], [`Stats::pinning`]).
    pub meter: bool,
    /// How host threads were asked to wait ([`DeviceApi::open`]'s `wait`; recorded only).
    pub host_wait: memhc_gpu::HostWait,
    /// Whether it has a complex GEMM of three real products ([`DeviceApi::gemm_gauss`]).
    pub gauss: bool,
}

impl Default for FakeConfig {
    fn default() -> Self {
        FakeConfig {
            capacity: 4 << 30,
            managed: true,
            progress: Progress::Lazy,
            strict: true,
            compute: true,
            meter: false,
            host_wait: memhc_gpu::HostWait::Auto,
            gauss: true,
        }
    }
}

/// What the fake device saw.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Page-locked allocations made.
    pub host_allocs: usize,
    /// Page-locked bytes allocated now.
    pub pinned_live: usize,
    /// The most page-locked bytes allocated at once.
    pub pinned_peak: usize,
    /// Device allocations made (buffers and pointer tables).
    pub mallocs: usize,
    /// Host-to-device copies enqueued, with their sizes.
    pub h2d: Vec<usize>,
    /// Device-to-host copies enqueued, with their sizes.
    pub d2h: Vec<usize>,
    /// Pointer-array GEMMs run.
    pub batched: usize,
    /// Complex GEMMs of three real products enqueued ([`DeviceApi::gemm_gauss`]).
    pub gauss: usize,
    /// Streams created.
    pub streams: usize,
    /// Events created (with or without timing).
    pub events_created: usize,
    /// Events created with timing.
    pub timing_events_created: usize,
    /// Events alive now.
    pub events_live: usize,
    /// Everything the device or the host did that a real device would punish.
    pub violations: Vec<String>,
    /// Pageable buffers registered ([`DeviceApi::host_register`]).
    pub registrations: usize,
    /// Registered buffers unregistered (given back or dropped).
    pub unregistrations: usize,
    /// Registered bytes now.
    pub registered_live: usize,
    /// Pieces cut from page-locked chunks ([`DeviceApi::host_piece`]): no new pinning.
    pub host_pieces: usize,
    /// Pieces alive now.
    pub pieces_live: usize,
    /// With [`FakeConfig::meter`]: the host's copies into and out of page-locked buffers
    /// ([`PinnedAllocation::write`] and [`PinnedAllocation::read`]: staging).
    pub host_copy: Meter,
    /// With [`FakeConfig::meter`]: the fake device's own work, which a GPU does without the
    /// host: running queued copies and GEMMs, filling new device memory and freeing it.
    pub device_work: Meter,
    /// With [`FakeConfig::meter`]: making page-locked buffers ([`DeviceApi::host_alloc`]:
    /// pinning, on a GPU) and registering caller memory.
    pub pinning: Meter,
}

struct Device {
    config: FakeConfig,
    state: Mutex<State>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "fake device {:?}", self.config)
    }
}

impl Device {
    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

/// The fake device API.
#[derive(Debug, Clone)]
pub struct Fake(Arc<Device>);

impl Fake {
    /// How host threads were asked to wait when the device was opened.
    pub fn host_wait(&self) -> memhc_gpu::HostWait {
        self.0.config.host_wait
    }

    /// A fresh fake device.
    pub fn new(config: FakeConfig) -> Self {
        let state = State {
            next_address: 0x7000_0000_0000,
            strict: config.strict,
            compute: config.compute,
            meter: config.meter,
            ..State::default()
        };
        Fake(Arc::new(Device {
            config,
            state: Mutex::new(state),
        }))
    }

    /// What the device saw so far.
    pub fn stats(&self) -> Stats {
        self.0.state().stats.clone()
    }

    fn enqueue(&self, stream: u64, work: Work) {
        let mut s = self.0.state();
        let seq = match s.queues.get_mut(&stream) {
            Some(q) => {
                q.work.push_back(work);
                q.enqueued += 1;
                q.enqueued
            }
            None => {
                s.violation(format!("work enqueued on destroyed stream {stream}"));
                return;
            }
        };
        if self.0.config.progress == Progress::Eager {
            s.run(stream, seq);
        }
    }

    /// A meter reading now, if metering is on.
    fn start(&self) -> Option<meter::Reading> {
        self.0.config.meter.then(meter::now)
    }

    fn alloc(&self, bytes: usize, managed: bool) -> Result<FakeMemory, BackendError> {
        let start = self.start();
        let mut s = self.0.state();
        let free = self.0.config.capacity - s.used;
        if bytes > free {
            return Err(BackendError::OutOfMemory {
                requested: bytes,
                free,
            });
        }
        let address = s.next_address;
        // A gap after every allocation: an access past the end touches nothing allocated.
        s.next_address += (bytes as u64).div_ceil(4096) * 4096 + 4096;
        s.allocs
            .insert(address, Arc::new(Mutex::new(vec![0xa5; bytes])));
        s.managed.insert(address, managed);
        s.used += bytes;
        s.stats.mallocs += 1;
        if let Some(start) = start {
            s.stats.device_work.add(start, bytes);
        }
        Ok(FakeMemory {
            device: Arc::clone(&self.0),
            address,
            bytes,
            managed,
        })
    }
}

/// Fake device memory.
#[derive(Debug)]
pub struct FakeMemory {
    device: Arc<Device>,
    address: u64,
    bytes: usize,
    managed: bool,
}

impl DeviceAllocation for FakeMemory {
    fn bytes(&self) -> usize {
        self.bytes
    }
    fn address(&self) -> u64 {
        self.address
    }
    fn is_managed(&self) -> bool {
        self.managed
    }
}

impl Drop for FakeMemory {
    fn drop(&mut self) {
        let start = self.device.config.meter.then(meter::now);
        let mut s = self.device.state();
        // Freed here (a GPU frees device memory without the host touching it): metered as
        // the device's own work.
        drop(s.allocs.remove(&self.address));
        s.managed.remove(&self.address);
        s.used -= self.bytes;
        if let Some(start) = start {
            s.stats.device_work.add(start, 0);
        }
    }
}

/// Fake page-locked memory.
pub struct FakePinned {
    device: Arc<Device>,
    data: Arc<PinnedData>,
    bytes: usize,
    /// The address of the caller's memory, if this is registered caller memory.
    registered: Option<u64>,
    /// For a piece of a chunk: the chunk and the offset in it. A piece holds its own bytes
    /// (the fake need not share them: nothing reads the chunk itself), and the device checks
    /// that live pieces of one chunk never overlap.
    piece: Option<(u64, usize)>,
}

impl std::fmt::Debug for FakePinned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FakePinned({} bytes)", self.bytes)
    }
}

impl FakePinned {
    fn check_idle(&self, what: &str) {
        let users = self.data.users.load(Ordering::SeqCst);
        if users > 0 {
            self.device.state().violation(format!(
                "the host {what} a page-locked buffer that {users} queued copies use"
            ));
        }
    }
}

impl PinnedAllocation for FakePinned {
    fn bytes(&self) -> usize {
        self.bytes
    }

    fn as_mut_slice(&mut self) -> Result<&mut [u8], BackendError> {
        self.check_idle("handed out");
        let bytes = self.bytes;
        let data = Arc::get_mut(&mut self.data).ok_or_else(|| {
            BackendError::invalid(BackendOp::CopyH2D, "a queued copy still holds the buffer")
        })?;
        let words = data.bytes.get_mut().unwrap_or_else(|p| p.into_inner());
        Ok(&mut bytemuck::cast_slice_mut::<u64, u8>(words)[..bytes])
    }

    fn write(&mut self, offset: usize, src: &[u8]) -> Result<(), BackendError> {
        check_range(BackendOp::CopyH2D, "staging", self.bytes, offset, src.len())?;
        self.check_idle("wrote");
        let start = self.device.config.meter.then(meter::now);
        bytemuck::cast_slice_mut::<u64, u8>(&mut lock(&self.data.bytes))
            [offset..offset + src.len()]
            .copy_from_slice(src);
        if let Some(start) = start {
            self.device.state().stats.host_copy.add(start, src.len());
        }
        Ok(())
    }

    fn read(&self, offset: usize, dst: &mut [u8]) -> Result<(), BackendError> {
        check_range(BackendOp::CopyD2H, "pinned", self.bytes, offset, dst.len())?;
        self.check_idle("read");
        let start = self.device.config.meter.then(meter::now);
        dst.copy_from_slice(
            &bytemuck::cast_slice::<u64, u8>(&lock(&self.data.bytes))[offset..offset + dst.len()],
        );
        if let Some(start) = start {
            self.device.state().stats.host_copy.add(start, dst.len());
        }
        Ok(())
    }
}

impl FakePinned {
    /// The identity of a chunk, for its pieces.
    fn chunk_id(&self) -> u64 {
        Arc::as_ptr(&self.data) as u64
    }
}

impl Drop for FakePinned {
    fn drop(&mut self) {
        self.check_idle("freed");
        let id = self.chunk_id();
        let mut s = self.device.state();
        if let Some(key) = self.piece.take() {
            s.pieces.remove(&key);
            s.stats.pieces_live -= 1;
            return;
        }
        match self.registered.take() {
            Some(address) => {
                s.registered.remove(&address);
                s.stats.registered_live -= self.bytes;
                s.stats.unregistrations += 1;
            }
            None => {
                s.stats.pinned_live -= self.bytes;
                let live = s.pieces.range((id, 0)..=(id, usize::MAX)).count();
                if live > 0 {
                    s.violation(format!(
                        "a page-locked chunk freed under {live} live pieces"
                    ));
                }
            }
        }
    }
}

/// A fake stream.
#[derive(Debug)]
pub struct FakeStream {
    device: Arc<Device>,
    id: u64,
}

impl Drop for FakeStream {
    fn drop(&mut self) {
        let mut s = self.device.state();
        let queued = s.queues.remove(&self.id).map_or(0, |q| q.work.len());
        if queued > 0 {
            s.violation(format!("stream {} destroyed with {queued} queued", self.id));
        }
    }
}

/// A fake event.
#[derive(Debug)]
pub struct FakeEvent {
    device: Arc<Device>,
    id: u64,
}

impl Drop for FakeEvent {
    fn drop(&mut self) {
        let mut s = self.device.state();
        s.events.remove(&self.id);
        s.timing.remove(&self.id);
        s.stamps.remove(&self.id);
        s.stats.events_live -= 1;
    }
}

/// A fake BLAS handle: the stream it is bound to.
#[derive(Debug)]
pub struct FakeBlas(u64);

impl Fake {
    fn event_record_of(&self, event: &FakeEvent) -> Option<(u64, u64)> {
        self.0.state().events.get(&event.id).copied().flatten()
    }
}

impl DeviceApi for Fake {
    const KIND: &'static str = "fake";
    type Memory = FakeMemory;
    type Pinned = FakePinned;
    type Stream = FakeStream;
    type Event = FakeEvent;
    type Blas = FakeBlas;

    fn open(device: usize, wait: memhc_gpu::HostWait) -> Result<Self, BackendError> {
        if device == 0 {
            Ok(Fake::new(FakeConfig {
                host_wait: wait,
                ..FakeConfig::default()
            }))
        } else {
            Err(BackendError::Unavailable(format!(
                "no fake device {device}: there is 1"
            )))
        }
    }

    fn device_name(&self) -> &str {
        "fake device"
    }

    fn describe(&self, budget: usize) -> String {
        format!(
            "fake device ({:?}, budget {budget} bytes)",
            self.0.config.progress
        )
    }

    fn mem_get_info(&self) -> Result<MemInfo, BackendError> {
        let used = self.0.state().used;
        Ok(MemInfo {
            free: self.0.config.capacity - used,
            total: self.0.config.capacity,
        })
    }

    fn synchronize(&self) -> Result<(), BackendError> {
        self.0.state().run_all();
        Ok(())
    }

    fn malloc(&self, bytes: usize) -> Result<FakeMemory, BackendError> {
        self.alloc(bytes, false)
    }

    fn free(&self, memory: FakeMemory) -> Result<(), BackendError> {
        drop(memory);
        Ok(())
    }

    fn host_alloc(&self, bytes: usize) -> Result<FakePinned, BackendError> {
        let start = self.start();
        let data = Arc::new(PinnedData {
            bytes: Mutex::new(vec![0x5a5a_5a5a_5a5a_5a5a; bytes.div_ceil(8)]),
            users: AtomicUsize::new(0),
        });
        let mut s = self.0.state();
        s.stats.host_allocs += 1;
        s.stats.pinned_live += bytes;
        s.stats.pinned_peak = s.stats.pinned_peak.max(s.stats.pinned_live);
        if let Some(start) = start {
            s.stats.pinning.add(start, bytes);
        }
        Ok(FakePinned {
            device: Arc::clone(&self.0),
            data,
            bytes,
            registered: None,
            piece: None,
        })
    }

    /// A piece of `chunk`: bytes of its own, no new pinning; a piece over a live piece of the
    /// same chunk, a piece of a piece or of registered memory is refused and recorded as a
    /// violation.
    fn host_piece(
        &self,
        chunk: &FakePinned,
        offset: usize,
        bytes: usize,
    ) -> Result<FakePinned, BackendError> {
        check_range(BackendOp::Alloc, "chunk", chunk.bytes, offset, bytes)?;
        let id = chunk.chunk_id();
        let mut s = self.0.state();
        let end = offset + bytes;
        let overlaps = s
            .pieces
            .range((id, 0)..(id, end))
            .next_back()
            .is_some_and(|(&(_, o), &len)| o + len > offset);
        if overlaps || chunk.piece.is_some() || chunk.registered.is_some() || bytes == 0 {
            s.violation(format!(
                "a piece {offset}+{bytes} over a live piece, a piece or registered memory"
            ));
            return Err(BackendError::invalid(BackendOp::Alloc, "overlapping piece"));
        }
        s.pieces.insert((id, offset), bytes);
        s.stats.host_pieces += 1;
        s.stats.pieces_live += 1;
        Ok(FakePinned {
            device: Arc::clone(&self.0),
            data: Arc::new(PinnedData {
                bytes: Mutex::new(vec![0x5a5a_5a5a_5a5a_5a5a; bytes.div_ceil(8)]),
                users: AtomicUsize::new(0),
            }),
            bytes,
            registered: None,
            piece: Some((id, offset)),
        })
    }

    /// Keeps the caller's vector as the page-locked memory (no copy); memory overlapping a
    /// registration still live is refused, as CUDA refuses it
    /// (`CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`), and recorded as a violation.
    fn host_register(&self, memory: Vec<u64>) -> Result<FakePinned, Box<Unregistered>> {
        let start = self.start();
        let bytes = memory.len() * 8;
        let address = memory.as_ptr() as u64;
        let mut s = self.0.state();
        let overlaps = s
            .registered
            .range(..address + bytes as u64)
            .next_back()
            .is_some_and(|(&a, &len)| a + len as u64 > address);
        if bytes == 0 || overlaps {
            if overlaps {
                s.violation(format!("memory at {address:#x} registered twice"));
            }
            return Err(Box::new(Unregistered {
                memory,
                error: BackendError::invalid(BackendOp::Alloc, "already registered or empty"),
            }));
        }
        s.registered.insert(address, bytes);
        s.stats.registrations += 1;
        s.stats.registered_live += bytes;
        if let Some(start) = start {
            s.stats.pinning.add(start, bytes);
        }
        Ok(FakePinned {
            device: Arc::clone(&self.0),
            data: Arc::new(PinnedData {
                bytes: Mutex::new(memory),
                users: AtomicUsize::new(0),
            }),
            bytes,
            registered: Some(address),
            piece: None,
        })
    }

    fn host_unregister(&self, mut pinned: FakePinned) -> Result<Vec<u64>, BackendError> {
        if pinned.registered.is_none() {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "unregistering memory that was allocated",
            ));
        }
        pinned.check_idle("unregistered");
        let empty = Arc::new(PinnedData {
            bytes: Mutex::new(Vec::new()),
            users: AtomicUsize::new(0),
        });
        let data = std::mem::replace(&mut pinned.data, empty);
        // Dropping the husk ends the registration.
        drop(pinned);
        let data = Arc::try_unwrap(data).map_err(|_| {
            BackendError::invalid(BackendOp::Alloc, "a queued copy still holds the memory")
        })?;
        Ok(data.bytes.into_inner().unwrap_or_else(|p| p.into_inner()))
    }

    fn stream_create(&self) -> Result<FakeStream, BackendError> {
        let mut s = self.0.state();
        let id = s.id();
        s.queues.insert(id, Queue::default());
        s.stats.streams += 1;
        Ok(FakeStream {
            device: Arc::clone(&self.0),
            id,
        })
    }

    fn stream_synchronize(&self, stream: &FakeStream) -> Result<(), BackendError> {
        let mut s = self.0.state();
        let seq = s.queues.get(&stream.id).map_or(0, |q| q.enqueued);
        s.run(stream.id, seq);
        Ok(())
    }

    fn event_create(&self) -> Result<FakeEvent, BackendError> {
        let mut s = self.0.state();
        let id = s.id();
        s.events.insert(id, None);
        s.stats.events_created += 1;
        s.stats.events_live += 1;
        Ok(FakeEvent {
            device: Arc::clone(&self.0),
            id,
        })
    }

    fn timing_event_create(&self) -> Result<FakeEvent, BackendError> {
        let event = self.event_create()?;
        let mut s = self.0.state();
        s.timing.insert(event.id);
        s.stats.timing_events_created += 1;
        Ok(event)
    }

    /// The virtual clock's difference between the two stamps; like CUDA, an error for an event
    /// without timing, never recorded, or whose record has not completed.
    fn event_elapsed_ms(&self, start: &FakeEvent, end: &FakeEvent) -> Result<f32, BackendError> {
        let s = self.0.state();
        let stamp = |e: &FakeEvent| {
            if !s.timing.contains(&e.id) {
                return Err(BackendError::invalid(
                    BackendOp::Sync,
                    "elapsed time of an event without timing",
                ));
            }
            s.stamps.get(&e.id).copied().ok_or(BackendError::Driver {
                call: "fakeEventElapsedTime",
                message: "not ready (or never recorded)".into(),
            })
        };
        let (t0, t1) = (stamp(start)?, stamp(end)?);
        Ok(((t1 as f64 - t0 as f64) / 1e6) as f32)
    }

    fn event_record(&self, event: &FakeEvent, stream: &FakeStream) -> Result<(), BackendError> {
        let mut s = self.0.state();
        let Some((seq, done)) = s.queues.get(&stream.id).map(|q| (q.enqueued, q.done)) else {
            s.violation(format!("event recorded on destroyed stream {}", stream.id));
            return Ok(());
        };
        // A new record replaces the last one, wherever that was.
        for q in s.queues.values_mut() {
            q.unstamped.retain(|&(_, e)| e != event.id);
        }
        s.stamps.remove(&event.id);
        if s.timing.contains(&event.id) {
            if done >= seq {
                let now = s.clock;
                s.stamps.insert(event.id, now);
            } else if let Some(q) = s.queues.get_mut(&stream.id) {
                q.unstamped.push((seq, event.id));
            }
        }
        s.events.insert(event.id, Some((stream.id, seq)));
        Ok(())
    }

    fn stream_wait_event(
        &self,
        stream: &FakeStream,
        event: &FakeEvent,
    ) -> Result<(), BackendError> {
        if let Some((on, seq)) = self.event_record_of(event) {
            self.enqueue(stream.id, Work::Wait { stream: on, seq });
        }
        Ok(())
    }

    fn event_query(&self, event: &FakeEvent) -> Result<bool, BackendError> {
        let Some((on, seq)) = self.event_record_of(event) else {
            return Ok(true);
        };
        let mut s = self.0.state();
        if self.0.config.progress == Progress::OnQuery {
            s.run(on, seq);
        }
        Ok(s.queues.get(&on).is_none_or(|q| q.done >= seq))
    }

    fn event_synchronize(&self, event: &FakeEvent) -> Result<(), BackendError> {
        if let Some((on, seq)) = self.event_record_of(event) {
            self.0.state().run(on, seq);
        }
        Ok(())
    }

    fn copy_h2d_async(
        &self,
        stream: &FakeStream,
        src: &FakePinned,
        src_offset: usize,
        dst: &FakeMemory,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        check_range(BackendOp::CopyH2D, "staging", src.bytes, src_offset, len)?;
        check_range(BackendOp::CopyH2D, "device", dst.bytes, dst_offset, len)?;
        src.data.users.fetch_add(1, Ordering::SeqCst);
        self.0.state().stats.h2d.push(len);
        let work = Work::H2d {
            src: Arc::clone(&src.data),
            src_offset,
            dst: dst.address + dst_offset as u64,
            len,
        };
        self.enqueue(stream.id, work);
        Ok(())
    }

    fn copy_d2h_async(
        &self,
        stream: &FakeStream,
        src: &FakeMemory,
        src_offset: usize,
        dst: &FakePinned,
        dst_offset: usize,
        len: usize,
    ) -> Result<(), BackendError> {
        check_range(BackendOp::CopyD2H, "device", src.bytes, src_offset, len)?;
        check_range(BackendOp::CopyD2H, "pinned", dst.bytes, dst_offset, len)?;
        dst.data.users.fetch_add(1, Ordering::SeqCst);
        self.0.state().stats.d2h.push(len);
        let work = Work::D2h {
            src: src.address + src_offset as u64,
            dst: Arc::clone(&dst.data),
            dst_offset,
            len,
        };
        self.enqueue(stream.id, work);
        Ok(())
    }

    /// One copy in the statistics and one piece of queued work (as a driver sees one call, 2D
    /// or 3D), run row by row, slice by slice.
    fn copy_h2d_pitched_async(
        &self,
        stream: &FakeStream,
        src: &FakePinned,
        dst: &FakeMemory,
        copy: &PitchedCopy,
    ) -> Result<(), BackendError> {
        let ((so, sl), (d_o, dl)) = copy.spans(BackendOp::CopyH2D)?;
        check_range(BackendOp::CopyH2D, "staging", src.bytes, so, sl)?;
        check_range(BackendOp::CopyH2D, "device", dst.bytes, d_o, dl)?;
        self.0.state().stats.h2d.push(copy.bytes());
        src.data.users.fetch_add(1, Ordering::SeqCst);
        let work = Work::H2dPitched {
            src: Arc::clone(&src.data),
            dst: dst.address,
            copy: *copy,
        };
        self.enqueue(stream.id, work);
        Ok(())
    }

    /// As [`Fake::copy_h2d_pitched_async`], the other way.
    fn copy_d2h_pitched_async(
        &self,
        stream: &FakeStream,
        src: &FakeMemory,
        dst: &FakePinned,
        copy: &PitchedCopy,
    ) -> Result<(), BackendError> {
        let ((so, sl), (d_o, dl)) = copy.spans(BackendOp::CopyD2H)?;
        check_range(BackendOp::CopyD2H, "device", src.bytes, so, sl)?;
        check_range(BackendOp::CopyD2H, "pinned", dst.bytes, d_o, dl)?;
        self.0.state().stats.d2h.push(copy.bytes());
        dst.data.users.fetch_add(1, Ordering::SeqCst);
        let work = Work::D2hPitched {
            src: src.address,
            dst: Arc::clone(&dst.data),
            copy: *copy,
        };
        self.enqueue(stream.id, work);
        Ok(())
    }

    fn blas_create(&self, stream: &FakeStream) -> Result<FakeBlas, BackendError> {
        Ok(FakeBlas(stream.id))
    }

    fn gemm_batched(&self, blas: &FakeBlas, call: &BatchedGemm) -> Result<(), BackendError> {
        self.enqueue(blas.0, Work::Batched(call.clone()));
        Ok(())
    }

    fn gemm_strided_batched(
        &self,
        blas: &FakeBlas,
        call: &StridedGemm,
    ) -> Result<(), BackendError> {
        self.enqueue(blas.0, Work::Strided(call.clone()));
        Ok(())
    }

    fn geam(&self, blas: &FakeBlas, call: &Geam) -> Result<(), BackendError> {
        self.enqueue(blas.0, Work::Geam(call.clone()));
        Ok(())
    }

    fn supports_gauss(&self) -> bool {
        self.0.config.gauss
    }

    fn gemm_gauss(&self, blas: &FakeBlas, call: &StridedGemm) -> Result<(), BackendError> {
        if call.count() != 1 {
            return Err(BackendError::invalid(
                BackendOp::Gemm,
                "a three-product GEMM of more than one item",
            ));
        }
        self.0.state().stats.gauss += 1;
        self.enqueue(blas.0, Work::Gauss(call.clone()));
        Ok(())
    }

    fn managed_memory(&self) -> Result<(), String> {
        if self.0.config.managed {
            Ok(())
        } else {
            Err("this fake device was made without it".into())
        }
    }

    fn malloc_managed(&self, bytes: usize) -> Result<FakeMemory, BackendError> {
        self.alloc(bytes, true)
    }

    fn managed_write(
        &self,
        dst: &FakeMemory,
        offset: usize,
        src: &[u8],
    ) -> Result<(), BackendError> {
        check_range(BackendOp::CopyH2D, "managed", dst.bytes, offset, src.len())?;
        self.0
            .state()
            .write(dst.address + offset as u64, src)
            .map_err(|e| BackendError::invalid(BackendOp::CopyH2D, e))
    }

    fn managed_read(
        &self,
        src: &FakeMemory,
        offset: usize,
        dst: &mut [u8],
    ) -> Result<(), BackendError> {
        check_range(BackendOp::CopyD2H, "managed", src.bytes, offset, dst.len())?;
        self.0
            .state()
            .read(src.address + offset as u64, dst)
            .map_err(|e| BackendError::invalid(BackendOp::CopyD2H, e))
    }

    fn advise_read_mostly(&self, memory: &FakeMemory) -> Result<(), BackendError> {
        assert!(memory.managed, "advice on memory that is not managed");
        Ok(())
    }

    fn prefetch(
        &self,
        stream: &FakeStream,
        memory: &FakeMemory,
        to: Location,
    ) -> Result<(), BackendError> {
        assert!(
            memory.managed,
            "prefetch of memory that is not managed: {to:?}"
        );
        self.enqueue(stream.id, Work::Nop);
        Ok(())
    }
}
