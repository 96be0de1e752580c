use super::*;

#[test]
fn formats_are_named_both_ways() {
    for f in Format::ALL {
        assert_eq!(Format::from_name(f.name()), Some(f));
    }
    assert_eq!(Format::from_name("otf"), None);
}

#[test]
fn simgrid_types_have_their_c_sizes() {
    // MPI_DOUBLE, MPI_INT, MPI_CHAR, MPI_SHORT, MPI_BYTE, MPI_LONG_DOUBLE, MPI_2INT, MPI_COUNT.
    for (id, bytes) in [
        (0, 8),
        (1, 4),
        (2, 1),
        (3, 2),
        (6, 1),
        (14, 16),
        (34, 8),
        (59, 8),
    ] {
        assert_eq!(simgrid_type_bytes(id), Some(bytes), "{id}");
    }
    assert_eq!(simgrid_type_bytes(60), None);
    assert_eq!(simgrid_type_bytes(-1), None);
}

#[test]
fn requests_complete_oldest_first_by_key() {
    let mut q: Requests<u64> = Requests::new();
    assert_eq!(q.create(0x10, None), 0);
    assert_eq!(q.create(0x18, Some((3, 7))), 1);
    assert_eq!(q.create(0x10, None), 2);
    assert_eq!(q.complete(&0x10).map(|c| c.req), Some(0));
    assert_eq!(q.complete(&0x20), None);
    let rest = q.complete_all();
    assert_eq!(
        rest,
        [
            Completion {
                req: 1,
                source: 3,
                tag: 7
            },
            Completion {
                req: 2,
                source: -1,
                tag: -1
            }
        ]
    );
}

#[test]
fn numbered_files_are_found_from_any_one() {
    let dir = tempfile::tempdir().unwrap();
    for r in 0..3 {
        std::fs::write(dir.path().join(format!("trace-v2-rank-{r}.txt")), "x").unwrap();
    }
    let files = numbered_siblings(&dir.path().join("trace-v2-rank-1.txt")).unwrap();
    let names: Vec<_> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "trace-v2-rank-0.txt",
            "trace-v2-rank-1.txt",
            "trace-v2-rank-2.txt"
        ]
    );
    assert!(numbered_siblings(&dir.path().join("none")).is_none());
}

/// Rank 2 receives twice from anyone: first rank 1's message (sent at 50, before rank 0's at
/// 100), then rank 0's; its Irecv's completion takes the source found.
#[test]
fn wildcards_take_the_earliest_sent_message_that_fits() {
    let send = |t, to, tag| Call::p2p(Routine::Send, (t, t + 1), 8, to, tag);
    let mut irecv = Call::p2p(Routine::Irecv, (10, 11), 8, PEER_ANY, TAG_ANY);
    irecv.e.id = 0;
    let mut wait = Call::new(Routine::Wait, 20, 30);
    wait.done = vec![Completion {
        req: 0,
        source: PEER_ANY,
        tag: TAG_ANY,
    }];
    let recv = Call::p2p(Routine::Recv, (40, 50), 8, PEER_ANY, 5);
    let mut calls = vec![
        vec![send(100, 2, 5)],
        vec![send(50, 2, 6)],
        vec![irecv, wait, recv],
    ];
    assert_eq!(resolve_wildcards(&mut calls), 2);
    let r2 = &calls[2];
    assert_eq!((r2[1].done[0].source, r2[1].done[0].tag), (1, 6));
    assert_eq!((r2[2].e.peer, r2[2].e.tag), (0, 5));
    assert_eq!(r2[2].e.flags, FLAG_ANY_SOURCE);
}

#[test]
fn rounding_without_the_library_call_is_rounds() {
    let cases = [
        0.0,
        -0.0,
        0.25,
        0.49999999999999994,
        0.5,
        1.5,
        2.5,
        -0.5,
        -3.7,
        1e15 + 0.5,
        4503599627370495.5,
        9007199254740993.0,
        1.8e19,
        1e300,
        f64::INFINITY,
        f64::NAN,
    ];
    for t in cases {
        assert_eq!(super::tit::round_ns(t), t.round() as u64, "{t}");
    }
}

