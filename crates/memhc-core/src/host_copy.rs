//! An object's host copy, in one of two places: a vector in ordinary (pageable) memory, or the
//! backend's host memory ([`Backend::alloc_host`]: page-locked on a GPU).
//!
//! A copy between the device and pageable memory crosses the CPU twice on a GPU: the driver
//! (or our staging) copies it through a page-locked buffer, and a fresh vector faults its pages
//! in as the copy touches them. A copy between the device and page-locked memory is one DMA:
//! the bus's full rate, no CPU. So a caller who can put a node's values straight into the
//! backend's host memory ([`Runtime::alloc_host`](crate::Runtime::alloc_host), then
//! [`Runtime::register_host`](crate::Runtime::register_host)) has it uploaded with no CPU copy,
//! and a result read back into it ([`Config::pinned_results`](crate::Config::pinned_results))
//! is handed out where the device put it
//! ([`Runtime::take_host`](crate::Runtime::take_host)).
//!
//! A vector of zeros can also be registered before it exists ([`HostCopy::zeros`]): it is
//! pageable like any vector (staged on a GPU, offered for registration in place), but its
//! memory is made only when something reads or writes its values in place. A staged copy of
//! it reads the runtime's one zero buffer instead, so a node whose values nobody reads (a dry
//! run's, or one on a backend that keeps no values) costs no host memory, whatever the global
//! allocator does with a zeroed allocation.

use num_complex::Complex64;

use crate::backend::{Backend, BackendError, BackendOp, HostMemory};
use crate::error::{Error, Result};
use crate::hazards::{Hazards, Tagged};
use crate::lease::Lease;

/// An object's host copy: where its values live on the host. Made from a vector
/// (`HostCopy::from(values)`), from zeros made on first touch ([`HostCopy::zeros`]) or from
/// the backend's host memory ([`HostCopy::pinned`]).
pub struct HostCopy<B: Backend>(Repr<B>);

enum Repr<B: Backend> {
    /// A vector in pageable memory (copies to and from the device are staged on a GPU).
    Pageable(Vec<Complex64>),
    /// A vector of this many zeros, not made yet: made (becoming `Pageable`) when its values
    /// are touched in place; copied to the device from the runtime's zero buffer until then.
    Zeros(usize),
    /// The backend's host memory (page-locked on a GPU: copies are one DMA), holding `elems`
    /// complex doubles from its start. Boxed: an object's record stays as small as a vector's.
    Pinned(Box<Pinned<B>>),
}

// Field order is drop order: the memory (which waits for the copies that use it) goes before
// its origin (a piece's range goes back to the pool only then).
struct Pinned<B: Backend> {
    buffer: B::HostBuffer,
    elems: usize,
    /// The queued copies to the device that read the memory and may not have completed: the
    /// memory must not be overwritten (reused for another copy back) before they have. Kept
    /// here, not only in the device copy's history, because the device copy can go (an
    /// eviction that hands its block over does not wait) while they are still in flight.
    reads: Hazards<B>,
    origin: Origin,
}

/// Where the backend's host memory of a host copy came from.
#[derive(Debug)]
pub(crate) enum Origin {
    /// An allocation of its own ([`Backend::alloc_host`]), or the caller's.
    Own,
    /// A piece of the runtime's pinned pool: its range, given back when this is dropped.
    Piece {
        /// Held only to be dropped.
        _lease: Lease,
    },
    /// The caller's pageable vector, registered in place ([`Backend::adopt_host`]): dropping
    /// the memory unregisters it; never kept for reuse.
    Registered,
}

/// The backend's host memory and where it came from: what the pools keep.
#[derive(Debug)]
pub(crate) struct Held<B: Backend> {
    /// The memory (dropped first: it waits for the copies that use it).
    pub buffer: B::HostBuffer,
    /// Where it came from (dropped after).
    pub origin: Origin,
}

impl<B: Backend> std::fmt::Debug for HostCopy<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Repr::Pageable(v) => write!(f, "Pageable({} elements)", v.len()),
            Repr::Zeros(n) => write!(f, "Pageable({n} zeros, not made)"),
            Repr::Pinned(p) => write!(f, "Pinned({} elements)", p.elems),
        }
    }
}

impl<B: Backend> From<Vec<Complex64>> for HostCopy<B> {
    fn from(v: Vec<Complex64>) -> Self {
        HostCopy(Repr::Pageable(v))
    }
}

impl<B: Backend> HostCopy<B> {
    /// A vector of `elems` zeros whose memory is made only when its values are read or
    /// written in place ([`HostCopy::as_mut_slice`], [`HostCopy::into_vec`]) or the backend
    /// registers it in place ([`Backend::adopt_host`]); until then it costs no host memory.
    /// The runtime treats it as any vector (pageable: staged on a GPU).
    pub fn zeros(elems: usize) -> Self {
        HostCopy(Repr::Zeros(elems))
    }

