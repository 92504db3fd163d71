//! The virtual clocks of the modelled device ([`Clocks`]): the host's clock, one clock per
//! stream, and the busy times of the three engines (the host-to-device copy engine, the
//! device-to-host copy engine, the SMs).
//!
//! A piece of device work enqueued on stream `s` becomes ready at the later of the stream's
//! clock (the end of the work before it on the stream, and of the events the stream was told
//! to wait for) and the host's clock plus the launch latency; it starts at the first moment
//! from then on at which its engine is free for its whole duration (an engine runs one piece
//! at a time; a piece ready later may run in an earlier gap, as the hardware serves its
//! queues), and it advances the stream's clock to its end. An event records the stream's
//! clock (or the host's, if later). The host's clock advances by the cost of each call and of
//! the host-side work it does (staging copies, pinning), and jumps forward when it waits
//! (a synchronisation, or a wait for a staging buffer's fence).

use super::params::ModelParams;

/// The device engines the model keeps busy times for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// The host-to-device copy engine.
    H2D,
    /// The device-to-host copy engine.
    D2H,
    /// The SMs (GEMM and GEAM kernels).
    Compute,
}

impl Engine {
    fn index(self) -> usize {
        match self {
            Engine::H2D => 0,
            Engine::D2H => 1,
            Engine::Compute => 2,
        }
    }
}

/// The busy intervals of one engine, sorted and disjoint.
#[derive(Clone, Debug, Default)]
struct Lane {
    busy: Vec<(f64, f64)>,
}

impl Lane {
    /// Reserves the first interval of `duration` from `ready` on during which the engine is
    /// free; returns its start.
    fn place(&mut self, ready: f64, duration: f64) -> f64 {
        let mut start = ready;
        let mut at = self.busy.len();
        for (i, &(s, e)) in self.busy.iter().enumerate() {
            if e <= start {
                continue;
            }
            if s >= start + duration {
                at = i;
                break;
            }
            start = start.max(e);
        }
        if duration > 0.0 {
            self.busy.insert(at, (start, start + duration));
        }
        start
    }

    /// The first moment from `time` on at which the engine is not busy.
    fn next_free(&self, time: f64) -> f64 {
        let mut t = time;
        for &(s, e) in &self.busy {
            if s > t {
                break;
            }
            if e > t {
                t = e;
            }
        }
        t
    }

    /// Whether the engine is free over `[start, start + duration)`; if not, `Err` with the
    /// end of the first interval in the way.
    fn fits(&self, start: f64, duration: f64) -> Result<(), f64> {
        let end = start + duration;
        match self
            .busy
            .iter()
            .find(|&&(s, e)| e > start && s < end && duration > 0.0)
        {
            Some(&(_, e)) => Err(e),
            None => Ok(()),
        }
    }

    /// Marks `[start, start + duration)` busy (it must be free).
    fn insert(&mut self, start: f64, duration: f64) {
        if duration > 0.0 {
            let at = self.busy.partition_point(|&(s, _)| s < start);
            self.busy.insert(at, (start, start + duration));
        }
    }

    /// The time within `[start, end)` during which the engine is busy.
    fn overlap(&self, start: f64, end: f64) -> f64 {
        self.busy
            .iter()
            .filter(|&&(s, e)| e > start && s < end)
            .map(|&(s, e)| e.min(end) - s.max(start))
            .sum()
    }

    /// How long moving `bytes` from `start` on takes at `alone` bytes per second while this
    /// engine is idle and at `duplex` while it is busy.
    fn transfer_s(&self, start: f64, bytes: f64, alone: f64, duplex: f64) -> f64 {
        let (mut t, mut left) = (start, bytes);
        for &(s, e) in self.busy.iter().filter(|&&(_, e)| e > start) {
            if s > t {
                let free = (s - t) * alone;
                if left <= free {
                    return t + left / alone - start;
                }
                left -= free;
                t = s;
            }
            let busy = (e - t) * duplex;
            if left <= busy {
                return t + left / duplex - start;
            }
            left -= busy;
            t = e;
        }
        t + left / alone - start
    }

