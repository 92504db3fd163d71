//! The caller's pageable memory, registered in place (`cuMemHostRegister`,
//! `hipHostRegister`) where that is cheaper than staging every copy of it
//! ([`GpuOptions::register`](crate::GpuOptions::register)).

use memhc_backend::{BackendError, BackendOp};

use super::GpuBackend;
use crate::api::{DeviceApi, PinnedAllocation, Unregistered};
use crate::memory::GpuHostBuffer;

/// What [`GpuBackend::adopt_pageable`] made of the caller's buffer.
#[derive(Debug)]
pub enum Adopted<D: DeviceApi> {
    /// Registered in place: backend host memory, copied in one DMA
    /// ([`Backend::copy_h2d_async`](memhc_backend::Backend::copy_h2d_async)); the same bytes,
    /// not a copy. [`GpuBackend::release_pageable`] gives the vector back.
    Registered(GpuHostBuffer<D>),
    /// Left as it was, to be staged: the rule said registering would not pay, or the driver
    /// refused (then `refused` says why).
    Pageable {
        /// The caller's memory, unchanged.
        memory: Vec<u64>,
        /// The driver's refusal, if it was asked and refused.
        refused: Option<BackendError>,
    },
}

impl<D: DeviceApi> GpuBackend<D> {
    /// Takes the caller's pageable `memory`, expected to be copied to or from the device
    /// `copies` times, and registers it in place if [`GpuOptions::register`] says registering
    /// pays for a buffer of its size and that many copies; else (or if the driver refuses)
    /// hands it back to be staged. Registered, it is backend host memory: the runtime takes it
    /// as a host object (memhc-core's `Runtime::register_host`) and uploads it in one DMA per copy, with
    /// no staging copy on the host. Registering the same bytes twice cannot happen: the
    /// buffer is owned from here until [`GpuBackend::release_pageable`] (or its drop)
    /// unregisters it.
    ///
    /// [`GpuOptions::register`]: crate::GpuOptions::register
    pub fn adopt_pageable(&self, memory: Vec<u64>, copies: usize) -> Adopted<D> {
        let bytes = memory.len() * std::mem::size_of::<u64>();
        if !self.options.register.registers(bytes, copies) {
            return Adopted::Pageable {
                memory,
                refused: None,
            };
        }
        match self.register_pageable(memory) {
            Ok(buffer) => Adopted::Registered(buffer),
            Err(refused) => Adopted::Pageable {
                memory: refused.memory,
                refused: Some(refused.error),
            },
        }
    }

    /// Registers `memory` in place whatever its size ([`DeviceApi::host_register`]): backend
    /// host memory over the caller's bytes. An empty vector is refused.
    pub fn register_pageable(
        &self,
        memory: Vec<u64>,
    ) -> Result<GpuHostBuffer<D>, Box<Unregistered>> {
        if memory.is_empty() {
            return Err(Box::new(Unregistered {
                memory,
                error: BackendError::invalid(BackendOp::Alloc, "registering zero bytes"),
            }));
        }
        let pinned = self.api.host_register(memory)?;
        self.copies.registered(pinned.bytes());
        Ok(GpuHostBuffer::registered(pinned, &self.copies))
    }

    /// Gives back the caller's memory a [`GpuBackend::adopt_pageable`] or
    /// [`GpuBackend::register_pageable`] registered: waits for the copies that use it,
    /// unregisters it and returns the vector, unchanged but for what copies into it wrote.
    /// Page-locked memory the backend allocated ([`Backend::alloc_host`]) is refused
    /// ([`BackendError::InvalidArgument`]) and freed.
    ///
    /// [`Backend::alloc_host`]: memhc_backend::Backend::alloc_host
    pub fn release_pageable(&self, buffer: GpuHostBuffer<D>) -> Result<Vec<u64>, BackendError> {
        let (pinned, registration, parent) = buffer.into_pinned()?;
        if registration.is_none() {
            drop(pinned);
            drop(parent);
            return Err(BackendError::invalid(
                BackendOp::Alloc,
                "releasing page-locked memory the backend allocated as caller memory",
            ));
        }
        let memory = self.api.host_unregister(pinned);
        drop(registration);
        memory
    }
}
