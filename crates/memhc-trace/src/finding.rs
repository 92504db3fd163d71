//! What a report finds: the patterns, one finding of a pattern, and the thresholds.

use memhc_core::ObjectId;

/// The patterns a report looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Memory given to an object launches before its first use.
    EarlyAllocation,
    /// Memory kept launches after an object's last use.
    LateDeallocation,
    /// A driver allocation where freed memory of about the same size could have served.
    RedundantAllocation,
    /// Memory no launch used.
    UnusedAllocation,
    /// Memory still held when the log ended.
    Leak,
    /// A resident object idle for launches between two uses.
    TemporaryIdleness,
    /// A value overwritten before anything read it.
    DeadWrite,
    /// A value copied to the device again after the runtime gave its device copy up.
    RepeatedCopy,
    /// A value copied to the device again after its device copy was evicted.
    RefetchAfterEviction,
}

impl Pattern {
    /// Every pattern, in the order reports list them.
    pub const ALL: [Pattern; 9] = [
        Pattern::EarlyAllocation,
        Pattern::LateDeallocation,
        Pattern::RedundantAllocation,
        Pattern::UnusedAllocation,
        Pattern::Leak,
        Pattern::TemporaryIdleness,
        Pattern::DeadWrite,
        Pattern::RepeatedCopy,
        Pattern::RefetchAfterEviction,
    ];

    /// The name reports use.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::EarlyAllocation => "early allocation",
            Pattern::LateDeallocation => "late deallocation",
            Pattern::RedundantAllocation => "redundant allocation",
            Pattern::UnusedAllocation => "unused allocation",
            Pattern::Leak => "leak",
            Pattern::TemporaryIdleness => "temporary idleness",
            Pattern::DeadWrite => "dead write",
            Pattern::RepeatedCopy => "repeated copy",
            Pattern::RefetchAfterEviction => "refetch after eviction",
        }
    }
}

/// One instance of a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// The pattern.
    pub pattern: Pattern,
    /// The object.
    pub object: ObjectId,
    /// For a redundant allocation, the object whose freed memory could have served.
    pub other: Option<ObjectId>,
    /// The queue index where it starts.
    pub queue: u64,
    /// Its distance in queue steps.
    pub distance: u64,
    /// The object's bytes.
    pub bytes: u64,
}

/// The thresholds of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ReportOptions {
    /// Temporary idleness: at least this many launches between two uses (DRGPUM: 2).
    pub idle_steps: u64,
    /// Redundant allocation: sizes within this many percent (DRGPUM: 10).
    pub size_tolerance_percent: u32,
    /// How many memory peaks to report (DRGPUM: 2).
    pub peaks: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            idle_steps: 2,
            size_tolerance_percent: 10,
            peaks: 2,
        }
    }
}
