//! `callsites`: the predicted run's costs summed by call site. On a hand-built trace, each
//! site's sums are the hand calculation of the model documentation's round trip (the same
//! sites of two ranks, loaded at other addresses, taken together); on a real job, a C program
//! compiled with `-g` whose slow receive sits on a known line is named by that file and line.
//!
//! The real job needs `make -C tracer MPI=openmpi` first (`tests/ci.sh` does it and sets
//! `LOGGPS_MPI_TESTS=1`, under which a missing build is a failure, not a skip).

mod common;

use common::{fixture, json, run, text_trace};
use std::path::Path;
use std::process::Command;

/// fixtures/sites.txt: the round trip of fixtures/rtt/k12000-w500000.txt (hand-costed in
/// tests/cli_timeline.rs, `every_slice_is_the_hand_calculation`): T1 = 88,870 ns a send,
/// T3 = 37,390 ns a receive, and rank 1's receive waits 214,008.02 ns (receiver
/// synchronization). Each rank's Recv and Send have sites, at one address of one file for both
/// ranks (each rank loaded it elsewhere: bias 0x1000 and 0x8000), and MPI_Init and
/// MPI_Finalize have none.
fn round_trip_with_sites() -> String {
    std::fs::read_to_string(fixture("sites.txt")).unwrap()
}

#[test]
fn each_site_sums_the_hand_calculation() {
    let (_d, f) = text_trace("rtt.txt", &round_trip_with_sites());
    let v = json(&["callsites", &f, "--format", "json"]);
    let sites = v["sites"].as_array().unwrap();
    assert_eq!(sites.len(), 2, "{v}");
    let ns = |s: &serde_json::Value, k: &str| s[k].as_f64().unwrap() * 1e9;
    // Ranked by synchronization: the receives first.
    let (recv, send) = (&sites[0], &sites[1]);
    assert_eq!(recv["address"], "0x200");
    assert_eq!(recv["site"], "? (prog+0x200)");
    assert_eq!(recv["routines"], serde_json::json!(["MPI_Recv"]));
    assert_eq!(
        (recv["calls"].as_u64(), recv["ranks"].as_u64()),
        (Some(2), Some(2))
    );
    assert!(
        (ns(recv, "receiver_sync_s") - 214_008.02).abs() < 1e-3,
        "{recv}"
    );
    assert!(
        (ns(recv, "communication_s") - 2.0 * 37_390.0).abs() < 1e-3,
        "{recv}"
    );
    assert_eq!(ns(recv, "sender_sync_s"), 0.0);
    assert_eq!(send["address"], "0x300");
    assert_eq!(send["routines"], serde_json::json!(["MPI_Send"]));
    assert!(
        (ns(send, "communication_s") - 2.0 * 88_870.0).abs() < 1e-3,
        "{send}"
    );
    assert_eq!(ns(send, "receiver_sync_s") + ns(send, "sender_sync_s"), 0.0);
    assert_eq!(
        v["unknown_calls"], 4,
        "MPI_Init and MPI_Finalize of both ranks"
    );
    assert!((v["predicted_s"].as_f64().unwrap() * 1e9 - 626_260.0).abs() < 1e-3);

    // By communication, the sends come first; the CSV has a row a site.
    let v = json(&[
        "callsites",
        &f,
        "--format",
        "json",
        "--sort",
        "communication",
    ]);
    assert_eq!(v["sites"][0]["address"], "0x300");
    let out = run(&["callsites", &f, "--format", "csv"]);
    let csv = String::from_utf8(out.stdout).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(
        csv.lines().nth(1).unwrap().contains("\"MPI_Recv\""),
        "{csv}"
    );
    // The object is not there: said once, and the sites shown as addresses.
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.matches("/nonexistent/prog not found").count(),
        1,
        "{err}"
    );
    assert!(err.contains("4 calls have no recorded site"), "{err}");

    // The table shows --top sites and says how many more there are.
    let out = run(&["callsites", &f, "--top", "1"]);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("prog+0x200") && !table.contains("prog+0x300"),
        "{table}"
    );
    assert!(
        table.contains("1 more sites (--top 0 shows all)"),
        "{table}"
    );
}

