//! Collective calls tied into instances (the `n`-th call of each member of a communicator on
//! it), checked to agree (routine, root), and the tallies a split matching exchanges.

use super::*;

/// Ties collective calls into instances: the `n`-th call of each member of a communicator on
/// it. The calls are placed by a counting sort on (communicator, sequence number), which leaves
/// each instance's participants in world rank order (a general sort of (communicator,
/// sequence, rank, event) takes 16 bytes a call, and most of the graph's time on the `coll`
/// case of tests/bench/run.sh). Where every member calls alike ([`uniform`]), each rank links
/// its own calls, in parallel, with no list of calls at all.
pub(super) fn match_collectives(
    trace: &Trace,
    file: &str,
    g: &mut HbGraph,
) -> Result<(), TraceError> {
    if !any_collective(trace) {
        return Ok(());
    }
    // Per rank, `(communicator, its calls on it)`.
    let per_rank: Vec<Tally> = (0..trace.nranks())
        .into_par_iter()
        .map(|r| tally(trace, r))
        .collect();
    let Some(b) = Buckets::of(&per_rank) else {
        return Ok(());
    };
    if let Some(ranks_in) = uniform(trace, &per_rank, &b.comms, &b.most) {
        drop(per_rank);
        return place_uniform(trace, file, g, &b.comms, &b.first, &b.size, &ranks_in);
    }
    drop(per_rank);
    let placed = place_calls(trace, &b);
    tie_instances(trace, file, g, &b, &placed, &call_in(trace), &|_| true)
}

/// Rank `r`'s `(communicator, its collective calls on it)`.
pub(super) fn tally(trace: &Trace, r: usize) -> Tally {
    let ev = trace.rank(r);
    let mut on = Tally::default();
    for i in (0..ev.len()).filter(|&i| ev.routine(i).is_collective()) {
        on.bump(ev.comm(i));
    }
    on
}

/// Whether any event of the trace is a collective call (point-to-point traces have none).
pub(super) fn any_collective(trace: &Trace) -> bool {
    any_routine(trace, &routine_table(Routine::is_collective))
}

/// Per routine code, whether `pred` holds of its routine.
pub(super) fn routine_table(pred: fn(Routine) -> bool) -> [bool; 256] {
    let mut table = [false; 256];
    for &r in Routine::ALL {
        table[r as usize] = pred(r);
    }
    table
}

/// Whether any event's routine is one `table` marks: a look at the routine column by the table
/// and without stopping early, which the compiler makes vector code (cheaper than a list per
/// rank; see the `diss` case of tests/bench/run.sh).
pub(super) fn any_routine(trace: &Trace, table: &[bool; 256]) -> bool {
    let any = |r: &[Routine]| r.iter().fold(false, |a, &r| a | table[r as usize]);
    trace.events.routines().par_chunks(1 << 16).any(any)
}

/// The collective instances as buckets: instance `(comm, s)` is bucket `first[k] + s`
/// (`comms[k] == comm`), of `size` callers (how many ranks call more than `s` times on it).
pub(super) struct Buckets {
    pub(super) comms: Vec<u32>,
    /// Per communicator, the most calls a rank makes on it.
    pub(super) most: Vec<u32>,
    pub(super) first: Vec<usize>,
    pub(super) size: Vec<u32>,
    /// Collective calls in all.
    pub(super) total: usize,
}

impl Buckets {
    /// The buckets of ranks' tallies; None where no rank calls a collective.
    pub(super) fn of(per_rank: &[Tally]) -> Option<Buckets> {
        let pairs = || per_rank.iter().flat_map(Tally::pairs);
        let total: usize = pairs().map(|(_, n)| n as usize).sum();
        if total == 0 {
            return None;
        }
        let mut comms: Vec<u32> = pairs().map(|(c, _)| c).collect();
        comms.sort_unstable();
        comms.dedup();
        let index = |c: u32| comms.binary_search(&c).expect("listed");
        let mut most = vec![0u32; comms.len()];
        for (c, n) in pairs() {
            let k = index(c);
            most[k] = most[k].max(n);
        }
        let mut first = Vec::with_capacity(comms.len() + 1);
        first.push(0usize);
        for &m in &most {
            first.push(first.last().expect("pushed") + m as usize);
        }
        let mut size = vec![0u32; first[comms.len()]];
        for (c, n) in pairs() {
            size[first[index(c)] + n as usize - 1] += 1;
        }
        for k in 0..comms.len() {
            // Calls `n` times: is in buckets 0..n.
            for b in (first[k]..first[k + 1] - 1).rev() {
                size[b] += size[b + 1];
            }
        }
        Some(Buckets {
            comms,
            most,
            first,
            size,
            total,
        })
    }