/// GOAL schedules' errors, each at the line a reader counting the file's lines names (written
/// by hand), the one nearest the start where there are several; and what loads.
#[test]
fn goal_errors_name_their_lines() {
    let cases: &[(&str, Option<usize>, &str)] = &[
        (
            "rank 0 {\n}\n",
            Some(1),
            "expected `num_ranks N` before the first rank",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: send 8b to 1\n}\nrank 0 {\nl2: calc 1\n}\n",
            Some(5),
            "rank 0 is given twice",
        ),
        (
            "num_ranks 2\nrank 1 {\nl1: calc 1\n",
            None,
            "a `}` is missing",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: calc 1\nl1: calc 2\n}\n",
            Some(4),
            "label `l1` is defined twice",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: calc 1\nl1 requires l9\n}\n",
            Some(4),
            "label `l9`, which is not defined",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: bogus 3\n}\nfoo\n",
            Some(3),
            "rank 0:",
        ),
        (
            "num_ranks 2\nrank 0 {\nl1: calc 1\n}\nfoo\n",
            Some(5),
            "expected `num_ranks N` or `rank R {`",
        ),
        (
            "num_ranks 2\n/* a\nb */\nrank 5 {\n",
            Some(4),
            "expected a rank below 2, found `5`",
        ),
        (
            "num_ranks 2\nrank 0 { // zero\nl1: calc 1\n} // end\nrank 1 {\nl2: send 8b to 7\n}\n",
            None,
            "rank 1: a message names rank 7, of 2",
        ),
        (
            // A block's own error comes before any rank's peers are checked.
            "num_ranks 2\nrank 0 {\nl1: send 8b to 5\n}\nrank 1 {\nl1: bogus 3\n}\n",
            Some(6),
            "rank 1:",
        ),
        ("// nothing\n", None, "expected a `num_ranks N` line"),
    ];
    for (text, line, what) in cases {
        let e = super::goal::from_text("t.goal", text, 1.0).expect_err(text);
        assert_eq!(e.line, *line, "{text}: {e}");
        assert!(e.to_string().contains(what), "{text}: {e}");
    }
    // An empty block may come again; a dependency may name a label defined after it.
    let ok = "num_ranks 2\nrank 0 {\n}\nrank 0 {\nl2 requires l1\nl1: send 8b to 1\nl2: calc 5\n}\n\
              rank 1 {\nr: recv 8b from 0\n}\n";
    let t = super::goal::from_text("t.goal", ok, 1.0).unwrap();
    assert_eq!(t.events.nranks(), 2);
}

/// Calls pushed as they are read ([`read_ranks`]) make the trace that kept calls make
/// ([`build`], checked after the fill): events, pending requests, sites; and a wrong
/// call the same error.
#[test]
fn calls_pushed_as_read_make_the_trace_kept_calls_make() {
    let calls = |late: bool| {
        let mut isend = Call::p2p(Routine::Isend, (5, 6), 8, 1, 3);
        isend.site = 1;
        let mut open = Call::p2p(Routine::Isend, (7, 8), 8, 1, 4);
        open.e.id = 1;
        let mut wait = Call::new(Routine::Waitall, 9, 12);
        wait.done = vec![Completion {
            req: 0,
            source: -1,
            tag: -1,
        }];
        let mut sendrecv = Call::new(Routine::Sendrecv, 20, 25);
        (sendrecv.e.peer, sendrecv.e.tag, sendrecv.e.bytes) = (0, 7, 16);
        sendrecv.half = Some(RecvHalf {
            bytes: 16,
            source: 0,
            tag: 7,
        });
        sendrecv.site = 0;
        let mut recv = Call::p2p(Routine::Recv, (10, 30), 8, 0, 3);
        recv.site = 9; // beyond the places: none
        let bcast = |t| Call::coll(Routine::Bcast, (t, t + 2), 0, 64, 64);
        let fin = Call::new(Routine::Finalize, if late { 40 } else { 3 }, 41);
        vec![
            vec![
                Call::new(Routine::Init, 0, 1),
                isend,
                open,
                wait,
                bcast(13),
                sendrecv,
            ],
            vec![
                Call::new(Routine::Init, 0, 2),
                recv,
                bcast(31),
                sendrecv_of(0),
                fin,
            ],
        ]
    };
    fn sendrecv_of(peer: i32) -> Call {
        let mut c = Call::new(Routine::Sendrecv, 33, 35);
        (c.e.peer, c.e.tag, c.e.bytes) = (peer, 7, 16);
        c.half = Some(RecvHalf {
            bytes: 16,
            source: peer,
            tag: 7,
        });
        c
    }
    let places = [Named::default(), Named::default()];
    let read = |calls: &Vec<Vec<Call>>| {
        read_ranks("t", 2, Notes::default(), Vec::new(), &places, &|r, out| {
            calls[r].iter().for_each(|c| out.put(c));
            Ok(Notes::default())
        })
    };
    let good = calls(true);
    let kept = build("t", good.clone(), Notes::default(), Vec::new(), &places).unwrap();
    let pushed = read(&good).unwrap();
    assert_eq!(pushed, kept);
    assert_eq!(pushed.pending, vec![(0, 2)]);
    assert_eq!(
        pushed.sites.as_ref().unwrap().addresses,
        [vec![1, 0], vec![]]
    );
    // Rank 1's Finalize is called before its Sendrecv returns.
    let bad = calls(false);
    let kept = build("t", bad.clone(), Notes::default(), Vec::new(), &places);
    let pushed = read(&bad);
    assert_eq!(
        pushed.unwrap_err().to_string(),
        kept.unwrap_err().to_string()
    );
}

