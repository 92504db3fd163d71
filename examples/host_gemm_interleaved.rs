//! The host backend's batched GEMM against bare faer, timed interleaved: 64 products of
//! n x n (n = 32, 64, 128), three lines measured one after another in every repetition, and
//! the median of each line reported with the ratios of the same run. On a shared machine,
//! where the load changes from one second to the next, this is fairer than criterion's one line
//! after another (`benches/host_gemm.rs` measures the same three lines).
//!
//! * `faer-items-parallel`: the 64 products spread over rayon's threads, each sequential;
//! * `faer-items-in-turn`: one product after another, each on all of rayon's threads;
//! * `host-backend`: the 64 products in one `Backend::gemm_batched` call on a host stream,
//!   timed to `stream_synchronize`.
//!
//! `cargo run --release --example host_gemm_interleaved [REPETITIONS]` (default 30).

#![allow(missing_docs, clippy::expect_used)]

use std::time::Instant;

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use memhc::backend::gemm::{DeviceRef, GemmItem, GemmShape};
use memhc::backend::{Backend, as_bytes};
use memhc::conformance::random_elements;
use memhc_host::host::HostBackend;
use num_complex::Complex64;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// One column-major n x n product `out = a b` with faer.
fn product(out: &mut [Complex64], a: &[Complex64], b: &[Complex64], n: usize, par: Par) {
    matmul(
        MatMut::from_column_major_slice_mut(out, n, n),
        Accum::Replace,
        MatRef::from_column_major_slice(a, n, n),
        MatRef::from_column_major_slice(b, n, n),
        Complex64::new(1.0, 0.0),
        par,
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(30)
        .max(1);
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let batch = 64;
    println!(
        "64 products of n x n, GFLOPS (median of {reps} interleaved repetitions), {} rayon threads",
        rayon::current_num_threads()
    );
    for n in [32usize, 64, 128] {
        let elems = n * n;
        let a = random_elements(&mut rng, elems * batch);
        let b = random_elements(&mut rng, elems * batch);
        let mut out = vec![Complex64::new(0.0, 0.0); elems * batch];
        let backend = HostBackend::new(3 * elems * batch * 16 + (1 << 20));
        let stream = backend.create_stream().expect("stream");
        let bytes = elems * batch * 16;
        let alloc = || backend.alloc(bytes).expect("alloc");
        let (ab, bb, cb) = (alloc(), alloc(), alloc());
        backend
            .copy_h2d(&stream, as_bytes(&a), &ab, 0)
            .expect("copy");
        backend
            .copy_h2d(&stream, as_bytes(&b), &bb, 0)
            .expect("copy");
        let items: Vec<_> = (0..batch)
            .map(|i| GemmItem {
                a: DeviceRef::new(&ab, i * elems),
                b: DeviceRef::new(&bb, i * elems),
                c: DeviceRef::new(&cb, i * elems),
            })
            .collect();
        let shape = GemmShape::dense(n, n, n);
        // Batches per timing, so that one timing lasts a few milliseconds.
        let inner = (1 << 22) / (n * n * n) + 1;
        let mut times = [Vec::new(), Vec::new(), Vec::new()];
        for _ in 0..reps {
            for (line, t) in times.iter_mut().enumerate() {
                let start = Instant::now();
                for _ in 0..inner {
                    match line {
                        0 => out
                            .par_chunks_mut(elems)
                            .zip(a.par_chunks(elems).zip(b.par_chunks(elems)))
                            .for_each(|(o, (x, y))| product(o, x, y, n, Par::Seq)),
                        1 => {
                            let pairs = a.chunks(elems).zip(b.chunks(elems));
                            for (o, (x, y)) in out.chunks_mut(elems).zip(pairs) {
                                product(o, x, y, n, Par::rayon(0));
                            }
                        }
                        _ => {
                            backend.gemm_batched(&stream, &shape, &items).expect("gemm");
                            backend.stream_synchronize(&stream).expect("sync");
                        }
                    }
                }
                t.push(start.elapsed().as_secs_f64() / inner as f64);
            }
        }
        let flops = 8.0 * (n as f64).powi(3) * batch as f64;
        let [par, turn, host] = times.map(|t| flops / median(t) / 1e9);
        println!(
            "n={n:<4} faer-items-parallel {par:6.1}  faer-items-in-turn {turn:6.1}  host-backend \
             {host:6.1}   host/parallel {:.2}  host/in-turn {:.2}",
            host / par,
            host / turn
        );
    }
}