    /// The backend's host memory `buffer` holding `elems` elements from its start; refused if
    /// the buffer is smaller.
    pub fn pinned(buffer: B::HostBuffer, elems: usize) -> Result<Self> {
        if !Self::fits(&buffer, elems) {
            return Err(Error::Backend(BackendError::invalid(
                BackendOp::CopyH2D,
                format!(
                    "a host buffer of {} bytes cannot hold {elems} complex doubles",
                    buffer.bytes()
                ),
            )));
        }
        Ok(Self::in_buffer(buffer, elems))
    }

    /// Whether `buffer` can hold `elems` elements.
    pub(crate) fn fits(buffer: &B::HostBuffer, elems: usize) -> bool {
        elems
            .checked_mul(std::mem::size_of::<Complex64>())
            .is_some_and(|bytes| bytes <= buffer.bytes())
    }

    /// `buffer` holding `elems` elements, which the caller checked it [`fits`](Self::fits).
    pub(crate) fn in_buffer(buffer: B::HostBuffer, elems: usize) -> Self {
        Self::in_held(
            Held {
                buffer,
                origin: Origin::Own,
            },
            elems,
        )
    }

    /// Memory from the pools holding `elems` elements; refused if it is smaller.
    pub(crate) fn from_held(held: Held<B>, elems: usize) -> Result<Self> {
        if !Self::fits(&held.buffer, elems) {
            return Err(Error::Internal(format!(
                "pooled host memory of {} bytes cannot hold {elems} complex doubles",
                held.buffer.bytes()
            )));
        }
        Ok(Self::in_held(held, elems))
    }

    /// Memory from the pools holding `elems` elements, which the caller checked it
    /// [`fits`](Self::fits).
    pub(crate) fn in_held(held: Held<B>, elems: usize) -> Self {
        let Held { buffer, origin } = held;
        HostCopy(Repr::Pinned(Box::new(Pinned {
            buffer,
            elems,
            reads: Hazards::default(),
            origin,
        })))
    }

    /// Whether the values are the caller's vector registered in place
    /// ([`Backend::adopt_host`]).
    pub fn is_registered(&self) -> bool {
        matches!(&self.0, Repr::Pinned(p) if matches!(p.origin, Origin::Registered))
    }

    /// Whether the values are in a piece of the runtime's pinned pool.
    pub fn is_pooled(&self) -> bool {
        matches!(&self.0, Repr::Pinned(p) if matches!(p.origin, Origin::Piece { .. }))
    }

    /// Offers a vector to `backend` for registration in place, expected to be copied to the
    /// device `copies` times ([`Backend::adopt_host`]); whether it is registered now. Host
    /// memory already, or a vector the backend hands back, stays as it was (the same values:
    /// the vector only changes owner and element type, never its bytes).
    pub(crate) fn adopt<D: Backend<HostBuffer = B::HostBuffer>>(
        &mut self,
        backend: &D,
        copies: usize,
    ) -> bool {
        let unmade = match self.0 {
            Repr::Zeros(elems) => {
                // Made only for a backend that would take it: zeros staged cost nothing.
                let takes = elems
                    .checked_mul(std::mem::size_of::<Complex64>())
                    .is_some_and(|bytes| backend.adopts_host(bytes, copies));
                match takes.then(|| zeroed(elems)) {
                    Some(Ok(v)) => self.0 = Repr::Pageable(v),
                    _ => return false,
                }
                true
            }
            _ => false,
        };
        let Repr::Pageable(v) = &mut self.0 else {
            return false;
        };
        let elems = v.len();
        let words = match bytemuck::allocation::try_cast_vec::<Complex64, u64>(std::mem::take(v)) {
            Ok(words) => words,
            Err((_, back)) => {
                *v = back;
                return false;
            }
        };
        match backend.adopt_host(words, copies) {
            // The same bytes, so it fits (and a backend that broke that would show as an
            // error when the values are next read, not as lost memory).
            Ok(buffer) => {
                *self = Self::in_held(
                    Held {
                        buffer,
                        origin: Origin::Registered,
                    },
                    elems,
                );
                true
            }
            // Zeros made for the offer go back to being unmade (the same values).
            Err(_) if unmade => {
                self.0 = Repr::Zeros(elems);
                false
            }
            Err(words) => {
                *v = bytemuck::allocation::try_cast_vec::<u64, Complex64>(words)
                    .unwrap_or_else(|(_, words)| bytemuck::cast_slice(&words).to_vec());
                false
            }
        }
    }

