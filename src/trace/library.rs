//! What the MPI library a trace recorded says about its run, read against the parameters a
//! prediction uses: where they disagree, a warning that says which the replay uses.

use super::{EagerLimit, Meta};

/// Open MPI's eager limits count the protocol's header (`calibrate` measures 4040 B where
/// `btl_vader_eager_limit` is 4096): a set's `S` this far below the recorded limit agrees.
pub const HEADER_BYTES: u64 = 256;

/// Whether the trace's library is MPICH (or one built on it).
pub fn is_mpich(meta: &Meta) -> bool {
    meta.library.contains("MPICH")
}

/// Whether `e` is where the library's messages switch to rendezvous: Open MPI's
/// `btl_*_eager_limit` and MPI_T's eager-limit variables are; MPICH's
/// `MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE` is its shared-memory cell size, which its
/// messages do not meet as a protocol switch (measured here: cells of 69,632 B, the rendezvous
/// jump at 8,255 B).
pub fn is_protocol_switch(e: &EagerLimit) -> bool {
    names_a_switch(&e.name)
}

/// [`is_protocol_switch`] by the variable's name.
pub fn names_a_switch(name: &str) -> bool {
    !name.starts_with("MPIR_CVAR_")
}

/// How far below a library's reported eager limit `r` the largest size it sends eagerly may lie:
/// its header, [`HEADER_BYTES`] or 5% of `r`, whichever is less.
pub fn header_allowance(r: u64) -> u64 {
    HEADER_BYTES.min(r / 20).max(1)
}

/// Whether a set's `S` agrees with a recorded limit `r` (the same, or less its header).
#[allow(non_snake_case)] // the paper's name
pub fn agrees(S: u64, r: u64) -> bool {
    S <= r && S + header_allowance(r) > r
}

/// Where the trace recorded the eager limit its messages met and the parameters' `S` is not
/// that limit (less its header): the warning, saying which the replay uses. None where they
/// agree, where the limit recorded is no protocol switch, or where `S` was chosen
/// for the prediction (`s_flag`: by a flag, or with a platform's parameters: a what-if). (A
/// set whose eager bands above `S` were measured at the trace's limit takes that limit:
/// [`measured_limit`].)
#[allow(non_snake_case)] // the paper's name
pub fn eager_limit_warning(meta: &Meta, S: u64, s_flag: bool) -> Option<String> {
    let e = meta.eager_limit.as_ref()?;
    if s_flag || !is_protocol_switch(e) {
        return None;
    }
    let r = e.bytes;
    if agrees(S, r) {
        return None;
    }
    let (lo, hi, now, then) = match S < r {
        true => (S + 1, r, "rendezvous", "eagerly"),
        false => (r + 1, S, "eagerly", "by rendezvous"),
    };
    Some(format!(
        "the trace was recorded with {} = {r} B and the parameters' eager limit is S = {S} B: \
         the replay uses S = {S}, so messages of {lo}–{hi} B are costed as {now} where the run \
         sent them {then}; to predict the run as it was, calibrate with the same {} (or pass \
         --S {r}, keeping the other parameters' protocols)",
        e.name, e.name
    ))
}

/// Where `S` was chosen for the prediction (`s_flag`: a what-if) and moves messages of the
/// trace to the other protocol than the run's (its recorded limit a protocol switch): a
/// warning with their count and bytes, saying what the replay cannot follow: the computation
/// between calls is kept as traced, where the protocol changes it too (the model's §11).
#[allow(non_snake_case)] // the paper's name
pub fn protocol_moved_warning(trace: &super::Trace, S: u64, s_flag: bool) -> Option<String> {
    use super::Shape;
    let e = trace
        .meta
        .eager_limit
        .as_ref()
        .filter(|e| is_protocol_switch(e))?;
    let r = e.bytes;
    if !s_flag || agrees(S, r) {
        return None;
    }
    let (lo, hi) = (S.min(r), S.max(r));
    // (flag 0: every send above `lo`, those up to `hi` kept)
    let (n, bytes, _) = flagged_above(trace, lo, 0, |ev, i, routine| {
        matches!(
            routine.shape(),
            Shape::Send | Shape::Isend | Shape::Sendrecv
        )
        .then(|| ev.bytes(i))
        .filter(|&k| k <= hi)
    });
    let (now, then) = match S > r {
        true => ("eagerly", "by rendezvous"),
        false => ("by rendezvous", "eagerly"),
    };
    (n > 0).then(|| {
        format!(
            "--S {S}: {n} send(s) of {}–{hi} B ({bytes} bytes) that the run, at {} = {r} B, \
             sent {then} are costed {now}, and the computation between calls is kept as traced, \
             where the other protocol can change it too (measured here: a CG-like loop computed \
             15–30% slower with its halos sent eagerly than by rendezvous; the model's §11): \
             the what-if is off by as much",
            lo + 1,
            e.name
        )
    })
}