    /// Forgets the intervals that end by `time` (no new work can start before the host's
    /// clock, so they no longer matter).
    fn prune(&mut self, time: f64) {
        let done = self.busy.partition_point(|&(_, e)| e <= time);
        if done > 64 {
            self.busy.drain(..done);
        }
    }

    /// The end of the last interval (0 if none).
    fn end(&self) -> f64 {
        self.busy.last().map_or(0.0, |&(_, e)| e)
    }
}

/// What the model has seen so far and when it ends: see [`Clocks::report`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModelReport {
    /// The modelled time from the device's opening to the end of the last work, host or
    /// device, seconds.
    pub makespan_s: f64,
    /// The modelled floor: the largest of [`ModelReport::compute_floor_s`],
    /// [`ModelReport::h2d_floor_s`] and [`ModelReport::d2h_floor_s`].
    pub floor_s: f64,
    /// Every GEMM's flops at the rate of its call's shape ([`ModelParams::gemm_call_rate`]: the
    /// one-product table for a call of one product), without the calls' fixed time, seconds.
    pub compute_floor_s: f64,
    /// Every byte copied host to device at the copy engine's bandwidth, seconds.
    pub h2d_floor_s: f64,
    /// Every byte copied device to host at the copy engine's bandwidth, seconds.
    pub d2h_floor_s: f64,
    /// Floating-point operations of all GEMMs (`8 m n k` per product).
    pub flops: f64,
    /// Bytes copied host to device.
    pub h2d_bytes: u64,
    /// Bytes copied device to host.
    pub d2h_bytes: u64,
    /// Time the host-to-device copy engine was busy, seconds.
    pub h2d_busy_s: f64,
    /// Time the device-to-host copy engine was busy, seconds.
    pub d2h_busy_s: f64,
    /// Time the SMs were busy, seconds.
    pub compute_busy_s: f64,
    /// Host time spent in staging copies and pinning, seconds.
    pub host_copy_s: f64,
    /// Of [`ModelReport::host_copy_s`], the time spent pinning new page-locked buffers.
    pub host_pin_s: f64,
    /// Page-locked buffers allocated (staging buffers and host buffers).
    pub pinned_buffers: u64,
    /// Bytes the host copied between its memory and page-locked memory (staging both ways):
    /// against [`ModelReport::h2d_bytes`] + [`ModelReport::d2h_bytes`], the CPU's share of the
    /// traffic (0 when every copy is one DMA from or into page-locked host objects).
    pub staged_bytes: u64,
    /// Host time spent waiting for the device, seconds.
    pub host_wait_s: f64,
}

impl ModelReport {
    /// This report with its makespan counted from the start of a run's queue, given the
    /// backend's timing clock then (`Backend::timing_clock_ns`; `None`: from the opening), and
    /// the modelled time before it (the set-up: page-locking node memory), seconds.
    pub fn from_queue_start(self, queue_start_ns: Option<u64>) -> (ModelReport, f64) {
        let setup = queue_start_ns.map_or(0.0, |ns| ns as f64 * 1e-9);
        let report = ModelReport {
            makespan_s: self.makespan_s - setup,
            ..self
        };
        (report, setup)
    }
}

/// The virtual clocks of one modelled device. See the [model's documentation](crate::model).
#[derive(Clone, Debug)]
pub struct Clocks {
    params: ModelParams,
    host: f64,
    streams: Vec<f64>,
    lanes: [Lane; 3],
    report: ModelReport,
    /// Per copy engine (host-to-device, device-to-host): time its copies still owe for having
    /// shared the bus with copies the other way placed after them, added to its next copy.
    debt: [f64; 2],
    /// The host's clock at the first [`Clocks::synchronize`] after the last work enqueued
    /// (`None` while work was enqueued after every synchronisation).
    synced: Option<f64>,
}