    /// Communicator `c`'s place in `comms`.
    pub(super) fn index(&self, c: u32) -> usize {
        self.comms.binary_search(&c).expect("listed")
    }
}

/// Each instance's `(rank, event)` in world rank order, bucket after bucket: a counting sort
/// of every collective call.
pub(super) fn place_calls(trace: &Trace, b: &Buckets) -> Vec<(u32, u32)> {
    let (first, size, comms) = (&b.first, &b.size, &b.comms);
    let mut at: Vec<usize> = size
        .iter()
        .scan(0usize, |acc, &n| {
            let a = *acc;
            *acc += n as usize;
            Some(a)
        })
        .collect();
    let mut placed = vec![(0u32, 0u32); b.total];
    let mut seq: Vec<u32> = vec![0; comms.len()];
    let mut used: Vec<usize> = Vec::new();
    for r in 0..trace.nranks() {
        let ev = trace.rank(r);
        for i in (0..ev.len()).filter(|&i| ev.routine(i).is_collective()) {
            let k = b.index(ev.comm(i));
            let b = first[k] + seq[k] as usize;
            placed[at[b]] = (r as u32, i as u32);
            at[b] += 1;
            if seq[k] == 0 {
                used.push(k);
            }
            seq[k] += 1;
        }
        for k in used.drain(..) {
            seq[k] = 0;
        }
    }
    drop(at);
    placed
}

/// Ties each bucket's calls into an instance, checked: the same routine (and root) from every
/// caller, callers members of the communicator; one that not all members call is an error in
/// a complete trace, else left out with a warning.
pub(super) fn tie_instances(
    trace: &Trace,
    file: &str,
    g: &mut HbGraph,
    b: &Buckets,
    placed: &[(u32, u32)],
    call: &CallOf<'_>,
    held: &dyn Fn(u32) -> bool,
) -> Result<(), TraceError> {
    let (first, size) = (&b.first, &b.size);
    let mut incomplete = Vec::new();
    let mut from = 0usize;
    let mut sorted: Vec<u32> = Vec::new();
    for (k, &comm) in b.comms.iter().enumerate() {
        let members = trace.comm_members(comm).expect("validated communicator");
        sorted.clear();
        sorted.extend(members.iter());
        sorted.sort_unstable();
        for (seq, &n) in size[first[k]..first[k + 1]].iter().enumerate() {
            let n = n as usize;
            let group = &placed[from..from + n];
            from += n;
            same_call(call, file, comm, seq, group.iter().copied())?;
            let routine = call(group[0].0, group[0].1).0;
            let is_member = |r: u32| sorted.binary_search(&r).is_ok();
            if let Some(&(r, _)) = group.iter().find(|x| !is_member(x.0)) {
                return Err(TraceError::at(
                    file,
                    format!(
                        "rank {r} calls {} on communicator {comm}, which it is not a member of",
                        routine.mpi_name()
                    ),
                ));
            }
            // Every caller is a member, once: the group is the communicator unless smaller.
            if n < members.len() {
                let in_group = |m: u32| group.binary_search_by_key(&m, |x| x.0).is_ok();
                let missing: Vec<u32> = sorted.iter().copied().filter(|&m| !in_group(m)).collect();
                let msg = format!(
                    "{} #{seq} on communicator {comm} is never called by rank(s){}",
                    routine.mpi_name(),
                    list_some(&missing)
                );
                if trace.complete {
                    return Err(TraceError::at(file, msg));
                }
                incomplete.push(msg);
                continue;
            }
            let x = g.instances.len() as u32;
            g.instances.push(Instance {
                comm,
                size: n as u32,
            });
            for &(r, i) in group.iter().filter(|&&(r, _)| held(r)) {
                g.link[g.start[r as usize] + i as usize] = !x;
            }
        }
    }
    if !incomplete.is_empty() {
        g.warnings.push(format!(
            "{} unfinished collective(s){}",
            incomplete.len(),
            list_some(&incomplete)
        ));
    }
    Ok(())
}

/// Each communicator's ranks by world rank: `None` for world (the same), else sorted
/// `(world rank, communicator rank)` pairs.
pub(super) type RanksIn = Vec<Option<Vec<(u32, u32)>>>;

/// Communicator `comm`'s [`RanksIn`] entry.
pub(super) fn ranks_of(trace: &Trace, comm: u32) -> Option<Vec<(u32, u32)>> {
    match trace.comm_members(comm).expect("validated communicator") {
        CommMembers::World(_) => None,
        CommMembers::List(m) => {
            let mut pairs: Vec<(u32, u32)> = m.iter().copied().zip(0..).collect();
            pairs.sort_unstable();
            Some(pairs)
        }
    }
}

