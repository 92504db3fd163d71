//! Timings of the work streams execute, and the share of copy time hidden behind compute.
//!
//! A backend that can time its work ([`Backend::set_timing`](crate::Backend::set_timing))
//! records, for every copy and every GEMM batch a stream executes, when it started and ended
//! ([`WorkSpan`]), on one clock for all streams. The host backend takes the host's clock in
//! its worker threads; a GPU backend can give the same from events recorded around each piece
//! of work (`cuEventElapsedTime` against one reference event).
//!
//! [`hidden_copy_share`] turns a timeline into the figure that tells whether copies overlap
//! compute: the copy time during which some GEMM ran on another stream, over all copy time.

/// What a timed piece of work was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum WorkKind {
    /// A host-to-device copy.
    CopyH2D,
    /// A device-to-host copy.
    CopyD2H,
    /// A batch of GEMMs or GEAMs.
    Compute,
}

impl WorkKind {
    /// Whether the work is a copy (either way).
    pub fn is_copy(self) -> bool {
        matches!(self, WorkKind::CopyH2D | WorkKind::CopyD2H)
    }
}

/// One piece of work a stream executed: when it started and ended, in nanoseconds on the
/// backend's timing clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct WorkSpan {
    /// The stream, by a number the backend gives each stream it creates.
    pub stream: u64,
    /// What the work was.
    pub kind: WorkKind,
    /// When it started.
    pub start_ns: u64,
    /// When it ended (not before `start_ns`).
    pub end_ns: u64,
}

/// The copy time of `spans` during which some compute ran on another stream, over all copy
/// time: 0 (copies never overlap compute) to 1 (every copy is hidden). `None` when there is no
/// copy time.
pub fn hidden_copy_share(spans: &[WorkSpan]) -> Option<f64> {
    let (hidden, total) = hidden_copy_ns(spans);
    (total > 0).then(|| hidden as f64 / total as f64)
}

/// `(hidden, total)` nanoseconds of copy time: see [`hidden_copy_share`].
pub fn hidden_copy_ns(spans: &[WorkSpan]) -> (u64, u64) {
    let mut copy_streams: Vec<u64> = spans
        .iter()
        .filter(|s| s.kind.is_copy())
        .map(|s| s.stream)
        .collect();
    copy_streams.sort_unstable();
    copy_streams.dedup();
    let (mut hidden, mut total) = (0u64, 0u64);
    for stream in copy_streams {
        // Compute on the other streams, merged into disjoint intervals in order.
        let merged = merged_compute(spans, |s| s != stream);
        for c in spans
            .iter()
            .filter(|s| s.kind.is_copy() && s.stream == stream)
        {
            let (start, end) = (c.start_ns, c.end_ns.max(c.start_ns));
            total += end - start;
            // The first merged interval that ends after the copy starts, and those after it.
            let first = merged.partition_point(|&(_, e)| e <= start);
            for &(s, e) in merged[first..].iter().take_while(|&&(s, _)| s < end) {
                hidden += e.min(end) - s.max(start);
            }
        }
    }
    (hidden, total)
}

/// How long some stream computed: the length of the union of the compute spans, in
/// nanoseconds (work overlapping on two streams counts once).
pub fn compute_busy_ns(spans: &[WorkSpan]) -> u64 {
    merged_compute(spans, |_| true)
        .iter()
        .map(|&(s, e)| e - s)
        .sum()
}

/// The compute spans of the streams `keep` accepts, merged into disjoint, non-empty
/// `(start, end)` intervals in order.
fn merged_compute(spans: &[WorkSpan], keep: impl Fn(u64) -> bool) -> Vec<(u64, u64)> {
    let mut busy: Vec<(u64, u64)> = spans
        .iter()
        .filter(|s| s.kind == WorkKind::Compute && keep(s.stream) && s.end_ns > s.start_ns)
        .map(|s| (s.start_ns, s.end_ns))
        .collect();
    busy.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(busy.len());
    for (start, end) in busy {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(stream: u64, kind: WorkKind, start_ns: u64, end_ns: u64) -> WorkSpan {
        WorkSpan {
            stream,
            kind,
            start_ns,
            end_ns,
        }
    }

    #[test]
    fn overlap_is_measured_against_other_streams_only() {
        use WorkKind::{Compute, CopyD2H, CopyH2D};
        let spans = [
            // Stream 0 computes over [10, 20) and [15, 30) (merged: [10, 30)).
            span(0, Compute, 10, 20),
            span(0, Compute, 15, 30),
            // Stream 1 copies over [0, 20): 10 of its 20 ns are hidden.
            span(1, CopyH2D, 0, 20),
            // ... and over [25, 45): 5 of 20 hidden.
            span(1, CopyD2H, 25, 45),
            // Stream 0 copies over [30, 40): nothing else computes then.
            span(0, CopyH2D, 30, 40),
            // Stream 1 computes over [35, 38): hides 3 ns of stream 0's copy.
            span(1, Compute, 35, 38),
        ];
        assert_eq!(hidden_copy_ns(&spans), (10 + 5 + 3, 20 + 20 + 10));
        assert_eq!(hidden_copy_share(&spans), Some(18.0 / 50.0));
        assert_eq!(hidden_copy_share(&spans[..2]), None);
        // Compute: [10, 30) on stream 0 and [35, 38) on stream 1.
        assert_eq!(compute_busy_ns(&spans), 20 + 3);
        assert_eq!(compute_busy_ns(&spans[2..5]), 0, "copies are not compute");
    }
}
