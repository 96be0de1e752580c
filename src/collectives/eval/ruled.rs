//! Collectives costed by their rule, without a built schedule ([`super::evaluate_ruled`]): a
//! lockstep's rounds and a binomial tree's phases, bit for bit as the built schedule's steps.

use super::*;

/// Costs `ls` from the rank states `ranks` on: in pass `k` every rank finishes round `k − 1`,
/// whose partners called in pass `k − 1`, and calls round `k`. A call publishes in the half of
/// the per-rank arrays `from_sender` and `tr` (2P values each) of its round's parity, which
/// the pass after reads. Its messages and their bytes.
pub(super) fn lockstep<M: CostModel>(
    ls: &Lockstep,
    model: &M,
    gamma_ns_per_byte: f64,
    ranks: &mut [RankState<M::Port>],
    from_sender: &[AtomicU64],
    tr: &[AtomicU64],
) -> (u64, u64) {
    let (p, rounds) = (ls.ranks(), ls.len());
    debug_assert_eq!(ranks.len(), p, "a state a rank");
    let pass = LockstepPass {
        ls,
        model,
        p,
        gamma_ns_per_byte,
        from_sender,
        tr,
    };
    for k in 0..=rounds {
        let done = k.checked_sub(1).map(|i| ls.round(i));
        let next = (k < rounds).then(|| ls.round(k));
        if p < PARALLEL_MIN_RUNS || threads() < 2 {
            for (r, st) in ranks.iter_mut().enumerate() {
                pass.step(r, st, k, &done, &next);
            }
            continue;
        }
        let pieces = ranks.par_chunks_mut(RUNS_PER_PIECE).enumerate();
        pieces.for_each(|(i, states)| {
            for (j, st) in states.iter_mut().enumerate() {
                pass.step(i * RUNS_PER_PIECE + j, st, k, &done, &next);
            }
        });
    }
    ls.messages()
}

/// What each rank's step of [`lockstep`] reads: the rounds, the model, and the per-rank arrays
/// of 2P values that a round's calls publish in, the half of its parity.
struct LockstepPass<'a, M> {
    ls: &'a Lockstep,
    model: &'a M,
    /// The ranks, `ls.ranks()`.
    p: usize,
    gamma_ns_per_byte: f64,
    from_sender: &'a [AtomicU64],
    tr: &'a [AtomicU64],
}