/// Schedgen's lines, which the GOAL reader reads byte by byte, make the schedule the same lines
/// read as words make (each written with two spaces or a comment, which the byte reader
/// declines): the same trace, or the same error at the same line.
#[test]
fn goal_lines_read_byte_by_byte_read_as_words_do() {
    let rank0 = [
        "l0: send 1024b to 1 tag 7",
        "l1: calc 500",
        "l1 requires l0",
        "l2: recv 8b from 1",
        "l2 irequires l1",
        "l3: send 16b to 1 tag 3",
        "l3 requires l2",
    ];
    let rank1 = [
        "l0: recv 1024b from -1 tag 7",
        "l1: send 8b to 0",
        "l1 requires l0",
        "l10: recv 16b from 0 tag 3",
        // A label with a leading zero: hashed, not in the table of `lN`.
        "l05: calc 3",
        "l05 requires l10",
    ];
    let schedule = |slow: bool, extra: &str| {
        let line = |l: &&str| match slow {
            true => l.replacen(' ', "  ", 1),
            false => l.to_string(),
        };
        let body = |lines: &[&str]| lines.iter().map(line).collect::<Vec<_>>().join("\n");
        let more: Vec<&str> = rank0
            .iter()
            .copied()
            .chain(Some(extra).filter(|e| !e.is_empty()))
            .collect();
        format!(
            "num_ranks 2\nrank 0 {{\n{}\n}}\nrank 1 {{\n{}\n}}\n",
            body(&more),
            body(&rank1)
        )
    };
    let read = |slow: bool, extra: &str| super::goal::from_text("t", &schedule(slow, extra), 1.0);
    let (fast, words) = (read(false, "").unwrap(), read(true, "").unwrap());
    assert_eq!(fast, words);
    // Rank 1's wildcard receive was given rank 0's first send; rank 0's calc took 500 ns.
    assert!(
        (fast.warnings.iter()).any(|w| w.contains("1 wildcard receives")),
        "{:?}",
        fast.warnings
    );
    assert_eq!(fast.rank(0).t_call(2), 500);
    for extra in ["l1: calc 5", "l4 requires l9", "l5: send 1b to 2"] {
        let (fast, words) = (read(false, extra), read(true, extra));
        assert_eq!(
            fast.unwrap_err().to_string(),
            words.unwrap_err().to_string(),
            "{extra}"
        );
    }
}

