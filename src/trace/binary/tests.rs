use super::writer::{put_sleb, put_uleb};
use super::*;
use crate::trace::{FLAG_ANY_SOURCE, FLAG_BOUNCED, FLAG_CLEAN};

/// A file of the two ranks of `t`, each rank's records after one S chunk of `sites[r]`.
fn with_site_chunks(t: &Trace, sites: [&[u32]; 2]) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), 2, &t.meta).unwrap();
    for (r, idx) in sites.into_iter().enumerate() {
        let ev = t.events.rank(r);
        let (mut buf, mut prev) = (Vec::new(), 0);
        for i in 0..ev.len() {
            put_record(&mut buf, ev, i, prev);
            prev = ev.t_return(i);
        }
        w.sites(r as u32, &[0x10 + r as u64], idx).unwrap();
        w.events(r as u32, ev.len() as u32, &buf).unwrap();
    }
    w.finish().unwrap()
}

/// Sites round-trip; a rank whose S chunks number fewer records than it has loads with its
/// sites unknown and a warning; an index past the table is an error at the chunk.
#[test]
fn call_sites_are_checked_against_the_events() {
    let text = "loggps-trace 1\nranks 2\n\
                0 MPI_Init 0 1\n0 MPI_Finalize 2 3\n1 MPI_Init 0 1\n1 MPI_Finalize 2 3\n";
    let t = super::super::text::parse("t.txt", text.as_bytes()).unwrap();
    let good = parse("t.bin", &with_site_chunks(&t, [&[0, UNKNOWN], &[0, 0]])).unwrap();
    let s = good.sites.as_ref().unwrap();
    assert_eq!(s.of_event, [0, UNKNOWN, 0, 0]);
    assert_eq!((s.address(0, 0), s.address(1, 2)), (Some(0x10), Some(0x11)));
    assert!(good.warnings.is_empty(), "{:?}", good.warnings);
    let mut out = Vec::new();
    write(&good, &mut out, true).unwrap();
    assert_eq!(parse("t.bin", &out).unwrap().sites, good.sites);

    let short = parse("t.bin", &with_site_chunks(&t, [&[0, 0], &[0]])).unwrap();
    assert_eq!(
        short.sites.as_ref().unwrap().of_event,
        [0, 0, UNKNOWN, UNKNOWN]
    );
    assert!(
        short.warnings[0].contains("rank 1 has call sites for 1 records but 2 events"),
        "{:?}",
        short.warnings
    );

    let e = parse("t.bin", &with_site_chunks(&t, [&[0, 1], &[0, 0]])).unwrap_err();
    assert!(e.to_string().contains("expected sites below 1"), "{e}");
}

/// Event chunks in any order, a rank's split over several: each rank reads its own in
/// file order, with or without an index.
#[test]
fn event_chunks_out_of_rank_order() {
    let text = "loggps-trace 1\nranks 3\n\
        0 MPI_Send 10 20 bytes=8 peer=1 tag=0\n1 MPI_Recv 5 30 bytes=8 peer=0 tag=0\n\
        1 MPI_Send 40 50 bytes=9 peer=2 tag=1\n2 MPI_Recv 0 60 bytes=9 peer=1 tag=1\n\
        1 MPI_Barrier 70 80\n0 MPI_Barrier 70 80\n2 MPI_Barrier 70 80\n";
    let t = crate::trace::text::parse("t.txt", text.as_bytes()).unwrap();
    // Rank 1's three records in two chunks, around ranks 2's and 0's.
    let chunk = |r: usize, from: usize, to: usize| {
        let (ev, mut buf) = (t.events.rank(r), Vec::new());
        let mut prev = if from == 0 { 0 } else { ev.t_return(from - 1) };
        for i in from..to {
            put_record(&mut buf, ev, i, prev);
            prev = ev.t_return(i);
        }
        (r as u32, (to - from) as u32, buf)
    };
    let order = [
        chunk(1, 0, 2),
        chunk(2, 0, 2),
        chunk(0, 0, 2),
        chunk(1, 2, 3),
    ];
    for finalize in [false, true] {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, 3, &t.meta).unwrap();
        for (r, n, buf) in &order {
            w.events(*r, *n, buf).unwrap();
        }
        match finalize {
            true => drop(w.finish().unwrap()),
            false => drop(w),
        }
        let back = parse("t.bin", &out).unwrap();
        assert_eq!(back.complete, finalize);
        assert_eq!(back.events, t.events, "finalized: {finalize}");
    }
}

