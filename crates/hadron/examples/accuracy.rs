//! Prints the relative Frobenius error of meson4x4 contractions and traces on the host backend
//! against the independent reference, for several sizes, both accumulation schemes, packed and
//! unpacked nodes: `cargo run --release -p hadron --example accuracy`.

use std::sync::Arc;

use hadron::{
    Accumulation, Contraction, Engine, HadronNode, NodeShape, SpinMapping, TracePairs, reference,
};
use memhc_core::{Config, Runtime};
use memhc_host::host::HostBackend;

fn main() -> Result<(), hadron::HadronError> {
    let mapping = Arc::new(SpinMapping::meson4x4());
    let pairs = TracePairs::meson4x4();
    println!(
        "{:>5} {:>12} {:>8} {:>14} {:>14}",
        "N", "accumulation", "packed", "contraction", "trace"
    );
    for n in [3usize, 17, 24, 64, 128] {
        let shape = NodeShape::meson(n)?;
        let (x, y) = (
            HadronNode::random(&shape, n as u64),
            HadronNode::random(&shape, 7 * n as u64),
        );
        let want = reference::contract(&x, &y, Default::default(), Default::default(), &mapping)?;
        let want_trace = reference::trace(&want, &y, &pairs)?;
        for acc in [Accumulation::Layered, Accumulation::Temporaries] {
            for packing in [true, false] {
                let config = Config {
                    packing,
                    ..Config::default()
                };
                let rt = Runtime::new(HostBackend::new(1 << 30), config)?;
                let mut e = Engine::new(rt).with_accumulation(acc);
                let (a, b) = (e.register(x.clone())?, e.register(y.clone())?);
                let out = e.contract(0, &Contraction::new(a, b, mapping.clone()))?;
                let trace = e.trace(0, out, b, &pairs)?;
                let got = e.read(out)?;
                println!(
                    "{n:>5} {:>12} {packing:>8} {:>14.3e} {:>14.3e}",
                    format!("{acc:?}"),
                    reference::relative_error(&got, &want),
                    (trace - want_trace).norm() / want_trace.norm()
                );
            }
        }
    }
    Ok(())
}
