//! Large host copies split over threads.
//!
//! A copy between pageable memory and a page-locked staging buffer is a `memcpy` on the host,
//! and one core moves about 9 GB/s: on an H100 (2026-11-26, `docs/results/2026-11-26-h100/`)
//! that held a 36 MiB upload to 4.1 ms, where the DMA engine needs 0.7 ms. [`in_pieces`] cuts
//! such a copy into disjoint ranges and runs them on scoped threads, so that the host side
//! keeps up with the bus. Small copies stay on the calling thread: below [`PARALLEL_MIN`],
//! starting threads costs more than it saves.

use std::num::NonZeroUsize;
use std::sync::OnceLock;

/// Copies shorter than this run on the calling thread (bytes).
pub const PARALLEL_MIN: usize = 4 << 20;

/// No piece of a split copy is shorter than this (bytes), nor does a copy use more than
/// [`MAX_THREADS`] threads.
pub const PIECE_MIN: usize = 2 << 20;

/// The most threads one copy uses.
pub const MAX_THREADS: usize = 8;

/// How many threads a copy of `len` bytes uses: 1 below [`PARALLEL_MIN`], else one per
/// [`PIECE_MIN`] bytes, at most [`MAX_THREADS`] and at most the cores this process may use.
pub fn threads_for(len: usize) -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    let cores =
        *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get));
    if len < PARALLEL_MIN {
        1
    } else {
        (len / PIECE_MIN).clamp(1, MAX_THREADS.min(cores))
    }
}

/// Calls `f(offset, len)` once for each piece of `[0, total)`: the pieces are disjoint, in
/// order, cover every byte once, and are 4 KiB-aligned except the last. With more than one
/// thread ([`threads_for`]), the pieces run on scoped threads (the first on the caller's) and
/// this returns when all are done.
pub fn in_pieces(total: usize, f: impl Fn(usize, usize) + Sync) {
    let threads = threads_for(total);
    if threads <= 1 {
        if total > 0 {
            f(0, total);
        }
        return;
    }
    const ALIGN: usize = 4096;
    let piece = total.div_ceil(threads).div_ceil(ALIGN) * ALIGN;
    let f = &f;
    std::thread::scope(|s| {
        let mut start = piece;
        while start < total {
            let len = piece.min(total - start);
            s.spawn(move || f(start, len));
            start += piece;
        }
        f(0, piece.min(total));
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn pieces(total: usize) -> Vec<(usize, usize)> {
        let seen = Mutex::new(Vec::new());
        in_pieces(total, |o, n| seen.lock().unwrap().push((o, n)));
        let mut v = seen.into_inner().unwrap();
        v.sort_unstable();
        v
    }

    #[test]
    fn pieces_cover_every_byte_once() {
        for total in [
            0,
            1,
            4095,
            PARALLEL_MIN - 1,
            PARALLEL_MIN,
            PARALLEL_MIN + 1,
            36 << 20,
            (64 << 20) + 12_345,
        ] {
            let v = pieces(total);
            let mut next = 0;
            for &(o, n) in &v {
                assert_eq!(o, next, "total {total}: gap or overlap at {o}");
                assert!(n > 0, "total {total}: an empty piece");
                next = o + n;
            }
            assert_eq!(next, total, "total {total}: pieces end at {next}");
            assert!(v.len() <= threads_for(total).max(1), "total {total}: {v:?}");
            if total < PARALLEL_MIN {
                assert!(v.len() <= 1, "a small copy is one piece: {v:?}");
            }
            for &(o, _) in &v {
                assert_eq!(o % 4096, 0, "piece starts are page-aligned");
            }
        }
    }

    #[test]
    fn thread_counts_grow_with_the_copy_and_stop_at_the_cap() {
        assert_eq!(threads_for(0), 1);
        assert_eq!(threads_for(PARALLEL_MIN - 1), 1);
        let big = threads_for(1 << 30);
        assert!((1..=MAX_THREADS).contains(&big));
        assert!(threads_for(PARALLEL_MIN) <= big);
    }

    #[test]
    fn a_split_copy_copies_exactly() {
        let src: Vec<u8> = (0..(9 << 20) + 77)
            .map(|i: u32| (i * 31 + 7) as u8)
            .collect();
        let out = Mutex::new(vec![0u8; src.len()]);
        in_pieces(src.len(), |o, n| {
            let piece = src[o..o + n].to_vec();
            out.lock().unwrap()[o..o + n].copy_from_slice(&piece);
        });
        assert!(out.into_inner().unwrap() == src);
    }
}
