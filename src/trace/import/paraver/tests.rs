//! The reader's own shortcuts against what they stand for: a line read as plain integers
//! against its fields parsed one by one, a plain record against the general path's reading,
//! a search from the last one's place against a binary search.

use super::lines::{Item, Piece, piece, plain_line};
use super::*;

/// What `split` and `str::parse` make of a line: its fields' values, None if one is not a
/// plain integer as `plain_line` reads them (digits after an optional `-`, at most 18).
fn parsed(line: &str) -> Option<Vec<i64>> {
    let field = |f: &str| {
        let digits = f.strip_prefix('-').unwrap_or(f);
        let plain = !digits.is_empty() && digits.len() <= 18;
        (plain && digits.bytes().all(|b| b.is_ascii_digit())).then(|| f.parse().unwrap())
    };
    let fields: Option<Vec<i64>> = line.split(':').map(field).collect();
    fields.filter(|f| f.len() <= 32)
}

#[test]
fn lines_read_as_plain_integers_read_as_their_fields_parsed() {
    let lines = [
        "2:1:1:1:1:1000:50000001:1",
        "3:1:1:1:1:1000:1001:2:1:2:1:1001:1002:1024:0",
        "-5:0:-0:7",
        "1",
        "",
        ":",
        "1:",
        ":1",
        "1::2",
        "-",
        "1:-:2",
        "1:--2",
        "1:2-",
        "1: 2",
        "1:2\r",
        "c:1:91:4:1:2:3:4",
        "#Paraver (26/01/04 at 16:35):260199:4",
        "+1:2",
        "123456789012345678:1",
        "1234567890123:1:12345678",
        "1234567890123456789:1",
        "-123456789012345678",
        "9223372036854775807",
        "1:22:333:4444:55555:666666:7777777:88888888:999999999:1234567890123",
        "1:22:333:4444:55555:666666:7777777:88888888:999999999:12345678901234",
        &["1"; 32].join(":"),
        &["1"; 33].join(":"),
    ];
    let mut v = [0i64; 32];
    for line in lines {
        for (text, end) in [
            (format!("{line}\n7:7"), line.len()),
            (format!("{line}\n{}", "7:".repeat(40)), line.len()),
            (line.to_string(), line.len()),
        ] {
            let (at, n) = plain_line(text.as_bytes(), 0, &mut v);
            assert_eq!(at, end, "{line:?}: the line's end");
            let read = n.map(|n| v[..n].to_vec());
            assert_eq!(read, parsed(line), "{line:?}");
        }
        // From a line's start within the text, as the pieces are read: near its start, and
        // with 8 bytes before and 64 after (read 16 bytes at a time where it is plain).
        let text = format!("9:9\n{line}\n");
        let (at, n) = plain_line(text.as_bytes(), 4, &mut v);
        assert_eq!(
            (at, n.map(|n| v[..n].to_vec())),
            (4 + line.len(), parsed(line))
        );
        let text = format!("12345:78\n{line}\n{}", "7:".repeat(40));
        let (at, n) = plain_line(text.as_bytes(), 9, &mut v);
        assert_eq!(
            (at, n.map(|n| v[..n].to_vec())),
            (9 + line.len(), parsed(line)),
            "{line:?}"
        );
    }
}

/// Lines of fields of 0 to 20 digits (a sign, a stray byte now and then), each after a line
/// of its own and with lines after it or not, read as their fields parsed.
#[test]
fn random_lines_read_as_plain_integers_read_as_their_fields_parsed() {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut v = [0i64; 32];
    for _ in 0..20000 {
        let fields = 1 + next(12);
        let mut line = String::new();
        for i in 0..fields {
            if i > 0 {
                line.push(':');
            }
            if next(10) == 0 {
                line.push('-');
            }
            let len = [next(3), next(9), next(21)][next(3) as usize];
            for _ in 0..len {
                line.push((b'0' + next(10) as u8) as char);
            }
            if next(40) == 0 {
                line.push([' ', 'x', '/', ';', '\r'][next(5) as usize]);
            }
        }
        let before = "9".repeat(next(20) as usize);
        // (a long line after: 64 bytes from this one's start, as most lines have)
        let long = "\n".to_string() + &"1234567890:".repeat(7);
        let longer = long.repeat(2);
        let after = [
            "",
            "\n",
            "\n1:2:3",
            "\n12345678901234567890",
            &long,
            &longer,
        ][next(6) as usize];
        let text = format!("{before}\n{line}{after}");
        let from = before.len() + 1;
        let (at, n) = plain_line(text.as_bytes(), from, &mut v);
        assert_eq!(at, from + line.len(), "{line:?}: the line's end");
        assert_eq!(n.map(|n| v[..n].to_vec()), parsed(&line), "{line:?}");
    }
}

