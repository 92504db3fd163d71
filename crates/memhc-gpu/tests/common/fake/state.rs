//! The fake device's memory and queues: allocations found by address, one queue of work per
//! stream, and the execution of that work (copies, and the BLAS routines by memhc-core's
//! reference GEMM) when something waits for it.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use memhc_core::Complex64;
use memhc_core::backend::gemm::{GemmShape, Op, extent};
use memhc_core::backend::{as_bytes, as_bytes_mut};
use memhc_gpu::{BatchedGemm, Geam, PitchedCopy, StridedGemm};
use memhc_testkit::conformance::reference_gemm;

use super::Stats;

pub(super) struct PinnedData {
    /// The bytes, as words: page-locked memory is aligned for complex doubles.
    pub(super) bytes: Mutex<Vec<u64>>,
    /// Queued copies that still use the buffer.
    pub(super) users: AtomicUsize,
}

pub(super) enum Work {
    H2d {
        src: Arc<PinnedData>,
        src_offset: usize,
        dst: u64,
        len: usize,
    },
    D2h {
        src: u64,
        dst: Arc<PinnedData>,
        dst_offset: usize,
        len: usize,
    },
    /// A pitched copy (2D or 3D) to the allocation at `dst`: one piece of work, as one driver
    /// call is one copy for the device, run row by row.
    H2dPitched {
        src: Arc<PinnedData>,
        dst: u64,
        copy: PitchedCopy,
    },
    /// A pitched copy from the allocation at `src`, as [`Work::H2dPitched`] the other way.
    D2hPitched {
        src: u64,
        dst: Arc<PinnedData>,
        copy: PitchedCopy,
    },
    Batched(BatchedGemm),
    Strided(StridedGemm),
    /// One complex product of three real products (`DeviceApi::gemm_gauss`).
    Gauss(StridedGemm),
    Geam(Geam),
    Wait {
        stream: u64,
        seq: u64,
    },
    Nop,
}

#[derive(Default)]
pub(super) struct Queue {
    pub(super) work: VecDeque<Work>,
    pub(super) enqueued: u64,
    pub(super) done: u64,
    /// Timing events recorded after work not yet run: `(seq, event)`, stamped when the queue
    /// has completed `seq` pieces of work.
    pub(super) unstamped: Vec<(u64, u64)>,
}

/// The bytes of one fake allocation.
pub(super) type Bytes = Arc<Mutex<Vec<u8>>>;

#[derive(Default)]
pub(super) struct State {
    pub(super) allocs: BTreeMap<u64, Bytes>,
    pub(super) managed: HashMap<u64, bool>,
    pub(super) next_address: u64,
    pub(super) used: usize,
    pub(super) queues: HashMap<u64, Queue>,
    pub(super) events: HashMap<u64, Option<(u64, u64)>>,
    pub(super) next_id: u64,
    pub(super) strict: bool,
    /// Whether GEMMs and GEAMs compute ([`super::FakeConfig::compute`]).
    pub(super) compute: bool,
    /// Whether the device's work is metered ([`super::FakeConfig::meter`]).
    pub(super) meter: bool,
    /// Registered caller memory: address to bytes.
    pub(super) registered: BTreeMap<u64, usize>,
    /// Live pieces of page-locked chunks ([`DeviceApi::host_piece`]): (chunk, offset) to bytes.
    pub(super) pieces: BTreeMap<(u64, usize), usize>,
    pub(super) stats: Stats,
    /// The virtual clock, in nanoseconds: it advances only as work runs, by a fixed cost per
    /// piece of work ([`cost_ns`]).
    pub(super) clock: u64,
    /// Events created with timing.
    pub(super) timing: HashSet<u64>,
    /// The clock when each timing event's most recent record completed.
    pub(super) stamps: HashMap<u64, u64>,
}

/// What one piece of work costs on the virtual clock.
/// One GEMM's A, B and C elements.
type Operands = (Vec<Complex64>, Vec<Complex64>, Vec<Complex64>);

pub(super) fn cost_ns(work: &Work) -> u64 {
    match work {
        Work::H2d { .. } | Work::D2h { .. } => 1_000,
        // As many as the rows copied one by one would cost.
        Work::H2dPitched { copy, .. } | Work::D2hPitched { copy, .. } => {
            1_000 * copy.height.saturating_mul(copy.depth) as u64
        }
        Work::Batched(_) | Work::Strided(_) | Work::Gauss(_) | Work::Geam(_) => 5_000,
        Work::Wait { .. } | Work::Nop => 0,
    }
}

impl State {
    pub(super) fn violation(&mut self, what: String) {
        if self.strict && !std::thread::panicking() {
            panic!("fake device: {what}");
        }
        self.stats.violations.push(what);
    }

    /// The allocation holding `[address, address + len)` and the offset of `address` in it.
    pub(super) fn region(&self, address: u64, len: usize) -> Result<(Bytes, usize), String> {
        let (base, data) = self
            .allocs
            .range(..=address)
            .next_back()
            .ok_or_else(|| format!("address {address:#x} is not allocated"))?;
        let offset = (address - base) as usize;
        let size = lock(data).len();
        if offset + len > size {
            return Err(format!(
                "bytes {offset}..{} of the {size}-byte allocation at {base:#x}",
                offset + len
            ));
        }
        Ok((Arc::clone(data), offset))
    }

