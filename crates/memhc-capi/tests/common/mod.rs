//! What the C ABI's test files share: the last error as a string, and a check of a status
//! and its message.

use std::ffi::CStr;

use memhc_capi::MemhcStatus;
use memhc_capi::ffi::errors::memhc_last_error;

/// The calling thread's last error message.
pub fn last() -> String {
    // SAFETY: memhc_last_error never returns null and the string lives until the next call.
    unsafe { CStr::from_ptr(memhc_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Asserts `status` is `want` and the message mentions `needle`, on one line.
#[track_caller]
pub fn expect(status: MemhcStatus, want: MemhcStatus, needle: &str) {
    let message = last();
    assert_eq!(status, want, "{message}");
    assert!(
        message.contains(needle),
        "'{message}' does not mention '{needle}'"
    );
    assert!(!message.contains('\n'), "one line: {message}");
}
