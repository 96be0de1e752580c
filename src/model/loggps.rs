//! LogGPS's parameters and its cost table (the model's §1–4): pure functions of `k`, `ts`, `tr`.

#![allow(non_snake_case)] // the paper's parameter names: L, o, Os, Or, Gs, Gl, s, S

use super::bands::Bands;
use super::by_size::BySize;
use super::{Cost, CostModel, SendCall, StepCost, WaitFold};
use serde::{Deserialize, Serialize};

/// The LogGPS parameters (the model's §1): times in ns, per-byte terms in ns/byte, `s`/`S` in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub L: f64,
    pub o: f64,
    pub Os: f64,
    pub Or: f64,
    pub Gs: f64,
    pub Gl: f64,
    pub s: u64,
    pub S: u64,
    /// What a failed poll (an `MPI_Test*` that completes nothing, an `MPI_Iprobe` that finds
    /// nothing) costs, ns; None: each such call keeps its traced duration. Not the paper's: a
    /// polling loop makes millions of them, each far cheaper than `o`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll: Option<f64>,
    /// What reducing one byte costs in a reducing collective's steps, ns/byte (the model's
    /// §10 `gamma`), at the size of the vector reduced (by size, as measured: the model's §15);
    /// None: the arithmetic is free.
    #[serde(skip)]
    pub gamma: Option<BySize>,
    /// What a modeled collective call costs beyond its schedule's messages, ns (the model's §8
    /// `oc`): each participant whose part of the schedule receives returns `oc` after its end.
    /// None: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oc: Option<f64>,
    /// What copying one byte locally costs in a modeled collective (a rank's own block, an
    /// algorithm's temporaries: the model's §15 `copy`), ns/byte, at the size copied (by size,
    /// as measured); None: 0.
    #[serde(skip)]
    pub copy: Option<BySize>,
    /// Not a cost: where the set was measured, as the round trip of a cache line between the
    /// calibrating ranks' cores, ns (`calibrate`'s `cores`; the trace's `Cores`). A prediction
    /// warns where a trace's ranks ran on cores 2× nearer or farther apart than that.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<f64>,
    /// Which pairs of ranks the set costs (the model's §12): a node's (with its `cores`
    /// figure) or the network's, where several sets combine; None: every pair (the old form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<Class>,
    /// Whether a nonblocking receive's message moves only while its rank is inside an MPI call
    /// (an MPI library without an asynchronous progress engine, the model's §4): its `tr` is
    /// then the call time of the rank's first call after it that starts no request. False:
    /// the paper's model, the Irecv's own call time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub progress_at_calls: bool,
    /// The share of a rendezvous message's payload `T1` that holds its sender's CPU, 0 to 1
    /// (the model's §14): 0, the receiver's CPU alone moves it (a single copy over shared
    /// memory, the sender waiting off its CPU); 1, each side copies (as over TCP). A nonblocking
    /// send's share is taken one at a time with the receives of the call that completes it, a
    /// collective's exchange step's with its receive. By size, as measured (Open MPI's shared
    /// memory copies a message through its own buffers on both sides up to 32 KiB, by single
    /// copy above). None: 0 at every size.
    #[serde(skip)]
    pub rendezvous_sender: Option<BySize>,
    /// What a rendezvous payload costs its receiver more, ns a byte, where it is received into
    /// a buffer its rank last sent from to the same peer (the trace's `bounced` receives: a
    /// ping-pong sending back what it received; the model's §13): the receiver's copy writes
    /// lines the sender's cache holds; by size, as measured (the model's §13). None: as any
    /// other receive.
    #[serde(skip)]
    pub bounce: Option<BySize>,
    /// [`Params::bounce`] for a message whose sender the trace flagged `clean`: lines its
    /// sender's cache holds unchanged are read at once, and the receiver's writes into lines
    /// its peer holds are then what its copy waits for (the model's §13: 2–3× `bounce` where
    /// measured). Costed through [`Params::clean_set`]. None: `bounce` costs it.
    #[serde(skip)]
    pub bounce_clean: Option<BySize>,
    /// What a rendezvous message costs, as a share of what the set costs it, where its sender
    /// sent it from a buffer unchanged since its last send from it (the trace's `clean` sends:
    /// data written long before, whose lines the receiver's copy reads faster than lines just
    /// written; the model's §13): its message costed with the bands holding sizes above `S`
    /// scaled by it ([`Params::clean_set`]), by size. None: as any other message.
    #[serde(skip)]
    pub clean: Option<BySize>,
    /// [`Params::clean`] for a message with none the other way at once (a round trip's; a
    /// rooted collective's, whose step only sends), where it differs: measured on round trips,
    /// where `clean` is measured on exchanges (a halo's: both cores copying at once saves
    /// less). None: `clean` costs it.
    #[serde(skip)]
    pub clean_oneway: Option<BySize>,
    /// Eager sends of at most this many bytes return when their message has left (at the
    /// send's end − `Od`), their receives paying that `Od` (the model's §13): an MPI library
    /// whose small blocking send only hands its message over (Open MPI's shared memory up to
    /// 256 B here: 64–70 ns where `T1` is 121–203). None: every send returns at its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub departs_upto: Option<u64>,
    /// What posting a receive costs, ns: an `MPI_Irecv` (an `MPI_Imrecv`, a persistent
    /// receive's `MPI_Start`), which moves no data and waits for nothing (the model's §4).
    /// None: `o`, as the paper's Table 4 costs it. Measured (Open MPI 4.1, shared memory): 30–60
    /// ns an Irecv, where `o` is 80–2,500 ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub post: Option<f64>,
    /// What a completion call costs at least, ns: an `MPI_Wait*` (and a send-receive's wait,
    /// a collective's exchange step) whose operations are already complete, the model's §4
    /// Wait rule's floor. None: `o`, as the paper's Table 4 costs it. Measured (Open MPI 4.1,
    /// MPICH 4.0, a Wait on a complete request): 7–11 ns, where `o` is 80–2,500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<f64>,
    /// What a modeled collective's own write (a copy, a reduction) costs more, ns a byte,
    /// where it lands in lines its peer's single copy has just read: a buffer the algorithm
    /// sends from by rendezvous (the model's §15, "Writes into lines a peer holds"). None:
    /// `bounce`, as before it was measured on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<f64>,
    /// [`Params::held`] for a collective's reduction into such lines (the result written into
    /// the buffer it has just sent: a recursive doubling's upper partner), measured apart: a
    /// reduction there costs more than a copy. None: `held`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_reduce: Option<f64>,
    /// What a modeled collective's temporary buffer costs, ns (its `malloc` and `free`, the
    /// model's §15): Open MPI's implementations allocate one or more a call
    /// (`collectives::copies::temporaries`). None: nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alloc: Option<f64>,
    /// What a rendezvous message's single copy costs more a byte where its receive buffer
    /// starts a few bytes further into its page than its send buffer (4 KiB aliasing, the
    /// model's §9, "Where buffers lie"), ns; charged where the trace gives both buffers' offsets
    /// ([`crate::trace::PageOffsets`]). None: nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<f64>,
    /// What a receive costs, ns, where its eager message was taken in while its rank waited
    /// inside an earlier call (the model's §14, "Messages taken in while waiting"): the
    /// library's progress copies it out of the shared channel then, in time the rank waited
    /// anyway, and the receive only matches it; by size, as measured. None: `T3`, as any
    /// receive of a message already there.
    #[serde(skip)]
    pub drained: Option<BySize>,
    /// The set in bands of message size (the model's §10), where it is one: each message's
    /// `T1`, `T2`, `T3` from its band, and `o`, `L` (the control messages' and the other
    /// fields) the first band's; None: the paper's eight parameters, costed by its formulas.
    #[serde(skip)]
    pub bands: Option<Bands>,
}

