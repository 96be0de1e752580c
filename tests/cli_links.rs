//! Parameter sets per link class (the model's §12), costed by hand: a trace of two nodes and
//! two sockets, each message with its pair's set; placement what-ifs (`--ranks-per-node`,
//! `--map`); the warning where a class has no set; the placement's travel through both
//! encodings; `callsites`, `bench` and `sensitivity` with several sets.

mod common;

use common::{fixture, json, run, text_trace};

/// The trace of fixtures/links.txt: ranks 0, 1 and 3 on node 0 (rank 3 shares rank 0's cache,
/// rank 1 is on the other socket), rank 2 on node 2. Rank 0 sends 1000 bytes to 3, to 1, then
/// to 2, back to back; each receiver has its receive posted at time 0. No computation anywhere.
fn links_trace() -> String {
    std::fs::read_to_string(fixture("links.txt")).unwrap()
}

/// Three sets whose costs are told apart by hand: per byte nothing, so that an eager send
/// returns `o` after its call and its receive (posted before) `o + L + o` after the send's call.
const NEAR: &str = "class = \"node\"\ncores = 92.0\nL = 100\no = 50\nOs = 0\nOr = 0\nGs = 0\nGl = 0\ns = 1000000\nS = 100000\n";
const FAR: &str = "class = \"node\"\ncores = 330.0\nL = 300\no = 100\nOs = 0\nOr = 0\nGs = 0\nGl = 0\ns = 1000000\nS = 100000\n";
const NETWORK: &str = "class = \"network\"\nL = 5000\no = 1000\nOs = 0\nOr = 0\nGs = 0\nGl = 0\ns = 1000000\nS = 10000\n";

/// Each rank's end, ns, predicted with the sets of `files` and `extra` flags.
fn ends(trace: &str, files: &[&str], extra: &[&str]) -> (Vec<f64>, serde_json::Value) {
    let mut args = vec!["predict", trace, "--format", "json"];
    for f in files {
        args.extend(["--params", f]);
    }
    args.extend(extra);
    let v = json(&args);
    let ends = (v["ranks"].as_array().unwrap().iter())
        .map(|r| (r["end_s"].as_f64().unwrap() * 1e9 * 1e3).round() / 1e3)
        .collect();
    (ends, v)
}

/// The three sets as files in one directory, and the trace.
fn setup() -> (tempfile::TempDir, String, [String; 3]) {
    let (dir, trace) = text_trace("links.txt", &links_trace());
    let file = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let sets = [
        file("near.toml", NEAR),
        file("far.toml", FAR),
        file("network.toml", NETWORK),
    ];
    (dir, trace, sets)
}

/// `callsites` and `bench` replay with every set, as `predict` does: the trace of
/// [`each_message_is_costed_with_its_pairs_set`] with a call site on each send and receive
/// (one address of one file on every rank) ends at 7150 ns, as hand-costed there (the near set
/// alone sends at 0, 50 and 100 and ends rank 2 at 100 + 50 + 100 + 50 = 300 ns).
#[test]
fn callsites_and_bench_take_each_pairs_set() {
    let (dir, _, [near, far, network]) = setup();
    let mut text = String::new();
    for line in links_trace().lines() {
        let sited = line.contains("MPI_Send") || line.contains("MPI_Recv");
        text += &format!("{line}{}\n", if sited { " site=0" } else { "" });
        if line.starts_with("place 3 ") {
            for r in 0..4 {
                text += &format!("object {r} 0x1000 0x1000 0x2000 - \"/nonexistent/prog\"\n");
                text += &format!("sites {r} 0x1201\n");
            }
        }
    }
    let trace = dir.path().join("sited.txt");
    std::fs::write(&trace, text).unwrap();
    let trace = trace.to_str().unwrap();
    let sets = ["--params", &near, "--params", &far, "--params", &network];
    let v = json(&[&["callsites", trace, "--format", "json"][..], &sets].concat());
    assert_eq!(v["predicted_s"].as_f64().unwrap() * 1e9, 7150.0, "{v}");
    let v = json(&[&["bench", trace][..], &sets].concat());
    assert_eq!(v["predicted_s"].as_f64().unwrap() * 1e9, 7150.0, "{v}");
    let (e, _) = ends(trace, &[&near], &[]);
    assert_eq!(e.iter().copied().fold(0.0, f64::max), 300.0);
}