    pub(super) fn read(&self, address: u64, dst: &mut [u8]) -> Result<(), String> {
        let (data, offset) = self.region(address, dst.len())?;
        dst.copy_from_slice(&lock(&data)[offset..offset + dst.len()]);
        Ok(())
    }

    pub(super) fn write(&self, address: u64, src: &[u8]) -> Result<(), String> {
        let (data, offset) = self.region(address, src.len())?;
        lock(&data)[offset..offset + src.len()].copy_from_slice(src);
        Ok(())
    }

    pub(super) fn elements(&self, address: u64, n: usize) -> Result<Vec<Complex64>, String> {
        let mut v = vec![Complex64::new(0.0, 0.0); n];
        self.read(address, as_bytes_mut(&mut v))?;
        Ok(v)
    }

    /// `C = alpha op(A) op(B) + beta C` on device memory, by the reference.
    /// The elements of one GEMM's A, B and C (A and B empty when `k` is 0).
    fn operands(&self, shape: &GemmShape, a: u64, b: u64, c: u64) -> Result<Operands, String> {
        let (ea, eb) = if shape.k > 0 {
            (shape.a_extent(), shape.b_extent())
        } else {
            (0, 0)
        };
        Ok((
            self.elements(a, ea)?,
            self.elements(b, eb)?,
            self.elements(c, shape.c_extent())?,
        ))
    }

    pub(super) fn gemm(&self, shape: &GemmShape, a: u64, b: u64, c: u64) -> Result<(), String> {
        let (av, bv, mut cv) = self.operands(shape, a, b, c)?;
        reference_gemm(shape, &av, &bv, &mut cv);
        self.write(c, as_bytes(&cv))
    }

    /// `C = alpha op(A) op(B) + beta C` with the product of three real products, as
    /// `cublasZgemm3m` computes it (Gauss's trick): with `P1 = Ar Br`, `P2 = Ai Bi` and
    /// `P3 = (Ar + Ai)(Br + Bi)`, `op(A) op(B) = (P1 - P2) + i (P3 - P1 - P2)`. Its rounding,
    /// not the reference's, is what the conformance suite holds to 1e-12.
    pub(super) fn gauss(&self, shape: &GemmShape, a: u64, b: u64, c: u64) -> Result<(), String> {
        let (av, bv, mut cv) = self.operands(shape, a, b, c)?;
        let (m, n, k) = (shape.m, shape.n, shape.k);
        // op(X)(row, col) of a column-major X with leading dimension ld.
        let at = |x: &[Complex64], op: Op, ld: usize, row: usize, col: usize| match op {
            Op::N => x[row + col * ld],
            Op::T => x[col + row * ld],
            Op::C => x[col + row * ld].conj(),
        };
        for col in 0..n {
            for row in 0..m {
                let (mut p1, mut p2, mut p3) = (0.0, 0.0, 0.0);
                for l in 0..k {
                    let x = at(&av, shape.op_a, shape.lda, row, l);
                    let y = at(&bv, shape.op_b, shape.ldb, l, col);
                    p1 += x.re * y.re;
                    p2 += x.im * y.im;
                    p3 += (x.re + x.im) * (y.re + y.im);
                }
                let product = Complex64::new(p1 - p2, p3 - p1 - p2);
                let out = &mut cv[row + col * shape.ldc];
                *out = if shape.beta == Complex64::new(0.0, 0.0) {
                    shape.alpha * product
                } else {
                    shape.alpha * product + shape.beta * *out
                };
            }
        }
        self.write(c, as_bytes(&cv))
    }

    pub(super) fn geam(&self, call: &Geam) -> Result<(), String> {
        let s = call.shape();
        let zero = Complex64::new(0.0, 0.0);
        for it in call.items() {
            let a = if s.alpha == zero {
                Vec::new()
            } else {
                self.elements(it.a, extent(s.m, s.n, s.lda))?
            };
            let b = if s.beta == zero {
                Vec::new()
            } else {
                self.elements(it.b, extent(s.m, s.n, s.ldb))?
            };
            let mut c = self.elements(it.c, extent(s.m, s.n, s.ldc))?;
            for col in 0..s.n {
                for row in 0..s.m {
                    let mut v = zero;
                    if s.alpha != zero {
                        v += s.alpha * a[row + col * s.lda];
                    }
                    if s.beta != zero {
                        v += s.beta * b[row + col * s.ldb];
                    }
                    c[row + col * s.ldc] = v;
                }
            }
            self.write(it.c, as_bytes(&c))?;
        }
        Ok(())
    }