/// Which pairs of ranks a parameter set costs (the model's §12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Pairs of ranks on one node: the set whose `cores` lies nearest the pair's own figure.
    Node,
    /// Pairs of ranks on different nodes.
    Network,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Node => "node",
            Class::Network => "network",
        }
    }

    pub fn from_name(s: &str) -> Option<Class> {
        [Class::Node, Class::Network]
            .into_iter()
            .find(|c| c.name() == s)
    }
}

/// The parameter names in the order of the model's §1.
pub const NAMES: [&str; 8] = ["L", "o", "Os", "Or", "Gs", "Gl", "s", "S"];

/// The paper's Table 5 presets.
pub const PRESETS: [(&str, Params); 3] = [
    (
        "cenju4",
        Params::paper([640.0, 7820.0, 7.63, 12.77, 0.57, -12.74], 1028, 1028),
    ),
    (
        "myrinet",
        Params::paper([1160.0, 6550.0, 6.86, 2.57, 15.48, -0.74], 8191, 16383),
    ),
    (
        "fast-ethernet",
        Params::paper([35220.0, 20590.0, 10.67, 5.87, 191.89, 74.95], 1023, 16383),
    ),
];

impl Params {
    /// Where an eager limit `S` (a what-if's) lies above the sizes whose eager costs a banded
    /// set measured (its own `S`, or the top of its eager bands above it, the model's §10): the
    /// first size costed eagerly with bands fitted to rendezvous round trips. None for the
    /// paper's parameters, whose one formula costs either protocol at any size.
    #[allow(non_snake_case)] // the paper's name
    pub fn eager_unmeasured_from(&self, S: u64) -> Option<u64> {
        let bands = self.bands.as_ref()?;
        let top = bands
            .eager_above()
            .and_then(|(_, list)| list.last())
            .map_or(self.S, |b| b.hi);
        (S > top).then_some(top + 1)
    }

    /// The paper's eight parameters alone: `[L, o, Os, Or, Gs, Gl]` (ns, ns/byte) and `s`, `S`
    /// (bytes); every later parameter absent.
    pub const fn paper(t: [f64; 6], s: u64, S: u64) -> Params {
        let [L, o, Os, Or, Gs, Gl] = t;
        Params {
            L,
            o,
            Os,
            Or,
            Gs,
            Gl,
            s,
            S,
            poll: None,
            gamma: None,
            oc: None,
            copy: None,
            cores: None,
            class: None,
            progress_at_calls: false,
            rendezvous_sender: None,
            bounce: None,
            bounce_clean: None,
            clean: None,
            clean_oneway: None,
            departs_upto: None,
            post: None,
            wait: None,
            held: None,
            held_reduce: None,
            alloc: None,
            alias: None,
            drained: None,
            bands: None,
        }
    }

    /// Parameters looked up by their names: `num` for the times and per-byte terms, `bytes`
    /// for `s` and `S` (the first error stops the lookup).
    pub fn from_named<E>(
        num: impl Fn(&str) -> Result<f64, E>,
        bytes: impl Fn(&str) -> Result<u64, E>,
    ) -> Result<Params, E> {
        let t = [
            num("L")?,
            num("o")?,
            num("Os")?,
            num("Or")?,
            num("Gs")?,
            num("Gl")?,
        ];
        Ok(Params::paper(t, bytes("s")?, bytes("S")?))
    }

    /// A set in `bands`, eager up to `S`: its other fields (`o`, `L`, the control messages')
    /// from the first band, as [`Params::bands`] says.
    pub fn banded(bands: Bands, S: u64, poll: Option<f64>) -> Params {
        let f = *bands.first();
        Params {
            poll,
            bands: Some(bands),
            ..Params::paper([f.L, f.o, f.Os, f.Or, f.G, f.G], f.hi, S)
        }
    }