/// `sensitivity` with the three sets: each set's parameters apart, named after its class (the
/// two node sets numbered as the report numbers them). Rank 2 ends last, at
/// o(node1) + o(node2) + o(network) + L(network) + o(network) = 7150 ns: the runtime moves 1 ns
/// per ns of either node set's `o`, 2 of the network's `o`, 1 of its `L`, not at all with a node
/// set's `L`. Tolerances of 1% (71.5 ns): the network's `L` 71.5, its `o` 35.75; a node set's
/// `L` until its own pair ends last: rank 3 at 50 + L + 50 (added 7021.5 to 100), rank 1 at
/// 50 + 100 + L + 100 (added 6671.5 to 300).
#[test]
fn sensitivity_moves_each_sets_parameters_apart() {
    let (_d, trace, [near, far, network]) = setup();
    let v = json(&[
        "sensitivity",
        &trace,
        "--format",
        "json",
        "--params",
        &near,
        "--params",
        &far,
        "--params",
        &network,
    ]);
    let d = |name: &str| {
        let p = (v["parameters"].as_array().unwrap().iter())
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {v}"));
        let (a, b) = (
            p["ns_per_unit"].as_f64().unwrap(),
            p["from_critical_path"].as_f64().unwrap(),
        );
        assert!(
            (a - b).abs() < 1e-6,
            "{name}: {a} by replays, {b} on the path"
        );
        a
    };
    for (name, want) in [
        ("node1.o", 1.0),
        ("node2.o", 1.0),
        ("network.o", 2.0),
        ("network.L", 1.0),
        ("node1.L", 0.0),
        ("node2.L", 0.0),
    ] {
        assert!(
            (d(name) - want).abs() < 1e-6,
            "{name}: {} not {want}",
            d(name)
        );
    }
    let tolerance = |name: &str| {
        (v["tolerances"].as_array().unwrap().iter())
            .find(|t| t["name"] == name && t["rise_pct"] == 1.0)
            .and_then(|t| t["added"].as_f64())
            .unwrap_or_else(|| panic!("{name}: {v}"))
    };
    for (name, want) in [
        ("network.L", 71.5),
        ("network.o", 35.75),
        ("node1.L", 7021.5),
        ("node2.L", 6671.5),
    ] {
        let got = tolerance(name);
        assert!(
            (got - want).abs() < 1e-3,
            "tolerance of {name}: {got} not {want}"
        );
    }
}

/// Each message takes its pair's set: 0→3 (one cache, 95 ns: near) o 50, L 100; 0→1 (other
/// socket, 320 ns: far) o 100, L 300; 0→2 (other node: network) o 1000, L 5000.
/// Rank 0: sends at 0, 50, 150, ends at 1150. Rank 3: 0 + 50 + 100 + 50 = 200. Rank 1:
/// 50 + 100 + 300 + 100 = 550. Rank 2: 150 + 1000 + 5000 + 1000 = 7150.
#[test]
fn each_message_is_costed_with_its_pairs_set() {
    let (_d, trace, [near, far, network]) = setup();
    let (e, v) = ends(&trace, &[&near, &far, &network], &[]);
    assert_eq!(e, vec![1150.0, 550.0, 7150.0, 200.0]);
    assert_eq!(v["predicted_s"].as_f64().unwrap() * 1e9, 7150.0);
    let links = &v["links"];
    assert_eq!(links["nodes"], 2);
    assert_eq!(links["sets"].as_array().unwrap().len(), 3);
    // rank 0 sent a third of its bytes with each set
    for pct in links["bytes_pct_by_rank"][0].as_array().unwrap() {
        assert!(
            (pct.as_f64().unwrap() - 100.0 / 3.0).abs() < 1e-9,
            "{links}"
        );
    }
    // The sets in one file give the same, in any order.
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("all.toml");
    let table = |t: &str| format!("[[set]]\n{t}\n");
    std::fs::write(&one, table(NETWORK) + &table(FAR) + &table(NEAR)).unwrap();
    let (e1, _) = ends(&trace, &[one.to_str().unwrap()], &[]);
    assert_eq!(e1, e);
}

/// One set, as before link classes: every message near's. Rank 0 sends at 0, 50, 100 and
/// ends at 150; rank 2: 100 + 50 + 100 + 50 = 300.
#[test]
fn one_set_costs_every_pair_as_before() {
    let (_d, trace, [near, _, _]) = setup();
    let (e, v) = ends(&trace, &[&near], &[]);
    assert_eq!(e, vec![150.0, 250.0, 300.0, 200.0]);
    assert!(v.get("links").is_none(), "{v}");
}

/// Node sets alone: the pairs across nodes are costed with the node set chosen for them, and
/// the warning names the class and the pair.
#[test]
fn a_class_without_a_set_is_warned_of_naming_the_pairs() {
    let (_d, trace, [near, far, _]) = setup();
    let out = run(&["predict", &trace, "--params", &near, "--params", &far]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no parameter set is of class \"network\"") && err.contains("ranks 0 and 2"),
        "{err}"
    );
    // 0→2 with near (the first node set): rank 2 = 150 + 50 + 100 + 50 = 350
    let (e, v) = ends(&trace, &[&near, &far], &[]);
    assert_eq!(e, vec![200.0, 550.0, 350.0, 200.0]);
    assert!(v["warnings"].to_string().contains("ranks 0 and 2"));
}