impl<M: CostModel> LockstepPass<'_, M> {
    /// Rank `r`'s value of round `k` in the arrays: the half of the round's parity.
    #[inline(always)]
    fn slot(&self, k: usize, r: usize) -> u32 {
        ((k % 2) * self.p + r) as u32
    }

    /// A step's cost on its rank, then the reduction of `reduce` bytes received, as a built
    /// schedule's reduction step costs it, to the bit.
    #[inline(always)]
    fn add(&self, st: &mut RankState<M::Port>, c: StepCost, reduce: Option<u64>) {
        st.clock = c.ret;
        st.sender_sync += c.sender_sync;
        st.receiver_sync += c.receiver_sync;
        if let Some(bytes) = reduce {
            st.clock += bytes as f64 * self.gamma_ns_per_byte;
            st.sender_sync += 0.0;
            st.receiver_sync += 0.0;
        }
    }

    /// Rank r's finishing of round k − 1 (`done`), and call of round k (`next`), each as the
    /// step of a built schedule, where it takes part.
    #[inline(always)]
    fn step(
        &self,
        r: usize,
        st: &mut RankState<M::Port>,
        k: usize,
        done: &Option<Round>,
        next: &Option<Round>,
    ) {
        if let Some(x) = done {
            self.finish(r, st, k, x);
        }
        if let Some(x) = next {
            self.call(r, st, k, x);
        }
    }

    /// Rank `r` finishes round `x`, `k − 1`, whose call it made in the pass before.
    #[inline(always)]
    fn finish(&self, r: usize, st: &mut RankState<M::Port>, k: usize, x: &Round) {
        let (ls, model) = (self.ls, self.model);
        if x.fold == Fold::No {
            // Every rank sends and receives (the peer it sends to only read for a rendezvous).
            let t = st.clock;
            let c = st.call.take().flatten().expect("called in the pass before");
            let tr = match c.needs_tr {
                true => get(self.tr, self.slot(k - 1, ls.peer(r, x.to))),
                false => t,
            };
            let send = model.send_return(ls.bytes(r, x.send), &c, t, tr);
            let (from, bytes) = (ls.peer(r, x.from), ls.bytes(r, x.recv));
            let ts = get(self.from_sender, self.slot(k - 1, from));
            let c = model.sendrecv_return(&mut st.port, t, send, ls.bytes(r, x.send), bytes, ts);
            self.add(st, c, x.reduce.then_some(bytes));
        } else {
            let (send, recv) = ls.halves(r, x);
            if send.is_some() || recv.is_some() {
                self.finish_halves(st, k, x, (send, recv));
            }
        }
    }

    /// A rank finishes round `x`, `k − 1`, of ranks folding in or out, with its `halves` there:
    /// a send or a receive alone, or both.
    #[inline(always)]
    fn finish_halves(&self, st: &mut RankState<M::Port>, k: usize, x: &Round, halves: Halves) {
        let (send, recv) = halves;
        let model = self.model;
        let t = st.clock;
        let call = st.call.take().expect("called in the pass before");
        let sent = send.map_or(0, |(_, bytes)| bytes);
        let send = send.map(|(to, bytes)| {
            let c = call.expect("a send's call");
            // An eager send's return does not depend on `tr`.
            let tr = match c.needs_tr {
                true => get(self.tr, self.slot(k - 1, to)),
                false => t,
            };
            model.send_return(bytes, &c, t, tr)
        });
        let ts = |from| get(self.from_sender, self.slot(k - 1, from));
        let c = match (send, recv) {
            (Some(c), None) => StepCost {
                ret: c.ret,
                sender_sync: c.sync,
                receiver_sync: 0.0,
            },
            (None, Some((from, bytes))) => {
                let c = model.recv_return(&mut st.port, t, bytes, ts(from));
                StepCost {
                    ret: c.ret,
                    sender_sync: 0.0,
                    receiver_sync: c.sync,
                }
            }
            (Some(c), Some((from, bytes))) => {
                model.sendrecv_return(&mut st.port, t, c, sent, bytes, ts(from))
            }
            (None, None) => unreachable!("it takes part"),
        };
        self.add(st, c, recv.filter(|_| x.reduce).map(|(_, bytes)| bytes));
    }

    /// Rank `r` calls round `x`, `k`, publishing its send's call and its receive's clock for
    /// its partners to read in the pass after.
    #[inline(always)]
    fn call(&self, r: usize, st: &mut RankState<M::Port>, k: usize, x: &Round) {
        let (ls, model) = (self.ls, self.model);
        if x.fold == Fold::No {
            let c = model.send_call(&mut st.port, st.clock, ls.bytes(r, x.send));
            set(self.from_sender, self.slot(k, r), c.to_receiver);
            set(self.tr, self.slot(k, r), st.clock);
            st.call = Some(Some(c));
        } else {
            let (send, recv) = ls.halves(r, x);
            if send.is_none() && recv.is_none() {
                return;
            }
            let call = send.map(|(_, bytes)| {
                let c = model.send_call(&mut st.port, st.clock, bytes);
                set(self.from_sender, self.slot(k, r), c.to_receiver);
                c
            });
            if recv.is_some() {
                set(self.tr, self.slot(k, r), st.clock);
            }
            st.call = Some(call);
        }
    }
}

/// The fewest ranks of a subtree whose children's subtrees [`binomial`] costs on the pool's
/// threads (in tests, a few).
const TREE_PARALLEL_MIN_RANKS: usize = if cfg!(test) { 4 } else { 1 << 12 };

/// Costs `tree` from the rank states `ranks` on. Ranks are held in their order from the root
/// meanwhile, so that a subtree is a run of them: the reduce goes up, a rank receiving from
/// each child once the child's subtree has called its send to it (the children's subtrees on
/// the threads), then finishing the child's send; the broadcast goes down, a rank receiving
/// then sending to each child before the children's subtrees go on. A message is numbered by
/// its child: its send's call in `from_sender`, its receive's in `tr` (a broadcast's receive
/// is its rank's first step: called at the clock the reduce left). Its messages and their
/// bytes.
pub(super) fn binomial<M: CostModel>(
    tree: &Binomial,
    model: &M,
    gamma_ns_per_byte: f64,
    ranks: &mut [RankState<M::Port>],
    from_sender: &[AtomicU64],
    tr: &[AtomicU64],
) -> (u64, u64) {
    debug_assert_eq!(ranks.len(), tree.p, "a state a rank");
    ranks.rotate_left(tree.root);
    let t = Tree {
        tree,
        model,
        gamma_ns_per_byte,
        from_sender,
        tr,
    };
    if tree.reduce {
        t.up(ranks, 0);
    }
    if tree.bcast {
        ranks
            .par_iter()
            .with_min_len(PARALLEL_MIN_RANKS)
            .enumerate()
            .for_each(|(v, st)| set(tr, v as u32, st.clock));
        t.down(ranks, 0);
    }
    ranks.rotate_right(tree.root);
    tree.messages()
}