    /// The set with its bands changed by `f`, the first band's `o` and `L` mirrored again.
    pub fn with_bands(
        &self,
        f: impl FnOnce(&mut Bands) -> Result<(), String>,
    ) -> Result<Params, String> {
        let mut b = self.bands.ok_or("not a set in bands")?;
        f(&mut b)?;
        Ok(Params {
            gamma: self.gamma,
            oc: self.oc,
            copy: self.copy,
            cores: self.cores,
            class: self.class,
            progress_at_calls: self.progress_at_calls,
            rendezvous_sender: self.rendezvous_sender,
            bounce: self.bounce,
            bounce_clean: self.bounce_clean,
            clean: self.clean,
            clean_oneway: self.clean_oneway,
            departs_upto: self.departs_upto,
            post: self.post,
            wait: self.wait,
            held: self.held,
            held_reduce: self.held_reduce,
            alloc: self.alloc,
            alias: self.alias,
            drained: self.drained,
            ..Params::banded(b, self.S, self.poll)
        })
    }

    /// The set in bands: itself where it is, else the paper form's two bands (the model's
    /// §8), costing every message as before.
    pub fn in_bands(&self) -> Params {
        match self.bands {
            Some(_) => *self,
            None => Params {
                gamma: self.gamma,
                oc: self.oc,
                copy: self.copy,
                cores: self.cores,
                class: self.class,
                progress_at_calls: self.progress_at_calls,
                rendezvous_sender: self.rendezvous_sender,
                bounce: self.bounce,
                bounce_clean: self.bounce_clean,
                clean: self.clean,
                clean_oneway: self.clean_oneway,
                departs_upto: self.departs_upto,
                post: self.post,
                wait: self.wait,
                held: self.held,
                held_reduce: self.held_reduce,
                alloc: self.alloc,
                alias: self.alias,
                drained: self.drained,
                ..Params::banded(Bands::of_paper(self), self.S, self.poll)
            },
        }
    }

    /// The set a rendezvous message sent from a `clean` buffer is costed with (the model's
    /// §13): every band holding sizes above `S` (the paper form's in its two bands) with its
    /// parameters multiplied by [`Params::clean`] over its sizes above `S`
    /// ([`BySize::over`]); None where the set has none.
    pub fn clean_set(&self) -> Option<Params> {
        self.clean.map(|c| self.scaled_above_S(c).bouncing_clean())
    }

    /// [`Params::clean_set`] for a message with none the other way at once: scaled by
    /// [`Params::clean_oneway`], else by `clean`; None where the set has neither.
    pub fn clean_oneway_set(&self) -> Option<Params> {
        self.clean_oneway
            .or(self.clean)
            .map(|c| self.scaled_above_S(c).bouncing_clean())
    }

    /// The set with `bounce_clean` as its `bounce`, where it has one: a clean set's
    /// ([`Params::clean_set`]).
    fn bouncing_clean(self) -> Params {
        Params {
            bounce: self.bounce_clean.or(self.bounce),
            ..self
        }
    }

    /// The set with every band holding sizes above `S` multiplied by `c` over them.
    fn scaled_above_S(&self, c: BySize) -> Params {
        let S = self.S;
        let scaled = self.in_bands().with_bands(|b| {
            b.scale_holding_above(S, |lo, hi| c.over(lo.max(S), hi));
            Ok(())
        });
        scaled.expect("a set in bands")
    }

    /// The set's `bounce` where it costs anything: none where every value is 0 (as `--bounce 0`
    /// gives), which files, traces and listings leave out.
    pub fn bounce_cost(&self) -> Option<BySize> {
        self.bounce.filter(|b| !b.is_zero())
    }

    /// The bands of the set: its own, or the paper form's two.
    pub fn as_bands(&self) -> Bands {
        self.bands.unwrap_or_else(|| Bands::of_paper(self))
    }

    /// A preset by name.
    pub fn preset(name: &str) -> Option<Params> {
        PRESETS.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
    }

    /// Send overhead `T1 = o + k·Os` (of `k`'s band).
    #[inline(always)]
    pub fn t1(&self, k: u64) -> f64 {
        match &self.bands {
            None => self.o + k as f64 * self.Os,
            Some(b) => {
                let x = b.at(k, self.S);
                x.o + k as f64 * x.Os
            }
        }
    }

    /// First byte leaves → last byte arrives: `T2` (k ≤ s) or `T2'` (k > s); `L + k·G` of
    /// `k`'s band.
    #[inline(always)]
    pub fn t2(&self, k: u64) -> f64 {
        match &self.bands {
            None if k <= self.s => k as f64 * self.Gs + self.L,
            None => self.s as f64 * self.Gs + (k - self.s) as f64 * self.Gl + self.L,
            Some(b) => {
                let x = b.at(k, self.S);
                x.L + k as f64 * x.G
            }
        }
    }

    /// Receive overhead `T3 = o + k·Or` (of `k`'s band).
    #[inline(always)]
    pub fn t3(&self, k: u64) -> f64 {
        match &self.bands {
            None => self.o + k as f64 * self.Or,
            Some(b) => {
                let x = b.at(k, self.S);
                x.o + k as f64 * x.Or
            }
        }
    }

    /// What makes the set invalid (the model's §10), naming the band and the term; checked
    /// for sets in bands (a set of the paper's form is warned of: [`Params::warnings`]).
    pub fn invalid(&self) -> Option<String> {
        self.bands.as_ref().and_then(Bands::invalid)
    }

    /// ACK back to the sender, `T5 = o + L + o`; with the first band's `Od` and `Op` (the
    /// model's §13: the sender waits for it, a receive posted early) `o − Od + L + o − Op`.
    #[inline(always)]
    pub fn t5(&self) -> f64 {
        let (od, op) = self.split_of(0);
        self.o - od + self.L + self.o - op
    }

    /// `(Od + Osd·k, Op)` of `k`'s band (the model's §13): 0 for a set of the paper's form.
    #[inline(always)]
    pub fn split_of(&self, k: u64) -> (f64, f64) {
        match &self.bands {
            None => (0.0, 0.0),
            Some(b) => {
                let x = b.at(k, self.S);
                (x.od(k), x.Op)
            }
        }
    }