/// `--ranks-per-node 4` puts rank 2 with the others: 0→2 never ran on one node, so it takes
/// the first node set (near): rank 0 ends at 50 + 100 + 50 = 200, rank 2 at
/// 150 + 50 + 100 + 50 = 350, rank 1 as before 550. `--map` "0 1 0 0" puts rank 1 alone: 0→1
/// by network (rank 1: 50 + 1000 + 5000 + 1000 = 7050), 0→2 near (1050 + 200 = 1250).
#[test]
fn placement_what_ifs_change_the_pairs_classes() {
    let (d, trace, [near, far, network]) = setup();
    let files = [near.as_str(), far.as_str(), network.as_str()];
    let (e, v) = ends(&trace, &files, &["--ranks-per-node", "4"]);
    assert_eq!(e, vec![200.0, 550.0, 350.0, 200.0]);
    assert_eq!(v["links"]["nodes"], 1);
    let map = d.path().join("map.txt");
    std::fs::write(&map, "# rank -> node\n0 1\n0, 0\n").unwrap();
    let (e, _) = ends(&trace, &files, &["--map", map.to_str().unwrap()]);
    assert_eq!(e, vec![1100.0, 7050.0, 1250.0, 200.0]);
    std::fs::write(&map, "0 1 0").unwrap();
    let out = run(&[
        "predict",
        &trace,
        "--params",
        &near,
        "--map",
        map.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("4 ranks, found 3"), "{err}");
}

/// `--scale network.L=0.5` halves the network's latency alone: rank 2 ends 2500 earlier;
/// `--set CLASS.NAME=V` sets a parameter of that class's sets alone.
#[test]
fn a_class_prefix_scales_that_class_alone() {
    let (_d, trace, [near, far, network]) = setup();
    let files = [near.as_str(), far.as_str(), network.as_str()];
    let (e, _) = ends(&trace, &files, &["--scale", "network.L=0.5"]);
    assert_eq!(e, vec![1150.0, 550.0, 4650.0, 200.0]);
    // `--set network.L=2500` sets it: the same. `--set node.o=10` sets both node sets' `o`
    // (rank 0 sends at 0, 10, 20: rank 3 ends at 10 + 100 + 10, rank 1 at 10 + 10 + 300 + 10,
    // rank 2 at 20 + 1000 + 5000 + 1000).
    let (e, _) = ends(&trace, &files, &["--set", "network.L=2500"]);
    assert_eq!(e, vec![1150.0, 550.0, 4650.0, 200.0]);
    let (e, _) = ends(&trace, &files, &["--set", "node.o=10"]);
    assert_eq!(e, vec![1020.0, 330.0, 7020.0, 120.0]);
    for bad in ["L=5", "rack.L=5", "network.X=5", "network.S=1.5"] {
        let out = run(&[
            "predict", &trace, "--params", &near, "--params", &network, "--set", bad,
        ]);
        assert!(!out.status.success(), "--set {bad}");
    }
    let out = run(&[
        "predict",
        &trace,
        "--params",
        &near,
        "--scale",
        "network.L=0.5",
    ]);
    assert!(!out.status.success(), "a network scale with no network set");
}

/// A 2-rank trace of `events`, rank 0 on node 0 and rank 1 on node 1.
fn two_nodes(events: &str) -> String {
    "loggps-trace 1\nranks 2\nplace 0 node 0 cpu 0 0 socket 0 0 llc 0 0\n\
     place 1 node 1 cpu 1 1 socket 0 0 llc 0 0\n"
        .to_string()
        + events
}

/// Above the network's eager limit (10000 B) and below the node's (100000 B), 20000 bytes
/// between nodes go by rendezvous with the network's `o` and `L`: the send returns at
/// max(0 + 1000 + 5000, 0) + 1000 + (1000 + 5000 + 1000) + 1000 = 15000, the receive at
/// 6000 + 1000 + 7000 + 1000 + 5000 + 1000 = 21000. With the node set alone: eager, 200.
#[test]
fn each_pair_has_its_sets_eager_limit() {
    let t = &two_nodes(
        "0 MPI_Init 0 0
0 MPI_Send 0 10 bytes=20000 peer=1 tag=0
0 MPI_Finalize 10 20
1 MPI_Init 0 0
1 MPI_Recv 0 10 bytes=20000 peer=0 tag=0
1 MPI_Finalize 10 20
",
    );
    let (_d, trace, [near, _, network]) = setup();
    let (_d2, two) = text_trace("two.txt", t);
    let (e, _) = ends(&two, &[&near, &network], &[]);
    assert_eq!(e, vec![15000.0, 21000.0]);
    let (e, _) = ends(&two, &[&near], &[]);
    assert_eq!(e, vec![50.0, 200.0]);
    drop(trace);
}

/// `trace` converted to the binary encoding in `dir` and back to text: the binary file's path
/// and the text.
fn through_binary(dir: &std::path::Path, trace: &str) -> (String, String) {
    let bin = dir.join("through.bin");
    let back = dir.join("back.txt");
    for (from, to) in [(trace, &bin), (bin.to_str().unwrap(), &back)] {
        let out = run(&["convert", from, to.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = std::fs::read_to_string(&back).unwrap();
    (bin.to_str().unwrap().to_string(), text)
}

/// The placement goes through the binary encoding and back exactly, and `info` lists it.
#[test]
fn placement_travels_through_binary_and_info_lists_it() {
    let (d, trace, _) = setup();
    let (bin, text) = through_binary(d.path(), &trace);
    for line in links_trace().lines().filter(|l| l.starts_with("place ")) {
        assert!(text.contains(line), "{line} missing from\n{text}");
    }
    let v = json(&["info", &bin, "--format", "json"]);
    assert_eq!(v["placement"].as_array().unwrap().len(), 4);
    assert_eq!(v["placement"][1]["socket"], serde_json::json!([1, 1]));
    assert_eq!(v["links"][1]["class"], "other");
    assert_eq!(v["links"][1]["final_ns"], 320.0);
}

/// `--sweep ranks-per-node=1,4`: one rank a node puts every pair on the network (rank 0 sends
/// at 0, 1000, 2000; rank 2's receive of the last returns 2000 + 1000 + 5000 + 1000 = 9000);
/// four a node, as `--ranks-per-node 4` (550).
#[test]
fn ranks_per_node_is_swept() {
    let (_d, trace, [near, far, network]) = setup();
    let v = json(&[
        "predict",
        &trace,
        "--params",
        &near,
        "--params",
        &far,
        "--params",
        &network,
        "--sweep",
        "ranks-per-node=1,4",
        "--format",
        "json",
    ]);
    let got: Vec<f64> = (v["points"].as_array().unwrap().iter())
        .map(|p| (p["predicted_s"].as_f64().unwrap() * 1e12).round() / 1e3)
        .collect();
    assert_eq!(got, vec![9000.0, 550.0]);
    let out = run(&[
        "predict",
        &trace,
        "--params",
        &near,
        "--sweep",
        "ranks-per-node=0",
    ]);
    assert!(!out.status.success());
}

/// A class's parameter swept: `--sweep network.L=2500,5000` ends rank 2 at
/// 150 + 1000 + L + 1000 (4650, 7150: the runtime), as `--set network.L` does;
/// `--sweep-scale network.L=0.5,1` the same. `--sweep-scale node.o=0.2` makes both node sets'
/// `o` a fifth (near 10, far 20): rank 0 sends at 0, 10, 30, so rank 2 ends at
/// 30 + 1000 + 5000 + 1000 = 7030. With the network's `Op` 500 (its receive, posted at 0,
/// ends 500 sooner: 6650), a factor 0.1 leaves `o` (100) below `Op`: that value fails, the
/// other answers.
#[test]
fn a_classs_parameters_are_swept() {
    let (_d, trace, [near, far, network]) = setup();
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "predict", &trace, "--params", &near, "--params", &far, "--params", &network,
            "--format", "json",
        ];
        args.extend(extra);
        let v = json(&args);
        (v["points"].as_array().unwrap().iter())
            .map(|p| p["predicted_s"].as_f64().map(|t| (t * 1e12).round() / 1e3))
            .collect::<Vec<_>>()
    };
    let both = vec![Some(4650.0), Some(7150.0)];
    assert_eq!(sweep(&["--sweep", "network.L=2500,5000"]), both);
    assert_eq!(sweep(&["--sweep-scale", "network.L=0.5,1"]), both);
    assert_eq!(sweep(&["--sweep-scale", "node.o=0.2"]), vec![Some(7030.0)]);
    assert_eq!(
        sweep(&[
            "--set",
            "network.Op=500",
            "--sweep-scale",
            "network.o=0.1,1"
        ]),
        vec![None, Some(6650.0)]
    );
    let refused = |extra: &[&str], files: &[&str], why: &str| {
        let mut args = vec!["predict", trace.as_str()];
        for f in files {
            args.extend(["--params", f]);
        }
        args.extend(extra);
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(why),
            "{extra:?}: {err}"
        );
    };
    let all = [near.as_str(), far.as_str(), network.as_str()];
    refused(
        &["--sweep", "network.L=1"],
        &[&near, &far],
        "no parameter set given is of class network",
    );
    refused(
        &["--sweep-scale", "network.L=1"],
        &[&near],
        "of no class network",
    );
    refused(&["--sweep", "rack.L=1"], &all, "expected CLASS.NAME");
    refused(&["--sweep", "network.gamma=1"], &all, "expected CLASS.NAME");
    refused(
        &["--sweep-scale", "network.S=2"],
        &all,
        "a parameter --scale takes",
    );
    refused(&["--sweep-scale", "L=-1"], &all, "not a factor");
    refused(
        &["--set", "network.L=5", "--sweep", "network.L=1"],
        &all,
        "give one or the other",
    );
    refused(
        &["--scale", "L=5", "--sweep-scale", "L=1"],
        &all,
        "give one or the other",
    );
}

/// A modeled collective's messages take their pairs' sets: a Bcast of 1000 bytes between ranks
/// on two nodes predicts exactly what the network set alone predicts for it, and placed on one
/// node (`--ranks-per-node 2`) what the near set alone predicts (the single-set replay is the
/// reference, tested against the paper elsewhere).
#[test]
fn a_collective_takes_the_set_of_its_members_links() {
    let t = &two_nodes(
        "0 MPI_Init 0 0
0 MPI_Bcast 10 60 root=0 bytes=1000 recv_bytes=0
0 MPI_Finalize 100 110
1 MPI_Init 0 0
1 MPI_Bcast 50 60 root=0 bytes=0 recv_bytes=1000
1 MPI_Finalize 100 110
",
    );
    let (_d, _, [near, far, network]) = setup();
    let (_d2, two) = text_trace("bcast.txt", t);
    let (alone_net, _) = ends(&two, &[&network], &[]);
    let (alone_near, _) = ends(&two, &[&near], &[]);
    assert!(
        alone_net[1] > alone_near[1] + 5000.0,
        "{alone_net:?} {alone_near:?}"
    );
    let (combined, _) = ends(&two, &[&near, &far, &network], &[]);
    assert_eq!(combined, alone_net);
    let (one_node, _) = ends(&two, &[&near, &far, &network], &["--ranks-per-node", "2"]);
    assert_eq!(one_node, alone_near);
}

/// A linear Scatter's steps each take their pair's set (the model's §12): on the placement of
/// fixtures/links.txt, root 0 sends 1000 bytes to rank 1 (other socket: far, o 100, L 300), to
/// rank 2 (other node: network, o 1000, L 5000), then to rank 3 (one cache: near, o 50, L 100),
/// every rank calling at 0 with its receive posted. Root: 0 → 100 → 1100 → 1150. Rank 1:
/// 0 + 100 + 300 + 100 = 500. Rank 2: 100 + 1000 + 5000 + 1000 = 7100. Rank 3:
/// 1100 + 50 + 100 + 50 = 1300. One set for the whole instance (the network's, its members
/// spanning nodes) would end rank 3 at 2000 + 7000 = 9000.
#[test]
fn a_collectives_steps_take_their_pairs_sets() {
    let head: String = (links_trace().lines())
        .filter(|l| {
            l.starts_with("loggps-trace") || l.starts_with("ranks") || l.starts_with("place")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let mut t = head;
    for r in 0..4 {
        let bytes = if r == 0 { 4000 } else { 0 };
        t += &format!(
            "{r} MPI_Init 0 0\n{r} MPI_Scatter 0 60 root=0 bytes={bytes} recv_bytes=1000\n\
             {r} MPI_Finalize 60 70\n"
        );
    }
    let (_d, _, [near, far, network]) = setup();
    let (_d2, trace) = text_trace("scatter.txt", &t);
    let coll = ["--coll", "scatter=linear"];
    let (e, _) = ends(&trace, &[&near, &far, &network], &coll);
    assert_eq!(e, vec![1150.0, 500.0, 7100.0, 1300.0]);
    // The network set alone: 0 → 1000 → 2000 → 3000; rank 3's message sent at 2000.
    let (e, _) = ends(&trace, &[&network], &coll);
    assert_eq!(e, vec![3000.0, 7000.0, 8000.0, 9000.0]);
}

/// The critical path follows each message's set: rank 1 (one cache with rank 0, rank 2 on the
/// other node) waits in one Waitall for rank 0's message, sent late (at 1000: 1000 + 50 + 100,
/// received 1150–1200), and rank 2's, sent at 0 (0 + 1000 + 5000, received 6000–7000). The
/// network's message ends the Waitall at 7000 though rank 0 called last: the path jumps to
/// rank 2's send at 0 and holds rank 1's 7000 ns alone (the partner that called last would
/// give rank 0's 1000 ns of computation and rank 1's 6000).
#[test]
fn the_critical_path_follows_each_messages_set() {
    let t = "loggps-trace 1\nranks 3\n\
             place 0 node 0 cpu 0 0 socket 0 0 llc 0 0 link cache 0 1 90 95\n\
             place 1 node 0 cpu 1 1 socket 0 0 llc 0 0\n\
             place 2 node 2 cpu 0 0 socket 0 0 llc 0 0\n\
             0 MPI_Init 0 0\n0 MPI_Send 1000 1010 bytes=1000 peer=1 tag=0\n\
             0 MPI_Finalize 1010 1020\n\
             1 MPI_Init 0 0\n1 MPI_Irecv 0 10 bytes=1000 peer=0 tag=0 req=0\n\
             1 MPI_Irecv 10 20 bytes=1000 peer=2 tag=0 req=1\n\
             1 MPI_Waitall 20 2000 done=0:0:0,1:2:0\n1 MPI_Finalize 2000 2010\n\
             2 MPI_Init 0 0\n2 MPI_Send 0 10 bytes=1000 peer=1 tag=0\n\
             2 MPI_Finalize 10 20\n";
    let (_d, _, [near, _, network]) = setup();
    let (_d2, trace) = text_trace("waitall.txt", t);
    let (e, v) = ends(&trace, &[&near, &network], &["--critical-path"]);
    assert_eq!(e, vec![1050.0, 7000.0, 1000.0]);
    let c = &v["critical_path"];
    assert_eq!(c["jumps"], 1, "{c}");
    assert!(
        (c["length_s"].as_f64().unwrap() * 1e9 - 7000.0).abs() < 1e-6,
        "{c}"
    );
    let by_rank = c["by_rank"].as_array().unwrap();
    assert_eq!(by_rank.len(), 1, "{c}");
    assert_eq!(by_rank[0]["rank"], 1);
    assert!(
        (by_rank[0]["time_s"].as_f64().unwrap() * 1e9 - 7000.0).abs() < 1e-6,
        "{c}"
    );
}

/// Sets embedded in a trace combine as files do: the three sets written into the trace by
/// `convert --params` (one file of `[[set]]` tables, the network's first) predict, with no
/// `--params`, the hand-costed ends of `each_message_is_costed_with_its_pairs_set`, in the
/// binary encoding and in the text one converted back from it; `info` lists the three.
#[test]
fn embedded_sets_combine_as_files_do() {
    let (d, trace, _) = setup();
    let all = d.path().join("all.toml");
    let table = |t: &str| format!("[[set]]\n{t}\n");
    std::fs::write(&all, table(NETWORK) + &table(FAR) + &table(NEAR)).unwrap();
    let bin = d.path().join("sets.bin");
    let text = d.path().join("sets.txt");
    let out = run(&[
        "convert",
        &trace,
        bin.to_str().unwrap(),
        "--params",
        all.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["convert", bin.to_str().unwrap(), text.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = std::fs::read_to_string(&text).unwrap();
    let params: Vec<&str> = lines.lines().filter(|l| l.starts_with("params ")).collect();
    assert_eq!(params.len(), 3, "{lines}");
    // The main set first: the file's first node set.
    assert!(
        params[0].contains("cores=330") && params[0].contains("class=node"),
        "{lines}"
    );
    assert!(
        params.iter().any(|l| l.contains("class=network")),
        "{lines}"
    );
    for t in [&bin, &text] {
        let (e, _) = ends(t.to_str().unwrap(), &[], &[]);
        assert_eq!(e, vec![1150.0, 550.0, 7150.0, 200.0], "{}", t.display());
    }
    let v = json(&["info", bin.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v["other_params"].as_array().unwrap().len(), 2, "{v}");
    // A set's class must be one of the two.
    let bad = lines.replace("class=network", "class=rack");
    let (_d2, bad) = text_trace("bad.txt", &bad);
    let out = run(&["info", &bad]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("class=network, found `rack`"));
}

/// Two ranks of one node sharing a cache, whose cache line took `init` ns at MPI_Init and
/// `fini` ns at MPI_Finalize; rank 0 sends 1000 bytes to rank 1, posted at 0.
fn moving(init: u32, fini: u32) -> String {
    format!(
        "loggps-trace 1\nranks 2\n\
         place 0 node 0 cpu 0 0 socket 0 0 llc 0 0 link cache 0 1 {init} {fini}\n\
         place 1 node 0 cpu 1 1 socket 0 0 llc 0 0\n\
         0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes=1000 peer=1 tag=0\n0 MPI_Finalize 10 20\n\
         1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=1000 peer=0 tag=0\n1 MPI_Finalize 10 20\n"
    )
}

/// Ranks that moved from near cores (90 ns) to far ones (320 ns) within the run: costed with
/// the far set (330 ns, the larger figure's: rank 1 receives at 100 + 300 + 100 = 500 ns), and
/// warned of, naming both figures and both sets. Ranks that stayed (90, 95 ns) take the near
/// set (50 + 100 + 50 = 200 ns) without a word; one set alone has nothing to choose.
#[test]
fn ranks_that_moved_within_the_run_are_warned_of() {
    let (_d, _, [near, far, _]) = setup();
    let (_d2, moved) = text_trace("moved.txt", &moving(90, 320));
    let (e, v) = ends(&moved, &[&near, &far], &[]);
    assert_eq!(e, vec![100.0, 500.0]);
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("moved to other cores within the run")
            && warnings.contains("90 ns at MPI_Init and 320 ns at MPI_Finalize")
            && warnings.contains("the set of 330 ns, the larger figure's")
            && warnings.contains("the set of 92 ns is its"),
        "{warnings}"
    );
    let (_d3, stayed) = text_trace("stayed.txt", &moving(90, 95));
    let (e, v) = ends(&stayed, &[&near, &far], &[]);
    assert_eq!(e, vec![50.0, 200.0]);
    assert!(!v["warnings"].to_string().contains("moved"), "{v}");
    let (_, v) = ends(&moved, &[&near], &[]);
    assert!(!v["warnings"].to_string().contains("moved"), "{v}");
}

/// [`moving`] with the tracer's message round trips over the link: 64, 1024 and 65536 bytes,
/// `init` ns at MPI_Init and `fini` at MPI_Finalize at each size.
fn timed_messages(cores: (u32, u32), init: u32, fini: u32) -> String {
    let each = [64, 1024, 65536]
        .map(|k| format!(" message {k} {init} {fini}"))
        .concat();
    moving(cores.0, cores.1).replacen(
        &format!("link cache 0 1 {} {}", cores.0, cores.1),
        &format!("link cache 0 1 {} {}{each}", cores.0, cores.1),
        1,
    )
}

/// The messages' speed against the set's (the tracer's round trips through MPI): the near set
/// models every eager round trip as 2 × (o + L + o) = 400 ns, the far one 2 × (100 + 300 + 100)
/// = 1000 ns (no per-byte terms). Round trips of 500 ns are 1.25× slower (a warning naming the
/// sizes and both figures, the communication likely predicted short), 320 ns 1.25× faster, 440
/// ns (1.10×) within 15%; a flag that changes the costs (a what-if) says nothing; ranks that
/// moved are judged at each moment with that moment's set, the run's ratio the geometric mean
/// of the two (400 ns against the near set's 400 at MPI_Init, 1690 against the far set's 1000
/// at MPI_Finalize: √1.69, 1.30× slower); the prediction is unchanged.
#[test]
fn messages_at_another_speed_than_the_sets_are_warned_of() {
    let (_d, _, [near, far, _]) = setup();
    let warnings = |text: &str, extra: &[&str]| {
        let (_d2, t) = text_trace("timed.txt", text);
        let (e, v) = ends(&t, &[&near, &far], extra);
        (e, v["warnings"].to_string())
    };
    let (e, w) = warnings(&timed_messages((90, 95), 500, 500), &[]);
    assert_eq!(e, vec![50.0, 200.0]);
    assert!(
        w.contains("the messages of 1 of 1 node(s) ran 1.25× slower than their parameters")
            && w.contains("64 B 500/500 ns against 400, 1024 B 500/500 ns against 400, 65536 B")
            && w.contains("predicted too short"),
        "{w}"
    );
    // The report gives every judged pair's ratio, warned of or not.
    let (_d2, t) = text_trace("timed.txt", &timed_messages((90, 95), 440, 440));
    let speed = &ends(&t, &[&near, &far], &[]).1["message_speed"];
    assert_eq!(
        (speed[0]["between"].as_str(), speed[0]["class"].as_str()),
        (Some("node"), Some("cache"))
    );
    assert!(
        (speed[0]["ratio"].as_f64().unwrap() - 1.1).abs() < 1e-9,
        "{speed}"
    );
    let (_, w) = warnings(&timed_messages((90, 95), 320, 320), &[]);
    assert!(
        w.contains("ran 1.25× faster") && w.contains("too long"),
        "{w}"
    );
    let (_, w) = warnings(&timed_messages((90, 95), 440, 440), &[]);
    assert!(!w.contains("messages of"), "{w}");
    let (_, w) = warnings(&timed_messages((90, 95), 500, 500), &["--scale", "L=1"]);
    assert!(!w.contains("messages of"), "{w}");
    let moved = timed_messages((90, 320), 400, 1690);
    let (e, w) = warnings(&moved, &[]);
    assert_eq!(e, vec![100.0, 500.0]);
    assert!(
        w.contains("ran 1.30× slower") && w.contains("64 B 400/1690 ns against 400/1000"),
        "{w}"
    );
    // moments that disagree (20% slower at MPI_Init, 20% faster at MPI_Finalize): the run's
    // ratio is their geometric mean, 0.98
    let (_, w) = warnings(&timed_messages((90, 95), 480, 320), &[]);
    assert!(!w.contains("messages of"), "{w}");
}

/// The message round trips go through the binary encoding and back exactly, and `info` lists
/// them.
#[test]
fn message_round_trips_travel_through_binary_and_info_lists_them() {
    let text = timed_messages((90, 95), 500, 480);
    let (d, trace) = text_trace("timed.txt", &text);
    let (bin, back) = through_binary(d.path(), &trace);
    let place = text.lines().find(|l| l.starts_with("place 0 ")).unwrap();
    assert!(back.contains(place), "{place} missing from\n{back}");
    let v = json(&["info", &bin, "--format", "json"]);
    assert_eq!(
        v["links"][0]["messages"],
        serde_json::json!([
            [64.0, 500.0, 480.0],
            [1024.0, 500.0, 480.0],
            [65536.0, 500.0, 480.0]
        ])
    );
    let out = run(&["info", &bin]);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("round trip through MPI at MPI_Init/MPI_Finalize: 64 B 500/480 ns, 1024 B"),
        "{shown}"
    );
}

/// Between nodes, the tracer's round trips from rank 0 to the next node's first rank against
/// the network set's: 2 × (1000 + 5000 + 1000) = 14000 ns for every eager size (64 B, below its
/// `S` of 10000 B). 17500 ns is 1.25× slower (a warning naming the ranks and both figures);
/// 14500 (1.04×) says nothing; with a node calibration alone (its 400 ns round trip costs the
/// pair) 17500 is 43.75× slower, which the warning says: a network costed with a node's set.
#[test]
fn messages_between_nodes_at_another_speed_are_warned_of() {
    let (_d, _, [near, _, network]) = setup();
    let events = "0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes=64 peer=1 tag=0\n0 MPI_Finalize 10 20\n\
                  1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=64 peer=0 tag=0\n1 MPI_Finalize 10 20\n";
    let timed = |ns: u32| {
        two_nodes(events).replacen(
            "place 0 node 0 cpu 0 0 socket 0 0 llc 0 0",
            &format!("place 0 node 0 cpu 0 0 socket 0 0 llc 0 0 network 1 message 64 {ns} {ns}"),
            1,
        )
    };
    let warnings = |ns: u32, sets: &[&str]| {
        let (_d2, t) = text_trace("two.txt", &timed(ns));
        ends(&t, sets, &[]).1["warnings"].to_string()
    };
    let w = warnings(17500, &[&near, &network]);
    assert!(
        w.contains("the messages between nodes ran 1.25× slower than their parameters")
            && w.contains("ranks 0 and 1: round trips through MPI")
            && w.contains("64 B 17500/17500 ns against 14000"),
        "{w}"
    );
    assert!(!warnings(14500, &[&near, &network]).contains("between nodes"));
    let (_d2, t) = text_trace("two.txt", &timed(14500));
    let speed = &ends(&t, &[&near, &network], &[]).1["message_speed"];
    assert_eq!(
        (speed[0]["between"].as_str(), speed[0]["rank"].as_u64()),
        (Some("network"), Some(1))
    );
    assert!(
        (speed[0]["ratio"].as_f64().unwrap() - 14500.0 / 14000.0).abs() < 1e-9,
        "{speed}"
    );
    assert!(warnings(17500, &[&near]).contains("between nodes ran 43.75× slower"));
}

/// `--at-run-speed` multiplies each set by its pairs' message speed (as `--scale all=F`), by
/// hand: round trips of 500 ns against the near set's 400 make it 1.25× (rank 0's send ends at
/// 50 · 1.25 = 62.5 ns, rank 1's receive at (50 + 100 + 50) · 1.25 = 250, where 50 and 200
/// before), with no warning of the speed and the report saying so; ranks that moved from near
/// to far cores (400 ns at MPI_Init against the near set's 400, 1690 at MPI_Finalize against
/// the far set's 1000) leave the near set as it is and make the far set, which costs the pair,
/// 1.69× (100 · 1.69 = 169, 500 · 1.69 = 845); two moments against one set (480 and 320 ns
/// against 400) make it their geometric mean, √(1.2 · 0.8); between nodes, 17500 ns against the network
/// set's 14000 make it 1.25× (1000 → 1250, 7000 → 8750); a sweep takes every value at the
/// run's speed, and `sensitivity` and `callsites` replay at it. A trace without the figures is
/// predicted as without the flag, warned; a platform's set is refused.
#[test]
fn at_the_runs_message_speed_each_set_is_scaled_by_its_pairs_ratio() {
    let (_d, _, [near, far, network]) = setup();
    let (_d2, t) = text_trace("timed.txt", &timed_messages((90, 95), 500, 500));
    let (e, v) = ends(&t, &[&near, &far], &["--at-run-speed"]);
    assert_eq!(e, vec![62.5, 250.0]);
    assert_eq!(
        v["at_run_speed"],
        serde_json::json!(["the set of cores 92 ns ×1.250"])
    );
    assert!(!v["warnings"].to_string().contains("messages of"), "{v}");
    let table = run(&["predict", &t, "--params", &near, "--at-run-speed"]);
    let shown = String::from_utf8_lossy(&table.stdout);
    assert!(
        shown.contains("speed      at the run's message speed (--at-run-speed): the set ×1.250"),
        "{shown}"
    );
    // two moments against one set: their geometric mean, √(1.2 · 0.8)
    let (_d6, both) = text_trace("both.txt", &timed_messages((90, 95), 480, 320));
    let f = (1.2f64 * 0.8).sqrt();
    let (e, _) = ends(&both, &[&near, &far], &["--at-run-speed"]);
    assert!(
        (e[0] - 50.0 * f).abs() < 1e-3 && (e[1] - 200.0 * f).abs() < 1e-3,
        "{e:?}"
    );
    // `sensitivity` and `callsites` replay so too (the set's L 100 · 1.25 = 125 ns)
    let at_speed = |command: &str, trace: &str| {
        let v = json(&[
            command,
            trace,
            "--params",
            &near,
            "--at-run-speed",
            "--format",
            "json",
        ]);
        let ns = v["predicted_s"].as_f64().unwrap() * 1e9;
        assert!((ns - 250.0).abs() < 1e-6, "{command}: {v}");
        v
    };
    let v = at_speed("sensitivity", &t);
    let l = (v["parameters"].as_array().unwrap().iter()).find(|p| p["name"] == "L");
    assert_eq!(l.unwrap()["value"].as_f64(), Some(125.0), "{v}");
    let mut sited = String::new();
    for line in timed_messages((90, 95), 500, 500).lines() {
        let site = line.contains("MPI_Send") || line.contains("MPI_Recv");
        sited += &format!("{line}{}\n", if site { " site=0" } else { "" });
    }
    for r in 0..2 {
        sited +=
            &format!("object {r} 0x1000 0x1000 0x2000 - \"/nonexistent/prog\"\nsites {r} 0x1201\n");
    }
    let (_d7, sited) = text_trace("sited.txt", &sited);
    at_speed("callsites", &sited);
    // a sweep: every value at the run's speed, after the value (L = 200: (50 + 200 + 50) · 1.25)
    let v = json(&[
        "predict",
        &t,
        "--params",
        &near,
        "--sweep",
        "L=100,200",
        "--at-run-speed",
        "--format",
        "json",
    ]);
    let at: Vec<f64> = (v["points"].as_array().unwrap().iter())
        .map(|p| (p["predicted_s"].as_f64().unwrap() * 1e12).round() / 1e3)
        .collect();
    assert_eq!(at, vec![250.0, 375.0]);
    assert_eq!(v["at_run_speed"], serde_json::json!(["the set ×1.250"]));
    let (_d3, moved) = text_trace("moved.txt", &timed_messages((90, 320), 400, 1690));
    let (e, v) = ends(&moved, &[&near, &far], &["--at-run-speed"]);
    assert_eq!(e, vec![169.0, 845.0]);
    assert_eq!(
        v["at_run_speed"],
        serde_json::json!([
            "the set of cores 92 ns ×1.000",
            "the set of cores 330 ns ×1.690"
        ])
    );
    let events = "0 MPI_Init 0 0\n0 MPI_Send 0 10 bytes=64 peer=1 tag=0\n0 MPI_Finalize 10 20\n\
                  1 MPI_Init 0 0\n1 MPI_Recv 0 10 bytes=64 peer=0 tag=0\n1 MPI_Finalize 10 20\n";
    let apart = two_nodes(events).replacen(
        "place 0 node 0 cpu 0 0 socket 0 0 llc 0 0",
        "place 0 node 0 cpu 0 0 socket 0 0 llc 0 0 network 1 message 64 17500 17500",
        1,
    );
    let (_d4, apart) = text_trace("two.txt", &apart);
    let (e, v) = ends(&apart, &[&near, &network], &["--at-run-speed"]);
    assert_eq!(e, vec![1250.0, 8750.0]);
    assert_eq!(
        v["at_run_speed"],
        serde_json::json!(["the network's set ×1.250"])
    );
    let (_d5, plain) = text_trace("plain.txt", &moving(90, 95));
    let (e, _) = ends(&plain, &[&near, &far], &["--at-run-speed"]);
    assert_eq!(e, vec![50.0, 200.0]);
    let out = run(&["predict", &plain, "--params", &near, "--at-run-speed"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("predicted at the sets' own speed"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["predict", &t, "--platform", "myrinet", "--at-run-speed"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("give the sets measured there"));
}
