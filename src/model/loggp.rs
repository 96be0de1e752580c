//! LogGP (Alexandrov et al. 1995), the other model a run may choose: its parameters and its
//! rules for a rank's one network port.

#![allow(non_snake_case)] // the paper's parameter names: L, o, g, G

use super::{Cost, CostModel, SendCall, StepCost};
use serde::Serialize;

/// LogGP (Alexandrov et al. 1995): `k` bytes cost `o + (k−1)G + L + o` end to end, consecutive
/// messages leave (and arrive) at least `g` apart, one port per rank, no rendezvous.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LogGp {
    pub L: f64,
    pub o: f64,
    pub g: f64,
    pub G: f64,
    /// Reducing one byte in a modeled collective's steps, ns (not LogGP's: the same `gamma`
    /// LogGPS carries, for the collectives both models expand).
    #[serde(skip)]
    pub gamma: f64,
}

/// LogGP's parameter names, in the order reports list them.
pub const LOGGP_NAMES: [&str; 4] = ["L", "o", "g", "G"];

impl LogGp {
    /// `(k − 1)·G`, the time between a message's first and last byte (a 0-byte message is one byte).
    pub fn stream(&self, bytes: u64) -> f64 {
        bytes.saturating_sub(1) as f64 * self.G
    }

    /// When the last byte of a `bytes` message whose first byte left at `first_out` arrives.
    pub fn arrival(&self, first_out: f64, bytes: u64) -> f64 {
        first_out + self.stream(bytes) + self.L
    }

    /// `MPI_Probe` called at `tp` for a `k`-byte message whose first byte left at `first_out`:
    /// it returns `o` after noticing the last byte's arrival.
    pub fn probe(&self, k: u64, first_out: f64, tp: f64) -> Cost {
        let arrival = self.arrival(first_out, k);
        Cost {
            ret: arrival.max(tp) + self.o,
            sync: (arrival - tp).max(0.0),
            unblock: arrival,
        }
    }
}

/// A LogGP rank's port: when the next message may start leaving / finish arriving. The
/// replay keeps one per rank across the whole trace, a schedule one per rank and call.
#[derive(Clone, Copy, Debug, Default)]
pub struct Port {
    send_ready: f64,
    recv_ready: f64,
    /// The paper's communication finishing time: the last message's last byte out plus `g`.
    comm_end: f64,
}

impl CostModel for LogGp {
    type Port = Port;

    fn send_call(&self, port: &mut Port, t: f64, bytes: u64) -> SendCall {
        // The overhead overlaps the wait for the port (the paper's Fig. 1).
        let first_out = (t + self.o).max(port.send_ready);
        let last_out = first_out + self.stream(bytes);
        port.send_ready = last_out + self.g;
        port.recv_ready = port.recv_ready.max(last_out);
        port.comm_end = port.comm_end.max(last_out + self.g);
        SendCall {
            to_receiver: self.arrival(first_out, bytes),
            needs_tr: false,
            ret: first_out,
        }
    }

    fn send_return(&self, _: u64, call: &SendCall, _: f64, _: f64) -> Cost {
        // Done once its first byte is out: nothing unblocks it, it never waits for its receiver.
        Cost {
            ret: call.ret,
            sync: 0.0,
            unblock: f64::NEG_INFINITY,
        }
    }

    /// Waiting for the last byte to arrive is receiver synchronization, waiting for the port
    /// communication.
    fn recv_return(&self, port: &mut Port, t: f64, bytes: u64, arrives: f64) -> Cost {
        let last_in = arrives.max(port.recv_ready + self.stream(bytes));
        port.recv_ready = last_in + self.g;
        port.send_ready = port.send_ready.max(last_in);
        Cost {
            ret: t.max(last_in) + self.o,
            sync: (arrives - t).max(0.0),
            unblock: arrives,
        }
    }

    /// The receive half is called once the send half's first byte is out.
    fn sendrecv_return(
        &self,
        port: &mut Port,
        _: f64,
        send: Cost,
        _: u64,
        rb: u64,
        arrives: f64,
    ) -> StepCost {
        let recv = self.recv_return(port, send.ret, rb, arrives);
        StepCost {
            ret: recv.ret,
            sender_sync: 0.0,
            receiver_sync: recv.sync,
        }
    }

    fn rank_end(&self, port: &Port, t: f64) -> f64 {
        t.max(port.comm_end)
    }

    fn split_costs(&self, bytes: u64) -> (f64, f64) {
        let s = self.stream(bytes);
        (self.o.max(s + self.g), s + self.L + 2.0 * self.o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loggp_arrival_is_o_free_transfer_plus_latency() {
        // 0-byte and 1-byte messages both take L after their first byte; k bytes (k−1)G more.
        let m = LogGp {
            L: 100.0,
            o: 7.0,
            g: 0.0,
            G: 2.0,
            gamma: 0.0,
        };
        assert_eq!(m.arrival(10.0, 0), 110.0);
        assert_eq!(m.arrival(10.0, 1), 110.0);
        assert_eq!(m.arrival(10.0, 51), 210.0);
    }
}