    /// The `Od` an eager `k`-byte send leaves to its receive, returning when its message has
    /// left ([`Params::departs_upto`]): 0 where it returns at its end.
    #[inline(always)]
    pub fn departed(&self, k: u64) -> f64 {
        match self.departs_upto {
            Some(d) if k <= d && k <= self.S => self.split_of(k).0,
            _ => 0.0,
        }
    }

    /// When the last byte of a `k`-byte eager message sent at `ts` arrives: `ts + T1 − Od +
    /// T2*` (the model's §13), and its `Op`.
    #[inline(always)]
    pub fn arrival(&self, k: u64, ts: f64) -> (f64, f64) {
        let (od, op) = self.split_of(k);
        (ts + self.t1(k) - od + self.t2(k), op)
    }

    /// How much longer than its `T1` a blocking eager send of `k` bytes sent at `ts` is held,
    /// where its library gives a send above `departs_upto` its buffer back only once the
    /// receiver has taken the message (messages moving only inside calls) and the message
    /// arrived while its receiver computed: after the receiver's call before returned
    /// (`last_return`), before its receive's call `tr`. Taken at `tr`, it returns `Od − T2`
    /// after that, as in a round trip (its `T1` after `ts` where the receiver waits at the
    /// arrival). None where none of that applies, or nothing is held. The model does not cost
    /// it (§13, "Sends held by a computing receiver"): the replay counts them.
    pub fn held(&self, k: u64, ts: f64, tr: f64, last_return: f64) -> Option<f64> {
        if !self.holds(k) {
            return None;
        }
        let (arrival, _) = self.arrival(k, ts);
        if !(arrival > last_return && arrival < tr) {
            return None;
        }
        let held = tr + self.split_of(k).0 - self.t2(k) - (ts + self.t1(k));
        (held > 0.0).then_some(held)
    }

    /// Whether the set says its library holds a blocking eager send of `k` bytes until its
    /// receiver has taken it: above `departs_upto`, up to `S`, messages moving only inside
    /// calls (Open MPI's shared memory; the model's §13, "Sends held").
    #[inline(always)]
    pub fn holds(&self, k: u64) -> bool {
        self.holds_sends() && self.departs_upto.is_some_and(|d| k > d) && k <= self.S
    }

    /// Whether the set says its library holds blocking sends above `departs_upto` at all
    /// (`departs_upto` found, messages moving only inside calls).
    #[inline(always)]
    fn holds_sends(&self) -> bool {
        self.progress_at_calls && self.departs_upto.is_some()
    }

    /// A blocking eager send of `k` bytes that its library holds ([`Params::holds`]) inside a
    /// modeled collective, called at `ts`, its receive's call at `tr`: it returns at its `T1`
    /// or, where the receive was posted after the message arrived (less its `Op`), `Od + Op −
    /// T2` after that call, whichever is later. Both are the receive's end plus `Od + Op − T2
    /// − T3`, as in the round trip the set was fitted to (the receiver waiting, the send
    /// returns `T1` after its call). The time beyond its `T1` is the sender's synchronization.
    #[inline(always)]
    pub fn held_send(&self, k: u64, ts: f64, tr: f64) -> Cost {
        let c = self.send(k, false, ts, tr);
        let (od, op) = self.split_of(k);
        let back = tr + od + op - self.t2(k);
        match back > c.ret {
            true => Cost {
                ret: back,
                sync: back - c.ret,
                unblock: tr,
            },
            false => c,
        }
    }

    /// What a completion call costs at least (the model's §4 Wait rule): `wait`, else `o`.
    #[inline(always)]
    pub fn wait_floor(&self) -> f64 {
        self.wait.unwrap_or(self.o)
    }

    /// When a modeled collective's exchange step called at `t`, its send returning at `sent`,
    /// calls its wait (which costs `o` at least): at `t` in the model's §4 (an Isend and an
    /// Irecv, then a Waitall); where the set says its library holds a blocking send above
    /// `departs_upto` until the receiver has taken it (Open MPI's shared memory, the model's
    /// §13), at `sent`: that library's collectives exchange by an irecv, a blocking send and a
    /// wait (`ompi_coll_base_sendrecv_actual`), so the wait comes once the send has returned.
    #[inline(always)]
    pub fn exchange_wait(&self, t: f64, sent: f64) -> f64 {
        match self.holds_sends() {
            true => sent.max(t),
            false => t,
        }
    }

    /// When a rendezvous request sent at `ts` arrives (`ts + o − Od + L`, the first band's),
    /// and that band's `Op`.
    #[inline(always)]
    fn request_arrival(&self, ts: f64) -> (f64, f64) {
        let (od, op) = self.split_of(0);
        (ts + self.o - od + self.L, op)
    }

    /// The round trip of the model's §6 (MODEL.md): eqs. (12)–(14) of the paper, each call
    /// costed by the model's rules (so `Od` and `Op`, §13, count): rank 0 sends a `k`-byte
    /// message at 0, computes `w` and receives; rank 1 receives it and sends it back.
    pub fn round_trip(&self, k: u64, w: f64) -> f64 {
        let rdv = k > self.S;
        let sent = self.send(k, rdv, 0.0, 0.0).ret;
        let got = self.recv(k, rdv, 0.0, 0.0).ret;
        self.recv(k, rdv, got, sent + w).ret
    }

    /// Whether a `k`-byte message goes by rendezvous (`always` for synchronous sends).
    #[inline(always)]
    pub fn rendezvous(&self, k: u64, always: bool) -> bool {
        always || k > self.S
    }

