//! Admission: what a correlator file or a run of its plan needs, worked out before any value is
//! made, so that a request that could never run is refused in one line (a typed error) instead
//! of aborting the process on a failed allocation.
//!
//! * [`admit_file`] (called by [`load`](crate::load) and [`parse`](crate::parse)): a real run
//!   holds the values of the nodes it reads on the host, all of them from the start; a file
//!   whose node values together exceed the host memory
//!   ([`hadron::admission::host_memory`]) is refused with
//!   [`HadronError::OutOfHostMemory`](hadron::HadronError::OutOfHostMemory).
//! * [`admit_run`]: before a run, the largest single step (a contraction's two inputs and its
//!   output, a trace's two inputs and its scratch) must fit the device budget, else
//!   [`memhc_core::Error::DoesNotFit`]; and the host must hold the nodes' values plus, on the
//!   host backend, the device memory it plays.

use hadron::admission::{admit_host, human_bytes};

use crate::checked::CheckedFile;
use crate::error::{CorrError, Result};
use crate::plan::Plan;

/// Bytes of one complex double.
const ELEMENT_BYTES: u64 = 16;

/// The bytes of every node's values in `checked`, checked (no overflow).
pub fn model_bytes(checked: &CheckedFile) -> Result<u64> {
    checked.nodes.iter().try_fold(0u64, |sum, n| {
        let bytes = n.shape.layout().map_err(CorrError::from)?.bytes();
        sum.checked_add(bytes as u64).ok_or_else(|| {
            CorrError::TooLarge("the node values together exceed 64 bits of bytes".into())
        })
    })
}

/// Refuses a checked file whose node values cannot all be held on this host (see the
/// [module documentation](self)). `file` names it in the message.
pub fn admit_file(checked: &CheckedFile, file: &str) -> Result<()> {
    let bytes = model_bytes(checked)?;
    admit_host(&format!("{file}: the values of its nodes"), bytes).map_err(CorrError::from)
}

/// The most device bytes one step of `plan` holds at once: a contraction's inputs (once when
/// A is B) and output, or a trace's inputs and its scratch of one complex number per pair and
/// row. Every run needs at least this much device memory, whatever the policy.
pub fn largest_step_bytes(plan: &Plan) -> u64 {
    let products = plan.products.iter().enumerate().map(|(i, p)| {
        let inputs = if p.a == p.b {
            plan.bytes(p.a)
        } else {
            plan.bytes(p.a).saturating_add(plan.bytes(p.b))
        };
        inputs.saturating_add(plan.bytes(crate::plan::Operand::Product(i)))
    });
    let traces = plan.traces.iter().map(|t| {
        let inputs = if t.a == t.b {
            plan.bytes(t.a)
        } else {
            plan.bytes(t.a).saturating_add(plan.bytes(t.b))
        };
        let scratch = (t.pairs.pairs().len() as u64)
            .saturating_mul(t.rows as u64)
            .saturating_mul(ELEMENT_BYTES);
        inputs.saturating_add(scratch)
    });
    products.chain(traces).max().unwrap_or(0)
}

/// Refuses a run of `plan` under a device budget of `budget` bytes before anything is made:
/// [`memhc_core::Error::DoesNotFit`] when its largest step cannot fit the budget, and
/// [`hadron::HadronError::OutOfHostMemory`] when the host cannot hold the values the run reads plus,
/// when `host_device` (the host backend, which plays the device in host memory), the device
/// memory it may use (the budget, or the plan's peak when that is less).
pub fn admit_run(plan: &Plan, budget: u64, host_device: bool) -> Result<()> {
    let step = largest_step_bytes(plan);
    if step > budget {
        return Err(CorrError::Runtime(memhc_core::Error::DoesNotFit {
            needed: usize::try_from(step).unwrap_or(usize::MAX),
            available: usize::try_from(budget).unwrap_or(usize::MAX),
            budget: usize::try_from(budget).unwrap_or(usize::MAX),
        }));
    }
    let values = plan
        .used_nodes()
        .into_iter()
        .map(|n| plan.bytes(crate::plan::Operand::Node(n)))
        .chain((0..plan.identities.len()).map(|i| plan.bytes(crate::plan::Operand::Identity(i))))
        .fold(0u64, u64::saturating_add);
    let device = if host_device {
        budget.min(plan.report.peak_bytes_with_pool.max(step))
    } else {
        0
    };
    let needed = values.saturating_add(device);
    admit_host(
        &format!(
            "the run (node values {}, the host backend's device memory {})",
            human_bytes(values),
            human_bytes(device)
        ),
        needed,
    )
    .map_err(CorrError::from)
}
