//! The parameters of the modelled device ([`ModelParams`]): every rate and latency the model
//! uses, with the H100 numbers we measured as defaults.

use memhc_backend::{BackendError, BackendOp};

/// One point of the GEMM rate table: batched complex-double GEMMs of `n x n x n` run at
/// `tflops` (10^12 floating-point operations per second, `8 m n k` per product).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmRate {
    /// The matrix size `N` of the measurement.
    pub n: f64,
    /// The rate measured at that size, TFLOPS.
    pub tflops: f64,
}

/// Every parameter of the modelled device and of the host work the device waits on. Times are
/// seconds, rates bytes (or floating-point operations) per second.
///
/// The defaults are the NVIDIA H100 80GB HBM3 of the two recorded GPU sessions, each cited
/// next to its field: `docs/results/2026-11-26-h100.md` (the card's limits, measured with
/// PyTorch: section "d") and `docs/results/2026-11-26-h100-2.md` (the runs, and the timeline
/// of `profile-fig7-optimal`, N = 384, vector size 16, 8 vectors, repeated rate 0.5). Values
/// the records do not give directly (launch latencies, driver call costs) are stated as
/// assumptions, in the order of what CUDA documents for such calls.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelParams {
    /// Device memory in bytes. Default: 81,559 MiB, the H100 80GB HBM3 (`2026-11-26-h100.md`,
    /// the device line).
    pub device_memory: usize,
    /// Batched ZGEMM rate by matrix size, sorted by `n`. A GEMM of shape `m x n x k` runs at the
    /// rate of `N = cbrt(m n k)`, interpolated linearly between the table's points; beyond the
    /// last point the last rate; below the first, the first rate scaled by `N / n_first` (an
    /// assumption: small GEMMs do not fill the card). Default: 16.1 / 29.0 / 37.3 / 46.4 TFLOPS
    /// for 64 batched products at N = 128 / 192 / 256 / 384, 51.7 at 8192^3
    /// (`2026-11-26-h100.md`, section d).
    pub gemm_rates: Vec<GemmRate>,
    /// ZGEMM rate of calls of one product (`count == 1`), by `N = cbrt(m n k)` as
    /// [`ModelParams::gemm_rates`]; empty: those calls use [`ModelParams::gemm_rates`] too. A
    /// tiled meson contraction is one product of order `4N` (issue 30), which runs faster than
    /// the batched table at the same flops says. Default: 27.2 / 40.9 / 49.5 TFLOPS at order
    /// 512 / 768 / 1024 (`N` = 128 / 192 / 256: the contraction bench's `zgemm-one` medians,
    /// `docs/results/2026-11-28-h100/2026-11-28T013842Z-check-limits-contraction/criterion/`,
    /// one call and a stream synchronisation per iteration); 54.6 at 1536 (`N` = 384: the
    /// median of the 128 GEMM spans, 530.5 µs for 2.90e10 flops, of the direct path's timeline
    /// `2026-11-28T014224Z-datapath-cpu-profile-direct/timeline-direct-fig7.json.gz`, where the
    /// same bench gives 47.5: its synchronisation is in its time); 53.1 at 8192 (`limits.json`
    /// of the same session, `square N=8192`).
    pub gemm_one_rates: Vec<GemmRate>,
    /// Fixed device time of each BLAS call, on top of its flops at the table's rate. Default:
    /// 5 µs. The layered meson contraction (4 calls) took 20-30 µs more than one strided call
    /// of the same 64 products (`2026-11-26-h100.md`, section a: 0.646 against 0.626 ms at
    /// N = 384, 0.070 against 0.048 ms at N = 128).
    pub gemm_call_s: f64,
    /// Device-to-device memory bandwidth (read plus write), for GEAM. Default: 2.96 TB/s
    /// (`2026-11-26-h100.md`, section d, a 1 GiB device-to-device copy).
    pub device_bandwidth: f64,
    /// Host-to-device bandwidth of a copy from page-locked memory (the H2D copy engine).
    /// Default: 55.0 GB/s (`2026-11-26-h100.md`, section d: 55.0 / 55.1 GB/s at 256 MiB / 1 GiB).
    pub h2d_bandwidth: f64,
    /// Device-to-host bandwidth of a copy into page-locked memory (the D2H copy engine).
    /// Default: 55.0 GB/s (`2026-11-26-h100.md`, section d: 52.4 / 55.1 GB/s).
    pub d2h_bandwidth: f64,
    /// Fixed device time of each copy (DMA set-up). Default: 2 µs (assumed).
    pub copy_latency_s: f64,
    /// The share of [`ModelParams::h2d_bandwidth`] (the bus, the floor's rate) one of memhc's
    /// host-to-device copies reaches while no device-to-host copy runs, on top of
    /// [`ModelParams::copy_latency_s`] per copy call. Default: 0.910, from the 38 uploads of a
    /// 36 MiB tiled node (16 two-dimensional copies, one per spin component, from the pinned
    /// pool) that overlap no read-back in the H100's direct-path timeline
    /// `docs/results/2026-11-28-h100/2026-11-28T014224Z-datapath-cpu-profile-direct/timeline-direct-fig7.json.gz`:
    /// median 786.4 µs (48.0 GB/s), less 16 calls' latency (32 µs), is 37.7 MB at 50.0 GB/s
    /// (`scripts/model-h100-compare.py` prints the medians; the Table 1 timeline gives 793.1 µs
    /// over 87).
    pub h2d_copy_share: f64,
    /// The same for device-to-host copies. Default: 0.992, from the 5 read-backs of 36 MiB
    /// that overlap no upload in the same timeline (median 724.0 µs, 52.1 GB/s; Table 1: 717.2
    /// µs over 4).
    pub d2h_copy_share: f64,
    /// The share of [`ModelParams::h2d_bandwidth`] a host-to-device copy reaches while a
    /// device-to-host copy runs (the bus is full duplex, but not at twice the rate). Default:
    /// 0.805, from the 56 uploads that overlap a read-back for more than 95% of their time in
    /// the same timeline (median 884.5 µs, 42.7 GB/s; Table 1: 903.1 µs over 109), the 16
    /// calls' latency taken off as above.
    pub h2d_duplex_share: f64,
    /// The same for a device-to-host copy while a host-to-device copy runs. Default: 0.825
    /// (the median of 86 read-backs in the same timeline, 864.2 µs, 43.7 GB/s; Table 1: 868.7
    /// µs over 162).
    pub d2h_duplex_share: f64,
    /// Time from the host's enqueue of a copy or kernel to the earliest moment the device can
    /// start it. Default: 4 µs (assumed; CUDA's launch latency is a few µs).
    pub launch_latency_s: f64,
    /// Host time of each driver call (enqueue, event record, stream wait, query). Default:
    /// 2 µs (assumed).
    pub host_call_s: f64,
    /// Host copies to or from staging of at least this many bytes are split over threads
    /// ([`crate::pieces::PARALLEL_MIN`], 4 MiB) and run at [`ModelParams::staging_write_rate`]
    /// and [`ModelParams::staging_read_rate`]; shorter ones run on one thread, at the `_small`
    /// rates.
    pub parallel_copy_min: usize,
    /// The host's rate filling a page-locked staging buffer from pageable memory, for a piece
    /// split over threads (`memhc_gpu::pieces`). Default: 16.8 GB/s, so that an upload of a
    /// 36 MiB node, staged in 8 MiB pieces that overlap the DMA, takes the 2.39 ms median of
    /// the 144 uploads of the `profile-fig7-optimal` timeline (`2026-11-26-h100-2.md`,
    /// section 4: "~16 GB/s").
    pub staging_write_rate: f64,
    /// The same on one thread, for a piece below [`ModelParams::parallel_copy_min`].
    /// Default: 8.64 GB/s: the naive mode uploads a 36 MiB node as 16 copies of 2.25 MiB, in a
    /// median 4.41 ms in the `profile-fig7-naive` timeline of `2026-11-26-h100-2/`
    /// (37.7 MB / (4.41 ms - one 2.25 MiB DMA)); `memhc_gpu::pieces` says "about 9 GB/s on one
    /// core".
    pub staging_write_rate_small: f64,
    /// The host's rate emptying a page-locked staging buffer into the destination of a
    /// read-back, page faults on its fresh pages included, for a piece split over threads.
    /// Default: 5.4 GB/s, so that a read-back of a 36 MiB result (8 MiB pieces, the copy of
    /// piece i + 1 overlapping the host's reading of piece i) takes about the 6.35 ms median of
    /// the 92 read-backs of `profile-fig7-optimal` (`2026-11-26-h100-2.md`, section 4: 5.9 GB/s
    /// through staging).
    pub staging_read_rate: f64,
    /// The same on one thread, for a piece below [`ModelParams::parallel_copy_min`]. Default:
    /// 2.18 GB/s: the naive mode reads a 36 MiB result back as 16 blocking copies of 2.25 MiB,
    /// in a median 18.07 ms in the `profile-fig7-naive` timeline (37.7 MB / (18.07 ms - 16
    /// DMAs of 2.25 MiB)).
    pub staging_read_rate_small: f64,
    /// The host's rate page-locking a new staging or host buffer (`cuMemHostAlloc`).
    /// Default: 3 GB/s (`2026-11-26-h100.md`, section b: a 36 MiB upload took 14-17 ms when
    /// its 32 MiB staging buffer was first pinned, against 4.1 ms otherwise).
    pub pin_rate: f64,
    /// The host's rate page-locking the caller's pageable memory in place (`cuMemHostRegister`,
    /// [`GpuBackend::register_pageable`](crate::GpuBackend::register_pageable)), its
    /// unregistration included. Default: 8.2 GB/s, measured on the H100
    /// (`2026-11-28-h100-3.md`: memhc-cuda's `register` bench, a 64 MiB buffer registered,
    /// copied 1, 4 and 16 times and unregistered; the fixed part of the least-squares line,
    /// 8.16 ms, printed by `scripts/register-rule.py`).
    pub register_rate: f64,
    /// Host time of a device allocation (`cuMemAlloc`). Default: 20 µs (assumed).
    pub malloc_s: f64,
    /// Host time of a device free (`cuMemFree`). Default: 20 µs (assumed).
    pub free_s: f64,
    /// Whether a device free waits for all work on the device first, as `cudaFree` does.
    /// Default: true.
    pub free_synchronizes: bool,
}

