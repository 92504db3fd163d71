//! Orderings that only a busy queue shows: runs whose copies, launches and read-backs overlap on
//! several streams, repeated, each verified against the reference. A missing wait between
//! streams makes such a run fail only sometimes, so each configuration runs many times.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use common::{stderr, synth};

/// Page-locked node data, prefetch and oversubscription on four streams. A node's host memory
/// was copied to the device on one stream; an eviction handed the device block on without
/// waiting; the node was released and its host memory pooled as if no copy still read it; a
/// read-back on another stream then landed in it while the copy was still reading, and a
/// result came out wrong (issue 29; 12 failures in 20 runs before the host copy kept its reads
/// in flight).
#[test]
fn page_locked_nodes_are_not_reused_while_a_copy_still_reads_them() {
    let args = [
        "--tensor-size",
        "6",
        "--vector-size",
        "6",
        "--vectors",
        "12",
        "--policy",
        "mru,lru",
        "--mode",
        "optimal",
        "--prefetch",
        "6",
        "--sweep",
        "oversub=0.5,1.5",
        "--host-memory",
        "pinned",
        "--alloc",
        "handover,arena",
        "--streams",
        "4",
        "--verify",
    ];
    for run in 0..25 {
        let o = synth(&args);
        assert!(o.status.success(), "run {run}: {}", stderr(&o));
    }
}