    /// Elements held.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Pageable(v) => v.len(),
            Repr::Zeros(n) => *n,
            Repr::Pinned(p) => p.elems,
        }
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the values are in the backend's host memory.
    pub fn is_pinned(&self) -> bool {
        matches!(self.0, Repr::Pinned(_))
    }

    /// Whether the values are zeros whose memory is not made yet ([`HostCopy::zeros`]).
    pub fn is_unmade(&self) -> bool {
        matches!(self.0, Repr::Zeros(_))
    }

    /// The values, where they can be read without waiting (a vector); `None` for host
    /// memory, which [`HostCopy::as_mut_slice`] reads once the copies using it are done, and
    /// for zeros not made yet ([`HostCopy::is_unmade`]), which it makes.
    pub fn as_slice(&self) -> Option<&[Complex64]> {
        match &self.0 {
            Repr::Pageable(v) => Some(v),
            Repr::Zeros(_) | Repr::Pinned(_) => None,
        }
    }

    /// The pieces of a staged copy to the device, `chunk` elements each (the last shorter):
    /// the vector's, or for zeros not made yet pieces of `zeros`, which must hold
    /// `chunk.min(self.len())` zeros at least. `None` for the backend's host memory.
    pub(crate) fn staged_pieces<'a>(
        &'a self,
        chunk: usize,
        zeros: &'a [Complex64],
    ) -> Option<impl Iterator<Item = Result<&'a [Complex64]>> + 'a> {
        let chunk = chunk.max(1);
        let (values, elems) = match &self.0 {
            Repr::Pageable(v) => (Some(v.as_slice()), v.len()),
            Repr::Zeros(n) => (None, *n),
            Repr::Pinned(_) => return None,
        };
        Some((0..elems).step_by(chunk).map(move |at| {
            let len = chunk.min(elems - at);
            match values {
                Some(v) => v.get(at..at + len),
                None => zeros.get(..len),
            }
            .ok_or_else(|| {
                Error::Internal(format!(
                    "a staged copy of {elems} elements has no piece at {at}"
                ))
            })
        }))
    }

    /// The values in place, to read or change (host memory: once the copies that use it have
    /// completed; the backend waits for them or refuses).
    pub fn as_mut_slice(&mut self) -> Result<&mut [Complex64]> {
        if let Repr::Zeros(elems) = self.0 {
            self.0 = Repr::Pageable(zeroed(elems)?);
        }
        match &mut self.0 {
            Repr::Pageable(v) => Ok(v),
            Repr::Zeros(_) => Err(Error::Internal("zeros made are still unmade".into())),
            Repr::Pinned(p) => {
                let elems = p.elems;
                let bytes = p.buffer.as_mut_bytes()?;
                let all: &mut [Complex64] = bytemuck::try_cast_slice_mut(bytes).map_err(|e| {
                    Error::Backend(BackendError::Async {
                        op: BackendOp::CopyD2H,
                        message: format!("host memory not usable as complex doubles: {e}"),
                    })
                })?;
                all.get_mut(..elems).ok_or_else(|| {
                    Error::Internal(format!("a host copy of {elems} elements is shorter"))
                })
            }
        }
    }

    /// The backend's host memory holding the values, and the elements of the object in it
    /// (`None` for a vector).
    pub fn host_buffer(&self) -> Option<(&B::HostBuffer, usize)> {
        match &self.0 {
            Repr::Pageable(_) | Repr::Zeros(_) => None,
            Repr::Pinned(p) => Some((&p.buffer, p.elems)),
        }
    }

    /// Notes that queued work (a copy to the device, which `event` follows) reads the backend's
    /// host memory; nothing for a vector (a copy from it is done when the call returns).
    pub(crate) fn note_read<D>(&mut self, backend: &D, event: Tagged<B>)
    where
        D: Backend<Stream = B::Stream, Event = B::Event>,
    {
        if let Repr::Pinned(p) = &mut self.0 {
            p.reads.add_read(backend, event);
        }
    }

    /// Takes the copy apart: the vector (empty for zeros never made: there is nothing to
    /// keep), or the backend's host memory (for reuse) with the queued copies that may still
    /// read it.
    pub(crate) fn into_parts(self) -> Result<Vec<Complex64>, (Held<B>, Hazards<B>)> {
        match self.0 {
            Repr::Pageable(v) => Ok(v),
            Repr::Zeros(_) => Ok(Vec::new()),
            Repr::Pinned(p) => {
                let Pinned {
                    buffer,
                    reads,
                    origin,
                    ..
                } = *p;
                Err((Held { buffer, origin }, reads))
            }
        }
    }

    /// The values as a vector: a vector as it is, host memory copied out (once the copies into
    /// it have completed).
    pub fn into_vec(mut self) -> Result<Vec<Complex64>> {
        match &mut self.0 {
            Repr::Pageable(v) => return Ok(std::mem::take(v)),
            Repr::Zeros(elems) => return zeroed(*elems),
            Repr::Pinned(_) => {}
        }
        let values = self.as_mut_slice()?;
        let mut v = Vec::new();
        v.try_reserve_exact(values.len()).map_err(|_| {
            Error::Backend(BackendError::invalid(
                BackendOp::CopyD2H,
                format!(
                    "the host cannot hold a copy of {} complex doubles",
                    values.len()
                ),
            ))
        })?;
        v.extend_from_slice(values);
        Ok(v)
    }
}

