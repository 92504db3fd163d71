//! Wick contractions against cases worked out by hand (docs/correlator-presets.md).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use memhc_corr_gen::flavour::{isoscalar, isovector, single, two_isovectors};
use memhc_corr_gen::wick::{Diagram, Slot, Topology, contract};

use Slot::{Sink, Source};

fn graph<'a>(graphs: &'a [Diagram], loops: &[&[Slot]]) -> Option<&'a Diagram> {
    graphs
        .iter()
        .find(|g| g.loops.len() == loops.len() && g.loops.iter().zip(loops).all(|(a, b)| a == b))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn a_pion_two_point_function_is_one_loop_with_a_minus_sign() {
    let pi = single(isovector(1));
    let g = contract(&pi, &pi);
    assert_eq!(g.len(), 1);
    assert!(close(g[0].coeff, -1.0));
    assert_eq!(g[0].loops, vec![vec![Sink(0), Source(0)]]);
    assert_eq!(Topology::of(&g[0].loops), Topology::Connected);
}

#[test]
fn pi_plus_pi_plus_is_two_direct_minus_two_crossed() {
    // I = 2: <π+π+ (π+π+)†> = D1 + D2 - C1 - C2 (by hand: the quark u of a sink pion goes to
    // either source pion, the quark d of a source pion to either sink pion).
    let op = two_isovectors(2).unwrap();
    let g = contract(&op, &op);
    assert_eq!(g.len(), 4);
    let d1 = graph(&g, &[&[Sink(0), Source(0)], &[Sink(1), Source(1)]]).unwrap();
    let d2 = graph(&g, &[&[Sink(0), Source(1)], &[Sink(1), Source(0)]]).unwrap();
    let c1 = graph(&g, &[&[Sink(0), Source(0), Sink(1), Source(1)]]).unwrap();
    let c2 = graph(&g, &[&[Sink(0), Source(1), Sink(1), Source(0)]]).unwrap();
    for d in [d1, d2] {
        assert!(close(d.coeff, 1.0));
        assert_eq!(Topology::of(&d.loops), Topology::Direct);
    }
    for c in [c1, c2] {
        assert!(close(c.coeff, -1.0));
        assert_eq!(Topology::of(&c.loops), Topology::Crossed);
    }
}

#[test]
fn rho_to_two_pions_is_two_triangles_and_the_tadpoles_cancel() {
    // ρ+ -> (π+π0 - π0π+)/√2, worked out by hand over the four flavour components: the two
    // orientations of the triangle with opposite signs; the π0 tadpoles cancel in the isospin
    // limit.
    let rho = single(isovector(1));
    let pipi = two_isovectors(1).unwrap();
    let g = contract(&rho, &pipi);
    assert_eq!(g.len(), 2);
    let t1 = graph(&g, &[&[Sink(0), Source(1), Source(0)]]).unwrap();
    let t2 = graph(&g, &[&[Sink(0), Source(0), Source(1)]]).unwrap();
    assert!(close(t1.coeff, -1.0) && close(t2.coeff, 1.0));
    assert!(
        g.iter()
            .all(|d| Topology::of(&d.loops) == Topology::Triangle)
    );
}

fn topologies(graphs: &[Diagram]) -> Vec<Topology> {
    let mut t: Vec<Topology> = graphs.iter().map(|d| Topology::of(&d.loops)).collect();
    t.sort();
    t.dedup();
    t
}

#[test]
fn isovector_two_meson_operators_have_no_vacuum_graphs_and_isoscalars_do() {
    // I = 1 (antisymmetric in isospin): the crossed graphs cancel, by hand from
    // ε_kab ε_kcd tr(τa τc τb τd) = 0 with tr(τa τc τb τd) = 2(δac δbd - δab δcd + δad δbc).
    let i1 = two_isovectors(1).unwrap();
    assert_eq!(
        topologies(&contract(&i1, &i1)),
        vec![Topology::Direct, Topology::Box]
    );
    let i0 = two_isovectors(0).unwrap();
    assert_eq!(
        topologies(&contract(&i0, &i0)),
        vec![
            Topology::Direct,
            Topology::Crossed,
            Topology::Box,
            Topology::Vacuum
        ]
    );
    let f0 = single(isoscalar());
    assert_eq!(
        topologies(&contract(&f0, &f0)),
        vec![Topology::Connected, Topology::Vacuum]
    );
    assert_eq!(
        topologies(&contract(&f0, &i0)),
        vec![Topology::Triangle, Topology::Vacuum]
    );
}