/// A schedule as schedgen writes it is issued while its blocks are read: the calls are those
/// of reading each block whole first (forced by a comment line), and by hand: two sends in
/// flight completed by one Waitall before the `calc` that requires both, a receive followed by
/// a `calc 0` that requires it (a Wait) posted nonblocking, the last operation blocking.
#[test]
fn a_schedgen_schedule_is_issued_as_it_is_read() {
    let schedule = |comment: &str| {
        format!(
            "num_ranks 2\nrank 0 {{\nl0: send 8b to 1 tag 0\nl1: send 16b to 1 tag 1\n\
             l2: calc 100\nl2 requires l0\nl2 requires l1\nl3: recv 8b from 1 tag 2\n\
             l3 irequires l2\nl4: calc 0\nl4 requires l3\n}}\nrank 1 {{\n\
             l0: recv 8b from 0 tag 0\nl1: recv 16b from 0 tag 1\nl2: calc 0\n\
             l2 requires l0\nl2 requires l1\n{comment}l3: send 8b to 0 tag 2\nl3 requires l2\n}}\n"
        )
    };
    let read = |comment: &str| super::goal::from_text("t", &schedule(comment), 1.0).unwrap();
    let (streamed, whole) = (read(""), read("// read whole\n"));
    assert_eq!(streamed, whole);
    let routines = |r: usize| {
        let ev = streamed.rank(r);
        (0..ev.len()).map(|i| ev.routine(i)).collect::<Vec<_>>()
    };
    use Routine::*;
    assert_eq!(
        routines(0),
        [Init, Isend, Isend, Waitall, Irecv, Wait, Finalize]
    );
    assert_eq!(routines(1), [Init, Irecv, Irecv, Waitall, Send, Finalize]);
    // The receive is posted after the 100 ns `calc`.
    assert_eq!(streamed.rank(0).t_call(4), 100);
}

/// The byte loops that cut other tools' text lines read as the library's `split`, `parse` and
/// `lines` do, on fields built from every piece that matters (signs, digits, 18 and 19 digits,
/// separators at either end, empty fields, bytes beyond ASCII).
#[test]
fn line_cutting_reads_as_the_library_does() {
    let atoms = [
        "",
        "0",
        "7",
        "-3",
        "+12",
        "--1",
        "1-",
        "123456789012345678",
        "1234567890123456789",
        "-999999999999999999",
        "9223372036854775807",
        "99999999999999999999",
        "1.5",
        " 4",
        "é",
        "a:b",
        ":",
        "::",
        ",",
        "1,2,3",
    ];
    for a in atoms {
        assert_eq!(parse_i64(a), a.parse::<i64>().ok(), "{a:?}");
        for b in atoms {
            let s = format!("{a}:{b},{a}");
            for sep in [b':', b','] {
                let mut fields = Vec::new();
                split_into(&s, sep, &mut fields);
                let std: Vec<&str> = s.split(sep as char).collect();
                assert_eq!(fields, std, "{s:?}");
                for k in 0..std.len() + 1 {
                    assert_eq!(nth_part(&s, sep, k), std.get(k).copied(), "{s:?} {k}");
                }
            }
        }
    }
    // Longer lines: a separator at every place of an eight-byte word, next to bytes that differ
    // from it in one bit (`;` and `8` beside `:`, `-` and `.` beside `,`) and to non-ASCII text.
    for sep in [b':', b','] {
        for n in 0..40 {
            for at in 0..n {
                let mut s: Vec<u8> = (0..n)
                    .map(|i| [b';', b'8', b'-', b'.', b'9'][i % 5])
                    .collect();
                s[at] = sep;
                if n > at + 3 {
                    s[at + 2] = sep;
                }
                let s = String::from_utf8(s).unwrap() + "é:,";
                let mut fields = Vec::new();
                split_into(&s, sep, &mut fields);
                assert_eq!(fields, s.split(sep as char).collect::<Vec<_>>(), "{s:?}");
            }
        }
    }
    let text = "a\n\nb\r\nc";
    let ours: Vec<(usize, &str)> = numbered_lines(text).collect();
    assert_eq!(ours, [(1, "a"), (2, ""), (3, "b\r"), (4, "c")]);
    assert_eq!(numbered_lines("a\n").count(), "a\n".lines().count());
}

/// A wrong line far into a large file (past its first pieces, which are read in parallel) is
/// named by its number, counted here from the text: in a time-independent trace (a rank the
/// reader refuses, and an action's bad number, read in a second pass) and a Paraver trace.
#[test]
fn errors_deep_in_a_large_text_name_their_lines() {
    let good = (0..40_000)
        .map(|i| format!("{} compute 10\n", i % 2))
        .collect::<String>();
    let files = |text: String| vec![("t.txt".to_string(), text.into_bytes())];
    for (bad, what) in [
        ("x compute 10\n", "rank below"),
        ("1 compute ten\n", "number"),
    ] {
        let text = format!("0 init\n1 init\n{good}{bad}{good}");
        let line = text.lines().position(|l| l == bad.trim_end()).unwrap() + 1;
        let e = parse(Format::Tit, &files(text), &Options::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!(": line {line}")) && e.contains(what),
            "{line}: {e}"
        );
    }
    let head = "#Paraver (01/01/26 at 00:00):1000000:1(2):1:2(1:1,1:1),1\n";
    let good = (0..20_000).map(|i| format!("2:{}:1:{}:1:{i}:50000001:0\n", 1 + i % 2, 1 + i % 2));
    let good = good.collect::<String>();
    let text = format!("{head}{good}2:1:1:1:1:x:50000001:0\n{good}");
    let line = text.lines().position(|l| l.contains(":x:")).unwrap() + 1;
    let e = parse(Format::Paraver, &files(text), &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!(": line {line}")), "{line}: {e}");
}