/// Random records of every kind, plain and as the general path reads them (each line ends in
/// a space, so none is plain): the same items of each task, records, operations, notes and
/// first error. Fields out of range now and then: another application, task, thread or
/// receiver, a negative time or size, a line cut short, events of every type the reader keeps
/// and of others.
#[test]
fn plain_records_read_as_the_general_path_reads_them() {
    let seed = std::cell::Cell::new(0x9e37_79b9_7f4a_7c15u64);
    let next = |n: u64| {
        let mut x = seed.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        seed.set(x);
        x % n
    };
    let h = Header {
        unit: 10,
        nodes: vec![1, 1, 2],
    };
    for _ in 0..300 {
        let mut lines = Vec::new();
        for _ in 0..40 {
            // Mostly in range, now and then out.
            let pick = |usual: i64, odd: &[i64]| match next(12) {
                0 => odd[next(odd.len() as u64) as usize],
                _ => usual,
            };
            let task = pick(1 + next(3) as i64, &[0, 4, -1]);
            let (appl, thread) = (pick(1, &[2, 0]), pick(1, &[2]));
            let t = pick(next(1_000_000) as i64, &[-5, 922_337_203_685_477_580]);
            let mut f: Vec<i64> = match next(4) {
                0 => vec![1, 1, appl, task, thread, t, t + 5, 1],
                1 => {
                    let mut f = vec![2, 1, appl, task, thread, t];
                    for _ in 0..1 + next(3) {
                        let types = [50_000_001, 50_000_005, 50_100_003, 70_000_001, 80_000_000];
                        let ty = pick(types[next(5) as usize], &[40_000_001, 50_000_006, -1]);
                        f.extend([ty, next(4) as i64 - 1]);
                    }
                    f
                }
                2 => {
                    let to = pick(1 + next(3) as i64, &[0, 4]);
                    let (bytes, tag) = (pick(1024, &[-1, 0]), next(3) as i64);
                    let mut f = vec![3, 1, appl, task, thread, t, t + 1, 2, 1, to, 1, t + 2];
                    f.extend([t + 3, bytes, tag]);
                    f
                }
                _ => vec![4, 1, appl, task, thread, t, 1, 8, 8, 1, 0],
            };
            if next(20) == 0 {
                f.truncate(next(f.len() as u64) as usize + 1);
            }
            let f: Vec<String> = f.iter().map(|x| x.to_string()).collect();
            lines.push(f.join(":"));
        }
        let read = |end: &str| {
            let body: String = lines.iter().map(|l| format!("{l}{end}\n")).collect();
            let mut out = Piece::new(3);
            piece("t.prv", body.as_bytes(), body.as_bytes(), &h, &mut out);
            let items: Vec<Vec<Item>> = (0..3).map(|r| out.items_of(r).to_vec()).collect();
            let glops: Vec<_> = (out.glops.iter())
                .map(|g| (g.sent, g.got, g.comm, g.root))
                .collect();
            let notes = (out.notes.skipped.clone(), out.notes.said.clone());
            let error = out.error.map(|e| e.to_string());
            (items, out.records, glops, notes, error)
        };
        let (plain, general) = (read(""), read(" "));
        let error_line =
            |e: &Option<String>| e.as_ref().map(|e| e.split('`').next().map(String::from));
        assert_eq!(error_line(&plain.4), error_line(&general.4), "{lines:#?}");
        assert_eq!(
            (&plain.0, &plain.1, &plain.2, &plain.3),
            (&general.0, &general.1, &general.2, &general.3),
            "{lines:#?}"
        );
    }
}

/// A task's calls beginning at `starts`.
fn calls(starts: &[u64]) -> Vec<PCall> {
    let call = |&t0: &u64| PCall {
        t0,
        t1: t0,
        ..PCall::default()
    };
    starts.iter().map(call).collect()
}