/// The rank of world rank `r` in a communicator, from its [`RanksIn`] entry, if a member.
pub(super) fn rank_in(of: &Option<Vec<(u32, u32)>>, r: u32) -> Option<u32> {
    match of {
        None => Some(r),
        Some(pairs) => pairs
            .binary_search_by_key(&r, |&(w, _)| w)
            .ok()
            .map(|k| pairs[k].1),
    }
}

/// The communicators' [`RanksIn`] when each member of each of them calls a collective on it the
/// same number of times (`most`), and no other rank does: the common case, where every
/// instance is complete and a participant's place in it is its communicator rank. `per_rank`:
/// each rank's `(communicator, its calls on it)`.
pub(super) fn uniform(
    trace: &Trace,
    per_rank: &[Tally],
    comms: &[u32],
    most: &[u32],
) -> Option<RanksIn> {
    let ranks_in: RanksIn = comms.iter().map(|&c| ranks_of(trace, c)).collect();
    let mut callers = vec![0usize; comms.len()];
    for (r, on) in per_rank.iter().enumerate() {
        for (c, n) in on.pairs() {
            let k = comms.binary_search(&c).expect("listed");
            callers[k] += 1;
            if n != most[k] || rank_in(&ranks_in[k], r as u32).is_none() {
                return None;
            }
        }
    }
    let size = |k: usize| trace.comm_members(comms[k]).map_or(0, |m| m.len());
    (0..comms.len())
        .all(|k| callers[k] == size(k))
        .then_some(ranks_in)
}

/// [`match_collectives`] in the [`uniform`] case, in parallel: each rank links its calls to
/// their instances (instance `(k, s)`, the `s`-th call on communicator `comms[k]`, is bucket
/// `first[k] + s`, of `size[b]` calls), and the one of communicator rank 0 names its call the
/// instance's first; then each rank checks its calls against the firsts. The first mismatch
/// (by instance, then communicator rank) is the error.
pub(super) fn place_uniform(
    trace: &Trace,
    file: &str,
    g: &mut HbGraph,
    comms: &[u32],
    first: &[usize],
    size: &[u32],
    ranks_in: &RanksIn,
) -> Result<(), TraceError> {
    let firsts = link_uniform(trace, g, comms, first, size, ranks_in)?;
    let call = call_in(trace);
    let mismatch = uniform_mismatch(trace, comms, first, ranks_in, &|b| firsts[b], &call);
    match mismatch {
        None => Ok(()),
        Some((b, _, r, i)) => {
            let k = first.partition_point(|&f| f <= b) - 1;
            same_call(
                &call,
                file,
                comms[k],
                b - first[k],
                [firsts[b], (r, i)].into_iter(),
            )
        }
    }
}

/// The links of [`place_uniform`], and `g`'s instances; gives each instance's first call
/// (`(rank, event)` of its communicator rank 0; `(u32::MAX, u32::MAX)` where `trace` does not
/// hold it).
pub(super) fn link_uniform(
    trace: &Trace,
    g: &mut HbGraph,
    comms: &[u32],
    first: &[usize],
    size: &[u32],
    ranks_in: &RanksIn,
) -> Result<Vec<(u32, u32)>, TraceError> {
    // Per instance, its first call: rank << 32 | event.
    let firsts: Vec<AtomicU64> = size.iter().map(|_| AtomicU64::new(u64::MAX)).collect();
    let calls = |r: usize| uniform_calls(trace, comms, first, ranks_in, r);
    // World alone: every call's instance is implied (bucket b is the rank's b-th call).
    g.implicit = comms == [0];
    let implicit = g.implicit;
    par_ranges(&mut g.link[..], &g.start, &|r, links: &mut [u32]| {
        for (i, b, at) in calls(r) {
            // A nonblocking call's instance is read at its Wait, where no count implies it.
            if !implicit || trace.rank(r).routine(i).nonblocking() {
                links[i] = !(b as u32);
            }
            if at == 0 {
                firsts[b].store((r as u64) << 32 | i as u64, Ordering::Relaxed);
            }
        }
        Ok::<(), TraceError>(())
    })?;
    g.instances = (0..size.len())
        .map(|b| Instance {
            comm: comms[first.partition_point(|&f| f <= b) - 1],
            size: size[b],
        })
        .collect();
    Ok(firsts
        .into_iter()
        .map(|f| {
            let f = f.into_inner();
            ((f >> 32) as u32, f as u32)
        })
        .collect())
}

