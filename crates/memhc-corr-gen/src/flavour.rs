//! Isospin wave functions of the operators the presets use, in the convention of the
//! antiquark doublet `(-d̄, ū)`: `|1,+1⟩ = -d̄u`, `|1,0⟩ = (ūu - d̄d)/√2`, `|1,-1⟩ = ūd`,
//! `|0,0⟩ = (ūu + d̄d)/√2`; two-meson operators from two isovectors by the Clebsch-Gordan
//! coefficients of `1 ⊗ 1`.

use crate::wick::{Bilinear, Component, Flavour, FlavourOp};

use Flavour::{Down, Up};

/// The isovector `|1, i3⟩` as components of one bilinear (`i3` in -1..=1; others give none).
pub fn isovector(i3: i32) -> Vec<(f64, Bilinear)> {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    match i3 {
        1 => vec![(-1.0, Bilinear::new(Down, Up))],
        0 => vec![(h, Bilinear::new(Up, Up)), (-h, Bilinear::new(Down, Down))],
        -1 => vec![(1.0, Bilinear::new(Up, Down))],
        _ => Vec::new(),
    }
}

/// The light isoscalar `(ūu + d̄d)/√2`.
pub fn isoscalar() -> Vec<(f64, Bilinear)> {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    vec![(h, Bilinear::new(Up, Up)), (h, Bilinear::new(Down, Down))]
}

/// A one-meson operator with the given flavour components.
pub fn single(parts: Vec<(f64, Bilinear)>) -> FlavourOp {
    FlavourOp {
        components: parts
            .into_iter()
            .map(|(coeff, b)| Component {
                coeff,
                bilinears: vec![b],
            })
            .collect(),
    }
}

/// The two-isovector operator of total isospin `isospin` (0, 1 or 2) at its highest `I3`
/// (`|0,0⟩`, `|1,1⟩`, `|2,2⟩`); slot 0 is the first meson, slot 1 the second. `None` for
/// another isospin.
pub fn two_isovectors(isospin: u32) -> Option<FlavourOp> {
    let s2 = std::f64::consts::FRAC_1_SQRT_2;
    let s3 = 1.0 / 3f64.sqrt();
    // (coefficient, i3 of the first meson, i3 of the second)
    let cg: Vec<(f64, i32, i32)> = match isospin {
        2 => vec![(1.0, 1, 1)],
        1 => vec![(s2, 1, 0), (-s2, 0, 1)],
        0 => vec![(s3, 1, -1), (-s3, 0, 0), (s3, -1, 1)],
        _ => return None,
    };
    let mut components = Vec::new();
    for (c, m1, m2) in cg {
        for (c1, b1) in isovector(m1) {
            for (c2, b2) in isovector(m2) {
                components.push(Component {
                    coeff: c * c1 * c2,
                    bilinears: vec![b1, b2],
                });
            }
        }
    }
    Some(FlavourOp { components })
}

/// The two-isovector operator in the charge basis: `|1, i3a⟩ |1, i3b⟩` (no isospin
/// projection, as when the isospin combinations are formed afterwards from the correlators).
pub fn charge_pair(i3a: i32, i3b: i32) -> FlavourOp {
    let mut components = Vec::new();
    for (c1, b1) in isovector(i3a) {
        for (c2, b2) in isovector(i3b) {
            components.push(Component {
                coeff: c1 * c2,
                bilinears: vec![b1, b2],
            });
        }
    }
    FlavourOp { components }
}