#[test]
fn a_search_from_the_last_ones_place_finds_what_a_binary_search_finds() {
    let sorted: [&[u64]; 5] = [
        &[],
        &[5],
        &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17],
        &[
            1, 1, 1, 3, 3, 8, 8, 8, 8, 9, 20, 20, 21, 40, 40, 40, 40, 40, 41,
        ],
        &[7; 9],
    ];
    for starts in sorted {
        let c = calls(starts);
        let last = starts.last().copied().unwrap_or(0) + 2;
        // Every time, from every place the last search may have ended.
        for t in 0..=last {
            let want = c.partition_point(|c| c.t0 <= t);
            for at in 0..=c.len() + 1 {
                let mut near = Near { at, sorted: true };
                assert_eq!(
                    begun(&c, t, &mut near),
                    want,
                    "{starts:?}, t {t}, from {at}"
                );
                assert_eq!(near.at, want);
            }
        }
        // And a sequence of searches, each from where the last ended.
        let mut near = Near {
            at: 0,
            sorted: true,
        };
        for t in (0..=last).chain((0..=last).rev()).chain([3, 30, 1, 40, 2]) {
            let want = c.partition_point(|c| c.t0 <= t);
            assert_eq!(begun(&c, t, &mut near), want, "{starts:?}, t {t}");
        }
    }
    // Calls out of time order: a binary search's own answer, whatever the place.
    let c = calls(&[5, 1, 9, 2, 8, 3]);
    for t in 0..12 {
        let mut near = Near {
            at: 4,
            sorted: false,
        };
        assert_eq!(begun(&c, t, &mut near), c.partition_point(|c| c.t0 <= t));
    }
}

/// A record found by its index from its piece's share of the records, against the pieces
/// walked in order: pieces of uneven sizes, some empty (a piece of communicator lines alone).
#[test]
fn records_found_by_index_are_those_in_file_order() {
    let sizes = [0, 3, 1, 0, 0, 7, 2, 0, 5, 1];
    let mut records = Records::default();
    let mut next = 0;
    for &n in &sizes {
        let piece: Vec<Record> = (0..n)
            .map(|i| ((next + i) as u32, 0, 0, 0, 0, 0, 0))
            .collect();
        next += n;
        records.push(piece);
    }
    assert_eq!(records.len, next);
    let near = std::cell::Cell::new(0);
    for i in 0..next {
        let k = records.piece_of(i);
        assert_eq!(
            records.pieces[k][i - records.first[k]].0 as usize,
            i,
            "record {i}"
        );
        assert_eq!(
            records.get_near(i, &near).0 as usize,
            i,
            "record {i} in order"
        );
    }
    // Out of order, from wherever the last one left it.
    for i in (0..next).rev().chain([4, 0, 17, 3, 18]) {
        assert_eq!(
            records.get_near(i, &near).0 as usize,
            i,
            "record {i} out of order"
        );
    }
    // Every record in the first piece, or in the last.
    for sizes in [[9, 0, 0], [0, 0, 9]] {
        let mut records = Records::default();
        let mut next = 0;
        for n in sizes {
            records.push(
                (0..n)
                    .map(|i| ((next + i) as u32, 0, 0, 0, 0, 0, 0))
                    .collect(),
            );
            next += n;
        }
        let near = std::cell::Cell::new(0);
        assert!((0..next).all(|i| records.get_near(i, &near).0 as usize == i));
    }
}

/// The text is not checked whole before it is read: a line that is not UTF-8 is refused where
/// it is read, with its number; one inside a plain line's digits cannot be (they are ASCII).
#[test]
fn a_line_that_is_not_utf8_is_refused_with_its_number() {
    let mut prv = b"#Paraver (01/01/26 at 00:00):100:2:1:2(1:1,1:1),1\n".to_vec();
    prv.extend_from_slice(b"2:1:1:1:1:10:50000001:1\n2:1:1:1:1:12:50000001:0\n");
    prv.extend_from_slice(b"2:1:1:1:1:14:5000\xff001:1\n");
    let e = refused(&prv);
    assert!(
        e.contains("t.prv") && e.contains("line 4") && e.contains("UTF-8"),
        "{e}"
    );
    let bad_header = b"#Paraver (01/01/26 \xff at 00:00):100:2:1:2(1:1,1:1),1\n";
    let e = refused(bad_header);
    assert!(e.contains("line 1"), "{e}");
}

fn refused(prv: &[u8]) -> String {
    match parse("t.prv", prv, None, &|| ()) {
        Ok(_) => panic!("read"),
        Err(e) => e.to_string(),
    }
}
