#![doc = include_str!("MODEL.md")]
#![allow(non_snake_case)] // the papers' parameter names: L, o, Os, Or, Gs, Gl, s, S; g, G

mod bands;
mod by_size;
mod knob;
mod loggp;
mod loggps;
mod params;
mod scale;

pub use bands::{BAND_NAMES, Band, Bands, MAX_BANDS, MAX_EAGER_ABOVE, sizes};
pub use by_size::{BySize, SIZE_POINTS, SizeParam};
pub use knob::{Knob, PAPER};
pub use loggp::{LOGGP_NAMES, LogGp, Port};
pub use loggps::{ALIAS_REACH, Class, NAMES, PRESETS, Params, Wait, aliases};
pub use params::{
    LogGpFlags, Overrides, Resolved, ResolvedLogGp, ResolvedModel, Source, alias_invalid,
    alloc_invalid, cores_invalid, held_invalid, held_reduce_invalid, nearest_cores,
    param_sets_toml, params_toml, parse_param_sets, parse_params_toml, parse_progress,
    post_invalid, read_param_sets, read_params_file, resolve, resolve_loggp, wait_invalid,
};
pub use scale::{SCALE_ALL, scale};

/// A routine's predicted return, the synchronization inside its duration, and the instant
/// the partner unblocked it (what a later Wait measures its synchronization against).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    pub ret: f64,
    pub sync: f64,
    pub unblock: f64,
}

/// the model's §4–5 Wait rule, folding the operations one call waits for (`MPI_Wait*`,
/// `MPI_Sendrecv`'s two halves): the call at `tw` returns when the last of them completes, no
/// earlier than `tw + o`; the critical one's wait for its partner is synchronization, on its side.
#[derive(Clone, Copy, Debug)]
pub struct WaitFold {
    tw: f64,
    ret: f64,
    /// When the critical operation's partner unblocked it (`tw` while none is critical: no
    /// synchronization).
    unblock: f64,
    send_side: bool,
}

/// A [`WaitFold`]'s return and unblocking times.
#[derive(Clone, Copy, Debug, Default)]
pub struct SavedFold {
    ret: f64,
    unblock: f64,
}

impl WaitFold {
    /// A call at `tw` that costs at least `o`.
    #[inline(always)]
    pub fn new(tw: f64, o: f64) -> WaitFold {
        WaitFold {
            tw,
            ret: tw + o,
            unblock: tw,
            send_side: false,
        }
    }

    /// An operation completing at `done` that its partner unblocked at `unblock`; `send_side`:
    /// it is a send (its synchronization is the sender's).
    #[inline(always)]
    pub fn add(&mut self, done: f64, unblock: f64, send_side: bool) {
        if done > self.ret {
            self.ret = done;
            self.unblock = unblock;
            self.send_side = send_side;
        }
    }

    /// The fold but its call time, and whether its critical operation is a send: to keep where
    /// the call time is kept anyway ([`WaitFold::resume`]).
    pub fn save(&self) -> (SavedFold, bool) {
        let saved = SavedFold {
            ret: self.ret,
            unblock: self.unblock,
        };
        (saved, self.send_side)
    }

    /// The fold [`WaitFold::save`] gave, of the call at `tw`.
    pub fn resume(tw: f64, saved: SavedFold, send_side: bool) -> WaitFold {
        WaitFold {
            tw,
            ret: saved.ret,
            unblock: saved.unblock,
            send_side,
        }
    }

    /// `(return, communication, sender sync, receiver sync)`.
    #[inline(always)]
    pub fn finish(self) -> (f64, f64, f64, f64) {
        let d = self.ret - self.tw;
        let sync = (self.unblock - self.tw).clamp(0.0, d);
        if self.send_side {
            (self.ret, d - sync, sync, 0.0)
        } else {
            (self.ret, d - sync, 0.0, sync)
        }
    }
}

/// What a send makes known at its call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SendCall {
    /// What the matching receive needs (LogGPS: the call time `ts`; LogGP: the last byte's arrival).
    pub to_receiver: f64,
    /// Whether the send returns only once the receive is called (rendezvous).
    pub needs_tr: bool,
    /// The send's return when it does not need `tr`.
    pub ret: f64,
}

/// A step's return and the synchronization inside its duration (the model's §5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepCost {
    pub ret: f64,
    pub sender_sync: f64,
    pub receiver_sync: f64,
}

/// A point-to-point cost model: how a rank's blocking sends and receives return, and how long
/// they wait for their partner (a [`Cost`]'s `sync`: the sender's for a send, the receiver's
/// for a receive).
pub trait CostModel: Sync {
    /// Per-rank state the model keeps between steps (LogGP's network ports).
    type Port: Clone + Default + Send + Sync + 'static;

