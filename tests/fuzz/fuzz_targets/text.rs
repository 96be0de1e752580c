//! Coverage-guided fuzzing of the text parser, then matching and replay of what it accepts:
//! any input gives an error or a prediction, never a panic, a hang or a huge allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loggps_predict::{graph, model::Params, replay, trace};

fuzz_target!(|data: &[u8]| {
    let Ok(t) = trace::text::parse("fuzz", data).and_then(|t| t.validate("fuzz").map(|_| t)) else { return };
    let Ok(g) = graph::build(&t, "fuzz") else { return };
    let _ = replay::replay(&t, &g, &Params::preset("myrinet").unwrap(), "fuzz", &|_| {});
});