impl Clocks {
    /// Clocks at zero, no streams, under `params`.
    pub fn new(params: ModelParams) -> Self {
        Clocks {
            params,
            host: 0.0,
            streams: Vec::new(),
            lanes: Default::default(),
            report: ModelReport::default(),
            debt: [0.0; 2],
            synced: None,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &ModelParams {
        &self.params
    }

    /// The host's clock, seconds.
    pub fn host(&self) -> f64 {
        self.host
    }

    /// The clock of stream `stream` (the end of its work so far), seconds.
    pub fn stream(&self, stream: usize) -> f64 {
        self.streams.get(stream).copied().unwrap_or(0.0)
    }

    /// The host spends `seconds` on work of its own that the device does not see.
    pub fn host_work(&mut self, seconds: f64) {
        self.host += seconds;
    }

    /// The host spends `seconds` copying between its memory and page-locked memory.
    pub fn host_copy(&mut self, seconds: f64) {
        self.host += seconds;
        self.report.host_copy_s += seconds;
    }

    /// The host copies `bytes` between its memory and page-locked memory, in `seconds`.
    pub fn host_staging(&mut self, bytes: usize, seconds: f64) {
        self.host_copy(seconds);
        self.report.staged_bytes += bytes as u64;
    }

    /// The host page-locks a new buffer, in `seconds`.
    pub fn host_pin(&mut self, seconds: f64) {
        self.host_copy(seconds);
        self.report.host_pin_s += seconds;
        self.report.pinned_buffers += 1;
    }

    /// The cost of one driver call.
    pub fn call(&mut self) {
        self.host += self.params.host_call_s;
    }

    /// A new stream (its clock at zero); returns its number.
    pub fn new_stream(&mut self) -> usize {
        self.call();
        self.streams.push(0.0);
        self.streams.len() - 1
    }

    fn stream_mut(&mut self, stream: usize) -> &mut f64 {
        if stream >= self.streams.len() {
            self.streams.resize(stream + 1, 0.0);
        }
        &mut self.streams[stream]
    }

    /// Enqueues `duration` seconds of work on `engine` in stream order on `stream`; returns
    /// its start and end.
    pub fn enqueue(&mut self, stream: usize, engine: Engine, duration: f64) -> (f64, f64) {
        self.call();
        self.synced = None;
        let ready = self
            .stream(stream)
            .max(self.host + self.params.launch_latency_s);
        let lane = &mut self.lanes[engine.index()];
        lane.prune(self.host);
        let start = lane.place(ready, duration);
        let end = start + duration;
        *self.stream_mut(stream) = end;
        match engine {
            Engine::H2D => self.report.h2d_busy_s += duration,
            Engine::D2H => self.report.d2h_busy_s += duration,
            Engine::Compute => self.report.compute_busy_s += duration,
        }
        (start, end)
    }

    /// A copy of `bytes` in direction `engine` ([`Engine::H2D`] or [`Engine::D2H`]) on
    /// `stream`: the copy latency plus the bytes at the share of the bus's bandwidth one copy
    /// reaches ([`ModelParams::h2d_copy_share`], [`ModelParams::d2h_copy_share`]), and at the
    /// duplex share while the other direction's engine is busy
    /// ([`ModelParams::h2d_duplex_share`], [`ModelParams::d2h_duplex_share`]). The copies of
    /// the other direction it overlaps were placed at their own rate; what they lose to this
    /// one is added to the other engine's next copy (the engine's throughput is right, the
    /// end of that earlier copy is not moved). The floor counts the bytes at the bus's full
    /// bandwidth.
    pub fn copy(&mut self, stream: usize, engine: Engine, bytes: usize) -> (f64, f64) {
        let p = &self.params;
        let (bus, share, duplex, other, other_share, other_duplex) = match engine {
            Engine::D2H => {
                self.report.d2h_bytes += bytes as u64;
                self.report.d2h_floor_s += bytes as f64 / p.d2h_bandwidth;
                (
                    p.d2h_bandwidth,
                    p.d2h_copy_share,
                    p.d2h_duplex_share,
                    Engine::H2D,
                    p.h2d_copy_share,
                    p.h2d_duplex_share,
                )
            }
            _ => {
                self.report.h2d_bytes += bytes as u64;
                self.report.h2d_floor_s += bytes as f64 / p.h2d_bandwidth;
                (
                    p.h2d_bandwidth,
                    p.h2d_copy_share,
                    p.h2d_duplex_share,
                    Engine::D2H,
                    p.d2h_copy_share,
                    p.d2h_duplex_share,
                )
            }
        };
        let latency = p.copy_latency_s;
        self.call();
        self.synced = None;
        let ready = self
            .stream(stream)
            .max(self.host + self.params.launch_latency_s);
        let (me, them) = (engine.index(), other.index());
        let debt = std::mem::take(&mut self.debt[me]);
        self.lanes[me].prune(self.host);
        let (alone, shared) = (bus * share, bus * duplex);
        let mut start = ready;
        let duration = loop {
            start = self.lanes[me].next_free(start);
            let fixed = latency + debt;
            let d = fixed + self.lanes[them].transfer_s(start + fixed, bytes as f64, alone, shared);
            match self.lanes[me].fits(start, d) {
                Ok(()) => break d,
                Err(after) => start = after,
            }
        };
        self.lanes[me].insert(start, duration);
        let end = start + duration;
        let overlapped = self.lanes[them].overlap(start, end);
        self.debt[them] += overlapped * (other_share / other_duplex - 1.0);
        *self.stream_mut(stream) = end;
        match engine {
            Engine::D2H => self.report.d2h_busy_s += duration,
            _ => self.report.h2d_busy_s += duration,
        }
        (start, end)
    }

    /// A BLAS call of `count` products of `m x n x k` on `stream`.
    pub fn gemm(
        &mut self,
        stream: usize,
        m: usize,
        n: usize,
        k: usize,
        count: usize,
    ) -> (f64, f64) {
        let flops = 8.0 * m as f64 * n as f64 * k as f64 * count as f64;
        self.report.flops += flops;
        if flops > 0.0 {
            // The card's rate for the call's shape: the rate the call runs at, less its fixed
            // time (with the batched table for one-product calls, the floor was above what one
            // large product takes, and a run could beat its floor).
            self.report.compute_floor_s += flops / self.params.gemm_call_rate(m, n, k, count);
        }
        let duration = self.params.gemm_s(m, n, k, count);
        self.enqueue(stream, Engine::Compute, duration)
    }

    /// `items` matrix additions of `m x n` on `stream`, one call each: each reads two
    /// matrices and writes one at the device's memory bandwidth.
    pub fn geam(&mut self, stream: usize, m: usize, n: usize, items: usize) -> (f64, f64) {
        let bytes = 3.0 * 16.0 * m as f64 * n as f64;
        let duration = self.params.gemm_call_s + bytes / self.params.device_bandwidth;
        let mut span = (self.stream(stream), self.stream(stream));
        for i in 0..items {
            let (s, e) = self.enqueue(stream, Engine::Compute, duration);
            span = (if i == 0 { s } else { span.0 }, e);
        }
        span
    }

    /// Records an event on `stream`: the time it completes (the stream's clock, or the
    /// host's if later).
    pub fn record(&mut self, stream: usize) -> f64 {
        self.call();
        self.stream(stream).max(self.host)
    }

    /// Makes `stream` wait for an event that completes at `time`.
    pub fn wait(&mut self, stream: usize, time: f64) {
        self.call();
        let clock = self.stream_mut(stream);
        *clock = clock.max(time);
    }

    /// Whether an event that completes at `time` has completed by the host's clock.
    pub fn query(&mut self, time: f64) -> bool {
        self.call();
        time <= self.host
    }

    /// The host waits until `time`.
    pub fn wait_until(&mut self, time: f64) {
        self.call();
        if time > self.host {
            self.report.host_wait_s += time - self.host;
            self.host = time;
        }
    }

    /// The end of all work enqueued so far, on every stream and engine.
    pub fn device_end(&self) -> f64 {
        self.streams
            .iter()
            .copied()
            .chain(self.lanes.iter().map(Lane::end))
            .fold(0.0, f64::max)
    }

    /// The host waits for all work on `stream`.
    pub fn synchronize_stream(&mut self, stream: usize) {
        self.wait_until(self.stream(stream));
    }

    /// The host waits for all work on the device: the end of a run, unless more work
    /// follows (see [`Clocks::report`]). A second synchronisation with no work enqueued since
    /// the first ends nothing new: the run ended at the first (what the host did in between,
    /// such as the runtime's audit and statistics or its tear-down, which synchronises again,
    /// is not the run's).
    pub fn synchronize(&mut self) {
        self.wait_until(self.device_end());
        if self.synced.is_none() {
            self.synced = Some(self.host);
        }
    }

    /// What the model has seen so far: the makespan, the floor, and the totals behind them.
    /// The makespan is the host's clock at the first [`Clocks::synchronize`] after the last
    /// work enqueued (a run ends with one; what the host does after it, such as freeing the
    /// run's buffers or synchronising again, is not the run's); if work was enqueued after
    /// every synchronisation, the later of the host's clock and the end of the device's work.
    pub fn report(&self) -> ModelReport {
        let r = self.report;
        ModelReport {
            makespan_s: self
                .synced
                .unwrap_or_else(|| self.host.max(self.device_end())),
            floor_s: r.compute_floor_s.max(r.h2d_floor_s).max(r.d2h_floor_s),
            ..r
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parameters with round numbers: no call costs, no latencies, 1 GB/s copies, a flat
    /// GEMM rate of 1 TFLOPS.
    fn plain() -> ModelParams {
        ModelParams {
            gemm_rates: vec![super::super::params::GemmRate {
                n: 1.0,
                tflops: 1.0,
            }],
            gemm_one_rates: Vec::new(),
            gemm_call_s: 0.0,
            h2d_bandwidth: 1e9,
            d2h_bandwidth: 1e9,
            copy_latency_s: 0.0,
            h2d_copy_share: 1.0,
            d2h_copy_share: 1.0,
            h2d_duplex_share: 1.0,
            d2h_duplex_share: 1.0,
            launch_latency_s: 0.0,
            host_call_s: 0.0,
            ..ModelParams::h100()
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn a_copy_takes_latency_plus_bytes_over_bandwidth() {
        let p = ModelParams {
            copy_latency_s: 3e-6,
            h2d_copy_share: 1.0,
            launch_latency_s: 0.0,
            host_call_s: 0.0,
            ..ModelParams::h100()
        };
        let mut c = Clocks::new(p);
        let s = c.new_stream();
        let (start, end) = c.copy(s, Engine::H2D, 55_000_000);
        assert!(close(start, 0.0));
        assert!(close(end, 3e-6 + 55e6 / 55e9));
        assert_eq!(c.report().h2d_bytes, 55_000_000);
    }

    #[test]
    fn copies_on_different_engines_overlap_and_on_one_engine_serialize() {
        let mut c = Clocks::new(plain());
        let (a, b) = (c.new_stream(), c.new_stream());
        let up = c.copy(a, Engine::H2D, 1_000_000);
        let down = c.copy(b, Engine::D2H, 1_000_000);
        assert!(close(up.0, 0.0) && close(down.0, 0.0), "{up:?} {down:?}");
        let c2 = c.new_stream();
        let second_up = c.copy(c2, Engine::H2D, 1_000_000);
        assert!(
            close(second_up.0, 1e-3),
            "waits for the first upload: {second_up:?}"
        );
        assert!(close(second_up.1, 2e-3));
        c.synchronize();
        assert!(close(c.report().makespan_s, 2e-3));
    }

    #[test]
    fn copies_both_ways_share_the_bus() {
        // Alone at 1 GB/s, at 0.5 GB/s while the other direction copies.
        let p = ModelParams {
            h2d_duplex_share: 0.5,
            d2h_duplex_share: 0.5,
            ..plain()
        };
        let mut c = Clocks::new(p);
        let (a, b) = (c.new_stream(), c.new_stream());
        let up = c.copy(a, Engine::H2D, 1_000_000);
        assert!(close(up.1, 1e-3), "{up:?}");
        // Half its bytes beside the upload (1 ms), the other half alone.
        let down = c.copy(b, Engine::D2H, 1_000_000);
        assert!(close(down.0, 0.0) && close(down.1, 1.5e-3), "{down:?}");
        // The upload lost 1 ms to the read-back: its engine's next copy pays it.
        let next = c.copy(a, Engine::H2D, 1_000_000);
        assert!(close(next.0, 1e-3) && close(next.1, 3e-3), "{next:?}");
        // The floor is the bytes at the bus's whole bandwidth.
        assert!(close(c.report().h2d_floor_s, 2e-3));
    }

    #[test]
    fn a_copy_reaches_its_share_of_the_bus() {
        let p = ModelParams {
            h2d_copy_share: 0.5,
            ..plain()
        };
        let mut c = Clocks::new(p);
        let s = c.new_stream();
        let up = c.copy(s, Engine::H2D, 1_000_000);
        assert!(close(up.1, 2e-3), "{up:?}");
        assert!(close(c.report().h2d_floor_s, 1e-3));
    }

    #[test]
    fn work_on_one_stream_runs_in_order_across_engines() {
        let mut c = Clocks::new(plain());
        let s = c.new_stream();
        c.copy(s, Engine::H2D, 1_000_000);
        // 1e9 flops at 1 TFLOPS: 1 ms, after the copy's 1 ms.
        let gemm = c.gemm(s, 1000, 1000, 125, 1);
        assert!(close(gemm.0, 1e-3) && close(gemm.1, 2e-3), "{gemm:?}");
        let back = c.copy(s, Engine::D2H, 500_000);
        assert!(close(back.0, 2e-3) && close(back.1, 2.5e-3));
    }

    #[test]
    fn a_gemm_waiting_on_an_event_starts_after_it() {
        let mut c = Clocks::new(plain());
        let (a, b) = (c.new_stream(), c.new_stream());
        c.copy(a, Engine::H2D, 2_000_000);
        let done = c.record(a);
        assert!(close(done, 2e-3));
        c.wait(b, done);
        let gemm = c.gemm(b, 1000, 1000, 125, 1);
        assert!(close(gemm.0, 2e-3), "{gemm:?}");
        // Without the wait, a GEMM on a third stream starts at once.
        let free = c.new_stream();
        let early = c.gemm(free, 1000, 1000, 125, 1);
        assert!(
            close(early.0, 0.0),
            "the SMs are free before 2 ms: {early:?}"
        );
    }

    #[test]
    fn work_ready_later_leaves_the_engine_free_before_it() {
        let mut c = Clocks::new(plain());
        let (a, b) = (c.new_stream(), c.new_stream());
        c.wait(a, 5e-3);
        let late = c.copy(a, Engine::H2D, 1_000_000);
        assert!(close(late.0, 5e-3));
        let early = c.copy(b, Engine::H2D, 1_000_000);
        assert!(close(early.0, 0.0), "runs in the gap before: {early:?}");
        let third = c.copy(b, Engine::H2D, 4_500_000);
        assert!(close(third.0, 6e-3), "does not fit in 1-5 ms: {third:?}");
    }

    #[test]
    fn the_host_pays_launch_latency_calls_and_waits() {
        let p = ModelParams {
            launch_latency_s: 4e-6,
            host_call_s: 1e-6,
            ..plain()
        };
        let mut c = Clocks::new(p);
        let s = c.new_stream(); // host: 1 µs
        c.host_copy(1e-3); // host: 1.001 ms
        let (start, end) = c.copy(s, Engine::H2D, 1_000_000); // the call: 1.002 ms
        assert!(close(start, 1.002e-3 + 4e-6), "{start}");
        let event = c.record(s);
        assert!(close(event, end));
        assert!(!c.query(event));
        c.wait_until(event);
        assert!(close(c.host(), end));
        assert!(c.query(event));
        let r = c.report();
        assert!(close(r.host_copy_s, 1e-3));
        assert!(close(r.makespan_s, c.host()));
        assert_eq!(
            r.staged_bytes, 0,
            "host work that stages nothing counts no bytes"
        );
        c.host_staging(4096, 2e-3);
        let r = c.report();
        assert_eq!(r.staged_bytes, 4096);
        assert!(close(r.host_copy_s, 3e-3));
    }

    #[test]
    fn the_floor_is_the_largest_of_compute_and_each_direction() {
        let mut c = Clocks::new(plain());
        let s = c.new_stream();
        c.copy(s, Engine::H2D, 3_000_000);
        c.copy(s, Engine::D2H, 2_000_000);
        c.gemm(s, 1000, 1000, 125, 1);
        let r = c.report();
        assert!(close(r.h2d_floor_s, 3e-3) && close(r.d2h_floor_s, 2e-3));
        assert!(close(r.compute_floor_s, 1e-3));
        assert!(close(r.floor_s, 3e-3));
        assert!(close(r.makespan_s, 6e-3), "one stream: in order");
        assert!(close(r.flops, 1e9));
    }

    #[test]
    fn no_gemm_call_runs_faster_than_its_share_of_the_floor() {
        // The H100's tables: a one-product call of order 1536 runs at the one-product table's
        // 54.6 TFLOPS, faster than the batched table at that size; 64 products of order 128 at
        // the batched table's 16.1.
        for (m, count, tflops) in [(1536, 1, 54.6), (512, 1, 27.2), (128, 64, 16.1)] {
            let mut c = Clocks::new(ModelParams::h100());
            let s = c.new_stream();
            c.gemm(s, m, m, m, count);
            let r = c.report();
            let flops = 8.0 * (m * m * m * count) as f64;
            assert!(
                close(r.compute_floor_s, flops / (tflops * 1e12)),
                "{m}: {r:?}"
            );
            assert!(r.compute_floor_s < r.makespan_s, "{m}: {r:?}");
        }
    }

    #[test]
    fn a_run_ends_at_its_last_synchronisation() {
        let mut c = Clocks::new(plain());
        let s = c.new_stream();
        c.copy(s, Engine::H2D, 1_000_000);
        c.synchronize();
        c.host_work(5e-3); // freeing the run's buffers after it
        assert!(close(c.report().makespan_s, 1e-3));
        c.copy(s, Engine::H2D, 1_000_000); // more work: the run goes on
        assert!(close(c.report().makespan_s, 7e-3), "{:?}", c.report());
    }

    /// The runner synchronises at the end of its queue, then audits and reads statistics
    /// (driver calls in a real runtime) and drops the runtime, which synchronises again: the
    /// run ended at the first synchronisation (until 2026-11-28 the second one moved it, by
    /// 0.4-0.7 ms at the Fig. 7 points).
    #[test]
    fn a_synchronisation_with_nothing_new_enqueued_ends_nothing() {
        let p = ModelParams {
            host_call_s: 1e-6,
            ..plain()
        };
        let mut c = Clocks::new(p);
        let s = c.new_stream();
        c.copy(s, Engine::H2D, 1_000_000); // 1 ms
        c.synchronize();
        let end = c.host();
        assert!(close(c.report().makespan_s, end) && end > 1e-3, "{end}");
        for _ in 0..100 {
            c.query(0.0); // 100 µs of calls after the run
        }
        c.synchronize();
        assert!(close(c.report().makespan_s, end), "{:?}", c.report());
        c.copy(s, Engine::H2D, 1_000_000); // more work: the run goes on, to its next end
        c.synchronize();
        assert!(c.report().makespan_s > end + 1e-3, "{:?}", c.report());
    }
}
