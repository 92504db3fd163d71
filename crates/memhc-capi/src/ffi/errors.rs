//! Status names, the last error, the version.

use std::ffi::c_char;

use super::{put, slice_mut};
use crate::last_error;
use crate::status::{Failure, MemhcStatus};

/// The library's version, as a static NUL-terminated string (`"0.1.0"`). Never fails; the
/// pointer is valid for the life of the program and must not be freed.
#[unsafe(no_mangle)]
pub extern "C" fn memhc_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The name of a status code as this header spells it (`"MEMHC_STATUS_DOES_NOT_FIT"`), or
/// `"MEMHC_STATUS_UNKNOWN"` for a value this library does not know. Never fails; the string is
/// static: valid for the life of the program, never freed by the caller. Does not change the
/// last error.
#[unsafe(no_mangle)]
pub extern "C" fn memhc_status_name(status: i32) -> *const c_char {
    let name: &'static str = MemhcStatus::ALL
        .iter()
        .find(|s| **s as i32 == status)
        .map_or("MEMHC_STATUS_UNKNOWN\0", |s| match s {
            MemhcStatus::Ok => "MEMHC_STATUS_OK\0",
            MemhcStatus::NullPointer => "MEMHC_STATUS_NULL_POINTER\0",
            MemhcStatus::InvalidHandle => "MEMHC_STATUS_INVALID_HANDLE\0",
            MemhcStatus::InvalidArgument => "MEMHC_STATUS_INVALID_ARGUMENT\0",
            MemhcStatus::SizeMismatch => "MEMHC_STATUS_SIZE_MISMATCH\0",
            MemhcStatus::UnknownName => "MEMHC_STATUS_UNKNOWN_NAME\0",
            MemhcStatus::Unavailable => "MEMHC_STATUS_UNAVAILABLE\0",
            MemhcStatus::DoesNotFit => "MEMHC_STATUS_DOES_NOT_FIT\0",
            MemhcStatus::Uninitialized => "MEMHC_STATUS_UNINITIALIZED\0",
            MemhcStatus::Device => "MEMHC_STATUS_DEVICE\0",
            MemhcStatus::AuditFailed => "MEMHC_STATUS_AUDIT_FAILED\0",
            MemhcStatus::BufferTooSmall => "MEMHC_STATUS_BUFFER_TOO_SMALL\0",
            MemhcStatus::Internal => "MEMHC_STATUS_INTERNAL\0",
            MemhcStatus::Io => "MEMHC_STATUS_IO\0",
            MemhcStatus::InvalidFile => "MEMHC_STATUS_INVALID_FILE\0",
            MemhcStatus::VerifyFailed => "MEMHC_STATUS_VERIFY_FAILED\0",
            MemhcStatus::NotFound => "MEMHC_STATUS_NOT_FOUND\0",
            MemhcStatus::OutOfHostMemory => "MEMHC_STATUS_OUT_OF_HOST_MEMORY\0",
        });
    name.as_ptr().cast()
}

/// The message of the last failed memhc call on the calling thread, one line of UTF-8 without
/// a trailing newline; the empty string after a successful call (or before any call). Never
/// null, never fails.
///
/// Lifetime: the pointer stays valid until the next memhc call on the same thread (which may
/// replace the message) or until the thread ends; copy the text to keep it. It is owned by
/// memhc: never free it. Each thread has its own message. This function, `memhc_last_error_copy`,
/// `memhc_status_name` and `memhc_version` do not change it.
#[unsafe(no_mangle)]
pub extern "C" fn memhc_last_error() -> *const c_char {
    last_error::with(|m| m.as_ptr())
}

/// Copies the calling thread's last error message, NUL-terminated, into the caller's buffer
/// `buf` of `capacity` bytes, and stores the bytes it needs (message plus NUL) in `*needed`
/// unless `needed` is null. With a buffer too small (or `buf` null and `capacity` 0, to ask
/// the size) nothing is copied and `MEMHC_STATUS_BUFFER_TOO_SMALL` is returned. Does not
/// change the last error.
///
/// # Safety
///
/// `buf` must point to `capacity` writable bytes (or be null with `capacity` 0); `needed` must
/// be null or point to a writable `size_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memhc_last_error_copy(
    buf: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> MemhcStatus {
    let text = last_error::with(|m| m.to_bytes_with_nul().to_vec());
    let status = std::panic::catch_unwind(|| {
        if !needed.is_null() {
            super::check_ptr(needed.cast_const(), "needed")?;
            put(needed, text.len());
        }
        if capacity < text.len() {
            return Err(Failure::new(MemhcStatus::BufferTooSmall, ""));
        }
        let out = slice_mut(buf.cast::<u8>(), capacity, "buf")?;
        if let Some(dst) = out.get_mut(..text.len()) {
            dst.copy_from_slice(&text);
        }
        Ok(())
    });
    // The message stays as it was: this call reports only through its status.
    match status {
        Ok(Ok(())) => MemhcStatus::Ok,
        Ok(Err(f)) => f.status,
        Err(_) => MemhcStatus::Internal,
    }
}