/// A finalized 40-rank ring, rank by rank: `before(writer, r)` writes what goes before rank
/// `r`'s E chunk. Returns the file and where each rank's E chunk is.
fn ring_file(before: &dyn Fn(&mut Writer<&mut Vec<u8>>, u32)) -> (Vec<u8>, Vec<usize>) {
    let spec = crate::synth::Spec {
        pattern: crate::synth::Pattern::Ring,
        ranks: 40,
        iterations: 2,
        bytes: 8,
        compute_ns: 0,
    };
    let mut file = Vec::new();
    crate::synth::write(&spec, &mut file, &|_| {}).unwrap();
    let t = parse("t.bin", &file).unwrap();
    let mut out = Vec::new();
    let mut w = Writer::new(&mut out, 40, &t.meta).unwrap();
    let mut e_chunks = Vec::new();
    for r in 0..40 {
        before(&mut w, r as u32);
        let (ev, mut buf, mut prev) = (t.events.rank(r), Vec::new(), 0);
        for i in 0..ev.len() {
            put_record(&mut buf, ev, i, prev);
            prev = ev.t_return(i);
        }
        e_chunks.push(w.offset as usize);
        w.events(r as u32, ev.len() as u32, &buf).unwrap();
    }
    w.finish().unwrap();
    (out, e_chunks)
}

/// The chunk scan read in stretches, where the index says they start, finds what a scan in
/// one stretch finds: the same trace and, with a byte changed before the index, the same
/// first error. The one-stretch scan reads the same bytes without the trailer, so that it
/// has no index to split by; where it stops only at the index chunk it was not told of,
/// the change was found later than the scan (in the records), and there is nothing to
/// compare.
#[test]
fn stretches_read_as_one() {
    let host = |name: String| RankMeta {
        hostname: name,
        clock_offset_init_ns: 5,
        clock_offset_final_ns: -5,
        cores: None,
        placement: None,
        own_ns: None,
        in_call_ns: None,
        own_req_ns: None,
        cpus: None,
        own_sampled: OwnSampled::NONE,
    };
    // Each rank's R chunk before its events, rank 7's again before rank 35's events.
    let (file, e_chunks) = ring_file(&|w, r| {
        w.rank_meta(r, &host(format!("n{}", r % 3))).unwrap();
        if r == 35 {
            w.rank_meta(7, &host("late".into())).unwrap();
        }
    });
    let trailer = file.len() - 16;
    let x = u64::from_le_bytes(file[trailer..trailer + 8].try_into().unwrap()) as usize;
    assert_eq!(e_chunks.len(), 40);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    pool.install(|| {
        let starts = stretch_starts(&file[..trailer], x, 3 * STRETCHES_PER_THREAD).unwrap();
        assert_eq!(starts.len(), 12);
        // Each stretch's hints start at its first event chunk.
        for &(from, ahead) in &starts[1..] {
            assert_eq!(index_offset(ahead, 0), from);
        }
        let whole = parse("t.bin", &file).unwrap();
        let mut text = Vec::new();
        crate::trace::text::write(&whole, &mut text).unwrap();
        let again = crate::trace::text::parse("t.txt", &text).unwrap();
        assert_eq!(whole.events, again.events);
        assert_eq!(whole.events.len(), 40 * 8);
        assert_eq!(whole.meta.ranks.get(7).hostname, "late");
        assert_eq!(whole.meta.ranks.get(8).hostname, "n2");
        assert_eq!(whole.meta.ranks.get(39).clock_offset_final_ns, -5);

        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let (mut compared, mut in_headers) = (0, 0);
        for case in 0..4000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Half the cases in an E chunk's header or record count, half anywhere.
            let at = if case % 2 == 0 {
                e_chunks[seed as usize % 40] + (seed >> 20) as usize % (CHUNK_HEADER_LEN + 4)
            } else {
                HEADER_LEN + (seed >> 8) as usize % (x - HEADER_LEN)
            };
            let mut f = file.clone();
            f[at] ^= 1 << ((seed >> 40) % 8);
            let Err(one) = parse("t.bin", &f[..trailer]) else {
                continue;
            };
            if one.offset == Some(x as u64) {
                continue;
            }
            let stretched = parse("t.bin", &f).expect_err("an error the one-stretch scan finds");
            // Without its trailer, a chunk running past the end is where the file was
            // cut: loaded up to there, it may fail later, at another error.
            if stretched.message.contains("a chunk of at most") {
                continue;
            }
            assert_eq!(
                stretched.to_string(),
                one.to_string(),
                "bit flipped at byte {at}"
            );
            compared += 1;
            in_headers += usize::from(e_chunks.iter().any(|&c| (c..c + 13).contains(&at)));
        }
        assert!(
            compared > 1000 && in_headers > 500,
            "{compared} compared, {in_headers} in E headers"
        );
    });
}