    pub(super) fn execute(&mut self, work: Work) {
        let outcome = match &work {
            Work::H2d {
                src,
                src_offset,
                dst,
                len,
            } => {
                let bytes = bytemuck::cast_slice::<u64, u8>(&lock(&src.bytes))
                    [*src_offset..src_offset + len]
                    .to_vec();
                src.users.fetch_sub(1, Ordering::SeqCst);
                self.write(*dst, &bytes)
            }
            Work::D2h {
                src,
                dst,
                dst_offset,
                len,
            } => {
                let mut bytes = vec![0u8; *len];
                let read = self.read(*src, &mut bytes);
                if read.is_ok() {
                    bytemuck::cast_slice_mut::<u64, u8>(&mut lock(&dst.bytes))
                        [*dst_offset..dst_offset + len]
                        .copy_from_slice(&bytes);
                }
                dst.users.fetch_sub(1, Ordering::SeqCst);
                read
            }
            Work::H2dPitched { src, dst, copy } => {
                let words = lock(&src.bytes);
                let bytes = bytemuck::cast_slice::<u64, u8>(&words);
                let written = copy.rows().try_for_each(|(from, to)| {
                    self.write(dst + to as u64, &bytes[from..from + copy.width])
                });
                drop(words);
                src.users.fetch_sub(1, Ordering::SeqCst);
                written
            }
            Work::D2hPitched { src, dst, copy } => {
                let mut row = vec![0u8; copy.width];
                let mut words = lock(&dst.bytes);
                let bytes = bytemuck::cast_slice_mut::<u64, u8>(&mut words);
                let read = copy.rows().try_for_each(|(from, to)| {
                    self.read(src + from as u64, &mut row)?;
                    bytes[to..to + copy.width].copy_from_slice(&row);
                    Ok(())
                });
                drop(words);
                dst.users.fetch_sub(1, Ordering::SeqCst);
                read
            }
            Work::Batched(_) | Work::Strided(_) | Work::Gauss(_) | Work::Geam(_)
                if !self.compute =>
            {
                if matches!(work, Work::Batched(_)) {
                    self.stats.batched += 1;
                }
                Ok(())
            }
            Work::Batched(call) => {
                self.stats.batched += 1;
                self.batched(call)
            }
            Work::Strided(call) => (0..call.count() as u64).try_for_each(|i| {
                let at = |s: memhc_gpu::Strided| s.address + i * 16 * s.stride as u64;
                self.gemm(call.shape(), at(call.a()), at(call.b()), at(call.c()))
            }),
            Work::Gauss(call) => {
                let (a, b, c) = (call.a().address, call.b().address, call.c().address);
                self.gauss(call.shape(), a, b, c)
            }
            Work::Geam(call) => self.geam(call),
            Work::Wait { stream, seq } => {
                self.run(*stream, *seq);
                Ok(())
            }
            Work::Nop => Ok(()),
        };
        if let Err(e) = outcome {
            self.violation(format!("device fault: {e}"));
        }
    }

    pub(super) fn batched(&self, call: &BatchedGemm) -> Result<(), String> {
        let n = call.count();
        let mut table = vec![0u8; 24 * n];
        self.read(call.a_array(), &mut table)?;
        let entry = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&table[8 * i..8 * i + 8]);
            u64::from_ne_bytes(w)
        };
        (0..n).try_for_each(|i| self.gemm(call.shape(), entry(i), entry(n + i), entry(2 * n + i)))
    }

    /// Runs stream `id` until `seq` pieces of its work have completed.
    pub(super) fn run(&mut self, id: u64, seq: u64) {
        loop {
            let Some(q) = self.queues.get_mut(&id) else {
                return;
            };
            if q.done >= seq {
                return;
            }
            let Some(work) = q.work.pop_front() else {
                return;
            };
            q.done += 1;
            let done = q.done;
            let cost = cost_ns(&work);
            let bytes = match &work {
                Work::H2d { len, .. } | Work::D2h { len, .. } => *len,
                Work::H2dPitched { copy, .. } | Work::D2hPitched { copy, .. } => copy.bytes(),
                _ => 0,
            };
            // A wait runs the other stream's work, metered there: not metered twice.
            let metered = self.meter && !matches!(work, Work::Wait { .. });
            let start = metered.then(super::meter::now);
            self.execute(work);
            if let Some(start) = start {
                self.stats.device_work.add(start, bytes);
            }
            self.clock += cost;
            self.stamp(id, done);
        }
    }

    /// Stamps the timing events recorded on stream `id` once `done` pieces had completed.
    pub(super) fn stamp(&mut self, id: u64, done: u64) {
        let Some(q) = self.queues.get_mut(&id) else {
            return;
        };
        let (ready, waiting): (Vec<_>, Vec<_>) =
            q.unstamped.drain(..).partition(|&(seq, _)| seq <= done);
        q.unstamped = waiting;
        for (_, event) in ready {
            self.stamps.insert(event, self.clock);
        }
    }

    pub(super) fn run_all(&mut self) {
        let ids: Vec<(u64, u64)> = self.queues.iter().map(|(i, q)| (*i, q.enqueued)).collect();
        for (id, seq) in ids {
            self.run(id, seq);
        }
    }

    pub(super) fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