    /// What an `MPI_Isend` of `k` bytes costs where messages move only inside calls (the
    /// model's §4): eager, it copies its message out and returns once it has left, `T1 − Od`;
    /// by rendezvous, once its request has left, `o − Od` of the first band (its payload moves
    /// in a later call; §13).
    #[inline(always)]
    pub fn isend_at_calls(&self, k: u64, rdv: bool) -> f64 {
        match rdv {
            false => self.t1(k) - self.split_of(k).0,
            true => self.o - self.split_of(0).0,
        }
    }

    /// A blocking send called at `ts` whose receive is called at `tr` (unused when eager).
    #[inline(always)]
    pub fn send(&self, k: u64, rdv: bool, ts: f64, tr: f64) -> Cost {
        if !rdv {
            return Cost {
                ret: ts + self.t1(k) - self.departed(k),
                sync: 0.0,
                unblock: ts,
            };
        }
        let (req_arrives, op) = self.request_arrival(ts);
        let confirmed = (req_arrives - op).max(tr);
        Cost {
            ret: confirmed + self.o + self.t5() + self.t1(k),
            sync: (tr - req_arrives).max(0.0),
            unblock: tr,
        }
    }

    /// A blocking receive called at `tr` whose send is called at `ts`.
    #[inline(always)]
    pub fn recv(&self, k: u64, rdv: bool, ts: f64, tr: f64) -> Cost {
        if !rdv {
            // Posted `Op` or more before the arrival, it has done `Op` of its `T3` by then
            // (and of the `Od` its send left it, where that returned at the departure).
            let (arrives, op) = self.arrival(k, ts);
            let od = self.departed(k);
            return Cost {
                ret: (arrives - op - od).max(tr) + self.t3(k) + od,
                sync: (arrives - tr).max(0.0),
                unblock: arrives,
            };
        }
        let (req_arrives, op) = self.request_arrival(ts);
        let ret = (req_arrives - op).max(tr) + self.recv_busy(k, true);
        Cost {
            ret,
            sync: (req_arrives - tr).max(0.0),
            unblock: req_arrives,
        }
    }

    /// A receive called at `tr` of a `k`-byte eager message that arrived at `arrives`, where
    /// the last call of its rank that waited was `wait` (the model's §14, "Messages taken in
    /// while waiting"): the library took the message in during that call where it arrived
    /// before the call stopped waiting, and the receive costs `drained` after its call. None where
    /// the set has no `drained`, the message was not there at the call, or no call that waited
    /// took it in.
    #[inline]
    pub fn drained_recv(&self, k: u64, arrives: f64, tr: f64, wait: Wait) -> Option<Cost> {
        let d = self.drained?.at(k as f64);
        let waited = arrives <= wait.until;
        // A message its library sends inline (`departs_upto`), there when its rank's library
        // last polled, was taken in by that poll.
        let polled = self.departs_upto.is_some_and(|u| k <= u) && arrives <= wait.polled;
        (arrives <= tr && (waited || polled)).then_some(Cost {
            ret: tr + d,
            sync: 0.0,
            unblock: arrives,
        })
    }

    /// [`Params::recv`], where its rank last waited and polled over `wait`:
    /// [`Params::drained_recv`] where that took its eager message in; `wait` then telling that
    /// the receive polled at its call where it took its message in itself (the model's §14,
    /// "Small messages taken in at a poll").
    #[inline(always)]
    pub fn recv_polled(&self, k: u64, rdv: bool, ts: f64, tr: f64, wait: &mut Wait) -> Cost {
        if !rdv
            && self.drained.is_some()
            && let Some(c) = self.drained_recv(k, self.arrival(k, ts).0, tr, *wait)
        {
            return c;
        }
        *wait = wait.polled_at(tr);
        self.recv(k, rdv, ts, tr)
    }

    /// How long a `k`-byte receive whose own span is `own` holds its rank's CPU where it waits
    /// for the receive before it in one completion call (the model's §14, "Receives in a
    /// queue"): an eager message's first lines came from its sender's core while the one
    /// before was taken in, and it pays its span less what a receive at `drained`'s least size
    /// pays beyond `drained` there, `drained(k)` at least; its whole span by rendezvous, or
    /// where the set has no `drained`.
    #[inline]
    pub fn queued_busy(&self, k: u64, rdv: bool, own: f64) -> f64 {
        match (rdv, &self.drained) {
            (false, Some(d)) => {
                let (k0, d0) = d.points()[0];
                let saving = (self.recv_busy(k0, false) - d0).max(0.0);
                (own - saving).max(d.at(k as f64)).min(own)
            }
            _ => own,
        }
    }

    /// What a `k`-byte receive costs after it can start (its message, or the rendezvous
    /// request, there and its call made): `T3` eager, `o + T5 + T1 − Od + T2* + T3 − Op`
    /// rendezvous (the payload reaches a receive posted long before: the model's §13), the time
    /// its rank is busy with it where it takes receives one at a time.
    pub fn recv_busy(&self, k: u64, rdv: bool) -> f64 {
        match rdv {
            false => self.t3(k) + self.departed(k),
            true => {
                let (od, op) = self.split_of(k);
                self.o + self.t5() + self.t1(k) - od + self.t2(k) - op + self.t3(k)
            }
        }
    }

    /// A receive's cost `c` where it was made into a buffer its rank last sent from to the same
    /// peer (`bounced`): a rendezvous payload's `k` bytes cost `bounce` at `k` ns each more, at
    /// its end (the model's §13).
    #[inline(always)]
    pub fn bounced(&self, k: u64, rdv: bool, c: Cost) -> Cost {
        match self.bounce {
            Some(b) if rdv => Cost {
                ret: c.ret + b.at(k as f64) * k as f64,
                ..c
            },
            _ => c,
        }
    }