/// An error the chunks' order finds (a communicator defined again, differently) is reported
/// before one a later chunk of the same stretch has in itself.
#[test]
fn stretches_report_errors_in_file_order() {
    let comm = |members: Vec<u32>| Comm { id: 5, members };
    let (mut out, e_chunks) = ring_file(&|w, r| match r {
        0 => w.comm(&comm(vec![0, 1])).unwrap(),
        31 => w.comm(&comm(vec![1, 0])).unwrap(),
        _ => {}
    });
    assert!(parse("t.bin", &out).is_err_and(|e| e.message.contains("defined twice")));
    // Rank 31's chunk, after the second definition, made of an unknown kind.
    out[e_chunks[31]] = b'Q';
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let e = pool.install(|| parse("t.bin", &out)).unwrap_err();
    // The stretch that starts at rank 30's chunk holds the second C chunk (9 + 16 bytes).
    let starts = pool
        .install(|| stretch_starts(&out[..out.len() - 16], out.len() - 16 - 9 - 4 - 40 * 12, 12));
    assert!(starts.unwrap().iter().any(|s| s.0 == e_chunks[30]));
    assert_eq!(
        e.to_string(),
        format!(
            "t.bin: byte {}: communicator 5 is defined twice with different members",
            e_chunks[31] - 25
        )
    );
}

#[test]
fn leb128_round_trip() {
    for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
        let mut b = Vec::new();
        put_uleb(&mut b, v);
        assert_eq!(uleb(&b).unwrap(), (&[][..], v));
    }
    for v in [0i64, -1, 1, -64, 64, i64::MIN, i64::MAX] {
        let mut b = Vec::new();
        put_sleb(&mut b, v);
        assert_eq!(sleb(&b).unwrap().1, v);
    }
    // zigzag as FORMAT.md defines it: 0→0, -1→1, 1→2
    let mut b = Vec::new();
    put_sleb(&mut b, -1);
    assert_eq!(b, [1]);
    assert!(uleb(&[0xff; 11]).is_err());
    assert!(uleb(&[0x80]).is_err());
}

/// `record_fast` accepts only what `record` accepts, and then stores the same event and
/// stops at the same byte: random records of every shape, with values at the edges of
/// their ranges, overlong LEB128 encodings, flipped bytes and truncations.
#[test]
fn fast_records_agree_with_nom() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let edges: [u64; 12] = [
        0,
        1,
        7,
        8,
        127,
        128,
        i32::MAX as u64,
        1 << 31,
        u32::MAX as u64,
        1 << 32,
        i64::MAX as u64,
        u64::MAX,
    ];
    // Any peer is a rank, communicators 0 and 1 hold rank 0 (most records pass the checks).
    let one = Comm {
        id: 1,
        members: vec![0],
    };
    let checks = Checks::new("t", 1 << 24, &[one]).unwrap();
    let created = RankRequests {
        done: vec![super::super::NOT_DONE],
    };
    let (mut fast, mut both) = (0, 0);
    for case in 0..700_000 {
        let mut b = Vec::new();
        let codes = [
            0u8, 2, 10, 14, 17, 20, 21, 22, 23, 24, 25, 26, 30, 31, 34, 40, 43, 45, 51, 60, 61, 63,
            99,
        ];
        b.push(codes[rnd() as usize % codes.len()]);
        let value = |rnd: &mut dyn FnMut() -> u64| match rnd() % 4 {
            0 => edges[rnd() as usize % edges.len()],
            1 => rnd() % 300,
            2 => (rnd() % 300).wrapping_neg(),
            _ => rnd() >> (rnd() % 64),
        };
        // Half the records of small values alone, so that records of many fields (a
        // Sendrecv's eight) pass the checks too.
        let small = rnd() % 2 == 0;
        for _ in 0..rnd() % 14 {
            let v = if small { rnd() % 4 } else { value(&mut rnd) };
            if rnd() % 2 == 0 {
                put_uleb(&mut b, v);
            } else {
                put_sleb(&mut b, v as i64);
            }
        }
        if rnd() % 8 == 0 {
            let at = 1 + rnd() as usize % b.len();
            b.insert(at.min(b.len()), 0x80); // an overlong (or broken) LEB128 value
        }
        if rnd() % 8 == 0 {
            let at = rnd() as usize % b.len();
            b[at] ^= 1 << (rnd() % 8);
        }
        if rnd() % 8 == 0 {
            b.truncate(rnd() as usize % (b.len() + 1));
        }
        let prev_return = value(&mut rnd);
        let (mut ea, mut eb) = (Events::single(), Events::single());
        // A request 0 created before, so that completions may take the short form.
        let creator = Event {
            id: 0,
            ..Event::new(Routine::Irecv, 0, 0)
        };
        ea.push(&creator);
        eb.push(&creator);
        let mut ca = Cursor {
            events: &mut ea,
            done: Vec::new(),
            counts: Vec::new(),
            prev_return,
            rank: 0,
            checks: &checks,
            known_comm: 0,
            requests: created.clone(),
            invalid: None,
        };
        let mut cb = Cursor {
            events: &mut eb,
            done: Vec::new(),
            counts: Vec::new(),
            prev_return,
            rank: 0,
            checks: &checks,
            known_comm: 0,
            requests: created.clone(),
            invalid: None,
        };
        let slow = record(&b, &mut cb).map(|(rest, ())| rest.len()).ok();
        if let Some(rest) = record_fast(&b, &mut ca) {
            fast += 1;
            assert_eq!(slow, Some(rest.len()), "case {case}: {b:?}");
            assert_eq!(ca.prev_return, cb.prev_return, "case {case}: {b:?}");
            assert_eq!(ea, eb, "case {case}: {b:?}");
        }
        both += slow.is_some() as usize;
    }
    // Most records nom accepts take the fast path (not a vacuous comparison).
    assert!(
        fast > both * 3 / 4 && fast > 10_000,
        "{fast} fast of {both}"
    );
}