/// Rank `r`'s collective calls with their instances and its communicator rank in them
/// (`(event, bucket, communicator rank)`), in the [`uniform`] case.
pub(super) fn uniform_calls<'a>(
    trace: &'a Trace,
    comms: &'a [u32],
    first: &'a [usize],
    ranks_in: &'a RanksIn,
    r: usize,
) -> impl Iterator<Item = (usize, usize, u32)> + 'a {
    let ev = trace.rank(r);
    // `(communicator index, calls so far)`.
    let mut seq = Tally::default();
    (0..ev.len())
        .filter(move |&i| ev.routine(i).is_collective())
        .map(move |i| {
            let k = comms.binary_search(&ev.comm(i)).expect("listed");
            let s = seq.bump(k as u32) as usize;
            let at = rank_in(&ranks_in[k], r as u32).expect("a member");
            (i, first[k] + s, at)
        })
}

/// The first call of `trace`'s ranks that is not its instance's first call (`first_of(b)`,
/// the call of communicator rank 0), by instance, then communicator rank: `(bucket,
/// communicator rank, rank, event)`.
pub(super) fn uniform_mismatch(
    trace: &Trace,
    comms: &[u32],
    first: &[usize],
    ranks_in: &RanksIn,
    first_of: &(impl Fn(usize) -> (u32, u32) + Sync),
    call: &(impl Fn(u32, u32) -> (Routine, i32) + Sync),
) -> Option<(usize, u32, u32, u32)> {
    (0..trace.nranks())
        .into_par_iter()
        .filter_map(|r| {
            uniform_calls(trace, comms, first, ranks_in, r)
                .filter(|&(i, b, _)| differs(call, first_of(b), (r as u32, i as u32)))
                .map(|(i, b, at)| (b, at, r as u32, i as u32))
                .min()
        })
        .min()
}

/// A rank's `(key, count)` pairs, one a communicator it calls collectives on: a rank uses a
/// few, so the first two are held inline, the rest in a vector (a vector a rank would be an
/// allocation a rank, made and freed twice).
#[derive(Default)]
pub(super) struct Tally {
    pub(super) inline: [(u32, u32); 2],
    pub(super) len: u8,
    pub(super) more: Vec<(u32, u32)>,
}

impl Tally {
    /// Counts one more for `key`; returns its count before.
    pub(super) fn bump(&mut self, key: u32) -> u32 {
        let n = self.len as usize;
        let mut held = self.inline[..n].iter_mut().chain(self.more.iter_mut());
        if let Some((_, c)) = held.find(|(k, _)| *k == key) {
            *c += 1;
            return *c - 1;
        }
        match n < self.inline.len() {
            true => (self.inline[n], self.len) = ((key, 1), self.len + 1),
            false => self.more.push((key, 1)),
        }
        0
    }

    /// Adds `key`, counted `n` times, where it is not counted yet.
    pub(super) fn add(&mut self, key: u32, n: u32) {
        let k = self.len as usize;
        match k < self.inline.len() {
            true => (self.inline[k], self.len) = ((key, n), self.len + 1),
            false => self.more.push((key, n)),
        }
    }

    /// The pairs, in the order their keys were first counted.
    pub(super) fn pairs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.inline[..self.len as usize]
            .iter()
            .chain(&self.more)
            .copied()
    }
}

/// A collective call's routine and root, by `(rank, event)`.
pub(super) type CallOf<'a> = dyn Fn(u32, u32) -> (Routine, i32) + Sync + 'a;

/// [`CallOf`] read from `trace`.
pub(super) fn call_in(trace: &Trace) -> impl Fn(u32, u32) -> (Routine, i32) + Sync + '_ {
    |r, i| {
        let ev = trace.rank(r as usize);
        (ev.routine(i as usize), ev.peer(i as usize))
    }
}

/// Whether call `(r, i)` is not the call `head` is: another routine, or another root.
#[inline]
pub(super) fn differs(
    call: &(impl Fn(u32, u32) -> (Routine, i32) + ?Sized),
    head: (u32, u32),
    (r, i): (u32, u32),
) -> bool {
    call(head.0, head.1) != call(r, i)
}

/// Whether every participant of collective #`seq` on `comm` (`group`, of calls) makes the call
/// its first one makes: the same routine, the same root.
pub(super) fn same_call(
    call: &CallOf<'_>,
    file: &str,
    comm: u32,
    seq: usize,
    mut group: impl Iterator<Item = (u32, u32)>,
) -> Result<(), TraceError> {
    let Some((r0, i0)) = group.next() else {
        return Ok(());
    };
    let (routine, root) = call(r0, i0);
    for (r, i) in group {
        let (here, here_root) = call(r, i);
        if differs(call, (r0, i0), (r, i)) {
            return Err(TraceError::event(
                file,
                r as usize,
                i as usize,
                here.mpi_name(),
                format!(
                    "collective #{seq} on communicator {comm} is {} (root {here_root}) here but {} (root {root}) at rank {r0} event {i0}",
                    here.mpi_name(),
                    routine.mpi_name(),
                ),
            ));
        }
    }
    Ok(())
}
