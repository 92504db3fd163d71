//! The raw form of a workload file: what serde reads and writes, before any check.

use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::error::Result;

use super::*;

/// Just the format key, read first so that a file of another version is reported as such
/// rather than by whatever field it has that this version does not know.
#[derive(Deserialize)]
pub(super) struct Probe {
    #[serde(default)]
    pub(super) format: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    pub(super) format: String,
    pub(super) nodes: Vec<RawNode>,
    pub(super) vectors: Vec<Vec<RawContraction>>,
    #[serde(default)]
    pub(super) traces: Vec<RawTrace>,
    #[serde(default)]
    pub(super) results: Vec<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNode {
    pub(super) id: String,
    pub(super) spins: usize,
    pub(super) dims: Vec<usize>,
    pub(super) data: RawData,
}

/// Exactly one of the two must be given (checked after parsing, with a JSON path).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawData {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) npy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) random: Option<RawSeed>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSeed {
    pub(super) seed: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawContraction {
    pub(super) a: String,
    pub(super) b: String,
    pub(super) out: String,
    pub(super) terms: Indices<3>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) out_spins: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) a_view: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) b_view: Option<usize>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTrace {
    pub(super) a: String,
    pub(super) b: String,
    pub(super) pairs: Indices<2>,
}

/// Terms (`N = 3`: `[out, a, b]`) or pairs (`N = 2`: `[a, b]`): a name or an explicit list.
pub(super) enum Indices<const N: usize> {
    Named(String),
    List(Vec<[usize; N]>),
}

impl<const N: usize> Serialize for Indices<N> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Indices::Named(name) => s.serialize_str(name),
            Indices::List(list) => s.collect_seq(list.iter().map(|e| e.as_slice())),
        }
    }
}

impl<'de, const N: usize> Deserialize<'de> for Indices<N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IndicesVisitor<const N: usize>;

        impl<const N: usize> IndicesVisitor<N> {
            fn entry() -> &'static str {
                if N == 3 { "[out, a, b]" } else { "[a, b]" }
            }
        }

        impl<'de, const N: usize> Visitor<'de> for IndicesVisitor<N> {
            type Value = Indices<N>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "\"{MESON4X4}\" or a list of {}", Self::entry())
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok(Indices::Named(s.to_owned()))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(entry) = seq.next_element::<Vec<usize>>()? {
                    let entry: [usize; N] = entry.try_into().map_err(|e: Vec<usize>| {
                        de::Error::invalid_length(e.len(), &Self::entry())
                    })?;
                    list.push(entry);
                }
                Ok(Indices::List(list))
            }
        }

        d.deserialize_any(IndicesVisitor::<N>)
    }
}
