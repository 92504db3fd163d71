//! The `extern "C"` boundary, the only place with `unsafe`: raw pointers from the caller are
//! checked (null, alignment, size) and turned into references here, every entry point runs its
//! work under [`std::panic::catch_unwind`] so that no panic crosses into C, and the status and
//! the thread-local message are set on the way out. Everything behind it is safe Rust
//! ([`crate::api`]).

pub mod compute;
pub mod corr;
pub mod errors;
pub mod host;
pub mod objects;
pub mod runtime;

use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::last_error;
use crate::status::{Failure, MemhcStatus, Outcome};

/// Runs one entry point's work: catches a panic (reported as `MEMHC_STATUS_INTERNAL`), sets
/// the thread's last error from the outcome, and returns its status.
pub(crate) fn guard(work: impl FnOnce() -> Outcome<()>) -> MemhcStatus {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(())) => {
            last_error::clear();
            MemhcStatus::Ok
        }
        Ok(Err(failure)) => {
            last_error::set(&failure.message);
            failure.status
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_owned());
            last_error::set(&format!(
                "internal error: a bug in memhc was caught at the C boundary: {what}"
            ));
            MemhcStatus::Internal
        }
    }
}

/// Refuses a null or misaligned pointer before any work is done.
fn check_ptr<T>(ptr: *const T, what: &str) -> Outcome<()> {
    if ptr.is_null() {
        return Err(Failure::null(what));
    }
    if !ptr.is_aligned() {
        return Err(Failure::argument(format!(
            "{what} is not aligned for its type ({} bytes)",
            std::mem::align_of::<T>()
        )));
    }
    Ok(())
}

/// Checks that `len` elements of `T` make a valid slice size.
fn check_len<T>(len: usize, what: &str) -> Outcome<()> {
    match len.checked_mul(std::mem::size_of::<T>()) {
        Some(bytes) if bytes <= isize::MAX as usize => Ok(()),
        _ => Err(Failure::new(
            MemhcStatus::SizeMismatch,
            format!("{what}: {len} elements exceed the address space"),
        )),
    }
}

/// The caller's array of `len` elements at `ptr` (null allowed only when `len` is 0).
fn slice<'a, T>(ptr: *const T, len: usize, what: &str) -> Outcome<&'a [T]> {
    if len == 0 {
        return Ok(&[]);
    }
    check_ptr(ptr, what)?;
    check_len::<T>(len, what)?;
    // SAFETY: non-null, aligned, and the size fits (checked above); the header requires `ptr`
    // to point to `len` initialised elements that nothing writes during the call.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// The caller's writable array of `len` elements at `ptr` (null allowed only when `len` is 0).
fn slice_mut<'a, T>(ptr: *mut T, len: usize, what: &str) -> Outcome<&'a mut [T]> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_ptr(ptr.cast_const(), what)?;
    check_len::<T>(len, what)?;
    // SAFETY: non-null, aligned, and the size fits (checked above); the header requires `ptr`
    // to point to `len` writable elements that nothing else reads or writes during the call.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// Writes `value` to an out-parameter already checked with [`check_ptr`].
fn put<T>(ptr: *mut T, value: T) {
    if ptr.is_null() || !ptr.is_aligned() {
        return;
    }
    // SAFETY: non-null and aligned (checked just above); the header requires out-parameters
    // to point to writable memory for one value of the type. `write` does not read or drop
    // the old contents, which may be uninitialised.
    unsafe { ptr.write(value) }
}

/// Reads one value the caller passes by pointer.
fn get<T: Copy>(ptr: *const T, what: &str) -> Outcome<T> {
    check_ptr(ptr, what)?;
    // SAFETY: non-null and aligned (checked above); the header requires it to point to one
    // initialised value of the type.
    Ok(unsafe { ptr.read() })
}

/// A NUL-terminated UTF-8 string the caller passes, `None` for null.
fn string<'a>(ptr: *const c_char, what: &str) -> Outcome<Option<&'a str>> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null; the header requires a NUL-terminated string that stays unchanged
    // during the call.
    let c = unsafe { CStr::from_ptr(ptr) };
    c.to_str()
        .map(Some)
        .map_err(|_| Failure::new(MemhcStatus::UnknownName, format!("{what} is not UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_internal_status_with_a_message() {
        let status = guard(|| panic!("boom"));
        assert_eq!(status, MemhcStatus::Internal);
        let message = last_error::with(|m| m.to_string_lossy().into_owned());
        assert!(
            message.contains("boom") && message.contains("internal error"),
            "{message}"
        );
        assert_eq!(guard(|| Ok(())), MemhcStatus::Ok);
        assert!(last_error::with(|m| m.to_bytes().is_empty()));
    }

    #[test]
    fn pointers_are_checked() {
        let backing = [0u64; 2];
        let misaligned = backing.as_ptr().cast::<u8>().wrapping_add(1).cast::<u64>();
        assert_eq!(
            slice(misaligned, 1, "x").err().map(|f| f.status),
            Some(MemhcStatus::InvalidArgument)
        );
        assert_eq!(
            slice::<u64>(std::ptr::null(), 1, "x")
                .err()
                .map(|f| f.status),
            Some(MemhcStatus::NullPointer)
        );
        assert_eq!(slice::<u64>(std::ptr::null(), 0, "x").ok(), Some(&[][..]));
        let v = [1u64, 2];
        assert_eq!(
            slice(v.as_ptr(), usize::MAX, "x").err().map(|f| f.status),
            Some(MemhcStatus::SizeMismatch)
        );
    }
}
