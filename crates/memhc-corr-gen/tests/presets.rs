//! The presets' sizes: exact counts (a change to the generator shows here), and how close
//! they come to the MemHC paper's Table 4.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use memhc_corr_gen::presets::Preset;
use memhc_corr_gen::sharing::shared_contractions;
use memhc_corr_gen::wick::Topology;

#[test]
fn preset_counts() {
    for p in Preset::ALL {
        let g = p.generate();
        let shared = shared_contractions(&g);
        println!(
            "{p}: initial {} shared {} total {} file {} graphs {} traces {} {:?}",
            g.nodes.len(),
            shared,
            g.nodes.len() + shared,
            g.contractions(),
            g.graphs.len(),
            g.traces(),
            g.topology_counts()
        );
    }
}

#[test]
fn the_presets_have_the_topologies_of_their_channels() {
    use Topology::*;
    // a1 -> rho pi is isovector: no vacuum graphs, and the crossed graphs cancel (tests/wick.rs).
    let want = |p: Preset| match p {
        Preset::A1RhoPi => vec![Connected, Direct, Triangle, Box],
        Preset::F0d2 | Preset::F0d4 => vec![Connected, Direct, Triangle, Crossed, Box, Vacuum],
    };
    for p in Preset::ALL {
        let kinds: Vec<Topology> = p
            .generate()
            .topology_counts()
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert_eq!(kinds, want(p), "{p}");
    }
}
