//! Coverage-guided fuzzing of the binary parser, then matching and replay of what it accepts:
//! any input gives an error or a prediction, never a panic, a hang or a huge allocation, and
//! the parser accepts only traces that pass `Trace::validate`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loggps_predict::{graph, model::Params, replay, trace};

fuzz_target!(|data: &[u8]| {
    let Ok(t) = trace::binary::parse("fuzz", data) else { return };
    // The parser checks each event as it decodes it: what it accepts, the checks made after
    // parsing (the text encoding's) accept too.
    if let Err(e) = t.validate("fuzz") {
        panic!("parsed, but then found invalid: {e}");
    }
    let Ok(g) = graph::build(&t, "fuzz") else { return };
    let _ = replay::replay(&t, &g, &Params::preset("myrinet").unwrap(), "fuzz", &|_| {});
});