/// The critical path's time by call site: each site holds one routine here, so its time is the
/// path's time in that routine, and together they are the path less its computation.
#[test]
fn the_critical_path_by_call_site_is_its_time_by_routine() {
    let (_d, f) = text_trace("rtt.txt", &round_trip_with_sites());
    let v = json(&[&f, "--critical-path", "--format", "json"]);
    let c = &v["critical_path"];
    let (by_site, by_routine) = (&c["by_call_site"], &c["by_routine"]);
    assert_eq!(by_site.as_object().unwrap().len(), 2, "{c}");
    let s = |x: &serde_json::Value| x.as_f64().unwrap();
    assert!(
        (s(&by_site["? (prog+0x200)"]) - s(&by_routine["MPI_Recv"])).abs() < 1e-15,
        "{c}"
    );
    assert!(
        (s(&by_site["? (prog+0x300)"]) - s(&by_routine["MPI_Send"])).abs() < 1e-15,
        "{c}"
    );
    let calls = s(&by_site["? (prog+0x200)"]) + s(&by_site["? (prog+0x300)"]);
    assert!(
        (calls - (s(&c["length_s"]) - s(&c["computation_s"]))).abs() < 1e-12,
        "{c}"
    );
    assert!(s(&by_site["? (prog+0x300)"]) > 0.0 && s(&by_site["? (prog+0x200)"]) > 0.0);
}

/// On the timeline, each call's slices (predicted and measured) name its call site; calls
/// without one have none.
#[test]
fn timeline_slices_name_their_call_site() {
    let (d, f) = text_trace("rtt.txt", &round_trip_with_sites());
    let tl = d.path().join("t.json");
    let out = run(&[&f, "--timeline", tl.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&tl).unwrap()).unwrap();
    let mut seen = 0;
    for e in v["traceEvents"].as_array().unwrap() {
        let want = match e["name"].as_str().unwrap() {
            "MPI_Recv" => Some("? (prog+0x200)"),
            "MPI_Send" => Some("? (prog+0x300)"),
            "MPI_Init" | "MPI_Finalize" => None,
            _ => continue,
        };
        if e["ph"] == "X" {
            assert_eq!(e["args"]["site"].as_str(), want, "{e}");
            seen += 1;
        }
    }
    assert_eq!(seen, 16, "8 calls, on the predicted and the measured track");
}