    /// A rendezvous payload's cost `c` (its receive's, or its send's, which completes on the
    /// receiver's word) where its single copy is slowed: into a buffer its rank last sent from
    /// to the same peer (`bounced`: [`Params::bounced`]) and where its receive buffer starts a
    /// few bytes further into its page than its send buffer (`aliased`: `alias` ns a byte more,
    /// at its end; the model's §13, "Aliased single copies").
    #[inline(always)]
    pub fn slowed(&self, k: u64, rdv: bool, bounced: bool, aliased: bool, c: Cost) -> Cost {
        let c = match bounced {
            true => self.bounced(k, rdv, c),
            false => c,
        };
        match self.alias {
            Some(a) if rdv && aliased => Cost {
                ret: c.ret + a * k as f64,
                ..c
            },
            _ => c,
        }
    }

    /// When a blocking receive called at `tr` of a `k`-byte message sent at `ts` holds its
    /// rank's CPU, `(start, cost)`: from its message there and its call made to its end, where
    /// one CPU takes a call's receives one at a time (the model's §14) ([`Params::held_from`]);
    /// `wait` then telling that it polled at `tr` where it took its message in itself
    /// ([`Params::recv_polled`]).
    #[inline(always)]
    pub fn recv_span(
        &self,
        k: u64,
        rdv: bool,
        (ts, tr): (f64, f64),
        at_calls: bool,
        wait: &mut Wait,
    ) -> (f64, Cost) {
        let c = self.recv_polled(k, rdv, ts, tr, wait);
        (self.held_from(k, rdv, tr, &c, at_calls), c)
    }

    /// When a receive called at `tr` of `k` bytes, costed `c`, starts to hold its rank's CPU
    /// (the model's §14). Eager, the receive's overhead after the arrival (`T3`, less `Op`
    /// where posted early); by rendezvous, its payload's `T3 − Op` where messages move whatever
    /// the rank does (`at_calls` false), and from its payload's start where they move only
    /// inside calls (its call made): the payload's `T1 − Od`, `T2` and the receive's `T3 − Op`
    /// before its end, the rank's progress moving it, while the request's confirmation and the
    /// ACK before it overlap the rank's other receives.
    #[inline(always)]
    pub fn held_from(&self, k: u64, rdv: bool, tr: f64, c: &Cost, at_calls: bool) -> f64 {
        match (rdv, at_calls) {
            (true, false) => c.ret - (self.t3(k) - self.split_of(k).1),
            (true, true) => {
                let (od, op) = self.split_of(k);
                let payload = self.t1(k) - od + self.t2(k) + self.t3(k) - op;
                (tr + c.sync).max(c.ret - payload)
            }
            (false, _) => tr + c.sync,
        }
    }

    /// When a nonblocking send of `k` bytes called at `ts`, its receive's call at `tr`, holds
    /// its rank's CPU (the model's §14): `(start, cost)`, the sender's share of its payload's
    /// `T1` before its end. None where it holds none: eager (its copy made in its
    /// `MPI_Isend`), or the receiver's CPU alone moves a payload (`rendezvous_sender` 0).
    #[inline(always)]
    pub fn send_span(&self, k: u64, rdv: bool, ts: f64, tr: f64) -> Option<(f64, Cost)> {
        let share = self.sender_share(k);
        if !(rdv && share > 0.0) {
            return None;
        }
        let c = self.send(k, rdv, ts, tr);
        Some((c.ret - share * self.t1(k), c))
    }

    /// The share of a `k`-byte rendezvous payload's `T1` that holds its sender's CPU (the
    /// model's §14): 0 where the set has none.
    #[inline(always)]
    pub fn sender_share(&self, k: u64) -> f64 {
        self.rendezvous_sender.map_or(0.0, |b| b.at(k as f64))
    }

    /// Its `rendezvous_sender` where some size's payload holds its sender's CPU (None where
    /// the set has none, or 0 at every size).
    pub fn sender_shares(&self) -> Option<BySize> {
        self.rendezvous_sender.filter(|b| !b.is_zero())
    }

    /// Whether some size's rendezvous payload holds its sender's CPU.
    pub fn has_sender_share(&self) -> bool {
        self.sender_shares().is_some()
    }

    /// `MPI_Probe` called at `tp` for a message sent at `ts`.
    pub fn probe(&self, k: u64, rdv: bool, ts: f64, tp: f64) -> Cost {
        let noticed = if rdv {
            self.request_arrival(ts).0
        } else {
            self.arrival(k, ts).0
        };
        Cost {
            ret: noticed.max(tp) + self.o,
            sync: (noticed - tp).max(0.0),
            unblock: noticed,
        }
    }

    /// Every routine cost stays positive only when `Os + Or + Gl > 0` (paper §4.3). A set in
    /// bands is valid or refused ([`Params::invalid`]): nothing to warn of.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if self.bands.is_some() {
            return w;
        }
        if self.Os + self.Or + self.Gl <= 0.0 {
            w.push(format!(
                "Os + Or + Gl = {} ≤ 0: long messages get cheaper with size and some costs can turn negative (paper §4.3)",
                self.Os + self.Or + self.Gl
            ));
        }
        for (name, v) in [
            ("L", self.L),
            ("o", self.o),
            ("Os", self.Os),
            ("Or", self.Or),
            ("Gs", self.Gs),
        ] {
            if v < 0.0 {
                w.push(format!("{name} = {v} is negative"));
            }
        }
        w
    }

    /// The value of the `i`-th parameter of [`NAMES`].
    pub(super) fn get(&self, i: usize) -> f64 {
        [
            self.L,
            self.o,
            self.Os,
            self.Or,
            self.Gs,
            self.Gl,
            self.s as f64,
            self.S as f64,
        ][i]
    }
}