/// Rank 0's events' flags.
fn flags(t: &Trace) -> Vec<u8> {
    let ev = t.events.rank(0);
    (0..ev.len()).map(|i| ev.flags(i)).collect()
}

/// A receive's `bounced` flag (FORMAT.md, receive flag 8) round-trips through text and binary
/// on a Recv, an Irecv with `any_source` and a Sendrecv; a Sendrecv may not carry `found`.
#[test]
fn bounced_receives_keep_their_flag() {
    let text = "loggps-trace 1\nranks 2\n\
        0 MPI_Send 10 20 bytes=8 peer=1 tag=0\n1 MPI_Recv 5 30 bytes=8 peer=0 tag=0\n\
        1 MPI_Send 40 50 bytes=8 peer=0 tag=1\n0 MPI_Recv 25 60 bytes=8 peer=1 tag=1 flags=bounced\n\
        0 MPI_Irecv 70 71 bytes=8 peer=-1 tag=2 flags=any_source|bounced req=0\n\
        1 MPI_Send 72 73 bytes=8 peer=0 tag=2\n0 MPI_Wait 74 80 done=0:1:2\n\
        0 MPI_Sendrecv 90 99 bytes=8 peer=1 tag=3 recv_bytes=8 source=1 recv_tag=4 flags=bounced\n\
        1 MPI_Sendrecv 90 99 bytes=8 peer=0 tag=4 recv_bytes=8 source=0 recv_tag=3\n";
    let t = crate::trace::text::parse("t.txt", text.as_bytes()).unwrap();
    let want = [
        0,
        FLAG_BOUNCED,
        FLAG_ANY_SOURCE | FLAG_BOUNCED,
        0,
        FLAG_BOUNCED,
    ];
    assert_eq!(flags(&t), want);
    let mut out = Vec::new();
    write(&t, &mut out, true).unwrap();
    let back = parse("t.bin", &out).unwrap();
    assert_eq!(flags(&back), want);
    let mut txt = Vec::new();
    crate::trace::text::write(&back, &mut txt).unwrap();
    let txt = String::from_utf8(txt).unwrap();
    assert_eq!(txt.matches("bounced").count(), 3, "{txt}");
    assert!(txt.contains("flags=any_source|bounced"), "{txt}");

    // A Sendrecv may not carry `found`, nor a send `bounced`.
    let found = text.replacen("recv_tag=4 flags=bounced", "recv_tag=4 flags=found", 1);
    let e = crate::trace::text::parse("t.txt", found.as_bytes()).unwrap_err();
    assert!(
        e.to_string()
            .contains("expected flags among any_source|any_tag|bounced|clean, found `found`"),
        "{e}"
    );
    let send = text.replacen("tag=0\n1 MPI_Recv", "tag=0 flags=bounced\n1 MPI_Recv", 1);
    let e = crate::trace::text::parse("t.txt", send.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("expected flags among clean"), "{e}");
}

