//! The protocol between the master (rank 0) and the workers: every message that crosses the
//! network, and its encoding (JSON bytes). Only unit assignments and results cross it; the
//! data of a unit (node files) is read by the rank that runs it.
//!
//! A worker speaks first (`Ready`), then only in answer to an assignment: heartbeats while it
//! runs the unit, then `Done` or `Failed`. The master speaks only in answer to `Ready`,
//! `Done` or `Failed`: the next `Assign`, or `Stop`. A worker answers `Stop` with `Bye`.

use serde::{Deserialize, Serialize};

use crate::error::TransportError;

/// One message between the master and a worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Message {
    /// Worker → master: set up, asks for a unit.
    Ready,
    /// Worker → master: still running `unit` (sent every heartbeat interval).
    Heartbeat {
        /// The unit's index.
        unit: usize,
    },
    /// Worker → master: `unit` is done; `result` is its result (the job's text). Asks for
    /// the next unit.
    Done {
        /// The unit's index.
        unit: usize,
        /// The result.
        result: String,
        /// Seconds the unit took on the worker.
        seconds: f64,
    },
    /// Worker → master: `unit` (or the worker's setup, `None`) failed with `message`, one
    /// line.
    Failed {
        /// The unit's index, `None` for the worker's setup.
        unit: Option<usize>,
        /// The error, one line.
        message: String,
    },
    /// Worker → master: stopped, as asked.
    Bye,
    /// Master → worker: run unit `unit`, described by `spec` (the job's text).
    Assign {
        /// The unit's index.
        unit: usize,
        /// The unit's key (its name in the journal and in messages).
        key: String,
        /// What to run.
        spec: String,
    },
    /// Master → worker: no more units; answer `Bye` and stop.
    Stop,
}

impl Message {
    /// The message as bytes (JSON).
    pub fn encode(&self) -> Vec<u8> {
        // A Message is strings, numbers and enum tags: serialising it cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Reads a message sent by `rank`.
    pub fn decode(bytes: &[u8], rank: usize) -> Result<Self, TransportError> {
        serde_json::from_slice(bytes).map_err(|e| TransportError::Malformed {
            rank,
            message: e.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_through_bytes() {
        let all = [
            Message::Ready,
            Message::Heartbeat { unit: 3 },
            Message::Done {
                unit: 4,
                result: "{\"x\": [0.1, -2e-300]}\n\"quoted\"".into(),
                seconds: 0.25,
            },
            Message::Failed {
                unit: None,
                message: "bad".into(),
            },
            Message::Bye,
            Message::Assign {
                unit: 7,
                key: "c1.b0002".into(),
                spec: "{}".into(),
            },
            Message::Stop,
        ];
        for m in all {
            assert_eq!(Message::decode(&m.encode(), 1), Ok(m));
        }
        assert!(matches!(
            Message::decode(b"{\"assign\": 1}", 5),
            Err(TransportError::Malformed { rank: 5, .. })
        ));
    }
}