/// The `S` that predicts the run as it was where the trace recorded the eager limit its
/// messages met, the set `p` is not at it, and `p`'s eager bands above its `S` were measured at
/// that limit (the model's §10, "both protocols"): where they end.
pub fn measured_limit(limit: Option<&EagerLimit>, p: &crate::model::Params) -> Option<u64> {
    let r = limit.filter(|e| is_protocol_switch(e))?.bytes;
    let top = p.bands?.eager_above()?.1.last()?.hi;
    (agrees(top, r) && !agrees(p.S, r)).then_some(top)
}

/// Where a trace recorded under MPICH has its collectives modeled by Open MPI 4.1's rules
/// (`modeled_by_default`: modeled, some operation left to those rules): the warning.
pub fn collectives_warning(meta: &Meta, modeled_by_default: bool) -> Option<String> {
    (modeled_by_default && is_mpich(meta)).then(|| {
        "the trace was recorded under MPICH, and its collectives are modeled by Open MPI 4.1's \
         algorithm choices (MPICH's are not modeled): pass --coll measured to keep their traced \
         durations, or --coll OP=ALGORITHM for the ones MPICH picks"
            .to_string()
    })
}

/// Over every rank's events whose message `bytes` gives (None: not a message of the kind
/// counted): `(n, bytes, all)`, how many above the eager limit `S` carry `flag` (0: every one)
/// and their bytes, and the bytes of all above `S`.
#[allow(non_snake_case)] // the paper's name
fn flagged_above(
    trace: &super::Trace,
    S: u64,
    flag: u8,
    bytes: impl Fn(&super::Rank<'_>, usize, super::Routine) -> Option<u64> + Sync,
) -> (u64, u64, u64) {
    use rayon::prelude::*;
    (0..trace.nranks())
        .into_par_iter()
        .map(|r| {
            let ev = trace.rank(r);
            let mut sum = (0u64, 0u64, 0u64);
            for (i, &routine) in ev.routines().iter().enumerate() {
                match bytes(&ev, i, routine) {
                    Some(k) if k > S => {
                        sum.2 += k;
                        if flag == 0 || ev.flags(i) & flag != 0 {
                            (sum.0, sum.1) = (sum.0 + 1, sum.1 + k);
                        }
                    }
                    _ => {}
                }
            }
            sum
        })
        .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2))
}

/// Where receives above the eager limit `S` went into a buffer their rank had last sent from to
/// the same peer ([`super::FLAG_BOUNCED`]: a ping-pong sending back what it received), a warning
/// with their count and bytes, for parameters whose `bounce` is 0: the receiver's copy then
/// writes lines the sender's cache holds, which on cores sharing little cache costs up to 2–3×
/// what the round trips of a calibration measure (the model's §13).
#[allow(non_snake_case)] // the paper's name
pub fn bounced_warning(trace: &super::Trace, S: u64) -> Option<String> {
    use super::Shape;
    let (n, bytes, all) =
        flagged_above(
            trace,
            S,
            super::FLAG_BOUNCED,
            |ev, i, routine| match routine.shape() {
                Shape::Recv | Shape::Irecv if !routine.is_probe() && !routine.is_iprobe() => {
                    Some(ev.bytes(i))
                }
                Shape::Sendrecv => Some(ev.recv_half(i).map_or(0, |h| h.bytes)),
                _ => None,
            },
        );
    (n > 0).then(|| {
        format!(
            "{n} receive(s) above the eager limit ({bytes} bytes, {:.0}% of the bytes received \
             by rendezvous) went into a buffer their rank had last sent from to the same peer (a \
             ping-pong sending back what it received): on cores that share little cache such a \
             message costs up to 2–3× more, which these parameters do not cost (their `bounce` \
             is 0: `calibrate` fits it; --bounce sets it), and the prediction is as much lower \
             (the model's §13)",
            100.0 * bytes as f64 / all.max(1) as f64
        )
    })
}

