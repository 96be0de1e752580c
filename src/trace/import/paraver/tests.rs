//! The reader's own shortcuts against what they stand for: a line read as plain integers
//! against its fields parsed one by one, a search from the last one's place against a binary
//! search.

use super::lines::plain_line;
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
        // From a line's start within the text, as the pieces are read.
        let text = format!("9:9\n{line}\n");
        let (at, n) = plain_line(text.as_bytes(), 4, &mut v);
        assert_eq!(
            (at, n.map(|n| v[..n].to_vec())),
            (4 + line.len(), parsed(line))
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
        let before = "9".repeat(next(9) as usize);
        // (a long line after: 64 bytes from this one's start, as most lines have)
        let long = "\n".to_string() + &"1234567890:".repeat(7);
        let after = ["", "\n", "\n1:2:3", "\n12345678901234567890", &long][next(5) as usize];
        let text = format!("{before}\n{line}{after}");
        let from = before.len() + 1;
        let (at, n) = plain_line(text.as_bytes(), from, &mut v);
        assert_eq!(at, from + line.len(), "{line:?}: the line's end");
        assert_eq!(n.map(|n| v[..n].to_vec()), parsed(&line), "{line:?}");
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
        let piece: Vec<Record> = (0..n).map(|i| (next + i, 0, 0, 0, 0, 0, 0)).collect();
        next += n;
        records.push(piece);
    }
    assert_eq!(records.len, next);
    for i in 0..next {
        assert_eq!(records.get(i).0, i, "record {i}");
    }
    // Every record in the first piece, or in the last.
    for sizes in [[9, 0, 0], [0, 0, 9]] {
        let mut records = Records::default();
        let mut next = 0;
        for n in sizes {
            records.push((0..n).map(|i| (next + i, 0, 0, 0, 0, 0, 0)).collect());
            next += n;
        }
        assert!((0..next).all(|i| records.get(i).0 == i));
    }
}
