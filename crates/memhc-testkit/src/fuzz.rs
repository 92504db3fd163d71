//! What the seeded fuzz drivers of issue 31 share: a splitmix64 generator, the structure-aware
//! mutation of JSON text, and the case budget read from the environment.
//!
//! Every fuzz target of the workspace is an ordinary `#[test]` on stable Rust. Case `n` runs
//! with the generator seeded by `n` (plus a per-target offset), so a failure names the case
//! that reproduces it. How many cases run:
//!
//! * by default, the count each driver passes to [`cases`] (small: CI spends seconds);
//! * `MEMHC_FUZZ_CASES=N`: `N` cases;
//! * `MEMHC_FUZZ_SECONDS=S`: cases `0, 1, 2, ...` until `S` seconds have passed (with
//!   `MEMHC_FUZZ_CASES` too, whichever ends first). This is how the long runs of
//!   `docs/results/2026-11-27-fuzz.md` were made.
//!
//! When a driver's [`Cases`] is dropped it prints one line on stderr,
//! `memhc-fuzz <target>: <cases> cases in <seconds> s` (visible with `--nocapture`), which
//! the record's script reads.
//!
//! This module needs nothing beyond `std`, so the crate without features (over
//! `memhc-backend` alone) has it too.

use std::time::{Duration, Instant};

/// splitmix64 (Steele, Lea and Flood; Vigna's reference `splitmix64.c`): a tiny, seedable,
/// well-mixed generator with no dependency. Deterministic on every platform.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// The generator whose state starts at `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `0..n` (the next value modulo `n`); `0` when `n` is `0`.
    pub fn below_u64(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// A value in `0..n`, as an index; `0` when `n` is `0`. The same draw as
    /// [`below_u64`](Self::below_u64).
    pub fn below(&mut self, n: usize) -> usize {
        // `usize` is at most 64 bits on every target Rust supports, and the value is below `n`.
        self.below_u64(n as u64) as usize
    }

    /// One element of `from`, or `None` when it is empty.
    pub fn pick<T: Copy>(&mut self, from: &[T]) -> Option<T> {
        if from.is_empty() {
            None
        } else {
            Some(from[self.below(from.len())])
        }
    }
}

/// One structure-aware mutation of JSON text (the mutation of the correlator, workload and
/// campaign file fuzzers):
///
/// * half the time, a number (a maximal run of ASCII digits) is replaced by one of `edges`
///   (values that break size arithmetic, as JSON text); nothing changes when the text has no
///   digit;
/// * otherwise one byte is replaced by a random one, or a range of fewer than `span` bytes is
///   cut, or repeated at a random place.
///
/// Empty text becomes `{}`.
pub fn mutate_json(r: &mut Rng, text: &mut Vec<u8>, edges: &[&str], span: usize) {
    if text.is_empty() {
        text.extend_from_slice(b"{}");
        return;
    }
    match r.below(6) {
        0..=2 => {
            let starts: Vec<usize> = (0..text.len())
                .filter(|&i| text[i].is_ascii_digit() && (i == 0 || !text[i - 1].is_ascii_digit()))
                .collect();
            let Some(start) = r.pick(&starts) else {
                return;
            };
            let end = (start..text.len())
                .find(|&i| !text[i].is_ascii_digit())
                .unwrap_or(text.len());
            let Some(edge) = r.pick(edges) else {
                return;
            };
            text.splice(start..end, edge.bytes());
        }
        3 => {
            let i = r.below(text.len());
            text[i] = (r.next_u64() & 0xff) as u8;
        }
        4 => {
            let a = r.below(text.len());
            let b = (a + r.below(span)).min(text.len());
            text.drain(a..b);
        }
        _ => {
            let a = r.below(text.len());
            let b = (a + r.below(span)).min(text.len());
            let piece: Vec<u8> = text[a..b].to_vec();
            let at = r.below(text.len());
            text.splice(at..at, piece);
        }
    }
}

/// The case numbers a driver runs, `0, 1, 2, ...`, up to a count, a time limit or both; see
/// the [module documentation](self). Prints its summary line when dropped.
#[derive(Debug)]
pub struct Cases {
    target: String,
    next: u64,
    count: Option<u64>,
    deadline: Option<Instant>,
    start: Instant,
}

impl Cases {
    /// Cases `0..count` (all of them when `None`), stopping early once `seconds` have passed
    /// (never when `None`). With neither, the iterator never ends.
    pub fn new(target: &str, count: Option<u64>, seconds: Option<f64>) -> Self {
        let start = Instant::now();
        let deadline = seconds.map(|s| {
            let s = if s.is_finite() && s > 0.0 { s } else { 0.0 };
            // Far enough for any run; `from_secs_f64` panics only on values past ~5.8e11 years.
            start + Duration::from_secs_f64(s.min(1e9))
        });
        Cases {
            target: target.to_owned(),
            next: 0,
            count,
            deadline,
            start,
        }
    }

    /// This budget with its count divided by `k` (a driver whose cases cost `k` times more);
    /// the time limit is unchanged. `k` of `0` is taken as `1`.
    pub fn divided_by(mut self, k: u64) -> Self {
        self.count = self.count.map(|c| c / k.max(1));
        self
    }

    /// How many cases have been handed out so far.
    pub fn run(&self) -> u64 {
        self.next
    }
}

impl Iterator for Cases {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        if self.count.is_some_and(|c| self.next >= c) {
            return None;
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return None;
        }
        let case = self.next;
        self.next += 1;
        Some(case)
    }
}

impl Drop for Cases {
    fn drop(&mut self) {
        eprintln!(
            "memhc-fuzz {}: {} cases in {:.1} s",
            self.target,
            self.next,
            self.start.elapsed().as_secs_f64()
        );
    }
}

