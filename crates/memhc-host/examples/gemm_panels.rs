//! Issue 30 at N = 128 on the host: why one complex product of order `4N` on faer's threads can
//! be slower than the 64 products of order `N`, and what a split into panels does.
//!
//! For each N given (default 32 64 128), per round, every variant of the same arithmetic
//! (`8 (4N)³` flops) runs `REPS` times back to back, the variants interleaved round by round
//! (their order rotates each round); each repetition's wall time is printed as one line
//! `round N variant rep ns` on stdout, and after the repetitions of a variant one line
//! `cpu round N variant wall_ns cpu_ticks`: the process's user and system time over those
//! repetitions, in clock ticks (`/proc/self/stat`, Linux; -1 elsewhere), all threads together,
//! so that the CPU a variant burns can be set against its wall time.
//! `scripts/one-gemm-layout-panels-table.py` reads that output.
//!
//! Variants (a column-major view of the row-major engine's `zᵀ = yᵀ xᵀ`, as the host backend
//! sees it, leading dimension `4N`):
//!
//! * `64-products`: the 64 `N x N` products as 4 accumulating sets of 16, each set spread over
//!   rayon's threads, each product sequential (the bench's `faer-64-products`);
//! * `one-par`: one product of order `4N`, `Par::rayon(0)` (faer splits it over its threads);
//! * `one-seq`: the same product, `Par::Seq`, on one thread;
//! * `cols-P`: the product split into `P` panels of columns of the output (each reads all of
//!   the left factor), the panels spread over rayon's threads, each panel `Par::Seq`;
//! * `rows-P`: the same split by rows of the output.
//!
//! Usage: `cargo run --release -p memhc-host --example gemm_panels -- ROUNDS REPS [N...]`

#![allow(missing_docs, clippy::expect_used, clippy::unwrap_used)]

use std::time::Instant;

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};
use num_complex::Complex64;
use rayon::prelude::*;

const SPINS: usize = 16;

fn random(len: usize, seed: u64) -> Vec<Complex64> {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..len)
        .map(|_| Complex64::new(rng.random_range(-0.5..0.5), rng.random_range(-0.5..0.5)))
        .collect()
}

fn sixty_four(out: &mut [Complex64], a: &[Complex64], b: &[Complex64], n: usize) {
    let e = n * n;
    let per_task = SPINS.div_ceil(rayon::current_num_threads());
    for layer in 0..4 {
        out.par_chunks_mut(e)
            .enumerate()
            .with_min_len(per_task)
            .for_each(|(s, c)| {
                let (row, col) = (s / 4, s % 4);
                let x = &a[(4 * row + layer) * e..][..e];
                let y = &b[(4 * layer + col) * e..][..e];
                matmul(
                    MatMut::from_column_major_slice_mut(c, n, n),
                    if layer > 0 {
                        Accum::Add
                    } else {
                        Accum::Replace
                    },
                    MatRef::from_column_major_slice(y, n, n),
                    MatRef::from_column_major_slice(x, n, n),
                    Complex64::new(1.0, 0.0),
                    Par::Seq,
                );
            });
    }
}

#[derive(Clone, Copy, Debug)]
enum Variant {
    SixtyFour,
    OnePar,
    OneSeq,
    Cols(usize),
    Rows(usize),
}

impl Variant {
    fn name(self) -> String {
        match self {
            Variant::SixtyFour => "64-products".into(),
            Variant::OnePar => "one-par".into(),
            Variant::OneSeq => "one-seq".into(),
            Variant::Cols(p) => format!("cols-{p}"),
            Variant::Rows(p) => format!("rows-{p}"),
        }
    }
}

fn one(z: &mut [Complex64], x: &[Complex64], y: &[Complex64], l: usize, v: Variant) {
    let one = Complex64::new(1.0, 0.0);
    let dst = MatMut::from_column_major_slice_mut(z, l, l);
    let lhs = MatRef::from_column_major_slice(y, l, l);
    let rhs = MatRef::from_column_major_slice(x, l, l);
    match v {
        Variant::SixtyFour => unreachable!(),
        Variant::OnePar => matmul(dst, Accum::Replace, lhs, rhs, one, Par::rayon(0)),
        Variant::OneSeq => matmul(dst, Accum::Replace, lhs, rhs, one, Par::Seq),
        Variant::Cols(p) => dst
            .par_col_partition_mut(p)
            .zip(rhs.par_col_partition(p))
            .for_each(|(d, r)| matmul(d, Accum::Replace, lhs, r, one, Par::Seq)),
        Variant::Rows(p) => dst
            .par_row_partition_mut(p)
            .zip(lhs.par_row_partition(p))
            .for_each(|(d, l)| matmul(d, Accum::Replace, l, rhs, one, Par::Seq)),
    }
}

/// The process's user plus system time in clock ticks, all threads (`/proc/self/stat`), or -1.
fn cpu_ticks() -> i64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return -1;
    };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return -1;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    match (fields.get(11), fields.get(12)) {
        (Some(u), Some(s)) => u.parse::<i64>().unwrap_or(-1) + s.parse::<i64>().unwrap_or(-1),
        _ => -1,
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number"))
        .collect();
    let (rounds, reps) = (
        args.first().copied().unwrap_or(6),
        args.get(1).copied().unwrap_or(10),
    );
    let ns = if args.len() > 2 {
        args[2..].to_vec()
    } else {
        vec![32, 64, 128]
    };
    let variants = [
        Variant::SixtyFour,
        Variant::OnePar,
        Variant::OneSeq,
        Variant::Cols(2),
        Variant::Cols(4),
        Variant::Cols(8),
        Variant::Rows(2),
        Variant::Rows(4),
        Variant::Rows(8),
        Variant::Rows(16),
    ];
    eprintln!("threads {}", rayon::current_num_threads());
    for &n in &ns {
        let l = 4 * n;
        let (x, y) = (random(l * l, 1), random(l * l, 2));
        let mut z = vec![Complex64::new(0.0, 0.0); l * l];
        let mut want = vec![Complex64::new(0.0, 0.0); l * l];
        one(&mut want, &x, &y, l, Variant::OneSeq);
        for v in variants.iter().skip(1) {
            one(&mut z, &x, &y, l, *v);
            let err = z
                .iter()
                .zip(&want)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            assert!(err < 1e-10, "{v:?}: {err}");
        }
        let mut packed = vec![Complex64::new(0.0, 0.0); l * l];
        for round in 0..rounds {
            for i in 0..variants.len() {
                let v = variants[(i + round) % variants.len()];
                let (start, cpu) = (Instant::now(), cpu_ticks());
                for rep in 0..reps {
                    let t = Instant::now();
                    match v {
                        Variant::SixtyFour => sixty_four(&mut packed, &x, &y, n),
                        _ => one(&mut z, &x, &y, l, v),
                    }
                    let ns_ = t.elapsed().as_nanos();
                    println!("{} {} {} {} {}", round + 1, n, v.name(), rep, ns_);
                }
                let (wall, cpu) = (start.elapsed().as_nanos(), cpu_ticks() - cpu);
                println!("cpu {} {} {} {} {}", round + 1, n, v.name(), wall, cpu);
            }
        }
    }
}