impl std::fmt::Display for Params {
    /// `L=… o=… Os=… Or=… Gs=… Gl=… s=… S=…`, or `S=… in bands: …` ([`Bands`]); then
    /// `poll=…`, `gamma=…`, `oc=…`, `progress=calls` and `cores=…` where they are set.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.bands {
            Some(b) => write!(f, "S={} in bands: {b}", self.S)?,
            None => write!(
                f,
                "L={} o={} Os={} Or={} Gs={} Gl={} s={} S={}",
                self.L, self.o, self.Os, self.Or, self.Gs, self.Gl, self.s, self.S
            )?,
        }
        if let Some(poll) = self.poll {
            write!(f, "; poll={poll}")?;
        }
        if let Some(gamma) = self.gamma {
            write!(f, "; gamma={gamma}")?;
        }
        if let Some(oc) = self.oc {
            write!(f, "; oc={oc:.1}")?;
        }
        if let Some(copy) = self.copy {
            write!(f, "; copy={copy}")?;
        }
        if let Some(bounce) = self.bounce {
            write!(f, "; bounce={bounce}")?;
        }
        if let Some(b) = self.bounce_clean {
            write!(f, "; bounce_clean={b}")?;
        }
        if let Some(held) = self.held {
            write!(f, "; held={held:.4}")?;
        }
        if let Some(h) = self.held_reduce {
            write!(f, "; held_reduce={h:.4}")?;
        }
        if let Some(a) = self.alloc {
            write!(f, "; alloc={a:.1}")?;
        }
        if let Some(a) = self.alias {
            write!(f, "; alias={a:.4}")?;
        }
        if let Some(d) = self.drained {
            write!(f, "; drained={d}")?;
        }
        if let Some(w) = self.wait {
            write!(f, "; wait={w:.1}")?;
        }
        if let Some(clean) = self.clean {
            write!(f, "; clean={clean}")?;
        }
        if let Some(c) = self.clean_oneway {
            write!(f, "; clean_oneway={c}")?;
        }
        if self.progress_at_calls {
            write!(f, "; progress=calls")?;
        }
        if let Some(cores) = self.cores {
            write!(f, "; cores={cores:.0} ns")?;
        }
        Ok(())
    }
}

/// The last call of a rank that waited (the model's §14, "Messages taken in while waiting"):
/// when it stopped waiting (its call time plus its synchronization: what it waited for came
/// then), ns; and when its library last polled for messages (the end of a wait, or the call of
/// a receive that took its own message in: §14, "Small messages taken in at a poll"); −∞:
/// not yet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wait {
    pub until: f64,
    pub polled: f64,
}

impl Wait {
    /// No wait yet: takes in nothing.
    pub const NONE: Wait = Wait {
        until: f64::NEG_INFINITY,
        polled: f64::NEG_INFINITY,
    };

    /// After a call made at `t` that waited `sync` ns: that call where it waited, its library
    /// polling until then (else `earlier`, the rank's wait before).
    #[inline]
    pub fn after(earlier: Wait, t: f64, sync: f64) -> Wait {
        match sync > 0.0 {
            true => Wait {
                until: t + sync,
                polled: earlier.polled.max(t + sync),
            },
            false => earlier,
        }
    }

    /// `self`, its library having polled at `t` (a receive that took its message in itself).
    #[inline]
    pub fn polled_at(self, t: f64) -> Wait {
        Wait {
            polled: self.polled.max(t),
            ..self
        }
    }
}

impl Default for Wait {
    fn default() -> Wait {
        Wait::NONE
    }
}

/// LogGPS (the model's §4): the replay's own cost table.
impl CostModel for Params {
    /// Where the rank last waited (the model's §14, "Messages taken in while waiting").
    type Port = Wait;

    #[inline(always)]
    fn send_call(&self, _: &mut Wait, t: f64, bytes: u64) -> SendCall {
        // Waiting for its receive's call: a rendezvous send, and one its library holds.
        let waits = self.rendezvous(bytes, false) || self.holds(bytes);
        SendCall {
            to_receiver: t,
            needs_tr: waits,
            ret: if waits {
                f64::NAN
            } else {
                self.send(bytes, false, t, t).ret
            },
        }
    }

    #[inline(always)]
    fn send_return(&self, bytes: u64, _: &SendCall, t: f64, tr: f64) -> Cost {
        match self.holds(bytes) {
            true => self.held_send(bytes, t, tr),
            false => self.send(bytes, self.rendezvous(bytes, false), t, tr),
        }
    }

    #[inline(always)]
    fn recv_return(&self, wait: &mut Wait, t: f64, bytes: u64, ts: f64) -> Cost {
        let c = self.recv_polled(bytes, self.rendezvous(bytes, false), ts, t, wait);
        *wait = Wait::after(*wait, t, c.sync);
        c
    }

    #[inline(always)]
    fn sendrecv_return(
        &self,
        wait: &mut Wait,
        t: f64,
        mut send: Cost,
        sb: u64,
        rb: u64,
        ts: f64,
    ) -> StepCost {
        // The model's §4: an Isend and an Irecv at the call, then a Waitall; where the library
        // holds blocking sends, its exchange's wait after its send ([`Params::exchange_wait`]).
        let mut recv = self.recv_return(wait, t, rb, ts);
        // Its send's share of a rendezvous payload holds the rank's CPU before the send's end,
        // one at a time with its receive (the model's §14, as a program's `MPI_Isend` in its
        // `MPI_Waitall`): the later of the two to start waits for the other.
        let share = self.sender_share(sb);
        if share > 0.0 && self.rendezvous(sb, false) {
            let share = share * self.t1(sb);
            let rdv = self.rendezvous(rb, false);
            let held_from = self.held_from(rb, rdv, t, &recv, self.progress_at_calls);
            let sending_from = send.ret - share;
            if sending_from <= held_from {
                recv.ret += (send.ret - held_from).max(0.0);
            } else if recv.ret > sending_from {
                send.ret = recv.ret + share;
            }
        }
        let mut w = WaitFold::new(self.exchange_wait(t, send.ret), self.wait_floor());
        w.add(send.ret, send.unblock, true);
        w.add(recv.ret, recv.unblock, false);
        let (ret, _, sender_sync, receiver_sync) = w.finish();
        // The step's wait, its receive's poll kept.
        *wait = Wait::after(*wait, t, sender_sync + receiver_sync);
        StepCost {
            ret,
            sender_sync,
            receiver_sync,
        }
    }

