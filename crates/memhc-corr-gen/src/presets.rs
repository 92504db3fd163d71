//! The presets: operator bases and time pairs chosen so that the generated workloads match the
//! MemHC paper's Table 4 (see docs/correlator-presets.md for how close each comes and why).

use std::fmt;
use std::str::FromStr;

use crate::build::build;
use crate::flavour::{isoscalar, isovector, single, two_isovectors};
use crate::physics::{Generated, Interpolator, Meson, Momentum, Term, TimePair};
use crate::wick::FlavourOp;

/// The momenta of a shell `|p|² = n2` (in units of `2π/L`), in a fixed order.
pub fn shell(n2: i32) -> Vec<Momentum> {
    let r = (n2 as f64).sqrt().ceil() as i32;
    let mut out = Vec::new();
    for x in -r..=r {
        for y in -r..=r {
            for z in -r..=r {
                if x * x + y * y + z * z == n2 {
                    out.push([x, y, z]);
                }
            }
        }
    }
    out
}

/// A one-meson isovector interpolator at momentum `p`.
pub fn isovector_op(name: &str, operator: &str, displacement: &str, p: Momentum) -> Interpolator {
    Interpolator {
        name: name.to_owned(),
        flavour: single(isovector(1)),
        terms: vec![Term {
            coeff: 1.0,
            mesons: vec![Meson::new(operator, p, displacement)],
        }],
    }
}

/// A one-meson light isoscalar interpolator at momentum `p`.
pub fn isoscalar_op(name: &str, operator: &str, displacement: &str, p: Momentum) -> Interpolator {
    Interpolator {
        flavour: single(isoscalar()),
        ..isovector_op(name, operator, displacement, p)
    }
}

/// A two-meson interpolator of flavour structure `flavour` and total momentum `total`: the
/// sum over the momenta `p` of the shell `|p|² = n2` of `first(p) second(total - p)`,
/// normalised.
pub fn two_meson_op(
    name: &str,
    flavour: FlavourOp,
    first: &str,
    second: &str,
    total: Momentum,
    n2: i32,
) -> Interpolator {
    let ps = shell(n2);
    let w = 1.0 / (ps.len().max(1) as f64).sqrt();
    Interpolator {
        name: name.to_owned(),
        flavour,
        terms: ps
            .into_iter()
            .map(|p| Term {
                coeff: w,
                mesons: vec![
                    Meson::new(first, p, ""),
                    Meson::new(
                        second,
                        [total[0] - p[0], total[1] - p[1], total[2] - p[2]],
                        "",
                    ),
                ],
            })
            .collect(),
    }
}

/// Every correlator of a basis of `n` operators: all (sink, source) pairs.
pub fn matrix(n: usize) -> Vec<(usize, usize)> {
    (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).collect()
}

/// Builds a basis's full correlator matrix at the given time pairs.
pub fn correlator_matrix(ops: &[Interpolator], times: &[TimePair]) -> Generated {
    build(ops, &matrix(ops.len()), times)
}

/// The displacements (derivative constructions) of the one-meson operators of a basis, in
/// order: local, one derivative, two derivatives.
const DISPLACEMENTS: [&str; 15] = [
    "",
    "nabla_z",
    "B_z",
    "D_z",
    "nabla_x.nabla_x",
    "nabla_y.nabla_y",
    "nabla_z.nabla_z",
    "nabla_x.nabla_z",
    "nabla_y.nabla_z",
    "nabla_x.nabla_y",
    "B_x.nabla_y",
    "B_y.nabla_x",
    "D_x.nabla_x",
    "D_y.nabla_y",
    "D_z.nabla_z",
];

/// One row of the MemHC paper's Table 4.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaperRow {
    /// The tensor size `N`.
    pub tensor_size: usize,
    /// "#Total Nodes": initial nodes and unique intermediates.
    pub nodes: usize,
    /// "#Contractions".
    pub contractions: usize,
    /// "Memory (GBytes)".
    pub gbytes: f64,
}