/// Where sends above the eager limit `S` went from a buffer unchanged since their rank's last
/// send from it ([`super::FLAG_CLEAN`]: data written long before), a warning with their count
/// and bytes, for parameters without `clean`: such a message costs less than the round trips
/// of a calibration measure, about half on some machines (the model's §13).
#[allow(non_snake_case)] // the paper's name
pub fn clean_warning(trace: &super::Trace, S: u64) -> Option<String> {
    use super::Shape;
    let (n, bytes, all) = flagged_above(trace, S, super::FLAG_CLEAN, |ev, i, routine| {
        matches!(
            routine.shape(),
            Shape::Send | Shape::Isend | Shape::Sendrecv
        )
        .then(|| ev.bytes(i))
    });
    // A collective's: its rank's bytes sent above the limit (its messages may be smaller).
    let (colls, _, _) = flagged_above(trace, S, super::FLAG_CLEAN, |ev, i, routine| {
        (routine.shape() == Shape::Coll).then(|| ev.bytes(i))
    });
    let what = match (n, colls) {
        (0, m) => format!(
            "{m} collective call(s) sending more than the eager limit went from a buffer \
             unchanged since their rank's last send from it"
        ),
        (n, m) => format!(
            "{n} send(s) above the eager limit ({bytes} bytes, {:.0}% of the bytes sent by \
             rendezvous) went from a buffer unchanged since their rank's last send from it{}",
            100.0 * bytes as f64 / all.max(1) as f64,
            match m {
                0 => String::new(),
                m => format!(", and {m} collective call(s) sending more than it from one"),
            }
        ),
    };
    (n + colls > 0).then(|| {
        format!(
            "{what}: a receiver's copy reads such data faster than data its sender has just written \
             (about half the time on some machines), which these parameters do not cost (they \
             have no `clean`: `calibrate` measures it; --clean sets it), and the prediction is \
             as much higher (the model's §13)"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(library: &str, name: &str, bytes: u64) -> Meta {
        Meta {
            library: library.into(),
            eager_limit: Some(EagerLimit {
                name: name.into(),
                bytes,
            }),
            ..Meta::default()
        }
    }

    /// Open MPI at 4096 B: a calibrated 4040 agrees (the header), 65536 recorded against 4040
    /// is named with the sizes it moves; a flag's `S` or MPICH's cell size says nothing.
    #[test]
    fn eager_limits_agree_or_say_which_is_used() {
        let ompi = meta("Open MPI v4.1.4", "btl_vader_eager_limit", 4096);
        assert_eq!(eager_limit_warning(&ompi, 4040, false), None);
        assert_eq!(eager_limit_warning(&ompi, 4096, false), None);
        let big = meta("Open MPI v4.1.4", "btl_vader_eager_limit", 65536);
        let w = eager_limit_warning(&big, 4040, false).unwrap();
        assert!(w.contains("btl_vader_eager_limit = 65536 B"), "{w}");
        assert!(w.contains("4041–65536 B are costed as rendezvous"), "{w}");
        assert!(w.contains("replay uses S = 4040"), "{w}");
        let w = eager_limit_warning(&ompi, 65536, false).unwrap();
        assert!(w.contains("4097–65536 B are costed as eagerly"), "{w}");
        assert_eq!(eager_limit_warning(&big, 4040, true), None);
        let mpich = meta(
            "MPICH Version: 4.0.2",
            "MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE",
            69632,
        );
        assert_eq!(eager_limit_warning(&mpich, 8255, false), None);
        // A set measured at 4040 with eager bands to 65480: a trace at 65536 is predicted at
        // 65480, one at the default as the set is; MPICH's cell size moves nothing.
        let a = crate::model::Band {
            hi: 65480,
            o: 180.0,
            Os: 0.14,
            ..Default::default()
        };
        let p = crate::model::Params::preset("myrinet").unwrap().in_bands();
        let p = crate::model::Params { S: 4040, ..p }
            .with_bands(|b| {
                *b = b.with_eager_above(4040, &[a])?;
                Ok(())
            })
            .unwrap();
        assert_eq!(measured_limit(big.eager_limit.as_ref(), &p), Some(65480));
        assert_eq!(measured_limit(ompi.eager_limit.as_ref(), &p), None);
        assert_eq!(measured_limit(mpich.eager_limit.as_ref(), &p), None);
        assert_eq!(measured_limit(None, &p), None);
        assert!(!is_protocol_switch(mpich.eager_limit.as_ref().unwrap()));
        assert!(collectives_warning(&mpich, true).is_some());
        assert!(collectives_warning(&mpich, false).is_none());
        assert!(collectives_warning(&ompi, true).is_none());
    }
    /// Counted by hand: of the receives above `S` = 1000 (5000 B bounced, 2000 B not, rank 0's
    /// Sendrecv's 3000 B bounced, rank 1's not), two bounced, 8000 of 13000 bytes (62%); the
    /// 500 B bounced one is eager. None where nothing above `S` bounced.
    #[test]
    fn bounced_receives_above_the_limit_are_counted() {
        let text = "loggps-trace 1\nranks 2\n\
            0 MPI_Send 0 1 bytes=5000 peer=1 tag=0\n1 MPI_Recv 0 2 bytes=5000 peer=0 tag=0 flags=bounced\n\
            0 MPI_Send 3 4 bytes=2000 peer=1 tag=0\n1 MPI_Recv 3 5 bytes=2000 peer=0 tag=0\n\
            0 MPI_Send 6 7 bytes=500 peer=1 tag=0\n1 MPI_Recv 6 8 bytes=500 peer=0 tag=0 flags=bounced\n\
            0 MPI_Sendrecv 9 10 bytes=3000 peer=1 tag=1 recv_bytes=3000 source=1 recv_tag=2 flags=bounced\n\
            1 MPI_Sendrecv 9 10 bytes=3000 peer=0 tag=2 recv_bytes=3000 source=0 recv_tag=1\n";
        let t = crate::trace::text::parse("t.txt", text.as_bytes()).unwrap();
        let w = bounced_warning(&t, 1000).unwrap();
        assert!(
            w.starts_with("2 receive(s) above the eager limit (8000 bytes, 62% of"),
            "{w}"
        );
        assert_eq!(bounced_warning(&t, 5000), None);
    }

    /// Counted by hand: of the sends above `S` = 1000 (5000 B clean, 2000 B not, rank 0's
    /// Isend's 3000 B clean, rank 1's Sendrecv's 4000 B clean), three clean, 12000 of 14000 bytes
    /// (86%); the 500 B clean one is eager. None where nothing above `S` is clean.
    #[test]
    fn clean_sends_above_the_limit_are_counted() {
        let text = "loggps-trace 1\nranks 2\n\
            0 MPI_Send 0 1 bytes=5000 peer=1 tag=0 flags=clean\n1 MPI_Recv 0 2 bytes=5000 peer=0 tag=0\n\
            0 MPI_Send 3 4 bytes=2000 peer=1 tag=0\n1 MPI_Recv 3 5 bytes=2000 peer=0 tag=0\n\
            0 MPI_Send 6 7 bytes=500 peer=1 tag=0 flags=clean\n1 MPI_Recv 6 8 bytes=500 peer=0 tag=0\n\
            0 MPI_Isend 9 10 bytes=3000 peer=1 tag=1 req=0 flags=clean\n0 MPI_Wait 11 12 done=0:-1:-1\n\
            1 MPI_Sendrecv 9 10 bytes=4000 peer=0 tag=2 recv_bytes=3000 source=0 recv_tag=1 flags=clean\n\
            0 MPI_Recv 13 14 bytes=4000 peer=1 tag=2\n";
        let t = crate::trace::text::parse("t.txt", text.as_bytes()).unwrap();
        let w = clean_warning(&t, 1000).unwrap();
        assert!(
            w.starts_with("3 send(s) above the eager limit (12000 bytes, 86% of"),
            "{w}"
        );
        assert_eq!(clean_warning(&t, 5000), None);
        assert_eq!(bounced_warning(&t, 1000), None);
        // Collectives flagged: counted beside, above the limit alone (a 16,384-byte Bcast's
        // root, not its 512-byte one); alone, they warn too.
        let colls = "loggps-trace 1\nranks 2\n\
            0 MPI_Bcast 0 1 root=0 bytes=16384 flags=clean\n1 MPI_Bcast 0 1 root=0 recv_bytes=16384\n\
            0 MPI_Bcast 2 3 root=0 bytes=512 flags=clean\n1 MPI_Bcast 2 3 root=0 recv_bytes=512\n";
        let both = format!("{text}{}", &colls[colls.find("0 MPI_Bcast").unwrap()..]);
        let t = crate::trace::text::parse("t.txt", both.as_bytes()).unwrap();
        let w = clean_warning(&t, 1000).unwrap();
        assert!(
            w.contains("from it, and 1 collective call(s) sending more than it from one: "),
            "{w}"
        );
        let t = crate::trace::text::parse("t.txt", colls.as_bytes()).unwrap();
        let w = clean_warning(&t, 1000).unwrap();
        assert!(
            w.starts_with("1 collective call(s) sending more than the eager limit went from"),
            "{w}"
        );
    }
}