/// The cases of fuzz target `target` as the environment asks: `MEMHC_FUZZ_CASES` and
/// `MEMHC_FUZZ_SECONDS` (see the [module documentation](self)), `default` cases when neither
/// is set.
///
/// # Panics
///
/// When either variable is set but is not a number (a mistyped long run should not quietly
/// run the default).
pub fn cases(target: &str, default: u64) -> Cases {
    fn var<T: std::str::FromStr>(name: &str) -> Option<T> {
        let v = std::env::var(name).ok()?;
        match v.trim().parse() {
            Ok(x) => Some(x),
            Err(_) => panic!("{name}={v:?} is not a number"),
        }
    }
    let count: Option<u64> = var("MEMHC_FUZZ_CASES");
    let seconds: Option<f64> = var("MEMHC_FUZZ_SECONDS");
    let count = match (count, seconds) {
        (None, None) => Some(default),
        (c, _) => c,
    };
    Cases::new(target, count, seconds)
}

/// A `.npy` header (format 1.0) for data of `descr` (`<c16`: complex128) and `shape`, in C
/// order or Fortran order, padded as the format wants: the bytes before the values.
pub fn npy_header(shape: &[u64], descr: &str, fortran: bool) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_npy_header_is_padded_to_a_multiple_of_64_bytes_and_names_its_shape() {
        let h = npy_header(&[16, 3, 3], "<c16", false);
        // 10 bytes of magic, version and length, a 64-byte dictionary, padding and a newline.
        assert_eq!(h.len(), 128);
        assert_eq!(&h[..8], b"\x93NUMPY\x01\x00");
        assert_eq!(u16::from_le_bytes([h[8], h[9]]), 118);
        let dict = std::str::from_utf8(&h[10..]).unwrap();
        assert!(
            dict.starts_with("{'descr': '<c16', 'fortran_order': False, 'shape': (16, 3, 3), }")
        );
        assert!(dict.ends_with(" \n"));
        let one = npy_header(&[5], "<f8", true);
        assert!(
            std::str::from_utf8(&one[10..])
                .unwrap()
                .contains("'fortran_order': True, 'shape': (5,)")
        );
    }

    #[test]
    fn the_generator_is_the_reference_splitmix64() {
        // The first outputs of Vigna's splitmix64.c from state 0.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn below_and_pick_stay_in_range_and_agree() {
        let mut a = Rng::new(5);
        let mut b = Rng::new(5);
        for n in 1..200usize {
            let x = a.below(n);
            assert!(x < n);
            assert_eq!(x as u64, b.below_u64(n as u64));
        }
        assert_eq!(a.below(0), 0);
        assert_eq!(a.below_u64(0), 0);
        assert_eq!(a.pick::<u8>(&[]), None);
        assert_eq!(a.pick(&[7]), Some(7));
    }

    #[test]
    fn mutation_of_empty_text_gives_an_empty_object() {
        let mut text = Vec::new();
        mutate_json(&mut Rng::new(1), &mut text, &["0"], 64);
        assert_eq!(text, b"{}");
    }

    #[test]
    fn mutations_replace_a_number_flip_a_byte_or_move_a_range() {
        // With a span of 0 the cut and repeat change nothing, so every outcome is the number
        // replaced, the text unchanged, or one byte changed.
        let mut replaced = 0;
        for seed in 0..200 {
            let mut text = b"[5]".to_vec();
            mutate_json(&mut Rng::new(seed), &mut text, &["42"], 0);
            if text == b"[42]" {
                replaced += 1;
            } else {
                assert_eq!(text.len(), 3, "{:?}", String::from_utf8_lossy(&text));
                let changed = text.iter().zip(b"[5]").filter(|(x, y)| x != y).count();
                assert!(changed <= 1, "{:?}", String::from_utf8_lossy(&text));
            }
        }
        // Half the draws pick the replacement.
        assert!((70..=130).contains(&replaced), "{replaced}");
        // Text without a digit is left alone by the replacement.
        let mut r = Rng::new(0);
        while r.clone().below(6) > 2 {
            r.next_u64();
        }
        let mut text = b"{}".to_vec();
        mutate_json(&mut r, &mut text, &["42"], 0);
        assert_eq!(text, b"{}");
    }

    #[test]
    fn cuts_and_repeats_stay_within_the_span() {
        for seed in 0..200 {
            let mut text = b"abcdefghijklmnopqrstuvwxyz".to_vec();
            mutate_json(&mut Rng::new(seed), &mut text, &["1"], 4);
            let d = text.len().abs_diff(26);
            assert!(d < 4, "{:?}", String::from_utf8_lossy(&text));
        }
    }

    #[test]
    fn cases_end_at_the_count_or_the_time() {
        assert_eq!(
            Cases::new("t", Some(3), None).collect::<Vec<_>>(),
            [0, 1, 2]
        );
        assert_eq!(Cases::new("t", Some(3), Some(3600.0)).count(), 3);
        assert_eq!(Cases::new("t", Some(10), None).divided_by(4).count(), 2);
        assert_eq!(Cases::new("t", Some(10), None).divided_by(0).count(), 10);
        assert_eq!(Cases::new("t", None, Some(0.0)).count(), 0);
        assert_eq!(Cases::new("t", None, Some(-1.0)).count(), 0);
        // A time limit alone keeps going until it passes.
        let mut c = Cases::new("t", None, Some(0.05));
        let n = c.by_ref().count();
        assert!(n > 0);
        assert_eq!(c.run(), n as u64);
        assert!(c.start.elapsed() >= Duration::from_millis(50));
    }
}