    /// A send of `bytes` called at `t`.
    fn send_call(&self, port: &mut Self::Port, t: f64, bytes: u64) -> SendCall;
    /// The return of a send that waited for its receive's call time `tr`.
    fn send_return(&self, bytes: u64, call: &SendCall, t: f64, tr: f64) -> Cost;
    /// A receive of `bytes` called at `t` whose send published `from_sender`.
    fn recv_return(&self, port: &mut Self::Port, t: f64, bytes: u64, from_sender: f64) -> Cost;
    /// A send-receive called at `t`; `send` is its send half's cost, of `send_bytes`.
    #[allow(clippy::too_many_arguments)]
    fn sendrecv_return(
        &self,
        port: &mut Self::Port,
        t: f64,
        send: Cost,
        send_bytes: u64,
        recv_bytes: u64,
        from_sender: f64,
    ) -> StepCost;
    /// When a rank whose last step returned at `t` is done communicating.
    /// When the rank's library last polled for messages, as its port tells (the model's §14,
    /// "Small messages taken in at a poll"); −∞ for a model that does not keep it.
    fn polled(&self, _port: &Self::Port) -> f64 {
        f64::NEG_INFINITY
    }

    fn rank_end(&self, port: &Self::Port, t: f64) -> f64;
    /// `(sender busy, receiver ready)` for one `bytes` message sent at 0: how long before the
    /// sender can start its next message and when the receiver can forward it. Tree algorithms
    /// (optimal scatter, postal-model broadcast) pick their shape from these.
    fn split_costs(&self, bytes: u64) -> (f64, f64);
    /// The port of a rank that last waited over `wait` before its call (LogGPS: what that
    /// wait took in, the model's §14); by default a fresh one.
    fn port_at(&self, wait: Wait) -> Self::Port {
        let _ = wait;
        Self::Port::default()
    }
}

/// The cost model a run uses.
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(clippy::large_enum_variant)] // a set's bands in place; one a run, used by reference
pub enum Model {
    /// LogGPS, the model's cost table (§4), rendezvous above `S` included.
    LogGps(Params),
    /// LogGP: no rendezvous, a gap `g` between consecutive messages at a rank.
    LogGp(LogGp),
}

impl Model {
    /// The name `--model` takes and reports show: `loggps` or `loggp`.
    pub fn name(&self) -> &'static str {
        match self {
            Model::LogGps(_) => "loggps",
            Model::LogGp(_) => "loggp",
        }
    }

    /// What a failed poll costs, ns (None: each keeps its traced duration); LogGP has no such
    /// parameter.
    #[inline]
    pub fn poll(&self) -> Option<f64> {
        match self {
            Model::LogGps(p) => p.poll,
            Model::LogGp(_) => None,
        }
    }

    /// What posting a receive (`MPI_Irecv`) costs, ns: LogGPS's `post` where it is set, else
    /// `o` (the paper's Table 4; LogGP's `o`).
    #[inline]
    pub fn post(&self) -> f64 {
        match self {
            Model::LogGps(p) => p.post.unwrap_or(p.o),
            Model::LogGp(m) => m.o,
        }
    }

    /// What a completion call costs at least, ns: LogGPS's `wait` where it is set, else `o`
    /// (the paper's Wait rule; LogGP's `o`).
    #[inline]
    pub fn wait_floor(&self) -> f64 {
        match self {
            Model::LogGps(p) => p.wait_floor(),
            Model::LogGp(m) => m.o,
        }
    }

    /// What reducing one byte of a `k`-byte vector costs in a modeled collective's steps, ns
    /// (LogGPS's `gamma` at `k`; 0 where no `gamma` is set).
    #[inline]
    pub fn gamma(&self, k: u64) -> f64 {
        match self {
            Model::LogGps(p) => p.gamma.map_or(0.0, |g| g.at(k as f64)),
            Model::LogGp(m) => m.gamma,
        }
    }

    /// What a modeled collective call costs beyond its schedule's messages, ns (LogGPS's `oc`;
    /// 0 where none is set, and under LogGP).
    #[inline]
    pub fn oc(&self) -> f64 {
        match self {
            Model::LogGps(p) => p.oc.unwrap_or(0.0),
            Model::LogGp(_) => 0.0,
        }
    }

    /// Whether messages move only inside MPI calls (LogGPS's `progress_at_calls`); LogGP's
    /// network always progresses.
    #[inline]
    pub fn progress_at_calls(&self) -> bool {
        matches!(self, Model::LogGps(p) if p.progress_at_calls)
    }

    /// The per-message overhead `o`: what an `MPI_Isend`, `MPI_Irecv` or `MPI_Iprobe` costs.
    pub fn o(&self) -> f64 {
        match self {
            Model::LogGps(p) => p.o,
            Model::LogGp(m) => m.o,
        }
    }
    /// Bytes above which a message goes by rendezvous: `S`, never under LogGP.
    #[inline]
    pub fn eager_limit(&self) -> u64 {
        match self {
            Model::LogGps(p) => p.S,
            Model::LogGp(_) => u64::MAX,
        }
    }
}