impl Default for ModelParams {
    fn default() -> Self {
        ModelParams::h100()
    }
}

const GB: f64 = 1e9;

/// The environment variable the command-line tools read model settings from
/// ([`ModelParams::from_env`]).
pub const SETTINGS_VAR: &str = "MEMHC_MODEL";

impl ModelParams {
    /// The H100 of the recorded sessions (see the fields for the sources).
    pub fn h100() -> Self {
        let rate = |n: f64, tflops: f64| GemmRate { n, tflops };
        ModelParams {
            device_memory: 81_559 << 20,
            gemm_rates: vec![
                rate(128.0, 16.1),
                rate(192.0, 29.0),
                rate(256.0, 37.3),
                rate(384.0, 46.4),
                rate(8192.0, 51.7),
            ],
            gemm_one_rates: vec![
                rate(512.0, 27.2),
                rate(768.0, 40.9),
                rate(1024.0, 49.5),
                rate(1536.0, 54.6),
                rate(8192.0, 53.1),
            ],
            gemm_call_s: 5e-6,
            device_bandwidth: 2960.0 * GB,
            h2d_bandwidth: 55.0 * GB,
            d2h_bandwidth: 55.0 * GB,
            copy_latency_s: 2e-6,
            h2d_copy_share: 0.910,
            d2h_copy_share: 0.992,
            h2d_duplex_share: 0.805,
            d2h_duplex_share: 0.825,
            launch_latency_s: 4e-6,
            host_call_s: 2e-6,
            parallel_copy_min: crate::pieces::PARALLEL_MIN,
            staging_write_rate: 16.8 * GB,
            staging_write_rate_small: 8.64 * GB,
            staging_read_rate: 5.4 * GB,
            staging_read_rate_small: 2.18 * GB,
            pin_rate: 3.0 * GB,
            register_rate: 8.2 * GB,
            malloc_s: 20e-6,
            free_s: 20e-6,
            free_synchronizes: true,
        }
    }