    fn rank_end(&self, _: &Wait, t: f64) -> f64 {
        t
    }

    fn port_at(&self, wait: Wait) -> Wait {
        wait
    }

    fn polled(&self, wait: &Wait) -> f64 {
        wait.polled
    }

    fn split_costs(&self, bytes: u64) -> (f64, f64) {
        let rdv = self.rendezvous(bytes, false);
        (
            self.send(bytes, rdv, 0.0, 0.0).ret,
            self.recv(bytes, rdv, 0.0, 0.0).ret,
        )
    }
}

/// How far past its send buffer's offset in a 4 KiB page a receive buffer may start for the
/// single copy between them to alias (the model's §9, "Where buffers lie": measured at 8–24
/// bytes, not at 0, 32 or more).
pub const ALIAS_REACH: u16 = 31;

/// Whether a single copy from a buffer starting at offset `send` in its page into one starting
/// at `recv()` aliases: the receive buffer 1 to [`ALIAS_REACH`] bytes further into its page.
#[inline]
pub fn aliases(send: Option<u16>, recv: impl FnOnce() -> Option<u16>) -> bool {
    match (send, send.and_then(|_| recv())) {
        (Some(s), Some(r)) => (1..=ALIAS_REACH).contains(&(r.wrapping_sub(s) & 4095)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn myrinet() -> Params {
        Params::preset("myrinet").unwrap()
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-6, "{a} != {b}");
    }

    // The model's §6, each value the routine's predicted duration (return − its own call).
    #[test]
    fn vector_k1000_one_way() {
        let p = myrinet();
        close(p.t1(1000) + p.t2(1000) + p.t3(1000), 39_170.0);
    }

    #[test]
    fn vector_k16383_one_way() {
        let p = myrinet();
        close(p.t1(16383) + p.t2(16383) + p.t3(16383), 289_486.290);
    }

    #[test]
    fn vector_send_16384_tr_eq_ts() {
        let p = myrinet();
        close(
            p.send(16384, p.rendezvous(16384, false), 0.0, 0.0).ret,
            147_464.240,
        );
    }

    #[test]
    fn vector_send_16384_tr_late() {
        let p = myrinet();
        let c = p.send(16384, true, 0.0, 100_000.0);
        close(c.ret, 239_754.240);
        close(c.sync, 100_000.0 - 6550.0 - 1160.0);
    }

    #[test]
    fn vector_recv_16384_tr_eq_ts() {
        let p = myrinet();
        close(
            p.recv(16384, p.rendezvous(16384, false), 0.0, 0.0).ret,
            318_014.980,
        );
    }

    #[test]
    fn vector_recv_65472_tr_late() {
        let p = myrinet();
        let tr = 100_000.0;
        close(
            p.recv(65472, p.rendezvous(65472, false), 0.0, tr).ret - tr,
            736_879.700,
        );
    }

    /// The model's §6 vectors with Myrinet given as its two bands (§10).
    #[test]
    fn vectors_hold_in_bands() {
        let paper = myrinet();
        let p = Params::banded(Bands::of_paper(&paper), paper.S, None);
        close(p.t1(1000) + p.t2(1000) + p.t3(1000), 39_170.0);
        close(p.t1(16383) + p.t2(16383) + p.t3(16383), 289_486.290);
        close(p.send(16384, true, 0.0, 0.0).ret, 147_464.240);
        close(p.send(16384, true, 0.0, 100_000.0).ret, 239_754.240);
        close(p.recv(16384, true, 0.0, 0.0).ret, 318_014.980);
        close(
            p.recv(65472, true, 0.0, 100_000.0).ret - 100_000.0,
            736_879.700,
        );
        assert!(p.warnings().is_empty() && p.invalid().is_none());
    }

    /// Each message's `T1`, `T2`, `T3` from its band; the control messages' `o + L` from the
    /// first band. By hand, bands (0, 256] o = 100, L = 50, Os = Or = 0.5, G = 1 and
    /// (256, ∞) o = 1000, L = 2000, Os = Or = 0.1, G = 0.2, S = 256: a 100-byte message costs
    /// (100 + 50) + (50 + 100) + (100 + 50) = 450; a 1000-byte one, rendezvous, called at 0
    /// with its receive at 0: the request's `o + L` = 150, then `o` + `T5` (o + L + o = 250) with
    /// the first band, then `T1 + T2 + T3` = 1100 + 2200 + 1100 of its own: 150 + 100 + 250 +
    /// 4400 = 4900.
    #[test]
    fn costs_come_from_each_message_band() {
        let band = |hi, o, L, Os, G| super::super::Band {
            hi,
            o,
            L,
            Os,
            Or: Os,
            G,
            ..Default::default()
        };
        let b = Bands::new(&[
            band(256, 100.0, 50.0, 0.5, 1.0),
            band(u64::MAX, 1000.0, 2000.0, 0.1, 0.2),
        ])
        .unwrap();
        let p = Params::banded(b, 256, None);
        close(p.t1(100) + p.t2(100) + p.t3(100), 450.0);
        close(
            p.recv(1000, p.rendezvous(1000, false), 0.0, 0.0).ret,
            4900.0,
        );
        assert_eq!((p.o, p.L), (100.0, 50.0));
    }

    #[test]
    fn eager_limit_is_inclusive() {
        let p = myrinet();
        assert!(!p.rendezvous(16383, false));
        assert!(p.rendezvous(16384, false));
        assert!(p.rendezvous(1, true));
    }

    #[test]
    fn warns_when_long_messages_get_cheaper() {
        let p = Params::preset("cenju4").unwrap(); // Os + Or + Gl = 7.66 > 0
        assert!(p.warnings().is_empty());
        let bad = Params { Gl: -30.0, ..p };
        assert_eq!(bad.warnings().len(), 1);
    }
}