#[test]
fn sites_survive_conversion_both_ways() {
    let (d, f) = text_trace("rtt.txt", &round_trip_with_sites());
    let (bin, txt) = (d.path().join("t.bin"), d.path().join("t.txt"));
    for (a, b) in [(f.as_str(), &bin), (bin.to_str().unwrap(), &txt)] {
        let out = run(&["convert", a, b.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let back = std::fs::read_to_string(&txt).unwrap();
    let of = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with("object") || l.starts_with("sites") || l.contains("site="))
            .map(|l| l.replace(" comm=0", ""))
            .collect()
    };
    assert_eq!(of(&back), of(&round_trip_with_sites()));
    assert_eq!(of(&back).len(), 8);
    let a = json(&["callsites", &f, "--format", "json"]);
    let b = json(&["callsites", bin.to_str().unwrap(), "--format", "json"]);
    assert_eq!(a["sites"], b["sites"]);
    // `info` counts them: the four sends and receives, two addresses a rank.
    let i = json(&["info", bin.to_str().unwrap(), "--format", "json"]);
    assert_eq!(
        i["call_sites"],
        serde_json::json!({"events_with_site": 4, "addresses": 4})
    );
    let i = json(&[
        "info",
        fixture("rtt/k12000-w500000.txt").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(i["call_sites"], serde_json::Value::Null);
}

#[test]
fn a_trace_without_sites_or_with_a_wrong_index_is_an_error_that_says_so() {
    let f = fixture("rtt/k12000-w500000.txt");
    let out = run(&["callsites", f.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("has no call sites"),
        "{err}"
    );

    let bad = round_trip_with_sites().replace("site=1", "site=2");
    let (_d, f) = text_trace("bad.txt", &bad);
    let out = run(&["callsites", &f]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("expected site indices below 2")
            && err.contains("site=2"),
        "{err}"
    );
}

/// The tracer's Open MPI build, or None (a failure under `LOGGPS_MPI_TESTS`).
fn tracer() -> Option<std::path::PathBuf> {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("tracer/build-openmpi/libloggps-trace.so");
    let ready = lib.exists() && which("mpicc.openmpi") && which("mpirun.openmpi");
    if !ready && std::env::var_os("LOGGPS_MPI_TESTS").is_some() {
        panic!(
            "{} or Open MPI missing: run `make -C tracer MPI=openmpi`",
            lib.display()
        );
    }
    ready.then_some(lib)
}

fn which(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// tracer/tests/callsite.c, built with `-g -O2` and traced on 2 ranks: rank 1 computes 20 ms
/// before each of its 5 sends, so rank 0's receive on the line marked SLOW RECEIVE waits about
/// 100 ms in all, which the prediction keeps (the computation is measured); that line of that
/// file comes first, and the send's line has no synchronization.
#[test]
fn a_real_slow_receive_is_named_by_file_and_line() {
    let Some(lib) = tracer() else {
        eprintln!("SKIPPED: no tracer build for Open MPI");
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("tracer/tests/callsite.c");
    let text = std::fs::read_to_string(&src).unwrap();
    let line_of = |marker: &str| {
        1 + text
            .lines()
            .position(|l| l.trim_start().starts_with(marker))
            .unwrap_or_else(|| panic!("{marker} in {}", src.display()))
    };
    let (recv_line, send_line) = (line_of("MPI_Recv("), line_of("MPI_Send("));
    assert!(
        text.lines()
            .nth(recv_line - 1)
            .unwrap()
            .contains("SLOW RECEIVE")
    );

    let d = tempfile::tempdir().unwrap();
    let (prog, trace) = (d.path().join("callsite"), d.path().join("t.bin"));
    let cc = Command::new("mpicc.openmpi")
        .args(["-g", "-O2", "-o"])
        .arg(&prog)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let job = Command::new("mpirun.openmpi")
        .args(["-n", "2", "--oversubscribe", "-x"])
        .arg(format!("LD_PRELOAD={}", lib.display()))
        .arg("-x")
        .arg(format!("LOGGPS_TRACE={}", trace.display()))
        .arg(&prog)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    assert!(
        job.status.success(),
        "{}",
        String::from_utf8_lossy(&job.stderr)
    );

    let params = root.join("traces/params.toml");
    let v = json(&[
        "callsites",
        trace.to_str().unwrap(),
        "--params",
        params.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let sites = v["sites"].as_array().unwrap();
    let top = &sites[0];
    assert!(top["file"].as_str().unwrap().ends_with("callsite.c"), "{v}");
    assert_eq!(top["line"].as_u64(), Some(recv_line as u64), "{v}");
    assert_eq!(top["function"], "main");
    assert_eq!(
        (top["calls"].as_u64(), top["ranks"].as_u64()),
        (Some(5), Some(1))
    );
    let wait = top["receiver_sync_s"].as_f64().unwrap();
    assert!(
        (0.08..0.2).contains(&wait),
        "5 waits of about 20 ms: {wait} s"
    );
    let send = sites
        .iter()
        .find(|s| s["line"].as_u64() == Some(send_line as u64))
        .unwrap_or_else(|| panic!("the send's line {send_line}: {v}"));
    assert_eq!(send["routines"], serde_json::json!(["MPI_Send"]));
    assert!(
        send["receiver_sync_s"].as_f64().unwrap() + send["sender_sync_s"].as_f64().unwrap() < 1e-4
    );
    assert_eq!(v["unknown_calls"], 0);
}

/// Runs `cmd` with `args`; its stdout, or None where the tool is missing.
fn tool(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// A stripped program's call sites are named from its separate debug file, found by build id
/// under a `--search` folder's `.build-id/` (as Debian's -dbgsym packages lay them out in
/// /usr/lib/debug); without it, the stripped program names nothing. The expected name and
/// line come from the compiler's own tools (`nm` before stripping) and the source.
#[test]
fn a_stripped_program_is_named_from_its_debug_file() {
    let d = tempfile::tempdir().unwrap();
    let (src, prog) = (d.path().join("prog.c"), d.path().join("prog"));
    std::fs::write(
        &src,
        "#include <stdio.h>\n\
         __attribute__((noinline)) int twice(int x)\n{\n    return 2 * x;\n}\n\
         int main(int argc, char **argv)\n{\n    (void)argv;\n    printf(\"%d\\n\", twice(argc));\n    return 0;\n}\n",
    )
    .unwrap();
    let (p, s) = (prog.to_str().unwrap(), src.to_str().unwrap());
    let Some(_) = tool("cc", &["-g", "-O1", "-Wl,--build-id", "-o", p, s]) else {
        // CI (LOGGPS_MPI_TESTS) has one: there a missing compiler is a failure, not a skip.
        assert!(
            std::env::var_os("LOGGPS_MPI_TESTS").is_none(),
            "no C compiler (cc) to build the test program"
        );
        eprintln!("SKIPPED: no C compiler");
        return;
    };
    let nm = tool("nm", &[p]).expect("nm");
    let twice = nm
        .lines()
        .find(|l| l.ends_with(" twice"))
        .map(|l| u64::from_str_radix(l.split(' ').next().unwrap(), 16).unwrap())
        .expect("twice in the symbol table");
    let notes = tool("readelf", &["-n", p]).expect("readelf");
    let id = notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .expect("a build id")
        .to_string();
    let debug_dir = d.path().join("debug/.build-id").join(&id[..2]);
    std::fs::create_dir_all(&debug_dir).unwrap();
    let debug = debug_dir.join(format!("{}.debug", &id[2..]));
    tool(
        "objcopy",
        &["--only-keep-debug", p, debug.to_str().unwrap()],
    )
    .expect("objcopy");
    tool("strip", &["--strip-all", p]).expect("strip");

    // A site just inside `twice` (a return address one past its first instruction), the
    // object loaded at 0x10000.
    let bias = 0x10000;
    let trace = format!(
        "loggps-trace 1\nranks 1\nobject 0 {bias:#x} {bias:#x} {:#x} {id} \"{p}\"\nsites 0 {:#x}\n\
         0 MPI_Init 0 10 site=0\n0 MPI_Finalize 20 30 site=0\n",
        bias + 0x100000,
        bias + twice + 1
    );
    let (_t, f) = text_trace("t.txt", &trace);
    let args = ["callsites", &f, "--platform", "myrinet", "--format", "json"];
    let stripped = json(&args);
    assert_eq!(
        stripped["sites"][0]["function"],
        serde_json::Value::Null,
        "{stripped}"
    );
    let search = d.path().join("debug");
    let named = json(&[&args[..], &["--search", search.to_str().unwrap()]].concat());
    let site = &named["sites"][0];
    assert_eq!(site["function"], "twice", "{named}");
    assert!(
        site["file"].as_str().unwrap().ends_with("prog.c"),
        "{named}"
    );
    // `twice` spans lines 2–5 (its one statement on line 4, where -O1 puts its first
    // instruction, having no prologue).
    assert!(matches!(site["line"].as_u64(), Some(2..=4)), "{named}");
}