/// A preset correlator workload, after the MemHC paper's Table 4.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    /// The a1 (1++, isovector) at rest and rho-pi scattering: fifteen one-meson a1 operators
    /// and the S-wave rho-pi operator, both at rest, at one time pair.
    A1RhoPi,
    /// The f0 (0++, isoscalar) in the moving frame `d = (1,1,0)` and pi-pi (I = 0)
    /// scattering: nine one-meson f0 operators, pi-pi with the first pion at rest or at
    /// `|p|² = 1`, at three time pairs.
    F0d2,
    /// The same in the frame `d = (0,0,2)`, with six one-meson f0 operators.
    F0d4,
}

impl Preset {
    /// Every preset.
    pub const ALL: [Preset; 3] = [Preset::A1RhoPi, Preset::F0d2, Preset::F0d4];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Preset::A1RhoPi => "a1_rhopi",
            Preset::F0d2 => "f0d2",
            Preset::F0d4 => "f0d4",
        }
    }

    /// The paper's row.
    pub fn paper(self) -> PaperRow {
        match self {
            Preset::A1RhoPi => PaperRow {
                tensor_size: 128,
                nodes: 106,
                contractions: 68,
                gbytes: 0.44,
            },
            Preset::F0d2 => PaperRow {
                tensor_size: 256,
                nodes: 2173,
                contractions: 1968,
                gbytes: 36.28,
            },
            Preset::F0d4 => PaperRow {
                tensor_size: 256,
                nodes: 2173,
                contractions: 1970,
                gbytes: 36.32,
            },
        }
    }

    /// The operator basis (every sink-source pair is a correlator).
    pub fn basis(self) -> Vec<Interpolator> {
        match self {
            Preset::A1RhoPi => {
                let rest = [0, 0, 0];
                let mut ops: Vec<Interpolator> = DISPLACEMENTS
                    .iter()
                    .map(|d| isovector_op(&op_name("a1", d), "a1_z", d, rest))
                    .collect();
                if let Some(flavour) = two_isovectors(1) {
                    ops.push(two_meson_op("rhopi", flavour, "rho_z", "pi", rest, 0));
                }
                ops
            }
            Preset::F0d2 => f0_basis([1, 1, 0], 9, &[0, 1]),
            Preset::F0d4 => f0_basis([0, 0, 2], 6, &[0, 1]),
        }
    }

    /// The (source, sink) time pairs.
    pub fn times(self) -> Vec<TimePair> {
        let pairs: &[u32] = match self {
            Preset::A1RhoPi => &[8],
            Preset::F0d2 | Preset::F0d4 => &[8, 9, 10],
        };
        pairs
            .iter()
            .map(|&sink| TimePair { source: 0, sink })
            .collect()
    }

    /// The workload: the full correlator matrix of the basis at the time pairs.
    pub fn generate(self) -> Generated {
        correlator_matrix(&self.basis(), &self.times())
    }
}

fn op_name(base: &str, displacement: &str) -> String {
    if displacement.is_empty() {
        base.to_owned()
    } else {
        format!("{base}_{displacement}")
    }
}

/// `singles` one-meson isoscalars at total momentum `total`, then one I = 0 pi-pi operator
/// per shell of the first pion's momentum.
fn f0_basis(total: Momentum, singles: usize, shells: &[i32]) -> Vec<Interpolator> {
    let mut ops: Vec<Interpolator> = DISPLACEMENTS[..singles]
        .iter()
        .map(|d| isoscalar_op(&op_name("f0", d), "f0", d, total))
        .collect();
    for &n2 in shells {
        if let Some(flavour) = two_isovectors(0) {
            ops.push(two_meson_op(
                &format!("pipi_p{n2}"),
                flavour,
                "pi",
                "pi",
                total,
                n2,
            ));
        }
    }
    ops
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A preset name that is none of [`Preset::ALL`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPreset(pub String);

impl fmt::Display for UnknownPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown preset '{}' (a1_rhopi, f0d2 or f0d4)", self.0)
    }
}

impl std::error::Error for UnknownPreset {}

impl FromStr for Preset {
    type Err = UnknownPreset;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| UnknownPreset(s.to_owned()))
    }
}