    /// Checks that every rate is positive and finite, every time finite and not negative, and
    /// the rate table non-empty and sorted by `n`.
    pub fn validate(&self) -> Result<(), BackendError> {
        let bad = |what: &str, v: f64| {
            BackendError::invalid(BackendOp::Alloc, format!("model parameter {what} = {v}"))
        };
        for (what, v) in [
            ("gemm_call_s", self.gemm_call_s),
            ("copy_latency_s", self.copy_latency_s),
            ("launch_latency_s", self.launch_latency_s),
            ("host_call_s", self.host_call_s),
            ("malloc_s", self.malloc_s),
            ("free_s", self.free_s),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(what, v));
            }
        }
        for (what, v) in [
            ("device_bandwidth", self.device_bandwidth),
            ("h2d_bandwidth", self.h2d_bandwidth),
            ("d2h_bandwidth", self.d2h_bandwidth),
            ("staging_write_rate", self.staging_write_rate),
            ("staging_write_rate_small", self.staging_write_rate_small),
            ("staging_read_rate", self.staging_read_rate),
            ("staging_read_rate_small", self.staging_read_rate_small),
            ("pin_rate", self.pin_rate),
            ("register_rate", self.register_rate),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(what, v));
            }
        }
        for (what, v) in [
            ("h2d_copy_share", self.h2d_copy_share),
            ("d2h_copy_share", self.d2h_copy_share),
            ("h2d_duplex_share", self.h2d_duplex_share),
            ("d2h_duplex_share", self.d2h_duplex_share),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 1.0) {
                return Err(bad(what, v));
            }
        }
        if self.gemm_rates.is_empty() {
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "model parameter gemm_rates is empty",
            ));
        }
        for r in self.gemm_rates.iter().chain(&self.gemm_one_rates) {
            if !(r.n.is_finite() && r.n > 0.0 && r.tflops.is_finite() && r.tflops > 0.0) {
                return Err(BackendError::invalid(
                    BackendOp::Alloc,
                    format!("model GEMM rate {} TFLOPS at N = {}", r.tflops, r.n),
                ));
            }
        }
        for (what, table) in [
            ("gemm_rates", &self.gemm_rates),
            ("gemm_one_rates", &self.gemm_one_rates),
        ] {
            if table.windows(2).any(|w| w[0].n >= w[1].n) {
                return Err(BackendError::invalid(
                    BackendOp::Alloc,
                    format!("model parameter {what} is not sorted by N"),
                ));
            }
        }
        Ok(())
    }

    /// [`ModelParams::h100`] with the settings ([`ModelParams::with_settings`]) of the
    /// environment variable [`SETTINGS_VAR`] (`MEMHC_MODEL`), if it is set: how
    /// `memhc-synth --backend model` and `memhc run --backend model` take other parameters.
    pub fn from_env() -> Result<Self, BackendError> {
        match std::env::var(SETTINGS_VAR) {
            Ok(settings) => ModelParams::h100().with_settings(&settings),
            Err(std::env::VarError::NotPresent) => Ok(ModelParams::h100()),
            Err(std::env::VarError::NotUnicode(_)) => Err(BackendError::invalid(
                BackendOp::Alloc,
                format!("{SETTINGS_VAR} is not valid Unicode"),
            )),
        }
    }

    /// These parameters with some changed by `settings`: `name=value` pairs separated by commas,
    /// the names those of the fields (times in seconds, rates in bytes or flops per second,
    /// `free_synchronizes` true or false, `gemm_rates` and `gemm_one_rates` as `N:TFLOPS` pairs
    /// separated by `/`, `gemm_one_rates=` empty for none),
    /// e.g. `h2d_bandwidth=25e9,pin_rate=1e10,gemm_rates=128:16.1/384:46.4`. The result is
    /// checked ([`ModelParams::validate`]); an unknown name or a value that does not parse is an
    /// [`BackendError::InvalidArgument`] naming it. An empty string changes nothing.
    pub fn with_settings(mut self, settings: &str) -> Result<Self, BackendError> {
        let invalid = |what: String| BackendError::invalid(BackendOp::Alloc, what);
        for setting in settings.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, value) = setting.split_once('=').ok_or_else(|| {
                invalid(format!("model setting `{setting}`: expected name=value"))
            })?;
            let (name, value) = (name.trim(), value.trim());
            let number = || {
                value.parse::<f64>().map_err(|_| {
                    invalid(format!("model setting {name}: `{value}` is not a number"))
                })
            };
            match name {
                "device_memory" => {
                    self.device_memory = value.parse().map_err(|_| {
                        invalid(format!(
                            "model setting {name}: `{value}` is not a byte count"
                        ))
                    })?
                }
                "parallel_copy_min" => {
                    self.parallel_copy_min = value.parse().map_err(|_| {
                        invalid(format!(
                            "model setting {name}: `{value}` is not a byte count"
                        ))
                    })?
                }
                "free_synchronizes" => {
                    self.free_synchronizes = value.parse().map_err(|_| {
                        invalid(format!(
                            "model setting {name}: `{value}` is not true or false"
                        ))
                    })?
                }
                "gemm_rates" | "gemm_one_rates" => {
                    let mut rates = Vec::new();
                    for pair in value.split('/').filter(|p| !p.trim().is_empty()) {
                        let parsed = pair.split_once(':').and_then(|(n, t)| {
                            Some(GemmRate {
                                n: n.trim().parse().ok()?,
                                tflops: t.trim().parse().ok()?,
                            })
                        });
                        rates.push(parsed.ok_or_else(|| {
                            invalid(format!("model setting {name}: `{pair}` is not N:TFLOPS"))
                        })?);
                    }
                    if name == "gemm_rates" {
                        self.gemm_rates = rates;
                    } else {
                        self.gemm_one_rates = rates;
                    }
                }
                "gemm_call_s" => self.gemm_call_s = number()?,
                "device_bandwidth" => self.device_bandwidth = number()?,
                "h2d_bandwidth" => self.h2d_bandwidth = number()?,
                "d2h_bandwidth" => self.d2h_bandwidth = number()?,
                "copy_latency_s" => self.copy_latency_s = number()?,
                "h2d_copy_share" => self.h2d_copy_share = number()?,
                "d2h_copy_share" => self.d2h_copy_share = number()?,
                "h2d_duplex_share" => self.h2d_duplex_share = number()?,
                "d2h_duplex_share" => self.d2h_duplex_share = number()?,
                "launch_latency_s" => self.launch_latency_s = number()?,
                "host_call_s" => self.host_call_s = number()?,
                "staging_write_rate" => self.staging_write_rate = number()?,
                "staging_write_rate_small" => self.staging_write_rate_small = number()?,
                "staging_read_rate" => self.staging_read_rate = number()?,
                "staging_read_rate_small" => self.staging_read_rate_small = number()?,
                "pin_rate" => self.pin_rate = number()?,
                "register_rate" => self.register_rate = number()?,
                "malloc_s" => self.malloc_s = number()?,
                "free_s" => self.free_s = number()?,
                other => return Err(invalid(format!("unknown model setting `{other}`"))),
            }
        }
        self.validate()?;
        Ok(self)
    }

    /// Host time of a staging copy of `bytes`, filling (`write`) or emptying a staging buffer.
    pub fn staging_s(&self, bytes: usize, write: bool) -> f64 {
        let parallel = bytes >= self.parallel_copy_min;
        let rate = match (write, parallel) {
            (true, true) => self.staging_write_rate,
            (true, false) => self.staging_write_rate_small,
            (false, true) => self.staging_read_rate,
            (false, false) => self.staging_read_rate_small,
        };
        bytes as f64 / rate
    }

    /// Host time of registering `bytes` of pageable memory: one driver call plus the bytes at
    /// [`ModelParams::register_rate`].
    pub fn register_s(&self, bytes: usize) -> f64 {
        self.host_call_s + bytes as f64 / self.register_rate
    }

    /// The fewest copies of a pageable buffer of `bytes` for which registering it once
    /// ([`ModelParams::register_s`]) and copying it in one DMA each time takes less modelled
    /// time than staging every copy: a staged copy takes `max(staging, DMA)` (the pieces'
    /// staging overlaps their DMAs), a registered one the DMA, so registration pays once the
    /// copies' savings exceed it. The break-even behind [`RegisterRule`](crate::RegisterRule)'s
    /// default: 4 at the H100 defaults from 8 MiB on (8.2 GB/s registration against staging at
    /// 16.8 GB/s, a copy at 50 GB/s: the bus's 55 at [`ModelParams::h2d_copy_share`]). `usize::MAX` if staging is never slower than the DMA.
    pub fn register_break_even(&self, bytes: usize) -> usize {
        let dma = self.copy_latency_s + bytes as f64 / (self.h2d_bandwidth * self.h2d_copy_share);
        let saving = self.staging_s(bytes, true).max(dma) - dma;
        if saving <= 0.0 {
            return usize::MAX;
        }
        let copies = (self.register_s(bytes) / saving).floor() + 1.0;
        if copies >= usize::MAX as f64 {
            usize::MAX
        } else {
            copies as usize
        }
    }

    /// The GEMM rate, in flops per second, of batched products of `m x n x k`
    /// ([`ModelParams::gemm_rates`]).
    pub fn gemm_rate(&self, m: usize, n: usize, k: usize) -> f64 {
        Self::rate_in(&self.gemm_rates, m, n, k)
    }

    /// The GEMM rate, in flops per second, of a call of `count` products of `m x n x k`:
    /// [`ModelParams::gemm_one_rates`] for one product (if that table is not empty), else
    /// [`ModelParams::gemm_rate`].
    pub fn gemm_call_rate(&self, m: usize, n: usize, k: usize, count: usize) -> f64 {
        match count == 1 && !self.gemm_one_rates.is_empty() {
            true => Self::rate_in(&self.gemm_one_rates, m, n, k),
            false => self.gemm_rate(m, n, k),
        }
    }

    fn rate_in(table: &[GemmRate], m: usize, n: usize, k: usize) -> f64 {
        let size = (m as f64 * n as f64 * k as f64).cbrt();
        let tflops = match (table.first(), table.last()) {
            (Some(first), _) if size <= first.n => first.tflops * size / first.n,
            (_, Some(last)) if size >= last.n => last.tflops,
            _ => table.windows(2).find(|w| size <= w[1].n).map_or(0.0, |w| {
                let t = (size - w[0].n) / (w[1].n - w[0].n);
                w[0].tflops + t * (w[1].tflops - w[0].tflops)
            }),
        };
        tflops * 1e12
    }

    /// Device time of a BLAS call of `count` products of `m x n x k`: the call's fixed time
    /// plus its flops (`8 m n k` each) at the table's rate.
    pub fn gemm_s(&self, m: usize, n: usize, k: usize, count: usize) -> f64 {
        let flops = 8.0 * m as f64 * n as f64 * k as f64 * count as f64;
        match flops {
            0.0 => self.gemm_call_s,
            f => self.gemm_call_s + f / self.gemm_call_rate(m, n, k, count),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn the_rate_table_is_interpolated_in_n() {
        let p = ModelParams::h100();
        assert!(close(p.gemm_rate(384, 384, 384), 46.4e12));
        assert!(close(p.gemm_rate(128, 128, 128), 16.1e12));
        // Half way between 128 and 192.
        assert!(close(p.gemm_rate(160, 160, 160), (16.1e12 + 29.0e12) / 2.0));
        assert!(close(p.gemm_rate(64, 64, 64), 16.1e12 / 2.0));
        assert!(close(p.gemm_rate(20000, 20000, 20000), 51.7e12));
        // A GEMM of 128 x 128 x 8192 counts as N = 512 (cube root of the product).
        let r = p.gemm_rate(128, 128, 8192);
        let t = (512.0 - 384.0) / (8192.0 - 384.0);
        assert!(close(r, (46.4 + t * (51.7 - 46.4)) * 1e12));
    }

    #[test]
    fn one_product_per_call_runs_at_the_one_product_rates() {
        let p = ModelParams::h100();
        // A tiled meson contraction at N = 384: one product of order 1536.
        assert!(close(p.gemm_call_rate(1536, 1536, 1536, 1), 54.6e12));
        assert!(close(p.gemm_call_rate(768, 768, 768, 1), 40.9e12));
        // Batched calls keep the batched table.
        assert!(close(
            p.gemm_call_rate(384, 384, 384, 64),
            p.gemm_rate(384, 384, 384)
        ));
        let flops = 8.0 * 1536f64.powi(3);
        assert!(close(p.gemm_s(1536, 1536, 1536, 1), 5e-6 + flops / 54.6e12));
        let none = p.with_settings("gemm_one_rates=").unwrap();
        assert!(none.gemm_one_rates.is_empty());
        assert!(close(
            none.gemm_call_rate(1536, 1536, 1536, 1),
            none.gemm_rate(1536, 1536, 1536)
        ));
        assert!(
            ModelParams::h100()
                .with_settings("h2d_copy_share=1.5")
                .is_err()
        );
    }

    #[test]
    fn a_gemm_takes_its_call_time_plus_flops_at_the_rate() {
        let p = ModelParams::h100();
        let flops = 8.0 * 384f64.powi(3) * 16.0;
        assert!(close(p.gemm_s(384, 384, 384, 16), 5e-6 + flops / 46.4e12));
    }

    #[test]
    fn small_staging_copies_run_at_the_one_thread_rates() {
        let p = ModelParams::h100();
        assert!(close(p.staging_s(8 << 20, true), (8 << 20) as f64 / 16.8e9));
        assert!(close(p.staging_s(2 << 20, true), (2 << 20) as f64 / 8.64e9));
        assert!(close(p.staging_s(4 << 20, false), (4 << 20) as f64 / 5.4e9));
        assert!(close(
            p.staging_s((4 << 20) - 1, false),
            ((4 << 20) - 1) as f64 / 2.18e9
        ));
    }

    #[test]
    fn settings_change_the_parameters_they_name() {
        let p = ModelParams::h100()
            .with_settings(
                "h2d_bandwidth=25e9, pin_rate=1e10,free_synchronizes=false,gemm_rates=100:10/200:20",
            )
            .unwrap();
        assert_eq!(p.h2d_bandwidth, 25e9);
        assert_eq!(p.pin_rate, 1e10);
        assert!(!p.free_synchronizes);
        assert!(close(p.gemm_rate(150, 150, 150), 15e12));
        assert_eq!(p.d2h_bandwidth, 55e9, "the others stay");
        assert_eq!(
            ModelParams::h100().with_settings("").unwrap(),
            ModelParams::h100()
        );
        for bad in [
            "h2d_bandwidth",
            "h2d_bandwidth=fast",
            "warp_speed=9",
            "gemm_rates=128",
            "pin_rate=0",
            "free_synchronizes=maybe",
        ] {
            let e = ModelParams::h100()
                .with_settings(bad)
                .unwrap_err()
                .to_string();
            assert!(!e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn registration_pays_from_four_copies_at_the_h100_defaults() {
        let p = ModelParams::h100();
        for bytes in [8 << 20, 36 << 20, 600 << 20] {
            let n = p.register_break_even(bytes);
            assert_eq!(n, 4, "{bytes} bytes");
            let dma = p.copy_latency_s + bytes as f64 / (p.h2d_bandwidth * p.h2d_copy_share);
            let saving = p.staging_s(bytes, true) - dma;
            assert!(n as f64 * saving > p.register_s(bytes));
            assert!((n - 1) as f64 * saving <= p.register_s(bytes));
        }
        let rule = crate::RegisterRule::default();
        assert_eq!(rule.min_copies, p.register_break_even(rule.min_bytes));
        let fast = p.clone().with_settings("register_rate=100e9").unwrap();
        assert_eq!(fast.register_break_even(36 << 20), 1);
        let slow_bus = p.with_settings("h2d_bandwidth=1e9").unwrap();
        assert_eq!(slow_bus.register_break_even(36 << 20), usize::MAX);
    }

    #[test]
    fn invalid_parameters_are_refused() {
        assert!(ModelParams::h100().validate().is_ok());
        let mut p = ModelParams::h100();
        p.h2d_bandwidth = 0.0;
        assert!(p.validate().is_err());
        let mut p = ModelParams::h100();
        p.gemm_rates.reverse();
        assert!(p.validate().is_err());
        let mut p = ModelParams::h100();
        p.host_call_s = f64::NAN;
        assert!(p.validate().is_err());
    }
}