/// `elems` zeros in a new vector, from zeroed memory (pages nobody writes stay unbacked where
/// the allocator hands them out untouched); a size the host cannot hold is an error, not an
/// abort.
pub(crate) fn zeroed(elems: usize) -> Result<Vec<Complex64>> {
    elems
        .checked_mul(2)
        .and_then(|parts| bytemuck::allocation::try_zeroed_vec::<f64>(parts).ok())
        .map(bytemuck::allocation::cast_vec)
        .ok_or_else(|| {
            Error::Backend(BackendError::invalid(
                BackendOp::Alloc,
                format!("the host cannot hold {elems} complex doubles"),
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use memhc_host::HostBackend;

    #[test]
    fn host_memory_holds_what_was_written_in_place_and_copies_out_as_a_vector() {
        let b = HostBackend::new(1 << 20);
        let buffer = b.alloc_host(5 * 16).unwrap();
        let mut h = HostCopy::<HostBackend>::pinned(buffer, 4).unwrap();
        assert_eq!((h.len(), h.is_pinned(), h.as_slice()), (4, true, None));
        for (i, z) in h.as_mut_slice().unwrap().iter_mut().enumerate() {
            *z = Complex64::new(i as f64, -1.0);
        }
        let v = h.into_vec().unwrap();
        let expected: Vec<Complex64> = [0.0, 1.0, 2.0, 3.0]
            .iter()
            .map(|&x| Complex64::new(x, -1.0))
            .collect();
        assert_eq!(v, expected);
    }

    #[test]
    fn zeros_are_made_only_when_touched_in_place_and_never_for_a_backend_that_hands_back() {
        let b = HostBackend::new(1 << 20);
        let mut z = HostCopy::<HostBackend>::zeros(3);
        assert_eq!((z.len(), z.is_unmade(), z.is_pinned()), (3, true, false));
        assert_eq!((z.as_slice(), z.host_buffer().is_none()), (None, true));
        // Staged from the zero buffer, as a vector would be in pieces of two.
        let zeros = [Complex64::new(0.0, 0.0); 2];
        let pieces: Vec<_> = z.staged_pieces(2, &zeros).unwrap().collect();
        let lens: Vec<usize> = pieces.into_iter().map(|p| p.unwrap().len()).collect();
        assert_eq!(lens, [2, 1]);
        assert!(z.staged_pieces(4, &zeros).unwrap().any(|p| p.is_err()));
        // The host backend registers nothing: the zeros stay unmade.
        assert!(!z.adopt(&b, 100));
        assert!(z.is_unmade());
        z.as_mut_slice().unwrap()[1] = Complex64::new(2.0, 0.0);
        assert!(!z.is_unmade());
        let zero = Complex64::new(0.0, 0.0);
        assert_eq!(
            z.into_vec().unwrap(),
            [zero, Complex64::new(2.0, 0.0), zero]
        );
        let unmade = HostCopy::<HostBackend>::zeros(2);
        assert_eq!(format!("{unmade:?}"), "Pageable(2 zeros, not made)");
        assert_eq!(unmade.into_vec().unwrap(), [zero; 2]);
    }

    #[test]
    fn zeros_the_host_cannot_hold_are_an_error_when_made() {
        let mut z = HostCopy::<HostBackend>::zeros(usize::MAX / 2);
        assert!(matches!(
            z.as_mut_slice(),
            Err(Error::Backend(BackendError::InvalidArgument { .. }))
        ));
        assert!(z.is_unmade());
        assert!(
            HostCopy::<HostBackend>::zeros(usize::MAX)
                .into_vec()
                .is_err()
        );
    }

    #[test]
    fn a_buffer_too_small_for_the_elements_is_refused() {
        let b = HostBackend::new(1 << 20);
        let buffer = b.alloc_host(3 * 16).unwrap();
        assert!(matches!(
            HostCopy::<HostBackend>::pinned(buffer, 4),
            Err(Error::Backend(BackendError::InvalidArgument { .. }))
        ));
        let v: HostCopy<HostBackend> = vec![Complex64::new(1.0, 2.0)].into();
        assert_eq!(v.as_slice(), Some([Complex64::new(1.0, 2.0)].as_slice()));
    }
}
