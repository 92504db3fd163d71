//! Host vectors kept for reuse.
//!
//! Every value the runtime copies back from the device lands in a host vector, and every
//! object it releases frees one. For large objects both are expensive on the host, not on the
//! device: a fresh vector is mapped by the kernel a page at a time as the copy first touches
//! it (on the H100 host of 2026-11-26, faulting in a 37.7 MB node cost as much as copying it
//! several times over), and freeing it unmaps every page again (about 1 ms per node there).
//! The pool keeps the host vectors of released objects, by length, up to a byte cap, and
//! hands them to the next copy back of the same length, whose pages are then already mapped.
//!
//! A pooled vector still holds the values of the object it came from: it is only handed to a
//! copy that overwrites all of it (a read back, a write-back landing, a managed read), and a
//! copy that fails drops it. Vectors below a floor are left to the allocator, which serves
//! small ones well.

use std::collections::HashMap;

use num_complex::Complex64;

/// Host vectors of released objects, by length, for reuse by copies back from the device.
#[derive(Debug, Default)]
pub(crate) struct HostPool {
    by_len: HashMap<usize, Vec<Vec<Complex64>>>,
    bytes: usize,
    cap: usize,
    floor: usize,
}

impl HostPool {
    /// A pool that keeps at most `cap` bytes of vectors of at least `floor` bytes each.
    pub(crate) fn new(cap: usize, floor: usize) -> Self {
        HostPool {
            cap,
            floor,
            ..HostPool::default()
        }
    }

    /// Keeps `v` for reuse if it is at least the floor and fits under the cap; drops it
    /// otherwise.
    pub(crate) fn put(&mut self, v: Vec<Complex64>) {
        let bytes = std::mem::size_of_val(v.as_slice());
        if v.is_empty() || bytes < self.floor || self.bytes + bytes > self.cap {
            return;
        }
        self.bytes += bytes;
        self.by_len.entry(v.len()).or_default().push(v);
    }

    /// A vector of `len` elements for a copy to overwrite whole: a pooled one (holding old
    /// values), or a new one of zeros from zeroed pages.
    pub(crate) fn take(&mut self, len: usize) -> Vec<Complex64> {
        // Nothing kept (small objects, or a pool of zero bytes): no lookup.
        let kept = match self.bytes {
            0 => None,
            _ => self.by_len.get_mut(&len).and_then(Vec::pop),
        };
        match kept {
            Some(v) => {
                self.bytes -= std::mem::size_of_val(v.as_slice());
                v
            }
            None => bytemuck::zeroed_vec(len),
        }
    }

    /// The bytes of the vectors held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ELEM: usize = std::mem::size_of::<Complex64>();

    fn filled(len: usize, x: f64) -> Vec<Complex64> {
        vec![Complex64::new(x, -x); len]
    }

    #[test]
    fn a_kept_vector_serves_the_next_request_of_its_length() {
        let mut p = HostPool::new(1000 * ELEM, 0);
        let v = filled(100, 3.0);
        let at = v.as_ptr();
        p.put(v);
        assert_eq!(p.bytes(), 100 * ELEM);
        let other = p.take(99);
        assert_eq!(other.len(), 99);
        assert!(
            other.iter().all(|z| *z == Complex64::new(0.0, 0.0)),
            "a new one is zeros"
        );
        let again = p.take(100);
        assert_eq!(again.as_ptr(), at, "the same allocation comes back");
        assert_eq!(p.bytes(), 0);
        assert_eq!(p.take(100).len(), 100, "then new ones");
    }

    #[test]
    fn the_cap_and_the_floor_bound_what_is_kept() {
        let mut p = HostPool::new(250 * ELEM, 50 * ELEM);
        p.put(filled(49, 1.0)); // below the floor
        assert_eq!(p.bytes(), 0);
        p.put(filled(100, 1.0));
        p.put(filled(100, 2.0));
        p.put(filled(100, 3.0)); // over the cap
        assert_eq!(p.bytes(), 200 * ELEM);
        p.put(Vec::new());
        assert_eq!(p.bytes(), 200 * ELEM);
        let mut off = HostPool::new(0, 0);
        off.put(filled(10, 1.0));
        assert_eq!(off.bytes(), 0, "a cap of zero keeps nothing");
    }
}
