//! The text encoding's `params` lines (`tracer/FORMAT.md`, "Text encoding"): a parameter set
//! read from its `key=value` fields and written back.

use crate::model::{BySize, Params, SizeParam};

pub(super) fn params(fields: &[(&str, &str)]) -> Result<Params, String> {
    let get = |k: &str| {
        fields
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| *v)
            .ok_or_else(|| format!("expected params {k}=…"))
    };
    let num = |k: &str| {
        get(k)?
            .parse::<f64>()
            .map_err(|_| format!("expected a number for params {k}"))
    };
    let int = |k: &str| {
        get(k)?
            .parse::<u64>()
            .map_err(|_| format!("expected an integer number of bytes for params {k}"))
    };
    let banded = get("bands").is_ok();
    // What either form may end with, beside its parameters.
    const EXTRAS: [&str; 20] = [
        "departs_upto",
        "post",
        "wait",
        "held",
        "held_reduce",
        "alloc",
        "alias",
        "poll",
        "gamma",
        "oc",
        "copy",
        "cores",
        "progress",
        "class",
        "rendezvous_sender",
        "bounce",
        "bounce_clean",
        "clean",
        "clean_oneway",
        "drained",
    ];
    let known = |k: &str| {
        EXTRAS.contains(&k)
            || match banded {
                false => crate::model::NAMES.contains(&k),
                true => matches!(k, "bands" | "eager_bands" | "S"),
            }
    };
    if let Some((k, _)) = fields.iter().find(|(k, _)| !known(k)) {
        return Err(match banded {
            false => format!(
                "expected params among {} {} bands, found `{k}`",
                crate::model::NAMES.join(" "),
                EXTRAS.join(" ")
            ),
            true => format!(
                "expected params bands= eager_bands= S= {}= with bands, found `{k}`",
                EXTRAS.join("= ")
            ),
        });
    }
    let class = match get("class") {
        Ok("node") => Some(crate::model::Class::Node),
        Ok("network") => Some(crate::model::Class::Network),
        Ok(v) => {
            return Err(format!(
                "expected params class=node or class=network, found `{v}`"
            ));
        }
        Err(_) => None,
    };
    let optional = |k: &str| match get(k) {
        Ok(_) => num(k).map(Some),
        Err(_) => Ok(None),
    };
    let (poll, oc) = (optional("poll")?, optional("oc")?);
    let cores = optional("cores")?;
    if let Some(why) = crate::model::cores_invalid(cores) {
        return Err(why);
    }
    let progress_at_calls = match get("progress") {
        Ok(v) => crate::model::parse_progress(v)?,
        Err(_) => false,
    };
    let by_size = |param: SizeParam| match get(param.name()) {
        Ok(v) => BySize::parse(param, v).map(Some),
        Err(_) => Ok(None),
    };
    let rendezvous_sender = by_size(SizeParam::RendezvousSender)?;
    let (gamma, copy) = (by_size(SizeParam::Gamma)?, by_size(SizeParam::Copy)?);
    let bounce = by_size(SizeParam::Bounce)?;
    let bounce_clean = by_size(SizeParam::BounceClean)?;
    let clean = by_size(SizeParam::Clean)?;
    let clean_oneway = by_size(SizeParam::CleanOneway)?;
    let drained = by_size(SizeParam::Drained)?;
    let departs_upto = match get("departs_upto") {
        Ok(_) => Some(int("departs_upto")?),
        Err(_) => None,
    };
    let post = optional("post")?;
    if let Some(why) = crate::model::post_invalid(post) {
        return Err(why);
    }
    let wait = optional("wait")?;
    if let Some(why) = crate::model::wait_invalid(wait) {
        return Err(why);
    }
    let held = optional("held")?;
    if let Some(why) = crate::model::held_invalid(held) {
        return Err(why);
    }
    let held_reduce = optional("held_reduce")?;
    if let Some(why) = crate::model::held_reduce_invalid(held_reduce) {
        return Err(why);
    }
    let alloc = optional("alloc")?;
    if let Some(why) = crate::model::alloc_invalid(alloc) {
        return Err(why);
    }
    let alias = optional("alias")?;
    if let Some(why) = crate::model::alias_invalid(alias) {
        return Err(why);
    }
    // The set itself, then the extras every form carries.
    let base = if banded {
        let mut bands = crate::model::Bands::new(&parse_bands(get("bands")?)?)?;
        if let Ok(v) = get("eager_bands") {
            // `LO;HI:o:L:Os:Or:G[:Od:Op];…`: the eager bands above the measured limit LO.
            let (lo, list) = v.split_once(';').unwrap_or((v, ""));
            let lo = lo.parse::<u64>().map_err(|_| {
                format!("expected eager_bands=LO;HI:o:L:Os:Or:G[:Od:Op];…, found `{v}`")
            })?;
            bands = bands.with_eager_above(lo, &parse_bands(list)?)?;
        }
        Params::banded(bands, int("S")?, poll)
    } else {
        Params {
            poll,
            ..Params::from_named(num, int)?
        }
    };
    Ok(Params {
        gamma,
        oc,
        copy,
        cores,
        class,
        progress_at_calls,
        rendezvous_sender,
        bounce,
        bounce_clean,
        clean,
        clean_oneway,
        departs_upto,
        post,
        wait,
        held,
        held_reduce,
        alloc,
        alias,
        drained,
        ..base
    })
}

