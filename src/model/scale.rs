//! `--scale NAME=F`: a set's parameters multiplied by a factor (every band's, the set's own
//! figures, all of them, or the bands above `S`).

use super::Params;
use crate::error::Error;

/// What `--scale all=F` multiplies: every time and rate the set costs with (a machine that
/// takes F times as long for everything the model costs; the model's §17: the time
/// interruptions take, which `calibrate` measures and a set leaves out).
pub const SCALE_ALL: [&str; 11] = [
    "L", "o", "Os", "Or", "G", "Od", "Op", "Osd", "copy", "oc", "gamma",
];

/// What `--scale rendezvous=F` multiplies, in the bands above `S` alone.
pub const SCALE_RENDEZVOUS: [&str; 8] = ["L", "o", "Os", "Or", "G", "Od", "Op", "Osd"];

/// `p` with parameter `name` multiplied by `f` (`--scale NAME=F`): in every band of a set in
/// bands (`o`, `L`, `Os`, `Or`, `G`); in the paper's form any of its six times and rates, `G`
/// both `Gs` and `Gl`; the set's `copy`, `oc` and `gamma`; `all`, each of [`SCALE_ALL`].
pub fn scale(p: Params, name: &str, f: f64) -> Result<Params, Error> {
    if !f.is_finite() || f < 0.0 {
        return Err(Error::Usage(format!(
            "--scale {name}={f}: the factor must be a finite number ≥ 0"
        )));
    }
    // Not a band's: the set's one figure (none: none still).
    match name {
        "all" => return SCALE_ALL.iter().try_fold(p, |p, n| scale(p, n, f)),
        "rendezvous" => {
            let S = p.S;
            if p.bands.is_none() {
                return Err(Error::Usage(format!(
                    "--scale rendezvous={f}: needs a set in bands (as calibrate writes them), \
                     whose bands above S cost the messages sent by rendezvous"
                )));
            }
            return p
                .with_bands(|b| b.scale_above(S, f))
                .map_err(|e| Error::Usage(format!("--scale rendezvous={f}: {e}")));
        }
        "copy" => {
            return Ok(Params {
                copy: p.copy.map(|c| c.scaled(f)),
                ..p
            });
        }
        "oc" => {
            return Ok(Params {
                oc: p.oc.map(|c| c * f),
                ..p
            });
        }
        "gamma" => {
            return Ok(Params {
                gamma: p.gamma.map(|c| c.scaled(f)),
                ..p
            });
        }
        _ => {}
    }
    if p.bands.is_some() {
        return p
            .with_bands(|b| b.scale(name, f))
            .map_err(|e| Error::Usage(format!("--scale {name}={f}: {e}")));
    }
    let mut p = p;
    match name {
        // The paper's form has none (0): scaled, none still.
        "Od" | "Op" | "Osd" => {}
        "L" => p.L *= f,
        "o" => p.o *= f,
        "Os" => p.Os *= f,
        "Or" => p.Or *= f,
        "Gs" => p.Gs *= f,
        "Gl" => p.Gl *= f,
        "G" => (p.Gs, p.Gl) = (p.Gs * f, p.Gl * f),
        _ => {
            return Err(Error::Usage(format!(
                "--scale {name}={f}: expected one of L, o, Os, Or, Gs, Gl, G, Od, Op, copy, oc, \
                 gamma, all, rendezvous"
            )));
        }
    }
    Ok(p)
}