/// One costing of a binomial tree: the tree, model and message values.
struct Tree<'a, M> {
    tree: &'a Binomial,
    model: &'a M,
    gamma_ns_per_byte: f64,
    from_sender: &'a [AtomicU64],
    tr: &'a [AtomicU64],
}

impl<M: CostModel> Tree<'_, M> {
    /// The costing `each` of the subtrees of rank `v`'s children, `rest` being its own but `v`:
    /// child `v + m`'s first in `rest[m - 1..2m - 1]` (cut at P). On the pool's threads where
    /// the subtree is large (a list of them made), else one after the other, smallest first.
    fn each_child(
        &self,
        v: usize,
        rest: &mut [RankState<M::Port>],
        each: impl Fn(&Self, &mut [RankState<M::Port>], usize) + Sync,
    ) {
        let len = rest.len();
        if len + 1 < TREE_PARALLEL_MIN_RANKS || threads() < 2 {
            let mut m = 1;
            while m <= len {
                each(self, &mut rest[m - 1..(2 * m - 1).min(len)], v + m);
                m *= 2;
            }
            return;
        }
        let mut below = Vec::new();
        let (mut rest, mut m) = (rest, 1);
        while !rest.is_empty() {
            let at = m.min(rest.len());
            let (this, more) = std::mem::take(&mut rest).split_at_mut(at);
            below.push((v + m, this));
            (rest, m) = (more, 2 * m);
        }
        below.into_par_iter().for_each(|(c, s)| each(self, s, c));
    }

    /// The reduce over rank `v`'s subtree, `ranks`: each rank receives and reduces its children's
    /// vectors, smallest subtree first, then calls its send to its parent (but the root).
    fn up(&self, ranks: &mut [RankState<M::Port>], v: usize) {
        let (tree, model) = (self.tree, self.model);
        let (st, rest) = ranks.split_first_mut().expect("a subtree has its root");
        self.each_child(v, rest, |t, s, c| t.up(s, c));
        let mut m = 1;
        while m <= rest.len() {
            // The receive's call, its return, the reduction; then the child's send returns.
            let k = tree.edge(v + m, m);
            let c = (v + m) as u32;
            set(self.tr, c, st.clock);
            let t = st.clock;
            let cost = model.recv_return(&mut st.port, t, k, get(self.from_sender, c));
            st.clock = cost.ret;
            st.sender_sync += 0.0;
            st.receiver_sync += cost.sync;
            st.clock += k as f64 * self.gamma_ns_per_byte;
            st.sender_sync += 0.0;
            st.receiver_sync += 0.0;
            let child = &mut rest[m - 1];
            let call = child.call.take().flatten().expect("called");
            let tr = match call.needs_tr {
                true => get(self.tr, c),
                false => child.clock,
            };
            let cost = model.send_return(k, &call, child.clock, tr);
            child.clock = cost.ret;
            child.sender_sync += cost.sync;
            child.receiver_sync += 0.0;
            m *= 2;
        }
        if v != 0 {
            let k = tree.edge(v, super::super::trees::subtree(v, tree.p));
            let call = model.send_call(&mut st.port, st.clock, k);
            set(self.from_sender, v as u32, call.to_receiver);
            st.call = Some(Some(call));
        }
    }

    /// The broadcast over rank `v`'s subtree, `ranks`: each rank receives (but the root), sends
    /// to its children, largest subtree first, and then their subtrees go on.
    fn down(&self, ranks: &mut [RankState<M::Port>], v: usize) {
        let (tree, model) = (self.tree, self.model);
        let (st, rest) = ranks.split_first_mut().expect("a subtree has its root");
        if v != 0 {
            let k = tree.edge(v, super::super::trees::subtree(v, tree.p));
            let t = st.clock;
            let cost = model.recv_return(&mut st.port, t, k, get(self.from_sender, v as u32));
            st.clock = cost.ret;
            st.sender_sync += 0.0;
            st.receiver_sync += cost.sync;
        }
        let mut m = super::super::trees::subtree(v, tree.p) >> 1;
        while m > 0 {
            if v + m < tree.p {
                let (c, t, k) = ((v + m) as u32, st.clock, tree.edge(v + m, m));
                let call = model.send_call(&mut st.port, t, k);
                set(self.from_sender, c, call.to_receiver);
                let tr = if call.needs_tr { get(self.tr, c) } else { t };
                let cost = model.send_return(k, &call, t, tr);
                st.clock = cost.ret;
                st.sender_sync += cost.sync;
                st.receiver_sync += 0.0;
            }
            m >>= 1;
        }
        self.each_child(v, rest, |t, s, c| t.down(s, c));
    }
}
