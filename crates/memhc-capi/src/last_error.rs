//! The thread-local last-error message.
//!
//! Every entry point but the message readers resets it: empty after a success, the failure's
//! one line after a failure. The message lives in a thread-local C string, so the pointer
//! `memhc_last_error` returns stays valid until the next memhc call on the same thread (or the
//! thread's end), and threads never see each other's messages.

use std::cell::RefCell;
use std::ffi::{CStr, CString};

thread_local! {
    static LAST: RefCell<CString> = RefCell::new(CString::default());
}

/// Replaces this thread's message (interior NULs become `?`, line breaks spaces: the message
/// is one line, whatever a file name or a system message holds).
pub fn set(message: &str) {
    let line = message.replace('\0', "?").replace(['\n', '\r'], " ");
    let text = CString::new(line).unwrap_or_default();
    LAST.with(|l| *l.borrow_mut() = text);
}

/// Clears this thread's message.
pub fn clear() {
    LAST.with(|l| {
        let mut l = l.borrow_mut();
        if !l.as_bytes().is_empty() {
            *l = CString::default();
        }
    });
}

/// Runs `f` on this thread's message.
pub fn with<R>(f: impl FnOnce(&CStr) -> R) -> R {
    LAST.with(|l| f(l.borrow().as_c_str()))
}