/// A time-independent line's words, read in one pass, are what cutting it at its line break
/// or comment and splitting it at ASCII spaces gives.
#[test]
fn tit_words_read_in_one_pass_are_the_split_line() {
    let lines = [
        "0 send 1 0 1024",
        "  1   recv\t0 0 8  ",
        "0 compute 1e6 # a comment",
        "0 wait#no space",
        "#",
        "",
        "   ",
        "1 init\r",
        "2 bcast 8 0 é 3",
        "0 send 1 0 1024\n1 recv 0 0 1024",
        "0\x0csleep\r1.5",
    ];
    for line in lines {
        let end = line.find(['\n', '#']).unwrap_or(line.len());
        let split: Vec<&str> = line[..end].split_ascii_whitespace().collect();
        for at in 0..line.len() {
            if !line.is_char_boundary(at) || (at > 0 && !line.as_bytes()[at - 1].is_ascii()) {
                continue;
            }
            let end = at + line[at..].find(['\n', '#']).unwrap_or(line.len() - at);
            let split_at: Vec<&str> = line[at..end].split_ascii_whitespace().collect();
            let mut words = Vec::new();
            tit::words_at(line, at, &mut words);
            assert_eq!(words, split_at, "{line:?} from {at}");
        }
        let mut words = Vec::new();
        tit::words_at(line, 0, &mut words);
        assert_eq!(words, split, "{line:?}");
    }
}

/// A time-independent file's lines read alike however they are written: a rank with leading
/// zeros or a sign, spaces or tabs first, comments, CRLF line ends (the usual line is read
/// byte by byte, any other as words).
#[test]
fn tit_lines_read_alike_however_written() {
    // (The usual lines are read byte by byte, the others as words: both give the same.)
    let usual = "0 init\n1 init\n0 send 1 0 1024\n1 recv 0 0 1024\n0 compute 1000\n\
                 1 comm_size 2\n0 recv 1 1 8\n1 send 0 1 8\n0 isend 1 2 16\n1 irecv 0 2 16\n\
                 0 compute 7\n0 wait 0 1 2\n1 wait 0 1 2\n0 finalize\n1 finalize\n";
    let unusual = "# a header\n0 init\n\n  1\tinit\r\n00 send 1 0 1024 # to 1\n\
                   +1 recv 0 0 1024\n\t0 compute\t1000\n1\tcomm_size 2\n0 recv 1 1 8\r\n\
                   1 send 0 1 8\n   \n0 isend 1 2 16 \n1 irecv  0 2 16\n0 compute 7.0\n\
                   0 wait 0 1 2\n1 wait 0 1 2\n0 finalize#\n1 finalize";
    let read = |text: &str| {
        let files = vec![("t.txt".to_string(), text.as_bytes().to_vec())];
        parse(Format::Tit, &files, &Options::default()).unwrap()
    };
    let (a, b) = (read(usual), read(unusual));
    assert_eq!(a.events.len(), 12);
    assert_eq!(a.events, b.events);
    assert_eq!(a.warnings, b.warnings);
    // A peer past the ranks, however written, is the same error, naming its line.
    for line in ["0 send 2 0 8", "0 send 2 0 8 "] {
        let files = vec![(
            "t.txt".to_string(),
            format!("0 init\n1 init\n{line}\n").into_bytes(),
        )];
        let e = parse(Format::Tit, &files, &Options::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(": line 3") && e.contains("rank below 2"), "{e}");
    }
    // A rank of eight digits is past 2^20 whichever way it is read: its line is named.
    let files = vec![("t.txt".to_string(), b"0 init\n12345678 init\n".to_vec())];
    let e = parse(Format::Tit, &files, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains(": line 2") && e.contains("below 2^20"), "{e}");
}
