//! A collective as point-to-point messages: per rank, an ordered list of steps. The n-th send
//! from `a` to `b` matches the n-th receive at `b` from `a` (no tags), as MPI's non-overtaking
//! rule orders messages within one communicator.

use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One step of one rank, in program order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Step {
    /// A blocking send of `bytes` to rank `to`.
    Send { to: u32, bytes: u64 },
    /// A blocking receive of `bytes` from rank `from`.
    Recv { from: u32, bytes: u64 },
    /// `MPI_Sendrecv`: both halves issued at the call, returning when both complete.
    SendRecv {
        to: u32,
        send_bytes: u64,
        from: u32,
        recv_bytes: u64,
    },
    /// Local reduction of `bytes` (costs `bytes · gamma`).
    Reduce { bytes: u64 },
}

impl Step {
    /// `(peer, bytes)` of the send half, if any.
    pub fn send_half(&self) -> Option<(u32, u64)> {
        match *self {
            Step::Send { to, bytes } => Some((to, bytes)),
            Step::SendRecv { to, send_bytes, .. } => Some((to, send_bytes)),
            _ => None,
        }
    }

    /// `(peer, bytes)` of the receive half, if any.
    pub fn recv_half(&self) -> Option<(u32, u64)> {
        match *self {
            Step::Recv { from, bytes } => Some((from, bytes)),
            Step::SendRecv {
                from, recv_bytes, ..
            } => Some((from, recv_bytes)),
            _ => None,
        }
    }
}

/// Per rank, the ordered steps of one collective call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub ranks: Vec<Vec<Step>>,
}

/// No message on this half of a step.
pub const NONE: u32 = u32::MAX;

/// Which message each step's send and receive halves carry (ids index [`Matching::bytes`]).
#[derive(Clone, Debug, Default)]
pub struct Matching {
    /// `[rank][step] = (send message, receive message)`, [`NONE`] where the half is absent.
    pub ids: Vec<Vec<(u32, u32)>>,
    /// Bytes of each message.
    pub bytes: Vec<u64>,
    /// `(sender, receiver)` of each message.
    pub ends: Vec<(u32, u32)>,
}

impl Schedule {
    /// An empty schedule for `p` ranks.
    pub fn new(p: usize) -> Schedule {
        Schedule {
            ranks: vec![Vec::new(); p],
        }
    }

    /// Number of steps over all ranks.
    pub fn steps(&self) -> usize {
        self.ranks.iter().map(Vec::len).sum()
    }

    /// The same messages flowing the other way, each rank's steps in reverse order: a scatter
    /// tree becomes a gather tree, a broadcast tree a reduction tree without the reductions.
    pub fn reversed(&self) -> Schedule {
        let flip = |s: &Step| match *s {
            Step::Send { to, bytes } => Step::Recv { from: to, bytes },
            Step::Recv { from, bytes } => Step::Send { to: from, bytes },
            Step::SendRecv {
                to,
                send_bytes,
                from,
                recv_bytes,
            } => Step::SendRecv {
                to: from,
                send_bytes: recv_bytes,
                from: to,
                recv_bytes: send_bytes,
            },
            r @ Step::Reduce { .. } => r,
        };
        Schedule {
            ranks: self
                .ranks
                .iter()
                .map(|v| v.iter().rev().map(flip).collect())
                .collect(),
        }
    }

    /// Pairs every send with its receive by order per (sender, receiver); an unmatched half,
    /// a peer out of range or a size mismatch is an error naming the rank and step.
    pub fn matching(&self) -> Result<Matching, Error> {
        let p = self.ranks.len();
        let mut m = Matching {
            ids: self
                .ranks
                .iter()
                .map(|v| vec![(NONE, NONE); v.len()])
                .collect(),
            ..Default::default()
        };
        let mut queues: HashMap<(u32, u32), (Vec<u32>, usize)> = HashMap::new();
        for (r, steps) in self.ranks.iter().enumerate() {
            for (i, s) in steps.iter().enumerate() {
                if let Some((to, bytes)) = s.send_half() {
                    if to as usize >= p || to as usize == r {
                        return Err(bad(r, i, format!("sends to rank {to} (P = {p})")));
                    }
                    let id = m.bytes.len() as u32;
                    m.bytes.push(bytes);
                    m.ends.push((r as u32, to));
                    queues.entry((r as u32, to)).or_default().0.push(id);
                    m.ids[r][i].0 = id;
                }
            }
        }
        for (r, steps) in self.ranks.iter().enumerate() {
            for (i, s) in steps.iter().enumerate() {
                if let Some((from, bytes)) = s.recv_half() {
                    let q = queues.get_mut(&(from, r as u32));
                    let Some((ids, next)) = q.filter(|(ids, next)| *next < ids.len()) else {
                        return Err(bad(
                            r,
                            i,
                            format!("receives from rank {from}, which sends no matching message"),
                        ));
                    };
                    let id = ids[*next];
                    *next += 1;
                    if m.bytes[id as usize] != bytes {
                        return Err(bad(
                            r,
                            i,
                            format!(
                                "receives {bytes} bytes from rank {from}, which sends {}",
                                m.bytes[id as usize]
                            ),
                        ));
                    }
                    m.ids[r][i].1 = id;
                }
            }
        }
        if let Some(((a, b), (ids, next))) = queues.iter().find(|(_, (ids, n))| *n < ids.len()) {
            return Err(Error::Usage(format!(
                "schedule: rank {a} sends {} message(s) to rank {b} that are never received",
                ids.len() - next
            )));
        }
        Ok(m)
    }
}

fn bad(r: usize, i: usize, what: String) -> Error {
    Error::Usage(format!("schedule: rank {r}, step {i}: {what}"))
}
