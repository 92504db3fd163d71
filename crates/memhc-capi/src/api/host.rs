//! Host buffers: the backend's host memory for a node, filled in place and registered without
//! a copy, and results handed out where their read-back landed ([`memhc_embed::HostBuffer`]).
//! Each buffer sits in its runtime's registry of host buffers until it is registered, freed,
//! or the runtime destroyed; it never moves while there, so the pointer
//! [`data`] gives stays valid that long.

use memhc_embed::Complex64;

use super::with;
use crate::status::{Failure, Outcome};
use crate::types::{MemhcHost, MemhcObject, MemhcRuntime};

/// A host buffer for a node of `spins` components of dimensions `dims` (checked, and admitted
/// against the host's memory, before any memory is taken).
pub fn alloc(rt: MemhcRuntime, spins: usize, dims: &[usize]) -> Outcome<MemhcHost> {
    with(rt, |i| {
        let buffer = i.session.alloc_host(spins, dims)?;
        let handle = i
            .hosts
            .insert(buffer)
            .ok_or_else(|| Failure::argument("too many live host buffers in one runtime"))?;
        Ok(MemhcHost { handle })
    })
}

/// The buffer's memory and its number of complex elements. The pointer stays valid until the
/// buffer is registered or freed or the runtime destroyed (the registry never moves a
/// buffer's memory); on a GPU the call first waits for the copies that use it.
pub fn data(rt: MemhcRuntime, h: MemhcHost) -> Outcome<(*mut Complex64, usize)> {
    with(rt, |i| {
        let buffer = i.hosts.get_mut(h.handle).map_err(Failure::handle)?;
        let values = buffer.as_mut_slice()?;
        Ok((values.as_mut_ptr(), values.len()))
    })
}

/// Registers the buffer as a node without a copy; the host handle is stale from then on. A
/// buffer the session refuses stays the caller's.
pub fn register(rt: MemhcRuntime, h: MemhcHost) -> Outcome<MemhcObject> {
    with(rt, |i| {
        i.session
            .check_host(i.hosts.get(h.handle).map_err(Failure::handle)?)?;
        let buffer = i.hosts.remove(h.handle).map_err(Failure::handle)?;
        let id = i.session.register_host(buffer)?;
        i.adopt(id)
    })
}

/// Hands a result out as a host buffer; its object handle is stale from then on.
pub fn take(rt: MemhcRuntime, o: MemhcObject) -> Outcome<MemhcHost> {
    with(rt, |i| {
        let id = i.object(o)?;
        let buffer = i.session.take_host(id)?;
        i.objects.remove(o.handle).map_err(Failure::handle)?;
        let handle = i
            .hosts
            .insert(buffer)
            .ok_or_else(|| Failure::argument("too many live host buffers in one runtime"))?;
        Ok(MemhcHost { handle })
    })
}

/// Frees a host buffer (one never registered, or a taken result).
pub fn free(rt: MemhcRuntime, h: MemhcHost) -> Outcome<()> {
    with(rt, |i| {
        i.hosts.remove(h.handle).map(drop).map_err(Failure::handle)
    })
}