/// A send's `clean` flag (FORMAT.md, send flag 16) round-trips through text and binary on a
/// Send, an Isend and a Sendrecv's send half (beside its receive's `bounced`); in the binary a
/// flagged send's code has bit 7 (MPI_Send's 10 + 128 = 0x8A, MPI_Isend's 14 + 128 = 0x8E); a
/// receive may not carry it.
#[test]
fn clean_sends_keep_their_flag() {
    let text = "loggps-trace 1\nranks 2\n\
        params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383 \
        clean=4096:0.64,16384:0.49\n\
        0 MPI_Send 10 20 bytes=8 peer=1 tag=0 flags=clean\n1 MPI_Recv 5 30 bytes=8 peer=0 tag=0\n\
        0 MPI_Isend 30 31 bytes=8 peer=1 tag=1 req=0 flags=clean\n0 MPI_Wait 32 40 done=0:-1:-1\n\
        1 MPI_Recv 35 45 bytes=8 peer=0 tag=1\n\
        0 MPI_Sendrecv 90 99 bytes=8 peer=1 tag=3 recv_bytes=8 source=1 recv_tag=4 flags=bounced|clean\n\
        1 MPI_Sendrecv 90 99 bytes=8 peer=0 tag=4 recv_bytes=8 source=0 recv_tag=3\n";
    let t = crate::trace::text::parse("t.txt", text.as_bytes()).unwrap();
    let want = [FLAG_CLEAN, FLAG_CLEAN, 0, FLAG_BOUNCED | FLAG_CLEAN];
    assert_eq!(flags(&t), want);
    let mut out = Vec::new();
    write(&t, &mut out, true).unwrap();
    assert!(out.contains(&0x8A) && out.contains(&0x8E));
    let back = parse("t.bin", &out).unwrap();
    assert_eq!(flags(&back), want);
    // the set's `clean` by size too (the J chunk's optional values)
    let clean = back.meta.params.and_then(|p| p.clean).unwrap();
    assert_eq!(clean.points(), [(4096, 0.64), (16384, 0.49)]);
    let mut txt = Vec::new();
    crate::trace::text::write(&back, &mut txt).unwrap();
    let txt = String::from_utf8(txt).unwrap();
    assert!(txt.contains(" clean=4096:0.64,16384:0.49\n"), "{txt}");
    assert_eq!(txt.matches("clean").count(), 4, "{txt}");
    assert!(
        txt.contains("req=0 flags=clean") && txt.contains("flags=bounced|clean"),
        "{txt}"
    );
    let recv = text.replacen("peer=0 tag=0\n", "peer=0 tag=0 flags=clean\n", 1);
    let e = crate::trace::text::parse("t.txt", recv.as_bytes()).unwrap_err();
    assert!(
        e.to_string()
            .contains("expected flags among any_source|any_tag|found|bounced"),
        "{e}"
    );
}

/// A set's `rendezvous_sender` round-trips through text and binary: one value for every size
/// in the optional parameters (flag 64), one a size after the `bounce_clean` sizes (FORMAT.md);
/// a share above 1 is refused naming it.
#[test]
fn sender_shares_by_size_round_trip() {
    for (field, points) in [
        ("0.25", vec![(0, 0.25)]),
        (
            "4096:0.43,16384:0.16,65536:0",
            vec![(4096, 0.43), (16384, 0.16), (65536, 0.0)],
        ),
    ] {
        let text = format!(
            "loggps-trace 1\nranks 2\n\
             params L=1160 o=6550 Os=6.86 Or=2.57 Gs=15.48 Gl=-0.74 s=8191 S=16383 \
             rendezvous_sender={field}\n\
             0 MPI_Send 10 20 bytes=8 peer=1 tag=0\n1 MPI_Recv 5 30 bytes=8 peer=0 tag=0\n"
        );
        let t = crate::trace::text::parse("t.txt", text.as_bytes()).unwrap();
        let mut out = Vec::new();
        write(&t, &mut out, true).unwrap();
        let back = parse("t.bin", &out).unwrap();
        let share = back.meta.params.and_then(|p| p.rendezvous_sender).unwrap();
        assert_eq!(share.points(), points, "{field}");
        let mut txt = Vec::new();
        crate::trace::text::write(&back, &mut txt).unwrap();
        let txt = String::from_utf8(txt).unwrap();
        assert!(
            txt.contains(&format!(" rendezvous_sender={field}\n")),
            "{txt}"
        );
    }
    let over = "loggps-trace 1\nranks 1\n\
        params L=1 o=1 Os=0 Or=0 Gs=0 Gl=0 s=8 S=16 rendezvous_sender=4096:0.5,16384:1.5\n";
    let e = crate::trace::text::parse("t.txt", over.as_bytes()).unwrap_err();
    assert!(
        e.to_string()
            .contains("rendezvous_sender = 1.5 at 16384 B must lie in 0–1"),
        "{e}"
    );
}
