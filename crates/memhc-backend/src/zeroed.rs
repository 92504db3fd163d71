//! Host memory that costs nothing until it is touched: the storage of a [`HostMemory`]
//! buffer on a backend that moves no data (the null backend, the modelled GPU), made only when
//! the host asks for the bytes in place.
//!
//! [`HostMemory`]: crate::HostMemory

use num_complex::Complex64;

use crate::{BackendError, BackendOp, ELEMENT_BYTES};

/// `bytes` of host memory, zero, allocated on first use ([`LazyZeroed::get_mut`]): an
/// allocation the system refuses is an error, never an abort, and pages nobody writes are never
/// backed by physical memory (the allocator hands out zeroed pages untouched). Aligned for
/// complex doubles.
#[derive(Debug)]
pub struct LazyZeroed {
    bytes: usize,
    storage: Option<Vec<Complex64>>,
}

impl LazyZeroed {
    /// `bytes` of zeros, not yet allocated.
    pub fn new(bytes: usize) -> Self {
        LazyZeroed {
            bytes,
            storage: None,
        }
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The bytes, allocated now if they were not.
    pub fn get_mut(&mut self) -> Result<&mut [u8], BackendError> {
        if self.storage.is_none() {
            let elems = self.bytes.div_ceil(ELEMENT_BYTES);
            let parts = elems.checked_mul(2).ok_or_else(|| refused(self.bytes))?;
            let zeros = bytemuck::allocation::try_zeroed_vec::<f64>(parts)
                .map_err(|_| refused(self.bytes))?;
            self.storage = Some(bytemuck::allocation::cast_vec(zeros));
        }
        let all: &mut [u8] = match self.storage.as_mut() {
            Some(v) => bytemuck::cast_slice_mut(v.as_mut_slice()),
            None => return Err(refused(self.bytes)),
        };
        Ok(&mut all[..self.bytes])
    }

    /// Copies `dst.len()` bytes from byte `offset` into `dst` (zeros if never allocated); the
    /// caller checked the range.
    pub fn read(&self, offset: usize, dst: &mut [u8]) {
        match &self.storage {
            Some(v) => {
                let all: &[u8] = bytemuck::cast_slice(v.as_slice());
                dst.copy_from_slice(&all[offset..offset + dst.len()]);
            }
            None => dst.fill(0),
        }
    }
}

fn refused(bytes: usize) -> BackendError {
    BackendError::invalid(
        BackendOp::Alloc,
        format!("the host cannot provide {bytes} bytes of host memory"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_reads_zeros_before_and_keeps_what_is_written_after_first_use() {
        let mut z = LazyZeroed::new(20);
        let mut out = [7u8; 4];
        z.read(16, &mut out);
        assert_eq!(out, [0; 4]);
        let bytes = z.get_mut().unwrap();
        assert_eq!(bytes.len(), 20);
        assert!(bytes.iter().all(|&b| b == 0));
        bytes[17] = 9;
        z.read(16, &mut out);
        assert_eq!(out, [0, 9, 0, 0]);
    }

    #[test]
    fn a_size_the_host_cannot_hold_is_an_error() {
        let mut z = LazyZeroed::new(usize::MAX - 3);
        assert!(matches!(
            z.get_mut(),
            Err(BackendError::InvalidArgument { .. })
        ));
    }
}
