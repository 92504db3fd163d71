//! What a piece of the fake device's work cost the calling thread: CPU time (user + system,
//! `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` through `cpu_time`) and minor page faults (field 10
//! of `/proc/thread-self/stat`), read before and after. Used by the `host_cost` bench to tell the
//! host's staging copies apart from the fake device's own work (which a GPU does, not the
//! host), only when [`super::FakeConfig::meter`] is on.

use std::time::Duration;

/// The calling thread's CPU time and minor faults at one moment.
#[derive(Clone, Copy, Debug)]
pub struct Reading {
    cpu: Duration,
    faults: u64,
}

/// The calling thread's reading now, to start a metered call (zeros where the platform cannot
/// say): the faults first, then the clock, so that the fault count's own read falls outside
/// the call's CPU time.
pub fn now() -> Reading {
    let faults = thread_minor_faults().unwrap_or(0);
    Reading {
        cpu: thread_cpu(),
        faults,
    }
}

/// The calling thread's CPU time (user + system).
fn thread_cpu() -> Duration {
    cpu_time::ThreadTime::try_now()
        .map(|t| t.as_duration())
        .unwrap_or_default()
}

/// Minor faults of the calling thread so far, from `/proc/thread-self/stat` (Linux), kept open
/// per thread and read again from its start (one `pread`, not an open, a read and a close).
pub fn thread_minor_faults() -> Option<u64> {
    use std::os::unix::fs::FileExt;
    thread_local! {
        static STAT: Option<std::fs::File> = std::fs::File::open("/proc/thread-self/stat").ok();
    }
    STAT.with(|file| {
        let mut buf = [0u8; 1024];
        let n = file.as_ref()?.read_at(&mut buf, 0).ok()?;
        minor_faults(std::str::from_utf8(buf.get(..n)?).ok()?)
    })
}

/// Minor faults of the whole process so far, from `/proc/self/stat` (Linux; threads that
/// exited included).
pub fn process_minor_faults() -> Option<u64> {
    minor_faults(&std::fs::read_to_string("/proc/self/stat").ok()?)
}

/// Field 10 (`minflt`) of a `stat` line: the 8th field after the command's closing bracket.
fn minor_faults(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(7)?.parse().ok()
}

/// Calls, bytes, CPU time and minor faults of one kind of work, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Meter {
    /// Calls measured.
    pub calls: u64,
    /// Bytes they moved.
    pub bytes: u64,
    /// Thread CPU time inside them, nanoseconds.
    pub cpu_ns: u64,
    /// Minor page faults inside them.
    pub faults: u64,
}

impl Meter {
    /// Adds one call of `bytes` that started at `start` and ends now.
    pub fn add(&mut self, start: Reading, bytes: usize) {
        // The clock first, then the faults (as in [`now`], reversed).
        let cpu = thread_cpu();
        let end = Reading {
            cpu,
            faults: thread_minor_faults().unwrap_or(0),
        };
        self.calls += 1;
        self.bytes += bytes as u64;
        self.cpu_ns += end.cpu.saturating_sub(start.cpu).as_nanos() as u64;
        self.faults += end.faults.saturating_sub(start.faults);
    }
}

#[test]
fn the_stat_line_gives_the_minor_faults() {
    let line = "12 (a (b) c) R 1 12 12 0 -1 4194560 777 0 3 0 5 6";
    assert_eq!(minor_faults(line), Some(777));
    assert!(process_minor_faults().is_some_and(|f| f > 0));
}