/// `bands=HI:o:L:Os:Or:G;…` of a `params` line, the last band's `HI` `inf`; each band may end
/// with `:Od:Op` (the model's §13).
fn parse_bands(v: &str) -> Result<Vec<crate::model::Band>, String> {
    let band = |b: &str| -> Option<crate::model::Band> {
        let f: Vec<&str> = b.split(':').collect();
        let (hi, o, l, os, or, g, od, op, osd) = match f[..] {
            [hi, o, l, os, or, g] => (hi, o, l, os, or, g, "0", "0", "0"),
            [hi, o, l, os, or, g, od, op] => (hi, o, l, os, or, g, od, op, "0"),
            [hi, o, l, os, or, g, od, op, osd] => (hi, o, l, os, or, g, od, op, osd),
            _ => return None,
        };
        let n = |x: &str| x.parse::<f64>().ok();
        Some(crate::model::Band {
            hi: match hi {
                "inf" => u64::MAX,
                hi => hi.parse().ok()?,
            },
            o: n(o)?,
            L: n(l)?,
            Os: n(os)?,
            Or: n(or)?,
            G: n(g)?,
            Od: n(od)?,
            Op: n(op)?,
            Osd: n(osd)?,
        })
    };
    let list: Option<Vec<_>> = v.split(';').map(band).collect();
    list.ok_or_else(|| format!("expected bands=HI:o:L:Os:Or:G[:Od:Op[:Osd]];…, found `{v}`"))
}

/// The ` poll=NS gamma=NS_PER_BYTE oc=NS progress=calls` that end a `params` line, each where
/// set.
pub(super) fn extras_fields(p: &Params) -> String {
    let poll = p.poll.map_or(String::new(), |v| format!(" poll={v}"));
    let progress = if p.progress_at_calls {
        " progress=calls"
    } else {
        ""
    };
    poll + &p
        .gamma
        .map_or(String::new(), |g| format!(" gamma={}", g.text()))
        + &p.oc.map_or(String::new(), |v| format!(" oc={v}"))
        + &p.copy
            .map_or(String::new(), |c| format!(" copy={}", c.text()))
        + &p.cores.map_or(String::new(), |v| format!(" cores={v}"))
        + progress
        + &p.class
            .map_or(String::new(), |c| format!(" class={}", c.name()))
        + &p.sender_shares().map_or(String::new(), |b| {
            format!(" rendezvous_sender={}", b.text())
        })
        + &p.bounce_cost()
            .map_or(String::new(), |b| format!(" bounce={}", b.text()))
        + &p.bounce_clean
            .map_or(String::new(), |b| format!(" bounce_clean={}", b.text()))
        + &p.clean
            .map_or(String::new(), |c| format!(" clean={}", c.text()))
        + &p.clean_oneway
            .map_or(String::new(), |c| format!(" clean_oneway={}", c.text()))
        + &p.departs_upto
            .map_or(String::new(), |d| format!(" departs_upto={d}"))
        + &p.post.map_or(String::new(), |v| format!(" post={v}"))
        + &p.wait.map_or(String::new(), |v| format!(" wait={v}"))
        + &p.held.map_or(String::new(), |v| format!(" held={v}"))
        + &(p.held_reduce).map_or(String::new(), |v| format!(" held_reduce={v}"))
        + &p.alloc.map_or(String::new(), |v| format!(" alloc={v}"))
        + &p.alias.map_or(String::new(), |v| format!(" alias={v}"))
        + &p.drained
            .map_or(String::new(), |d| format!(" drained={}", d.text()))
}

/// A set's `bands=` value (see [`parse_bands`]), and ` eager_bands=LO;HI:…;…` where it has
/// eager bands above its measured limit `LO` (the model's §10).
pub(super) fn bands_field(bands: &crate::model::Bands) -> String {
    let mut out = band_list_field(bands, bands.as_slice());
    if let Some((lo, list)) = bands.eager_above() {
        out += &format!(" eager_bands={lo};{}", band_list_field(bands, list));
    }
    out
}

/// `HI:o:L:Os:Or:G[:Od:Op[:Osd]];…` of `list`, bands of `bands`.
fn band_list_field(bands: &crate::model::Bands, list: &[crate::model::Band]) -> String {
    let each = list.iter().map(|b| {
        let hi = match b.hi {
            u64::MAX => "inf".to_string(),
            hi => hi.to_string(),
        };
        let split = match (bands.split(), bands.grows_od()) {
            (_, true) => format!(":{}:{}:{}", b.Od, b.Op, b.Osd),
            (true, false) => format!(":{}:{}", b.Od, b.Op),
            (false, false) => String::new(),
        };
        format!("{hi}:{}:{}:{}:{}:{}{split}", b.o, b.L, b.Os, b.Or, b.G)
    });
    each.collect::<Vec<_>>().join(";")
}
