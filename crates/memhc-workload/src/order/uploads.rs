//! The dependency order's plan of uploads: in which order the initial nodes go to the device.
//!
//! Greedy, one node at a time: next, the node whose upload lets the most contractions run that
//! could not run before (a contraction can run once every initial node it depends on, through
//! its inputs and their producers, is uploaded); on a tie, the node whose upload brings the most
//! contractions to one missing node; then the node the queue uses first. While uploads are the
//! only thing the SMs wait for (the start of a run, and every run whose later vectors read what
//! is already on the device), this keeps work ready for them: on the Fig. 7 workloads it makes
//! about two contractions runnable per upload from the first uploads on, where uploading in the
//! order of first use makes one every other upload
//! (`docs/results/2026-11-28-schedule.md`).
//!
//! The bookkeeping is each contraction's set of initial ancestors, as a list. Their total
//! length is bounded ([`ANCESTOR_LIMIT`]); a workload whose lists would be longer (long queues
//! whose late contractions depend on thousands of nodes) is planned in the order of first use.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The most entries the ancestor lists may hold together (4-byte entries, each in two lists:
/// 128 MiB) before the plan falls back to the order of first use.
pub const ANCESTOR_LIMIT: usize = 1 << 24;

/// The initial nodes of the contractions `inputs` (each contraction's two inputs, in queue
/// order), in the order to upload them. `producer[x]` is the contraction that writes node `x`
/// (`None`: an initial node). Every initial node some contraction reads appears once. A
/// producer must come before its readers in the queue; if one does not, or the ancestor lists
/// would exceed [`ANCESTOR_LIMIT`], the order is the order of first use.
pub fn upload_order(inputs: &[[usize; 2]], producer: &[Option<usize>]) -> Vec<usize> {
    // Initial nodes read, compactly numbered in the order of first use.
    let mut compact: Vec<Option<u32>> = vec![None; producer.len()];
    let mut initial: Vec<usize> = Vec::new();
    for pair in inputs {
        for &x in pair {
            if producer.get(x).copied().flatten().is_none()
                && let Some(slot) = compact.get_mut(x)
                && slot.is_none()
            {
                *slot = Some(initial.len() as u32);
                initial.push(x);
            }
        }
    }
    match Greedy::new(inputs, producer, &compact, initial.len()) {
        Some(mut g) => g.run().into_iter().map(|u| initial[u]).collect(),
        None => initial,
    }
}

/// The greedy plan's state (see the [module documentation](self)); nodes by compact number.
struct Greedy {
    /// Per contraction, its initial ancestors (sorted, distinct).
    ancestors: Vec<Vec<u32>>,
    /// Per node, the contractions that depend on it.
    dependents: Vec<Vec<u32>>,
    /// Per contraction, its ancestors not yet uploaded.
    missing: Vec<u32>,
    /// Per node, the contractions it is the last missing ancestor of.
    one: Vec<u32>,
    /// Per node, the contractions it is one of the last two missing ancestors of.
    two: Vec<u32>,
    uploaded: Vec<bool>,
    /// Candidates by (one, two, earliest first use); entries that no longer match the counts
    /// are stale.
    heap: BinaryHeap<(u32, u32, Reverse<u32>)>,
}

impl Greedy {
    fn new(
        inputs: &[[usize; 2]],
        producer: &[Option<usize>],
        compact: &[Option<u32>],
        nodes: usize,
    ) -> Option<Greedy> {
        let mut ancestors: Vec<Vec<u32>> = Vec::with_capacity(inputs.len());
        let mut total = 0usize;
        for (k, pair) in inputs.iter().enumerate() {
            let mut set: Vec<u32> = Vec::new();
            for &x in pair {
                match producer.get(x).copied().flatten() {
                    None => set.push(compact.get(x).copied().flatten()?),
                    Some(p) if p < k => set.extend_from_slice(ancestors.get(p)?),
                    Some(_) => return None,
                }
            }
            set.sort_unstable();
            set.dedup();
            total += set.len();
            if total > ANCESTOR_LIMIT {
                return None;
            }
            ancestors.push(set);
        }
        let mut dependents: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        for (k, set) in ancestors.iter().enumerate() {
            for &u in set {
                dependents[u as usize].push(k as u32);
            }
        }
        let missing: Vec<u32> = ancestors.iter().map(|s| s.len() as u32).collect();
        let (mut one, mut two) = (vec![0u32; nodes], vec![0u32; nodes]);
        for set in &ancestors {
            match set.as_slice() {
                [u] => one[*u as usize] += 1,
                [u, v] => {
                    two[*u as usize] += 1;
                    two[*v as usize] += 1;
                }
                _ => {}
            }
        }
        let heap = (0..nodes as u32)
            .map(|u| (one[u as usize], two[u as usize], Reverse(u)))
            .collect();
        Some(Greedy {
            ancestors,
            dependents,
            missing,
            one,
            two,
            uploaded: vec![false; nodes],
            heap,
        })
    }

    fn push(&mut self, u: u32) {
        let i = u as usize;
        self.heap.push((self.one[i], self.two[i], Reverse(u)));
    }

    /// The nodes' compact numbers in the order to upload them.
    fn run(&mut self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.uploaded.len());
        while let Some((one, two, Reverse(u))) = self.heap.pop() {
            let i = u as usize;
            if self.uploaded[i] || self.one[i] != one || self.two[i] != two {
                continue;
            }
            self.uploaded[i] = true;
            order.push(i);
            let dependents = std::mem::take(&mut self.dependents[i]);
            for &k in &dependents {
                let k = k as usize;
                let before = self.missing[k];
                self.missing[k] -= 1;
                if before != 2 && before != 3 {
                    continue;
                }
                let left: Vec<u32> = self.ancestors[k]
                    .iter()
                    .copied()
                    .filter(|&v| !self.uploaded[v as usize])
                    .collect();
                if let [v] = left.as_slice() {
                    // Two missing before, this one among them: `v` is now the last.
                    self.two[*v as usize] -= 1;
                    self.one[*v as usize] += 1;
                    self.push(*v);
                } else {
                    for &v in &left {
                        self.two[v as usize] += 1;
                        self.push(v);
                    }
                }
            }
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_upload_enables_what_it_can() {
        // Nodes 0..6 initial; contraction 0 reads 0, 1; contraction 1 reads 2, 3; contraction
        // 2 reads 4 and contraction 0's output (6); contraction 3 reads 5 and 6.
        let inputs = [[0, 1], [2, 3], [4, 6], [5, 6]];
        let mut producer = vec![None; 8];
        producer[6] = Some(0);
        producer[7] = Some(1);
        let order = upload_order(&inputs, &producer);
        assert_eq!(order.len(), 6);
        // 0 and 1 first (with them contraction 0 runs and 2 and 3 are one upload away), then 4
        // and 5 (one contraction each), then the pair 2, 3.
        assert_eq!(&order[..2], &[0, 1]);
        assert_eq!(&order[2..4], &[4, 5]);
        assert_eq!(&order[4..], &[2, 3]);
    }

    #[test]
    fn a_reader_before_its_producer_falls_back_to_first_use() {
        let inputs = [[3, 1], [0, 2]];
        let mut producer = vec![None; 4];
        producer[3] = Some(1);
        assert_eq!(upload_order(&inputs, &producer), vec![1, 0, 2]);
    }
}
